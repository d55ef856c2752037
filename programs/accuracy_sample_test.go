package programs

import (
	"slices"
	"strings"
	"testing"

	"github.com/davinci-sim/davinci-sim/accuracy"
)

// sampleOutputs draws distinct outputs, deterministically, in increasing
// order, each as likely as the others: drawn with replacement (ozaki's
// exactSample, which dgemm used) half of C's outputs held ~79 % distinct
// ones and error.elements counted the draws.
func TestAccuracySampleOutputsDistinct(t *testing.T) {
	c := make([]float64, 7*9)
	for i := range c {
		c[i] = float64(i) + 0.5
	}
	if idx, got := sampleOutputs(c, 7, 9, 100, 1, 7*9*100); idx != nil || len(got) != len(c) {
		t.Fatalf("within the budget: idx %v, %d values; want every output", idx, len(got))
	}
	for _, budget := range []int64{1, 100, 2000, 3100, 7*9*100 - 1} {
		idx, got := sampleOutputs(c, 7, 9, 100, 1, budget)
		want := int(min(int64(len(c)-1), max(1, budget/100)))
		if len(idx) != want || len(got) != want {
			t.Fatalf("budget %d: %d outputs, want %d", budget, len(idx), want)
		}
		if !slices.IsSorted(idx) || len(slices.Compact(slices.Clone(idx))) != len(idx) || idx[0] < 0 || idx[len(idx)-1] >= len(c) {
			t.Fatalf("budget %d: idx %v: want distinct outputs of C in increasing order", budget, idx)
		}
		for x, i := range idx {
			if got[x] != c[i] {
				t.Fatalf("budget %d: got[%d] = %v, C[%d] = %v", budget, x, got[x], i, c[i])
			}
		}
		if again, _ := sampleOutputs(c, 7, 9, 100, 1, budget); !slices.Equal(again, idx) {
			t.Fatalf("budget %d: another draw %v, first %v", budget, again, idx)
		}
	}
	// Each output as likely: 3 of 10 over 3000 seeds, 900 each expected
	// (σ ≈ 25).
	counts := make([]int, 10)
	for seed := range int64(3000) {
		idx, _ := sampleOutputs(make([]float64, 10), 2, 5, 10, seed, 30)
		if len(idx) != 3 {
			t.Fatalf("seed %d: %d outputs", seed, len(idx))
		}
		for _, i := range idx {
			counts[i]++
		}
	}
	for i, n := range counts {
		if n < 750 || n > 1050 {
			t.Errorf("output %d drawn %d times of 3000 samples of 3 of 10, want ~900", i, n)
		}
	}
}

// dgemm's full numerics beyond the exact reference's budget (2^24
// products) compare distinct outputs and say how many and why.
func TestAccuracyDGEMMSampleNote(t *testing.T) {
	f, err := ReadFile("examples/a100-dgemm.yaml")
	if err != nil {
		t.Fatal(err)
	}
	res, err := Execute(f, Options{Overrides: mustSets(t, "program.m=128", "program.n=128", "program.k=1025", "program.numerics=full")}, RunHooks{})
	if err != nil {
		t.Fatal(err)
	}
	const want = 1 << 24 / 1025 // 16368 of 16384
	if e := res.Report.Error; e == nil || !e.Sampled || e.Elements != want {
		t.Fatalf("error %+v: want %d elements, sampled", e, want)
	}
	note := "error from 16368 of the 16384 outputs (distinct, drawn by the inputs' seed): the exact reference's budget, 2^24 products (k an output), is below m·n·k"
	if !slices.ContainsFunc(res.Report.Notes, func(s string) bool { return strings.Contains(s, note) }) {
		t.Errorf("notes %q: want %q", res.Report.Notes, note)
	}
	// The error is that of sampleOutputs' outputs.
	a, b, c := outputsF64(res)
	idx, got := sampleOutputs(c, 128, 128, 1025, 1, 1<<24)
	ref, _ := exactGEMM64(a, b, 128, 1025, 128, idx, false)
	if m, e := accuracy.Compare64(ref, got), res.Report.Error; m.RelFro != e.RelFro || m.MaxRel != e.MaxRel || m.MRED != e.MRED {
		t.Errorf("error %+v, the sample's %+v", e, m)
	}
}
