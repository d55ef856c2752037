package fp

import "testing"

// FP64 is a storage format: 64 bits in 8 bytes, parsed by name, valid, and
// left out of Formats (its values travel as float64, not uint32 patterns).
func TestFP64Format(t *testing.T) {
	if FP64.Bits() != 64 || FP64.Bytes() != 8 || !FP64.Valid() || FP64.String() != "fp64" || FP64.MantBits() != 52 {
		t.Errorf("FP64: bits %d bytes %d valid %v name %q mantissa %d", FP64.Bits(), FP64.Bytes(), FP64.Valid(), FP64.String(), FP64.MantBits())
	}
	if f, ok := ParseFormat("double"); !ok || f != FP64 {
		t.Errorf("ParseFormat(double) = %v %v", f, ok)
	}
	for _, f := range Formats() {
		if f == FP64 {
			t.Error("Formats lists FP64")
		}
	}
}
