package machines

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/davinci-sim/davinci-sim/fp"
)

func init() {
	registerKind[NvidiaSMCore]("nvidia-sm", "NVIDIA streaming multiprocessors: lanes issue, copy (cp.async/TMA), ldsm, tensor (mma.sync/wgmma/tcgen05), fma, store; SMEM, RF, TMEM")
}

// NvidiaArchs lists the NVIDIA architectures a core.arch may name, oldest
// first; a feature available from one architecture on is available on every
// later one, except the Hopper-only wgmma.
var NvidiaArchs = []string{"volta", "turing", "ampere", "ada", "hopper", "blackwell"}

// Tensor-core instruction families (core.tensor.instruction).
const (
	// NvidiaMMASync is the warp-level mma.sync/wmma family (Volta on): one
	// warp issues it on its own sub-core's tensor core.
	NvidiaMMASync = "mma.sync"
	// NvidiaWGMMA is Hopper's warp-group wgmma.mma_async: four warps (one per
	// sub-core) issue it together, B (and optionally A) read from shared
	// memory, spread over the SM's tensor cores.
	NvidiaWGMMA = "wgmma"
	// NvidiaTCGen05 is Blackwell's (sm_100) CTA-level tcgen05.mma: issued by
	// one thread for the CTA, operands from shared memory, accumulators in
	// tensor memory (TMEM).
	NvidiaTCGen05 = "tcgen05"
)

// Global→shared copy mechanisms (core.copy).
const (
	// NvidiaCopyLDGSTS is a load into registers followed by a shared store
	// (Volta, Turing: no asynchronous copy).
	NvidiaCopyLDGSTS = "ldg-sts"
	// NvidiaCopyCPAsync is Ampere's per-thread asynchronous cp.async.
	NvidiaCopyCPAsync = "cp.async"
	// NvidiaCopyTMA is the Tensor Memory Accelerator's bulk tensor copy
	// (cp.async.bulk.tensor, Hopper on).
	NvidiaCopyTMA = "tma"
)

// Lanes of an SM, as indices of Geometry.Lanes (report order).
const (
	SMLaneIssue  = iota // warp schedulers issuing instructions (one per sub-core)
	SMLaneCopy          // global→shared/register copies: LDG(+STS), cp.async, TMA
	SMLaneLdsm          // shared→register loads (ldmatrix, lds) and TMEM→register loads (tcgen05.ld)
	SMLaneTensor        // the tensor cores (mma.sync, wgmma, tcgen05.mma)
	SMLaneFMA           // the CUDA cores (FP32/FP64 FMA)
	SMLaneStore         // register→shared/global/TMEM stores (sts, stmatrix, stg, tcgen05.st)
	NumSMLanes
)

// Buffers of an SM, as indices of Geometry.Buffers. SMBufTMEM exists only
// on cores with tensor memory (core.tmem > 0).
const (
	SMBufGM   = iota // global memory (HBM/GDDR), shared by the chip
	SMBufSMEM        // shared memory (per SM: core.smem)
	SMBufRF          // register file (per SM: core.registers)
	SMBufTMEM        // tensor memory (Blackwell tcgen05: core.tmem)
)

// NvidiaSMCore is the core: section of an nvidia-sm machine: one streaming
// multiprocessor (SM), described at the level that decides GEMM-class
// throughput (GPU-FACTS §6): matrix instructions at their issue granularity
// and per-SM rate, the asynchronous global→shared copies and shared→register
// loads that feed them, and the resources (shared memory, registers, warps,
// CTAs) that decide how many CTAs an SM holds. Rates are per SM per clock of
// Clock; latencies are in cycles of Clock.
type NvidiaSMCore struct {
	// Clock is the sustained SM clock under tensor load (the clock behind
	// the published tensor peak where nothing better is known).
	Clock Frequency `mapstructure:"clock"`
	// Arch is the architecture, one of NvidiaArchs. It decides which
	// instruction families, copy mechanisms and input types are allowed.
	Arch string `mapstructure:"arch"`
	// Numerics is the tensor core's accumulation model, a preset name of
	// package cube (e.g. a100).
	Numerics string `mapstructure:"numerics"`
	// SubCores is the number of SM sub-partitions (SMSPs), each with its own
	// warp scheduler and tensor core; a warp runs on one of them, so a
	// warp-level mma.sync gets 1/SubCores of the SM's tensor rate.
	SubCores int `mapstructure:"sub_cores"`
	// MaxWarps and MaxCTAs are the resident warps and CTAs (thread blocks)
	// an SM holds at most.
	MaxWarps int `mapstructure:"max_warps"`
	MaxCTAs  int `mapstructure:"max_ctas"`
	// Registers is the register file of one SM in bytes (4 bytes per 32-bit
	// register).
	Registers Size `mapstructure:"registers"`
	// MaxRegistersPerThread is the most 32-bit registers one thread may use.
	MaxRegistersPerThread int `mapstructure:"max_registers_per_thread"`
	// SMEM is the largest shared-memory carve-out of one SM; SMEMPerCTA the
	// most one CTA may allocate (opt-in maximum).
	SMEM       Size `mapstructure:"smem"`
	SMEMPerCTA Size `mapstructure:"smem_per_cta"`
	// SMEMBanks and SMEMBankBytes describe shared-memory banking: an access
	// of a warp takes one cycle per distinct address per bank.
	SMEMBanks     int `mapstructure:"smem_banks"`
	SMEMBankBytes int `mapstructure:"smem_bank_bytes"`
	// TMEM is the tensor memory of one SM (Blackwell tcgen05 accumulators);
	// 0 on every core whose tensor instruction is not tcgen05, and on a
	// tcgen05 core at least one accumulator of its largest shape
	// (tmemNeed: m128n256 takes 128 × 256 × 4 B = 128 KiB).
	TMEM Size `mapstructure:"tmem"`
	// LaunchNS is the cost of launching one kernel, in ns.
	LaunchNS float64 `mapstructure:"launch_ns"`
	// Copy is how global→shared copies are issued: one of ldg-sts,
	// cp.async, tma (NvidiaCopyLDGSTS …).
	Copy      string          `mapstructure:"copy"`
	Tensor    NvidiaTensor    `mapstructure:"tensor"`
	CUDACores NvidiaCUDACores `mapstructure:"cuda_cores"`
	Paths     NvidiaPaths     `mapstructure:"paths"`
}

// NvidiaTensor describes the SM's tensor cores. A matrix instruction of
// shape m×n×k occupies them for 2·m·n·k / rate cycles, where rate is
// FlopsPerCycle of its input type × the efficiency of its family — the
// whole SM's rate for wgmma and tcgen05, 1/SubCores of it for mma.sync (one
// warp, one sub-core) — and its result is ready LatencyCycles after issue.
// Instruction names the family used for FP16, BF16, TF32, FP8 and INT8;
// FP64 always runs as a warp-level mma.sync (DMMA), the only family with an
// f64 form.
type NvidiaTensor struct {
	// Instruction is the native matrix instruction family: mma.sync, wgmma
	// (Hopper only) or tcgen05 (Blackwell sm_100 only).
	Instruction string `mapstructure:"instruction"`
	// FlopsPerCycle is the dense rate per SM per clock for each input type
	// (INT8 in operations; a multiply and an add count as two); 0 means the
	// tensor cores do not take that type.
	FlopsPerCycle TensorTypes[float64] `mapstructure:"flops_per_cycle"`
	// LatencyCycles is, per input type, the cycles from issuing one
	// instruction of Shapes to its result (0 for unsupported types).
	LatencyCycles TensorTypes[int] `mapstructure:"latency_cycles"`
	// Shapes is, per input type, the instruction shape "mMnNkK" the rates
	// and latencies refer to ("none" for unsupported types). For wgmma and
	// tcgen05 N is the largest the instruction allows; a kernel may use a
	// smaller N (multiples of 8).
	Shapes TensorTypes[MMAShape] `mapstructure:"shapes"`
	// Efficiency is the fraction of FlopsPerCycle the native instruction
	// sustains where a measurement shows a loss (1 otherwise).
	Efficiency float64 `mapstructure:"efficiency"`
	// MMASyncEfficiency is the fraction of FlopsPerCycle a warp-level
	// mma.sync of the FP16…INT8 types sustains. It equals Efficiency when
	// Instruction is mma.sync; elsewhere it is the measured loss of the
	// older family (Hopper: 0.63–0.65), or 0 when not measured: then
	// mma.sync kernels of those types are not modelled on this machine.
	MMASyncEfficiency float64 `mapstructure:"mma_sync_efficiency"`
	// SustainedClock is, per input type (keys as FlopsPerCycle's), the SM
	// clock the chip sustains while its tensor cores run that type, where
	// the board's power limit holds it below core.clock (GPU-FACTS §2.2:
	// random data drives an H800 below its clock at 350 W; §6 item 4: use
	// the sustained clock under tensor load). Optional: a type without an
	// entry runs at core.clock, and a file without the key is timed as
	// before it existed. Matrix instructions of a type with an entry run at
	// its clock: in cycles of core.clock, their rate is scaled by
	// sustained / clock and their latency by clock / sustained. Only the
	// tensor cores slow down (the unit that bounds the GEMMs this is for;
	// copies and CUDA cores keep core.clock), and the published peaks
	// (Peaks) stay at core.clock.
	SustainedClock map[string]Frequency `mapstructure:"sustained_clock"`
}

// TensorClockFactor returns, for matrix instructions of input format f,
// tensor.sustained_clock / clock: 1 for a type without an entry (and for
// formats the tensor cores have no entry for).
func (c *NvidiaSMCore) TensorClockFactor(f fp.Format) float64 {
	t, ok := TensorTypes[bool]{}.Of(f)
	if !ok || c.Clock <= 0 {
		return 1
	}
	for k, v := range c.Tensor.SustainedClock {
		if strings.EqualFold(k, t.Key) {
			return float64(v) / float64(c.Clock)
		}
	}
	return 1
}

// TensorTypes holds one value per tensor-core input type (keys fp16, bf16,
// tf32, fp8, int8, fp64).
type TensorTypes[T any] struct {
	FP16 T `mapstructure:"fp16"`
	BF16 T `mapstructure:"bf16"`
	TF32 T `mapstructure:"tf32"`
	FP8  T `mapstructure:"fp8"` // E4M3 and E5M2
	INT8 T `mapstructure:"int8"`
	FP64 T `mapstructure:"fp64"`
}

// TensorType is one entry of a TensorTypes: the input type's name as in
// Peaks (FP16), its file key (fp16) and its value.
type TensorType[T any] struct {
	Name, Key string
	Value     T
}

// All lists the entries in file order.
func (t TensorTypes[T]) All() []TensorType[T] {
	return []TensorType[T]{
		{"FP16", "fp16", t.FP16}, {"BF16", "bf16", t.BF16}, {"TF32", "tf32", t.TF32},
		{"FP8", "fp8", t.FP8}, {"INT8", "int8", t.INT8}, {"FP64", "fp64", t.FP64},
	}
}

// Of returns the entry for input format f (FP8 serves E4M3 and E5M2), and
// false for a format the tensor cores have no entry for (FP32, INT32).
func (t TensorTypes[T]) Of(f fp.Format) (TensorType[T], bool) {
	var i int
	switch f {
	case fp.FP16:
		i = 0
	case fp.BF16:
		i = 1
	case fp.TF32:
		i = 2
	case fp.E4M3, fp.E5M2:
		i = 3
	case fp.INT8:
		i = 4
	case fp.FP64:
		i = 5
	default:
		return TensorType[T]{}, false
	}
	return t.All()[i], true
}

// MMAShape is a matrix instruction shape written "m16n8k16" (M×N output
// tile, K reduction depth), or "none" for an input type without one.
type MMAShape string

// NoShape is the shape of an unsupported input type.
const NoShape MMAShape = "none"

// maxShapeDim bounds each dimension of an MMAShape.
const maxShapeDim = 1024

// Dims returns M, N and K (all 0 for "none"), or an error when the text is
// not of the form mMnNkK with dimensions in 1..1024.
func (s MMAShape) Dims() (m, n, k int, err error) {
	if s == NoShape {
		return 0, 0, 0, nil
	}
	bad := fmt.Errorf("want a shape such as m16n8k16 (or none), got %q", string(s))
	rest := string(s)
	var dims [3]int
	for i, letter := range []byte("mnk") {
		if len(rest) == 0 || rest[0] != letter {
			return 0, 0, 0, bad
		}
		rest = rest[1:]
		j := 0
		for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
			j++
		}
		v, e := strconv.Atoi(rest[:j])
		if e != nil || j > 4 || v < 1 || v > maxShapeDim || rest[0] == '0' {
			return 0, 0, 0, bad
		}
		dims[i] = v
		rest = rest[j:]
	}
	if rest != "" {
		return 0, 0, 0, bad
	}
	return dims[0], dims[1], dims[2], nil
}

// Flops returns 2·M·N·K, the operations of one instruction (0 for none or
// a malformed shape).
func (s MMAShape) Flops() float64 {
	m, n, k, err := s.Dims()
	if err != nil {
		return 0
	}
	return 2 * float64(m) * float64(n) * float64(k)
}

// NvidiaCUDACores describes the SM's CUDA cores (SIMT FMA units) per clock.
// These are not matrix peaks and do not appear in Peaks.
type NvidiaCUDACores struct {
	FP32FlopsPerCycle float64 `mapstructure:"fp32_flops_per_cycle"`
	// FP64FlopsPerCycle may be small (consumer parts) but not 0.
	FP64FlopsPerCycle float64 `mapstructure:"fp64_flops_per_cycle"`
}

// NvidiaPaths holds the SM's data paths, named source_destination. A copy
// of B bytes takes latency_cycles + B / bytes_per_cycle cycles when nothing
// else limits it; paths from or to GM also compete for the chip's L2 and
// GM bandwidth, and an L2 miss adds gm.latency_cycles. TMEM paths are 0
// (absent) on cores without TMEM.
type NvidiaPaths struct {
	GM_SMEM Path `mapstructure:"GM_SMEM"` // copy lane: LDG+STS, cp.async or TMA
	GM_RF   Path `mapstructure:"GM_RF"`   // copy lane: LDG
	SMEM_RF Path `mapstructure:"SMEM_RF"` // ldsm lane: ldmatrix, lds
	RF_SMEM Path `mapstructure:"RF_SMEM"` // store lane: sts, stmatrix
	RF_GM   Path `mapstructure:"RF_GM"`   // store lane: stg
	TMEM_RF Path `mapstructure:"TMEM_RF"` // ldsm lane: tcgen05.ld
	RF_TMEM Path `mapstructure:"RF_TMEM"` // store lane: tcgen05.st
}

// All lists the paths in file order with their keys.
func (p NvidiaPaths) All() []NamedPath {
	return []NamedPath{
		{"GM_SMEM", p.GM_SMEM}, {"GM_RF", p.GM_RF}, {"SMEM_RF", p.SMEM_RF}, {"RF_SMEM", p.RF_SMEM},
		{"RF_GM", p.RF_GM}, {"TMEM_RF", p.TMEM_RF}, {"RF_TMEM", p.RF_TMEM},
	}
}

// NvidiaSM returns the nvidia-sm core section, or nil when the machine is
// of another kind.
func (m *Machine) NvidiaSM() *NvidiaSMCore {
	c, _ := m.Core.(*NvidiaSMCore)
	return c
}

// ClockHz implements CoreSpec.
func (c *NvidiaSMCore) ClockHz() Frequency { return c.Clock }

// NumericsPreset returns the tensor cores' numerics preset (package cube).
func (c *NvidiaSMCore) NumericsPreset() string { return c.Numerics }

// Peaks implements CoreSpec: one SM's dense tensor-core peak per input type,
// clock × flops_per_cycle (FP16, BF16, TF32, FP8, INT8, FP64; types with
// rate 0 are left out). Efficiency factors and CUDA cores are not included.
func (c *NvidiaSMCore) Peaks() []Peak {
	var out []Peak
	for _, t := range c.Tensor.FlopsPerCycle.All() {
		if t.Value > 0 {
			out = append(out, Peak{t.Name, float64(c.Clock) * t.Value})
		}
	}
	return out
}

// VectorRepeatBytes implements CoreSpec: an SM's CUDA cores have no
// repeat-based vector unit.
func (c *NvidiaSMCore) VectorRepeatBytes() int { return 0 }

// Geometry implements CoreSpec. Lanes are indexed by the SMLane constants,
// buffers by the SMBuf constants (TMEM only when core.tmem > 0). The TMEM
// paths run on the ldsm (tcgen05.ld) and store (tcgen05.st) lanes, not on
// the tensor lane: Blackwell kernels drain one TMEM accumulator buffer in
// the epilogue while tcgen05.mma fills the other, which one lane would
// serialise.
func (c *NvidiaSMCore) Geometry() *Geometry {
	return gpuGeometry([]string{"issue", "copy", "ldsm", "tensor", "fma", "store"}, [4]string{"GM", "SMEM", "RF", "TMEM"},
		c.SMEM, c.Registers, c.TMEM, []gpuPath{
			{SMBufGM, SMBufSMEM, SMLaneCopy, c.Paths.GM_SMEM},
			{SMBufGM, SMBufRF, SMLaneCopy, c.Paths.GM_RF},
			{SMBufSMEM, SMBufRF, SMLaneLdsm, c.Paths.SMEM_RF},
			{SMBufRF, SMBufSMEM, SMLaneStore, c.Paths.RF_SMEM},
			{SMBufRF, SMBufGM, SMLaneStore, c.Paths.RF_GM},
			{SMBufTMEM, SMBufRF, SMLaneLdsm, c.Paths.TMEM_RF},
			{SMBufRF, SMBufTMEM, SMLaneStore, c.Paths.RF_TMEM},
		})
}

// archIndex returns the position of arch in NvidiaArchs (-1 if unknown).
func archIndex(arch string) int { return slices.Index(NvidiaArchs, arch) }

// AtLeast reports whether the core's architecture is arch or a later one.
func (c *NvidiaSMCore) AtLeast(arch string) bool {
	i := archIndex(c.Arch)
	return i >= 0 && i >= archIndex(arch)
}

// problems implements CoreSpec: the constraints of an nvidia-sm core
// section (keys relative to core.). Allowed to be 0: a tensor type's rate
// (with latency 0 and shape none: unsupported), tmem and the TMEM paths
// (cores without tcgen05), launch_ns, mma_sync_efficiency (not measured on
// a wgmma/tcgen05 core). Everything else must be positive.
func (c *NvidiaSMCore) problems() []problem {
	var ps []problem
	add := func(key, format string, args ...any) {
		ps = append(ps, problem{key, fmt.Sprintf(format, args...)})
	}
	if msg := CoreClockProblem(c.Clock); msg != "" {
		add("clock", "%s", msg)
	}
	archOK := archIndex(c.Arch) >= 0
	if !archOK {
		add("arch", "must be one of %s (got %q)", strings.Join(NvidiaArchs, ", "), c.Arch)
	}
	if msg := numericsProblem(c.Numerics, "a100"); msg != "" {
		add("numerics", "%s", msg)
	}
	if c.SubCores < 1 {
		add("sub_cores", "must be ≥ 1 (got %d)", c.SubCores)
	}
	switch {
	case c.MaxWarps < 1:
		add("max_warps", "must be ≥ 1 (got %d)", c.MaxWarps)
	case c.SubCores >= 1 && c.MaxWarps%c.SubCores != 0:
		add("max_warps", "must be a multiple of sub_cores = %d: warps are spread over the sub-cores (got %d)", c.SubCores, c.MaxWarps)
	}
	switch {
	case c.MaxCTAs < 1:
		add("max_ctas", "must be ≥ 1 (got %d)", c.MaxCTAs)
	case c.MaxWarps >= 1 && c.MaxCTAs > c.MaxWarps:
		add("max_ctas", "must be ≤ max_warps = %d: every CTA holds a warp (got %d)", c.MaxWarps, c.MaxCTAs)
	}
	// (At most 2^16: a warp's registers, 128 B each, then fit any int64 —
	// at 2^62 the product wrapped and the check passed.)
	regsOK := c.MaxRegistersPerThread >= 1 && c.MaxRegistersPerThread <= 1<<16
	if !regsOK {
		add("max_registers_per_thread", "must be in 1..65536 (got %d)", c.MaxRegistersPerThread)
	}
	switch warp := Size(c.MaxRegistersPerThread) * 4 * 32; {
	case c.Registers <= 0 || c.Registers%BufferAlign != 0:
		add("registers", "must be > 0 and a multiple of %d bytes (got %v)", BufferAlign, c.Registers)
	case regsOK && c.Registers < warp:
		add("registers", "must hold one warp at max_registers_per_thread (32 × %d × 4 B = %v) (got %v)", c.MaxRegistersPerThread, warp, c.Registers)
	}
	ps = append(ps, gpuSharedProblems(c.SMEM, c.SMEMPerCTA, c.SMEMBanks, c.SMEMBankBytes,
		[4]string{"smem", "smem_per_cta", "smem_banks", "smem_bank_bytes"})...)
	t := &c.Tensor
	tcgen05 := t.Instruction == NvidiaTCGen05
	tmemOK := true // tmem agrees with the instruction (else the TMEM paths are not checked)
	switch {
	case c.TMEM < 0 || c.TMEM%BufferAlign != 0:
		add("tmem", "must be ≥ 0 and a multiple of %d bytes (got %v)", BufferAlign, c.TMEM)
	case tcgen05 && c.TMEM == 0:
		add("tmem", "must be > 0 with tensor.instruction tcgen05: its accumulators live in TMEM (got 0)")
		tmemOK = false
	case !tcgen05 && c.TMEM != 0:
		add("tmem", "must be 0: only tcgen05 cores have tensor memory (tensor.instruction is %q) (got %v)", t.Instruction, c.TMEM)
		tmemOK = false
	}
	if msg := overheadProblem(c.LaunchNS); msg != "" {
		add("launch_ns", "%s", msg)
	}
	switch c.Copy {
	case NvidiaCopyLDGSTS:
	case NvidiaCopyCPAsync:
		if archOK && !c.AtLeast("ampere") {
			add("copy", "cp.async needs arch ampere or later (arch is %s; use ldg-sts)", c.Arch)
		}
	case NvidiaCopyTMA:
		if archOK && !c.AtLeast("hopper") {
			add("copy", "tma needs arch hopper or later (arch is %s)", c.Arch)
		}
	default:
		add("copy", "must be one of ldg-sts, cp.async, tma (got %q)", c.Copy)
	}

	// Tensor cores.
	switch t.Instruction {
	case NvidiaMMASync:
	case NvidiaWGMMA:
		if archOK && c.Arch != "hopper" {
			add("tensor.instruction", "wgmma exists on arch hopper only (arch is %s)", c.Arch)
		}
	case NvidiaTCGen05:
		if archOK && c.Arch != "blackwell" {
			add("tensor.instruction", "tcgen05 exists on arch blackwell only (arch is %s)", c.Arch)
		}
	default:
		add("tensor.instruction", "must be one of mma.sync, wgmma, tcgen05 (got %q)", t.Instruction)
	}
	// The first architecture whose tensor cores take each type (GPU-FACTS
	// §1.1: V100 FP16 only; T4 adds INT8; A100 BF16, TF32, FP64; FP8 from
	// Ada/Hopper).
	since := map[string]string{"fp16": "volta", "bf16": "ampere", "tf32": "ampere", "fp8": "ada", "int8": "turing", "fp64": "ampere"}
	rates, lats, shapes := t.FlopsPerCycle.All(), t.LatencyCycles.All(), t.Shapes.All()
	for i, r := range rates {
		key := r.Key
		lat, shape := lats[i].Value, shapes[i].Value
		if r.Value != 0 && rateProblem(r.Value) != "" {
			add("tensor.flops_per_cycle."+key, "must be 0 (unsupported) or in %d..%g (got %v)", MinPerCycle, MaxOpsPerCycle, r.Value)
			continue
		}
		m, n, _, err := shape.Dims()
		if err != nil {
			add("tensor.shapes."+key, "%v", err)
		}
		if r.Value == 0 {
			if key == "fp16" {
				add("tensor.flops_per_cycle.fp16", "must be > 0: every tensor core takes FP16 (got 0)")
				continue
			}
			if lat != 0 {
				add("tensor.latency_cycles."+key, "must be 0 when tensor.flops_per_cycle.%s is 0 (type unsupported) (got %d)", key, lat)
			}
			if err == nil && shape != NoShape {
				add("tensor.shapes."+key, "must be none when tensor.flops_per_cycle.%s is 0 (type unsupported) (got %q)", key, string(shape))
			}
			continue
		}
		if archOK && !c.AtLeast(since[key]) {
			add("tensor.flops_per_cycle."+key, "must be 0 on arch %s: %s tensor cores start with %s (got %v)", c.Arch, strings.ToUpper(key), since[key], r.Value)
		}
		if lat <= 0 {
			add("tensor.latency_cycles."+key, "must be > 0 when tensor.flops_per_cycle.%s > 0 (got %d)", key, lat)
		} else if msg := cyclesProblem(float64(lat)); msg != "" {
			add("tensor.latency_cycles."+key, "%s", msg)
		}
		if err != nil {
			continue
		}
		family := t.Instruction
		if key == "fp64" {
			family = NvidiaMMASync // DMMA: no wgmma/tcgen05 form
		}
		switch {
		case shape == NoShape:
			add("tensor.shapes."+key, "must be a shape such as m16n8k16 when tensor.flops_per_cycle.%s > 0 (got none)", key)
		case family == NvidiaMMASync && (m > 32 || n > 32):
			add("tensor.shapes."+key, "must be a warp-level shape (m, n ≤ 32) for mma.sync (got %q)", string(shape))
		case family == NvidiaWGMMA && (m != 64 || n%8 != 0 || n > 256):
			add("tensor.shapes."+key, "must be m64nNkK with N a multiple of 8 up to 256 for wgmma (got %q)", string(shape))
		case family == NvidiaTCGen05 && !tcgen05Shape(m, n):
			add("tensor.shapes."+key, "must have M 64, 128 or 256 and N a multiple of 8 up to 256 for tcgen05 (got %q)", string(shape))
		}
	}
	effOK := t.Efficiency >= MinEfficiency && t.Efficiency <= 1
	if !effOK {
		add("tensor.efficiency", "must be in [%g, 1] (got %v)", MinEfficiency, t.Efficiency)
	}
	switch e := t.MMASyncEfficiency; {
	case !(e == 0 || e >= MinEfficiency && e <= 1):
		add("tensor.mma_sync_efficiency", "must be 0 (not measured) or in [%g, 1] (got %v)", MinEfficiency, e)
	case effOK && t.Instruction == NvidiaMMASync && e != t.Efficiency:
		add("tensor.mma_sync_efficiency", "must equal tensor.efficiency = %v: mma.sync is the native instruction (got %v)", t.Efficiency, e)
	}
	if need := c.tmemNeed(); tmemOK && c.TMEM > 0 && c.TMEM%BufferAlign == 0 && c.TMEM < need.Bytes {
		add("tmem", "must hold one tcgen05 accumulator of the largest MMA shape, tensor.shapes.%s %s (%s%d × %d × 4 B = %v) (got %v)",
			need.Key, string(need.Shape), need.perSM(), need.Rows, need.N, need.Bytes, c.TMEM)
	}
	ps = append(ps, c.sustainedClockProblems()...)

	// CUDA cores.
	for _, v := range []struct {
		key string
		v   float64
	}{{"fp32_flops_per_cycle", c.CUDACores.FP32FlopsPerCycle}, {"fp64_flops_per_cycle", c.CUDACores.FP64FlopsPerCycle}} {
		if msg := rateProblem(v.v); msg != "" {
			add("cuda_cores."+v.key, "%s", msg)
		}
	}

	// Paths: the TMEM ones exist exactly when the core has TMEM (checked
	// once tmem itself is right).
	ps = append(ps, gpuPathProblems(c.Paths.All(), "TMEM", c.TMEM > 0, !tmemOK, "tmem")...)
	return ps
}

// tmemAccumulator is the tensor memory one tcgen05 accumulator of an MMA
// shape takes on one SM: Rows × N values of 4 bytes (FP32, or INT32 for
// INT8).
type tmemAccumulator struct {
	Key   string   // the input type's key of tensor.shapes (fp16 …)
	Shape MMAShape // its shape
	Rows  int      // the shape's rows one SM holds: M, 128 of M = 256
	N     int      // its columns
	Bytes Size     // the accumulator's tensor memory: Rows × N × 4 bytes
}

// perSM says, for a 2-CTA shape (M = 256, cta_group::2), that one SM
// holds 128 of its rows.
func (a tmemAccumulator) perSM() string {
	if m, _, _, err := a.Shape.Dims(); err == nil && m > a.Rows {
		return fmt.Sprintf("M = %d spans two SMs, %d rows each: ", m, a.Rows)
	}
	return ""
}

// tcgen05Shape reports whether an MMA of m×n outputs is a tcgen05 shape:
// M 64, 128 or 256 (two SMs), N a multiple of 8 up to 256.
func tcgen05Shape(m, n int) bool {
	return (m == 64 || m == 128 || m == 256) && n%8 == 0 && n >= 8 && n <= 256
}

// tmemNeed is the largest accumulator the core's tcgen05 shapes take in
// one SM's tensor memory (the zero value without tcgen05): the input
// types the tensor cores take (FP64 runs as DMMA, in registers) whose
// shape is a valid tcgen05 one. An M = 256 shape (cta_group::2) spans the
// TMEM lanes of two SMs, 128 rows each (TMEM has 128 lanes).
func (c *NvidiaSMCore) tmemNeed() tmemAccumulator {
	var best tmemAccumulator
	if c.Tensor.Instruction != NvidiaTCGen05 {
		return best
	}
	rates, shapes := c.Tensor.FlopsPerCycle.All(), c.Tensor.Shapes.All()
	for i, r := range rates {
		if r.Key == "fp64" || r.Value <= 0 {
			continue
		}
		shape := shapes[i].Value
		m, n, _, err := shape.Dims()
		if err != nil || !tcgen05Shape(m, n) {
			continue // refused as a shape
		}
		rows := min(m, 128)
		if b := Size(rows) * Size(n) * 4; b > best.Bytes {
			best = tmemAccumulator{Key: r.Key, Shape: shape, Rows: rows, N: n, Bytes: b}
		}
	}
	return best
}

// sustainedClockProblems checks tensor.sustained_clock: every key an
// input type the tensor cores take, every clock in (0, core.clock].
func (c *NvidiaSMCore) sustainedClockProblems() []problem {
	var ps []problem
	rates := c.Tensor.FlopsPerCycle.All()
	var known []string
	for _, r := range rates {
		known = append(known, r.Key)
	}
	for _, k := range slices.Sorted(maps.Keys(c.Tensor.SustainedClock)) {
		v, key := c.Tensor.SustainedClock[k], "tensor.sustained_clock."+k
		i := slices.IndexFunc(rates, func(r TensorType[float64]) bool { return strings.EqualFold(r.Key, k) })
		var msg string
		switch f := float64(v); {
		case i < 0:
			msg = fmt.Sprintf("unknown input type %q (known: %s)", k, strings.Join(known, ", "))
		case rates[i].Value == 0:
			msg = fmt.Sprintf("must be left out: tensor.flops_per_cycle.%s is 0 (type unsupported) (got %v)", rates[i].Key, v)
		case !(v >= MinClock) || math.IsInf(f, 0):
			msg = fmt.Sprintf("must be ≥ 1MHz: the clock the SM sustains under %s tensor load (got %v)", strings.ToUpper(rates[i].Key), v)
		case ClockProblem(c.Clock) == "" && f > float64(c.Clock): // a bad clock is its own key's problem
			msg = fmt.Sprintf("must be ≤ clock = %v: the power limit only lowers the clock (got %v)", c.Clock, v)
		default:
			continue
		}
		ps = append(ps, problem{key, msg})
	}
	return ps
}
