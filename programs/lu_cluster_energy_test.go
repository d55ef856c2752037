package programs

import (
	"math"
	"testing"
)

// A cluster run's energy has its parts, as a one-chip run's: each the sum
// over the NPUs, and together the total — at fidelity full (every NPU's
// statistics) and timed apart (each kernel's simulation alone, sampled
// with predicted kernels too: their energy predicted part by part).
func TestLUClusterEnergyParts(t *testing.T) {
	for _, c := range []struct {
		fidelity string
		sets     []string
	}{
		{"full", nil},
		{"isolated", nil},
		{"sampled", []string{"program.n=4096", "program.sampling.windows=2"}},
	} {
		res, err := runLU(t, luClusterSmall+"numerics: off\n", append([]string{"program.fidelity=" + c.fidelity}, c.sets...)...)
		if err != nil {
			t.Fatal(err)
		}
		e := res.Report.Energy
		if e == nil {
			t.Fatalf("%s: no energy section", c.fidelity)
		}
		if s := res.Report.Cluster.Sampling; c.fidelity == "sampled" && (s == nil || s.LaunchesPredicted == 0) {
			t.Errorf("sampled: no kernel predicted (%+v): the test exercises too little", s)
		}
		sum := e.StaticJoules + e.MatrixJoules + e.VectorJoules + e.PathJoules + e.L2Joules + e.HBMJoules
		if e.Joules <= 0 || math.Abs(sum-e.Joules) > 1e-9*e.Joules {
			t.Errorf("%s: parts add to %v J, joules %v", c.fidelity, sum, e.Joules)
		}
		if e.StaticJoules <= 0 || e.MatrixJoules <= 0 || e.VectorJoules <= 0 || e.PathJoules <= 0 || e.L2Joules <= 0 || e.HBMJoules <= 0 {
			t.Errorf("%s: a part is not positive: %+v", c.fidelity, *e)
		}
	}
}
