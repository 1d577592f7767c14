package evaluator_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/internal/webtest"
	"github.com/plumehq/plume/shared/dataset"
)

// experiment pushes a dataset of n rows as tenant A, creates an experiment on it and posts a
// result for every row; it returns the experiment's id and the rows' ids.
func (w *world) experiment(t *testing.T, name string, n int) (string, []string) {
	t.Helper()
	expID, ids := w.emptyExperiment(t, name, n)
	for i, row := range ids {
		w.postResult(t, expID, row, fmt.Sprintf("City %d", i))
	}
	return expID, ids
}

// emptyExperiment pushes a dataset of n rows as tenant A and creates an experiment on it, with
// no result yet; it returns the experiment's id and the rows' ids.
func (w *world) emptyExperiment(t *testing.T, name string, n int) (string, []string) {
	t.Helper()
	key := w.api.A.Key
	w.api.MustDo(t, "POST", "/v1/datasets", key, map[string]any{"name": name})
	rows := make([]map[string]any, n)
	for i := range rows {
		rows[i] = map[string]any{"question": fmt.Sprintf("What is the capital of country %d?", i)}
	}
	v := w.api.MustDo(t, "POST", "/v1/datasets/"+name+"/data", key, map[string]any{"data": rows}).Map(t)
	page := w.api.MustDo(t, "GET", "/v1/datasets/"+name+"/data?limit=1000", key, nil).Map(t)
	var ids []string
	for _, r := range page["rows"].([]any) {
		ids = append(ids, r.(map[string]any)["row_id"].(string))
	}
	exp := w.api.MustDo(t, "POST", "/v1/experiments", key, map[string]any{"dataset_version_id": v["id"], "name": name + " run"}).Map(t)
	return exp["id"].(string), ids
}

func (w *world) postResult(t *testing.T, expID, rowID, result string) {
	t.Helper()
	w.api.MustDo(t, "POST", "/v1/experiments/"+expID+"/results", w.api.A.Key, map[string]any{"dataset_row_id": rowID, "result": result, "result_type": "text"})
}

// verdicts are the evaluations of the experiment's results (run 1) under evaluator name, by row.
func (w *world) verdicts(t *testing.T, expID, name string) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	page := w.api.MustDo(t, "GET", "/v1/experiments/"+expID+"/results?limit=200", w.api.A.Key, nil).Map(t)
	for _, r := range page["results"].([]any) {
		res := r.(map[string]any)
		for _, e := range res["evaluations"].([]any) {
			if ev := e.(map[string]any); ev["evaluator_name"] == name {
				out[res["dataset_row_id"].(string)] = ev
			}
		}
	}
	return out
}

// TestJudgeEvaluatesExperiment: a judge attached to an experiment evaluates each result once
// (one model call a result, at the fake model server), those posted later too; a request
// delivered again, the judge attached again and a result posted again with the same content
// call nothing; a changed result is evaluated again. The verdicts are the experiment's
// evaluations under the judge's name, in the results, the experiment and compare.
func TestJudgeEvaluatesExperiment(t *testing.T) {
	w := newWorld(t)
	judgeID := w.judge(t, map[string]any{"name": "capital-check"})
	scoredID := w.judge(t, map[string]any{"name": "capital-score", "evaluation_type": "scored", "score_min": 0, "score_max": 10})
	expID, rows := w.experiment(t, "capitals", 3)
	w.deliver(t) // the results' posts: no judge yet, nothing stored for the runner
	require.Zero(t, w.fake.Count())

	attached := w.api.MustDo(t, "POST", "/v1/experiments/"+expID+"/judges", w.api.A.Key, map[string]any{"judge_id": judgeID}).Map(t)
	assert.Equal(t, "queued", attached["status"])
	assert.Equal(t, "capital-check", attached["evaluator_name"])
	assert.Equal(t, dataset.JudgeEvaluatorID(expID, judgeID), attached["evaluator_id"])
	keys := w.takeKeys()
	require.Len(t, keys, 1)
	require.True(t, strings.HasPrefix(keys[0], dataset.JudgeRequestPrefix), keys[0])
	w.deliverKey(t, keys[0])
	assert.Equal(t, 3, w.fake.Count(), "one model call per result")
	got := w.verdicts(t, expID, "capital-check")
	require.Len(t, got, 3)
	for _, row := range rows {
		ev := got[row]
		require.NotNil(t, ev, row)
		assert.Equal(t, "boolean", ev["evaluation_type"])
		assert.IsType(t, true, ev["evaluation_value"])
		assert.NotEmpty(t, ev["evaluation_reason"])
	}
	assert.Equal(t, 1, w.callsFor("What is the capital of country 0?"), "the judge sees the row as the input")
	assert.Equal(t, 1, w.callsFor("City 0"), "and the result as the output")

	// Again: the same request delivered again, the judge attached again.
	w.deliverKey(t, keys[0])
	w.api.MustDo(t, "POST", "/v1/experiments/"+expID+"/judges", w.api.A.Key, map[string]any{"judge_id": judgeID})
	w.deliver(t)
	assert.Equal(t, 3, w.fake.Count(), "nothing evaluated twice")

	// Results posted after: one sent again unchanged, one changed, a new one (run 2).
	w.postResult(t, expID, rows[0], "City 0")
	w.postResult(t, expID, rows[1], "Not a city")
	w.api.MustDo(t, "POST", "/v1/experiments/"+expID+"/results", w.api.A.Key, map[string]any{"dataset_row_id": rows[2], "result": "Run two", "run_number": 2})
	w.deliver(t)
	assert.Equal(t, 5, w.fake.Count(), "the changed result and the new one only")
	assert.Equal(t, 1, w.callsFor("Not a city"))
	assert.Equal(t, 1, w.callsFor("Run two"))

	// A second judge: every result of every run, once.
	w.api.MustDo(t, "POST", "/v1/experiments/"+expID+"/judges", w.api.A.Key, map[string]any{"judge_id": scoredID})
	w.deliver(t)
	assert.Equal(t, 9, w.fake.Count())
	scores := w.verdicts(t, expID, "capital-score")
	require.Len(t, scores, 3)
	assert.Equal(t, "number", scores[rows[0]]["evaluation_type"])
	assert.IsType(t, 0.0, scores[rows[0]]["evaluation_value"])

	detail := w.api.MustDo(t, "GET", "/v1/experiments/"+expID, w.api.A.Key, nil).Map(t)
	judges := map[string]any{}
	for _, e := range detail["evaluators"].([]any) {
		ev := e.(map[string]any)
		judges[ev["name"].(string)] = ev["judge_id"]
	}
	assert.Equal(t, map[string]any{"capital-check": judgeID, "capital-score": scoredID}, judges)

	// Compare: each experiment's verdicts side by side.
	other, _ := w.experiment(t, "capitals2", 3)
	cmp := w.api.MustDo(t, "GET", "/v1/experiments/compare?ids="+expID+","+other, w.api.A.Key, nil).Map(t)
	var compared int
	for _, r := range cmp["rows"].([]any) {
		if res := r.(map[string]any)["results"].([]any)[0]; res != nil {
			compared += len(res.(map[string]any)["evaluations"].([]any))
		}
	}
	assert.Equal(t, 6, compared, "two judges' verdicts on each of the three rows")
	// And each judge's aggregate over run 1 (the changed result's verdict replaced, counted
	// once): the verdicts' pass rate, the scores' mean; the other experiment has none.
	checks, scores := w.verdicts(t, expID, "capital-check"), w.verdicts(t, expID, "capital-score")
	passed, sum := 0.0, 0.0
	for _, row := range rows {
		if checks[row]["evaluation_value"] == true {
			passed++
		}
		sum += scores[row]["evaluation_value"].(float64)
	}
	evaluators := cmp["evaluators"].([]any)
	require.Len(t, evaluators, 2)
	check, score := evaluators[0].(map[string]any), evaluators[1].(map[string]any)
	assert.Equal(t, "capital-check", check["name"])
	assert.Equal(t, "pass_rate", check["measure"])
	assert.Equal(t, 3.0, check["values"].([]any)[0].(map[string]any)["boolean_count"])
	assert.Equal(t, passed, check["values"].([]any)[0].(map[string]any)["passed"])
	assert.Nil(t, check["values"].([]any)[1])
	assert.Nil(t, check["difference"])
	assert.Equal(t, "capital-score", score["name"])
	assert.Equal(t, "mean", score["measure"])
	assert.Equal(t, 3.0, score["values"].([]any)[0].(map[string]any)["numeric_count"])
	assert.InDelta(t, sum/3, score["values"].([]any)[0].(map[string]any)["mean"], 1e-9)

	// The SDK cannot write under a judge's evaluator.
	res := webtest.Do(t, w.api.Handler, "POST", "/v1/experiments/"+expID+"/evaluations", w.api.A.Key, map[string]any{
		"evaluator_id": dataset.JudgeEvaluatorID(expID, judgeID), "experiment_result_id": rows[0] + "-1", "evaluation_value": true})
	assert.Equal(t, http.StatusConflict, res.Status, string(res.Body))
}

// TestAttachJudgeTenancyAndInput: a judge or an experiment of another project is not found;
// bad bodies are 400; nothing is queued for any of them.
func TestAttachJudgeTenancyAndInput(t *testing.T) {
	w := newWorld(t)
	judgeID := w.judge(t, map[string]any{"name": "a-judge"})
	expID, _ := w.experiment(t, "capitals", 1)
	other := w.api.MustDo(t, "POST", "/projects/"+w.api.B.ProjectID+"/judges", w.api.B.Key,
		map[string]any{"name": "b-judge", "template": "Good?\n{{input}}\n{{output}}"}).Map(t)["id"].(string)
	w.takeKeys()
	tests := []struct {
		name, key, exp string
		body           any
		want           int
	}{
		{"a judge of another project", w.api.A.Key, expID, map[string]any{"judge_id": other}, http.StatusNotFound},
		{"an experiment of another project", w.api.B.Key, expID, map[string]any{"judge_id": other}, http.StatusNotFound},
		{"an unknown experiment", w.api.A.Key, "00000000-0000-4000-8000-000000000000", map[string]any{"judge_id": judgeID}, http.StatusNotFound},
		{"not an experiment id", w.api.A.Key, "nope", map[string]any{"judge_id": judgeID}, http.StatusNotFound},
		{"no judge", w.api.A.Key, expID, map[string]any{}, http.StatusBadRequest},
		{"not JSON", w.api.A.Key, expID, "{", http.StatusBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := webtest.Do(t, w.api.Handler, "POST", "/v1/experiments/"+tt.exp+"/judges", tt.key, tt.body)
			assert.Equal(t, tt.want, res.Status, string(res.Body))
			assert.Contains(t, string(res.Body), `"error"`)
		})
	}
	assert.Empty(t, w.takeKeys(), "nothing queued")
	assert.Empty(t, w.api.MustDo(t, "GET", "/v1/experiments/"+expID, w.api.A.Key, nil).Map(t)["evaluators"])
}

// TestJudgeReadsOnlyTheResultsRow: a result posted after a judge was attached is shown to the
// judge with its row, read through the version's row index: the runner's S3 reads are the
// judge request, the row's bucket of the index and the row (three GETs, a few KB), the same for
// a dataset of 100 rows as for one of 1,000, never the version's object whole.
func TestJudgeReadsOnlyTheResultsRow(t *testing.T) {
	for _, n := range []int{100, 1_000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			w := newWorld(t)
			judgeID := w.judge(t, map[string]any{"name": "capital-check"})
			expID, rows := w.emptyExperiment(t, "capitals", n)
			w.api.MustDo(t, "POST", "/v1/experiments/"+expID+"/judges", w.api.A.Key, map[string]any{"judge_id": judgeID})
			w.deliver(t) // the sweep: no result yet
			require.Zero(t, w.fake.Count())

			for i, row := range []int{n / 2, n - 1, 0} {
				w.postResult(t, expID, rows[row], fmt.Sprintf("City %d", row))
				keys := w.takeKeys()
				require.Len(t, keys, 1)
				w.api.S3.Reset()
				w.api.DDB.Reset()
				w.deliverKey(t, keys[0])
				t.Logf("result %d of %d rows: S3 GetObject %d (%d bytes); DynamoDB %s", i, n, w.api.S3.Count("GetObject"), w.api.S3.Bytes("GetObject"), w.api.DDB)
				assert.Equal(t, i+1, w.fake.Count(), "one model call a result")
				assert.Equal(t, 1, w.callsFor(fmt.Sprintf("What is the capital of country %d?", row)), "the judge sees the row")
				assert.Equal(t, 3, w.api.S3.Count("GetObject"), "the request, the row's index bucket, the row")
				assert.Less(t, w.api.S3.Bytes("GetObject"), int64(8<<10), "never the version whole")
				wantGets := 2 // the result, the judge
				if i == 0 {
					wantGets++ // the version's item, once per warm instance
				}
				assert.Equal(t, wantGets, w.api.DDB.Counts()["GetItem"])
			}
			assert.Len(t, w.verdicts(t, expID, "capital-check"), 3)
		})
	}
}

// TestPausedJudgeAndExperiment: a paused judge attached to an experiment evaluates nothing,
// and resuming it queues nothing (as for live spans, which a backfill asks for); attaching it
// again after the resume is the experiment's backfill: it evaluates the results skipped while
// it was paused, each once, and nothing it had evaluated before.
func TestPausedJudgeAndExperiment(t *testing.T) {
	w := newWorld(t)
	judgeID := w.judge(t, map[string]any{"name": "capital-check"})
	expID, rows := w.experiment(t, "capitals", 2)
	w.api.MustDo(t, "POST", "/v1/experiments/"+expID+"/judges", w.api.A.Key, map[string]any{"judge_id": judgeID})
	w.deliver(t)
	require.Equal(t, 2, w.fake.Count())

	judge := "/projects/" + w.api.A.ProjectID + "/judges/" + judgeID
	w.api.MustDo(t, "PATCH", judge, w.api.A.Key, map[string]any{"paused": true})
	w.postResult(t, expID, rows[0], "Changed while paused")
	w.api.MustDo(t, "POST", "/v1/experiments/"+expID+"/results", w.api.A.Key, map[string]any{"dataset_row_id": rows[1], "result": "Run two", "run_number": 2})
	w.deliver(t)
	assert.Equal(t, 2, w.fake.Count(), "a paused judge evaluates nothing")

	w.api.MustDo(t, "PATCH", judge, w.api.A.Key, map[string]any{"paused": false})
	assert.Empty(t, w.takeKeys(), "resuming queues nothing")
	w.deliver(t)
	assert.Equal(t, 2, w.fake.Count())

	w.api.MustDo(t, "POST", "/v1/experiments/"+expID+"/judges", w.api.A.Key, map[string]any{"judge_id": judgeID})
	w.deliver(t)
	assert.Equal(t, 4, w.fake.Count(), "the two results skipped while paused, once each")
	assert.Equal(t, 1, w.callsFor("Changed while paused"))
	assert.Equal(t, 1, w.callsFor("Run two"))
	w.api.MustDo(t, "POST", "/v1/experiments/"+expID+"/judges", w.api.A.Key, map[string]any{"judge_id": judgeID})
	w.deliver(t)
	assert.Equal(t, 4, w.fake.Count(), "nothing twice")
}
