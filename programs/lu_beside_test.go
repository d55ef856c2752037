package programs

import (
	"errors"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/davinci-sim/davinci-sim/cube"
	"github.com/davinci-sim/davinci-sim/machines"
	"github.com/davinci-sim/davinci-sim/sim"
)

// An LU run computes its golden model beside the simulation where it
// needs one (numerics sampled; full with check), on the DaVinci and the
// GPU machines alike: the same factors as computed alone, and a run that
// failed (stop set) stops it.
func TestLUGoldenBeside(t *testing.T) {
	for _, c := range []struct {
		machine, numerics string
		check, beside     bool
	}{
		{"ascend-910a", NumericsSampled, false, true},
		{"ascend-910a", NumericsFull, true, true},
		{"ascend-910a", NumericsFull, false, false},
		{"a100", NumericsSampled, false, true},
		{"a100", NumericsFull, true, true},
		{"a100", NumericsOff, false, false},
	} {
		build := func() *luJob {
			t.Helper()
			y := "kind: lu-fused\nn: 512\nnb: 128\nn_fused: 2\nseed: 1\nmachine: " + c.machine + "\nnumerics: " + c.numerics + "\n"
			if c.machine == "ascend-910a" {
				y += "n_fusion: 16\n"
			}
			if c.check {
				y += "check: true\n"
			}
			f, err := Parse("lu.yaml", ".", []byte(y))
			if err != nil {
				t.Fatal(err)
			}
			m, err := machines.Load(c.machine, nil)
			if err != nil {
				t.Fatal(err)
			}
			job, err := f.Kind.BuildFor(f, m, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := job.(besideRun); !ok {
				t.Fatalf("%s %s: the LU job has no work beside the run", c.machine, c.numerics)
			}
			switch j := job.(type) {
			case *luJob:
				return j
			case *luGPUJob:
				return &j.luJob
			}
			t.Fatalf("job %T", job)
			return nil
		}
		j := build()
		var run atomic.Bool
		j.startBeside(cube.Model{}, &run)
		if got := j.gw != nil; got != c.beside {
			t.Errorf("%s %s check %v: work beside %v, want %v", c.machine, c.numerics, c.check, got, c.beside)
			continue
		}
		if !c.beside {
			continue
		}
		if err := j.goldenDone(); err != nil {
			t.Fatal(err)
		}
		alone, err := luGoldenRun(nil, j.pl, j.mat)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(j.golden.lh, alone.lh) || !reflect.DeepEqual(j.golden.uh, alone.uh) || j.golden.s != alone.s {
			t.Errorf("%s %s: the golden factors computed beside differ from those computed alone", c.machine, c.numerics)
		}
		if (c.numerics == NumericsSampled) != (j.ref != nil) {
			t.Errorf("%s %s: refinement %v", c.machine, c.numerics, j.ref)
		}
		// A failed run's stop ends the work beside it.
		k := build()
		var stop atomic.Bool
		stop.Store(true)
		k.startBeside(cube.Model{}, &stop)
		if err := k.goldenDone(); !errors.Is(err, errStopped) {
			t.Errorf("%s %s: stopped: %v, want errStopped", c.machine, c.numerics, err)
		}
	}
}

// The golden model's tiles take every CPU but one while the simulation it
// runs beside still runs (at least one), every CPU once the run waits for
// it, and every CPU run alone.
func TestLUGoldenWorkers(t *testing.T) {
	procs := runtime.GOMAXPROCS(0)
	var alone atomic.Bool
	g := &luGolden{alone: &alone}
	if got := g.workers(); got != max(procs-1, 1) {
		t.Errorf("beside a running simulation: %d workers of %d CPUs", got, procs)
	}
	alone.Store(true)
	if got := g.workers(); got != procs {
		t.Errorf("alone: %d workers of %d CPUs", got, procs)
	}
	if got := (&luGolden{}).workers(); got != procs {
		t.Errorf("run alone: %d workers of %d CPUs", got, procs)
	}
}

// While a run waits for its golden model (numerics sampled: at the end
// of the simulation), its progress line goes on, metering the model's
// flops against 2/3·n³ under the stage "golden model".
func TestLUGoldenProgress(t *testing.T) {
	defer func(d time.Duration) { goldenProgressEvery = d }(goldenProgressEvery)
	goldenProgressEvery = time.Millisecond
	// (Two CPUs, as this box: the model, ~10× the simulation's work at
	// this size, takes one beside it and is still at work when the run
	// waits, on any host.)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	f, err := Parse("lu.yaml", ".", []byte("kind: lu-fused\nn: 2048\nnb: 256\nn_fused: 2\nn_fusion: 16\nseed: 1\nnumerics: sampled\n"))
	if err != nil {
		t.Fatal(err)
	}
	var m WorkMeter
	var during []float64
	hooks := RunHooks{Meter: &m, ProgressEvery: 1 << 20, Progress: func(sim.Time, uint64) {
		if frac, ok := m.Fraction(); ok && m.Stage() == "golden model" {
			during = append(during, frac)
		}
	}}
	if _, err := Execute(f, Options{}, hooks); err != nil {
		t.Fatal(err)
	}
	if len(during) == 0 {
		t.Fatal("no progress line while the run waited for its golden model")
	}
	for i, frac := range during {
		if frac < 0 || frac > 1 || i > 0 && frac < during[i-1] {
			t.Fatalf("the golden model's shares %v: want rising within [0, 1]", during)
		}
	}
	if m.Stage() != "golden model" || !strings.Contains(m.Of(), "2/3·n³") {
		t.Errorf("metered %q of %q", m.Stage(), m.Of())
	}
}

// A node's run with check: true whose golden model is still at work when
// the simulation ends shows its progress line while finish waits for the
// model (the model is held until the line has shown it).
func TestLUClusterGoldenProgress(t *testing.T) {
	defer func(d time.Duration) { goldenProgressEvery = d }(goldenProgressEvery)
	goldenProgressEvery = time.Millisecond
	shown := make(chan struct{})
	var once sync.Once
	defer func() { luGoldenHeld = nil }()
	luGoldenHeld = func() {
		select {
		case <-shown:
		case <-time.After(20 * time.Second): // (not shown: the test fails below)
		}
	}
	f, err := Parse("lu.yaml", ".", []byte(luClusterSmall+"grid: {p: 2, q: 4}\nnumerics: full\ncheck: true\n"))
	if err != nil {
		t.Fatal(err)
	}
	var m WorkMeter
	hooks := RunHooks{Meter: &m, ProgressEvery: 1 << 20, Progress: func(sim.Time, uint64) {
		if _, ok := m.Fraction(); ok && m.Stage() == "golden model" && strings.Contains(m.Of(), "2/3·n³") {
			once.Do(func() { close(shown) })
		}
	}}
	res, err := Execute(f, Options{}, hooks)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-shown:
	default:
		t.Fatal("no progress line while the node's run waited for its golden model")
	}
	if res.Report.HPLMxP == nil || res.Report.HPLMxP.GoldenMismatches == nil || *res.Report.HPLMxP.GoldenMismatches != 0 {
		t.Errorf("the check: %+v", res.Report.HPLMxP)
	}
}
