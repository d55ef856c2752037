package traces

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"math"
	"reflect"
	"slices"
	"sort"
	"sync"
	"testing"

	"github.com/davinci-sim/davinci-sim/arch"
	"github.com/davinci-sim/davinci-sim/fp"
	"github.com/davinci-sim/davinci-sim/isa"
	"github.com/davinci-sim/davinci-sim/machines"
	"github.com/davinci-sim/davinci-sim/sim"
)

// The round-trip property: a timeline the recorder can produce, written
// in either format (WritePerfetto, gzip or not; WritePftrace) and read
// back (ReadTrace, ReadPftrace), gives back what it recorded — every
// slice of every written core with its lane, start, end, name, cause,
// class, instruction text, bytes, flops and arrow; the flag arrows
// (Flows); each core's buffer occupancy samples by buffer; the GM
// bandwidth and power samples; the host tasks; the kernel launches (all
// of Kernel's fields); and the header fields the reader exposes:
// machine, program, GM bandwidth, ending, the time span (From, To), the
// lane names, the buffer capacities, the idle cores and the notes.
//
// What the reader is documented not to keep, and the property therefore
// leaves out or compares as the documentation states it:
//   - Cores that did nothing but wait at barriers are not written; the
//     header's idle_cores names them (docs/formats.md "Trace files",
//     otherData idle_cores; walk.go): such a core is expected in Idle,
//     not in Cores.
//   - A flag mark's arrow is written only when both its set and its wait
//     lie in the window (walk.go: the marks "with an arrow" are those of
//     a Flow): a recorded set whose wait was never recorded keeps its
//     Bind in memory but is written, and read, with none.
//   - The order of flag marks at one instant on one lane: the writers put
//     marks with an arrow after the lanes (walk.go, "except the flag marks
//     with an arrow") and the reader puts a lane's marks before the
//     interval starting at their instant (perfetto.go, flushCore). Lanes
//     are compared in a canonical order: by start, marks before
//     intervals, marks of one instant by name, arrow and text.
//   - Buffers are matched by name (a read trace numbers them in the order
//     it meets their counters, then capacity_bytes' names); a buffer with
//     no capacity (capacity_bytes holds only positive ones) and no sample
//     is not in the trace at all.
//   - GM bandwidth is written in GB/s (docs/formats.md: the `GM
//     bandwidth` counter; perfetto.go: args["GB/s"]), bytes/s ÷ 1e9 in
//     float64, and read back ×1e9: equal within 4 units in the last
//     place. Times are exact in both formats (docs/formats.md: "Times are
//     exact": JSON µs printed from integer ps, protobuf ns plus the ps
//     annotation), and compared exactly.
//   - Not in the header: the window asked for (AskedFrom, AskedTo: "0, 0
//     … a trace read back", Timeline's doc), VectorRepeatBytes (each
//     slice's bytes and flops are written instead), Dropped (a
//     memory-limited recorder's, never written: SetLimit).
//   - Host tasks are read back in start order (stable), having been
//     written lane by lane (walk.go), so they are compared in that order.
//   - Cluster traces (WriteClusterJSON, read by ReadTrace as ranks =
//     cores, tracks = lanes): a span's category is kept as the reader
//     keeps categories, an instruction class (ParseClass: others read as
//     ClassOther), "wait" as a wait_flag stall (docs/formats.md: "view
//     counts these as waits"); the messages (flow events "s"/"f") are
//     not read (ReadTrace: "Events it does not understand … are
//     skipped"); untraced_ranks come back as a note (the header's).

// rtSlice is a slice as the property compares it.
type rtSlice struct {
	From, To   sim.Time
	Name, Text string
	Cause      arch.Cause
	Class      Class
	Bytes      int64
	Flops      float64
	Bind       uint64
}

// rtCore is a core as the property compares it: non-empty lanes by index,
// non-empty buffer samples by buffer name.
type rtCore struct {
	ID    int
	Lanes map[int][]rtSlice
	Flows []Flow
	Occ   map[string][]Sample
}

// rtView is a timeline as the property compares it.
type rtView struct {
	Machine, Program, Ending string
	GMBandwidth              float64
	From, To                 sim.Time
	Done                     bool
	Lanes                    []string
	Capacity                 map[string]int64
	Cores                    []rtCore
	Idle                     []int
	Host                     []HostTask
	Kernels                  []Kernel
	Bandwidth, Power         []Sample
	Notes                    []string
}

// sortLane puts a lane's slices in the canonical order (see above).
func sortLane(ss []rtSlice) {
	sort.SliceStable(ss, func(i, j int) bool {
		a, b := &ss[i], &ss[j]
		if a.From != b.From {
			return a.From < b.From
		}
		af, bf := a.Class == ClassFlag, b.Class == ClassFlag
		if af != bf || !af {
			return af && !bf
		}
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		if a.Bind != b.Bind {
			return a.Bind < b.Bind
		}
		return a.Text < b.Text
	})
}

// laneSlices returns the slices of core c's lane p as compared; bound,
// when not nil, holds the arrows a trace draws (recorded timelines: the
// Binds of c's Flows); nil takes every Bind (read back).
func laneSlices(tl *Timeline, c *CoreTimeline, p int, bound map[uint64]bool) []rtSlice {
	var out []rtSlice
	for _, s := range c.Lanes[p].Scan(0) {
		b, f := tl.Args(&s)
		r := rtSlice{From: s.From, To: s.To, Name: tl.Name(&s), Text: tl.Text(&s), Cause: s.Cause, Class: s.Class, Bytes: b, Flops: f}
		if s.Class == ClassFlag {
			r.Bind = tl.Bind(&s)
			if bound != nil && !bound[r.Bind] {
				r.Bind = 0
			}
		}
		out = append(out, r)
	}
	sortLane(out)
	return out
}

// coreView returns core c as compared (recorded: bound as laneSlices).
func coreView(tl *Timeline, c *CoreTimeline, recorded bool) rtCore {
	rc := rtCore{ID: c.ID, Lanes: map[int][]rtSlice{}, Occ: map[string][]Sample{}, Flows: slices.Clone(c.Flows)}
	var bound map[uint64]bool
	if recorded {
		bound = map[uint64]bool{}
		for _, f := range c.Flows {
			bound[f.Bind] = true
		}
	}
	for p := range c.Lanes {
		if ss := laneSlices(tl, c, p, bound); len(ss) > 0 {
			rc.Lanes[p] = ss
		}
	}
	for b := range c.Occ {
		if len(c.Occ[b]) > 0 {
			rc.Occ[tl.BufferName(b)] = slices.Clone(c.Occ[b])
		}
	}
	return rc
}

// capacities returns the positive buffer capacities of tl by name.
func capacities(tl *Timeline) map[string]int64 {
	m := map[string]int64{}
	for b, name := range tl.Buffers {
		if c := tl.BufferCapacity(b); c > 0 {
			m[name] = c
		}
	}
	return m
}

// readView returns a read-back timeline as compared.
func readView(tl *Timeline) rtView {
	v := rtView{Machine: tl.Machine, Program: tl.Program, Ending: tl.Ending, GMBandwidth: tl.GMBandwidth,
		From: tl.From, To: tl.To, Done: tl.Done, Lanes: slices.Clone(tl.Lanes), Capacity: capacities(tl),
		Idle: slices.Clone(tl.Idle), Host: slices.Clone(tl.Host), Kernels: slices.Clone(tl.Kernels),
		Bandwidth: slices.Clone(tl.Bandwidth), Power: slices.Clone(tl.Power), Notes: slices.Clone(tl.Notes)}
	for _, c := range tl.Cores {
		v.Cores = append(v.Cores, coreView(tl, c, false))
	}
	return v
}

// recordedView returns what a trace of the recorded timeline tl is
// documented to give back (see above).
func recordedView(tl *Timeline) rtView {
	from, to := traceSpan(tl)
	v := rtView{Machine: tl.Machine, Program: tl.Program, Ending: tl.Ending, GMBandwidth: tl.GMBandwidth,
		From: from, To: to, Done: true, Capacity: capacities(tl), Idle: IdleCores(tl),
		Kernels: slices.Clone(tl.Kernels), Bandwidth: slices.Clone(tl.Bandwidth), Power: slices.Clone(tl.Power),
		Notes: newTraceHeader(tl).notes()}
	lanes := 0
	for _, c := range tl.Cores {
		if !shownCore(c) {
			continue
		}
		lanes = max(lanes, len(tl.Lanes), len(c.Lanes))
		v.Cores = append(v.Cores, coreView(tl, c, true))
	}
	for p := range lanes {
		v.Lanes = append(v.Lanes, tl.LaneName(p))
	}
	for l := range HostLanes {
		for _, h := range tl.Host {
			if h.Lane() == l {
				v.Host = append(v.Host, h)
			}
		}
	}
	sort.SliceStable(v.Host, func(i, j int) bool { return v.Host[i].From < v.Host[j].From })
	return v
}

// rtCount counts what a comparison visited.
type rtCount struct {
	cores, slices, marks, arrows, flows, occ, host, kernels, bw, power int
}

// compareViews reports every difference of got (read back) from want
// (recorded) under name, and counts what it compared.
func compareViews(t testing.TB, name string, want, got rtView, n *rtCount) {
	t.Helper()
	errs := 0
	fail := func(format string, args ...any) {
		t.Helper()
		if errs++; errs <= 12 {
			t.Errorf("%s: "+format, append([]any{name}, args...)...)
		}
	}
	eq := func(what string, w, g any) {
		t.Helper()
		if !reflect.DeepEqual(w, g) {
			fail("%s: got %+v, want %+v", what, g, w)
		}
	}
	eq("machine", want.Machine, got.Machine)
	eq("program", want.Program, got.Program)
	eq("ending", want.Ending, got.Ending)
	eq("GM bandwidth", want.GMBandwidth, got.GMBandwidth)
	eq("span", [2]sim.Time{want.From, want.To}, [2]sim.Time{got.From, got.To})
	eq("done", want.Done, got.Done)
	eq("lane names", want.Lanes, got.Lanes)
	eq("capacities", want.Capacity, got.Capacity)
	eq("idle cores", want.Idle, got.Idle)
	eq("notes", want.Notes, got.Notes)
	eq("power", want.Power, got.Power)
	n.power += len(want.Power)
	if len(want.Host) != len(got.Host) {
		fail("%d host tasks, want %d", len(got.Host), len(want.Host))
	}
	for i := range min(len(want.Host), len(got.Host)) {
		eq(fmt.Sprintf("host task %d", i), want.Host[i], got.Host[i])
		n.host++
	}
	if len(want.Kernels) != len(got.Kernels) {
		fail("%d kernels, want %d", len(got.Kernels), len(want.Kernels))
	}
	for i := range min(len(want.Kernels), len(got.Kernels)) {
		eq(fmt.Sprintf("kernel %d", i), want.Kernels[i], got.Kernels[i])
		n.kernels++
	}
	// GM bandwidth: GB/s in the file (see above), to 4 ulps.
	if len(want.Bandwidth) != len(got.Bandwidth) {
		fail("%d GM bandwidth samples, want %d", len(got.Bandwidth), len(want.Bandwidth))
	}
	for i := range min(len(want.Bandwidth), len(got.Bandwidth)) {
		w, g := want.Bandwidth[i], got.Bandwidth[i]
		if w.T != g.T || math.Abs(w.Value-g.Value) > 4*ulp(w.Value) {
			fail("GM bandwidth sample %d: got %+v, want %+v", i, g, w)
		}
		n.bw++
	}
	if len(want.Cores) != len(got.Cores) {
		ids := func(cs []rtCore) (s []int) {
			for _, c := range cs {
				s = append(s, c.ID)
			}
			return s
		}
		fail("cores %v, want %v", ids(got.Cores), ids(want.Cores))
		return
	}
	for i := range want.Cores {
		wc, gc := &want.Cores[i], &got.Cores[i]
		n.cores++
		if wc.ID != gc.ID {
			fail("core %d: ID %d", wc.ID, gc.ID)
			continue
		}
		eq(fmt.Sprintf("core %d flows", wc.ID), wc.Flows, gc.Flows)
		n.flows += len(wc.Flows)
		eq(fmt.Sprintf("core %d occupancy", wc.ID), wc.Occ, gc.Occ)
		for _, ss := range wc.Occ {
			n.occ += len(ss)
		}
		for p := range max(maxKey(wc.Lanes), maxKey(gc.Lanes)) + 1 {
			ws, gs := wc.Lanes[p], gc.Lanes[p]
			if len(ws) != len(gs) {
				fail("core %d lane %d: %d slices, want %d", wc.ID, p, len(gs), len(ws))
			}
			for k := range min(len(ws), len(gs)) {
				if ws[k] != gs[k] {
					fail("core %d lane %d slice %d: got %+v, want %+v", wc.ID, p, k, gs[k], ws[k])
				}
				n.slices++
				if ws[k].Class == ClassFlag {
					n.marks++
					if ws[k].Bind != 0 {
						n.arrows++
					}
				}
			}
		}
	}
}

// maxKey returns the largest lane of m (-1: none).
func maxKey(m map[int][]rtSlice) int {
	k := -1
	for p := range m {
		k = max(k, p)
	}
	return k
}

// ulp returns the unit in the last place of v.
func ulp(v float64) float64 {
	v = math.Abs(v)
	return math.Nextafter(v, math.Inf(1)) - v
}

// roundTrip writes tl in every format, reads each back and compares it
// with what tl recorded (see above); it returns what it compared.
func roundTrip(t testing.TB, name string, tl *Timeline) rtCount {
	t.Helper()
	want := recordedView(tl)
	var n rtCount
	var js, gz, pf bytes.Buffer
	if err := WritePerfetto(&js, tl); err != nil {
		t.Fatalf("%s: WritePerfetto: %v", name, err)
	}
	zw := gzip.NewWriter(&gz)
	if err := WritePerfetto(zw, tl); err != nil {
		t.Fatalf("%s: WritePerfetto (gzip): %v", name, err)
	}
	zw.Close()
	if err := WritePftrace(&pf, tl); err != nil {
		t.Fatalf("%s: WritePftrace: %v", name, err)
	}
	for _, f := range []struct {
		format string
		read   func() (*Timeline, error)
	}{
		{"json", func() (*Timeline, error) { return ReadTrace(bytes.NewReader(js.Bytes())) }},
		{"json.gz", func() (*Timeline, error) { return ReadTrace(bytes.NewReader(gz.Bytes())) }},
		{"pftrace", func() (*Timeline, error) { return ReadPftrace(bytes.NewReader(pf.Bytes())) }},
	} {
		got, err := f.read()
		if err != nil {
			t.Errorf("%s (%s): read back: %v", name, f.format, err)
			continue
		}
		compareViews(t, name+" ("+f.format+")", want, readView(got), &n)
	}
	return n
}

// rtRecorder is a recorder fed as an engine feeds one, keeping the
// invariants the engine keeps (what a recorder can be given): a lane's
// intervals do not overlap and are reported when they end, in time order
// with the flag events; a wait_flag follows the set it consumes; buffer
// counts within their capacity, GM bandwidth within the machine's; a
// host lane's tasks one after another.
type rtRecorder struct {
	*Recorder
	g        *machines.Geometry
	laneEnd  map[[2]int]sim.Time
	hostEnd  [2]sim.Time
	pending  map[[4]int]int // raised, unconsumed sets by core, src, dst, id
	sawFlags bool
}

// rtGeometries caches the machines' geometries (loading one is most of a
// fuzz input's time); read only.
var rtGeometries sync.Map

// newRTRecorder returns a recorder for window w of a run on machine,
// told the machine's geometry.
func newRTRecorder(t testing.TB, machine string, w Window) *rtRecorder {
	g, ok := rtGeometries.Load(machine)
	if !ok {
		m, err := machines.Load(machine, nil)
		if err != nil {
			t.Fatal(err)
		}
		g, _ = rtGeometries.LoadOrStore(machine, m.Geometry())
	}
	r := &rtRecorder{Recorder: NewRecorder(w), g: g.(*machines.Geometry), laneEnd: map[[2]int]sim.Time{}, pending: map[[4]int]int{}}
	r.SetInfo(machine, "roundtrip", r.g)
	return r
}

// interval reports an interval of core's lane ending at to and lasting
// up to d (from the lane's last end on); false when the lane is busy to
// then.
func (r *rtRecorder) interval(core, lane int, cause arch.Cause, to, d sim.Time, in *isa.Instr, g *arch.Group) bool {
	k := [2]int{core, lane}
	from := max(r.laneEnd[k], to-d)
	if from >= to {
		return false
	}
	r.laneEnd[k] = to
	r.Interval(core, lane, cause, from, to, in, g)
	return true
}

// set raises a flag; wait consumes one raised (false when none is).
func (r *rtRecorder) set(core, src, dst, id int, t sim.Time) {
	r.pending[[4]int{core, src, dst, id}]++
	r.Flag(core, src, dst, id, true, t)
}

func (r *rtRecorder) wait(core, src, dst, id int, t sim.Time) bool {
	k := [4]int{core, src, dst, id}
	if r.pending[k] == 0 {
		return false
	}
	r.pending[k]--
	r.Flag(core, src, dst, id, false, t)
	return true
}

// host reports a host task of lane l (HostLanes) ending at to, lasting up
// to d.
func (r *rtRecorder) host(kind, name string, to, d sim.Time) bool {
	l := (&HostTask{Kind: kind}).Lane()
	from := max(r.hostEnd[l], to-d)
	if from >= to {
		return false
	}
	r.hostEnd[l] = to
	r.HostTask(kind, name, from, to)
	return true
}

// capacity returns buffer b's capacity (0: a global buffer, any count).
func (r *rtRecorder) capacity(b int) int64 {
	if r.g.Buffers[b].Global {
		return 0
	}
	return r.g.Buffers[b].Capacity
}

// rtInstrs are the instructions the interpreter runs: every class, with
// operands, regions, odd amounts.
var rtInstrs = func() []isa.Instr {
	vmask := isa.VecBinary(isa.VMul, 256, 512, 1024, fp.FP32, 7)
	vmask.Mask, vmask.DstRepStr, vmask.SrcRepStr = 13, 512, 768
	return []isa.Instr{
		isa.Scalar(1234), isa.Nop(), isa.SyncAll(), isa.Alloc(isa.UB, 128, 4096, "tile \"a\""), isa.Free("tile \"a\""),
		isa.CopyGM2L1(1<<33, 4096, 8192), isa.CopyUB2GM(0, 77, 12),
		isa.Load(isa.L0B, 64, 1<<19, 16, 32, 64, fp.FP16, true),
		isa.Mmad(1024, 2048, 4096, 16, 32, 48, fp.FP16, fp.FP32, true),
		isa.L0CCopy(isa.FIXP, isa.Operand{Buf: isa.GM, Addr: 5 << 30}, 256, 16, 16, 64, fp.FP32, fp.FP16, fp.RNE, true),
		vmask, isa.VecScalar(isa.VMuls, 0, 256, -1.0/3, fp.FP32, 2), isa.Barrier(isa.MTE3),
	}
}()

// davinciTimeline is a DaVinci chip's run: pipes busy with every class
// of instruction and issue slots, stalls of every cause, flag marks with
// arrows and without (a set never consumed, a wait whose set is before
// the window), buffer gauges, GM bandwidth, host tasks, power, a core
// that only waits at barriers (idle), times between nanoseconds, an
// ending; in window w.
func davinciTimeline(t testing.TB, w Window) *Timeline {
	r := newRTRecorder(t, "ascend-910a", w)
	r.StaticWatts(35.5)
	const (
		S, MTE2, MTE1, M, V, MTE3 = 0, 1, 2, 3, 4, 5
	)
	for core := range 2 {
		base := sim.Time(core) * 333
		r.set(core, MTE3, MTE2, 0, base+5) // released before the window (when it starts after 5)
		r.wait(core, MTE3, MTE2, 0, base+1500)
		r.interval(core, MTE2, arch.WaitFlag, base+1500, 1500, nil, nil)
		r.interval(core, S, arch.Busy, base+2001, 2001, &rtInstrs[0], nil)
		r.interval(core, MTE2, arch.Busy, base+3500, 2000, &rtInstrs[5], nil)
		r.interval(core, S, arch.Busy, base+3500, 1000, &rtInstrs[5], nil) // the issue slot
		r.Occupancy(core, 1, 4096, base+3500)
		r.set(core, MTE2, MTE1, 3, base+3500)
		r.set(core, MTE2, MTE1, 3, base+3500) // two raised: FIFO
		r.wait(core, MTE2, MTE1, 3, base+3500)
		r.interval(core, MTE1, arch.Busy, base+4100, 600, &rtInstrs[7], nil)
		r.wait(core, MTE2, MTE1, 3, base+4100)
		r.interval(core, MTE1, arch.Busy, base+5250, 1150, &rtInstrs[7], &arch.Group{N: 3, Bytes: 3 << 20, Flops: 0})
		r.set(core, MTE1, M, 17, base+5250) // id beyond the dense table
		r.interval(core, M, arch.WaitFlag, base+5250, 5250, nil, nil)
		r.wait(core, MTE1, M, 17, base+5250)
		r.interval(core, M, arch.Busy, base+9999, 4749, &rtInstrs[8], nil)
		r.set(core, M, V, 1<<23, base+9999) // id past a flag mark's packed field
		r.wait(core, M, V, 1<<23, base+10000)
		r.interval(core, V, arch.Busy, base+11000, 1000, &rtInstrs[10], &arch.Group{N: 2, Bytes: 999, Flops: 1.5e3})
		r.interval(core, V, arch.Bandwidth, base+11500, 500, nil, nil)
		r.interval(core, V, arch.Latency, base+11800, 300, nil, nil)
		r.interval(core, S, arch.QueueFull, base+11800, 300, nil, nil)
		r.interval(core, MTE3, arch.Busy, base+12345, 500, &rtInstrs[6], nil)
		r.interval(core, MTE3, arch.Barrier, base+12500, 100, nil, nil)
		r.interval(core, S, arch.Busy, base+12500, 300, &rtInstrs[3], nil)
		r.interval(core, S, arch.Busy, base+12600, 100, &rtInstrs[4], nil)
		r.Occupancy(core, 1, 0, base+12600)
		r.Occupancy(core, 4, r.capacity(4), base+12600)
		r.set(core, V, MTE3, 2, base+12600) // never consumed: no arrow
		r.Energy(base+12601, 7.25e6)
	}
	// GM bandwidth is the chip's: reported in time order.
	r.Bandwidth(3500, 1.234567891e11)
	r.Bandwidth(3833, 7.77e10)
	r.Bandwidth(12600, r.g.GMBandwidth)
	r.Bandwidth(12601, 0)
	r.Bandwidth(12933, 1e9/3)
	r.interval(2, S, arch.Barrier, 12000, 11000, nil, nil) // core 2 only waits at a barrier: idle
	r.host("transfer", "h2d a", 1000, 1000)
	r.host("launch", "launch k", 1500, 400)
	r.host("compute", "diag 0", 1500+1, 1)
	r.host("transfer", "d2h c", 13000, 300)
	r.SetEnding("deadlock at 13.001ns")
	r.Finish(13001)
	return r.Timeline()
}

// gpuTimeline is a GPU's run: SMs' lanes busy (a group started together,
// issue slots), stalls, shared memory gauges, and kernel launches —
// back to back, overlapping (two rows), one of more blocks than the SMs
// shown (a note), one of no length, the last deadlocked — in window w.
func gpuTimeline(t testing.TB, w Window) *Timeline {
	r := newRTRecorder(t, "a100", w)
	for sm := range 3 {
		base := sim.Time(sm) * 1111
		for i, in := range rtInstrs {
			lane := i % len(r.g.Lanes)
			var g *arch.Group
			if i%4 == 1 {
				g = &arch.Group{N: 4, Bytes: int64(i) * 1000, Flops: float64(i) * 0.5}
			}
			r.interval(sm, lane, arch.Busy, base+sim.Time(i+1)*977, 900, &in, g)
			r.interval(sm, (lane+1)%len(r.g.Lanes), arch.Latency, base+sim.Time(i+1)*977+50, 400, nil, nil)
		}
		for b := range r.g.Buffers {
			r.Occupancy(sm, b, min(r.capacity(b), 1<<uint(b+8)), base+2000)
			r.Occupancy(sm, b, 0, base+9000)
		}
		r.Bandwidth(base+5000, r.g.GMBandwidth/3)
	}
	r.Bandwidth(20000, 0)
	r.SetKernels([]arch.GridTimes{
		{Name: "prologue", CTAs: 2, Launched: 100, Started: 100, Finished: 100},
		{Name: "gemm", CTAs: 3, Launched: 0, Started: 1500, Finished: 9000},
		{Name: "side", CTAs: 7, Launched: 2000, Started: 2500, Finished: 4000},
		{Name: "gemm", CTAs: 216, Launched: 9000, Started: 9777, Finished: 15000},
		{Name: "epilogue", CTAs: 1, Launched: 15000, Started: 16000},
	})
	r.Finish(20001)
	return r.Timeline()
}

// manyTextsTimeline is a core whose lane runs more distinct instructions
// than a protobuf sequence interns before it clears its state
// (maxInterned), each slice starting between nanoseconds, the scalar
// unit's issue slots open across the clears.
func manyTextsTimeline(t testing.TB, w Window) *Timeline {
	r := newRTRecorder(t, "ascend-910a", w)
	for i := range maxInterned + 100 {
		in := isa.Scalar(int64(i))
		to := sim.Time(i+1)*1000 + 1
		r.interval(0, 1, arch.Busy, to, 999, &in, nil)
		if i%1000 == 999 {
			r.interval(0, 0, arch.Busy, to, 999*1000, &in, nil)
		}
	}
	r.Finish(sim.Time(maxInterned+101) * 1000)
	return r.Timeline()
}

// TestRoundTrip checks the round-trip property (see above) on recorded
// timelines of several shapes, with windows cutting them.
func TestRoundTrip(t *testing.T) {
	var total rtCount
	for _, c := range []struct {
		name string
		tl   func(testing.TB, Window) *Timeline
		w    Window
	}{
		{"davinci", davinciTimeline, Window{}},
		{"davinci window", davinciTimeline, Window{From: 1000, To: 12000}},
		{"davinci cores", davinciTimeline, Window{Cores: map[int]bool{1: true, 2: true}}},
		{"davinci after the end", davinciTimeline, Window{From: 50000}},
		{"gpu", gpuTimeline, Window{}},
		{"gpu window", gpuTimeline, Window{From: 1600, To: 9500}},
		{"many texts", manyTextsTimeline, Window{}},
		// A window after a deadlocked run's end: its last launch, running
		// at the deadlock, was kept from the window's start on while the
		// trace stated [end, end] (emptyWindow now drops it).
		{"gpu after the end", gpuTimeline, Window{From: 50000}},
	} {
		tl := c.tl(t, c.w)
		n := roundTrip(t, c.name, tl)
		t.Logf("%s: %+v", c.name, n)
		if c.w.From < 20000 && (n.slices == 0 || n.cores == 0) {
			t.Errorf("%s: compared no slices (%+v)", c.name, n)
		}
		total.slices += n.slices
		total.marks += n.marks
		total.arrows += n.arrows
		total.flows += n.flows
		total.occ += n.occ
		total.host += n.host
		total.kernels += n.kernels
		total.bw += n.bw
		total.power += n.power
	}
	if total.marks == 0 || total.arrows == 0 || total.flows == 0 || total.occ == 0 || total.host == 0 || total.kernels == 0 || total.bw == 0 || total.power == 0 {
		t.Errorf("the timelines miss a kind of event: compared %+v", total)
	}
}

// rtNames are the names the interpreter gives host tasks and kernels:
// what a program file may hold (valid UTF-8), JSON's special characters
// among them.
var rtNames = []string{"gemm", "h2d a", `say "hi"`, `back\slash`, "tab\there", "µs ≤ 1", "<b>&amp;", "", "nl\nx"}

// rtBytes hands out the fuzzer's bytes (0 once they run out).
type rtBytes []byte

func (b *rtBytes) next() byte {
	if len(*b) == 0 {
		return 0
	}
	c := (*b)[0]
	*b = (*b)[1:]
	return c
}

// rtCoreIDs are the cores the interpreter's ops name: the first, one past
// the dense tables' sizes and a protobuf thread id's lane bits (pid<<6),
// and one beyond 128.
var rtCoreIDs = [4]int{0, 1, 64, 200}

// rtOp encodes an op of fuzzTimeline: its kind (the op byte mod 10),
// the clock's advance in steps (the op byte's high nibble), its core
// (an index of rtCoreIDs), its length in steps, and its operands.
func rtOp(kind, adv int, core, d byte, operands ...byte) []byte {
	c := adv<<4 | ((kind-adv<<4%10)%10+10)%10
	return append([]byte{byte(c), core, d}, operands...)
}

// rtSeeds are FuzzRoundTrip's seeds: a DaVinci run with flags and their
// arrows, an issue slot, a group, stalls, gauges, GM bandwidth, power,
// host tasks and an ending; the same in a window; a GPU run with
// kernels (overlapping, one deadlocked) on three SMs.
var rtSeeds = func() [][]byte {
	davinci := slices.Concat(
		rtOp(3, 1, 0, 0, 1, 2, 0),   // set MTE2→MTE1 0
		rtOp(0, 5, 0, 50, 5, 1, 1),  // mte2.copy on MTE2
		rtOp(0, 0, 0, 30, 5, 1, 0),  // its issue slot on S
		rtOp(4, 1, 0, 0, 0),         // wait MTE2→MTE1 0
		rtOp(0, 5, 0, 40, 7, 3, 2),  // a group of loads on MTE1
		rtOp(3, 0, 1, 0, 2, 3, 5),   // core 1: set MTE1→M 16
		rtOp(2, 3, 1, 30, 3, 0),     // core 1: M waits for the flag
		rtOp(4, 0, 1, 0, 0),         // core 1: wait MTE1→M 16
		rtOp(0, 4, 1, 20, 8, 1, 3),  // core 1: mmad
		rtOp(5, 1, 0, 0, 1, 0, 128), // L1 half full
		rtOp(6, 1, 0, 0, 77),        // GM bandwidth
		rtOp(8, 2, 0, 0, 50),        // energy
		rtOp(7, 2, 0, 20, 2, 2),     // a transfer
		rtOp(7, 0, 0, 10, 0, 5),     // a computation
		rtOp(2, 2, 0, 40, 5, 1),     // a barrier wait on MTE3
		rtOp(5, 1, 0, 0, 1, 0, 0),   // L1 empty
		rtOp(3, 1, 1, 0, 4, 5, 6),   // core 1: a set never consumed
	)
	gpu := slices.Concat(
		rtOp(9, 0, 0, 0, 0, 9, 2, 40), // gemm, 9 blocks: more than the SMs
		rtOp(0, 3, 0, 30, 8, 1, 2),
		rtOp(0, 0, 1, 20, 10, 3, 3),
		rtOp(0, 1, 2, 20, 6, 1, 0),
		rtOp(9, 1, 0, 0, 5, 2, 1, 10), // overlapping the first
		rtOp(2, 2, 1, 10, 4, 4),
		rtOp(5, 0, 2, 0, 1, 0, 200),
		rtOp(6, 1, 0, 0, 255),
		rtOp(9, 3, 0, 0, 1, 1, 0, 255, 1), // deadlocked, not started
	)
	return [][]byte{
		append([]byte{0x68, 100, 1}, davinci...),    // 7 ps steps, power, ending; 2 cores
		append([]byte{0x0c, 10, 20, 1}, davinci...), // a window [70 ps, 630 ps]
		append([]byte{0x11, 2}, gpu...),             // GPU, 1 ns steps, 3 SMs
	}
}()

// TestRoundTripSeeds holds FuzzRoundTrip's seeds to what they are meant
// to exercise: a property checked on an empty timeline proves nothing.
func TestRoundTripSeeds(t *testing.T) {
	var n [3]rtCount
	for i, seed := range rtSeeds {
		n[i] = roundTrip(t, fmt.Sprintf("seed %d", i), fuzzTimeline(t, seed))
		t.Logf("seed %d: %+v", i, n[i])
	}
	if n[0].slices == 0 || n[0].arrows == 0 || n[0].flows == 0 || n[0].power == 0 || n[0].occ == 0 {
		t.Errorf("seed 0 (DaVinci): compared %+v", n[0])
	}
	if n[1].slices == 0 {
		t.Errorf("seed 1 (a window): compared %+v", n[1])
	}
	if n[2].slices == 0 || n[2].kernels == 0 {
		t.Errorf("seed 2 (GPU): compared %+v", n[2])
	}
}

// rtMaxOps bounds the recorder calls of one fuzz input.
const rtMaxOps = 256

// fuzzTimeline derives a recorded timeline from data: a small
// interpreter turning bytes into recorder calls an engine could make
// (rtRecorder's invariants), with bounded counts and times. The first
// byte chooses the machine (DaVinci, with flags; a GPU, with kernels),
// the window, the time step (1 ps, 7 ps, 1 ns, 1 µs: times between
// nanoseconds, and round ones), the power model and an ending; then each
// op, a byte and its operands, advances the clock and makes one call.
func fuzzTimeline(t testing.TB, data []byte) *Timeline {
	b := rtBytes(data)
	h := b.next()
	gpu := h&1 != 0
	machine := "ascend-910a"
	if gpu {
		machine = "a100"
	}
	step := []sim.Time{1, 7, sim.Nanosecond, sim.Microsecond}[h>>3&3]
	var w Window
	switch h >> 1 & 3 {
	case 1:
		w.From = sim.Time(b.next()) * step
	case 2:
		w.From = sim.Time(b.next()) * step
		w.To = w.From + sim.Time(b.next())*step*4 + 1
	case 3:
		w.Cores = map[int]bool{rtCoreIDs[b.next()%4]: true, rtCoreIDs[b.next()%4]: true}
		w.From = sim.Time(b.next()%4) * step
	}
	r := newRTRecorder(t, machine, w)
	// The consumer's work on this goroutine (as Batches.Apply): the
	// consumer goroutine polls its queue every 1–16 ms, which made a
	// fuzz input take that long to Finish; the timeline is built by the
	// same apply. (TestRoundTrip records through the goroutine.)
	r.sink = func(bt *batch) {
		r.mu.Lock()
		r.apply(bt)
		r.mu.Unlock()
	}
	if h&0x20 != 0 {
		r.StaticWatts(float64(b.next()) / 4)
	}
	nl, nb := len(r.g.Lanes), len(r.g.Buffers)
	ncores := 1 + int(b.next()%4)
	causes := []arch.Cause{arch.WaitFlag, arch.Barrier, arch.QueueFull, arch.Bandwidth, arch.Latency}
	ids := []int{0, 1, 5, 15, 16, 17, 1 << 23}
	kinds := []string{"compute", "launch", "transfer", "wait", "call", "async"}
	var now, last sim.Time
	var kernels []arch.GridTimes
	deadlocked := false
	for op := 0; op < rtMaxOps && len(b) > 0; op++ {
		c := b.next()
		now += sim.Time(c>>4) * step
		core := rtCoreIDs[int(b.next())%ncores]
		d := sim.Time(b.next()) * step
		switch c % 10 {
		case 0, 1:
			in := rtInstrs[int(b.next())%len(rtInstrs)]
			var g *arch.Group
			if x := b.next(); x%3 == 0 {
				g = &arch.Group{N: 2 + int(x%5), Bytes: int64(x) << 10, Flops: float64(x) * 1.5}
			}
			r.interval(core, int(b.next())%nl, arch.Busy, now, d, &in, g)
		case 2:
			r.interval(core, int(b.next())%nl, causes[int(b.next())%len(causes)], now, d, nil, nil)
		case 3:
			if !gpu {
				r.set(core, int(b.next())%nl, int(b.next())%nl, ids[int(b.next())%len(ids)], now)
			}
		case 4:
			if !gpu {
				var keys [][4]int
				for k, n := range r.pending {
					if n > 0 && k[0] == core {
						keys = append(keys, k)
					}
				}
				if len(keys) > 0 {
					slices.SortFunc(keys, func(a, b [4]int) int { return slices.Compare(a[:], b[:]) })
					k := keys[int(b.next())%len(keys)]
					r.wait(k[0], k[1], k[2], k[3], now)
				}
			}
		case 5:
			buf := int(b.next()) % nb
			v := int64(b.next()) << 12
			if cp := r.capacity(buf); cp > 0 {
				v = cp * int64(b.next()) / 255
			}
			r.Occupancy(core, buf, v, now)
		case 6:
			x := b.next()
			v := r.g.GMBandwidth * float64(x) / 255
			if x&1 != 0 {
				v = math.Nextafter(v, 0) // (not a round number of GB/s)
			}
			r.Bandwidth(now, v)
		case 7:
			r.host(kinds[int(b.next())%len(kinds)], rtNames[int(b.next())%len(rtNames)], now, d)
		case 8:
			r.Energy(now, float64(b.next())*1e5+0.25)
		case 9:
			if gpu && !deadlocked {
				k := arch.GridTimes{Name: rtNames[int(b.next())%len(rtNames)], CTAs: int(b.next()), Launched: now}
				k.Started = now + sim.Time(b.next()%8)*step
				if x := b.next(); x == 0xff {
					deadlocked = true // running at the end: the last
					if k.Started == k.Launched && b.next()&1 != 0 {
						k.Started = 0 // not started
					}
				} else {
					k.Finished = k.Started + sim.Time(x)*step
					last = max(last, k.Finished)
				}
				kernels = append(kernels, k)
			}
		}
	}
	end := max(now, last) + sim.Time(b.next())*step
	if kernels != nil {
		r.SetKernels(kernels)
	}
	if deadlocked || h&0x40 != 0 {
		r.SetEnding(fmt.Sprintf("deadlock at %v", end))
	}
	r.Finish(end)
	return r.Timeline()
}

// FuzzRoundTrip checks the round-trip property (see above) on timelines
// derived from the fuzzer's bytes (fuzzTimeline). Seeds: rtSeeds.
func FuzzRoundTrip(f *testing.F) {
	for _, seed := range rtSeeds {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		roundTrip(t, "fuzz", fuzzTimeline(t, data))
	})
}

// clusterView returns what a cluster trace of ct is documented to give
// back when read (see above): a core per traced rank, a lane per track;
// each span a slice (its category as the reader keeps one); a drilled-in
// NPU's cores on its rank's further lanes, their buffer counters named
// after their core.
func clusterView(ct *ClusterTrace) rtView {
	h := ct.header()
	v := rtView{Machine: h.Machine, Program: h.Program, Ending: h.Ending, From: sim.Time(h.FromPs), To: sim.Time(h.ToPs),
		Done: true, Capacity: map[string]int64{}, Notes: h.notes()}
	for name, c := range h.Capacity {
		v.Capacity[name] = c
	}
	var names []string
	for r := range ct.Ranks {
		if !ct.traced(r) {
			continue
		}
		for i, n := range append(slices.Clone(ct.Tracks), ct.RankTracks[r]...) {
			if i >= len(names) {
				names = append(names, n)
			}
		}
		rc := rtCore{ID: r, Lanes: map[int][]rtSlice{}, Occ: map[string][]Sample{}}
		for _, s := range ct.Spans {
			if s.Rank != r {
				continue
			}
			rs := rtSlice{From: s.From, To: s.To, Name: s.Name, Cause: arch.Busy}
			if cat := ct.spanCat(&s); cat == "wait" {
				rs.Cause = arch.WaitFlag
			} else {
				rs.Class = ParseClass(cat)
			}
			rc.Lanes[s.Track] = append(rc.Lanes[s.Track], rs)
		}
		for _, d := range ct.drills {
			if d.rank != r {
				continue
			}
			for _, c := range d.tl.Cores {
				first, ok := d.first[c.ID]
				if !ok {
					continue
				}
				cv := coreView(d.tl, c, true)
				for p, ss := range cv.Lanes {
					rc.Lanes[first+p] = append(rc.Lanes[first+p], ss...)
				}
				for _, f := range cv.Flows {
					f.Src, f.Dst = first+f.Src, first+f.Dst
					rc.Flows = append(rc.Flows, f)
				}
				for name, ss := range cv.Occ {
					rc.Occ[fmt.Sprintf("core %d %s", c.ID, name)] = ss
				}
			}
		}
		for p := range rc.Lanes {
			sortLane(rc.Lanes[p])
		}
		sort.SliceStable(rc.Flows, func(i, j int) bool {
			a, b := rc.Flows[i], rc.Flows[j]
			if a.Wait != b.Wait {
				return a.Wait < b.Wait
			}
			return a.Bind < b.Bind
		})
		v.Cores = append(v.Cores, rc)
	}
	v.Lanes = names
	return v
}

// TestClusterRoundTrip checks the round-trip property on a cluster trace
// (WriteClusterJSON, read by ReadTrace): host spans of every stage
// category, kernels overlapping on a track, a span of no length, spans
// of their own category, messages (not read), an untraced rank, records
// dropped past the limit (a note), and an NPU drilled into.
func TestClusterRoundTrip(t *testing.T) {
	ct := &ClusterTrace{Machine: "cloudbrain2-node", Program: "lu-fused", Ranks: []string{"r0", "r1", "r2"},
		Tracks: []string{"host", "main", "fusion"}, TrackCats: []string{"host", "kernel", ""},
		Only: map[int]bool{0: true, 1: true}, Limit: 14, Ending: "deadlock at 9µs", End: 9 * sim.Microsecond}
	for r := range 3 {
		base := sim.Time(r) * 1001
		for i, sp := range []struct{ name, cat string }{{"d2h diag 0", "transfer"}, {"diag 1", "compute"}, {"launch p1-0", "launch"}, {"wait p1-0", "wait"},
			{"mpi-bcast", "transfer"}, {"barrier", "wait"}, {"odd stage", ""}, {"hccl-bcast 2", "wait"}} {
			ct.AddSpan(ClusterSpan{Rank: r, Track: 0, Name: sp.name, Cat: sp.cat, From: base + sim.Time(i)*700, To: base + sim.Time(i)*700 + 650})
		}
		ct.AddSpan(ClusterSpan{Rank: r, Track: 1, Name: "p1-0", From: base, To: base + 4000})
		ct.AddSpan(ClusterSpan{Rank: r, Track: 1, Name: "p1-1", From: base + 1000, To: base + 2500}) // overlapping
		ct.AddSpan(ClusterSpan{Rank: r, Track: 2, Name: "zero", From: base + 300, To: base + 300})
		ct.AddSpan(ClusterSpan{Rank: r, Track: 2, Name: "mmad", Cat: "mmad", From: base + 400, To: base + 999})
		ct.AddSpan(ClusterSpan{Rank: r, Track: 2, Name: "x", Cat: "collective", From: base + 1000, To: base + 1500})
		ct.AddMessage(ClusterMessage{From: r, To: (r + 1) % 3, Track: 0, Sent: base + 2800, Arrived: base + 3500, Name: "bcast"})
	}
	ct.AddTimeline(1, davinciTimeline(t, Window{}))
	if ct.Dropped == 0 {
		t.Fatal("no record dropped: the limit goes untested")
	}
	var js bytes.Buffer
	if err := WriteClusterJSON(&js, ct); err != nil {
		t.Fatal(err)
	}
	got, err := ReadTrace(&js)
	if err != nil {
		t.Fatal(err)
	}
	var n rtCount
	compareViews(t, "cluster", clusterView(ct), readView(got), &n)
	t.Logf("%+v", n)
	if n.cores != 2 || n.slices < 20 || n.arrows == 0 || n.flows == 0 || n.occ == 0 {
		t.Errorf("compared too little: %+v", n)
	}
}
