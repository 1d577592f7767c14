package judges_test

import (
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/internal/apitest"
)

func performancePath(pid, jid string) string { return judgesPath(pid) + "/" + jid + "/performance" }

func feedbackPath(slug, span string) string {
	return "/v1/prompts/" + slug + "/completions/" + span + "/feedback"
}

// readPerformance GETs a judge's performance with query and decodes it.
func readPerformance(t *testing.T, srv *apitest.API, tenant apitest.Tenant, jid, query string) api.JudgePerformance {
	t.Helper()
	var p api.JudgePerformance
	srv.MustDo(t, "GET", performancePath(tenant.ProjectID, jid)+query, tenant.Key, nil).Decode(t, &p)
	return p
}

// assertRate checks an optional number: nil (JSON null) for no data, else want.
func assertRate(t *testing.T, name string, want any, got *float64) {
	t.Helper()
	if want == nil {
		assert.Nil(t, got, "%s: want null", name)
		return
	}
	if assert.NotNil(t, got, "%s: want %v, got null", name, want) {
		assert.InDelta(t, want, *got, 1e-12, name)
	}
}

// TestBinaryJudgePerformance: calibrations posted through the feedback route, read back as
// agreement over the window; numbers computed by hand.
func TestBinaryJudgePerformance(t *testing.T) {
	srv := apitest.New(t, apitest.Options{})
	a := srv.A
	vid := srv.EnsurePrompt(t, a, "bot", "Answer.")
	_, s := ingest(t, srv, a, "bot", vid, 8)
	jid := createJudge(t, srv, a, map[string]any{"name": "Correct", "template": "Is it right?"})["id"].(string)
	// The judge passes spans 0-2 and fails 3-5; span 6 is not evaluated.
	var evs []any
	for i := range 6 {
		evs = append(evs, map[string]any{"span_id": s[i], "evaluation_result": i < 3})
	}
	srv.MustDo(t, "POST", judgesPath(a.ProjectID)+"/"+jid+"/evaluations", a.Key, evs)

	// Thumbs up agrees with the judge; thumbs down on a binary verdict says the opposite.
	calibrate := func(key, span string, up bool) {
		srv.MustDo(t, "POST", feedbackPath("bot", span), key, map[string]any{"thumbs_up": up, "judge_id": jid, "reason": "because"})
	}
	reviewer := srv.KeyFor(t, a, "reviewer-2")
	calibrate(a.Key, s[0], true)    // TP
	calibrate(reviewer, s[0], true) // TP: a second person on the same evaluation
	calibrate(a.Key, s[1], false)   // replaced below
	calibrate(a.Key, s[1], true)    // TP: the latest submission counts, once
	calibrate(a.Key, s[2], false)   // FP
	calibrate(a.Key, s[3], false)   // FN
	calibrate(a.Key, s[4], true)    // TN
	calibrate(a.Key, s[5], true)    // TN
	calibrate(a.Key, s[6], false)   // no evaluation yet: left out
	// Feedback without judge_id is not a calibration.
	srv.MustDo(t, "POST", feedbackPath("bot", s[7]), a.Key, map[string]any{"thumbs_up": false})

	// TP 3, FP 1, FN 1, TN 2, N 7:
	//   accuracy = (3+2)/7 = 5/7
	//   pe       = (4/7)(4/7) + (3/7)(3/7) = 25/49   (judge and people both pass 4 of 7)
	//   kappa    = (5/7 − 25/49) / (1 − 25/49) = (10/49) / (24/49) = 5/12
	//   TPR      = 3/(3+1) = 3/4,  TNR = 2/(2+1) = 2/3
	now := time.Now().UTC()
	p := readPerformance(t, srv, a, jid, "")
	assert.Equal(t, jid, p.JudgeID)
	assert.Equal(t, api.EvaluationBinary, p.EvaluationType)
	assert.Equal(t, 7, p.N)
	assert.Equal(t, 7, p.Verdict.N)
	assert.Equal(t, api.VerdictCounts{TruePositive: 3, FalsePositive: 1, FalseNegative: 1, TrueNegative: 2}, p.Verdict.Counts)
	assertRate(t, "accuracy", 5.0/7, p.Verdict.Accuracy)
	assertRate(t, "kappa", 5.0/12, p.Verdict.Kappa)
	assertRate(t, "true_positive_rate", 3.0/4, p.Verdict.TruePositiveRate)
	assertRate(t, "true_negative_rate", 2.0/3, p.Verdict.TrueNegativeRate)
	assert.Nil(t, p.Score, "a binary judge has no score agreement")
	assert.Empty(t, p.Criteria)
	// The default window: the last 30 days.
	assert.WithinDuration(t, now, p.EndDate, time.Minute)
	assert.Equal(t, 30*24*time.Hour, p.EndDate.Sub(p.StartDate))

	t.Run("a window around the calibrations", func(t *testing.T) {
		start, end := now.Add(-time.Hour).Truncate(time.Second), now.Add(time.Hour).Truncate(time.Second)
		q := "?start_date=" + url.QueryEscape(start.Format(time.RFC3339)) + "&end_date=" + url.QueryEscape(end.Format(time.RFC3339))
		w := readPerformance(t, srv, a, jid, q)
		assert.Equal(t, 7, w.N)
		assert.True(t, start.Equal(w.StartDate), "start_date %s", w.StartDate)
		assert.True(t, end.Equal(w.EndDate), "end_date %s", w.EndDate)
	})

	t.Run("a window without calibrations: null, not 0", func(t *testing.T) {
		res := srv.MustDo(t, "GET", performancePath(a.ProjectID, jid)+"?end_date=2026-01-31", a.Key, nil)
		var w api.JudgePerformance
		res.Decode(t, &w)
		assert.Equal(t, 0, w.N)
		assert.Equal(t, time.Date(2026, 1, 31, 23, 59, 59, 999999000, time.UTC), w.EndDate, "a bare end date includes its day")
		assert.Equal(t, 30*24*time.Hour, w.EndDate.Sub(w.StartDate))
		raw := res.Map(t)
		verdict := raw["verdict"].(map[string]any)
		for _, k := range []string{"accuracy", "kappa", "true_positive_rate", "true_negative_rate"} {
			assert.Contains(t, verdict, k)
			assert.Nil(t, verdict[k], k)
		}
		assert.Contains(t, raw, "score")
		assert.Nil(t, raw["score"])
		assert.Equal(t, []any{}, raw["criteria"])
	})
}

// TestScoredJudgePerformance: score agreement and per-criterion agreement of a scored judge
// (0 to 10, passing at 7); numbers computed by hand.
func TestScoredJudgePerformance(t *testing.T) {
	srv := apitest.New(t, apitest.Options{})
	a := srv.A
	vid := srv.EnsurePrompt(t, a, "bot", "Answer.")
	_, s := ingest(t, srv, a, "bot", vid, 5)
	// Criteria inferred from the template: accuracy and tone.
	jid := createJudge(t, srv, a, map[string]any{"name": "Helpful", "template": template, "evaluation_type": "scored"})["id"].(string)
	srv.MustDo(t, "POST", judgesPath(a.ProjectID)+"/"+jid+"/evaluations", a.Key, []any{
		map[string]any{"span_id": s[0], "score": 8, "criteria_scores": map[string]any{"accuracy": map[string]any{"score": 8}}},
		map[string]any{"span_id": s[1], "score": 4},
		map[string]any{"span_id": s[2], "score": 9},
		map[string]any{"span_id": s[3], "score": 3},
		map[string]any{"span_id": s[4], "score": 6},
	})
	for i, body := range []map[string]any{
		{"thumbs_up": false, "expected_score": 6, "criteria_feedback": map[string]any{"accuracy": map[string]any{"expected_score": 9}}},
		{"thumbs_up": false, "expected_score": 5},
		{"thumbs_up": true, "expected_score": 9},
		{"thumbs_up": false, "score_direction": "too_low"},
		{"thumbs_up": true},
	} {
		body["judge_id"] = jid
		srv.MustDo(t, "POST", feedbackPath("bot", s[i]), a.Key, body)
	}

	// Scores (judge − expected): 8−6 = +2 (too high), 4−5 = −1 (too low), 9−9 = 0, span 3 too
	// low by direction, span 4 none:
	//   N 5, with an expected score 3, MAE = (2+1+0)/3 = 1, too high 1/5, too low 2/5.
	// Verdicts (the person's: expected ≥ 7, else thumbs up = the judge's; span 3's direction
	// does not cross the threshold, so it is left out): span 0 FP (8 passes, 6 fails), span 1
	// TN, span 2 TP, span 4 TN (6 fails, agreed):
	//   N 4, accuracy 3/4, pe = (2/4)(1/4) + (2/4)(3/4) = 1/2, kappa = (3/4 − 1/2)/(1/2) = 1/2,
	//   TPR 1/1, TNR 2/3.
	// Criterion accuracy, span 0 only: 8 against 9, both pass: TP, MAE 1, too low 1/1; kappa
	// null (one class), TNR null (no human fail). Tone has no calibration: no entry.
	p := readPerformance(t, srv, a, jid, "")
	assert.Equal(t, api.EvaluationScored, p.EvaluationType)
	assert.Equal(t, 5, p.N)
	require.NotNil(t, p.Score)
	assert.Equal(t, 5, p.Score.N)
	assert.Equal(t, api.ScoreCounts{WithExpectedScore: 3, TooHigh: 1, TooLow: 2}, p.Score.Counts)
	assertRate(t, "mean_absolute_error", 1.0, p.Score.MeanAbsoluteError)
	assertRate(t, "too_high_share", 0.2, p.Score.TooHighShare)
	assertRate(t, "too_low_share", 0.4, p.Score.TooLowShare)

	assert.Equal(t, 4, p.Verdict.N)
	assert.Equal(t, api.VerdictCounts{TruePositive: 1, FalsePositive: 1, FalseNegative: 0, TrueNegative: 2}, p.Verdict.Counts)
	assertRate(t, "accuracy", 0.75, p.Verdict.Accuracy)
	assertRate(t, "kappa", 0.5, p.Verdict.Kappa)
	assertRate(t, "true_positive_rate", 1.0, p.Verdict.TruePositiveRate)
	assertRate(t, "true_negative_rate", 2.0/3, p.Verdict.TrueNegativeRate)

	require.Len(t, p.Criteria, 1)
	c := p.Criteria[0]
	assert.Equal(t, "accuracy", c.Key)
	assert.Equal(t, api.VerdictCounts{TruePositive: 1}, c.Verdict.Counts)
	assertRate(t, "accuracy.accuracy", 1.0, c.Verdict.Accuracy)
	assertRate(t, "accuracy.kappa", nil, c.Verdict.Kappa)
	assertRate(t, "accuracy.true_positive_rate", 1.0, c.Verdict.TruePositiveRate)
	assertRate(t, "accuracy.true_negative_rate", nil, c.Verdict.TrueNegativeRate)
	assert.Equal(t, api.ScoreCounts{WithExpectedScore: 1, TooLow: 1}, c.Score.Counts)
	assertRate(t, "accuracy.mean_absolute_error", 1.0, c.Score.MeanAbsoluteError)
	assertRate(t, "accuracy.too_high_share", 0.0, c.Score.TooHighShare)
	assertRate(t, "accuracy.too_low_share", 1.0, c.Score.TooLowShare)
}

// TestPerformanceErrors: bad windows are 400, unknown judges 404, another project's path 403,
// each with the error shape.
func TestPerformanceErrors(t *testing.T) {
	srv := apitest.New(t, apitest.Options{})
	a, b := srv.A, srv.B
	jid := createJudge(t, srv, a, map[string]any{"name": "A's", "template": "ok?"})["id"].(string)
	tomorrow := time.Now().UTC().Add(24 * time.Hour).Format(time.DateOnly)

	tests := []struct {
		name, path, key string
		status          int
		code, message   string
	}{
		{"bad start date", performancePath(a.ProjectID, jid) + "?start_date=yesterday", a.Key, http.StatusBadRequest, "invalid_request", "start_date"},
		{"bad end date", performancePath(a.ProjectID, jid) + "?end_date=2026-13-01", a.Key, http.StatusBadRequest, "invalid_request", "end_date"},
		{"end before start", performancePath(a.ProjectID, jid) + "?start_date=2026-11-02&end_date=2026-11-01", a.Key, http.StatusBadRequest, "invalid_request", "end_date is before"},
		{"start in the future, no end", performancePath(a.ProjectID, jid) + "?start_date=" + tomorrow, a.Key, http.StatusBadRequest, "invalid_request", "start_date is in the future"},
		{"unknown judge", performancePath(a.ProjectID, "nope"), a.Key, http.StatusNotFound, "not_found", "judge"},
		{"another project's judge in one's own project", performancePath(b.ProjectID, jid), b.Key, http.StatusNotFound, "not_found", "judge"},
		{"another project's path", performancePath(a.ProjectID, jid), b.Key, http.StatusForbidden, "forbidden", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := srv.Do(t, "GET", tt.path, tt.key, nil)
			require.Equal(t, tt.status, res.Status, "%s", res.Body)
			assert.Equal(t, tt.code, res.ErrCode(t))
			body := res.Map(t)["error"].(map[string]any)
			assert.NotEmpty(t, body["request_id"])
			assert.Contains(t, body["message"], tt.message)
		})
	}
}
