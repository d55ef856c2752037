package sweep

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// tornNote is the end of the note --resume writes on a last line cut off.
const tornNote = ": last line cut off (no end of line, not a whole record: a write stopped by a kill, a full disk or a crash): dropped (the file is cut back to its last whole record); its point runs again\n"

// A results file whose last line a write left cut off — a killed sweep, a
// full disk, a crash: a record's start, or zeros, without an end of line
// — resumes: the line is dropped, with a note, the file cut back to its
// complete records before anything is appended, and the point runs again.
// A whole last record without its end of line is kept and the end of line
// written; blanks after the last record go.
func TestResumeTornLastLine(t *testing.T) {
	s := writeStudy(t, tinyStudy)
	full := t.TempDir()
	if _, err := Run(s, Options{Out: full, Jobs: 2}); err != nil {
		t.Fatal(err)
	}
	want := string(readFile(t, filepath.Join(full, ResultsJSONL)))
	lines := strings.SplitAfter(want, "\n")
	zeros := string(make([]byte, 300))
	for _, c := range []struct {
		name, kept, tail string
		torn             int // the line of the note, or 0: none
	}{
		{"in a string", lines[0] + lines[1], lines[2][:30], 3},
		{"in a number", lines[0] + lines[1], lines[2][:strings.Index(lines[2], `"flops.tflops":`)+17], 3},
		{"before its closing brace", lines[0], lines[1][:len(lines[1])-2], 2},
		{"the only line", "", lines[0][:10], 1},
		{"zeros", lines[0] + lines[1], zeros, 3},
		{"a start, then zeros", lines[0], lines[1][:50] + zeros, 2},
		{"not JSON", lines[0], "{not json", 2},
		{"a whole record without its end of line", lines[0] + strings.TrimSuffix(lines[1], "\n"), "", 0},
		{"blanks after the last record", lines[0] + lines[1], " \t ", 0},
	} {
		dir := t.TempDir()
		path := filepath.Join(dir, ResultsJSONL)
		if err := os.WriteFile(path, []byte(c.kept+c.tail), 0o644); err != nil {
			t.Fatal(err)
		}
		// Stopped before any point runs: the file as it is when the
		// first point is appended.
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		var log bytes.Buffer
		if _, err := Run(s, Options{Out: dir, Resume: true, Jobs: 1, SkipCheck: true, Context: ctx, Log: &log}); err == nil || !strings.Contains(err.Error(), "context canceled") {
			t.Fatalf("%s: interrupted resume: %v", c.name, err)
		}
		kept := c.kept
		if !strings.HasSuffix(kept, "\n") && kept != "" {
			kept += "\n"
		}
		if got := string(readFile(t, path)); got != kept {
			t.Errorf("%s: the file before a point is appended:\n%q\nwant\n%q", c.name, got, kept)
		}
		note := ""
		if c.torn > 0 {
			note = "sweep: " + path + ":" + string(rune('0'+c.torn)) + tornNote
		}
		if log.String() != note {
			t.Errorf("%s: log %q, want %q", c.name, log.String(), note)
		}
		// Resumed in full: the same results as one run.
		sum, err := Run(s, Options{Out: dir, Resume: true, Jobs: 2})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := string(readFile(t, path)); got != want {
			t.Errorf("%s: resumed results differ from one run's:\n%s\nwant\n%s", c.name, got, want)
		}
		if n := strings.Count(kept, "\n"); sum.Skipped != n || sum.Ran != len(s.Points)-n {
			t.Errorf("%s: %d run, %d skipped; want %d skipped", c.name, sum.Ran, sum.Skipped, n)
		}
	}
}

// A resume that rewrites the file (a record dropped to run again, here
// one from other inputs with --rerun-changed) drops the line cut off with
// it.
func TestResumeTornLastLineRewritten(t *testing.T) {
	s := writeStudy(t, tinyStudy)
	full := t.TempDir()
	if _, err := Run(s, Options{Out: full, Jobs: 2}); err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(readFile(t, filepath.Join(full, ResultsJSONL))), "\n")
	stale := regexp.MustCompile(`"inputs":"[0-9a-f]+"`).ReplaceAllString(lines[0], `"inputs":"0123456789abcdef"`)
	dir := t.TempDir()
	path := filepath.Join(dir, ResultsJSONL)
	if err := os.WriteFile(path, []byte(stale+lines[1]+lines[2][:40]), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var log bytes.Buffer
	if _, err := Run(s, Options{Out: dir, Resume: true, RerunChanged: true, Jobs: 1, SkipCheck: true, Context: ctx, Log: &log}); err == nil || !strings.Contains(err.Error(), "context canceled") {
		t.Fatalf("interrupted resume: %v", err)
	}
	if got := string(readFile(t, path)); got != lines[1] {
		t.Errorf("the file before a point is appended:\n%q\nwant\n%q", got, lines[1])
	}
	if want := "sweep: " + path + ":3" + tornNote; log.String() != want {
		t.Errorf("log %q, want %q", log.String(), want)
	}
}

// merge and plot leave out a last line cut off, with a note: its point is
// missing (merge says so, and which), not drawn; the file is left as it
// is. ReadResults refuses it, saying that --resume drops it.
func TestMergePlotTornLastLine(t *testing.T) {
	s := writeStudy(t, tinyStudy)
	var shards []string
	for i := range 2 {
		d := t.TempDir()
		if _, err := Run(s, Options{Out: d, Jobs: 2, Shard: Shard{i, 2}}); err != nil {
			t.Fatal(err)
		}
		shards = append(shards, d)
	}
	path := filepath.Join(shards[1], ResultsJSONL)
	text := string(readFile(t, path))
	lines := strings.SplitAfter(text, "\n")
	n := len(lines) - 1 // (after the last end of line, "")
	torn := strings.Join(lines[:n-1], "") + lines[n-1][:25]
	if err := os.WriteFile(path, []byte(torn), 0o644); err != nil {
		t.Fatal(err)
	}
	where := path + ":" + string(rune('0'+n)) + ": last line cut off (no end of line, not a whole record: a write stopped by a kill, a full disk or a crash): "

	if _, err := ReadResults(path, s); err == nil || err.Error() != where+"sweep --resume drops it and runs its point again" {
		t.Errorf("ReadResults: %v", err)
	}

	var log bytes.Buffer
	sum, err := Merge(s, t.TempDir(), shards, &log)
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{len(s.Points) - 1}; !slices.Equal(sum.Missing, want) {
		t.Errorf("merge: missing %v, want %v", sum.Missing, want)
	}
	if want := "sweep merge: " + where + "left out (sweep --resume -o " + shards[1] + " drops it and runs its point again)\n"; !strings.HasPrefix(log.String(), want) {
		t.Errorf("merge: log %q, want it to start with %q", log.String(), want)
	}

	log.Reset()
	ran := 0
	for _, l := range lines[:n-1] {
		if !strings.Contains(l, `"status":"failed"`) {
			ran++
		}
	}
	if _, records, _, err := Redraw(s, shards[1], &log); err != nil || records != ran {
		t.Errorf("plot: %d records that ran, %v; want %d", records, err, ran)
	}
	if want := "sweep plot: " + where + "not drawn (sweep --resume -o " + shards[1] + " drops it and runs its point again)\n"; !strings.HasPrefix(log.String(), want) {
		t.Errorf("plot: log %q, want it to start with %q", log.String(), want)
	}
	if got := string(readFile(t, path)); got != torn {
		t.Errorf("merge or plot changed the shard's file")
	}
}
