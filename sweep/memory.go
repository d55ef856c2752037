package sweep

import (
	"context"
	"sync"

	"github.com/davinci-sim/davinci-sim/programs"
)

// The points a sweep runs at once hold their host memory together: each
// run may take up to the single-run bound (programs refuses numerics whose
// estimate passes programs.DefaultMaxHostBytes, 3/4 of the host's memory,
// or the budget where that is larger: Options.pointHostBytes),
// and -j defaults to every CPU, so two large points at once could exhaust
// the machine (Go's "fatal error: out of memory"). Points are therefore
// admitted, in index order, while the host memory estimated for the points
// running stays within a budget (Options.MemoryBudget, by default the
// single-run bound); a point whose estimate alone is past the budget runs
// alone. Which point runs when changes nothing in the results: each
// point's record is its own, and the files are sorted.
//
// The estimate is programs.HostBytes: the run's base, the program's data
// by its kind, and the chip model of the point's machine (after the
// point's values) in its mode, arch.Footprint — the estimate by which the
// point's run refuses a model past its bound: the two agree — and, for
// scheme auto, at least what it holds while it measures its candidates on
// their sample (a sample run at a time: ~1 GB at k = 262144) and while it
// times them (a run at a time here, SetRunsAtOnce, beside the one kept).
// Without the model, numerics off counted 48 MiB whatever the machine: two
// points on 4096 DaVinci cores ran at once under --max-memory 500MiB, 683
// MB together (428 MB alone). A kind without an estimate counts as the
// whole budget (it runs alone): conservative.

// largePoint is the estimate from which a point's garbage is collected
// when it ends, before the next point counts on its memory.
const largePoint = 1 << 30

// failingPointBytes is the estimate of a point whose program cannot be
// read: it fails at once.
const failingPointBytes = 48 << 20

// hostBytes estimates the host memory point p's run holds at its peak
// (programs.HostBytes: its data and its chip model), or the budget where
// the program's kind has no estimate.
func (s *Study) hostBytes(p Point, budget int64) int64 {
	paths := s.paths(p)
	f, err := readProgram(paths.program, paths.written)
	if err != nil {
		return failingPointBytes
	}
	n, ok := programs.HostBytes(f, s.runOptions(paths.machine, p))
	if !ok {
		return max(budget, failingPointBytes)
	}
	return n
}

// memGate admits points, in turn, while the estimates of those admitted
// and not yet done fit the budget, or when none is (a point past the
// budget alone).
type memGate struct {
	mu     sync.Mutex
	budget int64
	used   int64
	held   int           // points admitted and not done
	next   int           // the sequence number of the point to admit next
	freed  chan struct{} // closed (and replaced) when a point is done or admitted
	// peakUsed and peakHeld are the most held at once, heldBack whether a
	// point in turn ever waited for memory (tests).
	peakUsed int64
	peakHeld int
	heldBack bool
}

// newGate makes runPoints' gate (a variable: tests watch it).
var newGate = newMemGate

func newMemGate(budget int64) *memGate {
	return &memGate{budget: budget, freed: make(chan struct{})}
}

// acquire waits until the points before the one of sequence number seq
// (0, 1, … in the order they are to start) are admitted and a point of
// estimate n fits, and admits it; false when done (ctx, or the dispatch
// stopping) came first.
func (g *memGate) acquire(ctx context.Context, stop <-chan struct{}, seq int, n int64) bool {
	for {
		g.mu.Lock()
		if seq == g.next && (g.held == 0 || g.used+n <= g.budget) {
			g.used += n
			g.held++
			g.next++
			g.peakUsed, g.peakHeld = max(g.peakUsed, g.used), max(g.peakHeld, g.held)
			g.wake() // (the next in turn)
			g.mu.Unlock()
			return true
		}
		g.heldBack = g.heldBack || seq == g.next
		freed := g.freed
		g.mu.Unlock()
		select {
		case <-freed:
		case <-ctx.Done():
			return false
		case <-stop:
			return false
		}
	}
}

// release ends an admitted point of estimate n.
func (g *memGate) release(n int64) {
	g.mu.Lock()
	g.used -= n
	g.held--
	g.wake()
	g.mu.Unlock()
}

// wake wakes the points waiting (g.mu held).
func (g *memGate) wake() {
	close(g.freed)
	g.freed = make(chan struct{})
}
