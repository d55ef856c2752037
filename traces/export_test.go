package traces

import "github.com/davinci-sim/davinci-sim/arch"

// Batches are the batches a recorder handed over, kept unconsumed so that a
// benchmark can time the engine's share and the consumer's share apart.
type Batches struct {
	bs   []*batch
	live bool // captured by CaptureLive
}

// Capture feeds a recorder for window w through feed and returns its
// batches without consuming them.
func Capture(w Window, feed func(arch.Observer)) *Batches {
	return capture(NewRecorder(w), feed)
}

// CaptureLive is Capture for a recorder set up as a live view without a
// trace records (no flag marks or arrows).
func CaptureLive(w Window, feed func(arch.Observer)) *Batches {
	r := NewRecorder(w)
	r.SetFlagMarks(false)
	out := capture(r, feed)
	out.live = true
	return out
}

func capture(r *Recorder, feed func(arch.Observer)) *Batches {
	var out Batches
	r.sink = func(b *batch) { out.bs = append(out.bs, b) }
	feed(r)
	r.Flush()
	return &out
}

// Apply builds a timeline from the captured batches on the calling
// goroutine (the consumer's work) and returns it.
func (b *Batches) Apply(w Window) *Timeline {
	r := NewRecorder(w)
	if b.live {
		r.SetLimit(DefaultLiveLimit)
	}
	r.mu.Lock()
	for _, x := range b.bs {
		r.apply(x)
		r.enforceLimit()
	}
	r.mu.Unlock()
	return &r.tl
}

// Discard feeds a recorder for window w through feed, recycling its batches
// unconsumed: the engine's share of the recording alone.
func Discard(w Window, feed func(arch.Observer)) {
	r := NewRecorder(w)
	r.sink = func(b *batch) {
		b.reset()
		r.free = append(r.free, b)
	}
	feed(r)
	r.Flush()
}

// LimitFootprint is the footprint the memory limit bounds (the flag marks'
// arrow table is not dropped: live views, which set a limit, record none).
func (t *Timeline) LimitFootprint() int64 { return t.footprint() }

// LaneSlices returns the slices of every lane of tl.
func LaneSlices(tl *Timeline) [][]Slice {
	var out [][]Slice
	for _, c := range tl.Cores {
		for p := range c.Lanes {
			out = append(out, c.Lanes[p].Slices())
		}
	}
	return out
}

// SealAll encodes every whole block of the lanes into buf as the recorder
// seals them and returns buf and the slices encoded (BenchmarkSeal).
func SealAll(lanes [][]Slice, buf []byte) ([]byte, int) {
	n := 0
	for _, ss := range lanes {
		var kt kindTable
		for k := 0; k+blockLen <= len(ss); k += blockLen {
			buf = appendBlock(buf, ss[k:k+blockLen], &kt)
			n += blockLen
		}
	}
	return buf, n
}

// SizeWarningAt is SizeWarning with a limit of limit bytes.
func SizeWarningAt(path string, tl *Timeline, limit int64) string {
	return sizeWarning(path, tl, limit)
}
