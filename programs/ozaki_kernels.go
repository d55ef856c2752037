package programs

import (
	"encoding/binary"
	"sync"

	"github.com/davinci-sim/davinci-sim/arch/gpu"
	"github.com/davinci-sim/davinci-sim/fp"
	"github.com/davinci-sim/davinci-sim/isa"
)

// The element-wise kernels of the Ozaki scheme on GPUs (the Inf/NaN scan,
// the slicing passes, the recombination) are memory-bound streaming
// kernels: every block reads its spans of global memory into registers,
// runs its operations on the vector units, and stores its spans. They are
// described by what each block moves and how many operations of which type
// it runs per element; the operations are counted from the instruction
// sequence such a kernel executes (see the constants below), and the grids
// are TimingOnly — their values are computed by package ozaki and written
// by Prepare (the report says so).

// streamChunk is the elements one block of a streaming kernel handles, and
// streamWarps its warps.
const (
	streamChunk = 8192
	streamWarps = 8
)

// gmSpan is a contiguous range of global memory.
type gmSpan struct {
	addr, bytes int64
}

// vecWork is n element operations of type f on the vector units (f is
// INT32 for integer ALU work, FP64 for double-precision arithmetic and
// conversions, which run at the FP64 rate).
type vecWork struct {
	n int
	f fp.Format
}

// streamBlock is what one block of a streaming kernel does.
type streamBlock struct {
	reads, writes []gmSpan
	work          []vecWork
	// elems is the elements the block handles: a DaVinci streaming pass
	// (emitStreamPass) issues each vecWork as vector instructions over
	// this many elements, one per operation, as a kernel working on a UB
	// chunk would (0: a GPU block, whose work is one run per vecWork).
	elems int
}

// streamGrid is a TimingOnly grid of blocks, block i doing what at(i) says:
// its reads into registers (one copy each), then its operations, then its
// stores.
func streamGrid(tg *gpuTarget, name string, blocks int, at func(i int) streamBlock) isa.Grid {
	threads := tg.threads(streamWarps)
	cta := func(i int) isa.Stream {
		b := at(i)
		return func(yield func(isa.Instr) bool) {
			e := newEmitter(yield, tg.m)
			rf := int64(0)
			for _, r := range b.reads {
				e.emit(gpu.CopyToRegisters(rf, r.addr, 1, r.bytes, r.bytes, r.bytes))
				rf += r.bytes
			}
			if len(b.reads) > 0 {
				e.setFlag(gpu.LaneCopy, gpu.LaneVector, 0)
				e.waitFlag(gpu.LaneCopy, gpu.LaneVector, 0)
			}
			for _, w := range b.work {
				if w.n > 0 {
					e.emit(gpu.Elementwise(isa.VAdd, 0, 0, 0, w.n, w.f))
				}
			}
			if len(b.writes) > 0 {
				e.setFlag(gpu.LaneVector, gpu.LaneStore, 0)
				e.waitFlag(gpu.LaneVector, gpu.LaneStore, 0)
			}
			for _, w := range b.writes {
				e.emit(isa.Copy2D(gpu.LaneStore, isa.Operand{Buf: gpu.BufGM, Addr: w.addr},
					isa.Operand{Buf: gpu.BufRegs, Addr: 0}, 1, w.bytes, w.bytes, w.bytes))
			}
		}
	}
	// A streaming kernel's registers: 32 per thread (a few values per
	// element in flight).
	return isa.Grid{Name: name, CTAs: blocks, CTA: cta, TimingOnly: true, Class: streamClasses(at),
		Resources: isa.Resources{Registers: 32 * threads, Warps: streamWarps}}
}

// streamClasses returns the classes (isa.Grid.Class) of a streaming
// kernel's blocks: blocks that move spans of the same sizes and run the
// same work emit the same instructions at other addresses.
func streamClasses(at func(i int) streamBlock) func(i int) int {
	var mu sync.Mutex
	ids := map[string]int{}
	var key []byte
	return func(i int) int {
		b := at(i)
		mu.Lock()
		defer mu.Unlock()
		key = key[:0]
		for _, spans := range [][]gmSpan{b.reads, b.writes} {
			key = binary.AppendUvarint(key, uint64(len(spans)))
			for _, sp := range spans {
				key = binary.AppendVarint(key, sp.bytes)
			}
		}
		for _, w := range b.work {
			key = binary.AppendVarint(key, int64(w.n))
			key = binary.AppendUvarint(key, uint64(w.f))
		}
		key = binary.AppendVarint(key, int64(b.elems))
		id, ok := ids[string(key)]
		if !ok {
			id = len(ids)
			ids[string(key)] = id
		}
		return id
	}
}

// rowSegments splits a rows×cols row-major matrix into blocks of at most
// streamChunk elements of one row: it returns the number of blocks and a
// function giving block i's row and column range.
func rowSegments(rows, cols int) (int, func(i int) (r, c0, n int)) {
	return rowSegmentsOf(rows, cols, streamChunk)
}

// lineBlock is one block of a streaming kernel over a row-major matrix:
// rows whole rows from row r (c0 = 0, n the matrix's columns), or, rows
// = 1, columns c0 … c0+n−1 of row r. Either way its elements are one
// contiguous range of the matrix, rows·n long from r·cols + c0.
type lineBlock struct{ r, rows, c0, n int }

// elems is the elements the block handles.
func (b lineBlock) elems() int { return b.rows * b.n }

// lineBlocks splits a rows×cols row-major matrix into the blocks of a
// streaming kernel of threads threads a block that works line by line (a
// row's maximum, a row's scale): rowSegments' segments of one row where a
// row gives every thread of a block an element (cols ≥ threads, every
// ordinary shape: the blocks are rowSegments'), else runs of whole rows,
// as many as give every thread one — ⌈threads/cols⌉ rows, the last run
// shorter. That is how reduction and normalization kernels lay out short
// rows: several rows to a block, a few threads or a warp each (PyTorch's
// ReduceConfig, block_height rows of block_width threads; Apex's and
// PyTorch's layer norm, a warp per row), and how elementwise kernels
// (the recombination) see any matrix — one flat range. A block per row of
// one element would leave all but one thread of it idle and time the
// launch of 2^20 blocks for a 2^20 × 1 matrix (ozaki on b200 at m = 2^20,
// n = k = 1: 18.9 M events and 80 s of host time for 2 MFLOP).
func lineBlocks(rows, cols int, threads int64) (int, func(i int) lineBlock) {
	return lineBlocksOf(rows, cols, streamChunk, threads)
}

// lineBlocksOf is lineBlocks with row segments of at most chunk elements
// (rowSegmentsOf's). A run of short rows holds fewer than 2·threads
// elements: at most chunk where threads ≤ chunk/2.
func lineBlocksOf(rows, cols, chunk int, threads int64) (int, func(i int) lineBlock) {
	if cols <= 0 || int64(cols) >= threads {
		nb, seg := rowSegmentsOf(rows, cols, chunk)
		return nb, func(i int) lineBlock {
			r, c0, n := seg(i)
			return lineBlock{r: r, rows: 1, c0: c0, n: n}
		}
	}
	per := int((threads + int64(cols) - 1) / int64(cols))
	return (rows + per - 1) / per, func(i int) lineBlock {
		r := i * per
		return lineBlock{r: r, rows: min(per, rows-r), n: cols}
	}
}

// rowSegmentsOf is rowSegments with blocks of at most chunk elements.
func rowSegmentsOf(rows, cols, chunk int) (int, func(i int) (r, c0, n int)) {
	per := (cols + chunk - 1) / chunk
	return rows * per, func(i int) (int, int, int) {
		r, s := i/per, i%per
		c0 := s * chunk
		return r, c0, min(chunk, cols-c0)
	}
}
