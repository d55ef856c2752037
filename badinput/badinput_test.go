package badinput

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
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

// ClipMiddle keeps a long message's start and its end — the constraint
// after a quoted hostile input — and says how long it was.
func TestClipMiddle(t *testing.T) {
	msg := `expression "` + strings.Repeat("1+", 500) + `" ends early`
	got := ClipMiddle(msg, 400)
	if len(got) > 460 || !strings.HasPrefix(got, `expression "1+1+`) || !strings.HasSuffix(got, `" ends early`) || !strings.Contains(got, "(1024 bytes in all)") {
		t.Errorf("ClipMiddle: %q", got)
	}
	if got := ClipMiddle("short", 400); got != "short" {
		t.Errorf("short message changed: %q", got)
	}
	// Rune boundaries: no broken UTF-8 at either cut.
	if got := ClipMiddle(strings.Repeat("é", 300), 101); !utf8.ValidString(got) {
		t.Errorf("cut inside a rune: %q", got)
	}
}
