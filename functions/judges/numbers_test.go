package judges_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/internal/apitest"
)

// TestJudgeNumbersOutOfRange: the numeric reproductions of issue 11, defect 1, on judges and
// evaluations. Numbers outside DynamoDB's range passed validation and answered 500; they are
// now a 400 naming the field (shared/bound), or, for a measured value below 1e-12, stored as 0.
func TestJudgeNumbersOutOfRange(t *testing.T) {
	api := apitest.New(t, apitest.Options{})
	a := api.A
	vid := api.EnsurePrompt(t, a, "bot", "Answer.")
	_, spans := ingest(t, api, a, "bot", vid, 2)
	jp := judgesPath(a.ProjectID)
	scored := createJudge(t, api, a, map[string]any{"name": "S", "template": "**Tone**: calm", "evaluation_type": "scored", "score_min": -1})["id"].(string)
	before := api.MustDo(t, "GET", jp, a.Key, nil).Body

	scoredJudge := func(k string, v any) map[string]any {
		return map[string]any{"name": "x", "template": "x", "evaluation_type": "scored", k: v}
	}
	evaluation := func(k string, v any) []any {
		return []any{map[string]any{"span_id": spans[0], "score": 5, k: v}}
	}
	tests := []struct {
		name, method, path string
		body               any
		field              string
	}{
		{"create: score_max 1e200", "POST", jp, scoredJudge("score_max", 1e200), "score_max"},
		{"create: score_min -1e200", "POST", jp, scoredJudge("score_min", -1e200), "score_min"},
		{"create: score_max 2e9", "POST", jp, scoredJudge("score_max", 2e9), "score_max"},
		{"create: pass_threshold 1e-200", "POST", jp, scoredJudge("pass_threshold", 1e-200), "pass_threshold"},
		{"create: sample_rate 1e-200", "POST", jp, map[string]any{"name": "x", "template": "x", "sample_rate": 1e-200}, "sample_rate"},
		{"create: temperature 1e-200", "POST", jp, map[string]any{"name": "x", "template": "x", "temperature": 1e-200}, "temperature"},
		{"patch: score_max 1e200", "PATCH", jp + "/" + scored, map[string]any{"score_max": 1e200}, "score_max"},
		{"record: score 1e-200", "POST", jp + "/" + scored + "/evaluations", []any{map[string]any{"span_id": spans[0], "score": 1e-200}}, "score"},
		{"record: score -1e-200", "POST", jp + "/" + scored + "/evaluations", []any{map[string]any{"span_id": spans[0], "score": -1e-200}}, "score"},
		{"record: evaluation_duration_ms 1e200", "POST", jp + "/" + scored + "/evaluations", evaluation("evaluation_duration_ms", 1e200), "evaluation_duration_ms"},
		{"record: evaluation_duration_ms 1e13", "POST", jp + "/" + scored + "/evaluations", evaluation("evaluation_duration_ms", 1e13), "evaluation_duration_ms"},
		{"record: cost -1", "POST", jp + "/" + scored + "/evaluations", evaluation("cost", -1), "cost"},
		{"record: cost 1e10", "POST", jp + "/" + scored + "/evaluations", evaluation("cost", 1e10), "cost"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := api.Do(t, tt.method, tt.path, a.Key, tt.body)
			require.Equal(t, http.StatusBadRequest, res.Status, "%s", res.Body)
			assert.Contains(t, res.Map(t)["error"].(map[string]any)["message"], tt.field)
		})
	}
	assert.JSONEq(t, string(before), string(api.MustDo(t, "GET", jp, a.Key, nil).Body), "bad requests changed nothing")
	assert.Empty(t, api.MustDo(t, "GET", jp+"/"+scored+"/evaluations", a.Key, nil).Map(t)["evaluations"])

	// A measured value below 1e-12 is stored as 0: confidence_score 1e-300, a duration 1e-200.
	res := api.Do(t, "POST", jp+"/"+scored+"/evaluations", a.Key, []any{map[string]any{
		"span_id": spans[1], "score": 5, "confidence_score": 1e-300, "evaluation_duration_ms": 1e-200,
	}})
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	evs := api.MustDo(t, "GET", jp+"/"+scored+"/evaluations", a.Key, nil).Map(t)["evaluations"].([]any)
	require.Len(t, evs, 1)
	ev := evs[0].(map[string]any)
	assert.Equal(t, 0.0, ev["confidence_score"])
	assert.Equal(t, 0.0, ev["evaluation_duration_ms"])
}
