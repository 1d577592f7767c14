package api

import "time"

// OptimizationRunRequest is the body of POST /projects/{project_id}/prompts/{slug}/optimization-runs.
// OptimizerType is auto (the default), quick_refine, dspy_bootstrap or dspy_gepa.
type OptimizationRunRequest struct {
	OptimizerType string             `json:"optimizer_type"`
	Config        OptimizationConfig `json:"config"`
}

// OptimizationConfig is what a run is asked to do: its intents (default: the prompt's linked
// judges, weight 1, no threshold), its budget (default: per optimizer type), the models of its
// simulations and its seed (default: a random one, answered on the run).
type OptimizationConfig struct {
	Intents []OptimizationIntent `json:"intents,omitempty"`
	Budget  *OptimizationBudget  `json:"budget,omitempty"`
	Models  []string             `json:"models,omitempty"`
	Seed    *int64               `json:"seed,omitempty"`
	// Dataset, when set, takes a prompt run's examples from a dataset version's rows, alone or
	// with the prompt's feedback (OptimizationDataset.WithFeedback).
	Dataset *OptimizationDataset `json:"dataset,omitempty"`
}

// OptimizationDataset names the dataset version a prompt run takes examples from, and how its
// rows become examples. The version is named by VersionID, or by Name and Version (0 or
// absent: the latest when the run starts); the run answers all three, resolved. Each row's
// InputColumns are the example's input (one column: its value, text as is, anything else as
// JSON; several: a JSON object of them), ExpectedOutputColumn (optional) the output wanted;
// every column but that one fills the prompt's {{variables}}. A run reads at most the first
// MaxOptimizationDatasetRows rows and MaxOptimizationDatasetBytes of them; rows without any
// input column are left out.
type OptimizationDataset struct {
	Name                 string   `json:"name,omitempty"`
	Version              int      `json:"version,omitempty"`
	VersionID            string   `json:"version_id,omitempty"`
	InputColumns         []string `json:"input_columns"`
	ExpectedOutputColumn string   `json:"expected_output_column,omitempty"`
	// WithFeedback adds the prompt's feedback examples (its completions, as a run without a
	// dataset reads them) to the dataset's.
	WithFeedback bool `json:"with_feedback,omitempty"`
}

// OptimizationReportDataset is the dataset version a run's examples came from, in its report:
// the version's rows and how many of them became examples.
type OptimizationReportDataset struct {
	Name      string `json:"name"`
	Version   int    `json:"version"`
	VersionID string `json:"version_id"`
	RowCount  int    `json:"row_count"`
	Examples  int    `json:"examples"`
}

// OptimizationIntent is one judge that scores candidates: its weight in the overall score and
// the least score (0 to 1) a candidate may have on it.
type OptimizationIntent struct {
	JudgeID      string   `json:"judge_id"`
	Weight       float64  `json:"weight"`
	MinThreshold *float64 `json:"min_threshold"`
}

// OptimizationBudget bounds a run's model calls and their cost (USD).
type OptimizationBudget struct {
	MaxModelCalls int     `json:"max_model_calls"`
	MaxCostUSD    float64 `json:"max_cost_usd"`
}

// OptimizationRun is a run as every optimization endpoint answers it.
type OptimizationRun struct {
	ID                string                   `json:"id"`
	ProjectID         string                   `json:"project_id"`
	PromptSlug        *string                  `json:"prompt_slug"`
	JudgeID           *string                  `json:"judge_id"`
	Status            string                   `json:"status"`
	OptimizerType     string                   `json:"optimizer_type"`
	Requested         string                   `json:"requested_optimizer_type"`
	Config            OptimizationConfig       `json:"config"`
	Progress          OptimizationProgress     `json:"progress"`
	Baseline          OptimizationBaseline     `json:"baseline"`
	Candidate         *OptimizationCandidate   `json:"candidate"`
	Metrics           *OptimizationReport      `json:"metrics"`
	Recommendation    *string                  `json:"recommendation"`
	Simulations       []OptimizationSimulation `json:"simulations"`
	Error             *string                  `json:"error"`
	DeployedVersionID *string                  `json:"deployed_version_id"`
	CreatedAt         time.Time                `json:"created_at"`
	CreatedBy         string                   `json:"created_by"`
	UpdatedAt         time.Time                `json:"updated_at"`
	StartedAt         *time.Time               `json:"started_at"`
	FinishedAt        *time.Time               `json:"finished_at"`
}

// OptimizationProgress is what a run has spent and done so far.
type OptimizationProgress struct {
	ModelCalls int     `json:"model_calls"`
	CostUSD    float64 `json:"cost_usd"`
	Iteration  int     `json:"iteration"`
}

// OptimizationBaseline is the version a run improves on.
type OptimizationBaseline struct {
	VersionID   string  `json:"version_id"`
	Version     int     `json:"version"`
	Content     string  `json:"content"`
	ContentHash string  `json:"content_hash"`
	Model       *string `json:"model"`
}

// OptimizationCandidate is a run's proposal: its content, the demonstrations that go with it,
// and what it deploys as (rendered).
type OptimizationCandidate struct {
	Content        string                      `json:"content"`
	Demonstrations []OptimizationDemonstration `json:"demonstrations"`
	Rendered       string                      `json:"rendered"`
	Hash           string                      `json:"hash"`
}

// OptimizationDemonstration is an input and the output wanted for it.
type OptimizationDemonstration struct {
	Input     string `json:"input"`
	Output    string `json:"output"`
	ExampleID string `json:"example_id"`
}

// OptimizationReport compares the candidate with the baseline on the holdout.
type OptimizationReport struct {
	// BaselineAgreement and CandidateAgreement are a judge run's: the templates' agreement
	// with people on the held-out calibrated evaluations.
	BaselineAgreement  *JudgeAgreement `json:"baseline_agreement,omitempty"`
	CandidateAgreement *JudgeAgreement `json:"candidate_agreement,omitempty"`
	// Dataset is the dataset version the examples came from (nil: the prompt's feedback only);
	// HoldoutIDs are then its rows' row_id (and completions' span ids with feedback).
	Dataset        *OptimizationReportDataset `json:"dataset,omitempty"`
	HoldoutIDs     []string                   `json:"holdout_ids"`
	Baseline       OptimizationScores         `json:"baseline"`
	Candidate      OptimizationScores         `json:"candidate"`
	Regressed      []string                   `json:"regressed"`
	Recommendation string                     `json:"recommendation"`
	Reason         string                     `json:"reason"`
}

// OptimizationScores are mean scores (0 to 1), overall and per intent judge.
type OptimizationScores struct {
	Overall float64            `json:"overall"`
	Intents map[string]float64 `json:"intents"`
}

// OptimizationRunList answers GET .../optimization-runs: newest first. A page that would pass
// MaxAnswerBytes holds fewer runs, Limit their number, and NextOffsetHeader says where the rest
// starts.
type OptimizationRunList struct {
	Runs   []OptimizationRun `json:"runs"`
	Limit  int               `json:"limit"`
	Offset int               `json:"offset"`
}

// DeployPreview answers POST /projects/{project_id}/optimization-runs/{run_id}:preview-deploy:
// the receipt a deploy needs, when it expires, and what the deploy would change.
type DeployPreview struct {
	Receipt   string        `json:"receipt"`
	ExpiresAt time.Time     `json:"expires_at"`
	Summary   DeploySummary `json:"summary"`
}

// DeploySummary is what a deploy would change: the prompt's production tag from the version it
// serves (null: none) to a version of the candidate's content.
type DeploySummary struct {
	RunID      string `json:"run_id"`
	PromptSlug string `json:"prompt_slug,omitempty"`
	// JudgeID and CurrentTemplate are set for a judge run: its deploy sets the judge's
	// template to the candidate's content.
	JudgeID           *string `json:"judge_id,omitempty"`
	CurrentTemplate   *string `json:"current_template,omitempty"`
	Tag               string  `json:"tag,omitempty"`
	ProductionVersion *int    `json:"production_version"`
	ProductionContent *string `json:"production_content"`
	CandidateContent  string  `json:"candidate_content"`
	CandidateHash     string  `json:"candidate_hash"`
	Recommendation    string  `json:"recommendation"`
	BaselineScore     float64 `json:"baseline_score"`
	CandidateScore    float64 `json:"candidate_score"`
}

// DeployRequest is the body of POST /projects/{project_id}/optimization-runs/{run_id}:deploy.
type DeployRequest struct {
	Receipt string `json:"receipt"`
	Confirm bool   `json:"confirm"`
}

// DeployResult answers a deploy: the version production now serves.
type DeployResult struct {
	RunID           string `json:"run_id"`
	PromptSlug      string `json:"prompt_slug,omitempty"`
	JudgeID         string `json:"judge_id,omitempty"`
	Tag             string `json:"tag,omitempty"`
	Version         int    `json:"version"`
	VersionID       string `json:"version_id"`
	PreviousVersion *int   `json:"previous_version"`
}

// OptimizationSimulation is the candidate and the baseline run on the holdout with one model,
// queued when the run succeeds: mean scores, what the calls cost and how long the model took to
// answer (mean). Error says why a model could not be simulated.
type OptimizationSimulation struct {
	Model          string  `json:"model"`
	BaselineScore  float64 `json:"baseline_score"`
	CandidateScore float64 `json:"candidate_score"`
	CostUSD        float64 `json:"cost_usd"`
	LatencyMS      float64 `json:"latency_ms"`
	Examples       int     `json:"examples"`
	Error          *string `json:"error"`
}

// JudgeAgreement is how far a judge template agrees with people; a rate without data is null.
type JudgeAgreement struct {
	N                int      `json:"n"`
	Accuracy         *float64 `json:"accuracy"`
	Kappa            *float64 `json:"kappa"`
	TruePositiveRate *float64 `json:"true_positive_rate"`
	TrueNegativeRate *float64 `json:"true_negative_rate"`
}

// States of a run (OptimizationRun.Status): queued → running → succeeded | failed |
// cancelled, and queued → cancelled.
const (
	RunQueued    = "queued"
	RunRunning   = "running"
	RunSucceeded = "succeeded"
	RunFailed    = "failed"
	RunCancelled = "cancelled"
)

// Optimizer types (COMPAT.md "CLI conventions": the CLI's optimizer types). A prompt run may
// request any of OptimizerTypes; a judge's template is optimized with quick_refine only.
const (
	OptimizerQuickRefine = "quick_refine"
	OptimizerBootstrap   = "dspy_bootstrap"
	OptimizerGEPA        = "dspy_gepa"
	// OptimizerAuto lets the run pick one from its examples and budget.
	OptimizerAuto = "auto"
)

// OptimizerTypes are the types a prompt run may request, auto first (the default).
var OptimizerTypes = []string{OptimizerAuto, OptimizerQuickRefine, OptimizerBootstrap, OptimizerGEPA}

// DefaultBudgets are a run's budget per optimizer type when its config gives none (a zero
// field takes its type's default): model calls of every kind, and their cost.
var DefaultBudgets = map[string]OptimizationBudget{
	OptimizerQuickRefine: {MaxModelCalls: 200, MaxCostUSD: 2},
	OptimizerBootstrap:   {MaxModelCalls: 1000, MaxCostUSD: 10},
	OptimizerGEPA:        {MaxModelCalls: 3000, MaxCostUSD: 30},
}

// Bounds of what an optimization run reads, and its defaults.
const (
	// MaxOptimizationExamples bounds the completions a prompt run reads.
	MaxOptimizationExamples = 200
	// MaxOptimizationDatasetRows bounds the rows a run reads of its dataset version: the
	// first ones, read page by page.
	MaxOptimizationDatasetRows = 200
	// MaxOptimizationDatasetBytes bounds the row data a run reads of its dataset version: it
	// stops before the row that would pass it (the first row is always read).
	MaxOptimizationDatasetBytes = 4 << 20
	// MaxOptimizationInputColumns bounds a run's dataset input columns.
	MaxOptimizationInputColumns = 20
	// MaxCalibrations bounds the calibrated evaluations a judge run reads.
	MaxCalibrations = 500
	// MinOptimizationExamples is the fewest examples a run works with: one each to learn
	// from, to validate on and to compare on.
	MinOptimizationExamples = 3
	// MaxBudgetModelCalls is the most model calls a run's budget may allow.
	MaxBudgetModelCalls = 100_000
	// DefaultJudgeRunSeed is a judge run's seed when its config gives none (a prompt run
	// draws one).
	DefaultJudgeRunSeed = 1
)
