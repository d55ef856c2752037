package ozaki

import (
	"errors"
	"fmt"
	"math"
)

// Limits of the mantissa-bit settings and of the slice count.
const (
	MinBits   = 1   // smallest accepted bit setting
	MaxBits   = 200 // largest accepted bit setting (the paper's "up to 200 mantissa bits")
	MaxSlices = 26  // SlicesFor(MaxBits)
)

// ErrBits reports a bit setting outside [MinBits, MaxBits].
var ErrBits = errors.New("ozaki: bits outside [1, 200]")

// SlicesFor returns the number of INT8 slices whose capacity 8s − 1 holds
// bits mantissa bits: s = ceil((bits+1)/8), so 53 → 7, 55 → 7, 56 → 8,
// 200 → 26. bits must be in [MinBits, MaxBits]; otherwise it returns an
// error wrapping ErrBits.
func SlicesFor(bits int) (int, error) {
	if bits < MinBits || bits > MaxBits {
		return 0, fmt.Errorf("%w: %d", ErrBits, bits)
	}
	return (bits + 1 + 7) / 8, nil
}

// Capacity returns 8s − 1, the number of mantissa bits (relative to the
// scale exponent) that s balanced INT8 digits hold.
func Capacity(s int) int { return 8*s - 1 }

// fixedOf returns N = floor(x·2^(8s−1−σ)), the aligned fixed-point value of x,
// as an int64 v and a byte offset off with N = v·256^off. It needs |m| < 2^53
// (true for every float64) and returns (0, 0) for 0 and non-finite x.
func fixedOf(x float64, sigma, s int) (v int64, off int) {
	if x == 0 || math.IsInf(x, 0) || math.IsNaN(x) {
		return 0, 0
	}
	m, q := split(x)
	sh := q + 8*s - 1 - sigma
	switch {
	case sh >= 0:
		return m << (sh % 8), sh / 8 // |m| < 2^53, so |m<<7| < 2^60
	case -sh >= 63:
		if m < 0 {
			return -1, 0 // floor of a negative value above −1
		}
		return 0, 0
	default:
		return m >> -sh, 0 // arithmetic shift = floor division by 2^−sh
	}
}

// Digit returns the balanced digit ((v+128) mod 256) − 128 of v, which is
// the low byte of v read as an int8 (two's-complement remap: a u8 digit in
// [128,255] is stored as digit − 256 and the next digit gets a carry).
func Digit(v int64) int8 { return int8(v) }

// SliceValue writes the s balanced digits of x for a line of scale exponent
// sigma into d[0:s], most significant first (d[0] is digit 1):
// N = floor(x·2^(8s−1−σ)) = Σ_t d_t·256^(s−t), d_t ∈ [−128,127], so that
// x ≈ 2^(σ−7)·Σ_t d_t·2^(−8(t−1)) with 0 ≤ x − that < 2^(σ+1−8s).
// Zero and non-finite x give all-zero digits. It panics if x does not fit
// the scale (|x|·2^−σ ≥ 127/128 can overflow the digits), which cannot
// happen with the line's own Scale.
func SliceValue(x float64, sigma, s int, d []int8) {
	d = d[:s]
	clear(d)
	v, off := fixedOf(x, sigma, s)
	p := off // digit position from the bottom (0 = digit s)
	for ; p < s && v != 0; p++ {
		dg := int8(v)
		d[s-1-p] = dg
		v = (v - int64(dg)) >> 8
	}
	if v != 0 {
		panic(fmt.Sprintf("ozaki: %v does not fit %d digits at scale 2^%d", x, s, sigma))
	}
}

func checkSlices(s int) {
	if s < 1 || s > MaxSlices {
		panic(fmt.Sprintf("ozaki: slice count %d outside [1, %d]", s, MaxSlices))
	}
}

// SliceRows cuts the row-major rows×cols matrix a into s planes of balanced
// INT8 digits using the row scales (from ScaleRows): planes[t-1][i*cols+l]
// is digit t of a[i,l]. s must be in [1, MaxSlices].
func SliceRows(a []float64, rows, cols, s int, scales []Scale) [][]int8 {
	return sliceRows(a, rows, cols, s, scales, nil)
}

// sliceRows is SliceRows asking stop (nil: never) row by row: nil once it
// says true.
func sliceRows(a []float64, rows, cols, s int, scales []Scale, stop func() bool) [][]int8 {
	checkSlices(s)
	planes := newPlanes(s, rows*cols)
	var d [MaxSlices]int8
	for i := 0; i < rows; i++ {
		if stop != nil && stop() {
			return nil
		}
		sig := scales[i].Sigma
		for l := 0; l < cols; l++ {
			idx := i*cols + l
			if a[idx] == 0 {
				continue
			}
			SliceValue(a[idx], sig, s, d[:])
			for t := 0; t < s; t++ {
				planes[t][idx] = d[t]
			}
		}
	}
	return planes
}

// SliceCols cuts the row-major rows×cols matrix b into s planes of balanced
// INT8 digits using the column scales (from ScaleCols): planes[u-1][l*cols+j]
// is digit u of b[l,j]; the planes stay row-major like b. s must be in
// [1, MaxSlices].
func SliceCols(b []float64, rows, cols, s int, scales []Scale) [][]int8 {
	return sliceCols(b, rows, cols, s, scales, nil)
}

// sliceCols is SliceCols asking stop (nil: never) row by row: nil once it
// says true.
func sliceCols(b []float64, rows, cols, s int, scales []Scale, stop func() bool) [][]int8 {
	checkSlices(s)
	planes := newPlanes(s, rows*cols)
	var d [MaxSlices]int8
	for l := 0; l < rows; l++ {
		if stop != nil && stop() {
			return nil
		}
		for j := 0; j < cols; j++ {
			idx := l*cols + j
			if b[idx] == 0 {
				continue
			}
			SliceValue(b[idx], scales[j].Sigma, s, d[:])
			for t := 0; t < s; t++ {
				planes[t][idx] = d[t]
			}
		}
	}
	return planes
}

func newPlanes(s, size int) [][]int8 {
	buf := make([]int8, s*size)
	planes := make([][]int8, s)
	for t := range planes {
		planes[t] = buf[t*size : (t+1)*size : (t+1)*size]
	}
	return planes
}
