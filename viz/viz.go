// Package viz is the terminal visualizer of davinci-sim: per core, one lane
// per pipe over time with instruction classes in distinct colours and
// stalls marked by cause, buffer-occupancy gauges at the cursor time and the
// core's stall summary (the run summary's columns). A hosted run's trace
// has a host page first (its CPU's and link's lanes, their tasks by kind);
// a cluster run's trace shows a page per rank, its tracks (the host's, the
// NPU's core sets') as lanes. It replays a trace file or follows a run
// live; both read the same traces.Timeline.
//
// Keys: ←/→ pan, Shift+←/→ (or h/l) move the cursor one column, +/− zoom
// (also the mouse wheel), ↑/↓ or Tab change core (or rank, or to the
// host), n/p next/previous stall (after a search: n or Enter the next
// match, N the previous, as in less and vim), g/G start/end, / search an
// instruction, o overview, f follow (live), ? help, Esc back (the overview,
// the search, then the core opened from the overview, then quit), q quit.
package viz

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/gdamore/tcell/v2"

	"github.com/davinci-sim/davinci-sim/arch"
	"github.com/davinci-sim/davinci-sim/sim"
	"github.com/davinci-sim/davinci-sim/traces"
)

// Source supplies the timeline to draw. Read calls fn with the timeline;
// fn must not keep references to it (a live source keeps appending).
type Source interface {
	Read(fn func(*traces.Timeline))
}

type static struct{ tl *traces.Timeline }

func (s static) Read(fn func(*traces.Timeline)) { fn(s.tl) }

// StaticSource wraps a complete timeline (a trace file read back).
func StaticSource(tl *traces.Timeline) Source { return static{tl} }

// labelW is the narrowest lane label column ("MTE2 "); longer lane names
// (an SM's "tensor") widen it.
const labelW = 5

// maxScan bounds the slices examined per lane column (zoomed-out views of
// long runs stay fast; columns then show a sample of their slices).
const maxScan = 64

// Viewer is the visualizer's state and drawing. It is driven by Handle
// (input events) and Draw; Run wires both to a screen.
type Viewer struct {
	s   tcell.Screen
	src Source

	core   int      // the core shown (its ID)
	onHost bool     // the host's page is shown instead (hosted runs)
	t0     sim.Time // time at the left edge of the lanes
	span   sim.Time // time across the lanes
	cursor sim.Time
	fitted bool // the view was initialized
	follow bool // live: keep the whole run in view

	// overview shows one row per core (the chip overview); ovLane is the
	// lane its rows show (-1: the matrix unit's), ovTop the first row.
	overview bool
	ovLane   int
	ovTop    int

	lw int // width of the lane label column (labelW, or the longest lane label and a space)

	hostIdx hostIndex // the host's tasks by lane

	help bool
	// found is the last search's query (n/N/Enter repeat it; Esc clears
	// it); fromOverview: the core shown was opened from the chip overview
	// (Esc goes back to it).
	found        string
	fromOverview bool
	searching    bool
	query        string
	status       string

	interrupt func() // Options.Interrupt
}

// NewViewer returns a viewer drawing src on s (an initialized screen). With
// follow set the view keeps fitting the whole (growing) timeline until the
// user pans or zooms.
func NewViewer(s tcell.Screen, src Source, follow bool) *Viewer {
	v := &Viewer{s: s, src: src, follow: follow, core: -1, ovLane: -1, lw: labelW}
	return v
}

// Core returns the ID of the core shown (the last one, on the host's page).
func (v *Viewer) Core() int { return v.core }

// Host reports whether the host's page is shown (hosted runs).
func (v *Viewer) Host() bool { return v.onHost }

// Cursor returns the cursor time.
func (v *Viewer) Cursor() sim.Time { return v.cursor }

// View returns the time range of the lanes.
func (v *Viewer) View() (from, to sim.Time) { return v.t0, v.t0 + v.span }

// Status returns the message line.
func (v *Viewer) Status() string { return v.status }

// laneWidth is the number of lane columns.
func (v *Viewer) laneWidth() int {
	w, _ := v.s.Size()
	if w-v.lw < 1 {
		return 1
	}
	return w - v.lw
}

// fit makes the view cover the whole timeline.
func (v *Viewer) fit(tl *traces.Timeline) {
	v.t0 = tl.From
	v.span = tl.To - tl.From
	if min := sim.Time(v.laneWidth()); v.span < min {
		v.span = min
	}
}

// sync adapts the view to the timeline: first core, initial fit, follow.
func (v *Viewer) sync(tl *traces.Timeline) {
	v.lw = labelW
	for _, name := range tl.Lanes {
		v.lw = max(v.lw, len([]rune(laneLabel(name)))+1)
	}
	if hostRows(tl) > 0 {
		for _, name := range traces.HostLanes {
			v.lw = max(v.lw, len([]rune(name))+1)
		}
	} else {
		v.onHost = false
	}
	if !v.onHost && tl.Core(v.core) == nil && len(tl.Cores) > 0 {
		v.core = tl.Cores[0].ID
	}
	if !v.fitted || v.follow {
		v.fit(tl)
		if !v.fitted {
			v.cursor = tl.From
		}
		if v.follow { // the last instant (To is the end, past it)
			v.cursor = max(tl.From, tl.To-1)
		}
		v.fitted = true
	}
	if min := sim.Time(v.laneWidth()); v.span < min {
		v.span = min
	}
}

// colTime returns the start time of lane column c.
func (v *Viewer) colTime(c int) sim.Time {
	return v.t0 + sim.Time(int64(v.span)/int64(v.laneWidth())*int64(c)+int64(v.span)%int64(v.laneWidth())*int64(c)/int64(v.laneWidth()))
}

// timeCol returns the lane column of time t (may be outside the lanes).
func (v *Viewer) timeCol(t sim.Time) int {
	d := t - v.t0
	if d < 0 {
		return -1
	}
	w := int64(v.laneWidth())
	return int(int64(d)/int64(v.span)*w + int64(d)%int64(v.span)*w/int64(v.span))
}

// show moves the view so that t is visible (centred when it was not).
func (v *Viewer) show(t sim.Time) {
	if t < v.t0 || t >= v.t0+v.span {
		v.t0 = t - v.span/2
	}
}

// Handle processes one input event; it returns false when the user quits.
func (v *Viewer) Handle(ev tcell.Event) bool {
	var keep = true
	v.src.Read(func(tl *traces.Timeline) {
		v.sync(tl)
		keep = v.handle(tl, ev)
		v.clamp(tl)
	})
	return keep
}

// clamp keeps the view and the cursor on the run: the view starts at
// From at the earliest and ends at To at the latest (starts at From when
// it is wider than the run), the cursor in [From, To] — panning past
// either end showed negative times, or moved the cursor past the run's
// end. A timeline with nothing yet (To ≤ From) is left as it is.
func (v *Viewer) clamp(tl *traces.Timeline) {
	if tl.To <= tl.From {
		return
	}
	v.t0 = max(min(v.t0, tl.To-v.span), tl.From)
	v.cursor = min(max(v.cursor, tl.From), tl.To)
}

func (v *Viewer) handle(tl *traces.Timeline, ev tcell.Event) bool {
	switch ev := ev.(type) {
	case *tcell.EventResize:
		v.s.Sync()
		return true
	case *tcell.EventMouse:
		return v.mouse(tl, ev)
	case *tcell.EventKey:
		if ev.Key() == tcell.KeyCtrlC && v.interrupt != nil {
			v.interrupt() // (a live run: Ctrl-C stops it, as a SIGINT would)
			return false
		}
		if v.help {
			v.help = false
			if ev.Key() == tcell.KeyCtrlC {
				return false
			}
			return true
		}
		if v.searching {
			v.searchKey(tl, ev)
			return true
		}
		return v.key(tl, ev)
	}
	return true
}

func (v *Viewer) mouse(tl *traces.Timeline, ev *tcell.EventMouse) bool {
	x, _ := ev.Position()
	switch b := ev.Buttons(); {
	case b&tcell.WheelUp != 0:
		v.zoom(tl, 0.5)
	case b&tcell.WheelDown != 0:
		v.zoom(tl, 2)
	case b&tcell.Button1 != 0 && x >= v.lw:
		v.follow = false
		v.cursor = v.colTime(x - v.lw)
	}
	return true
}

func (v *Viewer) key(tl *traces.Timeline, ev *tcell.EventKey) bool {
	v.status = ""
	step := v.span / 8
	if step < 1 {
		step = 1
	}
	col := v.span / sim.Time(v.laneWidth())
	if col < 1 {
		col = 1
	}
	switch ev.Key() {
	case tcell.KeyCtrlC:
		return false
	case tcell.KeyEscape:
		// Back one step before quitting: the overview shown, an active
		// search, then the core opened from the chip overview.
		switch {
		case v.overview:
			v.overview, v.fromOverview = false, false
		case v.found != "":
			v.found, v.status = "", "search cleared"
		case v.fromOverview:
			v.overview, v.fromOverview = true, false
		default:
			return false
		}
	case tcell.KeyLeft:
		v.follow = false
		if ev.Modifiers()&tcell.ModShift != 0 {
			v.cursor -= col
			v.show(v.cursor)
		} else {
			v.t0 -= step
			v.cursor -= step
		}
	case tcell.KeyRight:
		v.follow = false
		if ev.Modifiers()&tcell.ModShift != 0 {
			v.cursor += col
			v.show(v.cursor)
		} else {
			v.t0 += step
			v.cursor += step
		}
	case tcell.KeyUp, tcell.KeyBacktab:
		v.switchCore(tl, -1)
	case tcell.KeyDown, tcell.KeyTab:
		v.switchCore(tl, +1)
	case tcell.KeyPgUp:
		v.switchCore(tl, -v.pageRows())
	case tcell.KeyPgDn:
		v.switchCore(tl, +v.pageRows())
	case tcell.KeyEnter:
		switch {
		case v.overview:
			v.overview, v.fromOverview = false, true
			v.status = v.shown(tl)
		case v.found != "":
			v.query = v.found
			v.search(tl, +1)
		}
	case tcell.KeyHome:
		v.start(tl)
	case tcell.KeyEnd:
		v.end(tl)
	case tcell.KeyRune:
		switch ev.Rune() {
		case 'q', 'Q':
			return false
		case '+', '=':
			v.zoom(tl, 0.5)
		case '-', '_':
			v.zoom(tl, 2)
		case 'h':
			v.follow = false
			v.cursor -= col
			v.show(v.cursor)
		case 'l':
			v.follow = false
			v.cursor += col
			v.show(v.cursor)
		case 'n':
			if v.found != "" {
				v.query = v.found
				v.search(tl, +1)
			} else {
				v.nextStall(tl, +1)
			}
		case 'N':
			if v.found != "" {
				v.query = v.found
				v.search(tl, -1)
			}
		case 'p':
			v.nextStall(tl, -1)
		case 'g':
			v.start(tl)
		case 'G':
			v.end(tl)
		case '/':
			v.searching, v.query = true, ""
		case '?':
			v.help = true
		case 'o':
			v.overview = !v.overview
		case '[':
			v.overviewLane(tl, -1)
		case ']':
			v.overviewLane(tl, +1)
		case 'f':
			v.follow = !v.follow
			if v.follow {
				v.status = "following the run"
			}
		case '0':
			v.follow = false
			v.fit(tl)
		}
	}
	return true
}

func (v *Viewer) start(tl *traces.Timeline) {
	v.follow = false
	v.t0, v.cursor = tl.From, tl.From
}

func (v *Viewer) end(tl *traces.Timeline) {
	v.follow = false
	v.cursor = tl.To
	if v.cursor > tl.From {
		v.cursor--
	}
	v.t0 = tl.To - v.span
	if v.t0 > v.cursor {
		v.t0 = v.cursor
	}
}

// zoom scales the span by f keeping the cursor at its screen column.
func (v *Viewer) zoom(tl *traces.Timeline, f float64) {
	v.follow = false
	if v.cursor < v.t0 || v.cursor >= v.t0+v.span {
		v.cursor = v.t0 + v.span/2
	}
	frac := float64(v.cursor-v.t0) / float64(v.span)
	span := sim.Time(float64(v.span) * f)
	if min := sim.Time(v.laneWidth()); span < min {
		span = min
	}
	if max := 4 * (tl.To - tl.From + 1); span > max && span > v.span {
		span = v.span
	}
	v.span = span
	v.t0 = v.cursor - sim.Time(frac*float64(span))
}

func (v *Viewer) switchCore(tl *traces.Timeline, d int) {
	n := hostRows(tl) + len(tl.Cores)
	if n == 0 {
		return
	}
	i := v.pos(tl)
	if v.overview && (d > 1 || d < -1) {
		i = min(max(i+d, 0), n-1) // page through the rows without wrapping
	} else {
		i = ((i+d)%n + n) % n
	}
	v.setPos(tl, i)
}

// pos returns the position of the page shown among the host's (first, in
// hosted runs) and the cores'.
func (v *Viewer) pos(tl *traces.Timeline) int {
	if v.onHost {
		return 0
	}
	return hostRows(tl) + sort.Search(len(tl.Cores), func(i int) bool { return tl.Cores[i].ID >= v.core })
}

// setPos shows the page at position i (see pos).
func (v *Viewer) setPos(tl *traces.Timeline, i int) {
	h := hostRows(tl)
	if v.onHost = i < h; !v.onHost {
		v.core = tl.Cores[i-h].ID
	}
}

// pageRows is the number of core rows the overview shows at once.
func (v *Viewer) pageRows() int {
	_, h := v.s.Size()
	return max(h-4, 1)
}

// overviewLane moves the lane the overview rows show by d.
func (v *Viewer) overviewLane(tl *traces.Timeline, d int) {
	n := len(tl.Lanes)
	if n == 0 {
		return
	}
	i := v.shownLane(tl)
	v.ovLane = ((i+d)%n + n) % n
	v.overview = true
}

// shownLane returns the lane the overview shows: the one chosen, else the
// matrix unit's (the lane where the most cores spend the most time on
// matrix instructions: M on DaVinci, tensor on an SM), else the first.
func (v *Viewer) shownLane(tl *traces.Timeline) int {
	if v.ovLane >= 0 && v.ovLane < len(tl.Lanes) {
		return v.ovLane
	}
	for i, name := range tl.Lanes {
		switch strings.ToLower(name) {
		case "m", "tensor", "mfma":
			return i
		}
	}
	return 0
}

// nextStall moves the cursor to the start of the next (dir > 0) or previous
// stall of the core, on any pipe.
func (v *Viewer) nextStall(tl *traces.Timeline, dir int) {
	if v.onHost {
		v.nextHostWait(tl, dir)
		return
	}
	c := tl.Core(v.core)
	if c == nil {
		return
	}
	best, bp, found := sim.Time(0), 0, -1
	for p := range c.Lanes {
		l := &c.Lanes[p]
		if dir > 0 {
			for i, s := range l.Scan(l.Search(func(s *traces.Slice) bool { return s.From > v.cursor })) {
				if s.Stall() {
					if found < 0 || s.From < best {
						best, bp, found = s.From, p, i
					}
					break
				}
			}
		} else {
			for i, s := range l.ScanBack(l.Search(func(s *traces.Slice) bool { return s.From >= v.cursor }) - 1) {
				if s.Stall() {
					if found < 0 || s.From > best {
						best, bp, found = s.From, p, i
					}
					break
				}
			}
		}
	}
	if found < 0 {
		v.status = "no more stalls"
		return
	}
	s := c.Lanes[bp].At(found)
	v.follow = false
	v.cursor = best
	v.show(best)
	v.status = fmt.Sprintf("stall %s on %v at %s for %s", tl.Name(&s), laneLabel(tl.LaneName(bp)), fmtTime(s.From), fmtTime(s.To-s.From))
}

func (v *Viewer) searchKey(tl *traces.Timeline, ev *tcell.EventKey) {
	switch ev.Key() {
	case tcell.KeyEscape, tcell.KeyCtrlC:
		v.searching = false
		v.status = ""
	case tcell.KeyEnter:
		v.searching = false
		v.found = strings.TrimSpace(v.query)
		v.search(tl, +1)
	case tcell.KeyBackspace, tcell.KeyBackspace2:
		if len(v.query) > 0 {
			r := []rune(v.query)
			v.query = string(r[:len(r)-1])
		}
	case tcell.KeyRune:
		v.query += string(ev.Rune())
	}
}

// search moves the cursor to the next (dir > 0) or previous instruction
// of the core, from the cursor and wrapping around, whose text contains the
// query.
func (v *Viewer) search(tl *traces.Timeline, dir int) {
	q := strings.TrimSpace(v.query)
	if v.onHost && q != "" {
		v.searchHost(tl, q, dir)
		return
	}
	c := tl.Core(v.core)
	if q == "" || c == nil {
		return
	}
	match := func(s *traces.Slice) bool {
		return s.Cause == arch.Busy && (strings.Contains(tl.Name(s), q) || strings.Contains(tl.Text(s), q))
	}
	// find returns the first match starting after `after` (at it too unless
	// strict), or with dir < 0 the last one starting before it.
	find := func(after sim.Time, strict bool) (sim.Time, int, *traces.Slice) {
		var best *traces.Slice
		var bp int
		for p := range c.Lanes {
			l := &c.Lanes[p]
			i := l.Search(func(s *traces.Slice) bool {
				return s.From > after || (!strict && s.From == after)
			})
			if dir > 0 {
				for _, s := range l.Scan(i) {
					if match(&s) {
						if best == nil || s.From < best.From {
							best, bp = &s, p
						}
						break
					}
				}
				continue
			}
			j := l.Search(func(s *traces.Slice) bool { return s.From >= after })
			for _, s := range l.ScanBack(j - 1) {
				if match(&s) {
					if best == nil || s.From > best.From {
						best, bp = &s, p
					}
					break
				}
			}
		}
		if best == nil {
			return 0, 0, nil
		}
		return best.From, bp, best
	}
	t, p, s := find(v.cursor, true)
	wrapped := false
	if s == nil {
		from := tl.From
		if dir < 0 {
			from = tl.To + 1
		}
		t, p, s = find(from, false)
		wrapped = true
	}
	if s == nil {
		v.status = fmt.Sprintf("%q: not found on %s", q, v.shown(tl))
		return
	}
	v.follow = false
	v.cursor = t
	v.show(t)
	v.status = fmt.Sprintf("%v @%s: %s", laneLabel(tl.LaneName(p)), fmtTime(t), tl.Text(s))
	if wrapped {
		v.status = "(wrapped) " + v.status
	}
}

// Options configure Run.
type Options struct {
	// Live redraws periodically while the source grows, until the
	// timeline is Done, and starts in follow mode.
	Live bool
	// Refresh is the live redraw period (default 50 ms: 20 Hz).
	Refresh time.Duration
	// Quit, when closed, ends Run (e.g. the live run failed to start).
	Quit <-chan struct{}
	// Interrupt, when set, is called on Ctrl-C, which then ends Run: a
	// live run's, to stop the run as a SIGINT would (the terminal's raw
	// mode delivers Ctrl-C as a key, not a signal). Unset, Ctrl-C quits
	// the viewer as q does.
	Interrupt func()

	started chan struct{} // tests: closed after the first draw
}

// Run initializes s, runs the viewer until the user quits, and restores the
// terminal (s.Fini).
func Run(s tcell.Screen, src Source, opts Options) error {
	if err := s.Init(); err != nil {
		return fmt.Errorf("terminal: %w", err)
	}
	defer s.Fini()
	s.EnableMouse(tcell.MouseButtonEvents)
	s.HideCursor()
	v := NewViewer(s, src, opts.Live)
	v.interrupt = opts.Interrupt
	events := make(chan tcell.Event, 16)
	quit := make(chan struct{})
	defer close(quit)
	go func() {
		for {
			ev := s.PollEvent()
			if ev == nil {
				return
			}
			select {
			case events <- ev:
			case <-quit:
				return
			}
		}
	}()
	var tick <-chan time.Time
	if opts.Live {
		d := opts.Refresh
		if d <= 0 {
			d = 50 * time.Millisecond
		}
		t := time.NewTicker(d)
		defer t.Stop()
		tick = t.C
	}
	v.Draw()
	if opts.started != nil {
		close(opts.started)
	}
	for {
		select {
		case ev := <-events:
			if !v.Handle(ev) {
				return nil
			}
			// Drain what is queued before drawing once.
			for more := true; more; {
				select {
				case ev := <-events:
					if !v.Handle(ev) {
						return nil
					}
				default:
					more = false
				}
			}
			v.Draw()
		case <-opts.Quit:
			return nil
		case <-tick:
			done := false
			src.Read(func(tl *traces.Timeline) { done = tl.Done })
			v.Draw()
			if done {
				tick = nil
			}
		}
	}
}
