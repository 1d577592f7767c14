package web

import (
	"errors"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/shared/errs"
)

// Status returns the HTTP status for code (api.ErrorCode.Status).
func Status(code errs.Code) int { return code.Status() }

// RetryAfterSeconds is the Retry-After sent with 429 and 503 answers.
const RetryAfterSeconds = 1

// Error writes err as the JSON error answer. It is the only place that turns errors into HTTP.
// Errors without a client-facing code are logged with the request id and answered with a
// generic 500 message; their text never reaches the client.
func Error(w http.ResponseWriter, r *http.Request, err error) {
	ctx := r.Context()
	var (
		e       *errs.Error
		invalid *api.InvalidError
	)
	switch {
	case errors.As(err, &e) && e.Code != errs.CodeInternal:
	case errors.As(err, &invalid): // a parse helper of package api (a list query)
		e = &errs.Error{Code: errs.CodeInvalid, Message: invalid.Message}
	default:
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
	JSON(w, status, api.ErrorBody{Error: api.ErrorDetail{Code: code, Message: msg, RequestID: RequestID(ctx)}})
}
