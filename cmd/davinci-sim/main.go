// Command davinci-sim is a cycle-level, event-driven simulator of
// AI-accelerator matrix engines and their memory paths — Ascend DaVinci AI
// cores, NVIDIA SMs with Tensor Cores, AMD CUs with Matrix Cores, and hosts
// and clusters of them — that runs real programs bit-accurately.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"unicode"

	"github.com/davinci-sim/davinci-sim/badinput"
)

// exitError carries a process exit code through cobra's error path.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// badInput marks err as bad input (exit code 2).
func badInput(err error) error { return badinput.Wrap(err) }

// failure wraps err as a simulation failure (exit code 1), but an error
// that carries its exit code already (an internal error) keeps it.
func failure(err error) error {
	var ee *exitError
	if errors.As(err, &ee) {
		return err
	}
	return &exitError{code: 1, err: err}
}

// internalExit is the exit code of an internal error: a panic — a bug in
// davinci-sim, not the input (Go's own exit code for a panic, 2, is bad
// input's here: a script or a sweep would have taken the crash for a
// refusal).
const internalExit = 3

// internalError is the error of a panic p with the goroutine's stack.
func internalError(p any, stack []byte) error {
	return &exitError{code: internalExit, err: fmt.Errorf("internal error (a bug in davinci-sim, not in the input: please report it with the command that caused it): panic: %v\n\n%s", p, stack)}
}

// interrupted is the cause of a context cancelled by a signal.
type interrupted struct{ sig os.Signal }

func (e *interrupted) Error() string {
	name := e.sig.String()
	switch e.sig {
	case os.Interrupt:
		name = "SIGINT"
	case syscall.SIGTERM:
		name = "SIGTERM"
	}
	return "interrupted by " + name
}

// interruptible returns a context cancelled, with an *interrupted cause, by
// the first SIGINT or SIGTERM — also when the process was started with
// SIGINT ignored (a background job of a script): the run then stops
// cleanly, clearing its progress line. A second signal kills the process
// as usual. stop releases the signals.
func interruptible(parent context.Context) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(parent)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case sig := <-sigs:
			signal.Stop(sigs) // the next one takes the default action
			cancel(&interrupted{sig})
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(sigs)
		close(done)
		cancel(nil)
	}
}

// interruptExit returns err with the exit code of the signal that
// interrupted the run (128 + its number: 130 for SIGINT), or nil when err
// is not an interruption.
func interruptExit(err error) error {
	var in *interrupted
	if !errors.As(err, &in) {
		return nil
	}
	code := 130
	if s, ok := in.sig.(syscall.Signal); ok {
		code = 128 + int(s)
	}
	return &exitError{code: code, err: err}
}

// exitCode returns the process exit code for err: 0 for nil, the code an
// exitError carries, else 2 (bad input, including cobra's own errors).
func exitCode(err error) int {
	if err == nil {
		return 0
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	return 2
}

// maxLineBytes bounds each line of an error message: the messages name
// the input they refuse, and whatever quotes a hostile value unclipped
// (a 10 MB YAML string) still prints a readable line.
const maxLineBytes = 2000

// clipLines clips each line of msg to about maxLineBytes, cutting its
// middle: a line's end says the constraint it broke.
func clipLines(msg string) string {
	lines := strings.Split(msg, "\n")
	for i, l := range lines {
		lines[i] = badinput.ClipMiddle(l, maxLineBytes)
	}
	return strings.Join(lines, "\n")
}

// errorText is what main prints of err, which exits with code: bad input
// (2) in one line — several problems found together (the machine
// package's validators and decoders join them a line each) separated by
// "; " —, other failures as they are; every line clipped (clipLines).
func errorText(err error, code int) string {
	msg := err.Error()
	if code == 2 {
		msg = oneLine(msg)
	}
	return clipLines(visible(msg))
}

// visible escapes the control and format characters of msg but its line
// breaks and tabs (Go's \x1b, \u2028 forms): a message quotes the input
// it refuses, and a terminal would act on an escape sequence there (a
// --set value that clears the screen or colours the rest of the line).
func visible(msg string) string {
	if !strings.ContainsFunc(msg, hidden) {
		return msg
	}
	var b strings.Builder
	for _, r := range msg {
		if hidden(r) {
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// hidden reports whether r is a character visible would escape.
func hidden(r rune) bool {
	return r != '\n' && r != '\t' && (unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029')
}

// oneLine joins msg's lines with "; ", leaving out empty ones, and
// cobra's unknown-command suggestions ("unknown command "runn" for
// "davinci-sim"\n\nDid you mean this?\n\trun\n") as "(did you mean run?)".
func oneLine(msg string) string {
	head, suggested, found := strings.Cut(msg, "\n\nDid you mean this?\n")
	if found {
		msg = fmt.Sprintf("%s (did you mean %s?); see davinci-sim --help", head, strings.Join(strings.Fields(suggested), " or "))
	}
	var lines []string
	for _, l := range strings.Split(msg, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, "; ")
}

// exitOnPanic, deferred, ends the process of a panic on its goroutine with
// the internal error's message and stack and internalExit.
func exitOnPanic() {
	if p := recover(); p != nil {
		err := internalError(p, debug.Stack())
		fmt.Fprintln(os.Stderr, "davinci-sim:", errorText(err, internalExit))
		os.Exit(internalExit)
	}
}

func main() {
	defer exitOnPanic()
	root := newRootCmd()
	if err := root.Execute(); err != nil {
		code := exitCode(err)
		if msg := errorText(err, code); msg != "" {
			fmt.Fprintln(os.Stderr, "davinci-sim:", msg)
		}
		os.Exit(code)
	}
}
