package ozaki

// An independent reference of the Ozaki-I numerics from the INT8 digits
// onwards: the scales, the digits, the diagonal INT32 sums, the FP64
// recombination in the documented order (package doc §6), the scaling and
// α/β. It is written from the package contract (doc.go §1–§6) and the
// paper's description (digest §2.2: convert each INT32 result exactly, weight
// it by 2^(−β(t+u−2)), add in increasing t+u, scale by the row and column
// exponents at the end, then α and β), NOT from the package's code: no
// function of the package is called on the reference side (Weight, Recombine,
// ApplyScales, Epilogue, DiagonalProducts, SliceValue, ScaleRows, Chunks and
// math.Ldexp are all avoided there). The simulated run's C is compared with
// package ozaki; before this test the recombination half of that comparison
// was only ever computed by package ozaki itself.

import (
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"math/rand"
	"testing"
)

// refSigma is σ of a line from its largest finite magnitude mu (§1), read off
// the IEEE bits: E(mu) and the 53-bit significand (subnormals normalised),
// σ = E + 1, plus one when the significand ≥ 1.984375 = 127/64, i.e. when
// sig·64 ≥ 127·2^52.
func refSigma(mu float64) (sigma int, zero bool) {
	if mu == 0 {
		return 0, true
	}
	b := math.Float64bits(mu)
	ef, frac := int(b>>52&0x7ff), b&(1<<52-1)
	var E int
	var sig uint64
	if ef == 0 {
		L := bits.Len64(frac)
		E = -1074 + L - 1
		sig = frac << uint(53-L)
	} else {
		E = ef - 1023
		sig = frac | 1<<52
	}
	sigma = E + 1
	if sig >= 127<<46 {
		sigma++
	}
	return sigma, false
}

// refLineMax is the largest finite |x| of the line (non-finite ignored).
func refLineMax(xs []float64) float64 {
	mu := 0.0
	for _, x := range xs {
		if a := math.Abs(x); a <= math.MaxFloat64 && a > mu {
			mu = a
		}
	}
	return mu
}

// refDigitsOf returns the s balanced digits of x at scale σ, most significant
// first, from N = floor(x·2^(8s−1−σ)) computed exactly in math/big: d =
// ((N mod 256) in [−128, 127]), N ← (N − d)/256, from the bottom (§2).
func refDigitsOf(x float64, sigma, s int) []int8 {
	d := make([]int8, s)
	if x == 0 || math.IsInf(x, 0) || math.IsNaN(x) {
		return d
	}
	f := new(big.Float).SetFloat64(x)
	f.SetMantExp(f, 8*s-1-sigma)
	N, acc := f.Int(nil)  // toward zero
	if acc == big.Above { // x < 0 and not an integer: floor is one lower
		N.Sub(N, big.NewInt(1))
	}
	r := new(big.Int)
	for t := s - 1; t >= 0; t-- {
		r.Mod(N, big.NewInt(256)) // Euclidean: [0, 256)
		v := r.Int64()
		if v >= 128 {
			v -= 256
		}
		d[t] = int8(v)
		N.Sub(N, big.NewInt(v))
		N.Quo(N, big.NewInt(256))
	}
	if N.Sign() != 0 {
		panic(fmt.Sprintf("ref: %v does not fit %d digits at 2^%d", x, s, sigma))
	}
	return d
}

// refPow2 is 2^e for e in the normal range, from its bits.
func refPow2(e int) float64 {
	if e < -1022 || e > 1023 {
		panic("refPow2 out of range")
	}
	return math.Float64frombits(uint64(e+1023) << 52)
}

// refScale returns RN(v·2^e), one correctly rounded scaling (ties to even,
// gradual underflow, ±Inf on overflow), computed exactly in math/big.
func refScale(v float64, e int) float64 {
	if v == 0 {
		return v
	}
	f := new(big.Float).SetFloat64(v)
	f.SetMantExp(f, e)
	r, _ := f.Float64()
	return r
}

// refResult is the reference and its intermediate values, for diagnosis.
type refResult struct {
	sa, sb []int     // σ of the rows of A, the columns of B
	da, db [][]int8  // digits: da[i*k+l][t-1], db[l*n+j][u-1]
	chunk  int       // k-chunk length
	planes [][]int64 // planes[c*(dmax-1)+(d-2)][i*n+j] = D_{c,d}(i,j)
	acc    []float64 // the FP64 accumulators after the last addition
	c      []float64 // α·P + β·C0
}

// refOzaki computes C = α·A·B + β·C0 for s slices, product set square or
// triangular, chunk length chunk (0: the contract's rule).
func refOzaki(a, b, c0 []float64, alpha, beta float64, m, k, n, s int, square bool, chunk int) refResult {
	var r refResult
	r.sa, r.sb = make([]int, m), make([]int, n)
	for i := 0; i < m; i++ {
		r.sa[i], _ = refSigma(refLineMax(a[i*k : i*k+k]))
	}
	col := make([]float64, k)
	for j := 0; j < n; j++ {
		for l := 0; l < k; l++ {
			col[l] = b[l*n+j]
		}
		r.sb[j], _ = refSigma(refLineMax(col))
	}
	r.da, r.db = make([][]int8, m*k), make([][]int8, k*n)
	for i := 0; i < m; i++ {
		for l := 0; l < k; l++ {
			r.da[i*k+l] = refDigitsOf(a[i*k+l], r.sa[i], s)
		}
	}
	for l := 0; l < k; l++ {
		for j := 0; j < n; j++ {
			r.db[l*n+j] = refDigitsOf(b[l*n+j], r.sb[j], s)
		}
	}
	// §5: products (t, u) with t + u ≤ s + 1 (triangular) or all (square).
	dmax := s + 1
	if square {
		dmax = 2 * s
	}
	if chunk == 0 {
		// k if k·s·2^14 ≤ 2^31 − 1, else the largest multiple of 64 under
		// that bound (s pairs on the fullest diagonal, both sets).
		bound := (1<<31 - 1) / (s << 14)
		chunk = k
		if k > bound {
			chunk = bound - bound%64
		}
	}
	r.chunk = chunk
	r.acc = make([]float64, m*n) // +0.0
	for l0 := 0; l0 < max(k, 1); l0 += max(chunk, 1) {
		l1 := min(k, l0+chunk)
		for d := 2; d <= dmax; d++ {
			D := make([]int64, m*n)
			for i := 0; i < m; i++ {
				for j := 0; j < n; j++ {
					var sum int64
					for t := 1; t <= s; t++ {
						u := d - t
						if u < 1 || u > s {
							continue
						}
						for l := l0; l < l1; l++ {
							sum += int64(r.da[i*k+l][t-1]) * int64(r.db[l*n+j][u-1])
						}
					}
					if sum > math.MaxInt32 || sum < math.MinInt32 {
						panic(fmt.Sprintf("ref: D_%d(%d,%d) = %d overflows INT32", d, i, j, sum))
					}
					D[i*n+j] = sum
				}
			}
			r.planes = append(r.planes, D)
			w := refPow2(-8 * (d - 2))
			for x := range r.acc {
				r.acc[x] = r.acc[x] + float64(float64(D[x])*w)
			}
		}
		if k == 0 {
			break
		}
	}
	// Digit t of row i weighs 2^(σ_i − 7 − 8(t−1)), digit u of column j
	// 2^(τ_j − 7 − 8(u−1)): the pair weighs 2^(σ_i + τ_j − 14)·2^(−8(t+u−2)).
	r.c = make([]float64, m*n)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			p := refScale(r.acc[i*n+j], r.sa[i]+r.sb[j]-14)
			if alpha != 1 {
				p = float64(alpha * p)
			}
			if beta != 0 {
				p = p + float64(beta*c0[i*n+j])
			}
			r.c[i*n+j] = p
		}
	}
	return r
}

// refGen draws one input matrix of a named kind.
func refGen(rng *rand.Rand, kind string, r, c int) []float64 {
	x := make([]float64, r*c)
	for i := range x {
		switch kind {
		case "uniform":
			x[i] = 2*rng.Float64() - 1
		case "span": // a wide exponent span inside every line, some zeros
			x[i] = (1 + rng.Float64()) * refPow2(rng.Intn(241)-120)
			if rng.Intn(2) == 0 {
				x[i] = -x[i]
			}
			if rng.Intn(7) == 0 {
				x[i] = 0
			}
		case "subnormal": // subnormal and tiny normal entries
			x[i] = math.Float64frombits(rng.Uint64() & (1<<52 - 1))
			if rng.Intn(3) == 0 {
				x[i] = (1 + rng.Float64()) * refPow2(-1022+rng.Intn(40))
			}
			if rng.Intn(2) == 0 {
				x[i] = -x[i]
			}
		case "denormal": // subnormals only: σ ≤ −1022
			x[i] = math.Float64frombits(1 + rng.Uint64()&(1<<52-2))
			if rng.Intn(2) == 0 {
				x[i] = -x[i]
			}
		case "large-digits": // U[0.5, 0.99): σ = 0, leading digits 64…126 of one
			// sign, so long-k planes exceed 2^24 (beyond float32's integers)
			x[i] = 0.5 + 0.49*rng.Float64()
		case "huge": // near the top of the range: the scaling overflows
			x[i] = (1 + rng.Float64()) * refPow2(1000+rng.Intn(23))
			if rng.Intn(2) == 0 {
				x[i] = -x[i]
			}
		case "tiny": // products that land in or below the subnormal range
			x[i] = (1 + rng.Float64()) * refPow2(-540+rng.Intn(30))
			if rng.Intn(2) == 0 {
				x[i] = -x[i]
			}
		case "bump": // line maxima with significand ≥ 1.984375, all signs
			x[i] = (1.984375 + 0.015625*rng.Float64()) * refPow2(rng.Intn(9)-4)
			if rng.Intn(2) == 0 {
				x[i] = -x[i]
			}
			if rng.Intn(3) == 0 {
				x[i] = math.Nextafter(2, 0) * refPow2(rng.Intn(9)-4)
			}
		case "cancel": // exact cancellations: integers ± 1 ulp
			v := float64(rng.Intn(5) - 2)
			x[i] = v + float64(rng.Intn(3)-1)*0x1p-52
		default:
			panic(kind)
		}
	}
	return x
}

// refCase is one comparison: inputs, configuration, α, β.
type refCase struct {
	name         string
	m, k, n      int
	ka, kb       string // generator kinds of A and B
	bits         int
	mode         Mode
	set          ProductSet
	chunk        int
	alpha, beta  float64
	zeroRow, col int // a zero row of A / zero column of B (−1: none)
}

// TestRecombineIndependentRef compares package ozaki's result bit for bit
// with the independent reference refOzaki, through the two ways the
// simulator uses the package: ozaki.GEMM (the golden C: GEMMTile +
// Epilogue) and the program's recombination of INT8 GEMM planes
// (DiagonalProducts per chunk and diagonal + Recombine + ApplyScales +
// Epilogue, as programs/ozaki.go does with the planes the simulated units
// wrote), plus a GEMMTile sub-tile (numerics sampled). The intermediate
// scales, digits, chunk and planes are compared first, so that a failure
// says where the two part.
func TestRecombineIndependentRef(t *testing.T) {
	rng := rand.New(rand.NewSource(20261201))
	alphas := [][2]float64{{1, 0}, {-2.5, 0}, {1, 0.75}, {0.1, -3}, {0, 1}, {-1, 1}, {0x1p-1000, 0x1p-60}}
	var cases []refCase
	add := func(c refCase) {
		ab := alphas[len(cases)%len(alphas)]
		if c.alpha == 0 && c.beta == 0 {
			c.alpha, c.beta = ab[0], ab[1]
		}
		c.name = fmt.Sprintf("%d:%dx%dx%d/%s*%s/bits%d/%s/%s/chunk%d/a%g,b%g", len(cases), c.m, c.k, c.n, c.ka, c.kb,
			c.bits, c.mode, c.set, c.chunk, c.alpha, c.beta)
		cases = append(cases, c)
	}
	kinds := []string{"uniform", "span", "subnormal", "bump", "cancel"}
	shapes := [][3]int{{5, 7, 3}, {9, 130, 131}, {3, 67, 130}, {1, 1, 1}, {4, 200, 2}, {7, 13, 129}}
	settings := []struct {
		bits int
		mode Mode
	}{{53, Fixed}, {55, Forced}, {53, Dynamic}, {103, Fixed}, {200, Fixed}, {20, Dynamic}, {7, Fixed}}
	x := 0
	for si, st := range settings {
		for _, set := range []ProductSet{Triangular, Square} {
			for rep := 0; rep < 2; rep++ {
				sh := shapes[x%len(shapes)]
				if st.bits > 100 && sh[0]*sh[1]*sh[2] > 20000 {
					sh = [3]int{5, 37, 6}
				}
				chunk := []int{0, 0, 7, 64, 1, 100}[x%6]
				if chunk > 0 && chunk >= sh[1] {
					chunk = 0
				}
				add(refCase{m: sh[0], k: sh[1], n: sh[2], ka: kinds[(x+si)%len(kinds)], kb: kinds[(x+2*si+rep)%len(kinds)],
					bits: st.bits, mode: st.mode, set: set, chunk: chunk, zeroRow: (x % 3) - 1, col: (x % 4) - 1})
				x++
			}
		}
	}
	// The extremes of the scaling: overflow to ±Inf, underflow into the
	// subnormals (the acc's rounding then the scaling's: two roundings).
	add(refCase{m: 4, k: 9, n: 5, ka: "huge", kb: "huge", bits: 53, mode: Fixed, zeroRow: -1, col: -1})
	add(refCase{m: 6, k: 11, n: 7, ka: "tiny", kb: "tiny", bits: 55, mode: Forced, zeroRow: 2, col: -1})
	add(refCase{m: 6, k: 11, n: 7, ka: "tiny", kb: "tiny", bits: 200, mode: Fixed, set: Square, chunk: 4, zeroRow: -1, col: 3})
	add(refCase{m: 5, k: 40, n: 4, ka: "subnormal", kb: "huge", bits: 53, mode: Dynamic, zeroRow: -1, col: -1})
	add(refCase{m: 3, k: 20, n: 3, ka: "span", kb: "span", bits: 53, mode: Dynamic, zeroRow: -1, col: -1, alpha: -3, beta: 0.5})
	// A row of subnormals only against huge columns: acc·2^(σA−14) alone
	// would underflow, acc·2^(σA+σB−14) does not (one rounding, not two).
	add(refCase{m: 3, k: 6, n: 4, ka: "denormal", kb: "huge", bits: 53, mode: Fixed, zeroRow: -1, col: -1})
	add(refCase{m: 3, k: 6, n: 4, ka: "huge", kb: "denormal", bits: 200, mode: Forced, set: Square, zeroRow: -1, col: 1})
	// Planes beyond 2^24 in magnitude (their low bits matter).
	add(refCase{m: 3, k: 3000, n: 2, ka: "large-digits", kb: "large-digits", bits: 20, mode: Fixed, zeroRow: -1, col: -1})
	add(refCase{m: 2, k: 2500, n: 3, ka: "large-digits", kb: "span", bits: 55, mode: Forced, set: Square, zeroRow: -1, col: -1})
	// The natural k-chunking: k beyond MaxChunk(26) = 5041 gives chunks of
	// 4992 and 108 (and k = 64·l + 3 is no multiple of anything useful).
	add(refCase{m: 2, k: 5100, n: 3, ka: "uniform", kb: "span", bits: 200, mode: Fixed, zeroRow: -1, col: -1})
	add(refCase{m: 0, k: 5, n: 3, ka: "uniform", kb: "uniform", bits: 53, mode: Fixed, zeroRow: -1, col: -1})
	add(refCase{m: 3, k: 0, n: 2, ka: "uniform", kb: "uniform", bits: 53, mode: Fixed, zeroRow: -1, col: -1, alpha: 2, beta: -1})

	dynamicSeen := map[int]bool{}
	var nInf, nSub, nZero, nMulti, nOut int
	var maxD int64
	for _, tc := range cases {
		A, B := refGen(rng, tc.ka, tc.m, tc.k), refGen(rng, tc.kb, tc.k, tc.n)
		C0 := refGen(rng, "span", tc.m, tc.n)
		if tc.zeroRow >= 0 && tc.zeroRow < tc.m {
			clear(A[tc.zeroRow*tc.k : tc.zeroRow*tc.k+tc.k])
		}
		if tc.col >= 0 && tc.col < tc.n {
			for l := 0; l < tc.k; l++ {
				B[l*tc.n+tc.col] = 0
			}
		}
		if tc.beta == 0 {
			C0 = nil
		}
		cfg := Config{Bits: tc.bits, Mode: tc.mode, Products: tc.set, Chunk: tc.chunk, Workers: 1 + len(tc.name)%3}
		got, p, err := GEMM(A, B, C0, tc.alpha, tc.beta, tc.m, tc.k, tc.n, cfg)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if p.Fallback {
			t.Fatalf("%s: fallback (%s): the case does not test the recombination", tc.name, p.Reason)
		}
		if tc.mode == Dynamic {
			dynamicSeen[p.Slices] = true
		}
		s := p.Slices
		want := refOzaki(A, B, C0, tc.alpha, tc.beta, tc.m, tc.k, tc.n, s, tc.set == Square, tc.chunk)
		refCompareParts(t, tc.name, &p, A, B, want)
		if tc.k > p.Chunk {
			nMulti++
		}
		for _, D := range want.planes {
			for _, v := range D {
				maxD = max(maxD, v, -v)
			}
		}
		for _, v := range want.c {
			nOut++
			switch {
			case math.IsInf(v, 0):
				nInf++
			case v == 0:
				nZero++
			case math.Abs(v) < 0x1p-1022:
				nSub++
			}
		}
		sameBitsAt(t, tc.name+": ozaki.GEMM", want.c, got, tc.n)

		// The program's path over the planes (programs/ozaki.go simulatedC).
		pa, pb := p.Digits(A, B)
		acc := make([]float64, tc.m*tc.n)
		for l0 := 0; l0 < max(tc.k, 1); l0 += p.Chunk {
			for d := 2; d <= p.Products.MaxDiagonal(s); d++ {
				Recombine(acc, DiagonalProducts(pa, pb, tc.m, tc.k, tc.n, p.Products, l0, min(tc.k, l0+p.Chunk), d), d)
			}
			if tc.k == 0 {
				break
			}
		}
		sameBitsAt(t, tc.name+": Recombine acc", want.acc, acc, tc.n)
		ApplyScales(acc, p.ScalesA, p.ScalesB, 0, tc.m, 0, tc.n)
		Epilogue(acc, tc.alpha, tc.beta, C0)
		sameBitsAt(t, tc.name+": planes+Recombine+ApplyScales+Epilogue", want.c, acc, tc.n)

		// A sampled tile (programs' numerics: sampled).
		if tc.m > 2 && tc.n > 2 {
			r0, rows, c0, cols := 1, tc.m-2, 2, tc.n-2
			tile := GEMMTile(&p, pa, pb, r0, rows, c0, cols)
			var c0s, wt []float64
			for i := r0; i < r0+rows; i++ {
				wt = append(wt, want.c[i*tc.n+c0:i*tc.n+c0+cols]...)
				if C0 != nil {
					c0s = append(c0s, C0[i*tc.n+c0:i*tc.n+c0+cols]...)
				}
			}
			Epilogue(tile, tc.alpha, tc.beta, c0s)
			sameBitsAt(t, tc.name+": GEMMTile sub-tile", wt, tile, cols)
		}
	}
	t.Logf("%d cases, %d outputs: %d ±Inf, %d subnormal, %d zero; %d cases of several k-chunks; max |D| = %d; ADP chose slices %v",
		len(cases), nOut, nInf, nSub, nZero, nMulti, maxD, dynamicSeen)
	if nInf == 0 || nSub == 0 || nZero == 0 || nMulti < 3 || maxD <= 1<<24 {
		t.Errorf("the cases no longer reach the scaling's extremes or several chunks")
	}
	if len(dynamicSeen) < 2 {
		t.Errorf("ADP chose only slice counts %v: the dynamic cases should cover several", dynamicSeen)
	}
}

// refCompareParts checks the plan's scales, digits, chunk and planes against
// the reference's, so that a disagreement is located before C is compared.
func refCompareParts(t *testing.T, name string, p *Plan, A, B []float64, r refResult) {
	t.Helper()
	m, k, n, s := p.M, p.K, p.N, p.Slices
	for i := 0; i < m; i++ {
		if p.ScalesA[i].Sigma != r.sa[i] {
			t.Fatalf("%s: σ of row %d: package %d, reference %d", name, i, p.ScalesA[i].Sigma, r.sa[i])
		}
	}
	for j := 0; j < n; j++ {
		if p.ScalesB[j].Sigma != r.sb[j] {
			t.Fatalf("%s: σ of column %d: package %d, reference %d", name, j, p.ScalesB[j].Sigma, r.sb[j])
		}
	}
	if p.Chunk != r.chunk && k > 0 {
		t.Fatalf("%s: chunk: package %d, reference %d", name, p.Chunk, r.chunk)
	}
	pa, pb := p.Digits(A, B)
	for x := 0; x < m*k; x++ {
		for tt := 0; tt < s; tt++ {
			if pa[tt][x] != r.da[x][tt] {
				t.Fatalf("%s: digit %d of A[%d,%d] = %v: package %d, reference %d", name, tt+1, x/k, x%k, A[x], pa[tt][x], r.da[x][tt])
			}
		}
	}
	for x := 0; x < k*n; x++ {
		for u := 0; u < s; u++ {
			if pb[u][x] != r.db[x][u] {
				t.Fatalf("%s: digit %d of B[%d,%d] = %v: package %d, reference %d", name, u+1, x/n, x%n, B[x], pb[u][x], r.db[x][u])
			}
		}
	}
	dmax := p.Products.MaxDiagonal(s)
	x := 0
	for l0 := 0; l0 < k; l0 += p.Chunk {
		for d := 2; d <= dmax; d++ {
			D := DiagonalProducts(pa, pb, m, k, n, p.Products, l0, min(k, l0+p.Chunk), d)
			for e := range D {
				if int64(D[e]) != r.planes[x][e] {
					t.Fatalf("%s: D(chunk at %d, d=%d)[%d,%d]: package %d, reference %d", name, l0, d, e/n, e%n, D[e], r.planes[x][e])
				}
			}
			x++
		}
	}
}

// sameBitsAt is sameBits with the element's (row, column) in the message.
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
