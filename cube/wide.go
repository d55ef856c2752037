package cube

import (
	"math"
	"math/bits"
)

// wideLSB is the exponent of bit 0 of the wide accumulator. Products of two
// FP32 inputs have their least significant bit at 2^−298 at the lowest; the
// largest term (a BF16/FP32 product) stays below 2^257, so 10 limbs (640
// bits, sign included) hold any sum of up to 2^60 terms exactly.
const (
	wideLSB   = -320
	wideLimbs = 10
)

// wide is a fixed-point two's complement accumulator covering every term
// the models produce (a small Kulisch accumulator). It lives on the stack;
// it is used for the exact-sum models when the terms span more than an
// int64 can hold, which is rare for real data.
type wide struct{ l [wideLimbs]uint64 }

// add adds (neg ? −1 : 1) · mag · 2^lsb, with mag < 2^63.
func (w *wide) add(mag uint64, lsb int, neg bool) {
	if mag == 0 {
		return
	}
	pos := lsb - wideLSB
	i := pos >> 6
	off := uint(pos & 63)
	lo := mag << off
	var hi uint64
	if off != 0 {
		hi = mag >> (64 - off)
	}
	if !neg {
		var c uint64
		w.l[i], c = bits.Add64(w.l[i], lo, 0)
		if i++; i == wideLimbs {
			return
		}
		w.l[i], c = bits.Add64(w.l[i], hi, c)
		for i++; c != 0 && i < wideLimbs; i++ {
			w.l[i], c = bits.Add64(w.l[i], 0, c)
		}
		return
	}
	var b uint64
	w.l[i], b = bits.Sub64(w.l[i], lo, 0)
	if i++; i == wideLimbs {
		return
	}
	w.l[i], b = bits.Sub64(w.l[i], hi, b)
	for i++; b != 0 && i < wideLimbs; i++ {
		w.l[i], b = bits.Sub64(w.l[i], 0, b)
	}
}

// float returns the accumulated value rounded to odd at 53 bits (exact when
// it fits), as a float64.
func (w *wide) float() float64 {
	neg := w.l[wideLimbs-1]>>63 != 0
	l := w.l
	if neg { // negate the two's complement value
		var b uint64
		for i := range l {
			l[i], b = bits.Sub64(0, l[i], b)
		}
	}
	top := -1
	for i := wideLimbs - 1; i >= 0; i-- {
		if l[i] != 0 {
			top = i
			break
		}
	}
	if top < 0 {
		return 0
	}
	// Take the 64 bits starting at the leading one, then fold the rest into
	// a sticky bit.
	lz := uint(bits.LeadingZeros64(l[top]))
	hi := l[top] << lz
	sticky := false
	if top > 0 {
		if lz != 0 {
			hi |= l[top-1] >> (64 - lz)
		}
		sticky = l[top-1]<<lz != 0
		for i := top - 2; i >= 0 && !sticky; i-- {
			sticky = l[i] != 0
		}
	}
	u := top*64 - int(lz) + wideLSB // exponent of hi's bit 0
	// Round to odd at 53 bits.
	lost := hi & (1<<11 - 1)
	m := hi >> 11
	if lost != 0 || sticky {
		m |= 1
	}
	x := math.Ldexp(float64(m), u+11)
	if neg {
		x = -x
	}
	return x
}
