package dashboard_test

import (
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/functions/evaluator"
	"github.com/plumehq/plume/internal/apitest"
)

// seededDataset is a dataset pushed through the API: its latest version's id and its rows' ids
// in the version's order.
type seededDataset struct {
	name, versionID string
	rows            []string
}

// seedDataset creates dataset name in tenant's project with the description and pushes
// versions of n rows each (row i of version v: {"question": "q<i>", "v": v}, its data carrying
// markup); the last one is returned.
func (f *fixture) seedDataset(t *testing.T, tenant apitest.Tenant, name, description string, versions, n int) seededDataset {
	t.Helper()
	f.api.MustDo(t, "POST", "/v1/datasets", tenant.Key, map[string]any{"name": name, "description": description})
	var d seededDataset
	for v := 1; v <= versions; v++ {
		rows := make([]map[string]any, n)
		for i := range rows {
			rows[i] = map[string]any{"question": fmt.Sprintf("q%d <img src=x onerror=alert(%d)>", i, i), "v": v}
		}
		version := f.api.MustDo(t, "POST", "/v1/datasets/"+url.PathEscape(name)+"/data", tenant.Key, map[string]any{"data": rows}).Map(t)
		d = seededDataset{name: name, versionID: version["id"].(string)}
	}
	if versions == 0 {
		return seededDataset{name: name}
	}
	page := f.api.MustDo(t, "GET", "/v1/datasets/"+url.PathEscape(name)+"/data?limit=10000", tenant.Key, nil).Map(t)
	for _, r := range page["rows"].([]any) {
		d.rows = append(d.rows, r.(map[string]any)["row_id"].(string))
	}
	require.Len(t, d.rows, n)
	return d
}

// seedExperiment runs an experiment named name on d's latest version as the SDK's
// dataset.run(task).eval([...]) writes it: a result per row (output(i), the task's trace
// traceID when not ""), a row evaluator "exact" that scores each result (1 when it ends in
// "ok"), a column evaluator "exact_mean" and the column and run metrics it posts. It returns
// the experiment's id.
func (f *fixture) seedExperiment(t *testing.T, tenant apitest.Tenant, d seededDataset, name string, output func(i int) string, traceID string) string {
	t.Helper()
	key := tenant.Key
	id := f.api.MustDo(t, "POST", "/v1/experiments", key, map[string]any{
		"dataset_version_id": d.versionID, "name": name, "description": "run of " + name,
		"parameters": map[string]any{"model": "gpt-4o-mini", "temperature": 0.2},
	}).Map(t)["id"].(string)
	exact := f.api.MustDo(t, "POST", "/v1/experiments/"+id+"/evaluators", key, map[string]any{"name": "exact", "evaluation_mode": "row"}).Map(t)["id"].(string)
	mean := f.api.MustDo(t, "POST", "/v1/experiments/"+id+"/evaluators", key, map[string]any{"name": "exact_mean", "evaluation_mode": "column"}).Map(t)["id"].(string)
	passed := 0
	for i, row := range d.rows {
		result := map[string]any{"dataset_row_id": row, "result": output(i), "result_type": "str"}
		if traceID != "" {
			result["trace_id"] = traceID
		}
		resultID := f.api.MustDo(t, "POST", "/v1/experiments/"+id+"/results", key, result).Map(t)["id"].(string)
		value := 0
		if strings.HasSuffix(output(i), "ok") {
			value, passed = 1, passed+1
		}
		f.api.MustDo(t, "POST", "/v1/experiments/"+id+"/evaluations", key, map[string]any{
			"evaluator_id": exact, "dataset_row_id": row, "experiment_result_id": resultID, "evaluation_value": value, "evaluation_type": "number",
		})
	}
	rate := float64(passed) / float64(len(d.rows))
	f.api.MustDo(t, "POST", "/v1/column-evaluations", key, map[string]any{"evaluator_id": mean, "experiment_id": id, "run_number": 1, "evaluation_results": map[string]any{"exact_mean": rate}})
	f.api.MustDo(t, "POST", "/v1/column-metrics", key, map[string]any{"metric_name": "exact_mean", "experiment_id": id, "run_number": 1, "results": map[string]any{"exact_mean": rate}})
	f.api.MustDo(t, "POST", "/v1/run-metrics", key, map[string]any{"metric_name": "pass_rate", "experiment_id": id, "total_runs": 1, "results": map[string]any{"pass_rate": rate}})
	return id
}

// seedDatasetShowcase gives the showcase's project (newShowcase) a dataset of two versions
// with two experiments on it, so that the crawl reaches every datasets page.
func (f *fixture) seedDatasetShowcase(t *testing.T, tenant apitest.Tenant) {
	t.Helper()
	d := f.seedDataset(t, tenant, "support questions", "Questions <em>customers</em> asked", 2, 12)
	f.seedExperiment(t, tenant, d, "gpt-4o-mini", func(i int) string { return fmt.Sprintf("answer %d ok", i) }, "")
	f.seedExperiment(t, tenant, d, "gpt-4o-mini, kinder", func(i int) string {
		if i%4 == 0 {
			return fmt.Sprintf("<b>answer</b> %d", i)
		}
		return fmt.Sprintf("answer %d ok", i)
	}, "")
}

// count is the number of times s occurs in p's body.
func (p page) count(s string) int { return strings.Count(p.Body, s) }

// TestDatasetPages: the datasets, a dataset's versions and a page of a version's rows, its
// experiments newest first, an experiment's definition, metrics and results with their scores
// and traces, and two experiments compared with the differing rows first, each as the API
// answers it; user text (descriptions, rows, outputs) is escaped.
func TestDatasetPages(t *testing.T) {
	f := newFixture(t)
	a := f.api.A
	traceID, _ := f.seedTrace(t, a.Key, "task", 1, nil)
	d := f.seedDataset(t, a, "capitals", "Countries <b>and</b> capitals", 2, 60)
	f.seedDataset(t, a, "empty set", "", 0, 0)
	baseline := f.seedExperiment(t, a, d, "baseline", func(i int) string { return fmt.Sprintf("answer %d ok", i) }, traceID)
	// The candidate differs on every fourth row (and fails those).
	candidate := f.seedExperiment(t, a, d, "candidate <i>2</i>", func(i int) string {
		if i%4 == 0 {
			return fmt.Sprintf("<script>alert(%d)</script> wrong", i)
		}
		return fmt.Sprintf("answer %d ok", i)
	}, "")
	b := f.browser(t)
	b.signIn(t, a.Key)

	list := b.get(t, "/ui/datasets")
	require.Equal(t, http.StatusOK, list.Status, list.Body)
	assert.Contains(t, list.Body, `href="/ui/datasets/capitals"`)
	assert.Contains(t, list.Body, `href="/ui/datasets/empty%20set"`)
	assert.Contains(t, list.Body, "Countries &lt;b&gt;and&lt;/b&gt; capitals")
	assert.Contains(t, list.Body, `<td class="num" data-testid="dataset-version">2</td>`)
	assert.Contains(t, list.Body, `<td class="num" data-testid="dataset-rows">60</td>`)
	assert.Contains(t, list.Body, `href="/ui/datasets" aria-current="page">Datasets</a>`, "the nav's Datasets")

	ds := b.get(t, "/ui/datasets/capitals")
	require.Equal(t, http.StatusOK, ds.Status, ds.Body)
	assert.Equal(t, 2, ds.count(`data-testid="version-row"`))
	assert.Contains(t, ds.Body, `href="/ui/datasets/capitals?version=2" aria-current="page"`, "the latest version by default")
	assert.Equal(t, 50, ds.count(`data-testid="data-row"`), "a page of the rows")
	assert.Contains(t, ds.Body, "Rows 1–50 of 60")
	assert.Contains(t, ds.Body, "q0 &lt;img src=x onerror=alert(0)&gt;")
	assert.NotContains(t, ds.Body, "<img src=x")
	assert.Contains(t, ds.Body, `&#34;v&#34;:2`, "rows of version 2")
	next := html.UnescapeString(regexpFind(t, `href="([^"]+)" rel="next" data-testid="next-rows"`, ds.Body))
	assert.Equal(t, "/ui/datasets/capitals?offset=50&version=2", next, "the next rows stay on the version read")
	more := b.get(t, next)
	require.Equal(t, http.StatusOK, more.Status)
	assert.Equal(t, 10, more.count(`data-testid="data-row"`))
	assert.Contains(t, more.Body, "Rows 51–60 of 60")
	assert.NotContains(t, more.Body, `data-testid="next-rows"`)
	v1 := b.get(t, "/ui/datasets/capitals?version=1")
	require.Equal(t, http.StatusOK, v1.Status)
	assert.Contains(t, v1.Body, `&#34;v&#34;:1`, "an older version's rows")
	assert.Contains(t, v1.Body, `href="/ui/datasets/capitals?version=1" aria-current="page"`)
	// Experiments, newest first.
	assert.Less(t, strings.Index(ds.Body, "/ui/experiments/"+candidate), strings.Index(ds.Body, "/ui/experiments/"+baseline))
	assert.Contains(t, ds.Body, "candidate &lt;i&gt;2&lt;/i&gt;")
	empty := b.get(t, "/ui/datasets/empty%20set")
	require.Equal(t, http.StatusOK, empty.Status, empty.Body)
	assert.Contains(t, empty.Body, `data-testid="no-versions"`)
	assert.Contains(t, empty.Body, `data-testid="no-experiments"`)

	x := b.get(t, "/ui/experiments/"+candidate)
	require.Equal(t, http.StatusOK, x.Status, x.Body)
	assert.Contains(t, x.Body, `<h1 data-testid="experiment-name">candidate &lt;i&gt;2&lt;/i&gt;</h1>`)
	assert.Contains(t, x.Body, `href="/ui/datasets/capitals?version=2" data-testid="experiment-version">capitals v2</a>`)
	assert.Contains(t, x.Body, "&#34;temperature&#34;: 0.2", "the parameters, indented")
	assert.Equal(t, 50, x.count(`data-testid="result-row"`), "a page of the results")
	assert.Contains(t, x.Body, "&lt;script&gt;alert(0)&lt;/script&gt; wrong")
	assert.NotContains(t, x.Body, "<script>alert")
	assert.Contains(t, x.Body, `<th scope="col">exact</th>`, "the row evaluator's column")
	assert.NotContains(t, x.Body, `<th scope="col">exact_mean</th>`, "a column evaluator scores the run, not a row")
	assert.Equal(t, 50, x.count(`data-testid="result-score"`))
	assert.Contains(t, x.Body, `<tr data-testid="experiment-aggregate"><td class="num">1</td><td>exact</td><td>mean</td><td class="num">0.75 (60)</td></tr>`,
		"the row evaluator's mean over the run: 45 of 60 rows score 1")
	assert.Contains(t, x.Body, `data-testid="run-metric"`)
	assert.Contains(t, x.Body, `data-testid="column-metric"`)
	assert.Contains(t, x.Body, `data-testid="column-evaluation"><td>column evaluation</td><td>exact_mean</td>`)
	assert.Contains(t, x.Body, `<option value="`+baseline+`">baseline`, "the dataset's other experiment, to compare with")
	assert.NotContains(t, x.Body, `data-testid="result-trace"`, "the candidate's results have no trace")
	nextResults := html.UnescapeString(regexpFind(t, `href="([^"]+)" rel="next" data-testid="next-results"`, x.Body))
	rest := b.get(t, nextResults)
	require.Equal(t, http.StatusOK, rest.Status, rest.Body)
	assert.Equal(t, 10, rest.count(`data-testid="result-row"`), "the rest of the results")
	assert.Contains(t, rest.Body, "Results 51–60 of run 1")
	bx := b.get(t, "/ui/experiments/"+baseline)
	assert.Equal(t, 50, bx.count(`href="/ui/traces/`+traceID+`" data-testid="result-trace"`), "each result links its task's trace")

	cmp := b.get(t, "/ui/experiments/compare?ids="+baseline+"&ids="+candidate) // as the form sends it
	require.Equal(t, http.StatusOK, cmp.Status, cmp.Body)
	assert.Equal(t, 50, cmp.count(`data-testid="compare-row"`))
	differing := cmp.count(`data-differs="true"`)
	var apiCmp struct {
		Rows []struct {
			Differs bool `json:"differs"`
		} `json:"rows"`
	}
	f.api.MustDo(t, "GET", "/v1/experiments/compare?limit=50&ids="+baseline+","+candidate, a.Key, nil).Decode(t, &apiCmp)
	want := 0
	for _, r := range apiCmp.Rows {
		if r.Differs {
			want++
		}
	}
	assert.Equal(t, want, differing, "the rows the API says differ")
	assert.Positive(t, differing)
	rows := strings.Split(cmp.Body, `data-testid="compare-row"`)[1:]
	for i, r := range rows {
		assert.Equal(t, i < differing, strings.HasPrefix(r, ` class="differs"`), "row %d: the differing rows first", i)
	}
	assert.Contains(t, cmp.Body, "&lt;script&gt;alert(0)&lt;/script&gt; wrong")
	assert.NotContains(t, cmp.Body, "<script>alert")
	assert.Contains(t, cmp.Body, "exact: <span data-testid=\"score-value\">1</span>")
	assert.Contains(t, cmp.Body, "exact: <span data-testid=\"score-value\">0</span>")
	// pass_rate: 1 for the baseline, 0.75 for the candidate (rows 0, 4 ... fail).
	metric := regexpFind(t, `(?s)pass_rate <span class="help">\(run\)</span></th>(.*?)</tr>`, cmp.Body)
	assert.Contains(t, metric, `<td class="num">1</td>`)
	assert.Contains(t, metric, `<td class="num">0.75</td>`)
	assert.Contains(t, metric, `<td class="num" data-testid="metric-difference">-0.25</td>`)
	// The row evaluator "exact" (numbers 1 and 0) over the whole run, not only this page: the
	// mean of its 60 evaluations in each experiment.
	exact := regexpFind(t, `(?s)exact <span class="help">\(mean\)</span></th>(.*?)</tr>`, cmp.Body)
	assert.Contains(t, exact, `<td class="num">1 (60)</td>`)
	assert.Contains(t, exact, `<td class="num">0.75 (60)</td>`)
	assert.Contains(t, exact, `<td class="num" data-testid="evaluator-difference">-0.25</td>`)
	nextCmp := html.UnescapeString(regexpFind(t, `href="([^"]+)" rel="next" data-testid="next-compare"`, cmp.Body))
	assert.Contains(t, nextCmp, "ids="+url.QueryEscape(baseline+","+candidate))
	cmp2 := b.get(t, nextCmp)
	require.Equal(t, http.StatusOK, cmp2.Status, cmp2.Body)
	assert.Equal(t, 10, cmp2.count(`data-testid="compare-row"`), "the rest of the rows")
}

// TestDatasetPagesRefuse: another project's dataset and experiments are 404 pages (the API's
// project scope), ids and parameters the pages cannot use 400 pages, before any read.
func TestDatasetPagesRefuse(t *testing.T) {
	f := newFixture(t)
	a, other := f.api.A, f.api.B
	mine := f.seedDataset(t, a, "mine", "", 1, 3)
	theirs := f.seedDataset(t, other, "theirs", "their secret", 1, 3)
	myExp := f.seedExperiment(t, a, mine, "mine", func(i int) string { return "ok" }, "")
	theirExp := f.seedExperiment(t, other, theirs, "their run", func(i int) string { return "ok" }, "")
	b := f.browser(t)
	b.signIn(t, a.Key)

	tests := []struct {
		name, path string
		status     int
	}{
		{"another project's dataset", "/ui/datasets/theirs", http.StatusNotFound},
		{"another project's experiment", "/ui/experiments/" + theirExp, http.StatusNotFound},
		{"compared with another project's experiment", "/ui/experiments/compare?ids=" + myExp + "," + theirExp, http.StatusNotFound},
		{"an unknown dataset", "/ui/datasets/nothing", http.StatusNotFound},
		{"a version the dataset does not have", "/ui/datasets/mine?version=9", http.StatusNotFound},
		{"a version that is not a number", "/ui/datasets/mine?version=latest", http.StatusBadRequest},
		{"a negative offset", "/ui/datasets/mine?offset=-1", http.StatusBadRequest},
		{"a dataset name the API refuses", "/ui/datasets/bad%3Cname%3E", http.StatusBadRequest},
		{"an experiment id that is not a UUID", "/ui/experiments/not-an-id", http.StatusBadRequest},
		{"an experiment id with markup", "/ui/experiments/%3Cscript%3E", http.StatusBadRequest},
		{"a run that is not a number", "/ui/experiments/" + myExp + "?run=first", http.StatusBadRequest},
		{"a results cursor of no row", "/ui/experiments/" + myExp + "?cursor=zz", http.StatusBadRequest},
		{"an offset on a cursor list", "/ui/experiments/" + myExp + "?offset=50", http.StatusBadRequest},
		{"one experiment compared", "/ui/experiments/compare?ids=" + myExp, http.StatusBadRequest},
		{"nothing compared", "/ui/experiments/compare", http.StatusBadRequest},
		{"six experiments compared", "/ui/experiments/compare?ids=" + strings.Repeat(myExp+",", 5) + myExp, http.StatusBadRequest},
		{"a compared id that is not a UUID", "/ui/experiments/compare?ids=" + myExp + ",nope", http.StatusBadRequest},
		{"a datasets offset", "/ui/datasets?offset=50", http.StatusBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := b.get(t, tt.path)
			assert.Equal(t, tt.status, p.Status, p.Body)
			assert.Contains(t, p.Header.Get("Content-Type"), "text/html")
			assert.NotContains(t, p.Body, "their secret", "nothing of the other project")
			assert.NotContains(t, p.Body, "their run", "nothing of the other project")
			assert.NotContains(t, p.Body, "<script>")
		})
	}
	// The other project's session sees its own.
	ob := f.browser(t)
	ob.signIn(t, other.Key)
	assert.Equal(t, http.StatusOK, ob.get(t, "/ui/experiments/"+theirExp).Status)
	assert.Equal(t, http.StatusNotFound, ob.get(t, "/ui/experiments/"+myExp).Status)
	ol := ob.get(t, "/ui/datasets")
	assert.Contains(t, ol.Body, "/ui/datasets/theirs")
	assert.NotContains(t, ol.Body, "/ui/datasets/mine")
}

// TestRequestsPerDatasetPage counts the AWS requests of each datasets page (our users' bill)
// for a dataset of 10 rows and one of 100 (each with two experiments of a result per row): the
// same for both, so a page's cost follows its page, never the dataset.
func TestRequestsPerDatasetPage(t *testing.T) {
	f := newFixture(t)
	a := f.api.A
	type seeded struct{ dataset, baseline, candidate string }
	seed := func(name string, n int) seeded {
		d := f.seedDataset(t, a, name, "", 1, n)
		return seeded{dataset: name,
			baseline:  f.seedExperiment(t, a, d, "baseline", func(i int) string { return "ok" }, ""),
			candidate: f.seedExperiment(t, a, d, "candidate", func(i int) string { return fmt.Sprint(i % 2) }, "")}
	}
	small, large := seed("small", 10), seed("large", 100)
	b := f.browser(t)
	b.signIn(t, a.Key)
	pages := func(s seeded) map[string]string {
		return map[string]string{
			"datasets":   "/ui/datasets",
			"dataset":    "/ui/datasets/" + s.dataset,
			"experiment": "/ui/experiments/" + s.candidate,
			"compare":    "/ui/experiments/compare?ids=" + s.baseline + "," + s.candidate,
		}
	}
	type cost struct {
		DDB map[string]int
		S3  int
	}
	measure := func(path string) cost {
		f.api.DDB.Reset()
		f.api.S3.Reset()
		p := b.get(t, path)
		require.Equal(t, http.StatusOK, p.Status, p.Body)
		return cost{DDB: f.api.DDB.Counts(), S3: f.api.S3.Count("GetObject")}
	}
	want := map[string]cost{
		// The session and its key, then the API's reads.
		"datasets": {DDB: map[string]int{"GetItem": 2, "Query": 1}},
		// The dataset; its versions (the dataset, a Query); the latest version's rows (a Query
		// and a ranged GET); its experiments (the dataset, a Query).
		"dataset": {DDB: map[string]int{"GetItem": 5, "Query": 3}, S3: 1},
		// The experiment's definition (a Query); a page of results (the experiment, a Query);
		// the dataset's experiments for the compare form (the dataset, a Query).
		"experiment": {DDB: map[string]int{"GetItem": 4, "Query": 3}},
		// Per experiment its definition (a Query) and its page of results (the experiment, a
		// Query).
		"compare": {DDB: map[string]int{"GetItem": 4, "Query": 4}},
	}
	for name, path := range pages(small) {
		got := measure(path)
		t.Logf("%-10s 10 rows: DynamoDB %v, S3 GET %d", name, got.DDB, got.S3)
		assert.Equal(t, want[name], got, "%s of 10 rows", name)
		big := measure(pages(large)[name])
		t.Logf("%-10s 100 rows: DynamoDB %v, S3 GET %d", name, big.DDB, big.S3)
		assert.Equal(t, got, big, "%s: the same requests for 100 rows as for 10", name)
	}

	// The experiment's results by dataset row, 50 a page by cursor: the next page costs what
	// the first does, and the two hold each of the 100 rows once, in row id order.
	first := b.get(t, "/ui/experiments/"+large.candidate)
	next := html.UnescapeString(regexpFind(t, `href="([^"]+)" rel="next" data-testid="next-results"`, first.Body))
	assert.Equal(t, want["experiment"], measure(next), "the next page of results")
	rest := b.get(t, next)
	assert.NotContains(t, rest.Body, `data-testid="next-results"`, "the last page")
	var rowIDs []string
	for _, p := range []page{first, rest} {
		for _, m := range regexp.MustCompile(`<tr data-testid="result-row">\s*<td class="num">\d*</td>\s*<td><code>([0-9a-f]{32})</code>`).FindAllStringSubmatch(p.Body, -1) {
			rowIDs = append(rowIDs, m[1])
		}
	}
	assert.Len(t, rowIDs, 100)
	assert.True(t, slices.IsSorted(rowIDs), "by row id")
	assert.Len(t, slices.Compact(slices.Clone(rowIDs)), 100, "each row once")
}

// TestExperimentJudgeScores: a judge attached to an experiment (the judge runner against the
// fake model server) is a column of the experiment's results, marked a judge and linked to its
// page, each result with the judge's verdict and reason; compare shows them too.
func TestExperimentJudgeScores(t *testing.T) {
	f := newOptimizeFixture(t, true)
	a := f.api.A
	var mu sync.Mutex
	var keys []string
	f.api.Blobs.OnCreated(func(key string) {
		mu.Lock()
		defer mu.Unlock()
		keys = append(keys, key)
	})
	d := f.seedDataset(t, a, "capitals", "", 1, 3)
	first := f.seedExperiment(t, a, d, "first", func(i int) string { return fmt.Sprintf("City %d ok", i) }, "")
	second := f.seedExperiment(t, a, d, "second", func(i int) string { return fmt.Sprintf("Town %d", i) }, "")
	judgeID := f.api.MustDo(t, "POST", "/projects/"+a.ProjectID+"/judges", a.Key, map[string]any{
		"name": "capital-check", "template": "Is the answer right?\n\nQuestion: {{input}}\nAnswer: {{output}}",
	}).Map(t)["id"].(string)
	runner, err := evaluator.FromEnv(t.Context(), f.api.Env)
	require.NoError(t, err)
	for _, id := range []string{first, second} {
		f.api.MustDo(t, "POST", "/v1/experiments/"+id+"/judges", a.Key, map[string]any{"judge_id": judgeID})
	}
	mu.Lock()
	sent := keys
	mu.Unlock()
	for _, key := range sent {
		if !strings.HasPrefix(key, "experiment-judges/") {
			continue
		}
		event, err := evaluator.ObjectEvent(f.api.Blobs.Bucket(), key, time.Now())
		require.NoError(t, err)
		require.NoError(t, runner.Handle(t.Context(), event), key)
	}
	b := f.browser(t)
	b.signIn(t, a.Key)

	x := b.get(t, "/ui/experiments/"+first)
	require.Equal(t, http.StatusOK, x.Status, x.Body)
	assert.Contains(t, x.Body, `<th scope="col">capital-check <span class="help">(judge)</span></th>`)
	assert.Contains(t, x.Body, `href="/ui/judges/`+judgeID+`"`, "the judge evaluator links its judge")
	var results struct {
		Results []struct {
			Evaluations []struct {
				EvaluatorName   string          `json:"evaluator_name"`
				EvaluationValue json.RawMessage `json:"evaluation_value"`
				Reason          string          `json:"evaluation_reason"`
			} `json:"evaluations"`
		} `json:"results"`
	}
	f.api.MustDo(t, "GET", "/v1/experiments/"+first+"/results", a.Key, nil).Decode(t, &results)
	require.Len(t, results.Results, 3)
	judged := 0
	for _, r := range results.Results {
		for _, e := range r.Evaluations {
			if e.EvaluatorName == "capital-check" {
				judged++
				require.NotEmpty(t, e.Reason)
				assert.Contains(t, x.Body, `<span data-testid="score-value">`+string(e.EvaluationValue)+`</span><br><span class="help">`+html.EscapeString(e.Reason)+`</span>`,
					"the verdict and its reason")
			}
		}
	}
	assert.Equal(t, 3, judged, "every result judged")
	cmp := b.get(t, "/ui/experiments/compare?ids="+first+","+second)
	require.Equal(t, http.StatusOK, cmp.Status, cmp.Body)
	assert.Equal(t, 6, cmp.count("capital-check: <span data-testid=\"score-value\">"), "each experiment's verdict of each row")
	// And the judge's pass rate in each, of its 3 verdicts.
	check := regexpFind(t, `(?s)capital-check <span class="help">\(pass rate\)</span></th>(.*?)</tr>`, cmp.Body)
	assert.Equal(t, 2, strings.Count(check, " of 3)</td>"), check)
}
