// Package arch assembles simulated machines: the kind-neutral chip (N core
// models sharing global memory with a total bandwidth, an L2, kernel
// launches from a host, chip-wide barriers, statistics) and the registry of
// core models, one package per machine kind below it (arch/davinci: the
// Ascend AI core), and binds a program to them.
package arch

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/davinci-sim/davinci-sim/badinput"
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
	// FastForward, if not nil, skips repeated waves of kernel grids
	// (timing-only runs without an observer; see FastForward).
	FastForward *FastForward
	// Engine, if not nil, is an event engine the chip shares with other
	// chips and components (a cluster of NPUs and its network): call Start,
	// run the engine, then Collect, instead of Run.
	Engine *sim.Engine
	// KeyOrigin, if not nil, says where the value of a machine key (as
	// the machine file names it: "gm.bandwidth") was given, for messages
	// about it — "--set machine.gm.bandwidth=1e-300: key \"gm.bandwidth\"";
	// nil: "machine NAME: key \"KEY\"".
	KeyOrigin func(key string) string
	// Label, if not empty, names the chip in what its components say when
	// a run deadlocks ("rank 3: core 0: pipe M: …"): one of many chips on
	// a shared Engine.
	Label string
	// Ahead, if not nil, generates the chip's streams ahead of its cores
	// (chips on a shared Engine share one); nil: the chip makes its own
	// (NewAhead: none where it is off or there is one processor).
	// NoReadAhead: none — each stream is generated as its core reads it
	// (the same results; for chips simulated several at once).
	Ahead       *Ahead
	NoReadAhead bool
	// RunBound, when > 0, is the run's whole bound on its host memory
	// (--max-memory, or its default): the chip's model may take by its
	// estimate (Footprint) what it leaves beside RunBeside bytes of the
	// run's own (its base and data; none where they pass it), where that
	// is below MaxModelBytes. A refusal says so, and is marked
	// badinput.HostMemory with RunBound — the bound a later run compares
	// its own with —, not with the room.
	RunBound int64
	// RunBeside is the bytes the run holds beside its chip model(s) by
	// its estimate, counted against RunBound before the model (see
	// RunBound); RunBesideWhat names them ("": the run's data and base).
	RunBeside     float64
	RunBesideWhat string
	// RunBoundDefault says RunBound is the host's default bound (the run
	// gave no --max-memory): a refusal says "the default --max-memory".
	RunBoundDefault bool
	// GMSpan, when > 0, is the bytes of global memory from address 0 the
	// program's tensors occupy (its highest address + 1), as the program
	// laid them out before the run: the L2 and LLC directories' where
	// indexes are sized for it instead of the whole of gm.capacity, and
	// so counted (FootprintSpan; MI300X's nine directories took 1.1 GiB
	// by gm.capacity, ~9 MiB for a 4096³ HGEMM). An access beyond it is
	// looked up without the index: the same results, a little slower.
	// 0: the whole memory.
	GMSpan int64
}

// RegisterWaiter registers a component of the chip (a core, its host, its
// grid scheduler) with the engine's deadlock check, its reasons prefixed
// with the chip's Label.
func (c *Chip) RegisterWaiter(w sim.Waiter) {
	if w == nil || c.opts.Label == "" {
		c.eng.Register(w)
		return
	}
	c.eng.Register(labelledWaiter{w, c.opts.Label})
}

// labelledWaiter is a chip component's sim.Waiter whose reasons name the
// chip; it passes sim.Flusher on.
type labelledWaiter struct {
	w     sim.Waiter
	label string
}

func (l labelledWaiter) Blocked() (bool, string) {
	ok, why := l.w.Blocked()
	if ok && why == "" {
		why = fmt.Sprintf("%T: blocked (no reason given)", l.w) // as the engine says it
	}
	if ok {
		why = l.label + ": " + why
	}
	return ok, why
}

func (l labelledWaiter) Flush() bool {
	f, ok := l.w.(sim.Flusher)
	return ok && f.Flush()
}

// keyOrigin says where the value of machine key was given (Options.KeyOrigin).
func (c *Chip) keyOrigin(key string) string { return keyOrigin(c.opts, c.M, key) }

// keyOrigin says where the value of m's key was given: opts.KeyOrigin's
// file line or --set, else the machine and key.
func keyOrigin(opts Options, m *machines.Machine, key string) string {
	if opts.KeyOrigin != nil {
		return opts.KeyOrigin(key)
	}
	return fmt.Sprintf("machine %s: key %q", m.Name, key)
}

// Chip is a set of cores of one machine kind sharing global memory.
type Chip struct {
	M     *machines.Machine
	geom  *machines.Geometry
	kind  *Kind
	opts  Options
	eng   *sim.Engine
	clock sim.Clock
	gm    *mem.GM
	gmBW  *mem.Channel   // HBM bandwidth shared by all cores
	l2s   []*mem.L2      // the L2 (one entry), or its private partitions (nil without an L2)
	l2BWs []*mem.Channel // their bandwidths
	llc   *mem.L2        // the memory-side cache in front of HBM (nil: none)
	llcBW *mem.Channel
	cube  cube.Model
	cores []CoreModel

	// wholeLines makes a read that misses pay for the whole lines the L2
	// fetches (mem.L2.Read2D): the kinds that say so (Kind.WholeLineFetch:
	// the GPU kinds, whose files give the L2's fetch granularity, NVIDIA's
	// 32-byte sectors, AMD's 128-byte lines).
	// The DaVinci files' lines are a directory granularity chosen for the
	// simulator's speed (the 910A's 512 bytes: "same TFLOP/s as 128" —
	// with a miss paying the bytes it asks for): there a miss pays its
	// bytes, as before.
	wholeLines bool

	gmRead, gmWrite int64
	traffic         Traffic
	mmadFlops       float64
	reached         sim.Time // a deadlocked run: the latest time a core acted ahead of the engine (aheadOfEngine)
	failed          error
	energy          *energyMeter // prices work for an EnergyObserver (energy.go); nil: none

	host  *Host       // attached host program (nil: none)
	grids *gridRunner // kernel grids of the program (nil: none)

	flagObs  Observer // opts.Observer unless it ignores flags (FlagFilter)
	hostOnly bool     // NewHostChip: no core models
	// footprint is NewChip's estimate of the chip's host memory (bytes),
	// to which admitted grids add their data (gridRunner.admitStorage).
	footprint float64

	participants int // cores running the program (for sync_all)
	syncArrived  int // cores waiting at the current barrier
	syncGen      int // generation of the current barrier
	// syncs are the barriers' releases (time, engine events), and
	// phaseNames the program's names of the phases they separate
	// (isa.Program.Phases): Kernels.
	syncs       []syncRelease
	phaseNames  []string
	syncWaiting []bool // per core: arrived at the current barrier
}

// NewChip builds the chip of machine m with the core model of its kind.
func NewChip(m *machines.Machine, opts Options) (*Chip, error) {
	kind, err := kindFor(m.Kind)
	if err != nil {
		return nil, fmt.Errorf("machine %s: %w", m.Name, err)
	}
	clk, err := sim.NewClock(float64(m.Clock()))
	if err != nil {
		return nil, fmt.Errorf("machine %s: core.clock: %w", m.Name, err)
	}
	footprint, err := checkFootprint(m, kind, opts)
	if err != nil {
		return nil, err
	}
	if !kind.Grids {
		opts.FastForward = nil // nothing to skip (FastForwardSkips)
	}
	if ff := opts.FastForward; ff != nil {
		switch {
		case ff.Measure < 2 || ff.Tail < 2 || !(ff.Tolerance >= 0) || !(ff.Mix >= 0) || !(ff.Hits >= 0) || !(ff.MinGain >= 0) || !(ff.WarmUp >= 0 && ff.WarmUp < 1):
			return nil, fmt.Errorf("fast-forward: measure %d waves (at least 2), tail %d (at least 2), tolerance %v, mix %v, hits %v and min gain %v (at least 0), warm-up %v (in [0, 1))", ff.Measure, ff.Tail, ff.Tolerance, ff.Mix, ff.Hits, ff.MinGain, ff.WarmUp)
		case opts.Mode != Timing:
			return nil, errors.New("fast-forward skips CTAs, whose results a functional run computes: use it with numerics off or sampled")
		case opts.Observer != nil:
			return nil, ErrFastForwardObserved
		}
	}
	var model cube.Model
	if name := m.NumericsPreset(); name != "" {
		if model, err = cube.Preset(name); err != nil {
			return nil, fmt.Errorf("%s: %w", keyOrigin(opts, m, m.NumericsKey()), err)
		}
	}
	if opts.NoReadAhead {
		opts.Ahead = nil
	} else if opts.Ahead == nil {
		opts.Ahead = NewAhead() // (nil: none)
	}
	eng := opts.Engine
	if eng == nil {
		eng = sim.NewEngine()
	} else if ff := opts.FastForward; ff != nil {
		return nil, errors.New("fast-forward: not on a shared engine (a cluster run)")
	}
	c := &Chip{M: m, geom: m.Geometry(), kind: kind, opts: opts, eng: eng, clock: clk, cube: model,
		syncWaiting: make([]bool, m.Cores), footprint: footprint}
	if opts.Mode == Functional {
		c.gm = mem.NewGM(int64(m.GM.Capacity))
	}
	c.gmBW = mem.NewChannel(c.eng, float64(m.GM.Bandwidth))
	c.gmBW.SetName(fmt.Sprintf("%s (%v)", c.keyOrigin("gm.bandwidth"), m.GM.Bandwidth))
	if opts.Observer != nil {
		obs := opts.Observer
		if ff, ok := obs.(FlagFilter); !ok || !ff.IgnoresFlags() {
			c.flagObs = obs
		}
		c.gmBW.Observe(func(now sim.Time, bps float64) { obs.Bandwidth(now, bps) })
		c.energy = newEnergyMeter(c)
	}
	c.wholeLines = kind.WholeLineFetch
	parts := 1
	if m.L2.Private && m.L2.Partitions > 1 {
		parts = m.L2.Partitions
	}
	// The where indexes cover the program's span (used: grown to it at
	// once) or the whole memory (grown by doubling as it is used).
	span := indexSpan(m, opts.GMSpan)
	bound := (*mem.L2).BoundIndex
	if span == opts.GMSpan {
		bound = (*mem.L2).SpanIndex
	}
	for range parts {
		if l2 := mem.NewL2(int64(m.L2.Capacity)/int64(parts), m.L2.LineBytes, m.L2.TagLines(), m.L2.Ways); l2 != nil {
			indexSets(l2, m.L2.Index)
			bound(l2, span)
			c.l2s = append(c.l2s, l2)
			bw := mem.NewChannel(c.eng, float64(m.L2.Bandwidth)/float64(parts))
			bw.SetName(fmt.Sprintf("%s (%v)", c.keyOrigin("l2.bandwidth"), m.L2.Bandwidth))
			c.l2BWs = append(c.l2BWs, bw)
		}
	}
	if llc := mem.NewL2(int64(m.LLC.Capacity), m.LLC.LineBytes, m.LLC.TagLines(), m.LLC.Ways); llc != nil && len(c.l2s) > 0 {
		indexSets(llc, m.LLC.Index)
		bound(llc, span)
		c.llc = llc
		c.llcBW = mem.NewChannel(c.eng, float64(m.LLC.Bandwidth))
		c.llcBW.SetName(fmt.Sprintf("%s (%v)", c.keyOrigin("llc.bandwidth"), m.LLC.Bandwidth))
	}
	cores, err := kind.NewCores(c)
	if err != nil {
		return nil, fmt.Errorf("machine %s: %w", m.Name, err)
	}
	if len(cores) != m.Cores {
		return nil, fmt.Errorf("machine %s: kind %s built %d cores, want %d", m.Name, m.Kind, len(cores), m.Cores)
	}
	c.cores = cores
	return c, nil
}

// NewHostChip returns a chip of machine m without core models, caches or
// memory, on engine eng: only a Host to run kernels launched with
// LaunchTimed (a cluster rank whose kernels are timed apart), named label
// in a deadlock's reasons (Options.Label), its messages naming a machine
// key's origin by keyOrigin (Options.KeyOrigin; nil: the machine's key).
// Start and the engine run it; Collect returns only the time.
func NewHostChip(m *machines.Machine, eng *sim.Engine, label string, keyOrigin func(key string) string) (*Chip, error) {
	if !m.HasHost() {
		return nil, fmt.Errorf("machine %s has no host section (host.cores = 0)", m.Name)
	}
	clk, err := sim.NewClock(float64(m.Clock()))
	if err != nil {
		return nil, fmt.Errorf("machine %s: core.clock: %w", m.Name, err)
	}
	return &Chip{M: m, geom: m.Geometry(), opts: Options{Mode: Timing, Engine: eng, Label: label, KeyOrigin: keyOrigin}, eng: eng, clock: clk,
		cores: make([]CoreModel, m.Cores), syncWaiting: make([]bool, m.Cores), hostOnly: true}, nil
}

// Footprint returns the host memory, in bytes, NewChip estimates a chip of
// machine m takes in mode (checked against MaxModelBytes; a run of many
// chips checks their sum), for a program that may use the whole of its
// global memory (FootprintSpan).
func Footprint(m *machines.Machine, mode Mode) (float64, error) {
	return FootprintSpan(m, mode, 0)
}

// FootprintSpan is Footprint for a program whose tensors occupy the first
// span bytes of global memory (Options.GMSpan; 0: the whole memory): its
// caches' where indexes counted for the span.
func FootprintSpan(m *machines.Machine, mode Mode, span int64) (float64, error) {
	kind, err := kindFor(m.Kind)
	if err != nil {
		return 0, fmt.Errorf("machine %s: %w", m.Name, err)
	}
	total, _, _ := footprint(m, kind, mode, span)
	return total, nil
}

// indexSpan returns the global memory the where indexes of a chip of
// machine m cover: span (Options.GMSpan) where it is given and within
// gm.capacity, else gm.capacity.
func indexSpan(m *machines.Machine, span int64) int64 {
	if gm := int64(m.GM.Capacity); span <= 0 || span > gm {
		return gm
	}
	return span
}

// footprint returns a chip's bytes in all, per core, and of its L2 and
// LLC directories (tags, and where indexes for span: Options.GMSpan).
func footprint(m *machines.Machine, kind *Kind, mode Mode, span int64) (total float64, per int64, l2 float64) {
	per = int64(DefaultCoreBytes)
	if kind.CoreBytes != nil {
		per = kind.CoreBytes(m, mode)
	}
	// Tags, and each directory's where index (one per private partition).
	parts := int64(1)
	if m.L2.Private && m.L2.Partitions > 1 {
		parts = int64(m.L2.Partitions)
	}
	gm := indexSpan(m, span)
	l2 = float64(mem.L2Footprint(int64(m.L2.Capacity), m.L2.LineBytes, m.L2.TagLines(), m.L2.Ways)) +
		float64(parts*mem.IndexFootprint(int64(m.L2.Capacity)/parts, gm, m.L2.LineBytes, m.L2.TagLines())) +
		float64(mem.L2Footprint(int64(m.LLC.Capacity), m.LLC.LineBytes, m.LLC.TagLines(), m.LLC.Ways)) +
		float64(mem.IndexFootprint(int64(m.LLC.Capacity), gm, m.LLC.LineBytes, m.LLC.TagLines()))
	return float64(float64(m.Cores)*float64(per)) + l2, per, l2
}

// roughBytes writes an estimate of b bytes: whole GiB, a tenth of one
// below 10 GiB, whole MiB below a GiB, or whole KiB below a MiB.
func roughBytes(b float64) string {
	switch {
	case b < 1<<20:
		return fmt.Sprintf("%.0f KiB", b/(1<<10))
	case b < 1<<30:
		return fmt.Sprintf("%.0f MiB", b/(1<<20))
	case b < 10<<30:
		return fmt.Sprintf("%.1f GiB", b/(1<<30))
	}
	return fmt.Sprintf("%.0f GiB", b/(1<<30))
}

// limitBytes writes a bound of b bytes, never rounded up: whole GiB or MiB
// where it is one, else MiB to a hundredth, rounded down.
func limitBytes(b int64) string {
	switch {
	case b%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", b>>30)
	case b%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", b>>20)
	}
	return fmt.Sprintf("%.2f MiB", math.Floor(float64(b)/(1<<20)*100)/100)
}

// checkFootprint returns the host memory a model of machine m takes in
// mode for a program of span bytes of global memory (Options.GMSpan),
// refusing it above MaxModelBytes, or above the room the run's bound
// leaves it where that is smaller (footprintBound).
func checkFootprint(m *machines.Machine, kind *Kind, opts Options) (float64, error) {
	bound, above := footprintBound(opts)
	total, per, l2 := footprint(m, kind, opts.Mode, opts.GMSpan)
	if total > float64(bound) {
		return 0, hostRefusal(fmt.Errorf("machine %s: simulating it would take about %s of host memory (%d cores × %.0f KiB, L2 and LLC directories %.0f MiB), above %s: check keys %s",
			m.Name, roughBytes(total), m.Cores, float64(per)/(1<<10), l2/(1<<20), above, kind.footprintKeys()), bound, opts)
	}
	return total, nil
}

// modelRoom returns what the run's bound leaves the chip's model beside
// the run's own bytes (Options.RunBound less RunBeside: ≤ 0, none), and
// whether the run's bound, not MaxModelBytes, bounds the model.
func modelRoom(opts Options) (int64, bool) {
	if opts.RunBound <= 0 {
		return 0, false
	}
	room := int64(max(float64(opts.RunBound)-opts.RunBeside, -1<<62)) // (integer bytes: exact below 2^53)
	return room, room < MaxModelBytes
}

// footprintBound returns the bound on a model's host memory with opts,
// MaxModelBytes or the room the run's bound leaves it where that is
// smaller (modelRoom), and the words for a refusal above it: "the limit
// of 16 GiB", or where the room comes from — "the 12 MiB that
// --max-memory 64MiB leaves beside the run's data and base (about 52
// MiB)".
func footprintBound(opts Options) (int64, string) {
	room, bounded := modelRoom(opts)
	if !bounded {
		return MaxModelBytes, "the limit of " + limitBytes(MaxModelBytes)
	}
	what := opts.RunBesideWhat
	if what == "" {
		what = "the run's data and base"
	}
	flag := "--max-memory " + flagBytes(opts.RunBound)
	if opts.RunBoundDefault {
		flag = "the default --max-memory, " + flagBytes(opts.RunBound) + ","
	}
	beside := fmt.Sprintf("%s leaves beside %s (about %s", flag, what, roughBytes(opts.RunBeside))
	if room <= 0 {
		return room, "what " + beside + ", so nothing)"
	}
	return room, "the " + limitBytes(room) + " that " + beside + ")"
}

// flagBytes writes a bound of b bytes as --max-memory takes it, never
// rounded up: "20MiB", "1.50MiB" (limitBytes without its space).
func flagBytes(b int64) string { return strings.ReplaceAll(limitBytes(b), " ", "") }

// hostRefusal marks err, a refusal of a model past bound
// (footprintBound, Chip.dataBound), as one for host memory
// (badinput.HostMemory) where the run's bound was the one passed — a
// larger host or bound may run it —, not MaxModelBytes, which is the same
// on every host: with the run's whole bound (Options.RunBound).
func hostRefusal(err error, bound int64, opts Options) error {
	if bound >= MaxModelBytes || opts.RunBound <= 0 {
		return err
	}
	return badinput.HostMemory(err, opts.RunBound)
}

// dataBound returns the chip's bound on its model with what a functional
// run's CTAs keep in it (gridRunner.admitStorage), and the words for a
// refusal above it: the run's whole bound (Options.RunBound) — the CTAs'
// data is the run's data, which the run's own estimate beside the model
// (RunBeside: its data's bytes per element measured by peak RSS, and its
// base) holds —, MaxModelBytes where that is smaller or none is given.
func (c *Chip) dataBound() (int64, string) {
	if b := c.opts.RunBound; b > 0 && b < MaxModelBytes {
		return b, "the limit of " + limitBytes(b) + ", the run's bound (--max-memory)"
	}
	return MaxModelBytes, "the limit of " + limitBytes(MaxModelBytes)
}

// footprintKeys names the machine-file keys the kind's host memory grows
// with (Kind.FootprintKeys, DaVinci's by default).
func (k *Kind) footprintKeys() string {
	if k.FootprintKeys == "" {
		return `"cores", "core.queue_depth", "core.buffers", "l2.capacity" and "llc.capacity"`
	}
	return k.FootprintKeys
}

// GMReach returns how far the run's global-memory accesses reached: the
// bytes from address 0 to the end of the highest sector its L2 and LLC
// directories allocated, as far as their where indexes cover (gm.capacity
// or Options.GMSpan; 0 without an L2). A program's GMSpan is checked by
// it (tests).
func (c *Chip) GMReach() int64 {
	var r int64
	for _, l2 := range c.l2s {
		r = max(r, l2.Reach())
	}
	if c.llc != nil {
		r = max(r, c.llc.Reach())
	}
	return r
}

// GM returns global memory (nil in timing mode) so that callers can place
// inputs before a run and read results after it.
func (c *Chip) GM() *mem.GM { return c.gm }

// SetGMReserved takes bytesPerSecond of the HBM's bandwidth, from now
// until changed, for traffic another model moves (a network transfer
// reading or writing this chip's memory); the cores share the rest. A
// chip without core models (NewHostChip) has no HBM model: nothing to do.
func (c *Chip) SetGMReserved(bytesPerSecond float64) {
	if c.gmBW != nil {
		c.gmBW.SetReserved(bytesPerSecond)
	}
}

// Clock returns the core clock.
func (c *Chip) Clock() sim.Clock { return c.clock }

// Cube returns the cube numerics model in use.
func (c *Chip) Cube() cube.Model { return c.cube }

// Engine returns the event engine (for hooks and progress).
func (c *Chip) Engine() *sim.Engine { return c.eng }

// Geometry returns the machine's resolved geometry (lanes, buffers, paths).
func (c *Chip) Geometry() *machines.Geometry { return c.geom }

// Limits returns the static-check limits of programs on this machine.
func (c *Chip) Limits() isa.Limits { return c.kind.Limits(c) }

// Mode returns whether the run moves real data.
func (c *Chip) Mode() Mode { return c.opts.Mode }

// Observer returns the run's observer (nil: none).
func (c *Chip) Observer() Observer { return c.opts.Observer }

// FlagObserver returns the observer of flag events (nil when there is no
// observer or it ignores flags).
func (c *Chip) FlagObserver() Observer { return c.flagObs }

// Core returns core model i.
func (c *Chip) Core(i int) CoreModel { return c.cores[i] }

// Failed reports whether the run has stopped with an error.
func (c *Chip) Failed() bool { return c.failed != nil }

// AddMatrixFlops counts flops executed on a matrix unit (2·m·n·k per
// matrix instruction).
func (c *Chip) AddMatrixFlops(f float64) {
	c.mmadFlops += f
	c.energy.matrix(f)
}

// Run executes p (statically checked first) and returns its statistics. A
// deadlock is returned as *sim.DeadlockError, with the statistics up to it
// (a report of the run so far); an execution fault (e.g. an access outside
// a buffer) as an error naming core, line and instruction.
func (c *Chip) Run(p isa.Program) (*Stats, error) {
	if c.opts.Engine != nil {
		return nil, errors.New("chip on a shared engine: use Start, run the engine, then Collect")
	}
	if err := c.Start(p); err != nil {
		return nil, err
	}
	defer func() { // (Collect did, unless a panic came out of the engine or a generator)
		for _, core := range c.cores {
			core.Close()
		}
	}()
	err := c.eng.Run()
	var dl *sim.DeadlockError
	deadlocked := errors.As(err, &dl)
	if deadlocked {
		// Cores may have acted ahead of the engine's time (aheadOfEngine):
		// the run reached the latest of those times, where the statistics
		// close and the deadlock is.
		for _, core := range c.cores {
			if a, ok := core.(aheadOfEngine); ok {
				c.reached = max(c.reached, a.Ahead())
			}
		}
	}
	st, cerr := c.Collect()
	if cerr != nil {
		return nil, cerr
	}
	if deadlocked {
		dl.Time = max(dl.Time, st.Time)
		if k, ok := c.opts.Observer.(KernelObserver); ok && c.grids != nil {
			k.SetKernels(c.launchedGrids()) // (the caller of a completed run passes GridTimes)
		}
		return st, err
	}
	if err != nil {
		return nil, err
	}
	return st, nil
}

// Start loads p (statically checked first) onto the cores and wakes the
// attached host, without running the engine: Run does this for a chip of
// its own; a chip on a shared engine (Options.Engine) is started, the
// engine run by its owner, and the chip's result taken with Collect.
func (c *Chip) Start(p isa.Program) error {
	if c.hostOnly {
		if len(p.Cores) > 0 || len(p.Grids) > 0 {
			return errors.New("a chip without core models (NewHostChip) runs only its host's timed kernels")
		}
		if c.host != nil {
			c.host.begin(c.eng.Now())
		}
		return nil
	}
	if len(p.Cores) > len(c.cores) {
		return fmt.Errorf("program uses %d cores; machine %s has %d", len(p.Cores), c.M.Name, len(c.cores))
	}
	if !p.Generated {
		if err := isa.Check(p, c.Limits()); err != nil {
			return err
		}
	}
	if c.opts.Progress != nil {
		every := c.opts.ProgressEvery
		if every == 0 {
			every = 1 << 20
		}
		c.eng.OnProgress(every, c.opts.Progress)
	}
	if len(p.Grids) > 0 {
		if len(p.Cores) > 0 {
			return fmt.Errorf("program %s: give per-core streams or kernel grids, not both", p.Name)
		}
		if err := c.startGrids(p.Grids); err != nil {
			return err
		}
	}
	if c.host != nil && c.opts.FastForward != nil {
		return errors.New("fast-forward: not with a host program (its tasks wait for kernels by time)")
	}
	for i, s := range p.Cores {
		if s != nil {
			c.participants++
			c.cores[i].Load(s)
		}
	}
	c.phaseNames = p.Phases
	if c.host != nil {
		c.host.begin(c.eng.Now())
	}
	return nil
}

// Collect ends a started chip's run (the engine has stopped): it releases
// the cores' streams and returns the chip's statistics, or the error that
// stopped it.
func (c *Chip) Collect() (*Stats, error) {
	if c.hostOnly {
		if c.failed != nil {
			return nil, c.failed
		}
		return &Stats{Geometry: c.geom, Time: c.eng.Now(), Cycles: c.clock.CeilCycles(c.eng.Now())}, nil
	}
	for _, core := range c.cores {
		core.Close()
	}
	if c.failed != nil {
		return nil, c.failed
	}
	st := c.stats()
	if c.failed != nil { // (fast-forward's skipped time past the range)
		return nil, c.failed
	}
	return st, nil
}

// Fail stops the run with err (first error wins).
func (c *Chip) Fail(err error) {
	if c.failed == nil {
		c.failed = err
		c.eng.Stop(err)
	}
}

// aheadOfEngine is a core model whose state can run ahead of the
// engine's time: the DaVinci scalar issues a batch of instructions stamped
// with their own issue times, later than the wake-up's. Ahead returns the
// latest such time. When the engine's queue runs dry (a deadlock) the run
// had reached it: a scalar that filled a blocked pipe's queue ahead was
// reported deadlocked at 0 s, its issue slots lost.
type aheadOfEngine interface{ Ahead() sim.Time }

func (c *Chip) stats() *Stats {
	end := max(c.eng.Now(), c.reached)
	for _, core := range c.cores {
		end = max(end, core.Finish())
	}
	st := &Stats{Geometry: c.geom, Time: end, Cycles: c.clock.CeilCycles(end), GMReadBytes: c.gmRead, GMWriteBytes: c.gmWrite,
		GMUtilisation: c.gmBW.MeanUtilisation(end), Events: c.eng.Events(), MMADFlops: c.mmadFlops}
	for _, l2 := range c.l2s {
		st.L2HitBytes += l2.HitBytes
		st.L2MissBytes += l2.MissBytes
	}
	if c.llc != nil {
		st.LLCHitBytes, st.LLCMissBytes = c.llc.HitBytes, c.llc.MissBytes
	}
	st.Traffic = c.traffic
	for _, ch := range c.l2BWs {
		st.L2Utilisation += ch.MeanUtilisation(end) / float64(len(c.l2BWs))
	}
	for _, core := range c.cores {
		st.Cores = append(st.Cores, core.Finalize(end))
	}
	if c.grids != nil && c.grids.ff != nil {
		st.FastForwardDeclined = append([]FastForwardDecline(nil), c.grids.ff.declined...)
		st.FastForwardTakenBack = append([]FastForwardSkip(nil), c.grids.ff.takenBack...)
		st.FastForwardWaits = append([]FastForwardWait(nil), c.grids.ff.waits...)
		st.StepWaits = append([]StepWait(nil), c.grids.ff.stepWaits...)
		if len(c.grids.ff.skips) > 0 || len(c.grids.ff.steps) > 0 || len(c.grids.ff.kernels) > 0 {
			c.ffApply(st, end)
		}
	}
	return st
}

// l2Bytes returns the hit and miss bytes of the chip's L2s so far.
func (c *Chip) l2Bytes() (b [2]int64) {
	for _, l2 := range c.l2s {
		b[0] += l2.HitBytes
		b[1] += l2.MissBytes
	}
	return b
}

// ffSnapshot returns the run's counters at now (fast-forward): ints are
// the events, the chip's byte counters and, per core, each lane's time by
// cause and instructions, the path bytes and vector repeats; floats the
// matrix flops, the channels' busy integrals and, per core, the buffers'
// occupancy integrals. ffAdd and ffApply walk the same layout.
func (c *Chip) ffSnapshot(now sim.Time) ffSnap {
	return c.ffSnapshotInto(now, nil, nil)
}

// ffSnapshotInto is ffSnapshot into the storage of ints and floats.
func (c *Chip) ffSnapshotInto(now sim.Time, ints []int64, floats []float64) ffSnap {
	ff := c.grids.ff
	s := ffSnap{t: sim.Add(now, ff.shift), ints: ints[:0], floats: floats[:0]}
	l2 := c.l2Bytes()
	l2h, l2m := l2[0], l2[1]
	var llch, llcm int64
	if c.llc != nil {
		llch, llcm = c.llc.HitBytes, c.llc.MissBytes
	}
	tr := c.traffic
	s.ints = append(s.ints, int64(c.eng.Events()), c.gmRead, c.gmWrite, l2h, l2m, llch, llcm, // ffEvents … ffTrafficHBMWrite
		tr.GMRead, tr.GMWrite, tr.L2Read, tr.LLCRead, tr.HBMRead, tr.HBMWrite)
	s.floats = append(s.floats, c.mmadFlops, c.gmBW.MeanUtilisation(now)*float64(now))
	for _, ch := range c.l2BWs {
		s.floats = append(s.floats, ch.MeanUtilisation(now)*float64(now))
	}
	for _, core := range c.grids.cores {
		if a, ok := core.(CounterAppender); ok && ff.lanes != nil {
			s.ints, s.floats = a.AppendCounters(s.ints, s.floats, now)
			continue
		}
		cs := core.Counters(now)
		if ff.lanes == nil {
			ff.lanes, ff.paths = make([]struct{}, len(cs.Lanes)), len(cs.PathBytes)
		}
		for _, l := range cs.Lanes {
			for _, t := range l.Time {
				s.ints = append(s.ints, int64(t))
			}
			s.ints = append(s.ints, int64(l.Instrs))
		}
		s.ints = append(s.ints, cs.PathBytes...)
		s.ints = append(s.ints, cs.VectorRepeats)
		for _, b := range cs.Buffers {
			s.floats = append(s.floats, b.Mean)
		}
	}
	// On the time line of the full run: with what the skips so far
	// added (a step skip's are inside the waves a wave skip measures).
	for k, x := range ff.ints {
		s.ints[k] += x
	}
	for k, x := range ff.floats {
		s.floats[k] += x
	}
	return s
}

// ffAdd adds to what the skips add the increase from a to b of the
// counters that follow time: the events times scale (the skipped waves
// per measured wave), each lane's time by cause and the channels' and
// buffers' integrals times tscale (shift per picosecond from a to b; the
// lane times rounded so that they add up to shift: every picosecond of a
// lane has one cause). It returns the increase of every counter times
// scale (ffWork completes the rest at the grid's end).
func (c *Chip) ffAdd(ff *fastForward, a, b *ffSnap, scale, tscale float64, shift sim.Time) (win []float64) {
	win = make([]float64, len(b.ints))
	for k := range b.ints {
		win[k] = float64(b.ints[k]-a.ints[k]) * scale
	}
	ff.ints[ffEvents] += int64(math.Round(win[ffEvents]))
	add := func(k int) int64 { return int64(math.Round(float64(b.ints[k]-a.ints[k]) * tscale)) }
	k := ffGlobal
	for range c.grids.cores {
		for range ff.lanes {
			sum, big := int64(0), k
			for x := 0; x < int(NumCauses); x++ {
				d := add(k + x)
				ff.ints[k+x] += d
				sum += d
				if b.ints[k+x]-a.ints[k+x] > b.ints[big]-a.ints[big] {
					big = k + x
				}
			}
			ff.ints[big] += int64(shift) - sum
			k += laneInts
		}
		k += ff.paths + 1
	}
	for x := 1; x < len(ff.floats); x++ { // not the flops (work)
		ff.floats[x] += float64((b.floats[x] - a.floats[x]) * tscale)
	}
	return win
}

// The chip-wide ints of an ffSnap, in order (ffSnapshot); ffGlobal is
// their number, the cores' blocks follow.
const (
	ffEvents = iota
	ffGMRead
	ffGMWrite
	ffL2Hit
	ffL2Miss
	ffLLCHit
	ffLLCMiss
	ffTrafficGMRead
	ffTrafficGMWrite
	ffTrafficL2Read
	ffTrafficLLCRead
	ffTrafficHBMRead
	ffTrafficHBMWrite
	ffGlobal
)

// ffWork adds the work of a grid's skipped CTAs — instructions by lane,
// path and GM bytes, vector repeats, flops — at the end of the grid (at
// now): per skip, its skipped CTAs times the mean work of its measured
// CTAs, which ran the same instructions (exact when CTAs of the same
// instructions do the same work, as a GEMM's tiles of one shape, also in a
// grouped launch of GEMMs of different depths), spread over the cores as
// their simulated share. The cache hits and misses follow the GM bytes at
// the hit rates of the measured waves (win, summed over the grid's skips).
func (c *Chip) ffWork(ff *fastForward, start *ffSnap, now sim.Time, measures []ffMeasure, win []float64) error {
	end := c.ffSnapshot(now)
	var total ffWorkSum
	for _, m := range measures {
		if m.n != m.to-m.from || m.n == 0 {
			return fmt.Errorf("%d of the %d measured blocks %d–%d reported their work", m.n, m.to-m.from, m.from, m.to-1)
		}
		total.addScaled(&m.sum, float64(m.skipped)/float64(m.n)) // (one rounding where the compiler fuses it)
	}
	gmRead, gmWrite, err := c.ffAddWork(ff, start, &end, &total)
	if err != nil {
		return err
	}
	// Cache counters at the measured rates per GM byte.
	var l2Read, llcRead, over int64
	if w := win[ffGMRead] + win[ffGMWrite]; w > 0 {
		f := float64(gmRead+gmWrite) / w
		for _, k := range []int{ffL2Hit, ffL2Miss, ffLLCHit, ffLLCMiss} {
			ff.ints[k] += int64(math.Round(win[k] * f))
		}
		l2Read, llcRead = int64(math.Round(win[ffTrafficL2Read]*f)), int64(math.Round(win[ffTrafficLLCRead]*f))
		ff.ints[ffTrafficL2Read] += l2Read
		ff.ints[ffTrafficLLCRead] += llcRead
		over = int64(math.Round(overFetched(win) * f))
	}
	ff.ints[ffTrafficHBMRead] += gmRead - l2Read - llcRead + over
	return nil
}

// overFetched returns the bytes HBM read beyond those no cache served in
// the counters' increments d (an ffSnap's global ints, or a window of
// them): lines fetched whole for reads of part of them (Traffic.add), 0
// where every read covered whole lines.
func overFetched[T int64 | float64](d []T) T {
	return max(d[ffTrafficHBMRead]+d[ffTrafficL2Read]+d[ffTrafficLLCRead]-d[ffTrafficGMRead], 0)
}

// ffAddWork adds total, work of CTAs not simulated, to the fast-forward
// counters of a grid that ran from start to end: its global-memory bytes
// (the HBM takes the writes; the caller says where the reads were served),
// its flops, and each per-core counter (a lane's instructions, a path's
// bytes, the vector repeats) spread over the cores as their simulated
// shares of it. It returns the GM bytes read and written.
func (c *Chip) ffAddWork(ff *fastForward, start, end *ffSnap, total *ffWorkSum) (gmRead, gmWrite int64, err error) {
	d := func(k int) int64 { return end.ints[k] - start.ints[k] }
	gmRead, gmWrite = int64(math.Round(total.gmRead)), int64(math.Round(total.gmWrite))
	ff.ints[ffGMRead] += gmRead
	ff.ints[ffGMWrite] += gmWrite
	ff.ints[ffTrafficGMRead] += gmRead
	ff.ints[ffTrafficGMWrite] += gmWrite
	ff.ints[ffTrafficHBMWrite] += gmWrite
	ff.floats[0] += total.flops
	cores := len(c.grids.cores)
	block := coreInts(len(ff.lanes), ff.paths)
	type counter struct {
		off   int // offset in a core's block
		total float64
	}
	var counters []counter
	for l := range ff.lanes {
		counters = append(counters, counter{l*laneInts + int(NumCauses), at(total.instrs, l)})
	}
	for p := 0; p < ff.paths; p++ {
		counters = append(counters, counter{len(ff.lanes)*laneInts + p, at(total.pathBytes, p)})
	}
	counters = append(counters, counter{len(ff.lanes)*laneInts + ff.paths, total.repeats})
	for _, ct := range counters {
		var sum int64
		for i := range cores {
			sum += d(ffGlobal + i*block + ct.off)
		}
		total := int64(math.Round(ct.total))
		if total == 0 {
			continue
		}
		if sum == 0 {
			return 0, 0, fmt.Errorf("the skipped blocks did work the simulated ones did not (counter %d)", ct.off)
		}
		// Largest remainder: the shares add up to total.
		given := int64(0)
		best, bestRem := 0, -1.0
		for i := range cores {
			k := ffGlobal + i*block + ct.off
			share := float64(total) * float64(d(k)) / float64(sum)
			n := int64(share)
			ff.ints[k] += n
			given += n
			if rem := share - float64(n); rem > bestRem {
				best, bestRem = k, rem
			}
		}
		ff.ints[best] += total - given
	}
	return gmRead, gmWrite, nil
}

// at is x[i], 0 beyond x.
func at(x []float64, i int) float64 {
	if i < len(x) {
		return x[i]
	}
	return 0
}

// ffApply adds the skipped waves to the statistics of a run that ended
// (simulated) at end.
func (c *Chip) ffApply(st *Stats, end sim.Time) {
	ff := c.grids.ff
	full := sim.Add(end, ff.shift)
	if sim.Saturated(full) { // (the engine ran on after the skips)
		c.Fail(fmt.Errorf("fast-forward: the skipped time (%v) and the simulated (%v) together: %w", ff.shift, end, sim.ErrTimeOverflow))
		return
	}
	st.Time = full
	st.Cycles = c.clock.CeilCycles(full)
	mean := func(m float64, add float64) float64 { // a mean over [0, end] to one over [0, full]
		if full <= 0 {
			return 0
		}
		return (float64(m*float64(end)) + add) / float64(full)
	}
	in, fl := ff.ints, ff.floats
	st.GMReadBytes += in[ffGMRead]
	st.SkippedGMReadBytes = in[ffGMRead]
	st.GMWriteBytes += in[ffGMWrite]
	st.L2HitBytes += in[ffL2Hit]
	st.L2MissBytes += in[ffL2Miss]
	st.LLCHitBytes += in[ffLLCHit]
	st.LLCMissBytes += in[ffLLCMiss]
	t := &st.Traffic
	t.GMRead += in[ffTrafficGMRead]
	t.GMWrite += in[ffTrafficGMWrite]
	t.L2Read += in[ffTrafficL2Read]
	t.LLCRead += in[ffTrafficLLCRead]
	t.HBMRead += in[ffTrafficHBMRead]
	t.HBMWrite += in[ffTrafficHBMWrite]
	st.MMADFlops += fl[0]
	st.GMUtilisation = mean(st.GMUtilisation, fl[1])
	if n := len(c.l2BWs); n > 0 {
		st.L2Utilisation = 0
		for i, ch := range c.l2BWs {
			st.L2Utilisation += mean(ch.MeanUtilisation(end), fl[2+i]) / float64(n)
		}
	}
	k, f := ffGlobal, 2+len(c.l2BWs)
	for i := range st.Cores {
		cs := &st.Cores[i]
		cs.Instrs = 0
		for l := range cs.Lanes {
			ls := &cs.Lanes[l]
			for x := range ls.Time {
				ls.Time[x] += sim.Time(in[k+x])
			}
			k += int(NumCauses)
			ls.Instrs += uint64(in[k])
			k++
			cs.Instrs += ls.Instrs
		}
		paths := append([]int64(nil), cs.PathBytes...)
		for p := range paths {
			paths[p] += in[k]
			k++
		}
		cs.PathBytes = paths
		cs.VectorRepeats += in[k]
		k++
		for b := range cs.Buffers {
			if cs.Buffers[b].Capacity > 0 || cs.Buffers[b].Mean != 0 {
				cs.Buffers[b].Mean = mean(cs.Buffers[b].Mean, fl[f])
			}
			f++
		}
		cs.Finish = c.reported(cs.Finish)
	}
	st.FastForward = append([]FastForwardSkip(nil), ff.skips...)
	st.FastForwardSteps = append([]StepSkip(nil), ff.steps...)
	st.FastForwardKernels = append([]KernelSkip(nil), ff.kernels...)
}

// ErrFastForwardObserved is NewChip's error for fast-forward with an
// observer (the CLI refuses --fast-forward with --trace or --view with it
// before a live view starts).
var ErrFastForwardObserved = errors.New("fast-forward skips CTAs, which a trace or live view would miss: use it without --trace and --view")

// GMSpan is the global-memory bytes a transfer touches: rows of RowBytes
// bytes, Stride apart, from Addr (the L2 looks them up).
type GMSpan struct {
	Addr     int64
	Rows     int
	RowBytes int64
	Stride   int64
}

// StartGM starts the GM side of a transfer of n bytes (a read when read)
// by core touching spans (several: the transfers a lane runs as one, see
// isa.Instr.WithNext), for owner, which is told through FlowDone(now,
// tag) as each part finishes streaming; it returns the number of parts (1
// to 3) and the latency the transfer adds to its path's: gm.latency_cycles
// when some of its bytes come from HBM (every write, every read without an
// L2), llc.latency_cycles when the L2 misses are all served by the LLC,
// plus l2.far_latency_cycles on a chip whose shared L2 is split in
// partitions (lines interleave over them, so a transfer's last byte comes
// from the far one).
// Every byte a read asks for crosses the core's L2 (its bandwidth, l2s'
// channel, is what the L2 delivers to the cores, hits and fills alike:
// gpu-benches measures it on data the L2 holds); the bytes the L2 does not
// hold also cross the LLC (those it holds) or HBM (the rest): a read's
// parts are its n bytes on the L2's channel and its fetched bytes on the
// LLC's and HBM's, in parallel, and it ends with the last. Until
// 2026-12-05 a read's hits alone crossed the L2's channel, so the bytes
// it missed came at the L2's bandwidth plus HBM's: an L2-bound kernel ran
// faster the more it missed (docs/design-notes.md, "Misses cross the
// L2"). Writes go through to HBM and allocate in the caches. Each part is
// capped by its share of capBps (the path's bandwidth) so an uncontended
// transfer takes n / path.
func (c *Chip) StartGM(owner mem.FlowDone, core int, tag int64, read bool, n int64, spans []GMSpan, capBps float64) (parts int, latency sim.Time) {
	if read {
		c.gmRead += n
	} else {
		c.gmWrite += n
	}
	// hit, llcHit and miss are the bytes the L2 served and the LLC and
	// HBM moved for the transfer (the L2's channel carries all of a
	// read's bytes): a read's hit the bytes it requested of lines the L2
	// held, llcHit the bytes of the lines the L2 fetched that the LLC
	// held, miss the bytes fetched from HBM — whole lines, which can be
	// more than the bytes requested (a row straddling two absent lines
	// fetches both). fetched is the bytes the L2 fetched (LLC and HBM).
	hit, llcHit, miss, fetched := int64(0), int64(0), n, n
	part := 0
	if len(c.l2s) > 0 {
		part = core % len(c.l2s)
		if read {
			miss, fetched = 0, 0
		}
		for _, span := range spans {
			switch {
			case c.llc != nil && read:
				// The LLC (a memory-side cache) sees the lines the L2
				// fetches: those it found absent, in its order.
				h, f, lh, lf := c.l2s[part].Read2DThrough(c.llc, span.Addr, span.Rows, span.RowBytes, span.Stride)
				hit, fetched, llcHit, miss = hit+h, fetched+f, llcHit+lh, miss+lf
			case read && c.wholeLines:
				h, f := c.l2s[part].Read2D(span.Addr, span.Rows, span.RowBytes, span.Stride)
				hit, fetched, miss = hit+h, fetched+f, miss+f
			case read:
				h, m := c.l2s[part].Access2D(span.Addr, span.Rows, span.RowBytes, span.Stride)
				hit, fetched, miss = hit+h, fetched+m, miss+m
			default:
				c.l2s[part].Access2D(span.Addr, span.Rows, span.RowBytes, span.Stride)
				if c.llc != nil {
					// Writes go through the L2 to HBM: the LLC sees
					// every line written and serves none — every byte
					// a miss, so that its hits are the reads' alone
					// (the L2 read misses less the LLC's hits are the
					// HBM reads).
					c.llc.Write2D(span.Addr, span.Rows, span.RowBytes, span.Stride)
				}
			}
		}
		// (Writes write through: every byte reaches HBM.)
	}
	// The counters: the bytes requested, those the L2 and the LLC served
	// and those HBM moved (more than the rest where whole lines were
	// fetched beyond a read's bytes).
	c.traffic.add(read, n, hit, llcHit, miss)
	// Energy per byte moved: the L2's hits and HBM's bytes (the LLC's are
	// not priced).
	c.energy.gm(hit, miss)
	if c.host != nil {
		if k := c.host.running[core]; k != nil {
			k.Traffic.add(read, n, hit, llcHit, miss)
		}
	}
	// The latency of the slowest part.
	switch {
	case miss > 0 || hit+llcHit == 0:
		latency = c.clock.Cycles(int64(c.M.GM.LatencyCycles))
	case fetched > 0:
		latency = c.clock.Cycles(int64(c.M.LLC.LatencyCycles))
	}
	if c.M.L2.Partitions > 1 && !c.M.L2.Private && len(c.l2s) > 0 {
		latency = sim.Add(latency, c.clock.Cycles(int64(c.M.L2.FarLatencyCycles)))
	}
	start := func(ch *mem.Channel, b int64, share float64) {
		ch.Start(b, share, owner, tag)
		parts++
	}
	// Each part's share of the path: an uncontended part takes n / path
	// (a part of more bytes than the request, the lines fetched beyond
	// it, streams faster: they go to the L2, not over the path).
	switch {
	case read && len(c.l2s) > 0:
		start(c.l2BWs[part], n, capBps) // every byte delivered, hit or fetched
	case hit > 0:
		start(c.l2BWs[part], hit, capBps*float64(hit)/float64(n))
	}
	if llcHit > 0 {
		start(c.llcBW, llcHit, capBps*float64(llcHit)/float64(n))
	}
	if miss > 0 || hit+llcHit == 0 {
		share := capBps
		if hit+llcHit > 0 || miss > n {
			share = capBps * float64(miss) / float64(n)
		}
		start(c.gmBW, miss, share)
	}
	return parts, latency
}

// SyncArrive registers core id at the chip-wide barrier (sync_all) and
// returns the barrier's generation; the last of the program's cores to
// arrive releases it and wakes the others at now.
func (c *Chip) SyncArrive(id int, now sim.Time) int {
	gen := c.syncGen
	c.syncWaiting[id] = true
	c.syncArrived++
	if c.syncArrived == c.participants {
		c.syncGen++
		c.syncArrived = 0
		c.syncs = append(c.syncs, syncRelease{now, c.eng.Events()})
		for i, w := range c.syncWaiting {
			if w {
				c.syncWaiting[i] = false
				if i != id {
					c.cores[i].Wake(now)
				}
			}
		}
	}
	return gen
}

// syncRelease is when a sync_all released the cores, and the engine's
// events by then.
type syncRelease struct {
	at     sim.Time
	events uint64
}

// Kernels returns the run's kernels: its kernel launches (GridTimes), or,
// where it has none, the phases of a per-core program that its cores
// separate by sync_all — a DaVinci program's kernel launches (the split,
// the GEMM passes, the epilogue) — named by isa.Program.Phases ("phase
// i" past them), each over the program's cores (CTAs), launched and
// started at the release before it (0 for the first), finished at its
// own release and the last at end (the run's end, Stats.Time; end < 0:
// the run did not complete — a deadlock —, and the phase it was in is
// left out); nil for a program of one phase.
func (c *Chip) Kernels(end sim.Time) []GridTimes {
	if g := c.GridTimes(); len(g) > 0 || len(c.syncs) == 0 {
		return g
	}
	n := len(c.syncs) + 1
	if end < 0 {
		n--
	}
	out := make([]GridTimes, 0, n)
	from, events := sim.Time(0), uint64(0)
	for i := 0; i < n; i++ {
		to, ev := end, c.eng.Events()
		if i < len(c.syncs) {
			to, ev = c.syncs[i].at, c.syncs[i].events
		}
		name := fmt.Sprintf("phase %d", i)
		if i < len(c.phaseNames) {
			name = c.phaseNames[i]
		}
		out = append(out, GridTimes{Name: name, CTAs: c.participants, Launched: from, Started: from, Finished: to, Events: ev - events})
		from, events = to, ev
	}
	return out
}

// SyncReleased reports whether barrier generation gen has been released.
func (c *Chip) SyncReleased(gen int) bool { return c.syncGen > gen }

// SyncStatus returns the cores arrived at the current barrier and the
// cores running the program (deadlock messages).
func (c *Chip) SyncStatus() (arrived, participants int) { return c.syncArrived, c.participants }

// InHostKernel reports whether core id runs a kernel a host launched.
func (c *Chip) InHostKernel(id int) bool { return c.host != nil && c.host.running[id] != nil }

// CoreDone tells the chip that core id finished its stream at now.
func (c *Chip) CoreDone(id int, now sim.Time) {
	if c.host != nil {
		c.host.coreDone(id, now)
	}
}

// Ahead returns what generates the chip's streams ahead of its cores
// (Options.Ahead; nil: each is generated as its core reads it).
func (c *Chip) Ahead() *Ahead { return c.opts.Ahead }

// indexSets gives directory c the set index a machine file names
// (machines.L2Cache.Index).
func indexSets(c *mem.L2, index string) {
	switch index {
	case machines.IndexXOR:
		c.HashSets()
	case machines.IndexPoly:
		c.PolySets()
	}
}
