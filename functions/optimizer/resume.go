package optimizer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/plumehq/plume/shared/optimize"
)

// Resuming runs whose worker is gone. A worker that dies has its message delivered again by the
// queue, and goes on from its checkpoint; a message that ends in the dead-letter queue, or a
// continuation that could not be queued, leaves its run waiting for nobody. The worker's
// schedule (ResumeRuns in template.yaml, every 15 minutes; plume-local's PLUME_RESUME_INTERVAL)
// finds the runs not over that nobody has written for StaleAfter, and queues them again, at
// most MaxResumes times; a run resumed that often fails with the reason.
const (
	// StaleAfter is how long a run that is not over may go unwritten: a worker writes it after
	// every step, and a step ends within its invocation (15 minutes).
	StaleAfter = 30 * time.Minute
	// MaxResumes bounds the times a run is queued again.
	MaxResumes = 3
	// maxStaleRuns bounds the runs one schedule resumes.
	maxStaleRuns = 100
)

// isScheduled reports whether payload is an EventBridge schedule's event.
func isScheduled(payload []byte) bool {
	var ev struct {
		Source     string `json:"source"`
		DetailType string `json:"detail-type"`
	}
	return json.Unmarshal(payload, &ev) == nil && ev.Source == "aws.events" && ev.DetailType == "Scheduled Event"
}

// ResumeStale queues again the runs whose worker is gone (see StaleAfter), and fails those
// resumed MaxResumes times already. A run that fails to be resumed does not stop the others.
func (w *Worker) ResumeStale(ctx context.Context) error {
	refs, err := w.runs.StaleRuns(ctx, w.now().Add(-StaleAfter), maxStaleRuns)
	if err != nil {
		return err
	}
	var failures []error
	for _, ref := range refs {
		if err := w.resume1(ctx, ref.ProjectID, ref.RunID); err != nil {
			failures = append(failures, fmt.Errorf("run %s: %w", ref.RunID, err))
		}
	}
	slog.InfoContext(ctx, "optimizer: stale runs resumed", "runs", len(refs), "failed", len(failures))
	return errors.Join(failures...)
}

func (w *Worker) resume1(ctx context.Context, projectID, runID string) error {
	r, err := w.runs.Run(ctx, projectID, runID)
	if err != nil || optimize.Final(r.Status) || w.now().Sub(r.UpdatedAt) < StaleAfter {
		return err // written since it was listed: its worker is alive
	}
	if r.Resumes >= MaxResumes {
		return w.finish(ctx, r, func(r *optimize.Run) {
			r.Status = optimize.StatusFailed
			r.Error = fmt.Sprintf("the run's worker stopped %d times; start a new run", r.Resumes+1)
		})
	}
	r.Resumes++
	r.UpdatedAt = w.stamp()
	if _, err := w.runs.UpdateRun(ctx, r); err != nil {
		return err
	}
	slog.WarnContext(ctx, "optimizer: run resumed", "project_id", projectID, "run_id", runID, "resumes", r.Resumes)
	msg, _ := json.Marshal(Message{ProjectID: projectID, RunID: runID})
	return w.queue.Send(ctx, msg)
}
