package programs

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/davinci-sim/davinci-sim/arch"
	"github.com/davinci-sim/davinci-sim/fp"
	"github.com/davinci-sim/davinci-sim/isa"
	"github.com/davinci-sim/davinci-sim/machines"
	"github.com/davinci-sim/davinci-sim/report"
)

func init() {
	register(&Kind{Name: "ozaki", Params: reflect.TypeFor[OzakiParams](), Machines: []string{"nvidia-sm", "amd-cu"}, Example: "b200-ozaki.yaml",
		Summary: "FP64 GEMM from INT8 matrix units (Ozaki scheme I with ESC and ADP, as cuBLAS's emulated DGEMM): scan, ESC, slicing, INT8 slice GEMMs, FP64 recombination — or the native DGEMM fallback",
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
	// Slices fixes the slice count (precision fixed or forced) instead of
	// mantissa_bits.
	Slices   int    `mapstructure:"slices"`
	Fallback *bool  `mapstructure:"fallback"`  // ADP may run native DGEMM instead (default true)
	ESCBlock int    `mapstructure:"esc_block"` // ESC's coarsening block along k (default 32)
	Products string `mapstructure:"products"`  // triangular (default) | square
}

// Ozaki precisions.
const (
	ozakiFixed   = "fixed"
	ozakiForced  = "forced"
	ozakiDynamic = "dynamic"
)

// ozakiMaxBits is the most mantissa bits a run may ask for (the paper's
// Grade-A runs use up to 200).
const ozakiMaxBits = 200

// Exactness of the slice GEMMs: |a·b| ≤ 128·128 = 2^14 for INT8 digits,
// so a sum of at most (2^31−1)/2^14 = 131071 products cannot leave INT32.
// ozakiChunk is the longest (concatenated) k one INT8 GEMM accumulates:
// the largest multiple of 256 (every INT8 tile's bk divides it) not above
// that bound.
const (
	ozakiMaxExact = (1<<31 - 1) / (1 << 14)
	ozakiChunk    = ozakiMaxExact / 256 * 256
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

	alpha     float64
	slices    int
	diags     []ozakiDiag
	nplanes   int
	fallback  bool
	reason    string
	esc       int  // ESC (with its +1) when computed
	escKnown  bool // ESC was computed (numerics on, ADP runs)
	kb        int  // ESC blocks along k
	dpx       bool // packed fused add-max instructions for ESC
	native    *gpuGEMMPlan
	diagPlans []*gpuGEMMPlan

	// global memory
	gmA64, gmB64, gmC   int64
	gmScaleA, gmScaleB  int64
	gmTabA, gmTabB      int64
	gmESC               int64
	gmDigitsA, gmDigitB int64
	gmPlanes            int64

	outs []Output
}

// ozakiDiag is one diagonal t+u = d of the product set: its slice pairs,
// concatenated along k into one INT8 GEMM (split into chunks of at most
// ozakiChunk).
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

// ozakiSlicesFor is the slice count holding bits mantissa bits: s slices of
// balanced INT8 digits hold 8s − 1.
func ozakiSlicesFor(bits int) int { return (bits + 1 + 7) / 8 }

func buildOzaki(f *File, m *machines.Machine, o Options) (Job, error) {
	bad := func(key, format string, a ...any) error {
		return fmt.Errorf("%s: key %q: %s", f.Path, key, fmt.Sprintf(format, a...))
	}
	tg, ok := newGPUTarget(m)
	if !ok {
		return nil, bad("machine", "ozaki runs on GPU machines (nvidia-sm, amd-cu)")
	}
	var op OzakiParams
	if err := f.Decode(&op, o); err != nil {
		return nil, err
	}
	p := &op.GEMMParams
	o.apply(&p.Numerics, &p.Inputs.Seed)
	for _, d := range []struct {
		key string
		set bool
	}{{"tiling.nfused", p.Tiling.NFused != 0}, {"buffering", p.Buffering != ""}, {"accumulation", p.Accumulation != ""},
		{"cores", p.Cores != 0}, {"split_chunk", p.SplitChunk != 0}, {"split", p.Split != (Split{})}, {"unit", p.Unit != ""}, {"input", p.Input != ""}} {
		if d.set {
			return nil, bad(d.key, "does not apply to ozaki: the slice GEMMs are INT8 on the %s, the fallback is the library's DGEMM", tg.units)
		}
	}
	if err := p.gpuDefaults(f.Path); err != nil {
		return nil, err
	}
	if p.SampleTiles < 1 {
		return nil, bad("sample_tiles", "must be ≥ 1 (got %d)", p.SampleTiles)
	}
	if p.Inputs.A != "" || p.Inputs.B != "" {
		return nil, bad("inputs.a", "ozaki draws its FP64 inputs (inputs.distribution, offset_exponent, seed); .npy inputs are not read yet")
	}
	if !tg.hasMatrix(fp.INT8) {
		return nil, bad("machine", "the slice GEMMs need INT8 %s; %s has none", tg.units, tg.describe())
	}
	if op.Precision == "" {
		op.Precision = ozakiDynamic
	}
	switch op.Precision {
	case ozakiFixed, ozakiForced, ozakiDynamic:
	default:
		return nil, bad("precision", "must be fixed, forced or dynamic (got %+q)", op.Precision)
	}
	if op.MantissaBits == 0 {
		op.MantissaBits = 53
	}
	if op.MantissaBits < 1 || op.MantissaBits > ozakiMaxBits {
		return nil, bad("mantissa_bits", "must be in 1..%d (got %d)", ozakiMaxBits, op.MantissaBits)
	}
	if op.MaxMantissaBits == 0 {
		op.MaxMantissaBits = ozakiMaxBits
	}
	if op.MaxMantissaBits < op.MantissaBits || op.MaxMantissaBits > ozakiMaxBits {
		return nil, bad("max_mantissa_bits", "must be in mantissa_bits..%d = %d..%d (got %d)", ozakiMaxBits, op.MantissaBits, ozakiMaxBits, op.MaxMantissaBits)
	}
	maxSlices := ozakiSlicesFor(ozakiMaxBits)
	if op.Slices != 0 {
		if op.Precision == ozakiDynamic {
			return nil, bad("slices", "applies to precision fixed or forced (dynamic: ADP chooses the slices)")
		}
		if op.Slices < 1 || op.Slices > maxSlices {
			return nil, bad("slices", "must be in 1..%d (got %d)", maxSlices, op.Slices)
		}
	}
	if op.ESCBlock == 0 {
		op.ESCBlock = ozakiDefaultESCBlk
	}
	if op.ESCBlock < 1 || op.ESCBlock > p.K {
		return nil, bad("esc_block", "must be in 1..k = 1..%d (got %d)", p.K, op.ESCBlock)
	}
	if op.Products == "" {
		op.Products = "triangular"
	}
	if op.Products != "triangular" && op.Products != "square" {
		return nil, bad("products", "must be triangular or square (got %+q)", op.Products)
	}
	if op.Fallback == nil {
		t := true
		op.Fallback = &t
	}
	j := &ozakiJob{file: f.Path, p: op, tg: tg, mach: m, alpha: 1}
	if op.Alpha != nil {
		j.alpha = *op.Alpha
	}
	if op.Precision == ozakiDynamic && p.Numerics == NumericsOff {
		return nil, bad("precision", "dynamic precision needs the inputs' exponents (ESC) to choose the slices: run with numerics sampled or full, or use precision forced (ADP's kernels timed, slices from mantissa_bits) or fixed")
	}
	if nv := m.NvidiaSM(); nv != nil {
		j.dpx = nv.Arch == "hopper" || nv.Arch == "blackwell"
	}
	j.slices = ozakiSlicesFor(op.MantissaBits)
	if op.Slices != 0 {
		j.slices = op.Slices
	}
	// TODO(numerics): dynamic precision and the fallback decision from the
	// inputs (package ozaki) — wired in the next commit.
	if p.Numerics != NumericsOff {
		return nil, bad("numerics", "ozaki runs timing only for now (numerics off)")
	}
	if err := p.checkHostMemory(f.Path, 8); err != nil {
		return nil, err
	}
	if err := j.plan(); err != nil {
		return nil, err
	}
	return j, nil
}

// adp reports whether ADP's kernels (scan, ESC, decision) run.
func (j *ozakiJob) adp() bool { return j.p.Precision != ozakiFixed }

// plan lays out global memory and builds the kernels' plans.
func (j *ozakiJob) plan() error {
	p := &j.p.GEMMParams
	m, k, n := int64(p.M), int64(p.K), int64(p.N)
	s := int64(j.slices)
	j.kb = (p.K + j.p.ESCBlock - 1) / j.p.ESCBlock
	kb := int64(j.kb)
	j.diags = ozakiDiagonals(j.slices, j.p.Products == "square")
	j.nplanes = 0
	for _, g := range j.diags {
		j.nplanes += (g.pairs()*p.K + ozakiChunk - 1) / ozakiChunk
	}
	align := func(x int64) int64 { return (x + 511) &^ 511 }
	at := int64(0)
	next := func(bytes int64) int64 {
		a := at
		at = align(at + bytes)
		return a
	}
	j.gmA64, j.gmB64, j.gmC = next(8*m*k), next(8*k*n), next(8*m*n)
	j.gmScaleA, j.gmScaleB = next(4*m), next(4*n)
	if j.adp() {
		ncp := (n + ozakiESCTile - 1) / ozakiESCTile
		j.gmTabA, j.gmTabB, j.gmESC = next(4*m*kb), next(4*kb*ncp*ozakiESCTile), next(4)
	}
	if !j.fallback {
		j.gmDigitsA, j.gmDigitB = next(s*m*k), next(s*k*n)
		j.gmPlanes = next(4 * m * n * int64(j.nplanes))
	}
	if at > int64(j.mach.GM.Capacity) {
		return fmt.Errorf("%s: key \"m\": FP64 A, B and C, the slices and the INT32 products need %d bytes of global memory; machine %s has %d",
			j.file, at, j.mach.Name, int64(j.mach.GM.Capacity))
	}
	if j.fallback {
		np := *p
		np.Kind = "ozaki/native-dgemm"
		pl, err := newGPUGEMMPlan(j.file, np, j.mach, fp.FP64, gpuShape{})
		if err != nil {
			return err
		}
		pl.gmA, pl.gmB, pl.gmC = j.gmA64, j.gmB64, j.gmC
		j.native = pl
		return nil
	}
	j.diagPlans = nil
	plane := j.gmPlanes
	for _, g := range j.diags {
		kk := g.pairs() * p.K
		for c0 := 0; c0 < kk; c0 += ozakiChunk {
			dp := *p
			dp.K = min(ozakiChunk, kk-c0)
			dp.Kind = "ozaki"
			pl, err := newGPUGEMMPlan(j.file, dp, j.mach, fp.INT8, gpuShape{})
			if err != nil {
				return err
			}
			name := fmt.Sprintf("ozaki/d%d", g.d)
			if kk > ozakiChunk {
				name += fmt.Sprintf(".%d", c0/ozakiChunk)
			}
			// A: the diagonal's slices t = tmin..tmax are consecutive k-wide
			// column ranges of the row-major m × s·k digit matrix; B: its
			// slices u = d−t, in decreasing u, are consecutive k-row ranges
			// of the s·k × n digit matrix stored in reverse slice order.
			aCol := int64(g.tmin-1)*k + int64(c0)
			bRow := (s-int64(g.d-g.tmin))*k + int64(c0)
			pl.lda = s * k
			pl.ops = &gpuOperands{name: name, gmA: []int64{j.gmDigitsA + aCol}, gmB: []int64{j.gmDigitB + bRow*n},
				mmas: []gpuProduct{{first: true}}, accs: []gpuAcc{{}}}
			pl.gmC = plane
			plane += 4 * m * n
			j.diagPlans = append(j.diagPlans, pl)
		}
	}
	return nil
}

// scanGrids are ADP's first kernel: the Inf/NaN scan fused with the
// exponent tables ESC reads — per block of esc_block elements along k the
// largest and smallest exponent (2 × INT16) and each row's (column's)
// largest. A's blocks are row segments; B's are panels of esc_block rows ×
// ozakiESCTile columns, each writing its columns' entries of one block.
func (j *ozakiJob) scanGrids() []isa.Grid {
	p := &j.p.GEMMParams
	b := j.p.ESCBlock
	nA, segA := rowSegments(p.M, p.K)
	ncp := (p.N + ozakiESCTile - 1) / ozakiESCTile
	nB := j.kb * ncp
	scan := streamGrid(j.tg, "ozaki/scan", nA+nB, func(i int) streamBlock {
		if i < nA {
			r, c0, cnt := segA(i)
			tab := int64(r)*int64(j.kb) + int64(c0/b)
			return streamBlock{
				reads:  []gmSpan{{j.gmA64 + 8*(int64(r)*int64(p.K)+int64(c0)), 8 * int64(cnt)}},
				writes: []gmSpan{{j.gmTabA + 4*tab, 4 * int64((cnt+b-1)/b)}, {j.gmScaleA + 4*int64(r), 4}},
				work:   []vecWork{{ozakiScanOps * cnt, fp.INT32}},
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
	nA, segA := rowSegments(p.M, p.K)
	a := streamGrid(j.tg, "ozaki/slice-a", nA, func(i int) streamBlock {
		r, c0, cnt := segA(i)
		var w []gmSpan
		for t := int64(0); t < s; t++ {
			w = append(w, gmSpan{j.gmDigitsA + int64(r)*s*k + t*k + int64(c0), int64(cnt)})
		}
		return streamBlock{
			reads:  []gmSpan{{j.gmA64 + 8*(int64(r)*k+int64(c0)), 8 * int64(cnt)}, {j.gmScaleA + 4*int64(r), 4}},
			writes: w, work: []vecWork{{ops * cnt, fp.INT32}}}
	})
	nB, segB := rowSegments(p.K, p.N)
	b := streamGrid(j.tg, "ozaki/slice-b", nB, func(i int) streamBlock {
		l, c0, cnt := segB(i)
		var w []gmSpan
		for u := int64(1); u <= s; u++ {
			w = append(w, gmSpan{j.gmDigitB + ((s-u)*k+int64(l))*n + int64(c0), int64(cnt)})
		}
		return streamBlock{
			reads:  []gmSpan{{j.gmB64 + 8*(int64(l)*n+int64(c0)), 8 * int64(cnt)}, {j.gmScaleB + 4*int64(c0), 4 * int64(cnt)}},
			writes: w, work: []vecWork{{ops * cnt, fp.INT32}}}
	})
	return []isa.Grid{a, b}
}

// recombineGrid converts the INT32 planes to FP64, weights and sums them in
// the recombination's order, scales by the row and column exponents and
// applies alpha and beta, storing C.
func (j *ozakiJob) recombineGrid() isa.Grid {
	p := &j.p.GEMMParams
	n, mn := int64(p.N), int64(p.M)*int64(p.N)
	ops := ozakiRecombineOps*j.nplanes + 1
	if j.alpha != 1 {
		ops++
	}
	if j.p.Beta != 0 {
		ops += 2
	}
	nb, seg := rowSegments(p.M, p.N)
	return streamGrid(j.tg, "ozaki/recombine", nb, func(i int) streamBlock {
		r, c0, cnt := seg(i)
		at := int64(r)*n + int64(c0)
		var reads []gmSpan
		for x := 0; x < j.nplanes; x++ {
			reads = append(reads, gmSpan{j.gmPlanes + 4*(int64(x)*mn+at), 4 * int64(cnt)})
		}
		reads = append(reads, gmSpan{j.gmScaleA + 4*int64(r), 4}, gmSpan{j.gmScaleB + 4*int64(c0), 4 * int64(cnt)})
		if j.p.Beta != 0 {
			reads = append(reads, gmSpan{j.gmC + 8*at, 8 * int64(cnt)})
		}
		return streamBlock{reads: reads, writes: []gmSpan{{j.gmC + 8*at, 8 * int64(cnt)}},
			work: []vecWork{{ops * cnt, fp.FP64}}}
	})
}

func (j *ozakiJob) Program() isa.Program {
	var grids []isa.Grid
	if j.adp() {
		grids = append(grids, j.scanGrids()...)
		grids = append(grids, j.escGrid(), j.decisionGrid())
	}
	if j.fallback {
		grids = append(grids, j.native.grid())
	} else {
		grids = append(grids, j.sliceGrids()...)
		for _, pl := range j.diagPlans {
			grids = append(grids, pl.grid())
		}
		grids = append(grids, j.recombineGrid())
	}
	return isa.Program{Name: "ozaki", Generated: true, Grids: grids}
}

func (j *ozakiJob) Mode() arch.Mode { return modeFor(j.p.Numerics) }

func (j *ozakiJob) Prepare(chip *arch.Chip) error { return nil }

func (j *ozakiJob) Outputs() []Output { return j.outs }

// products is the number of INT8 slice products.
func (j *ozakiJob) products() int {
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
			fmt.Sprintf("fp64-equivalent (2mnk; peak = dense INT8 %s peak / %d slice products)", j.tg.matrix, j.products()))
	}
	var phases []map[string]any
	for _, g := range chip.GridTimes() {
		phases = append(phases, map[string]any{"name": g.Name, "blocks": g.CTAs,
			"seconds": (g.Finished - g.Launched).Seconds()})
	}
	prog := map[string]any{"kind": p.Kind, "m": p.M, "k": p.K, "n": p.N, "alpha": j.alpha, "beta": j.p.Beta,
		"precision": j.p.Precision, "mantissa_bits": j.p.MantissaBits, "max_mantissa_bits": j.p.MaxMantissaBits,
		"esc_block": j.p.ESCBlock, "products": j.p.Products, "fallback_allowed": *j.p.Fallback,
		"fallback": j.fallback, "native_fp64_peak_tflops": nativePeak / 1e12, "native_fp64_unit": unit,
		"inputs": p.Inputs, "numerics": p.Numerics, "phases": phases}
	if !j.fallback {
		prog["slices"] = j.slices
		prog["slice_products"] = j.products()
		prog["int8_gemms"] = len(j.diagPlans)
		t := j.diagPlans[0].t
		prog["tiling"] = map[string]int{"bm": t.bm, "bn": t.bn, "bk": t.bk, "stages": t.stages, "warps": t.warps}
	}
	if j.escKnown {
		prog["esc"] = j.esc
	}
	if j.reason != "" {
		prog["decision"] = j.reason
	}
	rep.Program = prog
	var timed []string
	if j.adp() {
		timed = append(timed, "scan", "ESC")
	}
	if !j.fallback {
		timed = append(timed, "slicing", "recombination")
	}
	rep.Notes = append(rep.Notes, fmt.Sprintf("the %s kernels are timed from their traffic and operation counts (programs/ozaki_kernels.go); their values come from package ozaki", strings.Join(timed, ", ")))
	return nil
}

// nativePeak is the machine's FP64 peak for native DGEMM: its FP64 matrix
// units, else its vector units.
func (j *ozakiJob) nativePeak(m *machines.Machine) (float64, string) {
	if j.tg.hasMatrix(fp.FP64) {
		pk, _ := m.Peak(j.tg.matrixPeak[fp.FP64])
		return pk, j.tg.matrix
	}
	return float64(m.Cores) * j.tg.clock * j.tg.vectorRate[fp.FP64], j.tg.vector
}
