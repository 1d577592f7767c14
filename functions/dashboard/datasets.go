package dashboard

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/client"
	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/textcut"
)

// datasetRoutes registers the pages of datasets and experiments (docs/datasets.md): the
// datasets, a dataset with its versions, a page of a version's rows and its experiments, an
// experiment with a page of its results, and experiments compared. Every read is a page of the
// REST API's (GET /v1/datasets..., /v1/experiments...): no page reads a whole version or every
// result, so a page costs the same for 10 rows as for 100,000 (TestRequestsPerDatasetPage).
func (s *server) datasetRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /ui/datasets", s.datasets)
	mux.HandleFunc("GET /ui/datasets/{name}", s.datasetPage)
	mux.HandleFunc("GET /ui/experiments/compare", s.compareExperiments)
	mux.HandleFunc("GET /ui/experiments/{experiment_id}", s.experimentPage)
}

const (
	datasetsPerPage          = 50
	datasetRowsPerPage       = 50
	datasetVersionsPerPage   = 20
	datasetExperimentsPage   = 20
	experimentResultsPerPage = 50
	comparedRowsPerPage      = 50
	// compareChoices is how many of the dataset's newest experiments the compare form offers.
	compareChoices = 50
	// shownCellBytes cuts a row's data, a result or a metric on a page: a result may be 300 KB,
	// the API has it all.
	shownCellBytes = 2 << 10
	// shownScoreBytes cuts an evaluation's value and reason.
	shownScoreBytes = 512
)

// cursorPageOf is where a page of a list that pages only by cursor starts (?cursor=, ?row=).
func cursorPageOf(q url.Values) (listPage, error) {
	at, err := listPageOf(q)
	if err == nil && at.Offset > 0 {
		return at, errs.Invalid("This list pages by cursor, not offset: follow its Next page link.")
	}
	return at, err
}

// positiveParam reads ?key= as a whole number of at least 1, def when absent.
func positiveParam(q url.Values, key, what string, def int) (int, error) {
	v := q.Get(key)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > 1<<31-1 {
		return 0, errs.Invalid("The %s must be a whole number from 1.", what)
	}
	return n, nil
}

// cursorParam reads ?key= as a cursor of one of the page's lists.
func cursorParam(q url.Values, key string) (string, error) {
	c := q.Get(key)
	if len(c) > api.MaxCursorBytes {
		return "", errs.Invalid("The page cursor is longer than %d bytes: follow the page's links.", api.MaxCursorBytes)
	}
	return c, nil
}

// linkWith is path with q's query and set applied: each key set to its value, or removed when
// the value is "".
func linkWith(path string, q url.Values, set map[string]string) string {
	v := url.Values{}
	for k, vs := range q {
		v[k] = vs
	}
	for k, val := range set {
		if val == "" {
			v.Del(k)
		} else {
			v.Set(k, val)
		}
	}
	if len(v) == 0 {
		return path
	}
	return path + "?" + v.Encode()
}

// shownText is text as a cell shows it: cut at shownCellBytes, with whether it was cut.
type shownText struct {
	Text string
	Cut  bool
}

func showText(s string, n int) shownText {
	cut, shortened := textcut.Cut(s, n)
	return shownText{Text: cut, Cut: shortened}
}

// showJSON is v compact, as a cell shows it; a JSON string is shown as its text.
func showJSON(v json.RawMessage, n int) shownText {
	v = bytes.TrimSpace(v)
	if len(v) == 0 || string(v) == "null" {
		return shownText{Text: "–"}
	}
	var s string
	if v[0] == '"' && json.Unmarshal(v, &s) == nil {
		return showText(s, n)
	}
	var buf bytes.Buffer
	if json.Compact(&buf, v) == nil {
		return showText(buf.String(), n)
	}
	return showText(string(v), n)
}

// indentJSON is v indented, "" for none.
func indentJSON(v json.RawMessage) string {
	v = bytes.TrimSpace(v)
	if len(v) == 0 || string(v) == "null" || string(v) == "{}" {
		return ""
	}
	var buf bytes.Buffer
	if json.Indent(&buf, v, "", "  ") != nil {
		return string(v)
	}
	cut, _ := textcut.Cut(buf.String(), maxShownBytes)
	return cut
}

type datasetsData struct {
	Datasets []api.Dataset
	pager
}

// datasets serves GET /ui/datasets (?cursor=): the project's datasets by name, 50 a page (one
// Query of GET /v1/datasets).
func (s *server) datasets(w http.ResponseWriter, r *http.Request) {
	at, err := cursorPageOf(r.URL.Query())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	c, ctx := s.api(r)
	list, err := c.Datasets(ctx, client.PageOptions{Limit: datasetsPerPage, Cursor: at.Cursor})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	d := datasetsData{Datasets: list.Datasets, pager: at.paging(len(list.Datasets), deref(list.NextCursor), func(cursor string, row int) string {
		return cursorURL("/ui/datasets", nil, cursor, row)
	})}
	s.render(w, r, http.StatusOK, "datasets", page{Title: "Datasets", Nav: "datasets", Data: d})
}

// shownRow is a dataset row on its page, numbered from 1 in its version.
type shownRow struct {
	Number int
	RowID  string
	Data   shownText
}

type datasetData struct {
	Dataset api.Dataset
	URL     string
	// Versions are a page of the versions, newest first; Version is the one whose rows are
	// shown (0: the dataset has none yet).
	Versions                      []api.DatasetVersion
	Version                       int
	NewestVersions, OlderVersions string
	Rows                          []shownRow
	// RowsFirst and RowsLast number the rows shown, of TotalRows; the links page the rows.
	RowsFirst, RowsLast, TotalRows      int
	FirstRows, PrevRows, NextRows       string
	Experiments                         []api.Experiment
	NewestExperiments, OlderExperiments string
	// CompareNewest compares the two newest experiments ("" when there are not two).
	CompareNewest string
}

// datasetPage serves GET /ui/datasets/{name} (?version=&offset=&vcursor=&xcursor=): the
// dataset, a page of its versions (newest first), a page of a version's rows (the latest by
// default; 50 from ?offset=, one read of the version and one ranged GET of its object) and a
// page of its experiments (newest first).
func (s *server) datasetPage(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	q := r.URL.Query()
	version, err := positiveParam(q, "version", "version", 0)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	offset, err := offsetOf(q)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	vcursor, err := cursorParam(q, "vcursor")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	xcursor, err := cursorParam(q, "xcursor")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	c, ctx := s.api(r)
	ds, err := c.Dataset(ctx, name)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	path := "/ui/datasets/" + url.PathEscape(ds.Name)
	d := datasetData{Dataset: ds, URL: path}
	versions, err := c.DatasetVersions(ctx, name, client.PageOptions{Limit: datasetVersionsPerPage, Cursor: vcursor})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	d.Versions = versions.Versions
	if next := deref(versions.NextCursor); next != "" {
		d.OlderVersions = linkWith(path, q, map[string]string{"vcursor": next})
	}
	if vcursor != "" {
		d.NewestVersions = linkWith(path, q, map[string]string{"vcursor": ""})
	}
	if ds.VersionNumber > 0 {
		rows, err := c.DatasetRows(ctx, name, version, offset, datasetRowsPerPage)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		// Every link of the rows names the version read, so that its pages stay on it when a
		// push makes a newer one.
		d.Version, d.TotalRows = rows.Version.VersionNumber, rows.TotalRows
		at := func(o int) string {
			return linkWith(path, q, map[string]string{"version": strconv.Itoa(d.Version), "offset": strconv.Itoa(o)})
		}
		for i, row := range rows.Rows {
			d.Rows = append(d.Rows, shownRow{Number: offset + i + 1, RowID: row.RowID, Data: showJSON(row.Data, shownCellBytes)})
		}
		if n := len(rows.Rows); n > 0 {
			d.RowsFirst, d.RowsLast = offset+1, offset+n
			if offset+n < rows.TotalRows {
				d.NextRows = at(offset + n)
			}
		}
		if offset > 0 {
			d.FirstRows = linkWith(path, q, map[string]string{"version": strconv.Itoa(d.Version), "offset": ""})
			d.PrevRows = at(max(offset-datasetRowsPerPage, 0))
		}
	}
	xs, err := c.Experiments(ctx, name, client.PageOptions{Limit: datasetExperimentsPage, Cursor: xcursor})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	d.Experiments = xs.Experiments
	if xcursor == "" && len(xs.Experiments) >= 2 {
		d.CompareNewest = "/ui/experiments/compare?" + url.Values{"ids": {xs.Experiments[1].ID + "," + xs.Experiments[0].ID}}.Encode()
	}
	if next := deref(xs.NextCursor); next != "" {
		d.OlderExperiments = linkWith(path, q, map[string]string{"xcursor": next})
	}
	if xcursor != "" {
		d.NewestExperiments = linkWith(path, q, map[string]string{"xcursor": ""})
	}
	s.render(w, r, http.StatusOK, "dataset", page{Title: ds.Name, Nav: "datasets", Data: d})
}

// evalScore is an evaluation as a cell shows it; Missing when the result has none of its
// evaluator.
type evalScore struct {
	Evaluator string
	Value     shownText
	Type      string
	Reason    string
	Missing   bool
}

func toScore(e api.ExperimentEvaluation) evalScore {
	sc := evalScore{Evaluator: e.EvaluatorName, Value: showJSON(e.EvaluationValue, shownScoreBytes), Type: e.EvaluationType}
	if e.EvaluationReason != nil {
		sc.Reason = showText(*e.EvaluationReason, shownScoreBytes).Text
	}
	return sc
}

// shownResult is a result on the experiment's page: its scores line up with the page's
// evaluator columns.
type shownResult struct {
	Number     int
	RowID      string
	Result     shownText
	ResultType string
	TraceID    string
	Scores     []evalScore
}

// shownRecord is a column evaluation or a metric of an experiment.
type shownRecord struct {
	Name    string
	Run     int
	Results shownText
}

// shownAggregate is a row evaluator's aggregate in one run: "0.8 (4 of 5)" of a pass rate,
// "5.8 (5)" of a mean.
type shownAggregate struct {
	Run             int
	Evaluator, Kind string
	Value           string
}

type runLink struct {
	Number, Results int
	URL             string
	Current         bool
}

type experimentData struct {
	Experiment api.ExperimentDetail
	Parameters string
	Run        int
	Runs       []runLink
	// Columns are the row evaluators, the judges among them, whose scores the results show.
	Columns           []api.Evaluator
	Results           []shownResult
	ColumnEvaluations []shownRecord
	ColumnMetrics     []shownRecord
	RunMetrics        []shownRecord
	// Aggregates are each row evaluator's pass rate or mean per run, from the experiment.
	Aggregates []shownAggregate
	pager
	// Others are the dataset's newest other experiments, to compare with; OthersNote says why
	// they could not be read.
	Others     []api.Experiment
	OthersNote string
}

// experimentPage serves GET /ui/experiments/{experiment_id} (?run=&cursor=&row=): the
// experiment (one Query), a page of a run's results with their scores (50, by row id), and the
// dataset's newest experiments to compare it with.
func (s *server) experimentPage(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("experiment_id")
	if uuid.Validate(id) != nil || len(id) != 36 {
		s.fail(w, r, errs.Invalid("%q is not an experiment id: experiment ids are UUIDs.", textcut.Prefix(id, 64)))
		return
	}
	q := r.URL.Query()
	run, err := positiveParam(q, "run", "run number", 1)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	at, err := cursorPageOf(q)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	c, ctx := s.api(r)
	x, err := c.Experiment(ctx, id)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	res, err := c.ExperimentResults(ctx, id, run, client.PageOptions{Limit: experimentResultsPerPage, Cursor: at.Cursor})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	path := "/ui/experiments/" + url.PathEscape(x.ID)
	d := experimentData{Experiment: x, Parameters: indentJSON(x.Parameters), Run: run}
	runQuery := url.Values{}
	if run != 1 {
		runQuery.Set("run", strconv.Itoa(run))
	}
	d.pager = at.paging(len(res.Results), deref(res.NextCursor), func(cursor string, row int) string {
		return cursorURL(path, runQuery, cursor, row)
	})
	for _, rn := range x.Runs {
		link := path
		if rn.RunNumber != 1 {
			link += "?run=" + strconv.Itoa(rn.RunNumber)
		}
		d.Runs = append(d.Runs, runLink{Number: rn.RunNumber, Results: rn.ResultCount, URL: link, Current: rn.RunNumber == run})
	}
	names := map[string]string{}
	for _, e := range x.Evaluators {
		names[e.ID] = e.Name
		if e.EvaluationMode != api.EvaluationModeColumn {
			d.Columns = append(d.Columns, e)
		}
	}
	// An evaluation of an evaluator the experiment does not list (none should be) gets a column.
	for _, rs := range res.Results {
		for _, e := range rs.Evaluations {
			if !slices.ContainsFunc(d.Columns, func(c api.Evaluator) bool { return c.ID == e.EvaluatorID }) {
				d.Columns = append(d.Columns, api.Evaluator{ID: e.EvaluatorID, Name: e.EvaluatorName, EvaluationMode: api.EvaluationModeRow})
			}
		}
	}
	for i, rs := range res.Results {
		sr := shownResult{RowID: rs.DatasetRowID, Result: showText(rs.Result, shownCellBytes), ResultType: rs.ResultType, TraceID: deref(rs.TraceID)}
		if d.First > 0 {
			sr.Number = d.First + i
		}
		for _, col := range d.Columns {
			j := slices.IndexFunc(rs.Evaluations, func(e api.ExperimentEvaluation) bool { return e.EvaluatorID == col.ID })
			if j < 0 {
				sr.Scores = append(sr.Scores, evalScore{Evaluator: col.Name, Missing: true})
				continue
			}
			sr.Scores = append(sr.Scores, toScore(rs.Evaluations[j]))
		}
		d.Results = append(d.Results, sr)
	}
	for _, ce := range x.ColumnEvaluations {
		d.ColumnEvaluations = append(d.ColumnEvaluations, shownRecord{Name: cmp.Or(names[ce.EvaluatorID], ce.EvaluatorID), Run: ce.RunNumber, Results: showJSON(ce.EvaluationResults, shownCellBytes)})
	}
	for _, m := range x.ColumnMetrics {
		d.ColumnMetrics = append(d.ColumnMetrics, shownRecord{Name: m.MetricName, Run: m.RunNumber, Results: showJSON(m.Results, shownCellBytes)})
	}
	for _, m := range x.RunMetrics {
		d.RunMetrics = append(d.RunMetrics, shownRecord{Name: m.MetricName, Run: m.TotalRuns, Results: showJSON(m.Results, shownCellBytes)})
	}
	for _, a := range x.Aggregates {
		measure, kind := api.MeasureMean, "mean"
		if a.BooleanCount > 0 {
			measure, kind = api.MeasurePassRate, "pass rate"
		}
		d.Aggregates = append(d.Aggregates, shownAggregate{Run: a.RunNumber, Evaluator: a.EvaluatorName, Kind: kind, Value: aggregateText(&a.EvaluatorAggregate, measure)})
	}
	others, err := c.Experiments(ctx, x.DatasetName, client.PageOptions{Limit: compareChoices})
	if err != nil {
		d.OthersNote = readNote(r, "dataset's other experiments", err)
	}
	for _, o := range others.Experiments {
		if o.ID != x.ID {
			d.Others = append(d.Others, o)
		}
	}
	s.render(w, r, http.StatusOK, "experiment", page{Title: cmp.Or(x.Name, "Experiment "+x.ID), Nav: "datasets", Data: d})
}

// comparedCell is one experiment's result of a compared row.
type comparedCell struct {
	Missing bool
	Result  shownText
	TraceID string
	Scores  []evalScore
}

type comparedRow struct {
	RowID   string
	Differs bool
	Cells   []comparedCell
}

type comparedMetric struct {
	Name, Kind string
	Values     []string
	Difference string
}

// comparedEvaluator is an evaluator's line of the compare page: each experiment's pass rate
// or mean with what it counts, and the difference.
type comparedEvaluator struct {
	Name, Measure string
	Values        []string
	Difference    string
}

type compareData struct {
	Experiments []api.Experiment
	Run         int
	Metrics     []comparedMetric
	Evaluators  []comparedEvaluator
	// Rows are the page's rows, those whose results differ first; Differing counts them.
	Rows      []comparedRow
	Differing int
	pager
}

// compareExperiments serves GET /ui/experiments/compare?ids=A,B (ids also repeated, as the
// experiment page's form sends them; &run=&cursor=&row=): a page of dataset rows (50, by row
// id) with each experiment's output and scores side by side, the rows that differ first, and
// per metric and per row evaluator (its pass rate or mean over the run) each experiment's
// value and the difference, from one GET /v1/experiments/compare.
func (s *server) compareExperiments(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	var ids []string
	for _, v := range q["ids"] {
		for _, id := range strings.Split(v, ",") {
			if id = strings.TrimSpace(id); id != "" {
				ids = append(ids, id)
			}
		}
	}
	if len(ids) < 2 || len(ids) > api.MaxCompared {
		s.fail(w, r, errs.Invalid("Compare 2 to %d experiments: ids=A,B names them.", api.MaxCompared))
		return
	}
	for _, id := range ids {
		if uuid.Validate(id) != nil || len(id) != 36 {
			s.fail(w, r, errs.Invalid("%q is not an experiment id: experiment ids are UUIDs.", textcut.Prefix(id, 64)))
			return
		}
	}
	run, err := positiveParam(q, "run", "run number", 1)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	at, err := cursorPageOf(q)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	c, ctx := s.api(r)
	answer, err := c.CompareExperiments(ctx, ids, run, client.PageOptions{Limit: comparedRowsPerPage, Cursor: at.Cursor})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	base := url.Values{"ids": {strings.Join(ids, ",")}}
	if run != 1 {
		base.Set("run", strconv.Itoa(run))
	}
	d := compareData{Experiments: answer.Experiments, Run: run, pager: at.paging(len(answer.Rows), deref(answer.NextCursor), func(cursor string, row int) string {
		return cursorURL("/ui/experiments/compare", base, cursor, row)
	})}
	for _, m := range answer.Metrics {
		cm := comparedMetric{Name: m.Name, Kind: m.Kind, Difference: signedOrDash(m.Difference)}
		for _, v := range m.Values {
			cm.Values = append(cm.Values, numberOrDash(v))
		}
		d.Metrics = append(d.Metrics, cm)
	}
	for _, ev := range answer.Evaluators {
		ce := comparedEvaluator{Name: ev.Name, Measure: "pass rate", Difference: signedOrDash(ev.Difference)}
		if ev.Measure == api.MeasureMean {
			ce.Measure = "mean"
		}
		for _, a := range ev.Values {
			ce.Values = append(ce.Values, aggregateText(a, ev.Measure))
		}
		d.Evaluators = append(d.Evaluators, ce)
	}
	for _, row := range answer.Rows {
		cr := comparedRow{RowID: row.DatasetRowID, Differs: row.Differs}
		for _, res := range row.Results {
			if res == nil {
				cr.Cells = append(cr.Cells, comparedCell{Missing: true})
				continue
			}
			cell := comparedCell{Result: showText(res.Result, shownCellBytes), TraceID: deref(res.TraceID)}
			for _, e := range res.Evaluations {
				cell.Scores = append(cell.Scores, toScore(e))
			}
			cr.Cells = append(cr.Cells, cell)
		}
		if cr.Differs {
			d.Differing++
		}
		d.Rows = append(d.Rows, cr)
	}
	// The rows that differ first, each group in the API's order (by row id): the page is the
	// API's page, so every row is on exactly one page whatever its order on it.
	slices.SortStableFunc(d.Rows, func(a, b comparedRow) int {
		switch {
		case a.Differs == b.Differs:
			return 0
		case a.Differs:
			return -1
		}
		return 1
	})
	s.render(w, r, http.StatusOK, "experiment-compare", page{Title: "Compare experiments", Nav: "datasets", Data: d})
}

// aggregateText writes an evaluator's aggregate: "0.8 (4 of 5)" for a pass rate, "5.8 (5)"
// for a mean, "–" for none.
func aggregateText(a *api.EvaluatorAggregate, measure string) string {
	v := a.Of(measure)
	switch {
	case v == nil:
		return "–"
	case measure == api.MeasurePassRate:
		return fmt.Sprintf("%s (%d of %d)", numberOrDash(v), a.Passed, a.BooleanCount)
	}
	return fmt.Sprintf("%s (%d)", numberOrDash(v), a.NumericCount)
}

// numberOrDash writes v as short as it reads back, "–" for nil (no value yet).
func numberOrDash(v *float64) string {
	if v == nil {
		return "–"
	}
	return strconv.FormatFloat(*v, 'g', 6, 64)
}

func signedOrDash(v *float64) string {
	if v == nil {
		return "–"
	}
	s := strconv.FormatFloat(*v, 'g', 6, 64)
	if *v > 0 {
		s = "+" + s
	}
	return s
}
