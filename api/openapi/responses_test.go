package openapi_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/internal/apitest"
)

// TestAnswersMatchSchemas: real requests through the whole REST API (DynamoDB Local); each
// JSON body sent validates against its route's request schema and each answer against the
// response schema of its route and status.
func TestAnswersMatchSchemas(t *testing.T) {
	api := apitest.New(t, apitest.Options{})
	b, doc := document(t)
	c := compiler(t, b)
	a := api.A
	pid := a.ProjectID
	slug := "support-bot"
	spanID, traceID, sessionID := uuid.NewString(), uuid.NewString(), uuid.NewString()
	var versionID, judgeID, contentHash string

	tests := []struct {
		name, method, path, target string
		key                        string
		body                       any
		status                     int
		after                      func(t *testing.T, res apitest.Response)
	}{
		{name: "health", method: "GET", path: "/healthz", target: "/healthz", status: 200},
		{name: "ensure version", method: "POST", path: "/v1/tasks/{task}/prompt/versions/ensure", target: "/v1/tasks/" + slug + "/prompt/versions/ensure",
			body: map[string]any{"content": "Answer {{question}} politely.", "model_id": "openai/gpt-4o-mini", "metadata": map[string]any{"team": "support"}}, status: 200,
			after: func(t *testing.T, res apitest.Response) {
				versionID, contentHash = res.Map(t)["id"].(string), res.Map(t)["content_hash"].(string)
			}},
		{name: "get prompt", method: "GET", path: "/v1/prompts/{slug}", target: "/v1/prompts/" + slug + "?tag=latest", status: 200},
		{name: "list prompts", method: "GET", path: "/projects/{project_id}/prompts", target: "/projects/" + pid + "/prompts", status: 200},
		{name: "pin tag", method: "POST", path: "/projects/{project_id}/prompts/{slug}/tags/{tag}:pin", target: "/projects/" + pid + "/prompts/" + slug + "/tags/production:pin",
			body: map[string]any{"version": 1}, status: 200},
		{name: "post spans", method: "POST", path: "/spans", target: "/spans", status: 200},
		{name: "get traces", method: "GET", path: "/traces", target: "/traces?session_id=" + sessionID, status: 200},
		{name: "get spans", method: "GET", path: "/spans", target: "/spans?trace_id=" + traceID, status: 200},
		{name: "get sessions", method: "GET", path: "/sessions", target: "/sessions", status: 200},
		{name: "feedback", method: "POST", path: "/v1/prompts/{slug}/completions/{completion_id}/feedback", target: "/v1/prompts/" + slug + "/completions/" + spanID + "/feedback",
			body: map[string]any{"thumbs_up": false, "reason": "too terse", "expected_output": "a longer answer"}, status: 200},
		{name: "create judge", method: "POST", path: "/projects/{project_id}/judges", target: "/projects/" + pid + "/judges",
			body: map[string]any{"name": "helpful", "template": "Is the answer helpful?\n{{input}}\n{{output}}", "evaluation_type": "scored", "score_min": 0, "score_max": 10,
				"criteria": []map[string]any{{"key": "tone", "label": "Tone", "description": "polite"}}}, status: 200,
			after: func(t *testing.T, res apitest.Response) { judgeID = res.Map(t)["id"].(string) }},
		{name: "record evaluations", method: "POST", path: "/projects/{project_id}/judges/{judge_id}/evaluations", status: 200},
		{name: "judge evaluations", method: "GET", path: "/projects/{project_id}/judges/{judge_id}/evaluations", status: 200},
		{name: "unified feedback", method: "GET", path: "/projects/{project_id}/feedback/{entity_type}/{entity_id}", target: "/projects/" + pid + "/feedback/trace/" + traceID, status: 200},
		{name: "list judges", method: "GET", path: "/projects/{project_id}/judges", target: "/projects/" + pid + "/judges", status: 200},
		{name: "create feedback link", method: "POST", path: "/feedback-links", target: "/feedback-links", body: map[string]any{"prompt_slug": slug, "link_type": "prompt_completion"}, status: 200},
		{name: "list feedback links", method: "GET", path: "/feedback-links", target: "/feedback-links", status: 200},
		{name: "put model price", method: "PUT", path: "/projects/{project_id}/model-prices/{model}", target: "/projects/" + pid + "/model-prices/acme/model-1",
			body: map[string]any{"input": 1.5, "output": 3}, status: 200},
		{name: "list model prices", method: "GET", path: "/projects/{project_id}/model-prices", target: "/projects/" + pid + "/model-prices", status: 200},
		{name: "version by hash", method: "GET", path: "/v1/tasks/{task}/prompt/versions/by-hash/{hash}", status: 200},
		{name: "latest version", method: "GET", path: "/v1/tasks/{task}/prompt/latest", target: "/v1/tasks/" + slug + "/prompt/latest", status: 200},
		{name: "version model", method: "GET", path: "/v1/prompt-versions/{version_id}/model", status: 200},
		{name: "list versions", method: "GET", path: "/projects/{project_id}/prompts/{slug}/versions", target: "/projects/" + pid + "/prompts/" + slug + "/versions", status: 200},
		{name: "list tags", method: "GET", path: "/projects/{project_id}/prompts/{slug}/tags", target: "/projects/" + pid + "/prompts/" + slug + "/tags", status: 200},
		{name: "unbind model", method: "PATCH", path: "/projects/{project_id}/prompts/{slug}/versions/{version}", target: "/projects/" + pid + "/prompts/" + slug + "/versions/1",
			body: map[string]any{"model_id": nil}, status: 200},
		{name: "get judge", method: "GET", path: "/projects/{project_id}/judges/{judge_id}", status: 200},
		{name: "patch judge", method: "PATCH", path: "/projects/{project_id}/judges/{judge_id}", body: map[string]any{"paused": true, "model": nil}, status: 200},
		{name: "judge criteria", method: "GET", path: "/projects/{project_id}/judges/{judge_id}/criteria", status: 200},
		{name: "judge performance", method: "GET", path: "/projects/{project_id}/judges/{judge_id}/performance", status: 200},
		{name: "judge versions", method: "GET", path: "/projects/{project_id}/judges/{judge_id}/versions", status: 200},
		{name: "judge issues", method: "GET", path: "/projects/{project_id}/judges/{judge_id}/issues", status: 200},
		{name: "judge optimization preview", method: "GET", path: "/projects/{project_id}/judges/{judge_id}/optimization-preview", status: 200},
		{name: "prompt issues", method: "GET", path: "/projects/{project_id}/prompts/{slug}/issues", target: "/projects/" + pid + "/prompts/" + slug + "/issues", status: 200},
		{name: "prompt optimization preview", method: "GET", path: "/projects/{project_id}/prompts/{slug}/optimization-preview",
			target: "/projects/" + pid + "/prompts/" + slug + "/optimization-preview?optimizer_type=dspy_gepa&max_model_calls=500&seed=3", status: 200},
		{name: "bad preview query", method: "GET", path: "/projects/{project_id}/prompts/{slug}/optimization-preview",
			target: "/projects/" + pid + "/prompts/" + slug + "/optimization-preview?seed=x", status: 400},
		{name: "link judge", method: "PUT", path: "/projects/{project_id}/prompts/{slug}/judges/{judge_id}", status: 200},
		{name: "span evaluations", method: "GET", path: "/projects/{project_id}/spans/{span_id}/evaluations", status: 200},
		{name: "unified feedback of a span", method: "GET", path: "/projects/{project_id}/feedback/{entity_type}/{entity_id}", status: 200},
		{name: "calibration feedback", method: "POST", path: "/v1/prompts/{slug}/completions/{completion_id}/feedback",
			body: map[string]any{"thumbs_up": true, "expected_score": 9, "score_direction": "too_low", "criteria_feedback": map[string]any{"tone": map[string]any{"expected_score": 9, "reason": "kind"}}}, status: 200},
		{name: "list attachments", method: "GET", path: "/spans/{span_id}/attachments", target: "/spans/" + spanID + "/attachments", status: 200},
		{name: "get model price", method: "GET", path: "/projects/{project_id}/model-prices/{model}", target: "/projects/" + pid + "/model-prices/acme/model-1", status: 200},
		{name: "get table price", method: "GET", path: "/projects/{project_id}/model-prices/{model}", target: "/projects/" + pid + "/model-prices/gpt-4o-mini", status: 200},
		{name: "gateway status", method: "GET", path: "/projects/{project_id}/gateway", target: "/projects/" + pid + "/gateway", status: 200},
		{name: "delete model price", method: "DELETE", path: "/projects/{project_id}/model-prices/{model}", target: "/projects/" + pid + "/model-prices/acme/model-1", status: 200},
		{name: "list prompt optimizations", method: "GET", path: "/projects/{project_id}/prompts/{slug}/optimization-runs", target: "/projects/" + pid + "/prompts/" + slug + "/optimization-runs", status: 200},
		{name: "unlink judge", method: "DELETE", path: "/projects/{project_id}/prompts/{slug}/judges/{judge_id}", status: 200},
		{name: "post traces", method: "POST", path: "/traces", target: "/traces", status: 200},
		{name: "post sessions", method: "POST", path: "/sessions", target: "/sessions", status: 200},
		{name: "not found", method: "GET", path: "/v1/prompts/{slug}", target: "/v1/prompts/no-such-prompt", status: 404},
		{name: "invalid", method: "POST", path: "/v1/tasks/{task}/prompt/versions/ensure", target: "/v1/tasks/" + slug + "/prompt/versions/ensure", body: map[string]any{"content": 3}, status: 400},
		{name: "unauthenticated", method: "GET", path: "/projects/{project_id}/prompts", target: "/projects/" + pid + "/prompts", key: "-", status: 401},
		{name: "another project", method: "GET", path: "/projects/{project_id}/prompts", target: "/projects/" + api.B.ProjectID + "/prompts", status: 403},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Bodies and targets that need what earlier steps made.
			switch tt.name {
			case "post spans":
				tt.body = []any{apitest.LLMSpan(spanID, traceID, sessionID, slug, versionID, "Where is my order?", "On its way.", time.Now().Add(-time.Minute))}
			case "record evaluations":
				tt.target = "/projects/" + pid + "/judges/" + judgeID + "/evaluations"
				tt.body = []any{map[string]any{"span_id": spanID, "score": 7, "evaluation_reason": "fine", "model_used": "gpt-4o-mini",
					"criteria_scores": map[string]any{"tone": map[string]any{"score": 8, "reason": "polite"}}}}
			case "judge evaluations":
				tt.target = "/projects/" + pid + "/judges/" + judgeID + "/evaluations?limit=10"
			case "version by hash":
				tt.target = "/v1/tasks/" + slug + "/prompt/versions/by-hash/" + contentHash
			case "version model":
				tt.target = "/v1/prompt-versions/" + versionID + "/model"
			case "get judge", "patch judge":
				tt.target = "/projects/" + pid + "/judges/" + judgeID
			case "judge criteria", "judge performance", "judge versions", "judge issues", "judge optimization preview":
				tt.target = "/projects/" + pid + "/judges/" + judgeID + "/" + strings.ReplaceAll(strings.TrimPrefix(tt.name, "judge "), " ", "-")
			case "link judge", "unlink judge":
				tt.target = "/projects/" + pid + "/prompts/" + slug + "/judges/" + judgeID
			case "span evaluations":
				tt.target = "/projects/" + pid + "/spans/" + spanID + "/evaluations"
			case "unified feedback of a span":
				tt.target = "/projects/" + pid + "/feedback/span/" + spanID
			case "calibration feedback":
				tt.target = "/v1/prompts/" + slug + "/completions/" + spanID + "/feedback"
				tt.body.(map[string]any)["judge_id"] = judgeID
			case "post traces":
				tt.body = []any{map[string]any{"id": traceID, "session_id": sessionID, "name": "support chat", "started_at": time.Now().Add(-time.Minute).Format(time.RFC3339Nano), "tags": map[string]any{"env": "prod"}}}
			case "post sessions":
				tt.body = []any{map[string]any{"id": sessionID, "project_id": pid, "name": "a conversation", "tags": map[string]any{"user": "u1"}}}
			}
			key := a.Key
			if tt.key == "-" {
				key = ""
			}
			if tt.body != nil {
				err := validateRequest(t, c, doc, tt.method, tt.path, tt.body)
				if tt.status == http.StatusBadRequest {
					assert.Error(t, err, "the schema lets the invalid request through")
				} else {
					assert.NoError(t, err)
				}
			}
			res := api.Do(t, tt.method, tt.target, key, tt.body)
			require.Equal(t, tt.status, res.Status, "body: %s", res.Body)
			validateAnswer(t, c, doc, tt.method, tt.path, res)
			if tt.after != nil {
				tt.after(t, res)
			}
		})
	}
}

// validateAnswer validates res against the schema of its route and status in the document.
func validateAnswer(t *testing.T, c *jsonschema.Compiler, doc map[string]any, method, path string, res apitest.Response) {
	t.Helper()
	op := operation{Method: method, Path: path}
	_, ok := resolve(doc, "#"+pointer("paths", path, strings.ToLower(method)))
	require.True(t, ok, "%s %s is not in the document", method, path)
	loc := responseLocation(doc, op, strconv.Itoa(res.Status))
	_, ok = resolve(doc, loc)
	require.True(t, ok, "%s %s: status %d is not documented", method, path, res.Status)
	assert.True(t, strings.HasPrefix(res.Header.Get("Content-Type"), "application/json"), "content type %q", res.Header.Get("Content-Type"))
	sch, err := c.Compile(docURL + loc + pointer("content", "application/json", "schema"))
	require.NoError(t, err)
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(res.Body))
	require.NoError(t, err)
	assert.NoError(t, sch.Validate(inst), "%s %s %d: %s", method, path, res.Status, res.Body)
}

// validateRequest validates a JSON body against the request schema of its route.
func validateRequest(t *testing.T, c *jsonschema.Compiler, doc map[string]any, method, path string, body any) error {
	t.Helper()
	loc := "#" + pointer("paths", path, strings.ToLower(method), "requestBody", "content", "application/json", "schema")
	_, ok := resolve(doc, loc)
	require.True(t, ok, "%s %s has no JSON request body", method, path)
	sch, err := c.Compile(docURL + loc)
	require.NoError(t, err)
	b, err := json.Marshal(body)
	require.NoError(t, err)
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	require.NoError(t, err)
	return sch.Validate(inst)
}
