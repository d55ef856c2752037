package nvidia_test

import (
	"math"
	"strings"
	"testing"

	"github.com/davinci-sim/davinci-sim/arch"
	"github.com/davinci-sim/davinci-sim/arch/archtest"
	"github.com/davinci-sim/davinci-sim/arch/gpu"
	"github.com/davinci-sim/davinci-sim/arch/nvidia"
	"github.com/davinci-sim/davinci-sim/cube"
	"github.com/davinci-sim/davinci-sim/fp"
	"github.com/davinci-sim/davinci-sim/isa"
	"github.com/davinci-sim/davinci-sim/machines"
	"github.com/davinci-sim/davinci-sim/sim"
)

// tileGEMM is a hand-written CTA program: C (m×n FP32, at gmC) = A (m×k
// FP16 at gmA) · B (k×n FP16 at gmB) for one tile, k in k-steps of bk,
// single-buffered.
type tileGEMM struct {
	m, n, k, bk   int
	gmA, gmB, gmC int64
	// grouped starts each k-step's two copies, and its two loads,
	// together (isa.Instr.WithNext).
	grouped bool
}

func (g tileGEMM) resources() isa.Resources {
	return isa.Resources{SharedBytes: 64 << 10, Registers: 32 * 32 * 4 * 4, Warps: 4}
}

func (g tileGEMM) stream() isa.Stream {
	const smA, smB = 0, 32 << 10
	const rfC, rfA, rfB = 0, 32 << 10, 48 << 10
	var ins []isa.Instr
	for kt := 0; kt*g.bk < g.k; kt++ {
		kk := min(g.bk, g.k-kt*g.bk)
		if kt > 0 {
			ins = append(ins, isa.WaitFlag(gpu.LaneMatrix, gpu.LaneCopy, 0))
		}
		copyA := gpu.CopyToShared(smA, g.gmA+int64(kt*g.bk)*2, g.m, int64(kk)*2, int64(g.bk)*2+16, int64(g.k)*2)
		loadA := gpu.LoadMatrix(rfA, smA, g.m, kk, int64(g.bk)*2+16, fp.FP16, false)
		copyA.WithNext, loadA.WithNext = g.grouped, g.grouped
		ins = append(ins,
			copyA,
			gpu.CopyToShared(smB, g.gmB+int64(kt*g.bk*g.n)*2, kk, int64(g.n)*2, int64(g.n)*2+16, int64(g.n)*2),
			isa.SetFlag(gpu.LaneCopy, gpu.LaneLoad, 0),
			isa.WaitFlag(gpu.LaneCopy, gpu.LaneLoad, 0),
			loadA,
			gpu.LoadMatrix(rfB, smB, kk, g.n, int64(g.n)*2+16, fp.FP16, false),
			isa.SetFlag(gpu.LaneLoad, gpu.LaneMatrix, 0),
			isa.WaitFlag(gpu.LaneLoad, gpu.LaneMatrix, 0),
			gpu.MMA(rfC, rfA, rfB, g.m, kk, g.n, fp.FP16, fp.FP32, kt == 0),
			isa.SetFlag(gpu.LaneMatrix, gpu.LaneCopy, 0),
		)
	}
	ins = append(ins,
		isa.SetFlag(gpu.LaneMatrix, gpu.LaneStore, 0),
		isa.WaitFlag(gpu.LaneMatrix, gpu.LaneStore, 0),
		gpu.StoreAccumulators(g.gmC, rfC, g.m, g.n, int64(g.n)*4, fp.FP32, fp.FP32, fp.RNE, false))
	return isa.Slice(ins)
}

// inputs returns FP16 A and B with a spread of exponents and signs.
func (g tileGEMM) inputs() (a, b []uint16) {
	a, b = make([]uint16, g.m*g.k), make([]uint16, g.k*g.n)
	x := uint32(12345)
	next := func() uint16 {
		x = x*1664525 + 1013904223
		v := float64(int32(x>>8)%2000-1000) / float64(1+int(x>>28))
		return uint16(fp.FromFloat64(v, fp.FP16, fp.Options{Round: fp.RNE}))
	}
	for i := range a {
		a[i] = next()
	}
	for i := range b {
		b[i] = next()
	}
	return a, b
}

func (g tileGEMM) program(ctas int) isa.Program {
	return isa.Program{Name: "tile", Grids: []isa.Grid{{Name: "tile", CTAs: ctas,
		CTA: func(int) isa.Stream { return g.stream() }, Resources: g.resources()}}}
}

// A CTA's copies, ldmatrix loads, MMAs and epilogue compute C bit for bit as
// the machine's numerics model does, k-step after k-step, on V100, A100
// and H100 models, with the copies and loads on their own or started
// together.
func TestTileGEMMBitExact(t *testing.T) {
	for _, grouped := range []bool{false, true} {
		testTileGEMMBitExact(t, grouped)
	}
}

func testTileGEMMBitExact(t *testing.T, grouped bool) {
	g := tileGEMM{m: 48, n: 40, k: 80, bk: 32, gmA: 0, gmB: 1 << 20, gmC: 2 << 20, grouped: grouped}
	a, b := g.inputs()
	for _, name := range []string{"v100", "a100", "h100-sxm"} {
		m := archtest.Machine(t, name, "machine.cores=2")
		chip, err := arch.NewChip(m, arch.Options{Mode: arch.Functional})
		if err != nil {
			t.Fatal(err)
		}
		if err := chip.GM().WriteUint16s(g.gmA, a); err != nil {
			t.Fatal(err)
		}
		if err := chip.GM().WriteUint16s(g.gmB, b); err != nil {
			t.Fatal(err)
		}
		if _, err := chip.Run(g.program(1)); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got := make([]float32, g.m*g.n)
		if err := chip.GM().ReadFloat32s(g.gmC, got); err != nil {
			t.Fatal(err)
		}
		model, err := cube.Preset(m.NumericsPreset())
		if err != nil {
			t.Fatal(err)
		}
		want := make([]float32, g.m*g.n)
		for kt := 0; kt*g.bk < g.k; kt++ {
			kk := min(g.bk, g.k-kt*g.bk)
			as := make([]uint16, g.m*kk)
			for r := 0; r < g.m; r++ {
				copy(as[r*kk:], a[r*g.k+kt*g.bk:][:kk])
			}
			bs := b[kt*g.bk*g.n:][:kk*g.n]
			if err := model.MMADF16(g.m, kk, g.n, as, cube.RowMajor, bs, cube.RowMajor, want, cube.RowMajor, kt == 0); err != nil {
				t.Fatal(err)
			}
		}
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("%s: C[%d][%d] = %g, want %g", name, i/g.n, i%g.n, got[i], want[i])
			}
		}
	}
}

// Instructions started together (isa.Instr.WithNext) are counted one by
// one, take one flow each kind and fewer events, and move their bytes in
// about the time of the two apart; a group the lane cannot start — broken
// by a flag, over two paths, or longer than the lane queue, a flag marked
// to start with the next — stops the run with one line naming it; a group
// whose rest is never issued is named in the deadlock report.
func TestGroupedTransfers(t *testing.T) {
	m := archtest.Machine(t, "a100", "machine.cores=1")
	run := func(p isa.Program) (*arch.Stats, error) {
		chip, err := arch.NewChip(m, arch.Options{Mode: arch.Timing})
		if err != nil {
			t.Fatal(err)
		}
		return chip.Run(p)
	}
	g := tileGEMM{m: 128, n: 128, k: 4096, bk: 32, gmA: 0, gmB: 8 << 20, gmC: 16 << 20}
	apart, err := run(g.program(1))
	if err != nil {
		t.Fatal(err)
	}
	g.grouped = true
	together, err := run(g.program(1))
	if err != nil {
		t.Fatal(err)
	}
	if together.Cores[0].Instrs != apart.Cores[0].Instrs || together.GMReadBytes != apart.GMReadBytes {
		t.Errorf("instructions %d, GM bytes %d together; %d, %d apart", together.Cores[0].Instrs, together.GMReadBytes, apart.Cores[0].Instrs, apart.GMReadBytes)
	}
	if together.Events >= apart.Events*3/4 {
		t.Errorf("events %d together, %d apart: want a quarter fewer", together.Events, apart.Events)
	}
	if d := math.Abs(float64(together.Time-apart.Time)) / float64(apart.Time); d > 0.05 {
		t.Errorf("time %v together, %v apart", together.Time, apart.Time)
	}
	copyIn := func(smem int64) isa.Instr { return gpu.CopyToShared(smem, 0, 16, 64, 64, 64) }
	joined := func(in isa.Instr) isa.Instr { in.WithNext = true; return in }
	long := make([]isa.Instr, 20)
	for i := range long {
		long[i] = joined(copyIn(int64(i) * 1024))
	}
	long[len(long)-1].WithNext = false
	for _, c := range []struct {
		name string
		ins  []isa.Instr
		want string
	}{
		{"flag", []isa.Instr{joined(copyIn(0)), isa.SetFlag(gpu.LaneCopy, gpu.LaneLoad, 0), copyIn(1024)}, "only copies or loads start together"},
		{"paths", []isa.Instr{joined(copyIn(0)), gpu.CopyToRegisters(0, 0, 16, 64, 64, 64)}, "one path per group"},
		{"long", long, "longer than the lane queue (16)"},
		{"flag in a group", []isa.Instr{func() isa.Instr { f := isa.SetFlag(gpu.LaneCopy, gpu.LaneLoad, 0); f.WithNext = true; return f }(), copyIn(0)}, "only copies or loads start together (WithNext), not set_flag"},
		{"unfinished", []isa.Instr{joined(copyIn(0))}, "waits for the rest of its group (WithNext), never issued"},
	} {
		p := isa.Program{Name: c.name, Grids: []isa.Grid{{Name: c.name, CTAs: 1, CTA: func(int) isa.Stream { return isa.Slice(c.ins) },
			Resources: isa.Resources{SharedBytes: 32 << 10, Registers: 1024, Warps: 4}}}}
		_, err := run(p)
		// A deadlock report lists every blocked component, a line each.
		deadlock := c.name == "unfinished"
		if err == nil || !strings.Contains(err.Error(), c.want) || !deadlock && strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want one line with %q", c.name, err, c.want)
		}
	}
}

// The tensor lane runs at the SM's rate per input type: a 4-warp CTA's MMA
// of 2·m·n·k flops takes flops / (flops per cycle) cycles; a 1-warp CTA
// reaches one sub-core's share; two CTAs on one SM share the tensor cores.
func TestTensorRate(t *testing.T) {
	m := archtest.Machine(t, "a100", "machine.cores=1")
	sc := m.NvidiaSM()
	mma := func(warps, ctas int) sim.Time {
		s := isa.Slice([]isa.Instr{gpu.MMA(0, 128<<10, 160<<10, 128, 4096, 128, fp.FP16, fp.FP32, true)})
		p := isa.Program{Grids: []isa.Grid{{Name: "mma", CTAs: ctas, CTA: func(int) isa.Stream { return s },
			Resources: isa.Resources{Registers: 4096, Warps: warps}}}}
		chip, err := arch.NewChip(m, arch.Options{Mode: arch.Timing})
		if err != nil {
			t.Fatal(err)
		}
		st, err := chip.Run(p)
		if err != nil {
			t.Fatal(err)
		}
		return st.Time - sim.Time(sc.LaunchNS*float64(sim.Nanosecond))
	}
	period, _ := sim.NewClock(float64(sc.Clock))
	cyc := func(d sim.Time) float64 { return float64(d) / float64(period.Cycles(1)) } // the simulated clock's period is whole picoseconds
	flops := 2.0 * 128 * 128 * 4096
	ideal := flops / sc.Tensor.FlopsPerCycle.FP16
	// One m16n8k16 occupies a sub-core for o cycles; a run's result lands
	// latency − o after its last cycle.
	o := sc.Tensor.Shapes.FP16.Flops() / (sc.Tensor.FlopsPerCycle.FP16 / float64(sc.SubCores))
	lat := float64(sc.Tensor.LatencyCycles.FP16) - o
	check := func(what string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 3 {
			t.Errorf("%s: %.1f cycles, want %.1f", what, got, want)
		}
	}
	check("4 warps", cyc(mma(4, 1)), ideal+lat+1)
	check("1 warp", cyc(mma(1, 1)), 4*ideal+lat+1)
	check("2 CTAs", cyc(mma(4, 2)), 2*ideal+lat+1)
}

// A chain of dependent single instructions (each waits for the previous
// result through a flag) takes the instruction's latency per link, as the
// microbenchmarks that measured it (GPU-FACTS §2.2).
func TestMMALatencyChain(t *testing.T) {
	for _, name := range []string{"a100", "h100-sxm"} {
		m := archtest.Machine(t, name, "machine.cores=1")
		sc := m.NvidiaSM()
		mm, nn, kk, err := sc.Tensor.Shapes.FP16.Dims()
		if err != nil {
			t.Fatal(err)
		}
		const links = 100
		var ins []isa.Instr
		for i := 0; i < links; i++ {
			ins = append(ins, gpu.MMA(0, 128<<10, 160<<10, mm, kk, nn, fp.FP16, fp.FP32, i == 0),
				isa.SetFlag(gpu.LaneMatrix, gpu.LaneMatrix, 0), isa.WaitFlag(gpu.LaneMatrix, gpu.LaneMatrix, 0))
		}
		warps := 1
		if sc.Tensor.Instruction != machines.NvidiaMMASync {
			warps = 4 // a warp group
		}
		p := isa.Program{Grids: []isa.Grid{{Name: "chain", CTAs: 1, CTA: func(int) isa.Stream { return isa.Slice(ins) },
			Resources: isa.Resources{Registers: 4096, Warps: warps}}}}
		chip, err := arch.NewChip(m, arch.Options{Mode: arch.Timing})
		if err != nil {
			t.Fatal(err)
		}
		st, err := chip.Run(p)
		if err != nil {
			t.Fatal(err)
		}
		g := chip.GridTimes()[0]
		per := float64(g.Finished-g.Started) / float64(chip.Clock().Cycles(1)) / links
		if want := float64(sc.Tensor.LatencyCycles.FP16); math.Abs(per-want) > 0.1*want {
			t.Errorf("%s: %.2f cycles per dependent %s, want %.0f (±10 %%)", name, per, sc.Tensor.Shapes.FP16, want)
		}
		_ = st
	}
}

// CTAs that do not fit the SM are refused before the run with the limit
// they exceed; CTAs go to SMs in waves as resources allow.
func TestGridOccupancy(t *testing.T) {
	m := archtest.Machine(t, "a100", "machine.cores=2")
	chip, err := arch.NewChip(m, arch.Options{Mode: arch.Timing})
	if err != nil {
		t.Fatal(err)
	}
	s := isa.Slice([]isa.Instr{isa.Scalar(1000)})
	big := isa.Program{Grids: []isa.Grid{{Name: "big", CTAs: 1, CTA: func(int) isa.Stream { return s },
		Resources: isa.Resources{SharedBytes: 200 << 10, Warps: 4}}}}
	if _, err := chip.Run(big); err == nil || !strings.Contains(err.Error(), "smem_per_cta") {
		t.Errorf("oversized CTA: %v", err)
	}
	// 100 KiB of shared memory per CTA: one CTA per SM at a time, so 6 CTAs
	// on 2 SMs take 3 waves of 1000 cycles.
	chip, err = arch.NewChip(m, arch.Options{Mode: arch.Timing})
	if err != nil {
		t.Fatal(err)
	}
	p := isa.Program{Grids: []isa.Grid{{Name: "waves", CTAs: 6, CTA: func(int) isa.Stream { return s },
		Resources: isa.Resources{SharedBytes: 100 << 10, Registers: 4096, Warps: 4}}}}
	st, err := chip.Run(p)
	if err != nil {
		t.Fatal(err)
	}
	sc := m.NvidiaSM()
	period, _ := sim.NewClock(float64(sc.Clock))
	cycles := float64(st.Time-sim.Time(sc.LaunchNS*float64(sim.Nanosecond))) / float64(period.Cycles(1))
	if math.Abs(cycles-3000) > 6 {
		t.Errorf("3 waves took %.1f cycles, want about 3000", cycles)
	}
	if gt := chip.GridTimes(); len(gt) != 1 || gt[0].Finished != st.Time {
		t.Errorf("grid times %+v", gt)
	}
}

func TestConformance(t *testing.T) {
	g := tileGEMM{m: 64, n: 64, k: 96, bk: 32, gmA: 0, gmB: 1 << 20, gmC: 2 << 20}
	a, b := g.inputs()
	prep := func(c *arch.Chip) error {
		if c.GM() == nil {
			return nil
		}
		if err := c.GM().WriteUint16s(g.gmA, a); err != nil {
			return err
		}
		return c.GM().WriteUint16s(g.gmB, b)
	}
	// Two CTAs per SM (64 KiB each), five waves' worth on two SMs.
	m := archtest.Machine(t, "a100", "machine.cores=2")
	dead := isa.Program{Grids: []isa.Grid{{Name: "dead", CTAs: 3, CTA: func(i int) isa.Stream {
		if i == 1 {
			return isa.Slice([]isa.Instr{isa.WaitFlag(gpu.LaneCopy, gpu.LaneMatrix, 5)})
		}
		return g.stream()
	}, Resources: g.resources()}}}
	// Clusters of two CTAs (Blackwell pairs) on a TPC's two SMs: each rank
	// tells the other it started (a cluster flag, set on its copy lane)
	// and waits for the other's before its tile GEMM.
	pair := func(bad bool) isa.Program {
		return isa.Program{Grids: []isa.Grid{{Name: "pairs", CTAs: 6, Cluster: 2, CTA: func(i int) isa.Stream {
			r := i % 2
			hello := []isa.Instr{isa.SetFlag(gpu.LaneCopy, gpu.LaneMatrix, gpu.ClusterFlag+r), isa.WaitFlag(gpu.LaneCopy, gpu.LaneMatrix, gpu.ClusterFlag+1-r)}
			if bad && i == 3 {
				hello[0] = isa.SetFlag(gpu.LaneCopy, gpu.LaneMatrix, gpu.ClusterFlag+7) // rank 1 of the second pair signals the wrong flag
			}
			return func(yield func(isa.Instr) bool) {
				for _, in := range hello {
					if !yield(in) {
						return
					}
				}
				for in := range g.stream() {
					if !yield(in) {
						return
					}
				}
			}
		}, Resources: g.resources()}}}
	}
	archtest.Run(t, archtest.Subject{
		Machine: m,
		Cases: []archtest.Case{
			{Name: "cluster-pairs", Machine: archtest.Machine(t, "b200", "machine.cores=4"), Mode: arch.Timing,
				Program: func() (isa.Program, error) { return pair(false), nil }},
			{Name: "tile-gemm-functional", Mode: arch.Functional, Program: func() (isa.Program, error) { return g.program(3), nil }, Prepare: prep},
			{Name: "tile-gemm-waves", Mode: arch.Timing, Program: func() (isa.Program, error) { return g.program(19), nil }},
			{Name: "tile-gemm-v100", Machine: archtest.Machine(t, "v100", "machine.cores=3"), Mode: arch.Timing,
				Program: func() (isa.Program, error) { return g.program(7), nil }},
		},
		Deadlocks: []archtest.Deadlock{{
			Case: archtest.Case{Name: "wait-never-set", Mode: arch.Timing, Program: func() (isa.Program, error) { return dead, nil }},
			Want: []string{"SM 1: CTA 1 lane tensor: wait_flag copy tensor 5"},
		}, {
			Case: archtest.Case{Name: "cluster-flag-never-set", Machine: archtest.Machine(t, "b200", "machine.cores=4"), Mode: arch.Timing,
				Program: func() (isa.Program, error) { return pair(true), nil }},
			Want: []string{"SM 2: ", "CTA 2 lane tensor: wait_flag copy tensor 257"},
		}},
	})
}

// A flag outside the SM's lanes or ids stops the run with a message, never
// a panic or a silently shared flag.
func TestFlagBounds(t *testing.T) {
	m := archtest.Machine(t, "a100", "machine.cores=1")
	for _, in := range []isa.Instr{isa.SetFlag(gpu.LaneCopy, gpu.LaneLoad, 32), isa.SetFlag(gpu.LaneStore, gpu.LaneStore, 40),
		isa.WaitFlag(isa.Pipe(9), gpu.LaneMatrix, 0)} {
		p := isa.Program{Grids: []isa.Grid{{Name: "f", CTAs: 1, CTA: func(int) isa.Stream { return isa.Slice([]isa.Instr{in}) },
			Resources: isa.Resources{Registers: 4096, Warps: 4}}}}
		chip, err := arch.NewChip(m, arch.Options{Mode: arch.Timing})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := chip.Run(p); err == nil || !strings.Contains(err.Error(), "flag ids 0..31") {
			t.Errorf("%s: %v", isa.Format(in), err)
		}
	}
}

// core.tensor.sustained_clock slows only the matrix instructions of its
// input type: on the A100 (INT8 at 990 MHz) INT8's rate scales by
// 0.99/1.41 and its latency by the inverse, FP16 keeps the file figures;
// the A800 (the same core without the key) runs INT8 at core.clock. One FP8
// entry serves E4M3 and E5M2.
func TestSustainedClock(t *testing.T) {
	params := func(name string, sets ...string) *gpu.Params {
		p, err := nvidia.Params(archtest.Machine(t, name, sets...))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	a100, a800 := params("a100"), params("a800")
	d := 0.99e9 / 1.41e9
	for _, c := range []struct {
		what    string
		got     gpu.MatrixInput
		rate    float64
		latency int
	}{
		{"a100 INT8", a100.Matrix[fp.INT8], 4096 * d, 37}, // 26 × 1.41 / 0.99 = 37.03
		{"a100 FP16", a100.Matrix[fp.FP16], 2048, 25},
		{"a100 FP64", a100.Matrix[fp.FP64], 128, 25},
		{"a800 INT8", a800.Matrix[fp.INT8], 4096, 26},
	} {
		if math.Abs(c.got.Rate-c.rate) > 1e-9*c.rate || c.got.Latency != c.latency {
			t.Errorf("%s: rate %v, latency %d; want %v, %d", c.what, c.got.Rate, c.got.Latency, c.rate, c.latency)
		}
	}
	for f := range fp.NumFormats {
		if f != fp.INT8 && a100.Matrix[f] != a800.Matrix[f] {
			t.Errorf("%v: a100 %+v differs from a800 %+v", f, a100.Matrix[f], a800.Matrix[f])
		}
	}
	h, h8 := params("h100-sxm"), params("h100-sxm", "machine.core.tensor.sustained_clock.fp8=1.464GHz") // 0.8 × 1.83 GHz
	for _, f := range []fp.Format{fp.E4M3, fp.E5M2} {
		if got, want := h8.Matrix[f].Rate, 0.8*h.Matrix[f].Rate; math.Abs(got-want) > 1e-9*want {
			t.Errorf("h100-sxm %v at 0.8 × clock: rate %v, want %v", f, got, want)
		}
	}
	if h8.Matrix[fp.INT8] != h.Matrix[fp.INT8] || h8.Matrix[fp.FP16] != h.Matrix[fp.FP16] {
		t.Error("h100-sxm: an FP8 sustained clock changed INT8 or FP16")
	}
}
