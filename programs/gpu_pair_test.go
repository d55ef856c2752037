package programs

import (
	"encoding/json"
	"strings"
	"testing"
)

// Blackwell's cta_group::2 pairs: CTAs 2c and 2c+1 run on the two SMs of
// a TPC, each computing its rows of a 256×256 tile from all of B, of which
// it loads half, synchronised by cluster flags (the MMA waits for both
// ranks' copies of a stage, a copy for both ranks' MMAs). C equals the
// golden model bit for bit (check: true) — edge tiles where rank 1 holds
// few or no columns of B, several k-steps with a partial last one, FP16,
// TF32 and INT8 inputs, an emulated scheme (three products of two pieces) and the Ozaki scheme's INT8
// GEMMs — and the report says the kernel ran in pairs (cta_group: 2; on
// these small shapes the default is a smaller tile, one CTA each).
func TestCTAPairsBitExact(t *testing.T) {
	for _, c := range []struct {
		file string
		sets []string
	}{
		{"a100-hgemm", []string{"program.m=500", "program.n=300", "program.k=200", "program.tiling.cta_group=2"}},   // last column block 44 wide: rank 1 loads no B
		{"a100-hgemm", []string{"program.m=256", "program.n=400", "program.k=72", "program.tiling.cta_group=2"}},    // 144 wide: rank 1 loads 16 columns
		{"a100-tf32gemm", []string{"program.m=256", "program.n=96", "program.k=100", "program.tiling.cta_group=2"}}, // one column block narrower than a half
		{"a100-igemm", []string{"program.m=512", "program.n=256", "program.k=300", "program.tiling.cta_group=2"}},
		{"a100-emulated-gemm", []string{"program.m=256", "program.n=200", "program.k=96", "program.scheme=markidis", "program.numerics=full", "program.check=true", "program.tiling.cta_group=2"}},
		{"b200-ozaki", []string{"program.m=256", "program.n=130", "program.k=100", "program.numerics=full", "program.check=true", "program.tiling.cta_group=2"}},
	} {
		name, res := runB200(t, c.file, c.sets)
		if !strings.Contains(strings.Join(res.Report.Notes, "\n"), "bit for bit") {
			t.Errorf("%s: no bit-for-bit check in the notes %q", name, res.Report.Notes)
		}
		if js, _ := json.Marshal(res.Report.Program); !strings.Contains(string(js), `"cta_group":2`) {
			t.Errorf("%s: the report does not show CTA pairs: %s", name, js)
		}
	}
}

// Pairs halve B's global reads and leave A's: hgemm 1024³ on the b200
// with 128×256 tiles reads A (2 MiB) once per column block (4×) and B
// (2 MiB) once per row block (8×) alone, once per pair of them (4×) in
// pairs — and runs faster.
func TestCTAPairsHalveB(t *testing.T) {
	run := func(group string) *Result {
		res, err := Execute(mustRead(t, "examples/a100-hgemm.yaml"), Options{Machine: "b200", Numerics: "off",
			Overrides: mustSets(t, "program.m=1024", "program.n=1024", "program.k=1024", "program.tiling.cta_group="+group,
				"program.tiling.bm=128", "program.tiling.bn=256", "program.tiling.bk=64", "program.tiling.stages=4", "program.tiling.warps=8")}, RunHooks{})
		if err != nil {
			t.Fatal(err)
		}
		if res.Failure != nil {
			t.Fatal(res.Failure)
		}
		return res
	}
	one, two := run("1"), run("2")
	const mib = 1 << 20
	if got := one.Report.Memory.GMReadBytes; got != 24*mib {
		t.Errorf("one CTA per tile: %d bytes read, want %d", got, 24*mib)
	}
	if got := two.Report.Memory.GMReadBytes; got != 16*mib {
		t.Errorf("pairs: %d bytes read, want %d", got, 16*mib)
	}
	if two.Report.Time.Cycles >= one.Report.Time.Cycles {
		t.Errorf("pairs took %d cycles, one CTA per tile %d", two.Report.Time.Cycles, one.Report.Time.Cycles)
	}
}

// cta_group: bad values, machines without tcgen05, shapes that cannot
// pair — one line naming the key and the constraint.
func TestCTAPairsBadInput(t *testing.T) {
	for _, c := range []struct {
		machine string
		sets    []string
		want    string
	}{
		{"a100", []string{"program.tiling.cta_group=2"}, `key "tiling.cta_group": 2 (CTA pairs, cta_group::2) needs tcgen05`},
		{"b200", []string{"program.tiling.cta_group=3"}, `key "tiling.cta_group": must be 1 or 2 (0 = 1) (got 3)`},
		{"ascend-910a", []string{"program.tiling.cta_group=2"}, `key "tiling.cta_group": applies to GPU machines`},
		{"b200", []string{"program.tiling.cta_group=2", "program.m=1024", "machine.cores=147"}, `and of SMs (machine b200 has 147)`},
		{"b200", []string{"program.tiling.cta_group=2", "program.tiling.bm=128", "program.tiling.bn=256", "program.tiling.bk=64", "program.tiling.warps=8", "program.m=256", "machine.cores=147"}, `2 needs an even number of SMs (machine b200 has 147)`},
		{"mi300x", []string{"program.tiling.cta_group=2"}, `key "tiling.cta_group": 2 (CTA pairs, cta_group::2) needs tcgen05`},
		{"b200", []string{"program.tiling.cta_group=2", "program.m=60"}, `key "tiling.cta_group": 2 needs an even number of row blocks`},
		{"b200", []string{"program.tiling.cta_group=2", "program.m=384", "program.tiling.bm=128", "program.tiling.bn=256", "program.tiling.bk=64", "program.tiling.warps=8"}, `key "tiling.cta_group": 2 needs an even number of row blocks (m = 384 in blocks of 128 gives 3)`},
		{"b200", []string{"program.tiling.cta_group=2", "program.m=256", "program.tiling.bm=64", "program.tiling.bn=64", "program.tiling.bk=16", "program.tiling.stages=9"}, `2 allows at most 8 stages (got 9)`},
	} {
		_, err := Execute(mustRead(t, "examples/a100-hgemm.yaml"), Options{Machine: c.machine, Overrides: mustSets(t, c.sets...)}, RunHooks{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %v: %v, want %q", c.machine, c.sets, err, c.want)
		}
	}
	for _, c := range []struct{ file, want string }{
		{"a100-sgemm", `applies to tcgen05 kernels; this sgemm runs on the CUDA-core units`},
		{"a100-dgemm", `applies to tcgen05 kernels; b200 FP64 runs on warp-level MMAs`},
	} {
		_, err := Execute(mustRead(t, "examples/"+c.file+".yaml"), Options{Machine: "b200", Overrides: mustSets(t, "program.tiling.cta_group=2")}, RunHooks{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s on b200: %v, want %q", c.file, err, c.want)
		}
	}
}

// cta_group 2 with an explicit tile the library list does not pair at
// this m, an emulated scheme whose default tile needed fragment registers
// in the layout check, and the ozaki fallback to native DGEMM (FP64 does
// not pair: cta_group applies to the INT8 GEMMs) all run.
func TestCTAPairsExplicit(t *testing.T) {
	for _, c := range []struct {
		file string
		sets []string
	}{
		{"a100-hgemm", []string{"program.m=320", "program.n=256", "program.k=128", "program.tiling.cta_group=2", "program.tiling.bm=32", "program.tiling.bn=128",
			"program.tiling.bk=64", "program.tiling.stages=4", "program.tiling.warps=4"}},
		{"a100-emulated-gemm", []string{"program.m=256", "program.n=200", "program.k=96", "program.scheme=ootomo", "program.numerics=full", "program.check=true", "program.tiling.cta_group=2"}},
		{"b200-ozaki", []string{"program.m=256", "program.n=256", "program.k=256", "program.precision=dynamic", "program.test2=200", "program.numerics=full", "program.tiling.cta_group=2"}},
	} {
		runB200(t, c.file, c.sets)
	}
}

// runB200 runs example file on the b200 with sets; it fails the test on
// an error or a simulated failure.
func runB200(t *testing.T, file string, sets []string) (name string, res *Result) {
	t.Helper()
	name = file + " " + strings.Join(sets, " ")
	res, err := Execute(mustRead(t, "examples/"+file+".yaml"), Options{Machine: "b200", Overrides: mustSets(t, sets...)}, RunHooks{})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if res.Failure != nil {
		t.Fatalf("%s: %v", name, res.Failure)
	}
	return name, res
}
