package traces_test

import (
	"strings"
	"testing"

	"github.com/davinci-sim/davinci-sim/traces"
)

// The readers refuse what the writers never write, with one line naming
// the event, counter or key: slices of one lane that overlap (view
// showed "MTE2 busy 133.3%"), a buffer counter below 0 or past the
// buffer's stated capacity, a GM bandwidth below 0 or past the machine's,
// to_ps before from_ps. Lanes of spans (a cluster trace's tracks) may
// overlap; so may slices on different lanes.
func TestReadRefusesImplausible(t *testing.T) {
	const head = `{"otherData":{"generator":"davinci-sim","from_ps":0,"to_ps":10000000,"capacity_bytes":{"L1":1024},"gm_bandwidth_bytes_per_s":1e12},"traceEvents":[
{"ph":"M","pid":0,"tid":0,"name":"process_name","args":{"name":"core 0"}},
{"ph":"M","pid":0,"tid":1,"name":"thread_name","args":{"name":"MTE2"}},`
	for _, c := range []struct{ name, events, want string }{
		{"overlap", `{"ph":"X","pid":0,"tid":1,"ts":0,"dur":2,"name":"copy_gm_to_l1","cat":"copy"},
{"ph":"X","pid":0,"tid":1,"ts":1,"dur":2,"name":"copy_gm_to_l1","cat":"copy"}`, `lane "MTE2": slice "copy_gm_to_l1" at 1µs overlaps`},
		{"stall in a slice", `{"ph":"X","pid":0,"tid":1,"ts":0,"dur":2,"name":"copy_gm_to_l1","cat":"copy"},
{"ph":"X","pid":0,"tid":1,"ts":1.5,"dur":0.1,"name":"bandwidth","cat":"stall"}`, `overlaps "copy_gm_to_l1"`},
		{"negative bytes", `{"ph":"C","pid":0,"ts":0,"name":"L1","args":{"bytes":-5}}`, `counter "L1": -5 bytes: negative`},
		{"past capacity", `{"ph":"C","pid":0,"ts":0,"name":"L1","args":{"bytes":1e30}}`, `more than the buffer's capacity_bytes 1024`},
		{"bandwidth", `{"ph":"C","pid":16777216,"ts":0,"name":"GM bandwidth","args":{"GB/s":1e9}}`, `more than the machine's gm_bandwidth_bytes_per_s`},
		{"negative bandwidth", `{"ph":"C","pid":16777216,"ts":0,"name":"GM bandwidth","args":{"GB/s":-1}}`, `"GM bandwidth": -1 GB/s`},
	} {
		_, err := traces.ReadTrace(strings.NewReader(head + c.events + "]}"))
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v; want one line with %q", c.name, err, c.want)
		}
	}
	_, err := traces.ReadTrace(strings.NewReader(`{"otherData":{"generator":"davinci-sim","from_ps":500,"to_ps":100},"traceEvents":[]}`))
	if err == nil || !strings.Contains(err.Error(), "from_ps 500, to_ps 100") {
		t.Errorf("to_ps before from_ps: %v", err)
	}
	// What the writers do write: back to back, a flag mark at a slice's
	// end, slices of two lanes at once, and overlapping spans of a track.
	ok := head + `{"ph":"X","pid":0,"tid":1,"ts":0,"dur":1,"name":"a","cat":"copy"},
{"ph":"X","pid":0,"tid":1,"ts":1,"dur":0,"name":"set_flag","cat":"flag"},
{"ph":"X","pid":0,"tid":1,"ts":1,"dur":1,"name":"b","cat":"copy"},
{"ph":"X","pid":0,"tid":2,"ts":0.5,"dur":1,"name":"c","cat":"mmad"},
{"ph":"X","pid":0,"tid":3,"ts":0,"dur":3,"name":"k1","cat":"kernel"},
{"ph":"X","pid":0,"tid":3,"ts":1,"dur":3,"name":"k2","cat":"kernel"},
{"ph":"C","pid":0,"ts":0,"name":"L1","args":{"bytes":1024}},
{"ph":"C","pid":16777216,"ts":0,"name":"GM bandwidth","args":{"GB/s":1000}}]}`
	if _, err := traces.ReadTrace(strings.NewReader(ok)); err != nil {
		t.Errorf("a plausible trace: %v", err)
	}
}
