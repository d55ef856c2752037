package cube

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// fp64Reference is FP64Scratch.MMAD as arch/gpu computed it before:
// every element located by FractalIndex and decoded per use, one output
// at a time (A and B fractal, or row-major with rows lda and ldb bytes
// apart).
func fp64Reference(m, k, n int, a []byte, la Layout, lda int, b []byte, lb Layout, ldb int, c []byte, init bool) {
	pk, pn := (k+15)/16*16, (n+15)/16*16
	at := func(src []byte, l Layout, ld, r, col, cols int) float64 {
		i := r*ld + col*8
		if l == Fractal {
			i = FractalIndex(r, col, cols, 64) * 8
		}
		return math.Float64frombits(binary.LittleEndian.Uint64(src[i:]))
	}
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			ci := FractalIndex(i, j, pn, 64) * 8
			var acc float64
			if !init {
				acc = math.Float64frombits(binary.LittleEndian.Uint64(c[ci:]))
			}
			for x := 0; x < k; x++ {
				acc = math.FMA(at(a, la, lda, i, x, pk), at(b, lb, ldb, x, j, pn), acc)
			}
			binary.LittleEndian.PutUint64(c[ci:], math.Float64bits(acc))
		}
	}
}

// randFP64Word returns a random FP64 bit pattern: a finite value near 1
// or, 6 times in odds, a signed zero, a subnormal, an infinity, a NaN
// (quiet or signalling, random payload), any finite value, or one near
// 2^-530 (whose products are subnormal).
func randFP64Word(r *rand.Rand, odds int) uint64 {
	sign := uint64(r.IntN(2)) << 63
	frac := r.Uint64() & (1<<52 - 1)
	switch r.IntN(odds) {
	case 0:
		return sign
	case 1:
		return sign | frac | 1
	case 2:
		return sign | 0x7ff<<52
	case 3:
		return sign | 0x7ff<<52 | frac | 1
	case 4:
		return sign | uint64(1+r.IntN(2046))<<52 | frac
	case 5:
		return sign | uint64(1023-540+r.IntN(20))<<52 | frac // products subnormal
	}
	return sign | uint64(1023-8+r.IntN(17))<<52 | frac
}

// TestMMADFP64 checks FP64Scratch.MMAD — the AVX tile where this machine
// has it, and the Go chains — against fp64Reference bit for bit (NaN
// payloads and C's fractal padding included) over random shapes (m, k, n
// off the 4×8 tile and 16×16 block, k = 0), layouts, strides, init and
// accumulate, and contents with special values, one scratch reused.
func TestMMADFP64(t *testing.T) {
	impls := []bool{false}
	if useFMA3 {
		impls = append(impls, true)
	}
	defer func(old bool) { useFMA3 = old }(useFMA3)
	for _, fma3 := range impls {
		useFMA3 = fma3
		t.Run(fmt.Sprintf("fma3=%v", fma3), func(t *testing.T) {
			r := rand.New(rand.NewPCG(3, 4))
			var s FP64Scratch
			for it := 0; it < 500; it++ {
				m, k, n := 1+r.IntN(37), r.IntN(40), 1+r.IntN(37)
				if it == 0 {
					m, k, n = 32, 16, 32
				}
				odds := []int{10, 60, 1 << 20}[it%3]
				fill := func(b []byte) []byte {
					for i := 0; i+8 <= len(b); i += 8 {
						binary.LittleEndian.PutUint64(b[i:], randFP64Word(r, odds))
					}
					return b
				}
				la, lb := Layout(r.IntN(2)), Layout(r.IntN(2))
				lda, ldb := 8*(k+r.IntN(4)), 8*(n+r.IntN(4))
				size := func(l Layout, rows, cols, ld int) int {
					if l == Fractal {
						return LayoutLen(rows, cols, Fractal, 64) * 8
					}
					return rows * ld
				}
				a := fill(make([]byte, size(la, m, k, lda)))
				b := fill(make([]byte, size(lb, k, n, ldb)))
				c := fill(make([]byte, LayoutLen(m, n, Fractal, 64)*8))
				want := bytes.Clone(c)
				init := r.IntN(2) == 0
				fp64Reference(m, k, n, a, la, lda, b, lb, ldb, want, init)
				s.MMAD(m, k, n, a, la, lda, b, lb, ldb, c, init)
				for x := 0; x < len(c); x += 8 {
					if g, w := binary.LittleEndian.Uint64(c[x:]), binary.LittleEndian.Uint64(want[x:]); g != w {
						t.Fatalf("%d×%d×%d (A %v, B %v, init %v): C word %d is %#016x, want %#016x", m, k, n, la, lb, init, x/8, g, w)
					}
				}
			}
		})
	}
}

// BenchmarkMMADFP64 times FP64Scratch.MMAD on fractal tiles at the DGEMM
// example's warp tiles (32×16×32 on NVIDIA, 64×32×64 on AMD): the AVX
// tile where this machine has it, the Go chains, and fp64Reference (the
// code it replaced).
func BenchmarkMMADFP64(b *testing.B) {
	defer func(old bool) { useFMA3 = old }(useFMA3)
	have := useFMA3
	for _, sh := range [][3]int{{32, 16, 32}, {64, 32, 64}} {
		m, k, n := sh[0], sh[1], sh[2]
		r := rand.New(rand.NewPCG(1, 2))
		word := func() []byte {
			return binary.LittleEndian.AppendUint64(nil, math.Float64bits(r.Float64()-0.5))
		}
		tile := func(rows, cols int) []byte {
			var t []byte
			for range LayoutLen(rows, cols, Fractal, 64) {
				t = append(t, word()...)
			}
			return t
		}
		a, bb, c := tile(m, k), tile(k, n), tile(m, n)
		name := fmt.Sprintf("%dx%dx%d", m, k, n)
		b.Run(name+"/reference", func(b *testing.B) {
			for b.Loop() {
				fp64Reference(m, k, n, a, Fractal, 0, bb, Fractal, 0, c, true)
			}
		})
		for _, fma3 := range []bool{false, true} {
			if fma3 && !have {
				continue
			}
			b.Run(fmt.Sprintf("%s/fma3=%v", name, fma3), func(b *testing.B) {
				useFMA3 = fma3
				var s FP64Scratch
				for b.Loop() {
					s.MMAD(m, k, n, a, Fractal, 0, bb, Fractal, 0, c, true)
				}
			})
		}
	}
}
