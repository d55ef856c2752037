package amd_test

import (
	"fmt"
	"testing"

	"github.com/davinci-sim/davinci-sim/arch"
	"github.com/davinci-sim/davinci-sim/arch/archtest"
	"github.com/davinci-sim/davinci-sim/arch/gpu"
	"github.com/davinci-sim/davinci-sim/isa"
)

// The amd-cu kind passes the machine-kind conformance suite (package
// archtest) on the generated GEMM kernels — functional FP16 on the MI210 and
// on the MI100 (accumulators in AccVGPRs), INT8 waves on the MI300X with its
// private per-XCD L2s and the Infinity Cache, FP64 MFMAs — the matrix-peak
// microbenchmark, and a workgroup waiting on a flag nobody sets.
func TestConformance(t *testing.T) {
	m := archtest.Machine(t, "mi210", "machine.cores=4")
	hg := "programs/examples/mi210-hgemm.yaml"
	dead := isa.Program{Grids: []isa.Grid{{Name: "dead", CTAs: 6, CTA: func(i int) isa.Stream {
		if i == 5 {
			return isa.Slice([]isa.Instr{isa.WaitFlag(gpu.LaneCopy, gpu.LaneMatrix, 7)})
		}
		return isa.Slice([]isa.Instr{gpu.MMA(0, 16<<10, 32<<10, 64, 64, 64, 0, 0, true)})
	}, Resources: isa.Resources{SharedBytes: 16 << 10, Registers: 256 * 64, Warps: 4}}}}
	archtest.Run(t, archtest.Subject{
		Machine: m,
		Cases: []archtest.Case{
			archtest.ProgramFile(t, "hgemm-mi210-functional", hg,
				[]string{"machine.cores=4", "program.m=300", "program.n=200", "program.k=96"}, matrixBusy),
			archtest.ProgramFile(t, "hgemm-mi100-agpr", hg,
				[]string{"program.machine=mi100", "machine.cores=2", "program.m=130", "program.n=140", "program.k=64"}, matrixBusy),
			archtest.ProgramFile(t, "igemm-mi300x-xcds", "programs/examples/a100-igemm.yaml",
				[]string{"program.machine=mi300x", "machine.cores=16", "program.m=2048", "program.n=2048", "program.k=256", "program.numerics=off"},
				matrixBusy, llcUsed),
			archtest.ProgramFile(t, "dgemm-mi210", "programs/examples/a100-dgemm.yaml",
				[]string{"program.machine=mi210", "machine.cores=3", "program.m=200", "program.n=130", "program.k=40"}, matrixBusy),
			archtest.ProgramFile(t, "matrix-peak", "programs/examples/mi210-matrix-peak.yaml",
				[]string{"machine.cores=2", "program.repeats=16"}, matrixBusy),
		},
		Deadlocks: []archtest.Deadlock{{
			Case: archtest.Case{Name: "wait-never-set", Mode: arch.Timing, Program: func() (isa.Program, error) { return dead, nil }},
			Want: []string{"CU 1: workgroup 5 lane mfma: wait_flag load mfma 7"},
		}},
	})
}

// matrixBusy: the matrix cores of core 0 ran.
func matrixBusy(st *arch.Stats) error {
	if st.Cores[0].Lanes[gpu.LaneMatrix].Time[arch.Busy] == 0 {
		return fmt.Errorf("core 0's matrix cores were never busy")
	}
	return nil
}

// llcUsed: the Infinity Cache served some reads.
func llcUsed(st *arch.Stats) error {
	if st.LLCHitBytes == 0 {
		return fmt.Errorf("the LLC served no bytes (hit %d, miss %d)", st.LLCHitBytes, st.LLCMissBytes)
	}
	return nil
}
