package arch_test

import (
	"testing"

	"github.com/davinci-sim/davinci-sim/arch"
	_ "github.com/davinci-sim/davinci-sim/arch/amd"
	"github.com/davinci-sim/davinci-sim/arch/archtest"
	"github.com/davinci-sim/davinci-sim/arch/gpu"
	"github.com/davinci-sim/davinci-sim/fp"
	"github.com/davinci-sim/davinci-sim/isa"
	"github.com/davinci-sim/davinci-sim/sim"
)

// placements records the core each CTA of a grid of xcdCTA blocks stored
// its tile from (the tile's address names the CTA); dup counts stores of
// a tile from another core than its first.
type placements struct {
	core map[int64]int
	dup  int
}

func (p *placements) Interval(core, lane int, cause arch.Cause, from, to sim.Time, in *isa.Instr, g *arch.Group) {
	if cause != arch.Busy || in == nil || in.Op != isa.OpL0CCopy {
		return
	}
	c := in.Dst.Addr / xcdTileBytes
	if k, ok := p.core[c]; ok && k != core { // (a store's parts are told apart)
		p.dup++
	}
	p.core[c] = core
}
func (p *placements) Flag(core, src, dst, id int, set bool, t sim.Time) {}
func (p *placements) Occupancy(core, buf int, bytes int64, t sim.Time)  {}
func (p *placements) Bandwidth(t sim.Time, bytesPerSecond float64)      {}

const xcdTileBytes = 64 * 64 * 4

// xcdCTA is CTA c of a grid whose blocks run 1 to 4 k-steps (by their
// index, so that they finish out of their order) of a 64×64 tile, then
// store it at c·xcdTileBytes; with alike, every block runs 2.
func xcdCTA(c int, alike bool) isa.Stream { return xcdCTAAt(c, alike, 0) }

// xcdCTAAt is xcdCTA reading its A and B tiles at base beyond xcdCTA's.
func xcdCTAAt(c int, alike bool, base int64) isa.Stream {
	const m, n, bk = 64, 64, 64
	const smA, smB, rfC, rfA, rfB = 0, 16 << 10, 0, 32 << 10, 48 << 10
	const gmC = 0
	gmA, gmB := base+1<<30, base+2<<30
	steps := 1 + (c*7+c/5)%4
	if alike {
		steps = 2
	}
	var ins []isa.Instr
	for kt := range steps {
		if kt > 0 {
			ins = append(ins, isa.WaitFlag(gpu.LaneMatrix, gpu.LaneCopy, 0))
		}
		ins = append(ins,
			gpu.CopyToShared(smA, gmA+int64(kt*bk*2), m, bk*2, bk*2+16, 4096),
			gpu.CopyToShared(smB, gmB+int64(kt*bk*n*2), bk, n*2, n*2+16, n*2),
			isa.SetFlag(gpu.LaneCopy, gpu.LaneLoad, 0),
			isa.WaitFlag(gpu.LaneCopy, gpu.LaneLoad, 0),
			gpu.LoadMatrix(rfA, smA, m, bk, bk*2+16, fp.FP16, false),
			gpu.LoadMatrix(rfB, smB, bk, n, n*2+16, fp.FP16, false),
			isa.SetFlag(gpu.LaneLoad, gpu.LaneMatrix, 0),
			isa.WaitFlag(gpu.LaneLoad, gpu.LaneMatrix, 0),
			gpu.MMA(rfC, rfA, rfB, m, bk, n, fp.FP16, fp.FP32, kt == 0),
			isa.SetFlag(gpu.LaneMatrix, gpu.LaneCopy, 0))
	}
	ins = append(ins,
		isa.SetFlag(gpu.LaneMatrix, gpu.LaneStore, 0),
		isa.WaitFlag(gpu.LaneMatrix, gpu.LaneStore, 0),
		gpu.StoreAccumulators(gmC+int64(c)*xcdTileBytes, rfC, m, n, n*4, fp.FP32, fp.FP32, fp.RNE, false))
	return isa.Slice(ins)
}

// runXCDs runs a grid of waves waves of xcdCTA blocks on an MI300X cut to
// 32 CUs (4 per XCD, 2 blocks each), fast-forwarded with ff (nil: in
// full), and returns its statistics and the core each block ran on.
func runXCDs(t *testing.T, waves int, alike bool, ff *arch.FastForward) (*arch.Stats, map[int64]int, int) {
	return runXCDGrids(t, 1, waves, alike, ff)
}

// runXCDGrids is runXCDs with kernels grids of waves waves one after
// the other.
func runXCDGrids(t *testing.T, kernels, waves int, alike bool, ff *arch.FastForward) (*arch.Stats, map[int64]int, int) {
	g := isa.Grid{Name: "xcds", CTAs: 64 * waves, CTA: func(c int) isa.Stream { return xcdCTA(c, alike) },
		Resources: isa.Resources{SharedBytes: 32 << 10, Registers: 16 << 10, Warps: 4}}
	if alike {
		g.Class = func(int) int { return 0 }
	}
	grids := make([]isa.Grid, kernels)
	for i := range grids {
		grids[i] = g
	}
	return runXCDProgram(t, grids, ff)
}

// runXCDProgram runs grids on the MI300X of runXCDs (with a placements
// observer where ff is nil).
func runXCDProgram(t *testing.T, grids []isa.Grid, ff *arch.FastForward) (*arch.Stats, map[int64]int, int) {
	t.Helper()
	m := archtest.Machine(t, "mi300x", "machine.cores=32")
	p := &placements{core: map[int64]int{}}
	opts := arch.Options{Mode: arch.Timing, FastForward: ff}
	if ff == nil {
		opts.Observer = p
	}
	chip, err := arch.NewChip(m, opts)
	if err != nil {
		t.Fatal(err)
	}
	st, err := chip.Run(isa.Program{Name: "xcds", Grids: grids})
	if err != nil {
		t.Fatal(err)
	}
	return st, p.core, p.dup
}

// On the MI300X (8 XCDs, core k on XCD k mod 8) every workgroup i runs on
// XCD i mod 8, in every wave — not only in the first, which the breadth-
// first dispatch over the cores places so by itself: its later workgroups
// had gone to whichever CU finished first (25 % of them on their XCD in
// MI300X HGEMM 8192×4096×512's later waves).
func TestGridXCDPlacement(t *testing.T) {
	const waves = 12
	_, core, dup := runXCDs(t, waves, false, nil)
	if len(core) != 64*waves || dup != 0 {
		t.Fatalf("%d blocks stored their tile (%d from a second core), want %d from one each", len(core), dup, 64*waves)
	}
	wrong := 0
	for c, k := range core {
		if c < 64 && int64(k) != c%32 {
			t.Errorf("first wave: block %d on core %d, want %d (breadth first)", c, k, c%32)
		}
		if int64(k%8) != c%8 {
			if wrong++; wrong <= 5 {
				t.Errorf("block %d on core %d (XCD %d), want XCD %d", c, k, k%8, c%8)
			}
		}
	}
	if wrong > 0 {
		t.Errorf("%d of %d blocks off their XCD", wrong, len(core))
	}
}

// Fast-forward skips waves on the XCDs' dispatch too: a grid of alike
// blocks gives the full run's time within its tolerance, every block
// counted once.
func TestGridXCDFastForward(t *testing.T) {
	const waves = 60
	full, _, _ := runXCDs(t, waves, true, nil)
	ff := arch.DefaultFastForward
	ff.WarmUp = 0
	fast, _, _ := runXCDs(t, waves, true, &ff)
	if len(fast.FastForward) == 0 {
		t.Fatalf("no skip: waits %+v", fast.FastForwardWaits)
	}
	skipped := 0
	for _, s := range fast.FastForward {
		if !s.Checked || s.WaveCTAs != 64 {
			t.Errorf("skip %+v: want a checked skip of 64-block waves", s)
		}
		skipped += s.Waves * s.WaveCTAs
	}
	if fast.Events >= full.Events/2 {
		t.Errorf("events %d fast-forwarded, %d in full: want half at most", fast.Events, full.Events)
	}
	if d := float64(fast.Time-full.Time) / float64(full.Time); d < -0.02 || d > 0.02 {
		t.Errorf("time %v fast-forwarded, %v in full (%+.2f %%)", fast.Time, full.Time, 100*d)
	}
	if d := fast.MMADFlops - full.MMADFlops; d < -1e-9*full.MMADFlops || d > 1e-9*full.MMADFlops {
		t.Errorf("flops %v fast-forwarded, %v in full", fast.MMADFlops, full.MMADFlops)
	}
	t.Logf("%d of %d blocks skipped; time %v fast, %v full; events %d, %d", skipped, 64*waves, fast.Time, full.Time, fast.Events, full.Events)
}

// A failed check on the XCDs' dispatch: a grid of alike blocks whose first
// ten waves read tiles nobody read before and whose later ones all read
// one (L2 hits: faster). A skip measured on the first waves fails its
// check and is taken back: every XCD goes back to its first skipped
// block, passes over the blocks it ran for the check, and every block
// runs or is skipped once — the flops and GM reads are the full run's
// exactly (alike blocks), the time within 2 % of it.
func TestGridXCDTakeBack(t *testing.T) {
	const waves = 40
	g := isa.Grid{Name: "xcds", CTAs: 64 * waves, Class: func(int) int { return 0 },
		CTA: func(c int) isa.Stream {
			if c < 64*10 {
				return xcdCTAAt(c, true, int64(1+c)<<20)
			}
			return xcdCTAAt(c, true, 0)
		},
		Resources: isa.Resources{SharedBytes: 32 << 10, Registers: 16 << 10, Warps: 4}}
	full, _, _ := runXCDProgram(t, []isa.Grid{g}, nil)
	ff := arch.DefaultFastForward
	ff.WarmUp = 0
	fast, _, _ := runXCDProgram(t, []isa.Grid{g}, &ff)
	if len(fast.FastForwardTakenBack) == 0 {
		t.Fatalf("nothing taken back: skips %+v", fast.FastForward)
	}
	for _, s := range fast.FastForwardTakenBack {
		if s.Checked || s.AheadTo < s.FromCTA+(s.Waves+s.Tail)*s.WaveCTAs {
			t.Errorf("taken back %+v: want a failed check, its Tail waves (at least) ahead", s)
		}
	}
	for _, s := range fast.FastForward {
		if !s.Checked {
			t.Errorf("skip %+v: its check failed", s)
		}
	}
	if fast.MMADFlops != full.MMADFlops || fast.GMReadBytes != full.GMReadBytes {
		t.Errorf("flops %v, GM reads %d fast-forwarded; %v, %d in full", fast.MMADFlops, fast.GMReadBytes, full.MMADFlops, full.GMReadBytes)
	}
	if d := float64(fast.Time-full.Time) / float64(full.Time); d < -0.02 || d > 0.02 {
		t.Errorf("time %v fast-forwarded, %v in full (%+.2f %%)", fast.Time, full.Time, 100*d)
	}
	t.Logf("taken back %d, skips %d; time %v fast, %v full; events %d, %d", len(fast.FastForwardTakenBack), len(fast.FastForward), fast.Time, full.Time, fast.Events, full.Events)
}

// Kernel skips (FastForward.Kernels) on the XCDs' dispatch: of three alike
// kernels the third's rest is skipped (its dispatch ends there), the run's
// time within the skip's allowance, its flops the full run's.
func TestGridXCDKernelSkips(t *testing.T) {
	full, _, _ := runXCDGrids(t, 3, 10, true, nil)
	ff := arch.DefaultFastForward
	ff.Kernels = true
	ff.Measure = 8 // (no wave skips in kernels of 10 waves)
	fast, _, _ := runXCDGrids(t, 3, 10, true, &ff)
	if len(fast.FastForwardKernels) == 0 {
		t.Fatalf("no kernel skip: wave skips %+v, times %v full %v", fast.FastForward, fast.Time, full.Time)
	}
	if fast.Events >= full.Events {
		t.Errorf("events %d fast-forwarded, %d in full: want fewer", fast.Events, full.Events)
	}
	if d := float64(fast.Time-full.Time) / float64(full.Time); d < -0.02 || d > 0.02 {
		t.Errorf("time %v fast-forwarded, %v in full (%+.2f %%)", fast.Time, full.Time, 100*d)
	}
	if d := fast.MMADFlops - full.MMADFlops; d < -1e-9*full.MMADFlops || d > 1e-9*full.MMADFlops {
		t.Errorf("flops %v fast-forwarded, %v in full", fast.MMADFlops, full.MMADFlops)
	}
	t.Logf("kernel skips %+v; time %v fast, %v full", fast.FastForwardKernels, fast.Time, full.Time)
}
