package main

import (
	"strings"
	"testing"
)

// --fast-forward: a timing-only GPU run notes what it skipped (here
// nothing: a 1000×700 HGEMM has a few waves); a functional run or a
// trace is bad input.
func TestRunFastForward(t *testing.T) {
	out, code, err := runCLI(t, "run", examplePath("a100-hgemm.yaml"), "--numerics", "off", "-q", "--fast-forward")
	if code != 0 {
		t.Fatalf("exit %d: %v\n%s", code, err, out)
	}
	if !strings.Contains(out, "fast-forward: no kernel reached repeating waves") {
		t.Errorf("no fast-forward note:\n%s", out)
	}
	for _, args := range [][]string{
		{"--numerics", "full"},
		{"--numerics", "off", "--trace", t.TempDir() + "/t.json"},
		{"--numerics", "off", "--fast-forward-tolerance", "-1"},
		{"--numerics", "off", "--fast-forward-hits", "NaN"},
		{"--numerics", "off", "--fast-forward-min-gain", "-0.5"},
	} {
		a := append([]string{"run", examplePath("a100-hgemm.yaml"), "-q", "--fast-forward"}, args...)
		if _, code, err := runCLI(t, a...); code != 2 {
			t.Errorf("%v: exit %d (%v), want 2", args, code, err)
		}
	}
	// inf: any spread (every criterion off but the instructions').
	out, code, err = runCLI(t, "run", examplePath("a100-hgemm.yaml"), "--numerics", "off", "-q", "--fast-forward",
		"--fast-forward-tolerance", "inf", "--fast-forward-mix", "inf", "--fast-forward-hits", "+Inf")
	if code != 0 {
		t.Errorf("inf spreads: exit %d: %v\n%s", code, err, out)
	}
	// --fast-forward-stationary (arch.FastForward.Stationary; its skips:
	// arch/gpu TestFastForwardStationary) is taken.
	out, code, err = runCLI(t, "run", examplePath("a100-hgemm.yaml"), "--numerics", "off", "-q", "--fast-forward", "--fast-forward-stationary")
	if code != 0 || !strings.Contains(out, "fast-forward:") {
		t.Errorf("--fast-forward-stationary: exit %d: %v\n%s", code, err, out)
	}
}
