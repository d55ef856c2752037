// Package machines describes simulated machines: the typed Machine
// description, the embedded machine files (YAML) and their loader, which
// validates every value and rejects unknown keys.
package machines

// Machine is a complete machine description. Field tags are the YAML keys;
// the dotted path of a field (e.g. core.buffers.L1) is what `--set
// machine.<path>=<value>` addresses. The core: section belongs to the
// machine's kind (see Kinds); everything else is shared by every kind.
type Machine struct {
	Name        string `mapstructure:"name"`
	Description string `mapstructure:"description"`
	// Kind names the core model (davinci, nvidia-sm, …); a file without
	// kind: is a davinci machine.
	Kind  string `mapstructure:"kind"`
	Cores int    `mapstructure:"cores"` // cores on the chip (AI cores, SMs, CUs)
	// Core is the kind's core section (*DaVinciCore for davinci).
	Core CoreSpec     `mapstructure:"core"`
	GM   GlobalMemory `mapstructure:"gm"`
	L2   L2Cache      `mapstructure:"l2"`
	// LLC is the memory-side cache in front of HBM (optional).
	LLC LLC `mapstructure:"llc"`
	// Power is the power model (optional: without one, reports have no
	// energy).
	Power Power `mapstructure:"power"`
	// Host is the host CPU and its link to the NPU (optional: a machine
	// without one has Host.Cores == 0 and cannot run host programs).
	Host Host `mapstructure:"host"`
}

// CoreSpec is the core: section of one machine kind.
type CoreSpec interface {
	// ClockHz returns the core clock.
	ClockHz() Frequency
	// Geometry resolves the core's lanes, buffers and copy paths.
	Geometry() *Geometry
	// VectorRepeatBytes is Geometry().VectorRepeatBytes without building
	// the geometry (program generators read it for every block).
	VectorRepeatBytes() int
	// Peaks returns one core's peak matrix-unit throughput per input type.
	Peaks() []Peak
	// problems lists the violated constraints, keys relative to core.
	problems() []problem
}

// Peak is a matrix unit's peak throughput for one input type, in
// operations (multiply and add counted apart) per second.
type Peak struct {
	Input        string // e.g. FP16
	OpsPerSecond float64
}

// Peaks returns the chip's peak matrix throughput per input type: every
// core's peak times the cores.
func (m *Machine) Peaks() []Peak {
	ps := m.Core.Peaks()
	for i := range ps {
		ps[i].OpsPerSecond *= float64(m.Cores)
	}
	return ps
}

// Peak returns the chip's peak matrix throughput for one input type (a
// Peak.Input name such as FP16), and false when the matrix unit has no
// rate for it.
func (m *Machine) Peak(input string) (float64, bool) {
	for _, p := range m.Peaks() {
		if p.Input == input {
			return p.OpsPerSecond, true
		}
	}
	return 0, false
}

// NumericsPreset returns the name of the matrix unit's numerics preset
// (package cube) when the kind's core section names one.
func (m *Machine) NumericsPreset() string {
	if n, ok := m.Core.(interface{ NumericsPreset() string }); ok {
		return n.NumericsPreset()
	}
	return ""
}

// NumericsKey returns the key that names the numerics preset, for
// messages: core.cube.numerics on DaVinci (the cube's), else core.numerics.
func (m *Machine) NumericsKey() string {
	if m.DaVinci() != nil {
		return "core.cube.numerics"
	}
	return "core.numerics"
}

// DaVinci returns the DaVinci core section, or nil when the machine is of
// another kind.
func (m *Machine) DaVinci() *DaVinciCore {
	c, _ := m.Core.(*DaVinciCore)
	return c
}

// Given reports whether the machine has an LLC: a section of zeros (or
// none) is none.
func (l *LLC) Given() bool {
	return l.Capacity != 0 || l.Bandwidth != 0 || l.LineBytes != 0 || l.LinesPerTag != 0 || l.Ways != 0 || l.LatencyCycles != 0
}

// Clock returns the core clock of any kind.
func (m *Machine) Clock() Frequency { return m.Core.ClockHz() }

// Host describes the host CPU share that drives one NPU and the host–NPU
// link. Host compute tasks take max(flops / rate, bytes / memory bandwidth),
// with rate = cores used × clock × flops per cycle per core.
type Host struct {
	Cores int       `mapstructure:"cores"` // host cores available to this NPU
	Clock Frequency `mapstructure:"clock"` // host core clock
	// FP32FlopsPerCycle and FP64FlopsPerCycle are the sustained
	// floating-point operations per cycle of one host core.
	FP32FlopsPerCycle float64 `mapstructure:"fp32_flops_per_cycle"`
	FP64FlopsPerCycle float64 `mapstructure:"fp64_flops_per_cycle"`
	// MemoryBandwidth is the host DRAM bandwidth available to this NPU's share.
	MemoryBandwidth Bandwidth `mapstructure:"memory_bandwidth"`
	Link            Link      `mapstructure:"link"`
	// LaunchNS is the host-side cost of launching one kernel, in ns.
	LaunchNS float64 `mapstructure:"launch_ns"`
}

// Given reports whether the machine has a host: a section of zeros (or
// none) is none.
func (h *Host) Given() bool {
	return h.Cores != 0 || h.Clock != 0 || h.FP32FlopsPerCycle != 0 || h.FP64FlopsPerCycle != 0 ||
		h.MemoryBandwidth != 0 || h.Link.Bandwidth != 0 || h.Link.LatencyNS != 0 || h.LaunchNS != 0
}

// Link is the host–NPU interconnect: a transfer of B bytes takes
// LatencyNS + B / Bandwidth.
type Link struct {
	Bandwidth Bandwidth `mapstructure:"bandwidth"`
	LatencyNS float64   `mapstructure:"latency_ns"`
}

// HasHost reports whether the machine describes a host CPU.
func (m *Machine) HasHost() bool { return m.Host.Cores > 0 }

// GlobalMemory is the chip's shared global memory (HBM).
type GlobalMemory struct {
	Capacity  Size      `mapstructure:"capacity"`
	Bandwidth Bandwidth `mapstructure:"bandwidth"` // total, shared by all cores
	// LatencyCycles is added to a GM access that misses the L2 (to every
	// access on a machine without an L2), in core cycles; a copy path's own
	// latency covers the rest (an L2 hit).
	LatencyCycles int `mapstructure:"latency_cycles"`
}

// L2Cache is the chip-level cache in front of GM. Capacity 0 disables it.
type L2Cache struct {
	Capacity  Size      `mapstructure:"capacity"`
	Bandwidth Bandwidth `mapstructure:"bandwidth"`  // total, shared by all cores
	LineBytes int       `mapstructure:"line_bytes"` // cache line (power of two): the unit of presence
	Ways      int       `mapstructure:"ways"`       // associativity (LRU), in tags
	// LinesPerTag is how many consecutive lines one directory entry (tag)
	// covers, each with its own valid bit (a power of two, 1..16; 0 means
	// 1: one tag a line). Replacement evicts a tag's lines together, and a
	// set holds Ways tags, so the sets are capacity / (line_bytes ×
	// lines_per_tag × ways). NVIDIA's L2 tags 128-byte lines of four
	// 32-byte sectors: line_bytes 32, lines_per_tag 4. The directory's
	// tags name at most 2^32 − 1 tags' worth of GM (mem.MaxSector):
	// gm.capacity must fit in that many (512 GiB in 128-byte tags).
	LinesPerTag int `mapstructure:"lines_per_tag"`
	// Partitions splits the L2 into that many halves/slices, each caching
	// its own share of addresses (A100/H100: 2; 0 or 1: one L2). A core
	// reaching a partition other than its own pays FarLatencyCycles more;
	// on a shared L2 addresses interleave finely over the partitions, so
	// every transfer reaches a far one and only whether there are several
	// matters, not how many.
	Partitions       int `mapstructure:"partitions"`
	FarLatencyCycles int `mapstructure:"far_latency_cycles"`
	// Private makes each partition the L2 of its own cores only (MI300X:
	// one L2 per XCD, cores interleaved over the partitions as the
	// dispatcher sends consecutive workgroups to consecutive XCDs):
	// capacity and bandwidth are split evenly, a line may be cached in
	// several partitions, and there is no far latency.
	Private bool `mapstructure:"private"`
	// Index is how an address picks its set: "modulo" (the default: the
	// sector number's low bits), "xor" (higher bits XOR-folded in) or
	// "ipoly" (the sector number modulo an irreducible polynomial over
	// GF(2): the IPOLY hash Accel-Sim models GPU L2s with; mem.PolySets).
	Index string `mapstructure:"index"`
}

// TagLines returns the lines one directory entry covers (LinesPerTag, 1
// when unset).
func (c L2Cache) TagLines() int { return max(c.LinesPerTag, 1) }

// TagLines returns the lines one directory entry covers (LinesPerTag, 1
// when unset).
func (l LLC) TagLines() int { return max(l.LinesPerTag, 1) }

// LLC is a memory-side last-level cache between the L2 and HBM (MI300X's
// Infinity Cache), shared by every core; it sees the L2's misses.
// Capacity 0 (or no llc: section) means none.
type LLC struct {
	Capacity  Size      `mapstructure:"capacity"`
	Bandwidth Bandwidth `mapstructure:"bandwidth"`
	LineBytes int       `mapstructure:"line_bytes"`
	Ways      int       `mapstructure:"ways"`
	// LinesPerTag is as L2Cache.LinesPerTag.
	LinesPerTag int `mapstructure:"lines_per_tag"`
	// LatencyCycles is what an L2 miss served by the LLC adds (an LLC
	// miss adds gm.latency_cycles instead).
	LatencyCycles int `mapstructure:"latency_cycles"`
	// Index is as L2Cache.Index.
	Index string `mapstructure:"index"`
}

// Size is a byte count; in files it accepts plain integers and the suffixes
// B, KiB, MiB, GiB (and KB, MB, GB as powers of ten).
type Size int64

// Frequency is a clock rate in Hz; in files it accepts plain numbers and the
// suffixes Hz, kHz, MHz, GHz.
type Frequency float64

// Bandwidth is bytes per second; in files it accepts plain numbers and the
// suffixes B/s, KB/s, MB/s, GB/s, TB/s (powers of ten) and KiB/s … GiB/s.
type Bandwidth float64
