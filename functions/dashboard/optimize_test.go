package dashboard_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/client"
	"github.com/plumehq/plume/internal/apitest"
	"github.com/plumehq/plume/shared/asyncinvoke"
	"github.com/plumehq/plume/shared/config"
	"github.com/plumehq/plume/shared/llm"
	"github.com/plumehq/plume/shared/llm/fakemodel/fakemodeltest"
)

// newOptimizeFixture is newFixture with an optimizer: with models, the API's in-process worker
// runs the runs against the fake model server; without, a worker that leaves every run queued
// (to start and cancel runs without a model).
func newOptimizeFixture(t *testing.T, withModels bool, cfg ...func(*config.Config)) *fixture {
	t.Helper()
	var o apitest.Options
	if len(cfg) > 0 {
		o.Config = cfg[0]
	}
	if withModels {
		fake := fakemodeltest.Start(t)
		o.Models = llm.New(llm.Config{Providers: map[string]llm.Endpoint{llm.ProviderOpenAI: {BaseURL: fake.OpenAIBaseURL(), APIKey: "sk-test"}},
			JudgeModel: "openai/gpt-4o-mini"}, llm.Options{BaseDelay: time.Millisecond})
	}
	a := apitest.New(t, o)
	if !withModels {
		a.Optimizations.Serve(func(context.Context, []byte) error { return nil }, asyncinvoke.Config{Retries: -1})
	}
	return serveDashboard(t, a)
}

// restClient is a REST client of tenant's project, as a program would use the API.
func (f *fixture) restClient(t *testing.T, tenant apitest.Tenant) *client.Client {
	t.Helper()
	srv := httptest.NewServer(f.api.Handler)
	t.Cleanup(srv.Close)
	c, err := client.New(client.WithBaseURL(srv.URL), client.WithAPIKey(tenant.Key), client.WithProject(tenant.ProjectID),
		client.WithRetries(0), client.WithoutPromptCache(), client.WithEnv(func(string) string { return "" }))
	require.NoError(t, err)
	return c
}

// seedOptimizable makes prompt slug of tenant's project optimizable, as the optimizer's tests
// do: a version with content, a judge linked to it, and five completions with feedback. It
// returns the judge's id.
func (f *fixture) seedOptimizable(t *testing.T, tenant apitest.Tenant, slug, content string) string {
	t.Helper()
	c, ctx := f.restClient(t, tenant), context.Background()
	versionID := f.api.EnsurePrompt(t, tenant, slug, content)
	name, tpl := "helpful", "Is it helpful?\n{{input}}\n{{output}}"
	j, err := c.CreateJudge(ctx, api.JudgeRequest{Name: &name, Template: &tpl})
	require.NoError(t, err)
	_, err = c.LinkJudge(ctx, slug, j.ID, true)
	require.NoError(t, err)
	for i := range 5 {
		id := uuid.NewString()
		f.api.MustDo(t, "POST", "/spans", tenant.Key, []any{apitest.LLMSpan(id, uuid.NewString(), "", slug, versionID, "question", "answer",
			time.Now().Add(-time.Minute*time.Duration(i+1)))})
		up, reason := i%2 == 0, "checked by hand"
		_, err := c.SendFeedback(ctx, slug, id, api.FeedbackRequest{ThumbsUp: &up, Reason: &reason})
		require.NoError(t, err)
	}
	return j.ID
}

func TestOptimizePages(t *testing.T) {
	f := newOptimizeFixture(t, false)
	a := f.api.A
	judgeID := f.seedOptimizable(t, a, "support", "You answer support questions.")
	f.seedOptimizable(t, f.api.B, "b-secret", "B's private prompt")
	rest := f.restClient(t, a)
	ctx := context.Background()
	runs := func() int {
		list, err := rest.PromptOptimizationRuns(ctx, "support", 100, 0)
		require.NoError(t, err)
		return len(list)
	}
	b := f.browser(t)
	token := b.signIn(t, a.Key)

	p := b.get(t, "/ui/prompts/support/optimize")
	require.Equal(t, http.StatusOK, p.Status, p.Body)
	assertPage(t, p)
	assert.Contains(t, p.Body, `data-testid="opt-no-runs"`, "the empty state")
	assert.Contains(t, p.Body, `<option value="quick_refine" selected>`)
	assert.Contains(t, p.Body, `name="intent" value="`+judgeID+`" checked`, "the linked judge is ticked")

	form := func(change func(url.Values)) url.Values {
		v := url.Values{"csrf": {token}, "strategy": {"quick_refine"}, "intent": {judgeID}, "weight_" + judgeID: {"2"},
			"min_" + judgeID: {"0.25"}, "max_model_calls": {"300"}, "max_cost_usd": {"1.5"}, "seed": {"7"}}
		if change != nil {
			change(v)
		}
		return v
	}
	t.Run("start refused", func(t *testing.T) {
		tests := []struct {
			name   string
			change func(url.Values)
			status int
			want   string
		}{
			{"weight not a number", func(v url.Values) { v.Set("weight_"+judgeID, "heavy") }, http.StatusBadRequest, "must be a number"},
			{"threshold over 1", func(v url.Values) { v.Set("min_"+judgeID, "1.5") }, http.StatusBadRequest, "min_threshold must be between 0 and 1"},
			{"unknown strategy", func(v url.Values) { v.Set("strategy", "magic") }, http.StatusBadRequest, "optimizer_type must be"},
			{"budget too large", func(v url.Values) { v.Set("max_model_calls", "99999999") }, http.StatusBadRequest, "max_model_calls must be between"},
			{"cost not a number", func(v url.Values) { v.Set("max_cost_usd", "lots") }, http.StatusBadRequest, "US dollars"},
			{"another project's judge", func(v url.Values) { v["intent"] = []string{"b-judge-" + uuid.NewString()} }, http.StatusBadRequest, "judge"},
			{"seed not a number", func(v url.Values) { v.Set("seed", "seven") }, http.StatusBadRequest, "seed must be a whole number"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				v := form(tt.change)
				p := b.post(t, "/ui/prompts/support/optimize", v)
				assert.Equal(t, tt.status, p.Status, p.Body)
				assertPage(t, p)
				msg := regexpFind(t, `(?s)data-testid="opt-form-error">(.*?)</p>`, p.Body)
				assert.Contains(t, msg, tt.want)
				assert.Contains(t, p.Body, `value="`+url.QueryEscape(v.Get("max_model_calls"))+`"`, "the input kept")
				if tt.name != "unknown strategy" {
					assert.Contains(t, p.Body, `<option value="`+v.Get("strategy")+`" selected>`)
				}
				assert.Zero(t, runs(), "nothing started")
			})
		}
	})
	t.Run("start on another project's prompt", func(t *testing.T) {
		p := b.post(t, "/ui/prompts/b-secret/optimize", form(nil))
		assert.Equal(t, http.StatusNotFound, p.Status, p.Body)
		assert.NotContains(t, p.Body, "private prompt")
	})

	var runID string
	t.Run("start", func(t *testing.T) {
		p := b.post(t, "/ui/prompts/support/optimize", form(nil))
		require.Equal(t, http.StatusSeeOther, p.Status, p.Body)
		loc := p.Header.Get("Location")
		require.True(t, strings.HasPrefix(loc, "/ui/optimization-runs/"), loc)
		runID = strings.TrimPrefix(loc, "/ui/optimization-runs/")
		run, err := rest.OptimizationRun(ctx, runID)
		require.NoError(t, err)
		assert.Equal(t, "quick_refine", run.Requested)
		require.Len(t, run.Config.Intents, 1)
		assert.Equal(t, api.OptimizationIntent{JudgeID: judgeID, Weight: 2, MinThreshold: ptr(0.25)}, run.Config.Intents[0])
		assert.Equal(t, &api.OptimizationBudget{MaxModelCalls: 300, MaxCostUSD: 1.5}, run.Config.Budget)
		assert.Equal(t, int64(7), *run.Config.Seed)
	})
	require.NotEmpty(t, runID)
	t.Run("runs list", func(t *testing.T) {
		p := b.get(t, "/ui/prompts/support/optimize")
		require.Equal(t, http.StatusOK, p.Status, p.Body)
		assertPage(t, p)
		assert.Equal(t, 1, strings.Count(p.Body, `data-testid="opt-run-row"`))
		assert.Contains(t, p.Body, `data-run-id="`+runID+`"`)
		assert.Contains(t, p.Body, `href="/ui/optimization-runs/`+runID+`"`)
		assert.Contains(t, p.Body, `data-testid="opt-run-status">queued<`)
		assert.NotContains(t, p.Body, `data-testid="opt-no-runs"`)
	})
	t.Run("run page", func(t *testing.T) {
		p := b.get(t, "/ui/optimization-runs/"+runID)
		require.Equal(t, http.StatusOK, p.Status, p.Body)
		assertPage(t, p)
		assert.Contains(t, p.Body, `data-testid="run-status">queued<`)
		assert.Contains(t, p.Body, `data-over="false"`)
		assert.Contains(t, p.Body, `data-testid="run-refresh"`, "a refresh link without the script")
		assert.Contains(t, p.Body, `data-testid="run-cancel"`)
		assert.NotContains(t, p.Body, `data-testid="run-review-deploy"`, "only a run that succeeded deploys")
		assert.Contains(t, p.Body, `data-testid="run-calls">0 of 300`)

		req, err := http.NewRequest("GET", f.srv.URL+"/ui/optimization-runs/"+runID, nil)
		require.NoError(t, err)
		req.Header.Set("X-Plume-Fragment", "1")
		frag := b.do(t, req)
		require.Equal(t, http.StatusOK, frag.Status)
		assert.Contains(t, frag.Body, `data-run-state="queued"`)
		assert.NotContains(t, frag.Body, "<main", "the live part only")
		assert.Contains(t, frag.Body, `name="csrf" value="`+token+`"`, "its forms work")
	})
	t.Run("another project's run", func(t *testing.T) {
		bRun, err := f.restClient(t, f.api.B).StartPromptOptimization(ctx, "b-secret", api.OptimizationRunRequest{OptimizerType: "quick_refine"})
		require.NoError(t, err)
		for _, path := range []string{"/ui/optimization-runs/" + bRun.ID, "/ui/prompts/b-secret/optimize", "/ui/optimization-runs/" + strings.Repeat("x", 200)} {
			p := b.get(t, path)
			assert.Equal(t, http.StatusNotFound, p.Status, path)
			assertPage(t, p)
			assert.NotContains(t, p.Body, "private prompt")
		}
		for _, action := range []string{"cancel", "review-deploy", "deploy"} {
			p := b.post(t, "/ui/optimization-runs/"+bRun.ID+"/"+action, url.Values{"csrf": {token}, "confirm": {"yes"}, "receipt": {"rcpt_x"}})
			assert.Equal(t, http.StatusNotFound, p.Status, action)
		}
		run, err := f.restClient(t, f.api.B).OptimizationRun(ctx, bRun.ID)
		require.NoError(t, err)
		assert.Equal(t, "queued", run.Status, "B's run untouched")
	})
	t.Run("cancel", func(t *testing.T) {
		p := b.post(t, "/ui/optimization-runs/"+runID+"/cancel", url.Values{"csrf": {token}})
		require.Equal(t, http.StatusOK, p.Status, p.Body)
		assertPage(t, p)
		assert.Contains(t, p.Body, `data-testid="run-cancel-confirm"`, "asked first")
		run, err := rest.OptimizationRun(ctx, runID)
		require.NoError(t, err)
		assert.Equal(t, "queued", run.Status)

		p = b.post(t, "/ui/optimization-runs/"+runID+"/cancel", url.Values{"csrf": {token}, "confirm": {"yes"}})
		require.Equal(t, http.StatusSeeOther, p.Status, p.Body)
		assert.Equal(t, "/ui/optimization-runs/"+runID, p.Header.Get("Location"))
		run, err = rest.OptimizationRun(ctx, runID)
		require.NoError(t, err)
		assert.Equal(t, "cancelled", run.Status)

		p = b.get(t, "/ui/optimization-runs/"+runID)
		assert.Contains(t, p.Body, `data-over="true"`)
		assert.NotContains(t, p.Body, `data-testid="run-refresh"`)
		assert.NotContains(t, p.Body, `data-testid="run-cancel"`)

		p = b.post(t, "/ui/optimization-runs/"+runID+"/cancel", url.Values{"csrf": {token}, "confirm": {"yes"}})
		assert.Equal(t, http.StatusConflict, p.Status, "a run that is over")
		p = b.post(t, "/ui/optimization-runs/"+runID+"/review-deploy", url.Values{"csrf": {token}})
		assert.Equal(t, http.StatusConflict, p.Status, "a cancelled run is not deployed")
		assert.Contains(t, p.Body, "only a run that succeeded can be deployed")
	})
}

// TestOptimizeDeploy: a run started through the form succeeds (the worker calling the fake
// model server); its page shows the candidate and scores; the deploy is reviewed, a tampered
// or stale receipt is refused with a new review and nothing changed, and a good one deploys.
func TestOptimizeDeploy(t *testing.T) {
	f := newOptimizeFixture(t, true)
	a := f.api.A
	f.seedOptimizable(t, a, "support", "You answer support questions.")
	rest := f.restClient(t, a)
	ctx := context.Background()
	b := f.browser(t)
	token := b.signIn(t, a.Key)

	p := b.post(t, "/ui/prompts/support/optimize", url.Values{"csrf": {token}, "strategy": {"quick_refine"}, "seed": {"7"}})
	require.Equal(t, http.StatusSeeOther, p.Status, p.Body)
	runURL := p.Header.Get("Location")
	runID := strings.TrimPrefix(runURL, "/ui/optimization-runs/")
	var run api.OptimizationRun
	require.Eventually(t, func() bool {
		var err error
		run, err = rest.OptimizationRun(ctx, runID)
		return err == nil && run.Status == "succeeded"
	}, 2*time.Minute, 50*time.Millisecond, "run %+v", run)
	require.NotNil(t, run.Candidate)
	require.NotNil(t, run.Metrics)

	p = b.get(t, runURL)
	require.Equal(t, http.StatusOK, p.Status, p.Body)
	assertPage(t, p)
	assert.Contains(t, p.Body, `data-testid="run-status">succeeded<`)
	assert.Contains(t, p.Body, `data-over="true"`)
	assert.Contains(t, p.Body, `data-testid="run-recommendation">`+run.Metrics.Recommendation+`<`)
	assert.Contains(t, p.Body, `data-testid="run-diff"`)
	assert.Equal(t, 1, strings.Count(p.Body, `data-testid="run-intent"`), "the linked judge, by default")
	assert.Contains(t, p.Body, "helpful")
	assert.Contains(t, p.Body, `data-testid="run-review-deploy"`)

	production := func() (api.PromptVersion, bool) {
		v, err := rest.PromptVersion(ctx, "support", client.PromptSelector{Tag: "production"})
		if errors.Is(err, client.ErrNotFound) {
			return v, false
		}
		require.NoError(t, err)
		return v, true
	}
	review := func() (page, string) {
		t.Helper()
		p := b.post(t, runURL+"/review-deploy", url.Values{"csrf": {token}})
		require.Equal(t, http.StatusOK, p.Status, p.Body)
		assertPage(t, p)
		return p, regexpFind(t, `name="receipt" value="([^"]+)"`, p.Body)
	}
	p, receipt := review()
	assert.Contains(t, p.Body, "moves from no version to a new version")
	assert.Contains(t, p.Body, `data-testid="deploy-diff"`)
	_, pinned := production()
	assert.False(t, pinned, "a review changes nothing")

	t.Run("a tampered receipt is refused", func(t *testing.T) {
		p := b.post(t, runURL+"/deploy", url.Values{"csrf": {token}, "receipt": {receipt + "x"}})
		assert.Equal(t, http.StatusConflict, p.Status, p.Body)
		assertPage(t, p)
		assert.Contains(t, regexpFind(t, `(?s)data-testid="deploy-stale">(.*?)</p>`, p.Body), "not one of this run&#39;s")
		assert.Contains(t, p.Body, `name="receipt" value="rcpt_`, "a new review")
		_, pinned := production()
		assert.False(t, pinned)
	})
	t.Run("no receipt", func(t *testing.T) {
		p := b.post(t, runURL+"/deploy", url.Values{"csrf": {token}})
		assert.Equal(t, http.StatusBadRequest, p.Status, p.Body)
		assert.Contains(t, p.Body, `data-testid="deploy-stale"`)
	})
	t.Run("a receipt from before production moved", func(t *testing.T) {
		_, err := rest.PinTag(ctx, "support", "production", 1)
		require.NoError(t, err)
		p := b.post(t, runURL+"/deploy", url.Values{"csrf": {token}, "receipt": {receipt}})
		assert.Equal(t, http.StatusConflict, p.Status, p.Body)
		assert.Contains(t, p.Body, "production serves version 1")
		assert.Contains(t, p.Body, "moves from version 1 to a new version", "the new review")
		v, _ := production()
		assert.Equal(t, 1, v.Version)
	})
	t.Run("deploy", func(t *testing.T) {
		_, receipt := review()
		p := b.post(t, runURL+"/deploy", url.Values{"csrf": {token}, "receipt": {receipt}})
		require.Equal(t, http.StatusSeeOther, p.Status, p.Body)
		assert.Equal(t, runURL+"?deployed=2", p.Header.Get("Location"))
		v, _ := production()
		assert.Equal(t, 2, v.Version)
		assert.Equal(t, run.Candidate.Rendered, v.Content)
		p = b.get(t, p.Header.Get("Location"))
		require.Equal(t, http.StatusOK, p.Status)
		assert.Contains(t, p.Body, "production now serves version 2")
	})
}

func ptr[T any](v T) *T { return &v }

// TestOptimizeRunFromDataset: the page of a run whose examples came from a dataset version
// names the version and how many of its rows it read.
func TestOptimizeRunFromDataset(t *testing.T) {
	f := newOptimizeFixture(t, true)
	a := f.api.A
	f.seedOptimizable(t, a, "support", "You answer support questions.")
	f.api.MustDo(t, "POST", "/v1/datasets", a.Key, map[string]any{"name": "returns"})
	var rows []any
	for i := range 6 {
		rows = append(rows, map[string]any{"question": fmt.Sprintf("Can I return item %d?", i), "answer": "Yes."})
	}
	f.api.MustDo(t, "POST", "/v1/datasets/returns/data", a.Key, map[string]any{"data": rows})
	rest := f.restClient(t, a)
	ctx := context.Background()
	run, err := rest.StartPromptOptimization(ctx, "support", api.OptimizationRunRequest{OptimizerType: "quick_refine", Config: api.OptimizationConfig{
		Seed: ptr(int64(7)), Dataset: &api.OptimizationDataset{Name: "returns", InputColumns: []string{"question"}, ExpectedOutputColumn: "answer"}}})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		run, err = rest.OptimizationRun(ctx, run.ID)
		return err == nil && run.Status == "succeeded"
	}, 2*time.Minute, 50*time.Millisecond, "run %+v", run)

	b := f.browser(t)
	b.signIn(t, a.Key)
	p := b.get(t, "/ui/optimization-runs/"+run.ID)
	require.Equal(t, http.StatusOK, p.Status, p.Body)
	assertPage(t, p)
	assert.Contains(t, p.Body, `data-testid="run-dataset">The examples are 6 of the 6 rows of dataset <strong>returns</strong>, version 1.</p>`)
}
