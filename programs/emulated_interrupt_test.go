package programs

import (
	"slices"
	"testing"

	"github.com/davinci-sim/davinci-sim/accuracy"
)

// An emulated GEMM interrupted after its simulation, while Finish computes
// the numerics — the golden model's sampled tiles, the FP64 reference of
// the whole C (full), the CPU SGEMM baseline — stops there with the
// interruption, as do scheme auto's sample runs and sgemm's reference;
// dgemm's FP64 inputs are drawn hearing it too (seconds at 4096³ each,
// deaf before).
func TestEmulatedInterruptedPhases(t *testing.T) {
	small := []string{"program.m=256", "program.n=256", "program.k=256", "program.numerics=sampled"}
	full := []string{"program.numerics=full", "program.m=128", "program.n=128", "program.k=64"}
	for _, c := range []struct {
		file  string
		phase string   // the function asking
		sets  []string // beyond small
		want  string   // the error says
	}{
		{"examples/a100-emulated-gemm.yaml", "programs.(*emulatedJob).goldenTile", nil, "computing its numerics"},
		{"examples/a100-emulated-gemm.yaml", "programs.cpuSGEMMTiles", nil, "computing its numerics"},
		{"examples/a100-emulated-gemm.yaml", "programs.referenceGEMMUntil", full, "computing its numerics"},
		{"examples/a100-emulated-gemm.yaml", "programs.cpuSGEMMTiles", full, "computing its numerics"},
		{"examples/a100-emulated-gemm.yaml", "programs.(*emulatedJob).goldenTile", []string{"program.scheme=auto"}, "scheme auto"}, // (its sample runs at once: which says so first varies)
		{"examples/a100-dgemm.yaml", "programs.genFloat64Until", nil, "stopped drawing the inputs"},
		// sgemm's FP64 reference of C (the helper emulated-gemm's shares).
		{"examples/a100-sgemm.yaml", "programs.referenceGEMMUntil", full, "computing its numerics"},
		// The GPU GEMM kinds' check (the golden model of every tile) and
		// dgemm's exact reference and check.
		{"examples/a100-sgemm.yaml", "programs.(*gpuGEMMJob).goldenTile", append(slices.Clone(full), "program.check=true"), "computing its numerics"},
		{"examples/a100-dgemm.yaml", "programs.exactGEMM64Until", []string{"program.numerics=full", "program.m=64", "program.n=64", "program.k=64"}, "computing its numerics"},
		{"examples/a100-dgemm.yaml", "programs.(*gpuGEMMJob).checkFP64", []string{"program.numerics=full", "program.check=true", "program.m=64", "program.n=64", "program.k=64"}, "computing its numerics"},
		// The FP32 inputs' draw (DaVinci, GPU, emulated-gemm on DaVinci).
		{"examples/sgemm-cube.yaml", "programs.genMatrixUntil", nil, "stopped drawing the inputs"},
		{"examples/a100-sgemm.yaml", "programs.genMatrixUntil", nil, "stopped drawing the inputs"},
		{"examples/ascend-910a-emulated-gemm.yaml", "programs.genMatrixUntil", nil, "stopped drawing the inputs"},
		// The inputs' range (program.range), the vanishing ones' too.
		{"examples/sgemm-cube.yaml", "programs.inputRangeUntil", nil, "computing its numerics"},
		{"examples/a100-hgemm.yaml", "programs.inputRangeUntil", nil, "computing its numerics"},
		{"examples/ascend-910a-emulated-gemm.yaml", "programs.inputRangeUntil", nil, "computing its numerics"},
		{"examples/a100-hgemm.yaml", "programs.zeroBounds.inputZerosUntil", []string{"program.inputs.distribution=between", "program.inputs.low=1e-30", "program.inputs.high=1e-29"}, "computing its numerics"},
		// DaVinci GEMMs' full numerics: the reference, the baselines (CPU
		// SGEMM, hgemm's tiles), the check; emulated-gemm's CPU SGEMM.
		{"examples/sgemm-cube.yaml", "programs.referenceGEMMUntil", full, "computing its numerics"},
		{"examples/sgemm-cube.yaml", "programs.cpuSGEMMUntil", full, "computing its numerics"},
		{"examples/sgemm-cube.yaml", "programs.(*gemmPlan).tiles", full, "computing its numerics"},
		{"examples/sgemm-cube.yaml", "programs.(*gemmPlan).golden", append(slices.Clone(full), "program.check=true"), "computing its numerics"},
		{"examples/ascend-910a-emulated-gemm.yaml", "programs.cpuSGEMMUntil", append(slices.Clone(full), "program.baselines=false"), "computing its numerics"},
		// ape-int16's golden model (GPU, DaVinci).
		{"examples/a100-emulated-gemm.yaml", "programs.(*int16Job).goldenPlanes", []string{"program.scheme=ape-int16"}, "computing its numerics"},
		{"examples/ascend-910a-emulated-gemm.yaml", "programs.(*int16Job).goldenPlanes", []string{"program.scheme=ape-int16"}, "computing its numerics"},
		// emulated-gemm's draw and range on GPUs; scheme native's draw and
		// numerics (its job given the context).
		{"examples/a100-emulated-gemm.yaml", "programs.genMatrixUntil", nil, "stopped drawing the inputs"},
		{"examples/a100-emulated-gemm.yaml", "programs.inputRangeUntil", nil, "computing its numerics"},
		{"examples/a100-emulated-gemm.yaml", "programs.genMatrixUntil", []string{"program.scheme=native"}, "stopped drawing the inputs"},
		{"examples/a100-emulated-gemm.yaml", "programs.referenceGEMMUntil", append(slices.Clone(full), "program.scheme=native"), "computing its numerics"},
		// The INT16 and INT8 draws.
		{"examples/a100-emulated-gemm.yaml", "programs.genInt16", []string{"program.scheme=ape-int16"}, "stopped drawing the inputs"},
		{"examples/a100-igemm.yaml", "programs.genInt8", nil, "stopped drawing the inputs"},
	} {
		expectPhaseStop(t, c.file, c.phase, append(slices.Clone(small), c.sets...), c.want)
	}
}

// The references computed a block of rows at a time, hearing a stop, are
// the one-call references bit for bit (m not a multiple of the block;
// tiles inside C), and end at a true.
func TestReferenceGEMMUntil(t *testing.T) {
	const m, k, n = 2*gemmRowBlock + 5, 37, 29
	in := Inputs{Distribution: DistUniform, Seed: 3}
	a, b := genMatrix(in, 1, m, k), genMatrix(in, 2, k, n)
	if got, want := referenceGEMMUntil(m, k, n, a, b, nil), accuracy.ReferenceGEMM(m, k, n, a, b); !slices.Equal(got, want) {
		t.Error("referenceGEMMUntil differs from accuracy.ReferenceGEMM")
	}
	tiles := []errTile{{0, m, 0, n}, {gemmRowBlock - 3, gemmRowBlock + 7, 4, 11}}
	got, ok := cpuSGEMMTiles(a, b, k, n, tiles, nil)
	want := accuracy.CPUSGEMM(m, k, n, a, b)
	tb := make([]float32, k*11)
	for q := 0; q < k; q++ {
		copy(tb[q*11:], b[q*n+4:][:11])
	}
	want = append(want, accuracy.CPUSGEMM(gemmRowBlock+7, k, 11, a[(gemmRowBlock-3)*k:(2*gemmRowBlock+4)*k], tb)...)
	if !ok || !slices.Equal(got, want) {
		t.Error("cpuSGEMMTiles differs from accuracy.CPUSGEMM tile by tile")
	}
	asks := 0
	if referenceGEMMUntil(m, k, n, a, b, func() bool { asks++; return asks == 2 }) != nil || asks != 2 {
		t.Errorf("referenceGEMMUntil went on after its stop said true (%d asks)", asks)
	}
	asks = 0
	if _, ok := cpuSGEMMTiles(a, b, k, n, tiles, func() bool { asks++; return asks == 2 }); ok || asks != 2 {
		t.Errorf("cpuSGEMMTiles went on after its stop said true (%d asks)", asks)
	}
}
