package badinput

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

func TestWrap(t *testing.T) {
	base := errors.New("prog.yaml:3: key \"m\": must be > 0")
	err := Wrap(base)
	if err.Error() != base.Error() {
		t.Errorf("message changed: %q", err)
	}
	if !Is(err) || !Is(fmt.Errorf("run: %w", err)) || !errors.Is(err, base) {
		t.Errorf("Is/errors.Is do not see through the mark")
	}
	if Is(base) || Is(nil) || Wrap(nil) != nil {
		t.Errorf("unmarked errors or nil taken as bad input")
	}
}

// NotFile refuses what is not a file to read, naming what it is and what
// was wanted, and passes files and paths the open will report.
func TestNotFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "p.yaml")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := map[string]string{
		file:                          "",
		filepath.Join(dir, "missing"): "",
		dir:                           dir + " is a directory, not a program file",
	}
	if st, err := os.Stat("/dev/null"); err == nil && st.Mode()&os.ModeCharDevice != 0 {
		cases["/dev/null"] = "/dev/null is a character device, not a program file"
	}
	for path, want := range cases {
		err := NotFile(path, "a program file")
		if (want == "") != (err == nil) || err != nil && err.Error() != want {
			t.Errorf("NotFile(%s) = %v, want %q", path, err, want)
		}
		if AnonymousPipe(path) {
			t.Errorf("AnonymousPipe(%s)", path)
		}
	}
}
