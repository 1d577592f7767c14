package admin

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/plumehq/plume/cmd/plume/internal/cmdutil"
	"github.com/plumehq/plume/shared/ddb"
	"github.com/plumehq/plume/shared/trace"
)

type sweepOptions struct {
	IO         *cmdutil.IOStreams
	TraceStore func(context.Context) (*ddb.TraceStore, error)
	Now        func() time.Time

	OlderThan time.Duration
}

func newCmdSweep(f *cmdutil.Factory, t *target) *cobra.Command {
	opts := &sweepOptions{IO: f.IO, TraceStore: t.traceStore, Now: f.Now}
	cmd := &cobra.Command{
		Use:   "sweep [--older-than DURATION]",
		Short: "Apply the pending deltas that failed requests left, once",
		Long: fmt.Sprintf(`Apply every pending delta recorded more than --older-than ago, in every project: what
requests that failed half-way left to their traces and sessions, and nobody has written since.
It is what the sweeper function does every few minutes, run once; it prints how many traces
and sessions it healed (with --output json, {"healed": n, "before": time}).

The default, %s, is the longest a request can still be writing (trace.PendingGrace). A span
change whose span is not stored is dropped once its write is older than --older-than, so a
shorter one can drop the change of a request still writing (the span then goes uncounted
until recompute-trace); it is for tests and for a stopped ingestion only, and the command
warns.

A trace or session that fails to heal does not stop the others; the errors are reported at the
end, after the count.`, trace.PendingGrace),
		Example: `  plume admin sweep
  plume admin sweep --older-than 10m --output json`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if opts.OlderThan < 0 {
				return cmdutil.FlagErrorf("--older-than must not be negative, got %s", opts.OlderThan)
			}
			ctx, cancel := f.Context(cmd.Context())
			defer cancel()
			return sweepRun(ctx, opts)
		},
	}
	cmd.Flags().DurationVar(&opts.OlderThan, "older-than", trace.PendingGrace, "apply pending deltas recorded more than this `duration` ago")
	return cmd
}

func sweepRun(ctx context.Context, opts *sweepOptions) error {
	if opts.OlderThan < trace.PendingGrace {
		opts.IO.Infof("warning: --older-than %s is shorter than %s: the changes of requests still writing may be dropped.", opts.OlderThan, trace.PendingGrace)
	}
	store, err := opts.TraceStore(ctx)
	if err != nil {
		return err
	}
	before := opts.Now().UTC().Add(-opts.OlderThan)
	healed, err := store.Sweep(ctx, before)
	if err != nil && healed == 0 {
		return err
	}
	if opts.IO.JSON() {
		if werr := opts.IO.WriteJSON(struct {
			Healed int       `json:"healed"`
			Before time.Time `json:"before"`
		}{healed, before}); werr != nil {
			return werr
		}
	} else {
		what := "traces and sessions"
		if healed == 1 {
			what = "trace or session"
		}
		if _, werr := fmt.Fprintf(opts.IO.Out, "Healed %d %s with pending deltas recorded before %s.\n", healed, what, formatTime(before)); werr != nil {
			return werr
		}
	}
	return err
}
