package main

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/shared/llm/fakemodel/fakemodeltest"
)

// TestPlumeLocalJudgesExperiment: a judge attached to an experiment through plume-local
// evaluates each result with one call at the fake model server, a result posted after it was
// attached too, and its verdicts are in the experiment's results under the judge's name.
func TestPlumeLocalJudgesExperiment(t *testing.T) {
	fake := fakemodeltest.Start(t)
	project, key := uuid.NewString(), "plm_local_expjudge_key_0123456789"
	base, _ := startLocal(t, map[string]string{"PLUME_DEV_PROJECT_ID": project, "PLUME_DEV_API_KEY": key, "PLUME_EVALUATOR_RETRY_DELAY": "1s",
		"OPENAI_BASE_URL": fake.OpenAIBaseURL(), "OPENAI_API_KEY": "sk-test", "PLUME_JUDGE_MODEL": "openai/gpt-4o-mini"})
	call := caller(t, base, key)
	must := func(method, path, body string) map[string]any {
		t.Helper()
		status, v := call(method, path, body)
		require.Equal(t, http.StatusOK, status, "%s %s: %v", method, path, v)
		return v
	}
	must("POST", "/v1/datasets", `{"name": "capitals"}`)
	version := must("POST", "/v1/datasets/capitals/data", `{"data": [{"country": "France"}, {"country": "Peru"}, {"country": "Japan"}, {"country": "Chile"}]}`)
	var rows []string
	for _, r := range must("GET", "/v1/datasets/capitals/data?limit=10", "")["rows"].([]any) {
		rows = append(rows, r.(map[string]any)["row_id"].(string))
	}
	require.Len(t, rows, 4)
	exp := must("POST", "/v1/experiments", fmt.Sprintf(`{"name": "run", "dataset_version_id": %q}`, version["id"]))["id"].(string)
	for i, row := range rows[:3] {
		must("POST", "/v1/experiments/"+exp+"/results", fmt.Sprintf(`{"dataset_row_id": %q, "result": "Capital %d"}`, row, i))
	}
	j := must("POST", "/projects/"+project+"/judges", `{"name": "capital-check", "template": "Right capital?\n{{input}}\n{{output}}"}`)
	must("POST", "/v1/experiments/"+exp+"/judges", fmt.Sprintf(`{"judge_id": %q}`, j["id"]))
	// Posted after the judge was attached.
	must("POST", "/v1/experiments/"+exp+"/results", fmt.Sprintf(`{"dataset_row_id": %q, "result": "Capital 3"}`, rows[3]))

	require.EventuallyWithT(t, func(c *assert.CollectT) {
		status, v := call("GET", "/v1/experiments/"+exp+"/results", "")
		require.Equal(c, http.StatusOK, status)
		judged := 0
		for _, r := range v["results"].([]any) {
			for _, e := range r.(map[string]any)["evaluations"].([]any) {
				if e.(map[string]any)["evaluator_name"] == "capital-check" {
					judged++
				}
			}
		}
		assert.Equal(c, 4, judged)
	}, 30*time.Second, 50*time.Millisecond, "the judge's verdicts never appeared")
	assert.Equal(t, 4, fake.Count(), "one model call per result")

	// An unknown judge is not found.
	status, v := call("POST", "/v1/experiments/"+exp+"/judges", fmt.Sprintf(`{"judge_id": %q}`, uuid.NewString()))
	assert.Equal(t, http.StatusNotFound, status, "%v", v)
}

// TestPlumeLocalSDKSequences replays the zeroeval SDK's dataset and experiment sequences
// (COMPAT.md) against plume-local over HTTP, as `make dev` serves them: push (409 on create
// again), pull page by page, push again, pull of the older version, a run of two repeats
// with row and column evaluators (created again on each eval()), column metrics, run metrics
// and log_completion with its literal {project_id}, asserting each field the SDK reads.
// functions/datasets' TestSDK* tests replay the same sequences in depth in-process.
func TestPlumeLocalSDKSequences(t *testing.T) {
	project, key := uuid.NewString(), "plm_local_sdkseq_key_0123456789"
	base, _ := startLocal(t, map[string]string{"PLUME_DEV_PROJECT_ID": project, "PLUME_DEV_API_KEY": key})
	call := caller(t, base, key)
	must := func(method, path, body string) map[string]any {
		t.Helper()
		status, v := call(method, path, body)
		require.Equal(t, http.StatusOK, status, "%s %s: %v", method, path, v)
		return v
	}
	id := func(v map[string]any) string {
		t.Helper()
		s, _ := v["id"].(string)
		require.NotEmpty(t, s, "the SDK reads id: %v", v)
		return s
	}

	// Dataset("capitals", data=[...]).push(): create (409 when it exists), then the rows.
	created := must("POST", "/v1/datasets", `{"name": "capitals", "description": "Capitals"}`)
	id(created)
	status, v := call("POST", "/v1/datasets", `{"name": "capitals", "description": "Capitals"}`)
	require.Equal(t, http.StatusConflict, status, "%v", v)
	v1 := must("POST", "/v1/datasets/capitals/data", `{"data": [{"country": "France", "capital": "Paris"}, {"country": "Peru", "capital": "Lima"}, {"country": "Japan", "capital": "Tokyo"}]}`)
	v1ID := id(v1)
	assert.EqualValues(t, 1, v1["version_number"])

	// Dataset.pull(): the dataset by name, then pages with offset = rows so far.
	got := must("GET", "/v1/datasets/capitals", "")
	assert.Equal(t, id(created), got["id"])
	assert.Equal(t, "capitals", got["name"])
	assert.Equal(t, "Capitals", got["description"])
	pull := func(query string) (rows []map[string]any, version map[string]any) {
		t.Helper()
		for {
			page := must("GET", fmt.Sprintf("/v1/datasets/capitals/data?limit=2&offset=%d%s", len(rows), query), "")
			for _, r := range page["rows"].([]any) {
				row := r.(map[string]any)
				require.NotEmpty(t, row["row_id"])
				require.IsType(t, map[string]any{}, row["data"])
				rows = append(rows, row)
			}
			version = page["version"].(map[string]any)
			if len(rows) >= int(page["totalRows"].(float64)) {
				return rows, version
			}
		}
	}
	rows, version := pull("")
	require.Len(t, rows, 3)
	assert.Equal(t, v1ID, version["id"])
	assert.Equal(t, "Paris", rows[0]["data"].(map[string]any)["capital"])

	// A second push, then the older version by number, whole and unchanged.
	v2 := must("POST", "/v1/datasets/capitals/data", `{"data": [{"country": "France", "capital": "Paris"}, {"country": "Chile", "capital": "Santiago"}]}`)
	assert.EqualValues(t, 2, v2["version_number"])
	latest, latestVersion := pull("")
	require.Len(t, latest, 2)
	assert.EqualValues(t, 2, latestVersion["version_number"])
	assert.Equal(t, rows[0]["row_id"], latest[0]["row_id"], "an unchanged row keeps its id")
	old, oldVersion := pull("&version_number=1")
	assert.Equal(t, rows, old)
	assert.EqualValues(t, 1, oldVersion["version_number"])

	// dataset.run(task, repeats=2).eval([row_evaluator, column_evaluator]), then run metrics.
	exp := id(must("POST", "/v1/experiments", fmt.Sprintf(`{"dataset_version_id": %q, "name": "run", "description": "", "parameters": {"model": "m"}}`, v1ID)))
	var evaluators []string
	for run := 1; run <= 2; run++ {
		results := make([]string, len(rows))
		for i, r := range rows {
			results[i] = id(must("POST", "/v1/experiments/"+exp+"/results", fmt.Sprintf(
				`{"dataset_row_id": %q, "result": "{'prediction': 'City %d'}", "result_type": "text", "trace_id": null, "run_number": %d}`, r["row_id"], i, run)))
		}
		row := id(must("POST", "/v1/experiments/"+exp+"/evaluators", fmt.Sprintf(`{"experiment_id": %q, "name": "exact_match", "description": "", "evaluation_mode": "row"}`, exp)))
		column := id(must("POST", "/v1/experiments/"+exp+"/evaluators", fmt.Sprintf(`{"experiment_id": %q, "name": "accuracy", "description": "", "evaluation_mode": "column"}`, exp)))
		evaluators = append(evaluators, row, column)
		for i, r := range rows {
			id(must("POST", "/v1/experiments/"+exp+"/evaluations", fmt.Sprintf(
				`{"evaluator_id": %q, "dataset_row_id": %q, "experiment_result_id": %q, "evaluation_value": %t, "evaluation_type": "boolean"}`, row, r["row_id"], results[i], i != 1)))
		}
		id(must("POST", "/v1/column-evaluations", fmt.Sprintf(`{"evaluator_id": %q, "experiment_id": %q, "run_number": %d, "evaluation_results": {"accuracy": 0.67}}`, column, exp, run)))
		id(must("POST", "/v1/column-metrics", fmt.Sprintf(`{"metric_name": "accuracy", "experiment_id": %q, "run_number": %d, "results": {"accuracy": 0.67}}`, exp, run)))
	}
	assert.Equal(t, evaluators[:2], evaluators[2:], "eval() again finds the same evaluators")
	id(must("POST", "/v1/run-metrics", fmt.Sprintf(`{"metric_name": "pass@2", "experiment_id": %q, "total_runs": 2, "results": {"pass@2": 1.0}}`, exp)))
	detail := must("GET", "/v1/experiments/"+exp, "")
	assert.Len(t, detail["runs"], 2)
	assert.Len(t, detail["aggregates"], 2, "exact_match's pass rate in each run")

	// ze.log_completion(...): the literal {project_id} in the path is the key's project.
	prompt := must("POST", "/v1/tasks/support/prompt/versions/ensure", `{"content": "You are helpful."}`)
	logged := must("POST", "/projects/%7Bproject_id%7D/prompts/support/completions", fmt.Sprintf(
		`{"prompt_version_id": %q, "model_id": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}], "output_text": "Hello!", "duration_ms": 12.5, "has_error": false}`, id(prompt)))
	id(logged)
	assert.NotEmpty(t, logged["span_id"])
	assert.NotEmpty(t, logged["trace_id"])
}
