package dashboard_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/internal/apitest"
)

// backfills counts the backfill requests stored for tenant's project.
func (f *fixture) backfills(t *testing.T, tenant apitest.Tenant) int {
	t.Helper()
	keys, err := f.api.Blobs.Sizes(context.Background(), "backfills/project="+tenant.ProjectID+"/")
	require.NoError(t, err)
	return len(keys)
}

// TestJudgeBackfill: the judge page's backfill form asks to confirm (saying how many model
// calls it makes), then queues the backfill through the API and comes back with a notice; a
// count that is no number, out of the API's bounds or for a paused judge is refused in the
// form with nothing queued; another project's judge is not found.
func TestJudgeBackfill(t *testing.T) {
	f := newFixture(t)
	a := f.api.A
	b := f.browser(t)
	token := b.signIn(t, a.Key)
	j := f.seedJudge(t, a, map[string]any{"name": "Helpful", "template": "Is it helpful?"})
	paused := f.seedJudge(t, a, map[string]any{"name": "Paused", "template": "Is it kind?", "paused": true})
	other := f.seedJudge(t, f.api.B, map[string]any{"name": "B's secret judge", "template": "x"})
	path := "/ui/judges/" + j.ID

	p := b.get(t, path)
	require.Equal(t, http.StatusOK, p.Status, p.Body)
	assertPage(t, p)
	assert.Contains(t, p.Body, `data-testid="backfill-form"`)
	assert.Contains(t, p.Body, "Spans to evaluate (1 to 10000)", "the API's bounds")
	assert.Contains(t, p.Body, `max="10000"`)

	form := func(count string, confirm bool) url.Values {
		v := url.Values{"csrf": {token}, "count": {count}}
		if confirm {
			v.Set("confirm", "yes")
		}
		return v
	}
	t.Run("refused", func(t *testing.T) {
		tests := []struct {
			name, judge, count string
			confirm            bool
			status             int
			want               string
		}{
			{"not a number", j.ID, "lots", false, http.StatusBadRequest, "whole number"},
			{"zero", j.ID, "0", false, http.StatusBadRequest, "from 1 to 10000"},
			{"too many, confirmed", j.ID, "20000", true, http.StatusBadRequest, "count must be between 1 and 10000"},
			{"a paused judge", paused.ID, "5", true, http.StatusConflict, "paused"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				p := b.post(t, "/ui/judges/"+tt.judge+"/backfill", form(tt.count, tt.confirm))
				assert.Equal(t, tt.status, p.Status, p.Body)
				assertPage(t, p)
				assert.Contains(t, regexpFind(t, `(?s)data-testid="backfill-error">(.*?)</p>`, p.Body), tt.want)
				assert.Contains(t, p.Body, `value="`+tt.count+`" data-testid="backfill-count"`, "the input kept")
				assert.Zero(t, f.backfills(t, a), "nothing queued")
			})
		}
	})
	t.Run("another project's judge", func(t *testing.T) {
		for _, confirm := range []bool{false, true} {
			p := b.post(t, "/ui/judges/"+other.ID+"/backfill", form("5", confirm))
			assert.Equal(t, http.StatusNotFound, p.Status, p.Body)
			assert.NotContains(t, p.Body, "secret judge")
		}
		assert.Zero(t, f.backfills(t, f.api.B))
		assert.Zero(t, f.backfills(t, a))
	})
	t.Run("confirm, then backfill", func(t *testing.T) {
		p := b.post(t, path+"/backfill", form("25", false))
		require.Equal(t, http.StatusOK, p.Status, p.Body)
		assertPage(t, p)
		assert.Contains(t, p.Body, `data-testid="backfill-confirm-count">25<`)
		assert.Contains(t, p.Body, "up to 25 times")
		assert.Zero(t, f.backfills(t, a), "asking changes nothing")

		p = b.post(t, path+"/backfill", form("25", true))
		require.Equal(t, http.StatusSeeOther, p.Status, p.Body)
		assert.Equal(t, path+"?backfilled=25#backfill", p.Header.Get("Location"))
		assert.Equal(t, 1, f.backfills(t, a))
		p = b.get(t, strings.TrimSuffix(p.Header.Get("Location"), "#backfill"))
		require.Equal(t, http.StatusOK, p.Status, p.Body)
		assert.Contains(t, p.Body, `data-testid="backfill-notice"`)
		assert.Contains(t, p.Body, "its 25 most recent matching spans")
	})
}

// TestJudgeCriteriaPerformance: the judge page shows the API's agreement per criterion as a
// table, and says so when there is none.
func TestJudgeCriteriaPerformance(t *testing.T) {
	f := newFixture(t)
	a := f.api.A
	b := f.browser(t)
	b.signIn(t, a.Key)
	j := f.seedJudge(t, a, map[string]any{"name": "Graded", "template": "## Accuracy\nIs it right?\n## Tone\nIs it kind?",
		"evaluation_type": "scored", "score_min": 0, "score_max": 10, "pass_threshold": 7})

	p := b.get(t, "/ui/judges/"+j.ID)
	require.Equal(t, http.StatusOK, p.Status, p.Body)
	assert.Contains(t, p.Body, `data-testid="no-criteria-perf"`, "the empty state")

	version := f.api.EnsurePrompt(t, a, "bot", "Answer.")
	span := uuid.NewString()
	f.api.MustDo(t, "POST", "/spans", a.Key, []any{apitest.LLMSpan(span, uuid.NewString(), "", "bot", version, "q", "a", time.Now())})
	f.api.MustDo(t, "POST", "/projects/"+a.ProjectID+"/judges/"+j.ID+"/evaluations", a.Key, []any{
		map[string]any{"span_id": span, "score": 8, "criteria_scores": map[string]any{"accuracy": map[string]any{"score": 8}}}})
	f.api.MustDo(t, "POST", "/v1/prompts/bot/completions/"+span+"/feedback", a.Key, map[string]any{"judge_id": j.ID,
		"thumbs_up": false, "expected_score": 6, "criteria_feedback": map[string]any{"accuracy": map[string]any{"expected_score": 9}}})

	p = b.get(t, "/ui/judges/"+j.ID)
	require.Equal(t, http.StatusOK, p.Status, p.Body)
	assertPage(t, p)
	assert.NotContains(t, p.Body, `data-testid="no-criteria-perf"`)
	assert.Equal(t, 1, strings.Count(p.Body, `data-testid="criterion-perf"`), "accuracy only: tone has no calibration")
	row := regexpFind(t, `(?s)data-key="accuracy">(.*?)</tr>`, p.Body)
	// Both pass (8 and 9 against 7): accuracy 100%, kappa and TNR unknown, MAE 1.
	assert.Contains(t, row, `data-testid="criterion-accuracy">100%<`)
	assert.Contains(t, row, `<td class="num">1.00</td>`)
	assert.Contains(t, row, `<td class="num">–</td>`)
}

// TestJudgeOptimizationForm: the judge page lists the judge's runs and starts one through
// the API (quick_refine, a budget and a seed); refused input is shown in the form with what
// was typed and nothing started; another project's judge is not found.
func TestJudgeOptimizationForm(t *testing.T) {
	f := newOptimizeFixture(t, false)
	a := f.api.A
	rest := f.restClient(t, a)
	ctx := context.Background()
	b := f.browser(t)
	token := b.signIn(t, a.Key)
	j := f.seedJudge(t, a, map[string]any{"name": "Helpful", "template": "Is it helpful?"})
	other := f.seedJudge(t, f.api.B, map[string]any{"name": "B's secret judge", "template": "x"})
	path := "/ui/judges/" + j.ID
	runs := func(tenant apitest.Tenant, id string) int {
		list, err := f.restClient(t, tenant).JudgeOptimizationRuns(ctx, id, 100, 0)
		require.NoError(t, err)
		return len(list)
	}

	p := b.get(t, path)
	require.Equal(t, http.StatusOK, p.Status, p.Body)
	assertPage(t, p)
	assert.Contains(t, p.Body, `data-testid="no-judge-runs"`)
	assert.Contains(t, p.Body, `data-testid="judge-optimize-form"`)

	form := func(calls, seed string) url.Values {
		return url.Values{"csrf": {token}, "max_model_calls": {calls}, "max_cost_usd": {"1.5"}, "seed": {seed}}
	}
	t.Run("refused", func(t *testing.T) {
		for _, tt := range []struct{ name, calls, seed, want string }{
			{"calls not a number", "many", "3", "whole number"},
			{"budget too large", "99999999", "3", "max_model_calls must be between"},
			{"seed not a number", "300", "three", "seed must be a whole number"},
		} {
			t.Run(tt.name, func(t *testing.T) {
				p := b.post(t, path+"/optimize", form(tt.calls, tt.seed))
				assert.Equal(t, http.StatusBadRequest, p.Status, p.Body)
				assertPage(t, p)
				assert.Contains(t, regexpFind(t, `(?s)data-testid="judge-optimize-error">(.*?)</p>`, p.Body), tt.want)
				assert.Contains(t, p.Body, `value="`+tt.calls+`" data-testid="judge-optimize-calls"`, "the input kept")
				assert.Contains(t, p.Body, `value="`+tt.seed+`" data-testid="judge-optimize-seed"`)
				assert.Zero(t, runs(a, j.ID), "nothing started")
			})
		}
	})
	t.Run("another project's judge", func(t *testing.T) {
		p := b.post(t, "/ui/judges/"+other.ID+"/optimize", form("300", "3"))
		assert.Equal(t, http.StatusNotFound, p.Status, p.Body)
		assert.NotContains(t, p.Body, "secret judge")
		assert.Zero(t, runs(f.api.B, other.ID))
	})
	t.Run("start", func(t *testing.T) {
		p := b.post(t, path+"/optimize", form("300", "3"))
		require.Equal(t, http.StatusSeeOther, p.Status, p.Body)
		loc := p.Header.Get("Location")
		require.True(t, strings.HasPrefix(loc, "/ui/optimization-runs/"), loc)
		runID := strings.TrimPrefix(loc, "/ui/optimization-runs/")
		run, err := rest.OptimizationRun(ctx, runID)
		require.NoError(t, err)
		require.NotNil(t, run.JudgeID)
		assert.Equal(t, j.ID, *run.JudgeID)
		assert.Equal(t, "quick_refine", run.Requested)
		require.NotNil(t, run.Config.Budget)
		assert.Equal(t, 300, run.Config.Budget.MaxModelCalls)
		assert.Equal(t, int64(3), *run.Config.Seed)

		p = b.get(t, path)
		require.Equal(t, http.StatusOK, p.Status, p.Body)
		assert.NotContains(t, p.Body, `data-testid="no-judge-runs"`)
		assert.Equal(t, 1, strings.Count(p.Body, `data-testid="judge-run"`))
		assert.Contains(t, p.Body, `href="/ui/optimization-runs/`+runID+`"`)

		p = b.get(t, loc)
		require.Equal(t, http.StatusOK, p.Status, p.Body)
		assertPage(t, p)
		assert.Contains(t, p.Body, `href="/ui/judges" aria-current="page"`, "a judge run is in the judges section")
		assert.Contains(t, p.Body, `href="/ui/judges/`+j.ID+`">Helpful</a>`)
		assert.NotContains(t, p.Body, `run-sim-h`, "a judge run simulates no model")
	})
}
