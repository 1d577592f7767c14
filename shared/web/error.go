package web

import (
	"errors"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/shared/errs"
)

// statusOf maps every error code to its one HTTP status (DESIGN: HTTP conventions).
var statusOf = map[errs.Code]int{
	errs.CodeInvalid:          http.StatusBadRequest,
	errs.CodeUnauthenticated:  http.StatusUnauthorized,
	errs.CodeForbidden:        http.StatusForbidden,
	errs.CodeNotFound:         http.StatusNotFound,
	errs.CodeConflict:         http.StatusConflict,
	errs.CodeTooLarge:         http.StatusRequestEntityTooLarge,
	errs.CodeUnsupportedMedia: http.StatusUnsupportedMediaType,
	errs.CodeRateLimited:      http.StatusTooManyRequests,
	errs.CodeInternal:         http.StatusInternalServerError,
	errs.CodeUnavailable:      http.StatusServiceUnavailable,
}

// Status returns the HTTP status for code.
func Status(code errs.Code) int {
	if s, ok := statusOf[code]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// RetryAfterSeconds is the Retry-After sent with 429 and 503 answers.
const RetryAfterSeconds = 1

// Error writes err as the JSON error answer. It is the only place that turns errors into HTTP.
// Errors without a client-facing code are logged with the request id and answered with a
// generic 500 message; their text never reaches the client.
func Error(w http.ResponseWriter, r *http.Request, err error) {
	ctx := r.Context()
	var e *errs.Error
	if !errors.As(err, &e) || e.Code == errs.CodeInternal {
		slog.ErrorContext(ctx, "request failed", "error", err, "method", r.Method, "path", loggedPath(r))
		e = &errs.Error{Code: errs.CodeInternal, Message: "internal error; quote the request id when reporting it"}
	}
	code, msg := e.Code, e.Message
	status := Status(code)
	if status == http.StatusServiceUnavailable {
		// The client is told to retry; why (storage throttling, a trace written by many requests
		// at once) is the operator's to know: the whole chain, once, here.
		slog.WarnContext(ctx, "request unavailable", "error", err, "method", r.Method, "path", loggedPath(r))
	}
	if status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", strconv.Itoa(RetryAfterSeconds))
	}
	JSON(w, status, api.ErrorBody{Error: api.ErrorDetail{Code: api.ErrorCode(code), Message: msg, RequestID: RequestID(ctx)}})
}
