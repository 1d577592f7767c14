package dashboard_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/client"
	"github.com/plumehq/plume/internal/apitest"
	"github.com/plumehq/plume/internal/browsertest"
	"github.com/plumehq/plume/shared/llm"
	"github.com/plumehq/plume/shared/llm/fakemodel"
)

// gatedModels is the fake model server behind a gate: no model answers until open is called,
// so that a run stays running while its page is watched.
type gatedModels struct {
	URL  string
	gate chan struct{}
	once sync.Once
}

func startGatedModels(t *testing.T) *gatedModels {
	t.Helper()
	g := &gatedModels{gate: make(chan struct{})}
	fake := fakemodel.New()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-g.gate:
			fake.ServeHTTP(w, r)
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(g.open) // before the server closes (cleanups run last first)
	g.URL = srv.URL
	return g
}

func (g *gatedModels) open() { g.once.Do(func() { close(g.gate) }) }

// TestOptimizeInBrowser drives an optimization in headless Chromium: sign in on the prompt's
// optimize page, start a quick_refine run with the form, watch its page turn from running to
// succeeded by itself (the script's refresh, no reload), review the deploy and deploy; the
// prompt's production tag then serves the candidate, as the REST API reads it. The prompt's
// text carries markup, which stays text: no dialog opens.
func TestOptimizeInBrowser(t *testing.T) {
	models := startGatedModels(t)
	a := apitest.New(t, apitest.Options{Models: llm.New(llm.Config{
		Providers:  map[string]llm.Endpoint{llm.ProviderOpenAI: {BaseURL: models.URL + "/v1", APIKey: "sk-test"}},
		JudgeModel: "openai/gpt-4o-mini"}, llm.Options{BaseDelay: time.Millisecond})})
	f := serveDashboard(t, a)
	content := "You answer support questions. " + xssScript + " " + xssImg + " " + xssLink
	f.seedOptimizable(t, a.A, "xss-opt", content)
	rest := f.restClient(t, a.A)

	ctx := browsertest.Start(t, 360, 3*time.Minute)
	dialogs := browsertest.CountDialogs(ctx)
	base := f.srv.URL

	// Sign in from the optimize page, and start a run with the form.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(base+"/ui/prompts/xss-opt/optimize"),
		chromedp.WaitVisible(chromedp.CSS(`#api_key`)),
		chromedp.SendKeys(chromedp.CSS(`#api_key`), a.A.Key),
		chromedp.Click(chromedp.CSS(`[data-testid="sign-in"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="opt-start-form"]`)),
	))
	assert.Equal(t, "Optimize xss-opt", browsertest.Text(t, ctx, "h1"))
	assert.NotEmpty(t, browsertest.Text(t, ctx, `[data-testid="opt-no-runs"]`))
	require.NoError(t, chromedp.Do(ctx,
		chromedp.SetValue(chromedp.CSS(`[data-testid="opt-strategy"]`), "quick_refine"),
		chromedp.SendKeys(chromedp.CSS(`#opt-seed`), "7"),
		chromedp.Click(chromedp.CSS(`[data-testid="opt-start"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="run-status"]`)),
	))
	loc := browsertest.Value(t, ctx, chromedp.Location())
	require.True(t, strings.HasPrefix(loc, base+"/ui/optimization-runs/"), loc)
	runID := strings.TrimPrefix(loc, base+"/ui/optimization-runs/")
	assert.NotEqual(t, "succeeded", browsertest.Text(t, ctx, `[data-testid="run-status"]`), "the models are held")
	assert.True(t, browsertest.Value(t, ctx, chromedp.Evaluate[bool](`!!document.querySelector('[data-testid="run-refresh"]')`)),
		"a refresh link while the run is not over")

	// The models answer: the page shows the run succeeded without being reloaded.
	require.True(t, browsertest.Value(t, ctx, chromedp.Evaluate[bool](`window.sameDocument = true`)))
	models.open()
	require.NoError(t, chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`[data-run-state="succeeded"] [data-testid="run-review-deploy"]`))))
	assert.True(t, browsertest.Value(t, ctx, chromedp.Evaluate[bool](`window.sameDocument === true`)), "refreshed in place")
	assert.Equal(t, "succeeded", browsertest.Text(t, ctx, `[data-testid="run-status"]`))
	assert.Equal(t, "true", browsertest.Value(t, ctx, chromedp.Evaluate[string](`document.querySelector('[data-run-live]').dataset.over`)),
		"the polling stopped")
	assert.NotEmpty(t, browsertest.Text(t, ctx, `[data-testid="run-recommendation"]`))
	assert.Contains(t, browsertest.Text(t, ctx, `[data-testid="run-diff"]`), xssScript, "the baseline's markup as text")

	// Review the deploy at a desktop width, and deploy.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.EmulateViewport(1280, 900),
		chromedp.Click(chromedp.CSS(`[data-testid="run-review-deploy"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="deploy-confirm"]`)),
	))
	assert.Contains(t, browsertest.Text(t, ctx, `[data-testid="deploy-change"]`), "from no version to a new version")
	assert.Contains(t, browsertest.Text(t, ctx, `[data-testid="deploy-diff"]`), xssImg)
	assertNoInjected(t, ctx, "the prompt's text")
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`[data-testid="deploy-confirm"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="run-deployed"]`)),
	))
	assert.Contains(t, browsertest.Text(t, ctx, `[data-testid="run-deployed"]`), "production now serves version 2")

	run, err := rest.OptimizationRun(context.Background(), runID)
	require.NoError(t, err)
	require.NotNil(t, run.Candidate)
	served, err := rest.PromptVersion(context.Background(), "xss-opt", client.PromptSelector{Tag: "production"})
	require.NoError(t, err)
	assert.Equal(t, 2, served.Version)
	assert.Equal(t, run.Candidate.Rendered, served.Content, "production serves the candidate")
	assert.Zero(t, dialogs.Load(), "a dialog opened: the prompt's text ran as script")
}
