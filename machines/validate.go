package machines

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/davinci-sim/davinci-sim/cube"
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

// MinClock is the slowest clock a machine may have (core, tensor
// sustained, host): 1 MHz, a cycle of 1 µs. The slowest real part of any
// machine here runs at hundreds of MHz, so a slower clock is a typo (a
// missing unit: clock: 1.41 is 1.41 Hz); and the simulated time range,
// about 9.2e18 ps, holds 9.2e12 cycles of it, so a run's time stays a
// cycle count far from the range's end (1e-6 Hz overflowed the time on
// the first vector instruction, naming the instruction, not the key).
const MinClock Frequency = 1e6

// ClockProblem says what is wrong with a clock, a machine's or a cluster
// node's host ("" when nothing): outside [MinClock, MaxClock].
func ClockProblem(f Frequency) string {
	if !(f >= MinClock) || f > MaxClock {
		return fmt.Sprintf("must be in [1MHz, 1THz] (a cycle of 1 ps to 1 µs; got %v)", f)
	}
	return ""
}

// numericsProblem says what is wrong with a matrix unit's numerics preset
// name ("" when nothing): it must name one of package cube's (e.g.
// example). Before, only an empty name was refused here, and
// `machines --set core.numerics=bogus` printed a machine file run refuses.
func numericsProblem(name, example string) string {
	if name == "" {
		return fmt.Sprintf("must name a numerics preset of package cube (e.g. %s)", example)
	}
	if _, err := cube.Preset(name); err != nil {
		return fmt.Sprintf("%v", err)
	}
	return ""
}

// MaxPeriodRounding bounds how far a core clock's period may move when the
// simulator rounds it to whole picoseconds (sim.NewClock): a clock runs at
// 1e12/round(1e12/f) Hz, and a run's peaks are the file's clock's. Every
// clock up to 10 GHz (a period of at least 100 ps) is within it; 700 GHz
// ran at 1 THz, 43 % fast, its GEMMs above their peak.
const MaxPeriodRounding = 0.005

// CoreClockProblem is ClockProblem for a clock that times a core's cycles
// (core.clock), which must also keep its period within MaxPeriodRounding
// of the file's when rounded to whole picoseconds.
func CoreClockProblem(f Frequency) string {
	if msg := ClockProblem(f); msg != "" {
		return msg
	}
	exact := 1e12 / float64(f)
	if p := math.Round(exact); math.Abs(p-exact) > MaxPeriodRounding*exact {
		return fmt.Sprintf("a cycle of %.4g ps, which the simulated time (whole picoseconds) would round to %g ps: a %v clock, %.3g %% off; give a clock whose period is within %g %% of whole picoseconds (any clock up to 10GHz)",
			exact, p, Frequency(1e12/p), 100*math.Abs(1e12/p-float64(f))/float64(f), 100*MaxPeriodRounding)
	}
	return ""
}

// MaxCycles bounds a machine's cycle counts (latencies, startup and issue
// costs, cycles per vector repeat): a million cycles, a millisecond at
// 1 GHz, where the slowest real one, a GM access, takes hundreds. At most
// a second per operation even at MinClock, so that a run of many stays
// within the simulated time range (a gm.latency_cycles of 1e16 overflowed
// it, naming an instruction, not the key).
const MaxCycles = 1e6

// tagSpanProblem says what is wrong with a cache directory of lineBytes ×
// tagLines bytes a tag over gm bytes of GM ("" when nothing): its tags
// name at most mem.MaxSector+1 of them. Safe for any sizes (the
// directory's rounding); its callers report it only after the sizes'
// own checks passed (a switch's last case).
func tagSpanProblem(gm Size, lineBytes, tagLines int) string {
	if gm <= 0 || lineBytes <= 0 || tagLines <= 0 {
		return ""
	}
	n := mem.L2Sectors(int64(gm), lineBytes, tagLines)
	if n <= mem.MaxSector+1 {
		return ""
	}
	return fmt.Sprintf("line_bytes × lines_per_tag = %d bytes a tag spans gm.capacity %v in %d tags, more than the directory's %d: tag more bytes (or less GM)",
		int64(lineBytes)*int64(tagLines), gm, n, int64(mem.MaxSector+1))
}

// cyclesProblem says what is wrong with a cycle count ("" when nothing).
func cyclesProblem(n float64) string {
	if !(n >= 0 && n <= MaxCycles) {
		return fmt.Sprintf("must be in 0..%g cycles (got %v)", MaxCycles, n)
	}
	return ""
}

// MinPerCycle is the least a unit may do a cycle where it does anything:
// one byte moved on a data path (bytes_per_cycle), one operation of a
// tensor core, CUDA core, VALU or host core (flops_per_cycle). A path is at least a
// byte wide and a unit retires at least one operation a clock: the
// slowest real ones here move 31 bytes and do 4 operations (a T4 SM's
// FP64). Rates of 1e-9 made one copy or matrix instruction take beyond
// the simulated time range, naming the instruction, not the key.
const MinPerCycle = 1

// rateProblem says what is wrong with a unit's operations a cycle ("" when
// nothing).
func rateProblem(v float64) string {
	if !(v >= MinPerCycle && v <= MaxOpsPerCycle) {
		return fmt.Sprintf("must be in %d..%g (got %v)", MinPerCycle, MaxOpsPerCycle, v)
	}
	return ""
}

// pathRateProblem says what is wrong with a data path's bytes_per_cycle
// ("" when nothing).
func pathRateProblem(v float64) string {
	if !(v >= MinPerCycle) || math.IsInf(v, 0) {
		return fmt.Sprintf("must be ≥ %d: a path moves at least a byte a cycle (got %v)", MinPerCycle, v)
	}
	return ""
}

// MinEfficiency is the least fraction of its rate a unit may sustain
// (tensor.efficiency, tensor.mma_sync_efficiency): 1 %, where measured ones
// are above 60 % — and a fraction of 1e-300 made the rate as tiny as a
// rate of 1e-300.
const MinEfficiency = 0.01

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
// clocks in [1MHz, 1THz], cycle counts up to a million, buffer sizes
// positive multiples of 32 bytes, queue depth ≥ 1, flag ids in 1..64, at
// least a byte a cycle on every path, positive GM bandwidth, a usable
// cube, …). It returns one line per violation, "key "core.clock": must be
// in [1MHz, 1THz] (a cycle of 1 ps to 1 µs; got 0Hz)", joined. The numerics preset name is only checked to be non-empty:
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
	for key, v := range map[string]string{"name": m.Name, "description": m.Description} {
		// (Printed in headers, tables and YAML comments: a line break
		// there would break them, or forge a key in a printed file.)
		unprinted := func(r rune) bool { // (control, format, line and paragraph separators)
			return unicode.IsControl(r) || unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp)
		}
		if i := strings.IndexFunc(v, unprinted); i >= 0 {
			r, _ := utf8.DecodeRuneInString(v[i:])
			add(key, "must be one line of text (got %q at byte %d)", string(r), i)
		}
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
	if msg := cyclesProblem(float64(m.GM.LatencyCycles)); msg != "" {
		add("gm.latency_cycles", "%s", msg)
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
	if m.L2.Partitions < 0 || m.L2.Partitions > MaxL2Partitions {
		add("l2.partitions", "must be in 0..%d (0 or 1: one L2) (got %d)", MaxL2Partitions, m.L2.Partitions)
	}
	if msg := cyclesProblem(float64(m.L2.FarLatencyCycles)); msg != "" {
		add("l2.far_latency_cycles", "%s", msg)
	}
	if m.L2.Capacity > 0 {
		if !finitePos(float64(m.L2.Bandwidth)) {
			add("l2.bandwidth", "must be > 0 when l2.capacity > 0 (got %v)", m.L2.Bandwidth)
		}
		lb, w, tl := m.L2.LineBytes, m.L2.Ways, m.L2.TagLines()
		switch span := tagSpanProblem(m.GM.Capacity, lb, tl); {
		case lb <= 0 || lb&(lb-1) != 0 || lb > MaxLineBytes:
			add("l2.line_bytes", "must be a power of two up to %d when l2.capacity > 0 (got %d)", MaxLineBytes, lb)
		case !tagLinesOK(m.L2.LinesPerTag):
			add("l2.lines_per_tag", "must be a power of two in 1..%d, or 0 for 1 (got %d)", mem.MaxTagLines, m.L2.LinesPerTag)
		case w < 1 || w > mem.MaxL2Ways:
			add("l2.ways", "must be in 1..%d when l2.capacity > 0 (the directory's associativity; got %d)", mem.MaxL2Ways, w)
		case int64(m.L2.Capacity)%(int64(lb)*int64(tl)*int64(w)) != 0:
			add("l2.capacity", "must be a multiple of line_bytes × lines_per_tag × ways = %d (got %v)", int64(lb)*int64(tl)*int64(w), m.L2.Capacity)
		case m.L2.Private && m.L2.Partitions > 1 && m.L2.Partitions <= MaxL2Partitions && int64(m.L2.Capacity)%(int64(lb)*int64(tl)*int64(w)*int64(m.L2.Partitions)) != 0:
			add("l2.capacity", "must be a multiple of line_bytes × lines_per_tag × ways × partitions = %d with private partitions (got %v)",
				int64(lb)*int64(tl)*int64(w)*int64(m.L2.Partitions), m.L2.Capacity)
		case span != "":
			add("l2.lines_per_tag", "%s", span)
		}
		if i := m.L2.Index; !validIndex(i) {
			add("l2.index", "must be modulo, xor or ipoly (got %q)", i)
		}
		if m.L2.Private && m.L2.FarLatencyCycles != 0 {
			add("l2.far_latency_cycles", "must be 0 with private partitions: a core only reaches its own (got %d)", m.L2.FarLatencyCycles)
		}
		if m.L2.Private && m.L2.Partitions > m.Cores && m.Cores >= 1 && m.L2.Partitions <= MaxL2Partitions {
			add("l2.partitions", "must be ≤ cores = %d with private partitions (got %d)", m.Cores, m.L2.Partitions)
		}
	}
	if l := &m.LLC; l.Given() {
		// An llc section, once given, must be complete.
		switch span := tagSpanProblem(m.GM.Capacity, l.LineBytes, l.TagLines()); {
		case l.Capacity <= 0:
			add("llc.capacity", "must be > 0 when an llc section is given (got %v)", l.Capacity)
		case l.LineBytes <= 0 || l.LineBytes&(l.LineBytes-1) != 0 || l.LineBytes > MaxLineBytes:
			add("llc.line_bytes", "must be a power of two up to %d (got %d)", MaxLineBytes, l.LineBytes)
		case !tagLinesOK(l.LinesPerTag):
			add("llc.lines_per_tag", "must be a power of two in 1..%d, or 0 for 1 (got %d)", mem.MaxTagLines, l.LinesPerTag)
		case l.Ways < 1 || l.Ways > mem.MaxL2Ways:
			add("llc.ways", "must be in 1..%d (the directory's associativity; got %d)", mem.MaxL2Ways, l.Ways)
		case int64(l.Capacity)%(int64(l.LineBytes)*int64(l.TagLines())*int64(l.Ways)) != 0:
			add("llc.capacity", "must be a multiple of line_bytes × lines_per_tag × ways = %d (got %v)", int64(l.LineBytes)*int64(l.TagLines())*int64(l.Ways), l.Capacity)
		case span != "":
			add("llc.lines_per_tag", "%s", span)
		}
		if !finitePos(float64(l.Bandwidth)) {
			add("llc.bandwidth", "must be > 0 (got %v)", l.Bandwidth)
		}
		if msg := cyclesProblem(float64(l.LatencyCycles)); msg != "" {
			add("llc.latency_cycles", "%s", msg)
		}
		if i := l.Index; !validIndex(i) {
			add("llc.index", "must be modulo, xor or ipoly (got %q)", i)
		}
		if m.L2.Capacity == 0 {
			add("llc.capacity", "needs an L2 in front of it (l2.capacity > 0)")
		}
	}
	if h := &m.Host; h.Given() {
		// A host section, once given, must be complete.
		if h.Cores < 1 {
			add("host.cores", "must be ≥ 1 when a host section is given (got %d)", h.Cores)
		}
		if msg := ClockProblem(h.Clock); msg != "" {
			add("host.clock", "%s", msg)
		}
		for _, v := range []struct {
			key string
			v   float64
		}{{"host.fp32_flops_per_cycle", h.FP32FlopsPerCycle}, {"host.fp64_flops_per_cycle", h.FP64FlopsPerCycle}} {
			if msg := rateProblem(v.v); msg != "" {
				add(v.key, "%s", msg)
			}
		}
		for _, v := range []struct {
			key string
			v   float64
		}{
			{"host.memory_bandwidth", float64(h.MemoryBandwidth)}, {"host.link.bandwidth", float64(h.Link.Bandwidth)},
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

// tagLinesOK reports whether n is a valid lines_per_tag: 0 (for 1) or a
// power of two up to mem.MaxTagLines.
func tagLinesOK(n int) bool {
	return n == 0 || n > 0 && n <= mem.MaxTagLines && n&(n-1) == 0
}

// The set indexes a cache may name (L2Cache.Index; "" is IndexModulo).
const (
	IndexModulo = "modulo"
	IndexXOR    = "xor"
	IndexPoly   = "ipoly"
)

// validIndex reports whether i names a cache's set index.
func validIndex(i string) bool {
	return i == "" || i == IndexModulo || i == IndexXOR || i == IndexPoly
}

// MaxL2Partitions bounds l2.partitions (the A100's L2 has 2, the MI300X's
// private L2s 8), and MaxLineBytes a cache's line (128 bytes on every
// GPU file): their products with the tag's lines and the ways stay far
// from overflowing.
const (
	MaxL2Partitions = 1 << 12
	MaxLineBytes    = 1 << 20
)
