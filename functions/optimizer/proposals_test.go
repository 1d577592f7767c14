package optimizer_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/client"
)

// clientOf is the Go client of key, naming project projectID, over HTTP to the stack.
func (s *stack) clientOf(t *testing.T, key, projectID string) *client.Client {
	t.Helper()
	srv := httptest.NewServer(s.api.Handler)
	t.Cleanup(srv.Close)
	c, err := client.New(client.WithBaseURL(srv.URL), client.WithAPIKey(key), client.WithProject(projectID),
		client.WithRetries(0), client.WithEnv(func(string) string { return "" }))
	require.NoError(t, err)
	return c
}

// TestPromptPreviewPredictsTheRun: the preview counts what the run will read, and the run
// started with the preview's Start is of the type the preview predicted, on the holdout it
// reserved calls for.
func TestPromptPreviewPredictsTheRun(t *testing.T) {
	s := newStack(t)
	judgeID := s.seed(t, 12)
	c := s.clientOf(t, s.api.A.Key, s.pid)
	ctx := context.Background()

	p, err := c.PromptOptimizationPreview(ctx, "support", api.PreviewQuery{})
	require.NoError(t, err)
	assert.Equal(t, 1, p.BaselineVersion)
	assert.Equal(t, "the latest, as production is not pinned", p.Baseline)
	assert.Equal(t, api.PromptSignal{Examples: 12, WithFeedback: 12, Negative: 12,
		Judges: []api.JudgeCounts{{JudgeID: judgeID, Name: "cites policy", Evaluations: 12, Failing: 12}}}, p.Signal)
	assert.True(t, p.EnoughSignal, "%v", p.Missing)
	assert.Equal(t, api.OptimizerQuickRefine, p.AutoPicks, "no demonstration: %s", p.Why)
	assert.Equal(t, api.DefaultBudgets[api.OptimizerQuickRefine].MaxModelCalls, p.ModelCalls)
	require.NotNil(t, p.Start.Config.Seed)
	assert.Equal(t, int64(1), *p.Start.Config.Seed, "the seed is pinned")
	assert.Equal(t, api.OptimizerQuickRefine, p.Start.OptimizerType)

	run, err := c.StartPromptOptimization(ctx, "support", api.OptimizationRunRequest(p.Start))
	require.NoError(t, err)
	done := s.await(t, run.ID)
	require.Equal(t, "succeeded", done["status"], "%v", done["error"])
	assert.Equal(t, p.AutoPicks, done["optimizer_type"])
	holdout := done["metrics"].(map[string]any)["holdout_ids"].([]any)
	assert.Equal(t, p.ComparisonCalls, 2*len(holdout)*2, "a task and a judge call per held-out example, for both prompts")

	small, err := c.PromptOptimizationPreview(ctx, "support", api.PreviewQuery{MaxModelCalls: 4, Seed: new(int64(9))})
	require.NoError(t, err)
	assert.Contains(t, small.Why, "a budget under 100 calls")
	assert.Equal(t, []string{"budget: 4 model calls do not cover the comparison on the holdout (" + strconv.Itoa(small.ComparisonCalls) + " calls)"}, small.Missing)
	assert.False(t, small.EnoughSignal)
	assert.Equal(t, api.OptimizationStart{OptimizerType: api.OptimizerQuickRefine,
		Config: api.OptimizationConfig{Budget: &api.OptimizationBudget{MaxModelCalls: 4}, Seed: new(int64(9))}}, small.Start)
}

// TestProposalIssues: the issue reads group the failures by normalised reason, with the
// completions' input and output.
func TestProposalIssues(t *testing.T) {
	s := newStack(t)
	judgeID := s.seed(t, 5)
	c := s.clientOf(t, s.api.A.Key, s.pid)
	ctx := context.Background()

	pi, err := c.PromptIssues(ctx, "support", api.IssueQuery{WindowHours: 24})
	require.NoError(t, err)
	assert.Equal(t, 5, pi.CompletionsRead)
	assert.Equal(t, 5, pi.NegativeFeedback)
	require.Len(t, pi.FeedbackIssues, 1)
	g := pi.FeedbackIssues[0]
	assert.Equal(t, "it must cite the refund policy.", g.Reason)
	assert.Equal(t, 5, g.Count)
	require.Len(t, g.Examples, api.IssueExamplesPerGroup)
	assert.Contains(t, g.Examples[0].Input, "Can I return order")
	assert.Equal(t, "Sure, no problem.", g.Examples[0].Output)
	require.Len(t, pi.EvaluationIssues, 1)
	assert.Equal(t, api.IssueGroup{Reason: "does not cite the refund policy", Count: 5, JudgeID: judgeID, JudgeName: "cites policy",
		Examples: pi.EvaluationIssues[0].Examples}, pi.EvaluationIssues[0])
	assert.Equal(t, "fail", pi.EvaluationIssues[0].Examples[0].Verdict)
	assert.Equal(t, []api.JudgeCounts{{JudgeID: judgeID, Name: "cites policy", Evaluations: 5, Failing: 5}}, pi.LinkedJudges)

	ji, err := c.JudgeIssues(ctx, judgeID, api.IssueQuery{})
	require.NoError(t, err)
	assert.Equal(t, 5, ji.Evaluations)
	assert.Equal(t, 5, ji.Failing)
	assert.Zero(t, ji.CalibrationsRead)
	require.Len(t, ji.FailureIssues, 1)
	assert.Equal(t, 5, ji.FailureIssues[0].Count)
	assert.Equal(t, "Sure, no problem.", ji.FailureIssues[0].Examples[0].Output)

	jp, err := c.JudgeOptimizationPreview(ctx, judgeID, api.PreviewQuery{})
	require.NoError(t, err)
	assert.False(t, jp.EnoughSignal)
	assert.Equal(t, []string{"calibrations: 0 calibrated evaluations, a run needs at least 3",
		"something to learn from: nobody said a verdict was wrong (calibration feedback with thumbs_up false)"}, jp.Missing)
}

// TestProposalsRefuse: bad queries are the shared invalid_request error; a key reads its own
// project's prompts and judges only.
func TestProposalsRefuse(t *testing.T) {
	s := newStack(t)
	judgeID := s.seed(t, 3)
	a := s.clientOf(t, s.api.A.Key, s.pid)
	ctx := context.Background()

	tests := []struct {
		name string
		call func() error
		want string
	}{
		{"window too long", func() error {
			_, err := a.PromptIssues(ctx, "support", api.IssueQuery{WindowHours: api.MaxIssueWindowHours + 1})
			return err
		}, `window_hours must be an integer from 1 to 2160, not "2161"`},
		{"unknown type", func() error {
			_, err := a.PromptOptimizationPreview(ctx, "support", api.PreviewQuery{OptimizerType: "dspy_magic"})
			return err
		}, `optimizer_type must be auto, quick_refine, dspy_bootstrap or dspy_gepa, not "dspy_magic"`},
		{"a prompt type for a judge", func() error {
			_, err := a.JudgeOptimizationPreview(ctx, judgeID, api.PreviewQuery{OptimizerType: api.OptimizerGEPA})
			return err
		}, `a judge's template is optimized with quick_refine; "dspy_gepa" is for prompts`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var e *client.Error
			require.True(t, errors.As(tt.call(), &e))
			assert.Equal(t, 400, e.Status)
			assert.Equal(t, api.CodeInvalid, e.Code)
			assert.Equal(t, tt.want, e.Message)
		})
	}

	b := s.clientOf(t, s.api.B.Key, s.api.B.ProjectID)
	_, err := b.PromptIssues(ctx, "support", api.IssueQuery{})
	assert.ErrorIs(t, err, client.ErrNotFound, "project B has no prompt support")
	_, err = b.JudgeOptimizationPreview(ctx, judgeID, api.PreviewQuery{})
	assert.ErrorIs(t, err, client.ErrNotFound, "nor A's judge")
	bOnA := s.clientOf(t, s.api.B.Key, s.pid)
	_, err = bOnA.PromptOptimizationPreview(ctx, "support", api.PreviewQuery{})
	assert.ErrorIs(t, err, client.ErrForbidden, "B's key on A's project")
}

// TestProposalReadsAreBounded: a proposal is one REST call whose DynamoDB requests do not
// grow with the completions (the MCP tools made a REST call per completion).
func TestProposalReadsAreBounded(t *testing.T) {
	counts := map[int]int{}
	for _, n := range []int{3, 12} {
		s := newStack(t)
		s.seed(t, n)
		c := s.clientOf(t, s.api.A.Key, s.pid)
		s.api.DDB.Reset()
		_, err := c.PromptIssues(context.Background(), "support", api.IssueQuery{})
		require.NoError(t, err)
		counts[n] = s.api.DDB.Total()
	}
	assert.Equal(t, counts[3], counts[12], "DynamoDB requests of a prompt's issues, by completions")
}
