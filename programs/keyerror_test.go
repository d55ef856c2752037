package programs

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/davinci-sim/davinci-sim/badinput"
)

// A refusal of a key's value is located (NamedOverride): the key's line
// where the file wrote it, the --set where one gave the value (no line:
// the file's line holds another value), neither where the value is a
// default; a list entry's refusal has the entry's line. Refusals built
// before the file was decoded (its kind) carry their line themselves.
func TestKeyErrorLocated(t *testing.T) {
	for _, c := range []struct {
		name, src string
		sets      []string
		want      string // the message after the file's path
	}{
		{"the file's value", "kind: sgemm-cube\nmachine: ascend-910a\nm: -5\nn: 64\nk: 64\n", nil,
			`:3: key "m": must be a positive integer (got -5)`},
		{"a --set's value", "kind: sgemm-cube\nmachine: ascend-910a\nm: 64\nn: 64\nk: 64\n", []string{"program.m=-5"},
			`: key "m": must be a positive integer (got -5) (set with --set program.m=-5)`},
		{"in a section", "kind: sgemm-cube\nmachine: ascend-910a\nm: 64\nn: 64\nk: 64\ninputs:\n  distribution: uniform\n  offset_exponent: 900\n", nil,
			`:8: key "inputs.offset_exponent": must be in −100..100; got 900`},
		{"a list entry", "kind: asm\ncores: 1\ngm:\n  - {name: a, addr: 0, shape: [16]}\n  - {name: a, addr: 64, shape: [16]}\nasm: |\n  nop\n", nil,
			`:5: key "gm[1]": named "a" as gm[0] is (a tensor's name is its own)`},
		{"the kind", "machine: a100\n\nkind: no-such-kind\n", nil,
			`:3: key "kind": unknown program kind "no-such-kind"; one of `},
		{"the run's machine", "kind: ozaki\nmachine: b200\nm: 64\nn: 64\nk: 64\n", nil,
			`: key "machine": the slice GEMMs need INT8 tensor cores; machine v100 (nvidia-sm) has none (the run's machine v100, not the file's)`},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, err := readProgramText(t, c.src)
			if err == nil {
				opts := Options{Overrides: mustSets(t, c.sets...)}
				if strings.HasPrefix(c.name, "the run's machine") {
					opts.Machine = "v100" // (-m, a study's machine)
				}
				_, err = Execute(f, opts, RunHooks{})
				err = f.NamedOverride(err)
			}
			var ke *KeyError
			if err == nil || f != nil && !badinput.Is(err) || !errors.As(err, &ke) {
				t.Fatalf("got %v, want a bad-input KeyError", err)
			}
			if got := strings.TrimPrefix(err.Error(), ke.File); !strings.HasPrefix(got, c.want) {
				t.Errorf("got %q, want the file's path then %q", err, c.want)
			}
			if f == nil {
				return
			}
			if again := f.NamedOverride(err); again.Error() != err.Error() { // (located once)
				t.Errorf("located again: %q, was %q", again, err)
			}
		})
	}
}

// readProgramText writes src as program.yaml in a temporary directory and
// reads it: the file, or the error ReadFile refuses it with.
func readProgramText(t *testing.T, src string) (*File, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "program.yaml")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return ReadFile(path)
}

// A refusal whose constraint comes from another key's value names the
// --set that gave that value (KeyError.From): a machine key a --set
// lowered (a tile against the tensor-core shape, tensor memory, shared
// memory, registers, a DaVinci buffer, GM), or another key of the program
// (m a multiple of nb). The refused value's own --set, where there is one,
// comes first; a --set of a key the constraint does not come from is not
// named.
func TestKeyErrorNamesTheConstraintsSet(t *testing.T) {
	const (
		hgemm   = "kind: hgemm\nmachine: a100\nm: 256\nk: 256\nn: 256\nnumerics: off\n"
		b200    = "kind: emulated-gemm\nmachine: b200\nscheme: ootomo\nm: 1024\nk: 1024\nn: 1024\nnumerics: off\ntiling: {bm: 128, bn: 128, bk: 64, stages: 3, warps: 8}\n"
		tiled   = "kind: hgemm\nmachine: a100\nm: 256\nk: 256\nn: 256\nnumerics: off\ntiling: {bm: 128, bn: 128, bk: 32}\n"
		sgemm   = "kind: sgemm-cube\nmachine: ascend-910a\nm: 256\nk: 256\nn: 512\ntiling: {bm: 64, bk: 64, bn: 64}\nnumerics: off\n"
		luGEMM  = "kind: lu-gemm\nm: 8192\nnb: 256\nn_fused: 1\ntrailing: fp32\nnumerics: off\n"
		luFused = "kind: lu-fused\nn: 1024\nnb: 128\nn_fused: 2\nn_fusion: 16\nnumerics: off\n"
	)
	for _, c := range []struct {
		name, src string
		sets      []string
		want      string // the message after the file's path
	}{
		{"a tensor-core shape", hgemm, []string{"machine.core.tensor.shapes.fp16=m3n5k7", "machine.gm.bandwidth=1TB/s"},
			`: key "tiling.bk": must be a multiple of 7 in 7..1024 (got 32) (the constraint set with --set machine.core.tensor.shapes.fp16=m3n5k7)`},
		{"tensor memory", b200, []string{"machine.core.tmem=128KiB"},
			`:8: key "tiling": 128×128×64 tile, 3 stages, 8 warps needs 196608 bytes of tensor memory per CTA for its 3 128×128 accumulators (128 × 128 × 4 bytes each); the SM has 131072 (core.tmem) (the constraint set with --set machine.core.tmem=128KiB)`},
		{"shared memory, the tile set too", hgemm, []string{"program.tiling.bm=128", "program.tiling.bn=128", "program.tiling.bk=32", "machine.core.smem_per_cta=20KiB"},
			`: key "tiling": 128×128×32 tile, 3 stages, 4 warps needs 56832 bytes of shared memory per CTA (3 stages of 128×32 and 32×128 tiles); the machine allows 20480 (core.smem_per_cta) (set with --set program.tiling.bk=32, --set program.tiling.bm=128, --set program.tiling.bn=128; the constraint set with --set machine.core.smem_per_cta=20KiB)`},
		{"registers", tiled, []string{"machine.core.registers=64KiB"},
			`:7: key "tiling": 128×128×32 tile, 3 stages, 4 warps needs 24576 registers per CTA; a SM has 16384 (core.registers) (the constraint set with --set machine.core.registers=64KiB)`},
		{"no default tile fits", hgemm, []string{"machine.core.smem_per_cta=8KiB"},
			`; give tiling.bm, bn, bk, stages, warps (the constraint set with --set machine.core.smem_per_cta=8KiB)`},
		{"a DaVinci buffer", sgemm, []string{"machine.core.buffers.L0A=4KiB"},
			`:6: key "tiling": bm·bk = 64·64 fp16, 8192 bytes, exceeds L0A (4096 bytes; SGEMM-cube Eq. 12) (the constraint set with --set machine.core.buffers.L0A=4KiB)`},
		{"the machine's cores", sgemm + "cores: 16\n", []string{"machine.cores=8"},
			`:8: key "cores": must be in 0..8 (the machine's cores; 0 = all of them); got 16 (the constraint set with --set machine.cores=8)`},
		{"a GPU's GM", hgemm, []string{"machine.gm.capacity=256KiB"},
			`:3: key "m": A, B and C need 524288 bytes of global memory; machine a100 has 262144 (gm.capacity) (the constraint set with --set machine.gm.capacity=256KiB)`},
		{"another key of the program", luGEMM, []string{"program.nb=100000"},
			`:2: key "m": must be a positive multiple of nb = 100000 (got 8192) (the constraint set with --set program.nb=100000)`},
		{"both keys set", luGEMM, []string{"program.m=1000", "program.nb=100000"},
			`: key "m": must be a positive multiple of nb = 100000 (got 1000) (set with --set program.m=1000; the constraint set with --set program.nb=100000)`},
		{"lu-gemm's plan", luGEMM, []string{"machine.gm.capacity=256MiB", "program.n_fused=2"},
			`:2: key "m": m + n_fused·nb = 8704: the matrices need 615514112 bytes of GM; machine ascend-910a has 268435456 (the constraint set with --set machine.gm.capacity=256MiB, --set program.n_fused=2)`},
		{"lu-fused's n", luFused, []string{"program.nb=96"},
			`:2: key "n": must be a positive multiple of nb = 96 (got 1024) (the constraint set with --set program.nb=96)`},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, err := readProgramText(t, c.src)
			if err != nil {
				t.Fatal(err)
			}
			_, err = Execute(f, Options{Overrides: mustSets(t, c.sets...)}, RunHooks{})
			err = f.NamedOverride(err)
			var ke *KeyError
			if err == nil || !badinput.Is(err) || !errors.As(err, &ke) {
				t.Fatalf("got %v, want a bad-input KeyError", err)
			}
			if got := strings.TrimPrefix(err.Error(), ke.File); !strings.HasSuffix(got, c.want) {
				t.Errorf("got  %q,\nwant the file's path then …%q", err, c.want)
			}
			if again := f.NamedOverride(err); again.Error() != err.Error() { // (named once)
				t.Errorf("named again: %q, was %q", again, err)
			}
		})
	}
}
