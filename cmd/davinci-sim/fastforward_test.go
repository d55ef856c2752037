package main

import (
	"os"
	"path/filepath"
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
		{"--numerics", "off", "--view"},
		{"--numerics", "off", "--fast-forward-tolerance", "-1"},
		{"--numerics", "off", "--fast-forward-hits", "NaN"},
		{"--numerics", "off", "--fast-forward-min-gain", "-0.5"},
		{"--numerics", "off", "--fast-forward-warm-up", "1"},
		{"--numerics", "off", "--fast-forward-warm-up", "-0.1"},
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
	// --fast-forward-steps (arch.FastForward.Steps; its skips: arch/gpu
	// TestStepSkips, programs TestStepSkipsEveryGenerator) skips k-steps,
	// --fast-forward-kernels (arch.FastForward.Kernels; arch/gpu
	// TestKernelSkips) ape-int16's later alike INT8 GEMMs, and each says
	// so; without --fast-forward each is bad input.
	for _, c := range []struct{ flag, scheme, mnk, want string }{
		{"--fast-forward-steps", "hgemm", "2048 2048 4096", "fast-forward step skips"},
		{"--fast-forward-kernels", "ape-int16", "1024 1024 1024", "was not simulated: it stands for kernel"},
	} {
		mnk := strings.Fields(c.mnk)
		out, code, err := runCLI(t, "run", examplePath("a100-emulated-gemm.yaml"), "--numerics", "off", "-q", "--fast-forward", c.flag,
			"--set", "program.scheme="+c.scheme, "--set", "program.m="+mnk[0], "--set", "program.n="+mnk[1], "--set", "program.k="+mnk[2])
		if code != 0 || !strings.Contains(out, c.want) {
			t.Errorf("%s: exit %d: %v\n%s", c.flag, code, err, out)
		}
		if _, code, err := runCLI(t, "run", examplePath("a100-hgemm.yaml"), "--numerics", "off", "-q", c.flag); code != 2 || err == nil || !strings.Contains(err.Error(), c.flag+": tunes --fast-forward") {
			t.Errorf("%s alone: exit %d (%v), want 2 naming it", c.flag, code, err)
		}
	}
}

// --k-batch: a timing-only SIMT SGEMM notes its batches; out of range, a
// functional run or a trace of a run it batches is bad input (one line
// naming the flag); a machine without GPU kernels notes it has none, traced
// or not.
func TestRunKBatch(t *testing.T) {
	out, code, err := runCLI(t, "run", examplePath("a100-sgemm.yaml"), "--numerics", "off", "-q", "--k-batch", "8")
	if code != 0 {
		t.Fatalf("exit %d: %v\n%s", code, err, out)
	}
	if !strings.Contains(out, "note: k-batch 8: SIMT GEMM kernels") {
		t.Errorf("no k-batch note:\n%s", out)
	}
	for _, args := range [][]string{
		{examplePath("a100-sgemm.yaml"), "--numerics", "off", "--k-batch", "0"},
		{examplePath("a100-sgemm.yaml"), "--numerics", "off", "--k-batch", "65"},
		{examplePath("a100-sgemm.yaml"), "--numerics", "full", "--k-batch", "2"},
		{examplePath("a100-sgemm.yaml"), "--numerics", "off", "--k-batch", "2", "--trace", t.TempDir() + "/t.json"},
		{examplePath("a100-sgemm.yaml"), "--numerics", "off", "--k-batch", "2", "--view"},
	} {
		out, code, err := runCLI(t, append([]string{"run", "-q"}, args...)...)
		if code != 2 || err == nil || !strings.Contains(err.Error(), "--k-batch") || strings.Contains(strings.TrimSpace(err.Error()), "\n") {
			t.Errorf("%v: exit %d (%v), want 2 and one line naming --k-batch\n%s", args, code, err, out)
		}
	}
	trace := t.TempDir() + "/t.json"
	out, code, err = runCLI(t, "run", examplePath("sgemm-cube.yaml"), "--numerics", "off", "--k-batch", "2", "--trace", trace)
	if code != 0 || !strings.Contains(out, "note: k-batch 2: applies to the GEMM kernels of") || !strings.Contains(out, "has none: every k-step was simulated") {
		t.Errorf("sgemm-cube --k-batch 2 --trace: exit %d (%v)\n%s", code, err, out)
	}
	if _, err := os.Stat(trace); err != nil {
		t.Errorf("sgemm-cube --k-batch 2 --trace: %v", err)
	}
}

// --fast-forward where it can skip nothing — a host program on a GPU
// (lu-fused on the A100), a DaVinci chip, a node — runs in full with a
// note saying why, traced or not (a trace misses nothing), as a sweep
// over machines giving it to every point needs; on the A100 it was
// refused, after building the job and the chip.
func TestRunFastForwardNothingToSkip(t *testing.T) {
	for _, c := range []struct {
		args []string
		note string
	}{
		{[]string{examplePath("a100-lu-fused.yaml"), "--numerics", "off"}, "note: fast-forward: lu-fused is a host program"},
		{[]string{examplePath("lu-fused-small.yaml")}, "note: fast-forward: only kernel grids (GPU machines) have waves to skip"},
		{[]string{examplePath("lu-cluster-small.yaml"), "--numerics", "off", "--fidelity", "isolated"}, "note: fast-forward: not on a cluster or node description"},
	} {
		for _, trace := range []string{"", filepath.Join(t.TempDir(), "t.json")} {
			args := append([]string{"run", "-q", "--fast-forward"}, c.args...)
			if trace != "" {
				args = append(args, "--trace", trace)
			}
			out, code, err := runCLI(t, args...)
			if code != 0 || !strings.Contains(out, c.note) {
				t.Errorf("%v: exit %d (%v), want 0 and %q\n%s", args, code, err, c.note, out)
			}
		}
	}
}
