package feedback

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/plumehq/plume/shared/auth"
	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/judge"
)

// Limits of a feedback record.
const (
	MaxReasonBytes         = 16 << 10
	MaxExpectedOutputBytes = 64 << 10
	MaxMetadataBytes       = 16 << 10
	MaxCriteriaFeedback    = judge.MaxCriteria
	maxCompletionIDLen     = 128
)

// Source types of human feedback (spec §2.5): plain feedback on a completion, or calibration
// feedback on a judge's evaluation of it.
const (
	SourceHuman = "human"
	SourceJudge = "judge"
)

// Feedback is one person's verdict on one completion (an llm span): at most one record per
// completion and user, and one more per judge the user calibrates on that completion.
type Feedback struct {
	ID              string
	ProjectID       string
	SpanID          string
	TraceID         string // "" until the span is known
	PromptID        string
	PromptSlug      string
	PromptVersionID string
	ThumbsUp        bool
	Reason          *string
	ExpectedOutput  *string
	Metadata        json.RawMessage
	Calibration     *judge.Calibration
	CreatedBy       auth.User
	// LinkID names the feedback link the record was given through, "" for API keys.
	LinkID    string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// SourceType is SourceJudge for calibration feedback, else SourceHuman.
func (f Feedback) SourceType() string {
	if f.Calibration != nil {
		return SourceJudge
	}
	return SourceHuman
}

// Input is a feedback submission (spec §2.4): the body of POST
// /v1/prompts/{slug}/completions/{completion_id}/feedback, or the form of a feedback-link page.
// A nil field was not given; Metadata is JSON text.
type Input struct {
	ThumbsUp         *bool
	Reason           *string
	ExpectedOutput   *string
	Metadata         json.RawMessage
	JudgeID          *string
	ExpectedScore    *float64
	ScoreDirection   *string
	CriteriaFeedback map[string]judge.CriterionFeedback
}

// check validates what can be checked without the judge.
func (in Input) check() error {
	switch {
	case in.ThumbsUp == nil:
		return errs.Invalid("thumbs_up is required (true or false)")
	case in.Reason != nil && len(*in.Reason) > MaxReasonBytes:
		return errs.Invalid("reason: at most %d bytes", MaxReasonBytes)
	case in.ExpectedOutput != nil && len(*in.ExpectedOutput) > MaxExpectedOutputBytes:
		return errs.Invalid("expected_output: at most %d bytes", MaxExpectedOutputBytes)
	case len(in.Metadata) > MaxMetadataBytes:
		return errs.Invalid("metadata: at most %d bytes of JSON", MaxMetadataBytes)
	case len(in.CriteriaFeedback) > MaxCriteriaFeedback:
		return errs.Invalid("criteria_feedback: at most %d criteria", MaxCriteriaFeedback)
	}
	if m := bytes.TrimSpace(in.Metadata); len(m) > 0 && string(m) != "null" && m[0] != '{' {
		return errs.Invalid("metadata must be a JSON object")
	}
	if in.judgeID() == "" {
		for _, f := range []struct {
			name string
			set  bool
		}{{"expected_score", in.ExpectedScore != nil}, {"score_direction", in.ScoreDirection != nil}, {"criteria_feedback", in.CriteriaFeedback != nil}} {
			if f.set {
				return errs.Invalid("%s is feedback on a judge's evaluation and needs judge_id", f.name)
			}
		}
	}
	return nil
}

func (in Input) judgeID() string {
	if in.JudgeID == nil {
		return ""
	}
	return strings.TrimSpace(*in.JudgeID)
}

// Target is what a feedback write is about, as the store finds it: the prompt, the span when it
// is already ingested, and the judge of calibration feedback.
type Target struct {
	PromptID string
	// Span is nil when the completion has not been ingested (yet).
	Span  *SpanRef
	Judge *judge.Judge
}

// SpanRef is what feedback needs of a span.
type SpanRef struct {
	TraceID         string
	PromptSlug      string
	PromptVersionID string
}

// Store keeps feedback records.
type Store interface {
	// Target reads the prompt (errs.CodeNotFound when it does not exist), the span (nil when
	// unknown) and, when judgeID is set, the judge (errs.CodeNotFound when unknown).
	Target(ctx context.Context, projectID, slug, spanID, judgeID string) (Target, error)
	// PutFeedback stores f, replacing the record of the same span, user and judge but keeping
	// its id and creation time; it returns the record as stored.
	PutFeedback(ctx context.Context, f Feedback) (Feedback, error)
	// FlagEvaluation records that judgeID's evaluation of a span has calibration feedback.
	FlagEvaluation(ctx context.Context, projectID, spanID, judgeID string) error
}

// Service takes feedback on completions.
type Service struct {
	store Store
	now   func() time.Time
}

// NewService returns a Service over store.
func NewService(store Store) *Service { return &Service{store: store, now: time.Now} }

// Submit stores user's feedback on completion completionID (an llm span id) of prompt slug.
// A second submission by the same user on the same completion (and judge) replaces the first.
// The prompt version is taken from the span's linkage when the span is known. Feedback through
// a link (linkID set) must be on an ingested completion of the link's prompt.
func (s *Service) Submit(ctx context.Context, projectID, slug, completionID string, user auth.User, linkID string, in Input) (Feedback, error) {
	completionID = strings.ToLower(strings.TrimSpace(completionID))
	if completionID == "" || len(completionID) > maxCompletionIDLen {
		return Feedback{}, errs.Invalid("completion_id must have 1 to %d characters", maxCompletionIDLen)
	}
	if err := in.check(); err != nil {
		return Feedback{}, err
	}
	t, err := s.store.Target(ctx, projectID, slug, completionID, in.judgeID())
	if err != nil {
		return Feedback{}, err
	}
	if linkID != "" && (t.Span == nil || t.Span.PromptSlug != slug) {
		// A link opens the completions of its prompt, nothing else of the project.
		return Feedback{}, errs.NotFound("completion %s is not a completion of prompt %q", completionID, slug)
	}
	now := s.now().UTC()
	f := Feedback{
		ProjectID: projectID, SpanID: completionID, PromptID: t.PromptID, PromptSlug: slug,
		ThumbsUp: *in.ThumbsUp, Reason: in.Reason, ExpectedOutput: in.ExpectedOutput,
		CreatedBy: user, LinkID: linkID, CreatedAt: now, UpdatedAt: now,
	}
	if m := bytes.TrimSpace(in.Metadata); len(m) > 0 && string(m) != "null" {
		f.Metadata = m
	}
	if t.Span != nil {
		f.TraceID, f.PromptVersionID = t.Span.TraceID, t.Span.PromptVersionID
	}
	if t.Judge != nil {
		c := judge.Calibration{JudgeID: t.Judge.ID, ExpectedScore: in.ExpectedScore, CriteriaFeedback: in.CriteriaFeedback}
		if in.ScoreDirection != nil {
			c.ScoreDirection = *in.ScoreDirection
		}
		if err := judge.CheckCalibration(*t.Judge, c); err != nil {
			return Feedback{}, err
		}
		f.Calibration = &c
	}
	stored, err := s.store.PutFeedback(ctx, f)
	if err != nil {
		return Feedback{}, err
	}
	if f.Calibration != nil {
		if err := s.store.FlagEvaluation(ctx, projectID, completionID, f.Calibration.JudgeID); err != nil {
			return Feedback{}, err
		}
	}
	return stored, nil
}

// Entity types of unified feedback (spec §2.5).
const (
	EntitySpan    = "span"
	EntityTrace   = "trace"
	EntitySession = "session"
)

// Item is one entry of unified feedback: human feedback or a judge's evaluation.
type Item struct {
	Feedback   *Feedback
	Evaluation *judge.Evaluation
}

// CreatedAt is when the item was first written.
func (it Item) CreatedAt() time.Time {
	if it.Feedback != nil {
		return it.Feedback.CreatedAt
	}
	return it.Evaluation.CreatedAt
}

// ID is the item's id: the order of items of one instant, span and kind, so that an answer
// paged by offset is the same list on every page.
func (it Item) ID() string {
	if it.Feedback != nil {
		return it.Feedback.ID
	}
	return it.Evaluation.ID
}

// SpanID is the span the item is about.
func (it Item) SpanID() string {
	if it.Feedback != nil {
		return it.Feedback.SpanID
	}
	return it.Evaluation.SpanID
}

// Reader reads the feedback and evaluations of a span, trace or session.
type Reader interface {
	// EntityFeedback returns every item of the entity's spans; errs.CodeNotFound when the entity
	// is unknown and has none.
	EntityFeedback(ctx context.Context, projectID, entityType, entityID string) ([]Item, error)
}

// Unified is the unified feedback of an entity (spec §2.5).
type Unified struct {
	EntityType string
	EntityID   string
	Items      []Item
	Human      int
	Judge      int
}

// ReadUnified returns the unified feedback of an entity, items ordered by creation time then
// span, human feedback before evaluations of the same instant, then id.
func ReadUnified(ctx context.Context, r Reader, projectID, entityType, entityID string) (Unified, error) {
	switch entityType {
	case EntitySpan, EntityTrace, EntitySession:
	default:
		return Unified{}, errs.Invalid("entity_type must be %q, %q or %q, not %q", EntitySpan, EntityTrace, EntitySession, entityType)
	}
	id := strings.ToLower(strings.TrimSpace(entityID))
	if id == "" || len(id) > maxCompletionIDLen {
		return Unified{}, errs.Invalid("entity_id must have 1 to %d characters", maxCompletionIDLen)
	}
	items, err := r.EntityFeedback(ctx, projectID, entityType, id)
	if err != nil {
		return Unified{}, err
	}
	u := Unified{EntityType: entityType, EntityID: id, Items: items}
	for _, it := range items {
		if it.Feedback != nil {
			u.Human++
		} else {
			u.Judge++
		}
	}
	slices.SortStableFunc(u.Items, func(a, b Item) int {
		return cmp.Or(a.CreatedAt().Compare(b.CreatedAt()), strings.Compare(a.SpanID(), b.SpanID()),
			cmp.Compare(kindRank(a), kindRank(b)), strings.Compare(a.ID(), b.ID()))
	})
	return u, nil
}

func kindRank(it Item) int {
	if it.Feedback != nil {
		return 0
	}
	return 1
}
