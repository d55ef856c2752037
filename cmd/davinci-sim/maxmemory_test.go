package main

import (
	"runtime/debug"
	"testing"
)

// A run's bound is the Go runtime's soft memory limit while the command
// runs (the collector then keeps a run accepted near its bound under it:
// an A100 HGEMM 4530³ at --max-memory 1700MiB peaked at 2036 MiB without,
// 1665 MiB with), restored after; GOMEMLIMIT, where set, wins.
func TestLimitHeap(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	restore := limitHeap(64 << 20)
	if got := debug.SetMemoryLimit(-1); got != 64<<20 {
		t.Errorf("limit during the command: %d, want %d", got, 64<<20)
	}
	restore()
	if got := debug.SetMemoryLimit(-1); got != before {
		t.Errorf("limit after: %d, want %d", got, before)
	}
	t.Setenv("GOMEMLIMIT", "1GiB")
	restore = limitHeap(64 << 20)
	if got := debug.SetMemoryLimit(-1); got != before {
		t.Errorf("with GOMEMLIMIT: %d, want %d", got, before)
	}
	restore()
}
