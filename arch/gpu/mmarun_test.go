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

// productsCTA is a k-loop of 16 steps whose step runs products MMAs into
// one accumulator, back to back.
func productsCTA(base int64, products int) isa.Stream {
	const m, n, bk, steps = 64, 64, 32, 16
	gmA, gmB, gmC := base, base+1<<20, int64(2<<20)
	const smA, smB = 0, 16 << 10
	const rfC, rfA, rfB = 0, 32 << 10, 48 << 10
	var ins []isa.Instr
	for kt := range steps {
		if kt > 0 {
			ins = append(ins, isa.WaitFlag(gpu.LaneMatrix, gpu.LaneCopy, 0))
		}
		ins = append(ins,
			gpu.CopyToShared(smA, gmA+int64(kt*bk)*2, m, bk*2, bk*2+16, steps*bk*2),
			gpu.CopyToShared(smB, gmB+int64(kt*bk*n)*2, bk, n*2, n*2+16, n*2),
			isa.SetFlag(gpu.LaneCopy, gpu.LaneLoad, 0),
			isa.WaitFlag(gpu.LaneCopy, gpu.LaneLoad, 0),
			gpu.LoadMatrix(rfA, smA, m, bk, bk*2+16, fp.FP16, false),
			gpu.LoadMatrix(rfB, smB, bk, n, n*2+16, fp.FP16, false),
			isa.SetFlag(gpu.LaneLoad, gpu.LaneMatrix, 0),
			isa.WaitFlag(gpu.LaneLoad, gpu.LaneMatrix, 0))
		for p := range products {
			ins = append(ins, gpu.MMA(rfC, rfA, rfB, m, bk, n, fp.FP16, fp.FP32, kt == 0 && p == 0))
		}
		ins = append(ins, isa.SetFlag(gpu.LaneMatrix, gpu.LaneCopy, 0))
	}
	ins = append(ins,
		isa.SetFlag(gpu.LaneMatrix, gpu.LaneStore, 0),
		isa.WaitFlag(gpu.LaneMatrix, gpu.LaneStore, 0),
		gpu.StoreAccumulators(gmC, rfC, m, n, n*4, fp.FP32, fp.FP32, fp.RNE, false))
	return isa.Slice(ins)
}

// A lane runs the MMAs queued back to back as one flow of their summed
// work (ctaLane.mmaRun): with CTAs of 1–9 products per k-step sharing the
// tensor cores of their SMs, the run takes the time of the one with each
// MMA its own flow, with fewer events. Not to the picosecond: a run leaves
// the lane's queue when it starts, where one at a time its members leave
// as they start, so the issue unit runs ahead further (its queue-full time
// and the other lanes' waits shift, its copies start earlier) and flows'
// rounding differs. Each lane's instructions are equal, the matrix lane's
// busy time and the run's time within 10^-5.
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
		g := isa.Grid{Name: "products", CTAs: 2 * 4 * 3, CTA: func(i int) isa.Stream { return productsCTA(int64(i%5)<<12, 1+i*4%9) },
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
	near := func(a, b sim.Time) bool { return math.Abs(float64(a-b)) <= 1e-5*float64(max(a, b)) }
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
