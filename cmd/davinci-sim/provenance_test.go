package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/davinci-sim/davinci-sim/machines"
	"github.com/davinci-sim/davinci-sim/programs"
	"github.com/davinci-sim/davinci-sim/sim"
	"github.com/davinci-sim/davinci-sim/version"
)

// report.json names the build and the effective machine: version, the --set
// options as given, and machine_config, which read back as a machine file
// is the machine the run used (overrides applied).
func TestReportProvenance(t *testing.T) {
	sets := []string{"machine.cores=40", "machine.core.buffers.L1=512KiB"}
	args := []string{"run", examplePath("cube-peak.yaml"), "--json", "-q"}
	for _, s := range sets {
		args = append(args, "--set", s)
	}
	out, code, err := runCLI(t, args...)
	if code != 0 {
		t.Fatalf("exit %d: %v\n%s", code, err, out)
	}
	var rep struct {
		Version       string         `json:"version"`
		Overrides     []string       `json:"overrides"`
		MachineConfig map[string]any `json:"machine_config"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Version != version.String() || rep.Version == "" {
		t.Errorf("version %q, want %q", rep.Version, version.String())
	}
	if !slices.Equal(rep.Overrides, sets) {
		t.Errorf("overrides %q, want %q", rep.Overrides, sets)
	}
	cfg, err := json.Marshal(rep.MachineConfig)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "m.yaml") // JSON is YAML
	if err := os.WriteFile(file, cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := machines.Load(file, nil)
	if err != nil {
		t.Fatalf("machine_config is not a valid machine file: %v", err)
	}
	ovs, _ := machines.ParseOverrides(sets)
	want, err := machines.Load("ascend-910a", ovs)
	if err != nil {
		t.Fatal(err)
	}
	if string(got.YAML(nil)) != string(want.YAML(nil)) {
		t.Errorf("machine_config differs from the effective machine:\n%s\nwant\n%s", got.YAML(nil), want.YAML(nil))
	}
	if got.Cores != 40 {
		t.Errorf("cores %d, want 40", got.Cores)
	}
}

// --version and the version command print the same line.
func TestVersionFlag(t *testing.T) {
	a, code, _ := runCLI(t, "--version")
	b, code2, _ := runCLI(t, "version")
	if code != 0 || code2 != 0 || a != b || a != "davinci-sim "+version.String()+"\n" {
		t.Errorf("--version %q (exit %d), version %q (exit %d)", a, code, b, code2)
	}
}

// The progress line shows the share done and an ETA once both can be told.
func TestProgressLine(t *testing.T) {
	if got := progressLine(nil, 0, 5, time.Second, time.Second, false); strings.Contains(got, "%") {
		t.Errorf("unmetered: %q", got)
	}
	f, err := programs.Parse("p.yaml", ".", []byte("kind: hgemm\nm: 64\nn: 64\nk: 64\nnumerics: off\n"))
	if err != nil {
		t.Fatal(err)
	}
	var m programs.WorkMeter
	if _, err := programs.Execute(f, programs.Options{}, programs.RunHooks{Meter: &m}); err != nil {
		t.Fatal(err)
	}
	for _, skips := range []bool{false, true} { // (done: nothing left to skip)
		if got := progressLine(&m, 0, 5, 10*time.Second, 10*time.Second, skips); !strings.Contains(got, "100.0 % of ") || !strings.Contains(got, "ETA 0s") {
			t.Errorf("metered (fast-forward %v): %q", skips, got)
		}
	}
	// Part done, fast-forward on: the time left at the rate so far is at
	// most that (a skip takes the share done ahead at once).
	var part programs.WorkMeter
	var with, without string
	hooks := programs.RunHooks{Meter: &part, ProgressEvery: 256, Progress: func(now sim.Time, events uint64) {
		if frac, ok := part.Fraction(); ok && frac > 0.2 && frac < 0.8 && with == "" {
			with = progressLine(&part, now, events, 10*time.Second, 10*time.Second, true)
			without = progressLine(&part, now, events, 10*time.Second, 10*time.Second, false)
		}
	}}
	g, err := programs.Parse("p.yaml", ".", []byte("kind: hgemm\nm: 1024\nn: 1024\nk: 1024\nnumerics: off\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := programs.Execute(g, programs.Options{}, hooks); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(with, "s (fast-forward); simulated") || !strings.Contains(with, ", ETA ≤ ") {
		t.Errorf("part done, fast-forward: %q", with)
	}
	if !strings.Contains(without, ", ETA ") || strings.Contains(without, "≤") || strings.Contains(without, "fast-forward") {
		t.Errorf("part done: %q", without)
	}
}
