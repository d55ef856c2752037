package sweep

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/davinci-sim/davinci-sim/badinput"
)

// FuzzReadResults feeds results.jsonl text (a --resume or merge reads
// whatever the directory holds) to the reader of the tiny study: it
// returns records that each belong to the study, or one line of bad
// input — never a panic, another kind of error, a record that does
// not check or one that gives a key twice (as a reference, slower, finds
// them: through encoding/json's tokens). A last line it takes as cut off
// is the last line, without its end of line, not JSON; cut back to the
// end it reports (and given an end of line where it says the last record
// has none) the text reads as the same records, whole.
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
	// Keys given twice (at each level, in another case where a struct
	// takes it, escaped); lines cut off (a record's start, zeros, a whole
	// record without its end of line, one cut off in the middle).
	for _, r := range []string{
		strings.Replace(first, `"flops.tflops":`, `"flops.tflops":1,"flops.tflops":`, 1),
		strings.Replace(first, `"index":0`, `"index":0,"Index":0`, 1),
		strings.Replace(first, `"index":0`, `"index":0,"\u0069ndex":0`, 1),
		strings.Replace(first, `"run":{`, `"run":{"INPUTS":"x",`, 1),
		strings.Replace(first, `"params":{`, `"params":{"program.tiling.bm":"64",`, 1),
		strings.Replace(first, `"status":"ok"`, `"status":"ok","status":"ok"`, 1),
		strings.Replace(first, `"hplmxp.n":null`, `"hplmxp.n":[{"a":1,"b":{"a":1,"a":2}}]`, 1),
		first + "}",
	} {
		f.Add([]byte(first + "\n" + r + "\n"))
	}
	f.Add([]byte(first + "\n" + first[:40]))
	f.Add([]byte(first + "\n" + first))
	f.Add([]byte(first + "\n\x00\x00\x00\x00"))
	f.Add([]byte(first[:40] + "\n" + string(lines[1])))
	f.Add([]byte(first + "\n   "))
	f.Fuzz(func(t *testing.T, data []byte) {
		recs, tail, err := readResults("results.jsonl", bytes.NewReader(data), s, nil)
		if err != nil {
			if !badinput.Is(err) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("not one line of bad input: %v", err)
			}
			return
		}
		if tail.end > int64(len(data)) || tail.end < 0 {
			t.Fatalf("end %d of %d bytes", tail.end, len(data))
		}
		for line := range bytes.Lines(data[:tail.end]) {
			if key, ok := refDupKey(line); ok {
				t.Fatalf("took a record that gives key %q twice: %s", key, line)
			}
		}
		if tail.torn > 0 {
			last := data[bytes.LastIndexByte(data, '\n')+1:]
			if bytes.Count(data, []byte("\n")) != tail.torn-1 || json.Valid(last) {
				t.Fatalf("line %d taken as cut off: %q", tail.torn, last)
			}
		}
		fixed := data[:tail.end:tail.end]
		if !tail.eol {
			fixed = append(fixed, '\n')
		}
		again, tail2, err := readResults("results.jsonl", bytes.NewReader(fixed), s, nil)
		if err != nil || tail2 != (resultsTail{end: int64(len(fixed)), eol: true}) || len(again) != len(recs) {
			t.Fatalf("cut back to its end, %q reads as %d records, %+v, %v (not %d)", fixed, len(again), tail2, err, len(recs))
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

// refDupKey is dupKey through encoding/json's tokens (slower, simpler):
// whether the JSON line gives a key twice in one object — in the record's
// object and its "run", a key that differs only in case (as
// encoding/json matches a struct's fields) too.
func refDupKey(line []byte) (string, bool) {
	type frame struct {
		obj, fold, wantKey bool
		keys               []string
		key                string // the last key
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return "", false
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.obj && top.wantKey {
			if d, ok := tok.(json.Delim); ok && d == '}' {
				stack = stack[:len(stack)-1]
				if len(stack) == 0 {
					return "", false
				}
				if p := stack[len(stack)-1]; p.obj {
					p.wantKey = true
				}
				continue
			}
			key := tok.(string)
			for _, k := range top.keys {
				if k == key || top.fold && strings.EqualFold(k, key) {
					return key, true
				}
			}
			top.keys = append(top.keys, key)
			top.key, top.wantKey = key, false
			continue
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			fold := len(stack) == 0 || len(stack) == 1 && top.fold && strings.EqualFold(top.key, "run")
			stack = append(stack, &frame{obj: tok == json.Delim('{'), fold: fold, wantKey: true})
			continue
		case json.Delim(']'):
			stack = stack[:len(stack)-1]
			if len(stack) == 0 {
				return "", false
			}
		}
		if p := stack[len(stack)-1]; p.obj {
			p.wantKey = true
		}
	}
}
