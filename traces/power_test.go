package traces_test

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/davinci-sim/davinci-sim/programs"
	"github.com/davinci-sim/davinci-sim/sim"
	"github.com/davinci-sim/davinci-sim/traces"
)

// recordWithReport runs a program with a recorder over window w and returns
// the timeline and the run's report.json energy in joules (-1: none).
func recordWithReport(t *testing.T, f *programs.File, opts programs.Options, w traces.Window) (*traces.Timeline, float64) {
	t.Helper()
	rec := traces.NewRecorder(w)
	res, err := programs.Execute(f, opts, programs.RunHooks{Observer: rec})
	if err != nil {
		t.Fatal(err)
	}
	rec.Finish(res.Stats.Time)
	joules := -1.0
	if e := res.Report.Energy; e != nil {
		joules = e.Joules
	}
	return rec.Timeline(), joules
}

// TestPowerCounterIntegral: on a machine with a power model the trace's
// power counter, written and read back in both formats, integrates to
// report.json's energy.joules — a DaVinci GEMM, a hosted run (lu-fused:
// the NPU waits on the host at static power) and a GPU given a power
// model by --set.
func TestPowerCounterIntegral(t *testing.T) {
	cases := []struct {
		name string
		file string
		sets []string
	}{
		{"sgemm-cube", "sgemm-cube.yaml", []string{"program.m=512", "program.n=512", "program.k=512", "program.numerics=off"}},
		{"lu-fused", "lu-fused-small.yaml", []string{"program.numerics=off", "program.trailing=fp16"}},
		{"a100 hgemm", "a100-hgemm.yaml", []string{"program.m=512", "program.n=512", "program.k=512", "program.numerics=off",
			"machine.power.max_w=400", "machine.power.static_w=50", "machine.power.matrix_pj_per_flop=0.4",
			"machine.power.vector_pj_per_repeat=10", "machine.power.hbm_pj_per_byte=30", "machine.power.l2_pj_per_byte=5",
			"machine.power.path_pj_per_byte.GM_SMEM=2", "machine.power.path_pj_per_byte.GM_RF=2", "machine.power.path_pj_per_byte.SMEM_RF=1",
			"machine.power.path_pj_per_byte.RF_SMEM=1", "machine.power.path_pj_per_byte.RF_GM=2"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, opts := exampleProgram(t, c.file, c.sets...)
			tl, joules := recordWithReport(t, f, opts, traces.Window{})
			if joules <= 0 {
				t.Fatalf("no energy in the report")
			}
			if n := len(tl.Power); n < 3 || tl.Power[n-1].T != tl.To || tl.Power[n-1].Value != 0 || n > traces.MaxPowerBins+1 {
				t.Fatalf("power counter: %d samples ending %v, run ends %v", n, tl.Power[max(n-1, 0)], tl.To)
			}
			for _, name := range []string{"p.json", "p.pftrace"} {
				back := roundTrip(t, name, tl)
				got := traces.PowerEnergy(back.Power)
				if math.Abs(got-joules) > 1e-9*joules {
					t.Errorf("%s: power counter integrates to %.12g J, report.json energy.joules %.12g", name, got, joules)
				}
			}
			// The bins see the work: some bin draws more than static power.
			var peak float64
			for _, s := range tl.Power {
				peak = max(peak, s.Value)
			}
			if peak <= tl.Power[len(tl.Power)-2].Value && peak <= joules/tl.To.Seconds() {
				t.Errorf("flat power counter (peak %.1f W, average %.1f W)", peak, joules/tl.To.Seconds())
			}
		})
	}
}

// TestPowerCounterWindow: a windowed trace's counter covers the window
// only, starting at its start (less energy than the run's).
func TestPowerCounterWindow(t *testing.T) {
	f, opts := exampleProgram(t, "sgemm-cube.yaml", "program.m=512", "program.n=512", "program.k=512", "program.numerics=off")
	from, to := 5*sim.Microsecond, 20*sim.Microsecond
	tl, joules := recordWithReport(t, f, opts, traces.Window{From: from, To: to})
	if len(tl.Power) == 0 || tl.Power[0].T != from || tl.Power[len(tl.Power)-1].T != to {
		t.Fatalf("window power counter %v..%v, want %v..%v", tl.Power[0].T, tl.Power[len(tl.Power)-1].T, from, to)
	}
	if e := traces.PowerEnergy(tl.Power); !(e > 0 && e < joules) {
		t.Errorf("window energy %g J, run %g J", e, joules)
	}
}

// TestNoPowerCounterWithoutModel: a machine without a power section has no
// power counter, in the timeline or the trace.
func TestNoPowerCounterWithoutModel(t *testing.T) {
	f, opts := exampleProgram(t, "a100-hgemm.yaml", "program.m=256", "program.n=256", "program.k=256", "program.numerics=off")
	tl, joules := recordWithReport(t, f, opts, traces.Window{})
	if joules != -1 || len(tl.Power) != 0 {
		t.Fatalf("energy %g, %d power samples; want none", joules, len(tl.Power))
	}
	path := filepath.Join(t.TempDir(), "p.json")
	if err := traces.WriteTraceFile(path, tl); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(path); err != nil || strings.Contains(string(b), `"power"`) {
		t.Errorf("trace without a power model names a power counter (err %v)", err)
	}
}
