package traces_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/davinci-sim/davinci-sim/traces"
)

// pbMsg is a decoded protobuf message: field number → values (varints and
// fixed64s as uint64, length-delimited as []byte).
type pbMsg map[protowire.Number][]any

func decodePB(t *testing.T, b []byte) pbMsg {
	t.Helper()
	m := pbMsg{}
	for len(b) > 0 {
		// The whole field, then its value decoded by type.
		num, typ, n := protowire.ConsumeField(b)
		if n < 0 {
			t.Fatalf("bad field: %v", protowire.ParseError(n))
		}
		_, _, tag := protowire.ConsumeTag(b)
		val := b[tag:n]
		b = b[n:]
		switch typ {
		case protowire.VarintType:
			x, _ := protowire.ConsumeVarint(val)
			m[num] = append(m[num], x)
		case protowire.Fixed64Type:
			x, _ := protowire.ConsumeFixed64(val)
			m[num] = append(m[num], x)
		case protowire.BytesType:
			x, _ := protowire.ConsumeBytes(val)
			m[num] = append(m[num], x)
		default:
			t.Fatalf("field %d: unexpected wire type %d", num, typ)
		}
	}
	return m
}

func (m pbMsg) has(f protowire.Number) bool { return len(m[f]) > 0 }
func (m pbMsg) u(f protowire.Number) uint64 {
	if v := m[f]; len(v) > 0 {
		return v[len(v)-1].(uint64)
	}
	return 0
}
func (m pbMsg) str(f protowire.Number) string {
	if v := m[f]; len(v) > 0 {
		return string(v[len(v)-1].([]byte))
	}
	return ""
}
func (m pbMsg) msgs(t *testing.T, f protowire.Number) []pbMsg {
	var out []pbMsg
	for _, v := range m[f] {
		out = append(out, decodePB(t, v.([]byte)))
	}
	return out
}

// viewEvents is what a viewer shows of a trace, in Perfetto's units
// (nanoseconds): slices and counter samples by track ("core N/LANE"), arrows.
type viewEvents struct {
	Slices   map[string]int // "track name ts dur" → count
	Counters map[string][]string
	Flows    map[string]int // "track ts → track ts" → count
}

func slicesKey(track, name string, ts, dur int64) string {
	return fmt.Sprintf("%s %s %d %d", track, name, ts, dur)
}

// jsonView reads the JSON trace's events, in nanoseconds as Perfetto
// converts the pftrace's picoseconds (floor of start and end).
func jsonView(t *testing.T, b []byte) viewEvents {
	var doc struct {
		TraceEvents []struct {
			Ph, Name string
			Pid, Tid int
			Ts, Dur  json.Number
			BindID   uint64 `json:"bind_id"`
			FlowOut  bool   `json:"flow_out"`
			FlowIn   bool   `json:"flow_in"`
			Args     map[string]any
		}
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	ps := func(n json.Number) int64 {
		if n == "" {
			return 0
		}
		whole, frac, _ := strings.Cut(string(n), ".")
		frac = (frac + "000000")[:6]
		a, _ := strconv.ParseInt(whole, 10, 64)
		f, _ := strconv.ParseInt(frac, 10, 64)
		return a*1e6 + f
	}
	v := viewEvents{Slices: map[string]int{}, Counters: map[string][]string{}, Flows: map[string]int{}}
	procs, threads := map[int]string{}, map[[2]int]string{}
	type end struct {
		track string
		ts    int64
	}
	outs, ins := map[uint64]end{}, map[uint64]end{}
	for _, e := range doc.TraceEvents {
		switch {
		case e.Ph == "M" && e.Name == "process_name":
			procs[e.Pid] = e.Args["name"].(string)
		case e.Ph == "M" && e.Name == "thread_name":
			threads[[2]int{e.Pid, e.Tid}] = e.Args["name"].(string)
		case e.Ph == "X":
			track := procs[e.Pid] + "/" + threads[[2]int{e.Pid, e.Tid}]
			from, to := ps(e.Ts), ps(e.Ts)+ps(e.Dur)
			v.Slices[slicesKey(track, e.Name, from/1000, to/1000-from/1000)]++
			if e.FlowOut {
				outs[e.BindID] = end{track, from / 1000}
			}
			if e.FlowIn {
				ins[e.BindID] = end{track, from / 1000}
			}
		case e.Ph == "C":
			for k, x := range e.Args {
				track := procs[e.Pid] + "/" + e.Name
				v.Counters[track] = append(v.Counters[track], fmt.Sprintf("%d %s=%v", ps(e.Ts)/1000, k, x))
			}
		}
	}
	for id, o := range outs {
		if i, ok := ins[id]; ok {
			v.Flows[fmt.Sprintf("%s %d → %s %d", o.track, o.ts, i.track, i.ts)]++
		}
	}
	return v
}

// pftraceView interprets a protobuf trace as Perfetto's trace processor
// does (track descriptors, sequences with interning, defaults and an
// incremental clock, slice begin/end stacks, flows in time order), checking
// the sequence rules on the way.
func pftraceView(t *testing.T, b []byte) viewEvents {
	v := viewEvents{Slices: map[string]int{}, Counters: map[string][]string{}, Flows: map[string]int{}}
	type track struct {
		name        string
		parent      uint64
		unit        string
		pid, thread int64 // a process's pid; a thread's process pid (-1: none)
	}
	tracks := map[uint64]track{}
	procs := map[int64]string{}
	trackName := func(u uint64) string {
		tr := tracks[u]
		if tr.thread >= 0 {
			return procs[tr.thread] + "/" + tr.name
		}
		if p, ok := tracks[tr.parent]; ok {
			return p.name + "/" + tr.name
		}
		return tr.name
	}
	type seqState struct {
		cleared          bool
		track, clock     uint64
		last             uint64
		names, cats, ann map[uint64]string
		strs             map[uint64]string
	}
	seqs := map[uint64]*seqState{}
	type open struct {
		name string
		ts   int64
	}
	stacks := map[uint64][]open{}
	type flowEnd struct {
		track   string
		ts      int64
		ordinal int
	}
	starts, terms := map[uint64]flowEnd{}, map[uint64]flowEnd{}
	trace := decodePB(t, b)
	for i, pb := range trace[1] {
		p := decodePB(t, pb.([]byte))
		for _, d := range p.msgs(t, 60) {
			tr := track{name: d.str(2), parent: d.u(5), pid: -1, thread: -1}
			for _, pd := range d.msgs(t, 3) {
				tr.pid = int64(int32(pd.u(1)))
				procs[tr.pid] = tr.name
			}
			for _, td := range d.msgs(t, 4) {
				tr.thread = int64(int32(td.u(1)))
			}
			if c := d.msgs(t, 8); len(c) > 0 {
				tr.unit = "bytes"
				if c[0].has(6) {
					tr.unit = c[0].str(6)
				}
			}
			tracks[d.u(1)] = tr
		}
		if !p.has(10) {
			continue
		}
		sq := seqs[p.u(10)]
		if p.u(13)&1 != 0 {
			sq = &seqState{cleared: true, names: map[uint64]string{}, cats: map[uint64]string{}, ann: map[uint64]string{}, strs: map[uint64]string{}}
			seqs[p.u(10)] = sq
		}
		if sq == nil {
			t.Fatalf("packet %d: sequence %d used before its state was cleared", i, p.u(10))
		}
		for _, d := range p.msgs(t, 59) {
			sq.clock = d.u(58)
			for _, ted := range d.msgs(t, 11) {
				sq.track = ted.u(11)
			}
		}
		for _, cs := range p.msgs(t, 6) {
			for _, c := range cs.msgs(t, 1) {
				if c.u(1) == 64 && c.u(3) == 1 {
					sq.last = c.u(2)
				}
			}
		}
		for _, in := range p.msgs(t, 12) {
			for f, m := range map[protowire.Number]map[uint64]string{1: sq.cats, 2: sq.names, 3: sq.ann, 29: sq.strs} {
				for _, e := range in.msgs(t, f) {
					m[e.u(1)] = e.str(2)
				}
			}
		}
		tes := p.msgs(t, 11)
		if len(tes) == 0 {
			continue
		}
		if p.u(13)&2 == 0 {
			t.Fatalf("packet %d: a track event without SEQ_NEEDS_INCREMENTAL_STATE", i)
		}
		if sq.clock != 64 || p.has(58) {
			t.Fatalf("packet %d: not on the incremental clock", i)
		}
		sq.last += p.u(8)
		ts := int64(sq.last)
		te := tes[0]
		tu := sq.track
		if te.has(11) {
			tu = te.u(11)
		}
		tn := trackName(tu)
		name, ok := sq.names[te.u(10)]
		if (!ok && (te.u(9) == 1 || te.u(9) == 3)) || (te.has(3) && sq.cats[te.u(3)] == "") {
			t.Fatalf("packet %d: unresolved interned name or category", i)
		}
		for _, a := range te.msgs(t, 4) {
			if sq.ann[a.u(1)] == "" || (a.has(17) && sq.strs[a.u(17)] == "") {
				t.Fatalf("packet %d: unresolved interned annotation", i)
			}
		}
		switch te.u(9) {
		case 1:
			stacks[tu] = append(stacks[tu], open{name, ts})
		case 2:
			st := stacks[tu]
			o := st[len(st)-1]
			stacks[tu] = st[:len(st)-1]
			v.Slices[slicesKey(tn, o.name, o.ts, ts-o.ts)]++
		case 3:
			v.Slices[slicesKey(tn, name, ts, 0)]++
		case 4:
			val := float64(int64(te.u(30)))
			if te.has(44) {
				val = math.Float64frombits(te.u(44))
			}
			v.Counters[tn] = append(v.Counters[tn], fmt.Sprintf("%d %s=%v", ts, tracks[tu].unit, val))
		}
		for _, id := range te[47] {
			starts[id.(uint64)] = flowEnd{tn, ts, i}
		}
		for _, id := range te[48] {
			terms[id.(uint64)] = flowEnd{tn, ts, i}
		}
	}
	for id, s := range starts {
		e, ok := terms[id]
		if !ok {
			t.Errorf("flow %d has no end", id)
			continue
		}
		if e.ts < s.ts || (e.ts == s.ts && e.ordinal < s.ordinal) {
			t.Errorf("flow %d ends before it starts", id)
		}
		v.Flows[fmt.Sprintf("%s %d → %s %d", s.track, s.ts, e.track, e.ts)]++
	}
	return v
}

// TestPftraceMatchesJSON checks that the protobuf trace of a run carries
// the same slices, arrows and counters as its JSON trace, as a viewer reads
// them (in nanoseconds).
func TestPftraceMatchesJSON(t *testing.T) {
	t.Run("hgemm", func(t *testing.T) { testPftraceMatchesJSON(t, recordHGEMM(t, traces.Window{})) })
	t.Run("lu", func(t *testing.T) {
		f, opts := exampleProgram(t, "lu-fused-small.yaml", "program.numerics=off")
		tl := recordProgram(t, f, opts, traces.Window{})
		kinds := map[string]bool{}
		for _, h := range tl.Host {
			kinds[h.Kind] = true
		}
		if !kinds["compute"] || !kinds["transfer"] || !kinds["launch"] || !kinds["wait"] {
			t.Errorf("host tasks of kinds %v, want compute, transfer, launch and wait", kinds)
		}
		testPftraceMatchesJSON(t, tl)
	})
}

func testPftraceMatchesJSON(t *testing.T, tl *traces.Timeline) {
	var js, pb bytes.Buffer
	if err := traces.WritePerfetto(&js, tl); err != nil {
		t.Fatal(err)
	}
	if err := traces.WritePftrace(&pb, tl); err != nil {
		t.Fatal(err)
	}
	want, got := jsonView(t, js.Bytes()), pftraceView(t, pb.Bytes())
	if len(want.Slices) == 0 || len(want.Flows) == 0 || len(want.Counters) == 0 {
		t.Fatalf("the JSON trace has %d slices, %d arrows, %d counters", len(want.Slices), len(want.Flows), len(want.Counters))
	}
	for _, part := range []struct {
		what      string
		want, got any
	}{{"slices", want.Slices, got.Slices}, {"arrows", want.Flows, got.Flows}, {"counters", want.Counters, got.Counters}} {
		if !reflect.DeepEqual(part.want, part.got) {
			t.Errorf("%s differ: %s", part.what, diffKeys(part.want, part.got))
		}
	}
	t.Logf("JSON %d bytes, pftrace %d bytes (%.0f%%)", js.Len(), pb.Len(), 100*float64(pb.Len())/float64(js.Len()))
	// Both read back to the same timeline (the host's tasks included).
	fromJSON, err := traces.ReadTrace(&js)
	if err != nil {
		t.Fatal(err)
	}
	fromPB, err := traces.ReadPftrace(&pb)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(fromJSON.Host, tl.Host) || !reflect.DeepEqual(fromPB.Host, tl.Host) {
		t.Errorf("host tasks differ: %d recorded, %d from JSON, %d from pftrace", len(tl.Host), len(fromJSON.Host), len(fromPB.Host))
	}
	sameTimeline(t, "JSON/pftrace", fromJSON, fromPB)
}

// diffKeys describes the first keys on which two maps differ.
func diffKeys(a, b any) string {
	ma, mb := reflect.ValueOf(a), reflect.ValueOf(b)
	var out []string
	for _, k := range ma.MapKeys() {
		if x := mb.MapIndex(k); !x.IsValid() || !reflect.DeepEqual(x.Interface(), ma.MapIndex(k).Interface()) {
			out = append(out, fmt.Sprintf("%v: want %v", k, ma.MapIndex(k)))
		}
	}
	for _, k := range mb.MapKeys() {
		if !ma.MapIndex(k).IsValid() {
			out = append(out, fmt.Sprintf("%v: unexpected", k))
		}
	}
	sort.Strings(out)
	return fmt.Sprintf("%d keys, e.g. %v", len(out), out[:min(len(out), 5)])
}

// TestTraceSizes checks the size estimates (the --help figures and the
// warning) against the traces of a run: at least the size, at most half
// again, and the warning past the limit for JSON only.
func TestTraceSizes(t *testing.T) {
	tl := recordHGEMM(t, traces.Window{})
	var js, pb bytes.Buffer
	if err := traces.WritePerfetto(&js, tl); err != nil {
		t.Fatal(err)
	}
	if err := traces.WritePftrace(&pb, tl); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path string
		size int
	}{{"t.json", js.Len()}, {"t.pftrace", pb.Len()}} {
		est := traces.EstimateTraceBytes(c.path, tl)
		if est < int64(c.size) || est > int64(c.size)*3/2 {
			t.Errorf("%s: estimated %d bytes, wrote %d", c.path, est, c.size)
		}
	}
	if w := traces.SizeWarning("t.json", tl); w != "" {
		t.Errorf("a small trace warns: %s", w)
	}
	if w := traces.SizeWarningAt("t.json.gz", tl, int64(js.Len()/2)); !strings.Contains(w, ".pftrace") {
		t.Errorf("a JSON trace over the limit: warning %q, want one suggesting .pftrace", w)
	}
	if w := traces.SizeWarningAt("t.pftrace", tl, 1); w != "" {
		t.Errorf("a protobuf trace warns: %s", w)
	}
}

// TestReadWithin checks the reader's bounds on both formats: a core
// selection, and a memory limit past which the cores not read yet are
// skipped (and said so).
func TestReadWithin(t *testing.T) {
	tl := recordHGEMM(t, traces.Window{})
	shown := len(shownCores(tl))
	dir := t.TempDir()
	for _, name := range []string{"t.json", "t.pftrace"} {
		path := dir + "/" + name
		if err := traces.WriteTraceFile(path, tl); err != nil {
			t.Fatal(err)
		}
		full, skipped, err := traces.ReadTraceFileWithin(path, traces.ReadLimits{})
		if err != nil || len(skipped) > 0 || len(full.Cores) != shown {
			t.Fatalf("%s: %d cores, skipped %v, %v", name, len(full.Cores), skipped, err)
		}
		some, skipped, err := traces.ReadTraceFileWithin(path, traces.ReadLimits{Cores: map[int]bool{1: true, 3: true}})
		if err != nil || len(skipped) > 0 || len(some.Cores) != 2 || some.Cores[0].ID != 1 || some.Cores[1].ID != 3 {
			t.Fatalf("%s: cores 1,3: %d cores, skipped %v, %v", name, len(some.Cores), skipped, err)
		}
		one, skipped, err := traces.ReadTraceFileWithin(path, traces.ReadLimits{Bytes: 1})
		if err != nil || len(one.Cores) != 1 || one.Cores[0].ID != 0 || len(skipped) != shown-1 {
			t.Fatalf("%s: limit: %d cores, skipped %v, %v", name, len(one.Cores), skipped, err)
		}
		for i, c := range full.Cores[:1] {
			for p := range c.Lanes {
				if !reflect.DeepEqual(sliceViews(full, c.Lanes[p].Slices()), sliceViews(one, one.Cores[i].Lanes[p].Slices())) {
					t.Errorf("%s: limit: core %d lane %d differs", name, c.ID, p)
				}
			}
			if !reflect.DeepEqual(c.Flows, one.Cores[i].Flows) {
				t.Errorf("%s: limit: core %d flows differ", name, c.ID)
			}
		}
		if !reflect.DeepEqual(full.Bandwidth, one.Bandwidth) {
			t.Errorf("%s: limit: the GM bandwidth differs", name)
		}
	}
}

// TestReadInterleaved reads a JSON trace whose cores' events come
// interleaved and out of order (not as the writers write): the same
// timeline as the same events core by core, and in linear-ish time (each
// core goes into the timeline at most twice).
func TestReadInterleaved(t *testing.T) {
	const n = 20000
	var mixed, ordered strings.Builder
	ev := func(b *strings.Builder, core, i int) {
		fmt.Fprintf(b, `{"ph":"X","pid":%d,"tid":1,"ts":%d,"dur":1,"name":"s.scalar","cat":"scalar","args":{"instr":"scalar cycles=%d"}},`, core, i*2, i%7)
	}
	mixed.WriteString(`{"traceEvents":[`)
	ordered.WriteString(`{"traceEvents":[`)
	for i := n - 1; i >= 0; i-- {
		ev(&mixed, 0, i)
		ev(&mixed, 1+i%3, i) // cores 1-3 first seen early, then revisited
	}
	for core := range 4 {
		for i := range n {
			if core == 0 || 1+i%3 == core {
				ev(&ordered, core, i)
			}
		}
	}
	for _, b := range []*strings.Builder{&mixed, &ordered} {
		b.WriteString(`{"ph":"M","pid":0,"name":"process_name","args":{"name":"core 0"}}]}`)
	}
	a, err := traces.ReadTrace(strings.NewReader(mixed.String()))
	if err != nil {
		t.Fatal(err)
	}
	b, err := traces.ReadTrace(strings.NewReader(ordered.String()))
	if err != nil {
		t.Fatal(err)
	}
	sameTimeline(t, "interleaved", b, a)
	if got := a.Core(0).Lane(0).Len(); got != n {
		t.Errorf("core 0: %d slices, want %d", got, n)
	}
}
