package feedback_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/internal/apitest"
)

// TestFeedbackNumbersOutOfRange: an expected score that DynamoDB cannot store (1e-200, within
// the judge's range) answered 500; it is a 400 naming the field (shared/bound).
func TestFeedbackNumbersOutOfRange(t *testing.T) {
	api := apitest.New(t, apitest.Options{})
	a := api.A
	vid := api.EnsurePrompt(t, a, "bot", "Answer.")
	_, spans := ingestTrace(t, api, a, "bot", vid, "", 1)
	scored := api.MustDo(t, "POST", "/projects/"+a.ProjectID+"/judges", a.Key, map[string]any{
		"name": "S", "template": "**Tone**: calm", "evaluation_type": "scored", "score_min": -1, "score_max": 5,
	}).Map(t)["id"].(string)
	fp := feedbackPath("bot", spans[0])
	tests := []struct {
		name  string
		body  map[string]any
		field string
	}{
		{"expected_score 1e-200", map[string]any{"thumbs_up": false, "judge_id": scored, "expected_score": 1e-200}, "expected_score"},
		{"criterion expected_score 1e-200", map[string]any{"thumbs_up": false, "judge_id": scored,
			"criteria_feedback": map[string]any{"tone": map[string]any{"expected_score": 1e-200}}}, "tone"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := api.Do(t, "POST", fp, a.Key, tt.body)
			require.Equal(t, http.StatusBadRequest, res.Status, "%s", res.Body)
			assert.Contains(t, res.Map(t)["error"].(map[string]any)["message"], tt.field)
		})
	}
}
