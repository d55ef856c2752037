package main

import (
	"runtime/debug"
	"strings"
	"testing"

	"github.com/davinci-sim/davinci-sim/hostmem"
)

// A run's bound, less what the process holds outside the heap or past
// the limit (hostmem.HeapLimit: 32 MiB), is the Go runtime's soft memory
// limit while the command runs (the collector then keeps a run accepted
// near its bound under it: an A100 HGEMM 4530³ at --max-memory 1700MiB
// peaked at 2036 MiB without, 1665 MiB with), restored after; GOMEMLIMIT,
// where set, wins.
func TestLimitHeap(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	restore := limitHeap(64 << 20)
	if got := debug.SetMemoryLimit(-1); got != 32<<20 {
		t.Errorf("limit during the command: %d, want %d", got, 32<<20)
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

// run's --max-memory has one meaning, said in its help: the run's whole
// estimate — its base, its data and its chip model(s) together —, what
// is left going to a trace's events; not the data's alone.
func TestRunMaxMemoryHelpOneMeaning(t *testing.T) {
	fl := newRunCmd().Flags().Lookup("max-memory")
	if fl == nil {
		t.Fatal("run has no --max-memory")
	}
	for _, want := range []string{"the run may take by its estimate", "its base, its data and its chip model(s) together", "the trace's events get what that leaves"} {
		if !strings.Contains(fl.Usage, want) {
			t.Errorf("--max-memory help %q: does not say %q", fl.Usage, want)
		}
	}
	if strings.Contains(fl.Usage, "data may take") {
		t.Errorf("--max-memory help %q: still bounds the data alone", fl.Usage)
	}
}

// A --max-memory above the host's memory is accepted with a note saying
// a run may still run out of memory; within it, or the default, nothing.
func TestNoteAboveHost(t *testing.T) {
	total, ok := hostmem.Total()
	if !ok {
		t.Skip("the host's memory cannot be read here")
	}
	for _, c := range []struct {
		bound int64
		note  bool
	}{{0, false}, {total / 2, false}, {total, false}, {total + 1<<30, true}, {maxMemoryLimit, true}} {
		var b strings.Builder
		noteAboveHost(&b, c.bound)
		if got := b.String(); c.note != strings.HasPrefix(got, "note: --max-memory ") || strings.Count(got, "\n") > 1 {
			t.Errorf("bound %d (host %d): %q, want a note %v", c.bound, total, got, c.note)
		}
	}
}

// TestParseMaxMemoryFraction: a bound given with a fraction of a byte
// ("1.4GiB") rounds down rather than being refused as not whole.
func TestParseMaxMemoryFraction(t *testing.T) {
	got, err := parseMaxMemory("1.4GiB", "x")
	if want := int64(1503238553); err != nil || got != want {
		t.Errorf("1.4GiB: %d, %v; want %d", got, err, want)
	}
	if _, err := parseMaxMemory("1.4GiC", "x"); err == nil {
		t.Error("1.4GiC: no error")
	}
}
