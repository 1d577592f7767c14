package mcpserver

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// URIs of the resources.
const (
	serverContextURI = "config://server-context"
	capabilitiesURI  = "docs://capabilities"
)

// resource is a resource as the server lists it: its definition and what reading it answers.
type resource struct {
	def  *mcp.Resource
	read mcp.ResourceHandler
}

// resources are every resource of the server, whose tools are tools. docs://capabilities
// describes the tools and resources the server has, so it is built from the same lists and
// cannot drift from them.
func (s *server) resources(tools []tool) []resource {
	defs := []*mcp.Resource{
		{URI: serverContextURI, Name: "server-context", Title: "Server context", MIMEType: "application/json",
			Description: "This server's redacted configuration: the authentication mode, the API's base URL, the key's project, " +
				"feature flags (model providers configured, optimizations enabled), the server's version and the protocol versions it accepts. Never the key."},
		{URI: capabilitiesURI, Name: "capabilities", Title: "Capabilities", MIMEType: "application/json",
			Description: "Every tool (name, title, description, read-only or destructive, whether it needs confirm: true, a one-line summary of its output) " +
				"and every resource of this server, as JSON, then the same as Markdown. Generated from the server's own lists."},
	}
	caps := sync.OnceValue(func() capabilities { return newCapabilities(tools, defs) }) // on the first read: it infers every tool's schemas
	return []resource{
		{def: defs[0], read: s.readServerContext},
		{def: defs[1], read: func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return caps().read(ctx, req)
		}},
	}
}

// addResources adds config://server-context and docs://capabilities.
func (s *server) addResources(m *mcp.Server, tools []tool) {
	for _, r := range s.resources(tools) {
		m.AddResource(r.def, r.read)
	}
}

// ServerContext is config://server-context: what an agent may know of this deployment. It
// holds no secret: the key is never in it.
type ServerContext struct {
	Server           serverInfo    `json:"server"`
	ProtocolVersions []string      `json:"protocol_versions"`
	Transport        string        `json:"transport"`
	Auth             authInfo      `json:"auth"`
	BaseURL          *string       `json:"base_url"`
	ProjectID        string        `json:"project_id"`
	Features         featureFlags  `json:"features"`
	Limits           contextLimits `json:"limits"`
}

type serverInfo struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

type authInfo struct {
	Mode   string `json:"mode"`
	Header string `json:"header"`
}

type featureFlags struct {
	ModelsConfigured     bool `json:"models_configured"`
	OptimizationsEnabled bool `json:"optimizations_enabled"`
}

// contextLimits are the read tools' output bounds, so that an agent can plan its paging.
type contextLimits struct {
	MaxTracesPerPage      int `json:"max_traces_per_page"`
	MaxSpansPerPage       int `json:"max_spans_per_page"`
	MaxEvaluationsPerPage int `json:"max_evaluations_per_page"`
	MaxRunsPerPage        int `json:"max_runs_per_page"`
	SpanTextChars         int `json:"span_text_chars"`
	SummaryMaxWindowHours int `json:"summary_max_window_hours"`
}

func (s *server) readServerContext(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	if req.Extra == nil || req.Extra.TokenInfo == nil {
		return nil, errors.New("unauthenticated: no API key reached the resource")
	}
	project, _ := req.Extra.TokenInfo.Extra[extraProject].(string)
	sc := ServerContext{
		Server:           serverInfo{Name: "plume", Version: Version},
		ProtocolVersions: mcp.SupportedProtocolVersions(),
		Transport:        "streamable HTTP, stateless, JSON responses",
		Auth:             authInfo{Mode: "bearer project API key", Header: "Authorization: Bearer <project API key>"},
		ProjectID:        project,
		Features:         featureFlags{ModelsConfigured: s.cfg.ModelsConfigured, OptimizationsEnabled: s.cfg.OptimizationsEnabled},
		Limits: contextLimits{MaxTracesPerPage: maxTraceLimit, MaxSpansPerPage: maxSpanLimit, MaxEvaluationsPerPage: maxEvaluationLimit,
			MaxRunsPerPage: maxRunLimit, SpanTextChars: spanTextLimit, SummaryMaxWindowHours: maxWindowHours},
	}
	if s.cfg.BaseURL != "" {
		sc.BaseURL = &s.cfg.BaseURL
	}
	b, err := indentJSON(sc)
	if err != nil {
		return nil, fmt.Errorf("encode server context: %w", err)
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "application/json", Text: b}}}, nil
}

// Capabilities is docs://capabilities: the server's tools and resources.
type Capabilities struct {
	Server    serverInfo    `json:"server"`
	Tools     []ToolDoc     `json:"tools"`
	Resources []ResourceDoc `json:"resources"`
}

// ToolDoc describes a tool.
type ToolDoc struct {
	Name        string `json:"name"`
	Title       string `json:"title"`
	Description string `json:"description"`
	ReadOnly    bool   `json:"read_only"`
	Destructive bool   `json:"destructive"`
	Idempotent  bool   `json:"idempotent"`
	// RequiresConfirm tells a write tool, whose input has the confirm flag.
	RequiresConfirm bool   `json:"requires_confirm"`
	Output          string `json:"output"`
}

// ResourceDoc describes a resource.
type ResourceDoc struct {
	URI         string `json:"uri"`
	Name        string `json:"name"`
	Title       string `json:"title"`
	Description string `json:"description"`
	MIMEType    string `json:"mime_type"`
}

// capabilities is docs://capabilities, rendered once.
type capabilities struct {
	json, markdown string
}

func newCapabilities(tools []tool, resources []*mcp.Resource) capabilities {
	c := Capabilities{Server: serverInfo{Name: "plume", Version: Version}, Tools: make([]ToolDoc, 0, len(tools)), Resources: make([]ResourceDoc, 0, len(resources))}
	for _, t := range tools {
		in, out := t.schemas()
		c.Tools = append(c.Tools, toolDoc(t.def, in, out))
	}
	for _, r := range resources {
		c.Resources = append(c.Resources, ResourceDoc{URI: r.URI, Name: r.Name, Title: r.Title, Description: r.Description, MIMEType: r.MIMEType})
	}
	b, err := indentJSON(c)
	if err != nil {
		panic(fmt.Sprintf("mcpserver: encode capabilities: %v", err)) // plain strings and bools
	}
	return capabilities{json: b, markdown: c.markdown()}
}

func (c capabilities) read(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{
		{URI: req.Params.URI, MIMEType: "application/json", Text: c.json},
		{URI: req.Params.URI, MIMEType: "text/markdown", Text: c.markdown},
	}}, nil
}

// indentJSON is v as indented JSON, with <, > and & as they are ("Bearer <project API key>").
func indentJSON(v any) (string, error) {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	return b.String(), nil
}

// toolDoc describes a tool from its definition and schemas: its annotations as the protocol
// defaults them (a tool that is not read-only is destructive unless it says otherwise).
func toolDoc(def *mcp.Tool, in, out *jsonschema.Schema) ToolDoc {
	d := ToolDoc{Name: def.Name, Title: def.Title, Description: def.Description, Destructive: true, Output: outputSummary(out)}
	if a := def.Annotations; a != nil {
		d.Title = cmp.Or(d.Title, a.Title)
		d.ReadOnly, d.Idempotent = a.ReadOnlyHint, a.IdempotentHint
		d.Destructive = !a.ReadOnlyHint && (a.DestructiveHint == nil || *a.DestructiveHint)
	}
	if in != nil {
		_, d.RequiresConfirm = in.Properties["confirm"]
	}
	return d
}

// outputSummary is a line of the output's top-level fields and their types.
func outputSummary(s *jsonschema.Schema) string {
	if s == nil || len(s.Properties) == 0 {
		return "unstructured"
	}
	names := s.PropertyOrder
	if len(names) == 0 {
		for n := range s.Properties {
			names = append(names, n)
		}
	}
	parts := make([]string, 0, len(names))
	for _, n := range names {
		parts = append(parts, n+" ("+typeName(s.Properties[n])+")")
	}
	return "an object: " + strings.Join(parts, ", ")
}

// typeName is a schema's JSON type, "null" left out.
func typeName(s *jsonschema.Schema) string {
	if s == nil {
		return "any"
	}
	types := s.Types
	if s.Type != "" {
		types = []string{s.Type}
	}
	var out []string
	for _, t := range types {
		if t != "null" {
			out = append(out, t)
		}
	}
	if len(out) == 0 {
		return "any"
	}
	if out[0] == "array" && s.Items != nil {
		return "array of " + typeName(s.Items)
	}
	return strings.Join(out, " or ")
}

func (c Capabilities) markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Plume tool server %s\n\n## Tools\n\n", c.Server.Version)
	for _, t := range c.Tools {
		kind := "read-only"
		switch {
		case t.ReadOnly:
		case t.RequiresConfirm:
			kind = "destructive, requires confirm: true"
		case t.Destructive:
			kind = "destructive"
		default:
			kind = "writes"
		}
		fmt.Fprintf(&b, "### %s\n\n%s (%s)\n\n%s\n\nOutput: %s\n\n", t.Name, t.Title, kind, t.Description, t.Output)
	}
	b.WriteString("## Resources\n\n")
	for _, r := range c.Resources {
		fmt.Fprintf(&b, "- `%s` (%s, %s): %s\n", r.URI, r.Title, r.MIMEType, r.Description)
	}
	return b.String()
}
