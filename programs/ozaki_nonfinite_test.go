package programs

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// writeNPY64 writes v (rows×cols) as a float64 .npy file in dir.
func writeNPY64(t *testing.T, dir, name string, v []float64, rows, cols int) string {
	t.Helper()
	path := filepath.Join(dir, name)
	var buf bytes.Buffer
	if err := writeNPYAs(&buf, "<f8", v, []int{rows, cols}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// runOzakiNPY runs kind ozaki on a100 with numerics full on A (m×k) and B
// (k×n) from .npy files.
func runOzakiNPY(t *testing.T, a, b []float64, m, k, n int, sets ...string) *Result {
	t.Helper()
	dir := t.TempDir()
	pa, pb := writeNPY64(t, dir, "a.npy", a, m, k), writeNPY64(t, dir, "b.npy", b, k, n)
	base := []string{"program.m=" + strconv.Itoa(m), "program.k=" + strconv.Itoa(k), "program.n=" + strconv.Itoa(n),
		"program.inputs.a=" + pa, "program.inputs.b=" + pb, "program.numerics=full"}
	res, err := runOzaki(t, "a100", append(base, sets...)...)
	if err != nil {
		t.Fatal(err)
	}
	if res.Failure != nil {
		t.Fatal(res.Failure)
	}
	return res
}

// ozakiComponentwise returns a run's program.componentwise_error.
func ozakiComponentwise(t *testing.T, res *Result) map[string]any {
	t.Helper()
	cw, ok := res.Report.Program["componentwise_error"].(map[string]any)
	if !ok {
		t.Fatalf("no componentwise_error in %v", res.Report.Program)
	}
	return cw
}

// An exact C whose |A||B| is below 2^−1021 has no componentwise error
// (u·|A||B| underflowed: 0/0, reported +Inf).
func TestOzakiComponentwiseSubnormalBound(t *testing.T) {
	res := runOzakiNPY(t, []float64{0x1p-1060}, []float64{1}, 1, 1, 1, "program.precision=fixed")
	cw := ozakiComponentwise(t, res)
	if res.Report.Error.RelFro != 0 || cw["max_u"] != 0.0 || cw["mean_u"] != 0.0 || cw["elements"] != 1 {
		t.Fatalf("error %+v, componentwise %v", res.Report.Error, cw)
	}
}

// An Inf in A: the reference is IEEE's (+Inf·1 + 1·1 = +Inf), not the
// long accumulator's garbage. forced routes to native DGEMM, whose +Inf
// equals it: no error, the output counted apart. fixed slices the Inf as
// 0: C = 1 differs (infinite error), counted apart, with a note; the
// componentwise statistics stay those of the finite outputs (none here:
// 0, not negative).
func TestOzakiNonFiniteReference(t *testing.T) {
	a, b := []float64{math.Inf(1), 1}, []float64{1, 1}
	for _, sets := range [][]string{{"program.precision=forced"}, {"program.method=ozaki-ii", "program.precision="}} {
		res := runOzakiNPY(t, a, b, 1, 2, 1, sets...)
		cw := ozakiComponentwise(t, res)
		if e := res.Report.Error; e.RelFro != 0 || e.Bits != 64 || e.NonFinite != 1 {
			t.Errorf("%v: error %+v, want none (C = +Inf = the reference)", sets, e)
		}
		if cw["non_finite_reference"] != 1 || cw["non_finite_differ"] != nil || cw["elements"] != 0 || cw["mean_u"] != 0.0 {
			t.Errorf("%v: componentwise %v", sets, cw)
		}
	}
	res := runOzakiNPY(t, a, b, 1, 2, 1, "program.precision=fixed")
	cw := ozakiComponentwise(t, res)
	if e := res.Report.Error; !math.IsInf(e.RelFro, 1) {
		t.Errorf("fixed: error %+v, want infinite (C = 1, the reference +Inf)", e)
	}
	if cw["non_finite_reference"] != 1 || cw["non_finite_differ"] != 1 || cw["elements"] != 0 || cw["mean_u"] != 0.0 {
		t.Errorf("fixed: componentwise %v", cw)
	}
	if !strings.Contains(strings.Join(res.Report.Notes, "\n"), "the slicing takes as 0") {
		t.Errorf("fixed: no note on the Inf sliced as 0: %q", res.Report.Notes)
	}
	// NaN, Inf·0 and +Inf − Inf give a NaN reference, a lone −Inf product −Inf.
	for _, c := range []struct {
		a, b []float64
		want float64
	}{
		{[]float64{math.NaN(), 1}, []float64{1, 1}, math.NaN()},
		{[]float64{math.Inf(1), 1}, []float64{0, 1}, math.NaN()},
		{[]float64{math.Inf(1), math.Inf(1)}, []float64{1, -1}, math.NaN()},
		{[]float64{math.Inf(1), 2}, []float64{-3, 1}, math.Inf(-1)},
	} {
		ref, abs := exactGEMM64(c.a, c.b, 1, 2, 1, nil, true)
		if !(ref[0] == c.want || math.IsNaN(ref[0]) && math.IsNaN(c.want)) || !(math.IsInf(abs[0], 1) || math.IsNaN(abs[0])) {
			t.Errorf("A %v B %v: reference %g, |A||B| %g; want %g and a non-finite bound", c.a, c.b, ref[0], abs[0], c.want)
		}
	}
}
