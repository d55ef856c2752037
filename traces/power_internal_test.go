package traces

import (
	"math"
	"testing"

	"github.com/davinci-sim/davinci-sim/sim"
)

// TestPowerBins: the width doubles until the run fits MaxPowerBins, energy
// moves only by merging whole bins, the last bin is priced over its own
// (partial) length, and the counter ends with 0 at the end of the run.
func TestPowerBins(t *testing.T) {
	b := powerBins{on: true, static: 10, from: 2 * sim.Microsecond}
	b.add(2*sim.Microsecond, 1e6)                        // 1 µJ in the first bin
	b.add(2*sim.Microsecond+5000*sim.Microsecond, 3e6)   // forces 1 → 4 µs bins
	b.add(2*sim.Microsecond+5000*sim.Microsecond+1, 1e6) // same bin
	if b.width != 4*sim.Microsecond {
		t.Fatalf("width %v after 5 ms, want 4µs", b.width)
	}
	end := 2*sim.Microsecond + 5002*sim.Microsecond // the last bin is 2 µs long
	ss := b.samples(end)
	if n := len(ss); n != 1251+1 || ss[n-1] != (Sample{T: end, Value: 0}) || ss[0].T != b.from {
		t.Fatalf("%d samples from %v to %v", n, ss[0], ss[n-1])
	}
	if got, want := ss[0].Value, 10+1e-6/4e-6; math.Abs(got-want) > 1e-9 {
		t.Errorf("first bin %g W, want %g", got, want)
	}
	if got, want := ss[1250].Value, 10+4e-6/2e-6; math.Abs(got-want) > 1e-9 {
		t.Errorf("last (2 µs) bin %g W, want %g", got, want)
	}
	if got, want := PowerEnergy(ss), 10*5002e-6+5e-6; math.Abs(got-want) > 1e-12*want {
		t.Errorf("integral %g J, want %g", got, want)
	}
	// A longer end than the events reach coarsens again at the end.
	long := b.from + 100*sim.Millisecond
	ss = b.samples(long)
	if len(ss)-1 > MaxPowerBins || b.width != 64*sim.Microsecond {
		t.Errorf("%d bins of %v for 100 ms", len(ss)-1, b.width)
	}
	if got, want := PowerEnergy(ss), 10*0.1+5e-6; math.Abs(got-want) > 1e-12 {
		t.Errorf("integral %g J, want %g", got, want)
	}
	if (&powerBins{}).samples(long) != nil {
		t.Error("a counter without a power model")
	}
}

// TestPowerBinsAtTheEndOfTime: a run ending within a bin of the time
// range's end (MaxTime) gets its counter — the bins' count overflowed
// (span + width − 1) and the slice was made with a negative length: a
// panic after a finished run traced with --trace or --view.
func TestPowerBinsAtTheEndOfTime(t *testing.T) {
	for _, end := range []sim.Time{sim.MaxTime, sim.MaxTime - 1, sim.MaxTime - sim.Second} {
		b := powerBins{on: true, static: 10}
		b.add(end/2, 1e6)
		ss := b.samples(end)
		if n := len(ss); n < 2 || n-1 > MaxPowerBins || ss[n-1] != (Sample{T: end, Value: 0}) {
			t.Fatalf("end %v: %d samples", end, n)
		}
		for i := 1; i < len(ss); i++ {
			if ss[i].T <= ss[i-1].T || math.IsNaN(ss[i-1].Value) || ss[i-1].Value < 10 {
				t.Fatalf("end %v: sample %d %+v after %+v", end, i, ss[i], ss[i-1])
			}
		}
		if got, want := PowerEnergy(ss), 10*end.Seconds()+1e-6; math.Abs(got-want) > 1e-9*want {
			t.Errorf("end %v: integral %g J, want %g", end, got, want)
		}
	}
}
