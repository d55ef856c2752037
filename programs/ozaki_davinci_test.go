package programs

import (
	"strings"
	"testing"

	"github.com/davinci-sim/davinci-sim/arch"
	"github.com/davinci-sim/davinci-sim/isa"
	"github.com/davinci-sim/davinci-sim/machines"
)

func runOzaki910(t *testing.T, sets ...string) *Result {
	t.Helper()
	f, err := ReadFile("examples/ascend-910a-ozaki.yaml")
	if err != nil {
		t.Fatal(err)
	}
	res, err := Execute(f, Options{Overrides: mustSets(t, sets...)}, RunHooks{})
	if err != nil {
		t.Fatalf("%v: %v", sets, err)
	}
	if res.Failure != nil {
		t.Fatalf("%v: %v", sets, res.Failure)
	}
	return res
}

// On the Ascend 910A the INT32 planes the simulated INT8 cube writes (read
// back over PCIe by the host) and the C the host recombines equal the
// golden model (the run's ozaki plan; its fallback ozaki.NativeGEMM) bit for bit:
// edge tiles in m, n and k and several L1 groups (small tiles), every
// precision mode, both product sets, alpha and beta, k-chunks, the
// fallback; and the emulation is Grade A.
func TestOzakiDaVinciBitExact(t *testing.T) {
	small := []string{"program.numerics=full", "program.check=true"}
	tiles := []string{"program.tiling.bm=32", "program.tiling.bk=64", "program.tiling.bn=32", "program.tiling.nfused=2"}
	for _, c := range []struct {
		sets   []string
		phases string // the run's phases (host stages, then kernels), "" = not checked
	}{
		{[]string{"program.m=70", "program.k=90", "program.n=50"},
			"ozaki/scan ozaki/esc ozaki/adp ozaki/slice-a ozaki/h2d-a ozaki/slice-b ozaki/h2d-b launch wait ozaki/d2h ozaki/recombine ozaki/d2 ozaki/d3 ozaki/d4 ozaki/d5 ozaki/d6 ozaki/d7 ozaki/d8"},
		{append([]string{"program.m=75", "program.k=150", "program.n=70", "program.precision=fixed", "program.products=square", "program.mantissa_bits=23"}, tiles...),
			"ozaki/slice-a ozaki/h2d-a ozaki/slice-b ozaki/h2d-b launch wait ozaki/d2h ozaki/recombine ozaki/d2 ozaki/d3 ozaki/d4 ozaki/d5 ozaki/d6"},
		{append([]string{"program.m=40", "program.k=130", "program.n=66", "program.precision=dynamic", "program.fallback=false", "program.alpha=-0.75", "program.beta=0.5"}, tiles...), ""},
		{[]string{"program.m=33", "program.k=64", "program.n=17", "program.precision=dynamic", "program.fallback=false", "program.esc_block=1", "program.inputs.distribution=uniform-nonneg"}, ""},
		// k-chunks: MaxChunk(4) = 32767 for 4 slices.
		{[]string{"program.m=16", "program.k=33000", "program.n=20", "program.precision=fixed", "program.slices=4"},
			"ozaki/slice-a ozaki/h2d-a ozaki/slice-b ozaki/h2d-b launch wait ozaki/d2h ozaki/recombine ozaki/d2.c0 ozaki/d3.c0 ozaki/d4.c0 ozaki/d5.c0 ozaki/d2.c1 ozaki/d3.c1 ozaki/d4.c1 ozaki/d5.c1"},
		// The fallback ADP's speed heuristic chooses (64³: the host's DGEMM is faster);
		// the golden model follows the run's decision (it re-planned without the heuristic).
		{[]string{"program.m=64", "program.k=64", "program.n=64", "program.precision=dynamic"},
			"ozaki/scan ozaki/esc ozaki/adp ozaki/native-dgemm"},
		// The fallback (55-bit cap below what dynamic asks for): the host's FP64 DGEMM.
		{[]string{"program.m=40", "program.k=72", "program.n=24", "program.precision=dynamic", "program.mantissa_bits=53", "program.max_mantissa_bits=54", "program.beta=2"},
			"ozaki/scan ozaki/esc ozaki/adp ozaki/native-dgemm"},
	} {
		res := runOzaki910(t, append(append([]string{}, small...), c.sets...)...)
		if c.phases != "" {
			if got := strings.Join(programPhases(t, res), " "); got != c.phases {
				t.Errorf("%v: phases\n%s\nwant\n%s", c.sets, got, c.phases)
			}
		}
		if !strings.Contains(strings.Join(res.Report.Notes, "\n"), "check: ") {
			t.Errorf("%v: no check note: %v", c.sets, res.Report.Notes)
		}
		ce := res.Report.Program["componentwise_error"].(map[string]any)
		k := float64(res.Report.Program["k"].(int))
		bits := res.Report.Program["mantissa_bits"].(int)
		if s, ok := res.Report.Program["slices"].(int); ok && strings.Contains(strings.Join(c.sets, " "), "slices=") {
			bits = 8*s - 1
		}
		if mx := ce["max_u"].(float64); bits >= 53 && mx > 2*k+2 {
			t.Errorf("%v: componentwise max %.3g u", c.sets, mx)
		}
	}
}

// Timing only at a moderate size: every slice GEMM runs on all 32 AI
// cores near the INT8 cube's rate, the host stages and PCIe transfers are
// all there, and the emulation beats the host's FP64 DGEMM.
func TestOzakiDaVinciTiming(t *testing.T) {
	res := runOzaki910(t, "program.m=1024", "program.k=1024", "program.n=1024")
	prog := res.Report.Program
	by := map[string]float64{}
	for _, ph := range prog["phases"].([]map[string]any) {
		by[ph["name"].(string)] = ph["seconds"].(float64)
		if ph["on"] == "npu" && ph["blocks"].(int) != 32 {
			t.Errorf("%s on %d cores", ph["name"], ph["blocks"])
		}
	}
	for _, name := range []string{"ozaki/scan", "ozaki/esc", "ozaki/slice-a", "ozaki/h2d-a", "ozaki/slice-b", "ozaki/h2d-b", "ozaki/d2h", "ozaki/recombine", "ozaki/d8"} {
		if by[name] <= 0 {
			t.Errorf("phase %s: %g s", name, by[name])
		}
	}
	// d8 holds 7 slice pairs: 7·2·1024³ INT8 ops; the cube's peak is
	// 524 TOP/s. Above a third of it at this size.
	if ops := 7 * 2 * 1024.0 * 1024 * 1024; ops/by["ozaki/d8"] < 524e12/3 {
		t.Errorf("ozaki/d8: %.3g TOP/s", ops/by["ozaki/d8"]/1e12)
	}
	if sp := prog["speedup_over_native"].(float64); sp <= 1 {
		t.Errorf("speedup over the host's DGEMM %.2f", sp)
	}
	if prog["slices"].(int) != 7 || prog["int8_gemms"].(int) != 7 {
		t.Errorf("slices %v, gemms %v", prog["slices"], prog["int8_gemms"])
	}
}

// igemm on the 910A: INT8 A and B straight to the cube, INT32 C equal to
// the exact product (several L1 groups: INT32 partial sums added in UB,
// edge tiles), and the generated streams pass the static check.
func TestIGEMMDaVinci(t *testing.T) {
	for _, sets := range [][]string{
		{"program.m=300", "program.k=700", "program.n=200"},
		{"program.m=100", "program.k=700", "program.n=90", "program.tiling.bm=48", "program.tiling.bk=96", "program.tiling.bn=64", "program.tiling.nfused=2"},
		{"program.m=100", "program.k=300", "program.n=90", "program.buffering=single", "program.tiling.bm=32", "program.tiling.bk=64", "program.tiling.bn=32", "program.tiling.nfused=1"},
	} {
		f, err := ReadFile("examples/a100-igemm.yaml")
		if err != nil {
			t.Fatal(err)
		}
		o := Options{Machine: "ascend-910a", Overrides: mustSets(t, sets...)}
		res, err := Execute(f, o, RunHooks{})
		if err != nil {
			t.Fatalf("%v: %v", sets, err)
		}
		if res.Failure != nil {
			t.Fatalf("%v: %v", sets, res.Failure)
		}
		if res.Report.Error == nil || res.Report.Error.MaxErr != 0 || !strings.Contains(strings.Join(res.Report.Notes, " "), "check: simulated C equals") {
			t.Errorf("%v: error %+v, notes %v", sets, res.Report.Error, res.Report.Notes)
		}
		if err := staticCheck(t, f, o); err != nil {
			t.Errorf("%v: static check: %v", sets, err)
		}
	}
}

// staticCheck builds program f on machine o.Machine with o's overrides and
// runs the generated streams through isa.Check.
func staticCheck(t *testing.T, f *File, o Options) error {
	t.Helper()
	m, err := machines.Load(o.Machine, o.Overrides)
	if err != nil {
		t.Fatal(err)
	}
	chip, err := arch.NewChip(m, arch.Options{Mode: arch.Timing})
	if err != nil {
		t.Fatal(err)
	}
	job, err := f.Kind.Build(f, m, o)
	if err != nil {
		t.Fatal(err)
	}
	return isa.Check(job.Program(), chip.Limits())
}

// Bad inputs on DaVinci machines are one clear line each.
func TestOzakiDaVinciBadInput(t *testing.T) {
	for _, c := range []struct {
		machine string
		sets    []string
		want    string
	}{
		{"ascend-910b3", nil, `key "machine": ozaki on a DaVinci machine runs its FP64 work on the host CPU, and ascend-910b3 has no host section`},
		{"", []string{"program.precision=dynamic"}, `key "precision": dynamic precision needs the inputs' exponents`},
		{"", []string{"program.split.sb=12"}, `key "split": does not apply to ozaki`},
		{"", []string{"program.tiling.bm=128", "program.tiling.bk=48", "program.tiling.bn=128"}, `key "tiling.bk": must be a multiple of 32`},
		{"", []string{"program.mantissa_bits=201"}, `key "mantissa_bits": must be in 1..200`},
		// Keys that would change nothing.
		{"", []string{"program.gemms=separate"}, `key "gemms": applies to GPU machines`},
		{"", []string{"program.max_mantissa_bits=60"}, `key "max_mantissa_bits": caps what precision dynamic may use; precision forced`},
		{"", []string{"program.baselines=false"}, `key "baselines": applies to the FP32 GEMM kinds`},
		{"b200", []string{"program.baselines=false"}, `key "baselines": applies to the FP32 GEMM kinds`},
		{"b200", []string{"program.test2=4", "program.m=64", "program.n=64", "program.k=64", "program.inputs.distribution=uniform-nonneg"}, `key "inputs.distribution": test2 draws A and B itself`},
	} {
		f, err := ReadFile("examples/ascend-910a-ozaki.yaml") // Execute applies the overrides to f
		if err != nil {
			t.Fatal(err)
		}
		_, err = Execute(f, Options{Machine: c.machine, Overrides: mustSets(t, c.sets...)}, RunHooks{})
		wantBadInputLine(t, err, c.want, c.machine, c.sets)
	}
}

// programPhases lists a hosted (DaVinci) ozaki run's phases: host stages,
// transfers, then kernels (report program.phases).
func programPhases(t *testing.T, res *Result) []string {
	t.Helper()
	var out []string
	for _, ph := range res.Report.Program["phases"].([]map[string]any) {
		out = append(out, ph["name"].(string))
	}
	return out
}
