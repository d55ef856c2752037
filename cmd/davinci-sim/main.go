// Command davinci-sim is a cycle-level, event-driven simulator of Ascend
// DaVinci AI cores that runs real programs bit-accurately.
package main

import (
	"errors"
	"fmt"
	"os"

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

// failure wraps err as a simulation failure (exit code 1).
func failure(err error) error { return &exitError{code: 1, err: err} }

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

func main() {
	root := newRootCmd()
	if err := root.Execute(); err != nil {
		code := exitCode(err)
		if err.Error() != "" {
			fmt.Fprintln(os.Stderr, "davinci-sim:", err)
		}
		os.Exit(code)
	}
}
