package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Limits of a judge: the bytes of its template, and the spans one backfill evaluates.
const (
	MaxJudgeTemplateBytes = 32 << 10
	MaxJudgeBackfill      = 10_000
)

// Evaluation types of a judge (spec §2.9): a pass/fail verdict, or a score with a pass
// threshold.
const (
	EvaluationBinary = "binary"
	EvaluationScored = "scored"
)

// Judge statuses and criteria sources, as Judge reports them.
const (
	JudgeActive = "active"
	JudgePaused = "paused"

	CriteriaExplicit = "explicit" // given in the judge definition
	CriteriaInferred = "inferred" // read from the template's headings and bold labels
)

// Judge is a judge as every judge endpoint answers it (POST, GET and PATCH
// /projects/{project_id}/judges[/{judge_id}], and PUT and DELETE
// /projects/{project_id}/prompts/{slug}/judges/{judge_id}). The spec does not show the judge
// record (§2.10, §4.7); these are the fields Plume defines, with the definition fields the CLI
// uses (COMPAT.md "Feedback and judges"). ScoreMin, ScoreMax and PassThreshold are null for a
// binary judge; Model, TagFilter and TargetPrompt are null when unset; Criteria and
// LinkedPrompts are always arrays; PassRate is null before the first evaluation.
type Judge struct {
	ID             string      `json:"id"`
	ProjectID      string      `json:"project_id"`
	Name           string      `json:"name"`
	Template       string      `json:"template"`
	EvaluationType string      `json:"evaluation_type"`
	ScoreMin       *float64    `json:"score_min"`
	ScoreMax       *float64    `json:"score_max"`
	PassThreshold  *float64    `json:"pass_threshold"`
	SampleRate     float64     `json:"sample_rate"`
	Temperature    float64     `json:"temperature"`
	Model          *string     `json:"model"`
	TagFilter      *TagFilter  `json:"tag_filter"`
	TargetPrompt   *string     `json:"target_prompt"`
	Criteria       []Criterion `json:"criteria"`
	// CriteriaSource is CriteriaExplicit or CriteriaInferred.
	CriteriaSource string `json:"criteria_source"`
	Paused         bool   `json:"paused"`
	// Status is JudgeActive or JudgePaused.
	Status   string `json:"status"`
	Backfill int    `json:"backfill"`
	// TemplateVersion numbers the judge's current template (GET .../versions lists them).
	TemplateVersion int       `json:"template_version"`
	LinkedPrompts   []string  `json:"linked_prompts"`
	EvaluationCount int64     `json:"evaluation_count"`
	PassRate        *float64  `json:"pass_rate"`
	CreatedAt       time.Time `json:"created_at"`
	CreatedBy       string    `json:"created_by"`
	UpdatedAt       time.Time `json:"updated_at"`
	UpdatedBy       string    `json:"updated_by"`
}

// TagFilter selects the spans a judge samples by their tags: with Match "all" every key must
// have one of its values, with "any" one key suffices. Match defaults to "all".
type TagFilter struct {
	Tags  map[string][]string `json:"tags"`
	Match string              `json:"match"`
}

// Criterion is one aspect a judge scores separately (spec §2.10).
type Criterion struct {
	Key         string `json:"key"`
	Label       string `json:"label"`
	Description string `json:"description"`
}

// JudgeList answers GET /projects/{project_id}/judges: the project's judges, oldest first, as
// many as fit MaxAnswerBytes from ?offset= (NextOffsetHeader says where the rest starts);
// Count is how many this answer holds.
// Like every envelope of this area, its fields are in alphabetical order, as the first
// servers wrote them.
type JudgeList struct {
	Count  int     `json:"count"`
	Judges []Judge `json:"judges"`
}

// JudgeRequest is the body of POST /projects/{project_id}/judges (create: name and template
// are required) and of PATCH /projects/{project_id}/judges/{judge_id} (change: the fields
// present change, the others are kept). Null clears model, tag_filter, target_prompt and
// criteria, hence Nullable; for the other fields null is the same as absent. Unknown fields
// are ignored.
type JudgeRequest struct {
	Name           *string               `json:"name,omitempty"`
	Template       *string               `json:"template,omitempty"`
	EvaluationType *string               `json:"evaluation_type,omitempty"`
	ScoreMin       *float64              `json:"score_min,omitempty"`
	ScoreMax       *float64              `json:"score_max,omitempty"`
	PassThreshold  *float64              `json:"pass_threshold,omitempty"`
	SampleRate     *float64              `json:"sample_rate,omitempty"`
	Temperature    *float64              `json:"temperature,omitempty"`
	Model          Nullable[string]      `json:"model,omitzero"`
	TagFilter      Nullable[TagFilter]   `json:"tag_filter,omitzero"`
	TargetPrompt   Nullable[string]      `json:"target_prompt,omitzero"`
	Criteria       Nullable[[]Criterion] `json:"criteria,omitzero"`
	Paused         *bool                 `json:"paused,omitempty"`
	Backfill       *int                  `json:"backfill,omitempty"`
}

// UnmarshalJSON implements json.Unmarshaler. A body that is not a JSON object, or a field of
// the wrong type, is an *InvalidError naming the field ("sample_rate: must be a number").
func (r *JudgeRequest) UnmarshalJSON(b []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil || raw == nil {
		return &InvalidError{Message: "the body must be a JSON object"}
	}
	var out JudgeRequest
	fields := []struct {
		name string
		dst  any
		set  *bool // for Nullable fields: present, as a value or null
	}{
		{"name", &out.Name, nil},
		{"template", &out.Template, nil},
		{"evaluation_type", &out.EvaluationType, nil},
		{"score_min", &out.ScoreMin, nil},
		{"score_max", &out.ScoreMax, nil},
		{"pass_threshold", &out.PassThreshold, nil},
		{"sample_rate", &out.SampleRate, nil},
		{"temperature", &out.Temperature, nil},
		{"model", &out.Model.Value, &out.Model.Set},
		{"tag_filter", &out.TagFilter.Value, &out.TagFilter.Set},
		{"target_prompt", &out.TargetPrompt.Value, &out.TargetPrompt.Set},
		{"criteria", &out.Criteria.Value, &out.Criteria.Set},
		{"paused", &out.Paused, nil},
		{"backfill", &out.Backfill, nil},
	}
	for _, f := range fields {
		v, ok := raw[f.name]
		if !ok {
			continue
		}
		if f.set != nil {
			*f.set = true
		}
		if string(v) == "null" {
			continue
		}
		if err := json.Unmarshal(v, f.dst); err != nil {
			return &InvalidError{Message: f.name + ": " + typeError(err)}
		}
	}
	*r = out
	return nil
}

// typeError words a json.Unmarshal failure of one field for the client.
func typeError(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		if te.Field != "" {
			return fmt.Sprintf("%s must be %s", te.Field, kindName(te.Type.Kind().String()))
		}
		return "must be " + kindName(te.Type.Kind().String())
	}
	return "invalid value"
}

func kindName(kind string) string {
	switch kind {
	case "ptr", "struct", "map":
		return "an object"
	case "slice":
		return "an array"
	case "float64", "int":
		return "a number"
	case "bool":
		return "a boolean"
	}
	return "a " + kind
}

// JudgeCriteria answers GET /projects/{project_id}/judges/{judge_id}/criteria (spec §2.10,
// §4.7). Criteria is always an array.
type JudgeCriteria struct {
	JudgeID        string      `json:"judge_id"`
	EvaluationType string      `json:"evaluation_type"`
	ScoreMin       *float64    `json:"score_min"`
	ScoreMax       *float64    `json:"score_max"`
	PassThreshold  *float64    `json:"pass_threshold"`
	Criteria       []Criterion `json:"criteria"`
}

// Evaluation is one judge's verdict on one span as every evaluation endpoint answers it: the
// fields of spec §2.9, with judge_name and evaluation_type of span-level listings, the judge id
// and whether someone gave calibration feedback on it. Score, ScoreMin, ScoreMax and
// PassThreshold are null for binary judges; CriteriaScores is always an object. Unified
// feedback embeds it in JudgeEvaluationItem (spec §2.5).
type Evaluation struct {
	ID                   string   `json:"id"`
	SpanID               string   `json:"span_id"`
	JudgeID              string   `json:"judge_id"`
	JudgeName            string   `json:"judge_name"`
	EvaluationType       string   `json:"evaluation_type"`
	EvaluationResult     bool     `json:"evaluation_result"`
	EvaluationReason     string   `json:"evaluation_reason"`
	ConfidenceScore      *float64 `json:"confidence_score"`
	Score                *float64 `json:"score"`
	ScoreMin             *float64 `json:"score_min"`
	ScoreMax             *float64 `json:"score_max"`
	PassThreshold        *float64 `json:"pass_threshold"`
	ModelUsed            string   `json:"model_used"`
	EvaluationDurationMS *float64 `json:"evaluation_duration_ms"`
	// Cost is the judge model call's cost in USD; null when unknown. Not in spec §2.9: an
	// addition SDKs ignore.
	Cost            *float64                  `json:"cost"`
	CriteriaScores  map[string]CriterionScore `json:"criteria_scores"`
	HasUserFeedback bool                      `json:"has_user_feedback"`
	CreatedAt       time.Time                 `json:"created_at"`
	UpdatedAt       time.Time                 `json:"updated_at"`
}

// CriterionScore is a judge's verdict on one criterion (spec §2.5 criteria_scores; COMPAT.md
// "Feedback and judges").
type CriterionScore struct {
	Score  *float64 `json:"score"`
	Reason string   `json:"reason,omitempty"`
}

// EvaluationRequest is one element of the body of POST
// /projects/{project_id}/judges/{judge_id}/evaluations, a JSON array of at most 100: a verdict
// computed by an evaluator that runs elsewhere. A binary judge needs EvaluationResult; a
// scored judge needs Score and derives the result from its pass threshold when none is given.
// CreatedAt defaults to the time of the request.
type EvaluationRequest struct {
	SpanID               string                    `json:"span_id"`
	EvaluationResult     *bool                     `json:"evaluation_result"`
	EvaluationReason     string                    `json:"evaluation_reason"`
	ConfidenceScore      *float64                  `json:"confidence_score"`
	Score                *float64                  `json:"score"`
	ModelUsed            string                    `json:"model_used"`
	EvaluationDurationMS *float64                  `json:"evaluation_duration_ms"`
	Cost                 *float64                  `json:"cost"`
	CriteriaScores       map[string]CriterionScore `json:"criteria_scores"`
	CreatedAt            *time.Time                `json:"created_at"`
}

// RecordEvaluationsResult answers POST /projects/{project_id}/judges/{judge_id}/evaluations:
// the evaluations as stored, in the order given. Count is how many were recorded; Evaluations
// holds as many of them as fit MaxAnswerBytes (OmittedHeader counts the rest).
type RecordEvaluationsResult struct {
	Count       int          `json:"count"`
	Evaluations []Evaluation `json:"evaluations"`
}

// EvaluationPage answers GET /projects/{project_id}/judges/{judge_id}/evaluations (spec §4.7):
// one page, newest first, and Total, the number of evaluations matching the filters. Paging
// ends with a page shorter than Limit. A page that would pass MaxAnswerBytes holds fewer
// evaluations, Limit their number, and NextOffsetHeader says where the rest starts.
type EvaluationPage struct {
	Evaluations []Evaluation `json:"evaluations"`
	Limit       int          `json:"limit"`
	Offset      int          `json:"offset"`
	Total       int          `json:"total"`
}

// SpanEvaluations answers GET /projects/{project_id}/spans/{span_id}/evaluations (spec §4.7):
// every judge's evaluation of the span, as many as fit MaxAnswerBytes from ?offset=
// (NextOffsetHeader says where the rest starts).
type SpanEvaluations struct {
	Evaluations []Evaluation `json:"evaluations"`
	SpanID      string       `json:"span_id"`
}

// JudgePerformance answers GET /projects/{project_id}/judges/{judge_id}/performance: how far
// the judge agrees with the people who calibrated its evaluations (calibration feedback, with
// judge_id) submitted from StartDate to EndDate. N counts those calibrations; Verdict compares
// pass/fail for every judge; Score compares scores and is null for a binary judge; Criteria
// has one entry per criterion with comparable calibrations (always an array). Every rate is
// null when there is nothing to compute it from, never 0. The spec does not define this
// endpoint; the fields are Plume's.
type JudgePerformance struct {
	JudgeID        string               `json:"judge_id"`
	EvaluationType string               `json:"evaluation_type"`
	StartDate      time.Time            `json:"start_date"`
	EndDate        time.Time            `json:"end_date"`
	N              int                  `json:"n"`
	Verdict        VerdictAgreement     `json:"verdict"`
	Score          *ScoreAgreement      `json:"score"`
	Criteria       []CriterionAgreement `json:"criteria"`
}

// VerdictAgreement is the judge's pass/fail against the person's, pass being the positive
// class, over the N calibrations whose human verdict is known: Accuracy (TP+TN)/N, Cohen's
// Kappa (null when N is 0 or when judge and people put everything in one class),
// TruePositiveRate TP/(TP+FN) (null without a human pass) and TrueNegativeRate TN/(TN+FP)
// (null without a human fail).
type VerdictAgreement struct {
	N                int           `json:"n"`
	Accuracy         *float64      `json:"accuracy"`
	Kappa            *float64      `json:"kappa"`
	TruePositiveRate *float64      `json:"true_positive_rate"`
	TrueNegativeRate *float64      `json:"true_negative_rate"`
	Counts           VerdictCounts `json:"counts"`
}

// VerdictCounts is the confusion matrix of a VerdictAgreement: true_positive both pass,
// false_positive only the judge passes, false_negative only the person passes, true_negative
// both fail.
type VerdictCounts struct {
	TruePositive  int `json:"true_positive"`
	FalsePositive int `json:"false_positive"`
	FalseNegative int `json:"false_negative"`
	TrueNegative  int `json:"true_negative"`
}

// ScoreAgreement is the judge's scores against the people's, over the N calibrations of a
// scored evaluation: MeanAbsoluteError over those with an expected score (null without one),
// and the shares of all N that were too high and too low (by the expected score, else by the
// person's score_direction; null when N is 0).
type ScoreAgreement struct {
	N                 int         `json:"n"`
	MeanAbsoluteError *float64    `json:"mean_absolute_error"`
	TooHighShare      *float64    `json:"too_high_share"`
	TooLowShare       *float64    `json:"too_low_share"`
	Counts            ScoreCounts `json:"counts"`
}

// ScoreCounts are the counts behind a ScoreAgreement.
type ScoreCounts struct {
	WithExpectedScore int `json:"with_expected_score"`
	TooHigh           int `json:"too_high"`
	TooLow            int `json:"too_low"`
}

// CriterionAgreement is the agreement on one criterion of the judge, over the calibrations
// that gave an expected score for it.
type CriterionAgreement struct {
	Key     string           `json:"key"`
	Verdict VerdictAgreement `json:"verdict"`
	Score   ScoreAgreement   `json:"score"`
}

// BackfillRequest is the body of POST /projects/{project_id}/judges/{judge_id}/backfill: how
// many of the most recent spans the judge takes to evaluate (1 to 10,000). Count absent (or
// no body) takes the judge's backfill setting.
type BackfillRequest struct {
	Count *int `json:"count"`
}

// Backfill answers POST .../backfill: the request, queued for the judge runner, which
// evaluates the spans within minutes (those evaluated already for the same content are
// skipped). Status is BackfillQueued.
type Backfill struct {
	JudgeID     string    `json:"judge_id"`
	Count       int       `json:"count"`
	Status      string    `json:"status"`
	RequestedAt time.Time `json:"requested_at"`
}

// BackfillQueued is the status of an accepted backfill.
const BackfillQueued = "queued"

// JudgeTemplateVersion is one of a judge's templates, as GET
// /projects/{project_id}/judges/{judge_id}/versions lists them (newest first): the one it was
// created with, and each that replaced it, by an edit (PATCH) or the deploy of an optimization
// run (run_id).
type JudgeTemplateVersion struct {
	Version   int       `json:"version"`
	Template  string    `json:"template"`
	Source    string    `json:"source"`
	RunID     *string   `json:"run_id"`
	CreatedAt time.Time `json:"created_at"`
	CreatedBy string    `json:"created_by"`
}

// JudgeTemplateVersions answers GET /projects/{project_id}/judges/{judge_id}/versions, as many
// as fit MaxAnswerBytes from ?offset= (NextOffsetHeader says where the rest starts).
type JudgeTemplateVersions struct {
	JudgeID  string                 `json:"judge_id"`
	Versions []JudgeTemplateVersion `json:"versions"`
}
