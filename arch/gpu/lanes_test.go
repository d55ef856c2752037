package gpu

import (
	"testing"

	"github.com/davinci-sim/davinci-sim/fp"
	"github.com/davinci-sim/davinci-sim/isa"
	"github.com/davinci-sim/davinci-sim/sim"
)

// A run takes the MMAs behind the front that are issued by now, of the
// front's operation and formats, or the element-wise instructions of any
// kind behind an element-wise front, and stops at the first that is not.
func TestMMARunMembers(t *testing.T) {
	mma := func(in fp.Format) isa.Instr { return MMA(0, 0, 0, 16, 16, 16, in, fp.FP32, false) }
	vec := func(op isa.VecOp) isa.Instr { return Elementwise(op, 0, 0, 0, 256, fp.FP32) }
	for _, c := range []struct {
		name  string
		queue []isa.Instr
		ready []sim.Time
		want  int
	}{
		{"all issued", []isa.Instr{mma(fp.FP16), mma(fp.FP16), mma(fp.FP16)}, []sim.Time{0, 5, 10}, 3},
		{"not issued yet", []isa.Instr{mma(fp.FP16), mma(fp.FP16), mma(fp.FP16)}, []sim.Time{0, 10, 11}, 2},
		{"another format", []isa.Instr{mma(fp.FP16), mma(fp.BF16), mma(fp.FP16)}, []sim.Time{0, 0, 0}, 1},
		{"a flag between", []isa.Instr{mma(fp.FP16), isa.SetFlag(LaneMatrix, LaneLoad, 0), mma(fp.FP16)}, []sim.Time{0, 0, 0}, 1},
		{"alone", []isa.Instr{mma(fp.FP16)}, []sim.Time{0}, 1},
		{"element-wise of any kind", []isa.Instr{vec(isa.VCast), vec(isa.VMuls), vec(isa.VSub)}, []sim.Time{0, 0, 3}, 3},
		{"element-wise, then an MMA", []isa.Instr{vec(isa.VCast), vec(isa.VSub), mma(fp.FP16)}, []sim.Time{0, 0, 0}, 2},
		{"an MMA, then element-wise", []isa.Instr{mma(fp.FP16), vec(isa.VSub)}, []sim.Time{0, 0}, 1},
	} {
		l := ctaLane{q: make([]isa.Instr, queueDepth), ready: make([]sim.Time, queueDepth), head: queueDepth - 1}
		for i, in := range c.queue {
			l.push(in, c.ready[i])
		}
		if got := l.run(10); got != c.want {
			t.Errorf("%s: a run of %d, want %d", c.name, got, c.want)
		}
	}
}
