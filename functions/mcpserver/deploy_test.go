package mcpserver_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/client"
	"github.com/plumehq/plume/functions/mcpserver"
	"github.com/plumehq/plume/internal/apitest"
	"github.com/plumehq/plume/shared/llm"
	"github.com/plumehq/plume/shared/llm/fakemodel/fakemodeltest"
)

// TestDeployReceiptFlow: a quick_refine run started through the tool (the optimizer worker
// calling the fake model server) succeeds; its preview changes nothing and gives a receipt;
// a deploy without confirm, with a tampered receipt, with an expired one (the API's clock
// moved past the receipt's 10 minutes) or after production moved is refused, changes nothing
// and says to preview again; a good receipt deploys once, and deploying it again makes no
// second version.
func TestDeployReceiptFlow(t *testing.T) {
	fake := fakemodeltest.Start(t)
	models := llm.New(llm.Config{Providers: map[string]llm.Endpoint{llm.ProviderOpenAI: {BaseURL: fake.OpenAIBaseURL(), APIKey: "sk-test"}},
		JudgeModel: "openai/gpt-4o-mini"}, llm.Options{BaseDelay: time.Millisecond})
	var ahead atomic.Int64 // how far the API's clock is ahead of the wall clock
	s := newToolStack(t, apitest.Options{Models: models, Clock: func() time.Time { return time.Now().Add(time.Duration(ahead.Load())) }})
	c := restClientFor(t, s.api, s.api.A)
	ctx := context.Background()

	versionID := s.api.EnsurePrompt(t, s.api.A, "support", "You answer support questions.")
	name, tpl := "helpful", "Is it helpful?\n{{input}}\n{{output}}"
	j, err := c.CreateJudge(ctx, api.JudgeRequest{Name: &name, Template: &tpl})
	require.NoError(t, err)
	_, err = c.LinkJudge(ctx, "support", j.ID, true)
	require.NoError(t, err)
	for i := range 5 {
		id := uuid.NewString()
		s.api.MustDo(t, "POST", "/spans", s.api.A.Key, []any{apitest.LLMSpan(id, uuid.NewString(), "", "support", versionID, "question", "answer", time.Now().Add(-time.Minute*time.Duration(i+1)))})
		up, reason := i%2 == 0, "checked by hand"
		_, err := c.SendFeedback(ctx, "support", id, api.FeedbackRequest{ThumbsUp: &up, Reason: &reason})
		require.NoError(t, err)
	}
	cs, err := s.connect(t, s.api.A.Key)
	require.NoError(t, err)

	var run api.OptimizationRun
	res := call(t, cs, "start-prompt-optimization", map[string]any{"prompt_slug": "support", "optimizer_type": "quick_refine", "seed": 7, "confirm": true}, &run)
	require.False(t, res.IsError, text(res))
	require.Eventually(t, func() bool {
		run, err = c.OptimizationRun(ctx, run.ID)
		return err == nil && run.Status == "succeeded"
	}, time.Minute, 20*time.Millisecond, "run %+v", run)

	versions := func() int {
		vs, err := c.PromptVersions(ctx, "support")
		require.NoError(t, err)
		return len(vs)
	}
	production := func() (int, bool) {
		v, err := c.PromptVersion(ctx, "support", client.PromptSelector{Tag: "production"})
		if errors.Is(err, client.ErrNotFound) {
			return 0, false
		}
		require.NoError(t, err)
		return v.Version, true
	}
	preview := func() mcpserver.PreviewDeployOutput {
		t.Helper()
		var p mcpserver.PreviewDeployOutput
		res := call(t, cs, "preview-optimization-deploy", map[string]any{"run_id": run.ID}, &p)
		require.False(t, res.IsError, text(res))
		return p
	}
	deploy := func(receipt string, confirm bool) (api.DeployResult, string, bool) {
		t.Helper()
		var d api.DeployResult
		args := map[string]any{"run_id": run.ID, "receipt": receipt}
		if confirm {
			args["confirm"] = true
		}
		res := call(t, cs, "deploy-optimization-run", args, &d)
		return d, text(res), res.IsError
	}

	p := preview()
	assert.NotEmpty(t, p.Receipt)
	assert.WithinDuration(t, time.Now().Add(10*time.Minute), p.ExpiresAt, time.Minute)
	assert.Nil(t, p.Summary.ProductionVersion, "production is not pinned yet")
	assert.Equal(t, run.Candidate.Rendered, p.Summary.CandidateContent)
	assert.Contains(t, p.Changes, "pins production of prompt support from no version")
	assert.Equal(t, "deploy-optimization-run", p.Next.Tool)
	assert.Equal(t, map[string]any{"run_id": run.ID, "receipt": p.Receipt, "confirm": true}, p.Next.Arguments)
	assert.Equal(t, 1, versions(), "a preview changes nothing")

	_, msg, refused := deploy(p.Receipt, false)
	require.True(t, refused, msg)
	assert.Contains(t, msg, "not confirmed, nothing changed: would deploy optimization run "+run.ID)
	assert.Equal(t, 1, versions())
	_, pinned := production()
	assert.False(t, pinned)

	t.Run("a tampered receipt is refused", func(t *testing.T) {
		_, msg, refused := deploy(p.Receipt+"x", true)
		require.True(t, refused, msg)
		assert.Contains(t, msg, "not one of this run's")
		assert.Contains(t, msg, "call preview-optimization-deploy again")
		assert.Equal(t, 1, versions())
	})
	t.Run("an expired receipt is refused", func(t *testing.T) {
		ahead.Store(int64(11 * time.Minute))
		_, msg, refused := deploy(p.Receipt, true)
		require.True(t, refused, msg)
		assert.Contains(t, msg, "the receipt expired")
		assert.Contains(t, msg, "call preview-optimization-deploy again")
		assert.Equal(t, 1, versions())
	})
	t.Run("a receipt from before production moved is refused", func(t *testing.T) {
		stale := preview()
		_, err := c.PinTag(ctx, "support", "production", 1) // someone pins production meanwhile
		require.NoError(t, err)
		_, msg, refused := deploy(stale.Receipt, true)
		require.True(t, refused, msg)
		assert.Contains(t, msg, "production serves version 1, not the version 0 it served at the preview")
		assert.Contains(t, msg, "call preview-optimization-deploy again")
		assert.Equal(t, 1, versions())
		v, _ := production()
		assert.Equal(t, 1, v)
	})
	t.Run("a good receipt deploys once", func(t *testing.T) {
		good := preview()
		require.NotNil(t, good.Summary.ProductionVersion)
		assert.Equal(t, 1, *good.Summary.ProductionVersion)
		assert.Contains(t, good.Changes, "from version 1")
		d, msg, refused := deploy(good.Receipt, true)
		require.False(t, refused, msg)
		assert.Equal(t, 2, d.Version)
		require.NotNil(t, d.PreviousVersion)
		assert.Equal(t, 1, *d.PreviousVersion)
		v, _ := production()
		assert.Equal(t, 2, v)
		served, err := c.PromptVersion(ctx, "support", client.PromptSelector{Tag: "production"})
		require.NoError(t, err)
		assert.Equal(t, run.Candidate.Rendered, served.Content)

		again, msg, refused := deploy(good.Receipt, true)
		require.False(t, refused, msg)
		assert.Equal(t, d.VersionID, again.VersionID, "deploying twice makes one version")
		assert.Equal(t, 2, versions())
	})
	t.Run("a run that is over cannot be cancelled", func(t *testing.T) {
		res := call(t, cs, "cancel-optimization-run", map[string]any{"run_id": run.ID, "confirm": true}, nil)
		require.True(t, res.IsError)
		assert.Contains(t, text(res), "conflict")
	})
}

// TestPreviewNeedsASucceededRun: a run that has not succeeded has nothing to deploy.
func TestPreviewNeedsASucceededRun(t *testing.T) {
	s := newToolStack(t, apitest.Options{})
	holdRuns(s.api)
	c := restClientFor(t, s.api, s.api.A)
	seedWriteFixture(t, s.api, c)
	run, err := c.StartPromptOptimization(context.Background(), "support-bot", api.OptimizationRunRequest{})
	require.NoError(t, err)
	cs, err := s.connect(t, s.api.A.Key)
	require.NoError(t, err)

	res := call(t, cs, "preview-optimization-deploy", map[string]any{"run_id": run.ID}, nil)
	require.True(t, res.IsError)
	assert.Contains(t, text(res), "is queued: only a run that succeeded can be deployed")
	res = call(t, cs, "deploy-optimization-run", map[string]any{"run_id": run.ID, "receipt": "rcpt_x"}, nil)
	require.True(t, res.IsError)
	assert.Contains(t, text(res), "is queued: only a run that succeeded can be deployed")
}
