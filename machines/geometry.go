package machines

import (
	"fmt"
	"strings"
)

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
	// GMBandwidth is the chip's global-memory bandwidth, bytes/s
	// (Machine.Geometry's, from gm.bandwidth; 0 from a core's alone).
	GMBandwidth float64
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
// capacity from gm.capacity and the GM bandwidth from gm.bandwidth.
func (m *Machine) Geometry() *Geometry {
	g := m.Core.Geometry()
	g.GMBandwidth = float64(m.GM.Bandwidth)
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

// gpuPath is one copy path of a GPU core section: buffers (SMBuf…) and
// lane (SMLane…) indices and the file's figures.
type gpuPath struct {
	src, dst, lane int
	path           Path
}

// gpuGeometry is the geometry of a GPU kind (the roles of package
// arch/gpu): lanes, the buffers GM, shared memory and registers named
// names[1:3] with capacities, an accumulator buffer names[3] only when its
// capacity is > 0, and the paths — those touching an absent accumulator
// buffer left out.
func gpuGeometry(lanes []string, names [4]string, shared, regs, acc Size, paths []gpuPath) *Geometry {
	g := &Geometry{Lanes: lanes}
	g.Buffers = []BufferSpec{
		{Name: names[0], Global: true},
		{Name: names[1], Capacity: int64(shared)},
		{Name: names[2], Capacity: int64(regs)},
	}
	if acc > 0 {
		g.Buffers = append(g.Buffers, BufferSpec{Name: names[3], Capacity: int64(acc)})
	}
	for _, p := range paths {
		if (p.src == SMBufTMEM || p.dst == SMBufTMEM) && acc <= 0 {
			continue
		}
		g.Paths = append(g.Paths, PathSpec{Name: g.Buffers[p.src].Name + "_" + g.Buffers[p.dst].Name,
			Src: p.src, Dst: p.dst, Lane: p.lane, BytesPerCycle: p.path.BytesPerCycle, LatencyCycles: p.path.LatencyCycles})
	}
	return g
}

// MaxBanks bounds a GPU core's shared-memory (LDS) banks and a bank's
// bytes (32 banks of 4 bytes on NVIDIA and CDNA): the bank-conflict model
// keeps a counter a bank.
const MaxBanks = 1024

// gpuSharedProblems checks a GPU core's shared memory (LDS): the size per
// core and per block (keys[0], keys[1]) and its banking (keys[2] banks,
// keys[3] bytes per bank).
func gpuSharedProblems(shared, perBlock Size, banks, bankBytes int, keys [4]string) []problem {
	var ps []problem
	add := func(key, format string, args ...any) { ps = append(ps, problem{key, fmt.Sprintf(format, args...)}) }
	if shared <= 0 || shared%BufferAlign != 0 {
		add(keys[0], "must be > 0 and a multiple of %d bytes (got %v)", BufferAlign, shared)
	}
	switch {
	case perBlock <= 0 || perBlock%BufferAlign != 0:
		add(keys[1], "must be > 0 and a multiple of %d bytes (got %v)", BufferAlign, perBlock)
	case shared > 0 && perBlock > shared:
		add(keys[1], "must be ≤ %s = %v (got %v)", keys[0], shared, perBlock)
	}
	pow2 := func(v int) bool { return v > 0 && v&(v-1) == 0 && v <= MaxBanks }
	if !pow2(banks) {
		add(keys[2], "must be a power of two up to %d (got %d)", MaxBanks, banks)
	}
	if !pow2(bankBytes) {
		add(keys[3], "must be a power of two up to %d (got %d)", MaxBanks, bankBytes)
	}
	return ps
}

// gpuPathProblems checks a GPU core's paths: each > 0 bytes per cycle and
// ≥ 0 cycles, except the accumulator buffer's (names containing acc),
// which must be 0 and 0 on a core without one (accKey names the capacity
// key in the message); skipAcc leaves those unchecked (their buffer's own
// key is wrong already).
func gpuPathProblems(paths []NamedPath, acc string, hasAcc, skipAcc bool, accKey string) []problem {
	var ps []problem
	add := func(key, format string, args ...any) { ps = append(ps, problem{key, fmt.Sprintf(format, args...)}) }
	for _, p := range paths {
		if strings.Contains(p.Name, acc) && (skipAcc || !hasAcc) {
			if !skipAcc && (p.Path.BytesPerCycle != 0 || p.Path.LatencyCycles != 0) {
				add("paths."+p.Name+".bytes_per_cycle", "must be 0 with latency_cycles 0 on a core without %s (%s: 0) (got %v, %d)",
					acc, accKey, p.Path.BytesPerCycle, p.Path.LatencyCycles)
			}
			continue
		}
		if msg := pathRateProblem(p.Path.BytesPerCycle); msg != "" {
			add("paths."+p.Name+".bytes_per_cycle", "%s", msg)
		}
		if msg := cyclesProblem(float64(p.Path.LatencyCycles)); msg != "" {
			add("paths."+p.Name+".latency_cycles", "%s", msg)
		}
	}
	return ps
}
