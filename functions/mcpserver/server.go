package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plumehq/plume/client"
	"github.com/plumehq/plume/shared/web"
)

// Version is the tool server's version, as initialize answers it.
const Version = "1.0.0"

// Keys of the verified key's facts in the bearer TokenInfo's Extra.
const (
	extraKey     = "plume_key"
	extraProject = "plume_project"
)

// inProcessBase is the base URL of the in-process API calls; no request leaves the process.
const inProcessBase = "http://plume.in-process"

// server holds what the tools share.
type server struct {
	api http.Handler
	cfg Config
}

// newServer returns the MCP server with every tool and resource.
func newServer(api http.Handler, cfg Config) *mcp.Server {
	s := &server{api: api, cfg: cfg}
	m := mcp.NewServer(&mcp.Implementation{Name: "plume", Title: "Plume", Version: Version}, &mcp.ServerOptions{
		Instructions: "Plume: prompts, traces, judges and prompt optimization of one project (the API key's). " +
			"Read tools change nothing. Write tools require confirm: true and say what they would do without it. " +
			"Deploying an optimized prompt takes two steps: preview-optimization-deploy, then deploy-optimization-run with its receipt.",
	})
	tools := s.tools()
	for _, t := range tools {
		addTool(m, t.def, t.handler(sync.OnceValues(t.resolve)))
	}
	s.addResources(m, tools)
	return m
}

// addTool adds the tool def to m as Server.AddTool does, without its check of the schemas.
// AddTool checks a schema given as JSON by decoding it whole, twice for the input (its type
// must be "object"; its properties' x-mcp-header annotations must be well formed): three
// quarters of making the server, about 7 ms of CPU for the 40 tools' 115 KB at every cold
// start. Their schemas are generated (schemas_gen.go), so the check is made once, by
// TestToolsAsTheSDKChecksThem; here def is added with the smallest schema the check passes, and
// then given its own, which tools/list answers: the server keeps def itself, not a copy.
func addTool(m *mcp.Server, def *mcp.Tool, h mcp.ToolHandler) {
	in, out := def.InputSchema, def.OutputSchema
	def.InputSchema, def.OutputSchema = anyObject, nil
	m.AddTool(def, h)
	def.InputSchema, def.OutputSchema = in, out
}

// anyObject is the smallest input schema Server.AddTool takes.
var anyObject = json.RawMessage(`{"type":"object"}`)

// tool is a tool as the server lists it: its definition, with the input and output schemas
// of schemas_gen.go (JSON, listed as they are: nothing is inferred or resolved when the
// server is made), how its schemas are inferred from its Go types, and its handler.
type tool struct {
	def *mcp.Tool
	// schemas infers the input and output schemas from the tool's Go types: what go generate
	// writes into schemas_gen.go, which TestSchemasGenerated holds equal to it.
	schemas func() (in, out *jsonschema.Schema)
	// handler is the tool's handler, given its resolved schemas (resolved on the first call).
	handler func(resolved func() (resolvedSchemas, error)) mcp.ToolHandler
}

// resolvedSchemas are a tool's schemas, ready to validate.
type resolvedSchemas struct {
	in, out *jsonschema.Resolved
}

// resolve infers and resolves t's schemas. The SDK's typed AddTool does the same for every tool
// when it is added (about 1.5 ms each here); a tool pays it on its first call instead.
func (t tool) resolve() (resolvedSchemas, error) {
	in, out := t.schemas()
	opts := &jsonschema.ResolveOptions{ValidateDefaults: true}
	ri, err := in.Resolve(opts)
	if err != nil {
		return resolvedSchemas{}, fmt.Errorf("tool %s: input schema: %w", t.def.Name, err)
	}
	ro, err := out.Resolve(opts)
	if err != nil {
		return resolvedSchemas{}, fmt.Errorf("tool %s: output schema: %w", t.def.Name, err)
	}
	return resolvedSchemas{in: ri, out: ro}, nil
}

// readOnly and destructive are the tools' annotations.
func readOnly(title string) *mcp.ToolAnnotations {
	return &mcp.ToolAnnotations{Title: title, ReadOnlyHint: true, OpenWorldHint: new(false)}
}

func destructive(title string, idempotent bool) *mcp.ToolAnnotations {
	return &mcp.ToolAnnotations{Title: title, DestructiveHint: new(true), IdempotentHint: idempotent, OpenWorldHint: new(false)}
}

// newTool makes a tool of a typed handler: its input and output schemas are those of In and
// Out (whose fields carry their descriptions) that schemas_gen.go holds under def.Name.
func newTool[In, Out any](s *server, def *mcp.Tool, h func(ctx context.Context, c *client.Client, in In) (Out, error)) tool {
	in, out := generatedSchemas(def.Name)
	def.InputSchema, def.OutputSchema = json.RawMessage(in), json.RawMessage(out)
	return tool{def: def,
		schemas: func() (*jsonschema.Schema, *jsonschema.Schema) { return schemaFor[In](), schemaFor[Out]() },
		handler: func(resolved func() (resolvedSchemas, error)) mcp.ToolHandler {
			return typedHandler(resolved, func(ctx context.Context, req *mcp.CallToolRequest, in In) (Out, error) {
				var zero Out
				c, err := s.client(req)
				if err != nil {
					return zero, err
				}
				out, err := h(ctx, c, in)
				if err != nil {
					return zero, agentError(err)
				}
				if err := fitOutput(out); err != nil { // the lists fit themselves (fitPage); this is the net
					return zero, err
				}
				return out, nil
			})
		}}
}

// client is the API client of the caller's verified key and project.
func (s *server) client(req *mcp.CallToolRequest) (*client.Client, error) {
	if req.Extra == nil || req.Extra.TokenInfo == nil {
		return nil, errors.New("unauthenticated: no API key reached the tool")
	}
	ti := req.Extra.TokenInfo
	key, _ := ti.Extra[extraKey].(string)
	project, _ := ti.Extra[extraProject].(string)
	return client.New(client.WithBaseURL(inProcessBase), client.WithAPIKey(key), client.WithProject(project),
		client.WithRetries(0), client.WithEnv(func(string) string { return "" }),
		client.WithHTTPClient(&http.Client{Transport: web.InProcess{Handler: s.api}}))
}

// agentError turns an API error into a message an agent can act on: the code, the API's
// message and, for a missing record, what to list to find the right id.
func agentError(err error) error {
	var e *client.Error
	if !errors.As(err, &e) {
		return err
	}
	msg := fmt.Sprintf("%s: %s", e.Code, e.Message)
	switch {
	case errors.Is(err, client.ErrNotFound):
		msg += " (in this key's project; list the records to find the right id)"
	case errors.Is(err, client.ErrConflict):
		msg += " (read the record again: its state does not allow this now)"
	}
	return errors.New(msg)
}

// tools are every tool of the server.
func (s *server) tools() []tool {
	var all []tool
	all = append(all, s.promptTools()...)
	all = append(all, s.traceTools()...)
	all = append(all, s.judgeTools()...)
	all = append(all, s.runTools()...)
	all = append(all, s.abTestTools()...)
	all = append(all, s.summaryTools()...)
	all = append(all, s.writeTools()...)
	all = append(all, s.deployTools()...)
	all = append(all, s.proposalTools()...)
	all = append(all, s.datasetTools()...)
	all = append(all, s.monitorTools()...)
	all = append(all, s.webhookTools()...)
	return all
}

// errInput is a tool input that cannot be used, told as the agent should fix it.
func errInput(format string, args ...any) error {
	return fmt.Errorf("invalid_request: "+format, args...)
}

// schemaOptions infer the schemas of the tools' inputs and outputs: a json.RawMessage field
// (metadata, attributes) holds any JSON value, not the array of bytes its Go type suggests.
var schemaOptions = &jsonschema.ForOptions{TypeSchemas: map[reflect.Type]*jsonschema.Schema{
	reflect.TypeFor[json.RawMessage](): {Description: "any JSON value"}, // an object: some clients refuse the schema `true`
}}

// schemaFor is the JSON schema of T, with its fields' jsonschema descriptions. A Go map may
// be nil, which encodes as null: its schema allows null, as the inferred schema of a slice
// does.
func schemaFor[T any]() *jsonschema.Schema {
	s, err := jsonschema.For[T](schemaOptions)
	if err != nil {
		panic(fmt.Sprintf("mcpserver: no schema for %T: %v", *new(T), err)) // a tool's types are fixed
	}
	nullableMaps(s)
	return s
}

// nullableMaps lets every map of s (an object whose additionalProperties is its values'
// schema; a struct's forbids any) be null.
func nullableMaps(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	isStruct := s.AdditionalProperties != nil && s.AdditionalProperties.Not != nil // "no other properties"
	if s.Type == "object" && s.AdditionalProperties != nil && !isStruct {
		s.Type, s.Types = "", []string{"null", "object"}
	}
	for _, p := range s.Properties {
		nullableMaps(p)
	}
	for _, d := range s.Defs {
		nullableMaps(d)
	}
	nullableMaps(s.Items)
	nullableMaps(s.AdditionalProperties)
}
