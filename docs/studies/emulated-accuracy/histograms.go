//go:build ignore

// Command histograms draws LE-GEMM's error histograms (its Figs. 12–13) for
// studies/long/emulated-accuracy.yaml: per machine (a100, mi210), the
// per-element symmetric error against a CPU FP32 SGEMM of hgemm, markidis,
// ootomo and le-gemm at 1024³ on U[−1, 1] (program.error_histogram of kind
// emulated-gemm, every output tile computed by the golden model), as
// DIR/histogram-MACHINE.png and DIR/histograms.csv.
//
//	go run docs/studies/emulated-accuracy/histograms.go docs/studies/emulated-accuracy
package main

import (
	"fmt"
	"image/color"
	"log"
	"os"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/davinci-sim/davinci-sim/machines"
	"github.com/davinci-sim/davinci-sim/programs"
)

func main() {
	if len(os.Args) != 2 {
		log.Fatal("usage: go run histograms.go DIR")
	}
	dir := os.Args[1]
	f, err := programs.ReadFile("programs/examples/a100-emulated-gemm.yaml")
	if err != nil {
		log.Fatal(err)
	}
	csv := "machine,scheme,log10_lo,log10_hi,count,fraction\n"
	for _, machine := range []string{"a100", "mi210"} {
		p := plot.New()
		p.Title.Text = fmt.Sprintf("%s, 1024³, U[−1, 1]: per-element error vs CPU FP32 SGEMM", machine)
		p.X.Label.Text = "log10 |x − c| / (|x| + |c|)"
		p.Y.Label.Text = "fraction of elements"
		p.Add(plotter.NewGrid())
		for i, scheme := range []string{"hgemm", "markidis", "ootomo", "le-gemm"} {
			var ov []machines.Override
			for _, kv := range [][2]string{{"program.scheme", scheme}, {"program.m", "1024"}, {"program.n", "1024"}, {"program.k", "1024"},
				{"program.numerics", "sampled"}, {"program.sample_tiles", "1000000"}, {"program.histogram_bins", "48"},
				{"program.inputs.distribution", "uniform"}, {"program.inputs.offset_exponent", "0"}} {
				ov = append(ov, machines.Override{Path: kv[0], Value: kv[1]})
			}
			res, err := programs.Execute(f, programs.Options{Machine: machine, Overrides: ov}, programs.RunHooks{})
			if err != nil {
				log.Fatal(err)
			}
			h := res.Report.Program["error_histogram"].(map[string]any)
			edges, counts := h["log10_edges"].([]float64), h["counts"].([]int64)
			n := float64(h["elements"].(int))
			var xys plotter.XYs
			for b, c := range counts {
				// A step per bin: its two edges at its height.
				xys = append(xys, plotter.XY{X: edges[b], Y: float64(c) / n}, plotter.XY{X: edges[b+1], Y: float64(c) / n})
				csv += fmt.Sprintf("%s,%s,%g,%g,%d,%g\n", machine, scheme, edges[b], edges[b+1], c, float64(c)/n)
			}
			csv += fmt.Sprintf("%s,%s,exact,exact,%d,%g\n", machine, scheme, h["exact"].(int64), float64(h["exact"].(int64))/n)
			ln, err := plotter.NewLine(xys)
			if err != nil {
				log.Fatal(err)
			}
			ln.Color = plotutil.Color(i)
			ln.Width = vg.Points(1.5)
			p.Add(ln)
			p.Legend.Add(fmt.Sprintf("%s (exact %.1f %%)", scheme, 100*float64(h["exact"].(int64))/n), ln)
		}
		p.Legend.Top, p.Legend.Left = true, true
		p.X.Min, p.X.Max = -10, 0
		p.BackgroundColor = color.White
		if err := p.Save(8*vg.Inch, 5*vg.Inch, filepath.Join(dir, "histogram-"+machine+".png")); err != nil {
			log.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "histograms.csv"), []byte(csv), 0o644); err != nil {
		log.Fatal(err)
	}
}
