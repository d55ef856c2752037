package traces

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// bombSize is the decompressed size of the hostile traces below: 64 times
// maxTraceToken, from under 100 KB of gzip.
const bombSize = 64 << 20

// readBound is what reading one of them may allocate: the decoder holds at
// most a value of maxTraceValue (its buffer grows geometrically), plus the
// readers' buffers; without the bounds it held the whole run (2 to 3
// times bombSize allocated).
const readBound = 32 << 20

// repeat is a run of n copies of b in a gzipOf stream.
type repeat struct {
	b []byte
	n int
}

// gzipOf returns the gzip of the parts (strings and repeats) one after
// another.
func gzipOf(t *testing.T, parts ...any) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range parts {
		switch p := p.(type) {
		case string:
			zw.Write([]byte(p))
		case repeat:
			chunk := bytes.Repeat(p.b, max(1, (1<<16)/len(p.b)))
			for n := p.n; n > 0; {
				k := min(n, len(chunk)/len(p.b))
				zw.Write(chunk[:k*len(p.b)])
				n -= k
			}
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// readBounded reads the trace data, checking it allocates at most
// readBound, and returns the error (nil: the trace read).
func readBounded(t *testing.T, data []byte) error {
	t.Helper()
	before := heapAllocated()
	_, _, err := readTrace(bytes.NewReader(data), ReadLimits{})
	n := heapAllocated() - before
	t.Logf("%d KB of input: %d MiB allocated", len(data)>>10, n>>20)
	if n > readBound {
		t.Errorf("reading allocated %d MiB, want at most %d", n>>20, readBound>>20)
	}
	if err != nil && strings.Contains(err.Error(), "\n") {
		t.Errorf("error not one line: %q", err)
	}
	return err
}

// TestReadRefusesDecompressionBombs: a small gzip trace whose whitespace
// run, string or event is enormous once decompressed is refused at the
// bound, in a line naming what and where, without the decoder holding it
// (the fuzz review's: 510 KB of gzip, 512 MiB of spaces, took 32 s and
// 1.5 GB before view said the trace held no core events).
func TestReadRefusesDecompressionBombs(t *testing.T) {
	event := `{"ph":"X","pid":0,"tid":1,"ts":0,"dur":1,`
	for _, c := range []struct {
		name  string
		parts []any
		want  string
	}{
		{"whitespace", []any{`{"traceEvents":[`, repeat{[]byte(" "), bombSize}, `]}`},
			"at byte 16 of the trace (decompressed): a run of whitespace longer than 1 MiB"},
		{"whitespace before the trace", []any{repeat{[]byte("\n\t"), bombSize / 2}, `{"traceEvents":[]}`},
			"at byte 0 of the trace (decompressed): a run of whitespace longer than 1 MiB"},
		{"whitespace after the trace", []any{`{"traceEvents":[]}`, repeat{[]byte("\r\n"), bombSize / 2}},
			"at byte 18 of the trace (decompressed): a run of whitespace longer than 1 MiB"},
		{"name", []any{`{"traceEvents":[` + event + `"name":"`, repeat{[]byte("A"), bombSize}, `"}]}`},
			fmt.Sprintf("at byte %d of the trace (decompressed): a string longer than 1 MiB", 16+len(event)+7)},
		// Escaped quotes do not end the string: the run of spaces after
		// one is the string's, not whitespace between tokens.
		{"escapes", []any{`{"traceEvents":[` + event + `"name":"\\\"`, repeat{[]byte(" "), bombSize}, `"}]}`},
			fmt.Sprintf("at byte %d of the trace (decompressed): a string longer than 1 MiB", 16+len(event)+7)},
		{"key", []any{`{"`, repeat{[]byte("k"), bombSize}, `":1}`},
			"at byte 1 of the trace (decompressed): a string longer than 1 MiB"},
		{"number", []any{`{"traceEvents":[` + event + `"args":{"bytes":1`, repeat{[]byte("0"), bombSize}, `}}]}`},
			fmt.Sprintf("at byte %d of the trace (decompressed): a number or literal longer than 1 MiB", 16+len(event)+16)},
		{"event", []any{`{"traceEvents":[{"ph":"X"},` + event + `"args":{`, repeat{[]byte(`"a":1,`), bombSize / 6}, `"b":1}}]}`},
			"trace event 1, from byte 27 of the trace (decompressed): longer than 4 MiB"},
		{"otherData", []any{`{"otherData":{"generator":"davinci-sim",`, repeat{[]byte(`"a":[1,2,3],`), bombSize / 12}, `"b":1}}`},
			"otherData, from byte 13 of the trace (decompressed): longer than 4 MiB"},
	} {
		t.Run(c.name, func(t *testing.T) {
			data := gzipOf(t, c.parts...)
			err := readBounded(t, data)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("read %d KB of gzip: error %v, want one with %q", len(data)>>10, err, c.want)
			}
		})
	}
	// Uncompressed, the offsets are the file's.
	err := readBounded(t, []byte(`{"traceEvents":[`+strings.Repeat(" ", maxTraceToken+1)+`]}`))
	if want := "at byte 16 of the trace: a run of whitespace longer than 1 MiB"; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("error %v, want one with %q", err, want)
	}
}

// TestReadWithinBounds: the bounds refuse nothing near what the writers
// write — a string, whitespace run and event just within them, a header
// naming every other core up to maxIdleCore, an escaped name — and a key
// the reader does not use is skipped token by token, however large (a
// foreign trace's metadata), but not however deep.
func TestReadWithinBounds(t *testing.T) {
	tl := seedTimeline(t)
	tl.Host = append(tl.Host, HostTask{Kind: "compute", Name: `a "quoted" \ name {[,:`, From: 0, To: 10})
	for c := 3; c < maxIdleCore; c += 2 { // (cores 0 and 1 hold events)
		tl.Idle = append(tl.Idle, c)
	}
	var trace bytes.Buffer
	if err := WritePerfetto(&trace, tl); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(trace.Bytes(), []byte(`"idle_cores":"3,5,7,`)) {
		t.Fatal("the header does not list the idle cores")
	}
	events := trace.Bytes()[bytes.Index(trace.Bytes(), []byte(`"traceEvents":[`))+len(`"traceEvents":[`):]
	header := trace.Bytes()[:bytes.Index(trace.Bytes(), []byte(`"traceEvents":[`))]
	longName := `{"ph":"X","pid":0,"tid":1,"ts":0,"dur":0,"name":"` + strings.Repeat("n", maxTraceToken-2) + `"},`
	bigEvent := `{"ph":"M","pid":0,"tid":1,"name":"x","args":{"s":"` + strings.Repeat("s", maxTraceToken-2) +
		`","t":"` + strings.Repeat("t", maxTraceToken-2) + `","u":"` + strings.Repeat("u", maxTraceToken-2) + `"}},`
	data := gzipOf(t, string(header), `"stackFrames":{`, repeat{[]byte(`"1":{"name":"f","parent":"0"},`), 2 * maxTraceValue / 30}, `"0":{}},`,
		`"traceEvents":[`, longName, strings.Repeat(" ", maxTraceToken), bigEvent, string(events))
	before := heapAllocated()
	got, _, err := readTrace(bytes.NewReader(data), ReadLimits{})
	if err != nil {
		t.Fatalf("reading a trace within the bounds: %v", err)
	}
	t.Logf("%d MiB allocated", (heapAllocated()-before)>>20)
	if len(got.Idle) != len(tl.Idle) {
		t.Errorf("%d idle cores read, want %d", len(got.Idle), len(tl.Idle))
	}
	if name := tl.Host[len(tl.Host)-1].Name; !slices.ContainsFunc(got.Host, func(h HostTask) bool { return h.Name == name }) {
		t.Errorf("host tasks read %v, want one named %q", got.Host, name)
	}
	deep := gzipOf(t, `{"foo":`, repeat{[]byte("["), bombSize}, repeat{[]byte("]"), bombSize}, `,"traceEvents":[]}`)
	if err := readBounded(t, deep); err == nil || !strings.Contains(err.Error(), `"foo": nested deeper than 10000`) {
		t.Fatalf("a deep key: error %v, want it nested too deep", err)
	}
}

// A JSON trace repeating its header or its events' key is refused at the
// second copy (as the .pftrace reader refuses a second header): 2000
// copies of a header naming idle cores 0-65535, 126 KB, took 87 s, each
// copy parsed and its cores expanded.
func TestReadRefusesRepeatedTopKeys(t *testing.T) {
	header := `"otherData":{"idle_cores":"0-65535"}`
	for key, text := range map[string]string{
		"otherData":   `{` + header + `,` + header + `,"traceEvents":[]}`,
		"traceEvents": `{"traceEvents":[],` + header + `,"traceEvents":[]}`,
	} {
		_, err := ReadTrace(strings.NewReader(text))
		if want := fmt.Sprintf("bad trace: a second %q", key); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s twice: %v; want %q", key, err, want)
		}
	}
	if _, err := ReadTrace(strings.NewReader(`{` + header + `,"traceEvents":[]}`)); err != nil && strings.Contains(err.Error(), "a second") {
		t.Errorf("one of each: %v", err)
	}
}
