package main

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestPanicExitsInternal: a panic ends the process with exit code 3 and a
// message saying it is a bug, not bad input (Go's own exit code for a
// panic is 2, bad input's: a sweep or a script took a crash — a trace of
// a run ending near the time range's end — for a refusal).
func TestPanicExitsInternal(t *testing.T) {
	if os.Getenv("DAVINCI_SIM_TEST_PANIC") == "1" {
		defer exitOnPanic()
		panic("boom")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestPanicExitsInternal$")
	cmd.Env = append(os.Environ(), "DAVINCI_SIM_TEST_PANIC=1")
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != internalExit {
		t.Fatalf("exit %v, want %d: %s", err, internalExit, out)
	}
	if s := string(out); !strings.Contains(s, "davinci-sim: internal error (a bug") || !strings.Contains(s, "panic: boom") || !strings.Contains(s, "goroutine") {
		t.Errorf("output %q", s)
	}
	// A failure that carries an internal error keeps its code (the run's
	// errors go through failure).
	if got := exitCode(failure(internalError("x", nil))); got != internalExit {
		t.Errorf("failure(internal error): exit %d", got)
	}
	if got := exitCode(failure(errors.New("deadlock"))); got != 1 {
		t.Errorf("failure: exit %d", got)
	}
}
