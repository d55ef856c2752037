package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sweepFixture writes a tiny program and a 4-point study; it returns the
// study path.
func sweepFixture(t *testing.T, vary string) string {
	t.Helper()
	dir := t.TempDir()
	prog := "kind: sgemm-cube\nm: 256\nk: 256\nn: 256\ntiling: {bm: 64, bk: 64, bn: 64}\nnumerics: off\n"
	if err := os.WriteFile(filepath.Join(dir, "p.yaml"), []byte(prog), 0o644); err != nil {
		t.Fatal(err)
	}
	study := "program: p.yaml\nmetrics: [flops.tflops]\nvary: {" + vary + "}\nplot: {x: program.tiling.bm, y: flops.tflops}\n"
	path := filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(path, []byte(study), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestSweepCommand(t *testing.T) {
	study := sweepFixture(t, "program.tiling.bm: [64, 128, 1024], machine.core.buffers.L1: [512KiB]")
	out := filepath.Join(t.TempDir(), "out")
	msg, code, err := runCLI(t, "sweep", study, "-o", out, "-j", "2")
	if code != 0 {
		t.Fatalf("exit %d: %v\n%s", code, err, msg)
	}
	if !strings.Contains(msg, "3 points: 3 run, 0 already done, 1 failed") || !strings.Contains(msg, "error column") {
		t.Errorf("summary: %q", msg)
	}
	csv, err := os.ReadFile(filepath.Join(out, "results.csv"))
	if err != nil || !strings.Contains(string(csv), "2,1024,512KiB,524288,failed,,") {
		t.Errorf("results.csv: %v\n%s", err, csv)
	}
	// Shards and merge give the same CSV.
	var shards []string
	for _, sh := range []string{"0/2", "1/2"} {
		d := filepath.Join(t.TempDir(), "shard")
		if msg, code, err := runCLI(t, "sweep", study, "-o", d, "--shard", sh); code != 0 {
			t.Fatalf("shard %s: exit %d: %v\n%s", sh, code, err, msg)
		}
		shards = append(shards, d)
	}
	merged := filepath.Join(t.TempDir(), "merged")
	if msg, code, err := runCLI(t, "sweep", "merge", study, "-o", merged, shards[0]); code != 1 || !strings.Contains(msg+err.Error(), "1 points missing (indices 1)") {
		t.Errorf("partial merge: exit %d: %v\n%s", code, err, msg)
	}
	if msg, code, err := runCLI(t, "sweep", "merge", study, "-o", merged, shards[1]); code != 0 {
		t.Fatalf("merge: exit %d: %v\n%s", code, err, msg)
	}
	csv2, _ := os.ReadFile(filepath.Join(merged, "results.csv"))
	if string(csv2) != string(csv) {
		t.Errorf("merged CSV differs:\n%s\nvs\n%s", csv2, csv)
	}
	// Rerunning into a finished directory needs --resume.
	if _, code, err := runCLI(t, "sweep", study, "-o", out); code != 2 || !strings.Contains(err.Error(), "--resume") {
		t.Errorf("rerun: exit %d: %v", code, err)
	}
	if _, code, err := runCLI(t, "sweep", study, "-o", out, "--resume"); code != 0 {
		t.Errorf("resume: exit %d: %v", code, err)
	}
}

func TestSweepBadInput(t *testing.T) {
	good := sweepFixture(t, "program.tiling.bm: [64]")
	out := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"sweep", good}, "-o DIR is required"},
		{[]string{"sweep", good, "-o", out, "--shard", "2/2"}, `--shard "2/2": need 0 ≤ I < N`},
		{[]string{"sweep", good, "-o", out, "--shard", "x"}, `want I/N`},
		{[]string{"sweep", good, "-o", out, "-j", "-1"}, "-j -1"},
		{[]string{"sweep", sweepFixture(t, "program.tiling.bm: [64], program.tiling.bq: [64]"), "-o", out}, `key "vary.program.tiling.bq"`},
		{[]string{"sweep", sweepFixture(t, "program.tiling.bm: [64], program.m: []"), "-o", out}, `empty list`},
		{[]string{"sweep", sweepFixture(t, "program.tiling.bm: [64], program.m: 1..x"), "-o", out}, `not two numbers`},
		{[]string{"sweep", filepath.Join(out, "none.yaml"), "-o", out}, "study file"},
		{[]string{"sweep", "merge", good, out}, "-o DIR is required"},
	} {
		_, code, err := runCLI(t, c.args...)
		if code != 2 || err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: exit %d, error %v; want 2 and one line containing %q", c.args, code, err, c.want)
		}
	}
}

// A study whose every point is refused as bad input (its fixed settings
// suit none) exits 2 quoting the first refusal, with its results written;
// one whose points fail in the simulation exits 0.
func TestSweepEveryPointFailed(t *testing.T) {
	study := sweepFixture(t, "program.tiling.bm: [1024, 2048]")
	out := filepath.Join(t.TempDir(), "out")
	_, code, err := runCLI(t, "sweep", study, "-o", out, "-j", "1")
	if code != 2 || err == nil || !strings.Contains(err.Error(), "every point failed (point 0:") {
		t.Fatalf("exit %d: %v", code, err)
	}
	if _, err := os.Stat(filepath.Join(out, "results.csv")); err != nil {
		t.Errorf("no results.csv: %v", err)
	}
	// Points that fail in the simulation (a deadlock) are results: exit 0.
	prog, err := filepath.Abs(examplePath("deadlock.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dl := filepath.Join(t.TempDir(), "dl.yaml")
	if err := os.WriteFile(dl, []byte("program: "+prog+"\nvary: {machine.core.buffers.L1: [256KiB, 512KiB]}\nmetrics: [time.seconds]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, code, err := runCLI(t, "sweep", dl, "-o", filepath.Join(t.TempDir(), "o"), "-j", "1"); code != 0 {
		t.Errorf("every point deadlocked: exit %d (%v), want 0", code, err)
	}
}
