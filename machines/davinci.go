package machines

import (
	"fmt"

	"github.com/davinci-sim/davinci-sim/isa"
)

func init() {
	registerKind[DaVinciCore]("davinci", "Ascend DaVinci AI cores: scalar issue into pipes S, MTE2, MTE1, M, V, MTE3, FIXP; L1, L0A/B/C, UB")
}

// ClockHz implements CoreSpec.
func (c *DaVinciCore) ClockHz() Frequency { return c.Clock }

// MaxCubeDim bounds a cube's m, n and k-steps (16 × 16 × 16 FP16 on the
// 910A): a thousand times more keeps its peak, m·n·k MACs a cycle, far
// from overflowing.
const MaxCubeDim = 1 << 14

// Peaks implements CoreSpec: m × n × kstep MACs a cycle per input type.
func (c *DaVinciCore) Peaks() []Peak {
	var out []Peak
	for _, k := range []struct {
		name  string
		kstep int
	}{{"FP16", c.Cube.KStepFP16}, {"BF16", c.Cube.KStepBF16}, {"FP32", c.Cube.KStepFP32}, {"INT8", c.Cube.KStepINT8}} {
		if k.kstep > 0 {
			out = append(out, Peak{k.name, float64(float64(c.Clock)*float64(c.Cube.M*c.Cube.N*k.kstep)) * 2}) // ·2 compiles to p+p: round p
		}
	}
	return out
}

// problems implements CoreSpec: the constraints of a DaVinci core section
// (keys relative to core.).
func (c *DaVinciCore) problems() []problem {
	var ps []problem
	add := func(key, format string, args ...any) {
		ps = append(ps, problem{key, fmt.Sprintf(format, args...)})
	}
	if msg := CoreClockProblem(c.Clock); msg != "" {
		add("clock", "%s", msg)
	}
	if c.QueueDepth < 1 {
		add("queue_depth", "must be ≥ 1 (got %d)", c.QueueDepth)
	}
	if c.FlagIDs < 1 || c.FlagIDs > MaxFlagIDs {
		add("flag_ids", "must be in 1..%d (got %d)", MaxFlagIDs, c.FlagIDs)
	}
	for _, b := range []struct {
		key  string
		size Size
	}{
		{"L1", c.Buffers.L1}, {"L0A", c.Buffers.L0A}, {"L0B", c.Buffers.L0B},
		{"L0C", c.Buffers.L0C}, {"UB", c.Buffers.UB},
	} {
		if b.size <= 0 || b.size%BufferAlign != 0 {
			add("buffers."+b.key, "must be > 0 and a multiple of %d bytes (got %v)", BufferAlign, b.size)
		}
	}
	cu := &c.Cube
	if msg := numericsProblem(cu.Numerics, "ascend-910a"); msg != "" {
		add("cube.numerics", "%s", msg)
	}
	if cu.M <= 0 || cu.M > MaxCubeDim {
		add("cube.m", "must be in 1..%d (got %d)", MaxCubeDim, cu.M)
	}
	if cu.N <= 0 || cu.N > MaxCubeDim {
		add("cube.n", "must be in 1..%d (got %d)", MaxCubeDim, cu.N)
	}
	if cu.KStepFP16 <= 0 || cu.KStepFP16 > MaxCubeDim {
		add("cube.kstep_fp16", "must be in 1..%d (got %d)", MaxCubeDim, cu.KStepFP16)
	}
	if msg := cyclesProblem(float64(cu.StartupCycles)); msg != "" {
		add("cube.startup_cycles", "%s", msg)
	}
	for _, k := range []struct {
		key string
		v   int
	}{
		{"kstep_bf16", cu.KStepBF16}, {"kstep_fp32", cu.KStepFP32}, {"kstep_int8", cu.KStepINT8},
	} {
		if k.v < 0 || k.v > MaxCubeDim {
			add("cube."+k.key, "must be in 0..%d (0 = unsupported) (got %d)", MaxCubeDim, k.v)
		}
	}
	if c.Vector.BytesPerRepeat <= 0 || c.Vector.BytesPerRepeat%4 != 0 || c.Vector.BytesPerRepeat > 1<<20 {
		add("vector.bytes_per_repeat", "must be a positive multiple of 4 (whole elements of every type) up to 1MiB (got %d)", c.Vector.BytesPerRepeat)
	}
	if r := c.Vector.CyclesPerRepeat; !(r >= minCyclesPerRepeat && r <= MaxCycles) {
		// (1e-300 ran as a unit of one cycle an instruction, whatever its
		// repeats: an instruction takes a whole cycle at least.)
		add("vector.cycles_per_repeat", "must be in [%g, %g] cycles (got %v)", minCyclesPerRepeat, MaxCycles, r)
	}
	for _, k := range []struct {
		key string
		v   int
	}{{"vector.startup_cycles", c.Vector.StartupCycles}, {"scalar.issue_cycles", c.Scalar.IssueCycles}} {
		if msg := cyclesProblem(float64(k.v)); msg != "" {
			add(k.key, "%s", msg)
		}
	}
	for _, p := range c.Paths.All() {
		if msg := pathRateProblem(p.Path.BytesPerCycle); msg != "" {
			add("paths."+p.Name+".bytes_per_cycle", "%s", msg)
		}
		if msg := cyclesProblem(float64(p.Path.LatencyCycles)); msg != "" {
			add("paths."+p.Name+".latency_cycles", "%s", msg)
		}
	}
	return ps
}

// minCyclesPerRepeat is the least vector.cycles_per_repeat: 64 repeats of
// bytes_per_repeat a cycle, far beyond any vector unit (the 910A's 2.07).
const minCyclesPerRepeat = 1.0 / 64

// DaVinciCore is the core: section of a davinci machine: one Ascend AI core.
type DaVinciCore struct {
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

// VectorRepeatBytes implements CoreSpec: the vector unit's bytes per
// repeat.
func (c *DaVinciCore) VectorRepeatBytes() int { return c.Vector.BytesPerRepeat }

// Geometry implements CoreSpec. Lanes and buffers are indexed as package
// isa numbers pipes and buffers (isa.Pipe, isa.Buffer); GM is the global
// buffer. L0C→UB runs on FIXP where the core has a FixPipe, else on V.
func (c *DaVinciCore) Geometry() *Geometry {
	g := &Geometry{VectorRepeatBytes: c.VectorRepeatBytes()}
	for p := isa.Pipe(0); p < isa.NumPipes; p++ {
		g.Lanes = append(g.Lanes, p.String())
	}
	caps := [isa.NumBuffers]Size{0, c.Buffers.L1, c.Buffers.L0A, c.Buffers.L0B, c.Buffers.L0C, c.Buffers.UB}
	for b := isa.GM; b < isa.NumBuffers; b++ {
		g.Buffers = append(g.Buffers, BufferSpec{Name: b.String(), Capacity: int64(caps[b]), Global: b == isa.GM})
	}
	l0cUB := isa.V
	if c.FixPipe {
		l0cUB = isa.FIXP
	}
	for _, p := range []struct {
		src, dst isa.Buffer
		lane     isa.Pipe
		path     Path
	}{
		{isa.GM, isa.L1, isa.MTE2, c.Paths.GM_L1}, {isa.GM, isa.UB, isa.MTE2, c.Paths.GM_UB},
		{isa.L1, isa.L0A, isa.MTE1, c.Paths.L1_L0A}, {isa.L1, isa.L0B, isa.MTE1, c.Paths.L1_L0B},
		{isa.L0C, isa.UB, l0cUB, c.Paths.L0C_UB}, {isa.L0C, isa.GM, isa.FIXP, c.Paths.L0C_GM},
		{isa.UB, isa.GM, isa.MTE3, c.Paths.UB_GM}, {isa.UB, isa.L1, isa.MTE3, c.Paths.UB_L1},
	} {
		g.Paths = append(g.Paths, PathSpec{Name: p.src.String() + "_" + p.dst.String(), Src: int(p.src), Dst: int(p.dst),
			Lane: int(p.lane), BytesPerCycle: p.path.BytesPerCycle, LatencyCycles: p.path.LatencyCycles})
	}
	return g
}

// NumericsPreset returns the cube's numerics preset (package cube).
func (c *DaVinciCore) NumericsPreset() string { return c.Cube.Numerics }
