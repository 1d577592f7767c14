// Package client is Plume's Go SDK: a typed client of the HTTP API (the request and answer
// types are package api's), with typed errors and retries. It depends on the standard library
// and api only, so that a service that imports it brings in no AWS SDK and no server code.
//
// A Client reads its configuration from options, then from the environment: PLUME_API_KEY,
// PLUME_BASE_URL and PLUME_PROJECT_ID, and the zeroeval SDKs' names as fallbacks
// (ZEROEVAL_API_KEY, ZEROEVAL_BASE_URL, ZEROEVAL_API_URL), so that an application moving from
// the zeroeval SDK keeps its environment.
//
//	c, err := client.New() // PLUME_API_KEY, PLUME_BASE_URL
//	v, err := c.EnsurePromptVersion(ctx, "support-bot", api.EnsureVersionRequest{Content: &content})
//
// Errors answered by the API are *Error values: errors.Is(err, client.ErrNotFound) tells a
// missing prompt from a refused key. Idempotent requests (GET, PUT, DELETE, and the calls
// documented as such, like ensuring a prompt version) are retried on 429, 5xx and network
// errors, with exponential backoff and full jitter, waiting as long as Retry-After asks.
package client

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/plumehq/plume/api"
)

// Defaults of a Client.
const (
	DefaultTimeout = 20 * time.Second
	DefaultRetries = 3
	// maxErrorBody bounds the error answer read.
	maxErrorBody = 64 << 10
	// maxRetryAfter is the longest Retry-After honoured; a longer wait is the caller's call.
	maxRetryAfter = 30 * time.Second
)

// Client calls one Plume deployment with one API key. It is safe for concurrent use.
type Client struct {
	base      *url.URL
	key       string
	project   string
	http      *http.Client
	timeout   time.Duration
	retries   int
	baseDelay time.Duration
	getenv    func(string) string
	sleep     func(ctx context.Context, d time.Duration) error
	// tracing is the span writer, started by the first span (writer.go).
	tracing tracing
	// prompt is the prompt helpers' cache and settings (prompthelper.go, cache.go).
	prompt promptState
}

// Option configures a Client.
type Option func(*Client)

// WithBaseURL sets the deployment's base URL ("https://plume.example.com").
func WithBaseURL(u string) Option {
	return func(c *Client) {
		if p, err := url.Parse(strings.TrimRight(u, "/")); err == nil {
			c.base = p
		}
	}
}

// WithAPIKey sets the API key.
func WithAPIKey(key string) Option { return func(c *Client) { c.key = key } }

// WithProject sets the project of the project-scoped routes (the key's project).
func WithProject(id string) Option { return func(c *Client) { c.project = id } }

// WithHTTPClient sets the HTTP client (its own Timeout should be 0: WithTimeout bounds each
// call).
func WithHTTPClient(h *http.Client) Option { return func(c *Client) { c.http = h } }

// WithTimeout bounds each call, its retries included (DefaultTimeout).
func WithTimeout(d time.Duration) Option { return func(c *Client) { c.timeout = d } }

// WithRetries sets how many times an idempotent call is retried (DefaultRetries; 0: never).
func WithRetries(n int) Option { return func(c *Client) { c.retries = n } }

// WithEnv reads the environment through getenv instead of os.Getenv (tests).
func WithEnv(getenv func(string) string) Option { return func(c *Client) { c.getenv = getenv } }

// withBaseDelay sets the first backoff (tests).
func withBaseDelay(d time.Duration) Option { return func(c *Client) { c.baseDelay = d } }

// New returns a Client configured by opts and the environment. It fails without a base URL or
// a key.
func New(opts ...Option) (*Client, error) {
	c := &Client{timeout: DefaultTimeout, retries: DefaultRetries, baseDelay: 250 * time.Millisecond, getenv: os.Getenv, sleep: sleep}
	for _, o := range opts {
		o(c)
	}
	env := func(names ...string) string {
		for _, n := range names {
			if v := strings.TrimSpace(c.getenv(n)); v != "" {
				return v
			}
		}
		return ""
	}
	if c.base == nil {
		if u := env("PLUME_BASE_URL", "ZEROEVAL_BASE_URL", "ZEROEVAL_API_URL"); u != "" {
			WithBaseURL(u)(c)
		}
	}
	c.key = cmp.Or(c.key, env("PLUME_API_KEY", "ZEROEVAL_API_KEY"))
	c.project = cmp.Or(c.project, env("PLUME_PROJECT_ID"))
	switch {
	case c.base == nil || c.base.Host == "":
		return nil, errors.New("client: no base URL: pass WithBaseURL or set PLUME_BASE_URL")
	case c.key == "":
		return nil, errors.New("client: no API key: pass WithAPIKey or set PLUME_API_KEY")
	}
	if c.http == nil {
		c.http = &http.Client{}
	}
	c.initPrompts()
	return c, nil
}

// Project is the project of the project-scoped calls ("" when none was given).
func (c *Client) Project() string { return c.project }

// projectPath is /projects/{project}/ + the rest, or an error without a project.
func (c *Client) projectPath(format string, args ...any) (string, error) {
	if c.project == "" {
		return "", errors.New("client: no project: pass WithProject or set PLUME_PROJECT_ID")
	}
	return "/projects/" + url.PathEscape(c.project) + fmt.Sprintf(format, args...), nil
}

// call is one API call.
type call struct {
	method string
	path   string // escaped
	query  url.Values
	body   any
	// idempotent calls are retried.
	idempotent bool
	// header, when not nil, receives the headers of the 2xx answer (a list's ListInfo).
	header *http.Header
}

// do sends cl and decodes a 2xx answer into out (nil: discard). Other answers are *Error.
func (c *Client) do(ctx context.Context, cl call, out any) error {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	var body []byte
	if cl.body != nil {
		var err error
		if body, err = json.Marshal(cl.body); err != nil {
			return fmt.Errorf("client: encode %s %s: %w", cl.method, cl.path, err)
		}
	}
	target := strings.TrimRight(c.base.String(), "/") + cl.path // cl.path is escaped
	if len(cl.query) > 0 {
		target += "?" + cl.query.Encode()
	}
	retries := 0
	if cl.idempotent || cl.method == http.MethodGet || cl.method == http.MethodPut || cl.method == http.MethodDelete {
		retries = c.retries
	}
	for attempt := 0; ; attempt++ {
		wait, err := c.once(ctx, cl.method, target, body, out, cl.header)
		if err == nil || attempt >= retries || wait < 0 {
			return err
		}
		if wait == 0 {
			wait = c.backoff(attempt)
		}
		if err := c.sleep(ctx, wait); err != nil {
			return errors.Join(err, context.Cause(ctx))
		}
	}
}

// once sends one request; a 2xx answer's headers go to header when it is not nil. wait is how
// long to wait before retrying (0: the backoff's choice) or -1 when the failure is not worth a
// retry.
func (c *Client) once(ctx context.Context, method, u string, body []byte, out any, header *http.Header) (wait time.Duration, err error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return -1, fmt.Errorf("client: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+c.key)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := c.http.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return -1, fmt.Errorf("client: %s %s: %w", method, req.URL.Path, err)
		}
		return 0, fmt.Errorf("client: %s %s: %w", method, req.URL.Path, err) // network: retry
	}
	defer res.Body.Close()
	if res.StatusCode/100 == 2 {
		if header != nil {
			*header = res.Header
		}
		if out == nil {
			_, _ = io.Copy(io.Discard, res.Body)
			return 0, nil
		}
		if err := json.NewDecoder(res.Body).Decode(out); err != nil {
			return -1, fmt.Errorf("client: decode the answer of %s %s: %w", method, req.URL.Path, err)
		}
		return 0, nil
	}
	e := readError(res)
	switch {
	case res.StatusCode == http.StatusTooManyRequests || res.StatusCode >= 500:
		return min(e.RetryAfter, maxRetryAfter), e
	default:
		return -1, e
	}
}

// backoff is the wait before retry attempt+1: full jitter over an exponential ceiling.
func (c *Client) backoff(attempt int) time.Duration {
	ceiling := c.baseDelay << min(attempt, 6)
	return time.Duration(rand.Int64N(int64(ceiling) + 1))
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// readError reads an error answer into an *Error.
func readError(res *http.Response) *Error {
	e := &Error{Status: res.StatusCode, RequestID: res.Header.Get("X-Request-Id")}
	if s := res.Header.Get("Retry-After"); s != "" {
		if n, err := strconv.Atoi(s); err == nil && n >= 0 {
			e.RetryAfter = time.Duration(n) * time.Second
		}
	}
	raw, _ := io.ReadAll(io.LimitReader(res.Body, maxErrorBody))
	var b api.ErrorBody
	if json.Unmarshal(raw, &b) == nil && b.Error.Code != "" {
		e.Code, e.Message = b.Error.Code, b.Error.Message
		e.RequestID = cmp.Or(b.Error.RequestID, e.RequestID)
		return e
	}
	e.Code, e.Message = codeOfStatus(res.StatusCode), strings.TrimSpace(string(raw))
	if e.Message == "" {
		e.Message = http.StatusText(res.StatusCode)
	}
	return e
}
