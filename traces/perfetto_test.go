package traces_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/davinci-sim/davinci-sim/arch"
	"github.com/davinci-sim/davinci-sim/isa"
	"github.com/davinci-sim/davinci-sim/machines"
	"github.com/davinci-sim/davinci-sim/programs"
	"github.com/davinci-sim/davinci-sim/traces"
)

// hgemm256 returns the test program: hgemm 256³, timing only.
func hgemm256(t testing.TB) (*programs.File, programs.Options) {
	return exampleProgram(t, "hgemm.yaml", "program.m=256", "program.n=256", "program.k=256", "program.numerics=off")
}

// exampleProgram returns an example program file with overrides.
func exampleProgram(t testing.TB, name string, sets ...string) (*programs.File, programs.Options) {
	t.Helper()
	f, err := programs.ReadFile("../programs/examples/" + name)
	if err != nil {
		t.Fatal(err)
	}
	opts := programs.Options{}
	for _, o := range sets {
		ov, err := machines.ParseOverride(o)
		if err != nil {
			t.Fatal(err)
		}
		opts.Overrides = append(opts.Overrides, ov)
	}
	return f, opts
}

// recordHGEMM runs a small hgemm and returns its recorded timeline.
func recordHGEMM(t testing.TB, w traces.Window) *traces.Timeline {
	t.Helper()
	f, opts := hgemm256(t)
	return recordProgram(t, f, opts, w)
}

// recordProgram runs a program and returns its recorded timeline.
func recordProgram(t testing.TB, f *programs.File, opts programs.Options, w traces.Window) *traces.Timeline {
	t.Helper()
	tl, _ := recordRun(t, f, opts, w)
	return tl
}

// recordRun runs a program and returns its recorded timeline (named for
// the run's machine) and its result.
func recordRun(t testing.TB, f *programs.File, opts programs.Options, w traces.Window) (*traces.Timeline, *programs.Result) {
	t.Helper()
	rec := traces.NewRecorder(w)
	res, err := programs.Execute(f, opts, programs.RunHooks{Observer: rec})
	if err != nil {
		t.Fatal(err)
	}
	m, err := machines.Load(res.Report.Machine, nil)
	if err != nil {
		t.Fatal(err)
	}
	rec.SetInfo(m.Name, f.Kind.Name, m.Geometry())
	rec.Finish(res.Stats.Time)
	return rec.Timeline(), res
}

// sliceView is a slice with everything derived from its timeline.
type sliceView struct {
	traces.Slice
	Bind       uint64
	Name, Text string
	Bytes      int64
	Flops      float64
}

func sliceViews(tl *traces.Timeline, ss []traces.Slice) []sliceView {
	out := make([]sliceView, len(ss))
	for i := range ss {
		s := &ss[i]
		b, f := tl.Args(s)
		out[i] = sliceView{Slice: traces.Slice{From: s.From, To: s.To, Cause: s.Cause, Class: s.Class}, Bind: tl.Bind(s),
			Name: tl.Name(s), Text: tl.Text(s), Bytes: b, Flops: f}
	}
	return out
}

func TestPerfettoRoundTrip(t *testing.T) {
	tl := recordHGEMM(t, traces.Window{})
	if len(tl.Cores) == 0 || len(tl.Cores[0].Flows) == 0 || len(tl.Bandwidth) == 0 || len(tl.Power) == 0 {
		t.Fatalf("recorded nothing useful: %d cores", len(tl.Cores))
	}
	for _, name := range []string{"t.json", "t.json.gz", "t.pftrace"} {
		sameTimeline(t, name, tl, roundTrip(t, name, tl))
	}
}

// sameTimeline compares timeline back with tl: header, lanes, slices as
// derived (names, text, arguments, arrows), flows, counters, host tasks.
func sameTimeline(t *testing.T, name string, tl, back *traces.Timeline) {
	t.Helper()
	if back.From != tl.From || back.To != tl.To || back.Machine != tl.Machine || !reflect.DeepEqual(capacities(back), capacities(tl)) {
		t.Errorf("%s: header %v..%v %q %v", name, back.From, back.To, back.Machine, back.Capacity)
	}
	if !reflect.DeepEqual(back.Lanes, tl.Lanes) {
		t.Errorf("%s: lanes %v, want %v", name, back.Lanes, tl.Lanes)
	}
	cores := shownCores(tl) // the idle ones are not written
	if len(back.Cores) != len(cores) {
		t.Fatalf("%s: %d cores, want %d", name, len(back.Cores), len(cores))
	}
	for i, c := range cores {
		b := back.Cores[i]
		for p := range c.Lanes {
			// Recorded slices derive names, text and arguments from packed
			// instructions, read-back ones from the file: compare those.
			want, got := sliceViews(tl, c.Lanes[p].Slices()), sliceViews(back, b.Lanes[p].Slices())
			if !reflect.DeepEqual(want, got) {
				t.Errorf("%s: core %d pipe %v slices differ (%d vs %d)", name, c.ID, isa.Pipe(p), c.Lanes[p].Len(), b.Lanes[p].Len())
			}
			if c.Totals(p) != b.Totals(p) {
				t.Errorf("%s: totals differ", name)
			}
		}
		if !reflect.DeepEqual(c.Flows, b.Flows) {
			t.Errorf("%s: core %d flows differ", name, c.ID)
		}
		if !reflect.DeepEqual(occByName(tl, c), occByName(back, b)) {
			t.Errorf("%s: core %d occupancy differs", name, c.ID)
		}
	}
	if !reflect.DeepEqual(tl.Bandwidth, back.Bandwidth) {
		t.Errorf("%s: bandwidth differs", name)
	}
	if !reflect.DeepEqual(tl.Host, back.Host) {
		t.Errorf("%s: host tasks differ", name)
	}
	if !reflect.DeepEqual(tl.Power, back.Power) {
		t.Errorf("%s: power counter differs (%d samples, want %d)", name, len(back.Power), len(tl.Power))
	}
	if !reflect.DeepEqual(tl.Kernels, back.Kernels) {
		t.Errorf("%s: kernels differ:\n%v\nwant\n%v", name, back.Kernels, tl.Kernels)
	}
}

// shownCores returns the cores of tl that a trace of it holds: all but
// traces.IdleCores.
func shownCores(tl *traces.Timeline) []*traces.CoreTimeline {
	idle := map[int]bool{}
	for _, id := range traces.IdleCores(tl) {
		idle[id] = true
	}
	var out []*traces.CoreTimeline
	for _, c := range tl.Cores {
		if !idle[c.ID] {
			out = append(out, c)
		}
	}
	return out
}

// TestPerfettoFormat checks the Chrome trace event format as the viewers
// read it: phases, µs times, names, flow bind points in pairs, metadata.
func TestPerfettoFormat(t *testing.T) {
	tl := recordHGEMM(t, traces.Window{})
	var buf bytes.Buffer
	if err := traces.WritePerfetto(&buf, tl); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		TraceEvents []map[string]any `json:"traceEvents"`
		OtherData   map[string]any   `json:"otherData"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("not valid JSON: %v", err)
	}
	phases := map[string]int{}
	outs, ins := map[float64]int{}, map[float64]int{}
	threads := map[string]bool{}
	for _, ev := range doc.TraceEvents {
		ph, _ := ev["ph"].(string)
		phases[ph]++
		switch ph {
		case "X":
			ts, ok1 := ev["ts"].(float64)
			dur, ok2 := ev["dur"].(float64)
			if !ok1 || !ok2 || dur < 0 || ts < 0 || ev["name"] == "" {
				t.Fatalf("bad X event %v", ev)
			}
			if id, ok := ev["bind_id"].(float64); ok {
				if ev["flow_out"] == true {
					outs[id]++
				} else if ev["flow_in"] == true {
					ins[id]++
				} else {
					t.Fatalf("bind_id without direction: %v", ev)
				}
			}
		case "M":
			if ev["name"] == "thread_name" {
				threads[ev["args"].(map[string]any)["name"].(string)] = true
			}
		case "C":
			if _, ok := ev["args"].(map[string]any); !ok {
				t.Fatalf("counter without args: %v", ev)
			}
		}
	}
	for _, ph := range []string{"X", "M", "C"} {
		if phases[ph] == 0 {
			t.Errorf("no %q events", ph)
		}
	}
	if len(outs) == 0 || !reflect.DeepEqual(outs, ins) {
		t.Errorf("flow ends do not pair: %d out, %d in", len(outs), len(ins))
	}
	for id, n := range outs {
		if n != 1 {
			t.Errorf("bind id %v used %d times", id, n)
		}
	}
	for p := isa.Pipe(0); p < isa.NumPipes; p++ {
		if !threads[p.String()] {
			t.Errorf("no track for pipe %v", p)
		}
	}
	if doc.OtherData["generator"] != "davinci-sim" {
		t.Errorf("otherData %v", doc.OtherData)
	}
	// Deterministic output.
	var again bytes.Buffer
	if err := traces.WritePerfetto(&again, recordHGEMM(t, traces.Window{})); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), again.Bytes()) {
		t.Error("two identical runs wrote different traces")
	}
}

// TestWindowKeepsLess: a window and a core filter keep a subset, and every
// slice lies inside the window.
func TestWindowKeepsLess(t *testing.T) {
	full := recordHGEMM(t, traces.Window{})
	mid := full.To / 2
	part := recordHGEMM(t, traces.Window{Cores: map[int]bool{0: true}, From: mid / 2, To: mid})
	n := func(tl *traces.Timeline) (k int) {
		for _, c := range tl.Cores {
			for _, l := range c.Lanes {
				k += l.Len()
			}
		}
		return k
	}
	if len(part.Cores) != 1 || n(part) == 0 || n(part) >= n(full) {
		t.Fatalf("window kept %d of %d slices on %d cores", n(part), n(full), len(part.Cores))
	}
	for _, l := range part.Cores[0].Lanes {
		for _, s := range l.Slices() {
			if s.From < mid/2 || s.To > mid {
				t.Fatalf("slice %v..%v outside the window", s.From, s.To)
			}
		}
	}
}

func TestReadTraceErrors(t *testing.T) {
	for _, in := range []string{"", "nonsense", `{"traceEvents": 5}`, `[{"ph":"X","pid":0,"tid":1,"ts":"x"}]`,
		`[{"ph":"X","pid":0,"tid":1,"ts":1,"dur":-1}]`, `{"traceEvents":[{"ph":"X"`,
		`[{"ph":"X","pid":0,"tid":1,"ts":1,"dur":1,"args":{"bytes":1e400}}]`, `[{"ph":"X","pid":0,"tid":1,"ts":1,"dur":1,"args":{"bytes":-5}}]`,
		`[{"ph":"C","pid":0,"name":"L1","ts":1,"args":{"bytes":"x"}}]`} {
		if _, err := traces.ReadTrace(strings.NewReader(in)); err == nil {
			t.Errorf("ReadTrace(%q): want an error", in)
		}
	}
	// Foreign events are skipped (other phases, no thread, other
	// processes), bare arrays accepted. (A thread past the reader's lanes
	// is an error: TestTooManyThreadsRefused.)
	tl, err := traces.ReadTrace(strings.NewReader(`[{"ph":"X","pid":3,"tid":4,"ts":1.5,"dur":2,"name":"m.mmad","cat":"mmad"},{"ph":"B","pid":1,"tid":1,"ts":0},{"ph":"X","pid":0,"tid":0,"ts":0,"dur":1},{"ph":"X","pid":-1,"tid":1,"ts":0,"dur":1}]`))
	if err != nil || len(tl.Cores) != 1 || tl.Cores[0].ID != 3 || tl.Cores[0].Lanes[isa.M].Len() != 1 {
		t.Fatalf("got %+v, %v", tl, err)
	}
	if s := tl.Cores[0].Lanes[isa.M].At(0); s.From != 1500000 || s.To != 3500000 || s.Class != traces.ClassMmad {
		t.Errorf("slice %+v", s)
	}
	if _, err := traces.ReadTraceFile(filepath.Join(t.TempDir(), "missing.json")); !os.IsNotExist(err) {
		t.Errorf("missing file: %v", err)
	}
	// A trace followed by anything, a truncated gzip stream (it looped
	// forever) and one whose checksum is wrong are errors, within a
	// second.
	good := `{"traceEvents":[{"ph":"X","pid":3,"tid":4,"ts":1.5,"dur":2,"name":"m.mmad","cat":"mmad"}]}`
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(good + strings.Repeat(" ", 5000)))
	zw.Close()
	z := gz.Bytes()
	crc := slices.Clone(z)
	crc[len(crc)-6] ^= 0xff
	for name, in := range map[string]string{"twice": good + good, "garbage after": good + " x", "truncated gzip": string(z[:len(z)/2]),
		"gzip header alone": string(z[:10]), "gzip checksum": string(crc)} {
		done := make(chan error, 1)
		go func() { _, err := traces.ReadTrace(strings.NewReader(in)); done <- err }()
		select {
		case err := <-done:
			if err == nil {
				t.Errorf("%s: want an error", name)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: still reading after 10 s", name)
		}
	}
	if _, err := traces.ReadTrace(bytes.NewReader(z)); err != nil {
		t.Errorf("the gzip trace: %v", err)
	}
}

// TestLimitDropsOldEvents: a memory-limited recorder keeps everything from
// Timeline.Dropped on (as the unlimited one records it), drops older
// events and stays near its limit; stall totals still cover the whole run.
func TestLimitDropsOldEvents(t *testing.T) {
	f, opts := exampleProgram(t, "hgemm.yaml", "program.m=2048", "program.n=4096", "program.k=4096", "program.numerics=off", "machine.cores=1")
	record := func(limit int64) *traces.Timeline {
		rec := traces.NewRecorder(traces.Window{Cores: map[int]bool{0: true}})
		rec.SetLimit(limit)
		res, err := programs.Execute(f, opts, programs.RunHooks{Observer: rec})
		if err != nil {
			t.Fatal(err)
		}
		rec.Finish(res.Stats.Time)
		return rec.Timeline()
	}
	full := record(0)
	const limit = 2 << 20
	if full.LimitFootprint() < 2*limit || full.Dropped != 0 {
		t.Fatalf("the unlimited run holds %d bytes (dropped %v): too small for this test", full.LimitFootprint(), full.Dropped)
	}
	part := record(limit)
	if part.Dropped <= part.From || part.Dropped >= part.To || part.To != full.To {
		t.Fatalf("dropped before %v in %v..%v", part.Dropped, part.From, part.To)
	}
	if fp := part.LimitFootprint(); fp > limit+limit/2 {
		t.Errorf("limited timeline holds %d bytes, limit %d", fp, limit)
	}
	fc, pc := full.Cores[0], part.Cores[0]
	since := func(tl *traces.Timeline, ss []traces.Slice) []sliceView {
		var out []sliceView
		for _, v := range sliceViews(tl, ss) {
			if v.From >= part.Dropped {
				out = append(out, v)
			}
		}
		return out
	}
	dropped, kept := false, 0
	for p := range fc.Lanes {
		want, got := since(full, fc.Lanes[p].Slices()), since(part, pc.Lanes[p].Slices())
		kept += len(got)
		if !reflect.DeepEqual(want, got) {
			t.Errorf("pipe %v: %d slices from %v on, want %d", isa.Pipe(p), len(got), part.Dropped, len(want))
		}
		dropped = dropped || pc.Lanes[p].Len() < fc.Lanes[p].Len()
		if fc.Totals(p) != pc.Totals(p) {
			t.Errorf("pipe %v: totals differ", isa.Pipe(p))
		}
	}
	if !dropped || kept == 0 {
		t.Errorf("dropped %v, kept %d slices", dropped, kept)
	}
	if n := len(pc.Flows); n == 0 || n >= len(fc.Flows) || !reflect.DeepEqual(pc.Flows, fc.Flows[len(fc.Flows)-n:]) || pc.Flows[0].Wait < part.Dropped {
		t.Errorf("flows: kept %d of %d", n, len(fc.Flows))
	}
}

// TestConcurrentRead: readers see a consistent, growing timeline while the
// engine records (run with -race), and the result equals a recording
// nobody read.
func TestConcurrentRead(t *testing.T) {
	want := recordHGEMM(t, traces.Window{})
	f, opts := hgemm256(t)
	rec := traces.NewRecorder(traces.Window{})
	done := make(chan error, 1)
	go func() {
		res, err := programs.Execute(f, opts, programs.RunHooks{Observer: rec})
		if err == nil {
			rec.Finish(res.Stats.Time)
		}
		done <- err
	}()
	last, reads := 0, 0
	for finished := false; !finished; reads++ {
		rec.Read(func(tl *traces.Timeline) {
			n := 0
			for _, c := range tl.Cores {
				for p := range c.Lanes {
					l := &c.Lanes[p]
					for i := 1; i < l.Len(); i++ {
						if l.At(i).From < l.At(i-1).From {
							t.Fatalf("core %d pipe %v: slices out of order while live", c.ID, isa.Pipe(p))
						}
					}
					n += l.Len()
				}
			}
			if n < last {
				t.Fatalf("timeline shrank from %d to %d slices", last, n)
			}
			last, finished = n, tl.Done
		})
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	got := rec.Timeline()
	if len(got.Cores) != len(want.Cores) {
		t.Fatalf("%d cores, want %d", len(got.Cores), len(want.Cores))
	}
	for i, c := range want.Cores {
		for p := range c.Lanes {
			if !reflect.DeepEqual(sliceViews(want, c.Lanes[p].Slices()), sliceViews(got, got.Cores[i].Lane(p).Slices())) {
				t.Fatalf("core %d pipe %v differs from an unread recording", c.ID, isa.Pipe(p))
			}
		}
		if !reflect.DeepEqual(c.Flows, got.Cores[i].Flows) {
			t.Fatalf("core %d flows differ", c.ID)
		}
	}
	t.Logf("%d reads during the run", reads)
}

// TestNoFlagMarks: a recorder with flag marks off keeps every other slice of
// the full recording, with the same totals, and no flag marks or flows.
func TestNoFlagMarks(t *testing.T) {
	full := recordHGEMM(t, traces.Window{})
	f, opts := hgemm256(t)
	rec := traces.NewRecorder(traces.Window{})
	rec.SetFlagMarks(false)
	res, err := programs.Execute(f, opts, programs.RunHooks{Observer: rec})
	if err != nil {
		t.Fatal(err)
	}
	rec.Finish(res.Stats.Time)
	tl := rec.Timeline()
	if len(tl.Cores) != len(full.Cores) || tl.To != full.To {
		t.Fatalf("%d cores to %v, want %d to %v", len(tl.Cores), tl.To, len(full.Cores), full.To)
	}
	marks := 0
	for i, c := range tl.Cores {
		fc := full.Cores[i]
		if len(c.Flows) != 0 {
			t.Errorf("core %d: %d flows", c.ID, len(c.Flows))
		}
		for p := range c.Lanes {
			var want []traces.Slice
			for _, s := range fc.Lanes[p].Slices() {
				if s.Class == traces.ClassFlag {
					marks++
					continue
				}
				want = append(want, s)
			}
			got := c.Lanes[p].Slices()
			if !reflect.DeepEqual(sliceViews(tl, got), sliceViews(full, want)) {
				t.Errorf("core %d pipe %v: %d slices differ from the %d non-flag slices of the full recording", c.ID, isa.Pipe(p), len(got), len(want))
			}
			if c.Totals(p) != fc.Totals(p) {
				t.Errorf("core %d pipe %v: totals %v, want %v", c.ID, isa.Pipe(p), c.Totals(p), fc.Totals(p))
			}
		}
	}
	if marks == 0 {
		t.Fatal("the full recording has no flag marks")
	}
}

// occByName returns a core's occupancy samples by buffer name.
func occByName(tl *traces.Timeline, c *traces.CoreTimeline) map[string][]traces.Sample {
	out := map[string][]traces.Sample{}
	for b, ss := range c.Occ {
		if len(ss) > 0 {
			out[tl.BufferName(b)] = ss
		}
	}
	return out
}

// capacities returns a timeline's known buffer capacities by name.
func capacities(tl *traces.Timeline) map[string]int64 {
	out := map[string]int64{}
	for b, name := range tl.Buffers {
		if c := tl.BufferCapacity(b); c > 0 {
			out[name] = c
		}
	}
	return out
}

// roundTrip writes tl as file name (its extension picks the format) and
// reads it back.
func roundTrip(t *testing.T, name string, tl *traces.Timeline) *traces.Timeline {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := traces.WriteTraceFile(path, tl); err != nil {
		t.Fatal(err)
	}
	back, err := traces.ReadTraceFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return back
}

// A GPU lane that starts several instructions as one — a stage's copies
// started together (WithNext), a k-step's matrix instructions run back to
// back — records one slice labelled with the first, carrying the group's
// bytes and flops: summed over a lane's slices they are the run's, where the
// slices once carried the first instruction's alone.
func TestGroupSlicesCarryTheGroup(t *testing.T) {
	// (The library's 128×256 tile: its copies are issued in groups; the
	// smaller tile this small shape takes by default would not show it.)
	f, opts := exampleProgram(t, "a100-hgemm.yaml", "program.m=256", "program.n=128", "program.k=512", "program.numerics=off",
		"program.tiling.bm=128", "program.tiling.bn=256", "program.tiling.bk=64", "program.tiling.warps=8")
	tl, res := recordRun(t, f, opts, traces.Window{})
	lane := func(name string) int {
		for i, n := range tl.Lanes {
			if n == name {
				return i
			}
		}
		t.Fatalf("no lane %q in %v", name, tl.Lanes)
		return -1
	}
	copyLane, tensorLane := lane("copy"), lane("tensor")
	var bytes int64
	var flops float64
	groups := 0
	for _, c := range tl.Cores {
		for p, sum := range map[int]bool{copyLane: true, tensorLane: false} {
			if p >= len(c.Lanes) {
				continue
			}
			for _, s := range c.Lanes[p].Slices() {
				if s.Cause != arch.Busy {
					continue
				}
				b, fl := tl.Args(&s)
				if sum {
					bytes += b
				} else {
					flops += fl
				}
				if strings.Contains(tl.Text(&s), " (first of ") {
					groups++
				}
			}
		}
	}
	if groups == 0 {
		t.Error("no slice stands for a group: the test no longer covers one")
	}
	if bytes != res.Stats.GMReadBytes {
		t.Errorf("copy-lane slices carry %d bytes, the run read %d from GM", bytes, res.Stats.GMReadBytes)
	}
	want := 2.0 * 256 * 128 * 512
	if flops != want {
		t.Errorf("tensor-lane slices carry %g flops, want 2mnk = %g", flops, want)
	}
	// An issue slot carries no bytes or flops (the lane that runs the
	// instruction has them), so that they sum over a trace's slices once.
	var all float64
	issuedCopies := 0
	for _, c := range tl.Cores {
		for i := range c.Lanes {
			for _, s := range c.Lanes[i].Slices() {
				if s.Cause != arch.Busy {
					continue
				}
				b, fl := tl.Args(&s)
				all += fl
				if s.Class == traces.ClassIssue {
					if strings.HasPrefix(tl.Text(&s), "copy") {
						issuedCopies++
					}
					if b != 0 || fl != 0 {
						t.Errorf("issue slot %q carries %d bytes, %g flops", tl.Text(&s), b, fl)
					}
				}
			}
		}
	}
	if issuedCopies == 0 {
		t.Error("no issue slot of a copy: the test no longer covers them")
	}
	if all != want {
		t.Errorf("the slices of every lane carry %g flops, want 2mnk = %g", all, want)
	}
	// And so do the written trace's events.
	var buf strings.Builder
	if err := traces.WritePerfetto(&buf, tl); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		TraceEvents []struct {
			Ph   string         `json:"ph"`
			Cat  string         `json:"cat"`
			Args map[string]any `json:"args"`
		} `json:"traceEvents"`
	}
	if err := json.Unmarshal([]byte(buf.String()), &doc); err != nil {
		t.Fatal(err)
	}
	for _, ev := range doc.TraceEvents {
		if _, b := ev.Args["bytes"]; ev.Ph == "X" && ev.Cat == "issue" && (b || ev.Args["flops"] != nil) {
			t.Fatalf("a written issue slot carries bytes or flops: %v", ev.Args)
		}
	}
}

// A trace lists the cores that did something in its window: the cores of
// a 256³ hgemm without a tile, which only wait at the barrier for the
// others, are left out (as a GPU's SMs without a block) and named in
// otherData's idle_cores; a core stalled on anything else is kept.
func TestIdleCoresLeftOut(t *testing.T) {
	tl := recordHGEMM(t, traces.Window{})
	idle := traces.IdleCores(tl)
	if traces.FormatCores(idle) != "16-31" {
		t.Fatalf("idle cores %v, want 16-31 (no tile at 256³)", traces.FormatCores(idle))
	}
	doc := decodeTrace(t, writeJSON(t, tl))
	procs := map[int]bool{}
	for _, e := range doc.TraceEvents {
		if e.Pid < traces.GMPid {
			procs[e.Pid] = true
		}
	}
	if len(procs) != 16 || procs[16] {
		t.Errorf("the trace has %d core processes, want cores 0-15", len(procs))
	}
	if doc.OtherData["idle_cores"] != "16-31" {
		t.Errorf("otherData.idle_cores = %v", doc.OtherData["idle_cores"])
	}
	var pb bytes.Buffer
	if err := traces.WritePftrace(&pb, tl); err != nil {
		t.Fatal(err)
	}
	back, err := traces.ReadPftrace(&pb)
	if err != nil || len(back.Cores) != 16 {
		t.Errorf("the pftrace reads back %d cores (%v), want 16", len(back.Cores), err)
	} else if got := traces.FormatCores(back.Idle); got != "16-31" {
		t.Errorf("the pftrace reads back idle cores %q, want 16-31", got)
	}
	if back, err := traces.ReadTrace(bytes.NewReader(writeJSON(t, tl))); err != nil {
		t.Error(err)
	} else if got := traces.FormatCores(back.Idle); got != "16-31" {
		t.Errorf("the JSON trace reads back idle cores %q, want 16-31", got)
	} else if doc := decodeTrace(t, writeJSON(t, back)); doc.OtherData["idle_cores"] != "16-31" {
		t.Errorf("written again, the trace names idle cores %v, want 16-31", doc.OtherData["idle_cores"])
	}
	// A header naming idle cores past any machine's is refused, not
	// expanded into a map of millions.
	bad := `{"otherData":{"generator":"davinci-sim","idle_cores":"0-65536,65537-131073"},"traceEvents":[]}`
	if _, err := traces.ReadTrace(strings.NewReader(bad)); err == nil || !strings.Contains(err.Error(), "idle_cores: core list") {
		t.Errorf("idle_cores past 2^16: %v", err)
	}
	// Nor a list that repeats a large range (it took 16 s for 20000
	// repeats), and a core the trace has events of is not idle.
	bad = `{"otherData":{"generator":"davinci-sim","idle_cores":"` + strings.Repeat("0-65535,", 20000) + `0"},"traceEvents":[]}`
	if _, err := traces.ReadTrace(strings.NewReader(bad)); err == nil || !strings.Contains(err.Error(), "more than 1048576 cores listed") {
		t.Errorf("idle_cores repeating a range: %v", err)
	}
	some := `{"otherData":{"generator":"davinci-sim","idle_cores":"0-3"},"traceEvents":[{"ph":"X","pid":1,"tid":1,"ts":0,"dur":0.01,"name":"x"}]}`
	if back, err := traces.ReadTrace(strings.NewReader(some)); err != nil {
		t.Error(err)
	} else if got := traces.FormatCores(back.Idle); got != "0,2-3" {
		t.Errorf("idle_cores 0-3 beside core 1's events: %s, want 0,2-3", got)
	}
	r := traces.NewRecorder(traces.Window{})
	r.Interval(5, 0, arch.WaitFlag, 0, 100, nil, nil)
	r.Interval(6, 0, arch.Barrier, 0, 100, nil, nil)
	r.Interval(7, 1, arch.Bandwidth, 0, 50, nil, nil)
	r.Interval(7, 0, arch.Barrier, 50, 100, nil, nil)
	r.Finish(100)
	if got := traces.FormatCores(traces.IdleCores(r.Timeline())); got != "6" {
		t.Errorf("idle cores %q, want 6 (barrier waits only)", got)
	}
}
