package cube

import (
	"fmt"
	"math"
	"sync"

	"github.com/davinci-sim/davinci-sim/fp"
)

// Element classes of a decoded input.
const (
	clsFinite uint8 = iota
	clsInf
	clsNaN
)

// dec is one decoded input element: value = sig · 2^(exp − frac), where
// frac is the format's number of fraction bits (fp.Format.MantBits), sig is
// the signed integer significand (0 for a zero) and exp is the element's
// nominal exponent (fp emin for subnormals, so that a product's exponent is
// e_a + e_b with a significand in [0,4) as the NVIDIA models require).
type dec struct {
	sig int32
	exp int16
	neg bool  // sign (meaningful for zeros and infinities too)
	cls uint8 // clsFinite, clsInf, clsNaN
}

// decodeValue decodes the exact value v of a format with frac fraction bits
// and minimum normal exponent emin. Integers (frac < 0) are not handled here.
func decodeValue(v float64, frac, emin int) dec {
	switch {
	case math.IsNaN(v):
		return dec{cls: clsNaN, neg: math.Signbit(v)}
	case math.IsInf(v, 0):
		return dec{cls: clsInf, neg: v < 0}
	case v == 0:
		return dec{neg: math.Signbit(v)}
	}
	_, k := math.Frexp(v)
	e := k - 1
	if e < emin {
		e = emin
	}
	s := math.Ldexp(v, frac-e) // exact integer
	return dec{sig: int32(s), exp: int16(e), neg: v < 0}
}

// fmtInfo holds per-format decoding parameters.
type fmtInfo struct {
	frac, emin int
	tf32       bool  // TF32 in an FP32 container
	table      []dec // for 8- and 16-bit formats: indexed by the pattern
}

var (
	infoOnce sync.Once
	infos    [8]fmtInfo
)

func formatInfo(f fp.Format) (*fmtInfo, error) {
	infoOnce.Do(func() {
		for _, g := range []fp.Format{fp.FP32, fp.FP16, fp.BF16, fp.TF32, fp.E4M3, fp.E5M2} {
			in := &infos[g]
			in.frac = g.MantBits()
			in.emin = 1 - g.Bias()
			in.tf32 = g == fp.TF32
			if g.Bits() <= 16 {
				n := 1 << g.Bits()
				in.table = make([]dec, n)
				for p := 0; p < n; p++ {
					in.table[p] = decodeValue(fp.ToFloat64(uint32(p), g), in.frac, in.emin)
				}
			}
		}
	})
	if int(f) >= len(infos) || infos[f].frac == 0 {
		return nil, fmt.Errorf("cube: input format %v is not a floating-point matrix-unit input (want fp16, bf16, tf32, e4m3, e5m2 or fp32)", f)
	}
	return &infos[f], nil
}

// decode decodes one pattern of the format described by in.
func (in *fmtInfo) decode(b uint32) dec {
	if in.table != nil {
		return in.table[b&uint32(len(in.table)-1)]
	}
	if in.tf32 { // in an FP32 container: the low 13 bits are ignored
		b &^= 1<<13 - 1
		d := decodeF32(b)
		d.sig >>= 13
		return d
	}
	return decodeF32(b)
}

// decodeF32 decodes an FP32 pattern (23 fraction bits, emin −126).
func decodeF32(b uint32) dec {
	neg := b>>31 != 0
	e := int(b>>23) & 0xff
	m := int32(b & 0x7fffff)
	switch e {
	case 0xff:
		if m != 0 {
			return dec{cls: clsNaN, neg: neg}
		}
		return dec{cls: clsInf, neg: neg}
	case 0:
		if neg {
			m = -m
		}
		return dec{sig: m, exp: -126, neg: neg}
	}
	m |= 1 << 23
	if neg {
		m = -m
	}
	return dec{sig: m, exp: int16(e - 127), neg: neg}
}
