package arch

import (
	"runtime"
	"testing"
)

// AllocBytes is what the runtime takes for an object: the heap grows by
// it for each of many objects of a size, below and above the largest size
// class (its table is the runtime's, which a Go release may change).
func TestAllocBytesMatchesRuntime(t *testing.T) {
	heap := func() uint64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	for _, n := range []int64{1568, 3500, 4152, 7000, 7936, 31744, 40000} {
		const k = 1024
		keep := make([][]byte, k)
		before := heap()
		for i := range keep {
			keep[i] = make([]byte, n)
		}
		per := float64(heap()-before) / k
		runtime.KeepAlive(keep)
		if got := AllocBytes(n); float64(got) < 0.97*per || float64(got) > 1.03*per {
			t.Errorf("AllocBytes(%d) = %d; the runtime took %.0f bytes an object", n, got, per)
		}
	}
	if AllocBytes(0) != 0 || AllocBytes(-1) != 0 || AllocBytes(1<<62+1) != 1<<62 {
		t.Error("AllocBytes: not 0 for no bytes, or not saturating")
	}
}
