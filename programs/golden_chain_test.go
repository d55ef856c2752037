package programs

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/davinci-sim/davinci-sim/cube"
	"github.com/davinci-sim/davinci-sim/fp"
)

// TestChainKSteps: goldenTile's MMAD calls over several k-steps give the
// bits of one call a k-step wherever chainKSteps allows them (a sequential
// FMA chain; TF32 blocks whose k-steps are whole blocks), and
// chainKSteps refuses the case where they would not (k-steps cutting
// blocks: a100 TF32 blocks of 4, k-steps of 6).
func TestChainKSteps(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	const mm, nn, k = 8, 8, 96
	a, b := make([]uint32, mm*k), make([]uint32, k*nn)
	for i := range a {
		a[i] = math.Float32bits(float32(math.Ldexp(r.Float64()-0.5, r.IntN(30)-15)))
	}
	for i := range b {
		b[i] = math.Float32bits(float32(math.Ldexp(r.Float64()-0.5, r.IntN(30)-15)))
	}
	// run computes C with calls of step k-steps of bk each.
	run := func(model cube.Model, in fp.Format, bk, step int) []uint32 {
		c := make([]uint32, mm*nn)
		for k0 := 0; k0 < k; k0 += step * bk {
			kk := min(step*bk, k-k0)
			ak := make([]uint32, mm*kk)
			for i := range mm {
				copy(ak[i*kk:(i+1)*kk], a[i*k+k0:])
			}
			if err := model.MMAD(in, fp.FP32, mm, kk, nn, ak, cube.RowMajor, b[k0*nn:], cube.RowMajor, c, cube.RowMajor, k0 == 0); err != nil {
				t.Fatal(err)
			}
		}
		return c
	}
	fma, _ := cube.Preset("fp32-rne")
	a100, _ := cube.Preset("a100")
	for _, c := range []struct {
		name  string
		model cube.Model
		in    fp.Format
		bk    int
		same  bool // chaining allowed and equal
	}{{"fp32-rne bk 8", fma, fp.FP32, 8, true}, {"fp32-rne bk 6", fma, fp.FP32, 6, true},
		{"a100 tf32 bk 8", a100, fp.TF32, 8, true}, {"a100 tf32 bk 6", a100, fp.TF32, 6, false}} {
		step := chainKSteps(c.model, c.in, c.bk, mm*nn)
		if (step > 1) != c.same {
			t.Fatalf("%s: chainKSteps %d", c.name, step)
		}
		if c.same && !slices.Equal(run(c.model, c.in, c.bk, 4), run(c.model, c.in, c.bk, 1)) {
			t.Fatalf("%s: calls of 4 k-steps differ from calls of one", c.name)
		}
		if !c.same && slices.Equal(run(c.model, c.in, c.bk, 4), run(c.model, c.in, c.bk, 1)) {
			t.Fatalf("%s: the case chainKSteps refuses gives the same bits: not a test of it", c.name)
		}
	}
}
