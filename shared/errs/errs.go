// Package errs is Plume's error model: every failure a client can see carries a Code and a
// message meant for that client. Domain packages return these errors; shared/web maps the Code
// to an HTTP status in one place. Any other error is internal: logged, never shown.
package errs

import (
	"errors"
	"fmt"

	"github.com/plumehq/plume/api"
)

// Code classifies an error for the client: the "code" field of the JSON error body, declared
// with its HTTP status in package api (api.ErrorCode), which clients read too.
type Code = api.ErrorCode

// The error codes of the API (api.ErrorCodes).
const (
	CodeInvalid          = api.CodeInvalid
	CodeUnauthenticated  = api.CodeUnauthenticated
	CodeForbidden        = api.CodeForbidden
	CodeNotFound         = api.CodeNotFound
	CodeConflict         = api.CodeConflict
	CodeTooLarge         = api.CodeTooLarge
	CodeUnsupportedMedia = api.CodeUnsupportedMedia
	CodeRateLimited      = api.CodeRateLimited
	CodeInternal         = api.CodeInternal
	CodeUnavailable      = api.CodeUnavailable
)

// Error is an error whose Message may be shown to the client.
type Error struct {
	Code    Code
	Message string
}

func (e *Error) Error() string { return fmt.Sprintf("%s: %s", e.Code, e.Message) }

// Errorf returns an *Error with the given code and a formatted message.
func Errorf(code Code, format string, args ...any) error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Invalid reports bad input (400).
func Invalid(format string, args ...any) error { return Errorf(CodeInvalid, format, args...) }

// NotFound reports a missing resource (404).
func NotFound(format string, args ...any) error { return Errorf(CodeNotFound, format, args...) }

// Conflict reports a state conflict (409).
func Conflict(format string, args ...any) error { return Errorf(CodeConflict, format, args...) }

// Forbidden reports an authenticated caller acting outside its rights (403).
func Forbidden(format string, args ...any) error { return Errorf(CodeForbidden, format, args...) }

// Unauthenticated reports a missing or unusable credential (401).
func Unauthenticated(format string, args ...any) error {
	return Errorf(CodeUnauthenticated, format, args...)
}

// Unavailable reports a temporary inability to serve, such as storage throttling (503).
func Unavailable(format string, args ...any) error { return Errorf(CodeUnavailable, format, args...) }

// Prefix returns err with prefix and ": " before its client message, keeping its code: for
// naming where in a request a nested check failed. Errors without a code are returned as they
// are (they stay internal).
func Prefix(prefix string, err error) error {
	var e *Error
	if !errors.As(err, &e) {
		return err
	}
	return &Error{Code: e.Code, Message: prefix + ": " + e.Message}
}

// CodeOf returns the code of the first *Error in err's chain, or CodeInternal.
func CodeOf(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return CodeInternal
}

// Is reports whether err carries code.
func Is(err error, code Code) bool { return err != nil && CodeOf(err) == code }
