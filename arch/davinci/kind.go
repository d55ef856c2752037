// Package davinci is the core model of the davinci machine kind: the Ascend
// DaVinci AI core — a scalar unit issuing in program order into bounded
// per-pipe queues (S, MTE2, MTE1, M, V, MTE3, FIXP); pipes that execute in
// order and concurrently; set/wait flags and barriers as on hardware; the
// L1, L0A/B/C and UB buffers; the cube computing bit-accurately through the
// machine's numerics preset. Importing it registers the kind with package
// arch.
package davinci

import (
	"unsafe"

	"github.com/davinci-sim/davinci-sim/arch"
	"github.com/davinci-sim/davinci-sim/isa"
	"github.com/davinci-sim/davinci-sim/machines"
	"github.com/davinci-sim/davinci-sim/mem"
	"github.com/davinci-sim/davinci-sim/sim"
)

func init() {
	arch.RegisterKind(&arch.Kind{
		Name: "davinci",
		NewCores: func(c *arch.Chip) ([]arch.CoreModel, error) {
			cores := make([]arch.CoreModel, c.M.Cores)
			for i := range cores {
				cores[i] = newCore(c, i)
			}
			return cores, nil
		},
		Limits:    limits,
		CoreBytes: coreBytes,
	})
}

// coreBytes estimates the host memory of one core of machine m (newCore's
// allocations), saturating instead of overflowing.
func coreBytes(m *machines.Machine, mode arch.Mode) int64 {
	mc := m.DaVinci()
	n := float64(unsafe.Sizeof(Core{})) +
		float64(float64(isa.NumPipes)*float64(mc.QueueDepth)*float64(unsafe.Sizeof(isa.Instr{})+unsafe.Sizeof(sim.Time(0)))) +
		float64(float64(isa.NumPipes)*float64(isa.NumPipes)*float64(mc.FlagIDs)*4) +
		float64(isa.NumBuffers)*float64(unsafe.Sizeof(mem.Occupancy{}))
	if mode == arch.Functional {
		bufs := m.Geometry().Buffers
		for i := isa.L1; i < isa.NumBuffers && int(i) < len(bufs); i++ { // as newCore allocates them
			n += float64(max(bufs[i].Capacity, 0))
		}
	}
	return int64(min(n, 1<<62))
}

// limits returns the static-check limits of DaVinci programs on chip c.
func limits(c *arch.Chip) isa.Limits {
	var lim isa.Limits
	for i, b := range c.Geometry().Buffers {
		lim.Capacity[i] = b.Capacity
	}
	mc := c.M.DaVinci()
	lim.FlagIDs = mc.FlagIDs
	lim.HasFIXP = mc.FixPipe
	lim.CubeIn = mc.Cube.InputTypes()
	lim.VectorRepeatBytes = c.Geometry().VectorRepeatBytes
	return lim
}
