package programs

import (
	"github.com/davinci-sim/davinci-sim/fp"
	"github.com/davinci-sim/davinci-sim/isa"
)

// stream returns core's instruction stream: the split pre-pass, the GEMM
// passes and (termwise SGEMM-cube) the combine pass, separated by sync_all
// as kernel launches are on hardware. Within a phase the pipes are chained
// by set/wait flags only, so the pipes overlap as far as the buffers allow
// (DESIGN.md "The core model"); every wait's matching set comes earlier in
// program order, so bounded issue queues cannot deadlock.
func (pl *gemmPlan) stream(core int) isa.Stream {
	return func(yield func(isa.Instr) bool) {
		e := newEmitter(yield, pl.mach)
		if !pl.v.native && !pl.v.int8 { // igemm's INT8 inputs go to the cube as they are
			pl.emitSplit(e, core)
			e.syncAll()
		}
		pl.emitGEMM(e, core)
		if pl.combine {
			e.syncAll()
			pl.emitCombine(e, core)
		}
	}
}

// slotTokens are the free tokens of the two UB slots of the split and
// combine passes (UB input free for MTE2, UB output free for V).
var slotTokens = []token{
	{isa.V, isa.MTE2, fSlot}, {isa.MTE3, isa.V, fSlot},
	{isa.V, isa.MTE2, fSlot + 1}, {isa.MTE3, isa.V, fSlot + 1},
}

// chunkJob is one contiguous range of a flat array handled by a vector pass.
type chunkJob struct {
	src, n int64 // element offset and count
	which  int   // split: 0 = A, 1 = B
}

// chunksOf returns the chunks of core for arrays of the given lengths,
// assigned round-robin over the cores.
func (pl *gemmPlan) chunksOf(core int, lens ...int64) []chunkJob {
	var out []chunkJob
	idx := 0
	E := int64(pl.splitChunk)
	for w, l := range lens {
		for off := int64(0); off < l; off += E {
			if idx%pl.ncores == core {
				out = append(out, chunkJob{src: off, n: min(E, l-off), which: w})
			}
			idx++
		}
	}
	return out
}

// emitSplit emits the FP32 → FP16 hi/lo split of A and B on the vector
// unit: hi = FP16(x), lo = FP16((x − hi)·2^sb) (hgemm: hi only), in two
// UB slots so that loads, vector work and stores overlap.
func (pl *gemmPlan) emitSplit(e *emitter, core int) {
	M, K, N := int64(pl.p.M), int64(pl.p.K), int64(pl.p.N)
	jobs := pl.chunksOf(core, M*K, K*N)
	if len(jobs) == 0 {
		return
	}
	E := int64(pl.splitChunk)
	slots := int64(2)
	e.alloc(isa.UB, 0, slots*pl.splitSlot, "split")
	e.presetTokens(slotTokens)
	sb := float64(int64(1) << pl.p.Split.SB)
	for i, j := range jobs {
		s := i % int(slots)
		base := int64(s) * pl.splitSlot
		x, hf := base, base+4*E
		hi, lo := base+8*E, base+10*E
		if !pl.v.split {
			hi = base + 4*E
		}
		src32, dstHi, dstLo := pl.a32, pl.aHi, pl.aLo
		if j.which == 1 {
			src32, dstHi, dstLo = pl.b32, pl.bHi, pl.bLo
		}
		n := int(j.n)
		e.waitFlag(isa.V, isa.MTE2, fSlot+s)
		e.copy2D(isa.MTE2, ubOp(x), gmOp(src32+4*j.src), 1, 4*j.n, 0, 0)
		e.setFlag(isa.MTE2, isa.V, fSlot+s)
		e.waitFlag(isa.MTE2, isa.V, fSlot+s)
		e.waitFlag(isa.MTE3, isa.V, fSlot+s)
		e.vec(isa.VCast, hi, x, 0, n, fp.FP32, fp.FP16, 0, pl.round, pl.sat)
		if pl.v.split {
			e.vec(isa.VCast, hf, hi, 0, n, fp.FP16, fp.FP32, 0, fp.RNE, false)
			e.vec(isa.VSub, hf, x, hf, n, fp.FP32, fp.FP32, 0, fp.RNE, false)
			if pl.p.Split.SB != 0 {
				e.vec(isa.VMuls, hf, hf, 0, n, fp.FP32, fp.FP32, sb, fp.RNE, false)
			}
			e.vec(isa.VCast, lo, hf, 0, n, fp.FP32, fp.FP16, 0, pl.round, pl.sat)
		}
		e.setFlag(isa.V, isa.MTE2, fSlot+s)
		e.setFlag(isa.V, isa.MTE3, fSlot+s)
		e.waitFlag(isa.V, isa.MTE3, fSlot+s)
		e.copy2D(isa.MTE3, gmOp(dstHi+2*j.src), ubOp(hi), 1, 2*j.n, 0, 0)
		if pl.v.split {
			e.copy2D(isa.MTE3, gmOp(dstLo+2*j.src), ubOp(lo), 1, 2*j.n, 0, 0)
		}
		e.setFlag(isa.MTE3, isa.V, fSlot+s)
	}
	e.drainTokens(slotTokens)
	e.free(isa.UB, "split")
}

// emitCombine emits C = C_hh + (C_hl + C_lh)·2^-sb over chunks of C.
func (pl *gemmPlan) emitCombine(e *emitter, core int) {
	jobs := pl.chunksOf(core, int64(pl.p.M)*int64(pl.p.N))
	if len(jobs) == 0 {
		return
	}
	E := int64(pl.splitChunk)
	e.alloc(isa.UB, 0, 2*pl.combSlot, "combine")
	e.presetTokens(slotTokens)
	for i, j := range jobs {
		s := i % 2
		base := int64(s) * pl.combSlot
		hh, hl, lh := base, base+4*E, base+8*E
		n := int(j.n)
		e.waitFlag(isa.V, isa.MTE2, fSlot+s)
		e.copy2D(isa.MTE2, ubOp(hh), gmOp(pl.cTerm[0]+4*j.src), 1, 4*j.n, 0, 0)
		e.copy2D(isa.MTE2, ubOp(hl), gmOp(pl.cTerm[1]+4*j.src), 1, 4*j.n, 0, 0)
		e.copy2D(isa.MTE2, ubOp(lh), gmOp(pl.cTerm[2]+4*j.src), 1, 4*j.n, 0, 0)
		e.setFlag(isa.MTE2, isa.V, fSlot+s)
		e.waitFlag(isa.MTE2, isa.V, fSlot+s)
		e.waitFlag(isa.MTE3, isa.V, fSlot+s)
		e.vec(isa.VAdd, hl, hl, lh, n, fp.FP32, fp.FP32, 0, fp.RNE, false)
		if pl.p.Split.SB != 0 {
			e.vec(isa.VMuls, hl, hl, 0, n, fp.FP32, fp.FP32, pl.scale, fp.RNE, false)
		}
		e.vec(isa.VAdd, hh, hh, hl, n, fp.FP32, fp.FP32, 0, fp.RNE, false)
		e.setFlag(isa.V, isa.MTE2, fSlot+s)
		e.setFlag(isa.V, isa.MTE3, fSlot+s)
		e.waitFlag(isa.V, isa.MTE3, fSlot+s)
		e.copy2D(isa.MTE3, gmOp(pl.c+4*j.src), ubOp(hh), 1, 4*j.n, 0, 0)
		e.setFlag(isa.MTE3, isa.V, fSlot+s)
	}
	e.drainTokens(slotTokens)
	e.free(isa.UB, "combine")
}

// emitGEMM emits the tiled GEMM passes of core (SGEMM-cube Algorithm 1,
// with the tiles of C split evenly over the cores in row-major order).
func (pl *gemmPlan) emitGEMM(e *emitter, core int) {
	work := pl.work(core)
	if len(work) == 0 {
		return
	}
	l1Bytes := pl.l1B + int64(pl.nB*pl.maxB)*pl.bBlk
	e.alloc(isa.L1, 0, l1Bytes, "l1")
	e.alloc(isa.L0A, 0, int64(pl.nL0)*pl.l0aBuf, "l0a")
	e.alloc(isa.L0B, 0, int64(pl.nL0)*pl.l0bBuf, "l0b")
	e.alloc(isa.L0C, 0, int64(pl.nC)*pl.l0cBuf, "l0c")
	ubTiles := int64(2 * pl.nU)
	if pl.passes[0].elementwise {
		ubTiles = 3
	}
	e.alloc(isa.UB, 0, ubTiles*pl.ubTile, "ub")
	// Pre-set the "free" flags of every buffer; drained at the end.
	tokens := kernelTokens(fA, fB, pl.nB, pl.nL0, pl.nC, pl.nU, func(u int) []token {
		return []token{{isa.V, isa.MTE2, fUB + u}, {isa.MTE3, isa.V, fUB + u}}
	})
	e.presetTokens(tokens)
	st := &gemmState{}
	for pi := range pl.passes {
		ps := &pl.passes[pi]
		for _, w := range work {
			if !e.ok() {
				return
			}
			pl.emitRowBlock(e, st, ps, w.i, w.j0, w.j1)
		}
	}
	e.drainTokens(tokens)
	e.freeGEMMBuffers()
}

// gemmState rotates the double buffers across the whole GEMM phase.
type gemmState struct {
	p, q, c, u int
}

// emitRowBlock emits row block i, column blocks [j0, j1), of one pass.
func (pl *gemmPlan) emitRowBlock(e *emitter, st *gemmState, ps *gemmPass, i, j0, j1 int) {
	N, lda := int64(pl.p.N), pl.lda
	eb := int64(pl.in.Bytes())
	rows := pl.rows(i)
	for g := 0; g < pl.groups && e.ok(); g++ {
		kb0 := g * pl.nfused
		kb1 := min(pl.nkb, kb0+pl.nfused)
		// Stage the group's A blocks (every A matrix) in L1.
		e.waitFlag(isa.MTE1, isa.MTE2, fA)
		for ai, a := range ps.aMats {
			for kb := kb0; kb < kb1; kb++ {
				dst := pl.l1A + (int64(ai)*int64(pl.nfused)+int64(kb-kb0))*pl.aBlk
				src := a + (int64(i*pl.bm)*lda+int64(kb*pl.bk))*eb
				e.copy2D(isa.MTE2, l1Op(dst), gmOp(src), rows, int64(pl.depth(kb))*eb, int64(pl.bk)*eb, lda*eb)
			}
		}
		e.setFlag(isa.MTE2, isa.MTE1, fA)
		e.waitFlag(isa.MTE2, isa.MTE1, fA)
		for j := j0; j < j1; j++ {
			cols := pl.cols(j)
			// Termwise: one L0C buffer per tile, accumulated over the
			// group; elementwise: a fresh buffer per k-block.
			c := st.c
			l0c := int64(c) * pl.l0cBuf
			if !ps.elementwise {
				st.c = (st.c + 1) % pl.nC
				e.waitFlag(isa.V, isa.M, fL0C+c)
			}
			for kb := kb0; kb < kb1; kb++ {
				depth := pl.depth(kb)
				// B blocks (every B matrix) into L1 buffer p.
				p := st.p
				st.p = (st.p + 1) % pl.nB
				e.waitFlag(isa.MTE1, isa.MTE2, fB+p)
				for bi, b := range ps.bMats {
					dst := pl.l1B + (int64(p)*int64(pl.maxB)+int64(bi))*pl.bBlk
					src := b + (int64(kb*pl.bk)*N+int64(j*pl.bn))*eb
					e.copy2D(isa.MTE2, l1Op(dst), gmOp(src), depth, int64(cols)*eb, int64(pl.bn)*eb, N*eb)
				}
				e.setFlag(isa.MTE2, isa.MTE1, fB+p)
				// L1 → L0A/L0B buffer q.
				q := st.q
				st.q = (st.q + 1) % pl.nL0
				e.waitFlag(isa.M, isa.MTE1, fL0+q)
				e.waitFlag(isa.MTE2, isa.MTE1, fB+p)
				for ai := range ps.aMats {
					src := pl.l1A + (int64(ai)*int64(pl.nfused)+int64(kb-kb0))*pl.aBlk
					e.loadAs(isa.Operand{Buf: isa.L0A, Addr: int64(q)*pl.l0aBuf + int64(ai)*pl.aBlk}, src, rows, depth, int64(pl.bk)*eb, pl.in)
				}
				for bi := range ps.bMats {
					src := pl.l1B + (int64(p)*int64(pl.maxB)+int64(bi))*pl.bBlk
					e.loadAs(isa.Operand{Buf: isa.L0B, Addr: int64(q)*pl.l0bBuf + int64(bi)*pl.bBlk}, src, depth, cols, int64(pl.bn)*eb, pl.in)
				}
				e.setFlag(isa.MTE1, isa.MTE2, fB+p)
				if j == j1-1 && kb == kb1-1 {
					e.setFlag(isa.MTE1, isa.MTE2, fA) // the group's A blocks are consumed
				}
				e.setFlag(isa.MTE1, isa.M, fL0+q)
				// Cube.
				e.waitFlag(isa.MTE1, isa.M, fL0+q)
				if ps.elementwise {
					c = st.c
					st.c = (st.c + 1) % pl.nC
					l0c = int64(c) * pl.l0cBuf
					e.waitFlag(isa.V, isa.M, fL0C+c)
				}
				for pi, pr := range ps.prods {
					a := int64(q)*pl.l0aBuf + int64(pr[0])*pl.aBlk
					b := int64(q)*pl.l0bBuf + int64(pr[1])*pl.bBlk
					init := ps.elementwise || kb == kb0
					e.mmadTo(l0c+int64(pi)*pl.l0cTile, a, b, rows, depth, cols, pl.in, pl.out, init)
				}
				e.setFlag(isa.M, isa.MTE1, fL0+q)
				if ps.elementwise {
					e.setFlag(isa.M, isa.V, fL0C+c)
					pl.emitFold(e, ps, i, j, rows, cols, l0c, c, g, kb == kb0, kb == kb1-1)
				}
			}
			if !ps.elementwise {
				e.setFlag(isa.M, isa.V, fL0C+c)
				pl.emitTileOut(e, st, ps, i, j, rows, cols, l0c, c, g, j == j0, j == j1-1)
			}
		}
	}
}

// emitTileOut moves a termwise tile from L0C through UB to GM, adding the
// previous groups' partial result (FP32 RNE, in increasing k).
func (pl *gemmPlan) emitTileOut(e *emitter, st *gemmState, ps *gemmPass, i, j, rows, cols int, l0c int64, c, g int, firstTile, lastTile bool) {
	N := int64(pl.p.N)
	u := st.u
	st.u = (st.u + 1) % pl.nU
	tileT := int64(2*u) * pl.ubTile
	tileP := tileT + pl.ubTile
	gm := ps.out + (int64(i*pl.bm)*N+int64(j*pl.bn))*4
	rowBytes := int64(cols) * 4
	if g > 0 {
		e.waitFlag(isa.V, isa.MTE2, fUB+u)
		if firstTile {
			e.waitFlag(isa.MTE3, isa.MTE2, fWrite)
		}
		e.copy2D(isa.MTE2, ubOp(tileP), gmOp(gm), rows, rowBytes, rowBytes, N*4)
		e.setFlag(isa.MTE2, isa.V, fUB+u)
	}
	e.waitFlag(isa.M, isa.V, fL0C+c)
	e.waitFlag(isa.MTE3, isa.V, fUB+u)
	e.l0cToUBAs(tileT, l0c, rows, cols, pl.out)
	e.setFlag(isa.V, isa.M, fL0C+c)
	if g > 0 {
		e.waitFlag(isa.MTE2, isa.V, fUB+u)
		e.vec(isa.VAdd, tileT, tileP, tileT, rows*cols, pl.out, pl.out, 0, fp.RNE, false)
		e.setFlag(isa.V, isa.MTE2, fUB+u)
	}
	e.setFlag(isa.V, isa.MTE3, fUB+u)
	e.waitFlag(isa.V, isa.MTE3, fUB+u)
	e.copy2D(isa.MTE3, gmOp(gm), ubOp(tileT), rows, rowBytes, N*4, rowBytes)
	e.setFlag(isa.MTE3, isa.V, fUB+u)
	if lastTile && g < pl.groups-1 {
		e.setFlag(isa.MTE3, isa.MTE2, fWrite)
	}
}

// emitFold folds one k-block's three products into the running result:
// acc = acc + (P_hh + (P_hl + P_lh)·2^-sb), FP32 RNE (the first k-block
// of the whole k initializes acc to the bracket).
func (pl *gemmPlan) emitFold(e *emitter, ps *gemmPass, i, j, rows, cols int, l0c int64, c, g int, firstKB, lastKB bool) {
	N := int64(pl.p.N)
	acc, x1, x2 := int64(0), pl.ubTile, 2*pl.ubTile
	gm := ps.out + (int64(i*pl.bm)*N+int64(j*pl.bn))*4
	rowBytes := int64(cols) * 4
	n := rows * cols
	if firstKB && g > 0 {
		e.waitFlag(isa.V, isa.MTE2, fUB)
		e.waitFlag(isa.MTE3, isa.MTE2, fWrite) // this tile's partial of group g−1 is in GM
		e.copy2D(isa.MTE2, ubOp(acc), gmOp(gm), rows, rowBytes, rowBytes, N*4)
		e.setFlag(isa.MTE2, isa.V, fUB)
	}
	e.waitFlag(isa.M, isa.V, fL0C+c)
	if firstKB {
		e.waitFlag(isa.MTE3, isa.V, fUB)
	}
	e.l0cToUB(x1, l0c+pl.l0cTile, rows, cols)   // P_hl
	e.l0cToUB(x2, l0c+2*pl.l0cTile, rows, cols) // P_lh
	e.vec(isa.VAdd, x1, x1, x2, n, fp.FP32, fp.FP32, 0, fp.RNE, false)
	if pl.p.Split.SB != 0 {
		e.vec(isa.VMuls, x1, x1, 0, n, fp.FP32, fp.FP32, pl.scale, fp.RNE, false)
	}
	e.l0cToUB(x2, l0c, rows, cols) // P_hh
	e.setFlag(isa.V, isa.M, fL0C+c)
	e.vec(isa.VAdd, x1, x2, x1, n, fp.FP32, fp.FP32, 0, fp.RNE, false)
	switch {
	case firstKB && g == 0:
		e.vec(isa.VMuls, acc, x1, 0, n, fp.FP32, fp.FP32, 1, fp.RNE, false)
	case firstKB:
		e.waitFlag(isa.MTE2, isa.V, fUB)
		e.vec(isa.VAdd, acc, acc, x1, n, fp.FP32, fp.FP32, 0, fp.RNE, false)
		e.setFlag(isa.V, isa.MTE2, fUB)
	default:
		e.vec(isa.VAdd, acc, acc, x1, n, fp.FP32, fp.FP32, 0, fp.RNE, false)
	}
	if lastKB {
		e.setFlag(isa.V, isa.MTE3, fUB)
		e.waitFlag(isa.V, isa.MTE3, fUB)
		e.copy2D(isa.MTE3, gmOp(gm), ubOp(acc), rows, rowBytes, N*4, rowBytes)
		e.setFlag(isa.MTE3, isa.V, fUB)
		if g < pl.groups-1 {
			e.setFlag(isa.MTE3, isa.MTE2, fWrite)
		}
	}
}
