package sweep

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/davinci-sim/davinci-sim/cluster"

	"github.com/davinci-sim/davinci-sim/machines"
	"github.com/davinci-sim/davinci-sim/programs"
	"github.com/davinci-sim/davinci-sim/report"
)

// Check validates, without running a simulation, every program file and
// machine the study names and every override it applies (the fixed set
// and each distinct value of each varied parameter): paths must address a
// key and values must have the key's type. machine.* paths are resolved on
// machines.Machine; program.* paths by decoding the program with the one
// override (numerics off, which builds only the plan). Constraints that
// depend on the combination (a tile that does not fit L0A with that L1)
// are left to the run, which records such points as failed — but for a
// value of the set, or of a varied program.* parameter, that the program
// refuses at every point where it appears (checkSet).
// Errors wrap bad input (package badinput) and name the study file, the
// key's line and the key.
func (s *Study) Check() error {
	if err := s.checkKeys(setCheck{}); err != nil {
		return err
	}
	return s.checkSet(setCheck{})
}

// checkKeys is Check but for the probe of the set's values (checkSet).
// c.ctx interrupts it, and c's progress or log say how far it is after
// probeQuiet, as checkSet's (c.hostBytes is unused).
func (s *Study) checkKeys(c setCheck) error {
	// The files as the run opens them (resolved against the study's
	// folder); the messages name them so, for the user to find them.
	progs := []string{s.Program}
	if i := slices.Index(s.Params, ParamProgram); i >= 0 {
		progs = s.distinct(i)
	}
	written := map[string]string{} // each file as the study writes it, for the messages
	for i, p := range progs {
		progs[i] = s.resolve(ParamProgram, p)
		written[progs[i]] = p
	}
	files := map[string]*programs.File{}
	for _, p := range progs {
		f, err := readProgram(p, written[p])
		if err != nil {
			if data, rerr := programSource(p, written[p]); rerr == nil {
				if d := programs.Describe(p, data); d != "" && !strings.HasPrefix(d, "a program file") {
					// (The run's message says to give it with -m: a study
					// has no -m.)
					return badInput(fmt.Errorf("%s: key %q: %s: %s, not a program: name it as the study's machine, and a program file as its program", s.at(ParamProgram), ParamProgram, p, d))
				}
			}
			if name := exampleNamed(written[p], err); name != "" {
				return badInput(fmt.Errorf("%s: key %q: %s: no such file from the study file's folder (%s); the example built into davinci-sim is named %s", s.at(ParamProgram), ParamProgram, written[p], absPath(p), name))
			}
			return badInput(fmt.Errorf("%s: key %q: %v", s.at(ParamProgram), ParamProgram, err))
		}
		files[p] = f
	}
	if err := s.checkMetrics(); err != nil {
		return err
	}
	machs := []string{s.Machine}
	if i := slices.Index(s.Params, ParamMachine); i >= 0 {
		machs = s.distinct(i)
	}
	for i, m := range machs {
		machs[i] = s.resolve(ParamMachine, m)
	}
	var mach *machines.Machine
	var loaded []string  // the machines' names, as machines.Load takes them
	var kinds []string   // and their kinds
	var systems []string // the cluster and node descriptions among them
	for _, name := range machs {
		if name == "" {
			// The program's machine: key (a file resolved against the
			// program's folder), a program.machine in set (against the
			// study's), or the default — as the run resolves them.
			set := slices.Clone(s.Set)
			for i, o := range set {
				set[i].Value = resolveParam(s.Dir, o.Path, o.Value)
			}
			name = programs.MachineRef(files[progs[0]], programs.Options{Overrides: set})
		}
		if cluster.IsDescription(name) {
			// A cluster run: its keys are checked on its NPU machine.
			topo, err := cluster.LoadSystem(name, nil)
			if err != nil {
				return badInput(fmt.Errorf("%s: key %q: %v", s.at(ParamMachine), ParamMachine, firstLine(err)))
			}
			systems = append(systems, name)
			name = topo.Node.NPU
		}
		m, err := machines.Load(name, nil)
		if err != nil {
			if perr := programs.ProgramAsMachine(name); perr != nil {
				return badInput(fmt.Errorf("%s: key %q: %s: %v", s.at(ParamMachine), ParamMachine, name, perr))
			}
			return badInput(fmt.Errorf("%s: key %q: %v", s.at(ParamMachine), ParamMachine, firstLine(err)))
		}
		if mach == nil {
			mach = m
		}
		loaded = append(loaded, name)
		kinds = append(kinds, m.Kind)
	}

	type probe struct {
		key string
		o   machines.Override
		// param and value are the value's parameter and its index among
		// the parameter's distinct values (vals), param -1 for the set's.
		param, value int
	}
	var probes []probe
	var loads machineLoads // (each machine with each value loaded once: here and by checkOneSpelling)
	for _, o := range s.Set {
		probes = append(probes, probe{"set." + o.Path, o, -1, 0})
	}
	vals := make([][]string, len(s.Params)) // each parameter's distinct values
	for i, q := range s.Params {
		if q == ParamProgram || q == ParamMachine {
			continue
		}
		vals[i] = s.distinct(i)
		for j, v := range vals[i] {
			probes = append(probes, probe{s.studyKey(q), machines.Override{Path: q, Value: v}, i, j})
		}
	}
	// Whether each program takes numerics (a walk of its kind's keys: once,
	// not at each value).
	numerics := map[string]bool{}
	for _, p := range progs {
		numerics[p] = files[p].Kind.HasKey("numerics")
	}
	// checkOneSpelling's outcomes of the values of the parameters it
	// compares, each computed with its value's check below (the progress
	// counts values).
	outcomes := make([][][]any, len(s.Params))
	for i := range s.Params {
		if len(vals[i]) >= 2 && !distinctByType(s.Params[i], vals[i], progs, files) {
			outcomes[i] = make([][]any, len(vals[i]))
		}
	}
	checkValue := func(pr probe) error {
		o := pr.o
		if rest, ok := machines.CutPrefixFold(o.Path, "machine."); ok {
			// A key of any of the study's machine kinds (a GPU's
			// core.smem beside a DaVinci machine): the points of the
			// others fail; the first kind's error if none has it (it was
			// checked on the first machine alone, so the order of vary:
			// machine decided whether the study ran).
			var err error
			for _, kind := range kinds {
				t, _, kerr := machines.ResolveKey(kind, rest)
				if kerr == nil {
					_, kerr = machines.ConvertValue(t, o.Value)
				}
				if kerr == nil {
					err = nil
					break
				}
				if err == nil {
					err = kerr
				}
			}
			if err != nil {
				return badInput(fmt.Errorf("%s: key %q: %s: %v", s.at(pr.key), pr.key, o, err))
			}
			// A value no machine of the study takes with the fixed
			// overrides (cores 0, an L1 of 0 B) would fail every point
			// it is in. (One that some combination rules out — a tile
			// that does not fit that L1 — fails at its points.)
			with := s.machineWith(o)
			var first error
			for _, name := range loaded {
				if _, err := loads.load(name, with); err == nil {
					first = nil
					break
				} else if first == nil {
					first = err
				}
			}
			if first != nil {
				return badInput(fmt.Errorf("%s: key %q: %s", s.at(pr.key), pr.key, strings.TrimPrefix(firstLine(first), "--set ")))
			}
			return nil
		}
		for _, p := range progs {
			f, err := files[p].Again() // Decode writes the overrides into the file's config
			if err != nil {
				return badInput(fmt.Errorf("%s: key %q: %v", s.at(ParamProgram), ParamProgram, err))
			}
			opts := programs.Options{Overrides: []machines.Override{o}}
			if numerics[p] {
				opts.Numerics = programs.NumericsOff // no inputs built
			}
			err = f.Kind.CheckFor(f, mach, opts)
			if err != nil && strings.HasPrefix(err.Error(), "--set "+o.String()+":") {
				msg := strings.TrimPrefix(firstLine(err), "--set "+o.String()+": ")
				return badInput(fmt.Errorf("%s: key %q: %s (program %s): %s", s.at(pr.key), pr.key, o, written[p], msg))
			}
		}
		return nil
	}
	// The values of a large study take seconds (a program's plan with
	// each of 100000 values of program.m: ~0.2 ms each): they say how
	// far they are after probeQuiet, as the probes do, and stop at once
	// on an interrupt.
	var done atomic.Int64 // values checked
	show := startProbeProgress(c, len(probes), &done, keysProgress)
	defer show.close()
	for _, pr := range probes {
		if c.ctx != nil && c.ctx.Err() != nil {
			return fmt.Errorf("sweep: %w, while checking the study's values (%d of %d checked): no point ran", context.Cause(c.ctx), done.Load(), len(probes))
		}
		if err := checkValue(pr); err != nil {
			return err
		}
		if pr.param >= 0 && outcomes[pr.param] != nil {
			outcomes[pr.param][pr.value] = s.spellingOutcome(pr.o, progs, files, loaded, systems, &loads)
		}
		done.Add(1)
	}
	// The values each good alone: the program may still refuse the set's
	// at every point (program.m: -256, a tile the set's sizes rule out),
	// or a varied one at each of its points (program.scheme: bogus):
	// checkSet.
	return s.checkOneSpelling(vals, outcomes)
}

// checkMetrics refuses the first of the study's metrics that is no path
// of report.json (report.CheckPath: "flops.tflop"), named by its line and
// key ("metrics[0]"). ParseStudy checks the metrics so where a plot names
// none of them (the plot's name may be the metric's spelt right), Check
// for every study.
func (s *Study) checkMetrics() error {
	for i, m := range s.Metrics {
		if err := report.CheckPath(m); err != nil {
			return badInput(fmt.Errorf("%s: key \"metrics[%d]\": %v", s.at(fmt.Sprintf("metrics[%d]", i)), i, err))
		}
	}
	return nil
}

// keysProgress words checkKeys' progress.
var keysProgress = progressWords{
	line: "study's values",
	log:  "study's values, each alone (its key and type; the program's plan, or the machine, with it: no simulation)",
	unit: "values",
}

// checkOneSpelling refuses a varied parameter two of whose values mean one
// value of its key — a frequency as 1GHz and 1e9, a rounding as rne and
// RNE —, which canonicalValue, knowing units but not the key's type, lets
// through: the study would run one point twice under two names, and its
// plots draw them apart. Two values are one where every machine of the
// study (machine.*: its model after loading with the value), cluster or
// node description (node.*, cluster.*: its nodes, node and fabric) or
// program (program.*: its parameters decoded with the value) comes out
// the same with either, and at least one loads. vals are each parameter's
// distinct values, outcomes[i][j] what vals[i][j] comes out as
// (spellingOutcome); outcomes[i] is nil for a parameter not compared (the
// program, the machine, one value, or values distinctByType tells apart).
func (s *Study) checkOneSpelling(vals [][]string, outcomes [][][]any) error {
	for i, q := range s.Params {
		if outcomes[i] == nil {
			continue
		}
		// Outcomes are compared in buckets of their JSON (exported fields,
		// maps sorted: equal outcomes share one; DeepEqual decides within
		// it), so that a range of thousands of values is not compared
		// pair by pair; one that JSON cannot write (NaN) shares the bucket
		// of every such one.
		seen := outcomes[i]
		bucket := map[string][]int{}
		for j, v := range vals[i] {
			if !slices.ContainsFunc(seen[j], func(x any) bool { return x != nil }) {
				continue // (it loads nowhere: the points fail as they will)
			}
			b, err := json.Marshal(seen[j])
			if err != nil {
				b = nil
			}
			for _, k := range bucket[string(b)] {
				if reflect.DeepEqual(seen[k], seen[j]) {
					key := s.studyKey(q)
					return badInput(fmt.Errorf("%s: key %q: %q and %q are one value of %s: write it one way (the study would run it twice)", s.at(key), key, vals[i][k], v, q))
				}
			}
			bucket[string(b)] = append(bucket[string(b)], j)
		}
	}
	return nil
}

// spellingOutcome is what the varied value o comes out as, for
// checkOneSpelling: each machine's model loaded with it (machine.*: machs
// are the machines' names as machines.Load takes them), each cluster or
// node description's nodes, node and fabric (node.*, cluster.*: systems),
// or each program's parameters decoded with it (program.*: progs are the
// program files as the run opens them, files each parsed); nil for each
// that does not load.
func (s *Study) spellingOutcome(o machines.Override, progs []string, files map[string]*programs.File, machs, systems []string, loads *machineLoads) []any {
	var out []any
	switch {
	case hasPrefixFold(o.Path, "machine."):
		with := s.machineWith(o)
		for _, name := range machs {
			m, err := loads.load(name, with)
			out = append(out, loaded(m, err))
		}
	case hasPrefixFold(o.Path, "node."), hasPrefixFold(o.Path, "cluster."):
		for _, name := range systems {
			t, err := cluster.LoadSystem(name, []machines.Override{o})
			if err != nil {
				out = append(out, nil)
				continue
			}
			out = append(out, [3]any{t.Nodes, t.Node, t.Fabric})
		}
	default:
		for _, p := range progs {
			out = append(out, decodedWith(files[p], o))
		}
	}
	return out
}

// distinctByType reports whether no two of vals, the distinct values of
// the program key q, can decode to one value in any of the programs
// progs (files: each parsed), so that checkOneSpelling need not decode
// them: each is an integer in plain decimal (no sign but a minus, no
// leading zero, no unit, no exponent) and every program has q as a key of
// type integer or size, which such values set exactly (two of them decode
// to two numbers, or fail). It is false where it cannot tell.
func distinctByType(q string, vals []string, progs []string, files map[string]*programs.File) bool {
	rest, ok := machines.CutPrefixFold(q, "program.")
	if !ok || len(progs) == 0 {
		return false
	}
	for _, v := range vals {
		if !plainDecimal(v) {
			return false
		}
	}
	for _, p := range progs {
		k := files[p].Kind
		if k.Params == nil {
			return false
		}
		i := slices.IndexFunc(k.Keys(), func(key machines.Key) bool { return strings.EqualFold(key.Path, rest) })
		if i < 0 {
			return false
		}
		if t := k.Keys()[i].Type; t != "integer" && t != "size" {
			return false
		}
	}
	return true
}

// plainDecimal reports whether v is an integer written in plain decimal:
// 0, or digits not starting with 0 after an optional minus.
func plainDecimal(v string) bool {
	d := strings.TrimPrefix(v, "-")
	if d == "" || d == "0" && d != v || d[0] == '0' && len(d) > 1 {
		return false
	}
	for _, c := range d {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// machineLoads remembers machines.Load's results by machine and
// overrides, for a check that loads each machine with each value of a
// parameter twice (a range of thousands of values: seconds each time).
type machineLoads struct{ done map[string]loadedMachine }

// loadedMachine is one machines.Load's result.
type loadedMachine struct {
	m   *machines.Machine
	err error
}

// load returns machines.Load(name, with), loading it once.
func (l *machineLoads) load(name string, with []machines.Override) (*machines.Machine, error) {
	key := name
	for _, o := range with {
		key += "\x00" + o.Path + "\x00" + o.Value
	}
	if r, ok := l.done[key]; ok {
		return r.m, r.err
	}
	m, err := machines.Load(name, with)
	if l.done == nil {
		l.done = map[string]loadedMachine{}
	}
	l.done[key] = loadedMachine{m, err}
	return m, err
}

// machineWith returns the study's fixed machine.* overrides with o last
// (a point's machine overrides, o a varied value or one of the set's).
func (s *Study) machineWith(o machines.Override) []machines.Override {
	var out []machines.Override
	for _, x := range s.Set {
		if hasPrefixFold(x.Path, "machine.") && x != o {
			out = append(out, x)
		}
	}
	return append(out, o)
}

// loaded returns m where it loaded (err nil), else nil.
func loaded(m *machines.Machine, err error) any {
	if err != nil {
		return nil
	}
	return *m
}

// decodedWith returns program file f's parameters decoded with the
// override o (on a fresh copy: Again), nil where they do not decode.
func decodedWith(f *programs.File, o machines.Override) any {
	f, err := f.Again()
	if err != nil || f.Kind.Params == nil {
		return nil
	}
	params := reflect.New(f.Kind.Params).Interface()
	if f.Decode(params, programs.Options{Overrides: []machines.Override{o}}) != nil {
		return nil
	}
	return reflect.ValueOf(params).Elem().Interface()
}

// hasPrefixFold reports whether s starts with prefix in any case.
func hasPrefixFold(s, prefix string) bool {
	_, ok := machines.CutPrefixFold(s, prefix)
	return ok
}

// distinct returns the distinct values of parameter i in point order.
func (s *Study) distinct(i int) []string {
	var out []string
	seen := map[string]bool{}
	for _, p := range s.Points {
		if v := p.Values[i]; !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

// firstLine returns err's message on one line (joined errors are separated
// by "; ").
func firstLine(err error) string {
	return strings.ReplaceAll(strings.TrimSpace(err.Error()), "\n", "; ")
}
