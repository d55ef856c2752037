package ozaki

import "fmt"

// ProductSet selects which slice products A_t·B_u enter the result.
type ProductSet int

const (
	// Triangular keeps the pairs with t + u ≤ s + 1: s(s+1)/2 products (28
	// for s = 7), diagonals d = 2 … s+1. The default.
	Triangular ProductSet = iota
	// Square keeps all s² pairs, diagonals d = 2 … 2s.
	Square
)

// String returns "triangular" or "square".
func (p ProductSet) String() string {
	switch p {
	case Triangular:
		return "triangular"
	case Square:
		return "square"
	}
	return fmt.Sprintf("ProductSet(%d)", int(p))
}

// MaxDiagonal returns the last diagonal d = t + u of the set for s slices:
// s + 1 (Triangular) or 2s (Square). Diagonals run from 2 to MaxDiagonal.
func (p ProductSet) MaxDiagonal(s int) int {
	if p == Square {
		return 2 * s
	}
	return s + 1
}

// Has reports whether the pair (t, u), 1 ≤ t, u ≤ s, is in the set.
func (p ProductSet) Has(s, t, u int) bool {
	return t >= 1 && u >= 1 && t <= s && u <= s && t+u <= p.MaxDiagonal(s)
}

// Pairs returns the pairs (t, u) of the set on diagonal d, in increasing t.
func (p ProductSet) Pairs(s, d int) [][2]int {
	var out [][2]int
	for t := 1; t <= s; t++ {
		if u := d - t; p.Has(s, t, u) {
			out = append(out, [2]int{t, u})
		}
	}
	return out
}

// Count returns the number of products (INT8 GEMMs before concatenation):
// s(s+1)/2 or s².
func (p ProductSet) Count(s int) int {
	if p == Square {
		return s * s
	}
	return s * (s + 1) / 2
}

// MaxPairs returns the largest number of pairs on one diagonal: s for both
// sets (diagonal s+1).
func (p ProductSet) MaxPairs(s int) int { return s }

// ProductBound is the largest |a·b| of two INT8 digits: 128·128 = 2^14.
const ProductBound = 1 << 14

// MaxInt32 is the largest INT32 accumulator value, 2^31 − 1.
const MaxInt32 = 1<<31 - 1

// MaxChunk returns the largest k-chunk length L such that one INT8 GEMM with
// INT32 accumulation over pairs concatenated slice pairs (inner length
// pairs·L) cannot overflow: pairs·L·2^14 ≤ 2^31 − 1, i.e.
// L = floor((2^31−1)/(pairs·2^14)) (131071 for one pair, 18724 for 7).
// The worst case is all digits −128 (each product +2^14); the most negative
// sum, −128·127 per product, is smaller in magnitude. pairs must be ≥ 1.
func MaxChunk(pairs int) int { return MaxInt32 / (pairs * ProductBound) }

// ChunkAlign is the granularity of the golden model's k-chunks.
const ChunkAlign = 64

// Chunks returns the k-chunk length the golden model uses for s slices: k
// itself when k ≤ the bound, else the largest multiple of ChunkAlign not
// above MaxChunk(set.MaxPairs(s)) (18688 for s = 7, 4992 for s = 26). The
// chunks are [0,L), [L,2L), …, the last one possibly shorter.
func Chunks(k, s int, set ProductSet) int {
	c := MaxChunk(set.MaxPairs(s))
	if k <= c {
		return k
	}
	return c / ChunkAlign * ChunkAlign
}

// DiagonalProducts returns D_d(i,j) = Σ_{(t,u) on d in set} Σ_{l0≤l<l1}
// a_t[i,l]·b_u[l,j] for the m×k digit planes pa (from SliceRows) and the k×n
// planes pb (from SliceCols), as an m×n row-major []int32. This is what ONE
// INT8 GEMM with INT32 accumulation computes when the diagonal's slices are
// concatenated along k, (A_t1|A_t2|…)·(B_u1;B_u2;…). It is exact (and the
// accumulator never overflows) when pairs(d)·(l1−l0) ≤ MaxChunk·pairs, i.e.
// l1−l0 ≤ MaxChunk(len(set.Pairs(s,d))); it panics otherwise. It is the
// reference form; GEMMTile computes the same integers faster.
func DiagonalProducts(pa, pb [][]int8, m, k, n int, set ProductSet, l0, l1, d int) []int32 {
	s := len(pa)
	pairs := set.Pairs(s, d)
	if len(pairs) > 0 && l1-l0 > MaxChunk(len(pairs)) {
		panic(fmt.Sprintf("ozaki: chunk %d exceeds MaxChunk(%d) = %d", l1-l0, len(pairs), MaxChunk(len(pairs))))
	}
	out := make([]int32, m*n)
	for _, tu := range pairs {
		AddInt8Products(out, pa[tu[0]-1], pb[tu[1]-1], m, k, n, l0, l1)
	}
	return out
}

// AddInt8Products adds Σ_{l0≤l<l1} a[i,l]·b[l,j] to out[i,j] for the m×k
// row-major a, the k×n row-major b and the m×n row-major out, in INT32
// (wrapping as an INT32 accumulator does: the callers bound the chunk) —
// the reference form of an INT8 GEMM's chunk of k.
func AddInt8Products(out []int32, a, b []int8, m, k, n, l0, l1 int) {
	for i := 0; i < m; i++ {
		row := out[i*n : i*n+n]
		for l := l0; l < l1; l++ {
			x := int32(a[i*k+l])
			if x == 0 {
				continue
			}
			br := b[l*n : l*n+n]
			for j := range row {
				row[j] += x * int32(br[j])
			}
		}
	}
}
