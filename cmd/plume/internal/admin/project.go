package admin

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"

	"github.com/google/uuid"
	"github.com/spf13/cobra"

	"github.com/plumehq/plume/cmd/plume/internal/cmdutil"
	"github.com/plumehq/plume/shared/auth"
	"github.com/plumehq/plume/shared/ddb"
)

// maxProjectNameLen bounds a project's name; it is a label for people.
const maxProjectNameLen = 200

type createProjectOptions struct {
	IO        *cmdutil.IOStreams
	AuthStore func(context.Context) (*ddb.AuthStore, error)
	Now       func() time.Time

	Name string
	ID   string
}

func newCmdCreateProject(f *cmdutil.Factory, t *target) *cobra.Command {
	opts := &createProjectOptions{IO: f.IO, AuthStore: t.authStore, Now: f.Now}
	cmd := &cobra.Command{
		Use:   "create-project --name NAME [--id UUID]",
		Short: "Create a project and print its id",
		Long: `Create a project: the tenant that keys, prompts and traces belong to. Prints the new
project's id (with --output json, the project).

A project id is a UUID, random unless --id gives one; an id that is taken is an error.`,
		Example: `  plume admin create-project --name "Acme support"
  PROJECT_ID=$(plume admin create-project --name staging --quiet)`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.Name = strings.TrimSpace(opts.Name)
			if opts.Name == "" {
				return cmdutil.FlagErrorf("--name is required")
			}
			if len(opts.Name) > maxProjectNameLen {
				return cmdutil.FlagErrorf("--name is longer than %d bytes", maxProjectNameLen)
			}
			if strings.ContainsFunc(opts.Name, unicode.IsControl) {
				return cmdutil.FlagErrorf("--name contains control characters")
			}
			if opts.ID != "" {
				if err := auth.ValidateProjectID(opts.ID); err != nil {
					return err
				}
			}
			ctx, cancel := f.Context(cmd.Context())
			defer cancel()
			return createProjectRun(ctx, opts)
		},
	}
	cmd.Flags().StringVar(&opts.Name, "name", "", "the project's `name` (required)")
	cmd.Flags().StringVar(&opts.ID, "id", "", "the project's id, a `UUID` (default: a random one)")
	return cmd
}

func createProjectRun(ctx context.Context, opts *createProjectOptions) error {
	store, err := opts.AuthStore(ctx)
	if err != nil {
		return err
	}
	p := auth.Project{ID: opts.ID, Name: opts.Name, CreatedAt: opts.Now().UTC()}
	if p.ID == "" {
		p.ID = uuid.NewString()
	}
	if err := store.CreateProject(ctx, p); err != nil {
		return err
	}
	if opts.IO.JSON() {
		return opts.IO.WriteJSON(p)
	}
	opts.IO.Infof("Created project %q.", p.Name)
	_, err = fmt.Fprintln(opts.IO.Out, p.ID)
	return err
}

type listProjectsOptions struct {
	IO        *cmdutil.IOStreams
	AuthStore func(context.Context) (*ddb.AuthStore, error)
}

func newCmdListProjects(f *cmdutil.Factory, t *target) *cobra.Command {
	opts := &listProjectsOptions{IO: f.IO, AuthStore: t.authStore}
	return &cobra.Command{
		Use:   "list-projects",
		Short: "List every project",
		Long: `List every project, oldest first: id, name and creation time (with --output json, the
projects). A project created a moment ago can be missing for a second: the list is read from
an eventually consistent index.`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, cancel := f.Context(cmd.Context())
			defer cancel()
			return listProjectsRun(ctx, opts)
		},
	}
}

func listProjectsRun(ctx context.Context, opts *listProjectsOptions) error {
	store, err := opts.AuthStore(ctx)
	if err != nil {
		return err
	}
	projects, err := store.Projects(ctx)
	if err != nil {
		return err
	}
	slices.SortFunc(projects, func(a, b auth.Project) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	if opts.IO.JSON() {
		return opts.IO.WriteJSON(projects)
	}
	if len(projects) == 0 {
		opts.IO.Infof("No projects.")
		return nil
	}
	w := tabwriter.NewWriter(opts.IO.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tNAME\tCREATED")
	for _, p := range projects {
		fmt.Fprintf(w, "%s\t%s\t%s\n", p.ID, p.Name, formatTime(p.CreatedAt))
	}
	return w.Flush()
}

// formatTime renders a time in listings: RFC 3339 in UTC, to the second.
func formatTime(t time.Time) string { return t.UTC().Format(time.RFC3339) }
