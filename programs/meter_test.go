package programs

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/davinci-sim/davinci-sim/arch"
	"github.com/davinci-sim/davinci-sim/sim"
)

// The meter counts every instruction of a generated GEMM (all issued by the
// end), a GPU grid's blocks and lu-fused's host tasks, without changing
// the run.
func TestWorkMeter(t *testing.T) {
	run := func(text string, m *WorkMeter) *Result {
		t.Helper()
		f, err := Parse("p.yaml", ".", []byte(text))
		if err != nil {
			t.Fatal(err)
		}
		res, err := Execute(f, Options{}, RunHooks{Meter: m})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	gemm := "kind: hgemm\nm: 128\nn: 64\nk: 96\nnumerics: off\n"
	var m WorkMeter
	with, without := run(gemm, &m), run(gemm, nil)
	if frac, ok := m.Fraction(); !ok || frac != 1 || m.Total() <= 0 {
		t.Errorf("hgemm: fraction %v %v of %d, want all issued", frac, ok, m.Total())
	}
	if with.Report.Time != without.Report.Time || with.Report.Sim.Events != without.Report.Sim.Events {
		t.Errorf("metering changed the run: %+v %d vs %+v %d", with.Report.Time, with.Report.Sim.Events, without.Report.Time, without.Report.Sim.Events)
	}
	gpu := "kind: hgemm\nmachine: a100\nm: 1000\nn: 700\nk: 96\nnumerics: off\n"
	var g WorkMeter
	gwith, gwithout := run(gpu, &g), run(gpu, nil)
	if frac, ok := g.Fraction(); !ok || frac != 1 || g.Total() != 16*6 { // 64×128 tiles
		t.Errorf("GPU hgemm: fraction %v %v of %d blocks, want all 96 issued", frac, ok, g.Total())
	}
	if gwith.Report.Time != gwithout.Report.Time || gwith.Report.Sim.Events != gwithout.Report.Sim.Events {
		t.Errorf("metering changed the GPU run")
	}
	// Fast-forwarded: the skipped blocks count as done. (k = 1024: at 256
	// the skip's check fails since the L2's channel carries the bytes it
	// misses too, and the run made again skips nothing.)
	f, err := Parse("p.yaml", ".", []byte("kind: hgemm\nmachine: a100\nm: 8192\nn: 8192\nk: 1024\nnumerics: off\n"))
	if err != nil {
		t.Fatal(err)
	}
	ff := arch.DefaultFastForward
	var fm WorkMeter
	res, err := Execute(f, Options{FastForward: &ff}, RunHooks{Meter: &fm})
	if err != nil {
		t.Fatal(err)
	}
	if frac, ok := fm.Fraction(); len(res.Stats.FastForward) == 0 || !ok || frac != 1 {
		t.Errorf("fast-forwarded GPU hgemm: fraction %v %v after skips %+v, want every block done", frac, ok, res.Stats.FastForward)
	}
	// A cluster run: its ranks' kernels' flops over the factorization's.
	cf, err := ReadFile("examples/lu-cluster-small.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cl WorkMeter
	fracs, shares := meteredShares(t, cf, &cl, 1<<14, "program.n=8192", "program.nb=256")
	worst := 0.0
	for i, share := range shares {
		worst = max(worst, math.Abs(fracs[i]-share))
	}
	if frac, ok := cl.Fraction(); !ok || frac != 1 || !strings.HasPrefix(cl.Of(), "the factorization's flops (") || cl.Unit() != "flops" || len(shares) < 10 || worst > 0.15 {
		t.Errorf("lu-cluster: fraction %v %v of %s, want all; %d progress points, the share strays %.3f from the events' at most (want within 0.15)", frac, ok, cl.Of(), len(shares), worst)
	}
	// Sampled: its iterations begun, which follow the events closer than
	// the flops do (the trailing updates shrink, the iterations' events
	// hardly: the flops' share strays 0.39 from the events' here, the
	// iterations' 0.008).
	var sm WorkMeter
	fracs, shares = meteredShares(t, cf, &sm, 1<<10, "program.n=32768", "program.nb=256", "program.fidelity=sampled", "program.n_fusion=16")
	worst = 0
	var worstFlops float64
	for i, share := range shares {
		worst = max(worst, math.Abs(fracs[i]-share))
		x := 1 - fracs[i] // (the flops' share of the iterations begun, as n³ goes)
		worstFlops = max(worstFlops, math.Abs(1-x*x*x-share))
	}
	if frac, ok := sm.Fraction(); !ok || frac != 1 || !strings.HasPrefix(sm.Of(), "the factorization's 128 iterations (") || sm.Unit() != "iterations" || len(shares) < 10 || worst > 0.05 {
		t.Errorf("lu-cluster sampled: fraction %v %v of %s, want all; %d progress points, the share strays %.3f from the events' at most (want within 0.05; the flops' %.3f)", frac, ok, sm.Of(), len(shares), worst, worstFlops)
	}
	t.Logf("sampled: iterations' share within %.3f of the events', the flops' within %.3f", worst, worstFlops)
	var lu WorkMeter
	run("kind: lu-fused\nn: 512\nnb: 256\nnumerics: off\n", &lu)
	if frac, ok := lu.Fraction(); !ok || frac != 1 || lu.Unit() != "host tasks" || !strings.HasPrefix(lu.Of(), "the flops of ") {
		t.Errorf("lu-fused: fraction %v %v of %s, want every host task done", frac, ok, lu.Unit())
	}
}

// A program of several kernels is metered by work, not by blocks: T4
// LE-GEMM's split pass has four times the GEMM's blocks but 4 % of the
// instructions (at 1024³: 256 blocks of 12, 64 of 1235), and the share
// shown follows the events simulated (with blocks counted alike, 80 %
// after 6 % of the events). Four SMs, so that the GEMM's 64 blocks take
// 16 waves.
func TestWorkMeterWeighsKernels(t *testing.T) {
	f, err := Parse("p.yaml", ".", []byte("kind: emulated-gemm\nmachine: t4\nscheme: le-gemm\nm: 1024\nn: 1024\nk: 1024\nnumerics: off\n"))
	if err != nil {
		t.Fatal(err)
	}
	var m WorkMeter
	type point struct {
		frac   float64
		events uint64
	}
	var seen []point
	res, err := Execute(f, Options{Overrides: mustSets(t, "machine.cores=4")}, RunHooks{Meter: &m, ProgressEvery: 1 << 10, Progress: func(_ sim.Time, events uint64) {
		frac, ok := m.Fraction()
		if !ok {
			t.Fatal("not metered")
		}
		seen = append(seen, point{frac, events})
	}})
	if err != nil {
		t.Fatal(err)
	}
	if m.Kernels() != 2 || len(seen) < 10 {
		t.Fatalf("%d kernels, %d progress points; want 2 kernels and a progress line every 1024 events", m.Kernels(), len(seen))
	}
	total := float64(res.Report.Sim.Events)
	for _, p := range seen {
		if d := p.frac - float64(p.events)/total; d > 0.1 || d < -0.1 {
			t.Errorf("at %d of %v events the meter says %.3f done", p.events, total, p.frac)
		}
	}
	if frac, _ := m.Fraction(); frac != 1 {
		t.Errorf("done: %v", frac)
	}
}

// A host program's share is its kernels' flops done, where it counts them
// (lu-fused: the trailing updates shrink as the factorization goes), and
// follows the events simulated; by tasks alone it lags them.
func TestWorkMeterHostFlops(t *testing.T) {
	f, err := Parse("p.yaml", ".", []byte("kind: lu-fused\nn: 4096\nnb: 256\nnumerics: off\n"))
	if err != nil {
		t.Fatal(err)
	}
	var m WorkMeter
	type point struct {
		frac, tasks float64
		events      uint64
	}
	var seen []point
	res, err := Execute(f, Options{}, RunHooks{Meter: &m, ProgressEvery: 1 << 12, Progress: func(_ sim.Time, events uint64) {
		frac, ok := m.Fraction()
		done, total, _ := m.chip.HostProgress()
		if !ok {
			t.Fatal("not metered")
		}
		seen = append(seen, point{frac, float64(done) / float64(total), events})
	}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(m.Of(), "the flops of ") || len(seen) < 10 {
		t.Fatalf("metered by %q, %d progress points; want flops and a progress line every 4096 events", m.Of(), len(seen))
	}
	total := float64(res.Report.Sim.Events)
	var worst, worstTasks float64
	for _, p := range seen {
		e := float64(p.events) / total
		worst, worstTasks = max(worst, math.Abs(p.frac-e)), max(worstTasks, math.Abs(p.tasks-e))
	}
	if worst > 0.15 || worstTasks < 2*worst {
		t.Errorf("the share by flops strays %.3f from the events' share at most, by tasks %.3f: want within 0.15 and half the tasks'", worst, worstTasks)
	}
}

// A functional run tells its progress by the wall clock too: its events
// compute data, and at the period of a timing run (1<<20 events) a GEMM of
// 1024³ (49 k events, 5 s) told none. A timing run keeps to its period,
// with or without a context to check.
func TestFunctionalProgressByTheClock(t *testing.T) {
	defer func(w time.Duration) { functionalProgressWall = w }(functionalProgressWall)
	functionalProgressWall = 0
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, c := range []struct {
		numerics string
		ctx      context.Context
		some     bool
	}{{"full", nil, true}, {"full", ctx, true}, {"off", nil, false}, {"off", ctx, false}} {
		f, err := ReadFile("examples/a100-emulated-gemm.yaml")
		if err != nil {
			t.Fatal(err)
		}
		calls := 0
		_, err = Execute(f, Options{Overrides: mustSets(t, "program.m=128", "program.n=128", "program.k=128", "program.numerics="+c.numerics)},
			RunHooks{Context: c.ctx, ProgressEvery: 1 << 20, Progress: func(sim.Time, uint64) { calls++ }})
		if err != nil {
			t.Fatal(err)
		}
		if (calls > 0) != c.some {
			t.Errorf("numerics %s, context %v: %d progress calls", c.numerics, c.ctx != nil, calls)
		}
	}
}

// meteredShares runs f (numerics off, with sets) metered by m, a progress
// line every `every` events, and returns the meter's share at each line
// and the events' share of the run there.
func meteredShares(t *testing.T, f *File, m *WorkMeter, every uint64, sets ...string) (fracs, shares []float64) {
	t.Helper()
	var points []uint64
	res, err := Execute(f, Options{Numerics: NumericsOff, Overrides: mustSets(t, sets...)},
		RunHooks{Meter: m, ProgressEvery: every, Progress: func(_ sim.Time, events uint64) {
			frac, _ := m.Fraction()
			points, fracs = append(points, events), append(fracs, frac)
		}})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range points {
		shares = append(shares, float64(e)/float64(res.Report.Sim.Events))
	}
	return fracs, shares
}
