package badinput

import (
	"errors"
	"fmt"
	"testing"
)

// A refusal for host memory keeps its message and its kind (bad input or
// not), and its bound is found through any wrapping.
func TestHostMemory(t *testing.T) {
	base := errors.New(`p.yaml: key "numerics": full numerics on 2048×2048×2048 needs about 624MiB of host memory, more than the run may take (512MiB, --max-memory); use sampled or off`)
	err := Wrap(HostMemory(base, 512<<20))
	if err.Error() != base.Error() || !Is(err) || !errors.Is(err, base) {
		t.Errorf("marked: %q, bad input %v, wraps the refusal %v", err, Is(err), errors.Is(err, base))
	}
	if b, ok := HostMemoryBound(fmt.Errorf("point: %w", err)); !ok || b != 512<<20 {
		t.Errorf("HostMemoryBound = %d, %v; want 512 MiB", b, ok)
	}
	if Is(HostMemory(base, 1)) {
		t.Errorf("HostMemory made the refusal bad input: the wrapped error's kind is kept")
	}
	if _, ok := HostMemoryBound(Wrap(base)); ok || HostMemory(nil, 1) != nil {
		t.Errorf("an unmarked error taken as a refusal for host memory, or nil marked")
	}
}
