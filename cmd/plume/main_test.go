package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/cmd/plume/internal/cmdutil"
	"github.com/plumehq/plume/shared/blob/blobtest"
	"github.com/plumehq/plume/shared/ddb"
	"github.com/plumehq/plume/shared/ddb/ddbtest"
	"github.com/plumehq/plume/shared/errs"
)

// harness runs plume command lines in-process against a fresh DynamoDB Local table. The client
// is injected through the Factory; the environment is a map, never the process's.
type harness struct {
	t      *testing.T
	client *dynamodb.Client
	table  string
	env    map[string]string
	now    time.Time // the CLI's clock; zero means the system clock
	// stream applies the table's stream to the aggregates, from where it left off
	// (applyAggregates).
	stream *ddb.StreamPoller
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	client, _, table := ddbtest.NewStreamTable(t) // the recompute tests apply the aggregates
	return &harness{t: t, client: client, table: table, env: map[string]string{
		"TABLE_NAME":                table,
		"AWS_ENDPOINT_URL_DYNAMODB": ddbtest.Endpoint(t),
	}}
}

// result is what a command line did.
type result struct {
	code   int
	stdout string
	stderr string
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
}

// run executes plume with args.
func (h *harness) run(args ...string) result {
	h.t.Helper()
	var stdout, stderr bytes.Buffer
	f := cmdutil.New(func(k string) string { return h.env[k] }, &stdout, &stderr)
	f.DynamoDB = func(context.Context) (*dynamodb.Client, error) { return h.client, nil }
	if !h.now.IsZero() {
		f.Now = func() time.Time { return h.now }
	}
	code := execute(context.Background(), f, args)
	return result{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

// ok runs args, requires success and returns stdout.
func (h *harness) ok(args ...string) string {
	h.t.Helper()
	r := h.run(args...)
	require.Equal(h.t, exitOK, r.code, "plume %s\n%s", strings.Join(args, " "), r)
	return r.stdout
}

// jsonError is the body of an error in json mode.
type jsonError struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func TestClassify(t *testing.T) {
	apiErr := func(code string) error {
		return fmt.Errorf("get PROJECT: %w", &smithy.OperationError{
			ServiceID: "DynamoDB", OperationName: "GetItem",
			Err: &smithy.GenericAPIError{Code: code, Message: "nope"},
		})
	}
	tests := []struct {
		name string
		err  error
		exit int
		code errs.Code
		msg  string // a substring of the message
	}{
		{"differences", cmdutil.ErrDiffers, exitDiffers, "", ""},
		{"wrapped differences", fmt.Errorf("recompute: %w", cmdutil.ErrDiffers), exitDiffers, "", ""},
		{"flag error", cmdutil.FlagErrorf("--name is required"), exitUsage, errs.CodeInvalid, "--name is required"},
		{"invalid", errs.Invalid("project id %q is not a UUID", "x"), exitUsage, errs.CodeInvalid, `project id "x" is not a UUID`},
		{"not found", errs.NotFound("project p not found"), exitUsage, errs.CodeNotFound, "project p not found"},
		{"conflict", errs.Conflict("project p already exists"), exitUsage, errs.CodeConflict, "already exists"},
		{"unauthenticated", errs.Unauthenticated("no usable AWS credentials"), exitAuth, errs.CodeUnauthenticated, "credentials"},
		{"wrapped unauthenticated", fmt.Errorf("get identity: %w", errs.Unauthenticated("no usable AWS credentials")), exitAuth, errs.CodeUnauthenticated, "get identity"},
		{"forbidden", errs.Forbidden("not yours"), exitAuth, errs.CodeForbidden, "not yours"},
		{"throttled", fmt.Errorf("query: %w: %w", errs.Unavailable("storage is throttling"), apiErr("ThrottlingException")), exitRemote, errs.CodeUnavailable, "throttling"},
		{"access denied", apiErr("AccessDeniedException"), exitAuth, errs.CodeForbidden, "AccessDeniedException"},
		{"unrecognized client", apiErr("UnrecognizedClientException"), exitAuth, errs.CodeUnauthenticated, "UnrecognizedClientException"},
		{"expired token", apiErr("ExpiredTokenException"), exitAuth, errs.CodeUnauthenticated, "ExpiredTokenException"},
		{"missing table", apiErr("ResourceNotFoundException"), exitUsage, errs.CodeNotFound, "TABLE_NAME"},
		{"other AWS error", apiErr("InternalServerError"), exitRemote, errs.CodeInternal, "InternalServerError"},
		{"timeout", fmt.Errorf("query: %w", context.DeadlineExceeded), exitRemote, errs.CodeUnavailable, "timed out"},
		{"network", fmt.Errorf("query: %w", &smithyhttp.RequestSendError{Err: errors.New("connection refused")}), exitRemote, errs.CodeUnavailable, "connection refused"},
		{"anything else", errors.New("boom"), exitRemote, errs.CodeInternal, "boom"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := classify(tt.err)
			assert.Equal(t, tt.exit, got.exit)
			assert.Equal(t, tt.exit == exitDiffers, got.silent, "only differences are not reported")
			assert.Equal(t, tt.code, got.code)
			assert.Contains(t, got.message, tt.msg)
		})
	}
}

func TestUsageErrors(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	project := strings.TrimSpace(h.ok("admin", "create-project", "--name", "taken"))
	unknown := "0b0e3c1e-6a4f-4f59-9a43-2f4b1b0e9d11"

	tests := []struct {
		name   string
		noEnv  bool // run without TABLE_NAME
		args   []string
		code   errs.Code
		stderr string
	}{
		{"missing project id", false, []string{"admin", "create-key"}, errs.CodeInvalid, "--project-id is required"},
		{"unknown project", false, []string{"admin", "create-key", "--project-id", unknown}, errs.CodeNotFound, "project " + unknown + " not found"},
		{"malformed project id", false, []string{"admin", "create-key", "--project-id", "acme"}, errs.CodeInvalid, "not a UUID"},
		{"missing table", true, []string{"admin", "list-projects"}, errs.CodeInvalid, "pass --table or set TABLE_NAME"},
		{"missing table for create-key", true, []string{"admin", "create-key", "--project-id", project}, errs.CodeInvalid, "TABLE_NAME"},
		{"invalid table name", false, []string{"admin", "list-projects", "--table", "a b"}, errs.CodeInvalid, "not valid"},
		{"table does not exist", false, []string{"admin", "list-keys", "--project-id", project, "--table", "no-such-table"}, errs.CodeNotFound, "create-table"},
		{"both expiries", false, []string{"admin", "create-key", "--project-id", project, "--expires-in", "1h", "--expires-at", "2099-01-01T00:00:00Z"}, errs.CodeInvalid, "cannot be used together"},
		{"bad expires-at", false, []string{"admin", "create-key", "--project-id", project, "--expires-at", "tomorrow"}, errs.CodeInvalid, "RFC 3339"},
		{"past expires-at", false, []string{"admin", "create-key", "--project-id", project, "--expires-at", "2001-01-01T00:00:00Z"}, errs.CodeInvalid, "in the past"},
		{"negative expires-in", false, []string{"admin", "create-key", "--project-id", project, "--expires-in", "-1h"}, errs.CodeInvalid, "must be positive"},
		{"bad expires-in", false, []string{"admin", "create-key", "--project-id", project, "--expires-in", "a month"}, errs.CodeInvalid, "--expires-in"},
		{"bad email", false, []string{"admin", "create-key", "--project-id", project, "--email", "ada"}, errs.CodeInvalid, "not an email address"},
		{"short secret", false, []string{"admin", "create-key", "--project-id", project, "--secret", "short"}, errs.CodeInvalid, "at least 16 characters"},
		{"missing name", false, []string{"admin", "create-project"}, errs.CodeInvalid, "--name is required"},
		{"malformed id", false, []string{"admin", "create-project", "--name", "x", "--id", "x"}, errs.CodeInvalid, "not a UUID"},
		{"taken id", false, []string{"admin", "create-project", "--name", "again", "--id", project}, errs.CodeConflict, "already exists"},
		{"list keys without project id", false, []string{"admin", "list-keys"}, errs.CodeInvalid, "--project-id is required"},
		{"list keys of unknown project", false, []string{"admin", "list-keys", "--project-id", unknown}, errs.CodeNotFound, "not found"},
		{"revoke without key id", false, []string{"admin", "revoke-key", "--project-id", project}, errs.CodeInvalid, "--key-id is required"},
		{"revoke unknown key", false, []string{"admin", "revoke-key", "--project-id", project, "--key-id", unknown}, errs.CodeNotFound, "not found"},
		{"unknown command", false, []string{"bogus"}, errs.CodeInvalid, `unknown command "bogus" for "plume"`},
		{"unknown admin command", false, []string{"admin", "create-kee"}, errs.CodeInvalid, "did you mean create-key?"},
		{"unexpected argument", false, []string{"admin", "list-projects", "extra"}, errs.CodeInvalid, "takes no arguments"},
		{"unknown flag", false, []string{"admin", "list-projects", "--bogus"}, errs.CodeInvalid, "unknown flag: --bogus"},
		{"bad output", false, []string{"--output", "yaml", "admin", "list-projects"}, errs.CodeInvalid, "want text or json"},
		{"zero timeout", false, []string{"--timeout", "0s", "admin", "list-projects"}, errs.CodeInvalid, "--timeout must be positive"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := *h
			h.t = t
			if tt.noEnv {
				h.env = map[string]string{"AWS_ENDPOINT_URL_DYNAMODB": h.env["AWS_ENDPOINT_URL_DYNAMODB"]}
			}
			r := h.run(tt.args...)
			assert.Equal(t, exitUsage, r.code, "%s", r)
			assert.Empty(t, r.stdout)
			assert.True(t, strings.HasPrefix(r.stderr, "error: "), "%s", r)
			assert.Contains(t, r.stderr, tt.stderr)

			// The same in json mode, unless the --output flag itself is the error.
			if tt.name == "bad output" {
				return
			}
			r = h.run(append([]string{"--output", "json"}, tt.args...)...)
			assert.Equal(t, exitUsage, r.code, "%s", r)
			assert.Empty(t, r.stdout)
			var body jsonError
			require.NoError(t, json.Unmarshal([]byte(r.stderr), &body), "stderr is not JSON: %s", r.stderr)
			assert.Equal(t, string(tt.code), body.Error.Code)
			assert.Contains(t, body.Error.Message, tt.stderr)
		})
	}
}

func TestTimeoutExits4(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	r := h.run("--timeout", "1ns", "--output", "json", "admin", "list-projects")
	assert.Equal(t, exitRemote, r.code, "%s", r)
	var body jsonError
	require.NoError(t, json.Unmarshal([]byte(r.stderr), &body), r.stderr)
	assert.Equal(t, string(errs.CodeUnavailable), body.Error.Code)
	assert.Contains(t, body.Error.Message, "timed out")
}

// TestCredentialFailureExits3 runs a command with a client built by cmdutil.NewDynamoDBClient,
// as the real CLI builds it, from a configuration whose credentials cannot be had.
func TestCredentialFailureExits3(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	cfg := aws.Config{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(ddbtest.Endpoint(t)),
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{}, errors.New("the SSO session has expired")
		}),
	}
	h.client = cmdutil.NewDynamoDBClient(cfg, true)
	r := h.run("admin", "list-projects")
	assert.Equal(t, exitAuth, r.code, "%s", r)
	assert.Contains(t, r.stderr, "no usable AWS credentials")
	assert.Contains(t, r.stderr, "the SSO session has expired")
}

// TestRunUsesSDKEnvironment is the one test of the real wiring (cmdutil.New's DynamoDB client:
// config.AWS, AWS_ENDPOINT_URL_DYNAMODB, ddb.NewClient). The SDK reads its configuration from
// the process environment only, so this test sets it; it is therefore not parallel.
func TestRunUsesSDKEnvironment(t *testing.T) {
	endpoint := ddbtest.Endpoint(t)
	for k, v := range map[string]string{
		"AWS_ENDPOINT_URL_DYNAMODB":   endpoint,
		"AWS_REGION":                  "us-east-1",
		"AWS_ACCESS_KEY_ID":           blobtest.AccessKeyFor(t), // ddbtest's credentials: DynamoDB Local keeps one database per key
		"AWS_SECRET_ACCESS_KEY":       blobtest.SecretKey,
		"AWS_SESSION_TOKEN":           "",
		"AWS_PROFILE":                 "",
		"AWS_CONFIG_FILE":             "/dev/null",
		"AWS_SHARED_CREDENTIALS_FILE": "/dev/null",
	} {
		t.Setenv(k, v)
	}
	table := "plume-cli-env-" + fmt.Sprint(time.Now().UnixNano())
	t.Cleanup(func() {
		_, _ = ddbtest.Client(t, nil).DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: &table})
	})
	getenv := func(k string) string {
		if k == "TABLE_NAME" {
			return table
		}
		return os.Getenv(k)
	}
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"admin", "create-table", "--timeout", "1m"}, getenv, &stdout, &stderr)
	require.Equal(t, exitOK, code, stderr.String())
	assert.Contains(t, stderr.String(), "Table "+table+" is ready.")

	stdout.Reset()
	stderr.Reset()
	code = run(context.Background(), []string{"admin", "create-project", "--name", "env"}, getenv, &stdout, &stderr)
	require.Equal(t, exitOK, code, stderr.String())
	id := strings.TrimSpace(stdout.String())

	store := ddb.NewAuthStore(ddb.NewTable(ddbtest.Client(t, nil), table))
	p, err := store.Project(context.Background(), id)
	require.NoError(t, err)
	assert.Equal(t, "env", p.Name)
}
