package sweep

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/davinci-sim/davinci-sim/badinput"
)

// --resume (and merge, and sweep plot) take the values a sweep writes and
// refuse others, on one line naming the file, line and key: a hand-edited
// NaN written as a number or spelt otherwise than report.json spells it,
// metrics of a failed point, an ok point's error.
func TestResumeRefusesValuesNoSweepWrites(t *testing.T) {
	s := writeStudy(t, tinyStudy)
	done := t.TempDir()
	if _, err := Run(s, Options{Out: done, Jobs: 1}); err != nil {
		t.Fatal(err)
	}
	good := readFile(t, filepath.Join(done, ResultsJSONL))
	lines := bytes.SplitAfter(good, []byte("\n"))
	first := string(lines[0]) // point 0: ok (bm 64, L1 256KiB)
	if !strings.Contains(first, `"status":"ok"`) {
		t.Fatalf("point 0 did not run: %s", first)
	}
	var failed string // a failed point's (bm 512 with 256KiB, say)
	for _, l := range lines {
		if strings.Contains(string(l), `"status":"failed"`) {
			failed = string(l)
			break
		}
	}
	if failed == "" {
		t.Fatal("no failed point")
	}
	rest := string(bytes.Join(lines[1:], nil))
	edit := func(line, old, new string) string {
		t.Helper()
		if !strings.Contains(line, old) {
			t.Fatalf("%q not in %s", old, line)
		}
		return strings.Replace(line, old, new, 1)
	}
	// metric returns line with metric m's value replaced by v.
	metric := func(line, m, v string) string {
		t.Helper()
		re := regexp.MustCompile(`"` + regexp.QuoteMeta(m) + `":[^,}]*`)
		if !re.MatchString(line) {
			t.Fatalf("no %s in %s", m, line)
		}
		return re.ReplaceAllLiteralString(line, `"`+m+`":`+v)
	}
	for _, c := range []struct {
		name, first, want string // want "": accepted
	}{
		// What report.json writes for a float that is not finite, and
		// so the sweep: accepted.
		{"NaN string", metric(first, "flops.tflops", `"NaN"`), ""},
		{"+Inf string", metric(first, "flops.tflops", `"+Inf"`), ""},
		{"-Inf string", metric(first, "flops.tflops", `"-Inf"`), ""},
		{"null", metric(first, "flops.tflops", `null`), ""},
		// A free-form program key: any string.
		{"program key string", edit(first, `"program.tiling.bn":64`, `"program.tiling.bn":"sixty-four"`), ""},
		// Numbers JSON reads as ±Inf.
		{"1e999", metric(first, "flops.tflops", `1e999`), `:1: key "metrics.flops.tflops": 1e999: not a finite number`},
		{"-1e999", metric(first, "flops.tflops", `-1e999`), `:1: key "metrics.flops.tflops": -1e999: not a finite number`},
		{"1e999 in program key", edit(first, `"program.tiling.bn":64`, `"program.tiling.bn":[1,1e999]`), `:1: key "metrics.program.tiling.bn": 1e999: not a finite number`},
		// Other spellings of a non-finite float.
		{"Infinity", metric(first, "flops.tflops", `"Infinity"`), `:1: key "metrics.flops.tflops": "Infinity": a number, or "+Inf", "-Inf" or "NaN"`},
		{"nan", metric(first, "flops.tflops", `"nan"`), `:1: key "metrics.flops.tflops": "nan": a number`},
		{"number as text", metric(first, "flops.tflops", `"1.5"`), `key "metrics.flops.tflops": "1.5": a number`},
		{"bool for float", metric(first, "flops.tflops", `true`), `key "metrics.flops.tflops": true: a number`},
		// An integer's place.
		{"NaN for integer", metric(first, "buffers.L1.capacity_bytes", `"NaN"`), `:1: key "metrics.buffers.L1.capacity_bytes": "NaN": an integer`},
		{"fraction for integer", metric(first, "buffers.L1.capacity_bytes", `1.5`), `key "metrics.buffers.L1.capacity_bytes": 1.5: an integer`},
		// Status, error and metrics that go together.
		{"ok with error", edit(first, `"status":"ok"`, `"status":"ok","error":"x"`), `:1: key "error": a point with status ok has none`},
		{"check-failed without error", edit(first, `"status":"ok"`, `"status":"check-failed"`), `:1: key "error": missing`},
		{"failed with metrics", edit(first, `"status":"ok"`, `"status":"failed","error":"x"`), `:1: key "metrics.buffers.L1.capacity_bytes": 262144: a failed point records null`},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			data := c.first + rest
			if c.first == first { // (the edit left the line as it was)
				t.Fatal("no edit")
			}
			if err := os.WriteFile(filepath.Join(dir, ResultsJSONL), []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
			sum, err := Run(s, Options{Out: dir, Resume: true})
			if c.want == "" {
				if err != nil || sum.Ran != 0 || sum.Skipped != len(s.Points) {
					t.Fatalf("refused what a sweep writes: %+v %v", sum, err)
				}
				return
			}
			if err == nil || !badinput.Is(err) || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("resume: %v; want one line of bad input containing %q", err, c.want)
			}
			if !strings.HasPrefix(err.Error(), filepath.Join(dir, ResultsJSONL)+":1: ") {
				t.Errorf("error %q does not start with the file and line", err)
			}
			if _, err := os.Stat(filepath.Join(dir, ResultsCSV)); err == nil {
				t.Errorf("results.csv written from refused records")
			}
			if _, err := ReadResults(filepath.Join(dir, ResultsJSONL), s); err == nil {
				t.Errorf("ReadResults (merge, plot) took it")
			}
		})
	}
	// A failed point as recorded is taken; with a metric, not.
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, ResultsJSONL), []byte(failed), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadResults(filepath.Join(dir, ResultsJSONL), s); err != nil {
		t.Errorf("a failed point's record: %v", err)
	}
}

// A metric under the error report (whose MarshalJSON writes its fields as
// tagged) is checked as a float, as every report float is: "+Inf" and
// numbers pass, "inf", true or a mapping do not.
func TestCheckValuesErrorMetrics(t *testing.T) {
	for raw, ok := range map[string]bool{`1.5`: true, `"+Inf"`: true, `"NaN"`: true, `"inf"`: false, `"Infinity"`: false,
		`true`: false, `"hello"`: false, `{"a":1}`: false, `[1,2]`: false, `1e999`: false} {
		rec := &Record{Status: StatusOK, Metrics: map[string]json.RawMessage{"error.bits": json.RawMessage(raw)}}
		if err := checkValues(rec); (err == nil) != ok {
			t.Errorf("error.bits %s: %v, want accepted %v", raw, err, ok)
		}
	}
}
