package programs

import (
	"fmt"
	"strings"

	"github.com/davinci-sim/davinci-sim/arch/gpu"
	"github.com/davinci-sim/davinci-sim/cube"
	"github.com/davinci-sim/davinci-sim/fp"
	"github.com/davinci-sim/davinci-sim/isa"
	"github.com/davinci-sim/davinci-sim/machines"
)

// gpuTarget is what the GPU program generators need to know of a machine of
// either GPU kind (nvidia-sm, amd-cu): the limits a block must respect, the
// matrix instruction per input type, the vector units, the kind's words and
// its library's default tilings. The generators write one kernel shape
// (global→shared copies, shared→register loads, matrix or vector runs,
// stores); the target decides sizes and names.
type gpuTarget struct {
	m        *machines.Machine
	clock    float64
	core     string // SM, CU
	block    string // CTA, workgroup
	warp     string // warp, wave
	matrix   string // "tensor", "MFMA"
	units    string // the matrix units: "tensor cores", "matrix cores"
	vector   string // "CUDA-core", "VALU"
	library  string // the library whose kernels the defaults follow
	warpSize int

	shared, sharedPerBlock int64  // bytes per core, per block
	sharedKey              string // machine key of sharedPerBlock
	regsKey, perThreadKey  string // machine keys of the register file and the per-thread limit
	warpsKey               string // what bounds the warps of a core
	tf32                   string // the name of the 19-bit matrix type: TF32, XF32 (AMD)
	// peakTile is the M and N of the matrix-peak benchmark's MMA runs:
	// enough independent accumulators per warp to hide dependent-MFMA wait
	// states (four 32×32 per wave on AMD).
	peakTile            int
	maxWarps, maxBlocks int
	registers           int64 // bytes of registers per core (VGPR + AGPR on CDNA1)
	maxRegsPerThread    int
	// accBuf holds the accumulators: registers, or CDNA1's AGPRs (accFile
	// bytes).
	accBuf  isa.Buffer
	accFile int64

	matrixK    [fp.NumFormats]int     // k of the matrix instruction per input (0: not taken)
	matrixDims [fp.NumFormats][3]int  // its M, N, K
	matrixKey  [fp.NumFormats]string  // the machine key that names it (core.tensor.shapes.fp16)
	matrixLat  [fp.NumFormats]int     // cycles from its issue to a dependent one's (file figures)
	warpLevel  bool                   // one warp issues a matrix instruction on its own sub-core
	sharedOps  bool                   // the matrix instructions read A and B from shared memory (wgmma SS, tcgen05)
	tmemAcc    bool                   // their accumulators live in tensor memory (tcgen05)
	tmem       int64                  // bytes of tensor memory per core (core.tmem; 0 without)
	loadBPC    float64                // shared→register bytes per cycle per core
	loadKey    string                 // its machine key
	matrixPeak [fp.NumFormats]string  // its Peaks name (FP16 …)
	vectorRate [fp.NumFormats]float64 // vector-unit FLOP per cycle per core
	launch     float64                // seconds per kernel launch
	tiles      func(in fp.Format, lane isa.Pipe) []gpuTile
	// warpsKeys and registersKeys are the machine keys maxWarps and
	// registers come from (refusals carry them: KeyError.From; regFile's
	// is regsKey).
	warpsKeys, registersKeys []string
}

// newGPUTarget returns the target of a GPU machine, or false for another
// kind.
func newGPUTarget(m *machines.Machine) (*gpuTarget, bool) {
	if sc := m.NvidiaSM(); sc != nil {
		t := &gpuTarget{m: m, clock: float64(sc.Clock), core: "SM", block: "CTA", warp: "warp", matrix: "tensor", units: "tensor cores", vector: "CUDA-core",
			library: "CUTLASS", warpSize: 32, shared: int64(sc.SMEM), sharedPerBlock: int64(sc.SMEMPerCTA), sharedKey: "core.smem_per_cta",
			maxWarps: sc.MaxWarps, maxBlocks: sc.MaxCTAs, registers: int64(sc.Registers), maxRegsPerThread: sc.MaxRegistersPerThread,
			accBuf: gpu.BufRegs, regsKey: "core.registers", perThreadKey: "core.max_registers_per_thread", warpsKey: "core.max_warps",
			tf32: "TF32", peakTile: 64, warpsKeys: []string{"core.max_warps"}, registersKeys: []string{"core.registers"}}
		t.tiles = t.nvidiaTiles
		t.launch = sc.LaunchNS * 1e-9
		for _, tt := range sc.Tensor.FlopsPerCycle.All() {
			if tt.Value <= 0 {
				continue
			}
			f := map[string]fp.Format{"FP16": fp.FP16, "BF16": fp.BF16, "TF32": fp.TF32, "FP8": fp.E4M3, "INT8": fp.INT8, "FP64": fp.FP64}[tt.Name]
			shape, _ := sc.Tensor.Shapes.Of(f)
			mm, n, k, _ := shape.Value.Dims()
			lat, _ := sc.Tensor.LatencyCycles.Of(f)
			fs := []fp.Format{f}
			if f == fp.E4M3 {
				fs = append(fs, fp.E5M2) // one FP8 entry serves both
			}
			for _, f := range fs {
				t.matrixK[f], t.matrixPeak[f] = k, tt.Name
				t.matrixDims[f], t.matrixLat[f] = [3]int{mm, n, k}, lat.Value
				t.matrixKey[f] = "core.tensor.shapes." + tt.Key
			}
		}
		t.warpLevel = sc.Tensor.Instruction == machines.NvidiaMMASync
		t.sharedOps = !t.warpLevel
		t.tmemAcc = sc.Tensor.Instruction == machines.NvidiaTCGen05 && sc.TMEM > 0
		t.tmem = int64(sc.TMEM)
		t.loadBPC, t.loadKey = sc.Paths.SMEM_RF.BytesPerCycle, "paths.SMEM_RF"
		t.vectorRate[fp.FP32] = sc.CUDACores.FP32FlopsPerCycle
		t.vectorRate[fp.FP64] = sc.CUDACores.FP64FlopsPerCycle
		return t, true
	}
	if cu := m.AMDCU(); cu != nil {
		t := &gpuTarget{m: m, clock: float64(cu.Clock), core: "CU", block: "workgroup", warp: "wave", matrix: "MFMA", units: "matrix cores", vector: "VALU",
			library: "rocBLAS/Tensile", warpSize: cu.WaveSize, shared: int64(cu.LDS), sharedPerBlock: int64(cu.LDSPerWorkgroup),
			sharedKey: "core.lds_per_workgroup", maxWarps: cu.SIMDs * cu.MaxWavesPerSIMD, maxBlocks: cu.MaxWorkgroups,
			registers: int64(cu.VGPRs + cu.AGPRs), maxRegsPerThread: cu.MaxVGPRsPerLane, accBuf: gpu.BufRegs, tiles: amdTiles,
			regsKey: "core.vgprs", perThreadKey: "core.max_vgprs_per_lane", warpsKey: "core.simds × core.max_waves_per_simd",
			tf32: "XF32", peakTile: 128, warpsKeys: []string{"core.simds", "core.max_waves_per_simd"}, registersKeys: []string{"core.vgprs", "core.agprs"}}
		if cu.AGPRs > 0 {
			t.accBuf, t.accFile = gpu.BufAcc, int64(cu.AGPRs)
		}
		for _, f := range []fp.Format{fp.FP16, fp.BF16, fp.TF32, fp.E4M3, fp.E5M2, fp.INT8, fp.FP32, fp.FP64} {
			if mf, ok := cu.Instruction(f); ok {
				key := map[fp.Format]string{fp.TF32: "xf32", fp.E4M3: "fp8", fp.E5M2: "fp8"}[f]
				if key == "" {
					key = f.String()
				}
				t.matrixKey[f] = "core.mfma.instructions." + key
				t.matrixDims[f], t.matrixLat[f] = [3]int{mf.M, mf.N, mf.K}, mf.Cycles+cu.MFMA.LatencyCycles
				t.matrixK[f], t.matrixPeak[f] = mf.K, map[fp.Format]string{fp.TF32: "XF32", fp.E4M3: "FP8", fp.E5M2: "FP8"}[f]
				if t.matrixPeak[f] == "" {
					t.matrixPeak[f] = strings.ToUpper(f.String())
				}
			}
		}
		t.warpLevel = true
		t.loadBPC, t.loadKey = cu.Paths.LDS_VGPR.BytesPerCycle, "paths.LDS_VGPR"
		t.vectorRate[fp.FP32] = cu.VALU.FP32FlopsPerCycle
		t.vectorRate[fp.FP64] = cu.VALU.FP64FlopsPerCycle
		t.launch = cu.LaunchNS * 1e-9
		return t, true
	}
	return nil, false
}

// machineKeys returns keys of the machine (relative to it: "core.tmem")
// as --set addresses them ("machine.core.tmem"): the keys a refusal's
// limit comes from (KeyError.From).
func machineKeys(keys ...string) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = "machine." + k
	}
	return out
}

// regFile is the bytes of the register file a block's registers (not its
// accumulators in a file of their own, CDNA1's AGPRs) are laid out in.
func (t *gpuTarget) regFile() int64 {
	if t.accBuf == gpu.BufAcc {
		return t.registers - t.accFile
	}
	return t.registers
}

// typeName is f's name on this machine, upper case (TF32 is XF32 on AMD).
func (t *gpuTarget) typeName(f fp.Format) string {
	if f == fp.TF32 {
		return t.tf32
	}
	return strings.ToUpper(f.String())
}

// hasMatrix reports whether the matrix units take inputs of format f.
func (t *gpuTarget) hasMatrix(f fp.Format) bool { return t.matrixK[f] > 0 }

// threads returns the threads of a block of warps warps.
func (t *gpuTarget) threads(warps int) int64 { return int64(warps) * int64(t.warpSize) }

// nvidiaTiles are CUTLASS's sm80 tiles per input type and unit (see the
// lists in gpu_gemm.go); on machines whose tensor instructions read shared
// memory (wgmma, tcgen05) its sm90/sm100 tiles: no register fragments, so
// four stages of 128×256 fit; on tcgen05 first its 2-SM (cta_group::2)
// 256×256 pair tile.
func (t *gpuTarget) nvidiaTiles(in fp.Format, lane isa.Pipe) []gpuTile {
	if t.sharedOps && lane == gpu.LaneMatrix && in != fp.FP64 {
		k := 64 // 128 bytes of 16-bit inputs per row of a k-step
		switch in {
		case fp.INT8, fp.E4M3, fp.E5M2:
			k = 128
		case fp.TF32:
			k = 32
		}
		tiles := []gpuTile{{128, 256, k, 4, 8, false, false, true, false}, {128, 128, k, 4, 4, false, false, true, false},
			{64, 128, k, 4, 4, false, false, true, false}, {64, 64, k, 3, 4, false, false, true, false}}
		if t.tmemAcc {
			// CUTLASS's sm100 2-SM kernels: a cta_group::2 pair computes a
			// 256×256 tile (128×256 per SM) where the tile order allows.
			tiles = append([]gpuTile{{128, 256, k, 4, 8, false, false, true, true}}, tiles...)
		}
		return tiles
	}
	switch {
	case in == fp.FP32 && lane == gpu.LaneVector:
		return gpuSIMTTiles
	case in == fp.INT8, in == fp.E4M3, in == fp.E5M2:
		return gpuIMMATiles
	case in == fp.FP64:
		return gpuDGEMMTiles
	case in == fp.TF32, in == fp.FP32:
		return gpuTF32Tiles
	}
	return gpuDefaultTiles
}

// amdTiles are rocBLAS/Tensile-style macro tiles for a CDNA CU with 64 KiB
// of LDS, the largest first: four waves (one per SIMD) per workgroup and
// Tensile's PrefetchGlobalRead — the next depth-U slice of A and B loaded
// into VGPRs while the MFMAs run, then written to the one LDS buffer
// (regStaged) — with a depth-U of 64 for 16-bit inputs (MT256x128x64,
// MT128x128x64 …), 128 for INT8, 32 for FP32 and FP64, as far as the LDS
// holds one slice with the padding our kernels use. Tensile tunes its
// macro tile per size; these are the shapes its MI200 logic files use most
// for large square problems. rocWMMA's 32×32×16 fragment (LE-GEMM) is two
// 32×32×8 MFMAs: any bk that is a multiple of 16 runs it. The VALU kernels
// (unit: vector) keep two LDS stages.
func amdTiles(in fp.Format, lane isa.Pipe) []gpuTile {
	switch {
	case lane == gpu.LaneVector:
		return []gpuTile{{128, 128, 8, 2, 4, false, false, false, false}, {64, 128, 8, 2, 4, false, false, false, false}, {64, 64, 8, 2, 4, false, false, false, false}}
	case in == fp.INT8, in == fp.E4M3, in == fp.E5M2:
		return []gpuTile{{256, 128, 128, 2, 4, true, false, false, false}, {128, 128, 128, 2, 4, true, false, false, false}, {64, 64, 64, 2, 4, true, false, false, false}}
	case in == fp.FP64:
		return []gpuTile{{128, 64, 32, 2, 4, true, false, false, false}, {64, 64, 32, 2, 4, true, false, false, false}, {32, 32, 16, 2, 4, true, false, false, false}}
	case in == fp.FP32, in == fp.TF32:
		return []gpuTile{{128, 128, 32, 2, 4, true, false, false, false}, {128, 64, 32, 2, 4, true, false, false, false}, {64, 64, 32, 2, 4, true, false, false, false}}
	}
	return []gpuTile{{256, 128, 64, 2, 4, true, false, false, false}, {128, 128, 64, 2, 4, true, false, false, false}, {128, 64, 64, 2, 4, true, false, false, false}, {64, 64, 32, 2, 4, true, false, false, false}}
}

// describe is "machine NAME (kind)" for messages.
func (t *gpuTarget) describe() string { return fmt.Sprintf("machine %s (%s)", t.m.Name, t.m.Kind) }

// defaultLane is the lane a GEMM of inputs in runs on when the program
// names no unit: the matrix units where they take in, else the vector
// units (CUTLASS's SIMT kernels, DGEMM without FP64 matrix units).
func (t *gpuTarget) defaultLane(in fp.Format) isa.Pipe {
	if !t.hasMatrix(in) && t.vectorRate[in] > 0 {
		return gpu.LaneVector
	}
	return gpu.LaneMatrix
}

// peak returns the dense peak (operations per second) of inputs in on
// lane, and the units' name as reports show it ("dense FP16 tensor",
// "CUDA-core FP32").
func (t *gpuTarget) peak(in fp.Format, lane isa.Pipe) (float64, string) {
	if lane == gpu.LaneMatrix {
		name := t.matrixPeak[in]
		p, _ := t.m.Peak(name)
		return p, "dense " + name + " " + t.matrix
	}
	return float64(t.m.Cores) * t.clock * t.vectorRate[in], t.vector + " " + strings.ToUpper(in.String())
}

// unmodelled reports whether the machine's numerics preset lacks a model
// of the matrix units' instructions on inputs in (functional runs of them
// are then refused; timing only runs).
func (t *gpuTarget) unmodelled(in fp.Format) bool {
	model, err := cube.Preset(t.m.NumericsPreset())
	return err == nil && model.Formats[in].L == 0
}

// nativeUnits names the units scheme native's FP32 GEMM runs on, on lane.
func (t *gpuTarget) nativeUnits(lane isa.Pipe) string {
	if lane == gpu.LaneMatrix {
		return "FP32 " + t.matrix
	}
	return t.vector + " FP32"
}
