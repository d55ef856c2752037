// Package nvidia is the nvidia-sm machine kind: an NVIDIA streaming
// multiprocessor with Tensor Cores, run by the GPU core model of package
// gpu with the figures of the machine file's core: section (machines.
// NvidiaSMCore) — the tensor cores' per-format rates and latencies, the
// instruction family (warp-level mma.sync, warp-group wgmma, CTA-level
// tcgen05), CUDA cores, shared memory, registers and occupancy limits.
package nvidia

import (
	"fmt"
	"math"

	"github.com/davinci-sim/davinci-sim/arch/gpu"
	"github.com/davinci-sim/davinci-sim/fp"
	"github.com/davinci-sim/davinci-sim/machines"
	"github.com/davinci-sim/davinci-sim/sim"
)

// terms are an SM's words for its parts.
var terms = gpu.Terms{Core: "SM", Block: "CTA", Warp: "warp", Matrix: "tensor cores", Vector: "CUDA cores",
	SharedPerBlockKey: "core.smem_per_cta"}

func init() {
	gpu.RegisterKind("nvidia-sm", Params,
		`"cores", "core.registers", "core.smem", "core.tmem", "core.max_ctas", "l2.capacity" and "llc.capacity"`)
}

// Params resolves the SM figures of machine m. The tensor rate of a
// format is the file's flops_per_cycle, times the family's efficiency for
// wgmma and tcgen05, times sustained_clock / clock for a format with a
// sustained clock (whose latency grows by the inverse). wgmma and tcgen05
// runs round M to 64 and N to 8 (any multiple of 8 is a shape), while
// mma.sync and FP64's DMMA (warp-level on every architecture) run on one
// sub-core's tensor core in whole file shapes.
func Params(m *machines.Machine) (*gpu.Params, error) {
	sc := m.NvidiaSM()
	if sc == nil {
		return nil, fmt.Errorf("machine kind %s is not nvidia-sm", m.Kind)
	}
	t := &sc.Tensor
	p := &gpu.Params{
		Terms:            terms,
		SubCores:         sc.SubCores,
		WarpSize:         32,
		MaxWarps:         sc.MaxWarps,
		MaxBlocks:        sc.MaxCTAs,
		MaxRegsPerThread: sc.MaxRegistersPerThread,
		Registers:        int64(sc.Registers) / 4,
		Shared:           int64(sc.SMEM),
		SharedPerBlock:   int64(sc.SMEMPerCTA),
		Banks:            sc.SMEMBanks,
		BankBytes:        sc.SMEMBankBytes,
		VectorLanes:      sc.CUDACores.FP32FlopsPerCycle / 2,
		VectorLatency:    4,
		TensorMemory:     int64(sc.TMEM),
		Launch:           sim.CeilPS(sc.LaunchNS * float64(sim.Nanosecond)),
	}
	p.VectorRate[fp.FP32] = sc.CUDACores.FP32FlopsPerCycle
	p.VectorRate[fp.FP64] = sc.CUDACores.FP64FlopsPerCycle
	warpFamily := t.Instruction == machines.NvidiaMMASync
	for f := range fp.NumFormats {
		rate, ok := t.FlopsPerCycle.Of(f)
		if !ok {
			continue
		}
		shape, _ := t.Shapes.Of(f)
		lat, _ := t.LatencyCycles.Of(f)
		warp := warpFamily || f == fp.FP64 // DMMA is warp-level on every architecture
		in := gpu.MatrixInput{Rate: rate.Value, Latency: lat.Value, Flops: shape.Value.Flops(), WarpLevel: warp}
		if !warp {
			in.Rate *= t.Efficiency
		}
		if d := sc.TensorClockFactor(f); d != 1 {
			// The type's sustained clock (tensor.sustained_clock), in
			// cycles of core.clock.
			in.Rate *= d
			in.Latency = int(math.Round(float64(in.Latency) / d))
		}
		if mm, n, k, err := shape.Value.Dims(); err == nil && mm > 0 {
			in.Dims = [3]int{mm, n, k}
			if !warp {
				in.Dims = [3]int{64, 8, k} // wgmma and tcgen05: M of 64 (or more), any N that is a multiple of 8
			}
		}
		p.Matrix[f] = in
	}
	return p, nil
}
