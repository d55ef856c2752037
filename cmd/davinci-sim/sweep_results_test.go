package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A results.jsonl whose last line a write left cut off (kill -9, a crash)
// resumes with a note, the line dropped and its point run again; merge
// and plot leave it out with a note. A line cut off in the middle of the
// file, or one with its end of line, and a key given twice are bad input:
// exit 2, one line naming the file, the line and the key.
func TestSweepResultsCutOrTwice(t *testing.T) {
	study := sweepFixture(t, "program.tiling.bm: [64, 128, 512], machine.core.buffers.L1: [512KiB]")
	out := filepath.Join(t.TempDir(), "out")
	if msg, code, err := runCLI(t, "sweep", study, "-o", out, "-j", "2"); code != 0 {
		t.Fatalf("exit %d: %v\n%s", code, err, msg)
	}
	jl := filepath.Join(out, "results.jsonl")
	whole, err := os.ReadFile(jl)
	if err != nil {
		t.Fatal(err)
	}
	csv, _ := os.ReadFile(filepath.Join(out, "results.csv"))
	lines := strings.SplitAfter(string(whole), "\n")
	write := func(text string) {
		t.Helper()
		if err := os.WriteFile(jl, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cut := lines[0] + lines[1] + lines[2][:30]
	note := jl + ":3: last line cut off (no end of line, not a whole record: a write stopped by a kill, a full disk or a crash): "

	write(cut)
	msg, code, err := runCLI(t, "sweep", "plot", study, "-o", out)
	if want := "sweep plot: " + note + "not drawn (sweep --resume -o " + out + " drops it and runs its point again)\n"; code != 0 || !strings.HasPrefix(msg, want) {
		t.Errorf("plot: exit %d: %v\n%s\nwant it to start with %q", code, err, msg, want)
	}
	merged := filepath.Join(t.TempDir(), "merged")
	msg, code, err = runCLI(t, "sweep", "merge", study, "-o", merged, out)
	if want := "sweep merge: " + note + "left out (sweep --resume -o " + out + " drops it and runs its point again)\n"; code != 1 || !strings.HasPrefix(msg, want) || !strings.Contains(err.Error(), "1 point missing (index 2)") {
		t.Errorf("merge: exit %d: %v\n%s\nwant it to start with %q", code, err, msg, want)
	}
	msg, code, err = runCLI(t, "sweep", study, "-o", out, "--resume")
	if want := "sweep: " + note + "dropped (the file is cut back to its last whole record); its point runs again\nsweep: 3 points: 1 run, 2 already done"; code != 0 || !strings.HasPrefix(msg, want) {
		t.Errorf("resume: exit %d: %v\n%s\nwant it to start with %q", code, err, msg, want)
	}
	if got, _ := os.ReadFile(jl); string(got) != string(whole) {
		t.Errorf("resumed results.jsonl:\n%s\nwant\n%s", got, whole)
	}
	if got, _ := os.ReadFile(filepath.Join(out, "results.csv")); string(got) != string(csv) {
		t.Errorf("resumed results.csv:\n%s\nwant\n%s", got, csv)
	}

	for _, c := range []struct{ name, text, want string }{
		{"cut in the middle", lines[0][:30] + "\n" + lines[1] + lines[2], jl + `:1: corrupt record: invalid character '\n' in string literal`},
		{"cut, with its end of line", lines[0] + lines[1] + lines[2][:30] + "\n", jl + `:3: corrupt record: invalid character '\n' in string literal`},
		{"a metric twice", lines[0] + strings.Replace(lines[1], `"flops.tflops":`, `"flops.tflops":2e-06,"flops.tflops":`, 1) + lines[2], jl + `:2: key "metrics.flops.tflops" given twice`},
	} {
		write(c.text)
		for _, args := range [][]string{
			{"sweep", study, "-o", out, "--resume"},
			{"sweep", "plot", study, "-o", out},
			{"sweep", "merge", study, "-o", filepath.Join(t.TempDir(), "m"), out},
		} {
			msg, code, err := runCLI(t, args...)
			if code != 2 || err == nil || err.Error() != c.want || strings.Contains(msg, "cut off") {
				t.Errorf("%s: %s: exit %d: %v, want 2: %s\n%s", c.name, args[:2], code, err, c.want, msg)
			}
		}
		if got, _ := os.ReadFile(jl); string(got) != c.text {
			t.Errorf("%s: results.jsonl changed", c.name)
		}
	}
}
