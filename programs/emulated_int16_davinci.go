package programs

import (
	"fmt"

	"github.com/davinci-sim/davinci-sim/arch"
	"github.com/davinci-sim/davinci-sim/fp"
	"github.com/davinci-sim/davinci-sim/isa"
	"github.com/davinci-sim/davinci-sim/machines"
	"github.com/davinci-sim/davinci-sim/report"
)

// scheme: ape-int16 on a DaVinci machine (the Ascend 910A, as Ape's own
// evaluation; the 910B3): the split and the accumulation are the GPU
// version's (emulated_int16.go), the kernels DaVinci's. Each AI core runs,
// separated by sync_all as kernel launches are:
//
//  1. the split pass on the vector unit: INT16 row segments of A and B
//     (runs of whole rows where rows are shorter than a vector repeat)
//     GM→UB (MTE2), int16SplitOps INT32 vector operations an element,
//     both INT8 pieces UB→GM (MTE3), two UB slots (emitStreamPass);
//  2. the four INT8 product GEMMs hh, hl, lh, ll on the INT8 cube, igemm's
//     planner (newDaVinciInt8Plan: its tiles, L1 groups and pipeline, INT32
//     partial sums of the L1 groups added in UB, tiles L0C→UB→GM — the 910A
//     has no FixPipe), one pass each writing its INT32 plane;
//  3. the recombination pass on the vector unit: the planes and the sums
//     GM→UB, int16RecombineOps INT32 operations an element, the INT64 C
//     UB→GM.
//
// The split and the recombination are TimingOnly instructions
// (isa.Instr.TimingOnly, as the GPU's are TimingOnly grids): the vector
// ISA computes FP16/FP32 arithmetic, INT32 additions and conversions, not
// INT16 shifts and bit operations nor INT64 arithmetic (the 910A's vector
// unit has no INT64). Their operations are timed as INT32 vector
// instructions over the UB chunk, one per operation (64 elements a
// 256-byte repeat), as the GPU version counts INT32 operations; the pieces
// and the sums are written by Prepare, and C is recombined from the
// planes the cube wrote (Finish), which full numerics compute and check.

// int16DaVinciParams checks and completes p for ape-int16 on DaVinci
// machine m: an INT8 cube, and igemm's keys (tiling, buffering, cores).
func int16DaVinciParams(f *File, m *machines.Machine, p *GEMMParams, bad func(key, format string, a ...any) error) error {
	if m.DaVinci().Cube.KStepINT8 == 0 {
		return limitedBy(bad("scheme", "ape-int16 needs the INT8 cube; machine %s has none (core.cube.kstep_int8 = 0)", m.Name), matrixFrom(m, fp.INT8)...)
	}
	return p.int8CubeParams(f, m, bad, fmt.Sprintf("does not apply to emulated-gemm's ape-int16 scheme on %s (%s): its product GEMMs are igemm's (tiling, buffering, cores)", m.Name, m.Kind))
}

// int8CubeParams refuses the keys that mean nothing to INT8 GEMMs on a
// DaVinci cube (reason says why, after the key), then completes and
// checks p as igemm's (tiling, buffering, cores).
func (p *GEMMParams) int8CubeParams(f *File, m *machines.Machine, bad func(key, format string, a ...any) error, reason string) error {
	for _, key := range []string{"accumulation", "split_chunk", "split", "unit", "input"} {
		if f.keySet(p, key) {
			return bad(key, "%s", reason)
		}
	}
	p.defaults(gemmVariant{int8: true})
	return p.validate(f.Path, m, gemmVariant{int8: true})
}

// daVinciProgram is the per-core program: split, product GEMMs,
// recombination.
func (j *int16Job) daVinciProgram() isa.Program {
	prog := isa.Program{Name: j.p.Kind, Cores: make([]isa.Stream, j.dv.ncores), Generated: true}
	prog.Phases = []string{j.p.Kind + "/split", j.dv.phases()[0], j.p.Kind + "/recombine"}
	ub := int64(j.dv.mach.DaVinci().Buffers.UB)
	// UB bytes a block holds an element: the split, its INT16 and both
	// pieces (the INT32 operations sweep as many); the recombination, four
	// INT32 planes, B's sums and the INT64 C, plus A's sum of the row (and
	// each span's alignment).
	splitChunk := streamChunkFor(ub, 2+1+1, 3*isa.Alignment)
	recombineChunk := streamChunkFor(ub, 4*4+8+8, 8+7*isa.Alignment)
	// A block's "threads" (lineBlocksOf): the INT32 lanes of a vector
	// repeat (64 on the 910A) — a row of fewer leaves lanes of every
	// instruction idle, and a block per row of one element (m = 2^20, n =
	// k = 1: 45.8 M events, 13 ms simulated) a DMA in and out per element.
	// Shorter rows go ⌈lanes/cols⌉ whole rows to a block, one contiguous
	// range that the block's instructions sweep whole (elems = rows·cols,
	// not cols: one instruction an operation, not one a row), blocks of as
	// many elements as a matrix of lanes-wide rows already gets — the time
	// goes on smoothly across the threshold, and rows of at least lanes keep
	// their blocks. At most half a chunk, so that a run (< 2·lanes
	// elements) fits its UB slot.
	lanes := int64(j.dv.mach.DaVinci().Vector.BytesPerRepeat / 4)
	splitLanes, recombineLanes := min(lanes, int64(splitChunk/2)), min(lanes, int64(recombineChunk/2))
	for c := range prog.Cores {
		prog.Cores[c] = func(yield func(isa.Instr) bool) {
			e := newEmitter(yield, j.dv.mach)
			e.timingOnly = true
			n, at := j.splitBlocks(splitChunk, splitLanes)
			emitStreamPass(e, "split", c, j.dv.ncores, n, at)
			e.timingOnly = false
			e.syncAll()
			j.dv.emitGEMM(e, c)
			e.syncAll()
			e.timingOnly = true
			n, at = j.recombineBlocks(recombineChunk, recombineLanes)
			emitStreamPass(e, "recombine", c, j.dv.ncores, n, at)
		}
	}
	return prog
}

// daVinciReport fills the throughput, the product GEMMs and the notes of a
// DaVinci run.
func (j *int16Job) daVinciReport(chip *arch.Chip, st *arch.Stats, rep *report.Report, flops float64) {
	pl := j.dv
	peak, _ := chip.M.Peak("INT8")
	reportThroughput(rep, st, flops, peak/4, "int16 ops (2mnk; peak = INT8 cube peak / 4 products)")
	var kernels []map[string]any
	for _, ps := range pl.passes {
		kernels = append(kernels, map[string]any{"name": j.p.Kind + "/" + ps.name, "tiles": pl.nrb * pl.ncb})
	}
	rep.Program["product_kernels"] = kernels
	rep.Program["tiling"] = pl.tilingReport()
	rep.Program["buffering"] = j.p.Buffering
	rep.Program["cores"] = pl.ncores
	rep.Notes = append(rep.Notes, fmt.Sprintf("ape-int16: the split (%d INT32 operations per element) and the recombination (%d per element) are timing-only passes on the vector unit (INT32 vector instructions over UB chunks; the vector ISA has no INT16 bit operations nor INT64: the pieces and sums are written before the run, C is recombined from the planes); the four product GEMMs run on the INT8 cube as igemm's, one pass each, between sync_alls", int16SplitOps, int16RecombineOps))
}
