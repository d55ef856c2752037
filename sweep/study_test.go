package sweep

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/davinci-sim/davinci-sim/badinput"
	"github.com/davinci-sim/davinci-sim/programs"
)

func TestParseRange(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"256KiB..4MiB ×2", []string{"256KiB", "512KiB", "1MiB", "2MiB", "4MiB"}},
		{"256KiB..4MiB x2", []string{"256KiB", "512KiB", "1MiB", "2MiB", "4MiB"}},
		{"256KiB .. 1MiB *2", []string{"256KiB", "512KiB", "1MiB"}},
		{"256KiB..1MiB +256KiB", []string{"256KiB", "512KiB", "768KiB", "1MiB"}},
		{"256KiB..1000KiB +256KiB", []string{"256KiB", "512KiB", "768KiB"}},
		{"-20..10 +5", []string{"-20", "-15", "-10", "-5", "0", "5", "10"}},
		{"1..4", []string{"1", "2", "3", "4"}},
		{"-3..-1", []string{"-3", "-2", "-1"}},
		{"0.5..2 ×2", []string{"0.5", "1", "2"}},
		{"1..1e+3 ×10", []string{"1", "10", "100", "1000"}},
		{"0..1 +0.25", []string{"0", "0.25", "0.5", "0.75", "1"}},
		{"5..5", []string{"5"}},
		{"1..64", strings.Fields("1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58 59 60 61 62 63 64")},
		{"1GHz..2GHz +500MHz", []string{"1GHz", "1.5GHz", "2GHz"}},
	} {
		got, err := ParseRange(c.in)
		if err != nil {
			t.Errorf("ParseRange(%q): %v", c.in, err)
			continue
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("ParseRange(%q) = %v, want %v", c.in, got, c.want)
		}
	}
}

func TestParseRangeErrors(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"1..", "want START..END"},
		{"..4", "want START..END"},
		{"4..1", "start 4 is above end 1"},
		{"256KiB..4MiB", "give a step"},
		{"0.5..2", "give a step"},
		{"1..8 ×1", "factor"},
		{"1..8 ×0.5", "factor"},
		{"0..8 ×2", "must start above 0"},
		{"1..8 +0", "positive"},
		{"1..8 +-1", "positive"},
		{"a..b +1", "not two numbers"},
		{"1KiB..2GHz ×2", "not two numbers"},
		{"1..8 2", "step must start"},
		{"0..1000000 +1", "more than"},
		{"1..2 +1e-300", "step too small"},
		{"256..1024", "769 values at the default step +1; give the step"},
		{"-9223372036854775808..9223372036854775807", "18446744073709551616 values at the default step +1"},
		{"0x10..0x20 +1", "write the endpoints in decimal"},
		{"1..0b101", "write the endpoints in decimal"},
		{"-0o7..1", "write the endpoints in decimal"},
	} {
		_, err := ParseRange(c.in)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseRange(%q): error %v, want one containing %q", c.in, err, c.want)
		}
	}
}

const goodStudy = `
description: test
program: prog.yaml
machine: ascend-910a
set: {program.numerics: off}
points:
  - {program.tiling.bm: 64, program.tiling.bn: 64}
  - {program.tiling.bn: 128, program.tiling.bm: 96}
vary:
  machine.core.buffers.L1: [512KiB, 1MiB]
  program.buffering: [single, double]
metrics: [flops.tflops, time.seconds]
plot:
  - {x: machine.core.buffers.L1, y: flops.tflops, series: program.buffering, logx: true}
  - {name: t, x: program.buffering, y: [time.seconds], where: {program.tiling.bm: 64}}
`

func TestParseStudy(t *testing.T) {
	s, err := ParseStudy("s.yaml", "dir", []byte(goodStudy))
	if err != nil {
		t.Fatal(err)
	}
	if s.Program != "prog.yaml" || s.Machine != "ascend-910a" {
		t.Errorf("program %q machine %q, want them as written", s.Program, s.Machine)
	}
	if prog, mach := s.ProgramOf(s.Points[0]); prog != filepath.Join("dir", "prog.yaml") || mach != "ascend-910a" {
		t.Errorf("point 0 runs program %q machine %q", prog, mach)
	}
	wantParams := []string{"program.tiling.bm", "program.tiling.bn", "machine.core.buffers.L1", "program.buffering"}
	if !slices.Equal(s.Params, wantParams) {
		t.Fatalf("params %v, want %v", s.Params, wantParams)
	}
	if len(s.Points) != 8 {
		t.Fatalf("%d points, want 8", len(s.Points))
	}
	// Explicit points outermost, last grid key fastest; second point's
	// keys reordered to the first point's.
	want := [][]string{
		{"64", "64", "512KiB", "single"}, {"64", "64", "512KiB", "double"},
		{"64", "64", "1MiB", "single"}, {"64", "64", "1MiB", "double"},
		{"96", "128", "512KiB", "single"}, {"96", "128", "512KiB", "double"},
		{"96", "128", "1MiB", "single"}, {"96", "128", "1MiB", "double"},
	}
	for i, p := range s.Points {
		if p.Index != i || !slices.Equal(p.Values, want[i]) {
			t.Errorf("point %d = %d %v, want %v", i, p.Index, p.Values, want[i])
		}
	}
	if len(s.Set) != 1 || s.Set[0].String() != "program.numerics=off" {
		t.Errorf("set %v", s.Set)
	}
	if len(s.Plots) != 2 || s.Plots[0].Name != "flops_tflops-vs-machine_core_buffers_L1" || !s.Plots[0].LogX ||
		s.Plots[1].Name != "t" || s.Plots[1].Where["program.tiling.bm"] != "64" {
		t.Errorf("plots %+v", s.Plots)
	}
	ovs := s.Overrides(s.Points[5])
	var got []string
	for _, o := range ovs {
		got = append(got, o.String())
	}
	wantOvs := []string{"program.numerics=off", "program.tiling.bm=96", "program.tiling.bn=128",
		"machine.core.buffers.L1=512KiB", "program.buffering=double"}
	if !slices.Equal(got, wantOvs) {
		t.Errorf("overrides %v, want %v", got, wantOvs)
	}
}

func TestParseStudyProgramParam(t *testing.T) {
	s, err := ParseStudy("s.yaml", "d", []byte("vary: {program: [a.yaml, /abs/b.yaml], machine: [ascend-910a, m.yaml]}\nmetrics: x"))
	if err != nil {
		t.Fatal(err)
	}
	prog, mach := s.ProgramOf(s.Points[1])
	if prog != "d/a.yaml" || mach != "d/m.yaml" {
		t.Errorf("point 1: %q %q", prog, mach)
	}
	prog, mach = s.ProgramOf(s.Points[2])
	if prog != "/abs/b.yaml" || mach != "ascend-910a" {
		t.Errorf("point 2: %q %q", prog, mach)
	}
	if len(s.Overrides(s.Points[0])) != 0 {
		t.Errorf("program/machine are not overrides")
	}
}

func TestParseStudyErrors(t *testing.T) {
	base := "program: p.yaml\nmetrics: [flops.tflops]\n"
	for _, c := range []struct{ text, want string }{
		{"", "empty study file"},
		{"- a", "top level must be a mapping"},
		{"program: p.yaml\nvary: {program.m: [1]}\n", `key "metrics": missing`},
		{base, `key "vary": missing`},
		{base + "vary: {}", `key "vary": empty`},
		{base + "vary: {program.m: []}", `s.yaml:3: key "vary.program.m": empty list`},
		{base + "vary: {program.m: [1, 1]}", `listed twice`},
		{base + "vary: {program.m: [032, 32]}", `value "32" listed twice (as "032": one value)`},
		{base + "vary: {program.m: [0x40, 64]}", `value "64" listed twice (as "0x40": one value)`},
		{base + "vary: {program.m: [64.0, 1_000, 64]}", `value "64" listed twice (as "64.0": one value)`},
		{base + "vary: {machine.core.buffers.L1: [1MiB, 512KiB, 1024KiB]}", `value "1024KiB" listed twice (as "1MiB": one value)`},
		{base + "points: [{program.m: 032}, {program.m: 32}]", `repeats points[0]`},
		{base + "vary: {program.m: 1..}", `want START..END`},
		{base + "vary: {program.m: 4..1}", `above end`},
		{base + "vary: {program.m: {a: 1}}", `must be a list of values or a range`},
		{base + "vary: {program.m: [[1]]}", `key "vary.program.m[0]": must be a single value`},
		{base + "vary: {core.L1: [1]}", `starting with program., machine.`},
		{base + "vary: {program..m: [1]}", `bad dotted path`},
		{base + "vary: {program.m: [1]}\nset: {program.m: 2}", `s.yaml:4: key "set.program.m": also varied`},
		// set's own line, not the file's first (nor vary's).
		{base + "vary:\n  program.m: [1]\nset:\n  program.n: 1\n  program.M: 2\n", `s.yaml:7: key "set.program.M": also varied`},
		{base + "points: [{program.m: 1}]\nset:\n  program.n: 1\n  program.m: 2\n", `s.yaml:6: key "set.program.m": also varied`},
		{base + "vary: {program.m: [1]}\nset: {program: x}", `top-level key`},
		{base + "vary: {program.m: [1]}\nsett: {}", `s.yaml:4: unknown key "sett" (did you mean "set"?); the keys are program, machine`},
		{base + "vary: {program.m: [1]}\nsett: {}\nmetricz: []\nq: 1", `s.yaml: 3 unknown keys: line 4: "sett" (did you mean "set"?); line 5: "metricz" (did you mean "metrics"?); line 6: "q"; the keys are`},
		{base + "VARY: {program.m: [1]}\nVary: {program.m: [2]}", `key "Vary": given twice (as VARY and as Vary: one key)`},
		{base + "vary: {program.m: [1]}\nprogram: q", `key "program": given twice`},
		{base + "points: []", `key "points": empty list`},
		{base + "points: [{program.m: 1}, {program.n: 1}]", `key "points[1]": has keys`},
		{base + "points: [{program.m: 1}]\nvary: {program.m: [2]}", `given twice`},
		{base + "points: [3]", `key "points[0]": must be a mapping`},
		{"metrics: [a]\nvary: {program.m: [1]}", `key "program": missing`},
		{"program: p\nmetrics: []\nvary: {program.m: [1]}", `key "metrics": empty list`},
		{"program: p\nmetrics: [a, a]\nvary: {program.m: [1]}", `listed twice`},
		{"program: p\nmetrics: [flops.tflops, FLOPS.tflops]\nvary: {program.m: [1]}", `"FLOPS.tflops" listed twice (as "flops.tflops" and "FLOPS.tflops"; paths are case-insensitive)`},
		{"program: p\nmetrics: [a..b]\nvary: {program.m: [1]}", `bad dotted path`},
		{base + "vary: {program.m: 1..1000 +1, program.n: 1..1000 +1}", `more than 100000 points`},
		{base + "vary: {program.m: [1]}\nplot: {y: flops.tflops}", `key "plot.x": missing`},
		{base + "vary: {program.m: [1]}\nplot: {x: program.m}", `key "plot.y": missing`},
		{base + "vary: {program.m: [1]}\nplot: {x: program.n, y: flops.tflops}", `neither a varied parameter`},
		{base + "vary: {program.m: [1]}\nplot: {x: program.m, y: foo}", `not one of the metrics`},
		{base + "vary: {program.m: [1]}\nplot: {x: program.m, y: flops.tflops, series: program.q}", `not a varied parameter`},
		{base + "vary: {program.m: [1]}\nplot: {x: program.m, y: flops.tflops, logx: maybe}", `want true or false`},
		{base + "vary: {program.m: [1]}\nplot: {x: program.m, y: flops.tflops, name: a/b}", `plain file name`},
		{base + "vary: {program.m: [1]}\nplot: {x: program.m, y: flops.tflops, colour: red}", `s.yaml:4: unknown key "plot.colour"; the keys are x, y, series`},
		{base + "vary: {program.m: [1]}\nplot: [{x: program.m, y: flops.tflops}, {x: program.m, y: flops.tflops, colour: red, tittle: x}]", `s.yaml: 2 unknown keys: line 4: "plot[1].colour"; line 4: "plot[1].tittle" (did you mean "title"?); the keys are x, y`},
		{base + "vary: {program.m: [1]}\nplot: {x: program.m, y: flops.tflops, roof: {Peak: 1, peak: 2, slopes: {m: 1}}}", `key "plot.roof.peak": given twice`},
		{base + "vary: {program.m: [1]}\ntitel: x", `unknown key "titel" (did you mean "title"?)`},
		{"metrics: [x]\nvary: {Machine: [a100]}", `key "vary.Machine": write "machine" in lowercase`},
		{base + "vary: {program.m: [1]}\nplot: {x: program.m, y: flops.tflops, Title: a, tittle: b}", `unknown key "plot.tittle" (did you mean "title"?)`},
		{base + "vary: {program.m: [1]}\nplot: [{x: program.m, y: flops.tflops}, {x: program.m, y: flops.tflops}]", `two plots are named`},
		{base + "vary: {program.m: [1]}\nplot: {x: program.m, y: flops.tflops, where: {program.z: 1}}", `not a varied parameter`},
		{base + "vary: {program.m: [1, 2]}\nplot: {x: program.m, y: flops.tflops, where: {program.m: 3}}", `key "plot.where.program.m": "3" is not one of its values (1, 2)`},
		{base + "vary: {program.m: [1]}\nplot: {x: program.m, y: flops.tflops, ymin: 5, ymax: 1}", `key "plot.ymin": 5 must be below ymax 1`},
		// A value a log axis cannot place (dropped with a warning after
		// the whole study had run); not where where: leaves it out.
		{base + "vary: {program.m: [0, 64], program.n: [1, 2]}\nplot: {x: program.m, y: flops.tflops, logx: true}", `key "plot.logx": x program.m is 0 at point 0, which a logarithmic axis has no place for`},
		{base + "points: [{program.m: 64, program.n: 1}, {program.m: -1, program.n: 2}]\nplot: {x: program.m, y: flops.tflops, logx: true, where: {program.n: 2}}", `x program.m is -1 at point 1`},
		{base + "vary: {program.m: [1]}\nplot: {name: a, name: b, x: program.m, y: flops.tflops}", `key "plot.name": given twice`},
		{base + "vary: {program.m: [1]}\nplot: {name: results, x: program.m, y: flops.tflops}", `"results" is taken by results.csv`},
		{base + "vary: {program.m: [1]}\nplot: {name: ../x, x: program.m, y: flops.tflops}", `a plain file name, without slashes`},
		{base + "vary: {program.m: [1], program.M: [2]}", `parameter "program.M" is given twice`},
		{base + "points: [{program.m: 1}, {program.m: 1}]", `key "points[1]": repeats points[0]`},
		// One file in two spellings (the points kept the spelling: they
		// ran twice as two values).
		{"metrics: [a]\nvary: {program: [a.yaml, ./a.yaml]}", `s.yaml:2: key "vary.program": "a.yaml" and "./a.yaml" name the same file`},
		{base + "vary: {machine: [ascend-910a, m/m.yaml, m/../m/m.yaml]}", `key "vary.machine": "m/m.yaml" and "m/../m/m.yaml" name the same file`},
		{"metrics: [a]\npoints: [{program: a.yaml, program.m: 1}, {program.m: 1, program: ./a.yaml}]", `key "points[1]": repeats points[0]`},
		{base + "points: [{program.m: 1, program.M: 2}]", `key "points[0].program.M": given twice (keys are case-insensitive)`},
		{base + "vary: {program.m: [1]}\nplot: {x: program.m, y: flops.tflops, series: program.m}", `is the x axis`},
		{base + "vary: {program.m: [1]}\nk_batch: 0", `key "k_batch": must be an integer in 1..64`},
		{base + "vary: {program.m: [1]}\nk_batch: four", `key "k_batch": must be an integer`},
		{base + "vary: {program.m: [1]}\nfast_forward: maybe", `key "fast_forward": must be true or false`},
	} {
		_, err := ParseStudy("s.yaml", ".", []byte(c.text))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want one containing %q", c.text, err, c.want)
			continue
		}
		if !badinput.Is(err) {
			t.Errorf("%q: error %v does not are marked bad input (package badinput)", c.text, err)
		}
		if strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: error is not one line: %q", c.text, err)
		}
	}
}

func TestParseShard(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Shard
		ok   bool
	}{
		{"0/1", Shard{0, 1}, true}, {"3/4", Shard{3, 4}, true}, {" 1 / 2 ", Shard{1, 2}, true},
		{"4/4", Shard{}, false}, {"-1/4", Shard{}, false}, {"1/0", Shard{}, false},
		{"1", Shard{}, false}, {"a/b", Shard{}, false}, {"", Shard{}, false},
	} {
		got, err := ParseShard(c.in)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("ParseShard(%q) = %v, %v", c.in, got, err)
		}
		if err != nil && !badinput.Is(err) {
			t.Errorf("ParseShard(%q): %v is not bad input", c.in, err)
		}
	}
	sh := Shard{1, 3}
	var got []int
	for i := range 8 {
		if sh.Has(i) {
			got = append(got, i)
		}
	}
	if !slices.Equal(got, []int{1, 4, 7}) || !(Shard{}).Has(5) {
		t.Errorf("Shard.Has: %v", got)
	}
}

func TestLookup(t *testing.T) {
	doc := map[string]any{"a": map[string]any{"B": []any{1.0, map[string]any{"c": "x"}}}}
	for _, c := range []struct {
		path string
		want any
		ok   bool
	}{
		{"a.B.0", 1.0, true}, {"a.b.1.c", "x", true}, {"a.B.2", nil, false}, {"a.B.x", nil, false},
		{"z", nil, false}, {"a.B.0.q", nil, false},
	} {
		got, ok := Lookup(doc, c.path)
		if ok != c.ok || (ok && got != c.want) {
			t.Errorf("Lookup(%q) = %v, %v", c.path, got, ok)
		}
	}
}

// FuzzParseStudy feeds arbitrary text to the study parser: a study whose
// points and metrics check, or one line of bad input naming the file —
// never a panic or a hang. Seeds: the repository's studies (emulated-gemm
// schemes, cluster and node descriptions, Ozaki, LU), and set, vary,
// points, plot and where in their forms (a scheme key and a whole inline
// scheme, a range, a roof).
func FuzzParseStudy(f *testing.F) {
	f.Add([]byte(goodStudy))
	f.Add([]byte("program: p\nmetrics: [a]\nvary: {program.m: 256KiB..4MiB ×2}"))
	f.Add([]byte("program: p\nmetrics: [a]\nvary: {program.m: -20..10 +2}\nplot: {x: program.m, y: a}"))
	f.Add([]byte("a: &x [*x]"))
	f.Add([]byte("program: p\nmetrics: [a]\nvary: {program.m: [1]}\nk_batch: 8\nfast_forward: true"))
	for _, dir := range []string{"../studies", "../studies/long"} {
		names, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
		if err != nil || len(names) == 0 {
			f.Fatal("no studies in", dir, err)
		}
		for _, name := range names {
			b, err := os.ReadFile(name)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b)
		}
	}
	f.Add([]byte("program: e.yaml\nmachine: a100\nset: {program.scheme: \"{name: le-gemm, split: fused}\", program.numerics: off}\n" +
		"vary: {program.scheme.split: [pass, fused], program.m: 1024..4096 ×2}\nmetrics: [flops.tflops, error.bits]\n" +
		"plot: {x: program.m, y: flops.tflops, series: program.scheme.split, logx: true, ymin: 0, ymax: 100, roof: {peak: 19.5, slopes: {HBM: 1.5}}}\n"))
	f.Add([]byte("program: e.yaml\nmetrics: [error.bits]\npoints:\n  - {machine: a100, program.scheme: \"{pieces: [{format: fp16}, {format: fp16, scale: 11}], groups: [{products: [hh]}, {products: [hl, lh]}]}\"}\n" +
		"  - {machine: ascend-910a, program.scheme: ootomo}\nvary: {program.k: [256, 512]}\n" +
		"plots: [{name: b, x: [program.k], y: [error.bits], where: {machine: a100}, xlabel: k}]\n"))
	f.Add([]byte("program: lu.yaml\nmachine: cloudbrain2\nset: {cluster.nodes: 2, node.npus: 4, machine.core.buffers.L1: 512KiB}\n" +
		"vary: {program.nb: [128, 256], machine: [cloudbrain2, cloudbrain2-node]}\nmetrics: [hplmxp.windows.*.seconds, time.seconds]\n"))
	f.Add([]byte("program: p\nmetrics: [a]\nvary: {program.m: 1..8, machine.l2.capacity: \"1MiB..8MiB ×2\"}\nplot: {x: program.m, y: a, where: {machine.l2.capacity: 2MiB, program.m: 3}}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ParseStudy("f.yaml", ".", data)
		if err != nil {
			if !badinput.Is(err) {
				t.Fatalf("error %v does not are marked bad input (package badinput)", err)
			}
			if msg := err.Error(); strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "f.yaml") {
				t.Fatalf("error %q: want one line naming the file", msg)
			}
			return
		}
		if s.KBatch < 0 || s.KBatch > programs.MaxKBatch {
			t.Fatalf("k_batch %d accepted", s.KBatch)
		}
		if len(s.Points) == 0 || len(s.Points) > MaxPoints || len(s.Metrics) == 0 {
			t.Fatalf("%d points, %d metrics", len(s.Points), len(s.Metrics))
		}
		for i, p := range s.Points {
			if p.Index != i || len(p.Values) != len(s.Params) {
				t.Fatalf("point %d: %+v", i, p)
			}
		}
	})
}

// Study files: one key in two spellings, a key repeated inside a plot's
// where, a plot name the file system refuses, a fractional byte step —
// each refused with one line (they were dropped, silently overridden,
// failed after the whole study ran, or rounded value by value).
func TestStudyRefusesSilentLosses(t *testing.T) {
	base := "program: p.yaml\nvary: {program.n: [64, 128]}\nmetrics: [time.seconds]\n"
	for _, c := range []struct{ text, want string }{
		{base + "plot: {x: program.n, y: time.seconds}\nplots: [{name: q, x: program.n, y: time.seconds}]\n", `key "plots": given twice (as plot and as plots: one key)`},
		{base + "title: a\ndescription: b\n", `key "description": given twice (as title and as description: one key)`},
		{base + "plot: {x: program.n, y: time.seconds, where: {program.n: 64, program.n: 128}}\n", `key "plot.where.program.n": given twice`},
		{base + "plot: {name: " + strings.Repeat("n", 300) + ", x: program.n, y: time.seconds}\n", `key "plot.name": 300 bytes: at most 200`},
		{"program: p.yaml\nvary: {machine.l2.capacity: \"100B..110B +1.5\"}\nmetrics: [time.seconds]\n", `sizes come in whole bytes`},
		{"program: p.yaml\nvary: {machine.l2.capacity: \"100B..1000B ×1.5\"}\nmetrics: [time.seconds]\n", `sizes come in whole bytes, and 100B×… gives 337.50 bytes`},
	} {
		_, err := ParseStudy("s.yaml", ".", []byte(c.text))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.text, err, c.want)
		}
	}
}

// A plot's where on program or machine names them as the study does
// (relative to the study's folder), in the points' spelling or another
// of the same file; a value that is not varied is refused (it matched
// nothing: the plot was skipped with a warning).
func TestStudyWhereProgramResolved(t *testing.T) {
	text := "vary: {program.n: [64], program: [a.yaml, b.yaml]}\nmetrics: [time.seconds]\nplot: {x: program.n, y: time.seconds, where: {program: a.yaml}}\n"
	for _, where := range []string{"a.yaml", "./a.yaml"} {
		s, err := ParseStudy("wp/s.yaml", "wp", []byte(strings.Replace(text, "{program: a.yaml}", "{program: "+where+"}", 1)))
		if err != nil {
			t.Fatal(err)
		}
		if got := s.Plots[0].Where[ParamProgram]; got != "a.yaml" {
			t.Errorf("where program %s: %q, want the points' a.yaml", where, got)
		}
	}
	if _, err := ParseStudy("wp/s.yaml", "wp", []byte(strings.Replace(text, "where: {program: a.yaml}", "where: {program: c.yaml}", 1))); err == nil || !strings.Contains(err.Error(), "is not one of its values") {
		t.Errorf("where program c.yaml: %v", err)
	}
}

// A plot's where on a size, frequency or integer matches the points'
// value however it is spelt (1024KiB for 1MiB, 032 for 32), and names it
// as the points do.
func TestStudyWhereValueSpelling(t *testing.T) {
	text := "program: p.yaml\nvary: {program.m: [32, 64], machine.core.buffers.L1: [512KiB, 1MiB]}\nmetrics: [time.seconds]\nplot: {x: program.m, y: time.seconds, where: {machine.core.buffers.L1: 1024KiB, program.m: 032}}\n"
	s, err := ParseStudy("s.yaml", ".", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	if w := s.Plots[0].Where; w["machine.core.buffers.L1"] != "1MiB" || w["program.m"] != "32" {
		t.Errorf("where %v, want the points' 1MiB and 32", w)
	}
}

// A metric no point's report has (a misspelt key in a free-form section)
// is named; one that some point has, or that only failed points lack, is
// not.
func TestNullMetrics(t *testing.T) {
	s := &Study{Metrics: []string{"buffers.NOPE.peak_fraction", "time.seconds"}}
	recs := []Record{
		{Status: StatusOK, Metrics: map[string]json.RawMessage{"buffers.NOPE.peak_fraction": json.RawMessage("null"), "time.seconds": json.RawMessage("1e-3")}},
		{Status: StatusFailed, Metrics: map[string]json.RawMessage{}},
	}
	if got := nullMetrics(s, recs); len(got) != 1 || got[0] != "buffers.NOPE.peak_fraction" {
		t.Errorf("null metrics %v", got)
	}
	if got := nullMetrics(s, recs[1:]); len(got) != 0 {
		t.Errorf("no point ran, yet %v", got)
	}
	// Why it may be absent: a section some runs have, or a misspelling.
	for m, want := range map[string]string{
		"error.rel_fro":               "numerics full or sampled",
		"baselines.fp16.bits":         "numerics full or sampled",
		"hplmxp.factorization_tflops": "lu-fused",
		"buffers.NOPE.peak_fraction":  "misspelt?",
	} {
		if got := absentWhy(m); !strings.Contains(got, want) {
			t.Errorf("absentWhy(%s) = %q, want it to say %q", m, got, want)
		}
	}
}

// A single program (or machine) file in vary is a path, "..": its parent
// folder, not a range.
func TestStudyVaryProgramParentPath(t *testing.T) {
	s, err := ParseStudy("wp/s.yaml", "wp", []byte("vary: {program: ../a.yaml, program.n: [64]}\nmetrics: [time.seconds]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Points[0].Values[0]; got != "../a.yaml" {
		t.Errorf("program %q, want ../a.yaml as written", got)
	}
	if got, _ := s.ProgramOf(s.Points[0]); got != "a.yaml" {
		t.Errorf("point 0 runs program %q, want a.yaml (wp/../a.yaml)", got)
	}
}

// Study keys are case-insensitive, as program and machine files' are.
func TestParseStudyKeyCase(t *testing.T) {
	s, err := ParseStudy("s.yaml", "d", []byte("Program: p.yaml\nMETRICS: [flops.tflops]\nVary: {program.m: [1, 2]}\nPlot: {X: program.m, Y: flops.tflops, Roof: {Peak: 1, Slopes: {m: 1}}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Program != "p.yaml" || len(s.Points) != 2 || len(s.Plots) != 1 || s.Plots[0].Roof == nil {
		t.Errorf("program %q, %d points, plots %+v", s.Program, len(s.Points), s.Plots)
	}
}

// A plot names parameters and metrics in any case, as the study's keys
// are read, and keeps the study's spelling (they had to match vary's and
// metrics' case: "program.m" for a vary of program.M was refused).
func TestPlotNamesInAnyCase(t *testing.T) {
	s, err := ParseStudy("s.yaml", "d", []byte("program: p.yaml\nmetrics: [flops.tflops, time.seconds]\nvary: {program.M: [1, 2], machine: [a, b]}\n"+
		"plot: {x: program.m, y: [FLOPS.tflops, Time.Seconds], series: MACHINE, where: {PROGRAM.m: 2}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	pl := s.Plots[0]
	if pl.X != "program.M" || !slices.Equal(pl.Y, []string{"flops.tflops", "time.seconds"}) || !slices.Equal(pl.Series, []string{"machine"}) || pl.Where["program.M"] != "2" {
		t.Errorf("plot %+v: want the study's spellings", pl)
	}
	if _, err := ParseStudy("s.yaml", "d", []byte("program: p.yaml\nmetrics: [flops.tflops]\nvary: {program.m: [1, 2]}\nplot: {x: program.m, y: flops.tflops, where: {program.m: 1, PROGRAM.M: 2}}\n")); err == nil || !strings.Contains(err.Error(), "given twice") {
		t.Errorf("a where parameter in two spellings: %v", err)
	}
}

// Every shipped study passes the check a sweep makes before its points
// run (the long ones too, which CI does not run: a message format change
// once made four of them refused — ozaki-grade-a, ozaki-i-vs-ii,
// emulated-accuracy, emulated-davinci).
func TestShippedStudiesPassTheCheck(t *testing.T) {
	paths, err := filepath.Glob("../studies/long/*.yaml")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no long studies: %v", err)
	}
	short, _ := filepath.Glob("../studies/*.yaml")
	for _, p := range append(paths, short...) {
		s, err := ReadStudy(p)
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		if err := s.Check(); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
}

// A program or machine file given as the study, or a machine file as its
// program, says what it is and where it goes (the run's "-m" does not
// exist in a study); program: with nothing is missing, as an empty string is.
func TestStudyFileTypes(t *testing.T) {
	for _, c := range []struct{ path, want string }{
		{"../programs/examples/hgemm.yaml", "a program file (kind hgemm), not a study: run it with davinci-sim run ../programs/examples/hgemm.yaml"},
		{"../machines/a100.yaml", "a machine file (kind nvidia-sm), not a study: name it as a study's machine"},
	} {
		_, err := ReadStudy(c.path)
		if err == nil || !badinput.Is(err) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.path, err, c.want)
		}
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "s.yaml")
	abs, _ := filepath.Abs("../machines/a100.yaml")
	os.WriteFile(path, []byte("program: "+abs+"\nvary: {program.m: [1]}\nmetrics: [time.seconds]\n"), 0o644)
	s, err := ReadStudy(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Check(); err == nil || !strings.Contains(err.Error(), "a machine file (kind nvidia-sm), not a program: name it as the study's machine") || strings.Contains(err.Error(), "-m") {
		t.Errorf("a machine file as program: %v", err)
	}
	for _, text := range []string{"program:\n", "program: ''\n"} {
		if _, err := ParseStudy("s.yaml", ".", []byte(text+"vary: {program.m: [1]}\nmetrics: [time.seconds]\n")); err == nil || !strings.Contains(err.Error(), `key "program": missing`) {
			t.Errorf("%q: %v", text, err)
		}
	}
}

// A program.machine that the study sets or varies beside a machine of its
// own is refused: the study's machine (-m) replaced it, and every point
// silently ran on the study's machine whatever its program.machine said.
func TestStudyRefusesProgramMachineBesideMachine(t *testing.T) {
	base := "program: p.yaml\nmetrics: [machine]\n"
	for _, c := range []struct{ text, want string }{
		{base + "machine: ascend-910a\nvary: {program.machine: [ascend-910a, ascend-910b3]}\n",
			`s.yaml:4: key "vary.program.machine": the study's machine (key "machine") replaces the program's; vary "machine" instead`},
		{base + "machine: ascend-910a\nset: {program.machine: ascend-910b3}\nvary: {program.m: [64]}\n",
			`s.yaml:4: key "set.program.machine": the study's machine (key "machine") replaces the program's`},
		{base + "machine: ascend-910a\npoints: [{program.machine: ascend-910b3}]\n",
			`key "points[].program.machine": the study's machine (key "machine") replaces the program's; give "machine" in the points instead`},
		{base + "vary: {machine: [ascend-910a, ascend-910b3], program.machine: [ascend-910a, ascend-910b3]}\n",
			`s.yaml:3: key "vary.program.machine": the study varies the machine (key "vary.machine"), which replaces the program's; keep one of them`},
		{base + "set: {program.machine: ascend-910b3}\nvary: {machine: [ascend-910a]}\n",
			`key "set.program.machine": the study varies the machine (key "vary.machine")`},
		{base + "machine: ascend-910a\nvary: {machine: [ascend-910b3], program.MACHINE: [ascend-910a]}\n",
			`key "vary.program.MACHINE": the study varies the machine`},
	} {
		_, err := ParseStudy("s.yaml", ".", []byte(c.text))
		if err == nil || !strings.Contains(err.Error(), c.want) || !badinput.Is(err) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: %v, want one line of bad input containing %q", c.text, err, c.want)
		}
	}
	// Alone, program.machine chooses each point's machine.
	for _, text := range []string{
		base + "vary: {program.machine: [ascend-910a, ascend-910b3]}\n",
		base + "set: {program.machine: ascend-910b3}\nvary: {program.m: [64]}\n",
	} {
		if _, err := ParseStudy("s.yaml", ".", []byte(text)); err != nil {
			t.Errorf("%q: %v", text, err)
		}
	}
}

// A metric whose results.csv column would repeat another column's name is
// refused (the CSV had two columns "error", or "program").
func TestStudyRefusesRepeatedColumns(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"program: p.yaml\nvary: {program.m: [1]}\nmetrics: [flops.tflops, error]\n", `s.yaml:3: key "metrics[1]": "error" would be a second column error of results.csv (the point's failure message); record the keys below it (error.…)`},
		{"program: p.yaml\nvary: {program.m: [1]}\nmetrics: [Status]\n", `key "metrics[0]": "Status" would be a second column status`},
		{"program: p.yaml\nvary: {program.m: [1]}\nmetrics: [index]\n", `"index" would be a second column index`},
		{"vary: {program: [a.yaml, b.yaml]}\nmetrics:\n  - flops.tflops\n  - program\n", `s.yaml:4: key "metrics[1]": "program" would be a second column program`},
		{"program: p.yaml\nvary: {machine: [ascend-910a, ascend-910b3]}\nmetrics: [machine]\n", `"machine" would be a second column machine of results.csv`},
		{"program: p.yaml\nvary: {machine.core.buffers.L1: [1MiB]}\nmetrics: [machine.core.buffers.L1_bytes]\n", `parameter machine.core.buffers.L1 in bytes`},
		{"program: p.yaml\nvary: {program.m: [1, 2]}\nmetrics: [flops.tflops, program.m]\n", `s.yaml:3: key "metrics[1]": "program.m" would be a second column program.m of results.csv, which holds each point's value already`},
		{"program: p.yaml\npoints:\n  - {program.n: 1}\nmetrics: [Program.N]\n", `"Program.N" would be a second column program.n`},
	} {
		_, err := ParseStudy("s.yaml", ".", []byte(c.text))
		if err == nil || !strings.Contains(err.Error(), c.want) || !badinput.Is(err) {
			t.Errorf("%q: %v, want bad input containing %q", c.text, err, c.want)
		}
	}
	// Below them, and machine or program where they are not varied: fine.
	for _, text := range []string{
		"program: p.yaml\nvary: {program.m: [1]}\nmetrics: [error.rel_fro, machine, program]\n",
		"vary: {program: [a.yaml]}\nmetrics: [program.m]\n",
	} {
		if _, err := ParseStudy("s.yaml", ".", []byte(text)); err != nil {
			t.Errorf("%q: %v", text, err)
		}
	}
}

// Two values of a program (or machine) that name one file are refused
// however the study's path is written — relative (the study's folder
// "."), or absolute — and through a link.
func TestStudySameFileAnySpelling(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "s")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "prog.yaml"), []byte("kind: sgemm\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	text := "vary: {program: [prog.yaml, ../s/prog.yaml]}\nmetrics: [time.seconds]\n"
	t.Chdir(dir)
	for _, d := range []string{".", dir} {
		if _, err := ParseStudy(filepath.Join(d, "st.yaml"), d, []byte(text)); err == nil || !strings.Contains(err.Error(), `"prog.yaml" and "../s/prog.yaml" name the same file`) {
			t.Errorf("study in %s: %v", d, err)
		}
		points := "points: [{program: prog.yaml}, {program: ../s/prog.yaml}]\nmetrics: [time.seconds]\n"
		if _, err := ParseStudy(filepath.Join(d, "st.yaml"), d, []byte(points)); err == nil || !strings.Contains(err.Error(), "repeats points[0]") {
			t.Errorf("points, study in %s: %v", d, err)
		}
	}
	if err := os.Symlink("prog.yaml", filepath.Join(dir, "link.yaml")); err != nil {
		t.Skip(err)
	}
	if _, err := ParseStudy("st.yaml", ".", []byte("vary: {program: [prog.yaml, link.yaml]}\nmetrics: [time.seconds]\n")); err == nil || !strings.Contains(err.Error(), "name the same file") {
		t.Errorf("a link to the program: %v", err)
	}
	// Two files, and an embedded machine beside a file of its name: fine.
	if err := os.WriteFile(filepath.Join(dir, "other.yaml"), []byte("kind: sgemm\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ParseStudy("st.yaml", ".", []byte("vary: {program: [prog.yaml, other.yaml], machine: [ascend-910a, ./ascend-910a]}\nmetrics: [time.seconds]\n")); err != nil {
		t.Errorf("two files: %v", err)
	}
}

// A YAML alias to a list of values is that list (it was refused as "must
// be a list"), as an alias to a single value is that value.
func TestStudyVaryAlias(t *testing.T) {
	s, err := ParseStudy("s.yaml", ".", []byte("program: p.yaml\nvary: {program.tiling.bm: &v [64, 128], program.tiling.bn: *v}\nmetrics: [time.seconds]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Points) != 4 || !slices.Equal(s.Points[1].Values, []string{"64", "128"}) {
		t.Errorf("%d points, point 1 %v", len(s.Points), s.Points[1].Values)
	}
	// So is one to a list of metrics (a plot's y).
	s, err = ParseStudy("s.yaml", ".", []byte("program: p.yaml\nvary: {program.m: [64]}\nmetrics: &m [time.seconds, flops.tflops]\nplot: {x: program.m, y: *m}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Plots[0].Y) != 2 {
		t.Errorf("plot y %v", s.Plots[0].Y)
	}
}

// Plot keys are read in any case, each setting its own field: LogX made
// the y axis logarithmic and YMin set the upper bound.
func TestPlotKeysAnyCase(t *testing.T) {
	for _, keys := range []string{"logx: true, ymin: 1.5", "LogX: true, YMin: 1.5", "LOGX: true, YMIN: 1.5"} {
		s, err := ParseStudy("s.yaml", "dir", []byte("program: prog.yaml\nmetrics: [flops.tflops]\nvary: {program.buffering: [single, double]}\nplot: {x: program.buffering, y: flops.tflops, "+keys+"}\n"))
		if err != nil {
			t.Fatal(err)
		}
		pl := s.Plots[0]
		if !pl.LogX || pl.LogY || pl.YMin == nil || *pl.YMin != 1.5 || pl.YMax != nil {
			t.Errorf("%s: logx %v logy %v ymin %v ymax %v", keys, pl.LogX, pl.LogY, pl.YMin, pl.YMax)
		}
	}
}

// A machine.* key is checked against every machine kind a study varies,
// in any order: a GPU's core.smem beside an AMD machine ran with the A100
// first and was refused with the MI210 first.
func TestCheckMachineKeyAnyKindInAnyOrder(t *testing.T) {
	prog, err := filepath.Abs("../programs/examples/a100-hgemm.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, order := range []string{"[mi210, a100]", "[a100, mi210]"} {
		path := filepath.Join(dir, "s.yaml")
		study := "program: " + prog + "\nset: {program.numerics: off, program.m: 256, program.n: 256, program.k: 256, machine.core.smem: 164KiB}\nvary: {machine: " + order + "}\nmetrics: [flops.tflops]\n"
		if err := os.WriteFile(path, []byte(study), 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := ReadStudy(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Check(); err != nil {
			t.Errorf("%s: %v", order, err)
		}
	}
	// A key no kind of the study has is still refused.
	path := filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(path, []byte("program: "+prog+"\nset: {program.numerics: off, machine.core.nonsense: 1}\nvary: {machine: [mi210, a100]}\nmetrics: [flops.tflops]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := ReadStudy(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Check(); err == nil || !strings.Contains(err.Error(), "nonsense") {
		t.Errorf("unknown key: %v", err)
	}
}

// A log x axis over a parameter with a value not above 0 is refused only
// where the plot keeps that point: a where: that leaves it out, and a
// parameter held fixed at a positive value, are fine.
func TestLogXWhereLeavesOut(t *testing.T) {
	for _, text := range []string{
		"program: p.yaml\nmetrics: [flops.tflops]\nvary: {program.m: [0, 64, 128], program.n: [1, 2]}\nplot: {x: program.n, y: flops.tflops, logx: true, where: {program.m: 64}}",
		"program: p.yaml\nmetrics: [flops.tflops]\npoints: [{program.m: 0, program.n: 1}, {program.m: 64, program.n: 2}]\nplot: {x: program.m, y: flops.tflops, logx: true, where: {program.n: 2}}",
	} {
		if _, err := ParseStudy("s.yaml", "d", []byte(text)); err != nil {
			t.Errorf("%q: %v", text, err)
		}
	}
}
