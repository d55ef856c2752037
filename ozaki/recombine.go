package ozaki

import "math"

// Weight returns the exact power of two 2^(−8(d−2)) that diagonal d carries
// in the recombination.
func Weight(d int) float64 { return math.Ldexp(1, -8*(d-2)) }

// Recombine performs one recombination step for diagonal d of one k-chunk:
// acc[x] = acc[x] + float64(D[x])·2^(−8(d−2)) for every x. The conversion and
// the multiplication are exact; the addition rounds once (RNE). Calling it
// for each chunk in increasing order and, within a chunk, for d = 2, 3, …,
// MaxDiagonal in increasing order, starting from acc = +0.0, defines the
// result bits.
func Recombine(acc []float64, D []int32, d int) {
	w := Weight(d)
	D = D[:len(acc)]
	for x := range acc {
		acc[x] += float64(float64(D[x]) * w)
	}
}

// ApplyScales turns the recombined accumulators of the tile rows
// [r0, r0+rows) × columns [col0, col0+cols) (row-major rows×cols) into the
// scaled product P(i,j) = acc(i,j)·2^(σA_i + σB_j − 14), one correctly
// rounded scaling (math.Ldexp, RNE also into the subnormal range; ±Inf on
// overflow).
func ApplyScales(acc []float64, sa, sb []Scale, r0, rows, col0, cols int) {
	for i := 0; i < rows; i++ {
		si := sa[r0+i].Sigma - 14
		row := acc[i*cols : i*cols+cols]
		for j := range row {
			row[j] = math.Ldexp(row[j], si+sb[col0+j].Sigma)
		}
	}
}

// Epilogue applies C = α·P + β·C0 in place on p, elementwise: if α ≠ 1,
// p = α·p (one RNE rounding); then, if β ≠ 0, p = p + β·C0 (two roundings:
// the product β·C0, then the sum; no fused multiply-add). c0 may be nil when
// β = 0; otherwise it has the layout of p.
func Epilogue(p []float64, alpha, beta float64, c0 []float64) {
	if alpha != 1 {
		for x := range p {
			p[x] = float64(alpha * p[x])
		}
	}
	if beta != 0 {
		c0 = c0[:len(p)]
		for x := range p {
			p[x] += float64(beta * c0[x])
		}
	}
}

// NativeGEMM is the package's stand-in for the native FP64 DGEMM of the
// fallback path: C(i,j) = Σ_l A(i,l)·B(l,j) summed in increasing l from +0.0
// with a rounding after every multiply and every add (no FMA), followed by
// Epilogue(α, β, C0). It propagates Inf and NaN as IEEE arithmetic does.
func NativeGEMM(a, b, c0 []float64, alpha, beta float64, m, k, n int) []float64 {
	c := make([]float64, m*n)
	for i := 0; i < m; i++ {
		row := c[i*n : i*n+n]
		for l := 0; l < k; l++ {
			x := a[i*k+l]
			br := b[l*n : l*n+n]
			for j := range row {
				row[j] += float64(x * br[j])
			}
		}
	}
	Epilogue(c, alpha, beta, c0)
	return c
}
