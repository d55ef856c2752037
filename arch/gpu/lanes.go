// Package gpu is the core model the GPU machine kinds share (nvidia-sm,
// amd-cu): an NVIDIA streaming multiprocessor or an AMD compute unit,
// modelled at the level that decides GEMM-class throughput (GPU-FACTS.md
// §6). The unit of work is a block-level instruction standing for a run of
// identical hardware instructions — a warp tile's mma.syncs or a wave's
// MFMAs over one k-tile, a block's cp.asyncs or buffer_loads of one
// pipeline stage, its ldmatrix or ds_read loads of one k-tile — timed from
// the unit's per-core rate and the first instruction's latency, exactly as
// DaVinci's m.mmad covers a whole block.
//
// Kernel launches are grids of blocks (CTAs, workgroups: isa.Grid) that
// the chip's block scheduler places on cores by occupancy (shared memory,
// registers, warps, blocks per core). Each resident block issues its
// stream in order into its own lanes (issue, copy = global→shared, load =
// shared→registers, matrix, vector, store), synchronised by flags as on
// DaVinci (cp.async groups, mbarriers, s_waitcnt and the buffer-free tokens
// of a multistage pipeline are all set/wait pairs between lanes). The
// blocks of a core share its matrix units, vector units and shared-memory
// bandwidth (max-min fair channels: two blocks issuing MMAs at once each
// get half the matrix throughput), and the chip's L2 and HBM through
// Chip.StartGM. The core's lanes in the report and traces merge its
// blocks' lanes: busy when any block keeps the unit busy, else the most
// telling stall.
//
// Functional mode keeps each resident block's shared memory and registers
// and computes MMAs through the machine's numerics preset (package cube)
// on fragments in the instruction's own k order, bit-exact to a golden
// model.
//
// The kinds differ in their figures (Params, filled by arch/nvidia and
// arch/amd from their machine files) and in the names of lanes and
// buffers, not in the lanes' roles: lane and buffer indices are shared.
package gpu

import "github.com/davinci-sim/davinci-sim/isa"

// The lanes of a GPU core, indices into its geometry (isa.Pipe values in
// its instructions). NVIDIA names them issue, copy, ldsm, tensor, fma,
// store; AMD issue, load, lds, mfma, valu, store.
const (
	LaneIssue  = 0 // the block's instruction issue (warp schedulers)
	LaneCopy   = 1 // global→shared copies (cp.async, TMA, buffer_load) and global loads
	LaneLoad   = 2 // shared→register loads (ldmatrix, ds_read)
	LaneMatrix = 3 // matrix-unit instructions (mma.sync, wgmma, tcgen05, MFMA)
	LaneVector = 4 // vector units: FP32/FP64 FMAs, element-wise epilogues (CUDA cores, VALU)
	LaneStore  = 5 // stores to global or shared memory
	numLanes   = 6
)

// The buffers a GPU core's instructions address (isa.Buffer values).
const (
	BufGM      isa.Buffer = 0 // global memory
	BufShared  isa.Buffer = 1 // the block's shared memory (SMEM, LDS)
	BufRegs    isa.Buffer = 2 // the block's registers (fragments, accumulators)
	BufAcc     isa.Buffer = 3 // accumulator storage (Blackwell TMEM, CDNA AccVGPRs)
	numBuffers            = 4
)

// coexecTag marks the vector-unit flows that stand for matrix-instruction
// co-execution delays: nobody waits for them.
const coexecTag = -1
