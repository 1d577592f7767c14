package mcpserver_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/functions/mcpserver"
	"github.com/plumehq/plume/internal/apitest"
)

// toolStack is the whole API with the tool server beside it, behind a real HTTP server.
type toolStack struct {
	api *apitest.API
	url string // the tool server's endpoint
}

func newToolStack(t *testing.T, opts apitest.Options) *toolStack {
	t.Helper()
	a := apitest.New(t, opts)
	srv := httptest.NewServer(mcpserver.NewHandler(a.Handler, a.Env.Authn(), mcpserver.Config{BaseURL: "https://plume.example.com"}))
	t.Cleanup(srv.Close)
	return &toolStack{api: a, url: srv.URL + "/mcp"}
}

// bearer adds a key to every request.
type bearer string

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}

// connect opens an MCP session with the SDK's own client, with key.
func (s *toolStack) connect(t *testing.T, key string) (*mcp.ClientSession, error) {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "plume-test", Version: "1"}, nil)
	cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: s.url, HTTPClient: &http.Client{Transport: bearer(key)},
		DisableStandaloneSSE: true, MaxRetries: -1}, nil)
	if err == nil {
		t.Cleanup(func() { _ = cs.Close() })
	}
	return cs, err
}

// call calls a tool and decodes its structured output into out (when not nil).
func call(t *testing.T, cs *mcp.ClientSession, name string, args any, out any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	require.NoError(t, err, "a tool's failure is a result, never a protocol error")
	if out != nil && !res.IsError {
		b, err := json.Marshal(res.StructuredContent)
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(b, out))
	}
	return res
}

// text is a result's text content.
func text(res *mcp.CallToolResult) string {
	var sb strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			sb.WriteString(tc.Text)
		}
	}
	return sb.String()
}

func TestPromptTools(t *testing.T) {
	s := newToolStack(t, apitest.Options{})
	s.api.EnsurePrompt(t, s.api.A, "support-bot", "You help with {{product}}.")
	cs, err := s.connect(t, s.api.A.Key)
	require.NoError(t, err)

	tools, err := cs.ListTools(t.Context(), nil)
	require.NoError(t, err)
	names := map[string]*mcp.Tool{}
	for _, tl := range tools.Tools {
		names[tl.Name] = tl
	}
	require.Contains(t, names, "list-prompts")
	assert.True(t, names["list-prompts"].Annotations.ReadOnlyHint)

	var list mcpserver.ListPromptsOutput
	res := call(t, cs, "list-prompts", map[string]any{}, &list)
	require.False(t, res.IsError, text(res))
	require.Len(t, list.Prompts, 1)
	assert.Equal(t, "support-bot", list.Prompts[0].Slug)

	res = call(t, cs, "get-prompt", map[string]any{"prompt_slug": "no-such-prompt"}, nil)
	assert.True(t, res.IsError)
	assert.Contains(t, text(res), "not_found")

	_, err = s.connect(t, "plm_not-a-key")
	require.Error(t, err, "a bad key is refused before any tool runs")
	assert.Contains(t, err.Error(), "Unauthorized")
}

// post sends one JSON-RPC message to the tool server as a client would, with key ("" for none).
func (s *toolStack) post(t *testing.T, key, body string, headers map[string]string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, s.url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { _ = res.Body.Close() })
	return res
}

// TestTransport: every protocol version the clients negotiate today is accepted, answered as
// JSON with no session; no key or a bad key is 401 in the API's error shape before the MCP
// layer; GET and DELETE are 405 (a stateless server has no stream and no session).
func TestTransport(t *testing.T) {
	s := newToolStack(t, apitest.Options{})
	for _, version := range []string{"2025-06-18", "2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			// The SDK's client as a client of that version: initialize up to 2025-11-25,
			// server/discover from 2026-07-28 (SEP-2575).
			c := mcp.NewClient(&mcp.Implementation{Name: "plume-test", Version: "1"}, nil)
			cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: s.url,
				HTTPClient: &http.Client{Transport: bearer(s.api.A.Key)}, DisableStandaloneSSE: true, MaxRetries: -1},
				&mcp.ClientSessionOptions{ProtocolVersion: version})
			require.NoError(t, err)
			defer cs.Close()
			assert.Equal(t, version, cs.InitializeResult().ProtocolVersion)
			res := call(t, cs, "list-prompts", map[string]any{}, nil)
			assert.False(t, res.IsError, text(res))
		})
	}
	res := s.post(t, s.api.A.Key, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",`+
		`"capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}`, nil)
	require.Equal(t, http.StatusOK, res.StatusCode)
	assert.Contains(t, res.Header.Get("Content-Type"), "application/json", "JSON answers, no event stream")
	assert.Empty(t, res.Header.Get("Mcp-Session-Id"), "stateless: no session")
	for name, key := range map[string]string{"no key": "", "bad key": "plm_not-a-key"} {
		t.Run(name, func(t *testing.T) {
			res := s.post(t, key, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, nil)
			assert.Equal(t, http.StatusUnauthorized, res.StatusCode)
			assert.Equal(t, `Bearer realm="plume"`, res.Header.Get("WWW-Authenticate"))
			var body struct {
				Error struct{ Code string } `json:"error"`
			}
			require.NoError(t, json.NewDecoder(res.Body).Decode(&body))
			assert.Equal(t, "unauthenticated", body.Error.Code)
		})
	}
	for _, method := range []string{http.MethodGet, http.MethodDelete} {
		req, err := http.NewRequestWithContext(t.Context(), method, s.url, nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+s.api.A.Key)
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		_ = res.Body.Close()
		assert.Equal(t, http.StatusMethodNotAllowed, res.StatusCode, method)
	}
}
