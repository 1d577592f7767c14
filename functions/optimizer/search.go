package optimizer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/optimize"
)

// Objects keeps checkpoints in the bucket (blob.Store).
type Objects interface {
	Put(ctx context.Context, key string, body []byte, contentType string) error
	Get(ctx context.Context, key string) ([]byte, error)
}

// search is a strategy that runs in steps, each a checkpoint: its state is plain JSON, and a
// step taken again from the same state with the same model answers (the cache's) makes the
// same choices.
type search struct {
	state any // what is checkpointed: *optimize.BootstrapState, *gepa.State
	step  func(ctx context.Context) (done bool, err error)
	// iteration is the number of steps taken.
	iteration func() int
}

// errYielded ends an invocation that checkpointed its run and queued its continuation.
var errYielded = errors.New("the run goes on in another invocation")

// checkpointKey is the bucket key of a run's state after iteration n: a key per iteration, so
// that a checkpoint being written never replaces the one the run record names.
func checkpointKey(projectID, runID string, n int) string {
	return fmt.Sprintf("optimizations/project=%s/run=%s/state-%06d.json", projectID, runID, n)
}

// resume loads the run's last checkpoint into s.state; it does nothing for a run without one.
func (w *Worker) resume(ctx context.Context, r optimize.Run, s search) error {
	if r.Checkpoint == "" {
		return nil
	}
	body, err := w.objects.Get(ctx, r.Checkpoint)
	if err != nil {
		return fmt.Errorf("read the checkpoint of run %s: %w", r.ID, err)
	}
	if err := json.Unmarshal(body, s.state); err != nil {
		return errs.Invalid("the checkpoint %s of run %s does not decode: %v", r.Checkpoint, r.ID, err)
	}
	return nil
}

// run steps s until it is done, checkpointing after every step (the state to the bucket, then
// the run record, conditioned on its version) and yielding when the invocation should end
// (shouldYield): it then queues the run's continuation and returns errYielded.
func (w *Worker) run(ctx context.Context, r *optimize.Run, s search, m *metered) error {
	steps := 0
	for {
		done, err := s.step(ctx)
		if err != nil {
			return err
		}
		steps++
		if done {
			return nil
		}
		body, err := json.Marshal(s.state)
		if err != nil {
			return fmt.Errorf("encode the state of run %s: %w", r.ID, err)
		}
		key := checkpointKey(r.ProjectID, r.ID, s.iteration())
		if err := w.objects.Put(ctx, key, body, "application/json"); err != nil {
			return err
		}
		r.Checkpoint = key
		if *r, err = w.progress(ctx, *r, m.Spent(), s.iteration()); err != nil {
			return err
		}
		if w.shouldYield(ctx, steps) {
			msg, _ := json.Marshal(Message{ProjectID: r.ProjectID, RunID: r.ID})
			if err := w.queue.Send(ctx, msg); err != nil {
				return fmt.Errorf("queue the continuation of run %s: %w", r.ID, err)
			}
			return errYielded
		}
	}
}
