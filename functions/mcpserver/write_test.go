package mcpserver_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/client"
	"github.com/plumehq/plume/internal/apitest"
	"github.com/plumehq/plume/shared/asyncinvoke"
)

// writeTools are the tools that change the project: each one is gated by confirm.
var writeTools = []string{"create-judge", "link-judge-to-prompt", "unlink-judge-from-prompt", "create-judge-feedback",
	"create-prompt-feedback", "start-prompt-optimization", "start-judge-optimization", "cancel-optimization-run", "deploy-optimization-run"}

// restClientFor is a Go client of the API under test with tenant's key: how the tests read
// back what a tool did, or did not do.
func restClientFor(t *testing.T, a *apitest.API, tenant apitest.Tenant) *client.Client {
	t.Helper()
	srv := httptest.NewServer(a.Handler)
	t.Cleanup(srv.Close)
	c, err := client.New(client.WithBaseURL(srv.URL), client.WithAPIKey(tenant.Key), client.WithProject(tenant.ProjectID),
		client.WithRetries(0), client.WithEnv(func(string) string { return "" }))
	require.NoError(t, err)
	return c
}

// holdRuns serves the optimization queue with a worker that leaves every run queued, so that
// runs can be started and cancelled without a model.
func holdRuns(a *apitest.API) {
	a.Optimizations.Serve(func(context.Context, []byte) error { return nil }, asyncinvoke.Config{Retries: -1})
}

// writeFixture is prompt support-bot with judge "helpful" linked to it, judge "polite" linked
// to nothing, and three completions; "helpful" failed the first.
type writeFixture struct {
	helpful, polite api.Judge
	spans           []string
}

func seedWriteFixture(t *testing.T, a *apitest.API, c *client.Client) writeFixture {
	t.Helper()
	ctx := context.Background()
	versionID := a.EnsurePrompt(t, a.A, "support-bot", "You help with {{product}}.")
	var f writeFixture
	var err error
	for _, name := range []string{"helpful", "polite"} {
		tpl := "Is the answer " + name + "?\n{{input}}\n{{output}}"
		j, err := c.CreateJudge(ctx, api.JudgeRequest{Name: &name, Template: &tpl})
		require.NoError(t, err)
		if name == "helpful" {
			f.helpful = j
		} else {
			f.polite = j
		}
	}
	f.helpful, err = c.LinkJudge(ctx, "support-bot", f.helpful.ID, true)
	require.NoError(t, err)
	var spans []any
	for i := range 3 {
		id := uuid.NewString()
		f.spans = append(f.spans, id)
		spans = append(spans, apitest.LLMSpan(id, uuid.NewString(), "", "support-bot", versionID, "Can I get a refund?", "No.", time.Now().Add(-time.Duration(i+1)*time.Minute)))
	}
	a.MustDo(t, "POST", "/spans", a.A.Key, spans)
	_, err = c.RecordEvaluations(ctx, f.helpful.ID, []api.EvaluationRequest{{SpanID: f.spans[0], EvaluationResult: new(false), EvaluationReason: "Too curt"}})
	require.NoError(t, err)
	return f
}

// humanFeedback is the people's feedback on a span.
func humanFeedback(t *testing.T, c *client.Client, spanID string) []api.HumanFeedbackItem {
	t.Helper()
	u, err := c.UnifiedFeedback(context.Background(), "span", spanID)
	require.NoError(t, err)
	var out []api.HumanFeedbackItem
	for _, it := range u.Items {
		if it.Human != nil {
			out = append(out, *it.Human)
		}
	}
	return out
}

// TestWriteToolsConfirmGate: every write tool, called without confirm, answers an error that
// says what it would do and changes nothing (read back through the API); called again with
// confirm: true, it does it.
func TestWriteToolsConfirmGate(t *testing.T) {
	s := newToolStack(t, apitest.Options{})
	holdRuns(s.api)
	c := restClientFor(t, s.api, s.api.A)
	f := seedWriteFixture(t, s.api, c)
	ctx := context.Background()
	cs, err := s.connect(t, s.api.A.Key)
	require.NoError(t, err)

	var runID string // the prompt run, started by start-prompt-optimization and then cancelled
	tests := []struct {
		name      string
		tool      string
		args      func() map[string]any
		refusal   []string                                    // what the refusal must say
		unchanged func(t *testing.T)                          // what must still be as it was
		done      func(t *testing.T, res *mcp.CallToolResult) // what the confirmed call did
	}{
		{
			name: "create a judge", tool: "create-judge",
			args: func() map[string]any {
				return map[string]any{"name": "concise", "template": "Is it concise?\n{{output}}", "evaluation_type": "binary", "target_prompt": "support-bot"}
			},
			refusal: []string{`would create judge "concise" (binary) targeting prompt support-bot; call again with confirm: true`},
			unchanged: func(t *testing.T) {
				judges, err := c.Judges(ctx)
				require.NoError(t, err)
				assert.Len(t, judges, 2, "no judge created")
			},
			done: func(t *testing.T, res *mcp.CallToolResult) {
				judges, err := c.Judges(ctx)
				require.NoError(t, err)
				require.Len(t, judges, 3)
				assert.Equal(t, "concise", judges[2].Name)
				assert.Equal(t, "support-bot", *judges[2].TargetPrompt)
			},
		},
		{
			name: "link a judge", tool: "link-judge-to-prompt",
			args:    func() map[string]any { return map[string]any{"judge_id": f.polite.ID, "prompt_slug": "support-bot"} },
			refusal: []string{`would link judge "polite" (` + f.polite.ID + `) to prompt support-bot`, "call again with confirm: true"},
			unchanged: func(t *testing.T) {
				j, err := c.Judge(ctx, f.polite.ID)
				require.NoError(t, err)
				assert.Empty(t, j.LinkedPrompts, "no link")
			},
			done: func(t *testing.T, _ *mcp.CallToolResult) {
				j, err := c.Judge(ctx, f.polite.ID)
				require.NoError(t, err)
				assert.Equal(t, []string{"support-bot"}, j.LinkedPrompts)
			},
		},
		{
			name: "unlink a judge", tool: "unlink-judge-from-prompt",
			args:    func() map[string]any { return map[string]any{"judge_id": f.polite.ID, "prompt_slug": "support-bot"} },
			refusal: []string{`would unlink judge "polite"`, "from prompt support-bot", "call again with confirm: true"},
			unchanged: func(t *testing.T) {
				j, err := c.Judge(ctx, f.polite.ID)
				require.NoError(t, err)
				assert.Equal(t, []string{"support-bot"}, j.LinkedPrompts, "still linked")
			},
			done: func(t *testing.T, _ *mcp.CallToolResult) {
				j, err := c.Judge(ctx, f.polite.ID)
				require.NoError(t, err)
				assert.Empty(t, j.LinkedPrompts)
			},
		},
		{
			name: "calibrate a judge", tool: "create-judge-feedback",
			args: func() map[string]any {
				return map[string]any{"judge_id": f.helpful.ID, "completion_id": f.spans[0], "thumbs_up": false, "reason": "It answered the question."}
			},
			refusal: []string{`judge "helpful"`, `its verdict fail ("Too curt")`, "of prompt support-bot is wrong", `because "It answered the question."`, "call again with confirm: true"},
			unchanged: func(t *testing.T) {
				assert.Empty(t, humanFeedback(t, c, f.spans[0]), "no feedback")
			},
			done: func(t *testing.T, _ *mcp.CallToolResult) {
				fb := humanFeedback(t, c, f.spans[0])
				require.Len(t, fb, 1)
				assert.Equal(t, f.helpful.ID, *fb[0].JudgeID)
				assert.False(t, fb[0].ThumbsUp)
			},
		},
		{
			name: "give feedback on a completion", tool: "create-prompt-feedback",
			args: func() map[string]any {
				return map[string]any{"prompt_slug": "support-bot", "completion_id": f.spans[1], "thumbs_up": false, "reason": "Rude.", "expected_output": "Yes, within 30 days."}
			},
			refusal: []string{"would record a thumbs down from this key's user on completion " + f.spans[1] + " of prompt support-bot", `"Rude."`, "call again with confirm: true"},
			unchanged: func(t *testing.T) {
				assert.Empty(t, humanFeedback(t, c, f.spans[1]), "no feedback")
			},
			done: func(t *testing.T, _ *mcp.CallToolResult) {
				fb := humanFeedback(t, c, f.spans[1])
				require.Len(t, fb, 1)
				assert.Equal(t, "Rude.", *fb[0].Reason)
				assert.Nil(t, fb[0].JudgeID)
			},
		},
		{
			name: "start a prompt optimization", tool: "start-prompt-optimization",
			args: func() map[string]any {
				return map[string]any{"prompt_slug": "support-bot", "optimizer_type": "quick_refine", "seed": 3, "budget": map[string]any{"max_model_calls": 150}}
			},
			refusal: []string{"would start a quick_refine optimization run of prompt support-bot (baseline: version 1", `judge "helpful"`, "150 model calls", "call again with confirm: true"},
			unchanged: func(t *testing.T) {
				runs, err := c.PromptOptimizationRuns(ctx, "support-bot", 10, 0)
				require.NoError(t, err)
				assert.Empty(t, runs, "no run")
			},
			done: func(t *testing.T, res *mcp.CallToolResult) {
				runs, err := c.PromptOptimizationRuns(ctx, "support-bot", 10, 0)
				require.NoError(t, err)
				require.Len(t, runs, 1)
				assert.Equal(t, "queued", runs[0].Status)
				assert.Equal(t, int64(3), *runs[0].Config.Seed)
				runID = runs[0].ID
			},
		},
		{
			name: "start a judge optimization", tool: "start-judge-optimization",
			args:    func() map[string]any { return map[string]any{"judge_id": f.helpful.ID} },
			refusal: []string{`would start a quick_refine optimization run of judge "helpful"`, "from its 1 calibrated evaluations", "call again with confirm: true"},
			unchanged: func(t *testing.T) {
				runs, err := c.JudgeOptimizationRuns(ctx, f.helpful.ID, 10, 0)
				require.NoError(t, err)
				assert.Empty(t, runs, "no run")
			},
			done: func(t *testing.T, _ *mcp.CallToolResult) {
				runs, err := c.JudgeOptimizationRuns(ctx, f.helpful.ID, 10, 0)
				require.NoError(t, err)
				assert.Len(t, runs, 1)
			},
		},
		{
			name: "cancel a run", tool: "cancel-optimization-run",
			args:    func() map[string]any { return map[string]any{"run_id": runID} },
			refusal: []string{"would cancel optimization run " + runID, "quick_refine of prompt support-bot, queued", "call again with confirm: true"},
			unchanged: func(t *testing.T) {
				r, err := c.OptimizationRun(ctx, runID)
				require.NoError(t, err)
				assert.Equal(t, "queued", r.Status)
			},
			done: func(t *testing.T, _ *mcp.CallToolResult) {
				r, err := c.OptimizationRun(ctx, runID)
				require.NoError(t, err)
				assert.Equal(t, "cancelled", r.Status)
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, confirm := range []any{nil, false} {
				args := tt.args()
				if confirm != nil {
					args["confirm"] = confirm
				}
				res := call(t, cs, tt.tool, args, nil)
				require.True(t, res.IsError, "refused without confirm: true: %s", text(res))
				assert.Contains(t, text(res), "not confirmed, nothing changed")
				for _, want := range tt.refusal {
					assert.Contains(t, text(res), want)
				}
				tt.unchanged(t)
			}
			args := tt.args()
			args["confirm"] = true
			res := call(t, cs, tt.tool, args, nil)
			require.False(t, res.IsError, text(res))
			tt.done(t, res)
		})
	}

	t.Run("a run that is over is not cancelled", func(t *testing.T) {
		res := call(t, cs, "cancel-optimization-run", map[string]any{"run_id": runID}, nil)
		require.True(t, res.IsError)
		assert.Contains(t, text(res), "is cancelled: only a queued or running run can be cancelled")
		res = call(t, cs, "cancel-optimization-run", map[string]any{"run_id": runID, "confirm": true}, nil)
		require.True(t, res.IsError)
		assert.Contains(t, text(res), "conflict")
	})
}

// TestWriteToolsAnnotationsAndSchemas: every write tool is annotated destructive (and not
// read-only) and takes confirm, which no schema requires (its absence is the refusal).
func TestWriteToolsAnnotationsAndSchemas(t *testing.T) {
	s := newToolStack(t, apitest.Options{})
	cs, err := s.connect(t, s.api.A.Key)
	require.NoError(t, err)
	list, err := cs.ListTools(t.Context(), nil)
	require.NoError(t, err)
	tools := map[string]*mcp.Tool{}
	for _, tl := range list.Tools {
		tools[tl.Name] = tl
	}
	for _, name := range writeTools {
		tl := tools[name]
		require.NotNil(t, tl, name)
		a := tl.Annotations
		require.NotNil(t, a, name)
		assert.False(t, a.ReadOnlyHint, name)
		require.NotNil(t, a.DestructiveHint, name)
		assert.True(t, *a.DestructiveHint, name)
		schema := inputSchema(t, tl)
		props, _ := schema["properties"].(map[string]any)
		require.Contains(t, props, "confirm", name)
		assert.Contains(t, props["confirm"].(map[string]any)["description"], "must be true", name)
		assert.NotContains(t, schema["required"], "confirm", name)
	}
	for _, name := range []string{"preview-optimization-deploy", "investigate-prompt-issues", "investigate-judge-issues",
		"prepare-prompt-optimization", "prepare-judge-optimization"} {
		require.NotNil(t, tools[name], name)
		assert.True(t, tools[name].Annotations.ReadOnlyHint, name)
		assert.NotContains(t, inputSchema(t, tools[name])["properties"], "confirm", name)
	}
}

// inputSchema is a listed tool's input schema as JSON.
func inputSchema(t *testing.T, tl *mcp.Tool) map[string]any {
	t.Helper()
	var m map[string]any
	b, err := json.Marshal(tl.InputSchema)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &m))
	return m
}

// TestWriteToolsInvalidInput: arguments a tool cannot use are error results that say what to
// fix, never protocol errors, and change nothing.
func TestWriteToolsInvalidInput(t *testing.T) {
	s := newToolStack(t, apitest.Options{})
	c := restClientFor(t, s.api, s.api.A)
	f := seedWriteFixture(t, s.api, c)
	cs, err := s.connect(t, s.api.A.Key)
	require.NoError(t, err)
	tests := []struct {
		name, tool string
		args       map[string]any
		want       string
	}{
		{"a judge without a template", "create-judge", map[string]any{"name": "x", "confirm": true}, `missing properties: ["template"]`},
		{"a judge with a blank template", "create-judge", map[string]any{"name": "x", "template": " ", "confirm": true}, "template is required"},
		{"an unknown evaluation type", "create-judge", map[string]any{"name": "x", "template": "t", "evaluation_type": "fuzzy"}, "binary or scored"},
		{"feedback without thumbs", "create-prompt-feedback", map[string]any{"prompt_slug": "support-bot", "completion_id": f.spans[1], "confirm": true}, `missing properties: ["thumbs_up"]`},
		{"a bad score direction", "create-judge-feedback", map[string]any{"judge_id": f.helpful.ID, "completion_id": f.spans[0], "thumbs_up": true, "score_direction": "sideways"}, "too_high or too_low"},
		{"an unknown prompt", "start-prompt-optimization", map[string]any{"prompt_slug": "no-such-prompt"}, "not_found"},
		{"a prompt without judges", "start-prompt-optimization", map[string]any{"prompt_slug": "other"}, "has no linked judge"},
		{"a prompt type for a judge", "start-judge-optimization", map[string]any{"judge_id": f.helpful.ID, "optimizer_type": "dspy_gepa"}, "quick_refine"},
		{"a deploy without a receipt", "deploy-optimization-run", map[string]any{"run_id": uuid.NewString(), "receipt": "", "confirm": true}, "call preview-optimization-deploy"},
	}
	s.api.EnsurePrompt(t, s.api.A, "other", "Another prompt.")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := call(t, cs, tt.tool, tt.args, nil)
			require.True(t, res.IsError)
			assert.Contains(t, text(res), tt.want)
		})
	}
	judges, err := c.Judges(context.Background())
	require.NoError(t, err)
	assert.Len(t, judges, 2)
	assert.Empty(t, humanFeedback(t, c, f.spans[1]))
}

// TestWriteToolsTenancy: another project's judges, prompts, completions and runs are not
// found, with confirm or without, and nothing of theirs changes.
func TestWriteToolsTenancy(t *testing.T) {
	s := newToolStack(t, apitest.Options{})
	holdRuns(s.api)
	c := restClientFor(t, s.api, s.api.A)
	f := seedWriteFixture(t, s.api, c)
	run, err := c.StartPromptOptimization(context.Background(), "support-bot", api.OptimizationRunRequest{OptimizerType: "quick_refine"})
	require.NoError(t, err)
	other, err := s.connect(t, s.api.B.Key)
	require.NoError(t, err)

	tests := []struct {
		tool string
		args map[string]any
	}{
		{"link-judge-to-prompt", map[string]any{"judge_id": f.polite.ID, "prompt_slug": "support-bot"}},
		{"unlink-judge-from-prompt", map[string]any{"judge_id": f.helpful.ID, "prompt_slug": "support-bot"}},
		{"create-judge-feedback", map[string]any{"judge_id": f.helpful.ID, "completion_id": f.spans[0], "prompt_slug": "support-bot", "thumbs_up": true}},
		{"create-prompt-feedback", map[string]any{"prompt_slug": "support-bot", "completion_id": f.spans[1], "thumbs_up": true}},
		{"start-prompt-optimization", map[string]any{"prompt_slug": "support-bot"}},
		{"start-judge-optimization", map[string]any{"judge_id": f.helpful.ID}},
		{"cancel-optimization-run", map[string]any{"run_id": run.ID}},
		{"deploy-optimization-run", map[string]any{"run_id": run.ID, "receipt": "rcpt_x"}},
		{"preview-optimization-deploy", map[string]any{"run_id": run.ID}},
		{"investigate-prompt-issues", map[string]any{"prompt_slug": "support-bot"}},
		{"investigate-judge-issues", map[string]any{"judge_id": f.helpful.ID}},
		{"prepare-prompt-optimization", map[string]any{"prompt_slug": "support-bot"}},
		{"prepare-judge-optimization", map[string]any{"judge_id": f.helpful.ID}},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			for _, confirm := range []bool{false, true} {
				if confirm && !slices.Contains(writeTools, tt.tool) {
					continue // a read tool takes no confirm
				}
				args := map[string]any{}
				for k, v := range tt.args {
					args[k] = v
				}
				if confirm {
					args["confirm"] = true
				}
				res := call(t, other, tt.tool, args, nil)
				require.True(t, res.IsError, "confirm %v: %s", confirm, text(res))
				assert.Contains(t, text(res), "not_found", "confirm %v", confirm)
			}
		})
	}

	ctx := context.Background()
	polite, err := c.Judge(ctx, f.polite.ID)
	require.NoError(t, err)
	assert.Empty(t, polite.LinkedPrompts)
	helpful, err := c.Judge(ctx, f.helpful.ID)
	require.NoError(t, err)
	assert.Equal(t, []string{"support-bot"}, helpful.LinkedPrompts)
	assert.Empty(t, humanFeedback(t, c, f.spans[0]))
	assert.Empty(t, humanFeedback(t, c, f.spans[1]))
	r, err := c.OptimizationRun(ctx, run.ID)
	require.NoError(t, err)
	assert.Equal(t, "queued", r.Status)
	runs, err := c.JudgeOptimizationRuns(ctx, f.helpful.ID, 10, 0)
	require.NoError(t, err)
	assert.Empty(t, runs)
}
