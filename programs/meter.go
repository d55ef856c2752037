package programs

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/davinci-sim/davinci-sim/arch"
	"github.com/davinci-sim/davinci-sim/isa"
)

// WorkMeter measures how much of a run's program is done, for a progress
// display. It is known for programs whose every instruction is in their
// per-core streams (the GEMMs, asm: the instructions the cores have taken
// over all of them); for GPU kernel grids by blocks finished (or skipped
// by fast-forward), each grid's blocks weighted by the instructions of
// its first block, so that a split pass's thousands of short blocks do not
// stand for as much as a GEMM's long ones; for host-driven programs by
// their kernels' flops finished over those of all the kernels they launch,
// where the program counts them (the host's own compute and transfers
// count for nothing there: lu-fused's early trailing updates are the heavy
// ones — by tasks alone, n = 32768 showed ETA 52 s at 17 s of a 34 s run, by
// flops 19 s —, ozaki's on the 910A runs its INT8 GEMMs among host work,
// 54 % at 74 % of its events), else by the host's tasks carried out; and
// on a node or cluster by the ranks' kernels' flops over the
// factorization's. Counting walks the streams once before the run
// (about as costly as generating them), so ask for it only when it is
// shown. One meter serves the runs a scheme auto makes before its own
// (Stage says which): one after the other, or, for the runs it makes at
// once, each on a meter of its own that this one stands in for while the
// build waits for that run.
type WorkMeter struct {
	// issued counts the instructions generated — as the cores take them,
	// or up to a few chunks ahead of them where a worker generates the
	// streams ahead (arch.Ahead: atomic, counted on its goroutine too).
	issued atomic.Int64
	total  int64
	// weights holds, for grids, the instructions of each grid's first
	// block, and work the sum of blocks × weight over the grids (above 0:
	// total counts grid blocks, not instructions).
	weights []int64
	work    float64
	done    []int64 // (Fraction's buffer)
	// stage says what the run metered is for, when the build of the
	// program makes runs of its own first (RunHooks.stage: scheme auto's
	// candidates, one meter after the other); started is when the meter
	// was given its run.
	stage   string
	started time.Time
	// measure, when not nil, measures the run instead (watch): in
	// measureUnit (flops, iterations), measureOf saying of what.
	measure     func() (done, total float64)
	measureOf   string
	measureUnit string
	// chip is the run's chip: with a host program its tasks are the
	// measure, with grids its finished and skipped blocks.
	chip *arch.Chip
	// standIn, when set, is the meter this one reads for now: where a
	// build makes runs at once (scheme auto's timing runs), each has its
	// own meter and the build's shows the one it waits for (follow).
	standIn atomic.Pointer[WorkMeter]
}

// read returns the meter m reads: its stand-in, if it has one.
func (m *WorkMeter) read() *WorkMeter {
	if m != nil {
		if s := m.standIn.Load(); s != nil {
			return s
		}
	}
	return m
}

// follow makes m read s (nil: m's own run again).
func (m *WorkMeter) follow(s *WorkMeter) {
	if m != nil {
		m.standIn.Store(s)
	}
}

// Unit names what Total counts: "instructions", "blocks" for grids,
// "host tasks" for host-driven programs, the unit a run metered by a
// measure of its own counts in ("flops", "iterations": watch; Total is
// then 0, Of says what the share is of).
func (m *WorkMeter) Unit() string {
	m = m.read()
	switch {
	case m.hosted():
		return "host tasks"
	case m.grids():
		return "blocks"
	case m.measure != nil:
		return m.measureUnit
	}
	return "instructions"
}

// Fraction returns the share of the run's work done (see WorkMeter: of
// its instructions, its grids' weighted blocks, its kernels' flops), and
// whether it is known.
func (m *WorkMeter) Fraction() (float64, bool) {
	m = m.read()
	if m != nil && m.measure != nil {
		d, t := m.measure()
		if t <= 0 {
			return 0, false
		}
		return min(d/t, 1), true
	}
	if m.hosted() {
		done, total, ok := m.chip.HostProgress()
		if !ok || total == 0 {
			return 0, false
		}
		m.total = int64(total)
		if fd, ft := m.chip.HostFlops(); ft > 0 {
			return min(fd/ft, 1), true
		}
		return min(float64(done)/float64(total), 1), true
	}
	if m == nil || m.total <= 0 {
		return 0, false
	}
	if m.grids() {
		if m.chip == nil {
			return 0, false
		}
		m.done = m.chip.GridBlocksDone(m.done[:0])
		var w float64
		for i, n := range m.done {
			if i < len(m.weights) {
				w += float64(float64(n) * float64(m.weights[i]))
			}
		}
		return min(w/m.work, 1), true
	}
	return min(float64(m.issued.Load())/float64(m.total), 1), true
}

// hosted reports whether the run's chip has a host program.
func (m *WorkMeter) hosted() bool {
	if m == nil || m.chip == nil {
		return false
	}
	_, _, ok := m.chip.HostProgress()
	return ok
}

// Total returns the program's instruction count, or its grids' blocks (0
// when unknown).
func (m *WorkMeter) Total() int64 { return m.read().total }

// attach counts prog's instructions and wraps its streams to count the
// ones issued. Programs with grids, or with no instructions in their
// streams, stay unmetered.
func (m *WorkMeter) attach(prog *isa.Program) {
	if len(prog.Grids) > 0 {
		m.attachGrids(prog)
		return
	}
	var total int64
	for _, s := range prog.Cores {
		if s == nil {
			continue
		}
		for range s {
			total++
		}
	}
	if total == 0 {
		return
	}
	m.total = total
	for i, s := range prog.Cores {
		if s == nil {
			continue
		}
		prog.Cores[i] = func(yield func(isa.Instr) bool) {
			for in := range s {
				m.issued.Add(1)
				if !yield(in) {
					return
				}
			}
		}
	}
}

// attachGrids meters kernel grids by blocks: the chip counts each grid's
// blocks finished and skipped; a grid's blocks count as many times as its
// first block has instructions. Within a grid the share of blocks done is
// the share of its work (a GEMM's blocks are alike); across grids a
// block's instructions are what simulating it costs, where blocks alone
// were not: T4 LE-GEMM 8192³ is a split pass of 16384 blocks of 12
// instructions and a GEMM of 4096 blocks of 9747: the split's 80 % of
// the blocks are 0.5 % of the instructions, and took 0.6 % of the events
// (91 k of 15.7 M, full simulation). Execute gives the meter its chip.
func (m *WorkMeter) attachGrids(prog *isa.Program) {
	var total int64
	for _, g := range prog.Grids {
		total += int64(g.CTAs)
		var w int64
		if g.CTAs > 0 {
			for range g.CTA(0) {
				w++
			}
		}
		w = max(w, 1)
		m.weights = append(m.weights, w)
		m.work += float64(float64(g.CTAs) * float64(w))
	}
	m.total = total
}

// Of says what Fraction is a share of, for a progress line: "5000
// instructions", "4096 blocks", "2 kernels (20480 blocks)" (weighted,
// attachGrids), "1146 host tasks" or, where the host program counts its
// kernels' flops, "the flops of 1146 host tasks".
func (m *WorkMeter) Of() string {
	m = m.read()
	if m.measure != nil {
		return m.measureOf
	}
	if m.hosted() {
		if _, ft := m.chip.HostFlops(); ft > 0 {
			return fmt.Sprintf("the flops of %d host tasks", m.total)
		}
	}
	if k := m.Kernels(); k > 1 {
		return fmt.Sprintf("%d kernels (%d blocks)", k, m.total)
	}
	return fmt.Sprintf("%d %s", m.total, m.Unit())
}

// begin readies the meter for a run (on its chip, given before), stage
// saying what it is for ("" for the program's own run).
func (m *WorkMeter) begin(stage string) {
	m.follow(nil)
	m.issued.Store(0)
	m.total, m.weights, m.work = 0, m.weights[:0], 0
	m.measure, m.measureOf, m.measureUnit = nil, "", ""
	m.stage, m.started = stage, time.Now()
}

// watch meters a run by a measure of its own, done and in all as measure
// reports them, counted in unit ("flops": a cluster run's ranks' kernels,
// whose hosts add their tasks as they go; "iterations": a sampled cluster
// run's), of saying of what.
func (m *WorkMeter) watch(of, unit string, measure func() (done, total float64)) {
	m.chip = nil
	m.begin("")
	m.measure, m.measureOf, m.measureUnit = measure, of, unit
}

// Stage says what the run metered is for where it is not the program's
// own ("scheme auto, timing run 1: ootomo"; "" for the program's).
func (m *WorkMeter) Stage() string { return m.read().stage }

// Started returns when the meter was given the run it measures (the
// zero time before): the rate so far, for an estimate of the time left,
// is the run's own, not that of the runs before it.
func (m *WorkMeter) Started() time.Time { return m.read().started }

// grids reports whether the meter counts a program's grid blocks.
func (m *WorkMeter) grids() bool { return m.work > 0 }

// Kernels returns the grids a grid-metered program launches (0 for
// other programs).
func (m *WorkMeter) Kernels() int {
	m = m.read()
	if m == nil || !m.grids() {
		return 0
	}
	return len(m.weights)
}
