package programs

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/davinci-sim/davinci-sim/accuracy"
	"github.com/davinci-sim/davinci-sim/arch"
	"github.com/davinci-sim/davinci-sim/cube"
	"github.com/davinci-sim/davinci-sim/fp"
	"github.com/davinci-sim/davinci-sim/isa"
	"github.com/davinci-sim/davinci-sim/machines"
	"github.com/davinci-sim/davinci-sim/mem"
	"github.com/davinci-sim/davinci-sim/ozaki"
	"github.com/davinci-sim/davinci-sim/ozaki/crt"
	"github.com/davinci-sim/davinci-sim/report"
	"github.com/davinci-sim/davinci-sim/stopwork"
)

func init() {
	register(&Kind{Name: "ozaki", KBatch: true, Params: reflect.TypeFor[OzakiParams](), Omit: []string{"baselines", "split", "accumulation", "split_chunk", "input"}, Machines: []string{"nvidia-sm", "amd-cu", "davinci"}, Example: "b200-ozaki.yaml",
		Summary: "FP64 GEMM from INT8 matrix units: Ozaki scheme I with ESC and ADP (as cuBLAS's emulated DGEMM: scan, ESC, slicing, INT8 slice GEMMs, FP64 recombination — or the native DGEMM fallback), or scheme II (method: ozaki-ii: CRT over INT8 moduli)",
		Build:   buildOzaki})
}

// OzakiParams are the parameters of kind ozaki: C = alpha·A·B + beta·C for
// FP64 A (m×k), B (k×n) and C, emulated with INT8 slices.
type OzakiParams struct {
	GEMMParams `mapstructure:",squash"`
	Alpha      *float64 `mapstructure:"alpha"` // default 1
	Beta       float64  `mapstructure:"beta"`  // default 0 (C is not read)
	// MantissaBits is the precision asked for: with precision fixed or
	// forced the slices hold this many mantissa bits (8·slices − 1 ≥ it);
	// with dynamic it is the target that ESC's padding is added to.
	MantissaBits int `mapstructure:"mantissa_bits"` // default 53
	// Precision is fixed (no ADP kernels), forced (ADP's scan and ESC run,
	// the slices come from mantissa_bits) or dynamic (ADP chooses the
	// slices from ESC and may fall back to native DGEMM).
	Precision string `mapstructure:"precision"`
	// MaxMantissaBits caps what dynamic precision may use: beyond it ADP
	// falls back (or, without fallback, uses the cap).
	MaxMantissaBits int `mapstructure:"max_mantissa_bits"` // default 200
	// GEMMs is grouped (default: the INT8 GEMMs in one launch, as a grouped
	// or strided-batched GEMM — CUTLASS's grouped GEMM, cuBLAS's
	// gemmStridedBatched) or separate (one launch each).
	GEMMs string `mapstructure:"gemms"`
	// Slices fixes the slice count (precision fixed or forced) instead of
	// mantissa_bits: give one of them (a --set of one replaces the file's
	// other).
	Slices   int    `mapstructure:"slices"`
	Fallback *bool  `mapstructure:"fallback"`  // ADP may run native DGEMM instead (default true)
	ESCBlock int    `mapstructure:"esc_block"` // ESC's coarsening block along k (default 32)
	Products string `mapstructure:"products"`  // triangular (default) | square
	// Method is ozaki-i (default: slices, ADP) or ozaki-ii (residues modulo
	// several moduli, one INT8 GEMM each, CRT reconstruction: package
	// ozaki/crt).
	Method string `mapstructure:"method"`
	// Moduli is ozaki-ii's number of moduli (default: the fewest that hold
	// mantissa_bits at this k).
	Moduli int `mapstructure:"moduli"`
	// Test2 draws A and B as Demmel et al.'s BLAS grading Test 2 with this
	// exponent span b (square m = k = n; inputs.seed seeds x): an exact
	// ESC of 2b, the paper's ESC and fallback test. Unset: inputs.
	Test2 *int `mapstructure:"test2"`
}

// ozakiHostBytesPerElem is the host memory an ozaki run holds per element
// of A, B and C (gemmPerElem, which cites the measurements).
const ozakiHostBytesPerElem = 100

// Ozaki precisions.
const (
	ozakiFixed   = "fixed"
	ozakiForced  = "forced"
	ozakiDynamic = "dynamic"
)

// Ozaki methods.
const (
	ozakiI  = "ozaki-i"
	ozakiII = "ozaki-ii"
)

// Operation counts of the element-wise kernels, per element (INT32 ALU
// operations unless said otherwise), from the instruction sequence each
// runs:
//   - scan: extract the exponent field (shift, and), test for Inf/NaN
//     (compare), update the block's max and min and the row's (column's)
//     max: 6;
//   - slicing: the 64-bit significand and exponent (2), the implicit bit,
//     the shift to the row's scale and its negation on 32-bit ALUs (6),
//     then per slice a shift, a mask and the balanced-digit remap with
//     its carry (4);
//   - recombination (FP64): per INT32 plane a conversion and a fused
//     multiply-add by its power-of-two weight (2), the scaling by the row
//     and column exponents (1), α (1) and β·C (2) when they apply;
//   - ESC: per output and k-block, two adds and two maxes (4), or one
//     packed 16-bit fused add-max (DPX __viaddmax_s16x2, Hopper and later:
//     two outputs per instruction, two terms each) (1).
const (
	ozakiScanOps       = 6
	ozakiSliceOps      = 8
	ozakiSliceOpsEach  = 4
	ozakiRecombineOps  = 2
	ozakiESCOps        = 4
	ozakiESCOpsDPX     = 1
	ozakiESCTile       = 128 // ESC's output tile (and the B scan's column panel)
	ozakiDecisionOps   = 16  // the ADP decision kernel's scalar work
	ozakiDefaultESCBlk = 32
)

// ozakiJob is an Ozaki GEMM on a GPU machine.
type ozakiJob struct {
	file string
	p    OzakiParams
	tg   *gpuTarget
	mach *machines.Machine

	runContext // Prepare's writes and Finish's numerics stop with the run (seconds at 4096³)

	alpha     float64
	slices    int
	diags     []ozakiDiag
	chunk     int // k-chunk length L (package ozaki's Chunks)
	nchunks   int
	nplanes   int // INT32 planes: one per chunk and diagonal, chunk-major
	fallback  bool
	reason    string
	esc       int  // ESC (with its +1) when computed
	escKnown  bool // ESC was computed (numerics on, ADP runs)
	kb        int  // ESC blocks along k
	dpx       bool // packed fused add-max instructions for ESC
	native    *gpuGEMMPlan
	diagPlans []*gpuGEMMPlan
	planDiag  []int // diagonal d of each plane

	// numerics (off: all nil)
	a, b, c0 []float64
	plan     *ozaki.Plan
	pa, pb   [][]int8 // digit planes (package ozaki's layout)

	// ozaki-ii (ozaki_crt.go)
	moduli  []int
	crtPlan *crt.Plan
	ra, rb  [][]int8 // residues per modulus (package ozaki/crt's layout)
	planMod []int    // modulus index of each INT32 plane

	// global memory
	gmA64, gmB64, gmC, gmC0 int64
	gmScaleA, gmScaleB      int64
	gmTabA, gmTabB          int64
	gmESC                   int64
	gmDigitsA, gmDigitB     int64
	gmPlanes                int64
	gmEnd                   int64 // the layout's end (layoutGM): the span of GM the run uses

	outs []Output
}

// ozakiDiag is one diagonal t+u = d of the product set: its slice pairs,
// concatenated along k into one INT8 GEMM per k-chunk.
type ozakiDiag struct {
	d          int
	tmin, tmax int // A slices t of its pairs (u = d − t)
}

// pairs is the diagonal's number of slice products.
func (g ozakiDiag) pairs() int { return g.tmax - g.tmin + 1 }

// ozakiDiagonals lists the diagonals of s slices' triangular (t+u ≤ s+1)
// or square product set.
func ozakiDiagonals(s int, square bool) []ozakiDiag {
	last := s + 1
	if square {
		last = 2 * s
	}
	var out []ozakiDiag
	for d := 2; d <= last; d++ {
		out = append(out, ozakiDiag{d: d, tmin: max(1, d-s), tmax: min(s, d-1)})
	}
	return out
}

// ozakiSlicesFor is the slice count holding bits mantissa bits (bits is
// checked: in 1..ozaki.MaxBits).
func ozakiSlicesFor(bits int) int {
	s, _ := ozaki.SlicesFor(bits)
	return s
}

func buildOzaki(f *File, m *machines.Machine, o Options) (Job, error) {
	if m.Kind == "davinci" {
		return buildOzakiDaVinci(f, m, o) // ozaki_davinci.go
	}
	bad := f.badKey
	tg, ok := newGPUTarget(m)
	if !ok {
		return nil, bad("machine", "ozaki runs on GPU machines (nvidia-sm, amd-cu)")
	}
	var op OzakiParams
	if err := f.Decode(&op, o); err != nil {
		return nil, err
	}
	p := &op.GEMMParams
	o.applyGEMM(f, p)
	if key := p.derivedKindKey(f); key != "" {
		return nil, bad(key, "does not apply to ozaki: the slice GEMMs are INT8 on the %s, the fallback is the library's DGEMM", tg.units)
	}
	if err := p.gpuDefaults(f.Path); err != nil {
		return nil, err
	}
	if !tg.hasMatrix(fp.INT8) {
		return nil, limitedBy(bad("machine", "the slice GEMMs need INT8 %s; %s has none", tg.units, tg.describe()), matrixFrom(m, fp.INT8)[1:]...) // (the key is the machine's: its unit's key the constraint's)
	}
	if err := ozakiCheckParams(f, &op); err != nil {
		return nil, err
	}
	j := &ozakiJob{file: f.Path, p: op, tg: tg, mach: m, alpha: 1}
	if op.Alpha != nil {
		j.alpha = *op.Alpha
	}
	if err := op.needsExponents(f, "kernels"); err != nil {
		return nil, err
	}
	if nv := m.NvidiaSM(); nv != nil {
		j.dpx = nv.Arch == "hopper" || nv.Arch == "blackwell"
	}
	if op.Method == ozakiII {
		if err := j.chooseModuli(bad); err != nil {
			return nil, err
		}
	}
	var bits int
	j.slices, bits = op.slicesAndBits()
	// The run's estimate: inputs, digits, C and the INT32 planes on the
	// host (ozakiHostBytesPerElem, gemmPerElem).
	if err := p.checkHostMemory(f.Path); err != nil {
		return nil, err
	}
	if p.Numerics != NumericsOff {
		var err error
		if j.a, j.b, j.c0, err = ozakiInputsFor(f, &op, o); err != nil {
			return nil, err
		}
		if op.Method == ozakiII {
			if err := j.planCRT(o, f.Path, bad); err != nil {
				return nil, err
			}
			if err := j.layout(); err != nil {
				return nil, err
			}
			return j, nil
		}
		d, err := op.decide(j.a, j.b, bits, fmaGEMM, j.nativeFaster, "native DGEMM on "+m.Name, o, f.Path)
		if err != nil {
			return nil, o.interruptOr(err, bad("mantissa_bits", "%v", err))
		}
		j.plan, j.fallback, j.reason, j.esc, j.escKnown = d.plan, d.fallback, d.reason, d.plan.ESC, d.plan.ESCDone
		if !j.fallback {
			j.slices = d.plan.Slices
			var ok bool
			if j.pa, j.pb, ok = d.plan.DigitsUntil(j.a, j.b, o.stop()); !ok {
				return nil, o.stoppedBuilding(f.Path, "slicing the inputs")
			}
		}
	}
	if err := j.layout(); err != nil {
		return nil, err
	}
	return j, nil
}

// slicesAndBits returns the slices a run starts from (mantissa_bits',
// or slices when given) and the bits its plan is held to (what the slices
// hold: 26 slices hold 207 bits, beyond mantissa_bits' 200).
func (op *OzakiParams) slicesAndBits() (slices, bits int) {
	if op.Slices != 0 {
		return op.Slices, ozaki.Capacity(op.Slices)
	}
	return ozakiSlicesFor(op.MantissaBits), op.MantissaBits
}

// bitsHeld is the mantissa_bits a run reports: the bits the given slices
// hold, or mantissa_bits.
func (op *OzakiParams) bitsHeld() int {
	if op.Slices != 0 && op.Method != ozakiII {
		return ozaki.Capacity(op.Slices)
	}
	return op.MantissaBits
}

// needsExponents refuses dynamic precision without numerics: its slices
// come from the inputs' exponents (ESC). passes names what precision
// forced times on the machine (ADP's kernels on a GPU, its passes on
// DaVinci).
func (op *OzakiParams) needsExponents(f *File, passes string) error {
	if op.Precision == ozakiDynamic && op.Numerics == NumericsOff {
		return f.badKey("precision", "dynamic precision needs the inputs' exponents (ESC) to choose the slices: run with numerics sampled or full, or use precision forced (ADP's %s timed, slices from mantissa_bits) or fixed", passes)
	}
	return nil
}

// ozakiInputsFor draws A and B (inputs.distribution, or Demmel's Test 2),
// or reads them (inputs.a, inputs.b), and C0 when beta ≠ 0, stopping with
// the building run (o's): drawing or reading 4096² inputs took seconds
// under load.
func ozakiInputsFor(f *File, op *OzakiParams, o Options) (a, b, c0 []float64, err error) {
	p := &op.GEMMParams
	stop := o.stop()
	draw := func(which uint64, rows, cols int) ([]float64, error) {
		v := genFloat64Until(p.Inputs, which, rows, cols, stop)
		if v == nil {
			return nil, o.stoppedBuilding(f.Path, "drawing the inputs")
		}
		return v, nil
	}
	read := func(key string, path FilePath) ([]float64, error) {
		v, _, _, err := readNPYFloat64Until(f.Resolve(string(path)), stop)
		if errors.Is(err, errReadStopped) {
			return nil, o.stoppedBuilding(f.Path, "reading "+key)
		}
		if err != nil {
			return nil, f.badKey(key, "%v", err)
		}
		return v, nil
	}
	switch {
	case op.Test2 != nil:
		a, b = ozaki.Test2(p.M, *op.Test2, p.Inputs.Seed)
	case p.Inputs.A != "":
		if a, err = read("inputs.a", p.Inputs.A); err == nil {
			b, err = read("inputs.b", p.Inputs.B)
		}
	default:
		if a, err = draw(1, p.M, p.K); err == nil {
			b, err = draw(2, p.K, p.N)
		}
	}
	if err == nil && op.Beta != 0 {
		c0, err = draw(3, p.M, p.N)
	}
	if err != nil {
		return nil, nil, nil, err
	}
	return a, b, c0, nil
}

// productSet is the run's slice product set.
func (op *OzakiParams) productSet() ozaki.ProductSet {
	if op.Products == "square" {
		return ozaki.Square
	}
	return ozaki.Triangular
}

// config is package ozaki's configuration of the run asking for bits;
// native is the fallback's DGEMM (nil: ozaki.NativeGEMM).
func (op *OzakiParams) config(bits int, native func(a, b, c0 []float64, alpha, beta float64, m, k, n int) []float64) ozaki.Config {
	mode := map[string]ozaki.Mode{ozakiFixed: ozaki.Fixed, ozakiForced: ozaki.Forced, ozakiDynamic: ozaki.Dynamic}[op.Precision]
	return ozaki.Config{Bits: bits, Slices: op.Slices, Mode: mode, MaxBits: op.MaxMantissaBits, ESCBlock: op.ESCBlock, Products: op.productSet(),
		Fallback: *op.Fallback, Native: native}
}

// ozakiDecision is ADP's decision for a run's inputs.
type ozakiDecision struct {
	plan     *ozaki.Plan
	fallback bool   // the native DGEMM computes C
	reason   string // why, in words
}

// decide takes package ozaki's plan for the inputs (Inf/NaN and the cap
// route to the native DGEMM) and, with dynamic precision and fallback
// allowed, ADP's performance heuristic: nativeFaster(s) says whether the
// machine's native DGEMM (named native) beats s slices. It stops with the
// building run (o's; its error names the file at path).
func (op *OzakiParams) decide(a, b []float64, bits int, nativeGEMM func(a, b, c0 []float64, alpha, beta float64, m, k, n int) []float64,
	nativeFaster func(s int) bool, native string, o Options, path string) (ozakiDecision, error) {
	p := &op.GEMMParams
	cfg := op.config(bits, nativeGEMM)
	cfg.Stop = o.stop()
	plan, err := ozaki.MakePlan(a, b, p.M, p.K, p.N, cfg)
	if se := (*ozaki.StoppedError)(nil); errors.As(err, &se) {
		what := "computing ADP's plan (" + se.Phase + ")" // the scales, the ESC
		if op.Precision == ozakiFixed {
			what = "computing " + se.Phase // (no ADP: the scales)
		}
		return ozakiDecision{}, o.stoppedBuilding(path, what)
	}
	if err != nil {
		return ozakiDecision{}, err
	}
	d := ozakiDecision{plan: &plan, fallback: plan.Fallback, reason: plan.Reason}
	if !d.fallback && op.Precision == ozakiDynamic && *op.Fallback && nativeFaster(plan.Slices) {
		d.fallback = true
		d.reason = fmt.Sprintf("%s; ADP's performance heuristic: %d slices would take longer than %s", plan.Reason, plan.Slices, native)
	}
	return d, nil
}

// fmaGEMM is native DGEMM as the simulated kernels compute it (every
// output an FMA chain in increasing k from zero), then α and β as package
// ozaki's epilogue applies them.
func fmaGEMM(a, b, c0 []float64, alpha, beta float64, m, k, n int) []float64 {
	c := make([]float64, m*n)
	for i := 0; i < m; i++ {
		row := c[i*n : i*n+n]
		for l := 0; l < k; l++ {
			x, br := a[i*k+l], b[l*n:l*n+n]
			for jj := range row {
				row[jj] = math.FMA(x, br[jj], row[jj])
			}
		}
	}
	ozaki.Epilogue(c, alpha, beta, c0)
	return c
}

// nativeFaster is ADP's performance heuristic (the paper: fall back when
// emulation would not pay): the slice products at the INT8 matrix peak
// plus the element-wise passes' traffic at the memory bandwidth, against
// 2mnk at the native FP64 peak.
func (j *ozakiJob) nativeFaster(s int) bool {
	p := &j.p.GEMMParams
	m, k, n := float64(p.M), float64(p.K), float64(p.N)
	int8Peak, _ := j.mach.Peak(j.tg.matrixPeak[fp.INT8])
	native, _ := j.nativePeak(j.mach)
	prods := 0
	for _, g := range ozakiDiagonals(s, j.p.Products == "square") {
		prods += g.pairs()
	}
	diags := float64(len(ozakiDiagonals(s, j.p.Products == "square")))
	bytes := float64((8+float64(s))*(float64(m*k)+float64(k*n))) + float64(8*diags*m*n) + float64(8*m*n)
	emul := float64(prods)*2*m*n*k/int8Peak + bytes/float64(j.mach.GM.Bandwidth)
	return 2*m*n*k/native <= emul
}

// adp reports whether ADP's kernels (scan, ESC, decision) run.
func (j *ozakiJob) adp() bool { return j.p.Precision != ozakiFixed }

// layout lays out global memory and builds the kernels' plans. The slice
// GEMMs run per k-chunk (package ozaki's Chunks: one chunk unless k is
// beyond what INT32 holds exactly) and per diagonal, chunk-major — the
// recombination's order. A's digits are an m × s·k matrix whose row holds,
// chunk by chunk, slice 1's digits of the chunk, then slice 2's …; B's an
// s·k × n matrix holding, chunk by chunk, slice s's rows of the chunk, then
// slice s−1's …: a diagonal's pairs (t, d−t), t increasing, are then one
// contiguous column range of A and row range of B — one INT8 GEMM over
// the concatenated k.
func (j *ozakiJob) layout() error {
	if j.p.Method == ozakiII {
		return j.crtLayout()
	}
	p := &j.p.GEMMParams
	m, k, n := int64(p.M), int64(p.K), int64(p.N)
	s := int64(j.slices)
	j.kb = (p.K + j.p.ESCBlock - 1) / j.p.ESCBlock
	set := j.p.productSet()
	j.diags = ozakiDiagonals(j.slices, j.p.Products == "square")
	j.chunk = ozaki.Chunks(p.K, j.slices, set)
	j.nchunks = (p.K + j.chunk - 1) / j.chunk
	j.nplanes = j.nchunks * len(j.diags)
	if err := j.layoutGM(s, j.adp(), "the slices"); err != nil {
		return err
	}
	if j.fallback {
		return j.nativeDGEMM("ozaki/native-dgemm")
	}
	j.diagPlans, j.planDiag = nil, nil
	plane := j.gmPlanes
	for c := 0; c < j.nchunks; c++ {
		base := int64(c) * s * int64(j.chunk) // the chunk's first digit column of A (row of B)
		lc := int64(min(j.chunk, p.K-c*j.chunk))
		for _, g := range j.diags {
			dp := *p
			dp.K = g.pairs() * int(lc)
			dp.Kind = "ozaki"
			dp.together = j.gemmsTogether(len(j.diags))
			pl, err := newGPUGEMMPlan(j.file, dp, j.mach, fp.INT8, gpuShape{})
			if err != nil {
				return err
			}
			name := fmt.Sprintf("ozaki/d%d", g.d)
			if j.nchunks > 1 {
				name += fmt.Sprintf(".c%d", c)
			}
			aCol := base + int64(g.tmin-1)*lc
			bRow := base + (s-int64(g.d-g.tmin))*lc
			pl.lda = s * k
			pl.ops = &gpuOperands{name: name, gmA: []int64{j.gmDigitsA + aCol}, gmB: []int64{j.gmDigitB + bRow*n},
				mmas: []gpuProduct{{first: true}}, accs: []gpuAcc{{}}}
			pl.gmC = plane
			plane += 4 * m * n
			j.diagPlans = append(j.diagPlans, pl)
			j.planDiag = append(j.planDiag, g.d)
		}
	}
	return nil
}

// scanGrids are ADP's first kernel: the Inf/NaN scan fused with the
// exponent tables ESC reads — per block of esc_block elements along k the
// largest and smallest exponent (2 × INT16) and each row's (column's)
// largest. A's blocks are row segments (or runs of short rows:
// lineBlocks); B's are panels of esc_block rows × ozakiESCTile columns,
// each writing its columns' entries of one block.
func (j *ozakiJob) scanGrids() []isa.Grid {
	p := &j.p.GEMMParams
	b := j.p.ESCBlock
	nA, segA := lineBlocks(p.M, p.K, j.tg.threads(streamWarps))
	ncp := (p.N + ozakiESCTile - 1) / ozakiESCTile
	nB := j.kb * ncp
	scan := streamGrid(j.tg, "ozaki/scan", nA+nB, func(i int) streamBlock {
		if i < nA {
			sg := segA(i)
			r, cnt := int64(sg.r), int64(sg.elems())
			tab := r*int64(j.kb) + int64(sg.c0/b)
			return streamBlock{
				reads:  []gmSpan{{j.gmA64 + 8*(r*int64(p.K)+int64(sg.c0)), 8 * cnt}},
				writes: []gmSpan{{j.gmTabA + 4*tab, 4 * int64(sg.rows) * int64((sg.n+b-1)/b)}, {j.gmScaleA + 4*r, 4 * int64(sg.rows)}},
				work:   []vecWork{{ozakiScanOps * int(cnt), fp.INT32}},
			}
		}
		i -= nA
		lb, cp := i/ncp, i%ncp
		r0, c0 := lb*b, cp*ozakiESCTile
		rows, cols := min(b, p.K-r0), min(ozakiESCTile, p.N-c0)
		var reads []gmSpan
		for r := r0; r < r0+rows; r++ {
			reads = append(reads, gmSpan{j.gmB64 + 8*(int64(r)*int64(p.N)+int64(c0)), 8 * int64(cols)})
		}
		tab := (int64(cp)*int64(j.kb) + int64(lb)) * ozakiESCTile
		return streamBlock{reads: reads,
			writes: []gmSpan{{j.gmTabB + 4*tab, 4 * int64(cols)}, {j.gmScaleB + 4*int64(c0), 4 * int64(cols)}},
			work:   []vecWork{{ozakiScanOps * rows * cols, fp.INT32}}}
	})
	return []isa.Grid{scan}
}

// escGrid is the coarsened ESC: a (max, +) "GEMM" over the exponent tables,
// one block per ozakiESCTile × ozakiESCTile outputs reading its rows' and
// columns' tables, reducing to one maximum (an atomic max).
func (j *ozakiJob) escGrid() isa.Grid {
	p := &j.p.GEMMParams
	nrb, ncb := (p.M+ozakiESCTile-1)/ozakiESCTile, (p.N+ozakiESCTile-1)/ozakiESCTile
	ops := ozakiESCOps
	if j.dpx {
		ops = ozakiESCOpsDPX
	}
	return streamGrid(j.tg, "ozaki/esc", nrb*ncb, func(i int) streamBlock {
		bi, bj := i/ncb, i%ncb
		rows, cols := min(ozakiESCTile, p.M-bi*ozakiESCTile), min(ozakiESCTile, p.N-bj*ozakiESCTile)
		kb := int64(j.kb)
		return streamBlock{
			reads: []gmSpan{{j.gmTabA + 4*int64(bi*ozakiESCTile)*kb, 4 * int64(rows) * kb},
				{j.gmTabB + 4*int64(bj)*kb*ozakiESCTile, 4 * kb * ozakiESCTile}},
			writes: []gmSpan{{j.gmESC, 4}},
			work:   []vecWork{{ops * rows * cols * j.kb, fp.INT32}},
		}
	})
}

// decisionGrid is ADP's decision on the GPU (no host synchronization): one
// block reads ESC and the scan's Inf/NaN flag and writes the slice count
// the next kernels read.
func (j *ozakiJob) decisionGrid() isa.Grid {
	return streamGrid(j.tg, "ozaki/adp", 1, func(int) streamBlock {
		return streamBlock{reads: []gmSpan{{j.gmESC, 4}}, writes: []gmSpan{{j.gmESC, 4}},
			work: []vecWork{{ozakiDecisionOps, fp.INT32}}}
	})
}

// sliceGrids cut A (per row) and B (per column) into the slices' INT8
// digits: A's m × s·k digit matrix (row i: slice 1's k digits, then slice
// 2's …), B's s·k × n one with slice s's k rows first.
func (j *ozakiJob) sliceGrids() []isa.Grid {
	p := &j.p.GEMMParams
	s := int64(j.slices)
	k, n := int64(p.K), int64(p.N)
	ops := ozakiSliceOps + ozakiSliceOpsEach*j.slices
	threads := j.tg.threads(streamWarps)
	nA, segA := lineBlocks(p.M, p.K, threads)
	a := streamGrid(j.tg, "ozaki/slice-a", nA, func(i int) streamBlock {
		sg := segA(i)
		r, c0, cnt := int64(sg.r), int64(sg.c0), int64(sg.elems())
		var w []gmSpan
		if sg.rows == 1 {
			for t := int64(0); t < s; t++ {
				w = append(w, gmSpan{j.gmDigitsA + r*s*k + t*k + c0, cnt})
			}
		} else { // whole rows: their digits are one range
			w = []gmSpan{{j.gmDigitsA + r*s*k, s * cnt}}
		}
		return streamBlock{
			reads:  []gmSpan{{j.gmA64 + 8*(r*k+c0), 8 * cnt}, {j.gmScaleA + 4*r, 4 * int64(sg.rows)}},
			writes: w, work: []vecWork{{ops * int(cnt), fp.INT32}}}
	})
	nB, segB := lineBlocks(p.K, p.N, threads)
	b := streamGrid(j.tg, "ozaki/slice-b", nB, func(i int) streamBlock {
		sg := segB(i)
		l, c0, cnt := int64(sg.r), int64(sg.c0), int64(sg.elems())
		var w []gmSpan
		for u := int64(1); u <= s; u++ {
			w = append(w, gmSpan{j.gmDigitB + ((s-u)*k+l)*n + c0, cnt})
		}
		return streamBlock{
			reads:  []gmSpan{{j.gmB64 + 8*(l*n+c0), 8 * cnt}, {j.gmScaleB + 4*c0, 4 * int64(sg.n)}},
			writes: w, work: []vecWork{{ops * int(cnt), fp.INT32}}}
	})
	return []isa.Grid{a, b}
}

// recombineGrid converts the INT32 planes to FP64, weights and sums them in
// the recombination's order, scales by the row and column exponents and
// applies alpha and beta, storing C.
func (j *ozakiJob) recombineGrid() isa.Grid {
	p := &j.p.GEMMParams
	n := int64(p.N)
	ops := ozakiRecombineOps*j.nplanes + 1
	if j.alpha != 1 {
		ops++
	}
	if j.p.Beta != 0 {
		ops += 2
	}
	nb, seg := lineBlocks(p.M, p.N, j.tg.threads(streamWarps))
	return streamGrid(j.tg, "ozaki/recombine", nb, func(i int) streamBlock {
		sg := seg(i)
		at, cnt := int64(sg.r)*n+int64(sg.c0), sg.elems()
		reads := j.planeReads(sg)
		return streamBlock{reads: reads, writes: []gmSpan{{j.gmC + 8*at, 8 * int64(cnt)}},
			work: []vecWork{{ops * cnt, fp.FP64}}}
	})
}

// layoutGM lays out global memory: FP64 A, B and C (and C0), the row and
// column scales, ADP's exponent tables (adp), pieces bytes per element of A
// and of B (the digits or residues; none on a fallback) and the INT32
// planes. what names the pieces in the capacity error.
func (j *ozakiJob) layoutGM(pieces int64, adp bool, what string) error {
	p := &j.p.GEMMParams
	m, k, n := int64(p.M), int64(p.K), int64(p.N)
	align := func(x int64) int64 { return (x + 511) &^ 511 }
	at := int64(0)
	next := func(bytes int64) int64 {
		a := at
		at = align(at + bytes)
		return a
	}
	j.gmA64, j.gmB64, j.gmC = next(8*m*k), next(8*k*n), next(8*m*n)
	if j.p.Beta != 0 {
		j.gmC0 = next(8 * m * n)
	}
	j.gmScaleA, j.gmScaleB = next(4*m), next(4*n)
	if adp {
		kb, ncp := int64(j.kb), (n+ozakiESCTile-1)/ozakiESCTile
		j.gmTabA, j.gmTabB, j.gmESC = next(4*m*kb), next(4*kb*ncp*ozakiESCTile), next(4)
	}
	if !j.fallback {
		j.gmDigitsA, j.gmDigitB = next(pieces*m*k), next(pieces*k*n)
		j.gmPlanes = next(4 * m * n * int64(j.nplanes))
	}
	j.gmEnd = at
	if at > int64(j.mach.GM.Capacity) {
		return limitedBy(keyError(j.file, "m", "FP64 A, B and C, %s and the INT32 products need %d bytes of global memory; machine %s has %d (gm.capacity)",
			what, at, j.mach.Name, int64(j.mach.GM.Capacity)), "machine.gm.capacity")
	}
	return nil
}

// nativeDGEMM builds the fallback: the library's DGEMM on A, B and C.
func (j *ozakiJob) nativeDGEMM(kind string) error {
	np := j.p.GEMMParams
	np.Kind = kind
	np.Tiling.CTAGroup = 0 // cta_group applies to the INT8 GEMMs; FP64 runs on warp-level DMMA
	pl, err := newGPUGEMMPlan(j.file, np, j.mach, fp.FP64, gpuShape{})
	if err != nil {
		return err
	}
	pl.gmA, pl.gmB, pl.gmC = j.gmA64, j.gmB64, j.gmC
	j.native = pl
	return nil
}

// gemmsTogether is how many INT8 GEMMs launch in one grid with each
// (gemms: grouped: every chunk's perChunk GEMMs — their tiles alike, from
// one m and n; separate: one).
func (j *ozakiJob) gemmsTogether(perChunk int) int {
	if j.p.GEMMs == "separate" {
		return 1
	}
	return j.nchunks * perChunk
}

// gemmGrids are the INT8 GEMMs' launches: one grid holding every GEMM's
// blocks, in order (gemms: grouped — a grouped GEMM: the blocks of all
// GEMMs share the machine, one launch), or one grid each (separate).
// Grouping needs one block shape (and cluster size: every GEMM's CTA count
// is then a multiple of it); GEMMs whose tiles differ launch apart.
func (j *ozakiJob) gemmGrids(name string) []isa.Grid {
	// Runs of GEMMs that can share a launch, as their grids.
	var runs [][]isa.Grid
	for _, pl := range j.diagPlans {
		g := pl.grid()
		if n := len(runs); n > 0 && j.p.GEMMs != "separate" {
			last := runs[n-1][0]
			if last.Resources == g.Resources && last.Cluster == g.Cluster {
				runs[n-1] = append(runs[n-1], g)
				continue
			}
		}
		runs = append(runs, []isa.Grid{g})
	}
	var grids []isa.Grid
	for _, run := range runs {
		if len(run) == 1 {
			grids = append(grids, run[0])
			continue
		}
		grids = append(grids, groupedGrid(name, run))
	}
	return grids
}

// planeReads are what the recombination (ozaki-i) or reconstruction
// (ozaki-ii) of block sg's outputs reads: every INT32 plane, the row and
// column scales, and C0 when beta ≠ 0.
func (j *ozakiJob) planeReads(sg lineBlock) []gmSpan {
	p := &j.p.GEMMParams
	at, mn := int64(sg.r)*int64(p.N)+int64(sg.c0), int64(p.M)*int64(p.N)
	cnt := int64(sg.elems())
	var reads []gmSpan
	for x := 0; x < j.nplanes; x++ {
		reads = append(reads, gmSpan{j.gmPlanes + 4*(int64(x)*mn+at), 4 * cnt})
	}
	reads = append(reads, gmSpan{j.gmScaleA + 4*int64(sg.r), 4 * int64(sg.rows)}, gmSpan{j.gmScaleB + 4*int64(sg.c0), 4 * int64(sg.n)})
	if j.p.Beta != 0 {
		reads = append(reads, gmSpan{j.gmC0 + 8*at, 8 * int64(cnt)})
	}
	return reads
}

// nativeEpilogueGrid applies alpha and beta after the fallback's DGEMM
// (which computes A·B into C): C = α·C + β·C0, two FP64 operations per
// element and one more with β.
func (j *ozakiJob) nativeEpilogueGrid() isa.Grid {
	p := &j.p.GEMMParams
	n := int64(p.N)
	ops := 1
	if j.p.Beta != 0 {
		ops += 2
	}
	nb, seg := lineBlocks(p.M, p.N, j.tg.threads(streamWarps))
	return streamGrid(j.tg, "ozaki/native-epilogue", nb, func(i int) streamBlock {
		sg := seg(i)
		at, cnt := int64(sg.r)*n+int64(sg.c0), sg.elems()
		reads := []gmSpan{{j.gmC + 8*at, 8 * int64(cnt)}}
		if j.p.Beta != 0 {
			reads = append(reads, gmSpan{j.gmC0 + 8*at, 8 * int64(cnt)})
		}
		return streamBlock{reads: reads, writes: []gmSpan{{j.gmC + 8*at, 8 * int64(cnt)}}, work: []vecWork{{ops * cnt, fp.FP64}}}
	})
}

// reportESC writes ADP's ESC into a run's program report: esc when the
// coarse ESC bounds every pair, else esc_bounded false (the ESC value is
// then meaningless; the decision says "ESC unbounded").
func reportESC(prog map[string]any, esc int, bounded bool) {
	if bounded {
		prog["esc"] = esc
		return
	}
	prog["esc_bounded"] = false
}

// scaled reports whether alpha or beta make C more than A·B.
func (j *ozakiJob) scaled() bool { return j.alpha != 1 || j.p.Beta != 0 }

func (j *ozakiJob) Program() isa.Program {
	if j.p.Method == ozakiII {
		return j.crtProgram()
	}
	var grids []isa.Grid
	if j.adp() {
		grids = append(grids, j.scanGrids()...)
		grids = append(grids, j.escGrid(), j.decisionGrid())
	}
	if j.fallback {
		grids = append(grids, j.native.grid())
		if j.scaled() {
			grids = append(grids, j.nativeEpilogueGrid())
		}
	} else {
		grids = append(grids, j.sliceGrids()...)
		grids = append(grids, j.gemmGrids("ozaki/products")...)
		grids = append(grids, j.recombineGrid())
	}
	return isa.Program{Name: "ozaki", Generated: true, Grids: grids}
}

func (j *ozakiJob) Mode() arch.Mode { return modeFor(j.p.Numerics) }

// Prepare writes what the functional kernels read: FP64 A and B (the
// fallback's DGEMM), C0 (beta ≠ 0), and the digit matrices the slicing
// kernels — timed only — would have written, in the layout the slice GEMMs
// read (layout's comment).
func (j *ozakiJob) Prepare(chip *arch.Chip) error {
	if j.Mode() != arch.Functional {
		return nil
	}
	gm := chip.GM()
	if err := j.writeFloat64s(gm, j.gmA64, j.a); err != nil {
		return err
	}
	if err := j.writeFloat64s(gm, j.gmB64, j.b); err != nil {
		return err
	}
	if j.c0 != nil {
		if err := j.writeFloat64s(gm, j.gmC0, j.c0); err != nil {
			return err
		}
	}
	if j.fallback {
		return nil
	}
	if j.p.Method == ozakiII {
		return j.crtPrepare(chip)
	}
	p := &j.p.GEMMParams
	s, k, n := j.slices, p.K, p.N
	da := make([]byte, s*p.M*k)
	db := make([]byte, s*k*n)
	for c := 0; c < j.nchunks; c++ {
		c0, lc := c*j.chunk, min(j.chunk, k-c*j.chunk)
		base := c * s * j.chunk
		for t := 1; t <= s; t++ {
			if err := j.stoppedPreparing(); err != nil {
				return err
			}
			for i := 0; i < p.M; i++ {
				dst := da[i*s*k+base+(t-1)*lc:][:lc]
				for l, v := range j.pa[t-1][i*k+c0:][:lc] {
					dst[l] = byte(v)
				}
			}
			// B's slice u = t, stored at position s − t of the chunk.
			for l := 0; l < lc; l++ {
				dst := db[(base+(s-t)*lc+l)*n:][:n]
				for x, v := range j.pb[t-1][(c0+l)*n:][:n] {
					dst[x] = byte(v)
				}
			}
		}
	}
	if err := gm.Write(j.gmDigitsA, da); err != nil {
		return err
	}
	return gm.Write(j.gmDigitB, db)
}

// writeFloat64s writes v to gm at addr a block at a time (8 MiB), asking
// the run's context between blocks: a 4096² matrix took ~0.5 s (a copy of
// the whole of it, as bytes, before), deaf to an interrupt. The blocks go
// in as they are (mem.GM.WriteFloat64s), not copied as bytes first.
func (j *ozakiJob) writeFloat64s(gm *mem.GM, addr int64, v []float64) error {
	for len(v) > 0 {
		if err := j.stoppedPreparing(); err != nil {
			return err
		}
		n := min(len(v), 1<<20)
		if err := gm.WriteFloat64s(addr, v[:n]); err != nil {
			return err
		}
		addr, v = addr+8*int64(n), v[n:]
	}
	return nil
}

// stoppedPreparing is the error of Prepare stopped by the run's context
// (nil while it is not done).
func (j *ozakiJob) stoppedPreparing() error {
	return stopped(j.runCtx(), "writing the inputs to simulated memory")
}

func (j *ozakiJob) Outputs() []Output { return j.outs }

// ozakiOutputs is an ozaki run's result arrays: C, then the inputs beside
// it (C0 where β ≠ 0), as the GEMM kinds write theirs — a result on drawn
// inputs can be checked outside. The same on every machine kind.
func ozakiOutputs(p *GEMMParams, c, a, b, c0 []float64) []Output {
	outs := []Output{{Name: "C", Shape: []int{p.M, p.N}, F64: c}, {Name: "A", Shape: []int{p.M, p.K}, F64: a},
		{Name: "B", Shape: []int{p.K, p.N}, F64: b}}
	if c0 != nil {
		outs = append(outs, Output{Name: "C0", Shape: []int{p.M, p.N}, F64: c0})
	}
	return outs
}

// products is the number of INT8 slice products (ozaki-ii: moduli).
func (j *ozakiJob) products() int {
	if j.p.Method == ozakiII {
		return len(j.moduli)
	}
	n := 0
	for _, g := range j.diags {
		n += g.pairs()
	}
	return n
}

func (j *ozakiJob) Finish(chip *arch.Chip, st *arch.Stats, rep *report.Report) error {
	p := &j.p.GEMMParams
	flops := 2 * float64(p.M) * float64(p.N) * float64(p.K)
	int8Peak, _ := chip.M.Peak(j.tg.matrixPeak[fp.INT8])
	nativePeak, unit := j.nativePeak(chip.M)
	if j.fallback {
		reportThroughput(rep, st, flops, nativePeak, fmt.Sprintf("fp64 (2mnk; peak = native FP64 %s peak)", unit))
	} else {
		reportThroughput(rep, st, flops, int8Peak/float64(j.products()),
			fmt.Sprintf("fp64-equivalent (2mnk; peak = dense INT8 %s peak / %d %s)", j.tg.matrix, j.products(),
				map[bool]string{true: "moduli", false: "slice products"}[j.p.Method == ozakiII]))
	}
	prog := map[string]any{"kind": p.Kind, "m": p.M, "k": p.K, "n": p.N, "alpha": j.alpha, "beta": j.p.Beta,
		"precision": j.p.Precision, "mantissa_bits": j.p.bitsHeld(), "max_mantissa_bits": j.p.MaxMantissaBits,
		"esc_block": j.p.ESCBlock, "products": j.p.Products, "fallback_allowed": *j.p.Fallback,
		"fallback": j.fallback, "native_fp64_peak_tflops": nativePeak / 1e12, "native_fp64_unit": unit,
		"inputs": p.Inputs, "numerics": p.Numerics}
	prog["method"] = j.p.Method
	if j.p.Method == ozakiII {
		for _, k := range []string{"precision", "max_mantissa_bits", "esc_block", "products", "fallback_allowed"} {
			delete(prog, k)
		}
		prog["moduli"] = j.moduli
		prog["bits"] = crt.BitsFor(len(j.moduli), p.K)
		if j.p.Moduli != 0 { // (given moduli: the bits they hold, as given slices report theirs)
			prog["mantissa_bits"] = prog["bits"]
		}
		if !j.fallback {
			prog["int8_gemms"] = len(j.diagPlans)
			prog["tiling"] = j.diagPlans[0].tilingReport()
		}
	} else if !j.fallback {
		prog["slices"] = j.slices
		prog["slice_products"] = j.products()
		prog["int8_gemms"] = len(j.diagPlans)
		prog["tiling"] = j.diagPlans[0].tilingReport()
	}
	if j.fallback && j.native != nil {
		prog["tiling"] = j.native.tilingReport() // native DGEMM's
	}
	if j.escKnown {
		reportESC(prog, j.esc, j.plan.Bounded)
	}
	if j.reason != "" {
		prog["decision"] = j.reason
	}
	rep.Program = prog
	if err := j.numerics(chip, rep, prog); err != nil {
		return err
	}
	var timed []string
	pkg := "ozaki"
	switch {
	case j.p.Method == ozakiII:
		timed, pkg = append(timed, "scan"), "ozaki/crt"
		if !j.fallback {
			timed = append(timed, "residue", "reconstruction")
		}
	default:
		if j.adp() {
			timed = append(timed, "scan", "ESC")
		}
		if !j.fallback {
			timed = append(timed, "slicing", "recombination")
		}
	}
	if len(timed) > 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("the %s kernels are timed from their traffic and operation counts (programs/ozaki_kernels.go); their values come from package %s", strings.Join(timed, ", "), pkg))
	}
	return nil
}

// numerics reads (full) or computes (sampled) C and reports its error
// against the exact product, componentwise as the BLAS grading tests do
// (|C − AB| / (u·|A||B|), u = 2^−53) and as rel_fro/max_rel; with check,
// the simulated INT32 planes and C must equal the golden model's bits.
func (j *ozakiJob) numerics(chip *arch.Chip, rep *report.Report, prog map[string]any) error {
	p := &j.p.GEMMParams
	if p.Numerics == NumericsOff {
		return nil
	}
	var idx []int // the outputs compared (all: nil)
	var got []float64
	switch p.Numerics {
	case NumericsFull:
		c, err := j.simulatedC(chip, rep)
		if err != nil {
			return err
		}
		j.outs = ozakiOutputs(p, c, j.a, j.b, j.c0)
		if idx, got = sampleOutputs(c, p.M, p.N, p.K, p.Inputs.Seed, ozakiExactBudget); idx != nil {
			rep.Notes = append(rep.Notes, sampleOutputsNote(len(idx), p.M*p.N, ozakiExactBudget))
		}
	case NumericsSampled:
		var ok bool
		if idx, got, ok = j.sampledOutputsUntil(j.stop()); !ok {
			return j.stoppedNumerics()
		}
	}
	ref, abs, ok := j.referenceUntil(idx, j.stop())
	if !ok {
		return j.stoppedNumerics()
	}
	ozakiErrorReport(rep, prog, ref, got, abs, idx != nil, j.scaled(), !j.fallback && (ozaki.HasInfNaN(j.a) || ozaki.HasInfNaN(j.b)))
	return nil
}

// ozakiErrorReport reports C's error (got, at the outputs compared; sampled:
// not all of them) against the exact reference ref with the bounds abs
// (|A||B|; scaled: α ≠ 1 or β ≠ 0, the exact αAB + βC0 and |α||A||B| +
// |β||C0|, each rounded once): rep.Error and prog's componentwise_error. Outputs whose
// reference is ±Inf or NaN (an Inf or NaN in their row of A or column of
// B: the reference is IEEE's value) are counted apart, as are those whose
// bound is 0 or beyond the float64 range; sliced says that the slicing ran
// on inputs holding Inf or NaN (precision fixed: no scan), which it takes
// as 0.
func ozakiErrorReport(rep *report.Report, prog map[string]any, ref, got, abs []float64, sampled, scaled, sliced bool) {
	e := errReport(accuracy.Compare64(ref, got), sampled)
	what, bound := "", "|A||B|"
	note := "|C − AB| / (u·|A||B|), u = 2^−53; Grade A: max ≤ f(k)·u with f linear in k"
	if scaled {
		what, bound = "αAB + βC0, ", "|α||A||B| + |β||C0|"
		note = "|C − (αAB + βC0)| / (u·(|α||A||B| + |β||C0|)), u = 2^−53, αAB + βC0 exact then rounded once; Grade A: max ≤ f(k)·u with f linear in k"
	}
	e.Reference = "exact (" + what + "a long accumulator, rounded once to fp64)"
	st := ozaki.ComponentwiseStats(ref, got, abs)
	if st.NonFinite > 0 {
		e.Reference = "exact (" + what + "a long accumulator, rounded once to fp64; IEEE's ±Inf or NaN where A's row or B's column holds Inf or NaN)"
	}
	rep.Error = &e
	cw := map[string]any{"max_u": st.Max, "mean_u": st.Mean, "elements": st.Count,
		"note": note}
	for _, c := range []struct {
		key string
		n   int
	}{{"exact_zero", st.Skipped}, {"zero_bound_wrong", st.ZeroBoundWrong}, {"non_finite_reference", st.NonFinite},
		{"non_finite_differ", st.NonFiniteDiffer}, {"bound_overflow", st.BoundOverflow}} {
		if c.n > 0 {
			cw[c.key] = c.n
		}
	}
	prog["componentwise_error"] = cw
	if st.ZeroBoundWrong > 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("componentwise error: outputs with %s = 0 in fp64 (the reference 0) that differ from it: %d, counted as infinite errors", bound, st.ZeroBoundWrong))
	}
	if st.NonFinite > 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("componentwise error: outputs whose reference is ±Inf or NaN (Inf or NaN in A's row or B's column, or a sum beyond fp64): %d, not counted; of them differing from it: %d", st.NonFinite, st.NonFiniteDiffer))
		if math.IsInf(e.RelFro, 1) || math.IsNaN(e.RelFro) { // (e: C's error, computed above)
			rep.Notes = append(rep.Notes, finiteErrorNote(ref, got, st.NonFinite, st.NonFiniteDiffer))
		}
	}
	if st.BoundOverflow > 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("componentwise error: outputs whose %s is beyond the fp64 range: %d, not counted", bound, st.BoundOverflow))
	}
	if sliced {
		rep.Notes = append(rep.Notes, "precision fixed has no Inf/NaN scan: A or B hold Inf or NaN, which the slicing takes as 0, so the outputs they reach are not IEEE's (forced or dynamic precision routes such inputs to native DGEMM)")
	}
}

// simulatedC is the simulated C: the native DGEMM's (fallback; α and β
// applied as the epilogue kernel does), or the recombination of the INT32
// planes the simulated slice GEMMs wrote. With check, planes and C are
// compared with the golden model bit for bit.
func (j *ozakiJob) simulatedC(chip *arch.Chip, rep *report.Report) ([]float64, error) {
	p := &j.p.GEMMParams
	mn := p.M * p.N
	gm := chip.GM()
	if j.fallback {
		raw := make([]byte, 8*mn)
		if err := readResult(gm, j.gmC, raw); err != nil {
			return nil, err
		}
		c := make([]float64, mn)
		for i := range c {
			c[i] = math.Float64frombits(binary.LittleEndian.Uint64(raw[8*i:]))
		}
		ozaki.Epilogue(c, j.alpha, j.p.Beta, j.c0)
		if p.Check {
			want := fmaGEMM(j.a, j.b, j.c0, j.alpha, j.p.Beta, p.M, p.K, p.N)
			if err := sameFloat64s("C", c, want, p.N); err != nil {
				return nil, err
			}
			rep.Notes = append(rep.Notes, "check: the fallback's C (simulated DGEMM) equals the golden model (FP64 FMA chains) bit for bit")
		}
		return c, nil
	}
	if j.p.Method == ozakiII {
		return j.crtSimulatedC(chip, rep)
	}
	set := j.p.productSet()
	acc := make([]float64, mn)
	raw := make([]byte, 4*mn)
	d32 := make([]int32, mn)
	for x, pl := range j.diagPlans {
		if err := j.stoppedNumerics(); err != nil {
			return nil, err
		}
		if err := readResult(gm, pl.gmC, raw); err != nil {
			return nil, err
		}
		for i := range d32 {
			d32[i] = int32(binary.LittleEndian.Uint32(raw[4*i:]))
		}
		d := j.planDiag[x]
		if p.Check {
			c := x / len(j.diags)
			want := ozaki.DiagonalProducts(j.pa, j.pb, p.M, p.K, p.N, set, c*j.chunk, min(p.K, (c+1)*j.chunk), d)
			for i := range want {
				if d32[i] != want[i] {
					return nil, fmt.Errorf("%w: %s wrote D[%d][%d] = %d but the golden model gives %d", ErrCheckFailed, pl.name(), i/p.N, i%p.N, d32[i], want[i])
				}
			}
		}
		ozaki.Recombine(acc, d32, d)
	}
	ozaki.ApplyScales(acc, j.plan.ScalesA, j.plan.ScalesB, 0, p.M, 0, p.N)
	ozaki.Epilogue(acc, j.alpha, j.p.Beta, j.c0)
	rep.Notes = append(rep.Notes, fmt.Sprintf("numerics full: the %d INT8 slice GEMMs ran functionally (INT32 planes read back from simulated memory); the recombination of the planes follows package ozaki's order", len(j.diagPlans)))
	if p.Check {
		want := ozaki.GEMMTile(j.plan, j.pa, j.pb, 0, p.M, 0, p.N)
		ozaki.Epilogue(want, j.alpha, j.p.Beta, j.c0)
		if err := sameFloat64s("C", acc, want, p.N); err != nil {
			return nil, err
		}
		rep.Notes = append(rep.Notes, "check: every INT32 plane and C equal the golden model (package ozaki) bit for bit")
	}
	return acc, nil
}

// sameFloat64s compares two row-major results (n columns) bit for bit.
func sameFloat64s(name string, got, want []float64, n int) error {
	for i := range want {
		if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
			return fmt.Errorf("%w: simulated %s[%d][%d] = %g (%#016x) but the golden model gives %g (%#016x)", ErrCheckFailed,
				name, i/n, i%n, got[i], math.Float64bits(got[i]), want[i], math.Float64bits(want[i]))
		}
	}
	return nil
}

// ozakiSampleTile is the side of the output tiles numerics sampled computes.
const ozakiSampleTile = 32

// sampledOutputs computes sample_tiles random ozakiSampleTile² output tiles
// with the golden model and returns their indices in C and values.
func (j *ozakiJob) sampledOutputs() ([]int, []float64) {
	idx, got, _ := j.sampledOutputsUntil(nil)
	return idx, got
}

// sampledOutputsUntil is sampledOutputs asking stop (nil: never) before
// each tile (one of 4096³'s took ~0.1 s): false once it says true.
func (j *ozakiJob) sampledOutputsUntil(stop func() bool) (_ []int, _ []float64, ok bool) {
	p := &j.p.GEMMParams
	nrb, ncb := (p.M+ozakiSampleTile-1)/ozakiSampleTile, (p.N+ozakiSampleTile-1)/ozakiSampleTile
	perm := NewRand(p.Inputs.Seed, 99).Perm(nrb * ncb)
	var idx []int
	var got []float64
	for _, t := range perm[:min(p.SampleTiles, len(perm))] {
		if stop != nil && stop() {
			return nil, nil, false
		}
		r0, c0 := t/ncb*ozakiSampleTile, t%ncb*ozakiSampleTile
		rows, cols := min(ozakiSampleTile, p.M-r0), min(ozakiSampleTile, p.N-c0)
		var tile []float64
		if j.fallback {
			tile = make([]float64, rows*cols)
			for r := 0; r < rows; r++ {
				for c := 0; c < cols; c++ {
					acc := 0.0
					for l := 0; l < p.K; l++ {
						acc = math.FMA(j.a[(r0+r)*p.K+l], j.b[l*p.N+c0+c], acc)
					}
					tile[r*cols+c] = acc
				}
			}
		} else if j.p.Method == ozakiII {
			tile = crt.GEMMTile(j.crtPlan, j.ra, j.rb, r0, rows, c0, cols)
		} else {
			tile = ozaki.GEMMTile(j.plan, j.pa, j.pb, r0, rows, c0, cols)
		}
		var c0s []float64
		for r := 0; r < rows; r++ {
			for c := 0; c < cols; c++ {
				idx = append(idx, (r0+r)*p.N+c0+c)
				if j.c0 != nil {
					c0s = append(c0s, j.c0[(r0+r)*p.N+c0+c])
				}
			}
		}
		ozaki.Epilogue(tile, j.alpha, j.p.Beta, c0s)
		got = append(got, tile...)
	}
	return idx, got, true
}

// ozakiExactBudget is the products numerics full's exact reference
// computes (k an output) before it samples C's outputs (sampleOutputs);
// a variable for the tests.
var ozakiExactBudget int64 = 1 << 27

// reference returns the exact α·AB + β·C0, rounded once to FP64, and the
// componentwise bound |α||A||B| + |β||C0| (also exact, rounded once) at the
// outputs idx (nil: every output).
func (j *ozakiJob) reference(idx []int) (ref, abs []float64) {
	ref, abs, _ = j.referenceUntil(idx, nil)
	return ref, abs
}

// referenceUntil is reference asking stop (nil: never) as
// exactGEMM64Until does: false once it says true. With α = 1 and β = 0 it
// is exactGEMM64's AB and |A||B|; else each output is ozaki.ScaledDot's (not
// the epilogue's roundings of α·RN(AB) and β·C0).
func (j *ozakiJob) referenceUntil(idx []int, stop func() bool) (ref, abs []float64, ok bool) {
	p := &j.p.GEMMParams
	if !j.scaled() {
		return exactGEMM64Until(j.a, j.b, p.M, p.K, p.N, idx, true, stop)
	}
	cnt := outputCount(p.M, p.N, idx)
	ref, abs = make([]float64, cnt), make([]float64, cnt)
	ok = exactOutputs(j.a, j.b, p.M, p.K, p.N, idx, stop, func(x, i int, row, col []float64) {
		c := 0.0
		if j.c0 != nil {
			c = j.c0[i]
		}
		ref[x], abs[x] = ozaki.ScaledDot(row, col, j.alpha, j.p.Beta, c)
	})
	if !ok {
		return nil, nil, false
	}
	return ref, abs, true
}

// exactGEMM64 returns AB (A m×k, B k×n, row-major) computed exactly and
// rounded once to FP64, and with withAbs |A||B| (nil without), at the
// outputs idx (nil: every output); where A's row or B's column holds ±Inf
// or NaN, IEEE's values (ozaki.ExactDot, ozaki.AbsDot).
func exactGEMM64(a, b []float64, m, k, n int, idx []int, withAbs bool) (ref, abs []float64) {
	ref, abs, _ = exactGEMM64Until(a, b, m, k, n, idx, withAbs, nil)
	return ref, abs
}

// outputCount is the outputs idx names of an m×n C (nil: every one).
func outputCount(m, n int, idx []int) int {
	if idx == nil {
		return m * n
	}
	return len(idx)
}

// exactGEMM64Until is exactGEMM64 asking stop (nil: never) every
// stopwork.Every products: false once it says true (4096³'s 8192 sampled
// outputs took ~4 s, more under load, deaf to an interrupt).
func exactGEMM64Until(a, b []float64, m, k, n int, idx []int, withAbs bool, stop func() bool) (ref, abs []float64, ok bool) {
	ref = make([]float64, outputCount(m, n, idx))
	if withAbs {
		abs = make([]float64, len(ref))
	}
	ok = exactOutputs(a, b, m, k, n, idx, stop, func(x, _ int, row, col []float64) {
		if withAbs {
			ref[x], abs[x] = ozaki.DotAndAbs(row, col)
		} else {
			ref[x] = ozaki.ExactDot(row, col)
		}
	})
	if !ok {
		return nil, nil, false
	}
	return ref, abs, true
}

// exactOutputs calls out(x, i, row, col) for each output i = idx[x] of C
// (m×n; idx nil: every output, x = i) with A's row and B's column of it
// (A m×k, B k×n, row-major), asking stop (nil: never) every
// stopwork.Every products: false once it says true. It visits the outputs
// a column of C at a time (B's column gathered once for all of them: a
// strided gather of k values per output, outputs row by row, had been a
// tenth of an exact reference's time), on up to cube.Workers goroutines
// (their columns interleaved) where there are at least exactParallel
// products: out and stop must be safe to call from several at once (out
// for distinct x); every output is computed on its own, so the results do
// not depend on the goroutines.
func exactOutputs(a, b []float64, m, k, n int, idx []int, stop func() bool, out func(x, i int, row, col []float64)) bool {
	count := outputCount(m, n, idx)
	var xs []int // idx's outputs by column (idx nil: C's, column by column)
	if idx != nil {
		xs = make([]int, len(idx))
		for x := range xs {
			xs[x] = x
		}
		slices.SortStableFunc(xs, func(p, q int) int { return cmp.Compare(idx[p]%n, idx[q]%n) })
	}
	workers := 1
	if int64(count)*int64(k) >= exactParallel {
		workers = max(1, min(cube.Workers(), count))
	}
	// run visits the outputs at positions w, w+workers, … of the column
	// order: every output once.
	run := func(w int) bool {
		col := make([]float64, k)
		lastCol := -1
		st := stopwork.New(stop)
		for pos := w; pos < count; pos += workers {
			x, i := pos, 0
			if idx != nil {
				x = xs[pos]
				i = idx[x]
			} else {
				r, c := pos%m, pos/m
				x = r*n + c
				i = x
			}
			if st.StopBefore(max(k, 1)) {
				return false
			}
			r, c := i/n, i%n
			if c != lastCol {
				for l := range col {
					col[l] = b[l*n+c]
				}
				lastCol = c
			}
			out(x, i, a[r*k:(r+1)*k], col)
		}
		return true
	}
	if workers == 1 {
		return run(0)
	}
	ok := make([]bool, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() { ok[w] = run(w) })
	}
	wg.Wait()
	return !slices.Contains(ok, false)
}

// exactParallel is the products from which exactOutputs shares its outputs
// among goroutines.
const exactParallel = 1 << 22

// nativePeak is the machine's FP64 peak for native DGEMM: its FP64 matrix
// units, else its vector units.
func (j *ozakiJob) nativePeak(m *machines.Machine) (float64, string) {
	if j.tg.hasMatrix(fp.FP64) {
		pk, _ := m.Peak(j.tg.matrixPeak[fp.FP64])
		return pk, j.tg.matrix
	}
	return float64(m.Cores) * j.tg.clock * j.tg.vectorRate[fp.FP64], j.tg.vector
}

// kBatched reports whether a kernel ran batched k-steps (--k-batch): the
// native DGEMM of a fallback on the CUDA cores (the INT8 GEMMs run on the
// tensor cores, never batched).
func (j *ozakiJob) kBatched() bool { return j.fallback && j.native != nil && j.native.batch > 1 }

// finiteErrorNote says what the normwise error (rel_fro +Inf, bits 0) is
// where references are ±Inf or NaN — nonFinite of them, differ of those
// differing from it —, and gives it over the other outputs: a C equal to
// IEEE's value everywhere read as "no accuracy" (ozaki with α = β = 1e308).
func finiteErrorNote(ref, got []float64, nonFinite, differ int) string {
	var acc accuracy.Accumulator
	for i, r := range ref {
		if !math.IsInf(r, 0) && !math.IsNaN(r) {
			acc.Add(r, got[i])
		}
	}
	m := acc.Metrics()
	over := "no output has a finite reference"
	if m.N > 0 {
		over = fmt.Sprintf("over the %d outputs whose reference is finite: rel_fro %.3e, max_rel %.3e, bits %.1f", m.N, m.RelFro, m.MaxRel, m.Bits)
		if m.NonFinite > 0 {
			over += fmt.Sprintf(" (C is ±Inf or NaN at %d of them: computed past fp64's range where the exact value, rounded once, is not)", m.NonFinite)
		}
	}
	return fmt.Sprintf("normwise error: its rel_fro and bits count the %d outputs whose reference is ±Inf or NaN (%d of them differ from it); %s", nonFinite, differ, over)
}
