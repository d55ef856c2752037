package programs

import (
	"fmt"
	"math/bits"
)

// sampleOutputs returns the outputs of C (m×n, inner dimension k) an exact
// reference is computed at, and their values: every one (idx nil) where
// m·n·k is at most budget products — the reference costs k operations an
// output —, else max(1, budget/k) distinct outputs (fewer than m·n), drawn
// without replacement by the inputs' seed (Floyd's algorithm: one draw an
// output, a bit an output of C to mark the drawn) and listed in increasing
// order. Drawn with replacement, a sample of half of C's outputs held
// only ~80 % distinct ones, and error.elements counted the draws.
func sampleOutputs(c []float64, m, n, k int, seed int64, budget int64) (idx []int, got []float64) {
	if int64(m)*int64(n)*int64(k) <= budget {
		return nil, c
	}
	total := m * n
	s := int(min(int64(total), max(1, budget/int64(max(k, 1)))))
	rng := NewRand(seed, 98)
	drawn := make([]uint64, (total+63)/64)
	for j := total - s; j < total; j++ {
		t := rng.IntN(j + 1)
		if drawn[t/64]&(1<<(t%64)) != 0 {
			t = j // (t was drawn before: j, never drawn yet, takes its place)
		}
		drawn[t/64] |= 1 << (t % 64)
	}
	idx = make([]int, 0, s)
	for w, word := range drawn {
		for word != 0 {
			idx = append(idx, w*64+bits.TrailingZeros64(word))
			word &= word - 1
		}
	}
	got = make([]float64, len(idx))
	for x, i := range idx {
		got[x] = c[i]
	}
	return idx, got
}

// sampleOutputsNote says that an error was measured on a sample of the
// outputs (sampleOutputs' idx, of total), and why.
func sampleOutputsNote(sampled, total int, budget int64) string {
	b := fmt.Sprint(budget)
	if budget > 0 && budget&(budget-1) == 0 {
		b = fmt.Sprintf("2^%d", bits.TrailingZeros64(uint64(budget)))
	}
	return fmt.Sprintf("error from %d of the %d outputs (distinct, drawn by the inputs' seed): the exact reference's budget, %s products (k an output), is below m·n·k",
		sampled, total, b)
}
