package sim

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// rec records executed events as "time/prio/arg" strings.
type rec struct {
	e   *Engine
	log []string
}

func (r *rec) at(t Time, prio int, arg int64) {
	r.e.At(t, prio, HandlerFunc(func(now Time, a int64) {
		r.log = append(r.log, fmt.Sprintf("%d/%d/%d", now, prio, a))
	}), arg)
}

func TestOrderingTimePrioritySequence(t *testing.T) {
	e := NewEngine()
	r := &rec{e: e}
	r.at(20, 0, 1)
	r.at(10, 5, 2)
	r.at(10, -3, 3)
	r.at(10, 5, 4) // same (time, prio) as arg 2: runs after it
	r.at(10, 0, 5)
	r.at(0, 100, 6)
	r.at(10, 5, 7)
	r.at(20, MinPriority, 8)
	r.at(20, MaxPriority, 9)
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	want := []string{"0/100/6", "10/-3/3", "10/0/5", "10/5/2", "10/5/4", "10/5/7",
		fmt.Sprintf("20/%d/8", MinPriority), "20/0/1", fmt.Sprintf("20/%d/9", MaxPriority)}
	if !reflect.DeepEqual(r.log, want) {
		t.Errorf("order\n got %v\nwant %v", r.log, want)
	}
	if e.Events() != 9 || e.Pending() != 0 || e.Now() != 20 {
		t.Errorf("Events=%d Pending=%d Now=%v", e.Events(), e.Pending(), e.Now())
	}
}

// TestOrderingRandom checks the heap (including the replace-root fast path and renumbering)
// against a naive reference queue that picks the minimum (time, priority, sequence) by linear
// search. Handlers schedule further events from inside the handler, some at the current time and
// with lower priorities than the running event.
func TestOrderingRandom(t *testing.T) {
	type key struct {
		t    Time
		prio int
		seq  int
	}
	// randModel returns the initial events and the handler body: given the running event, it
	// schedules 0-2 follow-ups through sched. Both share one deterministic random stream.
	randModel := func() (init func(sched func(key)), body func(k key, sched func(key))) {
		x := uint64(42)
		rnd := func(n int) int {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
			return int(x % uint64(n))
		}
		seq := 0
		mk := func(tt Time) key {
			k := key{tt, rnd(5) - 2, seq}
			seq++
			return k
		}
		init = func(sched func(key)) {
			for i := 0; i < 200; i++ {
				sched(mk(Time(rnd(100))))
			}
		}
		body = func(k key, sched func(key)) {
			if seq < 5000 {
				for n := rnd(3); n > 0; n-- {
					sched(mk(k.t + Time(rnd(3)*rnd(50))))
				}
			}
		}
		return init, body
	}

	// Reference.
	var want []key
	{
		init, body := randModel()
		var pend []key
		push := func(k key) { pend = append(pend, k) }
		init(push)
		for len(pend) > 0 {
			m := 0
			for i, k := range pend {
				b := pend[m]
				if k.t < b.t || k.t == b.t && (k.prio < b.prio || k.prio == b.prio && k.seq < b.seq) {
					m = i
				}
			}
			k := pend[m]
			pend = append(pend[:m], pend[m+1:]...)
			want = append(want, k)
			body(k, push)
		}
	}

	for _, seqMax := range []uint64{1 << seqBits, 7} { // 7 forces frequent renumbering
		e := NewEngine()
		e.seqMax = seqMax
		init, body := randModel()
		var got []key
		prios := map[int]int{}
		var h HandlerFunc
		push := func(k key) {
			prios[k.seq] = k.prio
			e.At(k.t, k.prio, h, int64(k.seq))
		}
		h = func(now Time, arg int64) {
			k := key{now, prios[int(arg)], int(arg)}
			got = append(got, k)
			body(k, push)
		}
		init(push)
		if err := e.Run(); err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("seqMax %d: executed %d events, want %d", seqMax, len(got), len(want))
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("seqMax %d: position %d: ran %+v, want %+v", seqMax, i, got[i], want[i])
			}
		}
	}
}

func TestRunUntil(t *testing.T) {
	e := NewEngine()
	r := &rec{e: e}
	r.at(5, 0, 1)
	r.at(10, 1, 2)
	r.at(10, 0, 3)
	r.at(11, 0, 4)
	r.at(30, 0, 5)
	if err := e.RunUntil(10); err != nil {
		t.Fatal(err)
	}
	if want := []string{"5/0/1", "10/0/3", "10/1/2"}; !reflect.DeepEqual(r.log, want) {
		t.Errorf("after RunUntil(10): %v, want %v", r.log, want)
	}
	if e.Now() != 10 || e.Pending() != 2 {
		t.Errorf("Now=%v Pending=%d, want 10, 2", e.Now(), e.Pending())
	}
	// Scheduling at exactly Now is allowed after RunUntil.
	r.at(10, 0, 6)
	if err := e.RunUntil(20); err != nil {
		t.Fatal(err)
	}
	if want := []string{"5/0/1", "10/0/3", "10/1/2", "10/0/6", "11/0/4"}; !reflect.DeepEqual(r.log, want) {
		t.Errorf("after RunUntil(20): %v, want %v", r.log, want)
	}
	if e.Now() != 20 || e.Pending() != 1 {
		t.Errorf("Now=%v Pending=%d, want 20, 1", e.Now(), e.Pending())
	}
	if tt, ok := e.Peek(); !ok || tt != 30 {
		t.Errorf("Peek = %v, %v", tt, ok)
	}
	if err := e.RunUntil(19); err == nil {
		t.Error("RunUntil before Now accepted")
	}
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	if e.Now() != 30 || len(r.log) != 6 {
		t.Errorf("after Run: Now=%v log=%v", e.Now(), r.log)
	}
	if _, ok := e.Peek(); ok {
		t.Error("Peek on empty queue reports an event")
	}
}

func TestStop(t *testing.T) {
	e := NewEngine()
	boom := errors.New("boom")
	var ran []Time
	h := HandlerFunc(func(now Time, arg int64) {
		ran = append(ran, now)
		if arg == 1 {
			e.Stop(boom)
			e.Stop(errors.New("second error is ignored"))
		}
	})
	e.At(1, 0, h, 0)
	e.At(2, 0, h, 1)
	e.At(2, 1, h, 0) // same time, after the stopping event: must not run
	e.At(3, 0, h, 0)
	if err := e.Run(); err != boom {
		t.Fatalf("Run = %v, want boom", err)
	}
	if !reflect.DeepEqual(ran, []Time{1, 2}) || e.Now() != 2 || e.Pending() != 2 {
		t.Errorf("ran=%v Now=%v Pending=%d", ran, e.Now(), e.Pending())
	}
	// Continues with the remaining events.
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(ran, []Time{1, 2, 2, 3}) {
		t.Errorf("after resume ran=%v", ran)
	}
	// Stop(nil) then Stop(err): the error wins. RunUntil also stops.
	e.At(5, 0, HandlerFunc(func(Time, int64) { e.Stop(nil); e.Stop(boom) }), 0)
	e.At(6, 0, h, 0)
	if err := e.RunUntil(100); err != boom || e.Now() != 5 {
		t.Errorf("RunUntil = %v, Now=%v; want boom at 5", err, e.Now())
	}
	// Stop before Run: Run returns at once.
	e.Stop(nil)
	if err := e.Run(); err != nil || e.Pending() != 1 {
		t.Errorf("Run after Stop(nil) = %v, Pending=%d", err, e.Pending())
	}
}

func TestSchedulingErrors(t *testing.T) {
	e := NewEngine()
	nop := HandlerFunc(func(Time, int64) {})
	e.At(10, 0, HandlerFunc(func(now Time, _ int64) { e.At(now-1, 0, nop, 0) }), 0)
	e.At(20, 0, nop, 0)
	err := e.Run()
	if !errors.Is(err, ErrPast) || e.Now() != 10 {
		t.Fatalf("Run = %v at %v, want ErrPast at 10", err, e.Now())
	}
	e.After(-1, 0, nop, 0)
	if err := e.Run(); !errors.Is(err, ErrPast) {
		t.Errorf("negative After: %v", err)
	}
	e.After(MaxTime, 0, nop, 0)
	if err := e.Run(); !errors.Is(err, ErrTimeOverflow) {
		t.Errorf("overflowing After: %v", err)
	}
	e.At(MaxTime, 0, nop, 0)
	if err := e.Run(); !errors.Is(err, ErrTimeOverflow) {
		t.Errorf("At(MaxTime): %v", err)
	}
	e.At(30, MaxPriority+1, nop, 0)
	if err := e.Run(); !errors.Is(err, ErrPriority) {
		t.Errorf("priority out of range: %v", err)
	}
	e.At(30, MinPriority-1, nop, 0)
	if err := e.Run(); !errors.Is(err, ErrPriority) {
		t.Errorf("priority out of range: %v", err)
	}
	if err := e.Run(); err != nil || e.Now() != 20 {
		t.Errorf("final Run = %v at %v", err, e.Now())
	}
	var inner error
	e.At(25, 0, HandlerFunc(func(Time, int64) { inner = e.Run() }), 0)
	if err := e.Run(); err != nil || !errors.Is(inner, ErrReentrant) {
		t.Errorf("reentrant Run: outer %v inner %v", err, inner)
	}
}

type waiter struct {
	blocked bool
	why     string
}

func (w *waiter) Blocked() (bool, string) { return w.blocked, w.why }

func TestDeadlock(t *testing.T) {
	e := NewEngine()
	a := &waiter{why: "core 3 pipe MTE1: wait_flag MTE2->MTE1 id 0"}
	b := &waiter{why: "core 0 pipe M: wait_flag MTE1->M id 1"}
	c := &waiter{}
	e.Register(a)
	e.Register(b)
	e.Register(c)
	e.At(7*Nanosecond, 0, HandlerFunc(func(Time, int64) {}), 0)
	if err := e.Run(); err != nil {
		t.Fatalf("idle waiters reported: %v", err)
	}
	a.blocked, b.blocked, c.blocked = true, true, true
	err := e.Run()
	var d *DeadlockError
	if !errors.As(err, &d) {
		t.Fatalf("Run = %v, want *DeadlockError", err)
	}
	want := []string{"*sim.waiter: blocked (no reason given)", b.why, a.why}
	if d.Time != 7*Nanosecond || !reflect.DeepEqual(d.Blocked, want) {
		t.Errorf("deadlock = %+v, want time 7ns, %v", d, want)
	}
	msg := err.Error()
	if !strings.Contains(msg, "deadlock at 7ns: 3 blocked") || !strings.Contains(msg, a.why) {
		t.Errorf("message %q", msg)
	}
	// A stopped run does no deadlock check.
	e.Stop(nil)
	if err := e.Run(); err != nil {
		t.Errorf("stopped Run reported %v", err)
	}
	// RunUntil does not check either; CheckDeadlock does.
	if err := e.RunUntil(10 * Nanosecond); err != nil {
		t.Errorf("RunUntil reported %v", err)
	}
	if err := e.CheckDeadlock(); !errors.As(err, &d) {
		t.Errorf("CheckDeadlock = %v", err)
	}
}

type wakeCounter struct {
	w    *Waker
	runs []Time
	then func(now Time)
}

func (c *wakeCounter) Handle(now Time, arg int64) {
	c.runs = append(c.runs, now)
	if c.then != nil {
		c.then(now)
	}
}

func TestWaker(t *testing.T) {
	e := NewEngine()
	c := &wakeCounter{}
	c.w = NewWaker(e, 2, c)
	c.w.Wake(10)
	c.w.Wake(10) // duplicate
	c.w.Wake(15) // later than pending: nothing
	if at, ok := c.w.Pending(); !ok || at != 10 {
		t.Errorf("Pending = %v, %v", at, ok)
	}
	if e.Pending() != 1 {
		t.Errorf("engine has %d events, want 1", e.Pending())
	}
	c.w.Wake(5) // earlier: supersedes 10
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(c.runs, []Time{5}) {
		t.Errorf("runs %v, want [5]", c.runs)
	}
	if _, ok := c.w.Pending(); ok {
		t.Error("still pending after running")
	}
	// The handler may re-wake itself, including at the current time.
	n := 0
	c.runs = nil
	c.then = func(now Time) {
		if n++; n < 3 {
			c.w.Wake(now)
			c.w.Wake(now + 1)
		}
	}
	c.w.Wake(20)
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(c.runs, []Time{20, 20, 20}) {
		t.Errorf("runs %v, want [20 20 20]", c.runs)
	}
	// Superseded then re-requested at the superseded time: runs exactly once there.
	c.runs, c.then = nil, nil
	c.w.Wake(40)
	c.w.Wake(30)
	c.then = func(now Time) {
		if now == 30 {
			c.w.Wake(40)
		}
	}
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(c.runs, []Time{30, 40}) {
		t.Errorf("runs %v, want [30 40]", c.runs)
	}
	if c.w.Target() != Handler(c) {
		t.Error("Target")
	}
	c.w.Wake(1) // in the past
	if err := e.Run(); !errors.Is(err, ErrPast) {
		t.Errorf("Wake in the past: %v", err)
	}
}

func TestProgress(t *testing.T) {
	e := NewEngine()
	nop := HandlerFunc(func(Time, int64) {})
	for i := 0; i < 25; i++ {
		e.At(Time(i), 0, nop, 0)
	}
	var calls []uint64
	var times []Time
	e.OnProgress(10, func(now Time, n uint64) {
		calls = append(calls, n)
		times = append(times, now)
	})
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(calls, []uint64{10, 20}) || !reflect.DeepEqual(times, []Time{9, 19}) {
		t.Errorf("progress calls %v at %v", calls, times)
	}
	// Re-arming mid-count keeps multiples of the new cadence; the callback may stop the run.
	calls = nil
	for i := 0; i < 25; i++ {
		e.At(Time(100+i), 0, nop, 0)
	}
	e.OnProgress(4, func(now Time, n uint64) {
		calls = append(calls, n)
		if n >= 36 {
			e.Stop(nil)
		}
	})
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(calls, []uint64{28, 32, 36}) || e.Events() != 36 {
		t.Errorf("progress calls %v, events %d", calls, e.Events())
	}
	e.OnProgress(0, nil)
	calls = nil
	if err := e.Run(); err != nil || calls != nil {
		t.Errorf("disabled progress called: %v, %v", calls, err)
	}
}

type hookRec struct{ log []string }

func (h *hookRec) OnEvent(now Time, prio int, hd Handler, arg int64) {
	h.log = append(h.log, fmt.Sprintf("%d/%d/%d", now, prio, arg))
}

func TestHooks(t *testing.T) {
	e := NewEngine()
	r := &rec{e: e}
	h1, h2 := &hookRec{}, &hookRec{}
	e.AddHook(h1)
	e.AddHook(nil) // ignored
	r.at(3, 1, 1)
	r.at(3, -1, 2)
	r.at(1, 0, 3)
	e.At(2, 4, HandlerFunc(func(now Time, _ int64) { r.at(now, 4, 4) }), 9) // scheduled now
	if err := e.RunUntil(2); err != nil {
		t.Fatal(err)
	}
	e.AddHook(h2)
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	want := []string{"1/0/3", "2/4/9", "2/4/4", "3/-1/2", "3/1/1"}
	if !reflect.DeepEqual(h1.log, want) {
		t.Errorf("hook 1 saw %v, want %v", h1.log, want)
	}
	if !reflect.DeepEqual(h2.log, want[3:]) {
		t.Errorf("hook 2 saw %v, want %v", h2.log, want[3:])
	}
	// Hooks observe without changing behaviour: same handler sequence as without hooks.
	if !reflect.DeepEqual(r.log, []string{"1/0/3", "2/4/4", "3/-1/2", "3/1/1"}) {
		t.Errorf("handlers ran %v", r.log)
	}
}

// model runs a small multi-component model and returns its event sequence as seen by a hook.
func model(withHook bool) ([]string, uint64, Time) {
	e := NewEngine()
	h := &hookRec{}
	if withHook {
		e.AddHook(h)
	}
	budget := 2000
	ring(e, []Time{556, 1112, 3 * 556, 1000, 7}, 17, &budget)
	if err := e.Run(); err != nil {
		panic(err)
	}
	return h.log, e.Events(), e.Now()
}

func TestDeterminism(t *testing.T) {
	a, na, ta := model(true)
	b, nb, tb := model(true)
	if !reflect.DeepEqual(a, b) || na != nb || ta != tb {
		t.Fatal("two identical runs differ")
	}
	if len(a) != int(na) || na < 2000 {
		t.Fatalf("hook saw %d of %d events", len(a), na)
	}
	_, nc, tc := model(false)
	if nc != na || tc != ta {
		t.Errorf("hook changed the run: %d events at %v vs %d at %v", nc, tc, na, ta)
	}
}

func TestRenumberPreservesOrder(t *testing.T) {
	e := NewEngine()
	e.seqMax = 4
	r := &rec{e: e}
	for i := 0; i < 20; i++ {
		r.at(Time(i%3), i%2, int64(i))
	}
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	var want []string
	for tt := 0; tt < 3; tt++ {
		for p := 0; p < 2; p++ {
			for i := 0; i < 20; i++ {
				if i%3 == tt && i%2 == p {
					want = append(want, fmt.Sprintf("%d/%d/%d", tt, p, i))
				}
			}
		}
	}
	if !reflect.DeepEqual(r.log, want) {
		t.Errorf("got %v\nwant %v", r.log, want)
	}
}

func TestNoAllocSteadyState(t *testing.T) {
	e := NewEngine()
	budget := 1 << 30
	ring(e, []Time{1, 2, 3}, 3, &budget)
	if err := e.RunUntil(1000); err != nil {
		t.Fatal(err)
	}
	end := Time(1000)
	allocs := testing.AllocsPerRun(10, func() {
		end += 10000
		if err := e.RunUntil(end); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per 10000ps of simulation", allocs)
	}
}

func TestPendingInsideHandler(t *testing.T) {
	e := NewEngine()
	var seen []int
	var peeks []Time
	h := HandlerFunc(func(now Time, arg int64) {
		seen = append(seen, e.Pending())
		if tt, ok := e.Peek(); ok {
			peeks = append(peeks, tt)
		}
		if arg > 0 {
			e.After(1, 0, HandlerFunc(func(Time, int64) { seen = append(seen, e.Pending()) }), 0)
		}
	})
	e.At(1, 0, h, 1)
	e.At(5, 0, h, 0)
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	// At 1: one other event pending (5). At 2: the follow-up sees 5 pending. At 5: none.
	if !reflect.DeepEqual(seen, []int{1, 1, 0}) || !reflect.DeepEqual(peeks, []Time{5}) {
		t.Errorf("Pending seen %v, peeks %v", seen, peeks)
	}
}

// A Wake earlier than a pending one moves the pending event: it runs
// where a newly scheduled event would (after the events already at its
// time and priority), and no superseded event is left to run as a no-op.
func TestWakerAdvanceOrder(t *testing.T) {
	e := NewEngine()
	var order []string
	mk := func(name string, prio int) *Waker {
		return NewWaker(e, prio, HandlerFunc(func(now Time, _ int64) { order = append(order, fmt.Sprintf("%s@%d", name, now)) }))
	}
	a, b, c := mk("a", 0), mk("b", 0), mk("c", -10)
	a.Wake(10)
	c.Wake(50)
	b.Wake(5)
	a.Wake(5) // moved after b: b was scheduled at (5, 0) first
	// From inside an event at 7, c (priority −10, pending at 50) is moved
	// to now: it runs next, after the executing event, not before it.
	e.At(7, 0, HandlerFunc(func(now Time, _ int64) {
		order = append(order, fmt.Sprintf("x@%d", now))
		c.Wake(now)
	}), 0)
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	if want := []string{"b@5", "a@5", "x@7", "c@7"}; !reflect.DeepEqual(order, want) {
		t.Errorf("order %v, want %v", order, want)
	}
	if e.Events() != 4 {
		t.Errorf("%d events, want 4 (no superseded ones)", e.Events())
	}
}

// Rebook moves a pending wake-up later as well as earlier: the handler
// runs once, at the last time booked, after the events already booked
// for that time when Rebook was called — and none runs early as a no-op.
func TestWakerRebook(t *testing.T) {
	e := NewEngine()
	var order []string
	mk := func(name string) *Waker {
		return NewWaker(e, 0, HandlerFunc(func(now Time, _ int64) { order = append(order, fmt.Sprintf("%s@%d", name, now)) }))
	}
	a, b, c := mk("a"), mk("b"), mk("c")
	a.Wake(5)
	b.Wake(20)
	a.Rebook(20) // later: after b, booked for 20 before
	c.Wake(8)
	c.Rebook(8) // the same time: stays where it is
	c.Rebook(3) // earlier: as Wake
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	if want := []string{"c@3", "b@20", "a@20"}; !reflect.DeepEqual(order, want) {
		t.Errorf("order %v, want %v", order, want)
	}
	if e.Events() != 3 {
		t.Errorf("%d events, want 3 (none early)", e.Events())
	}
}

// Many wakers re-booked earlier and later at random run in exactly the
// order of the former implementation, which left each superseded event in
// the queue as a no-op and scheduled a new one (naiveWaker).
func TestWakerAdvanceRandom(t *testing.T) {
	run := func(naive bool) []string {
		rng := rand.New(rand.NewPCG(1, 2))
		e := NewEngine()
		e.seqMax = 64 // renumber often
		const n = 40
		wake := make([]func(Time), n)
		var log []string
		for i := range n {
			h := HandlerFunc(func(now Time, _ int64) {
				log = append(log, fmt.Sprintf("%d@%d", i, now))
				for range 3 {
					wake[rng.IntN(n)](now + Time(rng.IntN(20)))
				}
			})
			// Every third waker books its wake-ups with Rebook.
			switch w := NewWaker(e, i%3, h); {
			case naive && i%3 == 2:
				wake[i] = (&naiveWaker{e: e, prio: i % 3, h: h}).Rebook
			case naive:
				wake[i] = (&naiveWaker{e: e, prio: i % 3, h: h}).Wake
			case i%3 == 2:
				wake[i] = w.Rebook
			default:
				wake[i] = w.Wake
			}
		}
		for i := range n {
			wake[i](Time(rng.IntN(100)))
		}
		e.At(3000, 0, HandlerFunc(func(Time, int64) { e.Stop(nil) }), 0)
		if err := e.Run(); err != nil {
			t.Fatal(err)
		}
		return log
	}
	got, want := run(false), run(true)
	if len(want) < 1000 || !reflect.DeepEqual(got, want) {
		t.Errorf("%d runs, want the %d of the former waker (equal: %v)", len(got), len(want), reflect.DeepEqual(got, want))
	}
}

// naiveWaker is the former Waker: an earlier Wake schedules a new event
// and leaves the superseded one to run as a no-op.
type naiveWaker struct {
	e       *Engine
	prio    int
	h       Handler
	at      Time
	gen     int64
	pending bool
}

func (w *naiveWaker) Wake(t Time) {
	if w.pending && w.at <= t {
		return
	}
	w.gen++
	w.at, w.pending = t, true
	w.e.At(t, w.prio, w, w.gen)
}

// Rebook is Waker.Rebook the former way: a later booking schedules a new
// event and leaves the pending one to run as a no-op.
func (w *naiveWaker) Rebook(t Time) {
	if w.pending && w.at < t {
		w.gen++
		w.at = t
		w.e.At(t, w.prio, w, w.gen)
		return
	}
	w.Wake(t)
}

func (w *naiveWaker) Handle(now Time, arg int64) {
	if !w.pending || arg != w.gen {
		return
	}
	w.pending = false
	w.h.Handle(now, 0)
}

// flusher holds back one event (at 12 ns) until the queue runs dry, then
// books it; its handler leaves it blocked.
type flusher struct {
	e       *Engine
	held    bool
	flushes int
	ran     Time
}

func (f *flusher) Blocked() (bool, string) { return f.ran > 0, "flusher: waits for nothing that comes" }

func (f *flusher) Flush() bool {
	f.flushes++
	if !f.held {
		return false
	}
	f.held = false
	f.e.At(12*Nanosecond, 0, HandlerFunc(func(now Time, _ int64) { f.ran = now }), 0)
	return true
}

// When the queue runs dry Run asks each Flusher to book what it held back
// and goes on: the deadlock is reported at the held-back event's time, not
// at the last event before it. With nothing held back it reports at once.
func TestFlusher(t *testing.T) {
	e := NewEngine()
	f := &flusher{e: e, held: true}
	e.Register(f)
	e.At(7*Nanosecond, 0, HandlerFunc(func(Time, int64) {}), 0)
	err := e.Run()
	var d *DeadlockError
	if !errors.As(err, &d) || d.Time != 12*Nanosecond || f.ran != 12*Nanosecond {
		t.Fatalf("Run = %v (ran at %v), want a deadlock at 12ns after the flushed event", err, f.ran)
	}
	if f.flushes != 2 {
		t.Errorf("%d flushes, want 2 (one booking, one with nothing left)", f.flushes)
	}
}

// Deadlock lists sort their digit runs as numbers: core 2 before core 10.
func TestNaturalCompare(t *testing.T) {
	got := []string{"core 10: pipe M", "core 2: pipe V", "core 1: pipe S", "host", "core 02: x", "core 2: pipe M"}
	slices.SortFunc(got, naturalCompare)
	want := []string{"core 1: pipe S", "core 2: pipe M", "core 2: pipe V", "core 02: x", "core 10: pipe M", "host"}
	if !slices.Equal(got, want) {
		t.Errorf("sorted %q, want %q", got, want)
	}
}
