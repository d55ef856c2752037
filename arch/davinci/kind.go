// Package davinci is the core model of the davinci machine kind: the Ascend
// DaVinci AI core — a scalar unit issuing in program order into bounded
// per-pipe queues (S, MTE2, MTE1, M, V, MTE3, FIXP); pipes that execute in
// order and concurrently; set/wait flags and barriers as on hardware; the
// L1, L0A/B/C and UB buffers; the cube computing bit-accurately through the
// machine's numerics preset. Importing it registers the kind with package
// arch.
package davinci

import (
	"github.com/davinci-sim/davinci-sim/arch"
	"github.com/davinci-sim/davinci-sim/isa"
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
		Limits: limits,
	})
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
