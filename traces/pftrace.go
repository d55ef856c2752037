package traces

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/davinci-sim/davinci-sim/sim"
)

// The Perfetto protobuf trace (a perfetto.protos.Trace: a stream of
// TracePackets), for runs too large for a JSON viewer. It carries what the
// JSON trace carries, encoded with the field numbers of Perfetto's schema
// (perfetto_trace.proto; no generated code):
//   - a ChromeMetadata packet (name "davinci-sim") holding the JSON trace's
//     otherData (machine, program, time span, buffer capacities);
//   - track descriptors: the root (uuid 0) asking for processes and
//     threads in the order of their sibling_order_rank; a process track per
//     core ("core N", pid N+1: Perfetto keeps pid 0 for the idle process,
//     rank N) with a thread track per lane (rank = lane, tid = pid<<6 |
//     lane+1) and a counter track per buffer (bytes); a process "host"
//     (pid HostPid, hosted runs, rank -1: first) with a thread track per
//     host lane (HostLanes); a process "GM" (pid GMPid) with the counter
//     track "GM bandwidth" (GB/s); a process "power" (pid PowerPid,
//     machines with a power model) with the counter track "power" (W); a
//     process "kernels" (pid KernelsPid, runs that launch grids, rank -2:
//     above the host) with a thread track per row of launches;
//   - track events: a slice is a SLICE_BEGIN and a SLICE_END on its lane's
//     track, a zero-length slice (flag marks) an INSTANT; name and category
//     interned; debug annotations instr (interned), bytes, flops, and ps —
//     the picoseconds below the nanosecond of the start and end,
//     1000·(start mod 1000) + end mod 1000, omitted when 0 (Perfetto's times
//     are nanoseconds, the simulator's picoseconds); a set_flag with an
//     arrow has flow_ids = [the arrow], the wait_flag it released
//     terminating_flow_ids = [the arrow]; counters are COUNTER events; a
//     kernel launch is a slice (category "kernel", annotations blocks and
//     launch_us, and deadlocked = true on the kernel a deadlocked run
//     deadlocked in, interned on its row's sequence) holding a slice
//     "launch" over its launch latency (launch_us is the run's latency,
//     the slice's cut to the window).
//
// Each track's events form one packet sequence (trusted_packet_sequence_id)
// whose first packet clears the incremental state and sets the sequence's
// defaults: its track and an incremental clock (id 64: each timestamp is the
// nanoseconds since the sequence's packet before). The flag marks with an
// arrow come last in one sequence per core (with an explicit track_uuid),
// in the walk's order: a set before the waits of its instant. Interning
// tables are per sequence and cleared (with a new first packet) when
// maxInterned strings are held, so that the writer's memory stays bounded;
// it writes each packet as it goes.

// Field numbers of perfetto_trace.proto.
const (
	fTracePacket = 1 // Trace.packet

	fPacketTimestamp     = 8  // TracePacket.timestamp
	fPacketClockID       = 58 // TracePacket.timestamp_clock_id
	fPacketSequenceID    = 10 // TracePacket.trusted_packet_sequence_id
	fPacketSequenceFlags = 13 // TracePacket.sequence_flags
	fPacketInterned      = 12 // TracePacket.interned_data
	fPacketDefaults      = 59 // TracePacket.trace_packet_defaults
	fPacketTrackEvent    = 11 // TracePacket.track_event
	fPacketTrackDesc     = 60 // TracePacket.track_descriptor
	fPacketClockSnapshot = 6  // TracePacket.clock_snapshot
	fPacketChromeEvents  = 5  // TracePacket.chrome_events

	seqIncrementalStateCleared = 1 // TracePacket.SequenceFlags
	seqNeedsIncrementalState   = 2

	fDefaultsClockID    = 58 // TracePacketDefaults.timestamp_clock_id
	fDefaultsTrackEvent = 11 // TracePacketDefaults.track_event_defaults
	fTrackEventDefTrack = 11 // TrackEventDefaults.track_uuid

	fSnapshotClocks     = 1 // ClockSnapshot.clocks
	fClockID            = 1 // ClockSnapshot.Clock.clock_id
	fClockTimestamp     = 2 // ClockSnapshot.Clock.timestamp
	fClockIsIncremental = 3 // ClockSnapshot.Clock.is_incremental
	clockBoottime       = 6 // BuiltinClocks.BOOTTIME
	clockIncremental    = 64

	fBundleMetadata   = 2 // ChromeEventBundle.metadata
	fMetadataName     = 1 // ChromeMetadata.name
	fMetadataJSONData = 5 // ChromeMetadata.json_value

	fInternedCategories = 1  // InternedData.event_categories
	fInternedNames      = 2  // InternedData.event_names
	fInternedAnnNames   = 3  // InternedData.debug_annotation_names
	fInternedAnnStrings = 29 // InternedData.debug_annotation_string_values
	fInternedIID        = 1  // EventCategory/EventName/DebugAnnotationName/InternedString.iid
	fInternedName       = 2  // EventCategory.name, EventName.name, DebugAnnotationName.name, InternedString.str

	fEventCategoryIIDs   = 3  // TrackEvent.category_iids
	fEventNameIID        = 10 // TrackEvent.name_iid
	fEventType           = 9  // TrackEvent.type
	fEventTrackUUID      = 11 // TrackEvent.track_uuid
	fEventCounterValue   = 30 // TrackEvent.counter_value
	fEventDoubleCounter  = 44 // TrackEvent.double_counter_value
	fEventFlowIDs        = 47 // TrackEvent.flow_ids
	fEventTerminatingIDs = 48 // TrackEvent.terminating_flow_ids
	fEventAnnotations    = 4  // TrackEvent.debug_annotations
	typeSliceBegin       = 1  // TrackEvent.Type
	typeSliceEnd         = 2
	typeInstant          = 3
	typeCounter          = 4

	fAnnNameIID             = 1  // DebugAnnotation.name_iid
	fAnnBool                = 2  // DebugAnnotation.bool_value
	fAnnUint                = 3  // DebugAnnotation.uint_value
	fAnnInt                 = 4  // DebugAnnotation.int_value
	fAnnDouble              = 5  // DebugAnnotation.double_value
	fAnnString              = 6  // DebugAnnotation.string_value
	fAnnStringIID           = 17 // DebugAnnotation.string_value_iid
	fTrackUUID              = 1  // TrackDescriptor.uuid
	fTrackParent            = 5  // TrackDescriptor.parent_uuid
	fTrackName              = 2  // TrackDescriptor.name
	fTrackProcess           = 3  // TrackDescriptor.process
	fTrackCounter           = 8  // TrackDescriptor.counter
	fTrackRank              = 12 // TrackDescriptor.sibling_order_rank
	fTrackThread            = 4  // TrackDescriptor.thread
	fTrackProcessOrder      = 19 // TrackDescriptor.process_ordering
	fTrackThreadOrder       = 20 // TrackDescriptor.thread_ordering
	processOrderingExplicit = 1  // TrackDescriptor.ProcessOrdering.PROCESS_ORDERING_EXPLICIT
	threadOrderingExplicit  = 1  // TrackDescriptor.ThreadOrdering.THREAD_ORDERING_EXPLICIT
	fThreadPid              = 1  // ThreadDescriptor.pid
	fThreadTid              = 2  // ThreadDescriptor.tid
	fThreadName             = 5  // ThreadDescriptor.thread_name
	fProcessPid             = 1  // ProcessDescriptor.pid
	fProcessName            = 6  // ProcessDescriptor.process_name
	fProcessSort            = 3  // ProcessDescriptor.legacy_sort_index
	fCounterUnit            = 3  // CounterDescriptor.unit
	fCounterUnitName        = 6  // CounterDescriptor.unit_name
	unitSizeBytes           = 3  // CounterDescriptor.Unit.UNIT_SIZE_BYTES
)

// Debug annotation names, interned with these ids on every sequence.
const (
	annInstr = 1 + iota
	annBytes
	annFlops
	annPs
	numAnn
)

var annNames = [numAnn]string{annInstr: "instr", annBytes: "bytes", annFlops: "flops", annPs: "ps"}

// The kernel launches' annotation names, interned on their rows'
// sequences only.
const (
	annBlocks = numAnn + iota
	annLaunch
	annDeadlocked
)

// maxInterned bounds the interned strings a sequence holds before its
// incremental state is cleared.
const maxInterned = 1 << 16

// Track uuids: kind<<56 | core<<16 | index (core+1 for cores, 0 for the
// chip-wide GM).
const (
	trackCore = 1 + iota
	trackLane
	trackBuffer
	trackGM
	trackGMBandwidth
	trackHost
	trackHostLane
	trackPower
	trackPowerCounter
	trackKernels
	trackKernelLane
)

func trackUUID(kind, core, index int) uint64 {
	return uint64(kind)<<56 | uint64(core+1)<<16 | uint64(index)
}

// metadataName names the ChromeMetadata entry holding the trace header.
const metadataName = generator

// IsProtoTrace reports whether path names a Perfetto protobuf trace
// (.pftrace or .perfetto-trace) rather than a JSON one.
func IsProtoTrace(path string) bool {
	return hasSuffix(path, ".pftrace") || hasSuffix(path, ".perfetto-trace")
}

func hasSuffix(s, suf string) bool { return len(s) >= len(suf) && s[len(s)-len(suf):] == suf }

// WritePftrace writes the timeline as a Perfetto protobuf trace (see
// above), streaming: memory beyond the timeline is bounded. The output is
// deterministic.
func WritePftrace(out io.Writer, tl *Timeline) error {
	w := bufio.NewWriterSize(out, 1<<16)
	p := &pfWriter{w: w, tl: tl}
	hb, err := json.Marshal(newTraceHeader(tl))
	if err != nil {
		return err
	}
	var md []byte
	md = protowire.AppendTag(md, fMetadataName, protowire.BytesType)
	md = protowire.AppendString(md, metadataName)
	md = protowire.AppendTag(md, fMetadataJSONData, protowire.BytesType)
	md = protowire.AppendBytes(md, hb)
	p.pk = protowire.AppendTag(p.pk[:0], fPacketChromeEvents, protowire.BytesType)
	p.pk = protowire.AppendVarint(p.pk, uint64(protowire.SizeTag(fBundleMetadata)+protowire.SizeBytes(len(md))))
	p.pk = protowire.AppendTag(p.pk, fBundleMetadata, protowire.BytesType)
	p.pk = protowire.AppendBytes(p.pk, md)
	p.flushPacket()
	p.root()
	if err := walkTimeline(tl, p); err != nil {
		return err
	}
	p.endSequence()
	if p.err != nil {
		return p.err
	}
	return w.Flush()
}

// pfWriter is the protobuf encoder of a timeline walk.
type pfWriter struct {
	w   *bufio.Writer
	tl  *Timeline
	err error

	coreID int // the current core's ID
	// The current sequence: its id, its track (0: the core's arrows,
	// with a track_uuid per event), the time of its last packet (ns), the
	// open slices' ends (a stack, with their flag of arrows).
	seq    uint32
	track  uint64
	arrows bool
	last   int64
	open   []sim.Time
	// Interning of the current sequence: event names, categories and
	// annotation strings by value.
	names, cats, strs map[string]uint64
	// Buffers of the packet being built (reused).
	pk, ev, ann, in, tmp []byte
	interned             [fInternedAnnStrings + 1][]byte // new entries by InternedData field
}

// flushPacket writes the packet in p.pk to the output.
func (p *pfWriter) flushPacket() {
	if p.err != nil {
		return
	}
	var hdr [16]byte
	h := protowire.AppendTag(hdr[:0], fTracePacket, protowire.BytesType)
	h = protowire.AppendVarint(h, uint64(len(p.pk)))
	if _, err := p.w.Write(h); err != nil {
		p.err = err
		return
	}
	if _, err := p.w.Write(p.pk); err != nil {
		p.err = err
	}
}

// descriptor writes a TrackDescriptor packet whose body (without the uuid) is
// body.
func (p *pfWriter) descriptor(uuid uint64, body []byte) {
	p.tmp = protowire.AppendTag(p.tmp[:0], fTrackUUID, protowire.VarintType)
	p.tmp = protowire.AppendVarint(p.tmp, uuid)
	p.tmp = append(p.tmp, body...)
	p.pk = protowire.AppendTag(p.pk[:0], fPacketTrackDesc, protowire.BytesType)
	p.pk = protowire.AppendBytes(p.pk, p.tmp)
	p.flushPacket()
}

func appendStringField(b []byte, num protowire.Number, s string) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendString(b, s)
}

func appendVarintField(b []byte, num protowire.Number, v uint64) []byte {
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

func appendMessageField(b []byte, num protowire.Number, msg []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, msg)
}

// process writes the descriptor of a process track, ordered among the
// processes by rank (the root descriptor asks for explicit ordering).
func (p *pfWriter) process(uuid uint64, pid int, name string, rank int) {
	var proc, body []byte
	proc = appendVarintField(proc, fProcessPid, uint64(int32(pid)))
	proc = appendStringField(proc, fProcessName, name)
	proc = appendVarintField(proc, fProcessSort, uint64(int32(rank)))
	body = appendStringField(body, fTrackName, name)
	body = appendMessageField(body, fTrackProcess, proc)
	body = appendVarintField(body, fTrackRank, uint64(int32(rank)))
	p.descriptor(uuid, body)
}

// thread writes the descriptor of the thread track of lane of process pid,
// ordered among the process's threads by lane. Thread ids are unique in the
// trace: pid<<6 | lane+1.
func (p *pfWriter) thread(uuid uint64, pid, lane int, name string) {
	var th, body []byte
	th = appendVarintField(th, fThreadPid, uint64(int32(pid)))
	th = appendVarintField(th, fThreadTid, uint64(int64(pid)<<6|int64(lane+1)))
	th = appendStringField(th, fThreadName, name)
	body = appendStringField(body, fTrackName, name)
	body = appendMessageField(body, fTrackThread, th)
	body = appendVarintField(body, fTrackRank, uint64(int32(lane)))
	p.descriptor(uuid, body)
}

// root writes the root track descriptor (uuid 0): processes and threads
// in the order of their ranks.
func (p *pfWriter) root() {
	var body []byte
	body = appendVarintField(body, fTrackProcessOrder, processOrderingExplicit)
	body = appendVarintField(body, fTrackThreadOrder, threadOrderingExplicit)
	p.descriptor(0, body)
}

// child writes the descriptor of a child track (unit != "": a counter track
// in that unit, "bytes" being UNIT_SIZE_BYTES).
func (p *pfWriter) child(uuid, parent uint64, name string, rank int, unit string) {
	var body []byte
	body = appendVarintField(body, fTrackParent, parent)
	body = appendStringField(body, fTrackName, name)
	body = appendVarintField(body, fTrackRank, uint64(int32(rank)))
	if unit != "" {
		var cd []byte
		if unit == "bytes" {
			cd = appendVarintField(cd, fCounterUnit, unitSizeBytes)
		} else {
			cd = appendStringField(cd, fCounterUnitName, unit)
		}
		body = appendMessageField(body, fTrackCounter, cd)
	}
	p.descriptor(uuid, body)
}

func (p *pfWriter) core(c *CoreTimeline, lanes int) error {
	p.endSequence()
	p.coreID = c.ID
	pu := trackUUID(trackCore, c.ID, 0)
	p.process(pu, c.ID+1, fmt.Sprintf("core %d", c.ID), c.ID)
	for l := range lanes {
		p.thread(trackUUID(trackLane, c.ID, l), c.ID+1, l, p.tl.LaneName(l))
	}
	for b := range c.Occ {
		if len(c.Occ[b]) > 0 {
			p.child(trackUUID(trackBuffer, c.ID, b), pu, p.tl.BufferName(b), lanes+b, "bytes")
		}
	}
	return p.err
}

// startSequence ends the current sequence and starts one for track (0:
// the core's arrows) at time t (ps).
func (p *pfWriter) startSequence(track uint64, arrows bool, t sim.Time) {
	p.endSequence()
	p.seq++
	p.track, p.arrows = track, arrows
	p.clearState(t)
}

// clearState writes the first packet of the current sequence's incremental
// state at time t: cleared, the defaults and the incremental clock.
func (p *pfWriter) clearState(t sim.Time) {
	ns := int64(t / 1000)
	p.last = ns
	if p.names == nil {
		p.names, p.cats, p.strs = map[string]uint64{}, map[string]uint64{}, map[string]uint64{}
	}
	clear(p.names)
	clear(p.cats)
	clear(p.strs)
	pk := appendVarintField(p.pk[:0], fPacketTimestamp, uint64(ns))
	pk = appendVarintField(pk, fPacketClockID, clockBoottime)
	pk = appendVarintField(pk, fPacketSequenceID, uint64(p.seq))
	pk = appendVarintField(pk, fPacketSequenceFlags, seqIncrementalStateCleared)
	var def, ted []byte
	def = appendVarintField(def, fDefaultsClockID, clockIncremental)
	if !p.arrows {
		ted = appendVarintField(ted, fTrackEventDefTrack, p.track)
		def = appendMessageField(def, fDefaultsTrackEvent, ted)
	}
	pk = appendMessageField(pk, fPacketDefaults, def)
	var cs, clk []byte
	clk = appendVarintField(clk, fClockID, clockBoottime)
	clk = appendVarintField(clk, fClockTimestamp, uint64(ns))
	cs = appendMessageField(cs, fSnapshotClocks, clk)
	clk = appendVarintField(clk[:0], fClockID, clockIncremental)
	clk = appendVarintField(clk, fClockTimestamp, uint64(ns))
	clk = appendVarintField(clk, fClockIsIncremental, 1)
	cs = appendMessageField(cs, fSnapshotClocks, clk)
	pk = appendMessageField(pk, fPacketClockSnapshot, cs)
	var in []byte
	ann := func(id int, name string) {
		var e []byte
		e = appendVarintField(e, fInternedIID, uint64(id))
		e = appendStringField(e, fInternedName, name)
		in = appendMessageField(in, fInternedAnnNames, e)
	}
	for id := 1; id < numAnn; id++ {
		ann(id, annNames[id])
	}
	if p.track>>56 == trackKernelLane {
		ann(annBlocks, "blocks")
		ann(annLaunch, "launch_us")
		ann(annDeadlocked, "deadlocked")
	}
	pk = appendMessageField(pk, fPacketInterned, in)
	p.pk = pk
	p.flushPacket()
}

// endSequence closes the open slices of the current sequence.
func (p *pfWriter) endSequence() {
	if p.seq == 0 {
		return
	}
	for len(p.open) > 0 {
		p.closeTop()
	}
}

// closeTop writes the end of the innermost open slice.
func (p *pfWriter) closeTop() {
	n := len(p.open) - 1
	end := p.open[n]
	p.open = p.open[:n]
	p.ev = appendVarintField(p.ev[:0], fEventType, typeSliceEnd)
	p.event(end)
}

// intern returns the iid of s in table m, adding it as a new entry of
// InternedData field f to the packet being built.
func (p *pfWriter) intern(m map[string]uint64, f int, s string) uint64 {
	if id, ok := m[s]; ok {
		return id
	}
	id := uint64(len(m) + 1)
	m[s] = id
	var e []byte
	e = appendVarintField(p.tmp[:0], fInternedIID, id)
	e = appendStringField(e, fInternedName, s)
	p.interned[f] = appendMessageField(p.interned[f], protowire.Number(f), e)
	p.tmp = e
	return id
}

// event writes a packet with the track event in p.ev at time t (ps) and
// the interned data gathered for it.
func (p *pfWriter) event(t sim.Time) {
	ns := int64(t / 1000)
	pk := appendVarintField(p.pk[:0], fPacketTimestamp, uint64(ns-p.last))
	p.last = ns
	pk = appendVarintField(pk, fPacketSequenceID, uint64(p.seq))
	pk = appendVarintField(pk, fPacketSequenceFlags, seqNeedsIncrementalState)
	in := p.in[:0]
	for f, b := range p.interned {
		if len(b) > 0 {
			in = append(in, b...)
			p.interned[f] = b[:0]
		}
	}
	if len(in) > 0 {
		pk = appendMessageField(pk, fPacketInterned, in)
	}
	p.in = in
	pk = appendMessageField(pk, fPacketTrackEvent, p.ev)
	p.pk = pk
	p.flushPacket()
}

func (p *pfWriter) slice(ev *sliceEvent) error {
	s := &ev.s
	switch {
	case ev.bind != 0:
		if !p.arrows {
			p.startSequence(0, true, s.From)
		}
	case p.arrows || p.track != trackUUID(trackLane, p.coreID, ev.lane):
		p.startSequence(trackUUID(trackLane, p.coreID, ev.lane), false, s.From)
	}
	var track uint64
	if p.arrows {
		track = trackUUID(trackLane, p.coreID, ev.lane)
	}
	te := p.beginEvent(s.From, s.To, track, ev.name, ev.cat)
	if ev.text != "" {
		a := appendVarintField(p.ann[:0], fAnnNameIID, annInstr)
		a = appendVarintField(a, fAnnStringIID, p.intern(p.strs, fInternedAnnStrings, ev.text))
		te = appendMessageField(te, fEventAnnotations, a)
		p.ann = a
	}
	if ev.bytes != 0 {
		a := appendVarintField(p.ann[:0], fAnnNameIID, annBytes)
		a = appendVarintField(a, fAnnInt, uint64(ev.bytes))
		te = appendMessageField(te, fEventAnnotations, a)
		p.ann = a
	}
	if ev.flops != 0 {
		a := appendVarintField(p.ann[:0], fAnnNameIID, annFlops)
		a = protowire.AppendTag(a, fAnnDouble, protowire.Fixed64Type)
		a = protowire.AppendFixed64(a, math.Float64bits(ev.flops))
		te = appendMessageField(te, fEventAnnotations, a)
		p.ann = a
	}
	te = p.appendPs(te, s.From, s.To)
	if ev.bind != 0 {
		f := protowire.Number(fEventTerminatingIDs)
		if ev.set {
			f = fEventFlowIDs
		}
		te = protowire.AppendTag(te, f, protowire.Fixed64Type)
		te = protowire.AppendFixed64(te, ev.bind)
	}
	p.endEvent(te, s.From, s.To)
	return p.err
}

// beginEvent closes the open slices that end by from and starts the track
// event of a slice from..to named name in category cat (on track: 0 = the
// sequence's), returning it for more fields.
func (p *pfWriter) beginEvent(from, to sim.Time, track uint64, name, cat string) []byte {
	for n := len(p.open); n > 0 && p.open[n-1] <= from; n = len(p.open) {
		p.closeTop()
	}
	if len(p.strs)+len(p.names) >= maxInterned {
		p.clearState(from)
	}
	te := p.ev[:0]
	if to > from {
		te = appendVarintField(te, fEventType, typeSliceBegin)
	} else {
		te = appendVarintField(te, fEventType, typeInstant)
	}
	if track != 0 {
		te = appendVarintField(te, fEventTrackUUID, track)
	}
	te = appendVarintField(te, fEventNameIID, p.intern(p.names, fInternedNames, name))
	return appendVarintField(te, fEventCategoryIIDs, p.intern(p.cats, fInternedCategories, cat))
}

// endEvent writes track event te of a slice from..to, leaving the slice
// open until to.
func (p *pfWriter) endEvent(te []byte, from, to sim.Time) {
	p.ev = te
	p.event(from)
	if to > from {
		p.open = append(p.open, to)
	}
}

func (p *pfWriter) host(t *HostTask, first bool) error {
	if first {
		p.endSequence()
		hu := trackUUID(trackHost, -1, 0)
		p.process(hu, HostPid, "host", -1) // above the cores
		for l, name := range HostLanes {
			p.thread(trackUUID(trackHostLane, -1, l), HostPid, l, name)
		}
	}
	if u := trackUUID(trackHostLane, -1, t.Lane()); p.arrows || p.track != u {
		p.startSequence(u, false, t.From)
	}
	te := p.beginEvent(t.From, t.To, 0, t.Name, t.Kind)
	p.endEvent(p.appendPs(te, t.From, t.To), t.From, t.To)
	return p.err
}

func (p *pfWriter) kernels(ks []Kernel, lanes []int, n int) error {
	p.endSequence()
	ku := trackUUID(trackKernels, -1, 0)
	p.process(ku, KernelsPid, "kernels", kernelsProcessRank)
	for l := range n {
		p.thread(trackUUID(trackKernelLane, -1, l), KernelsPid, l, kernelThreadName(l))
	}
	for l := range n { // row by row: a sequence's times never go back
		first := true
		for i := range ks {
			if lanes[i] != l {
				continue
			}
			k := &ks[i]
			if first {
				p.startSequence(trackUUID(trackKernelLane, -1, l), false, k.Launched)
				first = false
			}
			te := p.beginEvent(k.Launched, k.Finished, 0, k.Name, "kernel")
			a := appendVarintField(p.ann[:0], fAnnNameIID, annBlocks)
			a = appendVarintField(a, fAnnInt, uint64(k.Blocks))
			te = appendMessageField(te, fEventAnnotations, a)
			a = appendVarintField(a[:0], fAnnNameIID, annLaunch)
			a = protowire.AppendTag(a, fAnnDouble, protowire.Fixed64Type)
			a = protowire.AppendFixed64(a, math.Float64bits(float64(k.LaunchLatency())/float64(sim.Microsecond)))
			te = appendMessageField(te, fEventAnnotations, a)
			if k.Deadlocked {
				a = appendVarintField(a[:0], fAnnNameIID, annDeadlocked)
				a = appendVarintField(a, fAnnBool, 1)
				te = appendMessageField(te, fEventAnnotations, a)
			}
			p.ann = a
			p.endEvent(p.appendPs(te, k.Launched, k.Finished), k.Launched, k.Finished)
			if k.Started > k.Launched {
				te := p.beginEvent(k.Launched, k.Started, 0, "launch", "launch")
				p.endEvent(p.appendPs(te, k.Launched, k.Started), k.Launched, k.Started)
			}
		}
	}
	return p.err
}

// appendPs appends the ps annotation of an event from..to (nothing when
// both are whole nanoseconds).
func (p *pfWriter) appendPs(te []byte, from, to sim.Time) []byte {
	v := uint64(from%1000)*1000 + uint64(to%1000)
	if v == 0 {
		return te
	}
	a := appendVarintField(p.ann[:0], fAnnNameIID, annPs)
	a = appendVarintField(a, fAnnUint, v)
	p.ann = a
	return appendMessageField(te, fEventAnnotations, a)
}

// counter writes a counter sample on the current sequence.
func (p *pfWriter) counter(s Sample) {
	te := appendVarintField(p.ev[:0], fEventType, typeCounter)
	if v := s.Value; v == math.Trunc(v) && math.Abs(v) < 1<<53 {
		te = appendVarintField(te, fEventCounterValue, uint64(int64(v)))
	} else {
		te = protowire.AppendTag(te, fEventDoubleCounter, protowire.Fixed64Type)
		te = protowire.AppendFixed64(te, math.Float64bits(v))
	}
	p.ev = p.appendPs(te, s.T, s.T)
	p.event(s.T)
}

func (p *pfWriter) occupancy(b int, s Sample) error {
	if u := trackUUID(trackBuffer, p.coreID, b); p.arrows || p.track != u {
		p.startSequence(u, false, s.T)
	}
	p.counter(s)
	return p.err
}

func (p *pfWriter) bandwidth(s Sample, first bool) error {
	s.Value /= 1e9
	return p.chipCounter(s, first, trackGM, trackGMBandwidth, GMPid, "GM", "GM bandwidth", "GB/s")
}

func (p *pfWriter) power(s Sample, first bool) error {
	return p.chipCounter(s, first, trackPower, trackPowerCounter, PowerPid, "power", "power", "W")
}

// chipCounter writes sample s of a chip-wide counter: with the first, its
// process (pid, name) and counter track (name, unit) are declared.
func (p *pfWriter) chipCounter(s Sample, first bool, procTrack, counterTrack, pid int, proc, name, unit string) error {
	if first {
		p.endSequence()
		pt := trackUUID(procTrack, -1, 0)
		p.process(pt, pid, proc, pid)
		p.child(trackUUID(counterTrack, -1, 0), pt, name, 0, unit)
		p.startSequence(trackUUID(counterTrack, -1, 0), false, s.T)
	}
	p.counter(s)
	return p.err
}

// CheckTracePath returns an error unless path names a trace format the
// writers know: .pftrace or .perfetto-trace (protobuf), .json or .json.gz.
func CheckTracePath(path string) error {
	if IsProtoTrace(path) || hasSuffix(path, ".json") || hasSuffix(path, ".json.gz") {
		return nil
	}
	return fmt.Errorf("trace file name %q must end in .pftrace, .perfetto-trace, .json or .json.gz", path)
}
