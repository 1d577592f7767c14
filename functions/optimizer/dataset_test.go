package optimizer_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/functions/optimizer"
	"github.com/plumehq/plume/internal/apitest"
	"github.com/plumehq/plume/shared/dataset"
	"github.com/plumehq/plume/shared/ddb"
	"github.com/plumehq/plume/shared/optimize"
)

const datasetAnswer = "Per the refund policy, you can return it within 30 days."

// pushDataset pushes a version of dataset name to tenant's project, n rows of a question, the
// product (a prompt variable) and the answer wanted, and returns the version's id and its rows'
// ids.
func (s *stack) pushDataset(t *testing.T, tenant apitest.Tenant, name string, n int) (versionID string, rowIDs []string) {
	t.Helper()
	if res := s.api.Do(t, "POST", "/v1/datasets", tenant.Key, map[string]any{"name": name}); res.Status != 409 {
		require.Equal(t, 200, res.Status, "%s", res.Body)
	}
	rows := make([]any, n)
	for i := range rows {
		rows[i] = map[string]any{"question": fmt.Sprintf("Can I return item %d?", i), "product": "Plume", "answer": datasetAnswer}
	}
	versionID = s.api.MustDo(t, "POST", "/v1/datasets/"+name+"/data", tenant.Key, map[string]any{"data": rows}).Map(t)["id"].(string)
	var page api.DatasetRows
	s.api.MustDo(t, "GET", "/v1/datasets/"+name+"/data?limit=10000", tenant.Key, nil).Decode(t, &page)
	for _, r := range page.Rows {
		rowIDs = append(rowIDs, r.RowID)
	}
	require.Len(t, rowIDs, n)
	return versionID, rowIDs
}

// linkJudge makes prompt "support" with the judge that passes answers citing the refund
// policy, linked to it, and no completion at all.
func (s *stack) linkJudge(t *testing.T) string {
	t.Helper()
	s.api.EnsurePrompt(t, s.api.A, "support", baselinePrompt)
	judgeID := s.api.MustDo(t, "POST", "/projects/"+s.pid+"/judges", s.api.A.Key, map[string]any{
		"name": "cites policy", "template": "Does the answer cite the policy that applies?\n{{input}}\n{{output}}",
	}).Map(t)["id"].(string)
	s.api.MustDo(t, "PUT", "/projects/"+s.pid+"/prompts/support/judges/"+judgeID, s.api.A.Key, nil)
	return judgeID
}

// TestDatasetRunEndToEnd: a prompt with no completion at all is optimized from a dataset
// version's rows through the worker: the reflection is shown the rows' inputs and expected
// outputs, the candidate and the baseline are compared on held-out rows (each run with the
// row's columns as the prompt's variables), the report names the version, and the simulations
// run on the same rows.
func TestDatasetRunEndToEnd(t *testing.T) {
	s := newStack(t)
	judgeID := s.linkJudge(t)
	versionID, rowIDs := s.pushDataset(t, s.api.A, "returns", 10)

	id := s.start(t, map[string]any{"optimizer_type": "quick_refine", "config": map[string]any{"seed": 7,
		"dataset": map[string]any{"name": "returns", "input_columns": []string{"question"}, "expected_output_column": "answer"}}})
	run := s.await(t, id)
	require.Equal(t, "succeeded", run["status"], "error: %v", run["error"])

	assert.Equal(t, map[string]any{"name": "returns", "version": 1.0, "version_id": versionID, "input_columns": []any{"question"},
		"expected_output_column": "answer"}, run["config"].(map[string]any)["dataset"], "the version resolved when the run started")
	assert.Equal(t, improvedPrompt, run["candidate"].(map[string]any)["content"])
	metrics := run["metrics"].(map[string]any)
	assert.Equal(t, map[string]any{"name": "returns", "version": 1.0, "version_id": versionID, "row_count": 10.0, "examples": 10.0}, metrics["dataset"])
	assert.Equal(t, "publish", metrics["recommendation"], "%v", metrics["reason"])
	assert.Equal(t, 1.0, metrics["candidate"].(map[string]any)["overall"], "the judge passes it and it is the expected output")
	assert.Equal(t, 1.0, metrics["candidate"].(map[string]any)["intents"].(map[string]any)[judgeID])
	assert.Less(t, metrics["baseline"].(map[string]any)["overall"], 0.5)

	var holdout []string
	for _, h := range metrics["holdout_ids"].([]any) {
		holdout = append(holdout, h.(string))
		assert.Contains(t, rowIDs, h, "held out: a row of the dataset")
	}
	require.NotEmpty(t, holdout)
	h := len(holdout)
	assert.Equal(t, float64(1+2*h*2), run["progress"].(map[string]any)["model_calls"],
		"1 reflection, then baseline and candidate on the held-out rows: a task and a judge call each")

	// What reached the model server: the reflection saw the rows and their expected outputs;
	// the task ran on the held-out rows' questions, with the row's product in the prompt.
	var reflections, tasks int
	questions := map[string]bool{}
	for _, c := range s.fake.Calls() {
		switch {
		case strings.Contains(c.System, "You improve prompts"):
			reflections++
			assert.Contains(t, c.LastUser(), "Can I return item")
			assert.Contains(t, c.LastUser(), "the expected output is: "+datasetAnswer)
		case strings.Contains(c.System, "You are a support agent"):
			tasks++
			assert.Contains(t, c.System, "support agent for Plume.", "the row's product fills {{product}}")
			assert.NotContains(t, c.System, datasetAnswer, "the expected output is no variable")
			questions[c.LastUser()] = true
		}
	}
	assert.Equal(t, 1, reflections)
	assert.Equal(t, 2*h, tasks, "baseline and candidate on each held-out row")
	assert.Len(t, questions, h, "the held-out rows' questions")

	// The simulations run on the same held-out rows (the task model's calls come from the
	// cache: nothing more reaches the server).
	calls := s.fake.Count()
	run = s.awaitSimulations(t, id)
	sim := run["simulations"].([]any)[0].(map[string]any)
	assert.Equal(t, float64(h), sim["examples"])
	assert.Less(t, sim["baseline_score"], 0.5)
	assert.Equal(t, 1.0, sim["candidate_score"])
	assert.Equal(t, calls, s.fake.Count(), "simulated with the run's own model: answered from the cache")
}

// awaitSimulations waits until run id has its simulations and returns it.
func (s *stack) awaitSimulations(t *testing.T, id string) map[string]any {
	t.Helper()
	var run map[string]any
	require.Eventually(t, func() bool {
		run = s.api.MustDo(t, "GET", "/projects/"+s.pid+"/optimization-runs/"+id, s.api.A.Key, nil).Map(t)
		return len(run["simulations"].([]any)) > 0
	}, 2*time.Minute, 20*time.Millisecond, "no simulation: worker %+v", s.api.Optimizations.Stats())
	return run
}

// TestDatasetWithFeedback: a run takes the dataset's rows and the prompt's feedback examples
// together; the report counts the rows, and its holdout is drawn from both.
func TestDatasetWithFeedback(t *testing.T) {
	s := newStack(t)
	s.seed(t, 10)
	versionID, rowIDs := s.pushDataset(t, s.api.A, "returns", 10)
	// The holdout is drawn by the examples' ids (random here) and the seed: a seed whose holdout
	// holds rows only or completions only (a few draws in a hundred) is followed by the next.
	var rows, completions int
	for seed := 7; seed < 12 && (rows == 0 || completions == 0); seed++ {
		id := s.start(t, map[string]any{"optimizer_type": "quick_refine", "config": map[string]any{"seed": seed,
			"dataset": map[string]any{"version_id": versionID, "input_columns": []string{"question"}, "expected_output_column": "answer", "with_feedback": true}}})
		run := s.await(t, id)
		require.Equal(t, "succeeded", run["status"], "error: %v", run["error"])
		metrics := run["metrics"].(map[string]any)
		assert.Equal(t, map[string]any{"name": "returns", "version": 1.0, "version_id": versionID, "row_count": 10.0, "examples": 10.0}, metrics["dataset"])
		assert.Equal(t, "publish", metrics["recommendation"], "%v", metrics["reason"])
		rows, completions = 0, 0
		for _, h := range metrics["holdout_ids"].([]any) {
			if slices.Contains(rowIDs, h.(string)) {
				rows++
			} else {
				completions++
			}
		}
	}
	assert.Positive(t, rows, "rows held out")
	assert.Positive(t, completions, "completions held out")
}

// TestDatasetRunRequests counts what reading a run's examples costs: from a dataset version
// alone, one GetItem of the version and one ranged GET of its first 200 rows, however many
// rows the version has beyond them; the examples are those rows, in order.
func TestDatasetRunRequests(t *testing.T) {
	var worker *optimizer.Worker
	s := newStackWith(t, func(w *optimizer.Worker) { worker = w })
	s.linkJudge(t)
	_, rowIDs := s.pushDataset(t, s.api.A, "returns", 250)
	id := s.start(t, map[string]any{"optimizer_type": "quick_refine", "config": map[string]any{"seed": 7,
		"dataset": map[string]any{"name": "returns", "version": 1, "input_columns": []string{"question", "product"}}}})
	require.Equal(t, "succeeded", s.await(t, id)["status"])
	s.awaitSimulations(t, id) // the worker is idle: what is counted is the call below
	ctx := context.Background()
	r, err := s.api.Env.Optimizations().Run(ctx, s.pid, id)
	require.NoError(t, err)

	s.api.DDB.Reset()
	s.api.S3.Reset()
	examples, rep, err := worker.LoadExamples(ctx, r)
	require.NoError(t, err)
	assert.Equal(t, map[string]int{"GetItem": 1}, s.api.DDB.Counts(), "the version, by id")
	assert.Equal(t, 1, s.api.S3.Count("GetObject"), "one ranged GET for the 200 rows")
	require.Len(t, examples, api.MaxOptimizationDatasetRows, "the first 200 of 250 rows")
	assert.Equal(t, 200, rep.Examples)
	assert.Equal(t, 250, rep.RowCount)
	for i, ex := range examples {
		assert.Equal(t, rowIDs[i], ex.ID)
	}
	assert.Equal(t, `{"product":"Plume","question":"Can I return item 0?"}`, examples[0].Input, "two input columns: a JSON object")
	assert.Empty(t, examples[0].ExpectedOutput)
	t.Logf("examples of a dataset run: %v, S3 GetObject %d", s.api.DDB.Counts(), s.api.S3.Count("GetObject"))

	// With the prompt's feedback too: the rows' reads plus what a run without a dataset reads.
	r.Config.Dataset.WithFeedback = true
	s.api.DDB.Reset()
	s.api.S3.Reset()
	_, _, err = worker.LoadExamples(ctx, r)
	require.NoError(t, err)
	t.Logf("examples of a dataset run with feedback (no completions): %v, S3 GetObject %d", s.api.DDB.Counts(), s.api.S3.Count("GetObject"))
}

// nowhere is a queue that drops what it is sent: a service whose runs no worker takes up.
type nowhere struct{}

func (nowhere) Send(context.Context, []byte) error { return nil }

// TestDatasetRunStartRequests counts what starting a run from a dataset version costs beside
// a run from feedback: the version's read and one ranged GET of the rows the run will read,
// to check its columns.
func TestDatasetRunStartRequests(t *testing.T) {
	s := newStack(t)
	s.linkJudge(t)
	s.pushDataset(t, s.api.A, "returns", 250)
	env := s.api.Env
	datasets := dataset.NewService(ddb.NewDatasetStore(env.Table()), s.api.Blobs, env.Now)
	svc := optimizer.NewService(env.Optimizations(), env.Prompts(), env.JudgeStore(), env.Judges(), nowhere{}, env.Now).ReadDatasets(datasets)
	start := func(d *optimize.Dataset) (map[string]int, int) {
		s.api.DDB.Reset()
		s.api.S3.Reset()
		_, err := svc.Start(context.Background(), s.pid, "support", "u", optimizer.StartRequest{OptimizerType: "quick_refine", Dataset: d})
		require.NoError(t, err)
		return s.api.DDB.Counts(), s.api.S3.Count("GetObject")
	}
	plainDDB, plainS3 := start(nil)
	latestDDB, latestS3 := start(&optimize.Dataset{Name: "returns", InputColumns: []string{"question"}, ExpectedOutputColumn: "answer"})
	numberedDDB, numberedS3 := start(&optimize.Dataset{Name: "returns", Version: 1, InputColumns: []string{"question"}})
	assert.Equal(t, 0, plainS3)
	assert.Equal(t, 1, latestS3, "one ranged GET of the first 200 rows")
	assert.Equal(t, 1, numberedS3)
	t.Logf("start: from feedback %v; from the latest version %v + %d GetObject; from version 1 %v + %d GetObject",
		plainDDB, latestDDB, latestS3, numberedDDB, numberedS3)
	more := func(op string) map[string]int {
		m := maps.Clone(plainDDB)
		m[op]++
		return m
	}
	assert.Equal(t, more("Query"), latestDDB, "the latest version: one Query more")
	assert.Equal(t, more("GetItem"), numberedDDB, "version 1: one GetItem more")
}

// TestDatasetRunBadInput: a dataset, version or column that is not there, a request that
// cannot work, and another project's dataset: the shared error shape, and no run.
func TestDatasetRunBadInput(t *testing.T) {
	s := newStack(t)
	s.linkJudge(t)
	versionID, _ := s.pushDataset(t, s.api.A, "returns", 10)
	s.pushDataset(t, s.api.A, "tiny", 2)
	otherVersion, _ := s.pushDataset(t, s.api.B, "theirs", 10)
	s.pushDataset(t, s.api.B, "returns-b", 10)
	cols := []string{"question"}
	for _, tc := range []struct {
		name    string
		dataset map[string]any
		status  int
		code    string
		message string
	}{
		{"unknown dataset", map[string]any{"name": "nope", "input_columns": cols}, 404, "not_found", `"nope"`},
		{"unknown version", map[string]any{"name": "returns", "version": 9, "input_columns": cols}, 404, "not_found", "version 9"},
		{"unknown version id", map[string]any{"version_id": uuid.NewString(), "input_columns": cols}, 404, "not_found", "not found"},
		{"another project's dataset", map[string]any{"name": "theirs", "input_columns": cols}, 404, "not_found", `"theirs"`},
		{"another project's version id", map[string]any{"version_id": otherVersion, "input_columns": cols}, 404, "not_found", otherVersion},
		{"unknown input column", map[string]any{"name": "returns", "input_columns": []string{"prompt"}}, 400, "invalid_request", `column "prompt" is in none of the 10 rows`},
		{"unknown expected column", map[string]any{"name": "returns", "input_columns": cols, "expected_output_column": "gold"}, 400, "invalid_request", `column "gold"`},
		{"no input column", map[string]any{"name": "returns"}, 400, "invalid_request", "input_columns"},
		{"input and expected the same", map[string]any{"name": "returns", "input_columns": []string{"answer"}, "expected_output_column": "answer"}, 400, "invalid_request", "both"},
		{"a column twice", map[string]any{"name": "returns", "input_columns": []string{"question", "question"}}, 400, "invalid_request", "twice"},
		{"neither name nor version id", map[string]any{"input_columns": cols}, 400, "invalid_request", "version_id"},
		{"version id of another dataset", map[string]any{"name": "tiny", "version_id": versionID, "input_columns": cols}, 400, "invalid_request", `not "tiny"`},
		{"negative version", map[string]any{"name": "returns", "version": -1, "input_columns": cols}, 400, "invalid_request", "version"},
		{"too few rows", map[string]any{"name": "tiny", "input_columns": cols}, 400, "invalid_request", "at least 3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := s.api.Do(t, "POST", "/projects/"+s.pid+"/prompts/support/optimization-runs", s.api.A.Key,
				map[string]any{"optimizer_type": "quick_refine", "config": map[string]any{"dataset": tc.dataset}})
			require.Equal(t, tc.status, res.Status, "%s", res.Body)
			var body api.ErrorBody
			res.Decode(t, &body)
			assert.Equal(t, api.ErrorCode(tc.code), body.Error.Code)
			assert.Contains(t, body.Error.Message, tc.message)
			assert.NotEmpty(t, body.Error.RequestID)
		})
	}
	judge := s.api.MustDo(t, "POST", "/projects/"+s.pid+"/judges", s.api.A.Key, map[string]any{"name": "j", "template": "{{output}}"}).Map(t)["id"].(string)
	res := s.api.Do(t, "POST", "/projects/"+s.pid+"/judges/"+judge+"/optimization-runs", s.api.A.Key,
		map[string]any{"config": map[string]any{"dataset": map[string]any{"name": "returns", "input_columns": cols}}})
	assert.Equal(t, 400, res.Status, "a judge run takes no dataset: %s", res.Body)
	list := s.api.MustDo(t, "GET", "/projects/"+s.pid+"/prompts/support/optimization-runs", s.api.A.Key, nil).Map(t)
	assert.Empty(t, list["runs"], "no run was created")

	// Without a linked judge, a dataset's expected outputs score candidates alone.
	s.fake.SetRules(scriptedRules()...)
	s.api.EnsurePrompt(t, s.api.A, "faq", baselinePrompt)
	res = s.api.Do(t, "POST", "/projects/"+s.pid+"/prompts/faq/optimization-runs", s.api.A.Key,
		map[string]any{"optimizer_type": "quick_refine", "config": map[string]any{"dataset": map[string]any{"name": "returns", "input_columns": cols}}})
	assert.Equal(t, 400, res.Status, "no intent and no expected output: nothing to score with: %s", res.Body)
	run := s.api.MustDo(t, "POST", "/projects/"+s.pid+"/prompts/faq/optimization-runs", s.api.A.Key,
		map[string]any{"optimizer_type": "quick_refine", "config": map[string]any{"seed": 7,
			"dataset": map[string]any{"name": "returns", "input_columns": cols, "expected_output_column": "answer"}}}).Map(t)
	assert.Empty(t, run["config"].(map[string]any)["intents"])
}
