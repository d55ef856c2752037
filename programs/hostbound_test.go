package programs

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/davinci-sim/davinci-sim/badinput"
	"github.com/davinci-sim/davinci-sim/hostmem"
)

// The default bound on a run's host memory is 3/4 of the host's (8 GiB
// where that cannot be read), and a build checks its estimate against the
// run's bound (Options.MaxHostBytes): SGEMM-cube 2048³ with full numerics
// is estimated at 48 bytes per element of A, B and C (measured 45) beside
// the run's 48 MiB and its functional chip model's 59 MiB, 684 MiB in all,
// which the refusal quotes — refused at 512 MiB, built at 1 GiB.
func TestHostMemoryBound(t *testing.T) {
	if total, ok := hostmem.Total(); ok {
		if got, want := DefaultMaxHostBytes(), total/4*3>>20<<20; got != want {
			t.Errorf("DefaultMaxHostBytes = %d, want %d", got, want)
		}
	} else if got := DefaultMaxHostBytes(); got != 8<<30 {
		t.Errorf("DefaultMaxHostBytes = %d without the host's memory, want 8 GiB", got)
	}
	f, err := ReadFile("examples/sgemm-cube.yaml")
	if err != nil {
		t.Fatal(err)
	}
	sets := mustSets(t, "program.m=2048", "program.n=2048", "program.k=2048")
	for _, c := range []struct {
		bound    int64
		numerics string
		want     string // "" = built
	}{
		{512 << 20, NumericsFull, `key "numerics": full numerics on 2048×2048×2048 needs about 684MiB of host memory in all (its data 576MiB, its chip model 59MiB and the run's base 48MiB), more than the run may take (512MiB, --max-memory); use sampled or off`},
		{1 << 30, NumericsFull, ""},
		{64 << 20, NumericsSampled, `key "numerics": sampled numerics on 2048×2048×2048 needs about 136MiB of host memory in all (its data 80MiB, its chip model 7MiB and the run's base 48MiB), more than the run may take (64MiB, --max-memory); use off`},
		{64 << 20, NumericsOff, ""},
	} {
		o := Options{Overrides: sets, Numerics: c.numerics, MaxHostBytes: c.bound}
		m, err := MachineFor(f, o)
		if err != nil {
			t.Fatal(err)
		}
		_, err = f.Kind.Build(f, m, o)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("bound %d MiB, %s: %v", c.bound>>20, c.numerics, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("bound %d MiB, %s: %v, want an error containing %q (exit 2: TestHostileInputs)", c.bound>>20, c.numerics, err, c.want)
		}
	}
}

// The LU kinds check their n×n matrix against the run's bound (luBytes:
// 44 bytes an element, measured 36–40): lu-fused n = 16384 with numerics full,
// 11 GiB, is refused at 8 GiB before anything is allocated, as lu-gemm's
// m = 16384 and a100's lu-fused (the GPU builder), quoting the run's whole
// estimate (with the chip model, rounded up to a quarter GiB); at 16 GiB
// it builds.
func TestLUHostMemoryBound(t *testing.T) {
	for _, c := range []struct {
		file, key, want string
	}{
		{"examples/lu-fused-small.yaml", "program.n=16384", "full numerics on n = 16384 needs about 11.25GiB of host memory in all (its data 11.0GiB, its chip model 59MiB and the run's base 48MiB), more than the run may take (8GiB, --max-memory); use numerics off"},
		{"examples/lu-gemm256.yaml", "program.m=16384", "full numerics on m = 16384 needs about 11.25GiB of host memory in all (its data 11.0GiB"},
		{"examples/a100-lu-fused.yaml", "program.n=16384", "full numerics on n = 16384 needs about 11.25GiB of host memory in all (its data 11.0GiB, its kernels' blocks 51MiB, its chip model 15MiB"},
	} {
		f, err := ReadFile(c.file)
		if err != nil {
			t.Fatal(err)
		}
		for _, bound := range []int64{8 << 30, 16 << 30} {
			o := Options{Overrides: mustSets(t, c.key), Numerics: NumericsFull, MaxHostBytes: bound}
			m, err := MachineFor(f, o)
			if err != nil {
				t.Fatal(err)
			}
			_, err = f.Kind.Build(f, m, o)
			if bound == 8<<30 && (err == nil || !strings.Contains(err.Error(), c.want)) {
				t.Errorf("%s %s at 8 GiB: %v, want an error containing %q", c.file, c.key, err, c.want)
			}
			if bound == 16<<30 && err != nil {
				t.Errorf("%s %s at 16 GiB: %v", c.file, c.key, err)
			}
		}
	}
}

// Every refusal of a run for its host memory is marked so
// (badinput.HostMemory) with the bound it passed — a sweep runs such a
// point again under a larger bound — and stays bad input (exit 2): a
// GEMM's and an LU's numerics, a cluster's chip models at fidelity full and
// sampled, an asm program's tensors and outputs, scheme auto's inputs, a
// chip model and a GPU grid's CTAs past the run's bound. A chip model past
// arch.MaxModelBytes, the same bound on every host, is not marked.
func TestHostMemoryRefusalsMarked(t *testing.T) {
	dir := t.TempDir()
	var npy []string
	for _, name := range []string{"a", "b"} {
		if _, err := WriteOutputs(dir, []Output{{Name: name, F32: make([]float32, 1024*1024), Shape: []int{1024, 1024}}}); err != nil {
			t.Fatal(err)
		}
		npy = append(npy, filepath.Join(dir, name+".npy"))
	}
	for _, c := range []struct {
		name, file, src    string // an example file, or a program's text
		machine            string // -m ("": the file's)
		sets               []string
		numerics, fidelity string
		bound              int64
		want               string // in the message
		unmarked           bool
	}{
		{name: "gemm numerics", file: "examples/sgemm-cube.yaml", sets: []string{"program.m=2048", "program.n=2048", "program.k=2048"}, numerics: NumericsFull, bound: 512 << 20,
			want: "full numerics on 2048×2048×2048 needs about 684MiB of host memory in all"},
		{name: "lu numerics", file: "examples/lu-fused-small.yaml", sets: []string{"program.n=16384"}, numerics: NumericsFull, bound: 8 << 30,
			want: "full numerics on n = 16384 needs about 11.25GiB"},
		{name: "lu-gemm numerics", file: "examples/lu-gemm256.yaml", sets: []string{"program.m=16384"}, numerics: NumericsFull, bound: 8 << 30,
			want: "full numerics on m = 16384 needs about 11.25GiB"},
		{name: "cluster chips, fidelity full", file: "examples/lu-cluster-small.yaml", numerics: NumericsOff, bound: 32 << 20,
			want: "at fidelity full the 8 NPUs' chip models"},
		{name: "cluster chip, fidelity sampled", file: "examples/lu-cluster-small.yaml", numerics: NumericsOff, fidelity: "sampled", bound: 4 << 20,
			want: "at fidelity sampled each kernel is simulated alone"},
		{name: "asm tensors", src: "kind: asm\ncores: 1\ngm: [{name: x, addr: 0, shape: [4096, 4096]}]\nasm: |\n  nop\n", bound: 32 << 20,
			want: "the gm tensors total more than the host memory the run may take (32MiB, --max-memory)"},
		{name: "asm outputs", src: "kind: asm\ncores: 1\noutputs: [{name: o, addr: 0, shape: [4096, 4096]}]\nasm: |\n  nop\n", bound: 96 << 20,
			want: "full numerics needs more host memory than the run may take (96MiB, --max-memory)"},
		{name: "scheme auto's inputs", file: "examples/a100-emulated-gemm.yaml", numerics: NumericsOff, bound: 64 << 20,
			sets: []string{"program.m=1024", "program.n=1024", "program.k=1024", "program.scheme=auto", "program.inputs.a=" + npy[0], "program.inputs.b=" + npy[1]},
			want: "scheme auto reads the inputs whole"},
		{name: "chip model", file: "examples/cube-peak.yaml", bound: 1 << 20,
			want: "machine ascend-910a: simulating it would take about 7 MiB of host memory"},
		// (A GM of 64 MiB: the chip model's where index the same for the
		// whole memory and for the program's span. Ozaki's kernels were
		// not followed by the run's estimate before 2026-12-05, and the
		// grid of its product GEMMs refused it under 500 MiB; now the
		// estimate holds its kernels' blocks and their data, and refuses
		// it first. A grid's own refusal is marked too: arch/gpu's
		// TestGridDataFootprint.)
		{name: "ozaki's kernels' blocks", file: "examples/b200-ozaki.yaml", machine: "mi300x", sets: []string{"program.m=256", "program.n=256", "program.k=256", "machine.gm.capacity=64MiB"}, numerics: NumericsFull, bound: 100 << 20,
			want: `full numerics on 256×256×256 needs about 151MiB of host memory in all (its data 19MiB, its kernels' blocks 67MiB, its chip model 16MiB`},
		// (20 M cores of ~5 KiB: the chip's own estimate holds no block
		// slots since 2026-12-04, where 20000 cores passed 16 GiB.)
		{name: "chip model past MaxModelBytes", file: "examples/a100-hgemm.yaml", sets: []string{"machine.cores=20000000"}, numerics: NumericsOff, bound: 32 << 30,
			want: "above the limit of 16 GiB: check keys", unmarked: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := textOrFile(t, c.src, c.file)
			_, err := Execute(f, Options{Machine: c.machine, Overrides: mustSets(t, c.sets...), Numerics: c.numerics, Fidelity: c.fidelity, MaxHostBytes: c.bound}, RunHooks{})
			if err == nil || !strings.Contains(err.Error(), c.want) || !badinput.Is(err) {
				t.Fatalf("got %v, want bad input containing %q", err, c.want)
			}
			bound, ok := badinput.HostMemoryBound(err)
			switch {
			case c.unmarked && ok:
				t.Errorf("marked a refusal for host memory (bound %d): MaxModelBytes is no host's bound", bound)
			case !c.unmarked && (!ok || bound != c.bound):
				t.Errorf("HostMemoryBound = %d, %v; want the run's bound, %d", bound, ok, c.bound)
			}
		})
	}
}

// textOrFile is the program of text src, or, where src is empty, of the
// file (or embedded example) at path.
func textOrFile(t *testing.T, src, path string) *File {
	t.Helper()
	if src != "" {
		return programText(t, src)
	}
	f, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return f
}
