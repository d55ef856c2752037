package programs

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/davinci-sim/davinci-sim/badinput"
)

// A gm tensor's keys that its init does not read are refused (a file with
// init zero loaded zeros), and init npy takes an array of any shape with
// the tensor's elements (a 1-D file for a 1-D tensor was refused as not
// 2-D).
func TestAsmTensorInitKeys(t *testing.T) {
	dir := t.TempDir()
	v := make([]float32, 16)
	for i := range v {
		v[i] = float32(i)
	}
	if _, err := WriteOutputs(dir, []Output{{Name: "flat", F32: v, Shape: []int{16}}, {Name: "sq", F32: v, Shape: []int{4, 4}}, {Name: "cube", F32: v, Shape: []int{2, 2, 4}}}); err != nil {
		t.Fatal(err)
	}
	tensor := func(keys string) string {
		return "kind: asm\nnumerics: full\ngm:\n  - {name: x, addr: 0, shape: [16], dtype: fp32" + keys + "}\noutputs:\n  - {name: y, addr: 0, shape: [16]}\nasm: nop\n"
	}
	for keys, want := range map[string]string{
		", file: " + filepath.Join(dir, "flat.npy"):     "file " + filepath.Join(dir, "flat.npy") + " applies to init: npy (this tensor's init is zero: the file is not read)",
		", init: uniform, low: 0, high: 1, file: a.npy": "file a.npy applies to init: npy (this tensor's init is uniform",
		", seed: 3": "low, high and seed apply to init: uniform (this tensor's init is zero)",
		", init: npy, file: " + filepath.Join(dir, "sq.npy") + ", low: 1": "low, high and seed apply to init: uniform (this tensor's init is npy)",
		", init: npy": "init npy reads the array in key file (a .npy file): give it",
	} {
		_, err := Execute(programText(t, tensor(keys)), Options{}, RunHooks{})
		if err == nil || !badinput.Is(err) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v; want %q", keys, err, want)
		}
	}
	for _, name := range []string{"flat", "sq", "cube"} {
		res, err := Execute(programText(t, tensor(", init: npy, file: "+filepath.Join(dir, name+".npy"))), Options{}, RunHooks{})
		if err != nil {
			t.Errorf("%s.npy: %v", name, err)
			continue
		}
		if outs := res.Outputs; len(outs) != 1 || len(outs[0].F32) != 16 || outs[0].F32[15] != 15 {
			t.Errorf("%s.npy: outputs %v", name, outs)
		}
	}
}
