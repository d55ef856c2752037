package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/davinci-sim/davinci-sim/sweep"
)

// docFigure is a figure a doc quotes from a run: the run (the CLI's
// arguments, --json added), and the text the doc must hold, made from the
// run's report.json (whitespace compared as one space: the docs wrap).
type docFigure struct {
	doc  string
	args []string
	text func(r reportJSON) string
}

// reportJSON is a run's report.json, decoded.
type reportJSON map[string]any

// num returns the number at the dotted path (sweep.Lookup, as a study's
// metrics), NaN where there is none (the text then quotes NaN, which no
// doc holds).
func (r reportJSON) num(path string) float64 {
	if v, ok := sweep.Lookup(map[string]any(r), path); ok {
		if f, ok := v.(float64); ok {
			return f
		}
	}
	return math.NaN()
}

// docFigures are figures the docs quote as current, from runs quick enough
// for the test suite (a few seconds each): the headline figure of each doc
// that states one. A model change that moves one fails here until the doc
// follows (on 2026-12-06 an audit found ~60 figures in the docs that the
// 2026-12-05 L2 change had moved without anything failing). Add a figure
// here when a doc quotes a new one from a quick run.
var docFigures = []docFigure{
	{"sgemm-cube.md", []string{"run", "programs/examples/sgemm-cube.yaml", "--numerics", "off", "--set", "program.m=8192", "--set", "program.n=8192", "--set", "program.k=8192"},
		func(r reportJSON) string {
			return fmt.Sprintf("**%.1f** (%.1f %% of %.1f)", r.num("flops.tflops"), 100*r.num("flops.peak_fraction"), r.num("flops.peak_tflops"))
		}},
	{"amd.md", []string{"run", "programs/examples/mi210-hgemm.yaml", "--numerics", "off", "--set", "program.m=8192", "--set", "program.n=8192", "--set", "program.k=8192"},
		func(r reportJSON) string {
			return fmt.Sprintf("MI210 HGEMM 8192³ (timing only) predicts %.1f TFLOP/s (%.1f %% of peak, the L2 serves %.1f %% of the GM reads",
				r.num("flops.tflops"), 100*r.num("flops.peak_fraction"), 100*r.num("memory.l2_hit_rate"))
		}},
	{"amd.md", []string{"run", "programs/examples/mi210-hgemm.yaml", "-m", "mi300x", "--numerics", "off", "--set", "program.m=8192", "--set", "program.n=8192", "--set", "program.k=8192", "--set", "program.input=e4m3"},
		func(r reportJSON) string {
			return fmt.Sprintf("FP8 HGEMM 8192³ on the MI300X predicts %.0f TFLOP/s (%.1f %%,", r.num("flops.tflops"), 100*r.num("flops.peak_fraction"))
		}},
	{"nvidia.md", []string{"run", "programs/examples/a100-hgemm.yaml", "-m", "b200", "--numerics", "off", "--set", "program.m=8192", "--set", "program.n=8192", "--set", "program.k=8192", "--set", "program.input=e4m3"},
		func(r reportJSON) string {
			return fmt.Sprintf("b200 %.0f (%.1f %%;", r.num("flops.tflops"), 100*r.num("flops.peak_fraction"))
		}},
	// nvidia.md: the same HGEMM 8192³ on the other files.
	{"nvidia.md", hgemm8192("v100"), func(r reportJSON) string {
		return fmt.Sprintf("v100 %.1f TFLOP/s (%.1f %% of its peak)", r.num("flops.tflops"), 100*r.num("flops.peak_fraction"))
	}},
	{"nvidia.md", hgemm8192("t4"), func(r reportJSON) string {
		return fmt.Sprintf("t4 %.1f (%.1f %%, HBM-bound at 320 GB/s)", r.num("flops.tflops"), 100*r.num("flops.peak_fraction"))
	}},
	{"nvidia.md", hgemm8192("h100-sxm"), func(r reportJSON) string {
		return fmt.Sprintf("h100-sxm %.1f (%.1f %%; the L2 serves %.1f %% of the GM reads)", r.num("flops.tflops"), 100*r.num("flops.peak_fraction"), 100*r.num("memory.l2_hit_rate"))
	}},
	{"nvidia.md", hgemm8192("b200"), func(r reportJSON) string {
		return fmt.Sprintf("b200 %.0f (%.1f %%, CTA pairs; the L2 serves %.1f %%", r.num("flops.tflops"), 100*r.num("flops.peak_fraction"), 100*r.num("memory.l2_hit_rate"))
	}},
	{"nvidia.md", hgemm8192("rtx-pro-6000"), func(r reportJSON) string {
		return fmt.Sprintf("rtx-pro-6000 %.1f (%.1f %%)", r.num("flops.tflops"), 100*r.num("flops.peak_fraction"))
	}},
	{"emulated.md", []string{"run", "programs/examples/a100-emulated-gemm.yaml", "-m", "a100", "--numerics", "off", "--set", "program.scheme={name: ape-fp32f, split: fused}", "--set", "program.m=4096", "--set", "program.n=4096", "--set", "program.k=4096"},
		func(r reportJSON) string {
			return fmt.Sprintf("| a100 | ape-fp32f | 69.8 (128x256x64 8w) | %.1f (", r.num("flops.tflops"))
		}},
	{"emulated.md", []string{"run", "programs/examples/a100-emulated-gemm.yaml", "-m", "a100", "--numerics", "off", "--set", "program.scheme=ape-int16", "--set", "program.m=4096", "--set", "program.n=4096", "--set", "program.k=4096"},
		func(r reportJSON) string {
			return fmt.Sprintf("sustained clock) | %.3f ms | %.1f | %.1f %% |", 1e3*r.num("time.seconds"), r.num("flops.tflops"), 100*r.num("flops.peak_fraction"))
		}},
	{"lu-fused.md", []string{"run", "programs/examples/lu-gemm256-fusion.yaml", "--set", "program.trailing=fp16"},
		func(r reportJSON) string {
			return fmt.Sprintf("| gemm256_fusion | fp16 | %.1f | %.1f | %.1f |", r.num("flops.tflops"),
				r.num("memory.operational_intensity"), r.num("memory.operational_intensity_hbm"))
		}},
}

// runReport runs the CLI with args, --json and -q added, and returns its
// report.json (the test fails on an exit other than 0).
func runReport(t *testing.T, args ...string) reportJSON {
	t.Helper()
	out, code, err := runCLI(t, append(append([]string{}, args...), "--json", "-q")...)
	if code != 0 {
		t.Fatalf("%s: exit %d: %v", strings.Join(args, " "), code, err)
	}
	var r reportJSON
	if err := json.Unmarshal([]byte(out[strings.Index(out, "{"):]), &r); err != nil {
		t.Fatalf("%s: report.json: %v", strings.Join(args, " "), err)
	}
	return r
}

// hgemm8192 is the CLI's arguments for a timing-only HGEMM 8192³ on
// machine m (a100-hgemm.yaml's kernel).
func hgemm8192(m string) []string {
	return []string{"run", "programs/examples/a100-hgemm.yaml", "-m", m, "--numerics", "off", "--set", "program.m=8192", "--set", "program.n=8192", "--set", "program.k=8192"}
}

// TestDocFigures runs each docFigures and moreDocFigures run (once where
// entries share it) and checks that its doc quotes what the run gives.
func TestDocFigures(t *testing.T) {
	if testing.Short() {
		t.Skip("runs GEMMs of up to 8192³ (~35 s in all)")
	}
	docs := map[string]string{}
	reports := map[string]reportJSON{}
	for _, f := range append(append([]docFigure{}, docFigures...), moreDocFigures...) {
		t.Run(f.doc+" "+strings.Join(f.args[1:], " "), func(t *testing.T) {
			text, ok := docs[f.doc]
			if !ok {
				b, err := os.ReadFile("../../docs/" + f.doc)
				if err != nil {
					t.Fatal(err)
				}
				text = strings.Join(strings.Fields(string(b)), " ")
				docs[f.doc] = text
			}
			key := strings.Join(f.args, "\x00")
			r, ok := reports[key]
			if !ok {
				r = runReport(t, f.args...)
				reports[key] = r
			}
			want := strings.Join(strings.Fields(f.text(r)), " ")
			if !strings.Contains(text, want) {
				t.Errorf("docs/%s does not quote what the run gives: %q (update the doc, or this figure's text)", f.doc, want)
			}
		})
	}
}
