package arch

import (
	"github.com/davinci-sim/davinci-sim/isa"
	"github.com/davinci-sim/davinci-sim/machines"
	"github.com/davinci-sim/davinci-sim/sim"
)

// Cause names what a lane is doing (or waiting for) during an interval.
// Every picosecond of a run is attributed to exactly one cause per lane.
type Cause uint8

// The causes. Busy is execution; the rest are stalls.
const (
	Busy       Cause = iota // executing (DMA: at the path's own bandwidth)
	QueueEmpty              // nothing issued to the pipe (includes after the core finished)
	WaitFlag                // head is wait_flag and the flag is not raised
	Barrier                 // head is pipe_barrier (or S waits on pipe_barrier ALL) and earlier work is in flight
	QueueFull               // scalar only: the target pipe's queue is full
	Bandwidth               // DMA slowed below its path bandwidth by its share of GM bandwidth
	Latency                 // head is set_flag waiting for earlier transfers to land
	NumCauses
)

var causeNames = [...]string{"busy", "queue_empty", "wait_flag", "barrier", "queue_full", "bandwidth", "latency"}

// String returns the cause's report name.
func (c Cause) String() string {
	if int(c) < len(causeNames) {
		return causeNames[c]
	}
	return "cause?"
}

// Observer watches a run: lane intervals (busy with the instruction, or a
// stall with its cause), flag events, buffer occupancy changes and GM
// bandwidth in use. Lanes and buffers are indices into the machine's
// Geometry (machines.Geometry.Lanes, .Buffers). A nil Observer costs
// nothing.
type Observer interface {
	// Interval reports that lane of core spent [from, to) in state cause;
	// for Busy, in is the instruction executed (nil otherwise) and g, when
	// not nil, the group it started with as one (in is its first).
	Interval(core, lane int, cause Cause, from, to sim.Time, in *isa.Instr, g *Group)
	// Flag reports a flag from lane src to lane dst raised (set=true) or
	// consumed at time t.
	Flag(core, src, dst, id int, set bool, t sim.Time)
	// Occupancy reports the allocated bytes of a core's buffer from time t on.
	Occupancy(core, buf int, bytes int64, t sim.Time)
	// Bandwidth reports the GM bandwidth in use (bytes/s) from time t on.
	Bandwidth(t sim.Time, bytesPerSecond float64)
}

// Group describes instructions a lane started as one: a group started
// together (isa.Instr.WithNext) or a run of matrix instructions back to
// back (GPU cores). An Observer sees the first instruction with the
// group's count and its summed bytes and flops (isa.Instr.Amount), so that
// a trace's slice says what the lane did in it.
type Group struct {
	N     int     // instructions (at least 2)
	Bytes int64   // their bytes moved or read
	Flops float64 // their flops
}

// HostObserver is an optional interface of an Observer: it is told of each
// timed task of a hosted run's host CPU when the task ends.
type HostObserver interface {
	// HostTask reports that the host spent [from, to) on a task of kind
	// "compute", "transfer" (over the host–device link), "launch" or
	// "wait"; name is the task's stage label ("launch KERNEL" for a
	// launch).
	HostTask(kind, name string, from, to sim.Time)
}

// KernelObserver is an optional interface of an Observer: it is given the
// kernel grids' launch, start and end times when the run ends (a trace's
// kernels track) — by programs.Execute after a completed run, by Chip.Run
// when the run deadlocks: then those launched, the last (the one running)
// with Finished 0.
type KernelObserver interface {
	SetKernels([]GridTimes)
}

// FlagFilter is an optional interface of an Observer: an observer whose
// IgnoresFlags returns true when the chip is built gets no Flag calls (a
// third of all observer calls in a typical run).
type FlagFilter interface {
	IgnoresFlags() bool
}

// LaneStats is one lane's time split by cause, in picoseconds, and its
// executed instruction count.
type LaneStats struct {
	Time   [NumCauses]sim.Time
	Instrs uint64
}

// BufferStats summarizes one buffer of one core.
type BufferStats struct {
	Capacity int64
	Peak     int64
	Mean     float64 // time-weighted mean of allocated bytes over the run
}

// CoreStats holds a core's accounting, indexed as the machine's Geometry
// indexes lanes and buffers.
type CoreStats struct {
	Lanes   []LaneStats
	Buffers []BufferStats // global buffers' entries unused
	Finish  sim.Time      // when the core's last instruction completed
	// Running reports that the core had work left when the statistics
	// were taken (a run that deadlocked): its Finish is not its end.
	Running bool
	Instrs  uint64
	// PathBytes are the bytes moved on each copy path, indexed as the
	// geometry's Paths (energy).
	PathBytes []int64
	// VectorRepeats counts the vector unit's repeats (DaVinci: one repeat
	// covers VectorRepeatBytes of each operand; energy).
	VectorRepeats int64
}

// Stats is the result of a run.
type Stats struct {
	// Geometry names the lanes and buffers the per-core statistics index.
	Geometry     *machines.Geometry
	Time         sim.Time // end of the run
	Cycles       int64    // Time in core cycles
	Cores        []CoreStats
	GMReadBytes  int64
	GMWriteBytes int64
	// GMUtilisation is the mean fraction of GM bandwidth in use.
	GMUtilisation float64
	Events        uint64
	MMADFlops     float64 // 2·m·n·k summed over executed MMADs
	// L2 read hits and misses in bytes (zero without an L2).
	L2HitBytes, L2MissBytes int64
	// LLCHitBytes and LLCMissBytes count the memory-side cache's lookups
	// (machines with an llc: section).
	LLCHitBytes, LLCMissBytes int64
	// Traffic is the GM traffic at both levels: requested by the cores and
	// reaching HBM after the caches.
	Traffic Traffic
	// L2Utilisation is the mean fraction of the L2 bandwidth in use (mean
	// over partitions; 0 without an L2).
	L2Utilisation float64
	// FastForward lists the waves a fast-forwarded run skipped (nil: every
	// CTA was simulated). The statistics then stand for the full run —
	// Time, lanes, bytes and the kernels' times include the skipped waves'
	// share — except Events, which counts the events simulated.
	FastForward []FastForwardSkip
	// SkippedGMReadBytes is the part of GMReadBytes the skipped waves,
	// k-steps and kernels stand for: divided among the L2, the LLC and
	// HBM at their measured rates, not looked up.
	SkippedGMReadBytes int64
	// FastForwardSteps lists the step skips (FastForward.Steps), in order.
	FastForwardSteps []StepSkip
	// FastForwardKernels lists the grids not run (FastForward.Kernels).
	FastForwardKernels []KernelSkip
	// FastForwardTakenBack lists the wave skips whose check failed, in
	// order: each was taken back and its waves simulated after its
	// check's (FastForwardSkip.AheadTo); not in FastForward.
	FastForwardTakenBack []FastForwardSkip
	// FastForwardDeclined lists the kernels whose waves repeated but whose
	// skip would have saved too little to risk (FastForward.MinGain).
	FastForwardDeclined []FastForwardDecline
	// FastForwardWaits says, for each kernel run, why wave skips that
	// could have measured its waves were not taken (or not at once).
	FastForwardWaits []FastForwardWait
	// StepWaits says, for each kernel whose steps could be skipped, how
	// many it simulated and why skips were not taken where they could
	// have been measured.
	StepWaits []StepWait
}

// Traffic counts GM transfers at two levels: the bytes the cores request
// from GM and the bytes that reach HBM after the on-chip caches (a roofline
// uses the second; LU-HPLMXP.md "Operational intensity").
type Traffic struct {
	GMRead, GMWrite int64 // requested by the cores: every GM read and write
	L2Read          int64 // reads served by the L2
	LLCRead         int64 // reads served by the memory-side cache
	// HBMRead and HBMWrite reach HBM: the reads no cache served — whole
	// lines, so more than GMRead − L2Read − LLCRead where a read asked for
	// part of a line the caches fetched — and every write (the caches
	// write through).
	HBMRead, HBMWrite int64
}

// GM returns the bytes requested from GM.
func (t Traffic) GM() int64 { return t.GMRead + t.GMWrite }

// HBM returns the bytes that reach HBM.
func (t Traffic) HBM() int64 { return t.HBMRead + t.HBMWrite }

// L2HitRate returns the fraction of the GM read bytes the L2 served (0
// without reads).
func (t Traffic) L2HitRate() float64 {
	if t.GMRead == 0 {
		return 0
	}
	return float64(t.L2Read) / float64(t.GMRead)
}

// add counts a transfer of n bytes: a read's bytes served by the L2 and
// the LLC and moved by HBM (hbm ≥ n − l2 − llc: lines fetched whole), a
// write's n bytes to HBM.
func (t *Traffic) add(read bool, n, l2, llc, hbm int64) {
	if read {
		t.GMRead += n
		t.L2Read += l2
		t.LLCRead += llc
		t.HBMRead += hbm
	} else {
		t.GMWrite += n
		t.HBMWrite += n
	}
}

// ConcatStats returns the cores of several chips' runs (same machine) as
// one Stats — the first chip's cores first — for reports that aggregate
// lanes and buffers over every core of a cluster run: Time is the latest
// end; the chip-level counters are left zero.
func ConcatStats(sts []*Stats) *Stats {
	out := &Stats{}
	for _, st := range sts {
		if st == nil {
			continue
		}
		if out.Geometry == nil {
			out.Geometry = st.Geometry
		}
		out.Time = max(out.Time, st.Time)
		out.Cycles = max(out.Cycles, st.Cycles)
		out.Cores = append(out.Cores, st.Cores...)
	}
	return out
}
