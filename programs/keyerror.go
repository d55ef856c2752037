package programs

import (
	"errors"
	"fmt"
	"strings"
)

// KeyError is a program file's refusal of the value of one of its keys, in
// one line: the file (and the key's line, where the file gave the value),
// the key as the kind's parameters name it (dotted: "tiling.bm"), and the
// constraint — `p.yaml:4: key "m": must be a positive integer (got -5)`. The
// builders make them without a line (they see the decoded parameters, not
// the file); File.NamedOverrideBy locates them: the line where the file
// wrote the key, or By, the --set (or the study's key) that gave the value
// — and the --set that gave the constraint, where one of the keys it comes
// from (From) was overridden.
type KeyError struct {
	File string // the program file as messages name it
	Line int    // the key's line in the file (0: not located, or not the file's value)
	Key  string
	Msg  string // the constraint (and the value refused)
	// By is where the value, or the constraint, came from when not the
	// file ("set with --set program.m=0"; "the constraint set with --set
	// machine.core.tmem=64KiB").
	By  string
	Err error // the error Msg quotes, where there is one (Unwrap)
	// From are the keys other than Key whose values the constraint comes
	// from, as --set addresses them: "program.nb" (m must be a multiple of
	// nb), "machine.core.tmem" (a tile's accumulators must fit the tensor
	// memory). NamedOverrideBy names the overrides among them.
	From []string
}

func (e *KeyError) Error() string {
	at := e.File
	if e.Line > 0 {
		at = fmt.Sprintf("%s:%d", e.File, e.Line)
	}
	msg := fmt.Sprintf("%s: key %q: %s", at, e.Key, e.Msg)
	if e.By == "" {
		return msg
	}
	if head, tail, multi := strings.Cut(msg, "\n"); multi { // (the note on the first line)
		return fmt.Sprintf("%s (%s)\n%s", head, e.By, tail)
	}
	return fmt.Sprintf("%s (%s)", msg, e.By)
}

// Unwrap returns the error the refusal quotes, if any.
func (e *KeyError) Unwrap() error { return e.Err }

// keyError returns the refusal of key of file: what is wrong, format and
// a as fmt.Sprintf's (a wrapped error, %w, stays reachable: Unwrap; the
// keys a limitError there comes from are the refusal's, From).
func keyError(file, key, format string, a ...any) error {
	err := fmt.Errorf(format, a...)
	ke := &KeyError{File: file, Key: key, Msg: err.Error()}
	if u, ok := err.(interface{ Unwrap() error }); ok {
		ke.Err = u.Unwrap()
	}
	var le *limitError
	if errors.As(ke.Err, &le) {
		ke.From = append(ke.From, le.from...)
	}
	return ke
}

// limitedBy returns err, a refusal of a key (a KeyError), saying that its
// constraint comes from the values of keys too (KeyError.From: "program.nb",
// "machine.core.buffers.L1"), so that the refusal names the --set that
// gave one of them. Other errors are returned as they are.
func limitedBy(err error, keys ...string) error {
	var ke *KeyError
	if errors.As(err, &ke) {
		ke.From = append(ke.From, keys...)
	}
	return err
}

// limitError is a constraint a value fails that comes from the values of
// keys (from, as --set addresses them: "machine.core.smem_per_cta"): a
// check that is not yet a refusal of a key (gpuTile.fits). A KeyError
// quoting it with %w carries its keys (keyError).
type limitError struct {
	msg  string
	from []string
}

func (e *limitError) Error() string { return e.msg }

// limit returns the limitError of a constraint from keys: format and a as
// fmt.Sprintf's.
func limit(from []string, format string, a ...any) error {
	return &limitError{msg: fmt.Sprintf(format, a...), from: from}
}
