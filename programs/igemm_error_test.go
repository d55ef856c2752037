package programs

import (
	"math"
	"testing"
)

// An INT32 GEMM whose sums wrap reports relative errors beside the
// absolute one (it reported rel_fro 0, max_rel 0 and bits 0 beside a
// max_err of 2^32: an exact result by its relative figures); one whose
// sums are exact, bits 31 and no error.
func TestIntGEMMErrors(t *testing.T) {
	var exact intGEMMErrors
	for _, v := range []int64{0, 5, -7, 1 << 30} {
		exact.add(v, int32(v))
	}
	if r := exact.report(false); r.Bits != 31 || r.RelFro != 0 || r.MaxErr != 0 || r.Elements != 4 {
		t.Errorf("exact: %+v", r)
	}
	var wrapped intGEMMErrors
	big := int64(1)<<31 + 5 // wraps to −2^31 + 5
	for _, v := range []int64{100, -100, big} {
		wrapped.add(v, int32(v))
	}
	r := wrapped.report(true)
	d := float64(big) - float64(int32(big))
	if r.MaxErr != d || math.Abs(r.MaxRel-d/float64(big)) > 1e-12 || !(r.RelFro > 1) || r.Bits != 0 || !r.Sampled {
		t.Errorf("wrapped: %+v, want max_err %g, max_rel %g, rel_fro above 1, bits 0", r, d, d/float64(big))
	}
}
