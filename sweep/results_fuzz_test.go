package sweep

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/davinci-sim/davinci-sim/badinput"
)

// FuzzReadResults feeds results.jsonl text (a --resume or merge reads
// whatever the directory holds) to the reader of the tiny study: it
// returns records that each belong to the study, or one line of bad
// input — never a panic, another kind of error or a record that does
// not check.
func FuzzReadResults(f *testing.F) {
	s := writeStudy(f, tinyStudy)
	out := f.TempDir()
	if _, err := Run(s, Options{Out: out, Jobs: 2, Shard: Shard{0, 4}}); err != nil {
		f.Fatal(err)
	}
	good, err := os.ReadFile(filepath.Join(out, ResultsJSONL))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	lines := bytes.SplitAfter(good, []byte("\n"))
	f.Add(lines[0])
	f.Add(append(append([]byte{}, lines[0]...), lines[0]...))
	f.Add([]byte(`{"index":1,"params":{},"run":{"inputs":"x"},"status":"ok","metrics":{}}` + "\n"))
	f.Add([]byte("{}\n"))
	f.Add([]byte(""))
	// A record of each status and field: op_unit, a point a timeout
	// stopped, run options, a check failure; a record repeated in the
	// other spelling of a size.
	first := string(bytes.TrimSpace(lines[0]))
	for _, r := range []string{
		strings.Replace(first, `"status":"ok"`, `"status":"ok","op_unit":"OP"`, 1),
		strings.Replace(first, `"status":"ok"`, `"status":"failed","error":"point timed out","time_limit_seconds":1800`, 1),
		strings.Replace(first, `"run":{`, `"run":{"options":["k_batch=8","fast_forward"],`, 1),
		strings.Replace(first, `"status":"ok"`, `"status":"check-failed","error":"C differs"`, 1),
		strings.Replace(first, `"flops.tflops":`, `"flops.tflops":"NaN","x":`, 1),
		strings.Replace(first, `"capacity_bytes":`, `"capacity_bytes":"+Inf","x":`, 1),
		strings.Replace(first, `"256KiB"`, `"262144"`, 1),
		strings.Replace(first, `"index":0`, `"index":99`, 1),
		strings.Replace(first, `"flops.tflops":`, `"flops.tflops":1e999,"x":`, 1),
	} {
		f.Add([]byte(r + "\n" + first + "\n"))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		recs, err := readResults("results.jsonl", bytes.NewReader(data), s, nil)
		if err != nil {
			if !badinput.Is(err) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("not one line of bad input: %v", err)
			}
			return
		}
		seen := map[int]bool{}
		for _, r := range recs {
			if seen[r.Index] {
				t.Fatalf("point %d returned twice", r.Index)
			}
			seen[r.Index] = true
			if err := checkRecord(&r, s, nil); err != nil {
				t.Fatalf("returned a record that does not check: %v", err)
			}
		}
	})
}
