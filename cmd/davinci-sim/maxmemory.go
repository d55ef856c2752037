package main

import (
	"fmt"
	"io"
	"os"
	"runtime/debug"

	"github.com/davinci-sim/davinci-sim/hostmem"
	"github.com/davinci-sim/davinci-sim/machines"
	"github.com/davinci-sim/davinci-sim/programs"
)

// maxMemoryLimit bounds --max-memory: beyond any host's memory.
const maxMemoryLimit = 1 << 50

// maxMemoryHelp is the help of a --max-memory flag bounding what: its
// default named from this host. A run's bound is its whole estimate —
// its base, its data and its chip model(s) together (programs.HostBytes,
// the sum sweep admits points by) —, not any one of them.
func maxMemoryHelp(what string) string {
	return fmt.Sprintf("host memory %s, e.g. 64GiB (default: %s)", what, programs.DefaultMaxHostText())
}

// parseMaxMemory reads a --max-memory value bounding what: a size in
// 1MiB..1024TiB, or "" for the host's default (0).
func parseMaxMemory(v, what string) (int64, error) {
	if v == "" {
		return 0, nil
	}
	b, err := machines.ParseSizeDown(v) // (1.4GiB: a fraction of a byte does not matter to a bound)
	if err != nil {
		return 0, fmt.Errorf("--max-memory: %v", err) // (what is wrong with the size: a lowercase b, a unit)
	}
	if b < 1<<20 || b > maxMemoryLimit {
		return 0, fmt.Errorf("--max-memory %q: must be a size in 1MiB..%dTiB (%s), e.g. 64GiB", v, maxMemoryLimit>>40, what)
	}
	return int64(b), nil
}

// noteAboveHost says, on w, when a --max-memory bound exceeds what this
// host's memory (or its container's limit) holds: a run accepted under it
// may still die out of memory (the bound is not checked against the host:
// a larger swap, or a study file carried to a larger host, may be meant).
func noteAboveHost(w io.Writer, bound int64) {
	total, ok := hostmem.Total()
	if bound <= 0 || !ok || bound <= total {
		return
	}
	fmt.Fprintf(w, "note: --max-memory %s is above this host's %s of memory: a run estimated up to it can still run out of memory here\n", mib(bound), mib(total))
}

// limitHeap sets the Go runtime's soft memory limit to hostmem.HeapLimit
// of bound (0: the host's default, programs.DefaultMaxHostBytes) — the
// bound less what the process holds outside the limit or past it — until
// restore is called, unless GOMEMLIMIT sets one. The host-memory checks'
// figures are measured under the collector's default pacing, which lets
// the heap grow to twice what is live: an A100 HGEMM accepted at
// --max-memory 1700MiB peaked at 2036 MiB. With the limit the collector
// works harder near the bound instead (a run well under it is not
// affected). At the bound itself a run whose trace filled what the bound
// left it peaked 10–20 % above it (hgemm 8192³ under 150MiB: 162–180 MiB;
// with HeapLimit 134–137 MiB).
func limitHeap(bound int64) (restore func()) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	if bound <= 0 {
		bound = programs.DefaultMaxHostBytes()
	}
	before := debug.SetMemoryLimit(hostmem.HeapLimit(bound))
	return func() { debug.SetMemoryLimit(before) }
}
