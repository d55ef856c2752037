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
