package sweep

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// smallHost makes this host's default bound on a run's host memory bytes
// for the rest of the test (a host that small).
func smallHost(t *testing.T, bytes int64) {
	t.Helper()
	was := defaultHostBytes
	defaultHostBytes = func() int64 { return bytes }
	t.Cleanup(func() { defaultHostBytes = was })
}

// A point refused for its host memory is recorded so (host_memory_bytes:
// the bound it passed), and --resume runs it again where the bound is now
// larger — a larger --max-memory (MemoryBudget), or a host with more
// memory — but not under the same bound, whose refusal would be the same.
// SGEMM-cube 256×256×512 with full numerics is estimated at 63 MiB (48
// bytes an element of A, B and C over the run's 48 MiB): refused on a host
// whose bound is 56 MiB; with numerics off it runs there.
func TestResumeRerunsHostMemoryRefusals(t *testing.T) {
	const small = 56 << 20
	study := "program: prog.yaml\nmetrics: [flops.tflops]\nvary: {program.numerics: [off, full]}\n"
	first := func(t *testing.T, s *Study) string {
		t.Helper()
		out := t.TempDir()
		sum, err := Run(s, Options{Out: out, Jobs: 1})
		if err != nil || sum.Ran != 2 || sum.Failed != 1 || sum.BadInput != 1 || sum.HostMemory != 1 {
			t.Fatalf("first run: %+v, %v; want the full-numerics point refused (bad input, as a single run's exit 2)", sum, err)
		}
		recs, err := ReadResults(filepath.Join(out, ResultsJSONL), s)
		if err != nil || len(recs) != 2 {
			t.Fatalf("records: %+v, %v", recs, err)
		}
		if r := recs[1]; r.Status != StatusFailed || r.HostMemoryBytes != small || !strings.Contains(r.Error, "more than the run may take (56MiB, --max-memory)") {
			t.Fatalf("point 1: %+v; want failed, host_memory_bytes %d, the bound named", r, small)
		}
		if r := recs[0]; r.Status != StatusOK || r.HostMemoryBytes != 0 {
			t.Fatalf("point 0: %+v; want ok", r)
		}
		return out
	}
	resumed := func(t *testing.T, s *Study, out string, o Options) {
		t.Helper()
		o.Out, o.Jobs, o.Resume = out, 1, true
		sum, err := Run(s, o)
		if err != nil || sum.Ran != 1 || sum.RerunHostMemory != 1 || sum.Skipped != 1 || sum.Failed != 0 {
			t.Fatalf("resumed with a larger bound: %+v, %v; want the refused point run again, and finished", sum, err)
		}
		recs, err := ReadResults(filepath.Join(out, ResultsJSONL), s)
		if err != nil || len(recs) != 2 || recs[1].Status != StatusOK || recs[1].HostMemoryBytes != 0 || recs[1].Error != "" {
			t.Fatalf("records after: %+v, %v", recs, err)
		}
	}

	t.Run("larger --max-memory", func(t *testing.T) {
		smallHost(t, small)
		s := writeStudy(t, study)
		out := first(t, s)
		before := readFile(t, filepath.Join(out, ResultsJSONL))
		for _, budget := range []int64{0, small, 32 << 20} { // (a smaller budget leaves each point the host's bound)
			sum, err := Run(s, Options{Out: out, Jobs: 1, Resume: true, MemoryBudget: budget})
			if err != nil || sum.Ran != 0 || sum.Skipped != 2 || sum.RerunHostMemory != 0 {
				t.Fatalf("resumed under the same bound (budget %d): %+v, %v; want nothing run again", budget, sum, err)
			}
		}
		if after := readFile(t, filepath.Join(out, ResultsJSONL)); string(after) != string(before) {
			t.Errorf("results.jsonl changed by resumes that ran nothing:\n%s\nwas\n%s", after, before)
		}
		resumed(t, s, out, Options{MemoryBudget: 128 << 20})
	})
	t.Run("larger host", func(t *testing.T) {
		smallHost(t, small)
		s := writeStudy(t, study)
		out := first(t, s)
		smallHost(t, 1<<30)
		resumed(t, s, out, Options{})
	})
	t.Run("shard", func(t *testing.T) { // (a shard runs again its own points only)
		smallHost(t, small)
		s := writeStudy(t, study)
		out := first(t, s)
		sum, err := Run(s, Options{Out: out, Jobs: 1, Resume: true, MemoryBudget: 128 << 20, Shard: Shard{I: 0, N: 2}})
		if err != nil || sum.Ran != 0 || sum.RerunHostMemory != 0 {
			t.Fatalf("shard 0/2 resumed: %+v, %v; want point 1, shard 1's, left as recorded", sum, err)
		}
	})
}

// host_memory_bytes is a positive number of bytes, of a failed point: a
// record holding it otherwise is refused, naming the key.
func TestHostMemoryBytesChecked(t *testing.T) {
	s := writeStudy(t, "program: prog.yaml\nmetrics: [flops.tflops]\nvary: {program.numerics: [off, full]}\n")
	for _, line := range []string{
		`{"index":0,"params":{"program.numerics":"off"},"run":{"inputs":"x"},"status":"ok","host_memory_bytes":1024,"metrics":{"flops.tflops":1}}`,
		`{"index":0,"params":{"program.numerics":"off"},"run":{"inputs":"x"},"status":"failed","error":"e","host_memory_bytes":-1,"metrics":{"flops.tflops":null}}`,
	} {
		path := filepath.Join(t.TempDir(), ResultsJSONL)
		if err := os.WriteFile(path, []byte(line+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadResults(path, s); err == nil || !strings.Contains(err.Error(), `key "host_memory_bytes"`) {
			t.Errorf("%s: %v, want host_memory_bytes refused", line, err)
		}
	}
}
