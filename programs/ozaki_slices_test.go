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
