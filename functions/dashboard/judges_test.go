package dashboard_test

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/internal/apitest"
	"github.com/plumehq/plume/shared/auth"
)

// judgeAPI reads the judge through the REST API.
func (f *fixture) judgeAPI(t *testing.T, tenant apitest.Tenant, id string) api.Judge {
	t.Helper()
	var j api.Judge
	f.api.MustDo(t, "GET", "/projects/"+tenant.ProjectID+"/judges/"+id, tenant.Key, nil).Decode(t, &j)
	return j
}

// judgesAPI lists the project's judges through the REST API.
func (f *fixture) judgesAPI(t *testing.T, tenant apitest.Tenant) []api.Judge {
	t.Helper()
	var l api.JudgeList
	f.api.MustDo(t, "GET", "/projects/"+tenant.ProjectID+"/judges", tenant.Key, nil).Decode(t, &l)
	return l.Judges
}

// seedJudge creates a judge through the REST API.
func (f *fixture) seedJudge(t *testing.T, tenant apitest.Tenant, body map[string]any) api.Judge {
	t.Helper()
	var j api.Judge
	f.api.MustDo(t, "POST", "/projects/"+tenant.ProjectID+"/judges", tenant.Key, body).Decode(t, &j)
	return j
}

// seededEval is an evaluation to record on a new llm span of prompt slug.
type seededEval struct {
	pass  bool
	score *float64
	at    time.Time
}

// seedEvaluations ingests one llm span of slug per evaluation and records the judge's verdicts
// on them through the REST API; it returns the span ids and the trace id of each.
func (f *fixture) seedEvaluations(t *testing.T, tenant apitest.Tenant, judgeID, slug string, evs []seededEval) (spans, traces []string) {
	t.Helper()
	version := f.api.EnsurePrompt(t, tenant, slug, "You answer "+slug+" questions.")
	var body, reqs []any
	for i, e := range evs {
		spanID, traceID := uuid.NewString(), uuid.NewString()
		spans, traces = append(spans, spanID), append(traces, traceID)
		body = append(body, apitest.LLMSpan(spanID, traceID, "", slug, version, fmt.Sprintf("question %d", i), "answer", e.at))
		r := map[string]any{"span_id": spanID, "evaluation_reason": fmt.Sprintf("reason %d", i), "created_at": e.at.UTC().Format(time.RFC3339Nano)}
		if e.score != nil {
			r["score"] = *e.score
		} else {
			r["evaluation_result"] = e.pass
		}
		reqs = append(reqs, r)
	}
	f.api.MustDo(t, "POST", "/spans", tenant.Key, body)
	f.api.MustDo(t, "POST", "/projects/"+tenant.ProjectID+"/judges/"+judgeID+"/evaluations", tenant.Key, reqs)
	return spans, traces
}

func ptrF(v float64) *float64 { return &v }

func TestJudgeList(t *testing.T) {
	f := newFixture(t)
	b := f.browser(t)
	b.signIn(t, f.api.A.Key)

	p := b.get(t, "/ui/judges")
	require.Equal(t, http.StatusOK, p.Status, p.Body)
	assertPage(t, p)
	assert.Contains(t, p.Body, `data-testid="no-judges"`, "the empty state")
	assert.Contains(t, p.Body, `href="/ui/judges/new"`, "how to create one")
	assert.Contains(t, p.Body, `href="/ui/judges" aria-current="page"`)

	j := f.seedJudge(t, f.api.A, map[string]any{"name": "Helpful <b>", "template": "## Accuracy\nIs it right?", "evaluation_type": "scored",
		"score_min": 1, "score_max": 5, "pass_threshold": 3, "target_prompt": "support-bot"})
	f.seedJudge(t, f.api.A, map[string]any{"name": "Paused one", "template": "Is it polite?", "paused": true})
	f.seedJudge(t, f.api.B, map[string]any{"name": "B's secret judge", "template": "x"})
	f.seedEvaluations(t, f.api.A, j.ID, "support-bot", []seededEval{{score: ptrF(4), at: time.Now()}, {score: ptrF(1), at: time.Now()}})

	p = b.get(t, "/ui/judges")
	require.Equal(t, http.StatusOK, p.Status, p.Body)
	assertPage(t, p)
	assert.NotContains(t, p.Body, `data-testid="no-judges"`)
	assert.Equal(t, 2, strings.Count(p.Body, `data-testid="judge-row"`))
	assert.Contains(t, p.Body, `>Helpful &lt;b&gt;</a>`, "the name, escaped")
	assert.Contains(t, p.Body, `href="/ui/judges/`+j.ID+`"`)
	assert.Contains(t, p.Body, "score 1–5, passes at 3")
	assert.Contains(t, p.Body, `data-testid="judge-status">paused<`)
	assert.Contains(t, p.Body, `data-testid="judge-count">2<`)
	assert.Contains(t, p.Body, `data-testid="judge-pass-rate">50%<`)
	assert.NotContains(t, p.Body, "B&#39;s secret judge")
	assert.NotContains(t, p.Body, "secret judge")
}

func TestJudgeCreateAndEdit(t *testing.T) {
	f := newFixture(t)
	b := f.browser(t)
	token := b.signIn(t, f.api.A.Key)
	f.api.EnsurePrompt(t, f.api.A, "support-bot", "Be kind.")

	p := b.get(t, "/ui/judges/new")
	require.Equal(t, http.StatusOK, p.Status, p.Body)
	assertPage(t, p)
	assert.Contains(t, p.Body, `<option value="support-bot">`, "the project's prompts offered")

	template := "Judge the answer.\n\n## Accuracy\nThe facts are right.\n\n**Tone**: polite and brief"
	t.Run("preview without script", func(t *testing.T) {
		p := b.post(t, "/ui/judges", url.Values{"csrf": {token}, "name": {"Quality"}, "template": {template}, "action": {"preview"}})
		require.Equal(t, http.StatusOK, p.Status, p.Body)
		assertPage(t, p)
		assert.Equal(t, 2, strings.Count(p.Body, `data-testid="criterion"`))
		assert.Contains(t, p.Body, `<strong>Accuracy</strong> <code>accuracy</code>`)
		assert.Contains(t, p.Body, `<strong>Tone</strong> <code>tone</code>`)
		assert.Contains(t, p.Body, `value="Quality"`, "the input kept")
		assert.Empty(t, f.judgesAPI(t, f.api.A), "a preview stores nothing")
	})
	t.Run("preview fragment", func(t *testing.T) {
		p := b.get(t, "/ui/judges/criteria-preview?template="+url.QueryEscape(template+"\n## <img src=x onerror=alert(1)>"))
		require.Equal(t, http.StatusOK, p.Status, p.Body)
		assert.Equal(t, 3, strings.Count(p.Body, `data-testid="criterion"`))
		assert.Contains(t, p.Body, `&lt;img src=x onerror=alert(1)&gt;`)
		assert.NotContains(t, p.Body, `<img`)
		assert.NotContains(t, p.Body, `<main`, "a fragment, not a page")
		p = b.get(t, "/ui/judges/criteria-preview?template=just+text")
		assert.Contains(t, p.Body, `data-testid="no-criteria"`)
		p = b.get(t, "/ui/judges/criteria-preview?template="+strings.Repeat("x", 33<<10))
		assert.Equal(t, http.StatusBadRequest, p.Status)
	})
	t.Run("invalid input", func(t *testing.T) {
		tests := []struct {
			name string
			form url.Values
			want string
		}{
			{"no name", url.Values{"name": {""}, "template": {template}}, "name"},
			{"no template", url.Values{"name": {"Quality"}, "template": {""}}, "template"},
			{"sample rate not a number", url.Values{"name": {"Quality"}, "template": {template}, "sample_rate": {"lots"}}, "Sample rate must be a number"},
			{"sample rate above 1", url.Values{"name": {"Quality"}, "template": {template}, "sample_rate": {"2"}}, "sample_rate"},
			{"threshold out of range", url.Values{"name": {"Quality"}, "template": {template}, "evaluation_type": {"scored"}, "score_min": {"1"}, "score_max": {"5"}, "pass_threshold": {"9"}}, "pass_threshold"},
			{"bad tag line", url.Values{"name": {"Quality"}, "template": {template}, "tags": {"no equals sign"}}, "key=value"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				tt.form.Set("csrf", token)
				p := b.post(t, "/ui/judges", tt.form)
				assert.Equal(t, http.StatusBadRequest, p.Status, p.Body)
				assertPage(t, p)
				assert.Contains(t, regexpFind(t, `(?s)data-testid="form-error">(.*?)</p>`, p.Body), tt.want)
				assert.Contains(t, p.Body, `name="name" value="`+tt.form.Get("name")+`"`, "the input kept")
				assert.Empty(t, f.judgesAPI(t, f.api.A), "nothing stored")
			})
		}
	})

	var id string
	t.Run("create", func(t *testing.T) {
		p := b.post(t, "/ui/judges", url.Values{"csrf": {token}, "name": {"Quality"}, "template": {template},
			"evaluation_type": {"scored"}, "score_min": {"1"}, "score_max": {"5"}, "pass_threshold": {"4"}, "sample_rate": {"0.5"},
			"target_prompt": {"support-bot"}, "tags": {"env=prod\nenv=staging\ntier=gold"}, "match": {"any"}, "model": {"gpt-4o-mini"}})
		require.Equal(t, http.StatusSeeOther, p.Status, p.Body)
		list := f.judgesAPI(t, f.api.A)
		require.Len(t, list, 1)
		j := list[0]
		id = j.ID
		assert.Equal(t, "/ui/judges/"+j.ID, p.Header.Get("Location"))
		assert.Equal(t, "Quality", j.Name)
		assert.Equal(t, template, j.Template)
		assert.Equal(t, api.EvaluationScored, j.EvaluationType)
		assert.Equal(t, []float64{1, 5, 4}, []float64{*j.ScoreMin, *j.ScoreMax, *j.PassThreshold})
		assert.Equal(t, 0.5, j.SampleRate)
		assert.Equal(t, "support-bot", *j.TargetPrompt)
		assert.Equal(t, "gpt-4o-mini", *j.Model)
		require.NotNil(t, j.TagFilter)
		assert.Equal(t, map[string][]string{"env": {"prod", "staging"}, "tier": {"gold"}}, j.TagFilter.Tags)
		assert.Equal(t, "any", j.TagFilter.Match)
		assert.Len(t, j.Criteria, 2)
	})
	t.Run("edit", func(t *testing.T) {
		require.NotEmpty(t, id)
		p := b.get(t, "/ui/judges/"+id+"/edit")
		require.Equal(t, http.StatusOK, p.Status, p.Body)
		assertPage(t, p)
		assert.Contains(t, p.Body, `name="name" value="Quality"`)
		assert.Contains(t, p.Body, "env=prod\nenv=staging\ntier=gold")
		assert.Contains(t, p.Body, `<option value="any" selected>`)

		bad := b.post(t, "/ui/judges/"+id+"/edit", url.Values{"csrf": {token}, "name": {"Renamed"}, "template": {template},
			"evaluation_type": {"scored"}, "score_min": {"1"}, "score_max": {"5"}, "pass_threshold": {"7"}, "sample_rate": {"1"}})
		assert.Equal(t, http.StatusBadRequest, bad.Status, bad.Body)
		assert.Contains(t, bad.Body, `value="Renamed"`)
		assert.Equal(t, "Quality", f.judgeAPI(t, f.api.A, id).Name, "nothing stored")

		p = b.post(t, "/ui/judges/"+id+"/edit", url.Values{"csrf": {token}, "name": {"Renamed"}, "template": {"## Safety\nNo harm."},
			"evaluation_type": {"scored"}, "score_min": {"1"}, "score_max": {"5"}, "pass_threshold": {"3"}, "sample_rate": {"1"},
			"paused": {"on"}})
		require.Equal(t, http.StatusSeeOther, p.Status, p.Body)
		j := f.judgeAPI(t, f.api.A, id)
		assert.Equal(t, "Renamed", j.Name)
		assert.True(t, j.Paused)
		assert.Nil(t, j.Model, "an empty model clears it")
		assert.Nil(t, j.TargetPrompt)
		assert.Nil(t, j.TagFilter)
		assert.Equal(t, 3.0, *j.PassThreshold)
		assert.Equal(t, 2, j.TemplateVersion)
		require.Len(t, j.Criteria, 1)
		assert.Equal(t, "safety", j.Criteria[0].Key)

		page := b.get(t, "/ui/judges/"+id)
		require.Equal(t, http.StatusOK, page.Status, page.Body)
		assert.Equal(t, 2, strings.Count(page.Body, `data-testid="version"`), "both template versions")
		assert.Contains(t, page.Body, `data-testid="judge-status">paused<`)
	})
}

func TestJudgePage(t *testing.T) {
	f := newFixture(t)
	b := f.browser(t)
	token := b.signIn(t, f.api.A.Key)
	a := f.api.A
	j := f.seedJudge(t, a, map[string]any{"name": "Scorer", "template": "## Accuracy\nRight facts.", "evaluation_type": "scored",
		"score_min": 1, "score_max": 10, "pass_threshold": 6})
	now := time.Now().UTC()
	day := 24 * time.Hour
	// support-bot: scores 9 (pass), 2 (fail), 7 (pass) today; sales-bot: 5 (fail) and 8 (pass) ten days ago.
	supportSpans, supportTraces := f.seedEvaluations(t, a, j.ID, "support-bot", []seededEval{
		{score: ptrF(9), at: now.Add(-time.Hour)}, {score: ptrF(2), at: now.Add(-2 * time.Hour)}, {score: ptrF(7), at: now.Add(-3 * time.Hour)}})
	salesSpans, _ := f.seedEvaluations(t, a, j.ID, "sales-bot", []seededEval{
		{score: ptrF(5), at: now.Add(-10 * day)}, {score: ptrF(8), at: now.Add(-10*day - time.Hour)}})
	bj := f.seedJudge(t, f.api.B, map[string]any{"name": "B's judge", "template": "x"})
	base := "/ui/judges/" + j.ID

	t.Run("page", func(t *testing.T) {
		p := b.get(t, base)
		require.Equal(t, http.StatusOK, p.Status, p.Body)
		assertPage(t, p)
		assert.Contains(t, p.Body, `<h1 data-testid="judge-name">Scorer</h1>`)
		assert.Contains(t, p.Body, `data-testid="eval-total">5 evaluations<`)
		assert.Contains(t, p.Body, `href="/ui/traces/`+supportTraces[0]+`/spans/`+supportSpans[0]+`"`, "each evaluation links to its span")
		assert.Equal(t, 1, strings.Count(p.Body, `data-testid="version"`))
		assert.Contains(t, p.Body, `data-testid="perf-n">0<`)
		assert.Contains(t, p.Body, `data-testid="no-perf"`, "the chart says what to do")
		assert.Contains(t, p.Body, `data-testid="no-links"`)
	})
	t.Run("filters", func(t *testing.T) {
		tests := []struct {
			name  string
			query string
			want  []string
		}{
			{"pass", "?result=pass", []string{supportSpans[0], supportSpans[2], salesSpans[1]}},
			{"fail", "?result=fail", []string{supportSpans[1], salesSpans[0]}},
			{"score range", "?min_score=5&max_score=8", []string{supportSpans[2], salesSpans[0], salesSpans[1]}},
			{"prompt", "?prompt=sales-bot", []string{salesSpans[0], salesSpans[1]}},
			{"prompt and verdict", "?prompt=support-bot&result=fail", []string{supportSpans[1]}},
			{"time", "?from=" + now.Add(-12*day).Format(time.DateOnly) + "&to=" + now.Add(-8*day).Format(time.DateOnly), []string{salesSpans[0], salesSpans[1]}},
			{"not calibrated", "?calibrated=no&result=fail", []string{supportSpans[1], salesSpans[0]}},
			{"nothing", "?min_score=10", nil},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				p := b.get(t, base+tt.query)
				require.Equal(t, http.StatusOK, p.Status, p.Body)
				assertPage(t, p)
				got := regexpAll(`data-testid="evaluation" data-span-id="([^"]+)"`, p.Body)
				assert.Equal(t, tt.want, got)
				assert.Contains(t, p.Body, fmt.Sprintf(`data-testid="eval-total">%d evaluation`, len(tt.want)))
				if tt.want == nil {
					assert.Contains(t, p.Body, "match these filters")
				}
			})
		}
		for _, q := range []string{"?result=maybe", "?min_score=high", "?from=yesterday", "?page=0", "?calibrated=x"} {
			p := b.get(t, base+q)
			assert.Equal(t, http.StatusBadRequest, p.Status, q)
			assertPage(t, p)
		}
	})
	t.Run("paging", func(t *testing.T) {
		var many []seededEval
		for i := range 26 {
			many = append(many, seededEval{score: ptrF(3), at: now.Add(-20*day - time.Duration(i)*time.Minute)})
		}
		f.seedEvaluations(t, a, j.ID, "bulk-bot", many)
		for _, q := range []string{"?result=fail", "?result=fail&prompt=bulk-bot"} {
			p := b.get(t, base+q)
			require.Equal(t, http.StatusOK, p.Status, p.Body)
			assert.Equal(t, 25, strings.Count(p.Body, `data-testid="evaluation"`), q)
			next := regexpFind(t, `href="([^"]+)" rel="next"`, p.Body)
			p = b.get(t, strings.ReplaceAll(next, "&amp;", "&"))
			require.Equal(t, http.StatusOK, p.Status, p.Body)
			wantLast := map[string]int{"?result=fail": 28 - 25, "?result=fail&prompt=bulk-bot": 1}[q]
			assert.Equal(t, wantLast, strings.Count(p.Body, `data-testid="evaluation"`), q)
			assert.Contains(t, p.Body, `rel="prev"`)
			assert.NotContains(t, p.Body, `rel="next"`)
		}
	})
	t.Run("link to a prompt", func(t *testing.T) {
		p := b.get(t, base)
		assert.Contains(t, p.Body, `<option value="support-bot">`)
		p = b.post(t, base+"/links", url.Values{"csrf": {token}, "slug": {"support-bot"}, "action": {"link"}})
		require.Equal(t, http.StatusSeeOther, p.Status, p.Body)
		assert.Equal(t, []string{"support-bot"}, f.judgeAPI(t, a, j.ID).LinkedPrompts)
		p = b.get(t, base)
		assert.Contains(t, p.Body, `data-testid="linked-prompt"><a href="/ui/prompts/support-bot">support-bot</a>`)
		assert.NotContains(t, p.Body, `<option value="support-bot">`, "no longer offered")

		for _, form := range []url.Values{{"slug": {"no-such-prompt"}}, {"slug": {""}}} {
			form.Set("csrf", token)
			p := b.post(t, base+"/links", form)
			assert.Contains(t, []int{http.StatusBadRequest, http.StatusNotFound}, p.Status, p.Body)
			assertPage(t, p)
		}
		p = b.post(t, base+"/links", url.Values{"csrf": {token}, "slug": {"sales-bot"}, "action": {"link"}})
		require.Equal(t, http.StatusSeeOther, p.Status, p.Body)
		p = b.post(t, base+"/links", url.Values{"csrf": {token}, "slug": {"sales-bot"}, "action": {"unlink"}})
		require.Equal(t, http.StatusOK, p.Status, p.Body)
		assertPage(t, p)
		assert.Contains(t, p.Body, `data-testid="unlink-confirm"`, "unlinking asks first")
		assert.Contains(t, p.Body, "stops evaluating new completions of the prompt <code>sales-bot</code>")
		assert.ElementsMatch(t, []string{"support-bot", "sales-bot"}, f.judgeAPI(t, a, j.ID).LinkedPrompts, "nothing changed yet")
		p = b.post(t, base+"/links", url.Values{"csrf": {token}, "slug": {"sales-bot"}, "action": {"unlink"}, "confirm": {"yes"}})
		require.Equal(t, http.StatusSeeOther, p.Status, p.Body)
		assert.Equal(t, []string{"support-bot"}, f.judgeAPI(t, a, j.ID).LinkedPrompts)
	})
	t.Run("calibrate", func(t *testing.T) {
		p := b.get(t, base+"?result=pass&prompt=support-bot")
		require.Contains(t, p.Body, `data-testid="calibrate-form"`)
		assert.Contains(t, p.Body, `name="slug" value="support-bot"`)
		// Agree with 9 (pass), disagree with 7 (pass): the person expected 3.
		p = b.post(t, base+"/calibrate", url.Values{"csrf": {token}, "span_id": {supportSpans[0]}, "slug": {"support-bot"}, "verdict": {"agree"},
			"back": {"?result=pass&prompt=support-bot"}})
		require.Equal(t, http.StatusSeeOther, p.Status, p.Body)
		assert.Equal(t, base+"?result=pass&prompt=support-bot#performance", p.Header.Get("Location"))
		p = b.post(t, base+"/calibrate", url.Values{"csrf": {token}, "span_id": {supportSpans[2]}, "slug": {"support-bot"}, "verdict": {"disagree"},
			"expected_score": {"3"}, "reason": {"wrong facts"}, "back": {"https://evil.example/"}})
		require.Equal(t, http.StatusSeeOther, p.Status, p.Body)
		assert.Equal(t, base+"#performance", p.Header.Get("Location"), "back is a query only")

		var perf api.JudgePerformance
		f.api.MustDo(t, "GET", "/projects/"+a.ProjectID+"/judges/"+j.ID+"/performance", a.Key, nil).Decode(t, &perf)
		assert.Equal(t, 2, perf.N)
		assert.Equal(t, api.VerdictCounts{TruePositive: 1, FalsePositive: 1}, perf.Verdict.Counts)
		require.NotNil(t, perf.Score)
		assert.Equal(t, 4.0, *perf.Score.MeanAbsoluteError)
		var page api.EvaluationPage
		f.api.MustDo(t, "GET", "/projects/"+a.ProjectID+"/judges/"+j.ID+"/evaluations?feedback_state=with_user_feedback", a.Key, nil).Decode(t, &page)
		assert.Equal(t, 2, page.Total)

		p = b.get(t, base)
		assert.Contains(t, p.Body, `data-testid="perf-n">2<`)
		assert.Contains(t, p.Body, `data-testid="perf-accuracy">50%<`)
		assert.Contains(t, p.Body, `data-testid="perf-mae">4.00<`)
		assert.Equal(t, 1, strings.Count(p.Body, `data-testid="perf-bar"`), "this week's bar")
		assert.NotContains(t, p.Body, `data-testid="no-perf"`)
		assert.Equal(t, 2, strings.Count(p.Body, `data-testid="calibrated"`))
		p = b.get(t, base+"?calibrated=yes")
		assert.Equal(t, []string{supportSpans[0], supportSpans[2]}, regexpAll(`data-testid="evaluation" data-span-id="([^"]+)"`, p.Body))

		tests := []struct {
			name string
			form url.Values
			want string
		}{
			{"no verdict", url.Values{"span_id": {supportSpans[1]}, "slug": {"support-bot"}, "reason": {"kept <reason>"}}, "agree"},
			{"score out of range", url.Values{"span_id": {supportSpans[1]}, "slug": {"support-bot"}, "verdict": {"disagree"}, "expected_score": {"99"}}, "between 1 and 10"},
			{"score not a number", url.Values{"span_id": {supportSpans[1]}, "slug": {"support-bot"}, "verdict": {"disagree"}, "expected_score": {"high"}}, "must be a number"},
			{"no prompt", url.Values{"span_id": {supportSpans[1]}, "verdict": {"agree"}}, "link the judge"},
			{"no span", url.Values{"slug": {"support-bot"}, "verdict": {"agree"}}, "Choose an evaluation"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				tt.form.Set("csrf", token)
				tt.form.Set("back", "?result=fail")
				p := b.post(t, base+"/calibrate", tt.form)
				assert.Equal(t, http.StatusBadRequest, p.Status, p.Body)
				assertPage(t, p)
				assert.Contains(t, regexpFind(t, `data-testid="calibrate-error">([^<]*)<`, p.Body), tt.want)
				assert.Equal(t, []string{supportSpans[1], salesSpans[0]}, regexpAll(`data-testid="evaluation" data-span-id="([^"]+)"`, p.Body)[:2], "the page with its filters")
				if e := tt.form.Get("expected_score"); e != "" {
					assert.Contains(t, p.Body, `data-testid="expected-score" value="`+e+`"`, "the input kept")
				}
				if tt.name == "no verdict" {
					assert.Contains(t, p.Body, `value="kept &lt;reason&gt;"`, "the input kept")
				}
			})
		}
		f.api.MustDo(t, "GET", "/projects/"+a.ProjectID+"/judges/"+j.ID+"/performance", a.Key, nil).Decode(t, &perf)
		assert.Equal(t, 2, perf.N, "nothing stored by the bad forms")
	})
	t.Run("another project's judge", func(t *testing.T) {
		for _, path := range []string{"/ui/judges/" + bj.ID, "/ui/judges/" + bj.ID + "/edit", "/ui/judges/no-such-judge"} {
			p := b.get(t, path)
			assert.Equal(t, http.StatusNotFound, p.Status, path)
			assertPage(t, p)
			assert.NotContains(t, p.Body, "B&#39;s judge")
		}
		for _, path := range []string{"/ui/judges/" + bj.ID + "/edit", "/ui/judges/" + bj.ID + "/links"} {
			p := b.post(t, path, url.Values{"csrf": {token}, "name": {"taken over"}, "template": {"x"}, "slug": {"support-bot"}})
			assert.Equal(t, http.StatusNotFound, p.Status, path)
		}
		p := b.post(t, "/ui/judges/"+bj.ID+"/calibrate", url.Values{"csrf": {token}, "span_id": {supportSpans[1]}, "slug": {"support-bot"}, "verdict": {"agree"}})
		assert.Equal(t, http.StatusNotFound, p.Status, p.Body)
		got := f.judgeAPI(t, f.api.B, bj.ID)
		assert.Equal(t, "B's judge", got.Name)
		assert.Empty(t, got.LinkedPrompts)
	})
	t.Run("forms need the CSRF token", func(t *testing.T) {
		p := b.post(t, "/ui/judges", url.Values{"name": {"No token"}, "template": {"x"}})
		assert.Equal(t, http.StatusForbidden, p.Status)
		p = b.post(t, base+"/calibrate", url.Values{"span_id": {supportSpans[1]}, "slug": {"support-bot"}, "verdict": {"agree"}})
		assert.Equal(t, http.StatusForbidden, p.Status)
		assert.Len(t, f.judgesAPI(t, a), 1)
	})
	t.Run("an ingest key", func(t *testing.T) {
		ingest, key, err := auth.NewKey(auth.KeySpec{ProjectID: a.ProjectID, Role: auth.RoleIngest}, time.Now())
		require.NoError(t, err)
		require.NoError(t, f.api.Auth.CreateKey(t.Context(), key))
		res := f.api.Do(t, "GET", "/projects/"+a.ProjectID+"/judges", ingest, nil)
		assert.Equal(t, http.StatusForbidden, res.Status, "the API refuses it")
		ib := f.browser(t)
		login := ib.get(t, "/ui/login")
		p := ib.post(t, "/ui/login", url.Values{"api_key": {ingest}, "csrf": {csrf(t, login)}})
		assert.Equal(t, http.StatusForbidden, p.Status, "no session for it")
		p = ib.get(t, base)
		assert.Equal(t, http.StatusUnauthorized, p.Status)
		assert.NotContains(t, p.Body, "Scorer")
	})
}

func regexpAll(pattern, s string) []string {
	var out []string
	for _, m := range regexp.MustCompile(pattern).FindAllStringSubmatch(s, -1) {
		out = append(out, m[1])
	}
	return out
}
