package programs

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A .npy header that is not the dictionary numpy reads is refused saying
// what in it is wrong — the key, the value found — in one line naming
// the file, never in the reader's internals' words (strconv.Atoi: parsing
// "8)": invalid syntax; npy: invalid dictionary format).
func TestNPYHeaderMessages(t *testing.T) {
	dir := t.TempDir()
	for i, c := range []struct{ dict, want string }{
		{"{'descr': '<f4', 'fortran_order': False, 'shape': (4.0, 8), }", "the header's shape (4.0, 8) is not a tuple of whole numbers ≥ 0, such as (4, 8): it holds 4.0"},
		{"{'descr': '<f4', 'fortran_order': False, 'shape': ((4,), 8), }", "the header's shape ((4,), 8) is not a tuple of whole numbers ≥ 0, such as (4, 8): it holds (4,)"},
		{"{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999999, 4), }", "the header's shape (99999999999999999999999, 4) holds 99999999999999999999999, beyond 2^63"},
		{"{'descr': '<f4', 'fortran_order': False, 'shape': (-4, 8), }", "the header's shape (-4, 8) holds -4: dimensions must be ≥ 0"},
		{"{'descr': '<f4', 'fortran_order': False, 'shape': [4, 8], }", "the header's shape is [4, 8], a list, not a tuple"},
		{"{'descr': '<f4', 'fortran_order': False, 'shape': (4), }", "the header's shape is (4), not a tuple"},
		{"{'descr': '<f4', 'fortran_order': False, 'shape': (4 8), }", "malformed .npy header: the value of 'shape' (4… lacks a ',' or ')': found 8), } at byte 53"},
		{"{'descr': '<f4', 'fortran_order': False, 'shape': (4, 8), 'shape': (8, 4)}", "malformed .npy header: the key 'shape' is given twice"},
		{"{'descr': '<f4', 'fortran_order': False, 'shape': (4, 8), 'evil': __import__('os') }", "malformed .npy header: the value of 'evil' is not a Python literal: found __import__('os') } at byte 66"},
		{"{'descr': '<f4', 'fortran_order': False, 'shape': (4, 8), 'evil': 1}", "malformed .npy header: the key 'evil' besides 'descr', 'fortran_order' and 'shape'"},
		{"{'descr': '<f4', 'shape': (4, 8), }", "malformed .npy header: no key 'fortran_order'"},
		{"{'descr': <f4, shape: (64 64)", "malformed .npy header: the value of 'descr' is not a Python literal: found <f4, shape: (64 64) at byte 10"},
		{"", "malformed .npy header: blank, not a dictionary of 'descr', 'fortran_order' and 'shape'"},
		{"['descr', '<f4']", "malformed .npy header: found ['descr', '<f4'] at byte 0, not a dictionary"},
		{"{'descr': '<f4, 'fortran_order': False, 'shape': (4, 8), }", "malformed .npy header: found fortran_order': False, '… at byte 17 after the value of 'descr', not ',' or '}'"},
		{"{'descr': '<f4', 'fortran_order': False, 'shape': (4, 8), } x", "malformed .npy header: found x at byte 60 after the dictionary"},
		{"{'descr': '<f4', 'fortran_order': False, 'shape': (4, 8)", "malformed .npy header: found the header's end after the value of 'shape', not ',' or '}'"},
		{"{'descr': '<f4', 'fortran_order': 0, 'shape': (4, 8), }", "the header's fortran_order is 0: want True or False"},
		{"{'descr': [('x', '<f4')], 'fortran_order': False, 'shape': (4, 8), }", "the header's descr [('x', '<f4')] is a structured dtype: not supported"},
		{"{'descr': 4, 'fortran_order': False, 'shape': (4, 8), }", "the header's descr is 4: want a dtype string"},
		{"{'descr': '<f4', 'fortran_order': False, 'shape': " + strings.Repeat("(", 40) + "4", "malformed .npy header: the value of 'shape' ((((((((… holds an item that is nested too deep (over 8 tuples or lists): found ((((((((((((((((((((((((… at byte 58"},
		{"{'descr': '<f4\x01', 'fortran_order': False, 'shape': (4,\x00 8), }", `malformed .npy header: the value of 'shape' (4,… holds an item that is not a Python literal: found "\x00 8), }" at byte 54`},
		// Headers numpy reads but laid out otherwise than numpy.save's.
		{"{'descr': '<f4', 'fortran_order': False, 'shape': (4L, 8L), }", "the header {'descr': '<f4', 'fortran_order': False, 'shape': (4L, 8L), } is not laid out as numpy.save writes it"},
		{`{"descr": "<f4", "fortran_order": False, "shape": (4, 8), }`, `the header {"descr": "<f4", "fortran_order": False, "shape": (4, 8), } is not laid out as numpy.save writes it`},
		{"{ 'descr' : '<f4' , 'fortran_order' : False , 'shape' : ( 4 , 8 ) , }", "is not laid out as numpy.save writes it"},
	} {
		path := filepath.Join(dir, fmt.Sprintf("%d.npy", i))
		if err := os.WriteFile(path, append(npyHeader(c.dict), make([]byte, 128)...), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, read := range []func(string) error{
			func(p string) error { _, _, _, err := ReadNPYFloat32(p); return err },
			func(p string) error { _, _, err := CheckNPYFloat32(p); return err },
		} {
			err := read(path)
			switch {
			case err == nil:
				t.Errorf("%q: read", c.dict)
			case !strings.HasPrefix(err.Error(), path+": ") || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n"):
				t.Errorf("%q:\n got %v\nwant one line: %s: …%s…", c.dict, err, path, c.want)
			case strings.Contains(err.Error(), "strconv") || strings.Contains(strings.TrimPrefix(err.Error(), path+": "), "npy: "):
				t.Errorf("%q: %v: the reader's internals", c.dict, err)
			}
		}
	}
}

// Paths that are not regular files are refused up front in words that
// say so, before any read: a directory, a device (/dev/zero: "not a .npy
// file (no \x93NUMPY magic)" before).
func TestNPYNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	for path, want := range map[string]string{
		dir:         dir + " is a directory, not a .npy file",
		"/dev/zero": "/dev/zero is a character device, not a .npy file",
	} {
		if _, err := os.Stat(path); err != nil {
			continue // (no /dev/zero here)
		}
		if _, _, _, err := ReadNPYFloat32(path); err == nil || err.Error() != want {
			t.Errorf("ReadNPYFloat32(%s): %v, want %q", path, err, want)
		}
		if _, _, err := CheckNPYFloat32(path); err == nil || err.Error() != want {
			t.Errorf("CheckNPYFloat32(%s): %v, want %q", path, err, want)
		}
	}
}

// A file cut short after its magic says so; one without the magic is not
// a .npy file (a truncated one was called that).
func TestNPYTruncatedPreamble(t *testing.T) {
	dir := t.TempDir()
	for content, want := range map[string]string{
		"\x93NUMPY\x01\x00": "malformed .npy file: 8 bytes, cut short before its header length",
		"\x93NUM":           "not a .npy file (no \\x93NUMPY magic)",
		"PK\x03\x04zipfile": "not a .npy file (no \\x93NUMPY magic)",
	} {
		path := filepath.Join(dir, "a.npy")
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, _, err := CheckNPYFloat32(path); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", content, err, want)
		}
	}
}
