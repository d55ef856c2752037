package gpu

import (
	"fmt"
	"math"
	"sync"

	"github.com/davinci-sim/davinci-sim/arch"
	"github.com/davinci-sim/davinci-sim/cube"
	"github.com/davinci-sim/davinci-sim/dma"
	"github.com/davinci-sim/davinci-sim/fp"
	"github.com/davinci-sim/davinci-sim/isa"
	"github.com/davinci-sim/davinci-sim/mem"
	"github.com/davinci-sim/davinci-sim/sim"
)

// execute starts l.cur on lane p of CTA t at now: it computes the cost and
// either finishes the instruction on the SM's clock or runs it as a flow
// through a shared unit (tensor, CUDA cores, shared memory) or the chip's
// memory channels.
func (core *Core) execute(t *cta, p isa.Pipe, l *ctaLane, now sim.Time) {
	in := &l.cur
	pr := core.p
	clk := pr.clock
	tag := int64(t.slot*numLanes) + int64(p)
	switch {
	case in.Op == isa.OpCopy || in.Op == isa.OpL0CCopy || in.Op == isa.OpLoad && in.Src.Buf == BufGM:
		// A group (isa.Instr.WithNext) moves its members' bytes over their
		// one path as one transfer.
		path, pi, ok := pr.path(in.Src.Buf, in.Dst.Buf, p)
		if !ok {
			core.fault(t, in, fmt.Errorf("no copy path %s→%s on lane %s", pr.bufName(in.Src.Buf), pr.bufName(in.Dst.Buf), pr.geom.Lanes[p]))
			return
		}
		var bytes int64
		core.spans = core.spans[:0]
		for j := 0; j < l.members; j++ { // cur, then the rest of its group, still queued (one path: runLane)
			m := l.at(j) // the queue's front is l.cur (popped after execute)
			b, span := copyBytes(m)
			bytes += b
			core.spans = append(core.spans, span)
		}
		lat := clk.Cycles(int64(path.LatencyCycles))
		core.pathBytes[pi] += bytes
		t.work.PathBytes[pi] += bytes
		core.chip.AddPathEnergy(now, pi, bytes)
		if in.Src.Buf == BufGM || in.Dst.Buf == BufGM {
			if in.Src.Buf == BufGM {
				t.work.GMRead += bytes
			} else {
				t.work.GMWrite += bytes
			}
			// The path is the SM's (its load/store units, TMA): the resident
			// CTAs share it, each capped at its share.
			bpc := path.BytesPerCycle / float64(max(core.count, 1))
			l.ideal = clk.Cycles(cyclesFor(bytes, bpc))
			parts, memLat := core.chip.StartGM(core, core.id, tag, in.Src.Buf == BufGM, bytes, core.spans, bpc*clk.Hz())
			l.lat, l.xfer = sim.Add(lat, memLat), parts
			return
		}
		core.finishAfter(l, now, clk.Cycles(cyclesFor(bytes, path.BytesPerCycle)), lat)
	case in.Op == isa.OpLoad:
		// ldmatrix: shared memory → registers in 128-byte wavefronts; rows
		// whose 16-byte chunks fall in the same banks serialise.
		path, pi, ok := pr.path(in.Src.Buf, in.Dst.Buf, p)
		if !ok {
			core.fault(t, in, fmt.Errorf("no load path %s→%s on lane %s", pr.bufName(in.Src.Buf), pr.bufName(in.Dst.Buf), pr.geom.Lanes[p]))
			return
		}
		// A group (isa.Instr.WithNext) runs its members' wavefronts as one
		// flow.
		var bytes int64
		var cycles float64
		for j := 0; j < l.members; j++ {
			m := l.at(j) // the queue's front is l.cur (popped after execute)
			if b := loadBytes(m); b > 0 {
				bytes += b
				cycles += float64(pr.wavefronts(m)) * phaseBytes / path.BytesPerCycle
			}
		}
		core.pathBytes[pi] += bytes
		t.work.PathBytes[pi] += bytes
		core.chip.AddPathEnergy(now, pi, bytes)
		core.startUnit(t, l, LaneLoad, cycles, 1, clk.Cycles(int64(path.LatencyCycles)), tag)
	case in.Op == isa.OpMmad:
		if !in.In.Valid() {
			core.fault(t, in, fmt.Errorf("input format %d is not a format", in.In))
			return
		}
		// A run of matrix instructions (ctaLane.run; members, the front
		// first) is one flow of their summed cycles.
		var cycles, vec float64
		var lat sim.Time
		for j := 0; j < l.members; j++ {
			c, v, d, ok := core.mmaCycles(t, p, l.at(j))
			if !ok {
				return
			}
			cycles, vec, lat = cycles+c, vec+v, d
		}
		share := warpShare(t, pr)
		if p == LaneVector {
			core.startUnit(t, l, LaneVector, cycles, share, lat, tag)
			return
		}
		if vec > 0 {
			// Co-execution: the instructions keep their sub-cores' vector
			// units from other work for vec cycles, paced over the run as
			// they issue (a flow nobody waits for, competing with the
			// vector lane's own, at the pace the run takes alone).
			core.units[LaneVector].Start(sim.CeilCount(vec*unitScale), clk.Hz()*unitScale*share*min(1, vec/cycles), core, coexecTag)
		}
		core.startUnit(t, l, LaneMatrix, cycles, share, lat, tag)
	case in.Op == isa.OpVector:
		// A run of element-wise instructions (ctaLane.run; members, the
		// front first) is one flow of their summed cycles.
		var cycles float64
		var reps int64
		for j := 0; j < l.members; j++ {
			m := l.at(j)
			elems, rep := vectorWork(m, pr.geom.VectorRepeatBytes)
			reps += rep
			cycles += float64(elems / pr.VectorLanes * pr.vectorSlowdown(m))
		}
		core.vectorRepeats += reps
		t.work.VectorRepeats += reps
		core.chip.AddVectorEnergy(now, reps)
		core.startUnit(t, l, LaneVector, cycles, warpShare(t, pr), clk.Cycles(int64(pr.VectorLatency)), tag)
	default:
		core.fault(t, in, fmt.Errorf("%s cannot run on lane %s", in.Op, pr.geom.Lanes[p]))
	}
}

// addWork adds to w the work instruction in, issued to lane p, does when
// it runs — what execute and runLane count for it: an instruction on the
// issue lane and (but flags, barriers and no-ops) on its own, its bytes on its path (and from or to
// global memory), its matrix flops, its vector repeats. (Step skips stand
// a skipped step for the work of the step before it, counted so at
// issue.)
func (pr *Params) addWork(w *arch.CTAWork, in *isa.Instr, p isa.Pipe) {
	w.Instrs[LaneIssue]++
	if p == LaneIssue || int(p) >= numLanes {
		return
	}
	switch in.Op {
	case isa.OpWaitFlag, isa.OpSetFlag, isa.OpBarrier, isa.OpAlloc, isa.OpFree, isa.OpNop:
		return // synchronisation: not counted on its lane (runLane)
	}
	w.Instrs[p]++
	switch {
	case in.Op == isa.OpCopy || in.Op == isa.OpL0CCopy || in.Op == isa.OpLoad && in.Src.Buf == BufGM:
		_, pi, ok := pr.path(in.Src.Buf, in.Dst.Buf, p)
		if !ok {
			return
		}
		b, _ := copyBytes(in)
		w.PathBytes[pi] += b
		if in.Src.Buf == BufGM {
			w.GMRead += b
		} else if in.Dst.Buf == BufGM {
			w.GMWrite += b
		}
	case in.Op == isa.OpLoad:
		if _, pi, ok := pr.path(in.Src.Buf, in.Dst.Buf, p); ok {
			if b := loadBytes(in); b > 0 {
				w.PathBytes[pi] += b
			}
		}
	case in.Op == isa.OpMmad:
		w.Flops += mmaFlops(in)
	case in.Op == isa.OpVector:
		_, reps := vectorWork(in, pr.geom.VectorRepeatBytes)
		w.VectorRepeats += reps
	}
}

// loadBytes is the bytes a load from shared memory into registers moves.
func loadBytes(in *isa.Instr) int64 {
	return int64(in.Rows) * int64(in.Cols) * int64(in.In.Bytes())
}

// mmaFlops is the flops a matrix instruction counts (its M×N×K, not the
// whole warp tiles its unit computes).
func mmaFlops(in *isa.Instr) float64 {
	return float64(2 * float64(in.M) * float64(in.N) * float64(in.K)) // rounded: callers add it
}

// vectorWork is the elements an element-wise instruction keeps the
// vector units busy with and the repeats they take (its time, its count in
// the statistics and its energy): its Repeat repeats of VecElems elements,
// or Rows×Cols elements where those are more — the CTA's whole warp tiles
// its threads compute on an edge tile (WithWarpTiles), whose result is
// still only the elements the repeats name.
func vectorWork(in *isa.Instr, repeatBytes int) (elems float64, reps int64) {
	e := int64(in.VecElems(repeatBytes))
	reps = int64(max(in.Repeat, 1))
	if w := int64(in.Rows) * int64(in.Cols); e > 0 && w > e*reps {
		reps = (w + e - 1) / e
	}
	return float64(e * reps), reps
}

// resetWork zeroes w, sized for paths copy paths.
func resetWork(w *arch.CTAWork, paths int) {
	if len(w.Instrs) != numLanes || len(w.PathBytes) != paths {
		w.Instrs, w.PathBytes = make([]uint64, numLanes), make([]int64, paths)
	}
	clear(w.Instrs)
	clear(w.PathBytes)
	w.VectorRepeats, w.Flops, w.GMRead, w.GMWrite = 0, 0, 0, 0
}

// step takes CTA t's step marker in at now (isa.OpStep): the step before
// it is done issuing (its work, t.last, is what a skipped step stands
// for); when fast-forward skips steps here (arch.Chip.Step), the issue
// drops the instructions up to the marker of the step it resumes at, and
// the skipped steps' work is counted as that many times t.last.
func (core *Core) step(t *cta, in *isa.Instr, now sim.Time) {
	t.steps = true
	if t.skipTo > 0 { // the marker it resumes at (runIssue dropped the rest): the chip knows
		t.skipTo = 0
		resetWork(&t.body, len(core.pathBytes))
		return
	}
	t.last, t.body = t.body, t.last
	resetWork(&t.body, len(core.pathBytes))
	to := core.chip.Step(t.idx, in, now)
	if to <= in.M {
		return
	}
	t.skipTo = to
	n := to - in.M
	w := &t.last
	for p, c := range w.Instrs {
		x := c * uint64(n)
		t.work.Instrs[p] += x
		core.lanes[p].stats.Instrs += x
	}
	for p, b := range w.PathBytes {
		t.work.PathBytes[p] += b * int64(n)
		core.pathBytes[p] += b * int64(n)
	}
	t.work.VectorRepeats += w.VectorRepeats * int64(n)
	core.vectorRepeats += w.VectorRepeats * int64(n)
	t.work.Flops += float64(w.Flops * float64(n))
	t.work.GMRead += w.GMRead * int64(n)
	t.work.GMWrite += w.GMWrite * int64(n)
	core.chip.StepWork(w.GMRead*int64(n), w.GMWrite*int64(n), w.Flops*float64(n))
}

// noRuns (tests only) runs every matrix and element-wise instruction as
// its own flow (no ctaLane.run).
var noRuns bool

// noQuiet (tests only) wakes the SM at the end and at the landing of every
// instruction (Core.quietDone and lazy signals off: eagerLandings).
var noQuiet bool

// runs reports whether instructions like in start runs (ctaLane.run):
// matrix instructions of a valid format and element-wise ones, unless a
// test asks for one flow each.
func runs(in *isa.Instr) bool {
	return !noRuns && (in.Op == isa.OpMmad && in.In.Valid() || in.Op == isa.OpVector)
}

// mmaCycles counts matrix instruction in of CTA t on lane p: its flops,
// and the cycles it keeps its unit busy at full throughput, the vector
// unit's cycles it takes from other work (co-execution: vec) and the
// latency of its result after them. It faults (false) when the unit cannot
// run it.
func (core *Core) mmaCycles(t *cta, p isa.Pipe, in *isa.Instr) (cycles, vec float64, lat sim.Time, ok bool) {
	pr := core.p
	clk := pr.clock
	flops := mmaFlops(in)
	core.chip.AddMatrixFlops(flops)
	t.work.Flops += flops
	// The units compute what the warps issue: Rows×Cols when the
	// kernel runs whole warp tiles on an edge tile (masked at the
	// store), and on the tensor cores whole instruction shapes.
	m, n := max(in.M, in.Rows), max(in.N, in.Cols)
	flops = 2 * float64(m) * float64(n) * float64(in.K)
	if p == LaneVector {
		rate := pr.VectorRate[in.In]
		if rate <= 0 {
			core.fault(t, in, fmt.Errorf("the %s of this machine do not compute %s", pr.Terms.Vector, in.In))
			return 0, 0, 0, false
		}
		return flops / rate, 0, clk.Cycles(int64(pr.VectorLatency)), true
	}
	mi := &pr.Matrix[in.In]
	if s := mi.Dims; s[0] > 0 {
		flops = 2 * roundUp(m, s[0]) * roundUp(n, s[1]) * roundUp(in.K, s[2])
	}
	rate := mi.Rate
	if rate <= 0 {
		core.fault(t, in, fmt.Errorf("the %s of this machine do not take %s inputs (they take %s)", pr.Terms.Matrix, in.In, pr.matrixInputs()))
		return 0, 0, 0, false
	}
	// A run of n instructions keeps the matrix units busy for n·o cycles
	// (o: one instruction's occupancy of its unit — one sub-core for
	// warp-level instructions, the core for wgmma/tcgen05); the last
	// one's result comes its latency after it issued, i.e. latency − o
	// after the run.
	unit := rate
	if mi.WarpLevel {
		unit /= float64(pr.SubCores)
	}
	o := mi.Flops / unit
	lat = clk.Cycles(sim.CeilCount(max(float64(mi.Latency)-o, 0)))
	if mi.VectorCycles > 0 && mi.Flops > 0 {
		// Co-execution: every instruction keeps its sub-core's vector
		// unit for VectorCycles.
		vec = flops / mi.Flops * mi.VectorCycles / float64(pr.SubCores)
	}
	cycles = flops / rate
	if mi.ChainLatency > 0 && mi.Dims[0] > 0 {
		// Each sub-core cycles through its output tiles once per
		// instruction k-step; with too few of them a tile's next MMA
		// waits for its previous result.
		tiles := math.Ceil(float64(m)/float64(mi.Dims[0])) * math.Ceil(float64(n)/float64(mi.Dims[1]))
		steps := math.Ceil(float64(in.K) / float64(mi.Dims[2]))
		active := float64(max(1, min(t.res.Warps, pr.SubCores)))
		if busy := float64(math.Ceil(tiles/active) * o); steps > 1 && busy < float64(mi.ChainLatency) {
			cycles *= (float64((steps-1)*float64(mi.ChainLatency)) + busy) / (steps * busy)
		}
	}
	return cycles, vec, lat, true
}

// gmRead is the global-memory region a copy or fragment load from global
// memory reads (arch.Kind.GMRead).
func gmRead(in *isa.Instr) (arch.GMSpan, bool) {
	if (in.Op == isa.OpCopy || in.Op == isa.OpLoad) && in.Src.Buf == BufGM {
		_, span := copyBytes(in)
		return span, true
	}
	return arch.GMSpan{}, false
}

// copyBytes returns the bytes copy in moves and the global-memory span it
// touches (its source or destination there).
func copyBytes(in *isa.Instr) (int64, arch.GMSpan) {
	if in.Op == isa.OpLoad { // fragments loaded from global memory
		rows, cols := in.Rows, in.Cols
		if in.Transpose {
			rows, cols = cols, rows // as stored
		}
		rowBytes := int64(cols) * int64(in.In.Bytes())
		return int64(rows) * rowBytes, arch.GMSpan{Addr: in.Src.Addr, Rows: rows, RowBytes: rowBytes, Stride: in.RowStride}
	}
	if in.Op == isa.OpL0CCopy {
		return int64(in.Rows) * int64(in.Cols) * int64(in.Out.Bytes()),
			arch.GMSpan{Addr: in.Dst.Addr, Rows: in.Rows, RowBytes: int64(in.Cols * in.Out.Bytes()), Stride: in.RowStride}
	}
	bytes := int64(in.NBurst) * in.BurstLen
	if in.Src.Buf == BufGM {
		return bytes, arch.GMSpan{Addr: in.Src.Addr, Rows: in.NBurst, RowBytes: in.BurstLen, Stride: in.SrcStride}
	}
	return bytes, arch.GMSpan{Addr: in.Dst.Addr, Rows: in.NBurst, RowBytes: in.BurstLen, Stride: in.DstStride}
}

// vectorSlowdown is how many times longer an element-wise operation takes
// than an FP32 one: FP64 operations and conversions to or from FP64 run at
// the FP64 rate (1/2 of FP32 on data-centre parts, 1/64 on GeForce-class
// ones), every other type at the vector lanes' rate.
func (pr *Params) vectorSlowdown(in *isa.Instr) float64 {
	if in.In != fp.FP64 && (in.VOp != isa.VCast || in.Out != fp.FP64) {
		return 1
	}
	if r32, r64 := pr.VectorRate[fp.FP32], pr.VectorRate[fp.FP64]; r32 > 0 && r64 > 0 && r64 < r32 {
		return r32 / r64
	}
	return 1
}

// warpShare is the fraction of an SM unit one CTA can keep busy: a CTA
// with fewer warps than the SM has sub-cores leaves some idle.
func warpShare(t *cta, pr *Params) float64 {
	return math.Min(1, float64(t.res.Warps)/float64(pr.SubCores))
}

// startUnit runs cycles of work of unit u (at full throughput) for lane l
// as a flow capped at share of the unit, landing lat after its last cycle.
func (core *Core) startUnit(t *cta, l *ctaLane, u int, cycles, share float64, lat sim.Time, tag int64) {
	clk := core.p.clock
	work := sim.CeilCount(cycles * unitScale)
	if work <= 0 {
		core.finishAfter(l, core.chip.Engine().Now(), clk.Cycles(1), lat)
		return
	}
	l.ideal = clk.Cycles(sim.CeilCount(cycles / share))
	l.lat = lat
	l.xfer = 1
	core.units[u].Start(work, clk.Hz()*unitScale*share, core, tag)
}

// finishAfter occupies lane l for d, with the effect landing lat later.
func (core *Core) finishAfter(l *ctaLane, now, d, lat sim.Time) {
	d = max(d, 1)
	l.busy = sim.Add(now, d)
	core.landAt(l, sim.Add(l.busy, lat))
}

// landAt records that lane l's current instruction takes effect at done
// (functional mode applies it then), or stops the run when done is beyond
// simulated time.
func (core *Core) landAt(l *ctaLane, done sim.Time) {
	if sim.Saturated(done) {
		core.overflow(&l.cur)
		return
	}
	l.last = max(l.last, done)
	if core.funct {
		l.fly = append(l.fly, inflight{done: done, in: l.cur})
		for _, m := range l.group {
			l.fly = append(l.fly, inflight{done: done, in: m})
		}
	}
}

// overflow stops the run: in's cost does not fit in simulated time.
func (core *Core) overflow(in *isa.Instr) {
	names := isa.Names{Lanes: core.p.geom.Lanes, Buffers: bufferNames(core.p)}
	core.chip.Fail(fmt.Errorf("%s %d: %s: %w", core.p.Terms.Core, core.id, names.Format(*in), sim.ErrTimeOverflow))
}

// cyclesFor returns the cycles to move n bytes at bpc bytes per cycle.
func cyclesFor(n int64, bpc float64) int64 { return sim.CeilCount(float64(n) / bpc) }

// phaseBytes is what one phase of an ldmatrix delivers: 8 rows of 16
// bytes. A wavefront serves a phase's rows whose words fall in distinct
// banks (or the same word: a broadcast) and moves its bytes over the path.
const phaseBytes = 8 * 16

// wavefronts returns the shared-memory wavefronts an ldmatrix run needs
// for a row-major tile (rows × cols of In, RowStride bytes apart; with
// Transpose the stored tile is cols × rows): every group of 8 stored rows
// reads one 16-byte chunk per row per phase, and the rows whose chunks
// ask one bank for different words are served in separate wavefronts.
func (p *Params) wavefronts(in *isa.Instr) int64 {
	rows, cols := in.Rows, in.Cols
	if in.Transpose {
		rows, cols = cols, rows
	}
	rowBytes := int64(cols) * int64(in.In.Bytes())
	chunks := (rowBytes + 15) / 16
	groups := int64((rows + 7) / 8)
	d, ok := p.degrees[in.RowStride] // kernels use a few strides
	if !ok {
		d = conflictDegree(in.RowStride, p.Banks, p.BankBytes)
		if len(p.degrees) < 64 {
			p.degrees[in.RowStride] = d
		}
	}
	return groups * chunks * int64(d)
}

// conflictDegree is the number of wavefronts one phase of 8 rows (16 bytes
// each, rowStride bytes apart) needs from banks banks of bankBytes bytes:
// the most distinct words any bank is asked for. With 32 banks of 4 bytes
// a phase is one wavefront where the rows' chunks fall in distinct banks
// and up to 8 where they share them; fewer or narrower banks need more
// (8 banks of 4 bytes: at least 4, the phase's 128 bytes 32 at a time),
// more banks never more; a chunk in part of a wide bank's word is one word
// (before, a bank wider than a chunk counted no conflict, and more banks
// made a wavefront cost more cycles).
func conflictDegree(rowStride int64, banks, bankBytes int) int {
	type word struct{ bank, w int64 }
	seen := make(map[word]bool, 8*16)
	count := make(map[int64]int, 8*16)
	worst := 1
	nb, bb := int64(banks), int64(bankBytes)
	for r := int64(0); r < 8; r++ {
		a := r * rowStride
		for w := floorDiv(a, bb); w <= floorDiv(a+15, bb); w++ {
			k := word{(w%nb + nb) % nb, w}
			if seen[k] {
				continue // (the same word: served once)
			}
			seen[k] = true
			count[k.bank]++
			worst = max(worst, count[k.bank])
		}
	}
	return worst
}

// floorDiv returns ⌊a / b⌋ for b > 0.
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

// apply performs the data effect of a completed instruction (functional).
func (core *Core) apply(t *cta, in *isa.Instr) {
	var err error
	switch in.Op {
	case isa.OpCopy:
		err = core.copy2D(t, in)
	case isa.OpLoad:
		var dst, src []byte
		if dst, err = core.local(t, in.Dst.Buf, in.Dst.Addr, dma.FractalBytes(in.Rows, in.Cols, in.In)); err == nil {
			stride := in.RowStride
			if in.Src.Buf == BufGM {
				// Fragments from global memory: the tile's rows gathered
				// (the span between them can be most of a matrix).
				src, stride, err = core.gatherGM(in)
			} else {
				src, err = core.local(t, in.Src.Buf, in.Src.Addr, dma.RowMajorSpan(in.Rows, in.Cols, stride, in.In, in.Transpose))
			}
			if err == nil {
				err = dma.LoadFractal(dst, src, in.Rows, in.Cols, stride, in.In, in.Transpose)
			}
		}
	case isa.OpMmad:
		err = core.mmad(t, in)
	case isa.OpL0CCopy:
		err = core.accCopy(t, in)
	case isa.OpVector:
		err = core.vector(t, in)
	}
	if err != nil {
		core.fault(t, in, err)
	}
}

// gatherGM reads the rows of load in's tile (as stored: transposed, its
// columns) from global memory into a compact scratch buffer and returns it
// with its row stride.
func (core *Core) gatherGM(in *isa.Instr) ([]byte, int64, error) {
	n, span := copyBytes(in)
	if int64(cap(core.scratchGM)) < n {
		core.scratchGM = make([]byte, n)
	}
	buf := core.scratchGM[:n]
	gm := core.chip.GM()
	for r := 0; r < span.Rows; r++ {
		if err := gm.Read(span.Addr+int64(r)*span.Stride, buf[int64(r)*span.RowBytes:][:span.RowBytes]); err != nil {
			return nil, 0, err
		}
	}
	return buf, span.RowBytes, nil
}

// local returns n bytes of CTA t's buffer b at addr.
func (core *Core) local(t *cta, b isa.Buffer, addr, n int64) ([]byte, error) {
	if int(b) >= len(t.mem) || t.mem[b] == nil && n > 0 {
		return nil, fmt.Errorf("%s is not a buffer of a %s", core.p.bufName(b), core.p.Terms.Block)
	}
	buf := t.mem[b]
	if addr < 0 || n < 0 || addr+n > int64(len(buf)) {
		return nil, fmt.Errorf("%s access [%d, %d) outside the %s's %d bytes", core.p.bufName(b), addr, addr+n, core.p.Terms.Block, len(buf))
	}
	// What StartCTA clears for the slot's next block (a CTA whose memory
	// is not its slot's store — a test's — has nothing to clear).
	if s := t.store[b]; int64(len(s)) < addr+n && int64(cap(s)) >= addr+n {
		t.store[b] = s[:addr+n]
	}
	return buf[addr : addr+n : addr+n], nil
}

func (core *Core) copy2D(t *cta, in *isa.Instr) error {
	gm := core.chip.GM()
	for i := 0; i < in.NBurst; i++ {
		sa := in.Src.Addr + int64(i)*in.SrcStride
		da := in.Dst.Addr + int64(i)*in.DstStride
		switch {
		case in.Src.Buf == BufGM:
			dst, err := core.local(t, in.Dst.Buf, da, in.BurstLen)
			if err != nil {
				return err
			}
			if err := gm.Read(sa, dst); err != nil {
				return err
			}
		case in.Dst.Buf == BufGM:
			src, err := core.local(t, in.Src.Buf, sa, in.BurstLen)
			if err != nil {
				return err
			}
			if err := gm.Write(da, src); err != nil {
				return err
			}
		default:
			src, err := core.local(t, in.Src.Buf, sa, in.BurstLen)
			if err != nil {
				return err
			}
			dst, err := core.local(t, in.Dst.Buf, da, in.BurstLen)
			if err != nil {
				return err
			}
			copy(dst, src)
		}
	}
	return nil
}

// mmad computes C (fractal, FP32) = A·B (+ C) on fragments in the CTA's
// registers (or tensor memory), in the instruction's k order through the
// machine's numerics model (tensor cores) or an FMA chain (CUDA cores).
func (core *Core) mmad(t *cta, in *isa.Instr) error {
	if in.In == fp.INT8 && in.Out == fp.INT32 {
		return core.mmadInt8(t, in)
	}
	if in.In == fp.FP64 && in.Out == fp.FP64 {
		return core.mmadFP64(t, in)
	}
	a, err := core.operand(t, in.Src, in.M, in.K, in.SrcStride, in.In, &core.scratchA)
	if err != nil {
		return err
	}
	b, err := core.operand(t, in.Src1, in.K, in.N, in.RowStride, in.In, &core.scratchB)
	if err != nil {
		return err
	}
	c, err := core.local(t, in.Dst.Buf, in.Dst.Addr, dma.FractalBytes(in.M, in.N, in.Out))
	if err != nil {
		return err
	}
	model := core.chip.Cube()
	if in.Pipe == LaneVector {
		model = core.p.fmaModel
	}
	switch {
	case in.In == fp.FP16 && in.Out == fp.FP32:
		return model.MMADF16(in.M, in.K, in.N, mem.Uint16s(a), cube.Fractal, mem.Uint16s(b), cube.Fractal, mem.Float32s(c), cube.Fractal, in.Init)
	case in.In == fp.BF16 && in.Out == fp.FP32:
		return model.MMADBF16(in.M, in.K, in.N, mem.Uint16s(a), cube.Fractal, mem.Uint16s(b), cube.Fractal, mem.Float32s(c), cube.Fractal, in.Init)
	case (in.In == fp.E4M3 || in.In == fp.E5M2) && in.Out == fp.FP32:
		return model.MMAD(in.In, fp.FP32, in.M, in.K, in.N, widen(&core.scratchW8A, a), cube.Fractal, widen(&core.scratchW8B, b), cube.Fractal, mem.Uint32s(c), cube.Fractal, in.Init)
	case in.In == fp.TF32 && in.Out == fp.FP32:
		return model.MMAD(fp.TF32, fp.FP32, in.M, in.K, in.N, mem.Uint32s(a), cube.Fractal, mem.Uint32s(b), cube.Fractal, mem.Uint32s(c), cube.Fractal, in.Init)
	case in.In == fp.FP32 && in.Out == fp.FP32:
		return model.MMAD(fp.FP32, fp.FP32, in.M, in.K, in.N, mem.Uint32s(a), cube.Fractal, mem.Uint32s(b), cube.Fractal, mem.Uint32s(c), cube.Fractal, in.Init)
	}
	return fmt.Errorf("mma %s→%s is timed but not computed yet", in.In, in.Out)
}

// mmadInt8 computes C (fractal, INT32) = A·B (+ C) for INT8 fragments —
// exact integer sums, wrapping in 32 bits — with the core's scratch, each
// operand where it lies: a fractal tile in registers (tensor memory), or
// the row-major tile in shared memory without gathering it into a
// fractal one (the same products, so the same sums bit for bit).
func (core *Core) mmadInt8(t *cta, in *isa.Instr) error {
	a, la, lda, err := core.operandData(t, in.Src, in.M, in.K, in.SrcStride, fp.INT8)
	if err != nil {
		return err
	}
	b, lb, ldb, err := core.operandData(t, in.Src1, in.K, in.N, in.RowStride, fp.INT8)
	if err != nil {
		return err
	}
	c, err := core.local(t, in.Dst.Buf, in.Dst.Addr, dma.FractalBytes(in.M, in.N, in.Out))
	if err != nil {
		return err
	}
	core.int8.MMAD(in.M, in.K, in.N, a, la, int(lda), b, lb, int(ldb), c, in.Init)
	return nil
}

// operand returns an MMA operand (rows × cols of f) as a fractal tile: the
// fragments in registers as they are, or — operands read from shared
// memory by wgmma and tcgen05 — gathered from the row-major tile at op
// (stride bytes between rows) into scratch.
func (core *Core) operand(t *cta, op isa.Operand, rows, cols int, stride int64, f fp.Format, scratch *[]byte) ([]byte, error) {
	src, l, stride, err := core.operandData(t, op, rows, cols, stride, f)
	if err != nil || l == cube.Fractal {
		return src, err
	}
	n := dma.FractalBytes(rows, cols, f)
	if int64(cap(*scratch)) < n {
		*scratch = make([]byte, n)
	}
	dst := (*scratch)[:n] // (LoadFractal clears its padding)
	if err := dma.LoadFractal(dst, src, rows, cols, stride, f, false); err != nil {
		return nil, err
	}
	return dst, nil
}

// operandData returns an MMA operand (rows × cols of f) where it lies: the
// fractal tile of fragments in registers (or tensor memory), or — operands
// read from shared memory by wgmma and tcgen05 — the row-major tile at op
// with the bytes between its rows (a pair operand's two halves gathered
// into one).
func (core *Core) operandData(t *cta, op isa.Operand, rows, cols int, stride int64, f fp.Format) ([]byte, cube.Layout, int64, error) {
	if op.Buf != BufShared {
		src, err := core.local(t, op.Buf, op.Addr, dma.FractalBytes(rows, cols, f))
		return src, cube.Fractal, 0, err
	}
	var src []byte
	var err error
	if op.Addr&pairBit != 0 {
		src, err = core.pairOperand(t, op.Addr, rows, cols, stride, f)
		stride = int64(cols) * int64(f.Bytes())
	} else {
		src, err = core.local(t, op.Buf, op.Addr, dma.RowMajorSpan(rows, cols, stride, f, false))
	}
	return src, cube.RowMajor, stride, err
}

// pairOperand gathers a B operand held half by each CTA of t's pair
// (PairOperand) into one row-major rows × cols tile.
func (core *Core) pairOperand(t *cta, addr int64, rows, cols int, stride int64, f fp.Format) ([]byte, error) {
	if t.cl == nil || len(t.cl.ctas) != 2 {
		return nil, fmt.Errorf("a pair operand (cta_group::2) outside a cluster of two %ss", core.p.Terms.Block)
	}
	off, cols0 := addr&pairOffMask, int(addr>>pairColsShift&0xffff)
	if cols0 > cols {
		return nil, fmt.Errorf("a pair operand with %d columns in rank 0 of a %d-column tile", cols0, cols)
	}
	if rows <= 0 { // (k = 0: no rows to gather, and a span of rows−1 strides would be negative)
		return core.scratchPair[:0], nil
	}
	es := int64(f.Bytes())
	n := int64(rows) * int64(cols) * es
	if int64(cap(core.scratchPair)) < n {
		core.scratchPair = make([]byte, n)
	}
	out := core.scratchPair[:n]
	for r, c := range [2][2]int{{0, cols0}, {cols0, cols}} {
		w := int64(c[1]-c[0]) * es
		if w == 0 {
			continue
		}
		if t.cl.ctas[r] == nil {
			return nil, fmt.Errorf("rank %d of the pair has finished: its half of a pair operand is gone", r)
		}
		half, err := core.local(t.cl.ctas[r], BufShared, off, int64(rows-1)*stride+w)
		if err != nil {
			return nil, fmt.Errorf("rank %d's half of a pair operand: %w", r, err)
		}
		for i := int64(0); i < int64(rows); i++ {
			copy(out[i*int64(cols)*es+int64(c[0])*es:], half[i*stride:i*stride+w])
		}
	}
	return out, nil
}

// accCopy writes a fractal accumulator tile row-major to GM or a CTA
// buffer, converting with the instruction's rounding (the epilogue).
func (core *Core) accCopy(t *cta, in *isa.Instr) error {
	src, err := core.local(t, in.Src.Buf, in.Src.Addr, dma.FractalBytes(in.Rows, in.Cols, in.In))
	if err != nil {
		return err
	}
	rowBytes := int64(in.Cols) * int64(in.Out.Bytes())
	if in.Dst.Buf == BufGM {
		row := make([]byte, rowBytes)
		for r := 0; r < in.Rows; r++ {
			if err := dma.FractalRow(row, src, r, in.Rows, in.Cols, in.In, in.Out, in.Round, in.Saturate); err != nil {
				return err
			}
			if err := core.chip.GM().Write(in.Dst.Addr+int64(r)*in.RowStride, row); err != nil {
				return err
			}
		}
		return nil
	}
	for r := 0; r < in.Rows; r++ {
		row, err := core.local(t, in.Dst.Buf, in.Dst.Addr+int64(r)*in.RowStride, rowBytes)
		if err != nil {
			return err
		}
		if err := dma.FractalRow(row, src, r, in.Rows, in.Cols, in.In, in.Out, in.Round, in.Saturate); err != nil {
			return err
		}
	}
	return nil
}

// widen returns 8-bit element patterns as the 32-bit words cube.MMAD takes,
// in *scratch (grown as needed, kept for the next call).
func widen(scratch *[]uint32, v []byte) []uint32 {
	if cap(*scratch) < len(v) {
		*scratch = make([]uint32, len(v))
	}
	out := (*scratch)[:len(v)]
	for i, x := range v {
		out[i] = uint32(x)
	}
	return out
}

// roundUp returns x rounded up to a multiple of m (m ≤ 0: x), as a float.
func roundUp(x, m int) float64 {
	if m <= 0 {
		return float64(x)
	}
	return float64((x + m - 1) / m * m)
}

// mmadFP64 computes C (fractal, FP64) = A·B (+ C) for FP64 fragments,
// every output a chain of fused multiply-adds in increasing k (one
// rounding per step) — the model of DMMA and of CUDA-core DGEMM — with
// each operand where it lies (as mmadInt8 takes them) and scratch from a
// pool: cube.FP64Scratch, whose results are the plain chains' bit for bit.
// assumption: DMMA rounds after every product like an FMA chain (NVIDIA
// calls its FP64 tensor operations IEEE-754 compliant; no recorded FP64
// vectors in tc-vectors).
func (core *Core) mmadFP64(t *cta, in *isa.Instr) error {
	a, la, lda, err := core.operandData(t, in.Src, in.M, in.K, in.SrcStride, fp.FP64)
	if err != nil {
		return err
	}
	b, lb, ldb, err := core.operandData(t, in.Src1, in.K, in.N, in.RowStride, fp.FP64)
	if err != nil {
		return err
	}
	c, err := core.local(t, in.Dst.Buf, in.Dst.Addr, dma.FractalBytes(in.M, in.N, in.Out))
	if err != nil {
		return err
	}
	s := fp64Scratch.Get().(*cube.FP64Scratch)
	s.MMAD(in.M, in.K, in.N, a, la, int(lda), b, lb, int(ldb), c, in.Init)
	fp64Scratch.Put(s)
	return nil
}

// fp64Scratch holds the FP64 MMAs' working memory between calls (the
// cores of one chip, and chips run side by side, share it).
var fp64Scratch = sync.Pool{New: func() any { return new(cube.FP64Scratch) }}
