package machines

import "fmt"

// Geometry is a core's shape as its model and every reader of its results
// see it, resolved once from the machine file: the lanes (execution pipes,
// named by the kind) that stall accounting, reports, traces and the viewer
// show; the memories a core addresses, with capacities; and the copy paths
// between them with the lane that runs each, its bandwidth and latency.
// Capacity checks, the core model, the trace recorder and the CLI all read
// this one value.
type Geometry struct {
	// Lanes are the lane names, in report order; a lane is addressed by
	// its index.
	Lanes []string
	// Buffers are the memories a core addresses, indexed as the kind's
	// instructions address them; Global ones (GM) are shared by the chip.
	Buffers []BufferSpec
	// Paths are the copy paths between buffers.
	Paths []PathSpec
	// VectorRepeatBytes is the bytes of each operand one vector repeat
	// covers (kinds with a repeat-based vector unit; 0 otherwise).
	VectorRepeatBytes int
}

// BufferSpec is one memory of a core.
type BufferSpec struct {
	Name     string
	Capacity int64 // bytes (per core for local buffers)
	Global   bool  // shared by all cores (global memory), not a core buffer
}

// PathSpec is one copy path: a copy of B bytes from Src to Dst takes
// LatencyCycles + B / BytesPerCycle cycles on lane Lane when nothing else
// limits it.
type PathSpec struct {
	Name          string // file key, e.g. GM_L1
	Src, Dst      int    // buffer indices
	Lane          int    // lane index
	BytesPerCycle float64
	LatencyCycles int
}

// Path returns the path from buffer src to buffer dst.
func (g *Geometry) Path(src, dst int) (PathSpec, bool) {
	for _, p := range g.Paths {
		if p.Src == src && p.Dst == dst {
			return p, true
		}
	}
	return PathSpec{}, false
}

// Lane returns the index of the lane named name.
func (g *Geometry) Lane(name string) (int, bool) {
	for i, n := range g.Lanes {
		if n == name {
			return i, true
		}
	}
	return 0, false
}

// Buffer returns the index of the buffer named name.
func (g *Geometry) Buffer(name string) (int, bool) {
	for i, b := range g.Buffers {
		if b.Name == name {
			return i, true
		}
	}
	return 0, false
}

// LocalBuffers returns the indices of the core-local buffers, in order.
func (g *Geometry) LocalBuffers() []int {
	var out []int
	for i, b := range g.Buffers {
		if !b.Global {
			out = append(out, i)
		}
	}
	return out
}

// Geometry resolves the machine's core geometry, with the global buffers'
// capacity from gm.capacity.
func (m *Machine) Geometry() *Geometry {
	g := m.Core.Geometry()
	for i := range g.Buffers {
		if g.Buffers[i].Global {
			g.Buffers[i].Capacity = int64(m.GM.Capacity)
		}
	}
	return g
}

// String prints the geometry for messages and tests.
func (p PathSpec) String() string {
	return fmt.Sprintf("%s (lane %d, %g B/cycle, %d cycles)", p.Name, p.Lane, p.BytesPerCycle, p.LatencyCycles)
}
