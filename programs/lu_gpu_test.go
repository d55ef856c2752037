package programs

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/davinci-sim/davinci-sim/badinput"
)

// luGPUFull runs lu-fused on a GPU with full numerics and check: true and
// returns its hplmxp section after asserting the factors equal the golden
// model's and refinement passes.
func luGPUFull(t *testing.T, y string, sets ...string) *Result {
	t.Helper()
	res, err := runLU(t, y, sets...)
	if err != nil {
		t.Fatal(err)
	}
	if res.Failure != nil {
		t.Fatal(res.Failure)
	}
	s := hpl(t, res)
	if s.GoldenMismatches == nil || *s.GoldenMismatches != 0 {
		t.Fatalf("mismatches %v", s.GoldenMismatches)
	}
	if s.Passed == nil || !*s.Passed {
		t.Fatalf("refinement did not pass: %+v", s.Refinement.Solved)
	}
	return res
}

// The factors the simulated GPU computes (tensor-core GEMMs through the
// machine's numerics preset, the FP32 epilogues on the CUDA cores) equal
// the golden model's bit for bit on a100 and h100-sxm (mma.sync and wgmma
// kernels), with and without fusion and look-ahead, both trailing
// precisions, edge tiles (nb smaller than the CTA tile), the diagonal
// blocks on the host or timed on the GPU; refinement passes, and the
// solution (refinement history and scaled residual) equals the one
// computed from the golden factors (numerics sampled).
func TestLUGPUMatchesGolden(t *testing.T) {
	cases := []struct {
		machine, trailing, extra string
		fused                    int
		la                       bool
	}{
		{"a100", "fp16", "", 1, true},
		{"a100", "fp32", "", 2, true},
		{"a100", "fp16", "", 3, false},
		{"a100", "fp16", "diag: gpu\n", 2, true},
		{"a100", "fp32", "diag: gpu\n", 1, false},
		{"a100", "fp16", "tiling: {bm: 64, bn: 64, bk: 32}\n", 2, true},
		{"h100-sxm", "fp16", "", 2, true},
		{"h100-sxm", "fp32", "", 1, true},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s_%s_F%d_la%v_%s", c.machine, c.trailing, c.fused, c.la, strings.TrimSpace(strings.NewReplacer(":", "", " ", "", "\n", "").Replace(c.extra))), func(t *testing.T) {
			y := fmt.Sprintf("kind: lu-fused\nmachine: %s\nn: 640\nnb: 128\nn_fused: %d\nlook_ahead: %v\ntrailing: %s\ncheck: true\nseed: 3\n%s",
				c.machine, c.fused, c.la, c.trailing, c.extra)
			full := luGPUFull(t, y)
			samp, err := runLU(t, y, "program.numerics=sampled", "program.check=false")
			if err != nil {
				t.Fatal(err)
			}
			a, b := hpl(t, full), hpl(t, samp)
			if *a.ScaledResidual != *b.ScaledResidual || fmt.Sprint(a.Refinement.Solved.History) != fmt.Sprint(b.Refinement.Solved.History) ||
				*a.LPanelScale != *b.LPanelScale {
				t.Fatalf("solution differs from the golden factors': %v %v vs %v %v", *a.ScaledResidual, a.Refinement.Solved.History,
					*b.ScaledResidual, b.Refinement.Solved.History)
			}
			if a.TotalSeconds != b.TotalSeconds {
				t.Fatalf("timing depends on numerics: %v vs %v", a.TotalSeconds, b.TotalSeconds)
			}
			r := full.Report
			if len(r.Kernels) == 0 || r.Kernels[0].Name == "" {
				t.Fatal("no kernels section")
			}
			if _, ok := a.Zones["trsm"]; !ok {
				t.Fatalf("zones %v", a.Zones)
			}
		})
	}
}

// The acceptance: n = 4096 with full numerics passes the HPL-MxP
// check and is bit-exact vs golden on a100 and h100-sxm (about half a
// minute each on a 2-core box: not under -short).
func TestLUGPU4096(t *testing.T) {
	if testing.Short() {
		t.Skip("n = 4096 full numerics: tens of seconds per machine")
	}
	for _, m := range []string{"a100", "h100-sxm"} {
		t.Run(m, func(t *testing.T) {
			res := luGPUFull(t, "kind: lu-fused\nn: 4096\nnb: 256\nn_fused: 4\ntrailing: fp16\ncheck: true\nseed: 1\nmachine: "+m+"\n")
			s := hpl(t, res)
			t.Logf("%s: scaled residual %.3g after %d iterations, factorization %.3g s (%.1f TFLOP/s)", m, *s.ScaledResidual,
				*s.RefinementIterations, s.FactorizationSeconds, s.FactorizationTFLOPS)
		})
	}
}

// Timing only at a moderate size: every zone reports, the fusion zone is
// the bulk of the flops, and fusion plus look-ahead beat the plain blocked
// LU; the GPU diagonal factorization is reported as its own zone.
func TestLUGPUTiming(t *testing.T) {
	run := func(sets ...string) *Result {
		res, err := runLU(t, "kind: lu-fused\nmachine: a100\nn: 8192\nnb: 256\nn_fused: 4\ntrailing: fp16\nnumerics: off\n", sets...)
		if err != nil {
			t.Fatal(err)
		}
		if res.Failure != nil {
			t.Fatal(res.Failure)
		}
		return res
	}
	fused := hpl(t, run())
	for _, z := range []string{"trsm", "priority1", "priority2", "fusion"} {
		if zz := fused.Zones[z]; zz == nil || zz.Kernels == 0 || zz.TFLOPS <= 0 || zz.GMBytes <= 0 {
			t.Fatalf("zone %s: %+v", z, zz)
		}
	}
	if fused.FactorizationTFLOPS < 50 || fused.FactorizationTFLOPS > 312 {
		t.Fatalf("factorization %.1f TFLOP/s", fused.FactorizationTFLOPS)
	}
	plain := hpl(t, run("program.n_fused=1", "program.look_ahead=false"))
	if plain.FactorizationSeconds <= fused.FactorizationSeconds {
		t.Fatalf("fusion + look-ahead %.4g s, plain %.4g s", fused.FactorizationSeconds, plain.FactorizationSeconds)
	}
	g := hpl(t, run("program.diag=gpu"))
	if z := g.Zones["diag"]; z == nil || z.Kernels != 2*(8192/256)-1 { // (getrf and trtri a block; the last block's getrf alone)
		t.Fatalf("diag zone %+v", z)
	}
	t.Logf("a100 n=8192: fused %.1f TFLOP/s, plain %.1f, diag on the GPU %.1f", fused.FactorizationTFLOPS, plain.FactorizationTFLOPS, g.FactorizationTFLOPS)
}

// Bad input: DaVinci-only keys on a GPU, GPU-only values on DaVinci, a GPU
// without a host section — one line naming the key, exit 2.
func TestLUGPUBadInput(t *testing.T) {
	for _, c := range []struct{ yaml, want string }{
		{"machine: a100\nn: 1024\nn_fusion: 8\n", `"n_fusion": applies to davinci machines`},
		{"machine: a100\nn: 1024\nn_fused: -1\n", `"n_fused"`},
		{"machine: a100\nn: 1024\ndiag: cpu\n", `"diag": must be host or gpu`},
		{"machine: a100\nn: 1000\n", `"n": must be a positive multiple of nb`},
		{"machine: a100\nn: 1024\nnb: 120\n", `"nb"`},
		{"machine: a100\nn: 1024\nnb: 128\ntiling: {bk: 48}\n", `"tiling.bk"`},
		{"machine: v100\nn: 1024\n", "has no host section"},
		{"n: 1024\nn_fusion: 8\nn_fused: 2\ndiag: gpu\n", `"diag": "gpu" applies to GPU machines`},
	} {
		_, err := runLU(t, "kind: lu-fused\nnumerics: off\n"+c.yaml)
		if err == nil || !strings.Contains(err.Error(), c.want) || !errors.Is(err, badinput.ErrBadInput) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: got %v, want one bad-input line containing %q", c.yaml, err, c.want)
		}
	}
}

// AMD falls out: an amd-cu machine given a host section (here by --set:
// the files have none) runs the same program on its matrix cores
// (register-staged Tensile-style kernels), bit-exact vs golden, with the
// default tile (256 rows: row-edge tiles on nb = 128) and one dividing nb.
// (The C bands of the epilogue go through the LDS: without the wait for
// the MMAs before the first band's copy, the register-staged pipeline
// overwrote the last k-step's A tile before it was read.)
func TestLUGPUAMD(t *testing.T) {
	host := []string{"machine.host.cores=16", "machine.host.clock=2.25GHz", "machine.host.fp32_flops_per_cycle=32",
		"machine.host.fp64_flops_per_cycle=16", "machine.host.memory_bandwidth=51.2GB/s", "machine.host.link.bandwidth=63GB/s",
		"machine.host.link.latency_ns=1000", "machine.host.launch_ns=5000"}
	for _, tl := range []string{"", "tiling: {bm: 128}\n"} {
		luGPUFull(t, "kind: lu-fused\nmachine: mi300x\nn: 512\nnb: 128\nn_fused: 2\ntrailing: fp16\ncheck: true\nseed: 2\n"+tl, host...)
	}
}
