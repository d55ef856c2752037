package crt

import (
	"encoding/binary"
	"math"
	"math/big"
	"testing"
)

// FuzzGEMM: small matrices of arbitrary float64 bit patterns (zeros,
// subnormals, huge values, Inf, NaN) and arbitrary moduli counts and chunks
// never panic; a plan without error either falls back (exactly when A or B
// holds Inf/NaN) or gives GEMMTile = ModProducts path = the math/big
// contract, and the exact C' stays within the bound k·2^T ≤ H.
func FuzzGEMM(f *testing.F) {
	f.Add([]byte{2, 3, 2, 14, 0}, uint8(0))
	f.Add([]byte{1, 2, 1, 24, 1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xef, 0x7f, 1, 0, 0, 0, 0, 0, 0, 0x80}, uint8(1))
	f.Add([]byte{3, 5, 2, 8, 3, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xf0, 0x7f}, uint8(3))
	f.Fuzz(func(t *testing.T, data []byte, chunk uint8) {
		if len(data) < 5 {
			return
		}
		m, k, n := 1+int(data[0])%5, int(data[1])%7, 1+int(data[2])%5
		cfg := Config{Moduli: int(data[3]) % 27, Chunk: int(chunk) % 9, Workers: 1 + int(data[4])%3}
		rest := data[5:]
		val := func() float64 {
			if len(rest) < 8 {
				return float64(len(rest)) - 3
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
		c, p, err := GEMM(a, b, nil, 1, 0, m, k, n, cfg)
		if err != nil {
			return
		}
		if p.Fallback != (hasInfNaN(a) || hasInfNaN(b)) || len(c) != m*n {
			t.Fatalf("fallback %v, len %d", p.Fallback, len(c))
		}
		if p.Fallback {
			return
		}
		ra, rb := p.Residues(a, b)
		want, maxC := bigTile(&p, a, b, 0, m, 0, n)
		sameBits(t, "big", want, c)
		sameBits(t, "ref", refTile(&p, ra, rb, 0, m, 0, n), c)
		lim := new(big.Int).Lsh(big.NewInt(int64(max(k, 1))), uint(p.T))
		if maxC.Cmp(lim) > 0 || lim.Cmp(p.Basis.Half) > 0 {
			t.Fatalf("|C'| = %v > k·2^T = %v or > H", maxC, lim)
		}
	})
}
