package sweep

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// progress draws a one-line bar with counts and ETA, redrawn on each
// finished point and every second.
type progress struct {
	w      io.Writer
	total  int
	start  time.Time
	mu     sync.Mutex
	done   int
	failed int
	quit   chan struct{}
	wg     sync.WaitGroup
}

func newProgress(w io.Writer, total int) *progress {
	p := &progress{w: w, total: total, start: time.Now(), quit: make(chan struct{})}
	if w == nil || total == 0 {
		return p
	}
	p.draw()
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				p.draw()
			case <-p.quit:
				return
			}
		}
	}()
	return p
}

func (p *progress) step(failed bool) {
	p.mu.Lock()
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
	fmt.Fprint(p.w, "\r"+barLine(p.done, p.failed, p.total, time.Since(p.start))+"\033[K")
}

func (p *progress) close() {
	if p.w == nil || p.total == 0 {
		return
	}
	close(p.quit)
	p.wg.Wait()
	fmt.Fprint(p.w, "\r\033[K")
}

// barLine formats the progress line: bar, counts, elapsed time and ETA
// (from the mean time per finished point).
func barLine(done, failed, total int, elapsed time.Duration) string {
	const width = 30
	fill := width * done / max(total, 1)
	var b strings.Builder
	b.WriteString("[")
	b.WriteString(strings.Repeat("=", fill))
	if fill < width {
		b.WriteString(">")
		b.WriteString(strings.Repeat(" ", width-fill-1))
	}
	fmt.Fprintf(&b, "] %d/%d points", done, total)
	if failed > 0 {
		fmt.Fprintf(&b, ", %d failed", failed)
	}
	fmt.Fprintf(&b, ", %s elapsed", elapsed.Round(time.Second))
	if done > 0 && done < total {
		eta := time.Duration(float64(elapsed) / float64(done) * float64(total-done))
		fmt.Fprintf(&b, ", ETA %s", eta.Round(time.Second))
	}
	return b.String()
}
