package ozaki

import (
	"math"
	"math/rand"
	"slices"
	"testing"
)

// bruteESC is the definition of §4 evaluated pair by pair: max over (i,j)
// with nonzero row and column and some nonzero product of
// e_A[i] + e_B[j] − max_l (E(A[i,l]) + E(B[l,j])), plus 1.
func bruteESC(a, b []float64, m, k, n int, sa, sb []Scale) int {
	best := 0
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			if sa[i].Zero || sb[j].Zero {
				continue
			}
			z := NegInf
			for l := 0; l < k; l++ {
				z = MaxExp(z, AddExp(Exp(a[i*k+l]), Exp(b[l*n+j])))
			}
			if !IsNegInf(z) {
				best = max(best, sa[i].Exp+sb[j].Exp-z)
			}
		}
	}
	return best + 1
}

func spreadMat(rng *rand.Rand, r, c, span int, zeroEvery int) []float64 {
	x := make([]float64, r*c)
	for i := range x {
		x[i] = (rng.Float64() - 0.5) * math.Ldexp(1, rng.Intn(span+1))
		if zeroEvery > 0 && rng.Intn(zeroEvery) == 0 {
			x[i] = 0
		}
	}
	return x
}

// TestESCExactAndCoarse: block 1 equals the pair-by-pair definition; every
// coarsening is ≥ the exact value (or reports unbounded), on random inputs
// with zeros and exponent spreads, for every block length 1…k.
func TestESCExactAndCoarse(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	for trial := 0; trial < 30; trial++ {
		m, k, n := 1+rng.Intn(7), 1+rng.Intn(20), 1+rng.Intn(7)
		zeroEvery := []int{0, 3, 8}[trial%3]
		a := spreadMat(rng, m, k, rng.Intn(30), zeroEvery)
		b := spreadMat(rng, k, n, rng.Intn(30), zeroEvery)
		sa, sb := ScaleRows(a, m, k), ScaleCols(b, k, n)
		exact, ok := ESC(a, b, m, k, n, 1, sa, sb)
		if want := bruteESC(a, b, m, k, n, sa, sb); !ok || exact != want {
			t.Fatalf("trial %d: exact ESC %d (bounded %v), definition %d", trial, exact, ok, want)
		}
		for blk := 1; blk <= k; blk++ {
			c, ok := ESC(a, b, m, k, n, blk, sa, sb)
			if ok && c < exact {
				t.Fatalf("trial %d block %d: coarse %d < exact %d", trial, blk, c, exact)
			}
		}
	}
}

// TestESCZeros: zeros are −∞ in both Min and Max. Skipping them would give
// ẑ = big+big' for x = [2^40, 0], y = [0, 2^40] and an ESC far too small;
// with −∞ the block cannot bound the pair (unbounded), and exactly the
// products are all zero (block 1: the pair contributes nothing, ESC = 1).
// x = [1, 0], y = [1, 0] (a real product hidden in a block with zeros) is
// unbounded under block 2 and exact under block 1.
func TestESCZeros(t *testing.T) {
	a := []float64{0x1p40, 0, 1, 1} // 2×2: row 0 = [2^40, 0], row 1 = [1, 1]
	b := []float64{0, 1, 0x1p40, 1} // 2×2: column 0 = [0, 2^40], column 1 = [1, 1]
	sa, sb := ScaleRows(a, 2, 2), ScaleCols(b, 2, 2)
	if e, ok := ESC(a, b, 2, 2, 2, 2, sa, sb); ok {
		t.Fatalf("block 2: bounded ESC %d, want unbounded", e)
	}
	e1, ok := ESC(a, b, 2, 2, 2, 1, sa, sb)
	if !ok || e1 != bruteESC(a, b, 2, 2, 2, sa, sb) {
		t.Fatalf("block 1: %d %v", e1, ok)
	}
	x := []float64{1, 0}
	y := []float64{1, 0}
	sx, sy := ScaleRows(x, 1, 2), ScaleCols(y, 2, 1)
	if _, ok := ESC(x, y, 1, 2, 1, 2, sx, sy); ok {
		t.Fatal("x=[1,0], y=[1,0], block 2: bounded")
	}
	if e, ok := ESC(x, y, 1, 2, 1, 1, sx, sy); !ok || e != 1 {
		t.Fatalf("x=[1,0], y=[1,0], block 1: %d %v", e, ok)
	}
	// All-zero A: no contributing pair, ESC = 1, bounded.
	z := make([]float64, 4)
	if e, ok := ESC(z, b, 2, 2, 2, 4, ScaleRows(z, 2, 2), sb); !ok || e != 1 {
		t.Fatalf("zero A: %d %v", e, ok)
	}
}

// TestESCTest2: on Demmel's Test 2 the exact ESC_raw is 2b (plus the bump
// of the rows of A and of the columns of B, which occurs when the largest
// x_q with j_q = ±b is ≥ 1.984375; all rows are shifts of each other, so
// it is the same for all), and the coarsened ESC with block 4 equals it.
func TestESCTest2(t *testing.T) {
	for _, n := range []int{16, 64} {
		for _, b := range []int{0, 1, 2, 5, 10, 20, 100, 500} {
			for seed := int64(1); seed <= 3; seed++ {
				A, B := Test2(n, b, seed)
				sa, sb := ScaleRows(A, n, n), ScaleCols(B, n, n)
				bump := 0
				if sa[0].Bumped {
					bump++
				}
				if sb[0].Bumped {
					bump++
				}
				exact, ok1 := ESC(A, B, n, n, n, 1, sa, sb)
				coarse, ok4 := ESC(A, B, n, n, n, 4, sa, sb)
				if !ok1 || !ok4 || exact-1 != 2*b+bump || coarse != exact {
					t.Fatalf("n=%d b=%d seed=%d: exact %d coarse %d (bump %d), want ESC_raw 2b+bump = %d",
						n, b, seed, exact, coarse, bump, 2*b+bump)
				}
			}
		}
	}
	// seed 1, n=16: no bump, ESC_raw = 2b exactly.
	A, B := Test2(16, 10, 1)
	sa, sb := ScaleRows(A, 16, 16), ScaleCols(B, 16, 16)
	if e, _ := ESC(A, B, 16, 16, 16, 1, sa, sb); e-1 != 20 {
		t.Errorf("Test2(16,10,1): ESC_raw %d, want 20", e-1)
	}
}

// TestESCUniform: U(0,1) 64×64. The exact ESC_raw is 0 apart from the bump
// (it equals max over pairs of bump_A[i] + bump_B[j]); the coarsened value
// grows with the block length (logged).
func TestESCUniform(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	const n = 64
	A, B := randMat(rng, n, n), randMat(rng, n, n)
	sa, sb := ScaleRows(A, n, n), ScaleCols(B, n, n)
	ba, bb := 0, 0
	for i := range sa {
		if sa[i].Bumped {
			ba = 1
		}
		if sb[i].Bumped {
			bb = 1
		}
	}
	exact, _ := ESC(A, B, n, n, n, 1, sa, sb)
	if exact-1 != ba+bb {
		t.Fatalf("exact ESC_raw %d, want bump-only %d", exact-1, ba+bb)
	}
	// Without the bump (Exp = E(μ)) the exact span is 0.
	ua, ub := append([]Scale(nil), sa...), append([]Scale(nil), sb...)
	for i := range ua {
		if ua[i].Bumped {
			ua[i].Exp--
		}
		if ub[i].Bumped {
			ub[i].Exp--
		}
	}
	if e, _ := ESC(A, B, n, n, n, 1, ua, ub); e-1 != 0 {
		t.Fatalf("unbumped exact ESC_raw %d, want 0", e-1)
	}
	var got []int
	for _, blk := range []int{1, 2, 4, 8, 16, 32, 64} {
		e, ok := ESC(A, B, n, n, n, blk, sa, sb)
		if !ok || e < exact {
			t.Fatalf("block %d: %d %v", blk, e, ok)
		}
		got = append(got, e-1)
	}
	t.Logf("U(0,1) 64×64 ESC_raw for blocks 1,2,4,8,16,32,64: %v (bumps A %d, B %d)", got, ba, bb)
	if got[3] <= got[0] || got[5] <= got[3] {
		t.Errorf("coarsened ESC does not grow with the block: %v", got)
	}
}

// blocksRef is the block table as first written: an entry updated for
// every element (Frexp's exponent, −∞ for 0, Inf and NaN), the element's
// line and block giving the entry — the reference RowBlocks and ColBlocks
// (a block of rows or elements at a time, Exp from the bits) must equal.
func blocksRef(x []float64, rows, cols, block int, byRow bool) BlockTable {
	exp := func(v float64) int32 {
		if v == 0 || math.IsInf(v, 0) || math.IsNaN(v) {
			return NegInf
		}
		_, e := math.Frexp(v)
		return int32(e - 1)
	}
	lines, k := cols, rows
	if byRow {
		lines, k = rows, cols
	}
	t := newTable(lines, k, block)
	for l := 0; l < rows; l++ {
		for j := 0; j < cols; j++ {
			line, along := j, l
			if byRow {
				line, along = l, j
			}
			idx, e := line*t.Blocks+along/block, exp(x[l*cols+j])
			t.Max[idx], t.Min[idx] = max(t.Max[idx], e), min(t.Min[idx], e)
		}
	}
	return t
}

// RowBlocks and ColBlocks equal the element-by-element reference: zeros,
// Inf, NaN and subnormals among the values, lengths not a multiple of the
// block, blocks of 1 and longer than the lines, empty matrices.
func TestBlockTablesAgainstReference(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	for _, c := range []struct{ rows, cols, block int }{{37, 5, 8}, {64, 33, 32}, {5, 7, 1}, {9, 4, 9}, {9, 4, 100}, {1, 1, 3}, {0, 4, 2}, {4, 0, 2}} {
		x := make([]float64, c.rows*c.cols)
		for i := range x {
			switch rng.Intn(10) {
			case 0:
				x[i] = 0
			case 1:
				x[i] = math.Inf(1 - 2*rng.Intn(2))
			case 2:
				x[i] = math.NaN()
			case 3:
				x[i] = math.Ldexp(rng.Float64()-0.5, -1060)
			default:
				x[i] = math.Ldexp(rng.Float64()-0.5, rng.Intn(200)-100)
			}
		}
		for _, byRow := range []bool{true, false} {
			got := ColBlocks(x, c.rows, c.cols, c.block)
			if byRow {
				got = RowBlocks(x, c.rows, c.cols, c.block)
			}
			want := blocksRef(x, c.rows, c.cols, c.block, byRow)
			if got.Lines != want.Lines || got.Blocks != want.Blocks || !slices.Equal(got.Max, want.Max) || !slices.Equal(got.Min, want.Min) {
				t.Errorf("%+v by rows %v: %+v, want %+v", c, byRow, got, want)
			}
		}
	}
}

// BenchmarkColBlocks builds the ESC's column table of a 4096² B (its
// blocks of 32 rows, as ADP's default): RowBlocks's cost is the floor.
func BenchmarkColBlocks(b *testing.B) {
	const n = 4096
	rng := rand.New(rand.NewSource(1))
	m := make([]float64, n*n)
	for i := range m {
		m[i] = rng.Float64() - 0.5
	}
	b.Run("cols", func(b *testing.B) {
		for b.Loop() {
			ColBlocks(m, n, n, DefaultESCBlock)
		}
	})
	b.Run("rows", func(b *testing.B) {
		for b.Loop() {
			RowBlocks(m, n, n, DefaultESCBlock)
		}
	})
}

// Exp from the bits is floor(log2|x|) as Frexp gives it: every binade's
// ends and a random value in it (normal and subnormal, both signs), and
// ±0, ±Inf and NaN (NegInf).
func TestExpFromBits(t *testing.T) {
	ref := func(x float64) int {
		if x == 0 || math.IsInf(x, 0) || math.IsNaN(x) {
			return NegInf
		}
		_, e := math.Frexp(x)
		return e - 1
	}
	rng := rand.New(rand.NewSource(3))
	xs := []float64{0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.NaN(), math.MaxFloat64, math.SmallestNonzeroFloat64, 0x1p-1022, 0x1p-1022 - 0x1p-1074}
	for e := -1074; e <= 1023; e++ {
		lo := math.Ldexp(1, e)
		xs = append(xs, lo, math.Nextafter(math.Ldexp(1, e+1), 0), lo*(1+rng.Float64()))
	}
	for _, x := range xs {
		for _, v := range []float64{x, -x} {
			if got, want := Exp(v), ref(v); got != want {
				t.Errorf("Exp(%g) = %d, want %d", v, got, want)
			}
		}
	}
}
