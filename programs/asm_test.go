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
