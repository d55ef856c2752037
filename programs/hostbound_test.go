package programs

import (
	"strings"
	"testing"

	"github.com/davinci-sim/davinci-sim/hostmem"
)

// The default bound on a run's host memory is 3/4 of the host's (8 GiB
// where that cannot be read), and a build checks its estimate against the
// run's bound (Options.MaxHostBytes): SGEMM-cube 2048³ with full numerics
// is estimated at 48 bytes per element of A, B and C (measured 45) over the
// run's 48 MiB, 624 MiB — refused at 512 MiB, built at 1 GiB.
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
		{512 << 20, NumericsFull, `key "numerics": full numerics on 2048×2048×2048 needs about 624MiB of host memory, more than the run may take (512MiB, --max-memory); use sampled or off`},
		{1 << 30, NumericsFull, ""},
		{64 << 20, NumericsSampled, `key "numerics": sampled numerics on 2048×2048×2048 needs about 128MiB of host memory, more than the run may take (64MiB, --max-memory); use off`},
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
// 40 bytes an element, measured 36): lu-fused n = 16384 with numerics full,
// 10 GiB, is refused at 8 GiB before anything is allocated, as lu-gemm's
// m = 16384 and a100's lu-fused (the GPU builder); at 16 GiB it builds.
func TestLUHostMemoryBound(t *testing.T) {
	for _, c := range []struct {
		file, key, want string
	}{
		{"examples/lu-fused-small.yaml", "program.n=16384", "full numerics on n = 16384 needs about 10.0GiB of host memory, more than the run may take (8GiB, --max-memory); use numerics off"},
		{"examples/lu-gemm256.yaml", "program.m=16384", "full numerics on m = 16384 needs about 10.0GiB of host memory"},
		{"examples/a100-lu-fused.yaml", "program.n=16384", "full numerics on n = 16384 needs about 10.0GiB of host memory"},
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
