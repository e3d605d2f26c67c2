package fuzz

import (
	"errors"
	"fmt"
)

// ErrUnsatisfiable: the schema admits no value at the pointer (a type the
// other keywords exclude, a required property that may not appear, minimum
// above maximum…).
var ErrUnsatisfiable = errors.New("unsatisfiable schema")

// ErrGaveUp: the generator found no valid value at the pointer within its
// retries or its size budget; the schema may still admit one.
var ErrGaveUp = errors.New("generator gave up")

// Error says where generation stopped. The generator returns it instead of
// ever returning a value the schema rejects.
type Error struct {
	Pointer string // JSON pointer into the value being generated
	Schema  string // the schema's location, from /schemas/ on
	Reason  string
	kind    error // ErrUnsatisfiable or ErrGaveUp
}

func (e *Error) Error() string {
	return fmt.Sprintf("%v at %q (%s): %s", e.kind, e.Pointer, e.Schema, e.Reason)
}

func (e *Error) Unwrap() error { return e.kind }

func unsat(ptr string, n *node, format string, args ...any) *Error {
	return &Error{Pointer: ptr, Schema: locOf(n), Reason: fmt.Sprintf(format, args...), kind: ErrUnsatisfiable}
}

func gaveUp(ptr string, n *node, format string, args ...any) *Error {
	return &Error{Pointer: ptr, Schema: locOf(n), Reason: fmt.Sprintf(format, args...), kind: ErrGaveUp}
}

func locOf(n *node) string {
	if n == nil {
		return ""
	}
	return trimLoc(n.loc)
}
