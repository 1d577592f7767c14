package feedback

import (
	"encoding/json"
	"time"

	"github.com/plumehq/plume/shared/auth"
	"github.com/plumehq/plume/shared/judge"
)

// FeedbackJSON is a stored feedback record as the submission endpoint returns it: the spec's
// fields (spec §4.2) and the record's linkage and authorship.
type FeedbackJSON struct {
	ID               string                             `json:"id"`
	CompletionID     string                             `json:"completion_id"`
	PromptID         string                             `json:"prompt_id"`
	PromptSlug       string                             `json:"prompt_slug"`
	PromptVersionID  *string                            `json:"prompt_version_id"`
	ProjectID        string                             `json:"project_id"`
	TraceID          *string                            `json:"trace_id"`
	ThumbsUp         bool                               `json:"thumbs_up"`
	Reason           *string                            `json:"reason"`
	ExpectedOutput   *string                            `json:"expected_output"`
	Metadata         json.RawMessage                    `json:"metadata"`
	JudgeID          *string                            `json:"judge_id"`
	ExpectedScore    *float64                           `json:"expected_score"`
	ScoreDirection   *string                            `json:"score_direction"`
	CriteriaFeedback map[string]judge.CriterionFeedback `json:"criteria_feedback"`
	SourceType       string                             `json:"source_type"`
	CreatedBy        auth.User                          `json:"created_by"`
	CreatedAt        time.Time                          `json:"created_at"`
	UpdatedAt        time.Time                          `json:"updated_at"`
}

// JSON returns the API form of f.
func (f Feedback) JSON() FeedbackJSON {
	out := FeedbackJSON{
		ID: f.ID, CompletionID: f.SpanID, PromptID: f.PromptID, PromptSlug: f.PromptSlug,
		PromptVersionID: nonEmpty(f.PromptVersionID), ProjectID: f.ProjectID, TraceID: nonEmpty(f.TraceID),
		ThumbsUp: f.ThumbsUp, Reason: f.Reason, ExpectedOutput: f.ExpectedOutput, Metadata: f.Metadata,
		SourceType: f.SourceType(), CreatedBy: f.CreatedBy, CreatedAt: f.CreatedAt, UpdatedAt: f.UpdatedAt,
	}
	if out.Metadata == nil {
		out.Metadata = json.RawMessage("null")
	}
	if c := f.Calibration; c != nil {
		out.JudgeID, out.ExpectedScore, out.ScoreDirection = &c.JudgeID, c.ExpectedScore, nonEmpty(c.ScoreDirection)
		out.CriteriaFeedback = c.CriteriaFeedback
	}
	return out
}

// Item kinds of unified feedback.
const (
	KindHuman = "human_feedback"
	KindJudge = "judge_evaluation"
)

// HumanItemJSON is a human feedback item of unified feedback (spec §2.5).
type HumanItemJSON struct {
	Kind            string    `json:"kind"`
	ID              string    `json:"id"`
	SpanID          string    `json:"span_id"`
	ThumbsUp        bool      `json:"thumbs_up"`
	Reason          string    `json:"reason"`
	ExpectedOutput  *string   `json:"expected_output,omitempty"`
	CreatedAt       time.Time `json:"created_at"`
	CreatedBy       auth.User `json:"created_by"`
	SourceType      string    `json:"source_type"`
	JudgeID         *string   `json:"judge_id,omitempty"`
	PromptVersionID *string   `json:"prompt_version_id"`
}

// JudgeItemJSON is a judge evaluation item of unified feedback (spec §2.5): the evaluation with
// its kind and automation_id (the judge's id).
type JudgeItemJSON struct {
	Kind         string `json:"kind"`
	AutomationID string `json:"automation_id"`
	judge.EvaluationJSON
}

// UnifiedJSON is the unified feedback response (spec §2.5).
type UnifiedJSON struct {
	EntityType string      `json:"entity_type"`
	EntityID   string      `json:"entity_id"`
	Summary    SummaryJSON `json:"summary"`
	Items      []any       `json:"items"`
}

// SummaryJSON counts the items of unified feedback.
type SummaryJSON struct {
	Total                int `json:"total"`
	HumanFeedbackCount   int `json:"human_feedback_count"`
	JudgeEvaluationCount int `json:"judge_evaluation_count"`
}

// JSON returns the API form of u.
func (u Unified) JSON() UnifiedJSON {
	out := UnifiedJSON{
		EntityType: u.EntityType, EntityID: u.EntityID, Items: make([]any, 0, len(u.Items)),
		Summary: SummaryJSON{Total: len(u.Items), HumanFeedbackCount: u.Human, JudgeEvaluationCount: u.Judge},
	}
	for _, it := range u.Items {
		if f := it.Feedback; f != nil {
			h := HumanItemJSON{
				Kind: KindHuman, ID: f.ID, SpanID: f.SpanID, ThumbsUp: f.ThumbsUp, ExpectedOutput: f.ExpectedOutput,
				CreatedAt: f.CreatedAt, CreatedBy: f.CreatedBy, SourceType: f.SourceType(), PromptVersionID: nonEmpty(f.PromptVersionID),
			}
			if f.Reason != nil {
				h.Reason = *f.Reason
			}
			if f.Calibration != nil {
				h.JudgeID = &f.Calibration.JudgeID
			}
			out.Items = append(out.Items, h)
			continue
		}
		e := it.Evaluation
		out.Items = append(out.Items, JudgeItemJSON{Kind: KindJudge, AutomationID: e.JudgeID, EvaluationJSON: e.JSON()})
	}
	return out
}

// LinkJSON is a feedback link as the API shows it; URL is set only in the creation response,
// the one time the token is known.
type LinkJSON struct {
	ID         string     `json:"id"`
	URL        string     `json:"url,omitempty"`
	PromptSlug string     `json:"prompt_slug"`
	LinkType   string     `json:"link_type"`
	ProjectID  string     `json:"project_id"`
	ExpiresAt  time.Time  `json:"expires_at"`
	CreatedAt  time.Time  `json:"created_at"`
	RevokedAt  *time.Time `json:"revoked_at"`
	CreatedBy  auth.User  `json:"created_by"`
	// Status is "active", "expired" or "revoked".
	Status string `json:"status"`
}

// JSON returns the API form of l at now, with url when it is known.
func (l Link) JSON(url string, now time.Time) LinkJSON {
	status := "active"
	switch {
	case l.RevokedAt != nil:
		status = "revoked"
	case !now.Before(l.ExpiresAt):
		status = "expired"
	}
	return LinkJSON{
		ID: l.ID, URL: url, PromptSlug: l.PromptSlug, LinkType: l.LinkType, ProjectID: l.ProjectID,
		ExpiresAt: l.ExpiresAt, CreatedAt: l.CreatedAt, RevokedAt: l.RevokedAt, CreatedBy: l.CreatedBy, Status: status,
	}
}

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
