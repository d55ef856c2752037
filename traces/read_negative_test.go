package traces

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
)

// readJSONAllWays reads the JSON trace data with the events scanned by
// fastEvents and decoded by encoding/json, plain and gzip, and from a file
// (whose name the error must start with). Each must refuse it with the
// error want (a file's: "NAME: want"), or, want "", take it.
func readJSONAllWays(t *testing.T, what string, data []byte, want string) {
	t.Helper()
	for _, gz := range []bool{false, true} {
		in := data
		if gz {
			in = gzipped(data)
		}
		for _, fast := range []bool{false, true} {
			_, _, err := readJSONTrace(bytes.NewReader(in), ReadLimits{}, fast)
			if (want == "" && err != nil) || (want != "" && (err == nil || err.Error() != want)) {
				t.Errorf("%s (gzip %v, fast %v): got %v, want %q", what, gz, fast, err, want)
			}
		}
		path := filepath.Join(t.TempDir(), "t.json")
		if err := os.WriteFile(path, in, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := ReadTraceFile(path)
		if (want == "" && err != nil) || (want != "" && (err == nil || err.Error() != path+": "+want)) {
			t.Errorf("%s (gzip %v, file): got %v, want %q", what, gz, err, path+": "+want)
		}
	}
}

// readJSONOK reads the JSON trace data as readJSONAllWays does, each read
// taking it.
func readJSONOK(t *testing.T, what string, data []byte) {
	t.Helper()
	readJSONAllWays(t, what, data, "")
}

// TestReadRefusesNegativeTime: an event the reader takes (a slice, a host
// task, a kernel or its launch, a counter sample) whose ts is below 0 is
// refused in one line naming the event, as a negative dur is; it was
// shown, clipped or dropped by the view. A time of -1 ps written with an
// exponent (-1e-6 µs) is refused too: it was rounded toward 0 and taken
// as 0.
func TestReadRefusesNegativeTime(t *testing.T) {
	const head = `{"otherData":{"generator":"davinci-sim","from_ps":0,"to_ps":10000000},"traceEvents":[
{"ph":"M","pid":0,"tid":0,"name":"process_name","args":{"name":"core 0"}},
{"ph":"M","pid":0,"tid":1,"name":"thread_name","args":{"name":"MTE2"}},
`
	for _, c := range []struct{ name, event string }{
		{"slice", `{"ph":"X","pid":0,"tid":1,"ts":-1e6,"dur":1,"name":"a","cat":"copy"}`},
		{"slice ending after 0", `{"ph":"X","pid":0,"tid":1,"ts":-1.5,"dur":2,"name":"a","cat":"copy"}`},
		{"slice at -1 ps", `{"ph":"X","pid":0,"tid":1,"ts":-1e-6,"dur":1,"name":"a","cat":"copy"}`},
		{"slice at -1 ps, decimal", `{"ph":"X","pid":0,"tid":1,"ts":-0.000001,"dur":1,"name":"a","cat":"copy"}`},
		{"stall", `{"ph":"X","pid":0,"tid":1,"ts":-3,"dur":1,"name":"bandwidth","cat":"stall"}`},
		{"buffer counter", `{"ph":"C","pid":0,"ts":-1,"name":"L1","args":{"bytes":5}}`},
		{"GM bandwidth", `{"ph":"C","pid":16777216,"ts":-2,"name":"GM bandwidth","args":{"GB/s":1}}`},
		{"power", `{"ph":"C","pid":16777218,"ts":-0.5,"name":"power","args":{"W":60}}`},
		{"host task", `{"ph":"X","pid":16777217,"tid":1,"ts":-1,"dur":2,"name":"h2d","cat":"transfer"}`},
		{"kernel", `{"ph":"X","pid":16777219,"tid":1,"ts":-1,"dur":5,"name":"gemm","cat":"kernel","args":{"blocks":4}}`},
	} {
		readJSONAllWays(t, c.name, []byte(head+c.event+"]}"), "trace event 2: negative time")
	}
	// A kernel's launch slice before 0 (the kernel at 0).
	launch := head + `{"ph":"X","pid":16777219,"tid":1,"ts":0,"dur":5,"name":"gemm","cat":"kernel","args":{"blocks":4,"launch_us":1}},
{"ph":"X","pid":16777219,"tid":1,"ts":-1,"dur":1,"name":"launch","cat":"launch"}]}`
	readJSONAllWays(t, "launch", []byte(launch), "trace event 3: negative time")
	// A negative duration is refused as before.
	readJSONAllWays(t, "duration", []byte(head+`{"ph":"X","pid":0,"tid":1,"ts":1,"dur":-1e-6,"name":"a","cat":"copy"}]}`), "trace event 2: negative duration")
	// Zero, however written, is a time.
	for _, ts := range []string{"0", "-0", "-0.0", "0e3", "-0e-3"} {
		readJSONOK(t, "ts "+ts, []byte(head+`{"ph":"X","pid":0,"tid":1,"ts":`+ts+`,"dur":1,"name":"a","cat":"copy"},
{"ph":"C","pid":0,"ts":`+ts+`,"name":"L1","args":{"bytes":5}}]}`))
	}
}

// firstEvent returns the index in the JSON trace data's traceEvents of the
// first event with phase ph and process pid.
func firstEvent(t *testing.T, data []byte, ph string, pid int) int {
	t.Helper()
	var tr struct {
		TraceEvents []struct {
			Ph  string `json:"ph"`
			Pid int    `json:"pid"`
		} `json:"traceEvents"`
	}
	if err := json.Unmarshal(data, &tr); err != nil {
		t.Fatal(err)
	}
	for i, ev := range tr.TraceEvents {
		if ev.Ph == ph && ev.Pid == pid {
			return i
		}
	}
	t.Fatalf("no %q event of process %d", ph, pid)
	return -1
}

// TestReadRefusesNegativeTimeWritten is the probe's case: a trace as the
// writer writes it whose first slice is moved to ts -1e6 (-1 s) is
// refused, naming the event.
func TestReadRefusesNegativeTimeWritten(t *testing.T) {
	data := jsonOf(t, seedTimeline(t))
	i := firstEvent(t, data, "X", 0)
	loc := regexp.MustCompile(`"ph":"X","pid":0,[^\n]*?"ts":([-0-9.eE+]+)`).FindSubmatchIndex(data)
	if loc == nil {
		t.Fatal("no slice of core 0")
	}
	bad := append(append(append([]byte{}, data[:loc[2]]...), "-1e6"...), data[loc[3]:]...)
	readJSONOK(t, "the trace written", data)
	readJSONAllWays(t, "ts -1e6", bad, fmt.Sprintf("trace event %d: negative time", i))
}

// TestReadRefusesProcessPastCores: a core's process id is below GMPid
// (2^24); the ids from GMPid to KernelsPid are the chip's processes. An
// event (a slice, counter or metadata) of a process past them was
// skipped as a foreign process's: core 0's events rewritten to process
// 1000000000 left it out of the view. It is refused, naming the event
// and the limit, as a thread past maxTraceLanes is. (Negative process
// ids are still a foreign trace's, skipped: TestReadTraceErrors.)
func TestReadRefusesProcessPastCores(t *testing.T) {
	const lim = "past the process ids the reader holds (cores 0 to 16777215, below 2^24; 16777216 to 16777219 GM, host, power and kernels)"
	for _, c := range []struct{ name, event string }{
		{"slice", `{"ph":"X","pid":1000000000,"tid":1,"ts":1,"dur":1,"name":"a","cat":"copy"}`},
		{"counter", `{"ph":"C","pid":1000000000,"ts":1,"name":"L1","args":{"bytes":5}}`},
		{"process name", `{"ph":"M","pid":1000000000,"tid":0,"name":"process_name","args":{"name":"core 0"}}`},
		{"thread name", `{"ph":"M","pid":1000000000,"tid":1,"name":"thread_name","args":{"name":"MTE2"}}`},
		{"sort index", `{"ph":"M","pid":1000000000,"tid":0,"name":"process_sort_index","args":{"sort_index":0}}`},
	} {
		readJSONAllWays(t, c.name, []byte(`{"traceEvents":[{"ph":"X","pid":0,"tid":1,"ts":0,"dur":1,"name":"a","cat":"copy"},`+c.event+"]}"),
			"trace event 1: process 1000000000: "+lim)
	}
	readJSONAllWays(t, "just past", []byte(`[{"ph":"X","pid":16777220,"tid":1,"ts":0,"dur":1,"name":"a","cat":"copy"}]`),
		"trace event 0: process 16777220: "+lim)
	// The last core and the chip's processes are read.
	ok := `[{"ph":"X","pid":16777215,"tid":1,"ts":0,"dur":1,"name":"a","cat":"copy"},
{"ph":"C","pid":16777216,"ts":1,"name":"GM bandwidth","args":{"GB/s":1.5}},
{"ph":"X","pid":16777217,"tid":1,"ts":1,"dur":2,"name":"h2d","cat":"transfer"},
{"ph":"C","pid":16777218,"ts":1,"name":"power","args":{"W":60}},
{"ph":"X","pid":16777219,"tid":1,"ts":0,"dur":5,"name":"gemm","cat":"kernel","args":{"blocks":4}}]`
	readJSONOK(t, "the chip's processes", []byte(ok))
	tl, err := ReadTrace(strings.NewReader(ok))
	if err != nil || len(tl.Cores) != 1 || tl.Cores[0].ID != 16777215 || len(tl.Host) != 1 || len(tl.Kernels) != 1 || len(tl.Power) != 1 || len(tl.Bandwidth) != 1 {
		t.Errorf("got %+v, %v", tl, err)
	}

	// The probe's case: core 0's events of a trace written, moved to
	// process 1000000000, are refused at the first of them.
	data := jsonOf(t, seedTimeline(t))
	i := firstEvent(t, data, "M", 0)
	bad := bytes.ReplaceAll(data, []byte(`"pid":0,`), []byte(`"pid":1000000000,`))
	readJSONAllWays(t, "core 0 moved", bad, fmt.Sprintf("trace event %d: process 1000000000: %s", i, lim))
}

// pfVarint is a varint field num of value v (pfMsg takes ints).
func pfVarint(num int, v uint64) []byte {
	b := protowire.AppendTag(nil, protowire.Number(num), protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

// pfCoreLane is the track descriptors of core 0 (process 1) and its lane 0
// (uuid 2).
func pfCoreLane() []byte {
	return append(pfPacket(pfMsg(fPacketTrackDesc, pfMsg(fTrackUUID, 1, fTrackProcess, pfMsg(fProcessPid, 1)))),
		pfPacket(pfMsg(fPacketTrackDesc, pfMsg(fTrackUUID, 2, fTrackRank, 0, fTrackThread, pfMsg(fThreadPid, 1))))...)
}

// pfSlice is a packet of sequence 1 beginning (end: ending) a slice on
// track 2 at timestamp ts.
func pfSlice(ts uint64, end bool) []byte {
	typ := typeSliceBegin
	if end {
		typ = typeSliceEnd
	}
	return pfPacket(append(pfMsg(fPacketSequenceID, 1, fPacketTrackEvent, pfMsg(fEventType, typ, fEventTrackUUID, 2, fEventNameIID, 0)),
		pfVarint(fPacketTimestamp, ts)...))
}

// pfIncremental is the first packet of sequence 1, its clock incremental
// from boot ns (BOOTTIME) and inc ns (the incremental clock).
func pfIncremental(boot, inc uint64) []byte {
	boottime := append(pfMsg(fClockID, clockBoottime), pfVarint(fClockTimestamp, boot)...)
	incr := append(pfMsg(fClockID, clockIncremental, fClockIsIncremental, 1), pfVarint(fClockTimestamp, inc)...)
	clk := append(pfMsg(fSnapshotClocks, boottime), pfMsg(fSnapshotClocks, incr)...)
	return pfPacket(pfMsg(fPacketSequenceID, 1, fPacketSequenceFlags, seqIncrementalStateCleared,
		fPacketDefaults, pfMsg(fDefaultsClockID, clockIncremental), fPacketClockSnapshot, clk))
}

// TestPftraceRefusesTimeOutOfRange: a .pftrace's timestamps are unsigned
// (uint64 ns), but the reader took them as int64 and times in ps: one of
// 2^63 ns or more was read as a negative time, one past about 106 days
// wrapped around, and an incremental clock's deltas (signed, as the
// writer writes them) could sum to a time before 0. Each is refused in
// one line naming the packet.
func TestPftraceRefusesTimeOutOfRange(t *testing.T) {
	cleared := pfPacket(pfMsg(fPacketSequenceID, 1, fPacketSequenceFlags, seqIncrementalStateCleared))
	// back is an incremental delta of d ns back in time, as the writer
	// writes one (ns − last as a uint64).
	back := func(d uint64) uint64 { return -d }
	cat := func(ps ...[]byte) []byte { return bytes.Join(ps, nil) }
	maxNs := uint64(math.MaxInt64/1000) - 1 // the last whole ns with room for 999 ps below 2^63 ps
	for _, c := range []struct {
		name string
		data []byte
		want string
	}{
		{"2^64 - 1000 ns", cat(pfCoreLane(), cleared, pfSlice(1<<64-1000, false)),
			"trace packet 3: time 18446744073709550616 ns is out of range (over about 106 days)"},
		{"2^62 ns", cat(pfCoreLane(), cleared, pfSlice(1<<62, false)),
			"trace packet 3: time 4611686018427387904 ns is out of range (over about 106 days)"},
		{"just past", cat(pfCoreLane(), cleared, pfSlice(maxNs+1, false)),
			fmt.Sprintf("trace packet 3: time %d ns is out of range (over about 106 days)", maxNs+1)},
		{"slice end", cat(pfCoreLane(), cleared, pfSlice(5, false), pfSlice(1<<63, true)),
			"trace packet 4: time 9223372036854775808 ns is out of range (over about 106 days)"},
		{"incremental, below 0", cat(pfCoreLane(), pfIncremental(10, 10), pfSlice(5, false), pfSlice(back(20), true)),
			"trace packet 4: negative time"},
		{"incremental, first below 0", cat(pfCoreLane(), pfIncremental(10, 10), pfSlice(back(11), false)),
			"trace packet 3: negative time"},
		{"incremental, past", cat(pfCoreLane(), pfIncremental(0, 0), pfSlice(maxNs, false), pfSlice(1, true)),
			fmt.Sprintf("trace packet 4: time %d ns is out of range (over about 106 days)", maxNs+1)},
		{"incremental, overflowing", cat(pfCoreLane(), pfIncremental(0, maxNs), pfSlice(1<<63-1, false)),
			"trace packet 3: time out of range (over about 106 days): the incremental clock overflows"},
		{"snapshot", cat(pfCoreLane(), pfIncremental(1<<63, 0), pfSlice(0, false)),
			"trace packet 2: clock snapshot: time 9223372036854775808 ns is out of range (over about 106 days)"},
	} {
		_, _, err := readPftrace(bytes.NewReader(c.data), ReadLimits{})
		if err == nil || err.Error() != c.want {
			t.Errorf("%s: got %v, want %q", c.name, err, c.want)
		}
	}
	// What the reader takes: times from 0 to the last ns, and incremental
	// deltas back in time that stay at or after 0.
	for _, c := range []struct {
		name  string
		data  []byte
		lanes [][2]int64 // the lane's slices, ps
	}{
		{"absolute", cat(pfCoreLane(), cleared, pfSlice(0, false), pfSlice(maxNs, true)), [][2]int64{{0, int64(maxNs) * 1000}}},
		{"incremental, back in time", cat(pfCoreLane(), pfIncremental(10, 10), pfSlice(100, false), pfSlice(10, true), pfSlice(back(100), false), pfSlice(5, true)),
			[][2]int64{{20000, 25000}, {110000, 120000}}},
		{"incremental, back to 0", cat(pfCoreLane(), pfIncremental(100, 0), pfSlice(back(100), false), pfSlice(7, true)), [][2]int64{{0, 7000}}},
	} {
		tl, _, err := readPftrace(bytes.NewReader(c.data), ReadLimits{})
		if err != nil || len(tl.Cores) != 1 || tl.Cores[0].Lanes[0].Len() != len(c.lanes) {
			t.Errorf("%s: got %+v, %v", c.name, tl, err)
			continue
		}
		for i, want := range c.lanes {
			if s := tl.Cores[0].Lanes[0].At(i); int64(s.From) != want[0] || int64(s.To) != want[1] {
				t.Errorf("%s: slice %d %v..%v, want %dps..%dps", c.name, i, s.From, s.To, want[0], want[1])
			}
		}
	}
}

// TestPftraceRefusesProcessPastCores: a .pftrace's core is process core+1,
// at most GMPid; a process or thread descriptor of a process past
// KernelsPid (the chip's processes) was skipped, its events with it. It
// is refused as the JSON reader refuses one.
func TestPftraceRefusesProcessPastCores(t *testing.T) {
	const lim = "past the process ids the reader holds (core N as N+1, below 2^24; 16777216 to 16777219 GM, host, power and kernels)"
	for _, c := range []struct {
		name string
		desc []byte
	}{
		{"process", pfMsg(fTrackUUID, 1, fTrackProcess, pfMsg(fProcessPid, 1000000001))},
		{"thread", pfMsg(fTrackUUID, 2, fTrackRank, 0, fTrackThread, pfMsg(fThreadPid, 1000000001))},
		{"just past", pfMsg(fTrackUUID, 2, fTrackRank, 0, fTrackThread, pfMsg(fThreadPid, KernelsPid+1))},
	} {
		data := append(pfCoreLane(), pfPacket(pfMsg(fPacketTrackDesc, c.desc))...)
		_, _, err := readPftrace(bytes.NewReader(data), ReadLimits{})
		pid := 1000000001
		if c.name == "just past" {
			pid = KernelsPid + 1
		}
		want := fmt.Sprintf("trace packet 2: process %d: %s", pid, lim)
		if err == nil || err.Error() != want {
			t.Errorf("%s: got %v, want %q", c.name, err, want)
		}
	}
}
