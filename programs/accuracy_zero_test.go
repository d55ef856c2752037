package programs

import (
	"math"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/davinci-sim/davinci-sim/accuracy"
)

// A reference of exactly 0 where the result is not (a review's repro):
// hgemm rounds x = 1 + 2^-11 + 2^-12 to 1 + 2^-10 and −3x to −(3 + 2^-9),
// so C[0] = 3·(1 + 2^-10) − (3 + 2^-9) = 2^-10 where the exact 3x − 3x is 0. max_rel is +Inf (it read
// the other element's alone), mred is over the other element and the
// report counts the zero reference; with that element alone, mred has
// nothing to average (NaN). The same on DaVinci (its error section from
// errReport too).
func TestAccuracyZeroReference(t *testing.T) {
	x := float32(1 + 0x1p-11 + 0x1p-12)
	for _, c := range []struct {
		machine string
		a       []float32
		m       int
		mred    bool // mred is a number (a nonzero reference exists)
	}{
		{"a100", []float32{3, -3 * x, 0.5, 0.25}, 2, true},
		{"a100", []float32{3, -3 * x}, 1, false},
		{"ascend-910a", []float32{3, -3 * x, 0.5, 0.25}, 2, true},
	} {
		dir := t.TempDir()
		if _, err := WriteOutputs(dir, []Output{{Name: "a", F32: c.a, Shape: []int{c.m, 2}}, {Name: "b", F32: []float32{x, 1}, Shape: []int{2, 1}}}); err != nil {
			t.Fatal(err)
		}
		res, err := runEmulated(t, c.machine, "program.scheme=hgemm", "program.m="+strconv.Itoa(c.m), "program.k=2", "program.n=1",
			"program.inputs.a="+filepath.Join(dir, "a.npy"), "program.inputs.b="+filepath.Join(dir, "b.npy"), "program.numerics=full")
		if err != nil {
			t.Fatal(err)
		}
		e := res.Report.Error
		if !math.IsInf(e.MaxRel, 1) || e.ZeroRef != 1 || e.ZeroRefDiffers != 1 || math.IsNaN(e.MRED) != !c.mred {
			t.Errorf("%s, m = %d: error %+v: want max_rel +Inf, one zero reference that differs, mred a number %v", c.machine, c.m, e, c.mred)
		}
		if c.m == 1 && !math.IsInf(e.RelFro, 1) {
			t.Errorf("m = 1: rel_fro %g, want +Inf (‖ref‖ = 0)", e.RelFro)
		}
		// The CPU SGEMM computes the 0 exactly: against it the same.
		v := res.Report.Program["error_vs_cpu_sgemm"].(accuracy.Metrics)
		if !math.IsInf(v.MaxRel, 1) || v.ZeroRef != 1 || v.ZeroRefDiffers != 1 {
			t.Errorf("m = %d: error_vs_cpu_sgemm %+v", c.m, v)
		}
		if b := res.Report.Baselines["cpu_sgemm_fp32"]; b.ZeroRef != 1 || b.ZeroRefDiffers != 0 || b.RelFro != 0 {
			t.Errorf("m = %d: cpu_sgemm_fp32 %+v: want exact, its zero counted", c.m, b)
		}
	}
}
