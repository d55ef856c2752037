package programs

import (
	"testing"

	"github.com/davinci-sim/davinci-sim/arch"
)

// The meter counts every instruction of a generated GEMM (all issued by the
// end), a GPU grid's blocks and lu-fused's host tasks, without changing
// the run.
func TestWorkMeter(t *testing.T) {
	run := func(text string, m *WorkMeter) *Result {
		t.Helper()
		f, err := Parse("p.yaml", ".", []byte(text))
		if err != nil {
			t.Fatal(err)
		}
		res, err := Execute(f, Options{}, RunHooks{Meter: m})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	gemm := "kind: hgemm\nm: 128\nn: 64\nk: 96\nnumerics: off\n"
	var m WorkMeter
	with, without := run(gemm, &m), run(gemm, nil)
	if frac, ok := m.Fraction(); !ok || frac != 1 || m.Total() <= 0 {
		t.Errorf("hgemm: fraction %v %v of %d, want all issued", frac, ok, m.Total())
	}
	if with.Report.Time != without.Report.Time || with.Report.Sim.Events != without.Report.Sim.Events {
		t.Errorf("metering changed the run: %+v %d vs %+v %d", with.Report.Time, with.Report.Sim.Events, without.Report.Time, without.Report.Sim.Events)
	}
	gpu := "kind: hgemm\nmachine: a100\nm: 1000\nn: 700\nk: 96\nnumerics: off\n"
	var g WorkMeter
	gwith, gwithout := run(gpu, &g), run(gpu, nil)
	if frac, ok := g.Fraction(); !ok || frac != 1 || g.Total() != 8*3 {
		t.Errorf("GPU hgemm: fraction %v %v of %d blocks, want all 24 issued", frac, ok, g.Total())
	}
	if gwith.Report.Time != gwithout.Report.Time || gwith.Report.Sim.Events != gwithout.Report.Sim.Events {
		t.Errorf("metering changed the GPU run")
	}
	// Fast-forwarded: the skipped blocks count as done.
	f, err := Parse("p.yaml", ".", []byte("kind: hgemm\nmachine: a100\nm: 8192\nn: 8192\nk: 256\nnumerics: off\n"))
	if err != nil {
		t.Fatal(err)
	}
	ff := arch.DefaultFastForward
	var fm WorkMeter
	res, err := Execute(f, Options{FastForward: &ff}, RunHooks{Meter: &fm})
	if err != nil {
		t.Fatal(err)
	}
	if frac, ok := fm.Fraction(); len(res.Stats.FastForward) == 0 || !ok || frac != 1 {
		t.Errorf("fast-forwarded GPU hgemm: fraction %v %v after skips %+v, want every block done", frac, ok, res.Stats.FastForward)
	}
	var lu WorkMeter
	run("kind: lu-fused\nn: 512\nnb: 256\nnumerics: off\n", &lu)
	if frac, ok := lu.Fraction(); !ok || frac != 1 || lu.Unit() != "host tasks" {
		t.Errorf("lu-fused: fraction %v %v of %s, want every host task done", frac, ok, lu.Unit())
	}
}
