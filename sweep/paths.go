package sweep

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/davinci-sim/davinci-sim/machines"
	"github.com/davinci-sim/davinci-sim/programs"
)

// A study's records name files as the study file does — relative to the
// study's folder — whatever the directory the study is run from: a
// parameter value keeps the spelling of the study file, and a failed
// point's message, which the simulator writes naming the files it opened,
// has those paths rewritten (pointPaths): the point's program and machine
// files as the study writes them, the files beside or below them from
// their folder as the study writes it, and any other file under the
// study's folder or one of its ancestors relative to the study's folder
// (../data/a.npy). A file that shares only the root with the study's
// folder keeps its absolute path.

// pointPaths are the files a point's run opens, and the spelling its record
// gives them.
type pointPaths struct {
	// program and machine are what the run opens: absolute paths, so that
	// the files a program names in turn (resolved against its folder)
	// reach the messages absolute rather than relative to the current
	// directory.
	program, machine string
	// written is the program file as the study writes it (readProgram: an
	// example built into the binary where no file is at program).
	written string
	// names maps each path a message may name (files, and folders as
	// prefixes; longest first) to the study's spelling.
	names []pathName
}

// pathName is one rewrite: a file or folder (dir: with its trailing
// separator, a prefix) as the run names it, and as the record names it.
type pathName struct {
	run, study string
	dir        bool
}

// paths returns point p's files as its run opens them and the rewrites of
// its messages.
func (s *Study) paths(p Point) *pointPaths {
	dir := s.absDir()
	wprog, wmach := s.written(p)
	pp := &pointPaths{program: resolveFile(dir, wprog), machine: resolveMachine(dir, wmach), written: wprog}
	pp.file(pp.program, wprog)
	pp.folder(filepath.Dir(pp.program), filepath.Dir(wprog))
	if isMachineFile(wmach) {
		pp.file(pp.machine, wmach)
		pp.folder(filepath.Dir(pp.machine), filepath.Dir(wmach))
	}
	up := "."
	for d := dir; d != filepath.Dir(d); d = filepath.Dir(d) { // up to the root, excluded
		pp.folder(d, up)
		up = filepath.Join(up, "..")
	}
	return pp
}

// file adds the rewrite of a file.
func (pp *pointPaths) file(run, study string) {
	pp.add(pathName{run: run, study: study})
}

// folder adds the rewrite of a folder: of the paths that start with it.
func (pp *pointPaths) folder(run, study string) {
	if run == filepath.Dir(run) { // the root: every absolute path
		return
	}
	sep := string(filepath.Separator)
	if study == "." {
		study = ""
	} else {
		study += sep
	}
	pp.add(pathName{run: run + sep, study: study, dir: true})
}

// add adds a rewrite unless one of the same path is there, keeping the
// longest first. (One that changes nothing stays: it keeps a path as the
// study writes it from a shorter rewrite.)
func (pp *pointPaths) add(n pathName) {
	if slices.ContainsFunc(pp.names, func(m pathName) bool { return m.run == n.run }) {
		return
	}
	pp.names = append(pp.names, n)
	slices.SortStableFunc(pp.names, func(a, b pathName) int { return len(b.run) - len(a.run) })
}

// rewrite returns msg with every path of pp.names that stands on its own
// (not inside a longer name) replaced by the study's spelling.
func (pp *pointPaths) rewrite(msg string) string {
	if len(pp.names) == 0 {
		return msg
	}
	var b strings.Builder
	for i := 0; i < len(msg); {
		if i == 0 || !isNameByte(msg[i-1]) {
			if n, ok := pp.match(msg[i:]); ok {
				b.WriteString(n.study)
				i += len(n.run)
				continue
			}
		}
		b.WriteByte(msg[i])
		i++
	}
	return b.String()
}

// match returns the rewrite that applies at the start of rest.
func (pp *pointPaths) match(rest string) (pathName, bool) {
	for _, n := range pp.names {
		if !strings.HasPrefix(rest, n.run) {
			continue
		}
		if n.dir {
			return n, true
		}
		// A file ends the name: what follows is not more of it (a.yaml.bak,
		// a.yaml/x); a full stop ending the sentence is.
		after := rest[len(n.run):]
		if after == "" || !isNameByte(after[0]) || after[0] == '.' && (len(after) == 1 || !isNameByte(after[1])) {
			return n, true
		}
	}
	return pathName{}, false
}

// isNameByte reports whether c may be part of a file path: a rewrite only
// starts and ends where the text around is not.
func isNameByte(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c >= 0x80:
		return true
	}
	return strings.IndexByte(`/\._-~+@%`, c) >= 0
}

// absDir returns the study's folder made absolute: once a study (its
// stamper's), as filepath.Abs asks the OS for the current directory each
// time (a resume of 100000 points: 2.5 of its 12 s); a Study made
// without ParseStudy (tests) asks each time.
func (s *Study) absDir() string {
	st := s.stamps
	if st == nil {
		return absPath(s.Dir)
	}
	st.dirOnce.Do(func() { st.dir = absPath(s.Dir) })
	return st.dir
}

// absPath returns path made absolute (as it is when that fails).
func absPath(path string) string {
	if a, err := filepath.Abs(path); err == nil {
		return a
	}
	return path
}

// A study's program file is the file of its path relative to the study's
// folder, or — where no file is there and the study writes the name of an
// example built into the binary, programs/examples/NAME.yaml or
// examples/NAME.yaml, as davinci-sim run takes it — that example: the
// same whatever the current directory, for the check before the points
// and for each point's run alike (programs.ReadFile would look for the
// example's name from the current directory).

// programSource returns the text of the program file that a study writes
// as written, at path (written resolved against the study's folder).
func programSource(path, written string) ([]byte, error) {
	data, err := machines.ReadFile(path, "program file")
	if err != nil && errors.Is(err, fs.ErrNotExist) {
		if b, ok := programs.Example(written); ok {
			return b, nil
		}
	}
	return data, err
}

// readProgram parses the program file that a study writes as written, at
// path (programSource). A file names itself by path, an example by its
// name as written; the files either names in turn resolve against path's
// folder.
func readProgram(path, written string) (*programs.File, error) {
	name, data, err := programText(path, written)
	if err != nil {
		return nil, err
	}
	return programs.Parse(name, filepath.Dir(path), data)
}

// programText returns the name readProgram parses the program file by
// (path, or the example's name as written) and its text.
func programText(path, written string) (name string, data []byte, err error) {
	data, err = programSource(path, written)
	if err != nil {
		return "", nil, err
	}
	name = path
	if _, ok := programs.Example(written); ok && !fileThere(path) {
		name = written
	}
	return name, data, nil
}

// fileThere reports whether something is at path (a file that cannot be
// read included: its error is the program's).
func fileThere(path string) bool {
	_, err := os.Lstat(path)
	return err == nil || !errors.Is(err, fs.ErrNotExist)
}

// exampleNamed returns, for err, the refusal of a study's program value
// written for want of a file, the name of the example built into the
// binary whose file name written has (../programs/examples/hgemm.yaml,
// hgemm.yaml: relative to the study's folder, not that example's name),
// "" where none has it.
func exampleNamed(written string, err error) string {
	if !errors.Is(err, fs.ErrNotExist) {
		return ""
	}
	return programs.ExampleNamed(written)
}
