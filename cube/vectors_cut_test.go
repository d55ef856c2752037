package cube

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/davinci-sim/davinci-sim/fp"
)

// A vector file cut anywhere in its gzip stream is refused as truncated,
// whatever the cut left of its last line (it was read as a bad pattern, a
// value not exact in the format, …).
func TestVectorFileCutAnywhere(t *testing.T) {
	src := filepath.Join("..", "testdata", "tc-vectors", "A100", "fp16")
	for _, name := range []string{"a_A100_fp16.txt.gz", "c_A100_fp32.txt.gz", "d_A100_fp32.txt.gz"} {
		data, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			t.Fatal(err)
		}
		read := readBinLines
		if strings.HasPrefix(name, "a_") {
			read = func(p string) ([]uint32, error) { _, err := readHexRows(p, fp.FP16); return nil, err }
		}
		dir := t.TempDir()
		for i := 1; i <= 40; i++ {
			cut := 20 + (len(data)-28)*i/41 // (past the gzip header, before the trailer's last bytes)
			path := filepath.Join(dir, name)
			if err := os.WriteFile(path, data[:cut], 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := read(path)
			if err == nil || !strings.Contains(err.Error(), "unexpected EOF") {
				t.Errorf("%s cut at %d of %d: %v, want the stream's truncation", name, cut, len(data), err)
			}
		}
	}
}
