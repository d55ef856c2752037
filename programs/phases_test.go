package programs

import (
	"math"
	"slices"
	"testing"
)

// A DaVinci program's phases, separated by sync_all as kernel launches
// are, are its kernels in the report, named as the GPU programs name
// theirs: one after the other, from 0 to the run's end, their events the
// run's (a review found DaVinci runs reported no per-phase times).
func TestDaVinciPhasesAreKernels(t *testing.T) {
	for _, c := range []struct {
		scheme string
		want   []string
	}{
		{"markidis", []string{"emulated-gemm/split", "emulated-gemm/hh+hl+lh"}},
		{"sgemm-cube", []string{"emulated-gemm/split", "emulated-gemm/hh,hl,lh", "emulated-gemm/epilogue"}},
		{"ape-int16", []string{"emulated-gemm/split", "emulated-gemm/hh,hl,lh,ll", "emulated-gemm/recombine"}},
	} {
		res, err := runEmulated(t, "ascend-910a", "program.scheme="+c.scheme, "program.m=256", "program.n=256", "program.k=256", "program.numerics=off")
		if err != nil {
			t.Fatal(err)
		}
		rep := res.Report
		var names []string
		var events uint64
		at := 0.0
		for _, k := range rep.Kernels {
			names = append(names, k.Name)
			events += k.Events
			if k.Launched != at || k.Started != k.Launched || !(k.Finished > k.Started) || k.Blocks != 32 {
				t.Errorf("%s: kernel %+v does not follow at %g on 32 cores", c.scheme, k, at)
			}
			at = k.Finished
		}
		if !slices.Equal(names, c.want) {
			t.Errorf("%s: kernels %v, want %v", c.scheme, names, c.want)
		}
		if math.Abs(at-rep.Time.Seconds) > 1e-15 || events != rep.Sim.Events {
			t.Errorf("%s: the kernels end at %g s with %d events; the run at %g s with %d", c.scheme, at, events, rep.Time.Seconds, rep.Sim.Events)
		}
	}
}

// A hand-written program's phases are its kernels too, unnamed: "phase i",
// each as long as its cores took between the barriers.
func TestAsmPhasesAreKernels(t *testing.T) {
	res, err := Execute(programText(t, "kind: asm\ncores: 2\nasm: |\n  scalar cycles=5\n  sync_all\n  scalar cycles=7\n"), Options{}, RunHooks{})
	if err != nil {
		t.Fatal(err)
	}
	k := res.Report.Kernels
	if len(k) != 2 || k[0].Name != "phase 0" || k[1].Name != "phase 1" || math.Abs(k[0].Seconds-5e-9) > 1e-18 || math.Abs(k[1].Seconds-7e-9) > 1e-18 {
		t.Errorf("kernels %+v, want phase 0 of 5 ns and phase 1 of 7 ns (1 GHz)", k)
	}
}
