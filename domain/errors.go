package domain

import (
	"errors"
	"fmt"
)

// Error codes. Every error the store returns carries one of them; the GraphQL
// layer maps them to the contract's `extensions.code` values.
const (
	ENOTFOUND    = "not_found"   // the object does not exist or the viewer may not see it
	EINVALID     = "invalid"     // bad user input; nothing was written
	EFORBIDDEN   = "forbidden"   // the viewer sees the object but may not do this to it
	ECONFLICT    = "conflict"    // a version did not match or a concurrent change won
	EUNAVAILABLE = "unavailable" // the table throttled or failed past the retries
	EEXPIRED     = "expired"     // a sync token older than the changes kept: sync again from the start
	ETOOLARGE    = "too_large"   // DynamoDB refused an item or a transaction as too large; nothing was written
	EINTERNAL    = "internal"    // anything else; its message is never shown to clients
)

// Error is the store's error: a code and a message fit for the client. The
// wrapped Err, if any, is for logs only.
type Error struct {
	Code    string
	Message string
	Err     error
}

func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, e.Message, e.Err)
	}
	return e.Code + ": " + e.Message
}

// Unwrap returns the underlying cause.
func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an *Error with the given code and a formatted client message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of err: its *Error's code, "" for nil, and
// EINTERNAL for anything else.
func ErrorCode(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return EINTERNAL
}

// ErrorMessage returns the client-safe message of err: the *Error's message,
// or a generic text that reveals nothing of the internals.
func ErrorMessage(err error) string {
	var e *Error
	if errors.As(err, &e) && e.Code != EINTERNAL {
		return e.Message
	}
	return "internal server error"
}

// IsNotFound reports whether err has the ENOTFOUND code.
func IsNotFound(err error) bool { return ErrorCode(err) == ENOTFOUND }
