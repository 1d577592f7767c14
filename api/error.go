package api

// ErrorCode classifies an error answer; each has one HTTP status (DESIGN: HTTP conventions).
type ErrorCode string

// The error codes of the API and their statuses.
const (
	CodeInvalid          ErrorCode = "invalid_request"        // 400
	CodeUnauthenticated  ErrorCode = "unauthenticated"        // 401
	CodeForbidden        ErrorCode = "forbidden"              // 403
	CodeNotFound         ErrorCode = "not_found"              // 404
	CodeConflict         ErrorCode = "conflict"               // 409
	CodeTooLarge         ErrorCode = "payload_too_large"      // 413
	CodeUnsupportedMedia ErrorCode = "unsupported_media_type" // 415
	CodeRateLimited      ErrorCode = "rate_limited"           // 429, with Retry-After
	CodeInternal         ErrorCode = "internal"               // 500
	CodeUnavailable      ErrorCode = "unavailable"            // 503, with Retry-After
)

// ErrorBody is the body of every error answer of the JSON API:
//
//	{"error": {"code": "not_found", "message": "prompt \"support-bot\" not found", "request_id": "..."}}
//
// The OTLP routes answer errors as OTLP/HTTP requires instead (a google.rpc.Status).
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail is the inside of ErrorBody. Message is meant for people; programs decide on
// Code. RequestID is also sent as the X-Request-Id header; quote it when reporting a problem.
type ErrorDetail struct {
	Code      ErrorCode `json:"code"`
	Message   string    `json:"message"`
	RequestID string    `json:"request_id,omitempty"`
}

// InvalidError is what the UnmarshalJSON methods of this package return for a value of the
// right JSON type in the wrong form (a version number 2.5). Servers answer it as 400
// invalid_request with Message as it is.
type InvalidError struct{ Message string }

func (e *InvalidError) Error() string { return e.Message }
