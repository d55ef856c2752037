package crt

// An independent reference of Ozaki-II's numerics after the INT8 residue
// GEMMs, written from the package contract (doc.go §1–§4) and not from its
// code: the moduli rebuilt greedily, the budget T from H = floor((P−1)/2) in
// math/big, the scales read off the IEEE bits, A' and B' rounded to nearest
// even from the decoded significand in math/big, the residues' CRT
// reconstruction by incremental lifting (x ← x + M·((r − x)·M⁻¹ mod p)),
// checked against the exact integer Σ_l A'_il·B'_lj, then the single
// rounding of C'·2^(σ−bA+τ−bB) and ozaki's α/β contract. The simulated run's
// C was compared with package crt's own Reconstruct and GEMMTile; the
// existing math/big test (ref_test.go bigTile) takes the package's scales
// and budgets and stops before α and β.

import (
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"math/rand"
	"testing"

	"github.com/davinci-sim/davinci-sim/ozaki"
)

// refModuli is the greedy pairwise-coprime sequence from 256 down (§1).
func refModuli(n int) []int {
	var out []int
	for c := 256; len(out) < n; c-- {
		ok := true
		for _, p := range out {
			a, b := c, p
			for b != 0 {
				a, b = b, a%b
			}
			if a != 1 {
				ok = false
				break
			}
		}
		if ok {
			out = append(out, c)
		}
	}
	return out
}

// refDecode returns x = F·2^q with F an integer (sign included), from the
// IEEE bits; E is floor(log2|x|). x must be finite and nonzero.
func refDecode(x float64) (F *big.Int, q, E int) {
	b := math.Float64bits(x)
	ef, frac := int(b>>52&0x7ff), b&(1<<52-1)
	var mant uint64
	if ef == 0 {
		mant, q = frac, -1074
		E = -1074 + bits.Len64(frac) - 1
	} else {
		mant, q = frac|1<<52, ef-1075
		E = ef - 1023
	}
	F = new(big.Int).SetUint64(mant)
	if b>>63 == 1 {
		F.Neg(F)
	}
	return F, q, E
}

// refRound returns RN(x·2^e) as an integer (ties to even).
func refRound(x float64, e int) *big.Int {
	if x == 0 {
		return new(big.Int)
	}
	F, q, _ := refDecode(x)
	sh := q + e
	if sh >= 0 {
		return F.Lsh(F, uint(sh))
	}
	neg := F.Sign() < 0
	a := new(big.Int).Abs(F)
	d := uint(-sh)
	quo := new(big.Int).Rsh(a, d)
	rem := new(big.Int).Sub(a, new(big.Int).Lsh(quo, d))
	half := new(big.Int).Lsh(big.NewInt(1), d-1)
	if c := rem.Cmp(half); c > 0 || c == 0 && quo.Bit(0) == 1 {
		quo.Add(quo, big.NewInt(1))
	}
	if neg {
		quo.Neg(quo)
	}
	return quo
}

// refSigma2 is σ = E(μ) + 1 of a line (0 for a zero line; non-finite
// entries ignored).
func refSigma2(line []float64) int {
	mu := 0.0
	for _, x := range line {
		if a := math.Abs(x); a <= math.MaxFloat64 && a > mu {
			mu = a
		}
	}
	if mu == 0 {
		return 0
	}
	_, _, E := refDecode(mu)
	return E + 1
}

// refLift reconstructs the integer in [H−P+1, H] congruent to res[r] modulo
// mods[r] by incremental lifting.
func refLift(res []int64, mods []int, P, H *big.Int) *big.Int {
	x, M := new(big.Int), big.NewInt(1)
	for r, p := range mods {
		bp := big.NewInt(int64(p))
		diff := new(big.Int).Sub(big.NewInt(res[r]), x)
		inv := new(big.Int).ModInverse(new(big.Int).Mod(M, bp), bp)
		t := diff.Mul(diff, inv)
		t.Mod(t, bp)
		x.Add(x, t.Mul(t, M))
		M.Mul(M, bp)
	}
	if M.Cmp(P) != 0 {
		panic("ref: moduli product")
	}
	if x.Cmp(H) > 0 {
		x.Sub(x, P)
	}
	return x
}

// refCRTResult is the reference and what it passed through.
type refCRTResult struct {
	mods      []int
	bA, bB    int
	sa, sb    []int
	xa, xb    []*big.Int // A' and B'
	exact     []*big.Int // Σ_l A'_il·B'_lj
	P, H      *big.Int
	scaled, c []float64 // RN(C'·2^e), then α and β
	ok        bool      // k ≤ H
}

func refCRT(a, b, c0 []float64, alpha, beta float64, m, k, n, N int) refCRTResult {
	var r refCRTResult
	r.mods = refModuli(N)
	r.P = big.NewInt(1)
	for _, p := range r.mods {
		r.P.Mul(r.P, big.NewInt(int64(p)))
	}
	r.H = new(big.Int).Rsh(new(big.Int).Sub(r.P, big.NewInt(1)), 1)
	kk := big.NewInt(int64(max(k, 1)))
	if kk.Cmp(r.H) > 0 {
		return r
	}
	r.ok = true
	T := 0
	for new(big.Int).Lsh(kk, uint(T+1)).Cmp(r.H) <= 0 {
		T++
	}
	r.bA, r.bB = (T+1)/2, T/2
	r.sa, r.sb = make([]int, m), make([]int, n)
	for i := 0; i < m; i++ {
		r.sa[i] = refSigma2(a[i*k : i*k+k])
	}
	col := make([]float64, k)
	for j := 0; j < n; j++ {
		for l := 0; l < k; l++ {
			col[l] = b[l*n+j]
		}
		r.sb[j] = refSigma2(col)
	}
	r.xa, r.xb = make([]*big.Int, m*k), make([]*big.Int, k*n)
	for i := 0; i < m; i++ {
		for l := 0; l < k; l++ {
			r.xa[i*k+l] = refRound(a[i*k+l], r.bA-r.sa[i])
		}
	}
	for l := 0; l < k; l++ {
		for j := 0; j < n; j++ {
			r.xb[l*n+j] = refRound(b[l*n+j], r.bB-r.sb[j])
		}
	}
	r.exact, r.scaled, r.c = make([]*big.Int, m*n), make([]float64, m*n), make([]float64, m*n)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			s := new(big.Int)
			for l := 0; l < k; l++ {
				s.Add(s, new(big.Int).Mul(r.xa[i*k+l], r.xb[l*n+j]))
			}
			r.exact[i*n+j] = s
			v := 0.0
			if s.Sign() != 0 {
				f := new(big.Float).SetInt(s) // exact: prec = bit length
				f.SetMantExp(f, r.sa[i]-r.bA+r.sb[j]-r.bB)
				v, _ = f.Float64() // RN, gradual underflow, ±Inf
			}
			r.scaled[i*n+j] = v
			if alpha != 1 {
				v = float64(alpha * v)
			}
			if beta != 0 {
				v = v + float64(beta*c0[i*n+j])
			}
			r.c[i*n+j] = v
		}
	}
	return r
}

func refGenCRT(rng *rand.Rand, kind string, r, c int) []float64 {
	x := make([]float64, r*c)
	for i := range x {
		sign := float64(1 - 2*rng.Intn(2))
		switch kind {
		case "uniform":
			x[i] = 2*rng.Float64() - 1
		case "span":
			x[i] = sign * (1 + rng.Float64()) * math.Ldexp(1, rng.Intn(121)-60)
			if rng.Intn(6) == 0 {
				x[i] = 0
			}
		case "denormal":
			x[i] = sign * math.Float64frombits(1+rng.Uint64()&(1<<52-2))
		case "huge":
			x[i] = sign * (1 + rng.Float64()) * math.Ldexp(1, 1000+rng.Intn(23))
		case "tiny":
			x[i] = sign * (1 + rng.Float64()) * math.Ldexp(1, -540+rng.Intn(30))
		case "edge": // line maxima of significand 2 − 2^−52: round up to 2^b
			x[i] = sign * math.Nextafter(2, 0) * math.Ldexp(1, rng.Intn(5))
		case "halves": // small integers + 1/2: ties of A'·B' rounding when b is small
			x[i] = float64(rng.Intn(16)-8) + 0.5
		default:
			panic(kind)
		}
	}
	return x
}

// TestReconstructIndependentRef compares package crt with refCRT bit for
// bit: crt.GEMM (the golden C), the programs' path (ModProducts per chunk,
// summed modulo p_r, Reconstruct, ozaki.Epilogue: programs/ozaki_crt.go)
// and a GEMMTile sub-tile; the integers C' the residues give (by the
// reference's own lifting) must equal Σ A'·B' exactly.
func TestReconstructIndependentRef(t *testing.T) {
	rng := rand.New(rand.NewSource(20261202))
	type tc struct {
		m, k, n, N, chunk int
		ka, kb            string
		alpha, beta       float64
	}
	var cases []tc
	kinds := []string{"uniform", "span", "denormal", "huge", "tiny", "edge", "halves"}
	ab := [][2]float64{{1, 0}, {-2.5, 0}, {1, 0.75}, {0.1, -3}, {0, 1}, {0x1p-1000, 0x1p-60}}
	shapes := [][3]int{{5, 7, 3}, {9, 130, 131}, {3, 67, 4}, {1, 1, 1}, {4, 200, 2}, {7, 13, 129}}
	x := 0
	for _, N := range []int{1, 2, 3, 5, 8, 14, 16, 20, 24} {
		for rep := 0; rep < 3; rep++ {
			sh := shapes[x%len(shapes)]
			if N <= 2 {
				sh[1] = min(sh[1], 5) // k ≤ H
			}
			chunk := []int{0, 7, 0, 64, 1}[x%5]
			cases = append(cases, tc{sh[0], sh[1], sh[2], N, chunk, kinds[x%len(kinds)], kinds[(x*3+rep+N)%len(kinds)],
				ab[x%len(ab)][0], ab[x%len(ab)][1]})
			x++
		}
	}
	cases = append(cases,
		tc{3, 6, 4, 14, 0, "denormal", "huge", 1, 0}, // underflow of one side, not of the product
		tc{4, 9, 5, 20, 0, "huge", "huge", -1, 0},    // overflow to ±Inf
		tc{6, 11, 7, 24, 3, "tiny", "tiny", 1, 0.5},  // results in and below the subnormals
		tc{2, 40, 3, 24, 0, "edge", "edge", 1, 0},    // C' at the budget's worst case
		tc{3, 0, 2, 14, 0, "uniform", "uniform", 2, -1},
	)
	var nInf, nSub, nZero, nMulti int
	for ci, c := range cases {
		name := fmt.Sprintf("%d:%dx%dx%d/N%d/chunk%d/%s*%s/a%g,b%g", ci, c.m, c.k, c.n, c.N, c.chunk, c.ka, c.kb, c.alpha, c.beta)
		A, B := refGenCRT(rng, c.ka, c.m, c.k), refGenCRT(rng, c.kb, c.k, c.n)
		if ci%4 == 1 && c.m > 1 { // a zero row and a zero column
			clear(A[:c.k])
			for l := 0; l < c.k; l++ {
				B[l*c.n] = 0
			}
		}
		var C0 []float64
		if c.beta != 0 {
			C0 = refGenCRT(rng, "span", c.m, c.n)
		}
		want := refCRT(A, B, C0, c.alpha, c.beta, c.m, c.k, c.n, c.N)
		if !want.ok {
			t.Fatalf("%s: k > H, the case tests nothing", name)
		}
		got, p, err := GEMM(A, B, C0, c.alpha, c.beta, c.m, c.k, c.n, Config{Moduli: c.N, Chunk: c.chunk, Workers: 1 + ci%3})
		if err != nil || p.Fallback {
			t.Fatalf("%s: %v %v", name, err, p.Fallback)
		}
		// The plan against the contract.
		if fmt.Sprint(p.Moduli) != fmt.Sprint(want.mods) || p.BitsA != want.bA || p.BitsB != want.bB {
			t.Fatalf("%s: moduli %v budget %d,%d; reference %v %d,%d", name, p.Moduli, p.BitsA, p.BitsB, want.mods, want.bA, want.bB)
		}
		if p.Basis.P.Cmp(want.P) != 0 || p.Basis.Half.Cmp(want.H) != 0 {
			t.Fatalf("%s: P, H differ", name)
		}
		for i, s := range want.sa {
			if p.ScalesA[i].Sigma != s {
				t.Fatalf("%s: σ row %d: %d, reference %d", name, i, p.ScalesA[i].Sigma, s)
			}
		}
		for j, s := range want.sb {
			if p.ScalesB[j].Sigma != s {
				t.Fatalf("%s: τ column %d: %d, reference %d", name, j, p.ScalesB[j].Sigma, s)
			}
		}
		if max(c.k, 1) > p.Chunk {
			nMulti++
		}
		// The residues: each is A' (B') modulo p in the contract's range.
		ra, rb := p.Residues(A, B)
		for r, pr := range want.mods {
			bp := big.NewInt(int64(pr))
			lo := -int64(ResidueBound(pr))
			chk := func(what string, x *big.Int, got int8) {
				v := new(big.Int).Mod(x, bp).Int64()
				if pr == 256 && v >= 128 || pr != 256 && v > int64(pr-1)/2 {
					v -= int64(pr)
				}
				if v < lo || int64(got) != v {
					t.Fatalf("%s: residue of %s = %v mod %d: package %d, reference %d", name, what, x, pr, got, v)
				}
			}
			for e, xa := range want.xa {
				chk(fmt.Sprintf("A'[%d,%d]", e/max(c.k, 1), e%max(c.k, 1)), xa, ra[r][e])
			}
			for e, xb := range want.xb {
				chk(fmt.Sprintf("B'[%d,%d]", e/c.n, e%c.n), xb, rb[r][e])
			}
		}
		// The machine's planes, summed per modulus over the chunks, lifted by
		// the reference's own CRT: C' must be Σ A'·B' exactly and in [−H, H].
		cr := make([][]int32, len(p.Moduli))
		for r, pr := range p.Moduli {
			sum := make([]int64, c.m*c.n)
			for l0 := 0; l0 < c.k; l0 += p.Chunk {
				D := ModProducts(ra, rb, c.m, c.k, c.n, r, l0, min(c.k, l0+p.Chunk))
				for e := range sum {
					sum[e] += int64(D[e])
				}
			}
			cr[r] = make([]int32, c.m*c.n)
			for e := range sum {
				cr[r][e] = int32(((sum[e] % int64(pr)) + int64(pr)) % int64(pr))
			}
		}
		res := make([]int64, len(p.Moduli))
		for e := 0; e < c.m*c.n; e++ {
			for r := range res {
				res[r] = int64(cr[r][e])
			}
			if cp := refLift(res, want.mods, want.P, want.H); cp.Cmp(want.exact[e]) != 0 {
				t.Fatalf("%s: C'[%d,%d]: lifted %v, exact Σ A'B' %v", name, e/c.n, e%c.n, cp, want.exact[e])
			}
			if new(big.Int).Abs(want.exact[e]).Cmp(want.H) > 0 {
				t.Fatalf("%s: |C'| > H", name)
			}
		}
		for _, v := range want.c {
			switch {
			case math.IsInf(v, 0):
				nInf++
			case v == 0:
				nZero++
			case math.Abs(v) < 0x1p-1022:
				nSub++
			}
		}
		sameBitsAt(t, name+": crt.GEMM", want.c, got, c.n)
		prog := p.Reconstruct(cr, 0, c.m, 0, c.n)
		sameBitsAt(t, name+": Reconstruct (before α, β)", want.scaled, prog, c.n)
		ozaki.Epilogue(prog, c.alpha, c.beta, C0)
		sameBitsAt(t, name+": planes+Reconstruct+Epilogue", want.c, prog, c.n)
		if c.m > 2 && c.n > 2 {
			r0, rows, c0, cols := 1, c.m-2, 1, c.n-2
			tile := GEMMTile(&p, ra, rb, r0, rows, c0, cols)
			var wt []float64
			for i := r0; i < r0+rows; i++ {
				wt = append(wt, want.scaled[i*c.n+c0:i*c.n+c0+cols]...)
			}
			sameBitsAt(t, name+": GEMMTile sub-tile", wt, tile, cols)
		}
	}
	t.Logf("%d cases: %d ±Inf, %d subnormal, %d zero outputs; %d cases of several k-chunks", len(cases), nInf, nSub, nZero, nMulti)
	if nInf == 0 || nSub == 0 || nZero == 0 || nMulti < 3 {
		t.Errorf("the cases no longer reach the rounding's extremes or several chunks")
	}
}

func sameBitsAt(t *testing.T, what string, want, got []float64, n int) {
	t.Helper()
	if len(want) != len(got) {
		t.Fatalf("%s: len %d vs %d", what, len(want), len(got))
	}
	for x := range want {
		if math.Float64bits(want[x]) != math.Float64bits(got[x]) {
			t.Fatalf("%s: [%d,%d]: reference %v (%#016x), package %v (%#016x)", what, x/max(n, 1), x%max(n, 1),
				want[x], math.Float64bits(want[x]), got[x], math.Float64bits(got[x]))
		}
	}
}
