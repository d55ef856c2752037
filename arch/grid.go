package arch

import (
	"errors"
	"fmt"

	"github.com/davinci-sim/davinci-sim/isa"
	"github.com/davinci-sim/davinci-sim/sim"
)

// GridCore is a core model that runs CTAs of kernel launches (isa.Grid):
// GPU SMs and CUs. The chip's grid scheduler starts a CTA on a core when
// the core says it fits, and the core calls Chip.CTADone when a CTA has
// finished.
type GridCore interface {
	CoreModel
	// Admit reports why a CTA holding r could never be resident on this
	// core (nil: it can, on an otherwise empty core).
	Admit(r isa.Resources) error
	// Fits reports whether one more CTA holding r can be resident now.
	Fits(r isa.Resources) bool
	// StartCTA makes CTA cta of the current grid resident with stream s
	// and starts it at the current time; with timingOnly its instructions
	// are timed but not computed (isa.Grid.TimingOnly).
	StartCTA(cta int, s isa.Stream, r isa.Resources, timingOnly bool)
}

// gridPriority orders the grid scheduler's wake-ups after the cores' at the
// same instant (a finished CTA's core is settled before it gets the next).
const gridPriority = 4

// GridTimes are the times of one kernel launch of a run.
type GridTimes struct {
	Name     string
	CTAs     int
	Launched sim.Time // the launch began (the previous kernel finished)
	Started  sim.Time // the first CTA started (after the launch latency)
	Finished sim.Time // the last CTA finished
}

// gridRunner schedules the CTAs of a program's grids onto GridCores: the
// hardware block scheduler. CTAs go out in index order, breadth first over
// the cores (core 0, 1, …, then a second CTA on core 0 …) as long as they
// fit; when CTAs finish, the waiting ones go to the lowest-numbered cores
// with room.
type gridRunner struct {
	chip    *Chip
	waker   *sim.Waker
	cores   []GridCore
	grids   []isa.Grid
	times   []GridTimes
	done    []func(sim.Time) // per grid: called when it finishes (host-launched grids), or nil
	launch  sim.Time         // launch latency of a kernel
	cur     int              // grid running (len(grids): done)
	next    int              // next CTA of grid cur to start
	running int              // CTAs of grid cur resident
	started bool             // grid cur's launch latency has passed
}

// startGrids checks that every grid's CTAs fit the machine's cores and
// starts the grid scheduler.
func (c *Chip) startGrids(grids []isa.Grid) error {
	gr := &gridRunner{chip: c, grids: grids, times: make([]GridTimes, len(grids))}
	for _, core := range c.cores {
		g, ok := core.(GridCore)
		if !ok {
			return fmt.Errorf("machine %s (kind %s) does not run kernel grids; give per-core streams", c.M.Name, c.M.Kind)
		}
		gr.cores = append(gr.cores, g)
	}
	for i, g := range grids {
		if g.CTAs < 1 || g.CTA == nil {
			return fmt.Errorf("grid %q: needs at least one CTA and a CTA stream", g.Name)
		}
		if len(gr.cores) > 0 {
			if err := gr.cores[0].Admit(g.Resources); err != nil {
				return fmt.Errorf("grid %q: a CTA does not fit a core of machine %s: %w", g.Name, c.M.Name, err)
			}
		}
		gr.times[i] = GridTimes{Name: g.Name, CTAs: g.CTAs}
	}
	if c.kind.LaunchLatency != nil {
		gr.launch = c.kind.LaunchLatency(c)
	}
	gr.waker = sim.NewWaker(c.eng, gridPriority, gr)
	c.eng.Register(gr)
	c.grids = gr
	if len(grids) > 0 {
		gr.times[0].Launched = c.eng.Now()
		gr.waker.Wake(c.eng.Now() + gr.launch)
	}
	return nil
}

// CTADone tells the grid scheduler that core id finished a CTA at now.
func (c *Chip) CTADone(id int, now sim.Time) {
	gr := c.grids
	if gr == nil {
		c.Fail(errors.New("a core reported a finished CTA, but no grid is running"))
		return
	}
	gr.running--
	gr.waker.Wake(now)
}

// GridTimes returns the times of the run's kernel launches.
func (c *Chip) GridTimes() []GridTimes {
	if c.grids == nil {
		return nil
	}
	return c.grids.times
}

// Handle implements sim.Handler: start what can start, move to the next
// grid when one has finished.
func (gr *gridRunner) Handle(now sim.Time, _ int64) {
	for gr.cur < len(gr.grids) {
		g := &gr.grids[gr.cur]
		t := &gr.times[gr.cur]
		if !gr.started {
			if now < t.Launched+gr.launch {
				gr.waker.Wake(t.Launched + gr.launch)
				return
			}
			gr.started, t.Started = true, now
		}
		gr.dispatch(g, now)
		if gr.next < g.CTAs || gr.running > 0 {
			return // cores wake the scheduler as CTAs finish
		}
		t.Finished = now
		fin := gr.cur
		gr.cur++
		gr.next, gr.started = 0, false
		if gr.cur < len(gr.grids) {
			gr.times[gr.cur].Launched = now
		}
		if fin < len(gr.done) && gr.done[fin] != nil {
			gr.done[fin](now) // may append the host's next grid
		}
	}
}

// hostGrid appends grid g, launched by the host at now, to the grid
// scheduler (created on first use); done is called when its last CTA has
// finished. Grids run in launch order, one after the other.
func (c *Chip) hostGrid(g isa.Grid, now sim.Time, done func(sim.Time)) error {
	if c.grids == nil {
		if err := c.startGrids(nil); err != nil {
			return err
		}
	}
	gr := c.grids
	if g.CTAs < 1 || g.CTA == nil {
		return fmt.Errorf("grid %q: needs at least one CTA and a CTA stream", g.Name)
	}
	if len(gr.cores) > 0 {
		if err := gr.cores[0].Admit(g.Resources); err != nil {
			return fmt.Errorf("grid %q: a CTA does not fit a core of machine %s: %w", g.Name, c.M.Name, err)
		}
	}
	gr.grids = append(gr.grids, g)
	gr.times = append(gr.times, GridTimes{Name: g.Name, CTAs: g.CTAs})
	for len(gr.done) < len(gr.grids)-1 {
		gr.done = append(gr.done, nil)
	}
	gr.done = append(gr.done, done)
	if gr.cur == len(gr.grids)-1 {
		gr.times[gr.cur].Launched = now
		gr.next, gr.started = 0, false
		gr.waker.Wake(now + gr.launch)
	}
	return nil
}

// dispatch starts waiting CTAs of g, breadth first over the cores, while
// they fit.
func (gr *gridRunner) dispatch(g *isa.Grid, now sim.Time) {
	n := len(gr.cores)
	for gr.next < g.CTAs {
		placed := false
		for k := 0; k < n && gr.next < g.CTAs; k++ {
			core := gr.cores[k]
			if !core.Fits(g.Resources) {
				continue
			}
			core.StartCTA(gr.next, g.CTA(gr.next), g.Resources, g.TimingOnly)
			gr.next++
			gr.running++
			placed = true
		}
		if !placed {
			return
		}
	}
}

// Blocked implements sim.Waiter: a grid with CTAs left is waiting.
func (gr *gridRunner) Blocked() (bool, string) {
	if gr.cur >= len(gr.grids) {
		return false, ""
	}
	g := gr.grids[gr.cur]
	return true, fmt.Sprintf("grid %q: %d of %d CTAs not started, %d running", g.Name, g.CTAs-gr.next, g.CTAs, gr.running)
}
