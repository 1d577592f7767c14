package judge

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/plumehq/plume/shared/errs"
)

// BackfillRequest asks the judge runner for a judge's verdicts on the Count most recent spans
// it takes: spans that landed before the judge existed, while it was paused, or before its
// template changed (a new template re-evaluates nothing by itself). It is stored as an object
// under backfills/ (BackfillKey), whose Object Created event reaches the runner as a span
// batch's does: the same asynchronous retries and dead-letter queue, and no permission to
// invoke functions for the API.
type BackfillRequest struct {
	ProjectID   string    `json:"project_id"`
	JudgeID     string    `json:"judge_id"`
	Count       int       `json:"count"`
	RequestedAt time.Time `json:"requested_at"`
	RequestedBy string    `json:"requested_by,omitempty"`
}

// BackfillPrefix starts the key of every backfill request.
const BackfillPrefix = "backfills/"

// BackfillKey is a new key for a backfill request of judge judgeID of project projectID:
// backfills/project=<id>/<judge>/<uuid v7>.json.
func BackfillKey(projectID, judgeID string) string {
	return fmt.Sprintf("%sproject=%s/%s/%s.json", BackfillPrefix, projectID, judgeID, uuid.Must(uuid.NewV7()))
}

// ParseBackfillKey returns the project and judge of a backfill request's key; ok is false for
// a key that is not one.
func ParseBackfillKey(key string) (projectID, judgeID string, ok bool) {
	rest, found := strings.CutPrefix(key, BackfillPrefix+"project=")
	if !found {
		return "", "", false
	}
	parts := strings.Split(rest, "/")
	if len(parts) != 3 || parts[0] == "" || parts[1] == "" || !strings.HasSuffix(parts[2], ".json") {
		return "", "", false
	}
	return parts[0], parts[1], true
}

// Objects stores objects in the bucket (blob.Store): where backfill requests go.
type Objects interface {
	Put(ctx context.Context, key string, body []byte, contentType string) error
}

// WithBackfills makes the service store backfill requests in objects: on Backfill, and when a
// judge is created with a backfill count. Without it, Backfill is unavailable.
func (s *Service) WithBackfills(objects Objects) *Service {
	s.backfills = objects
	return s
}

// Backfill asks for judge judgeID's verdicts on the count most recent spans it takes (1 to
// MaxBackfill), for user. The request is queued, not run: the judge runner evaluates the spans
// within minutes, skipping those the judge has evaluated already for the same content.
// Errors: errs.NotFound for an unknown judge, errs.Invalid for a count out of range,
// errs.Conflict for a paused judge (which evaluates nothing), errs.Unavailable when backfills
// are not configured.
func (s *Service) Backfill(ctx context.Context, projectID, judgeID, user string, count int) (BackfillRequest, error) {
	if count < 1 || count > MaxBackfill {
		return BackfillRequest{}, errs.Invalid("count must be between 1 and %d", MaxBackfill)
	}
	j, err := s.store.Judge(ctx, projectID, judgeID)
	if err != nil {
		return BackfillRequest{}, err
	}
	if j.Paused {
		return BackfillRequest{}, errs.Conflict("judge %s is paused and evaluates nothing; resume it (paused: false) first", judgeID)
	}
	return s.requestBackfill(ctx, j, user, count)
}

// requestBackfill stores the backfill request of count spans for judge j.
func (s *Service) requestBackfill(ctx context.Context, j Judge, user string, count int) (BackfillRequest, error) {
	if s.backfills == nil {
		return BackfillRequest{}, errs.Unavailable("backfills are not available in this deployment")
	}
	req := BackfillRequest{ProjectID: j.ProjectID, JudgeID: j.ID, Count: count, RequestedAt: s.stamp(), RequestedBy: user}
	body, err := json.Marshal(req)
	if err != nil {
		return BackfillRequest{}, fmt.Errorf("encode backfill request: %w", err)
	}
	if err := s.backfills.Put(ctx, BackfillKey(j.ProjectID, j.ID), body, "application/json"); err != nil {
		return BackfillRequest{}, err
	}
	return req, nil
}

// backfillCreated requests the backfill a new judge asks for. The judge is stored already, so
// a failure is logged rather than returned: an error would make the client create the judge
// again; POST .../backfill asks again.
func (s *Service) backfillCreated(ctx context.Context, j Judge, user string) {
	if j.Backfill == 0 || j.Paused || s.backfills == nil {
		return
	}
	if _, err := s.requestBackfill(ctx, j, user, j.Backfill); err != nil {
		slog.ErrorContext(ctx, "judge created, its backfill not requested; POST .../backfill to ask again",
			"project_id", j.ProjectID, "judge_id", j.ID, "count", j.Backfill, "error", err)
	}
}
