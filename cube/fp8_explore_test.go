package cube

import (
	"fmt"
	"os"
	"testing"

	"github.com/davinci-sim/davinci-sim/fp"
)

// TestFP8FP16Explore is the exploration harness behind FP8-FP16.md: with
// CUBE_VECTORS set it runs the open FP8→FP16 sets (H100, H200, B200) through
// candidate variants of their presets and logs the mismatch counts. It never
// fails; it is a measuring tool (go test ./cube -run FP8FP16Explore -v).
func TestFP8FP16Explore(t *testing.T) {
	dir := os.Getenv("CUBE_VECTORS")
	if dir == "" || testing.Short() {
		t.Skip("set CUBE_VECTORS to the tc-vectors folder to run the FP8→FP16 exploration")
	}
	sets, err := FindVectorSets(dir)
	if err != nil {
		t.Fatal(err)
	}
	type variant struct {
		name string
		p    func(FormatParams) FormatParams
	}
	variants := []variant{
		{"preset", func(p FormatParams) FormatParams { return p }},
		{"c in block", func(p FormatParams) FormatParams { p.LateC = false; return p }},
	}
	for _, F := range []int{11, 12, 13, 14, 25, Exact} {
		variants = append(variants, variant{fmt.Sprintf("late c, F=%d", F), func(p FormatParams) FormatParams {
			p.F, p.LateC, p.CRound = F, true, fp.RNE
			return p
		}})
	}
	for _, L := range []int{4, 8, 16} {
		variants = append(variants, variant{fmt.Sprintf("late c, L=%d", L), func(p FormatParams) FormatParams {
			p.L, p.LateC, p.CRound = L, true, fp.RNE
			return p
		}})
	}
	for _, s := range sets {
		if s.Output != fp.FP16 || (s.Input != fp.E4M3 && s.Input != fp.E5M2) || s.Model == "ada" {
			continue
		}
		v, err := s.Load()
		if err != nil {
			t.Fatal(err)
		}
		for _, vr := range variants {
			m, err := Preset(s.Model)
			if err != nil {
				t.Fatal(err)
			}
			m.Formats[s.Input] = vr.p(m.Formats[s.Input])
			r, err := s.Check(m, v)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%-5s %-5v→fp16  %-16s mismatches %5d / %d", s.GPU, s.Input, vr.name, r.Mismatches, r.Checked)
		}
	}
}
