package programs

import (
	"testing"
)

// benchTiming runs example file on 8192³, timing only, and reports the
// simulated events, the events simulated per wall second and the simulated
// throughput.
func benchTiming(b *testing.B, file string, sets ...string) {
	f, err := ReadFile(file)
	if err != nil {
		b.Fatal(err)
	}
	ovs := mustSets(b, append([]string{"program.m=8192", "program.n=8192", "program.k=8192"}, sets...)...)
	var res *Result
	for b.Loop() {
		if res, err = Execute(f, Options{Overrides: ovs, Numerics: NumericsOff}, RunHooks{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(res.Stats.Events), "events")
	b.ReportMetric(float64(res.Stats.Events)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(res.Report.Flops.TFLOPS, "sim-TFLOP/s")
}

// BenchmarkSGEMMCubeTiming runs the SGEMM-cube example on 8192³, timing only
// (issue target: at most 2 s wall per run on the 2-core reference machine).
func BenchmarkSGEMMCubeTiming(b *testing.B) { benchTiming(b, "examples/sgemm-cube.yaml") }

// BenchmarkGPUHGEMMTiming runs HGEMM 8192³ on the A100, timing only (issue
// target: at most 2 s per run on the 2-core reference machine; memory
// independent of the matrix size).
func BenchmarkGPUHGEMMTiming(b *testing.B) { benchTiming(b, "examples/a100-hgemm.yaml") }

// BenchmarkAMDHGEMMTiming runs HGEMM 8192³ on the MI210, timing only (issue
// target: at most 2 s per run on the 2-core reference machine).
func BenchmarkAMDHGEMMTiming(b *testing.B) { benchTiming(b, "examples/mi210-hgemm.yaml") }

// BenchmarkEmulatedTiming runs every emulated-gemm preset the A100 takes on
// 8192³, timing only (issue target: at most 3 s per run on the 2-core
// reference machine).
func BenchmarkEmulatedTiming(b *testing.B) {
	for _, s := range []string{"hgemm", "markidis", "ootomo", "ape-fp32m", "ape-fp32f", "ape-fp32t", "ape-fp32b", "bf16x9", "sgemm-cube", "le-gemm"} {
		b.Run(s, func(b *testing.B) { benchTiming(b, "examples/a100-emulated-gemm.yaml", "program.scheme="+s) })
	}
}

// BenchmarkOzakiTiming runs the ozaki example (forced 55 bits: ADP's
// kernels, 7 slices, 7 INT8 diagonal GEMMs, recombination) timing only on
// the B200 at 8192³ and 16384³ (issue 15's target: 16384³ within 30 s).
func BenchmarkOzakiTiming(b *testing.B) {
	for _, n := range []string{"8192", "16384"} {
		b.Run(n, func(b *testing.B) {
			benchTiming(b, "examples/b200-ozaki.yaml", "program.m="+n, "program.n="+n, "program.k="+n)
		})
	}
}
