package cube

import (
	"fmt"
	"math"
	"math/bits"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/davinci-sim/davinci-sim/fp"
)

// Fast MMAD paths for FP16/BF16 (and FP32/TF32) inputs and FP32 output.
// They give results bit-identical to the reference path (runMMAD →
// kernel.dot) for the model families below and fall back to it for
// anything they cannot prove exact.
//
// Sequential, RNE (fp32-rne). An FP16×FP16 product has at most 22
// significant bits and lies in [2^−48, 2^32): it is an exact float32. A
// BF16×BF16 product has at most 16 significant bits and is an exact float32
// when its lowest bit is ≥ 2^−149 and its magnitude < 2^127 (checked per row
// of A and column of B from the extreme exponents). The model's step
// acc = RNE(acc + a·b) with the exact product is then the IEEE float32
// addition acc + float32(a)·float32(b) — also if the compiler fuses it into
// an FMA, since the product is exact — including IEEE signed zeros (the
// product's zero carries the XOR of the signs, −0 + −0 = −0, x + (−x) = +0),
// which is what kernel.add2 implements.
//
// Sequential, RZ (fp32-rz). The product is exact in float64; acc + p is
// formed with TwoSum and rounded to odd at 53 bits (sumRO), then rounded
// toward zero to FP32 — the reference path's arithmetic without its
// decoding and math.Ldexp.
//
// With AVX-512 both sequential paths run 8×16 tiles of FMAs with embedded
// rounding (fastseq.go has the argument, which covers BF16 products that
// are not FP32 values, and the RZ overflow rule).
//
// Block FMA with F = Exact (ascend-910a, ascend-910b3 fp16/bf16, mi100): a
// block's result is round(c + Σ_block a_t·b_t), the exact sum rounded once.
// Let H_A, L_A be the largest exponent (⌊log2|x|⌋) and the smallest exponent
// of a lowest set bit over the nonzero A elements of the block, H_B, L_B
// the same for B. Every product is an integer multiple of 2^(L_A+L_B) of
// magnitude < 2^(H_A+H_B+2), so every partial sum of the block's n ≤ L
// products, in any order, is a multiple of 2^(L_A+L_B) of magnitude
// < 2^(H_A+H_B+2+⌈log2 L⌉). If (H_A−L_A) + (H_B−L_B) ≤ 51 − ⌈log2 L⌉ it
// has fewer than 53 significant bits and the float64 sum P is exact,
// whatever the summation order. c + P is then formed with TwoSum and
// rounded to odd at 53 bits (exact when representable); rounding that once
// more to FP32 equals rounding c + P once (round-to-odd lemma, 53 ≥ 24 + 2),
// which is the model. Blocks failing the test (wide exponent spread, e.g.
// subnormals next to large values) go through kernel.blockFMA. Signed
// zeros: P starts at −0, so it is −0 exactly when every product is −0, and
// c + P in IEEE RNE gives −0 only for −0 + −0, as zeroSign requires; a
// nonzero exact sum that cancels gives +0 in both. With AVX-512 the 4×8
// tiles of this path run in assembly (fasttrunc_exact.go).
//
// Block FMA with a finite F (the NVIDIA presets v100, t4, a100, ada, h100,
// b200 with FP16/BF16 inputs): integer e_max, exact scaled products
// truncated toward zero by the float→int64 conversion, int64 sums, one
// rounding; see fasttrunc.go (with AVX-512: 4×8 tiles in assembly).
//
// Pairwise (mi210, with or without FTZ): float32 products and adds in the
// model's tree order with explicit flushes; see fastpair.go.
//
// Truncated late c (mi300): the truncated path's integer arithmetic for
// the products, c rounded toward −∞ by math.Floor; see fastlatec.go.
//
// FP32 and TF32 inputs (fastfp32.go has the argument): the values and
// their products are exact in float64. Sequential RNE (fp32-rne, the
// CUDA cores' FFMA chain) is IEEE binary32 FMA: the AVX-512 8×16 tile as
// above, or in Go the float64 sum rounded to float32 unless it is an FP32
// midpoint or below 2^−126 (then kernel.add2). Sequential RZ reuses addRZ
// and the RZ tile; block FMA with a finite F (the TF32 tensor cores of
// a100, ada, h100, b200) reuses the truncated path with the FP32 field's
// nominal exponents.
//
// Inf/NaN inputs (per row of A or column of B) and Inf/NaN c take the
// reference kernel.dot for that element. Results never depend on GOMAXPROCS:
// one call is single-threaded.

// fastEnabled switches the fast MMAD paths on; tests and benchmarks turn it
// off to run the reference path.
var fastEnabled = true

// setFast sets fastEnabled and returns a function restoring the old value.
func setFast(on bool) func() {
	old := fastEnabled
	fastEnabled = on
	return func() { fastEnabled = old }
}

type fastKind uint8

const (
	fastNone fastKind = iota
	fastSeqRNE
	fastSeqRZ
	fastExactBlock
	fastTruncBlock
	fastPairwise // fastpair.go
	fastLateC    // fastlatec.go
	fastSeqRNE32 // FP32/TF32 inputs, fastfp32.go
	fastSeqRZ32  // FP32/TF32 inputs, fastfp32.go
)

// fastKindFor returns the fast path that reproduces the kernel for input
// format in (FP32 output), or fastNone.
func fastKindFor(k *kernel, in fp.Format) fastKind {
	if fastEnabled && (in == fp.FP32 || in == fp.TF32) {
		return fastKind32(k)
	}
	if !fastEnabled || (in != fp.FP16 && in != fp.BF16) {
		return fastNone
	}
	o := k.os
	if k.kind == Pairwise {
		return pairKind(k)
	}
	if o.p != 24 || o.emin != -126 || o.emax != 127 || o.ftz || k.ftz || k.fp16in || k.window != 0 || k.info == nil || k.info.table == nil {
		return fastNone
	}
	switch {
	case k.kind == Sequential && o.mode == fp.RNE:
		return fastSeqRNE
	case k.kind == Sequential && o.mode == fp.RZ:
		return fastSeqRZ
	case k.kind == BlockFMA && k.F == Exact && !k.lateC && (o.mode == fp.RNE || o.mode == fp.RZ):
		return fastExactBlock
	case k.kind == BlockFMA && k.F != Exact && !k.lateC && (o.mode == fp.RNE || o.mode == fp.RZ) && truncFits(k.F, k.L):
		return fastTruncBlock
	case k.kind == TruncatedLateC && lateCFits(k):
		return fastLateC
	}
	return fastNone
}

// fastTab holds per-pattern values of a 16-bit input format.
type fastTab struct {
	val []float64 // exact value (0 for Inf/NaN: those rows take the reference path)
	// hl packs, for a nonzero finite value, hi = ⌊log2|x|⌋ in the high 16
	// bits and lo = the exponent of its lowest set bit in the low 16 bits
	// (both biased by +1024); zero for zeros and specials.
	hl      []uint32
	special []bool // Inf or NaN
	// ex is the model's nominal exponent (dec.exp) of a nonzero finite
	// value, noExp for zeros and specials (truncated block FMA).
	ex []int32
}

var (
	fastTabOnce [8]sync.Once
	fastTabs    [8]fastTab
)

const hlBias = 1024

func fastTable(in fp.Format, info *fmtInfo) *fastTab {
	fastTabOnce[in].Do(func() {
		t := &fastTabs[in]
		n := len(info.table)
		t.val = make([]float64, n)
		t.hl = make([]uint32, n)
		t.special = make([]bool, n)
		t.ex = make([]int32, n)
		for p, d := range info.table {
			t.ex[p] = noExp
			if d.cls != clsFinite {
				t.special[p] = true
				continue
			}
			if d.sig == 0 {
				if d.neg {
					t.val[p] = math.Copysign(0, -1)
				}
				continue
			}
			m := uint32(abs32(d.sig))
			lsb := int(d.exp) - info.frac // value = sig · 2^lsb
			hi := lsb + bits.Len32(m) - 1
			lo := lsb + bits.TrailingZeros32(m)
			t.val[p] = float64(d.sig) * math.Ldexp(1, lsb)
			t.ex[p] = int32(d.exp)
			t.hl[p] = uint32(hi+hlBias)<<16 | uint32(lo+hlBias)
		}
	})
	return &fastTabs[in]
}

// noSpread marks an all-zero block: it passes every exactness test.
const noSpread = -4096

// fastScratch is the per-call working memory, pooled across calls.
type fastScratch struct {
	a64, b64     []float64 // A row-major (m×k), B transposed (n×k)
	a32, b32     []float32
	pa, pb       []uint16 // the patterns in the same orders (reference fallback)
	rowSp, colSp []bool
	sa, sb       []int32   // exact block: spread per (row, block) / (column, block)
	rowHL, colHL []int32   // sequential BF16: hi and lo per row / column (pairs)
	da, db       []dec     // reference-path scratch of the calling goroutine (pooled)
	ea, eb       []int32   // truncated block: nominal exponents of A (row-major) and B (transposed)
	pa2, pb2     []float64 // truncated block: a64, b64 with row (column) pairs interleaved
	ea2, eb2     []int32   // the same for ea, eb
	a4, b8       []float64 // truncated block, AVX-512: A by row quads, B by column octets (prepTile4x8)
	ea4, eb8     []int32   // the same for ea, eb
	sa4, sb8     []int32   // exact block, AVX-512: sa by row quads, sb by column octets (prepExact4x8)
	outC         []float64 // fastCall.outC, cspec, cbits and the results
	cspec        []bool
	cbits, res   []uint32
	a2           [][2]float32 // sequential RNE: a32 with row pairs interleaved
	b4           [][4]float32 // sequential RNE: b32 with column quads interleaved
	cidx         []int        // buffer indices of one row of C (rowIndex)
	a8, b16      []float32    // sequential, AVX-512: A by row octets, B by column sixteens (prepSeq8x16)
	pair         pairState    // pairwise (fastpair.go)
	pa32, pb32   []uint32     // FP32/TF32 inputs: the patterns (as pa, pb; fastfp32.go)
}

var scratchPool = sync.Pool{New: func() any { return new(fastScratch) }}

func grow[E any](s []E, n int) []E {
	if cap(s) < n {
		return make([]E, n)
	}
	return s[:n]
}

// fastCall is one MMAD call on the fast path.
type fastCall struct {
	kern    *kernel
	tab     *fastTab
	info    *fmtInfo
	mm, k   int
	n       int
	L, nb   int // block length and number of blocks per row (exact block)
	lim     int32
	sc      *fastScratch
	outC    []float64 // C values (float32 values), row-major m×n
	cbits   []uint32  // C patterns, row-major m×n
	cspec   []bool    // C element is Inf/NaN
	useF32  bool
	fastKnd fastKind
	clean   bool  // no Inf or NaN in A, B or C
	never   int   // −1: an index no loop reaches (see seqRNE2x4)
	da, db  []dec // reference-path scratch (one per goroutine)
}

// checkMMAD validates the shape and the buffer lengths (runMMAD's checks).
func checkMMAD(elemBits, mm, k, n, lenA int, la Layout, lenB int, lb Layout, lenC int, lc Layout) error {
	if mm < 0 || k < 0 || n < 0 {
		return fmt.Errorf("cube: MMAD: negative shape %d×%d×%d", mm, k, n)
	}
	if err := checkTile("A", lenA, mm, k, la, elemBits); err != nil {
		return err
	}
	if err := checkTile("B", lenB, k, n, lb, elemBits); err != nil {
		return err
	}
	return checkTile("C", lenC, mm, n, lc, 32)
}

// fastMMAD runs the call on a fast path if one reproduces the kernel; it
// returns false (and does nothing) otherwise. Shapes and lengths must have
// been checked. C is FP32 bit patterns, read and written in place (an
// accessor call per element had been a tenth of an emulated GEMM's
// numerics).
func fastMMAD[T uint16 | uint32](kern *kernel, in fp.Format, mm, k, n int, a []T, la Layout, b []T, lb Layout, c []uint32, lc Layout, init bool) bool {
	fk := fastKindFor(kern, in)
	if fk == fastNone {
		return false
	}
	if mm == 0 || n == 0 {
		return true
	}
	sc := scratchPool.Get().(*fastScratch)
	defer scratchPool.Put(sc)
	f := &fastCall{kern: kern, info: kern.info, mm: mm, k: k, n: n, sc: sc, fastKnd: fk, never: -1}
	f.da, f.db = sc.da, sc.db
	defer func() { sc.da, sc.db = f.da, f.db }()
	if kern.info.table == nil { // FP32 or TF32 patterns (uint32)
		f.load32(any(a).([]uint32), la, any(b).([]uint32), lb)
	} else {
		f.tab = fastTable(in, kern.info)
		f.useF32 = fk == fastSeqRNE || fk == fastPairwise
		f.load(a, la, b, lb)
	}
	// C: read once, computed, written once.
	sc.outC, sc.cspec, sc.cbits = grow(sc.outC, mm*n), grow(sc.cspec, mm*n), grow(sc.cbits, mm*n)
	f.outC, f.cspec, f.cbits = sc.outC, sc.cspec, sc.cbits
	sc.cidx = grow(sc.cidx, n)
	for i := 0; i < mm; i++ {
		rowIndex(lc, i, n, sc.cidx)
		cs, cb, oc := f.cspec[i*n:(i+1)*n], f.cbits[i*n:(i+1)*n], f.outC[i*n:(i+1)*n]
		for j, x := range sc.cidx {
			var b uint32
			if !init {
				b = c[x]
			}
			cs[j] = b&0x7f800000 == 0x7f800000
			cb[j] = b
			oc[j] = float64(math.Float32frombits(b))
		}
	}
	f.clean = true
	for _, sp := range [][]bool{sc.rowSp, sc.colSp, f.cspec} {
		for _, x := range sp {
			f.clean = f.clean && !x
		}
	}
	sc.res = grow(sc.res, mm*n)
	res := sc.res
	switch fk {
	case fastSeqRNE:
		f.runSeqRNE(res)
	case fastSeqRZ:
		f.runSeqRZ(res)
	case fastExactBlock:
		f.prepBlocks()
		if !f.runExactAVX(res) {
			f.runExact(res)
		}
	case fastTruncBlock:
		f.runTrunc(res)
	case fastPairwise:
		f.runPair(res)
	case fastLateC:
		f.runLateC(res)
	case fastSeqRNE32:
		f.runSeqRNE32(res)
	case fastSeqRZ32:
		f.runSeqRZ32(res)
	}
	for i := 0; i < mm; i++ {
		rowIndex(lc, i, n, sc.cidx)
		r := res[i*n : (i+1)*n]
		for j, x := range sc.cidx {
			c[x] = r[j]
		}
	}
	return true
}

// rowIndex sets idx[j] to layoutIndex(l, i, j, len(idx), 32) for the
// columns j of row i (32-bit elements: 16×16 fractal blocks), without a
// division per element.
func rowIndex(l Layout, i, n int, idx []int) {
	if l != Fractal {
		for j := range idx {
			idx[j] = i*n + j
		}
		return
	}
	base := (i/16)*((n+15)/16)*256 + (i%16)*16
	for j0 := 0; j0 < n; j0 += 16 { // one 16-column block
		blk := idx[j0:min(j0+16, n)]
		for t := range blk {
			blk[t] = base + t
		}
		base += 256
	}
}

// load converts A to row-major and B to transposed (column-contiguous)
// order, as patterns and values, and marks rows/columns holding Inf or NaN.
func (f *fastCall) load(a any, la Layout, b any, lb Layout) {
	mm, k, n, sc := f.mm, f.k, f.n, f.sc
	sc.pa = grow(sc.pa, mm*k)
	sc.pb = grow(sc.pb, n*k)
	gather(a, la, mm, k, sc.pa, false)
	gather(b, lb, k, n, sc.pb, true)
	sc.rowSp = grow(sc.rowSp, mm)
	sc.colSp = grow(sc.colSp, n)
	fp16 := f.info.frac == 10
	if f.useF32 {
		sc.a32 = grow(sc.a32, mm*k)
		sc.b32 = grow(sc.b32, n*k)
		convRows(sc.pa, sc.rowSp, sc.a32, mm, k, fp16)
		convRows(sc.pb, sc.colSp, sc.b32, n, k, fp16)
	} else {
		sc.a64 = grow(sc.a64, mm*k)
		sc.b64 = grow(sc.b64, n*k)
		convRows(sc.pa, sc.rowSp, sc.a64, mm, k, fp16)
		convRows(sc.pb, sc.colSp, sc.b64, n, k, fp16)
	}
}

// convRows converts rows of k FP16 (fp16) or BF16 patterns p to their
// values v (fastTab.val: 0 for Inf and NaN) and sets sp[r] when row r
// holds Inf or NaN. The conversion is arithmetic rather than a look-up in
// the 512 KiB value table: BF16 is the upper half of an FP32 pattern, and
// an FP16 pattern without its sign, shifted to FP32's fraction field, is
// the FP32 pattern of its value times 2^−112 (normals and subnormals
// alike), so one exact multiplication by 2^112 gives the value.
func convRows[E float32 | float64](p []uint16, sp []bool, v []E, rows, k int, fp16 bool) {
	for r := 0; r < rows; r++ {
		row, o := p[r*k:(r+1)*k], v[r*k:(r+1)*k]
		var s bool
		if fp16 {
			s = convF16(row, o)
		} else {
			s = convBF16(row, o)
		}
		sp[r] = s
		if !s {
			continue
		}
		for t, x := range row { // rare: zero the specials' values
			if fp16 && x&0x7c00 == 0x7c00 || !fp16 && x&0x7f80 == 0x7f80 {
				o[t] = 0
			}
		}
	}
}

// convF16 sets o[t] to the value of the FP16 pattern row[t] and reports
// whether the row holds Inf or NaN (exponent field all ones: adding 0x400
// to it carries into bit 15).
func convF16[E float32 | float64](row []uint16, o []E) bool {
	o = o[:len(row)]
	var s uint32
	for t, x := range row {
		o[t] = E(f16Value(x))
		s |= uint32(x)&0x7c00 + 0x400
	}
	return s&0x8000 != 0
}

// convBF16 is convF16 for BF16 patterns.
func convBF16[E float32 | float64](row []uint16, o []E) bool {
	o = o[:len(row)]
	var s uint32
	for t, x := range row {
		o[t] = E(fp.BF16ToF32(x))
		s |= uint32(x)&0x7f80 + 0x80
	}
	return s&0x8000 != 0
}

// f16Value returns the value of an FP16 pattern as a float32 (exact; Inf
// and NaN patterns give finite garbage, see convRows).
func f16Value(x uint16) float32 {
	v := math.Float32frombits(uint32(x&0x7fff)<<13) * 0x1p112
	return math.Float32frombits(math.Float32bits(v) | uint32(x&0x8000)<<16)
}

// gather copies a rows×cols tile in layout l to dst, row-major, or
// transposed (dst[c·rows + r]) when trans is set.
func gather(src any, l Layout, rows, cols int, dst []uint16, trans bool) {
	switch s := src.(type) {
	case []uint16:
		gatherT(s, l, rows, cols, dst, trans)
	case []uint32:
		gatherT(s, l, rows, cols, dst, trans)
	}
}

// gatherT is gather for a source of T and a destination of D (D narrower
// than T: the low bits).
func gatherT[T, D uint16 | uint32](src []T, l Layout, rows, cols int, dst []D, trans bool) {
	put := func(r, c int, v T) {
		if trans {
			dst[c*rows+r] = D(v)
		} else {
			dst[r*cols+c] = D(v)
		}
	}
	if l == RowMajor {
		for r := 0; r < rows; r++ {
			row := src[r*cols : (r+1)*cols]
			for c, v := range row {
				put(r, c, v)
			}
		}
		return
	}
	// Fractal, 16×16 blocks for 16-bit elements.
	nbc := (cols + 15) / 16
	for r := 0; r < rows; r++ {
		base := (r/16)*nbc*256 + (r%16)*16
		for bc := 0; bc < nbc; bc++ {
			blk := src[base+bc*256 : base+bc*256+16]
			c0 := bc * 16
			w := min(16, cols-c0)
			for t := 0; t < w; t++ {
				put(r, c0+t, blk[t])
			}
		}
	}
}

// parallelMACs is the size of a call (m·n·k) from which runTiles shares
// the rows of C among goroutines (a variable so tests can force it).
var parallelMACs = 1 << 18

// maxWorkers bounds the goroutines of one MMAD call (0: GOMAXPROCS).
var maxWorkers atomic.Int32

// SetMaxWorkers bounds the goroutines one MMAD call may use to n (n ≤ 0:
// GOMAXPROCS, the default). Callers that already run several simulations
// at once (design-space sweeps) set 1: splitting each call then only adds
// overhead. Results do not depend on it.
func SetMaxWorkers(n int) { maxWorkers.Store(int32(max(n, 0))) }

// workers returns the goroutines a call may use.
func workers() int {
	w := runtime.GOMAXPROCS(0)
	if m := int(maxWorkers.Load()); m > 0 {
		w = min(w, m)
	}
	return w
}

// runTiles walks C in th×tw tiles: a tile whose every element passes plain
// (nil: every element does) is computed by tile (the vectorised fast path),
// the others and the edge rows/columns element by element with elem. Large
// calls split the rows among up to GOMAXPROCS goroutines, each with its own
// scratch; every element is computed independently, so the result does not
// depend on the split.
func (f *fastCall) runTiles(th, tw int, res []uint32, plain func(f *fastCall, i, j int) bool,
	tile func(f *fastCall, res []uint32, i, j int), elem func(f *fastCall, i, j int) uint32) {
	rowTiles := f.mm / th
	w := 1
	if f.mm*f.n*max(f.k, 1) >= parallelMACs {
		w = min(workers(), rowTiles)
	}
	if w <= 1 {
		f.tileRows(0, f.mm, th, tw, res, plain, tile, elem)
		return
	}
	// Copies first (workers write their own scratch); the calling
	// goroutine takes the first rows.
	ws := make([]fastCall, w-1)
	for p := range ws {
		ws[p] = *f
		ws[p].da, ws[p].db = nil, nil // private reference-path scratch
	}
	var wg sync.WaitGroup
	for p := 1; p < w; p++ {
		lo, hi := rowTiles*p/w*th, rowTiles*(p+1)/w*th
		if p == w-1 {
			hi = f.mm
		}
		wg.Go(func() { ws[p-1].tileRows(lo, hi, th, tw, res, plain, tile, elem) })
	}
	f.tileRows(0, rowTiles/w*th, th, tw, res, plain, tile, elem)
	wg.Wait()
}

// tileRows is runTiles over rows [lo, hi) (lo a multiple of th).
func (f *fastCall) tileRows(lo, hi, th, tw int, res []uint32, plain func(f *fastCall, i, j int) bool,
	tile func(f *fastCall, res []uint32, i, j int), elem func(f *fastCall, i, j int) uint32) {
	n := f.n
	i := lo
	for ; i+th <= hi; i += th {
		j := 0
		for ; j+tw <= n; j += tw {
			ok := true
			for r := i; r < i+th && ok && plain != nil; r++ {
				for c := j; c < j+tw && ok; c++ {
					ok = plain(f, r, c)
				}
			}
			if ok {
				tile(f, res, i, j)
				continue
			}
			for r := i; r < i+th; r++ {
				for c := j; c < j+tw; c++ {
					res[r*n+c] = elem(f, r, c)
				}
			}
		}
		for r := i; r < i+th; r++ {
			for c := j; c < n; c++ {
				res[r*n+c] = elem(f, r, c)
			}
		}
	}
	for ; i < hi; i++ {
		for j := 0; j < n; j++ {
			res[i*n+j] = elem(f, i, j)
		}
	}
}

// plainTiles returns nil (every element plain) when the call has no Inf or
// NaN input or C, else the per-element test.
func (f *fastCall) plainTiles() func(f *fastCall, i, j int) bool {
	if f.clean {
		return nil
	}
	return func(f *fastCall, r, c int) bool { return !f.special(r, c) }
}

// ref computes element (i, j) with the reference kernel.
func (f *fastCall) ref(i, j int) uint32 {
	k, sc := f.k, f.sc
	f.da = grow(f.da, k)
	f.db = grow(f.db, k)
	if f.info.table == nil { // FP32/TF32 patterns
		for t := 0; t < k; t++ {
			f.da[t] = f.info.decode(sc.pa32[i*k+t])
			f.db[t] = f.info.decode(sc.pb32[j*k+t])
		}
		return f.kern.dot(f.da, f.db, f.cbits[i*f.n+j], true)
	}
	for t := 0; t < k; t++ {
		f.da[t] = f.info.table[sc.pa[i*k+t]]
		f.db[t] = f.info.table[sc.pb[j*k+t]]
	}
	return f.kern.dot(f.da, f.db, f.cbits[i*f.n+j], true)
}

// special reports whether element (i, j) needs the reference path.
func (f *fastCall) special(i, j int) bool {
	return f.sc.rowSp[i] || f.sc.colSp[j] || f.cspec[i*f.n+j]
}
