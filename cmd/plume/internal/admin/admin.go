package admin

import (
	"context"
	"regexp"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/spf13/cobra"

	"github.com/plumehq/plume/cmd/plume/internal/cmdutil"
	"github.com/plumehq/plume/shared/ddb"
)

// NewCmdAdmin returns the `plume admin` command group.
func NewCmdAdmin(f *cmdutil.Factory) *cobra.Command {
	t := &target{f: f}
	cmd := &cobra.Command{
		Use:   "admin <command>",
		Short: "Manage the table, projects, API keys and trace aggregates directly in DynamoDB",
		Long: `Operator commands. They work on the DynamoDB table directly, with the AWS SDK's own
configuration from the environment (AWS_PROFILE or AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY,
AWS_REGION, and AWS_ENDPOINT_URL_DYNAMODB or AWS_ENDPOINT_URL for DynamoDB Local, LocalStack
and the like). The table is --table, or TABLE_NAME when the flag is not given.`,
		Example: `  export TABLE_NAME=plume
  plume admin create-project --name "Acme support"
  plume admin create-key --project-id 0b0e3c1e-6a4f-4f59-9a43-2f4b1b0e9d11 --email ada@example.com --expires-in 720h
  plume admin list-keys --project-id 0b0e3c1e-6a4f-4f59-9a43-2f4b1b0e9d11
  plume admin recompute-trace --project-id 0b0e3c1e-6a4f-4f59-9a43-2f4b1b0e9d11 --trace-id 0192f5d4-7c1e-7a3b-9f00-5a1c2e3d4b5f --dry-run`,
		Args: cmdutil.NoArgs,
		RunE: cmdutil.ShowHelp,
	}
	cmd.PersistentFlags().StringVar(&t.flag, "table", "", "DynamoDB table `name` (default: $TABLE_NAME)")
	cmd.AddCommand(
		newCmdCreateTable(f, t),
		newCmdCreateProject(f, t),
		newCmdListProjects(f, t),
		newCmdCreateKey(f, t),
		newCmdListKeys(f, t),
		newCmdRevokeKey(f, t),
		newCmdRecomputeTrace(f, t),
		newCmdRecomputeSession(f, t),
		newCmdReplayEvaluations(f, t),
		newCmdDeleteProject(f, t),
		newCmdReindex(f, t),
	)
	return cmd
}

// tableNamePattern is DynamoDB's rule for table names.
var tableNamePattern = regexp.MustCompile(`^[A-Za-z0-9_.-]{3,255}$`)

// target is the table the admin commands work on: --table, else TABLE_NAME.
type target struct {
	f    *cmdutil.Factory
	flag string
}

// name returns the table's name, or a usage error when there is none or it is not a valid name.
func (t *target) name() (string, error) {
	name := t.flag
	if name == "" {
		name = t.f.Getenv("TABLE_NAME")
	}
	if name == "" {
		return "", cmdutil.FlagErrorf("no table: pass --table or set TABLE_NAME")
	}
	if !tableNamePattern.MatchString(name) {
		return "", cmdutil.FlagErrorf("table name %q is not valid: 3 to 255 letters, digits, '_', '-' or '.'", name)
	}
	return name, nil
}

// client returns the DynamoDB client and the table's name. The name is checked first, so that a
// missing one is reported before the AWS configuration is loaded.
func (t *target) client(ctx context.Context) (*dynamodb.Client, string, error) {
	name, err := t.name()
	if err != nil {
		return nil, "", err
	}
	client, err := t.f.DynamoDB(ctx)
	if err != nil {
		return nil, "", err
	}
	return client, name, nil
}

// authStore returns the store of projects and keys in the table.
func (t *target) authStore(ctx context.Context) (*ddb.AuthStore, error) {
	client, name, err := t.client(ctx)
	if err != nil {
		return nil, err
	}
	return ddb.NewAuthStore(ddb.NewTable(client, name)), nil
}

// traceStore returns the store of spans, traces and sessions in the table.
func (t *target) traceStore(ctx context.Context) (*ddb.TraceStore, error) {
	client, name, err := t.client(ctx)
	if err != nil {
		return nil, err
	}
	return ddb.NewTraceStore(ddb.NewTable(client, name)), nil
}
