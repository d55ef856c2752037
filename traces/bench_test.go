package traces_test

import (
	"os"
	"runtime"
	"testing"

	"github.com/davinci-sim/davinci-sim/arch"
	"github.com/davinci-sim/davinci-sim/isa"
	"github.com/davinci-sim/davinci-sim/machines"
	"github.com/davinci-sim/davinci-sim/programs"
	"github.com/davinci-sim/davinci-sim/sim"
	"github.com/davinci-sim/davinci-sim/traces"
)

// tape records the observer calls of a run so that a benchmark can replay
// them into a Recorder without the engine.
type tape struct {
	calls []call
	instr []isa.Instr
}

type call struct {
	kind     uint8
	core     int
	p0, p1   int
	cause    arch.Cause
	from, to sim.Time
	id       int
	set      bool
	buf      int
	bytes    int64
	bps      float64
	hasInstr bool
}

func (t *tape) Interval(core, pipe int, cause arch.Cause, from, to sim.Time, in *isa.Instr, _ *arch.Group) {
	c := call{kind: 0, core: core, p0: pipe, cause: cause, from: from, to: to}
	if in != nil {
		c.hasInstr = true
		t.instr = append(t.instr, *in)
	}
	t.calls = append(t.calls, c)
}
func (t *tape) Flag(core, src, dst, id int, set bool, at sim.Time) {
	t.calls = append(t.calls, call{kind: 1, core: core, p0: src, p1: dst, id: id, set: set, from: at})
}
func (t *tape) Occupancy(core, buf int, bytes int64, at sim.Time) {
	t.calls = append(t.calls, call{kind: 2, core: core, buf: buf, bytes: bytes, from: at})
}
func (t *tape) Bandwidth(at sim.Time, bps float64) {
	t.calls = append(t.calls, call{kind: 3, from: at, bps: bps})
}

func (t *tape) replay(o arch.Observer) {
	k := 0
	for i := range t.calls {
		c := &t.calls[i]
		switch c.kind {
		case 0:
			var in *isa.Instr
			if c.hasInstr {
				in = &t.instr[k]
				k++
			}
			o.Interval(c.core, c.p0, c.cause, c.from, c.to, in, nil)
		case 1:
			o.Flag(c.core, c.p0, c.p1, c.id, c.set, c.from)
		case 2:
			o.Occupancy(c.core, c.buf, c.bytes, c.from)
		case 3:
			o.Bandwidth(c.from, c.bps)
		}
	}
}

// BenchmarkRecorder replays the observer calls of an hgemm 2048³ timing run
// into a Recorder: /calls is the engine's wait for the Observer calls with
// the consumer running beside it, /finish adds the wait for the timeline;
// /engine (the Observer calls, batches discarded) and /consume (building
// the timeline from captured batches) are the two shares alone, each on one
// goroutine (cpu-ns/call is that goroutine's thread CPU time, which holds
// on a shared machine better than the wall time):
//
//	go test -run XXX -bench Recorder -count 6 ./traces/
func BenchmarkRecorder(b *testing.B) {
	t := hgemmTape(b)
	b.Run("calls", func(b *testing.B) {
		for range b.N {
			r := traces.NewRecorder(traces.Window{})
			t.replay(r)
			b.StopTimer()
			r.Finish(0)
			b.StartTimer()
		}
		b.ReportMetric(float64(len(t.calls)), "calls/op")
	})
	// perCall reports the wall and thread CPU time per observer call.
	perCall := func(b *testing.B, run func()) {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		c0, ok := threadCPU()
		b.ResetTimer()
		for range b.N {
			run()
		}
		b.StopTimer()
		n := float64(b.N) * float64(len(t.calls))
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/n, "ns/call")
		if c1, ok1 := threadCPU(); ok && ok1 {
			b.ReportMetric(float64((c1-c0).Nanoseconds())/n, "cpu-ns/call")
		}
	}
	b.Run("engine", func(b *testing.B) {
		perCall(b, func() { traces.Discard(traces.Window{}, t.replay) })
	})
	b.Run("consume", func(b *testing.B) {
		bs := traces.Capture(traces.Window{}, t.replay)
		perCall(b, func() { bs.Apply(traces.Window{}) })
	})
	// The consumer's share as a live view without a trace records (no flag
	// events: calls/op counts the observer calls that reach the recorder).
	b.Run("consume-live", func(b *testing.B) {
		bs := traces.CaptureLive(traces.Window{}, t.replay)
		perCall(b, func() { bs.Apply(traces.Window{}) })
	})
	b.Run("finish", func(b *testing.B) {
		for range b.N {
			r := traces.NewRecorder(traces.Window{})
			t.replay(r)
			r.Finish(0)
		}
	})
}

// hgemmTape records the observer calls of an hgemm benchN()³ timing run.
func hgemmTape(b testing.TB) *tape {
	f, err := programs.ReadFile("../programs/examples/hgemm.yaml")
	if err != nil {
		b.Fatal(err)
	}
	var opts programs.Options
	for _, s := range []string{"program.m=" + benchN(), "program.n=" + benchN(), "program.k=" + benchN(), "program.numerics=off"} {
		ov, err := machines.ParseOverride(s)
		if err != nil {
			b.Fatal(err)
		}
		opts.Overrides = append(opts.Overrides, ov)
	}
	var t tape
	if _, err := programs.Execute(f, opts, programs.RunHooks{Observer: &t}); err != nil {
		b.Fatal(err)
	}
	return &t
}

// benchN returns the hgemm size BenchmarkRecorder replays: 2048, or
// $RECORDER_BENCH_N (4096 is the live view benchmark's size).
func benchN() string {
	if s := os.Getenv("RECORDER_BENCH_N"); s != "" {
		return s
	}
	return "2048"
}

// BenchmarkSeal times the block encoding of a recorded hgemm benchN()³ live
// timeline: what the consumer spends sealing each slice, and the bytes a
// slice takes.
//
//	go test -run XXX -bench Seal ./traces/
func BenchmarkSeal(b *testing.B) {
	lanes := traces.LaneSlices(traces.CaptureLive(traces.Window{}, hgemmTape(b).replay).Apply(traces.Window{}))
	buf := make([]byte, 0, 64<<20)
	var n int
	b.ResetTimer()
	for range b.N {
		buf, n = traces.SealAll(lanes, buf[:0])
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/slice")
	b.ReportMetric(float64(len(buf))/float64(n), "bytes/slice")
}
