package programs

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/davinci-sim/davinci-sim/badinput"
	"github.com/davinci-sim/davinci-sim/machines"
)

func runGPU(t *testing.T, machine string, sets ...string) (*Result, error) {
	t.Helper()
	f, err := ReadFile("examples/a100-hgemm.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ovs := mustSets(t, sets...)
	// A fixed host-memory bound: the refusals tested hold on any host.
	return Execute(f, Options{Machine: machine, Overrides: ovs, MaxHostBytes: 16 << 30}, RunHooks{})
}

// hgemm on nvidia-sm machines: the simulated C equals the golden model bit
// for bit (check: true fails the run otherwise), with edge tiles in m, n
// and k, several k-steps and pipeline stages, on V100, A100 and H100
// numerics, default and explicit tilings, one or several CTAs per SM.
func TestGPUHGEMMBitExact(t *testing.T) {
	for _, c := range []struct {
		machine string
		sets    []string
	}{
		{"a100", nil},
		{"h100-sxm", nil},
		{"v100", nil},
		{"a100", []string{"program.tiling.bm=64", "program.tiling.bn=64", "program.tiling.bk=32", "program.tiling.stages=4", "program.tiling.warps=4", "program.m=200", "program.n=136", "program.k=300"}},
		{"v100", []string{"program.tiling.bm=128", "program.tiling.bn=128", "program.tiling.bk=32", "program.tiling.stages=2", "program.tiling.warps=4", "program.k=48"}},
		{"t4", []string{"program.m=100", "program.n=90", "program.k=1000"}},
		{"b200", []string{"program.m=64", "program.n=64", "program.k=64"}},
	} {
		res, err := runGPU(t, c.machine, c.sets...)
		if err != nil {
			t.Fatalf("%s %v: %v", c.machine, c.sets, err)
		}
		if res.Failure != nil {
			t.Fatalf("%s %v: %v", c.machine, c.sets, res.Failure)
		}
		if e := res.Report.Error; e == nil || e.Bits < 10 {
			t.Errorf("%s %v: error %+v", c.machine, c.sets, e)
		}
		assertChecked(t, c.machine, res)
	}
}

// Bad tilings and keys that do not apply are refused with one line naming
// the key and the limit.
func TestGPUHGEMMBadInput(t *testing.T) {
	for _, c := range []struct {
		machine string
		sets    []string
		want    string
	}{
		{"a100", []string{"program.tiling.bm=256", "program.tiling.bn=256", "program.tiling.bk=64", "program.tiling.stages=4", "program.tiling.warps=8"}, "core.smem_per_cta"},
		{"a100", []string{"program.tiling.bm=256", "program.tiling.bn=256", "program.tiling.bk=32", "program.tiling.stages=2", "program.tiling.warps=4"}, "registers per CTA"},
		{"a100", []string{"program.tiling.bm=128", "program.tiling.bn=256", "program.tiling.bk=32", "program.tiling.stages=2", "program.tiling.warps=4"}, "registers per thread"},
		{"a100", []string{"program.tiling.bm=100", "program.tiling.bn=64", "program.tiling.bk=32"}, `key "tiling.bm"`},
		{"a100", []string{"program.tiling.bm=64", "program.tiling.bn=64", "program.tiling.bk=32", "program.tiling.stages=1"}, `key "tiling.stages"`},
		{"a100", []string{"program.buffering=double"}, `key "buffering": applies to davinci machines`},
		{"a100", []string{"program.baselines=false"}, `key "baselines": applies to davinci machines (the hgemm and CPU SGEMM errors beside the cube's); on a100 (nvidia-sm) hgemm reports its error against the FP64 reference only`},
		{"a100", []string{"program.tiling.nfused=4"}, `key "tiling.nfused"`},
		{"h100-sxm", []string{"program.tiling.staging=none"}, `key "tiling.staging": none (fragments loaded from global memory) needs MMAs that read registers`},
		{"b200", []string{"program.tiling.staging=none"}, `key "tiling.staging": none`},
		{"a100", []string{"program.tiling.staging=none", "program.tiling.stages=2"}, `key "tiling.stages": must be 1 with staging: none`},
		// Negative: refused, not read as the kernel's (as 0 is).
		{"a100", []string{"program.tiling.stages=-1"}, `key "tiling.stages": must be in 2..16 (0 = the kernel's; 1 with staging: none) (got -1)`},
		{"mi210", []string{"program.tiling.warps=-9223372036854775807"}, `key "tiling.warps": must be in 1..32`},
		{"a100", []string{"program.tiling.staging=plain"}, `key "tiling.staging": must be shared, registers or none`},
		{"ascend-910a", []string{"program.tiling.stages=3"}, `key "tiling.stages": applies to GPU machines`},
		{"a100", []string{"program.m=0"}, `key "m"`},
		{"a100", []string{"program.m=65536", "program.n=65536", "program.k=65536"}, "full numerics on 65536×65536×65536 needs about 576.25GiB of host memory in all (its data 576.0GiB, its kernels' blocks 51MiB, its chip model 131MiB and the run's base 48MiB), more than the run may take (16GiB, --max-memory)"},
	} {
		_, err := runGPU(t, c.machine, c.sets...)
		wantBadInputLine(t, err, c.want, c.machine, c.sets)
	}
	// A program kind on a machine kind it does not run on.
	f, err := ReadFile("examples/sgemm-cube.yaml")
	if err != nil {
		t.Fatal(err)
	}
	_, err = Execute(f, Options{Machine: "a100", Numerics: NumericsOff}, RunHooks{})
	if !badinput.Is(err) || !strings.Contains(err.Error(), "program kind sgemm-cube runs on davinci machines; machine a100 is nvidia-sm") {
		t.Errorf("sgemm-cube on a100: %v", err)
	}
}

// Every GPU GEMM kind is bit-exact to its golden model (check: true) on
// several machines with edge tiles in m, n and k, several k-steps and
// stages: sgemm on the CUDA cores (FP32 FMA chains; its flops run on the fma
// lane, none on the tensor cores), igemm (exact INT32, 31 correct bits),
// tf32gemm (FP32 data read as TF32: about 10 correct bits), dgemm (FP64
// FMA chains on DMMA or, on v100, the CUDA cores); each is refused
// on a GPU without its units.
func TestGPUGEMMKinds(t *testing.T) {
	for _, c := range []struct {
		file, machine string
		sets          []string
		bitsLo        float64
		bitsHi        float64
	}{
		{"a100-sgemm", "a100", []string{"program.m=300", "program.n=260", "program.k=130"}, 20, 32},
		{"a100-sgemm", "v100", []string{"program.m=130", "program.n=70", "program.k=100"}, 20, 32},
		{"a100-sgemm", "h100-sxm", []string{"program.tiling.bm=64", "program.tiling.bn=64", "program.tiling.bk=16",
			"program.tiling.stages=3", "program.tiling.warps=4", "program.m=200", "program.n=150", "program.k=200"}, 20, 32},
		{"a100-igemm", "a100", nil, 31, 31},
		{"a100-igemm", "t4", []string{"program.m=70", "program.n=300", "program.k=200"}, 31, 31},
		{"a100-igemm", "h100-sxm", []string{"program.m=130", "program.n=40", "program.k=96"}, 31, 31},
		{"a100-tf32gemm", "a100", []string{"program.m=300", "program.n=260", "program.k=130"}, 8, 13},
		{"a100-tf32gemm", "h100-sxm", []string{"program.m=100", "program.n=300", "program.k=77"}, 8, 13},
		{"a100-tf32gemm", "b200", []string{"program.m=64", "program.n=40", "program.k=200"}, 8, 13},
		{"a100-dgemm", "a100", nil, 45, 60},
		{"a100-dgemm", "v100", []string{"program.m=70", "program.n=90", "program.k=50"}, 45, 60},
		{"a100-dgemm", "h100-sxm", []string{"program.m=130", "program.n=40", "program.k=37"}, 45, 60},
	} {
		res, err := Execute(mustRead(t, "examples/"+c.file+".yaml"), Options{Machine: c.machine, Overrides: mustSets(t, c.sets...)}, RunHooks{})
		if err != nil || res.Failure != nil {
			t.Fatalf("%s on %s %v: %v %v", c.file, c.machine, c.sets, err, res.Failure)
		}
		if e := res.Report.Error; e == nil || e.Bits < c.bitsLo || e.Bits > c.bitsHi {
			t.Errorf("%s on %s %v: error %+v", c.file, c.machine, c.sets, e)
		}
		if fma, tensor := res.Report.Pipes["fma"], res.Report.Pipes["tensor"]; c.file == "a100-sgemm" && (fma.Instrs == 0 || tensor.Instrs != 0) {
			t.Errorf("%s on %s: fma ran %d instructions, tensor %d", c.file, c.machine, fma.Instrs, tensor.Instrs)
		}
	}
	for _, c := range []struct{ file, machine, want string }{
		{"a100-igemm", "v100", "needs INT8 tensor cores"},
		{"a100-tf32gemm", "t4", "needs TF32 tensor cores"},
	} {
		_, err := Execute(mustRead(t, "examples/"+c.file+".yaml"), Options{Machine: c.machine}, RunHooks{})
		if !badinput.Is(err) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s on %s: %v", c.file, c.machine, err)
		}
	}
}

// Review findings, pinned: an SM's resident CTAs share its copy path (one
// SM cannot stream more than paths.GM_SMEM bytes per cycle); an edge tile
// costs its CTA's whole warp tiles, as CUTLASS's warps all run their MMAs;
// TF32 fragments take tensor-core registers, not SIMT ones.
func TestGPUReviewFindings(t *testing.T) {
	bench := func(file string, sets ...string) float64 {
		t.Helper()
		f, err := ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		ovs := mustSets(t, sets...)
		res, err := Execute(f, Options{Overrides: ovs}, RunHooks{})
		if err != nil {
			t.Fatal(err)
		}
		return res.Report.GPUBench.Achieved
	}
	m, err := machines.Load("a100", nil)
	if err != nil {
		t.Fatal(err)
	}
	perSM := m.NvidiaSM().Paths.GM_SMEM.BytesPerCycle * float64(m.NvidiaSM().Clock) / 1e9
	if got := bench("examples/a100-l2-bandwidth.yaml", "machine.cores=1", "program.bytes=4MiB"); got > perSM*1.01 {
		t.Errorf("one SM streams %.0f GB/s, above its copy path's %.0f", got, perSM)
	}
	cycles := func(sets ...string) int64 {
		t.Helper()
		res, err := runGPU(t, "a100", append([]string{"program.numerics=off", "machine.cores=1", "program.n=256", "program.k=2048"}, sets...)...)
		if err != nil {
			t.Fatal(err)
		}
		return res.Report.Time.Cycles
	}
	if a, b := cycles("program.m=129"), cycles("program.m=256"); float64(a) < 0.98*float64(b) {
		t.Errorf("m=129 takes %d cycles, m=256 %d: the edge CTA's warps compute whole warp tiles", a, b)
	}
	f, err := ReadFile("examples/a100-tf32gemm.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ovs, _ := machines.ParseOverrides([]string{"program.numerics=off", "program.m=512", "program.n=512", "program.k=64",
		"program.tiling.bm=128", "program.tiling.bn=128", "program.tiling.bk=16", "program.tiling.stages=2", "program.tiling.warps=4"})
	res, err := Execute(f, Options{Overrides: ovs}, RunHooks{})
	if err != nil {
		t.Fatal(err)
	}
	if regs := res.Report.Program["cta"].(map[string]int64)["registers"]; regs != 24576 {
		t.Errorf("tf32 128x128 CTA claims %d registers, want 24576 (accumulators + 16·(bm+bn) + 32 per thread)", regs)
	}
	_, err = Execute(mustRead(t, "examples/a100-hbm-stream.yaml"), Options{Overrides: mustSets(t, "program.bytes=1000")}, RunHooks{})
	if !badinput.Is(err) || !strings.Contains(err.Error(), `key "bytes"`) {
		t.Errorf("gpu-bench bytes=1000: %v", err)
	}
}

func mustRead(t *testing.T, path string) *File {
	t.Helper()
	f, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func mustSets(t testing.TB, sets ...string) []machines.Override {
	t.Helper()
	ovs, err := machines.ParseOverrides(sets)
	if err != nil {
		t.Fatal(err)
	}
	return ovs
}

// Results that overflow are reported, not fatal: report.json holds the
// non-finite metrics as strings and counts the non-finite outputs (an
// FP16 GEMM of inputs beyond FP16's range: every output ±Inf or NaN; an
// FP64 Ozaki GEMM with α = 1e308: most outputs +Inf as in the exact
// reference, the rest's error still measured — a reference norm beyond
// MaxFloat64 once made rel_fro 0).
func TestNonFiniteResults(t *testing.T) {
	for _, c := range []struct {
		example string
		sets    []string
		check   func(e map[string]any) bool
	}{
		{"a100-hgemm.yaml", []string{"program.inputs.offset_exponent=20"}, func(e map[string]any) bool {
			return e["rel_fro"] == "+Inf" && e["non_finite"] == float64(4096)
		}},
		{"b200-ozaki.yaml", []string{"program.k=256", "program.alpha=1e308"}, func(e map[string]any) bool {
			rel, ok := e["rel_fro"].(float64)
			nf, _ := e["non_finite"].(float64)
			return ok && rel > 0 && rel < 1e-12 && nf > 1000 && nf < 4096
		}},
	} {
		f, err := ReadFile("examples/" + c.example)
		if err != nil {
			t.Fatal(err)
		}
		sets := append([]string{"program.m=64", "program.n=64", "program.k=64"}, c.sets...)
		res, err := Execute(f, Options{Numerics: NumericsFull, Overrides: mustSets(t, sets...)}, RunHooks{})
		if err != nil {
			t.Fatalf("%s: %v", c.example, err)
		}
		var buf bytes.Buffer
		if err := res.Report.WriteJSON(&buf); err != nil {
			t.Fatalf("%s: report.json: %v", c.example, err)
		}
		var doc struct {
			Error map[string]any `json:"error"`
		}
		if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
			t.Fatal(err)
		}
		if !c.check(doc.Error) {
			t.Errorf("%s: error section %v", c.example, doc.Error)
		}
	}
}

// check: true needs full numerics; otherwise the report says it was not
// made instead of passing silently.
func TestCheckNeedsFullNumerics(t *testing.T) {
	for _, c := range []struct{ example, numerics string }{{"a100-hgemm.yaml", NumericsSampled}, {"hgemm.yaml", NumericsOff}} {
		f, err := ReadFile("examples/" + c.example)
		if err != nil {
			t.Fatal(err)
		}
		res, err := Execute(f, Options{Numerics: c.numerics, Overrides: mustSets(t, "program.m=256", "program.n=256", "program.k=256", "program.check=true")}, RunHooks{})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(res.Report.Notes, func(n string) bool {
			return strings.HasPrefix(n, "check: not made")
		}) {
			t.Errorf("%s, numerics %s: notes %q", c.example, c.numerics, res.Report.Notes)
		}
	}
}

// A GEMM without a tiling runs on a DaVinci machine whose buffers do not
// hold the default tile: the 910B3's UB takes two FP32 tiles of 144², not
// the default 176² (it was refused as "tiling: … exceed UB").
func TestDaVinciDefaultTileFits(t *testing.T) {
	f, err := ReadFile("examples/a100-hgemm.yaml")
	if err != nil {
		t.Fatal(err)
	}
	res, err := Execute(f, Options{Machine: "ascend-910b3", Overrides: mustSets(t, "program.m=300", "program.n=200", "program.k=256", "program.check=true")}, RunHooks{})
	if err != nil || res.Failure != nil {
		t.Fatalf("%v %v", err, res.Failure)
	}
	if tl, ok := res.Report.Program["tiling"].(map[string]int); !ok || tl["bm"] != 144 {
		t.Errorf("tiling %v, want bm 144", res.Report.Program["tiling"])
	}
}

// A grid of fewer blocks than SMs reports the SMs that ran blocks — its
// cores, each with a finish cycle — and averages pipes over them, as a
// DaVinci run averages over the cores its program uses (the idle SMs
// diluted the tensor pipe's busy share 4.5× at 24 blocks on 108 SMs).
func TestGPUReportCoresUsed(t *testing.T) {
	res, err := runGPU(t, "a100", "program.m=512", "program.n=384", "program.k=256", "program.numerics=off")
	if err != nil {
		t.Fatal(err)
	}
	rep := res.Report
	if len(rep.Cores) == 0 || len(rep.Cores) >= 108 {
		t.Fatalf("%d cores reported, want those of the grid's blocks (fewer than the 108 SMs)", len(rep.Cores))
	}
	sum := 0.0
	for _, c := range rep.Cores {
		if c.FinishCycle <= 0 {
			t.Errorf("core %d reported with finish cycle %d", c.Core, c.FinishCycle)
		}
		sum += c.Pipes["tensor"].Busy
	}
	if mean, got := sum/float64(len(rep.Cores)), rep.Pipes["tensor"].Busy; got <= 0 || math.Abs(got-mean) > 1e-12 {
		t.Errorf("tensor busy %v, want the reported cores' mean %v", got, mean)
	}
}

// Blackwell's tensor memory is a per-CTA limit like shared memory and
// registers: on a b200 whose core.tmem is too small for the machine's
// largest tcgen05 accumulator the machine is refused; one that holds it
// but not a tiling's accumulators (bm × bn × 4 bytes per CTA, one per
// accumulator of an emulated kernel) refuses the tiling with one bad-input
// line naming core.tmem — never a grid the SMs cannot admit (a run
// failure, exit 1) —, default tilings pass over tiles that do not fit
// (and, when none fits, say which limit the smallest exceeds), and the
// resident CTAs per SM count tensor memory.
func TestGPUTMEMFits(t *testing.T) {
	tile := func(bk int) []string {
		return []string{"program.tiling.bm=128", "program.tiling.bn=384", "program.tiling.bk=" + strconv.Itoa(bk), "program.tiling.warps=8"}
	}
	smallShapes := []string{"machine.core.tmem=16KiB"}
	for _, k := range []string{"fp16", "bf16", "tf32", "fp8", "int8"} {
		smallShapes = append(smallShapes, "machine.core.tensor.shapes."+k+"=m64n64k16")
	}
	for _, c := range []struct {
		file string
		sets []string
		want string
	}{
		{"a100-hgemm", []string{"machine.core.tmem=64KiB"}, `--set machine.core.tmem=64KiB: key "core.tmem": must hold one tcgen05 accumulator of the largest MMA shape, tensor.shapes.fp16 m128n256k16 (128 × 256 × 4 B = 128KiB) (got 64KiB)`},
		{"b200-ozaki", []string{"machine.core.tmem=32KiB"}, `key "core.tmem": must hold one tcgen05 accumulator`},
		{"a100-igemm", []string{"machine.core.tmem=32KiB"}, `key "core.tmem": must hold one tcgen05 accumulator`},
		{"a100-tf32gemm", []string{"machine.core.tmem=32KiB"}, `key "core.tmem": must hold one tcgen05 accumulator`},
		{"a100-emulated-gemm", []string{"machine.core.tmem=32KiB"}, `key "core.tmem": must hold one tcgen05 accumulator`},
		{"a100-hgemm", append(tile(64), "machine.core.tmem=128KiB"),
			`key "tiling": 128×384×64 tile, 3 stages, 8 warps needs 196608 bytes of tensor memory per CTA for its 128×384 accumulator (128 × 384 × 4 bytes); the SM has 131072 (core.tmem)`},
		{"a100-igemm", append(tile(128), "machine.core.tmem=128KiB"), `needs 196608 bytes of tensor memory per CTA for its 128×384 accumulator (128 × 384 × 4 bytes); the SM has 131072 (core.tmem)`},
		{"a100-tf32gemm", append(tile(32), "machine.core.tmem=128KiB"), `needs 196608 bytes of tensor memory per CTA for its 128×384 accumulator (128 × 384 × 4 bytes); the SM has 131072 (core.tmem)`},
		{"b200-ozaki", append(tile(128), "machine.core.tmem=128KiB"), `needs 196608 bytes of tensor memory per CTA for its 128×384 accumulator (128 × 384 × 4 bytes); the SM has 131072 (core.tmem)`},
		{"a100-emulated-gemm", []string{"program.scheme=ootomo", "machine.core.tmem=128KiB", "program.tiling.bm=128", "program.tiling.bn=128", "program.tiling.bk=64", "program.tiling.warps=8"},
			`needs 196608 bytes of tensor memory per CTA for its 3 128×128 accumulators (128 × 128 × 4 bytes each); the SM has 131072 (core.tmem)`},
		{"a100-emulated-gemm", append([]string{"program.scheme=ootomo"}, smallShapes...),
			`key "tiling": none of the default tiles fits machine b200 (the smallest, 64×64×32, 3 stages, 8 warps, needs 49152 bytes of tensor memory per CTA for its 3 64×64 accumulators (64 × 64 × 4 bytes each); the SM has 16384 (core.tmem)); give tiling.bm`},
	} {
		f := mustRead(t, "examples/"+c.file+".yaml")
		_, err := Execute(f, Options{Machine: "b200", Overrides: mustSets(t, c.sets...), Numerics: NumericsOff}, RunHooks{})
		wantBadInputLine(t, err, c.want, c.file, c.sets)
	}

	// The default tiles that fit: ootomo's three accumulators in 128 KiB.
	f := mustRead(t, "examples/a100-emulated-gemm.yaml")
	res, err := Execute(f, Options{Machine: "b200", Numerics: NumericsOff,
		Overrides: mustSets(t, "program.scheme=ootomo", "machine.core.tmem=128KiB", "program.m=256", "program.n=256", "program.k=256")}, RunHooks{})
	if err != nil {
		t.Fatalf("ootomo on a b200 with 128KiB of TMEM: %v", err)
	}
	if res.Failure != nil {
		t.Fatalf("ootomo on a b200 with 128KiB of TMEM: %v", res.Failure)
	}
	tl := res.Report.Program["product_kernels"].([]map[string]any)[0]["tiling"].(map[string]int)
	if need := 3 * tl["bm"] * tl["bn"] * 4; need > 128<<10 {
		t.Errorf("ootomo's default tile %v needs %d bytes of TMEM, more than the SM's 128KiB", tl, need)
	}

	// Residency: 128×128 tiles of 64 KiB accumulators, two per SM in 128
	// KiB of TMEM (shared memory and registers would take three).
	res, err = runGPU(t, "b200", "machine.core.tmem=128KiB", "program.numerics=off", "program.m=512", "program.n=512", "program.k=256",
		"program.tiling.bm=128", "program.tiling.bn=128", "program.tiling.bk=64", "program.tiling.stages=2", "program.tiling.warps=4", "program.tiling.cta_group=1")
	if err != nil {
		t.Fatalf("b200 128×128 tiles: %v", err)
	}
	if res.Failure != nil {
		t.Fatalf("b200 128×128 tiles: %v", res.Failure)
	}
	if got := res.Report.Program["cta"].(map[string]int64)["resident_per_sm"]; got != 2 {
		t.Errorf("b200 128×128 tiles in 128KiB of TMEM: %d resident per SM, want 2", got)
	}
}
