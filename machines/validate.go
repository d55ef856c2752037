package machines

import (
	"errors"
	"fmt"
	"math"
)

// problem is one violated constraint: the key (dotted path as in the file
// format) and what is wrong.
type problem struct{ key, msg string }

// Validate checks the constraints every machine must meet (cores ≥ 1,
// clock > 0, buffer sizes positive multiples of 32 bytes, queue depth ≥ 1,
// flag ids in 1..64, positive path and GM bandwidths, a usable cube, …).
// It returns one line per violation, "key "core.clock": must be > 0 (got
// 0Hz)", joined. The numerics preset name is only checked to be non-empty:
// package cube owns the list of presets.
func (m *Machine) Validate() error {
	errs := m.problems()
	if len(errs) == 0 {
		return nil
	}
	out := make([]error, len(errs))
	for i, e := range errs {
		out[i] = fmt.Errorf("key %q: %s", e.key, e.msg)
	}
	return errors.Join(out...)
}

// BufferAlign is the granularity of on-chip buffer capacities in bytes.
const BufferAlign = 32

// MaxFlagIDs bounds the event ids per pipe pair.
const MaxFlagIDs = 64

func (m *Machine) problems() []problem {
	var ps []problem
	add := func(key, format string, args ...any) {
		ps = append(ps, problem{key, fmt.Sprintf(format, args...)})
	}
	finitePos := func(f float64) bool { return f > 0 && !math.IsInf(f, 0) && !math.IsNaN(f) }
	if m.Cores < 1 {
		add("cores", "must be ≥ 1 (got %d)", m.Cores)
	}
	c := &m.Core
	if !finitePos(float64(c.Clock)) {
		add("core.clock", "must be > 0 (got %v)", c.Clock)
	}
	if c.QueueDepth < 1 {
		add("core.queue_depth", "must be ≥ 1 (got %d)", c.QueueDepth)
	}
	if c.FlagIDs < 1 || c.FlagIDs > MaxFlagIDs {
		add("core.flag_ids", "must be in 1..%d (got %d)", MaxFlagIDs, c.FlagIDs)
	}
	for _, b := range []struct {
		key  string
		size Size
	}{
		{"L1", c.Buffers.L1}, {"L0A", c.Buffers.L0A}, {"L0B", c.Buffers.L0B},
		{"L0C", c.Buffers.L0C}, {"UB", c.Buffers.UB},
	} {
		if b.size <= 0 || b.size%BufferAlign != 0 {
			add("core.buffers."+b.key, "must be > 0 and a multiple of %d bytes (got %v)", BufferAlign, b.size)
		}
	}
	cu := &c.Cube
	if cu.Numerics == "" {
		add("core.cube.numerics", "must name a numerics preset of package cube (e.g. ascend-910a)")
	}
	if cu.M <= 0 {
		add("core.cube.m", "must be > 0 (got %d)", cu.M)
	}
	if cu.N <= 0 {
		add("core.cube.n", "must be > 0 (got %d)", cu.N)
	}
	if cu.KStepFP16 <= 0 {
		add("core.cube.kstep_fp16", "must be > 0 (got %d)", cu.KStepFP16)
	}
	for _, k := range []struct {
		key string
		v   int
	}{
		{"kstep_bf16", cu.KStepBF16}, {"kstep_fp32", cu.KStepFP32}, {"kstep_int8", cu.KStepINT8},
		{"startup_cycles", cu.StartupCycles},
	} {
		if k.v < 0 {
			add("core.cube."+k.key, "must be ≥ 0 (0 = unsupported) (got %d)", k.v)
		}
	}
	if c.Vector.BytesPerRepeat <= 0 {
		add("core.vector.bytes_per_repeat", "must be > 0 (got %d)", c.Vector.BytesPerRepeat)
	}
	if !finitePos(c.Vector.CyclesPerRepeat) {
		add("core.vector.cycles_per_repeat", "must be > 0 (got %v)", c.Vector.CyclesPerRepeat)
	}
	if c.Vector.StartupCycles < 0 {
		add("core.vector.startup_cycles", "must be ≥ 0 (got %d)", c.Vector.StartupCycles)
	}
	if c.Scalar.IssueCycles < 0 {
		add("core.scalar.issue_cycles", "must be ≥ 0 (got %d)", c.Scalar.IssueCycles)
	}
	for _, p := range m.Core.Paths.All() {
		if !finitePos(p.Path.BytesPerCycle) {
			add("core.paths."+p.Name+".bytes_per_cycle", "must be > 0 (got %v)", p.Path.BytesPerCycle)
		}
		if p.Path.LatencyCycles < 0 {
			add("core.paths."+p.Name+".latency_cycles", "must be ≥ 0 (got %d)", p.Path.LatencyCycles)
		}
	}
	if m.GM.Capacity <= 0 {
		add("gm.capacity", "must be > 0 (got %v)", m.GM.Capacity)
	}
	if !finitePos(float64(m.GM.Bandwidth)) {
		add("gm.bandwidth", "must be > 0 (got %v)", m.GM.Bandwidth)
	}
	if m.GM.LatencyCycles < 0 {
		add("gm.latency_cycles", "must be ≥ 0 (got %d)", m.GM.LatencyCycles)
	}
	if m.L2.Capacity < 0 {
		add("l2.capacity", "must be ≥ 0 (0 = no L2) (got %v)", m.L2.Capacity)
	}
	if m.L2.LineBytes < 0 {
		add("l2.line_bytes", "must be ≥ 0 (got %d)", m.L2.LineBytes)
	}
	if m.L2.Ways < 0 {
		add("l2.ways", "must be ≥ 0 (got %d)", m.L2.Ways)
	}
	if m.L2.Capacity > 0 {
		if !finitePos(float64(m.L2.Bandwidth)) {
			add("l2.bandwidth", "must be > 0 when l2.capacity > 0 (got %v)", m.L2.Bandwidth)
		}
		lb, w := m.L2.LineBytes, m.L2.Ways
		switch {
		case lb <= 0 || lb&(lb-1) != 0:
			add("l2.line_bytes", "must be a power of two when l2.capacity > 0 (got %d)", lb)
		case w < 1:
			add("l2.ways", "must be ≥ 1 when l2.capacity > 0 (got %d)", w)
		case int64(m.L2.Capacity)%(int64(lb)*int64(w)) != 0:
			add("l2.capacity", "must be a multiple of line_bytes × ways = %d (got %v)", int64(lb)*int64(w), m.L2.Capacity)
		}
	}
	if h := &m.Host; h.Cores != 0 || h.Clock != 0 || h.FP32FlopsPerCycle != 0 || h.FP64FlopsPerCycle != 0 ||
		h.MemoryBandwidth != 0 || h.Link.Bandwidth != 0 || h.Link.LatencyNS != 0 || h.LaunchNS != 0 {
		// A host section, once given, must be complete.
		if h.Cores < 1 {
			add("host.cores", "must be ≥ 1 when a host section is given (got %d)", h.Cores)
		}
		for _, v := range []struct {
			key string
			v   float64
		}{
			{"host.clock", float64(h.Clock)}, {"host.fp32_flops_per_cycle", h.FP32FlopsPerCycle},
			{"host.fp64_flops_per_cycle", h.FP64FlopsPerCycle}, {"host.memory_bandwidth", float64(h.MemoryBandwidth)},
			{"host.link.bandwidth", float64(h.Link.Bandwidth)},
		} {
			if !finitePos(v.v) {
				add(v.key, "must be > 0 (got %v)", v.v)
			}
		}
		for _, v := range []struct {
			key string
			v   float64
		}{{"host.link.latency_ns", h.Link.LatencyNS}, {"host.launch_ns", h.LaunchNS}} {
			if v.v < 0 || math.IsNaN(v.v) || math.IsInf(v.v, 0) {
				add(v.key, "must be ≥ 0 and finite (got %v)", v.v)
			}
		}
	}
	return ps
}

// NamedPath is a core data path with its key (e.g. "GM_L1").
type NamedPath struct {
	Name string
	Path Path
}

// All lists the paths in file order with their keys.
func (p Paths) All() []NamedPath {
	return []NamedPath{
		{"GM_L1", p.GM_L1}, {"GM_UB", p.GM_UB}, {"L1_L0A", p.L1_L0A}, {"L1_L0B", p.L1_L0B},
		{"L0C_UB", p.L0C_UB}, {"L0C_GM", p.L0C_GM}, {"UB_GM", p.UB_GM}, {"UB_L1", p.UB_L1},
	}
}

// PeakFLOPS is the chip's peak cube throughput in FLOP/s for an input type
// with reduction depth kstep per cycle (e.g. Core.Cube.KStepFP16): cores ×
// clock × m × n × kstep × 2 (one multiply and one add per MAC).
func (m *Machine) PeakFLOPS(kstep int) float64 {
	return float64(m.Cores) * float64(m.Core.Clock) * float64(m.Core.Cube.M*m.Core.Cube.N*kstep) * 2
}
