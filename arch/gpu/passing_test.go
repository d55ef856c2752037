package gpu_test

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/davinci-sim/davinci-sim/arch"
	_ "github.com/davinci-sim/davinci-sim/arch/amd"
	"github.com/davinci-sim/davinci-sim/arch/archtest"
	"github.com/davinci-sim/davinci-sim/arch/gpu"
	"github.com/davinci-sim/davinci-sim/fp"
	"github.com/davinci-sim/davinci-sim/isa"
)

// starved is a grid of 4 CTAs per SM on 4 SMs with starved memory: copies
// slowed by HBM (bandwidth stalls, flows of a copy ending at the very
// passing of another) and issue units stopped at full queues — the state
// changes an SM accounts without waking up (Core.catchUp).
func starved() isa.Program {
	g := isa.Grid{Name: "starved", CTAs: 16 * 12, CTA: func(i int) isa.Stream { return ctaAt(int64(i%5) << 12) },
		Resources: isa.Resources{SharedBytes: 40 << 10, Registers: 8 << 10, Warps: 4}}
	return isa.Program{Name: "starved", Grids: []isa.Grid{g}}
}

// passes checks that a run had what the lazy accounting is for: bandwidth
// stalls on the copy lane and queue-full stalls of the issue unit.
func passes(st *arch.Stats) error {
	var bw, full int64
	for _, core := range st.Cores {
		bw += int64(core.Lanes[gpu.LaneCopy].Time[arch.Bandwidth])
		full += int64(core.Lanes[gpu.LaneIssue].Time[arch.QueueFull])
	}
	if bw == 0 || full == 0 {
		return fmt.Errorf("bandwidth stalls %d ps, issue queue-full %d ps: want both", bw, full)
	}
	return nil
}

// The conformance suite on the GPU core with its eager switch: the lazy
// accounting (busy → bandwidth past a transfer's own rate, issue → queue
// full at a future slot) gives the statistics and observer calls of a run
// that wakes the SM at each, on an NVIDIA and an AMD machine. (Equal on
// these grids because no two SMs act at one instant in an order the extra
// wake-ups would change: in general the eager run books its next wake-ups
// later, so SMs woken at the same instant may run in another order —
// docs/design-notes.md.)
func TestConformanceEagerWake(t *testing.T) {
	starvedOn := func(name string) *archtest.Case {
		return &archtest.Case{Name: "starved-" + name, Mode: arch.Timing, Expect: passes,
			Machine: archtest.Machine(t, name, "machine.cores=4", "machine.gm.bandwidth=60GB/s", "machine.l2.capacity=256KiB"),
			Program: func() (isa.Program, error) { return starved(), nil }}
	}
	lazy := archtest.Case{Name: "lazy-signals-two-ctas", Mode: arch.Timing, Machine: archtest.Machine(t, "a100", "machine.cores=1"),
		Program: func() (isa.Program, error) { return lazyTwoCTAs(), nil }}
	dead := archtest.Deadlock{Case: archtest.Case{Name: "lazy-signal-deadlock", Mode: arch.Timing, Machine: archtest.Machine(t, "a100", "machine.cores=1"),
		Program: func() (isa.Program, error) { return lazyDeadlock(), nil }},
		Want: []string{"wait_flag"}}
	archtest.Run(t, archtest.Subject{
		Machine:   archtest.Machine(t, "a100", "machine.cores=4"),
		Cases:     []archtest.Case{*starvedOn("a100"), *starvedOn("mi210"), lazy},
		Deadlocks: []archtest.Deadlock{dead},
		EagerWake: gpu.SetEagerWake,
	})
}

// lazyTwoCTAs is two CTAs on one SM, each with a signal no lane waits for
// when it is queued (lazy: Core.eagerLandings), the second CTA's copy
// ending after the first's signals landed: its overdue signal must be
// reported at its time before what the lanes do then (per-SM flag order).
// (Found by review.)
func lazyTwoCTAs() isa.Program {
	cta := func(rows int) isa.Stream {
		ins := []isa.Instr{
			gpu.CopyToShared(0, 1<<20, rows, 128, 128, 128),
			isa.SetFlag(gpu.LaneCopy, gpu.LaneLoad, 1),
			gpu.MMA(0, 4096, 8192, 16, 16, 8, fp.FP16, fp.FP32, true),
			isa.SetFlag(gpu.LaneMatrix, gpu.LaneVector, 0), // lazy: the vector lane waits for flag 2 first
			isa.WaitFlag(gpu.LaneCopy, gpu.LaneLoad, 1),
			isa.SetFlag(gpu.LaneLoad, gpu.LaneVector, 2),
			isa.WaitFlag(gpu.LaneLoad, gpu.LaneVector, 2),
			isa.WaitFlag(gpu.LaneMatrix, gpu.LaneVector, 0),
			isa.SetFlag(gpu.LaneVector, gpu.LaneStore, 3),
			isa.WaitFlag(gpu.LaneVector, gpu.LaneStore, 3),
		}
		for range 16 {
			ins = append(ins, isa.Instr{Op: isa.OpNop, Pipe: gpu.LaneStore})
		}
		return isa.Slice(ins)
	}
	return isa.Program{Name: "lazy2", Grids: []isa.Grid{{Name: "lazy2", CTAs: 2,
		CTA:       func(i int) isa.Stream { return cta(8 + 376*i) },
		Resources: isa.Resources{SharedBytes: 64 << 10, Registers: 8 << 10, Warps: 4}}}}
}

// lazyDeadlock stops at a wait nothing will satisfy while an MMA's signal
// nobody waits for is still to land: the run must end, and report its
// deadlock, at that signal's time, with its flag event observed
// (sim.Flusher). (Found by review.)
func lazyDeadlock() isa.Program {
	ins := []isa.Instr{
		gpu.MMA(0, 4096, 8192, 16, 16, 8, fp.FP16, fp.FP32, true),
		isa.SetFlag(gpu.LaneMatrix, gpu.LaneVector, 0),
		isa.WaitFlag(gpu.LaneLoad, gpu.LaneCopy, 5),
	}
	for range 17 {
		ins = append(ins, isa.Instr{Op: isa.OpNop, Pipe: gpu.LaneCopy})
	}
	return isa.Program{Name: "dead", Grids: []isa.Grid{{Name: "dead", CTAs: 1, CTA: func(int) isa.Stream { return isa.Slice(ins) },
		Resources: isa.Resources{SharedBytes: 16 << 10, Registers: 8 << 10, Warps: 4}}}}
}

// Fast-forwarded, the lazy accounting gives the eager run's statistics too
// (the snapshots it measures waves with catch up first: Core.Counters).
func TestLazyPassingsFastForward(t *testing.T) {
	run := func() *arch.Stats {
		t.Helper()
		m := archtest.Machine(t, "a100", "machine.cores=4", "machine.gm.bandwidth=60GB/s", "machine.l2.capacity=256KiB")
		ff := arch.DefaultFastForward
		ff.Tolerance, ff.Mix = 0.5, 1
		chip, err := arch.NewChip(m, arch.Options{Mode: arch.Timing, FastForward: &ff})
		if err != nil {
			t.Fatal(err)
		}
		st, err := chip.Run(starved())
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	lazy := run()
	gpu.SetEagerWake(true)
	eager := run()
	gpu.SetEagerWake(false)
	if err := passes(eager); err != nil {
		t.Fatal(err)
	}
	if len(lazy.FastForward) == 0 {
		t.Fatal("nothing skipped")
	}
	if lazy.Events >= eager.Events {
		t.Errorf("%d events lazily, %d eagerly: want fewer", lazy.Events, eager.Events)
	}
	lazy.Events = eager.Events
	for i := range lazy.FastForward { // the events the skipped waves stand for
		lazy.FastForward[i].Events = eager.FastForward[i].Events
	}
	if !reflect.DeepEqual(lazy, eager) {
		t.Errorf("statistics differ:\n%+v lazily\n%+v eagerly", lazy, eager)
	}
}
