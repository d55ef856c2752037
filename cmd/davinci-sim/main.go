// Command davinci-sim is a cycle-level, event-driven simulator of Ascend
// DaVinci AI cores that runs real programs bit-accurately.
package main

import (
	"errors"
	"fmt"
	"os"
)

// exitError carries a process exit code through cobra's error path.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// badInput wraps err as a bad-input error (exit code 2).
func badInput(err error) error { return &exitError{code: 2, err: err} }

// failure wraps err as a simulation failure (exit code 1).
func failure(err error) error { return &exitError{code: 1, err: err} }

func main() {
	root := newRootCmd()
	if err := root.Execute(); err != nil {
		code := 2
		var ee *exitError
		if errors.As(err, &ee) {
			code = ee.code
		}
		if err.Error() != "" {
			fmt.Fprintln(os.Stderr, "davinci-sim:", err)
		}
		os.Exit(code)
	}
}
