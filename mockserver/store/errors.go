package store

import (
	"errors"
	"fmt"
)

// Kind is what sort of failure a store error is: the one thing the HTTP
// layer needs to know to answer it (mockserver maps each kind to an error
// code in one table). The store says what went wrong; the kind says what a
// caller can do about it.
type Kind uint8

// The kinds of failure.
const (
	// Internal is a failure of the mock itself, or an error that is not
	// the store's.
	Internal Kind = iota
	// NotFound: the thing named does not exist (in this mock session).
	NotFound
	// Forbidden: it exists, but the caller may not see or do this.
	Forbidden
	// Invalid: the request itself is wrong (a bad value, a reference in the
	// body to something that is not there); sending it again cannot help.
	Invalid
	// Unsupported: the operation is not possible for this resource.
	Unsupported
	// Conflict: the resource's state forbids it for now; it will pass, so
	// trying again shortly can succeed.
	Conflict
	// Final: the resource's state forbids it for good (a finished run, a
	// clock that only moves forward); trying again cannot help.
	Final
	// Unavailable: the mock is busy (too many mock sessions); trying again
	// later can succeed.
	Unavailable
	// Exhausted: a limit is reached that waiting does not lift (--max-runs);
	// only a reset or a higher limit makes room.
	Exhausted
)

var kindNames = [...]string{
	Internal: "internal", NotFound: "not found", Forbidden: "forbidden", Invalid: "invalid",
	Unsupported: "unsupported", Conflict: "conflict", Final: "final", Unavailable: "unavailable", Exhausted: "exhausted",
}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", k)
}

// Error is a store failure: its kind and the message the API tells the
// caller. The exported sentinels (ErrRunNotFound, ...) are Errors; a
// failure with more to say wraps its sentinel (Error.Err), so callers match
// it with errors.Is and the HTTP layer reads its kind with KindOf.
type Error struct {
	Kind Kind
	// Message is what the API says about the failure, the problem's detail.
	Message string
	// Err is the sentinel this failure is an instance of; nil for a sentinel.
	Err error
}

func (e *Error) Error() string { return e.Message }

func (e *Error) Unwrap() error { return e.Err }

// sentinel declares one of the store's exported errors.
func sentinel(kind Kind, message string) *Error { return &Error{Kind: kind, Message: message} }

// because is the sentinel e with a message of its own.
func (e *Error) because(format string, args ...any) *Error {
	return &Error{Kind: e.Kind, Message: fmt.Sprintf(format, args...), Err: e}
}

// as is the sentinel e as a failure of another kind, with a message of its
// own: a run that is not found is a 404 on its own path but a bad request
// when a body names it.
func (e *Error) as(kind Kind, format string, args ...any) *Error {
	return &Error{Kind: kind, Message: fmt.Sprintf(format, args...), Err: e}
}

// KindOf is the kind of the outermost store Error in err's chain; Internal
// when there is none.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return Internal
}
