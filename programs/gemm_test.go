package programs

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/davinci-sim/davinci-sim/arch"
	"github.com/davinci-sim/davinci-sim/isa"
	"github.com/davinci-sim/davinci-sim/machines"
	"github.com/davinci-sim/davinci-sim/report"
)

// runGEMM runs a GEMM program given as YAML and returns the job and report.
func runGEMM(t *testing.T, yaml string, sets ...string) (*gemmJob, *report.Report, *arch.Stats) {
	t.Helper()
	f, err := Parse("test.yaml", ".", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	ovs := mustSets(t, sets...)
	opts := Options{Overrides: ovs}
	m, err := MachineFor(f, opts)
	if err != nil {
		t.Fatal(err)
	}
	job, err := f.Kind.Build(f, m, opts)
	if err != nil {
		t.Fatal(err)
	}
	chip, err := arch.NewChip(m, arch.Options{Mode: job.Mode()})
	if err != nil {
		t.Fatal(err)
	}
	if err := job.Prepare(chip); err != nil {
		t.Fatal(err)
	}
	st, err := chip.Run(job.Program())
	if err != nil {
		t.Fatal(err)
	}
	rep := &report.Report{}
	rep.FromStats(st, chip.Clock().Hz(), []int{0})
	if err := job.Finish(chip, st, rep); err != nil {
		t.Fatal(err)
	}
	if check, _ := f.Config.Viper().Get("check").(bool); check {
		// A test of bit-exactness that made no check would pass vacuously.
		assertChecked(t, f.Path, &Result{Report: rep})
	}
	return job.(*gemmJob), rep, st
}

// The simulated result equals the golden model bit for bit, over shapes
// (square, rectangular, edge tiles, several L1 groups), both accumulation
// orders, both buffering modes and two cube numerics presets.
func TestSGEMMCubeMatchesGolden(t *testing.T) {
	shapes := []struct{ m, k, n, bm, bk, bn, nfused int }{
		{64, 64, 64, 32, 32, 32, 0},
		{48, 160, 80, 32, 32, 48, 2}, // three L1 groups, edge tiles in n
		{50, 70, 90, 32, 32, 48, 1},  // edge tiles everywhere, one k-block per group
		{17, 33, 5, 16, 16, 16, 0},
	}
	for _, numerics := range []string{"ascend-910a", "fp32-rne"} {
		for _, acc := range []string{"termwise", "elementwise"} {
			for _, buf := range []string{"double", "single"} {
				for _, s := range shapes {
					name := fmt.Sprintf("%s/%s/%s/%dx%dx%d", numerics, acc, buf, s.m, s.k, s.n)
					t.Run(name, func(t *testing.T) {
						y := fmt.Sprintf(`kind: sgemm-cube
m: %d
k: %d
n: %d
tiling: {bm: %d, bk: %d, bn: %d, nfused: %d}
buffering: %s
accumulation: %s
split: {sb: 12}
inputs: {distribution: uniform, offset_exponent: -3, seed: 5}
numerics: full
cores: 4
check: true
baselines: false
`, s.m, s.k, s.n, s.bm, s.bk, s.bn, s.nfused, buf, acc)
						j, rep, _ := runGEMM(t, y, "machine.core.cube.numerics="+numerics)
						if rep.Error == nil || rep.Error.RelFro > 1e-5 {
							t.Fatalf("error %+v", rep.Error)
						}
						if len(j.c) != s.m*s.n {
							t.Fatal("no result")
						}
					})
				}
			}
		}
	}
}

func TestHGEMMMatchesGolden(t *testing.T) {
	y := `kind: hgemm
m: 40
k: 96
n: 72
tiling: {bm: 32, bk: 32, bn: 32, nfused: 1}
numerics: full
cores: 3
check: true
`
	_, rep, _ := runGEMM(t, y)
	if rep.Error.RelFro < 1e-5 || rep.Error.RelFro > 1e-2 {
		t.Fatalf("hgemm error %g not FP16-like", rep.Error.RelFro)
	}
}

// Every output tile is computed by exactly one core.
func TestWorkCoversEveryTileOnce(t *testing.T) {
	for _, c := range []struct{ nrb, ncb, p int }{{47, 47, 32}, {12, 12, 32}, {3, 1, 32}, {64, 5, 32}, {33, 2, 4}} {
		pl := &gemmPlan{nrb: c.nrb, ncb: c.ncb, ncores: c.p}
		seen := make([]int, c.nrb*c.ncb)
		for core := 0; core < c.p; core++ {
			for _, w := range pl.work(core) {
				for j := w.j0; j < w.j1; j++ {
					seen[w.i*c.ncb+j]++
				}
			}
		}
		for i, s := range seen {
			if s != 1 {
				t.Fatalf("%+v: tile %d computed %d times", c, i, s)
			}
		}
	}
}

// Termwise with sb = 12 beats plain FP16 by orders of magnitude (SGEMM-cube
// Fig. 8), and sampled numerics agrees with full numerics on the tiles.
func TestAccuracyShape(t *testing.T) {
	y := `kind: sgemm-cube
m: 96
k: 256
n: 96
tiling: {bm: 32, bk: 64, bn: 32}
numerics: full
cores: 4
`
	_, rep, _ := runGEMM(t, y)
	h := rep.Baselines["hgemm"].RelFro
	e := rep.Error.RelFro
	if !(e < h/100) {
		t.Fatalf("sgemm-cube error %g not 100× below hgemm %g", e, h)
	}
	if cpu := rep.Baselines["cpu_sgemm_fp32"].RelFro; cpu <= 0 || cpu > 1e-5 {
		t.Fatalf("cpu fp32 error %g", cpu)
	}
	if math.IsNaN(e) {
		t.Fatal("NaN error")
	}
}

// The generator's programs pass the static checks the run skips for them
// (isa.Program.Generated), over tilings, edge shapes, both buffering modes
// and both accumulation orders.
func TestGeneratedProgramsPassCheck(t *testing.T) {
	m, err := machines.Load("ascend-910a", nil)
	if err != nil {
		t.Fatal(err)
	}
	chip, err := arch.NewChip(m, arch.Options{Mode: arch.Timing})
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"sgemm-cube", "hgemm"} {
		for _, acc := range []string{"termwise", "elementwise"} {
			for _, buf := range []string{"single", "double"} {
				for _, s := range []struct{ m, k, n, bm, bk, bn int }{{700, 3000, 500, 176, 64, 176}, {300, 1000, 200, 96, 64, 96}, {33, 17, 65, 16, 16, 16}, {1000, 200, 64, 128, 128, 128}} {
					if acc == "elementwise" && (s.bm*s.bn > 128*128 || kind == "hgemm") { // (hgemm refuses it: one product)
						continue
					}
					y := fmt.Sprintf("kind: %s\nm: %d\nk: %d\nn: %d\ntiling: {bm: %d, bk: %d, bn: %d}\nbuffering: %s\naccumulation: %s\nnumerics: off\n",
						kind, s.m, s.k, s.n, s.bm, s.bk, s.bn, buf, acc)
					f, err := Parse("t.yaml", ".", []byte(y))
					if err != nil {
						t.Fatal(err)
					}
					job, err := f.Kind.Build(f, m, Options{})
					if err != nil {
						t.Fatalf("%s: %v", y, err)
					}
					p := job.Program()
					if !p.Generated {
						t.Fatal("generator output not marked Generated")
					}
					if err := isa.Check(p, chip.Limits()); err != nil {
						t.Fatalf("%s\n%v", y, err)
					}
				}
			}
		}
	}
}

// Native FP32 GEMM on the 910B3: simulated equals golden bit for bit, and
// the FP32 cube is far more accurate than FP16.
func TestNativeSGEMMMatchesGolden(t *testing.T) {
	for _, s := range []struct{ m, k, n int }{{64, 96, 48}, {50, 70, 90}} {
		y := fmt.Sprintf(`kind: sgemm
machine: ascend-910b3
m: %d
k: %d
n: %d
tiling: {bm: 32, bk: 32, bn: 32, nfused: 1}
numerics: full
cores: 4
check: true
`, s.m, s.k, s.n)
		_, rep, _ := runGEMM(t, y)
		if rep.Error.RelFro > 1e-6 || rep.Baselines["hgemm"].RelFro < 1e-5 {
			t.Fatalf("errors: sgemm %g hgemm %g", rep.Error.RelFro, rep.Baselines["hgemm"].RelFro)
		}
		if rep.Flops.Convention != "fp32 (2mnk; peak = FP32 cube peak: native cube)" {
			t.Fatalf("convention %q", rep.Flops.Convention)
		}
	}
	// The 910A has no FP32 cube: a clear error.
	f, _ := Parse("t.yaml", ".", []byte("kind: sgemm\nm: 64\nk: 64\nn: 64\n"))
	m, _ := machines.Load("ascend-910a", nil)
	if _, err := f.Kind.Build(f, m, Options{}); err == nil || !strings.Contains(err.Error(), "no native FP32 cube") {
		t.Fatalf("want a clear error, got %v", err)
	}
}
