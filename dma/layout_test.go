package dma

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/davinci-sim/davinci-sim/cube"
	"github.com/davinci-sim/davinci-sim/fp"
)

func TestFractalBytesPads(t *testing.T) {
	cases := []struct {
		r, c int
		f    fp.Format
		want int64
	}{{16, 16, fp.FP16, 512}, {17, 16, fp.FP16, 1024}, {1, 1, fp.FP32, 1024}, {32, 48, fp.FP16, 3072}, {16, 33, fp.INT8, 16 * 64}}
	for _, c := range cases {
		if got := FractalBytes(c.r, c.c, c.f); got != c.want {
			t.Errorf("FractalBytes(%d, %d, %v) = %d, want %d", c.r, c.c, c.f, got, c.want)
		}
	}
}

// LoadFractal places element (i, j) where cube.FractalIndex says, with and
// without transpose, and zero-fills the padding.
func TestLoadFractal(t *testing.T) {
	for _, tr := range []bool{false, true} {
		r, c := 19, 35
		srcRows, srcCols := r, c
		if tr {
			srcRows, srcCols = c, r
		}
		stride := int64(srcCols*2 + 6)
		src := make([]byte, int64(srcRows)*stride)
		val := func(i, j int) uint16 { return uint16(i*100 + j + 1) }
		for i := 0; i < r; i++ {
			for j := 0; j < c; j++ {
				si, sj := i, j
				if tr {
					si, sj = j, i
				}
				binary.LittleEndian.PutUint16(src[int64(si)*stride+int64(sj*2):], val(i, j))
			}
		}
		dst := make([]byte, FractalBytes(r, c, fp.FP16))
		for i := range dst {
			dst[i] = 0xff
		}
		if err := LoadFractal(dst, src, r, c, stride, fp.FP16, tr); err != nil {
			t.Fatal(err)
		}
		nonzero := 0
		for i := 0; i < len(dst); i += 2 {
			if binary.LittleEndian.Uint16(dst[i:]) != 0 {
				nonzero++
			}
		}
		if nonzero != r*c {
			t.Fatalf("transpose=%v: %d nonzero elements, want %d (padding must be zero)", tr, nonzero, r*c)
		}
		for i := 0; i < r; i++ {
			for j := 0; j < c; j++ {
				got := binary.LittleEndian.Uint16(dst[2*cube.FractalIndex(i, j, c, 16):])
				if got != val(i, j) {
					t.Fatalf("transpose=%v: (%d,%d) = %d, want %d", tr, i, j, got, val(i, j))
				}
			}
		}
	}
	if err := LoadFractal(make([]byte, 10), make([]byte, 1000), 16, 16, 32, fp.FP16, false); err == nil {
		t.Fatal("short destination must fail")
	}
}

func TestFractalRowConverts(t *testing.T) {
	rows, cols := 3, 20
	src := make([]byte, FractalBytes(rows, cols, fp.FP32))
	vals := func(r, c int) float32 { return float32(r*cols+c) + 1.0/3 }
	for r := 0; r < rows; r++ {
		for c := 0; c < cols; c++ {
			binary.LittleEndian.PutUint32(src[4*cube.FractalIndex(r, c, cols, 32):], math.Float32bits(vals(r, c)))
		}
	}
	row32 := make([]byte, cols*4)
	row16 := make([]byte, cols*2)
	for r := 0; r < rows; r++ {
		if err := FractalRow(row32, src, r, rows, cols, fp.FP32, fp.FP32, fp.RNE, false); err != nil {
			t.Fatal(err)
		}
		if err := FractalRow(row16, src, r, rows, cols, fp.FP32, fp.FP16, fp.RZ, true); err != nil {
			t.Fatal(err)
		}
		for c := 0; c < cols; c++ {
			if got := math.Float32frombits(binary.LittleEndian.Uint32(row32[4*c:])); got != vals(r, c) {
				t.Fatalf("fp32 (%d,%d) = %v", r, c, got)
			}
			want := fp.F32ToF16(vals(r, c), fp.RZ)
			if got := binary.LittleEndian.Uint16(row16[2*c:]); got != want {
				t.Fatalf("fp16 (%d,%d) = %#x, want %#x", r, c, got, want)
			}
		}
	}
	// Saturation: 70000 → 65504 (Ascend default), IEEE → +Inf.
	binary.LittleEndian.PutUint32(src[0:], math.Float32bits(70000))
	_ = FractalRow(row16, src, 0, rows, cols, fp.FP32, fp.FP16, fp.RNE, true)
	if got := binary.LittleEndian.Uint16(row16); got != 0x7bff {
		t.Fatalf("saturated %#x, want 0x7bff", got)
	}
	_ = FractalRow(row16, src, 0, rows, cols, fp.FP32, fp.FP16, fp.RNE, false)
	if got := binary.LittleEndian.Uint16(row16); got != 0x7c00 {
		t.Fatalf("IEEE %#x, want +Inf", got)
	}
}
