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

// NewCmdSessions returns the `plume sessions` command group.
func NewCmdSessions(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sessions <command>",
		Short: "List and read sessions: the traces of one conversation or user visit",
		Args:  cmdutil.NoArgs,
		RunE:  cmdutil.ShowHelp,
	}
	cmd.AddCommand(newCmdSessionsList(f), newCmdSessionsGet(f), newCmdFeedback(f, api.EntitySession))
	return cmd
}

// sessionColumns are a session's fields in a table.
var sessionColumns = []cmdutil.Column{
	{Header: "ID", Path: "id"}, {Header: "NAME", Path: "name"}, {Header: "TRACES", Path: "trace_count"},
	{Header: "ERRORS", Path: "error_count"}, {Header: "DURATION_MS", Path: "duration"}, {Header: "COST", Path: "cost"},
	{Header: "STARTED", Path: "started_at"},
}

// sessionFields are a session's fields in text output of the one session.
var sessionFields = []cmdutil.Column{
	{Header: "Session ID", Path: "id"}, {Header: "Name", Path: "name"}, {Header: "Traces", Path: "trace_count"},
	{Header: "Errors", Path: "error_count"}, {Header: "Started", Path: "started_at"}, {Header: "Ended", Path: "ended_at"},
	{Header: "Duration ms", Path: "duration"}, {Header: "Cost", Path: "cost"}, {Header: "Tags", Path: "tags"},
	{Header: "Created", Path: "created_at"}, {Header: "Updated", Path: "updated_at"},
}

func newCmdSessionsList(f *cmdutil.Factory) *cobra.Command {
	var o cmdutil.ListOptions
	fl := filters{list: api.SessionList}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the project's sessions, newest first, with the server's filters",
		Long: `List the project's sessions (GET /sessions, spec §4.5). The filters are the server's, each flag
named after its query parameter; --where, --order and --select then apply to the page it
answered. The server looks at sessions stored in the last 30 days (or from --created-after).`,
		Example: `  plume sessions list --created-after 168h --sort-by cost
  plume sessions list --name checkout --has-error --output json`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			query := func(now time.Time) (api.SessionQuery, error) {
				q, err := fl.query(cmd, &o, now)
				return api.SessionQuery{ListQuery: q}, err
			}
			return fetchList(cmd, f, &o, query, &fl, sessionLister, false, func(list []api.Session) error {
				return f.IO.PrintList(list, sessionColumns, &o)
			})
		},
	}
	cmdutil.AddListFlags(cmd, &o, fl.list.Limits.Default)
	fl.add(cmd)
	return cmd
}

func newCmdSessionsGet(f *cmdutil.Factory) *cobra.Command {
	return &cobra.Command{
		Use:     "get <session_id>",
		Short:   "Show a session: its traces' count, errors, duration and cost",
		Example: `  plume sessions get 0192f5d4-7c1e-7a3b-9f00-5a1c2e3d4b5f`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.WithClient(cmd, nil, false, func(ctx context.Context, c *client.Client) error {
				list, err := c.Sessions(ctx, api.SessionQuery{ID: args[0]})
				if err != nil {
					return err
				}
				if len(list) == 0 {
					return errs.NotFound("session %s not found in the key's project", args[0])
				}
				return f.IO.PrintItem(list[0], sessionFields)
			})
		},
	}
}
