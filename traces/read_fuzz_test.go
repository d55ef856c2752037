package traces

import (
	"bytes"
	"testing"
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
