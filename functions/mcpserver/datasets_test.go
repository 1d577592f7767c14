package mcpserver_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/functions/mcpserver"
	"github.com/plumehq/plume/internal/apitest"
)

// TestDatasetTools: a dataset and two experiments on it read through the tools, with the
// official MCP client; another project's key finds nothing.
func TestDatasetTools(t *testing.T) {
	s := newToolStack(t, apitest.Options{})
	a := s.api
	a.MustDo(t, "POST", "/v1/datasets", a.A.Key, map[string]any{"name": "caps"})
	v := a.MustDo(t, "POST", "/v1/datasets/caps/data", a.A.Key, map[string]any{"data": []any{map[string]any{"q": "France"}, map[string]any{"q": "Peru"}}}).Map(t)
	rows := a.MustDo(t, "GET", "/v1/datasets/caps/data", a.A.Key, nil).Map(t)["rows"].([]any)
	var exps []string
	for _, answer := range []string{"Paris", "Lima?"} {
		id := a.MustDo(t, "POST", "/v1/experiments", a.A.Key, map[string]any{"dataset_version_id": v["id"], "name": answer}).Map(t)["id"].(string)
		evaluator := a.MustDo(t, "POST", "/v1/experiments/"+id+"/evaluators", a.A.Key, map[string]any{"name": "confidence", "evaluation_mode": "row"}).Map(t)["id"].(string)
		for i, r := range rows {
			res := a.MustDo(t, "POST", "/v1/experiments/"+id+"/results", a.A.Key, map[string]any{"dataset_row_id": r.(map[string]any)["row_id"], "result": answer}).Map(t)["id"]
			a.MustDo(t, "POST", "/v1/experiments/"+id+"/evaluations", a.A.Key, map[string]any{"evaluator_id": evaluator, "experiment_result_id": res, "evaluation_value": len(answer) + i})
		}
		exps = append(exps, id)
	}
	cs, err := s.connect(t, a.A.Key)
	require.NoError(t, err)

	var list api.DatasetList
	call(t, cs, "list-datasets", map[string]any{}, &list)
	require.Len(t, list.Datasets, 1)
	var got mcpserver.GetDatasetOutput
	res := call(t, cs, "get-dataset", map[string]any{"name": "caps"}, &got)
	require.False(t, res.IsError, text(res))
	assert.Equal(t, 2, got.Rows.TotalRows)
	assert.Len(t, got.Rows.Rows, 2)
	assert.Len(t, got.Versions, 1)
	var el api.ExperimentList
	call(t, cs, "list-experiments", map[string]any{"dataset": "caps"}, &el)
	assert.Len(t, el.Experiments, 2)
	var e mcpserver.GetExperimentOutput
	res = call(t, cs, "get-experiment", map[string]any{"experiment_id": exps[0]}, &e)
	require.False(t, res.IsError, text(res))
	assert.Len(t, e.Results.Results, 2)
	require.Len(t, e.Experiment.Aggregates, 1, "each row evaluator's aggregate per run")
	assert.Equal(t, "confidence", e.Experiment.Aggregates[0].EvaluatorName)
	assert.Equal(t, 5.5, *e.Experiment.Aggregates[0].Mean, "Paris: 5 and 6")
	var cmp api.ExperimentComparison
	res = call(t, cs, "compare-experiments", map[string]any{"ids": exps}, &cmp)
	require.False(t, res.IsError, text(res))
	require.Len(t, cmp.Rows, 2)
	assert.True(t, cmp.Rows[0].Differs)
	require.Len(t, cmp.Evaluators, 1, "the evaluator's aggregates")
	assert.Equal(t, api.MeasureMean, cmp.Evaluators[0].Measure)
	assert.Equal(t, 5.5, *cmp.Evaluators[0].Values[0].Mean, "Paris: 5 and 6")
	assert.Equal(t, 0.0, *cmp.Evaluators[0].Difference, "Lima? too")

	other, err := s.connect(t, a.B.Key)
	require.NoError(t, err)
	res = call(t, other, "get-dataset", map[string]any{"name": "caps"}, nil)
	assert.True(t, res.IsError)
	assert.Contains(t, text(res), "not_found")
}
