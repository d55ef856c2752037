package main

import (
	"os"
	"path/filepath"
	"strings"
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
