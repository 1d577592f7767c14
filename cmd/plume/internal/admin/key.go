package admin

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/plumehq/plume/cmd/plume/internal/cmdutil"
	"github.com/plumehq/plume/shared/auth"
	"github.com/plumehq/plume/shared/ddb"
)

// The status of a key in listings.
const (
	statusActive  = "active"
	statusExpired = "expired"
	statusRevoked = "revoked"
)

// keyStatus is revoked, expired or active, in that order of precedence, as auth.Key.Usable
// decides.
func keyStatus(k auth.Key, now time.Time) string {
	switch {
	case k.RevokedAt != nil:
		return statusRevoked
	case k.ExpiresAt != nil && !now.Before(*k.ExpiresAt):
		return statusExpired
	}
	return statusActive
}

// keyView is a key as the CLI prints it in JSON: the stored fields (never the hash: auth.Key
// does not encode it) and the status.
type keyView struct {
	auth.Key
	Status string `json:"status"`
}

type createKeyOptions struct {
	IO        *cmdutil.IOStreams
	AuthStore func(context.Context) (*ddb.AuthStore, error)
	Now       func() time.Time

	ProjectID string
	User      auth.User
	Label     string
	Role      string
	ExpiresIn time.Duration
	ExpiresAt string
	Secret    string
}

func newCmdCreateKey(f *cmdutil.Factory, t *target) *cobra.Command {
	opts := &createKeyOptions{IO: f.IO, AuthStore: t.authStore, Now: f.Now}
	cmd := &cobra.Command{
		Use:   "create-key --project-id ID [flags]",
		Short: "Issue an API key and print it, once",
		Long: `Issue an API key for a project and print the key on stdout. It is shown this once: Plume
stores only its SHA-256 hash, so it cannot be shown again. Details about the key and that
warning go to stderr, so that KEY=$(plume admin create-key ...) captures the key alone. With
--output json, stdout is {"key": "<the key>", ...the key's fields}.

The key acts as a user: --user-id, or a new random id, with an optional --email and --name.
Without --expires-in or --expires-at the key does not expire.

--role is what the key may do, enforced by the API on every route:
  admin   everything, key management included (the default)
  member  everything but key management
  ingest  only what applications call: sending spans, traces, sessions, attachments, OTLP
          and completion feedback, fetching and ensuring prompts, and the model gateway;
          no trace reads, judges, optimizations, settings or MCP
Give applications ingest keys: a leaked one writes data but reads none.

--secret makes the key the given string instead of a random one (at least 16 characters). It is
for seeding development and test environments with a known key only: a value on a command line
ends up in shell history and process listings.`,
		Example: `  plume admin create-key --project-id 0b0e3c1e-6a4f-4f59-9a43-2f4b1b0e9d11 --email ada@example.com --label laptop --expires-in 720h
  plume admin create-key --project-id 0b0e3c1e-6a4f-4f59-9a43-2f4b1b0e9d11 --role ingest --label checkout-service
  plume admin create-key --project-id 0b0e3c1e-6a4f-4f59-9a43-2f4b1b0e9d11 --expires-at 2030-01-01T00:00:00Z --output json`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if opts.ProjectID == "" {
				return cmdutil.FlagErrorf("--project-id is required")
			}
			if opts.ExpiresIn != 0 && opts.ExpiresAt != "" {
				return cmdutil.FlagErrorf("--expires-in and --expires-at cannot be used together")
			}
			if opts.ExpiresIn < 0 {
				return cmdutil.FlagErrorf("--expires-in must be positive, got %s", opts.ExpiresIn)
			}
			ctx, cancel := f.Context(cmd.Context())
			defer cancel()
			return createKeyRun(ctx, opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.ProjectID, "project-id", "", "the key's project `id` (required)")
	fl.StringVar(&opts.User.ID, "user-id", "", "the `id` of the user the key acts as (default: a random one)")
	fl.StringVar(&opts.User.Email, "email", "", "the user's `email`")
	fl.StringVar(&opts.User.Name, "name", "", "the user's `name`")
	fl.StringVar(&opts.Label, "label", "", "a `label` for the key, shown in list-keys")
	fl.StringVar(&opts.Role, "role", string(auth.DefaultRole), "what the key may do: admin, member or ingest")
	fl.DurationVar(&opts.ExpiresIn, "expires-in", 0, "expire the key after this `duration`, such as 720h")
	fl.StringVar(&opts.ExpiresAt, "expires-at", "", "expire the key at this `time` (RFC 3339)")
	fl.StringVar(&opts.Secret, "secret", "", "use this `key` instead of a random one (dev and test seeding only)")
	return cmd
}

func createKeyRun(ctx context.Context, opts *createKeyOptions) error {
	now := opts.Now()
	role, err := auth.ParseRole(opts.Role)
	if err != nil {
		return cmdutil.FlagErrorf("--role %q is not admin, member or ingest", opts.Role)
	}
	spec := auth.KeySpec{ProjectID: opts.ProjectID, User: opts.User, Label: opts.Label, Role: role, Secret: opts.Secret}
	switch {
	case opts.ExpiresIn > 0:
		at := now.Add(opts.ExpiresIn).UTC()
		spec.ExpiresAt = &at
	case opts.ExpiresAt != "":
		at, err := time.Parse(time.RFC3339, opts.ExpiresAt)
		if err != nil {
			return cmdutil.FlagErrorf("--expires-at %q is not an RFC 3339 time such as 2030-01-01T00:00:00Z", opts.ExpiresAt)
		}
		at = at.UTC()
		spec.ExpiresAt = &at
	}
	// Validate before connecting: a bad flag is reported even without a reachable table.
	secret, key, err := auth.NewKey(spec, now)
	if err != nil {
		return err
	}
	store, err := opts.AuthStore(ctx)
	if err != nil {
		return err
	}
	if err := store.CreateKey(ctx, key); err != nil {
		return err
	}
	if opts.IO.JSON() {
		return opts.IO.WriteJSON(struct {
			Secret string `json:"key"`
			auth.Key
		}{secret, key})
	}
	expires := "never expires"
	if key.ExpiresAt != nil {
		expires = "expires " + formatTime(*key.ExpiresAt)
	}
	opts.IO.Infof("Created %s key %s (%s) in project %s for user %s; it %s.", key.Role, key.ID, key.Display, key.ProjectID, key.User.ID, expires)
	opts.IO.Infof("warning: this is the only time the key is shown; it cannot be shown again. Store it now.")
	_, err = fmt.Fprintln(opts.IO.Out, secret)
	return err
}

type listKeysOptions struct {
	IO        *cmdutil.IOStreams
	AuthStore func(context.Context) (*ddb.AuthStore, error)
	Now       func() time.Time

	ProjectID string
}

func newCmdListKeys(f *cmdutil.Factory, t *target) *cobra.Command {
	opts := &listKeysOptions{IO: f.IO, AuthStore: t.authStore, Now: f.Now}
	cmd := &cobra.Command{
		Use:   "list-keys --project-id ID",
		Short: "List the API keys of a project",
		Long: `List every API key of a project, oldest first, revoked and expired ones included: id,
display prefix, user, label, creation and expiry times, role (admin, member or ingest) and
status (active, expired or revoked). Keys issued before roles existed are admin keys. The user
column shows the email, else the name, else the id. Neither keys nor their hashes are ever
shown.`,
		Example: `  plume admin list-keys --project-id 0b0e3c1e-6a4f-4f59-9a43-2f4b1b0e9d11`,
		Args:    cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if opts.ProjectID == "" {
				return cmdutil.FlagErrorf("--project-id is required")
			}
			if err := auth.ValidateProjectID(opts.ProjectID); err != nil {
				return err
			}
			ctx, cancel := f.Context(cmd.Context())
			defer cancel()
			return listKeysRun(ctx, opts)
		},
	}
	cmd.Flags().StringVar(&opts.ProjectID, "project-id", "", "the project's `id` (required)")
	return cmd
}

func listKeysRun(ctx context.Context, opts *listKeysOptions) error {
	store, err := opts.AuthStore(ctx)
	if err != nil {
		return err
	}
	// An unknown project is an error rather than an empty list: it is most likely a typo.
	if _, err := store.Project(ctx, opts.ProjectID); err != nil {
		return err
	}
	keys, err := store.Keys(ctx, opts.ProjectID)
	if err != nil {
		return err
	}
	slices.SortFunc(keys, func(a, b auth.Key) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	now := opts.Now()
	if opts.IO.JSON() {
		views := make([]keyView, len(keys))
		for i, k := range keys {
			views[i] = keyView{Key: k, Status: keyStatus(k, now)}
		}
		return opts.IO.WriteJSON(views)
	}
	if len(keys) == 0 {
		opts.IO.Infof("No keys in project %s.", opts.ProjectID)
		return nil
	}
	w := tabwriter.NewWriter(opts.IO.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tPREFIX\tUSER\tLABEL\tCREATED\tEXPIRES\tROLE\tSTATUS")
	for _, k := range keys {
		expires := "never"
		if k.ExpiresAt != nil {
			expires = formatTime(*k.ExpiresAt)
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", k.ID, k.Display, userLabel(k.User), dash(k.Label),
			formatTime(k.CreatedAt), expires, k.Role, keyStatus(k, now))
	}
	return w.Flush()
}

// userLabel names a user in listings: the email, else the name, else the id.
func userLabel(u auth.User) string { return cmp.Or(u.Email, u.Name, u.ID) }

// dash stands in for an empty cell.
func dash(s string) string { return cmp.Or(s, "-") }

type revokeKeyOptions struct {
	IO        *cmdutil.IOStreams
	AuthStore func(context.Context) (*ddb.AuthStore, error)
	Now       func() time.Time

	ProjectID string
	KeyID     string
}

func newCmdRevokeKey(f *cmdutil.Factory, t *target) *cobra.Command {
	opts := &revokeKeyOptions{IO: f.IO, AuthStore: t.authStore, Now: f.Now}
	cmd := &cobra.Command{
		Use:   "revoke-key --project-id ID --key-id ID",
		Short: "Revoke an API key",
		Long: `Revoke an API key of a project: requests with it fail from now on (servers that cached it
stop accepting it within a minute). Revoking a revoked key changes nothing. With --output json,
prints the key.`,
		Example: `  plume admin revoke-key --project-id 0b0e3c1e-6a4f-4f59-9a43-2f4b1b0e9d11 --key-id 5d6f0a57-8a0e-4f4e-b1a4-3c3bd1e5a6c2`,
		Args:    cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if opts.ProjectID == "" {
				return cmdutil.FlagErrorf("--project-id is required")
			}
			if opts.KeyID == "" {
				return cmdutil.FlagErrorf("--key-id is required")
			}
			if err := auth.ValidateProjectID(opts.ProjectID); err != nil {
				return err
			}
			ctx, cancel := f.Context(cmd.Context())
			defer cancel()
			return revokeKeyRun(ctx, opts)
		},
	}
	cmd.Flags().StringVar(&opts.ProjectID, "project-id", "", "the project's `id` (required)")
	cmd.Flags().StringVar(&opts.KeyID, "key-id", "", "the key's `id`, as list-keys shows it (required)")
	return cmd
}

func revokeKeyRun(ctx context.Context, opts *revokeKeyOptions) error {
	store, err := opts.AuthStore(ctx)
	if err != nil {
		return err
	}
	now := opts.Now().UTC()
	k, err := store.RevokeKey(ctx, opts.ProjectID, opts.KeyID, now)
	if err != nil {
		return err
	}
	if opts.IO.JSON() {
		return opts.IO.WriteJSON(keyView{Key: k, Status: keyStatus(k, now)})
	}
	if k.RevokedAt.Equal(now) {
		opts.IO.Infof("Revoked key %s (%s).", k.ID, k.Display)
	} else {
		opts.IO.Infof("Key %s (%s) was already revoked at %s.", k.ID, k.Display, formatTime(*k.RevokedAt))
	}
	return nil
}
