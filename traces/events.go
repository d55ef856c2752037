package traces

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unsafe"

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
func ClassOf(in *isa.Instr) Class { return classOfOp(in.Op) }

// opClass is classOfOp by opcode (a table: the recorder looks it up per
// event, and the opcodes come mixed).
var opClass = func() (t [256]Class) {
	for op := range t {
		t[op] = classOf(isa.Op(op))
	}
	return t
}()

func classOfOp(op isa.Op) Class { return opClass[uint8(op)] }

func classOf(op isa.Op) Class {
	switch op {
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

// Slice is one interval of a pipe: an instruction executing (Cause ==
// arch.Busy), a stall with its cause, or a zero-length set_flag/wait_flag.
//
// A Slice holds no pointers (the garbage collector does not scan the
// millions a long run records) and is stored in a few bytes (see Lane): its
// name, instruction text, bytes, flops and flag arrow are derived on demand
// from the Timeline (Timeline.Name, Timeline.Text, Timeline.Args,
// Timeline.Bind).
type Slice struct {
	From, To sim.Time
	ref      uint32     // 1 + packed-instruction offset, a flag, or a bound mark (recorded); 1 + args index (read back); 0 = none
	name     uint16     // index into Timeline.names
	Cause    arch.Cause // arch.Busy for instructions and flag marks
	Class    Class      // for busy and flag slices
}

// Stall reports whether the slice is a stall (not busy, not a flag mark).
func (s Slice) Stall() bool { return s.Cause != arch.Busy && s.Class != ClassFlag }

// Flow is a flag arrow: the set_flag on Src at Set released the wait_flag on
// Dst at Wait (flags are matched first-in first-out, as they count).
type Flow struct {
	Src, Dst  int // lanes
	ID        int
	Set, Wait sim.Time
	Bind      uint64 // the Bind of the two flag slices
}

// HostTask is a timed task of the host CPU of a hosted run: a computation
// (Kind "compute"), a transfer over the host–device link ("transfer"), a
// kernel launch ("launch") or a wait for kernels ("wait"); Name is its
// stage label.
type HostTask struct {
	Kind, Name string
	From, To   sim.Time
}

// HostLanes names the host's lanes in traces: its CPU's own work, and the
// transfers over the host–device link.
var HostLanes = []string{"CPU", "link"}

// Lane returns the host lane of the task (an index into HostLanes).
func (h *HostTask) Lane() int {
	if h.Kind == "transfer" {
		return 1
	}
	return 0
}

// Kernel is one kernel launch (a grid of blocks) of a run on a machine
// whose programs launch grids (GPUs): its name, its blocks (CTAs) and its
// times as the chip reports them (arch.GridTimes, report.json's kernels):
// the launch began at Launched (the kernel before it finished), its first
// block started at Started (after the launch latency), its last block
// finished at Finished. A deadlocked run's kernel that was running when
// it deadlocked is Deadlocked: Finished is then the deadlock (the end of
// the run), not a block's end. A trace's window cuts the times to it;
// Latency then keeps the launch's real latency (LaunchLatency).
type Kernel struct {
	Name                        string
	Blocks                      int
	Launched, Started, Finished sim.Time
	Deadlocked                  bool
	// Latency is the launch latency as the run had it, when a window cut
	// the launch so that Started − Launched is less (0: Started −
	// Launched is the latency).
	Latency sim.Time
}

// LaunchLatency returns the launch's latency, from its launch to its
// first block's start, as the run had it — not cut by a trace's window
// (the launch_us a trace states).
func (k *Kernel) LaunchLatency() sim.Time { return max(k.Latency, k.Started-k.Launched) }

// Sample is a counter value from time T on.
type Sample struct {
	T     sim.Time
	Value float64
}

// CoreTimeline is the events of one core. Lanes and Occ are indexed as
// Timeline.Lanes and Timeline.Buffers name them (they may be longer when
// events named lanes or buffers the timeline has no name for).
type CoreTimeline struct {
	ID    int
	Lanes []Lane     // ordered by From
	Flows []Flow     // ordered by Wait
	Occ   [][]Sample // allocated bytes (global buffers' entries unused)
	stall [][arch.NumCauses]sim.Time
}

// Timeline is the in-memory event model of a run (or of its traced window).
type Timeline struct {
	Machine string
	Program string
	// Lanes names the lanes of every core (the machine kind's names).
	Lanes []string
	// Buffers names the memories whose occupancy Occ holds, and Capacity
	// gives each one's per-core capacity (0 = unknown, or a global buffer).
	Buffers  []string
	Capacity []int64
	// GMBandwidth is the machine's GM bandwidth (bytes/s), the capacity
	// the Bandwidth samples are a share of; 0 when unknown (a trace written
	// before it was recorded, a cluster's).
	GMBandwidth float64
	// VectorRepeatBytes is the machine's vector repeat width (recorded
	// runs; 0: the default), for the bytes and flops of vector slices.
	VectorRepeatBytes int
	// From and To bound the recorded window; To grows while a run is live.
	// A window that holds nothing of the run is [end, end], the run's end.
	From, To  sim.Time
	Cores     []*CoreTimeline // ordered by ID
	Bandwidth []Sample        // GM bandwidth in use, bytes/s
	// Power is the chip's power (W) by time bin, ending with 0 at the end
	// (machines with a power model; see power.go); set by Recorder.Finish.
	Power []Sample
	// Host is the host CPU's timed tasks (hosted runs), in time order.
	Host []HostTask
	// Kernels is the run's kernel launches (GPU grids) in the window, in
	// launch order; set by Recorder.SetKernels after the run.
	Kernels []Kernel
	// Idle lists the cores a trace file left out for doing nothing in its
	// window but wait at barriers (its otherData's idle_cores, read back;
	// IdleCores finds them in a recorded run), in order.
	Idle []int
	// AskedFrom and AskedTo are the time window asked for (--trace-window)
	// where known (a recorder's; 0, 0: none, or a trace read back), to say
	// what a window that holds nothing of the run was.
	AskedFrom, AskedTo sim.Time
	// Done is set when the run (or the file) is complete.
	Done bool
	// Ending says how a recorded run that is Done ended when it did not
	// complete ("deadlock at 1.5µs", "check failed"); "" when it completed.
	// Traces carry it in their header (a trace read back has the
	// writer's). See Recorder.SetEnding.
	Ending string
	// Notes are what a trace file's header says it leaves out of the run
	// beyond idle cores, one line each, for a viewer to show: a cluster
	// trace's records dropped past its limit (dropped_records), a GPU
	// trace's CTAs that shared an SM (shared_sms); each a short phrase
	// ("truncated from 1.5ms"), a colon and the details. Nil for a
	// recording.
	Notes []string
	// Dropped is the time before which a memory-limited recorder (see
	// Recorder.SetLimit) has dropped events; 0 when nothing was dropped.
	// Lanes and flows are complete from Dropped on; the stall totals still
	// cover the whole run.
	Dropped sim.Time

	names   *isa.Names        // the machine's lane and buffer names for instruction text (nil: DaVinci's)
	snames  []string          // slice names (mnemonics, causes), by Slice.name
	nameIdx map[string]uint16 // names → index
	peakBW  float64           // at least the largest Bandwidth value but the last (PeakBandwidth)

	// Recorded runs: packed instructions (pack.go) in fixed chunks, never
	// re-copied; Slice.ref-1 = chunk<<codeShift | offset.
	code     [][]byte
	codeBase int        // chunks dropped from the front of code
	codeEnd  []sim.Time // per code chunk: the latest time recorded when it was in use
	// bound is the flag marks with an arrow (recorded runs): Slice.ref =
	// boundRef | index. Not dropped under a memory limit (live views, the
	// limit's use, record no arrows).
	bound  []boundMark
	arena  *blockArena // the lanes' sealed blocks
	nflows int         // flows held (for the memory limit)
	// Read-back traces: slice text and arguments, by Slice.ref-1 (shared
	// by the slices that have the same; a flag mark with an arrow has its
	// ref in bound).
	args []sliceArgs
}

// sliceArgs are the arguments of a slice read back from a file.
type sliceArgs struct {
	text  string
	bytes int64
	flops float64
}

// boundMark is a recorded flag mark with an arrow: the mark's own ref and
// its bind id.
type boundMark struct {
	bind uint64
	ref  uint32
}

// codeShift sets the packed-instruction chunk size (1 MiB); at most
// maxChunks chunks are addressable by a 32-bit ref.
const (
	codeShift = 20
	codeChunk = 1 << codeShift
	maxChunks = (flagRef - 2) >> codeShift // refs stay below flagRef
)

// Name returns the name of slice s: the mnemonic ("mte2.copy", "set_flag")
// or the stall cause ("wait_flag").
func (t *Timeline) Name(s *Slice) string {
	if int(s.name) < len(t.snames) {
		return t.snames[s.name]
	}
	return ""
}

// intern returns the index of name n, adding it (ok is false when the
// table is full).
func (t *Timeline) intern(n string) (uint16, bool) {
	if i, ok := t.nameIdx[n]; ok {
		return i, true
	}
	if len(t.snames) > math.MaxUint16 {
		return 0, false
	}
	if t.nameIdx == nil {
		t.nameIdx = map[string]uint16{}
	}
	i := uint16(len(t.snames))
	t.snames = append(t.snames, n)
	t.nameIdx[n] = i
	return i, true
}

// Flag marks of a recorded run keep their flag in ref instead of a packed
// instruction: flagRef | set<<30 | src<<26 | dst<<22 | id.
const (
	flagRef      = 1 << 31
	flagSet      = 1 << 30
	flagSrcShift = 26
	flagDstShift = 22
	flagIDMax    = 1<<flagDstShift - 1
)

// A flag mark with an arrow keeps its ref and bind id in Timeline.bound:
// its ref is boundRef | index (a source pipe field of 15, which flag refs
// do not use).
const (
	boundRef    = flagRef | 15<<flagSrcShift
	boundMask   = flagRef | flagSet | 15<<flagSrcShift
	boundIdxMax = 1<<flagSrcShift - 1
)

// flagMarkRef returns the ref of a flag mark (0 when it does not fit).
func flagMarkRef(set bool, src, dst int, id int64) uint32 {
	if src < 0 || dst < 0 || src >= 15 || dst >= 16 || id < 0 || id > flagIDMax {
		return 0
	}
	r := flagRef | uint32(src)<<flagSrcShift | uint32(dst)<<flagDstShift | uint32(id)
	if set {
		r |= flagSet
	}
	return r
}

// bindRef binds recorded flag mark ref to an arrow: the ref to store in
// its slice (ref itself when the table is full: the mark then has no
// arrow).
func (t *Timeline) bindRef(ref uint32, bind uint64) uint32 {
	if len(t.bound) > boundIdxMax {
		return ref
	}
	t.bound = append(t.bound, boundMark{bind: bind, ref: ref})
	return boundRef | uint32(len(t.bound)-1)
}

// Bind returns the arrow of flag slice s: the same non-zero value on the
// set_flag slice and the wait_flag slice it released, and on their Flow; 0
// = no arrow.
func (t *Timeline) Bind(s *Slice) uint64 {
	switch {
	case s.ref == 0:
	case s.ref&boundMask == boundRef:
		if i := int(s.ref & boundIdxMax); i < len(t.bound) {
			return t.bound[i].bind
		}
	}
	return 0
}

// instr returns the recorded instruction of s and the group it started
// with (N = 0: alone; ok is false for stalls and read-back slices).
func (t *Timeline) instr(s *Slice) (in isa.Instr, g arch.Group, ok bool) {
	if s.ref == 0 || t.args != nil {
		return isa.Instr{}, g, false
	}
	ref := s.ref
	if ref&boundMask == boundRef {
		i := int(ref & boundIdxMax)
		if i >= len(t.bound) {
			return isa.Instr{}, g, false
		}
		ref = t.bound[i].ref
	}
	if ref&flagRef != 0 {
		src, dst, id := isa.Pipe(ref>>flagSrcShift&15), isa.Pipe(ref>>flagDstShift&15), int(ref&flagIDMax) // lanes are the DaVinci pipes: flags are DaVinci's
		if ref&flagSet != 0 {
			return isa.SetFlag(src, dst, id), g, true
		}
		return isa.WaitFlag(src, dst, id), g, true
	}
	if ref == 0 {
		return isa.Instr{}, g, false
	}
	r := uint64(ref - 1)
	ch := int(r>>codeShift) - t.codeBase
	if ch < 0 || ch >= len(t.code) {
		return isa.Instr{}, g, false
	}
	b := t.code[ch]
	off := int(r & (codeChunk - 1))
	if off >= len(b) {
		return isa.Instr{}, g, false
	}
	c, ok := unpacked(b[off:])
	if !ok {
		return isa.Instr{}, g, false
	}
	return c.unpack(), c.group(), true
}

// Text returns the instruction text of slice s in assembly syntax ("" for
// stalls).
func (t *Timeline) Text(s *Slice) string {
	if in, g, ok := t.instr(s); ok {
		return t.instrText(in, g)
	}
	if a := t.readArgs(s); a != nil {
		return a.text
	}
	return ""
}

// instrText returns the text of a recorded slice's instruction in and
// the group it started with: the assembly syntax, addresses as offsets
// (pairOperand), and the group.
func (t *Timeline) instrText(in isa.Instr, g arch.Group) string {
	var pair string
	if in.Op == isa.OpMmad {
		if off, cols0, ok := pairOperand(in.Src1.Addr); ok {
			in.Src1.Addr = off
			pair = " pair_cols=" + strconv.Itoa(cols0)
		}
	}
	text := t.instrNames().Format(in)
	if pair != "" {
		// After the operands (c, a, b), before the shape.
		if i := strings.Index(text, " m="); i >= 0 {
			text = text[:i] + pair + text[i:]
		} else {
			text += pair
		}
	}
	return text + groupText(in.Op, g)
}

// A Blackwell CTA pair's MMA (cta_group::2) names its B operand, held half
// by each CTA of the pair, by an encoded address (gpu.PairOperand): bit 48
// set, the columns rank 0 holds in bits 32–47, the shared-memory offset
// (the same in both CTAs) below. Instruction text shows the offset, and
// the split as pair_cols=N (the first N columns in rank 0's shared memory,
// the rest in rank 1's); TestPairOperandText holds this to gpu.PairOperand.
const (
	pairOperandBit   = int64(1) << 48
	pairColsShift    = 32
	pairOffsetMask   = int64(1)<<pairColsShift - 1
	pairOperandLimit = int64(1) << 49 // the encoding's bits end below
)

// pairOperand decodes a pair's B operand address (ok is false for a
// plain address).
func pairOperand(addr int64) (off int64, cols0 int, ok bool) {
	if addr&pairOperandBit == 0 || addr < 0 || addr >= pairOperandLimit {
		return addr, 0, false
	}
	return addr & pairOffsetMask, int(addr >> pairColsShift & 0xffff), true
}

// amount returns the bytes and flops of a slice's instruction, or of the
// group it started with.
func amount(in *isa.Instr, g arch.Group, repeatBytes int) (bytes int64, flops float64) {
	if g.N > 1 {
		return g.Bytes, g.Flops
	}
	return in.Amount(repeatBytes)
}

// groupText is what a slice's text adds to its first instruction's for a
// group (arch.Group): "" alone.
func groupText(op isa.Op, g arch.Group) string {
	switch {
	case g.N < 2:
		return ""
	case op == isa.OpMmad || op == isa.OpVector:
		return fmt.Sprintf(" (first of a run of %d back to back)", g.N)
	default:
		return fmt.Sprintf(" (first of %d started together)", g.N)
	}
}

// readArgs returns the arguments of a read-back slice (nil: none).
func (t *Timeline) readArgs(s *Slice) *sliceArgs {
	ref := s.ref
	if ref&boundMask == boundRef {
		if i := int(ref & boundIdxMax); i < len(t.bound) {
			ref = t.bound[i].ref
		}
	}
	if ref > 0 && int(ref) <= len(t.args) {
		return &t.args[ref-1]
	}
	return nil
}

// Args returns the bytes an instruction slice moves or reads and its flops
// (see isa.Instr.Amount); 0, 0 for stalls, flag marks and issue slots (the
// lane that runs the issued instruction carries its bytes and flops, so
// that they sum over a trace's slices once).
func (t *Timeline) Args(s *Slice) (bytes int64, flops float64) {
	if s.Class == ClassIssue {
		return 0, 0
	}
	if in, g, ok := t.instr(s); ok {
		return amount(&in, g, t.VectorRepeatBytes)
	}
	if a := t.readArgs(s); a != nil {
		return a.bytes, a.flops
	}
	return 0, 0
}

// PeakBandwidth returns the largest GM bandwidth sample (bytes/s).
func (t *Timeline) PeakBandwidth() float64 {
	if n := len(t.Bandwidth); n > 0 {
		return max(t.peakBW, t.Bandwidth[n-1].Value)
	}
	return t.peakBW
}

// keep packs c, the instruction of a slice ending at end, into the
// instruction arena and returns its ref (0 when the arena is full: the slice
// then has no text).
func (t *Timeline) keep(c *cinstr, end sim.Time) uint32 {
	n := len(t.code)
	if n == 0 || len(t.code[n-1])+maxPacked > codeChunk {
		if t.codeBase+n >= maxChunks {
			return 0
		}
		t.code = append(t.code, make([]byte, 0, codeChunk))
		t.codeEnd = append(t.codeEnd, 0)
		n++
	}
	t.codeEnd[n-1] = max(t.codeEnd[n-1], end)
	b := t.code[n-1]
	off := len(b)
	t.code[n-1] = b[:off+putPacked(b[off:off+maxPacked], c)]
	return (uint32(t.codeBase+n-1)<<codeShift | uint32(off)) + 1
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
	c.grow(len(t.Lanes)-1, len(t.Buffers)-1)
	t.Cores = append(t.Cores, nil)
	copy(t.Cores[i+1:], t.Cores[i:])
	t.Cores[i] = c
	return c
}

// grow makes room for lane p and buffer b.
func (c *CoreTimeline) grow(p, b int) {
	for len(c.Lanes) <= p {
		c.Lanes = append(c.Lanes, Lane{})
		c.stall = append(c.stall, [arch.NumCauses]sim.Time{})
	}
	for len(c.Occ) <= b {
		c.Occ = append(c.Occ, nil)
	}
}

// instrNames returns the names instructions print with: the machine's lanes
// and buffers (recorded runs; read-back traces carry their text).
func (t *Timeline) instrNames() *isa.Names { return t.names }

// LaneName returns the name of lane p.
func (t *Timeline) LaneName(p int) string {
	if p < len(t.Lanes) {
		return t.Lanes[p]
	}
	return fmt.Sprintf("lane%d", p)
}

// BufferName returns the name of buffer b.
func (t *Timeline) BufferName(b int) string {
	if b < len(t.Buffers) {
		return t.Buffers[b]
	}
	return fmt.Sprintf("buffer%d", b)
}

// BufferCapacity returns the per-core capacity of buffer b (0 = unknown).
func (t *Timeline) BufferCapacity(b int) int64 {
	if b < len(t.Capacity) {
		return t.Capacity[b]
	}
	return 0
}

// footprint estimates the bytes held (the recorder's memory limit).
func (t *Timeline) footprint() int64 {
	return t.arena.bytes() + int64(len(t.code))*codeChunk + int64(t.nflows)*int64(unsafe.Sizeof(Flow{}))
}

// dropBefore drops the events that end before t, in whole blocks, and
// records t as Dropped.
func (t *Timeline) dropBefore(cut sim.Time) {
	if cut <= t.Dropped {
		return
	}
	t.Dropped = cut
	for _, c := range t.Cores {
		for p := range c.Lanes {
			c.Lanes[p].dropBefore(cut)
		}
		k := sort.Search(len(c.Flows), func(i int) bool { return c.Flows[i].Wait >= cut })
		c.Flows = c.Flows[k:]
		t.nflows -= k
	}
	k := 0
	for k < len(t.code)-1 && t.codeEnd[k] < cut {
		k++
	}
	if k > 0 {
		t.code = append([][]byte(nil), t.code[k:]...)
		t.codeEnd = append([]sim.Time(nil), t.codeEnd[k:]...)
		t.codeBase += k
	}
}

// Totals returns the time of lane p per cause over the recorded slices.
// QueueEmpty (idle) is not recorded as slices: it is the rest of the window.
func (c *CoreTimeline) Totals(p int) [arch.NumCauses]sim.Time {
	if p >= len(c.stall) {
		return [arch.NumCauses]sim.Time{}
	}
	return c.stall[p]
}

// Lane returns lane p (an empty lane when the core has none such).
func (c *CoreTimeline) Lane(p int) *Lane {
	if p >= len(c.Lanes) {
		return &Lane{}
	}
	return &c.Lanes[p]
}

// SliceAt returns the index of the slice of lane p covering time t, or -1.
func (c *CoreTimeline) SliceAt(p int, t sim.Time) int {
	l := c.Lane(p)
	for i, s := range l.Scan(l.Search(func(s *Slice) bool { return s.To > t })) {
		if s.From > t {
			break
		}
		if t < s.To {
			return i
		}
	}
	return -1
}

// OccAt returns the allocated bytes of buffer b at time t.
func (c *CoreTimeline) OccAt(b int, t sim.Time) float64 {
	if b >= len(c.Occ) {
		return 0
	}
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

// maxListed bounds the numbers a list given to ParseIDs may name, repeats
// counted: far more cores or ranks than any machine or cluster has.
const maxListed = 1 << 20

// ParseCores parses a list of core numbers and ranges of them ("0-3,8").
func ParseCores(s string) (map[int]bool, error) { return ParseIDs(s, "core", math.MaxInt) }

// ParseIDs parses a list of what (cores, ranks: numbered from 0, below
// limit) — numbers and ranges of numbers, "0-7,12". An error says what
// the list is and what is wrong with it ("core list "x": "x" is not a core
// number (0 or more)").
func ParseIDs(s, what string, limit int) (map[int]bool, error) {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%s list %q: %s", what, s, fmt.Sprintf(format, a...))
	}
	id := func(x string) (int, error) {
		x = strings.TrimSpace(x)
		n, err := strconv.Atoi(x)
		switch {
		case err != nil && errors.Is(err, strconv.ErrRange) && !strings.HasPrefix(x, "-"), err == nil && n >= limit:
			if limit == math.MaxInt { // no list of them known here
				return 0, bad("%s %s: too large", what, x)
			}
			return 0, bad("%s %s: there are at most %d (%ss 0-%d)", what, x, limit, what, limit-1)
		case err != nil || n < 0:
			return 0, bad("%q is not a %s number (0 or more)", x, what)
		}
		return n, nil
	}
	out := map[int]bool{}
	listed := 0 // numbers the parts name, repeats counted (a hostile list repeats a large range)
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			return nil, bad("empty element")
		}
		lo, hi, isRange := strings.Cut(part, "-")
		if isRange && strings.TrimSpace(lo) == "" {
			lo = part // "-3": name it whole
		}
		a, err := id(lo)
		if err != nil {
			return nil, err
		}
		b := a
		if isRange {
			if b, err = id(hi); err != nil {
				return nil, err
			}
			if b < a {
				return nil, bad("range %q ends before it starts", part)
			}
		}
		if b-a > 1<<16 {
			return nil, bad("range %q too large", part)
		}
		if listed += b - a + 1; listed > maxListed {
			return nil, bad("more than %d %ss listed, counting repeats", maxListed, what)
		}
		for i := a; i <= b; i++ {
			out[i] = true
		}
	}
	return out, nil
}

// FormatCores formats sorted core IDs as a list with ranges ("0-3,8").
func FormatCores(ids []int) string {
	var b []byte
	for i := 0; i < len(ids); {
		j := i
		for j+1 < len(ids) && ids[j+1] == ids[j]+1 {
			j++
		}
		if len(b) > 0 {
			b = append(b, ',')
		}
		b = fmt.Appendf(b, "%d", ids[i])
		if j > i {
			b = fmt.Appendf(b, "-%d", ids[j])
		}
		i = j + 1
	}
	return string(b)
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
		if num = strings.TrimSpace(num); strings.IndexFunc(num, unicode.IsLetter) >= 0 {
			break // (another unit: "107days" is not 107day seconds)
		}
		ps, err := decimalTimes(num, u.ps)
		if err != nil {
			return 0, fmt.Errorf("time %q: %v", s, err)
		}
		return sim.Time(ps), nil
	}
	return 0, fmt.Errorf("time %q: needs a number and a unit (ps, ns, us, µs, ms, s)", s)
}

// decimalTimes returns the non-negative decimal num times unit, exactly
// (num a string, or a JSON number as written: parseMicros).
func decimalTimes[T ~string | ~[]byte](num T, unit int64) (int64, error) {
	ip, fp := num, num[len(num):]
	for i := 0; i < len(num); i++ {
		if num[i] == '.' {
			ip, fp = num[:i], num[i+1:]
			break
		}
	}
	if len(ip) == 0 && len(fp) == 0 {
		return 0, fmt.Errorf("no number")
	}
	var v int64
	for i := 0; i < len(ip); i++ {
		ch := ip[i]
		if ch < '0' || ch > '9' {
			return 0, fmt.Errorf("%q is not a non-negative decimal number (digits and a point, no exponent) before the unit", num)
		}
		d := int64(ch - '0')
		if v > (int64(sim.MaxTime)/unit-d)/10 {
			return 0, errTimeTooLarge
		}
		v = v*10 + d
	}
	v *= unit
	scale := unit
	for i := 0; i < len(fp); i++ {
		ch := fp[i]
		if ch < '0' || ch > '9' {
			return 0, fmt.Errorf("%q is not a non-negative decimal number (digits and a point, no exponent) before the unit", num)
		}
		scale /= 10
		if scale == 0 {
			if ch != '0' {
				return 0, fmt.Errorf("finer than a picosecond")
			}
			continue
		}
		d := int64(ch-'0') * scale
		if v > int64(sim.MaxTime)-d {
			return 0, errTimeTooLarge
		}
		v += d
	}
	return v, nil
}

// errTimeTooLarge refuses a time past the simulated time range.
var errTimeTooLarge = fmt.Errorf("too large: simulated time ends at %d ps (%.4g s, about %d days)", int64(sim.MaxTime), sim.MaxTime.Seconds(), int64(sim.MaxTime)/int64(86400*sim.Second))

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

// Footprint returns the approximate memory the timeline's events hold, in
// bytes: lane blocks and tails, packed instructions, flows, counter
// samples, host tasks and kernel launches.
func (t *Timeline) Footprint() int64 {
	n := int64(len(t.Bandwidth))*int64(unsafe.Sizeof(Sample{})) + int64(cap(t.bound))*int64(unsafe.Sizeof(boundMark{})) + t.arena.bytes() +
		int64(cap(t.Host))*int64(unsafe.Sizeof(HostTask{})) + int64(cap(t.Kernels))*int64(unsafe.Sizeof(Kernel{}))
	for _, ch := range t.code {
		n += int64(cap(ch))
	}
	for _, c := range t.Cores {
		for p := range c.Lanes {
			n += c.Lanes[p].footprint()
		}
		n += int64(cap(c.Flows)) * int64(unsafe.Sizeof(Flow{}))
		for b := range c.Occ {
			n += int64(cap(c.Occ[b])) * int64(unsafe.Sizeof(Sample{}))
		}
	}
	for _, a := range t.args {
		n += int64(unsafe.Sizeof(a)) + int64(len(a.text))
	}
	return n
}
