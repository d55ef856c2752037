package dma

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/davinci-sim/davinci-sim/cube"
	"github.com/davinci-sim/davinci-sim/fp"
)

// loadFractalGolden is LoadFractal as it was before it copied a block's
// row at a time (one element at a time, FractalIndex each): the reference
// the faster one must match byte for byte.
func loadFractalGolden(dst, src []byte, r, c int, rowStride int64, f fp.Format, transpose bool) {
	eb := f.Bytes()
	clear(dst[:FractalBytes(r, c, f)])
	_, bc := cube.FractalBlock(f.Bits())
	pc := (c + bc - 1) / bc * bc
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			var so int64
			if transpose {
				so = int64(j)*rowStride + int64(i*eb)
			} else {
				so = int64(i)*rowStride + int64(j*eb)
			}
			do := int64(cube.FractalIndex(i, j, pc, f.Bits())) * int64(eb)
			copy(dst[do:do+int64(eb)], src[so:so+int64(eb)])
		}
	}
}

// TestLoadFractalMatchesGolden: over random shapes (block edges included),
// element widths 1, 2, 4 and 8 bytes, row strides and both orientations,
// with junk in the destination and between the source's rows, LoadFractal
// writes exactly the golden's bytes (the padding zero), and leaves the
// destination's bytes past the tile as they were.
func TestLoadFractalMatchesGolden(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	shapes := [][2]int{{1, 1}, {16, 16}, {16, 32}, {17, 33}, {32, 64}, {15, 31}, {0, 5}, {5, 0}}
	for range 80 {
		shapes = append(shapes, [2]int{r.IntN(70), r.IntN(70)})
	}
	for _, f := range []fp.Format{fp.INT8, fp.FP16, fp.BF16, fp.FP32, fp.FP64} {
		for _, sh := range shapes {
			for _, tr := range []bool{false, true} {
				rows, cols := sh[0], sh[1]
				srcRows, srcCols := rows, cols
				if tr {
					srcRows, srcCols = cols, rows
				}
				stride := int64(srcCols*f.Bytes() + r.IntN(3)*f.Bytes() + r.IntN(2))
				src := make([]byte, RowMajorSpan(rows, cols, stride, f, tr))
				for i := range src {
					src[i] = byte(r.Uint32())
				}
				_ = srcRows
				n := FractalBytes(rows, cols, f)
				want := make([]byte, n+7)
				for i := range want {
					want[i] = byte(r.Uint32())
				}
				got := bytes.Clone(want)
				loadFractalGolden(want, src, rows, cols, stride, f, tr)
				if err := LoadFractal(got, src, rows, cols, stride, f, tr); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, want) {
					t.Fatalf("%s %dx%d stride %d transpose=%v: differs from the golden", f, rows, cols, stride, tr)
				}
			}
		}
	}
}

// BenchmarkLoadFractal times LoadFractal on MMA operand tiles: the INT8 A
// of B200's Ozaki GEMM on thin matrices, an FP16 tile and its transpose.
func BenchmarkLoadFractal(b *testing.B) {
	for _, c := range []struct {
		r, c int
		f    fp.Format
		tr   bool
	}{{17, 128, fp.INT8, false}, {64, 64, fp.FP16, false}, {64, 64, fp.FP16, true}, {32, 32, fp.FP32, true}} {
		stride := int64(max(c.r, c.c) * c.f.Bytes())
		src := make([]byte, RowMajorSpan(c.r, c.c, stride, c.f, c.tr))
		dst := make([]byte, FractalBytes(c.r, c.c, c.f))
		name := fmt.Sprintf("%s-%dx%d-tr=%v", c.f, c.r, c.c, c.tr)
		b.Run(name+"/golden", func(b *testing.B) {
			for b.Loop() {
				loadFractalGolden(dst, src, c.r, c.c, stride, c.f, c.tr)
			}
		})
		b.Run(name+"/new", func(b *testing.B) {
			for b.Loop() {
				if err := LoadFractal(dst, src, c.r, c.c, stride, c.f, c.tr); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
