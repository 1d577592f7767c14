// Package gatewaycmd holds `plume gateway`: how the model gateway stands for the project.
package gatewaycmd

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/plumehq/plume/client"
	"github.com/plumehq/plume/cmd/plume/internal/cmdutil"
)

// NewCmdGateway returns the `plume gateway` command group.
func NewCmdGateway(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "gateway <command>",
		Short: "Show how the model gateway stands for the project",
		Long: `The model gateway serves OpenAI's Chat Completions API (/v1/chat/completions) with a Plume key,
calling any configured provider with the deployment's own keys, within per-project limits.`,
		Args: cmdutil.NoArgs,
		RunE: cmdutil.ShowHelp,
	}
	cmd.AddCommand(newCmdStatus(f))
	return cmd
}

// statusFields are the gateway status's fields in text output; "-" is no limit, or not counted.
var statusFields = []cmdutil.Column{
	{Header: "Endpoint", Path: "endpoint"},
	{Header: "Requests per minute", Path: "limits.requests_per_minute"},
	{Header: "Tokens per minute", Path: "limits.tokens_per_minute"},
	{Header: "Daily spend (USD)", Path: "limits.daily_spend_usd"},
	{Header: "Minute", Path: "usage.minute"},
	{Header: "Tokens this minute", Path: "usage.tokens"},
	{Header: "Day", Path: "usage.day"},
	{Header: "Spend today (USD)", Path: "usage.spend_usd"},
	{Header: "Tracing", Path: "trace"},
}

func newCmdStatus(f *cmdutil.Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "status",
		Short: "Show the gateway's endpoint, the limits with what they counted for the project, and its tracing mode",
		Long: `Show GET /projects/{project_id}/gateway: the gateway's streaming OpenAI base URL ("-": the API's
own base URL + /v1), the deployment's per-project limits ("-": no limit), the tokens of the
current UTC minute and the spend of the current UTC day ("-": not counted, since no such limit
is set), and which calls it records as spans (off: those that ask; all: every call).`,
		Example: `  plume gateway status
  plume gateway status --output json`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return f.WithClient(cmd, nil, true, func(ctx context.Context, c *client.Client) error {
				st, err := c.GatewayStatus(ctx)
				if err != nil {
					return err
				}
				return f.IO.PrintItem(st, statusFields)
			})
		},
	}
}
