package sweep

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"
)

// progress draws a one-line bar with counts and ETA, redrawn on each
// finished point and every second; the points in flight count by the
// share of their run done (their runs' work meters), so that a study of a
// few long points shows progress before the first is done.
type progress struct {
	w       io.Writer
	total   int
	start   time.Time
	mu      sync.Mutex
	done    int
	failed  int
	running map[int]float64 // point index → share of its run done
	ticks   *ticker
}

func newProgress(w io.Writer, total int) *progress {
	p := &progress{w: w, total: total, start: time.Now(), running: map[int]float64{}}
	if w == nil || total == 0 {
		return p
	}
	p.draw()
	p.ticks = every(time.Second, func() bool { p.draw(); return true })
	return p
}

// enabled reports whether the bar is drawn (the points' runs need not
// measure their progress otherwise).
func (p *progress) enabled() bool { return p != nil && p.w != nil && p.total > 0 }

// set records that point index's run is frac done (0–1).
func (p *progress) set(index int, frac float64) {
	p.mu.Lock()
	p.running[index] = frac
	p.mu.Unlock()
}

// drop records that point index stopped without a result (interrupted):
// its share leaves the line.
func (p *progress) drop(index int) {
	p.mu.Lock()
	delete(p.running, index)
	p.mu.Unlock()
}

// step records that point index finished (failed or not).
func (p *progress) step(index int, failed bool) {
	p.mu.Lock()
	delete(p.running, index)
	p.done++
	if failed {
		p.failed++
	}
	p.mu.Unlock()
	p.draw()
}

func (p *progress) draw() {
	if p.w == nil || p.total == 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	var running []float64
	for _, i := range slices.Sorted(maps.Keys(p.running)) {
		running = append(running, p.running[i])
	}
	redraw(p.w, barLine(p.done, p.failed, p.total, running, time.Since(p.start)))
}

func (p *progress) close() {
	if p.w == nil || p.total == 0 {
		return
	}
	p.ticks.stop()
	clearLine(p.w)
}

// redraw draws line in place of the terminal row the cursor is on (the
// progress lines: the runs' bar, the set's probes').
func redraw(w io.Writer, line string) { fmt.Fprint(w, "\r"+line+"\033[K") }

// clearLine clears the row redraw drew.
func clearLine(w io.Writer) { fmt.Fprint(w, "\r\033[K") }

// ticker calls a function after a wait, then every second (every).
type ticker struct {
	quit chan struct{}
	wg   sync.WaitGroup
}

// every calls f after wait — at once, before it returns, where wait ≤ 0
// (a check whose quiet period has passed says so before its first step,
// however short the check) —, then every second while it returns true,
// until stop.
func every(wait time.Duration, f func() bool) *ticker {
	t := &ticker{quit: make(chan struct{})}
	if wait <= 0 && !f() {
		return t
	}
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		if wait > 0 {
			first := time.NewTimer(wait)
			defer first.Stop()
			select {
			case <-first.C:
			case <-t.quit:
				return
			}
			if !f() {
				return
			}
		}
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-tick.C:
			case <-t.quit:
				return
			}
			if !f() {
				return
			}
		}
	}()
	return t
}

// stop stops t, once f has returned where it was called.
func (t *ticker) stop() {
	close(t.quit)
	t.wg.Wait()
}

// maxShares is how many running points' shares the progress line lists.
const maxShares = 4

// barLine formats the progress line: bar, counts, the shares done of the
// points in flight (running, by index), elapsed time and ETA — from the
// work done so far, the points in flight counting by their shares: a
// point's runs are taken as alike (a study of sizes from 1024 to 8192 is
// not, and its early estimates are short).
func barLine(done, failed, total int, running []float64, elapsed time.Duration) string {
	const width = 30
	work := float64(done)
	for _, f := range running {
		work += f
	}
	fill := min(int(float64(width)*work/float64(max(total, 1))), width)
	var b strings.Builder
	b.WriteString("[")
	b.WriteString(strings.Repeat("=", fill))
	if fill < width {
		b.WriteString(">")
		b.WriteString(strings.Repeat(" ", width-fill-1))
	}
	fmt.Fprintf(&b, "] %d/%d points", done, total)
	if len(running) > 0 {
		// The first few (-j on a large machine runs dozens: the line
		// must stay one terminal row).
		var shares []string
		for _, f := range running[:min(len(running), maxShares)] {
			shares = append(shares, fmt.Sprintf("%.0f %%", 100*f))
		}
		if more := len(running) - maxShares; more > 0 {
			shares = append(shares, fmt.Sprintf("%d more", more))
		}
		fmt.Fprintf(&b, " (running: %s)", strings.Join(shares, ", "))
	}
	if failed > 0 {
		fmt.Fprintf(&b, ", %d failed", failed)
	}
	fmt.Fprintf(&b, ", %s elapsed", elapsed.Round(time.Second))
	if work > 0 && done < total {
		eta := time.Duration(float64(elapsed) / work * (float64(total) - work))
		fmt.Fprintf(&b, ", ETA %s", eta.Round(time.Second))
	}
	return b.String()
}
