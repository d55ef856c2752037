package programs

import (
	"fmt"
	"strings"
)

// KeyError is a program file's refusal of the value of one of its keys, in
// one line: the file (and the key's line, where the file gave the value),
// the key as the kind's parameters name it (dotted: "tiling.bm"), and the
// constraint — `p.yaml:4: key "m": must be a positive integer (got -5)`. The
// builders make them without a line (they see the decoded parameters, not
// the file); File.NamedOverrideBy locates them: the line where the file
// wrote the key, or By, the --set (or the study's key) that gave the value.
type KeyError struct {
	File string // the program file as messages name it
	Line int    // the key's line in the file (0: not located, or not the file's value)
	Key  string
	Msg  string // the constraint (and the value refused)
	By   string // where the value came from when not the file ("set with --set program.m=0")
	Err  error  // the error Msg quotes, where there is one (Unwrap)
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
// a as fmt.Sprintf's (a wrapped error, %w, stays reachable: Unwrap).
func keyError(file, key, format string, a ...any) error {
	err := fmt.Errorf(format, a...)
	ke := &KeyError{File: file, Key: key, Msg: err.Error()}
	if u, ok := err.(interface{ Unwrap() error }); ok {
		ke.Err = u.Unwrap()
	}
	return ke
}
