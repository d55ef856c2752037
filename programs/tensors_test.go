package programs

import (
	"os"
	"path/filepath"
	"testing"
)

// Outputs written with -o read back as the same 2-D float32 arrays.
func TestWriteOutputsRoundTrip(t *testing.T) {
	dir := t.TempDir()
	v := []float32{1, -2.5, 3, 4, 5, 6}
	if _, err := WriteOutputs(dir, []Output{{Name: "C", Shape: []int{2, 3}, F32: v}, {Name: "H", Shape: []int{6}, F16: []uint16{0x3c00, 0, 0, 0, 0, 0x4000}}}); err != nil {
		t.Fatal(err)
	}
	got, r, c, err := ReadNPYFloat32(filepath.Join(dir, "C.npy"))
	if err != nil {
		t.Fatal(err)
	}
	if r != 2 || c != 3 {
		t.Fatalf("shape %d×%d", r, c)
	}
	for i := range v {
		if got[i] != v[i] {
			t.Fatalf("element %d: %v want %v", i, got[i], v[i])
		}
	}
	b, _ := os.ReadFile(filepath.Join(dir, "C.npy"))
	if hl := int(b[8]) | int(b[9])<<8; (10+hl)%64 != 0 {
		t.Fatalf("header not 64-byte aligned: %d", 10+hl)
	}
	if _, err := os.Stat(filepath.Join(dir, "H.npy")); err != nil {
		t.Fatal(err)
	}
}
