package fp

import (
	"math"
	"testing"
)

// FP64 has no 32-bit pattern: the conversions take it as they take an
// invalid format (0, NaN), not as garbage (Quantize(1.5, FP64) returned 0,
// Quantize(0.1, FP64) 1.27e-314, ToFloat64(0x3ff8, FP64) 8.09e-320).
func TestFP64NotPatterned(t *testing.T) {
	for _, x := range []float64{1.5, 0.1, -2, math.Inf(1), math.NaN(), 0} {
		if b := FromFloat64(x, FP64, Options{}); b != 0 {
			t.Errorf("FromFloat64(%v, FP64) = %#x, want 0", x, b)
		}
		if b := FromFloat32(float32(x), FP64, Options{}); b != 0 {
			t.Errorf("FromFloat32(%v, FP64) = %#x, want 0", x, b)
		}
	}
	if v := ToFloat64(0x3ff8, FP64); !math.IsNaN(v) {
		t.Errorf("ToFloat64(0x3ff8, FP64) = %v, want NaN", v)
	}
	if v := Quantize(1.5, FP64, Options{}); !math.IsNaN(v) {
		t.Errorf("Quantize(1.5, FP64) = %v, want NaN", v)
	}
}
