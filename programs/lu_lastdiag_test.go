package programs

import (
	"context"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/davinci-sim/davinci-sim/traces"
)

// The last diagonal block is only factored: its inverses would serve a
// TRSM, and none follows (refinement reads the FP32 factors l and u, not
// the inverses). On one NPU the host's diag stage then holds nbk − 1
// blocks of LU and inverses (4/3·nb³) and one of LU alone (2/3·nb³: half
// the time, compute-bound), and h2d nbk − 1 transfers of inverses.
func TestLULastDiagNoInverses(t *testing.T) {
	stages := func(n int) map[string]float64 {
		t.Helper()
		res, err := runLU(t, fmt.Sprintf("kind: lu-fused\nn: %d\nnb: 128\nnumerics: off\n", n))
		if err != nil {
			t.Fatal(err)
		}
		return hpl(t, res).HostStagesSeconds
	}
	one, two, four := stages(128), stages(256), stages(512) // 1, 2 and 4 blocks
	lu, full := one["diag"], two["diag"]-one["diag"]
	if r := lu / full; math.Abs(r-0.5) > 0.01 {
		t.Errorf("the last block's diag %.6g s over a full block's %.6g s: %.3f, want 0.5 (LU only)", lu, full, r)
	}
	if got, want := four["diag"], 3*full+lu; math.Abs(got-want) > 1e-6*want {
		t.Errorf("4 blocks: diag %.6g s, want 3 full blocks and one LU, %.6g s", got, want)
	}
	if one["h2d"] != 0 || math.Abs(four["h2d"]-3*two["h2d"]) > 1e-6*four["h2d"] {
		t.Errorf("h2d: %.6g s with 1 block (want none), %.6g s with 2, %.6g s with 4 (want 3 transfers)", one["h2d"], two["h2d"], four["h2d"])
	}
}

// The golden model computes no inverses for the last block, every other
// block's (the simulated host does the same: TestLUMatchesGolden compares
// the factors bit for bit).
func TestLUGoldenLastDiagFactorOnly(t *testing.T) {
	pl, mat := goldenLUSetup(t, LUParams{N: 384, NB: 128, NFused: 1, Trailing: "fp32"})
	g, err := luGoldenRun(context.Background(), pl, mat)
	if err != nil {
		t.Fatal(err)
	}
	for i, d := range g.diags {
		last := i == len(g.diags)-1
		if (d.uinv == nil) != last || (d.linv == nil) != last || d.l == nil || d.u == nil {
			t.Errorf("block %d of %d: inverses %v %v, factors %v %v", i, len(g.diags), d.uinv != nil, d.linv != nil, d.l != nil, d.u != nil)
		}
	}
}

// On a GPU with the diagonal blocks on the CUDA cores, the last block runs
// getrf alone: 2·nbk − 1 diag kernels; with them on the host, nbk − 1
// inverse transfers.
func TestLUGPULastDiagNoInverses(t *testing.T) {
	res, err := runLU(t, "kind: lu-fused\nmachine: a100\nn: 512\nnb: 128\nnumerics: off\ndiag: gpu\n")
	if err != nil || res.Failure != nil {
		t.Fatal(err, res.Failure)
	}
	if z := hpl(t, res).Zones["diag"]; z == nil || z.Kernels != 7 {
		t.Errorf("diag zone %+v, want 7 kernels (4 getrf, 3 trtri)", z)
	}
	h2d := func(n int) float64 {
		res, err := runLU(t, fmt.Sprintf("kind: lu-fused\nmachine: a100\nn: %d\nnb: 128\nnumerics: off\n", n))
		if err != nil || res.Failure != nil {
			t.Fatal(err, res.Failure)
		}
		return hpl(t, res).HostStagesSeconds["h2d"]
	}
	if two, four := h2d(256), h2d(512); two == 0 || math.Abs(four-3*two) > 1e-6*four {
		t.Errorf("h2d %.6g s with 2 blocks, %.6g s with 4: want 1 and 3 transfers", two, four)
	}
}

// On a cluster the last block's owner factors it (LU alone) and nothing
// follows: no inverse broadcast over MPI, no inverse to any NPU.
func TestLUClusterLastDiagNoInverses(t *testing.T) {
	f, err := Parse("lu.yaml", ".", []byte(luClusterSmall+"numerics: off\ngrid: {p: 2, q: 4}\n"))
	if err != nil {
		t.Fatal(err)
	}
	ct := &traces.ClusterTrace{}
	if _, err := Execute(f, Options{}, RunHooks{ClusterTrace: ct}); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range ct.Spans {
		names = append(names, s.Name)
	}
	last := 1024/128 - 1
	for _, want := range []string{fmt.Sprintf("diag %d (LU)", last), fmt.Sprintf("diag %d (LU + inverses)", last-1),
		fmt.Sprintf("h2d inverses %d", last-1), fmt.Sprintf("mpi-bcast U⁻¹ %d", last-1), fmt.Sprintf("mpi-bcast L⁻¹ %d", last-1)} {
		if !slices.Contains(names, want) {
			t.Errorf("no span %q", want)
		}
	}
	for _, not := range []string{fmt.Sprintf("diag %d (LU + inverses)", last), fmt.Sprintf("h2d inverses %d", last),
		fmt.Sprintf("mpi-bcast U⁻¹ %d", last), fmt.Sprintf("mpi-bcast L⁻¹ %d", last)} {
		if slices.Contains(names, not) {
			t.Errorf("span %q: the last block's inverses serve nothing", not)
		}
	}
}
