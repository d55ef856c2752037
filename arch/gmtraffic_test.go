package arch

import (
	"testing"

	"github.com/davinci-sim/davinci-sim/machines"
	"github.com/davinci-sim/davinci-sim/sim"
)

type noFlow struct{}

func (noFlow) FlowDone(sim.Time, int64) {}

// On the MI300X a read straddling a line the Infinity Cache holds and one
// it does not pays HBM for the second (bytes and latency: the slower
// part's) and the LLC for the first; a read of lines the LLC holds alone
// pays the LLC's latency. (The MI300X kind registers from the external
// tests' imports.)
func TestAMDStartGMSplitsLLCLines(t *testing.T) {
	m, err := machines.Load("mi300x", nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewChip(m, Options{})
	if err != nil {
		t.Skipf("no mi300x core model linked: %v", err)
	}
	if len(c.l2s) < 2 || c.llc == nil {
		t.Fatalf("mi300x: %d L2 partitions, LLC %v", len(c.l2s), c.llc != nil)
	}
	const base, line = 1 << 20, 128
	span := func(addr, n int64) []GMSpan { return []GMSpan{{Addr: addr, Rows: 1, RowBytes: n, Stride: n}} }
	c.StartGM(noFlow{}, 0, 0, true, line, span(base+line, line), 1e12) // line 1: into core 0's L2 and the LLC
	before := c.traffic
	// Core 1 (another XCD's L2): lines 0 (LLC miss) and 1 (LLC hit).
	parts, lat := c.StartGM(noFlow{}, 1, 1, true, line, span(base+line/2, line), 1e12)
	d := c.traffic
	if hbm, llc := d.HBMRead-before.HBMRead, d.LLCRead-before.LLCRead; hbm != line || llc != line || parts != 3 {
		t.Errorf("straddling read: HBM %d, LLC %d bytes in %d parts; want %d, %d in 3 (and the L2's, every byte)", hbm, llc, parts, line, line)
	}
	if want := c.clock.Cycles(int64(m.GM.LatencyCycles)); lat != want {
		t.Errorf("straddling read: latency %v, want HBM's %v", lat, want)
	}
	// Core 2 (a third L2): both lines now in the LLC.
	before = c.traffic
	_, lat = c.StartGM(noFlow{}, 2, 2, true, line, span(base+line/2, line), 1e12)
	if hbm, llc := c.traffic.HBMRead-before.HBMRead, c.traffic.LLCRead-before.LLCRead; hbm != 0 || llc != 2*line {
		t.Errorf("read of LLC lines: HBM %d, LLC %d bytes; want 0, %d", hbm, llc, 2*line)
	}
	if want := c.clock.Cycles(int64(m.LLC.LatencyCycles)); lat != want {
		t.Errorf("read of LLC lines: latency %v, want the LLC's %v", lat, want)
	}
	if c.llc.HitBytes+c.llc.MissBytes != c.l2Bytes()[1] {
		t.Errorf("LLC hit %d + miss %d, want the L2s' misses %d", c.llc.HitBytes, c.llc.MissBytes, c.l2Bytes()[1])
	}
}

// Every byte a read asks for crosses the L2's channel — the bytes it holds
// and those it fetches (from HBM, on HBM's channel too): the L2's
// bandwidth is what it delivers to the SMs, so an L2-bound kernel cannot
// run faster by missing (docs/design-notes.md, "Misses cross the L2").
// Writes go through to HBM alone.
func TestReadMissesCrossTheL2(t *testing.T) {
	m, err := machines.Load("a100", nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewChip(m, Options{})
	if err != nil {
		t.Skipf("no a100 core model linked: %v", err)
	}
	const addr, n = 1 << 20, 4096
	span := []GMSpan{{Addr: addr, Rows: 1, RowBytes: n, Stride: n}}
	flows := func() (l2, hbm int) { return c.l2BWs[0].Active(), c.gmBW.Active() }
	if parts, _ := c.StartGM(noFlow{}, 0, 0, true, n, span, 1e12); parts != 2 {
		t.Errorf("a read the L2 misses: %d parts, want 2 (the L2's channel and HBM's)", parts)
	}
	if l2, hbm := flows(); l2 != 1 || hbm != 1 {
		t.Errorf("a read the L2 misses: %d flows on the L2's channel and %d on HBM's, want 1 and 1", l2, hbm)
	}
	if parts, _ := c.StartGM(noFlow{}, 0, 1, true, n, span, 1e12); parts != 1 {
		t.Errorf("a read the L2 holds: %d parts, want 1 (the L2's channel)", parts)
	}
	if l2, hbm := flows(); l2 != 2 || hbm != 1 {
		t.Errorf("after a read the L2 holds: %d flows on the L2's channel and %d on HBM's, want 2 and 1", l2, hbm)
	}
	if parts, _ := c.StartGM(noFlow{}, 0, 2, false, n, span, 1e12); parts != 1 {
		t.Errorf("a write: %d parts, want 1 (HBM's channel)", parts)
	}
	if l2, hbm := flows(); l2 != 2 || hbm != 2 {
		t.Errorf("after a write: %d flows on the L2's channel and %d on HBM's, want 2 and 2", l2, hbm)
	}
}
