package traces

import (
	"bytes"
	"io"
	"runtime/metrics"
	"strings"
	"testing"

	"github.com/davinci-sim/davinci-sim/arch"
	"github.com/davinci-sim/davinci-sim/isa"
	"github.com/davinci-sim/davinci-sim/machines"
)

// heapAllocated is the bytes allocated on the heap so far (cumulative).
func heapAllocated() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// fuzzReadBound is what reading one fuzz input may allocate: the readers'
// lane limits bound what a small file's names make them allocate (256
// processes each naming thread 4095, 37 KB of JSON, take the 2^20 lanes
// the readers hold: 0.8 GB allocated, 0.3 GB in use).
const fuzzReadBound = 1 << 30

// checkRead is what every trace read must give: an error of one line, or
// a timeline that writes again in both formats; the read allocates at
// most fuzzReadBound.
func checkRead(t *testing.T, read func() (*Timeline, error)) {
	t.Helper()
	before := heapAllocated()
	tl, err := read()
	if n := heapAllocated() - before; n > fuzzReadBound {
		t.Fatalf("reading allocated %d MiB", n>>20)
	}
	if err != nil {
		if msg := err.Error(); msg == "" || strings.Contains(msg, "\n") {
			t.Fatalf("error not one line: %q", msg)
		}
		return
	}
	if tl == nil {
		t.Fatal("nil timeline without an error")
	}
	if err := WritePerfetto(io.Discard, tl); err != nil {
		t.Fatalf("a timeline read does not write as JSON: %v", err)
	}
	if err := WritePftrace(io.Discard, tl); err != nil {
		t.Fatalf("a timeline read does not write as a Perfetto trace: %v", err)
	}
}

// seedTimeline is a recorded chip timeline with what the writers write:
// two cores' lanes (busy and waits, flags, buffer occupancy), GM
// bandwidth, host tasks, power, and a kernels track whose last kernel
// never finished (a deadlocked run's).
func seedTimeline(tb testing.TB) *Timeline {
	m, err := machines.Load("ascend-910a", nil)
	if err != nil {
		tb.Fatal(err)
	}
	r := NewRecorder(Window{})
	r.SetInfo("ascend-910a", "hgemm", m.Geometry())
	r.StaticWatts(40)
	in := isa.Instr{Op: isa.OpScalar, Pipe: isa.S}
	for core := range 2 {
		r.Interval(core, 0, arch.Busy, 1500, 2700, &in, nil)
		r.Interval(core, 1, arch.WaitFlag, 0, 2000, nil, nil)
		r.Flag(core, 0, 1, 3, true, 2700)
		r.Flag(core, 0, 1, 3, false, 2700)
		r.Occupancy(core, 0, 4096, 100)
	}
	r.Bandwidth(10, 1e9)
	r.Energy(500, 1e6)
	r.HostTask("transfer", "h2d", 0, 1234)
	r.SetKernels([]arch.GridTimes{
		{Name: "split", CTAs: 4, Launched: 0, Started: 5, Finished: 1000},
		{Name: "gemm", CTAs: 8, Launched: 1000, Started: 1100}, // deadlocked
	})
	r.Finish(3000)
	return r.Timeline()
}

// FuzzReadTrace feeds arbitrary bytes to the trace reader (the input of
// `davinci-sim view`): an error of one line or a timeline that writes
// again, never a panic, a hang or a huge allocation. Seeds: a chip trace
// with kernels and power, a cluster trace with a drill-down, the gzip of
// one, hand-made edge cases.
func FuzzReadTrace(f *testing.F) {
	for _, seed := range readTraceSeeds(f) {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkRead(t, func() (*Timeline, error) { return ReadTrace(bytes.NewReader(data)) })
	})
}

// FuzzReadPftrace feeds arbitrary bytes to the protobuf trace reader: an
// error of one line or a timeline that writes again, never a panic, a
// hang or a huge allocation. Seeds: the trace of a few hand-fed events,
// and of a chip timeline with kernels (one deadlocked) and power.
func FuzzReadPftrace(f *testing.F) {
	r := NewRecorder(Window{})
	in := isa.Instr{Op: isa.OpScalar, Pipe: isa.S}
	r.Interval(0, 0, arch.Busy, 1500, 2700, &in, nil)
	r.Interval(0, 1, arch.WaitFlag, 0, 2000, nil, nil)
	r.Flag(0, 0, 1, 3, true, 2700)
	r.Flag(0, 0, 1, 3, false, 2700)
	r.Occupancy(0, 0, 4096, 100)
	r.Bandwidth(10, 1e9)
	r.HostTask("transfer", "h2d", 0, 1234)
	r.Finish(3000)
	for _, tl := range []*Timeline{r.Timeline(), seedTimeline(f)} {
		var buf bytes.Buffer
		if err := WritePftrace(&buf, tl); err != nil {
			f.Fatal(err)
		}
		f.Add(buf.Bytes())
	}
	f.Add([]byte{0x0a, 0x02, 0x50, 0x01})
	f.Fuzz(func(t *testing.T, data []byte) {
		checkRead(t, func() (*Timeline, error) { return ReadPftrace(bytes.NewReader(data)) })
	})
}
