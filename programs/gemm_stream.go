package programs

import (
	"iter"
	"math"
	"slices"
	"strings"

	"github.com/davinci-sim/davinci-sim/fp"
	"github.com/davinci-sim/davinci-sim/isa"
)

// stream returns core's instruction stream: the split pre-pass, the GEMM
// passes and (schemes whose accumulators go to planes: termwise
// SGEMM-cube, Ape FP32-F, Ootomo, …) the combine pass, separated by sync_all
// as kernel launches are on hardware. Within a phase the pipes are chained
// by set/wait flags only, so the pipes overlap as far as the buffers allow
// (DESIGN.md "The core model"); every wait's matching set comes earlier in
// program order, so bounded issue queues cannot deadlock.
func (pl *gemmPlan) stream(core int) isa.Stream {
	return func(yield func(isa.Instr) bool) {
		e := newEmitter(yield, pl.mach)
		if pl.sp != nil { // FP32 inputs, INT8 inputs go to the cube as they are
			pl.emitSplit(e, core)
			e.syncAll()
		}
		pl.emitGEMM(e, core)
		if len(pl.planes) > 0 {
			e.syncAll()
			pl.emitCombine(e, core)
		}
	}
}

// phases names the phases stream separates by sync_all, as the GPU
// programs name their kernels: KIND/split, KIND/ then the GEMM passes'
// names (several passes, termwise: one phase, their names joined by
// commas), KIND/epilogue (the combine pass); isa.Program.Phases.
func (pl *gemmPlan) phases() []string {
	kind := pl.p.Kind
	var out []string
	if pl.sp != nil {
		out = append(out, kind+"/split")
	}
	names := make([]string, len(pl.passes))
	for i, ps := range pl.passes {
		names[i] = ps.name
	}
	out = append(out, kind+"/"+strings.Join(names, ","))
	if len(pl.planes) > 0 {
		out = append(out, kind+"/epilogue")
	}
	return out
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

// chunks yields core's chunks of arrays of the given lengths — each array
// cut into splitChunk elements, the chunks of all of them dealt to the
// cores round-robin in order — with their index among core's, computed as
// they are asked for: a list of them held (M·K + K·N)/splitChunk/cores
// entries at once (a 2^20-cubed GEMM in 64-element chunks: gigabytes,
// built before the first instruction, deaf to an interrupt).
func (pl *gemmPlan) chunks(core int, lens ...int64) iter.Seq2[int, chunkJob] {
	return func(yield func(int, chunkJob) bool) {
		E, nc := int64(pl.splitChunk), int64(pl.ncores)
		first, i := int64(0), 0 // the array's first chunk among all; core's chunks so far
		for w, l := range lens {
			n := (l + E - 1) / E
			// core's first chunk at or after first: the next index ≡ core (mod nc)
			for g := first + ((int64(core)-first)%nc+nc)%nc; g < first+n; g += nc {
				off := (g - first) * E
				if !yield(i, chunkJob{src: off, n: min(E, l-off), which: w}) {
					return
				}
				i++
			}
			first += n
		}
	}
}

// chunkCount is how many chunks chunks(core, lens...) yields.
func (pl *gemmPlan) chunkCount(core int, lens ...int64) int64 {
	E, nc, total := int64(pl.splitChunk), int64(pl.ncores), int64(0)
	for _, l := range lens {
		total += (l + E - 1) / E
	}
	n := total / nc
	if int64(core) < total%nc {
		n++
	}
	return n
}

// emitSplit emits the split of A and B into the scheme's pieces on the
// vector unit (schemePlan.split's operations: piece i = round_i(r·2^s_i),
// r = r − piece_i·2^−s_i, in FP32; SGEMM-cube: hi = FP16(x), lo =
// FP16((x − hi)·2^sb); hgemm: hi only), in two UB slots so that loads,
// vector work and stores overlap (splitSteps: the residual in x's place,
// the temporary after it, then the pieces).
func (pl *gemmPlan) emitSplit(e *emitter, core int) {
	sp := pl.sp
	M, K, N := int64(pl.p.M), int64(pl.p.K), int64(pl.p.N)
	if pl.chunkCount(core, M*K, K*N) == 0 {
		return
	}
	E := int64(pl.splitChunk)
	es := int64(sp.format.Bytes())
	slots := int64(2)
	e.alloc(isa.UB, 0, slots*pl.splitSlot, "split")
	e.presetTokens(slotTokens)
	// The split's steps for A and for B (each makes the pieces up to the
	// last its products read).
	steps := [2][]splitStep{sp.splitSteps(slices.Max(sp.nA)), sp.splitSteps(slices.Max(sp.nB))}
	for i, j := range pl.chunks(core, M*K, K*N) {
		if !e.ok() { // (the consumer closed the stream: a run stopped)
			return
		}
		s := i % int(slots)
		base := int64(s) * pl.splitSlot
		at := func(x int) int64 {
			switch x {
			case splitResidual:
				return base
			case splitTemp:
				return base + 4*E
			}
			return base + 4*E*int64(1+pl.splitTemps) + es*E*int64(x)
		}
		src32, used, dst := pl.a32, sp.nA, pl.pieceA
		if j.which == 1 {
			src32, used, dst = pl.b32, sp.nB, pl.pieceB
		}
		n := int(j.n)
		e.waitFlag(isa.V, isa.MTE2, fSlot+s)
		e.copy2D(isa.MTE2, ubOp(base), gmOp(src32+4*j.src), 1, 4*j.n, 0, 0)
		e.setFlag(isa.MTE2, isa.V, fSlot+s)
		e.waitFlag(isa.MTE2, isa.V, fSlot+s)
		e.waitFlag(isa.MTE3, isa.V, fSlot+s)
		for _, st := range steps[j.which] {
			in, out, src1 := fp.FP32, fp.FP32, int64(0)
			switch st.op {
			case isa.VCast:
				in, out = st.from, st.to
			case isa.VSub:
				src1 = at(st.src1)
			}
			e.vec(st.op, at(st.dst), at(st.src0), src1, n, in, out, st.scalar, st.round.Round, st.round.Saturate)
		}
		e.setFlag(isa.V, isa.MTE2, fSlot+s)
		e.setFlag(isa.V, isa.MTE3, fSlot+s)
		e.waitFlag(isa.V, isa.MTE3, fSlot+s)
		for _, x := range used {
			e.copy2D(isa.MTE3, gmOp(dst[x]+es*j.src), ubOp(at(x)), 1, es*j.n, 0, 0)
		}
		e.setFlag(isa.MTE3, isa.V, fSlot+s)
	}
	e.drainTokens(slotTokens)
	e.free(isa.UB, "split")
}

// emitCombine emits the scheme's epilogue (schemePlan.epilogue's steps)
// over chunks of C: the planes P_g (each group's FP32 accumulator) to C in
// FP32 RNE (SGEMM-cube: C = C_hh + (C_hl + C_lh)·2^-sb).
func (pl *gemmPlan) emitCombine(e *emitter, core int) {
	mn := int64(pl.p.M) * int64(pl.p.N)
	if pl.chunkCount(core, mn) == 0 {
		return
	}
	E := int64(pl.splitChunk)
	e.alloc(isa.UB, 0, 2*pl.combSlot, "combine")
	e.presetTokens(slotTokens)
	for i, j := range pl.chunks(core, mn) {
		if !e.ok() {
			return
		}
		s := i % 2
		base := int64(s) * pl.combSlot
		plane := func(g int) int64 { return base + 4*E*int64(g) }
		n := int(j.n)
		e.waitFlag(isa.V, isa.MTE2, fSlot+s)
		for g, p := range pl.planes {
			e.copy2D(isa.MTE2, ubOp(plane(g)), gmOp(p+4*j.src), 1, 4*j.n, 0, 0)
		}
		e.setFlag(isa.MTE2, isa.V, fSlot+s)
		e.waitFlag(isa.MTE2, isa.V, fSlot+s)
		e.waitFlag(isa.MTE3, isa.V, fSlot+s)
		for _, st := range pl.sp.epilogue {
			if st.add {
				e.vec(isa.VAdd, plane(st.dst), plane(st.dst), plane(st.src), n, fp.FP32, fp.FP32, 0, fp.RNE, false)
			} else {
				e.vec(isa.VMuls, plane(st.dst), plane(st.dst), 0, n, fp.FP32, fp.FP32, math.Ldexp(1, -st.shift), fp.RNE, false)
			}
		}
		e.setFlag(isa.V, isa.MTE2, fSlot+s)
		e.setFlag(isa.V, isa.MTE3, fSlot+s)
		e.waitFlag(isa.V, isa.MTE3, fSlot+s)
		e.copy2D(isa.MTE3, gmOp(pl.c+4*j.src), ubOp(plane(0)), 1, 4*j.n, 0, 0)
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
	e.alloc(isa.L0C, 0, pl.l0cOut+2*int64(pl.maxOut)*pl.l0cTile, "l0c")
	ubBytes := pl.ubOut
	if pl.maxOut > 0 {
		ubBytes = pl.ubPart
		if pl.groups > 1 {
			ubBytes += int64(pl.maxOut) * pl.ubTile
		}
	}
	e.alloc(isa.UB, 0, ubBytes, "ub")
	// Pre-set the "free" flags of every buffer; drained at the end.
	tokens := kernelTokens(fA, fB, pl.nB, pl.nL0, pl.nC, pl.nU, func(u int) []token {
		return []token{{isa.V, isa.MTE2, fUB + u}, {isa.MTE3, isa.V, fUB + u}}
	})
	if pl.maxOut > 0 {
		tokens = append(tokens, token{isa.V, isa.M, fOutC}, token{isa.V, isa.M, fOutC + 1},
			token{isa.V, isa.MTE2, fOutUB}, token{isa.MTE3, isa.V, fOutUB})
	}
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
	s          int // the outside accumulators' L0C slot
}

// emitRowBlock emits row block i, column blocks [j0, j1), of one pass.
func (pl *gemmPlan) emitRowBlock(e *emitter, st *gemmState, ps *gemmPass, i, j0, j1 int) {
	N, lda := int64(pl.p.N), pl.lda
	eb := int64(pl.in.Bytes())
	rows := pl.rows(i)
	inside, outside := ps.inside(), ps.outside()
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
			// Inside accumulators: one L0C buffer per tile, accumulated
			// over the group; elementwise: a fresh buffer per k-block.
			c := st.c
			l0c := int64(c) * pl.l0cBuf
			if !ps.elementwise && len(inside) > 0 {
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
				s := st.s
				if len(outside) > 0 {
					st.s = 1 - st.s
					e.waitFlag(isa.V, isa.M, fOutC+s)
				}
				nIn, nOut := 0, 0
				for _, acc := range ps.accs {
					tile, init := l0c+int64(nIn)*pl.l0cTile, ps.elementwise || kb == kb0
					if acc.outside {
						tile, init = pl.l0cOut+int64(s*pl.maxOut+nOut)*pl.l0cTile, true
						nOut++
					} else {
						nIn++
					}
					for pi, pr := range acc.prods {
						a := int64(q)*pl.l0aBuf + int64(pr[0])*pl.aBlk
						b := int64(q)*pl.l0bBuf + int64(pr[1])*pl.bBlk
						e.mmadTo(tile, a, b, rows, depth, cols, pl.in, pl.out, init && pi == 0)
					}
				}
				e.setFlag(isa.M, isa.MTE1, fL0+q)
				if ps.elementwise {
					e.setFlag(isa.M, isa.V, fL0C+c)
					pl.emitFold(e, ps, i, j, rows, cols, l0c, c, g, kb == kb0, kb == kb1-1)
				}
				if len(outside) > 0 {
					e.setFlag(isa.M, isa.V, fOutC+s)
					pl.emitOutsideFold(e, ps, outside, i, j, rows, cols, s, g, kb == kb0, kb == kb1-1, j == j0, j == j1-1 && len(inside) == 0)
				}
			}
			if !ps.elementwise && len(inside) > 0 {
				e.setFlag(isa.M, isa.V, fL0C+c)
				pl.emitTileOut(e, st, ps, inside, i, j, rows, cols, l0c, c, g, j == j0 && len(outside) == 0, j == j1-1)
			}
		}
	}
}

// emitTileOut moves the tiles of the pass's inside accumulators (indices
// in ps.accs) from L0C through UB to GM, adding the previous groups' partial results (FP32 RNE,
// in increasing k). waitWrite: the first partial load of the group waits
// for the previous group's writes; lastTile: the group's last tile, after
// which they are signalled.
func (pl *gemmPlan) emitTileOut(e *emitter, st *gemmState, ps *gemmPass, inside []int, i, j, rows, cols int, l0c int64, c, g int, waitWrite, lastTile bool) {
	N := int64(pl.p.N)
	rowBytes := int64(cols) * 4
	for x, ai := range inside {
		u := st.u
		st.u = (st.u + 1) % pl.nU
		tileT := int64(2*u) * pl.ubTile
		tileP := tileT + pl.ubTile
		gm := ps.accs[ai].out + (int64(i*pl.bm)*N+int64(j*pl.bn))*4
		if g > 0 {
			e.waitFlag(isa.V, isa.MTE2, fUB+u)
			if waitWrite && x == 0 {
				e.waitFlag(isa.MTE3, isa.MTE2, fWrite)
			}
			e.copy2D(isa.MTE2, ubOp(tileP), gmOp(gm), rows, rowBytes, rowBytes, N*4)
			e.setFlag(isa.MTE2, isa.V, fUB+u)
		}
		if x == 0 {
			e.waitFlag(isa.M, isa.V, fL0C+c)
		}
		e.waitFlag(isa.MTE3, isa.V, fUB+u)
		e.l0cToUBAs(tileT, l0c+int64(x)*pl.l0cTile, rows, cols, pl.out)
		if x == len(inside)-1 {
			e.setFlag(isa.V, isa.M, fL0C+c)
		}
		if g > 0 {
			e.waitFlag(isa.MTE2, isa.V, fUB+u)
			e.vec(isa.VAdd, tileT, tileP, tileT, rows*cols, pl.out, pl.out, 0, fp.RNE, false)
			e.setFlag(isa.V, isa.MTE2, fUB+u)
		}
		e.setFlag(isa.V, isa.MTE3, fUB+u)
		e.waitFlag(isa.V, isa.MTE3, fUB+u)
		e.copy2D(isa.MTE3, gmOp(gm), ubOp(tileT), rows, rowBytes, N*4, rowBytes)
		e.setFlag(isa.MTE3, isa.V, fUB+u)
		if lastTile && g < pl.groups-1 && x == len(inside)-1 {
			e.setFlag(isa.MTE3, isa.MTE2, fWrite)
		}
	}
}

// emitOutsideFold adds one k-block's products of the pass's outside
// accumulators (indices in ps.accs; L0C slot s, each from zero) to their FP32 tiles in UB
// (Ootomo's accumulation outside the matrix unit): at the group's first
// k-block the tiles start from the products plus, after the first group,
// the previous groups' partial sums (loaded from GM); at its last they go
// to GM. firstTile: the group's first tile, whose load waits for the
// previous group's writes; signal: the group's last tile when no inside
// accumulator follows, whose store signals them.
func (pl *gemmPlan) emitOutsideFold(e *emitter, ps *gemmPass, outside []int, i, j, rows, cols, s, g int, firstKB, lastKB, firstTile, signal bool) {
	N := int64(pl.p.N)
	rowBytes := int64(cols) * 4
	n := rows * cols
	acc := func(x int) int64 { return pl.ubOut + int64(x)*pl.ubTile }
	part := func(x int) int64 { return pl.ubPart + int64(x)*pl.ubTile }
	gm := func(x int) int64 { return ps.accs[outside[x]].out + (int64(i*pl.bm)*N+int64(j*pl.bn))*4 }
	if firstKB && g > 0 {
		e.waitFlag(isa.V, isa.MTE2, fOutUB)
		if firstTile {
			e.waitFlag(isa.MTE3, isa.MTE2, fWrite)
		}
		for x := range outside {
			e.copy2D(isa.MTE2, ubOp(part(x)), gmOp(gm(x)), rows, rowBytes, rowBytes, N*4)
		}
		e.setFlag(isa.MTE2, isa.V, fOutUB)
	}
	e.waitFlag(isa.M, isa.V, fOutC+s)
	if firstKB {
		e.waitFlag(isa.MTE3, isa.V, fOutUB) // the tiles are stored
	}
	for x := range outside {
		src := pl.l0cOut + int64(s*pl.maxOut+x)*pl.l0cTile
		if firstKB {
			e.l0cToUB(acc(x), src, rows, cols)
			continue
		}
		e.l0cToUB(pl.ubStage, src, rows, cols)
		e.vec(isa.VAdd, acc(x), acc(x), pl.ubStage, n, fp.FP32, fp.FP32, 0, fp.RNE, false)
	}
	e.setFlag(isa.V, isa.M, fOutC+s)
	if firstKB && g > 0 {
		e.waitFlag(isa.MTE2, isa.V, fOutUB)
		for x := range outside {
			e.vec(isa.VAdd, acc(x), part(x), acc(x), n, fp.FP32, fp.FP32, 0, fp.RNE, false)
		}
		e.setFlag(isa.V, isa.MTE2, fOutUB)
	}
	if lastKB {
		e.setFlag(isa.V, isa.MTE3, fOutUB)
		e.waitFlag(isa.V, isa.MTE3, fOutUB)
		for x := range outside {
			e.copy2D(isa.MTE3, gmOp(gm(x)), ubOp(acc(x)), rows, rowBytes, N*4, rowBytes)
		}
		e.setFlag(isa.MTE3, isa.V, fOutUB)
		if signal && g < pl.groups-1 {
			e.setFlag(isa.MTE3, isa.MTE2, fWrite)
		}
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
