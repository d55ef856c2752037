package programs

import (
	"errors"
	"strings"
	"testing"

	"github.com/davinci-sim/davinci-sim/badinput"
)

// The refusals that named no key, line or --set of their own: emulated-gemm
// on DaVinci finding no square tile that fits (once a refusal in words of
// its own), the matrix units a scheme's pieces need (the --set that took
// them away, or named the machine), a key the file
// writes as a preset (its line: the preset's), and a constraint from an
// AMD machine's MFMA instruction (its core.arch, whose table gives the
// instruction's shape).
func TestRefusalsNameTheirKeyLineAndSet(t *testing.T) {
	const (
		davinci = "kind: emulated-gemm\nmachine: ascend-910a\nscheme: ootomo\nm: 256\nk: 256\nn: 256\nnumerics: off\n"
		a100    = "kind: emulated-gemm\nmachine: a100\nscheme: ape-fp32f\nm: 256\nk: 256\nn: 256\nnumerics: off\n"
		mi210   = "kind: hgemm\nmachine: mi210\nm: 256\nk: 256\nn: 256\nnumerics: off\n"
	)
	// A mi210 taken for CDNA1 (its instructions and registers made CDNA1's,
	// the FP16 one the same name).
	cdna1 := []string{"machine.core.arch=cdna1", "machine.core.agprs=256KiB", "machine.core.mfma.instructions.bf16=v_mfma_f32_32x32x4bf16",
		"machine.core.mfma.instructions.fp64=none", "machine.core.paths.AGPR_GM.bytes_per_cycle=64", "machine.core.paths.AGPR_GM.latency_cycles=245"}
	for _, c := range []struct {
		name, src, machine string
		sets               []string
		want               string // the message after the file's path
	}{
		{"no square tile fits a buffer", davinci, "", []string{"machine.core.buffers.L0A=1KiB"},
			`: key "tiling": no square tile of 176..16 with bk = 64 or 32 fits machine ascend-910a's buffers (the smallest, bm = bn = 16 and bk = 32: bm·bk = 16·32 fp16 ×2 matrices, 2048 bytes, exceeds L0A (1024 bytes; SGEMM-cube Eq. 12)) (the constraint set with --set machine.core.buffers.L0A=1KiB)`},
		{"no square tile fits two buffers", davinci, "", []string{"machine.core.buffers.UB=1KiB", "machine.core.buffers.L1=32KiB"}, // (L1 the large tiles', UB the small ones')
			`: key "tiling": no square tile of 176..16 with bk = 64 or 32 fits machine ascend-910a's buffers (the smallest, bm = bn = 16 and bk = 32: 4 fp32 tiles of bm·bn = 16·16 exceed UB (1024 bytes)) (the constraint set with --set machine.core.buffers.L1=32KiB, --set machine.core.buffers.UB=1KiB)`},
		{"a preset's pieces, at the preset's line", strings.Replace(davinci, "ootomo", "ape-fp32b", 1), "", nil,
			`:3: key "scheme.pieces[0].format": bf16 pieces need a BF16 cube; machine ascend-910a (davinci) has none (core.cube.kstep_bf16 = 0)`},
		{"an unknown scheme, at its line", strings.Replace(a100, "ape-fp32f", "no-such-scheme", 1), "", nil,
			`:3: key "scheme.name": unknown scheme "no-such-scheme" (presets: ape-fp32b, ape-fp32f, ape-fp32m, ape-fp32t, ape-int16, bf16x9, hgemm, le-gemm, markidis, native, ootomo, sgemm-cube; or give scheme.pieces and scheme.groups)`},
		{"native without the FP32 cube a --set took", davinci, "ascend-910b3", []string{"program.scheme=native", "machine.core.cube.kstep_fp32=0"},
			`: key "scheme": native FP32 needs FP32 matrix units (an FP32 cube: core.cube.kstep_fp32 > 0); machine ascend-910b3 has none (its emulated FP32: kind sgemm-cube) (set with --set program.scheme=native; the constraint set with --set machine.core.cube.kstep_fp32=0)`},
		{"ape-int16 without the INT8 cube a --set took", strings.Replace(davinci, "ascend-910a", "ascend-910b3", 1), "", []string{"program.scheme=ape-int16", "machine.core.cube.kstep_int8=0"},
			`: key "scheme": ape-int16 needs the INT8 cube; machine ascend-910b3 has none (core.cube.kstep_int8 = 0) (set with --set program.scheme=ape-int16; the constraint set with --set machine.core.cube.kstep_int8=0)`},
		{"BF16 pieces without the cube mode a --set took", strings.Replace(davinci, "ootomo", "ape-fp32b", 1), "ascend-910b3", []string{"machine.core.cube.kstep_bf16=0"},
			`:3: key "scheme.pieces[0].format": bf16 pieces need a BF16 cube; machine ascend-910b3 (davinci) has none (core.cube.kstep_bf16 = 0) (the constraint set with --set machine.core.cube.kstep_bf16=0)`},
		{"TF32 pieces without the tensor cores a --set took", a100, "", []string{"program.scheme=ape-fp32t", "machine.core.tensor.flops_per_cycle.tf32=0", "machine.core.tensor.shapes.tf32=none", "machine.core.tensor.latency_cycles.tf32=0"},
			`: key "scheme.pieces[0].format": tf32 pieces need TF32 tensor cores; machine a100 (nvidia-sm) has none (set with --set program.scheme=ape-fp32t; the constraint set with --set machine.core.tensor.flops_per_cycle.tf32=0)`},
		{"TF32 pieces on -m's machine", strings.Replace(a100, "ape-fp32f", "ape-fp32t", 1), "v100", nil,
			`:3: key "scheme.pieces[0].format": tf32 pieces need TF32 tensor cores; machine v100 (nvidia-sm) has none (the constraint from the run's machine v100, not the file's)`},
		{"a native FP32 kind on -m's machine", "kind: sgemm\nmachine: ascend-910b3\nm: 256\nk: 256\nn: 256\nnumerics: off\n", "ascend-910a", nil,
			`:1: key "kind": machine ascend-910a has no native FP32 cube (core.cube.kstep_fp32 = 0); use kind sgemm-cube, or a machine such as ascend-910b3 (the constraint from the run's machine ascend-910a, not the file's)`},
		{"-m naming the file's own machine says nothing of it", "kind: sgemm\nmachine: ascend-910a\nm: 256\nk: 256\nn: 256\nnumerics: off\n", "ascend-910a", nil,
			`:1: key "kind": machine ascend-910a has no native FP32 cube (core.cube.kstep_fp32 = 0); use kind sgemm-cube, or a machine such as ascend-910b3`},
		{"TF32 pieces on the machine a --set named", a100, "", []string{"program.scheme=ape-fp32t", "program.machine=v100"},
			`: key "scheme.pieces[0].format": tf32 pieces need TF32 tensor cores; machine v100 (nvidia-sm) has none (set with --set program.scheme=ape-fp32t; the constraint set with --set program.machine=v100)`},
		{"XF32 pieces without the instruction a --set took", a100, "mi300x", []string{"program.scheme=ape-fp32t", "machine.core.mfma.instructions.xf32=none"},
			`: key "scheme.pieces[0].format": tf32 pieces need XF32 matrix cores; machine mi300x (amd-cu) has none (set with --set program.scheme=ape-fp32t; the constraint set with --set machine.core.mfma.instructions.xf32=none)`},
		{"an MFMA's k-step from the architecture a --set gave", mi210, "", append([]string{"program.tiling.bm=64", "program.tiling.bn=64", "program.tiling.bk=4"}, cdna1...),
			`: key "tiling.bk": must be a multiple of 8 in 8..1024 (got 4) (set with --set program.tiling.bk=4; the constraint set with --set machine.core.arch=cdna1)`},
		{"a native FP32 kind on a machine a --set named", "kind: sgemm\nmachine: ascend-910b3\nm: 256\nk: 256\nn: 256\nnumerics: off\n", "", []string{"program.machine=ascend-910a"},
			`:1: key "kind": machine ascend-910a has no native FP32 cube (core.cube.kstep_fp32 = 0); use kind sgemm-cube, or a machine such as ascend-910b3 (the constraint set with --set program.machine=ascend-910a)`},
		{"a GPU kind's matrix type a --set took", "kind: dgemm\nmachine: a100\nunit: matrix\nm: 256\nk: 256\nn: 256\nnumerics: off\n", "", []string{"program.machine=t4"},
			`:3: key "unit": matrix asks for FP64 tensor cores; machine t4 (nvidia-sm) has none (unit: vector runs it on the CUDA-core units) (the constraint set with --set program.machine=t4)`},
		{"ozaki's INT8 cube a --set took", "kind: ozaki\nmachine: ascend-910a\nm: 64\nk: 64\nn: 64\nnumerics: off\n", "", []string{"machine.core.cube.kstep_int8=0"},
			`:2: key "machine": the slice GEMMs need the INT8 cube; ascend-910a has none (core.cube.kstep_int8 = 0) (the constraint set with --set machine.core.cube.kstep_int8=0)`},
		{"ape-int16's INT8 tensor cores on the machine a --set named", a100, "", []string{"program.scheme=ape-int16", "program.machine=v100"},
			`: key "scheme": ape-int16 needs INT8 tensor cores; machine v100 (nvidia-sm) has none (set with --set program.scheme=ape-int16; the constraint set with --set program.machine=v100)`},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, err := readProgramText(t, c.src)
			if err != nil {
				t.Fatal(err)
			}
			_, err = Execute(f, Options{Machine: c.machine, Overrides: mustSets(t, c.sets...)}, RunHooks{})
			err = f.NamedOverride(err)
			var ke *KeyError
			if err == nil || !badinput.Is(err) || !errors.As(err, &ke) {
				t.Fatalf("got %v, want a bad-input KeyError", err)
			}
			if got := err.Error(); !strings.HasPrefix(got, ke.File) || strings.TrimPrefix(got, ke.File) != c.want {
				t.Errorf("got  %q,\nwant the file's path then %q", got, c.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("%q: more than one line", err)
			}
		})
	}
}
