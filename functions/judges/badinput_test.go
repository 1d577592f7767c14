package judges_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/internal/apitest"
)

// TestJudgesBadInput: every judges endpoint answers bad input with 400 (or the status named)
// and the error shape, and changes nothing.
func TestJudgesBadInput(t *testing.T) {
	api := apitest.New(t, apitest.Options{})
	a := api.A
	vid := api.EnsurePrompt(t, a, "bot", "Answer.")
	_, spans := ingest(t, api, a, "bot", vid, 2)
	scored := createJudge(t, api, a, map[string]any{"name": "S", "template": "**Tone**: calm", "evaluation_type": "scored"})["id"].(string)
	binary := createJudge(t, api, a, map[string]any{"name": "B", "template": "ok?"})["id"].(string)
	jp := judgesPath(a.ProjectID)
	before := api.MustDo(t, "GET", jp, a.Key, nil).Body

	tests := []struct {
		name, method, path string
		body               any
		status             int
		message            string
	}{
		{"create: not an object", "POST", jp, `[1]`, 400, "JSON object"},
		{"create: malformed", "POST", jp, `{"name":`, 400, "JSON object"},
		{"create: no name", "POST", jp, map[string]any{"template": "x"}, 400, "name is required"},
		{"create: no template", "POST", jp, map[string]any{"name": "x"}, 400, "template is required"},
		{"create: name of wrong type", "POST", jp, map[string]any{"name": 3, "template": "x"}, 400, "name: must be a string"},
		{"create: unknown type", "POST", jp, map[string]any{"name": "x", "template": "x", "evaluation_type": "ternary"}, 400, "evaluation_type"},
		{"create: range on binary", "POST", jp, map[string]any{"name": "x", "template": "x", "score_max": 5}, 400, "scored judges only"},
		{"create: min above max", "POST", jp, map[string]any{"name": "x", "template": "x", "evaluation_type": "scored", "score_min": 5, "score_max": 1}, 400, "score_min must be below"},
		{"create: threshold out of range", "POST", jp, map[string]any{"name": "x", "template": "x", "evaluation_type": "scored", "pass_threshold": 11}, 400, "pass_threshold"},
		{"create: sample rate", "POST", jp, map[string]any{"name": "x", "template": "x", "sample_rate": 1.5}, 400, "sample_rate"},
		{"create: temperature", "POST", jp, map[string]any{"name": "x", "template": "x", "temperature": -1}, 400, "temperature"},
		{"create: tag filter match", "POST", jp, map[string]any{"name": "x", "template": "x", "tag_filter": map[string]any{"tags": map[string]any{"env": []string{"prod"}}, "match": "most"}}, 400, "tag_filter.match"},
		{"create: empty tag filter", "POST", jp, map[string]any{"name": "x", "template": "x", "tag_filter": map[string]any{"tags": map[string]any{}}}, 400, "tag_filter.tags"},
		{"create: bad target prompt", "POST", jp, map[string]any{"name": "x", "template": "x", "target_prompt": "Not A Slug"}, 400, "target_prompt"},
		{"create: criterion key", "POST", jp, map[string]any{"name": "x", "template": "x", "criteria": []any{map[string]any{"key": "Bad Key"}}}, 400, "lower snake case"},
		{"create: repeated criterion", "POST", jp, map[string]any{"name": "x", "template": "x", "criteria": []any{map[string]any{"key": "a"}, map[string]any{"key": "a"}}}, 400, "repeated"},
		{"create: template too long", "POST", jp, map[string]any{"name": "x", "template": strings.Repeat("x", 33<<10)}, 400, "template must have"},
		{"create: body too large", "POST", jp, map[string]any{"name": "x", "template": strings.Repeat("x", 300<<10)}, 413, ""},
		{"create: not JSON", "POST", jp, "name=x", 400, "JSON object"},
		{"patch: unknown judge", "PATCH", jp + "/nope", map[string]any{"paused": true}, 404, "judge"},
		{"patch: bad sample rate", "PATCH", jp + "/" + binary, map[string]any{"sample_rate": -0.1}, 400, "sample_rate"},
		{"patch: score on binary", "PATCH", jp + "/" + binary, map[string]any{"pass_threshold": 3}, 400, "scored judges only"},
		{"get: unknown judge", "GET", jp + "/nope", nil, 404, "judge"},
		{"criteria: unknown judge", "GET", jp + "/nope/criteria", nil, 404, "judge"},
		{"evaluations: limit 0", "GET", jp + "/" + scored + "/evaluations?limit=0", nil, 400, "limit"},
		{"evaluations: limit 501", "GET", jp + "/" + scored + "/evaluations?limit=501", nil, 400, "limit"},
		{"evaluations: offset -1", "GET", jp + "/" + scored + "/evaluations?offset=-1", nil, 400, "offset"},
		{"evaluations: bad date", "GET", jp + "/" + scored + "/evaluations?start_date=yesterday", nil, 400, "start_date"},
		{"evaluations: end before start", "GET", jp + "/" + scored + "/evaluations?start_date=2026-11-02&end_date=2026-11-01", nil, 400, "end_date is before"},
		{"evaluations: bad result", "GET", jp + "/" + scored + "/evaluations?evaluation_result=maybe", nil, 400, "evaluation_result"},
		{"evaluations: bad feedback state", "GET", jp + "/" + scored + "/evaluations?feedback_state=some", nil, 400, "feedback_state"},
		{"evaluations: unknown judge", "GET", jp + "/nope/evaluations", nil, 404, "judge"},
		{"record: not an array", "POST", jp + "/" + scored + "/evaluations", map[string]any{"span_id": spans[0]}, 400, ""},
		{"record: empty", "POST", jp + "/" + scored + "/evaluations", []any{}, 400, "non-empty"},
		{"record: no span", "POST", jp + "/" + scored + "/evaluations", []any{map[string]any{"score": 5}}, 400, "span_id is required"},
		{"record: unknown span", "POST", jp + "/" + scored + "/evaluations", []any{map[string]any{"span_id": "00000000-0000-4000-8000-000000000000", "score": 5}}, 404, "span"},
		{"record: score missing", "POST", jp + "/" + scored + "/evaluations", []any{map[string]any{"span_id": spans[0]}}, 400, "score is required"},
		{"record: score out of range", "POST", jp + "/" + scored + "/evaluations", []any{map[string]any{"span_id": spans[0], "score": 11}}, 400, "between 0 and 10"},
		{"record: score on binary", "POST", jp + "/" + binary + "/evaluations", []any{map[string]any{"span_id": spans[0], "score": 1, "evaluation_result": true}}, 400, "binary"},
		{"record: no result on binary", "POST", jp + "/" + binary + "/evaluations", []any{map[string]any{"span_id": spans[0]}}, 400, "evaluation_result"},
		{"record: confidence", "POST", jp + "/" + binary + "/evaluations", []any{map[string]any{"span_id": spans[0], "evaluation_result": true, "confidence_score": 2}}, 400, "confidence_score"},
		{"record: unknown criterion", "POST", jp + "/" + scored + "/evaluations", []any{map[string]any{"span_id": spans[0], "score": 5, "criteria_scores": map[string]any{"speed": map[string]any{"score": 1}}}}, 400, "not a criterion"},
		{"record: duplicate span", "POST", jp + "/" + binary + "/evaluations", []any{map[string]any{"span_id": spans[0], "evaluation_result": true}, map[string]any{"span_id": spans[0], "evaluation_result": false}}, 400, "evaluates a span once"},
		{"record: unknown judge", "POST", jp + "/nope/evaluations", []any{map[string]any{"span_id": spans[0], "evaluation_result": true}}, 404, "judge"},
		{"span evaluations: unknown span", "GET", "/projects/" + a.ProjectID + "/spans/nope/evaluations", nil, 404, "span"},
		{"link: unknown judge", "PUT", "/projects/" + a.ProjectID + "/prompts/bot/judges/nope", nil, 404, "judge"},
		{"link: unknown prompt", "PUT", "/projects/" + a.ProjectID + "/prompts/nope/judges/" + scored, nil, 404, "prompt"},
		{"unlink: unknown judge", "DELETE", "/projects/" + a.ProjectID + "/prompts/bot/judges/nope", nil, 404, "judge"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := api.Do(t, tt.method, tt.path, a.Key, tt.body)
			require.Equal(t, tt.status, res.Status, "%s", res.Body)
			body := res.Map(t)["error"].(map[string]any)
			assert.NotEmpty(t, body["request_id"])
			assert.Contains(t, body["message"], tt.message)
		})
	}
	assert.JSONEq(t, string(before), string(api.MustDo(t, "GET", jp, a.Key, nil).Body), "bad requests changed nothing")
	assert.Empty(t, api.MustDo(t, "GET", jp+"/"+scored+"/evaluations", a.Key, nil).Map(t)["evaluations"])
}

// TestJudgesTenancy: nothing of project A's judges is reachable with project B's key.
func TestJudgesTenancy(t *testing.T) {
	api := apitest.New(t, apitest.Options{})
	a, b := api.A, api.B
	vid := api.EnsurePrompt(t, a, "bot", "Answer.")
	api.EnsurePrompt(t, b, "bot", "Answer.")
	_, spans := ingest(t, api, a, "bot", vid, 1)
	jid := createJudge(t, api, a, map[string]any{"name": "A's", "template": "ok?"})["id"].(string)
	api.MustDo(t, "POST", judgesPath(a.ProjectID)+"/"+jid+"/evaluations", a.Key, []any{map[string]any{"span_id": spans[0], "evaluation_result": true}})
	bJudge := createJudge(t, api, b, map[string]any{"name": "B's", "template": "ok?"})["id"].(string)
	before := api.MustDo(t, "GET", judgesPath(a.ProjectID)+"/"+jid, a.Key, nil).Body

	// A's project in the path with B's key: 403 on every route.
	for _, r := range []struct{ method, path string }{
		{"GET", judgesPath(a.ProjectID)}, {"POST", judgesPath(a.ProjectID)},
		{"GET", judgesPath(a.ProjectID) + "/" + jid}, {"PATCH", judgesPath(a.ProjectID) + "/" + jid},
		{"GET", judgesPath(a.ProjectID) + "/" + jid + "/criteria"},
		{"GET", judgesPath(a.ProjectID) + "/" + jid + "/evaluations"}, {"POST", judgesPath(a.ProjectID) + "/" + jid + "/evaluations"},
		{"GET", "/projects/" + a.ProjectID + "/spans/" + spans[0] + "/evaluations"},
		{"PUT", "/projects/" + a.ProjectID + "/prompts/bot/judges/" + jid}, {"DELETE", "/projects/" + a.ProjectID + "/prompts/bot/judges/" + jid},
	} {
		res := api.Do(t, r.method, r.path, b.Key, map[string]any{"paused": true})
		assert.Equal(t, http.StatusForbidden, res.Status, "%s %s: %s", r.method, r.path, res.Body)
	}
	// B's own project with A's ids: not found.
	for _, r := range []struct {
		method, path string
		body         any
	}{
		{"GET", judgesPath(b.ProjectID) + "/" + jid, nil},
		{"PATCH", judgesPath(b.ProjectID) + "/" + jid, map[string]any{"paused": true}},
		{"GET", judgesPath(b.ProjectID) + "/" + jid + "/evaluations", nil},
		{"POST", judgesPath(b.ProjectID) + "/" + jid + "/evaluations", []any{map[string]any{"span_id": spans[0], "evaluation_result": false}}},
		{"GET", "/projects/" + b.ProjectID + "/spans/" + spans[0] + "/evaluations", nil},
		{"PUT", "/projects/" + b.ProjectID + "/prompts/bot/judges/" + jid, nil},
		// B's judge on A's span: the span is not B's.
		{"POST", judgesPath(b.ProjectID) + "/" + bJudge + "/evaluations", []any{map[string]any{"span_id": spans[0], "evaluation_result": false}}},
	} {
		res := api.Do(t, r.method, r.path, b.Key, r.body)
		assert.Equal(t, http.StatusNotFound, res.Status, "%s %s: %s", r.method, r.path, res.Body)
	}
	assert.Equal(t, string(before), string(api.MustDo(t, "GET", judgesPath(a.ProjectID)+"/"+jid, a.Key, nil).Body))
	evs := api.MustDo(t, "GET", "/projects/"+a.ProjectID+"/spans/"+spans[0]+"/evaluations", a.Key, nil).Map(t)["evaluations"].([]any)
	require.Len(t, evs, 1)
	assert.Equal(t, true, evs[0].(map[string]any)["evaluation_result"], "A's evaluation unchanged")
	assert.Equal(t, 0.0, api.MustDo(t, "GET", judgesPath(b.ProjectID)+"/"+bJudge, b.Key, nil).Map(t)["evaluation_count"])
}
