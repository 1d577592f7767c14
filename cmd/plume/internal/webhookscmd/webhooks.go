// Package webhookscmd holds `plume webhooks`: the project's webhooks managed over the API with an
// admin key (GET, POST /projects/{project_id}/webhooks, GET and DELETE .../{webhook_id}) and their
// delivery logs (GET .../{webhook_id}/deliveries). See docs/webhooks.md.
package webhookscmd

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/client"
	"github.com/plumehq/plume/cmd/plume/internal/cmdutil"
)

// NewCmdWebhooks returns the `plume webhooks` command group.
func NewCmdWebhooks(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "webhooks <command>",
		Short: "List, show, create and delete the project's webhooks, and read their delivery logs (admin keys only)",
		Long: `The project's webhooks: HTTP endpoints its events (prompt.tag.moved, prompt.version.created,
judge.updated, optimization.run.finished ...) are posted to, signed by the Standard Webhooks
convention. The key the command runs with must be an admin key of the project (403, exit 3
otherwise).`,
		Args: cmdutil.NoArgs,
		RunE: cmdutil.ShowHelp,
	}
	cmd.AddCommand(newCmdList(f), newCmdShow(f), newCmdCreate(f), newCmdDelete(f), newCmdDeliveries(f))
	return cmd
}

var webhookColumns = []cmdutil.Column{{Header: "ID", Path: "id"}, {Header: "URL", Path: "url"}, {Header: "FORMAT", Path: "format"},
	{Header: "EVENTS", Path: "events"}, {Header: "CREATED", Path: "created_at"}}

func newCmdList(f *cmdutil.Factory) *cobra.Command {
	var o cmdutil.ListOptions
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the project's webhooks (never their secrets)",
		Args:  cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return f.WithClient(cmd, &o, true, func(ctx context.Context, c *client.Client) error {
				list, err := c.Webhooks(ctx)
				if err != nil {
					return err
				}
				return f.IO.PrintList(list, webhookColumns, o.Local())
			})
		},
	}
	cmdutil.AddListFlags(cmd, &o, 0)
	return cmd
}

func newCmdShow(f *cmdutil.Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "show <webhook_id>",
		Short: "A webhook: its URL, format and events (never its secret)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.WithClient(cmd, nil, true, func(ctx context.Context, c *client.Client) error {
				hook, err := c.Webhook(ctx, args[0])
				if err != nil {
					return err
				}
				return f.IO.PrintItem(hook, append(webhookColumns, cmdutil.Column{Header: "CREATED BY", Path: "created_by"}))
			})
		},
	}
}

func newCmdCreate(f *cmdutil.Factory) *cobra.Command {
	var req api.CreateWebhookRequest
	cmd := &cobra.Command{
		Use:   "create --url URL --event TYPE [--event TYPE ...] [--format standard|slack]",
		Short: "Register a webhook and print its signing secret, once",
		Long: fmt.Sprintf(`Register a webhook (POST /projects/{project_id}/webhooks) and print its signing secret
("whsec_..."), on stdout alone: it is shown this once. With --output json, stdout is the whole
answer. Receivers verify each delivery with it (docs/webhooks.md).

--event, repeated, is what it receives: %v.
--format slack posts {"text": "..."} for a Slack incoming webhook.`, api.EventTypes),
		Example: `  plume webhooks create --url https://ci.example.com/plume --event prompt.tag.moved
  SECRET=$(plume webhooks create --url https://hooks.slack.com/services/T/B/X --format slack --event prompt.tag.moved --quiet)`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return f.WithClient(cmd, nil, true, func(ctx context.Context, c *client.Client) error {
				hook, err := c.CreateWebhook(ctx, req)
				if err != nil {
					return err
				}
				if f.IO.JSON() {
					if err := f.IO.WriteJSON(hook); err != nil {
						return err
					}
				} else {
					f.IO.Infof("Created webhook %s for %s (%s).", hook.ID, hook.URL, hook.Format)
					if _, err := fmt.Fprintln(f.IO.Out, hook.Secret); err != nil {
						return err
					}
				}
				f.IO.Infof("warning: this is the only time the webhook's secret is shown. Store it now.")
				return nil
			})
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&req.URL, "url", "", "the `URL` deliveries are posted to (required)")
	fl.StringArrayVar(&req.Events, "event", nil, "an event `type` to deliver (repeat; at least one)")
	fl.StringVar(&req.Format, "format", api.WebhookStandard, "the deliveries' `format`: standard or slack")
	_ = cmd.MarkFlagRequired("url")
	_ = cmd.MarkFlagRequired("event")
	return cmd
}

func newCmdDelete(f *cmdutil.Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "delete <webhook_id>",
		Short: "Delete a webhook: nothing more is delivered to it",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.WithClient(cmd, nil, true, func(ctx context.Context, c *client.Client) error {
				if err := c.DeleteWebhook(ctx, args[0]); err != nil {
					return err
				}
				return f.IO.PrintItem(api.WebhookDeleted{ID: args[0], Deleted: true},
					[]cmdutil.Column{{Header: "ID", Path: "id"}, {Header: "Deleted", Path: "deleted"}})
			})
		},
	}
}

func newCmdDeliveries(f *cmdutil.Factory) *cobra.Command {
	var o cmdutil.ListOptions
	cmd := &cobra.Command{
		Use:   "deliveries <webhook_id>",
		Short: "A webhook's delivery log, newest first: status, attempts, last answer and error",
		Example: `  plume webhooks deliveries wh_0192f5d4-7c1e-4a3b-9f00-5a1c2e3d4b5f --where status=failed
  plume webhooks deliveries wh_0192f5d4-7c1e-4a3b-9f00-5a1c2e3d4b5f --limit 200 --output json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.Limit < 1 || o.Limit > 200 {
				return cmdutil.FlagErrorf("--limit must be from 1 to 200, got %d", o.Limit)
			}
			return f.WithClient(cmd, &o, true, func(ctx context.Context, c *client.Client) error {
				list, err := c.WebhookDeliveries(ctx, args[0], o.Limit)
				if err != nil {
					return err
				}
				return f.IO.PrintList(list, []cmdutil.Column{{Header: "ID", Path: "id"}, {Header: "EVENT", Path: "event_type"},
					{Header: "STATUS", Path: "status"}, {Header: "ATTEMPTS", Path: "attempts"}, {Header: "CODE", Path: "last_status_code"},
					{Header: "ERROR", Path: "last_error"}, {Header: "UPDATED", Path: "updated_at"}}, o.Local())
			})
		},
	}
	cmdutil.AddListFlags(cmd, &o, 50)
	return cmd
}
