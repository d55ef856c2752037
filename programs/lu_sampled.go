package programs

import (
	"fmt"
	"maps"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/davinci-sim/davinci-sim/arch"
	"github.com/davinci-sim/davinci-sim/isa"
	"github.com/davinci-sim/davinci-sim/report"
	"github.com/davinci-sim/davinci-sim/sim"
	"gonum.org/v1/gonum/stat/distuv"
)

// Kernel timing for the cluster run's fidelities isolated and sampled
// (docs/cluster.md, "Fidelity sampled").
//
// Every kernel a rank launches is described by a luKernelKey: its kind,
// zone, core set, K, panel slot and the local block ranges it covers. The
// key determines the kernel's work list exactly (TestLUKernelKeyExact), so
// two launches with one key are the same kernel: simulated once, its time
// reused (the exact cache).
//
// Fidelity isolated simulates every distinct key alone on a fresh chip.
// Fidelity sampled simulates the kernels of a systematic sample of fusion
// windows and predicts the others: a kernel's class (its key with the
// block ranges reduced to their shape: which rects, thin dimensions kept,
// long ones abstracted) has sampled points (base, ratio) — base the
// kernel's cube-bound time from its tile count, ratio the simulated time
// over base — and an unsampled kernel's time is its base times the ratio
// interpolated linearly in base between the class's neighbouring points.
// Leave-one-out residuals of the sampled points (each predicted from its
// neighbours) give the prediction error, and with it the total time's
// 99.7 % interval.

// Kernel kinds.
const (
	luKUpdate = iota
	luKTRSM
	luKCvt
)

// luKernelKey identifies a rank's kernel by what determines its work.
type luKernelKey struct {
	kind          uint8
	zone          string
	core0, ncores int16
	K             int32
	slot          int32 // update: i0 mod ring; trsm: i mod ring
	par           int8  // trsm: the inverses' parity
	// r: update — per rect of the band, local block rows [r0, r1) and
	// columns [r2, r3); trsm and cvt — r[0] the left part {rows from,
	// rows to, panel column, present}, r[1] the right part {columns from,
	// columns to, panel row, present}.
	r [2][4]int32
}

// luKernelDesc is a kernel about to be launched: its key, tile count
// and base time (seconds: its busiest core's cube work at peak; for a
// conversion its share of the bytes at the GM bandwidth).
type luKernelDesc struct {
	key   luKernelKey
	tiles int
	base  float64
}

// class returns the key with its sizes reduced to a shape: block counts
// of 1 or 2 are kept (thin panels), larger ones are -1, positions zeroed.
func (d luKernelDesc) class() luKernelKey {
	c := d.key
	c.slot, c.par = 0, 0
	dim := func(n int32) int32 {
		if n > 2 {
			return -1
		}
		return n
	}
	for k := range c.r {
		r := c.r[k]
		if c.kind == luKUpdate {
			c.r[k] = [4]int32{dim(r[1] - r[0]), dim(r[3] - r[2]), 0, 0}
		} else {
			c.r[k] = [4]int32{dim(r[1] - r[0]), 0, 0, r[3]}
		}
	}
	return c
}

// ceilDivInt is ⌈x/d⌉ for any integer x and d > 0.
func ceilDivInt(x, d int) int {
	if x <= 0 {
		return -(-x / d)
	}
	return (x + d - 1) / d
}

// localRange returns the local indices [lo, hi) of the global blocks
// [a, b) that process coordinate p of P holds (block g is local g/P when
// g mod P = p).
func localRange(a, b, p, P int) (int, int) {
	lo := max(0, ceilDivInt(a-p, P))
	hi := max(lo, ceilDivInt(b-p, P))
	return lo, hi
}

// coreKey returns a core set's first core and count (the sets are
// contiguous).
func coreKey(cores []int) (int16, int16) {
	if len(cores) == 0 {
		return 0, 0
	}
	return int16(cores[0]), int16(len(cores))
}

// tileBase returns the cube-bound time of tiles output tiles of K on
// cores cores: the busiest core's tiles at the per-core FP16 peak.
func (j *luCluster) tileBase(tiles, K, cores int) float64 {
	peak, _ := j.npu.Peak("FP16")
	perCore := peak / float64(j.npu.Cores)
	waves := ceilDivInt(tiles, max(1, cores))
	return float64(waves) * 2 * float64(j.pl.bm) * float64(j.pl.bn) * float64(K) / perCore
}

// updateDesc describes rank r's share of band z's update with the terms
// of iterations [i0, i1) on cores.
func (j *luCluster) updateDesc(r *luRank, zone string, cores []int, z band, i0, i1 int) luKernelDesc {
	pl := j.pl
	k := luKernelKey{kind: luKUpdate, zone: zone, K: int32((i1 - i0) * pl.nb), slot: int32(i0 % j.ring)}
	k.core0, k.ncores = coreKey(cores)
	rowTiles, colTiles := ceilDivInt(pl.nb, pl.bm), ceilDivInt(pl.nb, pl.bn)
	tiles := 0
	for n, rc := range z.rects(pl.nbk) {
		r0, r1 := localRange(rc[0], rc[1], r.pr, j.P)
		c0, c1 := localRange(rc[2], rc[3], r.pc, j.Q)
		if r0 == r1 || c0 == c1 {
			continue // no local blocks: no work (the key ignores it)
		}
		k.r[n] = [4]int32{int32(r0), int32(r1), int32(c0), int32(c1)}
		tiles += (r1 - r0) * rowTiles * (c1 - c0) * colTiles
	}
	return luKernelDesc{key: k, tiles: tiles, base: j.tileBase(tiles, int(k.K), len(cores))}
}

// panelParts returns the local ranges of iteration i's TRSM and
// conversion work on rank r: the left part (its rows of the L panel, when
// it is in process column i mod Q) and the right part (its columns of the
// U panel, when it is in process row i mod P).
func (j *luCluster) panelParts(r *luRank, i int) [2][4]int32 {
	var p [2][4]int32
	nbk := j.pl.nbk
	if r.pc == i%j.Q {
		if lo, hi := localRange(i+1, nbk, r.pr, j.P); hi > lo {
			p[0] = [4]int32{int32(lo), int32(hi), int32(i / j.Q), 1}
		}
	}
	if r.pr == i%j.P {
		if lo, hi := localRange(i+1, nbk, r.pc, j.Q); hi > lo {
			p[1] = [4]int32{int32(lo), int32(hi), int32(i / j.P), 1}
		}
	}
	return p
}

// trsmDesc describes rank r's TRSM kernel of iteration i.
func (j *luCluster) trsmDesc(r *luRank, i int) luKernelDesc {
	pl := j.pl
	k := luKernelKey{kind: luKTRSM, zone: "trsm", K: int32(pl.nb), slot: int32(i % j.ring), par: int8(i % 2), r: j.panelParts(r, i)}
	k.core0, k.ncores = coreKey(pl.main)
	rowTiles, colTiles := ceilDivInt(pl.nb, pl.bm), ceilDivInt(pl.nb, pl.bn)
	tiles := int(k.r[0][1]-k.r[0][0])*rowTiles*colTiles + rowTiles*int(k.r[1][1]-k.r[1][0])*colTiles
	return luKernelDesc{key: k, tiles: tiles, base: j.tileBase(tiles, pl.nb, len(pl.main))}
}

// cvtDesc describes rank r's FP32 → FP16 panel conversion of iteration i.
func (j *luCluster) cvtDesc(r *luRank, i int) luKernelDesc {
	pl := j.pl
	k := luKernelKey{kind: luKCvt, zone: "trsm", r: j.panelParts(r, i)}
	k.core0, k.ncores = coreKey(pl.main)
	per := ceilDivInt(pl.nb, pl.cvtRows)
	chunks := int(k.r[0][1]-k.r[0][0])*per + int(k.r[1][1]-k.r[1][0])*per
	bytes := float64(ceilDivInt(chunks, len(pl.main))) * float64(pl.cvtRows) * float64(pl.nb) * 6
	return luKernelDesc{key: k, tiles: chunks, base: bytes / (float64(j.npu.GM.Bandwidth) / float64(len(pl.main)))}
}

// luEnergyParts is the number of parts of a kernel's dynamic energy.
const luEnergyParts = 5

// luEnergy is dynamic energy by part (the chip's energy model without the
// static power; joules): the matrix, vector, path, L2 and HBM work, as
// report.EnergyReport's parts.
type luEnergy [luEnergyParts]float64

// luEnergyOf returns an energy report's dynamic parts.
func luEnergyOf(e *report.EnergyReport) luEnergy {
	return luEnergy{e.MatrixJoules, e.VectorJoules, e.PathJoules, e.L2Joules, e.HBMJoules}
}

// addScaled adds o·f to e, part by part.
func (e *luEnergy) addScaled(o luEnergy, f float64) {
	for i := range e {
		e[i] += float64(o[i] * f)
	}
}

// luKernelRun is what simulating a kernel alone gives: its time and its
// dynamic energy by part.
type luKernelRun struct {
	dur     sim.Time
	dynamic luEnergy
}

// luClass is a class's sampled points, merged by base and sorted: ratio
// is time over base, energy[p] dynamic joules of part p (luEnergy) over
// base.
type luClass struct {
	base, ratio []float64
	energy      [luEnergyParts][]float64
	n           []int // points merged into each
}

// add merges a point into the class.
func (c *luClass) add(base, ratio float64, energy luEnergy) {
	i, found := slices.BinarySearch(c.base, base)
	if found {
		k := float64(c.n[i])
		c.ratio[i] = (float64(c.ratio[i]*k) + ratio) / (k + 1)
		for p := range c.energy {
			c.energy[p][i] = (float64(c.energy[p][i]*k) + energy[p]) / (k + 1)
		}
		c.n[i]++
		return
	}
	c.base = slices.Insert(c.base, i, base)
	c.ratio = slices.Insert(c.ratio, i, ratio)
	for p := range c.energy {
		c.energy[p] = slices.Insert(c.energy[p], i, energy[p])
	}
	c.n = slices.Insert(c.n, i, 1)
}

// interp returns ys at base from the points lo and hi (linear in base
// between them; the nearer point's value outside).
func (c *luClass) interp(ys []float64, lo, hi int, base float64) float64 {
	switch {
	case base <= c.base[lo]:
		return ys[lo]
	case base >= c.base[hi]:
		return ys[hi]
	}
	t := (base - c.base[lo]) / (c.base[hi] - c.base[lo])
	return ys[lo] + float64(t*(ys[hi]-ys[lo]))
}

// predict returns the interpolated time and energy ratios at base (the
// energy part by part) and the gap it falls in (0: below the first point,
// len: above the last).
func (c *luClass) predict(base float64) (ratio float64, energy luEnergy, gap int) {
	i, _ := slices.BinarySearch(c.base, base)
	lo, hi := max(0, i-1), min(len(c.base)-1, i)
	for p := range energy {
		energy[p] = c.interp(c.energy[p], lo, hi, base)
	}
	return c.interp(c.ratio, lo, hi, base), energy, i
}

// luGap is one gap between a class's sampled points: the predictions in
// it share their neighbours, so their errors are taken as one.
type luGap struct {
	class luKernelKey
	gap   int
}

// luKernelTimer times the kernels of an isolated or sampled run.
type luKernelTimer struct {
	j       *luCluster
	predict bool   // sampled: predict kernels outside the sampled windows
	sampled []bool // per fusion window

	exact   map[luKernelKey]luKernelRun
	classes map[luKernelKey]*luClass
	dynamic luEnergy // dynamic energy of every kernel launched, by part

	launches, exactLaunches, predicted, onUse int
	simWall                                   time.Duration

	// queued holds, by launch number, the kernels launched and not yet
	// started that would be simulated alone if they started now; spec
	// the times of such kernels simulated beside one asked for (see
	// simulateOnUse), until they are asked for themselves.
	queued   map[int64]luPending
	launched int64 // kernels queued so far
	spec     map[luKernelKey]luKernelRun
	atOnce   liveCount           // kernels being simulated
	rankPred []map[luGap]float64 // per rank: predicted seconds per gap
}

// liveCount counts what is live at once (the chips of kernels simulated
// alone) and the most it has been.
type liveCount struct{ n, most atomic.Int64 }

// enter counts one more live.
func (c *liveCount) enter() {
	n := c.n.Add(1)
	for {
		if m := c.most.Load(); n <= m || c.most.CompareAndSwap(m, n) {
			return
		}
	}
}

// leave counts one fewer live.
func (c *liveCount) leave() { c.n.Add(-1) }

func newLUKernelTimer(j *luCluster, predict bool) *luKernelTimer {
	t := &luKernelTimer{j: j, predict: predict, exact: map[luKernelKey]luKernelRun{}, classes: map[luKernelKey]*luClass{},
		queued: map[int64]luPending{}, spec: map[luKernelKey]luKernelRun{}}
	if predict {
		t.rankPred = make([]map[luGap]float64, j.P*j.Q)
		for i := range t.rankPred {
			t.rankPred[i] = map[luGap]float64{}
		}
	}
	return t
}

// sampleWindows marks a systematic sample of s of the w fusion windows:
// window ⌊(k + ½)·w/s⌋ for k < s (every window when s ≥ w).
func sampleWindows(w, s int) []bool {
	out := make([]bool, w)
	if s >= w {
		for i := range out {
			out[i] = true
		}
		return out
	}
	for k := range s {
		out[(2*k+1)*w/(2*s)] = true
	}
	return out
}

// luPending is a kernel to simulate: its description and streams.
type luPending struct {
	d      luKernelDesc
	cores  []int
	stream func(core int) isa.Stream
}

// prepare simulates the sampled windows' kernels: every rank's program of
// each sampled window is built on a scratch host (nothing runs), the
// first kernel of each class per window (in rank order) is simulated —
// on every available CPU, each kernel alone on its own chip — and becomes
// one of its class's points.
func (t *luKernelTimer) prepare() error {
	j := t.j
	W := ceilDivInt(j.pl.nbk, j.pl.F)
	t.sampled = sampleWindows(W, j.p.Sampling.Windows)
	scratch, err := arch.NewHostChip(j.npu, sim.NewEngine(), "", j.chipKeyOrigin())
	if err != nil {
		return err
	}
	var todo []luPending
	seen := map[luKernelKey]bool{}
	for w, on := range t.sampled {
		if !on {
			continue
		}
		classes := map[luKernelKey]bool{}
		for _, r := range j.ranks {
			h, err := scratch.NewHost()
			if err != nil {
				return err
			}
			rr := *r
			rr.h = h
			var got []luPending
			j.collect = &got
			j.buildWindow(&rr, j.rankBuild(&rr), w*j.pl.F)
			j.collect = nil
			for _, p := range got {
				c := p.d.class()
				if classes[c] || seen[p.d.key] {
					continue
				}
				classes[c], seen[p.d.key] = true, true
				todo = append(todo, p)
			}
		}
	}
	times, err := t.simulateAll(todo)
	if err != nil {
		return err
	}
	for i, p := range todo {
		t.record(p.d, times[i])
	}
	return nil
}

// record adds a simulated kernel to the exact cache and its class.
func (t *luKernelTimer) record(d luKernelDesc, run luKernelRun) {
	t.exact[d.key] = run
	if !t.predict || d.base <= 0 {
		return
	}
	c := t.classes[d.class()]
	if c == nil {
		c = &luClass{}
		t.classes[d.class()] = c
	}
	var energy luEnergy
	for p := range energy {
		energy[p] = run.dynamic[p] / d.base
	}
	c.add(d.base, run.dur.Seconds()/d.base, energy)
}

// chipsAtOnce returns how many chip models of per bytes a run's bound
// holds beside the run's other bytes: at least one (the build refuses a
// run where even one does not fit).
func chipsAtOnce(bound, other, per float64) int {
	if per <= 0 {
		return math.MaxInt
	}
	return int(max(1, min((bound-other)/per, math.MaxInt32)))
}

// simulateAll simulates kernels, each alone on a fresh chip, spread over
// the CPUs — one a CPU, and no more chips at once than the run's bound on
// its host memory holds (chipsAtOnce) —; the times do not depend on how
// they are spread.
func (t *luKernelTimer) simulateAll(todo []luPending) ([]luKernelRun, error) {
	out, errs := t.simulateEach(todo)
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// simulateEach is simulateAll returning each kernel's error (nil: its
// time is in its place).
func (t *luKernelTimer) simulateEach(todo []luPending) ([]luKernelRun, []error) {
	start := time.Now()
	defer func() { t.simWall += time.Since(start) }()
	out := make([]luKernelRun, len(todo))
	errs := make([]error, len(todo))
	next := make(chan int)
	var wg sync.WaitGroup
	var finished atomic.Int64
	chips := chipsAtOnce(float64(t.j.opts.maxHostBytes()), t.j.beside, t.j.chipBytes)
	for range min(runtime.GOMAXPROCS(0), max(1, len(todo)), chips) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if errs[i] = stopped(t.j.runCtx(), "simulating the sampled kernels"); errs[i] != nil {
					continue // interrupted: the rest are not simulated
				}
				t.atOnce.enter()
				if luKernelSimulating != nil {
					luKernelSimulating(todo[i].d.key.zone)
				}
				out[i], errs[i] = simulateKernelAlone(t.j, todo[i])
				t.atOnce.leave()
				finished.Add(1)
			}
		}()
	}
	go func() {
		for i := range todo {
			next <- i
		}
		close(next)
	}()
	all := make(chan struct{})
	go func() {
		wg.Wait()
		close(all)
	}()
	// The engine waits for these simulations (the first windows' at
	// the 256-NPU point: ~90 s of its 133 s on a busy hour, 2026-12-04):
	// the progress line goes on.
	waitShowing(all, kernelsProgressEvery, t.j.showSimulating(todo, &finished))
	return out, errs
}

// kernelsProgressEvery is how often a cluster run shows its progress
// line while its engine waits for kernels simulated alone.
var kernelsProgressEvery = time.Second

// showSimulating returns a function that shows the run's progress line
// (RunHooks.Progress) under the stage "simulating N kernels alone (…)"
// while todo's kernels are simulated (finished of them done), then gives
// the meter back its stage; nil where the run shows no progress.
func (j *luCluster) showSimulating(todo []luPending, finished *atomic.Int64) func() {
	h := j.hooks
	if h == nil || h.Progress == nil || h.Meter == nil || j.eng == nil {
		return nil
	}
	start := time.Now()
	what := fmt.Sprintf("%d kernels", len(todo))
	if len(todo) == 1 {
		what = "kernel " + todo[0].d.key.zone
	}
	return func() {
		stage := h.Meter.stage
		h.Meter.stage = fmt.Sprintf("simulating %s alone (%d done, %.0f s)", what, finished.Load(), time.Since(start).Seconds())
		h.Progress(j.eng.Now(), j.eng.Events())
		h.Meter.stage = stage
	}
}

// luKernelSimulating, where not nil, is called with the zone of each
// sampled kernel as its simulation begins: a test's way to stop a run
// while one runs.
var luKernelSimulating func(zone string)

// simulateKernelAlone runs one kernel alone on a fresh chip and returns
// its duration and dynamic energy by part (the chip's energy over the run
// less its static power over it).
func simulateKernelAlone(j *luCluster, p luPending) (luKernelRun, error) {
	// (NoReadAhead: the kernels run on every processor already.)
	o := arch.Options{Mode: arch.Timing, NoReadAhead: true, KeyOrigin: j.chipKeyOrigin()}
	j.opts.modelRoom(&o, j.beside, "") // (each alone: chipsAtOnce keeps those at once within the room)
	// The run's interrupt or time limit stops the kernel's simulation too
	// (one fusion-zone kernel at n = 313344 runs for tens of seconds: a
	// SIGINT waited 33 s for the kernels in flight).
	var chip *arch.Chip
	o.Progress, o.ProgressEvery = RunHooks{Context: j.runCtx()}.progress(&chip, arch.Timing)
	chip, err := arch.NewChip(j.npu, o)
	if err != nil {
		return luKernelRun{}, err
	}
	kh, err := chip.NewHost()
	if err != nil {
		return luKernelRun{}, err
	}
	k := kh.Launch(p.d.key.zone, p.d.key.zone, p.cores, p.stream)
	kh.Wait("wait", k)
	st, err := chip.RunHosted(kh)
	if err != nil {
		return luKernelRun{}, err
	}
	run := luKernelRun{dur: k.Finished - k.Started}
	var rep report.Report
	rep.SetEnergy(st, &j.npu.Power)
	if e := rep.Energy; e != nil {
		run.dynamic = luEnergyOf(e)
	}
	return run, nil
}

// duration returns the time of rank r's kernel d: exact when its key was
// simulated; simulated now when its class has fewer than two points (or
// the fidelity is isolated); else predicted.
func (t *luKernelTimer) duration(r *luRank, p luPending) (sim.Time, error) {
	t.launches++
	if run, ok := t.exact[p.d.key]; ok {
		t.exactLaunches++
		t.dynamic.addScaled(run.dynamic, 1)
		return run.dur, nil
	}
	cl := p.d.class()
	c := t.classes[cl]
	if t.simulatesIn(c, p.d) {
		run, err := t.simulateOnUse(p)
		if err != nil {
			return 0, err
		}
		t.onUse++
		t.exactLaunches++
		t.record(p.d, run)
		t.dynamic.addScaled(run.dynamic, 1)
		return run.dur, nil
	}
	ratio, energy, gap := c.predict(p.d.base)
	sec := float64(p.d.base * ratio) // rounded: added to rankPred below
	t.dynamic.addScaled(energy, p.d.base)
	t.predicted++
	t.rankPred[r.id][luGap{cl, gap}] += sec
	if a := t.j.opts.samplingAudit; a != nil {
		runs, err := t.simulateAll([]luPending{p})
		if err != nil {
			return 0, err
		}
		a.add(r.id, sec, runs[0].dur.Seconds())
	}
	return sim.CeilPS(sec * 1e12), nil
}

// simulates reports whether kernel d, starting now, is simulated alone
// (on use): its key not simulated yet and, at fidelity sampled, its class
// without two points of different base times to predict it from (or a
// kernel without a base time).
func (t *luKernelTimer) simulates(d luKernelDesc) bool {
	if _, ok := t.exact[d.key]; ok {
		return false
	}
	return t.simulatesIn(t.classes[d.class()], d)
}

// simulatesIn is simulates of a kernel not simulated yet, of class c (nil:
// none yet).
func (t *luKernelTimer) simulatesIn(c *luClass, d luKernelDesc) bool {
	return !t.predict || c == nil || len(c.base) < 2 || d.base <= 0
}

// queue notes a kernel launched (its launch task appended by its rank's
// program: it has not started) and returns, for started, its number among
// those queued — the ones that would be simulated if they started now —,
// or 0.
func (t *luKernelTimer) queue(p luPending) int64 {
	if !t.simulates(p.d) {
		return 0
	}
	t.launched++
	t.queued[t.launched] = p
	return t.launched
}

// started notes that the kernel queue numbered id (0: none) starts.
func (t *luKernelTimer) started(id int64) {
	if id != 0 {
		delete(t.queued, id)
	}
}

// luSimulateBeside, when false, makes simulateOnUse simulate the kernel
// asked for alone (a test's reference); luBesideUsed, where not nil, is
// called whenever a kernel simulated beside another is used.
var (
	luSimulateBeside = true
	luBesideUsed     func()
)

// simulateOnUse returns the time of kernel p, starting now and to be
// simulated alone, while the engine waits. Alone, such kernels came one at
// a time on one CPU (at fidelity isolated every distinct kernel: a node
// at n = 32768 took 6.9 s, 3.8 s now); so the kernels already
// launched that would be simulated too if they started now — by the same
// rule, counting the points those before them in launch order would add
// to their classes — are simulated beside it, spread over the CPUs, and
// kept until they are asked for. A kernel's time does not depend on what
// is simulated beside it, and one kept is used only when the rule asks
// for its simulation: the run's outputs are those of simulating each on
// use; one never asked for (its class predicted by then) costs CPU time
// only. A kept one's error is left for its own simulation on use.
func (t *luKernelTimer) simulateOnUse(p luPending) (luKernelRun, error) {
	if run, ok := t.spec[p.d.key]; ok {
		delete(t.spec, p.d.key)
		if luBesideUsed != nil {
			luBesideUsed()
		}
		return run, nil
	}
	todo := []luPending{p}
	if !luSimulateBeside {
		runs, errs := t.simulateEach(todo)
		return runs[0], errs[0]
	}
	keys := map[luKernelKey]bool{p.d.key: true}
	bases := map[luKernelKey][]float64{} // per class: its points' base times and those of todo
	addBase := func(d luKernelDesc) {
		cl := d.class()
		b, ok := bases[cl]
		if !ok && t.classes[cl] != nil {
			b = slices.Clone(t.classes[cl].base)
		}
		if d.base > 0 && !slices.Contains(b, d.base) {
			b = append(b, d.base)
		}
		bases[cl] = b
	}
	addBase(p.d)
	ids := slices.Sorted(maps.Keys(t.queued))
	for _, id := range ids {
		q := t.queued[id]
		if keys[q.d.key] || !t.simulates(q.d) {
			continue
		}
		if _, ok := t.spec[q.d.key]; ok {
			continue
		}
		if b, ok := bases[q.d.class()]; t.predict && ok && len(b) >= 2 && q.d.base > 0 {
			continue // predicted from the points todo adds
		}
		keys[q.d.key] = true
		todo = append(todo, q)
		addBase(q.d)
	}
	runs, errs := t.simulateEach(todo)
	if errs[0] != nil {
		return luKernelRun{}, errs[0]
	}
	for i := 1; i < len(todo); i++ {
		if errs[i] == nil {
			t.spec[todo[i].d.key] = runs[i]
		}
	}
	return runs[0], nil
}

// luSamplingAudit sums, per rank, the predicted times of a sampled
// cluster run's predicted kernels and their times simulated
// (Options.samplingAudit).
type luSamplingAudit struct {
	predicted, simulated map[int]float64
}

// add records rank's predicted kernel: pred seconds predicted, sim
// simulated.
func (a *luSamplingAudit) add(rank int, pred, sim float64) {
	if a.predicted == nil {
		a.predicted, a.simulated = map[int]float64{}, map[int]float64{}
	}
	a.predicted[rank] += pred
	a.simulated[rank] += sim
}

// residuals returns the leave-one-out relative residuals of the sampled
// points: each interior point of a class with three or more, predicted
// from its two neighbours, as simulated/predicted − 1.
func (t *luKernelTimer) residuals() []float64 {
	keys := make([]luKernelKey, 0, len(t.classes))
	for k := range t.classes {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b luKernelKey) int { return compareKeys(a, b) })
	var out []float64
	for _, k := range keys {
		c := t.classes[k]
		for i := 1; i+1 < len(c.base); i++ {
			pred := c.interp(c.ratio, i-1, i+1, c.base[i])
			if pred > 0 {
				out = append(out, c.ratio[i]/pred-1)
			}
		}
	}
	return out
}

// compareKeys orders keys deterministically (for reports).
func compareKeys(a, b luKernelKey) int {
	return strings.Compare(fmt.Sprint(a), fmt.Sprint(b))
}

// samplingConfidence is the interval's two-sided confidence, 99.7 % (the
// normal distribution's ±3σ).
const samplingConfidence = 0.9973

// samplingQuantile returns the factor of the residuals' standard deviation
// for samplingConfidence from n residuals: Student's t with n − 1 degrees
// of freedom (the standard deviation is itself estimated from them: 3.85
// from 12 residuals, 19.2 from 3, 236 from 2, 3.0 from very many).
func samplingQuantile(n int) float64 {
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(n - 1)}.Quantile(1 - (1-samplingConfidence)/2)
}

// report fills the sampling section: counts, the residuals' mean b and
// standard deviation σ, and the 99.7 % half-width of the total time
// (and of the factorization's: every predicted kernel is in it). The
// half-width of rank r is |b|·Ŷ_r + t·σ·√(Σ over gaps g of Ŷ_{r,g}²), Ŷ_r
// its predicted kernel time, Ŷ_{r,g} the part in gap g (predictions in a
// gap share one error), t samplingQuantile; the report takes the widest
// over the ranks (every rank ends at the final all-reduce: any of them
// can carry the error to the total). Fewer than two residuals give no
// error estimate: the half-width is all of the rank's predicted time.
func (t *luKernelTimer) report(ranks int, total, fact sim.Time) *report.ClusterSampling {
	s := &report.ClusterSampling{KernelsLaunched: t.launches, LaunchesExact: t.exactLaunches, LaunchesPredicted: t.predicted,
		KernelSimulations: len(t.exact), SimulatedOnUse: t.onUse, Classes: len(t.classes)}
	for _, on := range t.sampled {
		s.Windows++
		if on {
			s.WindowsSampled++
		}
	}
	res := t.residuals()
	s.Residuals = len(res)
	var m, sd float64
	if len(res) >= 2 {
		for _, e := range res {
			m += e
		}
		m /= float64(len(res))
		v := 0.0
		for _, e := range res {
			v += float64((e - m) * (e - m))
		}
		sd = math.Sqrt(v / float64(len(res)-1))
		s.ResidualMean, s.ResidualSD = &m, &sd
		s.Quantile = samplingQuantile(len(res))
	}
	s.Rank = -1
	for r := 0; r < ranks && t.rankPred != nil; r++ {
		gaps := make([]luGap, 0, len(t.rankPred[r]))
		for g := range t.rankPred[r] {
			gaps = append(gaps, g)
		}
		slices.SortFunc(gaps, func(a, b luGap) int {
			if c := compareKeys(a.class, b.class); c != 0 {
				return c
			}
			return a.gap - b.gap
		})
		pred, sq := 0.0, 0.0
		for _, g := range gaps {
			y := t.rankPred[r][g]
			pred += y
			sq += float64(y * y)
		}
		half := pred // (no error estimate)
		if len(res) >= 2 {
			half = float64(math.Abs(m)*pred) + float64(s.Quantile*sd*math.Sqrt(sq))
		}
		if s.Rank < 0 || half > s.HalfWidthSeconds {
			s.Rank, s.PredictedKernelSeconds, s.HalfWidthSeconds = r, pred, half
		}
	}
	s.TotalLowSeconds = total.Seconds() - s.HalfWidthSeconds
	s.TotalHighSeconds = total.Seconds() + s.HalfWidthSeconds
	s.FactorizationLowSeconds = fact.Seconds() - s.HalfWidthSeconds
	s.FactorizationHighSeconds = fact.Seconds() + s.HalfWidthSeconds
	return s
}
