package arch

import (
	"runtime"
	"testing"

	"github.com/davinci-sim/davinci-sim/fp"
	"github.com/davinci-sim/davinci-sim/isa"
)

// loopGrid is a grid of ctas blocks of one class whose blocks run pro,
// then steps k-steps (a marker, body's instructions at addresses of step
// k), then epi, each holding regs registers.
func loopGrid(ctas, steps int, regs int64, pro, epi []isa.Instr, body func(k int) []isa.Instr) isa.Grid {
	stream := func(i int, _ *isa.StepCursor) isa.Stream {
		return func(yield func(isa.Instr) bool) {
			for _, in := range pro {
				if !yield(in) {
					return
				}
			}
			for k := range steps {
				if !yield(isa.Step(k, steps, 1, 1, steps)) {
					return
				}
				for _, in := range body(k) {
					if !yield(in) {
						return
					}
				}
			}
			for _, in := range epi {
				if !yield(in) {
					return
				}
			}
		}
	}
	return isa.Grid{Name: "g", CTAs: ctas, Resources: isa.Resources{Registers: regs, Warps: 4},
		Class: func(int) int { return 0 }, Steps: stream,
		CTA: func(i int) isa.Stream { return stream(i, &isa.StepCursor{}) }}
}

// Grids alike in their main loops (stepsAlike) carry a checked step pace
// from one to the next whatever their prologues, epilogues and registers
// (Ape FP32-F's lh loads the C its hh wrote: more registers, a longer
// prologue); a loop that differs — another instruction a step, as many
// steps at other addresses' strides but another count, other blocks — or
// one without markers does not, nor one with a marker past where the
// streams part.
func TestStepsAlike(t *testing.T) {
	load := func(k int) isa.Instr { return isa.CopyGM2L1(int64(k)*4096, 0, 4096) }
	mma := isa.Mmad(0, 0, 0, 16, 16, 16, fp.FP16, fp.FP32, false)
	body := func(k int) []isa.Instr { return []isa.Instr{load(k), mma} }
	base := loopGrid(8, 16, 1024, []isa.Instr{isa.Scalar(4)}, []isa.Instr{isa.CopyUB2GM(0, 0, 64)}, body)
	for _, tc := range []struct {
		name string
		g    isa.Grid
		want bool
	}{
		{"the same grid at other addresses", loopGrid(8, 16, 1024, []isa.Instr{isa.Scalar(4)}, []isa.Instr{isa.CopyUB2GM(0, 1<<20, 64)},
			func(k int) []isa.Instr { return []isa.Instr{isa.CopyGM2L1(1<<30+int64(k)*4096, 0, 4096), mma} }), true},
		{"another prologue, epilogue and registers", loopGrid(8, 16, 2048, []isa.Instr{isa.Scalar(4), isa.CopyGM2UB(0, 0, 8192)}, nil, body), true},
		{"another instruction a step", loopGrid(8, 16, 1024, nil, nil, func(k int) []isa.Instr { return []isa.Instr{load(k), mma, mma} }), false},
		{"another step count", loopGrid(8, 12, 1024, nil, nil, body), false},
		{"other blocks", loopGrid(16, 16, 1024, nil, nil, body), false},
		{"a marker after the streams differ", loopGrid(8, 16, 1024, nil, []isa.Instr{isa.Scalar(1), isa.Step(16, 16, 1, 1, 16)}, body), false},
	} {
		if got := stepsAlike(&base, &tc.g); got != tc.want {
			t.Errorf("%s: stepsAlike %v, want %v", tc.name, got, tc.want)
		}
	}
	bare := base
	bare.Steps = func(int, *isa.StepCursor) isa.Stream {
		return func(yield func(isa.Instr) bool) { yield(mma) }
	}
	if stepsAlike(&bare, &bare) {
		t.Error("stepsAlike holds for a grid without step markers")
	}
	// A long loop is compared as it streams, not held: 2^16 steps of
	// 232-byte instructions held would be 30 MB (each grid's body fills
	// a buffer of its own, so that the streams allocate nothing either).
	long := func() isa.Grid {
		buf := make([]isa.Instr, 2)
		return loopGrid(1, 1<<16, 1024, nil, nil, func(k int) []isa.Instr {
			buf[0], buf[1] = load(k), mma
			return buf
		})
	}
	la, lb := long(), long()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	same := stepsAlike(&la, &lb)
	runtime.ReadMemStats(&m1)
	if !same {
		t.Error("stepsAlike fails for a long loop alike")
	}
	if n := m1.TotalAlloc - m0.TotalAlloc; n > 1<<20 {
		t.Errorf("stepsAlike allocated %d bytes comparing loops of 2^16 steps", n)
	}
	if regs := loopGrid(8, 16, 2048, nil, nil, body); func() bool { _, ok := launchesAlike(&base, &regs); return ok }() {
		t.Error("launchesAlike holds for grids of other registers")
	}
}

// loopsAlike holds for grids alike but for what follows their main loops'
// last step (the tail skip's own-work case: SGEMM-cube's hh), not for
// another prologue, other registers, or a last step cut short.
func TestLoopsAlike(t *testing.T) {
	load := func(k int) isa.Instr { return isa.CopyGM2L1(int64(k)*4096, 0, 4096) }
	mma := isa.Mmad(0, 0, 0, 16, 16, 16, fp.FP16, fp.FP32, false)
	body := func(k int) []isa.Instr { return []isa.Instr{load(k), mma} }
	pro := []isa.Instr{isa.Scalar(4)}
	base := loopGrid(8, 16, 1024, pro, []isa.Instr{isa.CopyUB2GM(0, 0, 64)}, body)
	for _, tc := range []struct {
		name string
		g    isa.Grid
		want bool
	}{
		{"the same grid at other addresses", loopGrid(8, 16, 1024, pro, []isa.Instr{isa.CopyUB2GM(0, 1<<20, 64)}, body), true},
		{"another epilogue", loopGrid(8, 16, 1024, pro, []isa.Instr{isa.Scalar(9), isa.CopyUB2GM(0, 0, 64)}, body), true},
		{"another prologue", loopGrid(8, 16, 1024, []isa.Instr{isa.Scalar(5)}, nil, body), false},
		{"other registers", loopGrid(8, 16, 2048, pro, nil, body), false},
		{"the last step cut short", loopGrid(8, 16, 1024, pro, nil, func(k int) []isa.Instr {
			if k == 15 {
				return []isa.Instr{load(k)}
			}
			return body(k)
		}), false},
	} {
		if got := loopsAlike(&base, &tc.g); got != tc.want {
			t.Errorf("%s: loopsAlike %v, want %v", tc.name, got, tc.want)
		}
	}
}

// sameCTA compares two CTAs' streams side by side, addresses aside: alike
// at other addresses; not with another instruction, one more or one fewer.
func TestSameCTA(t *testing.T) {
	mma := isa.Mmad(0, 0, 0, 16, 16, 16, fp.FP16, fp.FP32, false)
	grid := func(ctas ...[]isa.Instr) *isa.Grid {
		return &isa.Grid{CTAs: len(ctas), CTA: func(i int) isa.Stream {
			return func(yield func(isa.Instr) bool) {
				for _, in := range ctas[i] {
					if !yield(in) {
						return
					}
				}
			}
		}}
	}
	g := grid([]isa.Instr{isa.CopyGM2L1(0, 0, 64), mma},
		[]isa.Instr{isa.CopyGM2L1(4096, 128, 64), mma},
		[]isa.Instr{isa.CopyGM2L1(0, 0, 64), mma, mma},
		[]isa.Instr{isa.CopyGM2L1(0, 0, 64)},
		[]isa.Instr{isa.CopyGM2L1(0, 0, 128), mma})
	for c, want := range []bool{true, true, false, false, false} {
		if got := sameCTA(g, c, g, 0); got != want {
			t.Errorf("CTA %d against CTA 0: %v, want %v", c, got, want)
		}
		if got := sameCTA(g, 0, g, c); got != want {
			t.Errorf("CTA 0 against CTA %d: %v, want %v", c, got, want)
		}
	}
}
