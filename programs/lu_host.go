package programs

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/davinci-sim/davinci-sim/fp"
)

// The host side of lu-fused: the HPL-MxP matrix, the FP32 diagonal-block
// factorization with its inverses (run by the simulated host, and by the
// golden model, through the same functions), and FP64 refinement.

// luMatrix generates HPL-MxP's diagonally dominant random matrix on the fly:
// off-diagonal entries uniform in [−0.5, 0.5) from a per-row PCG stream,
// the diagonal the sum of the row's off-diagonal magnitudes (LU-HPLMXP.md);
// b uniform in [−0.5, 0.5). Only the diagonal (n values) is cached, made
// by fill.
type luMatrix struct {
	n    int
	seed int64
	diag []float64
}

// newLUMatrix returns the matrix of order n; its diagonal is made by fill
// (n² draws: seconds at n = 32768), where the run's context can stop it.
func newLUMatrix(n int, seed int64) *luMatrix {
	return &luMatrix{n: n, seed: seed}
}

// fill makes the diagonal, if not yet made (nothing for no matrix: a run
// without numerics), checking ctx every 256 rows (it had run at build
// time, deaf to a SIGINT). Every job that has a matrix fills it before
// using it: in Prepare, or first thing in a cluster's run.
func (m *luMatrix) fill(ctx context.Context) error {
	if m == nil || m.diag != nil {
		return nil
	}
	diag := make([]float64, m.n)
	row := make([]float64, m.n)
	for i := 0; i < m.n; i++ {
		if i%256 == 0 {
			if err := stopped(ctx, "generating the matrix"); err != nil {
				return err
			}
		}
		m.offRow(i, row)
		s := 0.0
		for j, v := range row {
			if j != i {
				s += math.Abs(v)
			}
		}
		diag[i] = s
	}
	m.diag = diag
	return nil
}

// offRow fills row with the off-diagonal entries of row i (row[i] = 0).
func (m *luMatrix) offRow(i int, row []float64) {
	r := NewRand(m.seed, uint64(i))
	for j := range row {
		row[j] = float64(r.Float64()) - 0.5
	}
	row[i] = 0
}

// Row fills row with row i of A (FP64).
func (m *luMatrix) Row(i int, row []float64) {
	m.offRow(i, row)
	row[i] = m.diag[i]
}

// B returns the right-hand side.
func (m *luMatrix) B() []float64 {
	r := NewRand(m.seed, 1<<40)
	b := make([]float64, m.n)
	for i := range b {
		b[i] = float64(r.Float64()) - 0.5
	}
	return b
}

// NormInf returns ||A||∞.
func (m *luMatrix) NormInf() float64 {
	best := 0.0
	for i := 0; i < m.n; i++ {
		best = math.Max(best, 2*m.diag[i]) // Σ|off| + diag
	}
	return best
}

// luDiag is the host's diagonal-block work of one iteration.
type luDiag struct {
	l, u       []float32 // unit lower L_ii (diagonal 1) and upper U_ii, nb×nb row-major
	uinv, linv []uint16  // FP16(s·U_ii⁻¹) and FP16(L_ii⁻¹); nil for the last block (luFactorOnly)
}

// luFactorBlock factors the FP32 block a (nb×nb) without pivoting into
// unit lower L and upper U, without inverses. Every operation is FP32
// with one rounding (explicit conversions prevent fused multiply-adds).
func luFactorBlock(a []float32, nb int) (*luDiag, error) {
	w := append([]float32(nil), a...)
	for k := 0; k < nb; k++ {
		p := w[k*nb+k]
		if p == 0 || math.IsNaN(float64(p)) || math.IsInf(float64(p), 0) {
			return nil, fmt.Errorf("diagonal block: pivot %d is %v (LU without pivoting needs a diagonally dominant matrix)", k, p)
		}
		for i := k + 1; i < nb; i++ {
			l := w[i*nb+k] / p
			w[i*nb+k] = l
			for j := k + 1; j < nb; j++ {
				w[i*nb+j] = w[i*nb+j] - float32(l*w[k*nb+j])
			}
		}
	}
	d := &luDiag{l: make([]float32, nb*nb), u: make([]float32, nb*nb)}
	for i := 0; i < nb; i++ {
		for j := 0; j < nb; j++ {
			switch {
			case j < i:
				d.l[i*nb+j] = w[i*nb+j]
			case j == i:
				d.l[i*nb+j] = 1
				d.u[i*nb+j] = w[i*nb+j]
			default:
				d.u[i*nb+j] = w[i*nb+j]
			}
		}
	}
	return d, nil
}

// invert computes d's FP16 inverses FP16(s·U⁻¹) and FP16(L⁻¹) (RNE,
// saturating) from its FP32 factors.
func (d *luDiag) invert(nb int, s float32) {
	ui := invUpper32(d.u, nb)
	li := invUnitLower32(d.l, nb)
	o := fp.Options{Round: fp.RNE, Saturate: true}
	d.uinv = make([]uint16, nb*nb)
	d.linv = make([]uint16, nb*nb)
	for k := range ui {
		d.uinv[k] = uint16(fp.FromFloat32(float32(ui[k]*s), fp.FP16, o))
		d.linv[k] = uint16(fp.FromFloat32(li[k], fp.FP16, o))
	}
}

// luFactorOnly says diagonal block i of nbk is only factored: the last
// one. Its inverses would only serve a TRSM, and no panel is left to
// solve; refinement reads the FP32 factors l and u (assembleFactors),
// never the inverses.
func luFactorOnly(i, nbk int) bool { return i == nbk-1 }

// luDiagWork returns the host's work on diagonal block i of nbk (nb×nb):
// its LU (2/3·nb³ flops) and, but for the last block (luFactorOnly), the
// two triangular inverses (nb³/3 each); bytes: the block (FP32) and each
// inverse.
func luDiagWork(nb, i, nbk int) (flops float64, bytes int64) {
	b := int64(nb) * int64(nb) * 4
	lu := float64(luFactorFlops(float64(nb))) // (rounded: 2·lu is not lu fused with its product)
	if luFactorOnly(i, nbk) {
		return lu, b
	}
	return 2 * lu, 3 * b
}

// invUpper32 returns U⁻¹ in FP32 by column-wise back substitution.
func invUpper32(u []float32, nb int) []float32 {
	x := make([]float32, nb*nb)
	for j := 0; j < nb; j++ {
		x[j*nb+j] = 1 / u[j*nb+j]
		for i := j - 1; i >= 0; i-- {
			var s float32
			for k := i + 1; k <= j; k++ {
				s = s + float32(u[i*nb+k]*x[k*nb+j])
			}
			x[i*nb+j] = -s / u[i*nb+i]
		}
	}
	return x
}

// invUnitLower32 returns L⁻¹ of a unit lower triangular L in FP32.
func invUnitLower32(l []float32, nb int) []float32 {
	y := make([]float32, nb*nb)
	for j := 0; j < nb; j++ {
		y[j*nb+j] = 1
		for i := j + 1; i < nb; i++ {
			var s float32
			for k := j; k < i; k++ {
				s = s + float32(l[i*nb+k]*y[k*nb+j])
			}
			y[i*nb+j] = -s
		}
	}
	return y
}

// luScale returns the power of two s that brings max|U_00⁻¹| into
// [2^7, 2^8): the L panels are stored as FP16(s·L) so that they keep full
// FP16 precision, and one s serves every iteration so that fused updates
// can sum panels of different iterations (the trailing update multiplies by
// 1/s, exact in FP32). An L-panel entry is an nb-term sum
// Σ_m A_jm·(s·U_ii⁻¹)_mk, FP32-accumulated and rounded once to FP16
// (saturating): at most nb·max|A_ji|·2^8. With the panel's |A| ≤ 0.5 (the
// matrix's off-diagonal entries, which the updates move little) that is
// 2^15 at nb = 256, half the FP16 maximum 65504, but 2^16 = 65536 at
// nb = 512: there the worst case has no headroom (it would saturate; with
// |A| ≤ 1 already at nb = 256). The actual entries are far smaller: the
// matrix is diagonally dominant, so U_ii⁻¹ is dominated by its diagonal
// and |s·L| ≈ |A_ji|·s/u_kk < 2^7 — max|Lh| was 69 at n = 1024 and 2048,
// nb = 256 and 512, seed 1 (about 950× below 65504).
func luScale(u []float32, nb int) float32 {
	ui := invUpper32(u, nb)
	m := 0.0
	for _, v := range ui {
		m = math.Max(m, math.Abs(float64(v)))
	}
	if m == 0 || math.IsInf(m, 0) || math.IsNaN(m) {
		return 1
	}
	_, exp := math.Frexp(m) // m = f·2^exp, f in [0.5, 1): ⌊log2 m⌋ = exp − 1, exactly
	e := 7 - float64(exp-1)
	return float32(math.Ldexp(1, int(e)))
}

// luFactors are the computed factors in the form refinement uses: one n×n
// float32 array with L (unit, implicit diagonal) below and U on and above
// the diagonal. Off-diagonal blocks are Lh/s and Uh (exact in FP32).
type luFactors struct {
	n  int
	lu []float32
}

// solve overwrites x with (LU)⁻¹ x in FP64.
func (f *luFactors) solve(x []float64) {
	n := f.n
	for i := 0; i < n; i++ {
		row := f.lu[i*n : i*n+i]
		s := x[i]
		for j, v := range row {
			s -= float64(float64(v) * x[j])
		}
		x[i] = s
	}
	for i := n - 1; i >= 0; i-- {
		row := f.lu[i*n : (i+1)*n]
		s := x[i]
		for j := i + 1; j < n; j++ {
			s -= float64(float64(row[j]) * x[j])
		}
		x[i] = s / float64(row[i])
	}
}

// luRefineResult is the outcome of refinement.
type luRefineResult struct {
	Iterations int // IR steps, or GMRES inner steps
	// Steps is the host work the refinement did after x0 = (LU)⁻¹b and its
	// residual, in steps of one LU solve and one product with A: one an IR
	// iteration; a GMRES cycle of k inner steps k + 1 (the update's solve
	// and the residual after it beside the inner steps' own).
	Steps          int
	ScaledResidual float64
	// Passed is HPL-MxP's check: the scaled residual below 16
	// (luPassThreshold), whatever the tolerance. Converged says the
	// refinement reached its tolerance (≤ 16: Converged implies Passed).
	Passed, Converged bool
	Tolerance         float64
	StopReason        string    // why it stopped: luStopConverged, luStopStagnated, luStopMaxIterations, luStopNonFinite
	History           []float64 // scaled residual after each iteration (IR) or cycle (GMRES); [0]: the LU solve's
}

// Why refinement stopped (hplmxp.refinement.stop_reason).
const (
	luStopConverged     = "converged"      // the scaled residual fell below the tolerance
	luStopStagnated     = "stagnated"      // luStagnated: more steps would not get it there
	luStopMaxIterations = "max_iterations" // the iteration budget was spent
	luStopNonFinite     = "non_finite"     // the scaled residual became ±Inf or NaN
)

// luStagnated says refinement has stalled: the scaled residual fell by
// less than a factor luStagnationFactor in each of the last
// luStagnationSteps steps (IR iterations or GMRES cycles; history holds
// the residuals, [0] the LU solve's). Each IR step multiplies the error by
// about the same contraction until the FP64 rounding floor: there the
// residual wanders by ulps (lu-fused-small with tolerance 1e-6: 0.0169,
// 0.0024, 0.0015, 6.0e-4, 9.1e-4, 9.1e-4, 6.0e-4, … for 50 steps) and
// no step brings the tolerance nearer. Requiring a halving is the classic
// rule (LAPACK's xGERFS stops once the backward error fails to halve in a
// step — from its published source, not the shared docs: an assumption
// here); two steps instead of one let a single slow step at the floor's
// edge pass. An IR that contracts by less than 2 per step is barely
// working (GMRES is the remedy); HPL-MxP's runs contract by 10⁻²–10⁻⁵ a
// step until the floor. That rule holds once the run passes (the last
// residual below luPassThreshold: only a stricter tolerance is chased);
// before, a slow contraction still gets the run nearer to passing (a
// residual of 1000 contracting by 0.6 a step passes in 6 steps), so it
// stops only where two steps in a row did not lower the residual at all.
func luStagnated(history []float64) bool {
	if len(history) <= luStagnationSteps {
		return false
	}
	factor := 1.0 // (not yet passed: any fall is progress)
	if history[len(history)-1] < luPassThreshold {
		factor = luStagnationFactor
	}
	for k := len(history) - luStagnationSteps; k < len(history); k++ {
		if history[k] < history[k-1]/factor {
			return false
		}
	}
	return true
}

const (
	luStagnationFactor = 2
	luStagnationSteps  = 2
)

// luUnitRoundoff is the ε64 of the scaled residual: FP64's unit roundoff
// 2⁻⁵³, HPL's "relative machine precision" (HPL_dlamch(HPL_MACH_EPS);
// every HPL run prints "eps is taken to be 1.110223e-16"), which HPL-MxP's
// check inherits. Machine epsilon 2⁻⁵² would halve every scaled residual
// and loosen the threshold of 16 twofold.
const luUnitRoundoff = 0x1p-53

// luPassThreshold is HPL-MxP's bound on the scaled residual: a run passes
// below it (hplmxp.passed; a run that does not fails, exit 1).
// refinement.tolerance may ask refinement for a smaller residual; not
// reaching it is reported (converged: false), not a failure.
const luPassThreshold = 16

// errNoConvergence is returned (wrapped in ErrCheckFailed by the caller)
// when refinement stops without passing HPL-MxP's check.
var errNoConvergence = errors.New("refinement did not converge")

// residual computes r = b − A·x and returns the scaled residual
// ||r||∞ / ((||A||∞ ||x||∞ + ||b||∞) · n · ε64) (HPL-MxP).
func residual(a *luMatrix, b, x, r []float64, normA float64) float64 {
	n := a.n
	row := make([]float64, n)
	rn, xn, bn := 0.0, 0.0, 0.0
	for i := 0; i < n; i++ {
		a.Row(i, row)
		s := 0.0
		for j, v := range row {
			s += float64(v * x[j])
		}
		r[i] = b[i] - s
		rn = math.Max(rn, math.Abs(r[i]))
		xn = math.Max(xn, math.Abs(x[i]))
		bn = math.Max(bn, math.Abs(b[i]))
	}
	return rn / ((float64(normA*xn) + bn) * float64(n) * luUnitRoundoff)
}

// luTimedSteps returns the refinement steps (luRefineResult.Steps) the
// host's time holds: ref's where it was computed (not nil), else those of
// timing_iterations iterations — IR's one each, GMRES's one each and one
// more a cycle of restart.
func luTimedSteps(r LURefinement, ref *luRefineResult) int {
	if ref != nil {
		return ref.Steps
	}
	it := r.TimingIterations
	if r.Method == "gmres" {
		return it + (it+r.Restart-1)/r.Restart
	}
	return it
}

// refine solves Ax = b in FP64: x0 = (LU)⁻¹ b, then classical iterative
// refinement (x += (LU)⁻¹ r) or restarted GMRES right-preconditioned by
// LU, until the scaled residual is below tol, it stagnates (luStagnated),
// becomes non-finite, or maxIt iterations (each one matrix-vector product
// and one LU solve) are spent. It returns an error (errNoConvergence)
// when the result does not pass HPL-MxP's check (below 16); one that
// passes without reaching a stricter tol is no error (Converged false).
func refine(ctx context.Context, a *luMatrix, f *luFactors, method string, restart int, tol float64, maxIt int) (*luRefineResult, error) {
	n := a.n
	b := a.B()
	x := append([]float64(nil), b...)
	f.solve(x)
	r := make([]float64, n)
	normA := a.NormInf()
	res := &luRefineResult{Tolerance: tol}
	sr := residual(a, b, x, r, normA)
	res.History = append(res.History, sr)
	for {
		if sr < tol {
			res.StopReason = luStopConverged
			break
		}
		if math.IsNaN(sr) || math.IsInf(sr, 0) {
			res.StopReason = luStopNonFinite
			break
		}
		if luStagnated(res.History) {
			res.StopReason = luStopStagnated
			break
		}
		if res.Iterations >= maxIt {
			res.StopReason = luStopMaxIterations
			break
		}
		if err := stopped(ctx, "refining the solution"); err != nil {
			return res, err
		}
		switch method {
		case "gmres":
			k := gmresCycle(ctx, a, f, r, x, restart, maxIt-res.Iterations)
			res.Iterations += k
			if k > 0 {
				res.Steps += k + 1
			}
		default:
			d := append([]float64(nil), r...)
			f.solve(d)
			for i := range x {
				x[i] += d[i]
			}
			res.Iterations++
			res.Steps++
		}
		sr = residual(a, b, x, r, normA)
		res.History = append(res.History, sr)
	}
	res.ScaledResidual = sr
	res.Passed = sr < luPassThreshold
	res.Converged = sr < tol
	if !res.Passed {
		return res, fmt.Errorf("%w: scaled residual %.3g after %d %s (stopped: %s; HPL-MxP passes below %d, tolerance %g)", errNoConvergence, sr, res.Iterations, plural(res.Iterations, "iteration", "iterations"), res.StopReason, luPassThreshold, tol)
	}
	return res, nil
}

// plural returns one where n is 1, else many.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// matvec computes y = A·v.
func (m *luMatrix) matvec(v, y []float64) {
	row := make([]float64, m.n)
	for i := 0; i < m.n; i++ {
		m.Row(i, row)
		s := 0.0
		for j, a := range row {
			s += float64(a * v[j])
		}
		y[i] = s
	}
}

// gmresCycle runs one restart cycle of right-preconditioned GMRES on
// A z = r (z = (LU)⁻¹ u), adds z to x and returns the inner steps taken
// (at most min(m, budget)); it stops early when the Arnoldi residual
// estimate drops below 1e-3·||r||, far below what one cycle needs.
func gmresCycle(ctx context.Context, a *luMatrix, f *luFactors, r, x []float64, m, budget int) int {
	n := a.n
	m = min(m, budget)
	beta := norm2(r)
	if beta == 0 {
		return 0
	}
	V := make([][]float64, 0, m+1)
	v0 := make([]float64, n)
	for i := range r {
		v0[i] = r[i] / beta
	}
	V = append(V, v0)
	H := make([][]float64, m+1) // (m+1)×m
	for i := range H {
		H[i] = make([]float64, m)
	}
	cs, sn := make([]float64, m), make([]float64, m)
	g := make([]float64, m+1)
	g[0] = beta
	k := 0
	for k < m && ctx.Err() == nil { // stopped: refine says so
		z := append([]float64(nil), V[k]...)
		f.solve(z)
		w := make([]float64, n)
		a.matvec(z, w)
		for i := 0; i <= k; i++ {
			h := dot(w, V[i])
			H[i][k] = h
			for t := range w {
				w[t] -= float64(h * V[i][t])
			}
		}
		h := norm2(w)
		H[k+1][k] = h
		if h != 0 {
			for t := range w {
				w[t] /= h
			}
		}
		V = append(V, w)
		for i := 0; i < k; i++ {
			t := float64(cs[i]*H[i][k]) + float64(sn[i]*H[i+1][k])
			H[i+1][k] = float64(-sn[i]*H[i][k]) + float64(cs[i]*H[i+1][k])
			H[i][k] = t
		}
		d := hypot(H[k][k], H[k+1][k])
		cs[k], sn[k] = H[k][k]/d, H[k+1][k]/d
		H[k][k] = d
		H[k+1][k] = 0
		g[k+1] = -sn[k] * g[k]
		g[k] = cs[k] * g[k]
		k++
		if math.Abs(g[k]) <= 1e-3*beta || h == 0 {
			break
		}
	}
	y := make([]float64, k)
	for i := k - 1; i >= 0; i-- {
		s := g[i]
		for j := i + 1; j < k; j++ {
			s -= float64(H[i][j] * y[j])
		}
		y[i] = s / H[i][i]
	}
	u := make([]float64, n)
	for i := 0; i < k; i++ {
		for t := range u {
			u[t] += float64(y[i] * V[i][t])
		}
	}
	f.solve(u)
	for t := range x {
		x[t] += u[t]
	}
	return k
}

func dot(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += float64(a[i] * b[i])
	}
	return s
}

func norm2(a []float64) float64 { return math.Sqrt(dot(a, a)) }

// hypot is √(x² + y²) without overflow, as max·√(1 + (min/max)²) — what
// math.Hypot computes on amd64 (its assembly), here on every platform:
// its Go version, which arm64 runs, may fuse the square into the sum
// (TestHypotMatchesMath).
func hypot(x, y float64) float64 {
	p, q := math.Abs(x), math.Abs(y)
	switch {
	case math.IsInf(p, 1) || math.IsInf(q, 1):
		return math.Inf(1)
	case math.IsNaN(p) || math.IsNaN(q):
		return math.NaN()
	}
	if p < q {
		p, q = q, p
	}
	if p == 0 {
		return 0
	}
	q /= p
	return p * math.Sqrt(1+float64(q*q))
}
