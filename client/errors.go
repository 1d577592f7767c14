package client

import (
	"fmt"
	"net/http"
	"time"

	"github.com/plumehq/plume/api"
)

// Error is an error answer of the API: its code (api.ErrorCode), HTTP status, message and the
// request id to quote when reporting it. errors.Is(err, ErrNotFound) and the other sentinels
// match by code.
type Error struct {
	Status    int
	Code      api.ErrorCode
	Message   string
	RequestID string
	// RetryAfter is the wait the server asked for (429, 503), 0 when it asked for none.
	RetryAfter time.Duration
}

func (e *Error) Error() string {
	if e.RequestID != "" {
		return fmt.Sprintf("plume: %s (%d %s, request %s)", e.Message, e.Status, e.Code, e.RequestID)
	}
	return fmt.Sprintf("plume: %s (%d %s)", e.Message, e.Status, e.Code)
}

// Is reports whether target is the sentinel of e's code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Status == 0 && t.Code == e.Code
}

// Sentinels of the error codes, for errors.Is.
var (
	ErrInvalid         = &Error{Code: api.CodeInvalid}
	ErrUnauthenticated = &Error{Code: api.CodeUnauthenticated}
	ErrForbidden       = &Error{Code: api.CodeForbidden}
	ErrNotFound        = &Error{Code: api.CodeNotFound}
	ErrConflict        = &Error{Code: api.CodeConflict}
	ErrTooLarge        = &Error{Code: api.CodeTooLarge}
	ErrRateLimited     = &Error{Code: api.CodeRateLimited}
	ErrInternal        = &Error{Code: api.CodeInternal}
	ErrUnavailable     = &Error{Code: api.CodeUnavailable}
)

// codeOfStatus is the code of an answer without the API's error body (a proxy's).
func codeOfStatus(status int) api.ErrorCode {
	switch status {
	case http.StatusBadRequest:
		return api.CodeInvalid
	case http.StatusUnauthorized:
		return api.CodeUnauthenticated
	case http.StatusForbidden:
		return api.CodeForbidden
	case http.StatusNotFound:
		return api.CodeNotFound
	case http.StatusConflict:
		return api.CodeConflict
	case http.StatusRequestEntityTooLarge:
		return api.CodeTooLarge
	case http.StatusTooManyRequests:
		return api.CodeRateLimited
	case http.StatusServiceUnavailable, http.StatusBadGateway, http.StatusGatewayTimeout:
		return api.CodeUnavailable
	}
	return api.CodeInternal
}
