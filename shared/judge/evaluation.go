package judge

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/plumehq/plume/shared/bound"
	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/trace"
)

// Limits of an evaluation.
const (
	MaxEvaluationsPerRequest = 100
	MaxReasonBytes           = 16 << 10
	MaxCriterionReasonBytes  = 4 << 10
	maxSpanIDLen             = 128
)

// Evaluation is one judge's verdict on one span; a judge evaluates a span at most once (writing
// again replaces the verdict). It carries a snapshot of the judge's name, type and score range
// so that reads never join against the judge.
type Evaluation struct {
	ID             string
	SpanID         string
	TraceID        string
	JudgeID        string
	JudgeName      string
	EvaluationType string
	Result         bool
	Reason         string
	Confidence     *float64
	Score          *float64
	ScoreMin       *float64
	ScoreMax       *float64
	PassThreshold  *float64
	Model          string
	DurationMS     *float64
	// Cost is what the judge model's call cost in USD (evaluations by Plume's evaluator with a
	// priced model, or an outside evaluator that says); nil when unknown.
	Cost           *float64
	CriteriaScores map[string]CriterionScore
	// HasFeedback is set once someone gave calibration feedback on this evaluation.
	HasFeedback bool
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// CriterionScore is a judge's verdict on one criterion.
type CriterionScore struct {
	Score  *float64
	Reason string
}

// EvaluationInput is one evaluation as POST .../evaluations takes it (api.EvaluationRequest): a
// verdict computed by an evaluator that runs elsewhere.
type EvaluationInput struct {
	SpanID         string
	Result         *bool
	Reason         string
	Confidence     *float64
	Score          *float64
	Model          string
	DurationMS     *float64
	Cost           *float64
	CriteriaScores map[string]CriterionScore
	CreatedAt      *time.Time
}

// BuildEvaluations validates inputs against j and returns the evaluations to store (ids, trace
// ids and counters are the store's). A binary judge needs evaluation_result and takes no score;
// a scored judge needs a score within its range and derives the result from its pass threshold
// when none is given. The first invalid input fails the whole request, named by its index.
func BuildEvaluations(j Judge, in []EvaluationInput, now time.Time) ([]Evaluation, error) {
	switch {
	case len(in) == 0:
		return nil, errs.Invalid("the body must be a non-empty JSON array of evaluations")
	case len(in) > MaxEvaluationsPerRequest:
		return nil, errs.Invalid("at most %d evaluations per request, got %d", MaxEvaluationsPerRequest, len(in))
	}
	out := make([]Evaluation, len(in))
	seen := make(map[string]int, len(in))
	for i, e := range in {
		ev, err := buildEvaluation(j, e, now)
		if err != nil {
			return nil, errs.Prefix(fmt.Sprintf("evaluations[%d]", i), err)
		}
		if prev, dup := seen[ev.SpanID]; dup {
			return nil, errs.Invalid("evaluations[%d]: span %s is also evaluations[%d]; a judge evaluates a span once", i, ev.SpanID, prev)
		}
		seen[ev.SpanID] = i
		out[i] = ev
	}
	return out, nil
}

func buildEvaluation(j Judge, in EvaluationInput, now time.Time) (Evaluation, error) {
	spanID := strings.ToLower(strings.TrimSpace(in.SpanID))
	switch {
	case spanID == "" || len(spanID) > maxSpanIDLen:
		return Evaluation{}, errs.Invalid("span_id is required (at most %d bytes)", maxSpanIDLen)
	case len(in.Reason) > MaxReasonBytes:
		return Evaluation{}, errs.Invalid("evaluation_reason: at most %d bytes", MaxReasonBytes)
	case len(in.Model) > MaxModelLen:
		return Evaluation{}, errs.Invalid("model_used: at most %d bytes", MaxModelLen)
	case in.CreatedAt != nil && in.CreatedAt.After(now.Add(time.Hour)):
		return Evaluation{}, errs.Invalid("created_at is in the future")
	case in.CreatedAt != nil && in.CreatedAt.Before(trace.MinSpanTime):
		return Evaluation{}, errs.Invalid("created_at is before %s", trace.MinSpanTime.Format(time.DateOnly))
	}
	// The numbers, by shared/bound's rule: confidence_score 0 to 1 and evaluation_duration_ms
	// 0 to 1e12 are measured (below 1e-12 in magnitude they are 0), scores are chosen.
	var err error
	if in.Confidence, err = checkOptional("confidence_score", in.Confidence, bound.Confidence); err != nil {
		return Evaluation{}, err
	}
	if in.DurationMS, err = checkOptional("evaluation_duration_ms", in.DurationMS, bound.DurationMS); err != nil {
		return Evaluation{}, err
	}
	if in.Cost, err = checkOptional("cost", in.Cost, bound.Cost); err != nil {
		return Evaluation{}, err
	}
	if in.Score, err = checkOptional("score", in.Score, bound.Score); err != nil {
		return Evaluation{}, err
	}
	ev := Evaluation{
		SpanID: spanID, JudgeID: j.ID, JudgeName: j.Name, EvaluationType: j.EvaluationType,
		Reason: in.Reason, Confidence: in.Confidence, Model: in.Model, DurationMS: in.DurationMS,
		Cost: in.Cost, ScoreMin: j.ScoreMin, ScoreMax: j.ScoreMax, PassThreshold: j.PassThreshold,
		CreatedAt: now, UpdatedAt: now,
	}
	if in.CreatedAt != nil {
		ev.CreatedAt = Stamp(*in.CreatedAt)
	}
	if j.Scored() {
		if in.Score == nil || !j.InRange(*in.Score) {
			return Evaluation{}, errs.Invalid("score is required for a scored judge, between %g and %g", *j.ScoreMin, *j.ScoreMax)
		}
		ev.Score = in.Score
		ev.Result = *in.Score >= *j.PassThreshold
		if in.Result != nil {
			ev.Result = *in.Result
		}
	} else {
		if in.Score != nil {
			return Evaluation{}, errs.Invalid("score applies to scored judges only; this judge is binary")
		}
		if in.Result == nil {
			return Evaluation{}, errs.Invalid("evaluation_result (true = pass) is required for a binary judge")
		}
		ev.Result = *in.Result
	}
	if err := checkCriteriaScores(j, in.CriteriaScores); err != nil {
		return Evaluation{}, err
	}
	ev.CriteriaScores = in.CriteriaScores
	return ev, nil
}

// checkOptional is checkNumber for an optional number: the checked value in a new variable (nil
// for nil).
func checkOptional(name string, v *float64, r bound.Range) (*float64, error) {
	if v == nil {
		return nil, nil
	}
	c, err := checkNumber(name, *v, r)
	if err != nil {
		return nil, err
	}
	return &c, nil
}

// checkCriteriaScores checks scores against j; it stores each score as checked (-0 as 0) in
// scores.
func checkCriteriaScores(j Judge, scores map[string]CriterionScore) error {
	for _, k := range slices.Sorted(maps.Keys(scores)) {
		c := scores[k]
		if c.Score != nil {
			v, err := checkNumber(fmt.Sprintf("criteria_scores[%q].score", k), *c.Score, bound.Score)
			if err != nil {
				return err
			}
			c.Score = &v
			scores[k] = c
		}
		switch {
		case !j.HasCriterion(k):
			return errs.Invalid("criteria_scores: %q is not a criterion of judge %q (%s)", k, j.Name, criteriaKeys(j))
		case len(c.Reason) > MaxCriterionReasonBytes:
			return errs.Invalid("criteria_scores[%q].reason: at most %d bytes", k, MaxCriterionReasonBytes)
		case c.Score == nil:
			return errs.Invalid("criteria_scores[%q].score is required", k)
		case j.Scored() && !j.InRange(*c.Score):
			return errs.Invalid("criteria_scores[%q].score must be between %g and %g", k, *j.ScoreMin, *j.ScoreMax)
		case !j.Scored() && !(*c.Score >= 0 && *c.Score <= 1):
			return errs.Invalid("criteria_scores[%q].score must be between 0 and 1 for a binary judge", k)
		}
	}
	return nil
}

func criteriaKeys(j Judge) string {
	if len(j.Criteria) == 0 {
		return "it has none"
	}
	keys := make([]string, len(j.Criteria))
	for i, c := range j.Criteria {
		keys[i] = c.Key
	}
	return "criteria: " + strings.Join(keys, ", ")
}

// Calibration is feedback on a judge's evaluation of a span: what the score should have been,
// in which direction it erred, and per-criterion corrections.
type Calibration struct {
	JudgeID          string
	ExpectedScore    *float64
	ScoreDirection   string
	CriteriaFeedback map[string]CriterionFeedback
}

// CriterionFeedback corrects a judge's verdict on one criterion.
type CriterionFeedback struct {
	ExpectedScore *float64
	Reason        string
}

// Score directions of calibration feedback.
const (
	TooHigh = "too_high"
	TooLow  = "too_low"
)

// CheckCalibration validates calibration feedback against the judge it is about: an
// expected_score within the judge's range (scored judges only), a direction of too_high or
// too_low, and criteria among the judge's.
func CheckCalibration(j Judge, c Calibration) error {
	if c.ExpectedScore != nil {
		if _, err := checkNumber("expected_score", *c.ExpectedScore, bound.Score); err != nil {
			return err
		}
	}
	if c.ExpectedScore != nil && !j.InRange(*c.ExpectedScore) {
		if !j.Scored() {
			return errs.Invalid("expected_score applies to scored judges; judge %q is binary", j.Name)
		}
		return errs.Invalid("expected_score must be between %g and %g (the range of judge %q)", *j.ScoreMin, *j.ScoreMax, j.Name)
	}
	if c.ScoreDirection != "" && c.ScoreDirection != TooHigh && c.ScoreDirection != TooLow {
		return errs.Invalid("score_direction must be %q or %q", TooHigh, TooLow)
	}
	for _, k := range slices.Sorted(maps.Keys(c.CriteriaFeedback)) {
		f := c.CriteriaFeedback[k]
		if f.ExpectedScore != nil {
			if _, err := checkNumber(fmt.Sprintf("criteria_feedback[%q].expected_score", k), *f.ExpectedScore, bound.Score); err != nil {
				return err
			}
		}
		switch {
		case !j.HasCriterion(k):
			return errs.Invalid("criteria_feedback: %q is not a criterion of judge %q (%s)", k, j.Name, criteriaKeys(j))
		case len(f.Reason) > MaxCriterionReasonBytes:
			return errs.Invalid("criteria_feedback[%q].reason: at most %d bytes", k, MaxCriterionReasonBytes)
		case f.ExpectedScore != nil && j.Scored() && !j.InRange(*f.ExpectedScore):
			return errs.Invalid("criteria_feedback[%q].expected_score must be between %g and %g", k, *j.ScoreMin, *j.ScoreMax)
		case f.ExpectedScore != nil && !j.Scored() && !(*f.ExpectedScore >= 0 && *f.ExpectedScore <= 1):
			return errs.Invalid("criteria_feedback[%q].expected_score must be between 0 and 1 for a binary judge", k)
		}
	}
	return nil
}

// Feedback states of the evaluation listing.
const (
	WithFeedback    = "with_user_feedback"
	WithoutFeedback = "without_user_feedback"
)

// Query selects a judge's evaluations (spec §4.7): created within [Start, End] (zero: open),
// with Result when set, and with or without calibration feedback when FeedbackState is set.
// Evaluations come newest first.
type Query struct {
	Start, End    time.Time
	Result        *bool
	FeedbackState string
	Limit, Offset int
}

// Matches reports whether e satisfies q's filters (not its paging).
func (q Query) Matches(e Evaluation) bool {
	switch {
	case !q.Start.IsZero() && e.CreatedAt.Before(q.Start), !q.End.IsZero() && e.CreatedAt.After(q.End):
		return false
	case q.Result != nil && e.Result != *q.Result:
		return false
	case q.FeedbackState == WithFeedback && !e.HasFeedback, q.FeedbackState == WithoutFeedback && e.HasFeedback:
		return false
	}
	return true
}

// Windowed is q with DefaultWindow when it has no start: from the start of the hour 30 days
// before its end (or now), so that the judge's hour counters answer its total.
func (q Query) Windowed(now time.Time) Query {
	if q.Start.IsZero() {
		end := now
		if !q.End.IsZero() {
			end = q.End
		}
		q.Start = end.Add(-DefaultWindow).UTC().Truncate(time.Hour)
	}
	return q
}

// Page is one page of a judge's evaluations and how many match in all.
type Page struct {
	Evaluations []Evaluation
	// Total is how many evaluations match, exact unless Truncated.
	Total int
	// Scanned is how many evaluations the read examined.
	Scanned int
	// Truncated says that the read stopped at MaxScan evaluations examined before the end
	// of the window, so that Total counts the matches among them only (a lower bound) and
	// the page may be short: a narrower window answers exactly.
	Truncated bool
}

// DefaultWindow is the window of an evaluation listing without start_date: the 30 days up to
// end_date (or now), from the start of that hour.
const DefaultWindow = 30 * 24 * time.Hour

// MaxScan bounds the evaluations one listing examines beyond its offset and limit when its
// filters are not answered by the judge's counters (feedback_state; a rare evaluation_result).
const MaxScan = 10_000
