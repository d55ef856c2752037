package arch_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/davinci-sim/davinci-sim/arch"
	"github.com/davinci-sim/davinci-sim/isa"
	"github.com/davinci-sim/davinci-sim/sim"
)

// timerAfter calls done d after now on eng (an operation outside the chips).
func timerAfter(eng *sim.Engine, d sim.Time, done func()) {
	eng.At(eng.Now()+d, 0, sim.HandlerFunc(func(sim.Time, int64) { done() }), 0)
}

// Two chips on one engine run at once; an Async task waits for an outside
// operation (here a rendezvous of both hosts and then a 5 µs "message"),
// and each chip's run equals what it does alone on its own engine.
func TestSharedEngineAndAsync(t *testing.T) {
	eng := sim.NewEngine()
	var chips [2]*arch.Chip
	var hosts [2]*arch.Host
	for i := range chips {
		c, err := arch.NewChip(machine(t), arch.Options{Mode: arch.Timing, Engine: eng})
		if err != nil {
			t.Fatal(err)
		}
		h, err := c.NewHost()
		if err != nil {
			t.Fatal(err)
		}
		chips[i], hosts[i] = c, h
	}
	// A rendezvous: the operation starts when both hosts reached it.
	arrived := 0
	var dones []func()
	var began sim.Time
	meet := func(done func()) error {
		arrived++
		dones = append(dones, done)
		if arrived == 2 {
			began = eng.Now()
			timerAfter(eng, 5_000_000, func() {
				for _, d := range dones {
					d()
				}
			})
		}
		return nil
	}
	var ks [2]*arch.Kernel
	for i, h := range hosts {
		// Chip 1's kernel is twice as long, so chip 0's host waits for it.
		ks[i] = h.Launch("k", "z", []int{0}, scalarStream(int64(10000*(i+1))))
		h.Wait("wait", ks[i])
		h.Async("exchange", meet)
		h.Launch("after", "z", []int{1}, scalarStream(1000))
		chips[i].AttachHost(h)
		if err := chips[i].Start(isa.Program{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := chips[0].Run(isa.Program{}); err == nil || !strings.Contains(err.Error(), "shared engine") {
		t.Errorf("Run on a shared engine: got %v", err)
	}
	if err := eng.Run(); err != nil {
		t.Fatal(err)
	}
	for _, c := range chips {
		if _, err := c.Collect(); err != nil {
			t.Fatal(err)
		}
	}
	if began != ks[1].Finished {
		t.Errorf("rendezvous began %v, want the later kernel's end %v", began, ks[1].Finished)
	}
	for i, h := range hosts {
		if got := h.StageTimes()["exchange"]; got != began+5_000_000-ks[i].Finished {
			t.Errorf("host %d: exchange stage %v, want %v", i, got, began+5_000_000-ks[i].Finished)
		}
	}
	// Alone on its own engine chip 1's first kernel ends at the same time.
	c, h := newHosted(t)
	k := h.Launch("k", "z", []int{0}, scalarStream(20000))
	h.Wait("wait", k)
	if _, err := c.RunHosted(h); err != nil {
		t.Fatal(err)
	}
	if k.Finished != ks[1].Finished {
		t.Errorf("shared engine changed a kernel's time: %v, alone %v", ks[1].Finished, k.Finished)
	}
}

// An Async operation that never completes is a deadlock naming the task;
// an error from begin stops the run naming it.
func TestAsyncNeverDoneAndError(t *testing.T) {
	c, h := newHosted(t)
	h.Async("recv", func(func()) error { return nil })
	_, err := c.RunHosted(h)
	var de *sim.DeadlockError
	if !errors.As(err, &de) || !strings.Contains(err.Error(), "recv") {
		t.Fatalf("want a deadlock naming the task, got %v", err)
	}
	c, h = newHosted(t)
	h.Async("send", func(func()) error { return errors.New("no route") })
	if _, err := c.RunHosted(h); err == nil || !strings.Contains(err.Error(), "send") || !strings.Contains(err.Error(), "no route") {
		t.Fatalf("got %v", err)
	}
}

// Timed kernels on a chip without core models keep launch order per core,
// overlap on disjoint cores and take exactly their durations; a stream
// kernel there is refused with its name.
func TestLaunchTimedOnHostChip(t *testing.T) {
	eng := sim.NewEngine()
	c, err := arch.NewHostChip(machine(t), eng, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	h, err := c.NewHost()
	if err != nil {
		t.Fatal(err)
	}
	fixed := func(d sim.Time) func() (sim.Time, error) { return func() (sim.Time, error) { return d, nil } }
	k1 := h.LaunchTimed("k1", "a", []int{0, 1}, fixed(20_000_000))
	k2 := h.LaunchTimed("k2", "b", []int{2}, fixed(60_000_000))
	k3 := h.LaunchTimed("k3", "a", []int{1}, fixed(10_000_000)) // after k1 (core 1)
	h.Wait("wait", k2, k3)
	c.AttachHost(h)
	if err := c.Start(isa.Program{}); err != nil {
		t.Fatal(err)
	}
	if err := eng.Run(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Collect(); err != nil {
		t.Fatal(err)
	}
	if k1.Finished-k1.Started != 20_000_000 || k2.Finished-k2.Started != 60_000_000 || k3.Started != k1.Finished || k2.Started >= k1.Finished {
		t.Errorf("k1 %v–%v, k2 %v–%v, k3 %v–%v", k1.Started, k1.Finished, k2.Started, k2.Finished, k3.Started, k3.Finished)
	}
	eng = sim.NewEngine()
	c, _ = arch.NewHostChip(machine(t), eng, "", nil)
	h, _ = c.NewHost()
	h.Launch("streamed", "z", []int{0}, scalarStream(10))
	c.AttachHost(h)
	if err := c.Start(isa.Program{}); err != nil {
		t.Fatal(err)
	}
	_ = eng.Run()
	if _, err := c.Collect(); err == nil || !strings.Contains(err.Error(), "streamed") {
		t.Errorf("stream kernel on a host chip: got %v", err)
	}
}

// An operation enqueued in stream order (Enqueue) starts when the kernels
// it follows have finished, not when the host reaches a wait: the host
// goes on (its next kernel, on other cores, starts at once), a kernel
// naming the operation starts at its end, and the host's Wait counts it.
// One never done is a deadlock naming it; an error from begin stops the
// run naming it.
func TestEnqueueInStreamOrder(t *testing.T) {
	// op0 returns the host's last enqueued operation.
	var last *arch.Kernel
	op0 := func(*arch.Host) *arch.Kernel { return last }
	c, h := newHosted(t)
	eng := c.Engine()
	k := h.Launch("k", "z", []int{0}, scalarStream(1_000_000))
	var began sim.Time
	op := h.Enqueue("bcast", "hccl", func(done func()) error {
		began = eng.Now()
		timerAfter(eng, 5_000_000, done)
		return nil
	}, k)
	free := h.Launch("free", "z", []int{1}, scalarStream(1000))
	after := h.Launch("after", "z", []int{2}, scalarStream(1000), op)
	h.Wait("wait", op)
	if _, err := c.RunHosted(h); err != nil {
		t.Fatal(err)
	}
	if began != k.Finished {
		t.Errorf("the operation began at %v, want its kernel's end %v", began, k.Finished)
	}
	if op.Finished != began+5_000_000 || !op.Done() {
		t.Errorf("the operation ended at %v (done %v), want %v", op.Finished, op.Done(), began+5_000_000)
	}
	if free.Started >= k.Finished {
		t.Errorf("the host waited for the operation: the next kernel started at %v, after %v", free.Started, k.Finished)
	}
	if after.Started != op.Finished {
		t.Errorf("the kernel after the operation started at %v, want its end %v", after.Started, op.Finished)
	}
	if h.Finish() < op.Finished {
		t.Errorf("the host's wait ended at %v, before the operation %v", h.Finish(), op.Finished)
	}

	c, h = newHosted(t)
	h.Wait("wait", h.Enqueue("lost", "hccl", func(func()) error { return nil }))
	_, err := c.RunHosted(h)
	var de *sim.DeadlockError
	if !errors.As(err, &de) || !strings.Contains(strings.Join(de.Blocked, "\n"), `operation "lost" outside the chip not finished`) {
		t.Fatalf("want a deadlock naming the operation, got %v", err)
	}
	c, h = newHosted(t)
	last = h.Enqueue("never", "hccl", func(func()) error { return nil })
	k = h.Launch("next", "z", []int{0}, scalarStream(1000), op0(h))
	h.Wait("wait", k)
	_, err = c.RunHosted(h)
	if !errors.As(err, &de) || !strings.Contains(strings.Join(de.Blocked, "\n"), `kernel "next" waits for operation "never"`) {
		t.Fatalf("want a deadlock naming the kernel's operation, got %v", err)
	}
	c, h = newHosted(t)
	h.Enqueue("bad", "hccl", func(func()) error { return errors.New("no route") })
	if _, err := c.RunHosted(h); err == nil || !strings.Contains(err.Error(), `"bad"`) || !strings.Contains(err.Error(), "no route") {
		t.Fatalf("got %v", err)
	}
}
