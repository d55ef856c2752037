package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/davinci-sim/davinci-sim/machines"
	"github.com/davinci-sim/davinci-sim/programs"
)

// --trace holds the run's events within what --max-memory leaves beside
// the run's own estimate: past it the run stops, refused with one line
// naming --trace-window and --trace-cores, and no trace is written; a
// bound the estimate takes whole is refused before the run; under the
// default bound the run is traced as before. (The recording was bounded
// only for --view without --trace, at a fixed 1 GiB: hgemm 8192³ traced
// at --max-memory 64MiB took 200 MB.)
func TestRunTraceWithinMaxMemory(t *testing.T) {
	sets := []string{"program.m=2048", "program.n=2048", "program.k=2048"}
	f, err := programs.ReadFile(examplePath("hgemm.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	ovs, err := machines.ParseOverrides(sets)
	if err != nil {
		t.Fatal(err)
	}
	est, ok := programs.HostBytes(f, programs.Options{Overrides: ovs, Numerics: programs.NumericsOff})
	if !ok {
		t.Fatal("no estimate of hgemm's host memory")
	}
	args := func(trace string, extra ...string) []string {
		a := []string{"run", examplePath("hgemm.yaml"), "-q", "--numerics", "off", "--trace", trace}
		for _, s := range sets {
			a = append(a, "--set", s)
		}
		return append(a, extra...)
	}
	dir := t.TempDir()
	trace := filepath.Join(dir, "t.pftrace")
	bound := fmt.Sprintf("%dKiB", (est+2<<20)>>10) // 2 MiB left for the trace
	out, code, err := runCLI(t, args(trace, "--max-memory", bound)...)
	if code != 2 || err == nil || strings.Contains(strings.TrimSpace(err.Error()), "\n") ||
		!strings.Contains(err.Error(), "--trace: the trace's events took") || !strings.Contains(err.Error(), "--trace-window or --trace-cores") {
		t.Errorf("--max-memory %s: exit %d (%v), want 2 and one line naming --trace-window and --trace-cores\n%s", bound, code, err, out)
	}
	if _, err := os.Stat(trace); !os.IsNotExist(err) {
		t.Errorf("a refused trace was written: %v", err)
	}
	small := fmt.Sprintf("%dKiB", (est-1<<20)>>10)
	if _, code, err := runCLI(t, args(trace, "--max-memory", small)...); code != 2 || err == nil || !strings.Contains(err.Error(), "nothing is left for the trace's events") {
		t.Errorf("--max-memory %s: exit %d (%v), want 2: nothing left", small, code, err)
	}
	if out, code, err := runCLI(t, args(trace)...); code != 0 {
		t.Errorf("the default bound: exit %d (%v)\n%s", code, err, out)
	}
	if _, err := os.Stat(trace); err != nil {
		t.Errorf("the default bound: %v", err)
	}
}
