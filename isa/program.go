package isa

import (
	"iter"
	"sync/atomic"
)

// Stream is one core's instruction stream, produced lazily so that program
// generators can describe millions of instructions without holding them.
// A stream may be iterated more than once (static checks, then the run) and
// must yield the same instructions each time.
type Stream = iter.Seq[Instr]

// Program is a set of per-core instruction streams. Cores[i] runs on AI core
// i; a nil entry leaves that core idle.
type Program struct {
	Name  string
	Cores []Stream
	// Generated marks a program produced by one of the simulator's own
	// generators, whose output the generator's tests run through Check;
	// the run then skips the pre-run Check (a full walk of every stream,
	// as costly as generating it). Hand-written programs leave it false.
	Generated bool
	// Phases names the phases of a per-core program (Cores) that its
	// cores separate by sync_all, in order — a DaVinci program's kernel
	// launches ("emulated-gemm/split", …), which reports list as its
	// kernels (nil or short: "phase i").
	Phases []string
	// Grids are kernel launches for machine kinds that schedule thread
	// blocks onto their cores (GPU SMs, CUs), run one after the other; a
	// program has Cores or Grids, not both.
	Grids []Grid
}

// Grid is one kernel launch: CTAs (thread blocks, workgroups), each running
// its own stream, scheduled onto the cores by occupancy — as many resident
// on a core at once as its resources allow — in waves, the next waiting
// CTA starting on a core as soon as one of its CTAs finishes.
type Grid struct {
	Name string
	CTAs int
	// CTA returns the stream of CTA i (0 ≤ i < CTAs).
	CTA func(i int) Stream
	// Resources is what one resident CTA holds on its core.
	Resources Resources
	// TimingOnly marks a kernel whose data effects are not computed, even
	// in functional runs: it is timed (its copies, its vector and matrix
	// work, its traffic) but leaves memory as it was. A program uses it
	// for passes whose values it supplies itself (written before the run
	// by Prepare) and says so in its report.
	TimingOnly bool
	// Cluster is the number of CTAs of a thread block cluster (0 or 1:
	// none): CTAs c·Cluster … c·Cluster+Cluster−1 start together, rank
	// 0 … Cluster−1, on Cluster neighbouring cores (2: the two SMs of a
	// TPC, Blackwell's cta_group::2 pairs) and share the kind's cluster
	// state (flags, each other's shared memory). CTAs must be a multiple
	// of it.
	Cluster int
	// Class, if not nil, names the instruction shape of CTA i: CTAs of
	// equal Class run the same instructions, addresses aside (Instr.Shape).
	// Fast-forward compares CTAs by it instead of generating and comparing
	// their streams (nil: it compares the streams).
	Class func(i int) int
	// Period, if above 0, is how many CTAs the order of CTAs repeats
	// after (a GEMM's threadblock swizzle: groups of row blocks, column by
	// column): waves that straddle two periods run otherwise than those
	// inside one, so fast-forward measures its waves over at least a
	// period before a wave skip stands for them (the T4's 4 MiB L2: the
	// waves crossing from one group of 8 row blocks to the next 70 %
	// slower at 4096³; skips of four waves inside a group came out 6 %
	// short).
	Period int
	// Steps, if not nil, returns the stream of CTA i as CTA does, with a
	// Step marking each step of its main loop (the k-steps of a GEMM)
	// and reading cur: when the consumer asked for a step past the one the
	// generator is about to emit (cur.Take), it resumes there, so that a
	// consumer can skip steps without their being generated
	// (fast-forward's step skips). Only timing-only consumers use it.
	Steps func(i int, cur *StepCursor) Stream
}

// StepCursor is how the consumer of a Grid.Steps stream asks its generator
// to skip ahead. The generator may run on another goroutine, ahead of its
// consumer (arch.Ahead): the cursor is safe for that, and the consumer
// drops whatever was generated before the step it asked for, so a
// generator must emit the same instructions from a step's marker on
// whether it resumed there or got there step by step.
type StepCursor struct {
	to atomic.Int64
}

// Ask asks the generator to resume at step k (the consumer).
func (c *StepCursor) Ask(k int) { c.to.Store(int64(k)) }

// Take returns the step the consumer asked to resume at (0: none) and
// clears the request (the generator, at each step it is about to emit).
func (c *StepCursor) Take() int { return int(c.to.Swap(0)) }

// Resources are what one resident CTA holds on its core while it runs.
type Resources struct {
	SharedBytes int64 // shared memory (LDS), bytes
	Registers   int64 // 32-bit registers over all its threads
	Warps       int   // warps (wavefronts)
	// AccBytes is the tensor memory the block allocates for accumulators
	// (Blackwell tcgen05.alloc; 0 elsewhere).
	AccBytes int64
	// AccRegisters is how many of Registers hold accumulators in a file
	// of their own (CDNA1's AGPRs; 0 elsewhere): the core lays them out
	// there, the rest in the register file (occupancy counts them
	// together, as Registers).
	AccRegisters int64
}

// Slice returns a Stream over a fixed slice of instructions.
func Slice(instrs []Instr) Stream {
	return func(yield func(Instr) bool) {
		for _, in := range instrs {
			if !yield(in) {
				return
			}
		}
	}
}
