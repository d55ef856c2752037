package machines

import (
	"fmt"
	"slices"
	"strings"

	"github.com/davinci-sim/davinci-sim/fp"
)

func init() {
	registerKind[AMDCUCore]("amd-cu", "AMD compute units with Matrix Cores: lanes issue, load (buffer_load), lds (ds_read), mfma, valu, store; LDS, VGPR, AGPR (CDNA1)")
}

// AMDArchs lists the AMD CDNA architectures a core.arch may name, oldest
// first.
var AMDArchs = []string{"cdna1", "cdna2", "cdna3"}

// MFMA is one matrix instruction of AMD's matrix instruction calculator:
// its output tile M×N, reduction depth K and number of blocks (independent
// products one instruction computes side by side), and the cycles it
// occupies one SIMD's matrix core.
type MFMA struct {
	Name         string
	Arch         string
	In           fp.Format // input type (TF32 stands for CDNA3's XF32)
	Out          fp.Format
	M, N, K      int
	Blocks       int
	Cycles       int
	CoexecCycles int // cycles the SIMD's VALU is kept from issuing after it (co-execution delay); = Cycles: no co-execution
}

// Flops returns 2·M·N·K·blocks, the operations of one instruction.
func (m MFMA) Flops() float64 { return 2 * float64(m.M*m.N*m.K*m.Blocks) }

// mfmaTable is GPU-FACTS §2.3: the MFMA instructions of each architecture
// with the issue cycles of AMD's matrix instruction calculator (MatCalc
// dict_insts, commit 2ef9189; LabNotes gives the same CDNA2 table) and its
// VALU co-execution delay (8 on CDNA1, 4 on CDNA2/3; FP64 forms do not
// co-execute). assumption: the CDNA3 FP32/FP64 and multi-block INT8 forms,
// whose delay the table leaves blank, do not co-execute either (as CDNA2's
// FP64).
var mfmaTable = []MFMA{
	{Name: "v_mfma_f32_32x32x8f16", Arch: "cdna1", In: fp.FP16, Out: fp.FP32, M: 32, N: 32, K: 8, Blocks: 1, Cycles: 64, CoexecCycles: 8},
	{Name: "v_mfma_f32_16x16x16f16", Arch: "cdna1", In: fp.FP16, Out: fp.FP32, M: 16, N: 16, K: 16, Blocks: 1, Cycles: 32, CoexecCycles: 8},
	{Name: "v_mfma_f32_32x32x4bf16", Arch: "cdna1", In: fp.BF16, Out: fp.FP32, M: 32, N: 32, K: 4, Blocks: 1, Cycles: 64, CoexecCycles: 8},
	{Name: "v_mfma_i32_32x32x8i8", Arch: "cdna1", In: fp.INT8, Out: fp.INT32, M: 32, N: 32, K: 8, Blocks: 1, Cycles: 64, CoexecCycles: 8},
	{Name: "v_mfma_f32_32x32x2f32", Arch: "cdna1", In: fp.FP32, Out: fp.FP32, M: 32, N: 32, K: 2, Blocks: 1, Cycles: 64, CoexecCycles: 8},

	{Name: "v_mfma_f32_32x32x8f16", Arch: "cdna2", In: fp.FP16, Out: fp.FP32, M: 32, N: 32, K: 8, Blocks: 1, Cycles: 64, CoexecCycles: 4},
	{Name: "v_mfma_f32_16x16x16f16", Arch: "cdna2", In: fp.FP16, Out: fp.FP32, M: 16, N: 16, K: 16, Blocks: 1, Cycles: 32, CoexecCycles: 4},
	{Name: "v_mfma_f32_32x32x8bf16_1k", Arch: "cdna2", In: fp.BF16, Out: fp.FP32, M: 32, N: 32, K: 8, Blocks: 1, Cycles: 64, CoexecCycles: 4},
	{Name: "v_mfma_i32_32x32x8i8", Arch: "cdna2", In: fp.INT8, Out: fp.INT32, M: 32, N: 32, K: 8, Blocks: 1, Cycles: 64, CoexecCycles: 4},
	{Name: "v_mfma_i32_16x16x16i8", Arch: "cdna2", In: fp.INT8, Out: fp.INT32, M: 16, N: 16, K: 16, Blocks: 1, Cycles: 32, CoexecCycles: 4},
	{Name: "v_mfma_f32_32x32x2f32", Arch: "cdna2", In: fp.FP32, Out: fp.FP32, M: 32, N: 32, K: 2, Blocks: 1, Cycles: 64, CoexecCycles: 4},
	{Name: "v_mfma_f32_16x16x4f32", Arch: "cdna2", In: fp.FP32, Out: fp.FP32, M: 16, N: 16, K: 4, Blocks: 1, Cycles: 32, CoexecCycles: 4},
	{Name: "v_mfma_f64_16x16x4f64", Arch: "cdna2", In: fp.FP64, Out: fp.FP64, M: 16, N: 16, K: 4, Blocks: 1, Cycles: 32, CoexecCycles: 32},
	{Name: "v_mfma_f64_4x4x4f64", Arch: "cdna2", In: fp.FP64, Out: fp.FP64, M: 4, N: 4, K: 4, Blocks: 4, Cycles: 16, CoexecCycles: 16},

	{Name: "v_mfma_f32_32x32x8_f16", Arch: "cdna3", In: fp.FP16, Out: fp.FP32, M: 32, N: 32, K: 8, Blocks: 1, Cycles: 32, CoexecCycles: 4},
	{Name: "v_mfma_f32_16x16x16_f16", Arch: "cdna3", In: fp.FP16, Out: fp.FP32, M: 16, N: 16, K: 16, Blocks: 1, Cycles: 16, CoexecCycles: 4},
	{Name: "v_mfma_f32_32x32x8_bf16", Arch: "cdna3", In: fp.BF16, Out: fp.FP32, M: 32, N: 32, K: 8, Blocks: 1, Cycles: 32, CoexecCycles: 4},
	{Name: "v_mfma_f32_16x16x16_bf16", Arch: "cdna3", In: fp.BF16, Out: fp.FP32, M: 16, N: 16, K: 16, Blocks: 1, Cycles: 16, CoexecCycles: 4},
	{Name: "v_mfma_i32_32x32x16_i8", Arch: "cdna3", In: fp.INT8, Out: fp.INT32, M: 32, N: 32, K: 16, Blocks: 1, Cycles: 32, CoexecCycles: 4},
	{Name: "v_mfma_i32_16x16x32_i8", Arch: "cdna3", In: fp.INT8, Out: fp.INT32, M: 16, N: 16, K: 32, Blocks: 1, Cycles: 16, CoexecCycles: 4},
	{Name: "v_mfma_i32_32x32x4_2b_i8", Arch: "cdna3", In: fp.INT8, Out: fp.INT32, M: 32, N: 32, K: 4, Blocks: 2, Cycles: 64, CoexecCycles: 64},
	{Name: "v_mfma_f32_32x32x16_fp8_fp8", Arch: "cdna3", In: fp.E4M3, Out: fp.FP32, M: 32, N: 32, K: 16, Blocks: 1, Cycles: 32, CoexecCycles: 4},
	{Name: "v_mfma_f32_32x32x4_xf32", Arch: "cdna3", In: fp.TF32, Out: fp.FP32, M: 32, N: 32, K: 4, Blocks: 1, Cycles: 32, CoexecCycles: 4},
	{Name: "v_mfma_f32_16x16x8_xf32", Arch: "cdna3", In: fp.TF32, Out: fp.FP32, M: 16, N: 16, K: 8, Blocks: 1, Cycles: 16, CoexecCycles: 4},
	{Name: "v_mfma_f32_32x32x2_f32", Arch: "cdna3", In: fp.FP32, Out: fp.FP32, M: 32, N: 32, K: 2, Blocks: 1, Cycles: 64, CoexecCycles: 64},
	{Name: "v_mfma_f32_16x16x4_f32", Arch: "cdna3", In: fp.FP32, Out: fp.FP32, M: 16, N: 16, K: 4, Blocks: 1, Cycles: 32, CoexecCycles: 32},
	{Name: "v_mfma_f64_16x16x4_f64", Arch: "cdna3", In: fp.FP64, Out: fp.FP64, M: 16, N: 16, K: 4, Blocks: 1, Cycles: 32, CoexecCycles: 32},
}

// LookupMFMA returns the MFMA instruction name of architecture arch.
func LookupMFMA(arch, name string) (MFMA, bool) {
	for _, m := range mfmaTable {
		if m.Arch == arch && m.Name == name {
			return m, true
		}
	}
	return MFMA{}, false
}

// mfmaNames lists arch's instructions taking input type in (all types when
// in is fp.NumFormats).
func mfmaNames(arch string, in fp.Format) []string {
	var out []string
	for _, m := range mfmaTable {
		if m.Arch == arch && (in == fp.NumFormats || m.In == in) {
			out = append(out, m.Name)
		}
	}
	return out
}

// MFMATypes names, per input type, the MFMA instruction the machine's
// kernels use ("none": the type is not taken). Keys fp16, bf16, xf32
// (CDNA3's 19-bit XF32, modelled as TF32), fp8 (E4M3 and E5M2), int8, fp32,
// fp64.
type MFMATypes struct {
	FP16 string `mapstructure:"fp16"`
	BF16 string `mapstructure:"bf16"`
	XF32 string `mapstructure:"xf32"`
	FP8  string `mapstructure:"fp8"`
	INT8 string `mapstructure:"int8"`
	FP32 string `mapstructure:"fp32"`
	FP64 string `mapstructure:"fp64"`
}

// mfmaType is one entry of MFMATypes.
type mfmaType struct {
	Name, Key string // peak name (FP16), file key (fp16)
	In        fp.Format
	Inst      string
}

func (t MFMATypes) all() []mfmaType {
	return []mfmaType{
		{"FP16", "fp16", fp.FP16, t.FP16}, {"BF16", "bf16", fp.BF16, t.BF16}, {"XF32", "xf32", fp.TF32, t.XF32},
		{"FP8", "fp8", fp.E4M3, t.FP8}, {"INT8", "int8", fp.INT8, t.INT8}, {"FP32", "fp32", fp.FP32, t.FP32},
		{"FP64", "fp64", fp.FP64, t.FP64},
	}
}

// AMDCUCore is the core: section of an amd-cu machine: one compute unit
// (CU) of a CDNA GPU — four SIMDs, each with its matrix core and VALU,
// wavefronts of 64 — at the level that decides GEMM-class throughput
// (GPU-FACTS §6). Rates are per CU per clock of Clock.
type AMDCUCore struct {
	// Clock is the sustained CU clock under matrix load.
	Clock Frequency `mapstructure:"clock"`
	// Arch is the architecture, one of AMDArchs; it decides which MFMA
	// instructions exist (GPU-FACTS §2.3).
	Arch string `mapstructure:"arch"`
	// Numerics is the matrix cores' accumulation model, a preset name of
	// package cube (mi100, mi210, mi300).
	Numerics string `mapstructure:"numerics"`
	// SIMDs is the number of SIMDs (each with one matrix core) per CU.
	SIMDs int `mapstructure:"simds"`
	// WaveSize is the threads of a wavefront.
	WaveSize int `mapstructure:"wave_size"`
	// MaxWavesPerSIMD and MaxWorkgroups bound the resident waves (per SIMD)
	// and workgroups (per CU).
	MaxWavesPerSIMD int `mapstructure:"max_waves_per_simd"`
	MaxWorkgroups   int `mapstructure:"max_workgroups"`
	// VGPRs is the CU's vector register file in bytes (all SIMDs; on
	// CDNA2/3 the unified file of architected and accumulation registers),
	// AGPRs CDNA1's separate accumulation registers (0 elsewhere).
	VGPRs Size `mapstructure:"vgprs"`
	AGPRs Size `mapstructure:"agprs"`
	// MaxVGPRsPerLane is the most 32-bit registers (VGPRs + AGPRs) one
	// work-item may use.
	MaxVGPRsPerLane int `mapstructure:"max_vgprs_per_lane"`
	// LDS is the local data share of one CU; LDSPerWorkgroup the most one
	// workgroup may allocate.
	LDS             Size `mapstructure:"lds"`
	LDSPerWorkgroup Size `mapstructure:"lds_per_workgroup"`
	// LDSBanks and LDSBankBytes describe LDS banking.
	LDSBanks     int `mapstructure:"lds_banks"`
	LDSBankBytes int `mapstructure:"lds_bank_bytes"`
	// LaunchNS is the cost of launching one kernel, in ns.
	LaunchNS float64  `mapstructure:"launch_ns"`
	MFMA     AMDMFMA  `mapstructure:"mfma"`
	VALU     AMDVALU  `mapstructure:"valu"`
	Paths    AMDPaths `mapstructure:"paths"`
}

// AMDMFMA describes the matrix cores: the instruction kernels use per
// input type (its shape and cycles come from the matrix instruction
// calculator's table, LookupMFMA), and the wait states between an MFMA
// and a dependent one.
type AMDMFMA struct {
	Instructions MFMATypes `mapstructure:"instructions"`
	// DependentWaitCycles is the cycles an MFMA reading the previous one's
	// result as its accumulator (SrcC) waits beyond that one's issue
	// cycles.
	DependentWaitCycles int `mapstructure:"dependent_wait_cycles"`
	// LatencyCycles is what a result read by a non-MFMA instruction (a
	// store) waits beyond the issue cycles.
	LatencyCycles int `mapstructure:"latency_cycles"`
}

// AMDVALU describes the vector ALUs of a CU per clock (FMA = 2 FLOP).
type AMDVALU struct {
	FP32FlopsPerCycle float64 `mapstructure:"fp32_flops_per_cycle"`
	FP64FlopsPerCycle float64 `mapstructure:"fp64_flops_per_cycle"`
	LatencyCycles     int     `mapstructure:"latency_cycles"`
}

// AMDPaths holds the CU's data paths, named source_destination (see
// NvidiaPaths). The AGPR path exists on CDNA1 only (agprs > 0).
type AMDPaths struct {
	GM_LDS   Path `mapstructure:"GM_LDS"`   // load lane: buffer_load … lds (direct to LDS), or buffer_load + ds_write
	GM_VGPR  Path `mapstructure:"GM_VGPR"`  // load lane: buffer_load / global_load
	LDS_VGPR Path `mapstructure:"LDS_VGPR"` // lds lane: ds_read
	VGPR_LDS Path `mapstructure:"VGPR_LDS"` // store lane: ds_write
	VGPR_GM  Path `mapstructure:"VGPR_GM"`  // store lane: buffer_store / global_store
	AGPR_GM  Path `mapstructure:"AGPR_GM"`  // store lane: v_accvgpr_read + store (CDNA1)
}

// All lists the paths in file order with their keys.
func (p AMDPaths) All() []NamedPath {
	return []NamedPath{
		{"GM_LDS", p.GM_LDS}, {"GM_VGPR", p.GM_VGPR}, {"LDS_VGPR", p.LDS_VGPR}, {"VGPR_LDS", p.VGPR_LDS},
		{"VGPR_GM", p.VGPR_GM}, {"AGPR_GM", p.AGPR_GM},
	}
}

// AMDCU returns the amd-cu core section, or nil when the machine is of
// another kind.
func (m *Machine) AMDCU() *AMDCUCore {
	c, _ := m.Core.(*AMDCUCore)
	return c
}

// ClockHz implements CoreSpec.
func (c *AMDCUCore) ClockHz() Frequency { return c.Clock }

// NumericsPreset returns the matrix cores' numerics preset (package cube).
func (c *AMDCUCore) NumericsPreset() string { return c.Numerics }

// Instruction returns the MFMA instruction the machine uses for input
// type in, and false when it takes none.
func (c *AMDCUCore) Instruction(in fp.Format) (MFMA, bool) {
	if in == fp.E5M2 {
		in = fp.E4M3
	}
	for _, t := range c.MFMA.Instructions.all() {
		if t.In == in {
			return LookupMFMA(c.Arch, t.Inst)
		}
	}
	return MFMA{}, false
}

// InstructionKey returns the key (relative to the machine:
// "core.mfma.instructions.xf32") that names the MFMA instruction the
// machine's kernels use for input type in, and false for a type no key
// names (INT32).
func InstructionKey(in fp.Format) (string, bool) {
	if in == fp.E5M2 {
		in = fp.E4M3
	}
	for _, t := range (MFMATypes{}).all() {
		if t.In == in {
			return instructionsKey + "." + t.Key, true
		}
	}
	return "", false
}

// instructionsKey is the section of an amd-cu machine naming its MFMA
// instructions, and archKey the key of its architecture, relative to the
// machine.
const instructionsKey, archKey = "core.mfma.instructions", "core.arch"

// InstructionArchKey returns "machine.core.arch" where key, as --set
// addresses it (any case), names MFMA instructions of an amd-cu machine
// ("machine.core.mfma.instructions.fp16", or a section holding them): an
// instruction's shape, cycles and input type are those of core.arch's
// table (LookupMFMA), so a constraint that comes from the instruction
// comes from the architecture too (KeyError.From in package programs).
// Else "".
func InstructionArchKey(key string) string {
	rest, ok := CutPrefixFold(key, "machine.")
	if !ok || !Covers(rest, instructionsKey) {
		return ""
	}
	return "machine." + archKey
}

// Peaks implements CoreSpec: one CU's matrix peak per input type, clock ×
// SIMDs × the instruction's flops / cycles.
func (c *AMDCUCore) Peaks() []Peak {
	var out []Peak
	for _, t := range c.MFMA.Instructions.all() {
		if m, ok := LookupMFMA(c.Arch, t.Inst); ok {
			out = append(out, Peak{t.Name, float64(c.Clock) * float64(c.SIMDs) * m.Flops() / float64(m.Cycles)})
		}
	}
	return out
}

// VectorRepeatBytes implements CoreSpec: a CU's VALU has no repeat-based
// vector unit.
func (c *AMDCUCore) VectorRepeatBytes() int { return 0 }

// Geometry implements CoreSpec. Lanes and buffers share the indices of the
// nvidia-sm kind's (the GPU core model's roles): issue, load, lds, mfma,
// valu, store / GM, LDS, VGPR (and AGPR on CDNA1).
func (c *AMDCUCore) Geometry() *Geometry {
	const gm, lds, vgpr, acc = SMBufGM, SMBufSMEM, SMBufRF, SMBufTMEM
	return gpuGeometry([]string{"issue", "load", "lds", "mfma", "valu", "store"}, [4]string{"GM", "LDS", "VGPR", "AGPR"},
		c.LDS, c.VGPRs, c.AGPRs, []gpuPath{
			{gm, lds, SMLaneCopy, c.Paths.GM_LDS},
			{gm, vgpr, SMLaneCopy, c.Paths.GM_VGPR},
			{lds, vgpr, SMLaneLdsm, c.Paths.LDS_VGPR},
			{vgpr, lds, SMLaneStore, c.Paths.VGPR_LDS},
			{vgpr, gm, SMLaneStore, c.Paths.VGPR_GM},
			{acc, gm, SMLaneStore, c.Paths.AGPR_GM},
		})
}

// problems implements CoreSpec: the constraints of an amd-cu core section
// (keys relative to core.).
func (c *AMDCUCore) problems() []problem {
	var ps []problem
	add := func(key, format string, args ...any) {
		ps = append(ps, problem{key, fmt.Sprintf(format, args...)})
	}
	if msg := CoreClockProblem(c.Clock); msg != "" {
		add("clock", "%s", msg)
	}
	archOK := slices.Contains(AMDArchs, c.Arch)
	if !archOK {
		add("arch", "must be one of %s (got %q)", strings.Join(AMDArchs, ", "), c.Arch)
	}
	if msg := numericsProblem(c.Numerics, "mi210"); msg != "" {
		add("numerics", "%s", msg)
	}
	if c.SIMDs < 1 || c.SIMDs > MaxSIMDs {
		add("simds", "must be in 1..%d (got %d)", MaxSIMDs, c.SIMDs)
	}
	if c.WaveSize != 32 && c.WaveSize != 64 {
		add("wave_size", "must be 32 or 64 (got %d)", c.WaveSize)
	}
	if c.MaxWavesPerSIMD < 1 {
		add("max_waves_per_simd", "must be ≥ 1 (got %d)", c.MaxWavesPerSIMD)
	}
	if c.MaxWorkgroups < 1 {
		add("max_workgroups", "must be ≥ 1 (got %d)", c.MaxWorkgroups)
	}
	if c.MaxVGPRsPerLane < 1 || c.MaxVGPRsPerLane > 1024 {
		add("max_vgprs_per_lane", "must be in 1..1024 (got %d)", c.MaxVGPRsPerLane)
	}
	switch wave := Size(c.MaxVGPRsPerLane) * 4 * Size(max(c.WaveSize, 1)); {
	case c.VGPRs <= 0 || c.VGPRs%BufferAlign != 0:
		add("vgprs", "must be > 0 and a multiple of %d bytes (got %v)", BufferAlign, c.VGPRs)
	case c.MaxVGPRsPerLane >= 1 && c.VGPRs+c.AGPRs < wave:
		add("vgprs", "must hold one wave at max_vgprs_per_lane (%d × %d × 4 B = %v) with agprs (got %v + %v)", c.WaveSize, c.MaxVGPRsPerLane, wave, c.VGPRs, c.AGPRs)
	}
	switch {
	case c.AGPRs < 0 || c.AGPRs%BufferAlign != 0:
		add("agprs", "must be ≥ 0 and a multiple of %d bytes (got %v)", BufferAlign, c.AGPRs)
	case archOK && c.Arch == "cdna1" && c.AGPRs == 0:
		add("agprs", "must be > 0 on cdna1: its MFMAs accumulate in the separate AccVGPR file (got 0)")
	case archOK && c.Arch != "cdna1" && c.AGPRs != 0:
		add("agprs", "must be 0 on %s: accumulation registers are part of the unified vgprs file (got %v)", c.Arch, c.AGPRs)
	}
	ps = append(ps, gpuSharedProblems(c.LDS, c.LDSPerWorkgroup, c.LDSBanks, c.LDSBankBytes,
		[4]string{"lds", "lds_per_workgroup", "lds_banks", "lds_bank_bytes"})...)
	if msg := overheadProblem(c.LaunchNS); msg != "" {
		add("launch_ns", "%s", msg)
	}
	// MFMA instructions: each named one must exist on the architecture and
	// take the type of its key.
	for _, t := range c.MFMA.Instructions.all() {
		key := "mfma.instructions." + t.Key
		if t.Inst == "none" || !archOK {
			if t.Key == "fp16" && t.Inst == "none" {
				add(key, "must name an instruction: every matrix core takes FP16 (%s)", strings.Join(mfmaNames(c.Arch, fp.FP16), ", "))
			}
			continue
		}
		m, ok := LookupMFMA(c.Arch, t.Inst)
		switch {
		case ok && m.In != t.In:
			add(key, "%s takes %s inputs, not %s", t.Inst, strings.ToUpper(m.In.String()), t.Name)
		case !ok:
			have := mfmaNames(c.Arch, t.In)
			if len(have) == 0 {
				add(key, "must be none: %s has no %s MFMA (got %q)", c.Arch, t.Name, t.Inst)
			} else {
				add(key, "%q is not a %s MFMA instruction of %s (it has: %s; or none)", t.Inst, t.Name, c.Arch, strings.Join(have, ", "))
			}
		}
	}
	for _, k := range []struct {
		key string
		v   int
	}{{"mfma.dependent_wait_cycles", c.MFMA.DependentWaitCycles}, {"mfma.latency_cycles", c.MFMA.LatencyCycles}} {
		if msg := cyclesProblem(float64(k.v)); msg != "" {
			add(k.key, "%s", msg)
		}
	}
	for _, v := range []struct {
		key string
		v   float64
	}{{"fp32_flops_per_cycle", c.VALU.FP32FlopsPerCycle}, {"fp64_flops_per_cycle", c.VALU.FP64FlopsPerCycle}} {
		if msg := rateProblem(v.v); msg != "" {
			add("valu."+v.key, "%s", msg)
		}
	}
	if l := c.VALU.LatencyCycles; l < 1 || l > MaxCycles {
		add("valu.latency_cycles", "must be in 1..%g cycles (got %d)", MaxCycles, l)
	}
	ps = append(ps, gpuPathProblems(c.Paths.All(), "AGPR", c.AGPRs > 0, false, "agprs")...)
	return ps
}

// MaxSIMDs bounds a CU's SIMDs (4 on CDNA): each is a matrix core and a
// VALU with lanes of its own in the core model.
const MaxSIMDs = 64
