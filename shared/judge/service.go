package judge

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/plumehq/plume/shared/errs"
)

// Store keeps judges and their evaluations.
type Store interface {
	// CreateJudge stores a new judge.
	CreateJudge(ctx context.Context, j Judge) error
	// UpdateJudge writes j's definition (never its counters or linked prompts) if the stored
	// judge was last updated at prev; errs.CodeConflict otherwise.
	UpdateJudge(ctx context.Context, j Judge, prev time.Time) error
	// CreateJudge and UpdateJudge record a TemplateVersion when j.TemplateVersion is new:
	// TemplateVersions lists them, newest first.
	TemplateVersions(ctx context.Context, projectID, judgeID string) ([]TemplateVersion, error)
	// Judge returns a judge, or an errs.CodeNotFound error.
	Judge(ctx context.Context, projectID, judgeID string) (Judge, error)
	// Judges returns a project's judges, oldest first.
	Judges(ctx context.Context, projectID string) ([]Judge, error)
	// LinkPrompt links (or unlinks) a judge and an existing prompt and returns the judge.
	LinkPrompt(ctx context.Context, projectID, judgeID, slug string, link bool) (Judge, error)
	// PutEvaluations stores evaluations of j, each replacing j's earlier one of its span, and
	// keeps j's counters exact. Every span must exist (errs.CodeNotFound names one that does
	// not); it returns the evaluations as stored.
	PutEvaluations(ctx context.Context, j Judge, evs []Evaluation) ([]Evaluation, error)
	// Evaluations returns one page of a judge's evaluations, newest first, and the total.
	Evaluations(ctx context.Context, projectID, judgeID string, q Query) (Page, error)
	// SpanEvaluations returns every judge's evaluation of a span; errs.CodeNotFound when the
	// span is unknown.
	SpanEvaluations(ctx context.Context, projectID, spanID string) ([]Evaluation, error)
}

// Calibrations reads what people said about a judge's verdicts.
type Calibrations interface {
	// Calibrations returns the calibrated evaluations of a judge that q selects, newest
	// calibration first: each person's latest calibration feedback on an evaluation, with the
	// evaluation as it is now. Feedback on an evaluation that is not written (yet) is left out.
	// An unknown judge has none.
	Calibrations(ctx context.Context, projectID, judgeID string, q CalibrationQuery) ([]Pair, error)
}

// Service manages judges, records evaluations and measures judges against calibrations.
type Service struct {
	store        Store
	calibrations Calibrations
	backfills    Objects
	now          func() time.Time
}

// NewService returns a Service over store, measuring judges against calibrations (the
// feedback people gave on their verdicts, which the feedback store keeps).
func NewService(store Store, calibrations Calibrations) *Service {
	return &Service{store: store, calibrations: calibrations, now: time.Now}
}

// stamp is the time of a write: now, in UTC, at the microsecond the store keeps (shared/ddb
// stores judge and evaluation times as Unix microseconds), so that a write answers the time
// every later read answers.
func (s *Service) stamp() time.Time { return Stamp(s.now()) }

// Stamp is t in UTC at the store's resolution, one microsecond.
func Stamp(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

// maxUpdateAttempts bounds the read-modify-write retries of a judge update under contention.
const maxUpdateAttempts = 5

// Create validates spec and stores a new judge of projectID made by user; a judge created
// active with a backfill count asks for its backfill (WithBackfills).
func (s *Service) Create(ctx context.Context, projectID, user string, spec Spec) (Judge, error) {
	j, err := New(spec, projectID, uuid.NewString(), user, s.stamp())
	if err != nil {
		return Judge{}, err
	}
	j.TemplateVersion = 1
	if err := s.store.CreateJudge(ctx, j); err != nil {
		return Judge{}, err
	}
	s.backfillCreated(ctx, j, user)
	return j, nil
}

// Update applies a patch to a judge. Concurrent updates are serialised: a write based on a stale
// read is retried on the fresh judge.
func (s *Service) Update(ctx context.Context, projectID, judgeID, user string, spec Spec) (Judge, error) {
	for attempt := 1; ; attempt++ {
		cur, err := s.store.Judge(ctx, projectID, judgeID)
		if err != nil {
			return Judge{}, err
		}
		next, err := Patch(cur, spec, user, s.stamp())
		if err != nil {
			return Judge{}, err
		}
		if next.Template != cur.Template {
			next.TemplateVersion, next.TemplateRun = max(cur.TemplateVersion, 1)+1, spec.FromRun
		}
		err = s.store.UpdateJudge(ctx, next, cur.UpdatedAt)
		if err == nil {
			return next, nil
		}
		if !errs.Is(err, errs.CodeConflict) || attempt == maxUpdateAttempts {
			return Judge{}, err
		}
	}
}

// Performance measures a judge against the people who calibrated its evaluations, over the
// calibrations submitted within [start, end] (zero: open): the judge (errs.CodeNotFound when
// unknown) and Agreement over those calibrations.
func (s *Service) Performance(ctx context.Context, projectID, judgeID string, start, end time.Time) (Judge, Performance, error) {
	j, err := s.store.Judge(ctx, projectID, judgeID)
	if err != nil {
		return Judge{}, Performance{}, err
	}
	pairs, err := s.calibrations.Calibrations(ctx, projectID, j.ID, CalibrationQuery{Start: start, End: end})
	if err != nil {
		return Judge{}, Performance{}, err
	}
	return j, Agreement(j, pairs), nil
}

// Record validates and stores evaluations of a judge.
func (s *Service) Record(ctx context.Context, projectID, judgeID string, in []EvaluationInput) ([]Evaluation, error) {
	j, err := s.store.Judge(ctx, projectID, judgeID)
	if err != nil {
		return nil, err
	}
	evs, err := BuildEvaluations(j, in, s.stamp())
	if err != nil {
		return nil, err
	}
	return s.store.PutEvaluations(ctx, j, evs)
}
