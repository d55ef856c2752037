package gpu_test

import (
	"testing"

	"github.com/davinci-sim/davinci-sim/arch"
	"github.com/davinci-sim/davinci-sim/arch/archtest"
	"github.com/davinci-sim/davinci-sim/arch/gpu"
	"github.com/davinci-sim/davinci-sim/fp"
	"github.com/davinci-sim/davinci-sim/isa"
)

// An element-wise run given the CTA's whole warp tiles (gpu.WithWarpTiles
// on an edge tile's accumulator additions) keeps the vector units as busy
// and counts as many repeats (energy) as a run over rows × cols elements;
// with no more than its own elements (an aligned tile) it is the run it
// was. One CTA on one SM of each kind: a run of 256 elements over 64×128
// warp tiles against one of 8192, and against itself without the tiles.
func TestVectorWarpTilesTimed(t *testing.T) {
	for _, name := range []string{"a100", "mi210"} {
		run := func(ins ...isa.Instr) arch.CoreStats {
			t.Helper()
			g := isa.Grid{Name: "epilogue", CTAs: 1, CTA: func(int) isa.Stream { return isa.Slice(ins) },
				Resources: isa.Resources{Registers: 32 << 10, Warps: 8}}
			st := runChip(t, archtest.Machine(t, name, "machine.cores=1"), arch.Options{Mode: arch.Timing}, isa.Program{Name: "epilogue", Grids: []isa.Grid{g}})
			return st.Cores[0]
		}
		add := func(n int) isa.Instr { return gpu.Elementwise(isa.VAdd, 0, 0, 32<<10, n, fp.FP32) }
		scale := func(n int) isa.Instr { return gpu.Scale(0, 0, n, 0x1p-11) }
		whole := run(add(64*128), scale(64*128))
		edge := run(gpu.WithWarpTiles(add(256), 64, 128), gpu.WithWarpTiles(scale(256), 64, 128))
		plain := run(add(256), scale(256))
		busy := func(cs arch.CoreStats) int64 { return int64(cs.Lanes[gpu.LaneVector].Time[arch.Busy]) }
		if busy(edge) != busy(whole) || edge.VectorRepeats != whole.VectorRepeats || whole.VectorRepeats != 2*64*128 {
			t.Errorf("%s: 256 elements over 64×128 warp tiles: busy %d ps, %d repeats; 8192 elements: %d ps, %d repeats",
				name, busy(edge), edge.VectorRepeats, busy(whole), whole.VectorRepeats)
		}
		if busy(plain) >= busy(whole) || plain.VectorRepeats != 2*256 {
			t.Errorf("%s: 256 elements alone: busy %d ps, %d repeats", name, busy(plain), plain.VectorRepeats)
		}
		fewer := run(gpu.WithWarpTiles(add(256), 8, 16), gpu.WithWarpTiles(scale(256), 8, 16)) // fewer than its own: its own
		if busy(fewer) != busy(plain) || fewer.VectorRepeats != plain.VectorRepeats {
			t.Errorf("%s: 256 elements over 8×16 tiles: busy %d ps, %d repeats; alone %d ps, %d", name, busy(fewer), fewer.VectorRepeats, busy(plain), plain.VectorRepeats)
		}
	}
}
