package gpu_test

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/davinci-sim/davinci-sim/arch"
	_ "github.com/davinci-sim/davinci-sim/arch/amd"
	"github.com/davinci-sim/davinci-sim/arch/archtest"
	"github.com/davinci-sim/davinci-sim/arch/gpu"
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
	archtest.Run(t, archtest.Subject{
		Machine:   archtest.Machine(t, "a100", "machine.cores=4"),
		Cases:     []archtest.Case{*starvedOn("a100"), *starvedOn("mi210")},
		EagerWake: gpu.SetEagerWake,
	})
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
