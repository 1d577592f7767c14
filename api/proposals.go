package api

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"time"
)

// The proposals of the optimization area: what goes wrong with a prompt or a judge (GET
// .../prompts/{slug}/issues, .../judges/{judge_id}/issues) and whether an optimization of it
// has enough to learn from (GET .../optimization-preview). They change nothing. Every read
// behind them is bounded; an answer's Notes say where a bound was reached.

// Windows of the issue reads, in hours.
const (
	DefaultIssueWindowHours = 7 * 24
	MaxIssueWindowHours     = 90 * 24
)

// Bounds of the proposals' answers.
const (
	MaxIssueGroups        = 10 // groups per list
	IssueExamplesPerGroup = 3
	IssueTextChars        = 300 // an example's input, output and reasons are cut to this
)

// IssueQuery is the query of GET .../prompts/{slug}/issues and .../judges/{judge_id}/issues.
type IssueQuery struct {
	// WindowHours is how far back to look (0: DefaultIssueWindowHours; at most
	// MaxIssueWindowHours).
	WindowHours int
}

// Values encodes q as query parameters.
func (q IssueQuery) Values() url.Values {
	v := url.Values{}
	if q.WindowHours != 0 {
		v.Set("window_hours", strconv.Itoa(q.WindowHours))
	}
	return v
}

// ParseIssueQuery reads an IssueQuery from query parameters.
func ParseIssueQuery(v url.Values) (IssueQuery, error) {
	hours, err := intParam(v, "window_hours", 1, MaxIssueWindowHours)
	return IssueQuery{WindowHours: hours}, err
}

// Start is the start of q's window ending at now.
func (q IssueQuery) Start(now time.Time) time.Time {
	hours := q.WindowHours
	if hours == 0 {
		hours = DefaultIssueWindowHours
	}
	return now.UTC().Add(-time.Duration(hours) * time.Hour).Truncate(time.Second)
}

// PreviewQuery is the query of GET .../optimization-preview: the run it would start.
type PreviewQuery struct {
	// OptimizerType is one of OptimizerTypes ("": auto); a judge's run is quick_refine.
	OptimizerType string
	// MaxModelCalls is the budget's model calls (0: the type's default).
	MaxModelCalls int
	// Seed is the split's seed (nil: 1, pinned in the answer's Start).
	Seed *int64
}

// Values encodes q as query parameters.
func (q PreviewQuery) Values() url.Values {
	v := url.Values{}
	if q.OptimizerType != "" {
		v.Set("optimizer_type", q.OptimizerType)
	}
	if q.MaxModelCalls != 0 {
		v.Set("max_model_calls", strconv.Itoa(q.MaxModelCalls))
	}
	if q.Seed != nil {
		v.Set("seed", strconv.FormatInt(*q.Seed, 10))
	}
	return v
}

// ParsePreviewQuery reads a PreviewQuery from query parameters.
func ParsePreviewQuery(v url.Values) (PreviewQuery, error) {
	q := PreviewQuery{OptimizerType: v.Get("optimizer_type")}
	if q.OptimizerType != "" && !slices.Contains(OptimizerTypes, q.OptimizerType) {
		return q, fmt.Errorf("optimizer_type must be auto, quick_refine, dspy_bootstrap or dspy_gepa, not %q", q.OptimizerType)
	}
	var err error
	if q.MaxModelCalls, err = intParam(v, "max_model_calls", 1, MaxBudgetModelCalls); err != nil {
		return q, err
	}
	if s := v.Get("seed"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return q, fmt.Errorf("seed must be an integer, not %q", s)
		}
		q.Seed = &n
	}
	return q, nil
}

// intParam reads integer parameter name, in [lo, hi]; 0 when absent.
func intParam(v url.Values, name string, lo, hi int) (int, error) {
	s := v.Get(name)
	if s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < lo || n > hi {
		return 0, fmt.Errorf("%s must be an integer from %d to %d, not %q", name, lo, hi, s)
	}
	return n, nil
}

// IssueGroup is the failures that share one reason: the reason normalised (lowercase, trimmed,
// spaces collapsed; cut to IssueTextChars), so that identical reasons are one group.
type IssueGroup struct {
	Reason    string         `json:"reason"`
	Count     int            `json:"count"`
	JudgeID   string         `json:"judge_id,omitempty"`
	JudgeName string         `json:"judge_name,omitempty"`
	Examples  []IssueExample `json:"examples"` // at most IssueExamplesPerGroup, newest first
}

// IssueExample is one failure of an IssueGroup: the completion's input and output, the output
// the person wanted, and the judge's verdict (pass or fail, and a scored judge's score) and
// reason; every text cut to IssueTextChars, saying how much was left out.
type IssueExample struct {
	SpanID         string `json:"span_id"`
	Input          string `json:"input"`
	Output         string `json:"output"`
	ExpectedOutput string `json:"expected_output,omitempty"`
	Verdict        string `json:"verdict,omitempty"`
	JudgeReason    string `json:"judge_reason,omitempty"`
}

// JudgeCounts counts a judge's evaluations and the failing ones among them: in the window of
// an issue read; over the run's examples in a preview (failing: a verdict under a full score).
type JudgeCounts struct {
	JudgeID     string `json:"judge_id"`
	Name        string `json:"name"`
	Evaluations int    `json:"evaluations"`
	Failing     int    `json:"failing"`
}

// PromptIssues is GET /projects/{project_id}/prompts/{slug}/issues: people's thumbs down on
// the prompt's completions in the window and the failing evaluations of its linked judges,
// each grouped by reason, largest first.
type PromptIssues struct {
	PromptSlug       string        `json:"prompt_slug"`
	Since            time.Time     `json:"since"`
	LinkedJudges     []JudgeCounts `json:"linked_judges"`
	CompletionsRead  int           `json:"completions_read"` // completions whose feedback was read
	NegativeFeedback int           `json:"negative_feedback"`
	FeedbackIssues   []IssueGroup  `json:"feedback_issues"`
	EvaluationIssues []IssueGroup  `json:"evaluation_issues"`
	Notes            []string      `json:"notes"`
}

// JudgeIssues is GET /projects/{project_id}/judges/{judge_id}/issues: the verdicts people's
// calibrations said were wrong, grouped by the person's reason, and the judge's failing
// evaluations in the window, grouped by its reason.
type JudgeIssues struct {
	JudgeID            string       `json:"judge_id"`
	Name               string       `json:"name"`
	EvaluationType     string       `json:"evaluation_type"`
	Since              time.Time    `json:"since"`
	Evaluations        int          `json:"evaluations"`
	Failing            int          `json:"failing"`
	CalibrationsRead   int          `json:"calibrations_read"` // newest first, whatever the window
	Disagreements      int          `json:"disagreements"`
	DisagreementIssues []IssueGroup `json:"disagreement_issues"`
	FailureIssues      []IssueGroup `json:"failure_issues"`
	Notes              []string     `json:"notes"`
}

// OptimizationStart is the body of POST .../optimization-runs that starts a previewed run, as
// a preview answers it: OptimizationRunRequest(start) is the request.
type OptimizationStart OptimizationRunRequest

// PromptSignal is what an optimization of a prompt would learn from: the examples the run
// would read (at most MaxOptimizationExamples), people's feedback on them, and the verdicts of
// the linked judges (the run's default intents) on them.
type PromptSignal struct {
	Examples           int           `json:"examples"`
	WithFeedback       int           `json:"with_feedback"`
	Negative           int           `json:"negative"`
	Positive           int           `json:"positive"`
	WithExpectedOutput int           `json:"with_expected_output"`
	Demonstrations     int           `json:"demonstrations"` // training examples with an expected output or a thumbs up
	Judges             []JudgeCounts `json:"judges"`         // the linked judges: the run's default intents
}

// PromptOptimizationPreview is GET /projects/{project_id}/prompts/{slug}/optimization-preview:
// whether a run would succeed and learn, the type auto picks, the budget and Start, the body
// of POST .../optimization-runs that starts that run (its seed pinned, so that its split is
// the one predicted).
type PromptOptimizationPreview struct {
	PromptSlug      string            `json:"prompt_slug"`
	BaselineVersion int               `json:"baseline_version"`
	Baseline        string            `json:"baseline"` // why that version
	Signal          PromptSignal      `json:"signal"`
	EnoughSignal    bool              `json:"enough_signal"`
	Missing         []string          `json:"missing"`
	AutoPicks       string            `json:"auto_picks"`
	Why             string            `json:"why"`
	ModelCalls      int               `json:"model_calls"`
	ComparisonCalls int               `json:"comparison_calls"`
	Notes           []string          `json:"notes"`
	Start           OptimizationStart `json:"start"`
}

// JudgeOptimizationPreview is GET /projects/{project_id}/judges/{judge_id}/optimization-preview:
// whether a run on the judge's calibrations would succeed and learn, and Start, the body that
// starts it.
type JudgeOptimizationPreview struct {
	JudgeID         string            `json:"judge_id"`
	Name            string            `json:"name"`
	TemplateVersion int               `json:"template_version"`
	Calibrated      int               `json:"calibrated"` // the run's examples (at most MaxCalibrations)
	Disagreements   int               `json:"disagreements"`
	EnoughSignal    bool              `json:"enough_signal"`
	Missing         []string          `json:"missing"`
	AutoPicks       string            `json:"auto_picks"`
	ModelCalls      int               `json:"model_calls"`
	ComparisonCalls int               `json:"comparison_calls"`
	Notes           []string          `json:"notes"`
	Start           OptimizationStart `json:"start"`
}
