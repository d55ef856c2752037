package traces

import (
	"github.com/davinci-sim/davinci-sim/arch"
	"github.com/davinci-sim/davinci-sim/sim"
)

// The power counter (machines with a power model): the chip's power in W
// over time, a step counter with one value per time bin — the static power
// plus the dynamic energy of the work counted in the bin (arch.EnergyObserver:
// matrix flops, vector repeats, bytes on each copy path, bytes the L2
// serves and bytes reaching HBM, each at the moment the chip counts it:
// when an instruction starts, when a GM transfer starts) over the bin's
// length, then 0 at the end of the run. Its integral over the run is
// report.json's energy.joules. The bins start at PowerBinMin (1 µs) and
// double until the run has at most MaxPowerBins of them, so the width is
// 2^k µs: 256 µs for LU n = 32768 (0.3 s), 1 µs below 2 ms. An
// instruction lasts well under a microsecond, so putting its whole energy
// in the bin where it starts moves energy by at most a bin.

// PowerBinMin is the narrowest bin of the power counter.
const PowerBinMin = sim.Microsecond

// MaxPowerBins bounds the bins of the power counter: the width doubles
// until the run fits.
const MaxPowerBins = 2048

// powerBins accumulates a run's dynamic energy by time bin, on the engine
// goroutine (the recorder's writer side).
type powerBins struct {
	on     bool    // the chip reported a power model
	static float64 // W
	from   sim.Time
	width  sim.Time
	pJ     []float64
}

// add puts pJ picojoules at time t (≥ from) into its bin, doubling the
// width while t lies beyond MaxPowerBins bins.
func (b *powerBins) add(t sim.Time, pJ float64) {
	if b.width == 0 {
		b.width = PowerBinMin
	}
	t -= b.from
	for t/b.width >= MaxPowerBins {
		b.coarsen()
	}
	i := int(t / b.width)
	for len(b.pJ) <= i {
		b.pJ = append(b.pJ, 0)
	}
	b.pJ[i] += pJ
}

// coarsen doubles the bin width, merging pairs of bins.
func (b *powerBins) coarsen() {
	for i := range (len(b.pJ) + 1) / 2 {
		v := b.pJ[2*i]
		if 2*i+1 < len(b.pJ) {
			v += b.pJ[2*i+1]
		}
		b.pJ[i] = v
	}
	b.pJ = b.pJ[:(len(b.pJ)+1)/2]
	b.width *= 2
}

// samples returns the power counter over [from, to): one sample (W) per
// bin from its start, the last bin ending at to, then 0 at to. Energy
// counted at to or later (none in a run that ends at to) goes into the last
// bin. Nil without a power model or with an empty span.
func (b *powerBins) samples(to sim.Time) []Sample {
	if !b.on || to <= b.from {
		return nil
	}
	if b.width == 0 {
		b.width = PowerBinMin
	}
	span := to - b.from
	// (bins covering the span, rounded up without span + width − 1: a run
	// ending within a bin of the time range's end overflowed it, and
	// made a slice of negative length)
	bins := func() sim.Time {
		n := span / b.width
		if span%b.width != 0 {
			n++
		}
		return n
	}
	for bins() > MaxPowerBins {
		b.coarsen()
	}
	n := int(bins())
	out := make([]Sample, 0, n+1)
	for i := range n {
		t0 := b.from + sim.Time(i)*b.width
		t1 := min(sim.Add(t0, b.width), to)
		var pJ float64
		if i < len(b.pJ) {
			pJ = b.pJ[i]
		}
		if i == n-1 {
			for _, v := range b.pJ[min(n, len(b.pJ)):] {
				pJ += v
			}
		}
		out = append(out, Sample{T: t0, Value: b.static + pJ*1e-12/(t1-t0).Seconds()})
	}
	return append(out, Sample{T: to, Value: 0})
}

// StaticWatts implements arch.EnergyObserver.
func (r *Recorder) StaticWatts(w float64) {
	r.power.on, r.power.static, r.power.from = true, w, r.win.From
}

// Energy implements arch.EnergyObserver: energy outside the window is left
// out (the counter covers the window; every core's, whatever
// Window.Cores keeps — the power is the chip's).
func (r *Recorder) Energy(t sim.Time, pJ float64) {
	if t < r.win.From || (r.win.To > 0 && t >= r.win.To) {
		return
	}
	r.power.add(t, pJ)
}

// PowerEnergy returns the integral of a power counter (W) in joules: each
// value held until the next sample.
func PowerEnergy(ss []Sample) float64 {
	var j float64
	for i := 1; i < len(ss); i++ {
		j += ss[i-1].Value * (ss[i].T - ss[i-1].T).Seconds()
	}
	return j
}

var _ arch.EnergyObserver = (*Recorder)(nil)
