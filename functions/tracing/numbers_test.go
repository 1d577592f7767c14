package tracing_test

import (
	"net/http"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	wire "github.com/plumehq/plume/api"
)

// The numeric reproductions of issue 11, defect 1: numbers outside DynamoDB's range (1e-130 to
// 9.99e125) passed validation and failed at the database with a 500, after the spans were
// written and before the trace was updated. They are now checked at the edge (shared/bound).

// TestSpanNumbersOutOfRange: one span with a number out of range is rejected (400, the batch
// having no other span); a nonzero cost or duration below 1e-12 is stored as 0.
func TestSpanNumbersOutOfRange(t *testing.T) {
	api := newTestAPI(t)
	tests := []struct {
		name   string
		field  string
		value  any
		status int
	}{
		{"cost 1e126", "cost", 1e126, http.StatusBadRequest},
		{"cost 1e9 and a bit", "cost", 1.0000001e9, http.StatusBadRequest},
		{"duration_ms 1e126", "duration_ms", 1e126, http.StatusBadRequest},
		{"duration_ms 1e13", "duration_ms", 1e13, http.StatusBadRequest},
		{"cost 1e-200", "cost", 1e-200, http.StatusOK},
		{"duration_ms 1e-200", "duration_ms", 1e-200, http.StatusOK},
		{"cost -1e-17", "cost", -1e-17, http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sp := validSpan()
			sp[tt.field] = tt.value
			res := api.do(t, "POST", "/spans", api.a.key, []any{sp})
			require.Equal(t, tt.status, res.status, string(res.raw))
			if tt.status != http.StatusOK {
				assert.Equal(t, "invalid_request", res.errCode(t))
				assert.Contains(t, string(res.raw), tt.field)
				return
			}
			var stored []wire.Span
			res.decode(t, &stored)
			require.Len(t, stored, 1)
			got := stored[0].Cost
			if tt.field == "duration_ms" {
				got = stored[0].DurationMS
			}
			require.NotNil(t, got)
			assert.Zero(t, *got)
			tr := api.trace(t, stored[0].TraceID)
			assert.Equal(t, 1, tr.SpanCount)
		})
	}
}

// TestBadNumberDoesNotDropTheBatch: [good span G, span with cost 1e200] on trace T answers 200
// with G stored and one span rejected, and T lists G.
func TestBadNumberDoesNotDropTheBatch(t *testing.T) {
	api := newTestAPI(t)
	traceID := uuid.NewString()
	good, bad := validSpan(), validSpan()
	good["trace_id"], good["cost"] = traceID, 0.5
	bad["trace_id"], bad["cost"] = traceID, 1e200
	res := api.do(t, "POST", "/spans", api.a.key, []any{good, bad})
	require.Equal(t, http.StatusOK, res.status, string(res.raw))
	assert.Equal(t, "1", res.header.Get("X-Plume-Rejected"))
	assert.Contains(t, res.header.Get("X-Plume-Rejected-Spans"), "cost")
	var stored []wire.Span
	res.decode(t, &stored)
	require.Len(t, stored, 1)

	tr := api.trace(t, traceID)
	assert.Equal(t, 1, tr.SpanCount)
	assert.Equal(t, 0.5, tr.Cost)
	var spans []wire.Span
	api.do(t, "GET", "/spans?trace_id="+traceID, api.a.key, nil).decode(t, &spans)
	require.Len(t, spans, 1)
	assert.Equal(t, stored[0].ID, spans[0].ID)
}

// TestCostsThatWouldOverflowTheTrace: two spans of T with cost 9e125, sent in two requests,
// used to overflow T's cost at the second; each is now over the bound and rejected, and T
// holds what was accepted.
func TestCostsThatWouldOverflowTheTrace(t *testing.T) {
	api := newTestAPI(t)
	traceID := uuid.NewString()
	first := validSpan()
	first["trace_id"], first["cost"] = traceID, 0.25
	res := api.do(t, "POST", "/spans", api.a.key, []any{first})
	require.Equal(t, http.StatusOK, res.status, string(res.raw))
	for range 2 {
		sp := validSpan()
		sp["trace_id"], sp["cost"] = traceID, 9e125
		res := api.do(t, "POST", "/spans", api.a.key, []any{sp})
		require.Equal(t, http.StatusBadRequest, res.status, string(res.raw))
		assert.Contains(t, string(res.raw), "cost")
	}
	tr := api.trace(t, traceID)
	assert.Equal(t, 1, tr.SpanCount)
	assert.Equal(t, 0.25, tr.Cost)
	var spans []wire.Span
	api.do(t, "GET", "/spans?trace_id="+traceID, api.a.key, nil).decode(t, &spans)
	assert.Len(t, spans, 1)
}

// TestCostSumsStayWithinDynamoDBPrecision: DynamoDB adds a span's cost to its trace's exactly,
// in decimal, and fails when the sum needs more than 38 significant digits: a trace at 1e11
// USD plus a cost of 17 significant digits at 1e-11 did (a 500, the span stored, the trace
// not updated). Costs are rounded to 1e-12 USD, and the sums stay exact.
func TestCostSumsStayWithinDynamoDBPrecision(t *testing.T) {
	api := newTestAPI(t)
	traceID := uuid.NewString()
	var batch []any
	for range 100 {
		sp := validSpan()
		sp["trace_id"], sp["cost"] = traceID, 1e9
		batch = append(batch, sp)
	}
	res := api.do(t, "POST", "/spans", api.a.key, batch)
	require.Equal(t, http.StatusOK, res.status, string(res.raw))

	sp := validSpan()
	sp["trace_id"], sp["cost"] = traceID, 1.2345678901234567e-11
	res = api.do(t, "POST", "/spans", api.a.key, []any{sp})
	require.Equal(t, http.StatusOK, res.status, string(res.raw))
	var stored []wire.Span
	res.decode(t, &stored)
	require.Len(t, stored, 1)
	require.NotNil(t, stored[0].Cost)
	assert.Equal(t, 1.2e-11, *stored[0].Cost)
	tr := api.trace(t, traceID)
	assert.Equal(t, 101, tr.SpanCount)
	assert.InEpsilon(t, 1e11, tr.Cost, 1e-15)
}

// TestTraceNumbersOutOfRange: POST /traces with a number out of range is a 400 naming it.
func TestTraceNumbersOutOfRange(t *testing.T) {
	api := newTestAPI(t)
	tests := []struct {
		name, field string
		value       any
	}{
		{"cost 1e200", "cost", 1e200},
		{"cost 1e126", "cost", 1e126},
		{"duration_ms 1e200", "duration_ms", 1e200},
		{"duration_ms 1e13", "duration_ms", 1e13},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := map[string]any{"name": "t", "session_id": "s", "started_at": validSpan()["started_at"], tt.field: tt.value}
			res := api.do(t, "POST", "/traces", api.a.key, []any{tr})
			require.Equal(t, http.StatusBadRequest, res.status, string(res.raw))
			assert.Equal(t, "invalid_request", res.errCode(t))
			assert.Contains(t, string(res.raw), tt.field)
		})
	}
	// A tiny cost is stored as 0.
	id := uuid.NewString()
	tr := map[string]any{"id": id, "name": "t", "session_id": "s", "started_at": validSpan()["started_at"], "cost": 1e-200}
	res := api.do(t, "POST", "/traces", api.a.key, []any{tr})
	require.Equal(t, http.StatusOK, res.status, string(res.raw))
	assert.Zero(t, api.trace(t, id).Cost)
}

// trace reads one trace, which must exist.
func (api *testAPI) trace(t *testing.T, id string) wire.Trace {
	t.Helper()
	var traces []wire.Trace
	res := api.do(t, "GET", "/traces?id="+id, api.a.key, nil)
	require.Equal(t, http.StatusOK, res.status, string(res.raw))
	res.decode(t, &traces)
	require.Len(t, traces, 1, "trace %s", id)
	return traces[0]
}
