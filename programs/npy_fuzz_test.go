package programs

import (
	"os"
	"path/filepath"
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
// error or a 2-D array whose length matches its shape — never panic, hang
// or allocate for a shape the file does not hold.
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
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, "x.npy")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		v, rows, cols, err := ReadNPYFloat32(path)
		if err == nil && (rows < 0 || cols < 0 || len(v) != rows*cols) {
			t.Fatalf("shape (%d, %d) but %d values", rows, cols, len(v))
		}
	})
}
