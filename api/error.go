package api

import "net/http"

// ErrorCode classifies an error answer; each has one HTTP status (DESIGN: HTTP conventions),
// its Status. shared/errs takes its codes from here, so that the codes a server sends and the
// codes a client decides on are one list.
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

// ErrorCodes lists every error code, in the order of their statuses.
var ErrorCodes = []ErrorCode{
	CodeInvalid, CodeUnauthenticated, CodeForbidden, CodeNotFound, CodeConflict,
	CodeTooLarge, CodeUnsupportedMedia, CodeRateLimited, CodeInternal, CodeUnavailable,
}

// statuses are the HTTP statuses of the error codes.
var statuses = map[ErrorCode]int{
	CodeInvalid:          http.StatusBadRequest,
	CodeUnauthenticated:  http.StatusUnauthorized,
	CodeForbidden:        http.StatusForbidden,
	CodeNotFound:         http.StatusNotFound,
	CodeConflict:         http.StatusConflict,
	CodeTooLarge:         http.StatusRequestEntityTooLarge,
	CodeUnsupportedMedia: http.StatusUnsupportedMediaType,
	CodeRateLimited:      http.StatusTooManyRequests,
	CodeInternal:         http.StatusInternalServerError,
	CodeUnavailable:      http.StatusServiceUnavailable,
}

// Status is the HTTP status of an answer of code c: 500 for a code not in ErrorCodes.
func (c ErrorCode) Status() int {
	if s, ok := statuses[c]; ok {
		return s
	}
	return http.StatusInternalServerError
}

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
