// Package arch assembles simulated machines: the DaVinci AI core (a scalar
// unit issuing in program order into bounded per-pipe queues; pipes that
// execute in order and concurrently; set/wait flags and barriers as on
// hardware) and the chip (N cores sharing global memory with a total
// bandwidth), and binds a program to them.
package arch

import (
	"fmt"
	"math"

	"github.com/davinci-sim/davinci-sim/cube"
	"github.com/davinci-sim/davinci-sim/isa"
	"github.com/davinci-sim/davinci-sim/machines"
	"github.com/davinci-sim/davinci-sim/mem"
	"github.com/davinci-sim/davinci-sim/sim"
)

// Mode selects whether a run moves real data.
type Mode uint8

const (
	// Functional moves real bytes and computes every result bit-accurately.
	Functional Mode = iota
	// Timing keeps every event but no data; memory use is independent of
	// problem size.
	Timing
)

// Options configure a Chip.
type Options struct {
	Mode Mode
	// Observer, if not nil, watches the run (traces, visualizer).
	Observer Observer
	// Progress, if not nil, is called every ProgressEvery events.
	Progress      func(now sim.Time, events uint64)
	ProgressEvery uint64
}

// Chip is a set of AI cores sharing global memory.
type Chip struct {
	M     *machines.Machine
	geom  *machines.Geometry
	paths [isa.NumBuffers][isa.NumBuffers]int // 1 + index into geom.Paths of the path src→dst, 0: none
	opts  Options
	eng   *sim.Engine
	clock sim.Clock
	gm    *mem.GM
	gmBW  *mem.Channel // HBM bandwidth shared by all cores
	l2BW  *mem.Channel // L2 bandwidth (nil without an L2)
	l2    *mem.L2
	cube  cube.Model
	cores []*Core

	gmRead, gmWrite int64
	mmadFlops       float64
	failed          error

	host *Host // attached host program (nil: none)

	flagObs Observer // opts.Observer unless it ignores flags (FlagFilter)

	participants int // cores running the program (for sync_all)
	syncArrived  int
	syncGen      int
}

// NewChip builds the chip of machine m.
func NewChip(m *machines.Machine, opts Options) (*Chip, error) {
	if m.DaVinci() == nil {
		return nil, fmt.Errorf("machine %s: kind %s has no core model yet", m.Name, m.Kind)
	}
	clk, err := sim.NewClock(float64(m.DaVinci().Clock))
	if err != nil {
		return nil, fmt.Errorf("machine %s: core.clock: %w", m.Name, err)
	}
	model, err := cube.Preset(m.DaVinci().Cube.Numerics)
	if err != nil {
		return nil, fmt.Errorf("machine %s: core.cube.numerics: %w", m.Name, err)
	}
	c := &Chip{M: m, geom: m.Geometry(), opts: opts, eng: sim.NewEngine(), clock: clk, cube: model}
	if opts.Mode == Functional {
		c.gm = mem.NewGM(int64(m.GM.Capacity))
	}
	for i, p := range c.geom.Paths {
		c.paths[p.Src][p.Dst] = i + 1
	}
	c.gmBW = mem.NewChannel(c.eng, float64(m.GM.Bandwidth))
	if opts.Observer != nil {
		obs := opts.Observer
		if ff, ok := obs.(FlagFilter); !ok || !ff.IgnoresFlags() {
			c.flagObs = obs
		}
		c.gmBW.Observe(func(now sim.Time, bps float64) { obs.Bandwidth(now, bps) })
	}
	if l2 := mem.NewL2(int64(m.L2.Capacity), m.L2.LineBytes, m.L2.Ways); l2 != nil {
		c.l2 = l2
		c.l2BW = mem.NewChannel(c.eng, float64(m.L2.Bandwidth))
	}
	for i := 0; i < m.Cores; i++ {
		c.cores = append(c.cores, newCore(c, i))
	}
	return c, nil
}

// GM returns global memory (nil in timing mode) so that callers can place
// inputs before a run and read results after it.
func (c *Chip) GM() *mem.GM { return c.gm }

// Clock returns the core clock.
func (c *Chip) Clock() sim.Clock { return c.clock }

// Cube returns the cube numerics model in use.
func (c *Chip) Cube() cube.Model { return c.cube }

// Engine returns the event engine (for hooks and progress).
func (c *Chip) Engine() *sim.Engine { return c.eng }

// Geometry returns the machine's resolved geometry (lanes, buffers, paths).
func (c *Chip) Geometry() *machines.Geometry { return c.geom }

// Limits returns the static-check limits of this machine.
func (c *Chip) Limits() isa.Limits {
	var lim isa.Limits
	for i, b := range c.geom.Buffers {
		lim.Capacity[i] = b.Capacity
	}
	lim.FlagIDs = c.M.DaVinci().FlagIDs
	lim.HasFIXP = c.M.DaVinci().FixPipe
	lim.CubeIn = c.M.DaVinci().Cube.InputTypes()
	return lim
}

// Run executes p (statically checked first) and returns its statistics. A
// deadlock is returned as *sim.DeadlockError; an execution fault (e.g. an
// access outside a buffer) as an error naming core, line and instruction.
func (c *Chip) Run(p isa.Program) (*Stats, error) {
	if len(p.Cores) > len(c.cores) {
		return nil, fmt.Errorf("program uses %d cores; machine %s has %d", len(p.Cores), c.M.Name, len(c.cores))
	}
	if !p.Generated {
		if err := isa.Check(p, c.Limits()); err != nil {
			return nil, err
		}
	}
	if c.opts.Progress != nil {
		every := c.opts.ProgressEvery
		if every == 0 {
			every = 1 << 20
		}
		c.eng.OnProgress(every, c.opts.Progress)
	}
	for i, s := range p.Cores {
		if s != nil {
			c.participants++
			c.cores[i].load(s)
		}
	}
	defer func() {
		for _, core := range c.cores {
			core.close()
		}
	}()
	if c.host != nil {
		c.host.begin(c.eng.Now())
	}
	err := c.eng.Run()
	if c.failed != nil {
		return nil, c.failed
	}
	if err != nil {
		return nil, err
	}
	return c.stats(), nil
}

// fail stops the run with err (first error wins).
func (c *Chip) fail(err error) {
	if c.failed == nil {
		c.failed = err
		c.eng.Stop(err)
	}
}

func (c *Chip) stats() *Stats {
	end := c.eng.Now()
	for _, core := range c.cores {
		if core.finish > end {
			end = core.finish
		}
	}
	st := &Stats{Geometry: c.geom, Time: end, Cycles: c.clock.CeilCycles(end), GMReadBytes: c.gmRead, GMWriteBytes: c.gmWrite,
		GMUtilisation: c.gmBW.MeanUtilisation(end), Events: c.eng.Events(), MMADFlops: c.mmadFlops}
	if c.l2 != nil {
		st.L2HitBytes, st.L2MissBytes = c.l2.HitBytes, c.l2.MissBytes
	}
	for _, core := range c.cores {
		st.Cores = append(st.Cores, core.finalize(end))
	}
	return st
}

// startGM starts the GM side of a copy of n bytes for pipe p of core: reads
// are split into the bytes the L2 holds (served at L2 bandwidth) and the rest
// (HBM); writes go through to HBM and allocate in the L2. Each part is capped
// by its share of the path bandwidth so an uncontended copy takes n / path.
func (c *Chip) startGM(core *Core, p *pipe, in *isa.Instr, n int64, capBps float64) {
	read := in.Src.Buf == isa.GM
	if read {
		c.gmRead += n
	} else {
		c.gmWrite += n
	}
	hit := int64(0)
	if c.l2 != nil {
		hit = c.l2Access(in)
		if !read {
			hit = 0 // write-through: every byte reaches HBM
		}
	}
	miss := n - hit
	tag := int64(p.id)
	if hit > 0 {
		p.xfer++
	}
	if miss > 0 || hit == 0 {
		p.xfer++
	}
	if hit > 0 {
		c.l2BW.Start(hit, capBps*float64(hit)/float64(n), core, tag)
	}
	if miss > 0 || hit == 0 {
		share := capBps
		if hit > 0 {
			share = capBps * float64(miss) / float64(n)
		}
		c.gmBW.Start(miss, share, core, tag)
	}
}

// l2Access looks up (and allocates) the GM bytes an instruction touches in
// the L2 and returns the bytes that hit.
func (c *Chip) l2Access(in *isa.Instr) int64 {
	switch in.Op {
	case isa.OpCopy:
		if in.Dst.Buf == isa.GM {
			h, _ := c.l2.Access2D(in.Dst.Addr, in.NBurst, in.BurstLen, in.DstStride)
			return h
		}
		h, _ := c.l2.Access2D(in.Src.Addr, in.NBurst, in.BurstLen, in.SrcStride)
		return h
	case isa.OpL0CCopy:
		h, _ := c.l2.Access2D(in.Dst.Addr, in.Rows, int64(in.Cols*in.Out.Bytes()), in.RowStride)
		return h
	}
	return 0
}

// ceilDiv returns ceil(a/b) for positive b.
func ceilDiv(a, b int64) int64 { return (a + b - 1) / b }

// cyclesFor returns the cycles to move n bytes at bpc bytes per cycle.
func cyclesFor(n int64, bpc float64) int64 {
	return int64(math.Ceil(float64(n) / bpc))
}
