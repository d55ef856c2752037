package traces

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/davinci-sim/davinci-sim/arch"
	"github.com/davinci-sim/davinci-sim/isa"
	"github.com/davinci-sim/davinci-sim/sim"
)

// sameRead checks that reading the JSON trace data with fastEvents gives
// what decoding every event with encoding/json gives (the reader before
// fastEvents): the same timeline, cores skipped and error.
func sameRead(t testing.TB, data []byte, lim ReadLimits) {
	t.Helper()
	want, wskip, werr := readJSONTrace(bytes.NewReader(data), lim, false)
	got, gskip, gerr := readJSONTrace(bytes.NewReader(data), lim, true)
	if fmt.Sprint(gerr) != fmt.Sprint(werr) {
		t.Fatalf("%s\nerror %v\nwant  %v", clipInput(data), gerr, werr)
	}
	if !slices.Equal(gskip, wskip) {
		t.Fatalf("%s\nskipped %v, want %v", clipInput(data), gskip, wskip)
	}
	if !reflect.DeepEqual(got, want) {
		var g, w bytes.Buffer
		if got != nil && want != nil {
			WritePerfetto(&g, got)
			WritePerfetto(&w, want)
		}
		t.Fatalf("%s\ntimelines differ (written alike: %v)", clipInput(data), bytes.Equal(g.Bytes(), w.Bytes()))
	}
}

// clipInput shows the start of a test input.
func clipInput(data []byte) string {
	if len(data) > 300 {
		return fmt.Sprintf("input %q… (%d bytes)", data[:300], len(data))
	}
	return fmt.Sprintf("input %q", data)
}

// gzipped returns the gzip of data.
func gzipped(data []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(data)
	zw.Close()
	return buf.Bytes()
}

// jsonOf returns tl written as a JSON trace.
func jsonOf(t testing.TB, tl *Timeline) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := WritePerfetto(&buf, tl); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// readTraceSeeds are FuzzReadTrace's seeds (and FuzzReadTraceFast's): a
// chip trace with kernels and power, a cluster trace with a drill-down,
// the gzip of one, hand-made edge cases.
func readTraceSeeds(tb testing.TB) [][]byte {
	seeds := [][]byte{
		[]byte(`{"traceEvents":[{"name":"process_name","ph":"M","pid":1,"args":{"name":"core 0"}},{"name":"thread_name","ph":"M","pid":1,"tid":2,"args":{"name":"MTE2"}},{"name":"mte2.copy","cat":"busy","ph":"X","pid":1,"tid":2,"ts":0.001,"dur":0.5,"args":{"bytes":64}},{"name":"set_flag","ph":"i","pid":1,"tid":2,"ts":0.5,"bind_id":1,"flow_out":true},{"name":"L1","ph":"C","pid":1,"ts":0,"args":{"bytes":1024}}]}`),
		[]byte(`{"traceEvents":[{"ph":"X","pid":1,"tid":1,"ts":-5,"dur":1e300}]}`),
		[]byte(`[{"ph":"X"}]`),
		[]byte("\x1f\x8b\x08\x00"),
		[]byte(`{"traceEvents":[`),
		[]byte(`{"traceEvents":[{"name":"thread_name","ph":"M","pid":7,"tid":4095,"args":{"name":"x"}},{"name":"thread_name","ph":"M","pid":8,"tid":4096,"args":{"name":"y"}}]}`),
		[]byte(`{"otherData":{"generator":"davinci-sim","idle_cores":"3-5,9","from_ps":0,"to_ps":100},"traceEvents":[{"ph":"X","pid":1,"tid":1,"ts":0,"dur":0.01}]}`),
	}
	chip := jsonOf(tb, seedTimeline(tb))
	seeds = append(seeds, chip, gzipped(chip))
	ct := &ClusterTrace{Machine: "cloudbrain2-node", Program: "lu-fused", Ranks: []string{"r0", "r1"},
		Tracks: []string{"host", "main"}, TrackCats: []string{"host", "kernel"}, RankTracks: map[int][]string{1: {"core 0 M"}}}
	ct.AddSpan(ClusterSpan{Rank: 0, Track: 0, Name: "d2h diag 0", From: 0, To: 1000})
	ct.AddSpan(ClusterSpan{Rank: 0, Track: 0, Name: "mpi-bcast", Cat: "collective", From: 1000, To: 1500})
	ct.AddSpan(ClusterSpan{Rank: 1, Track: 1, Name: "p1-0", From: 500, To: 2000})
	ct.AddSpan(ClusterSpan{Rank: 1, Track: 2, Name: "mmad", From: 600, To: 700})
	ct.AddMessage(ClusterMessage{From: 0, To: 1, Track: 0, Sent: 900, Arrived: 1500, Name: "bcast"})
	var cl bytes.Buffer
	if err := WriteClusterJSON(&cl, ct); err != nil {
		tb.Fatal(err)
	}
	return append(seeds, cl.Bytes())
}

// fastEdgeCases are events fastEvents takes, or leaves to the decoder,
// one way or the other at the edge: escapes, keys in another case or
// twice, values of other types, whitespace, what follows the events.
var fastEdgeCases = []string{
	`[]`, `[ ]`, ` [ { } ] `, `[{}]`, `[{},{}]`, `[{} , {} ]`, `[,{}]`, `[{},]`, `[{}{}]`, `[{}`, `[{},`, `[{}]x`, `[{}][]`, `[{}] `,
	`{"traceEvents":[]}`, `{"traceEvents":[{}],"otherData":{"generator":"davinci-sim","from_ps":0,"to_ps":5}}`,
	`{"traceEvents":[{}],"traceEvents":[]}`, `{"traceEvents":[{}],"x":[1,{"a":2}]}`, `{"traceEvents":[{}],}`, `{"traceEvents":[{}]`,
	`{"traceEvents":[{"ph":"X","pid":0,"tid":1,"ts":1,"dur":2,"name":"a","cat":"mmad"}]}`,
	`[{"ph":"X","pid":0,"tid":1,"ts":1,"dur":2,"name":"a\"b","cat":"mmad"}]`,
	`[{"ph":"X","pid":0,"tid":1,"ts":1,"dur":2,"name":"\u0061","cat":"mm\u0061d"}]`,
	`[{"ph":"X","pid":0,"tid":1,"ts":1,"dur":2,"name":"µ≤","cat":"mmad"}]`,
	"[{\"ph\":\"X\",\"pid\":0,\"tid\":1,\"ts\":1,\"dur\":2,\"name\":\"\xff\xfe\",\"cat\":\"mmad\"}]",
	"[{\"ph\":\"X\",\"pid\":0,\"tid\":1,\"ts\":1,\"dur\":2,\"name\":\"a\x01\",\"cat\":\"mmad\"}]",
	`[{"ph":"X","pid":0,"tid":1,"ts":1,"dur":2,"name":"a\q","cat":"mmad"}]`,
	`[{"ph":"X","PID":0,"tid":1,"ts":1,"dur":2}]`, `[{"Ph":"X","pid":0,"tid":1,"ts":1,"dur":2}]`,
	`[{"ph":"X","pid":0,"pid":1,"tid":1,"ts":1,"dur":2}]`, `[{"ph":"X","pid":0,"tid":1,"ts":1,"dur":2,"ts":3}]`,
	`[{"ph":"X","pid":0,"tid":1,"ts":1,"dur":2,"args":{"bytes":1},"args":{"flops":2}}]`,
	`[{"ph":"X","pid":0,"tid":1,"ts":1,"dur":2,"args":{"bytes":1,"bytes":2}}]`,
	`[{"ph":"X","pid":0.0,"tid":1,"ts":1,"dur":2}]`, `[{"ph":"X","pid":1e0,"tid":1,"ts":1,"dur":2}]`,
	`[{"ph":"X","pid":-0,"tid":1,"ts":1,"dur":2}]`, `[{"ph":"X","pid":-1,"tid":1,"ts":1,"dur":2}]`,
	`[{"ph":"X","pid":99999999999999999999,"tid":1,"ts":1,"dur":2}]`, `[{"ph":"X","pid":123456789012345678,"tid":1,"ts":1,"dur":2}]`,
	`[{"ph":"X","pid":"0","tid":1,"ts":1,"dur":2}]`, `[{"ph":"X","pid":null,"tid":1,"ts":1,"dur":2}]`, `[{"ph":null}]`, `[{"ph":1}]`,
	`[{"ph":"X","pid":0,"tid":1,"ts":"1.5","dur":2}]`, `[{"ph":"X","pid":0,"tid":1,"ts":"x","dur":2}]`, `[{"ph":"X","pid":0,"tid":1,"ts":null,"dur":2}]`,
	`[{"ph":"X","pid":0,"tid":1,"ts":1.5e3,"dur":2E-1}]`, `[{"ph":"X","pid":0,"tid":1,"ts":1.0000001,"dur":2}]`, `[{"ph":"X","pid":0,"tid":1,"ts":-1.5,"dur":2}]`,
	`[{"ph":"X","pid":0,"tid":1,"ts":01,"dur":2}]`, `[{"ph":"X","pid":0,"tid":1,"ts":1.,"dur":2}]`, `[{"ph":"X","pid":0,"tid":1,"ts":-,"dur":2}]`, `[{"ph":"X","pid":0,"tid":1,"ts":.5,"dur":2}]`,
	`[{"ph":"X","pid":0,"tid":1,"ts":1e,"dur":2}]`, `[{"ph":"X","pid":0,"tid":1,"ts":1e+,"dur":2}]`, `[{"ph":"X","pid":0,"tid":1,"ts":99999999999999999999,"dur":2}]`,
	`[{"ph":"X","pid":0,"tid":1,"ts":1,"dur":2,"bind_id":18446744073709551615,"cat":"flag","name":"set_flag","flow_out":true}]`,
	`[{"ph":"X","pid":0,"tid":1,"ts":1,"dur":2,"bind_id":18446744073709551616,"cat":"flag"}]`,
	`[{"ph":"X","pid":0,"tid":1,"ts":1,"dur":2,"bind_id":-1}]`, `[{"ph":"X","pid":0,"tid":1,"ts":1,"dur":2,"bind_id":1.5}]`,
	`[{"ph":"X","pid":0,"tid":1,"ts":1,"dur":0,"bind_id":7,"cat":"flag","name":"wait_flag","flow_in":true,"args":{"wait":"wait_flag MTE2 MTE1 3"}}]`,
	`[{"ph":"X","pid":0,"tid":1,"ts":1,"dur":2,"flow_in":1}]`, `[{"ph":"X","pid":0,"tid":1,"ts":1,"dur":2,"flow_in":null}]`, `[{"ph":"X","pid":0,"tid":1,"ts":1,"dur":2,"flow_in":tru}]`,
	`[{"ph":"X","pid":0,"tid":1,"ts":1,"dur":2,"flow_in":truex}]`, `[{"ph":"X","pid":0,"tid":1,"ts":1,"dur":2,"flow_out":false }]`,
	`[{"ph":"X","pid":0,"tid":1,"ts":1,"dur":2,"args":null}]`, `[{"ph":"X","pid":0,"tid":1,"ts":1,"dur":2,"args":[]}]`, `[{"ph":"X","pid":0,"tid":1,"ts":1,"dur":2,"args":{}}]`,
	`[{"ph":"X","pid":0,"tid":1,"ts":1,"dur":2,"args":{"bytes":null}}]`, `[{"ph":"X","pid":0,"tid":1,"ts":1,"dur":2,"args":{"bytes":"5"}}]`,
	`[{"ph":"X","pid":0,"tid":1,"ts":1,"dur":2,"args":{"bytes":-0}}]`, `[{"ph":"X","pid":0,"tid":1,"ts":1,"dur":2,"args":{"flops":-0}}]`, `[{"ph":"X","pid":0,"tid":1,"ts":1,"dur":2,"args":{"flops":1e400}}]`,
	`[{"ph":"X","pid":0,"tid":1,"ts":1,"dur":2,"args":{"bytes":1.5,"flops":2.5e3,"instr":"mmad a"}}]`,
	`[{"ph":"X","pid":0,"tid":1,"ts":1,"dur":2,"args":{"instr":"x\ty","other":{"a":[1]}}}]`,
	`[{"ph":"X","pid":0,"tid":1,"ts":1,"dur":2,"args":{"instr":5}}]`, `[{"ph":"X","pid":0,"tid":1,"ts":1,"dur":2,"args":{"instr":"a\u0000b"}}]`,
	`[{"ph":"X","pid":0,"tid":1,"ts":1,"dur":2,"args":{"\u0069nstr":"x"}}]`, "[{\"ph\":\"X\",\"pid\":0,\"tid\":1,\"ts\":1,\"dur\":2,\"args\":{\"é\":\"x\",\"instr\":\"y\"}}]",
	`[{"ph":"X","pid":0,"tid":1,"ts":1,"dur":2,"args":{"instr":"y" "x":1}}]`, `[{"ph":"X","pid":0,"tid":1,"ts":1,"dur":2,"args":{"instr":}}]`,
	`[{"ph":"X","pid":0,"tid":1,"ts":1,"dur":2,"args":{"a":true,"b":false,"c":null,"d":-1.5e-3,"e":"s"}}]`,
	`[{"ph":"C","pid":0,"ts":1,"name":"L1","args":{"bytes":10}},{"ph":"C","pid":16777216,"ts":1,"name":"GM bandwidth","args":{"GB/s":1.5}},{"ph":"C","pid":16777218,"ts":1,"name":"power","args":{"W":60}}]`,
	`[{"ph":"C","pid":0,"ts":1,"name":"L1","args":{"bytes":-10}}]`, `[{"ph":"C","pid":16777216,"ts":1,"args":{"GB/s":"x"}}]`,
	`[{"ph":"X","pid":16777217,"tid":1,"ts":1,"dur":2,"name":"h2d","cat":"transfer"}]`,
	`[{"ph":"X","pid":16777219,"tid":1,"ts":0,"dur":5,"name":"gemm","cat":"kernel","args":{"blocks":4,"launch_us":1,"deadlocked":true}},{"ph":"X","pid":16777219,"tid":1,"ts":0,"dur":1,"name":"launch","cat":"launch"}]`,
	`[{"ph":"X","pid":16777219,"tid":1,"ts":0,"dur":5,"name":"gemm","cat":"kernel","args":{"blocks":4,"launch_us":"1","deadlocked":1}}]`,
	`[{"ph":"M","pid":0,"tid":1,"name":"thread_name","args":{"name":"S"}},{"ph":"M","pid":0,"tid":0,"name":"process_name","args":{"name":"core 0"}}]`,
	`[{"ph":"M","pid":0,"tid":4097,"name":"thread_name","args":{"name":"S"}}]`,
	`[{"ph":"s","pid":0,"tid":1,"ts":1,"name":"m","cat":"message","id":0},{"ph":"f","pid":1,"tid":1,"ts":2,"name":"m","cat":"message","bp":"e","id":0}]`,
	`[{"ph":"i","pid":0,"tid":0,"ts":1,"s":"g","name":"end"}]`, `[{"ph":"X","id":{"a":1}}]`, `[{"ph":"X","id":[1]}]`, `[{"ph":"X","idé":1}]`, `[{"ph":"X","i\"d":1}]`,
	"[\n{\"ph\" : \"X\" ,\n\t\"pid\":0 , \"tid\" :1,\"ts\":\r1,\"dur\":2 }\n,\n{ }\n]\n",
	`[{"ph":"X","pid":0,"tid":1,"ts":5,"dur":2,"name":"a","cat":"mmad"},{"ph":"X","pid":0,"tid":1,"ts":6,"dur":2,"name":"b","cat":"mmad"}]`,
	`[{"ph":"X","pid":0,"tid":1,"ts":5,"dur":2,"name":"a","cat":"mmad"},{"ph":"X","pid":1,"tid":1,"ts":1,"dur":2,"name":"b","cat":"mmad"},{"ph":"X","pid":0,"tid":1,"ts":1,"dur":2,"name":"c","cat":"mmad"}]`,
	`[{"ph":"X","pid":0,"tid":1,"ts":1,"dur":1,"name":"queue_full","cat":"stall"},{"ph":"X","pid":0,"tid":1,"ts":1,"dur":1,"name":"x","cat":"wait"}]`,
	`[1]`, `[null]`, `["x"]`, `[[]]`, `{"traceEvents":{}}`, `{"traceEvents":[{"ph":"X"}`, `{"traceEvents":[{"ph":"X"} `, `{"traceEvents":[{"ph":"X",`, `{"traceEvents":[{"ph":`,
}

// TestFastEventsSame: reading JSON traces with fastEvents gives what
// decoding every event with encoding/json gives — on the writers' traces
// of every shape the tests make (gzip or not, within a memory limit and
// a choice of cores or not), on hand-made edge cases, and on every prefix
// of a trace and many small corruptions of it.
func TestFastEventsSame(t *testing.T) {
	var traces [][]byte
	for _, tl := range []*Timeline{
		seedTimeline(t), davinciTimeline(t, Window{}), davinciTimeline(t, Window{From: 1000, To: 12000}),
		gpuTimeline(t, Window{}), gpuTimeline(t, Window{From: 50000}), manyTextsTimeline(t, Window{}),
	} {
		traces = append(traces, jsonOf(t, tl))
	}
	for _, seed := range rtSeeds {
		traces = append(traces, jsonOf(t, fuzzTimeline(t, seed)))
	}
	traces = append(traces, readTraceSeeds(t)...)
	for _, s := range fastEdgeCases {
		traces = append(traces, []byte(s))
	}
	for _, data := range traces {
		sameRead(t, data, ReadLimits{})
		sameRead(t, gzipped(data), ReadLimits{})
		sameRead(t, data, ReadLimits{Bytes: 1})
		sameRead(t, data, ReadLimits{Cores: map[int]bool{1: true}})
	}
	// Every prefix, and every byte replaced by one of a few (or taken out).
	chip := jsonOf(t, seedTimeline(t))
	for n := range len(chip) {
		sameRead(t, chip[:n], ReadLimits{})
	}
	for i := range chip {
		for _, c := range []byte{'"', '\\', '}', '0'} {
			if chip[i] != c {
				sameRead(t, slices.Concat(chip[:i], []byte{c}, chip[i+1:]), ReadLimits{})
			}
		}
		sameRead(t, slices.Concat(chip[:i], chip[i+1:]), ReadLimits{})
	}
}

// bigTrace returns a JSON trace of n slices on two cores, with flags and
// their arrows, counters, and instruction texts many of them distinct: many
// times fastBufSize.
func bigTrace(t testing.TB, n int) []byte {
	r := NewRecorder(Window{})
	now := sim.Time(0)
	for i := range n {
		core := i * 2 / n
		in := isa.Scalar(int64(i % 977))
		r.Interval(core, i%3, arch.Busy, now, now+700, &in, nil)
		if i%5 == 0 {
			r.Interval(core, 3, arch.WaitFlag, now, now+300, nil, nil)
			r.Flag(core, 0, 1, i%8, true, now+700)
			r.Flag(core, 0, 1, i%8, false, now+700)
		}
		if i%7 == 0 {
			r.Occupancy(core, 0, int64(i%4096), now)
		}
		now += 1000
	}
	r.Finish(now)
	return jsonOf(t, r.Timeline())
}

// TestFastEventsSameBig: the same on a trace of many read buffers, with the
// buffer's edges falling anywhere in an event; cut, corrupted, or holding
// an event fastEvents leaves to the decoder (longer than fastSpanMax, or
// of another form) at places through it.
func TestFastEventsSameBig(t *testing.T) {
	data := bigTrace(t, 30000)
	if len(data) < 4*fastBufSize {
		t.Fatalf("the trace is %d bytes, want one of several buffers", len(data))
	}
	sameRead(t, data, ReadLimits{})
	sameRead(t, gzipped(data), ReadLimits{})
	sameRead(t, data, ReadLimits{Bytes: 64 << 10})
	rng := rand.New(rand.NewPCG(1, 2))
	at := func() int { // (an event's start)
		i := rng.IntN(len(data) - 100)
		return i + bytes.Index(data[i:], []byte("\n{")) + 1
	}
	for range 20 {
		sameRead(t, data[:rng.IntN(len(data))], ReadLimits{})
		i := rng.IntN(len(data))
		sameRead(t, slices.Concat(data[:i], []byte{`"{}[],:0 \`[rng.IntN(10)]}, data[i+1:]), ReadLimits{})
	}
	for _, ev := range []string{
		`{"ph":"X","pid":0,"tid":1,"ts":0,"dur":0,"name":"` + strings.Repeat("n", fastSpanMax) + `"},`,
		`{"ph":"M","pid":0,"tid":1,"name":"x","args":{"s":"` + strings.Repeat("s", 3*fastBufSize) + `"}},`,
		`{"ph":"X","PID":0},`,
		strings.Repeat(" ", 2*fastSpanMax),
		strings.Repeat(" ", maxTraceToken+1),
		`{"ph":"M","pid":0,"tid":1,"name":"` + strings.Repeat("x", maxTraceToken) + `"},`,
	} {
		i := at()
		trace := slices.Concat(data[:i], []byte(ev), data[i:])
		sameRead(t, trace, ReadLimits{})
		sameRead(t, gzipped(trace), ReadLimits{})
	}
}

// FuzzReadTraceFast checks that reading the fuzzer's bytes as a JSON trace
// with fastEvents gives what decoding every event with encoding/json
// gives (sameRead), plain and gzipped. Seeds: FuzzReadTrace's, the edge
// cases of fastEdgeCases.
func FuzzReadTraceFast(f *testing.F) {
	for _, s := range readTraceSeeds(f) {
		f.Add(s)
	}
	for _, s := range fastEdgeCases {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		sameRead(t, data, ReadLimits{})
		if len(data) < 1<<16 {
			sameRead(t, gzipped(data), ReadLimits{})
		}
	})
}

// TestPipeSort: a lane's slices as read, sorted as flushCore sorts them —
// in place when nearly in order (two runs merged, or a few out of place),
// else with slices.SortStableFunc — come in the order of a stable sort by
// the reader's order (by From, a flag mark before an interval at its
// instant), whatever their order and length.
func TestPipeSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	less := func(ss []Slice) func(i, j int) bool { // (the order flushCore's sort.SliceStable had)
		return func(i, j int) bool {
			if ss[i].From != ss[j].From {
				return ss[i].From < ss[j].From
			}
			return ss[i].Class == ClassFlag && ss[j].Class != ClassFlag
		}
	}
	for _, n := range []int{0, 1, 2, 3, 10, pipeChunk - 1, pipeChunk, pipeChunk + 1, 3*pipeChunk + 17} {
		for shape := range 6 {
			ss := make([]Slice, n)
			for i := range ss {
				ss[i] = Slice{From: sim.Time(i / 3), To: sim.Time(i/3 + 1), ref: uint32(i)}
				if rng.IntN(4) == 0 {
					ss[i].Class = ClassFlag
				}
			}
			switch shape {
			case 1: // two runs: the flag marks last
				var marks, rest []Slice
				for _, s := range ss {
					if s.Class == ClassFlag {
						marks = append(marks, s)
					} else {
						rest = append(rest, s)
					}
				}
				ss = append(rest, marks...)
			case 2: // a few out of place
				for range n / 50 {
					i := rng.IntN(n)
					j := min(n-1, i+rng.IntN(5))
					ss[i], ss[j] = ss[j], ss[i]
				}
			case 3: // many out of place
				for range n / 3 {
					i, j := rng.IntN(n), rng.IntN(n)
					ss[i], ss[j] = ss[j], ss[i]
				}
			case 4: // reversed
				slices.Reverse(ss)
			case 5: // three runs
				if n > 3 {
					a, b := n/3, 2*n/3
					ss = slices.Concat(ss[b:], ss[:a], ss[a:b])
				}
			}
			want := slices.Clone(ss)
			sort.SliceStable(want, less(want))
			var pp pipe
			for _, s := range ss {
				pp.add(s)
			}
			sorted := pp.sort()
			got := pp.all()
			if !sorted {
				slices.SortStableFunc(got, compareSlices)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("%d slices of shape %d: sorted wrong", n, shape)
			}
		}
	}
}

// BenchmarkReadJSONTrace reads a JSON trace of 200 000 slices (bigTrace)
// with fastEvents (/fast) and decoding every event with encoding/json
// (/json):
//
//	go test -run XXX -bench ReadJSONTrace ./traces/
func BenchmarkReadJSONTrace(b *testing.B) {
	data := bigTrace(b, 200000)
	for _, fast := range []bool{true, false} {
		name := "json"
		if fast {
			name = "fast"
		}
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for range b.N {
				if _, _, err := readJSONTrace(bytes.NewReader(data), ReadLimits{Bytes: DefaultLiveLimit}, fast); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
