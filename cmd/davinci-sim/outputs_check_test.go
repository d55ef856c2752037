package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// -o DIR holding a report.json that no run wrote (another program's, a
// file that is not JSON) is not a previous run's output: refused, so the
// run does not remove the arrays beside it; a previous run's (its version,
// machine and sim) is accepted.
func TestOutDirForeignReport(t *testing.T) {
	for _, c := range []struct {
		name, report string
		ok           bool
	}{
		{"not json", "not json at all\n", false},
		{"another tool's", `{"version": "1.2", "results": [1, 2]}`, false},
		{"machine not a name", `{"version": "1", "machine": {"x": 1}, "sim": {}}`, false},
		{"two values", `{"version": "1", "machine": "m", "sim": {}} {}`, false},
		{"a brace after", `{"version": "1", "machine": "m", "sim": {}}}`, false},
		{"empty", "", false},
		{"a run's", `{"version": "0.9.0-dev", "machine": "a100", "sim": {"events": 3}}`, true},
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, reportFile), []byte(c.report), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "mydata.npy"), []byte("precious"), 0o644); err != nil {
			t.Fatal(err)
		}
		err := checkOutDir(dir)
		if c.ok != (err == nil) {
			t.Errorf("%s: checkOutDir: %v, want accepted %v", c.name, err, c.ok)
		} else if err != nil && !strings.Contains(err.Error(), "not a davinci-sim report") {
			t.Errorf("%s: %v, want it to say the report.json is not a run's", c.name, err)
		}
	}
	// A report writeOutDir wrote is a run's.
	dir := filepath.Join(t.TempDir(), "out")
	rep, outs := outRun(4, "C")
	if err := writeOutDir(dir, rep, outs); err != nil {
		t.Fatal(err)
	}
	if err := checkOutDir(dir); err != nil {
		t.Errorf("a run's own output directory refused: %v", err)
	}
}

// -o DIR that is (or runs through) a symbolic link to a directory that
// does not exist is refused before the run (MkdirAll failed after it:
// "file exists", exit 1); a link to an existing directory is fine.
func TestOutDirDanglingLink(t *testing.T) {
	tmp := t.TempDir()
	if err := os.Symlink(filepath.Join(tmp, "missing"), filepath.Join(tmp, "dangling")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(tmp, "real"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("real", filepath.Join(tmp, "good")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		dir string
		ok  bool
	}{
		{filepath.Join(tmp, "dangling"), false},
		{filepath.Join(tmp, "dangling", "sub"), false},
		{filepath.Join(tmp, "good", "sub"), true},
		{filepath.Join(tmp, "good"), true},
		{filepath.Join(tmp, "new", "sub"), true},
	} {
		err := checkOutDir(c.dir)
		if c.ok != (err == nil) {
			t.Errorf("-o %s: %v, want accepted %v", c.dir, err, c.ok)
		} else if err != nil && !strings.Contains(err.Error(), "symbolic link to "+filepath.Join(tmp, "missing")+", which does not exist") {
			t.Errorf("-o %s: %v", c.dir, err)
		}
	}
}

// --trace through a link to something that is not a regular file is
// refused before the run (the rename would replace it: a device node, as
// root); through a link to where a file will be, accepted.
func TestTraceThroughLink(t *testing.T) {
	tmp := t.TempDir()
	if err := os.Mkdir(filepath.Join(tmp, "d.json"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.Symlink("d.json", filepath.Join(tmp, "ld.json"))
	os.Mkdir(filepath.Join(tmp, "other"), 0o755)
	os.Symlink("other/t.json", filepath.Join(tmp, "lt.json"))
	if err := checkOutputs(runFlags{trace: filepath.Join(tmp, "ld.json")}, nil); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("--trace through a link to a directory: %v", err)
	}
	if err := checkOutputs(runFlags{trace: filepath.Join(tmp, "lt.json")}, nil); err != nil {
		t.Errorf("--trace through a link to a new file: %v", err)
	}
}

// Two outputs that land in one file through a link, or a file linked into
// the -o directory, are refused as the same paths are (both written, the
// last won: a trace lost without a word).
func TestOutputsCollideThroughLinks(t *testing.T) {
	tmp := t.TempDir()
	os.Symlink("p.prof", filepath.Join(tmp, "l.json"))
	os.Mkdir(filepath.Join(tmp, "r1"), 0o755)
	os.Symlink(filepath.Join("r1", "report.json"), filepath.Join(tmp, "t.json"))
	os.Symlink("r1", filepath.Join(tmp, "r1link"))
	for _, c := range []struct {
		f    runFlags
		want string
	}{
		{runFlags{trace: filepath.Join(tmp, "l.json"), profiles: [2]string{filepath.Join(tmp, "p.prof")}}, "--trace and --cpuprofile: both write"},
		{runFlags{trace: filepath.Join(tmp, "t.json"), out: filepath.Join(tmp, "r1")}, "in the -o directory"},
		{runFlags{trace: filepath.Join(tmp, "r1", "x.json"), out: filepath.Join(tmp, "r1link")}, "in the -o directory"},
	} {
		if err := checkOutputs(c.f, nil); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.f, err, c.want)
		}
	}
}
