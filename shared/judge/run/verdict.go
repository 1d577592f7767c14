package run

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/plumehq/plume/shared/judge"
	"github.com/plumehq/plume/shared/llm"
	"github.com/plumehq/plume/shared/textcut"
)

// ErrInvalidVerdict is the error (errors.Is) of a model answer that is not a usable verdict.
var ErrInvalidVerdict = errors.New("invalid judge verdict")

// answer is the judge model's structured answer (see schema).
type answer struct {
	Reason         *string                    `json:"reason"`
	Confidence     *float64                   `json:"confidence"`
	MeetsCriteria  *bool                      `json:"meets_criteria"`
	Score          *float64                   `json:"score"`
	CriteriaScores map[string]criterionAnswer `json:"criteria_scores"`
}

type criterionAnswer struct {
	Score  *float64 `json:"score"`
	Reason string   `json:"reason"`
}

// Verdict reads the model's answer resp to judge j's Prompt about span spanID as an
// evaluation input that judge.BuildEvaluations accepts: the reason (cut to
// judge.MaxReasonBytes), the confidence, meets_criteria as the result of a binary judge or the
// score of a scored one (whose result BuildEvaluations derives from the pass threshold), the
// criteria scores (reasons cut to judge.MaxCriterionReasonBytes), resp.Model as model_used
// resp.Duration as evaluation_duration_ms and resp.Cost as the cost when the model is priced.
//
// The answer is checked again here, whatever the client validated: an answer that is not a
// JSON object, lacks reason, confidence, or the score or meets_criteria its judge type needs,
// carries the other one, has a number out of its range or a criterion j does not have is an
// ErrInvalidVerdict error saying what is wrong. Criteria the answer leaves out are left out.
func Verdict(j judge.Judge, spanID string, resp llm.Response) (judge.EvaluationInput, error) {
	invalid := func(format string, args ...any) (judge.EvaluationInput, error) {
		return judge.EvaluationInput{}, fmt.Errorf("%w for span %s: %s", ErrInvalidVerdict, spanID, fmt.Sprintf(format, args...))
	}
	data := resp.JSON
	if len(bytes.TrimSpace(data)) == 0 {
		data = []byte(resp.Text)
	}
	var a answer
	if err := json.Unmarshal(data, &a); err != nil {
		return invalid("the answer is not a JSON object of the verdict's fields: %v", err)
	}
	switch {
	case a.Reason == nil:
		return invalid("reason is missing")
	case a.Confidence == nil:
		return invalid("confidence is missing")
	case !(*a.Confidence >= 0 && *a.Confidence <= 1):
		return invalid("confidence %g is not between 0 and 1", *a.Confidence)
	}
	in := judge.EvaluationInput{
		SpanID:     spanID,
		Reason:     textcut.Prefix(*a.Reason, judge.MaxReasonBytes),
		Confidence: a.Confidence,
		Model:      textcut.Prefix(resp.Model, judge.MaxModelLen),
	}
	if resp.Duration > 0 {
		ms := float64(resp.Duration) / 1e6
		in.DurationMS = &ms
	}
	if resp.CostSource == llm.CostSourceTable {
		cost := resp.Cost
		in.Cost = &cost
	}
	if j.Scored() {
		switch {
		case a.Score == nil:
			return invalid("score is missing")
		case a.MeetsCriteria != nil:
			return invalid("meets_criteria is not an answer of a scored judge")
		case !j.InRange(*a.Score):
			return invalid("score %g is not between %g and %g", *a.Score, *j.ScoreMin, *j.ScoreMax)
		}
		in.Score = a.Score
	} else {
		switch {
		case a.MeetsCriteria == nil:
			return invalid("meets_criteria is missing")
		case a.Score != nil:
			return invalid("score is not an answer of a binary judge")
		}
		in.Result = a.MeetsCriteria
	}
	lo, hi := criterionRange(j)
	for _, k := range slices.Sorted(maps.Keys(a.CriteriaScores)) {
		c := a.CriteriaScores[k]
		switch {
		case !j.HasCriterion(k):
			return invalid("criteria_scores: %q is not a criterion of the judge", k)
		case c.Score == nil:
			return invalid("criteria_scores[%q].score is missing", k)
		case math.IsNaN(*c.Score) || *c.Score < lo || *c.Score > hi:
			return invalid("criteria_scores[%q].score %g is not between %g and %g", k, *c.Score, lo, hi)
		}
		if in.CriteriaScores == nil {
			in.CriteriaScores = make(map[string]judge.CriterionScore, len(a.CriteriaScores))
		}
		in.CriteriaScores[k] = judge.CriterionScore{Score: c.Score, Reason: textcut.Prefix(c.Reason, judge.MaxCriterionReasonBytes)}
	}
	return in, nil
}
