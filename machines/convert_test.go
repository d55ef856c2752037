package machines

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// A --set gives an integer key the values a file's YAML gives it (0x40,
// 0o100, 0b1000000, 1_000, 1e3, 64.0) — and 032 reads 32, as documented —
// and refuses what a file refuses (64.5, 1e20 for an int).
func TestConvertValueIntegers(t *testing.T) {
	for s, want := range map[string]int64{
		"64": 64, "+64": 64, "-64": -64, "032": 32, "0x40": 64, "0X40": 64, "-0x40": -64, "0o100": 64,
		"0b1000000": 64, "1_000": 1000, "1e2": 100, "64.0": 64, "-1e3": -1000, "9223372036854775807": 1<<63 - 1,
	} {
		got, err := ConvertValue(reflect.TypeFor[int](), s)
		if err != nil || got != want {
			t.Errorf("int %q: %v, %v; want %d", s, got, err, want)
		}
	}
	for _, s := range []string{"64.5", "1e20", "9223372036854775808", "nan", "inf", "0x", "0_32", "1__0", "", "x", "0x1p4", "1e"} {
		if got, err := ConvertValue(reflect.TypeFor[int](), s); err == nil {
			t.Errorf("int %q: %v, want a refusal", s, got)
		}
	}
	if got, err := ConvertValue(reflect.TypeFor[int8](), "0x7f"); err != nil || got != int64(127) {
		t.Errorf("int8 0x7f: %v, %v", got, err)
	}
	for _, s := range []string{"0x80", "128", "128.0"} {
		if _, err := ConvertValue(reflect.TypeFor[int8](), s); err == nil {
			t.Errorf("int8 %q: accepted", s)
		}
	}
	if got, err := ConvertValue(reflect.TypeFor[uint32](), "1e3"); err != nil || got != uint64(1000) {
		t.Errorf("uint32 1e3: %v, %v", got, err)
	}
	for _, s := range []string{"-1", "-0x1", "-1e3"} {
		if _, err := ConvertValue(reflect.TypeFor[uint32](), s); err == nil {
			t.Errorf("uint32 %q: accepted", s)
		}
	}
}

// A machine's name and description are one line of text (headers, tables
// and YAML comments print them); --set machine.name= resets the name to
// the machine's own.
func TestMachineNameOneLine(t *testing.T) {
	for _, o := range []Override{{Path: "machine.name", Value: "x\ny"}, {Path: "machine.description", Value: "a\nb: c"}, {Path: "machine.name", Value: "tab\there"},
		{Path: "machine.description", Value: "a\u2028b"}, {Path: "machine.description", Value: "a\u202eb"}, {Path: "machine.name", Value: "a\u0085b"}} {
		_, err := Load("a100", []Override{o})
		if err == nil || !strings.Contains(err.Error(), "must be one line of text") {
			t.Errorf("%v: %v", o, err)
		}
	}
	m, err := Load("a100", []Override{{Path: "machine.name", Value: ""}})
	if err != nil || m.Name != "a100" {
		t.Errorf("name reset: %v, %v", m, err)
	}
}

// ReadFile refuses what cannot be a file of its kind before reading it: a
// device, a file larger than MaxFileBytes (judged by its size).
func TestReadFileRefusesSpecialAndHuge(t *testing.T) {
	big := filepath.Join(t.TempDir(), "big.yaml")
	if err := os.WriteFile(big, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, MaxFileBytes+1); err != nil { // (sparse)
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		big:         "machine file: " + big + " is larger than 64 MiB, more than any machine file holds",
		"/dev/zero": "machine file: /dev/zero is a character device, not a machine file",
	} {
		if _, err := os.Stat(path); err != nil {
			continue
		}
		if _, err := ReadFile(path, "machine file"); err == nil || err.Error() != want {
			t.Errorf("%s: %v, want %q", path, err, want)
		}
	}
}
