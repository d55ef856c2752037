package programs

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/davinci-sim/davinci-sim/cube"
)

// Work beside the simulation: a timing-only run's sampled numerics (golden
// tiles, their FP64 reference and baselines) depend only on the inputs and
// the machine's matrix-unit model, not on the simulated time, so Execute
// starts them on their own goroutines before the simulation and the job's
// Finish waits for them: the simulation is single-threaded, and on a
// machine with a second core their cost (often several times the timing
// run's: a bit-accurate dot product costs ~1–20 ns a product) hides under
// it. Results are placed by tile index, so they do not depend on the order
// the goroutines finish in.

// besideRun is a job with work to run beside the simulation.
type besideRun interface {
	// startBeside starts that work (called once, before the simulation,
	// with the run's matrix-unit model); it stops early once stop is set
	// (the run failed).
	startBeside(model cube.Model, stop *atomic.Bool)
}

// beside is work running on its own goroutine.
type beside struct {
	done     chan struct{}
	err      error
	panicked *caught
}

// goBeside runs f on its own goroutine.
func goBeside(f func() error) *beside {
	b := &beside{done: make(chan struct{})}
	go func() {
		defer close(b.done)
		b.err, b.panicked = try(f)
	}()
	return b
}

// wait returns f's error once it is done (and panics with f's panic).
func (b *beside) wait() error {
	<-b.done
	b.panicked.raise()
	return b.err
}

// caught is a panic recovered on a worker goroutine, raised again on the
// goroutine that waits for the work: there a caller can recover it (a
// sweep records the point failed), where a panic on the worker's own
// goroutine ends the process.
type caught struct {
	v     any
	stack []byte
}

// try calls f, returning its error or, if it panicked, the panic.
func try(f func() error) (err error, p *caught) {
	defer func() {
		if r := recover(); r != nil {
			p = &caught{r, debug.Stack()}
		}
	}()
	return f(), nil
}

// raise panics again with the caught panic (nothing for nil).
func (c *caught) raise() {
	if c != nil {
		panic(fmt.Sprintf("%v\n\n(on a worker goroutine:)\n%s", c.v, c.stack))
	}
}

// besideContext returns a context for work beside the simulation that
// checks its progress with stopped: done where parent is, or once stop is
// set (the run failed; Err and Cause say errStopped).
func besideContext(parent context.Context, stop *atomic.Bool) context.Context {
	if parent == nil {
		parent = context.Background()
	}
	return stopContext{parent, stop}
}

// stopContext is besideContext's context. It hides parent's values, so
// that context.Cause asks its Err.
type stopContext struct {
	parent context.Context
	stop   *atomic.Bool
}

func (c stopContext) Deadline() (time.Time, bool) { return c.parent.Deadline() }
func (c stopContext) Done() <-chan struct{}       { return c.parent.Done() }
func (c stopContext) Value(any) any               { return nil }

func (c stopContext) Err() error {
	if c.stop.Load() {
		return errStopped
	}
	if c.parent.Err() != nil {
		return context.Cause(c.parent)
	}
	return nil
}

// errStopped is the error of work stopped because its run failed (never
// reported: the run's own error is).
var errStopped = errorString("stopped: the run failed")

type errorString string

func (e errorString) Error() string { return string(e) }

// eachTile calls f(i) for i in [0, n) on up to GOMAXPROCS goroutines, each
// f writing only its own results; it returns the error of the lowest i
// that failed (errStopped once stop is set), and panics on the caller's
// goroutine with the lowest i's panic, if one did.
func eachTile(n int, stop *atomic.Bool, f func(i int) error) error {
	return eachTileOn(runtime.GOMAXPROCS(0), n, stop, f)
}

// eachTileOn is eachTile on up to workers goroutines (at least one).
func eachTileOn(workers, n int, stop *atomic.Bool, f func(i int) error) error {
	errs := make([]error, n)
	panics := make([]*caught, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(max(workers, 1), n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if stop != nil && stop.Load() {
					errs[i] = errStopped
					continue
				}
				errs[i], panics[i] = try(func() error { return f(i) })
			}
		}()
	}
	wg.Wait()
	for _, p := range panics {
		p.raise()
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
