package admin

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/plumehq/plume/cmd/plume/internal/cmdutil"
	"github.com/plumehq/plume/shared/auth"
	"github.com/plumehq/plume/shared/blob"
	"github.com/plumehq/plume/shared/ddb"
	"github.com/plumehq/plume/shared/errs"
)

// maxRetentionDays is PLUME_SPAN_RETENTION_DAYS' bound (shared/config).
const maxRetentionDays = 3650

// reindexTimeout bounds a reindex without --timeout: a project's whole history is read.
const reindexTimeout = 6 * time.Hour

type reindexOptions struct {
	IO    *cmdutil.IOStreams
	Store func(context.Context) (*ddb.ListIndexStore, *ddb.TraceStore, error)

	ProjectID string
	DryRun    bool
}

// reindexJSON is what reindex prints with --output json.
type reindexJSON struct {
	ProjectID   string       `json:"project_id"`
	DryRun      bool         `json:"dry_run"`
	Done        bool         `json:"done"`
	From        *time.Time   `json:"from"`
	Through     *time.Time   `json:"through"`
	SinceBefore *time.Time   `json:"indexed_since_before"`
	SinceAfter  *time.Time   `json:"indexed_since_after"`
	BandsBefore *time.Time   `json:"bands_since_before"`
	BandsAfter  *time.Time   `json:"bands_since_after"`
	Days        []reindexDay `json:"partitions"`
	RetryAfter  *time.Time   `json:"retry_after,omitempty"`
}

type reindexDay struct {
	Day        string    `json:"day"`
	Kind       string    `json:"kind"`
	Records    int       `json:"records"`
	Keys       int       `json:"keys"`
	Runs       int       `json:"runs"`
	Replaced   int       `json:"replaced_runs"`
	LastChange time.Time `json:"last_change"`
	Busy       bool      `json:"busy"`
}

func newCmdReindex(f *cmdutil.Factory, t *target) *cobra.Command {
	opts := &reindexOptions{IO: f.IO}
	var bucket, retention string
	opts.Store = func(ctx context.Context) (*ddb.ListIndexStore, *ddb.TraceStore, error) {
		return t.listIndexStore(ctx, bucket, retention)
	}
	cmd := &cobra.Command{
		Use:   "reindex --project-id ID [--dry-run]",
		Short: "Rebuild a project's list index from its records, for projects stored before it",
		Long: `Rebuild the list index of a project from its spans, traces and sessions as stored, day by
day, and move the index's marks back to the project's first day.

The change stream's consumer indexes a project from the first change it reads of it. A project
with records from before the list index was deployed is served, for windows that reach back past
that mark, by the walk of its time index, which stops at a bound and says so
(X-Plume-Scan-Truncated); one with records from before the duration and cost bands decides such
ranges a day at a time. Once reindexed, every list of the project reads the list index, and its
records stop getting time-index entries.

A day is rebuilt only when none of its records changed for 25 hours (the change stream keeps
changes 24 hours): the command goes from the newest day to rebuild back to the first, passing
over days with a recent change, and moves each mark back over the unbroken stretch of days
rebuilt from the mark's own; it names the days it passed over and when to run it again.
Running it again is safe, and rebuilds the same days.

Cost: every record of the project is read once (strongly consistent, 1 read unit per 4 KB) and
its index keys written as runs of up to 50,000 records (a PUT each in the bucket, or a write unit
per KB in the table when small); the time index is walked once. --dry-run reads and counts only.

It reads the table (--table or TABLE_NAME) and the bucket (--bucket or BUCKET_NAME) with the AWS
SDK's configuration from the environment. --span-retention-days must be the deployment's
(PLUME_SPAN_RETENTION_DAYS), so that rebuilt runs expire with the spans. Without --timeout it
stops after ` + reindexTimeout.String() + `.

Exit code: 0 when every day was rebuilt (or, with --dry-run, could be); 4 when a day had a change
of the last 25 hours (run again after the time printed).`,
		Example: `  plume admin reindex --project-id 0b0e3c1e-6a4f-4f59-9a43-2f4b1b0e9d11 --dry-run
  plume admin reindex --project-id 0b0e3c1e-6a4f-4f59-9a43-2f4b1b0e9d11 --output json`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := auth.ValidateProjectID(opts.ProjectID); err != nil {
				return cmdutil.FlagErrorWrap(err)
			}
			var err error
			if bucket, err = bucketOf(f, bucket); err != nil {
				return err
			}
			if retention == "" {
				retention = f.Getenv("PLUME_SPAN_RETENTION_DAYS")
			}
			ctx, cancel := longRunContext(cmd, f, reindexTimeout)
			defer cancel()
			return reindexRun(ctx, opts)
		},
	}
	cmd.Flags().StringVar(&opts.ProjectID, "project-id", "", "the project's `id` (required)")
	_ = cmd.MarkFlagRequired("project-id")
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "read and count what would be rebuilt, change nothing")
	cmd.Flags().StringVar(&bucket, "bucket", "", "S3 bucket `name` (default: $BUCKET_NAME)")
	cmd.Flags().StringVar(&retention, "span-retention-days", "", "the deployment's span retention in `days` (default: $PLUME_SPAN_RETENTION_DAYS, else none)")
	return cmd
}

// listIndexStore is the composition root of reindex: the list index (table and bucket) and
// the tracing store.
func (t *target) listIndexStore(ctx context.Context, bucket, retention string) (*ddb.ListIndexStore, *ddb.TraceStore, error) {
	days := 0
	if retention != "" {
		n, err := strconv.Atoi(retention)
		if err != nil || n < 0 || n > maxRetentionDays {
			return nil, nil, cmdutil.FlagErrorf("--span-retention-days %q: want a number of days from 0 (keep forever) to %d", retention, maxRetentionDays)
		}
		days = n
	}
	client, name, err := t.client(ctx)
	if err != nil {
		return nil, nil, err
	}
	api, err := t.s3Client(ctx)
	if err != nil {
		return nil, nil, err
	}
	table := ddb.NewTable(client, name)
	blobs := blob.New(api, bucket)
	index := ddb.NewListIndexStore(table, blobs, ddb.ListIndexConfig{Retention: time.Duration(days) * 24 * time.Hour})
	return index, ddb.NewTraceStore(table), nil
}

func reindexRun(ctx context.Context, opts *reindexOptions) error {
	index, traces, err := opts.Store(ctx)
	if err != nil {
		return err
	}
	r, err := index.Reindex(ctx, traces, opts.ProjectID, opts.DryRun, func(d ddb.DayRebuild) {
		if !opts.IO.JSON() {
			fmt.Fprintln(opts.IO.Out, d.String())
		}
	})
	if err != nil {
		return err
	}
	out := reindexJSON{ProjectID: opts.ProjectID, DryRun: opts.DryRun, Done: r.Done, Days: []reindexDay{},
		From: optTime(r.From), Through: optTime(r.Through), SinceBefore: optTime(r.SinceBefore), SinceAfter: optTime(r.SinceAfter),
		BandsBefore: optTime(r.BandsBefore), BandsAfter: optTime(r.BandsAfter)}
	for _, d := range r.Days {
		out.Days = append(out.Days, reindexDay{Day: d.Day.Format(time.DateOnly), Kind: string(d.Kind), Records: d.Records, Keys: d.Keys,
			Runs: d.Runs, Replaced: d.Replaced, LastChange: d.LastChange, Busy: d.Busy})
		if at := d.LastChange.Add(ddb.ReindexQuiet); d.Busy && (out.RetryAfter == nil || at.After(*out.RetryAfter)) {
			out.RetryAfter = &at
		}
	}
	if opts.IO.JSON() {
		if err := opts.IO.WriteJSON(out); err != nil {
			return err
		}
	} else {
		opts.IO.Infof("%s", reindexSummary(out))
	}
	if out.RetryAfter != nil {
		return errs.Unavailable("a day of project %s changed less than %s ago; run again after %s", opts.ProjectID, ddb.ReindexQuiet, out.RetryAfter.Format(time.RFC3339))
	}
	return nil
}

// reindexSummary says what a reindex did, in a line.
func reindexSummary(r reindexJSON) string {
	if r.From == nil {
		return "Nothing to reindex: the project has no records."
	}
	verb, done := "Rebuilt", 0
	if r.DryRun {
		verb = "Would rebuild"
	}
	for _, d := range r.Days {
		if !d.Busy {
			done++
		}
	}
	days := int(r.Through.Sub(*r.From).Hours()/24) + 1
	s := fmt.Sprintf("%s %d partitions of the %d days from %s to %s.", verb, done, days,
		r.From.Format(time.DateOnly), r.Through.Format(time.DateOnly))
	if r.RetryAfter != nil {
		s += fmt.Sprintf(" Passed over days with a recent change: run again after %s.", r.RetryAfter.Format(time.RFC3339))
	}
	if !r.DryRun {
		s += fmt.Sprintf(" Indexed since %s (was %s); bands since %s (was %s).", timeOrNone(r.SinceAfter), timeOrNone(r.SinceBefore),
			timeOrNone(r.BandsAfter), timeOrNone(r.BandsBefore))
	}
	return s
}

func optTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

func timeOrNone(t *time.Time) string {
	if t == nil {
		return "none"
	}
	return t.UTC().Format(time.RFC3339)
}
