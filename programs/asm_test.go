package programs

import (
	"slices"
	"testing"
)

// An asm program's gm tensors land in simulated GM before the run and its
// outputs read GM after it (full numerics): a tensor read back as an
// output is its initial values; timing only, neither is built.
func TestAsmGMTensorsAndOutputs(t *testing.T) {
	src := "kind: asm\ncores: 1\ngm: [{name: x, addr: 4096, shape: [4, 8], init: uniform, low: -1, high: 1, seed: 3}]\n" +
		"outputs: [{name: x, addr: 4096, shape: [4, 8]}]\nasm: |\n  nop\n"
	res, err := Execute(programText(t, src), Options{}, RunHooks{})
	if err != nil {
		t.Fatal(err)
	}
	want := UniformFP32(NewRand(3, 7), 32, -1, 1)
	if len(res.Outputs) != 1 || !slices.Equal(res.Outputs[0].F32, want) {
		t.Fatalf("outputs %+v, want x = %v", res.Outputs, want)
	}
	res, err = Execute(programText(t, src), Options{Numerics: NumericsOff}, RunHooks{})
	if err != nil || len(res.Outputs) != 0 {
		t.Fatalf("timing only: %v, %d outputs", err, len(res.Outputs))
	}
}

// A program's scalar work counts in its time also when nothing follows it:
// scalar cycles=50 alone ran in 1 ps (the core finished without waiting
// for the scalar unit below its 64-slot issue horizon).
func TestAsmTrailingScalarWork(t *testing.T) {
	for _, c := range []struct {
		asm    string
		cycles int64
	}{
		{"scalar cycles=1", 1}, {"scalar cycles=50", 50}, {"scalar cycles=63", 63}, {"scalar cycles=64", 64}, {"scalar cycles=200", 200},
		{"scalar cycles=2\n  scalar cycles=2\n  scalar cycles=2", 6},
	} {
		res, err := Execute(programText(t, "kind: asm\ncores: 1\nnumerics: off\nasm: |\n  "+c.asm+"\n"), Options{}, RunHooks{})
		if err != nil {
			t.Fatal(err)
		}
		if got := res.Report.Time.Cycles; got != c.cycles {
			t.Errorf("%q: %d cycles, want %d", c.asm, got, c.cycles)
		}
	}
}
