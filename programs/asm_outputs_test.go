package programs

import (
	"strings"
	"testing"

	"github.com/davinci-sim/davinci-sim/badinput"
)

// Outputs whose files (NAME.npy) would collide are refused at load, naming
// the key, both names and the files: names that differ only in case (one
// file on macOS's and Windows' file systems) and a name that is another's
// file name (y.npy, written as y.npy.npy, beside y, written as y.npy).
// Names that only look alike pass.
func TestAsmOutputFilesCollide(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want string // "" = accepted
	}{
		{"Y", "y", `key "outputs[1]": output name "y" and outputs[0]'s "Y": their files Y.npy and y.npy are one file on a case-insensitive file system (macOS, Windows): names must differ in more than case`},
		{"result_C", "RESULT_c", `key "outputs[1]": output name "RESULT_c" and outputs[0]'s "result_C": their files result_C.npy and RESULT_c.npy are one file`},
		{"y.npy", "y", `key "outputs[1]": output name "y" and outputs[0]'s "y.npy": y is written as y.npy, the other's name (the other is written as y.npy.npy): give output names without .npy`},
		{"y", "Y.NPY", `key "outputs[1]": output name "Y.NPY" and outputs[0]'s "y": y is written as y.npy, the other's name (the other is written as Y.NPY.npy)`},
		{"y", "y.npy.npy", ""},
		{"y", "y2", ""},
		{"y", "y.np", ""},
	} {
		src := "kind: asm\noutputs:\n  - {name: " + c.a + ", addr: 0, shape: [4, 4]}\n  - {name: " + c.b + ", addr: 64, shape: [4, 4]}\nasm: nop\n"
		_, err := Execute(programText(t, src), Options{}, RunHooks{})
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s, %s: %v", c.a, c.b, err)
		case c.want != "" && (err == nil || !badinput.Is(err) || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n")):
			t.Errorf("%s, %s: %v; want one line of bad input containing %q", c.a, c.b, err, c.want)
		}
	}
}

// An output too large is refused for its size, naming its shape (it was
// "needs a name, a positive shape and dtype", all three given).
func TestAsmOutputTooLarge(t *testing.T) {
	src := "kind: asm\noutputs:\n  - {name: y, addr: 4096, shape: [100000, 100000], dtype: fp32}\nasm: nop\n"
	_, err := Execute(programText(t, src), Options{}, RunHooks{})
	want := `key "outputs[0].shape": [100000 100000]: must be positive, at most 268435456 elements`
	if err == nil || !badinput.Is(err) || !strings.Contains(err.Error(), want) {
		t.Errorf("%v; want bad input containing %q", err, want)
	}
}
