package programs

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

func runOzaki(t *testing.T, machine string, sets ...string) (*Result, error) {
	t.Helper()
	f, err := ReadFile("examples/b200-ozaki.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return Execute(f, Options{Machine: machine, Overrides: mustSets(t, sets...)}, RunHooks{})
}

// phaseNames lists a run's kernels in launch order.
func phaseNames(t *testing.T, res *Result) []string {
	t.Helper()
	var out []string
	for _, k := range res.Report.Kernels {
		out = append(out, k.Name)
	}
	return out
}

// The kernels an Ozaki run launches: ADP's scan, ESC and decision unless
// the precision is fixed, the two slicing passes, one INT8 GEMM per
// diagonal of the product set (s of them for the triangular set, 2s − 1
// for the square one) and the recombination.
func TestOzakiKernels(t *testing.T) {
	small := []string{"program.m=200", "program.n=136", "program.k=300", "program.gemms=separate"}
	diag := func(from, to int) []string {
		var out []string
		for d := from; d <= to; d++ {
			out = append(out, fmt.Sprintf("ozaki/d%d", d))
		}
		return out
	}
	join := func(parts ...[]string) string {
		var all []string
		for _, p := range parts {
			all = append(all, p...)
		}
		return strings.Join(all, " ")
	}
	adp := []string{"ozaki/scan", "ozaki/esc", "ozaki/adp"}
	slice := []string{"ozaki/slice-a", "ozaki/slice-b"}
	rec := []string{"ozaki/recombine"}
	for _, c := range []struct {
		machine string
		sets    []string
		want    string
	}{
		{"b200", nil, join(adp, slice, diag(2, 8), rec)},
		{"b200", []string{"program.precision=fixed"}, join(slice, diag(2, 8), rec)},
		{"a100", []string{"program.mantissa_bits=53", "program.products=square"}, join(adp, slice, diag(2, 14), rec)},
		{"h100-sxm", []string{"program.slices=3"}, join(adp, slice, diag(2, 4), rec)},
		{"mi300x", []string{"program.mantissa_bits=63"}, join(adp, slice, diag(2, 9), rec)},
		{"rtx-pro-6000", nil, join(adp, slice, diag(2, 8), rec)},
		{"b200", []string{"program.gemms=grouped"}, join(adp, slice, []string{"ozaki/products"}, rec)},
	} {
		res, err := runOzaki(t, c.machine, append(append([]string{}, small...), c.sets...)...)
		if err != nil {
			t.Fatalf("%s %v: %v", c.machine, c.sets, err)
		}
		if res.Failure != nil {
			t.Fatalf("%s %v: %v", c.machine, c.sets, res.Failure)
		}
		if got := strings.Join(phaseNames(t, res), " "); got != c.want {
			t.Errorf("%s %v: kernels\n%s\nwant\n%s", c.machine, c.sets, got, c.want)
		}
	}
}

// A k beyond what INT32 holds exactly for the fullest diagonal
// (MaxChunk(4) = 32767 for 4 slices) runs as k-chunks, each diagonal's
// INT8 GEMM per chunk, chunk-major; the planes the simulated GEMMs write
// and C equal the golden model's bits.
func TestOzakiChunks(t *testing.T) {
	res, err := runOzaki(t, "b200", "program.m=16", "program.n=24", "program.k=40000", "program.slices=4", "program.precision=fixed",
		"program.numerics=full", "program.check=true", "program.gemms=separate")
	if err != nil {
		t.Fatal(err)
	}
	if res.Failure != nil {
		t.Fatal(res.Failure)
	}
	want := "ozaki/slice-a ozaki/slice-b ozaki/d2.c0 ozaki/d3.c0 ozaki/d4.c0 ozaki/d5.c0 ozaki/d2.c1 ozaki/d3.c1 ozaki/d4.c1 ozaki/d5.c1 ozaki/recombine"
	if got := strings.Join(phaseNames(t, res), " "); got != want {
		t.Errorf("kernels %s, want %s", got, want)
	}
}

// The simulated slice GEMMs' INT32 planes and the recombined C equal the
// golden model (package ozaki) bit for bit on a machine of each GPU kind
// and tensor-core generation (mma.sync, wgmma from shared memory, tcgen05
// with tensor memory, MFMA), with edge tiles in m, n and k, for every
// precision mode, both product sets, alpha and beta; and the emulation is
// Grade A (componentwise error ≤ (2k+2)·u·|A||B|).
func TestOzakiBitExact(t *testing.T) {
	small := []string{"program.m=72", "program.n=40", "program.k=100", "program.numerics=full", "program.check=true"}
	for _, c := range []struct {
		machine string
		sets    []string
	}{
		{"a100", nil},
		{"h100-sxm", []string{"program.precision=dynamic"}},
		{"b200", []string{"program.precision=fixed", "program.products=square", "program.mantissa_bits=53"}},
		{"mi210", []string{"program.alpha=-0.75", "program.beta=0.5"}},
		{"rtx-pro-6000", []string{"program.precision=dynamic", "program.esc_block=1", "program.inputs.distribution=uniform-nonneg"}},
	} {
		res, err := runOzaki(t, c.machine, append(append([]string{}, small...), c.sets...)...)
		if err != nil {
			t.Fatalf("%s %v: %v", c.machine, c.sets, err)
		}
		if res.Failure != nil {
			t.Fatalf("%s %v: %v", c.machine, c.sets, res.Failure)
		}
		assertChecked(t, c.machine, res)
		ce := res.Report.Program["componentwise_error"].(map[string]any)
		if mx := ce["max_u"].(float64); mx > 2*100+2 || res.Report.Error.Bits < 50 {
			t.Errorf("%s %v: componentwise max %.3g u, %.1f bits", c.machine, c.sets, mx, res.Report.Error.Bits)
		}
	}
}

// ADP falls back to native DGEMM when the slices it needs exceed
// max_mantissa_bits: the scan, ESC and decision kernels, then the
// simulated DGEMM (and the alpha/beta epilogue), bit-exact to FP64 FMA
// chains.
func TestOzakiFallback(t *testing.T) {
	res, err := runOzaki(t, "a100", "program.m=40", "program.n=24", "program.k=72", "program.numerics=full", "program.check=true",
		"program.precision=dynamic", "program.mantissa_bits=53", "program.max_mantissa_bits=54", "program.beta=2")
	if err != nil {
		t.Fatal(err)
	}
	if res.Failure != nil {
		t.Fatal(res.Failure)
	}
	want := "ozaki/scan ozaki/esc ozaki/adp ozaki/native-dgemm ozaki/native-epilogue"
	if got := strings.Join(phaseNames(t, res), " "); got != want {
		t.Errorf("kernels %s, want %s", got, want)
	}
	if !res.Report.Program["fallback"].(bool) {
		t.Errorf("no fallback: %v", res.Report.Program["decision"])
	}
}

// Bad parameters are one clear line each.
func TestOzakiBadInput(t *testing.T) {
	for _, c := range []struct {
		machine string
		sets    []string
		want    string
	}{
		{"b200", []string{"program.precision=sometimes"}, `key "precision": must be fixed, forced or dynamic`},
		{"b200", []string{"program.mantissa_bits=201"}, `key "mantissa_bits": must be in 1..200`},
		{"b200", []string{"program.mantissa_bits=-3"}, `key "mantissa_bits"`},
		{"b200", []string{"program.precision=dynamic"}, `key "precision": dynamic precision needs the inputs' exponents`},
		{"b200", []string{"program.slices=27"}, `key "slices": must be in 1..26`},
		{"b200", []string{"program.precision=dynamic", "program.slices=7", "program.numerics=full"}, `key "slices": applies to precision fixed or forced`},
		{"b200", []string{"program.esc_block=0", "program.k=64", "program.esc_block=65"}, `key "esc_block"`},
		{"b200", []string{"program.products=diagonal"}, `key "products"`},
		{"b200", []string{"program.max_mantissa_bits=40"}, `key "max_mantissa_bits"`},
		{"b200", []string{"program.unit=vector"}, `key "unit": does not apply to ozaki`},
		{"b200", []string{"program.m=1048577"}, `key "m"`},
		{"v100", nil, `key "machine": the slice GEMMs need INT8 tensor cores; machine v100 (nvidia-sm) has none`},
		{"b200", []string{"program.inputs.distribution=gaussian"}, `key "inputs.distribution": must be uniform, uniform-nonneg or between`},
		{"b200", []string{"program.inputs.distribution=between", "program.inputs.low=1"}, `key "inputs.high": distribution between needs finite low < high`},
		{"b200", []string{"program.inputs.low=1"}, `key "inputs.low": applies to distribution between`},
		{"b200", []string{"program.m=65536", "program.n=65536", "program.k=65536"}, `key "m"`},
	} {
		_, err := runOzaki(t, c.machine, c.sets...)
		wantBadInputLine(t, err, c.want, c.machine, c.sets)
	}
}

// Demmel et al.'s Test 2 (exact ESC 2b): forced 55 bits loses accuracy as
// the span grows; dynamic precision adds the slices ESC asks for and stays
// at FP64 accuracy; with a 55-bit cap it falls back to native DGEMM.
func TestOzakiTest2(t *testing.T) {
	run := func(sets ...string) map[string]any {
		t.Helper()
		res, err := runOzaki(t, "b200", append([]string{"program.m=64", "program.n=64", "program.k=64", "program.test2=12",
			"program.numerics=full", "program.check=true", "program.esc_block=1"}, sets...)...)
		if err != nil {
			t.Fatal(err)
		}
		if res.Failure != nil {
			t.Fatal(res.Failure)
		}
		prog := res.Report.Program
		prog["bits"] = res.Report.Error.Bits
		prog["max_u"] = prog["componentwise_error"].(map[string]any)["max_u"].(float64)
		return prog
	}
	forced := run("program.precision=forced", "program.mantissa_bits=55")
	dynamic := run("program.precision=dynamic", "program.mantissa_bits=53", "program.fallback=false") // 64³ is small enough for the performance heuristic to prefer native DGEMM
	capped := run("program.precision=dynamic", "program.mantissa_bits=53", "program.max_mantissa_bits=55")
	if esc := dynamic["esc"].(int); esc < 2*12+1 {
		t.Errorf("Test 2 with b = 12: ESC %d, want ≥ 2b + 1 = 25", esc)
	}
	if s := dynamic["slices"].(int); s < 10 {
		t.Errorf("dynamic: %d slices for W = 53 + ESC %v", s, dynamic["esc"])
	}
	// Componentwise error in units of u·|A||B|: Grade A allows about 2k.
	t.Logf("componentwise max: forced 55 bits %.3g u, dynamic %.3g u, capped (native) %.3g u", forced["max_u"], dynamic["max_u"], capped["max_u"])
	if fu, du := forced["max_u"].(float64), dynamic["max_u"].(float64); fu < 1e3 || du > 2*64+2 {
		t.Errorf("componentwise max: forced 55 bits %.3g u (want far beyond Grade A), dynamic %.3g u (want ≤ 2k+2)", fu, du)
	}
	if !capped["fallback"].(bool) || capped["max_u"].(float64) > 2*64+2 {
		t.Errorf("capped at 55 bits: fallback %v, componentwise max %.3g u", capped["fallback"], capped["max_u"])
	}
}

// Inf and NaN in the inputs (.npy files): ADP's scan routes the GEMM to
// native DGEMM before any slicing, and C carries them where FP64
// arithmetic puts them; fixed precision (no scan) treats them as zero.
func TestOzakiInfNaN(t *testing.T) {
	dir := t.TempDir()
	m, k, n := 8, 16, 8
	a, b := make([]float64, m*k), make([]float64, k*n)
	for i := range a {
		a[i] = float64(i%7) + 0.5
	}
	for i := range b {
		b[i] = float64(i%5) - 1.25
	}
	a[3*k+2] = math.NaN()
	b[5*n+6] = math.Inf(1)
	pa, pb := writeNPY64(t, dir, "a.npy", a, m, k), writeNPY64(t, dir, "b.npy", b, k, n)
	base := []string{"program.m=8", "program.n=8", "program.k=16", "program.inputs.a=" + pa, "program.inputs.b=" + pb,
		"program.numerics=full", "program.check=true"}
	for _, prec := range []string{"forced", "dynamic"} {
		res, err := runOzaki(t, "a100", append(base, "program.precision="+prec)...)
		if err != nil {
			t.Fatal(err)
		}
		if res.Failure != nil {
			t.Fatal(res.Failure)
		}
		if got := strings.Join(phaseNames(t, res), " "); got != "ozaki/scan ozaki/esc ozaki/adp ozaki/native-dgemm" {
			t.Errorf("%s: kernels %s, want the native fallback", prec, got)
		}
		c := res.Outputs[0].F64
		if !math.IsNaN(c[3*n+1]) || !math.IsInf(c[0*n+6], 0) && !math.IsNaN(c[0*n+6]) || math.IsNaN(c[0]) {
			t.Errorf("%s: C[3][1] = %g, C[0][6] = %g, C[0][0] = %g", prec, c[3*n+1], c[0*n+6], c[0])
		}
	}
	res, err := runOzaki(t, "a100", append(base, "program.precision=fixed")...)
	if err != nil {
		t.Fatal(err)
	}
	if res.Failure != nil {
		t.Fatal(res.Failure)
	}
	for i, v := range res.Outputs[0].F64 {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			t.Fatalf("fixed precision: C[%d] = %g (non-finite inputs count as zero)", i, v)
		}
	}
}

// Ozaki-II: the scan, the residues of A and B, one INT8 GEMM per modulus
// (per k-chunk beyond the INT32 bound) and the CRT reconstruction; the
// simulated INT32 planes and C equal package ozaki/crt's bits on each GPU
// kind, and 16 moduli are Grade A.
func TestOzakiII(t *testing.T) {
	small := []string{"program.method=ozaki-ii", "program.precision=", "program.m=72", "program.n=40", "program.k=100",
		"program.numerics=full", "program.check=true", "program.gemms=separate"}
	for _, c := range []struct {
		machine string
		sets    []string
		gemms   int
	}{
		{"a100", []string{"program.moduli=16"}, 16},
		{"h100-sxm", []string{"program.mantissa_bits=40"}, 0},
		{"b200", []string{"program.moduli=9", "program.alpha=3", "program.beta=-1"}, 9},
		{"mi210", []string{"program.moduli=18", "program.inputs.distribution=uniform-nonneg"}, 18},
	} {
		res, err := runOzaki(t, c.machine, append(append([]string{}, small...), c.sets...)...)
		if err != nil {
			t.Fatalf("%s %v: %v", c.machine, c.sets, err)
		}
		if res.Failure != nil {
			t.Fatalf("%s %v: %v", c.machine, c.sets, res.Failure)
		}
		assertChecked(t, c.machine, res)
		names := phaseNames(t, res)
		mods := res.Report.Program["moduli"].([]int)
		if c.gemms != 0 && len(mods) != c.gemms {
			t.Errorf("%s %v: %d moduli, want %d", c.machine, c.sets, len(mods), c.gemms)
		}
		if len(names) != 4+len(mods) || names[0] != "ozaki2/scan" || names[1] != "ozaki2/residues-a" || names[3] != "ozaki2/p256" || names[len(names)-1] != "ozaki2/reconstruct" {
			t.Errorf("%s %v: kernels %v", c.machine, c.sets, names)
		}
		if bits := res.Report.Program["bits"].(int); bits < 40 && c.gemms == 0 {
			t.Errorf("%s: mantissa_bits 40 gave %d bits", c.machine, bits)
		}
		if c.gemms >= 16 {
			if mx := res.Report.Program["componentwise_error"].(map[string]any)["max_u"].(float64); mx > 2*100+2 {
				t.Errorf("%s %v: componentwise max %.3g u", c.machine, c.sets, mx)
			}
		}
	}
	// Beyond 131071 a modulus's GEMM runs per k-chunk.
	res, err := runOzaki(t, "b200", "program.method=ozaki-ii", "program.precision=", "program.m=16", "program.n=8", "program.k=140000",
		"program.moduli=3", "program.numerics=full", "program.check=true", "program.gemms=separate")
	if err != nil {
		t.Fatal(err)
	}
	if res.Failure != nil {
		t.Fatal(res.Failure)
	}
	if names := phaseNames(t, res); len(names) != 4+6 || names[3] != "ozaki2/p256.c0" || names[3+3] != "ozaki2/p256.c1" {
		t.Errorf("chunked kernels %v", names)
	}
	for _, c := range []struct {
		sets []string
		want string
	}{
		{[]string{"program.method=ozaki-3"}, `key "method": must be ozaki-i or ozaki-ii`},
		{[]string{"program.gemms=batched"}, `key "gemms": must be grouped or separate`},
		{[]string{"program.moduli=12"}, `key "moduli": applies to method ozaki-ii`},
		{[]string{"program.method=ozaki-ii"}, `key "precision": applies to method ozaki-i`},
		{[]string{"program.method=ozaki-ii", "program.precision=", "program.moduli=25"}, `key "moduli": must be in`},
		{[]string{"program.method=ozaki-ii", "program.precision=", "program.mantissa_bits=100"}, `key "mantissa_bits": ozaki-ii reaches at most`},
	} {
		_, err := runOzaki(t, "b200", c.sets...)
		wantBadInputLine(t, err, c.want, c.sets)
	}
}

// The largest slice count the slices key takes (26: 207 bits, the plan
// capped at 200) runs and checks on both machine kinds (it was refused as
// "bits outside [1, 200]: 207").
func TestOzakiMaxSlices(t *testing.T) {
	for _, ex := range []string{"b200-ozaki.yaml", "ascend-910a-ozaki.yaml"} {
		f, err := ReadFile("examples/" + ex)
		if err != nil {
			t.Fatal(err)
		}
		res, err := Execute(f, Options{Numerics: NumericsFull, Overrides: mustSets(t, "program.m=32", "program.n=32", "program.k=64", "program.slices=26", "program.check=true")}, RunHooks{})
		if err != nil || res.Failure != nil {
			t.Fatalf("%s: %v %v", ex, err, res.Failure)
		}
	}
}
