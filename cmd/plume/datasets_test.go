package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/internal/apitest"
)

// TestDatasetsCommands: a dataset pushed from a file and from stdin, listed, shown, its
// versions listed and pulled back whole; an experiment on it listed, shown and its results
// read; json output and exit codes.
func TestDatasetsCommands(t *testing.T) {
	h := newClientHarness(t, apitest.Options{})
	file := filepath.Join(t.TempDir(), "rows.ndjson")
	require.NoError(t, os.WriteFile(file, []byte("{\"q\":\"a\",\"n\":\"1\"}\n{\"q\":\"b\"}\n\n{\"q\":\"c\"}\n"), 0o600))

	var v1 api.DatasetVersion
	h.okJSON(&v1, "datasets", "push", "capitals", file, "--create", "--description", "Capitals")
	assert.Equal(t, 1, v1.VersionNumber)
	assert.Equal(t, 3, v1.RowCount)
	r := h.runIn("{\"q\":\"a\",\"n\":\"1\"}\n", "--output", "json", "datasets", "push", "capitals", "-")
	require.Equal(t, exitOK, r.code, "%s", r)

	var list api.DatasetList
	h.okJSON(&list, "datasets", "list")
	require.Len(t, list.Datasets, 1)
	assert.Equal(t, 2, list.Datasets[0].VersionNumber)
	var d api.Dataset
	h.okJSON(&d, "datasets", "show", "capitals")
	assert.Equal(t, "Capitals", *d.Description)
	var versions api.DatasetVersionList
	h.okJSON(&versions, "datasets", "versions", "capitals")
	require.Len(t, versions.Versions, 2)
	assert.Equal(t, 2, versions.Versions[0].VersionNumber)

	lines := strings.Split(strings.TrimSpace(h.ok("datasets", "pull", "capitals", "--version", "1")), "\n")
	require.Len(t, lines, 3)
	var first api.DatasetRow
	require.NoError(t, json.Unmarshal([]byte(lines[0]), &first))
	assert.JSONEq(t, `{"n":"1","q":"a"}`, string(first.Data))
	latest := strings.Split(strings.TrimSpace(h.ok("datasets", "pull", "capitals")), "\n")
	require.Len(t, latest, 1)
	var only api.DatasetRow
	require.NoError(t, json.Unmarshal([]byte(latest[0]), &only))
	assert.Equal(t, first.RowID, only.RowID, "an unchanged row keeps its id")

	exp := h.api.MustDo(t, "POST", "/v1/experiments", h.api.A.Key, map[string]any{"dataset_version_id": v1.ID, "name": "run"}).Map(t)["id"].(string)
	resID := h.api.MustDo(t, "POST", "/v1/experiments/"+exp+"/results", h.api.A.Key, map[string]any{"dataset_row_id": first.RowID, "result": "Paris"}).Map(t)["id"].(string)
	evaluator := h.api.MustDo(t, "POST", "/v1/experiments/"+exp+"/evaluators", h.api.A.Key, map[string]any{"name": "correct", "evaluation_mode": "row"}).Map(t)["id"].(string)
	h.api.MustDo(t, "POST", "/v1/experiments/"+exp+"/evaluations", h.api.A.Key, map[string]any{"evaluator_id": evaluator, "experiment_result_id": resID, "evaluation_value": true})
	var exps api.ExperimentList
	h.okJSON(&exps, "experiments", "list", "--dataset", "capitals")
	require.Len(t, exps.Experiments, 1)
	var detail api.ExperimentDetail
	h.okJSON(&detail, "experiments", "show", exp)
	assert.Equal(t, []api.ExperimentRun{{RunNumber: 1, ResultCount: 1}}, detail.Runs)
	require.Len(t, detail.Aggregates, 1)
	assert.Equal(t, "correct", detail.Aggregates[0].EvaluatorName)
	assert.Equal(t, 1, detail.Aggregates[0].Passed)
	shown := h.ok("experiments", "show", exp)
	assert.Regexp(t, `1\s+correct\s+pass_rate\s+1 \(1/1\)`, shown, "each row evaluator's aggregate per run")
	var results api.ExperimentResultList
	h.okJSON(&results, "experiments", "results", exp)
	require.Len(t, results.Results, 1)
	assert.Equal(t, "Paris", results.Results[0].Result)
	assert.Contains(t, h.ok("experiments", "results", exp), "Paris")

	var cmp api.ExperimentComparison
	h.okJSON(&cmp, "experiments", "compare", exp, exp)
	require.Len(t, cmp.Rows, 1)
	assert.False(t, cmp.Rows[0].Differs)
	require.Len(t, cmp.Evaluators, 1)
	assert.Equal(t, api.MeasurePassRate, cmp.Evaluators[0].Measure)
	assert.Equal(t, 0.0, *cmp.Evaluators[0].Difference)
	table := h.ok("experiments", "compare", exp, exp)
	assert.Contains(t, table, "correct")
	assert.Contains(t, table, "1 (1/1)", "each experiment's pass rate with its counts")
	assert.Equal(t, exitUsage, h.run("experiments", "compare", exp).code, "one experiment")

	judgeID := h.api.MustDo(t, "POST", "/projects/"+h.api.A.ProjectID+"/judges", h.api.A.Key,
		map[string]any{"name": "capital-check", "template": "Right?\n{{output}}"}).Map(t)["id"].(string)
	var attached api.AttachedJudge
	h.okJSON(&attached, "experiments", "judge", exp, judgeID)
	assert.Equal(t, "queued", attached.Status)
	assert.Equal(t, "capital-check", attached.EvaluatorName)
	assert.Equal(t, exitUsage, h.run("experiments", "judge", exp, "00000000-0000-4000-8000-000000000000").code, "an unknown judge")

	assert.Equal(t, exitUsage, h.run("datasets", "show", "nope").code, "an unknown dataset: not_found, as every command answers it")
	assert.Equal(t, exitAuth, h.run("--api-key", "plm_wrong", "datasets", "list").code)
	assert.Equal(t, exitUsage, h.run("datasets", "push", "capitals", filepath.Join(t.TempDir(), "missing")).code)
	assert.Equal(t, exitUsage, h.run("experiments", "list").code, "--dataset is required")
}

// TestDatasetsPushUploadCounted pushes a dataset too large for one request through the CLI
// (`plume datasets push`, which uploads it: a presigned PUT, then a commit) and pulls it back
// (`plume datasets pull`, page by page), counting DynamoDB and S3 requests: 10,000 rows of
// ~560 bytes (5.6 MB); 100,000 rows (56 MB) with PLUME_SCALE=1. The push's requests do not
// grow with the rows; the pull's are one DynamoDB read and one ranged GET a page.
func TestDatasetsPushUploadCounted(t *testing.T) {
	n := 10_000
	if os.Getenv("PLUME_SCALE") == "1" {
		n = 100_000
	}
	h := newClientHarness(t, apitest.Options{})
	var buf strings.Builder
	filler := strings.Repeat("x", 520)
	for i := range n {
		fmt.Fprintf(&buf, `{"question":"q%d %s","answer":"%d"}`+"\n", i, filler, i)
	}
	require.Greater(t, buf.Len(), api.MaxDatasetPushBytes, "too large for one request")
	file := filepath.Join(t.TempDir(), "big.ndjson")
	require.NoError(t, os.WriteFile(file, []byte(buf.String()), 0o600))
	h.ok("datasets", "push", "big", file, "--create") // creates it: the counts below are a push's

	h.api.DDB.Reset()
	h.api.S3.Reset()
	var v api.DatasetVersion
	h.okJSON(&v, "datasets", "push", "big", file)
	assert.Equal(t, 2, v.VersionNumber)
	assert.Equal(t, n, v.RowCount)
	t.Logf("push of %d rows (%d bytes) through the CLI's upload: DynamoDB %s; S3 GetObject %d, PutObject %d, DeleteObject %d",
		n, buf.Len(), h.api.DDB, h.api.S3.Count("GetObject"), h.api.S3.Count("PutObject"), h.api.S3.Count("DeleteObject"))
	assert.Equal(t, map[string]int{"GetItem": 3, "TransactWriteItems": 1}, h.api.DDB.Counts(), "the dataset (start, commit), the upload's version check, the version")
	assert.Equal(t, 1, h.api.S3.Count("GetObject"), "the upload, read once as a stream")
	assert.Equal(t, 2, h.api.S3.Count("PutObject"), "the version's object and its row index")

	h.api.DDB.Reset()
	h.api.S3.Reset()
	out := h.ok("datasets", "pull", "big", "--version", "2")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, n)
	var last api.DatasetRow
	require.NoError(t, json.Unmarshal([]byte(lines[n-1]), &last))
	assert.JSONEq(t, fmt.Sprintf(`{"question":"q%d %s","answer":"%d"}`, n-1, filler, n-1), string(last.Data))
	pages := h.api.S3.Count("GetObject")
	t.Logf("pull of %d rows through the CLI: %d pages; DynamoDB %s; S3 GetObject %d", n, pages, h.api.DDB, pages)
	assert.Equal(t, pages, h.api.DDB.Total(), "one DynamoDB read a page")
	assert.LessOrEqual(t, pages, 2*(n/api.MaxDatasetRowsLimit+1), "pages of up to 10,000 rows, cut at the answer's byte budget")
}
