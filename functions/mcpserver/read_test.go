package mcpserver_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/functions/mcpserver"
	"github.com/plumehq/plume/internal/apitest"
	"github.com/plumehq/plume/shared/asyncinvoke"
)

// readTools are the read tools of spec §4.9.
var readTools = []string{
	"list-traces", "get-trace", "list-judges", "get-judge", "list-judge-evaluations", "get-judge-criteria",
	"list-prompts", "get-prompt", "list-prompt-versions", "list-optimization-runs", "get-optimization-run", "get-project-summary",
}

// seeded is what seed wrote to project A.
type seeded struct {
	slug                          string
	session, trace, otherTrace    string
	root, llm, child              string
	judge, promptRun, judgeRun    string
	longInput                     string
	spansOfTrace, tracesInProject int
}

// seed writes a prompt, two traces (one of a session, with a span tree, a long input and a
// failed span), a judge linked to the prompt with a failing evaluation, negative feedback, and
// an optimization run of the prompt and of the judge, queued with a worker that does nothing.
func seed(t *testing.T, s *toolStack) seeded {
	t.Helper()
	a := s.api.A
	d := seeded{slug: "support-bot", session: uuid.NewString(), trace: uuid.NewString(), otherTrace: uuid.NewString(),
		root: uuid.NewString(), llm: uuid.NewString(), child: uuid.NewString(), longInput: strings.Repeat("é", 5000),
		spansOfTrace: 3, tracesInProject: 2}
	version := s.api.EnsurePrompt(t, a, d.slug, "You help with {{product}}.")
	at := time.Now().Add(-time.Minute)
	sec := func(t time.Time) float64 { return float64(t.UnixMicro()) / 1e6 }
	root := map[string]any{"id": d.root, "trace_id": d.trace, "session_id": d.session, "name": "handle", "kind": "chain",
		"started_at": sec(at), "ended_at": sec(at.Add(3 * time.Second)), "status": "ok", "input_data": "question", "output_data": "answer"}
	llm := apitest.LLMSpan(d.llm, d.trace, d.session, d.slug, version, d.longInput, "an answer", at.Add(time.Second))
	llm["parent_span_id"] = d.root
	child := map[string]any{"id": d.child, "trace_id": d.trace, "parent_span_id": d.llm, "name": "tool", "kind": "tool",
		"started_at": sec(at.Add(1500 * time.Millisecond)), "ended_at": sec(at.Add(2 * time.Second)), "status": "error",
		"error_code": "Timeout", "error_message": "the tool timed out"}
	other := apitest.LLMSpan(uuid.NewString(), d.otherTrace, "", d.slug, version, "hi", "hello", at.Add(-time.Second))
	s.api.MustDo(t, "POST", "/spans", a.Key, []any{root, llm, child, other})

	judges := "/projects/" + a.ProjectID + "/judges"
	d.judge = s.api.MustDo(t, "POST", judges, a.Key, map[string]any{"name": "helpful", "template": "Is the answer helpful?"}).Map(t)["id"].(string)
	s.api.MustDo(t, "PUT", "/projects/"+a.ProjectID+"/prompts/"+d.slug+"/judges/"+d.judge, a.Key, nil)
	s.api.MustDo(t, "POST", judges+"/"+d.judge+"/evaluations", a.Key, []any{
		map[string]any{"span_id": d.llm, "evaluation_result": false, "evaluation_reason": "it did not answer"},
	})
	s.api.MustDo(t, "POST", "/v1/prompts/"+d.slug+"/completions/"+d.llm+"/feedback", a.Key, map[string]any{"thumbs_up": false, "reason": "wrong"})

	s.api.Optimizations.Serve(func(context.Context, []byte) error { return nil }, asyncinvoke.Config{Retries: -1})
	t.Cleanup(func() { _ = s.api.Optimizations.Close(context.Background()) })
	d.promptRun = s.api.MustDo(t, "POST", "/projects/"+a.ProjectID+"/prompts/"+d.slug+"/optimization-runs", a.Key, map[string]any{}).Map(t)["id"].(string)
	d.judgeRun = s.api.MustDo(t, "POST", judges+"/"+d.judge+"/optimization-runs", a.Key, map[string]any{}).Map(t)["id"].(string)
	return d
}

func TestReadTools(t *testing.T) {
	s := newToolStack(t, apitest.Options{})
	d := seed(t, s)
	s.api.DrainStream(t) // the summary reads the metrics, which follow the table's stream
	cs, err := s.connect(t, s.api.A.Key)
	require.NoError(t, err)

	tools, err := cs.ListTools(t.Context(), nil)
	require.NoError(t, err)
	byName := map[string]*mcp.Tool{}
	for _, tl := range tools.Tools {
		byName[tl.Name] = tl
	}
	for _, name := range readTools {
		require.Contains(t, byName, name)
		a := byName[name].Annotations
		require.NotNil(t, a, name)
		assert.True(t, a.ReadOnlyHint, "%s is read-only", name)
		assert.False(t, a.DestructiveHint != nil && *a.DestructiveHint, "%s is not destructive", name)
		assert.NotEmpty(t, byName[name].Description, name)
		assert.NotNil(t, byName[name].OutputSchema, "%s has an output schema", name)
	}

	tests := []struct {
		name  string
		tool  string
		args  map[string]any
		out   any
		check func(t *testing.T, out any)
	}{
		{"list-traces", "list-traces", map[string]any{}, &mcpserver.ListTracesOutput{}, func(t *testing.T, out any) {
			o := out.(*mcpserver.ListTracesOutput)
			require.Len(t, o.Traces, d.tracesInProject)
			assert.Nil(t, o.NextCursor)
			assert.False(t, o.Partial)
		}},
		{"list-traces of a session", "list-traces", map[string]any{"session_id": d.session, "has_error": true}, &mcpserver.ListTracesOutput{}, func(t *testing.T, out any) {
			o := out.(*mcpserver.ListTracesOutput)
			require.Len(t, o.Traces, 1)
			assert.Equal(t, d.trace, o.Traces[0].ID)
			assert.Equal(t, d.spansOfTrace, o.Traces[0].SpanCount)
		}},
		{"list-traces paged", "list-traces", map[string]any{"limit": 1, "sort_by": "started_at", "sort_order": "asc"}, &mcpserver.ListTracesOutput{}, func(t *testing.T, out any) {
			o := out.(*mcpserver.ListTracesOutput)
			require.Len(t, o.Traces, 1)
			assert.Equal(t, d.otherTrace, o.Traces[0].ID, "the earlier trace first")
			assert.False(t, o.Partial, "a whole page")
			require.NotNil(t, o.NextCursor)
			// The cursors walk the list: each trace once, in order, to a last page without one.
			var all mcpserver.ListTracesOutput
			require.False(t, call(t, cs, "list-traces", map[string]any{"sort_by": "started_at", "sort_order": "asc"}, &all).IsError)
			walked := []string{o.Traces[0].ID}
			for cursor := o.NextCursor; cursor != nil; {
				var next mcpserver.ListTracesOutput
				res := call(t, cs, "list-traces", map[string]any{"limit": 1, "sort_by": "started_at", "sort_order": "asc", "cursor": *cursor}, &next)
				require.False(t, res.IsError, text(res))
				require.Len(t, next.Traces, 1)
				walked, cursor = append(walked, next.Traces[0].ID), next.NextCursor
			}
			assert.Equal(t, ids(all.Traces), walked)
		}},
		{"get-trace", "get-trace", map[string]any{"trace_id": d.trace}, &mcpserver.GetTraceOutput{}, func(t *testing.T, out any) {
			o := out.(*mcpserver.GetTraceOutput)
			assert.Equal(t, d.trace, o.Trace.ID)
			assert.False(t, o.Truncated)
			assert.Nil(t, o.NextSpanCursor)
			require.Len(t, o.Spans, d.spansOfTrace)
			var order []string
			var depths []int
			for _, sp := range o.Spans {
				order, depths = append(order, sp.ID), append(depths, sp.Depth)
			}
			assert.Equal(t, []string{d.root, d.llm, d.child}, order, "depth first from the root")
			assert.Equal(t, []int{0, 1, 2}, depths)
			assert.Equal(t, []string{d.llm}, o.Spans[0].ChildSpanIDs)
			llm := o.Spans[1]
			assert.Equal(t, []string{"input_data"}, llm.TruncatedFields)
			require.NotNil(t, llm.InputData)
			assert.True(t, strings.HasPrefix(*llm.InputData, strings.Repeat("é", 2000)+"… [truncated: 2000 of 5000 characters shown]"), "cut at 2,000 characters with a marker")
			assert.Equal(t, 1, o.TruncatedTexts)
		}},
		{"get-trace paged", "get-trace", map[string]any{"trace_id": d.trace, "span_limit": 2, "span_offset": 1}, &mcpserver.GetTraceOutput{}, func(t *testing.T, out any) {
			o := out.(*mcpserver.GetTraceOutput)
			require.Len(t, o.Spans, 2)
			assert.Equal(t, d.llm, o.Spans[0].ID, "a span whose parent is on another page is a root of this one")
			assert.Equal(t, 0, o.Spans[0].Depth)
			assert.False(t, o.Truncated)
			var first mcpserver.GetTraceOutput
			o2 := call(t, cs, "get-trace", map[string]any{"trace_id": d.trace, "span_limit": 1}, &first)
			require.False(t, o2.IsError, text(o2))
			assert.Contains(t, text(o2), `"truncated":true`)
			assert.Contains(t, text(o2), `"next_span_cursor":"`)
			// The span cursors walk the trace in start order, each span once.
			walked := []string{first.Spans[0].ID}
			for cursor := first.NextSpanCursor; cursor != nil; {
				var next mcpserver.GetTraceOutput
				res := call(t, cs, "get-trace", map[string]any{"trace_id": d.trace, "span_limit": 1, "span_cursor": *cursor}, &next)
				require.False(t, res.IsError, text(res))
				require.Len(t, next.Spans, 1)
				walked, cursor = append(walked, next.Spans[0].ID), next.NextSpanCursor
			}
			assert.Equal(t, []string{d.root, d.llm, d.child}, walked)
		}},
		{"list-judges", "list-judges", map[string]any{}, &mcpserver.ListJudgesOutput{}, func(t *testing.T, out any) {
			o := out.(*mcpserver.ListJudgesOutput)
			require.Len(t, o.Judges, 1)
			assert.Equal(t, d.judge, o.Judges[0].ID)
			assert.Equal(t, []string{d.slug}, o.Judges[0].LinkedPrompts)
		}},
		{"get-judge", "get-judge", map[string]any{"judge_id": d.judge}, &mcpserver.GetJudgeOutput{}, func(t *testing.T, out any) {
			o := out.(*mcpserver.GetJudgeOutput)
			assert.Equal(t, "helpful", o.Judge.Name)
			assert.Equal(t, []string{d.slug}, o.LinkedPrompts)
			assert.Equal(t, d.judge, o.Performance.JudgeID)
		}},
		{"list-judge-evaluations", "list-judge-evaluations", map[string]any{"judge_id": d.judge, "evaluation_result": false}, &mcpserver.ListJudgeEvaluationsOutput{}, func(t *testing.T, out any) {
			o := out.(*mcpserver.ListJudgeEvaluationsOutput)
			require.Len(t, o.Evaluations, 1)
			assert.Equal(t, d.llm, o.Evaluations[0].SpanID)
			assert.Equal(t, 1, o.Total)
			assert.Nil(t, o.NextOffset)
		}},
		{"list-judge-evaluations passing", "list-judge-evaluations", map[string]any{"judge_id": d.judge, "evaluation_result": true}, &mcpserver.ListJudgeEvaluationsOutput{}, func(t *testing.T, out any) {
			assert.Empty(t, out.(*mcpserver.ListJudgeEvaluationsOutput).Evaluations)
		}},
		{"get-judge-criteria", "get-judge-criteria", map[string]any{"judge_id": d.judge}, &struct {
			JudgeID        string `json:"judge_id"`
			EvaluationType string `json:"evaluation_type"`
		}{}, func(t *testing.T, out any) {
			o := out.(*struct {
				JudgeID        string `json:"judge_id"`
				EvaluationType string `json:"evaluation_type"`
			})
			assert.Equal(t, d.judge, o.JudgeID)
			assert.Equal(t, "binary", o.EvaluationType)
		}},
		{"list-optimization-runs of a prompt", "list-optimization-runs", map[string]any{"prompt_slug": d.slug}, &mcpserver.ListOptimizationRunsOutput{}, func(t *testing.T, out any) {
			o := out.(*mcpserver.ListOptimizationRunsOutput)
			require.Len(t, o.Runs, 1)
			assert.Equal(t, d.promptRun, o.Runs[0].ID)
			assert.Equal(t, "queued", o.Runs[0].Status)
		}},
		{"list-optimization-runs of a judge", "list-optimization-runs", map[string]any{"judge_id": d.judge}, &mcpserver.ListOptimizationRunsOutput{}, func(t *testing.T, out any) {
			o := out.(*mcpserver.ListOptimizationRunsOutput)
			require.Len(t, o.Runs, 1)
			assert.Equal(t, d.judgeRun, o.Runs[0].ID)
		}},
		{"get-optimization-run", "get-optimization-run", map[string]any{"run_id": d.promptRun}, &mcpserver.GetOptimizationRunOutput{}, func(t *testing.T, out any) {
			o := out.(*mcpserver.GetOptimizationRunOutput)
			assert.Equal(t, d.promptRun, o.Run.ID)
			assert.Contains(t, o.NextStep, "get-optimization-run")
		}},
		{"get-project-summary", "get-project-summary", map[string]any{}, &mcpserver.ProjectSummaryOutput{}, func(t *testing.T, out any) {
			o := out.(*mcpserver.ProjectSummaryOutput)
			assert.Equal(t, 24, o.WindowHours)
			assert.EqualValues(t, d.tracesInProject, o.TraceCount)
			assert.EqualValues(t, d.spansOfTrace+1, o.SpanCount)
			assert.EqualValues(t, 1, o.ErrorTraceCount)
			assert.EqualValues(t, 1, o.ErrorSpanCount)
			require.NotNil(t, o.TraceErrorRate)
			assert.InDelta(t, 0.5, *o.TraceErrorRate, 1e-9)
			assert.Positive(t, o.CostUSD, "the llm spans are priced")
			require.Len(t, o.TopFailingJudges, 1)
			assert.Equal(t, d.judge, o.TopFailingJudges[0].JudgeID)
			assert.EqualValues(t, 1, o.TopFailingJudges[0].FailingEvaluations)
			assert.Equal(t, "helpful", o.TopFailingJudges[0].Name)
			require.Len(t, o.TopPromptsByNegativeFeedback, 1)
			assert.Equal(t, mcpserver.PromptFeedback{PromptSlug: d.slug, NegativeFeedback: 1, Feedback: 1}, o.TopPromptsByNegativeFeedback[0])
			assert.EqualValues(t, 2, o.LLMCalls)
			require.NotNil(t, o.LatencyMS)
			assert.EqualValues(t, d.tracesInProject, o.LatencyMS.Count)
			assert.Equal(t, 2, o.APICalls, "the metrics and the judges")
		}},
		{"get-project-summary of an hour", "get-project-summary", map[string]any{"window_hours": 1}, &mcpserver.ProjectSummaryOutput{}, func(t *testing.T, out any) {
			assert.EqualValues(t, d.tracesInProject, out.(*mcpserver.ProjectSummaryOutput).TraceCount)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := call(t, cs, tt.tool, tt.args, tt.out)
			require.False(t, res.IsError, text(res))
			tt.check(t, tt.out)
		})
	}
}

// TestReadToolsOtherProject: project B's key reads none of project A's records; each tool
// answers not found, as an error result.
func TestReadToolsOtherProject(t *testing.T) {
	s := newToolStack(t, apitest.Options{})
	d := seed(t, s)
	cs, err := s.connect(t, s.api.B.Key)
	require.NoError(t, err)
	tests := []struct {
		tool string
		args map[string]any
	}{
		{"list-traces", map[string]any{"session_id": d.session}},
		{"get-trace", map[string]any{"trace_id": d.trace}},
		{"get-judge", map[string]any{"judge_id": d.judge}},
		{"list-judge-evaluations", map[string]any{"judge_id": d.judge}},
		{"get-judge-criteria", map[string]any{"judge_id": d.judge}},
		{"get-prompt", map[string]any{"prompt_slug": d.slug}},
		{"list-prompt-versions", map[string]any{"prompt_slug": d.slug}},
		{"list-optimization-runs", map[string]any{"prompt_slug": d.slug}},
		{"list-optimization-runs", map[string]any{"judge_id": d.judge}},
		{"get-optimization-run", map[string]any{"run_id": d.promptRun}},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			res := call(t, cs, tt.tool, tt.args, nil)
			require.True(t, res.IsError, "%s answered %s", tt.tool, text(res))
			assert.Contains(t, text(res), "not_found")
		})
	}

	t.Run("project-wide reads", func(t *testing.T) {
		var traces mcpserver.ListTracesOutput
		res := call(t, cs, "list-traces", map[string]any{}, &traces)
		require.False(t, res.IsError, text(res))
		assert.Empty(t, traces.Traces)
		var sum mcpserver.ProjectSummaryOutput
		res = call(t, cs, "get-project-summary", map[string]any{}, &sum)
		require.False(t, res.IsError, text(res))
		assert.Zero(t, sum.TraceCount)
		assert.Empty(t, sum.TopFailingJudges)
		assert.Empty(t, sum.TopPromptsByNegativeFeedback)
	})
}

// TestReadToolsBadInput: arguments that cannot be used are error results that say what to
// fix, never protocol errors.
func TestReadToolsBadInput(t *testing.T) {
	s := newToolStack(t, apitest.Options{})
	cs, err := s.connect(t, s.api.A.Key)
	require.NoError(t, err)
	tests := []struct {
		name string
		tool string
		args map[string]any
		want string
	}{
		{"missing required field", "get-trace", map[string]any{}, "trace_id"},
		{"empty id", "get-judge", map[string]any{"judge_id": ""}, "judge_id is required"},
		{"wrong type", "list-traces", map[string]any{"limit": "ten"}, "limit"},
		{"unknown field", "list-judges", map[string]any{"judge": "x"}, "judge"},
		{"limit too large", "list-traces", map[string]any{"limit": 1000}, "limit must be from 1 to 100"},
		{"span limit too large", "get-trace", map[string]any{"trace_id": uuid.NewString(), "span_limit": 501}, "span_limit must be from 1 to 500"},
		{"negative offset", "list-judge-evaluations", map[string]any{"judge_id": uuid.NewString(), "offset": -1}, "offset"},
		{"not a UUID", "get-trace", map[string]any{"trace_id": "abc"}, "invalid_request"},
		{"bad time", "list-traces", map[string]any{"created_after": "yesterday"}, "created_after"},
		{"bad date", "list-judge-evaluations", map[string]any{"judge_id": uuid.NewString(), "start_date": "May 1"}, "start_date"},
		{"bad feedback state", "list-judge-evaluations", map[string]any{"judge_id": uuid.NewString(), "feedback_state": "some"}, "feedback_state"},
		{"a tag named as a filter", "list-traces", map[string]any{"tags": map[string]any{"limit": "1"}}, "tags"},
		{"neither target", "list-optimization-runs", map[string]any{}, "exactly one of prompt_slug"},
		{"both targets", "list-optimization-runs", map[string]any{"prompt_slug": "p", "judge_id": uuid.NewString()}, "exactly one of prompt_slug"},
		{"window too long", "get-project-summary", map[string]any{"window_hours": 721}, "window_hours must be from 1 to 720"},
		{"performance window", "get-judge", map[string]any{"judge_id": uuid.NewString(), "performance_days": 400}, "performance_days"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := call(t, cs, tt.tool, tt.args, nil)
			require.True(t, res.IsError, "answered %s", text(res))
			assert.Contains(t, text(res), tt.want)
		})
	}
}

// TestReadToolsBounds: the summary counts every trace of the window in two API calls, however
// many there are; get-trace answers a trace whose spans are each other's parent (bad data)
// without looping.
func TestReadToolsBounds(t *testing.T) {
	s := newToolStack(t, apitest.Options{})
	a := s.api.A
	at := time.Now().Add(-time.Minute)
	var spans []any
	for i := range 60 {
		spans = append(spans, apitest.LLMSpan(uuid.NewString(), uuid.NewString(), "", "support-bot", "", "q", "a", at.Add(time.Duration(i)*time.Millisecond)))
	}
	trace, x, y := uuid.NewString(), uuid.NewString(), uuid.NewString()
	sec := float64(at.UnixMicro()) / 1e6
	spans = append(spans,
		map[string]any{"id": x, "trace_id": trace, "parent_span_id": y, "name": "x", "kind": "chain", "started_at": sec, "ended_at": sec + 1},
		map[string]any{"id": y, "trace_id": trace, "parent_span_id": x, "name": "y", "kind": "chain", "started_at": sec + 0.5, "ended_at": sec + 1})
	s.api.MustDo(t, "POST", "/spans", a.Key, spans)
	s.api.DrainStream(t)
	cs, err := s.connect(t, a.Key)
	require.NoError(t, err)

	var sum mcpserver.ProjectSummaryOutput
	res := call(t, cs, "get-project-summary", map[string]any{"window_hours": 720}, &sum)
	require.False(t, res.IsError, text(res))
	assert.EqualValues(t, 61, sum.TraceCount)
	assert.EqualValues(t, 62, sum.SpanCount)
	assert.Equal(t, 2, sum.APICalls)

	var tr mcpserver.GetTraceOutput
	res = call(t, cs, "get-trace", map[string]any{"trace_id": trace}, &tr)
	require.False(t, res.IsError, text(res))
	require.Len(t, tr.Spans, 2, "each span once")
	assert.Equal(t, x, tr.Spans[0].ID)
	assert.Equal(t, []int{0, 1}, []int{tr.Spans[0].Depth, tr.Spans[1].Depth})
}

// TestListTracesSchemaIsTheAPIs: list-traces takes the query of GET /traces, each property
// described as api.TraceList describes its parameter (the page size aside: the tool's own).
func TestListTracesSchemaIsTheAPIs(t *testing.T) {
	s := newToolStack(t, apitest.Options{})
	cs, err := s.connect(t, s.api.A.Key)
	require.NoError(t, err)
	list, err := cs.ListTools(t.Context(), nil)
	require.NoError(t, err)
	i := slices.IndexFunc(list.Tools, func(tl *mcp.Tool) bool { return tl.Name == "list-traces" })
	require.GreaterOrEqual(t, i, 0)
	props, _ := inputSchema(t, list.Tools[i])["properties"].(map[string]any)
	for _, p := range api.TraceList.Params {
		require.Contains(t, props, p.Name)
		doc := props[p.Name].(map[string]any)["description"]
		if p.Name == api.ParamLimit || p.Name == api.ParamOffset || p.Name == api.ParamCursor {
			assert.NotEqual(t, p.Doc, doc, p.Name)
			continue
		}
		assert.Equal(t, p.Doc, doc, p.Name)
	}
	assert.Equal(t, api.TagsDoc, props["tags"].(map[string]any)["description"])
	assert.Len(t, props, len(api.TraceList.Params)+1, "the query's parameters and the tags, nothing else")
}

// ids is the id of each trace.
func ids(traces []api.Trace) []string {
	out := make([]string, len(traces))
	for i, t := range traces {
		out[i] = t.ID
	}
	return out
}
