package programs

import (
	"encoding/json"
	"testing"
)

// Kernels simulated beside one asked for on use (simulateOnUse) leave a
// run's outputs as they are without it, at fidelity isolated (every
// distinct kernel simulated on use) and sampled (a class's first points
// on use), and some are used.
func TestLUKernelsSimulatedBesideSameOutputs(t *testing.T) {
	for _, fidelity := range []string{"isolated", "sampled"} {
		sets := []string{"program.n=8192", "program.nb=256", "program.n_fused=6", "program.n_fusion=16",
			"program.trailing=fp16", "program.sampling.windows=2", "program.fidelity=" + fidelity}
		var reports [2][]byte
		used := 0
		for i, beside := range []bool{false, true} {
			luSimulateBeside, luBesideUsed = beside, func() { used++ }
			res, err := runLU(t, luClusterSmall+"numerics: off\n", sets...)
			luSimulateBeside, luBesideUsed = true, nil
			if err != nil {
				t.Fatal(err)
			}
			rep := *res.Report
			rep.Sim.WallSeconds, rep.Sim.EventsPerSecond, rep.Sim.KernelWallSeconds = 0, 0, 0
			if reports[i], err = json.Marshal(rep); err != nil {
				t.Fatal(err)
			}
		}
		if a, b := string(reports[0]), string(reports[1]); a != b {
			i := 0
			for i < min(len(a), len(b)) && a[i] == b[i] {
				i++
			}
			from := max(0, i-60)
			t.Errorf("%s: the report with kernels simulated beside differs at byte %d: …%s… (alone: …%s…)",
				fidelity, i, b[from:min(len(b), i+60)], a[from:min(len(a), i+60)])
		}
		if used == 0 {
			t.Errorf("%s: no kernel simulated beside another was used", fidelity)
		}
		t.Logf("%s: %d kernels simulated beside another used", fidelity, used)
	}
}
