package cube

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"
)

// mmadInt8Golden is MMADInt8 as it was before Int8Scratch (unpacking with
// FractalIndex per element, one accumulator row, fresh buffers each call):
// the reference the faster paths must match bit for bit.
func mmadInt8Golden(m, k, n int, a, b, c []byte, init bool) {
	pk := LayoutLen(1, k, Fractal, 8) / 16
	pn := LayoutLen(1, n, Fractal, 8) / 16
	pc := (n + 15) / 16 * 16
	av := make([]int32, m*k)
	for i := 0; i < m; i++ {
		for x := 0; x < k; x++ {
			av[i*k+x] = int32(int8(a[FractalIndex(i, x, pk, 8)]))
		}
	}
	bv := make([]int32, k*n)
	for x := 0; x < k; x++ {
		for j := 0; j < n; j++ {
			bv[x*n+j] = int32(int8(b[FractalIndex(x, j, pn, 8)]))
		}
	}
	acc := make([]int32, n)
	for i := 0; i < m; i++ {
		clear(acc)
		for x, ax := range av[i*k : i*k+k] {
			if ax == 0 {
				continue
			}
			for j, bx := range bv[x*n : x*n+n] {
				acc[j] += ax * bx
			}
		}
		for j := 0; j < n; j++ {
			ci := FractalIndex(i, j, pc, 32) * 4
			v := acc[j]
			if !init {
				v += int32(binary.LittleEndian.Uint32(c[ci:]))
			}
			binary.LittleEndian.PutUint32(c[ci:], uint32(v))
		}
	}
}

// int8Case is one random INT8 MMA: A and B row-major (with row strides)
// and as fractal tiles (padding filled with junk, which no path may read
// into the result), and a C with random contents.
type int8Case struct {
	m, k, n, lda, ldb int
	aRM, bRM          []byte
	aFr, bFr, c       []byte
}

func newInt8Case(r *rand.Rand, m, k, n int, fill func() byte) int8Case {
	t := int8Case{m: m, k: k, n: n, lda: k + r.IntN(5), ldb: n + r.IntN(5)}
	t.aRM = make([]byte, max(m*t.lda, 1))
	t.bRM = make([]byte, max(k*t.ldb, 1))
	for i := range t.aRM {
		t.aRM[i] = fill()
	}
	for i := range t.bRM {
		t.bRM[i] = fill()
	}
	pk := LayoutLen(1, k, Fractal, 8) / 16
	pn := LayoutLen(1, n, Fractal, 8) / 16
	t.aFr = make([]byte, LayoutLen(m, k, Fractal, 8))
	t.bFr = make([]byte, LayoutLen(k, n, Fractal, 8))
	for i := range t.aFr {
		t.aFr[i] = byte(r.Uint32()) // padding junk
	}
	for i := range t.bFr {
		t.bFr[i] = byte(r.Uint32())
	}
	for i := 0; i < m; i++ {
		for x := 0; x < k; x++ {
			t.aFr[FractalIndex(i, x, pk, 8)] = t.aRM[i*t.lda+x]
		}
	}
	for x := 0; x < k; x++ {
		for j := 0; j < n; j++ {
			t.bFr[FractalIndex(x, j, pn, 8)] = t.bRM[x*t.ldb+j]
		}
	}
	t.c = make([]byte, LayoutLen(m, n, Fractal, 32)*4)
	for i := range t.c {
		t.c[i] = byte(r.Uint32())
	}
	return t
}

// TestMMADInt8MatchesGolden: the pooled MMADInt8, Int8Scratch.MMADInt8 and
// Int8Scratch.MMAD (each operand fractal or
// row-major) all give the golden's C, bit for bit, over
// random shapes (edges of the 16×32 blocks included), random and extreme
// values, init and accumulate, with one scratch reused across shapes —
// through the AVX2 blocks where the host has them, and the Go pairs.
func TestMMADInt8MatchesGolden(t *testing.T) {
	for _, avx := range int8Paths() {
		t.Run(fmt.Sprintf("avx2=%v", avx), func(t *testing.T) {
			defer setAVX2Int8(avx)()
			testMMADInt8MatchesGolden(t)
		})
	}
}

// int8Paths lists the settings of useAVX2Int8 the host can run.
func int8Paths() []bool {
	if useAVX2Int8 {
		return []bool{false, true}
	}
	return []bool{false}
}

// setAVX2Int8 sets useAVX2Int8 and returns a function restoring it.
func setAVX2Int8(on bool) func() {
	old := useAVX2Int8
	useAVX2Int8 = on
	return func() { useAVX2Int8 = old }
}

func testMMADInt8MatchesGolden(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var s Int8Scratch
	fills := map[string]func() byte{
		"random":  func() byte { return byte(r.Uint32()) },
		"extreme": func() byte { return []byte{0x80, 0x7f, 0, 0xff, 1}[r.IntN(5)] },
		"sparse": func() byte {
			if r.IntN(4) != 0 {
				return 0
			}
			return byte(r.Uint32())
		},
	}
	shapes := [][3]int{{1, 1, 1}, {16, 32, 8}, {17, 128, 3}, {16, 32, 16}, {33, 65, 31}, {64, 256, 64}, {5, 0, 7}, {0, 32, 4}, {3, 31, 0}}
	for it := 0; it < 60; it++ {
		shapes = append(shapes, [3]int{1 + r.IntN(70), r.IntN(200), 1 + r.IntN(70)})
	}
	for name, fill := range fills {
		for _, sh := range shapes {
			for _, init := range []bool{true, false} {
				tc := newInt8Case(r, sh[0], sh[1], sh[2], fill)
				want := bytes.Clone(tc.c)
				mmadInt8Golden(tc.m, tc.k, tc.n, tc.aFr, tc.bFr, want, init)
				got := map[string][]byte{"MMADInt8": bytes.Clone(tc.c), "scratch": bytes.Clone(tc.c), "row-major": bytes.Clone(tc.c),
					"fractal A": bytes.Clone(tc.c), "fractal B": bytes.Clone(tc.c)}
				MMADInt8(tc.m, tc.k, tc.n, tc.aFr, tc.bFr, got["MMADInt8"], init)
				s.MMADInt8(tc.m, tc.k, tc.n, tc.aFr, tc.bFr, got["scratch"], init)
				s.MMAD(tc.m, tc.k, tc.n, tc.aRM, RowMajor, tc.lda, tc.bRM, RowMajor, tc.ldb, got["row-major"], init)
				s.MMAD(tc.m, tc.k, tc.n, tc.aFr, Fractal, 0, tc.bRM, RowMajor, tc.ldb, got["fractal A"], init)
				s.MMAD(tc.m, tc.k, tc.n, tc.aRM, RowMajor, tc.lda, tc.bFr, Fractal, 0, got["fractal B"], init)
				for path, g := range got {
					if !bytes.Equal(g, want) {
						t.Fatalf("%s %s %v init=%v: C differs from the golden's", name, path, sh, init)
					}
				}
			}
		}
	}
}

// TestMMADInt8Wraps: sums past INT32's range wrap in two's complement,
// in the products' sum (k large enough that -128·-128 products overflow)
// and in the addition of C, the same on every path; and at the longest k
// whose sums the paired path takes (maxPairK) and just past it, the sums
// at their extremes in both halves of a pair (-128·-128 in one column,
// -128·127 in the other) come out exact.
func TestMMADInt8Wraps(t *testing.T) {
	for _, avx := range int8Paths() {
		t.Run(fmt.Sprintf("avx2=%v", avx), func(t *testing.T) {
			defer setAVX2Int8(avx)()
			testMMADInt8Wraps(t)
		})
	}
}

func testMMADInt8Wraps(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var s Int8Scratch
	for _, k := range []int{maxPairK, maxPairK + 1, 1<<17 + 96} {
		tc := newInt8Case(r, 3, k, 3, func() byte { return 0x80 })
		for x := 0; x < k; x++ {
			tc.bRM[x*tc.ldb+1] = 0x7f // column 1: -128·127 per product
		}
		tc.bFr = fractalOf(tc.bRM, k, 3, tc.ldb)
		for i := range tc.c {
			tc.c[i] = 0x7f // C near INT32's top: adding to it wraps too
		}
		for _, init := range []bool{true, false} {
			want := bytes.Clone(tc.c)
			mmadInt8Golden(tc.m, tc.k, tc.n, tc.aFr, tc.bFr, want, init)
			got, got2 := bytes.Clone(tc.c), bytes.Clone(tc.c)
			s.MMADInt8(tc.m, tc.k, tc.n, tc.aFr, tc.bFr, got, init)
			s.MMAD(tc.m, tc.k, tc.n, tc.aRM, RowMajor, tc.lda, tc.bRM, RowMajor, tc.ldb, got2, init)
			if !bytes.Equal(got, want) || !bytes.Equal(got2, want) {
				t.Fatalf("k=%d init=%v: C differs from the golden's", k, init)
			}
			// The exact sums (+ C) taken mod 2^32.
			for j, p := range []int64{1 << 14, -128 * 127, 1 << 14} {
				exact := int64(k) * p
				if !init {
					exact += int64(int32(0x7f7f7f7f))
				}
				if v := int32(binary.LittleEndian.Uint32(got[4*j:])); v != int32(uint32(exact)) {
					t.Fatalf("k=%d init=%v: C[0,%d] = %d, want %d (the exact sum mod 2^32)", k, init, j, v, int32(uint32(exact)))
				}
			}
		}
	}
}

// fractalOf returns the rows×cols INT8 matrix held row-major in rm (rows
// ld bytes apart) as a fractal tile.
func fractalOf(rm []byte, rows, cols, ld int) []byte {
	pc := LayoutLen(1, cols, Fractal, 8) / 16
	fr := make([]byte, LayoutLen(rows, cols, Fractal, 8))
	for i := 0; i < rows; i++ {
		for j := 0; j < cols; j++ {
			fr[FractalIndex(i, j, pc, 8)] = rm[i*ld+j]
		}
	}
	return fr
}

// TestMMADInt8NoAllocs: with its scratch grown, a call allocates nothing.
func TestMMADInt8NoAllocs(t *testing.T) {
	tc := newInt8Case(rand.New(rand.NewPCG(5, 6)), 17, 128, 3, func() byte { return 3 })
	var s Int8Scratch
	for name, f := range map[string]func(){
		"fractal":   func() { s.MMADInt8(tc.m, tc.k, tc.n, tc.aFr, tc.bFr, tc.c, false) },
		"row-major": func() { s.MMAD(tc.m, tc.k, tc.n, tc.aRM, RowMajor, tc.lda, tc.bRM, RowMajor, tc.ldb, tc.c, false) },
	} {
		if n := testing.AllocsPerRun(20, f); n != 0 {
			t.Errorf("%s: %v allocations a call, want 0", name, n)
		}
	}
}

// BenchmarkMMADInt8 times the INT8 MMA at the shape of B200's Ozaki GEMM
// on thin matrices (17×128×3) and at square tiles, golden against the new
// paths.
func BenchmarkMMADInt8(b *testing.B) {
	for _, sh := range [][3]int{{17, 128, 3}, {16, 32, 8}, {128, 128, 128}, {128, 32, 256}} {
		tc := newInt8Case(rand.New(rand.NewPCG(7, 8)), sh[0], sh[1], sh[2], nil2rand())
		name := fmt.Sprintf("%dx%dx%d", sh[0], sh[1], sh[2])
		var s Int8Scratch
		for _, path := range []struct {
			name string
			f    func()
		}{
			{"golden", func() { mmadInt8Golden(tc.m, tc.k, tc.n, tc.aFr, tc.bFr, tc.c, false) }},
			{"fractal", func() { s.MMADInt8(tc.m, tc.k, tc.n, tc.aFr, tc.bFr, tc.c, false) }},
			{"row-major", func() {
				s.MMAD(tc.m, tc.k, tc.n, tc.aRM, RowMajor, tc.lda, tc.bRM, RowMajor, tc.ldb, tc.c, false)
			}},
			{"row-major-go", func() {
				defer setAVX2Int8(false)()
				s.MMAD(tc.m, tc.k, tc.n, tc.aRM, RowMajor, tc.lda, tc.bRM, RowMajor, tc.ldb, tc.c, false)
			}},
		} {
			b.Run(name+"/"+path.name, func(b *testing.B) {
				path.f()
				c0 := cpuSeconds()
				for b.Loop() {
					path.f()
				}
				// CPU time a call: comparable on a loaded machine.
				b.ReportMetric((cpuSeconds()-c0)*1e9/float64(b.N), "cpu-ns/op")
			})
		}
	}
}

func nil2rand() func() byte {
	r := rand.New(rand.NewPCG(9, 10))
	return func() byte { return byte(r.Uint32()) }
}
