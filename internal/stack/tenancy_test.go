package stack_test

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/internal/apitest"
	"github.com/plumehq/plume/internal/stack"
	"github.com/plumehq/plume/internal/webtest"
	"github.com/plumehq/plume/shared/auth"
	"github.com/plumehq/plume/shared/ddb/ddbtest"
	"github.com/plumehq/plume/shared/prompt"
)

// victim is project B's data, made through the API with B's key: one of everything a route
// can name, and the secrets a leak would show.
type victim struct {
	project, slug, content, versionID                  string
	spanID, traceID, sessionID, judgeID, linkID, model string
	webhookID                                          string
	monitorID                                          string
	// dataset, datasetVersionID, rowID, experimentID and resultID are B's dataset and an
	// experiment on it with one result.
	dataset, datasetVersionID, rowID, experimentID, resultID string
	secrets                                                  []string // what must never reach A
}

func seedVictim(t *testing.T, api *apitest.API) victim {
	t.Helper()
	b := api.B
	v := victim{
		project: b.ProjectID, slug: "b-private-bot", content: "B's private prompt " + uuid.NewString(),
		spanID: uuid.NewString(), traceID: uuid.NewString(), sessionID: uuid.NewString(), model: "b-private-model",
	}
	v.versionID = api.EnsurePrompt(t, b, v.slug, v.content)
	api.MustDo(t, "POST", "/projects/"+b.ProjectID+"/prompts/"+v.slug+"/tags/production:pin", b.Key, map[string]any{"version": 1})
	output := "B's private completion " + uuid.NewString()
	api.MustDo(t, "POST", "/spans", b.Key, []any{apitest.LLMSpan(v.spanID, v.traceID, v.sessionID, v.slug, v.versionID, "B's private input", output, time.Now())})
	v.judgeID = api.MustDo(t, "POST", "/projects/"+b.ProjectID+"/judges", b.Key,
		map[string]any{"name": "B's private judge", "template": "Is it right?"}).Map(t)["id"].(string)
	api.MustDo(t, "PUT", "/projects/"+b.ProjectID+"/prompts/"+v.slug+"/judges/"+v.judgeID, b.Key, nil)
	api.MustDo(t, "POST", "/projects/"+b.ProjectID+"/judges/"+v.judgeID+"/evaluations", b.Key,
		[]any{map[string]any{"span_id": v.spanID, "evaluation_result": true, "evaluation_reason": "B's private verdict"}})
	reason := "B's private feedback " + uuid.NewString()
	api.MustDo(t, "POST", "/v1/prompts/"+v.slug+"/completions/"+v.spanID+"/feedback", b.Key, map[string]any{"thumbs_up": false, "reason": reason})
	v.linkID = api.MustDo(t, "POST", "/feedback-links", b.Key, map[string]any{"prompt_slug": v.slug, "link_type": "prompt_completion"}).Map(t)["id"].(string)
	api.MustDo(t, "PUT", "/projects/"+b.ProjectID+"/model-prices/"+v.model, b.Key, map[string]any{"input": 1, "output": 2})
	// A signal and an A/B choice on B's span (functions/signals).
	api.MustDo(t, "POST", "/ab-choices", b.Key, map[string]any{"entity_type": "span", "entity_id": v.spanID, "choice_name": victimTest,
		"variant_key": "control", "variant_value": "B's private variant", "variants": map[string]any{"control": "B's private variant", "other": "B's other variant"},
		"weights": map[string]any{"control": 0.5, "other": 0.5}, "duration_days": 14})
	api.MustDo(t, "POST", "/signals/bulk", b.Key, map[string]any{"signals": []any{
		map[string]any{"entity_type": "span", "entity_id": v.spanID, "name": "B's private signal", "value": 0.25, "signal_type": "numerical"}}})
	hookURL := "https://hooks.example.com/b-private-" + uuid.NewString()
	v.webhookID = api.MustDo(t, "POST", "/projects/"+b.ProjectID+"/webhooks", b.Key,
		map[string]any{"url": hookURL, "events": []string{"prompt.tag.moved"}}).Map(t)["id"].(string)
	v.monitorID = api.MustDo(t, "POST", "/projects/"+b.ProjectID+"/monitors", b.Key,
		map[string]any{"name": "B's private monitor", "metric": "error_rate", "window": "5m", "comparison": "gt", "threshold": 0.1}).Map(t)["id"].(string)
	v.dataset = "b-private-data"
	api.MustDo(t, "POST", "/v1/datasets", b.Key, map[string]any{"name": v.dataset})
	v.datasetVersionID = api.MustDo(t, "POST", "/v1/datasets/"+v.dataset+"/data", b.Key,
		map[string]any{"data": []any{map[string]any{"q": "B's private row"}}}).Map(t)["id"].(string)
	v.rowID = api.MustDo(t, "GET", "/v1/datasets/"+v.dataset+"/data", b.Key, nil).Map(t)["rows"].([]any)[0].(map[string]any)["row_id"].(string)
	v.experimentID = api.MustDo(t, "POST", "/v1/experiments", b.Key, map[string]any{"dataset_version_id": v.datasetVersionID, "name": "B's private experiment"}).Map(t)["id"].(string)
	v.resultID = api.MustDo(t, "POST", "/v1/experiments/"+v.experimentID+"/results", b.Key,
		map[string]any{"dataset_row_id": v.rowID, "result": "B's private result"}).Map(t)["id"].(string)
	v.secrets = []string{b.ProjectID, b.UserID, v.content, output, "B's private input", "B's private judge", "B's private verdict",
		"B's private variant", "B's private signal", reason, hookURL, "B's private row", "B's private experiment", "B's private result", "B's private monitor"}
	return v
}

// pathOf fills the wildcards of a route's path with B's identifiers. A wildcard it does not
// know fails the test: a new route needs a value here, not a silent skip.
func (v victim) pathOf(t *testing.T, path string) string {
	t.Helper()
	values := map[string]string{
		"project_id": v.project, "slug": v.slug, "task": v.slug, "version_id": v.versionID,
		"hash": prompt.Hash(v.content), "version": "1", "tag_action": "production:pin",
		"span_id": v.spanID, "trace_id": v.traceID, "completion_id": v.spanID, "judge_id": v.judgeID, "link_id": v.linkID, "key_id": v.spanID,
		"entity_type": "trace", "entity_id": v.traceID, "model...": v.model, "token": "plf_unknown",
		// B has no run: every run route names the project, so A is refused before any read.
		"run_id": v.spanID, "run_action": v.spanID + ":cancel",
		"signal_entity_type": "span", "test_name": victimTest, "$": "",
		// B has no delivery (no stream here): the project is refused first all the same.
		"webhook_id": v.webhookID, "delivery_id": "dlv_0000000000000_000000000000",
		"dataset": v.dataset, "upload_id": v.datasetVersionID, "experiment_id": v.experimentID,
		"monitor_id": v.monitorID,
		"session_id": v.sessionID,
	}
	return wildcard.ReplaceAllStringFunc(path, func(w string) string {
		name := w[1 : len(w)-1]
		value, ok := values[name]
		if !ok {
			t.Fatalf("route %s: no value for wildcard %s; add one to pathOf", path, w)
		}
		return value
	})
}

var wildcard = regexp.MustCompile(`\{[^}]+\}`)

// victimTest is the name of B's A/B test.
const victimTest = "b-private-test"

// bodyOf is what a route is sent: for routes without a project in the path, a request that
// would change B's data if the key's project were not the only one it could reach.
func (v victim) bodyOf(pattern string) any {
	at := float64(time.Now().UnixMicro()) / 1e6
	span := map[string]any{"id": v.spanID, "trace_id": v.traceID, "session_id": v.sessionID, "name": "A's span", "started_at": at, "ended_at": at + 1, "cost": 1}
	switch pattern {
	case "POST /spans":
		return []any{span}
	case "POST /traces":
		return []any{map[string]any{"id": v.traceID, "session_id": v.sessionID, "name": "A's trace", "started_at": at}}
	case "POST /sessions":
		return []any{map[string]any{"id": v.sessionID, "name": "A's session"}}
	case "POST /spans/{span_id}/attachments":
		return map[string]any{"content_type": "image/png", "size": 10}
	case "POST /v1/prompts/{slug}/completions/{completion_id}/feedback":
		return map[string]any{"thumbs_up": true, "reason": "A's feedback"}
	case "POST /v1/tasks/{task}/prompt/versions/ensure":
		return map[string]any{"content": "A's own prompt"}
	case "POST /feedback-links":
		return map[string]any{"prompt_slug": v.slug, "link_type": "prompt_completion"}
	case "POST /f/{token}":
		return map[string]any{"span_id": v.spanID, "thumbs_up": true}
	case "POST /v1/traces":
		return map[string]any{"resourceSpans": []any{}}
	case "POST /signals", "POST /signals/{$}":
		return map[string]any{"entity_type": "span", "entity_id": v.spanID, "name": "A's signal", "value": 1}
	case "POST /signals/bulk":
		return map[string]any{"signals": []any{map[string]any{"entity_type": "span", "entity_id": v.spanID, "name": "A's signal", "value": 1}}}
	case "POST /ab-choices":
		return map[string]any{"entity_type": "span", "entity_id": v.spanID, "choice_name": victimTest, "variant_key": "a",
			"variant_value": "A's", "variants": map[string]any{"a": "A's"}, "weights": map[string]any{"a": 1}, "duration_days": 1}
	case "POST /v1/datasets":
		return map[string]any{"name": v.dataset}
	case "POST /v1/datasets/{dataset}/data":
		return map[string]any{"data": []any{map[string]any{"q": "A's row"}}}
	case "POST /v1/experiments":
		return map[string]any{"dataset_version_id": v.datasetVersionID, "name": "A's experiment"}
	case "POST /v1/experiments/{experiment_id}/results":
		return map[string]any{"dataset_row_id": v.rowID, "result": "A's result", "run_number": 1}
	case "POST /v1/experiments/{experiment_id}/evaluators":
		return map[string]any{"name": "A's evaluator", "evaluation_mode": "row"}
	case "POST /v1/experiments/{experiment_id}/evaluations":
		return map[string]any{"evaluator_id": v.spanID, "experiment_result_id": v.resultID, "evaluation_value": "1"}
	case "POST /v1/experiments/{experiment_id}/judges":
		return map[string]any{"judge_id": v.judgeID}
	case "POST /v1/column-evaluations", "POST /v1/column-metrics", "POST /v1/run-metrics":
		return map[string]any{"evaluator_id": v.spanID, "metric_name": "m", "experiment_id": v.experimentID, "run_number": 1, "total_runs": 1}
	case "POST /mcp":
		// A tool that reads B's prompt by its slug: tools are scoped to the key's project.
		return map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
			"params": map[string]any{"name": "get-prompt", "arguments": map[string]any{"prompt_slug": v.slug}}}
	}
	if strings.HasPrefix(pattern, "GET ") || strings.HasPrefix(pattern, "DELETE ") {
		return nil
	}
	return map[string]any{}
}

// headersOf is what a route is sent besides its key and body: what its protocol checks before
// it reads the body (the MCP transport's Accept), so that the request reaches the handler.
func headersOf(pattern string) http.Header {
	if pattern == "POST /mcp" {
		return http.Header{"Accept": {"application/json, text/event-stream"}}
	}
	return nil
}

// TestTenancyEveryRoute walks every route of every function of the stack, read from the
// functions' own routers, with project A's key aimed at project B's data:
//   - a route with {project_id} in its path answers 403 before its handler runs: no DynamoDB
//     or S3 request at all (A's key is already in the authenticator's cache);
//   - any other route is scoped to A's own project by construction: it answers without a 5xx
//     and without any of B's data in the answer;
//
// and afterwards every one of B's items in the table is exactly as it was.
func TestTenancyEveryRoute(t *testing.T) {
	api := apitest.New(t, apitest.Options{})
	v := seedVictim(t, api)
	before := itemsOf(t, api, v.project)
	require.NotEmpty(t, before)
	api.MustDo(t, "GET", "/feedback-links", api.A.Key, nil) // A's key into the cache
	// The whole stack: apitest's handler is the REST API, without the MCP tool server.
	whole, err := stack.Handler(api.Env)
	require.NoError(t, err)
	whole = api.Applying(whole) // the aggregates follow its writes, as API.Handler's

	walked, scoped := 0, 0
	for _, fn := range stack.Functions {
		h, err := fn.Build(api.Env)
		require.NoError(t, err)
		router, ok := h.(*auth.Router)
		require.True(t, ok, "%s: its handler must be an *auth.Router, so that its routes are authenticated and tenant-scoped", fn.Name)
		for _, rt := range router.Routes() {
			method, path, ok := strings.Cut(rt.Pattern, " ")
			require.True(t, ok, "%s: pattern %q has no method", fn.Name, rt.Pattern)
			target := v.pathOf(t, path)
			walked++
			t.Run(fn.Name+" "+rt.Pattern, func(t *testing.T) {
				api.DDB.Reset()
				api.S3.Reset()
				req := webtest.NewRequest(t, method, target, api.A.Key, v.bodyOf(rt.Pattern))
				maps.Copy(req.Header, headersOf(rt.Pattern))
				res := webtest.Serve(whole, req)
				if strings.Contains(path, "{project_id}") {
					assert.Equal(t, http.StatusForbidden, res.Status, "body: %s", res.Body)
					assert.Equal(t, "forbidden", res.ErrCode(t))
					assert.Zero(t, api.DDB.Total(), "DynamoDB requests before the project check: %s", api.DDB)
					assert.Zero(t, api.S3.Count("PutObject")+api.S3.Count("GetObject"), "S3 requests before the project check")
					return
				}
				assert.Less(t, res.Status, 500, "body: %s", res.Body)
				if headersOf(rt.Pattern) != nil {
					assert.Equal(t, http.StatusOK, res.Status, "the request did not reach the handler: %s", res.Body)
				}
				for _, secret := range v.secrets {
					assert.NotContains(t, string(res.Body), secret, "B's data in the answer to A")
				}
			})
			if strings.Contains(path, "{project_id}") {
				scoped++
			}
		}
	}
	t.Logf("walked %d routes of %d functions, %d of them project-scoped", walked, len(stack.Functions), scoped)
	assert.Equal(t, before, itemsOf(t, api, v.project), "B's items changed")
}

// itemsOf returns every item of a project's partitions, as text: the test's own Scan (no
// request path scans).
func itemsOf(t *testing.T, api *apitest.API, projectID string) []string {
	t.Helper()
	client := ddbtest.Client(t, nil)
	var items []string
	paginator := dynamodb.NewScanPaginator(client, &dynamodb.ScanInput{TableName: aws.String(api.TableName), ConsistentRead: aws.Bool(true)})
	for paginator.HasMorePages() {
		page, err := paginator.NextPage(context.Background())
		require.NoError(t, err)
		for _, item := range page.Items {
			pk, _ := item["PK"].(*types.AttributeValueMemberS)
			if pk != nil && strings.HasPrefix(pk.Value, "P#"+projectID) {
				items = append(items, fmt.Sprint(flatten(item)))
			}
		}
	}
	slices.Sort(items)
	return items
}

// flatten makes an item comparable as text.
func flatten(item map[string]types.AttributeValue) []string {
	out := make([]string, 0, len(item))
	for k, v := range item {
		// Nested maps and lists by value, not by pointer.
		var plain any
		if err := attributevalue.Unmarshal(v, &plain); err != nil {
			plain = err
		}
		out = append(out, fmt.Sprintf("%s=%T:%v", k, v, plain))
	}
	slices.Sort(out)
	return out
}
