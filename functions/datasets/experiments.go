package datasets

import (
	"net/http"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/shared/auth"
	"github.com/plumehq/plume/shared/dataset"
	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/web"
)

// created answers a write with the id of what it wrote (the SDK reads "id"; 200, never 204,
// which the SDK takes for a failure).
func created(w http.ResponseWriter, r *http.Request, id string, err error) {
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.OK(w, api.Created{ID: id})
}

// createExperiment serves POST /v1/experiments: one GetItem of the version, one PutItem.
func (s *server) createExperiment(w http.ResponseWriter, r *http.Request) {
	var req api.CreateExperimentRequest
	if err := web.Decode(w, r, &req, smallBody); err != nil {
		web.Error(w, r, err)
		return
	}
	e, err := s.x.Create(r.Context(), auth.ProjectID(r), req)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	if !auth.MayRead(r) {
		web.OK(w, api.Created{ID: e.ID})
		return
	}
	web.OK(w, toExperiment(e))
}

// addResult serves POST /v1/experiments/{experiment_id}/results: one TransactWriteItems.
func (s *server) addResult(w http.ResponseWriter, r *http.Request) {
	var req api.ExperimentResultRequest
	if err := web.Decode(w, r, &req, smallBody); err != nil {
		web.Error(w, r, err)
		return
	}
	id, err := s.x.AddResult(r.Context(), auth.ProjectID(r), r.PathValue("experiment_id"), req)
	created(w, r, id, err)
}

// addEvaluator serves POST /v1/experiments/{experiment_id}/evaluators: an upsert on name and
// mode, one TransactWriteItems.
func (s *server) addEvaluator(w http.ResponseWriter, r *http.Request) {
	var req api.ExperimentEvaluatorRequest
	if err := web.Decode(w, r, &req, smallBody); err != nil {
		web.Error(w, r, err)
		return
	}
	id, err := s.x.AddEvaluator(r.Context(), auth.ProjectID(r), r.PathValue("experiment_id"), req)
	created(w, r, id, err)
}

// addEvaluation serves POST /v1/experiments/{experiment_id}/evaluations: one GetItem of the
// evaluator, one TransactWriteItems.
func (s *server) addEvaluation(w http.ResponseWriter, r *http.Request) {
	var req api.ExperimentEvaluationRequest
	if err := web.Decode(w, r, &req, smallBody); err != nil {
		web.Error(w, r, err)
		return
	}
	id, err := s.x.AddEvaluation(r.Context(), auth.ProjectID(r), r.PathValue("experiment_id"), req)
	created(w, r, id, err)
}

// attachJudge serves POST /v1/experiments/{experiment_id}/judges: the judge's GetItem, one
// TransactWriteItems (the judge on the experiment, its evaluator) and one S3 PUT (the request
// that the judge runner answers with the results' evaluations).
func (s *server) attachJudge(w http.ResponseWriter, r *http.Request) {
	var req api.AttachJudgeRequest
	if err := web.Decode(w, r, &req, smallBody); err != nil {
		web.Error(w, r, err)
		return
	}
	out, err := s.x.AttachJudge(r.Context(), auth.ProjectID(r), r.PathValue("experiment_id"), req.JudgeID)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.OK(w, out)
}

// recordRequest is what a record route's request stores: the record (its Run set from run, 1
// by default) in the experiment.
type recordRequest struct {
	experimentID string
	run          *int
	rec          dataset.Record
}

// addRecord serves a POST of one of an experiment's records (column evaluations, column and
// run metrics): the request decoded as T and read by of, the record stored, its id answered.
func addRecord[T any](s *server, w http.ResponseWriter, r *http.Request, of func(T) recordRequest) {
	var req T
	if err := web.Decode(w, r, &req, smallBody); err != nil {
		web.Error(w, r, err)
		return
	}
	q := of(req)
	run, err := dataset.RunNumber(q.run, 1)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	q.rec.Run = run
	id, err := s.x.AddRecord(r.Context(), auth.ProjectID(r), q.experimentID, q.rec)
	created(w, r, id, err)
}

// addColumnEvaluation serves POST /v1/column-evaluations.
func (s *server) addColumnEvaluation(w http.ResponseWriter, r *http.Request) {
	addRecord(s, w, r, func(q api.ColumnEvaluationRequest) recordRequest {
		return recordRequest{q.ExperimentID, q.RunNumber,
			dataset.Record{Kind: dataset.KindColumnEvaluation, Name: q.EvaluatorID, Results: q.EvaluationResults}}
	})
}

// addColumnMetric serves POST /v1/column-metrics.
func (s *server) addColumnMetric(w http.ResponseWriter, r *http.Request) {
	addRecord(s, w, r, func(q api.ColumnMetricRequest) recordRequest {
		return recordRequest{q.ExperimentID, q.RunNumber, dataset.Record{Kind: dataset.KindColumnMetric, Name: q.MetricName, Results: q.Results}}
	})
}

// addRunMetric serves POST /v1/run-metrics; its run is its total_runs.
func (s *server) addRunMetric(w http.ResponseWriter, r *http.Request) {
	addRecord(s, w, r, func(q api.RunMetricRequest) recordRequest {
		return recordRequest{q.ExperimentID, q.TotalRuns, dataset.Record{Kind: dataset.KindRunMetric, Name: q.MetricName, Results: q.Results}}
	})
}

// listExperiments serves GET /v1/experiments?dataset=: newest first, one GetItem of the dataset
// and one Query.
func (s *server) listExperiments(w http.ResponseWriter, r *http.Request) {
	limit, cursor, err := page(r)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	name := r.URL.Query().Get("dataset")
	if !dataset.IsName(name) {
		web.Error(w, r, errs.Invalid("dataset must name a dataset, got %q", name))
		return
	}
	es, next, err := s.x.List(r.Context(), auth.ProjectID(r), name, cursor, limit)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	out := api.ExperimentList{Experiments: make([]api.Experiment, len(es)), NextCursor: nonEmpty(next)}
	for i, e := range es {
		out.Experiments[i] = toExperiment(e)
	}
	web.OK(w, out)
}

// getExperiment serves GET /v1/experiments/{experiment_id}: one Query.
func (s *server) getExperiment(w http.ResponseWriter, r *http.Request) {
	d, err := s.x.Get(r.Context(), auth.ProjectID(r), r.PathValue("experiment_id"))
	if err != nil {
		web.Error(w, r, err)
		return
	}
	out := api.ExperimentDetail{
		Experiment: toExperiment(d.Experiment), Runs: d.Runs, Evaluators: make([]api.Evaluator, 0, len(d.Evaluators)),
		ColumnEvaluations: []api.ColumnEvaluation{}, ColumnMetrics: []api.ColumnMetric{}, RunMetrics: []api.RunMetric{},
		Aggregates: dataset.RunAggregates(d.Aggregates),
	}
	if out.Runs == nil {
		out.Runs = []api.ExperimentRun{}
	}
	for _, e := range d.Evaluators {
		out.Evaluators = append(out.Evaluators, api.Evaluator{ID: e.ID, Name: e.Name, Description: e.Description, EvaluationMode: e.Mode, JudgeID: nonEmpty(e.JudgeID), CreatedAt: e.CreatedAt})
	}
	for _, rec := range d.Records {
		id := rec.ID(d.ID)
		switch rec.Kind {
		case dataset.KindColumnEvaluation:
			out.ColumnEvaluations = append(out.ColumnEvaluations, api.ColumnEvaluation{ID: id, EvaluatorID: rec.Name, RunNumber: rec.Run, EvaluationResults: rawOrNull(rec.Results)})
		case dataset.KindColumnMetric:
			out.ColumnMetrics = append(out.ColumnMetrics, api.ColumnMetric{ID: id, MetricName: rec.Name, RunNumber: rec.Run, Results: rawOrNull(rec.Results)})
		case dataset.KindRunMetric:
			out.RunMetrics = append(out.RunMetrics, api.RunMetric{ID: id, MetricName: rec.Name, TotalRuns: rec.Run, Results: rawOrNull(rec.Results)})
		}
	}
	web.OK(w, out)
}

// listResults serves GET /v1/experiments/{experiment_id}/results?run_number=&cursor=&limit=:
// a run's results by row id, each with its evaluations. A page whose answer would pass
// api.MaxAnswerBytes is read again with the limit that fits.
func (s *server) listResults(w http.ResponseWriter, r *http.Request) {
	limit, cursor, err := page(r)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	run, err := intParam(r.URL.Query().Get("run_number"), "run_number", 1, 1, 1_000_000)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	id := r.PathValue("experiment_id")
	rs, next, err := s.x.Results(r.Context(), auth.ProjectID(r), id, run, cursor, limit)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	out := toResults(rs)
	n, err := web.Fit(out, 256)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	if n < len(out) {
		if rs, next, err = s.x.Results(r.Context(), auth.ProjectID(r), id, run, cursor, n); err != nil {
			web.Error(w, r, err)
			return
		}
		out = toResults(rs)
	}
	web.OK(w, api.ExperimentResultList{Results: out, RunNumber: run, NextCursor: nonEmpty(next)})
}

func toResults(rs []dataset.Result) []api.ExperimentResult {
	out := make([]api.ExperimentResult, len(rs))
	for i, res := range rs {
		out[i] = api.ExperimentResult{
			ID: res.ID(), DatasetRowID: res.RowID, RunNumber: res.Run, Result: res.Result, ResultType: res.ResultType,
			TraceID: res.TraceID, CreatedAt: res.CreatedAt, Evaluations: make([]api.ExperimentEvaluation, len(res.Evaluations)),
		}
		for j, e := range res.Evaluations {
			out[i].Evaluations[j] = api.ExperimentEvaluation{ID: e.ID(), EvaluatorID: e.EvaluatorID, EvaluatorName: e.EvaluatorName, EvaluationValue: e.Value, EvaluationType: e.Type, EvaluationReason: e.Reason}
		}
	}
	return out
}

func toExperiment(e dataset.Experiment) api.Experiment {
	return api.Experiment{
		ID: e.ID, Name: e.Name, Description: e.Description, Alias: e.Alias, Parameters: rawOrNull(e.Parameters), DatasetID: e.DatasetID,
		DatasetName: e.DatasetName, DatasetVersionID: e.DatasetVersionID, VersionNumber: e.VersionNumber, CreatedAt: e.CreatedAt,
	}
}
