package sweep

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"

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
	// point's program file text, its machine's file text (the embedded
	// machine's, or the file's) and the study's fixed overrides. Files
	// the program names in turn (.npy inputs, a cluster's node files)
	// are not in it; nor is the simulator's version.
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
	files map[string][32]byte       // "program:PATH" or "machine:REF" (as the run opens them) → digest of its text (or of the error reading it)
	progs map[string]*programs.File // parsed program files (nil: unreadable)
}

// stamp returns point p's run stamp.
func (s *Study) stamp(p Point) RunStamp {
	paths := s.paths(p)
	prog := paths.program
	st := s.stamps
	h := sha256.New()
	sum := st.digest("program:"+prog, func() ([]byte, error) { return programs.Source(prog) })
	h.Write(sum[:])
	// The machine: -m (the study's or the point's), else the program's
	// machine: key — which a fixed or varied program.machine replaces.
	if f := st.program(prog); f != nil {
		ref := programs.MachineRef(f, s.runOptions(paths.machine, p))
		sum = st.digest("machine:"+ref, func() ([]byte, error) { return machines.Text(ref) })
		h.Write(sum[:])
	} // else the point fails to read its program: the program's digest says why
	for _, o := range s.Set {
		fmt.Fprintf(h, "%d:%s=%s", len(o.Path)+1+len(o.Value), o.Path, o.Value)
	}
	return RunStamp{Options: s.options(), Inputs: hex.EncodeToString(h.Sum(nil))[:16]}
}

// program returns the parsed program file at path (parsed once), nil when
// it cannot be read.
func (st *stamper) program(path string) *programs.File {
	st.mu.Lock()
	defer st.mu.Unlock()
	f, ok := st.progs[path]
	if !ok {
		f, _ = programs.ReadFile(path)
		if st.progs == nil {
			st.progs = map[string]*programs.File{}
		}
		st.progs[path] = f
	}
	return f
}

// digest returns the SHA-256 of what read returns for key (computed once),
// or of its error's text.
func (st *stamper) digest(key string, read func() ([]byte, error)) [32]byte {
	st.mu.Lock()
	defer st.mu.Unlock()
	if d, ok := st.files[key]; ok {
		return d
	}
	text, err := read()
	if err != nil {
		text = []byte("error: " + err.Error())
	}
	d := sha256.Sum256(text)
	if st.files == nil {
		st.files = map[string][32]byte{}
	}
	st.files[key] = d
	return d
}

// checkStamp reports whether record rec was made by a run like the one
// study s makes of its point (one line naming the key).
func checkStamp(rec *Record, s *Study) error {
	if rec.Run.Inputs == "" {
		return fmt.Errorf("key \"run\": missing (recorded by an older davinci-sim): the options and inputs point %d ran with are unknown; use another -o directory", rec.Index)
	}
	want := s.stamp(s.Points[rec.Index])
	if rec.Run.Options != want.Options {
		return fmt.Errorf("key \"run\": point %d ran with %s, the study asks for %s; use another -o directory, or the study's earlier options",
			rec.Index, optionsText(rec.Run.Options), optionsText(want.Options))
	}
	if rec.Run.Inputs != want.Inputs {
		return fmt.Errorf("key \"run\": point %d ran from other inputs (inputs %s, now %s: its program or machine file, or the study's program, machine or set, changed since); use another -o directory",
			rec.Index, rec.Run.Inputs, want.Inputs)
	}
	return nil
}

func optionsText(o string) string {
	if o == "" {
		return "no speed options"
	}
	return o
}
