package gpu_test

import (
	"math"
	"testing"

	"github.com/davinci-sim/davinci-sim/arch"
	"github.com/davinci-sim/davinci-sim/arch/archtest"
	"github.com/davinci-sim/davinci-sim/arch/gpu"
	"github.com/davinci-sim/davinci-sim/fp"
	"github.com/davinci-sim/davinci-sim/isa"
	"github.com/davinci-sim/davinci-sim/sim"
)

// A lane runs the MMAs queued back to back as one flow of their summed
// work (ctaLane.run), taking their co-executed vector cycles (MI210)
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
		gpu.SetRuns(!apart)
		defer gpu.SetRuns(true)
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

// A lane runs the element-wise instructions queued back to back as one
// flow of their summed cycles (ctaLane.run), as a fused split's
// k-step does: CTAs that copy a tile into registers and run 1–7
// conversions, scalings and subtractions of different lengths on it each
// step. One CTA per SM: every lane's instructions equal with runs and
// without, the time and the vector lanes' busy time within a picosecond
// for each element-wise instruction (a flow's end rounds up to the
// picosecond: once a run, not once an instruction — the MI210's cycle is
// not a whole number of them); four a SM sharing the vector units: within
// 10⁻⁵ more.
func TestVectorRunsAsOneFlow(t *testing.T) {
	for _, name := range []string{"a100", "mi210"} {
		half := map[string]int64{"a100": 32 << 10, "mi210": 64 << 10}[name] // half an SM's registers
		for _, c := range []struct {
			name string
			ctas int
			regs int64
			tol  float64
		}{{"alone", 6, half + 256, 0}, {"shared", 8, half / 2, 1e-5}} {
			t.Run(name+"/"+c.name, func(t *testing.T) {
				run := func(apart bool) *arch.Stats {
					t.Helper()
					gpu.SetRuns(!apart)
					defer gpu.SetRuns(true)
					g := isa.Grid{Name: "split", CTAs: c.ctas, CTA: func(i int) isa.Stream { return ctaVector(int64(i)<<22, 16, 1+i*3%7) },
						Resources: isa.Resources{Registers: c.regs, Warps: 8}}
					return runChip(t, archtest.Machine(t, name, "machine.cores=2"), arch.Options{Mode: arch.Timing}, isa.Program{Name: "split", Grids: []isa.Grid{g}})
				}
				one, apart := run(false), run(true)
				if one.Events*3 > apart.Events*2 {
					t.Errorf("%d events with vector runs, %d without: want a third fewer at least", one.Events, apart.Events)
				}
				// near: within tol, and a picosecond for each element-wise
				// instruction (n) whose end one at a time rounded up on
				// its own.
				near := func(a, b sim.Time, n uint64) bool {
					return math.Abs(float64(a-b)) <= c.tol*float64(max(a, b))+float64(n)
				}
				var vec uint64
				for sm := range apart.Cores {
					vec += apart.Cores[sm].Lanes[gpu.LaneVector].Instrs
				}
				if !near(one.Time, apart.Time, vec) {
					t.Errorf("time %d ps with vector runs, %d ps without", one.Time, apart.Time)
				}
				for sm := range one.Cores {
					for i, l := range one.Cores[sm].Lanes {
						la := apart.Cores[sm].Lanes[i]
						if l.Instrs != la.Instrs || i == gpu.LaneVector && !near(l.Time[arch.Busy], la.Time[arch.Busy], la.Instrs) {
							t.Errorf("SM %d lane %d: busy %v (%d instructions) with vector runs, %v (%d) without", sm, i, l.Time[arch.Busy], l.Instrs, la.Time[arch.Busy], la.Instrs)
						}
					}
				}
			})
		}
	}
}

// ctaVector is a CTA of steps steps, each a copy of a 16 KiB tile at base
// into registers and ops element-wise instructions on it (conversions to
// FP16, scalings, subtractions of different lengths), a token between the
// vector and copy lanes.
func ctaVector(base int64, steps, ops int) isa.Stream {
	var ins []isa.Instr
	for s := range steps {
		if s > 0 {
			ins = append(ins, isa.WaitFlag(gpu.LaneVector, gpu.LaneCopy, 0))
		}
		ins = append(ins, gpu.CopyToRegisters(0, base+int64(s)<<14, 64, 256, 256, 256),
			isa.SetFlag(gpu.LaneCopy, gpu.LaneVector, 0), isa.WaitFlag(gpu.LaneCopy, gpu.LaneVector, 0))
		for o := range ops {
			switch o % 3 {
			case 0:
				ins = append(ins, gpu.Convert(16<<10, 0, 4096, fp.FP32, fp.FP16, fp.RNE, false))
			case 1:
				ins = append(ins, gpu.Scale(24<<10, 0, 4096, 0x1p11))
			default:
				ins = append(ins, gpu.Elementwise(isa.VSub, 0, 0, 24<<10, 1024+o*300, fp.FP32))
			}
		}
		ins = append(ins, isa.SetFlag(gpu.LaneVector, gpu.LaneCopy, 0))
	}
	return isa.Slice(ins)
}

// A run leaves the lane's queue when it starts, where one at a time each
// instruction left it at its own start: with more element-wise
// instructions queued than the queue holds (16), the issue unit, stopped
// at the full queue one at a time, goes on sooner with runs, and the
// instructions behind them (copies that do not wait for them) start
// earlier. The kernels' fused splits (a dozen between their flags) never
// fill it (their times identical: docs/design-notes.md, "Vector runs");
// a CTA of 24–64 back to back before independent copies runs up to ~0.5 %
// faster, which this bounds at 1 %.
func TestVectorRunsBeyondTheQueue(t *testing.T) {
	for _, ops := range []int{8, 24, 64} {
		run := func(apart bool) *arch.Stats {
			t.Helper()
			gpu.SetRuns(!apart)
			defer gpu.SetRuns(true)
			g := isa.Grid{Name: "deep", CTAs: 2, CTA: func(i int) isa.Stream {
				var ins []isa.Instr
				for s := range 4 {
					for range ops {
						ins = append(ins, gpu.Scale(24<<10, 0, 4096, 0x1p11))
					}
					for c := range 4 {
						ins = append(ins, gpu.CopyToRegisters(int64(c)<<14, int64(i)<<22+int64(s*4+c)<<14, 64, 256, 256, 256))
					}
				}
				return isa.Slice(ins)
			}, Resources: isa.Resources{Registers: 32<<10 + 256, Warps: 8}}
			return runChip(t, archtest.Machine(t, "a100", "machine.cores=2"), arch.Options{Mode: arch.Timing}, isa.Program{Name: "deep", Grids: []isa.Grid{g}})
		}
		one, apart := run(false), run(true)
		d := float64(one.Time-apart.Time) / float64(apart.Time)
		t.Logf("%d element-wise instructions a step: %d ps with runs, %d without (%+.3f %%)", ops, one.Time, apart.Time, 100*d)
		if ops <= 16 && d != 0 || math.Abs(d) > 0.01 {
			t.Errorf("%d element-wise instructions a step: %d ps with runs, %d without (%+.3f %%)", ops, one.Time, apart.Time, 100*d)
		}
	}
}
