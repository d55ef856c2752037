package traces_test

import (
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/davinci-sim/davinci-sim/traces"
)

// ReadLimits.Progress counts the file's bytes as they are read (view's
// progress line): all of them by the end.
func TestReadProgressCountsBytes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.json")
	trace := `{"otherData":{"generator":"davinci-sim","from_ps":0,"to_ps":2000000},"traceEvents":[
{"ph":"X","pid":0,"tid":1,"ts":0,"dur":1,"name":"a","cat":"copy"}]}` + "\n" + strings.Repeat(" ", 1<<17)
	if err := os.WriteFile(path, []byte(trace), 0o644); err != nil {
		t.Fatal(err)
	}
	var n atomic.Int64
	if _, _, err := traces.ReadTraceFileWithin(path, traces.ReadLimits{Progress: &n}); err != nil {
		t.Fatal(err)
	}
	if n.Load() != int64(len(trace)) {
		t.Errorf("counted %d bytes, want the file's %d", n.Load(), len(trace))
	}
}
