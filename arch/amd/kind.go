// Package amd is the amd-cu machine kind: an AMD CDNA compute unit with
// Matrix Cores, run by the GPU core model of package gpu with the figures
// of the machine file's core: section (machines.AMDCUCore). A CU's four
// SIMDs are the core's sub-cores: a wave issues its MFMAs on its own
// SIMD's matrix core at the issue cycles of AMD's matrix instruction
// calculator, so a workgroup of fewer than four waves cannot reach the
// CU's peak; each MFMA keeps its SIMD's VALU from issuing for the
// calculator's co-execution delay; an MFMA reading the previous one's
// result waits its issue cycles plus the dependent wait states, which a
// wave hides with enough independent accumulators.
package amd

import (
	"fmt"

	"github.com/davinci-sim/davinci-sim/arch/gpu"
	"github.com/davinci-sim/davinci-sim/fp"
	"github.com/davinci-sim/davinci-sim/machines"
	"github.com/davinci-sim/davinci-sim/sim"
)

// terms are a CU's words for its parts.
var terms = gpu.Terms{Core: "CU", Block: "workgroup", Warp: "wave", Matrix: "matrix cores", Vector: "VALUs",
	SharedPerBlockKey: "core.lds_per_workgroup"}

func init() {
	gpu.RegisterKind("amd-cu", Params,
		`"cores", "core.vgprs", "core.agprs", "core.lds", "core.max_workgroups", "l2.capacity" and "llc.capacity"`)
}

// Params resolves the CU figures of machine m.
func Params(m *machines.Machine) (*gpu.Params, error) {
	cu := m.AMDCU()
	if cu == nil {
		return nil, fmt.Errorf("machine kind %s is not amd-cu", m.Kind)
	}
	p := &gpu.Params{
		Terms:            terms,
		SubCores:         cu.SIMDs,
		WarpSize:         cu.WaveSize,
		MaxWarps:         cu.SIMDs * cu.MaxWavesPerSIMD,
		MaxBlocks:        cu.MaxWorkgroups,
		MaxRegsPerThread: cu.MaxVGPRsPerLane,
		Registers:        int64(cu.VGPRs+cu.AGPRs) / 4,
		Shared:           int64(cu.LDS),
		SharedPerBlock:   int64(cu.LDSPerWorkgroup),
		Banks:            cu.LDSBanks,
		BankBytes:        cu.LDSBankBytes,
		VectorLanes:      cu.VALU.FP32FlopsPerCycle / 2,
		VectorLatency:    cu.VALU.LatencyCycles,
		Launch:           sim.CeilPS(cu.LaunchNS * float64(sim.Nanosecond)),
	}
	p.VectorRate[fp.FP32] = cu.VALU.FP32FlopsPerCycle
	p.VectorRate[fp.FP64] = cu.VALU.FP64FlopsPerCycle
	for f := range fp.NumFormats {
		mf, ok := cu.Instruction(f)
		if !ok {
			continue
		}
		p.Matrix[f] = gpu.MatrixInput{
			Rate:         float64(cu.SIMDs) * mf.Flops() / float64(mf.Cycles),
			Latency:      mf.Cycles + cu.MFMA.LatencyCycles,
			ChainLatency: mf.Cycles + cu.MFMA.DependentWaitCycles,
			Flops:        mf.Flops(),
			Dims:         [3]int{mf.M, mf.N * mf.Blocks, mf.K},
			WarpLevel:    true,
			VectorCycles: float64(mf.CoexecCycles),
		}
	}
	return p, nil
}
