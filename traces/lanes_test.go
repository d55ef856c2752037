package traces_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/davinci-sim/davinci-sim/arch"
	"github.com/davinci-sim/davinci-sim/machines"
	"github.com/davinci-sim/davinci-sim/sim"
	"github.com/davinci-sim/davinci-sim/traces"
)

// DrillTimeline is a 910A's timeline (32 cores of 7 lanes) with one wait
// on every lane of every core, core c's lane p over [100(7c+p), +50) ns:
// what a cluster trace's --trace-npu drill-down into it holds.
func drillTimeline(t testing.TB) *traces.Timeline {
	t.Helper()
	m, err := machines.Load("ascend-910a", nil)
	if err != nil {
		t.Fatal(err)
	}
	lanes := len(m.Geometry().Lanes)
	r := traces.NewRecorder(traces.Window{})
	r.SetInfo(m.Name, "test", m.Geometry())
	for c := range m.Cores {
		for p := range lanes {
			from := sim.Time(c*lanes+p) * 100 * sim.Nanosecond
			r.Interval(c, p, arch.WaitFlag, from, from+50*sim.Nanosecond, nil, nil)
		}
	}
	r.Finish(sim.Time(m.Cores*lanes) * 100 * sim.Nanosecond)
	return r.Timeline()
}

// drillTrace is a cluster trace of two ranks whose rank 1 holds the
// drill-down into a 910A (drillTimeline): 3 tracks and 32 × 7 core lanes,
// 227 threads in one process.
func drillTrace(t testing.TB) (*traces.ClusterTrace, *traces.Timeline) {
	t.Helper()
	chip := drillTimeline(t)
	ct := &traces.ClusterTrace{Machine: "cloudbrain2-node", Program: "lu-fused", Ranks: []string{"r0", "r1"},
		Tracks: []string{"host", "main", "fusion"}}
	ct.AddSpan(traces.ClusterSpan{Rank: 0, Track: 0, Name: "diag 0", From: 0, To: 1000})
	ct.AddSpan(traces.ClusterSpan{Rank: 1, Track: 1, Name: "p1-0", From: 0, To: chip.To})
	ct.AddTimeline(1, chip)
	return ct, chip
}

// A process with more threads than 64 reads back whole: every one of a
// 32-core drill-down's 227 threads, named, with its slice, from the JSON
// trace and from a Perfetto trace of what was read. (The readers took
// thread ids up to 64: the lanes of cores 9–31 were lost.)
func TestManyThreadsReadBack(t *testing.T) {
	ct, chip := drillTrace(t)
	var buf bytes.Buffer
	if err := traces.WriteClusterJSON(&buf, ct); err != nil {
		t.Fatal(err)
	}
	back, err := traces.ReadTrace(&buf)
	if err != nil {
		t.Fatal(err)
	}
	check := func(what string, tl *traces.Timeline) {
		t.Helper()
		tracks := len(ct.Tracks)
		want := tracks + len(chip.Cores)*len(chip.Lanes)
		if want <= 64 || len(tl.Lanes) != want {
			t.Fatalf("%s: %d lanes, want %d", what, len(tl.Lanes), want)
		}
		r1 := tl.Core(1)
		if r1 == nil {
			t.Fatalf("%s: no rank 1", what)
		}
		for _, c := range chip.Cores {
			for p, name := range chip.Lanes {
				l := tracks + c.ID*len(chip.Lanes) + p
				if got, want := tl.LaneName(l), fmt.Sprintf("core %d %s", c.ID, name); got != want {
					t.Errorf("%s: lane %d is %q, want %q", what, l, got, want)
				}
				from := sim.Time(c.ID*len(chip.Lanes)+p) * 100 * sim.Nanosecond
				if ss := r1.Lane(l).Slices(); len(ss) != 1 || ss[0].From != from || ss[0].To != from+50*sim.Nanosecond || ss[0].Cause != arch.WaitFlag {
					t.Errorf("%s: lane %d (%s) holds %+v, want its wait at %v", what, l, tl.LaneName(l), ss, from)
				}
			}
		}
	}
	check("JSON", back)
	var pb bytes.Buffer
	if err := traces.WritePftrace(&pb, back); err != nil {
		t.Fatal(err)
	}
	again, err := traces.ReadPftrace(&pb)
	if err != nil {
		t.Fatal(err)
	}
	check("pftrace", again)
}

// A trace whose threads or lanes exceed what the reader holds is refused
// with one error naming the bound, not read into memory without one: a
// thread id past the lanes of a process (JSON and Perfetto), and many
// processes each naming a high thread (each lane of each process costs
// ~200 bytes, empty or not).
func TestTooManyThreadsRefused(t *testing.T) {
	for _, c := range []struct{ name, trace, want string }{
		{"thread name", `{"traceEvents":[{"ph":"M","pid":1,"tid":100000,"name":"thread_name","args":{"name":"x"}}]}`, "threads in a process"},
		{"slice", `{"traceEvents":[{"ph":"X","pid":1,"tid":2000000000,"ts":0,"dur":1,"name":"x","cat":"stall"}]}`, "threads in a process"},
		{"processes × threads", manyProcesses(600, 4096), "lanes in all"},
	} {
		tl, err := traces.ReadTrace(strings.NewReader(c.trace))
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v (%v), want one line saying %q", c.name, err, tl != nil, c.want)
		}
	}
	// A Perfetto thread track ranked past the lanes of a process.
	var td, th, pk, trace []byte
	th = protowire.AppendTag(th, 1, protowire.VarintType) // ThreadDescriptor.pid
	th = protowire.AppendVarint(th, 1)
	td = protowire.AppendTag(td, 1, protowire.VarintType) // TrackDescriptor.uuid
	td = protowire.AppendVarint(td, 7)
	td = protowire.AppendTag(td, 4, protowire.BytesType) // .thread
	td = protowire.AppendBytes(td, th)
	td = protowire.AppendTag(td, 12, protowire.VarintType) // .sibling_order_rank
	td = protowire.AppendVarint(td, 100000)
	pk = protowire.AppendTag(pk, 60, protowire.BytesType) // TracePacket.track_descriptor
	pk = protowire.AppendBytes(pk, td)
	trace = protowire.AppendTag(trace, 1, protowire.BytesType) // Trace.packet
	trace = protowire.AppendBytes(trace, pk)
	if _, err := traces.ReadPftrace(bytes.NewReader(trace)); err == nil || !strings.Contains(err.Error(), "threads in a process") {
		t.Errorf("pftrace thread ranked 100000: %v", err)
	}
}

// manyProcesses is a JSON trace of n processes, each naming thread tid.
func manyProcesses(n, tid int) string {
	var b strings.Builder
	b.WriteString(`{"traceEvents":[`)
	for pid := range n {
		if pid > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"ph":"M","pid":%d,"name":"process_name","args":{"name":"p"}},{"ph":"M","pid":%d,"tid":%d,"name":"thread_name","args":{"name":"t"}}`, pid, pid, tid)
	}
	b.WriteString(`]}`)
	return b.String()
}
