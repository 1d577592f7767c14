package prompts_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/shared/prompt"
)

// TestTenancy sends a key of project A at every prompt route of project B. Project-scoped
// routes answer 403; the others are scoped by the key's own project and so cannot see B's
// prompt (404) or, for ensure, write into A's own namespace only. B's data is unchanged.
func TestTenancy(t *testing.T) {
	api := newTestAPI(t)
	a, b := api.a, api.b
	bContent := "B's secret prompt"
	ensured := api.do(t, "POST", ensurePath, b.key, map[string]any{"content": bContent, "model_id": "gpt-4o"})
	require.Equal(t, http.StatusOK, ensured.status)
	bVersionID := ensured.body["id"].(string)
	require.Equal(t, http.StatusOK, api.do(t, "POST", "/projects/"+b.projectID+"/prompts/support-bot/tags/production:pin", b.key, map[string]any{"version": 1}).status)

	bp := "/projects/" + b.projectID + "/prompts"
	tests := []struct {
		pattern      string // the route under attack, as registered
		method, path string
		body         any
		status       int
	}{
		{"GET /v1/prompts/{slug}", "GET", "/v1/prompts/support-bot", nil, 404},
		{"GET /v1/prompts/{slug}", "GET", "/v1/prompts/support-bot?tag=production", nil, 404},
		{"GET /v1/prompts/{slug}", "GET", "/v1/prompts/support-bot?version=1", nil, 404},
		{"GET /v1/tasks/{task}/prompt/versions/by-hash/{hash}", "GET", "/v1/tasks/support-bot/prompt/versions/by-hash/" + prompt.Hash(bContent), nil, 404},
		{"GET /v1/tasks/{task}/prompt/latest", "GET", "/v1/tasks/support-bot/prompt/latest", nil, 404},
		{"GET /v1/prompt-versions/{version_id}/model", "GET", "/v1/prompt-versions/" + bVersionID + "/model", nil, 404},
		{"GET /projects/{project_id}/prompts", "GET", bp, nil, 403},
		{"GET /projects/{project_id}/prompts/{slug}/versions", "GET", bp + "/support-bot/versions", nil, 403},
		{"PATCH /projects/{project_id}/prompts/{slug}/versions/{version}", "PATCH", bp + "/support-bot/versions/1", map[string]any{"model_id": "evil"}, 403},
		{"GET /projects/{project_id}/prompts/{slug}/tags", "GET", bp + "/support-bot/tags", nil, 403},
		{"POST /projects/{project_id}/prompts/{slug}/tags/{tag_action}", "POST", bp + "/support-bot/tags/production:pin", map[string]any{"version": 1}, 403},
		{"POST /projects/{project_id}/prompts/{slug}/tags/{tag_action}", "POST", bp + "/support-bot/tags/evil:pin", map[string]any{"version": 1}, 403},
		// Ensure has no project in its path: it writes into the caller's own project, never B's.
		{"POST /v1/tasks/{task}/prompt/versions/ensure", "POST", ensurePath, map[string]any{"content": "A's own text"}, 200},
	}
	covered := map[string]bool{}
	for _, tt := range tests {
		covered[tt.pattern] = true
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			res := api.do(t, tt.method, tt.path, a.key, tt.body)
			assert.Equal(t, tt.status, res.status, "body: %s", res.raw)
		})
	}
	for _, rt := range api.routes() {
		if rt.Open {
			continue // GET /healthz
		}
		assert.True(t, covered[rt.Pattern], "route %s has no tenancy case", rt.Pattern)
	}

	// A's ensure landed in A's project as A's version 1; B still has exactly its own version.
	aLatest := api.do(t, "GET", "/v1/tasks/support-bot/prompt/latest", a.key, nil)
	assert.Equal(t, a.projectID, aLatest.body["project_id"])
	assert.EqualValues(t, 1, aLatest.body["version"])
	bVersions := api.do(t, "GET", bp+"/support-bot/versions", b.key, nil)
	require.Len(t, bVersions.list, 1)
	assert.Equal(t, bContent, bVersions.list[0].(map[string]any)["content"])
	assert.Equal(t, "gpt-4o", bVersions.list[0].(map[string]any)["model_id"])
	bTags := api.do(t, "GET", bp+"/support-bot/tags", b.key, nil)
	assert.Len(t, bTags.list, 2, "latest and production only; no evil tag")
	bList := api.do(t, "GET", bp, b.key, nil)
	assert.Len(t, bList.list, 1)
}
