package mem

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/davinci-sim/davinci-sim/sim"
)

func TestGMSparseReadWrite(t *testing.T) {
	g := NewGM(1 << 30)
	data := make([]byte, 3*PageSize+123)
	for i := range data {
		data[i] = byte(i * 7)
	}
	addr := int64(5*PageSize - 17) // straddles pages
	if err := g.Write(addr, data); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, len(data))
	if err := g.Read(addr, got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, data) {
		t.Fatal("read back differs")
	}
	zero := make([]byte, 100)
	zero[0] = 1
	if err := g.Read(100*PageSize, zero); err != nil || zero[0] != 0 {
		t.Fatalf("untouched memory must read as zero: %v %v", zero[0], err)
	}
	if err := g.Write(1<<30-4, make([]byte, 8)); err == nil {
		t.Fatal("write past capacity must fail")
	}
	if g.Touched() != 5*PageSize {
		t.Fatalf("touched %d, want %d", g.Touched(), 5*PageSize)
	}
	f := []float32{1.5, -2, 3.25}
	if err := g.WriteFloat32s(64, f); err != nil {
		t.Fatal(err)
	}
	back := make([]float32, 3)
	if err := g.ReadFloat32s(64, back); err != nil || back[2] != 3.25 || back[1] != -2 {
		t.Fatalf("float round trip: %v %v", back, err)
	}
}

func TestOccupancy(t *testing.T) {
	o := NewOccupancy(1024)
	if err := o.Alloc(0, "a", 0, 512); err != nil {
		t.Fatal(err)
	}
	if err := o.Alloc(100, "b", 256, 256); err == nil {
		t.Fatal("overlap must fail")
	}
	if err := o.Alloc(100, "b", 512, 512); err != nil {
		t.Fatal(err)
	}
	if err := o.Alloc(100, "c", 1000, 64); err == nil {
		t.Fatal("out of capacity must fail")
	}
	if err := o.Free(300, "a", 0); err != nil {
		t.Fatal(err)
	}
	if err := o.Free(300, "a", 0); err == nil {
		t.Fatal("double free must fail")
	}
	if o.Peak() != 1024 || o.Bytes() != 512 {
		t.Fatalf("peak %d bytes %d", o.Peak(), o.Bytes())
	}
	// 512 over [0,100), 1024 over [100,300), 512 over [300,400): mean = (51200+204800+51200)/400
	if m := o.Mean(400); m != 768 {
		t.Fatalf("mean %v, want 768", m)
	}
}

type doneRec struct{ at map[int64]sim.Time }

func (d *doneRec) FlowDone(now sim.Time, tag int64) { d.at[tag] = now }

func TestChannelSharesBandwidth(t *testing.T) {
	e := sim.NewEngine()
	c := NewChannel(e, 100e9) // 100 GB/s = 0.1 byte/ps
	rec := &doneRec{at: map[int64]sim.Time{}}
	// Two flows capped at 80 GB/s each: alone each would take 1e6/0.08 ps; together they share 50/50.
	c.Start(1_000_000, 80e9, rec, 1)
	c.Start(1_000_000, 80e9, rec, 2)
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	want := sim.Time(20_000_000) // 2e6 bytes at 0.1 B/ps
	for tag, at := range rec.at {
		if at < want-1 || at > want+1 {
			t.Errorf("flow %d done at %d, want %d", tag, at, want)
		}
	}
	// A capped flow alone is limited by its cap.
	e2 := sim.NewEngine()
	c2 := NewChannel(e2, 100e9)
	rec2 := &doneRec{at: map[int64]sim.Time{}}
	c2.Start(1_000_000, 25e9, rec2, 7)
	if err := e2.Run(); err != nil {
		t.Fatal(err)
	}
	if got := rec2.at[7]; got != 40_000_000 {
		t.Errorf("capped flow done at %d, want 40000000", got)
	}
	if u := c2.MeanUtilisation(40_000_000); u < 0.2499 || u > 0.2501 {
		t.Errorf("utilisation %v, want 0.25", u)
	}
}

// A flow started while another is in flight slows it down: the first
// finish moves later, and the channel's wake-up with it — no event runs
// at the time the first flow would have finished alone.
func TestChannelStartPostponesWakeUp(t *testing.T) {
	e := sim.NewEngine()
	c := NewChannel(e, 100e9) // 0.1 byte/ps
	rec := &doneRec{at: map[int64]sim.Time{}}
	c.Start(1_000_000, 200e9, rec, 1) // alone: done at 10 µs
	e.At(5_000_000, 0, sim.HandlerFunc(func(sim.Time, int64) {
		c.Start(1_000_000, 200e9, rec, 2) // half of flow 1 left, at half the rate
	}), 0)
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	if a, b := rec.at[1], rec.at[2]; a < 14_999_999 || a > 15_000_001 || b < 19_999_999 || b > 20_000_001 {
		t.Errorf("flows done at %d and %d, want 15 and 20 µs", a, b)
	}
	if n := e.Events(); n != 3 {
		t.Errorf("%d events, want 3: the start and the two finishes", n)
	}
}

func TestChannelWaterFilling(t *testing.T) {
	// Total 100; caps 10 and 200: the small flow gets 10, the big one 90.
	e := sim.NewEngine()
	c := NewChannel(e, 100e9)
	rec := &doneRec{at: map[int64]sim.Time{}}
	c.Start(100_000, 10e9, rec, 1)  // alone would take 10 µs at 10 GB/s
	c.Start(900_000, 200e9, rec, 2) // 90 GB/s while sharing: 10 µs
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	for tag := int64(1); tag <= 2; tag++ {
		if at := rec.at[tag]; at < 9_999_999 || at > 10_000_001 {
			t.Errorf("flow %d done at %d, want 10000000", tag, at)
		}
	}
}

// Reserved bandwidth (another model's DMA) slows the flows from when it
// is set: 1e6 bytes at 100 GB/s, 40 GB/s of it reserved from 5 µs on,
// take 5 µs for the first 5e5 bytes and 5e5 / 60 GB/s after.
func TestChannelReserved(t *testing.T) {
	e := sim.NewEngine()
	c := NewChannel(e, 100e9)
	rec := &doneRec{at: map[int64]sim.Time{}}
	c.Start(1_000_000, 200e9, rec, 1)
	e.At(5_000_000, 0, sim.HandlerFunc(func(sim.Time, int64) { c.SetReserved(40e9) }), 0)
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	want := sim.Time(5_000_000) + sim.CeilPS(500_000/0.06)
	if got := rec.at[1]; got < want-1 || got > want+1 {
		t.Errorf("flow done at %d, want %d", got, want)
	}
	c.SetReserved(1e15) // more than the channel: capped at 99 %
	if c.reserved != 0.99*c.total {
		t.Errorf("reserved %v of %v", c.reserved, c.total)
	}
}

// A transfer that a named channel's bandwidth makes end beyond the time a
// run can reach stops the run with an error naming the channel (wrapping
// sim.ErrTimeOverflow); a flow held to its own tiny cap, or an unnamed
// channel, keeps the engine's error, which names no key.
func TestChannelTooSlowNamesIt(t *testing.T) {
	for _, c := range []struct {
		name     string
		total    float64
		cap      float64
		wantName bool
	}{
		{"slow channel", 1e-30, 1e12, true},
		{"slow cap", 1e12, 1e-30, false},
		{"unnamed", 1e-30, 1e12, false},
	} {
		e := sim.NewEngine()
		ch := NewChannel(e, c.total)
		if c.name != "unnamed" {
			ch.SetName(`machine m: key "gm.bandwidth" (1e-30B/s)`)
		}
		ch.Start(64, c.cap, &doneRec{at: map[int64]sim.Time{}}, 1)
		err := e.Run()
		if !errors.Is(err, sim.ErrTimeOverflow) {
			t.Fatalf("%s: error %v, want a time overflow", c.name, err)
		}
		if got := strings.HasPrefix(err.Error(), `machine m: key "gm.bandwidth" (1e-30B/s): too slow: `); got != c.wantName {
			t.Errorf("%s: error %q: naming the channel %v, want %v", c.name, err, got, c.wantName)
		}
	}
}
