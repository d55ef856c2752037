package programs

import (
	"fmt"
	"strings"
	"testing"

	"github.com/davinci-sim/davinci-sim/machines"
)

// The default tiling fits every buffer for both trailing precisions, every
// paper block size and a range of n_fused (−1: the most that fit L1), is
// the largest tile that fits (no bm·bn above it fits), and the lu-gemm
// operator runs with it (full numerics, checked against the golden model,
// for the smallest points; timing only for the rest).
func TestLUDefaultTilingGrid(t *testing.T) {
	m, err := machines.Load("ascend-910a", nil)
	if err != nil {
		t.Fatal(err)
	}
	buf := m.DaVinci().Buffers
	for _, nb := range []int{128, 256, 512} {
		for _, tr := range []string{"fp16", "fp32"} {
			for _, f := range []int{1, 2, 3, 4, 6, 8, -1} {
				name := fmt.Sprintf("nb%d_%s_F%d", nb, tr, f)
				p := LUParams{N: 16 * nb, NB: nb, NFused: f, NFusion: 16, Trailing: tr}
				p.defaults()
				p.chooseTiling(m)
				p.fusedFromL1(m)
				if err := p.validate("t.yaml", m); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				pl, err := newLUPlan("t.yaml", p, m)
				if err != nil {
					t.Fatalf("%s: tiling %+v: %v", name, p.Tiling, err)
				}
				tl := p.Tiling
				for bm := 16; bm <= 256; bm += 16 {
					for bn := 16; bn <= 128; bn += 16 {
						if nb%bm == 0 && nb%bn == 0 && bm*bn > tl.BM*tl.BN && luTileFits(buf, nb, pl.kMax, pl.tb, bm, bn, tl.BK) {
							t.Fatalf("%s: chose %+v but %d×%d fits", name, tl, bm, bn)
						}
					}
				}
				numerics := "off"
				if nb == 128 && p.NFused <= 2 {
					numerics = "full"
				}
				y := fmt.Sprintf("kind: lu-gemm\nm: %d\nnb: %d\nn_fused: %d\ntrailing: %s\nnumerics: %s\n", 2*nb, nb, p.NFused, tr, numerics)
				res, err := runLU(t, y)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if res.Failure != nil {
					t.Fatalf("%s: %v", name, res.Failure)
				}
				if g := res.Report.LUGEMM; numerics == "full" && (g.GoldenMismatches == nil || *g.GoldenMismatches != 0) {
					t.Fatalf("%s: golden mismatches %v", name, g.GoldenMismatches)
				}
				if b := res.Report.LUGEMM.Bound; b == nil || !(b.Efficiency > 0 && b.Efficiency <= 1) {
					t.Fatalf("%s: bound %+v", name, b)
				}
				if tr := res.Stats.Traffic; tr.GM() != res.Stats.GMReadBytes+res.Stats.GMWriteBytes || tr.HBM() > tr.GM() || tr.HBMWrite != tr.GMWrite {
					t.Fatalf("%s: traffic %+v", name, tr)
				}
				t.Logf("%s: n_fused %d tiling %d×%d×%d", name, p.NFused, tl.BM, tl.BN, tl.BK)
			}
		}
	}
}

// Where n_fused makes the default tiling take a smaller bm than one fused
// iteration's, the report says so (and why) — lu-gemm, lu-fused on a
// cluster's ranks —; not where it does not, nor where the file sets
// tiling.bm.
func TestLUTilingNote(t *testing.T) {
	const gemm = "kind: lu-gemm\nm: 1024\nnb: 512\ntrailing: fp32\nnumerics: off\n"
	for _, c := range []struct {
		yaml, want string
	}{
		{gemm + "n_fused: 8\n", "tiling.bm 64, not one fused iteration's 256: the largest tile whose L rows of 8 fused iterations (bm × 4096 FP16) and two U buffers fit L1 (1048576 bytes) is 64 × 128"},
		{gemm + "n_fused: 1\n", ""},
		{gemm + "n_fused: 8\ntiling: {bm: 64}\n", ""},
		{"kind: lu-fused\nmachine: cloudbrain2-node\ngrid: {p: 2, q: 4}\nn: 4096\nnb: 256\nn_fused: 8\nn_fusion: 16\nnumerics: off\nfidelity: isolated\n",
			"tiling.bm 128, not one fused iteration's 256: the largest tile whose L rows of 8 fused iterations (bm × 2048 FP16)"},
	} {
		res, err := runLU(t, c.yaml)
		if err != nil {
			t.Fatalf("%q: %v", c.yaml, err)
		}
		if res.Failure != nil {
			t.Fatalf("%q: %v", c.yaml, res.Failure)
		}
		var got string
		for _, n := range res.Report.Notes {
			if strings.HasPrefix(n, "tiling.bm ") {
				got = n
			}
		}
		if c.want == "" && got != "" || !strings.HasPrefix(got, c.want) {
			t.Errorf("%q: tiling note %q, want one starting %q", c.yaml, got, c.want)
		}
	}
}
