package programs

import (
	"testing"

	"github.com/davinci-sim/davinci-sim/arch"
	"github.com/davinci-sim/davinci-sim/arch/gpu"
	"github.com/davinci-sim/davinci-sim/isa"
	"github.com/davinci-sim/davinci-sim/machines"
)

// A GPU block starts with zeroed registers even where the block before it
// in its slot wrote them: a slot clears only what its blocks reached
// (arch/gpu's zeroed, which thin GEMMs of tens of thousands of tiny blocks
// made worth not clearing a whole register file and tensor memory for).
// Block 0 loads a pattern into registers and stores it; the blocks after
// it, in the same slot (one SM, one block at a time), store the same
// registers without writing them: zeros.
func TestThinSlotStartsZeroed(t *testing.T) {
	m, err := machines.Load("a100", mustSets(t, "machine.cores=1"))
	if err != nil {
		t.Fatal(err)
	}
	tg, ok := newGPUTarget(m)
	if !ok {
		t.Fatal("a100 is not a GPU target")
	}
	chip, err := arch.NewChip(m, arch.Options{Mode: arch.Functional})
	if err != nil {
		t.Fatal(err)
	}
	const (
		bytes  = 256
		rf     = 4096 // the registers block 0 writes, the others read
		src    = 0
		out    = 1 << 16
		blocks = 4
	)
	pattern := make([]byte, bytes)
	for i := range pattern {
		pattern[i] = byte(i%251 + 1)
	}
	if err := chip.GM().Write(src, pattern); err != nil {
		t.Fatal(err)
	}
	cta := func(i int) isa.Stream {
		return func(yield func(isa.Instr) bool) {
			e := newEmitter(yield, m)
			if i == 0 {
				e.emit(gpu.CopyToRegisters(rf, src, 1, bytes, bytes, bytes))
				e.setFlag(gpu.LaneCopy, gpu.LaneStore, 0)
				e.waitFlag(gpu.LaneCopy, gpu.LaneStore, 0)
			}
			e.emit(isa.Copy2D(gpu.LaneStore, isa.Operand{Buf: gpu.BufGM, Addr: out + int64(i)*bytes},
				isa.Operand{Buf: gpu.BufRegs, Addr: rf}, 1, bytes, bytes, bytes))
		}
	}
	// Every warp of the SM to a block: one block resident at a time, each
	// in the slot the one before it left.
	warps := int(m.NvidiaSM().MaxWarps)
	g := isa.Grid{Name: "zero", CTAs: blocks, CTA: cta,
		Resources: isa.Resources{Registers: 32 * tg.threads(warps), Warps: warps}}
	if _, err := chip.Run(isa.Program{Name: "zero", Generated: true, Grids: []isa.Grid{g}}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < blocks; i++ {
		got := make([]byte, bytes)
		if err := chip.GM().Read(out+int64(i)*bytes, got); err != nil {
			t.Fatal(err)
		}
		for x, v := range got {
			want := byte(0)
			if i == 0 {
				want = pattern[x]
			}
			if v != want {
				t.Fatalf("block %d stored byte %d = %d, want %d (a block must start with zeroed registers)", i, x, v, want)
			}
		}
	}
}
