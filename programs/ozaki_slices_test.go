package programs

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/davinci-sim/davinci-sim/badinput"
)

// slices and mantissa_bits are alternatives: both by --set, or both in
// the file, are refused (one line naming both keys, bad input); a --set of
// one replaces the file's other, and the run reports the bits its slices
// hold (mantissa_bits 100 was reported beside slices 3 and ignored).
func TestOzakiSlicesOrMantissaBits(t *testing.T) {
	small := []string{"program.m=64", "program.n=64", "program.k=64"}
	_, err := runOzaki(t, "b200", append(small, "program.slices=3", "program.mantissa_bits=100")...)
	if err == nil || !strings.Contains(err.Error(), `"slices"`) || !strings.Contains(err.Error(), "mantissa_bits") ||
		!errors.Is(err, badinput.ErrBadInput) || strings.Contains(err.Error(), "\n") {
		t.Errorf("both by --set: %v", err)
	}
	dir := t.TempDir()
	both := filepath.Join(dir, "both.yaml")
	if err := os.WriteFile(both, []byte("kind: ozaki\nmachine: b200\nm: 64\nk: 64\nn: 64\nprecision: fixed\nslices: 4\nmantissa_bits: 31\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := ReadFile(both)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Execute(f, Options{}, RunHooks{}); err == nil || !strings.Contains(err.Error(), "not both") || !errors.Is(err, badinput.ErrBadInput) {
		t.Errorf("both in the file: %v", err)
	}
	// The file's mantissa_bits (55) gives way to --set slices, and the
	// file's slices to --set mantissa_bits.
	for _, c := range []struct {
		file bool
		sets []string
		bits int
		want string
	}{
		{false, []string{"program.slices=3"}, 23, "forced: 3 slices (23 bits)"},
		{false, []string{"program.slices=26", "program.precision=fixed"}, 207, "fixed: 26 slices (207 bits)"},
		{true, []string{"program.mantissa_bits=31"}, 31, "fixed: 31 bits"},
	} {
		var res *Result
		if c.file {
			only := filepath.Join(dir, "slices.yaml")
			if err := os.WriteFile(only, []byte("kind: ozaki\nmachine: b200\nm: 64\nk: 64\nn: 64\nprecision: fixed\nslices: 4\nnumerics: sampled\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			f, err := ReadFile(only)
			if err != nil {
				t.Fatal(err)
			}
			res, err = Execute(f, Options{Overrides: mustSets(t, c.sets...)}, RunHooks{})
			if err != nil {
				t.Fatal(err)
			}
		} else {
			var err error
			if res, err = runOzaki(t, "b200", append(append([]string{"program.numerics=sampled"}, small...), c.sets...)...); err != nil {
				t.Fatal(err)
			}
		}
		prog := res.Report.Program
		if prog["mantissa_bits"] != c.bits || !strings.HasPrefix(prog["decision"].(string), c.want) {
			t.Errorf("%v: mantissa_bits %v, decision %q; want %d, %q…", c.sets, prog["mantissa_bits"], prog["decision"], c.bits, c.want)
		}
	}
}

// Ozaki II's moduli are mantissa_bits' alternative as slices are Ozaki
// I's: both by --set are refused (moduli 4 with mantissa_bits 60 ran at 14
// bits and reported 60), a --set of moduli replaces the file's bits, and
// the bits reported are those the moduli hold (53 was reported for 76).
func TestOzakiIIModuliOrBits(t *testing.T) {
	run := func(sets ...string) (*Result, error) {
		f := programText(t, "kind: ozaki\nmachine: a100\nmethod: ozaki-ii\nm: 16\nk: 16\nn: 16\nnumerics: off\nmantissa_bits: 53\n")
		return Execute(f, Options{Overrides: mustSets(t, sets...)}, RunHooks{})
	}
	_, err := run("program.moduli=4", "program.mantissa_bits=60")
	if err == nil || !strings.Contains(err.Error(), `key "moduli": give moduli or mantissa_bits, not both (moduli 4 hold 14 bits; mantissa_bits 60)`) ||
		!errors.Is(err, badinput.ErrBadInput) || strings.Contains(err.Error(), "\n") {
		t.Errorf("both by --set: %v", err)
	}
	res, err := run("program.moduli=20")
	if err != nil {
		t.Fatal(err)
	}
	if p := res.Report.Program; p["mantissa_bits"] != p["bits"] || p["bits"] == 53 {
		t.Errorf("moduli 20: mantissa_bits %v, bits %v; want the moduli's bits in both", p["mantissa_bits"], p["bits"])
	}
}
