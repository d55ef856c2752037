package cube

import (
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/davinci-sim/davinci-sim/badinput"
	"github.com/davinci-sim/davinci-sim/fp"
)

// Recorded tensor-core vectors (shared/tc-vectors, see its README): per GPU
// and input format a directory holding a_<GPU>_<fmt>.txt.gz,
// b_<GPU>_<fmt>.txt.gz (K hex FP32 patterns per line), c_<GPU>_fp32.txt.gz
// and d_<GPU>_<out>.txt.gz (one 32-character binary FP32 pattern per line).

// gpuModels maps the recorded GPU names (case-insensitive) to presets.
var gpuModels = map[string]string{
	"v100": "v100", "t4": "t4", "a100": "a100", "a2": "a100", "ada": "ada", "l40s": "ada",
	"h100": "h100", "h200": "h100", "b200": "b200",
}

// GPUModel returns the preset that models the named GPU of the recorded
// vectors (A2 → a100, L40S → ada, H200 → h100).
func GPUModel(gpu string) (string, bool) {
	m, ok := gpuModels[strings.ToLower(gpu)]
	return m, ok
}

// VectorSet names one recorded file set: a GPU, an input format and an output
// format.
type VectorSet struct {
	GPU    string    // directory name, e.g. "A2"
	Model  string    // preset that models it, e.g. "a100"
	Input  fp.Format // input format (directory name)
	Output fp.Format // output format (suffix of the d file)
	A, B   string    // paths of the a and b files
	C      string    // path of the c file; "" when c is ignored (Hopper fp8 was recorded with c = 0)
	D      string    // path of the d file
}

// FindVectorSets returns every file set under dir, sorted by GPU, input and
// output. Every GPU directory must map to a preset. A format directory holds
// the set of FP32 results (a, b, c and the FP32 d file: the recorded vectors
// have FP32 results for every GPU and input format) and, where its FP16 d
// file is there, the set of FP16 results, which shares a, b and c. Every
// file of a set must be there: one missing, the FP32 d file too, is an error
// naming it (a set is never dropped).
func FindVectorSets(dir string) ([]VectorSet, error) {
	gpus, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("cube: vectors: %w", err)
	}
	var sets []VectorSet
	for _, g := range gpus {
		if !isDir(filepath.Join(dir, g.Name())) {
			continue
		}
		gpu := g.Name()
		model, ok := GPUModel(gpu)
		if !ok {
			return nil, fmt.Errorf("cube: vectors: %s: unknown GPU %q (known: V100, T4, A100, A2, Ada, L40S, H100, H200, B200)", filepath.Join(dir, gpu), gpu)
		}
		fmts, err := os.ReadDir(filepath.Join(dir, gpu))
		if err != nil {
			return nil, fmt.Errorf("cube: vectors: %w", err)
		}
		for _, fd := range fmts {
			if !isDir(filepath.Join(dir, gpu, fd.Name())) {
				continue
			}
			fdir := filepath.Join(dir, gpu, fd.Name())
			in, ok := fp.ParseFormat(fd.Name())
			if !ok {
				return nil, fmt.Errorf("cube: vectors: %s: unknown input format %q", fdir, fd.Name())
			}
			files, err := os.ReadDir(fdir)
			if err != nil {
				return nil, fmt.Errorf("cube: vectors: %w", err)
			}
			// Every format directory has a set of FP32 results: its d file
			// is required, as a, b and c are (one missing was skipped, and
			// the check passed on the other sets).
			prefix := "d_" + gpu + "_"
			outs := []fp.Format{fp.FP32}
			for _, f := range files {
				n := f.Name()
				if strings.HasPrefix(n, prefix) && strings.HasSuffix(n, ".txt.gz") {
					o, ok := fp.ParseFormat(strings.TrimSuffix(strings.TrimPrefix(n, prefix), ".txt.gz"))
					if !ok || (o != fp.FP32 && o != fp.FP16) {
						return nil, fmt.Errorf("cube: vectors: %s: unknown output format in the file name", filepath.Join(fdir, n))
					}
					if o == fp.FP16 {
						outs = append(outs, o)
					}
				}
			}
			// Hopper FP8 FP32 results were recorded with c = 0 (README); the
			// FP16 results depend on the c file (H100 and H200 share a and b
			// but not c, and their FP16 results differ), so c is used there.
			hopperFP8 := model == "h100" && (in == fp.E4M3 || in == fp.E5M2)
			base := VectorSet{GPU: gpu, Model: model, Input: in,
				A: filepath.Join(fdir, "a_"+gpu+"_"+fd.Name()+".txt.gz"),
				B: filepath.Join(fdir, "b_"+gpu+"_"+fd.Name()+".txt.gz"),
				C: filepath.Join(fdir, "c_"+gpu+"_fp32.txt.gz")}
			for _, p := range []string{base.A, base.B, base.C, filepath.Join(fdir, prefix+"fp32.txt.gz")} {
				if _, err := os.Stat(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
					return nil, fmt.Errorf("cube: vectors: %w", err)
				} else if err != nil {
					return nil, fmt.Errorf("cube: vectors: missing file %s (a format folder holds a_%s_%s, b_%s_%s, c_%s_fp32 and d_%s_fp32; d_%s_fp16 is optional)",
						p, gpu, fd.Name(), gpu, fd.Name(), gpu, gpu, gpu)
				}
			}
			for _, o := range outs {
				s := base
				s.Output = o
				s.D = filepath.Join(fdir, prefix+o.String()+".txt.gz")
				if hopperFP8 && o == fp.FP32 {
					s.C = ""
				}
				sets = append(sets, s)
			}
		}
	}
	sort.SliceStable(sets, func(i, j int) bool {
		x, y := sets[i], sets[j]
		if x.GPU != y.GPU {
			return x.GPU < y.GPU
		}
		if x.Input != y.Input {
			return x.Input < y.Input
		}
		return x.Output < y.Output
	})
	return sets, nil
}

// VectorData is a loaded file set: A[i], B[i] hold the input patterns (in
// the set's input format) of dot product i, C[i] and D[i] FP32 patterns
// (C[i] = 0 where c is ignored).
type VectorData struct {
	A, B [][]uint32
	C, D []uint32
}

// isDir reports whether path is a directory, following symbolic links
// (a GPU's folder linked in from elsewhere).
func isDir(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.IsDir()
}

// maxVectorLines bounds the lines of a vector file (the recorded sets have
// 5000): a hostile file of millions decompresses to gigabytes.
const maxVectorLines = 1 << 20

// maxVectorLine bounds a vector file's line in bytes (the recorded sets'
// are under 100).
const maxVectorLine = 1 << 20

// Load reads the set's files. Errors name the file and line.
func (s VectorSet) Load() (*VectorData, error) {
	var v VectorData
	var err error
	if v.A, err = readHexRows(s.A, s.Input); err != nil {
		return nil, err
	}
	if v.B, err = readHexRows(s.B, s.Input); err != nil {
		return nil, err
	}
	if v.D, err = readBinLines(s.D); err != nil {
		return nil, err
	}
	if s.C != "" {
		if v.C, err = readBinLines(s.C); err != nil {
			return nil, err
		}
	} else {
		v.C = make([]uint32, len(v.D))
	}
	n := len(v.A)
	if n == 0 {
		return nil, fmt.Errorf("cube: vectors: %s has no dot products", s.A)
	}
	for _, x := range []struct {
		name string
		n    int
	}{{s.B, len(v.B)}, {s.C, len(v.C)}, {s.D, len(v.D)}} {
		if x.name != "" && x.n != n {
			return nil, fmt.Errorf("cube: vectors: %s has %d lines, %s has %d", x.name, x.n, s.A, n)
		}
	}
	for i := range v.A {
		if len(v.A[i]) != len(v.B[i]) {
			return nil, fmt.Errorf("cube: vectors: line %d: %d entries in %s but %d in %s", i+1, len(v.A[i]), s.A, len(v.B[i]), s.B)
		}
	}
	return &v, nil
}

// streamErr records the first error other than io.EOF its reader
// returned: a truncated or corrupt gzip stream's, which the scanner gives
// only once the lines it read are used up — the cut last line, parsed
// first, would be refused for what the cut left of it.
type streamErr struct {
	r   io.Reader
	err error
}

func (s *streamErr) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if err != nil && err != io.EOF && s.err == nil {
		s.err = err
	}
	return n, err
}

// gzLines is a vector file's lines (openGz).
type gzLines struct {
	*bufio.Scanner
	path string
	z    *streamErr
}

// refuse returns err, a refusal of a line, or the stream's error where the
// stream is broken — read to its end first, so that a corrupt byte whose
// line parsed wrong is found by the checksum — (the line is then what the
// break left of it).
func (g *gzLines) refuse(err error) error {
	if g.z.err == nil {
		io.Copy(io.Discard, g.z) // (an error path: the rest is not parsed)
	}
	if g.z.err != nil {
		return g.broken(g.z.err)
	}
	return err
}

// end returns the refusal of the scan's end at line (the one it could not
// read): nil where the stream ended well, a line past the scanner's buffer (a gzip stream of one huge line
// is not corrupt), else the stream's break.
func (g *gzLines) end(line int) error {
	err := g.Err()
	if err == nil {
		return nil
	}
	if errors.Is(err, bufio.ErrTooLong) {
		return fmt.Errorf("cube: vectors: %s:%d: line longer than %d bytes", g.path, line, maxVectorLine)
	}
	return g.broken(err)
}

// broken is the refusal of the file's gzip stream, cut short or corrupt.
func (g *gzLines) broken(err error) error {
	return fmt.Errorf("cube: vectors: %s: truncated or corrupt gzip stream: %w", g.path, err)
}

func openGz(path string) (io.ReadCloser, *gzLines, error) {
	if err := badinput.NotPipe(path); err != nil {
		return nil, nil, fmt.Errorf("cube: vectors: %w", err)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("cube: vectors: %w", err)
	}
	z, err := gzip.NewReader(f)
	if err != nil {
		f.Close()
		if errors.Is(err, io.EOF) {
			return nil, nil, fmt.Errorf("cube: vectors: %s: empty file, not a gzip stream", path)
		}
		if errors.Is(err, gzip.ErrHeader) {
			return nil, nil, fmt.Errorf("cube: vectors: %s: not a gzip stream (%w)", path, err)
		}
		return nil, nil, fmt.Errorf("cube: vectors: %s: truncated or corrupt gzip stream: %w", path, err) // (cut in its header)
	}
	zs := &streamErr{r: z}
	sc := bufio.NewScanner(zs)
	sc.Buffer(make([]byte, 1<<16), maxVectorLine)
	return f, &gzLines{Scanner: sc, path: path, z: zs}, nil
}

// readHexRows reads lines of space-separated 8-digit hex FP32 patterns and
// converts each value (which must be exact in format in) to its pattern.
func readHexRows(path string, in fp.Format) ([][]uint32, error) {
	f, sc, err := openGz(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var rows [][]uint32
	ln := 1
	for ; sc.Scan(); ln++ {
		if ln > maxVectorLines {
			return nil, fmt.Errorf("cube: vectors: %s: more than %d lines", path, maxVectorLines)
		}
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		row := make([]uint32, len(fields))
		for i, w := range fields {
			x, err := strconv.ParseUint(w, 16, 32)
			if err != nil {
				return nil, sc.refuse(fmt.Errorf("cube: vectors: %s:%d: bad hex pattern %q", path, ln, w))
			}
			v := float64(math.Float32frombits(uint32(x)))
			p := fp.FromFloat64(v, in, fp.Options{})
			if back := fp.ToFloat64(p, in); back != v && !(math.IsNaN(v) && math.IsNaN(back)) {
				return nil, sc.refuse(fmt.Errorf("cube: vectors: %s:%d: %s is not exact in %v", path, ln, w, in))
			}
			row[i] = p
		}
		rows = append(rows, row)
	}
	if err := sc.end(ln); err != nil {
		return nil, err
	}
	return rows, nil
}

// readBinLines reads one 32-character binary pattern per line.
func readBinLines(path string) ([]uint32, error) {
	f, sc, err := openGz(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []uint32
	ln := 1
	for ; sc.Scan(); ln++ {
		if ln > maxVectorLines {
			return nil, fmt.Errorf("cube: vectors: %s: more than %d lines", path, maxVectorLines)
		}
		w := strings.TrimSpace(sc.Text())
		if w == "" {
			continue
		}
		x, err := strconv.ParseUint(w, 2, 32)
		if err != nil || len(w) != 32 {
			return nil, sc.refuse(fmt.Errorf("cube: vectors: %s:%d: want a 32-character binary pattern, got %q", path, ln, w))
		}
		out = append(out, uint32(x))
	}
	if err := sc.end(ln); err != nil {
		return nil, err
	}
	return out, nil
}

// Mismatch is one dot product where the model and the recorded output differ.
type Mismatch struct {
	Line int    // 1-based line number
	Got  uint32 // model's FP32 pattern
	Want uint32 // recorded FP32 pattern
}

// CheckResult summarises a set checked against a model.
type CheckResult struct {
	Checked    int
	Mismatches int
	First      []Mismatch // the first few mismatches (at most 10)
}

// Check runs every dot product of the data through model m and compares the
// FP32 patterns bit for bit (NaN equals NaN).
func (s VectorSet) Check(m Model, v *VectorData) (CheckResult, error) {
	var r CheckResult
	for i := range v.A {
		got, err := m.Dot(s.Input, v.A[i], v.B[i], v.C[i], s.Output)
		if err != nil {
			return r, err
		}
		r.Checked++
		want := v.D[i]
		if got == want || (isNaN32(got) && isNaN32(want)) {
			continue
		}
		r.Mismatches++
		if len(r.First) < 10 {
			r.First = append(r.First, Mismatch{Line: i + 1, Got: got, Want: want})
		}
	}
	return r, nil
}

func isNaN32(b uint32) bool { return b&0x7f800000 == 0x7f800000 && b&0x7fffff != 0 }
