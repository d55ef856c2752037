package viz

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/gdamore/tcell/v2"

	"github.com/davinci-sim/davinci-sim/arch"
	"github.com/davinci-sim/davinci-sim/sim"
	"github.com/davinci-sim/davinci-sim/traces"
)

// mark is how a lane cell shows a class or a stall cause.
type mark struct {
	ch    rune
	style tcell.Style
	name  string
}

var base = tcell.StyleDefault

// classMarks: busy instructions, upper-case letters on a coloured
// background (the letters keep a plain-text capture readable).
var classMarks = [traces.NumClasses]mark{
	traces.ClassOther:  {'O', base.Background(tcell.ColorGray).Foreground(tcell.ColorBlack), "other"},
	traces.ClassScalar: {'S', base.Background(tcell.ColorSilver).Foreground(tcell.ColorBlack), "scalar"},
	traces.ClassCopy:   {'C', base.Background(tcell.ColorBlue).Foreground(tcell.ColorWhite), "copy"},
	traces.ClassLoad:   {'L', base.Background(tcell.ColorTeal).Foreground(tcell.ColorWhite), "load"},
	traces.ClassMmad:   {'M', base.Background(tcell.ColorGreen).Foreground(tcell.ColorBlack), "mmad"},
	traces.ClassL0C:    {'X', base.Background(tcell.ColorPurple).Foreground(tcell.ColorWhite), "l0c"},
	traces.ClassVector: {'V', base.Background(tcell.ColorOlive).Foreground(tcell.ColorBlack), "vector"},
	traces.ClassFlag:   {'|', base.Foreground(tcell.ColorWhite), "flag"},
	traces.ClassIssue:  {'i', base.Background(tcell.ColorDarkSlateGray).Foreground(tcell.ColorWhite), "issue"},
}

// stallMarks: stalls by cause, lower-case letters in a warm colour on the
// default background.
var stallMarks = [arch.NumCauses]mark{
	arch.WaitFlag:  {'w', base.Foreground(tcell.ColorRed).Bold(true), "wait_flag"},
	arch.Barrier:   {'b', base.Foreground(tcell.ColorFuchsia).Bold(true), "barrier"},
	arch.QueueFull: {'f', base.Foreground(tcell.ColorOrange).Bold(true), "queue_full"},
	arch.Bandwidth: {'d', base.Foreground(tcell.ColorYellow).Bold(true), "bandwidth"},
	arch.Latency:   {'l', base.Foreground(tcell.ColorAqua), "latency"},
}

// legendName abbreviates the legend so that it fits 80 columns.
var legendName = map[string]string{"copy": "copy", "load": "load", "mmad": "mmad", "l0c": "l0c", "vector": "vec",
	"scalar": "scal", "issue": "iss", "wait_flag": "wait", "barrier": "barr", "queue_full": "full",
	"latency": "lat", "bandwidth": "bw"}

var (
	idleMark   = mark{'.', base.Foreground(tcell.ColorDimGray), "idle"}
	emptyMark  = mark{' ', base, ""}
	labelStyle = base.Bold(true)
	headStyle  = base.Reverse(true)
	dimStyle   = base.Foreground(tcell.ColorGray)
)

// Draw renders the current state on the screen and shows it.
func (v *Viewer) Draw() {
	v.s.Clear()
	v.src.Read(func(tl *traces.Timeline) {
		v.sync(tl)
		v.draw(tl)
	})
	v.s.Show()
}

// put writes str at (x, y), clipped to the screen width; it returns the
// column after the text.
func (v *Viewer) put(x, y int, str string, st tcell.Style) int {
	w, _ := v.s.Size()
	for _, r := range str {
		if x >= w {
			break
		}
		if x >= 0 {
			v.s.SetContent(x, y, r, nil, st)
		}
		x++
	}
	return x
}

func (v *Viewer) draw(tl *traces.Timeline) {
	w, h := v.s.Size()
	if w < 20 || h < 3 {
		v.put(0, 0, "window too small", base)
		return
	}
	if v.overview {
		v.drawOverview(tl)
		return
	}
	c := tl.Core(v.core)
	y := 0
	// Header.
	state := ""
	if !tl.Done {
		state = "  running"
	}
	if v.follow {
		state += " (follow)"
	}
	if tl.Dropped > 0 {
		state += "  kept from " + fmtTime(tl.Dropped)
	}
	idx := sort.Search(len(tl.Cores), func(i int) bool { return tl.Cores[i].ID >= v.core })
	head := fmt.Sprintf(" core %d (%d/%d)  view %s..%s  cursor %s%s", v.core, idx+1, len(tl.Cores),
		fmtTime(v.t0), fmtTime(v.t0+v.span), fmtTime(v.cursor), state)
	v.put(0, y, head+strings.Repeat(" ", max(0, w-len([]rune(head))-8))+"  ? help", headStyle)
	y++
	if c == nil {
		v.put(0, y, "no events recorded yet", base)
		v.footer(tl, h-1)
		return
	}
	// Time axis: tick labels every ~16 columns.
	lw := v.laneWidth()
	v.put(0, y, "time", dimStyle)
	for col := 0; col < lw; col += 16 {
		label := "|" + fmtTime(v.colTime(col))
		if col+len(label) > lw {
			break
		}
		v.put(v.lw+col, y, label, dimStyle)
	}
	y++
	cc := v.timeCol(v.cursor)
	// Lanes.
	for p := 0; p < laneCount(tl, c) && y < h-1; p++ {
		v.put(0, y, tl.LaneName(p), labelStyle)
		v.drawLane(tl, c.Lane(p), y, lw, cc)
		y++
	}
	if y >= h-1 {
		v.footer(tl, h-1)
		return
	}
	// Legend.
	x := 0
	for _, cl := range []traces.Class{traces.ClassCopy, traces.ClassLoad, traces.ClassMmad, traces.ClassL0C,
		traces.ClassVector, traces.ClassScalar, traces.ClassIssue} {
		m := classMarks[cl]
		x = v.put(x, y, string(m.ch), m.style)
		x = v.put(x, y, "="+legendName[m.name]+" ", base)
	}
	x = v.put(x, y, "|", dimStyle)
	for _, ca := range []arch.Cause{arch.WaitFlag, arch.Barrier, arch.QueueFull, arch.Latency, arch.Bandwidth} {
		m := stallMarks[ca]
		x = v.put(x+1, y, string(m.ch), m.style)
		x = v.put(x, y, "="+legendName[m.name], base)
	}
	y++
	// What the pipes do at the cursor.
	if y < h-1 {
		x = v.put(0, y, "at cursor:", dimStyle)
		for p := range laneCount(tl, c) {
			what := "-"
			if i := c.SliceAt(p, v.cursor); i >= 0 {
				s := c.Lane(p).At(i)
				what = tl.Name(&s)
				if s.Class == traces.ClassIssue {
					what = "issue " + what
				}
			}
			x = v.put(x+1, y, tl.LaneName(p)+":"+what, base)
		}
		y++
	}
	// Gauges at the cursor: buffers, then GM bandwidth.
	gw := (w - 1) / 2
	type gauge struct {
		name          string
		val, capacity float64
		valS          string
	}
	var gs []gauge
	for b := range max(len(tl.Buffers), len(c.Occ)) {
		cp := float64(tl.BufferCapacity(b))
		if cp == 0 && (b >= len(c.Occ) || len(c.Occ[b]) == 0) {
			continue // a global buffer (GM), or one the trace says nothing about
		}
		val := c.OccAt(b, v.cursor)
		gs = append(gs, gauge{tl.BufferName(b), val, cp, fmtBytes(val)})
	}
	bw := traces.SampleAt(tl.Bandwidth, v.cursor)
	gs = append(gs, gauge{"GM", bw, tl.PeakBandwidth(), fmt.Sprintf("%.0fGB/s", bw/1e9)})
	for i := 0; i < len(gs) && y < h-1; i += 2 {
		v.gauge(0, y, gw, gs[i].name, gs[i].val, gs[i].capacity, gs[i].valS)
		if i+1 < len(gs) {
			v.gauge(gw+1, y, gw, gs[i+1].name, gs[i+1].val, gs[i+1].capacity, gs[i+1].valS)
		}
		y++
	}
	// Stall summary of the core over the recorded window.
	if y < h-2 {
		v.summary(tl, c, y, h-1)
	}
	v.footer(tl, h-1)
}

// gauge draws "NAME [####....] 12.5% 128K" in width w.
func (v *Viewer) gauge(x, y, w int, name string, val, capacity float64, valS string) {
	frac := 0.0
	if capacity > 0 {
		frac = min(1, val/capacity)
	}
	tail := fmt.Sprintf(" %5.1f%% %s", 100*frac, valS)
	bar := w - v.lw - 2 - len(tail)
	if bar < 4 {
		v.put(x, y, fmt.Sprintf("%-4s %s", name, valS), base)
		return
	}
	v.put(x, y, name, labelStyle)
	x += v.lw
	x = v.put(x, y, "[", base)
	n := int(float64(frac*float64(bar)) + 0.5)
	if val > 0 && n == 0 {
		n = 1
	}
	st := base.Foreground(tcell.ColorGreen)
	if frac > 0.9 {
		st = base.Foreground(tcell.ColorRed)
	}
	x = v.put(x, y, strings.Repeat("#", n), st)
	x = v.put(x, y, strings.Repeat(".", bar-n), dimStyle)
	x = v.put(x, y, "]", base)
	v.put(x, y, tail, base)
}

// summary draws the per-pipe time split of the core over the window.
func (v *Viewer) summary(tl *traces.Timeline, c *traces.CoreTimeline, y, limit int) {
	total := tl.To - tl.From
	causes := []arch.Cause{arch.Busy, arch.WaitFlag, arch.Barrier, arch.QueueFull, arch.Latency, arch.Bandwidth}
	hdr := fmt.Sprintf("%-*s", v.lw, "pipe")
	for _, ca := range causes {
		name := ca.String()
		if ca == arch.QueueFull {
			name = "q_full"
		}
		hdr += fmt.Sprintf("%10s", name)
	}
	hdr += fmt.Sprintf("%10s", "idle")
	v.put(0, y, hdr, labelStyle)
	y++
	for p := 0; p < laneCount(tl, c) && y < limit; p++ {
		tot := c.Totals(p)
		line := fmt.Sprintf("%-*s", v.lw, tl.LaneName(p))
		rest := total
		for _, ca := range causes {
			line += fmt.Sprintf("%9.1f%%", pct(tot[ca], total))
			rest -= tot[ca]
		}
		line += fmt.Sprintf("%9.1f%%", pct(max(rest, 0), total))
		v.put(0, y, line, base)
		y++
	}
}

// laneCount returns the lanes to draw for core c: the machine's, and any
// more the core's events use.
func laneCount(tl *traces.Timeline, c *traces.CoreTimeline) int {
	return max(len(tl.Lanes), len(c.Lanes))
}

func pct(a, b sim.Time) float64 {
	if b <= 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}

// drawOverview draws the chip overview: one row per core showing one lane
// (the matrix unit's by default), the selected core highlighted; Enter opens
// it.
func (v *Viewer) drawOverview(tl *traces.Timeline) {
	w, h := v.s.Size()
	lane := v.shownLane(tl)
	laneName := "-"
	if lane < len(tl.Lanes) {
		laneName = tl.Lanes[lane]
	}
	head := fmt.Sprintf(" chip overview: lane %s, %d cores  view %s..%s  cursor %s", laneName, len(tl.Cores),
		fmtTime(v.t0), fmtTime(v.t0+v.span), fmtTime(v.cursor))
	v.put(0, 0, head+strings.Repeat(" ", max(0, w-len([]rune(head))-8))+"  ? help", headStyle)
	lw := v.laneWidth()
	v.put(0, 1, "core", dimStyle)
	for col := 0; col < lw; col += 16 {
		label := "|" + fmtTime(v.colTime(col))
		if col+len(label) > lw {
			break
		}
		v.put(v.lw+col, 1, label, dimStyle)
	}
	rows := v.pageRows()
	sel := sort.Search(len(tl.Cores), func(i int) bool { return tl.Cores[i].ID >= v.core })
	if sel < v.ovTop {
		v.ovTop = sel
	}
	if sel >= v.ovTop+rows {
		v.ovTop = sel - rows + 1
	}
	v.ovTop = max(0, min(v.ovTop, len(tl.Cores)-rows))
	cc := v.timeCol(v.cursor)
	y := 2
	for i := v.ovTop; i < len(tl.Cores) && y < 2+rows; i++ {
		c := tl.Cores[i]
		st := labelStyle
		if i == sel {
			st = st.Reverse(true)
		}
		v.put(0, y, fmt.Sprintf("%-*d", v.lw, c.ID), st)
		v.drawLane(tl, c.Lane(lane), y, lw, cc)
		y++
	}
	if v.searching || v.status != "" || v.help {
		v.footer(tl, h-1)
		return
	}
	v.put(0, h-1, "↑/↓ PgUp/PgDn select  Enter open core  [/] lane  o back  ←/→ pan  +/- zoom  q quit", dimStyle)
}

// footer draws the search prompt or the status line, and the help overlay.
func (v *Viewer) footer(tl *traces.Timeline, y int) {
	switch {
	case v.searching:
		v.put(0, y, "/"+v.query+"_", base)
	case v.status != "":
		v.put(0, y, v.status, base)
	default:
		info := tl.Machine
		if tl.Program != "" {
			info += " " + tl.Program
		}
		if tl.Done {
			info += "  (complete)"
		}
		v.put(0, y, strings.TrimSpace(info)+"  ←/→ pan  +/- zoom  ↑/↓ core  o chip  n/p stall  / search  q quit", dimStyle)
	}
	if v.help {
		v.drawHelp()
	}
}

var helpText = []string{
	"davinci-sim view — keys",
	"",
	"←/→        pan (1/8 of the view)",
	"Shift+←/→  move the cursor one column (also h/l)",
	"+/-        zoom in/out at the cursor (mouse wheel too)",
	"↑/↓, Tab   previous/next core",
	"o          chip overview: a row per core (Enter opens one,",
	"           [/] the lane shown, PgUp/PgDn pages)",
	"n/p        next/previous stall of the core",
	"           (after a search: n, Enter next match, N previous)",
	"g/G        start/end (Home/End)",
	"0          fit the whole trace",
	"/          search an instruction of the core",
	"f          follow the live run",
	"click      put the cursor there",
	"Esc        back: clear the search, return to the overview,",
	"           then quit",
	"q          quit",
	"",
	"lanes: letters = instruction class,",
	"lower case = stall cause, . = idle",
	"",
	"any key closes this help",
}

func (v *Viewer) drawHelp() {
	w, h := v.s.Size()
	bw := 0
	for _, l := range helpText {
		bw = max(bw, len([]rune(l)))
	}
	bw += 4
	x0, y0 := max(0, (w-bw)/2), max(0, (h-len(helpText)-2)/2)
	st := base.Reverse(true)
	for i := -1; i <= len(helpText); i++ {
		line := ""
		if i >= 0 && i < len(helpText) {
			line = helpText[i]
		}
		pad := bw - 2 - len([]rune(line))
		v.put(x0, y0+1+i, "  "+line+strings.Repeat(" ", max(0, pad)), st)
	}
}

// drawLane draws lane l's lw columns on screen row y, the cursor column cc
// reversed.
func (v *Viewer) drawLane(tl *traces.Timeline, l *traces.Lane, y, lw, cc int) {
	for col := 0; col < lw; col++ {
		m := v.cell(tl, l, col)
		st := m.style
		if col == cc {
			st = st.Reverse(true)
		}
		v.s.SetContent(v.lw+col, y, m.ch, nil, st)
	}
}

// cell returns the mark of lane column col: the busy class or stall cause
// covering most of the column (any busy time wins over idle), idle, or
// empty beyond the timeline.
func (v *Viewer) cell(tl *traces.Timeline, l *traces.Lane, col int) mark {
	a, b := v.colTime(col), v.colTime(col+1)
	if b <= a {
		b = a + 1
	}
	if a >= tl.To || b <= tl.From || b <= tl.Dropped {
		return emptyMark
	}
	i := l.Search(func(s *traces.Slice) bool { return s.To > a })
	var cov [int(traces.NumClasses) + int(arch.NumCauses)]sim.Time
	any := false
	n := 0
	for _, s := range l.Scan(i) {
		if s.From >= b || n == maxScan {
			break
		}
		n++
		if s.Class == traces.ClassFlag {
			continue
		}
		d := min(s.To, b) - max(s.From, a)
		if d <= 0 {
			continue
		}
		k := int(s.Class)
		if s.Cause != arch.Busy {
			k = int(traces.NumClasses) + int(s.Cause)
		}
		cov[k] += d
		any = true
	}
	if !any {
		return idleMark
	}
	best := 0
	for k := range cov {
		if cov[k] > cov[best] {
			best = k
		}
	}
	if best < int(traces.NumClasses) {
		return classMarks[best]
	}
	return stallMarks[best-int(traces.NumClasses)]
}

// fmtTime prints t with about four significant digits ("1.235µs").
func fmtTime(t sim.Time) string {
	neg := ""
	if t < 0 {
		neg, t = "-", -t
	}
	unit, name := sim.Picosecond, "ps"
	switch {
	case t >= sim.Second:
		unit, name = sim.Second, "s"
	case t >= sim.Millisecond:
		unit, name = sim.Millisecond, "ms"
	case t >= sim.Microsecond:
		unit, name = sim.Microsecond, "µs"
	case t >= sim.Nanosecond:
		unit, name = sim.Nanosecond, "ns"
	}
	x := float64(t) / float64(unit)
	prec := 0
	switch {
	case x < 10:
		prec = 3
	case x < 100:
		prec = 2
	case x < 1000:
		prec = 1
	}
	s := strconv.FormatFloat(x, 'f', prec, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return neg + s + name
}

// fmtBytes prints a byte count compactly ("132K", "1.5M").
func fmtBytes(b float64) string {
	switch {
	case b >= 1<<30:
		return strconv.FormatFloat(b/(1<<30), 'f', 1, 64) + "G"
	case b >= 1<<20:
		return strconv.FormatFloat(b/(1<<20), 'f', 1, 64) + "M"
	case b >= 1<<10:
		return strconv.FormatFloat(b/(1<<10), 'f', 0, 64) + "K"
	}
	return strconv.FormatFloat(b, 'f', 0, 64) + "B"
}
