package programs

import (
	"strings"
	"testing"
)

// An FP16 trailing matrix too large for the HPL-MxP matrix's diagonal
// (about (n − 1)/4, beyond 65504 from n = 262018) is noted; fp32, or a
// diagonal that fits, is not.
func TestFP16DiagonalNote(t *testing.T) {
	for _, c := range []struct {
		trailing string
		n        int
		noted    bool
	}{
		{"fp16", 262017, false}, {"fp16", 262018, true}, {"fp16", 524288, true}, {"fp32", 1 << 21, false},
	} {
		note := fp16DiagonalNote(c.trailing, c.n)
		if (note != "") != c.noted || c.noted && !strings.Contains(note, "saturates") {
			t.Errorf("%s n = %d: note %q, want noted %v", c.trailing, c.n, note, c.noted)
		}
	}
}
