package programs

import (
	"math"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/davinci-sim/davinci-sim/accuracy"
	"github.com/davinci-sim/davinci-sim/report"
)

// The FP64 reference of a sampled run (referenceTile) is the full run's
// (accuracy.ReferenceGEMM64) at the sampled outputs: a review found the
// sampled one multiplying out a zero A[i][k] that the full one (and the CPU
// SGEMM) skips, so with A[0][3] = 0 and B[3][5] = +Inf, 0·Inf made the
// sampled reference NaN where the full one is finite — hgemm 64³: full
// rel_fro +Inf and cpu_sgemm_fp32 1.5e-7, sampled 11.9 bits and cpu_sgemm
// +Inf. Both modes run here on such inputs, on every path with a sampled
// reference of its own (GPU emulated-gemm, GPU hgemm, DaVinci sgemm-cube),
// at 64³: one tile, so the sampled run compares every output as the full
// one does.
func TestAccuracySampledReferenceIsFull(t *testing.T) {
	const m, k, n = 64, 64, 64
	dir := t.TempDir()
	a, b := make([]float32, m*k), make([]float32, k*n)
	rng := NewRand(5, 1)
	for i := range a {
		a[i] = float32(rng.Float64()*2 - 1)
	}
	for i := range b {
		b[i] = float32(rng.Float64()*2 - 1)
	}
	a[0*k+3], b[3*n+5] = 0, float32(math.Inf(1))
	if _, err := WriteOutputs(dir, []Output{{Name: "a", F32: a, Shape: []int{m, k}}, {Name: "b", F32: b, Shape: []int{k, n}}}); err != nil {
		t.Fatal(err)
	}
	sets := []string{"program.m=" + strconv.Itoa(m), "program.k=" + strconv.Itoa(k), "program.n=" + strconv.Itoa(n),
		"program.inputs.a=" + filepath.Join(dir, "a.npy"), "program.inputs.b=" + filepath.Join(dir, "b.npy")}
	for _, c := range []struct {
		file string
		sets []string
	}{
		{"examples/a100-emulated-gemm.yaml", []string{"program.scheme=hgemm"}},
		{"examples/a100-hgemm.yaml", nil},
		{"examples/sgemm-cube.yaml", nil},
	} {
		f, err := ReadFile(c.file)
		if err != nil {
			t.Fatal(err)
		}
		run := func(numerics string) *report.Report {
			t.Helper()
			res, err := Execute(f, Options{Overrides: mustSets(t, append(append([]string{"program.numerics=" + numerics}, sets...), c.sets...)...)}, RunHooks{})
			if err != nil {
				t.Fatalf("%s %s: %v", c.file, numerics, err)
			}
			return res.Report
		}
		full, sampled := run("full"), run("sampled")
		if full.Error == nil || sampled.Error == nil || !sampled.Error.Sampled || sampled.Error.Elements != m*n {
			t.Fatalf("%s: errors full %+v, sampled %+v: want both, the sampled one of every output", c.file, full.Error, sampled.Error)
		}
		// The result's row 0 has 0·Inf = NaN at column 5 against a
		// finite reference there, other rows +Inf as the reference has.
		if !math.IsInf(full.Error.RelFro, 1) {
			t.Errorf("%s: full rel_fro %g, want +Inf (a NaN against a finite reference)", c.file, full.Error.RelFro)
		}
		same := func(what string, x, y report.ErrorReport) {
			t.Helper()
			eq := func(p, q float64) bool {
				return p == q || math.IsNaN(p) && math.IsNaN(q) || math.Abs(p-q) <= 1e-12*math.Abs(q)
			}
			if !eq(x.RelFro, y.RelFro) || !eq(x.MaxRel, y.MaxRel) || !eq(x.MRED, y.MRED) || !eq(x.MaxErr, y.MaxErr) ||
				!eq(x.Bits, y.Bits) || x.NonFinite != y.NonFinite || x.Elements != y.Elements {
				t.Errorf("%s %s: sampled %+v, full %+v", c.file, what, x, y)
			}
		}
		same("error", *sampled.Error, *full.Error)
		for name, fb := range full.Baselines {
			same("baselines."+name, sampled.Baselines[name], fb)
			if name == "cpu_sgemm_fp32" && !(fb.RelFro < 1e-6) {
				t.Errorf("%s: the CPU SGEMM's rel_fro %g, want one of FP32's (it skips the zero, as the reference does)", c.file, fb.RelFro)
			}
		}
	}
}

// referenceTile is accuracy.ReferenceGEMM's C at the tile, bit for bit,
// zeros of A against infinities of B included.
func TestAccuracyReferenceTileBits(t *testing.T) {
	const m, k, n = 37, 53, 29
	rng := NewRand(3, 2)
	a, b := make([]float32, m*k), make([]float32, k*n)
	for i := range a {
		a[i] = float32(rng.Float64()*2 - 1)
		if i%7 == 0 {
			a[i] = 0
		}
	}
	for i := range b {
		b[i] = float32(rng.Float64()*2 - 1)
		if i%11 == 0 {
			b[i] = float32(math.Inf(1 - 2*(i%2)))
		}
	}
	full := accuracy.ReferenceGEMM(m, k, n, a, b)
	for _, tl := range [][4]int{{0, m, 0, n}, {5, 9, 3, 17}, {36, 1, 28, 1}} {
		r0, mm, c0, nn := tl[0], tl[1], tl[2], tl[3]
		got := referenceTile(a, b, k, n, r0, mm, c0, nn)
		for i := range mm {
			for j := range nn {
				w := full[(r0+i)*n+c0+j]
				if g := got[i*nn+j]; math.Float64bits(g) != math.Float64bits(w) {
					t.Fatalf("tile %v: C[%d][%d] = %v, the full reference's %v", tl, r0+i, c0+j, g, w)
				}
			}
		}
	}
}
