package admin

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/spf13/cobra"

	"github.com/plumehq/plume/cmd/plume/internal/cmdutil"
	"github.com/plumehq/plume/infra"
)

type createTableOptions struct {
	IO     *cmdutil.IOStreams
	Client func(context.Context) (*dynamodb.Client, string, error)
}

func newCmdCreateTable(f *cmdutil.Factory, t *target) *cobra.Command {
	opts := &createTableOptions{IO: f.IO, Client: t.client}
	return &cobra.Command{
		Use:   "create-table",
		Short: "Create the Plume table, for local or self-managed setups",
		Long: `Create the DynamoDB table with Plume's schema (the one template.yaml deploys), wait until it
is active and turn on TTL. Running it on an existing table changes nothing.

Deployments through template.yaml already have the table; this is for DynamoDB Local,
LocalStack or a table managed outside CloudFormation. On AWS, creating a table can take longer
than the default --timeout: pass --timeout 2m.`,
		Example: `  AWS_ENDPOINT_URL_DYNAMODB=http://localhost:8000 plume admin create-table --table plume`,
		Args:    cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, cancel := f.Context(cmd.Context())
			defer cancel()
			return createTableRun(ctx, opts)
		},
	}
}

func createTableRun(ctx context.Context, opts *createTableOptions) error {
	client, name, err := opts.Client(ctx)
	if err != nil {
		return err
	}
	if err := infra.CreateTable(ctx, client, name); err != nil {
		return err
	}
	if opts.IO.JSON() {
		return opts.IO.WriteJSON(map[string]string{"table": name, "status": "ACTIVE"})
	}
	opts.IO.Infof("Table %s is ready.", name)
	return nil
}
