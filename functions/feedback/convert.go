package feedback

import (
	"encoding/json"
	"time"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/functions/judges"
	"github.com/plumehq/plume/shared/auth"
	"github.com/plumehq/plume/shared/feedback"
	"github.com/plumehq/plume/shared/judge"
)

// This file converts between the feedback domain and its wire form in package api.

// toInput is the domain form of a feedback submission; absent fields stay nil (a present but
// empty criteria_feedback is not absent: it needs judge_id).
func toInput(r api.FeedbackRequest) feedback.Input {
	in := feedback.Input{
		ThumbsUp: r.ThumbsUp, Reason: r.Reason, ExpectedOutput: r.ExpectedOutput, Metadata: r.Metadata,
		JudgeID: r.JudgeID, ExpectedScore: r.ExpectedScore, ScoreDirection: r.ScoreDirection,
	}
	if r.CriteriaFeedback != nil {
		in.CriteriaFeedback = make(map[string]judge.CriterionFeedback, len(r.CriteriaFeedback))
		for k, c := range r.CriteriaFeedback {
			in.CriteriaFeedback[k] = judge.CriterionFeedback(c)
		}
	}
	return in
}

// toLinkInput is the domain form of a link creation.
func toLinkInput(r api.LinkRequest) feedback.LinkInput {
	return feedback.LinkInput{PromptSlug: r.PromptSlug, LinkType: r.LinkType, ExpiresInHours: r.ExpiresInHours}
}

// toFeedback is the API form of f; metadata not given is null.
func toFeedback(f feedback.Feedback) api.Feedback {
	out := api.Feedback{
		ID: f.ID, CompletionID: f.SpanID, PromptID: f.PromptID, PromptSlug: f.PromptSlug,
		PromptVersionID: nonEmpty(f.PromptVersionID), ProjectID: f.ProjectID, TraceID: nonEmpty(f.TraceID),
		ThumbsUp: f.ThumbsUp, Reason: f.Reason, ExpectedOutput: f.ExpectedOutput, Metadata: f.Metadata,
		SourceType: f.SourceType(), CreatedBy: toUser(f.CreatedBy), CreatedAt: f.CreatedAt, UpdatedAt: f.UpdatedAt,
	}
	if out.Metadata == nil {
		out.Metadata = json.RawMessage("null")
	}
	if c := f.Calibration; c != nil {
		out.JudgeID, out.ExpectedScore, out.ScoreDirection = &c.JudgeID, c.ExpectedScore, nonEmpty(c.ScoreDirection)
		if c.CriteriaFeedback != nil {
			out.CriteriaFeedback = make(map[string]api.CriterionFeedback, len(c.CriteriaFeedback))
			for k, v := range c.CriteriaFeedback {
				out.CriteriaFeedback[k] = api.CriterionFeedback(v)
			}
		}
	}
	return out
}

// toUnified is the API form of u (spec §2.5).
func toUnified(u feedback.Unified) api.UnifiedFeedback {
	out := api.UnifiedFeedback{
		EntityType: u.EntityType, EntityID: u.EntityID, Items: make([]api.FeedbackItem, 0, len(u.Items)),
		Summary: api.FeedbackSummary{Total: len(u.Items), HumanFeedbackCount: u.Human, JudgeEvaluationCount: u.Judge},
	}
	for _, it := range u.Items {
		if f := it.Feedback; f != nil {
			h := &api.HumanFeedbackItem{
				Kind: api.KindHumanFeedback, ID: f.ID, SpanID: f.SpanID, ThumbsUp: f.ThumbsUp, Reason: f.Reason, ExpectedOutput: f.ExpectedOutput,
				CreatedAt: f.CreatedAt, CreatedBy: toUser(f.CreatedBy), SourceType: f.SourceType(), PromptVersionID: nonEmpty(f.PromptVersionID),
			}
			if f.Calibration != nil {
				h.JudgeID = &f.Calibration.JudgeID
			}
			out.Items = append(out.Items, api.FeedbackItem{Human: h})
			continue
		}
		e := it.Evaluation
		out.Items = append(out.Items, api.FeedbackItem{Judge: &api.JudgeEvaluationItem{
			Kind: api.KindJudgeEvaluation, AutomationID: e.JudgeID, Evaluation: judges.EvaluationOf(*e),
		}})
	}
	return out
}

// toLink is the API form of l at now, with url when it is known (at creation only).
func toLink(l feedback.Link, url string, now time.Time) api.Link {
	status := api.LinkActive
	switch {
	case l.RevokedAt != nil:
		status = api.LinkRevoked
	case !now.Before(l.ExpiresAt):
		status = api.LinkExpired
	}
	return api.Link{
		ID: l.ID, URL: url, PromptSlug: l.PromptSlug, LinkType: l.LinkType, ProjectID: l.ProjectID,
		ExpiresAt: l.ExpiresAt, CreatedAt: l.CreatedAt, RevokedAt: l.RevokedAt, CreatedBy: toUser(l.CreatedBy), Status: status,
	}
}

func toUser(u auth.User) api.User { return api.User{ID: u.ID, Email: u.Email, Name: u.Name} }

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
