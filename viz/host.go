package viz

import (
	"fmt"
	"sort"
	"strings"

	"github.com/gdamore/tcell/v2"

	"github.com/davinci-sim/davinci-sim/sim"
	"github.com/davinci-sim/davinci-sim/traces"
)

// This file holds the host page of hosted runs (the trace's host process:
// its CPU's tasks and its transfers over the link, one lane each) and what
// tells a cluster trace (ranks as cores, their tracks as lanes) from a
// chip's.

// hostKinds are the host task kinds a trace records (arch.HostObserver),
// in the order the host page lists them; the lane mark of each. Waits (for
// kernels, or for an operation outside the chip: async) are not busy.
var hostKinds = []struct {
	kind string
	mark mark
	busy bool
}{
	{"compute", mark{'C', base.Background(tcell.ColorGreen).Foreground(tcell.ColorBlack), "compute"}, true},
	{"launch", mark{'L', base.Background(tcell.ColorTeal).Foreground(tcell.ColorWhite), "launch"}, true},
	{"transfer", mark{'T', base.Background(tcell.ColorBlue).Foreground(tcell.ColorWhite), "transfer"}, true},
	{"call", mark{'K', base.Background(tcell.ColorSilver).Foreground(tcell.ColorBlack), "call"}, true},
	{"async", mark{'a', base.Foreground(tcell.ColorFuchsia).Bold(true), "async"}, false},
	{"wait", mark{'w', base.Foreground(tcell.ColorRed).Bold(true), "wait"}, false},
}

// otherHostMark marks a task of a kind hostKinds does not list.
var otherHostMark = mark{'O', base.Background(tcell.ColorGray).Foreground(tcell.ColorBlack), "other"}

// hostKind returns the index of kind in hostKinds (len(hostKinds): another).
func hostKind(kind string) int {
	for i, k := range hostKinds {
		if k.kind == kind {
			return i
		}
	}
	return len(hostKinds)
}

// hostBusy reports whether a task of kind keeps its lane busy (not a wait).
func hostBusy(kind string) bool {
	i := hostKind(kind)
	return i == len(hostKinds) || hostKinds[i].busy
}

// hostRows is 1 when the timeline has a host page (a hosted run's host
// tasks), which comes before the cores as Perfetto sorts the host process.
func hostRows(tl *traces.Timeline) int {
	if len(tl.Host) > 0 {
		return 1
	}
	return 0
}

// hostIndex caches the host tasks by lane (HostLanes), each in time order.
type hostIndex struct {
	n     int
	first *traces.HostTask
	lanes [][]traces.HostTask
}

// hostLanes returns the host's tasks by lane (rebuilt when tasks were added).
func (v *Viewer) hostLanes(tl *traces.Timeline) [][]traces.HostTask {
	hi := &v.hostIdx
	if len(tl.Host) == 0 {
		hi.n, hi.first, hi.lanes = 0, nil, make([][]traces.HostTask, len(traces.HostLanes))
		return hi.lanes
	}
	if hi.n == len(tl.Host) && hi.first == &tl.Host[0] && hi.lanes != nil {
		return hi.lanes
	}
	lanes := make([][]traces.HostTask, len(traces.HostLanes))
	for i := range tl.Host {
		t := &tl.Host[i]
		if l := t.Lane(); l >= 0 && l < len(lanes) {
			lanes[l] = append(lanes[l], *t)
		}
	}
	for _, l := range lanes {
		// A live run reports tasks as they end: sort them by start.
		sort.SliceStable(l, func(i, j int) bool { return l[i].From < l[j].From })
	}
	hi.n, hi.first, hi.lanes = len(tl.Host), &tl.Host[0], lanes
	return lanes
}

// hostTaskAt returns the index of the task of lane l covering t (-1: none).
func hostTaskAt(l []traces.HostTask, t sim.Time) int {
	i := sort.Search(len(l), func(i int) bool { return l[i].From > t })
	for j := i - 1; j >= 0 && i-j <= maxScan; j-- {
		if l[j].To > t {
			return j
		}
	}
	return -1
}

// hostCell returns the mark of host lane l's column col: the kind covering
// most of it, idle, or empty beyond the timeline.
func (v *Viewer) hostCell(tl *traces.Timeline, l []traces.HostTask, col int) mark {
	a, b := v.colTime(col), v.colTime(col+1)
	if b <= a {
		b = a + 1
	}
	if a >= tl.To || b <= tl.From {
		return emptyMark
	}
	cov := make([]sim.Time, len(hostKinds)+1)
	any := false
	i := sort.Search(len(l), func(i int) bool { return l[i].From >= b })
	for j := i - 1; j >= 0 && i-j <= maxScan; j-- {
		t := &l[j]
		if d := min(t.To, b) - max(t.From, a); d > 0 {
			cov[hostKind(t.Kind)] += d
			any = true
		}
	}
	if !any {
		return idleMark
	}
	best := mostCovered(cov)
	if best == len(hostKinds) {
		return otherHostMark
	}
	return hostKinds[best].mark
}

// drawHostLane draws host lane l's lw columns on screen row y, the cursor
// column cc reversed.
func (v *Viewer) drawHostLane(tl *traces.Timeline, l []traces.HostTask, y, lw, cc int) {
	v.drawCells(y, lw, cc, func(col int) mark { return v.hostCell(tl, l, col) })
}

// hostTaskText names a task: its kind, then its name when that says more
// ("compute diag", "launch cvt0").
func hostTaskText(t *traces.HostTask) string {
	if t.Name == "" || t.Name == t.Kind {
		return t.Kind
	}
	if strings.HasPrefix(t.Name, t.Kind+" ") {
		return t.Name
	}
	return t.Kind + " " + t.Name
}

// drawHost draws the host page: its lanes (CPU, link), the legend of task
// kinds, the tasks at the cursor and the lanes' time split by kind.
func (v *Viewer) drawHost(tl *traces.Timeline) {
	_, h := v.s.Size()
	lanes := v.hostLanes(tl)
	state := ""
	if !tl.Done {
		state = "  running"
	}
	if v.follow {
		state += " (follow)"
	}
	head := fmt.Sprintf(" host (%s)  view %s..%s  cursor %s%s", strings.Join(traces.HostLanes, ", "),
		fmtTime(v.t0), fmtTime(v.t0+v.span), fmtTime(v.cursor), state)
	v.header(head)
	lw := v.laneWidth()
	v.timeAxis(1, "time", lw)
	y := 2
	cc := v.timeCol(v.cursor)
	for l, name := range traces.HostLanes {
		if y >= h-1 {
			break
		}
		v.put(0, y, name, labelStyle)
		v.drawHostLane(tl, lanes[l], y, lw, cc)
		y++
	}
	// The kinds the trace records, in hostKinds' order, then others.
	kinds := hostKindsOf(tl)
	if y < h-1 {
		var items []legendItem
		for _, k := range kinds {
			m := otherHostMark
			if i := hostKind(k); i < len(hostKinds) {
				m = hostKinds[i].mark
			}
			items = append(items, legendItem{m, k})
		}
		v.legend(y, items, []legendItem{{idleMark, "idle"}})
		y++
	}
	if y < h-1 {
		x := v.put(0, y, "at cursor:", dimStyle)
		for l, name := range traces.HostLanes {
			what := "-"
			if i := hostTaskAt(lanes[l], v.cursor); i >= 0 {
				what = hostTaskText(&lanes[l][i])
			}
			x = v.put(x+1, y, name+":"+what, base)
		}
		y++
	}
	if y < h-2 {
		// The time of each lane by kind; busy is the time in tasks other
		// than waits, idle the time in none.
		total := tl.To - tl.From
		cols := append(append([]string{"busy"}, kinds...), "idle")
		var rows []tableRow
		for l, name := range traces.HostLanes {
			var busy, in sim.Time
			by := map[string]sim.Time{}
			for _, t := range lanes[l] {
				d := min(t.To, tl.To) - max(t.From, tl.From)
				if d <= 0 {
					continue
				}
				by[t.Kind] += d
				in += d
				if hostBusy(t.Kind) {
					busy += d
				}
			}
			r := tableRow{label: name, pct: []float64{pct(busy, total)}}
			for _, k := range kinds {
				r.pct = append(r.pct, pct(by[k], total))
			}
			r.pct = append(r.pct, pct(max(total-in, 0), total))
			rows = append(rows, r)
		}
		v.table(y, h-1, "host", cols, rows)
	}
	v.footer(tl, h-1)
}

// hostKindsOf returns the kinds of tl's host tasks: hostKinds' first, in
// order, then any others sorted.
func hostKindsOf(tl *traces.Timeline) []string {
	seen := map[string]bool{}
	for i := range tl.Host {
		seen[tl.Host[i].Kind] = true
	}
	var kinds, other []string
	for _, k := range hostKinds {
		if seen[k.kind] {
			kinds = append(kinds, k.kind)
		}
	}
	for k := range seen {
		if hostKind(k) == len(hostKinds) {
			other = append(other, k)
		}
	}
	sort.Strings(other)
	return append(kinds, other...)
}

// nextHostWait moves the cursor to the start of the host's next (dir > 0)
// or previous wait (a task that is not busy), on either lane.
func (v *Viewer) nextHostWait(tl *traces.Timeline, dir int) {
	v.findHostTask(tl, dir, func(t *traces.HostTask) bool { return !hostBusy(t.Kind) }, false, "no more host waits")
}

// findHostTask moves the cursor to the next (dir > 0) or previous host task
// that match accepts, from the cursor (wrapping around when wrap is set);
// miss is the status when there is none.
func (v *Viewer) findHostTask(tl *traces.Timeline, dir int, match func(*traces.HostTask) bool, wrap bool, miss string) {
	lanes := v.hostLanes(tl)
	find := func(after sim.Time, strict bool) (*traces.HostTask, int) {
		var best *traces.HostTask
		bl := 0
		for l := range lanes {
			for i := range lanes[l] {
				t := &lanes[l][i]
				if !match(t) {
					continue
				}
				if dir > 0 && (t.From > after || (!strict && t.From == after)) && (best == nil || t.From < best.From) {
					best, bl = t, l
				}
				if dir < 0 && (t.From < after || (!strict && t.From == after)) && (best == nil || t.From > best.From) {
					best, bl = t, l
				}
			}
		}
		return best, bl
	}
	t, l := find(v.cursor, true)
	wrapped := false
	if t == nil && wrap {
		from := tl.From
		if dir < 0 {
			from = tl.To + 1
		}
		t, l = find(from, false)
		wrapped = true
	}
	if t == nil {
		v.status = miss
		return
	}
	v.follow = false
	v.cursor = t.From
	v.show(t.From)
	v.status = fmt.Sprintf("%s on %s at %s for %s", hostTaskText(t), traces.HostLanes[l], fmtTime(t.From), fmtTime(t.To-t.From))
	if wrapped {
		v.status = "(wrapped) " + v.status
	}
}

// searchHost moves the cursor to the next (dir > 0) or previous host task
// whose kind or name contains q, wrapping around.
func (v *Viewer) searchHost(tl *traces.Timeline, q string, dir int) {
	v.findHostTask(tl, dir, func(t *traces.HostTask) bool {
		return strings.Contains(t.Kind, q) || strings.Contains(t.Name, q)
	}, true, fmt.Sprintf("%q: not found on the host", q))
}

// isCluster reports whether tl is a cluster run's trace
// (traces.WriteClusterJSON): a process per rank (read as cores) whose
// tracks (read as lanes) are the rank's host's ("host (work, transfers,
// collectives)") and its NPU's core sets'. A chip trace has no lane of
// that name: its host is a process of its own (tl.Host).
func isCluster(tl *traces.Timeline) bool {
	for _, name := range tl.Lanes {
		if laneLabel(name) == "host" {
			return true
		}
	}
	return false
}

// laneLabel is the label of a lane named name: without a parenthesized
// explanation ("host (work, transfers, collectives)" is "host").
func laneLabel(name string) string {
	if i := strings.Index(name, " ("); i > 0 && strings.HasSuffix(name, ")") {
		return name[:i]
	}
	return name
}

// unit names what the trace's processes are: a chip's cores, a cluster's
// ranks (an NPU and its host's share each).
func unit(tl *traces.Timeline) string {
	if isCluster(tl) {
		return "rank"
	}
	return "core"
}

// shown names the page shown: "host", "core 3", "rank 3".
func (v *Viewer) shown(tl *traces.Timeline) string {
	if v.onHost {
		return "host"
	}
	return fmt.Sprintf("%s %d", unit(tl), v.core)
}
