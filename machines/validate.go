package machines

import (
	"errors"
	"fmt"
	"math"

	"github.com/davinci-sim/davinci-sim/mem"
)

// MaxOverheadNS bounds a fixed per-operation overhead given in ns (a kernel
// launch, a link's latency): 1 s, far above any real one (µs), and far
// enough below the simulated time range that a run of many still fits
// (1e17 ns wrapped the time; 1e30 overflowed it with no key named).
const MaxOverheadNS = 1e9

// MaxClock is the fastest clock a machine may have: the simulated time's
// unit is 1 ps (sim.Clock).
const MaxClock Frequency = 1e12

// clockProblem says what is wrong with a core clock ("" when nothing).
func clockProblem(f Frequency) string {
	if !(f > 0) || f > MaxClock {
		return fmt.Sprintf("must be in (0, 1THz] (a cycle of at least 1 ps; got %v)", f)
	}
	return ""
}

// overheadProblem says what is wrong with a fixed overhead in ns ("" when
// nothing).
func overheadProblem(ns float64) string {
	if ns < 0 || !(ns <= MaxOverheadNS) {
		return fmt.Sprintf("must be in 0..%g ns (1 s; got %v)", MaxOverheadNS, ns)
	}
	return ""
}

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
	ps = append(ps, m.Power.problems(m.Geometry())...)
	for _, p := range m.Core.problems() {
		ps = append(ps, problem{"core." + p.key, p.msg})
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
	if m.L2.Partitions < 0 {
		add("l2.partitions", "must be ≥ 0 (0 or 1: one L2) (got %d)", m.L2.Partitions)
	}
	if m.L2.FarLatencyCycles < 0 {
		add("l2.far_latency_cycles", "must be ≥ 0 (got %d)", m.L2.FarLatencyCycles)
	}
	if m.L2.Capacity > 0 {
		if !finitePos(float64(m.L2.Bandwidth)) {
			add("l2.bandwidth", "must be > 0 when l2.capacity > 0 (got %v)", m.L2.Bandwidth)
		}
		lb, w := m.L2.LineBytes, m.L2.Ways
		switch {
		case lb <= 0 || lb&(lb-1) != 0:
			add("l2.line_bytes", "must be a power of two when l2.capacity > 0 (got %d)", lb)
		case w < 1 || w > mem.MaxL2Ways:
			add("l2.ways", "must be in 1..%d when l2.capacity > 0 (the directory's associativity; got %d)", mem.MaxL2Ways, w)
		case int64(m.L2.Capacity)%(int64(lb)*int64(w)) != 0:
			add("l2.capacity", "must be a multiple of line_bytes × ways = %d (got %v)", int64(lb)*int64(w), m.L2.Capacity)
		case m.L2.Private && m.L2.Partitions > 1 && int64(m.L2.Capacity)%(int64(lb)*int64(w)*int64(m.L2.Partitions)) != 0:
			add("l2.capacity", "must be a multiple of line_bytes × ways × partitions = %d with private partitions (got %v)",
				int64(lb)*int64(w)*int64(m.L2.Partitions), m.L2.Capacity)
		}
		if i := m.L2.Index; i != "" && i != "modulo" && i != "xor" {
			add("l2.index", "must be modulo or xor (got %q)", i)
		}
		if m.L2.Private && m.L2.FarLatencyCycles != 0 {
			add("l2.far_latency_cycles", "must be 0 with private partitions: a core only reaches its own (got %d)", m.L2.FarLatencyCycles)
		}
		if m.L2.Private && m.L2.Partitions > m.Cores && m.Cores >= 1 {
			add("l2.partitions", "must be ≤ cores = %d with private partitions (got %d)", m.Cores, m.L2.Partitions)
		}
	}
	if l := &m.LLC; l.Capacity != 0 || l.Bandwidth != 0 || l.LineBytes != 0 || l.Ways != 0 || l.LatencyCycles != 0 {
		// An llc section, once given, must be complete.
		switch {
		case l.Capacity <= 0:
			add("llc.capacity", "must be > 0 when an llc section is given (got %v)", l.Capacity)
		case l.LineBytes <= 0 || l.LineBytes&(l.LineBytes-1) != 0:
			add("llc.line_bytes", "must be a power of two (got %d)", l.LineBytes)
		case l.Ways < 1 || l.Ways > mem.MaxL2Ways:
			add("llc.ways", "must be in 1..%d (the directory's associativity; got %d)", mem.MaxL2Ways, l.Ways)
		case int64(l.Capacity)%(int64(l.LineBytes)*int64(l.Ways)) != 0:
			add("llc.capacity", "must be a multiple of line_bytes × ways = %d (got %v)", int64(l.LineBytes)*int64(l.Ways), l.Capacity)
		}
		if !finitePos(float64(l.Bandwidth)) {
			add("llc.bandwidth", "must be > 0 (got %v)", l.Bandwidth)
		}
		if l.LatencyCycles < 0 {
			add("llc.latency_cycles", "must be ≥ 0 (got %d)", l.LatencyCycles)
		}
		if i := l.Index; i != "" && i != "modulo" && i != "xor" {
			add("llc.index", "must be modulo or xor (got %q)", i)
		}
		if m.L2.Capacity == 0 {
			add("llc.capacity", "needs an L2 in front of it (l2.capacity > 0)")
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
			if msg := overheadProblem(v.v); msg != "" {
				add(v.key, "%s", msg)
			}
		}
	}
	return ps
}

// MaxOpsPerCycle bounds a unit's operations per core per clock (tensor,
// CUDA-core, VALU rates): the largest real figure is in the tens of
// thousands (GPU-FACTS §1), so a larger one is a typo — and one near
// math.MaxFloat64 would make the peak, the clock times the rate times the
// cores, infinite.
const MaxOpsPerCycle = 1e9
