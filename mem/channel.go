package mem

import (
	"fmt"
	"math"
	"slices"

	"github.com/davinci-sim/davinci-sim/sim"
)

// FlowDone is told when a transfer through a Channel has moved its last byte.
type FlowDone interface {
	// FlowDone is called at time now with the flow's tag.
	FlowDone(now sim.Time, tag int64)
}

// Channel is a shared bandwidth resource (global memory): concurrent flows
// share its total bandwidth max-min fairly (water-filling), each flow also
// capped by its own path bandwidth. Rates are recomputed whenever a flow
// starts or ends, so contention is modeled exactly in the fluid limit.
// Remaining bytes are tracked in float64; event times are integer ps,
// rounded up, so runs are deterministic.
//
// Implementation: a start or an end costs O(log n) plus O(log g) per cap
// group that changes side (g: distinct caps), not O(n). Flows of equal cap
// form a group; water-filling gives every flow of a group the same rate
// (its cap, or the water level L), so a group keeps one clock — the bytes
// each of its flows has moved — and its flows in a min-heap by the clock
// value at which they finish. The groups whose cap is below the level
// (capped: clock vc + cap·(t − tc), first finish at a fixed time) and the
// others (uncapped: clock off + W, W = ∫L dt shared by all of them) are
// split at the one boundary of the cap order that water-filling gives (the
// test "cap·(flows at or above) ≥ available − caps below" is monotone in
// the cap order), kept in a max-heap and a min-heap by cap; the boundary
// moves one group at a time. Each side keeps its groups in a heap by first
// finish (capped: time; uncapped: W), so the next completion is the
// earlier of two heap tops.
//
// Rounding: a flow's bytes left are the difference of two clock values
// (rebased before they grow large) instead of a count decremented at every
// event, so the float rounding differs from a per-flow count at the ulp
// level (channel_diff_test.go compares the channel with the former
// per-flow implementation).
type Channel struct {
	eng      *sim.Engine
	total    float64 // bytes per ps
	reserved float64 // bytes per ps taken by traffic outside the channel's flows (SetReserved)
	last     sim.Time
	waker    *sim.Waker
	inUse    float64 // current aggregate rate, bytes per ps
	flowRate float64 // the flows' part of inUse
	observer func(now sim.Time, bytesPerSecond float64)
	name     string // names the bandwidth in messages (SetName)
	// Bytes moved through the channel, for statistics.
	Bytes float64
	// busyIntegral accumulates rate·time to compute mean utilisation.
	busyIntegral float64

	n      int      // flows in progress
	seq    uint64   // flows started: finished flows are told in start order
	nc     int      // flows in capped groups
	sumCap ksum     // the sum of their caps
	level  float64  // the rate of every uncapped flow (when there are some)
	water  float64  // ∫ level dt since the last rebase: the uncapped groups' common clock
	bigU   float64  // a bound on the uncapped flows' remaining bytes at the water's last rebase, and on their sizes since
	epoch  sim.Time // capped groups' finish keys are times after epoch (precision)
	minCap float64  // the smallest cap started (bounds the sliver sweep of capped groups)
	quiet  float64  // no flow is done before this time (ps; sweep has nothing to do)

	groups  map[float64]*group // by cap, while indexed
	indexed bool               // (else few groups: find scans them)
	capHi   gheap              // capped groups, largest cap on top
	unLo    gheap              // uncapped groups, smallest cap on top
	capFin  gheap              // capped groups by the time their first flow finishes
	unFin   gheap              // uncapped groups by the water value at which their first flow finishes

	fin    []*flow  // scratch for finished flows
	spare  []*flow  // finished flows for reuse
	spareG []*group // empty groups for reuse
	cand   []*group // scratch: capped groups with a finished flow
	stack  []int    // scratch: heap walk
}

type flow struct {
	fv   float64 // the group clock's value when the flow has moved its last byte
	seq  uint64
	done FlowDone
	tag  int64
}

// group is the flows of one cap (all at the same rate).
type group struct {
	cap    float64 // bytes per ps
	capped bool    // rate cap (else the level)
	// The group's clock (bytes each of its flows has moved since the
	// group's origin): vc + cap·(t − tc) while capped, off + Channel.water
	// while uncapped.
	vc    float64
	tc    sim.Time
	off   float64
	dt    float64 // capped: the first flow's finish is dt ps after tc
	big   float64 // the largest flow added since the clock was last rebased (bounds what its flows have left)
	flows []*flow // min-heap by fv
	// keys[0]: the key in capHi (−cap) or unLo (cap); keys[1]: in capFin
	// (first finish, ps after epoch) or unFin (first finish, water value).
	keys [2]float64
	idx  [2]int // positions in those heaps
}

// ChannelPriority is the event priority of channel completions: before the
// cores' wake-ups at the same instant, so a finished transfer is seen.
const ChannelPriority = -10

// epsilon bytes: a flow with less left is finished (float rounding slack).
const epsilon = 1e-6

// Precision. A flow's bytes left are the difference of two clock values,
// so their rounding is that of the clocks' magnitude: a group clock is
// moved back to 0 when a flow is added to it beyond twice the largest flow
// added since its last rebase (or beyond rebaseBytes), the water clock
// likewise, so the bytes left are about as precise as a per-flow count's.
// Every flow present at a rebase has finished (or left the side) by the
// next one, so a rebase's O(flows) is paid once per flow (plus once per
// rebaseBytes moved by a flow larger than that).
const (
	// rebaseBytes: a clock beyond this is always rebased (ulp < 1e-9
	// bytes, far under epsilon).
	rebaseBytes = 1 << 22
	// epochSpan: capped groups' finish keys are re-expressed after a new
	// epoch when now is this far from it (their ulp stays below 1e-4 ps).
	epochSpan = 1 << 36
)

// NewChannel returns a channel with the given total bandwidth in bytes/s.
func NewChannel(eng *sim.Engine, bytesPerSecond float64) *Channel {
	c := &Channel{eng: eng, total: bytesPerSecond / 1e12, minCap: math.Inf(1)}
	c.capFin.s, c.unFin.s = 1, 1
	c.waker = sim.NewWaker(eng, ChannelPriority, sim.HandlerFunc(c.handle))
	return c
}

// SetName sets how messages name the channel's bandwidth: the key that
// sets it and its value, e.g. `machine m: key "gm.bandwidth" (1e-30B/s)`.
// A transfer that its share of the channel's bandwidth would end beyond the
// time a run can reach then stops the run with an error naming it (which
// wraps sim.ErrTimeOverflow), not the engine's, which names no key. Only
// the uncapped flows' share counts: a flow held to its own cap is the
// cap's setter's to name.
func (c *Channel) SetName(name string) { c.name = name }

// Observe registers fn to be told the aggregate bandwidth in use whenever it
// changes (for traces). Pass nil to stop.
func (c *Channel) Observe(fn func(now sim.Time, bytesPerSecond float64)) { c.observer = fn }

// Start begins a transfer of n bytes capped at capBytesPerSecond; done is
// told (with tag) when the last byte has moved.
func (c *Channel) Start(n int64, capBytesPerSecond float64, done FlowDone, tag int64) {
	now := c.eng.Now()
	c.advance(now)
	finished := c.fin[:0]
	c.fin = nil // a re-entrant call (a callback starting a flow) gets its own
	finished = c.sweep(now, 0, finished)
	var f *flow
	if k := len(c.spare); k > 0 {
		f = c.spare[k-1]
		c.spare = c.spare[:k-1]
	} else {
		f = new(flow)
	}
	*f = flow{seq: c.seq, done: done, tag: tag}
	c.seq++
	if size := float64(n); size <= epsilon {
		finished = append(finished, f)
	} else {
		c.add(now, f, size, capBytesPerSecond/1e12)
	}
	c.reschedule(now, finished)
}

// SetReserved takes bytesPerSecond of the channel's bandwidth for
// traffic it does not carry as flows (a DMA from another model: an NPU's
// HBM serving a network transfer), from now until changed; the flows
// share the rest. It counts as bandwidth in use. At most 99 % of the
// total is reserved.
func (c *Channel) SetReserved(bytesPerSecond float64) {
	r := min(max(bytesPerSecond/1e12, 0), 0.99*c.total)
	if r == c.reserved {
		return
	}
	now := c.eng.Now()
	c.advance(now)
	c.reserved = r
	finished := c.fin[:0]
	c.fin = nil
	c.reschedule(now, c.sweep(now, 0, finished))
}

// Active returns the number of flows in progress.
func (c *Channel) Active() int { return c.n }

// MeanUtilisation returns the mean fraction of the total bandwidth used over [0, end].
func (c *Channel) MeanUtilisation(end sim.Time) float64 {
	if end <= 0 || c.total == 0 {
		return 0
	}
	return c.busyIntegral / (c.total * float64(end))
}

func (c *Channel) advance(now sim.Time) {
	if dt := float64(now - c.last); dt > 0 {
		if c.nc < c.n {
			c.water += float64(c.level * dt)
			if c.water > min(2*c.bigU, rebaseBytes) {
				c.rebaseWater()
			}
		}
		c.Bytes += float64(c.flowRate * dt)
		c.busyIntegral += float64(c.inUse * dt)
	}
	c.last = now
	if now-c.epoch > epochSpan {
		c.rebaseEpoch(now)
	}
}

// rebaseWater moves the water clock back to 0 (the uncapped groups'
// offsets take its value).
func (c *Channel) rebaseWater() {
	c.bigU = 0
	for _, g := range c.unFin.a {
		g.off += c.water
		g.keys[1] = g.flows[0].fv - g.off
		c.bigU = max(c.bigU, g.big)
	}
	c.water = 0
	c.unFin.init()
}

// rebaseEpoch makes now the capped groups' time origin.
func (c *Channel) rebaseEpoch(now sim.Time) {
	c.epoch = now
	for _, g := range c.capFin.a {
		g.keys[1] = float64(g.tc-c.epoch) + g.dt
	}
	c.capFin.init()
}

// clock returns g's clock at now.
func (c *Channel) clock(g *group, now sim.Time) float64 {
	if g.capped {
		return g.vc + float64(g.cap*float64(now-g.tc))
	}
	return g.off + c.water
}

// setFin sets g's finish key from its first flow and puts g in its side's
// finish heap (push) or moves it there (fix).
func (c *Channel) setFin(g *group, push bool) {
	h := &c.unFin
	if g.capped {
		h = &c.capFin
		g.dt = (g.flows[0].fv - g.vc) / g.cap
		g.keys[1] = float64(g.tc-c.epoch) + g.dt
	} else {
		g.keys[1] = g.flows[0].fv - g.off
	}
	if push {
		h.push(g)
	} else {
		h.fix(g.idx[1])
	}
}

// add puts f (size bytes, capped at cap bytes per ps) in its cap's group.
func (c *Channel) add(now sim.Time, f *flow, size, cap float64) {
	c.minCap = min(c.minCap, cap)
	g := c.find(cap)
	fresh := g == nil
	if fresh {
		if k := len(c.spareG); k > 0 {
			g = c.spareG[k-1]
			c.spareG = c.spareG[:k-1]
		} else {
			g = new(group)
		}
		g.cap, g.flows, g.big = cap, g.flows[:0], 0
		// Below the largest capped cap it is capped too; else uncapped
		// (reschedule moves the boundary).
		if len(c.capHi.a) > 0 && cap < c.capHi.a[0].cap {
			g.capped, g.vc, g.tc = true, 0, now
			g.keys[0] = -cap
			c.capHi.push(g)
		} else {
			g.capped, g.off = false, -c.water
			g.keys[0] = cap
			c.unLo.push(g)
		}
		c.index(g)
	}
	v := c.clock(g, now)
	if v > min(2*max(g.big, size), rebaseBytes) {
		// Move the clock back to 0 (its flows' finish values with it).
		g.big = 0
		for _, o := range g.flows {
			o.fv -= v
			g.big = max(g.big, o.fv)
		}
		if g.capped {
			g.vc, g.tc = 0, now
		} else {
			g.off = -c.water
		}
		v = 0
		c.setFin(g, false)
	}
	f.fv = v + size
	g.big = max(g.big, size)
	if !g.capped {
		c.bigU = max(c.bigU, size)
	}
	g.flows = append(g.flows, f)
	flowUp(g.flows, len(g.flows)-1)
	c.n++
	if g.capped {
		c.nc++
		c.sumCap.add(cap, 1)
	}
	if fresh || g.flows[0] == f {
		c.setFin(g, fresh)
	}
}

// drop removes g's first flow (finished).
func (c *Channel) drop(g *group) {
	fs := g.flows
	k := len(fs) - 1
	fs[0] = fs[k]
	fs[k] = nil
	g.flows = fs[:k]
	if k > 0 {
		flowDown(g.flows, 0)
	}
	c.n--
	if g.capped {
		c.nc--
		c.sumCap.add(-g.cap, 1)
	}
	if k > 0 {
		c.setFin(g, false)
		return
	}
	if g.capped {
		c.capHi.remove(g.idx[0])
		c.capFin.remove(g.idx[1])
	} else {
		c.unLo.remove(g.idx[0])
		c.unFin.remove(g.idx[1])
	}
	if c.indexed {
		delete(c.groups, g.cap)
		c.indexed = len(c.capHi.a)+len(c.unLo.a) > 8
	}
	c.spareG = append(c.spareG, g)
}

// find returns the group of flows capped at cap, or nil. Up to a few
// dozen groups it scans them (cheaper than a map, and the GPU cores'
// execution-unit channels have one or two); beyond, a map indexes them.
func (c *Channel) find(cap float64) *group {
	if c.indexed {
		return c.groups[cap]
	}
	for _, g := range c.unLo.a {
		if g.cap == cap {
			return g
		}
	}
	for _, g := range c.capHi.a {
		if g.cap == cap {
			return g
		}
	}
	return nil
}

// index records new group g for find.
func (c *Channel) index(g *group) {
	if c.indexed {
		c.groups[g.cap] = g
		return
	}
	if len(c.capHi.a)+len(c.unLo.a) < 32 {
		return
	}
	if c.groups == nil {
		c.groups = map[float64]*group{}
	}
	clear(c.groups)
	for _, g := range c.capHi.a {
		c.groups[g.cap] = g
	}
	for _, g := range c.unLo.a {
		c.groups[g.cap] = g
	}
	c.indexed = true
}

// takeDone appends to finished g's flows with at most thr bytes left —
// (fv − off) − v for group clock off + v (off 0 when v is the whole clock:
// the subtraction of 0 is exact, so both sides round alike) — and drops
// them from g; with half > 0 (handle) their slivers count in Bytes.
func (c *Channel) takeDone(g *group, off, v, thr, half float64, finished []*flow) []*flow {
	for len(g.flows) > 0 {
		f := g.flows[0]
		rem := (f.fv - off) - v
		if rem > thr {
			break
		}
		if half > 0 {
			c.Bytes += rem
		}
		finished = append(finished, f)
		c.drop(g)
	}
	return finished
}

// sweep appends to finished the flows that are done at now: those with at
// most rate·half + epsilon bytes left. handle passes half = 0.5 (a flow
// whose computed finish time is now is done even if float rounding leaves
// a sliver, which is counted in Bytes); Start and SetReserved 0.
func (c *Channel) sweep(now sim.Time, half float64, finished []*flow) []*flow {
	if float64(now)+half < c.quiet {
		return finished
	}
	// Uncapped groups: every flow at the level, so the done ones are the
	// least finish values.
	thr := float64(c.level*half) + epsilon
	for len(c.unFin.a) > 0 {
		g := c.unFin.a[0]
		if g.keys[1]-c.water > thr {
			break
		}
		finished = c.takeDone(g, g.off, c.water, thr, half, finished)
	}
	if len(c.capFin.a) == 0 {
		return finished
	}
	// Capped groups: the threshold is rate·half + epsilon with the group's
	// own rate, so walk the heap down to the finish times that could pass
	// it (epsilon/minCap bounds epsilon/cap; 1e-3 ps of slack for the
	// keys' rounding).
	a := c.capFin.a
	bound := float64(now-c.epoch) + half + epsilon/c.minCap + 1e-3
	cand := c.cand[:0]
	stack := append(c.stack[:0], 0)
	for len(stack) > 0 {
		i := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		g := a[i]
		if g.keys[1] > bound {
			continue
		}
		if g.flows[0].fv-c.clock(g, now) <= float64(g.cap*half)+epsilon {
			cand = append(cand, g)
		}
		if l := 2*i + 1; l < len(a) {
			stack = append(stack, l)
			if l+1 < len(a) {
				stack = append(stack, l+1)
			}
		}
	}
	for _, g := range cand {
		finished = c.takeDone(g, 0, c.clock(g, now), float64(g.cap*half)+epsilon, half, finished)
	}
	clear(cand)
	c.cand, c.stack = cand[:0], stack
	return finished
}

// rebalance moves the boundary between capped and uncapped groups to
// where water-filling puts it: a group is uncapped when its cap times the
// number of flows of it and of the larger caps is at least what the
// smaller caps leave of the available bandwidth.
func (c *Channel) rebalance(now sim.Time) {
	avail := c.total - c.reserved
	for len(c.capHi.a) > 0 {
		g := c.capHi.a[0]
		m := len(g.flows)
		below := c.sumCap
		below.add(-g.cap, m)
		if g.cap*float64(c.n-c.nc+m) < avail-below.value() {
			break
		}
		// Capped → uncapped.
		c.capHi.remove(0)
		c.capFin.remove(g.idx[1])
		c.sumCap, c.nc = below, c.nc-m
		g.off = c.clock(g, now) - c.water
		g.capped = false
		c.bigU = max(c.bigU, g.big)
		g.keys[0] = g.cap
		c.unLo.push(g)
		c.setFin(g, true)
	}
	for len(c.unLo.a) > 0 {
		g := c.unLo.a[0]
		m := len(g.flows)
		if g.cap*float64(c.n-c.nc) >= avail-c.sumCap.value() {
			break
		}
		// Uncapped → capped.
		c.unLo.remove(0)
		c.unFin.remove(g.idx[1])
		c.sumCap.add(g.cap, m)
		c.nc += m
		g.vc, g.tc = c.clock(g, now), now
		g.capped = true
		g.keys[0] = -g.cap
		c.capHi.push(g)
		c.setFin(g, true)
	}
	if c.nc == 0 {
		c.sumCap = ksum{} // no rounding carried over
	}
}

// ksum is a compensated (Neumaier) sum, s + c: the caps of the capped
// flows are added and taken away one flow or group at a time, and a plain
// float sum would carry the rounding of every change (a bandwidth in use
// of 72.99999999999997 GB/s where the flows' caps add up to 73).
type ksum struct{ s, c float64 }

// add adds x·m (m exact in float64).
func (k *ksum) add(x float64, m int) {
	p := float64(x * float64(m)) // rounded: addExact adds it
	k.addExact(p)
	if m != 1 {
		k.addExact(math.FMA(x, float64(m), -p)) // the product's rounding
	}
}

func (k *ksum) addExact(x float64) {
	t := k.s + x
	if math.Abs(k.s) >= math.Abs(x) {
		k.c += (k.s - t) + x
	} else {
		k.c += (x - t) + k.s
	}
	k.s = t
}

func (k ksum) value() float64 { return k.s + k.c }

// reschedule recomputes the rates after flows started or ended, wakes the
// channel at the next finish and tells the finished flows, in start order.
func (c *Channel) reschedule(now sim.Time, finished []*flow) {
	c.rebalance(now)
	avail := c.total - c.reserved
	c.flowRate = c.sumCap.value()
	if nu := c.n - c.nc; nu > 0 {
		c.level = (avail - c.flowRate) / float64(nu)
		c.flowRate = avail
	} else {
		c.water = 0 // no uncapped flow: rebase for free
	}
	c.inUse = c.reserved
	c.inUse += c.flowRate
	if c.observer != nil {
		c.observer(now, c.inUse*1e12)
	}
	c.quiet = math.Inf(1)
	if c.n > 0 {
		// The next finish: the earlier of the two sides' first.
		dt := math.Inf(1)
		if len(c.capFin.a) > 0 {
			g := c.capFin.a[0]
			dt = float64(g.tc-now) + g.dt
		}
		uncapped := false // the next finish is an uncapped flow's (at the channel's level)
		if len(c.unFin.a) > 0 {
			un := (c.unFin.a[0].keys[1] - c.water) / c.level
			uncapped = un <= dt
			dt = min(dt, un)
		}
		// Until then (less epsilon bytes at the slowest rate and some
		// rounding) no flow is done.
		slowest := c.minCap
		if c.nc < c.n {
			slowest = min(slowest, c.level)
		}
		c.quiet = float64(now) + dt - epsilon/slowest - 1e-3 - float64(1e-12*math.Abs(dt))
		wake := sim.Add(now, sim.CeilPS(dt))
		if wake >= sim.MaxTime && uncapped && c.name != "" {
			c.eng.Stop(fmt.Errorf("%s: too slow: a transfer over it would end beyond the time a run can reach (at %v of simulated time): %w",
				c.name, now, sim.ErrTimeOverflow))
		}
		c.waker.Rebook(max(wake, now+1)) // MaxTime (a transfer too slow to simulate) stops the run with sim.ErrTimeOverflow
	}
	if len(finished) > 1 {
		slices.SortFunc(finished, func(a, b *flow) int {
			if a.seq < b.seq {
				return -1
			}
			return 1
		})
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

func (c *Channel) handle(now sim.Time, _ int64) {
	c.advance(now)
	finished := c.fin[:0]
	c.fin = nil
	c.reschedule(now, c.sweep(now, 0.5, finished))
}

// flowUp and flowDown keep a group's flows a min-heap by finish value.
func flowUp(a []*flow, i int) {
	f := a[i]
	for i > 0 {
		p := (i - 1) / 2
		if a[p].fv <= f.fv {
			break
		}
		a[i] = a[p]
		i = p
	}
	a[i] = f
}

func flowDown(a []*flow, i int) {
	f := a[i]
	n := len(a)
	for {
		j := 2*i + 1
		if j >= n {
			break
		}
		if r := j + 1; r < n && a[r].fv < a[j].fv {
			j = r
		}
		if f.fv <= a[j].fv {
			break
		}
		a[i] = a[j]
		i = j
	}
	a[i] = f
}

// gheap is a min-heap of groups by keys[s], each group knowing its
// position (idx[s]).
type gheap struct {
	a []*group
	s int
}

func (h *gheap) push(g *group) {
	h.a = append(h.a, g)
	h.up(len(h.a) - 1)
}

// remove takes out the group at position i.
func (h *gheap) remove(i int) {
	k := len(h.a) - 1
	if i != k {
		h.a[i] = h.a[k]
	}
	h.a[k] = nil
	h.a = h.a[:k]
	if i < k {
		h.fix(i)
	}
}

// fix restores the heap after the key at position i changed.
func (h *gheap) fix(i int) {
	if !h.down(i) {
		h.up(i)
	}
}

// init restores the heap after any keys changed.
func (h *gheap) init() {
	for i := len(h.a)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
	for i, g := range h.a {
		g.idx[h.s&1] = i
	}
}

func (h *gheap) up(i int) {
	a, s := h.a, h.s&1
	g := a[i]
	k := g.keys[s]
	for i > 0 {
		p := (i - 1) / 2
		if a[p].keys[s] <= k {
			break
		}
		a[i] = a[p]
		a[i].idx[s] = i
		i = p
	}
	a[i] = g
	g.idx[s] = i
}

func (h *gheap) down(i0 int) bool {
	a, s := h.a, h.s&1
	n := len(a)
	i := i0
	g := a[i]
	k := g.keys[s]
	for {
		j := 2*i + 1
		if j >= n {
			break
		}
		if r := j + 1; r < n && a[r].keys[s] < a[j].keys[s] {
			j = r
		}
		if k <= a[j].keys[s] {
			break
		}
		a[i] = a[j]
		a[i].idx[s] = i
		i = j
	}
	a[i] = g
	g.idx[s] = i
	return i > i0
}
