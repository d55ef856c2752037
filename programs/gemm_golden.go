package programs

import (
	"unsafe"

	"github.com/davinci-sim/davinci-sim/cube"
	"github.com/davinci-sim/davinci-sim/fp"
)

// The golden model: a short, direct implementation of the same arithmetic
// as the generated program — same splits, same k-blocking and L1 groups,
// same cube numerics preset, same FP32 roundings in the same order — used
// by tests (bit-for-bit equality with the simulated result) and by
// `numerics: sampled`, which computes a sample of output tiles with it.

// splitPieces returns the scheme's pieces (bit patterns of the piece
// format, piece-major) of the elements of the row-major matrix x (ld
// columns) that pick selects (all when nil); the others stay zero.
// schemePlan.split is the vector unit's split (emitSplit) bit for bit.
func (pl *gemmPlan) splitPieces(x []float32, ld int, pick func(r int) []span) [][]uint16 {
	out := make([][]uint16, len(pl.sp.rounds))
	for i := range out {
		out[i] = make([]uint16, len(x))
	}
	buf := make([]uint32, len(pl.sp.rounds))
	one := func(i int) {
		pl.sp.split(x[i], buf)
		for x, b := range buf {
			out[x][i] = uint16(b)
		}
	}
	for r := 0; r*ld < len(x); r++ {
		if pick == nil {
			for i := r * ld; i < (r+1)*ld; i++ {
				one(i)
			}
			continue
		}
		for _, sp := range pick(r) {
			for c := sp.from; c < sp.to; c++ {
				one(r*ld + c)
			}
		}
	}
	return out
}

// span is the columns [from, to) of a row.
type span struct{ from, to int }

// goldenOperands holds the operands of the golden model.
type goldenOperands struct {
	pa, pb   [][]uint16 // the pieces of A and B (FP16/BF16 patterns), by piece index
	a32, b32 []uint32   // FP32 bit patterns (native sgemm)
}

// goldenTile computes output tile (i, j) of C (row-major rows×cols): every
// accumulator as its pass runs it — inside ones chained through the cube
// model over each L1 group of k-blocks, the groups' partial sums added in
// FP32; outside ones from zero every k-block, added in FP32 — then the
// scheme's epilogue (SGEMM-cube's elementwise accumulation folds the three
// products every k-block instead).
func (pl *gemmPlan) goldenTile(model cube.Model, ops *goldenOperands, i, j int) ([]float32, error) {
	rows, cols := pl.rows(i), pl.cols(j)
	var a16, b16 []uint16 // the k-block's operands, reused from product to product
	var a32, b32 []uint32
	grow := func(buf []uint16, n int) []uint16 {
		if cap(buf) < n {
			return make([]uint16, n)
		}
		return buf[:n] // (every element written before the product reads it)
	}
	product := func(ps *gemmPass, pr [2]int, kb int, c []float32, init bool) error {
		depth := pl.depth(kb)
		if pl.v.native {
			if cap(a32) < rows*depth {
				a32 = make([]uint32, rows*depth)
			}
			if cap(b32) < depth*cols {
				b32 = make([]uint32, depth*cols)
			}
			a, b := a32[:rows*depth], b32[:depth*cols]
			for r := 0; r < rows; r++ {
				copy(a[r*depth:(r+1)*depth], ops.a32[(i*pl.bm+r)*pl.p.K+kb*pl.bk:])
			}
			for r := 0; r < depth; r++ {
				copy(b[r*cols:(r+1)*cols], ops.b32[(kb*pl.bk+r)*pl.p.N+j*pl.bn:])
			}
			cb := unsafe.Slice((*uint32)(unsafe.Pointer(unsafe.SliceData(c))), len(c))
			return model.MMAD(fp.FP32, fp.FP32, rows, depth, cols, a, cube.RowMajor, b, cube.RowMajor, cb, cube.RowMajor, init)
		}
		a16, b16 = grow(a16, rows*depth), grow(b16, depth*cols)
		a, b := a16, b16
		A, B := ops.pa[ps.aPieces[pr[0]]], ops.pb[ps.bPieces[pr[1]]]
		for r := 0; r < rows; r++ {
			copy(a[r*depth:(r+1)*depth], A[(i*pl.bm+r)*pl.p.K+kb*pl.bk:])
		}
		for r := 0; r < depth; r++ {
			copy(b[r*cols:(r+1)*cols], B[(kb*pl.bk+r)*pl.p.N+j*pl.bn:])
		}
		if pl.in == fp.BF16 {
			return model.MMADBF16(rows, depth, cols, a, cube.RowMajor, b, cube.RowMajor, c, cube.RowMajor, init)
		}
		return model.MMADF16(rows, depth, cols, a, cube.RowMajor, b, cube.RowMajor, c, cube.RowMajor, init)
	}
	scale := float32(pl.scale)
	n := rows * cols
	if pl.passes[0].elementwise {
		ps := &pl.passes[0]
		acc := make([]float32, n)
		p := [3][]float32{make([]float32, n), make([]float32, n), make([]float32, n)}
		first := true
		for kb := 0; kb < pl.nkb; kb++ {
			for x, a := range ps.accs {
				if err := product(ps, a.prods[0], kb, p[x], true); err != nil {
					return nil, err
				}
			}
			for e := 0; e < n; e++ {
				x := p[1][e] + p[2][e]
				if pl.p.Split.SB != 0 {
					x = float32(x * scale) // rounds here: no fused multiply-add with the next line
				}
				x = p[0][e] + x
				if first {
					acc[e] = x
				} else {
					acc[e] = acc[e] + x
				}
			}
			first = false
		}
		return acc, nil
	}
	accs := make([][]float32, 1) // by scheme group (native: the one accumulator)
	if pl.sp != nil {
		accs = make([][]float32, len(pl.sp.groups))
	}
	for pi := range pl.passes {
		ps := &pl.passes[pi]
		for _, a := range ps.accs {
			out := make([]float32, n)
			part := make([]float32, n)
			// fold adds a partial sum to out in FP32 (the first is out).
			fold := func(first bool) {
				if first {
					copy(out, part)
					return
				}
				for e := range out {
					out[e] = out[e] + part[e]
				}
			}
			for g := 0; g < pl.groups; g++ {
				kb0 := g * pl.nfused
				kb1 := min(pl.nkb, kb0+pl.nfused)
				for kb := kb0; kb < kb1; kb++ {
					for x, pr := range a.prods {
						if err := product(ps, pr, kb, part, x == 0 && (a.outside || kb == kb0)); err != nil {
							return nil, err
						}
					}
					if a.outside {
						fold(kb == 0) // every k-block's products
					}
				}
				if !a.outside {
					fold(g == 0) // every L1 group's chained products
				}
			}
			accs[a.group] = out
		}
	}
	if len(pl.planes) == 0 {
		return accs[0], nil
	}
	c := make([]float32, n)
	buf := make([]float32, len(accs))
	for e := range c {
		for g := range accs {
			buf[g] = accs[g][e]
		}
		c[e] = pl.sp.combine(buf)
	}
	return c, nil
}

// operands returns the golden model's operands of the given output tiles
// (all when nil): only their rows of A and columns of B are split.
func (pl *gemmPlan) operands(a, b []float32, tiles [][2]int) *goldenOperands {
	ops := &goldenOperands{}
	if pl.v.native {
		ops.a32 = unsafe.Slice((*uint32)(unsafe.Pointer(unsafe.SliceData(a))), len(a))
		ops.b32 = unsafe.Slice((*uint32)(unsafe.Pointer(unsafe.SliceData(b))), len(b))
		return ops
	}
	var pickA, pickB func(r int) []span
	if tiles != nil {
		rowBlock, cols := map[int]bool{}, []span{}
		seen := map[int]bool{}
		for _, t := range tiles {
			rowBlock[t[0]] = true
			if !seen[t[1]] {
				seen[t[1]] = true
				cols = append(cols, span{t[1] * pl.bn, t[1]*pl.bn + pl.cols(t[1])})
			}
		}
		whole := []span{{0, pl.p.K}}
		pickA = func(r int) []span {
			if rowBlock[r/pl.bm] {
				return whole
			}
			return nil
		}
		pickB = func(int) []span { return cols }
	}
	ops.pa = pl.splitPieces(a, pl.p.K, pickA)
	ops.pb = pl.splitPieces(b, pl.p.N, pickB)
	return ops
}

// placeTile writes tile (i, j) into the row-major m×n matrix c.
func (pl *gemmPlan) placeTile(c, t []float32, i, j int) {
	rows, cols := pl.rows(i), pl.cols(j)
	for r := 0; r < rows; r++ {
		copy(c[(i*pl.bm+r)*pl.p.N+j*pl.bn:], t[r*cols:(r+1)*cols])
	}
}
