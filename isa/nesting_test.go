package isa

import (
	"fmt"
	"math"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

// nest returns d repeat blocks nested around body, each "repeat 1 vK {"
// (anonymous "repeat 1 {" without vars), indented as written by hand.
func nest(d int, vars bool, body string) string {
	var sb strings.Builder
	for k := range d {
		sb.WriteString(strings.Repeat(" ", k))
		if vars {
			fmt.Fprintf(&sb, "repeat 1 v%d {\n", k)
		} else {
			sb.WriteString("repeat 1 {\n")
		}
	}
	sb.WriteString(strings.Repeat(" ", d) + body + "\n")
	for k := d - 1; k >= 0; k-- {
		sb.WriteString(strings.Repeat(" ", k) + "}\n")
	}
	return sb.String()
}

// Repeat blocks nest at most MaxRepeatDepth deep: a nest that deep parses,
// prints back and expands (its innermost line sees every loop variable);
// one level more is refused on the line of the block too many, naming
// the outermost block and the limit. 130,000 levels (3 MB) took 21 s and
// 833 MB to parse; they are refused at line 65.
func TestRepeatDepthLimit(t *testing.T) {
	if MaxRepeatDepth != 64 {
		t.Fatalf("MaxRepeatDepth %d: ASM.md documents 64", MaxRepeatDepth)
	}
	for _, vars := range []bool{true, false} {
		body := "nop"
		if vars {
			body = fmt.Sprintf("scalar cycles=v0+v%d+core+7", MaxRepeatDepth-1)
		}
		src := "# two nests, one after the other\n" + nest(MaxRepeatDepth, vars, body) + nest(MaxRepeatDepth, vars, body)
		f, err := Parse("t.s", src)
		if err != nil {
			t.Fatalf("vars %v: %d deep: %v", vars, MaxRepeatDepth, err)
		}
		if out := Print(f); out != src {
			t.Errorf("vars %v: printed text differs from the input", vars)
		}
		var got []Instr
		if err := f.Expand(3, func(in Instr) bool { got = append(got, in); return true }); err != nil || len(got) != 2 {
			t.Fatalf("vars %v: expand: %v, %d instructions", vars, err, len(got))
		}
		if vars && got[0].Cycles != 10 {
			t.Errorf("scalar cycles %d, want 10 (core 3 + 7)", got[0].Cycles)
		}

		deep := "# a comment\nnop\n" + nest(MaxRepeatDepth+1, vars, body)
		_, err = Parse("t.s", deep)
		want := fmt.Sprintf("t.s:%d: repeat: nested %d deep, inside the block of line 3: at most %d repeat blocks nest (loop nests take a few)", MaxRepeatDepth+3, MaxRepeatDepth+1, MaxRepeatDepth)
		if e, ok := err.(*Error); !ok || err.Error() != want || e.Line != MaxRepeatDepth+3 {
			t.Errorf("vars %v: %d deep: got %v, want %q", vars, MaxRepeatDepth+1, err, want)
		}
	}
	// The bug's input: one line a level, no indentation.
	var sb strings.Builder
	const levels = 130000
	for k := range levels {
		fmt.Fprintf(&sb, "repeat 1 i%d {\n", k)
	}
	sb.WriteString("nop\n" + strings.Repeat("}\n", levels))
	if _, err := Parse("deep.s", sb.String()); err == nil || !strings.HasPrefix(err.Error(), "deep.s:65: repeat: nested 65 deep, inside the block of line 1: at most 64") {
		t.Errorf("%d levels: %v", levels, err)
	}
}

// An expression's tree is at most maxExprDepth high — parentheses, signs
// and operators together: a chain a+b+…, whose tree is as high as it has
// terms, overflowed the evaluator's stack at 10^7 terms (a crash). At the
// limit each form parses and evaluates, integers at Parse and floats with
// a loop variable at expansion; one level more is refused.
func TestExprDepthLimit(t *testing.T) {
	for _, c := range []struct {
		name string
		expr func(levels int, x string) string // an expression of that height over term x
		want func(levels int, x float64) float64
	}{
		{"sum", func(l int, x string) string { return strings.TrimSuffix(strings.Repeat(x+"+", l), "+") },
			func(l int, x float64) float64 { return float64(l) * x }},
		{"product", func(l int, x string) string { return strings.TrimSuffix(strings.Repeat(x+"*", l), "*") },
			func(l int, x float64) float64 { return math.Pow(x, float64(l)) }},
		{"signs", func(l int, x string) string { return strings.Repeat("-", l-2) + "+" + x }, // (an even count of -)
			func(l int, x float64) float64 { return x }},
		{"parentheses", func(l int, x string) string { return strings.Repeat("(", l-1) + x + strings.Repeat(")", l-1) },
			func(l int, x float64) float64 { return x }},
		{"mixed", func(l int, x string) string { // ((x+x)*x+x)*x…: a level an operator, one a pair of parentheses
			e := x
			for h := 1; h < l; h++ {
				switch {
				case h%3 == 1:
					e += "+" + x
				case h%3 == 2 && h+1 < l:
					e = "(" + e + ")"
				default:
					e += "*" + x
				}
			}
			return e
		}, nil},
	} {
		for _, l := range []int{maxExprDepth, maxExprDepth + 1} {
			constant := "scalar cycles=" + c.expr(l, "1") + "\n"
			looped := "repeat 3 i {\n  v.dup dst=0 scalar=" + c.expr(l, "i") + " dtype=fp32\n}\n"
			if l > maxExprDepth {
				for _, src := range []string{constant, looped} {
					if _, err := Parse("e.s", src); err == nil || !strings.Contains(err.Error(), "nested too deeply (at most 64 levels of parentheses, signs and operators: a+b+c is 3)") {
						t.Errorf("%s, %d levels: got %v, want nested too deeply", c.name, l, err)
					}
				}
				continue
			}
			f, err := Parse("e.s", constant)
			if err != nil {
				t.Fatalf("%s, %d levels: %v", c.name, l, err)
			}
			if h := f.Nodes[0].Args[0].X.levels(); h != l {
				t.Errorf("%s: %d levels by the test, %d by the parser", c.name, l, h)
			}
			if c.want == nil {
				continue
			}
			if got, want := f.Nodes[0].instr.Cycles, int64(c.want(l, 1)); got != want {
				t.Errorf("%s, %d levels: cycles %d, want %d", c.name, l, got, want)
			}
			var got []float64
			if err := mustParse(t, looped).Expand(0, func(in Instr) bool { got = append(got, in.Scalar); return true }); err != nil || len(got) != 3 {
				t.Fatalf("%s, %d levels, with i: %v, %d instructions", c.name, l, err, len(got))
			}
			for i, v := range got {
				if want := c.want(l, float64(i)); v != want {
					t.Errorf("%s, %d levels, i=%d: scalar %g, want %g", c.name, l, i, v, want)
				}
			}
		}
	}
}

// Parse is linear in its input, and ParseHostBytes, which a run checks
// against its bound before parsing, bounds what it allocates: for files of
// 64-deep nests (with and without loop variables, each looked up among at
// most 64), flat lines, blank lines and expression-dense lines, the bytes
// and allocations of a parse per line stay the same at 1× and 4× the
// size, and the bytes within ParseHostBytes. Parse once appended each
// block's nodes to a slice of its own, copying every node some 4 times
// (4.7 KB a nop line), and looked each loop variable up among all those
// enclosing it (130,000 levels: 21 s).
func TestParseLinear(t *testing.T) {
	shapes := map[string]string{
		"nests with variables": nest(MaxRepeatDepth, true, "scalar cycles=v0+v63"),
		"anonymous nests":      nest(MaxRepeatDepth, false, "nop"),
		"empty blocks":         strings.Repeat("repeat 1 {\n}\n", 50),
		"blocks of a nop":      strings.Repeat("repeat 1 {\nnop\n}\n", 50),
		"unindented nests":     regexp.MustCompile(`(?m)^ +`).ReplaceAllString(nest(MaxRepeatDepth, false, "nop"), ""),
		"nops":                 strings.Repeat("nop\n", 100),
		"blank lines":          strings.Repeat("\n", 100),
		"sums":                 strings.Repeat("scalar cycles="+strings.TrimSuffix(strings.Repeat("1+", maxExprDepth), "+")+"\n", 10),
		"products":             strings.Repeat(strings.ReplaceAll("v.add dst=P src0=P src1=P dtype=fp32\n", "P", strings.TrimSuffix(strings.Repeat("1*", maxExprDepth), "*")), 10),
		"long comments":        strings.Repeat("nop # "+strings.Repeat("x", 240)+"\n", 10),
		"commented sums":       strings.Repeat("scalar cycles="+strings.TrimSuffix(strings.Repeat("1+", maxExprDepth), "+")+" # "+strings.Repeat("x", 240)+"\n", 10),
		"operands":             "repeat 2 i {\n" + strings.Repeat("v.add dst=i*256 src0=i*256+32 src1=0 dtype=fp32 repeat=i+1 mask=i+1 dst_stride=i src_stride=i\n", 20) + "}\n",
	}
	for name, unit := range shapes {
		var perLine [2]float64
		for k, copies := range []int{50, 200} {
			src := strings.Repeat(unit, copies)
			lines := float64(Lines(src))
			allocs := testing.AllocsPerRun(2, func() {
				if _, err := Parse("l.s", src); err != nil {
					t.Fatal(err)
				}
			})
			var m0, m1 runtime.MemStats
			runtime.ReadMemStats(&m0)
			f, _ := Parse("l.s", src)
			runtime.ReadMemStats(&m1)
			runtime.KeepAlive(f)
			bytes := int64(m1.TotalAlloc - m0.TotalAlloc)
			if est := ParseHostBytes(src); bytes > est {
				t.Errorf("%s ×%d: Parse allocated %d bytes, above ParseHostBytes's %d", name, copies, bytes, est)
			}
			perLine[k] = float64(bytes) / lines
			// Allocations: a few a line (its tokens, a closing line's
			// node, a block's body), at most one an expression byte.
			if max := 4*lines + float64(len(src)); allocs > max {
				t.Errorf("%s ×%d: %.0f allocations, above 4 a line and 1 a byte (%.0f)", name, copies, allocs, max)
			}
			t.Logf("%s ×%d: %.0f bytes a line (estimate %d), %.1f allocs a line, %d bytes a line of source", name, copies, perLine[k], ParseHostBytes(src)/int64(lines), allocs/lines, len(src)/int(lines))
		}
		// 4× the lines: about the same bytes a line (the nodes of a
		// size class, the first slices' rounding).
		if perLine[1] > 1.1*perLine[0] {
			t.Errorf("%s: %.0f bytes a line ×50, %.0f ×200: not linear", name, perLine[0], perLine[1])
		}
	}
}
