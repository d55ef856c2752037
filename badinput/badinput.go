// Package badinput marks errors caused by what a user gave the simulator —
// a program, machine or study file, a --set value, a command-line option,
// an input array — as opposed to failures the simulation found. The CLI
// maps them to exit code 2, with the error's one-line message naming file,
// key and the violated constraint.
package badinput

import "errors"

// ErrBadInput matches (errors.Is) every error marked with Wrap.
var ErrBadInput = errors.New("bad input")

// inputError marks err as bad input without changing its message.
type inputError struct{ err error }

func (e *inputError) Error() string        { return e.err.Error() }
func (e *inputError) Unwrap() error        { return e.err }
func (e *inputError) Is(target error) bool { return target == ErrBadInput }

// Wrap marks err as bad input without changing its message (nil stays nil).
func Wrap(err error) error {
	if err == nil {
		return nil
	}
	return &inputError{err}
}

// Is reports whether err (or an error it wraps) is bad input.
func Is(err error) bool { return errors.Is(err, ErrBadInput) }
