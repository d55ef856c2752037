// Package accuracy computes error metrics of a computed result against an
// FP64 reference, and provides the FP64 reference GEMM and the CPU FP32
// (SGEMM) baseline the simulator's results are compared with.
package accuracy

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
)

// MaxBits caps Metrics.Bits when the result is exact (RelFro = 0).
const MaxBits = 64

// Metrics are the error metrics of a result x against a reference.
//
// Zero references: an element whose reference is exactly 0 (±0) has no
// finite relative error unless its result is 0 too (then its error is 0).
// ZeroRef counts those elements and ZeroRefDiffers the ones whose result
// is not 0 (NaN included): each of them makes MaxRel +Inf — its relative
// error is infinite —, MaxErr 1 and, if nothing else does, RelFro finite.
// MRED averages over the other N − ZeroRef elements only, and is NaN when
// there are none (every reference 0, or no element): LE-GEMM's Eq. 20
// divides by every element (M·N), which is the same where no reference is
// 0 and undefined (0/0, x/0) where one is.
//
// Non-finite values: an element whose result equals the reference exactly
// (including the same infinity, or NaN where the reference is NaN) has zero
// error. Any other element involving NaN or ±Inf has infinite error, so
// RelFro and MaxRel become +Inf, MRED too where the reference is not 0
// (where it is, the element is one of ZeroRefDiffers), while MaxErr —
// which is bounded by 1 by construction — becomes 1. Only finite reference
// elements enter ‖ref‖. (A difference of two finite values beyond the
// float64 range, |a−b| > MaxFloat64, also counts as infinite in RelFro,
// MaxRel and MRED.)
//
// Exact results: RelFro is 0 exactly when every element equals its
// reference (as above), and Bits is then MaxBits (64); Bits is MaxBits too
// for a RelFro below 2^-64 that is not 0, so RelFro = 0, not Bits = 64,
// tells an exact result.
//
// Metrics marshal to JSON with non-finite values written as the strings
// "+Inf", "-Inf" and "NaN" (encoding/json rejects them as numbers), and
// unmarshal from the same form.
type Metrics struct {
	RelFro float64 `json:"rel_fro"` // ‖ref − x‖_F / ‖ref‖_F (SGEMM-cube Eq. 13); 0 if both norms are 0, +Inf if only ‖ref‖ is
	MaxRel float64 `json:"max_rel"` // max_i |ref_i − x_i| / |ref_i| over every element: +Inf where a ref_i = 0 has x_i ≠ 0 (ZeroRefDiffers), 0 for none
	MRED   float64 `json:"mred"`    // mean relative error distance: mean_i |ref_i − x_i| / |ref_i| over the N − ZeroRef elements with ref_i ≠ 0; NaN if there are none
	MaxErr float64 `json:"max_err"` // LE-GEMM Eq. 19 symmetric error: max_i |a−b| / (|a|+|b|), 0 when both are 0
	Bits   float64 `json:"bits"`    // −log2(RelFro) clamped to [0, MaxBits] (MaxBits when RelFro = 0)

	N         int `json:"n"`          // number of elements compared
	NonFinite int `json:"non_finite"` // elements of the result that are NaN or ±Inf

	ZeroRef        int `json:"zero_ref"`         // elements whose reference is 0 (left out of MRED)
	ZeroRefDiffers int `json:"zero_ref_differs"` // of them, those whose result is not 0 (MaxRel +Inf)
}

// ErrLength reports reference and result slices of different lengths.
var ErrLength = errors.New("accuracy: reference and result have different lengths")

// Compare returns the metrics of got against ref, or ErrLength.
func Compare(ref, got []float64) (Metrics, error) {
	if len(ref) != len(got) {
		return failed(), fmt.Errorf("%w (%d vs %d)", ErrLength, len(ref), len(got))
	}
	return compare(len(ref), func(i int) (float64, float64) { return ref[i], got[i] }), nil
}

// Compare64 returns the metrics of got against ref. If the lengths differ
// every error metric is +Inf (MaxErr 1), Bits is 0 and N is −1; use Compare
// to get an error instead.
func Compare64(ref []float64, got []float64) Metrics {
	m, _ := Compare(ref, got)
	return m
}

// Compare32 is Compare64 for a float32 result (widened exactly).
func Compare32(ref []float64, got []float32) Metrics {
	if len(ref) != len(got) {
		return failed()
	}
	return compare(len(ref), func(i int) (float64, float64) { return ref[i], float64(got[i]) })
}

// failed returns the metrics reported for a length mismatch.
func failed() Metrics {
	inf := math.Inf(1)
	return Metrics{RelFro: inf, MaxRel: inf, MRED: inf, MaxErr: 1, Bits: 0, N: -1}
}

// norm2 accumulates a Euclidean norm without overflow or underflow
// (scaled sum of squares, as in the reference BLAS dnrm2).
type norm2 struct{ scale, ssq float64 }

func (n *norm2) add(v float64) {
	if v == 0 {
		return
	}
	if v > n.scale {
		r := n.scale / v
		n.ssq = 1 + float64(n.ssq*r*r)
		n.scale = v
	} else {
		r := v / n.scale
		n.ssq += float64(r * r)
	}
}

func (n *norm2) value() float64 { return n.scale * math.Sqrt(n.ssq) }

// ratio returns n / d without overflow where the norms themselves would
// (entries near math.MaxFloat64).
func (n *norm2) ratio(d *norm2) float64 {
	return n.scale / d.scale * math.Sqrt(n.ssq/d.ssq)
}

func compare(n int, at func(int) (float64, float64)) Metrics {
	var acc Accumulator
	for i := 0; i < n; i++ {
		acc.Add(at(i))
	}
	return acc.Metrics()
}

// Accumulator gathers the metrics of results against their references one
// element at a time (Add), for results too large to hold twice: Metrics
// returns what Compare would for the same pairs. The zero value is empty.
type Accumulator struct {
	dn, rn norm2 // norms of the differences and of the reference
	m      Metrics
	infErr bool    // an element's error is infinite: RelFro and MaxRel
	infRel bool    // ... one with a nonzero reference: MRED too
	sumRel float64 // over the N − ZeroRef elements with a nonzero reference
}

// Add adds one element: reference a, result b.
func (c *Accumulator) Add(a, b float64) {
	m := &c.m
	m.N++
	if math.IsNaN(b) || math.IsInf(b, 0) {
		m.NonFinite++
	}
	finiteA := !math.IsNaN(a) && !math.IsInf(a, 0)
	if finiteA {
		c.rn.add(math.Abs(a))
	}
	if a == 0 {
		m.ZeroRef++
		if b != 0 {
			m.ZeroRefDiffers++
		}
	}
	if a == b || (a != a && b != b) {
		return
	}
	if !finiteA || math.IsNaN(b) || math.IsInf(b, 0) {
		// Mismatch involving a non-finite value: infinitely wrong.
		c.infErr = true
		c.infRel = c.infRel || a != 0
		m.MaxErr = 1
		return
	}
	d := math.Abs(a - b)
	if math.IsInf(d, 0) {
		c.infErr = true
		c.infRel = c.infRel || a != 0
	}
	c.dn.add(d)
	sym := d / (math.Abs(a) + math.Abs(b))
	if math.IsInf(d, 0) || math.IsInf(math.Abs(a)+math.Abs(b), 0) {
		sym = math.Abs(float64(a/2)-float64(b/2)) / (float64(math.Abs(a)/2) + float64(math.Abs(b)/2)) // avoid overflow (x/2 compiles to x·0.5: the conversions keep it from fusing)
	}
	if sym > m.MaxErr {
		m.MaxErr = sym
	}
	if a != 0 {
		rel := d / math.Abs(a)
		c.sumRel += rel
		if rel > m.MaxRel {
			m.MaxRel = rel
		}
	}
}

// Metrics returns the metrics of the elements added so far.
func (c *Accumulator) Metrics() Metrics {
	m := c.m
	inf := math.Inf(1)
	switch {
	case c.infRel:
		m.MRED = inf
	case m.N > m.ZeroRef:
		m.MRED = c.sumRel / float64(m.N-m.ZeroRef)
	default:
		m.MRED = math.NaN() // (no nonzero reference to be relative to)
	}
	if c.infErr || m.ZeroRefDiffers > 0 {
		m.MaxRel = inf
	}
	if c.infErr {
		m.RelFro, m.Bits = inf, 0
		return m
	}
	d, r := c.dn.value(), c.rn.value()
	switch {
	case d == 0:
		m.RelFro = 0
	case r == 0:
		m.RelFro = inf
	case math.IsInf(r, 0) || math.IsInf(d, 0):
		m.RelFro = c.dn.ratio(&c.rn) // the norms overflow, their ratio need not
	default:
		m.RelFro = d / r
	}
	m.Bits = BitsOf(m.RelFro)
	return m
}

// BitsOf returns −log2(rel) clamped to [0, MaxBits] (MaxBits for 0, 0 for
// NaN or rel ≥ 1): the number of correct bits a relative error stands for.
func BitsOf(rel float64) float64 {
	switch {
	case rel == 0:
		return MaxBits
	case !(rel < 1): // also NaN, +Inf
		return 0
	}
	return math.Min(MaxBits, -math.Log2(rel))
}

// JSONFloat is a float64 that marshals to JSON as a number, or — ±Inf and
// NaN, which JSON has no numbers for — as the strings "+Inf", "-Inf" and
// "NaN"; it unmarshals from either form. Reports use it so that a result
// that overflowed is written as such instead of failing the whole report.
type JSONFloat float64

// MarshalJSON implements json.Marshaler.
func (f JSONFloat) MarshalJSON() ([]byte, error) {
	v := float64(f)
	switch {
	case math.IsNaN(v):
		return []byte(`"NaN"`), nil
	case math.IsInf(v, 1):
		return []byte(`"+Inf"`), nil
	case math.IsInf(v, -1):
		return []byte(`"-Inf"`), nil
	}
	return json.Marshal(v)
}

// UnmarshalJSON implements json.Unmarshaler.
func (f *JSONFloat) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		switch s {
		case "NaN":
			*f = JSONFloat(math.NaN())
		case "+Inf", "Inf", "inf", "+inf":
			*f = JSONFloat(math.Inf(1))
		case "-Inf", "-inf":
			*f = JSONFloat(math.Inf(-1))
		default:
			return fmt.Errorf("accuracy: bad number %q", s)
		}
		return nil
	}
	var v float64
	if err := json.Unmarshal(b, &v); err != nil {
		return fmt.Errorf("accuracy: bad number %s: %w", b, err)
	}
	*f = JSONFloat(v)
	return nil
}

type metricsJSON struct {
	RelFro    JSONFloat `json:"rel_fro"`
	MaxRel    JSONFloat `json:"max_rel"`
	MRED      JSONFloat `json:"mred"`
	MaxErr    JSONFloat `json:"max_err"`
	Bits      JSONFloat `json:"bits"`
	N         int       `json:"n"`
	NonFinite int       `json:"non_finite"`
	ZeroRef   int       `json:"zero_ref"`
	ZeroDiff  int       `json:"zero_ref_differs"`
}

// MarshalJSON writes the metrics, with non-finite values as strings.
func (m Metrics) MarshalJSON() ([]byte, error) {
	return json.Marshal(metricsJSON{JSONFloat(m.RelFro), JSONFloat(m.MaxRel), JSONFloat(m.MRED),
		JSONFloat(m.MaxErr), JSONFloat(m.Bits), m.N, m.NonFinite, m.ZeroRef, m.ZeroRefDiffers})
}

// UnmarshalJSON reads metrics written by MarshalJSON (plain numbers too).
func (m *Metrics) UnmarshalJSON(b []byte) error {
	var j metricsJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*m = Metrics{float64(j.RelFro), float64(j.MaxRel), float64(j.MRED), float64(j.MaxErr), float64(j.Bits), j.N, j.NonFinite, j.ZeroRef, j.ZeroDiff}
	return nil
}

// String formats the metrics on one line.
func (m Metrics) String() string {
	return fmt.Sprintf("rel_fro=%.3e max_rel=%.3e mred=%.3e max_err=%.3e bits=%.2f", m.RelFro, m.MaxRel, m.MRED, m.MaxErr, m.Bits)
}
