package tracing_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	wire "github.com/plumehq/plume/api"
	"github.com/plumehq/plume/shared/trace"
)

func validSpan() map[string]any {
	return map[string]any{"trace_id": uuid.NewString(), "name": "s", "started_at": time.Now().Add(-time.Minute).Format(time.RFC3339Nano)}
}

func TestTracingBadInput(t *testing.T) {
	api := newTestAPI(t)
	tests := []struct {
		name, method, path string
		body               any
		status             int
		code               string
	}{
		{"malformed JSON", "POST", "/spans", `[{"name":`, 400, "invalid_request"},
		{"object instead of array", "POST", "/spans", `{"name":"x"}`, 400, "invalid_request"},
		{"empty array", "POST", "/spans", `[]`, 400, "invalid_request"},
		{"no valid span", "POST", "/spans", []any{map[string]any{"name": "x"}}, 400, "invalid_request"},
		{"too large", "POST", "/spans", `[` + strings.Repeat(" ", trace.MaxBatchBytes) + `]`, 413, "payload_too_large"},
		{"wrong content type", "POST", "/spans?ct=text", `[]`, 415, "unsupported_media_type"},
		{"traces not an array", "POST", "/traces", `{}`, 400, "invalid_request"},
		{"trace without session", "POST", "/traces", []any{map[string]any{"name": "t", "started_at": "2026-01-01T00:00:00Z"}}, 400, "invalid_request"},
		{"trace with bad status", "POST", "/traces", []any{map[string]any{"name": "t", "session_id": "s", "started_at": "2026-01-01T00:00:00Z", "status": "meh"}}, 400, "invalid_request"},
		{"session without project", "POST", "/sessions", []any{map[string]any{"name": "s"}}, 400, "invalid_request"},
		{"span limit 0", "GET", "/spans?limit=0", nil, 400, "invalid_request"},
		{"span limit 10001", "GET", "/spans?limit=10001", nil, 400, "invalid_request"},
		{"span offset negative", "GET", "/spans?offset=-1", nil, 400, "invalid_request"},
		{"trace limit 501", "GET", "/traces?limit=501", nil, 400, "invalid_request"},
		{"session limit 0", "GET", "/sessions?limit=0", nil, 400, "invalid_request"},
		{"bad sort", "GET", "/spans?sort_by=color", nil, 400, "invalid_request"},
		{"bad trace sort", "GET", "/traces?sort_by=kind", nil, 400, "invalid_request"},
		{"bad session sort", "GET", "/sessions?sort_by=status", nil, 400, "invalid_request"},
		{"bad order", "GET", "/spans?sort_order=up", nil, 400, "invalid_request"},
		{"bad time", "GET", "/spans?created_after=yesterday", nil, 400, "invalid_request"},
		{"bad bool", "GET", "/spans?has_error=maybe", nil, 400, "invalid_request"},
		{"bad number", "GET", "/traces?cost_min=cheap", nil, 400, "invalid_request"},
		{"bad uuid", "GET", "/spans?trace_id=123", nil, 400, "invalid_request"},
		{"cursor never answered", "GET", "/traces?cursor=xyz", nil, 400, "invalid_request"},
		{"cursor with offset", "GET", "/sessions?cursor=o2&offset=2", nil, 400, "invalid_request"},
		{"unknown route", "DELETE", "/spans", nil, 404, "not_found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := api.do(t, tt.method, tt.path, api.a.key, tt.body)
			if strings.Contains(tt.path, "ct=text") {
				res = api.doContentType(t, tt.method, "/spans", api.a.key, tt.body.(string), "text/plain")
			}
			assert.Equal(t, tt.status, res.status, string(res.raw))
			assert.Equal(t, tt.code, res.errCode(t))
		})
	}
	// Nothing was stored by any of them.
	res := api.do(t, "GET", "/spans", api.a.key, nil)
	assert.Equal(t, "[]\n", string(res.raw))
	res = api.do(t, "GET", "/traces", api.a.key, nil)
	assert.Equal(t, "[]\n", string(res.raw))
}

// TestOneBadSpanDoesNotDropTheBatch: valid spans are stored; rejected ones are reported.
func TestOneBadSpanDoesNotDropTheBatch(t *testing.T) {
	api := newTestAPI(t)
	good1, good2 := validSpan(), validSpan()
	bad := validSpan()
	bad["trace_id"] = "not-a-uuid"
	badName := validSpan()
	badName["name"] = "é" + strings.Repeat("x", trace.MaxNameLen)
	res := api.do(t, "POST", "/spans", api.a.key, []any{good1, bad, good2, badName})
	require.Equal(t, http.StatusOK, res.status, string(res.raw))
	var stored []trace.Span
	res.decode(t, &stored)
	assert.Len(t, stored, 2)
	assert.Equal(t, "2", res.header.Get("X-Plume-Rejected"))
	var rejected []trace.Rejected
	require.NoError(t, json.Unmarshal([]byte(res.header.Get("X-Plume-Rejected-Spans")), &rejected))
	require.Len(t, rejected, 2)
	assert.Equal(t, 1, rejected[0].Index)
	assert.Contains(t, rejected[0].Error, "trace_id")
	assert.Equal(t, 3, rejected[1].Index)
	for _, c := range res.header.Get("X-Plume-Rejected-Spans") {
		assert.Less(t, c, rune(0x7f), "header is ASCII")
	}
}

// TestTracingTenancy: a key of project A never reads or changes project B's tracing data.
func TestTracingTenancy(t *testing.T) {
	api := newTestAPI(t)
	sp := validSpan()
	sp["session_id"] = "b-session"
	res := api.do(t, "POST", "/spans", api.b.key, []any{sp})
	require.Equal(t, http.StatusOK, res.status)
	var stored []trace.Span
	res.decode(t, &stored)
	bSpan, bTrace, bSession := stored[0].ID, stored[0].TraceID, *stored[0].SessionID

	for _, path := range []string{
		"/spans", "/spans?id=" + bSpan, "/spans?trace_id=" + bTrace,
		"/traces", "/traces?id=" + bTrace, "/traces?session_id=" + bSession,
		"/sessions", "/sessions?id=" + bSession,
	} {
		res := api.do(t, "GET", path, api.a.key, nil)
		assert.Equal(t, http.StatusOK, res.status, path)
		assert.Equal(t, "[]\n", string(res.raw), "A sees nothing of B at %s", path)
	}
	// A session naming B's project is refused; a span with B's span id lands in A's project only.
	res = api.do(t, "POST", "/sessions", api.a.key, []any{map[string]any{"project_id": api.b.projectID, "name": "evil"}})
	assert.Equal(t, http.StatusForbidden, res.status)
	assert.Equal(t, "forbidden", res.errCode(t))
	sp["id"], sp["name"] = bSpan, "overwritten?"
	res = api.do(t, "POST", "/spans", api.a.key, []any{sp})
	require.Equal(t, http.StatusOK, res.status)
	res = api.do(t, "GET", "/spans?id="+bSpan, api.b.key, nil)
	var bSpans []trace.Span
	res.decode(t, &bSpans)
	require.Len(t, bSpans, 1)
	assert.Equal(t, "s", bSpans[0].Name, "B's span is untouched")
	assert.Equal(t, api.b.projectID, bSpans[0].ProjectID)
	res = api.do(t, "GET", "/traces?id="+bTrace, api.b.key, nil)
	var bTraces []wire.Trace
	res.decode(t, &bTraces)
	require.Len(t, bTraces, 1)
	assert.Equal(t, 1, bTraces[0].SpanCount)

	// Without a key: 401.
	res = api.do(t, "GET", "/spans", "", nil)
	assert.Equal(t, http.StatusUnauthorized, res.status)
}

func TestCreateTracesAndSessions(t *testing.T) {
	api := newTestAPI(t)
	res := api.do(t, "POST", "/sessions", api.a.key, []any{map[string]any{"project_id": api.a.projectID, "id": "chat-42", "name": "Chat 42", "tags": map[string]any{"plan": "pro"}}})
	require.Equal(t, http.StatusOK, res.status, string(res.raw))
	var sessions []wire.Session
	res.decode(t, &sessions)
	require.Len(t, sessions, 1)
	assert.Equal(t, trace.SessionIDOf("chat-42"), sessions[0].ID)
	assert.Equal(t, "Chat 42", *sessions[0].Name)
	assert.Equal(t, "pro", sessions[0].Tags["plan"])

	tr := map[string]any{"id": uuid.NewString(), "session_id": "chat-42", "name": "checkout", "started_at": "2026-11-20T10:00:00Z", "duration_ms": 1500, "cost": 0.5, "status": "ok", "tags": map[string]any{"flow": "buy"}}
	for range 2 { // a re-sent create is not counted twice
		res = api.do(t, "POST", "/traces", api.a.key, []any{tr})
		require.Equal(t, http.StatusOK, res.status, string(res.raw))
	}
	var traces []wire.Trace
	res.decode(t, &traces)
	require.Len(t, traces, 1)
	assert.Equal(t, "checkout", traces[0].Name)
	assert.Equal(t, "ok", traces[0].Status)
	assert.InDelta(t, 0.5, traces[0].Cost, 1e-12)
	assert.InDelta(t, 1500, *traces[0].DurationMS, 1e-9)
	assert.Equal(t, "buy", traces[0].Tags["flow"])

	res = api.do(t, "GET", "/sessions?id="+trace.SessionIDOf("chat-42"), api.a.key, nil)
	res.decode(t, &sessions)
	require.Len(t, sessions, 1)
	assert.Equal(t, 1, sessions[0].TraceCount, "the same trace created twice counts once")
}
