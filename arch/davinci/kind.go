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

// coreBytes estimates the host memory one core of machine m takes,
// saturating instead of overflowing: newCore's allocations, each rounded
// up to the Go allocator's size class (arch.AllocBytes: the Core alone is
// 4152 bytes in a 4864-byte class, each 32-deep queue 7936 in 8192); the
// chip's arrays by core; the stream the core reads while it runs a
// program or kernel (arch.StreamReaderBytes: its read-ahead ring, 31 KiB,
// so that the estimate is the same on every host — a chip that reads no
// streams ahead, with one processor or fidelity sampled's kernels, holds
// 24 KiB a core less); and the statistics the run collects of it
// (Finalize). Without the stream and the rounding the estimate was ~20 %
// short: a 4096-core chip running a kernel on every core without reading
// ahead took ~310 MiB against 252 MiB estimated.
func coreBytes(m *machines.Machine, mode arch.Mode) int64 {
	mc := m.DaVinci()
	geom := m.Geometry()
	alloc := func(n float64) float64 { return float64(arch.AllocBytes(int64(min(n, 1<<62)))) }
	depth := float64(mc.QueueDepth)
	n := alloc(float64(unsafe.Sizeof(Core{}))) +
		float64(float64(isa.NumPipes)*(alloc(depth*float64(unsafe.Sizeof(isa.Instr{})))+alloc(depth*float64(unsafe.Sizeof(sim.Time(0)))))) +
		alloc(float64(isa.NumPipes)*float64(isa.NumPipes)*float64(mc.FlagIDs)*4) +
		float64(float64(isa.NumBuffers-isa.L1)*alloc(float64(unsafe.Sizeof(mem.Occupancy{})))) +
		alloc(float64(len(geom.Paths))*8) + // pathBytes
		alloc(float64(unsafe.Sizeof(sim.Waker{}))) +
		arch.ChipBytesPerCore +
		float64(arch.StreamReaderBytes(true)) +
		alloc(float64(isa.NumPipes)*float64(unsafe.Sizeof(arch.LaneStats{}))) +
		alloc(float64(isa.NumBuffers)*float64(unsafe.Sizeof(arch.BufferStats{}))) +
		float64(unsafe.Sizeof(arch.CoreStats{}))
	if mode == arch.Functional {
		bufs := geom.Buffers
		for i := isa.L1; i < isa.NumBuffers && int(i) < len(bufs); i++ { // as newCore allocates them
			n += alloc(float64(max(bufs[i].Capacity, 0)))
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
