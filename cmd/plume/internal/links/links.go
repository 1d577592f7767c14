// Package links holds `plume feedback-links`: the public links through which people without an
// account give feedback on a prompt's completions (spec §2.11, §4.2).
package links

import (
	"context"
	"net/url"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/client"
	"github.com/plumehq/plume/cmd/plume/internal/cmdutil"
)

// NewCmdFeedbackLinks returns the `plume feedback-links` command group.
func NewCmdFeedbackLinks(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "feedback-links <command>",
		Short: "Create, list and revoke public links to give feedback on a prompt's completions",
		Args:  cmdutil.NoArgs,
		RunE:  cmdutil.ShowHelp,
	}
	cmd.AddCommand(newCmdCreate(f), newCmdList(f), newCmdRevoke(f))
	return cmd
}

// linkFields are a link's fields in text output of one link.
var linkFields = []cmdutil.Column{
	{Header: "Link ID", Path: "id"}, {Header: "Prompt", Path: "prompt_slug"}, {Header: "Type", Path: "link_type"},
	{Header: "Status", Path: "status"}, {Header: "Expires", Path: "expires_at"}, {Header: "Revoked", Path: "revoked_at"},
	{Header: "Created", Path: "created_at"}, {Header: "Created by", Path: "created_by.id"},
}

func newCmdCreate(f *cmdutil.Factory) *cobra.Command {
	var req api.LinkRequest
	var expiresIn time.Duration
	cmd := &cobra.Command{
		Use:   "create",
		Short: "Create a feedback link to a prompt's completions; its URL is shown this once",
		Long: `Create a public link (POST /feedback-links) through which anyone who has it reviews the
prompt's recent completions and gives thumbs up or down, without an account. The link works
until it expires (--expires-in, default 7 days, at most 90) or is revoked.

The URL carries the link's secret token: it is shown this once and cannot be read again. A
relative URL (the deployment has no public URL configured) is resolved against the API's base
URL.`,
		Example: `  plume feedback-links create --prompt support-bot
  plume feedback-links create --prompt support-bot --expires-in 72h --output json | jq -r .url`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cmd.Flags().Changed("expires-in") {
				if expiresIn <= 0 {
					return cmdutil.FlagErrorf("--expires-in must be positive, got %s", expiresIn)
				}
				hours := expiresIn.Hours()
				req.ExpiresInHours = &hours
			}
			c, err := f.Client()
			if err != nil {
				return err
			}
			creds, err := f.Credentials()
			if err != nil {
				return err
			}
			ctx, cancel := f.Context(cmd.Context())
			defer cancel()
			l, err := c.CreateFeedbackLink(ctx, req)
			if err != nil {
				return err
			}
			l.URL = absolute(creds.APIBaseURL.Value, l.URL)
			if err := f.IO.PrintItem(l, append([]cmdutil.Column{{Header: "URL", Path: "url"}}, linkFields...)); err != nil {
				return err
			}
			f.IO.Infof("The URL carries the link's token and is shown only this once: share it now. `plume feedback-links revoke %s` disables it.", l.ID)
			return nil
		},
	}
	cmd.Flags().StringVar(&req.PromptSlug, "prompt", "", "the `slug` of the prompt whose completions are reviewed")
	cmd.Flags().StringVar(&req.LinkType, "link-type", api.LinkTypeCompletion, "the link's `type`")
	cmd.Flags().DurationVar(&expiresIn, "expires-in", 0, "how long the link works: a `duration` up to 2160h (default 168h)")
	_ = cmd.MarkFlagRequired("prompt")
	return cmd
}

// absolute resolves a link's URL against the API's base URL when it is relative: the server
// answers a path when it knows no public address of its own.
func absolute(base, link string) string {
	u, err := url.Parse(link)
	if err != nil || u.IsAbs() || base == "" {
		return link
	}
	b, err := url.Parse(strings.TrimRight(base, "/") + "/")
	if err != nil {
		return link
	}
	return b.ResolveReference(&url.URL{Path: strings.TrimPrefix(u.Path, "/"), RawQuery: u.RawQuery}).String()
}

func newCmdList(f *cmdutil.Factory) *cobra.Command {
	var o cmdutil.ListOptions
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the project's feedback links, newest first (without their URLs)",
		Example: `  plume feedback-links list --where status=active
  plume feedback-links list --where prompt_slug=support-bot --output json`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return f.WithClient(cmd, &o, false, func(ctx context.Context, c *client.Client) error {
				list, err := c.FeedbackLinks(ctx)
				if err != nil {
					return err
				}
				return f.IO.PrintList(list.Links, []cmdutil.Column{{Header: "ID", Path: "id"}, {Header: "PROMPT", Path: "prompt_slug"},
					{Header: "STATUS", Path: "status"}, {Header: "EXPIRES", Path: "expires_at"}, {Header: "CREATED", Path: "created_at"},
					{Header: "CREATED_BY", Path: "created_by.id"}}, o.Local())
			})
		},
	}
	cmdutil.AddListFlags(cmd, &o, 0)
	return cmd
}

func newCmdRevoke(f *cmdutil.Factory) *cobra.Command {
	return &cobra.Command{
		Use:     "revoke <link_id>",
		Short:   "Revoke a feedback link: it stops working at once; the feedback given through it stays",
		Example: `  plume feedback-links revoke 0192f5d4-7c1e-7a3b-9f00-5a1c2e3d4b5f`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.WithClient(cmd, nil, false, func(ctx context.Context, c *client.Client) error {
				l, err := c.RevokeFeedbackLink(ctx, args[0])
				if err != nil {
					return err
				}
				return f.IO.PrintItem(l, linkFields)
			})
		},
	}
}
