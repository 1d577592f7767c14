// Package keys holds `plume keys`: the project's API keys managed over the API with an admin
// key (GET, POST /projects/{project_id}/api-keys, DELETE .../{key_id}). `plume admin` manages
// keys on the DynamoDB table instead, for operators.
package keys

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/client"
	"github.com/plumehq/plume/cmd/plume/internal/cmdutil"
	"github.com/plumehq/plume/shared/errs"
)

// NewCmdKeys returns the `plume keys` command group.
func NewCmdKeys(f *cmdutil.Factory) *cobra.Command {
	return newCmdKeys(f, func() bool { return cmdutil.IsTerminal(f.IO.In) })
}

// newCmdKeys is NewCmdKeys with the test of whether standard input is a terminal, where a
// person can confirm a revocation.
func newCmdKeys(f *cmdutil.Factory, terminal func() bool) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "keys <command>",
		Short: "List, create and revoke the project's API keys (admin keys only)",
		Long: `The project's API keys, managed over the API: the key the command runs with must be an
admin key of the project; member and ingest keys are refused (403, exit 3). "plume admin"
manages keys on the DynamoDB table instead, with AWS credentials.`,
		Args: cmdutil.NoArgs,
		RunE: cmdutil.ShowHelp,
	}
	cmd.AddCommand(newCmdList(f), newCmdCreate(f), newCmdRevoke(f, terminal))
	return cmd
}

// Key statuses: revoked wins over expired, as the API's authentication decides.
const (
	statusActive  = "active"
	statusExpired = "expired"
	statusRevoked = "revoked"
)

// keyView is a key as the commands print it: the API's fields and its status at now.
type keyView struct {
	api.APIKey
	Status string `json:"status"`
}

func view(k api.APIKey, now time.Time) keyView {
	status := statusActive
	switch {
	case k.RevokedAt != nil:
		status = statusRevoked
	case k.ExpiresAt != nil && !now.Before(*k.ExpiresAt):
		status = statusExpired
	}
	return keyView{APIKey: k, Status: status}
}

// keyFields are a key's fields in text output of one key.
var keyFields = []cmdutil.Column{
	{Header: "Key ID", Path: "id"}, {Header: "Name", Path: "name"}, {Header: "Role", Path: "role"},
	{Header: "Status", Path: "status"}, {Header: "Display", Path: "display"}, {Header: "User", Path: "user.id"},
	{Header: "User email", Path: "user.email"}, {Header: "User name", Path: "user.name"},
	{Header: "Created", Path: "created_at"}, {Header: "Expires", Path: "expires_at"}, {Header: "Revoked", Path: "revoked_at"},
}

func newCmdList(f *cmdutil.Factory) *cobra.Command {
	var o cmdutil.ListOptions
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the project's API keys, oldest first, revoked and expired ones included",
		Long: `List every API key of the project (GET /projects/{project_id}/api-keys), oldest first,
revoked and expired ones included, with its status (active, expired or revoked). Secrets are
never listed: display is the secret's start, enough to recognise a key.`,
		Example: `  plume keys list --where status=active
  plume keys list --where role=ingest --select id,name,display --output json`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return f.WithClient(cmd, &o, true, func(ctx context.Context, c *client.Client) error {
				list, err := c.Keys(ctx)
				if err != nil {
					return err
				}
				now := f.Now()
				rows := make([]keyView, len(list))
				for i, k := range list {
					rows[i] = view(k, now)
				}
				return f.IO.PrintList(rows, []cmdutil.Column{{Header: "ID", Path: "id"}, {Header: "NAME", Path: "name"},
					{Header: "ROLE", Path: "role"}, {Header: "STATUS", Path: "status"}, {Header: "DISPLAY", Path: "display"},
					{Header: "USER", Path: "user.email"}, {Header: "CREATED", Path: "created_at"}, {Header: "EXPIRES", Path: "expires_at"}}, o.Local())
			})
		},
	}
	cmdutil.AddListFlags(cmd, &o, 0)
	return cmd
}

func newCmdCreate(f *cmdutil.Factory) *cobra.Command {
	var req api.CreateAPIKeyRequest
	var expiresIn time.Duration
	cmd := &cobra.Command{
		Use:   "create --role admin|member|ingest [flags]",
		Short: "Issue an API key of the project and print its secret, once",
		Long: `Issue an API key of the project (POST /projects/{project_id}/api-keys) and print its secret
on stdout. It is shown this once: Plume stores only its hash. The key's details and that warning
go to stderr, so that KEY=$(plume keys create ...) captures the secret alone. With --output
json, stdout is the whole answer: the key's fields and its "secret".

--role is what the key may do:
  admin   everything, key management included
  member  everything but key management
  ingest  only what applications call (spans, feedback, prompts, the model gateway); no reads
Without --expires-in the key does not expire.`,
		Example: `  plume keys create --role ingest --name checkout-service
  plume keys create --role member --email ana@example.com --user-name Ana --expires-in 720h
  KEY=$(plume keys create --role ingest --name ci --quiet)`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cmd.Flags().Changed("expires-in") {
				if expiresIn <= 0 {
					return cmdutil.FlagErrorf("--expires-in must be positive, got %s", expiresIn)
				}
				at := f.Now().Add(expiresIn).UTC()
				req.ExpiresAt = &at
			}
			return f.WithClient(cmd, nil, true, func(ctx context.Context, c *client.Client) error {
				k, err := c.CreateKey(ctx, req)
				if err != nil {
					return err
				}
				if f.IO.JSON() {
					if err := f.IO.WriteJSON(k); err != nil {
						return err
					}
				} else {
					expires := "never expires"
					if k.ExpiresAt != nil {
						expires = "expires " + k.ExpiresAt.UTC().Format(time.RFC3339)
					}
					f.IO.Infof("Created %s key %s (%s) for user %s; it %s.", k.Role, k.ID, k.Display, k.User.ID, expires)
					if _, err := fmt.Fprintln(f.IO.Out, k.Secret); err != nil {
						return err
					}
				}
				f.IO.Infof("warning: this is the only time the key's secret is shown; it cannot be shown again. Store it now.")
				return nil
			})
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&req.Role, "role", "", "the key's `role`, what it may do: admin, member or ingest (required)")
	fl.StringVar(&req.Name, "name", "", "the key's `name`, shown in keys list")
	fl.StringVar(&req.UserEmail, "email", "", "the `email` of the key's user")
	fl.StringVar(&req.UserName, "user-name", "", "the `name` of the key's user")
	fl.DurationVar(&expiresIn, "expires-in", 0, "expire the key after this `duration`, such as 720h (default: never)")
	_ = cmd.MarkFlagRequired("role")
	return cmd
}

func newCmdRevoke(f *cmdutil.Factory, terminal func() bool) *cobra.Command {
	var yes bool
	cmd := &cobra.Command{
		Use:   "revoke <key_id>",
		Short: "Revoke an API key: it stops authenticating; it stays listed as revoked",
		Long: `Revoke an API key of the project (DELETE /projects/{project_id}/api-keys/{key_id}). The key
is refused at once by the API process that revoked it and by the others within their key
cache's lifetime; it stays listed with its revoked_at. Revoking a revoked key changes nothing.
The project's last usable admin key cannot be revoked (409, exit 2): issue another admin key
first.

Without --yes it shows the key and asks "Revoke? [y/N]" on the terminal; any answer but y or
yes revokes nothing and exits 2. When standard input is not a terminal it refuses (exit 2)
unless --yes is given.`,
		Example: `  plume keys revoke 0192f5d4-7c1e-7a3b-9f00-5a1c2e3d4b5f
  plume keys revoke 0192f5d4-7c1e-7a3b-9f00-5a1c2e3d4b5f --yes --output json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id := args[0]
			if !yes && !terminal() {
				return cmdutil.FlagErrorf("refusing to revoke API key %s without confirmation: standard input is not a terminal; pass --yes", id)
			}
			c, err := f.ProjectClient()
			if err != nil {
				return err
			}
			if !yes {
				if err := confirmRevoke(cmd, f, c, id); err != nil {
					return err
				}
			}
			// The revocation has its own --timeout: the wait for an answer is not the server's.
			ctx, cancel := f.Context(cmd.Context())
			defer cancel()
			k, err := c.RevokeKey(ctx, id)
			if err != nil {
				return err
			}
			return f.IO.PrintItem(view(k, f.Now()), keyFields)
		},
	}
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "revoke without asking")
	return cmd
}

// confirmRevoke shows the key to revoke on ErrOut and asks for a y or yes on In. An unknown
// key is the API's 404, as the revocation would answer.
func confirmRevoke(cmd *cobra.Command, f *cmdutil.Factory, c *client.Client, id string) error {
	ctx, cancel := f.Context(cmd.Context())
	list, err := c.Keys(ctx)
	cancel()
	if err != nil {
		return err
	}
	var found *api.APIKey
	for i := range list {
		if list[i].ID == id {
			found = &list[i]
		}
	}
	if found == nil {
		return errs.NotFound("API key %s not found", id)
	}
	k := view(*found, f.Now())
	who := k.User.Email
	if who == "" {
		who = k.User.ID
	}
	fmt.Fprintf(f.IO.ErrOut, "This revokes the %s key %s (%s, %q, of %s, %s): whatever uses it stops authenticating.\nRevoke? [y/N] ",
		k.Role, k.ID, k.Display, k.Name, who, k.Status)
	answer, err := bufio.NewReader(f.IO.In).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("read confirmation: %w", err)
	}
	switch strings.ToLower(strings.TrimSpace(answer)) {
	case "y", "yes":
		return nil
	}
	return errs.Invalid("not revoked: the revocation was not confirmed (answer y, or pass --yes)")
}
