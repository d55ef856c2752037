package viz

import (
	"fmt"
	"slices"
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

// shortName abbreviates the names of the legend and of the summary
// columns. They are used only where the full names do not fit the width,
// and then all of them (a legend or a table is either in full or short
// names).
var shortName = map[string]string{"vector": "vec", "scalar": "scal", "issue": "iss",
	"wait_flag": "wait", "barrier": "barr", "queue_empty": "empty", "queue_full": "full",
	"bandwidth": "bw", "latency": "lat", "compute": "comp", "transfer": "xfer"}

// abbrev returns the short name of name (name itself when it has none).
func abbrev(name string) string {
	if s, ok := shortName[name]; ok {
		return s
	}
	return name
}

// pipeCauses are the summary's columns after busy, as the run's summary
// (report.WriteSummary) prints them; queue_empty is the time no interval
// covers (the recorder keeps no idle intervals).
var pipeCauses = []arch.Cause{arch.WaitFlag, arch.Barrier, arch.QueueEmpty, arch.QueueFull, arch.Bandwidth, arch.Latency}

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
	if msg := emptyWindow(tl); msg != "" {
		v.header(" " + strings.TrimSpace(tl.Machine+" "+tl.Program))
		v.put(0, 1, msg, base)
		v.footer(tl, h-1)
		return
	}
	if v.overview {
		v.drawOverview(tl)
		return
	}
	if v.onHost {
		v.drawHost(tl)
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
	head := fmt.Sprintf(" %s (%d/%d)  view %s..%s  cursor %s%s", v.shown(tl), idx+1, len(tl.Cores),
		fmtTime(v.t0), fmtTime(v.t0+v.span), fmtTime(v.cursor), state)
	v.header(head)
	y++
	if c == nil {
		v.put(0, y, "no events recorded yet", base)
		v.footer(tl, h-1)
		return
	}
	lw := v.laneWidth()
	v.timeAxis(y, "time", lw)
	y++
	cc := v.timeCol(v.cursor)
	// Lanes.
	lanes := shownLanes(tl, c)
	for _, p := range lanes {
		if y >= h-1 {
			break
		}
		v.put(0, y, laneLabel(tl.LaneName(p)), labelStyle)
		v.drawLane(tl, c.Lane(p), y, lw, cc)
		y++
	}
	if y >= h-1 {
		v.footer(tl, h-1)
		return
	}
	// Legend: a cluster's tracks hold spans only (its drill-down into an
	// NPU, if any, instructions and stalls).
	cluster, pipes := isCluster(tl), !isCluster(tl)
	if cluster {
		isPipe := pipeLanes(tl)
		for _, p := range lanes {
			pipes = pipes || (p < len(isPipe) && isPipe[p])
		}
	}
	if !pipes {
		v.legend(y, []legendItem{{classMarks[traces.ClassOther], "span"}}, []legendItem{{stallMarks[arch.WaitFlag], "wait"}, {idleMark, "idle"}})
	} else {
		var classes, stalls []legendItem
		if cluster {
			classes = append(classes, legendItem{classMarks[traces.ClassOther], "span"})
		}
		for _, cl := range []traces.Class{traces.ClassCopy, traces.ClassLoad, traces.ClassMmad, traces.ClassL0C,
			traces.ClassVector, traces.ClassScalar, traces.ClassIssue} {
			classes = append(classes, legendItem{classMarks[cl], classMarks[cl].name})
		}
		for _, ca := range pipeCauses {
			if ca != arch.QueueEmpty { // (drawn as idle: '.')
				stalls = append(stalls, legendItem{stallMarks[ca], stallMarks[ca].name})
			}
		}
		v.legend(y, classes, stalls)
	}
	y++
	// What the pipes do at the cursor.
	if y < h-1 {
		x := v.put(0, y, "at cursor:", dimStyle)
		for _, p := range lanes {
			what := "-"
			if i := c.SliceAt(p, v.cursor); i >= 0 {
				s := c.Lane(p).At(i)
				what = tl.Name(&s)
				if s.Class == traces.ClassIssue {
					what = "issue " + what
				}
			}
			x = v.put(x+1, y, laneLabel(tl.LaneName(p))+":"+what, base)
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
		if (cp == 0 || cluster) && (b >= len(c.Occ) || len(c.Occ[b]) == 0) {
			// A global buffer (GM), one the trace says nothing about, or
			// in a cluster trace another rank's NPU's.
			continue
		}
		val := c.OccAt(b, v.cursor)
		gs = append(gs, gauge{tl.BufferName(b), val, cp, fmtBytes(val)})
	}
	if !cluster { // (a cluster trace records no GM bandwidth)
		// The traffic reaching HBM (after the L2), a share of the
		// machine's GM bandwidth (gm.bandwidth); a trace that does not
		// state it (written before it did) gets a share of the busiest
		// sample, and says so.
		bw := traces.SampleAt(tl.Bandwidth, v.cursor)
		g := gauge{"GM", bw, tl.GMBandwidth, fmt.Sprintf("%.0fGB/s", bw/1e9)}
		if g.capacity <= 0 {
			g.capacity, g.valS = tl.PeakBandwidth(), g.valS+" of peak seen"
		}
		gs = append(gs, g)
	}
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

// emptyWindow returns the line saying that a complete timeline holds
// nothing of the run — its window starts at or after the run's end, or no
// core (or rank, or host) did anything in it — and "" when it holds
// something (or the run is still going).
func emptyWindow(tl *traces.Timeline) string {
	if !tl.Done {
		return ""
	}
	asked := ""
	if tl.AskedFrom > 0 || tl.AskedTo > 0 {
		asked = " " + fmtTime(tl.AskedFrom) + ".."
		if tl.AskedTo > 0 {
			asked += fmtTime(tl.AskedTo)
		}
	}
	switch {
	case tl.To <= tl.From:
		return fmt.Sprintf("nothing of the run is in the window%s: the run ended at %s", asked, fmtTime(tl.To))
	case len(tl.Cores) == 0 && hostRows(tl) == 0:
		return fmt.Sprintf("no %s did anything in the window %s..%s", unit(tl), fmtTime(tl.From), fmtTime(tl.To))
	}
	return ""
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

// summary draws the time split of the core's lanes over the window: a
// chip's pipes by cause, with the run's summary's columns (busy, then
// pipeCauses, in its order and names); a cluster rank's tracks (its host's,
// its NPU's core sets'), which hold spans only, busy and idle — then the
// pipes of a drilled-in NPU, if the trace records their stalls. A track's
// time splits into busy, wait (a host's waits: for its kernels, at a
// barrier, in a collective of the NPUs) and idle.
func (v *Viewer) summary(tl *traces.Timeline, c *traces.CoreTimeline, y, limit int) {
	total := tl.To - tl.From
	pipes := pipeLanes(tl)
	var tracks, pipeRows []tableRow
	for _, p := range shownLanes(tl, c) {
		tot := c.Totals(p)
		rest := total // the time no interval covers: queue_empty (idle)
		for ca := range arch.NumCauses {
			if ca != arch.QueueEmpty {
				rest -= tot[ca]
			}
		}
		r := tableRow{label: laneLabel(tl.LaneName(p)), pct: []float64{pct(tot[arch.Busy], total)}}
		if p < len(pipes) && !pipes[p] {
			var wait sim.Time // a host's waits (the trace's "wait" spans)
			for ca := range arch.NumCauses {
				if ca != arch.Busy && ca != arch.QueueEmpty {
					wait += tot[ca]
				}
			}
			r.pct = append(r.pct, pct(wait, total), pct(max(rest, 0), total))
			tracks = append(tracks, r)
			continue
		}
		for _, ca := range pipeCauses {
			t := tot[ca]
			if ca == arch.QueueEmpty {
				t = max(rest, 0)
			}
			r.pct = append(r.pct, pct(t, total))
		}
		pipeRows = append(pipeRows, r)
	}
	if len(tracks) > 0 {
		y = v.table(y, limit, "track", []string{arch.Busy.String(), "wait", "idle"}, tracks)
	}
	if len(pipeRows) > 0 {
		cols := []string{arch.Busy.String()}
		for _, ca := range pipeCauses {
			cols = append(cols, ca.String())
		}
		v.table(y, limit, "pipe", cols, pipeRows)
	}
}

// pipeLanes tells, per lane of tl, whether it is a pipe (true), whose
// time the summary splits by stall cause, or a cluster trace's track of
// spans (false): the host's and the NPU core sets' tracks of each rank. A
// cluster trace's drill-down into one NPU (lanes "core 3 MTE2") is of
// pipes where the trace records their stalls.
func pipeLanes(tl *traces.Timeline) []bool {
	pipes := make([]bool, len(tl.Lanes))
	if !isCluster(tl) {
		for p := range pipes {
			pipes[p] = true
		}
		return pipes
	}
	stalls := false // (of the drilled-in cores' lanes: a host track has waits)
	for _, c := range tl.Cores {
		for p := range min(len(c.Lanes), len(pipes)) {
			if !strings.HasPrefix(tl.Lanes[p], "core ") {
				continue
			}
			tot := c.Totals(p)
			for ca := range arch.NumCauses {
				stalls = stalls || (ca != arch.Busy && tot[ca] > 0)
			}
		}
	}
	for p, name := range tl.Lanes {
		pipes[p] = stalls && strings.HasPrefix(name, "core ")
	}
	return pipes
}

// tableRow is a row of a summary table: its label and a percentage per
// column.
type tableRow struct {
	label string
	pct   []float64
}

// table draws a table of percentages from row y (above limit): a header of
// first and the column names, then the rows. Each column is as wide as its
// name or "100.0%" and a space; when the full names do not fit the screen,
// every column takes its short name (abbrev). It returns the row after the
// table.
func (v *Viewer) table(y, limit int, first string, cols []string, rows []tableRow) int {
	w, _ := v.s.Size()
	width := func(names []string) int {
		n := v.lw
		for _, c := range names {
			n += max(len(c), 6) + 1
		}
		return n
	}
	names := cols
	if width(cols) > w {
		names = make([]string, len(cols))
		for i, c := range cols {
			names[i] = abbrev(c)
		}
	}
	hdr := fmt.Sprintf("%-*s", v.lw, first)
	for _, c := range names {
		hdr += fmt.Sprintf("%*s", max(len(c), 6)+1, c)
	}
	if y >= limit {
		return y
	}
	v.put(0, y, hdr, labelStyle)
	y++
	for _, r := range rows {
		if y >= limit {
			break
		}
		line := fmt.Sprintf("%-*s", v.lw, r.label)
		for i, c := range names {
			if i < len(r.pct) {
				line += fmt.Sprintf("%*.1f%%", max(len(c), 6), r.pct[i])
			}
		}
		v.put(0, y, line, base)
		y++
	}
	return y
}

// legendItem is a mark and the name the legend gives it.
type legendItem struct {
	m    mark
	name string
}

// legend draws "C=copy L=load … | w=wait_flag …" on row y: the items,
// then after a bar the second group; in short names (abbrev) when the full
// ones do not fit the screen.
func (v *Viewer) legend(y int, items, after []legendItem) {
	w, _ := v.s.Size()
	text := func(short bool) []string {
		var out []string
		for _, it := range append(append([]legendItem{}, items...), after...) {
			name := it.name
			if short {
				name = abbrev(name)
			}
			out = append(out, "="+name)
		}
		return out
	}
	names := text(false)
	n := 1 // the bar
	for _, s := range names {
		n += 2 + len([]rune(s))
	}
	if n > w {
		names = text(true)
	}
	x := 0
	for i, it := range items {
		x = v.put(x, y, string(it.m.ch), it.m.style)
		x = v.put(x, y, names[i]+" ", base)
	}
	x = v.put(x, y, "|", dimStyle)
	for i, it := range after {
		x = v.put(x+1, y, string(it.m.ch), it.m.style)
		x = v.put(x, y, names[len(items)+i], base)
	}
}

// timeAxis draws the time axis on row y: label, then tick labels every
// ~16 of the lw lane columns.
func (v *Viewer) timeAxis(y int, label string, lw int) {
	v.put(0, y, label, dimStyle)
	for col := 0; col < lw; col += 16 {
		tick := "|" + fmtTime(v.colTime(col))
		if col+len(tick) > lw {
			break
		}
		v.put(v.lw+col, y, tick, dimStyle)
	}
}

// laneCount returns the lanes to draw for core c: the machine's, and any
// more the core's events use.
func laneCount(tl *traces.Timeline, c *traces.CoreTimeline) int {
	return max(len(tl.Lanes), len(c.Lanes))
}

// shownLanes returns the lanes to draw for core c (laneCount's), less, in
// a cluster trace, the lanes of a drill-down into another rank's NPU
// ("core 3 MTE2": lanes of one rank only) where c has no event.
func shownLanes(tl *traces.Timeline, c *traces.CoreTimeline) []int {
	n := laneCount(tl, c)
	lanes := make([]int, 0, n)
	cluster := isCluster(tl)
	for p := range n {
		if cluster && strings.HasPrefix(tl.LaneName(p), "core ") && (p >= len(c.Lanes) || c.Lanes[p].Len() == 0) {
			continue
		}
		lanes = append(lanes, p)
	}
	return lanes
}

func pct(a, b sim.Time) float64 {
	if b <= 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}

// drawOverview draws the chip overview: one row per core showing one lane
// (the matrix unit's by default), the host's CPU lane first in hosted runs,
// the selected row highlighted; Enter opens it. A cluster trace's overview
// has a row per rank.
func (v *Viewer) drawOverview(tl *traces.Timeline) {
	w, h := v.s.Size()
	lane := v.shownLane(tl)
	laneName := "-"
	if lane < len(tl.Lanes) {
		laneName = laneLabel(tl.Lanes[lane])
	}
	what, hosted := fmt.Sprintf("chip overview: lane %s, %s", laneName, plural(len(tl.Cores), "core")), hostRows(tl)
	if len(tl.Idle) > 0 {
		what += fmt.Sprintf(" (%s idle: left out of the trace)", traces.FormatCores(tl.Idle))
	}
	if hosted > 0 {
		what += " + host CPU"
	}
	if isCluster(tl) {
		what = fmt.Sprintf("cluster overview: track %s, %s (NPUs)", laneName, plural(len(tl.Cores), "rank"))
	}
	head := fmt.Sprintf(" %s  view %s..%s  cursor %s", what, fmtTime(v.t0), fmtTime(v.t0+v.span), fmtTime(v.cursor))
	v.header(head)
	lw := v.laneWidth()
	v.timeAxis(1, unit(tl), lw)
	rows := v.pageRows()
	n := hosted + len(tl.Cores)
	sel := v.pos(tl)
	if sel < v.ovTop {
		v.ovTop = sel
	}
	if sel >= v.ovTop+rows {
		v.ovTop = sel - rows + 1
	}
	v.ovTop = max(0, min(v.ovTop, n-rows))
	cc := v.timeCol(v.cursor)
	y := 2
	for i := v.ovTop; i < n && y < 2+rows; i++ {
		st := labelStyle
		if i == sel {
			st = st.Reverse(true)
		}
		if i < hosted {
			v.put(0, y, fmt.Sprintf("%-*s", v.lw, "host"), st)
			v.drawHostLane(tl, v.hostLanes(tl)[0], y, lw, cc)
			y++
			continue
		}
		c := tl.Cores[i-hosted]
		v.put(0, y, fmt.Sprintf("%-*d", v.lw, c.ID), st)
		v.drawLane(tl, c.Lane(lane), y, lw, cc)
		y++
	}
	if v.searching || v.status != "" || v.help {
		v.footer(tl, h-1)
		return
	}
	v.put(0, h-1, fitItems(w, []string{"↑/↓ PgUp/PgDn select", "Enter open " + unit(tl), "[/] lane", "o/Esc back",
		"←/→ pan", "+/- zoom", "q quit"}), dimStyle)
}

// header draws head on the top row, reversed, with "? help" at the right
// end: head is cut (ending in "…") where both do not fit.
func (v *Viewer) header(head string) {
	w, _ := v.s.Size()
	const help = "  ? help"
	room := w - len([]rune(help))
	if r := []rune(head); len(r) > room {
		head = string(r[:max(room-1, 0)]) + "…"
	}
	v.put(0, 0, head+strings.Repeat(" ", max(0, room-len([]rune(head))))+help, headStyle)
}

// fitItems joins items with two spaces in at most w columns: the items
// before the last are dropped whole, from the one before the last on, until
// the line fits (the last, "q quit", and the first stay); the first is cut
// (ending in "…") if the two alone do not fit.
func fitItems(w int, items []string) string {
	width := func(items []string) int {
		n := 2 * (len(items) - 1)
		for _, it := range items {
			n += len([]rune(it))
		}
		return n
	}
	items = slices.Clone(items)
	for len(items) > 2 && width(items) > w {
		items = slices.Delete(items, len(items)-2, len(items)-1)
	}
	if width(items) > w && len(items) == 2 {
		room := w - 2 - len([]rune(items[1]))
		if r := []rune(items[0]); room > 0 && len(r) > room {
			items[0] = string(r[:room-1]) + "…"
		}
	}
	return strings.Join(items, "  ")
}

// plural returns "n thing" or "n things".
func plural(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
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
		if isCluster(tl) && tl.Machine == "" {
			info = "cluster"
		}
		switch {
		case tl.Done && tl.Ending != "":
			info += "  (" + tl.Ending + ")"
		case tl.Done:
			info += "  (complete)"
		}
		for _, n := range tl.Notes { // what the trace leaves out ("truncated from 1.5ms")
			short, _, _ := strings.Cut(n, ":")
			info += "  (" + short + ")"
		}
		pages := unit(tl)
		if hostRows(tl) > 0 {
			pages += "/host"
		}
		w, _ := v.s.Size()
		v.put(0, y, fitItems(w, []string{strings.TrimSpace(info), "←/→ pan", "+/- zoom", "↑/↓ " + pages, "o overview",
			"n/p stall", "/ search", "q quit"}), dimStyle)
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
	"↑/↓, Tab   previous/next core or rank (the host first)",
	"o          overview: a row per core (Enter opens one,",
	"           [/] the lane shown, PgUp/PgDn pages)",
	"n/p        next/previous stall of the core (host: wait)",
	"           (after a search: n, Enter next match, N previous)",
	"g/G        start/end (Home/End)",
	"0          fit the whole trace",
	"/          search an instruction of the core",
	"f          follow the live run",
	"click      put the cursor there",
	"Esc        back: close the overview, clear the search,",
	"           return to the overview, then quit",
	"q          quit (Ctrl-C: also stop a live run)",
	"",
	"lanes: letters = instruction class (host: task),",
	"lower case = stall cause (host: wait), . = idle",
	"GM gauge: the traffic reaching HBM (after the L2)",
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
	v.drawCells(y, lw, cc, func(col int) mark { return v.cell(tl, l, col) })
}

// drawCells draws the lw columns of a lane on screen row y, each column's
// mark from cell, the cursor column cc reversed (a core's lanes, the
// host's).
func (v *Viewer) drawCells(y, lw, cc int, cell func(col int) mark) {
	for col := 0; col < lw; col++ {
		m := cell(col)
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
	best := mostCovered(cov[:])
	if best < int(traces.NumClasses) {
		return classMarks[best]
	}
	return stallMarks[best-int(traces.NumClasses)]
}

// fmtTime prints t with about four significant digits ("1.235µs"), in
// the unit its rounded value is below 1000 of (999.96ns is "1µs", not
// "1000ns").
func fmtTime(t sim.Time) string {
	neg := ""
	if t < 0 {
		neg, t = "-", -t
	}
	units := []struct {
		unit sim.Time
		name string
	}{{sim.Picosecond, "ps"}, {sim.Nanosecond, "ns"}, {sim.Microsecond, "µs"}, {sim.Millisecond, "ms"}, {sim.Second, "s"}}
	i := 0
	for i+1 < len(units) && t >= units[i+1].unit {
		i++
	}
	for {
		s, x := roundSig(float64(t) / float64(units[i].unit))
		if x < 1000 || i+1 == len(units) {
			return neg + s + units[i].name
		}
		i++ // rounded up to 1000 of this unit: 1 of the next
	}
}

// roundSig formats x ≥ 0 with four significant digits (but no decimals
// from 1000 on), trailing zeros trimmed, and returns the text and the
// value it shows.
func roundSig(x float64) (string, float64) {
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
	r, _ := strconv.ParseFloat(s, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s, r
}

// fmtBytes prints a byte count compactly ("132K", "1.5M"), in the unit
// its rounded value is below 1024 of (1048575 bytes is "1.0M", not
// "1024K").
func fmtBytes(b float64) string {
	type unit struct {
		size float64
		name string
		prec int
	}
	units := []unit{{1, "B", 0}, {1 << 10, "K", 0}, {1 << 20, "M", 1}, {1 << 30, "G", 1}}
	i := 0
	for i+1 < len(units) && b >= units[i+1].size {
		i++
	}
	for {
		u := units[i]
		s := strconv.FormatFloat(b/u.size, 'f', u.prec, 64)
		if r, _ := strconv.ParseFloat(s, 64); r < 1024 || i+1 == len(units) {
			return s + u.name
		}
		i++
	}
}

// mostCovered returns the index of the largest of a column's covered
// times (the first of equals): what the column shows.
func mostCovered(cov []sim.Time) int {
	best := 0
	for k := range cov {
		if cov[k] > cov[best] {
			best = k
		}
	}
	return best
}
