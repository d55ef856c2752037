package cube

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/davinci-sim/davinci-sim/fp"
)

// Layout is the storage order of a tile in a buffer.
type Layout uint8

// The tile layouts.
const (
	// RowMajor: element (r, c) of an R×C matrix at r·C + c.
	RowMajor Layout = iota
	// Fractal: the Cube's blocked layout. The matrix is padded to whole
	// blocks of 16 rows × 16 columns (16 × 32 for 8-bit elements); blocks
	// are ordered row-major over the block grid and elements row-major
	// inside a block. See FractalIndex.
	Fractal
)

// String returns "row-major" or "fractal".
func (l Layout) String() string {
	switch l {
	case RowMajor:
		return "row-major"
	case Fractal:
		return "fractal"
	}
	return "layout?"
}

// FractalBlock returns the block shape (rows, columns) of the fractal
// layout for elements of elemBits bits: 16×16, or 16×32 for 8-bit elements.
func FractalBlock(elemBits int) (rows, cols int) {
	if elemBits <= 8 {
		return 16, 32
	}
	return 16, 16
}

// FractalIndex returns the buffer index of element (r, c) of a matrix with
// cols columns stored in the Fractal layout with elemBits-bit elements.
func FractalIndex(r, c, cols, elemBits int) int {
	br, bc := FractalBlock(elemBits)
	nbc := (cols + bc - 1) / bc
	return ((r/br)*nbc+c/bc)*br*bc + (r%br)*bc + c%bc
}

// LayoutLen returns the number of elements a buffer needs to hold a
// rows×cols matrix in layout l (the padded size for Fractal).
func LayoutLen(rows, cols int, l Layout, elemBits int) int {
	if l == Fractal {
		br, bc := FractalBlock(elemBits)
		return (rows + br - 1) / br * br * ((cols + bc - 1) / bc * bc)
	}
	return rows * cols
}

// layoutIndex is the index function for the layout.
func layoutIndex(l Layout, r, c, cols, elemBits int) int {
	if l == Fractal {
		return FractalIndex(r, c, cols, elemBits)
	}
	return r*cols + c
}

func checkTile(name string, n, rows, cols int, l Layout, elemBits int) error {
	if l != RowMajor && l != Fractal {
		return fmt.Errorf("cube: MMAD: %s: unknown layout %d", name, l)
	}
	if need := LayoutLen(rows, cols, l, elemBits); n < need {
		return fmt.Errorf("cube: MMAD: %s holds %d elements, a %d×%d %v tile needs %d", name, n, rows, cols, l, need)
	}
	return nil
}

// MMADF16 computes C(m×n) = A(m×k)·B(k×n) + (init ? 0 : C) with FP16
// inputs (bit patterns) and FP32 C, applying the model to every element:
// element (i, j) is Dot(fp16, row i of A, column j of B, C[i][j], fp32).
//
// Accumulation across calls: the K products of one call are taken in
// blocks of L in increasing k, each block's rounded result feeding the next
// as c, and the result is written to C. Successive calls with init = false
// therefore equal one call with the concatenated K exactly when every
// call's k is a multiple of the model's block length L (16 for the Ascend
// hypothesis, 8 for a100 fp16, …). Otherwise each call's last, short block
// is rounded on its own, so the result is that of the blocks as split by the
// calls (still deterministic; Sequential models have L = 1 and always chain
// exactly).
func (m Model) MMADF16(mm, k, n int, a []uint16, la Layout, b []uint16, lb Layout, c []float32, lc Layout, init bool) error {
	return mmadTyped(m, fp.FP16, mm, k, n, a, la, b, lb, c, lc, init)
}

// MMADBF16 is MMADF16 for BF16 inputs.
func (m Model) MMADBF16(mm, k, n int, a []uint16, la Layout, b []uint16, lb Layout, c []float32, lc Layout, init bool) error {
	return mmadTyped(m, fp.BF16, mm, k, n, a, la, b, lb, c, lc, init)
}

// MMAD is the general tile entry: inputs of format in (fp16, bf16, tf32,
// e4m3, e5m2 or fp32 as the model allows) given as bit patterns in the low
// bits of a and b (TF32 as FP32 patterns), C as FP32 bit patterns. For
// out = fp.FP16 the result is rounded to FP16 and stored widened to FP32
// bits (C's incoming values are first rounded to FP16 RNE, as in Dot). The
// fractal block shape follows the element width of in (16×32 for 8-bit
// inputs) for A and B, and 16×16 for C. Accumulation across calls: see
// MMADF16.
func (m Model) MMAD(in, out fp.Format, mm, k, n int, a []uint32, la Layout, b []uint32, lb Layout, c []uint32, lc Layout, init bool) error {
	kern, err := m.kernel(in, out)
	if err != nil {
		return err
	}
	getC := func(i int) uint32 { return c[i] }
	setC := func(i int, v uint32) { c[i] = v }
	if out == fp.FP32 && fastKindFor(kern, in) != fastNone {
		if err := checkMMAD(in.Bits(), mm, k, n, len(a), la, len(b), lb, len(c), lc); err != nil {
			return err
		}
		if fastMMAD(kern, in, mm, k, n, a, la, b, lb, c, lc, init) {
			return nil
		}
	}
	return runMMAD(kern, in.Bits(), mm, k, n, a, la, b, lb, lc, init, len(c), getC, setC)
}

func mmadTyped(m Model, in fp.Format, mm, k, n int, a []uint16, la Layout, b []uint16, lb Layout, c []float32, lc Layout, init bool) error {
	kern, err := m.kernel(in, fp.FP32)
	if err != nil {
		return err
	}
	getC := func(i int) uint32 { return math.Float32bits(c[i]) }
	setC := func(i int, v uint32) { c[i] = math.Float32frombits(v) }
	if fastKindFor(kern, in) != fastNone {
		if err := checkMMAD(16, mm, k, n, len(a), la, len(b), lb, len(c), lc); err != nil {
			return err
		}
		// C's float32 values as their bit patterns, in place.
		if fastMMAD(kern, in, mm, k, n, a, la, b, lb, unsafe.Slice((*uint32)(unsafe.Pointer(unsafe.SliceData(c))), len(c)), lc, init) {
			return nil
		}
	}
	return runMMAD(kern, 16, mm, k, n, a, la, b, lb, lc, init, len(c), getC, setC)
}

// runMMAD decodes A (row-major, one row per output row) and B (one column
// per output column, contiguous) once, then computes every element. getC
// and setC are called once per output element, never per product.
func runMMAD[T uint16 | uint32](kern *kernel, elemBits, mm, k, n int, a []T, la Layout, b []T, lb Layout, lc Layout, init bool,
	lenC int, getC func(int) uint32, setC func(int, uint32)) error {
	if mm < 0 || k < 0 || n < 0 {
		return fmt.Errorf("cube: MMAD: negative shape %d×%d×%d", mm, k, n)
	}
	if err := checkTile("A", len(a), mm, k, la, elemBits); err != nil {
		return err
	}
	if err := checkTile("B", len(b), k, n, lb, elemBits); err != nil {
		return err
	}
	if err := checkTile("C", lenC, mm, n, lc, 32); err != nil {
		return err
	}
	ad := make([]dec, mm*k)
	bd := make([]dec, n*k)
	rowSp := make([]bool, mm)
	colSp := make([]bool, n)
	for i := 0; i < mm; i++ {
		for kk := 0; kk < k; kk++ {
			d := kern.info.decode(uint32(a[layoutIndex(la, i, kk, k, elemBits)]))
			ad[i*k+kk] = d
			rowSp[i] = rowSp[i] || d.cls != clsFinite
		}
	}
	for kk := 0; kk < k; kk++ {
		for j := 0; j < n; j++ {
			d := kern.info.decode(uint32(b[layoutIndex(lb, kk, j, n, elemBits)]))
			bd[j*k+kk] = d
			colSp[j] = colSp[j] || d.cls != clsFinite
		}
	}
	for i := 0; i < mm; i++ {
		pa := ad[i*k : (i+1)*k]
		for j := 0; j < n; j++ {
			idx := layoutIndex(lc, i, j, n, 32)
			var cb uint32
			if !init {
				cb = getC(idx)
			}
			setC(idx, kern.dot(pa, bd[j*k:(j+1)*k], cb, rowSp[i] || colSp[j]))
		}
	}
	return nil
}
