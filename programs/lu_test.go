package programs

import (
	"fmt"
	"os"
	"strconv"
	"testing"

	"github.com/davinci-sim/davinci-sim/machines"
)

// runLU executes an lu-fused program given as YAML through Execute.
func runLU(t *testing.T, yaml string, sets ...string) (*Result, error) {
	t.Helper()
	f, err := Parse("lu.yaml", ".", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	ovs, err := machines.ParseOverrides(sets)
	if err != nil {
		t.Fatal(err)
	}
	return Execute(f, Options{Overrides: ovs}, RunHooks{})
}

func hpl(t *testing.T, res *Result) map[string]any {
	t.Helper()
	sec, ok := res.Report.Sections["hplmxp"].(map[string]any)
	if !ok {
		t.Fatal("no hplmxp section")
	}
	return sec
}

// The factors computed by the simulated machine equal the golden model's
// bit for bit, with and without fusion and look-ahead, for both trailing
// precisions, and refinement passes.
func TestLUMatchesGolden(t *testing.T) {
	cases := []struct {
		fused, fusion int
		la            bool
		trailing      string
		extra         string
	}{
		{1, 0, true, "fp32", ""},
		{1, 0, false, "fp32", ""},
		{2, 8, true, "fp32", ""},
		{3, 12, false, "fp32", ""},
		{2, 8, true, "fp16", ""},
		{2, 32, true, "fp32", ""}, // every core in both zone sets
		// several row and column tiles per block, blocks with a fusion zone
		{2, 4, true, "fp32", "n: 640\nnb: 64\ntiling: {bm: 32, bn: 32, bk: 16}\n"},
		{3, 6, true, "fp16", "n: 768\nnb: 64\ntiling: {bm: 32, bn: 64, bk: 32}\n"},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("F%d_nf%d_la%v_%s", c.fused, c.fusion, c.la, c.trailing), func(t *testing.T) {
			size := "n: 256\nnb: 64\n"
			if c.extra != "" {
				size = c.extra
			}
			y := fmt.Sprintf("kind: lu-fused\n%sn_fused: %d\nn_fusion: %d\nlook_ahead: %v\ntrailing: %s\ncheck: true\nseed: 3\n",
				size, c.fused, c.fusion, c.la, c.trailing)
			res, err := runLU(t, y)
			if err != nil {
				t.Fatal(err)
			}
			if res.Failure != nil {
				t.Fatal(res.Failure)
			}
			s := hpl(t, res)
			if s["golden_mismatches"] != 0 {
				t.Fatalf("mismatches %v", s["golden_mismatches"])
			}
			if s["passed"] != true {
				t.Fatalf("refinement did not pass: %v", s["refinement"])
			}
		})
	}
}

// BenchmarkLUFull4096 runs the full-numerics target size (n = 4096, nb =
// 256, fusion 6 on 24 cores): go test ./programs -run XXX -bench LUFull4096 -benchtime 1x
func BenchmarkLUFull4096(b *testing.B) {
	for range b.N {
		f, err := Parse("lu.yaml", ".", []byte("kind: lu-fused\nn: 4096\nnb: 256\nn_fused: 6\nn_fusion: 24\nseed: 1\n"))
		if err != nil {
			b.Fatal(err)
		}
		res, err := Execute(f, Options{}, RunHooks{})
		if err != nil {
			b.Fatal(err)
		}
		if res.Failure != nil {
			b.Fatal(res.Failure)
		}
	}
}

// BenchmarkLUTiming32768 runs the timing-only target size (n = 32768):
// go test ./programs -run XXX -bench LUTiming32768 -benchtime 1x
func BenchmarkLUTiming32768(b *testing.B) {
	n := 32768
	if s := testingN(); s > 0 {
		n = s
	}
	for range b.N {
		f, err := Parse("lu.yaml", ".", []byte(fmt.Sprintf("kind: lu-fused\nn: %d\nnb: 256\nn_fused: 6\nn_fusion: 24\nnumerics: off\n", n)))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := Execute(f, Options{}, RunHooks{}); err != nil {
			b.Fatal(err)
		}
	}
}

// testingN reads LU_BENCH_N (0 if unset) to scale the timing benchmark.
func testingN() int {
	n, _ := strconv.Atoi(os.Getenv("LU_BENCH_N"))
	return n
}

// The trailing-update operator alone equals the golden model bit for bit
// (plain and fused, both trailing precisions).
func TestLUGEMMMatchesGolden(t *testing.T) {
	for _, y := range []string{
		"kind: lu-gemm\nm: 256\nnb: 64\nn_fused: 1\nnumerics: full\n",
		"kind: lu-gemm\nm: 192\nnb: 64\nn_fused: 3\nnumerics: full\ntiling: {bm: 32, bn: 64, bk: 32}\n",
		"kind: lu-gemm\nm: 128\nnb: 64\nn_fused: 2\ntrailing: fp16\nnumerics: full\n",
	} {
		res, err := runLU(t, y)
		if err != nil {
			t.Fatal(err)
		}
		if res.Failure != nil {
			t.Fatal(res.Failure)
		}
		sec := res.Report.Sections["lu_gemm"].(map[string]any)
		if sec["golden_mismatches"] != 0 || !(res.Report.Flops.TFLOPS > 0) {
			t.Fatalf("%s: %v", y, sec)
		}
	}
}
