package datasets

import (
	"cmp"
	"net/http"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/shared/auth"
	"github.com/plumehq/plume/shared/dataset"
	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/web"
)

// compare serves GET /v1/experiments/compare?ids=A,B&run_number=&limit=&cursor=: per dataset
// row, each experiment's result and evaluations side by side (a page of rows by row id, so
// that experiments on different versions of a dataset line up on unchanged rows); per metric
// (the column and run metrics the experiments posted), each one's value and the difference;
// per row evaluator, each one's pass rate or mean over the run (the tallies its definition's
// Query reads, kept as evaluations are written) and the difference. Requests: per experiment,
// one Query of its definition and the Query pages of its results' page; the cost follows the
// page and the number of experiments, never their rows.
func (s *server) compare(w http.ResponseWriter, r *http.Request) {
	limit, cursor, err := page(r)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	q := r.URL.Query()
	ids := strings.Split(q.Get("ids"), ",")
	if len(ids) < 2 || len(ids) > api.MaxCompared {
		web.Error(w, r, errs.Invalid("ids must name 2 to %d experiments, comma-separated", api.MaxCompared))
		return
	}
	run, err := intParam(q.Get("run_number"), "run_number", 1, 1, 1_000_000)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	out := api.ExperimentComparison{RunNumber: run, Rows: []api.ComparedRow{}, Metrics: []api.ComparedMetric{}}
	pages, more := make([][]dataset.Result, len(ids)), make([]bool, len(ids))
	metrics := map[string]*api.ComparedMetric{}
	aggregates := make([][]dataset.Aggregate, len(ids))
	for i, id := range ids {
		if !isUUID(id) {
			web.Error(w, r, errs.NotFound("experiment %q not found", id))
			return
		}
		d, err := s.x.Get(r.Context(), auth.ProjectID(r), id)
		if err != nil {
			web.Error(w, r, err)
			return
		}
		out.Experiments = append(out.Experiments, toExperiment(d.Experiment))
		aggregates[i] = d.Aggregates
		for _, rec := range d.Records {
			if rec.Kind == dataset.KindColumnEvaluation || (rec.Kind == dataset.KindColumnMetric && rec.Run != run) {
				continue
			}
			m := metrics[rec.Kind+"\x00"+rec.Name]
			if m == nil {
				m = &api.ComparedMetric{Name: rec.Name, Kind: metricKind(rec.Kind), Values: make([]*float64, len(ids))}
				metrics[rec.Kind+"\x00"+rec.Name] = m
			}
			m.Values[i] = dataset.MetricValue(rec.Name, rec.Results)
		}
		var next string
		if pages[i], next, err = s.x.Results(r.Context(), auth.ProjectID(r), id, run, cursor, limit); err != nil {
			web.Error(w, r, err)
			return
		}
		more[i] = next != ""
	}
	for _, m := range metrics {
		first, last := m.Values[0], m.Values[len(m.Values)-1]
		if first != nil && last != nil {
			d := *last - *first
			m.Difference = &d
		}
		out.Metrics = append(out.Metrics, *m)
	}
	sortMetrics(out.Metrics)
	out.Evaluators = dataset.CompareAggregates(aggregates, run)
	rows, results, hasMore := dataset.MergeRows(pages, more, limit)
	for i, id := range rows {
		row := api.ComparedRow{DatasetRowID: id, Results: make([]*api.ExperimentResult, len(ids))}
		var text *string
		for j, res := range results[i] {
			if res == nil {
				row.Differs = true
				continue
			}
			converted := toResults([]dataset.Result{*res})[0]
			row.Results[j] = &converted
			if text != nil && *text != res.Result {
				row.Differs = true
			}
			text = &res.Result
		}
		out.Rows = append(out.Rows, row)
	}
	if hasMore && len(rows) > 0 {
		out.NextCursor = &rows[len(rows)-1]
	}
	web.OK(w, out)
}

func metricKind(kind string) string {
	if kind == dataset.KindRunMetric {
		return "run"
	}
	return "column"
}

func sortMetrics(ms []api.ComparedMetric) {
	slices.SortFunc(ms, func(a, b api.ComparedMetric) int {
		return cmp.Or(strings.Compare(a.Kind, b.Kind), strings.Compare(a.Name, b.Name))
	})
}

func isUUID(s string) bool { return uuid.Validate(s) == nil && len(s) == 36 }
