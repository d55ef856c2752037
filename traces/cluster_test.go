package traces_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/davinci-sim/davinci-sim/arch"
	"github.com/davinci-sim/davinci-sim/isa"
	"github.com/davinci-sim/davinci-sim/sim"
	"github.com/davinci-sim/davinci-sim/traces"
)

// The cluster trace keeps what is in its window on its ranks, cut to the
// window, up to its limit, and counts what the limit left out.
func TestClusterTraceFilter(t *testing.T) {
	ct := &traces.ClusterTrace{Only: map[int]bool{1: true, 2: true}, From: 100, To: 200, Limit: 4}
	ct.AddSpan(traces.ClusterSpan{Rank: 0, From: 120, To: 130}) // other rank
	ct.AddSpan(traces.ClusterSpan{Rank: 1, From: 10, To: 99})   // before the window
	ct.AddSpan(traces.ClusterSpan{Rank: 1, From: 201, To: 300}) // after it
	ct.AddSpan(traces.ClusterSpan{Rank: 1, From: 50, To: 100})  // touches its start only: not kept
	ct.AddSpan(traces.ClusterSpan{Rank: 1, From: 200, To: 260}) // touches its end only: not kept
	ct.AddSpan(traces.ClusterSpan{Rank: 1, From: 200, To: 200}) // an instant at its end: not kept
	ct.AddSpan(traces.ClusterSpan{Rank: 1, From: 100, To: 100}) // an instant at its start: kept
	ct.AddSpan(traces.ClusterSpan{Rank: 1, From: 80, To: 120})  // cut to 100..120
	ct.AddMessage(traces.ClusterMessage{From: 1, To: 2, Sent: 150, Arrived: 160})
	ct.AddMessage(traces.ClusterMessage{From: 0, To: 2, Sent: 150, Arrived: 160}) // its sender not kept
	ct.AddMessage(traces.ClusterMessage{From: 1, To: 2, Sent: 90, Arrived: 160})  // sent before the window
	ct.AddMessage(traces.ClusterMessage{From: 1, To: 2, Sent: 150, Arrived: 201}) // arrives after it
	ct.AddMessage(traces.ClusterMessage{From: 1, To: 2, Sent: 150, Arrived: 200}) // its arrow ends at 199: kept
	ct.AddSpan(traces.ClusterSpan{Rank: 2, From: 190, To: 250})                   // beyond the limit
	want := []traces.ClusterSpan{{Rank: 1, From: 100, To: 100}, {Rank: 1, From: 100, To: 120}}
	if !reflect.DeepEqual(ct.Spans, want) || len(ct.Messages) != 2 || ct.Dropped != 1 {
		t.Errorf("kept spans %v, %d messages, dropped %d; want %v, 2, 1", ct.Spans, len(ct.Messages), ct.Dropped, want)
	}
	cut := &traces.ClusterTrace{From: 100, To: 200}
	cut.AddSpan(traces.ClusterSpan{Rank: 2, From: 190, To: 250})
	cut.AddSpan(traces.ClusterSpan{Rank: 2, From: 0, To: 1000})
	if want := []traces.ClusterSpan{{Rank: 2, From: 190, To: 200}, {Rank: 2, From: 100, To: 200}}; !reflect.DeepEqual(cut.Spans, want) {
		t.Errorf("kept %v, want %v", cut.Spans, want)
	}
	open := &traces.ClusterTrace{}
	for i := range 5 {
		open.AddSpan(traces.ClusterSpan{Rank: i, From: sim.Time(i), To: sim.Time(i + 1)})
	}
	if len(open.Spans) != 5 || open.Dropped != 0 {
		t.Errorf("unfiltered trace kept %d of 5", len(open.Spans))
	}
}

// A windowed cluster trace states its window cut to the run in otherData,
// as a chip trace does — not the extent of what it holds — and a window
// starting at or after the run's end holds nothing and states an empty
// span at the run's end.
func TestClusterTraceHeaderWindow(t *testing.T) {
	for _, c := range []struct {
		from, to, end    sim.Time
		wantFrom, wantTo int64
		wantEvents       int
	}{
		{100, 200, 1000, 100, 200, 1},
		{100, 0, 1000, 100, 1000, 2},
		{100, 2000, 1000, 100, 1000, 2},
		{0, 0, 0, 0, 1000, 2},             // the run's end not known: the last span's
		{1000, 2000, 1000, 1000, 1000, 1}, // at the run's end: nothing but the end (runEnd)
		{1500, 2000, 1000, 1000, 1000, 1}, // after it
	} {
		ct := &traces.ClusterTrace{Ranks: []string{"r0"}, Tracks: []string{"host"}, From: c.from, To: c.to, End: c.end}
		ct.AddSpan(traces.ClusterSpan{Name: "a", From: 50, To: 150})
		ct.AddSpan(traces.ClusterSpan{Name: "b", From: 250, To: 1000})
		var buf bytes.Buffer
		if err := traces.WriteClusterJSON(&buf, ct); err != nil {
			t.Fatal(err)
		}
		doc := decodeTrace(t, buf.Bytes())
		n := 0
		for _, e := range doc.TraceEvents {
			if e.Ph != "M" {
				n++
				ts, _ := e.Ts.Float64()
				dur, _ := e.Dur.Float64()
				if from, to := math.Round(ts*1e6), math.Round((ts+dur)*1e6); from < float64(c.wantFrom) || to > float64(c.wantTo) {
					t.Errorf("window %v..%v: %q at %v..%v ps, outside it", c.from, c.to, e.Name, from, to)
				}
			}
		}
		from, to := doc.OtherData["from_ps"], doc.OtherData["to_ps"]
		if from != json.Number(fmt.Sprint(c.wantFrom)) || to != json.Number(fmt.Sprint(c.wantTo)) || n != c.wantEvents {
			t.Errorf("window %v..%v, end %v: from_ps %v, to_ps %v, %d events; want %d, %d, %d", c.from, c.to, c.end, from, to, n, c.wantFrom, c.wantTo, c.wantEvents)
		}
	}
}

// A cluster trace reads back as a timeline of the ranks (as cores) and
// their tracks (as lanes), every span a slice: what davinci-sim view shows.
func TestClusterTraceReadsBack(t *testing.T) {
	ct := &traces.ClusterTrace{Ranks: []string{"r0", "r1"}, Tracks: []string{"host", "main"},
		RankTracks: map[int][]string{1: {"core 0 M"}}}
	ct.AddSpan(traces.ClusterSpan{Rank: 0, Track: 0, Name: "diag 0", From: 0, To: 1000})
	ct.AddSpan(traces.ClusterSpan{Rank: 1, Track: 1, Name: "p1-0", From: 500, To: 2000})
	ct.AddSpan(traces.ClusterSpan{Rank: 1, Track: 2, Name: "mmad", From: 600, To: 700})
	ct.AddMessage(traces.ClusterMessage{From: 0, To: 1, Sent: 900, Arrived: 1500, Name: "bcast"})
	tl := readClusterBack(t, ct)
	if len(tl.Cores) != 2 || len(tl.Lanes) < 3 || tl.Lanes[0] != "host" || tl.Lanes[1] != "main" || tl.Lanes[2] != "core 0 M" {
		t.Fatalf("cores %d, lanes %v", len(tl.Cores), tl.Lanes)
	}
	n := 0
	for _, c := range tl.Cores {
		for p := range c.Lanes {
			n += c.Lane(p).Len()
		}
	}
	if n < 3 {
		t.Errorf("%d slices read back, want the 3 spans", n)
	}
}

// A cluster trace states its machine and program in otherData, as a chip
// trace does (what davinci-sim view shows), with the time span it holds,
// and every slice and arrow has a category: the span's own, its track's,
// or "cluster".
func TestClusterTraceHeaderAndCategories(t *testing.T) {
	ct := &traces.ClusterTrace{Machine: "cloudbrain2-node", Program: "lu-fused", Ranks: []string{"r0", "r1"},
		Tracks: []string{"host", "main", "other"}, TrackCats: []string{"host", "kernel"}}
	ct.AddSpan(traces.ClusterSpan{Rank: 0, Track: 0, Name: "d2h diag 0", Cat: "transfer", From: 0, To: 1000})
	ct.AddSpan(traces.ClusterSpan{Rank: 0, Track: 0, Name: "mpi-bcast", Cat: "collective", From: 1000, To: 1500})
	ct.AddSpan(traces.ClusterSpan{Rank: 1, Track: 1, Name: "p1-0", From: 500, To: 2000})
	ct.AddSpan(traces.ClusterSpan{Rank: 1, Track: 2, Name: "x", From: 600, To: 2500})
	ct.AddMessage(traces.ClusterMessage{From: 0, To: 1, Track: 0, Sent: 900, Arrived: 1500, Name: "bcast"})
	var buf bytes.Buffer
	if err := traces.WriteClusterJSON(&buf, ct); err != nil {
		t.Fatal(err)
	}
	doc := decodeTrace(t, buf.Bytes())
	want := map[string]any{"generator": "davinci-sim", "machine": "cloudbrain2-node", "program": "lu-fused", "from_ps": json.Number("0"), "to_ps": json.Number("2500")}
	if !reflect.DeepEqual(doc.OtherData, want) {
		t.Errorf("otherData %v, want %v", doc.OtherData, want)
	}
	cats := map[string]string{}
	for _, e := range doc.TraceEvents {
		if e.Ph == "M" {
			continue
		}
		if e.Cat == "" {
			t.Errorf("%s event %q has no category", e.Ph, e.Name)
		}
		cats[e.Ph+" "+e.Name] = e.Cat
	}
	wantCats := map[string]string{"X d2h diag 0": "transfer", "X mpi-bcast": "collective", "X p1-0": "kernel", "X x": "cluster", "s bcast": "message", "f bcast": "message"}
	if !reflect.DeepEqual(cats, wantCats) {
		t.Errorf("categories %v, want %v", cats, wantCats)
	}
	tl, err := traces.ReadTrace(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if tl.Machine != "cloudbrain2-node" || tl.Program != "lu-fused" || tl.From != 0 || tl.To != 2500 {
		t.Errorf("read back: machine %q, program %q, %v..%v", tl.Machine, tl.Program, tl.From, tl.To)
	}
}

// A cluster trace of a run that did not complete says how it ended in
// otherData, as a chip trace does, and reads back with it (what view
// shows in place of "complete").
func TestClusterTraceEnding(t *testing.T) {
	ct := &traces.ClusterTrace{Ranks: []string{"r0"}, Tracks: []string{"host"}, End: 2000, Ending: "deadlock at 2ns"}
	ct.AddSpan(traces.ClusterSpan{Rank: 0, Track: 0, Name: "wait", From: 0, To: 2000})
	var buf bytes.Buffer
	if err := traces.WriteClusterJSON(&buf, ct); err != nil {
		t.Fatal(err)
	}
	if got := decodeTrace(t, buf.Bytes()).OtherData["ending"]; got != "deadlock at 2ns" {
		t.Errorf("otherData ending %v, want the run's", got)
	}
	tl, err := traces.ReadTrace(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if tl.Ending != "deadlock at 2ns" {
		t.Errorf("read back ending %q", tl.Ending)
	}
}

// chipEvents returns the events of a chip trace as a drill-down shows
// them, by "core N LANE" thread: slices and arrows with their categories
// and args, counters by "core N BUFFER" (buffers) or "NPU …" (GM
// bandwidth, power).
func chipEvents(t *testing.T, doc traceDoc, thread func(pid, tid int) string, counter func(pid int, name string) string) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, e := range doc.TraceEvents {
		var key string
		args, _ := json.Marshal(e.Args)
		switch e.Ph {
		case "X":
			th := thread(e.Pid, e.Tid)
			if th == "" {
				continue
			}
			key = fmt.Sprintf("X %s %s %s %s %s %s bind=%d out=%v in=%v", th, e.Ts, e.Dur, e.Name, e.Cat, args, e.BindID, e.FlowOut, e.FlowIn)
		case "C":
			c := counter(e.Pid, e.Name)
			if c == "" {
				continue
			}
			key = fmt.Sprintf("C %s %s %s", c, e.Ts, args)
		default:
			continue
		}
		out[key]++
	}
	return out
}

// --trace-npu's drill-down shows the NPU's cores as a chip trace does:
// every instruction with its category, text, bytes and flops, the stalls,
// the flag marks with their arrows, each core's buffer occupancy, the
// NPU's GM bandwidth and power — on its rank's threads and counters; the
// trace reads back with the buffers, without taking the NPU's counters
// for buffers.
func TestClusterDrillDownAsChipTrace(t *testing.T) {
	tl := recordHGEMM(t, traces.Window{Cores: map[int]bool{0: true, 1: true}})
	if len(tl.Power) == 0 || len(tl.Bandwidth) == 0 || len(tl.Cores) != 2 || len(tl.Cores[0].Flows) == 0 {
		t.Fatalf("the chip run recorded too little: %d cores", len(tl.Cores))
	}
	chip := decodeTrace(t, writeJSON(t, tl))
	lanes := map[[2]int]string{}
	for _, e := range chip.TraceEvents {
		if e.Ph == "M" && e.Name == "thread_name" {
			lanes[[2]int{e.Pid, e.Tid}] = e.Args["name"].(string)
		}
	}
	want := chipEvents(t, chip, func(pid, tid int) string {
		if pid >= traces.GMPid {
			return ""
		}
		return fmt.Sprintf("core %d %s", pid, lanes[[2]int{pid, tid}])
	}, func(pid int, name string) string {
		switch pid {
		case traces.GMPid:
			return "NPU " + name
		case traces.PowerPid:
			return "NPU power"
		}
		return fmt.Sprintf("core %d %s", pid, name)
	})

	const rank = 2
	ct := &traces.ClusterTrace{Machine: "cluster", Program: "lu-fused", Ranks: []string{"r0", "r1", "r2"}, Tracks: []string{"host", "main", "fusion"}}
	ct.AddSpan(traces.ClusterSpan{Rank: rank, Track: 1, Name: "p1-0", From: 0, To: tl.To})
	ct.AddTimeline(rank, tl)
	var buf bytes.Buffer
	if err := traces.WriteClusterJSON(&buf, ct); err != nil {
		t.Fatal(err)
	}
	cl := decodeTrace(t, buf.Bytes())
	threads := map[int]string{}
	for _, e := range cl.TraceEvents {
		if e.Ph == "M" && e.Name == "thread_name" && e.Pid == rank {
			threads[e.Tid] = e.Args["name"].(string)
		}
	}
	got := chipEvents(t, cl, func(pid, tid int) string {
		if tid <= len(ct.Tracks) {
			return ""
		}
		if pid != rank {
			t.Fatalf("a core thread on rank %d", pid)
		}
		return threads[tid]
	}, func(pid int, name string) string {
		if pid != rank {
			t.Fatalf("a counter on rank %d", pid)
		}
		return name
	})
	kinds := map[string]bool{}
	for k := range want {
		x := strings.HasPrefix(k, "X ")
		kinds["stall"] = kinds["stall"] || x && strings.Contains(k, " stall ")
		kinds["arrow"] = kinds["arrow"] || x && !strings.Contains(k, " bind=0 ")
		kinds["flops"] = kinds["flops"] || x && strings.Contains(k, `"flops":`)
		kinds["buffer"] = kinds["buffer"] || strings.HasPrefix(k, "C core 0 ")
		kinds["bandwidth"] = kinds["bandwidth"] || strings.HasPrefix(k, "C NPU GM bandwidth ")
		kinds["power"] = kinds["power"] || strings.HasPrefix(k, "C NPU power ")
	}
	for _, k := range []string{"stall", "arrow", "flops", "buffer", "bandwidth", "power"} {
		if !kinds[k] {
			t.Errorf("the chip trace has no %s events to compare", k)
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("the drill-down differs from the chip trace: %s", diffKeys(want, got))
	}
	back, err := traces.ReadTrace(&buf)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range back.Buffers {
		if strings.HasPrefix(b, "NPU") {
			t.Errorf("the NPU's counter %q read back as a buffer", b)
		}
	}
	if c := back.Core(rank); c == nil || back.BufferCapacity(slicesIndex(back.Buffers, "core 0 L1")) != 1<<20 {
		t.Errorf("read back: rank %d, buffers %v, capacities %v", rank, back.Buffers, back.Capacity)
	}
}

func slicesIndex(ss []string, s string) int {
	for i, x := range ss {
		if x == s {
			return i
		}
	}
	return len(ss)
}

// A cluster trace of some ranks (--trace-ranks) lists only those ranks'
// processes, and names the others in otherData's untraced_ranks, as a chip
// trace names the cores it leaves out in idle_cores.
func TestClusterTraceOnlyRanksListed(t *testing.T) {
	ct := &traces.ClusterTrace{Ranks: []string{"r0", "r1", "r2", "r3", "r4"}, Tracks: []string{"host"},
		Only: map[int]bool{0: true, 1: true, 3: true}}
	for r := range 5 {
		ct.AddSpan(traces.ClusterSpan{Rank: r, Name: "x", From: 0, To: 10})
	}
	var buf bytes.Buffer
	if err := traces.WriteClusterJSON(&buf, ct); err != nil {
		t.Fatal(err)
	}
	doc := decodeTrace(t, buf.Bytes())
	pids := map[int]bool{}
	for _, e := range doc.TraceEvents {
		pids[e.Pid] = true
	}
	if want := map[int]bool{0: true, 1: true, 3: true}; !reflect.DeepEqual(pids, want) {
		t.Errorf("processes %v, want %v", pids, want)
	}
	if got := doc.OtherData["untraced_ranks"]; got != "2,4" {
		t.Errorf("untraced_ranks %v, want \"2,4\"", got)
	}
	all := &traces.ClusterTrace{Ranks: []string{"r0", "r1"}, Tracks: []string{"host"}}
	buf.Reset()
	if err := traces.WriteClusterJSON(&buf, all); err != nil {
		t.Fatal(err)
	}
	if doc := decodeTrace(t, buf.Bytes()); doc.OtherData["untraced_ranks"] != nil {
		t.Errorf("every rank traced, yet untraced_ranks %v", doc.OtherData["untraced_ranks"])
	}
}

// A window that starts at or after the run's end holds nothing of it: a
// chip trace and a cluster trace both state the empty span [end, end] and
// hold no event — no counter sample at the window's start, a time the run
// never reached.
func TestWindowAfterRunEndIsEmpty(t *testing.T) {
	for _, from := range []sim.Time{1000, 1500} {
		r := traces.NewRecorder(traces.Window{From: from, To: 2000})
		r.Interval(0, 0, arch.Busy, 100, 200, &isa.Instr{Op: isa.OpNop}, nil)
		r.Occupancy(0, 0, 4096, 150)
		r.Bandwidth(120, 1e9)
		r.Finish(1000)
		doc := decodeTrace(t, writeJSON(t, r.Timeline()))
		ct := &traces.ClusterTrace{Ranks: []string{"r0"}, Tracks: []string{"host"}, From: from, To: 2000, End: 1000}
		ct.AddSpan(traces.ClusterSpan{Name: "a", From: 100, To: 1000})
		var buf bytes.Buffer
		if err := traces.WriteClusterJSON(&buf, ct); err != nil {
			t.Fatal(err)
		}
		for name, doc := range map[string]traceDoc{"chip": doc, "cluster": decodeTrace(t, buf.Bytes())} {
			n, instants := 0, 0
			for _, e := range doc.TraceEvents {
				if e.Ph != "M" {
					n++
				}
				if e.Ph == "i" {
					instants++
				}
			}
			// (One event, the run's end: the viewers load no trace without one.)
			if doc.OtherData["from_ps"] != json.Number("1000") || doc.OtherData["to_ps"] != json.Number("1000") || n != 1 || instants != 1 {
				t.Errorf("window from %v, run ending at 1000: %s trace from_ps %v, to_ps %v, %d events (%d instants); want 1000, 1000, the run's end alone",
					from, name, doc.OtherData["from_ps"], doc.OtherData["to_ps"], n, instants)
			}
		}
	}
}

// A host's spans of category "wait" (its waits for kernels, at the
// barrier, in an HCCL collective: the writer's categories, as a chip
// trace's host tasks have their kind) read back as stalls, so that view
// does not count them busy (lu-cluster-small's rank 0 showed "host 100.0%
// busy").
func TestClusterHostWaitsReadAsStalls(t *testing.T) {
	ct := &traces.ClusterTrace{Ranks: []string{"r0"}, Tracks: []string{"host"}, TrackCats: []string{"host"}}
	ct.AddSpan(traces.ClusterSpan{Rank: 0, Track: 0, Name: "launch k", Cat: "launch", From: 0, To: 100})
	ct.AddSpan(traces.ClusterSpan{Rank: 0, Track: 0, Name: "wait k", Cat: "wait", From: 100, To: 400})
	tl := readClusterBack(t, ct)
	tot := tl.Cores[0].Totals(0)
	if tot[arch.Busy] != 100 || tot[arch.WaitFlag] != 300 {
		t.Errorf("read back: busy %v, wait %v; want 100 and 300 ps", tot[arch.Busy], tot[arch.WaitFlag])
	}
}

// A cluster trace cut short by its limit says so in otherData — how many
// records it dropped and when the first of them started, after which the
// trace misses some of the run — and reads back with a note saying so
// (Timeline.Notes, which view shows). Before, only a report note said it.
func TestClusterTraceDroppedInHeader(t *testing.T) {
	ct := &traces.ClusterTrace{Ranks: []string{"r0", "r1"}, Tracks: []string{"main"}, Limit: 2}
	ct.AddSpan(traces.ClusterSpan{Rank: 0, Name: "a", From: 0, To: 100})
	ct.AddSpan(traces.ClusterSpan{Rank: 1, Name: "b", From: 50, To: 300})
	ct.AddSpan(traces.ClusterSpan{Rank: 0, Name: "c", From: 300, To: 400})
	ct.AddSpan(traces.ClusterSpan{Rank: 1, Name: "d", From: 200, To: 500})
	ct.AddMessage(traces.ClusterMessage{From: 0, To: 1, Sent: 350, Arrived: 450, Name: "m"})
	var buf bytes.Buffer
	if err := traces.WriteClusterJSON(&buf, ct); err != nil {
		t.Fatal(err)
	}
	doc := decodeTrace(t, buf.Bytes())
	if doc.OtherData["dropped_records"] != json.Number("3") || doc.OtherData["dropped_from_ps"] != json.Number("200") {
		t.Errorf("otherData %v: want dropped_records 3, dropped_from_ps 200", doc.OtherData)
	}
	tl, err := traces.ReadTrace(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(tl.Notes) != 1 || !strings.Contains(tl.Notes[0], "truncated from 200ps: 3 spans and messages") {
		t.Errorf("notes %q", tl.Notes)
	}
}

// readClusterBack writes ct as a JSON cluster trace and reads it back.
func readClusterBack(t *testing.T, ct *traces.ClusterTrace) *traces.Timeline {
	t.Helper()
	var buf bytes.Buffer
	if err := traces.WriteClusterJSON(&buf, ct); err != nil {
		t.Fatal(err)
	}
	tl, err := traces.ReadTrace(&buf)
	if err != nil {
		t.Fatal(err)
	}
	return tl
}

// A cluster trace of some ranks (--trace-ranks) reads back with a note
// naming the ranks it left out (otherData's untraced_ranks), which view's
// footer shows; a header naming them unreadably is refused.
func TestClusterUntracedRanksNote(t *testing.T) {
	ct := &traces.ClusterTrace{Ranks: []string{"r0", "r1", "r2", "r3"}, Tracks: []string{"host"}, Only: map[int]bool{1: true}}
	for r := range 4 {
		ct.AddSpan(traces.ClusterSpan{Rank: r, Name: "diag 0", From: 0, To: 100})
	}
	tl := readClusterBack(t, ct)
	if want := "ranks 0,2-3 left out (--trace-ranks): the trace holds the other ranks only"; !slices.Contains(tl.Notes, want) {
		t.Errorf("notes %q, want %q", tl.Notes, want)
	}
	bad := `{"traceEvents":[],"otherData":{"generator":"davinci-sim","untraced_ranks":"2-x"}}`
	if _, err := traces.ReadTrace(strings.NewReader(bad)); err == nil || !strings.Contains(err.Error(), "untraced_ranks") {
		t.Errorf("untraced_ranks \"2-x\": %v", err)
	}
}
