package s3local_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/shared/blob/s3local"
)

const (
	accessKey = "local-test"
	secretKey = "local-test-secret"
	bucket    = "local-test-bucket"
	key       = "dir/object.txt"
	content   = "stored content"
)

// start runs a server holding bucket with key in it.
func start(t *testing.T) *s3local.Server {
	t.Helper()
	srv, err := s3local.Start("127.0.0.1:0", accessKey, secretKey)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, srv.Close()) })
	client := newClient(srv, "us-east-1", nil)
	_, err = client.CreateBucket(t.Context(), &s3.CreateBucketInput{Bucket: aws.String(bucket)})
	require.NoError(t, err)
	_, err = client.PutObject(t.Context(), &s3.PutObjectInput{
		Bucket: aws.String(bucket), Key: aws.String(key), Body: strings.NewReader(content),
	})
	require.NoError(t, err)
	return srv
}

// newClient returns a path-style client of srv with the server's key pair, changed by opt.
func newClient(srv *s3local.Server, region string, opt func(*s3.Options)) *s3.Client {
	return s3.New(s3.Options{
		Region:           region,
		BaseEndpoint:     aws.String(srv.URL()),
		UsePathStyle:     true,
		Credentials:      credentials.NewStaticCredentialsProvider(accessKey, secretKey, ""),
		RetryMaxAttempts: 1,
	}, func(o *s3.Options) {
		if opt != nil {
			opt(o)
		}
	})
}

func get(t *testing.T, rawURL string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, rawURL, nil)
	require.NoError(t, err)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res.StatusCode, string(body)
}

func s3Signer() *v4.Signer {
	return v4.NewSigner(func(o *v4.SignerOptions) { o.DisableURIPathEscaping = true })
}

// shiftedPresigner presigns as if its clock were off by the given duration.
type shiftedPresigner struct{ by time.Duration }

func (p shiftedPresigner) PresignHTTP(ctx context.Context, creds aws.Credentials, r *http.Request, payloadHash, service, region string, at time.Time, optFns ...func(*v4.SignerOptions)) (string, http.Header, error) {
	return s3Signer().PresignHTTP(ctx, creds, r, payloadHash, service, region, at.Add(p.by), optFns...)
}

// shiftedSigner signs request headers as if its clock were off by the given duration.
type shiftedSigner struct{ by time.Duration }

func (s shiftedSigner) SignHTTP(ctx context.Context, creds aws.Credentials, r *http.Request, payloadHash, service, region string, at time.Time, optFns ...func(*v4.SignerOptions)) error {
	return s3Signer().SignHTTP(ctx, creds, r, payloadHash, service, region, at.Add(s.by), optFns...)
}

func TestStartRefusesOpenServers(t *testing.T) {
	tests := []struct{ name, access, secret string }{
		{name: "no keys"},
		{name: "no secret", access: accessKey},
		{name: "access key too short", access: "ab", secret: secretKey},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, err := s3local.Start("127.0.0.1:0", tt.access, tt.secret)
			assert.Error(t, err)
			assert.Nil(t, srv)
		})
	}
}

func TestStartAddressInUse(t *testing.T) {
	srv := start(t)
	_, err := s3local.Start(strings.TrimPrefix(srv.URL(), "http://"), accessKey, secretKey)
	assert.Error(t, err)
}

func TestClose(t *testing.T) {
	srv, err := s3local.Start("127.0.0.1:0", accessKey, secretKey)
	require.NoError(t, err)
	require.NoError(t, srv.Close())
	require.NoError(t, srv.Close(), "a second Close does nothing")
	_, err = http.Get(srv.URL() + "/")
	assert.Error(t, err, "nothing listens after Close")
}

func TestUnsignedRequestsAreRefused(t *testing.T) {
	srv := start(t)
	for _, path := range []string{"/", "/" + bucket, "/" + bucket + "/" + key} {
		status, body := get(t, srv.URL()+path)
		assert.Equal(t, http.StatusForbidden, status, "%s: %s", path, body)
		assert.NotContains(t, body, content)
	}
}

// TestPresignedTime pins down gofakes3's time checks on presigned URLs: a URL is valid from
// X-Amz-Date (or up to 15 minutes before it, for clock skew) until X-Amz-Date + X-Amz-Expires,
// by the server's clock.
func TestPresignedTime(t *testing.T) {
	srv := start(t)
	tests := []struct {
		name     string
		signedAt time.Duration // relative to now
		ttl      time.Duration
		status   int
		body     string // substring of the response body
	}{
		{name: "signed now", ttl: time.Minute, status: http.StatusOK, body: content},
		{name: "signed an hour ago for 15 minutes", signedAt: -time.Hour, ttl: 15 * time.Minute, status: http.StatusForbidden, body: "Request has expired"},
		{name: "signed a minute ago for 30 seconds", signedAt: -time.Minute, ttl: 30 * time.Second, status: http.StatusForbidden, body: "Request has expired"},
		{name: "signed an hour ago for two hours", signedAt: -time.Hour, ttl: 2 * time.Hour, status: http.StatusOK, body: content},
		{name: "signed six days ago for seven", signedAt: -6 * 24 * time.Hour, ttl: 7 * 24 * time.Hour, status: http.StatusOK, body: content},
		{name: "signed 10 minutes ahead (clock skew)", signedAt: 10 * time.Minute, ttl: time.Minute, status: http.StatusOK, body: content},
		{name: "signed 20 minutes ahead", signedAt: 20 * time.Minute, ttl: time.Hour, status: http.StatusForbidden, body: "Request is not valid yet"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			presigner := s3.NewPresignClient(newClient(srv, "us-east-1", nil), func(o *s3.PresignOptions) {
				o.Presigner = shiftedPresigner{by: tt.signedAt}
			})
			req, err := presigner.PresignGetObject(t.Context(), &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)},
				s3.WithPresignExpires(tt.ttl))
			require.NoError(t, err)
			status, body := get(t, req.URL)
			assert.Equal(t, tt.status, status, body)
			assert.Contains(t, body, tt.body)
		})
	}
}

// TestHeaderSignedTime: a request signed in its headers must be signed within 15 minutes of
// the server's clock.
func TestHeaderSignedTime(t *testing.T) {
	srv := start(t)
	tests := []struct {
		name     string
		signedAt time.Duration
		code     string // S3 error code, "" for success
	}{
		{name: "now"},
		{name: "10 minutes ago", signedAt: -10 * time.Minute},
		{name: "20 minutes ago", signedAt: -20 * time.Minute, code: "RequestTimeTooSkewed"},
		{name: "20 minutes ahead", signedAt: 20 * time.Minute, code: "RequestTimeTooSkewed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client := newClient(srv, "us-east-1", func(o *s3.Options) {
				o.HTTPSignerV4 = shiftedSigner{by: tt.signedAt}
			})
			_, err := client.GetObject(t.Context(), &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
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

// swapPutBody replaces the body of every PUT after the SDK has signed it.
type swapPutBody struct{ with []byte }

func (s swapPutBody) Do(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodPut {
		r.Body = io.NopCloser(bytes.NewReader(s.with))
		r.ContentLength = int64(len(s.with))
		r.GetBody = nil
	}
	return http.DefaultClient.Do(r)
}

// TestPayloadIntegrity shows what protects the body of a header-signed PUT. gofakes3 does not
// compare the body with the signed X-Amz-Content-Sha256 (S3 does); it does verify the
// x-amz-checksum-* header the SDK sends by default, so blob.Store's uploads are still checked
// end to end.
func TestPayloadIntegrity(t *testing.T) {
	srv := start(t)
	const sent, swapped = "the signed body", "a forged body!!"
	require.Len(t, swapped, len(sent))
	tests := []struct {
		name     string
		checksum aws.RequestChecksumCalculation
		code     string // S3 error code, "" if the swapped body is stored
	}{
		{name: "SDK default: CRC32 checksum header", checksum: aws.RequestChecksumCalculationWhenSupported, code: "BadDigest"},
		{name: "no checksum: only the signed SHA-256, which gofakes3 ignores", checksum: aws.RequestChecksumCalculationWhenRequired},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := key + string(rune('a'+i))
			client := newClient(srv, "us-east-1", func(o *s3.Options) {
				o.RequestChecksumCalculation = tt.checksum
				o.HTTPClient = swapPutBody{with: []byte(swapped)}
			})
			_, err := client.PutObject(t.Context(), &s3.PutObjectInput{
				Bucket: aws.String(bucket), Key: aws.String(k), Body: strings.NewReader(sent),
			})
			if tt.code != "" {
				var api smithy.APIError
				require.ErrorAs(t, err, &api)
				assert.Equal(t, tt.code, api.ErrorCode())
				return
			}
			require.NoError(t, err, "gofakes3 accepts a body that does not match the signed payload hash")
			out, err := newClient(srv, "us-east-1", nil).GetObject(t.Context(), &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(k)})
			require.NoError(t, err)
			defer out.Body.Close()
			got, err := io.ReadAll(out.Body)
			require.NoError(t, err)
			assert.Equal(t, swapped, string(got))
		})
	}
}

// TestRegionIsNotChecked: the credential scope's region only feeds the signing key; gofakes3
// serves any region (S3 refuses a scope naming another region than the bucket's).
func TestRegionIsNotChecked(t *testing.T) {
	srv := start(t)
	client := newClient(srv, "ap-southeast-2", nil)
	_, err := client.GetObject(t.Context(), &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	assert.NoError(t, err)
}

func TestWrongSecretIsRefused(t *testing.T) {
	srv := start(t)
	client := newClient(srv, "us-east-1", func(o *s3.Options) {
		o.Credentials = credentials.NewStaticCredentialsProvider(accessKey, "wrong-secret", "")
	})
	_, err := client.GetObject(t.Context(), &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	var api smithy.APIError
	require.True(t, errors.As(err, &api), "%v", err)
	assert.Equal(t, "SignatureDoesNotMatch", api.ErrorCode())
}
