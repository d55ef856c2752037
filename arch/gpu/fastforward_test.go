package gpu_test

import (
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/davinci-sim/davinci-sim/arch"
	"github.com/davinci-sim/davinci-sim/arch/archtest"
	"github.com/davinci-sim/davinci-sim/arch/gpu"
	_ "github.com/davinci-sim/davinci-sim/arch/nvidia"
	"github.com/davinci-sim/davinci-sim/fp"
	"github.com/davinci-sim/davinci-sim/isa"
	"github.com/davinci-sim/davinci-sim/machines"
	"github.com/davinci-sim/davinci-sim/sim"
)

// periodicCTA is a CTA that every block of a grid runs alike: it reads the
// same A and B k-tiles (after the first wave, L2 hits), multiplies them and
// stores the same C tile, so every wave of the grid repeats the one before.
func periodicCTA() isa.Stream { return ctaAt(0) }

// ctaAt is periodicCTA with its A and B tiles base bytes further.
func ctaAt(base int64) isa.Stream { return ctaDeep(base, 512) }

// ctaDeep is ctaAt with a k-loop of k/64 steps.
func ctaDeep(base int64, k int) isa.Stream { return ctaProducts(base, k, 1, false) }

// ctaProducts is ctaDeep with products MMAs per k-step into the one
// accumulator, back to back (the odd ones half as wide), and with vector,
// element-wise work on the vector lane beside each k-step's MMAs.
func ctaProducts(base int64, k, products int, vector bool) isa.Stream {
	const bk = 64
	var ins []isa.Instr
	for kt := 0; kt*bk < k; kt++ {
		ins = kStep(ins, base+int64(kt*bk)*2, base+1<<20, kt, k, products, vector)
	}
	return isa.Slice(storeTile(ins))
}

// kStep appends k-step kt of a 64×64 output tile with a k-loop k deep
// (64 a step) to ins: copies of A's tile at gmA (rows k·2 bytes apart) and
// B's k-step at gmB into shared memory, fragment loads, products MMAs into
// the one accumulator (the odd ones half as wide), vector work beside them
// when vector, and the flags between the lanes (each free token of the
// step before waited for first).
func kStep(ins []isa.Instr, gmA, gmB int64, kt, k, products int, vector bool) []isa.Instr {
	const m, n, bk = 64, 64, 64
	const smA, smB = 0, 16 << 10
	const rfC, rfA, rfB, rfV = 0, 32 << 10, 48 << 10, 56 << 10
	if kt > 0 {
		ins = append(ins, isa.WaitFlag(gpu.LaneMatrix, gpu.LaneCopy, 0))
	}
	ins = append(ins,
		gpu.CopyToShared(smA, gmA, m, bk*2, bk*2+16, int64(k)*2),
		gpu.CopyToShared(smB, gmB+int64(kt*bk*n)*2, bk, n*2, n*2+16, n*2),
		isa.SetFlag(gpu.LaneCopy, gpu.LaneLoad, 0),
		isa.WaitFlag(gpu.LaneCopy, gpu.LaneLoad, 0),
		gpu.LoadMatrix(rfA, smA, m, bk, bk*2+16, fp.FP16, false),
		gpu.LoadMatrix(rfB, smB, bk, n, n*2+16, fp.FP16, false),
		isa.SetFlag(gpu.LaneLoad, gpu.LaneMatrix, 0),
		isa.WaitFlag(gpu.LaneLoad, gpu.LaneMatrix, 0),
	)
	if vector {
		ins = append(ins, gpu.Elementwise(isa.VAdd, rfV, rfV, rfV, 2048, fp.FP32))
	}
	for p := range products {
		ins = append(ins, gpu.MMA(rfC, rfA, rfB, m, bk, n>>(p%2), fp.FP16, fp.FP32, kt == 0 && p == 0))
	}
	return append(ins, isa.SetFlag(gpu.LaneMatrix, gpu.LaneCopy, 0))
}

// storeTile appends the end of a 64×64 tile's CTA: the accumulators
// stored to C once the MMAs are done.
func storeTile(ins []isa.Instr) []isa.Instr {
	const m, n = 64, 64
	const gmC, rfC = int64(2 << 20), 0
	return append(ins,
		isa.SetFlag(gpu.LaneMatrix, gpu.LaneStore, 0),
		isa.WaitFlag(gpu.LaneMatrix, gpu.LaneStore, 0),
		gpu.StoreAccumulators(gmC, rfC, m, n, n*4, fp.FP32, fp.FP32, fp.RNE, false))
}

// runPeriodic runs two grids of 60 waves of periodic CTAs on 4 SMs (2
// CTAs each), fast-forwarded with ff (nil: fully simulated).
func runPeriodic(t *testing.T, ff *arch.FastForward) (*arch.Stats, []arch.GridTimes) {
	t.Helper()
	m := archtest.Machine(t, "a100", "machine.cores=4")
	chip, err := arch.NewChip(m, arch.Options{Mode: arch.Timing, FastForward: ff})
	if err != nil {
		t.Fatal(err)
	}
	g := isa.Grid{Name: "periodic", CTAs: 8 * 60, CTA: func(int) isa.Stream { return periodicCTA() },
		Resources: isa.Resources{SharedBytes: 64 << 10, Registers: 16 << 10, Warps: 4}}
	g2 := g
	g2.Name = "periodic-2"
	st, err := chip.Run(isa.Program{Name: "periodic", Grids: []isa.Grid{g, g2}})
	if err != nil {
		t.Fatal(err)
	}
	return st, chip.GridTimes()
}

// Fast-forward on a grid whose waves repeat exactly gives the full
// simulation's statistics: time, every lane's time by cause and
// instructions, bytes, L2 hits, kernel times (floats — flops, channel and
// buffer means — to rounding); only the events simulated differ.
func TestFastForwardExact(t *testing.T) {
	full, fullTimes := runPeriodic(t, nil)
	ff := arch.DefaultFastForward
	ff.Tolerance = 0
	fast, fastTimes := runPeriodic(t, &ff)
	if len(fast.FastForward) != 2 {
		t.Fatalf("skips %+v, want one per grid", fast.FastForward)
	}
	for _, s := range fast.FastForward {
		if !s.Exact || s.Spread != 0 || s.Waves < 40 || !s.Checked || s.TailPeriod != s.Period {
			t.Errorf("skip %+v: want an exact, checked skip of most waves", s)
		}
	}
	if fast.Events >= full.Events/3 {
		t.Errorf("events %d fast-forwarded, %d simulated in full: want a third at most", fast.Events, full.Events)
	}
	if len(fastTimes) != len(fullTimes) {
		t.Fatalf("kernel times\n%+v fast-forwarded\n%+v in full", fastTimes, fullTimes)
	}
	sameTimes(t, fastTimes, fullTimes) // (their events are what each cost: fewer)
	close := func(what string, a, b float64) {
		t.Helper()
		if math.Abs(a-b) > 1e-9*math.Max(math.Abs(a), math.Abs(b)) {
			t.Errorf("%s: %v fast-forwarded, %v in full", what, a, b)
		}
	}
	close("flops", fast.MMADFlops, full.MMADFlops)
	close("GM utilisation", fast.GMUtilisation, full.GMUtilisation)
	close("L2 utilisation", fast.L2Utilisation, full.L2Utilisation)
	for i := range full.Cores {
		for b := range full.Cores[i].Buffers {
			close("buffer mean", fast.Cores[i].Buffers[b].Mean, full.Cores[i].Buffers[b].Mean)
			fast.Cores[i].Buffers[b].Mean = full.Cores[i].Buffers[b].Mean
		}
	}
	fast.MMADFlops, fast.GMUtilisation, fast.L2Utilisation = full.MMADFlops, full.GMUtilisation, full.L2Utilisation
	// The skipped waves' GM reads (the two grids' 960 blocks read alike).
	skipped := 0
	for _, s := range fast.FastForward {
		skipped += s.Waves * s.WaveCTAs
	}
	if want := int64(skipped) * full.GMReadBytes / (2 * 8 * 60); fast.SkippedGMReadBytes != want || full.SkippedGMReadBytes != 0 {
		t.Errorf("skipped GM reads %d fast-forwarded, want %d blocks' %d (%d in full)", fast.SkippedGMReadBytes, skipped, want, full.SkippedGMReadBytes)
	}
	// Why waves were simulated: nothing but the warm-up held a skip back,
	// and each grid's first skip is where the skip says.
	if len(fast.FastForwardWaits) != 2 {
		t.Fatalf("waits %+v, want one per grid", fast.FastForwardWaits)
	}
	for i, w := range fast.FastForwardWaits {
		s := fast.FastForward[i]
		if w.Grid != s.Grid || w.Waves != 60 || w.FirstSkip != s.FromCTA/8 || w.Spread+w.Moved+w.Apart+w.Unlike != 0 {
			t.Errorf("wait %+v for skip %+v: want the grid's 60 waves, its first skip at wave %d, no refusal", w, s, s.FromCTA/8)
		}
	}
	fast.Events, fast.FastForward, fast.SkippedGMReadBytes, fast.FastForwardWaits = full.Events, nil, 0, nil
	if !reflect.DeepEqual(fast, full) {
		t.Errorf("statistics differ:\n%+v fast-forwarded\n%+v in full", fast, full)
	}
}

// A grid whose CTAs run the same instructions but whose later ones hit
// in the L2 (the first 160 read tiles nobody read before, the rest one
// tile): the measured waves repeat, the waves after the skip are faster,
// the check fails and the skip is taken back — its shift, its counters,
// its blocks' progress —, its blocks simulated after the check's: every
// block runs once, so the instructions and bytes are the full run's to
// the unit, and the time within 1 % of it (the blocks in another order).
func TestFastForwardCheck(t *testing.T) {
	m := archtest.Machine(t, "a100", "machine.cores=4")
	g := isa.Grid{Name: "changing", CTAs: 8 * 60, CTA: func(c int) isa.Stream {
		if c < 160 {
			return ctaAt(int64(4+c) << 22)
		}
		return ctaAt(0)
	}, Resources: isa.Resources{SharedBytes: 64 << 10, Registers: 16 << 10, Warps: 4}}
	full, fast := fullAndFast(t, m, g)
	if len(fast.FastForwardTakenBack) == 0 {
		t.Fatalf("nothing taken back (skips %+v)", fast.FastForward)
	}
	for i, sk := range fast.FastForwardTakenBack {
		if sk.Grid != "changing" || sk.Checked || sk.TailPeriod >= sk.Period || sk.AheadTo < sk.FromCTA+(sk.Waves+sk.Tail)*sk.WaveCTAs || sk.FromCTA >= 160 {
			t.Fatalf("taken back %+v, want a failed check of a skip from the first 160 blocks, faster waves after it, its Tail waves (at least) ahead", sk)
		}
		// The blocks kept from later skips: the 2·Measure waves after the
		// first failure's measured ones, the second's skip and check.
		want := arch.BlockRange{From: sk.FromCTA, To: sk.FromCTA + 2*arch.DefaultFastForward.Measure*sk.WaveCTAs}
		if i > 0 {
			want.To = sk.AheadTo
		}
		if sk.Failure != i+1 || sk.KeptOut != want {
			t.Errorf("taken back %d: failure %d, kept out %+v; want %d, %+v", i, sk.Failure, sk.KeptOut, i+1, want)
		}
	}
	sk := fast.FastForwardTakenBack[0]
	for _, s := range fast.FastForward {
		if !s.Checked {
			t.Errorf("skip %+v after the failed one: want it checked", s)
		}
	}
	if fast.GMReadBytes != full.GMReadBytes || fast.MMADFlops != full.MMADFlops || fast.Events >= full.Events+full.Events/10 {
		t.Errorf("GM reads %d, flops %g, events %d; full: %d, %g, %d", fast.GMReadBytes, fast.MMADFlops, fast.Events, full.GMReadBytes, full.MMADFlops, full.Events)
	}
	for i := range full.Cores {
		for l := range full.Cores[i].Lanes {
			if a, b := fast.Cores[i].Lanes[l].Instrs, full.Cores[i].Lanes[l].Instrs; a != b {
				t.Errorf("core %d lane %d: %d instructions, full %d", i, l, a, b)
			}
		}
	}
	if d := math.Abs(float64(fast.Time-full.Time)) / float64(full.Time); d > 0.01 {
		t.Errorf("time %v, full %v (%.2f %% apart)", fast.Time, full.Time, 100*d)
	}
	t.Logf("taken back: blocks %d–%d after %d–%d; time %v, full %v", sk.FromCTA, sk.FromCTA+sk.Waves*sk.WaveCTAs-1, sk.FromCTA+sk.Waves*sk.WaveCTAs, sk.AheadTo-1, fast.Time, full.Time)
}

// A grid whose first waves repeat at a pace it leaves after them (the
// first 10 of 200 waves read one tile, L2 hits; the rest read tiles nobody
// read before): with no warm-up the skip measures that plateau and its
// check fails; with the default warm-up (a sixteenth of the run's waves)
// it measures the waves after it, passes its check and comes within the
// tolerance of the full run.
func TestFastForwardWarmUp(t *testing.T) {
	if testing.Short() {
		t.Skip("200 waves, in full and fast-forwarded")
	}
	m := archtest.Machine(t, "a100", "machine.cores=4")
	g := isa.Grid{Name: "plateau", CTAs: 8 * 200, CTA: func(c int) isa.Stream {
		if c < 8*10 {
			return ctaAt(0)
		}
		return ctaAt(int64(4+c) << 22)
	}, Resources: isa.Resources{SharedBytes: 64 << 10, Registers: 16 << 10, Warps: 4}}
	full, err := runGrid(t, m, g, nil)
	if err != nil {
		t.Fatal(err)
	}
	ff := arch.DefaultFastForward
	ff.WarmUp = 0
	cold, err := runGrid(t, m, g, &ff)
	if err != nil {
		t.Fatal(err)
	}
	if b := cold.FastForwardTakenBack; len(b) == 0 || b[0].FromCTA > 8*10 {
		t.Fatalf("no warm-up: taken back %+v, want a failed check of a skip measured on the plateau", b)
	}
	ff.WarmUp = arch.DefaultFastForward.WarmUp
	fast, err := runGrid(t, m, g, &ff)
	if err != nil {
		t.Fatal(err)
	}
	if len(fast.FastForward) != 1 {
		t.Fatalf("skips %+v, want one", fast.FastForward)
	}
	if s := fast.FastForward[0]; !s.Checked || s.FromCTA < 8*(200/16+ff.Measure) {
		t.Errorf("skip %+v: want it checked, measured after the warm-up", s)
	}
	if d := math.Abs(float64(fast.Time-full.Time)) / float64(full.Time); d > ff.Tolerance {
		t.Errorf("time %v fast-forwarded, %v in full (%.2f %% apart)", fast.Time, full.Time, 100*d)
	}
}

// twoPartGrid is 30 waves (on 4 SMs, 2 CTAs each) of ctaDeep(0, 512) CTAs,
// then 30 of CTAs twice as deep.
func twoPartGrid(name string) isa.Grid {
	return isa.Grid{Name: name, CTAs: 8 * 60, CTA: func(c int) isa.Stream {
		if c < 8*30 {
			return ctaDeep(0, 512)
		}
		return ctaDeep(0, 1024)
	}, Resources: isa.Resources{SharedBytes: 64 << 10, Registers: 16 << 10, Warps: 4}}
}

// A grouped GEMM's grid: 30 waves of CTAs, then 30 of CTAs twice as deep.
// A skip in the first part must leave the check's waves in that part (the
// deeper waves after it would fail the check); every wave of each part
// repeats exactly, so every skip passes its check and the run equals the
// full simulation.
func TestFastForwardGroupedGrid(t *testing.T) {
	m := archtest.Machine(t, "a100", "machine.cores=4")
	g := twoPartGrid("grouped")
	run := func(ff *arch.FastForward) *arch.Stats {
		t.Helper()
		chip, err := arch.NewChip(m, arch.Options{Mode: arch.Timing, FastForward: ff})
		if err != nil {
			t.Fatal(err)
		}
		st, err := chip.Run(isa.Program{Name: "grouped", Grids: []isa.Grid{g}})
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	full := run(nil)
	ff := arch.DefaultFastForward
	ff.Tolerance = 0
	fast := run(&ff)
	if len(fast.FastForward) != 2 {
		t.Fatalf("skips %+v, want one in each part", fast.FastForward)
	}
	for _, s := range fast.FastForward {
		if !s.Checked || !s.Exact || s.FromCTA+(s.Waves+ff.Tail)*s.WaveCTAs > 8*30 && s.FromCTA < 8*30 {
			t.Errorf("skip %+v: want exact and checked, its check's waves in its own part", s)
		}
	}
	if fast.Time != full.Time {
		t.Errorf("time %v fast-forwarded, %v in full", fast.Time, full.Time)
	}
	// The skipped blocks' work is their own part's, not the grid's mean.
	if fast.GMReadBytes != full.GMReadBytes || fast.GMWriteBytes != full.GMWriteBytes || fast.L2HitBytes != full.L2HitBytes ||
		math.Abs(fast.MMADFlops-full.MMADFlops) > 1e-9*full.MMADFlops {
		t.Errorf("GM bytes %d/%d, L2 hits %d, flops %g fast-forwarded; %d/%d, %d, %g in full",
			fast.GMReadBytes, fast.GMWriteBytes, fast.L2HitBytes, fast.MMADFlops, full.GMReadBytes, full.GMWriteBytes, full.L2HitBytes, full.MMADFlops)
	}
	sameCoreWork(t, "fast-forwarded", fast, full)
}

// A grid whose Class declares blocks alike that are not (the grouped grid
// above, every block of class 0) stops a fast-forwarded run with an error
// naming the kernel, instead of skipping deeper blocks as shallow ones.
func TestFastForwardWrongClass(t *testing.T) {
	m := archtest.Machine(t, "a100", "machine.cores=4")
	g := twoPartGrid("lying")
	g.Class = func(int) int { return 0 }
	ff := arch.DefaultFastForward
	ff.Tolerance = 0
	chip, err := arch.NewChip(m, arch.Options{Mode: arch.Timing, FastForward: &ff})
	if err != nil {
		t.Fatal(err)
	}
	_, err = chip.Run(isa.Program{Name: "lying", Grids: []isa.Grid{g}})
	if err == nil || !strings.Contains(err.Error(), "kernel lying: its Class declares blocks") {
		t.Fatalf("got %v, want the wrong declaration named", err)
	}
}

// A short kernel after a long one simulated in full (excluded here; one
// whose waves do not repeat): the short kernel's waves repeat exactly, but
// a skip would stand for under FastForward.MinGain of the events simulated
// before it — less than a failed check would cost, the whole run again —
// so it is declined (listed once, with its figures) and the kernel
// simulated; with MinGain 0 it is skipped, to the same time.
func TestFastForwardMinGain(t *testing.T) {
	m := archtest.Machine(t, "a100", "machine.cores=4")
	res := isa.Resources{SharedBytes: 64 << 10, Registers: 16 << 10, Warps: 4}
	long := isa.Grid{Name: "long", CTAs: 8 * 600, CTA: func(int) isa.Stream { return periodicCTA() }, Resources: res}
	short := isa.Grid{Name: "short", CTAs: 8 * 14, CTA: func(int) isa.Stream { return periodicCTA() }, Resources: res}
	run := func(minGain float64) *arch.Stats {
		t.Helper()
		ff := arch.DefaultFastForward
		ff.Tolerance, ff.MinGain, ff.Exclude = 0, minGain, []arch.BlockRange{arch.WholeGrid(0)}
		return runChip(t, m, arch.Options{Mode: arch.Timing, FastForward: &ff}, isa.Program{Name: "long-short", Grids: []isa.Grid{long, short}})
	}
	st := run(arch.DefaultFastForward.MinGain)
	if len(st.FastForward) != 0 {
		t.Errorf("skips %+v, want none", st.FastForward)
	}
	if len(st.FastForwardDeclined) != 1 {
		t.Fatalf("declined %+v, want the short kernel once", st.FastForwardDeclined)
	}
	if d := st.FastForwardDeclined[0]; d.Grid != "short" || d.Events == 0 || float64(d.Events) >= arch.DefaultFastForward.MinGain*float64(d.SoFar) {
		t.Errorf("declined %+v: want the short kernel, a gain under %v of the events before it", d, arch.DefaultFastForward.MinGain)
	}
	any := run(0)
	if len(any.FastForward) != 1 || any.FastForward[0].Grid != "short" || len(any.FastForwardDeclined) != 0 {
		t.Errorf("with MinGain 0: skips %+v, declined %+v; want the short kernel skipped", any.FastForward, any.FastForwardDeclined)
	}
	if any.Time != st.Time {
		t.Errorf("time %v skipping the short kernel, %v not", any.Time, st.Time)
	}
}

// noisyGrid is 60 waves (on 4 SMs, 2 CTAs each) of like CTAs, each reading
// one of 24 regions of 2 MiB picked by a hash of its index, through a
// 1 MiB L2 on a narrow memory: whether a region is still in the L2 when
// a CTA reads it is a matter of which regions the CTAs before it read, so
// the waves' hits and durations vary from one to the next without a
// pattern, about steady means.
func noisyGrid() isa.Program {
	g := isa.Grid{Name: "noisy", CTAs: 8 * 60, CTA: func(c int) isa.Stream {
		r := int64(uint32(c)*2654435761>>8) % 24
		return ctaDeep(r<<21, 512)
	}, Resources: isa.Resources{SharedBytes: 64 << 10, Registers: 16 << 10, Warps: 4}}
	return isa.Program{Name: "noisy", Grids: []isa.Grid{g}}
}

// Stationary skips (FastForward.Stationary) take waves that the default
// rules decline, and come within their own estimate of the full run, and
// within 3 % (1.1 % when written).
func TestFastForwardStationary(t *testing.T) {
	prog := noisyGrid()
	// (The L2 of 2 KiB tags the scenario was written on: with the
	// file's 128-byte tags its regions' hits vary otherwise.)
	m := archtest.Machine(t, "a100", "machine.cores=4", "machine.l2.capacity=1MiB", "machine.gm.bandwidth=100GB/s", "machine.l2.line_bytes=128", "machine.l2.lines_per_tag=16")
	full := runChip(t, m, arch.Options{Mode: arch.Timing}, prog)
	ff := arch.DefaultFastForward
	def := runChip(t, m, arch.Options{Mode: arch.Timing, FastForward: &ff}, prog)
	ff.Stationary = true
	st := runChip(t, m, arch.Options{Mode: arch.Timing, FastForward: &ff}, prog)
	var waves int
	var unc sim.Time
	for _, s := range st.FastForward {
		if !s.Checked {
			t.Errorf("skip %+v: check failed", s)
		}
		if s.Stationary {
			waves += s.Waves
			if s.Measured != 2*ff.Measure || s.Tail != ff.Measure+1 || s.Noise <= 0 {
				t.Errorf("stationary skip %+v: want %d waves measured, %d after, their noise", s, 2*ff.Measure, ff.Measure+1)
			}
		} else if s.Measured != ff.Measure || s.Tail != ff.Tail || s.Noise != 0 {
			t.Errorf("skip %+v: want %d waves measured, %d after, no noise", s, ff.Measure, ff.Tail)
		}
		d := s.TailPeriod - s.Period
		unc += sim.Time(s.Waves)*max(d, -d, s.Spread) + s.Period/2
		// The measured and checked waves' L2 hit fractions, and whether
		// they are further apart than the setting allows.
		if s.Hits < 0 || s.Hits > 1 || s.TailHits < 0 || s.TailHits > 1 || s.HitsMoved != (math.Abs(s.TailHits-s.Hits) > ff.Hits) {
			t.Errorf("skip %+v: hits %v measured, %v checked, moved %v", s, s.Hits, s.TailHits, s.HitsMoved)
		}
	}
	var defWaves int
	for _, s := range def.FastForward {
		defWaves += s.Waves
	}
	// Why the default rules simulated the waves the stationary ones
	// skip: their durations spread beyond the tolerance (or their hits
	// moved), said of the one grid; and where the first skip came.
	if len(def.FastForwardWaits) != 1 || len(st.FastForwardWaits) != 1 {
		t.Fatalf("waits %+v (default), %+v (stationary): want the grid's", def.FastForwardWaits, st.FastForwardWaits)
	}
	if w := def.FastForwardWaits[0]; w.Grid != "noisy" || w.Waves != 60 || w.Spread+w.Moved == 0 || w.Spread > 0 && w.LastSpread <= ff.Tolerance {
		t.Errorf("default rules' wait %+v: want refusals for spread (beyond %v) or moved hits", w, ff.Tolerance)
	}
	if w := st.FastForwardWaits[0]; len(st.FastForward) > 0 && w.FirstSkip != st.FastForward[0].FromCTA/8 {
		t.Errorf("stationary wait %+v: first skip at wave %d, want %d", w, w.FirstSkip, st.FastForward[0].FromCTA/8)
	}
	t.Logf("full %v; default: %v, %d waves skipped; stationary: %v, %d skips, %d waves in stationary ones, estimate ±%v", full.Time, def.Time, defWaves, st.Time, len(st.FastForward), waves, unc)
	if waves == 0 {
		t.Fatalf("no stationary skip: %+v", st.FastForward)
	}
	if d := st.Time - full.Time; d > unc || -d > unc || math.Abs(float64(d)) > 0.03*float64(full.Time) {
		t.Errorf("time %v fast-forwarded, %v in full: off by more than 3 %% or the estimate ±%v", st.Time, full.Time, unc)
	}
}

// A failed check keeps later skips out of its blocks only: a grid of two
// parts — 30 waves whose first 10 read tiles nobody read before and the
// rest one tile (the check of a skip there fails), then 30 waves of
// deeper blocks that repeat — takes the first part's skip back and still
// skips the second part's waves, none reaching into the blocks the
// failed check ran ahead.
func TestFastForwardCheckExcludesBlocks(t *testing.T) {
	m := archtest.Machine(t, "a100", "machine.cores=4")
	g := isa.Grid{Name: "two-part", CTAs: 8 * 60, CTA: func(c int) isa.Stream {
		switch {
		case c < 80:
			return ctaAt(int64(4+c) << 22)
		case c < 240:
			return ctaAt(0)
		}
		return ctaDeep(0, 1024)
	}, Resources: isa.Resources{SharedBytes: 64 << 10, Registers: 16 << 10, Warps: 4}}
	full, fast := fullAndFast(t, m, g)
	b := fast.FastForwardTakenBack
	if len(b) == 0 || b[len(b)-1].FromCTA >= 240 {
		t.Fatalf("taken back %+v, want failed checks in the first part", b)
	}
	sk := b[0]
	second := false
	for _, s := range fast.FastForward {
		for _, f := range b {
			if ahead := (arch.BlockRange{From: f.FromCTA + f.Waves*f.WaveCTAs, To: f.AheadTo}); s.FromCTA < ahead.To && s.FromCTA+(s.Waves+s.Tail)*s.WaveCTAs > ahead.From {
				t.Errorf("skip %+v reaches into the blocks %+v a failed check ran ahead", s, ahead)
			}
		}
		if !s.Checked {
			t.Errorf("skip %+v: its check failed", s)
		}
		second = second || s.FromCTA >= 240
	}
	if !second {
		t.Errorf("skips %+v: none in the second part", fast.FastForward)
	}
	if d := math.Abs(float64(fast.Time-full.Time)) / float64(full.Time); d > 0.01 {
		t.Errorf("time %v, full %v", fast.Time, full.Time)
	}
	t.Logf("taken back: skip at block %d (%d waves); %d skips after, time %v, full %v, events %d of %d", sk.FromCTA, sk.Waves, len(fast.FastForward), fast.Time, full.Time, fast.Events, full.Events)
}

// runGrid runs grid g alone on m, fast-forwarded with ff (nil: in full).
func runGrid(t *testing.T, m *machines.Machine, g isa.Grid, ff *arch.FastForward) (*arch.Stats, error) {
	t.Helper()
	chip, err := arch.NewChip(m, arch.Options{Mode: arch.Timing, FastForward: ff})
	if err != nil {
		t.Fatal(err)
	}
	return chip.Run(isa.Program{Name: g.Name, Grids: []isa.Grid{g}})
}

// fullAndFast runs g in full and fast-forwarded with the defaults, and
// returns the two runs' statistics.
func fullAndFast(t *testing.T, m *machines.Machine, g isa.Grid) (full, fast *arch.Stats) {
	t.Helper()
	full, err := runGrid(t, m, g, nil)
	if err != nil {
		t.Fatal(err)
	}
	ff := arch.DefaultFastForward
	if fast, err = runGrid(t, m, g, &ff); err != nil {
		t.Fatal(err)
	}
	return full, fast
}

// Waves measured between their centres (the mean of their blocks'
// dispatch times): a grid of one block per SM on 108 SMs whose blocks
// meet L2 hits at random (each reads one of 24 regions, by a hash of its
// index), so that a wave's first dispatch — the earliest finish among the
// blocks before it — jitters from wave to wave by more than the tolerance
// while the blocks' mean pace varies less. Fast-forward measures its waves
// between their centres (FastForwardSkip.Centres), skips most of them,
// checks the waves after the skip so too, and comes within the estimate
// the skips give (−1.1 % against ±2.9 % when written; −0.55 % since the
// warm-up; −1.7 % against ±2.9 % since the L2's channel carries the bytes
// it misses too, with 16 regions of data where there were 24: with 24 the
// waves stopped jittering, and the plain rule took them) with about a
// quarter of the events; each skip's shift is its waves times its period, and the
// time-like counters are scaled to the shift (every lane's causes add up
// to the run's time; the mean GM utilisation within 0.002 of the full
// run's). (The waves of this grid also drift slowly as its L2 settles:
// the skip, taken at wave 10, is no more exact than that.)
func TestFastForwardWaveCentres(t *testing.T) {
	const cores, waves = 108, 60
	g := isa.Grid{Name: "jittered", CTAs: cores * waves, CTA: func(c int) isa.Stream {
		r := int64(uint32(c)*2654435761>>8) % 16
		return ctaDeep(r<<21, 512)
	}, Resources: isa.Resources{SharedBytes: 120 << 10, Registers: 16 << 10, Warps: 4}}
	prog := isa.Program{Name: "jittered", Grids: []isa.Grid{g}}
	// (The L2 of 2 KiB tags the scenario was written on.)
	m := archtest.Machine(t, "a100", fmt.Sprintf("machine.cores=%d", cores), "machine.l2.capacity=4MiB", "machine.gm.bandwidth=400GB/s", "machine.l2.line_bytes=128", "machine.l2.lines_per_tag=16")
	full := runChip(t, m, arch.Options{Mode: arch.Timing}, prog)
	ff := arch.DefaultFastForward
	fast := runChip(t, m, arch.Options{Mode: arch.Timing, FastForward: &ff}, prog)
	var skipped, centred int
	var unc sim.Time
	for _, s := range fast.FastForward {
		if !s.Checked || s.Stationary || s.WaveCTAs != cores {
			t.Errorf("skip %+v: want checked, not stationary, waves of %d blocks", s, cores)
		}
		if d := s.Shift - sim.Time(s.Waves)*s.Period; d > sim.Time(s.Waves) || -d > sim.Time(s.Waves) {
			t.Errorf("skip %+v: shift %v for %d waves of %v", s, s.Shift, s.Waves, s.Period)
		}
		if s.Centres {
			centred++
			if s.Measured != 2*ff.Measure {
				t.Errorf("skip %+v: want %d waves measured between their centres", s, 2*ff.Measure)
			}
			if d := math.Abs(float64(s.TailPeriod-s.Period)) / float64(s.Period); d > 0.03 {
				t.Errorf("skip %+v: its check's waves %.2g %% from the measured period", s, 100*d)
			}
		}
		skipped += s.Waves
		d := s.TailPeriod - s.Period
		unc += sim.Time(s.Waves)*max(d, -d, s.Spread) + s.Period/2
	}
	t.Logf("full %v; fast-forwarded %v (%+.2f %%), %d waves skipped, estimate ±%v; events %d → %d", full.Time, fast.Time, 100*(float64(fast.Time)/float64(full.Time)-1), skipped, unc, full.Events, fast.Events)
	if centred == 0 || skipped < waves/2 {
		t.Errorf("skips %+v: want most waves skipped, measured between centres", fast.FastForward)
	}
	if d := fast.Time - full.Time; d > unc || -d > unc {
		t.Errorf("time %v fast-forwarded, %v in full: off by more than the estimate ±%v", fast.Time, full.Time, unc)
	}
	if d := math.Abs(fast.GMUtilisation - full.GMUtilisation); d > 0.002 {
		t.Errorf("GM utilisation %.5f fast-forwarded, %.5f in full", fast.GMUtilisation, full.GMUtilisation)
	}
	for i, c := range fast.Cores {
		for l, ls := range c.Lanes {
			var sum sim.Time
			for _, x := range ls.Time {
				sum += x
			}
			if sum != fast.Time {
				t.Errorf("core %d lane %d: its causes add up to %v, the run took %v", i, l, sum, fast.Time)
			}
		}
	}
	if fast.Events*10 > full.Events*3 {
		t.Errorf("events %d fast-forwarded, %d in full: want 30 %% or fewer", fast.Events, full.Events)
	}
}

// The measured waves must run alike too: of a grid (no Class: the streams
// compared) whose waves 4–6 run one instruction more than the others, a
// skip measured on waves 3–6 would stand the waves from 7 on — like wave
// 3, the reference — for blocks most of which ran that instruction; so
// the first skip measures waves 7–10, and every lane's instructions are
// the full run's.
func TestFastForwardMeasuredAlike(t *testing.T) {
	m := archtest.Machine(t, "a100", "machine.cores=4")
	g := isa.Grid{Name: "mixed", CTAs: 8 * 20, CTA: func(c int) isa.Stream {
		if w := c / 8; w >= 4 && w <= 6 {
			return func(yield func(isa.Instr) bool) {
				if !yield(isa.Nop()) {
					return
				}
				ctaAt(0)(yield)
			}
		}
		return ctaAt(0)
	}, Resources: isa.Resources{SharedBytes: 64 << 10, Registers: 16 << 10, Warps: 4}}
	full, err := runGrid(t, m, g, nil)
	if err != nil {
		t.Fatal(err)
	}
	ff := arch.DefaultFastForward
	fast, err := runGrid(t, m, g, &ff)
	if err != nil {
		t.Fatal(err)
	}
	if len(fast.FastForward) == 0 {
		t.Fatalf("no skip: want one measured on waves 7–10")
	}
	for _, s := range fast.FastForward {
		if s.FromCTA < 8*11 {
			t.Errorf("skip %+v: from block %d, want from wave 11 on (its measured waves after the last unlike one)", s, s.FromCTA)
		}
	}
	sameCoreWork(t, "fast-forwarded", fast, full)
}

// A grid whose block order repeats with a period of several waves
// (isa.Grid.Period, a GEMM's threadblock swizzle) — here the first wave
// of every six reads tiles nobody read before, the others one tile the L2
// holds — is measured over at least a period: with the period declared
// the skips' windows span it and the run comes within the estimate;
// without it, four waves inside a period stand for the slow ones too.
func TestFastForwardPeriod(t *testing.T) {
	m := archtest.Machine(t, "a100", "machine.cores=4")
	const wave, period, waves = 8, 6 * 8, 60
	g := isa.Grid{Name: "periodic", CTAs: wave * waves, CTA: func(c int) isa.Stream {
		if c%period < wave {
			return ctaAt(int64(4+c) << 22)
		}
		return ctaAt(0)
	}, Resources: isa.Resources{SharedBytes: 64 << 10, Registers: 16 << 10, Warps: 4}}
	full, err := runGrid(t, m, g, nil)
	if err != nil {
		t.Fatal(err)
	}
	run := func(p int) (*arch.Stats, float64) {
		g := g
		g.Period = p
		ff := arch.DefaultFastForward
		ff.Stationary = true
		st, err := runGrid(t, m, g, &ff)
		if err != nil {
			t.Logf("period %d: %v", p, err)
			return nil, math.Inf(1)
		}
		return st, math.Abs(float64(st.Time-full.Time)) / float64(full.Time)
	}
	with, errWith := run(period)
	_, errWithout := run(0)
	t.Logf("full %v; error with the period %.2f %%, without %.2f %%; skips with it: %+v", full.Time, 100*errWith, 100*errWithout, with.FastForward)
	if with == nil || len(with.FastForward) == 0 {
		t.Fatalf("with the period declared: no skip (%+v)", with)
	}
	var unc sim.Time
	for _, s := range with.FastForward {
		if s.Measured*s.WaveCTAs < period {
			t.Errorf("skip %+v measured %d waves of %d blocks, under the period of %d blocks", s, s.Measured, s.WaveCTAs, period)
		}
		d := s.TailPeriod - s.Period
		unc += sim.Time(s.Waves)*max(d, -d, s.Spread) + s.Period/2
	}
	if d := with.Time - full.Time; d > unc || -d > unc {
		t.Errorf("with the period: time %v, full %v: outside the estimate ±%v", with.Time, full.Time, unc)
	}
	if errWith >= errWithout {
		t.Errorf("declaring the period did not bring the run closer: %.2f %% with it, %.2f %% without", 100*errWith, 100*errWithout)
	}
}

// Fast-forward on a grid whose CTAs each read tiles of their own 48 bytes
// past a sector (every row's first and last sectors fetched whole, as the
// L2 does: 2 % beyond the bytes asked for) gives the full simulation's
// HBM reads, those beyond the reads no cache served included (the skipped
// waves' at the measured waves' rate: overFetched).
func TestFastForwardExactOverFetched(t *testing.T) {
	m := archtest.Machine(t, "a100", "machine.cores=4")
	g := isa.Grid{Name: "unaligned", CTAs: 8 * 60, CTA: func(c int) isa.Stream { return ctaAt(int64(1+c)<<24 + 48) },
		Resources: isa.Resources{SharedBytes: 64 << 10, Registers: 16 << 10, Warps: 4}}
	full, err := runGrid(t, m, g, nil)
	if err != nil {
		t.Fatal(err)
	}
	ff := arch.DefaultFastForward
	ff.Tolerance = 0
	fast, err := runGrid(t, m, g, &ff)
	if err != nil {
		t.Fatal(err)
	}
	if len(fast.FastForward) != 1 || !fast.FastForward[0].Exact {
		t.Fatalf("skips %+v, want one exact", fast.FastForward)
	}
	tr := full.Traffic
	if over := tr.HBMRead - (tr.GMRead - tr.L2Read - tr.LLCRead); over*100 < tr.HBMRead {
		t.Fatalf("full run: HBM read %d, %d of them beyond the reads no cache served: want 1 %% at least", tr.HBMRead, over)
	}
	if fast.Traffic != full.Traffic || fast.L2HitBytes != full.L2HitBytes || fast.L2MissBytes != full.L2MissBytes {
		t.Errorf("traffic %+v, L2 hits %d misses %d fast-forwarded; %+v, %d, %d in full", fast.Traffic, fast.L2HitBytes, fast.L2MissBytes, full.Traffic, full.L2HitBytes, full.L2MissBytes)
	}
}
