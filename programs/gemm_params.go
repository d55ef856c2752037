package programs

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/davinci-sim/davinci-sim/badinput"
	"github.com/davinci-sim/davinci-sim/fp"
	"github.com/davinci-sim/davinci-sim/machines"
)

// GEMMParams are the parameters of the GEMM program kinds (sgemm-cube,
// hgemm). Every key is addressable with --set program.<key>=value.
type GEMMParams struct {
	Kind    string `mapstructure:"kind"`
	Machine string `mapstructure:"machine"`

	M int `mapstructure:"m"`
	K int `mapstructure:"k"`
	N int `mapstructure:"n"`

	Tiling       Tiling `mapstructure:"tiling"`
	Buffering    string `mapstructure:"buffering"`    // single | double
	Accumulation string `mapstructure:"accumulation"` // termwise | elementwise
	Split        Split  `mapstructure:"split"`
	Inputs       Inputs `mapstructure:"inputs"`
	Numerics     string `mapstructure:"numerics"`     // full | sampled | off
	SampleTiles  int    `mapstructure:"sample_tiles"` // output tiles computed in sampled mode
	Cores        int    `mapstructure:"cores"`        // AI cores used (0 = all)
	Check        bool   `mapstructure:"check"`        // compare with the golden model (full numerics)
	Baselines    *bool  `mapstructure:"baselines"`    // report hgemm and CPU FP32 errors (default true)
	SplitChunk   int    `mapstructure:"split_chunk"`  // elements per vector-pass chunk (0 = default)
	Unit         string `mapstructure:"unit"`         // GPUs: matrix | vector units for the MMAs ("" = the library's choice)
	Input        string `mapstructure:"input"`        // hgemm on GPUs: the matrix inputs' type, fp16 (default) | bf16 | e4m3 | e5m2

	// kBatch is the run's --k-batch (Options.KBatch): GPU GEMM kernels
	// simulate that many k-steps of a CTA as one. Not a program key.
	kBatch int
	// seedFlag: the run's --seed gave inputs.seed (Options.Seed), which
	// inputs from files refuse (nothing is drawn).
	seedFlag bool
	// host is the run's bound on its host memory (Options.MaxHostBytes).
	host hostBound
	// anyShape: on GPUs the default tile is the library's first that
	// fits, whatever m and n (lu-fused's probe: one tile for every kernel
	// of the factorization), not the one that fills the SMs (fillingTile).
	anyShape bool
	// together is how many GEMMs alike run in one grid with this one (a
	// grouped GEMM: ozaki's slice GEMMs); 0 or 1: alone. The default tile
	// counts their CTAs (fillingTile).
	together int
}

// Tiling is the block decomposition: SGEMM-cube's (its Sec. 5.1.1) on
// DaVinci machines, a CTA tile with its pipeline depth and warps on GPUs.
type Tiling struct {
	BM     int `mapstructure:"bm"`
	BK     int `mapstructure:"bk"`
	BN     int `mapstructure:"bn"`
	NFused int `mapstructure:"nfused"` // DaVinci: A blocks resident in L1 (0 = largest that fits, Eq. 8)
	Stages int `mapstructure:"stages"` // GPUs: shared-memory pipeline stages (0 = default)
	Warps  int `mapstructure:"warps"`  // GPUs: warps per CTA (0 = default)
	// Staging (GPUs): how the next k-step is prefetched — "shared" (into
	// stages shared-memory buffers: CUTLASS multistage), "registers" (into
	// registers, then one LDS buffer: Tensile), or "none": no prefetch and
	// no shared memory, each k-step's fragments loaded from global memory
	// and then multiplied (WMMA's load_matrix_sync from a global pointer,
	// LE-GEMM's "plain implementation"); "" = the library's.
	Staging string `mapstructure:"staging"`
	// CTAGroup (GPUs with tcgen05, Blackwell): 2 runs pairs of CTAs on the
	// two SMs of a TPC (cta_group::2), each computing bm × bn of a 2·bm × bn
	// tile from its own rows of A and all of B, of which it loads half;
	// 1 one CTA per tile; 0 = the library's (2 where the tile order allows).
	CTAGroup int `mapstructure:"cta_group"`
}

// Split is the FP32 → FP16 hi/lo decomposition.
type Split struct {
	Rounding string `mapstructure:"rounding"` // rne (default), rz, rna, …
	SB       int    `mapstructure:"sb"`       // scale exponent of the residual (0, 6, 12)
	Saturate *bool  `mapstructure:"saturate"` // Ascend saturating conversion (default true)
}

// Inputs describes how A and B are produced.
type Inputs struct {
	Distribution   string   `mapstructure:"distribution"`    // uniform | uniform-nonneg | between
	OffsetExponent int      `mapstructure:"offset_exponent"` // e in U[−2^e, 2^e] (uniform), U[0, 2^e] (uniform-nonneg)
	Low            float64  `mapstructure:"low"`             // between: U[low, high]
	High           float64  `mapstructure:"high"`
	Seed           int64    `mapstructure:"seed"`
	A              FilePath `mapstructure:"a"` // .npy file (overrides the distribution)
	B              FilePath `mapstructure:"b"`
}

// FilePath is a key whose value names a file (inputs.a): relative to the
// program file's folder where the file gives it, to the current directory
// where the command line does (a study's set and vary: to its folder) —
// IsFileKey.
type FilePath string

// IsFileKey reports whether the override path (program.inputs.a) names a
// file in programs of some kind: a value given on the command line is
// then made absolute against the current directory (a study's against its
// folder) before the program file, which resolves its own against its
// folder, sees it.
func IsFileKey(path string) bool {
	rest, ok := strings.CutPrefix(strings.ToLower(path), "program.")
	if !ok {
		return false
	}
	if is, ok := fileKeys.Load(rest); ok {
		return is.(bool)
	}
	is := false
	for _, k := range Kinds() {
		if k.Params == nil {
			continue
		}
		if t, _, err := machines.ResolvePath(k.Params, rest); err == nil && t == reflect.TypeFor[FilePath]() {
			is = true
			break
		}
	}
	fileKeys.Store(rest, is)
	return is
}

// fileKeys remembers IsFileKey's answers by key (the kinds' parameters are
// fixed once registered): a sweep asks it for every parameter of every
// recorded point, and each answer walks every kind's parameters by
// reflection — a quarter of reading a study's results.
var fileKeys sync.Map

// gemmVariant is what a kind fixes about the algorithm.
type gemmVariant struct {
	split  bool // hi/lo split (sgemm-cube) or plain FP16 rounding (hgemm)
	native bool // FP32 inputs straight to a native FP32 cube (sgemm)
	int8   bool // INT8 inputs, INT32 accumulation (igemm)
	tf32   bool // FP32 inputs to TF32 tensor cores (tf32gemm)
	fp64   bool // FP64 inputs and accumulation (dgemm)
	// scheme: the emulated scheme of kind emulated-gemm on DaVinci (its
	// split, products and epilogue); nil for the other kinds, whose split
	// (if any) follows from split and the params (kindScheme).
	scheme *schemePlan
}

// defaults fills unset parameters.
func (p *GEMMParams) defaults(v gemmVariant) {
	if p.Buffering == "" {
		p.Buffering = "double"
	}
	if p.Accumulation == "" {
		p.Accumulation = "termwise"
	}
	if t := &p.Tiling; t.BM == 0 && t.BK == 0 && t.BN == 0 { // the default tile; the other tiling keys stay as given
		switch {
		case v.native:
			t.BM, t.BK, t.BN = 128, 64, 128
		case v.int8:
			t.BM, t.BK, t.BN = daVinciInt8Tile.BM, daVinciInt8Tile.BK, daVinciInt8Tile.BN
		case p.Accumulation == "elementwise" && v.split:
			t.BM, t.BK, t.BN = 96, 64, 96
		default:
			t.BM, t.BK, t.BN = 176, 64, 176
		}
	}
	if p.Split.Rounding == "" {
		p.Split.Rounding = "rne"
	}
	if p.Split.Saturate == nil {
		t := true
		p.Split.Saturate = &t
	}
	if p.Inputs.Distribution == "" {
		p.Inputs.Distribution = DistUniform
	}
	if p.Numerics == "" {
		p.Numerics = NumericsFull
	}
	if p.SampleTiles == 0 {
		p.SampleTiles = 8
	}
	if p.Baselines == nil {
		t := true
		p.Baselines = &t
	}
	if p.SplitChunk == 0 {
		p.SplitChunk = 8192
	}
}

// maxGEMMTile bounds a GEMM's m, k and n and its tile's bm, bk and bn (and
// split_chunk's elements): larger tiles wrapped the sums of buffer bytes
// (bm = 2^57+16 "fit" L1 and ran; 2^61 divided by zero).
const maxGEMMTile = 1 << 20

// validate checks the parameters against the machine; errors name the key.
func (p *GEMMParams) validate(file string, m *machines.Machine, v gemmVariant) error {
	bad := func(key, format string, a ...any) error {
		return keyError(file, key, format, a...)
	}
	if p.Tiling.Stages != 0 || p.Tiling.Warps != 0 || p.Tiling.CTAGroup != 0 || p.Tiling.Staging != "" {
		key := "tiling.stages"
		switch {
		case p.Tiling.CTAGroup != 0:
			key = "tiling.cta_group"
		case p.Tiling.Staging != "":
			key = "tiling.staging"
		case p.Tiling.Stages == 0:
			key = "tiling.warps"
		}
		return bad(key, "applies to GPU machines (nvidia-sm, amd-cu); machine %s is %s", m.Name, m.Kind)
	}
	if p.Unit != "" {
		return bad("unit", "applies to GPU machines (nvidia-sm, amd-cu); machine %s is %s", m.Name, m.Kind)
	}
	hgemm := !v.split && !v.native && !v.int8 && !v.tf32 && !v.fp64 && v.scheme == nil
	switch {
	case p.Input != "" && !hgemm:
		return bad("input", "applies to hgemm (its input format); this kind's inputs are fixed by the kind or its scheme (got %+q)", p.Input)
	case p.Input != "" && p.Input != "fp16":
		return bad("input", "the DaVinci cube's hgemm takes fp16 (other inputs run on GPU machines) (got %+q)", p.Input)
	}
	for _, d := range []struct {
		key string
		v   int
	}{{"m", p.M}, {"k", p.K}, {"n", p.N}} {
		if d.v < 1 {
			return bad(d.key, "must be a positive integer (got %d)", d.v)
		}
		if d.v > maxGEMMTile {
			return bad(d.key, "at most %d (got %d)", maxGEMMTile, d.v)
		}
	}
	t := p.Tiling
	for _, d := range []struct {
		key string
		v   int
	}{{"tiling.bm", t.BM}, {"tiling.bk", t.BK}, {"tiling.bn", t.BN}} {
		if d.v == 0 {
			// (A tile given in part: the default tile is all three keys'.)
			return bad(d.key, "is 0 (or not given): give tiling.bm, tiling.bk and tiling.bn together, positive multiples of 16, or none of them for the default tile")
		}
		if d.v < 16 || d.v%16 != 0 {
			return bad(d.key, "must be a positive multiple of 16 (cube alignment, SGEMM-cube Eq. 12); got %d", d.v)
		}
		if d.v > maxGEMMTile {
			return bad(d.key, "at most %d, the largest m, k and n (got %d)", maxGEMMTile, d.v)
		}
	}
	if v.int8 {
		// INT8 fractals are 16 rows × 32 bytes: A's k and B's n come in
		// 32s (the cube's INT8 k step is 32).
		for _, d := range []struct {
			key string
			v   int
		}{{"tiling.bk", t.BK}, {"tiling.bn", t.BN}} {
			if d.v%32 != 0 {
				return bad(d.key, "must be a multiple of 32 for INT8 inputs (16×32 INT8 fractals); got %d", d.v)
			}
		}
	}
	if t.NFused < 0 {
		return bad("tiling.nfused", "must be ≥ 0 (0 = largest that fits L1); got %d", t.NFused)
	}
	switch p.Buffering {
	case "single", "double":
	default:
		return bad("buffering", "must be single or double; got %q", badinput.Clip(p.Buffering, 80))
	}
	switch p.Accumulation {
	case "termwise", "elementwise":
	default:
		return bad("accumulation", "must be termwise or elementwise; got %q", badinput.Clip(p.Accumulation, 80))
	}
	if _, ok := fp.ParseRounding(p.Split.Rounding); !ok {
		return bad("split.rounding", "unknown rounding mode %q (rne, rna, rz, rd, ru, ro)", p.Split.Rounding)
	}
	if p.Split.SB < 0 || p.Split.SB > 24 {
		return bad("split.sb", "must be in 0..24; got %d", p.Split.SB)
	}
	switch {
	case (v.native || v.int8) && (p.Split.Rounding != "rne" || p.Split.SB != 0 || !*p.Split.Saturate):
		return bad("split", "applies to sgemm-cube and hgemm (FP16 pieces); this kind's inputs go to the cube as they are")
	case !v.split && p.Split.SB != 0:
		return bad("split.sb", "the scale of sgemm-cube's residual; hgemm rounds each input once (no residual)")
	case !v.split && p.Accumulation == "elementwise":
		return bad("accumulation", "elementwise adds sgemm-cube's three products in L0C; this kind's GEMM has one product (termwise is what it does)")
	}
	if key, msg := p.Inputs.problem(); key != "" {
		return bad(key, "%s", msg)
	}
	switch p.Numerics {
	case NumericsFull, NumericsSampled, NumericsOff:
	default:
		return bad("numerics", "must be full, sampled or off; got %+q", p.Numerics)
	}
	if p.SampleTiles < 1 {
		return bad("sample_tiles", "must be ≥ 1; got %d", p.SampleTiles)
	}
	if p.Cores < 0 || p.Cores > m.Cores {
		return limitedBy(bad("cores", "must be in 0..%d (the machine's cores; 0 = all of them); got %d", m.Cores, p.Cores), "machine.cores")
	}
	if p.SplitChunk < 64 || p.SplitChunk%64 != 0 || p.SplitChunk > maxGEMMTile {
		return bad("split_chunk", "must be a positive multiple of 64, at most %d; got %d", maxGEMMTile, p.SplitChunk)
	}
	if err := p.checkHostMemory(file); err != nil {
		return err
	}
	// (A kind the machine's cube cannot run: a refusal of the kind, whose
	// constraint comes from the machine and its cube's key.)
	if v.native && m.DaVinci().Cube.KStepFP32 == 0 {
		return limitedBy(bad("kind", "machine %s has no native FP32 cube (core.cube.kstep_fp32 = 0); use kind sgemm-cube, or a machine such as ascend-910b3", m.Name), matrixFrom(m, fp.FP32)...)
	}
	if v.int8 && m.DaVinci().Cube.KStepINT8 == 0 {
		return limitedBy(bad("kind", "machine %s: the cube has no INT8 mode (core.cube.kstep_int8 = 0)", m.Name), matrixFrom(m, fp.INT8)...)
	}
	if !v.native && !v.int8 && m.DaVinci().Cube.KStepFP16 == 0 {
		return limitedBy(bad("kind", "machine %s: the cube has no FP16 mode (core.cube.kstep_fp16 = 0)", m.Name), matrixFrom(m, fp.FP16)...)
	}
	if strings.TrimSpace(p.Kind) == "" {
		return bad("kind", "missing")
	}
	return nil
}

// sampledBytesPerElem is a GEMM's host bytes per element of A and B with
// sampled numerics (the inputs, their rounding to the kernel's type, and
// the collector's headroom): measured 8.0–8.9 at 8192³ for hgemm, sgemm
// and sgemm-cube; ascend-910a sgemm-cube 8.6 and a100 hgemm 7.6 at 4096³
// (peak RSS beyond the run's 48 MiB, 2026-12).
const sampledBytesPerElem = 10

// checkHostMemory refuses numerics whose data would take more host memory
// than the run may (hostBound): its data and base by the run's estimate
// (runEstimate: the bytes per element of its kind, scheme and machine,
// gemmPerElem), whose total — with the chip model — the refusal quotes,
// the figure a bound must be for the run to pass every check. Every GEMM
// build checks here, before its data exist.
func (p *GEMMParams) checkHostMemory(file string) error {
	var instead string
	switch p.Numerics {
	case NumericsFull:
		instead = "sampled or off"
	case NumericsSampled:
		instead = "off"
	default:
		return nil
	}
	// (Where the run's estimate is not known: the kind's largest figures.)
	var params any = p
	switch p.Kind {
	case "ozaki":
		params = &OzakiParams{}
	case "emulated-gemm":
		params = &EmulatedParams{}
	}
	if e, over := p.host.overData(gemmBytes(p, gemmPerElem(p.Kind, params, nil))); over {
		return p.host.refuse(keyError(file, "numerics", "%s numerics on %d×%d×%d needs %s; use %s", p.Numerics, p.M, p.K, p.N, p.host.overAll(e), instead))
	}
	return nil
}

// derivedKindKey returns the first GEMM key set that a kind built from GPU
// GEMM kernels of its own choosing (emulated-gemm, ozaki) does not take —
// DaVinci's tiling and passes, the split, the unit and the input type — or
// "".
func (p *GEMMParams) derivedKindKey(f *File, allowed ...string) string {
	for _, key := range []string{"tiling.nfused", "buffering", "accumulation", "cores", "split_chunk", "split", "unit", "input"} {
		if f.keySet(p, key) && !slices.Contains(allowed, key) {
			return key
		}
	}
	return ""
}

// keySet reports whether key of the decoded parameters params (a pointer to
// a kind's parameter struct) was given: a value other than its zero, or
// an explicit zero from the file or an override (keyGiven).
func (f *File) keySet(params any, key string) bool {
	return f.keyGiven(key) || !decodedZero(reflect.ValueOf(params), key)
}

// decodedZero reports whether the field of v (a struct, or a pointer to
// one) at the dotted mapstructure key is its type's zero — true for a key
// v has no field for.
func decodedZero(v reflect.Value, key string) bool {
	for v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return true
		}
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return true
	}
	name, rest, _ := strings.Cut(key, ".")
	t := v.Type()
	for i := range t.NumField() {
		sf := t.Field(i)
		tag, opts, _ := strings.Cut(sf.Tag.Get("mapstructure"), ",")
		switch {
		case !sf.IsExported():
		case sf.Anonymous && strings.Contains(opts, "squash"):
			if !decodedZero(v.Field(i), key) {
				return false
			}
		case tag == name && rest == "":
			return v.Field(i).IsZero()
		case tag == name:
			return decodedZero(v.Field(i), rest)
		}
	}
	return true
}

// keyGiven reports whether the file or an override gave the key (after
// Decode): an explicit zero value too (cores: 0), which a kind that does
// not take the key must refuse as it refuses any other value — the zero
// is the key's "not given" once decoded.
func (f *File) keyGiven(key string) bool {
	if f == nil || f.Config == nil || !f.Config.Viper().IsSet(key) {
		return false
	}
	switch v := f.Config.Viper().Get(key); v {
	case nil, "": // (--set program.buffering= resets the key: not given)
		return false
	}
	return true
}

// problem returns the key and constraint of the first invalid input
// setting, or "" when they are valid.
func (in *Inputs) problem() (key, msg string) {
	if (in.A == "") != (in.B == "") {
		return "inputs.a", "give both inputs.a and inputs.b (.npy files), or neither"
	}
	switch in.Distribution {
	case DistUniform, DistUniformNonneg:
		if in.OffsetExponent < -100 || in.OffsetExponent > 100 {
			return "inputs.offset_exponent", fmt.Sprintf("must be in −100..100; got %d", in.OffsetExponent)
		}
		if in.Low != 0 || in.High != 0 {
			key := "inputs.low"
			if in.Low == 0 {
				key = "inputs.high"
			}
			return key, fmt.Sprintf("applies to distribution %s (this one is %s)", DistUniformBetween, in.Distribution)
		}
	case DistUniformBetween:
		lim := math.Ldexp(1, 100)
		if !(in.Low < in.High) || math.Abs(in.Low) > lim || math.Abs(in.High) > lim {
			return "inputs.high", fmt.Sprintf("distribution between needs finite low < high within ±2^100; got [%g, %g]", in.Low, in.High)
		}
	default:
		return "inputs.distribution", fmt.Sprintf("must be uniform, uniform-nonneg or between; got %q", in.Distribution)
	}
	return "", ""
}

// interval is the inputs' distribution interval [lo, hi].
func (in *Inputs) interval() (lo, hi float64) {
	switch in.Distribution {
	case DistUniformNonneg:
		return 0, pow2(in.OffsetExponent)
	case DistUniformBetween:
		return in.Low, in.High
	}
	return -pow2(in.OffsetExponent), pow2(in.OffsetExponent)
}

// rangeGiven returns the first input-range key set away from the default
// (uniform over [−1, 1]), or "": kinds that draw their own inputs refuse it.
func (in *Inputs) rangeGiven() string {
	switch {
	case in.Distribution != "" && in.Distribution != DistUniform:
		return "inputs.distribution"
	case in.OffsetExponent != 0:
		return "inputs.offset_exponent"
	case in.Low != 0:
		return "inputs.low"
	case in.High != 0:
		return "inputs.high"
	}
	return ""
}

// rangeKey is the key that sets the inputs' range (messages name it).
func (in *Inputs) rangeKey() string {
	if in.Distribution == DistUniformBetween {
		if math.Abs(in.Low) > math.Abs(in.High) {
			return "inputs.low"
		}
		return "inputs.high"
	}
	return "inputs.offset_exponent"
}

// rangeMax is the largest |x| of the inputs the distribution generates:
// its bound rounded to FP32 as the inputs are (UniformFP32; U[0, 65519.999]
// makes 65520, past FP16's overflow point).
func (in *Inputs) rangeMax() float64 {
	lo, hi := in.interval()
	return float64(float32(max(math.Abs(lo), math.Abs(hi)))) // (within ±2^100: validate)
}

// rangeExponent is the smallest e with every input in (−2^e, 2^e]
// (the range the emulated schemes check).
func (in *Inputs) rangeExponent() int { return exponentAbove(in.rangeMax()) }

// exponentAbove is the smallest e with m ≤ 2^e (m ≥ 0 finite; 0 for 0).
func exponentAbove(m float64) int {
	_, e := math.Frexp(m)
	if m == math.Ldexp(1, e-1) {
		return e - 1
	}
	return e
}

// gpuDefaults fills the defaults of a GEMM on a GPU machine (numerics full,
// 8 sampled tiles, uniform inputs) and checks the sizes and the numerics
// mode; errors name file and key.
func (p *GEMMParams) gpuDefaults(file string) error {
	if p.Numerics == "" {
		p.Numerics = NumericsFull
	}
	if p.SampleTiles == 0 {
		p.SampleTiles = 8
	}
	if p.SampleTiles < 1 {
		return keyError(file, "sample_tiles", "must be ≥ 1 (got %d)", p.SampleTiles)
	}
	if p.Inputs.Distribution == "" {
		p.Inputs.Distribution = DistUniform
	}
	if key, msg := p.Inputs.problem(); key != "" {
		return keyError(file, key, "%s", msg)
	}
	for _, d := range []struct {
		key string
		v   int
	}{{"m", p.M}, {"k", p.K}, {"n", p.N}} {
		if d.v < 1 || d.v > 1<<20 {
			return keyError(file, d.key, "must be in 1..%d (got %d)", 1<<20, d.v)
		}
	}
	switch p.Numerics {
	case NumericsFull, NumericsSampled, NumericsOff:
	default:
		return keyError(file, "numerics", "must be full, sampled or off (got %+q)", p.Numerics)
	}
	return nil
}
