package programs

import (
	"github.com/davinci-sim/davinci-sim/fp"
	"github.com/davinci-sim/davinci-sim/isa"
	"github.com/davinci-sim/davinci-sim/machines"
)

// luPlan is the resolved layout of an lu-fused run: GM addresses, tiling,
// buffer budgets and core sets.
type luPlan struct {
	p    LUParams
	mach *machines.Machine

	n, nb, nbk int // order, block size, blocks per dimension
	tb         int // bytes per trailing-matrix element (4 fp32, 2 fp16)
	bm, bn, bk int
	F          int // n_fused
	// gpu: the plan of a GPU run (lu_gpu.go): only the sizes, the GM layout
	// and the golden model's tiles are used; its fp16 epilogue is the GPU's.
	gpu bool

	// GM layout (bytes).
	a          int64    // trailing matrix n×n (fp32 or fp16), row-major
	lh, uh     int64    // FP16 factor panels n×n: Lh = s·L below the diagonal blocks, Uh = U right of them
	pc, pr     int64    // FP16 copies of the current column panel (n×nb) and row panel (nb×n); fp32 trailing only
	uinv, linv [2]int64 // FP16 s·U_ii⁻¹ and L_ii⁻¹ (nb×nb), by iteration parity
	gmEnd      int64

	// Buffers.
	kMax     int   // largest K of a GEMM kernel (n_fused·nb)
	nB, nL0  int   // L1 B buffers, L0A/L0B buffers
	nC, nU   int   // L0C tiles, UB sets
	l1B      int64 // L1 offset of the B buffers (A group first)
	ubSet    int64 // bytes per UB set
	cvtRows  int   // rows per conversion chunk
	cvtSlot  int64 // UB bytes per conversion slot
	main, fu []int // core sets: TRSM and priority zones; fusion zone (may be the same set)
}

// newLUPlan resolves the layout and checks the buffer budgets.
func newLUPlan(file string, p LUParams, m *machines.Machine) (*luPlan, error) {
	pl, err := newLUBudget(file, p, m)
	if err != nil {
		return nil, err
	}
	pl.placeMatrices()
	if pl.gmEnd > int64(m.GM.Capacity) {
		return nil, limitedBy(keyError(file, "n", "the matrices need %d bytes of GM; machine %s has %d", pl.gmEnd, m.Name, int64(m.GM.Capacity)), "machine.gm.capacity")
	}
	return pl, nil
}

// newLUBudget resolves the tiling, buffer budgets and core sets of an
// lu-fused run (everything but the GM layout, which newLUPlan places for
// one NPU and the cluster run per rank).
func newLUBudget(file string, p LUParams, m *machines.Machine) (*luPlan, error) {
	// bad refuses key's value against buffer (a key of core.buffers) and
	// the program's keys from (the other sizes the need comes from).
	bad := func(key, buffer string, from []string, format string, a ...any) error {
		return limitedBy(keyError(file, key, format, a...), append([]string{"machine.core.buffers." + buffer}, from...)...)
	}
	pl := &luPlan{p: p, mach: m, n: p.N, nb: p.NB, nbk: p.N / p.NB, bm: p.Tiling.BM, bn: p.Tiling.BN, bk: p.Tiling.BK, F: p.NFused}
	pl.tb = 4
	if p.Trailing == "fp16" {
		pl.tb = 2
	}

	buf := m.DaVinci().Buffers
	pl.kMax = pl.F * pl.nb
	if pl.F > pl.nbk {
		pl.kMax = pl.nbk * pl.nb
	}
	aGroup := int64(pl.bm) * int64(pl.kMax) * 2
	bBlk := int64(pl.bk) * int64(pl.bn) * 2
	if int64(pl.bm)*int64(pl.nb)*2+2*bBlk > int64(buf.L1) {
		return nil, bad("nb", "L1", []string{"program.tiling.bm", "program.tiling.bk", "program.tiling.bn"}, "%d is too large for L1 (%d bytes): a %d×%d FP16 L-panel row group and two %d×%d U buffers do not fit (lower tiling.bm or nb)",
			pl.nb, int64(buf.L1), pl.bm, pl.nb, pl.bk, pl.bn)
	}
	if aGroup+2*bBlk > int64(buf.L1) {
		most := (int64(buf.L1) - 2*bBlk) / (int64(pl.bm) * int64(pl.nb) * 2)
		return nil, bad("n_fused", "L1", []string{"program.nb", "program.tiling.bm", "program.tiling.bk", "program.tiling.bn"}, "%d fused iterations do not fit L1 (%d bytes): %d L blocks of %d×%d FP16 plus two U buffers; at most %d",
			pl.F, int64(buf.L1), pl.F, pl.bm, pl.nb, most)
	}
	pl.l1B = aGroup
	pl.nB = 2
	if int64(pl.bm)*int64(pl.bk)*2 > int64(buf.L0A) {
		return nil, bad("tiling.bm", "L0A", []string{"program.tiling.bk"}, "bm·bk = %d·%d FP16 exceeds L0A (%d bytes)", pl.bm, pl.bk, int64(buf.L0A))
	}
	if bBlk > int64(buf.L0B) {
		return nil, bad("tiling.bn", "L0B", []string{"program.tiling.bk"}, "bk·bn = %d·%d FP16 exceeds L0B (%d bytes)", pl.bk, pl.bn, int64(buf.L0B))
	}
	pl.nL0 = 1
	if 2*int64(pl.bm)*int64(pl.bk)*2 <= int64(buf.L0A) && 2*bBlk <= int64(buf.L0B) {
		pl.nL0 = 2
	}
	tile := int64(pl.bm) * int64(pl.bn) * 4
	if tile > int64(buf.L0C) {
		return nil, bad("tiling.bm", "L0C", []string{"program.tiling.bn"}, "an FP32 bm×bn = %d×%d tile exceeds L0C (%d bytes)", pl.bm, pl.bn, int64(buf.L0C))
	}
	pl.nC = 1
	if 2*tile <= int64(buf.L0C) {
		pl.nC = 2
	}
	// UB set: X (the C tile as loaded) and Y (the product: FP32 for an
	// FP32 trailing matrix, FP16 for FP16).
	pl.ubSet = luUBSet(pl.bm, pl.bn, pl.tb)
	if pl.ubSet > int64(buf.UB) {
		return nil, bad("tiling.bm", "UB", []string{"program.tiling.bn", "program.trailing"}, "a bm×bn = %d×%d epilogue (%d bytes) exceeds UB (%d bytes)", pl.bm, pl.bn, pl.ubSet, int64(buf.UB))
	}
	pl.nU = 1
	if 2*pl.ubSet <= int64(buf.UB) {
		pl.nU = 2
	}
	// Conversion chunks: two slots of rows×nb FP32 in and FP16 out.
	pl.cvtRows = int(int64(buf.UB) / 2 / (int64(pl.nb) * 6))
	if pl.cvtRows < 1 {
		return nil, bad("nb", "UB", nil, "%d is too large for UB (%d bytes): one FP32 row of the panel and its FP16 copy must fit twice", pl.nb, int64(buf.UB))
	}
	pl.cvtRows = min(pl.cvtRows, pl.nb)
	pl.cvtSlot = int64(pl.cvtRows) * int64(pl.nb) * 6
	if pl.F > 1 && p.NFusion < m.Cores {
		for c := 0; c < m.Cores-p.NFusion; c++ {
			pl.main = append(pl.main, c)
		}
		for c := m.Cores - p.NFusion; c < m.Cores; c++ {
			pl.fu = append(pl.fu, c)
		}
	} else {
		for c := 0; c < m.Cores; c++ {
			pl.main = append(pl.main, c)
		}
		pl.fu = pl.main
	}
	return pl, nil
}

// band is the set of trailing blocks (j, l) with a ≤ min(j, l) < b: rows
// [a, b) × columns [a, nbk) and rows [b, nbk) × columns [a, b).
type band struct{ a, b int }

func (z band) empty(nbk int) bool { return z.a >= z.b || z.a >= nbk }

// rects returns the band as block rectangles {j0, j1, l0, l1}.
func (z band) rects(nbk int) [][4]int {
	b := min(z.b, nbk)
	if z.a >= b {
		return nil
	}
	out := [][4]int{{z.a, b, z.a, nbk}}
	if b < nbk {
		out = append(out, [4]int{b, nbk, z.a, b})
	}
	return out
}

// Epilogues of a GEMM kernel.
const (
	epiSub     = iota // C (trailing, GM) −= alpha·acc
	epiStore16        // out (FP16, GM) = FP16(acc)
)

// luColTile is one output tile of a row job.
type luColTile struct {
	b    int64 // GM address of B at k = 0, first column
	cols int
	out  int64 // GM address of the output tile
}

// luRowJob is a row of output tiles sharing the A rows (staged in L1 once).
type luRowJob struct {
	a     int64 // GM address of A at k = 0, first row
	rows  int
	tiles []luColTile
}

// luGEMM is one GEMM kernel: C tiles = epilogue(Σ_k A·B) over K.
type luGEMM struct {
	lda, ldb, ldo int64 // row strides in bytes
	K             int
	epi           int
	alpha         float64 // epiSub scale (1/s)
	jobs          []luRowJob
}

// tiles returns the number of output tiles.
func (g *luGEMM) tiles() int {
	t := 0
	for _, j := range g.jobs {
		t += len(j.tiles)
	}
	return t
}

// flops returns 2·rows·cols·K summed over the tiles.
func (g *luGEMM) flops() float64 {
	f := 0.0
	for _, j := range g.jobs {
		for _, t := range j.tiles {
			f += float64(2 * float64(j.rows) * float64(t.cols) * float64(g.K))
		}
	}
	return f
}

// update returns the trailing-update kernel of band z with the terms of
// iterations [i0, i1): A_jl −= (1/s)·Σ Lh_ji·Uh_il.
func (pl *luPlan) update(z band, i0, i1 int, alpha float64) *luGEMM {
	n := int64(pl.n)
	g := &luGEMM{lda: n * 2, ldb: n * 2, ldo: n * int64(pl.tb), K: (i1 - i0) * pl.nb, epi: epiSub, alpha: alpha}
	kc := int64(i0 * pl.nb)
	for _, r := range z.rects(pl.nbk) {
		for j := r[0]; j < r[1]; j++ {
			for rt := 0; rt < pl.nb; rt += pl.bm {
				row := int64(j*pl.nb + rt)
				job := luRowJob{a: pl.lh + (row*n+kc)*2, rows: pl.bm}
				for l := r[2]; l < r[3]; l++ {
					for ct := 0; ct < pl.nb; ct += pl.bn {
						col := int64(l*pl.nb + ct)
						job.tiles = append(job.tiles, luColTile{b: pl.uh + (kc*n+col)*2, cols: pl.bn, out: pl.a + (row*n+col)*int64(pl.tb)})
					}
				}
				g.jobs = append(g.jobs, job)
			}
		}
	}
	return g
}

// panelA returns the GM address and row stride of the FP16 column panel of
// iteration i at global row r (the converted copy, or the trailing matrix
// itself when it is FP16).
func (pl *luPlan) panelA(i, r int) (int64, int64) {
	n, nb := int64(pl.n), int64(pl.nb)
	if pl.tb == 2 {
		return pl.a + (int64(r)*n+int64(i)*nb)*2, n * 2
	}
	return pl.pc + int64(r)*nb*2, nb * 2
}

// panelB returns the GM address and row stride of the FP16 row panel of
// iteration i at local row r, global column c.
func (pl *luPlan) panelB(i, r, c int) (int64, int64) {
	n, nb := int64(pl.n), int64(pl.nb)
	if pl.tb == 2 {
		return pl.a + ((int64(i)*nb+int64(r))*n+int64(c))*2, n * 2
	}
	return pl.pr + (int64(r)*n+int64(c))*2, n * 2
}

// trsm returns the two TRSM-as-GEMM kernels' work of iteration i (one
// kernel, two strides, so it is returned as two GEMMs run back to back):
// Lh_ji = FP16(FP16(A_ji)·FP16(s·U_ii⁻¹)) for j > i and
// Uh_il = FP16(FP16(L_ii⁻¹)·FP16(A_il)) for l > i.
func (pl *luPlan) trsm(i int) (left, right *luGEMM) {
	n, nb := int64(pl.n), int64(pl.nb)
	par := i % 2
	_, lda := pl.panelA(i, 0)
	left = &luGEMM{lda: lda, ldb: nb * 2, ldo: n * 2, K: pl.nb, epi: epiStore16}
	for r := (i + 1) * pl.nb; r < pl.n; r += pl.bm {
		a, _ := pl.panelA(i, r)
		job := luRowJob{a: a, rows: pl.bm}
		for ct := 0; ct < pl.nb; ct += pl.bn {
			job.tiles = append(job.tiles, luColTile{b: pl.uinv[par] + int64(ct)*2, cols: pl.bn, out: pl.lh + (int64(r)*n+int64(i)*nb+int64(ct))*2})
		}
		left.jobs = append(left.jobs, job)
	}
	_, ldb := pl.panelB(i, 0, 0)
	right = &luGEMM{lda: nb * 2, ldb: ldb, ldo: n * 2, K: pl.nb, epi: epiStore16}
	for rt := 0; rt < pl.nb; rt += pl.bm {
		job := luRowJob{a: pl.linv[par] + int64(rt)*nb*2, rows: pl.bm}
		for c := (i + 1) * pl.nb; c < pl.n; c += pl.bn {
			b, _ := pl.panelB(i, 0, c)
			job.tiles = append(job.tiles, luColTile{b: b, cols: pl.bn, out: pl.uh + ((int64(i)*nb+int64(rt))*n+int64(c))*2})
		}
		if len(job.tiles) > 0 {
			right.jobs = append(right.jobs, job)
		}
	}
	return left, right
}

// luSeg is a core's share of a row job: tiles [t0, t1).
type luSeg struct {
	g      *luGEMM
	job    int
	t0, t1 int
}

// segments splits the row jobs of gs into segments of at most
// ceil(tiles / cores) tiles and deals them round-robin; it returns core
// index ci's segments.
func segments(ci, cores int, gs ...*luGEMM) []luSeg {
	total := 0
	for _, g := range gs {
		total += g.tiles()
	}
	if total == 0 {
		return nil
	}
	per := max(1, (total+cores-1)/cores)
	var out []luSeg
	idx := 0
	for _, g := range gs {
		for ji, j := range g.jobs {
			for t0 := 0; t0 < len(j.tiles); t0 += per {
				if idx%cores == ci {
					out = append(out, luSeg{g: g, job: ji, t0: t0, t1: min(len(j.tiles), t0+per)})
				}
				idx++
			}
		}
	}
	return out
}

// LU flag ids (per pipe pair).
const (
	luFA = 0 // MTE1→MTE2: A group free; MTE2→MTE1: A group ready
	luFB = 1 // MTE1↔MTE2: B buffer p (ids 1, 2)
	luFX = 0 // epilogue set u (ids 0, 1): MTE2→V, V→MTE3, MTE3→MTE2 / MTE3→V
)

// gemmStream returns core ci's stream (of cores) for the GEMM kernels gs,
// run back to back with the same buffers: L1 holds the A rows of a segment
// (K deep) and two B buffers; MTE1 feeds ping-pong L0A/L0B; the cube
// accumulates a tile over K in L0C (ping-pong); the epilogue moves the tile
// through UB on the vector pipe (910A has no FixPipe) and writes it back.
func (pl *luPlan) gemmStream(ci, cores int, gs ...*luGEMM) isa.Stream {
	return func(yield func(isa.Instr) bool) {
		segs := segments(ci, cores, gs...)
		if len(segs) == 0 {
			return
		}
		// L0C→UB runs on the vector pipe (as in the GEMM generator), also on
		// machines with a FixPipe, so the V-side flags order it.
		e := newEmitter(yield, pl.mach)
		l0aBuf := int64(pl.bm) * int64(pl.bk) * 2
		l0bBuf := int64(pl.bk) * int64(pl.bn) * 2
		l0cTile := int64(pl.bm) * int64(pl.bn) * 4
		e.alloc(isa.L1, 0, pl.l1B+int64(pl.nB)*l0bBuf, "l1")
		e.alloc(isa.L0A, 0, int64(pl.nL0)*l0aBuf, "l0a")
		e.alloc(isa.L0B, 0, int64(pl.nL0)*l0bBuf, "l0b")
		e.alloc(isa.L0C, 0, int64(pl.nC)*l0cTile, "l0c")
		e.alloc(isa.UB, 0, int64(pl.nU)*pl.ubSet, "ub")
		tokens := kernelTokens(luFA, luFB, pl.nB, pl.nL0, pl.nC, pl.nU, func(u int) []token {
			return []token{{isa.MTE3, isa.MTE2, luFX + u}, {isa.MTE3, isa.V, luFX + u}}
		})
		e.presetTokens(tokens)
		var st gemmState
		for _, s := range segs {
			if !e.ok() {
				return
			}
			pl.emitSeg(e, &st, s)
		}
		e.drainTokens(tokens)
		e.freeGEMMBuffers()
	}
}

// emitSeg emits one segment: stage A rows in L1, then every output tile.
func (pl *luPlan) emitSeg(e *emitter, st *gemmState, s luSeg) {
	g := s.g
	job := &g.jobs[s.job]
	K := g.K
	l0aBuf := int64(pl.bm) * int64(pl.bk) * 2
	l0bBuf := int64(pl.bk) * int64(pl.bn) * 2
	l0cTile := int64(pl.bm) * int64(pl.bn) * 4
	rows := job.rows
	e.waitFlag(isa.MTE1, isa.MTE2, luFA)
	e.copy2D(isa.MTE2, l1Op(0), gmOp(job.a), rows, int64(K)*2, int64(K)*2, g.lda)
	e.setFlag(isa.MTE2, isa.MTE1, luFA)
	e.waitFlag(isa.MTE2, isa.MTE1, luFA)
	for t := s.t0; t < s.t1; t++ {
		tile := &job.tiles[t]
		cols := tile.cols
		c := st.c
		st.c = (st.c + 1) % pl.nC
		l0c := int64(c) * l0cTile
		e.waitFlag(isa.V, isa.M, fL0C+c)
		for kc := 0; kc < K; kc += pl.bk {
			p := st.p
			st.p = (st.p + 1) % pl.nB
			l1b := pl.l1B + int64(p)*l0bBuf
			e.waitFlag(isa.MTE1, isa.MTE2, luFB+p)
			e.copy2D(isa.MTE2, l1Op(l1b), gmOp(tile.b+int64(kc)*g.ldb), pl.bk, int64(cols)*2, int64(cols)*2, g.ldb)
			e.setFlag(isa.MTE2, isa.MTE1, luFB+p)
			q := st.q
			st.q = (st.q + 1) % pl.nL0
			e.waitFlag(isa.M, isa.MTE1, fL0+q)
			e.waitFlag(isa.MTE2, isa.MTE1, luFB+p)
			e.load(isa.Operand{Buf: isa.L0A, Addr: int64(q) * l0aBuf}, int64(kc)*2, rows, pl.bk, int64(K)*2)
			e.load(isa.Operand{Buf: isa.L0B, Addr: int64(q) * l0bBuf}, l1b, pl.bk, cols, int64(cols)*2)
			e.setFlag(isa.MTE1, isa.MTE2, luFB+p)
			if t == s.t1-1 && kc+pl.bk >= K {
				e.setFlag(isa.MTE1, isa.MTE2, luFA) // the A rows are consumed
			}
			e.setFlag(isa.MTE1, isa.M, fL0+q)
			e.waitFlag(isa.MTE1, isa.M, fL0+q)
			e.mmad(l0c, int64(q)*l0aBuf, int64(q)*l0bBuf, rows, pl.bk, cols, kc == 0)
			e.setFlag(isa.M, isa.MTE1, fL0+q)
		}
		e.setFlag(isa.M, isa.V, fL0C+c)
		pl.emitEpilogue(e, st, g, tile, rows, l0c, c)
	}
}

// emitEpilogue moves tile c of L0C out: epiSub loads the trailing tile,
// subtracts alpha·acc in FP32 (RNE) and writes it back; epiStore16 converts
// acc to FP16 (RNE, saturating) on the way to UB and writes it.
func (pl *luPlan) emitEpilogue(e *emitter, st *gemmState, g *luGEMM, tile *luColTile, rows int, l0c int64, c int) {
	u := st.u
	st.u = (st.u + 1) % pl.nU
	cols := tile.cols
	nel := rows * cols
	base := int64(u) * pl.ubSet
	x := base                           // loaded tile (trailing format)
	y := base + int64(nel)*int64(pl.tb) // product (trailing format)
	rowB := int64(cols) * int64(pl.tb)
	if g.epi == epiStore16 {
		e.waitFlag(isa.M, isa.V, fL0C+c)
		e.waitFlag(isa.MTE3, isa.V, luFX+u)
		e.emit(isa.L0CCopy(l0cPipe, ubOp(x), l0c, rows, cols, int64(cols)*2, fp.FP32, fp.FP16, fp.RNE, true))
		e.setFlag(isa.V, isa.M, fL0C+c)
		e.setFlag(isa.V, isa.MTE3, luFX+u)
		e.waitFlag(isa.V, isa.MTE3, luFX+u)
		e.copy2D(isa.MTE3, gmOp(tile.out), ubOp(x), rows, int64(cols)*2, g.ldo, int64(cols)*2)
		e.setFlag(isa.MTE3, isa.V, luFX+u)
		return
	}
	e.waitFlag(isa.MTE3, isa.MTE2, luFX+u)
	e.copy2D(isa.MTE2, ubOp(x), gmOp(tile.out), rows, rowB, rowB, g.ldo)
	e.setFlag(isa.MTE2, isa.V, luFX+u)
	e.waitFlag(isa.M, isa.V, fL0C+c)
	e.waitFlag(isa.MTE3, isa.V, luFX+u)
	// An FP16 trailing matrix is updated in FP16 (the product converted on
	// its way out of L0C, RNE, saturating): half the vector work of an FP32
	// subtraction and no casts of the tile.
	f := fp.FP32
	if pl.tb == 2 {
		f = fp.FP16
		e.emit(isa.L0CCopy(l0cPipe, ubOp(y), l0c, rows, cols, int64(cols)*2, fp.FP32, fp.FP16, fp.RNE, true))
	} else {
		e.l0cToUB(y, l0c, rows, cols)
	}
	e.setFlag(isa.V, isa.M, fL0C+c)
	e.vec(isa.VMuls, y, y, 0, nel, f, f, g.alpha, fp.RNE, false)
	e.waitFlag(isa.MTE2, isa.V, luFX+u)
	e.vec(isa.VSub, x, x, y, nel, f, f, 0, fp.RNE, false)
	e.setFlag(isa.V, isa.MTE3, luFX+u)
	e.waitFlag(isa.V, isa.MTE3, luFX+u)
	e.copy2D(isa.MTE3, gmOp(tile.out), ubOp(x), rows, rowB, g.ldo, rowB)
	e.setFlag(isa.MTE3, isa.MTE2, luFX+u)
	e.setFlag(isa.MTE3, isa.V, luFX+u)
}

// luCvt is one conversion chunk: rows×nb FP32 at src (row stride ss) to
// FP16 at dst (row stride ds).
type luCvt struct {
	src, dst int64
	ss, ds   int64
	rows     int
}

// cvtJobs returns the FP32 → FP16 conversions of iteration i's panels (fp32
// trailing only): column panel rows (i, nbk) into Pc, row panel columns
// (i, nbk) into Pr.
func (pl *luPlan) cvtJobs(i int) []luCvt {
	if pl.tb != 4 {
		return nil
	}
	n, nb := int64(pl.n), int64(pl.nb)
	var out []luCvt
	for r := (i + 1) * pl.nb; r < pl.n; r += pl.cvtRows {
		rows := min(pl.cvtRows, pl.n-r)
		out = append(out, luCvt{src: pl.a + (int64(r)*n+int64(i)*nb)*4, dst: pl.pc + int64(r)*nb*2, ss: n * 4, ds: nb * 2, rows: rows})
	}
	for l := i + 1; l < pl.nbk; l++ {
		for r := 0; r < pl.nb; r += pl.cvtRows {
			rows := min(pl.cvtRows, pl.nb-r)
			row := int64(i)*nb + int64(r)
			out = append(out, luCvt{src: pl.a + (row*n+int64(l)*nb)*4, dst: pl.pr + (int64(r)*n+int64(l)*nb)*2, ss: n * 4, ds: n * 2, rows: rows})
		}
	}
	return out
}

// cvtStream returns core ci's share of the panel conversion of iteration i
// on the vector unit: two UB slots so that loads, casts and stores overlap.
func (pl *luPlan) cvtStream(i, ci, cores int) isa.Stream {
	return pl.cvtStreamOf(func() []luCvt { return pl.cvtJobs(i) }, ci, cores)
}

// cvtStreamOf returns core ci's share of the conversions jobs() lists.
func (pl *luPlan) cvtStreamOf(list func() []luCvt, ci, cores int) isa.Stream {
	return func(yield func(isa.Instr) bool) {
		jobs := list()
		var mine []luCvt
		for k := ci; k < len(jobs); k += cores {
			mine = append(mine, jobs[k])
		}
		if len(mine) == 0 {
			return
		}
		e := newEmitter(yield, pl.mach)
		e.alloc(isa.UB, 0, 2*pl.cvtSlot, "cvt")
		for s := 0; s < 2; s++ {
			e.setFlag(isa.V, isa.MTE2, fSlot+s)
			e.setFlag(isa.MTE3, isa.V, fSlot+s)
		}
		nb := int64(pl.nb)
		for k, j := range mine {
			s := k % 2
			x := int64(s) * pl.cvtSlot
			h := x + int64(pl.cvtRows)*nb*4
			e.waitFlag(isa.V, isa.MTE2, fSlot+s)
			e.copy2D(isa.MTE2, ubOp(x), gmOp(j.src), j.rows, nb*4, nb*4, j.ss)
			e.setFlag(isa.MTE2, isa.V, fSlot+s)
			e.waitFlag(isa.MTE2, isa.V, fSlot+s)
			e.waitFlag(isa.MTE3, isa.V, fSlot+s)
			e.vec(isa.VCast, h, x, 0, j.rows*pl.nb, fp.FP32, fp.FP16, 0, fp.RNE, true)
			e.setFlag(isa.V, isa.MTE2, fSlot+s)
			e.setFlag(isa.V, isa.MTE3, fSlot+s)
			e.waitFlag(isa.V, isa.MTE3, fSlot+s)
			e.copy2D(isa.MTE3, gmOp(j.dst), ubOp(h), j.rows, nb*2, j.ds, nb*2)
			e.setFlag(isa.MTE3, isa.V, fSlot+s)
		}
		for s := 0; s < 2; s++ {
			e.waitFlag(isa.V, isa.MTE2, fSlot+s)
			e.waitFlag(isa.MTE3, isa.V, fSlot+s)
		}
		e.free(isa.UB, "cvt")
	}
}

// placeMatrices lays out GM: the matrix in the trailing precision, its FP16
// L and U copies, the FP16 panel copies (FP32 trailing), and two buffers of
// the diagonal block's FP16 inverses; gmEnd is the total.
func (pl *luPlan) placeMatrices() {
	n, nb := int64(pl.n), int64(pl.nb)
	at := int64(0)
	place := func(bytes int64) int64 {
		a := at
		at = (at + bytes + 4095) &^ 4095
		return a
	}
	pl.a = place(n * n * int64(pl.tb))
	pl.lh = place(n * n * 2)
	pl.uh = place(n * n * 2)
	if pl.tb == 4 {
		pl.pc = place(n * nb * 2)
		pl.pr = place(nb * n * 2)
	}
	for i := range 2 {
		pl.uinv[i] = place(nb * nb * 2)
		pl.linv[i] = place(nb * nb * 2)
	}
	pl.gmEnd = at
}
