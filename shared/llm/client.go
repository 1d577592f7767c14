package llm

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
)

// Defaults of Options.
const (
	DefaultMaxAttempts = 4
	DefaultTimeout     = 2 * time.Minute
	DefaultMaxWait     = time.Minute
	// DefaultMaxTokens is the max_tokens sent to Anthropic when Request.MaxTokens is 0
	// (Anthropic requires one).
	DefaultMaxTokens = 4096
	// maxAnswerBytes caps what is read of a provider's answer.
	maxAnswerBytes = 32 << 20
)

// Pricer prices a call's usage. The price table implements it in package pricetable (not here:
// pricing depends, through trace and prompt, on this package).
type Pricer interface {
	// Cost returns the cost in USD of usage u of the model id, or false when the model is not
	// priced.
	Cost(model string, u Usage) (cost float64, ok bool)
}

// Options tune a Client. The zero value is usable.
type Options struct {
	// HTTPClient sends the requests; nil means a client of its own. Its Timeout should be 0
	// or above Timeout: the per-attempt timeout is set on each request's context.
	HTTPClient *http.Client
	// MaxAttempts bounds the requests sent for one answer, the first included
	// (DefaultMaxAttempts when 0). The repair retry has its own attempts.
	MaxAttempts int
	// Timeout bounds one attempt (DefaultTimeout when 0); an attempt that times out is retried.
	Timeout time.Duration
	// BaseDelay and MaxDelay shape the exponential backoff between retries: the wait before
	// retry n is a uniformly random duration in [0, min(MaxDelay, BaseDelay×2^(n-1))) ("full
	// jitter"). Defaults: 500 ms and 20 s.
	BaseDelay, MaxDelay time.Duration
	// MaxWait is the longest wait a provider may ask for (Retry-After); when it asks for
	// longer, or for longer than the context has left, the error is returned at once
	// (DefaultMaxWait when 0).
	MaxWait time.Duration
	// Pricer prices each call; nil leaves Cost at 0 and CostSource empty.
	Pricer Pricer
	// AWSCredentials sign Bedrock requests (aws.Config.Credentials of the caller's
	// config.LoadDefaultConfig); nil leaves Bedrock unconfigured.
	AWSCredentials aws.CredentialsProvider
	// Sleep waits between attempts; nil waits on a timer. Tests pass a recorder. It returns
	// the context's error when the context ends first.
	Sleep func(ctx context.Context, d time.Duration) error
	// Now is the clock for Retry-After dates and signatures; nil means time.Now.
	Now func() time.Time
}

// Client calls models. It is safe for concurrent use; build one at init.
type Client struct {
	cfg  Config
	opts Options
	http *http.Client
}

// New returns a Client for the providers of cfg.
func New(cfg Config, opts Options) *Client {
	opts.MaxAttempts = cmp.Or(opts.MaxAttempts, DefaultMaxAttempts)
	opts.Timeout = cmp.Or(opts.Timeout, DefaultTimeout)
	opts.BaseDelay = cmp.Or(opts.BaseDelay, 500*time.Millisecond)
	opts.MaxDelay = cmp.Or(opts.MaxDelay, 20*time.Second)
	opts.MaxWait = cmp.Or(opts.MaxWait, DefaultMaxWait)
	if opts.Sleep == nil {
		opts.Sleep = sleep
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	hc := opts.HTTPClient
	if hc == nil {
		hc = &http.Client{}
	}
	return &Client{cfg: cfg, opts: opts, http: hc}
}

// JudgeModel returns the configured default judge model.
func (c *Client) JudgeModel() string { return cmp.Or(c.cfg.JudgeModel, DefaultJudgeModel) }

// Configured reports whether model can be called: its id routes to a provider whose key, base
// URL or AWS credentials and region are configured. It sends nothing; a call may still fail
// (a revoked key, a model the account cannot use). Complete refuses the models it reports
// false for with ErrUnknownModel or ErrNotConfigured.
func (c *Client) Configured(model string) bool {
	t, err := Route(model)
	if err != nil {
		return false
	}
	_, err = c.api(t)
	return err == nil
}

// answer is one successful HTTP exchange, decoded.
type answer struct {
	text       string
	json       json.RawMessage // the tool input of a forced tool call
	model      string
	stopReason string
	usage      Usage
}

// api is one provider API: how to encode a request, send it and read the answer.
type api interface {
	// encode returns the request body for model (the provider's model name).
	encode(model string, req Request, schemaName string) ([]byte, error)
	// newRequest returns the HTTP request of one attempt.
	newRequest(ctx context.Context, model string, body []byte) (*http.Request, error)
	// decode reads a 2xx answer. Usage is set even when it returns an error (a truncated or
	// refused answer is billed).
	decode(body []byte, structured bool) (answer, error)
}

// Complete sends req to its model and returns the answer. With req.Schema, Response.JSON is
// the answer, validated; an answer that does not validate is sent back once with the
// validation error for a corrected one.
//
// Failed attempts are retried (see Options). Errors:
//   - ErrUnknownModel, ErrNotConfigured, ErrInvalidRequest: nothing was sent;
//   - an *Error (errors.Is: ErrRateLimited, ErrUnavailable, ErrAuth, ErrBadRequest,
//     ErrTruncated, ErrRefused, ErrInvalidOutput) when the provider failed or its answer
//     cannot be used;
//   - the context's error, wrapped, when ctx ends: at once, without waiting for an attempt.
//
// Even with an error, the Response holds the attempts made and the usage and cost of the
// answers that were billed.
func (c *Client) Complete(ctx context.Context, req Request) (resp Response, err error) {
	start := c.opts.Now()
	target, err := Route(req.Model)
	if err != nil {
		return resp, err
	}
	a, err := c.api(target)
	if err != nil {
		return resp, err
	}
	if err := checkRequest(req); err != nil {
		return resp, err
	}
	var (
		name   string
		schema *schemaNode
	)
	if req.Schema != nil {
		if name, schema, err = compileSchema(req.Schema); err != nil {
			return resp, err
		}
	}
	defer func() {
		resp.Duration = c.opts.Now().Sub(start)
		c.price(&resp, req.Model)
	}()

	ans, err := c.send(ctx, a, target, req, name, &resp)
	if err != nil || schema == nil {
		return resp, err
	}
	invalid := schema.validate(ans.structured())
	if invalid == nil {
		resp.JSON = compact(ans.structured())
		return resp, nil
	}
	repair := req
	repair.Messages = append(copyMessages(req.Messages),
		Message{Role: RoleAssistant, Text: string(ans.structured())},
		Message{Role: RoleUser, Text: repairPrompt(invalid)})
	ans, err = c.send(ctx, a, target, repair, name, &resp)
	if err != nil {
		return resp, err
	}
	if invalid = schema.validate(ans.structured()); invalid != nil {
		return resp, &Error{Provider: target.Provider, Code: CodeInvalidOutput, Message: invalid.Error()}
	}
	resp.JSON = compact(ans.structured())
	return resp, nil
}

// copyMessages copies messages so that appending never writes into the caller's array.
func copyMessages(m []Message) []Message { return append([]Message(nil), m...) }

// repairPrompt asks for a corrected structured answer.
func repairPrompt(invalid error) string {
	return "Your answer does not satisfy the required JSON schema: " + invalid.Error() +
		". Answer again with the corrected JSON only, following the schema exactly."
}

// structured is the JSON answer of a structured call: the forced tool call's input, or the
// text of a JSON-schema answer.
func (a answer) structured() []byte {
	if a.json != nil {
		return a.json
	}
	return []byte(a.text)
}

// send encodes req, sends it with retries and records the outcome in resp.
func (c *Client) send(ctx context.Context, a api, t Target, req Request, schemaName string, resp *Response) (answer, error) {
	body, err := a.encode(t.Model, req, schemaName)
	if err != nil {
		return answer{}, err
	}
	for attempt := 1; ; attempt++ {
		if ctx.Err() != nil {
			return answer{}, fmt.Errorf("llm: %s: %w", t.Provider, context.Cause(ctx))
		}
		resp.Attempts++
		ans, err := c.attempt(ctx, a, t, body, req.Schema != nil)
		resp.Usage.add(ans.usage)
		if err == nil {
			resp.Text, resp.Model, resp.StopReason = ans.text, cmp.Or(ans.model, t.Model), ans.stopReason
			if req.Schema != nil {
				resp.Text = string(ans.structured())
			}
			return ans, nil
		}
		if ctx.Err() != nil {
			return ans, fmt.Errorf("llm: %s: %w", t.Provider, context.Cause(ctx))
		}
		var e *Error
		if !errors.As(err, &e) || !e.Retryable || attempt >= c.opts.MaxAttempts {
			return ans, err
		}
		wait := c.backoff(attempt, e.RetryAfter)
		if wait > c.opts.MaxWait {
			return ans, err
		}
		if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < wait {
			return ans, err
		}
		if err := c.opts.Sleep(ctx, wait); err != nil {
			return ans, fmt.Errorf("llm: %s: %w", t.Provider, err)
		}
	}
}

// attempt sends one request.
func (c *Client) attempt(ctx context.Context, a api, t Target, body []byte, structured bool) (answer, error) {
	actx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	hreq, err := a.newRequest(actx, t.Model, body)
	if err != nil {
		return answer{}, err
	}
	res, err := c.http.Do(hreq)
	if err != nil {
		code := CodeNetwork
		if actx.Err() != nil && ctx.Err() == nil {
			code = CodeTimeout
		}
		return answer{}, &Error{Provider: t.Provider, Code: code, Retryable: true, Err: err}
	}
	defer res.Body.Close()
	data, err := io.ReadAll(io.LimitReader(res.Body, maxAnswerBytes))
	if err != nil {
		return answer{}, &Error{Provider: t.Provider, Status: res.StatusCode, Code: CodeNetwork, Retryable: true, Err: err}
	}
	if res.StatusCode < 200 || res.StatusCode > 299 {
		e := errorAnswer(t.Provider, res.StatusCode, res.Header, data)
		e.RetryAfter = retryAfter(res.Header, c.opts.Now())
		return answer{}, e
	}
	ans, err := a.decode(data, structured)
	if err != nil {
		var e *Error
		if !errors.As(err, &e) {
			err = &Error{Provider: t.Provider, Status: res.StatusCode, Code: "bad_answer",
				Message: fmt.Sprintf("cannot read the answer: %v", err)}
		}
	}
	return ans, err
}

// price sets the cost of resp, priced by the requested model id.
func (c *Client) price(resp *Response, model string) {
	if c.opts.Pricer == nil {
		return
	}
	cost, ok := c.opts.Pricer.Cost(lookThrough(strings.TrimSpace(model)), resp.Usage)
	if !ok {
		resp.Cost, resp.CostSource = 0, CostSourceUnknownModel
		return
	}
	resp.Cost, resp.CostSource = cost, CostSourceTable
}

// api returns the API client of a target's provider, or ErrNotConfigured.
func (c *Client) api(t Target) (api, error) {
	e := c.cfg.endpoint(t.Provider)
	if e.BaseURL == "" {
		return nil, fmt.Errorf("%w: %s has no base URL", ErrNotConfigured, t.Provider)
	}
	switch t.API {
	case APIChatCompletions:
		if e.APIKey == "" && !keyless[t.Provider] {
			return nil, fmt.Errorf("%w: %s has no API key", ErrNotConfigured, t.Provider)
		}
		return &chatCompletions{provider: t.Provider, endpoint: e}, nil
	case APIMessages:
		if e.APIKey == "" {
			return nil, fmt.Errorf("%w: anthropic has no API key", ErrNotConfigured)
		}
		return &messages{endpoint: e}, nil
	case APIConverse:
		if c.opts.AWSCredentials == nil || e.Region == "" {
			return nil, fmt.Errorf("%w: bedrock needs AWS credentials and a region", ErrNotConfigured)
		}
		return &converse{endpoint: e, creds: c.opts.AWSCredentials, now: c.opts.Now}, nil
	}
	return nil, fmt.Errorf("%w: %s", ErrUnknownModel, t.Provider)
}

// checkRequest checks what every provider needs of a request.
func checkRequest(req Request) error {
	if len(req.Messages) == 0 {
		return fmt.Errorf("%w: no messages", ErrInvalidRequest)
	}
	if req.MaxTokens < 0 {
		return fmt.Errorf("%w: max tokens %d is negative", ErrInvalidRequest, req.MaxTokens)
	}
	for i, m := range req.Messages {
		switch m.Role {
		case RoleUser:
		case RoleAssistant:
			if len(m.Images) > 0 {
				return fmt.Errorf("%w: message %d: only user messages may have images", ErrInvalidRequest, i)
			}
		default:
			return fmt.Errorf("%w: message %d: role %q is neither user nor assistant", ErrInvalidRequest, i, m.Role)
		}
		for j, img := range m.Images {
			if len(img.Data) == 0 && img.URL == "" {
				return fmt.Errorf("%w: message %d: image %d has neither data nor a URL", ErrInvalidRequest, i, j)
			}
			if len(img.Data) > 0 && img.MediaType == "" {
				return fmt.Errorf("%w: message %d: image %d has no media type", ErrInvalidRequest, i, j)
			}
		}
	}
	return nil
}

// lookThrough strips the "plume/" and "zeroeval/" prefixes of a model id.
func lookThrough(model string) string {
	for {
		p, rest, ok := strings.Cut(model, "/")
		if !ok || (!strings.EqualFold(p, "plume") && !strings.EqualFold(p, "zeroeval")) {
			return model
		}
		model = rest
	}
}

func compact(b []byte) json.RawMessage {
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return json.RawMessage(b)
	}
	return buf.Bytes()
}
