package gpu_test

import (
	"math"
	"testing"

	"github.com/davinci-sim/davinci-sim/arch"
	"github.com/davinci-sim/davinci-sim/arch/archtest"
	"github.com/davinci-sim/davinci-sim/arch/gpu"
	"github.com/davinci-sim/davinci-sim/isa"
	"github.com/davinci-sim/davinci-sim/sim"
)

// A lane runs the MMAs queued back to back as one flow of their summed
// work (ctaLane.mmaRun): with CTAs of 1–9 products per k-step sharing the
// tensor cores of their SMs, the run takes the time of the one with each
// MMA its own flow, with fewer events. Not to the picosecond: a run leaves
// the lane's queue when it starts, where one at a time its members leave
// as they start, so the issue unit may run ahead further; and the shared
// channels round each flow's end up to the picosecond, once per run
// instead of once per MMA, which moves later flows by picoseconds and may
// reorder events of one instant (which CTA's copy the L2 sees first).
// Each lane's instructions are equal, the matrix lane's busy time and the
// run's time within 10⁻⁴ (here 6.4·10⁻⁵ at most; with one or two CTAs on
// an SM, equal). On the MI210 the run's MFMAs take their co-executed
// vector cycles as one flow at its start.
func TestMMARunsAsOneFlow(t *testing.T) {
	for _, name := range []string{"a100", "mi210"} { // mi210: MFMAs co-execute on the vector units
		t.Run(name, func(t *testing.T) { testMMARuns(t, name) })
	}
}

func testMMARuns(t *testing.T, machine string) {
	run := func(apart bool) *arch.Stats {
		t.Helper()
		m := archtest.Machine(t, machine, "machine.cores=2")
		chip, err := arch.NewChip(m, arch.Options{Mode: arch.Timing})
		if err != nil {
			t.Fatal(err)
		}
		gpu.SetMMARuns(!apart)
		defer gpu.SetMMARuns(true)
		g := isa.Grid{Name: "products", CTAs: 2 * 4 * 3, CTA: func(i int) isa.Stream { return ctaProducts(int64(i%5)<<12, 1024, 1+i*4%9) },
			Resources: isa.Resources{SharedBytes: 40 << 10, Registers: 8 << 10, Warps: 4}}
		st, err := chip.Run(isa.Program{Name: "products", Grids: []isa.Grid{g}})
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	one, apart := run(false), run(true)
	if one.Events*3 > apart.Events*2 {
		t.Errorf("%d events with MMA runs, %d without: want a third fewer at least", one.Events, apart.Events)
	}
	near := func(a, b sim.Time) bool { return math.Abs(float64(a-b)) <= 1e-4*float64(max(a, b)) }
	if !near(one.Time, apart.Time) {
		t.Errorf("time %d ps with MMA runs, %d ps without", one.Time, apart.Time)
	}
	for c := range one.Cores {
		for i, l := range one.Cores[c].Lanes {
			la := apart.Cores[c].Lanes[i]
			if l.Instrs != la.Instrs || i == gpu.LaneMatrix && !near(l.Time[arch.Busy], la.Time[arch.Busy]) {
				t.Errorf("SM %d lane %d: busy %v (%d instructions) with MMA runs, %v (%d) without", c, i, l.Time[arch.Busy], l.Instrs, la.Time[arch.Busy], la.Instrs)
			}
		}
	}
}
