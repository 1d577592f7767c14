package awsjson_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/shared/awsjson"
)

// quick retries for the tests: no real waits.
var quick = awsjson.Retry{MaxAttempts: 3, Base: time.Millisecond, ThrottleBase: time.Millisecond, Max: 5 * time.Millisecond}

// answer is one scripted answer of a test server; status 0 drops the connection.
type answer struct {
	status int
	body   string
}

// scripted serves answers in turn (the last one again when they run out) and counts the
// requests.
type scripted struct {
	mu       sync.Mutex
	answers  []answer
	requests int
}

func (s *scripted) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	a := s.answers[min(s.requests, len(s.answers)-1)]
	s.requests++
	s.mu.Unlock()
	if a.status == 0 {
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			conn.Close()
		}
		return
	}
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	w.Header().Set("X-Amzn-RequestId", "req-1")
	w.WriteHeader(a.status)
	io.WriteString(w, a.body)
}

func testConfig(endpoint string) aws.Config {
	return aws.Config{Region: "us-east-1", BaseEndpoint: aws.String(endpoint),
		Credentials: credentials.NewStaticCredentialsProvider("AKIDTEST", "secret", "")}
}

// TestRetries: throttling, 5xx, 429, a service timeout and a dropped connection are sent
// again, up to the attempts; any other 4xx is not.
func TestRetries(t *testing.T) {
	const ok = `{"SecretString": "s"}`
	tests := []struct {
		name     string
		answers  []answer
		attempts int
		code     string // the error's code; "" when the call succeeds
	}{
		{"500 then 200", []answer{{500, `{"__type": "InternalFailure"}`}, {200, ok}}, 2, ""},
		{"throttled then 200", []answer{{400, `{"__type": "ThrottlingException", "message": "Rate exceeded"}`}, {200, ok}}, 2, ""},
		{"429 then 200", []answer{{429, `{}`}, {200, ok}}, 2, ""},
		{"503 twice then 200", []answer{{503, ``}, {503, ``}, {200, ok}}, 3, ""},
		{"request timeout then 200", []answer{{400, `{"__type": "RequestTimeoutException"}`}, {200, ok}}, 2, ""},
		{"dropped connection then 200", []answer{{0, ``}, {200, ok}}, 2, ""},
		{"500 every time: gives up after 3", []answer{{500, `{"__type": "InternalServiceError", "message": "boom"}`}}, 3, "InternalServiceError"},
		{"throttled every time", []answer{{400, `{"__type": "com.amazonaws.sqs#RequestThrottled"}`}}, 3, "RequestThrottled"},
		{"400 not retried", []answer{{400, `{"__type": "ValidationException", "message": "bad"}`}, {200, ok}}, 1, "ValidationException"},
		{"403 not retried", []answer{{403, `{"__type": "AccessDeniedException", "Message": "no"}`}, {200, ok}}, 1, "AccessDeniedException"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := &scripted{answers: tt.answers}
			ts := httptest.NewServer(srv)
			defer ts.Close()
			var out struct{ SecretString string }
			err := awsjson.New(testConfig(ts.URL), awsjson.SecretsManager).WithRetry(quick).Call(t.Context(), "GetSecretValue", map[string]string{"SecretId": "x"}, &out)
			assert.Equal(t, tt.attempts, srv.requests, "attempts")
			if tt.code == "" {
				require.NoError(t, err)
				assert.Equal(t, "s", out.SecretString)
				return
			}
			var e *awsjson.Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, tt.code, e.Code)
			assert.Equal(t, "req-1", e.RequestID)
		})
	}
}

// TestRetryMaxAttemptsFromConfig: aws.Config.RetryMaxAttempts bounds the attempts.
func TestRetryMaxAttemptsFromConfig(t *testing.T) {
	srv := &scripted{answers: []answer{{500, ``}}}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	cfg := testConfig(ts.URL)
	cfg.RetryMaxAttempts = 1
	err := awsjson.New(cfg, awsjson.SQS).Call(t.Context(), "SendMessage", nil, nil)
	require.Error(t, err)
	assert.Equal(t, 1, srv.requests)
}

// TestThrottlingMatches: errors.Is tells throttling apart.
func TestThrottlingMatches(t *testing.T) {
	srv := &scripted{answers: []answer{{400, `{"__type": "ThrottlingException", "message": "Rate exceeded"}`}}}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	err := awsjson.New(testConfig(ts.URL), awsjson.EventBridge).WithRetry(quick).Call(t.Context(), "PutEvents", nil, nil)
	assert.ErrorIs(t, err, awsjson.ErrThrottling)
	assert.NotErrorIs(t, err, awsjson.ErrNotFound)
	assert.Contains(t, err.Error(), "EventBridge PutEvents: 400 ThrottlingException: Rate exceeded (request id req-1)")
}

// TestContextEndsTheWait: a context that ends during the wait before a retry ends the call
// without another attempt.
func TestContextEndsTheWait(t *testing.T) {
	srv := &scripted{answers: []answer{{400, `{"__type": "ThrottlingException"}`}}}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	ctx, cancel := context.WithCancel(t.Context())
	cfg := testConfig(ts.URL)
	answered := make(chan struct{}, 1)
	cfg.HTTPClient = readWhole{answered}
	slow := awsjson.Retry{MaxAttempts: 3, Base: time.Hour, ThrottleBase: time.Hour, Max: time.Hour}
	done := make(chan error)
	go func() { done <- awsjson.New(cfg, awsjson.SQS).WithRetry(slow).Call(ctx, "SendMessage", nil, nil) }()
	<-answered // the first attempt answered: the call waits an hour at most
	cancel()
	err := <-done
	assert.ErrorIs(t, err, context.Canceled)
	assert.ErrorIs(t, err, awsjson.ErrThrottling, "the last answer's error is kept")
	assert.Equal(t, 1, srv.requests)
}

// readWhole is an HTTP client that reads each answer whole before returning it, then says so.
type readWhole struct{ answered chan<- struct{} }

func (c readWhole) Do(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	c.answered <- struct{}{}
	return resp, nil
}

// verifier is a server that checks a request's SigV4 signature as AWS does: it signs the
// request it received again with the secret it knows (the signed headers only, the body's
// hash, at the request's X-Amz-Date) and compares the signatures.
type verifier struct {
	creds    aws.Credentials
	service  string
	mu       sync.Mutex
	verified []string // X-Amz-Target of each request whose signature matched
	refused  []string // why each other request was refused
}

func (v *verifier) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	err := v.check(r)
	v.mu.Lock()
	defer v.mu.Unlock()
	if err != nil {
		v.refused = append(v.refused, err.Error())
		w.WriteHeader(http.StatusForbidden)
		io.WriteString(w, `{"__type": "InvalidSignatureException", "message": "`+err.Error()+`"}`)
		return
	}
	v.verified = append(v.verified, r.Header.Get("X-Amz-Target"))
	io.WriteString(w, `{}`)
}

func (v *verifier) check(r *http.Request) error {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return err
	}
	auth := r.Header.Get("Authorization")
	const scheme = "AWS4-HMAC-SHA256 "
	if !strings.HasPrefix(auth, scheme) {
		return fmt.Errorf("authorization %q", auth)
	}
	fields := map[string]string{}
	for _, f := range strings.Split(strings.TrimPrefix(auth, scheme), ", ") {
		k, val, _ := strings.Cut(f, "=")
		fields[k] = val
	}
	date, err := time.Parse("20060102T150405Z", r.Header.Get("X-Amz-Date"))
	if err != nil {
		return err
	}
	sum := sha256.Sum256(body)
	hash := hex.EncodeToString(sum[:])
	again, err := http.NewRequest(r.Method, "http://"+r.Host+r.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		return err
	}
	for _, h := range strings.Split(fields["SignedHeaders"], ";") {
		switch h {
		case "host", "content-length":
		default:
			again.Header[http.CanonicalHeaderKey(h)] = r.Header.Values(h)
		}
	}
	if !strings.Contains(fields["SignedHeaders"], "content-length") {
		again.ContentLength = 0
	}
	for _, h := range []string{"x-amz-target", "content-type", "x-amz-date"} {
		if !strings.Contains(fields["SignedHeaders"], h) {
			return fmt.Errorf("%s not signed (%s)", h, fields["SignedHeaders"])
		}
	}
	if err := v4.NewSigner().SignHTTP(context.Background(), v.creds, again, hash, v.service, "eu-west-3", date); err != nil {
		return err
	}
	if got, want := auth, again.Header.Get("Authorization"); got != want {
		return fmt.Errorf("signature mismatch: got %s, want %s", got, want)
	}
	return nil
}

// TestSignature: every request is signed with the configuration's credentials for the
// service's signing name and the region, over the headers and body sent; a request signed
// with another secret is refused by the same check.
func TestSignature(t *testing.T) {
	tests := []struct {
		name     string
		svc      awsjson.Service
		secret   string
		verified bool
	}{
		{"SQS", awsjson.SQS, "s3cr3t", true},
		{"EventBridge", awsjson.EventBridge, "s3cr3t", true},
		{"Secrets Manager", awsjson.SecretsManager, "s3cr3t", true},
		{"another secret", awsjson.SQS, "forged", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := &verifier{creds: aws.Credentials{AccessKeyID: "AKIDTEST", SecretAccessKey: "s3cr3t", SessionToken: "tok"}, service: tt.svc.SigningName}
			ts := httptest.NewServer(v)
			defer ts.Close()
			cfg := aws.Config{Region: "eu-west-3", BaseEndpoint: aws.String(ts.URL),
				Credentials: credentials.NewStaticCredentialsProvider("AKIDTEST", tt.secret, "tok")}
			err := awsjson.New(cfg, tt.svc).WithRetry(quick).Call(t.Context(), "Op", map[string]string{"QueueUrl": "q", "MessageBody": "ünïcode"}, nil)
			if tt.verified {
				require.NoError(t, err)
				assert.Equal(t, []string{tt.svc.TargetPrefix + ".Op"}, v.verified)
				return
			}
			var e *awsjson.Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, "InvalidSignatureException", e.Code)
			require.Len(t, v.refused, 1, "a 403 is not retried")
			assert.Contains(t, v.refused[0], "signature mismatch")
		})
	}
}

// TestWireHeaders: the protocol's content type and target, per service.
func TestWireHeaders(t *testing.T) {
	tests := []struct {
		svc         awsjson.Service
		contentType string
		target      string
	}{
		{awsjson.SQS, "application/x-amz-json-1.0", "AmazonSQS.SendMessage"},
		{awsjson.EventBridge, "application/x-amz-json-1.1", "AWSEvents.SendMessage"},
		{awsjson.SecretsManager, "application/x-amz-json-1.1", "secretsmanager.SendMessage"},
	}
	for _, tt := range tests {
		t.Run(tt.svc.ID, func(t *testing.T) {
			var got http.Header
			var body []byte
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				got, body = r.Header.Clone(), must(io.ReadAll(r.Body))
				assert.Equal(t, "/", r.URL.Path)
				io.WriteString(w, `{}`)
			}))
			defer ts.Close()
			require.NoError(t, awsjson.New(testConfig(ts.URL), tt.svc).Call(t.Context(), "SendMessage", nil, nil))
			assert.Equal(t, tt.contentType, got.Get("Content-Type"))
			assert.Equal(t, tt.target, got.Get("X-Amz-Target"))
			assert.Equal(t, "{}", string(body), "no input: an empty object")
		})
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
