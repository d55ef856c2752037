// Package machines describes simulated machines: the typed Machine
// description, the embedded machine files (YAML) and their loader, which
// validates every value and rejects unknown keys.
package machines

// Machine is a complete machine description. Field tags are the YAML keys;
// the dotted path of a field (e.g. core.buffers.L1) is what `--set
// machine.<path>=<value>` addresses.
type Machine struct {
	Name        string       `mapstructure:"name"`
	Description string       `mapstructure:"description"`
	Cores       int          `mapstructure:"cores"` // AI cores on the chip
	Core        Core         `mapstructure:"core"`
	GM          GlobalMemory `mapstructure:"gm"`
	L2          L2Cache      `mapstructure:"l2"`
	// Host is the host CPU and its link to the NPU (optional: a machine
	// without one has Host.Cores == 0 and cannot run host programs).
	Host Host `mapstructure:"host"`
}

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

// Link is the host–NPU interconnect: a transfer of B bytes takes
// LatencyNS + B / Bandwidth.
type Link struct {
	Bandwidth Bandwidth `mapstructure:"bandwidth"`
	LatencyNS float64   `mapstructure:"latency_ns"`
}

// HasHost reports whether the machine describes a host CPU.
func (m *Machine) HasHost() bool { return m.Host.Cores > 0 }

// Core describes one AI core.
type Core struct {
	Clock      Frequency `mapstructure:"clock"`       // core clock (e.g. 1GHz)
	QueueDepth int       `mapstructure:"queue_depth"` // entries per pipe issue queue
	FlagIDs    int       `mapstructure:"flag_ids"`    // event ids per (src, dst) pipe pair
	// FixPipe says whether the core has a FIXP pipe (L0C→UB/GM). Without
	// one (910A), L0C→UB copies run on the vector pipe.
	FixPipe bool    `mapstructure:"fixpipe"`
	Buffers Buffers `mapstructure:"buffers"`
	Cube    Cube    `mapstructure:"cube"`
	Vector  Vector  `mapstructure:"vector"`
	Scalar  Scalar  `mapstructure:"scalar"`
	Paths   Paths   `mapstructure:"paths"`
}

// Buffers holds the per-core on-chip buffer capacities.
type Buffers struct {
	L1  Size `mapstructure:"L1"`
	L0A Size `mapstructure:"L0A"`
	L0B Size `mapstructure:"L0B"`
	L0C Size `mapstructure:"L0C"`
	UB  Size `mapstructure:"UB"`
}

// Cube describes the matrix unit.
type Cube struct {
	// Numerics is the accumulation model, a preset name of package cube.
	Numerics string `mapstructure:"numerics"`
	// M and N are the output tile computed per step (16×16 on DaVinci).
	M int `mapstructure:"m"`
	N int `mapstructure:"n"`
	// KStepFP16 etc. are the reduction depth per cycle for each input type;
	// 0 means the cube does not support that input type.
	KStepFP16 int `mapstructure:"kstep_fp16"`
	KStepBF16 int `mapstructure:"kstep_bf16"`
	KStepFP32 int `mapstructure:"kstep_fp32"`
	KStepINT8 int `mapstructure:"kstep_int8"`
	// StartupCycles is the fixed per-MMAD latency added to the steps.
	StartupCycles int `mapstructure:"startup_cycles"`
}

// Vector describes the vector unit: an op over R repeats costs
// StartupCycles + R·CyclesPerRepeat cycles, one repeat covering
// BytesPerRepeat bytes of every operand.
type Vector struct {
	BytesPerRepeat  int     `mapstructure:"bytes_per_repeat"`
	CyclesPerRepeat float64 `mapstructure:"cycles_per_repeat"`
	StartupCycles   int     `mapstructure:"startup_cycles"`
}

// Scalar describes the scalar unit that issues instructions.
type Scalar struct {
	// IssueCycles is the cost of issuing one instruction to a pipe queue.
	IssueCycles int `mapstructure:"issue_cycles"`
}

// Path is one data path of a core: a copy of B bytes takes
// LatencyCycles + B / BytesPerCycle cycles when nothing else limits it.
type Path struct {
	BytesPerCycle float64 `mapstructure:"bytes_per_cycle"`
	LatencyCycles int     `mapstructure:"latency_cycles"`
}

// Paths holds the per-core data paths, named source_destination.
type Paths struct {
	GM_L1  Path `mapstructure:"GM_L1"`  // MTE2
	GM_UB  Path `mapstructure:"GM_UB"`  // MTE2
	L1_L0A Path `mapstructure:"L1_L0A"` // MTE1
	L1_L0B Path `mapstructure:"L1_L0B"` // MTE1
	L0C_UB Path `mapstructure:"L0C_UB"` // FIXP (or V on machines without FixPipe)
	L0C_GM Path `mapstructure:"L0C_GM"` // FIXP
	UB_GM  Path `mapstructure:"UB_GM"`  // MTE3
	UB_L1  Path `mapstructure:"UB_L1"`  // MTE3
}

// GlobalMemory is the chip's shared global memory (HBM).
type GlobalMemory struct {
	Capacity  Size      `mapstructure:"capacity"`
	Bandwidth Bandwidth `mapstructure:"bandwidth"` // total, shared by all cores
	// LatencyCycles is added to every GM access, in core cycles.
	LatencyCycles int `mapstructure:"latency_cycles"`
}

// L2Cache is the chip-level cache in front of GM. Capacity 0 disables it.
type L2Cache struct {
	Capacity  Size      `mapstructure:"capacity"`
	Bandwidth Bandwidth `mapstructure:"bandwidth"`  // total, shared by all cores
	LineBytes int       `mapstructure:"line_bytes"` // cache line (power of two)
	Ways      int       `mapstructure:"ways"`       // associativity (LRU)
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
