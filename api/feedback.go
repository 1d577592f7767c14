package api

import (
	"bytes"
	"encoding/json"
	"time"
)

// FeedbackRequest is the body of POST /v1/prompts/{slug}/completions/{completion_id}/feedback
// (spec §2.4, §4.2): ThumbsUp is required. With JudgeID the feedback is about that judge's
// evaluation of the completion (calibration), and ExpectedScore, ScoreDirection and
// CriteriaFeedback may be given; without it they are an error. Metadata is an object or null.
type FeedbackRequest struct {
	ThumbsUp         *bool                        `json:"thumbs_up"`
	Reason           *string                      `json:"reason"`
	ExpectedOutput   *string                      `json:"expected_output"`
	Metadata         json.RawMessage              `json:"metadata"`
	JudgeID          *string                      `json:"judge_id"`
	ExpectedScore    *float64                     `json:"expected_score"`
	ScoreDirection   *string                      `json:"score_direction"`
	CriteriaFeedback map[string]CriterionFeedback `json:"criteria_feedback"`
}

// Score directions of calibration feedback (spec §2.4).
const (
	TooHigh = "too_high"
	TooLow  = "too_low"
)

// CriterionFeedback corrects a judge's verdict on one criterion (spec §2.4 criteria_feedback).
type CriterionFeedback struct {
	ExpectedScore *float64 `json:"expected_score,omitempty"`
	Reason        string   `json:"reason,omitempty"`
}

// Source types of human feedback (spec §2.5): plain feedback on a completion, or calibration
// feedback on a judge's evaluation of it.
const (
	SourceHuman = "human"
	SourceJudge = "judge"
)

// Feedback is a stored feedback record as the submission endpoint answers it: the fields of
// spec §4.2 (completion_id is the span id) and the record's linkage and authorship. A field
// not given or not known is null; JudgeID, ExpectedScore, ScoreDirection and CriteriaFeedback
// are set for calibration feedback only (SourceType SourceJudge).
type Feedback struct {
	ID               string                       `json:"id"`
	CompletionID     string                       `json:"completion_id"`
	PromptID         string                       `json:"prompt_id"`
	PromptSlug       string                       `json:"prompt_slug"`
	PromptVersionID  *string                      `json:"prompt_version_id"`
	ProjectID        string                       `json:"project_id"`
	TraceID          *string                      `json:"trace_id"`
	ThumbsUp         bool                         `json:"thumbs_up"`
	Reason           *string                      `json:"reason"`
	ExpectedOutput   *string                      `json:"expected_output"`
	Metadata         json.RawMessage              `json:"metadata"`
	JudgeID          *string                      `json:"judge_id"`
	ExpectedScore    *float64                     `json:"expected_score"`
	ScoreDirection   *string                      `json:"score_direction"`
	CriteriaFeedback map[string]CriterionFeedback `json:"criteria_feedback"`
	SourceType       string                       `json:"source_type"`
	CreatedBy        User                         `json:"created_by"`
	CreatedAt        time.Time                    `json:"created_at"`
	UpdatedAt        time.Time                    `json:"updated_at"`
}

// Entity types of unified feedback (spec §2.5, §4.2).
const (
	EntitySpan    = "span"
	EntityTrace   = "trace"
	EntitySession = "session"
)

// Item kinds of unified feedback (spec §2.5).
const (
	KindHumanFeedback   = "human_feedback"
	KindJudgeEvaluation = "judge_evaluation"
)

// UnifiedFeedback answers GET /projects/{project_id}/feedback/{entity_type}/{entity_id} (spec
// §2.5, §4.2): the human feedback and judge evaluations of a span, or of every span of a trace
// or session, ordered by creation time. Items is always an array: those that fit MaxAnswerBytes
// from ?offset= (NextOffsetHeader says where the rest starts); Summary counts them all.
type UnifiedFeedback struct {
	EntityType string          `json:"entity_type"`
	EntityID   string          `json:"entity_id"`
	Summary    FeedbackSummary `json:"summary"`
	Items      []FeedbackItem  `json:"items"`
}

// FeedbackSummary counts the items of unified feedback (spec §2.5).
type FeedbackSummary struct {
	Total                int `json:"total"`
	HumanFeedbackCount   int `json:"human_feedback_count"`
	JudgeEvaluationCount int `json:"judge_evaluation_count"`
}

// FeedbackItem is one item of unified feedback: exactly one of Human and Judge is set. It
// encodes as that item, whose kind field tells them apart.
type FeedbackItem struct {
	Human *HumanFeedbackItem
	Judge *JudgeEvaluationItem
}

// HumanFeedbackItem is a human feedback item of unified feedback (spec §2.5), with the judge
// of calibration feedback and the prompt version of the completion. Kind is
// KindHumanFeedback. Reason is null when none was given, as in Feedback: "" is a reason given
// empty.
type HumanFeedbackItem struct {
	Kind            string    `json:"kind"`
	ID              string    `json:"id"`
	SpanID          string    `json:"span_id"`
	ThumbsUp        bool      `json:"thumbs_up"`
	Reason          *string   `json:"reason"`
	ExpectedOutput  *string   `json:"expected_output,omitempty"`
	CreatedAt       time.Time `json:"created_at"`
	CreatedBy       User      `json:"created_by"`
	SourceType      string    `json:"source_type"`
	JudgeID         *string   `json:"judge_id,omitempty"`
	PromptVersionID *string   `json:"prompt_version_id"`
}

// JudgeEvaluationItem is a judge evaluation item of unified feedback (spec §2.5): the
// evaluation with its kind (KindJudgeEvaluation) and automation_id, the judge's id.
type JudgeEvaluationItem struct {
	Kind         string `json:"kind"`
	AutomationID string `json:"automation_id"`
	Evaluation
}

// MarshalJSON implements json.Marshaler: the item that is set, null when none is. It does not
// escape HTML characters itself, so that an encoder that does not either (as the server's)
// writes them as they are.
func (it FeedbackItem) MarshalJSON() ([]byte, error) {
	var v any
	switch {
	case it.Human != nil:
		v = it.Human
	case it.Judge != nil:
		v = it.Judge
	default:
		return []byte("null"), nil
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// UnmarshalJSON implements json.Unmarshaler, choosing the item by its kind; an unknown kind is
// an *InvalidError.
func (it *FeedbackItem) UnmarshalJSON(b []byte) error {
	var head struct {
		Kind string `json:"kind"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return err
	}
	*it = FeedbackItem{}
	switch head.Kind {
	case KindHumanFeedback:
		it.Human = new(HumanFeedbackItem)
		return json.Unmarshal(b, it.Human)
	case KindJudgeEvaluation:
		it.Judge = new(JudgeEvaluationItem)
		return json.Unmarshal(b, it.Judge)
	}
	return &InvalidError{Message: "unknown feedback item kind " + `"` + head.Kind + `"`}
}

// LinkTypeCompletion is the one feedback link type (spec §2.11): feedback on a prompt's
// completions.
const LinkTypeCompletion = "prompt_completion"

// Feedback link statuses.
const (
	LinkActive  = "active"
	LinkExpired = "expired"
	LinkRevoked = "revoked"
)

// LinkRequest is the body of POST /feedback-links (spec §2.11, §4.2): a link for the key's
// project. ExpiresInHours overrides the default lifetime of 7 days, up to 90 days.
type LinkRequest struct {
	PromptSlug     string   `json:"prompt_slug"`
	LinkType       string   `json:"link_type"`
	ExpiresInHours *float64 `json:"expires_in_hours"`
}

// Link is a feedback link as POST /feedback-links, GET /feedback-links and DELETE
// /feedback-links/{link_id} answer it. The spec shows only the URL (§4.2); URL is set only in
// the creation answer, the one time its token is known. Status is LinkActive, LinkExpired or
// LinkRevoked.
type Link struct {
	ID         string     `json:"id"`
	URL        string     `json:"url,omitempty"`
	PromptSlug string     `json:"prompt_slug"`
	LinkType   string     `json:"link_type"`
	ProjectID  string     `json:"project_id"`
	ExpiresAt  time.Time  `json:"expires_at"`
	CreatedAt  time.Time  `json:"created_at"`
	RevokedAt  *time.Time `json:"revoked_at"`
	CreatedBy  User       `json:"created_by"`
	Status     string     `json:"status"`
}

// LinkList answers GET /feedback-links: the project's links, newest first, without URLs, as
// many as fit MaxAnswerBytes from ?offset= (NextOffsetHeader says where the rest starts);
// Count is how many this answer holds. Its fields are in alphabetical order, as the first
// servers wrote them.
type LinkList struct {
	Count int    `json:"count"`
	Links []Link `json:"links"`
}
