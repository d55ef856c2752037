package sweep

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/davinci-sim/davinci-sim/machines"
	"github.com/davinci-sim/davinci-sim/programs"
)

// probeAllWith is probeAll with the program files kept in progs (nil:
// none).
func probeAllWith(s *Study, machs *machineCache, progs *programCache) []string {
	var out []string
	for _, p := range s.Points {
		refusal, key := s.probe(p, 0, machs, progs)
		msg := ""
		if refusal != nil {
			msg = refusal.Error()
		}
		out = append(out, strings.Join(key, ",")+" | "+msg)
	}
	return out
}

// The probes that take their program files from checkSet's cache refuse
// what the probes that parse them refuse, point by point: a point's
// overrides do not stay in the file for the next (explicit points setting
// other keys), points of two programs (vary: program, an example named
// by its name) get their own, and a program file changed between two
// probes is refused as it now says.
func TestProgramCacheSameRefusals(t *testing.T) {
	other := strings.Replace(tinyProgram, "n: 512", "n: 1024", 1)
	for _, c := range []struct {
		name, study string
		// differ: points that must not be refused alike (a wrong file
		// for one of them would refuse it as the other).
		differ [2]int
	}{
		{"explicit points", "points: [{program.m: -256, program.tiling.bm: 64}, {program.m: 256, program.tiling.bm: 1024}, {program.m: 512, program.tiling.bm: 128}]\n", [2]int{0, 1}},
		{"set and vary", "set: {program.tiling.bm: 1024}\nvary: {program.n: [256, 512], machine.cores: [1, 2]}\n", [2]int{-1, -1}},
		{"two programs", "vary: {program: [prog.yaml, other.yaml, programs/examples/hgemm.yaml], program.tiling.bn: [1024, 64]}\n", [2]int{0, 2}},
		{"one program among several", "points: [{program: other.yaml, program.m: -256}, {program: prog.yaml, program.m: 256}, {program: other.yaml, program.m: 256}]\n", [2]int{0, 2}},
	} {
		s := writeStudy(t, "program: prog.yaml\nmetrics: [time.seconds]\n"+c.study)
		if err := os.WriteFile(filepath.Join(s.Dir, "other.yaml"), []byte(other), 0o644); err != nil {
			t.Fatal(err)
		}
		want := probeAllWith(s, nil, nil)
		progs := newProgramCache(probePrograms)
		for round := range 2 { // the second: every program from the cache
			if got := probeAllWith(s, newMachineCache(probeMachines), progs); !reflect.DeepEqual(got, want) {
				t.Errorf("%s, round %d: probes with the cache\n%q\nwant\n%q", c.name, round, got, want)
			}
		}
		if i, j := c.differ[0], c.differ[1]; i >= 0 && want[i] == want[j] {
			t.Errorf("%s: points %d and %d probed alike (%q): the test tells no file from the other", c.name, i, j, want[i])
		}
	}

	// The program file changed between two probes: the second is refused
	// (or not) as the file now says.
	s := writeStudy(t, "program: prog.yaml\nmetrics: [time.seconds]\nvary: {program.n: [256, 512]}\n")
	path := filepath.Join(s.Dir, "prog.yaml")
	progs := newProgramCache(probePrograms)
	var got []string
	for _, bm := range []string{"64", "1024", "64"} {
		if err := os.WriteFile(path, []byte(strings.Replace(tinyProgram, "bm: 64", "bm: "+bm, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		got = append(got, probeAllWith(s, nil, progs)...)
		got = append(got, probeAllWith(s, nil, progs)...)
	}
	for i, g := range got {
		if refused := strings.Contains(g, `key "tiling"`); refused != (i/4 == 1) {
			t.Errorf("probe %d (bm %s): %q", i, []string{"64", "1024", "64"}[i/4], g)
		}
	}
}

// The cache keeps the program files used last, max of them: a study
// varying its program over more files parses them again (the same
// refusals), and the cache stays at max.
func TestProgramCacheBounded(t *testing.T) {
	var files []string
	for i := range 6 {
		files = append(files, fmt.Sprintf("p%d.yaml", i))
	}
	s := writeStudy(t, "program: prog.yaml\nmetrics: [time.seconds]\nvary: {program: ["+strings.Join(files, ", ")+"], program.n: [256, 512]}\n")
	for i, name := range files {
		text := strings.Replace(tinyProgram, "m: 256", "m: "+[]string{"256", "-256"}[i%2], 1)
		if err := os.WriteFile(filepath.Join(s.Dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want := probeAllWith(s, nil, nil)
	progs := newProgramCache(3)
	for range 2 {
		if got := probeAllWith(s, nil, progs); !reflect.DeepEqual(got, want) {
			t.Errorf("probes with a cache of 3\n%q\nwant\n%q", got, want)
		}
		if len(progs.m) != 3 {
			t.Errorf("%d program files kept, want 3", len(progs.m))
		}
	}
}

// A probe does not modify the program file it takes from the cache: after
// the probe (a build, with overrides) of every example program, twice,
// each file kept holds the configuration a parse of its text gives, and
// the copy it hands out decodes as that parse does.
func TestProgramCacheFilesUnchanged(t *testing.T) {
	entries, err := fs.ReadDir(programs.Examples, "examples")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	progs := newProgramCache(len(entries))
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	ovs := []machines.Override{{Path: "program.m", Value: "96"}, {Path: "program.n", Value: "96"}, {Path: "program.numerics", Value: "off"}}
	for _, e := range entries {
		written := "programs/examples/" + e.Name()
		path := filepath.Join(dir, written) // (no file there: the example)
		for range 2 {
			f, err := progs.read(path, written)
			if err != nil {
				t.Fatal(err)
			}
			var use []machines.Override
			for _, o := range ovs {
				if rest, _ := machines.CutPrefixFold(o.Path, "program."); f.Kind.HasKey(rest) {
					use = append(use, o)
				}
			}
			programs.Execute(f, programs.Options{Overrides: use}, programs.RunHooks{Context: cancelled})
		}
	}
	if len(progs.m) != len(entries) {
		t.Fatalf("%d program files kept, want the %d examples", len(progs.m), len(entries))
	}
	for _, e := range progs.m {
		fresh, err := readProgram(filepath.Join(dir, e.v.Path), e.v.Path)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(e.v.Config.Viper().AllSettings(), fresh.Config.Viper().AllSettings()) {
			t.Errorf("%s: configuration modified by the probes that took it", e.v.Path)
		}
		if e.v.Kind.Params == nil {
			continue
		}
		copied, err := e.v.Again()
		if err != nil {
			t.Fatal(err)
		}
		a, b := reflect.New(e.v.Kind.Params).Interface(), reflect.New(e.v.Kind.Params).Interface()
		errA, errB := copied.Decode(a, programs.Options{}), fresh.Decode(b, programs.Options{})
		if !reflect.DeepEqual(a, b) || (errA == nil) != (errB == nil) {
			t.Errorf("%s: the copy decodes to %+v (%v), a parse to %+v (%v)", e.v.Path, a, errA, b, errB)
		}
	}
}
