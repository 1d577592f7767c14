// Package sweeper is SweeperFunction: on a schedule it applies the pending deltas that
// requests which failed half-way left to trace and session aggregates, and that no later write
// of the same trace has applied (shared/ddb/pending.go). It serves no HTTP route; plume-local
// runs the same job in-process.
package sweeper

import (
	"context"
	"log/slog"
	"time"

	"github.com/plumehq/plume/internal/app"
	"github.com/plumehq/plume/shared/trace"
)

// Grace is how old a pending delta must be before the sweeper applies it. A request still
// running has not finished its own heal, and may still be putting the span summaries its
// delta counts: a change whose summary the sweeper does not find is dropped, so it must wait
// until the request has surely ended. Requests end within their function's timeout (29 s for
// the API functions), which trace.PendingGrace, the store's own bound for "settled", exceeds;
// a shorter grace would let the sweeper drop the changes of requests still writing.
const Grace = trace.PendingGrace

// Sweeper applies every pending delta recorded before a time, in every project, and returns
// how many traces and sessions it healed; one that fails does not stop the others, and their
// errors are joined (ddb.TraceStore).
type Sweeper interface {
	Sweep(ctx context.Context, before time.Time) (healed int, err error)
}

// NewJob returns one sweep: the pending deltas older than Grace by now. It logs how many
// traces and sessions it healed, and what failed. It returns an error, which the runtime
// counts in the function's Errors metric, only when nothing was healed and something failed:
// the listing of pending deltas failed, or the heal of every aggregate it found did (storage
// unreachable, a permission missing). When some heal, the failures of the others are logged
// and left to the next run, which lists them again: the Errors metric says the sweeper as a
// whole is not working, and the logs name the traces and sessions that are stuck.
func NewJob(s Sweeper, now func() time.Time) app.Job {
	return func(ctx context.Context, _ []byte) error {
		before := now().UTC().Add(-Grace)
		healed, err := s.Sweep(ctx, before)
		switch {
		case err != nil && healed == 0:
			slog.ErrorContext(ctx, "sweep failed", "before", before, "error", err)
			return err
		case err != nil:
			slog.ErrorContext(ctx, "sweep healed some, others failed", "healed", healed, "before", before, "error", err)
		default:
			slog.InfoContext(ctx, "sweep done", "healed", healed, "before", before)
		}
		return nil
	}
}
