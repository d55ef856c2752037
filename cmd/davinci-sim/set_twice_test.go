package main

import (
	"strings"
	"testing"
)

// TestSetGivenTwice: run's and machines' --set refuse a key given twice
// (exit 2, naming both), as a file refuses a key given twice; before,
// the last value was taken without a word.
func TestSetGivenTwice(t *testing.T) {
	for _, args := range [][]string{
		{"run", "programs/examples/hgemm.yaml", "--numerics", "off", "--set", "program.m=64", "--set", "Program.M=128"},
		{"machines", "a100", "--set", "cores=8", "--set", "cores=16"},
	} {
		_, code, err := runCLI(t, args...)
		if code != 2 || err == nil || !strings.Contains(err.Error(), "given twice (first as --set") {
			t.Errorf("%s: exit %d, %v; want 2 and the key given twice", strings.Join(args, " "), code, err)
		}
	}
}
