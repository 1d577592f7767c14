package client

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/internal/apitest"
	"github.com/plumehq/plume/shared/llm"
	"github.com/plumehq/plume/shared/llm/fakemodel/fakemodeltest"
)

// TestJudgesFeedbackAndOptimization: the judge, feedback and optimization methods against the
// whole API, its optimizer worker calling the fake model server.
func TestJudgesFeedbackAndOptimization(t *testing.T) {
	fake := fakemodeltest.Start(t)
	models := llm.New(llm.Config{Providers: map[string]llm.Endpoint{llm.ProviderOpenAI: {BaseURL: fake.OpenAIBaseURL(), APIKey: "sk-test"}},
		JudgeModel: "openai/gpt-4o-mini"}, llm.Options{BaseDelay: time.Millisecond})
	a := apitest.New(t, apitest.Options{Models: models})
	srv := httptest.NewServer(a.Handler)
	t.Cleanup(srv.Close)
	c, err := New(WithBaseURL(srv.URL), WithAPIKey(a.A.Key), WithProject(a.A.ProjectID), WithEnv(func(string) string { return "" }))
	require.NoError(t, err)
	ctx := context.Background()

	content := "You answer support questions."
	_, err = c.EnsurePromptVersion(ctx, "support", api.EnsureVersionRequest{Content: &content})
	require.NoError(t, err)
	name, tpl := "helpful", "Is it helpful?\n{{input}}\n{{output}}"
	j, err := c.CreateJudge(ctx, api.JudgeRequest{Name: &name, Template: &tpl})
	require.NoError(t, err)
	_, err = c.LinkJudge(ctx, "support", j.ID, true)
	require.NoError(t, err)
	judges, err := c.Judges(ctx)
	require.NoError(t, err)
	require.Len(t, judges, 1)
	assert.Equal(t, []string{"support"}, judges[0].LinkedPrompts)
	one, err := c.Judge(ctx, j.ID)
	require.NoError(t, err)
	assert.Equal(t, judges[0], one)

	var ids []string
	for i := range 5 {
		id := uuid.NewString()
		ids = append(ids, id)
		a.MustDo(t, "POST", "/spans", a.A.Key, []any{apitest.LLMSpan(id, uuid.NewString(), "", "support", "", "question", "answer", time.Now().Add(-time.Minute*time.Duration(i+1)))})
		up := i%2 == 0
		reason := "checked by hand"
		_, err := c.SendFeedback(ctx, "support", id, api.FeedbackRequest{ThumbsUp: &up, Reason: &reason})
		require.NoError(t, err)
	}
	pass := true
	rec, err := c.RecordEvaluations(ctx, j.ID, []api.EvaluationRequest{{SpanID: ids[0], EvaluationResult: &pass, EvaluationReason: "fine"}})
	require.NoError(t, err)
	assert.Equal(t, 1, rec.Count)
	page, err := c.Evaluations(ctx, j.ID, EvaluationQuery{Result: &pass})
	require.NoError(t, err)
	assert.Equal(t, 1, page.Total)
	onSpan, err := c.SpanEvaluations(ctx, ids[0])
	require.NoError(t, err)
	require.Len(t, onSpan, 1)
	assert.Equal(t, j.ID, onSpan[0].JudgeID)
	criteria, err := c.JudgeCriteria(ctx, j.ID)
	require.NoError(t, err)
	assert.Equal(t, j.ID, criteria.JudgeID)
	versions, err := c.JudgeVersions(ctx, j.ID)
	require.NoError(t, err)
	assert.Len(t, versions, 1)
	judgeRuns, err := c.JudgeOptimizationRuns(ctx, j.ID, 10, 0)
	require.NoError(t, err)
	assert.Empty(t, judgeRuns)
	unified, err := c.UnifiedFeedback(ctx, "span", ids[0])
	require.NoError(t, err)
	assert.Equal(t, 2, unified.Summary.Total, "one person's feedback and one evaluation")
	perf, err := c.JudgePerformance(ctx, j.ID, time.Time{}, time.Time{})
	require.NoError(t, err)
	assert.Equal(t, j.ID, perf.JudgeID)
	paused := true
	updated, err := c.UpdateJudge(ctx, j.ID, api.JudgeRequest{Paused: &paused})
	require.NoError(t, err)
	assert.True(t, updated.Paused)
	_, err = c.BackfillJudge(ctx, j.ID, 3)
	assert.ErrorIs(t, err, ErrConflict, "a paused judge is not backfilled")

	run, err := c.StartPromptOptimization(ctx, "support", api.OptimizationRunRequest{OptimizerType: "quick_refine"})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		run, err = c.OptimizationRun(ctx, run.ID)
		return err == nil && run.Status == "succeeded"
	}, time.Minute, 20*time.Millisecond, "run %+v", run)
	runs, err := c.PromptOptimizationRuns(ctx, "support", 10, 0)
	require.NoError(t, err)
	assert.Len(t, runs, 1)
	_, err = c.CancelOptimization(ctx, run.ID)
	assert.ErrorIs(t, err, ErrConflict, "a run that is over")
	preview, err := c.PreviewDeploy(ctx, run.ID)
	require.NoError(t, err)
	deployed, err := c.Deploy(ctx, run.ID, preview.Receipt)
	require.NoError(t, err)
	assert.Equal(t, 2, deployed.Version)
	prod, err := c.PromptVersion(ctx, "support", PromptSelector{Tag: "production"})
	require.NoError(t, err)
	assert.Equal(t, deployed.VersionID, prod.ID)
	_, err = c.Deploy(ctx, run.ID, "rcpt_forged")
	assert.ErrorIs(t, err, ErrConflict)
}

// TestTracingLinksAndPrices: spans in and out, traces and sessions, feedback links and model
// prices against the whole API.
func TestTracingLinksAndPrices(t *testing.T) {
	_, c, _ := served(t)
	ctx := context.Background()
	traceID, spanID, sessionID := uuid.NewString(), uuid.NewString(), uuid.NewString()
	at := float64(time.Now().Add(-time.Minute).UnixMicro()) / 1e6
	stored, err := c.IngestSpans(ctx, []map[string]any{{"id": spanID, "trace_id": traceID, "session_id": sessionID, "name": "chat",
		"kind": "llm", "started_at": at, "ended_at": at + 1, "input_data": "hi", "output_data": "hello",
		"attributes": map[string]any{"provider": "openai", "model": "my-model", "inputTokens": 1000, "outputTokens": 1000}}})
	require.NoError(t, err)
	require.Len(t, stored, 1)
	assert.Equal(t, spanID, stored[0].ID)
	spans, err := c.Spans(ctx, api.SpanQuery{TraceID: traceID})
	require.NoError(t, err)
	assert.Len(t, spans, 1)
	traces, err := c.Traces(ctx, api.TraceQuery{SessionID: sessionID})
	require.NoError(t, err)
	assert.Len(t, traces, 1)
	sessions, err := c.Sessions(ctx, api.SessionQuery{})
	require.NoError(t, err)
	assert.Len(t, sessions, 1)
	named, err := c.PutSessions(ctx, []api.SessionInput{{ID: sessionID, ProjectID: c.Project(), Name: "checkout"}})
	require.NoError(t, err)
	require.Len(t, named, 1)
	require.NotNil(t, named[0].Name)
	assert.Equal(t, "checkout", *named[0].Name)
	tagged, err := c.PutTraces(ctx, []api.TraceInput{{ID: traceID, SessionID: sessionID, Name: "checkout",
		StartedAt: time.UnixMicro(int64(at * 1e6)), Tags: map[string]string{"env": "test"}}})
	require.NoError(t, err)
	require.Len(t, tagged, 1)
	assert.Equal(t, "test", tagged[0].Tags["env"])

	photo := []byte("not really a JPEG")
	up, err := c.UploadAttachment(ctx, spanID, api.AttachmentUploadRequest{Type: "image", Label: "receipt", ContentType: "image/jpeg"}, photo)
	require.NoError(t, err)
	files, err := c.Attachments(ctx, spanID)
	require.NoError(t, err)
	require.Len(t, files.Attachments, 1)
	assert.Equal(t, up.ID, files.Attachments[0].ID)
	assert.Equal(t, int64(len(photo)), files.Attachments[0].Size)

	content := "Prompt"
	_, err = c.EnsurePromptVersion(ctx, "bot", api.EnsureVersionRequest{Content: &content})
	require.NoError(t, err)
	link, err := c.CreateFeedbackLink(ctx, api.LinkRequest{PromptSlug: "bot", LinkType: "prompt_completion"})
	require.NoError(t, err)
	links, err := c.FeedbackLinks(ctx)
	require.NoError(t, err)
	require.Len(t, links.Links, 1)
	revoked, err := c.RevokeFeedbackLink(ctx, link.ID)
	require.NoError(t, err)
	assert.Equal(t, api.LinkRevoked, revoked.Status)
	_, err = c.RevokeFeedbackLink(ctx, uuid.NewString())
	assert.ErrorIs(t, err, ErrNotFound)

	in, out := 1.0, 2.0
	price, err := c.SetModelPrice(ctx, "openai/my-model", api.PutModelPriceRequest{Input: &in, Output: &out})
	require.NoError(t, err)
	assert.Equal(t, "openai/my-model", price.Model)
	prices, err := c.ModelPrices(ctx)
	require.NoError(t, err)
	require.Len(t, prices.Overrides, 1)
	one, err := c.ModelPrice(ctx, "openai/my-model")
	require.NoError(t, err)
	assert.Equal(t, price, one)
	deleted, err := c.DeleteModelPrice(ctx, "openai/my-model")
	require.NoError(t, err)
	assert.True(t, deleted.Deleted)
	prices, err = c.ModelPrices(ctx)
	require.NoError(t, err)
	assert.Empty(t, prices.Overrides)
}

// TestGatewayStatus: the gateway's standing as the API answers it, typed; without a project,
// an error before any request.
func TestGatewayStatus(t *testing.T) {
	a, c, _ := served(t)
	ctx := context.Background()
	st, err := c.GatewayStatus(ctx)
	require.NoError(t, err)
	assert.Nil(t, st.Endpoint)
	assert.Nil(t, st.Usage, "no usage limit is set")
	assert.Nil(t, st.Limits.RequestsPerMinute)
	assert.Equal(t, "off", st.Trace)

	other, err := New(WithBaseURL("http://127.0.0.1:1"), WithAPIKey(a.A.Key), WithEnv(func(string) string { return "" }))
	require.NoError(t, err)
	_, err = other.GatewayStatus(ctx)
	assert.Error(t, err)
}
