package datasets_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/internal/apitest"
	"github.com/plumehq/plume/internal/webtest"
	"github.com/plumehq/plume/shared/auth"
)

// sdk replays the zeroeval Python SDK's requests (COMPAT.md, "Datasets, experiments ...")
// against the whole API, as the SDK sends them, and reads the answers as the SDK does.
type sdk struct {
	t   *testing.T
	api *apitest.API
	key string
}

// call sends one request and requires status want; it returns the answer as a JSON object.
func (c sdk) call(method, path string, body any, want int) map[string]any {
	c.t.Helper()
	res := webtest.Do(c.t, c.api.Handler, method, path, c.key, body)
	require.Equal(c.t, want, res.Status, "%s %s: %s", method, path, res.Body)
	return res.Map(c.t)
}

func str(t *testing.T, m map[string]any, k string) string {
	t.Helper()
	v, ok := m[k].(string)
	require.True(t, ok, "%q is not a string in %v", k, m)
	require.NotEmpty(t, v, k)
	return v
}

// pull is Dataset.pull: pages of limit rows with offset = rows so far until totalRows.
func (c sdk) pull(name string, version int, limit int) (rows []map[string]any, total int, versionID string, number int) {
	c.t.Helper()
	for pages := 0; ; pages++ {
		q := url.Values{"limit": {fmt.Sprint(limit)}, "offset": {fmt.Sprint(len(rows))}}
		if version > 0 {
			q.Set("version_number", fmt.Sprint(version))
		}
		page := c.call("GET", "/v1/datasets/"+url.PathEscape(name)+"/data?"+q.Encode(), nil, 200)
		total = int(page["totalRows"].(float64))
		v := page["version"].(map[string]any)
		versionID, number = str(c.t, v, "id"), int(v["version_number"].(float64))
		got := page["rows"].([]any)
		for _, r := range got {
			rows = append(rows, r.(map[string]any))
		}
		if len(rows) >= total {
			return rows, total, versionID, number
		}
		require.NotEmpty(c.t, got, "a page short of totalRows answered no rows")
		require.Less(c.t, pages, total+1)
	}
}

func capitals(n int) []map[string]any {
	rows := make([]map[string]any, n)
	for i := range rows {
		rows[i] = map[string]any{"country": fmt.Sprintf("Country %d", i), "capital": fmt.Sprintf("City %d", i), "population": "2165000"}
	}
	return rows
}

func TestSDKDatasetPushPull(t *testing.T) {
	api := apitest.New(t, apitest.Options{})
	c := sdk{t, api, api.A.Key}

	created := c.call("POST", "/v1/datasets", map[string]any{"name": "capitals", "description": "Capitals"}, 200)
	datasetID := str(t, created, "id")
	c.call("POST", "/v1/datasets", map[string]any{"name": "capitals", "description": "Capitals"}, 409)

	rows := capitals(25)
	v1 := c.call("POST", "/v1/datasets/capitals/data", map[string]any{"data": rows}, 200)
	assert.EqualValues(t, 1, v1["version_number"])
	v1ID := str(t, v1, "id")

	got := c.call("GET", "/v1/datasets/capitals", nil, 200)
	assert.Equal(t, datasetID, got["id"])
	assert.Equal(t, "capitals", got["name"])
	assert.Equal(t, "Capitals", got["description"])

	pulled, total, vid, n := c.pull("capitals", 0, 10)
	require.Equal(t, 25, total)
	assert.Equal(t, v1ID, vid)
	assert.Equal(t, 1, n)
	require.Len(t, pulled, 25)
	ids := map[string]bool{}
	for i, r := range pulled {
		assert.Equal(t, rows[i]["capital"], r["data"].(map[string]any)["capital"])
		ids[str(t, r, "row_id")] = true
	}
	assert.Len(t, ids, 25, "row ids are unique")

	// Version 2: one row changed, one duplicated: the others keep their ids.
	rows2 := capitals(25)
	rows2[3]["capital"] = "Changed"
	rows2 = append(rows2, rows2[0])
	v2 := c.call("POST", "/v1/datasets/capitals/data", map[string]any{"data": rows2}, 200)
	assert.EqualValues(t, 2, v2["version_number"])
	pulled2, total2, _, n2 := c.pull("capitals", 0, 10000)
	require.Equal(t, 26, total2)
	assert.Equal(t, 2, n2)
	ids2 := map[string]bool{}
	for _, r := range pulled2 {
		ids2[r["row_id"].(string)] = true
	}
	assert.Len(t, ids2, 26, "a duplicate row gets an id of its own")
	for i, r := range pulled2[:25] {
		assert.Equal(t, i != 3, r["row_id"] == pulled[i]["row_id"], "row %d", i)
	}

	// The older version is still there, whole.
	old, oldTotal, oldID, oldN := c.pull("capitals", 1, 7)
	assert.Equal(t, 25, oldTotal)
	assert.Equal(t, v1ID, oldID)
	assert.Equal(t, 1, oldN)
	assert.Equal(t, pulled, old)

	// The read API.
	list := c.call("GET", "/v1/datasets", nil, 200)
	require.Len(t, list["datasets"], 1)
	d := list["datasets"].([]any)[0].(map[string]any)
	assert.EqualValues(t, 2, d["version_number"])
	assert.EqualValues(t, 26, d["row_count"])
	versions := c.call("GET", "/v1/datasets/capitals/versions?limit=1", nil, 200)
	require.Len(t, versions["versions"], 1)
	assert.EqualValues(t, 2, versions["versions"].([]any)[0].(map[string]any)["version_number"])
	next := str(t, versions, "next_cursor")
	versions = c.call("GET", "/v1/datasets/capitals/versions?limit=1&cursor="+next, nil, 200)
	assert.EqualValues(t, 1, versions["versions"].([]any)[0].(map[string]any)["version_number"])

	// Not found, as the SDK reads it; another project sees nothing.
	c.call("GET", "/v1/datasets/nope", nil, 404)
	c.call("GET", "/v1/datasets/capitals/data?version_number=9", nil, 404)
	other := sdk{t, api, api.B.Key}
	other.call("GET", "/v1/datasets/capitals", nil, 404)
	other.call("GET", "/v1/datasets/capitals/data", nil, 404)
	assert.Empty(t, other.call("GET", "/v1/datasets", nil, 200)["datasets"])
	other.call("POST", "/v1/experiments", map[string]any{"dataset_version_id": v1ID, "name": "x"}, 404)
}

func TestSDKBadPushStoresNothing(t *testing.T) {
	api := apitest.New(t, apitest.Options{})
	c := sdk{t, api, api.A.Key}
	c.call("POST", "/v1/datasets", map[string]any{"name": "bad"}, 200)
	for name, body := range map[string]any{
		"row not an object": map[string]any{"data": []any{map[string]any{"a": "1"}, "text"}},
		"no rows":           map[string]any{"data": []any{}},
		"data not a list":   map[string]any{"data": "x"},
	} {
		t.Run(name, func(t *testing.T) {
			res := webtest.Do(t, api.Handler, "POST", "/v1/datasets/bad/data", api.A.Key, body)
			assert.Equal(t, http.StatusBadRequest, res.Status, "%s", res.Body)
			assert.Equal(t, "invalid_request", res.ErrCode(t))
		})
	}
	assert.EqualValues(t, 0, c.call("GET", "/v1/datasets/bad", nil, 200)["version_number"])
	c.call("GET", "/v1/datasets/bad/data", nil, 404)
	c.call("POST", "/v1/datasets/unknown/data", map[string]any{"data": []any{map[string]any{"a": "1"}}}, 404)
	c.call("POST", "/v1/datasets", map[string]any{"name": "../x"}, 400)
}

// TestSDKExperimentRunAndEval replays Dataset.run(task).eval([...]) twice (a repeat), with row
// and column evaluators and run metrics.
func TestSDKExperimentRunAndEval(t *testing.T) {
	api := apitest.New(t, apitest.Options{})
	c := sdk{t, api, api.A.Key}
	c.call("POST", "/v1/datasets", map[string]any{"name": "capitals", "description": ""}, 200)
	c.call("POST", "/v1/datasets/capitals/data", map[string]any{"data": capitals(5)}, 200)
	rows, _, versionID, _ := c.pull("capitals", 0, 10000)

	// The application's ingest key writes what a run writes.
	ingest := sdk{t, api, newKey(t, api, api.A.ProjectID, auth.RoleIngest)}
	ingest.call("GET", "/v1/datasets/capitals/data", nil, 403)

	exp := ingest.call("POST", "/v1/experiments", map[string]any{
		"dataset_version_id": versionID, "name": "gpt run", "description": "d", "alias": "a", "parameters": map[string]any{"model": "m"},
	}, 200)
	expID := str(t, exp, "id")
	assert.Len(t, exp, 1, "an ingest key learns the id only")

	results := map[int][]string{}
	for run := 1; run <= 2; run++ {
		for i, r := range rows {
			res := ingest.call("POST", "/v1/experiments/"+expID+"/results", map[string]any{
				"dataset_row_id": r["row_id"], "result": fmt.Sprintf("{'prediction': 'City %d'}", i), "result_type": "text",
				"trace_id": fmt.Sprintf("00000000-0000-4000-8000-%012d", i), "run_number": run,
			}, 200)
			results[run] = append(results[run], str(t, res, "id"))
		}
		// eval(): the evaluators are created again on every call.
		rowEval := str(t, ingest.call("POST", "/v1/experiments/"+expID+"/evaluators", map[string]any{
			"experiment_id": expID, "name": "exact_match", "description": "", "evaluation_mode": "row"}, 200), "id")
		colEval := str(t, ingest.call("POST", "/v1/experiments/"+expID+"/evaluators", map[string]any{
			"experiment_id": expID, "name": "accuracy", "description": "", "evaluation_mode": "column"}, 200), "id")
		for i, r := range rows {
			str(t, ingest.call("POST", "/v1/experiments/"+expID+"/evaluations", map[string]any{
				"evaluator_id": rowEval, "dataset_row_id": r["row_id"], "experiment_result_id": results[run][i],
				"evaluation_value": "{'correct': True}", "evaluation_type": "text",
			}, 200), "id")
		}
		ingest.call("POST", "/v1/column-evaluations", map[string]any{
			"evaluator_id": colEval, "experiment_id": expID, "run_number": run, "evaluation_results": map[string]any{"accuracy": 1.0}}, 200)
		ingest.call("POST", "/v1/column-metrics", map[string]any{
			"metric_name": "accuracy", "experiment_id": expID, "run_number": run, "results": map[string]any{"accuracy": 1.0}}, 200)
	}
	ingest.call("POST", "/v1/run-metrics", map[string]any{"metric_name": "pass@2", "experiment_id": expID, "total_runs": 2, "results": map[string]any{"pass@2": 1.0}}, 200)
	// A result sent again is the same result.
	again := ingest.call("POST", "/v1/experiments/"+expID+"/results", map[string]any{
		"dataset_row_id": rows[0]["row_id"], "result": "{'prediction': 'again'}", "result_type": "text", "trace_id": nil, "run_number": 1}, 200)
	assert.Equal(t, results[1][0], again["id"])

	detail := c.call("GET", "/v1/experiments/"+expID, nil, 200)
	assert.Equal(t, "gpt run", detail["name"])
	assert.Equal(t, versionID, detail["dataset_version_id"])
	assert.Equal(t, map[string]any{"model": "m"}, detail["parameters"])
	assert.Equal(t, []any{map[string]any{"run_number": 1.0, "result_count": 5.0}, map[string]any{"run_number": 2.0, "result_count": 5.0}}, detail["runs"])
	assert.Len(t, detail["evaluators"], 2, "evaluators are upserted on name and mode")
	assert.Len(t, detail["column_evaluations"], 2)
	assert.Len(t, detail["column_metrics"], 2)
	require.Len(t, detail["run_metrics"], 1)
	assert.EqualValues(t, 2, detail["run_metrics"].([]any)[0].(map[string]any)["total_runs"])
	assert.Equal(t, []any{}, detail["aggregates"], "text evaluations count toward no aggregate")

	// Each row evaluator's aggregate per run: booleans a pass rate, numbers a mean; one Query.
	passed := str(t, ingest.call("POST", "/v1/experiments/"+expID+"/evaluators", map[string]any{"name": "passed", "evaluation_mode": "row"}, 200), "id")
	score := str(t, ingest.call("POST", "/v1/experiments/"+expID+"/evaluators", map[string]any{"name": "score", "evaluation_mode": "row"}, 200), "id")
	for i, r := range rows {
		ingest.call("POST", "/v1/experiments/"+expID+"/evaluations", map[string]any{
			"evaluator_id": passed, "dataset_row_id": r["row_id"], "experiment_result_id": results[1][i], "evaluation_value": i%2 == 0, "evaluation_type": "boolean"}, 200)
		ingest.call("POST", "/v1/experiments/"+expID+"/evaluations", map[string]any{
			"evaluator_id": score, "dataset_row_id": r["row_id"], "experiment_result_id": results[2][i], "evaluation_value": i, "evaluation_type": "number"}, 200)
	}
	api.DDB.Reset()
	detail = c.call("GET", "/v1/experiments/"+expID, nil, 200)
	assert.Equal(t, 1, api.DDB.Counts()["Query"], "the aggregates come with the definition: %s", api.DDB)
	assert.Equal(t, []any{
		map[string]any{"run_number": 1.0, "evaluator_id": passed, "evaluator_name": "passed", "boolean_count": 5.0, "passed": 3.0, "pass_rate": 0.6,
			"numeric_count": 0.0, "sum": 0.0, "mean": nil},
		map[string]any{"run_number": 2.0, "evaluator_id": score, "evaluator_name": "score", "boolean_count": 0.0, "passed": 0.0, "pass_rate": nil,
			"numeric_count": 5.0, "sum": 10.0, "mean": 2.0},
	}, detail["aggregates"])

	page := c.call("GET", "/v1/experiments/"+expID+"/results?run_number=1&limit=3", nil, 200)
	got := page["results"].([]any)
	require.Len(t, got, 3)
	first := got[0].(map[string]any)
	assert.Equal(t, "text", first["result_type"])
	evals := map[string]any{}
	for _, e := range first["evaluations"].([]any) {
		evals[e.(map[string]any)["evaluator_name"].(string)] = e.(map[string]any)["evaluation_value"]
	}
	require.Len(t, evals, 2)
	assert.Equal(t, "{'correct': True}", evals["exact_match"])
	assert.IsType(t, true, evals["passed"])
	rest := c.call("GET", "/v1/experiments/"+expID+"/results?run_number=1&limit=3&cursor="+str(t, page, "next_cursor"), nil, 200)
	assert.Len(t, rest["results"], 2)
	assert.Nil(t, rest["next_cursor"])

	list := c.call("GET", "/v1/experiments?dataset=capitals", nil, 200)
	require.Len(t, list["experiments"], 1)
	assert.Equal(t, expID, list["experiments"].([]any)[0].(map[string]any)["id"])

	// Bad input and other projects.
	ingest.call("POST", "/v1/experiments/"+expID+"/evaluations", map[string]any{
		"evaluator_id": "00000000-0000-4000-8000-000000000000", "experiment_result_id": results[1][0], "evaluation_value": "1"}, 404)
	ingest.call("POST", "/v1/experiments/"+expID+"/results", map[string]any{"dataset_row_id": "nope", "result": "x"}, 400)
	ingest.call("POST", "/v1/experiments/00000000-0000-4000-8000-000000000000/results", map[string]any{"dataset_row_id": rows[0]["row_id"], "result": "x"}, 404)
	other := sdk{t, api, api.B.Key}
	other.call("GET", "/v1/experiments/"+expID, nil, 404)
	other.call("POST", "/v1/experiments/"+expID+"/results", map[string]any{"dataset_row_id": rows[0]["row_id"], "result": "x"}, 404)
	other.call("POST", "/v1/run-metrics", map[string]any{"metric_name": "m", "experiment_id": expID, "total_runs": 1}, 404)
}

func newKey(t *testing.T, api *apitest.API, project string, role auth.Role) string {
	t.Helper()
	secret, k, err := auth.NewKey(auth.KeySpec{ProjectID: project, User: auth.User{ID: "u-" + string(role)}, Role: role}, time.Now())
	require.NoError(t, err)
	require.NoError(t, api.Auth.CreateKey(context.Background(), k))
	return secret
}

// TestSDKLogCompletion replays ze.log_completion: the literal {project_id} in its path names
// the key's project, and the completion is listed with the prompt's completions.
func TestSDKLogCompletion(t *testing.T) {
	api := apitest.New(t, apitest.Options{})
	versionID := api.EnsurePrompt(t, api.A, "support-bot", "You are helpful.")
	ingest := sdk{t, api, newKey(t, api, api.A.ProjectID, auth.RoleIngest)}
	logged := ingest.call("POST", "/projects/%7Bproject_id%7D/prompts/support-bot/completions", map[string]any{
		"prompt_id": "p", "prompt_version_id": versionID, "model_id": "gpt-4o-mini",
		"messages": []any{map[string]any{"role": "user", "content": "hi"}}, "input_text": "hi", "output_text": "Hello!",
		"metadata": map[string]any{"k": "v"}, "duration_ms": 120.5, "prompt_tokens": 10, "completion_tokens": 3, "total_tokens": 13,
		"cost": 0.001, "has_error": false,
	}, 200)
	spanID := str(t, logged, "span_id")

	c := sdk{t, api, api.A.Key}
	list := c.call("GET", "/projects/{project_id}/prompts/support-bot/completions", nil, 200)
	got := list["completions"].([]any)
	require.Len(t, got, 1)
	first := got[0].(map[string]any)
	assert.Equal(t, spanID, first["span_id"])
	assert.Equal(t, versionID, first["prompt_version_id"])
	assert.Equal(t, "Hello!", first["output"].(map[string]any)["text"])

	// Another project's id in the path is still refused; a bad body is a 400 that stores nothing.
	ingest.call("POST", "/projects/"+api.B.ProjectID+"/prompts/support-bot/completions", map[string]any{"output_text": "x"}, 403)
	ingest.call("POST", "/projects/%7Bproject_id%7D/prompts/support-bot/completions", map[string]any{"span_id": "not-a-uuid"}, 400)
	assert.Len(t, c.call("GET", "/projects/"+api.A.ProjectID+"/prompts/support-bot/completions", nil, 200)["completions"], 1)
}

// TestRequestsPerExperimentResult runs an experiment of 100 rows (1,000 with PLUME_SCALE=1)
// as the SDK does and counts DynamoDB requests: a new result is one TransactWriteItems, an
// evaluation one GetItem and one TransactWriteItems, a result sent again one PutItem more; no
// S3 request.
func TestRequestsPerExperimentResult(t *testing.T) {
	n := 100
	if os.Getenv("PLUME_SCALE") == "1" {
		n = 1_000
	}
	api := apitest.New(t, apitest.Options{})
	c := sdk{t, api, api.A.Key}
	c.call("POST", "/v1/datasets", map[string]any{"name": "rows"}, 200)
	c.call("POST", "/v1/datasets/rows/data", map[string]any{"data": capitals(n)}, 200)
	rows, _, versionID, _ := c.pull("rows", 0, 10000)
	expID := str(t, c.call("POST", "/v1/experiments", map[string]any{"dataset_version_id": versionID, "name": "e"}, 200), "id")
	evaluator := str(t, c.call("POST", "/v1/experiments/"+expID+"/evaluators", map[string]any{"name": "m", "evaluation_mode": "row"}, 200), "id")

	api.DDB.Reset()
	api.S3.Reset()
	ids := make([]string, len(rows))
	for i, r := range rows {
		ids[i] = str(t, c.call("POST", "/v1/experiments/"+expID+"/results", map[string]any{"dataset_row_id": r["row_id"], "result": "x", "run_number": 1}, 200), "id")
	}
	t.Logf("%d results: %s", n, api.DDB)
	assert.Equal(t, map[string]int{"TransactWriteItems": n}, api.DDB.Counts(), "one request a result")

	api.DDB.Reset()
	for i, r := range rows {
		c.call("POST", "/v1/experiments/"+expID+"/evaluations", map[string]any{
			"evaluator_id": evaluator, "dataset_row_id": r["row_id"], "experiment_result_id": ids[i], "evaluation_value": "1"}, 200)
	}
	t.Logf("%d evaluations: %s", n, api.DDB)
	assert.Equal(t, map[string]int{"GetItem": n, "TransactWriteItems": n}, api.DDB.Counts(), "two requests an evaluation")

	api.DDB.Reset()
	c.call("POST", "/v1/experiments/"+expID+"/results", map[string]any{"dataset_row_id": rows[0]["row_id"], "result": "y", "run_number": 1}, 200)
	assert.Equal(t, map[string]int{"TransactWriteItems": 2}, api.DDB.Counts(), "a result sent again")
	assert.Zero(t, api.S3.Count("GetObject")+api.S3.Count("PutObject"))

	detail := c.call("GET", "/v1/experiments/"+expID, nil, 200)
	assert.Equal(t, []any{map[string]any{"run_number": 1.0, "result_count": float64(n)}}, detail["runs"], "counted once")

	// With a judge attached, a result's write learns it (its first transaction fails on the
	// experiment's judges) and queues the result's evaluation: one S3 PUT.
	judgeID := str(t, c.call("POST", "/projects/"+api.A.ProjectID+"/judges", map[string]any{"name": "j", "template": "Good?\n{{output}}"}, 200), "id")
	c.call("POST", "/v1/experiments/"+expID+"/judges", map[string]any{"judge_id": judgeID}, 200)
	api.DDB.Reset()
	api.S3.Reset()
	for _, r := range rows {
		c.call("POST", "/v1/experiments/"+expID+"/results", map[string]any{"dataset_row_id": r["row_id"], "result": "x", "run_number": 2}, 200)
	}
	t.Logf("%d results with a judge: %s", n, api.DDB)
	assert.Equal(t, map[string]int{"TransactWriteItems": 2 * n}, api.DDB.Counts(), "two requests a result")
	assert.Equal(t, n, api.S3.Count("PutObject"), "one judge request a result")
}

// TestCompareExperiments compares two experiments on two versions of a dataset: rows line up
// by row id (unchanged rows), a page at a time, and each metric's values and difference.
func TestCompareExperiments(t *testing.T) {
	api := apitest.New(t, apitest.Options{})
	c := sdk{t, api, api.A.Key}
	c.call("POST", "/v1/datasets", map[string]any{"name": "caps"}, 200)
	v1 := str(t, c.call("POST", "/v1/datasets/caps/data", map[string]any{"data": capitals(5)}, 200), "id")
	changed := capitals(5)
	changed[4]["capital"] = "Other"
	v2 := str(t, c.call("POST", "/v1/datasets/caps/data", map[string]any{"data": changed}, 200), "id")
	rows1, _, _, _ := c.pull("caps", 1, 100)
	rows2, _, _, _ := c.pull("caps", 2, 100)

	run := func(version string, rows []map[string]any, answer func(int) string, accuracy float64) string {
		id := str(t, c.call("POST", "/v1/experiments", map[string]any{"dataset_version_id": version, "name": "e"}, 200), "id")
		correct := str(t, c.call("POST", "/v1/experiments/"+id+"/evaluators", map[string]any{"name": "correct", "evaluation_mode": "row"}, 200), "id")
		length := str(t, c.call("POST", "/v1/experiments/"+id+"/evaluators", map[string]any{"name": "length", "evaluation_mode": "row"}, 200), "id")
		for i, r := range rows {
			res := str(t, c.call("POST", "/v1/experiments/"+id+"/results", map[string]any{"dataset_row_id": r["row_id"], "result": answer(i)}, 200), "id")
			evaluate := func(evaluator string, value any) {
				c.call("POST", "/v1/experiments/"+id+"/evaluations", map[string]any{
					"evaluator_id": evaluator, "dataset_row_id": r["row_id"], "experiment_result_id": res, "evaluation_value": value}, 200)
			}
			evaluate(correct, !strings.HasPrefix(answer(i), "wrong"))
			evaluate(correct, !strings.HasPrefix(answer(i), "wrong")) // a retry: counted once
			evaluate(length, 100)                                     // replaced by the next
			evaluate(length, len(answer(i)))
		}
		c.call("POST", "/v1/column-metrics", map[string]any{"metric_name": "accuracy", "experiment_id": id, "run_number": 1, "results": map[string]any{"accuracy": accuracy}}, 200)
		return id
	}
	a := run(v1, rows1, func(i int) string { return fmt.Sprint("City ", i) }, 0.5)
	b := run(v2, rows2, func(i int) string {
		if i == 1 {
			return "wrong"
		}
		return fmt.Sprint("City ", i)
	}, 0.75)

	seen := map[string]bool{}
	differs := 0
	cursor := ""
	for pages := 0; ; pages++ {
		require.Less(t, pages, 10)
		q := url.Values{"ids": {a + "," + b}, "limit": {"2"}}
		if cursor != "" {
			q.Set("cursor", cursor)
		}
		cmp := c.call("GET", "/v1/experiments/compare?"+q.Encode(), nil, 200)
		require.Len(t, cmp["experiments"], 2)
		metrics := cmp["metrics"].([]any)
		require.Len(t, metrics, 1)
		assert.InDelta(t, 0.25, metrics[0].(map[string]any)["difference"], 1e-9)
		// Each evaluator's aggregate over the whole run, whatever the page: "correct" is 5 of 5
		// then 4 of 5 ("wrong"), "length" the mean of the answers' lengths (6 each, then one 5).
		evaluators := cmp["evaluators"].([]any)
		require.Len(t, evaluators, 2)
		correct, length := evaluators[0].(map[string]any), evaluators[1].(map[string]any)
		assert.Equal(t, "correct", correct["name"])
		assert.Equal(t, "pass_rate", correct["measure"])
		assert.InDelta(t, -0.2, correct["difference"], 1e-9)
		values := correct["values"].([]any)
		assert.Equal(t, map[string]any{"boolean_count": 5.0, "passed": 5.0, "pass_rate": 1.0, "numeric_count": 0.0, "sum": 0.0, "mean": nil}, values[0])
		assert.Equal(t, 4.0, values[1].(map[string]any)["passed"])
		assert.Equal(t, "length", length["name"])
		assert.Equal(t, "mean", length["measure"])
		assert.InDelta(t, 6.0, length["values"].([]any)[0].(map[string]any)["mean"], 1e-9)
		assert.Equal(t, 5.0, length["values"].([]any)[1].(map[string]any)["numeric_count"])
		assert.InDelta(t, -0.2, length["difference"], 1e-9)
		for _, r := range cmp["rows"].([]any) {
			row := r.(map[string]any)
			id := row["dataset_row_id"].(string)
			assert.False(t, seen[id], "a row on one page only")
			seen[id] = true
			if row["differs"].(bool) {
				differs++
			}
		}
		next, ok := cmp["next_cursor"].(string)
		if !ok {
			break
		}
		cursor = next
	}
	// The aggregates are read with each experiment's definition: a compare is per experiment
	// one Query of the definition and one of its results' page, however many evaluations (and
	// the GetItems of the key's authentication, as for every request).
	api.DDB.Reset()
	c.call("GET", "/v1/experiments/compare?ids="+a+","+b+"&limit=2", nil, 200)
	assert.Equal(t, map[string]int{"GetItem": 2, "Query": 4}, api.DDB.Counts(), "a compare's requests")
	assert.Len(t, seen, 6, "4 unchanged rows, the changed row of each version")
	assert.Equal(t, 3, differs, "a different answer, and the changed row on each side")
	c.call("GET", "/v1/experiments/compare?ids="+a, nil, 400)
	sdk{t, api, api.B.Key}.call("GET", "/v1/experiments/compare?ids="+a+","+b, nil, 404)
}
