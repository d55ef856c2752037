package programs

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/davinci-sim/davinci-sim/stopwork"
)

// Outputs written with -o read back as the same 2-D float32 arrays.
func TestWriteOutputsRoundTrip(t *testing.T) {
	dir := t.TempDir()
	v := []float32{1, -2.5, 3, 4, 5, 6}
	if _, err := WriteOutputs(dir, []Output{{Name: "C", Shape: []int{2, 3}, F32: v}, {Name: "H", Shape: []int{6}, F16: []uint16{0x3c00, 0, 0, 0, 0, 0x4000}}}); err != nil {
		t.Fatal(err)
	}
	got, r, c, err := ReadNPYFloat32(filepath.Join(dir, "C.npy"))
	if err != nil {
		t.Fatal(err)
	}
	if r != 2 || c != 3 {
		t.Fatalf("shape %d×%d", r, c)
	}
	for i := range v {
		if got[i] != v[i] {
			t.Fatalf("element %d: %v want %v", i, got[i], v[i])
		}
	}
	b, _ := os.ReadFile(filepath.Join(dir, "C.npy"))
	if hl := int(b[8]) | int(b[9])<<8; (10+hl)%64 != 0 {
		t.Fatalf("header not 64-byte aligned: %d", 10+hl)
	}
	if _, err := os.Stat(filepath.Join(dir, "H.npy")); err != nil {
		t.Fatal(err)
	}
}

// .npy inputs the kernels may not take as meant are noted in the report:
// a float64 array (rounded to FP32) and NaN or ±Inf values (the GEMM kinds
// on DaVinci and GPUs, and emulated-gemm).
func TestInputFileNotes(t *testing.T) {
	dir := t.TempDir()
	write := func(name, descr string, v any) string {
		path := filepath.Join(dir, name)
		fh, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		defer fh.Close()
		switch v := v.(type) {
		case []float32:
			err = writeNPYAs(fh, descr, v, []int{64, 64})
		case []float64:
			err = writeNPYAs(fh, descr, v, []int{64, 64})
		}
		if err != nil {
			t.Fatal(err)
		}
		return path
	}
	a := make([]float32, 64*64)
	b := make([]float64, 64*64)
	for i := range a {
		a[i], b[i] = float32(i%7)/7, float64(i%5)/5
	}
	a[0], a[65] = float32(math.NaN()), float32(math.Inf(-1))
	pa, pb := write("a.npy", "<f4", a), write("b.npy", "<f8", b)
	for _, text := range []string{
		"kind: hgemm\nm: 64\nn: 64\nk: 64\n",                                        // DaVinci
		"kind: hgemm\nmachine: a100\nm: 64\nn: 64\nk: 64\n",                         // GPU
		"kind: emulated-gemm\nmachine: a100\nscheme: ootomo\nm: 64\nn: 64\nk: 64\n", // emulated
	} {
		f, err := Parse("p.yaml", ".", []byte(text+"numerics: full\ninputs: {a: "+pa+", b: "+pb+"}\n"))
		if err != nil {
			t.Fatal(err)
		}
		res, err := Execute(f, Options{}, RunHooks{})
		if err != nil {
			t.Fatalf("%q: %v", text, err)
		}
		notes := strings.Join(res.Report.Notes, "\n")
		for _, want := range []string{
			"inputs.a (" + pa + ") holds 1 NaN and 1 ±Inf of its 4096 values",
			"inputs.b (" + pb + ") is float64: rounded to FP32 (RNE)",
		} {
			if !strings.Contains(notes, want) {
				t.Errorf("%q: notes lack %q:\n%s", text, want, notes)
			}
		}
		if strings.Contains(notes, "inputs.a ("+pa+") is float64") || strings.Contains(notes, "inputs.b ("+pb+") holds") {
			t.Errorf("%q: a note for what is not there:\n%s", text, notes)
		}
	}
}

// genFloat64Until draws row r's values from its own stream over the
// interval, asking stop every stopwork.Every values (rows longer than that
// too), and returns nil once it says true.
func TestGenFloat64Until(t *testing.T) {
	in := Inputs{Distribution: DistUniform, OffsetExponent: 3, Seed: 7}
	for _, sh := range [][2]int{{3, 5}, {1, 2*stopwork.Every + 3}, {300, 1000}, {stopwork.Every + 2, 1}} {
		rows, cols := sh[0], sh[1]
		asks := 0
		got := genFloat64Until(in, 2, rows, cols, func() bool { asks++; return false })
		lo, hi := in.interval()
		want := make([]float64, 0, rows*cols)
		for r := 0; r < rows; r++ {
			rng := NewRand(in.Seed, 2<<32|uint64(r))
			for range cols {
				want = append(want, lo+float64((hi-lo)*rng.Float64()))
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("%d×%d: values differ from the streams'", rows, cols)
		}
		if min := (rows*cols + stopwork.Every - 1) / stopwork.Every; asks < min {
			t.Errorf("%d×%d: stop asked %d times, want at least %d (every %d values)", rows, cols, asks, min, stopwork.Every)
		}
		for _, at := range []int{1, 2} {
			asks = 0
			if v := genFloat64Until(in, 2, rows, cols, func() bool { asks++; return asks == at }); (v == nil) != (at <= (rows*cols+stopwork.Every-1)/stopwork.Every) {
				t.Errorf("%d×%d, stop at its ask %d: got %d values", rows, cols, at, len(v))
			}
		}
	}
}

// readNPYFloat64Until stops a read of float64 and float32 files (widened)
// when stop says so, before or amid the data, with errReadStopped.
func TestReadNPYFloat64Until(t *testing.T) {
	dir := t.TempDir()
	v := genFloat64(Inputs{Distribution: DistUniform, Seed: 1}, 1, 512, 512) // 2 MiB as float64: more than one buffer's read
	f8, f4 := filepath.Join(dir, "a8.npy"), filepath.Join(dir, "a4.npy")
	var b8, b4 bytes.Buffer
	v32 := make([]float32, len(v))
	for i, x := range v {
		v32[i] = float32(x)
	}
	if err := writeNPYAs(&b8, "<f8", v, []int{512, 512}); err != nil {
		t.Fatal(err)
	}
	if err := writeNPYAs(&b4, "<f4", v32, []int{512, 512}); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(f8, b8.Bytes(), 0o644)
	os.WriteFile(f4, b4.Bytes(), 0o644)
	for _, path := range []string{f8, f4} {
		want, _, _, err := ReadNPYFloat64(path)
		if err != nil {
			t.Fatal(err)
		}
		asks := 0
		got, rows, cols, err := readNPYFloat64Until(path, func() bool { asks++; return false })
		if err != nil || rows != 512 || cols != 512 || !slices.Equal(got, want) {
			t.Errorf("%s: %d×%d, %v; want ReadNPYFloat64's values", path, rows, cols, err)
		}
		for at := 1; at <= min(asks, 4); at++ {
			n := 0
			if got, _, _, err := readNPYFloat64Until(path, func() bool { n++; return n >= at }); err != errReadStopped || got != nil {
				t.Errorf("%s, stop at its ask %d of %d: %d values, %v; want errReadStopped", path, at, asks, len(got), err)
			}
		}
	}
}
