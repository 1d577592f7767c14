package cmdutil

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/plumehq/plume/shared/config"
	"github.com/plumehq/plume/shared/ddb"
	"github.com/plumehq/plume/shared/errs"
)

// DefaultTimeout is the default of the global --timeout.
const DefaultTimeout = 20 * time.Second

// Factory gives commands their dependencies, after cli/cli's cmdutil.Factory. Tests replace
// fields (the DynamoDB client, the clock) before building the root command. The root command's
// global flags write into IO.Format, IO.Quiet and Timeout, so commands read those when they run.
type Factory struct {
	IO *IOStreams
	// Getenv reads the environment (TABLE_NAME, AWS_ENDPOINT_URL*).
	Getenv func(string) string
	// Now is the clock: key creation and expiry times, the status of listed keys.
	Now func() time.Time
	// Timeout is the global --timeout: the limit on everything a command does remotely.
	Timeout time.Duration
	// DynamoDB returns the client the admin commands use.
	DynamoDB func(ctx context.Context) (*dynamodb.Client, error)
	// Flags are the global credential flags (--api-key, --api-base-url, --project-id) of the
	// client commands, which talk to the API.
	Flags CredentialFlags
	// HTTPClient is the client commands' HTTP client (nil: the default).
	HTTPClient *http.Client
}

// CredentialFlags are the values of the global credential flags; "" when not given.
type CredentialFlags struct {
	APIKey, APIBaseURL, ProjectID string
}

// New returns the Factory of the real CLI: the AWS SDK's configuration from the environment,
// the system clock, output to stdout and stderr.
func New(getenv func(string) string, stdout, stderr io.Writer) *Factory {
	return &Factory{
		IO:       &IOStreams{In: os.Stdin, Out: stdout, ErrOut: stderr, Format: FormatText},
		Getenv:   getenv,
		Now:      time.Now,
		Timeout:  DefaultTimeout,
		DynamoDB: envDynamoDB(getenv),
	}
}

// Context returns parent limited to the global --timeout.
func (f *Factory) Context(parent context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(parent, f.Timeout)
}

// envDynamoDB builds the client from the SDK's own configuration sources only (credentials
// chain, AWS_REGION, AWS_PROFILE, AWS_ENDPOINT_URL_DYNAMODB / AWS_ENDPOINT_URL), as the Lambda
// functions do. A configuration that cannot be loaded, or has no region, is an errs.CodeInvalid
// error: the operator has to fix the environment.
func envDynamoDB(getenv func(string) string) func(context.Context) (*dynamodb.Client, error) {
	return func(ctx context.Context) (*dynamodb.Client, error) {
		cfg, err := config.AWS(ctx)
		if err != nil {
			return nil, errs.Invalid("%v", err)
		}
		if cfg.Region == "" {
			return nil, errs.Invalid("no AWS region configured: set AWS_REGION, or a region in the AWS_PROFILE's configuration")
		}
		custom := getenv("AWS_ENDPOINT_URL_DYNAMODB") != "" || getenv("AWS_ENDPOINT_URL") != ""
		return NewDynamoDBClient(cfg, custom), nil
	}
}

// NewDynamoDBClient returns ddb.NewClient(cfg, customEndpoint) with cfg's credentials provider
// wrapped so that failing to obtain credentials (none configured, an expired SSO session, an
// unreachable instance metadata service) is an errs.CodeUnauthenticated error, which the CLI
// reports with exit code 3.
func NewDynamoDBClient(cfg aws.Config, customEndpoint bool) *dynamodb.Client {
	if cfg.Credentials != nil {
		cfg.Credentials = credentialsProvider{cfg.Credentials}
	}
	return ddb.NewClient(cfg, customEndpoint)
}

type credentialsProvider struct{ aws.CredentialsProvider }

func (p credentialsProvider) Retrieve(ctx context.Context) (aws.Credentials, error) {
	creds, err := p.CredentialsProvider.Retrieve(ctx)
	if err != nil && ctx.Err() == nil {
		return creds, fmt.Errorf("%w: %w", errs.Unauthenticated("no usable AWS credentials"), err)
	}
	return creds, nil
}
