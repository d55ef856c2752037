// Package archtest is the conformance suite every machine kind's core model
// passes (in the spirit of gonum's testblas): a kind's tests describe what
// to run — a machine, named cases, deadlocking cases and the kind's
// test-only switch to eager wake-ups — and Run checks, for every case:
//
//   - accounting: every picosecond of every lane of every core is attributed
//     to exactly one cause. In the statistics, each lane's causes sum to
//     Stats.Time exactly; through an Observer, each (core, lane) receives
//     non-empty Interval calls in time order that are contiguous, start at
//     0 and end at Stats.Time (the last ones closed by Finalize), whose
//     per-cause totals equal the lane's LaneStats.Time; a Busy interval
//     names its instruction and no other does; every lane and buffer index
//     lies inside the machine's Geometry, every time inside [0, Stats.Time].
//     Flag calls consume only flags raised before; GM bandwidth in use stays
//     within [0, gm.bandwidth].
//   - occupancy: every Occupancy call reports 0 ≤ bytes ≤ the Geometry
//     capacity of a core-local buffer; BufferStats.Capacity is the Geometry
//     capacity, 0 ≤ Peak ≤ Capacity, 0 ≤ Mean ≤ Peak, and Peak and Mean are
//     what the observed occupancy gives (its maximum, its time-weighted mean
//     over [0, Stats.Time]).
//   - determinism: a second run gives deep-equal Stats and the same observer
//     calls in the same order (intervals with their instructions, flags,
//     occupancy, bandwidth).
//   - observer: a run without an observer, and one with an observer that
//     declares it ignores flags (arch.FlagFilter), give the same Stats as
//     the recorded run; the latter sees every call but the flags.
//   - eager: with the kind's eager wake-ups switched on (Subject.EagerWake),
//     the run gives the same Stats (but for Events, which is what deferring
//     saves) and the observer is told the same things (the same multiset of
//     calls: observers may be told at different moments of the run, and each
//     run's intervals are checked to be in order per lane on their own).
//
// A case may add its own expectation (Case.Expect) that it exercises what it
// claims to (a queue-full stall, a buffer filled to capacity …).
//
// For every deadlocking case, Run checks that the run returns a
// *sim.DeadlockError (errors.As) whose message contains every Want
// substring — naming the waiting core, lane and what it waits on — and that
// the message is the same on a second run, with an observer and with eager
// wake-ups.
//
// A kind runs the suite from an external test package:
//
//	func TestConformance(t *testing.T) {
//		archtest.Run(t, archtest.Subject{
//			Machine:   m,
//			Cases:     []archtest.Case{{Name: "pingpong", Mode: arch.Timing, Program: ...}},
//			Deadlocks: []archtest.Deadlock{{Case: ..., Want: []string{"core 0: pipe M: wait_flag"}}},
//			EagerWake: mykind.SetEagerWake, // from the kind's export_test.go
//		})
//	}
//
// Run switches EagerWake, a package-level switch in the kinds that have
// one, so it must not run in parallel with other tests of the same kind.
package archtest

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/davinci-sim/davinci-sim/arch"
	"github.com/davinci-sim/davinci-sim/isa"
	"github.com/davinci-sim/davinci-sim/machines"
	"github.com/davinci-sim/davinci-sim/programs"
	"github.com/davinci-sim/davinci-sim/sim"
)

// Subject is what a machine kind provides to the suite.
type Subject struct {
	// Machine is the machine a case runs on unless it names its own.
	Machine *machines.Machine
	// Cases are the runs every check applies to; each must complete.
	Cases []Case
	// Deadlocks are runs that must end in a reported deadlock.
	Deadlocks []Deadlock
	// EagerWake, if not nil, switches the kind's test-only eager wake-up
	// schedule on (true) and off (false); the eager check compares runs
	// with it on to runs with it off. nil skips that check (logged).
	EagerWake func(on bool)
}

// Case is one run. It gives either Program (with an optional Prepare) or
// Start. Each is called once per run, on a fresh chip built by the suite
// with the case's machine, mode and the check's observer.
type Case struct {
	Name    string
	Machine *machines.Machine // nil: Subject.Machine
	Mode    arch.Mode
	// Program returns the program the run executes (Chip.Run).
	Program func() (isa.Program, error)
	// Prepare, if not nil, readies the chip before Program runs (places
	// the inputs in GM).
	Prepare func(chip *arch.Chip) error
	// Start, instead of Program and Prepare, readies the chip however the
	// case needs (GM data, an attached host program) and returns the
	// function that runs it (Chip.Run, Chip.RunHosted, …).
	Start func(chip *arch.Chip) (run func() (*arch.Stats, error), err error)
	// Expect, if not nil, checks that the run exercised what the case is
	// there for (e.g. a lane stalled on a full queue); it runs on the
	// statistics of the first run.
	Expect func(st *arch.Stats) error
}

// Deadlock is a run that must deadlock.
type Deadlock struct {
	Case
	// Want are substrings the deadlock message must contain: the waiting
	// core, its lane and what it waits on (e.g. "core 0: pipe M:
	// wait_flag MTE1->M id 3").
	Want []string
}

// Machine loads the machine file name (a built-in name or a path) with the
// overrides sets (key=value, as --set takes them), failing t on an error.
func Machine(t testing.TB, name string, sets ...string) *machines.Machine {
	t.Helper()
	ovs, err := machines.ParseOverrides(sets)
	if err != nil {
		t.Fatal(err)
	}
	m, err := machines.Load(name, ovs)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// Run runs the conformance suite on s: a subtest per case, and one per
// check below it.
func Run(t *testing.T, s Subject) {
	t.Helper()
	if len(s.Cases) == 0 && len(s.Deadlocks) == 0 {
		t.Fatal("archtest: the subject has no cases")
	}
	if s.EagerWake != nil {
		s.EagerWake(false)
	}
	names := map[string]bool{}
	for _, c := range s.Cases {
		if names[c.Name] {
			t.Errorf("archtest: two cases named %q", c.Name)
		}
		names[c.Name] = true
		t.Run(c.Name, func(t *testing.T) { runCase(t, s, c) })
	}
	for _, d := range s.Deadlocks {
		if names[d.Name] {
			t.Errorf("archtest: two cases named %q", d.Name)
		}
		names[d.Name] = true
		t.Run(d.Name, func(t *testing.T) { runDeadlock(t, s, d) })
	}
}

// run is one run of a case and what its observer saw (nil: no observer).
type run struct {
	chip  *arch.Chip
	stats *arch.Stats
	rec   *recorder
}

// how a run is observed.
type observe uint8

const (
	observeAll      observe = iota // a recorder
	observeNone                    // no observer
	observeNotFlags                // a recorder that ignores flags (arch.FlagFilter)
)

// execute runs case c once on a fresh chip.
func execute(s Subject, c Case, how observe) (*run, error) {
	m := c.Machine
	if m == nil {
		m = s.Machine
	}
	if m == nil {
		return nil, fmt.Errorf("archtest: case %q has no machine (Case.Machine and Subject.Machine are nil)", c.Name)
	}
	if (c.Program == nil) == (c.Start == nil) {
		return nil, fmt.Errorf("archtest: case %q must give exactly one of Program and Start", c.Name)
	}
	if c.Start != nil && c.Prepare != nil {
		return nil, fmt.Errorf("archtest: case %q gives Start and Prepare; Start prepares the chip itself", c.Name)
	}
	r := &run{}
	var obs arch.Observer
	switch how {
	case observeAll:
		r.rec = &recorder{geom: m.Geometry()}
		obs = r.rec
	case observeNotFlags:
		r.rec = &recorder{geom: m.Geometry()}
		obs = flagless{r.rec}
	}
	chip, err := arch.NewChip(m, arch.Options{Mode: c.Mode, Observer: obs})
	if err != nil {
		return nil, fmt.Errorf("building the chip: %w", err)
	}
	r.chip = chip
	var do func() (*arch.Stats, error)
	if c.Start != nil {
		if do, err = c.Start(chip); err != nil {
			return nil, fmt.Errorf("starting the case: %w", err)
		}
	} else {
		if c.Prepare != nil {
			if err := c.Prepare(chip); err != nil {
				return nil, fmt.Errorf("preparing the chip: %w", err)
			}
		}
		p, err := c.Program()
		if err != nil {
			return nil, fmt.Errorf("building the program: %w", err)
		}
		do = func() (*arch.Stats, error) { return chip.Run(p) }
	}
	st, err := do()
	if err != nil {
		return r, err
	}
	if st == nil {
		return nil, errors.New("the run returned neither statistics nor an error")
	}
	r.stats = st
	return r, nil
}

// withEager runs f with the kind's eager wake-ups on.
func withEager(s Subject, f func()) {
	s.EagerWake(true)
	defer s.EagerWake(false)
	f()
}

func runCase(t *testing.T, s Subject, c Case) {
	ref, err := execute(s, c, observeAll)
	if err != nil {
		t.Fatalf("case %s: run failed: %v", c.Name, err)
	}
	st, geom := ref.stats, ref.chip.Geometry()
	t.Logf("case %s: simulated %v (%d ps), %d events, %d observer calls", c.Name, st.Time, int64(st.Time), st.Events, len(ref.rec.log))

	t.Run("accounting", func(t *testing.T) {
		checkStatsAccounting(t, c.Name, ref.chip, st)
		checkObserved(t, c.Name, ref.chip, st, ref.rec)
	})
	t.Run("occupancy", func(t *testing.T) { checkOccupancy(t, c.Name, ref.chip, st, ref.rec) })
	if c.Expect != nil {
		t.Run("expect", func(t *testing.T) {
			if err := c.Expect(st); err != nil {
				t.Errorf("case %s does not exercise what it is there for: %v", c.Name, err)
			}
		})
	}
	t.Run("determinism", func(t *testing.T) {
		again, err := execute(s, c, observeAll)
		if err != nil {
			t.Fatalf("case %s: second run failed: %v", c.Name, err)
		}
		compareStats(t, c.Name, "first run", "second run", geom, st, again.stats)
		compareLogs(t, c.Name, "first run", "second run", geom, ref.rec.log, again.rec.log)
	})
	t.Run("observer", func(t *testing.T) {
		bare, err := execute(s, c, observeNone)
		if err != nil {
			t.Fatalf("case %s: run without an observer failed: %v", c.Name, err)
		}
		compareStats(t, c.Name, "observed", "unobserved", geom, st, bare.stats)
		nf, err := execute(s, c, observeNotFlags)
		if err != nil {
			t.Fatalf("case %s: run with a flag-ignoring observer failed: %v", c.Name, err)
		}
		compareStats(t, c.Name, "observed", "observed without flags", geom, st, nf.stats)
		var want []event
		for _, e := range ref.rec.log {
			if e.kind != evFlag {
				want = append(want, e)
			}
		}
		compareLogs(t, c.Name, "observer minus its flag calls", "flag-ignoring observer", geom, want, nf.rec.log)
	})
	t.Run("eager", func(t *testing.T) {
		if s.EagerWake == nil {
			t.Skip("the kind has no eager wake-up switch (Subject.EagerWake is nil): deferred == eager not checked")
		}
		var eager *run
		withEager(s, func() { eager, err = execute(s, c, observeAll) })
		if err != nil {
			t.Fatalf("case %s: run with eager wake-ups failed: %v", c.Name, err)
		}
		checkStatsAccounting(t, c.Name+" (eager)", eager.chip, eager.stats)
		checkObserved(t, c.Name+" (eager)", eager.chip, eager.stats, eager.rec)
		a, b := *st, *eager.stats
		a.Events, b.Events = 0, 0
		compareStats(t, c.Name, "deferred", "eager", geom, &a, &b)
		compareMultisets(t, c.Name, "deferred", "eager", geom, ref.rec.log, eager.rec.log)
	})
}

func runDeadlock(t *testing.T, s Subject, d Deadlock) {
	if len(d.Want) == 0 {
		t.Fatalf("archtest: deadlock case %s has no Want substrings", d.Name)
	}
	check := func(how string, r *run, err error) string {
		t.Helper()
		if err == nil {
			var end sim.Time
			if r != nil && r.stats != nil {
				end = r.stats.Time
			}
			t.Fatalf("deadlock case %s (%s): the run completed at %v, want a deadlock", d.Name, how, end)
		}
		var dl *sim.DeadlockError
		if !errors.As(err, &dl) {
			t.Fatalf("deadlock case %s (%s): error %q (%T) is not a *sim.DeadlockError", d.Name, how, err, err)
		}
		if len(dl.Blocked) == 0 {
			t.Errorf("deadlock case %s (%s): the deadlock names no blocked component: %q", d.Name, how, err)
		}
		msg := err.Error()
		for _, w := range d.Want {
			if !strings.Contains(msg, w) {
				t.Errorf("deadlock case %s (%s): message lacks %q:\n%s", d.Name, how, w, msg)
			}
		}
		return msg
	}
	r, err := execute(s, d.Case, observeAll)
	msg := check("observed", r, err)
	t.Logf("deadlock case %s: %s", d.Name, msg)
	r, err = execute(s, d.Case, observeNone)
	if m := check("unobserved", r, err); m != msg {
		t.Errorf("deadlock case %s: message differs without an observer:\nobserved:   %s\nunobserved: %s", d.Name, msg, m)
	}
	r, err = execute(s, d.Case, observeAll)
	if m := check("second run", r, err); m != msg {
		t.Errorf("deadlock case %s: message differs between runs:\nfirst:  %s\nsecond: %s", d.Name, msg, m)
	}
	if s.EagerWake == nil {
		t.Log("the kind has no eager wake-up switch (Subject.EagerWake is nil): deferred == eager not checked")
		return
	}
	withEager(s, func() { r, err = execute(s, d.Case, observeAll) })
	if m := check("eager", r, err); m != msg {
		t.Errorf("deadlock case %s: message differs with eager wake-ups:\ndeferred: %s\neager:    %s", d.Name, msg, m)
	}
}

// ---- the observer --------------------------------------------------------

type evKind uint8

const (
	evInterval evKind = iota
	evFlag
	evOccupancy
	evBandwidth
)

// event is one observer call. Comparable: logs compare with ==.
type event struct {
	kind     evKind
	core     int
	x, y, id int // interval: x = lane; flag: x = src, y = dst, id; occupancy: x = buffer
	cause    arch.Cause
	set      bool
	from, to sim.Time // point events: from
	bytes    int64
	bps      float64
	hasIn    bool
	in       isa.Instr  // Busy intervals: the instruction, copied
	group    arch.Group // N = 0: none
}

// recorder is an arch.Observer that logs every call.
type recorder struct {
	geom *machines.Geometry
	log  []event
}

func (r *recorder) Interval(core, lane int, cause arch.Cause, from, to sim.Time, in *isa.Instr, g *arch.Group) {
	e := event{kind: evInterval, core: core, x: lane, cause: cause, from: from, to: to}
	if in != nil {
		e.hasIn, e.in = true, *in
	}
	if g != nil {
		e.group = *g
		if g.N == 0 {
			e.group.N = -1 // a group of none: wrong, and so reported
		}
	}
	r.log = append(r.log, e)
}

func (r *recorder) Flag(core, src, dst, id int, set bool, t sim.Time) {
	r.log = append(r.log, event{kind: evFlag, core: core, x: src, y: dst, id: id, set: set, from: t})
}

func (r *recorder) Occupancy(core, buf int, bytes int64, t sim.Time) {
	r.log = append(r.log, event{kind: evOccupancy, core: core, x: buf, bytes: bytes, from: t})
}

func (r *recorder) Bandwidth(t sim.Time, bps float64) {
	r.log = append(r.log, event{kind: evBandwidth, bps: bps, from: t})
}

// flagless is a recorder that declares it ignores flags.
type flagless struct{ *recorder }

func (flagless) IgnoresFlags() bool { return true }

// names gives lane and buffer names for messages.
type names struct{ g *machines.Geometry }

func (n names) lane(i int) string {
	if i >= 0 && i < len(n.g.Lanes) {
		return n.g.Lanes[i]
	}
	return fmt.Sprintf("lane#%d(outside the geometry)", i)
}

func (n names) buf(i int) string {
	if i >= 0 && i < len(n.g.Buffers) {
		return n.g.Buffers[i].Name
	}
	return fmt.Sprintf("buffer#%d(outside the geometry)", i)
}

func (n names) instr(in isa.Instr) string {
	var bufs []string
	for _, b := range n.g.Buffers {
		bufs = append(bufs, b.Name)
	}
	return (&isa.Names{Lanes: n.g.Lanes, Buffers: bufs}).Format(in)
}

// at formats a time exactly, with its picoseconds.
func at(t sim.Time) string { return fmt.Sprintf("%v (%d ps)", t, int64(t)) }

func (n names) event(e event) string {
	switch e.kind {
	case evInterval:
		s := fmt.Sprintf("interval core %d lane %s %s [%s, %s)", e.core, n.lane(e.x), e.cause, at(e.from), at(e.to))
		if e.hasIn {
			s += " " + n.instr(e.in)
		}
		if g := e.group; g.N != 0 {
			s += fmt.Sprintf(" (group of %d: %d bytes, %g flops)", g.N, g.Bytes, g.Flops)
		}
		return s
	case evFlag:
		what := "consumed"
		if e.set {
			what = "set"
		}
		return fmt.Sprintf("flag core %d %s->%s id %d %s at %s", e.core, n.lane(e.x), n.lane(e.y), e.id, what, at(e.from))
	case evOccupancy:
		return fmt.Sprintf("occupancy core %d %s %d bytes from %s", e.core, n.buf(e.x), e.bytes, at(e.from))
	case evBandwidth:
		return fmt.Sprintf("GM bandwidth %g B/s from %s", e.bps, at(e.from))
	}
	return fmt.Sprintf("event kind %d", e.kind)
}

// ---- checks --------------------------------------------------------------

// maxErrors bounds the errors a check reports before it stops.
const maxErrors = 10

// errs counts a check's errors and stops it after maxErrors.
type errs struct {
	t *testing.T
	n int
}

func (e *errs) Errorf(format string, args ...any) {
	e.t.Helper()
	e.n++
	if e.n > maxErrors {
		e.t.Fatalf("… more than %d errors; stopping this check", maxErrors)
	}
	e.t.Errorf(format, args...)
}

// checkStatsAccounting checks that the statistics attribute every
// picosecond of every lane of every core to one cause.
func checkStatsAccounting(t *testing.T, name string, chip *arch.Chip, st *arch.Stats) {
	t.Helper()
	e := &errs{t: t}
	geom, n := chip.Geometry(), names{chip.Geometry()}
	if st.Time < 0 {
		e.Errorf("case %s: Stats.Time %s is negative", name, at(st.Time))
	}
	if st.Geometry == nil || !reflect.DeepEqual(st.Geometry, geom) {
		e.Errorf("case %s: Stats.Geometry is not the chip's geometry", name)
	}
	if len(st.Cores) != chip.M.Cores {
		e.Errorf("case %s: %d cores in Stats, the machine has %d", name, len(st.Cores), chip.M.Cores)
	}
	if st.GMUtilisation < 0 || st.GMUtilisation > 1+1e-9 || math.IsNaN(st.GMUtilisation) {
		e.Errorf("case %s: GM utilisation %g outside [0, 1]", name, st.GMUtilisation)
	}
	ran := 0
	for ci, cs := range st.Cores {
		if cs.Finish < 0 || cs.Finish > st.Time {
			e.Errorf("case %s: core %d finished at %s, outside [0, Stats.Time = %s]", name, ci, at(cs.Finish), at(st.Time))
		}
		if cs.Finish > 0 {
			ran++
			if len(cs.Lanes) != len(geom.Lanes) {
				e.Errorf("case %s: core %d ran and has %d lanes in Stats, the geometry %d (%v)", name, ci, len(cs.Lanes), len(geom.Lanes), geom.Lanes)
			}
		} else if len(cs.Lanes) > len(geom.Lanes) {
			e.Errorf("case %s: core %d has %d lanes in Stats, the geometry %d (%v)", name, ci, len(cs.Lanes), len(geom.Lanes), geom.Lanes)
		}
		for li, ls := range cs.Lanes {
			var sum sim.Time
			for cause, v := range ls.Time {
				if v < 0 {
					e.Errorf("case %s: core %d lane %s: %s time %s is negative", name, ci, n.lane(li), arch.Cause(cause), at(v))
				}
				sum += v
			}
			// A core that never ran may leave its lanes unaccounted (all
			// zero); one that ran, or accounts at all, must cover the run.
			if sum != st.Time && (cs.Finish > 0 || sum != 0) {
				e.Errorf("case %s: core %d lane %s: causes sum to %s, the run took %s (off by %d ps): %s",
					name, ci, n.lane(li), at(sum), at(st.Time), int64(sum-st.Time), causes(ls))
			}
		}
	}
	if ran == 0 && st.Time > 0 {
		e.Errorf("case %s: the run took %s but no core reports a finish time", name, at(st.Time))
	}
}

func causes(ls arch.LaneStats) string {
	var parts []string
	for c, v := range ls.Time {
		if v != 0 {
			parts = append(parts, fmt.Sprintf("%s %d ps", arch.Cause(c), int64(v)))
		}
	}
	if len(parts) == 0 {
		return "(no time)"
	}
	return strings.Join(parts, ", ")
}

type laneKey struct{ core, lane int }

// checkObserved checks the observer's calls: intervals that tile [0,
// Stats.Time) per lane and add up to the statistics; flags, occupancy and
// bandwidth inside the geometry and the run.
func checkObserved(t *testing.T, name string, chip *arch.Chip, st *arch.Stats, rec *recorder) {
	t.Helper()
	e := &errs{t: t}
	geom, n := chip.Geometry(), names{chip.Geometry()}
	cores := chip.M.Cores
	end := map[laneKey]sim.Time{}                    // end of the last interval seen
	total := map[laneKey]*[arch.NumCauses]sim.Time{} // per-cause sums
	type flagKey struct{ core, src, dst, id int }
	raised := map[flagKey]int{}
	var lastBW sim.Time
	lastFlag := map[int]sim.Time{}
	for i, ev := range rec.log {
		switch ev.kind {
		case evInterval:
			if ev.core < 0 || ev.core >= cores || ev.x < 0 || ev.x >= len(geom.Lanes) {
				e.Errorf("case %s: observer call %d: %s: core or lane outside the machine (%d cores, lanes %v)", name, i, n.event(ev), cores, geom.Lanes)
				continue
			}
			if ev.cause >= arch.NumCauses {
				e.Errorf("case %s: observer call %d: %s: no such cause", name, i, n.event(ev))
				continue
			}
			if ev.to <= ev.from {
				e.Errorf("case %s: observer call %d: %s: empty or reversed interval", name, i, n.event(ev))
			}
			if (ev.cause == arch.Busy) != ev.hasIn {
				e.Errorf("case %s: observer call %d: %s: a Busy interval must name its instruction, no other may", name, i, n.event(ev))
			}
			if g := ev.group; g.N != 0 {
				if b, f := ev.in.Amount(0); !ev.hasIn || g.N < 2 || g.Bytes < b || g.Flops < f {
					e.Errorf("case %s: observer call %d: %s: a group is of two or more busy instructions, at least the first's bytes and flops", name, i, n.event(ev))
				}
			}
			k := laneKey{ev.core, ev.x}
			if prev := end[k]; ev.from != prev {
				how := "overlaps the previous one"
				if ev.from > prev {
					how = fmt.Sprintf("leaves a gap of %d ps unattributed", int64(ev.from-prev))
				}
				if _, seen := end[k]; !seen {
					how = "is the lane's first and does not start at 0"
				}
				e.Errorf("case %s: core %d lane %s: observer call %d: %s %s (the lane's previous interval ended at %s)",
					name, ev.core, n.lane(ev.x), i, n.event(ev), how, at(prev))
			}
			if ev.to > st.Time {
				e.Errorf("case %s: core %d lane %s: observer call %d: %s ends after the run (%s)", name, ev.core, n.lane(ev.x), i, n.event(ev), at(st.Time))
			}
			end[k] = ev.to
			if total[k] == nil {
				total[k] = new([arch.NumCauses]sim.Time)
			}
			total[k][ev.cause] += ev.to - ev.from
		case evFlag:
			if ev.core < 0 || ev.core >= cores || ev.x < 0 || ev.x >= len(geom.Lanes) || ev.y < 0 || ev.y >= len(geom.Lanes) || ev.id < 0 {
				e.Errorf("case %s: observer call %d: %s: core, lane or id outside the machine (%d cores, lanes %v)", name, i, n.event(ev), cores, geom.Lanes)
				continue
			}
			if ev.from < 0 || ev.from > st.Time {
				e.Errorf("case %s: observer call %d: %s: outside the run [0, %s]", name, i, n.event(ev), at(st.Time))
			}
			if ev.from < lastFlag[ev.core] {
				e.Errorf("case %s: observer call %d: %s: before the core's previous flag event (%s)", name, i, n.event(ev), at(lastFlag[ev.core]))
			}
			lastFlag[ev.core] = ev.from
			k := flagKey{ev.core, ev.x, ev.y, ev.id}
			if ev.set {
				raised[k]++
			} else if raised[k]--; raised[k] < 0 {
				e.Errorf("case %s: observer call %d: %s: consumes a flag that was not raised", name, i, n.event(ev))
				raised[k] = 0
			}
		case evOccupancy:
			// checkOccupancy checks these.
		case evBandwidth:
			if ev.from < 0 || ev.from > st.Time || ev.from < lastBW {
				e.Errorf("case %s: observer call %d: %s: outside the run [0, %s] or before the previous bandwidth change (%s)", name, i, n.event(ev), at(st.Time), at(lastBW))
			}
			lastBW = ev.from
			if peak := float64(chip.M.GM.Bandwidth); math.IsNaN(ev.bps) || ev.bps < 0 || ev.bps > peak*(1+1e-9) {
				e.Errorf("case %s: observer call %d: %s: outside [0, gm.bandwidth = %g B/s]", name, i, n.event(ev), peak)
			}
		}
	}
	// Every lane the statistics account is covered up to the end, with the
	// same time per cause.
	for ci, cs := range st.Cores {
		for li, ls := range cs.Lanes {
			k := laneKey{ci, li}
			var got [arch.NumCauses]sim.Time
			if total[k] != nil {
				got = *total[k]
			}
			if last, seen := end[k]; seen && last != st.Time {
				e.Errorf("case %s: core %d lane %s: the observed intervals end at %s, the run at %s (the last interval is not closed by Finalize)",
					name, ci, n.lane(li), at(last), at(st.Time))
			}
			if got != ls.Time {
				e.Errorf("case %s: core %d lane %s: the observed intervals add up to %s, the statistics say %s",
					name, ci, n.lane(li), causes(arch.LaneStats{Time: got}), causes(ls))
			}
		}
	}
	for k := range end {
		if k.core >= len(st.Cores) || k.lane >= len(st.Cores[k.core].Lanes) {
			e.Errorf("case %s: core %d lane %s has observed intervals but no statistics", name, k.core, n.lane(k.lane))
		}
	}
}

type bufKey struct{ core, buf int }

// checkOccupancy checks the observed occupancy against the geometry and the
// buffer statistics.
func checkOccupancy(t *testing.T, name string, chip *arch.Chip, st *arch.Stats, rec *recorder) {
	t.Helper()
	e := &errs{t: t}
	geom, n := chip.Geometry(), names{chip.Geometry()}
	cores := chip.M.Cores
	type track struct {
		peak     int64
		bytes    int64
		since    sim.Time
		integral float64
		seen     bool
	}
	tracks := map[bufKey]*track{}
	for i, ev := range rec.log {
		if ev.kind != evOccupancy {
			continue
		}
		if ev.core < 0 || ev.core >= cores || ev.x < 0 || ev.x >= len(geom.Buffers) {
			e.Errorf("case %s: observer call %d: %s: core or buffer outside the machine (%d cores, %d buffers)", name, i, n.event(ev), cores, len(geom.Buffers))
			continue
		}
		b := geom.Buffers[ev.x]
		if b.Global {
			e.Errorf("case %s: observer call %d: %s: occupancy of a global buffer", name, i, n.event(ev))
		}
		if ev.bytes < 0 || ev.bytes > b.Capacity {
			e.Errorf("case %s: core %d buffer %s: observer call %d: %d bytes allocated at %s, outside [0, capacity %d]",
				name, ev.core, b.Name, i, ev.bytes, at(ev.from), b.Capacity)
		}
		if ev.from < 0 || ev.from > st.Time {
			e.Errorf("case %s: observer call %d: %s: outside the run [0, %s]", name, i, n.event(ev), at(st.Time))
		}
		k := bufKey{ev.core, ev.x}
		tr := tracks[k]
		if tr == nil {
			tr = &track{}
			tracks[k] = tr
		}
		if ev.from < tr.since {
			e.Errorf("case %s: observer call %d: %s: before the buffer's previous change (%s)", name, i, n.event(ev), at(tr.since))
		}
		tr.integral += float64(tr.bytes) * float64(ev.from-tr.since)
		tr.bytes, tr.since, tr.seen = ev.bytes, ev.from, true
		tr.peak = max(tr.peak, ev.bytes)
	}
	for ci, cs := range st.Cores {
		if cs.Finish > 0 && len(cs.Buffers) != len(geom.Buffers) {
			e.Errorf("case %s: core %d ran and has %d buffers in Stats, the geometry %d", name, ci, len(cs.Buffers), len(geom.Buffers))
		}
		for bi, bs := range cs.Buffers {
			if bi >= len(geom.Buffers) {
				e.Errorf("case %s: core %d: buffer statistics #%d outside the geometry's %d buffers", name, ci, bi, len(geom.Buffers))
				continue
			}
			b := geom.Buffers[bi]
			if b.Global {
				continue // unused entry
			}
			if bs == (arch.BufferStats{}) && cs.Finish == 0 {
				continue // a core that never ran may leave its buffers empty
			}
			if bs.Capacity != b.Capacity {
				e.Errorf("case %s: core %d buffer %s: capacity %d in Stats, %d in the geometry", name, ci, b.Name, bs.Capacity, b.Capacity)
			}
			if bs.Peak < 0 || bs.Peak > b.Capacity {
				e.Errorf("case %s: core %d buffer %s: peak %d bytes outside [0, capacity %d]", name, ci, b.Name, bs.Peak, b.Capacity)
			}
			if math.IsNaN(bs.Mean) || bs.Mean < 0 || bs.Mean > float64(bs.Peak)*(1+1e-12) {
				e.Errorf("case %s: core %d buffer %s: mean %g bytes outside [0, peak %d]", name, ci, b.Name, bs.Mean, bs.Peak)
			}
			tr := tracks[bufKey{ci, bi}]
			if tr == nil {
				tr = &track{}
			}
			if tr.peak != bs.Peak {
				e.Errorf("case %s: core %d buffer %s: peak %d bytes in Stats, the observed occupancy peaks at %d", name, ci, b.Name, bs.Peak, tr.peak)
			}
			var mean float64
			if st.Time > 0 {
				integral := tr.integral
				if st.Time > tr.since {
					integral += float64(tr.bytes) * float64(st.Time-tr.since)
				}
				mean = integral / float64(st.Time)
			}
			if d := math.Abs(mean - bs.Mean); d > 1e-9*max(math.Abs(mean), 1) {
				e.Errorf("case %s: core %d buffer %s: mean %g bytes in Stats, the observed occupancy gives %g over [0, %s]", name, ci, b.Name, bs.Mean, mean, at(st.Time))
			}
		}
	}
	for k := range tracks {
		if k.core >= len(st.Cores) || k.buf >= len(st.Cores[k.core].Buffers) {
			e.Errorf("case %s: core %d buffer %s has observed occupancy but no statistics", name, k.core, n.buf(k.buf))
		}
	}
}

// compareStats reports how b differs from a.
func compareStats(t *testing.T, name, an, bn string, geom *machines.Geometry, a, b *arch.Stats) {
	t.Helper()
	if reflect.DeepEqual(a, b) {
		return
	}
	n := names{geom}
	var d []string
	add := func(what string, x, y any) {
		if !reflect.DeepEqual(x, y) {
			d = append(d, fmt.Sprintf("%s: %s %v, %s %v", what, an, x, bn, y))
		}
	}
	add("Time", a.Time, b.Time)
	add("Cycles", a.Cycles, b.Cycles)
	add("Events", a.Events, b.Events)
	add("GMReadBytes", a.GMReadBytes, b.GMReadBytes)
	add("GMWriteBytes", a.GMWriteBytes, b.GMWriteBytes)
	add("GMUtilisation", a.GMUtilisation, b.GMUtilisation)
	add("MMADFlops", a.MMADFlops, b.MMADFlops)
	add("L2HitBytes", a.L2HitBytes, b.L2HitBytes)
	add("L2MissBytes", a.L2MissBytes, b.L2MissBytes)
	add("Geometry", a.Geometry, b.Geometry)
	add("len(Cores)", len(a.Cores), len(b.Cores))
	for ci := range min(len(a.Cores), len(b.Cores)) {
		x, y := a.Cores[ci], b.Cores[ci]
		add(fmt.Sprintf("core %d Finish", ci), x.Finish, y.Finish)
		add(fmt.Sprintf("core %d Instrs", ci), x.Instrs, y.Instrs)
		add(fmt.Sprintf("core %d len(Lanes)", ci), len(x.Lanes), len(y.Lanes))
		for li := range min(len(x.Lanes), len(y.Lanes)) {
			add(fmt.Sprintf("core %d lane %s", ci, n.lane(li)), causes(x.Lanes[li])+fmt.Sprintf(", %d instrs", x.Lanes[li].Instrs),
				causes(y.Lanes[li])+fmt.Sprintf(", %d instrs", y.Lanes[li].Instrs))
		}
		add(fmt.Sprintf("core %d len(Buffers)", ci), len(x.Buffers), len(y.Buffers))
		for bi := range min(len(x.Buffers), len(y.Buffers)) {
			add(fmt.Sprintf("core %d buffer %s", ci, n.buf(bi)), x.Buffers[bi], y.Buffers[bi])
		}
	}
	if len(d) == 0 {
		d = append(d, fmt.Sprintf("%s %+v\n%s %+v", an, *a, bn, *b))
	}
	if len(d) > maxErrors {
		d = append(d[:maxErrors], fmt.Sprintf("… and %d more differences", len(d)-maxErrors))
	}
	t.Errorf("case %s: statistics differ, %s vs %s:\n  %s", name, an, bn, strings.Join(d, "\n  "))
}

// compareLogs reports the first difference between two observer logs that
// must be equal call by call.
func compareLogs(t *testing.T, name, an, bn string, geom *machines.Geometry, a, b []event) {
	t.Helper()
	n := names{geom}
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			var ctx []string
			for j := max(0, i-3); j < min(i+4, len(a), len(b)); j++ {
				mark := " "
				if a[j] != b[j] {
					mark = "≠"
				}
				ctx = append(ctx, fmt.Sprintf("%s %d: %s | %s", mark, j, n.event(a[j]), n.event(b[j])))
			}
			t.Errorf("case %s: observer call %d differs: %s %s, %s %s\n  %s", name, i, an, n.event(a[i]), bn, n.event(b[i]), strings.Join(ctx, "\n  "))
			return
		}
	}
	if len(a) != len(b) {
		long, ln := a, an
		if len(b) > len(a) {
			long, ln = b, bn
		}
		t.Errorf("case %s: %d observer calls %s, %d %s; the first extra one (%s): %s",
			name, len(a), an, len(b), bn, ln, n.event(long[min(len(a), len(b))]))
	}
}

// compareMultisets reports observer calls one log has and the other not,
// regardless of order.
func compareMultisets(t *testing.T, name, an, bn string, geom *machines.Geometry, a, b []event) {
	t.Helper()
	count := make(map[event]int, len(a))
	for _, e := range a {
		count[e]++
	}
	for _, e := range b {
		count[e]--
	}
	var onlyA, onlyB []event
	for e, c := range count {
		for ; c > 0; c-- {
			onlyA = append(onlyA, e)
		}
		for ; c < 0; c++ {
			onlyB = append(onlyB, e)
		}
	}
	if len(onlyA) == 0 && len(onlyB) == 0 {
		return
	}
	n := names{geom}
	show := func(es []event) string {
		slices.SortFunc(es, func(x, y event) int {
			return cmp.Or(cmp.Compare(x.from, y.from), cmp.Compare(x.core, y.core), cmp.Compare(x.kind, y.kind), cmp.Compare(x.x, y.x))
		})
		var s []string
		for i, e := range es {
			if i == maxErrors {
				s = append(s, fmt.Sprintf("… %d more", len(es)-i))
				break
			}
			s = append(s, n.event(e))
		}
		if len(s) == 0 {
			return "(none)"
		}
		return strings.Join(s, "\n    ")
	}
	t.Errorf("case %s: the observer was told different things, %s (%d calls) vs %s (%d calls):\n  only %s (%d):\n    %s\n  only %s (%d):\n    %s",
		name, an, len(a), bn, len(b), an, len(onlyA), show(onlyA), bn, len(onlyB), show(onlyB))
}

// ProgramFile is a case running the program file file (a path relative to
// the repository root, e.g. programs/examples/hgemm.yaml) as a job: built
// anew for every run, prepared on the suite's chip (GM inputs; lu-fused
// attaches its host program), then run; sets are --set overrides.
func ProgramFile(t *testing.T, name, file string, sets []string, expect ...func(*arch.Stats) error) Case {
	t.Helper()
	f, err := programs.ReadFile(filepath.Join(repoRoot(t), file))
	if err != nil {
		t.Fatal(err)
	}
	ovs, err := machines.ParseOverrides(sets)
	if err != nil {
		t.Fatal(err)
	}
	opts := programs.Options{Overrides: ovs}
	m, err := programs.MachineFor(f, opts)
	if err != nil {
		t.Fatal(err)
	}
	job, err := f.Kind.Build(f, m, opts)
	if err != nil {
		t.Fatalf("%s %v: %v", file, sets, err)
	}
	return Case{
		Name: name, Machine: m, Mode: job.Mode(),
		Start: func(chip *arch.Chip) (func() (*arch.Stats, error), error) {
			job, err := f.Kind.Build(f, m, opts)
			if err != nil {
				return nil, err
			}
			if err := job.Prepare(chip); err != nil {
				return nil, err
			}
			return func() (*arch.Stats, error) { return chip.Run(job.Program()) }, nil
		},
		Expect: All(expect...),
	}
}

// All combines expectations (nil ones are skipped; none: nil).
func All(expect ...func(*arch.Stats) error) func(*arch.Stats) error {
	var fs []func(*arch.Stats) error
	for _, f := range expect {
		if f != nil {
			fs = append(fs, f)
		}
	}
	if len(fs) == 0 {
		return nil
	}
	return func(st *arch.Stats) error {
		for _, f := range fs {
			if err := f(st); err != nil {
				return err
			}
		}
		return nil
	}
}

// repoRoot returns the repository root (the directory of go.mod above the
// test's working directory).
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		up := filepath.Dir(dir)
		if up == dir {
			t.Fatal("no go.mod above the test directory")
		}
		dir = up
	}
}
