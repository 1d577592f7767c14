package dashboard_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/internal/apitest"
	"github.com/plumehq/plume/shared/llm"
	"github.com/plumehq/plume/shared/llm/fakemodel"
	"github.com/plumehq/plume/shared/llm/fakemodel/fakemodeltest"
	"github.com/plumehq/plume/shared/optimize"
)

// TestOptimizeRunsPaging: the optimize page lists runsPerPage (50) runs a page, with links to
// the older and newer pages; a bad offset is refused.
func TestOptimizeRunsPaging(t *testing.T) {
	f := newOptimizeFixture(t, false)
	a := f.api.A
	f.seedOptimizable(t, a, "support", "You answer support questions.")
	rest := f.restClient(t, a)
	ctx := context.Background()
	var oldest string
	for i := range 51 {
		run, err := rest.StartPromptOptimization(ctx, "support", api.OptimizationRunRequest{OptimizerType: "quick_refine"})
		require.NoError(t, err)
		if i == 0 {
			oldest = run.ID
		}
	}
	b := f.browser(t)
	b.signIn(t, a.Key)

	p := b.get(t, "/ui/prompts/support/optimize")
	require.Equal(t, http.StatusOK, p.Status, p.Body)
	assertPage(t, p)
	assert.Equal(t, 50, strings.Count(p.Body, `data-testid="opt-run-row"`))
	assert.NotContains(t, p.Body, `data-run-id="`+oldest+`"`)
	assert.NotContains(t, p.Body, `data-testid="opt-runs-prev"`)
	next := regexpFind(t, `href="([^"]+)" rel="next" data-testid="opt-runs-next"`, p.Body)
	assert.Equal(t, "/ui/prompts/support/optimize?offset=50", next)

	p = b.get(t, next)
	require.Equal(t, http.StatusOK, p.Status, p.Body)
	assertPage(t, p)
	assert.Equal(t, 1, strings.Count(p.Body, `data-testid="opt-run-row"`))
	assert.Contains(t, p.Body, `data-run-id="`+oldest+`"`)
	assert.NotContains(t, p.Body, `data-testid="opt-runs-next"`)
	assert.Contains(t, p.Body, `href="/ui/prompts/support/optimize" rel="prev" data-testid="opt-runs-prev"`)

	p = b.get(t, "/ui/prompts/support/optimize?offset=500")
	require.Equal(t, http.StatusOK, p.Status, p.Body)
	assert.Contains(t, p.Body, `data-testid="opt-no-more-runs"`, "past the last run")
	assert.NotContains(t, p.Body, `data-testid="opt-no-runs"`)

	for _, bad := range []string{"-1", "ten", "99999999"} {
		p := b.get(t, "/ui/prompts/support/optimize?offset="+bad)
		assert.Equal(t, http.StatusBadRequest, p.Status, bad)
		assertPage(t, p)
	}
}

// TestRunRegressedSpans: the regressed examples of a run that are spans of the project link to
// the span's page (its trace found in one batch); others are shown unlinked. Another
// project's run is not found.
func TestRunRegressedSpans(t *testing.T) {
	f := newOptimizeFixture(t, false)
	a := f.api.A
	f.seedOptimizable(t, a, "support", "You answer support questions.")
	f.seedOptimizable(t, f.api.B, "b-secret", "B's private prompt")
	ctx := context.Background()
	spanID, traceID := uuid.NewString(), uuid.NewString()
	f.api.MustDo(t, "POST", "/spans", a.Key, []any{apitest.LLMSpan(spanID, traceID, "", "support", "", "q", "a", time.Now())})
	bSpan := uuid.NewString()
	f.api.MustDo(t, "POST", "/spans", f.api.B.Key, []any{apitest.LLMSpan(bSpan, uuid.NewString(), "", "b-secret", "", "q", "a", time.Now())})

	// A run that finished with regressed examples, written as the worker writes it.
	regressed := func(tenant apitest.Tenant, slug string, ids ...string) string {
		run, err := f.restClient(t, tenant).StartPromptOptimization(ctx, slug, api.OptimizationRunRequest{OptimizerType: "quick_refine"})
		require.NoError(t, err)
		store := f.api.Env.Optimizations()
		r, err := store.Run(ctx, tenant.ProjectID, run.ID)
		require.NoError(t, err)
		r.Status = optimize.StatusFailed
		r.Report = &optimize.Report{HoldoutIDs: ids, Regressed: ids, Recommendation: optimize.RecommendNoImprovement, Reason: "worse"}
		_, err = store.UpdateRun(ctx, r)
		require.NoError(t, err)
		return run.ID
	}
	runID := regressed(a, "support", spanID, "not-a-span", bSpan)
	b := f.browser(t)
	b.signIn(t, a.Key)

	p := b.get(t, "/ui/optimization-runs/"+runID)
	require.Equal(t, http.StatusOK, p.Status, p.Body)
	assertPage(t, p)
	list := regexpFind(t, `(?s)data-testid="run-regressed">(.*?)</ul>`, p.Body)
	assert.Equal(t, 1, strings.Count(list, `data-testid="run-regressed-link"`))
	assert.Contains(t, list, `href="/ui/traces/`+traceID+`/spans/`+spanID+`"`)
	assert.Contains(t, list, `<li><code>not-a-span</code></li>`)
	assert.Contains(t, list, `<li><code>`+bSpan+`</code></li>`, "another project's span is not linked")

	bRun := regressed(f.api.B, "b-secret", bSpan)
	p = b.get(t, "/ui/optimization-runs/"+bRun)
	assert.Equal(t, http.StatusNotFound, p.Status)
	assert.NotContains(t, p.Body, bSpan)
}

// Judge templates of TestJudgeOptimizeDeploy, as the optimizer's tests script them: the
// strict template fails every answer, people want "Sure, no problem." passed and "I don't
// know." failed; the reflection rewrites the strict template into the lenient one, which
// agrees with them.
const (
	strictJudge  = "Does the answer help?\n{{input}}\n{{output}}"
	lenientJudge = "Be lenient: pass any answer that tries to help.\n{{input}}\n{{output}}"
)

func judgeModelRules() []fakemodel.Rule {
	verdict := func(pass bool) fakemodel.Reply {
		return fakemodel.Reply{JSON: json.RawMessage(fmt.Sprintf(`{"reason":"as instructed","confidence":0.9,"meets_criteria":%t}`, pass))}
	}
	user := func(c fakemodel.Call, s string) bool { return strings.Contains(c.LastUser(), s) }
	lenient, _ := json.Marshal(lenientJudge)
	return []fakemodel.Rule{
		{Match: func(c fakemodel.Call) bool {
			return strings.Contains(c.System, "You improve prompts") && user(c, "Does the answer help?")
		}, Reply: fakemodel.Reply{JSON: json.RawMessage(`{"prompt":` + string(lenient) + `}`)}},
		{Match: func(c fakemodel.Call) bool { return user(c, "Be lenient") && user(c, "I don't know") }, Reply: verdict(false)},
		{Match: func(c fakemodel.Call) bool { return user(c, "Be lenient") }, Reply: verdict(true)},
		{Match: fakemodel.SystemContains("evaluation judge"), Reply: verdict(false)},
	}
}

// newJudgeOptimizeFixture is newOptimizeFixture with models, the fake model server answering
// as judgeModelRules says.
func newJudgeOptimizeFixture(t *testing.T) *fixture {
	t.Helper()
	fake := fakemodeltest.Start(t, fakemodel.WithRules(judgeModelRules()...))
	models := llm.New(llm.Config{Providers: map[string]llm.Endpoint{llm.ProviderOpenAI: {BaseURL: fake.OpenAIBaseURL(), APIKey: "sk-test"}},
		JudgeModel: "openai/gpt-4o-mini"}, llm.Options{BaseDelay: time.Millisecond})
	return serveDashboard(t, apitest.New(t, apitest.Options{Models: models}))
}

// calibratedJudge makes a judge with template and 12 evaluations of it that fail every
// answer, each calibrated: people agree on the "I don't know." ones only.
func (f *fixture) calibratedJudge(t *testing.T, tenant apitest.Tenant, name, template string) string {
	t.Helper()
	f.api.EnsurePrompt(t, tenant, "support", "You answer support questions.")
	j := f.seedJudge(t, tenant, map[string]any{"name": name, "template": template})
	var spans, evals []any
	var ids []string
	for i := range 12 {
		// Ids fixed by the name, so that the split (by seed and id) has answers of both kinds.
		id := uuid.NewSHA1(uuid.NameSpaceOID, fmt.Appendf(nil, "%s %d", name, i)).String()
		output := "Sure, no problem."
		if i%2 == 1 {
			output = "I don't know."
		}
		ids = append(ids, id)
		spans = append(spans, apitest.LLMSpan(id, uuid.NewString(), "", "support", "", fmt.Sprintf("Question %d", i), output, time.Now().Add(-time.Hour)))
		evals = append(evals, map[string]any{"span_id": id, "evaluation_result": false, "evaluation_reason": "as instructed"})
	}
	f.api.MustDo(t, "POST", "/spans", tenant.Key, spans)
	f.api.MustDo(t, "POST", "/projects/"+tenant.ProjectID+"/judges/"+j.ID+"/evaluations", tenant.Key, evals)
	for i, id := range ids {
		f.api.MustDo(t, "POST", "/v1/prompts/support/completions/"+id+"/feedback", tenant.Key,
			map[string]any{"thumbs_up": i%2 == 1, "judge_id": j.ID, "reason": "helpful answers pass, non-answers fail"})
	}
	return j.ID
}

// TestJudgeOptimizeDeploy: a judge run started from the judge page's form succeeds (the worker
// calling the fake model server); its page shows the template's and the candidate's agreement
// with people; review and deploy set the judge's template, as the REST API shows.
func TestJudgeOptimizeDeploy(t *testing.T) {
	f := newJudgeOptimizeFixture(t)
	a := f.api.A
	judgeID := f.calibratedJudge(t, a, "strict", strictJudge)
	rest := f.restClient(t, a)
	ctx := context.Background()
	b := f.browser(t)
	token := b.signIn(t, a.Key)

	p := b.post(t, "/ui/judges/"+judgeID+"/optimize", url.Values{"csrf": {token}, "seed": {"5"}})
	require.Equal(t, http.StatusSeeOther, p.Status, p.Body)
	runURL := p.Header.Get("Location")
	runID := strings.TrimPrefix(runURL, "/ui/optimization-runs/")
	var run api.OptimizationRun
	require.Eventually(t, func() bool {
		var err error
		run, err = rest.OptimizationRun(ctx, runID)
		return err == nil && runOverStatus(run.Status)
	}, 2*time.Minute, 50*time.Millisecond, "run %+v", run)
	require.Equal(t, "succeeded", run.Status, "error: %v", run.Error)
	require.NotNil(t, run.Candidate)
	require.Equal(t, lenientJudge, run.Candidate.Content)
	require.NotNil(t, run.Metrics)
	require.NotNil(t, run.Metrics.CandidateAgreement)

	p = b.get(t, runURL)
	require.Equal(t, http.StatusOK, p.Status, p.Body)
	assertPage(t, p)
	assert.Contains(t, p.Body, `data-testid="run-status">succeeded<`)
	assert.Contains(t, p.Body, `data-testid="run-agreement"`)
	assert.Contains(t, p.Body, `data-testid="agree-accuracy-candidate">100%<`)
	assert.Contains(t, p.Body, `data-testid="agree-kappa-candidate">1.00<`)
	assert.Contains(t, p.Body, `data-testid="agree-tpr-candidate">100%<`)
	assert.Contains(t, p.Body, `data-testid="agree-tnr-candidate">100%<`)
	assert.Contains(t, p.Body, `data-testid="agree-tpr-baseline">0%<`, "the strict template passes nothing")
	assert.Contains(t, p.Body, `data-testid="run-score">Accuracy `)
	assert.Contains(t, p.Body, `data-testid="run-review-deploy"`)

	p = b.get(t, "/ui/judges/"+judgeID)
	require.Equal(t, http.StatusOK, p.Status, p.Body)
	assert.Contains(t, p.Body, `data-run-id="`+runID+`"`, "the run on the judge's page")

	p = b.post(t, runURL+"/review-deploy", url.Values{"csrf": {token}})
	require.Equal(t, http.StatusOK, p.Status, p.Body)
	assertPage(t, p)
	assert.Contains(t, p.Body, "The judge's template becomes the candidate's.")
	assert.Contains(t, p.Body, `href="/ui/judges" aria-current="page"`)
	receipt := regexpFind(t, `name="receipt" value="([^"]+)"`, p.Body)
	j, err := rest.Judge(ctx, judgeID)
	require.NoError(t, err)
	assert.Equal(t, strictJudge, j.Template, "a review changes nothing")

	p = b.post(t, runURL+"/deploy", url.Values{"csrf": {token}, "receipt": {receipt}})
	require.Equal(t, http.StatusSeeOther, p.Status, p.Body)
	assert.Equal(t, runURL+"?deployed=2", p.Header.Get("Location"), "the judge's new template version")
	j, err = rest.Judge(ctx, judgeID)
	require.NoError(t, err)
	assert.Equal(t, lenientJudge, j.Template, "the deploy set the judge's template")
	assert.Equal(t, 2, j.TemplateVersion)
	p = b.get(t, p.Header.Get("Location"))
	require.Equal(t, http.StatusOK, p.Status, p.Body)
	assert.Contains(t, p.Body, `data-testid="run-deployed"`)
	assert.Contains(t, p.Body, "the judge's template is now the candidate's (template version 2)")
	assert.Contains(t, p.Body, `data-testid="run-deployed-version">as the judge's template<`)
}

func runOverStatus(s string) bool { return s == "succeeded" || s == "failed" || s == "cancelled" }
