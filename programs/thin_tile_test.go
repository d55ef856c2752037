package programs

import (
	"fmt"
	"math"
	"slices"
	"testing"
)

// fillingTile keeps the library's first tile unless a smaller one at least
// halves the most tile area an SM computes (the grid's CTAs, and a grouped
// GEMM's others, dealt over the SMs), then takes the cheapest — of the
// first's depth only where the kernel asks.
func TestFillingTile(t *testing.T) {
	lib := []gpuTile{{bm: 128, bn: 256, bk: 64}, {bm: 128, bn: 256, bk: 32}, {bm: 128, bn: 128, bk: 32},
		{bm: 64, bn: 128, bk: 32}, {bm: 64, bn: 64, bk: 64}, {bm: 64, bn: 64, bk: 32}}
	deep := []gpuTile{{bm: 128, bn: 256, bk: 64}, {bm: 128, bn: 128, bk: 32}, {bm: 64, bn: 64, bk: 32}}
	for _, c := range []struct {
		tiles              []gpuTile
		m, n, sms, grouped int
		same               bool
		want               gpuTile
	}{
		{lib, 8192, 8192, 132, 1, false, lib[0]},  // 16 waves of 128×256; 64×64 saves 2 %
		{lib, 8192, 8192, 108, 1, false, lib[0]},  // ties
		{lib, 2048, 2048, 148, 7, false, lib[0]},  // 896 CTAs; 128×128 saves 7 %, 64×64 12 %
		{lib, 2048, 2048, 148, 1, false, lib[0]},  // 128 CTAs; 64×64 12 %
		{lib, 16, 8192, 132, 1, false, lib[4]},    // 32 CTAs; 64×64 an eighth; 64 deep, the first of equals
		{lib, 16, 8192, 132, 1, true, lib[4]},     // lib[4] is as deep as the first
		{lib, 16, 8192, 132, 32, false, lib[3]},   // 1024 CTAs; 64×128 half, the first of equals
		{lib, 1024, 1024, 108, 1, false, lib[4]},  // 32 CTAs; 64×64 3 of 8
		{lib, 1024, 1024, 108, 16, false, lib[0]}, // 512 CTAs; 64×64 15 of 20
		{lib, 1, 1, 132, 1, false, lib[4]},
		{lib, 300, 64, 8, 1, false, lib[4]},
		{deep, 16, 8192, 132, 1, false, deep[2]},
		{deep, 16, 8192, 132, 1, true, deep[0]}, // no other tile 64 deep
		{deep[:1], 16, 8192, 132, 1, false, deep[0]},
	} {
		if got := fillingTile(c.tiles, c.m, c.n, c.sms, c.grouped, c.same); got != c.want {
			t.Errorf("m %d, n %d, %d SMs, %d grouped, sameDepth %v: %+v, want %+v", c.m, c.n, c.sms, c.grouped, c.same, got, c.want)
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

// numerics sampled draws its blocks of C from the library's first tile
// whatever tile a small shape runs with: the same elements, the same
// error, as with that tile given (a 64×64 tile had cut the sample of 8
// blocks from 262144 elements to 32768).
func TestSampledBlocksKeepTheFirstTile(t *testing.T) {
	for _, c := range []struct {
		file string
		sets []string
	}{
		{"a100-emulated-gemm", []string{"program.m=1024", "program.n=1024", "program.k=256"}}, // ape-fp32f
		{"a100-emulated-gemm", []string{"program.scheme=ape-int16", "program.m=600", "program.n=500", "program.k=256"}},
		{"a100-hgemm", []string{"program.m=1000", "program.n=700", "program.k=256"}},
		{"a100-igemm", []string{"program.m=1000", "program.n=700", "program.k=256"}},
	} {
		run := func(sets ...string) *Result {
			f := mustRead(t, "examples/"+c.file+".yaml")
			all := append(append([]string{"program.numerics=sampled", "program.check=false"}, c.sets...), sets...)
			res, err := Execute(f, Options{Overrides: mustSets(t, all...)}, RunHooks{})
			if err != nil {
				t.Fatalf("%s %v: %v", c.file, all, err)
			}
			if res.Failure != nil {
				t.Fatalf("%s %v: %v", c.file, all, res.Failure)
			}
			return res
		}
		small := run()
		tiling := func(res *Result) map[string]int {
			if pk, ok := res.Report.Program["product_kernels"].([]map[string]any); ok {
				return pk[0]["tiling"].(map[string]int)
			}
			return res.Report.Program["tiling"].(map[string]int)
		}
		square := tiling(run("program.m=8192", "program.n=8192", "program.numerics=off"))
		var first []string
		for _, key := range []string{"bm", "bn", "bk", "stages", "warps"} {
			first = append(first, fmt.Sprintf("program.tiling.%s=%d", key, square[key]))
		}
		wide := run(first...)
		if st, wt := tiling(small), tiling(wide); st["bm"]*st["bn"] >= wt["bm"]*wt["bn"] {
			t.Fatalf("%s: the small shape runs tile %v, not smaller than the first %v: the test needs a shape that changes tile", c.file, st, wt)
		}
		if small.Report.Error == nil || wide.Report.Error == nil {
			t.Fatalf("%s: no error report", c.file)
		}
		if got, want := fmt.Sprintf("%+v", *small.Report.Error), fmt.Sprintf("%+v", *wide.Report.Error); got != want {
			t.Errorf("%s: sampled error with the small tile\n%s\nwith the first tile\n%s", c.file, got, want)
		}
	}
}
