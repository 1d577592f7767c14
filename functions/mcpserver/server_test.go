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
