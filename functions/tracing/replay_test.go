package tracing_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	wire "github.com/plumehq/plume/api"
	"github.com/plumehq/plume/shared/trace"
)

// TestSDKReplays posts the request bodies the zeroeval SDKs send (COMPAT.md: Python float epochs
// and session objects, TypeScript ISO strings, non-UUID session ids, extra keys) and reads every
// span back field for field.
func TestSDKReplays(t *testing.T) {
	for _, fixture := range []string{"python_batch.json", "typescript_batch.json"} {
		t.Run(fixture, func(t *testing.T) {
			api := newTestAPI(t)
			body, err := os.ReadFile(filepath.Join("..", "..", "shared", "trace", "testdata", fixture))
			require.NoError(t, err)
			var sent []map[string]any
			require.NoError(t, json.Unmarshal(body, &sent))

			res := api.do(t, "POST", "/spans", api.a.key, body)
			require.Equal(t, http.StatusOK, res.status, string(res.raw))
			assert.Empty(t, res.header.Get("X-Plume-Rejected"))
			var stored []trace.Span
			res.decode(t, &stored)
			require.Len(t, stored, len(sent))

			for _, in := range sent {
				id := strings.ToLower(in["id"].(string))
				got := api.do(t, "GET", "/spans?id="+id, api.a.key, nil)
				require.Equal(t, http.StatusOK, got.status, string(got.raw))
				var spans []map[string]any
				got.decode(t, &spans)
				require.Len(t, spans, 1, "span %s", id)
				out := spans[0]
				assert.Equal(t, id, out["id"])
				assert.Equal(t, strings.ToLower(in["trace_id"].(string)), out["trace_id"])
				assert.Equal(t, in["name"], out["name"])
				assert.Equal(t, api.a.projectID, out["project_id"])
				for _, f := range []string{"input_data", "output_data", "code_filepath"} {
					if v, ok := in[f].(string); ok && v != "" {
						assert.Equal(t, v, out[f], f)
					}
				}
				if p, ok := in["parent_span_id"].(string); ok {
					assert.Equal(t, strings.ToLower(p), out["parent_span_id"])
				}
				if attrs, ok := in["attributes"].(map[string]any); ok {
					assert.Equal(t, attrs, out["attributes"], "attributes kept exactly")
				}
				if tags, ok := in["tags"].(map[string]any); ok && len(tags) > 0 {
					for k, v := range tags {
						want, _ := v.(string)
						if want == "" && v != nil {
							raw, _ := json.Marshal(v) // tag values are strings; others keep their JSON text
							want = string(raw)
						}
						assert.Equal(t, want, out["tags"].(map[string]any)[k], "tag %s", k)
					}
				}
				assertSameTime(t, in["started_at"], out["started_at"])
				if in["ended_at"] != nil {
					assertSameTime(t, in["ended_at"], out["ended_at"])
				}
				if s, ok := in["error_stack"].(string); ok && s == "" {
					assert.Nil(t, out["error_stack"], "an empty error_stack is absent")
				}
				if sid, ok := in["session_id"].(string); ok {
					assert.Equal(t, trace.SessionIDOf(sid), out["session_id"])
				}
				if kind, _ := in["kind"].(string); kind == "llm" && in["cost"] == nil {
					assert.NotNil(t, out["cost"], "llm span %s gets a cost from the price table", id)
					assert.Equal(t, "price_table", out["cost_source"])
				}
			}

			// Traces and sessions referenced by the spans exist and add up.
			traces := api.do(t, "GET", "/traces", api.a.key, nil)
			require.Equal(t, http.StatusOK, traces.status)
			var ts []wire.Trace
			traces.decode(t, &ts)
			total := 0
			for _, tr := range ts {
				total += tr.SpanCount
			}
			assert.Equal(t, len(sent), total, "every span is counted once in a trace")
		})
	}
}

// assertSameTime compares a time as the SDKs send it (float epoch seconds or ISO 8601) with
// the RFC 3339 time read back, to the microsecond.
func assertSameTime(t *testing.T, sent, got any) {
	t.Helper()
	var want time.Time
	switch v := sent.(type) {
	case float64:
		want = time.UnixMicro(int64(v*1e6 + 0.5)).UTC()
	case string:
		var err error
		want, err = trace.ParseTimeString(v)
		require.NoError(t, err)
	}
	gotTime, err := time.Parse(time.RFC3339Nano, got.(string))
	require.NoError(t, err)
	assert.WithinDuration(t, want, gotTime, time.Microsecond, "sent %v, got %v", sent, got)
}
