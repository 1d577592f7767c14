package mcpserver_test

import (
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/functions/mcpserver"
	"github.com/plumehq/plume/internal/apitest"
)

// partialStack is s's tool server over apitest.PartialLists.
func partialStack(t *testing.T, s *toolStack, scanCut, sizeCut bool) *toolStack {
	t.Helper()
	srv := httptest.NewServer(mcpserver.NewHandler(apitest.PartialLists(s.api.Handler, scanCut, sizeCut), s.api.Env.Authn(), mcpserver.Config{}))
	t.Cleanup(srv.Close)
	return &toolStack{api: s.api, url: srv.URL + "/mcp"}
}

// TestToolsSayPartial: the tracing tools tell an agent, in their structured output and their
// text, when the API's answer was partial, and page on from where a cut by size left off.
func TestToolsSayPartial(t *testing.T) {
	s := newToolStack(t, apitest.Options{})
	d := seed(t, s)
	s.api.DrainStream(t)
	complete, err := s.connect(t, s.api.A.Key)
	require.NoError(t, err)
	scanCut, err := partialStack(t, s, true, false).connect(t, s.api.A.Key)
	require.NoError(t, err)
	sizeCut, err := partialStack(t, s, false, true).connect(t, s.api.A.Key)
	require.NoError(t, err)

	var full mcpserver.ListTracesOutput
	res := call(t, complete, "list-traces", map[string]any{}, &full)
	require.False(t, res.IsError, text(res))
	assert.False(t, full.Truncated)
	assert.Empty(t, full.Note)
	assert.Positive(t, full.Scanned)

	var cut mcpserver.ListTracesOutput
	res = call(t, scanCut, "list-traces", map[string]any{}, &cut)
	require.False(t, res.IsError, text(res))
	assert.True(t, cut.Truncated)
	assert.Contains(t, cut.Note, "Partial list")
	assert.Contains(t, text(res), `"truncated":true`, "the text says it too")
	assert.Contains(t, text(res), "created_before")
	assert.Len(t, cut.Traces, d.tracesInProject)

	var trace mcpserver.GetTraceOutput
	res = call(t, scanCut, "get-trace", map[string]any{"trace_id": d.trace}, &trace)
	require.False(t, res.IsError, text(res))
	assert.True(t, trace.ScanTruncated)
	assert.Contains(t, text(res), "Partial span list")

	// The summary reads no list: a cut list does not cut it.
	var summary mcpserver.ProjectSummaryOutput
	res = call(t, scanCut, "get-project-summary", map[string]any{}, &summary)
	require.False(t, res.IsError, text(res))
	assert.EqualValues(t, d.tracesInProject, summary.TraceCount)

	// Cut by size: the page says it is partial and where the rest starts, though it is shorter
	// than asked.
	var first mcpserver.ListTracesOutput
	res = call(t, sizeCut, "list-traces", map[string]any{}, &first)
	require.False(t, res.IsError, text(res))
	require.Len(t, first.Traces, 1)
	assert.True(t, first.Partial)
	assert.Contains(t, first.Note, "Partial page")
	assert.Contains(t, text(res), `"partial":true`, "the text says it too")
	require.NotNil(t, first.NextCursor, "a page cut by size is not the last")
	var rest mcpserver.ListTracesOutput
	res = call(t, sizeCut, "list-traces", map[string]any{"cursor": *first.NextCursor}, &rest)
	require.False(t, res.IsError, text(res))
	assert.Nil(t, rest.NextCursor)
	assert.False(t, rest.Partial)
	assert.Equal(t, full.Traces, append(first.Traces, rest.Traces...))

	res = call(t, sizeCut, "get-trace", map[string]any{"trace_id": d.trace}, &trace)
	require.False(t, res.IsError, text(res))
	assert.Len(t, trace.Spans, 1)
	assert.True(t, trace.Truncated)
	require.NotNil(t, trace.NextSpanCursor)
	var more mcpserver.GetTraceOutput
	res = call(t, sizeCut, "get-trace", map[string]any{"trace_id": d.trace, "span_cursor": *trace.NextSpanCursor}, &more)
	require.False(t, res.IsError, text(res))
	assert.Len(t, more.Spans, d.spansOfTrace-1, "the rest of the trace")
	assert.Nil(t, more.NextSpanCursor)

	res = call(t, sizeCut, "get-project-summary", map[string]any{}, &summary)
	require.False(t, res.IsError, text(res))
	assert.EqualValues(t, d.tracesInProject, summary.TraceCount)

	// A judge's evaluations the scan bound cut say so; complete ones do not.
	var evs mcpserver.ListJudgeEvaluationsOutput
	res = call(t, complete, "list-judge-evaluations", map[string]any{"judge_id": d.judge}, &evs)
	require.False(t, res.IsError, text(res))
	assert.False(t, evs.Truncated)
	assert.Empty(t, evs.Note)
	res = call(t, scanCut, "list-judge-evaluations", map[string]any{"judge_id": d.judge, "feedback_state": "without_user_feedback"}, &evs)
	require.False(t, res.IsError, text(res))
	assert.True(t, evs.Truncated)
	assert.Contains(t, evs.Note, "Partial list")
	assert.Contains(t, text(res), `"truncated":true`, "the text says it too")
}
