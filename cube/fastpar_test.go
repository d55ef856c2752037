package cube

import (
	"math/rand/v2"
	"testing"

	"github.com/davinci-sim/davinci-sim/fp"
)

// Calls split among goroutines (forced here on small shapes) give the
// reference results bit for bit on every fast path, including tiles that
// fall back to the reference per element (specials), where each goroutine
// needs its own scratch (run with -race).
func TestFastParallelSplit(t *testing.T) {
	old := parallelMACs
	parallelMACs = 1
	defer func() { parallelMACs = old }()
	models := fastModels(t)
	for _, name := range []string{"v100", "a100", "h100", "b200"} {
		m, err := Preset(name)
		if err != nil {
			t.Fatal(err)
		}
		models = append(models, m)
	}
	rng := rand.New(rand.NewPCG(21, 22))
	for _, m := range models {
		for _, f := range []fp.Format{fp.FP16, fp.BF16} {
			if _, err := m.ParamsFor(f, fp.FP32); err != nil {
				continue // e.g. v100 has no BF16 input
			}
			for _, kind := range []string{"normal", "special", "cancel", "huge"} {
				for _, sh := range [][3]int{{17, 33, 18}, {34, 40, 9}, {9, 16, 35}} {
					mm, k, n := sh[0], sh[1], sh[2]
					a, b := genPats(rng, f, kind, mm*k), genPats(rng, f, kind, k*n)
					runBoth(t, m, f, mm, k, n, a, b, genC(rng, kind, mm*n), RowMajor, Fractal, RowMajor, false, kind)
				}
			}
		}
	}
}
