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
// work (ctaLane.mmaRun), taking their co-executed vector cycles (MI210)
// as one flow spread over the run: the run ends when the last MMA one at
// a time would. CTAs of 1–9 MMAs per k-step (of two shapes), with
// element-wise work on the vector lane beside them, on two SMs:
//   - one CTA per SM, three waves: the run's time, the matrix and vector
//     lanes' busy time and every lane's instructions equal to the
//     picosecond;
//   - four CTAs per SM sharing the matrix units (one wave): the time and
//     the matrix lanes' busy time within 10⁻⁵, instructions equal (the
//     MI210's vector lanes' busy time moves by ~2 %: the co-executed
//     cycles are paced at the run's speed alone, and so overlap the
//     vector lane's own work otherwise when the run is slowed).
//     Not to the picosecond: a run leaves the lane's queue at its start
//     (the issue unit may run ahead further), and the shared channels
//     round a flow's end up to the picosecond once per run instead of once
//     per MMA. Such picoseconds can flip a race — which CTA's copy the L2
//     sees first, which SM a block of the next wave lands on — and move a
//     synthetic grid with data shared between its CTAs or several waves
//     of contended SMs by up to 10⁻³; the emulated GEMMs measured moved by
//     at most 3·10⁻⁵ (docs/design-notes.md, "MMA runs").
func TestMMARunsAsOneFlow(t *testing.T) {
	for _, name := range []string{"a100", "mi210"} { // mi210: MFMAs co-execute on the vector units
		smem := map[string]int64{"a100": 100 << 10, "mi210": 40 << 10}[name] // one CTA per SM
		t.Run(name+"/alone", func(t *testing.T) { testMMARuns(t, name, 6, smem, 0, true) })
		t.Run(name+"/shared", func(t *testing.T) { testMMARuns(t, name, 8, smem/4, 1e-5, false) })
	}
}

// testMMARuns runs ctas CTAs of smem bytes of shared memory on two SMs of
// machine with MMA runs and one MMA at a time and compares the time and
// the matrix lanes' busy time (and the vector lanes': vector) within tol
// of the larger, and every lane's instructions.
func testMMARuns(t *testing.T, machine string, ctas int, smem int64, tol float64, vector bool) {
	run := func(apart bool) *arch.Stats {
		t.Helper()
		gpu.SetMMARuns(!apart)
		defer gpu.SetMMARuns(true)
		g := isa.Grid{Name: "products", CTAs: ctas, CTA: func(i int) isa.Stream { return ctaProducts(int64(i)<<22, 1024, 1+i*4%9, true) },
			Resources: isa.Resources{SharedBytes: smem, Registers: 8 << 10, Warps: 4}}
		return runChip(t, archtest.Machine(t, machine, "machine.cores=2"), arch.Options{Mode: arch.Timing}, isa.Program{Name: "products", Grids: []isa.Grid{g}})
	}
	one, apart := run(false), run(true)
	if one.Events*3 > apart.Events*2 {
		t.Errorf("%d events with MMA runs, %d without: want a third fewer at least", one.Events, apart.Events)
	}
	near := func(a, b sim.Time) bool { return math.Abs(float64(a-b)) <= tol*float64(max(a, b)) }
	if !near(one.Time, apart.Time) {
		t.Errorf("time %d ps with MMA runs, %d ps without", one.Time, apart.Time)
	}
	for c := range one.Cores {
		for i, l := range one.Cores[c].Lanes {
			la := apart.Cores[c].Lanes[i]
			if l.Instrs != la.Instrs || (i == gpu.LaneMatrix || vector && i == gpu.LaneVector) && !near(l.Time[arch.Busy], la.Time[arch.Busy]) {
				t.Errorf("SM %d lane %d: busy %v (%d instructions) with MMA runs, %v (%d) without", c, i, l.Time[arch.Busy], l.Instrs, la.Time[arch.Busy], la.Instrs)
			}
		}
	}
}
