package arch

import (
	"slices"
	"testing"

	"github.com/davinci-sim/davinci-sim/isa"
)

// stepReads (what a step skip installs in the LLC) gives each skipped
// step the reads its marker's instructions make, as a stream walked step
// by step from its start finds them — whether it extrapolates the steps
// after its first three periods (reads advancing by the same addresses
// each period, up to the last: a GEMM's tiles along k) or, where they do
// not, generates them all; and it resumes the stream at the skip's first
// step rather than walking it from the start.
func TestStepReads(t *testing.T) {
	const gm = isa.Buffer(1) // the test kind's global memory
	read := func(addr, n int64) isa.Instr {
		return isa.Copy2D(isa.MTE2, isa.Operand{Buf: 2}, isa.Operand{Buf: gm, Addr: addr}, 4, n, 8192, n)
	}
	c := &Chip{kind: &Kind{GMRead: func(in *isa.Instr) (GMSpan, bool) {
		if in.Op == isa.OpCopy && in.Src.Buf == gm {
			return GMSpan{Addr: in.Src.Addr, Rows: in.NBurst, RowBytes: in.BurstLen, Stride: in.SrcStride}, true
		}
		return GMSpan{}, false
	}}}
	const steps, period = 40, 2
	for _, tc := range []struct {
		name string
		body func(k int) []isa.Instr // the instructions of step k after its marker
	}{
		{"tiles along k, two stages", func(k int) []isa.Instr {
			// A's tile at 64 bytes a step, B's 4096, a stage buffer each
			// period: the reads of a step differ by step parity.
			return []isa.Instr{read(int64(k)*64, 64), read(1<<20+int64(k)*4096, 128+int64(k%2)*64), isa.Copy(isa.MTE1, isa.Operand{Buf: 3}, isa.Operand{Buf: 2}, 64)}
		}},
		{"not affine in k", func(k int) []isa.Instr {
			return []isa.Instr{read(int64(k*k)*64, 64)}
		}},
		{"affine, then another panel", func(k int) []isa.Instr {
			// The first three periods advance alike, the later steps
			// read elsewhere: the last period, generated, tells (two
			// reads a step, the first of them off: a build that indexed
			// the last period's reads past the first mismatch panicked
			// in arch/gpu's step-skip tests).
			if k > 30 {
				return []isa.Instr{read(1<<24+int64(k)*64, 64), read(1<<22+int64(k)*4096, 128)}
			}
			return []isa.Instr{read(int64(k)*64, 64), read(1<<22+int64(k)*4096, 128)}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resumed := 0 // markers the stream emitted before the skip's first step
			stream := func(i int, cur *isa.StepCursor) isa.Stream {
				return func(yield func(isa.Instr) bool) {
					if !yield(read(1<<30, 8)) { // a prologue read: not a step's
						return
					}
					for k := 0; k < 64; k++ {
						if cur != nil {
							if asked := cur.Take(); asked > k {
								k = asked
							}
						}
						if !yield(isa.Step(k, 64, period, 1, 60)) {
							return
						}
						if cur != nil && k < 10 {
							resumed++
						}
						for _, in := range tc.body(k) {
							if !yield(in) {
								return
							}
						}
					}
				}
			}
			g := &isa.Grid{Name: "g", CTAs: 1, Steps: stream}
			// What each step reads, walking the stream from its start.
			want := make([][]GMSpan, steps)
			k := -1
			for in := range stream(0, nil) {
				if in.Op == isa.OpStep {
					k = in.M
					continue
				}
				if sp, ok := c.kind.GMRead(&in); ok && k >= 10 && k < 10+steps {
					want[k-10] = append(want[k-10], sp)
				}
			}
			resumed = 0
			r := c.stepReads(g, 0, 10, steps, period)
			if resumed != 0 {
				t.Errorf("the stream was walked through %d steps before the skip's first: not resumed there", resumed)
			}
			for k := range steps {
				var got []GMSpan
				r.each(k, func(sp GMSpan) { got = append(got, sp) })
				if !slices.Equal(got, want[k]) {
					t.Fatalf("step %d: reads %+v, want %+v", 10+k, got, want[k])
				}
			}
		})
	}
}
