package sweep

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/davinci-sim/davinci-sim/badinput"
	"github.com/davinci-sim/davinci-sim/machines"
	"github.com/davinci-sim/davinci-sim/programs"
)

// setCheck is how checkSet probes the points (and checkKeys checks the
// values before).
type setCheck struct {
	// ctx, when not nil, interrupts the probes.
	ctx context.Context
	// hostBytes bounds each point's host memory (0: the default), as
	// its run's (a point refused for it is refused by its probe the
	// same).
	hostBytes int64
	// progress, when not nil, gets a line redrawn every second, as the
	// runs' bar, once probeQuiet has passed since start (the study's
	// other checks come before the probes; zero: the probes' start);
	// else log, when not nil, gets one line then.
	progress, log io.Writer
	start         time.Time
}

// probeQuiet is how long checkSet probes (and checkKeys checks) before
// saying so. A variable for tests.
var probeQuiet = 2 * time.Second

// checkSet returns the refusal of a value that the program refuses at
// every point where it appears, named by its key and line in the study as
// Check's other refusals: a value of the study's set (program.m: -256),
// or of a varied program.* parameter, vary's or points' (program.scheme:
// bogus — whatever the other parameters: a value refused at some of its
// points only, a tile that does not fit the smaller of two L1 sizes,
// fails those points when they run, and the study goes on); nil
// otherwise. A point's refusal counts against a value where the study
// gave the value the program refused (probe's keys): one refused for
// another value, or for none of the study's (a machine the program cannot
// use, the program file's own value), clears the point's values as a
// point that would run does — and so does, for the varied values, a
// refusal for the host's memory (badinput.HostMemory: full numerics past
// the bound fail their points, which --resume runs again on a larger
// host; the set refused so at every point refuses the study, as a run of
// it would be). The set's refusal comes first (it is at every point),
// then the varied values' in the study's order of parameters and values.
//
// It probes the points in order, each while one of its values is not yet
// cleared: one probe where the set is good and the study's first point
// runs, and as many as a parameter has values where they vary (a grid's
// first points clear its last parameter's values, the first point of each
// other value the rest); a value refused is probed at each of its points,
// where its refusal comes before any work of the run. No probe stands for
// another: a refusal may depend on any value of the point — its sizes
// (the matrices' bytes against the machine's memory, a tile that fits
// some), its machine's — and the program decides which it reads, so a
// value is cleared only by a point of its own. A probe is a build (~0.3–
// 0.5 ms for a GEMM with numerics off, its machine loaded once for the
// probes on it, machineCache: a study of 100000 points, or of a range of
// 100000 values, takes about a minute). The probes therefore say, after
// probeQuiet, how far they are (c.progress, or one line to c.log), and an
// interrupt (c.ctx) ends them at once: checkSet then returns an error
// wrapping its cause, and no point runs. They run one at a time, whatever
// -j: a probe builds its point's inputs and chip model, so probes at once
// would have to be admitted by their memory estimates as the runs are
// (memGate), and an estimate costs about a probe (it loads the machine
// too): two at once on two CPUs took longer than one at a time.
func (s *Study) checkSet(c setCheck) error {
	n := len(s.Points)
	var done atomic.Int64 // points checked (probed, or their values cleared before)
	show := startProbeProgress(c, n, &done, probesProgress)
	defer show.close()
	// The values not cleared yet: the set (setOpen), and each varied
	// program key's (open[i]: parameter i's values, each with the first
	// refusal of it, nil before its first probe). The program's refusals
	// name its own keys, which program.* values set; a machine.*, node.*
	// or cluster.* value is refused by its machine or description, which
	// checkKeys loads with each (the program and machine varied are files
	// it reads): their points fail as they run.
	setOpen := len(s.Set) > 0
	var setFirst error
	open := make([]map[string]*refused, len(s.Params))
	left := 0 // values in open
	key := make(map[string]int, len(s.Params))
	for i, q := range s.Params {
		if !hasPrefixFold(q, "program.") {
			continue
		}
		key[s.studyKey(q)] = i
		open[i] = map[string]*refused{}
		for _, v := range s.distinct(i) {
			open[i][v] = &refused{}
			left++
		}
	}
	machs := newMachineCache(probeMachines)
	progs := newProgramCache(probePrograms)
	for _, p := range s.Points {
		if !setOpen && left == 0 {
			break
		}
		if c.ctx != nil && c.ctx.Err() != nil {
			return fmt.Errorf("sweep: %w, while checking the study's set and varied values at its points (%d of %d checked): no point ran", context.Cause(c.ctx), done.Load(), n)
		}
		if !setOpen && !openAt(open, p) { // (its values all cleared: no probe)
			done.Add(1)
			continue
		}
		if onProbe != nil {
			onProbe(p)
		}
		refusal, keys := s.probe(p, c.hostBytes, machs, progs)
		done.Add(1)
		blamed := map[int]bool{}
		if _, host := badinput.HostMemoryBound(refusal); !host {
			// (A refusal for host memory is the host's: the value's
			// points fail, and --resume runs them on a larger one.)
			for _, k := range keys {
				if i, ok := key[k]; ok {
					blamed[i] = true
				}
			}
		}
		if refusal == nil || setKey(keys) == "" {
			setOpen = false
		} else if setFirst == nil {
			setFirst = s.setRefusal(p, refusal, setKey(keys))
		}
		for i, v := range p.Values {
			r := open[i][v] // (nil: cleared, or not a program key)
			switch {
			case r == nil:
			case refusal == nil || !blamed[i]:
				delete(open[i], v)
				left--
			case r.err == nil:
				r.p, r.err = p, refusal
			}
		}
	}
	if setOpen && setFirst != nil {
		return setFirst
	}
	for i, q := range s.Params {
		for _, v := range s.distinct(i) {
			if r := open[i][v]; r != nil && r.err != nil {
				return s.refusal(r.p, r.err, s.studyKey(q), machines.Override{Path: q, Value: v})
			}
		}
	}
	return nil
}

// onProbe, when not nil, is called with each point checkSet probes (for
// the tests, which count them).
var onProbe func(Point)

// refused is a varied value's first refusal by checkSet's probes: the
// point probed and its refusal (nil before its first probe).
type refused struct {
	p   Point
	err error
}

// openAt reports whether one of point p's values is still open (checkSet:
// open[i] holds parameter i's values not cleared yet).
func openAt(open []map[string]*refused, p Point) bool {
	for i, v := range p.Values {
		if open[i][v] != nil {
			return true
		}
	}
	return false
}

// probeProgress tells how far checkSet's probes are: nothing for
// probeQuiet, then a line on c.progress redrawn every second (cleared at
// the end), or one line on c.log where there is no progress line (-q, or
// stderr not a terminal).
type probeProgress struct {
	ticks *ticker
	// drawn is set once the progress line is drawn (cleared by close).
	drawn bool
	w     io.Writer
}

// progressWords are what a probeProgress says is checked: on the redrawn
// line (line), on the one line to the log (log), and the unit counted.
type progressWords struct{ line, log, unit string }

// probesProgress words checkSet's progress.
var probesProgress = progressWords{
	line: "set and varied values at the points",
	log:  "study's set and varied values at its points until each would run at one (a build each, no simulation)",
	unit: "points",
}

// startProbeProgress starts the progress of a check of total things
// (words: what), done of them done.
func startProbeProgress(c setCheck, total int, done *atomic.Int64, words progressWords) *probeProgress {
	pp := &probeProgress{w: c.progress}
	if c.progress == nil && c.log == nil {
		return pp
	}
	start := time.Now()
	quiet := probeQuiet
	if !c.start.IsZero() {
		quiet -= start.Sub(c.start)
	}
	if c.progress == nil {
		// The one line after a second of probes at least, to say how far
		// they got (the study's other checks may have taken probeQuiet).
		quiet = max(quiet, min(probeQuiet, time.Second))
	}
	// The redrawn line stays within a terminal row, as the runs' bar;
	// the one line says more.
	line := func(what string) string {
		d, elapsed := done.Load(), time.Since(start)
		msg := fmt.Sprintf("sweep: checking the %s: %d/%d %s, %s elapsed", what, d, total, words.unit, elapsed.Round(time.Second))
		if d > 0 && d < int64(total) {
			left := time.Duration(float64(elapsed) / float64(d) * float64(int64(total)-d))
			msg += fmt.Sprintf(", at most %s more", left.Round(time.Second))
		}
		return msg
	}
	pp.ticks = every(quiet, func() bool {
		if c.progress == nil {
			fmt.Fprintln(c.log, line(words.log)+"; Ctrl-C stops it")
			return false
		}
		redraw(c.progress, line(words.line))
		pp.drawn = true
		return true
	})
	return pp
}

// close stops the progress and clears its line, where drawn.
func (pp *probeProgress) close() {
	if pp.ticks != nil {
		pp.ticks.stop()
	}
	if pp.drawn {
		clearLine(pp.w)
	}
}

// probe runs point p as its run would but stops it before its simulation
// (its context done before it starts): the run returns the refusal of the
// point's program, machine or values (bad input) where they are refused —
// the same refusal as the point's run, which comes from the same build —,
// else its interruption. A probe costs the point's build (its plan, and
// its inputs with numerics full), not a simulation: scheme auto's
// candidates' runs stop at once too. probe returns the refusal (nil where
// the point would run) and the keys of the study that gave the value
// refused, where the study did ("set.program.m", "vary.program.scheme",
// "points[].program.tiling.bm": none where the refusal is not of a value
// the study gave — the program file's own, a machine's, the host memory's
// bound). The point's host memory is bounded by hostBytes (0: the
// default), as its run's. machs, when not nil, holds the machines of the
// probes before (the point's run loads its own), and progs, when not nil,
// their program files parsed.
func (s *Study) probe(p Point, hostBytes int64, machs *machineCache, progs *programCache) (refusal error, keys []string) {
	paths := s.paths(p)
	read := readProgram
	if progs != nil {
		read = progs.read
	}
	f, err := read(paths.program, paths.written)
	if err != nil {
		return nil, nil // (Check refuses the files that cannot be read)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	o := s.runOptions(paths.machine, p)
	o.MaxHostBytes = hostBytes
	hooks := programs.RunHooks{Context: ctx}
	if machs != nil {
		hooks.Machines = machs
	}
	_, err = programs.Execute(f, o, hooks)
	if err == nil || !badinput.Is(err) {
		return nil, nil
	}
	// The study gave the value refused where one of its overrides set the
	// program file's key refused (RefusedBy finds them, as
	// NamedOverrideBy does for the point's record), or is itself refused
	// ("--set machine.cores=0: …").
	studyKeys := func(paths []string) []string {
		var out []string
		for _, path := range paths {
			k := s.studyKey(path)
			if (strings.HasPrefix(k, "set.") || strings.HasPrefix(k, "vary.") || strings.HasPrefix(k, "points[].")) && !slices.Contains(out, k) {
				out = append(out, k)
			}
		}
		return out
	}
	var ps []string
	for _, o := range f.RefusedBy(err) {
		path, _, _ := strings.Cut(o, "=")
		ps = append(ps, path)
	}
	keys = studyKeys(ps)
	if rest, ok := strings.CutPrefix(err.Error(), "--set "); ok && len(keys) == 0 {
		if path, _, ok := strings.Cut(rest, "="); ok && !strings.ContainsAny(path, " :") {
			keys = studyKeys([]string{path})
		}
	}
	return err, keys
}

// setKey returns the first of keys (probe's) that is a key of the study's
// set ("set.program.m"), or "".
func setKey(keys []string) string {
	for _, k := range keys {
		if strings.HasPrefix(k, "set.") {
			return k
		}
	}
	return ""
}

// refusal words refusal, point p's refusal of the value o given by the
// study's key (its set's, "set.program.m", or a varied parameter's,
// "vary.program.scheme"), as Check's refusals: the study file's line (a
// points' key: the line of p's entry), the key, the value and the
// constraint, naming the program file as the study writes it.
func (s *Study) refusal(p Point, refusal error, key string, o machines.Override) error {
	prog, _ := s.written(p)
	msg := s.paths(p).rewrite(firstLine(refusal))
	detail := ": " + msg
	if rest, ok := strings.CutPrefix(msg, "--set "+o.String()+": "); ok {
		detail = ": " + rest
	} else if rest, ok := strings.CutPrefix(msg, prog+": "); ok {
		detail = fmt.Sprintf(" (program %s): %s", prog, rest)
	}
	return badInput(fmt.Errorf("%s: key %q: %s%s", s.pointAt(p, key), key, o, detail))
}

// setRefusal is refusal for the study's set value key.
func (s *Study) setRefusal(p Point, refusal error, key string) error {
	o := s.Set[0]
	for _, x := range s.Set {
		if "set."+x.Path == key {
			o = x
			break
		}
	}
	return s.refusal(p, refusal, key, o)
}

// probeMachines is how many machines checkSet's probes keep (machineCache;
// ~1.6 KiB each, loaded, for ascend-910a): a study varies its machine.*
// keys over a few values as a rule, but may vary them over thousands, each
// point's machine then its own — kept or not, loaded once.
const probeMachines = 64

// machineCache is the programs.MachineCache of checkSet's probes: the
// machines they loaded, by name or path, text and machine.* overrides —
// the last max used, the others dropped (textCache). A probe took 65–80 %
// of its time loading its machine again (an emulated-gemm on ascend-910a);
// probes one after the other on one machine now load it once. It reads the
// machine's text at each lookup: a file changed since is loaded again.
type machineCache struct {
	mu sync.Mutex
	textCache[*machines.Machine]
	// read is the text the last lookup that missed read, by key: the text
	// its run's Load reads next, or older (Loaded keeps the machine with
	// it: a file changed in between only misses again).
	read map[string][]byte
}

func newMachineCache(max int) *machineCache {
	return &machineCache{textCache: newTextCache[*machines.Machine](max), read: map[string][]byte{}}
}

// machineCacheKey is the key of the machine Load(ref, overrides) returns
// in a machineCache: ref, and the overrides Load applies (machine.*, in
// their order; machines.Load ignores the others).
func machineCacheKey(ref string, overrides []machines.Override) string {
	var b strings.Builder
	b.WriteString(ref)
	for _, o := range overrides {
		if strings.HasPrefix(strings.ToLower(o.Path), "machine.") {
			fmt.Fprintf(&b, "\x00%s\x00%s", o.Path, o.Value)
		}
	}
	return b.String()
}

// Machine returns the machine loaded for ref and overrides, where kept and
// ref's text is still what it was loaded from.
func (c *machineCache) Machine(ref string, overrides []machines.Override) *machines.Machine {
	text, err := machines.Text(ref)
	if err != nil {
		return nil // (Load refuses it)
	}
	key := machineCacheKey(ref, overrides)
	c.mu.Lock()
	defer c.mu.Unlock()
	m, ok := c.get(key, text)
	if !ok {
		clear(c.read) // (the one lookup's before its Loaded)
		c.read[key] = text
	}
	return m
}

// Loaded keeps m, loaded for ref and overrides after a lookup that missed.
func (c *machineCache) Loaded(ref string, overrides []machines.Override, m *machines.Machine) {
	key := machineCacheKey(ref, overrides)
	c.mu.Lock()
	defer c.mu.Unlock()
	if text, ok := c.read[key]; ok {
		delete(c.read, key)
		c.put(key, text, m)
	}
}

// textCache keeps values made from a text (a loaded machine, a parsed
// program file) by key while the text stays the same: the last max used,
// the others dropped.
type textCache[V any] struct {
	max  int
	used int64 // the count of uses, for the entries' last use
	m    map[string]*textEntry[V]
}

// textEntry is one value of a textCache, the text it was made from, and
// when it was last used.
type textEntry[V any] struct {
	v    V
	text []byte
	used int64
}

func newTextCache[V any](max int) textCache[V] {
	return textCache[V]{max: max, m: map[string]*textEntry[V]{}}
}

// get returns the value kept for key, where it was made from text.
func (c *textCache[V]) get(key string, text []byte) (V, bool) {
	c.used++
	if e := c.m[key]; e != nil && bytes.Equal(e.text, text) {
		e.used = c.used
		return e.v, true
	}
	var zero V
	return zero, false
}

// put keeps v, made from text, for key, dropping the value used least
// recently where c is full.
func (c *textCache[V]) put(key string, text []byte, v V) {
	if _, ok := c.m[key]; !ok && len(c.m) >= c.max {
		oldest := ""
		for k, e := range c.m {
			if oldest == "" || e.used < c.m[oldest].used {
				oldest = k
			}
		}
		delete(c.m, oldest)
	}
	c.used++
	c.m[key] = &textEntry[V]{v: v, text: text, used: c.used}
}

// probePrograms is how many program files checkSet's probes keep parsed
// (programCache): a study has one as a rule, or varies program over a few.
const probePrograms = 16

// programCache holds the program files checkSet's probes parsed, by the
// name and folder they were parsed with and their text — the last max
// used, the others dropped —, and hands each probe a copy of its file
// (programs.File.Again: from the parsed document, as a parse of the same
// text makes it; the run writes its overrides into the copy's config,
// and the document is only read). A probe spent a quarter of its time
// parsing its program's YAML again (an emulated-gemm on ascend-910a). It
// reads the program's text at each probe: a file changed since is parsed
// again.
type programCache struct{ textCache[*programs.File] }

func newProgramCache(max int) *programCache {
	return &programCache{newTextCache[*programs.File](max)}
}

// read is readProgram(path, written), parsing the file once while its
// text stays the same: a fresh copy of the file parsed before.
func (c *programCache) read(path, written string) (*programs.File, error) {
	name, data, err := programText(path, written)
	if err != nil {
		return nil, err
	}
	dir := filepath.Dir(path)
	key := name + "\x00" + dir
	if f, ok := c.get(key, data); ok {
		return f.Again()
	}
	f, err := programs.Parse(name, dir, data)
	if err != nil {
		return nil, err
	}
	c.put(key, data, f)
	return f.Again()
}
