package tracing

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/client"
	"github.com/plumehq/plume/cmd/plume/internal/cmdutil"
	"github.com/plumehq/plume/shared/errs"
)

// NewCmdSpans returns the `plume spans` command group.
func NewCmdSpans(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "spans <command>",
		Short: "List and read spans, their attachments and their feedback",
		Args:  cmdutil.NoArgs,
		RunE:  cmdutil.ShowHelp,
	}
	cmd.AddCommand(newCmdSpansList(f), newCmdSpansGet(f), newCmdSpansAttachments(f), newCmdFeedback(f, api.EntitySpan))
	return cmd
}

// spanColumns are a span's fields in a table.
var spanColumns = []cmdutil.Column{
	{Header: "ID", Path: "id"}, {Header: "TRACE", Path: "trace_id"}, {Header: "NAME", Path: "name"}, {Header: "KIND", Path: "kind"},
	{Header: "STATUS", Path: "status"}, {Header: "DURATION_MS", Path: "duration_ms"}, {Header: "COST", Path: "cost"},
	{Header: "STARTED", Path: "started_at"},
}

// spanFields are a span's fields in text output of the one span, and spanBlocks its input and
// output.
var (
	spanFields = []cmdutil.Column{
		{Header: "Span ID", Path: "id"}, {Header: "Name", Path: "name"}, {Header: "Kind", Path: "kind"}, {Header: "Status", Path: "status"},
		{Header: "Trace", Path: "trace_id"}, {Header: "Parent", Path: "parent_span_id"}, {Header: "Session", Path: "session_id"},
		{Header: "Started", Path: "started_at"}, {Header: "Ended", Path: "ended_at"}, {Header: "Duration ms", Path: "duration_ms"},
		{Header: "Cost", Path: "cost"}, {Header: "Cost source", Path: "cost_source"},
		{Header: "Model", Path: "attributes.model"}, {Header: "Input tokens", Path: "attributes.inputTokens"},
		{Header: "Output tokens", Path: "attributes.outputTokens"}, {Header: "Prompt", Path: "prompt_link.prompt_slug"},
		{Header: "Prompt version ID", Path: "prompt_link.prompt_version_id"},
		{Header: "Error code", Path: "error_code"}, {Header: "Error message", Path: "error_message"},
		{Header: "Tags", Path: "tags"}, {Header: "Attachments", Path: "attachment_count"}, {Header: "Created", Path: "created_at"},
	}
	spanBlocks = []cmdutil.Column{{Header: "Input", Path: "input_data"}, {Header: "Output", Path: "output_data"}}
)

// spanView is a span in text output: the count of its attachments besides its fields.
type spanView struct {
	api.Span
	AttachmentCount int `json:"attachment_count"`
}

// spanFilters are the filters of the span list: the common ones and the span route's own,
// but for the trace and the session, which the commands take each their own way.
type spanFilters struct {
	filters
	kind, parent string
	errorCodes   []string
}

func newSpanFilters() *spanFilters { return &spanFilters{filters: filters{list: api.SpanList}} }

func (l *spanFilters) add(cmd *cobra.Command) {
	l.filters.add(cmd)
	fl := cmd.Flags()
	fl.StringVar(&l.kind, "kind", "", l.doc("span_kind", ""))
	fl.StringVar(&l.parent, "parent-span-id", "", l.doc("parent_span_id", ""))
	fl.StringArrayVar(&l.errorCodes, "error-code", nil, l.doc("error_codes", "; repeatable"))
}

// query is the span query of the flags; see filters.query.
func (l *spanFilters) query(cmd *cobra.Command, o *cmdutil.ListOptions, now time.Time) (api.SpanQuery, error) {
	c, err := l.filters.query(cmd, o, now)
	q := api.SpanQuery{ListQuery: c, SpanKind: api.SpanKind(l.kind), ErrorCodes: l.errorCodes}
	switch l.parent {
	case "":
	case "null":
		q.ParentSpanID = new(string)
	default:
		q.ParentSpanID = &l.parent
	}
	return q, err
}

func newCmdSpansList(f *cmdutil.Factory) *cobra.Command {
	var o cmdutil.ListOptions
	fl := newSpanFilters()
	var traceID, sessionID string
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List spans, newest first, with the server's filters",
		Long: `List spans (GET /spans, spec §4.3). The filters are the server's, each flag named after its
query parameter; --where, --order and --select then apply to the page it answered. With
--session-id, the spans of every trace of the session. Without --trace-id or --session-id, the
server looks at spans stored in the last 30 days (or from --created-after).`,
		Example: `  plume spans list --trace-id 0192f5d4-7c1e-7a3b-9f00-5a1c2e3d4b5f
  plume spans list --kind llm --created-after 1h --sort-by cost --limit 20
  plume spans list --session-id 0192f5d4-7c1e-7a3b-9f00-5a1c2e3d4b5f --has-error --output json`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			query := func(now time.Time) (api.SpanQuery, error) {
				q, err := fl.query(cmd, &o, now)
				q.TraceID, q.SessionID = traceID, sessionID
				return q, err
			}
			return fetchList(cmd, f, &o, query, &fl.filters, spanLister, traceID != "" || sessionID != "", func(list []api.Span) error {
				return f.IO.PrintList(list, spanColumns, &o)
			})
		},
	}
	cmdutil.AddListFlags(cmd, &o, fl.list.Limits.Default)
	fl.add(cmd)
	cmd.Flags().StringVar(&traceID, "trace-id", "", "only the spans of this `trace`")
	cmd.Flags().StringVar(&sessionID, "session-id", "", "only the spans of the traces of this `session`")
	return cmd
}

func newCmdSpansGet(f *cmdutil.Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "get <span_id>",
		Short: "Show a span: its fields, model and tokens, input and output",
		Example: `  plume spans get 0192f5d4-7c1e-7a3b-9f00-5a1c2e3d4b5f
  plume spans get 0192f5d4-7c1e-7a3b-9f00-5a1c2e3d4b5f --output json | jq -r .output_data`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.WithClient(cmd, nil, false, func(ctx context.Context, c *client.Client) error {
				list, err := c.Spans(ctx, api.SpanQuery{ID: args[0]})
				if err != nil {
					return err
				}
				if len(list) == 0 {
					return errs.NotFound("span %s not found in the key's project", args[0])
				}
				s := list[0]
				blocks := spanBlocks
				if s.ErrorStack != nil && *s.ErrorStack != "" {
					blocks = append(blocks[:len(blocks):len(blocks)], cmdutil.Column{Header: "Error stack", Path: "error_stack"})
				}
				var v any = s
				if !f.IO.JSON() {
					v = spanView{Span: s, AttachmentCount: len(s.Attachments)}
				}
				return f.IO.PrintItem(v, spanFields, blocks...)
			})
		},
	}
}

func newCmdSpansAttachments(f *cmdutil.Factory) *cobra.Command {
	var o cmdutil.ListOptions
	cmd := &cobra.Command{
		Use:   "attachments <span_id>",
		Short: "List a span's files, each with a presigned download URL",
		Long: `List the files of a span that are in the bucket (GET /spans/{span_id}/attachments), each
with a presigned URL that downloads it without a key until the time shown.`,
		Example: `  plume spans attachments 0192f5d4-7c1e-7a3b-9f00-5a1c2e3d4b5f
  plume spans attachments 0192f5d4-7c1e-7a3b-9f00-5a1c2e3d4b5f --output json | jq -r '.[0].url' | xargs curl -o file`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.WithClient(cmd, &o, false, func(ctx context.Context, c *client.Client) error {
				list, err := c.Attachments(ctx, args[0])
				if err != nil {
					return err
				}
				if err := f.IO.PrintRecords(list.Attachments, attachmentFields, o.Local()); err != nil {
					return err
				}
				if !f.IO.JSON() && list.Count > 0 {
					f.IO.Infof("The URLs work until %s.", list.ExpiresAt.Format(time.RFC3339))
				}
				return nil
			})
		},
	}
	cmdutil.AddListFlags(cmd, &o, 0)
	return cmd
}

// attachmentFields are an attachment's fields in text output.
var attachmentFields = []cmdutil.Column{
	{Header: "ID", Path: "id"}, {Header: "Type", Path: "type"}, {Header: "Label", Path: "label"},
	{Header: "Content type", Path: "content_type"}, {Header: "Size", Path: "size"}, {Header: "URL", Path: "url"},
}
