package machines

import (
	"slices"
	"testing"

	"github.com/davinci-sim/davinci-sim/fp"
)

// An override sets a key where it is the key, a section or list holding
// it, or a key under it (the key a section), in any case; not a key that
// merely starts with the same letters.
func TestOverrideCovers(t *testing.T) {
	for _, c := range []struct {
		set, path string
		want      bool
	}{
		{"machine.core.tmem", "machine.core.tmem", true},
		{"Machine.Core.TMEM", "machine.core.tmem", true},
		{"machine.core.tensor", "machine.core.tensor.shapes.fp16", true},
		{"machine.core.tensor.shapes.fp16", "machine.core.tensor", true},
		{"scheme.pieces", "scheme.pieces[0].format", true},
		{"scheme.pieces[0].format", "scheme.pieces", true},
		{"machine.core.buffers.L0", "machine.core.buffers.L0A", false},
		{"machine.core.buffers.L0A", "machine.core.buffers.L0", false},
		{"machine.core.tmem", "machine.core.smem", false},
	} {
		if got := Covers(c.set, c.path); got != c.want {
			t.Errorf("Covers(%q, %q) = %v, want %v", c.set, c.path, got, c.want)
		}
	}
	os := []Override{{"machine.core.tensor.shapes.fp16", "m3n5k7"}, {"machine.gm.bandwidth", "1TB/s"}, {"MACHINE.CORE.TENSOR", "{}"}}
	if got := OverridesOf(os, "machine.core.tensor.shapes.fp16"); !slices.Equal(got, []Override{os[0], os[2]}) {
		t.Errorf("OverridesOf = %v, want the first and the last, in order", got)
	}
	if got := OverridesOf(os, "machine.cores"); len(got) != 0 {
		t.Errorf("OverridesOf(machine.cores) = %v, want none", got)
	}
	for _, c := range []struct{ s, prefix, rest string }{{"Machine.core", "machine.", "core"}, {"machine.", "machine.", ""}, {"program.m", "machine.", "program.m"}, {"mach", "machine.", "mach"}} {
		if rest, ok := CutPrefixFold(c.s, c.prefix); rest != c.rest || ok != (rest != c.s) {
			t.Errorf("CutPrefixFold(%q, %q) = %q, %v", c.s, c.prefix, rest, ok)
		}
	}
}

// A constraint from an amd-cu machine's MFMA instruction comes from its
// core.arch too: the instruction's shape is the architecture's.
func TestInstructionArchKey(t *testing.T) {
	for key, want := range map[string]string{
		"machine.core.mfma.instructions.fp16": "machine.core.arch",
		"Machine.Core.MFMA.Instructions.XF32": "machine.core.arch",
		"machine.core.mfma":                   "machine.core.arch",
		"machine.core.mfma.latency_cycles":    "",
		"machine.core.tensor.shapes.fp16":     "",
		"machine.core.arch":                   "",
		"program.tiling.bk":                   "",
	} {
		if got := InstructionArchKey(key); got != want {
			t.Errorf("InstructionArchKey(%q) = %q, want %q", key, got, want)
		}
	}
	for f, want := range map[fp.Format]string{fp.FP16: "core.mfma.instructions.fp16", fp.TF32: "core.mfma.instructions.xf32", fp.E5M2: "core.mfma.instructions.fp8", fp.FP64: "core.mfma.instructions.fp64"} {
		if got, ok := InstructionKey(f); got != want || !ok {
			t.Errorf("InstructionKey(%v) = %q, %v, want %q", f, got, ok, want)
		}
	}
	if got, ok := InstructionKey(fp.INT32); ok {
		t.Errorf("InstructionKey(INT32) = %q, want none", got)
	}
}
