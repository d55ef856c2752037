package cube

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/bits"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/davinci-sim/davinci-sim/fp"
)

// FuzzMMADFastPaths: every fast MMAD path (sequential RNE and RZ, exact
// and truncated block FMA, pairwise, truncated late c), with the AVX-512
// tiles and with the Go tiles, gives the reference path's bits
// (setFast(false): runMMAD → kernel.dot, the golden model) for every
// element of C, the layouts' padding included.
//
// The input is decoded by decodeFuzzCase: a header picks the model (a
// preset, or a custom Model built for one fast kind, whose fast kind is
// asserted), the input format, the entry (MMADF16/MMADBF16 or the uint32
// MMAD), the layouts, init, a forced split among goroutines, the shape and
// the hazards; then three bytes per element of A and B and four per
// element of C choose each value's class. Past the end of the input the
// bytes come from a PRNG seeded with the input's hash, so short inputs
// still fill whole tiles.
func FuzzMMADFastPaths(f *testing.F) {
	for _, s := range fuzzMMADSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fc, err := decodeFuzzCase(data)
		if err != nil {
			t.Fatal(err)
		}
		fc.check(t)
	})
}

// fuzzCase is one decoded input of FuzzMMADFastPaths.
type fuzzCase struct {
	model      Model
	want       fastKind // the fast path the model takes (asserted)
	in         fp.Format
	general    bool // the uint32 MMAD entry, else MMADF16 / MMADBF16
	high       bool // general entry: garbage in the unused high 16 bits of A and B
	la, lb, lc Layout
	init       bool
	split      bool // parallelMACs = 1: the rows shared among goroutines
	mm, k, n   int
	a, b       []uint16 // row-major m×k and k×n
	c          []uint32 // row-major m×n (FP32 patterns)
	padSeed    uint64   // the layouts' padding and the high bits
}

// fuzzKindNames names the fast kinds in failure reports.
var fuzzKindNames = map[fastKind]string{
	fastNone: "none", fastSeqRNE: "seq-rne", fastSeqRZ: "seq-rz", fastExactBlock: "exact-block",
	fastTruncBlock: "trunc-block", fastPairwise: "pairwise", fastLateC: "late-c",
}

// fuzzPresets are the presets with FP16/BF16 fast paths.
var fuzzPresets = []string{"v100", "t4", "a100", "ada", "h100", "b200", "mi100", "mi210", "mi300",
	"fp32-rne", "fp32-rz", "ascend-910a", "ascend-910b3"}

// fuzzReader hands out the input's bytes, then a PRNG's.
type fuzzReader struct {
	data []byte
	rng  *rand.Rand
}

func (r *fuzzReader) next() byte {
	if len(r.data) > 0 {
		b := r.data[0]
		r.data = r.data[1:]
		return b
	}
	return byte(r.rng.Uint32())
}

// fuzzMaxF is the largest F the truncated paths take for block length L
// (truncFits).
func fuzzMaxF(L int) int { return 51 - bits.Len(uint(L+1)) }

// fuzzF picks F ≤ fuzzMaxF(L) from a byte: values that matter for the
// presets and the limits, or any.
func fuzzF(b byte, L int) int {
	mx := fuzzMaxF(L)
	var F int
	if b < 128 {
		F = []int{0, 1, 2, 3, 7, 13, 22, 23, 24, 25, 26, 30, 40, mx - 1, mx}[int(b)%15]
	} else {
		F = int(b) % (mx + 1)
	}
	return min(max(F, 0), mx)
}

func fuzzRound(b byte) fp.Rounding {
	if b&1 == 0 {
		return fp.RNE
	}
	return fp.RZ
}

// fuzzModel decodes the model (header bytes 0–2) for input format in and
// returns it with the fast kind it must take. p1 picks the preset or L;
// bit 0 of p2 the rounding (RNE, RZ) or, for pairwise, FTZ (on when
// clear); its other bits F (bit 7 set: any F that fits, else a listed one).
func fuzzModel(sel, p1, p2 byte, in fp.Format) (Model, fastKind, error) {
	switch sel % 6 {
	case 0: // a preset
		var names []string
		for _, name := range fuzzPresets {
			if m, err := Preset(name); err == nil && hasFormat(m, in) {
				names = append(names, name)
			}
		}
		m, err := Preset(names[int(p1)%len(names)])
		if err != nil {
			return m, fastNone, err
		}
		k, err := m.kernel(in, fp.FP32)
		if err != nil {
			return m, fastNone, err
		}
		return m, fastKindFor(k, in), nil
	case 1: // sequential FMA chain
		r := fuzzRound(p2)
		want := fastSeqRNE
		if r == fp.RZ {
			want = fastSeqRZ
		}
		return Model{Name: fmt.Sprintf("seq-%v", r), Kind: Sequential, RoundFP32: r, RoundFP16: r, Formats: half(1, Exact)}, want, nil
	case 2: // block FMA, exact sum
		L := []int{1, 2, 3, 4, 5, 8, 16, 32, 64}[int(p1)%9]
		r := fuzzRound(p2)
		return Model{Name: fmt.Sprintf("exact-L%d-%v", L, r), Kind: BlockFMA, RoundFP32: r, RoundFP16: fp.RNE,
			Formats: half(L, Exact)}, fastExactBlock, nil
	case 3: // block FMA, truncated
		L := []int{1, 2, 3, 4, 5, 7, 8, 16, 32, 64}[int(p1)%10]
		r := fuzzRound(p2)
		F := fuzzF(p2>>1|p2&0x80, L)
		return Model{Name: fmt.Sprintf("trunc-L%d-F%d-%v", L, F, r), Kind: BlockFMA, RoundFP32: r, RoundFP16: fp.RNE,
			Formats: half(L, F)}, fastTruncBlock, nil
	case 4: // CDNA2 pairwise
		L := []int{1, 2, 4, 8, 16, 64, 3, 5, 32}[int(p1)%9]
		ftz := p2&1 == 0
		return Model{Name: fmt.Sprintf("pair-L%d-ftz%v", L, ftz), Kind: Pairwise, RoundFP32: fp.RNE, RoundFP16: fp.RNE,
			FlushSubnormals: ftz, Formats: half(L, 0)}, fastPairwise, nil
	default: // CDNA3 truncated late c
		L := []int{1, 2, 3, 4, 8, 16, 32, 64, 5}[int(p1)%9]
		r := fuzzRound(p2)
		F := fuzzF(p2>>1|p2&0x80, L)
		return Model{Name: fmt.Sprintf("latec-L%d-F%d-%v", L, F, r), Kind: TruncatedLateC, RoundFP32: r, RoundFP16: fp.RNE,
			Formats: half(L, F)}, fastLateC, nil
	}
}

// fuzzFmt describes a 16-bit input format for the element generator.
type fuzzFmt struct {
	frac, bias int
	maxField   uint16 // exponent field of Inf/NaN
}

func fuzzFormat(in fp.Format) fuzzFmt {
	if in == fp.FP16 {
		return fuzzFmt{frac: 10, bias: 15, maxField: 0x1f}
	}
	return fuzzFmt{frac: 7, bias: 127, maxField: 0xff}
}

// pat returns the pattern of (−1)^sign·1.mant·2^e: a normal number for e in
// [emin, emax] (e above is clamped to emax), a subnormal (at least the
// smallest one) below emin.
func (g fuzzFmt) pat(sign bool, e int, mant uint32) uint16 {
	var s uint16
	if sign {
		s = 0x8000
	}
	mant &= 1<<g.frac - 1
	emin, emax := 1-g.bias, g.bias
	if e > emax {
		e = emax
	}
	if e < emin {
		sh := emin - e
		m := uint32(0)
		if sh <= g.frac {
			m = (1<<g.frac | mant) >> sh
		}
		return s | uint16(max(m, 1))
	}
	return s | uint16(e+g.bias)<<g.frac | uint16(mant)
}

// baseExp decodes a matrix's base exponent: values that put products next
// to the FP32 limits (BF16: 2^−126 and 2^128 at bases ±63/64), the
// format's limits, or any exponent of the format.
func (g fuzzFmt) baseExp(b byte) int {
	if b >= 128 {
		return int(b)%(2*g.bias) + 1 - g.bias
	}
	if g.frac == 10 {
		return []int{0, -1, 1, -7, -14, -13, 15, 14, 8, -10, 4, 12, -24, 0, -5, 5}[b%16]
	}
	return []int{0, -63, -64, -62, -70, -75, 63, 64, 62, 127, 120, -126, -100, 40, -40, 0}[b%16]
}

// elem decodes one A or B element from three bytes. prev is the previous
// element along k (hasPrev: there is one), base the matrix's base
// exponent, special the density of Inf and NaN (0: none, 1: rare, 2:
// frequent), level the hazards allowed (0: values near the base, zeros,
// ties and cancellations only, so that whole tiles pass the fast paths'
// tests; 1: also subnormals, the smallest normals and spreads of ±20
// binades; 2, 3: also the largest exponents, any pattern, any exponent).
func (g fuzzFmt) elem(b0, b1, b2 byte, prev uint16, hasPrev bool, base, special, level int) uint16 {
	sign := b0&0x20 != 0
	mant := uint32(b2) | uint32(b1)<<8
	if g.frac == 7 {
		mant = uint32(b2)
	}
	cls := b0 & 31
	if (cls == 18 || cls == 19 || cls == 20) && !hasPrev {
		cls = 0
	}
	switch {
	case level == 0 && (cls >= 12 && cls <= 17 || cls == 21 || cls == 22 || cls == 28 || cls == 29),
		level == 1 && (cls >= 15 && cls <= 17 || cls == 21 || cls == 22):
		cls = 0 // hazards the level leaves out: near the base
	}
	switch cls {
	case 10, 11: // signed zero
		if sign {
			return 0x8000
		}
		return 0
	case 12, 13: // subnormal
		m := uint16(mant) & (1<<g.frac - 1)
		if m == 0 {
			m = 1
		}
		if sign {
			return 0x8000 | m
		}
		return m
	case 14: // the smallest normals
		return g.pat(sign, 1-g.bias+int(b1&1), uint32(b2))
	case 15, 16: // the largest exponents
		return g.pat(sign, g.bias-int(b1&3), uint32(b2)|uint32(b1)<<8)
	case 17: // any pattern, finite
		p := uint16(b1)<<8 | uint16(b2)
		if p>>g.frac&g.maxField == g.maxField {
			p &^= 1 << (g.frac + 1) // exponent field one below the top
		}
		return p
	case 18, 19: // the previous element negated: products that cancel
		return prev ^ 0x8000
	case 20: // the previous element
		return prev
	case 21, 22: // anywhere in the range, few significant bits
		e := int(b1)%(2*g.bias+g.frac) + 1 - g.bias - g.frac
		return g.pat(sign, e, uint32(b2&3)<<(g.frac-2))
	case 23: // rounding boundaries: 1.000…, 1.000…1, 1.111…
		m := []uint32{0, 1, 1<<g.frac - 1, 1 << (g.frac - 1)}[b2&3]
		return g.pat(sign, base+int(b1&7)-3, m)
	case 24, 25, 26, 27: // near the base, short significands (ties)
		return g.pat(sign, base+int(b1&3)-1, uint32(b2&7)<<(g.frac-3))
	case 28, 29: // near the base, wide spread
		return g.pat(sign, base+int(b1%41)-20, mant)
	case 30: // Inf
		if special == 2 || special == 1 && b1&15 == 0 {
			return g.maxField<<g.frac | uint16(b0&0x20)<<10
		}
	case 31: // NaN
		if special == 2 || special == 1 && b1&15 == 0 {
			return g.maxField<<g.frac | 1<<(g.frac-1) | uint16(b0&0x20)<<10
		}
		return 0
	}
	// 0–9 and the rest: near the base
	return g.pat(sign, base+int(b1&7)-3, mant)
}

// cElem decodes one C element from four bytes; scale is the exponent of a
// typical product (base_A + base_B), cancel the value that cancels the
// element's first products.
func cElem(b [4]byte, scale int, cancel float64, special int) uint32 {
	sign := uint32(b[0]&0x20) << 26
	mant := (uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])) & 0x7fffff
	norm := func(e int) uint32 {
		e = min(max(e, -126), 127)
		return sign | uint32(e+127)<<23 | mant
	}
	switch b[0] % 16 {
	case 0, 1:
		return sign
	case 6: // subnormal
		return sign | max(mant>>(b[1]&15), 1)
	case 7: // near the FP32 limit
		return norm(127 - int(b[1]&1))
	case 8: // any finite pattern
		p := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
		if p&0x7f800000 == 0x7f800000 {
			p &^= 1 << 30
		}
		return p
	case 9, 10: // cancels the first products
		if math.IsNaN(cancel) || math.IsInf(cancel, 0) || math.Abs(cancel) >= math.MaxFloat32 {
			return sign
		}
		return math.Float32bits(float32(cancel))
	case 11: // Inf
		if special > 0 {
			return sign | 0x7f800000
		}
		return sign
	case 12: // NaN
		if special > 0 {
			return sign | 0x7fc00000
		}
	case 13: // far from the products
		d := 24 + int(b[1]&31)
		if b[1]&0x80 != 0 {
			d = -d
		}
		return norm(scale + d)
	case 14: // the smallest normals
		return norm(-126 + int(b[1]&3))
	case 15: // near the products, short significand
		return norm(scale+int(b[1]&7)-3) &^ (1<<20 - 1)
	}
	return norm(scale + int(b[1]&15) - 8)
}

// decodeFuzzCase turns a fuzz input into a case. Header:
//
//	0: model family (preset, sequential, exact, truncated, pairwise, late c)
//	1, 2: model parameters (preset index or L; rounding, F, FTZ)
//	3: bit 0 BF16, bit 1 uint32 entry, bit 2 high garbage, bits 3–5
//	   layouts of A, B, C (fractal when set), bit 6 init, bit 7 split
//	4, 5, 6: m (1–24), n (1–24), k (0–70)
//	7, 8: base exponents of A and B
//	9: C's exponent offset from the products'
//	10: Inf/NaN density (0: none, 1: rare, 2: frequent)
//	11: hazard levels of A (bits 0–1) and B (bits 2–3), see fuzzFmt.elem
func decodeFuzzCase(data []byte) (*fuzzCase, error) {
	h := fnv.New64a()
	h.Write(data)
	sum := h.Sum64()
	r := &fuzzReader{data: data, rng: rand.New(rand.NewPCG(sum, sum^0x9e3779b97f4a7c15))}
	var hd [12]byte
	for i := range hd {
		hd[i] = r.next()
	}
	fc := &fuzzCase{in: fp.FP16, padSeed: sum}
	if hd[3]&1 != 0 {
		fc.in = fp.BF16
	}
	var err error
	fc.model, fc.want, err = fuzzModel(hd[0], hd[1], hd[2], fc.in)
	if err != nil {
		return nil, err
	}
	fc.general = hd[3]&2 != 0
	fc.high = hd[3]&4 != 0
	fc.la, fc.lb, fc.lc = Layout(hd[3]>>3&1), Layout(hd[3]>>4&1), Layout(hd[3]>>5&1)
	fc.init = hd[3]&0x40 != 0
	fc.split = hd[3]&0x80 != 0
	fc.mm, fc.n, fc.k = 1+int(hd[4])%24, 1+int(hd[5])%24, int(hd[6])%71
	g := fuzzFormat(fc.in)
	baseA, baseB := g.baseExp(hd[7]), g.baseExp(hd[8])
	special := int(hd[10]) % 4
	if special == 3 {
		special = 0
	}
	mm, k, n := fc.mm, fc.k, fc.n
	fc.a = make([]uint16, mm*k)
	for i := 0; i < mm; i++ {
		for t := 0; t < k; t++ {
			var prev uint16
			if t > 0 {
				prev = fc.a[i*k+t-1]
			}
			fc.a[i*k+t] = g.elem(r.next(), r.next(), r.next(), prev, t > 0, baseA, special, int(hd[11]&3))
		}
	}
	fc.b = make([]uint16, k*n)
	for j := 0; j < n; j++ { // by columns: "previous" is the previous k
		for t := 0; t < k; t++ {
			var prev uint16
			if t > 0 {
				prev = fc.b[(t-1)*n+j]
			}
			fc.b[t*n+j] = g.elem(r.next(), r.next(), r.next(), prev, t > 0, baseB, special, int(hd[11]>>2&3))
		}
	}
	scale := baseA + baseB + int(int8(hd[9]))/8
	fc.c = make([]uint32, mm*n)
	for i := 0; i < mm; i++ {
		for j := 0; j < n; j++ {
			b := [4]byte{r.next(), r.next(), r.next(), r.next()}
			q := 1 + int(b[3]%4)
			s := 0.0
			for t := 0; t < min(q, k); t++ {
				s += fp.ToFloat64(uint32(fc.a[i*k+t]), fc.in) * fp.ToFloat64(uint32(fc.b[t*n+j]), fc.in)
			}
			fc.c[i*n+j] = cElem(b, scale, -s, special)
		}
	}
	return fc, nil
}

func (fc *fuzzCase) String() string {
	return fmt.Sprintf("model %s (fast kind %s) %v %s %d×%d×%d A %v B %v C %v init %v split %v high %v",
		fc.model.Name, fuzzKindNames[fc.want], fc.in, map[bool]string{false: "typed entry", true: "uint32 entry"}[fc.general],
		fc.mm, fc.k, fc.n, fc.la, fc.lb, fc.lc, fc.init, fc.split, fc.high)
}

// buffers lays A, B and C out, the padding of fractal layouts (and the
// high bits of the uint32 entry's A and B) filled with garbage that
// neither path may read.
func (fc *fuzzCase) buffers() (a, b []uint32, c []uint32) {
	rng := rand.New(rand.NewPCG(fc.padSeed, 7))
	lay := func(src []uint16, rows, cols int, l Layout) []uint32 {
		out := make([]uint32, LayoutLen(rows, cols, l, 16))
		for i := range out {
			out[i] = rng.Uint32() & 0xffff
		}
		for r := 0; r < rows; r++ {
			for c := 0; c < cols; c++ {
				out[layoutIndex(l, r, c, cols, 16)] = uint32(src[r*cols+c])
			}
		}
		if fc.high {
			for i := range out {
				out[i] |= rng.Uint32() << 16
			}
		}
		return out
	}
	a, b = lay(fc.a, fc.mm, fc.k, fc.la), lay(fc.b, fc.k, fc.n, fc.lb)
	c = make([]uint32, LayoutLen(fc.mm, fc.n, fc.lc, 32))
	for i := range c {
		c[i] = rng.Uint32()
	}
	for i := 0; i < fc.mm; i++ {
		for j := 0; j < fc.n; j++ {
			c[layoutIndex(fc.lc, i, j, fc.n, 32)] = fc.c[i*fc.n+j]
		}
	}
	return a, b, c
}

// run runs the MMAD with the fast paths on or off (and the AVX-512 tiles
// on or off) and returns C's buffer.
func (fc *fuzzCase) run(fast, avx bool) ([]uint32, error) {
	defer setFast(fast)()
	defer func(old bool) { useAVX512 = old }(useAVX512)
	useAVX512 = useAVX512 && avx
	if fc.split {
		defer func(old int) { parallelMACs = old }(parallelMACs)
		parallelMACs = 1
	}
	a, b, c := fc.buffers()
	if fc.general {
		err := fc.model.MMAD(fc.in, fp.FP32, fc.mm, fc.k, fc.n, a, fc.la, b, fc.lb, c, fc.lc, fc.init)
		return c, err
	}
	a16, b16 := make([]uint16, len(a)), make([]uint16, len(b))
	for i, x := range a {
		a16[i] = uint16(x)
	}
	for i, x := range b {
		b16[i] = uint16(x)
	}
	c32 := make([]float32, len(c))
	for i, x := range c {
		c32[i] = math.Float32frombits(x)
	}
	mmad := fc.model.MMADF16
	if fc.in == fp.BF16 {
		mmad = fc.model.MMADBF16
	}
	err := mmad(fc.mm, fc.k, fc.n, a16, fc.la, b16, fc.lb, c32, fc.lc, fc.init)
	for i, x := range c32 {
		c[i] = math.Float32bits(x)
	}
	return c, err
}

// check asserts the fast kind and compares every fast implementation this
// machine has with the reference, bit for bit.
func (fc *fuzzCase) check(t *testing.T) {
	t.Helper()
	kern, err := fc.model.kernel(fc.in, fp.FP32)
	if err != nil {
		t.Fatalf("%v: %v", fc, err)
	}
	if got := fastKindFor(kern, fc.in); got != fc.want || got == fastNone {
		t.Fatalf("%v: fast kind %s, want %s", fc, fuzzKindNames[got], fuzzKindNames[fc.want])
	}
	want, err := fc.run(false, false)
	if err != nil {
		t.Fatalf("%v: reference: %v", fc, err)
	}
	impls := []bool{false}
	if useAVX512 {
		impls = append(impls, true)
	}
	for _, avx := range impls {
		got, err := fc.run(true, avx)
		if err != nil {
			t.Fatalf("%v: fast: %v", fc, err)
		}
		for x := range got {
			if got[x] != want[x] {
				t.Fatalf("%v, %s tiles: %s", fc, map[bool]string{false: "Go", true: "AVX-512"}[avx], fc.describe(x, got[x], want[x]))
			}
		}
	}
}

// describe reports the differing buffer index x of C: the element, both
// results, and its row of A, column of B and c.
func (fc *fuzzCase) describe(x int, got, want uint32) string {
	for i := 0; i < fc.mm; i++ {
		for j := 0; j < fc.n; j++ {
			if layoutIndex(fc.lc, i, j, fc.n, 32) != x {
				continue
			}
			var sb strings.Builder
			fmt.Fprintf(&sb, "element (%d, %d): fast %08x (%g), reference %08x (%g); c %08x (%g)\nA row:",
				i, j, got, math.Float32frombits(got), want, math.Float32frombits(want), fc.c[i*fc.n+j], math.Float32frombits(fc.c[i*fc.n+j]))
			for t := 0; t < fc.k; t++ {
				fmt.Fprintf(&sb, " %04x", fc.a[i*fc.k+t])
			}
			sb.WriteString("\nB column:")
			for t := 0; t < fc.k; t++ {
				fmt.Fprintf(&sb, " %04x", fc.b[t*fc.n+j])
			}
			return sb.String()
		}
	}
	return fmt.Sprintf("padding index %d of C changed: fast %08x, reference %08x", x, got, want)
}

// fuzzSeed builds a seed input from the header fields (see
// decodeFuzzCase); the elements come from the PRNG.
func fuzzSeed(family, p1, p2 byte, bf16, general, high bool, la, lb, lc Layout, init, split bool, m, n, k int, baseA, baseB, cOff, special, levels byte) []byte {
	flags := byte(la)<<3 | byte(lb)<<4 | byte(lc)<<5
	for bit, on := range []bool{bf16, general, high} {
		if on {
			flags |= 1 << bit
		}
	}
	if init {
		flags |= 0x40
	}
	if split {
		flags |= 0x80
	}
	return []byte{family, p1, p2, flags, byte(m - 1), byte(n - 1), byte(k), baseA, baseB, cOff, special, levels}
}

// fuzzMMADSeeds are the hand-picked seeds: every fast kind on tiles of
// the AVX-512 size and edges, both formats and entries, the layouts, and
// the hazards (BF16 products next to 2^−126 and 2^128, subnormals, Inf
// and NaN, huge c).
func fuzzMMADSeeds() [][]byte {
	const rm, fr = RowMajor, Fractal
	return [][]byte{
		// presets: a100 fp16, mi210 bf16 (products near 2^−126), mi300 bf16 near 2^128, h100 specials
		fuzzSeed(0, 2, 0, false, false, false, rm, rm, rm, false, false, 9, 17, 37, 0, 0, 0, 0, 0),
		fuzzSeed(0, 5, 0, true, false, false, fr, rm, fr, false, false, 16, 16, 20, 1, 1, 0, 0, 0),
		fuzzSeed(0, 6, 0, true, true, true, rm, fr, rm, false, false, 8, 19, 33, 6, 7, 0, 0, 0xf),
		fuzzSeed(0, 4, 0, false, false, false, rm, rm, rm, false, false, 12, 18, 40, 0, 0, 0, 1, 0),
		// sequential RNE and RZ, BF16 with huge and tiny products
		fuzzSeed(1, 0, 0, true, false, false, rm, rm, rm, false, false, 8, 16, 30, 6, 8, 0, 0, 0),
		fuzzSeed(1, 0, 1, true, false, false, rm, rm, fr, false, true, 17, 20, 45, 9, 10, 0, 1, 5),
		fuzzSeed(1, 0, 1, false, true, false, fr, fr, fr, true, false, 9, 16, 70, 4, 4, 0, 0, 0xf),
		// exact block: L = 16 RNE with subnormals, L = 3 RZ
		fuzzSeed(2, 6, 0, false, false, false, rm, rm, rm, false, false, 8, 16, 50, 12, 4, 0, 0, 5),
		fuzzSeed(2, 2, 1, true, false, false, rm, fr, rm, false, false, 5, 9, 31, 2, 11, 0, 2, 0xf),
		// truncated block: L = 8 F = 24 RZ, L = 5 F = 0 RNE, L = 64 F max
		fuzzSeed(3, 6, 17, false, false, false, rm, rm, rm, false, false, 8, 16, 35, 0, 0, 0, 0, 0),
		fuzzSeed(3, 4, 0, true, false, false, rm, rm, rm, false, false, 7, 11, 23, 5, 1, 0, 0, 5),
		fuzzSeed(3, 9, 28, true, true, false, fr, rm, rm, false, true, 20, 24, 66, 6, 6, 40, 1, 0xa),
		// pairwise: L = 4 FTZ and not (the AVX-512 tile), L = 64 no FTZ, L = 3
		fuzzSeed(4, 2, 0, true, false, false, rm, rm, rm, false, false, 16, 16, 33, 1, 2, 0, 0, 0),
		fuzzSeed(4, 2, 0, false, false, false, rm, rm, rm, false, false, 17, 23, 30, 0, 4, 0, 0, 0x4),
		fuzzSeed(4, 2, 1, true, false, false, fr, fr, rm, false, true, 16, 20, 38, 0, 13, 0, 1, 0x1),
		fuzzSeed(4, 5, 1, false, false, false, rm, rm, rm, true, false, 8, 16, 70, 4, 12, 0, 0, 0),
		fuzzSeed(4, 6, 0, true, true, false, rm, rm, fr, false, false, 10, 17, 14, 2, 1, 0, 2, 0xf),
		// late c: L = 8 F = 24 RNE (mi300's), L = 2 RZ near 2^128, F small
		fuzzSeed(5, 4, 16, true, false, false, rm, rm, rm, false, false, 8, 16, 41, 1, 1, 0, 0, 0),
		fuzzSeed(5, 1, 1, true, false, false, rm, rm, rm, false, false, 12, 24, 19, 6, 7, 0x70, 0, 5),
		fuzzSeed(5, 8, 2, false, true, false, fr, fr, rm, false, false, 4, 8, 0, 0, 0, 0, 0, 0),
	}
}

// TestFuzzMMADSeeds: the seeds reach every fast kind, and (with AVX-512)
// every assembly tile runs on them, so that `go test` exercises them all.
func TestFuzzMMADSeeds(t *testing.T) {
	kinds := map[fastKind]bool{}
	for _, s := range fuzzMMADSeeds() {
		fc, err := decodeFuzzCase(s)
		if err != nil {
			t.Fatal(err)
		}
		kinds[fc.want] = true
	}
	for k := fastSeqRNE; k <= fastLateC; k++ {
		if !kinds[k] {
			t.Errorf("no seed takes fast kind %s", fuzzKindNames[k])
		}
	}
	if !useAVX512 {
		return
	}
	var seq, pair, trunc, exact, latec int
	oldSeq, oldPair, oldTrunc, oldExact, oldLateC := seqTileFn, pairTileFn, truncTileFn, exactTileFn, lateCTileFn
	defer func() {
		seqTileFn, pairTileFn, truncTileFn, exactTileFn, lateCTileFn = oldSeq, oldPair, oldTrunc, oldExact, oldLateC
	}()
	seqTileFn = func(ap, bp *float32, c, res *uint32, n, k int, rz bool) {
		seq++
		oldSeq(ap, bp, c, res, n, k, rz)
	}
	pairTileFn = func(ap, bp *float32, c, res *uint32, n, nb int, mask uint32) {
		pair++
		oldPair(ap, bp, c, res, n, nb, mask)
	}
	truncTileFn = func(ap *float64, ep *int32, bp *float64, fp *int32, c *float64, res *uint32, n, k, L, x int, rz bool) uint32 {
		trunc++
		return oldTrunc(ap, ep, bp, fp, c, res, n, k, L, x, rz)
	}
	exactTileFn = func(ap *float64, ep *int32, bp *float64, fp *int32, c *float64, res *uint32, n, k, L, x int, rz bool) uint32 {
		exact++
		return oldExact(ap, ep, bp, fp, c, res, n, k, L, x, rz)
	}
	lateCTileFn = func(ap *float64, ep *int32, bp *float64, fp *int32, c *float64, res *uint32, n, k, L, x int, rz bool) uint32 {
		latec++
		return oldLateC(ap, ep, bp, fp, c, res, n, k, L, x, rz)
	}
	for _, s := range fuzzMMADSeeds() {
		fc, _ := decodeFuzzCase(s)
		fc.check(t)
	}
	for name, n := range map[string]int{"sequential": seq, "pairwise": pair, "truncated": trunc, "exact": exact, "late-c": latec} {
		if n == 0 {
			t.Errorf("the %s AVX-512 tile never ran on the seeds", name)
		}
	}
}
