package traces

import (
	"bufio"
	"bytes"
	"cmp"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"runtime/debug"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"unsafe"

	"github.com/davinci-sim/davinci-sim/arch"
	"github.com/davinci-sim/davinci-sim/badinput"
	"github.com/davinci-sim/davinci-sim/isa"
	"github.com/davinci-sim/davinci-sim/sim"
)

// The Chrome trace event format (JSON object form), as read by the Perfetto
// UI and chrome://tracing:
//   - one process per core (pid = core id, "core N"), one thread per pipe
//     (tid = pipe + 1, named after the pipe);
//   - "X" complete events for instructions (cat = instruction class, args:
//     instr, bytes, flops) and stalls (cat "stall", name = cause); an issue
//     slot (cat "issue": the issue lane or DaVinci's scalar unit queueing
//     an instruction for another lane) has the instruction's text but no
//     bytes or flops — those are on the slice of the lane that runs it;
//   - zero-length "X" events for set_flag/wait_flag (args: instr on the
//     set, wait on the wait), linked by flow arrows (bind_id with flow_out
//     on the set, flow_in on the wait it released);
//   - "C" counters per core for buffer occupancy (name = buffer, args.bytes)
//     and, in process "GM", the GM bandwidth in use (args["GB/s"]); in
//     process "power" (machines with a power model), the chip's power by
//     time bin (name "power", args.W; see power.go);
//   - in process "kernels" (runs that launch grids: GPUs), above the
//     others, an "X" slice per kernel launch from its launch to its last
//     block's end (name = the kernel, cat "kernel", args: blocks, the CTAs
//     of its grid, and launch_us, the launch latency before its first
//     block started — the run's, where a window cut the slice; deadlocked:
//     true on the kernel a deadlocked run deadlocked in, which ends at the
//     deadlock), holding a "launch" slice (cat "launch") over that latency
//     (cut to the window: the reader takes the first block's start from
//     its end); launches that overlap go on further threads;
//   - "M" metadata naming processes and threads.
//
// Cores that did nothing in the window but wait at barriers are left out
// (walk.go); otherData's idle_cores names them.
//
// Times are microseconds printed exactly from integer picoseconds, so a
// trace read back gives the same picoseconds.

// GMPid is the process id of the chip-wide GM counters.
const GMPid = 1 << 24

// HostPid is the process id of the host (hosted runs): a thread per host
// lane (HostLanes, tid = lane + 1).
const HostPid = GMPid + 1

// PowerPid is the process id of the chip's power counter (machines with a
// power model).
const PowerPid = GMPid + 2

// KernelsPid is the process id of the kernel launches (runs that launch
// grids): a thread per row of launches (tid = row + 1).
const KernelsPid = GMPid + 3

// traceHeader is the trace's otherData: what the viewer needs beyond events.
type traceHeader struct {
	Generator string           `json:"generator"`
	Machine   string           `json:"machine,omitempty"`
	Program   string           `json:"program,omitempty"`
	FromPs    int64            `json:"from_ps"`
	ToPs      int64            `json:"to_ps"`
	Capacity  map[string]int64 `json:"capacity_bytes,omitempty"`
	// GMBandwidth is the machine's GM bandwidth, bytes/s (what the GM
	// bandwidth counter is a share of; absent: unknown).
	GMBandwidth float64 `json:"gm_bandwidth_bytes_per_s,omitempty"`
	// Ending says how the run ended where it did not complete
	// (Timeline.Ending: "deadlock at 1.5µs"; absent: it completed).
	Ending string `json:"ending,omitempty"`
	// IdleCores lists the cores left out for doing nothing in the window
	// but wait at barriers ("16-31"; see walk.go).
	IdleCores string `json:"idle_cores,omitempty"`
	// UntracedRanks lists the ranks a cluster trace left out for not
	// being among --trace-ranks ("2-7"), as IdleCores lists a chip
	// trace's left-out cores.
	UntracedRanks string `json:"untraced_ranks,omitempty"`
	// DroppedRecords counts the spans and messages a cluster trace left
	// out past its limit (ClusterTrace.Dropped), the earliest of which
	// started at DroppedFromPs: the trace holds all of the run only
	// before then.
	DroppedRecords int64 `json:"dropped_records,omitempty"`
	DroppedFromPs  int64 `json:"dropped_from_ps,omitempty"`
	// SharedSMs names, on a GPU trace, the kernels whose grids have more
	// blocks than the trace has SMs ("scan 576 blocks, 148 SMs"): where an
	// SM runs several of their CTAs at once, its lanes show one CTA's
	// instruction at a time and another's concurrent one has no slice
	// (docs/nvidia.md, "Accounting"), so sums over the slices fall short
	// of report.json's counts.
	SharedSMs string `json:"shared_sms,omitempty"`
}

// notes returns what the header says the trace leaves out of the run
// (Timeline.Notes), each a short phrase, a colon and the details.
func (h *traceHeader) notes() []string {
	var n []string
	if h.DroppedRecords > 0 {
		n = append(n, fmt.Sprintf("truncated from %v: %d spans and messages from then on left out (the trace's limit)", sim.Time(h.DroppedFromPs), h.DroppedRecords))
	}
	if h.SharedSMs != "" {
		n = append(n, "CTAs may share SMs: "+h.SharedSMs)
	}
	if h.UntracedRanks != "" {
		n = append(n, fmt.Sprintf("ranks %s left out (--trace-ranks): the trace holds the other ranks only", h.UntracedRanks))
	}
	return n
}

// generator identifies traces written by this package.
const generator = "davinci-sim"

// writeGCPercent is the GC target while a trace file is written or read.
const writeGCPercent = 10

// WritePerfettoFile writes the timeline to path as a Chrome/Perfetto JSON
// trace, gzip-compressed when path ends in ".gz".
func WritePerfettoFile(path string, tl *Timeline) error {
	return writeTraceFile(path, tl, WritePerfetto)
}

// WriteTraceFile writes the timeline to path in the format its name asks
// for: a Perfetto protobuf trace (.pftrace, .perfetto-trace: see
// WritePftrace) or a Chrome/Perfetto JSON trace (.json, or .json.gz
// gzip-compressed).
func WriteTraceFile(path string, tl *Timeline) error {
	if IsProtoTrace(path) {
		return writeTraceFile(path, tl, WritePftrace)
	}
	return WritePerfettoFile(path, tl)
}

// writeTraceFile writes tl to path with write, through gzip when path ends
// in ".gz".
//
// The writers allocate an instruction text per slice and drop it at once;
// with the default GC target the heap would grow to twice the timeline
// (which is pointer-free: a collection only marks it, ~10 ms for 450 MB)
// before that garbage is collected. Collecting it at 10 % above the live
// heap instead kept the 8192³ SGEMM-cube write at the run's own peak.
func writeTraceFile(path string, tl *Timeline, write func(io.Writer, *Timeline) error) error {
	defer debug.SetGCPercent(debug.SetGCPercent(writeGCPercent))
	return writeMaybeGzip(path, func(w io.Writer) error { return write(w, tl) })
}

// WriteClusterFile writes a cluster run's timeline to path as Chrome/Perfetto
// JSON (WriteClusterJSON), gzip-compressed when path ends in ".gz".
func WriteClusterFile(path string, ct *ClusterTrace) error {
	return writeMaybeGzip(path, func(w io.Writer) error { return WriteClusterJSON(w, ct) })
}

// writeMaybeGzip creates path and fills it with write, through gzip when
// path ends in ".gz".
func writeMaybeGzip(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	var w io.Writer = f
	var zw *gzip.Writer
	if strings.HasSuffix(path, ".gz") {
		zw = gzip.NewWriter(f)
		w = zw
	}
	err = write(w)
	if zw != nil {
		if cerr := zw.Close(); err == nil {
			err = cerr
		}
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// WritePerfetto writes the timeline as a Chrome/Perfetto JSON trace. The
// output is deterministic.
func WritePerfetto(out io.Writer, tl *Timeline) error {
	w := bufio.NewWriterSize(out, 1<<16)
	h := newTraceHeader(tl)
	hb, err := json.Marshal(h)
	if err != nil {
		return err
	}
	w.WriteString(`{"displayTimeUnit":"ns","otherData":`)
	w.Write(hb)
	w.WriteString(",\n\"traceEvents\":[\n")
	e := &eventWriter{w: w, tl: tl, first: true}
	if err := walkTimeline(tl, e); err != nil {
		return err
	}
	if e.events == 0 {
		e.runEnd(sim.Time(h.ToPs))
	}
	w.WriteString("\n]}\n")
	return w.Flush()
}

// runEnd writes the one event of a trace whose window holds nothing of the
// run (it starts at or after the run's end): a global instant at the run's
// end, t, saying so — the viewers load no trace without an event.
func (e *eventWriter) runEnd(t sim.Time) {
	e.begin("i", 0, 0)
	e.time("ts", t)
	e.str("s", "g")
	e.str("name", "end of the run: nothing of it is in the window")
	e.end()
}

// newTraceHeader returns what a trace of tl states beyond its events.
func newTraceHeader(tl *Timeline) *traceHeader {
	from, to := traceSpan(tl)
	h := &traceHeader{Generator: generator, Machine: tl.Machine, Program: tl.Program, FromPs: int64(from), ToPs: int64(to),
		GMBandwidth: tl.GMBandwidth, Ending: tl.Ending, IdleCores: FormatCores(IdleCores(tl)), SharedSMs: sharedSMs(tl)}
	for b, name := range tl.Buffers {
		if c := tl.BufferCapacity(b); c > 0 {
			if h.Capacity == nil {
				h.Capacity = map[string]int64{}
			}
			h.Capacity[name] = c
		}
	}
	return h
}

// sharedSMs returns the header's shared_sms for tl: its kernels (each
// name once, at most 4, with its most blocks) whose grids have more
// blocks than the SMs the trace shows, 1 + the highest core ID (at most
// the machine's: a grid of more blocks than that may put several CTAs on
// an SM, one after another or at once — the block scheduler deals them
// to cores 0, 1, … first), and that number; "" when none (no kernels,
// no SM).
func sharedSMs(tl *Timeline) string {
	sms := 0
	for _, c := range tl.Cores {
		sms = max(sms, c.ID+1)
	}
	for _, id := range tl.Idle {
		sms = max(sms, id+1)
	}
	if sms == 0 {
		return "" // (no SM in the trace: no slice to miss any)
	}
	var names []string
	blocks := map[string]int{}
	for _, k := range tl.Kernels {
		if k.Blocks <= sms {
			continue
		}
		if _, ok := blocks[k.Name]; !ok {
			names = append(names, k.Name)
		}
		blocks[k.Name] = max(blocks[k.Name], k.Blocks)
	}
	if len(names) == 0 {
		return ""
	}
	var b strings.Builder
	for i, n := range names {
		if i == 4 {
			fmt.Fprintf(&b, " and %d more", len(names)-4)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %d blocks", n, blocks[n])
	}
	fmt.Fprintf(&b, " (more than the %d SMs the trace shows): where an SM runs several CTAs at once, its lanes show one CTA's instruction at a time and another's concurrent one has no slice; report.json counts them all", sms)
	return b.String()
}

// eventWriter is the JSON encoder of a timeline walk.
type eventWriter struct {
	w     *bufio.Writer
	tl    *Timeline
	pid   int // the current core
	tid0  int // the thread id of the current core's lanes minus 1 + lane (0; a cluster trace's drill-down: its first track)
	first bool
	buf   []byte
	// events counts the events written but metadata ("M").
	events int
}

func (e *eventWriter) core(c *CoreTimeline, lanes int) error {
	e.pid = c.ID
	e.meta(c.ID, 0, "process_name", "name", fmt.Sprintf("core %d", c.ID))
	e.metaInt(c.ID, 0, "process_sort_index", c.ID)
	for p := range lanes {
		e.meta(c.ID, p+1, "thread_name", "name", e.tl.LaneName(p))
		e.metaInt(c.ID, p+1, "thread_sort_index", p)
	}
	return nil
}

func (e *eventWriter) occupancy(b int, s Sample) error {
	e.counter(e.pid, e.tl.BufferName(b), "bytes", s)
	return nil
}

func (e *eventWriter) host(t *HostTask, first bool) error {
	if first {
		e.meta(HostPid, 0, "process_name", "name", "host")
		e.metaInt(HostPid, 0, "process_sort_index", -1) // above the cores
		for l, name := range HostLanes {
			e.meta(HostPid, l+1, "thread_name", "name", name)
			e.metaInt(HostPid, l+1, "thread_sort_index", l)
		}
	}
	e.begin("X", HostPid, t.Lane()+1)
	e.time("ts", t.From)
	e.time("dur", t.To-t.From)
	e.str("name", t.Name)
	e.str("cat", t.Kind)
	e.end()
	return nil
}

func (e *eventWriter) bandwidth(s Sample, first bool) error {
	if first {
		e.meta(GMPid, 0, "process_name", "name", "GM")
		e.metaInt(GMPid, 0, "process_sort_index", GMPid)
	}
	s.Value /= 1e9
	e.counter(GMPid, "GM bandwidth", "GB/s", s)
	return nil
}

func (e *eventWriter) power(s Sample, first bool) error {
	if first {
		e.meta(PowerPid, 0, "process_name", "name", "power")
		e.metaInt(PowerPid, 0, "process_sort_index", PowerPid)
	}
	e.counter(PowerPid, "power", "W", s)
	return nil
}

// kernelsProcessRank orders the kernels process above the others (the
// host's is -1).
const kernelsProcessRank = -2

// kernelThreadName names row l of the kernel launches.
func kernelThreadName(l int) string {
	if l == 0 {
		return "kernels"
	}
	return fmt.Sprintf("kernels %d", l+1)
}

func (e *eventWriter) kernels(ks []Kernel, lanes []int, n int) error {
	e.meta(KernelsPid, 0, "process_name", "name", "kernels")
	e.metaInt(KernelsPid, 0, "process_sort_index", kernelsProcessRank)
	for l := range n {
		e.meta(KernelsPid, l+1, "thread_name", "name", kernelThreadName(l))
		e.metaInt(KernelsPid, l+1, "thread_sort_index", l)
	}
	for i := range ks {
		k := &ks[i]
		// The launch first: a viewer nests the slice that comes later of
		// two starting together.
		e.begin("X", KernelsPid, lanes[i]+1)
		e.time("ts", k.Launched)
		e.time("dur", k.Finished-k.Launched)
		e.str("name", k.Name)
		e.str("cat", "kernel")
		e.buf = append(e.buf, `,"args":{"blocks":`...)
		e.buf = strconv.AppendInt(e.buf, int64(k.Blocks), 10)
		e.buf = append(e.buf, `,"launch_us":`...)
		e.buf = appendMicros(e.buf, k.LaunchLatency())
		if k.Deadlocked {
			e.buf = append(e.buf, `,"deadlocked":true`...)
		}
		e.buf = append(e.buf, '}')
		e.end()
		if k.Started > k.Launched {
			e.begin("X", KernelsPid, lanes[i]+1)
			e.time("ts", k.Launched)
			e.time("dur", k.Started-k.Launched)
			e.str("name", "launch")
			e.str("cat", "launch")
			e.end()
		}
	}
	return nil
}

func (e *eventWriter) begin(ph string, pid, tid int) {
	b := e.buf[:0]
	if !e.first {
		b = append(b, ",\n"...)
	}
	e.first = false
	if ph != "M" {
		e.events++
	}
	b = append(b, `{"ph":"`...)
	b = append(b, ph...)
	b = append(b, `","pid":`...)
	b = strconv.AppendInt(b, int64(pid), 10)
	b = append(b, `,"tid":`...)
	b = strconv.AppendInt(b, int64(tid), 10)
	e.buf = b
}

func (e *eventWriter) end() {
	e.buf = append(e.buf, '}')
	e.w.Write(e.buf)
}

func (e *eventWriter) str(key, v string) {
	e.buf = append(e.buf, `,"`...)
	e.buf = append(e.buf, key...)
	e.buf = append(e.buf, `":`...)
	e.buf = appendJSONString(e.buf, v)
}

func (e *eventWriter) time(key string, t sim.Time) {
	e.buf = append(e.buf, `,"`...)
	e.buf = append(e.buf, key...)
	e.buf = append(e.buf, `":`...)
	e.buf = appendMicros(e.buf, t)
}

func (e *eventWriter) meta(pid, tid int, name, key, v string) {
	e.begin("M", pid, tid)
	e.str("name", name)
	e.buf = append(e.buf, `,"args":{`...)
	e.buf = appendJSONString(e.buf, key)
	e.buf = append(e.buf, ':')
	e.buf = appendJSONString(e.buf, v)
	e.buf = append(e.buf, '}')
	e.end()
}

func (e *eventWriter) metaInt(pid, tid int, name string, v int) {
	e.begin("M", pid, tid)
	e.str("name", name)
	e.buf = append(e.buf, `,"args":{"sort_index":`...)
	e.buf = strconv.AppendInt(e.buf, int64(v), 10)
	e.buf = append(e.buf, '}')
	e.end()
}

func (e *eventWriter) slice(ev *sliceEvent) error {
	s := &ev.s
	e.begin("X", e.pid, e.tid0+ev.lane+1)
	e.time("ts", s.From)
	e.time("dur", s.To-s.From)
	e.str("name", ev.name)
	e.str("cat", ev.cat)
	if ev.bind != 0 {
		e.buf = append(e.buf, `,"bind_id":`...)
		e.buf = strconv.AppendUint(e.buf, ev.bind, 10)
		if ev.set {
			e.buf = append(e.buf, `,"flow_out":true`...)
		} else {
			e.buf = append(e.buf, `,"flow_in":true`...)
		}
	}
	if ev.text != "" || ev.bytes != 0 || ev.flops != 0 {
		e.buf = append(e.buf, `,"args":{`...)
		sep := ""
		if ev.text != "" {
			// A flow arrow takes its producer's args and merges its
			// consumer's in: the wait mark's instruction goes under its own
			// key so that the two do not collide (the viewer warns) and the
			// arrow shows both ends.
			if s.Class == ClassFlag && ev.name == isa.OpWaitFlag.String() {
				e.buf = append(e.buf, `"wait":`...)
			} else {
				e.buf = append(e.buf, `"instr":`...)
			}
			e.buf = appendJSONString(e.buf, ev.text)
			sep = ","
		}
		if ev.bytes != 0 {
			e.buf = append(e.buf, sep...)
			e.buf = append(e.buf, `"bytes":`...)
			e.buf = strconv.AppendInt(e.buf, ev.bytes, 10)
			sep = ","
		}
		if ev.flops != 0 {
			e.buf = append(e.buf, sep...)
			e.buf = append(e.buf, `"flops":`...)
			e.buf = strconv.AppendFloat(e.buf, ev.flops, 'g', -1, 64)
		}
		e.buf = append(e.buf, '}')
	}
	e.end()
	return nil
}

func (e *eventWriter) counter(pid int, name, key string, s Sample) {
	e.begin("C", pid, 0)
	e.time("ts", s.T)
	e.str("name", name)
	e.buf = append(e.buf, `,"args":{`...)
	e.buf = appendJSONString(e.buf, key)
	e.buf = append(e.buf, ':')
	e.buf = strconv.AppendFloat(e.buf, s.Value, 'g', -1, 64)
	e.buf = append(e.buf, '}')
	e.end()
}

// appendMicros appends t (picoseconds) as exact decimal microseconds.
func appendMicros(b []byte, t sim.Time) []byte {
	if t < 0 {
		b = append(b, '-')
		t = -t
	}
	b = strconv.AppendInt(b, int64(t/sim.Microsecond), 10)
	frac := int64(t % sim.Microsecond)
	if frac == 0 {
		return b
	}
	var d [6]byte
	for i := 5; i >= 0; i-- {
		d[i] = byte('0' + frac%10)
		frac /= 10
	}
	n := 6
	for d[n-1] == '0' {
		n--
	}
	b = append(b, '.')
	return append(b, d[:n]...)
}

// parseMicros converts a JSON number of microseconds (as written: a
// json.Number, or its bytes) to picoseconds, exactly when it has at most
// six decimals (rounded to the nearest otherwise, halves up); empty: 0.
func parseMicros[T ~string | ~[]byte](n T) (sim.Time, error) {
	if len(n) == 0 {
		return 0, nil
	}
	exponent := false
	for i := 0; i < len(n); i++ {
		exponent = exponent || n[i] == 'e' || n[i] == 'E'
	}
	if !exponent {
		num := n
		if n[0] == '-' {
			num = n[1:]
		}
		if v, err := decimalTimes(num, int64(sim.Microsecond)); err == nil {
			if n[0] == '-' {
				v = -v
			}
			return sim.Time(v), nil
		}
	}
	s := string(n)
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("bad time %q", s)
	}
	// (math.Floor: a conversion truncates toward 0, which took -1e-6 µs,
	// -1 ps, for 0.)
	ps := math.Floor(float64(f*1e6) + 0.5)
	if math.IsNaN(ps) || math.Abs(ps) >= float64(sim.MaxTime) {
		return 0, fmt.Errorf("time %s µs is out of range (over about 106 days)", s)
	}
	return sim.Time(ps), nil
}

func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&15])
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}

// rawEvent is one trace event as read back.
type rawEvent struct {
	Ph      string                     `json:"ph"`
	Name    string                     `json:"name"`
	Cat     string                     `json:"cat"`
	Pid     int                        `json:"pid"`
	Tid     int                        `json:"tid"`
	Ts      json.Number                `json:"ts"`
	Dur     json.Number                `json:"dur"`
	BindID  uint64                     `json:"bind_id"`
	FlowIn  bool                       `json:"flow_in"`
	FlowOut bool                       `json:"flow_out"`
	Args    map[string]json.RawMessage `json:"args"`
}

// traceEvent is what the reader uses of a trace event: a rawEvent as
// decoded (toTrace), or one scanned from the bytes (jsonfast.go). Its byte
// slices may point into a read buffer: event keeps none of them.
type traceEvent struct {
	Ph, Name, Cat   string
	Pid, Tid        int
	Ts, Dur         []byte // the numbers as written (nil: absent)
	BindID          uint64
	FlowIn, FlowOut bool
	Args            eventArgs
}

// eventArgs are the args of a trace event the reader uses, each the value
// as written (a json.RawMessage; nil: absent).
type eventArgs struct {
	instr, wait, bytes, flops, gbps, watts, name, blocks, launchUs, deadlocked []byte
}

// argField returns the field of a that args key key goes to (nil: a key
// the reader does not use); key a map's string or the scanned bytes
// (jsonfast.go), whose switch compares without making a string.
func argField[T ~string | ~[]byte](a *eventArgs, key T) *[]byte {
	switch string(key) {
	case "instr":
		return &a.instr
	case "wait":
		return &a.wait
	case "bytes":
		return &a.bytes
	case "flops":
		return &a.flops
	case "GB/s":
		return &a.gbps
	case "W":
		return &a.watts
	case "name":
		return &a.name
	case "blocks":
		return &a.blocks
	case "launch_us":
		return &a.launchUs
	case "deadlocked":
		return &a.deadlocked
	}
	return nil
}

// toTrace sets te to ev.
func (ev *rawEvent) toTrace(te *traceEvent) {
	*te = traceEvent{Ph: ev.Ph, Name: ev.Name, Cat: ev.Cat, Pid: ev.Pid, Tid: ev.Tid,
		BindID: ev.BindID, FlowIn: ev.FlowIn, FlowOut: ev.FlowOut}
	if ev.Ts != "" {
		te.Ts = []byte(ev.Ts)
	}
	if ev.Dur != "" {
		te.Dur = []byte(ev.Dur)
	}
	for k, v := range ev.Args {
		if f := argField(&te.Args, k); f != nil {
			*f = v
		}
	}
}

// ReadTraceFile loads a trace written by WriteTraceFile: a Perfetto
// protobuf trace when the name says so (IsProtoTrace), else a JSON one
// (plain or gzip).
func ReadTraceFile(path string) (*Timeline, error) {
	tl, _, err := ReadTraceFileWithin(path, ReadLimits{})
	return tl, err
}

// ReadTraceFileWithin is ReadTraceFile keeping what lim allows; skipped
// lists the cores left out for the memory limit.
func ReadTraceFileWithin(path string, lim ReadLimits) (tl *Timeline, skipped []int, err error) {
	defer debug.SetGCPercent(debug.SetGCPercent(writeGCPercent)) // as writeTraceFile: the per-event garbage is collected early
	if err := badinput.NotPipe(path); err != nil {
		return nil, nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	read := readTrace
	if IsProtoTrace(path) {
		read = readPftrace
	}
	var r io.Reader = f
	if lim.Progress != nil {
		r = countingReader{f, lim.Progress}
	}
	tl, skipped, err = read(r, lim)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return tl, skipped, nil
}

// countingReader adds the bytes read through it to n.
type countingReader struct {
	r io.Reader
	n *atomic.Int64
}

func (c countingReader) Read(p []byte) (int, error) {
	k, err := c.r.Read(p)
	c.n.Add(int64(k))
	return k, err
}

// ReadTrace loads a Chrome/Perfetto JSON trace (plain or gzip) written by
// WritePerfetto into a Timeline. Events it does not understand (other
// phases or categories, processes of negative id) are skipped; one the
// writers never write that it would take wrongly is refused (a time
// before 0, a process past KernelsPid, a thread past maxTraceLanes).
func ReadTrace(r io.Reader) (*Timeline, error) {
	tl, _, err := readTrace(r, ReadLimits{})
	return tl, err
}

// fullReads fills every Read's buffer (unless the stream ends): a gzip
// stream returns at most a block per Read, and json.Decoder, which rescans
// the whitespace it has buffered on every refill, then took time quadratic
// in a run of whitespace (a 1 MB file of 1 GiB of spaces: hours). With
// full reads its buffer grows geometrically and the scan is linear.
type fullReads struct{ r io.Reader }

// Read implements io.Reader.
func (f fullReads) Read(p []byte) (int, error) {
	n, err := io.ReadFull(f.r, p)
	if err == io.ErrUnexpectedEOF && n > 0 {
		err = nil // a short last read; the next one returns io.EOF (or the stream's own error)
	}
	return n, err
}

// newTraceReader returns a reader into tl.
func newTraceReader(tl *Timeline, lim ReadLimits) *traceReader {
	return &traceReader{tl: tl, binds: map[int]map[uint64]bindEnd{}, pipes: map[coreKey]*pipe{}, laneNames: map[int]string{}, bufIdx: map[string]int{}, lim: lim}
}

// readTrace is ReadTrace within limits; it returns the cores skipped for
// the memory limit.
func readTrace(r io.Reader, lim ReadLimits) (*Timeline, []int, error) {
	return readJSONTrace(r, lim, true)
}

// readJSONTrace is readTrace, scanning the events itself when fast (see
// fastEvents; tests compare it with decoding them with encoding/json).
func readJSONTrace(r io.Reader, lim ReadLimits, fast bool) (*Timeline, []int, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	g := &jsonGuard{}
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, nil, err
		}
		defer zr.Close()
		br = bufio.NewReaderSize(fullReads{zr}, 1<<16)
		g.gzip = true
	}
	g.r = br
	in := &jsonIn{dec: json.NewDecoder(g), fast: fast}
	in.dec.UseNumber()
	tl := &Timeline{Done: true}
	rd := newTraceReader(tl, lim)
	if err := readJSON(in, g, rd); err != nil {
		if g.err != nil { // (whichever of the decoder's calls met it)
			return nil, nil, fmt.Errorf("bad trace: %v", g.err)
		}
		return nil, nil, err
	}
	skipped := rd.finish()
	if rd.err != nil {
		return nil, nil, rd.err
	}
	return tl, skipped, nil
}

// readJSON reads a JSON trace from in (reading through g) into rd.
func readJSON(in *jsonIn, g *jsonGuard, rd *traceReader) error {
	dec := in.dec
	tok, err := dec.Token()
	if err != nil {
		return fmt.Errorf("not a JSON trace: %v", err)
	}
	switch tok {
	case json.Delim('['):
		if err := rd.events(in, g, false); err != nil {
			return err
		}
		dec = in.dec
	case json.Delim('{'):
		seen := map[string]bool{}
		for in.dec.More() {
			dec = in.dec
			kt, err := dec.Token()
			if err != nil {
				return fmt.Errorf("bad trace: %v", err)
			}
			key, _ := kt.(string)
			if (key == "traceEvents" || key == "otherData") && seen[key] {
				// (The writers write each once; 2000 copies of a header
				// naming idle cores 0-65535 took 87 s, each expanded.)
				return fmt.Errorf("bad trace: a second %q (at byte %d; the writers write one)", key, in.offset())
			}
			seen[key] = true
			switch key {
			case "traceEvents":
				if t, err := dec.Token(); err != nil || t != json.Delim('[') {
					return errors.New("bad trace: traceEvents is not an array")
				}
				if err := rd.events(in, g, true); err != nil {
					return err
				}
			case "otherData":
				var h traceHeader
				g.bound(in.offset())
				err := dec.Decode(&h)
				g.unbound(in, "otherData", -1)
				if err != nil {
					return fmt.Errorf("bad trace: otherData: %v", err)
				}
				if err := rd.setHeader(&h); err != nil {
					return fmt.Errorf("bad trace: otherData: %v", err)
				}
			default:
				if err := skipValue(dec); err != nil {
					return fmt.Errorf("bad trace: %q: %v", key, err)
				}
			}
		}
	default:
		return errors.New("not a JSON trace: want an object or an array of events")
	}
	dec = in.dec
	if tok == json.Delim('{') {
		if _, err := dec.Token(); err != nil { // its closing brace
			return fmt.Errorf("bad trace: %v", err)
		}
	}
	// Nothing may follow the trace (two traces in one file, garbage), and
	// a gzip stream is read to its end, where its checksum is checked.
	if t, err := dec.Token(); err != io.EOF {
		if err == nil {
			return fmt.Errorf("bad trace: data after the trace (%v)", t)
		}
		return fmt.Errorf("bad trace: after the trace: %v", err)
	}
	return nil
}

// maxSkipDepth bounds the nesting of a value skipped (a top-level key the
// reader does not use), as encoding/json bounds a value decoded.
const maxSkipDepth = 10000

// skipValue reads past the next value in dec token by token, holding one
// token at a time (a foreign trace's metadata may be large: Chrome's
// stackFrames; json.RawMessage would hold all of it).
func skipValue(dec *json.Decoder) error {
	depth := 0
	for {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		switch t {
		case json.Delim('['), json.Delim('{'):
			if depth++; depth > maxSkipDepth {
				return fmt.Errorf("nested deeper than %d", maxSkipDepth)
			}
		case json.Delim(']'), json.Delim('}'):
			depth--
		}
		if depth == 0 {
			return nil
		}
	}
}

// maxTraceToken bounds a JSON token of a trace read (a string with its
// quotes, a number or literal) and a run of whitespace; maxTraceValue
// bounds an event or the otherData object, the values decoded whole (a
// key the reader does not use is skipped token by token, skipValue).
// json.Decoder holds the whole token, whitespace run or value it is
// reading, so without them a small gzip file could make it hold
// gigabytes: 510 KB of gzip inflating to 512 MiB of spaces took 32 s and
// 1.5 GB, 2 MB inflating to a 2 GiB event name more than 4.5 GB and
// minutes (fuzz review); now each is refused within 0.2 s and 25 MB. The
// writers' tokens and events are far below: the examples' longest string
// is 299 bytes (b200-ozaki's shared_sms), their largest event 236 bytes
// and otherData 527 bytes, whitespace runs 1 byte; the longest list a
// header can hold is idle_cores naming every other core below
// maxIdleCore (~200 KB; untraced_ranks, at most 4096 ranks, ~10 KB); an
// instruction's text is one line of a program. An event just within
// maxTraceValue of distinct args (~430 000) decodes in 0.7 s and 60 MB.
const (
	maxTraceToken = 1 << 20
	maxTraceValue = 4 << 20
)

// jsonGuard is the reader between a JSON trace's (decompressed) bytes and
// json.Decoder that holds the decoder within maxTraceToken and
// maxTraceValue: it follows the bytes with a small state machine (in or
// out of a string, escapes) and fails, for good, at the first token or
// whitespace run past maxTraceToken; between bound and unbound, it hands
// out no byte beyond maxTraceValue past the value's start, so that the
// decoder, needing more to finish the value, fails there.
type jsonGuard struct {
	r     io.Reader
	gzip  bool  // the stream is a gzip file's contents (the offsets are after decompression)
	pos   int64 // bytes handed out
	state uint8 // guard*: what the last byte handed out was part of
	runAt int64 // where the current token or whitespace run started
	end   int64 // while > 0, the value read may not pass this offset
	err   error // the bound met (then every Read returns it)
}

// What the last byte a jsonGuard handed out was part of.
const (
	guardOutside uint8 = iota // a structural character: {}[],: (or no byte yet)
	guardSpace
	guardString
	guardEscape // a string, just after a backslash
	guardScalar // a number or literal (or anything else outside a string)
)

// errValueBound is the error of the value bound; unbound names the value.
var errValueBound = errors.New("a value past the bound")

// bound holds the value dec decodes next within maxTraceValue; from is
// dec.InputOffset(), which may be up to 2 whitespace runs and a comma or
// colon before the value (each run within maxTraceToken), allowed on top.
func (g *jsonGuard) bound(from int64) {
	g.end = from + maxTraceValue + 2*maxTraceToken + 1
}

// unbound ends bound's value, decoded by dec, which what (with index idx
// unless it is -1) names in the error, with where the value starts.
func (g *jsonGuard) unbound(in *jsonIn, what string, idx int) {
	g.end = 0
	if g.err != errValueBound {
		return
	}
	// The failed Decode left dec at the whitespace before the value,
	// which it holds with (the start of) the value.
	from := in.offset()
	if br, ok := in.dec.Buffered().(io.ByteReader); ok {
		for c, err := br.ReadByte(); err == nil && (c == ' ' || c == '\t' || c == '\n' || c == '\r'); c, err = br.ReadByte() {
			from++
		}
	}
	if idx >= 0 {
		what = fmt.Sprintf("%s %d", what, idx)
	}
	g.err = fmt.Errorf("%s, from %s: longer than %d MiB, which the reader does not hold", what, g.where(from), maxTraceValue>>20)
}

// where says where offset off is, in the error messages.
func (g *jsonGuard) where(off int64) string {
	if g.gzip {
		return fmt.Sprintf("byte %d of the trace (decompressed)", off)
	}
	return fmt.Sprintf("byte %d of the trace", off)
}

// Read implements io.Reader.
func (g *jsonGuard) Read(p []byte) (int, error) {
	if g.err != nil {
		return 0, g.err
	}
	if g.end > 0 {
		if g.pos >= g.end {
			g.err = errValueBound
			return 0, g.err
		}
		p = p[:min(int64(len(p)), g.end-g.pos)]
	}
	n, err := g.r.Read(p)
	if k := g.handOut(p[:n]); k < n {
		return k, g.err
	}
	return n, err
}

// handOut follows b, the bytes read from g.pos on, and returns len(b), or,
// setting g.err, the number of them handed out before the one that takes
// a token or whitespace run past maxTraceToken.
func (g *jsonGuard) handOut(b []byte) int {
	if k := g.scan(b); k < len(b) {
		kind := "a number or literal"
		switch g.state {
		case guardSpace:
			kind = "a run of whitespace"
		case guardString, guardEscape:
			kind = "a string"
		}
		g.pos += int64(k)
		g.err = fmt.Errorf("at %s: %s longer than %d MiB, which the reader does not hold", g.where(g.runAt), kind, maxTraceToken>>20)
		return k
	}
	g.pos += int64(len(b))
	return len(b)
}

// scan follows b, the bytes from g.pos on, and returns len(b), or the
// index of the byte that takes a token or whitespace run past
// maxTraceToken.
func (g *jsonGuard) scan(b []byte) int {
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch g.state {
		case guardString:
			// The common case, a string's bytes: on to its end or a backslash.
			j := i
			for j < len(b) && b[j] != '"' && b[j] != '\\' {
				j++
			}
			if g.pos+int64(j)-g.runAt >= maxTraceToken {
				return int(max(g.runAt+maxTraceToken-g.pos, int64(i)))
			}
			if j == len(b) {
				return len(b)
			}
			i = j
			if b[j] == '"' {
				g.state = guardOutside
			} else {
				g.state = guardEscape
			}
			continue
		case guardEscape:
			g.state = guardString
		default:
			switch c {
			case ' ', '\t', '\n', '\r':
				if g.state != guardSpace {
					g.state, g.runAt = guardSpace, g.pos+int64(i)
				}
			case '"':
				g.state, g.runAt = guardString, g.pos+int64(i)
			case '{', '}', '[', ']', ',', ':':
				g.state = guardOutside
				continue
			default:
				if g.state != guardScalar {
					g.state, g.runAt = guardScalar, g.pos+int64(i)
				}
			}
		}
		if g.pos+int64(i)-g.runAt >= maxTraceToken {
			return i
		}
	}
	return len(b)
}

type bindEnd struct {
	out, in   bool
	src, dst  int
	set, wait sim.Time
	id        int
}

type coreKey struct {
	core int
	lane int
}

// maxTraceLanes bounds the lanes (thread ids) of a process a read trace
// may use: a cluster trace's drill-down into an NPU (--trace-npu) puts a
// thread per core and lane in its rank's process (a 910A's: 3 + 32 × 7);
// a thread past it is refused (the file is not one the reader holds), not
// dropped.
const maxTraceLanes = 1 << 12

// maxTraceLaneSlots bounds the lanes of all processes together: each costs
// ~800 bytes read whether it holds slices or not (a process's lanes run to
// its highest thread), so that a hostile file of many processes naming
// high threads is refused rather than filling memory — at 2^20, 256
// processes naming thread 4095 in 37 KB of JSON took 0.8 GB; at 2^17 at
// most ~100 MB — (a 32-core chip trace has 224; a cluster trace of 4096
// ranks with a 910A drill-down 12 512; of 32 768, ~100 000).
const maxTraceLaneSlots = 1 << 17

// pidError is the error of an event or track of process pid, past the
// process ids the readers hold: cores below GMPid (2^24; cores says how
// the trace numbers them), then the chip's processes GMPid to KernelsPid.
// (The ids from GMPid on are the chip's, so a core's event of a process
// past them was skipped as a foreign process's, the core left out.)
func pidError(pid int, cores string) error {
	return fmt.Errorf("process %d: past the process ids the reader holds (%s, below 2^24; %d to %d GM, host, power and kernels)", pid, cores, GMPid, KernelsPid)
}

// lanesError is the error of a thread past maxTraceLanes (thread: how
// the file numbers it).
func lanesError(pid int, thread string) error {
	return fmt.Errorf("process %d, thread %s: more than %d threads in a process (lanes), which the reader does not hold", pid, thread, maxTraceLanes)
}

type traceReader struct {
	tl        *Timeline
	pipes     map[coreKey]*pipe // slices as read, sorted and added at the end
	laneNames map[int]string    // thread names by lane
	nlanes    int               // 1 + the largest lane seen
	coreLanes map[int]int       // per core kept, 1 + the largest lane named or used
	slots     int64             // the sum of coreLanes (≤ maxTraceLaneSlots)
	bufIdx    map[string]int    // buffer (counter) names in order of appearance
	header    *traceHeader
	binds     map[int]map[uint64]bindEnd // arrow ends by core and bind id, until matched
	argRefs   map[sliceArgs]uint32       // the args entries by value
	lim       ReadLimits
	cur       int              // the core whose slices are being read
	hold      int              // slices begun and not ended (the protobuf reader)
	seenCore  map[int]bool     // cores whose slices were read
	full      bool             // the memory limit was passed
	flushed   map[int]bool     // cores whose slices went into the timeline before the end
	nflows    int64            // flows added
	samples   int64            // counter samples read
	textBytes int64            // bytes of the distinct instruction texts
	skipped   map[int]bool     // cores skipped for the memory limit
	spans     map[coreKey]bool // lanes holding spans (a cluster trace's, kernels'): not checked for overlaps
	err       error            // the first lane found with overlapping slices (flushCore)
	seen      bool
	lo, hi    sim.Time
}

// maxIdleCore bounds the core numbers a trace's idle_cores may name (so
// that a hostile header cannot make a map of millions of cores).
const maxIdleCore = 1 << 16

// setHeader takes a trace's header (otherData), with the cores it names as
// left out for idling (idle_cores, this package's traces).
func (rd *traceReader) setHeader(h *traceHeader) error {
	rd.header = h
	rd.tl.Idle = nil
	if h.Generator != generator {
		return nil
	}
	if h.GMBandwidth < 0 {
		return fmt.Errorf("gm_bandwidth_bytes_per_s %g: negative", h.GMBandwidth)
	}
	if h.FromPs < 0 || h.ToPs < h.FromPs {
		return fmt.Errorf("from_ps %d, to_ps %d: want 0 ≤ from_ps ≤ to_ps", h.FromPs, h.ToPs)
	}
	if h.DroppedRecords < 0 || h.DroppedFromPs < 0 {
		return fmt.Errorf("dropped_records %d, dropped_from_ps %d: negative", h.DroppedRecords, h.DroppedFromPs)
	}
	if h.UntracedRanks != "" {
		if _, err := ParseIDs(h.UntracedRanks, "rank", maxIdleCore); err != nil {
			return fmt.Errorf("untraced_ranks: %v", err) // (a note quotes them)
		}
	}
	if h.IdleCores == "" {
		return nil
	}
	ids, err := ParseIDs(h.IdleCores, "core", maxIdleCore)
	if err != nil {
		return fmt.Errorf("idle_cores: %v", err)
	}
	for id := range ids {
		rd.tl.Idle = append(rd.tl.Idle, id)
	}
	sort.Ints(rd.tl.Idle)
	return nil
}

// events reads the events of the array whose '[' in has just read (obj:
// the traceEvents of an object), leaving in after its ']'. It scans the
// events as the writers write them itself (fastEvents) and decodes the
// rest, from the first it does not take, with encoding/json.
func (rd *traceReader) events(in *jsonIn, g *jsonGuard, obj bool) error {
	var i int
	if in.fast {
		var done bool
		var err error
		if i, done, err = rd.fastEvents(in, g, obj); err != nil || done {
			return err
		}
	}
	dec := in.dec
	var ev rawEvent
	var te traceEvent
	for ; dec.More(); i++ {
		ev = rawEvent{}
		g.bound(in.offset())
		err := dec.Decode(&ev)
		g.unbound(in, "trace event", i)
		if err != nil {
			return fmt.Errorf("bad trace event %d: %v", i, err)
		}
		ev.toTrace(&te)
		if err := rd.event(&te); err != nil {
			return fmt.Errorf("trace event %d: %v", i, err)
		}
	}
	if _, err := dec.Token(); err != nil {
		return fmt.Errorf("bad trace: %v", err)
	}
	return nil
}

func (rd *traceReader) span(from, to sim.Time) {
	if !rd.seen || from < rd.lo {
		rd.lo = from
	}
	if !rd.seen || to > rd.hi {
		rd.hi = to
	}
	rd.seen = true
}

// argString returns the string the arg value raw holds ("" when absent
// or not a string).
func argString(raw []byte) string {
	if s, ok := plainString(raw); ok {
		return string(s)
	}
	var s string
	if raw != nil {
		_ = json.Unmarshal(raw, &s)
	}
	return s
}

// argText is argString, for a text that is kept only as a slice's args
// (traceReader.args copies it): one without escapes in the bytes of raw.
func argText(raw []byte) string {
	if s, ok := plainString(raw); ok {
		return unsafe.String(unsafe.SliceData(s), len(s))
	}
	return argString(raw)
}

func argFloat(raw []byte, key string) float64 {
	f, _ := argNumber(raw, key)
	return f
}

// argNumber returns the number the arg value raw (of key) holds (0 when
// absent) and an error when it is there but not a finite number (1e400
// read as 0).
func argNumber(raw []byte, key string) (float64, error) {
	if raw == nil {
		return 0, nil
	}
	if f, ok := plainInt(raw); ok {
		return f, nil
	}
	var f float64
	if err := json.Unmarshal(raw, &f); err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, fmt.Errorf("arg %q: want a finite number, got %s", key, badinput.Clip(string(raw), 40))
	}
	return f, nil
}

// event reads one event of a JSON trace into rd: its slices, counter
// samples and the metadata naming cores and lanes; other events are
// skipped.
func (rd *traceReader) event(ev *traceEvent) error {
	if ev.Pid > KernelsPid && (ev.Ph == "X" || ev.Ph == "C" || ev.Ph == "M") {
		return pidError(ev.Pid, fmt.Sprintf("cores 0 to %d", GMPid-1))
	}
	switch ev.Ph {
	case "X":
		if ev.Pid == KernelsPid {
			return rd.kernelEvent(ev)
		}
		host := ev.Pid == HostPid
		if !host && (ev.Pid < 0 || ev.Pid >= GMPid || ev.Tid < 1) {
			return nil
		}
		if !host && ev.Tid > maxTraceLanes {
			return lanesError(ev.Pid, strconv.Itoa(ev.Tid))
		}
		from, dur, err := eventSpan(ev)
		if err != nil {
			return err
		}
		if dur < 0 {
			return fmt.Errorf("negative duration")
		}
		if sim.Saturated(sim.Add(from, dur)) {
			return fmt.Errorf("slice end %v + %v is out of range (over about 106 days)", from, dur)
		}
		if host {
			return rd.host(ev.Cat, ev.Name, from, from+dur)
		}
		a := sliceArgs{text: argText(ev.Args.instr)}
		if a.text == "" {
			a.text = argText(ev.Args.wait)
		}
		b, err := argNumber(ev.Args.bytes, "bytes")
		if err != nil {
			return err
		}
		if a.flops, err = argNumber(ev.Args.flops, "flops"); err != nil {
			return err
		}
		if b < 0 || b > math.MaxInt64/2 || a.flops < 0 {
			return fmt.Errorf("args bytes %g, flops %g: want counts ≥ 0 (bytes below 2^62)", b, a.flops)
		}
		a.bytes = int64(b)
		_, err = rd.slice(ev.Pid, ev.Tid-1, from, from+dur, ev.Name, ev.Cat, a, ev.BindID, ev.FlowOut, ev.FlowIn)
		return err
	case "C":
		t, err := eventTime(ev)
		if err != nil {
			return err
		}
		if ev.Pid == GMPid {
			return rd.bandwidth(t, argFloat(ev.Args.gbps, "GB/s"))
		}
		if ev.Pid == PowerPid {
			rd.power(t, argFloat(ev.Args.watts, "W"))
			return nil
		}
		if ev.Pid < 0 || ev.Pid >= GMPid || ev.Name == "" {
			return nil
		}
		if ev.Args.bytes == nil {
			return nil // not a buffer's (a cluster trace's NPU power, GM bandwidth)
		}
		b, err := argNumber(ev.Args.bytes, "bytes")
		if err != nil {
			return err
		}
		return rd.occupancy(ev.Pid, ev.Name, t, b)
	case "M":
		if ev.Name == "process_name" && ev.Pid >= 0 && ev.Pid < GMPid {
			rd.addCore(ev.Pid)
		}
		if ev.Name == "thread_name" && ev.Pid >= 0 && ev.Pid < GMPid && ev.Tid >= 1 {
			if ev.Tid > maxTraceLanes {
				return lanesError(ev.Pid, strconv.Itoa(ev.Tid))
			}
			rd.laneName(ev.Tid-1, argString(ev.Args.name))
			if rd.lim.Cores == nil || rd.lim.Cores[ev.Pid] {
				return rd.useLanes(ev.Pid, ev.Tid)
			}
		}
	}
	return nil
}

// eventTime returns an event's time (ts), refusing one before 0: the
// writers write times from the run's start.
func eventTime(ev *traceEvent) (sim.Time, error) {
	t, err := parseMicros(ev.Ts)
	if err == nil && t < 0 {
		return 0, errors.New("negative time")
	}
	return t, err
}

// eventSpan returns a complete event's start (eventTime) and duration.
func eventSpan(ev *traceEvent) (from, dur sim.Time, err error) {
	if from, err = eventTime(ev); err != nil {
		return 0, 0, err
	}
	dur, err = parseMicros(ev.Dur)
	return from, dur, err
}

// kernelEvent reads a slice of the kernels process: a launch (cat
// "kernel"; its "launch" slice is derived from its args).
func (rd *traceReader) kernelEvent(ev *traceEvent) error {
	if ev.Cat == "launch" {
		from, dur, err := eventSpan(ev)
		if err != nil {
			return err
		}
		return rd.launchSlice(from, from+dur)
	}
	if ev.Cat != "kernel" {
		return nil
	}
	from, dur, err := eventSpan(ev)
	if err != nil {
		return err
	}
	if dur < 0 || sim.Saturated(sim.Add(from, dur)) {
		return fmt.Errorf("kernel %q: bad duration %v", badinput.Clip(ev.Name, 40), dur)
	}
	blocks, err := argNumber(ev.Args.blocks, "blocks")
	if err != nil {
		return err
	}
	var launch sim.Time
	if raw := ev.Args.launchUs; raw != nil {
		if launch, err = parseMicros(bytes.TrimSpace(raw)); err != nil {
			return fmt.Errorf("kernel %q: launch_us: %v", badinput.Clip(ev.Name, 40), err)
		}
	}
	var deadlocked bool
	if raw := ev.Args.deadlocked; raw != nil {
		if err := json.Unmarshal(raw, &deadlocked); err != nil {
			return fmt.Errorf("kernel %q: deadlocked: want true or false, got %s", badinput.Clip(ev.Name, 40), badinput.Clip(string(raw), 40))
		}
	}
	return rd.kernel(ev.Name, blocks, from, launch, from+dur, deadlocked)
}

// kernel adds a kernel launch from from to to whose launch latency was
// launch (deadlocked: the run deadlocked in it, at to). Its first block
// started where its "launch" slice ends (launchSlice, which follows it);
// with none, at from.
func (rd *traceReader) kernel(name string, blocks float64, from, launch, to sim.Time, deadlocked bool) error {
	if blocks < 0 || blocks > math.MaxInt32 || launch < 0 {
		return fmt.Errorf("kernel %q: blocks %g, launch %v: want 0 ≤ blocks < 2^31 and a latency ≥ 0", badinput.Clip(name, 40), blocks, launch)
	}
	rd.tl.Kernels = append(rd.tl.Kernels, Kernel{Name: name, Blocks: int(blocks), Launched: from, Started: from, Finished: to, Deadlocked: deadlocked, Latency: launch})
	rd.span(from, to)
	return nil
}

// launchSlice reads the "launch" slice [from, to] of the kernel read
// last: its first block started at to (and its Latency is kept only if
// greater than to − from: cut by a window).
func (rd *traceReader) launchSlice(from, to sim.Time) error {
	n := len(rd.tl.Kernels)
	if n == 0 || rd.tl.Kernels[n-1].Launched != from {
		return nil // (not a launch of a kernel read)
	}
	k := &rd.tl.Kernels[n-1]
	if to < from || to > k.Finished || k.Latency < to-from {
		return fmt.Errorf("kernel %q: launch slice %v..%v: want one within the kernel, no longer than its launch_us %v", badinput.Clip(k.Name, 40), from, to, k.Latency)
	}
	k.Started = to
	k.setLatency(k.Latency)
	return nil
}

// useLanes notes that core has lanes 0..n-1 (named or holding slices):
// the lanes its timeline gets. It refuses a trace whose processes'
// lanes together pass maxTraceLaneSlots.
func (rd *traceReader) useLanes(core, n int) error {
	have := rd.coreLanes[core]
	if n <= have {
		return nil
	}
	if rd.coreLanes == nil {
		rd.coreLanes = map[int]int{}
	}
	rd.coreLanes[core] = n
	rd.slots += int64(n - have)
	if rd.slots > maxTraceLaneSlots {
		return fmt.Errorf("more than %d lanes in all (threads of the processes together), which the reader does not hold", maxTraceLaneSlots)
	}
	return nil
}

// laneName names lane p (the first name given wins).
func (rd *traceReader) laneName(p int, name string) {
	if _, ok := rd.laneNames[p]; !ok {
		rd.laneNames[p] = name
	}
	rd.nlanes = max(rd.nlanes, p+1)
}

// slice adds a slice read back on lane p (0 ≤ p < maxTraceLanes) of core
// (0 ≤ core < GMPid): its name, category (a class name, "stall", "flag",
// or a cluster host's "wait", read as a wait_flag stall), arguments and arrow ends (bind ≠ 0: out = the set_flag, in = the
// wait_flag it released). It returns the slice's index in the core's lane
// as read so far (-1 when skipped: an idle or unknown stall).
func (rd *traceReader) slice(core, p int, from, to sim.Time, name, cat string, a sliceArgs, bind uint64, out, in bool) (int, error) {
	if !rd.enter(core) {
		return -1, rd.err
	}
	if rd.err != nil {
		return -1, rd.err
	}
	rd.nlanes = max(rd.nlanes, p+1)
	if err := rd.useLanes(core, p+1); err != nil {
		return -1, err
	}
	s := Slice{From: from, To: to}
	n, ok := rd.tl.intern(name)
	if !ok {
		return -1, fmt.Errorf("more than %d distinct event names", math.MaxUint16+1)
	}
	s.name = n
	switch cat {
	case "stall":
		s.Cause = causeByName(name)
		if s.Cause == arch.Busy || s.Cause == arch.QueueEmpty {
			return -1, nil
		}
		a.bytes, a.flops = 0, 0
	case "wait":
		// A cluster host's wait (ClusterSpan.Cat): a stall, named after the
		// span, as the time a chip's pipe waits for a flag.
		s.Cause = arch.WaitFlag
		a.bytes, a.flops = 0, 0
	default:
		s.Class = ParseClass(cat)
	}
	if a != (sliceArgs{}) {
		ref, err := rd.args(a)
		if err != nil {
			return -1, err
		}
		s.ref = ref
	}
	if s.Class == ClassFlag && bind != 0 {
		s.ref = rd.tl.bindRef(s.ref, bind)
	}
	if s.Class == ClassFlag && bind != 0 {
		m := rd.binds[core]
		if m == nil {
			m = map[uint64]bindEnd{}
			rd.binds[core] = m
		}
		be := m[bind]
		if out {
			be.out, be.src, be.set = true, p, from
		}
		if in {
			be.in, be.dst, be.wait = true, p, from
			be.id = flagIDOf(a.text)
		}
		m[bind] = be
	}
	k := coreKey{core, p}
	// (A lane of spans: a category that is no instruction class — its
	// class parsed once, above.)
	if (cat == "wait" || cat != "stall" && s.Class.String() != cat) && !rd.spans[k] {
		if rd.spans == nil {
			rd.spans = map[coreKey]bool{}
		}
		rd.spans[k] = true
	}
	pp := rd.pipes[k]
	if pp == nil {
		pp = &pipe{}
		rd.pipes[k] = pp
	}
	i := pp.add(s)
	rd.span(s.From, s.To)
	return i, nil
}

// args returns the ref of slice arguments a: slices with the same
// arguments share one entry.
func (rd *traceReader) args(a sliceArgs) (uint32, error) {
	if ref, ok := rd.argRefs[a]; ok {
		return ref, nil
	}
	if len(rd.tl.args) >= flagRef-1 {
		return 0, errors.New("too many events")
	}
	a.text = strings.Clone(a.text) // (it may be argText's)
	rd.tl.args = append(rd.tl.args, a)
	rd.textBytes += int64(len(a.text))
	ref := uint32(len(rd.tl.args))
	if rd.argRefs == nil {
		rd.argRefs = map[sliceArgs]uint32{}
	}
	rd.argRefs[a] = ref
	return ref, nil
}

// occupancy adds a sample of the counter of buffer name of core.
// It refuses a value the writers never write: negative, or past the
// buffer's capacity where the header states it.
func (rd *traceReader) occupancy(core int, name string, t sim.Time, v float64) error {
	if err := rd.occupancyValue(core, name, v); err != nil {
		return err
	}
	if !rd.keep(core) {
		return nil
	}
	b := rd.buffer(name)
	if b < 0 {
		return nil
	}
	c := rd.tl.core(core)
	c.grow(-1, b)
	c.Occ[b] = append(c.Occ[b], Sample{T: t, Value: v})
	rd.samples++
	rd.span(t, t)
	return nil
}

// occupancyValue checks a sample v of the counter of buffer name of core.
func (rd *traceReader) occupancyValue(core int, name string, v float64) error {
	if v < 0 {
		return fmt.Errorf("core %d, counter %q: %g bytes: negative", core, name, v)
	}
	if h := rd.header; h != nil && h.Generator == generator {
		if c, ok := h.Capacity[name]; ok && v > float64(c) {
			return fmt.Errorf("core %d, counter %q: %g bytes: more than the buffer's capacity_bytes %d", core, name, v, c)
		}
	}
	return nil
}

// host adds a host task.
func (rd *traceReader) host(kind, name string, from, to sim.Time) error {
	if to < from {
		return errors.New("negative duration")
	}
	rd.tl.Host = append(rd.tl.Host, HostTask{Kind: kind, Name: name, From: from, To: to})
	rd.span(from, to)
	return nil
}

// bandwidth adds a GM bandwidth sample. It refuses one the writers
// never write: negative, or past the machine's bandwidth where the
// header states it (gm_bandwidth_bytes_per_s).
func (rd *traceReader) bandwidth(t sim.Time, gbps float64) error {
	if gbps < 0 || math.IsNaN(gbps) || math.IsInf(gbps, 0) {
		return fmt.Errorf("counter \"GM bandwidth\": %g GB/s: want a finite number, 0 or more", gbps)
	}
	if h := rd.header; h != nil && h.Generator == generator && h.GMBandwidth > 0 && gbps*1e9 > h.GMBandwidth*(1+1e-9) {
		return fmt.Errorf("counter \"GM bandwidth\": %g GB/s: more than the machine's gm_bandwidth_bytes_per_s %g", gbps, h.GMBandwidth)
	}
	rd.tl.Bandwidth = append(rd.tl.Bandwidth, Sample{T: t, Value: gbps * 1e9})
	rd.span(t, t)
	return nil
}

// power adds a sample of the power counter (W).
func (rd *traceReader) power(t sim.Time, w float64) {
	rd.tl.Power = append(rd.tl.Power, Sample{T: t, Value: w})
	rd.span(t, t)
}

// maxTraceBuffers bounds the distinct buffer counters a read trace may use.
const maxTraceBuffers = 64

// buffer returns the index of the buffer counter named name, adding it in
// order of first appearance (-1 beyond maxTraceBuffers).
func (rd *traceReader) buffer(name string) int {
	if b, ok := rd.bufIdx[name]; ok {
		return b
	}
	if len(rd.bufIdx) >= maxTraceBuffers {
		return -1
	}
	b := len(rd.tl.Buffers)
	rd.bufIdx[name] = b
	rd.tl.Buffers = append(rd.tl.Buffers, name)
	return b
}

// flagIDOf returns the event id of "set_flag SRC DST ID" / "wait_flag …".
func flagIDOf(text string) int {
	f := strings.Fields(text)
	if len(f) == 4 {
		if id, err := strconv.Atoi(f[3]); err == nil {
			return id
		}
	}
	return 0
}

func causeByName(s string) arch.Cause {
	for c := arch.Cause(0); c < arch.NumCauses; c++ {
		if c.String() == s {
			return c
		}
	}
	return arch.Busy
}

// ReadLimits bound what ReadTraceFileWithin keeps of a trace.
type ReadLimits struct {
	// Cores selects the cores to keep (nil: all).
	Cores map[int]bool
	// Progress, when not nil, counts the bytes of the file read so far
	// (of a .gz file, the compressed bytes), for a progress line: read it
	// from another goroutine while ReadTraceFileWithin runs.
	Progress *atomic.Int64
	// Bytes bounds the memory the timeline's events hold (0: no bound):
	// once it is passed, the events of the cores not read yet are skipped
	// (the writers write a trace core by core).
	Bytes int64
}

// addCore makes core id part of the timeline (unless it is not kept).
func (rd *traceReader) addCore(id int) {
	if rd.keep(id) {
		rd.tl.core(id)
	}
}

// keep reports whether the events of core id are kept: selected, and its
// slices began before the memory limit was passed.
func (rd *traceReader) keep(id int) bool {
	switch {
	case rd.lim.Cores != nil && !rd.lim.Cores[id]:
		return false
	case rd.full && !rd.seenCore[id]:
		if rd.skipped == nil {
			rd.skipped = map[int]bool{}
		}
		rd.skipped[id] = true
		return false
	}
	return true
}

// enter notes that a slice of core id is read and reports whether it is
// kept. When a core's slices begin, the slices read of the core before go
// into the timeline (unless slices are open: hold), so that with a trace
// written core by core one core's slices are held uncompressed; then the
// memory limit is checked.
func (rd *traceReader) enter(id int) bool {
	if id == rd.cur && rd.seenCore[id] {
		return true
	}
	if !rd.seenCore[id] && rd.hold == 0 && rd.seenCore[rd.cur] && !rd.flushed[rd.cur] {
		// Each core at most once before the end (a core whose events
		// come back later is merged once, at the end).
		if rd.flushed == nil {
			rd.flushed = map[int]bool{}
		}
		rd.flushed[rd.cur] = true
		rd.flushCore(rd.cur)
		if rd.lim.Bytes > 0 && rd.footprint() > rd.lim.Bytes {
			rd.full = true
		}
	}
	if !rd.keep(id) {
		return false
	}
	if rd.seenCore == nil {
		rd.seenCore = map[int]bool{}
	}
	rd.seenCore[id] = true
	rd.cur = id
	rd.tl.core(id)
	return true
}

// footprint estimates the memory the timeline holds, in O(1) (Footprint
// visits every lane): the lanes' blocks and tails, arguments, arrows,
// flows, samples.
func (rd *traceReader) footprint() int64 {
	tl := rd.tl
	return tl.arena.bytes() + rd.slots*tailMax*int64(unsafe.Sizeof(Slice{})) +
		int64(cap(tl.args))*int64(unsafe.Sizeof(sliceArgs{})) + rd.textBytes + int64(cap(tl.bound))*int64(unsafe.Sizeof(boundMark{})) +
		rd.nflows*int64(unsafe.Sizeof(Flow{})) + rd.samples*int64(unsafe.Sizeof(Sample{}))
}

// flushCore adds the slices and arrows read so far of core id to its
// timeline: each lane in time order, a flag mark before an interval
// starting at its instant (as recorded; the writers put marks with arrows
// last).
func (rd *traceReader) flushCore(id int) {
	tl := rd.tl
	c := tl.core(id)
	var open map[uint64]bindEnd // unmatched ends wait for their match (in a new map: a map keeps its size)
	for bind, be := range rd.binds[id] {
		if be.in && be.out {
			c.Flows = append(c.Flows, Flow{Src: be.src, Dst: be.dst, ID: be.id, Set: be.set, Wait: be.wait, Bind: bind})
			rd.nflows++
			continue
		}
		if open == nil {
			open = map[uint64]bindEnd{}
		}
		open[bind] = be
	}
	if open != nil {
		rd.binds[id] = open
	} else {
		delete(rd.binds, id)
	}
	for p := range rd.coreLanes[id] {
		k := coreKey{id, p}
		pp := rd.pipes[k]
		if pp == nil || pp.n == 0 {
			continue
		}
		delete(rd.pipes, k)
		if l := c.Lane(p); l.Len() > 0 || !pp.sort() {
			ss := pp.all()
			if l.Len() > 0 {
				// The core's events came in more than one run (not as the
				// writers write): merge, in one pass.
				ss = append(l.Slices(), ss...)
				l.release()
				c.Lanes[p], c.stall[p] = Lane{}, [arch.NumCauses]sim.Time{}
			}
			slices.SortStableFunc(ss, compareSlices)
			pp = &pipe{chunks: [][]Slice{ss}, n: len(ss)}
		}
		if !rd.spans[k] && rd.err == nil {
			rd.err = rd.overlaps(id, p, pp)
		}
		for _, ss := range pp.chunks {
			for _, s := range ss {
				c.addSlice(tl, p, s)
			}
		}
	}
	sort.Slice(c.Flows, func(i, j int) bool {
		a, b := c.Flows[i], c.Flows[j]
		if a.Wait != b.Wait {
			return a.Wait < b.Wait
		}
		return a.Bind < b.Bind
	})
}

// overlaps returns an error naming the first slice of lane p of core that
// overlaps one before it (ss in time order), nil when none does: a pipe
// does one thing at a time, and the writers never write a lane's slices
// overlapping (a lane of spans — a cluster trace's tracks, the kernel
// launches — is not checked).
func (rd *traceReader) overlaps(core, p int, ss *pipe) error {
	var end sim.Time
	var last *Slice // the slice reaching furthest so far
	for _, c := range ss.chunks {
		for i := range c {
			s := &c[i]
			if s.To == s.From {
				continue // (a flag mark)
			}
			if last != nil && s.From < end {
				return fmt.Errorf("core %d, lane %q: slice %q at %v overlaps %q (%v..%v): a lane's slices do not overlap",
					core, rd.laneNames[p], rd.tl.Name(s), s.From, rd.tl.Name(last), last.From, last.To)
			}
			if last == nil || s.To > end {
				end, last = s.To, s
			}
		}
	}
	return nil
}

// compareSlices orders slices read back: by From, a flag mark before an
// interval starting at its instant (as recorded; the writers put marks
// with arrows last).
func compareSlices(a, b Slice) int {
	switch {
	case a.From != b.From:
		return cmp.Compare(a.From, b.From)
	case a.Class == ClassFlag && b.Class != ClassFlag:
		return -1
	case b.Class == ClassFlag && a.Class != ClassFlag:
		return 1
	}
	return 0
}

// pipe is the slices of a lane as read, in chunks of pipeChunk (the first
// growing to it), so that a long lane is not copied as it grows.
type pipe struct {
	chunks [][]Slice
	n      int
}

// pipeChunk is the slices of a pipe chunk.
const pipeChunk = 1 << 12

// add appends s and returns its index.
func (pp *pipe) add(s Slice) int {
	n := len(pp.chunks)
	if n == 0 || len(pp.chunks[n-1]) == pipeChunk {
		c := []Slice(nil)
		if n > 0 {
			c = make([]Slice, 0, pipeChunk)
		}
		pp.chunks = append(pp.chunks, c)
		n++
	}
	pp.chunks[n-1] = append(pp.chunks[n-1], s)
	pp.n++
	return pp.n - 1
}

// at returns slice i.
func (pp *pipe) at(i int) *Slice { return &pp.chunks[i/pipeChunk][i%pipeChunk] }

// all returns the slices in one.
func (pp *pipe) all() []Slice {
	if len(pp.chunks) == 1 {
		return pp.chunks[0]
	}
	ss := make([]Slice, 0, pp.n)
	for _, c := range pp.chunks {
		ss = append(ss, c...)
	}
	return ss
}

// sort sorts the slices in compareSlices order, stably, when they are
// nearly so — as the writers write a lane: in order, with the flag marks
// with arrows last, in order (two runs, merged); else in order but for a
// few slices out of place — and reports whether it did (else the slices
// are in an order of their own, as stable: sort them so).
func (pp *pipe) sort() bool {
	runs, m := 1, 0
	for i := 1; i < pp.n && runs <= 2; i++ {
		if compareSlices(*pp.at(i - 1), *pp.at(i)) > 0 {
			runs, m = runs+1, i
		}
	}
	switch runs {
	case 1:
		return true
	case 2:
		pp.merge(m)
		return true
	}
	budget := 4*pp.n + 64 // (the moves an insertion sort may make)
	for i := 1; i < pp.n; i++ {
		s := *pp.at(i)
		if compareSlices(*pp.at(i - 1), s) <= 0 {
			continue
		}
		j := i - 1
		for ; j > 0 && compareSlices(*pp.at(j - 1), s) > 0; j-- {
		}
		if budget -= i - j; budget < 0 {
			return false
		}
		for k := i; k > j; k-- {
			*pp.at(k) = *pp.at(k - 1)
		}
		*pp.at(j) = s
	}
	return true
}

// merge merges the sorted runs [0, m) and [m, n) stably (on a tie the
// first run's slice first), copying the shorter aside.
func (pp *pipe) merge(m int) {
	n := pp.n
	if n-m <= m {
		tmp := make([]Slice, n-m)
		for j := range tmp {
			tmp[j] = *pp.at(m + j)
		}
		i, j := m-1, len(tmp)-1
		for w := n - 1; j >= 0; w-- {
			if i >= 0 && compareSlices(*pp.at(i), tmp[j]) > 0 {
				*pp.at(w) = *pp.at(i)
				i--
			} else {
				*pp.at(w) = tmp[j]
				j--
			}
		}
		return
	}
	tmp := make([]Slice, m)
	for i := range tmp {
		tmp[i] = *pp.at(i)
	}
	i, j := 0, m
	for w := 0; i < len(tmp); w++ {
		if j < n && compareSlices(*pp.at(j), tmp[i]) < 0 {
			*pp.at(w) = *pp.at(j)
			j++
		} else {
			*pp.at(w) = tmp[i]
			i++
		}
	}
}

// finish completes the timeline and returns the cores skipped for the
// memory limit, in order.
func (rd *traceReader) finish() []int {
	tl := rd.tl
	var skipped []int
	if rd.skipped != nil {
		for id := range rd.skipped {
			skipped = append(skipped, id)
		}
		sort.Ints(skipped)
		kept := tl.Cores[:0]
		for _, c := range tl.Cores {
			if !rd.skipped[c.ID] {
				kept = append(kept, c)
			}
		}
		tl.Cores = kept
	}
	if h := rd.header; h != nil && h.Generator == generator {
		names := make([]string, 0, len(h.Capacity))
		for name := range h.Capacity {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			rd.buffer(name)
		}
		tl.Capacity = make([]int64, len(tl.Buffers))
		for name, v := range h.Capacity {
			if b, ok := rd.bufIdx[name]; ok {
				tl.Capacity[b] = v
			}
		}
	}
	for p := range rd.nlanes {
		name, ok := rd.laneNames[p]
		if !ok || name == "" {
			name = fmt.Sprintf("lane%d", p)
		}
		tl.Lanes = append(tl.Lanes, name)
	}
	for _, c := range tl.Cores {
		rd.flushCore(c.ID)
		c.grow(rd.coreLanes[c.ID]-1, len(tl.Buffers)-1) // (its own lanes: a cluster trace's drill-down is one rank's)
		for b := range c.Occ {
			sort.SliceStable(c.Occ[b], func(i, j int) bool { return c.Occ[b][i].T < c.Occ[b][j].T })
		}
	}
	sort.SliceStable(tl.Host, func(i, j int) bool { return tl.Host[i].From < tl.Host[j].From })
	sort.SliceStable(tl.Kernels, func(i, j int) bool { return tl.Kernels[i].Launched < tl.Kernels[j].Launched })
	sort.SliceStable(tl.Bandwidth, func(i, j int) bool { return tl.Bandwidth[i].T < tl.Bandwidth[j].T })
	for _, s := range tl.Bandwidth {
		tl.peakBW = max(tl.peakBW, s.Value)
	}
	sort.SliceStable(tl.Power, func(i, j int) bool { return tl.Power[i].T < tl.Power[j].T })
	tl.From, tl.To = rd.lo, rd.hi
	// A core the header names idle but the trace has events of is not
	// left out.
	tl.Idle = slices.DeleteFunc(tl.Idle, func(id int) bool { return tl.Core(id) != nil })
	if h := rd.header; h != nil && h.Generator == generator {
		tl.Machine, tl.Program, tl.GMBandwidth, tl.Ending = h.Machine, h.Program, h.GMBandwidth, h.Ending
		tl.Notes = h.notes()
		// An empty span is a window holding nothing of the run, [end, end]
		// (its one event, the run's end, at end).
		if h.ToPs > h.FromPs || h.ToPs == h.FromPs && (!rd.seen || rd.lo >= sim.Time(h.FromPs) && rd.hi <= sim.Time(h.ToPs)) {
			tl.From, tl.To = sim.Time(h.FromPs), sim.Time(h.ToPs)
		}
	}
	return skipped
}
