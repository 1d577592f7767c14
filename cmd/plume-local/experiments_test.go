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
