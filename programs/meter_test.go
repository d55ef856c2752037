package programs

import "testing"

// The meter counts every instruction of a generated GEMM (all issued by the
// end) without changing the run; host-launched lu-fused kernels stay unmetered.
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
	var lu WorkMeter
	run("kind: lu-fused\nn: 512\nnb: 256\nnumerics: off\n", &lu)
	if _, ok := lu.Fraction(); ok {
		t.Error("lu-fused: a fraction for host-launched kernels")
	}
}
