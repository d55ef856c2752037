package programs

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/davinci-sim/davinci-sim/cube"
	"github.com/davinci-sim/davinci-sim/fp"
)

// The golden model of lu-fused: the same arithmetic as the simulated run —
// the host's FP32 diagonal blocks (same functions), FP16 conversions of the
// panels (RNE, saturating), TRSM as GEMM and trailing updates through the
// cube numerics preset with the same bk-deep MMAD chain per tile, the same
// FP32 epilogue (acc·(1/s), then C − that) and the same zones and fusion
// windows, so each trailing block receives the same updates in the same
// order. Timing (look-ahead, core counts) does not change the numbers.

// luGolden holds the golden factors.
type luGolden struct {
	n, nb  int
	a32    []float32 // trailing matrix (fp32 trailing)
	a16    []uint16  // trailing matrix (fp16 trailing)
	lh, uh []uint16
	diags  []*luDiag
	s      float32
	// ctx stops the model between tile rows: one iteration's trailing
	// update at n = 16384 took over 20 s where the cube's tiles run in Go
	// (no AVX-512: arm64, 386), deaf to a SIGINT until it ended.
	ctx context.Context
	// alone, where not nil, says whether the model has the CPUs to itself:
	// false while the simulation it runs beside still runs, which then
	// keeps a CPU (its critical path; the model's tiles take the others,
	// at least one). Nil: every CPU.
	alone *atomic.Bool
	// flops, where not nil, counts the flops of the tiles done (2·rows·
	// cols·K each): the model's progress, for a run waiting for it.
	flops *atomic.Int64
}

// workers returns how many goroutines the model's tiles take now (alone).
func (g *luGolden) workers() int {
	n := runtime.GOMAXPROCS(0)
	if g.alone != nil && !g.alone.Load() {
		n--
	}
	return max(n, 1)
}

var luSat = fp.Options{Round: fp.RNE, Saturate: true}

// luRNE is the vector unit's rounding of an FP16 result (RNE, no saturation).
var luRNE = fp.Options{Round: fp.RNE}

// luGoldenWork is a golden model computed beside a simulation
// (goLUGolden): its factors, once wait returns, and what then computed
// from them (a sampled run's refinement).
type luGoldenWork struct {
	side   *beside
	alone  atomic.Bool  // set once the run waits for it: it takes every CPU (luGolden.alone)
	flops  atomic.Int64 // its tiles' flops done (its progress)
	golden *luGolden
	ref    *luRefineResult
	refErr error
}

// goLUGolden starts the golden model of mat under plan pl on its own
// goroutine beside a simulation, then then (if not nil) on the factors
// there; ctx stops both (besideContext: a failed run's stop).
func goLUGolden(ctx context.Context, pl *luPlan, mat *luMatrix, then func(ctx context.Context, w *luGoldenWork)) *luGoldenWork {
	w := &luGoldenWork{}
	w.side = goBeside(func() error {
		if err := mat.fill(ctx); err != nil { // (filled before: nothing to do)
			return err
		}
		g, err := luGoldenBeside(ctx, pl, mat, &w.alone, &w.flops)
		if err != nil {
			return err
		}
		w.golden = g
		if then != nil {
			then(ctx, w)
		}
		if luGoldenHeld != nil {
			luGoldenHeld()
		}
		return nil
	})
	return w
}

// luGoldenHeld, where not nil, runs at the end of every golden model
// computed beside a simulation, before it is done: a test's hold on it
// (so that a run surely waits for its model).
var luGoldenHeld func()

// wait waits for the work, which takes every CPU from now on.
func (w *luGoldenWork) wait() error {
	w.alone.Store(true)
	return w.side.wait()
}

// done reports whether the work has ended.
func (w *luGoldenWork) done() bool {
	select {
	case <-w.side.done:
		return true
	default:
		return false
	}
}

// luGoldenRun factors the matrix of mat as the plan's program does, on
// every CPU.
func luGoldenRun(ctx context.Context, pl *luPlan, mat *luMatrix) (*luGolden, error) {
	return luGoldenBeside(ctx, pl, mat, nil, nil)
}

// luGoldenBeside is luGoldenRun beside a simulation: on every CPU but one
// until alone is set (luGolden.alone).
func luGoldenBeside(ctx context.Context, pl *luPlan, mat *luMatrix, alone *atomic.Bool, flops *atomic.Int64) (*luGolden, error) {
	model, err := cube.Preset(pl.mach.NumericsPreset())
	if err != nil {
		return nil, err
	}
	n, nb, nbk, F := pl.n, pl.nb, pl.nbk, pl.F
	g := &luGolden{n: n, nb: nb, lh: make([]uint16, n*n), uh: make([]uint16, n*n), diags: make([]*luDiag, nbk), s: 1, ctx: ctx, alone: alone, flops: flops}
	if err := g.load(mat, pl.tb == 4); err != nil {
		return nil, err
	}
	for k0 := 0; k0 < nbk; k0 += F {
		k1 := min(k0+F, nbk)
		k2 := min(k1+F, nbk)
		for i := k0; i < k1; i++ {
			if err := stopped(ctx, "computing the golden model"); err != nil {
				return nil, err
			}
			blk := make([]float32, nb*nb)
			for r := 0; r < nb; r++ {
				for c := 0; c < nb; c++ {
					blk[r*nb+c] = g.at((i*nb+r)*n + i*nb + c)
				}
			}
			d, err := luHostDiag(blk, nb, i, nbk, &g.s)
			if err != nil {
				return nil, fmt.Errorf("golden iteration %d: %w", i, err)
			}
			g.diags[i] = d
			if luFactorOnly(i, nbk) {
				break
			}
			if err := g.trsm(pl, model, i, d); err != nil {
				return nil, err
			}
			var zs []band
			i0, i1 := i, i+1
			if i+1 < k1 {
				zs = []band{{i + 1, i + 2}, {i + 2, k1}}
			} else {
				i0, i1 = k0, k1
				zs = []band{{k1, k1 + 1}, {k1 + 1, k2}, {k2, nbk}}
			}
			for _, z := range zs {
				if err := g.update(pl, model, z, i0, i1); err != nil {
					return nil, err
				}
			}
		}
	}
	return g, nil
}

// load converts the matrix to the trailing matrix's format (FP32 where
// fp32, else FP16), asking the run's context every row block: at
// n = 16384 the conversion takes some 5 s, which a SIGINT had to wait out.
func (g *luGolden) load(mat *luMatrix, fp32 bool) error {
	n := g.n
	row := make([]float64, n)
	if fp32 {
		g.a32 = make([]float32, n*n)
	} else {
		g.a16 = make([]uint16, n*n)
	}
	for i := 0; i < n; i++ {
		if i%g.nb == 0 {
			if err := stopped(g.ctx, "computing the golden model (converting the matrix)"); err != nil {
				return err
			}
		}
		mat.Row(i, row)
		for k, v := range row {
			if fp32 {
				g.a32[i*n+k] = float32(v)
			} else {
				g.a16[i*n+k] = uint16(fp.FromFloat32(float32(v), fp.FP16, luSat))
			}
		}
	}
	return nil
}

// at returns trailing element k as FP32.
func (g *luGolden) at(k int) float32 {
	if g.a32 != nil {
		return g.a32[k]
	}
	return fp.F16ToF32(g.a16[k])
}

// at16 returns trailing element k as the FP16 operand the NPU converts it to.
func (g *luGolden) at16(k int) uint16 {
	if g.a32 != nil {
		return uint16(fp.FromFloat32(g.a32[k], fp.FP16, luSat))
	}
	return g.a16[k]
}

// tile computes acc = Σ over bk chunks of A[rows×K]·B[K×cols] with the MMAD
// chain of the kernel (A and B given by element accessors).
func tile(model cube.Model, rows, cols, K, bk int, a func(r, k int) uint16, b func(k, c int) uint16, acc []float32) error {
	return mmadChain(model, rows, cols, K, bk, acc, func(kc int, av, bv []uint16) {
		for r := 0; r < rows; r++ {
			for k := 0; k < bk; k++ {
				av[r*bk+k] = a(r, kc+k)
			}
		}
		for k := 0; k < bk; k++ {
			for c := 0; c < cols; c++ {
				bv[k*cols+c] = b(kc+k, c)
			}
		}
	})
}

// tileRows is tile with A and B read from row-major arrays: A's element
// (r, k) at a[ai+r·lda+k], B's (k, c) at b[bi+k·ldb+c] — a trailing
// update's panels, whose rows it copies whole instead of an element at a
// time through an accessor (a tenth of the golden model's time went to
// them).
func tileRows(model cube.Model, rows, cols, K, bk int, a []uint16, ai, lda int, b []uint16, bi, ldb int, acc []float32) error {
	return mmadChain(model, rows, cols, K, bk, acc, func(kc int, av, bv []uint16) {
		for r := 0; r < rows; r++ {
			at := ai + r*lda + kc
			copy(av[r*bk:(r+1)*bk], a[at:at+bk])
		}
		for k := 0; k < bk; k++ {
			at := bi + (kc+k)*ldb
			copy(bv[k*cols:(k+1)*cols], b[at:at+cols])
		}
	})
}

// mmadChain runs the kernel's MMAD chain over K in bk chunks into acc,
// fill gathering chunk kc's A (rows×bk) and B (bk×cols), row-major.
func mmadChain(model cube.Model, rows, cols, K, bk int, acc []float32, fill func(kc int, av, bv []uint16)) error {
	av := make([]uint16, rows*bk)
	bv := make([]uint16, bk*cols)
	for kc := 0; kc < K; kc += bk {
		fill(kc, av, bv)
		if err := model.MMADF16(rows, bk, cols, av, cube.RowMajor, bv, cube.RowMajor, acc, cube.RowMajor, kc == 0); err != nil {
			return err
		}
	}
	return nil
}

// trsm computes the L and U panels of iteration i.
func (g *luGolden) trsm(pl *luPlan, model cube.Model, i int, d *luDiag) error {
	n, nb := g.n, g.nb
	// The L panel's tiles (left) and the U panel's write disjoint parts of
	// lh and uh, reading the trailing matrix and the inverses alone: on
	// every CPU, as update's.
	type trsmTile struct {
		r0, c0 int
		left   bool
	}
	var tiles []trsmTile
	for r0 := (i + 1) * nb; r0 < n; r0 += pl.bm {
		for c0 := 0; c0 < nb; c0 += pl.bn {
			tiles = append(tiles, trsmTile{r0, c0, true})
		}
	}
	for r0 := 0; r0 < nb; r0 += pl.bm {
		for c0 := (i + 1) * nb; c0 < n; c0 += pl.bn {
			tiles = append(tiles, trsmTile{r0, c0, false})
		}
	}
	accs := sync.Pool{New: func() any { return make([]float32, pl.bm*pl.bn) }}
	var halt atomic.Bool // (stopped: the other tiles are not begun)
	return eachTileOn(g.workers(), len(tiles), &halt, func(t int) error {
		if err := stopped(g.ctx, "computing the golden model"); err != nil {
			halt.Store(true)
			return err
		}
		r0, c0 := tiles[t].r0, tiles[t].c0
		acc := accs.Get().([]float32)
		defer accs.Put(acc)
		if tiles[t].left {
			err := tile(model, pl.bm, pl.bn, nb, pl.bk,
				func(r, k int) uint16 { return g.at16((r0+r)*n + i*nb + k) },
				func(k, c int) uint16 { return d.uinv[k*nb+c0+c] }, acc)
			if err != nil {
				return err
			}
			for r := 0; r < pl.bm; r++ {
				for c := 0; c < pl.bn; c++ {
					g.lh[(r0+r)*n+i*nb+c0+c] = uint16(fp.FromFloat32(acc[r*pl.bn+c], fp.FP16, luSat))
				}
			}
			g.did(pl.bm, pl.bn, nb)
			return nil
		}
		err := tile(model, pl.bm, pl.bn, nb, pl.bk,
			func(r, k int) uint16 { return d.linv[(r0+r)*nb+k] },
			func(k, c int) uint16 { return g.at16((i*nb+k)*n + c0 + c) }, acc)
		if err != nil {
			return err
		}
		for r := 0; r < pl.bm; r++ {
			for c := 0; c < pl.bn; c++ {
				g.uh[(i*nb+r0+r)*n+c0+c] = uint16(fp.FromFloat32(acc[r*pl.bn+c], fp.FP16, luSat))
			}
		}
		g.did(pl.bm, pl.bn, nb)
		return nil
	})
}

// update applies the terms of iterations [i0, i1) to band z.
func (g *luGolden) update(pl *luPlan, model cube.Model, z band, i0, i1 int) error {
	n, nb := g.n, g.nb
	K := (i1 - i0) * nb
	kc0 := i0 * nb
	alpha := float32(1 / float64(g.s))
	// The output tiles write disjoint parts of the trailing matrix and
	// read the panels alone: computed on every CPU (eachTile), each in the
	// same order as one at a time, so the factors do not depend on it.
	var tiles [][2]int
	for _, rc := range z.rects(pl.nbk) {
		for r0 := rc[0] * nb; r0 < rc[1]*nb; r0 += pl.bm {
			for c0 := rc[2] * nb; c0 < rc[3]*nb; c0 += pl.bn {
				tiles = append(tiles, [2]int{r0, c0})
			}
		}
	}
	accs := sync.Pool{New: func() any { return make([]float32, pl.bm*pl.bn) }}
	var halt atomic.Bool // (stopped: the other tiles are not begun)
	return eachTileOn(g.workers(), len(tiles), &halt, func(i int) error {
		if err := stopped(g.ctx, "computing the golden model"); err != nil {
			halt.Store(true)
			return err
		}
		r0, c0 := tiles[i][0], tiles[i][1]
		acc := accs.Get().([]float32)
		defer accs.Put(acc)
		err := tileRows(model, pl.bm, pl.bn, K, pl.bk, g.lh, r0*n+kc0, n, g.uh, kc0*n+c0, n, acc)
		if err != nil {
			return err
		}
		for r := 0; r < pl.bm; r++ {
			for c := 0; c < pl.bn; c++ {
				k := (r0+r)*n + c0 + c
				if g.a32 != nil {
					t := float32(acc[r*pl.bn+c] * alpha)
					g.a32[k] = g.a32[k] - t
					continue
				}
				if pl.gpu {
					// GPU epilogue (CUTLASS's linear combination in
					// FP32): C widened, C − acc·(1/s) in FP32, the
					// result rounded to FP16 (RNE).
					t := float32(acc[r*pl.bn+c] * alpha)
					g.a16[k] = uint16(fp.FromFloat32(fp.F16ToF32(g.a16[k])-t, fp.FP16, luRNE))
					continue
				}
				// FP16 epilogue: product to FP16 (RNE, saturating),
				// scaled and subtracted in FP16 (each op in FP32,
				// rounded to FP16 as the vector unit does).
				p := fp.F16ToF32(uint16(fp.FromFloat32(acc[r*pl.bn+c], fp.FP16, luSat)))
				t := fp.F16ToF32(uint16(fp.FromFloat32(p*alpha, fp.FP16, luRNE)))
				g.a16[k] = uint16(fp.FromFloat32(fp.F16ToF32(g.a16[k])-t, fp.FP16, luRNE))
			}
		}
		g.did(pl.bm, pl.bn, K)
		return nil
	})
}

// did counts a tile of rows×cols×K done (luGolden.flops).
func (g *luGolden) did(rows, cols, K int) {
	if g.flops != nil {
		g.flops.Add(2 * int64(rows) * int64(cols) * int64(K))
	}
}

// factors returns the golden factors in refinement form.
func (g *luGolden) factors(pl *luPlan) *luFactors {
	return assembleFactors(g.n, g.nb, g.lh, g.uh, g.diags, g.s)
}
