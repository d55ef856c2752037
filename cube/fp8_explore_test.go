package cube

import (
	"fmt"
	"os"
	"testing"

	"github.com/davinci-sim/davinci-sim/fp"
)

// TestFP8FP16Explore is the exploration harness behind FP8-FP16.md: with
// CUBE_VECTORS set it runs the FP8→FP16 sets (H100, H200, B200) through
// variants of their presets' FP16-output parameters and logs the mismatch
// counts — a measuring tool (go test ./cube -run FP8FP16Explore -v); it
// fails only if the preset itself misses a line (TestRecordedVectors
// checks the presets on every set by default).
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
		{"one block of 32", func(p FormatParams) FormatParams { p.L, p.Window = 32, 0; return p }},
		{"c in the chain", func(p FormatParams) FormatParams { p.LateC = false; return p }},
	}
	for _, run := range []int{1, 4, 8, 16} {
		variants = append(variants, variant{fmt.Sprintf("Run=%d", run), func(p FormatParams) FormatParams {
			p.Run = run
			return p
		}})
	}
	for _, F := range []int{13, 16, 17, 18, Exact} {
		variants = append(variants, variant{fmt.Sprintf("F=%d", F), func(p FormatParams) FormatParams {
			p.F = F
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
			m.FP16Formats[s.Input] = vr.p(m.FP16Formats[s.Input])
			r, err := s.Check(m, v)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%-5s %-5v→fp16  %-16s mismatches %5d / %d", s.GPU, s.Input, vr.name, r.Mismatches, r.Checked)
			if vr.name == "preset" && (r.Mismatches != 0 || r.Checked == 0) {
				t.Errorf("%s %v→fp16: the preset misses %d of %d lines", s.GPU, s.Input, r.Mismatches, r.Checked)
			}
		}
	}
}
