package traces

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/davinci-sim/davinci-sim/sim"
)

// ReadPftrace loads a Perfetto protobuf trace written by WritePftrace into
// a Timeline, streaming: it holds one packet at a time, the slices of the
// core being read (added to the timeline's compact lanes when the next core
// starts), one set of arguments per distinct instruction text, and the
// incremental state of the most recent maxReadSequences sequences. Tracks
// and events it does not understand are skipped; a time before 0 or past
// about 106 days, or a process past KernelsPid, is refused.
func ReadPftrace(r io.Reader) (*Timeline, error) {
	tl, _, err := readPftrace(r, ReadLimits{})
	return tl, err
}

// readPftrace is ReadPftrace within limits; it returns the cores skipped
// for the memory limit.
func readPftrace(r io.Reader, lim ReadLimits) (*Timeline, []int, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	tl := &Timeline{Done: true}
	pr := &pfReader{
		rd:     *newTraceReader(tl, lim),
		tracks: map[uint64]pfTrack{},
		seqs:   map[uint32]*pfSeq{},
		open:   map[uint64][]pfOpen{},
	}
	var buf []byte
	var off int64 // the byte the packet starts at
	for i := 0; ; i++ {
		pr.off = off
		tag, err := binaryUvarint(br)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, fmt.Errorf("bad trace packet %d: %v", i, err)
		}
		num, typ := protowire.DecodeTag(tag)
		if num != fTracePacket || typ != protowire.BytesType {
			return nil, nil, fmt.Errorf("not a Perfetto protobuf trace: field %d type %d at packet %d", num, typ, i)
		}
		n, err := binaryUvarint(br)
		if err != nil {
			return nil, nil, fmt.Errorf("bad trace packet %d: %v", i, err)
		}
		if n > maxPacket {
			return nil, nil, fmt.Errorf("trace packet %d at byte %d: %d bytes (at most %d)", i, off, n, maxPacket)
		}
		if buf, err = readPacket(br, buf, int(n)); err != nil {
			return nil, nil, fmt.Errorf("trace packet %d: %v", i, unexpectedEOF(err))
		}
		off += int64(protowire.SizeTag(fTracePacket) + protowire.SizeVarint(n) + int(n))
		if err := pr.packet(buf); err != nil {
			return nil, nil, fmt.Errorf("trace packet %d: %v", i, err)
		}
	}
	skipped := pr.rd.finish()
	if pr.rd.err != nil {
		return nil, nil, pr.rd.err
	}
	return tl, skipped, nil
}

// maxPacket bounds the size of a packet read (WritePftrace's are small).
const maxPacket = 64 << 20

// packetChunk is what readPacket allocates for a packet before its bytes
// arrive: a packet's buffer grows with what the file holds, so that a
// few bytes claiming a packet of maxPacket do not allocate it.
const packetChunk = 1 << 20

// readPacket reads a packet of n bytes into buf (reused when large
// enough).
func readPacket(br *bufio.Reader, buf []byte, n int) ([]byte, error) {
	if cap(buf) >= n {
		buf = buf[:n]
		_, err := io.ReadFull(br, buf)
		return buf, err
	}
	buf = buf[:0]
	for len(buf) < n {
		k := min(n-len(buf), max(len(buf), packetChunk))
		buf = slices.Grow(buf, k)
		m, err := io.ReadFull(br, buf[len(buf):len(buf)+k])
		buf = buf[:len(buf)+m]
		if err != nil {
			return buf, err
		}
	}
	return buf, nil
}

// maxReadSequences bounds the packet sequences whose incremental state the
// reader keeps: WritePftrace finishes a sequence before it starts another,
// and a lane's sequence holds its distinct instruction texts (a few MB on
// large runs), so the state of finished ones is dropped early.
const maxReadSequences = 16

func unexpectedEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// binaryUvarint reads a protobuf varint.
func binaryUvarint(br *bufio.Reader) (uint64, error) {
	var v uint64
	for shift := 0; shift < 64; shift += 7 {
		b, err := br.ReadByte()
		if err != nil {
			if shift > 0 {
				return 0, unexpectedEOF(err)
			}
			return 0, err
		}
		v |= uint64(b&0x7f) << shift
		if b < 0x80 {
			return v, nil
		}
	}
	return 0, errors.New("varint overflows")
}

// pfTrack is what a track descriptor said.
type pfTrack struct {
	kind  int // trackCore, trackLane, trackBuffer, trackGM, trackGMBandwidth, trackHost, trackHostLane, trackPower, trackPowerCounter (0: unknown)
	core  int
	index int // lane (rank) of a lane or host lane track
	name  string
}

// pfSeq is the incremental state of a packet sequence.
type pfSeq struct {
	used        uint64 // the reader's packet count at its last use
	track       uint64 // the default track
	clock       uint64 // the default timestamp clock (0: BOOTTIME)
	incremental bool   // clock 64 is incremental on this sequence
	last        int64  // the incremental clock's value (ns)
	offset      int64  // BOOTTIME minus the incremental clock (ns)
	names, cats map[uint64]string
	annNames    map[uint64]string
	strs        map[uint64]string
}

// pfOpen is a slice begun and not yet ended on a track.
type pfOpen struct {
	index int // in the core's lane as read
	lane  int
	core  int
	toPs  sim.Time
	// A host task's or kernel launch's kind (category), name and start;
	// a launch's blocks and latency (µs), and whether the run deadlocked
	// in it.
	kind, name     string
	from           sim.Time
	blocks, launch float64
	deadlocked     bool
	// started is the end of the kernel's "launch" slice, read inside it
	// (a sequence's events come in time order), -1 before.
	started sim.Time
}

type pfReader struct {
	rd     traceReader
	tracks map[uint64]pfTrack
	seqs   map[uint32]*pfSeq
	open   map[uint64][]pfOpen // by track
	n      uint64              // packets read
	off    int64               // the byte the packet being read starts at
	nopen  int                 // slices open on all tracks
}

// packet reads one TracePacket.
func (pr *pfReader) packet(b []byte) error {
	pr.n++
	var (
		ts                 uint64
		hasTS              bool
		clock              uint64
		seqID              uint32
		flags              uint64
		te, def, snap, in  []byte
		desc, chromeEvents []byte
	)
	err := fields(b, func(num protowire.Number, v uint64, bs []byte) {
		switch num {
		case fPacketTimestamp:
			ts, hasTS = v, true
		case fPacketClockID:
			clock = v
		case fPacketSequenceID:
			seqID = uint32(v)
		case fPacketSequenceFlags:
			flags = v
		case fPacketTrackEvent:
			te = bs
		case fPacketDefaults:
			def = bs
		case fPacketClockSnapshot:
			snap = bs
		case fPacketInterned:
			in = bs
		case fPacketTrackDesc:
			desc = bs
		case fPacketChromeEvents:
			chromeEvents = bs
		}
	})
	if err != nil {
		return err
	}
	if chromeEvents != nil {
		if err := pr.metadata(chromeEvents); err != nil {
			return err
		}
	}
	if desc != nil {
		return pr.descriptor(desc)
	}
	seq, err := pr.sequence(seqID, flags)
	if err != nil || seq == nil {
		return err
	}
	if def != nil {
		seq.defaults(def)
	}
	if snap != nil {
		if err := seq.snapshot(snap); err != nil {
			return err
		}
	}
	if in != nil {
		seq.intern(in)
	}
	if te == nil {
		return nil
	}
	if !hasTS {
		return errors.New("track event without a timestamp")
	}
	if clock == 0 {
		clock = seq.clock
	}
	ns, err := seq.time(ts, clock)
	if err != nil {
		return err
	}
	return pr.trackEvent(seq, ns, te)
}

// maxPfNs is the latest time (ns) of a protobuf trace's event the reader
// takes: its picoseconds, with the up to 999 an event's "ps" annotation
// adds, stay below sim.MaxTime (about 106 days).
const maxPfNs = int64(sim.MaxTime/sim.Nanosecond) - 1

// time returns the time (ns, 0 to maxPfNs) of a track event of the
// sequence whose packet's timestamp is ts on clock: ts itself, or on the
// sequence's incremental clock a delta from its previous event's, signed
// (the writer writes ns − last as a uint64). It refuses a time before 0
// or past maxPfNs: a timestamp is unsigned, but one of 2^63 ns or more was
// taken as negative and one past maxPfNs wrapped around in picoseconds.
func (s *pfSeq) time(ts, clock uint64) (int64, error) {
	if clock != clockIncremental || !s.incremental {
		if ts > uint64(maxPfNs) {
			return 0, fmt.Errorf("time %d ns is out of range (over about 106 days)", ts)
		}
		return int64(ts), nil
	}
	last, ok := addInt64(s.last, int64(ts))
	var ns int64
	if ok {
		ns, ok = addInt64(last, s.offset)
	}
	if !ok {
		return 0, errors.New("time out of range (over about 106 days): the incremental clock overflows")
	}
	s.last = last
	switch {
	case ns < 0:
		return 0, errors.New("negative time")
	case ns > maxPfNs:
		return 0, fmt.Errorf("time %d ns is out of range (over about 106 days)", ns)
	}
	return ns, nil
}

// addInt64 returns a + b, and false when the sum overflows an int64.
func addInt64(a, b int64) (int64, bool) {
	s := a + b
	return s, (s > a) == (b > 0)
}

// sequence returns the state of sequence id, cleared when flags say so
// (nil for packets outside any sequence).
func (pr *pfReader) sequence(id uint32, flags uint64) (*pfSeq, error) {
	if id == 0 {
		return nil, nil
	}
	seq := pr.seqs[id]
	if flags&seqIncrementalStateCleared != 0 {
		if seq == nil {
			pr.evictSequences()
			seq = &pfSeq{}
			pr.seqs[id] = seq
		}
		*seq = pfSeq{names: map[uint64]string{}, cats: map[uint64]string{}, annNames: map[uint64]string{}, strs: map[uint64]string{}}
	}
	if seq == nil {
		return nil, fmt.Errorf("sequence %d: packet before its incremental state was set (or more than %d sequences interleaved)", id, maxReadSequences)
	}
	seq.used = pr.n
	return seq, nil
}

// evictSequences drops the least recently used sequence state while
// maxReadSequences are held.
func (pr *pfReader) evictSequences() {
	for len(pr.seqs) >= maxReadSequences {
		var oldest uint32
		first := true
		for id, s := range pr.seqs {
			if first || s.used < pr.seqs[oldest].used {
				oldest, first = id, false
			}
		}
		delete(pr.seqs, oldest)
	}
}

// fields calls fn for each field of message b with its varint or bytes
// value (other wire types are skipped).
func fields(b []byte, fn func(num protowire.Number, v uint64, bs []byte)) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		var v uint64
		var bs []byte
		switch typ {
		case protowire.VarintType:
			v, n = protowire.ConsumeVarint(b)
		case protowire.BytesType:
			bs, n = protowire.ConsumeBytes(b)
		case protowire.Fixed64Type:
			v, n = protowire.ConsumeFixed64(b)
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		fn(num, v, bs)
	}
	return nil
}

// field returns the (last) value of field num of message b: a varint or
// fixed64 as v, a length-delimited one as bs.
func field(b []byte, num protowire.Number) (v uint64, bs []byte) {
	fields(b, func(n protowire.Number, x uint64, y []byte) {
		if n == num {
			v, bs = x, y
		}
	})
	return v, bs
}

// each calls fn with each value of length-delimited field num of message b.
func each(b []byte, num protowire.Number, fn func(bs []byte)) {
	fields(b, func(n protowire.Number, _ uint64, bs []byte) {
		if n == num {
			fn(bs)
		}
	})
}

func (s *pfSeq) defaults(b []byte) {
	s.clock, _ = field(b, fDefaultsClockID)
	_, ted := field(b, fDefaultsTrackEvent)
	s.track, _ = field(ted, fTrackEventDefTrack)
}

// snapshot reads a ClockSnapshot: the BOOTTIME clock's value and, when
// the snapshot has one, the incremental clock's at the same moment. It
// refuses a value past maxPfNs (so that their difference, the offset from
// the incremental clock to BOOTTIME, is within int64).
func (s *pfSeq) snapshot(b []byte) error {
	var boot, inc uint64
	var hasInc bool
	each(b, fSnapshotClocks, func(bs []byte) {
		id, _ := field(bs, fClockID)
		ts, _ := field(bs, fClockTimestamp)
		incr, _ := field(bs, fClockIsIncremental)
		switch {
		case id == clockBoottime:
			boot = ts
		case id == clockIncremental && incr != 0:
			inc, hasInc = ts, true
		}
	})
	if v := max(boot, inc); v > uint64(maxPfNs) {
		return fmt.Errorf("clock snapshot: time %d ns is out of range (over about 106 days)", v)
	}
	if hasInc {
		s.incremental, s.last, s.offset = true, int64(inc), int64(boot)-int64(inc)
	}
	return nil
}

func (s *pfSeq) intern(b []byte) {
	fields(b, func(num protowire.Number, _ uint64, bs []byte) {
		var m map[uint64]string
		switch num {
		case fInternedCategories:
			m = s.cats
		case fInternedNames:
			m = s.names
		case fInternedAnnNames:
			m = s.annNames
		case fInternedAnnStrings:
			m = s.strs
		default:
			return
		}
		id, _ := field(bs, fInternedIID)
		_, str := field(bs, fInternedName)
		m[id] = string(str)
	})
}

// metadata reads the trace header from a ChromeEventBundle.
func (pr *pfReader) metadata(b []byte) error {
	var err error
	each(b, fBundleMetadata, func(bs []byte) {
		_, name := field(bs, fMetadataName)
		_, js := field(bs, fMetadataJSONData)
		if string(name) == metadataName && js != nil {
			if err != nil {
				return
			}
			if pr.rd.header != nil {
				// The writers write one; each costs a parse and its
				// idle_cores expanded (up to 2^16 cores): 512 KB of
				// repeats took minutes.
				err = fmt.Errorf("a second trace header (in the packet at byte %d; the writers write one)", pr.off)
				return
			}
			var h traceHeader
			if e := json.Unmarshal(js, &h); e != nil {
				err = fmt.Errorf("bad trace header: %v", e)
				return
			}
			if e := pr.rd.setHeader(&h); e != nil {
				err = fmt.Errorf("bad trace header: %v", e)
			}
		}
	})
	return err
}

// descriptor reads a TrackDescriptor: cores (processes other than GM and
// the host, pid = core + 1), their lanes (threads, by rank) and buffer
// counters (child tracks), GM's bandwidth counter, the host's lanes.
// A process or thread of a process past KernelsPid is refused (pidError):
// no writer writes one, and its events were skipped.
func (pr *pfReader) descriptor(b []byte) error {
	var uuid, parent uint64
	var name string
	var rank int
	pid, threadPid := -1, -1
	var counter bool
	err := fields(b, func(num protowire.Number, v uint64, bs []byte) {
		switch num {
		case fTrackUUID:
			uuid = v
		case fTrackParent:
			parent = v
		case fTrackName:
			name = string(bs)
		case fTrackRank:
			rank = int(int32(v))
		case fTrackCounter:
			counter = true
		case fTrackProcess:
			fields(bs, func(num protowire.Number, v uint64, _ []byte) {
				if num == fProcessPid {
					pid = int(int32(v))
				}
			})
		case fTrackThread:
			fields(bs, func(num protowire.Number, v uint64, _ []byte) {
				if num == fThreadPid {
					threadPid = int(int32(v))
				}
			})
		}
	})
	if err != nil {
		return err
	}
	if p := max(pid, threadPid); p > KernelsPid {
		return pidError(p, "core N as N+1")
	}
	switch {
	case threadPid == KernelsPid && rank >= 0:
		pr.tracks[uuid] = pfTrack{kind: trackKernelLane, index: rank}
	case threadPid == HostPid && rank >= 0 && rank < len(HostLanes):
		pr.tracks[uuid] = pfTrack{kind: trackHostLane, index: rank}
	case threadPid > 0 && threadPid < GMPid && rank >= maxTraceLanes:
		return lanesError(threadPid, fmt.Sprintf("ranked %d", rank))
	case threadPid > 0 && threadPid < GMPid && rank >= 0:
		if pr.rd.keep(threadPid - 1) {
			pr.tracks[uuid] = pfTrack{kind: trackLane, core: threadPid - 1, index: rank}
			pr.rd.laneName(rank, name)
			return pr.rd.useLanes(threadPid-1, rank+1)
		}
	case pid == GMPid:
		pr.tracks[uuid] = pfTrack{kind: trackGM}
	case pid == PowerPid:
		pr.tracks[uuid] = pfTrack{kind: trackPower}
	case pid == HostPid:
		pr.tracks[uuid] = pfTrack{kind: trackHost}
	case pid > 0 && pid <= GMPid:
		pr.tracks[uuid] = pfTrack{kind: trackCore, core: pid - 1}
		pr.rd.addCore(pid - 1)
	case pid < 0 && parent != 0:
		pt, ok := pr.tracks[parent]
		switch {
		case !ok:
		case pt.kind == trackGM && counter:
			pr.tracks[uuid] = pfTrack{kind: trackGMBandwidth}
		case pt.kind == trackPower && counter:
			pr.tracks[uuid] = pfTrack{kind: trackPowerCounter}
		case pt.kind == trackCore && counter:
			pr.tracks[uuid] = pfTrack{kind: trackBuffer, core: pt.core, name: name}
		}
	}
	return nil
}

// trackEvent reads a TrackEvent at ns (nanoseconds).
func (pr *pfReader) trackEvent(seq *pfSeq, ns int64, b []byte) error {
	var (
		typ, ps          uint64
		track            = seq.track
		name, cat        string
		a                sliceArgs
		blocks, launch   float64
		deadlocked       bool
		flow, term       uint64
		value            float64
		fieldErr         error
		annName          string
		annU             uint64
		annI             int64
		annD             float64
		annS             string
		annB             bool
		hasU, hasI, hasD bool
	)
	err := fields(b, func(num protowire.Number, v uint64, bs []byte) {
		switch num {
		case fEventType:
			typ = v
		case fEventTrackUUID:
			track = v
		case fEventNameIID:
			name = seq.names[v]
		case 23: // TrackEvent.name
			name = string(bs)
		case fEventCategoryIIDs:
			cat = seq.cats[v]
		case 22: // TrackEvent.categories
			cat = string(bs)
		case fEventCounterValue:
			value = float64(int64(v))
		case fEventDoubleCounter:
			value = math.Float64frombits(v)
		case fEventFlowIDs:
			flow = v
		case fEventTerminatingIDs:
			term = v
		case fEventAnnotations:
			annName, annS, annB, hasU, hasI, hasD = "", "", false, false, false, false
			fieldErr = fields(bs, func(num protowire.Number, v uint64, bs []byte) {
				switch num {
				case fAnnNameIID:
					annName = seq.annNames[v]
				case 10: // DebugAnnotation.name
					annName = string(bs)
				case fAnnBool:
					annB = v != 0
				case fAnnUint:
					annU, hasU = v, true
				case fAnnInt:
					annI, hasI = int64(v), true
				case fAnnDouble:
					annD, hasD = math.Float64frombits(v), true
				case fAnnString:
					annS = string(bs)
				case fAnnStringIID:
					annS = seq.strs[v]
				}
			})
			switch annName {
			case "instr":
				a.text = annS
			case "bytes":
				if hasI {
					a.bytes = annI
				} else if hasU {
					a.bytes = int64(annU)
				}
			case "flops":
				if hasD {
					a.flops = annD
				}
			case "ps":
				if hasU {
					ps = annU
				}
			case "blocks":
				if hasI {
					blocks = float64(annI)
				} else if hasU {
					blocks = float64(annU)
				}
			case "launch_us":
				if hasD {
					launch = annD
				}
			case "deadlocked":
				deadlocked = annB
			}
		}
	})
	if err == nil {
		err = fieldErr
	}
	if err != nil {
		return err
	}
	tr, ok := pr.tracks[track]
	if !ok {
		return nil
	}
	fromPs, toPs := sim.Time(ps/1000%1000), sim.Time(ps%1000)
	t := sim.Time(ns)*1000 + fromPs
	switch tr.kind {
	case trackLane:
		switch typ {
		case typeSliceBegin, typeInstant:
			bind, out, in := flow, flow != 0, false
			if term != 0 {
				bind, in = term, true
			}
			to := t
			if typ == typeInstant {
				to = sim.Time(ns)*1000 + toPs
			}
			i, err := pr.rd.slice(tr.core, tr.index, t, to, name, cat, a, bind, out, in)
			if err != nil || typ == typeInstant {
				return err
			}
			if err := pr.push(track, pfOpen{index: i, lane: tr.index, core: tr.core, toPs: toPs}); err != nil {
				return err
			}
			pr.rd.hold++
		case typeSliceEnd:
			o, err := pr.pop(track)
			if err != nil {
				return err
			}
			pr.rd.hold--
			if o.index >= 0 {
				s := pr.rd.pipes[coreKey{o.core, o.lane}].at(o.index)
				s.To = sim.Time(ns)*1000 + o.toPs
				if s.To < s.From {
					return errors.New("negative duration")
				}
				pr.rd.span(s.From, s.To)
			}
		}
	case trackHostLane:
		switch typ {
		case typeSliceBegin:
			return pr.push(track, pfOpen{index: -1, name: name, kind: cat, from: t, toPs: toPs})
		case typeInstant:
			return pr.rd.host(cat, name, t, t)
		case typeSliceEnd:
			o, err := pr.pop(track)
			if err != nil {
				return err
			}
			return pr.rd.host(o.kind, o.name, o.from, sim.Time(ns)*1000+o.toPs)
		}
	case trackKernelLane:
		switch typ {
		case typeSliceBegin:
			return pr.push(track, pfOpen{index: -1, name: name, kind: cat, from: t, toPs: toPs, blocks: blocks, launch: launch, deadlocked: deadlocked, started: -1})
		case typeInstant:
			if cat == "kernel" {
				return pr.kernel(name, blocks, launch, t, sim.Time(ns)*1000+toPs, deadlocked)
			}
		case typeSliceEnd:
			o, err := pr.pop(track)
			if err != nil {
				return err
			}
			switch st := pr.open[track]; o.kind {
			case "kernel":
				if err := pr.kernel(o.name, o.blocks, o.launch, o.from, sim.Time(ns)*1000+o.toPs, o.deadlocked); err != nil || o.started < 0 {
					return err
				}
				return pr.rd.launchSlice(o.from, o.started)
			case "launch":
				if n := len(st); n > 0 && st[n-1].kind == "kernel" && st[n-1].from == o.from {
					st[n-1].started = sim.Time(ns)*1000 + o.toPs
				}
			}
		}
	case trackBuffer:
		if typ == typeCounter {
			return pr.rd.occupancy(tr.core, tr.name, t, value)
		}
	case trackGMBandwidth:
		if typ == typeCounter {
			return pr.rd.bandwidth(t, value)
		}
	case trackPowerCounter:
		if typ == typeCounter {
			pr.rd.power(t, value)
		}
	}
	return nil
}

// kernel adds a kernel launch from from to to whose launch latency was
// launch µs (deadlocked: the run deadlocked in it, at to; its "launch"
// slice, read next, says where its first block started).
func (pr *pfReader) kernel(name string, blocks, launch float64, from, to sim.Time, deadlocked bool) error {
	if to < from {
		return errors.New("negative duration")
	}
	l := math.Round(launch * float64(sim.Microsecond))
	if math.IsNaN(l) || l < 0 || l >= float64(sim.MaxTime) {
		return fmt.Errorf("kernel %q: launch_us %g: want a latency ≥ 0", name, launch)
	}
	return pr.rd.kernel(name, blocks, from, sim.Time(l), to, deadlocked)
}

// maxOpenSlices bounds the slices open (begun, not ended) at once on all
// tracks together: the writers end a sequence's slices before the next
// sequence starts, nesting at most a launch in a kernel. Each open slice
// costs ~130 bytes held for a begin event of ~12 (16 MB of begins never
// ended took 5 s and 430 MB).
const maxOpenSlices = 1 << 16

// push opens slice o on track.
func (pr *pfReader) push(track uint64, o pfOpen) error {
	if pr.nopen >= maxOpenSlices {
		return fmt.Errorf("more than %d slices open at once (begun, not ended) in the packet at byte %d", maxOpenSlices, pr.off)
	}
	pr.nopen++
	pr.open[track] = append(pr.open[track], o)
	return nil
}

// pop returns the innermost slice open on track, closing it.
func (pr *pfReader) pop(track uint64) (pfOpen, error) {
	st := pr.open[track]
	if len(st) == 0 {
		return pfOpen{}, errors.New("slice end without a begin")
	}
	pr.nopen--
	pr.open[track] = st[:len(st)-1]
	return st[len(st)-1], nil
}
