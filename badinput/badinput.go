// Package badinput marks errors caused by what a user gave the simulator —
// a program, machine or study file, a --set value, a command-line option,
// an input array — as opposed to failures the simulation found. The CLI
// maps them to exit code 2, with the error's one-line message naming file,
// key and the violated constraint.
package badinput

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

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

// Clip shortens s, a piece of the input a message quotes, to max bytes
// (at a rune boundary), saying how long it was: a hostile token or value
// can be megabytes long, and a message stays one readable line.
func Clip(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d bytes in all)", s[:cut], len(s))
}

// ClipMiddle shortens msg, a whole message that may quote a hostile piece
// of input, to about max bytes (at rune boundaries) by cutting its middle,
// saying how long it was: the message's end — the constraint broken,
// after the quoted input — stays.
func ClipMiddle(msg string, max int) string {
	if len(msg) <= max {
		return msg
	}
	head, tail := max*3/4, len(msg)-max/4
	for head > 0 && !utf8.RuneStart(msg[head]) {
		head--
	}
	for tail < len(msg) && !utf8.RuneStart(msg[tail]) {
		tail++
	}
	return fmt.Sprintf("%s… (%d bytes in all) …%s", msg[:head], len(msg), msg[tail:])
}

// NotPipe returns an error for a path that names a named pipe (FIFO) or a
// socket in the file system: opening one to read or write blocks until
// another process opens its other end — forever, for a file given by
// mistake. Other paths pass: missing ones (the open reports them) and the
// anonymous pipes /dev/stdin or a shell's <(…) lead to, which a writer
// holds open.
func NotPipe(path string) error {
	real, err := filepath.EvalSymlinks(path) // an anonymous pipe's "pipe:[N]" does not resolve
	if err != nil {
		return nil
	}
	st, err := os.Lstat(real)
	if err != nil {
		return nil
	}
	if m := st.Mode(); m&(os.ModeNamedPipe|os.ModeSocket) != 0 {
		kind := "a named pipe (FIFO)"
		if m&os.ModeSocket != 0 {
			kind = "a socket"
		}
		return fmt.Errorf("%s is %s, not a file (reading it would wait for a writer)", path, kind)
	}
	return nil
}

// NotFile returns an error for a path that names something other than a
// file to read, given as a what ("a .npy file"): a directory, a device
// (/dev/zero reads for ever), a named pipe or a socket (opening one waits
// for a writer) — "PATH is a directory, not a .npy file". Regular files
// pass, as do paths that cannot be looked at (opening them reports why)
// and anonymous pipes (/dev/stdin, a shell's <(…): AnonymousPipe), which a
// writer holds open. An empty path is refused too.
func NotFile(path, what string) error {
	if path == "" {
		return fmt.Errorf("'': an empty path, not %s", what) // (open's "open : no such file")
	}
	st, err := os.Stat(path) // (a FIFO's stat does not wait)
	if err != nil || st.Mode().IsRegular() || AnonymousPipe(path) {
		return nil
	}
	kind := "something other than a regular file"
	switch m := st.Mode(); {
	case m.IsDir():
		kind = "a directory"
	case m&os.ModeNamedPipe != 0:
		kind = "a named pipe (FIFO)"
	case m&os.ModeSocket != 0:
		kind = "a socket"
	case m&os.ModeCharDevice != 0:
		kind = "a character device"
	case m&os.ModeDevice != 0:
		kind = "a block device"
	}
	return fmt.Errorf("%s is %s, not %s", path, kind, what)
}

// AnonymousPipe reports whether path leads to an anonymous pipe
// (/dev/stdin, a shell's <(…)): a pipe that is not a named pipe in the
// file system. It reads once, as a stream.
func AnonymousPipe(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode()&os.ModeNamedPipe != 0 && NotPipe(path) == nil
}

// Suggest returns the known name closest to name (case aside) when name
// is a likely typo of it — within two edits —, else "": the "did you
// mean" of an unknown key.
func Suggest(name string, known []string) string {
	best, bestD := "", 3
	for _, k := range known {
		if d := editDistance(strings.ToLower(name), strings.ToLower(k)); d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance of a and b (99 beyond 64
// bytes: a hostile key costs nothing).
func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 99
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
