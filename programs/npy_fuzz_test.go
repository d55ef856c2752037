package programs

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// npyHeader builds a version-1 .npy header for dict d.
func npyHeader(d string) []byte {
	h := []byte("\x93NUMPY\x01\x00")
	body := d
	for (10+len(body)+1)%64 != 0 {
		body += " "
	}
	body += "\n"
	h = append(h, byte(len(body)), byte(len(body)>>8))
	return append(h, body...)
}

// FuzzReadNPY feeds arbitrary bytes to the .npy reader: it must return an
// error of one line naming the file or a 2-D array whose length matches
// its shape (and CheckNPYFloat32's) — never panic, hang or allocate for a
// shape the file does not hold — and whose values are the file's, as an
// independent decoder reads them.
func FuzzReadNPY(f *testing.F) {
	ok := append(npyHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }"), make([]byte, 16)...)
	f.Add(ok)
	f.Add(append(npyHeader("{'descr': '<f8', 'fortran_order': False, 'shape': (1, 3), }"), make([]byte, 24)...))
	f.Add(append(npyHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (100000000, 100000000), }"), make([]byte, 16)...))
	f.Add(append(npyHeader("{'descr': '<i4', 'fortran_order': False, 'shape': (2, 2), }"), make([]byte, 16)...))
	f.Add(ok[:20])
	// Issue 18: a 14-byte version-2 file whose header claims 2 GiB; a shape
	// whose byte count overflows to the file's 872; a header of one byte.
	f.Add([]byte("\x93NUMPY\x02\x00\xff\xff\xff\x7f{\n"))
	f.Add(append(npyHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427388122, 1), }"), make([]byte, 872)...))
	f.Add([]byte("\x93NUMPY\x01\x00\x01\x00\n"))
	f.Add([]byte("\x93NUMPY\x03\x00\x03\x00\x00\x00{}\n"))
	// Other dtypes, orders and ranks; an empty array; a version-2 header.
	for _, d := range []string{
		"{'descr': '>f4', 'fortran_order': False, 'shape': (2, 2), }",
		"{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }",
		"{'descr': '<f2', 'fortran_order': False, 'shape': (2, 4), }",
		"{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }",
		"{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2, 2), }",
		"{'descr': '<f4', 'fortran_order': False, 'shape': (0, 4), }",
		"{'descr': '<f8', 'fortran_order': False, 'shape': (-1, -2), }",
	} {
		f.Add(append(npyHeader(d), make([]byte, 16)...))
	}
	v2 := npyHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }  ")
	v2 = append(append([]byte("\x93NUMPY\x02\x00"), byte(len(v2)-10), byte((len(v2)-10)>>8), 0, 0), v2[10:]...)
	f.Add(append(v2, make([]byte, 16)...))
	// Values of every kind (normal, subnormal, ±0, ±Inf, NaNs; float64s
	// that round, overflow and underflow as float32s).
	vals := []byte{0x00, 0x00, 0xc0, 0x7f, 0x01, 0x00, 0x00, 0x80, 0x00, 0x00, 0x80, 0xff, 0xdb, 0x0f, 0x49, 0x40}
	f.Add(append(npyHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }"), vals...))
	f.Add(append(npyHeader("{'descr': '<f8', 'fortran_order': False, 'shape': (1, 2), }"), append(vals, 0x18, 0x2d, 0x44, 0x54, 0xfb, 0x21, 0x09, 0x40)[8:]...))
	dir := f.TempDir()
	f.Fuzz(npyFuzzBody(dir, func(t *testing.T, path string) ([]float32, error) {
		v, rows, cols, err := ReadNPYFloat32(path)
		if err != nil {
			return nil, err
		}
		if rows < 0 || cols < 0 || len(v) != rows*cols {
			t.Fatalf("shape (%d, %d) but %d values", rows, cols, len(v))
		}
		r2, c2, err := CheckNPYFloat32(path)
		if err != nil || r2 != rows || c2 != cols {
			t.Fatalf("CheckNPYFloat32: (%d, %d) %v, read (%d, %d)", r2, c2, err, rows, cols)
		}
		return v, nil
	}))
}

// FuzzReadNPYArray does for the any-shape reader of asm tensors
// (ReadNPYArray, CheckNPYArray) what FuzzReadNPY does for the 2-D one:
// one line naming the file, or the file's values, as many as
// CheckNPYArray counts; the seeds add ranks 0, 1, 3 and 4 and shapes
// whose leading dimensions' product overflows.
func FuzzReadNPYArray(f *testing.F) {
	for _, d := range []string{
		"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }",
		"{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }",
		"{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }",
		"{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2, 2), }",
		"{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1, 2, 2), }",
		"{'descr': '<f4', 'fortran_order': False, 'shape': (), }",
		"{'descr': '<f4', 'fortran_order': False, 'shape': (0, 3, 0), }",
		"{'descr': '<f4', 'fortran_order': False, 'shape': (1099511627776, 1099511627776, 4), }",
		"{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296, 1), }",
		"{'descr': '<f4', 'fortran_order': False, 'shape': (-2, -2, 1), }",
		"{'descr': '<f4', 'fortran_order': True, 'shape': (2, 1, 2), }",
		"{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }",
	} {
		f.Add(append(npyHeader(d), make([]byte, 16)...))
	}
	dir := f.TempDir()
	f.Fuzz(npyFuzzBody(dir, func(t *testing.T, path string) ([]float32, error) {
		v, err := ReadNPYArray(path)
		if err != nil {
			return nil, err
		}
		if n, err := CheckNPYArray(path); err != nil || n != int64(len(v)) {
			t.Fatalf("CheckNPYArray: %d elements, %v; read %d", n, err, len(v))
		}
		return v, nil
	}))
}

// npyFuzzBody is the fuzz function of the .npy readers' targets: it writes
// data to a file in dir and reads it with read, which returns the values
// or the reader's error (and fails the test where the reader and its
// check disagree). The reader must return an error of one line naming the file, or the
// file's values as an independent decoder reads them, without allocating
// for a shape the file does not hold.
func npyFuzzBody(dir string, read func(t *testing.T, path string) ([]float32, error)) func(*testing.T, []byte) {
	return func(t *testing.T, data []byte) {
		path := filepath.Join(dir, "x.npy")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		before := heapAllocated()
		v, err := read(t, path)
		if n := heapAllocated() - before; n > uint64(64*len(data)+1<<20) {
			t.Fatalf("allocated %d bytes for a file of %d", n, len(data))
		}
		if err != nil {
			if msg := err.Error(); strings.Contains(msg, "\n") || !strings.HasPrefix(msg, path+": ") {
				t.Fatalf("error %q: want one line naming the file", msg)
			}
			return
		}
		// The values are the file's, as a decoder of our own reads them
		// (the reader is npyio behind checks of ours).
		want, ok := decodeNPY(data)
		if !ok {
			t.Fatalf("read %d values from a file the independent decoder refuses", len(v))
		}
		if len(want) != len(v) {
			t.Fatalf("%d values read, %d in the file", len(v), len(want))
		}
		for i := range v {
			if math.Float32bits(v[i]) != math.Float32bits(want[i]) {
				t.Fatalf("value %d: read %v (%#x), the file holds %v (%#x)", i, v[i], math.Float32bits(v[i]), want[i], math.Float32bits(want[i]))
			}
		}
	}
}

// npyDescr finds a header's descr: its byte order and type.
var npyDescr = regexp.MustCompile(`'descr':\s*'([<|=]?)(f4|f8|float32|float64)'`)

// decodeNPY decodes a version 1 or 2 .npy file of little-endian float32
// or float64 values in C order, independently of the reader under test:
// its values (float64 rounded to float32, as the reader narrows them),
// false where it is not such a file. The shape is the reader's to check.
func decodeNPY(data []byte) ([]float32, bool) {
	if len(data) < 10 || string(data[:6]) != "\x93NUMPY" {
		return nil, false
	}
	var start, hlen int
	switch data[6] {
	case 1:
		start, hlen = 10, int(binary.LittleEndian.Uint16(data[8:10]))
	case 2:
		if len(data) < 12 {
			return nil, false
		}
		start, hlen = 12, int(binary.LittleEndian.Uint32(data[8:12]))
	default:
		return nil, false
	}
	if hlen > len(data)-start {
		return nil, false
	}
	m := npyDescr.FindStringSubmatch(string(data[start : start+hlen]))
	if m == nil {
		return nil, false
	}
	body := data[start+hlen:]
	var out []float32
	if m[2] == "f4" || m[2] == "float32" {
		for i := 0; i+4 <= len(body); i += 4 {
			out = append(out, math.Float32frombits(binary.LittleEndian.Uint32(body[i:])))
		}
		return out, true
	}
	for i := 0; i+8 <= len(body); i += 8 {
		out = append(out, float32(math.Float64frombits(binary.LittleEndian.Uint64(body[i:]))))
	}
	return out, true
}

// A header the reader misparses (no comma after the shape: (4, 8) read as
// [4]) is refused naming both shapes; format 3.0 and a header whose keys
// come in another order are refused naming what is read; numpy.save's
// headers read (with a trailing comma, or a 1-tuple's).
func TestReadNPYHeaders(t *testing.T) {
	dir := t.TempDir()
	for i, c := range []struct {
		file []byte
		want string // "" = reads
	}{
		{append(npyHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (4, 8), }"), make([]byte, 128)...), ""},
		{append(npyHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (4, 8)}"), make([]byte, 128)...), "the header's shape [4 8] is misread here as [4]"},
		{append(npyHeader("{'shape': (4, 8), 'descr': '<f4', 'fortran_order': False, }"), make([]byte, 128)...), "malformed .npy header (read as numpy.save writes it"},
		{[]byte("\x93NUMPY\x03\x00\x03\x00\x00\x00{}\n"), "format version 3.0 is not read here"},
	} {
		path := filepath.Join(dir, fmt.Sprintf("%d.npy", i))
		if err := os.WriteFile(path, c.file, 0o644); err != nil {
			t.Fatal(err)
		}
		_, rows, cols, err := ReadNPYFloat32(path)
		switch {
		case c.want == "" && (err != nil || rows != 4 || cols != 8):
			t.Errorf("case %d: (%d, %d) %v", i, rows, cols, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("case %d: %v, want %q", i, err, c.want)
		}
	}
	if s, err := checkNPYHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (3L, 2L), }"); err != nil || !slices.Equal(s, []int{3, 2}) {
		t.Errorf("Python 2 longs: %v %v", s, err)
	}
	if s, err := checkNPYHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (7,), }"); err != nil || !slices.Equal(s, []int{7}) {
		t.Errorf("1-tuple: %v %v", s, err)
	}
}

// ReadNPYArray reads any rank of at least one dimension as its elements in
// C order, and refuses a scalar, a leading product beyond any tensor and a
// shape whose bytes the file does not hold, each on one line naming why.
func TestReadNPYArrayShapes(t *testing.T) {
	dir := t.TempDir()
	vals := make([]byte, 16)
	for i := range 4 {
		binary.LittleEndian.PutUint32(vals[4*i:], math.Float32bits(float32(i+1)))
	}
	for i, c := range []struct {
		shape string
		want  string // "" = reads 1, 2, 3, 4
	}{
		{"(4,)", ""},
		{"(2, 2)", ""},
		{"(1, 2, 2)", ""},
		{"(2, 1, 1, 2)", ""},
		{"()", "expected an array of at least one dimension, got a scalar"},
		{"(1099511627776, 1099511627776, 4)", "more elements than any tensor holds"},
		{"(2, 2, 2)", "needs 32 data bytes, the file has 16"},
	} {
		path := filepath.Join(dir, fmt.Sprintf("%d.npy", i))
		file := append(npyHeader("{'descr': '<f4', 'fortran_order': False, 'shape': "+c.shape+", }"), vals...)
		if err := os.WriteFile(path, file, 0o644); err != nil {
			t.Fatal(err)
		}
		v, err := ReadNPYArray(path)
		n, cerr := CheckNPYArray(path)
		switch {
		case c.want == "" && (err != nil || cerr != nil || n != 4 || !slices.Equal(v, []float32{1, 2, 3, 4})):
			t.Errorf("shape %s: %v (%v), check %d (%v)", c.shape, v, err, n, cerr)
		case c.want != "" && (err == nil || cerr == nil || !strings.Contains(err.Error(), c.want) || err.Error() != cerr.Error()):
			t.Errorf("shape %s: %v, check %v; want %q from both", c.shape, err, cerr, c.want)
		}
	}
}
