package arch_test

import (
	"math/rand/v2"
	"testing"

	"github.com/davinci-sim/davinci-sim/arch"
	"github.com/davinci-sim/davinci-sim/sim"
)

// TestHostStartsMatchReference holds the host's kernel scheduling to its
// definition, computed apart: a kernel starts at the latest of its launch
// task's end, its dependencies' ends and, on each of its cores, the end of
// the kernel launched before it there (the cores run their kernels in
// launch order, one at a time); a kernel on no cores ends as it starts; a
// wait holds the host until its kernels end. Random programs of timed
// kernels over random core sets (some none, some repeated dependencies,
// some on kernels already done when launched), with waits between.
func TestHostStartsMatchReference(t *testing.T) {
	const cores = 6
	for seed := range uint64(40) {
		rng := rand.New(rand.NewPCG(seed, 7))
		c, h := newHosted(t)
		launch := sim.CeilPS(c.M.Host.LaunchNS * 1e3)
		type want struct{ start, end sim.Time }
		var (
			ks   []*arch.Kernel
			ref  []want
			last [cores]int // per core: index of the kernel launched last there, or -1
			now  sim.Time   // the host's time in the reference
		)
		for i := range last {
			last[i] = -1
		}
		n := 20 + rng.IntN(60)
		// add appends kernel i; the program is appended in chunks, each
		// from a Call at the end of the one before it, so that some
		// dependencies are done when their dependents are launched.
		add := func(i int) {
			var on []int
			if rng.IntN(6) > 0 {
				for core := range cores {
					if rng.IntN(3) == 0 {
						on = append(on, core)
					}
				}
			}
			var after []*arch.Kernel
			var deps []int
			for range rng.IntN(4) {
				if i > 0 {
					d := rng.IntN(i)
					after, deps = append(after, ks[d]), append(deps, d)
				}
			}
			if rng.IntN(8) == 0 {
				after = append(after, nil) // ignored
			}
			dur := 1 + sim.Time(rng.Int64N(int64(6*launch))) // up to six launches: kernels overlap
			k := h.LaunchTimed("k", "z", on, func() (sim.Time, error) { return dur, nil }, after...)
			now += launch
			start := now
			for _, d := range deps {
				start = max(start, ref[d].end)
			}
			for _, core := range on {
				if p := last[core]; p >= 0 {
					start = max(start, ref[p].end)
				}
				last[core] = i
			}
			end := start + dur
			if len(on) == 0 {
				end = start
			}
			ks, ref = append(ks, k), append(ref, want{start, end})
			if rng.IntN(10) == 0 {
				w := rng.IntN(i + 1)
				h.Wait("wait", ks[w])
				now = max(now, ref[w].end)
			}
		}
		var chunk func(from int) error
		chunk = func(from int) error {
			to := min(n, from+1+rng.IntN(12))
			for i := from; i < to; i++ {
				add(i)
			}
			if to < n {
				h.Call("more", func() error { return chunk(to) })
			} else {
				h.WaitAll("wait")
			}
			return nil
		}
		_ = chunk(0)
		if _, err := c.RunHosted(h); err != nil {
			t.Fatal(err)
		}
		for i, k := range ks {
			if k.Started != ref[i].start || k.Finished != ref[i].end {
				t.Fatalf("seed %d: kernel %d of %d on %v: started %v, finished %v; want %v, %v",
					seed, i, n, k.Cores, k.Started, k.Finished, ref[i].start, ref[i].end)
			}
		}
	}
}
