package sweep

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"
)

// BenchmarkReadResults reads a results.jsonl of 4096 records (a 64×64
// grid, five metrics each), as --resume, merge and plot read one: the
// cost of parsing and checking a large study's records.
//
//	go test -run XXX -bench ReadResults -benchmem ./sweep/
func BenchmarkReadResults(b *testing.B) {
	s := writeStudy(b, "program: prog.yaml\nvary:\n  program.m: 1..64\n  program.n: 1..64\n"+
		"metrics: [flops.tflops, time.seconds, buffers.L1.peak_fraction, program.tiling.bn, hplmxp.n]\n")
	data := benchResults(b, s)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		recs, _, err := readResults("results.jsonl", bytes.NewReader(data), s, nil)
		if err != nil || len(recs) != len(s.Points) {
			b.Fatalf("%d records, %v", len(recs), err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(s.Points)), "ns/record")
}

// benchResults returns a record of every point of s, as a sweep writes
// them (one line each, in index order).
func benchResults(b *testing.B, s *Study) []byte {
	b.Helper()
	var buf bytes.Buffer
	for _, p := range s.Points {
		r := Record{Index: p.Index, Params: s.paramMap(p), Run: s.stamp(p), Status: StatusOK, Metrics: map[string]json.RawMessage{}}
		for _, m := range s.Metrics[:3] {
			r.Metrics[m] = json.RawMessage(fmt.Sprint(float64(p.Index+1) * 1.000123e-6))
		}
		r.Metrics["program.tiling.bn"] = json.RawMessage("64")
		r.Metrics["hplmxp.n"] = json.RawMessage("null")
		line, err := json.Marshal(r)
		if err != nil {
			b.Fatal(err)
		}
		buf.Write(line)
		buf.WriteByte('\n')
	}
	return buf.Bytes()
}

// BenchmarkRecordKeys sets the check for keys given twice (dupKey)
// beside the decoding it follows, over the lines of BenchmarkReadResults
// (2026-12-05: decoding ~5 µs a record, dupKey ~2 µs — 12.6 µs on
// encoding/json's tokens —; a whole read, checks against the study
// included, ~12 µs, 31 µs before dupKey scanned and metric values were
// checked without a decoder each).
func BenchmarkRecordKeys(b *testing.B) {
	s := writeStudy(b, "program: prog.yaml\nvary:\n  program.m: 1..64\n  program.n: 1..64\n"+
		"metrics: [flops.tflops, time.seconds, buffers.L1.peak_fraction, program.tiling.bn, hplmxp.n]\n")
	lines := bytes.SplitAfter(benchResults(b, s), []byte("\n"))
	lines = lines[:len(lines)-1]
	b.Run("decode", func(b *testing.B) {
		for b.Loop() {
			for _, l := range lines {
				var rec Record
				dec := json.NewDecoder(bytes.NewReader(l))
				dec.DisallowUnknownFields()
				if err := dec.Decode(&rec); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(lines)), "ns/record")
	})
	b.Run("dupKey", func(b *testing.B) {
		for b.Loop() {
			for _, l := range lines {
				if _, _, found := dupKey(l); found {
					b.Fatal("a key twice")
				}
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(lines)), "ns/record")
	})
}
