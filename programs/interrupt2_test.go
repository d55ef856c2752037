package programs

import (
	"context"
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/davinci-sim/davinci-sim/accuracy"
	"github.com/davinci-sim/davinci-sim/arch"
	"github.com/davinci-sim/davinci-sim/sim"
	"github.com/davinci-sim/davinci-sim/stopwork"
)

// A timing run checks its context within its first cancelEveryTiming
// events, not CancelEvery's 65536 (1–2.4 s into a heavy run under load):
// the progress callback that checks it first comes by then, and a context
// done there stops the run at its next check.
func TestRunChecksContextSoon(t *testing.T) {
	f, err := ReadFile("examples/a100-hgemm.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	first := uint64(0)
	hooks := RunHooks{Context: ctx, ProgressEvery: 1, Progress: func(_ sim.Time, events uint64) {
		if first == 0 {
			first = events
			cancel()
		}
	}}
	_, err = Execute(f, Options{Numerics: NumericsOff, Overrides: mustSets(t, "program.m=2048", "program.n=2048", "program.k=2048")}, hooks)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("%v; want the run stopped", err)
	}
	if first == 0 || first > cancelEveryTiming {
		t.Errorf("the context was first checked after %d events; want at most %d", first, cancelEveryTiming)
	}
}

// benchContext runs example file, timing only, with the run's context
// (withCtx: one never done, checked by the event loop) or none: the
// check's cost is the difference.
func benchContext(b *testing.B, file string, withCtx bool, sets ...string) {
	f, err := ReadFile(file)
	if err != nil {
		b.Fatal(err)
	}
	var hooks RunHooks
	if withCtx {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		hooks.Context = ctx
	}
	opts := Options{Numerics: NumericsOff, Overrides: mustSets(b, sets...)}
	var res *Result
	for b.Loop() {
		if res, err = Execute(f, opts, hooks); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(res.Stats.Events)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkContextCheck times SGEMM-cube and A100 HGEMM 8192³ (timing
// only) with and without a context for the event loop to check.
func BenchmarkContextCheck(b *testing.B) {
	big := []string{"program.m=8192", "program.n=8192", "program.k=8192"}
	for _, file := range []string{"examples/sgemm-cube.yaml", "examples/a100-hgemm.yaml"} {
		b.Run(file[len("examples/"):]+"/none", func(b *testing.B) { benchContext(b, file, false, big...) })
		b.Run(file[len("examples/"):]+"/ctx", func(b *testing.B) { benchContext(b, file, true, big...) })
	}
}

// The host-side passes made to hear a stop give what they gave in one go:
// genMatrixUntil the rows UniformFP32 drew (a row longer than a question's
// stopwork.Every), cpuSGEMMUntil accuracy.CPUSGEMM bit for bit (m not a
// multiple of its row block), inputRangeUntil inputRange's counts; each
// ends at a true.
func TestUntilPassesSame(t *testing.T) {
	in := Inputs{Distribution: DistUniform, Seed: 7}
	const rows, cols = 3, stopwork.Every + 7
	want := make([]float32, 0, rows*cols)
	for r := 0; r < rows; r++ {
		want = append(want, UniformFP32(NewRand(in.Seed, 1<<32|uint64(r)), cols, -1, 1)...)
	}
	if lo, hi := in.interval(); lo != -1 || hi != 1 {
		t.Fatalf("uniform's interval is [%g, %g); the test assumes [-1, 1)", lo, hi)
	}
	if got := genMatrixUntil(in, 1, rows, cols, nil); !slices.Equal(got, want) {
		t.Error("genMatrixUntil differs from the rows UniformFP32 draws")
	}
	asks := 0
	if genMatrixUntil(in, 1, rows, cols, func() bool { asks++; return asks == 3 }) != nil || asks != 3 {
		t.Errorf("genMatrixUntil went on after its stop said true (%d asks)", asks)
	}

	const m, k, n = 2*gemmRowBlock + 5, 37, 29
	a, b := genMatrix(in, 1, m, k), genMatrix(in, 2, k, n)
	if got := cpuSGEMMUntil(m, k, n, a, b, nil); !slices.Equal(got, accuracy.CPUSGEMM(m, k, n, a, b)) {
		t.Error("cpuSGEMMUntil differs from accuracy.CPUSGEMM")
	}
	asks = 0
	if cpuSGEMMUntil(m, k, n, a, b, func() bool { asks++; return asks == 2 }) != nil || asks != 2 {
		t.Errorf("cpuSGEMMUntil went on after its stop said true (%d asks)", asks)
	}

	x := slices.Concat(want, []float32{0, 1e-30, -1e-30, float32(math.Inf(1)), float32(math.NaN()), 3})
	never := stopwork.New(nil)
	o, u, ok := inputRangeUntil(x, 1e-3, 0.5, &never)
	if wo, wu := inputRange(x, 1e-3, 0.5); !ok || o != wo || u != wu {
		t.Errorf("inputRangeUntil counts %d over, %d under; inputRange %d, %d", o, u, wo, wu)
	}
	asks = 0
	st := stopwork.New(func() bool { asks++; return asks == 2 })
	if _, _, ok := inputRangeUntil(x, 1e-3, 0.5, &st); ok || asks != 2 {
		t.Errorf("inputRangeUntil went on after its stop said true (%d asks)", asks)
	}
}

// BenchmarkProgressCheck times one call of the event loop's progress
// callback with a context never done and no caller's progress: the cost
// of a context check, every cancelEveryTiming events.
func BenchmarkProgressCheck(b *testing.B) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fn, _ := RunHooks{Context: ctx}.progress(nil, arch.Timing)
	for i := 0; b.Loop(); i++ {
		fn(0, uint64(i))
	}
}
