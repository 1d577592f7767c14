package stack_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/internal/apitest"
	"github.com/plumehq/plume/internal/stack"
	"github.com/plumehq/plume/internal/webtest"
	"github.com/plumehq/plume/shared/auth"
	"github.com/plumehq/plume/shared/prompt"
)

// validParams are well-formed values of every path wildcard (they need not name anything: the
// bad value of one wildcard is refused before any read). A wildcard missing here fails the test.
func validParams(projectID string) map[string]string {
	id := uuid.NewString()
	return map[string]string{
		"project_id": projectID, "slug": "bot", "task": "bot", "version_id": id,
		"hash": prompt.Hash("x"), "version": "1", "tag_action": "production:pin",
		"span_id": id, "trace_id": id, "completion_id": id, "judge_id": id, "link_id": id, "key_id": id,
		"entity_type": "trace", "entity_id": id, "model...": "gpt-4o",
		"token": "plf_" + strings.Repeat("A", 43), "run_id": id, "run_action": id + ":cancel",
		"webhook_id": "wh_" + id, "delivery_id": "dlv_0000000000000_000000000000",
		"dataset": "capitals", "upload_id": id, "experiment_id": id,
		"signal_entity_type": "span", "test_name": "checkout",
		"monitor_id": "mon_" + id,
		"session_id": id,
	}
}

// TestPathParametersEveryRoute walks every route of every function, read from the functions'
// own routers, and sends each path wildcard in turn a value no key may be built from (3 KB
// long, a control character, invalid UTF-8, uppercase for slugs, empty), the others valid, with a valid key
// of the path's project: every answer is a 4xx, before any DynamoDB or S3 request.
func TestPathParametersEveryRoute(t *testing.T) {
	api := apitest.New(t, apitest.Options{})
	api.MustDo(t, "GET", "/feedback-links", api.A.Key, nil) // A's key into the cache
	valid := validParams(api.A.ProjectID)
	whole, err := stack.Handler(api.Env) // apitest's handler is the REST API only
	require.NoError(t, err)
	whole = api.Applying(whole) // the aggregates follow its writes, as API.Handler's

	cases := 0
	for _, fn := range stack.Functions {
		h, err := fn.Build(api.Env)
		require.NoError(t, err)
		router, ok := h.(*auth.Router)
		require.True(t, ok, "%s: its handler must be an *auth.Router", fn.Name)
		for _, rt := range router.Routes() {
			method, path, ok := strings.Cut(rt.Pattern, " ")
			require.True(t, ok)
			for _, w := range wildcard.FindAllString(path, -1) {
				name := w[1 : len(w)-1]
				if name == "$" { // {$} ends a pattern (POST /signals/{$}): no value
					continue
				}
				_, known := valid[name]
				require.True(t, known, "route %s: no value for wildcard %s; add one to validParams", rt.Pattern, w)
				bad := map[string]string{
					"3 KB":              strings.Repeat("a", 3<<10),
					"control character": "a%01b",
					"empty":             "",
					"invalid UTF-8":     "a%FFb",
				}
				if name == "slug" || name == "task" {
					bad["uppercase"] = "UPPER"
				}
				for kind, value := range bad {
					target := wildcard.ReplaceAllStringFunc(path, func(v string) string {
						if v == w {
							return value
						}
						return valid[v[1:len(v)-1]]
					})
					cases++
					t.Run(fn.Name+" "+rt.Pattern+" "+name+" "+kind, func(t *testing.T) {
						api.DDB.Reset()
						api.S3.Reset()
						res := webtest.Do(t, whole, method, target, api.A.Key, map[string]any{})
						assert.Contains(t, []int{http.StatusBadRequest, http.StatusForbidden, http.StatusNotFound}, res.Status, "body: %.300s", res.Body)
						assert.Zero(t, api.DDB.Total(), "DynamoDB requests for a bad %s: %s", name, api.DDB)
						assert.Zero(t, api.S3.Count("PutObject")+api.S3.Count("GetObject"), "S3 requests for a bad %s", name)
					})
				}
			}
		}
	}
	t.Logf("%d bad path parameters sent", cases)
}

// TestPathParameterRegressions are the long and malformed parameters of issue 11 that reached
// DynamoDB: each answers 4xx without a read.
func TestPathParameterRegressions(t *testing.T) {
	api := apitest.New(t, apitest.Options{})
	a := api.A
	vid := api.EnsurePrompt(t, a, "bot", "Answer.")
	require.NotEmpty(t, vid)
	jid := api.MustDo(t, "POST", "/projects/"+a.ProjectID+"/judges", a.Key, map[string]any{"name": "J", "template": "ok?"}).Map(t)["id"].(string)
	long2k, long1k := strings.Repeat("j", 2100), strings.Repeat("m", 1100)
	jp := "/projects/" + a.ProjectID + "/judges/"
	tests := []struct {
		name, method, path string
		body               any
		status             int
		code               string
	}{
		{"get judge, long id", "GET", jp + long2k, nil, 404, "not_found"},
		{"patch judge, long id", "PATCH", jp + long2k, map[string]any{"paused": true}, 404, "not_found"},
		{"criteria, long id", "GET", jp + long2k + "/criteria", nil, 404, "not_found"},
		{"evaluations, long id", "GET", jp + long2k + "/evaluations", nil, 404, "not_found"},
		{"record, long id", "POST", jp + long2k + "/evaluations", []any{map[string]any{"span_id": uuid.NewString(), "evaluation_result": true}}, 404, "not_found"},
		{"link, long judge id", "PUT", "/projects/" + a.ProjectID + "/prompts/bot/judges/" + long2k, nil, 404, "not_found"},
		{"unlink, long judge id", "DELETE", "/projects/" + a.ProjectID + "/prompts/bot/judges/" + long2k, nil, 404, "not_found"},
		{"link, long slug", "PUT", "/projects/" + a.ProjectID + "/prompts/" + strings.Repeat("s", 2100) + "/judges/" + jid, nil, 400, "invalid_request"},
		{"unlink, uppercase slug", "DELETE", "/projects/" + a.ProjectID + "/prompts/UPPER/judges/" + jid, nil, 400, "invalid_request"},
		{"delete price, long model", "DELETE", "/projects/" + a.ProjectID + "/model-prices/" + long1k, nil, 400, "invalid_request"},
		{"revoke link, long id", "DELETE", "/feedback-links/" + long1k, nil, 404, "not_found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			api.DDB.Reset()
			res := api.Do(t, tt.method, tt.path, a.Key, tt.body)
			assert.Equal(t, tt.status, res.Status, "body: %.300s", res.Body)
			assert.Equal(t, tt.code, res.ErrCode(t))
			assert.Zero(t, api.DDB.Total(), "DynamoDB requests: %s", api.DDB)
		})
	}
}

// TestEmptyPathSegment: an empty id segment answers the JSON 404, not ServeMux's redirect to
// the cleaned path.
func TestEmptyPathSegment(t *testing.T) {
	api := apitest.New(t, apitest.Options{})
	for _, path := range []string{"/spans//attachments", "/projects/" + api.A.ProjectID + "/judges//criteria", "/v1/prompts/./x"} {
		res := api.Do(t, "GET", path, api.A.Key, nil)
		assert.Equal(t, http.StatusNotFound, res.Status, "%s: %s", path, res.Body)
		assert.Equal(t, "not_found", res.ErrCode(t), path)
	}
	whole, err := stack.Handler(api.Env) // apitest's handler is the REST API only
	require.NoError(t, err)
	whole = api.Applying(whole) // the aggregates follow its writes, as API.Handler's
	for _, fn := range stack.Functions {
		h, err := fn.Build(api.Env)
		require.NoError(t, err)
		for _, rt := range h.(*auth.Router).Routes() {
			if !strings.Contains(rt.Pattern, "}/") {
				continue
			}
			method, path, _ := strings.Cut(rt.Pattern, " ")
			target := wildcard.ReplaceAllString(path, "")
			res := webtest.Do(t, whole, method, target, api.A.Key, map[string]any{})
			assert.Contains(t, []int{http.StatusBadRequest, http.StatusNotFound}, res.Status, "%s %s (%s): %.200s", method, target, fn.Name, res.Body)
		}
	}
}
