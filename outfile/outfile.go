// Package outfile writes the simulator's output files so that a reader
// never sees a half-written one and a failed write leaves the previous file
// (if any) in place: each file is written to a temporary file in the same
// directory, synced, and renamed over the destination.
package outfile

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Write creates path atomically with the bytes write produces (through
// a symbolic link: Target). The
// temporary file keeps path's extension (writers that choose a format by
// extension see the same one) and is removed when anything fails.
func Write(path string, write func(w io.Writer) error) error {
	return WriteWith(path, func(tmp string) error {
		f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_TRUNC, 0o644)
		if err != nil {
			return err
		}
		if err := write(f); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	})
}

// WriteWith is Write for writers that take a file name: fill must write
// the whole file at tmp (an empty file when it is called).
func WriteWith(path string, fill func(tmp string) error) (err error) {
	path, err = Target(path)
	if err != nil {
		return err
	}
	f, err := createTemp(path)
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			os.Remove(tmp)
		}
	}()
	if err := f.Close(); err != nil {
		return err
	}
	if err := fill(tmp); err != nil {
		return err
	}
	if err := syncFile(tmp); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// maxLinks bounds the symbolic links Target follows (Linux's own limit
// for a path's resolution is 40).
const maxLinks = 40

// Target returns where a file written to path lands: path itself, or,
// where path is a symbolic link (to a file or to where one will be), the
// file it leads to — the file is written through the link, which stays,
// rather than the link replaced by a file of its own. A destination that
// exists and is not a regular file (a directory, a device such as
// /dev/full, a named pipe) is refused: the rename that publishes the file
// would replace it (as root, even a device node).
func Target(path string) (string, error) {
	orig := path
	for range maxLinks {
		st, err := os.Lstat(path)
		if err != nil {
			return path, nil // nothing there yet (or unreadable: the write says)
		}
		if st.Mode()&os.ModeSymlink == 0 {
			if !st.Mode().IsRegular() {
				if path != orig {
					return "", fmt.Errorf("%s: a link to %s, which is not a regular file", orig, path)
				}
				return "", fmt.Errorf("%s: not a regular file", orig)
			}
			return path, nil
		}
		link, err := os.Readlink(path)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(link) {
			// Relative to the link's directory as the kernel finds it:
			// "../x" from a directory reached through a link is not
			// filepath.Join's textual "..".
			dir := filepath.Dir(path)
			if real, err := filepath.EvalSymlinks(dir); err == nil {
				dir = real
			}
			link = filepath.Join(dir, link)
		}
		path = link
	}
	return "", fmt.Errorf("%s: more than %d symbolic links", orig, maxLinks)
}

// createTemp creates the temporary file of path: beside it, with its
// extension, as readable as the file it replaces (else as a new file
// usually is: CreateTemp makes it private).
func createTemp(path string) (*os.File, error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	ext := ""
	if i := strings.Index(base, "."); i > 0 {
		ext = base[i:] // "trace.json.gz" → ".json.gz"
	}
	f, err := os.CreateTemp(dir, "."+strings.TrimSuffix(base, ext)+".tmp-*"+ext)
	if err != nil {
		return nil, err
	}
	if err := f.Chmod(modeFor(path)); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, err
	}
	return f, nil
}

// modeFor is the permission of a file written to path: that of the
// regular file it replaces, else 0644 (as a new file usually is;
// CreateTemp makes it private).
func modeFor(path string) os.FileMode {
	if st, err := os.Stat(path); err == nil && st.Mode().IsRegular() {
		return st.Mode().Perm()
	}
	return 0o644
}

// MoveIn renames from, a complete file (synced: Write's, WriteWith's), over
// to, as readable as the file it replaces — for files staged together in
// a directory of their own and moved in one by one.
func MoveIn(from, to string) error {
	if err := os.Chmod(from, modeFor(to)); err != nil {
		return err
	}
	return os.Rename(from, to)
}

// Pending is an output file written over a while (a profile of a whole
// command): its bytes go to a temporary file beside the destination, which
// Commit renames over it and Abort removes.
type Pending struct {
	*os.File
	path string
}

// Create starts the output file path (see Pending; a link is written
// through, as Target says).
func Create(path string) (*Pending, error) {
	path, err := Target(path)
	if err != nil {
		return nil, err
	}
	f, err := createTemp(path)
	if err != nil {
		return nil, err
	}
	return &Pending{File: f, path: path}, nil
}

// Commit makes the file's bytes durable and renames it over its
// destination; on failure the temporary file is removed and the
// destination left as it was.
func (p *Pending) Commit() error {
	err := p.Sync()
	if cerr := p.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(p.Name(), p.path)
	}
	if err != nil {
		os.Remove(p.Name())
	}
	return err
}

// Abort closes and removes the temporary file: the destination is left
// as it was.
func (p *Pending) Abort() {
	p.Close()
	os.Remove(p.Name())
}

// syncFile makes the file's bytes durable before the rename publishes it.
func syncFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// CheckDir reports whether files can be created in dir (which must exist
// and be a directory), by creating and removing a temporary file; what
// names the directory in the message (e.g. "-o out").
func CheckDir(dir, what string) error {
	st, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("%s: %v", what, err)
	}
	if !st.IsDir() {
		return fmt.Errorf("%s: %s is not a directory", what, dir)
	}
	f, err := os.CreateTemp(dir, ".davinci-sim-check-*")
	if err != nil {
		return fmt.Errorf("%s: cannot create files in %s: %v", what, dir, err)
	}
	f.Close()
	return os.Remove(f.Name())
}

// CheckNewDir reports whether the directory dir, which does not exist,
// can be created (os.MkdirAll): the nearest part of its path that exists
// must be a directory that takes new files — not a symbolic link leading
// nowhere, through which MkdirAll fails ("file exists"). what names the
// directory in the message (e.g. "-o out").
func CheckNewDir(dir, what string) error {
	p := filepath.Clean(dir)
	for {
		if st, err := os.Lstat(p); err == nil {
			if st.Mode()&os.ModeSymlink != 0 {
				if _, err := os.Stat(p); err != nil {
					link, _ := os.Readlink(p)
					return fmt.Errorf("%s: %s is a symbolic link to %s, which does not exist; create that directory or give another", what, p, link)
				}
			}
			break
		}
		parent := filepath.Dir(p)
		if parent == p {
			break
		}
		p = parent
	}
	return CheckDir(p, what)
}
