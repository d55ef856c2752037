package viz

import (
	"os"
	"slices"
	"testing"
	"time"

	"github.com/gdamore/tcell/v2"

	"github.com/davinci-sim/davinci-sim/machines"
	"github.com/davinci-sim/davinci-sim/programs"
	"github.com/davinci-sim/davinci-sim/traces"
)

// The live view's cost on an hgemm 4096³ timing-only run (~1 M recorded
// slices, ~0.1 s): compare, interleaved (the machine is shared and noisy),
//
//	for i in 1 2 3 4 5; do go test -run XXX -bench Live -benchtime 5x ./viz/; done | tee live.txt
//	benchstat live.txt
//
// BenchmarkLive/none (no observer), /record (the trace recorder alone) and
// /view (recorder + the visualizer redrawing at 20 Hz on a simulated
// 80×24 screen while the engine runs, recording as run --view without
// --trace does: no flag marks or arrows, memory-limited). The target is
// view ≤ 1.2 × none. LIVE_SIZE=8192 runs hgemm 8192³ instead (~0.6 s,
// ~6 M recorded slices), where the recorder's consumer goroutine, if
// slower than the engine, would set the pace.
// BenchmarkLive/pairs alternates none and view and reports the median
// per-pair ratio (robust against the drift of this VM's speed):
//
//	go test -run XXX -bench Live/pairs -benchtime 15x ./viz/
//
// cpu-sec/op is the CPU time of all the process's threads: what the run
// costs when the other core is busy (sec/op gains from the second core).
// The recorder's own cost without the engine: BenchmarkRecorder in traces.
func BenchmarkLive(b *testing.B) {
	f, err := programs.ReadFile("../programs/examples/hgemm.yaml")
	if err != nil {
		b.Fatal(err)
	}
	size := "4096"
	if v := os.Getenv("LIVE_SIZE"); v != "" {
		size = v // e.g. LIVE_SIZE=8192: the consumer sets the pace there
	}
	var opts programs.Options
	for _, s := range []string{"program.m=" + size, "program.n=" + size, "program.k=" + size, "program.numerics=off"} {
		ov, err := machines.ParseOverride(s)
		if err != nil {
			b.Fatal(err)
		}
		opts.Overrides = append(opts.Overrides, ov)
	}
	run := func(b *testing.B, obs *traces.Recorder) {
		hooks := programs.RunHooks{}
		if obs != nil {
			hooks.Observer = obs
		}
		res, err := programs.Execute(f, opts, hooks)
		if err != nil {
			b.Fatal(err)
		}
		if obs != nil {
			obs.Finish(res.Stats.Time)
		}
		b.ReportMetric(float64(res.Stats.Events), "events/op")
	}
	// cpu reports the process CPU time per op around body.
	cpu := func(b *testing.B, body func()) {
		c0, ok := processCPU()
		body()
		if c1, ok1 := processCPU(); ok && ok1 {
			b.ReportMetric((c1-c0).Seconds()/float64(b.N), "cpu-sec/op")
		}
	}
	b.Run("none", func(b *testing.B) {
		cpu(b, func() {
			for range b.N {
				run(b, nil)
			}
		})
	})
	b.Run("record", func(b *testing.B) {
		cpu(b, func() {
			for range b.N {
				run(b, traces.NewRecorder(traces.Window{}))
			}
		})
	})
	b.Run("view", func(b *testing.B) { cpu(b, func() { viewLoop(b, run) }) })
	// pairs alternates a run without observer and a live-view run b.N
	// times and reports the median of the per-pair wall-time ratios
	// (view/none): this VM's speed drifts by ±25 % over seconds, far more
	// than the ~100 ms between the two runs of a pair.
	b.Run("pairs", func(b *testing.B) {
		ratios := make([]float64, 0, b.N)
		for range b.N {
			t0 := time.Now()
			run(b, nil)
			none := time.Since(t0)
			// The view's run, from Execute to Finish, while the viewer
			// redraws (its start and exit are not the run's).
			var view time.Duration
			viewLoops(b, 1, func(b *testing.B, rec *traces.Recorder) {
				t := time.Now()
				run(b, rec)
				view = time.Since(t)
			})
			ratios = append(ratios, float64(view)/float64(none))
		}
		slices.Sort(ratios)
		b.ReportMetric(ratios[len(ratios)/2], "view/none")
		b.ReportMetric(ratios[len(ratios)/4], "q1")
		b.ReportMetric(ratios[(3*len(ratios))/4], "q3")
	})
}

// viewLoop is BenchmarkLive/view's loop.
func viewLoop(b *testing.B, run func(*testing.B, *traces.Recorder)) {
	viewLoops(b, b.N, run)
}

// viewLoops runs n live-view runs.

func viewLoops(b *testing.B, n int, run func(*testing.B, *traces.Recorder)) {
	for range n {
		rec := traces.NewRecorder(traces.Window{})
		// As run --view without --trace records.
		rec.SetLimit(traces.DefaultLiveLimit)
		rec.SetFlagMarks(false)
		s := tcell.NewSimulationScreen("UTF-8")
		started := make(chan struct{})
		quit := make(chan struct{})
		done := make(chan error, 1)
		go func() { done <- Run(s, rec, Options{Live: true, Quit: quit, started: started}) }()
		<-started
		s.SetSize(80, 24)
		run(b, rec)
		close(quit)
		if err := <-done; err != nil {
			b.Fatal(err)
		}
	}
}
