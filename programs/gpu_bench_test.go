package programs

import (
	"strings"
	"testing"

	"github.com/davinci-sim/davinci-sim/machines"
)

// The microbenchmarks reach what the machine files say: the tensor peak
// (times the instruction family's measured efficiency, 1 where none is
// known), the instruction latency within 10 %, the HBM stream within 5 % of
// the measured achievable bandwidth, the shared-memory bytes per cycle.
func TestGPUBench(t *testing.T) {
	for _, mach := range []string{"a100", "h100-sxm", "v100"} {
		m, err := machines.Load(mach, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			test   string
			sets   []string
			lo, hi float64
		}{
			{"tensor-peak", []string{"program.repeats=64"}, 0.97, 1.0}, // of the peak at the simulated clock
			{"mma-latency", []string{"program.repeats=200"}, 0.9, 1.1},
			{"hbm-stream", []string{"program.bytes=64MiB"}, 0.95, 1.001},
			{"smem-bandwidth", []string{"program.repeats=64"}, 0.97, 1.001},
		} {
			f, err := ReadFile("examples/a100-" + c.test + ".yaml")
			if err != nil {
				t.Fatal(err)
			}
			ovs, err := machines.ParseOverrides(c.sets)
			if err != nil {
				t.Fatal(err)
			}
			res, err := Execute(f, Options{Machine: mach, Overrides: ovs}, RunHooks{})
			if err != nil {
				t.Fatalf("%s %s: %v", mach, c.test, err)
			}
			frac := res.Report.GPUBench.Fraction
			if c.test == "tensor-peak" {
				frac /= m.NvidiaSM().Tensor.Efficiency
			}
			if frac < c.lo || frac > c.hi {
				t.Errorf("%s %s: %.4g %s = %.3f of the reference (want %.2f..%.3f)", mach, c.test,
					res.Report.GPUBench.Achieved, res.Report.GPUBench.Unit, frac, c.lo, c.hi)
			}
		}
	}
}

// The A100's INT8 sustained clock (core.tensor.sustained_clock.int8,
// 990 MHz) shows in the INT8 tensor-peak microbenchmark as 0.99/1.41 of
// the dense peak (the reference stays the published peak at core.clock);
// FP16 runs as on the A800, the same core without the key, bit for bit,
// and the A800 reaches its INT8 peak.
func TestGPUBenchSustainedClock(t *testing.T) {
	bench := func(mach, test, dtype string) float64 {
		t.Helper()
		f, err := ReadFile("examples/a100-" + test + ".yaml")
		if err != nil {
			t.Fatal(err)
		}
		ovs, err := machines.ParseOverrides([]string{"program.repeats=64", "program.dtype=" + dtype})
		if err != nil {
			t.Fatal(err)
		}
		res, err := Execute(f, Options{Machine: mach, Overrides: ovs}, RunHooks{})
		if err != nil {
			t.Fatalf("%s %s %s: %v", mach, test, dtype, err)
		}
		return res.Report.GPUBench.Fraction
	}
	if got, want := bench("a100", "tensor-peak", "int8"), 0.99/1.41; got < 0.97*want || got > 1.001*want {
		t.Errorf("a100 INT8 tensor peak: %.4f of the dense peak, want %.4f (990 MHz / 1.41 GHz)", got, want)
	}
	if got := bench("a800", "tensor-peak", "int8"); got < 0.97 || got > 1.001 {
		t.Errorf("a800 INT8 tensor peak: %.4f of the dense peak, want 1", got)
	}
	for _, test := range []string{"tensor-peak", "mma-latency"} {
		if a, b := bench("a100", test, "fp16"), bench("a800", test, "fp16"); a != b {
			t.Errorf("FP16 %s: a100 %v, a800 %v; want the same", test, a, b)
		}
	}
	// In cycles of core.clock, an INT8 dependent chain takes 26 × 1.41/0.99.
	if got, want := bench("a100", "mma-latency", "int8"), 37.0/26; got < 0.9*want || got > 1.1*want {
		t.Errorf("a100 INT8 mma latency: %.3f of the file's 26 cycles, want %.3f", got, want)
	}
}

// Bad parameters and machines of another kind are refused with the key.
func TestGPUBenchBadInput(t *testing.T) {
	for _, c := range []struct {
		set, machine, want string
	}{
		{"program.test=fast", "", `key "test"`},
		{"program.dtype=fp128", "", `key "dtype"`},
		{"program.dtype=fp64", "t4", "no fp64 tensor cores"},
		{"program.dtype=fp8", "mi210", "no fp8 matrix cores"},
		{"program.dtype=tf32", "v100", "no tf32 tensor cores"},
		{"program.dtype=fp8", "a100", "no fp8 tensor cores"},
		{"program.dtype=int8", "v100", "no int8 tensor cores"},
		{"program.repeats=-1", "", `key "repeats"`},
		{"program.repeats=65537", "", `key "repeats": must be in 0..65536`},
		{"program.test=hbm-stream;program.repeats=4", "", `key "repeats": does not apply to hbm-stream`},
		{"program.test=smem-bandwidth;program.dtype=fp16", "", `key "dtype": applies to tensor-peak and mma-latency`},
		{"program.bytes=1TiB", "", `key "bytes"`},
		{"program.bytes=1GiB", "", `key "bytes": applies to hbm-stream and l2-bandwidth; tensor-peak moves no global memory`},
		{"program.test=mma-latency;program.bytes=1GiB", "", `key "bytes": applies to hbm-stream and l2-bandwidth`},
		{"program.test=l2-bandwidth;program.bytes=40GiB;program.repeats=65536", "", `key "bytes": bytes × repeats = 40GiB × 65536 re-reads more than 1TiB`},
		{"program.test=tensor-peak", "ascend-910a", "runs on nvidia-sm, amd-cu machines"},
		// A benchmark the machine has no level for, or too small a one:
		// refused before the run (no L2 gave NaN GB/s and a report that
		// failed to write, as did an L2 whose default quarter holds no
		// 32 KiB copy; a block's shared memory over the machine's limit
		// failed the run, exit 1, naming a grid).
		{"program.test=l2-bandwidth;machine.l2.capacity=0", "", `key "test": l2-bandwidth measures the L2: machine a100 has none (l2.capacity 0)`},
		{"program.test=l2-bandwidth;program.bytes=64MiB;machine.l2.capacity=0", "", `key "test": l2-bandwidth measures the L2: machine a100 has none`},
		{"program.test=l2-bandwidth;machine.l2.capacity=64KiB", "", `key "bytes": the default working set (16KiB, a quarter of l2.capacity) holds no 32KiB copy: machine a100's L2 (l2.capacity 64KiB) is too small for l2-bandwidth; set bytes in 3.375MiB..40GiB`},
		{"program.test=hbm-stream;machine.core.smem_per_cta=32KiB", "", `key "test": hbm-stream needs 64KiB of shared memory per CTA (two 32KiB copy buffers); machine a100 allows 32KiB (core.smem_per_cta)`},
		// Tensor memory without room for one tcgen05 accumulator of the
		// b200's m128n256 shapes: refused (32 bytes ran the matrix tests
		// at 100 % of peak).
		{"machine.core.tmem=32", "b200", `--set machine.core.tmem=32: key "core.tmem": must hold one tcgen05 accumulator of the largest MMA shape, tensor.shapes.fp16 m128n256k16 (128 × 256 × 4 B = 128KiB) (got 32B)`},
		{"program.test=mma-latency;machine.core.tmem=32", "b200", `key "core.tmem": must hold one tcgen05 accumulator`},
		{"program.test=tensor-peak;program.dtype=int8;machine.core.tmem=64KiB", "b200", `key "core.tmem": must hold one tcgen05 accumulator`},
		{"program.test=lds-bandwidth;machine.core.lds_per_workgroup=8KiB", "mi100", `key "test": lds-bandwidth needs 9KiB of shared memory per workgroup (a 64×64 FP16 tile, rows padded to 144 bytes); machine mi100 allows 8KiB (core.lds_per_workgroup)`},
	} {
		f, err := ReadFile("examples/a100-tensor-peak.yaml")
		if err != nil {
			t.Fatal(err)
		}
		ovs, err := machines.ParseOverrides(strings.Split(c.set, ";"))
		if err != nil {
			t.Fatal(err)
		}
		_, err = Execute(f, Options{Machine: c.machine, Overrides: ovs}, RunHooks{})
		wantBadInputLine(t, err, c.want, c.set, c.machine)
	}
}

// l2-bandwidth on a working set larger than the L2 measures mostly HBM:
// the report says so rather than labelling it the L2's bandwidth.
func TestGPUBenchL2Oversized(t *testing.T) {
	f, err := ReadFile("examples/a100-l2-bandwidth.yaml")
	if err != nil {
		t.Fatal(err)
	}
	res, err := Execute(f, Options{Overrides: mustSets(t, "program.bytes=64MiB", "program.repeats=1")}, RunHooks{})
	if err != nil {
		t.Fatal(err)
	}
	if notes := strings.Join(res.Report.Notes, "\n"); !strings.Contains(notes, "exceeds the L2 (40MiB): its re-reads miss it, so the figure is mostly the HBM's") {
		t.Errorf("notes:\n%s", notes)
	}
	// On the MI300X a set past its L2s that fits the Infinity Cache is
	// served by it (17 TB/s), not by HBM (3.9 TB/s): the note said HBM.
	res, err = Execute(f, Options{Machine: "mi300x", Overrides: mustSets(t, "program.bytes=64MiB", "program.repeats=1")}, RunHooks{})
	if err != nil {
		t.Fatal(err)
	}
	if notes := strings.Join(res.Report.Notes, "\n"); !strings.Contains(notes, "so the figure is mostly the memory-side cache's (llc, 256MiB)") {
		t.Errorf("mi300x notes:\n%s", notes)
	}
}

// The memory tests' sizes, given or the default, fit the machine's GM (at
// most half of gm.capacity): where none can, the refusal says how large a
// GM the test needs instead of offering an empty range (a 32-byte GM had
// streamed the default 1 GiB; bytes 4MiB on 1MiB said "in
// 3.375MiB..512KiB").
func TestGPUBenchGMCapacity(t *testing.T) {
	for _, c := range []struct {
		set, machine, want string
	}{
		{"program.test=hbm-stream;machine.gm.capacity=32B", "",
			`key "bytes": machine a100's GM is too small for hbm-stream: its array (the default 1GiB; or bytes, at least a 32KiB copy per SM, 108 × 32KiB = 3.375MiB) must fit in half of gm.capacity (32B); it needs gm.capacity ≥ 6.75MiB`},
		{"program.test=hbm-stream;program.bytes=4MiB;machine.gm.capacity=1MiB", "",
			`key "bytes": machine a100's GM is too small for hbm-stream: its array (bytes 4MiB: at least a 32KiB copy per SM, 108 × 32KiB = 3.375MiB) must fit in half of gm.capacity (1MiB); it needs gm.capacity ≥ 6.75MiB`},
		{"program.test=hbm-stream;machine.gm.capacity=1GiB", "",
			`key "bytes": the default array (1GiB) is more than half of gm.capacity (1GiB); set bytes in 3.375MiB..512MiB`},
		{"program.test=l2-bandwidth;machine.gm.capacity=1KiB", "",
			`key "bytes": machine a100's GM is too small for l2-bandwidth: its working set (the default 10MiB, a quarter of l2.capacity; or bytes, at least a 32KiB copy per SM, 108 × 32KiB = 3.375MiB) must fit in half of gm.capacity (1KiB); it needs gm.capacity ≥ 6.75MiB`},
		{"program.test=l2-bandwidth;machine.gm.capacity=16MiB", "",
			`key "bytes": the default working set (10MiB, a quarter of l2.capacity) is more than half of gm.capacity (16MiB); set bytes in 3.375MiB..8MiB`},
		// The V100's default working set (1.5MiB) is below a copy per SM:
		// a GM of 2MiB holds neither.
		{"program.test=l2-bandwidth;machine.gm.capacity=2MiB", "v100",
			`machine v100's GM is too small for l2-bandwidth: its working set (the default 1.5MiB, a quarter of l2.capacity; or bytes, at least a 32KiB copy per SM, 80 × 32KiB = 2.5MiB) must fit in half of gm.capacity (2MiB); it needs gm.capacity ≥ 3MiB`},
	} {
		f, err := ReadFile("examples/a100-tensor-peak.yaml")
		if err != nil {
			t.Fatal(err)
		}
		_, err = Execute(f, Options{Machine: c.machine, Overrides: mustSets(t, strings.Split(c.set, ";")...)}, RunHooks{})
		wantBadInputLine(t, err, c.want, c.set, c.machine)
	}
	// Where the default fits, it runs: the V100's 1.5MiB working set in a
	// 3MiB GM (no size given could: they start at 2.5MiB).
	f, err := ReadFile("examples/a100-l2-bandwidth.yaml")
	if err != nil {
		t.Fatal(err)
	}
	res, err := Execute(f, Options{Machine: "v100", Overrides: mustSets(t, "machine.gm.capacity=3MiB", "program.repeats=1")}, RunHooks{})
	if err != nil {
		t.Fatal(err)
	}
	if g := res.Report.GPUBench; !(g.Fraction > 0.5 && g.Fraction <= 1.001) {
		t.Errorf("v100 l2-bandwidth in a 3MiB GM: %v %s, %.3f of %v", g.Achieved, g.Unit, g.Fraction, g.Reference)
	}
}

// l2-bandwidth on a GPU without an L2 is refused before the run, on every
// embedded GPU machine whose other keys allow no L2 (it measured 0 bytes in
// no time: NaN GB/s, and a report.json that failed to write).
func TestGPUBenchNoL2(t *testing.T) {
	n := 0
	for _, name := range machines.Names() {
		m, err := machines.Load(name, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, gpuMachine := newGPUTarget(m); !gpuMachine {
			continue
		}
		if _, err := machines.Load(name, mustSets(t, "machine.l2.capacity=0")); err != nil {
			continue // (mi300x: its Infinity Cache needs an L2 in front of it)
		}
		f, err := ReadFile("examples/a100-l2-bandwidth.yaml")
		if err != nil {
			t.Fatal(err)
		}
		_, err = Execute(f, Options{Machine: name, Overrides: mustSets(t, "machine.l2.capacity=0")}, RunHooks{})
		wantBadInputLine(t, err, `key "test": l2-bandwidth measures the L2: machine `+name+` has none (l2.capacity 0)`, name)
		n++
	}
	if n < 8 {
		t.Errorf("%d GPU machines tested, want the 8 or more of the review (v100, t4, a100, h100-sxm, b200, rtx-pro-6000, mi100, mi210)", n)
	}
}

// The latency microbenchmark counts whole cycles: a kernel of 64-cycle
// dependent MFMAs reads 64, its fraction 1 (it read 64.00000000000001 of
// 64 through seconds × clock, a fraction above 1).
func TestGPUBenchLatencyExact(t *testing.T) {
	f, err := ReadFile("examples/mi210-matrix-peak.yaml")
	if err != nil {
		t.Fatal(err)
	}
	res, err := Execute(f, Options{Overrides: mustSets(t, "program.test=mma-latency", "machine.core.mfma.latency_cycles=0")}, RunHooks{})
	if err != nil {
		t.Fatal(err)
	}
	if b := res.Report.GPUBench; b.Achieved != b.Reference || b.Fraction != 1 {
		t.Errorf("%v cycles of %v: fraction %v", b.Achieved, b.Reference, b.Fraction)
	}
}

// The report's program section gives the values a test ran with, its
// defaults resolved (both read 0 where the file left them out).
func TestGPUBenchReportsResolvedParameters(t *testing.T) {
	for _, c := range []struct {
		example string
		bytes   int64
		repeats int
	}{{"a100-hbm-stream.yaml", 1 << 30, 1}, {"a100-tensor-peak.yaml", 0, 256}, {"a100-l2-bandwidth.yaml", 10 << 20, 8}} {
		f, err := ReadFile("examples/" + c.example)
		if err != nil {
			t.Fatal(err)
		}
		res, err := Execute(f, Options{}, RunHooks{})
		if err != nil {
			t.Fatal(err)
		}
		if p := res.Report.Program; p["bytes"] != c.bytes || p["repeats"] != c.repeats {
			t.Errorf("%s: bytes %v, repeats %v; want %d, %d", c.example, p["bytes"], p["repeats"], c.bytes, c.repeats)
		}
	}
}
