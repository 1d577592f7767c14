package config

import (
	"bufio"
	"context"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/shared/awsjson"
)

// resolved is what a configuration decides that a Plume function depends on: the region, the
// credentials and each service client's endpoint.
type resolved struct {
	Region, KeyID, Secret, Token string
	Endpoints                    map[string]string
}

func resolve(t *testing.T, cfg aws.Config) resolved {
	t.Helper()
	r := resolved{Region: cfg.Region, Endpoints: map[string]string{}}
	if cfg.Credentials != nil {
		creds, err := cfg.Credentials.Retrieve(context.Background())
		require.NoError(t, err)
		r.KeyID, r.Secret, r.Token = creds.AccessKeyID, creds.SecretAccessKey, creds.SessionToken
	}
	for name, endpoint := range map[string]*string{
		"dynamodb":        dynamodb.NewFromConfig(cfg).Options().BaseEndpoint,
		"dynamodbstreams": dynamodbstreams.NewFromConfig(cfg).Options().BaseEndpoint,
		"s3":              s3.NewFromConfig(cfg).Options().BaseEndpoint,
		"sqs":             sqs.NewFromConfig(cfg).Options().BaseEndpoint,
		"secretsmanager":  secretsmanager.NewFromConfig(cfg).Options().BaseEndpoint,
	} {
		r.Endpoints[name] = aws.ToString(endpoint)
	}
	for _, svc := range []awsjson.Service{awsjson.SQS, awsjson.EventBridge, awsjson.SecretsManager} {
		r.Endpoints["awsjson "+svc.ID] = awsjson.New(cfg, svc).Endpoint()
	}
	return r
}

// sdkEndpoints are the endpoints the SDK's clients of the services shared/awsjson speaks
// resolve for cfg: their configured endpoint, else the region's.
func sdkEndpoints(t *testing.T, cfg aws.Config) map[string]string {
	t.Helper()
	ctx := context.Background()
	out := map[string]string{}
	sq := sqs.NewFromConfig(cfg).Options()
	e, err := sqs.NewDefaultEndpointResolverV2().ResolveEndpoint(ctx, sqs.EndpointParameters{Region: &sq.Region, Endpoint: sq.BaseEndpoint})
	require.NoError(t, err)
	out[awsjson.SQS.ID] = e.URI.String()
	eb := eventbridge.NewFromConfig(cfg).Options()
	e, err = eventbridge.NewDefaultEndpointResolverV2().ResolveEndpoint(ctx, eventbridge.EndpointParameters{Region: &eb.Region, Endpoint: eb.BaseEndpoint})
	require.NoError(t, err)
	out[awsjson.EventBridge.ID] = e.URI.String()
	sm := secretsmanager.NewFromConfig(cfg).Options()
	e, err = secretsmanager.NewDefaultEndpointResolverV2().ResolveEndpoint(ctx, secretsmanager.EndpointParameters{Region: &sm.Region, Endpoint: sm.BaseEndpoint})
	require.NoError(t, err)
	out[awsjson.SecretsManager.ID] = e.URI.String()
	return out
}

// prefixes are the endpoint prefixes of awsjson's services, by id.
var prefixes = map[string]string{awsjson.SQS.ID: awsjson.SQS.EndpointPrefix, awsjson.EventBridge.ID: awsjson.EventBridge.EndpointPrefix,
	awsjson.SecretsManager.ID: awsjson.SecretsManager.EndpointPrefix}

// TestAWSFromEnvAsTheDefaultChain: for the environments a Lambda function or a test of its
// bootstrap has, the configuration read from the environment alone decides what the SDK's
// whole default chain decides.
func TestAWSFromEnvAsTheDefaultChain(t *testing.T) {
	creds := map[string]string{"AWS_ACCESS_KEY_ID": "AKID", "AWS_SECRET_ACCESS_KEY": "secret", "AWS_SESSION_TOKEN": "token"}
	with := func(extra map[string]string) map[string]string {
		env := map[string]string{}
		for _, m := range []map[string]string{creds, extra} {
			for k, v := range m {
				env[k] = v
			}
		}
		return env
	}
	for name, env := range map[string]map[string]string{
		"Lambda":                     with(map[string]string{"AWS_REGION": "eu-west-1", "AWS_DEFAULT_REGION": "eu-west-1"}),
		"default region only":        with(map[string]string{"AWS_DEFAULT_REGION": "us-west-2"}),
		"region before default":      with(map[string]string{"AWS_REGION": "eu-west-1", "AWS_DEFAULT_REGION": "us-west-2"}),
		"no session token":           {"AWS_ACCESS_KEY_ID": "AKID", "AWS_SECRET_ACCESS_KEY": "secret", "AWS_REGION": "us-east-1"},
		"one endpoint for all":       with(map[string]string{"AWS_REGION": "us-east-1", "AWS_ENDPOINT_URL": "http://127.0.0.1:1"}),
		"an endpoint per service":    with(map[string]string{"AWS_REGION": "us-east-1", "AWS_ENDPOINT_URL_DYNAMODB": "http://127.0.0.1:2", "AWS_ENDPOINT_URL_DYNAMODB_STREAMS": "http://127.0.0.1:3", "AWS_ENDPOINT_URL_S3": "http://127.0.0.1:4", "AWS_ENDPOINT_URL_SQS": "http://127.0.0.1:5", "AWS_ENDPOINT_URL_SECRETS_MANAGER": "http://127.0.0.1:6", "AWS_ENDPOINT_URL_EVENTBRIDGE": "http://127.0.0.1:7"}),
		"a service's before the one": with(map[string]string{"AWS_REGION": "us-east-1", "AWS_ENDPOINT_URL": "http://127.0.0.1:1", "AWS_ENDPOINT_URL_S3": "http://127.0.0.1:4"}),
		"endpoints ignored":          with(map[string]string{"AWS_REGION": "us-east-1", "AWS_ENDPOINT_URL": "http://127.0.0.1:1", "AWS_ENDPOINT_URL_S3": "http://127.0.0.1:4", "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS": "true"}),
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			// Nothing of this machine's: no config files, no variable the table does not set.
			for _, kv := range os.Environ() {
				if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "AWS_") {
					t.Setenv(k, "")
					os.Unsetenv(k)
				}
			}
			t.Setenv("AWS_CONFIG_FILE", filepath.Join(dir, "config"))
			t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(dir, "credentials"))
			t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
			for k, v := range env {
				t.Setenv(k, v)
			}
			chain, err := awsconfig.LoadDefaultConfig(context.Background())
			require.NoError(t, err)
			ours, err := AWSFromEnv(context.Background(), func(k string) string { return env[k] })
			require.NoError(t, err)
			assert.Equal(t, resolve(t, chain), resolve(t, ours))
			// shared/awsjson reaches each service where the SDK's client of it would.
			for id, want := range sdkEndpoints(t, chain) {
				assert.Equal(t, want, awsjson.New(ours, awsjson.Service{ID: id, EndpointPrefix: prefixes[id]}).Endpoint(), id)
			}
		})
	}
}

// TestAWSFromEnvTrustsTheCABundle: AWS_CA_BUNDLE's authorities are trusted, and a bundle that
// cannot be read is an error at start rather than at the first request.
func TestAWSFromEnvTrustsTheCABundle(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	bundle := filepath.Join(t.TempDir(), "ca.pem")
	require.NoError(t, os.WriteFile(bundle, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600))

	get := func(cfg aws.Config) error {
		req, err := http.NewRequest(http.MethodGet, srv.URL, nil)
		require.NoError(t, err)
		resp, err := cfg.HTTPClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	cfg, err := AWSFromEnv(context.Background(), func(k string) string { return map[string]string{"AWS_CA_BUNDLE": bundle}[k] })
	require.NoError(t, err)
	require.NoError(t, get(cfg))

	cfg, err = AWSFromEnv(context.Background(), func(string) string { return "" })
	require.NoError(t, err)
	assert.Nil(t, cfg.HTTPClient, "without a bundle the SDK's own client")

	_, err = AWSFromEnv(context.Background(), func(k string) string { return map[string]string{"AWS_CA_BUNDLE": srv.URL}[k] })
	assert.ErrorContains(t, err, "AWS_CA_BUNDLE")
}

// TestLambdaBuildsLinkNoDefaultChain: no bootstrap the Makefile builds links the SDK's default
// chain (its config package brings STS, SSO, SSO OIDC and sign-in clients, about 1.5 MB).
func TestLambdaBuildsLinkNoDefaultChain(t *testing.T) {
	for _, dep := range lambdaDeps(t) {
		for _, banned := range []string{"github.com/aws/aws-sdk-go-v2/config", "github.com/aws/aws-sdk-go-v2/service/sts", "github.com/aws/aws-sdk-go-v2/service/sso"} {
			assert.False(t, dep == banned || strings.HasPrefix(dep, banned+"/"), "a Lambda bootstrap links %s", dep)
		}
	}
}

// TestLambdaBuildsLinkNoDynamoDBSchemas: no bootstrap links the schemas package of the DynamoDB
// or DynamoDB Streams clients, which builds every operation's schema when a function starts
// (about 1 ms of every cold start, 3,000 allocations). Their schema-based releases (DynamoDB
// v1.69.0, Streams v1.42.0) bring it; go.mod holds the last releases before them, and
// docs/performance.md says why. Moving to a later release is a choice to make there, not a
// side effect of an upgrade.
func TestLambdaBuildsLinkNoDynamoDBSchemas(t *testing.T) {
	for _, dep := range lambdaDeps(t) {
		for _, banned := range []string{"github.com/aws/aws-sdk-go-v2/service/dynamodb/schemas", "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/schemas"} {
			assert.NotEqual(t, banned, dep, "a Lambda bootstrap links %s", dep)
		}
	}
}

// lambdaDeps lists the packages, standard library aside, that the bootstraps the Makefile builds
// link.
func lambdaDeps(t *testing.T) []string {
	t.Helper()
	f, err := os.Open("../../Makefile")
	require.NoError(t, err)
	defer f.Close()
	built := regexp.MustCompile(`^\t\$\(LAMBDA_BUILD\) .* (\./\S+)$`)
	var pkgs []string
	for sc := bufio.NewScanner(f); sc.Scan(); {
		if m := built.FindStringSubmatch(sc.Text()); m != nil {
			pkgs = append(pkgs, m[1])
		}
	}
	require.NotEmpty(t, pkgs)
	cmd := exec.Command("go", append([]string{"list", "-tags", "lambda.norpc", "-deps", "-f",
		`{{if not .Standard}}{{.ImportPath}}{{end}}`}, pkgs...)...)
	cmd.Dir = "../.."
	cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH=arm64", "CGO_ENABLED=0")
	out, err := cmd.Output()
	require.NoError(t, err)
	deps := strings.Fields(string(out))
	require.Contains(t, deps, "github.com/aws/aws-sdk-go-v2/service/dynamodb")
	return deps
}
