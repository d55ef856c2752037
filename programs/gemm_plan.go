package programs

import (
	"fmt"
	"math"

	"github.com/davinci-sim/davinci-sim/fp"
	"github.com/davinci-sim/davinci-sim/isa"
	"github.com/davinci-sim/davinci-sim/machines"
)

// gemmPass is one tiled FP16 GEMM sweep over C: C_out = Σ over products
// (ai, bi) of A[ai]·B[bi], with the per-block accumulation of the mode.
type gemmPass struct {
	name  string
	aMats []int64  // GM addresses of the FP16 A matrices (m×k, row-major)
	bMats []int64  // GM addresses of the FP16 B matrices (k×n, row-major)
	prods [][2]int // (A index, B index) of each product
	out   int64    // GM address of the FP32 result (m×n, row-major)
	// elementwise: fold the block products as acc += P0 + (P1 + P2)·scale
	// after every k-block; otherwise accumulate one product in L0C over
	// each L1 group and combine groups in FP32.
	elementwise bool
}

// gemmPlan is the resolved layout of a GEMM program on a machine: GM
// addresses, buffer layouts, tiling and the work of each core.
type gemmPlan struct {
	p      GEMMParams
	v      gemmVariant
	mach   *machines.Machine
	ncores int
	round  fp.Rounding
	sat    bool
	in     fp.Format // cube input type: FP16, FP32 for native sgemm, INT8 for igemm
	out    fp.Format // L0C and C type: FP32, INT32 for igemm
	lda    int64     // elements between rows of A in GM (K unless an operand is a column range of a wider matrix)
	scale  float64   // 2^-sb

	// GM layout.
	a32, b32, aHi, aLo, bHi, bLo, c int64
	a8, b8                          int64 // igemm's INT8 inputs
	cTerm                           [3]int64
	gmEnd                           int64

	passes  []gemmPass
	combine bool // termwise sgemm-cube: final C = C_hh + (C_hl + C_lh)·2^-sb pass

	// Tiling.
	bm, bk, bn     int
	nrb, ncb, nkb  int
	nfused, groups int

	// Buffer counts (double buffering) and layouts (byte offsets).
	nB, nL0, nC, nU      int
	l1A, l1B             int64 // L1: A group region, B buffers
	aBlk, bBlk           int64 // bytes of one A / B block
	l0aBuf, l0bBuf       int64 // bytes per L0A / L0B buffer (all matrices)
	l0cBuf, l0cTile      int64
	ubTile               int64
	splitChunk           int   // elements per split/combine chunk
	splitSlot, combSlot  int64 // UB bytes per slot
	maxA, maxB, maxProds int
}

// newGEMMPlan resolves the layout, checking capacities; errors name keys.
func newGEMMPlan(file string, p GEMMParams, v gemmVariant, m *machines.Machine) (*gemmPlan, error) {
	bad := func(key, format string, a ...any) error {
		return fmt.Errorf("%s: key %q: %s", file, key, fmt.Sprintf(format, a...))
	}
	pl := &gemmPlan{p: p, v: v, mach: m, bm: p.Tiling.BM, bk: p.Tiling.BK, bn: p.Tiling.BN}
	pl.ncores = m.Cores
	if p.Cores > 0 {
		pl.ncores = p.Cores
	}
	pl.in, pl.out = fp.FP16, fp.FP32
	switch {
	case v.native:
		pl.in = fp.FP32
	case v.int8:
		pl.in, pl.out = fp.INT8, fp.INT32
	}
	pl.lda = int64(p.K)
	eb := int64(pl.in.Bytes())
	pl.round, _ = fp.ParseRounding(p.Split.Rounding)
	pl.sat = *p.Split.Saturate
	pl.scale = math.Ldexp(1, -p.Split.SB)
	M, K, N := int64(p.M), int64(p.K), int64(p.N)

	// GM layout, 4 KiB aligned.
	at := int64(0)
	place := func(bytes int64) int64 {
		a := at
		at = (at + bytes + 4095) &^ 4095
		return a
	}
	if v.int8 {
		pl.a8 = place(M * K)
		pl.b8 = place(K * N)
	} else {
		pl.a32 = place(M * K * 4)
		pl.b32 = place(K * N * 4)
	}
	if !v.native && !v.int8 {
		pl.aHi = place(M * K * 2)
		pl.bHi = place(K * N * 2)
	}
	if v.split {
		pl.aLo = place(M * K * 2)
		pl.bLo = place(K * N * 2)
	}
	pl.c = place(M * N * 4)
	elementwise := v.split && p.Accumulation == "elementwise"
	switch {
	case v.int8:
		pl.passes = []gemmPass{{name: "int8", aMats: []int64{pl.a8}, bMats: []int64{pl.b8}, prods: [][2]int{{0, 0}}, out: pl.c}}
	case v.native:
		pl.passes = []gemmPass{{name: "fp32", aMats: []int64{pl.a32}, bMats: []int64{pl.b32}, prods: [][2]int{{0, 0}}, out: pl.c}}
	case !v.split:
		pl.passes = []gemmPass{{name: "hh", aMats: []int64{pl.aHi}, bMats: []int64{pl.bHi}, prods: [][2]int{{0, 0}}, out: pl.c}}
	case elementwise:
		pl.passes = []gemmPass{{name: "elementwise", aMats: []int64{pl.aHi, pl.aLo}, bMats: []int64{pl.bHi, pl.bLo},
			prods: [][2]int{{0, 0}, {0, 1}, {1, 0}}, out: pl.c, elementwise: true}}
	default:
		for i := range pl.cTerm {
			pl.cTerm[i] = place(M * N * 4)
		}
		pl.passes = []gemmPass{
			{name: "hh", aMats: []int64{pl.aHi}, bMats: []int64{pl.bHi}, prods: [][2]int{{0, 0}}, out: pl.cTerm[0]},
			{name: "hl", aMats: []int64{pl.aHi}, bMats: []int64{pl.bLo}, prods: [][2]int{{0, 0}}, out: pl.cTerm[1]},
			{name: "lh", aMats: []int64{pl.aLo}, bMats: []int64{pl.bHi}, prods: [][2]int{{0, 0}}, out: pl.cTerm[2]},
		}
		pl.combine = true
	}
	pl.gmEnd = at
	if pl.gmEnd > int64(m.GM.Capacity) {
		return nil, fmt.Errorf("%s: the matrices need %d bytes of GM; machine %s has %d", file, pl.gmEnd, m.Name, int64(m.GM.Capacity))
	}
	for _, ps := range pl.passes {
		pl.maxA = max(pl.maxA, len(ps.aMats))
		pl.maxB = max(pl.maxB, len(ps.bMats))
		pl.maxProds = max(pl.maxProds, len(ps.prods))
	}

	pl.nrb = ceil(p.M, pl.bm)
	pl.ncb = ceil(p.N, pl.bn)
	pl.nkb = ceil(p.K, pl.bk)
	buf := m.DaVinci().Buffers
	double := p.Buffering == "double"
	pl.aBlk = int64(pl.bm*pl.bk) * eb
	pl.bBlk = int64(pl.bk*pl.bn) * eb

	// L1: nfused A blocks of every A matrix, and two B buffers (SGEMM-cube
	// Eq. 8 reserves 2·bk·bn for B in both buffering modes).
	l1 := int64(buf.L1)
	reserveB := 2 * int64(pl.maxB) * pl.bBlk
	fits := int((l1 - reserveB) / (int64(pl.maxA) * pl.aBlk))
	if fits < 1 {
		return nil, bad("tiling", "an A block (%d×%d) and two B blocks (%d×%d) of %s do not fit L1 (%d bytes)", pl.bm, pl.bk, pl.bk, pl.bn, pl.in, l1)
	}
	pl.nfused = p.Tiling.NFused
	if pl.nfused == 0 {
		pl.nfused = fits
	} else if pl.nfused > fits {
		return nil, bad("tiling.nfused", "%d A blocks do not fit L1 (%d bytes): at most %d (SGEMM-cube Eq. 8)", pl.nfused, l1, fits)
	}
	if pl.nfused > pl.nkb {
		pl.nfused = pl.nkb
	}
	pl.groups = ceil(pl.nkb, pl.nfused)
	pl.nB = 1
	if double {
		pl.nB = 2
	}
	pl.l1A = 0
	pl.l1B = int64(pl.maxA) * int64(pl.nfused) * pl.aBlk

	// L0A/L0B: ping-pong when double-buffered and it fits.
	pl.l0aBuf = int64(pl.maxA) * pl.aBlk
	pl.l0bBuf = int64(pl.maxB) * pl.bBlk
	if pl.l0aBuf > int64(buf.L0A) {
		return nil, bad("tiling", "bm·bk = %d·%d %s (×%d matrices) exceeds L0A (%d bytes; SGEMM-cube Eq. 12)", pl.bm, pl.bk, pl.in, pl.maxA, int64(buf.L0A))
	}
	if pl.l0bBuf > int64(buf.L0B) {
		return nil, bad("tiling", "bk·bn = %d·%d %s (×%d matrices) exceeds L0B (%d bytes; SGEMM-cube Eq. 12)", pl.bk, pl.bn, pl.in, pl.maxB, int64(buf.L0B))
	}
	pl.nL0 = 1
	if double && 2*pl.l0aBuf <= int64(buf.L0A) && 2*pl.l0bBuf <= int64(buf.L0B) {
		pl.nL0 = 2
	}
	pl.l0cTile = int64(pl.bm * pl.bn * 4)
	pl.l0cBuf = int64(pl.maxProds) * pl.l0cTile
	if pl.l0cBuf > int64(buf.L0C) {
		return nil, bad("tiling", "%d %s tiles of bm·bn = %d·%d exceed L0C (%d bytes)", pl.maxProds, pl.out, pl.bm, pl.bn, int64(buf.L0C))
	}
	pl.nC = 1
	if double && 2*pl.l0cBuf <= int64(buf.L0C) {
		pl.nC = 2
	}
	// UB: termwise keeps a result and a previous-partial tile per buffer;
	// elementwise keeps acc and two staging tiles.
	pl.ubTile = pl.l0cTile
	ubNeed := 2 * pl.ubTile
	if elementwise {
		ubNeed = 3 * pl.ubTile
	}
	if ubNeed > int64(buf.UB) {
		return nil, bad("tiling", "%d %s tiles of bm·bn = %d·%d exceed UB (%d bytes)", ubNeed/pl.ubTile, pl.out, pl.bm, pl.bn, int64(buf.UB))
	}
	pl.nU = 1
	if double && !elementwise && 2*ubNeed <= int64(buf.UB) {
		pl.nU = 2
	}

	// Split and combine chunks: two slots of x, hf (FP32) and hi, lo (FP16);
	// combine: two slots of three FP32 chunks.
	chunk := p.SplitChunk
	perElem := int64(4 + 4 + 2 + 2)
	if !v.split {
		perElem = 4 + 2
	}
	for chunk > 64 && 2*int64(chunk)*perElem > int64(buf.UB) {
		chunk /= 2
	}
	for chunk > 64 && pl.combine && 2*int64(chunk)*12 > int64(buf.UB) {
		chunk /= 2
	}
	chunk = chunk / 64 * 64
	pl.splitChunk = chunk
	pl.splitSlot = int64(chunk) * perElem
	pl.combSlot = int64(chunk) * 12
	return pl, nil
}

func ceil(a, b int) int { return (a + b - 1) / b }

// rowWork is a core's share of one row block: column blocks [j0, j1).
type rowWork struct{ i, j0, j1 int }

// work returns core's share of C, as in SGEMM-cube's Algorithm 1: block rows
// of A are dealt to the cores round-robin in waves of ncores, every core
// sweeping all column blocks in the same order (so that the cores read the
// same B block at about the same time and share it through the L2). The
// last, partial wave of r < ncores row blocks is balanced by giving each of
// its row blocks about ncores/r cores, each taking a slice of the column
// blocks.
func (pl *gemmPlan) work(core int) []rowWork {
	P := pl.ncores
	full := pl.nrb / P
	var out []rowWork
	for w := 0; w < full; w++ {
		out = append(out, rowWork{i: w*P + core, j0: 0, j1: pl.ncb})
	}
	r := pl.nrb - full*P
	if r == 0 {
		return out
	}
	t := core % r            // tail row block of this core
	s := core / r            // its slice index
	q := (P - t + r - 1) / r // cores sharing tail row block t
	if q > pl.ncb {
		q = pl.ncb
	}
	if s >= q {
		return out
	}
	out = append(out, rowWork{i: full*P + t, j0: s * pl.ncb / q, j1: (s + 1) * pl.ncb / q})
	return out
}

// blockDims returns the rows of row block i, the columns of column block j
// and the depth of k-block kb (edge blocks are smaller).
func (pl *gemmPlan) rows(i int) int   { return min(pl.bm, pl.p.M-i*pl.bm) }
func (pl *gemmPlan) cols(j int) int   { return min(pl.bn, pl.p.N-j*pl.bn) }
func (pl *gemmPlan) depth(kb int) int { return min(pl.bk, pl.p.K-kb*pl.bk) }

// Flag ids per pipe pair (see gemmStream).
const (
	fA      = 0 // MTE2↔MTE1: A group ready / free
	fB      = 1 // MTE2↔MTE1: B buffer p ready / free (ids 1, 2)
	fWrite  = 0 // MTE3→MTE2: previous group's partials written
	fSlot   = 0 // split/combine slots (ids 0, 1)
	fL0     = 0 // MTE1↔M: L0A/L0B buffer q (ids 0, 1)
	fL0C    = 0 // M↔V: L0C buffer c (ids 0, 1)
	fUB     = 0 // V↔MTE3, V↔MTE2: UB buffer u (ids 0, 1)
	maxFlag = 3
)

// gmOp returns a GM operand.
func gmOp(addr int64) isa.Operand { return isa.Operand{Buf: isa.GM, Addr: addr} }

// ubOp returns a UB operand.
func ubOp(addr int64) isa.Operand { return isa.Operand{Buf: isa.UB, Addr: addr} }

// l1Op returns an L1 operand.
func l1Op(addr int64) isa.Operand { return isa.Operand{Buf: isa.L1, Addr: addr} }

// tilingReport is the plan's tiling as report.json's program section shows
// it.
func (pl *gemmPlan) tilingReport() map[string]int {
	return map[string]int{"bm": pl.bm, "bk": pl.bk, "bn": pl.bn, "nfused": pl.nfused, "groups": pl.groups}
}
