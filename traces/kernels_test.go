package traces_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/davinci-sim/davinci-sim/arch"
	"github.com/davinci-sim/davinci-sim/arch/gpu"
	"github.com/davinci-sim/davinci-sim/fp"
	"github.com/davinci-sim/davinci-sim/isa"
	"github.com/davinci-sim/davinci-sim/machines"
	"github.com/davinci-sim/davinci-sim/sim"
	"github.com/davinci-sim/davinci-sim/traces"
)

// traceDoc is a JSON trace as decoded for the tests below.
type traceDoc struct {
	OtherData   map[string]any `json:"otherData"`
	TraceEvents []traceEvent   `json:"traceEvents"`
}

type traceEvent struct {
	Ph, Name, Cat string
	Pid, Tid      int
	Ts, Dur       json.Number
	ID            *int   `json:"id"`
	BindID        uint64 `json:"bind_id"`
	FlowOut       bool   `json:"flow_out"`
	FlowIn        bool   `json:"flow_in"`
	Args          map[string]any
}

func decodeTrace(t *testing.T, b []byte) traceDoc {
	t.Helper()
	var doc traceDoc
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("not a JSON trace: %v", err)
	}
	return doc
}

func writeJSON(t *testing.T, tl *traces.Timeline) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := traces.WritePerfetto(&buf, tl); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// micros parses a JSON time (µs) into picoseconds.
func micros(t *testing.T, n json.Number) sim.Time {
	t.Helper()
	v, err := traces.ParseTime(string(n) + "us")
	if n == "" || err != nil {
		t.Fatalf("bad time %q: %v", n, err)
	}
	return v
}

// ozaki256 records the B200 Ozaki run of the audit (256³: seven kernels,
// CTA pairs).
func ozaki256(t *testing.T) (*traces.Timeline, []traces.Kernel) {
	t.Helper()
	f, opts := exampleProgram(t, "b200-ozaki.yaml", "program.m=256", "program.n=256", "program.k=256", "program.numerics=off", "program.tiling.cta_group=2")
	tl, res := recordRun(t, f, opts, traces.Window{})
	var want []traces.Kernel
	ps := func(s float64) sim.Time { return sim.Time(math.Round(s * 1e12)) }
	for _, k := range res.Report.Kernels {
		want = append(want, traces.Kernel{Name: k.Name, Blocks: k.Blocks, Launched: ps(k.Launched), Started: ps(k.Started), Finished: ps(k.Finished)})
	}
	if len(want) != 7 {
		t.Fatalf("the report lists %d kernels, want ozaki's 7", len(want))
	}
	return tl, want
}

// A GPU run's trace has a kernels track: a process "kernels" above the
// others with one slice per kernel launch, from its launch to its last
// block's end, named by the kernel (args: blocks, launch_us), holding a
// "launch" slice over the launch latency — the report's kernels section,
// in both formats.
func TestKernelTrack(t *testing.T) {
	tl, want := ozaki256(t)
	if len(tl.Kernels) != len(want) {
		t.Fatalf("recorded %d kernels, want %d", len(tl.Kernels), len(want))
	}
	for i, k := range tl.Kernels {
		w := want[i]
		if k.Name != w.Name || k.Blocks != w.Blocks || absDiff(k.Launched, w.Launched) > 1 || absDiff(k.Started, w.Started) > 1 || absDiff(k.Finished, w.Finished) > 1 {
			t.Errorf("kernel %d: %+v, the report says %+v", i, k, w)
		}
	}
	doc := decodeTrace(t, writeJSON(t, tl))
	sort := map[int]float64{}
	var kernels, launches []traceEvent
	for _, e := range doc.TraceEvents {
		switch {
		case e.Ph == "M" && e.Name == "process_sort_index":
			v, _ := e.Args["sort_index"].(json.Number).Float64()
			sort[e.Pid] = v
		case e.Ph == "X" && e.Pid == traces.KernelsPid && e.Cat == "kernel":
			kernels = append(kernels, e)
		case e.Ph == "X" && e.Pid == traces.KernelsPid && e.Cat == "launch":
			launches = append(launches, e)
		}
	}
	for pid, v := range sort {
		if pid != traces.KernelsPid && v <= sort[traces.KernelsPid] {
			t.Errorf("process %d sorts at %v, not below the kernels (%v)", pid, v, sort[traces.KernelsPid])
		}
	}
	if len(kernels) != len(want) || len(launches) != len(want) {
		t.Fatalf("%d kernel slices and %d launch slices, want %d each", len(kernels), len(launches), len(want))
	}
	for i, e := range kernels {
		k := tl.Kernels[i]
		blocks, _ := e.Args["blocks"].(json.Number).Int64()
		launch := micros(t, e.Args["launch_us"].(json.Number))
		if e.Name != k.Name || int(blocks) != k.Blocks || launch != k.Started-k.Launched ||
			micros(t, e.Ts) != k.Launched || micros(t, e.Dur) != k.Finished-k.Launched {
			t.Errorf("kernel slice %d: %+v, want %+v", i, e, k)
		}
		if l := launches[i]; micros(t, l.Ts) != k.Launched || micros(t, l.Dur) != k.Started-k.Launched {
			t.Errorf("launch slice %d: %+v, want %v..%v", i, l, k.Launched, k.Started)
		}
	}
	for _, name := range []string{"t.json", "t.json.gz", "t.pftrace"} {
		sameTimeline(t, name, tl, roundTrip(t, name, tl))
	}
	testPftraceMatchesJSON(t, tl)
}

func absDiff(a, b sim.Time) sim.Time {
	if a > b {
		return a - b
	}
	return b - a
}

// The kernels a recorder keeps are those of its window, clipped to it —
// but for their launch latency, which the trace states as the run had it
// (launch_us); a kernel that did not finish (a deadlocked run's) lasts to
// the end of the recording, marked deadlocked, unless it launched after
// the window; launches that overlap go on further rows, and every format
// reads them back.
func TestKernelsWindowAndRows(t *testing.T) {
	r := traces.NewRecorder(traces.Window{From: 10, To: 100})
	r.SetKernels([]arch.GridTimes{
		{Name: "a", CTAs: 1, Launched: 0, Started: 5, Finished: 20},
		{Name: "b", CTAs: 2, Launched: 20, Started: 30, Finished: 60},
		{Name: "c", CTAs: 3, Launched: 25, Started: 25, Finished: 40},   // overlaps b: a second row
		{Name: "d", CTAs: 4, Launched: 60, Started: 120, Finished: 150}, // past the window's end
		{Name: "e", CTAs: 5, Launched: 150, Started: 160, Finished: 170},
		{Name: "f", CTAs: 6, Launched: 60, Started: 70}, // never finished (deadlocked)
		{Name: "g", CTAs: 7, Launched: 120},             // never finished, past the window's end
		{Name: "h", CTAs: 8, Launched: 5},               // never started: launching from 5 to the end
	})
	r.Finish(200)
	tl := r.Timeline()
	want := []traces.Kernel{
		{Name: "a", Blocks: 1, Launched: 10, Started: 10, Finished: 20, Latency: 5},
		{Name: "h", Blocks: 8, Launched: 10, Started: 100, Finished: 100, Deadlocked: true, Latency: 95},
		{Name: "b", Blocks: 2, Launched: 20, Started: 30, Finished: 60},
		{Name: "c", Blocks: 3, Launched: 25, Started: 25, Finished: 40},
		{Name: "d", Blocks: 4, Launched: 60, Started: 100, Finished: 100, Latency: 60},
		{Name: "f", Blocks: 6, Launched: 60, Started: 70, Finished: 100, Deadlocked: true},
	}
	if !reflect.DeepEqual(tl.Kernels, want) {
		t.Fatalf("kernels %+v\nwant %+v", tl.Kernels, want)
	}
	doc := decodeTrace(t, writeJSON(t, tl))
	latency := map[string]sim.Time{"a": 5, "b": 10, "c": 0, "d": 60, "f": 10, "h": 95} // the run's, uncut
	for _, e := range doc.TraceEvents {
		if e.Ph == "X" && e.Cat == "kernel" {
			if got := micros(t, e.Args["launch_us"].(json.Number)); got != latency[e.Name] {
				t.Errorf("kernel %s: launch_us %v, want the run's latency %v", e.Name, got, latency[e.Name])
			}
		}
	}
	rows := map[int]string{}
	ends := map[int]sim.Time{}
	for _, e := range doc.TraceEvents {
		if e.Ph == "M" && e.Name == "thread_name" && e.Pid == traces.KernelsPid {
			rows[e.Tid] = e.Args["name"].(string)
		}
		if e.Ph == "X" && e.Cat == "kernel" {
			if from := micros(t, e.Ts); from < ends[e.Tid] {
				t.Errorf("kernel %s overlaps the one before it on its row", e.Name)
			}
			ends[e.Tid] = micros(t, e.Ts) + micros(t, e.Dur)
		}
	}
	if !reflect.DeepEqual(rows, map[int]string{1: "kernels", 2: "kernels 2", 3: "kernels 3"}) {
		t.Errorf("kernel rows %v", rows)
	}
	for _, name := range []string{"t.json", "t.pftrace"} {
		sameTimeline(t, name, tl, roundTrip(t, name, tl))
	}
}

// bigNumber is a run of digits of an internal encoding (2^40 and beyond).
var bigNumber = regexp.MustCompile(`\d{13,}`)

// A CTA pair's MMA names its B operand by offset, with the split between
// the pair's shared memories, not by the encoded address the core model
// uses (gpu.PairOperand).
func TestPairOperandText(t *testing.T) {
	m, err := machines.Load("b200", nil)
	if err != nil {
		t.Fatal(err)
	}
	r := traces.NewRecorder(traces.Window{})
	r.SetInfo(m.Name, "test", m.Geometry())
	in := gpu.MMAShared(0, 0, 128, gpu.PairOperand(18432, 128), 256, 128, 128, 256, fp.INT8, fp.INT32, false)
	in.Dst.Buf = gpu.BufAcc
	plain := gpu.MMAShared(0, 4096, 128, 36864, 256, 128, 128, 256, fp.INT8, fp.INT32, true)
	r.Interval(0, gpu.LaneMatrix, arch.Busy, 0, 1000, &in, nil)
	r.Interval(0, gpu.LaneMatrix, arch.Busy, 1000, 2000, &plain, nil)
	r.Finish(2000)
	tl := r.Timeline()
	ss := tl.Cores[0].Lane(gpu.LaneMatrix).Slices()
	if len(ss) != 2 {
		t.Fatalf("%d slices", len(ss))
	}
	if got := tl.Text(&ss[0]); !strings.Contains(got, " b=18432 pair_cols=128 m=128 ") || bigNumber.MatchString(got) {
		t.Errorf("pair MMA text %q: want b=18432 pair_cols=128", got)
	}
	if got := tl.Text(&ss[1]); !strings.Contains(got, " a=4096 b=36864 m=128 ") || strings.Contains(got, "pair") {
		t.Errorf("plain MMA text %q", got)
	}
	js := string(writeJSON(t, tl))
	events := js[strings.Index(js, `"traceEvents"`):] // (the header holds the GM bandwidth, 7.7e12 B/s)
	if !strings.Contains(events, "b=18432 pair_cols=128") || bigNumber.MatchString(events) {
		t.Errorf("the JSON trace does not show the pair operand decoded")
	}
	// The audit's run: no instruction of the B200 Ozaki trace shows an
	// encoded address.
	oz, _ := ozaki256(t)
	pairs := 0
	for _, c := range oz.Cores {
		for p := range c.Lanes {
			for _, s := range c.Lanes[p].Scan(0) {
				text := oz.Text(&s)
				if bigNumber.MatchString(text) {
					t.Fatalf("core %d: %q", c.ID, text)
				}
				if strings.Contains(text, "pair_cols=") {
					pairs++
				}
			}
		}
	}
	if pairs == 0 {
		t.Error("the Ozaki run shows no CTA pair's MMA")
	}
}

// deadlockGrids is a GPU program of three kernels on one SM: "first"
// copies and finishes, "stuck" copies and then waits for a flag nobody
// sets (the run deadlocks in it), "never" is not launched.
func deadlockGrids() isa.Program {
	res := isa.Resources{SharedBytes: 16 << 10, Registers: 8 << 10, Warps: 4}
	grid := func(name string, ins ...isa.Instr) isa.Grid {
		return isa.Grid{Name: name, CTAs: 2, CTA: func(int) isa.Stream { return isa.Slice(ins) }, Resources: res}
	}
	cp := gpu.CopyToShared(0, 1<<20, 64, 256, 256, 256)
	return isa.Program{Name: "dead", Grids: []isa.Grid{
		grid("first", cp),
		grid("stuck", cp, isa.WaitFlag(gpu.LaneCopy, gpu.LaneVector, 5)),
		grid("never", cp),
	}}
}

// A GPU run that deadlocks still has its kernels track: the kernels that
// finished as in a completed run, and the one it deadlocked in from its
// launch to the deadlock (the trace's end), marked deadlocked (arg
// "deadlocked": true); the kernels after it, never launched, are not
// there. Both formats carry it and read it back. (The deadlocked run's
// trace had no kernels process at all: only a completed run handed the
// recorder its grid times.)
func TestDeadlockedKernelTrack(t *testing.T) {
	m, err := machines.Load("a100", nil)
	if err != nil {
		t.Fatal(err)
	}
	r := traces.NewRecorder(traces.Window{})
	chip, err := arch.NewChip(m, arch.Options{Mode: arch.Timing, Observer: r})
	if err != nil {
		t.Fatal(err)
	}
	st, err := chip.Run(deadlockGrids())
	var dl *sim.DeadlockError
	if !errors.As(err, &dl) || st == nil {
		t.Fatalf("the run did not deadlock: %v", err)
	}
	r.SetInfo(m.Name, "test", m.Geometry())
	r.Finish(st.Time)
	tl := r.Timeline()
	gt := chip.GridTimes()
	if len(tl.Kernels) != 2 {
		t.Fatalf("kernels %+v, want first and stuck", tl.Kernels)
	}
	first, stuck := tl.Kernels[0], tl.Kernels[1]
	if want := (traces.Kernel{Name: "first", Blocks: 2, Launched: gt[0].Launched, Started: gt[0].Started, Finished: gt[0].Finished}); first != want {
		t.Errorf("first kernel %+v, want %+v", first, want)
	}
	if want := (traces.Kernel{Name: "stuck", Blocks: 2, Launched: gt[1].Launched, Started: gt[1].Started, Finished: st.Time, Deadlocked: true}); stuck != want || stuck.Launched < first.Finished || stuck.Started <= stuck.Launched || tl.To != st.Time {
		t.Errorf("deadlocked kernel %+v, want %+v (the trace ends at %v)", stuck, want, tl.To)
	}
	doc := decodeTrace(t, writeJSON(t, tl))
	var slices []traceEvent
	for _, e := range doc.TraceEvents {
		if e.Ph == "X" && e.Pid == traces.KernelsPid && e.Cat == "kernel" {
			slices = append(slices, e)
		}
	}
	if len(slices) != 2 {
		t.Fatalf("%d kernel slices in the JSON trace, want 2", len(slices))
	}
	if _, ok := slices[0].Args["deadlocked"]; ok || slices[1].Args["deadlocked"] != true {
		t.Errorf("deadlocked args %v and %v, want none and true", slices[0].Args["deadlocked"], slices[1].Args["deadlocked"])
	}
	if s := slices[1]; s.Name != "stuck" || micros(t, s.Ts)+micros(t, s.Dur) != st.Time {
		t.Errorf("the deadlocked kernel's slice %+v does not end at the deadlock (%v)", s, st.Time)
	}
	for _, name := range []string{"t.json", "t.json.gz", "t.pftrace"} {
		sameTimeline(t, name, tl, roundTrip(t, name, tl))
	}
}
