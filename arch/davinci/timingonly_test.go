package davinci_test

import (
	"bytes"
	"testing"

	"github.com/davinci-sim/davinci-sim/arch"
	"github.com/davinci-sim/davinci-sim/arch/archtest"
	"github.com/davinci-sim/davinci-sim/fp"
	"github.com/davinci-sim/davinci-sim/isa"
)

// A TimingOnly instruction is timed as the same instruction without the
// mark but leaves memory as it was in a functional run: a copy GM→UB, a
// vector add on UB, two copies UB→GM of which the marked one writes
// nothing, and a marked vector op whose destination keeps its bytes.
func TestTimingOnlyInstructions(t *testing.T) {
	m := archtest.Machine(t, "ascend-910a")
	src := make([]byte, 256)
	for i := range src {
		src[i] = byte(i + 1)
	}
	prog := func(mark bool) isa.Program {
		var ins []isa.Instr
		add := func(in isa.Instr, timingOnly bool) {
			in.TimingOnly = timingOnly && mark
			ins = append(ins, in)
		}
		gm := func(a int64) isa.Operand { return isa.Operand{Buf: isa.GM, Addr: a} }
		ub := func(a int64) isa.Operand { return isa.Operand{Buf: isa.UB, Addr: a} }
		add(isa.Alloc(isa.UB, 0, 1024, "u"), false)
		add(isa.Copy2D(isa.MTE2, ub(0), gm(0), 1, 256, 256, 256), false)
		add(isa.SetFlag(isa.MTE2, isa.V, 0), false)
		add(isa.WaitFlag(isa.MTE2, isa.V, 0), false)
		// ub[256:512] = ub[0:256] + ub[0:256] (INT32), then a marked add
		// into ub[0:256] that must leave it as loaded.
		add(isa.Vector(isa.VAdd, 256, 0, 0, fp.INT32, fp.INT32, 0, fp.RNE, false, 1, 0), false)
		add(isa.Vector(isa.VAdd, 0, 256, 256, fp.INT32, fp.INT32, 0, fp.RNE, false, 1, 0), true)
		add(isa.SetFlag(isa.V, isa.MTE3, 0), false)
		add(isa.WaitFlag(isa.V, isa.MTE3, 0), false)
		add(isa.Copy2D(isa.MTE3, gm(4096), ub(0), 1, 512, 512, 512), true)
		add(isa.Copy2D(isa.MTE3, gm(8192), ub(0), 1, 512, 512, 512), false)
		add(isa.Barrier(isa.ALL), false)
		add(isa.FreeIn(isa.UB, "u"), false)
		return isa.Program{Name: "timing-only", Cores: []isa.Stream{isa.Slice(ins)}}
	}
	var times [2]int64
	for i, mark := range []bool{false, true} {
		chip, err := arch.NewChip(m, arch.Options{Mode: arch.Functional})
		if err != nil {
			t.Fatal(err)
		}
		if err := chip.GM().Write(0, src); err != nil {
			t.Fatal(err)
		}
		st, err := chip.Run(prog(mark))
		if err != nil {
			t.Fatal(err)
		}
		times[i] = int64(st.Time)
		got := make([]byte, 512)
		if err := chip.GM().Read(8192, got); err != nil {
			t.Fatal(err)
		}
		if mark && !bytes.Equal(got[:256], src) {
			t.Errorf("the marked vector add changed its destination: %v", got[:16])
		}
		if !mark && bytes.Equal(got[:256], src) {
			t.Errorf("the unmarked vector add left its destination")
		}
		if err := chip.GM().Read(4096, got); err != nil {
			t.Fatal(err)
		}
		if mark && !bytes.Equal(got, make([]byte, 512)) {
			t.Errorf("the marked copy wrote GM: %v", got[:16])
		}
		if !mark && bytes.Equal(got, make([]byte, 512)) {
			t.Errorf("the unmarked copy wrote nothing")
		}
	}
	if times[0] != times[1] {
		t.Errorf("run times %d ps unmarked, %d ps marked: timing must not depend on the mark", times[0], times[1])
	}
}
