package programs

import (
	"slices"
	"testing"

	"github.com/davinci-sim/davinci-sim/isa"
)

// The contract streams read ahead rely on (isa.StepCursor): a generator
// emits the same instructions from a step's marker on whether it resumed
// there or got there step by step — so a request taken late (the
// generator already past the step asked for: the reader drops up to its
// marker) gives what one taken at once does. Every GPU GEMM generator
// (cp.async stages, wgmma and tcgen05 shared operands with CTA pairs,
// register staging, no staging, the emulated schemes' outside
// accumulators and fused split, the ozaki grouped GEMM), for the first,
// a middle and the last block of each kernel, resuming from several
// steps: the resumed stream from marker T on equals the plain stream's.
func TestStepCursorResumesAsStepped(t *testing.T) {
	cases := []struct {
		file, machine string
		sets          []string
		kBatch        int
	}{
		{"a100-emulated-gemm", "a100", []string{"program.scheme=hgemm"}, 0},
		{"a100-emulated-gemm", "h100-sxm", []string{"program.scheme=ape-fp32b"}, 0},
		{"a100-emulated-gemm", "b200", []string{"program.scheme=sgemm-cube"}, 0},
		{"a100-emulated-gemm", "a100", []string{"program.scheme=hgemm", "program.tiling.staging=registers"}, 0},
		{"a100-emulated-gemm", "a100", []string{"program.scheme=hgemm", "program.tiling.staging=none"}, 0},
		{"a100-emulated-gemm", "a100", []string{"program.scheme=ootomo"}, 0},
		{"a100-emulated-gemm", "mi300x", []string{"program.scheme={name: markidis, split: fused}"}, 0},
		{"a100-emulated-gemm", "t4", []string{"program.scheme=le-gemm"}, 0},
		{"a100-emulated-gemm", "h100-sxm", []string{"program.scheme=native"}, 4},
		{"b200-ozaki", "", nil, 0},
	}
	checked := 0
	for _, c := range cases {
		job := buildJob(t, "examples/"+c.file+".yaml", Options{Machine: c.machine, Numerics: NumericsOff, KBatch: c.kBatch,
			Overrides: mustSets(t, append([]string{"program.m=512", "program.n=384", "program.k=1024"}, c.sets...)...)})
		for _, g := range job.Program().Grids {
			if g.Steps == nil {
				continue
			}
			for _, i := range []int{0, g.CTAs / 2, g.CTAs - 1} {
				plain := slices.Collect(g.Steps(i, &isa.StepCursor{}))
				for _, at := range stepMarkers(plain) {
					mk := plain[at]
					period, from, to := mk.K, mk.Rows, mk.Cols
					for _, skip := range []int{period, 3 * period} {
						target := mk.M + skip
						if mk.M < from || target > to {
							continue
						}
						// Asked at the marker: the generator takes it at
						// its next step.
						cur := &isa.StepCursor{}
						var resumed []isa.Instr
						asked := false
						for in := range g.Steps(i, cur) {
							resumed = append(resumed, in)
							if !asked && in.Op == isa.OpStep && in.M == mk.M {
								cur.Ask(target)
								asked = true
							}
						}
						want := plain[markerOf(plain, target):]
						got := resumed[markerOf(resumed, target):]
						if !slices.Equal(got, want) {
							t.Errorf("%s %s %v kernel %s block %d: resumed at step %d from %d, the stream from its marker on differs from the stepped one's (%d and %d instructions)",
								c.file, c.machine, c.sets, g.Name, i, target, mk.M, len(got), len(want))
						}
						checked++
					}
				}
			}
		}
	}
	if checked < 100 {
		t.Errorf("%d resumptions checked: want the generators' steps covered", checked)
	}
}

// stepMarkers returns the positions of a few of the stream's step markers
// (the first repeating ones and one in the middle).
func stepMarkers(s []isa.Instr) []int {
	var at []int
	for i, in := range s {
		if in.Op == isa.OpStep {
			at = append(at, i)
		}
	}
	if len(at) <= 4 {
		return at
	}
	return []int{at[1], at[2], at[len(at)/2]}
}

// markerOf returns the position of the marker of step k (len(s) if none).
func markerOf(s []isa.Instr, k int) int {
	for i, in := range s {
		if in.Op == isa.OpStep && in.M == k {
			return i
		}
	}
	return len(s)
}
