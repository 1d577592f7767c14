package awsjson

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
)

// maxAnswer bounds the body of an answer read: ten SQS messages of 1 MiB each and their
// attributes fit with room to spare.
const maxAnswer = 32 << 20

// Retry says how often and after how long an operation is sent again.
type Retry struct {
	// MaxAttempts is the most times one operation is sent.
	MaxAttempts int
	// Base is the wait before the first retry at most (a random part of it), doubled
	// before each next one.
	Base time.Duration
	// ThrottleBase is Base after a throttling error.
	ThrottleBase time.Duration
	// Max bounds every wait.
	Max time.Duration
}

// DefaultRetry is the SDK's standard retryer's: 3 attempts, waits below 50 ms (1 s after
// throttling) doubled each retry, at most 20 s.
var DefaultRetry = Retry{MaxAttempts: 3, Base: 50 * time.Millisecond, ThrottleBase: time.Second, Max: 20 * time.Second}

// Client sends the operations of one service, with the credentials, region, endpoint and
// HTTP client of an aws.Config. It is safe for concurrent use.
type Client struct {
	svc         Service
	endpoint    string
	endpointErr error
	region      string
	creds       aws.CredentialsProvider
	http        aws.HTTPClient
	signer      *v4.Signer
	retry       Retry
}

// New returns the client of svc reached as cfg says (see the package's doc for the
// endpoint). A configuration without region or endpoint makes every call fail.
func New(cfg aws.Config, svc Service) *Client {
	c := &Client{svc: svc, region: cfg.Region, creds: cfg.Credentials, http: cfg.HTTPClient, signer: v4.NewSigner(), retry: DefaultRetry}
	c.endpoint, c.endpointErr = endpoint(cfg, svc)
	if c.http == nil {
		c.http = awshttp.NewBuildableClient()
	}
	if cfg.RetryMaxAttempts > 0 {
		c.retry.MaxAttempts = cfg.RetryMaxAttempts
	}
	return c
}

// WithRetry is a copy of c that retries as r says (tests: short waits).
func (c *Client) WithRetry(r Retry) *Client {
	cp := *c
	cp.retry = r
	return &cp
}

// WithEndpoint is a copy of c that posts to u whatever the configuration says.
func (c *Client) WithEndpoint(u string) *Client {
	cp := *c
	cp.endpoint, cp.endpointErr = u, nil
	return &cp
}

// Endpoint is the URL the operations are posted to.
func (c *Client) Endpoint() string { return c.endpoint }

// Call sends operation op with input in (encoded as JSON; nil: an empty object) and decodes
// its answer into out (a pointer; nil: the answer is not read). It sends again as Retry
// says. A failure is an *Error when the service answered with an error, else the transport's
// or the context's error.
func (c *Client) Call(ctx context.Context, op string, in, out any) error {
	if c.endpointErr != nil {
		return fmt.Errorf("%s %s: %w", c.svc.ID, op, c.endpointErr)
	}
	if c.creds == nil {
		return fmt.Errorf("%s %s: no AWS credentials configured", c.svc.ID, op)
	}
	body := []byte("{}")
	if in != nil {
		var err error
		if body, err = json.Marshal(in); err != nil {
			return fmt.Errorf("%s %s: encode the input: %w", c.svc.ID, op, err)
		}
	}
	sum := sha256.Sum256(body)
	hash := hex.EncodeToString(sum[:])
	attempts := max(c.retry.MaxAttempts, 1)
	for attempt := 1; ; attempt++ {
		err := c.send(ctx, op, body, hash, out)
		if err == nil {
			return nil
		}
		wait, retry := c.backoff(attempt, err)
		if !retry || attempt >= attempts {
			return err
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%w (after %d attempts: %w)", ctx.Err(), attempt, err)
		}
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return fmt.Errorf("%w (after %d attempts: %w)", ctx.Err(), attempt, err)
		case <-timer.C:
		}
	}
}

// transportError is a request that got no answer, or whose answer could not be read.
type transportError struct{ err error }

func (e *transportError) Error() string { return e.err.Error() }
func (e *transportError) Unwrap() error { return e.err }

// send makes one attempt.
func (c *Client) send(ctx context.Context, op string, body []byte, hash string, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("%s %s: %w", c.svc.ID, op, err)
	}
	if req.URL.Path == "" {
		req.URL.Path = "/"
	}
	req.Header.Set("Content-Type", "application/x-amz-json-"+c.svc.Version)
	req.Header.Set("X-Amz-Target", c.svc.TargetPrefix+"."+op)
	creds, err := c.creds.Retrieve(ctx)
	if err != nil {
		return fmt.Errorf("%s %s: retrieve credentials: %w", c.svc.ID, op, err)
	}
	if err := c.signer.SignHTTP(ctx, creds, req, hash, c.svc.SigningName, c.region, time.Now().UTC()); err != nil {
		return fmt.Errorf("%s %s: sign: %w", c.svc.ID, op, err)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return &transportError{fmt.Errorf("%s %s: %w", c.svc.ID, op, err)}
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer+1))
	if err != nil {
		return &transportError{fmt.Errorf("%s %s: read the answer: %w", c.svc.ID, op, err)}
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return decodeError(c.svc, op, resp, answer)
	}
	if len(answer) > maxAnswer {
		return fmt.Errorf("%s %s: answer over %d bytes", c.svc.ID, op, maxAnswer)
	}
	if out == nil || len(bytes.TrimSpace(answer)) == 0 {
		return nil
	}
	if err := json.Unmarshal(answer, out); err != nil {
		return fmt.Errorf("%s %s: decode the answer: %w", c.svc.ID, op, err)
	}
	return nil
}

// backoff says whether a failed attempt (the attempt-th) is retried, and after how long:
// a random wait below Base (ThrottleBase after throttling) times 2^(attempt-1), at most Max.
func (c *Client) backoff(attempt int, err error) (time.Duration, bool) {
	base := c.retry.Base
	var apiErr *Error
	switch {
	case errors.As(err, &apiErr):
		if !apiErr.retryable() {
			return 0, false
		}
		if apiErr.throttling() {
			base = c.retry.ThrottleBase
		}
	case errors.As(err, new(*transportError)):
	default:
		return 0, false
	}
	ceiling := base << min(attempt-1, 30)
	if ceiling <= 0 || (c.retry.Max > 0 && ceiling > c.retry.Max) {
		ceiling = c.retry.Max
	}
	if ceiling <= 0 {
		return 0, true
	}
	return time.Duration(rand.Int64N(int64(ceiling))), true
}
