package judges_test

import (
	"fmt"
	"net/http"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/internal/apitest"
)

const template = `You grade support answers.

**Accuracy**: the answer is factually right.
**Tone** - polite and calm.

## Output format
Return JSON.`

func judgesPath(pid string) string { return "/projects/" + pid + "/judges" }

// createJudge creates a judge in tenant's project and returns its JSON.
func createJudge(t *testing.T, api *apitest.API, tenant apitest.Tenant, body map[string]any) map[string]any {
	t.Helper()
	return api.MustDo(t, "POST", judgesPath(tenant.ProjectID), tenant.Key, body).Map(t)
}

// ingest posts spans of one trace linked to prompt slug and returns their ids.
func ingest(t *testing.T, api *apitest.API, tenant apitest.Tenant, slug, versionID string, n int) (traceID string, spans []string) {
	t.Helper()
	traceID = uuid.NewString()
	var batch []any
	at := time.Now().Add(-time.Hour)
	for i := range n {
		id := uuid.NewString()
		spans = append(spans, id)
		batch = append(batch, apitest.LLMSpan(id, traceID, "", slug, versionID, fmt.Sprintf("question %d", i), fmt.Sprintf("answer %d", i), at.Add(time.Duration(i)*time.Millisecond)))
	}
	for start := 0; start < len(batch); start += 100 {
		api.MustDo(t, "POST", "/spans", tenant.Key, batch[start:min(start+100, len(batch))])
	}
	return traceID, spans
}

func TestJudgeLifecycle(t *testing.T) {
	api := apitest.New(t, apitest.Options{})
	a := api.A
	api.EnsurePrompt(t, a, "support-bot", "You are a support bot.")

	j := createJudge(t, api, a, map[string]any{"name": "Helpfulness", "template": template, "evaluation_type": "scored"})
	assert.Equal(t, "scored", j["evaluation_type"])
	assert.Equal(t, 0.0, j["score_min"])
	assert.Equal(t, 10.0, j["score_max"])
	assert.Equal(t, 7.0, j["pass_threshold"], "min + 0.7 x range")
	assert.Equal(t, 1.0, j["sample_rate"])
	assert.Equal(t, "inferred", j["criteria_source"])
	assert.Equal(t, []any{
		map[string]any{"key": "accuracy", "label": "Accuracy", "description": "the answer is factually right."},
		map[string]any{"key": "tone", "label": "Tone", "description": "polite and calm."},
	}, j["criteria"])
	assert.Equal(t, "active", j["status"])
	assert.Nil(t, j["pass_rate"])
	id := j["id"].(string)

	// Patch: pause, sample rate, a new range (the threshold follows it).
	p := api.MustDo(t, "PATCH", judgesPath(a.ProjectID)+"/"+id, a.Key, map[string]any{"paused": true, "sample_rate": 0.25, "score_min": 1, "score_max": 5}).Map(t)
	assert.Equal(t, "paused", p["status"])
	assert.Equal(t, 0.25, p["sample_rate"])
	assert.InDelta(t, 3.8, p["pass_threshold"], 1e-9)
	assert.Equal(t, "Helpfulness", p["name"], "fields not given are kept")

	// Criteria endpoint (spec §2.10).
	c := api.MustDo(t, "GET", judgesPath(a.ProjectID)+"/"+id+"/criteria", a.Key, nil).Map(t)
	assert.Equal(t, id, c["judge_id"])
	assert.Equal(t, 1.0, c["score_min"])
	assert.Len(t, c["criteria"], 2)

	// Link and unlink a prompt; an unknown prompt is 404.
	l := api.MustDo(t, "PUT", "/projects/"+a.ProjectID+"/prompts/support-bot/judges/"+id, a.Key, nil).Map(t)
	assert.Equal(t, []any{"support-bot"}, l["linked_prompts"])
	res := api.Do(t, "PUT", "/projects/"+a.ProjectID+"/prompts/nope/judges/"+id, a.Key, nil)
	assert.Equal(t, http.StatusNotFound, res.Status, "%s", res.Body)
	u := api.MustDo(t, "DELETE", "/projects/"+a.ProjectID+"/prompts/support-bot/judges/"+id, a.Key, nil).Map(t)
	assert.Equal(t, []any{}, u["linked_prompts"])

	// Evaluations move the counts shown in the list.
	vid := api.EnsurePrompt(t, a, "support-bot", "You are a support bot.")
	_, spans := ingest(t, api, a, "support-bot", vid, 4)
	api.MustDo(t, "POST", judgesPath(a.ProjectID)+"/"+id+"/evaluations", a.Key, []any{
		map[string]any{"span_id": spans[0], "score": 4.5, "evaluation_reason": "good"},
		map[string]any{"span_id": spans[1], "score": 2},
		map[string]any{"span_id": spans[2], "score": 5, "criteria_scores": map[string]any{"tone": map[string]any{"score": 5, "reason": "kind"}}},
	})
	list := api.MustDo(t, "GET", judgesPath(a.ProjectID), a.Key, nil).Map(t)
	require.Equal(t, 1.0, list["count"])
	got := list["judges"].([]any)[0].(map[string]any)
	assert.Equal(t, 3.0, got["evaluation_count"])
	assert.InDelta(t, 2.0/3, got["pass_rate"], 1e-9)
}

func TestEvaluationsAreIdempotentAndCountedOnce(t *testing.T) {
	api := apitest.New(t, apitest.Options{})
	a := api.A
	vid := api.EnsurePrompt(t, a, "bot", "Be brief.")
	_, spans := ingest(t, api, a, "bot", vid, 40)
	id := createJudge(t, api, a, map[string]any{"name": "Brevity", "template": "Is it brief?"})["id"].(string)
	path := judgesPath(a.ProjectID) + "/" + id + "/evaluations"
	batch := make([]any, len(spans))
	for i, s := range spans {
		batch[i] = map[string]any{"span_id": s, "evaluation_result": i%4 != 0}
	}
	// The same batch from 8 writers at once, as a retried evaluator would send it.
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() { api.MustDo(t, "POST", path, a.Key, batch) })
	}
	wg.Wait()
	j := api.MustDo(t, "GET", judgesPath(a.ProjectID)+"/"+id, a.Key, nil).Map(t)
	assert.Equal(t, 40.0, j["evaluation_count"])
	assert.InDelta(t, 30.0/40, j["pass_rate"], 1e-9)

	first := api.MustDo(t, "GET", "/projects/"+a.ProjectID+"/spans/"+spans[0]+"/evaluations", a.Key, nil).Map(t)
	evs := first["evaluations"].([]any)
	require.Len(t, evs, 1)
	ev := evs[0].(map[string]any)
	assert.Equal(t, false, ev["evaluation_result"])
	assert.Equal(t, "Brevity", ev["judge_name"])
	assert.Equal(t, "binary", ev["evaluation_type"])

	// A changed verdict replaces the old one: same id, pass count moves, evaluation count not.
	api.MustDo(t, "POST", path, a.Key, []any{map[string]any{"span_id": spans[0], "evaluation_result": true}})
	again := api.MustDo(t, "GET", "/projects/"+a.ProjectID+"/spans/"+spans[0]+"/evaluations", a.Key, nil).Map(t)["evaluations"].([]any)[0].(map[string]any)
	assert.Equal(t, ev["id"], again["id"])
	assert.Equal(t, ev["created_at"], again["created_at"])
	assert.Equal(t, true, again["evaluation_result"])
	j = api.MustDo(t, "GET", judgesPath(a.ProjectID)+"/"+id, a.Key, nil).Map(t)
	assert.Equal(t, 40.0, j["evaluation_count"])
	assert.InDelta(t, 31.0/40, j["pass_rate"], 1e-9)
	// The listing's totals, from the hour counters, count each evaluation once too.
	for query, want := range map[string]float64{"": 40, "?evaluation_result=true": 31, "?evaluation_result=false": 9} {
		assert.Equal(t, want, api.MustDo(t, "GET", path+query, a.Key, nil).Map(t)["total"], query)
	}
}

func TestEvaluationListing(t *testing.T) {
	api := apitest.New(t, apitest.Options{})
	a := api.A
	vid := api.EnsurePrompt(t, a, "bot", "Be brief.")
	_, spans := ingest(t, api, a, "bot", vid, 23)
	id := createJudge(t, api, a, map[string]any{"name": "Scored", "template": "Score it.", "evaluation_type": "scored", "score_max": 100})["id"].(string)
	path := judgesPath(a.ProjectID) + "/" + id + "/evaluations"
	// Three days ago, inside the default window; evaluations 67 minutes apart, so that the
	// windows below start and end inside hours as well as on them.
	base := time.Now().UTC().Truncate(24 * time.Hour).Add(-3 * 24 * time.Hour)
	day := base.Format(time.DateOnly)
	type model struct {
		span     string
		at       time.Time
		pass     bool
		feedback bool
	}
	var all []model
	var batch []any
	for i, s := range spans {
		m := model{span: s, at: base.Add(time.Duration(i) * 67 * time.Minute), pass: i%3 != 0, feedback: i%5 == 0}
		score := 20.0
		if m.pass {
			score = 90
		}
		all = append(all, m)
		batch = append(batch, map[string]any{"span_id": s, "score": score, "created_at": m.at.Format(time.RFC3339)})
	}
	api.MustDo(t, "POST", path, a.Key, batch)
	// Calibration feedback on some evaluations sets their feedback state.
	for _, m := range all {
		if m.feedback {
			api.MustDo(t, "POST", "/v1/prompts/bot/completions/"+m.span+"/feedback", a.Key,
				map[string]any{"thumbs_up": false, "judge_id": id, "expected_score": 50, "score_direction": "too_high"})
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].at.After(all[j].at) })

	type filter struct {
		query string
		keep  func(model) bool
	}
	start, end := base.Add(5*time.Hour), base.Add(15*time.Hour)
	// Windows that start and end inside hours, and on an evaluation's own microsecond.
	mid1, mid2 := base.Add(4*67*time.Minute), base.Add(17*67*time.Minute+time.Microsecond)
	filters := []filter{
		{"", func(model) bool { return true }},
		{"evaluation_result=true", func(m model) bool { return m.pass }},
		{"evaluation_result=false", func(m model) bool { return !m.pass }},
		{"feedback_state=with_user_feedback", func(m model) bool { return m.feedback }},
		{"feedback_state=without_user_feedback", func(m model) bool { return !m.feedback }},
		{"start_date=" + start.Format(time.RFC3339), func(m model) bool { return !m.at.Before(start) }},
		{"end_date=" + end.Format(time.RFC3339), func(m model) bool { return !m.at.After(end) }},
		{"start_date=" + start.Format(time.RFC3339) + "&end_date=" + end.Format(time.RFC3339) + "&evaluation_result=false",
			func(m model) bool { return !m.at.Before(start) && !m.at.After(end) && !m.pass }},
		{"start_date=" + day + "&end_date=" + day + "T03:00:00Z", func(m model) bool { return !m.at.After(base.Add(3 * time.Hour)) }},
		{"end_date=" + day, func(m model) bool { return m.at.Before(base.Add(24 * time.Hour)) }},
		{"start_date=" + mid1.Format(time.RFC3339Nano) + "&end_date=" + mid2.Format(time.RFC3339Nano),
			func(m model) bool { return !m.at.Before(mid1) && !m.at.After(mid2) }},
		{"start_date=" + mid1.Format(time.RFC3339Nano) + "&end_date=" + mid1.Add(20*time.Minute).Format(time.RFC3339Nano) + "&evaluation_result=true",
			func(m model) bool { return !m.at.Before(mid1) && !m.at.After(mid1.Add(20*time.Minute)) && m.pass }},
		{"start_date=" + mid1.Format(time.RFC3339Nano) + "&evaluation_result=false&feedback_state=without_user_feedback",
			func(m model) bool { return !m.at.Before(mid1) && !m.pass && !m.feedback }},
	}
	for _, f := range filters {
		var want []string
		for _, m := range all {
			if f.keep(m) {
				want = append(want, m.span)
			}
		}
		for _, limit := range []int{1, 4, 100} {
			t.Run(fmt.Sprintf("%s/limit=%d", f.query, limit), func(t *testing.T) {
				var got []string
				for offset := 0; ; offset += limit {
					res := api.MustDo(t, "GET", fmt.Sprintf("%s?limit=%d&offset=%d&%s", path, limit, offset, f.query), a.Key, nil).Map(t)
					assert.Equal(t, float64(len(want)), res["total"])
					assert.Equal(t, float64(limit), res["limit"])
					assert.Equal(t, float64(offset), res["offset"])
					page := res["evaluations"].([]any)
					for _, e := range page {
						got = append(got, e.(map[string]any)["span_id"].(string))
					}
					if len(page) < limit {
						break // paging ends with a short page (spec §4.7)
					}
				}
				assert.Equal(t, want, got)
			})
		}
	}
	// The default limit is 100.
	res := api.MustDo(t, "GET", path, a.Key, nil).Map(t)
	assert.Equal(t, 100.0, res["limit"])
	assert.Equal(t, 0.0, res["offset"])
}
