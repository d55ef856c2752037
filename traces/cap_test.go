package traces_test

import (
	"context"
	"errors"
	"testing"

	"github.com/davinci-sim/davinci-sim/programs"
	"github.com/davinci-sim/davinci-sim/traces"
)

// A recorder with a cap (a trace to write, within what --max-memory
// leaves) that passes it stops recording — its timeline stays near the
// cap while the run goes on, which never waits for it — and says so
// (Err, a *CapError) and calls OnCap's function once, which can stop the
// run by its context. Without it, a --trace held the whole timeline
// whatever --max-memory said (hgemm 8192³ at --max-memory 64MiB: 200 MB).
func TestRecorderCapStopsRecording(t *testing.T) {
	f, opts := exampleProgram(t, "hgemm.yaml", "program.m=2048", "program.n=4096", "program.k=4096", "program.numerics=off", "machine.cores=1")
	full := traces.NewRecorder(traces.Window{Cores: map[int]bool{0: true}})
	res, err := programs.Execute(f, opts, programs.RunHooks{Observer: full})
	if err != nil {
		t.Fatal(err)
	}
	full.Finish(res.Stats.Time)
	if full.Err() != nil {
		t.Errorf("a recording without a cap: %v", full.Err())
	}
	const limit = 3 << 20
	if fp := full.Timeline().Footprint(); fp < 3*limit {
		t.Fatalf("the whole recording holds %d bytes: too few for this test", fp)
	}
	// The run to its end, its recording stopped: it does not wait for the
	// recorder, which holds about its cap.
	rec := traces.NewRecorder(traces.Window{Cores: map[int]bool{0: true}})
	rec.SetCap(limit, "for the test")
	calls := 0
	rec.OnCap(func(error) { calls++ })
	if _, err := programs.Execute(f, opts, programs.RunHooks{Observer: rec}); err != nil {
		t.Fatal(err)
	}
	rec.Finish(res.Stats.Time)
	var ce *traces.CapError
	if !errors.As(rec.Err(), &ce) || ce.Bytes != limit || ce.Held <= limit || ce.At <= 0 || ce.At >= res.Stats.Time || ce.Room != "for the test" {
		t.Fatalf("Err() = %#v, want a *CapError of %d bytes before the run's end %v", rec.Err(), limit, res.Stats.Time)
	}
	if calls != 1 {
		t.Errorf("OnCap's function called %d times, want 1", calls)
	}
	if fp := rec.Timeline().Footprint(); fp > limit+limit/2 {
		t.Errorf("the stopped recording holds %d bytes, its cap %d", fp, limit)
	}
	// OnCap stopping the run by its context: the run returns the error.
	rec = traces.NewRecorder(traces.Window{Cores: map[int]bool{0: true}})
	rec.SetCap(limit, "")
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	rec.OnCap(cancel)
	_, err = programs.Execute(f, opts, programs.RunHooks{Observer: rec, Context: ctx})
	if !errors.As(err, &ce) {
		t.Errorf("the run stopped at the cap returned %v, want its *CapError", err)
	}
	// Within its cap — the whole timeline and the batches of events in
	// flight, up to 129 of 128 KiB where the recorder lags —: no error.
	rec = traces.NewRecorder(traces.Window{Cores: map[int]bool{0: true}})
	rec.SetCap(full.Timeline().Footprint()+17<<20, "")
	if _, err := programs.Execute(f, opts, programs.RunHooks{Observer: rec}); err != nil || rec.Err() != nil {
		t.Errorf("a recording within its cap: run %v, recorder %v", err, rec.Err())
	}
}
