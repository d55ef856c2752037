package programs

import (
	"fmt"
	"math"
	"slices"

	"github.com/davinci-sim/davinci-sim/fp"
	"github.com/davinci-sim/davinci-sim/isa"
	"github.com/davinci-sim/davinci-sim/machines"
)

// gemmPass is one tiled GEMM sweep over C on the cube: the products of
// its accumulators, each accumulator an L0C tile written to its own FP32
// (INT32 for igemm) matrix in GM.
type gemmPass struct {
	name  string
	aMats []int64 // GM addresses of the A matrices (m×k, row-major) the pass stages
	bMats []int64 // GM addresses of the B matrices (k×n, row-major)
	// aPieces, bPieces: the scheme's piece index of each staged matrix (the
	// golden model's operands; emulated schemes only).
	aPieces, bPieces []int
	accs             []passAcc
	// elementwise: SGEMM-cube's elementwise accumulation — the three
	// accumulators' tiles of every k-block are folded as acc += P0 +
	// (P1 + P2)·scale into out, instead of each accumulator leaving on its
	// own.
	elementwise bool
	out         int64 // elementwise: GM address of C
}

// passAcc is one accumulator of a pass: its products, in order, as
// (A matrix, B matrix) indices of the pass, and where it accumulates —
// inside: chained through the cube's MMADs in its L0C tile over each L1
// group of k-blocks, the groups' partial sums added in FP32 (SGEMM-cube's
// termwise); outside: each k-block's products from zero in an L0C tile of
// their own, added in FP32 on the vector unit (Ootomo).
type passAcc struct {
	prods   [][2]int
	outside bool
	out     int64 // GM address of the accumulator's result (m×n)
	group   int   // the scheme's group (emulated schemes)
}

// singlePass is a pass of one product A·B into out.
func singlePass(name string, a, b, out int64) gemmPass {
	return gemmPass{name: name, aMats: []int64{a}, bMats: []int64{b}, accs: []passAcc{{prods: [][2]int{{0, 0}}, out: out}}}
}

// inside and outside return the indices of the pass's accumulators of each
// kind, in order.
func (ps *gemmPass) inside() []int  { return ps.accIndices(false) }
func (ps *gemmPass) outside() []int { return ps.accIndices(true) }

func (ps *gemmPass) accIndices(outside bool) []int {
	var out []int
	for i, a := range ps.accs {
		if a.outside == outside && !ps.elementwise {
			out = append(out, i)
		}
	}
	return out
}

// gemmPlan is the resolved layout of a GEMM program on a machine: GM
// addresses, buffer layouts, tiling and the work of each core.
type gemmPlan struct {
	p      GEMMParams
	v      gemmVariant
	mach   *machines.Machine
	ncores int
	in     fp.Format   // cube input type: the pieces' (FP16, BF16), FP32 for native sgemm, INT8 for igemm
	out    fp.Format   // L0C and C type: FP32, INT32 for igemm
	lda    int64       // elements between rows of A in GM (K unless an operand is a column range of a wider matrix)
	scale  float64     // 2^-sb (SGEMM-cube's elementwise fold)
	sp     *schemePlan // the split and the products (FP16/BF16 inputs; nil for native and INT8 GEMMs)

	// GM layout.
	a32, b32, c    int64
	a8, b8         int64   // igemm's INT8 inputs
	pieceA, pieceB []int64 // the pieces of A and B, by piece index (those some product reads)
	planes         []int64 // each scheme group's FP32 result, combined into C by the epilogue pass (nil: one unscaled accumulator is C)
	gmEnd          int64

	passes []gemmPass

	// Tiling.
	bm, bk, bn     int
	nrb, ncb, nkb  int
	nfused, groups int

	// Buffer counts (double buffering) and layouts (byte offsets).
	nB, nL0, nC, nU     int
	l1A, l1B            int64 // L1: A group region, B buffers
	aBlk, bBlk          int64 // bytes of one A / B block
	l0aBuf, l0bBuf      int64 // bytes per L0A / L0B buffer (all matrices)
	l0cBuf, l0cTile     int64 // bytes per L0C buffer (the inside accumulators' tiles), of one tile
	l0cOut              int64 // L0C offset of the outside accumulators' two slots
	ubTile              int64
	ubOut, ubPart       int64 // UB offsets of the outside accumulators' tiles and their partial sums
	ubStage             int64 // UB offset of the outside accumulators' staging tile
	splitChunk          int   // elements per split/combine chunk
	splitSlot, combSlot int64 // UB bytes per slot
	splitTemps          int   // FP32 temporaries per element of the split (besides x)
	maxA, maxB          int
	maxIn, maxOut       int // most inside (elementwise: all) and outside accumulators of a pass
}

// tileFitError is newGEMMPlan's error for a tiling the core's buffers
// cannot hold, where a smaller tile may fit (daVinciSchemePlan's search).
type tileFitError struct{ error }

func (e tileFitError) Unwrap() error { return e.error }

// newGEMMPlan resolves the layout, checking capacities; errors name keys.
func newGEMMPlan(file string, p GEMMParams, v gemmVariant, m *machines.Machine) (*gemmPlan, error) {
	bad := func(key, format string, a ...any) error {
		return keyError(file, key, format, a...)
	}
	// tooBig: the tiling does not fit the buffer (a smaller one may).
	tooBig := func(buffer, format string, a ...any) error {
		return tileFitError{limitedBy(bad("tiling", format, a...), "machine.core.buffers."+buffer)}
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
	case v.scheme != nil:
		pl.sp = v.scheme
	default:
		sp, err := kindScheme(p, v, bad)
		if err != nil {
			return nil, err
		}
		pl.sp = sp
	}
	if pl.sp != nil {
		pl.in = pl.sp.format
	}
	pl.lda = int64(p.K)
	eb := int64(pl.in.Bytes())
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
	elementwise := v.split && p.Accumulation == "elementwise"
	switch {
	case v.int8:
		pl.c = place(M * N * 4)
		pl.passes = []gemmPass{singlePass("int8", pl.a8, pl.b8, pl.c)}
	case v.native:
		pl.c = place(M * N * 4)
		pl.passes = []gemmPass{singlePass("fp32", pl.a32, pl.b32, pl.c)}
	default:
		pl.schemePasses(place, elementwise)
	}
	pl.gmEnd = at
	if pl.gmEnd > int64(m.GM.Capacity) {
		return nil, limitedBy(bad("m", "the matrices need %d bytes of GM; machine %s has %d", pl.gmEnd, m.Name, int64(m.GM.Capacity)), "machine.gm.capacity")
	}
	for _, ps := range pl.passes {
		pl.maxA = max(pl.maxA, len(ps.aMats))
		pl.maxB = max(pl.maxB, len(ps.bMats))
		if ps.elementwise {
			pl.maxIn = max(pl.maxIn, len(ps.accs))
		} else {
			pl.maxIn = max(pl.maxIn, len(ps.inside()))
			pl.maxOut = max(pl.maxOut, len(ps.outside()))
		}
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
		what := ""
		if pl.maxA > 1 || pl.maxB > 1 {
			what = fmt.Sprintf(" (each of %d A and %d B matrices)", pl.maxA, pl.maxB)
		}
		return nil, tooBig("L1", "an A block (%d×%d) and two B blocks (%d×%d) of %s%s do not fit L1 (%d bytes)", pl.bm, pl.bk, pl.bk, pl.bn, pl.in, what, l1)
	}
	pl.nfused = p.Tiling.NFused
	if pl.nfused == 0 {
		pl.nfused = fits
	} else if pl.nfused > fits {
		return nil, limitedBy(bad("tiling.nfused", "%d A blocks do not fit L1 (%d bytes): at most %d (SGEMM-cube Eq. 8)", pl.nfused, l1, fits), "machine.core.buffers.L1")
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
		return nil, tooBig("L0A", "bm·bk = %d·%d %s%s, %d bytes, exceeds L0A (%d bytes; SGEMM-cube Eq. 12)", pl.bm, pl.bk, pl.in, timesMatrices(pl.maxA), pl.l0aBuf, int64(buf.L0A))
	}
	if pl.l0bBuf > int64(buf.L0B) {
		return nil, tooBig("L0B", "bk·bn = %d·%d %s%s, %d bytes, exceeds L0B (%d bytes; SGEMM-cube Eq. 12)", pl.bk, pl.bn, pl.in, timesMatrices(pl.maxB), pl.l0bBuf, int64(buf.L0B))
	}
	pl.nL0 = 1
	if double && 2*pl.l0aBuf <= int64(buf.L0A) && 2*pl.l0bBuf <= int64(buf.L0B) {
		pl.nL0 = 2
	}
	// L0C: nC buffers of the inside accumulators' tiles (elementwise: all
	// three), then two slots of the outside accumulators' tiles (one
	// k-block's products while the vector unit folds the other's).
	pl.l0cTile = int64(pl.bm * pl.bn * 4)
	pl.l0cBuf = int64(pl.maxIn) * pl.l0cTile
	outC := 2 * int64(pl.maxOut) * pl.l0cTile
	if pl.l0cBuf+outC > int64(buf.L0C) {
		return nil, tooBig("L0C", "%d %s tiles of bm·bn = %d·%d exceed L0C (%d bytes)", pl.maxIn+2*pl.maxOut, pl.out, pl.bm, pl.bn, int64(buf.L0C))
	}
	pl.nC = 1
	if double && 2*pl.l0cBuf+outC <= int64(buf.L0C) {
		pl.nC = 2
	}
	pl.l0cOut = int64(pl.nC) * pl.l0cBuf
	// UB: termwise keeps a result and a previous-partial tile per buffer;
	// elementwise keeps acc and two staging tiles; the outside
	// accumulators their tiles, their partial sums (several L1 groups) and
	// a staging tile.
	pl.ubTile = pl.l0cTile
	inTiles := int64(0)
	if pl.maxIn > 0 {
		inTiles = 2
	}
	if elementwise {
		inTiles = 3
	}
	outTiles := int64(0)
	if pl.maxOut > 0 {
		outTiles = int64(pl.maxOut) + 1
		if pl.groups > 1 {
			outTiles += int64(pl.maxOut)
		}
	}
	if (inTiles+outTiles)*pl.ubTile > int64(buf.UB) {
		return nil, tooBig("UB", "%d %s tiles of bm·bn = %d·%d exceed UB (%d bytes)", inTiles+outTiles, pl.out, pl.bm, pl.bn, int64(buf.UB))
	}
	pl.nU = 1
	if double && !elementwise && inTiles > 0 && (2*inTiles+outTiles)*pl.ubTile <= int64(buf.UB) {
		pl.nU = 2
	}
	pl.ubOut = int64(pl.nU) * inTiles * pl.ubTile
	if elementwise {
		pl.ubOut = inTiles * pl.ubTile
	}
	pl.ubStage = pl.ubOut + int64(pl.maxOut)*pl.ubTile
	pl.ubPart = pl.ubStage + pl.ubTile

	// Split and combine chunks: two slots of x, the split's temporaries
	// (FP32) and the pieces; combine: two slots of the planes (FP32).
	chunk := p.SplitChunk
	perElem := int64(0)
	if pl.sp != nil {
		pl.splitTemps = min(1, len(pl.sp.rounds)-1)
		perElem = 4*int64(1+pl.splitTemps) + int64(len(pl.sp.rounds))*eb
	}
	for chunk > 64 && 2*int64(chunk)*perElem > int64(buf.UB) {
		chunk /= 2
	}
	planeBytes := 4 * int64(len(pl.planes))
	for chunk > 64 && 2*int64(chunk)*planeBytes > int64(buf.UB) {
		chunk /= 2
	}
	chunk = chunk / 64 * 64
	pl.splitChunk = chunk
	pl.splitSlot = int64(chunk) * perElem
	pl.combSlot = int64(chunk) * planeBytes
	return pl, nil
}

// kindScheme is the split of kinds sgemm-cube (hi and lo, the residual
// scaled by 2^sb; hh, hl, lh termwise, corrections first — SGEMM-cube's
// reconstruction) and hgemm (the input rounded once): FP16 pieces with the
// program's split.rounding and split.saturate.
func kindScheme(p GEMMParams, v gemmVariant, bad func(key, format string, a ...any) error) (*schemePlan, error) {
	piece := SchemePiece{Format: "fp16", Rounding: p.Split.Rounding, Saturate: *p.Split.Saturate}
	s := schemePresets["hgemm"]
	s.Pieces = []SchemePiece{piece}
	if v.split {
		s = schemePresets["sgemm-cube"]
		lo := piece
		lo.Scale = p.Split.SB
		s.Pieces = []SchemePiece{piece, lo}
	}
	return resolveScheme(s, bad)
}

// schemePasses lays out the pieces, C and the planes in GM (after the FP32
// inputs) and builds the passes of the scheme: one per group (termwise) or
// one for all (fused); SGEMM-cube's elementwise accumulation is one pass
// folding hh, hl and lh every k-block.
func (pl *gemmPlan) schemePasses(place func(int64) int64, elementwise bool) {
	sp, p := pl.sp, &pl.p
	M, K, N := int64(p.M), int64(p.K), int64(p.N)
	es := int64(sp.format.Bytes())
	pl.pieceA, pl.pieceB = make([]int64, len(sp.rounds)), make([]int64, len(sp.rounds))
	for i := range sp.rounds {
		if pieceSlot(sp.nA, i) >= 0 {
			pl.pieceA[i] = place(M * K * es)
		}
		if pieceSlot(sp.nB, i) >= 0 {
			pl.pieceB[i] = place(K * N * es)
		}
	}
	pl.c = place(M * N * 4)
	direct := elementwise || (len(sp.groups) == 1 && sp.groups[0].weight == 0)
	if !direct {
		for range sp.groups {
			pl.planes = append(pl.planes, place(M*N*4))
		}
	}
	out := func(g int) int64 {
		if direct {
			return pl.c
		}
		return pl.planes[g]
	}
	// pass builds the pass of the given groups: the pieces they read, in
	// piece order, and an accumulator per group.
	pass := func(groups []int) gemmPass {
		ps := gemmPass{name: kernelName(sp, groups)}
		for _, g := range groups {
			for _, pr := range sp.groups[g].prods {
				if !slices.Contains(ps.aPieces, pr[0]) {
					ps.aPieces = append(ps.aPieces, pr[0])
				}
				if !slices.Contains(ps.bPieces, pr[1]) {
					ps.bPieces = append(ps.bPieces, pr[1])
				}
			}
		}
		slices.Sort(ps.aPieces)
		slices.Sort(ps.bPieces)
		for _, i := range ps.aPieces {
			ps.aMats = append(ps.aMats, pl.pieceA[i])
		}
		for _, i := range ps.bPieces {
			ps.bMats = append(ps.bMats, pl.pieceB[i])
		}
		for _, g := range groups {
			gr := sp.groups[g]
			acc := passAcc{outside: gr.outside, out: out(g), group: g}
			for _, pr := range gr.prods {
				acc.prods = append(acc.prods, [2]int{slices.Index(ps.aPieces, pr[0]), slices.Index(ps.bPieces, pr[1])})
			}
			ps.accs = append(ps.accs, acc)
		}
		return ps
	}
	all := make([]int, len(sp.groups))
	for g := range all {
		all[g] = g
	}
	switch {
	case elementwise:
		ps := pass(all)
		ps.name, ps.elementwise, ps.out = "elementwise", true, pl.c
		pl.passes = []gemmPass{ps}
	case sp.s.Kernels == "termwise":
		for _, g := range all {
			pl.passes = append(pl.passes, pass([]int{g}))
		}
	default:
		pl.passes = []gemmPass{pass(all)}
	}
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
	fA     = 0 // MTE2↔MTE1: A group ready / free
	fB     = 1 // MTE2↔MTE1: B buffer p ready / free (ids 1, 2)
	fWrite = 0 // MTE3→MTE2: previous group's partials written
	fSlot  = 0 // split/combine slots (ids 0, 1)
	fL0    = 0 // MTE1↔M: L0A/L0B buffer q (ids 0, 1)
	fL0C   = 0 // M↔V: L0C buffer c (ids 0, 1)
	fUB    = 0 // V↔MTE3, V↔MTE2: UB buffer u (ids 0, 1)
	fOutC  = 2 // M↔V: the outside accumulators' L0C slot s (ids 2, 3)
	fOutUB = 2 // V↔MTE2, V↔MTE3: the outside accumulators' UB tiles
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

// timesMatrices words the count of matrices an L0 buffer holds at once,
// for a refusal: " ×3 matrices" (a scheme's pieces), "" for one.
func timesMatrices(n int) string {
	if n <= 1 {
		return ""
	}
	return fmt.Sprintf(" ×%d matrices", n)
}
