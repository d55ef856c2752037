package sweep

import (
	"context"
	"fmt"
	"strings"

	"github.com/davinci-sim/davinci-sim/badinput"
	"github.com/davinci-sim/davinci-sim/programs"
)

// checkSet returns the refusal of a value of the study's set that the
// program refuses at every point (program.m: -256 — a value refused at
// some points only fails those), named by its key and line in the study
// as Check's other refusals; nil otherwise. It probes the points in order
// until one would run: one probe where the set is good, and where it is
// not, every point's refusal, which comes before any work of the run.
// A point refused for a value of its own (vary's, points') ends the probes
// as one that would run does: the study runs, each point recorded as it
// fares. An interrupt (ctx, may be nil) ends the probes: the run then
// stops with it. The points' host memory is bounded by hostBytes (0: the
// default), as their runs' (a point refused for it is refused by its probe
// the same).
func (s *Study) checkSet(ctx context.Context, hostBytes int64) error {
	var first error
	for _, p := range s.Points {
		if ctx != nil && ctx.Err() != nil {
			return nil
		}
		refusal, key := s.probe(p, hostBytes)
		if refusal == nil || key == "" {
			return nil
		}
		if first == nil {
			first = s.setRefusal(p, refusal, key)
		}
	}
	return first
}

// probe runs point p as its run would but stops it before its simulation
// (its context done before it starts): the run returns the refusal of the
// point's program, machine or values (bad input) where they are refused —
// the same refusal as the point's run, which comes from the same build —,
// else its interruption. A probe costs the point's build (its plan, and
// its inputs with numerics full), not a simulation: scheme auto's
// candidates' runs stop at once too. probe returns the refusal (nil where
// the point would run) and the key of the study's set that gave the
// value refused, where one did ("set.program.m"). The point's host memory
// is bounded by hostBytes (0: the default), as its run's.
func (s *Study) probe(p Point, hostBytes int64) (refusal error, setKey string) {
	paths := s.paths(p)
	f, err := readProgram(paths.program, paths.written)
	if err != nil {
		return nil, "" // (Check refuses the files that cannot be read)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	o := s.runOptions(paths.machine, p)
	o.MaxHostBytes = hostBytes
	_, err = programs.Execute(f, o, programs.RunHooks{Context: ctx})
	if err == nil || !badinput.Is(err) {
		return nil, ""
	}
	// The study's set gave the value refused where one of its overrides
	// set the program file's key refused (RefusedBy finds them, as
	// NamedOverrideBy does for the point's record), or is itself refused ("--set
	// machine.cores=0: …").
	setKeys := func(paths []string) string {
		for _, path := range paths {
			if k := s.studyKey(path); strings.HasPrefix(k, "set.") {
				return k
			}
		}
		return ""
	}
	var ps []string
	for _, o := range f.RefusedBy(err) {
		path, _, _ := strings.Cut(o, "=")
		ps = append(ps, path)
	}
	setKey = setKeys(ps)
	if rest, ok := strings.CutPrefix(err.Error(), "--set "); ok && setKey == "" {
		if path, _, ok := strings.Cut(rest, "="); ok && !strings.ContainsAny(path, " :") {
			setKey = setKeys([]string{path})
		}
	}
	return err, setKey
}

// setRefusal words refusal, point p's refusal of the study's set value
// key, as Check's refusals: the study file's line, the key, the value and
// the constraint, naming the program file as the study writes it.
func (s *Study) setRefusal(p Point, refusal error, key string) error {
	o := s.Set[0]
	for _, x := range s.Set {
		if "set."+x.Path == key {
			o = x
			break
		}
	}
	prog, _ := s.written(p)
	msg := s.paths(p).rewrite(firstLine(refusal))
	detail := ": " + msg
	if rest, ok := strings.CutPrefix(msg, "--set "+o.String()+": "); ok {
		detail = ": " + rest
	} else if rest, ok := strings.CutPrefix(msg, prog+": "); ok {
		detail = fmt.Sprintf(" (program %s): %s", prog, rest)
	}
	return badInput(fmt.Errorf("%s: key %q: %s%s", s.at(key), key, o, detail))
}
