package admin

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/google/uuid"
	"github.com/spf13/cobra"

	"github.com/plumehq/plume/cmd/plume/internal/cmdutil"
	"github.com/plumehq/plume/shared/auth"
	"github.com/plumehq/plume/shared/ddb"
	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/trace"
)

// aggregateKind is what recompute-trace and recompute-session differ in: what they recount
// and how its fields are named (as the API names them).
type aggregateKind struct {
	name       string // "trace" or "session"
	countField string // span_count of a trace, trace_count of a session
	recount    func(s *ddb.TraceStore, ctx context.Context, projectID, id string) (trace.Recount, error)
	fix        func(s *ddb.TraceStore, ctx context.Context, projectID, id string) (trace.Recount, error)
}

var (
	traceKind = aggregateKind{
		name: "trace", countField: "span_count",
		recount: (*ddb.TraceStore).RecountTrace, fix: (*ddb.TraceStore).FixTrace,
	}
	sessionKind = aggregateKind{
		name: "session", countField: "trace_count",
		recount: (*ddb.TraceStore).RecountSession, fix: (*ddb.TraceStore).FixSession,
	}
)

type recomputeOptions struct {
	IO         *cmdutil.IOStreams
	TraceStore func(context.Context) (*ddb.TraceStore, error)
	AuthStore  func(context.Context) (*ddb.AuthStore, error)

	Kind      aggregateKind
	ProjectID string
	IDs       []string
	DryRun    bool
	ExitCode  bool
}

func newCmdRecomputeTrace(f *cmdutil.Factory, t *target) *cobra.Command {
	return newCmdRecompute(f, t, traceKind, `Recount traces' aggregates (span_count, error_count, cost, started_at, ended_at) from
their spans, and repair the stored ones that differ. The cost is the spans' (the API adds a
trace's own cost, set through POST /traces, which is not recounted).

The change stream's consumer keeps the aggregates exact, seconds after each write, whatever
fails; this command is for data written before it did, and for checking. It recounts, and
writes the recount when the stored values differ. It prints each trace's fields that changed,
or "already exact". A fix is a change of the trace like any other: its session takes it from
the change stream within seconds, as it takes every change of its traces.

With --dry-run it changes nothing: it prints every field as stored and as recomputed, which
ones differ, and when the trace last changed (within seconds of a change the two may differ:
the stream has not applied it yet).

Traces are named by --trace-id, repeated or comma-separated, or as arguments; they are done in
order, and the first error stops the command (what was done before it is printed). Give a
longer --timeout for many traces.

A fix writes only when nothing of the trace changed for 25 hours: a change of the last 24
hours may still be in the change stream, which would count it a second time. Before that the
fix fails with "unavailable" (exit code 4).

Exit code: 0 whether or not the aggregates differed, as a difference is no failure. With
--exit-code, 1 when a trace's stored aggregates differed from the recount (with --dry-run:
they differ; without: they were fixed), as git diff --exit-code does.

With --output json, prints an array with an object per trace: kind, id, exact, fixed,
last_change, stored, recomputed, differences ([{field, stored, recomputed}]). In a fix, stored is
what was stored before and recomputed what is stored now.`,
		`  plume admin recompute-trace --project-id 0b0e3c1e-6a4f-4f59-9a43-2f4b1b0e9d11 --trace-id 0192f5d4-7c1e-7a3b-9f00-5a1c2e3d4b5f --dry-run
  plume admin recompute-trace --project-id 0b0e3c1e-6a4f-4f59-9a43-2f4b1b0e9d11 0192f5d4-7c1e-7a3b-9f00-5a1c2e3d4b5f 0192f5d4-8d2f-7b4c-8e11-6b2d3f4e5c6a
  plume admin recompute-trace --project-id 0b0e3c1e-6a4f-4f59-9a43-2f4b1b0e9d11 --trace-id 0192f5d4-7c1e-7a3b-9f00-5a1c2e3d4b5f --dry-run --exit-code --quiet`)
}

func newCmdRecomputeSession(f *cmdutil.Factory, t *target) *cobra.Command {
	return newCmdRecompute(f, t, sessionKind, `Recount sessions' aggregates (trace_count, error_count, cost, started_at, ended_at) from
their traces' stored aggregates, and repair the stored ones that differ.

A session is recounted from its traces as they are stored: fix its traces first
(recompute-trace). Otherwise it works as recompute-trace: it recounts, writes the recount when
the stored values differ (only when nothing of the session changed for 25 hours), and prints
the fields that changed, or "already exact". With --dry-run it changes nothing and prints every
field as stored and as recomputed, which ones differ, and when the session last changed.

Sessions are named by --session-id, repeated or comma-separated, or as arguments: the UUIDs
the API shows (a session named by another string in the SDKs is stored under a UUID derived
from it). They are done in order; the first error stops the command.

Exit code: 0 whether or not the aggregates differed; with --exit-code, 1 when a session's
stored aggregates differed from the recount (with --dry-run: they differ; without: they were
fixed), as git diff --exit-code does.

With --output json, prints an array with an object per session, as recompute-trace does.`,
		`  plume admin recompute-session --project-id 0b0e3c1e-6a4f-4f59-9a43-2f4b1b0e9d11 --session-id 5d6f0a57-8a0e-4f4e-b1a4-3c3bd1e5a6c2 --dry-run
  plume admin recompute-session --project-id 0b0e3c1e-6a4f-4f59-9a43-2f4b1b0e9d11 --session-id 5d6f0a57-8a0e-4f4e-b1a4-3c3bd1e5a6c2`)
}

func newCmdRecompute(f *cmdutil.Factory, t *target, kind aggregateKind, long, example string) *cobra.Command {
	opts := &recomputeOptions{IO: f.IO, TraceStore: t.traceStore, AuthStore: t.authStore, Kind: kind}
	idFlag := kind.name + "-id"
	cmd := &cobra.Command{
		Use:     fmt.Sprintf("recompute-%s --project-id ID --%s ID... [--dry-run] [--exit-code]", kind.name, idFlag),
		Short:   fmt.Sprintf("Recount %ss' aggregates and repair the ones that drifted", kind.name),
		Long:    long,
		Example: example,
		Args:    cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.ProjectID == "" {
				return cmdutil.FlagErrorf("--project-id is required")
			}
			raw := append(slices.Clone(opts.IDs), args...)
			if len(raw) == 0 {
				return cmdutil.FlagErrorf("--%s is required (or give the ids as arguments)", idFlag)
			}
			if err := auth.ValidateProjectID(opts.ProjectID); err != nil {
				return err
			}
			ids, err := normalizeIDs(kind.name, raw)
			if err != nil {
				return err
			}
			opts.IDs = ids
			ctx, cancel := f.Context(cmd.Context())
			defer cancel()
			return recomputeRun(ctx, opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.ProjectID, "project-id", "", "the project's `id` (required)")
	fl.StringSliceVar(&opts.IDs, idFlag, nil, fmt.Sprintf("the %s's `id`, a UUID; repeat or comma-separate for several", kind.name))
	fl.BoolVar(&opts.DryRun, "dry-run", false, "compare only: print stored and recomputed values, change nothing")
	fl.BoolVar(&opts.ExitCode, "exit-code", false, "exit 1 when an aggregate differed from its recount (found, or fixed)")
	return cmd
}

// normalizeIDs checks that every id is a UUID and returns them lowercase and hyphenated, as
// stored, without repeats, in the order given.
func normalizeIDs(kind string, raw []string) ([]string, error) {
	ids := make([]string, 0, len(raw))
	for _, s := range raw {
		u, err := uuid.Parse(s)
		if err != nil {
			return nil, errs.Invalid("%s id %q is not a UUID", kind, s)
		}
		if id := u.String(); !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	return ids, nil
}

// recomputeResult is what recompute-trace and recompute-session report of one trace or
// session; with --output json, as is.
type recomputeResult struct {
	Kind string `json:"kind"`
	ID   string `json:"id"`
	// Exact is true when nothing differed: the stored aggregates were the recount (in a fix:
	// the fix left them as they were).
	Exact bool `json:"exact"`
	// Fixed is true when the command changed the stored aggregates.
	Fixed bool `json:"fixed"`
	// LastChange is when the aggregate or what it is made of last changed (trace.Recount).
	LastChange time.Time `json:"last_change"`
	// Stored is what was stored when the command read the aggregate; Recomputed is the recount
	// (after a fix, what is stored now).
	Stored      totalsJSON   `json:"stored"`
	Recomputed  totalsJSON   `json:"recomputed"`
	Differences []difference `json:"differences"`

	sessionID string // a fixed trace's session, which the change stream corrects too
}

// totalsJSON is a trace.Totals as the API names its fields: span_count for a trace,
// trace_count for a session.
type totalsJSON struct {
	SpanCount  *int       `json:"span_count,omitempty"`
	TraceCount *int       `json:"trace_count,omitempty"`
	ErrorCount int        `json:"error_count"`
	Cost       float64    `json:"cost"`
	StartedAt  *time.Time `json:"started_at"`
	EndedAt    *time.Time `json:"ended_at"`
}

func (k aggregateKind) totalsJSON(t trace.Totals) totalsJSON {
	out := totalsJSON{ErrorCount: t.Errors, Cost: t.Cost, StartedAt: t.Start, EndedAt: t.End}
	if k.name == traceKind.name {
		out.SpanCount = &t.Count
	} else {
		out.TraceCount = &t.Count
	}
	return out
}

// difference is one field whose stored value is not the recomputed one.
type difference struct {
	Field      string `json:"field"`
	Stored     any    `json:"stored"`
	Recomputed any    `json:"recomputed"`
}

// field is one of the aggregates: its name, and of a Totals, its value and the Totals reduced
// to it. Fields are compared as reduced, by trace.Totals.Equal, so that a recount has
// differences exactly when it is not Exact (costs compared on the cost grid, times as instants).
type field struct {
	name string
	of   func(t trace.Totals) (value any, only trace.Totals)
}

func (k aggregateKind) fields() []field {
	return []field{
		{k.countField, func(t trace.Totals) (any, trace.Totals) { return t.Count, trace.Totals{Count: t.Count} }},
		{"error_count", func(t trace.Totals) (any, trace.Totals) { return t.Errors, trace.Totals{Errors: t.Errors} }},
		{"cost", func(t trace.Totals) (any, trace.Totals) { return t.Cost, trace.Totals{Cost: t.Cost} }},
		{"started_at", func(t trace.Totals) (any, trace.Totals) { return t.Start, trace.Totals{Start: t.Start} }},
		{"ended_at", func(t trace.Totals) (any, trace.Totals) { return t.End, trace.Totals{End: t.End} }},
	}
}

// differences lists the fields in which stored and computed differ, in the order of fields.
func (k aggregateKind) differences(stored, computed trace.Totals) []difference {
	diffs := []difference{}
	for _, f := range k.fields() {
		s, sOnly := f.of(stored)
		c, cOnly := f.of(computed)
		if !sOnly.Equal(cOnly) {
			diffs = append(diffs, difference{Field: f.name, Stored: s, Recomputed: c})
		}
	}
	return diffs
}

func recomputeRun(ctx context.Context, opts *recomputeOptions) error {
	store, err := opts.TraceStore(ctx)
	if err != nil {
		return err
	}
	results := make([]recomputeResult, 0, len(opts.IDs))
	var failed error
	for _, id := range opts.IDs {
		r, err := recomputeOne(ctx, opts, store, id)
		if err != nil {
			failed = err
			break
		}
		results = append(results, r)
		if !opts.IO.JSON() {
			if err := writeRecompute(opts.IO.Out, opts.Kind, r, opts.DryRun); err != nil {
				return err
			}
			if r.sessionID != "" {
				opts.IO.Infof("Trace %s is in session %s, whose aggregates take the fix from the change stream within seconds (check with plume admin recompute-session --project-id %s --session-id %s --dry-run)",
					r.ID, r.sessionID, opts.ProjectID, r.sessionID)
			}
		}
	}
	if opts.IO.JSON() && (failed == nil || len(results) > 0) {
		if err := opts.IO.WriteJSON(results); err != nil {
			return err
		}
	}
	if failed != nil {
		return failed
	}
	if opts.ExitCode && slices.ContainsFunc(results, func(r recomputeResult) bool { return !r.Exact }) {
		return cmdutil.ErrDiffers
	}
	return nil
}

// recomputeOne recounts one trace or session and, unless opts.DryRun, fixes it. It reads the
// recount before fixing, so that it can report what the fix changed.
func recomputeOne(ctx context.Context, opts *recomputeOptions, store *ddb.TraceStore, id string) (recomputeResult, error) {
	k := opts.Kind
	before, err := k.recount(store, ctx, opts.ProjectID, id)
	if errs.Is(err, errs.CodeNotFound) {
		return recomputeResult{}, notFound(ctx, opts, err)
	}
	if err != nil {
		return recomputeResult{}, fmt.Errorf("recount %s %s: %w", k.name, id, err)
	}
	res := recomputeResult{Kind: k.name, ID: id, LastChange: before.LastChange.UTC(), Stored: k.totalsJSON(before.Stored)}
	if opts.DryRun {
		res.Exact = before.Exact()
		res.Recomputed = k.totalsJSON(before.Computed)
		res.Differences = k.differences(before.Stored, before.Computed)
		return res, nil
	}
	after, err := k.fix(store, ctx, opts.ProjectID, id)
	if err != nil {
		return recomputeResult{}, fmt.Errorf("fix %s %s: %w", k.name, id, err)
	}
	// The fix leaves the recount stored: when it found the stored values exact they are the
	// recount, else it wrote the recount.
	res.Recomputed = k.totalsJSON(after.Computed)
	res.Differences = k.differences(before.Stored, after.Computed)
	res.Exact = len(res.Differences) == 0
	res.Fixed = !res.Exact
	if res.Fixed && k.name == traceKind.name && !opts.IO.JSON() {
		traces, err := store.Traces(ctx, opts.ProjectID, []string{id})
		if err != nil {
			return recomputeResult{}, fmt.Errorf("read trace %s: %w", id, err)
		}
		if len(traces) == 1 && traces[0].SessionID != nil {
			res.sessionID = *traces[0].SessionID
		}
	}
	return res, nil
}

// notFound returns the error of an unknown trace or session: an unknown project when the
// project does not exist either, which is the likelier mistake (ids swapped or mistyped).
func notFound(ctx context.Context, opts *recomputeOptions, err error) error {
	store, serr := opts.AuthStore(ctx)
	if serr != nil {
		return err
	}
	if _, perr := store.Project(ctx, opts.ProjectID); errs.Is(perr, errs.CodeNotFound) {
		return perr
	}
	return err
}

// writeRecompute prints one result as text: a line saying what was found or done, then the
// fields (dry run: every field, with whether it differs; fix: the fields that changed).
func writeRecompute(out io.Writer, k aggregateKind, r recomputeResult, dryRun bool) error {
	var status string
	switch {
	case dryRun && r.Exact:
		status = "exact"
	case dryRun:
		status = fmt.Sprintf("%d of %d fields differ", len(r.Differences), len(k.fields()))
	case r.Fixed:
		status = "fixed"
	default:
		status = "already exact"
	}
	if dryRun && !r.LastChange.IsZero() {
		status += "; last changed " + r.LastChange.Format(time.RFC3339)
	}
	if _, err := fmt.Fprintf(out, "%s %s: %s\n", k.name, r.ID, status); err != nil {
		return err
	}
	if !dryRun && !r.Fixed {
		return nil
	}
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	if dryRun {
		fmt.Fprintln(w, "FIELD\tSTORED\tRECOMPUTED\tDIFFERS")
		differs := map[string]bool{}
		for _, d := range r.Differences {
			differs[d.Field] = true
		}
		stored, computed := r.Stored.totals(), r.Recomputed.totals()
		for _, f := range k.fields() {
			yes := "no"
			if differs[f.name] {
				yes = "yes"
			}
			s, _ := f.of(stored)
			c, _ := f.of(computed)
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", f.name, formatValue(s), formatValue(c), yes)
		}
	} else {
		fmt.Fprintln(w, "FIELD\tSTORED\tRECOMPUTED")
		for _, d := range r.Differences {
			fmt.Fprintf(w, "%s\t%s\t%s\n", d.Field, formatValue(d.Stored), formatValue(d.Recomputed))
		}
	}
	return w.Flush()
}

// totals is t back as a trace.Totals.
func (t totalsJSON) totals() trace.Totals {
	out := trace.Totals{Errors: t.ErrorCount, Cost: t.Cost, Start: t.StartedAt, End: t.EndedAt}
	switch {
	case t.SpanCount != nil:
		out.Count = *t.SpanCount
	case t.TraceCount != nil:
		out.Count = *t.TraceCount
	}
	return out
}

// formatValue renders a field's value in text output: costs in full, times in RFC 3339 in UTC
// to the microsecond (as stored), a missing time as "-".
func formatValue(v any) string {
	switch v := v.(type) {
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	case *time.Time:
		if v == nil {
			return "-"
		}
		return v.UTC().Format(time.RFC3339Nano)
	}
	return fmt.Sprint(v)
}
