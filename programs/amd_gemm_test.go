package programs

import (
	"strings"
	"testing"
)

// The GEMM kinds on amd-cu machines: simulated C bit for bit equal to the
// golden model (the examples set check: true) for hgemm, igemm and dgemm on
// the MI210 and MI300X (and hgemm on the MI100, whose MFMAs accumulate in
// AccVGPRs), sgemm on the VALUs, with the errors each format allows; and the
// lane each runs on. Also the kernel without staging (fragments loaded from
// global memory, staging: none) on both kinds.
func TestAMDGEMMKinds(t *testing.T) {
	for _, c := range []struct {
		file, machine string
		sets          []string
		bitsLo        float64
		bitsHi        float64
		lane          string
	}{
		{"mi210-hgemm", "mi210", []string{"program.m=300", "program.n=260", "program.k=130"}, 8, 14, "mfma"},
		{"mi210-hgemm", "mi300x", []string{"program.m=130", "program.n=300", "program.k=200"}, 8, 14, "mfma"},
		{"mi210-hgemm", "mi100", []string{"program.m=70", "program.n=90", "program.k=100"}, 8, 14, "mfma"},
		{"mi210-hgemm", "mi210", []string{"program.tiling.bm=64", "program.tiling.bn=32", "program.tiling.bk=16",
			"program.tiling.stages=3", "program.tiling.warps=2", "program.m=100", "program.n=70", "program.k=80"}, 8, 14, "mfma"},
		{"mi210-hgemm", "mi210", []string{"program.tiling.staging=shared", "program.m=150", "program.n=100", "program.k=96"}, 8, 14, "mfma"},
		{"mi210-hgemm", "a100", []string{"program.tiling.staging=registers", "program.m=150", "program.n=300", "program.k=200"}, 8, 14, "tensor"},
		{"mi210-hgemm", "mi210", []string{"program.tiling.staging=none", "program.m=150", "program.n=100", "program.k=96"}, 8, 14, "mfma"},
		{"mi210-hgemm", "a100", []string{"program.tiling.staging=none", "program.m=150", "program.n=300", "program.k=200"}, 8, 14, "tensor"},
		{"a100-igemm", "a100", []string{"program.tiling.staging=none", "program.m=130", "program.n=40", "program.k=96"}, 31, 31, "tensor"},
		{"a100-sgemm", "a100", []string{"program.tiling.staging=none", "program.m=130", "program.n=70", "program.k=100"}, 20, 32, "fma"},
		{"a100-igemm", "mi210", []string{"program.m=130", "program.n=40", "program.k=96"}, 31, 31, "mfma"},
		{"a100-igemm", "mi300x", []string{"program.m=70", "program.n=300", "program.k=200"}, 31, 31, "mfma"},
		{"a100-dgemm", "mi210", []string{"program.m=70", "program.n=90", "program.k=50"}, 45, 60, "mfma"},
		{"a100-dgemm", "mi300x", []string{"program.m=130", "program.n=40", "program.k=37"}, 45, 60, "mfma"},
		{"a100-dgemm", "mi100", []string{"program.m=40", "program.n=30", "program.k=20"}, 45, 60, "valu"},
		{"a100-sgemm", "mi210", []string{"program.unit=vector", "program.m=130", "program.n=70", "program.k=100"}, 20, 32, "valu"},
	} {
		res, err := Execute(mustRead(t, "examples/"+c.file+".yaml"), Options{Machine: c.machine, Overrides: mustSets(t, c.sets...)}, RunHooks{})
		if err != nil {
			t.Fatalf("%s on %s %v: %v", c.file, c.machine, c.sets, err)
		}
		if res.Failure != nil {
			t.Fatalf("%s on %s %v: %v", c.file, c.machine, c.sets, res.Failure)
		}
		if e := res.Report.Error; e == nil || e.Bits < c.bitsLo || e.Bits > c.bitsHi {
			t.Errorf("%s on %s %v: error %+v", c.file, c.machine, c.sets, e)
		}
		if !strings.Contains(strings.Join(res.Report.Notes, "\n"), "bit for bit") {
			t.Errorf("%s on %s %v: no golden-model check in the notes %q", c.file, c.machine, c.sets, res.Report.Notes)
		}
		if p := res.Report.Pipes[c.lane]; p.Instrs == 0 {
			t.Errorf("%s on %s %v: lane %s ran no instructions", c.file, c.machine, c.sets, c.lane)
		}
	}
}

// Every byte of A and B comes from HBM at least once (the caches start
// cold), also when a slice's copies run as one transfer through the
// MI300X's L2 and Infinity Cache (LLC hits are capped per copy, not over
// the group: a warm copy's L2 hits must not make room for LLC "hits" on a
// cold one).
func TestAMDHBMReadsEveryInput(t *testing.T) {
	res, err := Execute(mustRead(t, "examples/mi210-hgemm.yaml"), Options{Machine: "mi300x", Numerics: NumericsOff,
		Overrides: mustSets(t, "program.m=4096", "program.n=4096", "program.k=2048")}, RunHooks{})
	if err != nil {
		t.Fatal(err)
	}
	const inputs = 2 * (4096*2048 + 2048*4096) // FP16 A and B
	if got := res.Stats.Traffic.HBMRead; got < inputs {
		t.Errorf("HBM read %d bytes, less than A and B's %d", got, inputs)
	}
}

// What an AMD machine lacks is refused with one line naming the key:
// MFMA forms or types the architecture does not have, LDS and VGPR
// overflow, FP32 MFMA numerics no preset models.
func TestAMDBadInput(t *testing.T) {
	for _, c := range []struct {
		file, machine string
		sets          []string
		want          string
	}{
		{"mi210-hgemm", "mi210", []string{"machine.core.mfma.instructions.fp8=v_mfma_f32_32x32x16_fp8_fp8"}, `"core.mfma.instructions.fp8": must be none: cdna2 has no FP8 MFMA`},
		{"mi210-hgemm", "mi100", []string{"machine.core.mfma.instructions.bf16=v_mfma_f32_32x32x8bf16_1k"}, `"v_mfma_f32_32x32x8bf16_1k" is not a BF16 MFMA instruction of cdna1`},
		{"mi210-hgemm", "mi210", []string{"machine.core.mfma.instructions.fp16=v_mfma_i32_32x32x8i8"}, "takes INT8 inputs, not FP16"},
		{"mi210-hgemm", "mi210", []string{"program.tiling.bm=256", "program.tiling.bn=256", "program.tiling.bk=64", "program.tiling.warps=4"}, "core.lds_per_workgroup"},
		{"mi210-hgemm", "mi210", []string{"program.tiling.bm=256", "program.tiling.bn=256", "program.tiling.bk=32", "program.tiling.stages=2", "program.tiling.warps=4", "program.tiling.staging=shared"}, "core.lds_per_workgroup"},
		{"mi210-hgemm", "mi210", []string{"program.tiling.staging=lds"}, `key "tiling.staging"`},
		{"mi210-hgemm", "mi210", []string{"program.tiling.bm=128", "program.tiling.bn=128", "program.tiling.bk=32", "program.tiling.stages=3", "program.tiling.staging=registers"}, "must be 2 with staging: registers"},
		{"mi210-hgemm", "mi210", []string{"program.tiling.bm=256", "program.tiling.bn=128", "program.tiling.bk=16", "program.tiling.stages=2", "program.tiling.warps=1"}, "core.max_vgprs_per_lane"},
		{"a100-sgemm", "mi210", nil, "no model of FP32 MFMA instructions"},
		{"a100-tf32gemm", "mi210", nil, "needs XF32 matrix cores"},
		{"a100-igemm", "mi210", []string{"program.unit=vector"}, "do not compute INT8"},
		{"a100-dgemm", "mi100", []string{"program.unit=matrix"}, `key "unit": matrix asks for FP64 matrix cores`},
		{"mi210-matrix-peak", "mi210", []string{"program.dtype=fp8"}, "no fp8 matrix cores"},
		{"mi210-matrix-peak", "mi100", []string{"program.dtype=fp64"}, "no fp64 matrix cores"},
	} {
		_, err := Execute(mustRead(t, "examples/"+c.file+".yaml"), Options{Machine: c.machine, Overrides: mustSets(t, c.sets...)}, RunHooks{})
		wantBadInputLine(t, err, c.want, c.file, c.machine, c.sets)
	}
}

// On CDNA1 a workgroup's accumulators live in the AGPRs and its other
// registers in the VGPRs (the report's buffers say so): MI100 HGEMM's
// 256×128 tile keeps 32768 FP32 accumulators, 128 KiB of AGPRs, the rest
// of its registers in the VGPRs. (Until 2026-12-02 every register filled
// the VGPRs first: AGPR 0 B, VGPR 232 KiB.)
func TestAMDAccumulatorsInAGPRs(t *testing.T) {
	res, err := Execute(mustRead(t, "examples/mi210-hgemm.yaml"), Options{Machine: "mi100", Numerics: NumericsOff,
		Overrides: mustSets(t, "program.m=256", "program.n=256", "program.k=256", "program.tiling.bm=256", "program.tiling.bn=128", "program.tiling.bk=64")}, RunHooks{})
	if err != nil {
		t.Fatal(err)
	}
	agpr, vgpr := res.Report.Buffers["AGPR"], res.Report.Buffers["VGPR"]
	if agpr.PeakBytes != 4*256*128 {
		t.Errorf("AGPR peak %d bytes, want the tile's 32768 accumulators' %d", agpr.PeakBytes, 4*256*128)
	}
	if vgpr.PeakBytes <= 0 || vgpr.PeakBytes >= vgpr.CapacityBytes/2 {
		t.Errorf("VGPR peak %d bytes of %d: want the tile's other registers, under half", vgpr.PeakBytes, vgpr.CapacityBytes)
	}
}
