package programs

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/davinci-sim/davinci-sim/badinput"
	"github.com/davinci-sim/davinci-sim/fp"
	"github.com/davinci-sim/davinci-sim/outfile"
	"github.com/sbinet/npyio"
)

// Distribution names for generated inputs.
const (
	DistUniform        = "uniform"        // symmetric: U[−2^e, 2^e]
	DistUniformNonneg  = "uniform-nonneg" // U[0, 2^e]
	DistZero           = "zero"
	DistUniformBetween = "between" // U[low, high]
)

// NewRand returns the deterministic generator used for all program inputs:
// PCG seeded from (seed, stream), so that A and B of one seed differ.
func NewRand(seed int64, stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(seed), stream))
}

// UniformFP32 returns n FP32 values from U[lo, hi] (rounded to FP32 RNE).
func UniformFP32(r *rand.Rand, n int, lo, hi float64) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = float32(lo + float64((hi-lo)*r.Float64()))
	}
	return out
}

// ReadNPYFloat32 reads a 2-D .npy file as float32 (float64 files are
// rounded to FP32 RNE) and returns its rows and
// columns.
func ReadNPYFloat32(path string) (_ []float32, _, _ int, err error) {
	v, rows, cols, _, err := readNPYAsFloat32(path)
	return v, rows, cols, err
}

// readNPYAsFloat32 is ReadNPYFloat32, also saying whether the file held
// float64 values (rounded).
func readNPYAsFloat32(path string) (_ []float32, _, _ int, rounded bool, err error) {
	v32, v64, rows, cols, err := readNPY(path, true)
	if v64 != nil {
		v32 = make([]float32, len(v64))
		for i, x := range v64 {
			v32[i] = float32(x)
		}
	}
	return v32, rows, cols, v64 != nil, err
}

// ReadNPYFloat64 reads a 2-D float64 (or float32, widened exactly) .npy
// file and returns the data (row-major) and its shape.
func ReadNPYFloat64(path string) (_ []float64, _, _ int, err error) {
	v32, v64, rows, cols, err := readNPY(path, true)
	if v32 != nil {
		v64 = make([]float64, len(v32))
		for i, x := range v32 {
			v64[i] = float64(x)
		}
	}
	return v64, rows, cols, err
}

// CheckNPYFloat32 checks what ReadNPYFloat32 checks (a readable 2-D
// float32 or float64 array whose shape matches its size) without reading
// the data, and returns the shape.
func CheckNPYFloat32(path string) (rows, cols int, err error) {
	_, _, rows, cols, err = readNPY(path, false)
	return rows, cols, err
}

// readNPY reads a 2-D float32 or float64 .npy file — its data (in the
// slice of its type) only when withData is set — and its shape.
func readNPY(path string, withData bool) (_ []float32, _ []float64, _, _ int, err error) {
	if err := badinput.NotPipe(path); err != nil {
		return nil, nil, 0, 0, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, 0, 0, err
	}
	defer f.Close()
	header, off, err := checkNPYPreamble(f)
	if err != nil {
		return nil, nil, 0, 0, fmt.Errorf("%s: %v", path, err)
	}
	// npyio panics on some malformed headers the preamble check lets
	// through: that is bad input, not a crash.
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%s: malformed .npy header (read as numpy.save writes it: a dictionary of descr, fortran_order and shape, in that order)", path)
		}
	}()
	// Buffered: npyio reads the data a value at a time (3 MB/s from the
	// file itself; 64 MB took 15–22 s, 0.6 s buffered).
	size := int64(1 << 20)
	if st, err := f.Stat(); err == nil {
		size = min(size, max(st.Size(), 64)) // (a small file, a small buffer)
	}
	r, err := npyio.NewReader(bufio.NewReaderSize(f, int(size)))
	if err != nil {
		return nil, nil, 0, 0, fmt.Errorf("%s: %v (the header is read as numpy.save writes it: {'descr': …, 'fortran_order': …, 'shape': (…), })", path, err)
	}
	shape := r.Header.Descr.Shape
	if want, ok := headerShape(header); ok && !slices.Equal(want, shape) {
		// A header numpy would read that the reader misreads (no
		// trailing comma after the shape: (4, 8) read as [4]).
		return nil, nil, 0, 0, fmt.Errorf("%s: the header's shape %v is misread here as %v (its layout is not numpy.save's): save the array again with numpy.save", path, want, shape)
	}
	if len(shape) != 2 {
		return nil, nil, 0, 0, fmt.Errorf("%s: expected a 2-D array, got shape %v", path, shape)
	}
	if r.Header.Descr.Fortran {
		return nil, nil, 0, 0, fmt.Errorf("%s: Fortran-ordered arrays are not supported; save with np.ascontiguousarray", path)
	}
	rows, cols := shape[0], shape[1]
	item := int64(0)
	switch r.Header.Descr.Type {
	case "<f4", "f4", "float32":
		item = 4
	case "<f8", "f8", "float64":
		item = 8
	}
	// The shape must describe exactly the bytes the file holds (a corrupt
	// header must not make the reader allocate for data that is not there).
	if item > 0 {
		st, err := f.Stat()
		if err != nil {
			return nil, nil, 0, 0, fmt.Errorf("%s: %v", path, err)
		}
		data := st.Size() - off
		if rows < 0 || cols < 0 {
			return nil, nil, 0, 0, fmt.Errorf("%s: shape (%d, %d): dimensions must be ≥ 0", path, rows, cols)
		}
		hi, need := bits.Mul64(uint64(rows), uint64(cols))
		hi2, need2 := bits.Mul64(need, uint64(item))
		if hi != 0 || hi2 != 0 || need2 > math.MaxInt64 {
			return nil, nil, 0, 0, fmt.Errorf("%s: shape (%d, %d) of %s needs more than 2^63 data bytes, the file has %d",
				path, rows, cols, r.Header.Descr.Type, data)
		}
		if int64(need2) != data {
			return nil, nil, 0, 0, fmt.Errorf("%s: shape (%d, %d) of %s needs %d data bytes, the file has %d",
				path, rows, cols, r.Header.Descr.Type, need2, data)
		}
		if !withData {
			return nil, nil, rows, cols, nil
		}
	}
	switch r.Header.Descr.Type {
	case "<f4", "f4", "float32":
		var v []float32
		if err := r.Read(&v); err != nil {
			return nil, nil, 0, 0, fmt.Errorf("%s: %v", path, err)
		}
		return v, nil, rows, cols, nil
	case "<f8", "f8", "float64":
		var v []float64
		if err := r.Read(&v); err != nil {
			return nil, nil, 0, 0, fmt.Errorf("%s: %v", path, err)
		}
		return nil, v, rows, cols, nil
	}
	return nil, nil, 0, 0, fmt.Errorf("%s: dtype %s not supported (float32, float64)", path, r.Header.Descr.Type)
}

// maxNPYHeader bounds the header of a .npy file (numpy itself refuses
// headers above 10 000 bytes unless told otherwise).
const maxNPYHeader = 1 << 20

// headerShape returns the shape a .npy header's text gives ('shape':
// (4, 8)), read on its own to check the reader's; ok false where the text
// has no such tuple of integers.
func headerShape(h string) (shape []int, ok bool) {
	m := npyShapeRE.FindStringSubmatch(h)
	if m == nil {
		return nil, false
	}
	for _, d := range strings.Split(m[1], ",") {
		d = strings.TrimSuffix(strings.TrimSpace(d), "L") // (Python 2's longs)
		if d == "" {
			continue // (the trailing comma of (4,))
		}
		v, err := strconv.Atoi(d)
		if err != nil {
			return nil, false
		}
		shape = append(shape, v)
	}
	return shape, true
}

var npyShapeRE = regexp.MustCompile(`['"]shape['"]\s*:\s*\(([^)]*)\)`)

// checkNPYPreamble checks the magic, version and header length of the .npy
// file f against the file's size before npyio allocates for the header,
// and returns the header's text and where the data start, leaving f at
// its start.
func checkNPYPreamble(f *os.File) (header string, dataOffset int64, err error) {
	st, err := f.Stat()
	if err != nil {
		return "", 0, err
	}
	var pre [12]byte
	n, _ := io.ReadFull(f, pre[:])
	if n < 10 || string(pre[:6]) != "\x93NUMPY" {
		return "", 0, errors.New("not a .npy file (no \\x93NUMPY magic)")
	}
	var hlen, start int64
	switch pre[6] {
	case 1:
		hlen, start = int64(binary.LittleEndian.Uint16(pre[8:10])), 10
	case 3:
		// (The reader takes 1.0 and 2.0; numpy writes 3.0 only for
		// structured dtypes with non-Latin-1 field names.)
		return "", 0, errors.New("format version 3.0 is not read here (1.0 or 2.0, as numpy.save writes a float32 or float64 array)")
	case 2:
		if n < 12 {
			return "", 0, errors.New("malformed .npy file: the header length is cut short")
		}
		hlen, start = int64(binary.LittleEndian.Uint32(pre[8:12])), 12
	default:
		return "", 0, fmt.Errorf("unsupported .npy format version %d.%d (1.0 or 2.0)", pre[6], pre[7])
	}
	switch {
	case hlen > maxNPYHeader:
		return "", 0, fmt.Errorf("malformed .npy file: header of %d bytes, at most %d", hlen, maxNPYHeader)
	case start+hlen > st.Size() && st.Mode().IsRegular():
		return "", 0, fmt.Errorf("malformed .npy file: the header claims %d bytes, the file has %d after the preamble", hlen, st.Size()-start)
	case hlen < 2:
		return "", 0, fmt.Errorf("malformed .npy file: header of %d bytes", hlen)
	}
	buf := make([]byte, hlen)
	if _, err := f.ReadAt(buf, start); err != nil {
		return "", 0, fmt.Errorf("malformed .npy file: %v", err)
	}
	_, err = f.Seek(0, io.SeekStart)
	return string(buf), start + hlen, err
}

// WriteOutputs writes each output as DIR/NAME.npy, atomically (package
// outfile), and returns the file names written. A name that is not a plain
// file name (CheckOutputName) is refused before anything is written.
func WriteOutputs(dir string, outs []Output) ([]string, error) {
	for _, o := range outs {
		if err := CheckOutputName(o.Name); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var names []string
	for _, o := range outs {
		path := filepath.Join(dir, o.Name+".npy")
		err := outfile.Write(path, func(f io.Writer) error {
			switch {
			case o.F32 != nil:
				return writeNPY(f, o.F32, o.Shape)
			case o.F16 != nil:
				return writeNPYf16(f, o.F16, o.Shape)
			case o.F64 != nil:
				return writeNPYAs(f, "<f8", o.F64, o.Shape)
			case o.I32 != nil:
				return writeNPYAs(f, "<i4", o.I32, o.Shape)
			case o.I8 != nil:
				return writeNPYAs(f, "|i1", o.I8, o.Shape)
			}
			return nil
		})
		if err != nil {
			return names, fmt.Errorf("%s: %v", path, err)
		}
		names = append(names, o.Name+".npy")
	}
	return names, nil
}

// CheckOutputName reports whether name can name an output array written
// as DIR/NAME.npy: a plain file name of letters, digits, '_', '-' and '.',
// not starting with '.' — never a path that could leave DIR.
func CheckOutputName(name string) error {
	ok := name != "" && name[0] != '.' && len(name) <= 200
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.') {
			ok = false
		}
	}
	if !ok {
		return fmt.Errorf("output name %q: must be a plain file name (letters, digits, _ - .; not starting with .)", name)
	}
	return nil
}

// writeNPY writes v as a little-endian float32 array of the given shape
// (row-major). npyio writes 1-D slices itself; it derives a 2-D shape only
// from fixed-size arrays or gonum's float64 matrices, so 2-D float32 arrays
// get their (version 1.0) header written here and the data from npyio's
// encoding of the flat slice.
func writeNPY(f io.Writer, v []float32, shape []int) error {
	if len(shape) != 2 {
		return npyio.Write(f, v)
	}
	return writeNPYAs(f, "<f4", v, shape)
}

// writeNPYAs writes a 2-D array of fixed-size values with numpy type descr
// (e.g. <f4, <i4, |i1).
func writeNPYAs[T float32 | float64 | int32 | int8](f io.Writer, descr string, v []T, shape []int) error {
	dims := fmt.Sprintf("(%d, %d)", shape[0], shape[1])
	dict := "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + dims + ", }"
	// Magic (6) + version (2) + header length (2) + dict + padding + '\n'
	// must be a multiple of 64.
	pad := 64 - (10+len(dict)+1)%64
	if pad == 64 {
		pad = 0
	}
	hdr := dict + strings.Repeat(" ", pad) + "\n"
	buf := []byte("\x93NUMPY\x01\x00")
	buf = binary.LittleEndian.AppendUint16(buf, uint16(len(hdr)))
	buf = append(buf, hdr...)
	if _, err := f.Write(buf); err != nil {
		return err
	}
	return binary.Write(f, binary.LittleEndian, v)
}

// writeNPYf16 writes FP16 patterns as float32 values (numpy reads both; the
// values are exact), keeping the file readable without float16 support.
func writeNPYf16(f io.Writer, v []uint16, shape []int) error {
	out := make([]float32, len(v))
	for i, h := range v {
		out[i] = fp.F16ToF32(h)
	}
	return writeNPY(f, out, shape)
}

// pow2 returns 2^e.
func pow2(e int) float64 { return math.Ldexp(1, e) }
