package sweep

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/davinci-sim/davinci-sim/machines"
	"github.com/davinci-sim/davinci-sim/programs"
)

// probeAll returns each point's probe (its refusal's text, "" for none,
// and the set's key), with the machines kept in machs (nil: none).
func probeAll(s *Study, machs *machineCache) []string {
	var out []string
	for _, p := range s.Points {
		refusal, key := s.probe(p, 0, machs, nil)
		msg := ""
		if refusal != nil {
			msg = refusal.Error()
		}
		out = append(out, strings.Join(key, ",")+" | "+msg)
	}
	return out
}

// The probes that take their machines from checkSet's cache refuse what
// the probes that load them refuse, point by point: points whose machines
// differ by an override (machine.* varied), by the machine named
// (program.machine varied; the study's machine, which the refusals of the
// program's machine name), or by the text of the machine file (changed
// between two probes) are refused as their machines say.
func TestProbeCacheSameRefusals(t *testing.T) {
	machineFile := func(l0a string) string {
		text, err := machines.Text("ascend-910a")
		if err != nil {
			t.Fatal(err)
		}
		return strings.Replace(string(text), "L0A: 64KiB", "L0A: "+l0a, 1)
	}
	for _, c := range []struct {
		name, study string
		// differ: points that must not be refused alike (a wrong machine
		// for one of them would refuse it as the other).
		differ [2]int
	}{
		// bm·bk = 256·64 fp16 = 32 KiB: refused by L0A 16KiB only.
		{"machine override", "set: {program.tiling.bm: 256}\nvary: {machine.core.buffers.L0A: [16KiB, 64KiB], program.m: [256, 512]}\n", [2]int{0, 3}},
		{"machine cores", "set: {program.tiling.bm: 1024}\nvary: {machine.cores: [1, 2]}\n", [2]int{-1, -1}},
		{"program.machine", "set: {program.tiling.bm: 256}\nvary: {program.machine: [m16.yaml, ascend-910a], program.n: [256, 512]}\n", [2]int{0, 3}},
		{"study machine", "machine: a100\nset: {program.tiling.bm: 256}\nvary: {program.m: [256, 512]}\n", [2]int{-1, -1}},
		{"study machine file", "machine: m16.yaml\nset: {program.tiling.bm: 256}\nvary: {program.m: [256, 512], machine.cores: [1, 2]}\n", [2]int{-1, -1}},
	} {
		s := writeStudy(t, "program: prog.yaml\nmetrics: [time.seconds]\n"+c.study)
		if err := os.WriteFile(filepath.Join(s.Dir, "m16.yaml"), []byte(machineFile("16KiB")), 0o644); err != nil {
			t.Fatal(err)
		}
		want := probeAll(s, nil)
		machs := newMachineCache(probeMachines)
		for round := range 2 { // the second: every machine from the cache
			if got := probeAll(s, machs); !reflect.DeepEqual(got, want) {
				t.Errorf("%s, round %d: probes with the cache\n%q\nwant\n%q", c.name, round, got, want)
			}
		}
		if i, j := c.differ[0], c.differ[1]; i >= 0 && want[i] == want[j] {
			t.Errorf("%s: points %d and %d probed alike (%q): the test tells no machine from the other", c.name, i, j, want[i])
		}
	}

	// The machine file changed between two probes: the second is refused
	// (or not) as the file now says.
	s := writeStudy(t, "program: prog.yaml\nmetrics: [time.seconds]\nmachine: m.yaml\nset: {program.tiling.bm: 256}\nvary: {program.m: [256, 512]}\n")
	path := filepath.Join(s.Dir, "m.yaml")
	machs := newMachineCache(probeMachines)
	var got []string
	for _, l0a := range []string{"64KiB", "16KiB", "64KiB"} {
		if err := os.WriteFile(path, []byte(machineFile(l0a)), 0o644); err != nil {
			t.Fatal(err)
		}
		got = append(got, probeAll(s, machs)...)
		got = append(got, probeAll(s, machs)...)
	}
	for i, g := range got {
		if refused := strings.Contains(g, "L0A"); refused != (i/4 == 1) {
			t.Errorf("probe %d (L0A %s): %q", i, []string{"64KiB", "16KiB", "64KiB"}[i/4], g)
		}
	}
}

// The cache keeps the machines used last, max of them: a study varying a
// machine key over more values than that loads them again (the same
// refusals), and the cache stays at max.
func TestProbeCacheBounded(t *testing.T) {
	s := writeStudy(t, "program: prog.yaml\nmetrics: [time.seconds]\nset: {program.tiling.bm: 1024}\nvary: {machine.cores: 1..12, program.m: [256, 512]}\n")
	want := probeAll(s, nil)
	machs := newMachineCache(5)
	for range 2 {
		if got := probeAll(s, machs); !reflect.DeepEqual(got, want) {
			t.Errorf("probes with a cache of 5\n%q\nwant\n%q", got, want)
		}
		if len(machs.m) != 5 {
			t.Errorf("%d machines kept, want 5", len(machs.m))
		}
	}
}

// recordingCache is a programs.MachineCache that keeps every machine
// loaded, with what it was loaded from.
type recordingCache struct {
	loaded []keptMachine
}

type keptMachine struct {
	ref string
	ovs []machines.Override
	m   *machines.Machine
}

func (r *recordingCache) Machine(ref string, ovs []machines.Override) *machines.Machine {
	for _, l := range r.loaded {
		if l.ref == ref && reflect.DeepEqual(l.ovs, ovs) {
			return l.m
		}
	}
	return nil
}

func (r *recordingCache) Loaded(ref string, ovs []machines.Override, m *machines.Machine) {
	r.loaded = append(r.loaded, keptMachine{ref, slices.Clone(ovs), m})
}

// A run does not modify the machine it takes from RunHooks.Machines — the
// probes share one machine among their points: after the probe (a build)
// of every example program, twice (the second on the machine the first
// loaded), and after runs of small ones, each machine kept is the one
// machines.Load returns afresh.
func TestProbeCacheMachinesUnchanged(t *testing.T) {
	entries, err := fs.ReadDir(programs.Examples, "examples")
	if err != nil {
		t.Fatal(err)
	}
	cache := &recordingCache{}
	execute := func(name string, ovs []machines.Override, ctx context.Context) {
		data, _ := programs.Example("examples/" + name)
		for range 2 {
			f, err := programs.Parse("programs/examples/"+name, "programs/examples", data)
			if err != nil {
				t.Fatal(err)
			}
			programs.Execute(f, programs.Options{Overrides: ovs}, programs.RunHooks{Context: ctx, Machines: cache})
		}
	}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, e := range entries {
		execute(e.Name(), nil, cancelled)
	}
	runs := map[string][]machines.Override{
		"cube-peak.yaml": nil, "flag-pingpong.yaml": nil, "gm-bandwidth-1core.yaml": nil, "a100-tensor-peak.yaml": nil,
		"hgemm.yaml":          {{Path: "program.m", Value: "256"}, {Path: "program.n", Value: "352"}, {Path: "program.k", Value: "256"}},
		"a100-hgemm.yaml":     {{Path: "program.m", Value: "512"}, {Path: "program.n", Value: "512"}, {Path: "program.k", Value: "256"}},
		"mi210-hgemm.yaml":    {{Path: "program.m", Value: "512"}, {Path: "program.n", Value: "512"}, {Path: "program.k", Value: "256"}},
		"sgemm-cube.yaml":     {{Path: "program.m", Value: "256"}, {Path: "program.n", Value: "352"}, {Path: "program.k", Value: "256"}, {Path: "machine.cores", Value: "4"}},
		"lu-fused-small.yaml": nil,
	}
	if testing.Short() {
		runs = map[string][]machines.Override{"cube-peak.yaml": nil}
	}
	for name, ovs := range runs {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		execute(name, ovs, ctx)
		cancel()
	}
	if len(cache.loaded) < 5 {
		t.Fatalf("%d machines loaded: want the examples' several", len(cache.loaded))
	}
	for _, l := range cache.loaded {
		fresh, err := machines.Load(l.ref, l.ovs)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(l.m, fresh) {
			t.Errorf("machine %s (overrides %v) modified by the runs that took it", l.ref, l.ovs)
		}
	}
}

// A run that takes its machine from RunHooks.Machines is refused as one
// that loads it: a refusal of the program's machine key names the run's
// machine (-m, a study's machine), not the file's, the first run (which
// loads it) and the second (which takes it) alike.
func TestMachinesTakenRefuseAsLoaded(t *testing.T) {
	path := filepath.Join(t.TempDir(), "program.yaml")
	if err := os.WriteFile(path, []byte("kind: ozaki\nmachine: b200\nm: 64\nn: 64\nk: 64\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	refusal := func(cache programs.MachineCache) string {
		f, err := programs.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		_, err = programs.Execute(f, programs.Options{Machine: "v100"}, programs.RunHooks{Machines: cache})
		if err == nil {
			t.Fatal("ozaki on v100 ran")
		}
		return f.NamedOverride(err).Error()
	}
	want := refusal(nil)
	if !strings.Contains(want, "(the run's machine v100, not the file's)") {
		t.Fatalf("refusal %q: want it to name the run's machine", want)
	}
	cache := &recordingCache{}
	for i := range 2 {
		if got := refusal(cache); got != want {
			t.Errorf("run %d with the cache: %q, want %q", i, got, want)
		}
	}
	if len(cache.loaded) != 1 {
		t.Errorf("%d machines loaded, want v100 once", len(cache.loaded))
	}
}
