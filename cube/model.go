// Package cube holds bit-accurate models of matrix-unit accumulation (the
// Ascend Cube and the NVIDIA/AMD matrix units it is compared with) and the
// tile kernel MMAD that applies a model to whole tiles.
//
// One parameterised kernel family covers every model: a Model names an
// accumulation Kind (block FMA, sequential FP32, CDNA2 pairwise, CDNA3
// late-c) plus, per input format, the block length L and the number F of
// fractional bits kept below the largest exponent. The named presets
// (Preset, PresetNames) are Model values; nothing about a particular GPU is
// special-cased in the arithmetic.
//
// Validation (davinci-sim validate numerics, shared/tc-vectors): every
// recorded set matches bit for bit (48 sets, 240000 dot products). FP8
// inputs with FP16 output on Hopper and Blackwell take their own datapath
// (Model.FP16Formats): each 32-product k window is summed as two chained
// blocks of 16 — k = 0,1,4,5,… then k = 2,3,6,7,…, the low and high halves
// of the registers that pack four FP8 values — each rounded to FP16, and c
// is added last (FormatParams.Window, Run, LateC). See FP8-FP16.md.
//
// Sources: FACTS.md §2–§3 — Fasi, Higham, Mikaitis, Pranesh, "Numerical
// behavior of NVIDIA tensor cores" (PeerJ CS 2021); Khattak & Mikaitis,
// "Accurate models of NVIDIA tensor cores" (arXiv 2512.07004) and their
// recorded vectors; Xie et al., "MMA-Sim" (arXiv 2511.10909) for AMD.
package cube

import (
	"fmt"
	"sort"
	"strings"

	"github.com/davinci-sim/davinci-sim/fp"
)

// Kind selects the accumulation algorithm of a Model.
type Kind uint8

// The accumulation families.
const (
	// BlockFMA: d = a·b + c over blocks of L products. Products are exact
	// and not renormalised (exponent e_a+e_b, significand in [0,4)); every
	// nonzero term, c included, is aligned to the largest exponent e_max and
	// truncated toward zero to F fractional bits below 2^e_max (no sticky
	// bit; F = Exact keeps every bit); the terms are summed exactly and the
	// sum is rounded once (RoundFP32 / RoundFP16). Blocks chain in
	// increasing k: the rounded block result is the next block's c. This is
	// the NVIDIA tensor-core model (FACTS.md §3), the MI100 model (F =
	// Exact, RNE) and the Ascend hypothesis.
	BlockFMA Kind = iota
	// Sequential: acc = c; for k in increasing order acc = round(acc + a_k·b_k)
	// with the product exact and one rounding per step (an FMA chain).
	Sequential
	// Pairwise: the CDNA2 (MI210/MI250) model. Products rounded to FP32
	// (RNE), summed by a pairwise tree of FP32 RNE additions over the block
	// ((p0+p1)+(p2+p3) for L = 4), then c + s rounded RNE. With
	// FlushSubnormals inputs, c, every intermediate and the output are
	// flushed to zero.
	Pairwise
	// TruncatedLateC: the CDNA3 (MI300) model. Over groups of L products, the
	// products are aligned to their largest exponent e_dot and truncated to F
	// fractional bits and summed exactly; c is added late, rounded toward −∞
	// to F fractional bits below 2^max(e_dot, e_c); the sum is rounded once
	// (RoundFP32). A product of magnitude ≥ 2^128 gives ±Inf.
	TruncatedLateC
)

var kindNames = [...]string{"block-fma", "sequential", "pairwise", "truncated-late-c"}

// String returns the kind's name.
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "kind?"
}

// Exact as a FormatParams.F value keeps every bit of every aligned term.
const Exact = -1

// FormatParams are a model's parameters for one input format.
type FormatParams struct {
	L       int // block length: products summed per rounding (1 for Sequential)
	F       int // fractional bits kept below 2^e_max, or Exact
	OutMant int // if > 0: every FP32 result (block results included) is rounded to this many fraction bits (Ada FP8: 13)
	// LateC (BlockFMA only): the products are summed without c (aligned,
	// truncated, rounded with the model's output rounding; with Window > 0
	// the window's blocks are chained from zero) and c is then added in a
	// separate addition rounded with CRound, once per block (Window = 0) or
	// per window (Blackwell FP8; FP8 with FP16 output).
	LateC  bool
	CRound fp.Rounding
	// Window and Run (BlockFMA only) deal the products to blocks the way a
	// unit fed from packed registers does. Window = 0: blocks of L
	// consecutive products in increasing k (Run unused). Window > 0 (a
	// multiple of L and of Run): the products are taken in windows of Window
	// consecutive k (one instruction's k); inside a window the runs of Run
	// consecutive products are dealt round-robin to the Window/L blocks (run
	// r to block r mod Window/L) and the blocks are chained in that order,
	// each rounded result being the next block's c. A last, partial window
	// is dealt the same way (as if padded with zeros). Example: L = 16,
	// Window = 32, Run = 2 sums k = 0,1,4,5,…,28,29 first, then
	// k = 2,3,6,7,…,30,31 — the low and high 16-bit halves of the 32-bit
	// registers that hold four FP8 values each.
	Window, Run int
}

// Model is one accumulation model. A preset is a Model value; callers may
// build their own (e.g. a machine file's hypothesis) with the same fields.
type Model struct {
	Name string // preset name ("a100", "ascend-910a", …)
	Doc  string // one line: what the model is and where its parameters come from
	Kind Kind
	// Formats holds the parameters per supported input format; Dot and MMAD
	// reject other formats.
	Formats map[fp.Format]FormatParams
	// FP16Formats, where it has an entry for an input format, replaces
	// Formats for FP16 output (a unit whose FP16-accumulating datapath
	// differs from its FP32 one: Hopper and Blackwell FP8). Formats still
	// decides which inputs are supported.
	FP16Formats map[fp.Format]FormatParams
	// RoundFP32 and RoundFP16 are the rounding of a block result for FP32 and
	// FP16 outputs (intermediate block results included).
	RoundFP32, RoundFP16 fp.Rounding
	// FlushSubnormals flushes subnormal inputs, c, intermediates and outputs
	// to zero (Pairwise only; CDNA2).
	FlushSubnormals bool
	// Hypothesis marks a model whose parameters are not established by
	// recorded hardware outputs (the Ascend presets).
	Hypothesis bool
}

// Params returns the model's parameters for input format f (FP32 output).
func (m Model) Params(f fp.Format) (FormatParams, error) {
	return m.ParamsFor(f, fp.FP32)
}

// ParamsFor returns the model's parameters for input format f and output
// format out: FP16Formats[f] for FP16 output where present, else Formats[f].
func (m Model) ParamsFor(f, out fp.Format) (FormatParams, error) {
	p, ok := m.Formats[f]
	if !ok {
		var names []string
		for g := range m.Formats {
			names = append(names, g.String())
		}
		sort.Strings(names)
		return p, fmt.Errorf("cube: model %q has no %v input (it supports %s)", m.Name, f, strings.Join(names, ", "))
	}
	if q, ok := m.FP16Formats[f]; ok && out == fp.FP16 {
		p = q
	}
	if p.L < 1 {
		return p, fmt.Errorf("cube: model %q: block length %d for %v must be ≥ 1", m.Name, p.L, f)
	}
	if p.F != Exact && (p.F < 0 || p.F > 50) {
		return p, fmt.Errorf("cube: model %q: F = %d for %v out of range (0..50 or Exact)", m.Name, p.F, f)
	}
	if p.OutMant < 0 || p.OutMant > 23 {
		return p, fmt.Errorf("cube: model %q: OutMant = %d for %v out of range (0..23)", m.Name, p.OutMant, f)
	}
	if p.L > 1024 {
		return p, fmt.Errorf("cube: model %q: block length %d for %v too large (≤ 1024)", m.Name, p.L, f)
	}
	if p.Window != 0 {
		if m.Kind != BlockFMA {
			return p, fmt.Errorf("cube: model %q: Window applies to the block-fma kind only", m.Name)
		}
		if p.Window < 0 || p.Window > 1024 || p.Run < 1 || p.Window%p.L != 0 || p.Window%p.Run != 0 || (p.Window/p.Run)%(p.Window/p.L) != 0 {
			return p, fmt.Errorf("cube: model %q: Window %d, Run %d for %v: want Window ≤ 1024 a multiple of L = %d and of Run ≥ 1, with Window/Run runs a multiple of the Window/L blocks",
				m.Name, p.Window, p.Run, f, p.L)
		}
	}
	return p, nil
}

// nv builds an NVIDIA block-FMA preset.
func nv(name, doc string, f map[fp.Format]FormatParams) Model {
	return Model{Name: name, Doc: doc, Kind: BlockFMA, Formats: f, RoundFP32: fp.RZ, RoundFP16: fp.RNE}
}

func fp8(L, F, out int) map[fp.Format]FormatParams {
	return map[fp.Format]FormatParams{fp.E4M3: {L: L, F: F, OutMant: out}, fp.E5M2: {L: L, F: F, OutMant: out}}
}

// fp8ToFP16 is the FP8 → FP16-output datapath of Hopper and Blackwell
// (fitted to the recorded vectors, FP8-FP16.md): each 32-product k window
// is summed as two chained blocks of 16 (F = 25, as the FP16/BF16-input
// datapath), the first holding k = 0,1,4,5,… and the second k = 2,3,6,7,…
// (low and high halves of the packed registers), each block rounded to FP16
// (RNE); c, rounded to FP16, is added last with one more RNE.
func fp8ToFP16() map[fp.Format]FormatParams {
	p := FormatParams{L: 16, F: 25, Window: 32, Run: 2, LateC: true, CRound: fp.RNE}
	return map[fp.Format]FormatParams{fp.E4M3: p, fp.E5M2: p}
}

// withFP16 returns m with FP16-output parameters f.
func withFP16(m Model, f map[fp.Format]FormatParams) Model {
	m.FP16Formats = f
	return m
}

func merge(ms ...map[fp.Format]FormatParams) map[fp.Format]FormatParams {
	out := map[fp.Format]FormatParams{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

func half(L, F int) map[fp.Format]FormatParams {
	return map[fp.Format]FormatParams{fp.FP16: {L: L, F: F}, fp.BF16: {L: L, F: F}}
}

var presets = map[string]Model{
	// NVIDIA block FMA (FACTS.md §3 table; Fasi et al. 2021, Khattak &
	// Mikaitis). FP32 output RZ, FP16 output RNE.
	"v100": nv("v100", "NVIDIA V100 (Volta) tensor core: block FMA, L=4 fp16, F=23, RZ/RNE",
		map[fp.Format]FormatParams{fp.FP16: {L: 4, F: 23}}),
	"t4": nv("t4", "NVIDIA T4 (Turing) tensor core: block FMA, L=8 fp16, F=24, RZ/RNE",
		map[fp.Format]FormatParams{fp.FP16: {L: 8, F: 24}}),
	"a100": nv("a100", "NVIDIA A100/A2 (Ampere) tensor core: block FMA, L=8 fp16/bf16, 4 tf32, F=24, RZ/RNE",
		merge(half(8, 24), map[fp.Format]FormatParams{fp.TF32: {L: 4, F: 24}})),
	"ada": nv("ada", "NVIDIA Ada (L40S, RTX 40) tensor core: block FMA, L=8 fp16/bf16, 4 tf32, F=24; fp8 L=16, F=13, output cut to 13 fraction bits",
		merge(half(8, 24), map[fp.Format]FormatParams{fp.TF32: {L: 4, F: 24}}, fp8(16, 13, 13))),
	// Hopper wgmma FP8, FP32 output: F=13 and, as on Ada, the FP32 result
	// cut (RZ) to 13 fraction bits — the recorded vectors match only with
	// the cut. c enters the 32-product block as in the published block-FMA
	// model (FACTS.md §3): the FP32 sets were recorded with c = 0, so the
	// data cannot tell this from c added last (the FP16-output datapath,
	// fp8ToFP16, does add c last). FP8 with FP16 output takes that other
	// datapath.
	"h100": withFP16(nv("h100", "NVIDIA H100/H200 (Hopper) tensor core: block FMA, L=16 fp16/bf16, 8 tf32, F=25; wgmma fp8 L=32, F=13, output cut to 13 fraction bits; fp8→fp16 two blocks of 16 (k pairs interleaved), F=25, then + c",
		merge(half(16, 25), map[fp.Format]FormatParams{fp.TF32: {L: 8, F: 25}}, fp8(32, 13, 13))), fp8ToFP16()),
	// B200 FP8: the recorded vectors (FP32 output) rule out one rounding of
	// products and c together (an exact sum rounded RNE is 1 ulp off on
	// some lines, RZ on many); they match bit for bit when the 32 products
	// are block-FMA'd (F=25, RZ to FP32) and c is added afterwards with RNE.
	// FP8 with FP16 output: the same datapath as Hopper's (fp8ToFP16).
	"b200": withFP16(nv("b200", "NVIDIA B200 (Blackwell) tensor core: block FMA, L=16 fp16/bf16, 8 tf32, F=25; fp8 L=32 products (F=25, RZ) then + c with RNE; fp8→fp16 two blocks of 16 (k pairs interleaved), F=25, then + c",
		merge(half(16, 25), map[fp.Format]FormatParams{fp.TF32: {L: 8, F: 25},
			fp.E4M3: {L: 32, F: 25, LateC: true, CRound: fp.RNE}, fp.E5M2: {L: 32, F: 25, LateC: true, CRound: fp.RNE}})), fp8ToFP16()),

	// AMD (FACTS.md §3; MMA-Sim). No recorded vectors: unit-tested only.
	"mi100": {Name: "mi100", Doc: "AMD MI100 (CDNA1): exact sum of L products and c, one RNE (L=4 fp16, 2 bf16)",
		Kind: BlockFMA, RoundFP32: fp.RNE, RoundFP16: fp.RNE,
		Formats: map[fp.Format]FormatParams{fp.FP16: {L: 4, F: Exact}, fp.BF16: {L: 2, F: Exact}}},
	"mi210": {Name: "mi210", Doc: "AMD MI210/MI250 (CDNA2): FTZ, products in FP32, pairwise FP32 RNE adds, then c + s",
		Kind: Pairwise, RoundFP32: fp.RNE, RoundFP16: fp.RNE, FlushSubnormals: true,
		Formats: map[fp.Format]FormatParams{fp.FP16: {L: 4}, fp.BF16: {L: 4}}},
	"mi300": {Name: "mi300", Doc: "AMD MI300 (CDNA3): products truncated to F=24 over groups of L=8, c added late rounded toward −∞, final RNE",
		Kind: TruncatedLateC, RoundFP32: fp.RNE, RoundFP16: fp.RNE,
		Formats: half(8, 24)},

	// Sequential FP32 accumulation (a CUDA-core / vector-unit FMA chain).
	"fp32-rne": {Name: "fp32-rne", Doc: "sequential FP32 FMA chain in increasing k, RNE after every product",
		Kind: Sequential, RoundFP32: fp.RNE, RoundFP16: fp.RNE, Formats: seqFormats()},
	"fp32-rz": {Name: "fp32-rz", Doc: "sequential FP32 FMA chain in increasing k, RZ after every product",
		Kind: Sequential, RoundFP32: fp.RZ, RoundFP16: fp.RZ, Formats: seqFormats()},

	// Ascend Cube — HYPOTHESIS (FACTS.md §2: the Cube's internal
	// accumulation is not documented publicly). Parameters:
	//   - block length L = 16 for FP16/BF16: the Cube's k-step (16×16×16 MAC
	//     per cycle; PTO cost tables: kstep 16 for FP16/BF16→FP32), so one
	//     cycle's reduction tree sees 16 products and the L0C value;
	//   - exact products and an exact sum of the block and c (F = Exact): a
	//     reduction tree built for FP32 accumulation of 16 FP16 products
	//     needs no more than ~80 bits to be exact for FP16 inputs, and
	//     nothing public indicates truncation;
	//   - one rounding per block, RNE (SGEMM-cube: Ascend "adopts RN
	//     rounding"; FP32→FP16 conversions on the FixPipe use RINT).
	// This reproduces SGEMM-cube's qualitative accuracy claims but is NOT
	// validated bit for bit; a machine file may swap in another Model.
	"ascend-910a": {Name: "ascend-910a", Hypothesis: true,
		Doc:  "Ascend 910A Cube (HYPOTHESIS): blocks of L=16 (the k-step), exact products, exact sum with c, one RNE rounding",
		Kind: BlockFMA, RoundFP32: fp.RNE, RoundFP16: fp.RNE,
		Formats: half(16, Exact)},
	// 910B3: the same hypothesis for FP16/BF16 (same 16×16×16 Cube); it adds
	// native FP32 (and HF32/TF32-style) inputs with a K-tile of 8 (PTO
	// tables: kstep 4 for FP32, "equivalently K-tile 8 at 2 cycles").
	"ascend-910b3": {Name: "ascend-910b3", Hypothesis: true,
		Doc:  "Ascend 910B3 Cube (HYPOTHESIS): as ascend-910a for fp16/bf16 (L=16); fp32/tf32 inputs L=8; exact sum, one RNE rounding",
		Kind: BlockFMA, RoundFP32: fp.RNE, RoundFP16: fp.RNE,
		Formats: merge(half(16, Exact), map[fp.Format]FormatParams{fp.FP32: {L: 8, F: Exact}, fp.TF32: {L: 8, F: Exact}})},
}

func seqFormats() map[fp.Format]FormatParams {
	out := map[fp.Format]FormatParams{}
	for _, f := range []fp.Format{fp.FP16, fp.BF16, fp.TF32, fp.E4M3, fp.E5M2, fp.FP32} {
		out[f] = FormatParams{L: 1, F: Exact}
	}
	return out
}

// PresetNames returns the names of the built-in models, sorted.
func PresetNames() []string {
	out := make([]string, 0, len(presets))
	for n := range presets {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Preset returns the named built-in model (a copy: the caller may modify its
// Formats map without affecting other callers).
func Preset(name string) (Model, error) {
	m, ok := presets[strings.ToLower(name)]
	if !ok {
		return Model{}, fmt.Errorf("unknown numerics preset %q (the presets: %s)", name, strings.Join(PresetNames(), ", "))
	}
	m.Formats = merge(m.Formats)
	if m.FP16Formats != nil {
		m.FP16Formats = merge(m.FP16Formats)
	}
	return m, nil
}
