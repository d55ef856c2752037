package arch_test

import (
	"errors"
	"github.com/davinci-sim/davinci-sim/arch"
	_ "github.com/davinci-sim/davinci-sim/arch/davinci"
	"strings"
	"testing"

	"github.com/davinci-sim/davinci-sim/isa"
	"github.com/davinci-sim/davinci-sim/sim"
)

// scalarStream is a kernel of one scalar instruction of cycles cycles.
func scalarStream(cycles int64) func(int) isa.Stream {
	return func(int) isa.Stream {
		return func(yield func(isa.Instr) bool) { yield(isa.Scalar(cycles)) }
	}
}

func newHosted(t *testing.T) (*arch.Chip, *arch.Host) {
	t.Helper()
	c, err := arch.NewChip(machine(t), arch.Options{Mode: arch.Timing})
	if err != nil {
		t.Fatal(err)
	}
	h, err := c.NewHost()
	if err != nil {
		t.Fatal(err)
	}
	return c, h
}

// Kernels on disjoint cores overlap; a kernel on busy cores waits for them;
// a dependency orders kernels across core sets; the host overlaps its own
// compute with running kernels.
func TestHostKernelsOverlapAndOrder(t *testing.T) {
	c, h := newHosted(t)
	ns := sim.Time(1000)
	launch := sim.Time(c.M.Host.LaunchNS * 1e3)
	k1 := h.Launch("k1", "a", []int{0, 1}, scalarStream(10000)) // 10 µs at 1 GHz
	k2 := h.Launch("k2", "b", []int{2}, scalarStream(10000))
	k3 := h.Launch("k3", "a", []int{1}, scalarStream(1000))     // after k1 (same core)
	k4 := h.Launch("k4", "b", []int{3}, scalarStream(1000), k1) // after k1 (dependency)
	h.Compute("diag", 24*2.6e9*16*1e-6, 0, false, 0, nil)       // 1 µs on all host cores
	h.Wait("wait", k3, k4, k2)
	st, err := c.RunHosted(h)
	if err != nil {
		t.Fatal(err)
	}
	if k1.Started != launch || k2.Started != 2*launch {
		t.Errorf("k1 started %v, k2 %v; want %v, %v", k1.Started, k2.Started, launch, 2*launch)
	}
	if k2.Started >= k1.Finished {
		t.Errorf("k2 (disjoint cores) did not overlap k1: started %v, k1 finished %v", k2.Started, k1.Finished)
	}
	if k3.Started < k1.Finished || k4.Started < k1.Finished {
		t.Errorf("k3/k4 started %v/%v before k1 finished %v", k3.Started, k4.Started, k1.Finished)
	}
	// The host computed while k1 ran: its compute ends 1 µs after the 4th launch.
	if got := h.StageTimes()["diag"]; got != 1000*ns {
		t.Errorf("diag stage %v, want 1 µs", got)
	}
	if h.Finish() != max(k2.Finished, k3.Finished, k4.Finished) {
		t.Errorf("host finished at %v, last kernel at %v", h.Finish(), max(k2.Finished, k3.Finished, k4.Finished))
	}
	if st.Time < h.Finish() {
		t.Errorf("run ended at %v before the host %v", st.Time, h.Finish())
	}
}

// A kernel that waits on a flag nobody sets is a deadlock naming the core
// and the waiting host, not a hang.
func TestHostDeadlockNamesKernel(t *testing.T) {
	c, h := newHosted(t)
	bad := func(int) isa.Stream {
		return func(yield func(isa.Instr) bool) {
			yield(isa.Instr{Op: isa.OpWaitFlag, Pipe: isa.M, SrcPipe: isa.MTE1, DstPipe: isa.M, FlagID: 3})
		}
	}
	k := h.Launch("stuck", "z", []int{5}, bad)
	h.Wait("wait", k)
	_, err := c.RunHosted(h)
	var de *sim.DeadlockError
	if !errors.As(err, &de) {
		t.Fatalf("want a deadlock, got %v", err)
	}
	msg := err.Error()
	for _, want := range []string{"core 5", "wait_flag", `kernel "stuck" running`} {
		if !strings.Contains(msg, want) {
			t.Errorf("deadlock report %q lacks %q", msg, want)
		}
	}
}

// A callback error stops the run with the task named.
func TestHostCallbackError(t *testing.T) {
	c, h := newHosted(t)
	h.Transfer("h2d", 1<<20, func() error { return errors.New("boom") })
	_, err := c.RunHosted(h)
	if err == nil || !strings.Contains(err.Error(), "h2d") || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("got %v", err)
	}
}

// Tasks appended by a callback run too; transfer time follows the link.
func TestHostAppendAndTransferTime(t *testing.T) {
	c, h := newHosted(t)
	ran := false
	h.Call("plan", func() error {
		h.Transfer("d2h", 31_500_000, func() error { ran = true; return nil }) // 1 ms at 31.5 GB/s
		return nil
	})
	if _, err := c.RunHosted(h); err != nil {
		t.Fatal(err)
	}
	want := sim.Time(1e9 + c.M.Host.Link.LatencyNS*1e3)
	if !ran || h.Finish() != want {
		t.Errorf("ran %v, finish %v, want %v", ran, h.Finish(), want)
	}
}

// sync_all is refused inside host kernels (kernels end at launches).
func TestHostRejectsSyncAll(t *testing.T) {
	c, h := newHosted(t)
	k := h.Launch("s", "z", []int{0}, func(int) isa.Stream {
		return func(yield func(isa.Instr) bool) { yield(isa.Instr{Op: isa.OpSyncAll, Pipe: isa.S}) }
	})
	h.Wait("wait", k)
	if _, err := c.RunHosted(h); err == nil || !strings.Contains(err.Error(), "sync_all") {
		t.Fatalf("got %v", err)
	}
}

// A machine without a host section cannot build a host.
func TestNoHost(t *testing.T) {
	m := machine(t)
	m.Host.Cores = 0
	c, err := arch.NewChip(m, arch.Options{Mode: arch.Timing})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.NewHost(); err == nil {
		t.Fatal("want an error")
	}
}

// A forgetful host appending its program window by window from Call
// callbacks runs to the same times as one given the whole program up
// front; WaitAll waits for every kernel launched before it; progress
// counts dropped tasks; and it holds few of the tasks it carried out (at
// most 64, or as many as it has ahead: thousands of ranks each holding a
// thousand of them made most of a 4096-NPU run's heap).
func TestHostForgetMatchesUpFront(t *testing.T) {
	const windows, per = 40, 30
	window := func(h *arch.Host, w int) {
		for i := range per {
			k := h.Launch("k", "z", []int{(w + i) % 4}, scalarStream(int64(100+w*7+i)))
			h.Compute("c", 1e3*float64(i+1), 0, false, 0, nil)
			if i%7 == 0 {
				h.Wait("wait", k)
			}
		}
	}
	run := func(forget bool) (sim.Time, int, int) {
		c, h := newHosted(t)
		if forget {
			h.Forget()
			var next func(w int) error
			next = func(w int) error {
				if held, done := h.HeldTasks(); done > max(64, held-done) {
					t.Errorf("window %d: the host holds %d carried-out tasks (%d ahead)", w, done, held-done)
				}
				window(h, w)
				if w+1 < windows {
					h.Call("window", func() error { return next(w + 1) })
				} else {
					h.WaitAll("wait")
				}
				return nil
			}
			if err := next(0); err != nil {
				t.Fatal(err)
			}
		} else {
			for w := range windows {
				window(h, w)
			}
			h.WaitAll("wait")
		}
		if _, err := c.RunHosted(h); err != nil {
			t.Fatal(err)
		}
		done, total, _ := c.HostProgress()
		if done != total {
			t.Errorf("forget %v: progress %d of %d at the end", forget, done, total)
		}
		return h.Finish(), len(h.Kernels()), total
	}
	t0, n0, _ := run(false)
	t1, n1, total := run(true)
	if t0 != t1 {
		t.Errorf("forgetful host finished at %v, up-front one at %v", t1, t0)
	}
	if n0 != windows*per || n1 != 0 {
		t.Errorf("kernels kept: %d up front (want %d), %d forgetful (want 0)", n0, windows*per, n1)
	}
	if total < windows*per*2 {
		t.Errorf("progress total %d counts fewer tasks than were run", total)
	}
}

// A host program whose tasks together pass the simulated time range names
// the task that would end beyond it (the engine's message named none) and,
// where the tasks one machine key's rate bounds took most of the time, that
// key; a task too slow by itself names the key that makes it so, and a
// timed kernel too long names the kernel.
func TestHostTimeOverflowNamed(t *testing.T) {
	rate := func(c *arch.Chip) float64 {
		hm := &c.M.Host
		return float64(hm.Cores) * float64(hm.Clock) * hm.FP32FlopsPerCycle
	}
	for _, tc := range []struct {
		name  string
		build func(c *arch.Chip, h *arch.Host)
		want  string
	}{
		{"two tasks of 60 days each", func(c *arch.Chip, h *arch.Host) {
			h.Compute("a", rate(c)*6e6, 0, false, 0, nil)
			h.Compute("b", rate(c)*6e6, 0, false, 0, nil)
		}, `machine ascend-910a: key "host.fp32_flops_per_cycle" (16): too slow: the host tasks its rate bounds take 1.2e+07 s of the 1.2e+07 s to the end of host task 1 (b, compute): starting at 6000000s of simulated time and lasting 6000000s, it would end beyond the time a run can reach (the host's tasks together take too long): simulated time exceeds the int64 picosecond range (about 106 days)`},
		{"a task of memory after one of flops", func(c *arch.Chip, h *arch.Host) {
			h.Compute("a", rate(c)*4e6, 0, false, 0, nil)
			h.Compute("b", 0, int64(float64(c.M.Host.MemoryBandwidth)*6e6), false, 0, nil)
		}, `machine ascend-910a: key "host.memory_bandwidth" (93.8GB/s): too slow: the host tasks its rate bounds take 6e+06 s of the 1e+07 s to the end of host task 1 (b, compute): starting at 4000000s of simulated time and lasting 6000000s, it would end beyond the time a run can reach (the host's tasks together take too long): simulated time exceeds the int64 picosecond range (about 106 days)`},
		{"a task after a kernel of 60 days", func(c *arch.Chip, h *arch.Host) {
			h.Wait("k", h.LaunchTimed("k", "z", []int{0}, func() (sim.Time, error) { return 60 * 24 * 3600 * sim.Second, nil }))
			h.Compute("b", rate(c)*5e6, 0, false, 0, nil)
		}, "host task 2 (b, compute): starting at 5184000.000005s of simulated time and lasting 5000000s, it would end beyond the time a run can reach (the host's tasks together take too long): simulated time exceeds the int64 picosecond range (about 106 days)"},
		{"one task of 1000 years", func(c *arch.Chip, h *arch.Host) {
			h.Compute("diag", rate(c)*3e10, 0, false, 0, nil)
		}, `machine ascend-910a: key "host.fp32_flops_per_cycle" (16): too slow: a computation of 2.995e+22 flops on 24 host cores at 2.6GHz (host task 0, diag) would end beyond the time a run can reach: simulated time exceeds the int64 picosecond range (about 106 days)`},
		{"a timed kernel after 60 days", func(c *arch.Chip, h *arch.Host) {
			h.Compute("a", rate(c)*6e6, 0, false, 0, nil)
			h.LaunchTimed("k", "z", []int{0}, func() (sim.Time, error) { return 60 * 24 * 3600 * sim.Second, nil })
		}, `kernel "k": starting at 6000000.000005s of simulated time and lasting 5184000s, it would end beyond the time a run can reach: simulated time exceeds the int64 picosecond range (about 106 days)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, h := newHosted(t)
			tc.build(c, h)
			_, err := c.RunHosted(h)
			if err == nil || err.Error() != tc.want || !errors.Is(err, sim.ErrTimeOverflow) {
				t.Errorf("got  %v\nwant %s", err, tc.want)
			}
		})
	}
}
