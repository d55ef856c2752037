package programs

import (
	"fmt"
	"testing"

	"github.com/davinci-sim/davinci-sim/arch"
	"github.com/davinci-sim/davinci-sim/arch/gpu"
)

// An edge tile's vector work costs its CTA's whole warp tiles, as its
// MMAs do (gpu.WithWarpTiles): a CUTLASS thread adds and scales its whole
// accumulator fragment, in or out of bounds, and only the store is
// masked. Found by review: Ootomo's per-k-step outside additions and the
// epilogue's combination and C-band scaling and additions covered only an
// edge tile's valid rows (padded to 16), so an edge CTA's vector units
// were busy for less than a whole one's. Two CTAs of 64×128 with the
// split fused into the product kernels (no split kernel: every vector
// instruction is the product kernel's, and the fused conversions cover
// the whole tiles), m = 65 (the second CTA has one valid row), n = 129
// (one valid column) or a whole second tile: each SM's vector lane busy
// time and vector repeats are the same in every shape. Ootomo
// (outside additions, a combining epilogue) on the A100 and the MI210,
// FP32-F (termwise kernels reading C in bands, scaled) on the A100.
func TestEmulatedEdgeTileVectorWork(t *testing.T) {
	for _, c := range []struct {
		machine, scheme string
		warps           int
	}{
		{"a100", "ootomo", 8},
		{"mi210", "ootomo", 4},
		{"a100", "ape-fp32f", 4},
	} {
		type sm struct {
			busy    int64
			repeats int64
		}
		run := func(m, n int) [2]sm {
			t.Helper()
			res, err := runEmulated(t, c.machine, "program.scheme={name: "+c.scheme+", split: fused}",
				fmt.Sprintf("program.m=%d", m), fmt.Sprintf("program.n=%d", n), "program.k=256", "program.numerics=off",
				"program.tiling.bm=64", "program.tiling.bn=128", "program.tiling.bk=32", fmt.Sprintf("program.tiling.warps=%d", c.warps))
			if err != nil || res.Failure != nil {
				t.Fatalf("%s %s m=%d n=%d: %v %v", c.machine, c.scheme, m, n, err, res.Failure)
			}
			var out [2]sm
			used := 0
			for _, cs := range res.Stats.Cores {
				if cs.Lanes[gpu.LaneMatrix].Time[arch.Busy] == 0 {
					continue
				}
				if used == 2 {
					t.Fatalf("%s %s m=%d n=%d: more than two SMs ran MMAs", c.machine, c.scheme, m, n)
				}
				out[used] = sm{int64(cs.Lanes[gpu.LaneVector].Time[arch.Busy]), cs.VectorRepeats}
				used++
			}
			if used != 2 {
				t.Fatalf("%s %s m=%d n=%d: %d SMs ran MMAs, want 2", c.machine, c.scheme, m, n, used)
			}
			return out
		}
		whole := run(128, 128)
		if whole[0] != whole[1] {
			t.Fatalf("%s %s 128×128: the two CTAs' SMs differ: %+v", c.machine, c.scheme, whole)
		}
		for _, s := range [][2]int{{65, 128}, {64, 129}} {
			got := run(s[0], s[1])
			for i, g := range got {
				if g != whole[0] {
					t.Errorf("%s %s %d×%d: SM %d's vector lane busy %d ps, %d repeats; a whole tile's %d ps, %d",
						c.machine, c.scheme, s[0], s[1], i, g.busy, g.repeats, whole[0].busy, whole[0].repeats)
				}
			}
		}
	}
}
