package hostmem

import "testing"

// HeapLimit leaves the reserve below a bound, and at least half of it
// (a small bound is not made a limit of nothing); no bound stays none.
func TestHeapLimit(t *testing.T) {
	for _, c := range []struct{ bound, want int64 }{
		{150 << 20, 118 << 20},
		{8 << 30, 8<<30 - 32<<20},
		{48 << 20, 24 << 20},
		{0, 0},
		{-1, -1},
	} {
		if got := HeapLimit(c.bound); got != c.want {
			t.Errorf("HeapLimit(%d) = %d, want %d", c.bound, got, c.want)
		}
	}
}
