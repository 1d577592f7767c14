package prompts_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/functions/prompts"
	"github.com/plumehq/plume/shared/prompt"
)

const ensurePath = "/v1/tasks/support-bot/prompt/versions/ensure"

// TestWalkthrough is a first session with prompts (docs/prompts.md): ensure, dedupe,
// normalise, a second version, latest, pin production, fetch by tag.
func TestWalkthrough(t *testing.T) {
	api := newTestAPI(t)
	key, pid := api.a.key, api.a.projectID

	v1 := api.do(t, "POST", ensurePath, key, map[string]any{"content": "You are helpful.\nBe brief."})
	require.Equal(t, http.StatusOK, v1.status, string(v1.raw))
	assert.EqualValues(t, 1, v1.body["version"])
	assert.Equal(t, prompt.Hash("You are helpful.\nBe brief."), v1.body["content_hash"])

	for _, variant := range []string{
		"You are helpful.\nBe brief.",
		"You are helpful.\r\nBe brief.\r\n",
		"  You are helpful.   \rBe brief.\t\n\n",
	} {
		again := api.do(t, "POST", ensurePath, key, map[string]any{"content": variant})
		require.Equal(t, http.StatusOK, again.status)
		assert.Equal(t, v1.body["id"], again.body["id"], "variant %q", variant)
		assert.EqualValues(t, 1, again.body["version"])
		assert.Equal(t, "false", again.header.Get("X-Plume-Created"))
	}

	v2 := api.do(t, "POST", ensurePath, key, map[string]any{"content": "You are terse."})
	require.Equal(t, http.StatusOK, v2.status)
	assert.EqualValues(t, 2, v2.body["version"])
	assert.NotEqual(t, v1.body["id"], v2.body["id"])

	latest := api.do(t, "GET", "/v1/tasks/support-bot/prompt/latest", key, nil)
	require.Equal(t, http.StatusOK, latest.status)
	assert.EqualValues(t, 2, latest.body["version"])

	pin := api.do(t, "POST", "/projects/"+pid+"/prompts/support-bot/tags/production:pin", key, map[string]any{"version": 1})
	require.Equal(t, http.StatusOK, pin.status, string(pin.raw))
	assert.Equal(t, "production", pin.body["tag"])
	assert.EqualValues(t, 1, pin.body["version"])
	assert.Equal(t, v1.body["id"], pin.body["version_id"])
	assert.Nil(t, pin.body["previous_version"])

	prod := api.do(t, "GET", "/v1/prompts/support-bot?tag=production", key, nil)
	require.Equal(t, http.StatusOK, prod.status)
	assert.EqualValues(t, 1, prod.body["version"])
	assert.Equal(t, "production", prod.body["tag"])
	assert.Equal(t, false, prod.body["is_latest"])

	def := api.do(t, "GET", "/v1/prompts/support-bot", key, nil)
	assert.EqualValues(t, 2, def.body["version"])
	assert.Equal(t, "latest", def.body["tag"])
	assert.Equal(t, true, def.body["is_latest"])

	both := api.do(t, "GET", "/v1/prompts/support-bot?tag=production&version=2", key, nil)
	assert.EqualValues(t, 2, both.body["version"], "version wins over tag")

	repin := api.do(t, "POST", "/projects/"+pid+"/prompts/support-bot/tags/production:pin", key, map[string]any{"version": 2})
	require.Equal(t, http.StatusOK, repin.status)
	assert.EqualValues(t, 1, repin.body["previous_version"])

	tags := api.do(t, "GET", "/projects/"+pid+"/prompts/support-bot/tags", key, nil)
	require.Equal(t, http.StatusOK, tags.status)
	require.Len(t, tags.list, 2)
	assert.Equal(t, "latest", tags.list[0].(map[string]any)["tag"])
	assert.EqualValues(t, 2, tags.list[0].(map[string]any)["version"])
	assert.Equal(t, "production", tags.list[1].(map[string]any)["tag"])

	versions := api.do(t, "GET", "/projects/"+pid+"/prompts/support-bot/versions", key, nil)
	require.Len(t, versions.list, 2)
	assert.EqualValues(t, 1, versions.list[0].(map[string]any)["version"])

	byHash := api.do(t, "GET", "/v1/tasks/support-bot/prompt/versions/by-hash/"+prompt.Hash("You are terse."), key, nil)
	require.Equal(t, http.StatusOK, byHash.status)
	assert.Equal(t, v2.body["id"], byHash.body["id"])

	list := api.do(t, "GET", "/projects/"+pid+"/prompts", key, nil)
	require.Equal(t, http.StatusOK, list.status)
	require.Len(t, list.list, 1)
	entry := list.list[0].(map[string]any)
	assert.Equal(t, "support-bot", entry["slug"])
	assert.EqualValues(t, 2, entry["latest_version"].(map[string]any)["version"])
}

// TestSDKResponseFields checks every field the zeroeval SDKs read (COMPAT.md "Prompt responses").
func TestSDKResponseFields(t *testing.T) {
	api := newTestAPI(t)
	content := "Hello {{name}}"
	// The Python SDK's exact ensure body.
	ensured := api.do(t, "POST", ensurePath, api.a.key, map[string]any{
		"content": content, "content_hash": prompt.Hash(content), "metadata": nil, "model_id": nil,
	})
	require.Equal(t, http.StatusOK, ensured.status, string(ensured.raw))

	got := api.do(t, "GET", "/v1/prompts/support-bot", api.a.key, nil)
	require.Equal(t, http.StatusOK, got.status)
	b := got.body
	for _, field := range []string{"id", "version_id", "prompt_id", "task_id", "project_id", "prompt", "content",
		"content_hash", "version", "model_id", "model", "metadata", "tag", "is_latest", "created_at", "updated_at", "created_by"} {
		assert.Contains(t, b, field)
	}
	assert.Equal(t, b["id"], b["version_id"])
	assert.Equal(t, "support-bot", b["prompt"])
	assert.Equal(t, api.a.projectID, b["project_id"])
	assert.Equal(t, api.a.userID, b["created_by"])
	assert.Equal(t, map[string]any{}, b["metadata"])
	assert.Nil(t, b["model_id"])
	assert.Equal(t, content, b["content"], "{{var}} tokens untouched")

	// Metadata and a bound model round-trip; the TypeScript SDK omits metadata.
	withMeta := api.do(t, "POST", "/v1/tasks/other/prompt/versions/ensure", api.a.key, map[string]any{
		"content": "x", "model_id": "gpt-4o-mini", "metadata": map[string]any{"team": "support", "n": 1.5, "nested": map[string]any{"a": []int{1, 2}}},
	})
	require.Equal(t, http.StatusOK, withMeta.status, string(withMeta.raw))
	assert.Equal(t, map[string]any{"team": "support", "n": 1.5, "nested": map[string]any{"a": []any{float64(1), float64(2)}}}, withMeta.body["metadata"])
	assert.Equal(t, "gpt-4o-mini", withMeta.body["model"])

	model := api.do(t, "GET", fmt.Sprintf("/v1/prompt-versions/%s/model", withMeta.body["id"]), api.a.key, nil)
	require.Equal(t, http.StatusOK, model.status)
	assert.Equal(t, map[string]any{"version_id": withMeta.body["id"], "model": "gpt-4o-mini", "model_id": "gpt-4o-mini", "provider": "openai"}, model.body)

	unbind := api.do(t, "PATCH", "/projects/"+api.a.projectID+"/prompts/other/versions/1", api.a.key, map[string]any{"model_id": nil})
	require.Equal(t, http.StatusOK, unbind.status, string(unbind.raw))
	model = api.do(t, "GET", fmt.Sprintf("/v1/prompt-versions/%s/model", withMeta.body["id"]), api.a.key, nil)
	assert.Equal(t, map[string]any{"version_id": withMeta.body["id"], "model": nil, "model_id": nil, "provider": nil}, model.body)

	bind := api.do(t, "PATCH", "/projects/"+api.a.projectID+"/prompts/other/versions/1", api.a.key, map[string]any{"model_id": "claude-3-5-haiku-latest"})
	require.Equal(t, http.StatusOK, bind.status)
	assert.Equal(t, "claude-3-5-haiku-latest", bind.body["model_id"])
	model = api.do(t, "GET", fmt.Sprintf("/v1/prompt-versions/%s/model", withMeta.body["id"]), api.a.key, nil)
	assert.Equal(t, "anthropic", model.body["provider"])
}

// TestBadInput sends every kind of bad request; each gets the error shape with the right
// status, and nothing is written.
func TestBadInput(t *testing.T) {
	api := newTestAPI(t)
	key, pid := api.a.key, api.a.projectID
	seed := api.do(t, "POST", ensurePath, key, map[string]any{"content": "v1"})
	require.Equal(t, http.StatusOK, seed.status)
	pin := "/projects/" + pid + "/prompts/support-bot/tags/production:pin"
	patch := "/projects/" + pid + "/prompts/support-bot/versions/1"

	tests := []struct {
		name         string
		method, path string
		body         any
		contentType  string
		status       int
		code         string
	}{
		{"malformed JSON", "POST", ensurePath, `{"content": "x"`, "", 400, "invalid_request"},
		{"not JSON at all", "POST", ensurePath, `content=x`, "", 400, "invalid_request"},
		{"empty body", "POST", ensurePath, ``, "", 400, "invalid_request"},
		{"two JSON values", "POST", ensurePath, `{"content":"a"} {"content":"b"}`, "", 400, "invalid_request"},
		{"array body", "POST", ensurePath, `["x"]`, "", 400, "invalid_request"},
		{"missing content", "POST", ensurePath, map[string]any{"content_hash": prompt.Hash("x")}, "", 400, "invalid_request"},
		{"null content", "POST", ensurePath, map[string]any{"content": nil}, "", 400, "invalid_request"},
		{"numeric content", "POST", ensurePath, map[string]any{"content": 42}, "", 400, "invalid_request"},
		{"object content", "POST", ensurePath, map[string]any{"content": map[string]any{}}, "", 400, "invalid_request"},
		{"blank content", "POST", ensurePath, map[string]any{"content": " \r\n\t "}, "", 400, "invalid_request"},
		{"hash mismatch", "POST", ensurePath, map[string]any{"content": "new text", "content_hash": prompt.Hash("other text")}, "", 400, "invalid_request"},
		{"hash not hex", "POST", ensurePath, map[string]any{"content": "new text", "content_hash": "xyz"}, "", 400, "invalid_request"},
		{"metadata not an object", "POST", ensurePath, map[string]any{"content": "new text", "metadata": []int{1}}, "", 400, "invalid_request"},
		{"model_id not a string", "POST", ensurePath, map[string]any{"content": "new text", "model_id": 4}, "", 400, "invalid_request"},
		{"model_id empty", "POST", ensurePath, map[string]any{"content": "new text", "model_id": ""}, "", 400, "invalid_request"},
		{"content too large", "POST", ensurePath, map[string]any{"content": strings.Repeat("x", prompt.MaxContentBytes+1)}, "", 400, "invalid_request"},
		{"body too large", "POST", ensurePath, `{"content": "` + strings.Repeat("x", prompts.BodyLimit) + `"}`, "", 413, "payload_too_large"},
		{"wrong content type", "POST", ensurePath, map[string]any{"content": "new text"}, "text/plain", 415, "unsupported_media_type"},
		{"uppercase slug", "POST", "/v1/tasks/Support/prompt/versions/ensure", map[string]any{"content": "new text"}, "", 400, "invalid_request"},
		{"underscore slug", "GET", "/v1/prompts/support_bot", nil, "", 400, "invalid_request"},
		{"invalid tag", "GET", "/v1/prompts/support-bot?tag=Prod!", nil, "", 400, "invalid_request"},
		{"version zero", "GET", "/v1/prompts/support-bot?version=0", nil, "", 400, "invalid_request"},
		{"version negative", "GET", "/v1/prompts/support-bot?version=-1", nil, "", 400, "invalid_request"},
		{"version not a number", "GET", "/v1/prompts/support-bot?version=two", nil, "", 400, "invalid_request"},
		{"unknown version", "GET", "/v1/prompts/support-bot?version=7", nil, "", 404, "not_found"},
		{"unknown tag", "GET", "/v1/prompts/support-bot?tag=staging", nil, "", 404, "not_found"},
		{"unknown prompt", "GET", "/v1/prompts/nope", nil, "", 404, "not_found"},
		{"unknown prompt latest", "GET", "/v1/tasks/nope/prompt/latest", nil, "", 404, "not_found"},
		{"unknown hash", "GET", "/v1/tasks/support-bot/prompt/versions/by-hash/" + prompt.Hash("zzz"), nil, "", 404, "not_found"},
		{"bad hash", "GET", "/v1/tasks/support-bot/prompt/versions/by-hash/abc", nil, "", 400, "invalid_request"},
		{"unknown version id", "GET", "/v1/prompt-versions/8d3f0f4e-0000-4000-8000-000000000000/model", nil, "", 404, "not_found"},
		{"pin latest", "POST", "/projects/" + pid + "/prompts/support-bot/tags/latest:pin", map[string]any{"version": 1}, "", 400, "invalid_request"},
		{"pin version zero", "POST", pin, map[string]any{"version": 0}, "", 400, "invalid_request"},
		{"pin version negative", "POST", pin, map[string]any{"version": -3}, "", 400, "invalid_request"},
		{"pin version fraction", "POST", pin, map[string]any{"version": 1.5}, "", 400, "invalid_request"},
		{"pin version missing", "POST", pin, map[string]any{}, "", 400, "invalid_request"},
		{"pin version null", "POST", pin, map[string]any{"version": nil}, "", 400, "invalid_request"},
		{"pin unknown version", "POST", pin, map[string]any{"version": 9}, "", 404, "not_found"},
		{"pin unknown prompt", "POST", "/projects/" + pid + "/prompts/nope/tags/production:pin", map[string]any{"version": 1}, "", 404, "not_found"},
		{"pin invalid tag", "POST", "/projects/" + pid + "/prompts/support-bot/tags/Prod:pin", map[string]any{"version": 1}, "", 400, "invalid_request"},
		{"tag action other than pin", "POST", "/projects/" + pid + "/prompts/support-bot/tags/production:delete", map[string]any{"version": 1}, "", 404, "not_found"},
		{"patch without model_id", "PATCH", patch, map[string]any{"model": "gpt-4o"}, "", 400, "invalid_request"},
		{"patch numeric model_id", "PATCH", patch, map[string]any{"model_id": 5}, "", 400, "invalid_request"},
		{"patch unknown version", "PATCH", "/projects/" + pid + "/prompts/support-bot/versions/4", map[string]any{"model_id": "gpt-4o"}, "", 404, "not_found"},
		{"patch version zero", "PATCH", "/projects/" + pid + "/prompts/support-bot/versions/0", map[string]any{"model_id": "gpt-4o"}, "", 400, "invalid_request"},
		{"versions of unknown prompt", "GET", "/projects/" + pid + "/prompts/nope/versions", nil, "", 404, "not_found"},
		{"unknown route", "GET", "/v1/nothing-here", nil, "", 404, "not_found"},
		{"wrong method", "DELETE", "/v1/prompts/support-bot", nil, "", 404, "not_found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := api.doWithType(t, tt.method, tt.path, key, tt.body, tt.contentType)
			assert.Equal(t, tt.status, res.status, "body: %s", res.raw)
			assert.Equal(t, tt.code, res.errCode(), "body: %s", res.raw)
			e, _ := res.body["error"].(map[string]any)
			assert.NotEmpty(t, e["message"])
			assert.NotEmpty(t, e["request_id"])
			assert.Equal(t, res.header.Get("X-Request-Id"), e["request_id"])
		})
	}

	// Nothing was written by any of them: one version, only the latest tag, no model.
	versions := api.do(t, "GET", "/projects/"+pid+"/prompts/support-bot/versions", key, nil)
	require.Len(t, versions.list, 1)
	assert.Nil(t, versions.list[0].(map[string]any)["model_id"])
	tags := api.do(t, "GET", "/projects/"+pid+"/prompts/support-bot/tags", key, nil)
	assert.Len(t, tags.list, 1)
	list := api.do(t, "GET", "/projects/"+pid+"/prompts", key, nil)
	assert.Len(t, list.list, 1)
}

// doWithType is do with an explicit Content-Type (empty: application/json when there is a body).
func (api *testAPI) doWithType(t testing.TB, method, path, key string, body any, contentType string) response {
	t.Helper()
	if contentType == "" {
		return api.do(t, method, path, key, body)
	}
	orig := api.h
	defer func() { api.h = orig }()
	api.h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Header.Set("Content-Type", contentType)
		orig.ServeHTTP(w, r)
	})
	return api.do(t, method, path, key, body)
}
