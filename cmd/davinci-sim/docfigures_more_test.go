package main

import (
	"fmt"

	"github.com/davinci-sim/davinci-sim/sweep"
)

// moreDocFigures are further figures the docs quote in prose as what this
// build's simulator gives for one run, beyond docFigures' headline ones:
// the figures a reader is most likely to rely on (the first of a section,
// the two sides of a comparison), from runs of at most a few seconds each
// (~12 s in all). Not here: tables (doctables*_test.go, docbench_test.go),
// the README's output blocks (readme_output_test.go), paper, hardware and
// historical ("before the change it was X") figures, wall times, and runs
// too slow for the test suite. Each text quotes enough of the doc's
// sentence around the figure to find it unambiguously; a model change
// that moves one fails TestDocFigures until the doc follows.
var moreDocFigures = []docFigure{
	// nvidia.md, hgemm: the small-shape tile rule on a thin GEMM.
	{"nvidia.md", []string{"run", "programs/examples/a100-hgemm.yaml", "-m", "h100-sxm", "--numerics", "off", "--set", "program.m=16", "--set", "program.n=8192", "--set", "program.k=8192"},
		func(r reportJSON) string {
			return fmt.Sprintf("H100 HGEMM m = 16, n = k = 8192 runs %.0f×%.0f tiles on %d of its %.0f SMs in %.0f µs",
				r.num("program.tiling.bm"), r.num("program.tiling.bn"), listLen(r, "cores"), r.num("machine_config.cores"), 1e6*r.num("time.seconds"))
		}},
	// nvidia.md, input: FP8 HGEMM 8192³ on the H100, and on the B200 with
	// one CTA per tile (its CTA-pair figure is docFigures').
	{"nvidia.md", []string{"run", "programs/examples/a100-hgemm.yaml", "-m", "h100-sxm", "--numerics", "off", "--set", "program.m=8192", "--set", "program.n=8192", "--set", "program.k=8192", "--set", "program.input=e4m3"},
		func(r reportJSON) string {
			return fmt.Sprintf("FP8 HGEMM 8192³ (timing only): h100-sxm %.0f TFLOP/s (%.1f %%)", r.num("flops.tflops"), 100*r.num("flops.peak_fraction"))
		}},
	{"nvidia.md", []string{"run", "programs/examples/a100-hgemm.yaml", "-m", "b200", "--numerics", "off", "--set", "program.m=8192", "--set", "program.n=8192", "--set", "program.k=8192", "--set", "program.input=e4m3", "--set", "program.tiling.cta_group=1"},
		func(r reportJSON) string {
			return fmt.Sprintf("%.0f = %.1f %% with one CTA per tile", r.num("flops.tflops"), 100*r.num("flops.peak_fraction"))
		}},
	// nvidia.md, the INT8 calibration's consequences: the INT8 tensor peak.
	{"nvidia.md", []string{"run", "programs/examples/a100-tensor-peak.yaml", "--set", "program.dtype=int8"},
		func(r reportJSON) string {
			return fmt.Sprintf("`gpu-bench tensor-peak` with `dtype: int8` gives %.1f TOP/s, %.1f %% of the dense peak",
				r.num("gpu_bench.achieved"), 100*r.num("gpu_bench.fraction"))
		}},
	// amd.md: the L2 bandwidth benchmark on the three files.
	{"amd.md", []string{"run", "programs/examples/mi210-matrix-peak.yaml", "-m", "mi100", "--set", "program.test=l2-bandwidth"},
		func(r reportJSON) string {
			return fmt.Sprintf("MI100 %.0f GB/s (%.1f %% of %.1f TB/s)", r.num("gpu_bench.achieved"), 100*r.num("gpu_bench.fraction"), r.num("gpu_bench.reference")/1e3)
		}},
	{"amd.md", []string{"run", "programs/examples/mi210-matrix-peak.yaml", "--set", "program.test=l2-bandwidth"},
		func(r reportJSON) string {
			return fmt.Sprintf("MI210 %.0f GB/s (%.1f %% of %.1f)", r.num("gpu_bench.achieved"), 100*r.num("gpu_bench.fraction"), r.num("gpu_bench.reference")/1e3)
		}},
	{"amd.md", []string{"run", "programs/examples/mi210-matrix-peak.yaml", "-m", "mi300x", "--set", "program.test=l2-bandwidth"},
		func(r reportJSON) string {
			return fmt.Sprintf("MI300X %.1f TB/s (%.1f %% of the assumed %.1f)", r.num("gpu_bench.achieved")/1e3, 100*r.num("gpu_bench.fraction"), r.num("gpu_bench.reference")/1e3)
		}},
	// sgemm-cube.md: the larger block outside Eq. 12, double-buffered.
	{"sgemm-cube.md", []string{"run", "programs/examples/sgemm-cube.yaml", "--numerics", "off", "--set", "program.m=8192", "--set", "program.n=8192", "--set", "program.k=8192", "--set", "program.tiling.bk=128"},
		func(r reportJSON) string {
			return fmt.Sprintf("%.0f × %.0f × %.0f gives %.1f /", r.num("program.tiling.bm"), r.num("program.tiling.bk"), r.num("program.tiling.bn"), r.num("flops.tflops"))
		}},
	// emulated.md, on DaVinci: the tile rule's example.
	{"emulated.md", []string{"run", "programs/examples/ascend-910a-emulated-gemm.yaml", "--numerics", "off", "--set", "program.scheme=markidis", "--set", "program.m=8192", "--set", "program.n=8192", "--set", "program.k=8192"},
		func(r reportJSON) string {
			return fmt.Sprintf("Markidis on the 910A at 8192³: %.1f TFLOP/s at %.0f×%.0f×%.0f against",
				r.num("flops.tflops"), r.num("program.tiling.bm"), r.num("program.tiling.bk"), r.num("program.tiling.bn"))
		}},
	// emulated.md, scheme: auto on the A100 at 1024³ (one run, two
	// sentences) and at 128³.
	{"emulated.md", autoA100(1024),
		func(r reportJSON) string {
			return fmt.Sprintf("FP32 SGEMM reaches %.1f bits on the sample (the target: %.1f) and of the presets only Ootomo (%.1f) meets it",
				r.num("program.auto.fp32_sgemm_bits"), r.num("program.auto.target_bits"), autoCandidate(r, "ootomo", "", "bits"))
		}},
	{"emulated.md", autoA100(1024),
		func(r reportJSON) string {
			return fmt.Sprintf("(Markidis %.1f, Ape FP32-F %.1f, BF16x9 %.1f bits); native meets it (%.1f, predicted) but is pruned: its bound on the CUDA cores, %.3f ms, is above Ootomo's simulated %.3f ms (Ootomo with a fused split: %.3f ms,",
				autoCandidate(r, "markidis", "", "bits"), autoCandidate(r, "ape-fp32f", "", "bits"), autoCandidate(r, "bf16x9", "", "bits"),
				autoCandidate(r, "native", "", "bits"), 1e3*autoCandidate(r, "native", "", "bound_seconds"),
				1e3*autoCandidate(r, "ootomo", "", "seconds"), 1e3*autoCandidate(r, "ootomo", "fused", "seconds"))
		}},
	{"emulated.md", autoA100(128),
		func(r reportJSON) string {
			return fmt.Sprintf("Ootomo with a fused split is chosen (%.1f µs against native's %.1f",
				1e6*autoCandidate(r, "ootomo", "fused", "seconds"), 1e6*autoCandidate(r, "native", "", "seconds"))
		}},
	// emulated.md, Ape's FP32-F against native SGEMM: why the T4 gains least.
	{"emulated.md", []string{"run", "programs/examples/a100-emulated-gemm.yaml", "-m", "t4", "--numerics", "off", "--set", "program.scheme=ape-fp32f", "--set", "program.m=4096", "--set", "program.n=4096", "--set", "program.k=4096"},
		func(r reportJSON) string {
			return fmt.Sprintf("(4096³: HBM bandwidth use %.0f %%, the L2 serving %.0f %% of the reads;",
				100*r.num("memory.gm_bandwidth_utilisation"), 100*r.num("memory.l2_hit_rate"))
		}},
	// emulated.md, native on AMD: the MI210's packed-FP32 VALUs against
	// its FP32 MFMAs at 1024³.
	{"emulated.md", []string{"run", "programs/examples/a100-emulated-gemm.yaml", "-m", "mi210", "--numerics", "off", "--set", "program.scheme=native", "--set", "program.unit=vector", "--set", "program.m=1024", "--set", "program.n=1024", "--set", "program.k=1024"},
		func(r reportJSON) string {
			return fmt.Sprintf("take as long at 1024³, %.1f against", 1e6*r.num("time.seconds"))
		}},
	{"emulated.md", []string{"run", "programs/examples/a100-emulated-gemm.yaml", "-m", "mi210", "--numerics", "off", "--set", "program.scheme=native", "--set", "program.m=1024", "--set", "program.n=1024", "--set", "program.k=1024"},
		func(r reportJSON) string {
			return fmt.Sprintf("against %.1f µs, on the MI100 half of it", 1e6*r.num("time.seconds"))
		}},
	// lu-fused.md: the operators with 128-deep U copies (fp16 trailing).
	{"lu-fused.md", []string{"run", "programs/examples/lu-gemm256.yaml", "--set", "program.trailing=fp16", "--set", "program.tiling.bk=128"},
		func(r reportJSON) string {
			return fmt.Sprintf("gemm256 fp16 reaches %.1f TFLOP/s = **%.0f %%** of its HBM bound", r.num("flops.tflops"), 100*r.num("lu_gemm.bound.efficiency"))
		}},
	{"lu-fused.md", []string{"run", "programs/examples/lu-gemm512.yaml", "--set", "program.trailing=fp16", "--set", "program.tiling.bk=128"},
		func(r reportJSON) string {
			return fmt.Sprintf("the cube-bound gemm512 and fusion lose (%.1f and", r.num("flops.tflops"))
		}},
	{"lu-fused.md", []string{"run", "programs/examples/lu-gemm256-fusion.yaml", "--set", "program.trailing=fp16", "--set", "program.tiling.bk=128"},
		func(r reportJSON) string {
			return fmt.Sprintf("and %.1f TFLOP/s), because L0A", r.num("flops.tflops"))
		}},
	// lu-fused.md, refinement: lu-fused-small as it is, and chasing a
	// tolerance below FP64's floor.
	{"lu-fused.md", []string{"run", "programs/examples/lu-fused-small.yaml"},
		func(r reportJSON) string {
			golden := "golden-equal"
			if r.num("hplmxp.golden_mismatches") != 0 {
				golden = "golden-mismatched"
			}
			return fmt.Sprintf("`lu-fused-small.yaml` (n = %.0f): %.0f iterations, %.4f, %s", r.num("hplmxp.n"),
				r.num("hplmxp.refinement.iterations"), r.num("hplmxp.scaled_residual"), golden)
		}},
	{"lu-fused.md", []string{"run", "programs/examples/lu-fused-small.yaml", "--set", "program.refinement.tolerance=1e-6"},
		func(r reportJSON) string {
			return fmt.Sprintf("it now stops after %.0f (refine %.3f ms, total 0.466 ms; %.3f ms since the last block's inverses are skipped",
				r.num("hplmxp.refinement.iterations"), 1e3*r.num("hplmxp.host_stages_seconds.refine"), 1e3*r.num("hplmxp.total_seconds"))
		}},
	// cluster.md, HCCL's communicator rule: a node's column broadcasts as
	// HCCL mesh (a what-if) against rings of point-to-point sends.
	{"cluster.md", clusterNode8192("--set", "node.collectives.intra_server=mesh"),
		func(r reportJSON) string {
			return fmt.Sprintf("moves %.1f MB over the bridge against", r.num("cluster.link_bytes.bridge")/1e6)
		}},
	{"cluster.md", clusterNode8192(),
		func(r reportJSON) string {
			return fmt.Sprintf("against %.1f MB as P2P rings", r.num("cluster.link_bytes.bridge")/1e6)
		}},
	// ozaki.md, Numerics: the componentwise error with α and β.
	{"ozaki.md", []string{"run", "programs/examples/b200-ozaki.yaml", "--numerics", "full", "--set", "program.m=16", "--set", "program.n=16", "--set", "program.k=16", "--set", "program.alpha=1", "--set", "program.beta=1000"},
		func(r reportJSON) string {
			return fmt.Sprintf("(b200, 16³, numerics full: α = 1, β = 1000 max_u %.2f;", r.num("program.componentwise_error.max_u"))
		}},
	// ozaki.md, on Ascend 910A: the host FP64 DGEMM against the emulation.
	{"ozaki.md", []string{"run", "programs/examples/ascend-910a-ozaki.yaml", "--set", "program.m=2048", "--set", "program.n=2048", "--set", "program.k=2048"},
		func(r reportJSON) string {
			return fmt.Sprintf("(no crossover in n = 2048 … 8192: %.1f× at 2048)", r.num("program.speedup_over_native"))
		}},
}

// autoA100 is the CLI's arguments for emulated-gemm's scheme: auto on the
// A100 at n³, timing only (docs/emulated.md, "scheme: auto").
func autoA100(n int) []string {
	s := fmt.Sprint(n)
	return []string{"run", "programs/examples/a100-emulated-gemm.yaml", "--set", "program.scheme=auto", "--set", "program.m=" + s, "--set", "program.n=" + s, "--set", "program.k=" + s, "--numerics", "off"}
}

// clusterNode8192 is the CLI's arguments for lu-fused on a node's 2 × 4
// grid at n = 8192, nb 256, fidelity isolated, with extra arguments.
func clusterNode8192(extra ...string) []string {
	return append([]string{"run", "programs/examples/lu-cluster-small.yaml", "--fidelity", "isolated", "--set", "program.n=8192", "--set", "program.nb=256"}, extra...)
}

// autoCandidate returns the number key of scheme: auto's candidate scheme
// (split "fused" for the fused-split one, "" for the other) in
// program.auto.candidates, NaN where there is none.
func autoCandidate(r reportJSON, scheme, split, key string) float64 {
	v, _ := sweep.Lookup(map[string]any(r), "program.auto.candidates")
	list, _ := v.([]any)
	for _, c := range list {
		m, _ := c.(map[string]any)
		if m["scheme"] == scheme && (m["split"] == split || split == "" && m["split"] == nil) {
			return reportJSON(m).num(key)
		}
	}
	return reportJSON(nil).num(key)
}

// listLen returns the length of the list at the dotted path, -1 where
// there is none.
func listLen(r reportJSON, path string) int {
	v, _ := sweep.Lookup(map[string]any(r), path)
	if l, ok := v.([]any); ok {
		return len(l)
	}
	return -1
}
