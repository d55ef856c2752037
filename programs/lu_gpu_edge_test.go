package programs

import (
	"testing"

	"github.com/davinci-sim/davinci-sim/fp"
	"github.com/davinci-sim/davinci-sim/isa"
	"github.com/davinci-sim/davinci-sim/machines"
)

// The GPU LU's trailing-update epilogue times its vector work — the
// scaling by −alpha, the FP16 C band's widening, the additions — over
// the CTA's whole warp tiles on an edge tile too, as its MMAs and the
// emulated GEMMs' epilogues are (a thread computes its whole fragment;
// the loads and the store are masked): tile (1, 0) of a 64×128 tiling
// with one valid row times as many elements as a whole tile's.
func TestLUSubEpilogueEdgeTileWhole(t *testing.T) {
	m, err := machines.Load("a100", nil)
	if err != nil {
		t.Fatal(err)
	}
	elems := func(M int, tb int64) (timed, computed int64) {
		pl, err := newGPUGEMMPlan("examples/a100-lu-fused.yaml", GEMMParams{Kind: "lu-fused", M: M, N: 128, K: 64,
			Tiling: Tiling{BM: 64, BN: 128, BK: 32, Stages: 3, Warps: 4}}, m, fp.FP16, gpuShape{readsC: true})
		if err != nil {
			t.Fatal(err)
		}
		pl.ldc = 128
		e := newEmitter(func(in isa.Instr) bool {
			if in.Op == isa.OpVector {
				timed += max(int64(in.Repeat), int64(in.Rows)*int64(in.Cols))
				computed += int64(in.Repeat)
			}
			return true
		}, m)
		luSubEpilogue(pl, e, 1, 0, pl.tg.accBuf, tb, 0.5)
		return timed, computed
	}
	for _, tb := range []int64{2, 4} {
		wt, wc := elems(128, tb)
		et, ec := elems(65, tb)
		if et != wt || ec >= wc {
			t.Errorf("trailing bytes %d: an edge tile of one row timed %d elements (computed %d), a whole tile %d (computed %d); want the same timed, fewer computed", tb, et, ec, wt, wc)
		}
	}
}
