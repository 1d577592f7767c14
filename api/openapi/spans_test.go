package openapi_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/client"
	"github.com/plumehq/plume/shared/trace"
)

// TestClientSpansMatchTheSchema: what the Go client sends to POST /spans validates against the
// route's request schema, for a span of every known kind (tool among them) and of a kind of the
// caller's own.
func TestClientSpansMatchTheSchema(t *testing.T) {
	b, doc := document(t)
	c := compiler(t, b)
	for _, kind := range append(append([]api.SpanKind{}, api.SpanKinds...), "Agent-Step_2") {
		t.Run(string(kind), func(t *testing.T) {
			body := clientSpans(t, func(ctx context.Context, c *client.Client) {
				ctx, parent := c.StartSpan(ctx, "answer-ticket")
				_, s := c.StartSpan(ctx, "step", client.WithKind(kind), client.WithAttributes(map[string]any{"n": 1}))
				s.SetInput("in")
				s.SetOutput("out")
				s.End()
				parent.End()
			})
			var spans []map[string]any
			require.NoError(t, json.Unmarshal(body, &spans))
			require.Len(t, spans, 2)
			kinds := map[any]any{}
			for _, s := range spans {
				kinds[s["name"]] = s["kind"]
			}
			assert.Equal(t, map[any]any{"answer-ticket": "generic", "step": string(kind)}, kinds, "the client sends the kinds it was given")
			assert.NoError(t, validateRequest(t, c, doc, "POST", "/spans", json.RawMessage(body)), "%s", body)
		})
	}
}

// TestSpanKindSchemaIsTheDecoders: the schema of a span's kind in POST /spans admits the kinds
// shared/trace's decoder stores and refuses those it rejects. The two state one rule in two
// languages (a JSON Schema pattern, a Go loop), so they are held equal here.
func TestSpanKindSchemaIsTheDecoders(t *testing.T) {
	b, doc := document(t)
	c := compiler(t, b)
	tests := []struct {
		name string
		kind any
	}{
		{"a kind of its own", "agent-step_2"},
		{"upper case", "LLM"},
		{"empty", ""},
		{"null", nil},
		{"longest", strings.Repeat("k", api.MaxSpanKindLength)},
		{"too long", strings.Repeat("k", api.MaxSpanKindLength+1)},
		{"a space", "LLM call"},
		{"a dot", "tool.call"},
		{"not ASCII", "outil-é"},
		{"a number", 3},
	}
	for _, k := range api.SpanKinds {
		tests = append(tests, struct {
			name string
			kind any
		}{"known " + string(k), string(k)})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			span := map[string]any{"trace_id": uuid.NewString(), "name": "step", "started_at": "2025-01-02T03:04:05Z", "kind": tt.kind}
			body, err := json.Marshal([]any{span})
			require.NoError(t, err)
			// A batch without a valid span is an error; a batch of one has one span or none.
			stored, _, decodeErr := trace.DecodeBatch(body, "p1", time.Date(2025, 1, 2, 4, 0, 0, 0, time.UTC))
			schemaErr := validateRequest(t, c, doc, "POST", "/spans", json.RawMessage(body))
			if decodeErr == nil {
				require.Len(t, stored, 1)
				assert.NoError(t, schemaErr, "the decoder stores kind %#v, the schema refuses it", tt.kind)
			} else {
				assert.Error(t, schemaErr, "the decoder rejects kind %#v (%v), the schema admits it", tt.kind, decodeErr)
			}
		})
	}
}

// clientSpans returns the body of the one POST /spans the Go client makes in send and Close.
func clientSpans(t *testing.T, send func(context.Context, *client.Client)) []byte {
	t.Helper()
	bodies := make(chan []byte, 10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if !assert.NoError(t, err) || !assert.Equal(t, "POST /spans", r.Method+" "+r.URL.Path) {
			http.Error(w, "unexpected", http.StatusBadRequest)
			return
		}
		bodies <- b
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, "[]")
	}))
	t.Cleanup(srv.Close)
	c, err := client.New(client.WithBaseURL(srv.URL), client.WithAPIKey("pk_test"), client.WithEnv(func(string) string { return "" }))
	require.NoError(t, err)
	ctx := context.Background()
	send(ctx, c)
	require.NoError(t, c.Close(ctx))
	close(bodies)
	var all [][]byte
	for b := range bodies {
		all = append(all, b)
	}
	require.Len(t, all, 1, "one POST /spans")
	return all[0]
}
