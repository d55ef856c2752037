package programs

import (
	"testing"

	"github.com/davinci-sim/davinci-sim/machines"
)

// BenchmarkSGEMMCubeTiming runs the SGEMM-cube example on 8192³, timing only
// (issue target: at most 2 s wall per run on the 2-core reference machine).
func BenchmarkSGEMMCubeTiming(b *testing.B) {
	f, err := ReadFile("examples/sgemm-cube.yaml")
	if err != nil {
		b.Fatal(err)
	}
	ovs, _ := machines.ParseOverrides([]string{"program.m=8192", "program.n=8192", "program.k=8192"})
	for i := 0; i < b.N; i++ {
		res, err := Execute(f, Options{Overrides: ovs, Numerics: NumericsOff}, RunHooks{})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(res.Stats.Events)/b.Elapsed().Seconds()*float64(i+1)/float64(b.N), "events/s")
		b.ReportMetric(res.Report.Flops.TFLOPS, "sim-TFLOP/s")
	}
}

// BenchmarkGPUHGEMMTiming runs HGEMM 8192³ on the A100, timing only (issue
// target: at most 2 s per run on the 2-core reference machine; memory
// independent of the matrix size).
func BenchmarkGPUHGEMMTiming(b *testing.B) {
	f, err := ReadFile("examples/a100-hgemm.yaml")
	if err != nil {
		b.Fatal(err)
	}
	ovs, _ := machines.ParseOverrides([]string{"program.m=8192", "program.n=8192", "program.k=8192"})
	for i := 0; i < b.N; i++ {
		res, err := Execute(f, Options{Overrides: ovs, Numerics: NumericsOff}, RunHooks{})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(res.Stats.Events), "events")
		b.ReportMetric(res.Report.Flops.TFLOPS, "sim-TFLOP/s")
	}
}
