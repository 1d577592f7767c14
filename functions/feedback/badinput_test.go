package feedback_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/internal/apitest"
)

// TestFeedbackBadInput: every feedback endpoint answers bad input with the error shape and the
// right status, and stores nothing.
func TestFeedbackBadInput(t *testing.T) {
	api := apitest.New(t, apitest.Options{})
	a := api.A
	vid := api.EnsurePrompt(t, a, "bot", "Answer.")
	traceID, spans := ingestTrace(t, api, a, "bot", vid, "", 1)
	span := spans[0]
	scored := api.MustDo(t, "POST", "/projects/"+a.ProjectID+"/judges", a.Key, map[string]any{
		"name": "S", "template": "**Tone**: calm", "evaluation_type": "scored", "score_min": 1, "score_max": 5,
	}).Map(t)["id"].(string)
	binary := api.MustDo(t, "POST", "/projects/"+a.ProjectID+"/judges", a.Key, map[string]any{"name": "B", "template": "ok?"}).Map(t)["id"].(string)
	fp := feedbackPath("bot", span)

	tests := []struct {
		name, method, path string
		body               any
		status             int
		message            string
	}{
		{"no thumbs_up", "POST", fp, map[string]any{"reason": "x"}, 400, "thumbs_up is required"},
		{"null thumbs_up", "POST", fp, map[string]any{"thumbs_up": nil}, 400, "thumbs_up is required"},
		{"thumbs_up as string", "POST", fp, `{"thumbs_up":"yes"}`, 400, "thumbs_up"},
		{"malformed", "POST", fp, `{"thumbs_up":`, 400, ""},
		{"not an object", "POST", fp, `[true]`, 400, ""},
		{"reason too long", "POST", fp, map[string]any{"thumbs_up": true, "reason": strings.Repeat("r", 17<<10)}, 400, "reason"},
		{"expected output too long", "POST", fp, map[string]any{"thumbs_up": true, "expected_output": strings.Repeat("o", 65<<10)}, 400, "expected_output"},
		{"metadata not an object", "POST", fp, map[string]any{"thumbs_up": true, "metadata": []int{1}}, 400, "metadata must be a JSON object"},
		{"body too large", "POST", fp, map[string]any{"thumbs_up": true, "reason": strings.Repeat("r", 600<<10)}, 413, ""},
		{"unknown prompt", "POST", feedbackPath("nope", span), map[string]any{"thumbs_up": true}, 404, "prompt"},
		{"calibration without judge", "POST", fp, map[string]any{"thumbs_up": true, "expected_score": 3}, 400, "needs judge_id"},
		{"unknown judge", "POST", fp, map[string]any{"thumbs_up": true, "judge_id": "nope"}, 404, "judge"},
		{"expected score out of range", "POST", fp, map[string]any{"thumbs_up": true, "judge_id": scored, "expected_score": 9}, 400, "between 1 and 5"},
		{"expected score on binary", "POST", fp, map[string]any{"thumbs_up": true, "judge_id": binary, "expected_score": 1}, 400, "binary"},
		{"score direction", "POST", fp, map[string]any{"thumbs_up": true, "judge_id": scored, "score_direction": "sideways"}, 400, "score_direction"},
		{"unknown criterion", "POST", fp, map[string]any{"thumbs_up": true, "judge_id": scored, "criteria_feedback": map[string]any{"speed": map[string]any{"expected_score": 2}}}, 400, "not a criterion"},
		{"criterion score out of range", "POST", fp, map[string]any{"thumbs_up": true, "judge_id": scored, "criteria_feedback": map[string]any{"tone": map[string]any{"expected_score": 7}}}, 400, "tone"},
		{"unified: bad entity type", "GET", unifiedPath(a.ProjectID, "prompt", span), nil, 400, "entity_type"},
		{"unified: unknown span", "GET", unifiedPath(a.ProjectID, "span", "00000000-0000-4000-8000-000000000000"), nil, 404, "span"},
		{"unified: unknown trace", "GET", unifiedPath(a.ProjectID, "trace", "00000000-0000-4000-8000-000000000000"), nil, 404, "trace"},
		{"unified: unknown session", "GET", unifiedPath(a.ProjectID, "session", "00000000-0000-4000-8000-000000000000"), nil, 404, "session"},
		{"unified: id too long", "GET", unifiedPath(a.ProjectID, "span", strings.Repeat("a", 200)), nil, 400, "entity_id"},
		{"link: unknown prompt", "POST", "/feedback-links", map[string]any{"prompt_slug": "nope", "link_type": "prompt_completion"}, 404, "prompt"},
		{"link: bad slug", "POST", "/feedback-links", map[string]any{"prompt_slug": "Bad Slug", "link_type": "prompt_completion"}, 400, "prompt slug"},
		{"link: no slug", "POST", "/feedback-links", map[string]any{"link_type": "prompt_completion"}, 400, "prompt slug"},
		{"link: other type", "POST", "/feedback-links", map[string]any{"prompt_slug": "bot", "link_type": "session_review"}, 400, "link_type"},
		{"link: no type", "POST", "/feedback-links", map[string]any{"prompt_slug": "bot"}, 400, "link_type"},
		{"link: lifetime too long", "POST", "/feedback-links", map[string]any{"prompt_slug": "bot", "link_type": "prompt_completion", "expires_in_hours": 10000}, 400, "expires_in_hours"},
		{"link: lifetime negative", "POST", "/feedback-links", map[string]any{"prompt_slug": "bot", "link_type": "prompt_completion", "expires_in_hours": -1}, 400, "expires_in_hours"},
		{"revoke: unknown link", "DELETE", "/feedback-links/nope", nil, 404, "feedback link"},
		{"no key", "POST", fp, map[string]any{"thumbs_up": true}, 401, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			key := a.Key
			if tt.name == "no key" {
				key = ""
			}
			res := api.Do(t, tt.method, tt.path, key, tt.body)
			require.Equal(t, tt.status, res.Status, "%s", res.Body)
			body := res.Map(t)["error"].(map[string]any)
			assert.NotEmpty(t, body["request_id"])
			assert.Contains(t, body["message"], tt.message)
		})
	}
	for _, entity := range []struct{ kind, id string }{{"span", span}, {"trace", traceID}} {
		u := api.MustDo(t, "GET", unifiedPath(a.ProjectID, entity.kind, entity.id), a.Key, nil).Map(t)
		assert.Equal(t, 0.0, u["summary"].(map[string]any)["total"], "bad requests stored nothing")
	}
	assert.Equal(t, 0.0, api.MustDo(t, "GET", "/feedback-links", a.Key, nil).Map(t)["count"])
}

// TestFeedbackTenancy: no feedback read or write crosses projects, through span ids, trace and
// session ids, judge ids or links.
func TestFeedbackTenancy(t *testing.T) {
	api := apitest.New(t, apitest.Options{})
	a, b := api.A, api.B
	vid := api.EnsurePrompt(t, a, "bot", "Answer.")
	api.EnsurePrompt(t, b, "bot", "Answer.")
	session := "00000000-0000-4000-8000-00000000000a"
	traceID, spans := ingestTrace(t, api, a, "bot", vid, session, 1)
	span := spans[0]
	jid := api.MustDo(t, "POST", "/projects/"+a.ProjectID+"/judges", a.Key, map[string]any{"name": "A", "template": "ok?"}).Map(t)["id"].(string)
	api.MustDo(t, "POST", feedbackPath("bot", span), a.Key, map[string]any{"thumbs_up": true, "reason": "A's"})
	before := api.MustDo(t, "GET", unifiedPath(a.ProjectID, "trace", traceID), a.Key, nil).Body

	// A's project in the path with B's key: 403.
	for _, kind := range []struct{ kind, id string }{{"span", span}, {"trace", traceID}, {"session", session}} {
		res := api.Do(t, "GET", unifiedPath(a.ProjectID, kind.kind, kind.id), b.Key, nil)
		assert.Equal(t, http.StatusForbidden, res.Status, "%s: %s", kind.kind, res.Body)
	}
	// B's project with A's ids: nothing there.
	for _, kind := range []struct{ kind, id string }{{"trace", traceID}, {"session", session}, {"span", span}} {
		res := api.Do(t, "GET", unifiedPath(b.ProjectID, kind.kind, kind.id), b.Key, nil)
		assert.Equal(t, http.StatusNotFound, res.Status, "%s: %s", kind.kind, res.Body)
	}
	// B's feedback on A's span id lands in B's project only (the span is unknown there), and
	// B cannot use A's judge.
	res := api.MustDo(t, "POST", feedbackPath("bot", span), b.Key, map[string]any{"thumbs_up": false, "reason": "B's"}).Map(t)
	assert.Nil(t, res["prompt_version_id"], "B sees nothing of A's span")
	assert.Nil(t, res["trace_id"])
	assert.Equal(t, http.StatusNotFound, api.Do(t, "POST", feedbackPath("bot", span), b.Key, map[string]any{"thumbs_up": false, "judge_id": jid}).Status)
	assert.JSONEq(t, string(before), string(api.MustDo(t, "GET", unifiedPath(a.ProjectID, "trace", traceID), a.Key, nil).Body), "A's feedback unchanged")
	u := api.MustDo(t, "GET", unifiedPath(a.ProjectID, "span", span), a.Key, nil).Map(t)
	require.Equal(t, 1.0, u["summary"].(map[string]any)["total"])
	assert.Equal(t, "A's", u["items"].([]any)[0].(map[string]any)["reason"])
}
