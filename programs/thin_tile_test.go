package programs

import (
	"fmt"
	"math"
	"slices"
	"testing"
)

// fillingTile keeps the library's first tile wherever its grid fills the
// SMs, takes the largest that does on a thinner shape, else the one with
// the most CTAs — of the first's depth only where the kernel asks.
func TestFillingTile(t *testing.T) {
	lib := []gpuTile{{bm: 128, bn: 256, bk: 64}, {bm: 128, bn: 256, bk: 32}, {bm: 128, bn: 128, bk: 32},
		{bm: 64, bn: 128, bk: 32}, {bm: 64, bn: 64, bk: 64}, {bm: 64, bn: 64, bk: 32}}
	for _, c := range []struct {
		m, n, sms int
		same      bool
		want      gpuTile
	}{
		{8192, 8192, 132, false, lib[0]}, // 2048 CTAs
		{128 * 12, 256 * 11, 132, false, lib[0]},
		{128 * 12, 256 * 10, 132, false, lib[2]}, // 12·10 < 132 <= 12·20
		{16, 8192, 132, false, lib[4]},           // 128 CTAs, the most; 64 deep is the first of them
		{16, 8192, 60, false, lib[2]},            // 128×128: 64 CTAs >= 60
		{16, 8192, 132, true, lib[4]},
		{16, 8192, 60, true, lib[4]}, // 128×128 is 32 deep
		{1, 1, 132, false, lib[0]},   // one CTA whatever the tile: the first
		{300, 64, 8, false, lib[3]},  // 5 row blocks of 64
	} {
		if got := fillingTile(lib, c.m, c.n, c.sms, c.same); got != c.want {
			t.Errorf("m %d, n %d, %d SMs, sameDepth %v: %+v, want %+v", c.m, c.n, c.sms, c.same, got, c.want)
		}
	}
}

// A thin GEMM on a GPU runs with a tile that gives its SMs work (m = 16:
// the library's 128×256 leaves most of them idle) and computes the same C
// bits as with the tile the library lists first: the product kernels'
// depth, and so their interleaving of products in an accumulator, is the
// first tile's.
func TestThinGEMMFillsTheSMs(t *testing.T) {
	type kernel struct {
		ctas   int
		tiling map[string]int
	}
	products := func(res *Result) []kernel {
		var ks []kernel
		switch pk := res.Report.Program["product_kernels"].(type) {
		case []map[string]any:
			for _, k := range pk {
				ks = append(ks, kernel{ctas: k["ctas"].(int), tiling: k["tiling"].(map[string]int)})
			}
		default:
			t.Fatalf("product_kernels is %T", pk)
		}
		return ks
	}
	for _, c := range []struct {
		machine, scheme string
	}{{"h100-sxm", "hgemm"}, {"a100", "ootomo"}, {"a100", "ape-fp32b"}, {"mi210", "le-gemm"}, {"b200", "markidis"}} {
		name := c.machine + "/" + c.scheme
		shape := []string{"program.scheme=" + c.scheme, "program.m=16", "program.n=2048", "program.k=192",
			"program.numerics=full", "program.check=true"}
		run := func(sets ...string) *Result {
			f := mustRead(t, "examples/a100-emulated-gemm.yaml")
			res, err := Execute(f, Options{Machine: c.machine, Overrides: mustSets(t, append(slices.Clone(shape), sets...)...)}, RunHooks{})
			if err != nil {
				t.Fatalf("%s %v: %v", name, sets, err)
			}
			if res.Failure != nil {
				t.Fatalf("%s %v: %v", name, sets, res.Failure)
			}
			return res
		}
		thin := run()
		// The library's first tile: the one a square GEMM runs with.
		square := products(run("program.m=4096", "program.n=4096", "program.numerics=off", "program.check=false"))[0].tiling
		var first []string
		for _, key := range []string{"bm", "bn", "bk", "stages", "warps"} {
			first = append(first, fmt.Sprintf("program.tiling.%s=%d", key, square[key]))
		}
		if c.machine == "b200" {
			first = append(first, "program.tiling.cta_group=1")
		}
		wide := run(first...)
		tk, wk := products(thin), products(wide)
		for i := range tk {
			if tk[i].ctas <= wk[i].ctas {
				t.Errorf("%s: product kernel %d runs %d CTAs (%v), with the first tile %v %d", name, i, tk[i].ctas, tk[i].tiling, square, wk[i].ctas)
			}
			if tk[i].tiling["bk"] != square["bk"] && c.scheme != "hgemm" {
				t.Errorf("%s: product kernel %d is %d deep, the first tile %d", name, i, tk[i].tiling["bk"], square["bk"])
			}
		}
		if thin.Report.Time.Seconds >= wide.Report.Time.Seconds {
			t.Errorf("%s: %g s with the filling tile, %g s with the first", name, thin.Report.Time.Seconds, wide.Report.Time.Seconds)
		}
		var tc, wc []float32
		for _, o := range thin.Outputs {
			if o.Name == "C" {
				tc = o.F32
			}
		}
		for _, o := range wide.Outputs {
			if o.Name == "C" {
				wc = o.F32
			}
		}
		if len(tc) != 16*2048 || !slices.EqualFunc(tc, wc, func(x, y float32) bool { return math.Float32bits(x) == math.Float32bits(y) }) {
			t.Errorf("%s: C differs between the filling tile and the first (%d, %d elements)", name, len(tc), len(wc))
		}
	}
}
