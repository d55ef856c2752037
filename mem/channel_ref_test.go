package mem

// refChannel is mem.Channel as it was before its flows were kept in cap
// groups with virtual clocks (commit fbba522): every start or end walks
// every flow. Kept verbatim (renamed; the package-level FlowDone,
// ChannelPriority and epsilon are shared) as the reference the
// differential test (channel_diff_test.go) compares Channel with, and as
// the baseline of BenchmarkChannel.

import (
	"math"

	"github.com/davinci-sim/davinci-sim/sim"
)

// refChannel is a shared bandwidth resource (global memory): concurrent flows
// share its total bandwidth max-min fairly (water-filling), each flow also
// capped by its own path bandwidth. Rates are recomputed whenever a flow
// starts or ends, so contention is modeled exactly in the fluid limit.
// Remaining bytes are tracked in float64; event times are integer ps,
// rounded up, so runs are deterministic.
type refChannel struct {
	eng      *sim.Engine
	total    float64 // bytes per ps
	reserved float64 // bytes per ps taken by traffic outside the channel's flows (SetReserved)
	flows    []*refFlow
	last     sim.Time
	waker    *sim.Waker
	inUse    float64 // current aggregate rate, bytes per ps
	observer func(now sim.Time, bytesPerSecond float64)
	// Bytes moved through the channel, for statistics.
	Bytes float64
	// busyIntegral accumulates rate·time to compute mean utilisation.
	busyIntegral float64
	sorted       []*refFlow // the flows by cap, ties in start order (what water-filling visits)
	fin          []*refFlow // scratch for finished flows
	spare        []*refFlow // finished flows for reuse
	equal        bool       // every flow has the same rate, share (the common case)
	share        float64    // that rate when equal (flows' own rate fields are then stale)
}

type refFlow struct {
	remaining float64
	cap       float64 // bytes per ps
	rate      float64
	done      FlowDone
	tag       int64
}

// newRefChannel returns a channel with the given total bandwidth in bytes/s.
func newRefChannel(eng *sim.Engine, bytesPerSecond float64) *refChannel {
	c := &refChannel{eng: eng, total: bytesPerSecond / 1e12}
	c.waker = sim.NewWaker(eng, ChannelPriority, sim.HandlerFunc(c.handle))
	return c
}

// Observe registers fn to be told the aggregate bandwidth in use whenever it
// changes (for traces). Pass nil to stop.
func (c *refChannel) Observe(fn func(now sim.Time, bytesPerSecond float64)) { c.observer = fn }

// Start begins a transfer of n bytes capped at capBytesPerSecond; done is
// told (with tag) when the last byte has moved.
func (c *refChannel) Start(n int64, capBytesPerSecond float64, done FlowDone, tag int64) {
	now := c.eng.Now()
	c.advance(now)
	var f *refFlow
	if k := len(c.spare); k > 0 {
		f = c.spare[k-1]
		c.spare = c.spare[:k-1]
	} else {
		f = new(refFlow)
	}
	*f = refFlow{remaining: float64(n), cap: capBytesPerSecond / 1e12, done: done, tag: tag}
	c.flows = append(c.flows, f)
	// Insert after every flow of a cap at most f's (f started last).
	lo, hi := 0, len(c.sorted)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if c.sorted[m].cap <= f.cap {
			lo = m + 1
		} else {
			hi = m
		}
	}
	c.sorted = append(c.sorted, nil)
	copy(c.sorted[lo+1:], c.sorted[lo:])
	c.sorted[lo] = f
	c.reschedule(now)
}

// SetReserved takes bytesPerSecond of the channel's bandwidth for
// traffic it does not carry as flows (a DMA from another model: an NPU's
// HBM serving a network transfer), from now until changed; the flows
// share the rest. It counts as bandwidth in use. At most 99 % of the
// total is reserved.
func (c *refChannel) SetReserved(bytesPerSecond float64) {
	r := min(max(bytesPerSecond/1e12, 0), 0.99*c.total)
	if r == c.reserved {
		return
	}
	now := c.eng.Now()
	c.advance(now)
	c.reserved = r
	c.reschedule(now)
}

// Active returns the number of flows in progress.
func (c *refChannel) Active() int { return len(c.flows) }

// MeanUtilisation returns the mean fraction of the total bandwidth used over [0, end].
func (c *refChannel) MeanUtilisation(end sim.Time) float64 {
	if end <= 0 || c.total == 0 {
		return 0
	}
	return c.busyIntegral / (c.total * float64(end))
}

func (c *refChannel) advance(now sim.Time) {
	dt := float64(now - c.last)
	if dt > 0 {
		if c.equal {
			moved := c.share * dt
			for _, f := range c.flows {
				f.remaining -= moved
				c.Bytes += moved
			}
		} else {
			for _, f := range c.flows {
				moved := f.rate * dt
				f.remaining -= moved
				c.Bytes += moved
			}
		}
		c.busyIntegral += c.inUse * dt
	}
	c.last = now
}

// rate returns flow f's current rate.
func (c *refChannel) rate(f *refFlow) float64 {
	if c.equal {
		return c.share
	}
	return f.rate
}

// rates assigns max-min fair rates with per-flow caps (water-filling),
// given the flows' smallest cap and the sum of their caps (in flow order).
func (c *refChannel) rates(minCap, sumCap float64) {
	c.inUse = c.reserved
	c.flowRates(minCap, sumCap, c.total-c.reserved)
}

// flowRates shares avail bytes per ps out among the flows.
func (c *refChannel) flowRates(minCap, sumCap, avail float64) {
	n := len(c.flows)
	c.equal = false
	if n == 0 {
		return
	}
	// Common case: every cap is at least the equal share: every flow's
	// rate is share (kept once, in c.share).
	share := avail / float64(n)
	if minCap >= share {
		c.equal, c.share = true, share
		c.inUse += avail
		return
	}
	// Uncontended: the caps fit (with a margin far above float rounding, so
	// water-filling would give every flow its cap too).
	if sumCap <= avail*(1-1e-9) {
		for _, f := range c.flows {
			f.rate = f.cap
		}
		c.inUse += sumCap
		return
	}
	// c.sorted holds the flows by cap, ties in start order: the order a
	// stable sort of the flows by cap gives.
	fs := c.sorted
	left := avail
	for i, f := range fs {
		share := left / float64(len(fs)-i)
		r := f.cap
		if r > share {
			r = share
		}
		f.rate = r
		left -= r
		c.inUse += r
	}
}

func (c *refChannel) reschedule(now sim.Time) {
	// Finish flows that are done, in start order (deterministic), and
	// gather in the same pass what the rates and the next finish need: the
	// smallest cap, the sum of the caps and the least remaining of the
	// flows kept.
	kept := c.flows[:0]
	finished := c.fin[:0]
	c.fin = nil // a re-entrant call (a callback starting a flow) gets its own
	minCap, sumCap, least := math.Inf(1), 0.0, math.Inf(1)
	for _, f := range c.flows {
		if f.remaining <= epsilon {
			finished = append(finished, f)
		} else {
			kept = append(kept, f)
			minCap = min(minCap, f.cap)
			sumCap += f.cap
			least = min(least, f.remaining)
		}
	}
	for i := len(kept); i < len(c.flows); i++ {
		c.flows[i] = nil
	}
	if len(finished) > 0 {
		ks := c.sorted[:0]
		for _, f := range c.sorted {
			if f.remaining > epsilon {
				ks = append(ks, f)
			}
		}
		for i := len(ks); i < len(c.sorted); i++ {
			c.sorted[i] = nil
		}
		c.sorted = ks
	}
	c.flows = kept
	c.rates(minCap, sumCap)
	if c.observer != nil {
		c.observer(now, c.inUse*1e12)
	}
	if len(c.flows) > 0 {
		next := sim.Time(math.MaxInt64)
		if c.equal {
			// Equal rates: the flow with the least left finishes first
			// (ceil(r/rate) is monotonic in r), one division.
			next = max(sim.Add(now, sim.CeilPS(least/c.share)), now+1)
		} else {
			for _, f := range c.flows {
				t := sim.Add(now, sim.CeilPS(f.remaining/f.rate))
				if t <= now {
					t = now + 1
				}
				if t < next {
					next = t
				}
			}
		}
		c.waker.Rebook(next) // MaxTime (a transfer too slow to simulate) stops the run with sim.ErrTimeOverflow
	}
	for _, f := range finished {
		f.done.FlowDone(now, f.tag)
	}
	for i, f := range finished {
		c.spare = append(c.spare, f)
		finished[i] = nil
	}
	c.fin = finished[:0]
}

func (c *refChannel) handle(now sim.Time, _ int64) {
	c.advance(now)
	// Flows whose computed finish time is now are done even if float
	// rounding leaves a sliver.
	for _, f := range c.flows {
		if f.remaining <= c.rate(f)*0.5+epsilon {
			c.Bytes += f.remaining
			f.remaining = 0
		}
	}
	c.reschedule(now)
}
