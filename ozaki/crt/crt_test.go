package crt

import (
	"errors"
	"math"
	"math/big"
	"math/rand"
	"testing"

	"github.com/davinci-sim/davinci-sim/ozaki"
)

// TestModuliGreedy: the table is the greedy pairwise-coprime sequence from
// 256 down, every modulus > 128, P < 2^192; Moduli rejects bad counts.
func TestModuliGreedy(t *testing.T) {
	gcd := func(a, b int) int {
		for b != 0 {
			a, b = b, a%b
		}
		return a
	}
	var want []int
	for p := 256; len(want) < MaxModuli; p-- {
		ok := true
		for _, q := range want {
			ok = ok && gcd(p, q) == 1
		}
		if ok {
			want = append(want, p)
		}
	}
	got, err := Moduli(MaxModuli)
	if err != nil {
		t.Fatal(err)
	}
	for r := range want {
		if got[r] != want[r] || got[r] <= 128 {
			t.Fatalf("modulus %d: %d, greedy %d", r, got[r], want[r])
		}
	}
	if b, _ := BasisFor(MaxModuli); b.P.BitLen() > 192 {
		t.Fatalf("P has %d bits", b.P.BitLen())
	}
	for _, n := range []int{0, -1, MaxModuli + 1} {
		if _, err := Moduli(n); !errors.Is(err, ErrModuli) {
			t.Errorf("Moduli(%d): %v", n, err)
		}
	}
}

// TestBudgetTable: the budget rule k·2^T ≤ H < k·2^(T+1) for every N and a
// range of k, and the table N → bits at k = 1024, the Ozaki-I slices for
// the same bits and the GEMM counts (N vs s(s+1)/2).
func TestBudgetTable(t *testing.T) {
	for n := MinModuli; n <= MaxModuli; n++ {
		b, _ := BasisFor(n)
		for _, k := range []int{0, 1, 2, 3, 100, 1024, 4097, 1 << 20, 1 << 40} {
			bA, bB, ok := Budget(n, k)
			kk := big.NewInt(int64(max(k, 1)))
			if !ok {
				if kk.Cmp(b.Half) <= 0 {
					t.Errorf("N=%d k=%d: no budget although k ≤ H", n, k)
				}
				continue
			}
			T := bA + bB
			lo := new(big.Int).Lsh(kk, uint(T))
			hi := new(big.Int).Lsh(kk, uint(T+1))
			if lo.Cmp(b.Half) > 0 || hi.Cmp(b.Half) <= 0 || bA != bB+T%2 {
				t.Errorf("N=%d k=%d: T=%d bA=%d bB=%d violates the rule", n, k, T, bA, bB)
			}
		}
	}
	t.Logf("%3s %7s %4s %5s | %s", "N", "log2 P", "T", "bits", "Ozaki-I at equal bits: slices, GEMMs s(s+1)/2 vs N (k = 1024)")
	for n := 8; n <= MaxModuli; n++ {
		b, _ := BasisFor(n)
		bA, bB, _ := Budget(n, 1024)
		w := BitsFor(n, 1024)
		pf, _ := new(big.Float).SetInt(b.P).Float64()
		s, _ := ozaki.SlicesFor(min(w, ozaki.MaxBits))
		t.Logf("%3d %7.2f %4d %5d | s=%d: %2d GEMMs vs %d", n, math.Log2(pf), bA+bB, w, s, ozaki.Triangular.Count(s), GEMMCount(n))
	}
	if BitsFor(14, 1024) != 50 || BitsFor(16, 1024) != 58 || BitsFor(20, 1024) != 73 || BitsFor(1, 200) != 0 || BitsFor(0, 1) != 0 {
		t.Errorf("BitsFor: %d %d %d %d", BitsFor(14, 1024), BitsFor(16, 1024), BitsFor(20, 1024), BitsFor(1, 200))
	}
}

func interesting(rng *rand.Rand) float64 {
	switch rng.Intn(6) {
	case 0:
		return math.Float64frombits(rng.Uint64() &^ (0x7ff << 52)) // subnormal or zero, either sign
	case 1:
		return math.Float64frombits(rng.Uint64()) // anything (finite filtered by caller)
	case 2:
		return math.Copysign(math.Nextafter(2, 0), float64(rng.Intn(2)*2-1)) * math.Ldexp(1, rng.Intn(2000)-1000)
	}
	return (rng.Float64() - 0.5) * math.Ldexp(1, rng.Intn(200)-100)
}

// TestScaledAndResidue: Scaled = RN(x·2^(b−σ)) computed in math/big for
// random x (subnormals, significands 2 − 2^−52, the full range), its own σ
// or a larger one, and budgets 0 … 92; |X| ≤ 2^b; Residue = X mod p in the
// documented ranges.
func TestScaledAndResidue(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	for it := 0; it < 20000; it++ {
		x := interesting(rng)
		if math.IsInf(x, 0) || math.IsNaN(x) {
			continue
		}
		sigma := scaleOf(math.Abs(x)).Sigma + rng.Intn(3)*rng.Intn(70)
		if x == 0 {
			sigma = rng.Intn(100) - 50
		}
		b := rng.Intn(93)
		mant, shift := Scaled(x, sigma, b)
		X := new(big.Int).Lsh(big.NewInt(mant), uint(shift))
		want := bigScaled(x, sigma, b)
		if X.Cmp(want) != 0 || shift < 0 || shift > max(0, b-53) {
			t.Fatalf("x=%v σ=%d b=%d: %v·2^%d, want %v", x, sigma, b, mant, shift, want)
		}
		if new(big.Int).Abs(X).Cmp(new(big.Int).Lsh(big.NewInt(1), uint(b))) > 0 {
			t.Fatalf("x=%v σ=%d b=%d: |X| = %v > 2^b", x, sigma, b, X)
		}
		for _, p := range moduliTable {
			r := int(Residue(mant, shift, p))
			h := ResidueBound(p)
			lo := -h
			if p != 256 {
				h, lo = (p-1)/2, -(p-1)/2
			} else {
				h = 127
			}
			m := new(big.Int).Mod(new(big.Int).Sub(X, big.NewInt(int64(r))), big.NewInt(int64(p)))
			if r < lo || r > h || m.Sign() != 0 {
				t.Fatalf("X=%v mod %d: residue %d", X, p, r)
			}
		}
	}
	// The edge: significand 2 − 2^−52 at the row maximum rounds up to 2^b.
	if m, s := Scaled(-0x1.fffffffffffffp3, 4, 20); m != -(1<<20) || s != 0 {
		t.Errorf("edge: %d·2^%d", m, s)
	}
}

// TestReconstruct: Basis.Int (math/big CRT) returns the integer whose
// residues were given, for random C' in [−H, H] and the edges; Basis.Float
// = RN(C'·2^e) (math/big rounding) for e across the normal, subnormal,
// underflow and overflow ranges; Reconstruct accepts any int32
// representatives.
func TestReconstruct(t *testing.T) {
	rng := rand.New(rand.NewSource(12))
	for n := MinModuli; n <= MaxModuli; n++ {
		b, _ := BasisFor(n)
		edges := []*big.Int{new(big.Int), new(big.Int).Set(b.Half), new(big.Int).Neg(b.Half), big.NewInt(1), big.NewInt(-1),
			new(big.Int).Sub(b.Half, b.P).Add(new(big.Int).Sub(b.Half, b.P), big.NewInt(1))}
		for it := 0; it < 400; it++ {
			var c *big.Int
			if it < len(edges) {
				c = edges[it]
			} else {
				c = new(big.Int).Rand(rng, new(big.Int).Lsh(b.Half, 1))
				c.Sub(c, b.Half)
				c.Rsh(c, uint(rng.Intn(b.Half.BitLen()+1))) // all magnitudes
			}
			res := make([]int64, n)
			for r, p := range b.Moduli {
				res[r] = new(big.Int).Mod(c, big.NewInt(int64(p))).Int64() + int64(p)*int64(rng.Intn(5)-2)
			}
			if got := b.Int(res); got.Cmp(c) != 0 {
				t.Fatalf("N=%d: Int %v want %v", n, got, c)
			}
			for _, e := range []int{0, rng.Intn(2400) - 1200, -1074 - rng.Intn(200), 1024 - c.BitLen() + rng.Intn(3) - 1, -1075 - c.BitLen() + rng.Intn(5)} {
				want := bigRound(c, e)
				if got := b.Float(res, e); math.Float64bits(got) != math.Float64bits(want) {
					t.Fatalf("N=%d C'=%v e=%d: %v want %v", n, c, e, got, want)
				}
			}
		}
	}
}

// TestBoundEdge: the worst case of §2 reaches C' = −k·2^T exactly through
// the whole GEMM (a row of −(2−2^−52)·2^(σ−1), a column of (2−2^−52)·2^(τ−1)),
// and at the integer level the reconstruction is exact for |C'| = k·2^T but
// wraps (C' − P) for k·2^(T+1) > H, one bit over the budget.
func TestBoundEdge(t *testing.T) {
	for _, tc := range []struct{ n, k int }{{6, 64}, {7, 1000}, {5, 3}, {2, 1}} {
		bA, bB, ok := Budget(tc.n, tc.k)
		if !ok || bA > 52 {
			t.Fatalf("case %+v: budget %d %d %v", tc, bA, bB, ok)
		}
		T := bA + bB
		A, B := make([]float64, tc.k), make([]float64, tc.k)
		for l := range A {
			A[l], B[l] = -0x1.fffffffffffffp-1, 0x1.fffffffffffffp5
		}
		p, err := MakePlan(A, B, 1, tc.k, 1, Config{Moduli: tc.n})
		if err != nil {
			t.Fatal(err)
		}
		ra, rb := p.Residues(A, B)
		c := GEMMTile(&p, ra, rb, 0, 1, 0, 1)
		want := -float64(tc.k) * math.Ldexp(1, T+0-bA+6-bB) // C' = −k·2^T, scale 2^(0−bA+6−bB)
		if c[0] != want {
			t.Errorf("case %+v: %v want %v", tc, c[0], want)
		}
		// Integer level, all N at this k.
		b := p.Basis
		for _, shift := range []int{T, T + 1} {
			cp := new(big.Int).Lsh(big.NewInt(int64(tc.k)), uint(shift))
			cp.Neg(cp)
			res := make([]int64, tc.n)
			for r, pr := range b.Moduli {
				res[r] = new(big.Int).Mod(cp, big.NewInt(int64(pr))).Int64()
			}
			got := b.Int(res)
			if (got.Cmp(cp) == 0) != (shift == T) {
				t.Errorf("case %+v shift %d: reconstructed %v for %v (H = %v)", tc, shift, got, cp, b.Half)
			}
		}
	}
}

// TestChunkBound: MaxChunk is the INT32 limit of the worst-case residues
// (all −128 for 256, all −127 for 255): L products fit, L+1 overflow;
// ModProducts computes the edge exactly and refuses a longer chunk; the
// golden GEMM's bits do not depend on the chunk.
func TestChunkBound(t *testing.T) {
	for _, p := range []int{256, 255, 151} {
		L, h := int64(MaxChunk(p)), int64(ResidueBound(p))
		if L*h*h > MaxInt32 || (L+1)*h*h <= MaxInt32 {
			t.Errorf("p=%d: MaxChunk %d", p, L)
		}
	}
	if MaxChunk(256) != 131071 || MaxChunk(255) != 133144 {
		t.Errorf("MaxChunk: %d %d", MaxChunk(256), MaxChunk(255))
	}
	mods, _ := Moduli(14)
	if Chunks(131071, mods) != 131071 || Chunks(131072, mods) != 131008 || Chunks(0, mods) != 1 {
		t.Errorf("Chunks: %d %d", Chunks(131071, mods), Chunks(131072, mods))
	}
	L := MaxChunk(256)
	ra := [][]int8{make([]int8, L+1)}
	for l := range ra[0] {
		ra[0][l] = -128
	}
	if d := ModProducts(ra, ra, 1, L+1, 1, 0, 0, L); int64(d[0]) != int64(L)<<14 {
		t.Errorf("edge product %d", d[0])
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("ModProducts accepted a chunk over the bound")
			}
		}()
		ModProducts(ra, ra, 1, L+1, 1, 0, 0, L+1)
	}()
	rng := rand.New(rand.NewSource(13))
	const m, k, n = 7, 300, 9
	A, B := spreadMat(rng, m, k, 20), spreadMat(rng, k, n, 20)
	base, _, err := GEMM(A, B, nil, 1, 0, m, k, n, Config{Moduli: 16})
	if err != nil {
		t.Fatal(err)
	}
	for _, ch := range []int{1, 64, 100, 299} {
		c, p, err := GEMM(A, B, nil, 1, 0, m, k, n, Config{Moduli: 16, Chunk: ch})
		if err != nil || p.Chunk != ch {
			t.Fatal(err, p.Chunk)
		}
		sameBits(t, "chunk", base, c)
		ra, rb := p.Residues(A, B)
		sameBits(t, "chunk ref", base, refTile(&p, ra, rb, 0, m, 0, n))
	}
}

// TestTilesWorkersOrder: tiles have the bits of the full GEMM, for any
// worker count; permuting k leaves the result bit-identical (C' is exact).
func TestTilesWorkersOrder(t *testing.T) {
	rng := rand.New(rand.NewSource(14))
	const m, k, n = 37, 90, 300
	A, B := spreadMat(rng, m, k, 40), spreadMat(rng, k, n, 40)
	full, p, err := GEMM(A, B, nil, 1, 0, m, k, n, Config{Moduli: 18, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	ra, rb := p.Residues(A, B)
	for _, w := range []int{2, 3, 8} {
		p.Workers = w
		sameBits(t, "workers", full, GEMMTile(&p, ra, rb, 0, m, 0, n))
		for _, tl := range [][4]int{{0, 1, 0, 1}, {5, 7, 130, 140}, {36, 1, 299, 1}, {3, 30, 1, 257}} {
			got := GEMMTile(&p, ra, rb, tl[0], tl[1], tl[2], tl[3])
			want := make([]float64, 0, tl[1]*tl[3])
			for i := tl[0]; i < tl[0]+tl[1]; i++ {
				want = append(want, full[i*n+tl[2]:i*n+tl[2]+tl[3]]...)
			}
			sameBits(t, "tile", want, got)
		}
	}
	perm := rng.Perm(k)
	PA, PB := make([]float64, m*k), make([]float64, k*n)
	for l, pl := range perm {
		for i := 0; i < m; i++ {
			PA[i*k+l] = A[i*k+pl]
		}
		copy(PB[l*n:l*n+n], B[pl*n:pl*n+n])
	}
	perm2, _, _ := GEMM(PA, PB, nil, 1, 0, m, k, n, Config{Moduli: 18})
	sameBits(t, "k permutation", full, perm2)
}
