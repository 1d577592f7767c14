package optimize

import (
	"time"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/shared/errs"
)

// States of a run, as the API names them (api.RunQueued ...).
const (
	StatusQueued    = api.RunQueued
	StatusRunning   = api.RunRunning
	StatusSucceeded = api.RunSucceeded
	StatusFailed    = api.RunFailed
	StatusCancelled = api.RunCancelled
)

// transitions are the allowed moves between states; a run in a final state never moves.
var transitions = map[string][]string{
	StatusQueued:  {StatusRunning, StatusCancelled, StatusFailed},
	StatusRunning: {StatusSucceeded, StatusFailed, StatusCancelled},
}

// CheckTransition returns nil when a run may move from one state to another, and an
// errs.CodeConflict error naming both otherwise.
func CheckTransition(from, to string) error {
	for _, s := range transitions[from] {
		if s == to {
			return nil
		}
	}
	return errs.Conflict("an optimization run that is %s cannot become %s", from, to)
}

// Final reports whether a run in status s is over.
func Final(s string) bool { return s == StatusSucceeded || s == StatusFailed || s == StatusCancelled }

// Recommendations of a run's report.
const (
	RecommendPublish       = "publish"
	RecommendNoImprovement = "no_improvement"
)

// Target kinds: what a run optimizes.
const (
	TargetPrompt = "prompt"
	TargetJudge  = "judge"
)

// Target is what a run optimizes: a prompt (by slug) or a judge's template.
type Target struct {
	Kind    string `json:"kind"`
	Slug    string `json:"slug,omitempty"`
	JudgeID string `json:"judge_id,omitempty"`
}

// Config is what a run was asked to do, defaults applied (Defaults).
type Config struct {
	Intents []Intent `json:"intents"`
	Budget  Budget   `json:"budget"`
	// Models are the models of the simulations, beside the baseline's bound model.
	Models []string `json:"models,omitempty"`
	Seed   int64    `json:"seed"`
	// Dataset is the dataset version a prompt run takes examples from (nil: its feedback only),
	// resolved when the run starts.
	Dataset *Dataset `json:"dataset,omitempty"`
}

// Baseline is the prompt version a run improves on: what the production tag served when the
// run started, else the latest version.
type Baseline struct {
	VersionID   string  `json:"version_id"`
	Version     int     `json:"version"`
	Content     string  `json:"content"`
	ContentHash string  `json:"content_hash"`
	Model       *string `json:"model,omitempty"`
}

// Progress is what a run has spent and done so far.
type Progress struct {
	ModelCalls int     `json:"model_calls"`
	CostUSD    float64 `json:"cost_usd"`
	Iteration  int     `json:"iteration"`
}

// Scores are a candidate's mean scores over a set of examples: overall and per intent.
type Scores struct {
	Overall float64            `json:"overall"`
	Intents map[string]float64 `json:"intents,omitempty"`
}

// JudgeAgreement is how far a judge template agrees with the people who calibrated it on the
// holdout, for the runs that optimize a judge.
type JudgeAgreement struct {
	Accuracy         *float64 `json:"accuracy"`
	Kappa            *float64 `json:"kappa"`
	TruePositiveRate *float64 `json:"true_positive_rate"`
	TrueNegativeRate *float64 `json:"true_negative_rate"`
	N                int      `json:"n"`
}

// Report compares the candidate with the baseline on the holdout, which no strategy saw.
type Report struct {
	// BaselineAgreement and CandidateAgreement are set for judge runs: the templates' agreement
	// with people on the holdout's calibrated evaluations.
	BaselineAgreement  *JudgeAgreement `json:"baseline_agreement,omitempty"`
	CandidateAgreement *JudgeAgreement `json:"candidate_agreement,omitempty"`
	// Dataset is the dataset version the examples came from (nil: none).
	Dataset    *ReportDataset `json:"dataset,omitempty"`
	HoldoutIDs []string       `json:"holdout_ids"`
	Baseline   Scores         `json:"baseline"`
	Candidate  Scores         `json:"candidate"`
	// Regressed are the holdout examples the candidate scores lower on than the baseline.
	Regressed      []string `json:"regressed,omitempty"`
	Recommendation string   `json:"recommendation"`
	// Reason says why the recommendation was made, for people.
	Reason string `json:"reason"`
}

// Simulation is the candidate and the baseline run on the holdout with one model: how a
// deploy would fare if the prompt were served by that model.
type Simulation struct {
	Model          string  `json:"model"`
	BaselineScore  float64 `json:"baseline_score"`
	CandidateScore float64 `json:"candidate_score"`
	// CostUSD is what the simulation's calls cost, LatencyMS the mean time of the model's
	// answers (the task calls, baseline and candidate alike).
	CostUSD   float64 `json:"cost_usd"`
	LatencyMS float64 `json:"latency_ms"`
	Examples  int     `json:"examples"`
	// Error says why the model could not be simulated ("" when it was).
	Error string `json:"error,omitempty"`
}

// Run is one optimization run.
type Run struct {
	ID        string
	ProjectID string
	Target    Target
	// Requested is the optimizer type asked for (TypeAuto included), Type the one that runs.
	Requested string
	Type      string
	Config    Config
	Status    string
	Progress  Progress
	Baseline  Baseline
	Candidate *Candidate
	Report    *Report
	// Simulations are queued when the run succeeds, and filled in when they end.
	Simulations []Simulation
	Error       string
	// Checkpoint is the bucket key of the strategy's state after its last iteration ("" before
	// the first): a run resumed by another invocation goes on from it.
	Checkpoint string
	// DeployedVersionID is the prompt version a deploy made of the candidate.
	DeployedVersionID string
	CreatedAt         time.Time
	CreatedBy         string
	UpdatedAt         time.Time
	StartedAt         *time.Time
	FinishedAt        *time.Time
	// Version counts the run's writes: every update is conditioned on it.
	Version int
	// Resumes counts the times a run whose worker was gone was queued again.
	Resumes int
}

// Receipt is a deploy receipt: what a preview bound the deploy to (kept by the run store under
// the hash of the token the preview answered).
type Receipt struct {
	RunID string
	// CandidateHash is Candidate.Hash of the run's candidate at preview.
	CandidateHash string
	// ProductionVersion is the version the production tag pointed at during the preview (0:
	// the tag did not exist).
	ProductionVersion int
	// TemplateHash is, for a judge run, the hash of the judge's template at the preview.
	TemplateHash string
	ExpiresAt    time.Time
}

// RunRef names a run of a project.
type RunRef struct{ ProjectID, RunID string }
