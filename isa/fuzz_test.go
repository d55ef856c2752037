package isa

import (
	"strings"
	"testing"
)

// FuzzParse: Parse never panics; a refusal names the file and a line of
// it; for inputs that parse, the printed text
// parses to the same File and prints identically, and expanding the first
// instructions of core 0 and 1 never panics.
func FuzzParse(f *testing.F) {
	for _, s := range corpus {
		f.Add(s)
	}
	for _, s := range []string{
		"mte2.copy gm=0 l1=0 bytes=32\n", "repeat 3 i {\n v.add dst=i*256 src0=0 src1=0 dtype=fp32\n}\n",
		"v.muls dst=0 src0=0 scalar=-1.5e-3 dtype=fp16", "set_flag MTE2 MTE1 9 # x", "}\n", "repeat 2 {",
		"m.mmad c=0 a=0 b=0 m=16 k=16 n=16 in=fp16 out=fp32 init", "\tnop\t\r\n", "free L1 off=0x20",
		"fixp.l0c gm=0 l0c=0 rows=16 cols=16 in=fp32 out=fp16 round=rne sat", "v.dup dst=0 scalar=inf dtype=fp32",
		"repeat 2 i {\nrepeat i+1 j {\nscalar cycles=i*j-(j/2)%3\n}\n}", "alloc UB off=1KiB size=0x20 name=x.y-z",
		// Limits: counts and values at and past int64's, nesting, a
		// division by a loop variable that is zero.
		"repeat 9223372036854775807 i {\nrepeat 9223372036854775807 {\nnop\n}\n}", "mte2.copy gm=0xffffffffffffffff l1=-1 bytes=9223372036854775808",
		"repeat 2 i {\nscalar cycles=1/i+1%i\n}", "scalar cycles=-9223372036854775807-1", "v.muls dst=0 src0=0 scalar=1e999 dtype=fp16",
		"repeat 1 {\nrepeat 1 {\nrepeat 1 {\nrepeat 1 {\nrepeat 1 {\nnop\n}\n}\n}\n}\n}", "alloc L1 off=16EiB size=1PiB name=x",
		// Nesting at and past its limits: MaxRepeatDepth blocks (with
		// loop variables, all in scope), and an expression's height.
		nest(MaxRepeatDepth, true, "scalar cycles=v0+v63"), nest(MaxRepeatDepth+1, false, "nop"),
		"scalar cycles=" + strings.Repeat("1+", maxExprDepth-1) + "1", "v.dup dst=0 scalar=" + strings.Repeat("-", maxExprDepth) + "1 dtype=fp32",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		file, err := Parse("f.s", src)
		if err != nil {
			e, ok := err.(*Error)
			if !ok {
				t.Fatalf("error type %T", err)
			}
			// Every refusal names the file and a line of it (a "}" missing
			// at the end: the line after the last) and says something.
			if lines := strings.Count(src, "\n") + 1; e.File != "f.s" || e.Line < 1 || e.Line > lines+1 || strings.TrimSpace(e.Msg) == "" {
				t.Fatalf("error %q: file %q, line %d of %d, message %q", err, e.File, e.Line, lines, e.Msg)
			}
			return
		}
		out := Print(file)
		file2, err := Parse("f.s", out)
		if err != nil {
			t.Fatalf("printed text does not parse: %v\n%q", err, out)
		}
		if d1, d2 := dump(file), dump(file2); d1 != d2 {
			t.Fatalf("round trip differs:\n%s\nvs\n%s", d1, d2)
		}
		if out2 := Print(file2); out2 != out {
			t.Fatalf("Print not idempotent: %q vs %q", out, out2)
		}
		for core := range 2 {
			n := 0
			_ = file.Expand(core, func(in Instr) bool {
				_ = Format(in)
				n++
				return n < 1000
			})
		}
	})
}
