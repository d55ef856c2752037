package cube

import (
	"testing"

	"github.com/davinci-sim/davinci-sim/fp"
)

// A dot product of −0 products and c = −0 is −0 on every preset and format
// (the late-c paths started their blocks from c = +0 and gave +0: h100 and
// b200 FP8, found by a review), and an exact cancellation rounded toward
// −∞ is −0 (IEEE 754 §6.3) in the late-c and truncated late-c kernels too.
func TestZeroSigns(t *testing.T) {
	const negZero32 = 0x80000000
	zeros := map[fp.Format][2]uint32{fp.FP16: {0x8000, 0}, fp.BF16: {0x8000, 0}, fp.E4M3: {0x80, 0}, fp.E5M2: {0x80, 0}, fp.TF32: {0x80000000, 0}, fp.INT8: {}}
	for _, name := range PresetNames() {
		m, err := Preset(name)
		if err != nil {
			t.Fatal(err)
		}
		for f, z := range zeros {
			if f == fp.INT8 {
				continue
			}
			if _, err := m.Params(f); err != nil {
				continue
			}
			for _, k := range []int{1, 3, 16, 40} {
				if m.Kind == Pairwise && k&(k-1) != 0 {
					continue // (the pairwise tree pads to a power of two with +0 products, as the instruction's zero-padded k: +0 then)
				}
				a, b := make([]uint32, k), make([]uint32, k)
				for i := range a {
					a[i], b[i] = z[0], z[1] // −0 · +0 = −0
				}
				for _, out := range []fp.Format{fp.FP32, fp.FP16} {
					r, err := m.Dot(f, a, b, negZero32, out) // (c and the result FP32 patterns)
					if err != nil {
						continue
					}
					if want := uint32(negZero32); r != want {
						t.Errorf("%s %v→%v, k %d: Σ(−0 products) + (−0) = %#x, want −0 (%#x)", name, f, out, k, r, want)
					}
				}
			}
		}
	}
	one, two := uint32(0x3c00), uint32(0xc0000000) // FP16 1, FP32 −2
	for _, m := range []Model{
		{Name: "rd-late", Kind: BlockFMA, RoundFP32: fp.RD, RoundFP16: fp.RD, Formats: map[fp.Format]FormatParams{fp.FP16: {L: 2, F: Exact, LateC: true, CRound: fp.RD}}},
		{Name: "rd-block", Kind: BlockFMA, RoundFP32: fp.RD, RoundFP16: fp.RD, Formats: map[fp.Format]FormatParams{fp.FP16: {L: 2, F: Exact}}},
		{Name: "rd-seq", Kind: Sequential, RoundFP32: fp.RD, RoundFP16: fp.RD, Formats: map[fp.Format]FormatParams{fp.FP16: {L: 1, F: Exact}}},
		{Name: "rd-trunc-late", Kind: TruncatedLateC, RoundFP32: fp.RD, RoundFP16: fp.RD, Formats: map[fp.Format]FormatParams{fp.FP16: {L: 2, F: 24}}},
	} {
		r, err := m.Dot(fp.FP16, []uint32{one, one}, []uint32{one, one}, two, fp.FP32) // 1·1 + 1·1 + (−2)
		if err != nil {
			t.Fatalf("%s: %v", m.Name, err)
		}
		if r != negZero32 {
			t.Errorf("%s: 2 + (−2) rounded toward −∞ = %#x, want −0", m.Name, r)
		}
	}
}
