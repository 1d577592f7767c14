package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type typedItem struct {
	Name  string            `json:"name" jsonschema:"a name"`
	Tags  map[string]string `json:"tags,omitempty"`
	Score *float64          `json:"score,omitempty"`
}

type typedIn struct {
	ID      string          `json:"id" jsonschema:"an id"`
	Limit   int             `json:"limit,omitempty"`
	Confirm bool            `json:"confirm,omitempty"`
	Items   []typedItem     `json:"items,omitempty"`
	Meta    json.RawMessage `json:"meta,omitempty"`
	Fail    string          `json:"fail,omitempty"`
}

type typedOut struct {
	ID     string            `json:"id"`
	Items  []typedItem       `json:"items"`
	Counts map[string]int    `json:"counts"`
	Meta   json.RawMessage   `json:"meta,omitempty"`
	Next   *int              `json:"next"`
	Tags   map[string]string `json:"tags,omitempty"`
}

// echo answers its input, or fails as the input asks.
func echo(_ context.Context, _ *mcp.CallToolRequest, in typedIn) (typedOut, error) {
	switch in.Fail {
	case "error":
		return typedOut{}, errors.New("invalid_request: the tool failed")
	case "output":
		return typedOut{ID: in.ID, Meta: json.RawMessage(`{"a":1}`), Items: []typedItem{{Name: "<&>"}}}, nil
	}
	next := in.Limit + 1
	return typedOut{ID: in.ID, Items: in.Items, Meta: in.Meta, Next: &next}, nil
}

// callEcho calls echo through a server that added it with add, and answers the result or the
// protocol error, as JSON.
func callEcho(t *testing.T, add func(*mcp.Server), args any) string {
	t.Helper()
	m := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	add(m)
	st, ct := mcp.NewInMemoryTransports()
	ss, err := m.Connect(t.Context(), st, nil)
	require.NoError(t, err)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(t.Context(), ct, nil)
	require.NoError(t, err)
	defer func() { _ = cs.Close(); _ = ss.Wait() }()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "echo", Arguments: args})
	if err != nil {
		return "protocol error: " + err.Error()
	}
	b, err := json.Marshal(res)
	require.NoError(t, err)
	return string(b)
}

// TestTypedHandlerAsTheSDKs: typedHandler, whose schemas are resolved on the first call,
// answers every call as the SDK's typed mcp.AddTool given the same schemas answers it: valid
// and invalid arguments, a failing tool, defaults, HTML in the output.
func TestTypedHandlerAsTheSDKs(t *testing.T) {
	in, out := schemaFor[typedIn](), schemaFor[typedOut]()
	sdk := func(m *mcp.Server) {
		mcp.AddTool(m, &mcp.Tool{Name: "echo", InputSchema: in, OutputSchema: out},
			func(ctx context.Context, req *mcp.CallToolRequest, in typedIn) (*mcp.CallToolResult, typedOut, error) {
				o, err := echo(ctx, req, in)
				return nil, o, err
			})
	}
	ours := func(m *mcp.Server) {
		tl := tool{def: &mcp.Tool{Name: "echo", InputSchema: json.RawMessage(mustJSON(t, in)), OutputSchema: json.RawMessage(mustJSON(t, out))},
			schemas: func() (_, _ *jsonschema.Schema) { return schemaFor[typedIn](), schemaFor[typedOut]() }}
		m.AddTool(tl.def, typedHandler(sync.OnceValues(tl.resolve), echo))
	}
	tests := []struct {
		name string
		args any
		// kind: the SDK's JSON decoder words its error otherwise (the value, not its kind)
		kind bool
	}{
		{"valid", map[string]any{"id": "a", "limit": 3, "items": []any{map[string]any{"name": "x", "tags": map[string]any{"k": "v"}, "score": 0.5}}, "meta": map[string]any{"z": 1, "a": []any{1, "b"}}}, false},
		{"only the required", map[string]any{"id": "a"}, false},
		{"no arguments", nil, false},
		{"null arguments", json.RawMessage(`null`), false},
		{"an array", json.RawMessage(`[1]`), true},
		{"a string", json.RawMessage(`"a"`), true},
		{"a required field missing", map[string]any{"limit": 1}, false},
		{"a wrong type", map[string]any{"id": 1}, false},
		{"an unknown field", map[string]any{"id": "a", "other": 1}, false},
		{"a field in another case", map[string]any{"ID": "a"}, false},
		{"a nested unknown field", map[string]any{"id": "a", "items": []any{map[string]any{"name": "x", "nme": "y"}}}, false},
		{"a null map", map[string]any{"id": "a", "items": []any{map[string]any{"name": "x", "tags": nil}}}, false},
		{"a float for an int", map[string]any{"id": "a", "limit": 1.5}, false},
		{"a large int", map[string]any{"id": "a", "limit": 1 << 60}, false},
		{"the tool fails", map[string]any{"id": "a", "fail": "error"}, false},
		{"HTML in the output", map[string]any{"id": "<b>&", "fail": "output"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want, got := callEcho(t, sdk, tt.args), callEcho(t, ours, tt.args)
			if tt.kind {
				const cut = `cannot unmarshal`
				require.Contains(t, want, `"isError":true`)
				want, got = want[:strings.Index(want, cut)], got[:max(0, strings.Index(got, cut))]
			}
			assert.Equal(t, want, got)
		})
	}
}
