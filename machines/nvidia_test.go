package machines

import (
	"bytes"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/davinci-sim/davinci-sim/cube"
)

// nvidiaMachines are the embedded nvidia-sm machines.
var nvidiaMachines = []string{"a100", "a800", "b200", "gb200", "h100-sxm", "rtx-pro-6000", "t4", "v100"}

func mustNvidia(t *testing.T, name string, ovs ...Override) (*Machine, *NvidiaSMCore) {
	t.Helper()
	m := mustLoad(t, name, ovs...)
	c := m.NvidiaSM()
	if c == nil {
		t.Fatalf("%s: kind %q, core %T; want nvidia-sm", name, m.Kind, m.Core)
	}
	return m, c
}

// TestNvidiaMachinesLoad loads every GPU file: it validates, names itself,
// carries a description and a numerics preset package cube knows.
func TestNvidiaMachinesLoad(t *testing.T) {
	for _, n := range nvidiaMachines {
		if !slices.Contains(Names(), n) {
			t.Errorf("%s is not embedded (Names: %v)", n, Names())
			continue
		}
		m, c := mustNvidia(t, n)
		if err := m.Validate(); err != nil {
			t.Errorf("%s: Validate: %v", n, err)
		}
		if m.Name != n || m.Kind != "nvidia-sm" || m.Description == "" || strings.Contains(m.Description, "\n") {
			t.Errorf("%s: name %q, kind %q, description %q", n, m.Name, m.Kind, m.Description)
		}
		if m.DaVinci() != nil {
			t.Errorf("%s: DaVinci() = %v; want nil", n, m.DaVinci())
		}
		if _, err := cube.Preset(m.NumericsPreset()); err != nil {
			t.Errorf("%s: numerics %q: %v", n, c.Numerics, err)
		}
		// The files of the GPUs lu-fused runs on describe their DGX host
		// share (issue 16); the others leave it out.
		if want := n == "a100" || n == "h100-sxm"; m.HasHost() != want {
			t.Errorf("%s: host section %v; want %v", n, m.HasHost(), want)
		}
	}
	var names []string
	for _, k := range Kinds() {
		names = append(names, k.Name)
	}
	if !slices.Contains(names, "nvidia-sm") {
		t.Errorf("Kinds() = %v; want nvidia-sm among them", names)
	}
}

// TestNvidiaKeyNumbers pins the published figures (GPU-FACTS §1.1) and checks
// the per-SM table against the chip table: SMs × clock × FP16 rate must land
// within 1 % of the published dense FP16 peak.
func TestNvidiaKeyNumbers(t *testing.T) {
	cases := []struct {
		name        string
		sms         int
		clock       float64 // Hz
		arch, instr string
		fp16        float64 // FLOP/clk/SM
		peakTF      float64 // published dense FP16 TFLOP/s
		tf32, fp8   bool    // present
		numerics    string
	}{
		{"v100", 80, 1.53e9, "volta", NvidiaMMASync, 1024, 125, false, false, "v100"},
		{"t4", 40, 1.59e9, "turing", NvidiaMMASync, 1024, 65, false, false, "t4"},
		{"a100", 108, 1.41e9, "ampere", NvidiaMMASync, 2048, 312, true, false, "a100"},
		{"a800", 108, 1.41e9, "ampere", NvidiaMMASync, 2048, 312, true, false, "a100"},
		{"h100-sxm", 132, 1.83e9, "hopper", NvidiaWGMMA, 4096, 989.4, true, true, "h100"},
		{"b200", 148, 1.856e9, "blackwell", NvidiaTCGen05, 8192, 2250, true, true, "b200"},
		{"gb200", 148, 2.06e9, "blackwell", NvidiaTCGen05, 8192, 2500, true, true, "b200"},
		{"rtx-pro-6000", 188, 2.617e9, "blackwell", NvidiaMMASync, 1024, 503.8, true, true, "ada"},
	}
	for _, tc := range cases {
		m, c := mustNvidia(t, tc.name)
		if m.Cores != tc.sms || float64(c.Clock) != tc.clock || c.Arch != tc.arch || c.Tensor.Instruction != tc.instr ||
			c.Tensor.FlopsPerCycle.FP16 != tc.fp16 || c.Numerics != tc.numerics {
			t.Errorf("%s: %d SMs, %v, %s, %s, fp16 %v/clk, numerics %s; want %d, %v Hz, %s, %s, %v, %s", tc.name,
				m.Cores, c.Clock, c.Arch, c.Tensor.Instruction, c.Tensor.FlopsPerCycle.FP16, c.Numerics,
				tc.sms, tc.clock, tc.arch, tc.instr, tc.fp16, tc.numerics)
		}
		peaks := m.Peaks()
		if len(peaks) == 0 || peaks[0].Input != "FP16" {
			t.Fatalf("%s: peaks %v; want FP16 first", tc.name, peaks)
		}
		got := float64(m.Cores) * float64(c.Clock) * c.Tensor.FlopsPerCycle.FP16 / 1e12
		if math.Abs(got/tc.peakTF-1) > 0.01 || math.Abs(peaks[0].OpsPerSecond/1e12-got) > 1e-6*got {
			t.Errorf("%s: FP16 dense peak %.1f TFLOP/s (Peaks: %.1f); published %.1f", tc.name, got, peaks[0].OpsPerSecond/1e12, tc.peakTF)
		}
		has := func(in string) bool {
			return slices.ContainsFunc(peaks, func(p Peak) bool { return p.Input == in })
		}
		if has("TF32") != tc.tf32 || (c.Tensor.FlopsPerCycle.TF32 > 0) != tc.tf32 {
			t.Errorf("%s: TF32 present %v; want %v", tc.name, has("TF32"), tc.tf32)
		}
		if has("FP8") != tc.fp8 || (c.Tensor.FlopsPerCycle.FP8 > 0) != tc.fp8 {
			t.Errorf("%s: FP8 present %v; want %v", tc.name, has("FP8"), tc.fp8)
		}
		// Every supported type has a latency and a shape; every unsupported
		// one has neither.
		lats, shapes := c.Tensor.LatencyCycles.All(), c.Tensor.Shapes.All()
		for i, r := range c.Tensor.FlopsPerCycle.All() {
			if (r.Value > 0) != (lats[i].Value > 0) || (r.Value > 0) != (shapes[i].Value != NoShape) {
				t.Errorf("%s: %s rate %v, latency %d, shape %s", tc.name, r.Name, r.Value, lats[i].Value, shapes[i].Value)
			}
		}
	}
	// BF16 and INT8 are published where the chips have them.
	a, _ := mustNvidia(t, "a100")
	for _, p := range a.Peaks() {
		want := map[string]float64{"FP16": 312, "BF16": 312, "TF32": 156, "INT8": 624, "FP64": 19.5}[p.Input]
		if math.Abs(p.OpsPerSecond/1e12/want-1) > 0.01 {
			t.Errorf("a100 %s peak %.1f T/s; want %v", p.Input, p.OpsPerSecond/1e12, want)
		}
	}
	// The A800 is the A100 for compute and memory (GPU-FACTS §1.1), less
	// the A100's calibrated INT8 sustained clock: the calibration stays on
	// the A100 file (issue 12).
	_, c800 := mustNvidia(t, "a800")
	_, c100 := mustNvidia(t, "a100")
	if c100.Tensor.SustainedClock["int8"] != 990e6 || len(c100.Tensor.SustainedClock) != 1 || c800.Tensor.SustainedClock != nil {
		t.Errorf("sustained clocks: a100 %v, a800 %v; want int8 990MHz on the a100 only", c100.Tensor.SustainedClock, c800.Tensor.SustainedClock)
	}
	c100.Tensor.SustainedClock = nil
	if !reflect.DeepEqual(c800, c100) {
		t.Errorf("a800 core differs from a100:\n%+v\n%+v", c800, c100)
	}
	a800 := mustLoad(t, "a800")
	if a800.GM != a.GM || a800.L2 != a.L2 {
		t.Errorf("a800 memory differs from a100: %+v %+v", a800.GM, a800.L2)
	}
	// GM bandwidth is the measured achievable figure where GPU-FACTS §3.3 has one.
	for n, want := range map[string]float64{"a100": 1.75e12, "h100-sxm": 3.18e12, "v100": 866e9} {
		if m := mustLoad(t, n); float64(m.GM.Bandwidth) != want {
			t.Errorf("%s: gm.bandwidth %v; want %v B/s (measured)", n, m.GM.Bandwidth, want)
		}
	}
	// Two-partition L2 on A100/H100 (GPU-FACTS §3.2).
	for _, n := range []string{"a100", "h100-sxm"} {
		if m := mustLoad(t, n); m.L2.Partitions != 2 || m.L2.FarLatencyCycles <= 0 {
			t.Errorf("%s: l2 %+v; want 2 partitions with a far latency", n, m.L2)
		}
	}
	// The measured mma.sync loss on Hopper (GPU-FACTS §2.2).
	if _, h := mustNvidia(t, "h100-sxm"); math.Abs(h.Tensor.MMASyncEfficiency-0.654) > 0.01 || h.Copy != NvidiaCopyTMA {
		t.Errorf("h100: mma_sync_efficiency %v, copy %s", h.Tensor.MMASyncEfficiency, h.Copy)
	}
}

// TestNvidiaTMEM: only the B200 has tensor memory (sm_120, the RTX PRO 6000,
// has no tcgen05: GPU-FACTS §2.1), and only there do TMEM buffer and paths
// appear in the geometry.
func TestNvidiaTMEM(t *testing.T) {
	for _, n := range nvidiaMachines {
		m, c := mustNvidia(t, n)
		g := m.Geometry()
		_, hasBuf := g.Buffer("TMEM")
		_, hasPath := g.Path(SMBufTMEM, SMBufRF)
		want := n == "b200" || n == "gb200"
		if (c.TMEM > 0) != want || hasBuf != want || hasPath != want || (c.Tensor.Instruction == NvidiaTCGen05) != want {
			t.Errorf("%s: tmem %v, TMEM buffer %v, TMEM path %v, instruction %s; want TMEM %v", n, c.TMEM, hasBuf, hasPath, c.Tensor.Instruction, want)
		}
	}
	_, b := mustNvidia(t, "b200")
	if b.TMEM != 256<<10 {
		t.Errorf("b200 tmem %v; want 256KiB", b.TMEM)
	}
}

// TestNvidiaTMEMHoldsAccumulator: a tcgen05 core's tmem must hold one
// accumulator (M × N × 4 bytes, 128 rows per SM of an M = 256 2-CTA
// shape) of the largest shape among the input types its tensor cores
// take (not FP64's DMMA), refused in one line naming core.tmem and the
// --set that gave it; the bound follows the machine's shapes.
func TestNvidiaTMEMHoldsAccumulator(t *testing.T) {
	shapes := func(s string) []Override { // every tcgen05 type's shape
		var ovs []Override
		for _, k := range []string{"fp16", "bf16", "tf32", "fp8", "int8"} {
			ovs = append(ovs, Override{Path: "machine.core.tensor.shapes." + k, Value: s})
		}
		return ovs
	}
	cases := []struct {
		name string
		m    string
		ovs  []Override
		want string // "" = loads
	}{
		{"32 bytes", "b200", []Override{{Path: "machine.core.tmem", Value: "32"}},
			`--set machine.core.tmem=32: key "core.tmem": must hold one tcgen05 accumulator of the largest MMA shape, tensor.shapes.fp16 m128n256k16 (128 × 256 × 4 B = 128KiB) (got 32B)`},
		{"64KiB", "b200", []Override{{Path: "machine.core.tmem", Value: "64KiB"}},
			`--set machine.core.tmem=64KiB: key "core.tmem": must hold one tcgen05 accumulator of the largest MMA shape, tensor.shapes.fp16 m128n256k16 (128 × 256 × 4 B = 128KiB) (got 64KiB)`},
		{"just short", "gb200", []Override{{Path: "machine.core.tmem", Value: "131040"}}, `(got 131040B)`},
		{"exactly one", "b200", []Override{{Path: "machine.core.tmem", Value: "128KiB"}}, ""},
		{"smaller shapes", "b200", append(shapes("m128n128k16"), Override{Path: "machine.core.tmem", Value: "64KiB"}), ""},
		{"smaller shapes, too small", "b200", append(shapes("m64n64k16"), Override{Path: "machine.core.tmem", Value: "8KiB"}),
			`key "core.tmem": must hold one tcgen05 accumulator of the largest MMA shape, tensor.shapes.fp16 m64n64k16 (64 × 64 × 4 B = 16KiB) (got 8KiB)`},
		{"the largest shape names its type", "b200", append(shapes("m64n64k16"),
			Override{Path: "machine.core.tensor.shapes.int8", Value: "m128n64k32"}, Override{Path: "machine.core.tmem", Value: "16KiB"}),
			`tensor.shapes.int8 m128n64k32 (128 × 64 × 4 B = 32KiB) (got 16KiB)`},
		{"2-CTA shape: 128 rows per SM", "b200", []Override{{Path: "machine.core.tensor.shapes.fp8", Value: "m256n256k32"}, {Path: "machine.core.tmem", Value: "128KiB"}}, ""},
		{"2-CTA shape, too small", "b200", append(shapes("m256n128k16"), Override{Path: "machine.core.tmem", Value: "32KiB"}),
			`tensor.shapes.fp16 m256n128k16 (M = 256 spans two SMs, 128 rows each: 128 × 128 × 4 B = 64KiB) (got 32KiB)`},
	}
	for _, c := range cases {
		_, err := Load(c.m, c.ovs)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") ||
			!strings.Contains(err.Error(), `key "core.tmem"`)):
			t.Errorf("%s: got %v\nwant one line with %q", c.name, err, c.want)
		}
	}
}

// TestNvidiaGeometry checks lanes, buffers and paths against the exported
// index constants.
func TestNvidiaGeometry(t *testing.T) {
	m, c := mustNvidia(t, "b200")
	g := m.Geometry()
	if len(g.Lanes) != NumSMLanes || !reflect.DeepEqual(g.Lanes, []string{"issue", "copy", "ldsm", "tensor", "fma", "store"}) {
		t.Errorf("lanes %v", g.Lanes)
	}
	for i, want := range []string{"GM", "SMEM", "RF", "TMEM"} {
		if g.Buffers[i].Name != want {
			t.Errorf("buffer %d = %s; want %s", i, g.Buffers[i].Name, want)
		}
	}
	if !g.Buffers[SMBufGM].Global || g.Buffers[SMBufGM].Capacity != int64(m.GM.Capacity) ||
		g.Buffers[SMBufSMEM].Capacity != int64(c.SMEM) || g.Buffers[SMBufRF].Capacity != int64(c.Registers) ||
		g.Buffers[SMBufTMEM].Capacity != int64(c.TMEM) || g.Buffers[SMBufSMEM].Global {
		t.Errorf("buffers %+v", g.Buffers)
	}
	if got := g.LocalBuffers(); !reflect.DeepEqual(got, []int{SMBufSMEM, SMBufRF, SMBufTMEM}) {
		t.Errorf("local buffers %v", got)
	}
	for _, p := range []struct {
		src, dst, lane int
		name           string
	}{
		{SMBufGM, SMBufSMEM, SMLaneCopy, "GM_SMEM"}, {SMBufGM, SMBufRF, SMLaneCopy, "GM_RF"},
		{SMBufSMEM, SMBufRF, SMLaneLdsm, "SMEM_RF"}, {SMBufRF, SMBufSMEM, SMLaneStore, "RF_SMEM"},
		{SMBufRF, SMBufGM, SMLaneStore, "RF_GM"}, {SMBufTMEM, SMBufRF, SMLaneLdsm, "TMEM_RF"},
		{SMBufRF, SMBufTMEM, SMLaneStore, "RF_TMEM"},
	} {
		got, ok := g.Path(p.src, p.dst)
		if !ok || got.Name != p.name || got.Lane != p.lane || got.BytesPerCycle <= 0 {
			t.Errorf("path %s: %v %v", p.name, got, ok)
		}
	}
	if _, ok := g.Path(SMBufSMEM, SMBufGM); ok {
		t.Error("unexpected SMEM→GM path")
	}
	a, _ := mustNvidia(t, "a100")
	if ga := a.Geometry(); len(ga.Buffers) != 3 || len(ga.Paths) != 5 || ga.VectorRepeatBytes != 0 {
		t.Errorf("a100 geometry %+v", ga)
	}
}

// variantOf returns the embedded file name with old replaced by new (old
// must occur exactly once) and the 1-based line where the replacement
// starts.
func variantOf(t *testing.T, name, old, new string) ([]byte, int) {
	t.Helper()
	src, err := Source(name)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Count(src, []byte(old)) != 1 {
		t.Fatalf("%s: %q occurs %d times; want once", name, old, bytes.Count(src, []byte(old)))
	}
	i := bytes.Index(src, []byte(old))
	line := bytes.Count(src[:i], []byte("\n")) + 1
	if strings.HasPrefix(old, "\n") {
		line++
	}
	return bytes.Replace(src, []byte(old), []byte(new), 1), line
}

// TestNvidiaConstraints: each violated constraint gives exactly one line
// naming the file, the line of the key, the key and the constraint.
func TestNvidiaConstraints(t *testing.T) {
	cases := []struct {
		file, old, new, key, want string
	}{
		{"a100", "  clock: 1.41GHz", "  clock: 0", "core.clock", "must be in [1MHz, 1THz]"},
		{"a100", "  clock: 1.41GHz", "  clock: 2THz", "core.clock", "must be in [1MHz, 1THz] (a cycle of 1 ps to 1 µs; got 2THz)"},
		{"a100", "  clock: 1.41GHz", "  clock: 1e-6Hz", "core.clock", "must be in [1MHz, 1THz] (a cycle of 1 ps to 1 µs; got 1e-06Hz)"},
		{"a100", "  clock: 1.41GHz", "  clock: 1.41", "core.clock", "must be in [1MHz, 1THz]"},
		{"a100", "  arch: ampere", "  arch: pascal", "core.arch", "must be one of volta, turing"},
		{"a100", "  numerics: a100", `  numerics: ""`, "core.numerics", "numerics preset"},
		{"a100", "  max_warps: 64", "  max_warps: 62", "core.max_warps", "multiple of sub_cores = 4"},
		{"a100", "  max_ctas: 32", "  max_ctas: 65", "core.max_ctas", "must be ≤ max_warps"},
		{"a100", "  registers: 256KiB", "  registers: 16KiB", "core.registers", "one warp"},
		{"a100", "  smem_per_cta: 163KiB", "  smem_per_cta: 200KiB", "core.smem_per_cta", "must be ≤ smem = 164KiB"},
		{"a100", "  smem_banks: 32", "  smem_banks: 24", "core.smem_banks", "power of two"},
		{"a100", "  smem_bank_bytes: 4", "  smem_bank_bytes: 0", "core.smem_bank_bytes", "power of two"},
		{"a100", "  smem_bank_bytes: 4", "  smem_bank_bytes: 4611686018427387904", "core.smem_bank_bytes", "power of two up to 1024"},
		{"a100", "  smem_banks: 32", "  smem_banks: 268435456", "core.smem_banks", "power of two up to 1024"},
		{"a100", "  tmem: 0", "  tmem: 256KiB", "core.tmem", "only tcgen05 cores have tensor memory"},
		{"a100", "  launch_ns: 21000", "  launch_ns: -1", "core.launch_ns", "must be in 0..1e+09 ns"},
		{"a100", "  launch_ns: 21000", "  launch_ns: 2e9", "core.launch_ns", "must be in 0..1e+09 ns (1 s; got 2e+09)"},
		{"a100", "  copy: cp.async", "  copy: tma", "core.copy", "tma needs arch hopper"},
		{"v100", "  copy: ldg-sts", "  copy: cp.async", "core.copy", "cp.async needs arch ampere"},
		{"a100", "  copy: cp.async", "  copy: dma", "core.copy", "must be one of ldg-sts, cp.async, tma"},
		{"a100", "    instruction: mma.sync", "    instruction: hmma", "core.tensor.instruction", "must be one of mma.sync, wgmma, tcgen05"},
		{"rtx-pro-6000", "      fp16: 1024\n", "      fp16: 0\n", "core.tensor.flops_per_cycle.fp16", "every tensor core takes FP16"},
		{"a100", "      int8: 4096", "      int8: -1", "core.tensor.flops_per_cycle.int8", "must be 0 (unsupported) or in 1..1e+09"},
		{"a100", "      int8: 4096", "      int8: 1e300", "core.tensor.flops_per_cycle.int8", "must be 0 (unsupported) or in 1..1e+09"},
		{"a100", "      tf32: 25 ", "      tf32: 0 ", "core.tensor.latency_cycles.tf32", "must be > 0 when tensor.flops_per_cycle.tf32 > 0"},
		{"a100", "      fp8: 0      #", "      fp8: 30     #", "core.tensor.latency_cycles.fp8", "must be 0 when tensor.flops_per_cycle.fp8 is 0"},
		{"a100", "      fp16: m16n8k16", "      fp16: m16n8", "core.tensor.shapes.fp16", "want a shape such as m16n8k16"},
		{"a100", "      fp8: none", "      fp8: m16n8k32", "core.tensor.shapes.fp8", "must be none"},
		{"a100", "      int8: m16n8k32", "      int8: m64n8k32", "core.tensor.shapes.int8", "warp-level shape"},
		{"h100-sxm", "      fp16: m64n256k16", "      fp16: m64n264k16", "core.tensor.shapes.fp16", "up to 256 for wgmma"},
		{"b200", "      tf32: m128n256k8", "      tf32: m96n256k8", "core.tensor.shapes.tf32", "M 64, 128 or 256"},
		{"a100", "    efficiency: 1\n", "    efficiency: 1.5\n", "core.tensor.efficiency", "must be in [0.01, 1]"},
		{"a100", "    efficiency: 1\n", "    efficiency: 1e-300\n", "core.tensor.efficiency", "must be in [0.01, 1] (got 1e-300)"},
		{"a100", "    mma_sync_efficiency: 1", "    mma_sync_efficiency: 0.5", "core.tensor.mma_sync_efficiency", "must equal tensor.efficiency"},
		{"h100-sxm", "    mma_sync_efficiency: 0.654", "    mma_sync_efficiency: 2", "core.tensor.mma_sync_efficiency", "must be 0 (not measured) or in [0.01, 1]"},
		{"t4", "    fp64_flops_per_cycle: 4", "    fp64_flops_per_cycle: 0", "core.cuda_cores.fp64_flops_per_cycle", "must be in 1..1e+09"},
		{"t4", "    fp64_flops_per_cycle: 4", "    fp64_flops_per_cycle: 2e9", "core.cuda_cores.fp64_flops_per_cycle", "must be in 1..1e+09"},
		{"a100", "      bytes_per_cycle: 128    # assumption: one SM's L1", "      bytes_per_cycle: 0    # assumption: one SM's L1",
			"core.paths.GM_SMEM.bytes_per_cycle", "must be ≥ 1: a path moves at least a byte a cycle (got 0)"},
		{"a100", "      bytes_per_cycle: 128    # assumption: one SM's L1", "      bytes_per_cycle: 1e-12    # assumption: one SM's L1",
			"core.paths.GM_SMEM.bytes_per_cycle", "must be ≥ 1: a path moves at least a byte a cycle (got 1e-12)"},
		{"a100", "      latency_cycles: 29      # GPU-FACTS", "      latency_cycles: -1      # GPU-FACTS", "core.paths.SMEM_RF.latency_cycles", "must be in 0..1e+06 cycles (got -1)"},
		{"a100", "      latency_cycles: 29      # GPU-FACTS", "      latency_cycles: 10000000000000000      # GPU-FACTS", "core.paths.SMEM_RF.latency_cycles", "must be in 0..1e+06 cycles (got 1e+16)"},
		{"a100", "      fp16: 2048", "      fp16: 1e-12", "core.tensor.flops_per_cycle.fp16", "must be 0 (unsupported) or in 1..1e+09 (got 1e-12)"},
		{"t4", "    fp32_flops_per_cycle: 128", "    fp32_flops_per_cycle: 1e-300", "core.cuda_cores.fp32_flops_per_cycle", "must be in 1..1e+09 (got 1e-300)"},
		{"a100", "      bytes_per_cycle: 0      # absent\n      latency_cycles: 0       # absent\n    RF_TMEM",
			"      bytes_per_cycle: 64     # absent\n      latency_cycles: 0       # absent\n    RF_TMEM",
			"core.paths.TMEM_RF.bytes_per_cycle", "must be 0 with latency_cycles 0 on a core without TMEM"},
		{"a100", "cores: 108", "cores: 0", "cores", "must be ≥ 1"},
		{"b200", "  tmem: 256KiB", "  tmem: 0", "core.tmem", "must be > 0 with tensor.instruction tcgen05"},
		{"b200", "  tmem: 256KiB", "  tmem: 64KiB", "core.tmem", "must hold one tcgen05 accumulator of the largest MMA shape, tensor.shapes.fp16 m128n256k16 (128 × 256 × 4 B = 128KiB) (got 64KiB)"},
		{"a100", "      int8: 990MHz", "      int8: 0", "core.tensor.sustained_clock.int8", "must be ≥ 1MHz"},
		{"a100", "      int8: 990MHz", "      int8: 1e-6Hz", "core.tensor.sustained_clock.int8", "must be ≥ 1MHz: the clock the SM sustains under INT8 tensor load (got 1e-06Hz)"},
		{"a100", "      int8: 990MHz", "      int8: -990MHz", "core.tensor.sustained_clock.int8", "bad frequency"},
		{"a100", "      int8: 990MHz", "      int8: 1.5GHz", "core.tensor.sustained_clock.int8", "must be ≤ clock = 1.41GHz"},
		{"a100", "      int8: 990MHz", "      fp8: 990MHz", "core.tensor.sustained_clock.fp8", "must be left out: tensor.flops_per_cycle.fp8 is 0"},
		{"a100", "      int8: 990MHz", "      int4: 990MHz", "core.tensor.sustained_clock.int4", `unknown input type "int4" (known: fp16, bf16, tf32, fp8, int8, fp64)`},
		{"h100-sxm", "    mma_sync_efficiency: 0.654", "    sustained_clock: {fp8: 1.9GHz}\n    mma_sync_efficiency: 0.654",
			"core.tensor.sustained_clock.fp8", "must be ≤ clock = 1.83GHz"},
	}
	for _, c := range cases {
		data, line := variantOf(t, c.file, c.old, c.new)
		_, err := LoadBytes("user.yaml", data, nil)
		if err == nil {
			t.Errorf("%s %q: no error", c.file, c.new)
			continue
		}
		msg := err.Error()
		prefix := fmt.Sprintf("user.yaml:%d: key %q: ", line, c.key)
		if strings.Contains(msg, "\n") || !strings.HasPrefix(msg, prefix) || !strings.Contains(msg, c.want) {
			t.Errorf("%s %q:\n got %q\nwant one line %q…%q", c.file, c.new, msg, prefix, c.want)
		}
	}
}

// TestNvidiaConsistency covers constraints that tie keys together: they
// report every violation, one line each, all with file:line.
func TestNvidiaConsistency(t *testing.T) {
	cases := []struct {
		file, old, new string
		want           []string
	}{
		// wgmma needs Hopper; tcgen05 needs Blackwell and TMEM.
		{"a100", "    instruction: mma.sync", "    instruction: wgmma", []string{
			`key "core.tensor.instruction": wgmma exists on arch hopper only`,
			`key "core.tensor.shapes.fp16": must be m64nNkK`, // mma.sync shapes are no wgmma shapes
		}},
		{"h100-sxm", "    instruction: wgmma", "    instruction: tcgen05", []string{
			`key "core.tensor.instruction": tcgen05 exists on arch blackwell only`,
			`key "core.tmem": must be > 0 with tensor.instruction tcgen05`,
		}},
		// tcgen05 with an efficiency of 0.
		{"b200", "    efficiency: 1\n", "    efficiency: 0\n", []string{
			`key "core.tensor.efficiency": must be in [0.01, 1]`,
		}},
		// Volta has no BF16/TF32/FP64 tensor cores, no cp.async.
		{"a100", "  arch: ampere", "  arch: volta", []string{
			`key "core.copy": cp.async needs arch ampere`,
			`key "core.tensor.flops_per_cycle.bf16": must be 0 on arch volta`,
			`key "core.tensor.flops_per_cycle.tf32": must be 0 on arch volta`,
			`key "core.tensor.flops_per_cycle.int8": must be 0 on arch volta`,
			`key "core.tensor.flops_per_cycle.fp64": must be 0 on arch volta`,
		}},
		// FP8 needs Ada or later: on an A100 it is refused, and its missing
		// latency and shape are reported too.
		{"a100", "      fp8: 0\n", "      fp8: 4096\n", []string{
			`key "core.tensor.flops_per_cycle.fp8": must be 0 on arch ampere: FP8 tensor cores start with ada`,
			`key "core.tensor.latency_cycles.fp8": must be > 0`,
			`key "core.tensor.shapes.fp8": must be a shape`,
		}},
	}
	for _, c := range cases {
		data, _ := variantOf(t, c.file, c.old, c.new)
		_, err := LoadBytes("user.yaml", data, nil)
		if err == nil {
			t.Errorf("%s %q: no error", c.file, c.new)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s %q: error lacks %q:\n%v", c.file, c.new, w, err)
			}
		}
		for _, l := range strings.Split(err.Error(), "\n") {
			if !strings.HasPrefix(l, "user.yaml:") || !strings.Contains(l, `key "`) {
				t.Errorf("%s %q: line %q lacks file:line and key", c.file, c.new, l)
			}
		}
	}
}

// TestNvidiaUnknownKeys: unknown keys in the nvidia core section are
// rejected with file:line and the full key (davinci keys included).
func TestNvidiaUnknownKeys(t *testing.T) {
	cases := []struct {
		file, old, new string
		at             string // the line of the new text the error must name
		want           []string
	}{
		{"a100", "  smem_banks: 32", "  smem_bankz: 32", "smem_bankz", []string{`unknown key "core.smem_bankz"`, `did you mean "smem_banks"`}},
		{"h100-sxm", "    efficiency: 0.965", "    eficiency: 0.965", "eficiency", []string{`unknown key "core.tensor.eficiency"`, `did you mean "efficiency"`}},
		{"b200", "    flops_per_cycle:\n", "    flops_per_cycle:\n      fp4: 32768\n", "fp4:", []string{`unknown key "core.tensor.flops_per_cycle.fp4"`}},
		{"v100", "  tmem: 0\n", "  tmem: 0\n  buffers:\n    L1: 1MiB\n", "buffers:", []string{`unknown key "core.buffers.L1"`}},
		{"t4", "    GM_RF:", "    GM_L1:", "GM_L1:", []string{`unknown key "core.paths.GM_L1.bytes_per_cycle"`}},
	}
	for _, c := range cases {
		data, _ := variantOf(t, c.file, c.old, c.new)
		i := bytes.Index(data, []byte(c.at))
		line := bytes.Count(data[:i], []byte("\n")) + 1
		_, err := LoadBytes("user.yaml", data, nil)
		if err == nil {
			t.Errorf("%s %q: no error", c.file, c.new)
			continue
		}
		prefix := fmt.Sprintf("user.yaml:%d: ", line)
		if !strings.HasPrefix(err.Error(), prefix) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s %q: error %q is not one line starting with %q", c.file, c.new, err, prefix)
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s %q: error %q lacks %q", c.file, c.new, err, w)
			}
		}
	}
	// A missing key is named too (every key is required).
	data, _ := variantOf(t, "a100", "  smem_bank_bytes: 4\n", "")
	if _, err := LoadBytes("user.yaml", data, nil); err == nil || !strings.Contains(err.Error(), `missing key "core.smem_bank_bytes"`) {
		t.Errorf("missing key: %v", err)
	}
	if _, _, err := ResolveKey("nvidia-sm", "core.tensor.shapes.fp16"); err != nil {
		t.Errorf("ResolveKey nvidia-sm core.tensor.shapes.fp16: %v", err)
	}
	if _, _, err := ResolveKey("nvidia-sm", "core.buffers.L1"); err == nil {
		t.Error("ResolveKey nvidia-sm core.buffers.L1: no error")
	}
}

// TestNvidiaOverrides applies --set to a GPU file and prints/reloads the
// effective configuration.
func TestNvidiaOverrides(t *testing.T) {
	for _, n := range nvidiaMachines {
		shape := map[string]string{"h100-sxm": "m64n128k16", "b200": "m128n128k16", "gb200": "m128n128k16"}[n]
		if shape == "" {
			shape = "m16n8k8"
		}
		ovs := []Override{
			{Path: "machine.core.smem", Value: "100KiB"}, {Path: "machine.core.smem_per_cta", Value: "99KiB"},
			{Path: "machine.core.tensor.shapes.fp16", Value: shape}, {Path: "machine.core.tensor.latency_cycles.fp16", Value: "20"},
			{Path: "machine.gm.bandwidth", Value: "2.039TB/s"}, {Path: "machine.core.paths.GM_SMEM.bytes_per_cycle", Value: "64"},
			{Path: "program.tiling.bm", Value: "96"}, // not ours: ignored
		}
		m, c := mustNvidia(t, n, ovs...)
		if c.SMEM != 100<<10 || c.SMEMPerCTA != 99<<10 || c.Tensor.Shapes.FP16 != MMAShape(shape) || c.Tensor.LatencyCycles.FP16 != 20 ||
			m.GM.Bandwidth != 2.039e12 || c.Paths.GM_SMEM.BytesPerCycle != 64 {
			t.Errorf("%s: overrides not applied: %+v", n, c)
		}
		out := m.YAML(ovs)
		if !bytes.Contains(out, []byte("smem: 100KiB  # --set")) || !bytes.Contains(out, []byte("fp16: "+shape+"  # --set")) {
			t.Errorf("%s: overrides not marked:\n%s", n, out)
		}
		back, err := LoadBytes("effective.yaml", out, nil)
		if err != nil {
			t.Fatalf("%s: reload: %v\n%s", n, err, out)
		}
		if !reflect.DeepEqual(back, m) {
			t.Errorf("%s: round trip differs:\n%+v\n%+v", n, back.Core, m.Core)
		}
	}
	_, err := Load("h100-sxm", []Override{{Path: "machine.core.tensor.shapes.fp16", Value: "m16n8k8"}})
	if err == nil || !strings.Contains(err.Error(), `--set machine.core.tensor.shapes.fp16=m16n8k8: key "core.tensor.shapes.fp16"`) ||
		strings.Contains(err.Error(), "\n") {
		t.Errorf("wgmma with an mma.sync shape: %v", err)
	}
	_, err = Load("a100", []Override{{Path: "machine.core.tensor.flops_per_cycle.fp16", Value: "lots"}})
	if err == nil || !strings.Contains(err.Error(), "want a number") {
		t.Errorf("bad number: %v", err)
	}
}

func TestMMAShape(t *testing.T) {
	good := map[MMAShape][3]int{"m16n8k16": {16, 8, 16}, "m64n256k32": {64, 256, 32}, "m8n8k4": {8, 8, 4}, "none": {}, "m1024n1k1": {1024, 1, 1}}
	for s, want := range good {
		m, n, k, err := s.Dims()
		if err != nil || [3]int{m, n, k} != want {
			t.Errorf("%q: %d %d %d %v; want %v", s, m, n, k, err, want)
		}
	}
	if f := MMAShape("m16n8k16").Flops(); f != 4096 {
		t.Errorf("m16n8k16 flops %v; want 4096", f)
	}
	for _, s := range []MMAShape{"", "None", "m16n8", "16x8x16", "m16n8k16x", "m0n8k16", "m016n8k16", "m2048n8k8", "m16n-8k16", "k16n8m16", "m16n8k99999999999999999999"} {
		if _, _, _, err := s.Dims(); err == nil {
			t.Errorf("%q: no error", s)
		}
		if s.Flops() != 0 {
			t.Errorf("%q: flops %v", s, s.Flops())
		}
	}
}
