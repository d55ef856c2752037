package programs

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/davinci-sim/davinci-sim/arch"
)

// Instruction streams generated ahead of the cores on another goroutine
// (arch.Ahead, the default where the process has two processors) give the
// report of streams generated as read, byte for byte but for the wall
// clock: emulated GEMMs on GPUs timing-only with every fast-forward (step
// skips read their generators' cursors on the other goroutine; a failed
// check's run made again) and with their numerics (bit-exact C), SGEMM-cube
// on the DaVinci cube, and the fused LU with its host (full numerics), on
// one NPU and on a cluster's (one worker for the chips of one engine).
func TestReadAheadSameReport(t *testing.T) {
	if arch.NewAhead() == nil {
		t.Skip("GOMAXPROCS 1")
	}
	ff := arch.DefaultFastForward
	ff.Steps, ff.Stationary, ff.Kernels = true, true, true
	gemm := func(scheme, mn, k string) []string {
		return []string{"program.scheme=" + scheme, "program.m=" + mn, "program.n=" + mn, "program.k=" + k}
	}
	for _, c := range []struct {
		file, machine string
		sets          []string
		numerics      string
		ff            bool
		failed        bool // a step check fails: the run is made again
	}{
		{"a100-emulated-gemm", "a100", gemm("sgemm-cube", "2048", "2048"), NumericsOff, true, false},
		{"a100-emulated-gemm", "mi300x", gemm("ape-int16", "2048", "2048"), NumericsOff, true, false},
		{"a100-emulated-gemm", "t4", append(gemm("markidis", "2048", "4096"), t4Sectored...), NumericsOff, true, true},
		{"a100-emulated-gemm", "h100-sxm", gemm("ape-fp32b", "256", "256"), NumericsFull, false, false},
		{"sgemm-cube", "", []string{"program.m=2048", "program.n=2048", "program.k=2048"}, NumericsOff, false, false},
		// (check off: its golden model runs beside the simulation, on a
		// second CPU the read-ahead worker would then share — whether it
		// generated a chunk ahead became a race on a 2-CPU box)
		{"lu-fused-small", "", []string{"program.check=false"}, NumericsFull, false, false},
		{"lu-cluster-small", "", []string{"program.check=false"}, NumericsFull, false, false}, // (chips on one engine: one worker)
	} {
		f, err := ReadFile("examples/" + c.file + ".yaml")
		if err != nil {
			t.Fatal(err)
		}
		report := func(noAhead bool) string {
			arch.SetReadAhead(!noAhead)
			defer arch.SetReadAhead(true)
			opts := Options{Machine: c.machine, Numerics: c.numerics, Overrides: mustSets(t, c.sets...)}
			if c.ff {
				opts.FastForward = &ff
			}
			filled := arch.AheadFilled()
			res, err := Execute(f, opts, RunHooks{})
			if err != nil {
				t.Fatal(err)
			}
			if ahead := arch.AheadFilled() > filled; ahead == noAhead {
				t.Errorf("%s %s %v: chunks generated ahead %v, read-ahead off %v", c.file, c.machine, c.sets, ahead, noAhead)
			}
			r := *res.Report
			if failed := strings.Contains(strings.Join(r.Notes, " "), "CHECK FAILED"); failed != c.failed || (r.Sim.DiscardedRuns > 0) != c.failed ||
				c.failed && (r.Sim.DiscardedEvents == 0 || r.Sim.DiscardedWallSeconds <= 0 || r.Sim.DiscardedWallSeconds >= r.Sim.WallSeconds) {
				t.Errorf("%s %s %v: a failed step check %v (%+v), want %v", c.file, c.machine, c.sets, failed, r.Sim, c.failed)
			}
			r.Sim.WallSeconds, r.Sim.EventsPerSecond, r.Sim.KernelWallSeconds, r.Sim.DiscardedWallSeconds = 0, 0, 0, 0
			b, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			return string(b)
		}
		if a, b := report(false), report(true); a != b {
			t.Errorf("%s %s %v read ahead:\n%s\nas read:\n%s", c.file, c.machine, c.sets, a, b)
		}
	}
}

// A run whose fast-forward checks keep failing gives up with an error
// after maxRunsAgain runs made again instead of running again forever
// (each failure excludes more blocks, so only a bug would get there):
// here with a bound of none, on a run whose check fails once.
func TestRunsAgainBounded(t *testing.T) {
	f, err := ReadFile("examples/a100-emulated-gemm.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ff := arch.DefaultFastForward
	ff.Steps, ff.Stationary, ff.Kernels = true, true, true
	opts := Options{Machine: "t4", Numerics: NumericsOff, FastForward: &ff,
		Overrides: mustSets(t, append([]string{"program.scheme=markidis", "program.m=2048", "program.n=2048", "program.k=4096"}, t4Sectored...)...)}
	defer func(f func(int) int) { maxRunsAgain = f }(maxRunsAgain)
	maxRunsAgain = func(int) int { return 0 }
	_, err = Execute(f, opts, RunHooks{})
	if err == nil || !strings.Contains(err.Error(), "0 runs made again after failed checks, and a check failed once more") {
		t.Fatalf("got %v, want the run given up after a failed check", err)
	}
}
