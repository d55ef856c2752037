package sim

import (
	"testing"
)

// stage is one component of a token-passing ring: it receives a token, holds it for its latency
// and passes it to the next stage. budget counts the events left to run.
type stage struct {
	e       *Engine
	next    *stage
	latency Time
	prio    int
	budget  *int
}

func (s *stage) Handle(now Time, arg int64) {
	if *s.budget <= 0 {
		return
	}
	*s.budget--
	s.e.After(s.latency, s.next.prio, s.next, arg)
}

// ring builds n stages with the given latencies and injects tokens tokens, spread in time.
func ring(e *Engine, lat []Time, tokens int, budget *int) {
	st := make([]*stage, len(lat))
	for i := range st {
		st[i] = &stage{e: e, latency: lat[i], prio: i % 3, budget: budget}
	}
	for i := range st {
		st[i].next = st[(i+1)%len(st)]
	}
	for k := 0; k < tokens; k++ {
		e.At(Time(k), 0, st[k%len(st)], int64(k))
	}
}

func reportRate(b *testing.B, e *Engine) {
	b.ReportMetric(float64(e.Events())/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkPingPong: two components passing one token back and forth (one event per op).
func BenchmarkPingPong(b *testing.B) {
	e := NewEngine()
	budget := b.N
	ring(e, []Time{1 * Nanosecond, 3 * Nanosecond}, 1, &budget)
	b.ReportAllocs()
	b.ResetTimer()
	if err := e.Run(); err != nil {
		b.Fatal(err)
	}
	reportRate(b, e)
}

// BenchmarkPipeline3: three stages with different latencies and 3 tokens in flight.
func BenchmarkPipeline3(b *testing.B) {
	e := NewEngine()
	budget := b.N
	ring(e, []Time{556, 2 * 556, 5 * 556}, 3, &budget)
	b.ReportAllocs()
	b.ResetTimer()
	if err := e.Run(); err != nil {
		b.Fatal(err)
	}
	reportRate(b, e)
}

// BenchmarkManyPending: 64 stages with varied latencies and 1000 tokens in flight, so about 1000
// events are queued at all times.
func BenchmarkManyPending(b *testing.B) {
	e := NewEngine()
	budget := b.N
	lat := make([]Time, 64)
	x := uint32(12345)
	for i := range lat {
		x = x*1664525 + 1013904223
		lat[i] = Time(1 + x>>20) // 1 .. 4096 ps
	}
	ring(e, lat, 1000, &budget)
	b.ReportAllocs()
	b.ResetTimer()
	if err := e.Run(); err != nil {
		b.Fatal(err)
	}
	reportRate(b, e)
}

// wakeStage sleeps until woken; each wake-up it re-wakes its peer (sometimes twice, exercising
// de-duplication).
type wakeStage struct {
	w, peer *Waker
	budget  *int
}

func (s *wakeStage) Handle(now Time, arg int64) {
	if *s.budget <= 0 {
		return
	}
	*s.budget--
	s.peer.Wake(now + 2*Nanosecond)
	s.peer.Wake(now + 3*Nanosecond) // de-duplicated
}

// BenchmarkWaker: two components waking each other through Wakers.
func BenchmarkWaker(b *testing.B) {
	e := NewEngine()
	budget := b.N
	a, c := &wakeStage{budget: &budget}, &wakeStage{budget: &budget}
	a.w, c.w = NewWaker(e, 0, a), NewWaker(e, 1, c)
	a.peer, c.peer = c.w, a.w
	a.w.Wake(0)
	b.ReportAllocs()
	b.ResetTimer()
	if err := e.Run(); err != nil {
		b.Fatal(err)
	}
	reportRate(b, e)
}
