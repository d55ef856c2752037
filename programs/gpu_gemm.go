package programs

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync/atomic"

	"github.com/davinci-sim/davinci-sim/accuracy"
	"github.com/davinci-sim/davinci-sim/arch"
	"github.com/davinci-sim/davinci-sim/arch/gpu"
	"github.com/davinci-sim/davinci-sim/cube"
	"github.com/davinci-sim/davinci-sim/dma"
	"github.com/davinci-sim/davinci-sim/fp"
	"github.com/davinci-sim/davinci-sim/isa"
	"github.com/davinci-sim/davinci-sim/machines"
	"github.com/davinci-sim/davinci-sim/report"
	"github.com/davinci-sim/davinci-sim/stopwork"
)

// The GPU GEMM kernel generator, in the style of CUTLASS's multistage
// kernels (sm80 and later): a CTA computes a bm×bn tile of C; its A (bm×bk)
// and B (bk×bn) tiles of each k-step stream global→shared through `stages`
// buffers with asynchronous copies issued stages−1 k-steps ahead; every
// k-step ldmatrix-loads both tiles into double-buffered register fragments
// and runs the warp tiles' MMAs over them (one CTA-level instruction each,
// see package nvidia); the epilogue stores the FP32 accumulators. Shared
// tiles are row-major with rows padded by 16 bytes, which makes the
// ldmatrix phases bank-conflict free (as CUTLASS's swizzle does). Flags
// order the pipeline as cp.async groups and barriers do on hardware: copy →
// ldsm per stage, ldsm → copy when a stage is free again, ldsm → tensor per
// fragment buffer and tensor → ldsm when it is free, tensor → store before
// the epilogue.
//
// hgemm: inputs A (m×k) and B (k×n) are FP16 in global memory (rounded
// once from the FP32 inputs, as hgemm does everywhere), MMAs on the Tensor
// Cores. sgemm: FP32 inputs, the same pipeline with shared→register loads
// (lds) feeding the CUDA cores' FMAs (CUTLASS's SIMT kernels): every output
// an FP32 FMA chain in increasing k. C is FP32.

// smemPad is the padding of every shared-memory row (bytes).
const smemPad = 16

// gpuTile is a CTA tiling: tile, pipeline depth and warps.
type gpuTile struct {
	bm, bn, bk, stages, warps int
	// regStaged: the prefetch of the next k-step lands in registers and is
	// written to the one shared-memory (LDS) buffer once the current
	// k-step has been read from it — Tensile's PrefetchGlobalRead with one
	// LDS buffer — instead of stages shared-memory buffers.
	regStaged bool
	// direct: no staging and no pipeline (staging: none) — each k-step's
	// fragments load from global memory straight into registers, one
	// buffer, and the MMAs wait for them (stages is 1).
	direct bool
	// sharedOps: the matrix instructions read A and B from shared memory
	// (Hopper wgmma, Blackwell tcgen05): no shared→register loads and no
	// fragment registers.
	sharedOps bool
	// pair: CTAs 2c and 2c+1 form a cta_group::2 pair (Blackwell
	// tcgen05) on the two SMs of a TPC: each computes its bm × bn of a
	// 2·bm × bn tile (adjacent row blocks, the same column block) from its
	// own rows of A and the whole bk × bn of B, whose first bn/2 columns
	// rank 0 loads and the rest rank 1 — half of B's traffic per CTA.
	pair bool
}

// report is the tiling as report.json's program section shows it
// (cta_group only for pairs).
func (t gpuTile) report() map[string]int {
	r := map[string]int{"bm": t.bm, "bn": t.bn, "bk": t.bk, "stages": t.stages, "warps": t.warps}
	if t.pair {
		r["cta_group"] = 2
	}
	return r
}

// flagIDsPerPair is the most stages of a pair pipeline: its cluster flag
// ids are s + stages·(2·from + to) for stage s and the ranks a flag goes
// from and to (pairFlag).
const flagIDsPerPair = gpu.ClusterFlagIDs / 4

// pairFlag is the cluster flag of stage s (of stages) from the CTA of rank
// from to the CTA of rank to.
func pairFlag(s, stages, from, to int) int {
	return gpu.ClusterFlag + s + stages*(2*from+to)
}

// bnLoaded is the columns of B a CTA of tile t loads per k-step.
func (t gpuTile) bnLoaded() int {
	if t.pair {
		return t.bn / 2
	}
	return t.bn
}

// gpuDefaultTiles are tried in order; the first whose shared memory and
// registers fit the machine is the default: CUTLASS's sm80 FP16 tensor-op
// tiles (its profiler's 128x256_64x3, 128x128_32x3, 64x128_32x3 … kernels),
// largest first; gpuSIMTTiles its SIMT SGEMM tiles (128x128_8x2 …).
var gpuSIMTTiles = []gpuTile{
	{128, 128, 8, 2, 8, false, false, false, false},
	{64, 128, 8, 2, 4, false, false, false, false},
	{64, 64, 8, 2, 4, false, false, false, false},
}

// gpuTF32Tiles are CUTLASS's sm80 TF32 tensor-op tiles (128x256_32x3 …).
var gpuTF32Tiles = []gpuTile{
	{128, 256, 32, 3, 8, false, false, false, false},
	{128, 128, 32, 3, 4, false, false, false, false},
	{64, 64, 32, 2, 4, false, false, false, false},
}

// gpuDGEMMTiles are CUTLASS's sm80 FP64 tiles (128x128_16x3 …), used on
// the tensor cores (DMMA) and on the CUDA cores alike.
var gpuDGEMMTiles = []gpuTile{
	{128, 128, 16, 3, 8, false, false, false, false},
	{64, 128, 16, 3, 4, false, false, false, false},
	{64, 64, 16, 3, 4, false, false, false, false},
	{32, 32, 16, 2, 4, false, false, false, false},
}

// gpuIMMATiles are CUTLASS's sm80 INT8 tensor-op tiles (128x256_128x3 …).
var gpuIMMATiles = []gpuTile{
	{128, 256, 128, 3, 8, false, false, false, false},
	{128, 256, 64, 3, 8, false, false, false, false},
	{128, 128, 64, 3, 4, false, false, false, false},
	{64, 64, 64, 2, 4, false, false, false, false},
}

var gpuDefaultTiles = []gpuTile{
	{128, 256, 64, 3, 8, false, false, false, false},
	{128, 256, 32, 3, 8, false, false, false, false},
	{128, 128, 32, 3, 4, false, false, false, false},
	{128, 128, 32, 2, 4, false, false, false, false},
	{64, 128, 32, 2, 4, false, false, false, false},
	{64, 64, 32, 2, 4, false, false, false, false},
}

// multiOperandTiles are the tiles tried for a kernel staging several pieces
// of A and B per k-step, holding several accumulators or splitting FP32
// tiles in registers (emulated GEMMs; a fused split):
// each library tile, then the same tile with half its depth (half the
// shared memory per stage, as CUTLASS's 128x256_16x3 TF32 tiles), with
// eight warps (twice the threads for the accumulators' registers), and
// with both — before the next, smaller, library tile. Depths stay
// multiples of kstep and at least 16.
func multiOperandTiles(lib []gpuTile, kstep int) []gpuTile {
	var out []gpuTile
	for _, d := range lib {
		out = append(out, d)
		half := d
		half.bk /= 2
		okHalf := half.bk >= max(16, kstep) && half.bk%kstep == 0
		if okHalf {
			out = append(out, half)
		}
		if d.warps < 8 {
			d.warps, half.warps = 8, 8
			out = append(out, d)
			if okHalf {
				out = append(out, half)
			}
		}
	}
	return out
}

// gpuGEMMPlan is a GEMM bound to a GPU machine (nvidia-sm, amd-cu).
type gpuGEMMPlan struct {
	p    GEMMParams
	mach *machines.Machine
	tg   *gpuTarget
	// t is the simulated tile: the kernel's (real), or with --k-batch u
	// (batch) the real k-steps in one (batchKSteps). Resources, reports
	// and numerics are the real tile's.
	t     gpuTile
	real  gpuTile
	batch int       // real k-steps per simulated k-step (1: none)
	in    fp.Format // FP16 or INT8 (tensor cores), FP32 (CUDA cores)
	out   fp.Format // the accumulators and C: FP32, INT32 for INT8, FP64 for FP64
	lane  isa.Pipe  // the lane of the MMAs: matrix, or vector (CUDA cores, VALU)
	es    int64     // bytes of an input element

	aLd, bLd       int64 // shared-memory row strides (bytes)
	aStage, bStage int64 // bytes of one stage's A and B tiles
	smem           int64 // shared memory of a CTA
	rfAcc, rfA     int64 // register-file offsets: accumulators, A fragments (2 buffers)
	rfB, fragA     int64 // B fragments (2 buffers); bytes of one A fragment buffer
	fragB          int64
	rfStage        int64 // registers staging the next k-step's A (regStaged), then B at rfStageB
	rfStageB       int64
	rfC            int64 // registers of a band of C (emulated epilogues with beta = 1)
	rfX, rfT, rfQ  int64 // a fused split's FP32 tiles, its temporary, its unstaged pieces
	// fusedOps: a fused split's vector operations of one k-step (the same
	// every k-step: setFusedSplit; a kernel with a fused split is never
	// batched, --k-batch).
	fusedOps []isa.Instr
	// ks, with --k-batch, is where each simulated k-step starts along k
	// (ks[nkt] = K): k-steps of batch real ones, ramping up from 1 at the
	// start and down to 1 at the end (batchKSteps); nil without.
	ks            []int
	regs          int64 // 32-bit registers of a CTA
	gmA, gmB, gmC int64 // global-memory addresses
	lda           int64 // elements between rows of A in global memory (K unless A is a column range of a wider matrix)
	ldb, ldc      int64 // elements between rows of B and of C (N unless they are column ranges of wider matrices)
	nrb, ncb, nkt int   // row blocks, column blocks, k-steps
	// sh and ops: the pieces staged per k-step, the MMAs over them and
	// the accumulators of an emulated GEMM (emulated_kernel.go); ops is
	// nil for a plain GEMM (one A, one B, one MMA, one accumulator).
	sh  gpuShape
	ops *gpuOperands
	// epi, when set, replaces the epilogue's store of C (the accumulators
	// are final and readable in src): lu-fused's update and TRSM epilogues.
	epi func(e *emitter, bi, bj int, src isa.Buffer)
}

// Flag ids of the pipeline (per lane pair).
const (
	gpuFlagStore = 0 // tensor → store: the accumulators are final
)

// tileResources returns the shared memory and registers a block of tile t
// needs with inputs of format in, on a GPU of warpSize threads per warp.
func tileResources(t gpuTile, in fp.Format, lane isa.Pipe, warpSize int, sh gpuShape) (smem, regs int64) {
	sh = sh.norm()
	na, nb := int64(sh.a), int64(sh.b)
	es := int64(in.Bytes())
	aLd := int64(t.bk)*es + smemPad
	bLd := int64(t.bnLoaded())*es + smemPad
	smem = int64(t.stages) * (na*int64(t.bm)*aLd + nb*int64(t.bk)*bLd)
	staging := int64(0)
	if t.direct {
		smem = 0
		if sh.readsC {
			smem = cSliceRows * int64(t.bn) * 4 // the epilogue's band of C (emulatedEpilogue)
		}
	}
	if t.regStaged {
		smem = na*int64(t.bm)*aLd + nb*int64(t.bk)*bLd
		staging = (na*int64(t.bm)*int64(t.bk) + nb*int64(t.bk)*int64(t.bn)) * es / 4 // the prefetched k-step, 4 bytes a register
		if sh.fused {
			staging += int64(t.bm)*int64(t.bk) + int64(t.bk)*int64(t.bn) // its FP32 tiles, before the split
		}
	}
	// Accumulators (one FP32 register each), the warps' double-buffered A
	// and B fragments of one MMA slice (16 deep for FP16, two values per
	// register: 2 × (bm + bn) × 16 / 2; one deep for FP32: 2 × (bm + bn))
	// and 32 registers per thread of addressing and loop state.
	frag := 16 * (na*int64(t.bm) + nb*int64(t.bn)) // tensor-core fragments (FP16, BF16, TF32 k8, INT8 k32)
	acc := int64(t.bm*t.bn) * int64(sh.accs())     // one 32-bit register per accumulator
	switch {
	case t.sharedOps:
		frag = 0 // the tensor cores read shared memory
	case in == fp.FP32 && lane == gpu.LaneVector:
		frag = 2 * int64(t.bm+t.bn) // SIMT: one value of A and B per k
	case in == fp.FP64:
		frag, acc = 8*int64(t.bm+t.bn), 2*acc // two registers a value; DMMA k-slices of 4, double-buffered
	}
	frag = frag / 2 * t.fragBufs()
	if sh.readsC {
		acc += cSliceRows * int64(t.bn) // a band of C
	}
	regs = acc + frag + staging + 32*int64(warpSize)*int64(t.warps)
	return smem, regs
}

// fits reports why tile t cannot run on target tg with inputs of format in
// on lane (nil: it can).
func (t gpuTile) fits(tg *gpuTarget, in fp.Format, lane isa.Pipe, sh gpuShape) error {
	smem, regs := tileResources(t, in, lane, tg.warpSize, sh)
	threads := tg.threads(t.warps)
	regsKey, perThreadKey, warpsKey := tg.regsKey, tg.perThreadKey, tg.warpsKey
	switch {
	case smem > tg.sharedPerBlock:
		return limit(machineKeys(tg.sharedKey), "needs %d bytes of shared memory per %s (%d stages of %d×%d and %d×%d tiles); the machine allows %d (%s)",
			smem, tg.block, t.stages, t.bm, t.bk, t.bk, t.bn, tg.sharedPerBlock, tg.sharedKey)
	case t.warps > tg.maxWarps:
		return limit(machineKeys(tg.warpsKeys...), "needs %d %ss per %s; a %s holds %d (%s)", t.warps, tg.warp, tg.block, tg.core, tg.maxWarps, warpsKey)
	case regs > tg.registers/4:
		return limit(machineKeys(tg.registersKeys...), "needs %d registers per %s; a %s has %d (%s)", regs, tg.block, tg.core, tg.registers/4, regsKey)
	case (regs+threads-1)/threads > int64(tg.maxRegsPerThread):
		return limit(machineKeys(perThreadKey), "needs %d registers per thread over %d threads; the machine allows %d (%s)",
			(regs+threads-1)/threads, threads, tg.maxRegsPerThread, perThreadKey)
	}
	if tg.accBuf == gpu.BufAcc && !t.sharedOps {
		if need := int64(sh.norm().accs()) * dma.FractalBytes(t.bm, t.bn, fp.FP32); need > tg.accFile {
			return limit(machineKeys("core.agprs"), "the %d %d×%d accumulators need %d bytes of accumulation registers; a %s has %d (core.agprs)", sh.norm().accs(), t.bm, t.bn, need, tg.core, tg.accFile)
		}
	}
	if tg.tmemAcc && t.sharedOps {
		if need := t.tmemBytes(sh, gpuAccFormat(in)); need > tg.tmem {
			its := fmt.Sprintf("its %d×%d accumulator (%d × %d × 4 bytes)", t.bm, t.bn, t.bm, t.bn)
			if n := sh.norm().accs(); n > 1 {
				its = fmt.Sprintf("its %d %d×%d accumulators (%d × %d × 4 bytes each)", n, t.bm, t.bn, t.bm, t.bn)
			}
			return limit(machineKeys("core.tmem"), "needs %d bytes of tensor memory per %s for %s; the %s has %d (core.tmem)",
				need, tg.block, its, tg.core, tg.tmem)
		}
	}
	if need := t.registerBytes(tg, in, sh); need > tg.regFile() {
		return limit(machineKeys(regsKey), "the %d×%d accumulators and %s of %d×%d and %d×%d fragments need %d bytes of registers; a %s has %d (%s)",
			t.bm, t.bn, t.fragSteps(), t.bm, t.bk, t.bk, t.bn, need, tg.core, tg.regFile(), regsKey)
	}
	return nil
}

// tmemBytes is the tensor memory a block of tile t allocates for its
// accumulators of format out (tcgen05 kernels: gpuGEMMPlan.accBytes).
func (t gpuTile) tmemBytes(sh gpuShape, out fp.Format) int64 {
	return int64(sh.norm().accs()) * dma.FractalBytes(t.bm, t.bn, out)
}

// gpuAccFormat is the format of the accumulators (and C) of a GPU GEMM
// of inputs in: INT32 for INT8, FP64 for FP64, else FP32.
func gpuAccFormat(in fp.Format) fp.Format {
	switch in {
	case fp.INT8:
		return fp.INT32
	case fp.FP64:
		return fp.FP64
	}
	return fp.FP32
}

// fragBufs is the number of buffers of A and B fragments the kernel
// holds: two (the next k-step's loaded while the MMAs read this one's),
// one without staging (direct).
func (t gpuTile) fragBufs() int64 {
	if t.direct {
		return 1
	}
	return 2
}

// fragSteps says how many k-steps of fragments the kernel holds.
func (t gpuTile) fragSteps() string {
	if t.fragBufs() == 1 {
		return "one k-step"
	}
	return "two k-steps"
}

// registerBytes is the register storage of the kernel's layout: the
// accumulators (unless they have their own file), two buffers of A and B
// fragments and, register-staged, one k-step of A and B.
func (t gpuTile) registerBytes(tg *gpuTarget, in fp.Format, sh gpuShape) int64 {
	sh = sh.norm()
	na, nb := int64(sh.a), int64(sh.b)
	out := gpuAccFormat(in)
	need := t.fragBufs() * (na*dma.FractalBytes(t.bm, t.bk, in) + nb*dma.FractalBytes(t.bk, t.bn, in))
	if t.sharedOps {
		need = 0
	}
	if tg.accBuf == gpu.BufRegs {
		need += int64(sh.accs()) * dma.FractalBytes(t.bm, t.bn, out)
	}
	if t.regStaged {
		need += (na*int64(t.bm)*int64(t.bk) + nb*int64(t.bk)*int64(t.bn)) * int64(in.Bytes())
	}
	if sh.readsC {
		need += dma.FractalBytes(cSliceRows, t.bn, fp.FP32)
	}
	if sh.fused && t.regStaged {
		x, tmp, q := t.fusedSplitBytes(int64(in.Bytes()))
		need = (need+3)&^3 + x + tmp + q
	}
	return need
}

// fusedSplitBytes are the registers a fused split lays out past the
// others (newGPUGEMMPlan): the FP32 tiles of A and B, the split's FP32
// temporary (A and B are split one after the other) and a tile of pieces
// made but not staged (es bytes an element).
func (t gpuTile) fusedSplitBytes(es int64) (tiles, tmp, unstaged int64) {
	a, b := int64(t.bm)*int64(t.bk), int64(t.bk)*int64(t.bn)
	return 4 * (a + b), 4 * max(a, b), es * max(a, b)
}

// newGPUGEMMPlan checks the parameters against the machine and lays out
// maxTileStages and maxTileWarps bound a GPU GEMM tile's shared-memory
// stages and warps (tiling.stages, tiling.warps).
const maxTileStages, maxTileWarps = 16, 32

// shared memory, registers and global memory.
func newGPUGEMMPlan(file string, p GEMMParams, m *machines.Machine, in fp.Format, sh gpuShape) (*gpuGEMMPlan, error) {
	sh = sh.norm()
	tg, _ := newGPUTarget(m)
	bad := func(key, format string, a ...any) error {
		return keyError(file, key, format, a...)
	}
	// Negative stages or warps would read as "the kernel's" below.
	if v := p.Tiling.Stages; v < 0 {
		return nil, bad("tiling.stages", "must be in 2..%d (0 = the kernel's; 1 with staging: none) (got %d)", maxTileStages, v)
	}
	if v := p.Tiling.Warps; v < 0 {
		return nil, bad("tiling.warps", "must be in 1..%d (0 = the kernel's) (got %d)", maxTileWarps, v)
	}
	es := int64(in.Bytes())
	// The MMAs run on the matrix units, or on the vector units (unit:
	// vector): the default for SGEMM on NVIDIA (CUTLASS's SIMT kernels) and
	// for DGEMM on GPUs without FP64 matrix units.
	lane := isa.Pipe(gpu.LaneMatrix)
	switch p.Unit {
	case "":
		lane = tg.defaultLane(in)
	case "matrix":
	case "vector":
		lane = gpu.LaneVector
	default:
		return nil, bad("unit", "must be matrix or vector (got %q)", p.Unit)
	}
	if lane == gpu.LaneVector && tg.vectorRate[in] <= 0 {
		return nil, bad("unit", "the %s units of %s do not compute %s", tg.vector, tg.describe(), strings.ToUpper(in.String()))
	}
	if lane == gpu.LaneMatrix && !tg.hasMatrix(in) {
		what := tg.typeName(in)
		hint := ""
		if tg.vectorRate[in] > 0 {
			hint = " (unit: vector runs it on the " + tg.vector + " units)"
		}
		key, needs := "kind", p.Kind+" needs"
		switch {
		case p.Unit == "matrix": // (asked for: the key to change)
			key, needs = "unit", "matrix asks for"
		case p.Input != "":
			key = "input"
		}
		return nil, limitedBy(bad(key, "%s %s %s; %s has none%s", needs, what, tg.units, tg.describe(), hint), matrixFrom(m, in)...)
	}
	defaults := tg.tiles(in, lane)
	kstep := 16
	if lane == gpu.LaneMatrix {
		kstep = max(tg.matrixK[in], 1)
	} else {
		kstep = 8
		if in == fp.FP64 {
			kstep = 4
		}
	}
	several := sh.a > 1 || sh.b > 1 || sh.accs() > 1 // pieces or accumulators
	if several || sh.fused {
		// (A fused split's FP32 tiles take registers as more pieces do:
		// H100 hgemm split fused had 64×64×64 alone within 255 registers
		// a thread, a quarter of the tile of fused Markidis.)
		defaults = multiOperandTiles(defaults, kstep)
	}
	// CTA pairs (cta_group::2) need tcgen05 and CTAs 2c, 2c+1 on adjacent
	// row blocks of one column block: an even number of row blocks.
	group := p.Tiling.CTAGroup
	switch {
	case group < 0 || group > 2:
		return nil, bad("tiling.cta_group", "must be 1 or 2 (0 = 1) (got %d)", group)
	case group == 2 && !tg.tmemAcc:
		return nil, bad("tiling.cta_group", "2 (CTA pairs, cta_group::2) needs tcgen05 tensor cores (Blackwell: b200, gb200); %s has none", tg.describe())
	case group == 2 && lane != gpu.LaneMatrix:
		return nil, bad("tiling.cta_group", "2 (CTA pairs) applies to tcgen05 kernels; this %s runs on the %s units", p.Kind, tg.vector)
	case group == 2 && (len(defaults) == 0 || !defaults[0].sharedOps):
		return nil, bad("tiling.cta_group", "2 (CTA pairs) applies to tcgen05 kernels; %s %s runs on warp-level MMAs", tg.m.Name, strings.ToUpper(in.String()))
	}
	// The library's kind of pipeline, before the tiles are narrowed down.
	libRegStaged := len(defaults) > 0 && defaults[0].regStaged
	libSharedOps := len(defaults) > 0 && defaults[0].sharedOps
	pairable := func(d gpuTile) bool {
		stages := d.stages
		if p.Tiling.Stages > 0 {
			stages = p.Tiling.Stages // the override replaces the default tile's
		}
		return (p.M+d.bm-1)/d.bm%2 == 0 && d.bn%32 == 0 && stages <= flagIDsPerPair && m.Cores%2 == 0
	}
	var usable []gpuTile
	for _, d := range defaults {
		if group == 2 && !d.pair {
			d.pair = true
			if pairable(d) {
				usable = append(usable, d)
			}
			continue
		}
		if d.pair && (group == 1 || !pairable(d)) {
			continue
		}
		usable = append(usable, d)
	}
	defaults = usable
	if group == 2 && len(defaults) == 0 && p.Tiling.BM == 0 {
		return nil, limitedBy(bad("tiling.cta_group", "2 needs an even number of row blocks (m = %d gives an odd number for every library tile) and of SMs (machine %s has %d); give tiling.bm or cta_group 1", p.M, m.Name, m.Cores), "program.m", "machine.cores")
	}
	t := gpuTile{bm: p.Tiling.BM, bn: p.Tiling.BN, bk: p.Tiling.BK, stages: p.Tiling.Stages, warps: p.Tiling.Warps}
	staging := p.Tiling.Staging
	if sh.fused {
		// The split runs on FP32 tiles in registers before they are
		// stored to shared memory: a register-staged pipeline.
		if staging != "" && staging != "registers" {
			return nil, bad("tiling.staging", "scheme.split fused splits the FP32 tiles in registers before they go to shared memory: staging must be registers (got %+q)", staging)
		}
		if lane != gpu.LaneMatrix {
			return nil, bad("scheme.split", "fused applies to kernels on the matrix units")
		}
		staging = "registers"
	}
	switch staging {
	case "", "shared", "registers":
	case "none":
		if libSharedOps {
			return nil, bad("tiling.staging", "none (fragments loaded from global memory) needs MMAs that read registers; %s's %s read shared memory", tg.describe(), tg.units)
		}
	default:
		return nil, bad("tiling.staging", "must be shared, registers or none (got %+q)", staging)
	}
	if t.bm == 0 && t.bn == 0 && t.bk == 0 {
		if staging != "" {
			// The library's tiles for the staging asked for.
			var keep []gpuTile
			for _, d := range defaults {
				if d.regStaged == (staging == "registers") && d.direct == (staging == "none") {
					keep = append(keep, d)
				}
			}
			if len(keep) == 0 { // none of them: the library's tiles written that way
				for _, d := range defaults {
					d.regStaged = staging == "registers"
					if d.regStaged {
						d.stages = 2        // one k-step in registers, one in shared memory
						d.sharedOps = false // register staging feeds register fragments
					}
					if d.direct = staging == "none"; d.direct {
						d.stages = 1
					}
					keep = append(keep, d)
				}
			}
			defaults = keep
		}
		var fitting []gpuTile
		var smallest gpuTile
		var why error
		for _, d := range defaults {
			err := d.fits(tg, in, lane, sh)
			if err == nil {
				fitting = append(fitting, d)
				continue
			}
			// (The library's tiles go from the largest to the smallest:
			// the last one's refusal names the limit none passes.)
			smallest, why = d, err
		}
		found := len(fitting) > 0
		switch {
		case found && p.anyShape:
			t = fitting[0]
		case found:
			t = fillingTile(fitting, p.M, p.N, m.Cores, p.together, several)
		}
		if !found && why == nil {
			return nil, bad("tiling", "none of the default tiles fits machine %s; give tiling.bm, bn, bk, stages, warps", m.Name)
		}
		if !found {
			d := smallest
			return nil, bad("tiling", "none of the default tiles fits machine %s (the smallest, %d×%d×%d, %d stages, %d %ss, %w); give tiling.bm, bn, bk, stages, warps",
				m.Name, d.bm, d.bn, d.bk, d.stages, d.warps, tg.warp, why)
		}
		if p.Tiling.Stages > 0 {
			t.stages = p.Tiling.Stages
		}
		if p.Tiling.Warps > 0 {
			t.warps = p.Tiling.Warps
		}
	} else {
		// A tiling without staging: the library's, unless its stages ask
		// for a multistage shared-memory pipeline.
		t.regStaged = staging == "registers" || staging == "" && libRegStaged && t.stages <= 2
		t.direct = staging == "none"
		t.sharedOps = !t.regStaged && !t.direct && libSharedOps
		t.pair = group == 2
	}
	if t.stages == 0 {
		t.stages = 3
		if t.regStaged {
			t.stages = 2
		}
		if t.direct {
			t.stages = 1
		}
	}
	if t.direct && t.stages != 1 {
		return nil, bad("tiling.stages", "must be 1 with staging: none (no pipeline: each k-step loads, then multiplies) (got %d)", t.stages)
	}
	if t.regStaged && t.stages != 2 {
		return nil, bad("tiling.stages", "must be 2 with staging: registers (one k-step in registers, one in shared memory) (got %d)", t.stages)
	}
	if t.warps == 0 {
		t.warps = 4
	}
	var kstepFrom []string // the machine key kstep comes from
	if lane == gpu.LaneMatrix {
		kstepFrom = machineKeys(tg.matrixKey[in])
	}
	for _, d := range []struct {
		key  string
		v, m int
		from []string
	}{{"tiling.bm", t.bm, 16, nil}, {"tiling.bn", t.bn, 16, nil}, {"tiling.bk", t.bk, kstep, kstepFrom}} {
		if d.v == 0 && p.Tiling.BM+p.Tiling.BN+p.Tiling.BK != 0 {
			return nil, bad(d.key, "missing: give tiling.bm, bn and bk together (or none of them: the library's tile)")
		}
		if d.v < d.m || d.v%d.m != 0 || d.v > 1024 {
			return nil, limitedBy(bad(d.key, "must be a multiple of %d in %d..1024 (got %d)", d.m, d.m, d.v), d.from...)
		}
	}
	if (t.stages < 2 && !t.direct) || t.stages > maxTileStages {
		return nil, bad("tiling.stages", "must be in 2..%d (0 = the kernel's) (got %d)", maxTileStages, t.stages)
	}
	if t.warps < 1 || t.warps > maxTileWarps {
		return nil, bad("tiling.warps", "must be in 1..%d (0 = the kernel's) (got %d)", maxTileWarps, t.warps)
	}
	if err := t.fits(tg, in, lane, sh); err != nil {
		return nil, bad("tiling", "%d×%d×%d tile, %d stages, %d %ss %w", t.bm, t.bn, t.bk, t.stages, t.warps, tg.warp, err)
	}
	if t.regStaged {
		t.sharedOps = false // register staging feeds register fragments
	}
	if t.pair {
		switch {
		case (p.M+t.bm-1)/t.bm%2 != 0:
			return nil, limitedBy(bad("tiling.cta_group", "2 needs an even number of row blocks (m = %d in blocks of %d gives %d)", p.M, t.bm, (p.M+t.bm-1)/t.bm), "program.m", "program.tiling.bm")
		case t.bn%32 != 0:
			return nil, bad("tiling.cta_group", "2 needs bn a multiple of 32 (got %d)", t.bn)
		case t.stages > flagIDsPerPair:
			return nil, bad("tiling.cta_group", "2 allows at most %d stages (got %d)", flagIDsPerPair, t.stages)
		case m.Cores%2 != 0:
			return nil, limitedBy(bad("tiling.cta_group", "2 needs an even number of SMs (machine %s has %d)", m.Name, m.Cores), "machine.cores")
		case t.regStaged || !t.sharedOps:
			return nil, bad("tiling.cta_group", "2 needs staging: shared (the MMAs read shared memory), not %s", staging)
		}
	}
	if t.regStaged && lane != gpu.LaneMatrix {
		return nil, bad("tiling.staging", "registers staging is modelled for matrix-unit kernels; use shared with unit: vector")
	}
	pl := &gpuGEMMPlan{p: p, mach: m, tg: tg, t: t, real: t, batch: 1, in: in, es: es, lane: lane, sh: sh}
	pl.smem, pl.regs = tileResources(t, in, lane, tg.warpSize, sh)
	pl.out = gpuAccFormat(in)
	if need := pl.layout(); need > tg.regFile() {
		return nil, limitedBy(bad("tiling", "the %d×%d accumulators and %s of %d×%d and %d×%d fragments need %d bytes of registers; a %s has %d",
			t.bm, t.bn, t.fragSteps(), t.bm, t.bk, t.bk, t.bn, need, tg.core, tg.regFile()), machineKeys(tg.regsKey)...)
	}
	if u := min(p.kBatch, (p.K+t.bk-1)/t.bk); u > 1 && lane == gpu.LaneVector && !t.direct {
		// Only the SIMT kernels (FMAs on the vector units), whose k-steps
		// are 8 deep (DGEMM: 16) where the tensor-core kernels' are 32 to
		// 128: batches bring them to that depth. Batching tensor-core
		// kernels moved times too far to be worth it (8192³, against the
		// full simulation: H100 LE-GEMM +32 % in batches of 7, +9.6 % of
		// 4 — its L2 hits 0.87 → 0.63 as batches request lines further
		// ahead; MI210 HGEMM −5.6 % in batches of 2; a kernel without a
		// pipeline or with a fused split pays once a latency each of its
		// k-steps waits out: −12 %, −20 %), and fast-forward already
		// skips most of their waves (docs/design-notes.md, "Batched
		// k-steps").
		pl.batchKSteps(u)
	}
	pl.nrb = (p.M + t.bm - 1) / t.bm
	pl.ncb = (p.N + t.bn - 1) / t.bn
	pl.nkt = (p.K + pl.t.bk - 1) / pl.t.bk
	if pl.ks != nil {
		pl.nkt = len(pl.ks) - 1
	}
	align := func(x int64) int64 { return (x + 511) &^ 511 }
	pl.lda = int64(p.K)
	pl.ldb, pl.ldc = int64(p.N), int64(p.N)
	pl.gmA = 0
	pl.gmB = align(pl.gmA + int64(p.M)*int64(p.K)*es)
	pl.gmC = align(pl.gmB + int64(p.K)*int64(p.N)*es)
	if end := pl.gmC + int64(p.M)*int64(p.N)*int64(pl.out.Bytes()); end > int64(m.GM.Capacity) {
		return nil, limitedBy(bad("m", "A, B and C need %d bytes of global memory; machine %s has %d (gm.capacity)", end, m.Name, int64(m.GM.Capacity)), "machine.gm.capacity")
	}
	return pl, nil
}

// fillingTile is the library tile a GEMM of m×n runs with, of the tiles
// that fit the machine (largest first), when the program names none. A
// tile's cost is the most tile area (bm·bn per step of k) one of the
// machine's sms SMs computes: its CTAs — those of the together GEMMs
// launched in one grid with this one (a grouped GEMM), each alike — dealt
// over the SMs, ⌈CTAs/sms⌉ tiles each. The first tile is kept unless a
// smaller one at least halves that (then the cheapest, the larger of
// equals), as cuBLAS's and Tensile's per-shape heuristics leave the large
// tile for a smaller kernel on skinny or small shapes: a 128×256 tile at
// m = 16, n = 8192 would leave 100 of an H100's 132 SMs idle (64×64: 128
// CTAs, an eighth of the area each). Every shape whose grid fills the SMs
// in whole waves keeps the first: 8192³ ties at every tile. A CTA pair's
// tile counts its two CTAs. With sameDepth (a kernel of several pieces or
// accumulators) only tiles as deep as the first are taken: products that
// share an accumulator are interleaved a k-step at a time, so there the
// depth decides C's bits, and a shape's tile must not (the same element of
// C whatever m and n). The grid's k stays whole: there is no split-K.
func fillingTile(tiles []gpuTile, m, n, sms, together int, sameDepth bool) gpuTile {
	cost := func(d gpuTile) int64 {
		ctas := int64(max(together, 1)) * int64((m+d.bm-1)/d.bm) * int64((n+d.bn-1)/d.bn)
		return (ctas + int64(sms) - 1) / int64(sms) * int64(d.bm) * int64(d.bn)
	}
	first, best := tiles[0], tiles[0]
	for _, d := range tiles[1:] {
		if sameDepth && d.bk != first.bk {
			continue
		}
		if cost(d) < cost(best) {
			best = d
		}
	}
	if 2*cost(best) <= cost(first) {
		return best
	}
	return first
}

// layout places a CTA's shared-memory stages and registers for the
// simulated tile pl.t and returns the register bytes they need.
func (pl *gpuGEMMPlan) layout() (need int64) {
	t, in, es, sh, tg := pl.t, pl.in, pl.es, pl.sh, pl.tg
	pl.aLd, pl.bLd = int64(t.bk)*es+smemPad, int64(t.bnLoaded())*es+smemPad
	pl.aStage, pl.bStage = int64(t.bm)*pl.aLd, int64(t.bk)*pl.bLd
	pl.fragA = dma.FractalBytes(t.bm, t.bk, in)
	pl.fragB = dma.FractalBytes(t.bk, t.bn, in)
	pl.rfAcc = 0
	na, nb := int64(sh.a), int64(sh.b)
	pl.rfA = int64(sh.accs()) * dma.FractalBytes(t.bm, t.bn, pl.out)
	if tg.accBuf != gpu.BufRegs {
		pl.rfA = 0 // the accumulators have their own file (CDNA1 AGPRs)
	}
	pl.rfB = pl.rfA + t.fragBufs()*na*pl.fragA
	pl.rfStage = pl.rfB + t.fragBufs()*nb*pl.fragB
	if t.sharedOps {
		pl.rfB, pl.rfStage = pl.rfA, pl.rfA // no register fragments (fits counts none)
	}
	if t.regStaged {
		pl.rfStageB = pl.rfStage + na*int64(t.bm)*int64(t.bk)*es
	}
	pl.rfC = pl.rfStage + (na*int64(t.bm)*int64(t.bk)+nb*int64(t.bk)*int64(t.bn))*es*b2i(t.regStaged)
	if pl.tmem() {
		pl.rfC = max(pl.rfC, int64(sh.accs())*dma.FractalBytes(t.bm, t.bn, pl.out)) // past the accumulators read from tensor memory
	}
	need = pl.rfC + dma.FractalBytes(cSliceRows, t.bn, fp.FP32)*b2i(sh.readsC)
	if sh.fused {
		// The FP32 tiles (A's, then B's), the split's temporary (A and B
		// are split one after the other), and a tile for pieces the
		// kernel does not stage.
		x, tmp, q := t.fusedSplitBytes(es)
		pl.rfX = (need + 3) &^ 3
		pl.rfT = pl.rfX + x
		pl.rfQ = pl.rfT + tmp
		need = pl.rfQ + q
	}
	return need
}

// batchKSteps makes the simulated kernel run up to u of the real
// kernel's k-steps as one (--k-batch, timing only): k-steps of u·bk, their
// copies, fragment loads and FMA runs u times as deep, with the real
// pipeline's stages (at most 3: the next batches are fetched while this
// one is multiplied). The first k-steps ramp up (1, 2, 4, … below u) and
// the last ones down, the remainder among them in decreasing order, so
// that the pipeline fills and drains as the real one does: the first
// FMAs wait for one real k-step's copy, and no batch's copy is more than
// twice the work it hides behind. A batch the k-loop is too short for (it
// needs the two ramps and one batch) is made smaller, down to none. The
// CTA's resources — and so the occupancy — stay the real kernel's
// (pl.real); shared-memory and register addresses past them are never
// read in timing mode.
func (pl *gpuGEMMPlan) batchKSteps(u int) {
	real := pl.real
	n := (pl.p.K + real.bk - 1) / real.bk
	stages := real.stages
	if !real.direct && !real.regStaged {
		stages = min(real.stages, 3)
	}
	u = pl.l2Batch(u, stages)
	var ramp []int
	for ; u > 1; u-- {
		ramp = ramp[:0]
		sum := 0
		for s := 1; s < u; s *= 2 {
			ramp, sum = append(ramp, s), sum+s
		}
		if n >= 2*sum+u {
			break
		}
	}
	if u <= 1 {
		return
	}
	sizes := slices.Clone(ramp)
	mid := n
	for _, s := range ramp {
		mid -= 2 * s
	}
	for ; mid >= u; mid -= u {
		sizes = append(sizes, u)
	}
	tail := slices.Clone(ramp)
	if mid > 0 {
		tail = append(tail, mid)
	}
	slices.SortFunc(tail, func(a, b int) int { return b - a })
	sizes = append(sizes, tail...)
	pl.ks = make([]int, 0, len(sizes)+1)
	k := 0
	for _, s := range sizes {
		pl.ks = append(pl.ks, k)
		k += s * real.bk
	}
	pl.ks = append(pl.ks, pl.p.K)
	t := real
	t.bk *= u
	t.stages = stages
	pl.t, pl.batch = t, u
	pl.layout()
}

// kBatchL2Share is the largest share of the L2 that batched k-steps may
// request ahead of the real kernel (l2Batch).
const kBatchL2Share = 0.15

// l2Batch is the largest batch up to u whose stages (of u k-steps each)
// hold at most kBatchL2Share of the L2 more than the real kernel's do:
// the resident blocks' tiles of those extra k-steps, counted once for
// the blocks that share them (ctaGroup row blocks, the columns the
// resident blocks span). A batch requests its k-steps' lines up to
// stages·u k-steps ahead where the real kernel requests stages; on an L2
// that barely holds the working set that turns hits into misses (MI210
// HGEMM 4096³, 8 MiB: batches of 4 took the L2's share of the reads from
// 78 % to 47 % and the kernel 11 % longer; of 2, 78 % and +0.04 %).
func (pl *gpuGEMMPlan) l2Batch(u, stages int) int {
	capacity := float64(pl.mach.L2.Capacity)
	if capacity <= 0 {
		return u
	}
	real := pl.real
	resident := max(pl.residentPerCore(), 1) * int64(pl.mach.Cores)
	nrb, ncb := (pl.p.M+real.bm-1)/real.bm, (pl.p.N+real.bn-1)/real.bn
	rows := int64(min(ctaGroup, nrb))
	cols := min(int64(ncb), (resident+rows-1)/rows)
	step := float64((rows*int64(real.bm)*int64(pl.sh.a) + cols*int64(real.bn)*int64(pl.sh.b)) * int64(real.bk) * pl.es)
	for ; u > 1; u-- {
		if float64(stages*u-real.stages)*step <= kBatchL2Share*capacity {
			break
		}
	}
	return u
}

// tilingReport is the kernel's tiling as report.json's program section
// shows it, with the k-steps simulated as one when batched.
func (pl *gpuGEMMPlan) tilingReport() map[string]int {
	r := pl.real.report()
	if pl.batch > 1 {
		r["k_batch"] = pl.batch
	}
	return r
}

// realKSteps is the real kernel's k-steps: their depth bk and number.
func (pl *gpuGEMMPlan) realKSteps() (bk, nkt int) {
	return pl.real.bk, (pl.p.K + pl.real.bk - 1) / pl.real.bk
}

func (pl *gpuGEMMPlan) rows(bi int) int { return min(pl.t.bm, pl.p.M-bi*pl.t.bm) }

// sampleBM and sampleBN are the rows and columns of the blocks of C that
// numerics sampled draws (sample_tiles of them, at random): the same for
// every scheme, tile and GPU machine, so that runs measure their errors on
// the same elements of C for the same m, n and seed. The golden model
// computes any block (its order of operations is the kernel's along k,
// whatever the tile's bm and bn). Until 2026-12-05 the blocks were each
// kernel's library tile, so the schemes of a Pareto chart, whose tiles
// differ, were measured on different elements (a user review).
const sampleBM, sampleBN = 128, 256

// sampleBlocks returns the blocks of C numerics sampled draws from: the
// i-th of n (row-major) is rows r0…r0+mm−1, columns c0…c0+nn−1 (C in
// blocks of sampleBM × sampleBN).
func (pl *gpuGEMMPlan) sampleBlocks() (n int, block func(i int) (r0, mm, c0, nn int)) {
	bm, bn := sampleBM, sampleBN
	ncb := (pl.p.N + bn - 1) / bn
	n = (pl.p.M + bm - 1) / bm * ncb
	return n, func(i int) (r0, mm, c0, nn int) {
		r0, c0 = i/ncb*bm, i%ncb*bn
		return r0, min(bm, pl.p.M-r0), c0, min(bn, pl.p.N-c0)
	}
}
func (pl *gpuGEMMPlan) cols(bj int) int { return min(pl.t.bn, pl.p.N-bj*pl.t.bn) }
func (pl *gpuGEMMPlan) depth(kt int) int {
	if pl.ks != nil {
		return pl.ks[kt+1] - pl.ks[kt]
	}
	return min(pl.t.bk, pl.p.K-kt*pl.t.bk)
}

// kOff is where k-step kt starts along k.
func (pl *gpuGEMMPlan) kOff(kt int) int {
	if pl.ks != nil {
		return pl.ks[kt]
	}
	return kt * pl.t.bk
}

// repeating returns the k-steps [from, to) of the main loop that repeat
// (isa.Step) when each step fetches ahead−1 steps ahead: from the second
// full-depth step to the last whose fetch is one too, so that a step's
// copies, fragment loads and products and those it fetches are all a
// full k-step's. Without --k-batch every step is full: [1, nkt−ahead).
// Batched k-steps (batchKSteps) ramp up and down at the ends of the
// loop, and the full batches between repeat.
func (pl *gpuGEMMPlan) repeating(ahead int) stepRange {
	first, n := 0, pl.nkt
	if pl.ks != nil {
		for first < pl.nkt && pl.depth(first) != pl.t.bk {
			first++
		}
		n = 0
		for first+n < pl.nkt && pl.depth(first+n) == pl.t.bk {
			n++
		}
	}
	return stepRange{first + 1, first + n - ahead}
}

// grid returns the kernel launch: one CTA per output tile, row-major over
// the tiles.
func (pl *gpuGEMMPlan) grid() isa.Grid {
	g := isa.Grid{Name: pl.name(), CTAs: pl.nrb * pl.ncb, CTA: func(i int) isa.Stream { return pl.cta(i, nil) },
		Resources: isa.Resources{SharedBytes: pl.smem, Registers: pl.ctaRegisters(), Warps: pl.real.warps, AccBytes: pl.accBytes(),
			AccRegisters: pl.accRegisters()}}
	g.Steps = pl.cta // (batched k-steps repeat between their ramps: repeating)
	if pl.t.pair {
		g.Cluster = 2
	}
	g.Class = pl.class
	if pl.nrb > ctaGroup { // the CTA order repeats group after group (tile)
		g.Period = ctaGroup * pl.ncb
	}
	return g
}

// ctaRegisters is a CTA's 32-bit registers, whole per thread.
func (pl *gpuGEMMPlan) ctaRegisters() int64 {
	threads := pl.tg.threads(pl.real.warps)
	return (pl.regs + threads - 1) / threads * threads
}

// residentPerCore is how many CTAs of the kernel an SM (CU) holds at
// once: the fewest its block slots, shared memory, registers, warps and
// (tcgen05) tensor memory allow.
func (pl *gpuGEMMPlan) residentPerCore() int64 {
	tg := pl.tg
	n := min(int64(tg.maxBlocks), tg.shared/max(pl.smem, 1), tg.registers/4/max(pl.ctaRegisters(), 1), int64(tg.maxWarps/pl.real.warps))
	if acc := pl.accBytes(); acc > 0 {
		n = min(n, tg.tmem/acc)
	}
	return n
}

// groupedGrid is one launch holding the blocks of every grid of gs, in
// order (their resources and cluster size must agree). Blocks of
// different GEMMs differ in depth: each grid's classes are its own.
func groupedGrid(name string, gs []isa.Grid) isa.Grid {
	g := gs[0]
	g.Name = name
	starts := make([]int, len(gs)+1)
	for x, h := range gs {
		starts[x+1] = starts[x] + h.CTAs
	}
	g.CTAs = starts[len(gs)]
	which := func(i int) (int, int) {
		x := sort.SearchInts(starts[1:], i+1)
		return x, i - starts[x]
	}
	g.CTA = func(i int) isa.Stream {
		x, local := which(i)
		return gs[x].CTA(local)
	}
	g.Class = func(i int) int {
		x, local := which(i)
		return gs[x].Class(local)*len(gs) + x
	}
	g.Steps = func(i int, cur *isa.StepCursor) isa.Stream {
		x, local := which(i)
		return gs[x].Steps(local, cur)
	}
	for _, h := range gs {
		g.Period = max(g.Period, h.Period)
		if h.Class == nil {
			g.Class = nil // compared by their streams
		}
		if h.Steps == nil {
			g.Steps = nil
		}
	}
	return g
}

// class is CTA i's instruction shape (isa.Grid.Class): its tile's rows
// and columns (edge tiles are smaller) and its rank in a pair; every
// other difference between CTAs is an address.
func (pl *gpuGEMMPlan) class(i int) int {
	bi, bj := pl.tile(i)
	rank := 0
	if pl.t.pair {
		rank = i % 2
	}
	return (pl.rows(bi)<<24|pl.cols(bj))<<1 | rank
}

// accRegisters is how many of a CTA's registers hold its accumulators in
// a file of their own (CDNA1's AGPRs; one 32-bit register an accumulator,
// two for FP64, as tileResources counts them), 0 where they share the
// register file.
func (pl *gpuGEMMPlan) accRegisters() int64 {
	if pl.tg.accBuf != gpu.BufAcc || pl.tmem() || pl.t.sharedOps {
		return 0
	}
	n := int64(pl.t.bm*pl.t.bn) * int64(pl.sh.norm().accs()) // one 32-bit register an accumulator (tileResources)
	if pl.in == fp.FP64 {
		n *= 2
	}
	return n
}

// accBytes is the tensor memory a block allocates for its accumulators
// (tcgen05 kernels), 0 elsewhere.
func (pl *gpuGEMMPlan) accBytes() int64 {
	if !pl.tmem() {
		return 0
	}
	return pl.t.tmemBytes(pl.sh, pl.out)
}

// ctaGroup is the number of row blocks the CTA order walks down before
// moving to the next column block (the threadblock swizzle of CUTLASS and
// cuBLAS, Triton's GROUP_SIZE_M = 8): CTAs running at the same time then
// share A row panels and B column panels through the L2.
const ctaGroup = 8

// tile returns the output tile (bi, bj) of CTA i: groups of ctaGroup row
// blocks, column by column inside a group.
func (pl *gpuGEMMPlan) tile(i int) (bi, bj int) {
	per := ctaGroup * pl.ncb
	g, local := i/per, i%per
	rows := min(ctaGroup, pl.nrb-g*ctaGroup)
	return g*ctaGroup + local%rows, local / rows
}

// b2i is 1 for true, 0 for false.
func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// gmATile is the global address of row block bi's k-step kt in A piece x;
// gmBTile that of k-step kt of B piece x from column col.
func (pl *gpuGEMMPlan) gmATile(x, bi, kt int) int64 {
	return pl.gmAOf(x) + (int64(bi*pl.t.bm)*pl.lda+int64(pl.kOff(kt)))*pl.es
}

func (pl *gpuGEMMPlan) gmBTile(x, kt, col int) int64 {
	return pl.gmBOf(x) + (int64(pl.kOff(kt))*pl.ldb+int64(col))*pl.es
}

// ctaStream is the stream of CTA i: what body emits for its output tile
// (bi, bj), mm×nn (smaller at the matrix's edges).
// With cur (isa.Grid.Steps), each k-step of the main loop starts with a
// step marker (emitter.step).
func (pl *gpuGEMMPlan) ctaStream(i int, cur *isa.StepCursor, body func(e *emitter, bi, bj, mm, nn int)) isa.Stream {
	bi, bj := pl.tile(i)
	return func(yield func(isa.Instr) bool) {
		e := newEmitter(yield, pl.mach)
		e.cur = cur
		body(e, bi, bj, pl.rows(bi), pl.cols(bj))
	}
}

// cta returns the stream of CTA i (with cur: isa.Grid.Steps's).
func (pl *gpuGEMMPlan) cta(i int, cur *isa.StepCursor) isa.Stream {
	if pl.t.regStaged {
		return pl.ctaRegStaged(i, cur)
	}
	if pl.t.direct {
		return pl.ctaDirect(i, cur)
	}
	if pl.t.sharedOps {
		return pl.ctaSharedOps(i, cur)
	}
	return pl.ctaStream(i, cur, func(e *emitter, bi, bj, mm, nn int) {
		mma, t := pl.lane, pl.t
		fetch := func(kt int) {
			s := kt % t.stages
			a, b := pl.stage(s)
			kk := pl.depth(kt)
			e.waitFlag(gpu.LaneLoad, gpu.LaneCopy, s)
			es := pl.es
			e.together(func() {
				for x := 0; x < pl.sh.a; x++ {
					e.emit(gpu.CopyToShared(a+int64(x)*pl.aStage, pl.gmATile(x, bi, kt), mm, int64(kk)*es, pl.aLd, pl.lda*es))
				}
				for x := 0; x < pl.sh.b; x++ {
					e.emit(gpu.CopyToShared(b+int64(x)*pl.bStage, pl.gmBTile(x, kt, bj*t.bn), kk, int64(nn)*es, pl.bLd, pl.ldb*es))
				}
			})
			e.setFlag(gpu.LaneCopy, gpu.LaneLoad, s)
		}
		// Every stage and fragment buffer starts free.
		for s := 0; s < t.stages; s++ {
			e.setFlag(gpu.LaneLoad, gpu.LaneCopy, s)
		}
		for f := 0; f < 2; f++ {
			e.setFlag(mma, gpu.LaneLoad, f)
		}
		pl.outsideStart(e)
		for kt := 0; kt < min(t.stages-1, pl.nkt); kt++ {
			fetch(kt)
		}
		// Steps from 1 (the first initialises) whose fetch and depth are a
		// full k-step's repeat with the stages and the two fragment
		// buffers.
		repeat := pl.repeating(t.stages)
		for kt := 0; kt < pl.nkt && e.ok(); kt++ {
			kt = e.step(kt, pl.nkt, t.stages*(1+t.stages%2), repeat) // period: lcm(stages, 2)
			if ahead := kt + t.stages - 1; ahead < pl.nkt {
				fetch(ahead)
			}
			s, f := kt%t.stages, kt%2
			a, b := pl.stage(s)
			kk := pl.depth(kt)
			e.waitFlag(gpu.LaneCopy, gpu.LaneLoad, s)
			e.waitFlag(mma, gpu.LaneLoad, f)
			e.together(func() {
				for x := 0; x < pl.sh.a; x++ {
					e.emit(gpu.LoadMatrix(pl.fragAOf(f, x), a+int64(x)*pl.aStage, mm, kk, pl.aLd, pl.in, false))
				}
				for x := 0; x < pl.sh.b; x++ {
					e.emit(gpu.LoadMatrix(pl.fragBOf(f, x), b+int64(x)*pl.bStage, kk, nn, pl.bLd, pl.in, false))
				}
			})
			e.setFlag(gpu.LaneLoad, gpu.LaneCopy, s)
			e.setFlag(gpu.LaneLoad, mma, f)
			e.waitFlag(gpu.LaneLoad, mma, f)
			pl.fragProducts(e, kt, mm, kk, nn, f)
			e.setFlag(mma, gpu.LaneLoad, f)
		}
		// Consume the free tokens, leaving every flag at zero (balanced,
		// as the DaVinci generators' drainTokens).
		for s := 0; s < t.stages; s++ {
			e.waitFlag(gpu.LaneLoad, gpu.LaneCopy, s)
		}
		for f := 0; f < 2; f++ {
			e.waitFlag(mma, gpu.LaneLoad, f)
		}
		pl.outsideEnd(e)
		pl.epilogue(e, bi, bj)
	})
}

// epilogue stores block (bi, bj)'s accumulators once the MMAs are done;
// accumulators in tensor memory are first read into registers
// (tcgen05.ld, on the ldsm lane).
func (pl *gpuGEMMPlan) epilogue(e *emitter, bi, bj int) {
	t := pl.t
	src := pl.tg.accBuf
	if pl.tmem() {
		bytes := int64(pl.sh.accs()) * dma.FractalBytes(t.bm, t.bn, pl.out) // every accumulator tile
		e.setFlag(pl.lane, gpu.LaneLoad, gpuFlagStore)
		e.waitFlag(pl.lane, gpu.LaneLoad, gpuFlagStore)
		e.emit(isa.Copy2D(gpu.LaneLoad, isa.Operand{Buf: gpu.BufRegs, Addr: pl.rfAcc}, isa.Operand{Buf: gpu.BufAcc, Addr: 0},
			1, bytes, bytes, bytes))
		e.setFlag(gpu.LaneLoad, gpu.LaneStore, gpuFlagStore)
		e.waitFlag(gpu.LaneLoad, gpu.LaneStore, gpuFlagStore)
		src = gpu.BufRegs
	} else {
		e.setFlag(pl.lane, gpu.LaneStore, gpuFlagStore)
		e.waitFlag(pl.lane, gpu.LaneStore, gpuFlagStore)
	}
	if pl.epi != nil {
		pl.epi(e, bi, bj, src)
		return
	}
	if pl.ops != nil {
		pl.emulatedEpilogue(e, bi, bj, src)
		return
	}
	cb := int64(pl.out.Bytes())
	st := gpu.StoreAccumulators(pl.gmC+(int64(bi*t.bm)*pl.ldc+int64(bj*t.bn))*cb, pl.rfAcc, pl.rows(bi), pl.cols(bj),
		pl.ldc*cb, pl.out, pl.out, fp.RNE, false)
	st.Src.Buf = src
	e.emit(st)
}

// tmem reports whether the accumulators live in tensor memory (tcgen05
// kernels reading shared memory).
func (pl *gpuGEMMPlan) tmem() bool { return pl.t.sharedOps && pl.tg.tmemAcc }

// ctaSharedOps returns the stream of CTA i of a kernel whose tensor
// instructions read A and B from shared memory (Hopper wgmma SS, Blackwell
// tcgen05 — CUTLASS's sm90/sm100 pipelines): the copy lane fills `stages`
// shared-memory buffers (TMA) stages−1 k-steps ahead; each k-step's MMA
// reads its stage directly, with no ldmatrix and no register fragments,
// and frees it (tensor → copy). Accumulators are in registers (wgmma) or
// tensor memory (tcgen05).
func (pl *gpuGEMMPlan) ctaSharedOps(i int, cur *isa.StepCursor) isa.Stream {
	return pl.ctaStream(i, cur, func(e *emitter, bi, bj, mm, nn int) {
		mma, t, es := pl.lane, pl.t, pl.es
		// A pair's CTAs (rank = i mod 2) each load their A rows and half
		// of B's columns (cols0 | the rest) and read both halves: a stage
		// is full for an MMA when both ranks' copies of it landed, free
		// for a copy when both ranks' MMAs read it (cluster flags).
		rank, ranks := 0, 1
		cols0, bCol, bCols := nn, 0, nn
		if t.pair {
			rank, ranks = i%2, 2
			cols0 = min(nn, t.bn/2)
			if rank == 1 {
				bCol, bCols = cols0, nn-cols0
			} else {
				bCols = cols0
			}
		}
		// full and free are the flags of stage s from rank `from` to rank
		// `to`: the same ids, told apart by their lanes (full: copy →
		// tensor, free: tensor → copy).
		full := func(s, from, to int) int {
			if t.pair {
				return pairFlag(s, t.stages, from, to)
			}
			return s
		}
		free := full
		fetch := func(kt int) {
			s := kt % t.stages
			a, b := pl.stage(s)
			kk := pl.depth(kt)
			for q := 0; q < ranks; q++ {
				e.waitFlag(mma, gpu.LaneCopy, free(s, q, rank))
			}
			e.together(func() {
				for x := 0; x < pl.sh.a; x++ {
					e.emit(gpu.CopyToShared(a+int64(x)*pl.aStage, pl.gmATile(x, bi, kt), mm, int64(kk)*es, pl.aLd, pl.lda*es))
				}
				for x := 0; x < pl.sh.b && bCols > 0; x++ {
					e.emit(gpu.CopyToShared(b+int64(x)*pl.bStage, pl.gmBTile(x, kt, bj*t.bn+bCol), kk, int64(bCols)*es, pl.bLd, pl.ldb*es))
				}
			})
			for q := 0; q < ranks; q++ {
				e.setFlag(gpu.LaneCopy, mma, full(s, rank, q))
			}
		}
		for s := 0; s < t.stages; s++ {
			for r := 0; r < ranks; r++ {
				e.setFlag(mma, gpu.LaneCopy, free(s, rank, r))
			}
		}
		pl.outsideStart(e)
		for kt := 0; kt < min(t.stages-1, pl.nkt); kt++ {
			fetch(kt)
		}
		acc := pl.tg.accBuf
		if pl.tmem() {
			acc = gpu.BufAcc
		}
		repeat := pl.repeating(t.stages)
		for kt := 0; kt < pl.nkt && e.ok(); kt++ {
			kt = e.step(kt, pl.nkt, t.stages, repeat)
			if ahead := kt + t.stages - 1; ahead < pl.nkt {
				fetch(ahead)
			}
			s := kt % t.stages
			a, b := pl.stage(s)
			for r := 0; r < ranks; r++ {
				e.waitFlag(gpu.LaneCopy, mma, full(s, r, rank))
			}
			opB := func(x int) (int64, int64, isa.Buffer) { return b + int64(x)*pl.bStage, pl.bLd, gpu.BufShared }
			if t.pair {
				opB = func(x int) (int64, int64, isa.Buffer) {
					return gpu.PairOperand(b+int64(x)*pl.bStage, cols0), pl.bLd, gpu.BufShared
				}
			}
			pl.products(e, kt, mm, pl.depth(kt), nn, func(x int) (int64, int64, isa.Buffer) { return a + int64(x)*pl.aStage, pl.aLd, gpu.BufShared },
				opB, acc)
			for r := 0; r < ranks; r++ {
				e.setFlag(mma, gpu.LaneCopy, free(s, rank, r))
			}
		}
		for s := 0; s < t.stages; s++ {
			for q := 0; q < ranks; q++ {
				e.waitFlag(mma, gpu.LaneCopy, free(s, q, rank))
			}
		}
		pl.outsideEnd(e)
		pl.epilogue(e, bi, bj)
	})
}

// ctaDirect returns the stream of block i of a kernel without staging
// (staging: none; WMMA's load_matrix_sync from global memory): every
// k-step the copy lane loads the A and B fragments (every piece) from
// global memory into the one fragment buffer, the matrix lane waits for
// them, multiplies, and frees the buffer for the next k-step's loads —
// no overlap of loading and computing within the block (other resident
// blocks overlap it). assumption: each warp's loads of the fragments it
// shares with other warps hit in L1; the block's tiles are read once.
func (pl *gpuGEMMPlan) ctaDirect(i int, cur *isa.StepCursor) isa.Stream {
	return pl.ctaStream(i, cur, func(e *emitter, bi, bj, mm, nn int) {
		mma, t, es := pl.lane, pl.t, pl.es
		e.setFlag(mma, gpu.LaneCopy, 0)
		pl.outsideStart(e)
		repeat := pl.repeating(1)
		for kt := 0; kt < pl.nkt && e.ok(); kt++ {
			kt = e.step(kt, pl.nkt, 1, repeat)
			kk := pl.depth(kt)
			e.waitFlag(mma, gpu.LaneCopy, 0)
			e.together(func() {
				for x := 0; x < pl.sh.a; x++ {
					e.emit(gpu.LoadFromGlobal(pl.fragAOf(0, x), pl.gmATile(x, bi, kt), mm, kk, pl.lda*es, pl.in))
				}
				for x := 0; x < pl.sh.b; x++ {
					e.emit(gpu.LoadFromGlobal(pl.fragBOf(0, x), pl.gmBTile(x, kt, bj*t.bn), kk, nn, pl.ldb*es, pl.in))
				}
			})
			e.setFlag(gpu.LaneCopy, mma, 0)
			e.waitFlag(gpu.LaneCopy, mma, 0)
			pl.fragProducts(e, kt, mm, kk, nn, 0)
			e.setFlag(mma, gpu.LaneCopy, 0)
		}
		e.waitFlag(mma, gpu.LaneCopy, 0) // leave the flag at zero
		pl.outsideEnd(e)
		pl.epilogue(e, bi, bj)
	})
}

// setFusedSplit makes the kernel split its FP32 tiles (scheme split:
// fused) into its staged pieces with ops's scheme: the k-step's vector
// operations, A's then B's, the pieces it stages into the staging
// registers, the others (made only to make the next) into rfQ.
func (pl *gpuGEMMPlan) setFusedSplit(ops *gpuOperands) {
	t := pl.t
	stA, stB := int64(t.bm)*int64(t.bk)*pl.es, int64(t.bk)*int64(t.bn)*pl.es
	for _, side := range []struct {
		pieces        []int
		x             int64 // the side's FP32 tile
		n             int
		stage, stride int64
	}{{ops.aPieces, pl.rfX, t.bm * t.bk, pl.rfStage, stA}, {ops.bPieces, pl.rfX + 4*int64(t.bm)*int64(t.bk), t.bk * t.bn, pl.rfStageB, stB}} {
		piece := func(i int) int64 {
			if x := slices.Index(side.pieces, i); x >= 0 {
				return side.stage + int64(x)*side.stride
			}
			return pl.rfQ
		}
		pl.fusedOps = append(pl.fusedOps, ops.split.splitInstrs(side.x, pl.rfT, piece, side.n, slices.Max(side.pieces))...)
	}
}

// ctaRegStaged returns the stream of block i of a register-staged kernel
// (Tensile's PrefetchGlobalRead with one LDS buffer): while the MMAs of
// k-step kt run, the copy lane loads k-step kt+1 into staging registers;
// once the fragments of kt have been read from the LDS, the store lane
// writes the staged tiles into it (ds_write). Flags: copy → store (the
// staging registers hold a k-step) and store → copy (free again), store
// → load (the LDS holds a k-step) and load → store (read, free again),
// load → matrix and matrix → load per fragment buffer, matrix → store
// before the epilogue.
func (pl *gpuGEMMPlan) ctaRegStaged(i int, cur *isa.StepCursor) isa.Stream {
	return pl.ctaStream(i, cur, func(e *emitter, bi, bj, mm, nn int) {
		mma, t, es := pl.lane, pl.t, pl.es
		ldsA, ldsB := pl.stage(0)
		stA, stB := int64(t.bm)*int64(t.bk)*es, int64(t.bk)*int64(t.bn)*es // staging registers of one piece
		// A fused split (scheme split: fused) fetches FP32 tiles, which
		// the vector units split into the staging registers (convert):
		// copy → vector (the FP32 tiles landed), vector → copy (free
		// again), vector → store (the pieces are made), store → vector
		// (stored, free again) replace copy ↔ store.
		fused := pl.ops != nil && pl.ops.split != nil
		fetch := func(kt int) {
			kk := pl.depth(kt)
			if fused {
				e.waitFlag(gpu.LaneVector, gpu.LaneCopy, 1)
				e.together(func() {
					k0 := int64(pl.kOff(kt))
					e.emit(gpu.CopyToRegisters(pl.rfX, pl.ops.gmA32+(int64(bi*t.bm)*pl.lda+k0)*4, mm, int64(kk)*4, int64(t.bk)*4, pl.lda*4))
					e.emit(gpu.CopyToRegisters(pl.rfX+4*int64(t.bm)*int64(t.bk), pl.ops.gmB32+(k0*pl.ldb+int64(bj*t.bn))*4, kk, int64(nn)*4, int64(t.bn)*4, pl.ldb*4))
				})
				e.setFlag(gpu.LaneCopy, gpu.LaneVector, 0)
				return
			}
			e.waitFlag(gpu.LaneStore, gpu.LaneCopy, 0)
			e.together(func() {
				for x := 0; x < pl.sh.a; x++ {
					e.emit(gpu.CopyToRegisters(pl.rfStage+int64(x)*stA, pl.gmATile(x, bi, kt), mm, int64(kk)*es, int64(t.bk)*es, pl.lda*es))
				}
				for x := 0; x < pl.sh.b; x++ {
					e.emit(gpu.CopyToRegisters(pl.rfStageB+int64(x)*stB, pl.gmBTile(x, kt, bj*t.bn), kk, int64(nn)*es, int64(t.bn)*es, pl.ldb*es))
				}
			})
			e.setFlag(gpu.LaneCopy, gpu.LaneStore, 0)
		}
		convert := func() {
			if !fused {
				return
			}
			e.waitFlag(gpu.LaneCopy, gpu.LaneVector, 0)
			e.waitFlag(gpu.LaneStore, gpu.LaneVector, 0)
			for _, in := range pl.fusedOps {
				e.emit(in)
			}
			e.setFlag(gpu.LaneVector, gpu.LaneCopy, 1)
			e.setFlag(gpu.LaneVector, gpu.LaneStore, 1)
		}
		write := func(kt int) {
			kk := pl.depth(kt)
			if fused {
				e.waitFlag(gpu.LaneVector, gpu.LaneStore, 1)
			} else {
				e.waitFlag(gpu.LaneCopy, gpu.LaneStore, 0)
			}
			e.waitFlag(gpu.LaneLoad, gpu.LaneStore, 0)
			e.together(func() {
				for x := 0; x < pl.sh.a; x++ {
					e.emit(gpu.StoreToShared(ldsA+int64(x)*pl.aStage, pl.rfStage+int64(x)*stA, mm, int64(kk)*es, int64(t.bk)*es, pl.aLd))
				}
				for x := 0; x < pl.sh.b; x++ {
					e.emit(gpu.StoreToShared(ldsB+int64(x)*pl.bStage, pl.rfStageB+int64(x)*stB, kk, int64(nn)*es, int64(t.bn)*es, pl.bLd))
				}
			})
			e.setFlag(gpu.LaneStore, gpu.LaneLoad, 0)
			if fused {
				e.setFlag(gpu.LaneStore, gpu.LaneVector, 0)
			} else {
				e.setFlag(gpu.LaneStore, gpu.LaneCopy, 0)
			}
		}
		// free tokens: the staging registers (and a fused split's FP32
		// tiles), the LDS, the fragment buffers.
		tokens := []token{{gpu.LaneStore, gpu.LaneCopy, 0}}
		if fused {
			tokens = []token{{gpu.LaneVector, gpu.LaneCopy, 1}, {gpu.LaneStore, gpu.LaneVector, 0}}
		}
		e.presetTokens(tokens)
		e.setFlag(gpu.LaneLoad, gpu.LaneStore, 0)
		for f := 0; f < 2; f++ {
			e.setFlag(mma, gpu.LaneLoad, f)
		}
		pl.outsideStart(e)
		fetch(0)
		convert()
		write(0)
		repeat := pl.repeating(2)
		for kt := 0; kt < pl.nkt && e.ok(); kt++ {
			kt = e.step(kt, pl.nkt, 2, repeat)
			if kt+1 < pl.nkt {
				fetch(kt + 1)
			}
			f := kt % 2
			kk := pl.depth(kt)
			e.waitFlag(gpu.LaneStore, gpu.LaneLoad, 0)
			e.waitFlag(mma, gpu.LaneLoad, f)
			e.together(func() {
				for x := 0; x < pl.sh.a; x++ {
					e.emit(gpu.LoadMatrix(pl.fragAOf(f, x), ldsA+int64(x)*pl.aStage, mm, kk, pl.aLd, pl.in, false))
				}
				for x := 0; x < pl.sh.b; x++ {
					e.emit(gpu.LoadMatrix(pl.fragBOf(f, x), ldsB+int64(x)*pl.bStage, kk, nn, pl.bLd, pl.in, false))
				}
			})
			e.setFlag(gpu.LaneLoad, gpu.LaneStore, 0)
			e.setFlag(gpu.LaneLoad, mma, f)
			e.waitFlag(gpu.LaneLoad, mma, f)
			pl.fragProducts(e, kt, mm, kk, nn, f)
			e.setFlag(mma, gpu.LaneLoad, f)
			if kt+1 < pl.nkt {
				convert()
				write(kt + 1)
			}
		}
		// Consume the free tokens, leaving every flag at zero.
		e.drainTokens(tokens)
		e.waitFlag(gpu.LaneLoad, gpu.LaneStore, 0)
		for f := 0; f < 2; f++ {
			e.waitFlag(mma, gpu.LaneLoad, f)
		}
		pl.outsideEnd(e)
		pl.epilogue(e, bi, bj)
	})
}

// chainKSteps returns how many k-steps of bk one MMAD call of model (input
// in) may take in goldenTile for an mm·nn tile: calls chained through C
// give the bits of one call over their concatenated k where every call
// but the last covers whole blocks (MMADF16: L, or the model's windows), a
// sequential chain always; up to ~2^22 products a call (a stop is heard
// between calls). Elsewhere 1: a call a k-step, as the kernel's MMAs.
// Why: goldenTile converted A, B and C to bit patterns and called MMAD
// every k-step (8 deep on the CUDA cores), a third of a100-sgemm 512³
// full's time once the MMADs were fast.
func chainKSteps(model cube.Model, in fp.Format, bk, tile int) int {
	par, err := model.Params(in)
	if err != nil || bk <= 0 {
		return 1
	}
	if model.Kind != cube.Sequential && bk%max(par.L, par.Window, 1) != 0 {
		return 1
	}
	return max(1, (1<<22)/max(1, tile*bk))
}

// goldenTile computes output tile (bi, bj) as the kernel does, one MMA per
// k-step in increasing k: FP16 operands on the machine's tensor-core
// numerics model (hgemm), or an FP32 FMA chain (sgemm); it gives up
// (errStopped) at a k-step once stop (if not nil) says true.
func (j *gpuGEMMJob) goldenTile(model cube.Model, r0, mm, c0, nn int, stop func() bool) ([]float32, error) {
	pl := j.pl
	p := &pl.p
	c := make([]float32, mm*nn)
	tc := model // the tensor cores' (FP32 on the CUDA cores: fma)
	fma, err := cube.Preset("fp32-rne")
	if err != nil {
		return nil, err
	}
	bk, nkt := pl.realKSteps()
	step := 1 // k-steps an MMAD call takes (FP32, TF32: chainKSteps)
	if pl.in == fp.FP32 || pl.in == fp.TF32 {
		m := fma
		if pl.in == fp.TF32 {
			m = tc
		}
		step = chainKSteps(m, pl.in, bk, mm*nn)
	}
	for kt := 0; kt < nkt; kt += step {
		if stop != nil && stop() {
			return nil, errStopped
		}
		k0 := kt * bk
		kk := min(step*bk, p.K-k0)
		if pl.in == fp.FP32 || pl.in == fp.TF32 {
			a := make([]uint32, mm*kk)
			for r := 0; r < mm; r++ {
				for x := 0; x < kk; x++ {
					a[r*kk+x] = math.Float32bits(j.a[(r0+r)*p.K+k0+x])
				}
			}
			b := make([]uint32, kk*nn)
			for r := 0; r < kk; r++ {
				for x := 0; x < nn; x++ {
					b[r*nn+x] = math.Float32bits(j.b[(k0+r)*p.N+c0+x])
				}
			}
			cb := make([]uint32, len(c))
			for i, v := range c {
				cb[i] = math.Float32bits(v)
			}
			model, f := fma, fp.FP32
			if pl.in == fp.TF32 {
				model, f = tc, fp.TF32 // the tensor cores read the FP32 words as TF32
			}
			if err := model.MMAD(f, fp.FP32, mm, kk, nn, a, cube.RowMajor, b, cube.RowMajor, cb, cube.RowMajor, kt == 0); err != nil {
				return nil, err
			}
			for i, v := range cb {
				c[i] = math.Float32frombits(v)
			}
			continue
		}
		if pl.in == fp.E4M3 || pl.in == fp.E5M2 {
			a := make([]uint32, mm*kk)
			for r := 0; r < mm; r++ {
				for x, v := range j.a8u[(r0+r)*p.K+k0:][:kk] {
					a[r*kk+x] = uint32(v)
				}
			}
			b := make([]uint32, kk*nn)
			for r := 0; r < kk; r++ {
				for x, v := range j.b8u[(k0+r)*p.N+c0:][:nn] {
					b[r*nn+x] = uint32(v)
				}
			}
			cb := make([]uint32, len(c))
			for i, v := range c {
				cb[i] = math.Float32bits(v)
			}
			if err := tc.MMAD(pl.in, fp.FP32, mm, kk, nn, a, cube.RowMajor, b, cube.RowMajor, cb, cube.RowMajor, kt == 0); err != nil {
				return nil, err
			}
			for i, v := range cb {
				c[i] = math.Float32frombits(v)
			}
			continue
		}
		a := make([]uint16, mm*kk)
		for r := 0; r < mm; r++ {
			copy(a[r*kk:], j.a16[(r0+r)*p.K+k0:][:kk])
		}
		b := make([]uint16, kk*nn)
		for r := 0; r < kk; r++ {
			copy(b[r*nn:], j.b16[(k0+r)*p.N+c0:][:nn])
		}
		mmad := tc.MMADF16
		if pl.in == fp.BF16 {
			mmad = tc.MMADBF16
		}
		if err := mmad(mm, kk, nn, a, cube.RowMajor, b, cube.RowMajor, c, cube.RowMajor, kt == 0); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// toHalf rounds FP32 values to FP16 or BF16 (RNE), the kernel's inputs.
func toHalf(v []float32, f fp.Format) []uint16 {
	out := make([]uint16, len(v))
	for i, x := range v {
		out[i] = uint16(fp.FromFloat64(float64(x), f, fp.Options{Round: fp.RNE}))
	}
	return out
}

// toFP8 rounds FP32 values to E4M3 or E5M2 (RNE, saturating to the
// largest finite value as cvt.rn.satfinite does), the kernel's inputs.
func toFP8(v []float32, f fp.Format) []uint8 {
	out := make([]uint8, len(v))
	for i, x := range v {
		out[i] = uint8(fp.FromFloat64(float64(x), f, fp.Options{Round: fp.RNE, Saturate: true}))
	}
	return out
}

// gpuGEMMJob runs a GEMM on an nvidia-sm machine.
type gpuGEMMJob struct {
	runContext // Finish's FP64 reference of C (full) stops with the run
	file       string
	pl         *gpuGEMMPlan
	a, b       []float32 // FP32 inputs (nil with numerics off)
	// inputNotes are gemmInputs' notes on input files.
	inputNotes []string
	a16, b16   []uint16  // the kernel's FP16 or BF16 inputs
	a8u, b8u   []uint8   // its FP8 inputs (E4M3, E5M2)
	a8, b8     []int8    // igemm's INT8 inputs
	a64, b64   []float64 // dgemm's FP64 inputs
	outs       []Output
	side       *beside     // the sampled tiles' computation (startBeside)
	smp        *gpuSampled // its result
}

func buildGPUGEMM(f *File, m *machines.Machine, o Options, v gemmVariant) (Job, error) {
	if v.split {
		return nil, f.badKey("kind", "%s does not run on %s machines yet (hgemm, sgemm, igemm, tf32gemm and dgemm do)", f.Kind.Name, m.Kind)
	}
	in := fp.FP16
	switch {
	case v.native:
		in = fp.FP32 // sgemm: the CUDA cores
	case v.int8:
		in = fp.INT8 // igemm
	case v.tf32:
		in = fp.TF32 // tf32gemm: FP32 data, the tensor cores read TF32
	case v.fp64:
		in = fp.FP64 // dgemm
	}
	var p GEMMParams
	if err := f.Decode(&p, o); err != nil {
		return nil, err
	}
	o.applyGEMM(f, &p)
	j, err := buildGPUGEMMFrom(f, m, p, in, o.stop())
	if errors.Is(err, errStopped) {
		return nil, o.stoppedBuilding(f.Path, "drawing the inputs")
	}
	if err != nil {
		return nil, err
	}
	return j, nil
}

// davinciOnlyGEMMKeys are the GEMM keys that only DaVinci machines take
// (the cube's tiling and pipeline; on GPUs a kernel is a grid of blocks),
// in the order buildGPUGEMMFrom checks them; baselines too (the FP32
// kinds' hgemm and CPU SGEMM errors beside the cube's).
var davinciOnlyGEMMKeys = []string{"tiling.nfused", "buffering", "accumulation", "cores", "split_chunk", "split", "baselines"}

// gpuOnlyGEMMKeys are the GEMM keys that only GPU machines take (a CTA
// tile's pipeline, warps, staging and pairs, the units of the MMAs):
// GEMMParams.validate refuses them on DaVinci machines.
var gpuOnlyGEMMKeys = []string{"tiling.stages", "tiling.warps", "tiling.staging", "tiling.cta_group", "unit"}

// hgemmInputs are the formats hgemm's input key names on GPUs.
var hgemmInputs = map[string]fp.Format{"fp16": fp.FP16, "bf16": fp.BF16, "e4m3": fp.E4M3, "e5m2": fp.E5M2}

// buildGPUGEMMFrom builds a GPU GEMM job with inputs of format in from
// decoded parameters (kind emulated-gemm's native scheme reuses it), drawing the inputs (FP32,
// INT8 or FP64) asking stop (nil: never): errStopped once it says true.
func buildGPUGEMMFrom(f *File, m *machines.Machine, p GEMMParams, in fp.Format, stop func() bool) (*gpuGEMMJob, error) {
	if p.Input != "" {
		if in != fp.FP16 {
			return nil, f.badKey("input", "applies to hgemm (the kind fixes %s's inputs)", f.Kind.Name)
		}
		var ok bool
		if in, ok = hgemmInputs[p.Input]; !ok {
			return nil, f.badKey("input", "must be fp16, bf16, e4m3 or e5m2 (got %+q)", p.Input)
		}
	}
	if p.Baselines != nil {
		what := f.Kind.Name
		if what == "emulated-gemm" {
			what = "scheme native" // (the other schemes report a CPU SGEMM baseline)
		}
		return nil, f.badKey("baselines", "applies to davinci machines (the hgemm and CPU SGEMM errors beside the cube's); on %s (%s) %s reports its error against the FP64 reference only",
			m.Name, m.Kind, what)
	}
	for _, key := range davinciOnlyGEMMKeys {
		if key != "baselines" && f.keySet(&p, key) { // (baselines: above)
			return nil, f.badKey(key, "applies to davinci machines; on %s (%s) the kernel is a grid of blocks (tiling: bm, bn, bk, stages, warps)", m.Name, m.Kind)
		}
	}
	if err := p.gpuDefaults(f.Path); err != nil {
		return nil, err
	}
	// The run's estimate: its data's bytes per element the kind's
	// (gemmPerElem).
	if err := p.checkHostMemory(f.Path); err != nil {
		return nil, err
	}
	pl, err := newGPUGEMMPlan(f.Path, p, m, in, gpuShape{})
	if err != nil {
		return nil, err
	}
	if p.Numerics != NumericsOff && pl.lane == gpu.LaneMatrix && in != fp.INT8 && in != fp.FP64 {
		// INT8 and FP64 products are exact or IEEE on every machine; the
		// others need the preset's model of the matrix unit.
		if pl.tg.unmodelled(in) {
			return nil, f.badKey("numerics", "the numerics preset %q of machine %s has no model of %s %s instructions; use --numerics off (timing only)%s",
				m.NumericsPreset(), m.Name, strings.ToUpper(in.String()), pl.tg.matrix, map[bool]string{true: " or unit: vector", false: ""}[pl.tg.vectorRate[in] > 0])
		}
	}
	j := &gpuGEMMJob{file: f.Path, pl: pl}
	if p.Numerics != NumericsOff {
		if in == fp.FP64 {
			if p.Inputs.A != "" || p.Inputs.B != "" {
				return nil, f.badKey("inputs.a", "dgemm draws its FP64 inputs (inputs.seed, distribution); .npy inputs are not read yet")
			}
			// (4096²: seconds under load)
			if j.a64 = genFloat64Until(p.Inputs, 1, p.M, p.K, stop); j.a64 != nil {
				j.b64 = genFloat64Until(p.Inputs, 2, p.K, p.N, stop)
			}
			if j.b64 == nil {
				return nil, errStopped
			}
			return j, nil
		}
		if in == fp.INT8 {
			if p.Inputs.A != "" || p.Inputs.B != "" {
				return nil, f.badKey("inputs.a", "igemm draws its INT8 inputs (inputs.seed); .npy inputs are not read yet")
			}
			if j.a8 = genInt8(p.Inputs.Seed, 1, p.M*p.K, stop); j.a8 != nil {
				j.b8 = genInt8(p.Inputs.Seed, 2, p.K*p.N, stop)
			}
			if j.b8 == nil {
				return nil, errStopped
			}
			return j, nil
		}
		if j.a, j.b, j.inputNotes, err = gemmInputs(f, &p, stop); err != nil {
			return nil, err
		}
		if p.Numerics == NumericsFull { // written to GM (sampled: beside the simulation)
			j.kernelInputs()
		}
	}
	return j, nil
}

// kernelInputs rounds the FP32 inputs to the kernel's FP16, BF16 or FP8
// inputs (once).
func (j *gpuGEMMJob) kernelInputs() {
	switch in := j.pl.in; {
	case (in == fp.FP16 || in == fp.BF16) && j.a16 == nil:
		j.a16, j.b16 = toHalf(j.a, in), toHalf(j.b, in)
	case (in == fp.E4M3 || in == fp.E5M2) && j.a8u == nil:
		j.a8u, j.b8u = toFP8(j.a, in), toFP8(j.b, in)
	}
}

func (j *gpuGEMMJob) Program() isa.Program {
	return isa.Program{Name: j.pl.p.Kind, Generated: true, Grids: []isa.Grid{j.pl.grid()}}
}

func (j *gpuGEMMJob) Mode() arch.Mode { return modeFor(j.pl.p.Numerics) }

func (j *gpuGEMMJob) Prepare(chip *arch.Chip) error {
	if j.Mode() != arch.Functional {
		return nil
	}
	gm := chip.GM()
	if j.pl.in == fp.FP64 {
		if err := gm.Write(j.pl.gmA, float64Bytes(j.a64)); err != nil {
			return err
		}
		return gm.Write(j.pl.gmB, float64Bytes(j.b64))
	}
	if j.pl.in == fp.INT8 {
		if err := gm.Write(j.pl.gmA, int8Bytes(j.a8)); err != nil {
			return err
		}
		return gm.Write(j.pl.gmB, int8Bytes(j.b8))
	}
	if j.pl.in == fp.FP32 || j.pl.in == fp.TF32 {
		if err := gm.WriteFloat32s(j.pl.gmA, j.a); err != nil {
			return err
		}
		return gm.WriteFloat32s(j.pl.gmB, j.b)
	}
	if j.pl.in == fp.E4M3 || j.pl.in == fp.E5M2 {
		if err := gm.Write(j.pl.gmA, j.a8u); err != nil {
			return err
		}
		return gm.Write(j.pl.gmB, j.b8u)
	}
	if err := gm.WriteUint16s(j.pl.gmA, j.a16); err != nil {
		return err
	}
	return gm.WriteUint16s(j.pl.gmB, j.b16)
}

func (j *gpuGEMMJob) Outputs() []Output { return j.outs }

func (j *gpuGEMMJob) Finish(chip *arch.Chip, st *arch.Stats, rep *report.Report) error {
	rep.Notes = append(rep.Notes, j.inputNotes...)
	pl, p := j.pl, &j.pl.p
	flops := 2 * float64(p.M) * float64(p.N) * float64(p.K)
	tg := pl.tg
	peak, unit := tg.peak(pl.in, pl.lane)
	counted := map[fp.Format]string{fp.FP16: "fp16", fp.BF16: "bf16", fp.E4M3: "e4m3", fp.E5M2: "e5m2", fp.FP32: "fp32", fp.INT8: "int8 ops",
		fp.TF32: "fp32 via " + strings.ToLower(tg.tf32), fp.FP64: "fp64"}[pl.in]
	reportThroughput(rep, st, flops, peak, fmt.Sprintf("%s (2mnk; peak = %s peak at the machine's clock)", counted, unit))
	t := pl.real
	g := pl.grid()
	resident := pl.residentPerCore()
	rep.Program = map[string]any{
		"kind": p.Kind, "m": p.M, "k": p.K, "n": p.N,
		"tiling":   pl.tilingReport(),
		"ctas":     g.CTAs,
		"cta":      map[string]int64{"shared_bytes": g.Resources.SharedBytes, "registers": g.Resources.Registers, "resident_per_sm": resident},
		"waves":    float64(g.CTAs) / float64(resident*int64(chip.M.Cores)),
		"inputs":   p.Inputs,
		"numerics": p.Numerics,
	}
	if pl.in == fp.INT8 {
		return j.finishInt(chip, rep)
	}
	if pl.in == fp.FP64 {
		return j.finishFP64(chip, rep)
	}
	if pl.in != fp.FP32 && pl.in != fp.TF32 { // FP32 and TF32 (FP32's exponents) take the inputs as they are
		if !castRange(pl.in, fp.RNE).reportRange(rep, j.a, j.b, flushingUnits(chip.M, pl.tg.units), j.stop()) { // toHalf, toFP8
			return j.stoppedNumerics()
		}
	}
	switch p.Numerics {
	case NumericsFull:
		c, _, err := readFP32Result(chip, pl.gmC, p, j.a, j.b, rep, &j.outs, j.stop())
		if errors.Is(err, errStopped) {
			return j.stoppedNumerics()
		}
		if err != nil {
			return err
		}
		if p.Check {
			stop := j.stop() // (the golden model of every tile: as long as the reference)
			for bi := 0; bi < pl.nrb; bi++ {
				for bj := 0; bj < pl.ncb; bj++ {
					g, err := j.goldenTile(chip.Cube(), bi*t.bm, pl.rows(bi), bj*t.bn, pl.cols(bj), stop)
					if errors.Is(err, errStopped) {
						return j.stoppedNumerics()
					}
					if err != nil {
						return err
					}
					nn := pl.cols(bj)
					for i, v := range g {
						r, col := bi*t.bm+i/nn, bj*t.bn+i%nn
						if got := c[r*p.N+col]; math.Float32bits(got) != math.Float32bits(v) {
							return fmt.Errorf("%w: simulated C[%d][%d] = %g (%#08x) but the golden model gives %g (%#08x)",
								ErrCheckFailed, r, col, got, math.Float32bits(got), v, math.Float32bits(v))
						}
					}
				}
			}
			rep.Notes = append(rep.Notes, "check: simulated C equals the golden model bit for bit")
		}
	case NumericsSampled:
		var err error
		if j.side != nil {
			err = j.side.wait()
		} else {
			err = j.sampleTiles(chip.Cube(), nil)
		}
		if err != nil {
			return err
		}
		e := errReport(accuracy.Compare32(slices.Concat(j.smp.ref...), slices.Concat(j.smp.got...)), true)
		rep.Error = &e
		nb, _ := pl.sampleBlocks()
		rep.Notes = append(rep.Notes, fmt.Sprintf("numerics sampled: %d of %d output tiles (%d×%d) computed bit-accurately by the golden model", len(j.smp.got), nb, sampleBM, sampleBN))
	}
	return nil
}

// startBeside computes a sampled run's tiles beside the simulation
// (floating-point GEMMs; igemm's and dgemm's numerics are their own).
func (j *gpuGEMMJob) startBeside(model cube.Model, stop *atomic.Bool) {
	if in := j.pl.in; j.pl.p.Numerics == NumericsSampled && in != fp.INT8 && in != fp.FP64 && j.side == nil {
		j.side = goBeside(func() error { return j.sampleTiles(model, stop) })
	}
}

// sampleTiles computes SampleTiles random output tiles with the golden
// model and their FP64 reference, into j.smp.
func (j *gpuGEMMJob) sampleTiles(model cube.Model, stop *atomic.Bool) error {
	pl, p := j.pl, &j.pl.p
	j.kernelInputs()
	nb, block := pl.sampleBlocks()
	rng := NewRand(p.Inputs.Seed, 99)
	perm := rng.Perm(nb)
	n := min(p.SampleTiles, len(perm))
	s := &gpuSampled{got: make([][]float32, n), ref: make([][]float64, n)}
	var stopped func() bool
	if stop != nil {
		stopped = stop.Load
	}
	err := eachTile(n, stop, func(i int) error {
		r0, mm, c0, nn := block(perm[i])
		var err error
		if s.got[i], err = j.goldenTile(model, r0, mm, c0, nn, stopped); err != nil {
			return err
		}
		s.ref[i] = referenceTile(j.a, j.b, p.K, p.N, r0, mm, c0, nn)
		return nil
	})
	j.smp = s
	return err
}

// gpuSampled is what a sampled run computes of its tiles (by tile).
type gpuSampled struct {
	got [][]float32 // golden model
	ref [][]float64 // FP64 reference
}

// referenceTile is the FP64 reference of rows r0.. (m rows) of A and
// columns c0.. (n columns) of B: accuracy.ReferenceGEMM64 of the tile — the
// full run's reference (accuracy.ReferenceGEMM) there bit for bit, a zero
// A[i][k] skipped as there (0·Inf would be NaN).
func referenceTile(a, b []float32, k, ldb, r0, m, c0, n int) []float64 {
	bt := make([]float64, k*n)
	for q := 0; q < k; q++ {
		for jj, v := range b[q*ldb+c0:][:n] {
			bt[q*n+jj] = float64(v)
		}
	}
	return accuracy.ReferenceGEMM64(m, k, n, accuracy.Widen(a[r0*k:(r0+m)*k]), bt)
}

// genInt8 draws n INT8 values uniformly from [−128, 127] (seeded stream
// which), asking stop (nil: never) every stopwork.Every values: nil once
// it says true.
func genInt8(seed int64, which uint64, n int, stop func() bool) []int8 {
	rng := NewRand(seed, which<<32)
	out := make([]int8, n)
	for i := range out {
		if i%stopwork.Every == 0 && stop != nil && stop() { // (before the first value, then every stopwork.Every)
			return nil
		}
		out[i] = int8(rng.IntN(256) - 128)
	}
	return out
}

func int8Bytes(v []int8) []byte {
	out := make([]byte, len(v))
	for i, x := range v {
		out[i] = byte(x)
	}
	return out
}

// intTile is the exact product of rows r0.. (m rows) of A and columns c0..
// (n columns) of B in 64-bit integers.
func (j *gpuGEMMJob) intTile(r0, m, c0, n int) []int64 {
	p := &j.pl.p
	out := make([]int64, m*n)
	for i := 0; i < m; i++ {
		for x := 0; x < p.K; x++ {
			av := int64(j.a8[(r0+i)*p.K+x])
			row := j.b8[x*p.N+c0:][:n]
			for jj, bv := range row {
				out[i*n+jj] += av * int64(bv)
			}
		}
	}
	return out
}

// finishInt checks igemm's INT32 C against the exact product: the golden
// model is the product in 32-bit two's complement (the accumulators wrap),
// equal to the exact one while no sum leaves the INT32 range.
func (j *gpuGEMMJob) finishInt(chip *arch.Chip, rep *report.Report) error {
	pl, p := j.pl, &j.pl.p
	t := pl.t
	tiles := [][4]int{} // r0, mm, c0, nn
	switch p.Numerics {
	case NumericsOff:
		return nil
	case NumericsFull:
		for bi := 0; bi < pl.nrb; bi++ {
			for bj := 0; bj < pl.ncb; bj++ {
				tiles = append(tiles, [4]int{bi * t.bm, pl.rows(bi), bj * t.bn, pl.cols(bj)})
			}
		}
	case NumericsSampled:
		nb, block := pl.sampleBlocks()
		rng := NewRand(p.Inputs.Seed, 99)
		perm := rng.Perm(nb)
		for _, i := range perm[:min(p.SampleTiles, len(perm))] {
			r0, mm, c0, nn := block(i)
			tiles = append(tiles, [4]int{r0, mm, c0, nn})
		}
	}
	var c []int32
	if p.Numerics == NumericsFull {
		raw := make([]byte, 4*p.M*p.N)
		if err := readResult(chip.GM(), pl.gmC, raw); err != nil {
			return err
		}
		c = make([]int32, p.M*p.N)
		for i := range c {
			c[i] = int32(uint32(raw[4*i]) | uint32(raw[4*i+1])<<8 | uint32(raw[4*i+2])<<16 | uint32(raw[4*i+3])<<24)
		}
		j.outs = []Output{{Name: "C", Shape: []int{p.M, p.N}, I32: c}, {Name: "A", Shape: []int{p.M, p.K}, I8: j.a8},
			{Name: "B", Shape: []int{p.K, p.N}, I8: j.b8}}
	}
	var errs intGEMMErrors
	overflow := false
	// The exact tiles, a few at a time on every core.
	exacts := make([][]int64, len(tiles))
	w := runtime.GOMAXPROCS(0)
	for x, tl := range tiles {
		if x%w == 0 {
			chunk := tiles[x:min(x+w, len(tiles))]
			if err := eachTile(len(chunk), nil, func(i int) error {
				tl := chunk[i]
				exacts[x+i] = j.intTile(tl[0], tl[1], tl[2], tl[3])
				return nil
			}); err != nil {
				return err
			}
		}
		r0, c0, nn := tl[0], tl[2], tl[3]
		exact := exacts[x]
		exacts[x] = nil
		for i, v := range exact {
			if v != int64(int32(v)) {
				overflow = true
			}
			got := int32(v) // sampled: the golden model's (wrap-around)
			if c != nil {
				got = c[(r0+i/nn)*p.N+c0+i%nn]
			}
			if p.Check && got != int32(v) {
				return fmt.Errorf("%w: simulated C[%d][%d] = %d but the golden model (INT32 wrap-around) gives %d",
					ErrCheckFailed, r0+i/nn, c0+i%nn, got, int32(v))
			}
			errs.add(v, got)
		}
	}
	rep.Error = errs.report(p.Numerics == NumericsSampled)
	if p.Check && c != nil {
		rep.Notes = append(rep.Notes, "check: simulated C equals the golden model (exact INT32) bit for bit")
	}
	if c == nil {
		rep.Notes = append(rep.Notes, fmt.Sprintf("numerics sampled: %d output tiles computed by the golden model (INT32 sums, wrapping as the hardware's accumulators do) and compared with the exact sums; the simulation ran timing only", len(tiles)))
	}
	if overflow {
		rep.Notes = append(rep.Notes, "igemm: some sums leave the INT32 range and wrap around, as the hardware's accumulators do")
	}
	return nil
}

// genFloat64 draws a rows×cols FP64 matrix (row r from its own stream, as
// genMatrix) from the distribution's interval.
func genFloat64(in Inputs, which uint64, rows, cols int) []float64 {
	return genFloat64Until(in, which, rows, cols, nil)
}

func float64Bytes(v []float64) []byte {
	out := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(out[8*i:], math.Float64bits(x))
	}
	return out
}

// finishFP64 reads dgemm's C and compares it with the FP64 reference and,
// with check, with the golden model: every output an FMA chain in
// increasing k.
func (j *gpuGEMMJob) finishFP64(chip *arch.Chip, rep *report.Report) error {
	pl, p := j.pl, &j.pl.p
	if p.Numerics != NumericsFull {
		if p.Numerics == NumericsSampled {
			rep.Notes = append(rep.Notes, "dgemm: numerics sampled is not implemented; the run was timed only")
		}
		return nil
	}
	raw := make([]byte, 8*p.M*p.N)
	if err := readResult(chip.GM(), pl.gmC, raw); err != nil {
		return err
	}
	c := make([]float64, p.M*p.N)
	for i := range c {
		c[i] = math.Float64frombits(binary.LittleEndian.Uint64(raw[8*i:]))
	}
	// Against the exact product rounded once, as ozaki's FP64 C (an FP64
	// reference summed in FP64 errs as much as the C it measures: max_rel
	// read 41 % low); every output up to 2^24 products, a sample of
	// distinct outputs beyond (~60 ns a product: about a second; 2^27,
	// ozaki's, made a 512³ run 1.6 → 10.7 s).
	const budget = 1 << 24
	idx, got := sampleOutputs(c, p.M, p.N, p.K, p.Inputs.Seed, budget)
	// Both the reference and the check hear the run's context (4096³: a
	// second or more each, deaf to an interrupt before).
	stop := j.stop()
	ref, _, ok := exactGEMM64Until(j.a64, j.b64, p.M, p.K, p.N, idx, false, stop) // (dgemm's error is normwise: no |A||B|)
	if !ok {
		return j.stoppedNumerics()
	}
	e := errReport(accuracy.Compare64(ref, got), idx != nil)
	e.Reference = "exact (a long accumulator, rounded once to fp64)"
	rep.Error = &e
	if idx != nil {
		rep.Notes = append(rep.Notes, sampleOutputsNote(len(idx), p.M*p.N, budget))
	}
	j.outs = []Output{{Name: "C", Shape: []int{p.M, p.N}, F64: c}, {Name: "A", Shape: []int{p.M, p.K}, F64: j.a64},
		{Name: "B", Shape: []int{p.K, p.N}, F64: j.b64}}
	if p.Check {
		if err := j.checkFP64(c, stop); err != nil {
			return err
		}
		rep.Notes = append(rep.Notes, "check: simulated C equals the golden model (FP64 FMA chains) bit for bit")
	}
	return nil
}

// checkFP64 compares dgemm's C with the golden model, every output an FMA
// chain in increasing k, asking stop (nil: never) every stopwork.Every
// products: stoppedNumerics once it says true.
func (j *gpuGEMMJob) checkFP64(c []float64, stop func() bool) error {
	p := &j.pl.p
	st := stopwork.New(stop)
	row := make([]float64, p.N) // a row of C's chains, each in increasing k
	for i := 0; i < p.M; i++ {
		if st.StopBefore(p.N * p.K) {
			return j.stoppedNumerics()
		}
		clear(row)
		for x, av := range j.a64[i*p.K : (i+1)*p.K] {
			for jj, bv := range j.b64[x*p.N : (x+1)*p.N] {
				row[jj] = math.FMA(av, bv, row[jj])
			}
		}
		for jj, acc := range row {
			if got := c[i*p.N+jj]; math.Float64bits(got) != math.Float64bits(acc) {
				return fmt.Errorf("%w: simulated C[%d][%d] = %g (%#016x) but the golden model gives %g (%#016x)",
					ErrCheckFailed, i, jj, got, math.Float64bits(got), acc, math.Float64bits(acc))
			}
		}
	}
	return nil
}

// readFP32Result reads a GPU GEMM's FP32 C (m×n at addr in GM), sets the
// outputs (C, A, B) and the error against the FP64 reference, and returns C
// and that reference (an O(mnk) product: callers that measure more errors
// against it take it from here).
// stop (nil: never) is asked as the reference is computed: errStopped
// once it says true.
func readFP32Result(chip *arch.Chip, addr int64, p *GEMMParams, a, b []float32, rep *report.Report, outs *[]Output, stop func() bool) (c []float32, ref []float64, err error) {
	c = make([]float32, p.M*p.N)
	if err := readResultFloat32s(chip.GM(), addr, c); err != nil {
		return nil, nil, err
	}
	*outs = []Output{{Name: "C", Shape: []int{p.M, p.N}, F32: c}, {Name: "A", Shape: []int{p.M, p.K}, F32: a},
		{Name: "B", Shape: []int{p.K, p.N}, F32: b}}
	if ref = referenceGEMMUntil(p.M, p.K, p.N, a, b, stop); ref == nil {
		return nil, nil, errStopped
	}
	e := errReport(accuracy.Compare32(ref, c), false)
	rep.Error = &e
	return c, ref, nil
}

// kBatched reports whether the kernel ran batched k-steps (--k-batch).
func (j *gpuGEMMJob) kBatched() bool { return j.pl.batch > 1 }
