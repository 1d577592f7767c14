package llm

import (
	"errors"
	"fmt"
	"net/http"
	"time"
)

// Error codes that Plume sets on an Error; provider errors carry the provider's own code
// ("invalid_request_error", "ThrottlingException", ...).
const (
	CodeTruncated     = "truncated"
	CodeRefused       = "refused"
	CodeInvalidOutput = "invalid_output"
	CodeNetwork       = "network"
	CodeTimeout       = "timeout"
)

// Sentinels to test an *Error against with errors.Is.
var (
	// ErrRateLimited: the provider answered 429.
	ErrRateLimited = errors.New("llm: rate limited")
	// ErrUnavailable: the provider answered 5xx, or could not be reached, or timed out.
	ErrUnavailable = errors.New("llm: provider unavailable")
	// ErrAuth: the provider refused the credentials (401 or 403).
	ErrAuth = errors.New("llm: not authorized")
	// ErrBadRequest: the provider rejected the request (400, 404, 413, 422).
	ErrBadRequest = errors.New("llm: bad request")
	// ErrTruncated: the answer hit the token limit (finish_reason "length", stop_reason
	// "max_tokens").
	ErrTruncated = errors.New("llm: answer truncated")
	// ErrRefused: the model refused to answer (OpenAI message.refusal, Anthropic stop_reason
	// "refusal", Bedrock content filters and guardrails).
	ErrRefused = errors.New("llm: model refused")
	// ErrInvalidOutput: a structured answer did not satisfy the schema, the repair retry
	// included.
	ErrInvalidOutput = errors.New("llm: answer does not satisfy the schema")
)

// Errors that Complete returns before sending anything; they are not *Error.
var (
	// ErrUnknownModel: Route cannot tell which provider serves the model id.
	ErrUnknownModel = errors.New("llm: unknown model")
	// ErrNotConfigured: the provider has no key, base URL or AWS credentials.
	ErrNotConfigured = errors.New("llm: provider not configured")
	// ErrInvalidRequest: the Request is not valid (no messages, a bad role, a bad schema).
	ErrInvalidRequest = errors.New("llm: invalid request")
)

// Error is a failed model call: the provider's error answer, a network failure, or an answer
// that cannot be used (truncated, refused, invalid). Test it with errors.Is against the
// sentinels (ErrRateLimited, ErrTruncated, ...) or errors.As for the details.
type Error struct {
	// Provider is the provider that was called ("openai", "anthropic", "bedrock", ...).
	Provider string
	// Status is the HTTP status of the provider's answer; 0 when there was none.
	Status int
	// Code is the provider's error code, or one of the Code constants.
	Code string
	// Message is the provider's error message, or ours.
	Message string
	// Retryable is true for 408, 429, 5xx, network errors and timeouts.
	Retryable bool
	// RetryAfter is how long the provider asked to wait (Retry-After and rate-limit reset
	// headers); 0 when it did not say.
	RetryAfter time.Duration
	// Err is the underlying network error, if any.
	Err error
}

func (e *Error) Error() string {
	s := "llm: " + e.Provider
	if e.Status != 0 {
		s += fmt.Sprintf(": %d %s", e.Status, http.StatusText(e.Status))
	}
	if e.Code != "" {
		s += " (" + e.Code + ")"
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the underlying network error.
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether e is of the kind of a sentinel.
func (e *Error) Is(target error) bool {
	switch target {
	case ErrRateLimited:
		return e.Status == http.StatusTooManyRequests
	case ErrUnavailable:
		return e.Status >= 500 || e.Code == CodeNetwork || e.Code == CodeTimeout
	case ErrAuth:
		return e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden
	case ErrBadRequest:
		switch e.Status {
		case http.StatusBadRequest, http.StatusNotFound, http.StatusRequestEntityTooLarge, http.StatusUnprocessableEntity:
			return true
		}
	case ErrTruncated:
		return e.Code == CodeTruncated
	case ErrRefused:
		return e.Code == CodeRefused
	case ErrInvalidOutput:
		return e.Code == CodeInvalidOutput
	}
	return false
}

// retryableStatus reports whether a request that got this status may be sent again: request
// timeouts, rate limits and server errors (Anthropic's 529 "overloaded" included).
func retryableStatus(status int) bool {
	return status == http.StatusRequestTimeout || status == http.StatusTooManyRequests || status >= 500
}
