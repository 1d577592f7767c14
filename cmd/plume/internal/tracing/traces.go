package tracing

import (
	"cmp"
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/client"
	"github.com/plumehq/plume/cmd/plume/internal/cmdutil"
	"github.com/plumehq/plume/shared/errs"
)

// NewCmdTraces returns the `plume traces` command group.
func NewCmdTraces(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "traces <command>",
		Short: "List and read traces, the tree of their spans, and their feedback",
		Args:  cmdutil.NoArgs,
		RunE:  cmdutil.ShowHelp,
	}
	cmd.AddCommand(newCmdTracesList(f), newCmdTracesGet(f), newCmdTracesSpans(f), newCmdFeedback(f, api.EntityTrace))
	return cmd
}

// traceColumns are a trace's fields in a table.
var traceColumns = []cmdutil.Column{
	{Header: "ID", Path: "id"}, {Header: "NAME", Path: "name"}, {Header: "STATUS", Path: "status"},
	{Header: "SPANS", Path: "span_count"}, {Header: "ERRORS", Path: "error_count"},
	{Header: "DURATION_MS", Path: "duration_ms"}, {Header: "COST", Path: "cost"}, {Header: "STARTED", Path: "started_at"},
}

// traceFields are a trace's fields in text output of the one trace, and traceBlocks its root
// span's input and output.
var (
	traceFields = []cmdutil.Column{
		{Header: "Trace ID", Path: "id"}, {Header: "Name", Path: "name"}, {Header: "Status", Path: "status"},
		{Header: "Session", Path: "session_id"}, {Header: "Root span", Path: "root_span_id"},
		{Header: "Started", Path: "started_at"}, {Header: "Ended", Path: "ended_at"}, {Header: "Duration ms", Path: "duration_ms"},
		{Header: "Cost", Path: "cost"}, {Header: "Spans", Path: "span_count"}, {Header: "Errors", Path: "error_count"},
		{Header: "Tags", Path: "tags"}, {Header: "Created", Path: "created_at"}, {Header: "Updated", Path: "updated_at"},
	}
	traceBlocks = []cmdutil.Column{{Header: "Input", Path: "root_span_input"}, {Header: "Output", Path: "root_span_output"}}
)

func newCmdTracesList(f *cmdutil.Factory) *cobra.Command {
	var o cmdutil.ListOptions
	fl := filters{list: api.TraceList}
	var sessionID, status string
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the project's traces, newest first, with the server's filters",
		Long: `List the project's traces (GET /traces, spec §4.4). The filters are the server's, each flag
named after its query parameter; --where, --order and --select then apply to the page it answered.
Without --session-id, the server looks at traces stored in the last 30 days (or from
--created-after).`,
		Example: `  plume traces list --created-after 24h --has-error
  plume traces list --session-id 0192f5d4-7c1e-7a3b-9f00-5a1c2e3d4b5f --sort-by started_at --sort-order asc
  plume traces list --tag env=production --sort-by cost --limit 10`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			query := func(now time.Time) (api.TraceQuery, error) {
				q, err := fl.query(cmd, &o, now)
				return api.TraceQuery{ListQuery: q, SessionID: sessionID, Status: status}, err
			}
			return fetchList(cmd, f, &o, query, &fl, traceLister, sessionID != "", func(list []api.Trace) error {
				return f.IO.PrintList(list, traceColumns, &o)
			})
		},
	}
	cmdutil.AddListFlags(cmd, &o, fl.list.Limits.Default)
	fl.add(cmd)
	cmd.Flags().StringVar(&sessionID, "session-id", "", "only the traces of this `session`")
	cmd.Flags().StringVar(&status, "status", "", "only traces of this `status`: unset, ok or error")
	return cmd
}

func newCmdTracesGet(f *cmdutil.Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "get <trace_id>",
		Short: "Show a trace: its aggregates and its root span's input and output",
		Example: `  plume traces get 0192f5d4-7c1e-7a3b-9f00-5a1c2e3d4b5f
  plume traces get 0192f5d4-7c1e-7a3b-9f00-5a1c2e3d4b5f --output json | jq .cost`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.WithClient(cmd, nil, false, func(ctx context.Context, c *client.Client) error {
				list, err := c.Traces(ctx, api.TraceQuery{ID: args[0]})
				if err != nil {
					return err
				}
				if len(list) == 0 {
					return errs.NotFound("trace %s not found in the key's project", args[0])
				}
				return f.IO.PrintItem(list[0], traceFields, traceBlocks...)
			})
		},
	}
}

func newCmdTracesSpans(f *cmdutil.Factory) *cobra.Command {
	var o cmdutil.ListOptions
	fl := newSpanFilters()
	cmd := &cobra.Command{
		Use:   "spans <trace_id>",
		Short: "List the spans of a trace, as a tree in text output",
		Long: `List the spans of a trace (GET /spans?trace_id=), by start time (--sort-order asc) unless
--sort-by says otherwise. Text output shows the tree: each span under its parent (parent_span_id), and a span
whose parent is not listed at the top.`,
		Example: `  plume traces spans 0192f5d4-7c1e-7a3b-9f00-5a1c2e3d4b5f
  plume traces spans 0192f5d4-7c1e-7a3b-9f00-5a1c2e3d4b5f --kind llm --output json | jq 'map(.cost) | add'`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.Check(); err != nil {
				return err
			}
			if fl.sortBy == "" { // by start time, earliest first, unless asked otherwise
				fl.sortBy, fl.sortOrder = "started_at", cmp.Or(fl.sortOrder, "asc")
			}
			q, err := fl.query(cmd, &o, f.Now())
			if err != nil {
				return err
			}
			q.TraceID = args[0]
			return f.WithClient(cmd, nil, false, func(ctx context.Context, c *client.Client) error {
				return spanLister.run(ctx, c, f.IO, fl.list.Noun, q, fl.all, true, func(spans []api.Span) error {
					if len(spans) == 0 { // an unknown trace, or no span of it matched: tell them apart
						traces, err := c.Traces(ctx, api.TraceQuery{ID: args[0]})
						if err != nil {
							return err
						}
						if len(traces) == 0 {
							return errs.NotFound("trace %s not found in the key's project", args[0])
						}
					}
					if f.IO.JSON() {
						return f.IO.PrintList(spans, nil, &o)
					}
					return f.IO.PrintList(tree(spans), treeColumns, &o)
				})
			})
		},
	}
	cmdutil.AddListFlags(cmd, &o, fl.list.Limits.Default)
	fl.add(cmd)
	return cmd
}
