package programs

import (
	"fmt"
	"testing"

	"github.com/davinci-sim/davinci-sim/machines"
)

// The kinds whose kernels the estimate did not follow before 2026-12-05
// (they counted every block slot of every core, without data) follow
// them now (gpuKernels): gpu-bench's tests and ozaki with numerics off
// (its plan is then the parameters'), exactly as their builds launch
// them; ozaki with numerics full (ADP's plan is the inputs': every plan
// they may choose is counted) and scheme auto (every candidate's) count
// the kernels the build launches among theirs; lu-fused's kernels are
// the ones its host program launches (compared by the run's report:
// names and blocks, in order).
func TestBlocksHostBytesFollowMoreKernels(t *testing.T) {
	small := []string{"program.m=200", "program.n=136", "program.k=72"}
	for _, c := range []struct {
		file, machine, numerics string
		sets                    []string
		among                   bool // the build's kernels among the estimate's (else the same)
	}{
		{"a100-hbm-stream.yaml", "a100", NumericsOff, nil, false},
		{"a100-hbm-stream.yaml", "mi300x", NumericsOff, []string{"program.bytes=64MiB"}, false},
		{"a100-tensor-peak.yaml", "b200", NumericsOff, nil, false},
		{"a100-tensor-peak.yaml", "mi210", NumericsOff, []string{"program.test=matrix-peak"}, false},
		{"a100-mma-latency.yaml", "h100-sxm", NumericsOff, nil, false},
		{"a100-l2-bandwidth.yaml", "t4", NumericsOff, nil, false},
		{"a100-smem-bandwidth.yaml", "mi300x", NumericsOff, nil, false},
		{"b200-ozaki.yaml", "b200", NumericsOff, nil, false},
		{"b200-ozaki.yaml", "mi300x", NumericsOff, append([]string{"program.precision=fixed"}, small...), false},
		{"b200-ozaki.yaml", "a100", NumericsOff, []string{"program.method=ozaki-ii", "program.precision=", "program.mantissa_bits=40", "program.m=256", "program.n=256", "program.k=256"}, false},
		{"b200-ozaki.yaml", "a100", NumericsFull, append([]string{"program.precision=dynamic"}, small...), true},
		{"b200-ozaki.yaml", "h100-sxm", NumericsFull, small, true},
		{"b200-ozaki.yaml", "mi300x", NumericsFull, append([]string{"program.mantissa_bits=20", "program.precision=dynamic"}, small...), true},
		{"a100-emulated-gemm.yaml", "a100", NumericsFull, append([]string{"program.scheme=auto"}, small...), true},
		{"a100-emulated-gemm.yaml", "mi300x", NumericsOff, append([]string{"program.scheme=auto"}, small...), true},
	} {
		name := fmt.Sprintf("%s on %s, numerics %s %v", c.file, c.machine, c.numerics, c.sets)
		opts := Options{Machine: c.machine, Numerics: c.numerics, Overrides: mustSets(t, c.sets...)}
		f, m, job := buildRun(t, "examples/"+c.file, opts)
		built := job.Program().Grids
		if len(built) == 0 {
			t.Fatalf("%s: no kernels launched", name)
		}
		params, err := opts.estimateOf(f).params()
		if err != nil {
			t.Fatal(err)
		}
		got, ok := gpuKernels(f, params, m)
		if !ok {
			t.Fatalf("%s: the estimate does not follow its kernels", name)
		}
		if !c.among {
			sameKernels(t, name, got, built)
			continue
		}
	built:
		for _, g := range built {
			for _, e := range got {
				if sameShape(e, g) {
					continue built
				}
			}
			t.Errorf("%s: kernel %s (%d blocks of %+v, timed only %v) launched, not among the %d estimated", name, g.Name, g.CTAs, g.Resources, g.TimingOnly, len(got))
		}
	}

	// lu-fused: its host program's grids, as the run reports them.
	for _, c := range []struct {
		machine string
		sets    []string
	}{
		{"a100", []string{"program.n=1024", "program.nb=256", "program.n_fused=2"}},
		{"a100", []string{"program.n=768", "program.nb=128", "program.trailing=fp32", "program.diag=gpu"}},
		{"h100-sxm", []string{"program.n=512", "program.nb=128", "program.look_ahead=false"}},
	} {
		f, err := ReadFile("examples/a100-lu-fused.yaml")
		if err != nil {
			t.Fatal(err)
		}
		opts := Options{Machine: c.machine, Numerics: NumericsOff, Overrides: mustSets(t, c.sets...)}
		res, err := Execute(f, opts, RunHooks{})
		if err != nil {
			t.Fatalf("lu-fused on %s %v: %v", c.machine, c.sets, err)
		}
		m, err := machines.Load(c.machine, nil)
		if err != nil {
			t.Fatal(err)
		}
		params, err := opts.estimateOf(f).params()
		if err != nil {
			t.Fatal(err)
		}
		got, ok := gpuKernels(f, params, m)
		ran := res.Report.Kernels
		if !ok || len(got) != len(ran) || len(ran) == 0 {
			t.Fatalf("lu-fused on %s %v: %d kernels estimated (%v), %d ran", c.machine, c.sets, len(got), ok, len(ran))
		}
		for i, k := range ran {
			if got[i].Name != k.Name || got[i].CTAs != k.Blocks {
				t.Errorf("lu-fused on %s %v, kernel %d: estimated %s of %d blocks, ran %s of %d", c.machine, c.sets, i, got[i].Name, got[i].CTAs, k.Name, k.Blocks)
			}
		}
	}
}
