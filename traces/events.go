package traces

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/davinci-sim/davinci-sim/arch"
	"github.com/davinci-sim/davinci-sim/isa"
	"github.com/davinci-sim/davinci-sim/sim"
)

// This file holds the event stream of a run as an in-memory timeline: the
// Recorder (an arch.Observer) fills it while the engine runs, the Perfetto
// writer serializes it, ReadTrace loads it back, and the terminal visualizer
// draws it (live from a Recorder, or replayed from a file).

// Class groups instructions for colouring and filtering.
type Class uint8

// The instruction classes. ClassFlag covers set_flag and wait_flag, which
// take no pipe time: they appear as zero-length slices that anchor the flag
// arrows.
const (
	ClassOther  Class = iota // nop, sync_all and anything unknown
	ClassScalar              // scalar work, alloc, free
	ClassCopy                // MTE2/MTE3 copies
	ClassLoad                // MTE1 loads into L0A/L0B
	ClassMmad                // cube MMAD
	ClassL0C                 // L0C write-back (FIXP or V)
	ClassVector              // vector unit operations
	ClassFlag                // set_flag / wait_flag (zero length)
	ClassIssue               // the scalar unit issuing an instruction to another pipe
	NumClasses
)

var classNames = [...]string{"other", "scalar", "copy", "load", "mmad", "l0c", "vector", "flag", "issue"}

// String returns the class name (the trace category of a busy slice).
func (c Class) String() string {
	if int(c) < len(classNames) {
		return classNames[c]
	}
	return "other"
}

// ParseClass returns the class with the given name; unknown names are
// ClassOther.
func ParseClass(s string) Class {
	for i, n := range classNames {
		if n == s {
			return Class(i)
		}
	}
	return ClassOther
}

// ClassOf returns the class of an instruction.
func ClassOf(in *isa.Instr) Class {
	switch in.Op {
	case isa.OpScalar, isa.OpAlloc, isa.OpFree:
		return ClassScalar
	case isa.OpCopy:
		return ClassCopy
	case isa.OpLoad:
		return ClassLoad
	case isa.OpMmad:
		return ClassMmad
	case isa.OpL0CCopy:
		return ClassL0C
	case isa.OpVector:
		return ClassVector
	case isa.OpSetFlag, isa.OpWaitFlag:
		return ClassFlag
	}
	return ClassOther
}

// InstrBytes returns the bytes an instruction moves (copies, loads, L0C
// write-backs) or reads (vector sources), and its flops (MMAD: 2·m·n·k;
// vector: one per element and repeat).
func InstrBytes(in *isa.Instr) (bytes int64, flops float64) {
	switch in.Op {
	case isa.OpCopy:
		return int64(in.NBurst) * in.BurstLen, 0
	case isa.OpLoad:
		if in.In.Valid() {
			return int64(in.Rows) * int64(in.Cols) * int64(in.In.Bytes()), 0
		}
	case isa.OpL0CCopy:
		if in.Out.Valid() {
			return int64(in.Rows) * int64(in.Cols) * int64(in.Out.Bytes()), 0
		}
	case isa.OpMmad:
		return 0, 2 * float64(in.M) * float64(in.N) * float64(in.K)
	case isa.OpVector:
		if in.In.Valid() {
			n := int64(in.VecElems()) * int64(in.Repeat)
			return n * int64(in.In.Bytes()), float64(n)
		}
	}
	return 0, 0
}

// Slice is one interval of a pipe: an instruction executing (Cause ==
// arch.Busy), a stall with its cause, or a zero-length set_flag/wait_flag.
type Slice struct {
	From, To sim.Time
	Cause    arch.Cause
	Class    Class  // for busy and flag slices
	Name     string // mnemonic ("mte2.copy") or cause name ("wait_flag")
	// Text is the instruction in assembly syntax when read from a file; the
	// Recorder formats lazily: use Timeline.Text.
	Text  string
	Bytes int64
	Flops float64
	// Bind links a set_flag slice to the wait_flag slice it released (the
	// same non-zero value on both; 0 = no arrow).
	Bind uint64
	in   int32 // 1 + index into the recorder's instruction arena (0 = none)
}

// Stall reports whether the slice is a stall (not busy, not a flag mark).
func (s *Slice) Stall() bool { return s.Cause != arch.Busy && s.Class != ClassFlag }

// Flow is a flag arrow: the set_flag on Src at Set released the wait_flag on
// Dst at Wait (flags are matched first-in first-out, as they count).
type Flow struct {
	Src, Dst  isa.Pipe
	ID        int
	Set, Wait sim.Time
	Bind      uint64 // the Bind of the two flag slices
}

// Sample is a counter value from time T on.
type Sample struct {
	T     sim.Time
	Value float64
}

// CoreTimeline is the events of one core.
type CoreTimeline struct {
	ID    int
	Pipes [isa.NumPipes][]Slice    // ordered by From
	Flows []Flow                   // ordered by Wait
	Occ   [isa.NumBuffers][]Sample // allocated bytes (GM entry unused)
	stall [isa.NumPipes][arch.NumCauses]sim.Time
}

// Timeline is the in-memory event model of a run (or of its traced window).
type Timeline struct {
	Machine  string
	Program  string
	Capacity [isa.NumBuffers]int64 // per-core buffer capacities (0 = unknown)
	// From and To bound the recorded window; To grows while a run is live.
	From, To  sim.Time
	Cores     []*CoreTimeline // ordered by ID
	Bandwidth []Sample        // GM bandwidth in use, bytes/s
	// Done is set when the run (or the file) is complete.
	Done bool

	instrs [][]isa.Instr // recorded instructions in chunks (never re-copied), formatted on demand
	ninstr int
}

// Text returns the instruction text of slice s ("" for stalls).
func (t *Timeline) Text(s *Slice) string {
	if s.Text == "" && s.in > 0 && int(s.in) <= t.ninstr {
		i := int(s.in) - 1
		return isa.Format(t.instrs[i/instrChunk][i%instrChunk])
	}
	return s.Text
}

// instrChunk is the number of instructions per arena chunk.
const instrChunk = 4096

// keep stores in and returns its arena reference (0 when the arena is full).
func (t *Timeline) keep(in *isa.Instr) int32 {
	if t.ninstr >= 1<<31-2 {
		return 0
	}
	if t.ninstr%instrChunk == 0 {
		t.instrs = append(t.instrs, make([]isa.Instr, 0, instrChunk))
	}
	last := len(t.instrs) - 1
	t.instrs[last] = append(t.instrs[last], *in)
	t.ninstr++
	return int32(t.ninstr)
}

// Core returns the timeline of core id, or nil.
func (t *Timeline) Core(id int) *CoreTimeline {
	i := sort.Search(len(t.Cores), func(i int) bool { return t.Cores[i].ID >= id })
	if i < len(t.Cores) && t.Cores[i].ID == id {
		return t.Cores[i]
	}
	return nil
}

// core returns the timeline of core id, creating it.
func (t *Timeline) core(id int) *CoreTimeline {
	i := sort.Search(len(t.Cores), func(i int) bool { return t.Cores[i].ID >= id })
	if i < len(t.Cores) && t.Cores[i].ID == id {
		return t.Cores[i]
	}
	c := &CoreTimeline{ID: id}
	t.Cores = append(t.Cores, nil)
	copy(t.Cores[i+1:], t.Cores[i:])
	t.Cores[i] = c
	return c
}

// addSlice appends s to pipe p keeping the stall totals.
func (c *CoreTimeline) addSlice(p isa.Pipe, s Slice) {
	ss := append(c.Pipes[p], s)
	// Intervals close after the flag events at their end: keep From order.
	for i := len(ss) - 1; i > 0 && ss[i-1].From > s.From; i-- {
		ss[i], ss[i-1] = ss[i-1], ss[i]
	}
	c.Pipes[p] = ss
	if s.Class != ClassFlag {
		c.stall[p][s.Cause] += s.To - s.From
	}
}

// Totals returns the time of pipe p per cause over the recorded slices.
// QueueEmpty (idle) is not recorded as slices: it is the rest of the window.
func (c *CoreTimeline) Totals(p isa.Pipe) [arch.NumCauses]sim.Time { return c.stall[p] }

// SliceAt returns the index of the slice of pipe p covering time t, or -1.
func (c *CoreTimeline) SliceAt(p isa.Pipe, t sim.Time) int {
	ss := c.Pipes[p]
	i := sort.Search(len(ss), func(i int) bool { return ss[i].To > t })
	for ; i < len(ss) && ss[i].From <= t; i++ {
		if ss[i].From <= t && t < ss[i].To {
			return i
		}
	}
	return -1
}

// OccAt returns the allocated bytes of buffer b at time t.
func (c *CoreTimeline) OccAt(b isa.Buffer, t sim.Time) float64 {
	return SampleAt(c.Occ[b], t)
}

// SampleAt returns the value of a step counter at time t (0 before the first
// sample).
func SampleAt(ss []Sample, t sim.Time) float64 {
	i := sort.Search(len(ss), func(i int) bool { return ss[i].T > t })
	if i == 0 {
		return 0
	}
	return ss[i-1].Value
}

// Window selects what a Recorder keeps: a set of cores (nil = all) and a
// time range [From, To) (To == 0 = no end).
type Window struct {
	Cores    map[int]bool
	From, To sim.Time
}

// ParseCores parses a core list such as "0-3,8,10-11".
func ParseCores(s string) (map[int]bool, error) {
	out := map[int]bool{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			return nil, fmt.Errorf("core list %q: empty element", s)
		}
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(strings.TrimSpace(lo))
		if err != nil || a < 0 {
			return nil, fmt.Errorf("core list %q: %q is not a core number", s, lo)
		}
		b := a
		if isRange {
			b, err = strconv.Atoi(strings.TrimSpace(hi))
			if err != nil || b < a {
				return nil, fmt.Errorf("core list %q: bad range %q", s, part)
			}
		}
		if b-a > 1<<16 {
			return nil, fmt.Errorf("core list %q: range %q too large", s, part)
		}
		for i := a; i <= b; i++ {
			out[i] = true
		}
	}
	return out, nil
}

// ParseTime parses a duration with a unit: "50us", "1.5µs", "200ns", "3ms",
// "0", "1234ps", "2s". The value is converted exactly to picoseconds.
func ParseTime(s string) (sim.Time, error) {
	s = strings.TrimSpace(s)
	if s == "0" {
		return 0, nil
	}
	units := []struct {
		suf string
		ps  int64
	}{{"ps", 1}, {"ns", 1000}, {"us", 1000000}, {"µs", 1000000}, {"ms", 1000000000}, {"s", 1000000000000}}
	for _, u := range units {
		num, ok := strings.CutSuffix(s, u.suf)
		if !ok {
			continue
		}
		ps, err := decimalTimes(strings.TrimSpace(num), u.ps)
		if err != nil {
			return 0, fmt.Errorf("time %q: %v", s, err)
		}
		return sim.Time(ps), nil
	}
	return 0, fmt.Errorf("time %q: needs a unit (ps, ns, us, ms, s)", s)
}

// decimalTimes returns the non-negative decimal num times unit, exactly.
func decimalTimes(num string, unit int64) (int64, error) {
	ip, fp, _ := strings.Cut(num, ".")
	if ip == "" && fp == "" {
		return 0, fmt.Errorf("no number")
	}
	var v int64
	for _, ch := range ip {
		if ch < '0' || ch > '9' {
			return 0, fmt.Errorf("%q is not a non-negative number", num)
		}
		if v > (1<<62)/10/unit {
			return 0, fmt.Errorf("too large")
		}
		v = v*10 + int64(ch-'0')
	}
	v *= unit
	scale := unit
	for _, ch := range fp {
		if ch < '0' || ch > '9' {
			return 0, fmt.Errorf("%q is not a non-negative number", num)
		}
		scale /= 10
		if scale == 0 {
			if ch != '0' {
				return 0, fmt.Errorf("finer than a picosecond")
			}
			continue
		}
		v += int64(ch-'0') * scale
	}
	return v, nil
}

// ParseWindow parses a time window "FROM..TO" ("0us..50us", "10us..",
// "..5us").
func ParseWindow(s string) (from, to sim.Time, err error) {
	a, b, ok := strings.Cut(s, "..")
	if !ok {
		return 0, 0, fmt.Errorf("time window %q: want FROM..TO, e.g. 0us..50us", s)
	}
	if strings.TrimSpace(a) != "" {
		if from, err = ParseTime(a); err != nil {
			return 0, 0, fmt.Errorf("time window %q: %v", s, err)
		}
	}
	if strings.TrimSpace(b) != "" {
		if to, err = ParseTime(b); err != nil {
			return 0, 0, fmt.Errorf("time window %q: %v", s, err)
		}
		if to <= from {
			return 0, 0, fmt.Errorf("time window %q: end must be after start", s)
		}
	}
	return from, to, nil
}

type flagKey struct {
	core     int
	src, dst isa.Pipe
	id       int
}

// pendingSet is a raised flag not yet consumed.
type pendingSet struct {
	t    sim.Time
	bind uint64 // non-zero when the set lies in the window (its arrow may be drawn)
}

// Recorder is an arch.Observer that builds a Timeline of the events inside
// a Window; memory is proportional to the events kept (plus one pending
// entry per raised, unconsumed flag). It is safe for one writer (the
// engine) and concurrent readers using Read.
type Recorder struct {
	win   Window
	mu    sync.Mutex
	tl    Timeline
	sets  map[flagKey][]pendingSet
	names map[uint32]string
	binds uint64
}

// NewRecorder returns a recorder for the given window.
func NewRecorder(w Window) *Recorder {
	r := &Recorder{win: w, sets: map[flagKey][]pendingSet{}, names: map[uint32]string{}}
	r.tl.From = w.From
	r.tl.To = w.From
	return r
}

// SetInfo records the machine and program names and the buffer capacities.
func (r *Recorder) SetInfo(machine, program string, capacity [isa.NumBuffers]int64) {
	r.mu.Lock()
	r.tl.Machine, r.tl.Program, r.tl.Capacity = machine, program, capacity
	r.mu.Unlock()
}

// Finish marks the timeline complete at time end (the end of the run).
func (r *Recorder) Finish(end sim.Time) {
	r.mu.Lock()
	if r.win.To > 0 && end > r.win.To {
		end = r.win.To
	}
	if end > r.tl.To {
		r.tl.To = end
	}
	r.tl.Done = true
	r.mu.Unlock()
}

// Read calls fn with the timeline while holding the recorder's lock: fn must
// not keep references to the slices beyond the call.
func (r *Recorder) Read(fn func(*Timeline)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	fn(&r.tl)
}

// Timeline returns the recorded timeline; call it after the run.
func (r *Recorder) Timeline() *Timeline { return &r.tl }

func (r *Recorder) wantCore(c int) bool { return r.win.Cores == nil || r.win.Cores[c] }

// clip clips [from, to) to the window; ok is false when nothing is left.
func (r *Recorder) clip(from, to sim.Time) (sim.Time, sim.Time, bool) {
	if from < r.win.From {
		from = r.win.From
	}
	if r.win.To > 0 && to > r.win.To {
		to = r.win.To
	}
	return from, to, to > from
}

func (r *Recorder) inWindow(t sim.Time) bool {
	return t >= r.win.From && (r.win.To == 0 || t < r.win.To)
}

func (r *Recorder) advance(t sim.Time) {
	if r.win.To > 0 && t > r.win.To {
		t = r.win.To
	}
	if t > r.tl.To {
		r.tl.To = t
	}
}

// name returns the interned mnemonic of in (isa.Mnemonic allocates).
func (r *Recorder) name(in *isa.Instr) string {
	k := uint32(in.Op)<<16 | uint32(in.Pipe)<<8 | uint32(in.VOp)
	if n, ok := r.names[k]; ok {
		return n
	}
	n := isa.Mnemonic(*in)
	r.names[k] = n
	return n
}

// Interval implements arch.Observer. Idle time (QueueEmpty) is not stored.
func (r *Recorder) Interval(core int, pipe isa.Pipe, cause arch.Cause, from, to sim.Time, in *isa.Instr) {
	if !r.wantCore(core) || cause == arch.QueueEmpty {
		return
	}
	from, to, ok := r.clip(from, to)
	if !ok {
		return
	}
	s := Slice{From: from, To: to, Cause: cause}
	if cause == arch.Busy && in != nil {
		s.Class = ClassOf(in)
		if pipe == isa.S && in.Pipe != isa.S {
			s.Class = ClassIssue
		}
		s.Name = r.name(in)
		s.Bytes, s.Flops = InstrBytes(in)
	} else {
		s.Name = cause.String()
	}
	r.mu.Lock()
	if cause == arch.Busy && in != nil {
		s.in = r.tl.keep(in)
	}
	r.tl.core(core).addSlice(pipe, s)
	r.advance(to)
	r.mu.Unlock()
}

// Flag implements arch.Observer: it matches each consume with the oldest
// outstanding set of the same (core, src, dst, id).
func (r *Recorder) Flag(core int, src, dst isa.Pipe, id int, set bool, t sim.Time) {
	if !r.wantCore(core) {
		return
	}
	k := flagKey{core, src, dst, id}
	in := r.inWindow(t)
	if set {
		ps := pendingSet{t: t}
		if in {
			r.binds++
			ps.bind = r.binds
		}
		r.sets[k] = append(r.sets[k], ps)
	} else {
		q := r.sets[k]
		var ps pendingSet
		if len(q) > 0 {
			ps = q[0]
			copy(q, q[1:])
			r.sets[k] = q[:len(q)-1]
		}
		if !in {
			return
		}
		r.mu.Lock()
		c := r.tl.core(core)
		ws := r.flagSlice(isa.WaitFlag(src, dst, id), t)
		if ps.bind != 0 {
			fs := append(c.Flows, Flow{Src: src, Dst: dst, ID: id, Set: ps.t, Wait: t, Bind: ps.bind})
			for i := len(fs) - 1; i > 0 && fs[i-1].Wait == t && fs[i-1].Bind > ps.bind; i-- {
				fs[i], fs[i-1] = fs[i-1], fs[i]
			}
			c.Flows = fs
			ws.Bind = ps.bind
		}
		c.addSlice(dst, ws)
		r.advance(t)
		r.mu.Unlock()
		return
	}
	if !in {
		return
	}
	r.mu.Lock()
	ss := r.flagSlice(isa.SetFlag(src, dst, id), t)
	ss.Bind = r.binds
	r.tl.core(core).addSlice(src, ss)
	r.advance(t)
	r.mu.Unlock()
}

// flagSlice returns the zero-length mark of a flag event (r.mu held).
func (r *Recorder) flagSlice(in isa.Instr, t sim.Time) Slice {
	return Slice{From: t, To: t, Cause: arch.Busy, Class: ClassFlag, Name: in.Op.String(), in: r.tl.keep(&in)}
}

// Occupancy implements arch.Observer. A change before the window becomes
// the value at the window's start.
func (r *Recorder) Occupancy(core int, buf isa.Buffer, bytes int64, t sim.Time) {
	if !r.wantCore(core) || buf >= isa.NumBuffers || (r.win.To > 0 && t >= r.win.To) {
		return
	}
	r.mu.Lock()
	c := r.tl.core(core)
	c.Occ[buf] = addSample(c.Occ[buf], t, float64(bytes), r.win.From)
	if t >= r.win.From {
		r.advance(t)
	}
	r.mu.Unlock()
}

// Bandwidth implements arch.Observer.
func (r *Recorder) Bandwidth(t sim.Time, bps float64) {
	if r.win.To > 0 && t >= r.win.To {
		return
	}
	r.mu.Lock()
	r.tl.Bandwidth = addSample(r.tl.Bandwidth, t, bps, r.win.From)
	r.mu.Unlock()
}

// addSample appends a step-counter value at t (clamped to from), replacing a
// value at the same time.
func addSample(ss []Sample, t sim.Time, v float64, from sim.Time) []Sample {
	if t < from {
		t = from
	}
	if n := len(ss); n > 0 && ss[n-1].T == t {
		ss[n-1].Value = v
		return ss
	}
	return append(ss, Sample{T: t, Value: v})
}

var _ arch.Observer = (*Recorder)(nil)
