package mem

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/davinci-sim/davinci-sim/sim"
)

// channelAPI is what the differential test drives, on Channel and on the
// former implementation (refChannel).
type channelAPI interface {
	Start(n int64, capBytesPerSecond float64, done FlowDone, tag int64)
	SetReserved(bytesPerSecond float64)
	Active() int
	MeanUtilisation(end sim.Time) float64
}

// scriptFlow is a transfer of a script: started at a fixed time (at ≥ 0)
// or from the FlowDone callback of its parent (at < 0).
type scriptFlow struct {
	at       sim.Time
	size     int64
	capBps   float64
	children []int // flows started from this one's FlowDone, in order
	reserve  float64
	reserves bool // this one's FlowDone also calls SetReserved(reserve)
}

type scriptReserve struct {
	at  sim.Time
	bps float64
}

type script struct {
	bps      float64
	flows    []scriptFlow
	reserves []scriptReserve
}

// scriptRun runs a script on one channel and records each flow's finish
// time and the order of the FlowDone calls.
type scriptRun struct {
	s     *script
	eng   *sim.Engine
	ch    channelAPI
	at    []sim.Time
	order []int
	peak  int
	seen  []observed // what Observe was told
}

type observed struct {
	at  sim.Time
	bps float64
}

func (r *scriptRun) FlowDone(now sim.Time, tag int64) {
	if r.at[tag] >= 0 {
		panic(fmt.Sprintf("flow %d done twice", tag))
	}
	r.at[tag] = now
	r.order = append(r.order, int(tag))
	f := &r.s.flows[tag]
	for _, k := range f.children {
		r.start(k)
	}
	if f.reserves {
		r.ch.SetReserved(f.reserve)
	}
}

func (r *scriptRun) start(k int) {
	f := &r.s.flows[k]
	r.ch.Start(f.size, f.capBps, r, int64(k))
	r.peak = max(r.peak, r.ch.Active())
}

func runScript(s *script, ref bool) (*scriptRun, float64) {
	e := sim.NewEngine()
	r := &scriptRun{s: s, eng: e, at: make([]sim.Time, len(s.flows))}
	for i := range r.at {
		r.at[i] = -1
	}
	var bytes func() float64
	observe := func(now sim.Time, bps float64) { r.seen = append(r.seen, observed{now, bps}) }
	if ref {
		c := newRefChannel(e, s.bps)
		c.Observe(observe)
		r.ch, bytes = c, func() float64 { return c.Bytes }
	} else {
		c := NewChannel(e, s.bps)
		c.Observe(observe)
		r.ch, bytes = c, func() float64 { return c.Bytes }
	}
	for k, f := range s.flows {
		if f.at >= 0 {
			e.At(f.at, 0, sim.HandlerFunc(func(sim.Time, int64) { r.start(k) }), 0)
		}
	}
	for _, v := range s.reserves {
		e.At(v.at, 1, sim.HandlerFunc(func(sim.Time, int64) { r.ch.SetReserved(v.bps) }), 0)
	}
	if err := e.Run(); err != nil {
		panic(err)
	}
	return r, bytes()
}

// randomScript draws a script of up to maxFlows concurrent flows.
// round: round bandwidths and sizes (finish times are often exact
// integers, where the two implementations' rounding can part).
func randomScript(rng *rand.Rand, maxFlows int, round bool) *script {
	s := &script{bps: math.Exp(rng.Float64()*math.Log(1000)) * 10e9} // 10 GB/s … 10 TB/s
	n := 1 + rng.IntN(maxFlows)
	fair := s.bps / float64(n)
	if round {
		s.bps = []float64{64e9, 100e9, 1e12, 8e12}[rng.IntN(4)]
	}
	// Caps: one regime per script.
	regime := rng.IntN(6)
	equal := []float64{fair * 0.5, fair * 2, fair * (0.3 + rng.Float64())}
	capOf := func() float64 {
		if round {
			return s.bps / float64([]int{1, 2, 3, 4, 8, 10, 16, 100}[rng.IntN(8)])
		}
		switch regime {
		case 0: // distinct, around the fair share
			return fair * math.Exp((rng.Float64()-0.5)*math.Log(100))
		case 1: // a few equal caps
			return equal[rng.IntN(len(equal))]
		case 2: // StartGM's split: a path cap in proportion to a hit fraction
			full := fair * (1 + 4*rng.Float64())
			if rng.IntN(3) == 0 {
				return full
			}
			return full * float64(1+rng.IntN(63)) / 64
		case 3: // every cap above the fair share
			return s.bps * (0.5 + rng.Float64())
		case 4: // uncontended: the caps sum to less than the total
			return s.bps / float64(n) * (0.2 + 0.7*rng.Float64())
		default: // all of the above
			switch rng.IntN(3) {
			case 0:
				return equal[rng.IntN(len(equal))]
			case 1:
				return s.bps * rng.Float64()
			}
			return fair * math.Exp((rng.Float64()-0.5)*math.Log(1e4))
		}
	}
	sizeOf := func() int64 {
		if round {
			return 1000 * (1 + rng.Int64N(64))
		}
		switch rng.IntN(20) {
		case 0:
			return 0
		case 1:
			return 1 + rng.Int64N(16)
		}
		return int64(math.Exp(rng.Float64() * math.Log(4e6)))
	}
	// The mean transfer time sets the window the starts are spread over:
	// a narrow window gives n concurrent flows.
	window := float64(64<<10) / (s.bps / 1e12) * (0.1 + 3*rng.Float64())
	for range n {
		at := sim.Time(rng.Float64() * window)
		if round {
			at -= at % 1000
		}
		s.flows = append(s.flows, scriptFlow{at: at, size: sizeOf(), capBps: capOf()})
	}
	// Re-entrant starts: children started from a parent's FlowDone (some
	// of zero bytes: done inside Start, itself inside a FlowDone).
	if rng.IntN(2) == 0 {
		for k := 0; k < n; k++ {
			if rng.IntN(3) != 0 {
				continue
			}
			for range 1 + rng.IntN(2) {
				if len(s.flows) >= 4*n {
					break
				}
				s.flows[k].children = append(s.flows[k].children, len(s.flows))
				s.flows = append(s.flows, scriptFlow{at: -1, size: sizeOf(), capBps: capOf()})
			}
		}
	}
	// Reserved bandwidth, set at fixed times and from callbacks.
	for range rng.IntN(4) {
		s.reserves = append(s.reserves, scriptReserve{at: sim.Time(rng.Float64() * window * 2), bps: s.bps * rng.Float64() * 1.1})
	}
	if rng.IntN(3) == 0 {
		for range 3 {
			k := rng.IntN(len(s.flows))
			s.flows[k].reserves, s.flows[k].reserve = true, s.bps*rng.Float64()*0.8
		}
	}
	return s
}

// chainScript: a few flows each followed by a long chain of successors
// started from its FlowDone (~1e9 bytes through each chain, 1e8–1e11 ps),
// so the clocks of long-lived groups grow and are rebased many times.
// Each chain keeps one cap, capped (caps summing to under a third of the
// channel) or far above the fair share, so the rates never change while
// the chains run: chains whose rates depend on each other's finish times
// are chaotic (a 1 ps difference doubles every few generations), and
// would measure that, not the channels' agreement.
func chainScript(rng *rand.Rand) *script {
	s := &script{bps: math.Exp(rng.Float64()*math.Log(100)) * 10e9}
	n := 2 + rng.IntN(8)
	low, high := s.bps/float64(n)*0.3, s.bps
	caps := []float64{low, low * 0.7, high, high * 2}
	for range n {
		s.flows = append(s.flows, scriptFlow{at: 0, size: 1 << 20, capBps: caps[rng.IntN(len(caps))]})
	}
	for k := range n {
		last := k
		for range 1000 {
			s.flows[last].children = append(s.flows[last].children, len(s.flows))
			last = len(s.flows)
			s.flows = append(s.flows, scriptFlow{at: -1, size: 1<<19 + rng.Int64N(1<<21), capBps: s.flows[k].capBps})
		}
	}
	return s
}

// TestChannelMatchesReference drives Channel and the former per-flow
// implementation with the same random scripts (seeded: 400 scripts, 1 to
// 600 flows at once, ~1e5 flows) and requires every flow to finish at the
// same time within 1 ps + 1e-9·t, the FlowDone calls in the same order,
// the same bandwidth observations (times within 1 ps, values within 1e-9
// of the channel's bandwidth), Bytes within 1e-9 relative and the mean
// utilisation within 1e-9 relative plus what the finishes that differ can
// move it.
//
// The two keep the bytes left differently (a decrement per event against
// a clock per cap group), so their float rounding differs; it shows where
// a finish time is an integer in exact arithmetic (round sizes and
// bandwidths), which either can round up to the next ps, its float error
// falling above the integer. 36 of the ~1e5 finishes differ, all by 1 ps,
// 34 of them in the scripts of round numbers (31 the reference's later);
// the chains' long-lived groups (their clocks rebased thousands of times)
// agree exactly.
func TestChannelMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	scripts, flows, peak, slipped, later := 0, 0, 0, 0, 0
	var worst float64
	for i := range 400 {
		var s *script
		switch {
		case i%40 == 39:
			s = chainScript(rng)
		default:
			s = randomScript(rng, []int{4, 32, 600}[i%3], i%4 == 3)
		}
		ref, refBytes := runScript(s, true)
		got, gotBytes := runScript(s, false)
		scripts++
		flows += len(s.flows)
		peak = max(peak, got.peak)
		end, slack := sim.Time(1), 0.0
		for k := range s.flows {
			a, b := ref.at[k], got.at[k]
			if (a < 0) != (b < 0) {
				t.Fatalf("script %d flow %d: reference done at %d, channel at %d", i, k, a, b)
			}
			d := math.Abs(float64(a - b))
			if d > 1+1e-9*float64(a) {
				t.Fatalf("script %d flow %d (%d bytes, cap %.4g of %.4g B/s): done at %d, reference %d", i, k, s.flows[k].size, s.flows[k].capBps, s.bps, b, a)
			}
			if d > 0 {
				slipped++
				slack += d
			}
			if b > a {
				later++
			}
			worst = max(worst, d)
			end = max(end, a, b)
		}
		if fmt.Sprint(ref.order) != fmt.Sprint(got.order) {
			t.Fatalf("script %d: FlowDone order differs", i)
		}
		// The same reschedules, telling the same bandwidth in use (within
		// 1e-9 of the channel's).
		if len(ref.seen) != len(got.seen) {
			t.Fatalf("script %d: %d bandwidth observations, reference %d", i, len(got.seen), len(ref.seen))
		}
		for j, o := range got.seen {
			if r := ref.seen[j]; math.Abs(float64(o.at-r.at)) > 1 || math.Abs(o.bps-r.bps) > 1e-9*s.bps {
				t.Fatalf("script %d: observed %v, reference %v", i, o, r)
			}
		}
		if !near(refBytes, gotBytes, 1e-9) {
			t.Fatalf("script %d: Bytes %v, reference %v", i, gotBytes, refBytes)
		}
		// The bandwidth in use changes at finishes (and at the starts and
		// reservations their callbacks make), by at most the whole
		// channel: a finish that slipped by d ps moves the busy integral
		// by at most total·d.
		if u, v := got.ch.MeanUtilisation(end), ref.ch.MeanUtilisation(end); math.Abs(u-v) > 1e-9*v+slack/float64(end) {
			t.Fatalf("script %d: utilisation %v, reference %v", i, u, v)
		}
	}
	t.Logf("%d scripts, %d flows (up to %d at once): %d finish times differ (%d later than the reference's), by at most %v ps", scripts, flows, peak, slipped, later, worst)
}

func near(a, b, rel float64) bool {
	return math.Abs(a-b) <= rel*max(math.Abs(a), math.Abs(b))
}

// A transfer too slow to simulate stops the run with sim.ErrTimeOverflow
// (as the former implementation did).
func TestChannelOverflow(t *testing.T) {
	for _, ref := range []bool{true, false} {
		e := sim.NewEngine()
		var ch channelAPI = NewChannel(e, 1e-3) // 1 byte per 1000 s
		if ref {
			ch = newRefChannel(e, 1e-3)
		}
		rec := &doneRec{at: map[int64]sim.Time{}}
		ch.Start(1<<40, 1e12, rec, 1)
		if err := e.Run(); !errors.Is(err, sim.ErrTimeOverflow) {
			t.Errorf("reference %v: run ended with %v, want ErrTimeOverflow", ref, err)
		}
	}
}

// churn keeps n flows in flight on a channel: each finished flow starts
// the next (a new size; a new cap unless equal).
type churn struct {
	eng   *sim.Engine
	ch    channelAPI
	rng   *rand.Rand
	fair  float64
	equal bool
	left  int
	total int
}

func (d *churn) FlowDone(now sim.Time, tag int64) {
	d.total++
	if d.left--; d.left <= 0 {
		d.eng.Stop(nil)
	}
	d.start()
}

func (d *churn) start() {
	if d.equal {
		d.ch.Start(4096+d.rng.Int64N(60<<10), d.fair*1.5, d, 0)
		return
	}
	// Caps from a tenth to ten times the fair share: some flows capped,
	// some at the water level.
	d.ch.Start(4096+d.rng.Int64N(60<<10), d.fair*math.Exp((d.rng.Float64()-0.5)*math.Log(100)), d, 0)
}

// BenchmarkChannel: one op is a flow finishing and the next starting, with
// n flows of distinct caps in flight (as on the B200's HBM channel, whose
// TMA copies' caps are split by their L2 hits), on Channel (new) and the
// former implementation (ref).
//
// BenchmarkChannelEqual: n flows of one cap (a GPU core's execution-unit
// channels: one or two flows; A100's L2: hundreds).
func BenchmarkChannel(b *testing.B)      { benchChannel(b, []int{2, 16, 128, 600}, false) }
func BenchmarkChannelEqual(b *testing.B) { benchChannel(b, []int{1, 2, 128}, true) }

func benchChannel(b *testing.B, ns []int, equal bool) {
	for _, n := range ns {
		for _, impl := range []string{"ref", "new"} {
			b.Run(fmt.Sprintf("n=%d/%s", n, impl), func(b *testing.B) {
				e := sim.NewEngine()
				const bps = 8e12
				d := &churn{eng: e, rng: rand.New(rand.NewPCG(1, uint64(n))), fair: bps / float64(n), equal: equal}
				if impl == "ref" {
					d.ch = newRefChannel(e, bps)
				} else {
					d.ch = NewChannel(e, bps)
				}
				for range n {
					d.start()
				}
				d.left = 10 * n // warm up
				if err := e.Run(); err != nil {
					b.Fatal(err)
				}
				b.ResetTimer()
				d.left = b.N
				if err := e.Run(); err != nil {
					b.Fatal(err)
				}
				if d.ch.Active() != n {
					b.Fatalf("%d flows in flight, want %d", d.ch.Active(), n)
				}
			})
		}
	}
}
