package programs

import (
	"testing"

	"github.com/davinci-sim/davinci-sim/arch/gpu"
	"github.com/davinci-sim/davinci-sim/isa"
	"github.com/davinci-sim/davinci-sim/machines"
)

// together marks every instruction of a group but the last to start with
// the next (isa.Instr.WithNext), leaves a group of one and the
// instructions around a group unmarked, and emits nothing for an empty
// group.
func TestEmitterTogether(t *testing.T) {
	m, err := machines.Load("a100", nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []isa.Instr
	e := newEmitter(func(in isa.Instr) bool { got = append(got, in); return true }, m)
	cp := func(smem int64) isa.Instr { return gpu.CopyToShared(smem, 0, 1, 16, 16, 16) }
	e.emit(cp(0))
	e.together(func() {
		for i := int64(1); i <= 3; i++ {
			e.emit(cp(i * 16))
		}
	})
	e.together(func() {})
	e.together(func() { e.emit(cp(64)) })
	e.emit(cp(80))
	want := []bool{false, true, true, false, false, false}
	if len(got) != len(want) {
		t.Fatalf("%d instructions emitted, want %d", len(got), len(want))
	}
	for i, in := range got {
		if in.WithNext != want[i] || in.Dst.Addr != int64(i)*16 {
			t.Errorf("instruction %d: WithNext %v at %d, want %v at %d", i, in.WithNext, in.Dst.Addr, want[i], i*16)
		}
	}
}
