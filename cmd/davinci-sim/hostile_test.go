package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// hostileCase is one hostile input: the command line (with @DIR@ standing
// for a scratch directory holding files), the files to create there, and
// what must come out.
type hostileCase struct {
	name  string
	files map[string]string // name in the scratch directory → content
	args  []string
	code  int    // wanted exit code (0 means 2)
	want  string // the error (one line) must contain this
}

// hostileCases are inputs a hostile (or careless) user gives: each must end
// quickly with exit code 2 and one clear line — never a hang, a crash, an
// out-of-memory or a silently wrong result (issue 18).
var hostileCases = []hostileCase{
	// Simulated time beyond the int64 picosecond range.
	{name: "tiny path bandwidth",
		args: []string{"run", examplePath("gm-bandwidth-1core.yaml"), "--set", "machine.core.paths.GM_L1.bytes_per_cycle=1e-9"},
		want: "simulated time exceeds the int64 picosecond range"},
	{name: "huge GM latency",
		args: []string{"run", examplePath("gm-bandwidth-1core.yaml"), "--set", "machine.gm.latency_cycles=10000000000000000"},
		want: "simulated time exceeds the int64 picosecond range"},
	{name: "huge scalar cycles",
		files: map[string]string{"p.yaml": "kind: asm\ncores: 1\nnumerics: off\nasm: |\n  scalar cycles=10000000000000000\n"},
		args:  []string{"run", "@DIR@/p.yaml"},
		want:  "line 1: scalar cycles=10000000000000000: simulated time exceeds"},
	{name: "scalar cycles up to the limit, then more",
		files: map[string]string{"p.yaml": "kind: asm\ncores: 1\nnumerics: off\nasm: |\n  scalar cycles=9223372036854775\n  scalar cycles=1000\n"},
		args:  []string{"run", "@DIR@/p.yaml"},
		want:  "line 2: scalar cycles=1000: simulated time exceeds"},
	{name: "huge vector startup",
		args: []string{"run", examplePath("hgemm.yaml"), "--numerics", "off", "--set", "machine.core.vector.startup_cycles=9000000000000000000"},
		want: "simulated time exceeds"},
	{name: "tiny vector rate",
		args: []string{"run", examplePath("hgemm.yaml"), "--numerics", "off", "--set", "machine.core.vector.cycles_per_repeat=1e300"},
		want: "simulated time exceeds"},
	{name: "huge cube startup",
		args: []string{"run", examplePath("cube-peak.yaml"), "--set", "machine.core.cube.startup_cycles=9000000000000000000"},
		want: "simulated time exceeds"},
	{name: "huge issue cost",
		args: []string{"run", examplePath("cube-peak.yaml"), "--set", "machine.core.scalar.issue_cycles=9000000000000000000"},
		want: "simulated time exceeds"},
	{name: "tiny GM bandwidth",
		args: []string{"run", examplePath("gm-bandwidth.yaml"), "--set", "machine.gm.bandwidth=1e-30"},
		want: "simulated time exceeds"},

	// Outputs: checked before the run, never outside -o.
	{name: "asm output name escaping -o",
		files: map[string]string{"p.yaml": "kind: asm\nasm: |\n  nop\noutputs:\n  - {name: ../escaped, addr: 0, shape: [4]}\n"},
		args:  []string{"run", "@DIR@/p.yaml", "-o", "@DIR@/out"},
		want:  `key "outputs" entry 0: output name "../escaped": must be a plain file name`},
	{name: "asm output name twice",
		files: map[string]string{"p.yaml": "kind: asm\nasm: |\n  nop\noutputs:\n  - {name: C, addr: 0, shape: [4]}\n  - {name: C, addr: 64, shape: [4]}\n"},
		args:  []string{"run", "@DIR@/p.yaml"},
		want:  `output name "C" used twice`},
	{name: "-o under a file",
		files: map[string]string{"f": ""},
		args:  []string{"run", examplePath("cube-peak.yaml"), "-o", "@DIR@/f/out"},
		want:  `-o "@DIR@/f/out"`},
	{name: "-o is a file",
		files: map[string]string{"f": ""},
		args:  []string{"run", examplePath("cube-peak.yaml"), "-o", "@DIR@/f"},
		want:  `-o "@DIR@/f": exists and is not a directory`},
	{name: "-o holds other files",
		files: map[string]string{"notes.txt": "mine"},
		args:  []string{"run", examplePath("cube-peak.yaml"), "-o", "@DIR@"},
		want:  `holds no report.json (not a previous run's output)`},
	{name: "--trace in a missing directory",
		args: []string{"run", examplePath("cube-peak.yaml"), "--trace", "@DIR@/no/such/t.json"},
		want: `--trace "@DIR@/no/such/t.json"`},
	{name: "--trace is a directory",
		args: []string{"run", examplePath("cube-peak.yaml"), "--trace", "@DIR@"},
		want: `--trace "@DIR@": is a directory`},

	// Sweeps.
	{name: "unknown sweep metric",
		files: map[string]string{"s.yaml": "program: " + absExample("cube-peak.yaml") + "\nvary:\n  program.cores: [1]\nmetrics: [time.seconds, flops.tflop]\n"},
		args:  []string{"sweep", "@DIR@/s.yaml", "-o", "@DIR@/out"},
		want:  `key "metrics[1]": "flops.tflop": flops has no key "tflop"`},
	{name: "negative point timeout",
		files: map[string]string{"s.yaml": "program: " + absExample("cube-peak.yaml") + "\nvary:\n  program.cores: [1]\nmetrics: [time.seconds]\n"},
		args:  []string{"sweep", "@DIR@/s.yaml", "-o", "@DIR@/out", "--point-timeout", "-1s"},
		want:  `--point-timeout -1s: must be ≥ 0`},
}

// absExample is examplePath made absolute (for study files in a scratch
// directory).
func absExample(name string) string {
	p, err := filepath.Abs(examplePath(name))
	if err != nil {
		panic(err)
	}
	return p
}

// TestHostileInputs runs every hostile case in-process: exit code 2 (or the
// case's), one line naming the problem, and no more than a few seconds.
func TestHostileInputs(t *testing.T) {
	for _, c := range hostileCases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, content := range c.files {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			args := make([]string, len(c.args))
			for i, a := range c.args {
				args[i] = strings.ReplaceAll(a, "@DIR@", dir)
			}
			want := c.code
			if want == 0 {
				want = 2
			}
			type result struct {
				out  string
				code int
				err  error
			}
			done := make(chan result, 1)
			go func() {
				out, code, err := runCLI(t, args...)
				done <- result{out, code, err}
			}()
			var r result
			select {
			case r = <-done:
			case <-time.After(60 * time.Second):
				t.Fatalf("%v: still running after 60 s", args)
			}
			if r.code != want {
				t.Fatalf("%v: exit %d, want %d (%v)\n%s", args, r.code, want, r.err, r.out)
			}
			if r.err == nil {
				return
			}
			msg := strings.ReplaceAll(r.err.Error(), dir, "@DIR@")
			t.Log(msg)
			if !strings.Contains(msg, c.want) || strings.Contains(msg, "\n") {
				t.Errorf("%v: error %q should be one line containing %q", args, msg, c.want)
			}
		})
	}
}

// Reusing an -o directory replaces the previous run's files: a timing-only
// run after a full one must not leave A/B/C.npy beside its report.json, and
// it says that no arrays were written. No temporary file is left.
func TestRunOutDirReplacesPreviousRun(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	small := []string{"run", examplePath("hgemm.yaml"), "-q", "--set", "program.m=64", "--set", "program.n=32", "--set", "program.k=48", "-o", dir}
	if _, code, err := runCLI(t, small...); code != 0 {
		t.Fatalf("exit %d: %v", code, err)
	}
	out, code, err := runCLI(t, append(small, "--numerics", "off")...)
	if code != 0 {
		t.Fatalf("exit %d: %v", code, err)
	}
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if strings.Join(names, " ") != "report.json" {
		t.Errorf("-o after a timing-only run holds %v, want only report.json", names)
	}
	if !strings.Contains(out, "only report.json written — the result arrays (.npy) need --numerics full (this run: numerics off)") {
		t.Errorf("no note about the missing arrays:\n%s", out)
	}
}

// The exit code of an interrupted run is 128 + the signal's number.
func TestInterruptExit(t *testing.T) {
	err := fmt.Errorf("stopped after 1ms of simulated time: %w", &interrupted{os.Interrupt})
	e := interruptExit(err)
	if exitCode(e) != 130 || e.Error() != "stopped after 1ms of simulated time: interrupted by SIGINT" {
		t.Errorf("interruptExit = %v (exit %d)", e, exitCode(e))
	}
	if e := interruptExit(&interrupted{syscall.SIGTERM}); exitCode(e) != 143 {
		t.Errorf("SIGTERM: exit %d", exitCode(e))
	}
	if interruptExit(errors.New("deadlock")) != nil {
		t.Error("a deadlock taken as an interruption")
	}
}

// A SIGINT stops a run cleanly, also when the process was started with
// SIGINT ignored (as a script starts a background job): exit 130 and one
// line saying so.
func TestRunInterrupted(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command")
	}
	bin := filepath.Join(t.TempDir(), "davinci-sim")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	// sh -c 'trap "" INT; exec …': the command starts with SIGINT ignored.
	cmd := exec.Command("sh", "-c", `trap "" INT; exec "$0" run "$1"`, bin, examplePath("lu-fused-32k.yaml"))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatal("SIGINT did not stop the run")
	}
	if code := cmd.ProcessState.ExitCode(); code != 130 {
		t.Errorf("exit %d, want 130; stderr:\n%s", code, stderr.String())
	}
	if msg := stderr.String(); !strings.HasSuffix(msg, "interrupted by SIGINT\n") || strings.Count(msg, "\n") != 1 {
		t.Errorf("stderr %q: want one line ending in \"interrupted by SIGINT\"", msg)
	}
}
