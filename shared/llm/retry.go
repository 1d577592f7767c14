package llm

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// backoff is the wait before retry n (n ≥ 1): what the provider asked for when it said, else
// exponential backoff with full jitter, a random duration in [0, min(MaxDelay, BaseDelay×2^(n-1))).
func (c *Client) backoff(n int, asked time.Duration) time.Duration {
	if asked > 0 {
		return asked
	}
	ceiling := c.opts.MaxDelay
	if n-1 < 30 {
		ceiling = min(ceiling, c.opts.BaseDelay<<(n-1))
	}
	if ceiling <= 0 {
		return 0
	}
	return rand.N(ceiling)
}

// retryAfter is how long a provider asked to wait before the next request, or 0:
//   - retry-after-ms, milliseconds (OpenAI, Anthropic);
//   - Retry-After, delay-seconds or an HTTP-date (RFC 9110 §10.2.3,
//     https://www.rfc-editor.org/rfc/rfc9110#field.retry-after);
//   - else the longest of the rate-limit reset headers: x-ratelimit-reset-requests and
//     x-ratelimit-reset-tokens (OpenAI and Groq: a duration such as "1s", "6m0s", "20ms"),
//     x-ratelimit-reset (seconds, or a Unix time), anthropic-ratelimit-*-reset (RFC 3339).
func retryAfter(h http.Header, now time.Time) time.Duration {
	if ms, err := strconv.ParseFloat(h.Get("Retry-After-Ms"), 64); err == nil && ms > 0 {
		return time.Duration(ms * float64(time.Millisecond))
	}
	if v := strings.TrimSpace(h.Get("Retry-After")); v != "" {
		if s, err := strconv.ParseFloat(v, 64); err == nil {
			return max(time.Duration(s*float64(time.Second)), 0)
		}
		if t, err := http.ParseTime(v); err == nil {
			return max(t.Sub(now), 0)
		}
	}
	var longest time.Duration
	for _, k := range []string{"X-Ratelimit-Reset-Requests", "X-Ratelimit-Reset-Tokens", "X-Ratelimit-Reset"} {
		longest = max(longest, resetIn(h.Get(k), now))
	}
	for _, k := range []string{"Anthropic-Ratelimit-Requests-Reset", "Anthropic-Ratelimit-Tokens-Reset",
		"Anthropic-Ratelimit-Input-Tokens-Reset", "Anthropic-Ratelimit-Output-Tokens-Reset"} {
		if t, err := time.Parse(time.RFC3339, h.Get(k)); err == nil {
			longest = max(longest, t.Sub(now))
		}
	}
	return longest
}

// resetIn reads a rate-limit reset header: a Go-style duration ("6m0s"), seconds ("12"), or a
// Unix time in seconds.
func resetIn(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if d, err := time.ParseDuration(v); err == nil {
		return max(d, 0)
	}
	s, err := strconv.ParseFloat(v, 64)
	if err != nil || s <= 0 {
		return 0
	}
	if s > 1e9 { // a Unix time
		return max(time.Unix(int64(s), 0).Sub(now), 0)
	}
	return time.Duration(s * float64(time.Second))
}

// errorAnswer reads a provider's error answer: OpenAI's {"error": {"message", "type",
// "code"}}, Anthropic's {"type": "error", "error": {"type", "message"}}, Bedrock's
// {"message"} with the x-amzn-ErrorType header; anything else keeps a bounded excerpt of the
// body.
func errorAnswer(provider string, status int, h http.Header, body []byte) *Error {
	e := &Error{Provider: provider, Status: status, Retryable: retryableStatus(status)}
	var shape struct {
		Error json.RawMessage `json:"error"`
		// Bedrock.
		Message string `json:"message"`
		Type    string `json:"__type"`
	}
	if json.Unmarshal(body, &shape) == nil {
		var inner struct {
			Message string          `json:"message"`
			Type    string          `json:"type"`
			Code    json.RawMessage `json:"code"`
		}
		if json.Unmarshal(shape.Error, &inner) == nil {
			e.Message, e.Code = inner.Message, inner.Type
			var code string
			if json.Unmarshal(inner.Code, &code) == nil && code != "" {
				e.Code = code
			}
		} else {
			// Some OpenAI-compatible servers answer {"error": "text"}.
			_ = json.Unmarshal(shape.Error, &e.Message)
		}
		if e.Message == "" {
			e.Message = shape.Message
		}
		if e.Code == "" {
			e.Code = shape.Type
		}
	}
	if t := h.Get("X-Amzn-Errortype"); t != "" && e.Code == "" {
		e.Code, _, _ = strings.Cut(t, ":")
	}
	if e.Message == "" && e.Code == "" {
		e.Message = excerpt(body)
	}
	return e
}

// excerpt is the start of a body, for an error message.
func excerpt(body []byte) string {
	const n = 200
	s := strings.TrimSpace(string(body))
	if len(s) > n {
		s = strings.ToValidUTF8(s[:n], "") + "…"
	}
	return s
}
