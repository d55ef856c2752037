package traces_test

import (
	"strings"
	"testing"

	"github.com/davinci-sim/davinci-sim/machines"
	"github.com/davinci-sim/davinci-sim/sim"
	"github.com/davinci-sim/davinci-sim/traces"
)

// The machine's GM bandwidth (what the viewer's GM gauge is a share of)
// is in both formats' header and read back; a trace without it reads 0.
func TestGMBandwidthInHeader(t *testing.T) {
	m, err := machines.Load("ascend-910a", nil)
	if err != nil {
		t.Fatal(err)
	}
	rec := traces.NewRecorder(traces.Window{})
	rec.SetInfo(m.Name, "test", m.Geometry()) // (every recorder: the cluster drill-down's had none)
	rec.Finish(0)
	if got := rec.Timeline().GMBandwidth; got != 1.228e12 {
		t.Fatalf("recorder: GM bandwidth %g", got)
	}
	tl := recordHGEMM(t, traces.Window{})
	tl.GMBandwidth = 1.228e12
	for _, name := range []string{"t.json", "t.json.gz", "t.pftrace"} {
		if got := roundTrip(t, name, tl).GMBandwidth; got != 1.228e12 {
			t.Errorf("%s: GM bandwidth read back %g, want 1.228e12", name, got)
		}
	}
	tl.GMBandwidth = 0
	if got := roundTrip(t, "t.json", tl).GMBandwidth; got != 0 {
		t.Errorf("a trace without it: GM bandwidth %g", got)
	}
	bad := `{"otherData":{"generator":"davinci-sim","from_ps":0,"to_ps":10,"gm_bandwidth_bytes_per_s":-1},"traceEvents":[` +
		`{"ph":"X","pid":0,"tid":1,"ts":0,"dur":0.01,"name":"x"}]}`
	if _, err := traces.ReadTrace(strings.NewReader(bad)); err == nil || !strings.Contains(err.Error(), "gm_bandwidth_bytes_per_s") {
		t.Errorf("negative GM bandwidth: %v", err)
	}
}

// A window holding nothing of the run is [end, end] when written and when
// read back (the reader took only a non-empty span from the header, and the
// view showed the run's end instant as a window 0..end).
func TestEmptyWindowReadBack(t *testing.T) {
	tl := recordHGEMM(t, traces.Window{From: sim.Second, To: 2 * sim.Second})
	if tl.From != tl.To || tl.To == 0 || len(tl.Cores) != 0 {
		t.Fatalf("recorded: %v..%v, %d cores", tl.From, tl.To, len(tl.Cores))
	}
	for _, name := range []string{"t.json", "t.pftrace"} {
		back := roundTrip(t, name, tl)
		if back.From != tl.From || back.To != tl.To {
			t.Errorf("%s: read back %v..%v, want %v..%v", name, back.From, back.To, tl.From, tl.To)
		}
	}
}

// How a run that did not complete ended is in both formats' header and
// read back (the viewer said "(complete)" for a deadlocked run's trace).
func TestEndingInHeader(t *testing.T) {
	tl := recordHGEMM(t, traces.Window{})
	tl.Ending = "deadlock at 1.5µs"
	for _, name := range []string{"t.json", "t.json.gz", "t.pftrace"} {
		if got := roundTrip(t, name, tl).Ending; got != tl.Ending {
			t.Errorf("%s: ending read back %q, want %q", name, got, tl.Ending)
		}
	}
	tl.Ending = ""
	if got := roundTrip(t, "t.pftrace", tl).Ending; got != "" {
		t.Errorf("a run that completed: ending %q", got)
	}
}
