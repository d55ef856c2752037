package programs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/davinci-sim/davinci-sim/badinput"
)

// An assembly file (file or streams[i]) that is not a regular file, or not
// text, is refused as such, in one line naming the key and the path:
// /dev/zero read 64 MiB to be "larger than 64 MiB; not a assembly file", a
// binary file's bytes were an unknown mnemonic.
func TestAsmFileNotRegularOrText(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	bin := write("bin.s", []byte("nop\nnop\n\x7fELF\x02\x01\x00\x00"))
	big := filepath.Join(dir, "big.s")
	fh, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := fh.Truncate(65 << 20); err != nil { // (sparse)
		t.Fatal(err)
	}
	fh.Close()
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	ok := write("ok.s", []byte("nop\n"))
	cases := []struct{ key, value, want string }{
		{"file", sub, `key "file": assembly file: ` + sub + ` is a directory, not an assembly file`},
		{"file", bin, `key "file": assembly file: ` + bin + ` is not text (a NUL byte on line 3): not an assembly file`},
		{"file", big, `key "file": assembly file: ` + big + ` is larger than 64 MiB, more than any assembly file holds`},
		{"streams", "[" + ok + ", " + sub + "]", `key "streams[1]": assembly file: ` + sub + ` is a directory, not an assembly file`},
	}
	if _, err := os.Stat("/dev/zero"); err == nil {
		cases = append(cases, struct{ key, value, want string }{"file", "/dev/zero", `key "file": assembly file: /dev/zero is a character device, not an assembly file`})
	}
	for _, c := range cases {
		f := programText(t, "kind: asm\nnumerics: off\n"+c.key+": "+c.value+"\n")
		_, err := Execute(f, Options{}, RunHooks{})
		if err == nil || !badinput.Is(err) || !strings.HasSuffix(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %s: %v; want one line of bad input ending %q", c.key, c.value, err, c.want)
		}
	}
}
