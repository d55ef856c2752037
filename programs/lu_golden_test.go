package programs

import (
	"context"
	"errors"
	"math"
	"runtime"
	"sync"
	"testing"

	"github.com/davinci-sim/davinci-sim/machines"
)

// errsAfter is a context whose Err turns context.Canceled at its after-th
// call: where a check falls.
type errsAfter struct {
	context.Context
	mu           sync.Mutex // (the golden model's tiles check on every CPU)
	calls, after int
}

func (c *errsAfter) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.calls++; c.calls >= c.after {
		return context.Canceled
	}
	return nil
}

// goldenLUSetup returns the plan of p on the 910A (defaults, tiling and
// fusion as a build chooses them) and its matrix, seed 1, filled: what the
// golden model's tests run.
func goldenLUSetup(t *testing.T, p LUParams) (*luPlan, *luMatrix) {
	t.Helper()
	m, err := machines.Load("ascend-910a", nil)
	if err != nil {
		t.Fatal(err)
	}
	p.defaults()
	p.chooseTiling(m)
	p.fusedFromL1(m)
	if err := p.validate("t.yaml", m); err != nil {
		t.Fatal(err)
	}
	pl, err := newLUPlan("t.yaml", p, m)
	if err != nil {
		t.Fatal(err)
	}
	mat := newLUMatrix(p.N, 1)
	if err := mat.fill(context.Background()); err != nil {
		t.Fatal(err)
	}
	return pl, mat
}

// The LU golden model checks for a stop between tile rows, not only
// between iterations (one iteration's trailing update at n = 16384 took
// over 20 s where the cube's tiles run in Go): stopped in the middle of
// its first iteration, it returns the stop.
func TestLUGoldenStopsInsideAnIteration(t *testing.T) {
	pl, mat := goldenLUSetup(t, LUParams{N: 4 * 128, NB: 128, NFused: 1, NFusion: 16, Trailing: "fp16"})
	count := &errsAfter{Context: context.Background(), after: 1 << 30}
	if _, err := luGoldenRun(count, pl, mat); err != nil {
		t.Fatal(err)
	}
	if count.calls <= 2*pl.nbk {
		t.Fatalf("%d checks for %d iterations: not inside them", count.calls, pl.nbk)
	}
	// The first iteration's second tile row: past the conversion's checks
	// (one a row block) and the iteration's first.
	after := pl.n/pl.nb + 3
	stop := &errsAfter{Context: context.Background(), after: after}
	// (context.Cause asks Err once more, and each other CPU's tile begun
	// checks once before the stop ends the update.)
	if _, err := luGoldenRun(stop, pl, mat); !errors.Is(err, context.Canceled) || stop.calls > after+runtime.GOMAXPROCS(0) {
		t.Fatalf("stopped at check %d: %v after %d checks", after, err, stop.calls)
	}
}

// The matrix's diagonal (n² draws) is made where the run's context can
// stop it: fill returns the stop and leaves the matrix unmade.
func TestLUMatrixFillStops(t *testing.T) {
	m := newLUMatrix(1024, 1)
	stop := &errsAfter{Context: context.Background(), after: 2} // at row 256
	if err := m.fill(stop); !errors.Is(err, context.Canceled) || m.diag != nil {
		t.Fatalf("fill stopped at its second check: %v, diagonal made %v", err, m.diag != nil)
	}
	if err := m.fill(context.Background()); err != nil || len(m.diag) != 1024 {
		t.Fatalf("fill: %v, %d values", err, len(m.diag))
	}
	row := make([]float64, 1024)
	m.Row(5, row)
	s := 0.0
	for j, v := range row {
		if j != 5 {
			s += math.Abs(v)
		}
	}
	if row[5] != s {
		t.Fatalf("diagonal %v, the row's off-diagonal magnitudes sum to %v", row[5], s)
	}
}
