package main

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// wallRE matches the wall-time part of the summary's events line ("in 0.039
// s (2.44e+06 events/s)"): the host's, not the simulation's.
var wallRE = regexp.MustCompile(` in [0-9.]+ s \([0-9.e+]+ events/s\)`)

// readmeRun is an output the README shows: the command's arguments and
// the lines it shows ("..." where it leaves lines out).
type readmeRun struct {
	args []string
	want []string
}

// readmeRuns returns the outputs README.md shows: the quick start's (a
// block starting "machine ascend-910a, program sgemm-cube", of the
// README's main command) and every block starting "$ go run
// ./cmd/davinci-sim run …".
func readmeRuns(t *testing.T) []readmeRun {
	t.Helper()
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var runs []readmeRun
	blocks := strings.Split(string(readme), "```")
	for i := 1; i < len(blocks); i += 2 {
		lines := strings.Split(strings.TrimRight(strings.TrimPrefix(blocks[i], "\n"), "\n"), "\n")
		const cmd = "$ go run ./cmd/davinci-sim "
		switch {
		case lines[0] == "machine ascend-910a, program sgemm-cube":
			runs = append(runs, readmeRun{[]string{"run", "programs/examples/sgemm-cube.yaml"}, lines})
		case strings.HasPrefix(lines[0], cmd+"run "):
			runs = append(runs, readmeRun{strings.Fields(strings.TrimPrefix(lines[0], cmd)), lines[1:]})
		}
	}
	if len(runs) < 4 {
		t.Fatalf("README.md shows %d runs' output (the quick start's and blocks starting \"$ go run ./cmd/davinci-sim run\"); this test expects 4: update it", len(runs))
	}
	return runs
}

// TestReadmeOutputs runs each command whose output README.md shows and
// compares: the README's lines must be the run's, line for line but the
// wall time, each stretch between "..." lines found in the run's output
// in order (the first at its start, the last at its end unless a "..."
// follows it), the error line main prints included. The README shows real
// output, and a change that moves the simulation must move the README with
// it (figures the docs quoted had drifted without a check).
func TestReadmeOutputs(t *testing.T) {
	for _, r := range readmeRuns(t) {
		t.Run(strings.Join(r.args[1:], " "), func(t *testing.T) {
			out, code, err := runCLI(t, r.args...)
			if err != nil {
				if msg := errorText(err, code); msg != "" {
					out += "davinci-sim: " + msg + "\n"
				}
			}
			got := strings.Split(strings.TrimRight(wallRE.ReplaceAllString(out, ""), "\n"), "\n")
			want := strings.Split(wallRE.ReplaceAllString(strings.Join(r.want, "\n"), ""), "\n")
			// Stretches of the README's lines between "..." lines.
			var parts [][]string
			for part := range strings.SplitSeq(strings.Join(want, "\n"), "\n...") {
				parts = append(parts, strings.Split(strings.Trim(part, "\n"), "\n"))
			}
			open := strings.HasSuffix(strings.Join(want, "\n"), "\n...")
			if open {
				parts = parts[:len(parts)-1]
			}
			at := 0
			for i, p := range parts {
				j := indexLines(got[at:], p)
				switch {
				case j < 0:
					t.Fatalf("README.md shows, for %q, lines the run does not print in that order:\n%s\n--- the run printed (wall times masked):\n%s", r.args, strings.Join(p, "\n"), strings.Join(got, "\n"))
				case i == 0 && j != 0:
					t.Fatalf("README.md's output for %q does not start as the run's: the run printed first\n%s", r.args, strings.Join(got[:j], "\n"))
				}
				at += j + len(p)
			}
			if !open && at != len(got) {
				t.Errorf("README.md's output for %q ends before the run's: the run printed then\n%s", r.args, strings.Join(got[at:], "\n"))
			}
		})
	}
}

// indexLines returns the index of the first run of lines equal to p in
// lines, or −1.
func indexLines(lines, p []string) int {
	for i := 0; i+len(p) <= len(lines); i++ {
		if slices.Equal(lines[i:i+len(p)], p) {
			return i
		}
	}
	return -1
}
