package programs

import (
	"context"
	"errors"
	"testing"

	"github.com/davinci-sim/davinci-sim/sim"
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
