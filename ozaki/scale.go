package ozaki

import (
	"math"

	"github.com/davinci-sim/davinci-sim/stopwork"
)

// BumpThreshold is the significand (μ·2^−E(μ), in [1,2)) from which a row's
// or column's scale exponent σ is raised by one: 1.984375 = 2·127/128.
const BumpThreshold = 1.984375

// Scale is the scale of one row of A or one column of B (package doc, §1).
type Scale struct {
	// Sigma is σ: every entry x of the line satisfies |x|·2^−σ < 127/128, and
	// digit t of x weighs 2^(σ−7−8(t−1)). 0 for a zero line.
	Sigma int
	// Exp is the exponent the ESC uses for the line, σ − 1 (so a bumped line
	// counts one more padding bit); NegInf for a zero line.
	Exp int
	// Bumped reports that σ = E(μ) + 2 because μ·2^−E(μ) ≥ BumpThreshold.
	Bumped bool
	// Zero reports that the line has no nonzero finite entry (μ = 0): all its
	// digits are 0 and its outputs are exactly α·0 + β·C0.
	Zero bool
}

// scaleOf returns the Scale of a line whose largest finite magnitude is mu.
func scaleOf(mu float64) Scale {
	if mu == 0 {
		return Scale{Exp: NegInf, Zero: true}
	}
	f, e := math.Frexp(mu) // mu = f·2^e, f ∈ [0.5,1): E(mu) = e−1, significand 2f
	E := e - 1
	s := Scale{Sigma: E + 1}
	if 2*f >= BumpThreshold {
		s.Sigma++
		s.Bumped = true
	}
	s.Exp = s.Sigma - 1
	return s
}

// finiteAbs returns |x| for a finite x and 0 for ±Inf and NaN (which the
// scales ignore; see the package doc on non-finite inputs).
func finiteAbs(x float64) float64 {
	ax := math.Abs(x)
	if ax > math.MaxFloat64 || ax != ax {
		return 0
	}
	return ax
}

// ScaleRows returns the Scale of each row of the row-major rows×cols matrix
// a. μ is the largest finite |a[i,l]|; non-finite entries are ignored.
func ScaleRows(a []float64, rows, cols int) []Scale { return scalesOf(RowMax(a, rows, cols)) }

// ScaleCols returns the Scale of each column of the row-major rows×cols
// matrix b. μ is the largest finite |b[l,j]|; non-finite entries are ignored.
func ScaleCols(b []float64, rows, cols int) []Scale { return scalesOf(ColMax(b, rows, cols)) }

func scalesOf(mu []float64) []Scale {
	out := make([]Scale, len(mu))
	for i, v := range mu {
		out[i] = scaleOf(v)
	}
	return out
}

// RowMax returns the largest finite |a[i,l]| of each row of the row-major
// rows×cols matrix a (0 for a row without one): the line maximum every
// Ozaki scheme scales by (package crt too).
func RowMax(a []float64, rows, cols int) []float64 {
	mu, _ := RowMaxUntil(a, rows, cols, nil)
	return mu
}

// RowMaxUntil is RowMax asking stop (nil: never) every stopwork.Every elements
// or so (4096² took ~0.1 s under load): nil and false once it says true.
func RowMaxUntil(a []float64, rows, cols int, stop func() bool) ([]float64, bool) {
	mu := make([]float64, rows)
	st := stopwork.New(stop)
	for i := range mu {
		if st.StopBefore(cols) {
			return nil, false
		}
		for _, x := range a[i*cols : i*cols+cols] {
			if ax := finiteAbs(x); ax > mu[i] {
				mu[i] = ax
			}
		}
	}
	return mu, true
}

// LineMaxima returns the row maxima of the row-major m×k matrix a and the
// column maxima of the row-major k×n matrix b (RowMax, ColMax), the
// maxima every Ozaki scheme's plan scales by (package crt's too), asking
// stop (nil: never) as RowMaxUntil does: a *StoppedError in "the scales"
// once it says true.
func LineMaxima(a, b []float64, m, k, n int, stop func() bool) (muA, muB []float64, err error) {
	muA, ok := RowMaxUntil(a, m, k, stop)
	if ok {
		muB, ok = ColMaxUntil(b, k, n, stop)
	}
	if !ok {
		return nil, nil, &StoppedError{Phase: "the scales"}
	}
	return muA, muB, nil
}

// ColMax returns the largest finite |b[l,j]| of each column of the
// row-major rows×cols matrix b (0 for a column without one).
func ColMax(b []float64, rows, cols int) []float64 {
	mu, _ := ColMaxUntil(b, rows, cols, nil)
	return mu
}

// ColMaxUntil is ColMax asking stop as RowMaxUntil does.
func ColMaxUntil(b []float64, rows, cols int, stop func() bool) ([]float64, bool) {
	mu := make([]float64, cols)
	st := stopwork.New(stop)
	for l := 0; l < rows; l++ {
		if st.StopBefore(cols) {
			return nil, false
		}
		for j, x := range b[l*cols : l*cols+cols] {
			if ax := finiteAbs(x); ax > mu[j] {
				mu[j] = ax
			}
		}
	}
	return mu, true
}
