package api

import (
	"encoding/json"
	"time"
)

// Datasets and experiments (issue 28): the bodies of /v1/datasets..., /v1/experiments...,
// /v1/column-evaluations, /v1/column-metrics and /v1/run-metrics. The zeroeval Python SDK
// (0.6.x) sends and reads the fields COMPAT.md lists ("Datasets, experiments ..."); the rest
// are Plume's own read API.

// Limits of datasets.
const (
	// MaxDatasetPushBytes caps the body of POST /v1/datasets/{name}/data: the rows the SDK
	// sends in one request, within Lambda's 6 MB request payload. Larger datasets go through
	// an upload (POST /v1/datasets/{name}/uploads).
	MaxDatasetPushBytes = 5_500_000
	// MaxDatasetUploadBytes caps an uploaded dataset version (NDJSON, one row a line): the
	// commit reads it and writes the version's object from one buffer inside API Gateway's
	// 29 seconds, which 50 MB (the bar) fits with room to spare and 256 MB would not.
	MaxDatasetUploadBytes = 64 << 20
	// MaxDatasetRowBytes caps one row: a row is answered whole in a page of rows.
	MaxDatasetRowBytes = 1_000_000
	// MaxExperimentResultBytes caps the text of an experiment result (a DynamoDB item).
	MaxExperimentResultBytes = 300_000
	// MaxDatasetRows caps the rows of one version.
	MaxDatasetRows = 1_000_000
	// DefaultDatasetRowsLimit and MaxDatasetRowsLimit bound a page of rows; a page also stops
	// at MaxAnswerBytes, with totalRows exact, so that a client paging with offset = rows so
	// far reads every row.
	DefaultDatasetRowsLimit = 100
	MaxDatasetRowsLimit     = 10_000
	// DefaultListLimit and MaxListLimit bound the pages of datasets, versions, experiments and
	// results.
	DefaultDatasetListLimit = 50
	MaxDatasetListLimit     = 200
)

// CreateDatasetRequest is the body of POST /v1/datasets.
type CreateDatasetRequest struct {
	Name        string  `json:"name"`
	Description *string `json:"description"`
}

// Dataset is a dataset as POST /v1/datasets, GET /v1/datasets/{name} and GET /v1/datasets
// answer it. VersionNumber is its latest version (0 before the first push) and RowCount that
// version's rows.
type Dataset struct {
	ID            string    `json:"id"`
	Name          string    `json:"name"`
	Description   *string   `json:"description"`
	VersionNumber int       `json:"version_number"`
	RowCount      int       `json:"row_count"`
	CreatedAt     time.Time `json:"created_at"`
	UpdatedAt     time.Time `json:"updated_at"`
}

// DatasetList is GET /v1/datasets: datasets by name; NextCursor reads on.
type DatasetList struct {
	Datasets   []Dataset `json:"datasets"`
	NextCursor *string   `json:"next_cursor"`
}

// PushDatasetRequest is the body of POST /v1/datasets/{name}/data: every row of the new
// version, each a JSON object.
type PushDatasetRequest struct {
	Data []json.RawMessage `json:"data"`
}

// DatasetVersion is a version as a push, a commit and GET /v1/datasets/{name}/versions answer
// it. ID is the dataset_version_id experiments name.
type DatasetVersion struct {
	ID            string    `json:"id"`
	DatasetID     string    `json:"dataset_id"`
	VersionNumber int       `json:"version_number"`
	RowCount      int       `json:"row_count"`
	Bytes         int64     `json:"bytes"`
	CreatedAt     time.Time `json:"created_at"`
}

// DatasetVersionList is GET /v1/datasets/{name}/versions, newest first.
type DatasetVersionList struct {
	Versions   []DatasetVersion `json:"versions"`
	NextCursor *string          `json:"next_cursor"`
}

// DatasetRow is one row: RowID is a hash of its content (an unchanged row keeps it across
// versions) and Data the row's object.
type DatasetRow struct {
	RowID string          `json:"row_id"`
	Data  json.RawMessage `json:"data"`
}

// VersionRef names a version.
type VersionRef struct {
	ID            string `json:"id"`
	VersionNumber int    `json:"version_number"`
}

// DatasetRows is GET /v1/datasets/{name}/data?version_number=&offset=&limit=: the rows from
// offset, at most limit and at most MaxAnswerBytes of them, and TotalRows, the version's row
// count (camelCase, as the SDK reads it).
type DatasetRows struct {
	Rows      []DatasetRow `json:"rows"`
	TotalRows int          `json:"totalRows"`
	Offset    int          `json:"offset"`
	Version   VersionRef   `json:"version"`
}

// CreateUploadRequest is the body of POST /v1/datasets/{name}/uploads: the size in bytes of
// the NDJSON object to upload (one row a line).
type CreateUploadRequest struct {
	Bytes int64 `json:"bytes"`
}

// DatasetUpload is the answer to POST /v1/datasets/{name}/uploads: PUT exactly the announced
// bytes to URL before ExpiresAt, then POST /v1/datasets/{name}/uploads/{upload_id}/commit.
type DatasetUpload struct {
	ID        string    `json:"id"`
	URL       string    `json:"url"`
	Method    string    `json:"method"`
	ExpiresAt time.Time `json:"expires_at"`
}

// CreateExperimentRequest is the body of POST /v1/experiments.
type CreateExperimentRequest struct {
	DatasetVersionID string          `json:"dataset_version_id"`
	Name             string          `json:"name"`
	Description      *string         `json:"description"`
	Alias            *string         `json:"alias"`
	Parameters       json.RawMessage `json:"parameters"`
}

// Experiment is an experiment as POST /v1/experiments and the lists answer it.
type Experiment struct {
	ID               string          `json:"id"`
	Name             string          `json:"name"`
	Description      *string         `json:"description"`
	Alias            *string         `json:"alias"`
	Parameters       json.RawMessage `json:"parameters"`
	DatasetID        string          `json:"dataset_id"`
	DatasetName      string          `json:"dataset_name"`
	DatasetVersionID string          `json:"dataset_version_id"`
	VersionNumber    int             `json:"version_number"`
	CreatedAt        time.Time       `json:"created_at"`
}

// ExperimentList is GET /v1/experiments?dataset=, newest first.
type ExperimentList struct {
	Experiments []Experiment `json:"experiments"`
	NextCursor  *string      `json:"next_cursor"`
}

// ExperimentRun is one run of an experiment and its number of results.
type ExperimentRun struct {
	RunNumber   int `json:"run_number"`
	ResultCount int `json:"result_count"`
}

// ExperimentDetail is GET /v1/experiments/{id}.
type ExperimentDetail struct {
	Experiment
	Runs              []ExperimentRun    `json:"runs"`
	Evaluators        []Evaluator        `json:"evaluators"`
	ColumnEvaluations []ColumnEvaluation `json:"column_evaluations"`
	ColumnMetrics     []ColumnMetric     `json:"column_metrics"`
	RunMetrics        []RunMetric        `json:"run_metrics"`
	// Aggregates are each row evaluator's aggregate in each run (judges attached included),
	// by run, then evaluator name: the counts compare answers, kept as each evaluation is
	// written. An evaluator with no boolean or numeric evaluation in a run has none.
	Aggregates []RunAggregate `json:"aggregates"`
}

// RunAggregate is a row evaluator's aggregate over one run of an experiment.
type RunAggregate struct {
	RunNumber     int    `json:"run_number"`
	EvaluatorID   string `json:"evaluator_id"`
	EvaluatorName string `json:"evaluator_name"`
	EvaluatorAggregate
}

// ExperimentResultRequest is the body of POST /v1/experiments/{id}/results: the output of
// the task on one row in one run. Result is text (the SDK sends a Python repr).
type ExperimentResultRequest struct {
	DatasetRowID string  `json:"dataset_row_id"`
	Result       string  `json:"result"`
	ResultType   string  `json:"result_type"`
	TraceID      *string `json:"trace_id"`
	RunNumber    *int    `json:"run_number"`
}

// ExperimentResult is a result; the list of results adds its evaluations.
type ExperimentResult struct {
	ID           string                 `json:"id"`
	DatasetRowID string                 `json:"dataset_row_id"`
	RunNumber    int                    `json:"run_number"`
	Result       string                 `json:"result"`
	ResultType   string                 `json:"result_type"`
	TraceID      *string                `json:"trace_id"`
	CreatedAt    time.Time              `json:"created_at"`
	Evaluations  []ExperimentEvaluation `json:"evaluations"`
}

// ExperimentResultList is GET /v1/experiments/{id}/results?run_number=&cursor=, by row id.
type ExperimentResultList struct {
	Results    []ExperimentResult `json:"results"`
	RunNumber  int                `json:"run_number"`
	NextCursor *string            `json:"next_cursor"`
}

// Evaluation modes of an evaluator.
const (
	EvaluationModeRow    = "row"
	EvaluationModeColumn = "column"
)

// ExperimentEvaluatorRequest is the body of POST /v1/experiments/{id}/evaluators. An evaluator is the
// same on every call with its name and mode (the SDK creates them again on every eval()).
type ExperimentEvaluatorRequest struct {
	Name           string  `json:"name"`
	Description    *string `json:"description"`
	EvaluationMode string  `json:"evaluation_mode"`
}

// Evaluator is an evaluator of an experiment.
type Evaluator struct {
	ID             string  `json:"id"`
	Name           string  `json:"name"`
	Description    *string `json:"description"`
	EvaluationMode string  `json:"evaluation_mode"`
	// JudgeID is the judge that makes this evaluator's evaluations, for an evaluator made by
	// POST /v1/experiments/{id}/judges; absent for the SDK's own.
	JudgeID   *string   `json:"judge_id,omitempty"`
	CreatedAt time.Time `json:"created_at"`
}

// AttachJudgeRequest is the body of POST /v1/experiments/{id}/judges: a judge of the project
// that evaluates every result of the experiment, those posted later too.
type AttachJudgeRequest struct {
	JudgeID string `json:"judge_id"`
}

// AttachedJudge answers POST /v1/experiments/{id}/judges: the evaluator the judge's verdicts
// are written under (named as the judge), and the evaluation of the results already posted,
// queued for the judge runner.
type AttachedJudge struct {
	ExperimentID  string    `json:"experiment_id"`
	JudgeID       string    `json:"judge_id"`
	EvaluatorID   string    `json:"evaluator_id"`
	EvaluatorName string    `json:"evaluator_name"`
	Status        string    `json:"status"`
	RequestedAt   time.Time `json:"requested_at"`
}

// ExperimentEvaluationRequest is the body of POST /v1/experiments/{id}/evaluations: an evaluator's
// value for one result.
type ExperimentEvaluationRequest struct {
	EvaluatorID        string          `json:"evaluator_id"`
	DatasetRowID       string          `json:"dataset_row_id"`
	ExperimentResultID string          `json:"experiment_result_id"`
	EvaluationValue    json.RawMessage `json:"evaluation_value"`
	EvaluationType     string          `json:"evaluation_type"`
}

// ExperimentEvaluation is an evaluation of a result.
type ExperimentEvaluation struct {
	ID              string          `json:"id"`
	EvaluatorID     string          `json:"evaluator_id"`
	EvaluatorName   string          `json:"evaluator_name"`
	EvaluationValue json.RawMessage `json:"evaluation_value"`
	EvaluationType  string          `json:"evaluation_type"`
	// EvaluationReason is a judge's reason for its verdict (judges' evaluators only).
	EvaluationReason *string `json:"evaluation_reason,omitempty"`
}

// ColumnEvaluationRequest is the body of POST /v1/column-evaluations.
type ColumnEvaluationRequest struct {
	EvaluatorID       string          `json:"evaluator_id"`
	ExperimentID      string          `json:"experiment_id"`
	RunNumber         *int            `json:"run_number"`
	EvaluationResults json.RawMessage `json:"evaluation_results"`
}

// ColumnEvaluation is a column evaluator's results for one run.
type ColumnEvaluation struct {
	ID                string          `json:"id"`
	EvaluatorID       string          `json:"evaluator_id"`
	RunNumber         int             `json:"run_number"`
	EvaluationResults json.RawMessage `json:"evaluation_results"`
}

// ColumnMetricRequest is the body of POST /v1/column-metrics.
type ColumnMetricRequest struct {
	MetricName   string          `json:"metric_name"`
	ExperimentID string          `json:"experiment_id"`
	RunNumber    *int            `json:"run_number"`
	Results      json.RawMessage `json:"results"`
}

// ColumnMetric is a column metric of one run.
type ColumnMetric struct {
	ID         string          `json:"id"`
	MetricName string          `json:"metric_name"`
	RunNumber  int             `json:"run_number"`
	Results    json.RawMessage `json:"results"`
}

// RunMetricRequest is the body of POST /v1/run-metrics.
type RunMetricRequest struct {
	MetricName   string          `json:"metric_name"`
	ExperimentID string          `json:"experiment_id"`
	TotalRuns    *int            `json:"total_runs"`
	Results      json.RawMessage `json:"results"`
}

// RunMetric is a metric over every run.
type RunMetric struct {
	ID         string          `json:"id"`
	MetricName string          `json:"metric_name"`
	TotalRuns  int             `json:"total_runs"`
	Results    json.RawMessage `json:"results"`
}

// Created is the answer to the experiment writes: the id of what was written.
type Created struct {
	ID string `json:"id"`
}

// LogCompletionRequest is the body of POST /projects/{project_id}/prompts/{slug}/completions,
// zeroeval's log_completion (None values dropped): a completion of a prompt version, stored
// as an llm span linked to it.
type LogCompletionRequest struct {
	PromptID         *string         `json:"prompt_id"`
	PromptVersionID  *string         `json:"prompt_version_id"`
	ModelID          *string         `json:"model_id"`
	Messages         json.RawMessage `json:"messages"`
	InputText        *string         `json:"input_text"`
	OutputText       *string         `json:"output_text"`
	Metadata         json.RawMessage `json:"metadata"`
	DurationMS       *float64        `json:"duration_ms"`
	PromptTokens     *int64          `json:"prompt_tokens"`
	CompletionTokens *int64          `json:"completion_tokens"`
	TotalTokens      *int64          `json:"total_tokens"`
	Cost             *float64        `json:"cost"`
	HasError         *bool           `json:"has_error"`
	ErrorMessage     *string         `json:"error_message"`
	SpanID           *string         `json:"span_id"`
}

// LoggedCompletion answers log_completion: the span the completion became.
type LoggedCompletion struct {
	ID      string `json:"id"`
	SpanID  string `json:"span_id"`
	TraceID string `json:"trace_id"`
}

// MaxCompared is how many experiments GET /v1/experiments/compare takes.
const MaxCompared = 5

// ExperimentComparison is GET /v1/experiments/compare?ids=A,B&run_number=&cursor=: the
// experiments side by side, per dataset row (by row id, a page at a time) and per metric.
type ExperimentComparison struct {
	Experiments []Experiment `json:"experiments"`
	RunNumber   int          `json:"run_number"`
	// Rows are the page's rows: Results[i] is experiment i's result of the row, null when it
	// has none; Differs is true when the results' texts are not all the same.
	Rows []ComparedRow `json:"rows"`
	// Metrics are the column and run metrics the experiments posted (their aggregates, as the
	// SDK's column evaluators compute them), by name.
	Metrics []ComparedMetric `json:"metrics"`
	// Evaluators are the row evaluators' aggregates in the run (judges attached included), by
	// name: each experiment's pass rate or mean over all its results, not only the page's.
	Evaluators []ComparedEvaluator `json:"evaluators"`
	NextCursor *string             `json:"next_cursor"`
}

// What an evaluator's aggregate measures (ComparedEvaluator.Measure).
const (
	MeasurePassRate = "pass_rate"
	MeasureMean     = "mean"
)

// ComparedEvaluator is one row evaluator (by name) across the compared experiments: Values[i]
// is experiment i's aggregate (null when it has no boolean or numeric evaluation of it);
// Measure says which value the evaluator is compared by: "pass_rate" when any of them has
// boolean evaluations, else "mean"; Difference is the last one's minus the first one's, when
// both have it.
type ComparedEvaluator struct {
	Name       string                `json:"name"`
	Measure    string                `json:"measure"`
	Values     []*EvaluatorAggregate `json:"values"`
	Difference *float64              `json:"difference"`
}

// EvaluatorAggregate is an evaluator's evaluations in one run of an experiment, counted when
// each is written: PassRate is Passed of BooleanCount (null without booleans), Mean is Sum
// over NumericCount (null without numbers); other values (text) count in neither.
type EvaluatorAggregate struct {
	BooleanCount int      `json:"boolean_count"`
	Passed       int      `json:"passed"`
	PassRate     *float64 `json:"pass_rate"`
	NumericCount int      `json:"numeric_count"`
	Sum          float64  `json:"sum"`
	Mean         *float64 `json:"mean"`
}

// Of is the aggregate's value of measure (MeasurePassRate or MeasureMean), nil when a is nil
// or has none.
func (a *EvaluatorAggregate) Of(measure string) *float64 {
	if a == nil {
		return nil
	}
	if measure == MeasurePassRate {
		return a.PassRate
	}
	return a.Mean
}

// ComparedRow is one dataset row across the compared experiments.
type ComparedRow struct {
	DatasetRowID string              `json:"dataset_row_id"`
	Results      []*ExperimentResult `json:"results"`
	Differs      bool                `json:"differs"`
}

// ComparedMetric is one metric across the compared experiments: Values[i] is experiment i's
// (null when it has none or it is not a number) and Difference the last one's minus the
// first one's, when both are numbers.
type ComparedMetric struct {
	Name       string     `json:"name"`
	Kind       string     `json:"kind"`
	Values     []*float64 `json:"values"`
	Difference *float64   `json:"difference"`
}
