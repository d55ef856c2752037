package mem

import (
	"fmt"

	"github.com/davinci-sim/davinci-sim/sim"
)

// Region is a live allocation in a buffer.
type Region struct {
	Name   string
	Offset int64
	Size   int64
}

// Occupancy tracks the live regions of one on-chip buffer and the allocated
// bytes over time: current, peak and the time-weighted integral from which
// the mean follows.
type Occupancy struct {
	Capacity int64
	live     []Region
	bytes    int64
	peak     int64
	integral float64 // bytes·ps
	since    sim.Time
}

// NewOccupancy returns a tracker for a buffer of the given capacity.
func NewOccupancy(capacity int64) *Occupancy { return &Occupancy{Capacity: capacity} }

func (o *Occupancy) advance(now sim.Time) {
	if now > o.since {
		o.integral += float64(float64(o.bytes) * float64(now-o.since))
		o.since = now
	}
}

// Alloc marks [off, off+size) live under name at time now. It fails when the
// region leaves the buffer or overlaps a live region.
func (o *Occupancy) Alloc(now sim.Time, name string, off, size int64) error {
	if off < 0 || size <= 0 || off+size > o.Capacity {
		return fmt.Errorf("alloc %q [%d, %d) outside capacity %d bytes", name, off, off+size, o.Capacity)
	}
	for _, r := range o.live {
		if off < r.Offset+r.Size && r.Offset < off+size {
			return fmt.Errorf("alloc %q [%d, %d) overlaps live region %q [%d, %d)", name, off, off+size, r.Name, r.Offset, r.Offset+r.Size)
		}
	}
	o.advance(now)
	o.live = append(o.live, Region{Name: name, Offset: off, Size: size})
	o.bytes += size
	if o.bytes > o.peak {
		o.peak = o.bytes
	}
	return nil
}

// AllocAny marks size bytes live under name at the lowest offset where
// they fit between the live regions (first fit) and returns the offset.
func (o *Occupancy) AllocAny(now sim.Time, name string, size int64) (int64, error) {
	off := int64(0)
	for moved := true; moved; {
		moved = false
		for _, r := range o.live {
			if off < r.Offset+r.Size && r.Offset < off+size {
				off, moved = r.Offset+r.Size, true
			}
		}
	}
	return off, o.Alloc(now, name, off, size)
}

// Free releases the live region with the given name (or, when name is empty,
// the one starting at off) at time now.
func (o *Occupancy) Free(now sim.Time, name string, off int64) error {
	for i, r := range o.live {
		if (name != "" && r.Name == name) || (name == "" && r.Offset == off) {
			o.advance(now)
			o.bytes -= r.Size
			o.live = append(o.live[:i], o.live[i+1:]...)
			return nil
		}
	}
	if name != "" {
		return fmt.Errorf("free of %q: no such live region", name)
	}
	return fmt.Errorf("free at offset %d: no live region starts there", off)
}

// Has reports whether a live region has the given name.
func (o *Occupancy) Has(name string) bool {
	for _, r := range o.live {
		if r.Name == name {
			return true
		}
	}
	return false
}

// Bytes returns the currently allocated bytes.
func (o *Occupancy) Bytes() int64 { return o.bytes }

// Peak returns the largest allocated byte count seen.
func (o *Occupancy) Peak() int64 { return o.peak }

// Mean returns the time-weighted mean of allocated bytes over [0, end].
func (o *Occupancy) Mean(end sim.Time) float64 {
	if end <= 0 {
		return 0
	}
	integral := o.integral
	if end > o.since {
		integral += float64(float64(o.bytes) * float64(end-o.since))
	}
	return integral / float64(end)
}
