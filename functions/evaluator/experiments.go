package evaluator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/plumehq/plume/shared/dataset"
	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/judge"
	"github.com/plumehq/plume/shared/trace"
)

// Judges attached to experiments (POST /v1/experiments/{id}/judges) evaluate the
// experiment's results as they evaluate llm spans: each result is shown to the judge as a
// span whose input is the dataset row (its data, as JSON) and whose output is the result, and
// is claimed for that content first, so the model is called at most once per (judge, result
// content) however often a request is delivered, and attaching a judge again calls it only
// for results that changed. The verdict is written as the experiment's evaluation of the
// result under the judge's evaluator (dataset.VerdictEvaluation), not as a span evaluation.
// Requests are dataset.JudgeRequest objects under experiment-judges/, delivered like span
// batches (the same retries and dead-letter queue).

// Experiments reads experiments, their results and dataset versions, and writes the results'
// evaluations (ddb.DatasetStore).
type Experiments interface {
	Detail(ctx context.Context, projectID, id string) (dataset.Detail, error)
	Results(ctx context.Context, projectID, id string, run int, cursor string, limit int) ([]dataset.Result, string, error)
	Result(ctx context.Context, projectID, experimentID string, run int, rowID string) (dataset.Result, error)
	PutEvaluation(ctx context.Context, projectID, experimentID string, e dataset.Evaluation) error
	VersionByID(ctx context.Context, projectID, id string) (dataset.Version, error)
}

// RequestObjects reads dataset versions and writes judge requests (blob.Store).
type RequestObjects interface {
	Open(ctx context.Context, key string) (io.ReadCloser, error)
	GetRange(ctx context.Context, key string, offset, length int64) ([]byte, error)
	Put(ctx context.Context, key string, body []byte, contentType string) error
}

// resultPage is how many results a sweep evaluates at a time.
const resultPage = 100

// continueMargin is the time an experiment's sweep keeps before its invocation's deadline:
// less than that left after a page, it asks for the rest in a new request and stops.
const continueMargin = 2 * time.Minute

// WithExperiments lets the runner answer judge requests about experiments: x reads them and
// writes their evaluations, objects reads dataset versions and stores continuations.
func (r *Runner) WithExperiments(x Experiments, objects RequestObjects) *Runner {
	r.experiments, r.requestObjects = x, objects
	return r
}

// experimentObject answers the judge request stored at key. The project and experiment are
// the key's, whatever the body says.
func (r *Runner) experimentObject(ctx context.Context, key string) (Report, error) {
	projectID, experimentID, ok := dataset.ParseJudgeRequestKey(key)
	if !ok || r.experiments == nil {
		slog.WarnContext(ctx, "evaluator: not a judge request about an experiment, skipped", "key", key)
		return Report{}, nil
	}
	body, err := r.objects.Get(ctx, key)
	if errs.CodeOf(err) == errs.CodeNotFound {
		slog.WarnContext(ctx, "evaluator: judge request is gone, skipped", "key", key)
		return Report{}, nil
	}
	if err != nil {
		return Report{}, fmt.Errorf("read judge request %s: %w", key, err)
	}
	var req dataset.JudgeRequest
	if err := json.Unmarshal(body, &req); err != nil {
		slog.ErrorContext(ctx, "evaluator: undecodable judge request, skipped", "key", key, "error", err)
		return Report{}, nil
	}
	req.ProjectID, req.ExperimentID = projectID, experimentID
	return r.Experiment(ctx, req)
}

// Experiment answers a judge request (dataset.JudgeRequest): the judges it names (req.JudgeID,
// else every judge attached to the experiment), paused ones left out, evaluate the results it
// names (req.Results, else every result, run by run). An experiment or judge gone since
// evaluates nothing.
//
// Cost: a Query of the experiment's definition; a GetItem per judge; per page of 100 results
// one Query (a sweep) or a GetItem per result named; the dataset version's GetItem once per
// warm instance (versions do not change), and its rows: a sweep reads the version's object
// once (kept while the instance is warm), a result named its row (two ranged GETs,
// versionRows);
// then, per result, what a span costs (a claim and its completion, the model call) and one
// TransactWriteItems for its evaluation.
func (r *Runner) Experiment(ctx context.Context, req dataset.JudgeRequest) (Report, error) {
	d, err := r.experiments.Detail(ctx, req.ProjectID, req.ExperimentID)
	if errs.CodeOf(err) == errs.CodeNotFound {
		slog.WarnContext(ctx, "evaluator: judge request for an unknown experiment, skipped", "project_id", req.ProjectID, "experiment_id", req.ExperimentID)
		return Report{}, nil
	}
	if err != nil {
		return Report{}, fmt.Errorf("read experiment %s: %w", req.ExperimentID, err)
	}
	judges, err := r.experimentJudges(ctx, d, req.JudgeID)
	if err != nil || len(judges) == 0 {
		return Report{}, err
	}
	x := experimentRun{r: r, d: d, judges: judges}
	if len(req.Results) > 0 {
		var results []dataset.Result
		for _, ref := range req.Results {
			res, err := r.experiments.Result(ctx, req.ProjectID, req.ExperimentID, ref.Run, ref.RowID)
			if errs.CodeOf(err) == errs.CodeNotFound {
				continue
			}
			if err != nil {
				return Report{Judges: len(judges)}, fmt.Errorf("read result %s: %w", ref.RowID, err)
			}
			results = append(results, res)
		}
		rep, err := x.evaluate(ctx, results, false)
		return rep, r.outcome(rep, err)
	}
	return x.sweep(ctx, req)
}

// experimentJudges are the active judges attached to experiment d, only judgeID when given.
func (r *Runner) experimentJudges(ctx context.Context, d dataset.Detail, judgeID string) ([]judge.Judge, error) {
	var out []judge.Judge
	for _, ev := range d.Evaluators {
		if ev.JudgeID == "" || (judgeID != "" && ev.JudgeID != judgeID) {
			continue
		}
		j, err := r.judges.Judge(ctx, d.ProjectID, ev.JudgeID)
		if errs.CodeOf(err) == errs.CodeNotFound {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read judge %s: %w", ev.JudgeID, err)
		}
		if !j.Paused {
			out = append(out, j)
		}
	}
	return out, nil
}

// experimentRun is one request's work on one experiment.
type experimentRun struct {
	r      *Runner
	d      dataset.Detail
	judges []judge.Judge
}

// sweep evaluates every result of the experiment from req's run and cursor, a page at a
// time; when its invocation is about to end, it stores a request for the rest and stops.
func (x experimentRun) sweep(ctx context.Context, req dataset.JudgeRequest) (Report, error) {
	rep := Report{Judges: len(x.judges)}
	runs := make([]int, 0, len(x.d.Runs))
	for _, run := range x.d.Runs {
		if run.RunNumber >= req.Run {
			runs = append(runs, run.RunNumber)
		}
	}
	slices.Sort(runs)
	var failures []error
	cursor := req.Cursor
	for i, run := range runs {
		if i > 0 {
			cursor = ""
		}
		for {
			page, next, err := x.r.experiments.Results(ctx, x.d.ProjectID, x.d.ID, run, cursor, resultPage)
			if err != nil {
				return rep, fmt.Errorf("read results of run %d: %w", run, err)
			}
			res, err := x.evaluate(ctx, page, true)
			rep.add(res)
			if err != nil {
				failures = append(failures, err)
			}
			if next == "" {
				break
			}
			cursor = next
			if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < continueMargin {
				rest := dataset.JudgeRequest{ProjectID: x.d.ProjectID, ExperimentID: x.d.ID, JudgeID: req.JudgeID, Run: run, Cursor: cursor, RequestedAt: x.r.cfg.Now().UTC()}
				if err := dataset.PutJudgeRequest(ctx, x.r.requestObjects, rest); err != nil {
					failures = append(failures, fmt.Errorf("ask for the rest of the experiment: %w", err))
				}
				return rep, x.r.outcome(rep, errors.Join(failures...))
			}
		}
	}
	return rep, x.r.outcome(rep, errors.Join(failures...))
}

// evaluate has every judge evaluate results: the rows of a sweep's page are read with the
// whole version (sweep), those of results named one by one.
func (x experimentRun) evaluate(ctx context.Context, results []dataset.Result, sweep bool) (Report, error) {
	if len(results) == 0 {
		return Report{Judges: len(x.judges)}, nil
	}
	var want []string
	if !sweep {
		for _, res := range results {
			want = append(want, res.RowID)
		}
	}
	rows, err := x.r.versionRows(ctx, x.d.ProjectID, x.d.DatasetVersionID, want)
	if err != nil {
		return Report{Judges: len(x.judges)}, err
	}
	refs := make(map[string]dataset.ResultRef, len(results))
	var pairs []pair
	for _, j := range x.judges {
		for _, res := range results {
			sp := resultSpan(x.d.ID, res, rows[res.RowID])
			refs[sp.ID] = dataset.ResultRef{RowID: res.RowID, Run: res.Run}
			pairs = append(pairs, pair{j, sp})
		}
	}
	put := func(ctx context.Context, j judge.Judge, evs []judge.Evaluation) error {
		for _, ev := range evs {
			ref := refs[ev.SpanID]
			e, err := dataset.VerdictEvaluation(x.d.ID, j, ev, ref.RowID, ref.Run)
			if err != nil {
				return err
			}
			// A result whose experiment is gone is an errs.NotFound: nothing to retry.
			if err := x.r.experiments.PutEvaluation(ctx, x.d.ProjectID, x.d.ID, e); err != nil {
				return err
			}
		}
		return nil
	}
	rep, err := x.r.evaluateWith(ctx, x.d.ProjectID, pairs, put)
	rep.Spans = len(results)
	rep.Judges = len(x.judges)
	rep.Matched = len(pairs)
	return rep, err
}

// resultSpan is what a judge is shown of a result: an llm span whose input is the dataset
// row's data and whose output is the result. Its id, under which the result is claimed, names
// the experiment, row and run.
func resultSpan(experimentID string, res dataset.Result, row json.RawMessage) trace.Span {
	output := res.Result
	sp := trace.Span{ID: "experiment-" + experimentID + "-" + res.ID(), Kind: "llm", OutputData: &output}
	if len(row) > 0 {
		input := string(row)
		sp.InputData = &input
	}
	return sp
}

// versionCache keeps the dataset version read last, and its rows once read whole: the results
// of one experiment come in bursts, to an instance kept warm, and a version never changes.
type versionCache struct {
	mu   sync.Mutex
	v    dataset.Version
	rows map[string]json.RawMessage
}

// versionRows are the rows of a dataset version by row id: those of want, or every row when
// want is nil (a sweep). The version's item is read once per warm instance. A version read
// whole is kept; otherwise the rows of want are read one by one through the version's row
// index (dataset.LookupRow: two ranged GETs a row, whatever the version's size), so a result
// posted after a judge was attached costs its row, not the dataset. A version stored before
// row indexes is read whole. A row the version does not have is left out.
func (r *Runner) versionRows(ctx context.Context, projectID, versionID string, want []string) (map[string]json.RawMessage, error) {
	r.versions.mu.Lock()
	defer r.versions.mu.Unlock()
	if r.versions.v.ID != versionID {
		v, err := r.experiments.VersionByID(ctx, projectID, versionID)
		if err != nil {
			return nil, fmt.Errorf("read dataset version %s: %w", versionID, err)
		}
		r.versions.v, r.versions.rows = v, nil
	}
	v := r.versions.v
	if r.versions.rows != nil {
		return r.versions.rows, nil
	}
	if want != nil && v.HasRowIndex() {
		rows := make(map[string]json.RawMessage, len(want))
		for _, id := range want {
			if _, ok := rows[id]; ok {
				continue
			}
			data, err := dataset.LookupRow(ctx, r.requestObjects, v, id)
			if errs.CodeOf(err) == errs.CodeNotFound {
				continue
			}
			if err != nil {
				return nil, err
			}
			rows[id] = data
		}
		return rows, nil
	}
	body, err := r.requestObjects.Open(ctx, v.Object)
	if err != nil {
		return nil, fmt.Errorf("read rows of %s: %w", v.Object, err)
	}
	defer body.Close()
	rows, err := dataset.ReadRows(body, nil)
	if err != nil {
		return nil, fmt.Errorf("read rows of %s: %w", v.Object, err)
	}
	r.versions.rows = rows
	return rows, nil
}
