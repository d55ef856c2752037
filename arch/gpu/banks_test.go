package gpu

import "testing"

// The bank-conflict model follows the bank geometry: on 32 banks of 4
// bytes a phase of 8 rows 128 bytes apart is 8 wavefronts, 144 apart 1,
// one address (a broadcast) 1; more banks never need more wavefronts,
// fewer or narrower ones at least the phase's 128 bytes over the banks'
// width (wider ones can need more: rows 16 bytes apart in one 64-byte
// word's bank but different words). Before, a bank wider than a 16-byte chunk
// counted no conflict, and the cost of a wavefront grew with the banks'
// width: 1024 banks gave 4 of the path's 128 B/clk (a review found it).
func TestConflictDegreeGeometry(t *testing.T) {
	for _, c := range []struct {
		stride           int64
		banks, bankBytes int
		want             int
	}{
		{128, 32, 4, 8}, {144, 32, 4, 1}, {16, 32, 4, 1}, {0, 32, 4, 1}, {64, 32, 4, 4}, {-128, 32, 4, 8},
		{128, 64, 4, 4}, {128, 1024, 4, 1}, {128, 32, 8, 4}, {128, 32, 64, 1}, {1024, 32, 64, 4}, {16, 32, 64, 1},
		{16, 8, 4, 4}, {16, 32, 1, 4}, {128, 8, 4, 8},
	} {
		if got := conflictDegree(c.stride, c.banks, c.bankBytes); got != c.want {
			t.Errorf("stride %d, %d banks of %d bytes: %d wavefronts, want %d", c.stride, c.banks, c.bankBytes, got, c.want)
		}
	}
	for _, stride := range []int64{0, 16, 48, 64, 80, 128, 136, 144, 256, 272, 1024, 4096 + 16} {
		base := conflictDegree(stride, 32, 4)
		for _, g := range [][2]int{{64, 4}, {128, 4}, {1024, 4}} {
			if d := conflictDegree(stride, g[0], g[1]); d > base {
				t.Errorf("stride %d: %d banks of %d bytes need %d wavefronts, 32 of 4 only %d", stride, g[0], g[1], d, base)
			}
		}
		for _, g := range [][2]int{{8, 4}, {16, 4}, {32, 2}, {32, 1}} {
			if d, least := conflictDegree(stride, g[0], g[1]), phaseBytes/(g[0]*g[1]); (stride != 0 && d < least) || d < base { // (stride 0: a broadcast of 16 bytes)
				t.Errorf("stride %d: %d banks of %d bytes need %d wavefronts, fewer than %d (the phase over their width) or than 32 of 4's %d", stride, g[0], g[1], d, least, base)
			}
		}
	}
}
