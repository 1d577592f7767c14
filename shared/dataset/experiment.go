package dataset

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/shared/errs"
)

// Experiment is a run of a task over one dataset version.
type Experiment struct {
	ID, ProjectID, Name    string
	Description, Alias     *string
	Parameters             json.RawMessage
	DatasetID, DatasetName string
	DatasetVersionID       string
	VersionNumber          int
	CreatedAt              time.Time
	// Judges are the ids of the judges attached to the experiment (AttachJudge).
	Judges []string
}

// Result is the output of the task on one row in one run.
type Result struct {
	ExperimentID, RowID string
	Run                 int
	Result, ResultType  string
	TraceID             *string
	CreatedAt           time.Time
	Evaluations         []Evaluation
}

// ID is the result's id: the run and the row, so that a result is one per (row, run) and an
// evaluation finds its result without a lookup.
func (r Result) ID() string { return r.RowID + "-" + strconv.Itoa(r.Run) }

// ParseResultID splits a result id into its row id and run, ok false for any other string.
func ParseResultID(id string) (rowID string, run int, ok bool) {
	rowID, n, found := strings.Cut(id, "-")
	run, err := strconv.Atoi(n)
	if !found || err != nil || run < 1 || !IsRowID(rowID) {
		return "", 0, false
	}
	return rowID, run, true
}

// Evaluator evaluates the results of an experiment, one row or a whole column at a time.
type Evaluator struct {
	ID, ExperimentID, Name, Mode string
	Description                  *string
	// JudgeID is the judge whose verdicts this evaluator holds ("" for the SDK's evaluators).
	JudgeID   string
	CreatedAt time.Time
}

// EvaluatorID is the id of an experiment's evaluator of name and mode: the same on every
// call, so that creating it again (the SDK does on every eval()) is an upsert.
func EvaluatorID(experimentID, name, mode string) string {
	sum := sha256.Sum256([]byte(experimentID + "\x00" + name + "\x00" + mode))
	return uuid.Must(uuid.FromBytes(sum[:16])).String()
}

// Evaluation is an evaluator's value for one result.
type Evaluation struct {
	EvaluatorID, EvaluatorName string
	RowID                      string
	Run                        int
	Value                      json.RawMessage
	Type                       string
	// Reason is a judge's reason for its verdict.
	Reason *string
}

// ID is the evaluation's id: one per result and evaluator.
func (e Evaluation) ID() string {
	return Result{RowID: e.RowID, Run: e.Run}.ID() + "-" + e.EvaluatorID
}

// Record kinds: a column evaluation, a column metric, a run metric. Each is one per name (the
// evaluator id or the metric name) and run (0 for a run metric), written again on a repeat.
const (
	KindColumnEvaluation = "CE"
	KindColumnMetric     = "CM"
	KindRunMetric        = "RM"
)

// Record is a column evaluation or a metric of an experiment.
type Record struct {
	Kind, Name string
	Run        int
	Results    json.RawMessage
}

// ID is the record's id.
func (r Record) ID(experimentID string) string {
	sum := sha256.Sum256([]byte(fmt.Sprintf("%s\x00%s\x00%s\x00%d", experimentID, r.Kind, r.Name, r.Run)))
	return uuid.Must(uuid.FromBytes(sum[:16])).String()
}

// Detail is an experiment with everything but its results.
type Detail struct {
	Experiment
	Runs       []api.ExperimentRun
	Evaluators []Evaluator
	Records    []Record
	// Aggregates are the row evaluators' tallies, per run (none for evaluations stored
	// before tallies were kept).
	Aggregates []Aggregate
}

// ExperimentStore keeps experiments, their results and evaluations.
type ExperimentStore interface {
	// CreateExperiment stores a new experiment, listed under its dataset.
	CreateExperiment(ctx context.Context, e Experiment) error
	// Experiment reads an experiment. Errors: NotFound.
	Experiment(ctx context.Context, projectID, id string) (Experiment, error)
	// Experiments lists the experiments of a dataset, newest first.
	Experiments(ctx context.Context, projectID, datasetID, cursor string, limit int) ([]Experiment, string, error)
	// PutResult stores a result, replacing the result of the same row and run; its run counts
	// it once. It returns the judges attached to the experiment when the result was written:
	// a judge attached later evaluates it with the results it finds. Errors: NotFound for an
	// unknown experiment.
	PutResult(ctx context.Context, projectID string, r Result) (judges []string, err error)
	// AttachJudge stores the evaluator of a judge (e.JudgeID) and adds the judge to the
	// experiment's Judges, at once. Errors: NotFound for an unknown experiment.
	AttachJudge(ctx context.Context, projectID string, e Evaluator) error
	// PutEvaluator stores an evaluator, or updates it. Errors: NotFound for an unknown
	// experiment.
	PutEvaluator(ctx context.Context, projectID string, e Evaluator) error
	// Evaluator reads an evaluator. Errors: NotFound.
	Evaluator(ctx context.Context, projectID, experimentID, id string) (Evaluator, error)
	// PutEvaluation stores an evaluation, replacing the evaluator's earlier one of the result,
	// and updates its evaluator's tally in the run at once (by the difference from the one
	// replaced: an evaluation sent again counts once). Errors: NotFound for an unknown result.
	PutEvaluation(ctx context.Context, projectID, experimentID string, e Evaluation) error
	// PutRecord stores a column evaluation or metric. Errors: NotFound for an unknown
	// experiment.
	PutRecord(ctx context.Context, projectID, experimentID string, r Record) error
	// Detail reads an experiment with its runs, evaluators and records. Errors: NotFound.
	Detail(ctx context.Context, projectID, id string) (Detail, error)
	// Results lists the results of a run by row id with their evaluations, after the row id
	// cursor, and the cursor of the next page ("" at the end).
	Results(ctx context.Context, projectID, id string, run int, cursor string, limit int) ([]Result, string, error)
}

// Experiments is the experiments' domain logic.
type Experiments struct {
	store    ExperimentStore
	datasets Store
	now      func() time.Time
	// judges reads the judges attached by AttachJudge; requests stores JudgeRequests.
	judges   Judges
	requests RequestObjects
}

// NewExperiments returns the service; now is its clock (nil: time.Now).
func NewExperiments(store ExperimentStore, datasets Store, now func() time.Time) *Experiments {
	if now == nil {
		now = time.Now
	}
	return &Experiments{store: store, datasets: datasets, now: now}
}

// Create creates an experiment of a dataset version. Errors: Invalid, NotFound for an
// unknown version.
func (x *Experiments) Create(ctx context.Context, projectID string, req api.CreateExperimentRequest) (Experiment, error) {
	if strings.TrimSpace(req.Name) == "" || len(req.Name) > 256 {
		return Experiment{}, errs.Invalid("name must have 1 to 256 characters")
	}
	if _, err := uuid.Parse(req.DatasetVersionID); err != nil {
		return Experiment{}, errs.NotFound("dataset version %q not found", req.DatasetVersionID)
	}
	params := req.Parameters
	if len(params) == 0 || string(params) == "null" {
		params = nil
	} else if params[0] != '{' {
		return Experiment{}, errs.Invalid("parameters must be a JSON object")
	}
	v, err := x.datasets.VersionByID(ctx, projectID, req.DatasetVersionID)
	if err != nil {
		return Experiment{}, err
	}
	e := Experiment{
		ID: uuid.NewString(), ProjectID: projectID, Name: req.Name, Description: req.Description, Alias: req.Alias,
		Parameters: params, DatasetID: v.DatasetID, DatasetName: v.DatasetName, DatasetVersionID: v.ID,
		VersionNumber: v.Number, CreatedAt: x.now().UTC(),
	}
	if err := x.store.CreateExperiment(ctx, e); err != nil {
		return Experiment{}, err
	}
	return e, nil
}

// AddResult stores a result (run 1 when none is given). Errors: Invalid, NotFound.
func (x *Experiments) AddResult(ctx context.Context, projectID, id string, req api.ExperimentResultRequest) (string, error) {
	run, err := runNumber(req.RunNumber, 1)
	if err != nil {
		return "", err
	}
	if !IsRowID(req.DatasetRowID) {
		return "", errs.Invalid("dataset_row_id %q is not a row id of the dataset", req.DatasetRowID)
	}
	if len(req.Result) > api.MaxExperimentResultBytes {
		return "", errs.Invalid("result has more than %d bytes", api.MaxExperimentResultBytes)
	}
	typ := req.ResultType
	if typ == "" {
		typ = "text"
	}
	trace := req.TraceID
	if trace != nil && *trace == "" {
		trace = nil
	}
	r := Result{ExperimentID: id, RowID: req.DatasetRowID, Run: run, Result: req.Result, ResultType: typ, TraceID: trace, CreatedAt: x.now().UTC()}
	judges, err := x.store.PutResult(ctx, projectID, r)
	if err != nil {
		return "", err
	}
	if len(judges) > 0 {
		// The judges attached evaluate the new result; a failure here fails the request, and
		// the SDK's retry writes the same result and asks again.
		err = x.requestJudging(ctx, JudgeRequest{ProjectID: projectID, ExperimentID: id, Results: []ResultRef{{RowID: r.RowID, Run: r.Run}}, RequestedAt: x.now().UTC()})
	}
	return r.ID(), err
}

// AddEvaluator creates an evaluator, or updates the one of the same name and mode.
func (x *Experiments) AddEvaluator(ctx context.Context, projectID, id string, req api.ExperimentEvaluatorRequest) (string, error) {
	mode := req.EvaluationMode
	if mode == "" {
		mode = api.EvaluationModeRow
	}
	if mode != api.EvaluationModeRow && mode != api.EvaluationModeColumn {
		return "", errs.Invalid(`evaluation_mode must be "row" or "column", not %q`, mode)
	}
	if strings.TrimSpace(req.Name) == "" || len(req.Name) > 256 {
		return "", errs.Invalid("name must have 1 to 256 characters")
	}
	e := Evaluator{ID: EvaluatorID(id, req.Name, mode), ExperimentID: id, Name: req.Name, Mode: mode, Description: req.Description, CreatedAt: x.now().UTC()}
	if err := x.store.PutEvaluator(ctx, projectID, e); err != nil {
		return "", err
	}
	return e.ID, nil
}

// AddEvaluation stores an evaluator's value for a result. Errors: Invalid, NotFound for an
// unknown evaluator or result.
func (x *Experiments) AddEvaluation(ctx context.Context, projectID, id string, req api.ExperimentEvaluationRequest) (string, error) {
	rowID, run, ok := ParseResultID(req.ExperimentResultID)
	if !ok {
		return "", errs.NotFound("experiment result %q not found", req.ExperimentResultID)
	}
	if req.DatasetRowID != "" && req.DatasetRowID != rowID {
		return "", errs.Invalid("dataset_row_id %q is not the row of result %q", req.DatasetRowID, req.ExperimentResultID)
	}
	if len(req.EvaluationValue) == 0 || len(req.EvaluationValue) > 64<<10 {
		return "", errs.Invalid("evaluation_value must be a JSON value of at most 64 KB")
	}
	if _, err := uuid.Parse(req.EvaluatorID); err != nil {
		return "", errs.NotFound("evaluator %q not found", req.EvaluatorID)
	}
	ev, err := x.store.Evaluator(ctx, projectID, id, req.EvaluatorID)
	if err != nil {
		return "", err
	}
	if ev.JudgeID != "" {
		return "", errs.Conflict("evaluator %s holds the verdicts of judge %s; only the judge runner writes them", ev.ID, ev.JudgeID)
	}
	typ := req.EvaluationType
	if typ == "" {
		typ = "text"
	}
	e := Evaluation{EvaluatorID: ev.ID, EvaluatorName: ev.Name, RowID: rowID, Run: run, Value: req.EvaluationValue, Type: typ}
	if err := x.store.PutEvaluation(ctx, projectID, id, e); err != nil {
		return "", err
	}
	return e.ID(), nil
}

// AddRecord stores a column evaluation or metric of an experiment (run 1 when none is given;
// 0 for a run metric). Errors: Invalid, NotFound.
func (x *Experiments) AddRecord(ctx context.Context, projectID, experimentID string, r Record) (string, error) {
	if _, err := uuid.Parse(experimentID); err != nil {
		return "", errs.NotFound("experiment %q not found", experimentID)
	}
	if strings.TrimSpace(r.Name) == "" || len(r.Name) > 256 {
		return "", errs.Invalid("a metric or evaluator name must have 1 to 256 characters")
	}
	if len(r.Results) == 0 {
		r.Results = json.RawMessage("null")
	}
	if len(r.Results) > 256<<10 {
		return "", errs.Invalid("results must be at most 256 KB of JSON")
	}
	if r.Kind == KindColumnEvaluation {
		if _, err := x.store.Evaluator(ctx, projectID, experimentID, r.Name); err != nil {
			return "", err
		}
	}
	if err := x.store.PutRecord(ctx, projectID, experimentID, r); err != nil {
		return "", err
	}
	return r.ID(experimentID), nil
}

// RunNumber is the run of a request: def when absent, Invalid when not positive.
func RunNumber(n *int, def int) (int, error) { return runNumber(n, def) }

func runNumber(n *int, def int) (int, error) {
	if n == nil {
		return def, nil
	}
	if *n < 1 || *n > 1_000_000 {
		return 0, errs.Invalid("run_number must be from 1 to 1000000, not %d", *n)
	}
	return *n, nil
}

// Get reads an experiment with its runs, evaluators and records.
func (x *Experiments) Get(ctx context.Context, projectID, id string) (Detail, error) {
	return x.store.Detail(ctx, projectID, id)
}

// List lists the experiments of a dataset, newest first. Errors: NotFound for an unknown
// dataset.
func (x *Experiments) List(ctx context.Context, projectID, dataset, cursor string, limit int) ([]Experiment, string, error) {
	d, err := x.datasets.Dataset(ctx, projectID, dataset)
	if err != nil {
		return nil, "", err
	}
	return x.store.Experiments(ctx, projectID, d.ID, cursor, limit)
}

// Results lists a run's results with their evaluations. Errors: NotFound.
func (x *Experiments) Results(ctx context.Context, projectID, id string, run int, cursor string, limit int) ([]Result, string, error) {
	if _, err := x.store.Experiment(ctx, projectID, id); err != nil {
		return nil, "", err
	}
	return x.store.Results(ctx, projectID, id, run, cursor, limit)
}
