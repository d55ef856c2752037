package report_test

import (
	"math"
	"strings"
	"testing"

	"github.com/davinci-sim/davinci-sim/machines"
	"github.com/davinci-sim/davinci-sim/programs"
)

// A run on a machine with a power model reports its energy: the parts add
// up, the average power is energy over time, below the machine's maximum
// for SGEMM-cube, and the GFLOP/s per W follow from the program's flops; a
// machine without one (the A100 file) reports none.
func TestEnergy(t *testing.T) {
	run := func(text string) *programs.Result {
		t.Helper()
		f, err := programs.Parse("p.yaml", ".", []byte(text))
		if err != nil {
			t.Fatal(err)
		}
		res, err := programs.Execute(f, programs.Options{}, programs.RunHooks{})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	res := run("kind: sgemm-cube\nm: 704\nn: 704\nk: 512\nnumerics: off\n")
	e := res.Report.Energy
	if e == nil {
		t.Fatal("no energy on ascend-910a")
	}
	sum := e.StaticJoules + e.MatrixJoules + e.VectorJoules + e.PathJoules + e.L2Joules + e.HBMJoules
	if math.Abs(sum-e.Joules) > 1e-12*e.Joules || e.MatrixJoules <= 0 || e.VectorJoules <= 0 || e.PathJoules <= 0 || e.HBMJoules <= 0 {
		t.Errorf("energy parts %+v", e)
	}
	if got := e.Joules / res.Report.Time.Seconds; math.Abs(got-e.AverageWatts) > 1e-9*got || e.OverMax || e.AverageWatts >= e.MaxWatts {
		t.Errorf("average %v W (energy/time %v), max %v, over %v", e.AverageWatts, got, e.MaxWatts, e.OverMax)
	}
	if want := res.Report.Flops.Total / e.Joules / 1e9; math.Abs(want-e.GFLOPSPerWatt) > 1e-9*want {
		t.Errorf("GFLOP/s per W %v, want %v", e.GFLOPSPerWatt, want)
	}
	var b strings.Builder
	res.Report.WriteSummary(&b)
	if !strings.Contains(b.String(), "energy ") {
		t.Errorf("summary has no energy line:\n%s", b.String())
	}
	if gpu := run("kind: hgemm\nmachine: a100\nm: 128\nn: 128\nk: 64\nnumerics: off\n"); gpu.Report.Energy != nil {
		t.Errorf("energy on a machine without a power model: %+v", gpu.Report.Energy)
	}
}

// A power section, once given, names every copy path and only those.
func TestPowerSectionChecked(t *testing.T) {
	for _, c := range []struct{ set, want string }{
		{"machine.power.path_pj_per_byte.gm_l2=1", "unknown paths gm_l2"},
		{"machine.power.max_w=0", `"power.max_w": must be in (0, 1e+09]`},
		{"machine.power.static_w=-1", `"power.static_w": must be in 0..1e+09`},
		{"machine.power.matrix_pj_per_flop=1e300", `"power.matrix_pj_per_flop": must be in 0..1e+09`},
	} {
		ovs, err := machines.ParseOverrides([]string{c.set})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := machines.Load("ascend-910a", ovs); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.set, err, c.want)
		}
	}
}
