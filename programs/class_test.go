package programs

import (
	"slices"
	"testing"

	"github.com/davinci-sim/davinci-sim/isa"
	"github.com/davinci-sim/davinci-sim/machines"
)

// A grid's Class is a promise fast-forward relies on without checking
// every block: blocks of equal class run the same instructions, addresses
// aside. Every block of small generated grids is compared with the first
// block of its class: GEMMs with edge tiles in m and n, CTA pairs, the
// emulated schemes' product kernels, the staging variants, ozaki's
// grouped GEMM (one class per diagonal's depth), LU's joined TRSM parts.
func TestGridClassesAreAlike(t *testing.T) {
	cases := []struct {
		file string
		sets []string
	}{
		{"examples/a100-hgemm.yaml", []string{"program.m=1000", "program.n=700", "program.k=300"}},
		{"examples/a100-hgemm.yaml", []string{"program.m=1000", "program.n=700", "program.k=300", "program.tiling.staging=none", "program.tiling.stages=1"}},
		{"examples/a100-sgemm.yaml", []string{"program.m=600", "program.n=520", "program.k=200"}},
		{"examples/mi210-hgemm.yaml", []string{"program.m=1000", "program.n=700", "program.k=300"}},
		{"examples/a100-emulated-gemm.yaml", []string{"program.scheme=ootomo", "program.m=700", "program.n=600", "program.k=300"}},
		{"examples/a100-emulated-gemm.yaml", []string{"program.scheme=ape-fp32f", "program.m=700", "program.n=600", "program.k=300"}},
		{"examples/a100-emulated-gemm.yaml", []string{"program.scheme=le-gemm", "program.m=700", "program.n=600", "program.k=300"}},
		{"examples/b200-ozaki.yaml", []string{"program.m=700", "program.n=600", "program.k=300"}},
		{"examples/a100-lu-fused.yaml", []string{"program.n=1280", "program.nb=256"}},
	}
	for _, c := range cases {
		job := buildJob(t, c.file, Options{Overrides: mustSets(t, c.sets...), Numerics: NumericsOff})
		declared, shared := 0, 0
		grids := job.Program().Grids
		if lu, ok := job.(*luGPUJob); ok {
			// LU's grids are launched by its host program: its joined
			// TRSM parts (left, right: other shapes) and a trailing update.
			grids = append(grids, lu.trsmGrid(0), lu.trsmGrid(1))
		}
		for _, g := range grids {
			if g.Class == nil {
				continue
			}
			declared++
			first := map[int][]isa.Instr{}
			for i := 0; i < g.CTAs; i++ {
				var shape []isa.Instr
				for in := range g.CTA(i) {
					shape = append(shape, in.Shape())
				}
				ref, seen := first[g.Class(i)]
				if !seen {
					first[g.Class(i)] = shape
					continue
				}
				shared++
				if !slices.Equal(ref, shape) {
					t.Errorf("%s %v: kernel %s: block %d has the class of an earlier block but other instructions", c.file, c.sets, g.Name, i)
					break
				}
			}
		}
		if declared == 0 || shared == 0 {
			t.Errorf("%s %v: %d kernels declare classes, %d blocks share one: want some of both", c.file, c.sets, declared, shared)
		}
	}
}

// buildJob builds the job of a program file with opts (a test's failure
// where it cannot).
func buildJob(t *testing.T, file string, opts Options) Job {
	t.Helper()
	_, _, job := buildRun(t, file, opts)
	return job
}

// buildRun is buildJob that also returns the file read and its machine.
func buildRun(t *testing.T, file string, opts Options) (*File, *machines.Machine, Job) {
	t.Helper()
	f := mustRead(t, file)
	m, err := MachineFor(f, opts)
	if err != nil {
		t.Fatal(err)
	}
	job, err := f.Kind.BuildFor(f, m, opts)
	if err != nil {
		t.Fatalf("%s %v: %v", file, opts.Overrides, err)
	}
	return f, m, job
}
