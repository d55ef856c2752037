package traces

import (
	"bytes"
	"testing"

	"github.com/davinci-sim/davinci-sim/arch"
	"github.com/davinci-sim/davinci-sim/isa"
)

// FuzzReadTrace feeds arbitrary bytes to the trace reader (the input of
// `davinci-sim view`): an error or a timeline, never a panic or a hang.
func FuzzReadTrace(f *testing.F) {
	f.Add([]byte(`{"traceEvents":[{"name":"process_name","ph":"M","pid":1,"args":{"name":"core 0"}},{"name":"thread_name","ph":"M","pid":1,"tid":2,"args":{"name":"MTE2"}},{"name":"mte2.copy","cat":"busy","ph":"X","pid":1,"tid":2,"ts":0.001,"dur":0.5,"args":{"bytes":64}},{"name":"set_flag","ph":"i","pid":1,"tid":2,"ts":0.5,"bind_id":1,"flow_out":true},{"name":"L1","ph":"C","pid":1,"ts":0,"args":{"bytes":1024}}]}`))
	f.Add([]byte(`{"traceEvents":[{"ph":"X","pid":1,"tid":1,"ts":-5,"dur":1e300}]}`))
	f.Add([]byte(`[{"ph":"X"}]`))
	f.Add([]byte("\x1f\x8b\x08\x00"))
	f.Add([]byte(`{"traceEvents":[`))
	f.Fuzz(func(t *testing.T, data []byte) {
		tl, err := ReadTrace(bytes.NewReader(data))
		if err == nil && tl == nil {
			t.Fatal("nil timeline without an error")
		}
	})
}

// FuzzReadPftrace feeds arbitrary bytes to the protobuf trace reader: an
// error or a timeline, never a panic or a hang. The seed is the trace of a
// few hand-fed events.
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
	var buf bytes.Buffer
	if err := WritePftrace(&buf, r.Timeline()); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add([]byte{0x0a, 0x02, 0x50, 0x01})
	f.Fuzz(func(t *testing.T, data []byte) {
		tl, err := ReadPftrace(bytes.NewReader(data))
		if err == nil && tl == nil {
			t.Fatal("nil timeline without an error")
		}
	})
}
