package programs

import (
	"math"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/davinci-sim/davinci-sim/cube"
)

// TestExactOutputsParallel: the exact reference computed on several
// goroutines (exactOutputs above exactParallel products) equals the one
// computed on one, bit for bit, for every output and for a sample of
// them in any order; and a stop ends it on every goroutine.
func TestExactOutputsParallel(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	m, k, n := 96, 512, 100 // 4.9 M products: above exactParallel
	if int64(m*n*k) < exactParallel {
		t.Fatal("the case is below exactParallel")
	}
	a, b := make([]float64, m*k), make([]float64, k*n)
	for i := range a {
		a[i] = math.Ldexp(r.Float64()-0.5, r.IntN(40)-20)
	}
	for i := range b {
		b[i] = math.Ldexp(r.Float64()-0.5, r.IntN(40)-20)
	}
	idx := r.Perm(m * n)[:3000]
	serial := func(idx []int) (ref, abs []float64) {
		defer cube.SetMaxWorkers(0)
		cube.SetMaxWorkers(1)
		return exactGEMM64(a, b, m, k, n, idx, true)
	}
	for _, ix := range [][]int{nil, idx} {
		wantRef, wantAbs := serial(ix)
		for _, workers := range []int{2, 3} {
			cube.SetMaxWorkers(workers)
			ref, abs := exactGEMM64(a, b, m, k, n, ix, true)
			cube.SetMaxWorkers(0)
			if !slices.Equal(ref, wantRef) || !slices.Equal(abs, wantAbs) {
				t.Fatalf("idx %v, %d workers: the reference differs from one goroutine's", ix != nil, workers)
			}
		}
	}
	// Against one output computed alone.
	for _, i := range idx[:20] {
		ref, _ := exactGEMM64(a, b, m, k, n, []int{i}, false)
		want, _ := serial(nil)
		if ref[0] != want[i] {
			t.Fatalf("output %d: %v alone, %v with the others", i, ref[0], want[i])
		}
	}
	var calls atomic.Int32
	_, _, ok := exactGEMM64Until(a, b, m, k, n, nil, true, func() bool { calls.Add(1); return true })
	if ok || calls.Load() == 0 {
		t.Fatalf("a stop that says true: ok %v after %d calls", ok, calls.Load())
	}
}
