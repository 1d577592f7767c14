package faultproxy_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/internal/faultproxy"
	"github.com/plumehq/plume/shared/blob/blobtest"
)

const bucket = "faultproxy-test"

// s3Client returns a path-style client of the embedded S3 server's key pair at endpoint.
func s3Client(endpoint string, attempts int) *s3.Client {
	return s3.New(s3.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(endpoint),
		UsePathStyle: true,
		Credentials:  credentials.NewStaticCredentialsProvider(blobtest.AccessKey, blobtest.SecretKey, ""),
		Retryer:      fastRetryer(attempts),
	})
}

// startS3 starts the embedded S3 server with a bucket and a proxy to it, and returns the
// proxy, a client sending through it and a client sending straight to the server.
func startS3(t *testing.T) (p *faultproxy.Proxy, viaProxy, direct *s3.Client) {
	t.Helper()
	_, _, server := blobtest.New(t)
	direct = s3Client(server, 1)
	_, err := direct.CreateBucket(t.Context(), &s3.CreateBucketInput{Bucket: aws.String(bucket)})
	require.NoError(t, err)
	p = faultproxy.New(t, server)
	return p, s3Client(p.URL(), attempts), direct
}

// objectStored reports whether key is in the bucket, asking the server directly.
func objectStored(t *testing.T, direct *s3.Client, key string) bool {
	t.Helper()
	_, err := direct.HeadObject(t.Context(), &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	var api smithy.APIError
	if errors.As(err, &api) && api.ErrorCode() == "NotFound" {
		return false
	}
	require.NoError(t, err)
	return true
}

// TestS3Forwards sends signed requests through the proxy to the server, which checks their
// signatures: header-signed ones of each kind, with a key that needs escaping, and a
// presigned one.
func TestS3Forwards(t *testing.T) {
	p, client, _ := startS3(t)
	ctx := t.Context()
	const key, content = "dir/a b+c!'()*&=~é.txt", "stored content"

	_, err := client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: strings.NewReader(content)})
	require.NoError(t, err)
	got, err := client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	require.NoError(t, err)
	body, err := io.ReadAll(got.Body)
	require.NoError(t, got.Body.Close())
	require.NoError(t, err)
	assert.Equal(t, content, string(body))
	_, err = client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	require.NoError(t, err)
	list, err := client.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(bucket)})
	require.NoError(t, err)
	assert.Len(t, list.Contents, 1)

	presigned, err := s3.NewPresignClient(client).PresignGetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)},
		s3.WithPresignExpires(time.Minute))
	require.NoError(t, err)
	r, err := http.NewRequestWithContext(ctx, presigned.Method, presigned.URL, http.NoBody)
	require.NoError(t, err)
	status, body2, err := send(r)
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, status, body2)
	assert.Equal(t, content, body2)

	_, err = client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	require.NoError(t, err)

	assert.Equal(t, []string{"PUT object", "GET object", "HEAD object", "GET bucket", "GET object", "DELETE object"}, p.Log())
}

// TestS3SignedHost shows why the proxy keeps the Host header: the SDK signs it, the server
// checks it, and a proxy that sets the target's Host breaks every signature.
func TestS3SignedHost(t *testing.T) {
	_, _, server := blobtest.New(t)
	target, err := url.Parse(server)
	require.NoError(t, err)
	rewriting := httptest.NewServer(&httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) { pr.SetURL(target) }})
	t.Cleanup(rewriting.Close)

	tests := []struct {
		name     string
		endpoint string
		code     string // "" for success
	}{
		{name: "faultproxy keeps the Host the client signed", endpoint: faultproxy.New(t, server).URL()},
		{name: "a proxy that sets the target's Host", endpoint: rewriting.URL, code: "SignatureDoesNotMatch"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s3Client(tt.endpoint, 1).ListBuckets(t.Context(), &s3.ListBucketsInput{})
			if tt.code == "" {
				assert.NoError(t, err)
				return
			}
			var api smithy.APIError
			require.ErrorAs(t, err, &api)
			assert.Equal(t, tt.code, api.ErrorCode())
		})
	}
}

// TestS3Faults checks what the AWS SDK reports for each fault on PutObject, and whether the
// object was written, with a client that makes two attempts.
func TestS3Faults(t *testing.T) {
	tests := []struct {
		name     string
		rule     faultproxy.Rule
		code     string // the smithy.APIError code the client reports
		sendErr  bool   // the client reports a transport error
		stored   bool   // the object is in the bucket afterwards
		requests int    // the PutObject requests the proxy received
	}{
		{
			name:     "throttled every time: the SDK gives up",
			rule:     faultproxy.Rule{Op: "PUT object", Following: faultproxy.Forever, Fault: faultproxy.Throttle},
			code:     "SlowDown",
			requests: attempts,
		},
		{
			name:     "throttled once: the SDK's retry heals it",
			rule:     faultproxy.Rule{Op: "PUT object", Fault: faultproxy.Throttle},
			stored:   true,
			requests: 2,
		},
		{
			name:     "server error every time",
			rule:     faultproxy.Rule{Op: "PUT object", Following: faultproxy.Forever, Fault: faultproxy.ServerError},
			code:     "InternalError",
			requests: attempts,
		},
		{
			name:     "delayed",
			rule:     faultproxy.Rule{Op: "PUT object", Fault: faultproxy.Delay(10 * time.Millisecond)},
			stored:   true,
			requests: 1,
		},
		{
			name:     "dropped every time: nothing written",
			rule:     faultproxy.Rule{Op: "PUT object", Following: faultproxy.Forever, Fault: faultproxy.Drop},
			sendErr:  true,
			requests: attempts,
		},
		{
			name:     "dropped after forwarding every time: written, yet the client got an error",
			rule:     faultproxy.Rule{Op: "PUT object", Following: faultproxy.Forever, Fault: faultproxy.DropAfterForward},
			sendErr:  true,
			stored:   true,
			requests: attempts,
		},
		{
			name:     "dropped after forwarding once: the retry overwrites",
			rule:     faultproxy.Rule{Op: "PUT object", Fault: faultproxy.DropAfterForward},
			stored:   true,
			requests: 2,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, client, direct := startS3(t)
			p.Fail(tt.rule)

			_, err := client.PutObject(t.Context(), &s3.PutObjectInput{
				Bucket: aws.String(bucket), Key: aws.String("object"), Body: strings.NewReader("content"),
			})

			var api smithy.APIError
			var sendErr *smithyhttp.RequestSendError
			switch {
			case tt.code != "":
				require.ErrorAs(t, err, &api)
				assert.Equal(t, tt.code, api.ErrorCode())
			case tt.sendErr:
				assert.ErrorAs(t, err, &sendErr)
				assert.False(t, errors.As(err, &api), "no service error: %v", err)
			default:
				assert.NoError(t, err)
			}
			assert.Equal(t, tt.stored, objectStored(t, direct, "object"), "stored")
			assert.Equal(t, tt.requests, p.Count("PUT object"))
		})
	}
}
