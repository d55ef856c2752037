package sweep

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/davinci-sim/davinci-sim/machines"
	"github.com/davinci-sim/davinci-sim/programs"
)

// RunStamp is what defines a point's run besides its parameters (which
// the record holds): the run options and a digest of its inputs. A
// resumed or merged study checks every record's stamp against the study
// file, so that results of runs made with other speed options, another
// base program or machine, other fixed overrides, or program and machine
// files edited since are never mixed into one study silently.
type RunStamp struct {
	// Options are the run options that change results, as the study file
	// spells them ("k_batch=8 fast_forward"; empty: none).
	Options string `json:"options,omitempty"`
	// Inputs is a digest (the first 16 hex digits of a SHA-256) of the
	// point's program file, its machine's file (the embedded machine's,
	// or the file's) — their YAML without comments and layout, so that
	// editing a comment keeps a study resumable —, the study's fixed
	// overrides, and the bytes of every other file the point's run reads
	// (programs.InputFiles: an asm program's source, .npy inputs, a
	// cluster's node and NPU files), each with the key that names it. The
	// simulator's version is not in it. (Records of davinci-sim before
	// 2026-11-30 digest the program's and machine's text instead; they
	// are accepted as they are. Records of davinci-sim before 941ec33 (2026-12-01)
	// leave out the other files: accepted for points that read none,
	// refused — as such — for those that do.)
	Inputs string `json:"inputs"`
}

// options returns the study's run options as RunStamp.Options spells
// them.
func (s *Study) options() string {
	var o []string
	if s.KBatch > 1 {
		o = append(o, fmt.Sprintf("k_batch=%d", s.KBatch))
	}
	if s.FastForward {
		o = append(o, "fast_forward")
	}
	return strings.Join(o, " ")
}

// stamper computes the run stamps of a study's points, reading and parsing
// each program and machine file once; safe for concurrent use.
type stamper struct {
	mu    sync.Mutex
	files map[string]fileDigests    // "program:PATH" or "machine:REF" (as the run opens them) → its digests
	progs map[string]*programs.File // parsed program files (nil: unreadable)
	// others holds the digests of the other files the points read
	// (fileDigest), by path as the run opens them.
	others map[string][32]byte
	// regular holds whether each path the points' runs may read is a
	// regular file (readsOf; looked at once a study: a resume asked for
	// each of 100000 points, 1.3 of its 12 s).
	regular map[string]bool
	// made holds the points' RunStamp.Inputs by point index and legacy
	// (inputs): a resume checks every record's stamp before the points
	// run (finished) and again as it reads them to resume (readForResume).
	made map[stampKey]string
	// dir is the study's folder made absolute, once (absDir).
	dirOnce sync.Once
	dir     string
}

// stampKey names a point's stamp of one version (inputs' legacy).
type stampKey struct{ index, legacy int }

// fileDigests are the digests of a file: of its YAML without comments and
// layout (RunStamp.Inputs), and of its text (the stamps of earlier
// davinci-sim); both of the error's text where it cannot be read.
type fileDigests struct{ yaml, text [32]byte }

// stamp returns point p's run stamp.
func (s *Study) stamp(p Point) RunStamp {
	return RunStamp{Options: s.options(), Inputs: s.inputs(p, stampNow)}
}

// The stamps davinci-sim recorded before: inputs' legacy argument.
const (
	stampNow    = iota // RunStamp.Inputs as written now
	stampByText        // before 2026-11-30: the program's and machine's text, no other file
	stampNoFile        // before 941ec33 (2026-12-01): no file besides the program and machine
)

// inputs returns point p's RunStamp.Inputs, or with legacy another
// version's digest (stampByText, stampNoFile) of the same inputs.
func (s *Study) inputs(p Point, legacy int) string {
	st := s.stamps
	key := stampKey{p.Index, legacy}
	st.mu.Lock()
	in, ok := st.made[key]
	st.mu.Unlock()
	if ok {
		return in
	}
	in = s.makeInputs(p, legacy)
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.made == nil {
		st.made = map[stampKey]string{}
	}
	st.made[key] = in
	return in
}

// makeInputs is inputs, computed.
func (s *Study) makeInputs(p Point, legacy int) string {
	paths := s.paths(p)
	prog := paths.program
	st := s.stamps
	byText := legacy == stampByText
	h := sha256.New()
	sum := st.digest("program:"+prog, byText, func() ([]byte, error) { return programSource(prog, paths.written) })
	h.Write(sum[:])
	// The machine: -m (the study's or the point's), else the program's
	// machine: key — which a fixed or varied program.machine replaces.
	f := st.program(prog, paths.written)
	var opts programs.Options
	var ref string
	if f != nil {
		opts = s.runOptions(paths.machine, p)
		ref = programs.MachineRef(f, opts)
		sum = st.digest("machine:"+ref, byText, func() ([]byte, error) { return machines.Text(ref) })
		h.Write(sum[:])
	} // else the point fails to read its program: the program's digest says why
	for _, o := range s.Set {
		fmt.Fprintf(h, "%d:%s=%s", len(o.Path)+1+len(o.Value), o.Path, o.Value)
	}
	if f != nil && legacy == stampNow {
		// The other files the run reads, by the key naming each (not
		// their paths: a study moved with its files stays resumable), in
		// one order; none: the digest of davinci-sim before them.
		var files []string
		for _, in := range s.readsOf(f, opts) {
			if in.Path == f.Path || in.Path == ref || in.What == "the program file" || in.What == "the machine file" {
				continue // (digested above, as YAML)
			}
			d := st.fileDigest(in.Path)
			files = append(files, in.What+"\x00"+hex.EncodeToString(d[:]))
		}
		slices.Sort(files)
		for _, f := range files {
			fmt.Fprintf(h, "file %d:%s", len(f), f)
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// readsOf returns the files point p's run of program f with opts reads
// (programs.InputFiles, each path looked at once: isRegular). Its one
// caller, makeInputs, runs once a point (inputs keeps what it makes).
func (s *Study) readsOf(f *programs.File, opts programs.Options) []programs.InputFile {
	var files []programs.InputFile
	for _, in := range programs.InputPaths(f, opts) {
		if s.stamps.isRegular(in.Path) {
			files = append(files, in)
		}
	}
	return files
}

// isRegular reports whether path names a regular file (as InputFiles
// keeps it), looked at once.
func (st *stamper) isRegular(path string) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	reg, ok := st.regular[path]
	if !ok {
		fi, err := os.Stat(path)
		reg = err == nil && fi.Mode().IsRegular()
		if st.regular == nil {
			st.regular = map[string]bool{}
		}
		st.regular[path] = reg
	}
	return reg
}

// fileDigest returns the SHA-256 of the bytes of the file at path (read
// once), or of its error's text where it cannot be read.
func (st *stamper) fileDigest(path string) [32]byte {
	st.mu.Lock()
	d, ok := st.others[path]
	st.mu.Unlock()
	if ok {
		return d
	}
	h := sha256.New()
	fh, err := os.Open(path)
	if err == nil {
		_, err = io.Copy(h, fh) // (streamed: an .npy input may be large)
		fh.Close()
	}
	if err != nil {
		h.Reset()
		h.Write([]byte("error: " + err.Error()))
	}
	copy(d[:], h.Sum(nil))
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.others == nil {
		st.others = map[string][32]byte{}
	}
	st.others[path] = d
	return d
}

// program returns the parsed program file at path, written so by the
// study (parsed once: readProgram), nil when it cannot be read.
func (st *stamper) program(path, written string) *programs.File {
	st.mu.Lock()
	defer st.mu.Unlock()
	f, ok := st.progs[path]
	if !ok {
		f, _ = readProgram(path, written)
		if st.progs == nil {
			st.progs = map[string]*programs.File{}
		}
		st.progs[path] = f
	}
	return f
}

// digest returns the SHA-256 of the YAML that read returns for key
// without its comments and layout (computed once), or with byText of its
// text; of its error's text where read fails.
func (st *stamper) digest(key string, byText bool, read func() ([]byte, error)) [32]byte {
	st.mu.Lock()
	defer st.mu.Unlock()
	d, ok := st.files[key]
	if !ok {
		text, err := read()
		if err != nil {
			text = []byte("error: " + err.Error())
		}
		d = fileDigests{yaml: sha256.Sum256(yamlContent(text)), text: sha256.Sum256(text)}
		if st.files == nil {
			st.files = map[string]fileDigests{}
		}
		st.files[key] = d
	}
	if byText {
		return d.text
	}
	return d.yaml
}

// yamlContent returns the YAML documents of text without their comments,
// in one layout (the YAML encoder's), so that text differing only in
// comments, spacing or line breaks gives the same bytes; text that does
// not parse as YAML is returned as it is. (The layout is the pinned
// go.yaml.in/yaml/v3's: a version that encoded otherwise would make
// --resume refuse the records of this one, which sweep plot still draws.)
func yamlContent(text []byte) []byte {
	dec := yaml.NewDecoder(bytes.NewReader(text))
	var out bytes.Buffer
	enc := yaml.NewEncoder(&out)
	for {
		var doc yaml.Node
		if err := dec.Decode(&doc); err == io.EOF {
			break
		} else if err != nil {
			return text
		}
		dropLayout(&doc)
		if enc.Encode(&doc) != nil {
			return text
		}
	}
	if enc.Close() != nil {
		return text
	}
	return out.Bytes()
}

// dropLayout clears the comments and styles (flow or block, quoting) of n
// and of the nodes under it; a value keeps its tag (a quoted "256" stays a
// string: the encoder quotes it again).
func dropLayout(n *yaml.Node) {
	n.HeadComment, n.LineComment, n.FootComment = "", "", ""
	n.Style = 0
	for _, c := range n.Content {
		dropLayout(c)
	}
}

// checkStamp reports whether record rec was made by a run like the one
// study s makes of its point (one line naming the key).
func checkStamp(rec *Record, s *Study) error {
	if rec.Run.Inputs == "" {
		return fmt.Errorf("key \"run\": missing (recorded by an older davinci-sim): the options and inputs point %d ran with are unknown; use another -o directory, or sweep --resume --rerun-changed in that directory to run such points again", rec.Index)
	}
	pt := s.Points[rec.Index]
	want := s.stamp(pt)
	if rec.Run.Options != want.Options {
		return fmt.Errorf("key \"run\": point %d ran with %s, the study asks for %s; use another -o directory, the study's earlier options, or sweep --resume --rerun-changed in that directory to run such points again",
			rec.Index, optionsText(rec.Run.Options), optionsText(want.Options))
	}
	if rec.Run.Inputs == want.Inputs || rec.Run.Inputs == s.inputs(pt, stampByText) {
		return nil
	}
	if old := s.inputs(pt, stampNoFile); rec.Run.Inputs == old && old != want.Inputs {
		return fmt.Errorf("key \"run\": point %d was recorded by an older davinci-sim, whose stamp left out the files its program names (an asm source, .npy inputs, a cluster's node files): whether they changed since is unknown; use another -o directory, or sweep --resume --rerun-changed in that directory to run such points again", rec.Index)
	}
	return fmt.Errorf("key \"run\": point %d ran from other inputs (inputs %s, now %s: its program or machine file, a file its program names, or the study's program, machine or set, changed since); use another -o directory, or sweep --resume --rerun-changed in that directory to run such points again",
		rec.Index, rec.Run.Inputs, want.Inputs)
}

func optionsText(o string) string {
	if o == "" {
		return "no speed options"
	}
	return o
}
