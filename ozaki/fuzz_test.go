package ozaki

import (
	"encoding/binary"
	"math"
	"math/big"
	"testing"
)

// FuzzSlice: any finite x, any scale from x's own up to 1025, any s in
// 1…26: no panic, digits equal the math/big slicer, and the reconstruction
// is x truncated toward −∞ within 2^(σ+1−8s).
func FuzzSlice(f *testing.F) {
	f.Add(31688.0, uint16(0), uint8(2))
	f.Add(0x1.FFFFFFFFFFFFFp1023, uint16(0), uint8(26))
	f.Add(-0x1p-1074, uint16(2000), uint8(7))
	f.Add(-1.984375, uint16(3), uint8(1))
	f.Fuzz(func(t *testing.T, x float64, lift uint16, sb uint8) {
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return
		}
		s := 1 + int(sb)%MaxSlices
		sigma := min(scaleOf(math.Abs(x)).Sigma+int(lift), 1025)
		if x == 0 {
			sigma = int(lift)%2000 - 1000
		}
		var d [MaxSlices]int8
		SliceValue(x, sigma, s, d[:])
		want, ok := bigDigits(x, sigma, s)
		if !ok {
			t.Fatalf("big overflow x=%v σ=%d s=%d", x, sigma, s)
		}
		for i := range want {
			if want[i] != d[i] {
				t.Fatalf("x=%v σ=%d s=%d: %v vs %v", x, sigma, s, d[:s], want)
			}
		}
		diff := new(big.Float).SetPrec(4096).Sub(new(big.Float).SetPrec(4096).SetFloat64(x), bigValue(d[:s], sigma))
		ulp := new(big.Float).SetMantExp(big.NewFloat(1), sigma+1-8*s)
		if diff.Sign() < 0 || diff.Cmp(ulp) >= 0 {
			t.Fatalf("x=%v σ=%d s=%d: residual %v", x, sigma, s, diff)
		}
	})
}

// FuzzPlan: small matrices of arbitrary float64 bit patterns (Inf, NaN,
// subnormals included) and arbitrary configurations (worker counts 0 … 3)
// never panic; a plan without error either falls back or yields digits
// that GEMMTile and the reference path agree on, whole and in a sub-tile,
// and GEMM's C is the reference's α·P + β·C0 bit for bit.
func FuzzPlan(f *testing.F) {
	f.Add([]byte{2, 3, 2, 53, 2, 0}, uint8(8))
	f.Add([]byte{1, 1, 1, 200, 0, 1, 0xff, 0xf0, 0, 0, 0, 0, 0, 0}, uint8(1))
	// α = 0.75 and β = −2 over a C0 (data[4] bits 2 and 3), on 2 and 3
	// workers (blk / 9): the epilogue and the workers checked without
	// fuzzing too.
	withValues := func(head []byte, n int) []byte {
		for i := range n {
			head = binary.LittleEndian.AppendUint64(head, math.Float64bits(float64(i%7)*0.37-1))
		}
		return head
	}
	f.Add(withValues([]byte{2, 3, 2, 53, 12, 0}, 27), uint8(20)) // 3×3×3: A, B and C0
	f.Add(withValues([]byte{3, 4, 1, 60, 13, 1}, 34), uint8(27)) // 4×4×2
	f.Fuzz(func(t *testing.T, data []byte, blk uint8) {
		if len(data) < 6 {
			return
		}
		m, k, n := 1+int(data[0])%5, int(data[1])%6, 1+int(data[2])%5
		cfg := Config{Bits: int(data[3]) - 20, Mode: Mode(data[4] % 4), ESCBlock: int(blk) % 9,
			Products: ProductSet(data[5] % 3), Fallback: data[5]&4 != 0, MaxBits: int(data[5] >> 3), Workers: int(blk/9) % 4}
		rest := data[6:]
		val := func() float64 {
			if len(rest) < 8 {
				return float64(len(rest))
			}
			v := math.Float64frombits(binary.LittleEndian.Uint64(rest))
			rest = rest[8:]
			return v
		}
		a, b := make([]float64, m*k), make([]float64, k*n)
		for i := range a {
			a[i] = val()
		}
		for i := range b {
			b[i] = val()
		}
		alpha, beta := 1.0, 0.0
		if data[4]&4 != 0 {
			alpha = 0.75
		}
		var c0 []float64
		if data[4]&8 != 0 {
			beta, c0 = -2, make([]float64, m*n)
			for i := range c0 {
				c0[i] = val()
			}
		}
		c, p, err := GEMM(a, b, c0, alpha, beta, m, k, n, cfg)
		if err != nil || p.Fallback {
			return
		}
		if len(c) != m*n {
			t.Fatalf("len %d", len(c))
		}
		pa, pb := p.Digits(a, b)
		ref := refTile(&p, pa, pb, 0, m, 0, n)
		sameBits(t, "fuzz", ref, GEMMTile(&p, pa, pb, 0, m, 0, n))
		r0, c1 := m/2, n/2
		sub := make([]float64, 0, (m-r0)*(n-c1))
		for i := r0; i < m; i++ {
			sub = append(sub, ref[i*n+c1:(i+1)*n]...)
		}
		sameBits(t, "fuzz sub-tile", sub, GEMMTile(&p, pa, pb, r0, m-r0, c1, n-c1))
		for x := range ref { // (float64(): no fused multiply-add)
			if alpha != 1 {
				ref[x] = float64(alpha * ref[x])
			}
			if beta != 0 {
				ref[x] += float64(beta * c0[x])
			}
		}
		sameBits(t, "fuzz GEMM", ref, c)
	})
}
