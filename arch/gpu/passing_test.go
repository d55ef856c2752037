package gpu_test

import (
	"reflect"
	"testing"

	"github.com/davinci-sim/davinci-sim/arch"
	"github.com/davinci-sim/davinci-sim/arch/archtest"
	"github.com/davinci-sim/davinci-sim/arch/gpu"
	"github.com/davinci-sim/davinci-sim/isa"
	"github.com/davinci-sim/davinci-sim/sim"
)

// laneTotals sums an observer's intervals per core, lane and cause.
type laneTotals struct {
	arch.Observer
	t map[[3]int]sim.Time
}

func (o *laneTotals) Interval(core, lane int, cause arch.Cause, from, to sim.Time, _ *isa.Instr) {
	o.t[[3]int{core, lane, int(cause)}] += to - from
}
func (o *laneTotals) Flag(int, int, int, int, bool, sim.Time) {}
func (o *laneTotals) Occupancy(int, int, int64, sim.Time)     {}
func (o *laneTotals) Bandwidth(sim.Time, float64)             {}

// The state changes an SM accounts without waking up — a transfer past its
// own rate turning busy into a bandwidth stall, an issue unit reaching a
// full queue — give the statistics (and an observer's intervals) of the
// same run with a wake-up at each: 4 CTAs per SM on starved memory (copies
// slowed by HBM, flows of a copy ending at the very passing of another),
// fully simulated, fast-forwarded and observed. (Equal here because no two
// SMs act at one instant in an order the extra wake-ups would change: in
// general the eager run books its next wake-ups later, so SMs woken at
// the same instant may run in another order — docs/design-notes.md.)
func TestLazyPassingsExact(t *testing.T) {
	run := func(ff *arch.FastForward, obs arch.Observer) *arch.Stats {
		t.Helper()
		m := archtest.Machine(t, "a100", "machine.cores=4", "machine.gm.bandwidth=60GB/s", "machine.l2.capacity=256KiB")
		chip, err := arch.NewChip(m, arch.Options{Mode: arch.Timing, FastForward: ff, Observer: obs})
		if err != nil {
			t.Fatal(err)
		}
		g := isa.Grid{Name: "starved", CTAs: 16 * 12, CTA: func(i int) isa.Stream { return ctaAt(int64(i%5) << 12) },
			Resources: isa.Resources{SharedBytes: 40 << 10, Registers: 8 << 10, Warps: 4}}
		st, err := chip.Run(isa.Program{Name: "starved", Grids: []isa.Grid{g}})
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	ff := arch.DefaultFastForward
	ff.Tolerance, ff.Mix = 0.5, 1
	for _, c := range []struct {
		name string
		ff   *arch.FastForward
	}{{"full", nil}, {"fast-forward", &ff}} {
		lazyObs := &laneTotals{t: map[[3]int]sim.Time{}}
		eagerObs := &laneTotals{t: map[[3]int]sim.Time{}}
		lazy, lazyObserved := run(c.ff, nil), run(nil, lazyObs)
		restore := gpu.SetEagerPassings()
		eager, eagerObserved := run(c.ff, nil), run(nil, eagerObs)
		restore()
		var bw, full sim.Time
		for _, core := range eager.Cores {
			bw += core.Lanes[gpu.LaneCopy].Time[arch.Bandwidth]
			full += core.Lanes[gpu.LaneIssue].Time[arch.QueueFull]
		}
		if bw == 0 || full == 0 {
			t.Fatalf("%s: bandwidth stalls %v, issue queue-full %v: want both", c.name, bw, full)
		}
		if lazy.Events >= eager.Events {
			t.Errorf("%s: %d events lazily, %d eagerly: want fewer", c.name, lazy.Events, eager.Events)
		}
		lazy.Events, lazyObserved.Events = eager.Events, eagerObserved.Events
		for i := range lazy.FastForward { // the events the skipped waves stand for
			lazy.FastForward[i].Events = eager.FastForward[i].Events
		}
		if !reflect.DeepEqual(lazy, eager) {
			t.Errorf("%s: statistics differ:\n%+v lazily\n%+v eagerly", c.name, lazy, eager)
		}
		if !reflect.DeepEqual(lazyObserved, eagerObserved) || !reflect.DeepEqual(lazyObs.t, eagerObs.t) {
			t.Errorf("%s: observed runs differ", c.name)
		}
	}
}
