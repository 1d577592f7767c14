package mcpserver_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/client"
	"github.com/plumehq/plume/functions/mcpserver"
	"github.com/plumehq/plume/internal/apitest"
)

// proposalFixture is prompt support-bot with 12 completions and two linked judges:
// "cites policy", which failed 5 completions for one reason (written 2 ways) and 1 for another
// and passed 2, and people calibrated it on 3 of its verdicts (2 said it was wrong); and
// "polite", never calibrated. People gave a thumbs down to 5 completions (4 for one reason,
// written 3 ways, with the output they wanted) and a thumbs up to the other 7.
type proposalFixture struct {
	cites, polite api.Judge
	spans         []string
}

func seedProposals(t *testing.T, a *apitest.API, c *client.Client) proposalFixture {
	t.Helper()
	ctx := context.Background()
	versionID := a.EnsurePrompt(t, a.A, "support-bot", "You are a support agent for {{product}}.")
	var f proposalFixture
	for _, name := range []string{"cites policy", "polite"} {
		tpl := "Is the answer " + name + "?\n{{input}}\n{{output}}"
		j, err := c.CreateJudge(ctx, api.JudgeRequest{Name: &name, Template: &tpl})
		require.NoError(t, err)
		j, err = c.LinkJudge(ctx, "support-bot", j.ID, true)
		require.NoError(t, err)
		if name == "polite" {
			f.polite = j
		} else {
			f.cites = j
		}
	}
	var spans []any
	for i := range 12 {
		id := uuid.NewString()
		f.spans = append(f.spans, id)
		spans = append(spans, apitest.LLMSpan(id, uuid.NewString(), "", "support-bot", versionID,
			fmt.Sprintf("Can I return order %d? %s", i, strings.Repeat("Please help. ", 40)), "Sure, no problem.", time.Now().Add(-time.Duration(i+1)*time.Minute)))
	}
	a.MustDo(t, "POST", "/spans", a.A.Key, spans)

	negative := []string{"It must cite the refund policy.", "  it must cite the REFUND   policy. ", "It must cite the refund policy.", "it must cite the refund policy.", "Too long."}
	for i, id := range f.spans {
		req := api.FeedbackRequest{ThumbsUp: new(i >= len(negative))}
		if i < len(negative) {
			req.Reason, req.ExpectedOutput = &negative[i], new("Per the refund policy, you can return it within 30 days.")
		}
		_, err := c.SendFeedback(ctx, "support-bot", id, req)
		require.NoError(t, err)
	}
	var evals []api.EvaluationRequest
	for i, reason := range []string{"Does not cite the refund policy", "does not cite the refund policy", "Does not cite the refund policy",
		"Does not cite the refund policy", "Does not cite the refund policy", "Off topic", "", ""} {
		evals = append(evals, api.EvaluationRequest{SpanID: f.spans[i], EvaluationResult: new(reason == ""), EvaluationReason: reason})
	}
	_, err := c.RecordEvaluations(ctx, f.cites.ID, evals)
	require.NoError(t, err)
	for i, fb := range []struct {
		up     bool
		reason string
	}{{false, "The answer does cite it."}, {false, "the answer DOES cite it."}, {true, "Right."}} {
		_, err := c.SendFeedback(ctx, "support-bot", f.spans[i], api.FeedbackRequest{ThumbsUp: &fb.up, Reason: &fb.reason, JudgeID: &f.cites.ID})
		require.NoError(t, err)
	}
	return f
}

// TestProposalTools: the investigate tools group failures by normalised reason with
// examples; the prepare tools count the signal, predict the type auto picks and write a next
// call that the write tool accepts.
func TestProposalTools(t *testing.T) {
	s := newToolStack(t, apitest.Options{})
	holdRuns(s.api)
	c := restClientFor(t, s.api, s.api.A)
	f := seedProposals(t, s.api, c)
	cs, err := s.connect(t, s.api.A.Key)
	require.NoError(t, err)

	t.Run("investigate-prompt-issues", func(t *testing.T) {
		var out mcpserver.InvestigatePromptOutput
		res := call(t, cs, "investigate-prompt-issues", map[string]any{"prompt_slug": "support-bot"}, &out)
		require.False(t, res.IsError, text(res))
		assert.Equal(t, 12, out.CompletionsRead)
		assert.Equal(t, 5, out.NegativeFeedback, "calibrations are about the judge, not the completion")
		require.Len(t, out.FeedbackIssues, 2)
		top := out.FeedbackIssues[0]
		assert.Equal(t, "it must cite the refund policy.", top.Reason)
		assert.Equal(t, 4, top.Count)
		require.Len(t, top.Examples, 3, "at most 3 examples")
		assert.Subset(t, f.spans[:4], []string{top.Examples[0].SpanID, top.Examples[1].SpanID, top.Examples[2].SpanID})
		assert.Contains(t, top.Examples[0].Input, "Can I return order")
		assert.Contains(t, top.Examples[0].Input, "[truncated: ", "inputs are truncated, saying so")
		assert.Equal(t, "Sure, no problem.", top.Examples[0].Output)
		assert.Equal(t, "Per the refund policy, you can return it within 30 days.", top.Examples[0].ExpectedOutput)
		assert.Equal(t, api.IssueGroup{Reason: "too long.", Count: 1, Examples: out.FeedbackIssues[1].Examples}, out.FeedbackIssues[1])

		require.Len(t, out.EvaluationIssues, 2)
		assert.Equal(t, "does not cite the refund policy", out.EvaluationIssues[0].Reason)
		assert.Equal(t, 5, out.EvaluationIssues[0].Count)
		assert.Equal(t, f.cites.ID, out.EvaluationIssues[0].JudgeID)
		assert.Equal(t, "cites policy", out.EvaluationIssues[0].JudgeName)
		assert.Equal(t, "fail", out.EvaluationIssues[0].Examples[0].Verdict)
		assert.Equal(t, "Sure, no problem.", out.EvaluationIssues[0].Examples[0].Output)
		assert.Equal(t, "off topic", out.EvaluationIssues[1].Reason)
		assert.ElementsMatch(t, []api.JudgeCounts{
			{JudgeID: f.cites.ID, Name: "cites policy", Evaluations: 8, Failing: 6},
			{JudgeID: f.polite.ID, Name: "polite"},
		}, out.LinkedJudges)
		assert.Equal(t, mcpserver.NextCall{Tool: "prepare-prompt-optimization", Arguments: map[string]any{"prompt_slug": "support-bot"}}, out.Next)
	})

	t.Run("investigate-judge-issues", func(t *testing.T) {
		var out mcpserver.InvestigateJudgeOutput
		res := call(t, cs, "investigate-judge-issues", map[string]any{"judge_id": f.cites.ID, "window_hours": 24}, &out)
		require.False(t, res.IsError, text(res))
		assert.Equal(t, 8, out.Evaluations)
		assert.Equal(t, 6, out.Failing)
		assert.Equal(t, 3, out.CalibrationsRead)
		assert.Equal(t, 2, out.Disagreements)
		require.Len(t, out.DisagreementIssues, 1)
		d := out.DisagreementIssues[0]
		assert.Equal(t, "the answer does cite it.", d.Reason)
		assert.Equal(t, 2, d.Count)
		require.Len(t, d.Examples, 2)
		assert.Equal(t, "fail", d.Examples[0].Verdict)
		assert.Contains(t, d.Examples[0].JudgeReason, "not cite the refund policy")
		assert.Equal(t, "Sure, no problem.", d.Examples[0].Output)
		require.Len(t, out.FailureIssues, 2)
		assert.Equal(t, 5, out.FailureIssues[0].Count)
		assert.Equal(t, 3, out.Performance.N)
		assert.Equal(t, "prepare-judge-optimization", out.Next.Tool)

		res = call(t, cs, "investigate-judge-issues", map[string]any{"judge_id": f.cites.ID, "window_hours": 100000}, nil)
		require.True(t, res.IsError)
		assert.Contains(t, text(res), "window_hours must be an integer from 1 to 2160")
	})

	t.Run("prepare-prompt-optimization", func(t *testing.T) {
		var out mcpserver.PreparePromptOutput
		res := call(t, cs, "prepare-prompt-optimization", map[string]any{"prompt_slug": "support-bot"}, &out)
		require.False(t, res.IsError, text(res))
		assert.Equal(t, 1, out.BaselineVersion)
		assert.Equal(t, 12, out.Signal.Examples)
		assert.Equal(t, 12, out.Signal.WithFeedback)
		assert.Equal(t, 5, out.Signal.Negative)
		assert.Equal(t, 7, out.Signal.Positive)
		assert.Equal(t, 5, out.Signal.WithExpectedOutput)
		assert.Equal(t, 8, out.Signal.Demonstrations, "12 examples: 8 train, each with a thumbs up or an expected output")
		assert.True(t, out.EnoughSignal, "%v", out.Missing)
		assert.Equal(t, "dspy_bootstrap", out.AutoPicks, out.Why)
		assert.Equal(t, 1000, out.ModelCalls)
		assert.Equal(t, 2*2*3, out.ComparisonCalls, "2 holdout examples, a task and 2 judge calls each, for both")
		assert.Equal(t, mcpserver.NextCall{Tool: "start-prompt-optimization", Arguments: map[string]any{
			"prompt_slug": "support-bot", "optimizer_type": "dspy_bootstrap", "seed": float64(1), "confirm": true}}, out.Next)

		res = call(t, cs, "prepare-prompt-optimization", map[string]any{"prompt_slug": "support-bot", "max_model_calls": 50, "seed": 9}, &out)
		require.False(t, res.IsError, text(res))
		assert.Equal(t, "quick_refine", out.AutoPicks)
		assert.Contains(t, out.Why, "a budget under 100 calls")
		assert.Equal(t, map[string]any{"prompt_slug": "support-bot", "optimizer_type": "quick_refine", "seed": float64(9),
			"budget": map[string]any{"max_model_calls": float64(50)}, "confirm": true}, out.Next.Arguments)

		// The next call is one the write tool takes as it is.
		var run api.OptimizationRun
		res = call(t, cs, out.Next.Tool, out.Next.Arguments, &run)
		require.False(t, res.IsError, text(res))
		assert.Equal(t, "quick_refine", run.Requested)
		assert.Equal(t, 50, run.Config.Budget.MaxModelCalls)
	})

	t.Run("prepare-prompt-optimization without signal", func(t *testing.T) {
		s.api.EnsurePrompt(t, s.api.A, "quiet", "Nobody uses this prompt.")
		var out mcpserver.PreparePromptOutput
		res := call(t, cs, "prepare-prompt-optimization", map[string]any{"prompt_slug": "quiet"}, &out)
		require.False(t, res.IsError, text(res))
		assert.False(t, out.EnoughSignal)
		require.Len(t, out.Missing, 3)
		assert.Contains(t, out.Missing[0], "completions: 0 found, a run needs at least 3")
		assert.Contains(t, out.Missing[1], "a judge to score candidates")
		assert.Equal(t, "quick_refine", out.AutoPicks)
	})

	t.Run("prepare-judge-optimization", func(t *testing.T) {
		var out mcpserver.PrepareJudgeOutput
		res := call(t, cs, "prepare-judge-optimization", map[string]any{"judge_id": f.cites.ID}, &out)
		require.False(t, res.IsError, text(res))
		assert.Equal(t, 3, out.Calibrated)
		assert.Equal(t, 2, out.Disagreements)
		assert.Equal(t, 3, out.Agreement.N)
		assert.True(t, out.EnoughSignal, "%v", out.Missing)
		assert.Equal(t, "quick_refine", out.AutoPicks)
		assert.Equal(t, 200, out.ModelCalls)
		assert.Equal(t, 2, out.ComparisonCalls, "one held-out calibration, judged by both templates")
		assert.Equal(t, mcpserver.NextCall{Tool: "start-judge-optimization", Arguments: map[string]any{
			"judge_id": f.cites.ID, "seed": float64(1), "confirm": true}}, out.Next)
		var run api.OptimizationRun
		res = call(t, cs, out.Next.Tool, out.Next.Arguments, &run)
		require.False(t, res.IsError, text(res))
		assert.Equal(t, f.cites.ID, *run.JudgeID)

		res = call(t, cs, "prepare-judge-optimization", map[string]any{"judge_id": f.polite.ID}, &out)
		require.False(t, res.IsError, text(res))
		assert.False(t, out.EnoughSignal)
		assert.Contains(t, out.Missing[0], "calibrations: 0 calibrated evaluations")
	})
}
