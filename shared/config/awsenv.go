package config

import (
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/credentials/endpointcreds"
)

// AWSFromEnv is the AWS SDK configuration read through getenv alone, the way the SDK's default
// chain reads the same variables (a test holds the two equal), for a process whose whole
// configuration is its environment, as a Lambda function's is:
//   - the region: AWS_REGION, else AWS_DEFAULT_REGION;
//   - credentials: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN (what Lambda
//     sets), else the container credentials endpoint AWS_CONTAINER_CREDENTIALS_FULL_URI with
//     its AWS_CONTAINER_AUTHORIZATION_TOKEN or _TOKEN_FILE;
//   - endpoints: AWS_ENDPOINT_URL and each service's AWS_ENDPOINT_URL_<SERVICE>
//     (AWS_ENDPOINT_URL_DYNAMODB), unless AWS_IGNORE_CONFIGURED_ENDPOINT_URLS is true;
//   - AWS_CA_BUNDLE, a PEM file of the certificate authorities to trust.
//
// Anything else the default chain reads (shared config files and profiles, SSO, assumed roles,
// the instance metadata service, retry and checksum settings) is left at the SDK's defaults.
func AWSFromEnv(ctx context.Context, getenv func(string) string) (aws.Config, error) {
	src := envSource{getenv}
	cfg := aws.Config{
		Region:        cmp.Or(getenv("AWS_REGION"), getenv("AWS_DEFAULT_REGION")),
		Logger:        sdkLogger{},
		ConfigSources: []any{src},
	}
	if id := getenv("AWS_ACCESS_KEY_ID"); id != "" {
		cfg.Credentials = aws.NewCredentialsCache(credentials.NewStaticCredentialsProvider(id,
			getenv("AWS_SECRET_ACCESS_KEY"), getenv("AWS_SESSION_TOKEN")))
	} else if uri := getenv("AWS_CONTAINER_CREDENTIALS_FULL_URI"); uri != "" {
		cfg.Credentials = aws.NewCredentialsCache(endpointcreds.New(uri, func(o *endpointcreds.Options) {
			o.AuthorizationToken = getenv("AWS_CONTAINER_AUTHORIZATION_TOKEN")
			if file := getenv("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE"); file != "" {
				o.AuthorizationTokenProvider = endpointcreds.TokenProviderFunc(func() (string, error) {
					b, err := os.ReadFile(file)
					return strings.TrimSpace(string(b)), err
				})
			}
		}))
	}
	if !src.ignoreEndpoints() {
		if u := getenv("AWS_ENDPOINT_URL"); u != "" {
			cfg.BaseEndpoint = aws.String(u)
		}
	}
	if file := getenv("AWS_CA_BUNDLE"); file != "" {
		pem, err := os.ReadFile(file)
		if err != nil {
			return aws.Config{}, fmt.Errorf("load AWS config: AWS_CA_BUNDLE: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return aws.Config{}, fmt.Errorf("load AWS config: AWS_CA_BUNDLE %s holds no PEM certificate", file)
		}
		cfg.HTTPClient = awshttp.NewBuildableClient().WithTransportOptions(func(tr *http.Transport) {
			if tr.TLSClientConfig == nil {
				tr.TLSClientConfig = &tls.Config{}
			}
			tr.TLSClientConfig.RootCAs = pool
		})
	}
	return cfg, nil
}

// envSource answers the service clients' questions of the configuration's sources (each client
// asks them when it is made, by these method sets) from the environment.
type envSource struct{ getenv func(string) string }

func (e envSource) ignoreEndpoints() bool {
	return strings.EqualFold(e.getenv("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS"), "true")
}

// GetIgnoreConfiguredEndpoints is AWS_IGNORE_CONFIGURED_ENDPOINT_URLS.
func (e envSource) GetIgnoreConfiguredEndpoints(context.Context) (bool, bool, error) {
	v := e.getenv("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS")
	return strings.EqualFold(v, "true"), v != "", nil
}

// GetServiceBaseEndpoint is AWS_ENDPOINT_URL_<SERVICE>, the service's SDK id in capitals with
// underscores for spaces (DynamoDB Streams: AWS_ENDPOINT_URL_DYNAMODB_STREAMS).
func (e envSource) GetServiceBaseEndpoint(_ context.Context, sdkID string) (string, bool, error) {
	u := e.getenv("AWS_ENDPOINT_URL_" + strings.ReplaceAll(strings.ToUpper(sdkID), " ", "_"))
	return u, u != "", nil
}
