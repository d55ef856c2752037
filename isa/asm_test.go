package isa

import (
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/davinci-sim/davinci-sim/fp"
)

// dump renders a File's nodes, including the instruction cached for
// constant lines, as text so that files with NaN scalars compare too.
func dump(f *File) string {
	var sb strings.Builder
	var rec func(nodes []Node, depth int)
	rec = func(nodes []Node, depth int) {
		for _, n := range nodes {
			fmt.Fprintf(&sb, "%*s%d L%d %q %q %q %q [", depth*2, "", n.Kind, n.Line, n.Indent, n.Gap, n.Comment, n.Mnemonic)
			for _, a := range n.Args {
				fmt.Fprintf(&sb, "%q=%q", a.Key, a.Value)
				if a.X != nil {
					fmt.Fprintf(&sb, "(%s)", exprTree(a.X))
				}
				sb.WriteString(" ")
			}
			fmt.Fprintf(&sb, "] dyn=%d instr=%+v\n", len(n.dyn), n.instr)
			if n.Kind == NodeRepeat {
				fmt.Fprintf(&sb, "%*srepeat %q (%s) %q\n", depth*2, "", n.Count.Value, exprTree(n.Count.X), n.Var)
				rec(n.Body, depth+1)
				fmt.Fprintf(&sb, "%*send L%d %q %q %q\n", depth*2, "", n.End.Line, n.End.Indent, n.End.Gap, n.End.Comment)
			}
		}
	}
	rec(f.Nodes, 0)
	return sb.String()
}

func exprTree(e *Expr) string {
	if e == nil {
		return "nil"
	}
	switch e.Kind {
	case ENum:
		return fmt.Sprintf("%d", e.Val)
	case EFloat:
		return fmt.Sprintf("%v", e.F)
	case EIdent:
		return fmt.Sprintf("$%s@%d", e.Text, e.slot)
	case EUnary:
		return fmt.Sprintf("(%c %s)", e.Op, exprTree(e.X))
	case EBinary:
		return fmt.Sprintf("(%c %s %s)", e.Op, exprTree(e.X), exprTree(e.Y))
	case EParen:
		return fmt.Sprintf("[%s]", exprTree(e.X))
	}
	return "?"
}

func mustParse(t testing.TB, src string) *File {
	t.Helper()
	f, err := Parse("t.s", src)
	if err != nil {
		t.Fatalf("Parse(%q): %v", src, err)
	}
	return f
}

func collect(t testing.TB, f *File, core int) []Instr {
	t.Helper()
	var out []Instr
	if err := f.Expand(core, func(in Instr) bool { out = append(out, in); return true }); err != nil {
		t.Fatalf("Expand: %v", err)
	}
	return out
}

func withLine(in Instr, line int) Instr { in.Line = line; return in }

// TestParseMnemonics parses one line per mnemonic and operand form and
// compares with the instruction built by the constructors.
func TestParseMnemonics(t *testing.T) {
	cast := VecCast(0, 256, fp.FP32, fp.FP16, fp.RZ, true, 2)
	cases := []struct {
		src  string
		want Instr
	}{
		{"nop", Nop()},
		{"sync_all", SyncAll()},
		{"alloc L1 off=0 size=32768 name=a", Alloc(L1, 0, 32768, "a")},
		{"alloc ub off=0x100 size=32KiB", Alloc(UB, 256, 32768, "")},
		{"alloc L0C off=1MiB-1MiB size=2*(64+64)", Alloc(L0C, 0, 256, "")},
		{"free name=a", Free("a")},
		{"free L1 name=a", Instr{Op: OpFree, Pipe: S, Region: Region{Buf: L1, Name: NameRegion("a")}}},
		{"free UB off=64", FreeAt(UB, 64)},
		{"scalar cycles=12", Scalar(12)},
		{"set_flag MTE2 MTE1 0", SetFlag(MTE2, MTE1, 0)},
		{"wait_flag MTE1 M 3", WaitFlag(MTE1, M, 3)},
		{"set_flag fixp s 7", SetFlag(FIXP, S, 7)},
		{"pipe_barrier V", Barrier(V)},
		{"pipe_barrier ALL", Barrier(ALL)},
		{"mte2.copy gm=0 l1=0 bytes=32768", CopyGM2L1(0, 0, 32768)},
		{"mte2.copy gm=4096 ub=64 bytes=1KiB", CopyGM2UB(4096, 64, 1024)},
		{"mte2.copy gm=0 ub=0 nburst=4 len=64 src_stride=1024 dst_stride=128",
			Copy2D(MTE2, Operand{UB, 0}, Operand{GM, 0}, 4, 64, 1024, 128)},
		{"mte2.copy gm=0 l1=0 nburst=4 len=64", Copy2D(MTE2, Operand{L1, 0}, Operand{GM, 0}, 4, 64, 64, 64)},
		{"mte3.copy ub=32 gm=8192 bytes=512", CopyUB2GM(32, 8192, 512)},
		{"mte3.copy ub=32 l1=64 bytes=512", CopyUB2L1(32, 64, 512)},
		{"mte3.copy ub=0 gm=0 nburst=2 len=32 dst_stride=4096",
			Copy2D(MTE3, Operand{GM, 0}, Operand{UB, 0}, 2, 32, 32, 4096)},
		{"mte1.load l0a=0 l1=0 rows=32 cols=64 stride=256 dtype=fp16", Load(L0A, 0, 0, 32, 64, 256, fp.FP16, false)},
		{"mte1.load l0b=512 l1=1024 rows=32 cols=64 dtype=fp16 transpose", Load(L0B, 512, 1024, 32, 64, 64, fp.FP16, true)},
		{"mte1.load l0a=0 l1=0 rows=16 cols=16 dtype=bf16", Load(L0A, 0, 0, 16, 16, 32, fp.BF16, false)},
		{"m.mmad c=0 a=0 b=0 m=16 k=32 n=48 in=fp16 out=fp32 init", Mmad(0, 0, 0, 16, 32, 48, fp.FP16, fp.FP32, true)},
		{"m.mmad c=1024 a=512 b=256 m=1 k=1 n=1 in=int8 out=int32 acc", Mmad(1024, 512, 256, 1, 1, 1, fp.INT8, fp.INT32, false)},
		{"fixp.l0c ub=0 l0c=0 rows=16 cols=16 stride=32 in=fp32 out=fp16 round=rne sat",
			L0CCopy(FIXP, Operand{UB, 0}, 0, 16, 16, 32, fp.FP32, fp.FP16, fp.RNE, true)},
		{"fixp.l0c gm=4096 l0c=0 rows=16 cols=16", L0CCopy(FIXP, Operand{GM, 4096}, 0, 16, 16, 64, fp.FP32, fp.FP32, fp.RNE, false)},
		{"v.l0c ub=0 l0c=0 rows=2 cols=16 out=fp16 round=rint", L0CCopy(V, Operand{UB, 0}, 0, 2, 16, 32, fp.FP32, fp.FP16, fp.RNE, false)},
		{"v.add dst=0 src0=256 src1=512 dtype=fp32 repeat=4", VecBinary(VAdd, 0, 256, 512, fp.FP32, 4)},
		{"v.sub dst=0 src0=256 src1=512 dtype=fp16", VecBinary(VSub, 0, 256, 512, fp.FP16, 1)},
		{"v.mul dst=0 src0=256 src1=512 dtype=fp32 repeat=2 mask=8", VecBinary(VMul, 0, 256, 512, fp.FP32, 2).WithMask(8)},
		{"v.max dst=0 src0=256 src1=512 dtype=int32 dst_stride=512 src_stride=1024",
			VecBinary(VMax, 0, 256, 512, fp.INT32, 1).WithRepStrides(512, 1024)},
		{"v.min dst=0 src0=256 src1=512 dtype=bf16", VecBinary(VMin, 0, 256, 512, fp.BF16, 1)},
		{"v.muls dst=0 src0=256 scalar=0.5 dtype=fp32", VecScalar(VMuls, 0, 256, 0.5, fp.FP32, 1)},
		{"v.adds dst=0 src0=256 scalar=-1e-3 dtype=fp16 repeat=3", VecScalar(VAdds, 0, 256, -1e-3, fp.FP16, 3)},
		{"v.muls dst=0 src0=0 scalar=1/4096 dtype=fp32", VecScalar(VMuls, 0, 0, 1.0/4096, fp.FP32, 1)},
		{"v.abs dst=0 src0=256 dtype=fp32", VecAbs(0, 256, fp.FP32, 1)},
		{"v.dup dst=0 scalar=-inf dtype=fp32 repeat=2", VecDup(0, math.Inf(-1), fp.FP32, 2)},
		{"v.cast dst=0 src0=256 from=fp32 to=fp16 round=rz sat repeat=2", cast},
		{"v.cast dst=0 src0=256 from=fp16 to=fp32", VecCast(0, 256, fp.FP16, fp.FP32, fp.RNE, false, 1)},
		{"V.ADD DST=0 SRC0=0 SRC1=0 DTYPE=FP32", VecBinary(VAdd, 0, 0, 0, fp.FP32, 1)},
		{"  nop   # comment", Nop()},
	}
	for _, c := range cases {
		f := mustParse(t, c.src)
		got := collect(t, f, 0)
		want := withLine(c.want, 1)
		if len(got) != 1 || !reflect.DeepEqual(got[0], want) {
			t.Errorf("%q:\n got %+v\nwant %+v", c.src, got, want)
			continue
		}
		if err := Validate(c.want); err != nil {
			t.Errorf("Validate(%q): %v", c.src, err)
		}
		// Format prints text that parses to the same instruction.
		txt := Format(c.want)
		g2 := collect(t, mustParse(t, txt), 0)
		if len(g2) != 1 || !reflect.DeepEqual(g2[0], want) {
			t.Errorf("Format %q -> %q parses to %+v", c.src, txt, g2)
		}
	}
}

// TestParseErrors checks that each malformed line is rejected with its
// line number and a message naming the token and the constraint.
func TestParseErrors(t *testing.T) {
	cases := []struct{ src, want string }{
		{"nop\nnop\nmte2.copy gm=0 l0c=0 bytes=32", `t.s:3: mte2.copy: unknown operand "l0c"`},
		{"set_flag MTE2 MTE1 -1", "t.s:1: set_flag: flag id -1 out of range"},
		{"sync_all ALL", `sync_all: unexpected operand "ALL"`},
		{"frobnicate", `t.s:1: unknown mnemonic "frobnicate"`},
		{"set_flag MTE2 MTE9 0", `t.s:1: set_flag: expected a pipe name (S, MTE1, MTE2, MTE3, M, V, FIXP), got "MTE9"`},
		{"set_flag MTE2 ALL 0", `got "ALL"`},
		{"set_flag MTE2 MTE2 0", "set_flag: source and destination pipe are both MTE2"},
		{"set_flag MTE2 MTE1", `set_flag: missing flag id`},
		{"set_flag MTE2 MTE1 0 1", `set_flag: unexpected operand "1"`},
		{"pipe_barrier", "pipe_barrier: missing pipe"},
		{"pipe_barrier X", `expected a pipe name`},
		{"alloc L1 size=32", `alloc: missing operand "off"`},
		{"alloc GM off=0 size=32", "alloc: buffer GM is not an on-chip buffer"},
		{"alloc Q off=0 size=32", `alloc: expected a buffer name (L1, L0A, L0B, L0C, UB), got "Q"`},
		{"alloc L1 off=0 size=0", "alloc: size 0 must be > 0"},
		{"alloc L1 off=-32 size=32", "alloc: offset -32 must be >= 0"},
		{"alloc L1 off=0 size=32 name=9a", `alloc: name: bad region name "9a"`},
		{"alloc L1 off=0 off=0 size=32", `alloc: duplicate operand "off"`},
		{"alloc L1 off= size=32", "alloc: off: empty value"},
		{"free", "free: needs name=, or a buffer and off="},
		{"free L1 off=0 name=a", "free: name= and off= exclude each other"},
		{"scalar", `scalar: missing operand "cycles"`},
		{"scalar cycles=-1", "scalar: cycles -1 must be >= 0"},
		{"mte2.copy gm=0 bytes=32", "mte2.copy: needs one of l1=, ub="},
		{"mte2.copy gm=0 l1=0 ub=0 bytes=32", "mte2.copy: l1= and ub= exclude each other"},
		{"mte2.copy l1=0 bytes=32", `mte2.copy: missing operand "gm"`},
		{"mte2.copy gm=0 l1=0", `mte2.copy: missing operand "nburst" (give bytes=, or nburst= and len=)`},
		{"mte2.copy gm=0 l1=0 bytes=32 len=32", "mte2.copy: bytes= and len= exclude each other"},
		{"mte2.copy gm=0 l1=0 bytes=0", "mte2.copy: copy length 0 must be > 0"},
		{"mte2.copy gm=-32 l1=0 bytes=32", "mte2.copy: negative GM address -32"},
		{"mte2.copy gm=0 ub=0 nburst=0 len=32", "mte2.copy: nburst 0 must be >= 1"},
		{"mte2.copy gm=0 ub=0 nburst=2 len=64 dst_stride=32", "mte2.copy: dst_stride 32 < len 64"},
		{"mte3.copy gm=0 l1=0 bytes=32", `mte3.copy: missing operand "ub"`},
		{"mte1.load l0a=0 l1=0 rows=16 cols=16", `mte1.load: missing operand "dtype"`},
		{"mte1.load l0a=0 l0b=0 l1=0 rows=16 cols=16 dtype=fp16", "mte1.load: l0a= and l0b= exclude each other"},
		{"mte1.load l0a=0 l1=0 rows=0 cols=16 dtype=fp16", "mte1.load: rows 0 and cols 16 must be > 0"},
		{"mte1.load l0a=0 l1=0 rows=16 cols=16 stride=16 dtype=fp16", "mte1.load: stride 16 is shorter than a row"},
		{"mte1.load l0a=0 l1=0 rows=16 cols=16 dtype=fp99", `mte1.load: dtype: unknown number format "fp99"`},
		{"mte1.load l0a=0 l1=0 rows=16 cols=16 dtype=fp16 transpose transpose", "mte1.load: duplicate transpose"},
		{"m.mmad c=0 a=0 b=0 m=16 k=16 n=16 in=fp16 out=fp32", "m.mmad: needs init (C = A·B) or acc (C += A·B)"},
		{"m.mmad c=0 a=0 b=0 m=16 k=16 n=16 in=fp16 out=fp32 init acc", "m.mmad: init and acc exclude each other"},
		{"m.mmad c=0 a=0 b=0 m=0 k=16 n=16 in=fp16 out=fp32 init", "m.mmad: m, k, n (0, 16, 16) must be > 0"},
		{"m.mmad c=0 a=0 b=0 m=16 k=16 n=16 in=fp16 out=int8 init", "m.mmad: the cube cannot accumulate fp16 inputs into int8"},
		{"m.mmad c=0 a=0 m=16 k=16 n=16 in=fp16 out=fp32 init", `m.mmad: missing operand "b"`},
		{"m.mmad c=0 a=0 b=0 m=16 k=16 n=16 in=fp16 out=fp32 init sat", `m.mmad: unexpected operand "sat"`},
		{"v.l0c gm=0 l0c=0 rows=16 cols=16", `v.l0c: unknown operand "gm"`},
		{"fixp.l0c ub=0 l0c=0 rows=16 cols=16 round=sideways", `fixp.l0c: round: unknown rounding mode "sideways"`},
		{"fixp.l0c ub=0 l0c=0 rows=16 cols=16 in=bf16", "fixp.l0c: L0C holds fp32, fp16 or int32, not bf16"},
		{"v.add dst=0 src0=0 dtype=fp32", `v.add: missing operand "src1"`},
		{"v.add dst=0 src0=0 src1=0 dtype=fp32 repeat=0", "v.add: repeat 0 must be >= 1"},
		{"v.add dst=0 src0=0 src1=0 dtype=fp32 mask=-1", "v.add: mask -1 must be >= 0"},
		{"v.add dst=0 src0=0 src1=0 dtype=int8", "v.add: vector arithmetic on fp32, fp16, bf16 or int32, not int8"},
		{"v.abs dst=0 src0=0 src1=0 dtype=fp32", `v.abs: unknown operand "src1"`},
		{"v.dup dst=0 scalar=1 dtype=fp32 src_stride=32", `v.dup: unknown operand "src_stride"`},
		{"v.muls dst=0 src0=0 scalar=1%2 dtype=fp32", "operator '%' not allowed"},
		{"v.cast dst=0 src0=0 from=fp32 to=fp32", "v.cast: from and to are both fp32"},
		{"v.cast dst=0 src0=0 from=fp32 to=tf32", "v.cast: cannot cast fp32 to tf32"},
		{"v.add dst=1.5 src0=0 src1=0 dtype=fp32", `v.add: dst: "1.5" is not an integer`},
		{"v.add dst=i src0=0 src1=0 dtype=fp32", `v.add: dst: unknown variable "i"`},
		{"v.add dst=4/0 src0=0 src1=0 dtype=fp32", "v.add: dst: division by zero"},
		{"v.add dst=9223372036854775807+1 src0=0 src1=0 dtype=fp32", "v.add: dst: integer overflow"},
		{"v.add dst=99999999999999999999 src0=0 src1=0 dtype=fp32", `number "99999999999999999999" out of range`},
		{"v.add dst=(1 src0=0 src1=0 dtype=fp32", "missing )"},
		{"v.add dst=1+ src0=0 src1=0 dtype=fp32", "ends early"},
		{"v.add dst=12abc src0=0 src1=0 dtype=fp32", `bad number "12abc"`},
		{"v.add dst=1) src0=0 src1=0 dtype=fp32", `unexpected ")"`},
		{"v.add dst=" + strings.Repeat("(", 100) + "1" + strings.Repeat(")", 100) + " src0=0 src1=0 dtype=fp32", "nested too deeply"},
		{"v.add dst=0 src0=0 src1=0 dtype=fp32 repeat=4294967296", "repeat 4294967296 out of range"},
		{"nop\n}", "t.s:2: } without an open repeat block"},
		{"repeat 4 i {\nnop", "t.s:1: repeat block not closed with }"},
		{"repeat 4 i {\n} x", `t.s:2: unexpected "x" after }`},
		{"repeat 4 i", `repeat: expected "repeat COUNT [VAR] {"`},
		{"repeat -1 {\n}", "repeat: count -1 must be >= 0"},
		{"repeat 2 core {\n}", "loop variable cannot be named core"},
		{"repeat 2 i {\nrepeat 2 i {\n}\n}", `t.s:2: repeat: loop variable "i" already in use`},
		{"repeat 2 9i {\n}", `repeat: bad loop variable "9i"`},
		{"repeat j {\n}", `repeat: count: unknown variable "j"`},
		{"repeat 2 i {\n}\nnop dst=i", `t.s:3: nop: unknown operand "dst"`},
		{"repeat 2 i {\n}\nscalar cycles=i", `t.s:3: scalar: cycles: unknown variable "i"`},
	}
	for _, c := range cases {
		_, err := Parse("t.s", c.src)
		if err == nil {
			t.Errorf("%q: no error, want %q", c.src, c.want)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q:\n got %q\nwant %q", c.src, err, c.want)
		}
		if _, ok := err.(*Error); !ok {
			t.Errorf("%q: error type %T, want *Error", c.src, err)
		}
	}
}

// corpus is canonical assembly: Print must reproduce each text exactly.
var corpus = []string{
	"",
	"\n",
	"nop\n",
	`alloc L1 off=0 size=32768 name=a
mte2.copy gm=0 l1=0 bytes=32768
set_flag MTE2 MTE1 0
wait_flag MTE1 M 3             # nobody sets this: the run reports a deadlock
`,
	`# GEMM tile loop
# second comment line

alloc L1 off=0 size=64KiB name=a    # A tiles
alloc L0A off=0 size=0x8000 name=a0
alloc UB off=0 size=32KiB name=u
repeat 4 i {                        # outer
  repeat 2*(i+1) j {
    mte2.copy gm=0x10000+i*4096+core*65536 l1=j*1024 bytes=1KiB
    set_flag MTE2 MTE1 0
    wait_flag MTE2 MTE1 0
	mte1.load l0a=0 l1=j*1024 rows=16 cols=32 dtype=fp16
  }
  repeat 3 {
    scalar cycles=(i+1)*-2+10
  }
    # indented comment
} # end outer
v.muls dst=0 src0=256 scalar=-0.25 dtype=fp32 repeat=2 mask=32
v.dup dst=0 scalar=nan dtype=fp16
v.cast dst=0 src0=256 from=fp32 to=fp16 round=rz sat
pipe_barrier ALL
free name=a
free L0A off=0
`,
	"repeat 0 {\n}\n",
	"repeat core+1 k {\nrepeat k%2 {\nnop\n}\n}\n",
}

func TestRoundTripCanonical(t *testing.T) {
	for _, src := range corpus {
		f := mustParse(t, src)
		if got := Print(f); got != src {
			t.Errorf("Print(Parse(x)) != x:\n--- x\n%s--- got\n%s", src, got)
		}
	}
}

// TestRoundTripNonCanonical feeds text with tabs, CR LF, trailing white
// space and no final newline: Print canonicalises it, and parsing the
// printed text gives the same File.
func TestRoundTripNonCanonical(t *testing.T) {
	cases := []struct{ src, canon string }{
		{"nop", "nop\n"},
		{"nop  \t\n", "nop\n"},
		{"set_flag\tMTE2   MTE1 0\r\nwait_flag MTE2 MTE1 0\r\n", "set_flag MTE2 MTE1 0\nwait_flag MTE2 MTE1 0\n"},
		{"  repeat   2   i   {  # c  \n nop \n}\t\n", "  repeat 2 i {  # c\n nop\n}\n"},
		{"   \n\t\n# x \n", "\n\n# x\n"},
		{"\tnop\t# tab gap", "\tnop\t# tab gap\n"},
	}
	for _, c := range cases {
		f := mustParse(t, c.src)
		out := Print(f)
		if out != c.canon {
			t.Errorf("Print(Parse(%q)) = %q, want %q", c.src, out, c.canon)
		}
		if d1, d2 := dump(f), dump(mustParse(t, out)); d1 != d2 {
			t.Errorf("Parse(Print(Parse(%q))) differs:\n%s\nvs\n%s", c.src, d1, d2)
		}
	}
	for _, src := range corpus {
		f := mustParse(t, src)
		if d1, d2 := dump(f), dump(mustParse(t, Print(f))); d1 != d2 {
			t.Errorf("corpus round trip differs:\n%s\nvs\n%s", d1, d2)
		}
	}
}

// TestStream checks repeat expansion, loop variable values, core, line
// numbers and lazy early stop.
func TestStream(t *testing.T) {
	src := `repeat 2 i {
  repeat 3 j {
    mte2.copy gm=core*65536+i*4096+j*32 ub=(i*3+j)*32 bytes=32
  }
  scalar cycles=i
}
repeat 0 {
  nop
}
repeat core {
  nop
}
`
	f := mustParse(t, src)
	for core := 0; core < 3; core++ {
		got := collect(t, f, core)
		var want []Instr
		for i := int64(0); i < 2; i++ {
			for j := int64(0); j < 3; j++ {
				want = append(want, withLine(CopyGM2UB(int64(core)*65536+i*4096+j*32, (i*3+j)*32, 32), 3))
			}
			want = append(want, withLine(Scalar(i), 5))
		}
		for range core {
			want = append(want, withLine(Nop(), 11))
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("core %d:\n got %v\nwant %v", core, got, want)
		}
		// A Stream yields the same, and may be iterated twice.
		for range 2 {
			var s []Instr
			for in := range f.Stream(core) {
				s = append(s, in)
			}
			if !reflect.DeepEqual(s, want) {
				t.Errorf("core %d: Stream differs from Expand", core)
			}
		}
	}
	// Early stop.
	n := 0
	for range f.Stream(0) {
		n++
		if n == 4 {
			break
		}
	}
	if n != 4 {
		t.Errorf("early stop: %d", n)
	}
}

func TestExpandErrors(t *testing.T) {
	cases := []struct {
		src   string
		cores int
		want  string
	}{
		{"repeat 4 i {\n  mte2.copy gm=0 ub=64/(2-i) bytes=32\n}", 1, "t.s:2: mte2.copy: ub: division by zero (core=0, i=2)"},
		{"repeat 4 i {\n  mte2.copy gm=0 ub=64*(1-i) bytes=32\n}", 1, "t.s:2: mte2.copy: negative UB address -64 (core=0, i=2)"},
		{"repeat 0-core {\n  nop\n}", 2, "t.s:1: repeat: count -1 must be >= 0 (core=1)"},
		{"set_flag MTE2 MTE1 core-1", 1, "t.s:1: set_flag: flag id -1 out of range (must be >= 0) (core=0)"},
		{"v.add dst=0 src0=0 src1=0 dtype=fp32 repeat=core", 1, "t.s:1: v.add: repeat 0 must be >= 1 (core=0)"},
		{"v.muls dst=0 src0=0 scalar=core dtype=fp32 repeat=3000000000+core", 1, "repeat 3000000000 out of range"},
	}
	for _, c := range cases {
		f := mustParse(t, c.src)
		_, err := f.Program(c.cores)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want %q", c.src, err, c.want)
		}
	}
	f := mustParse(t, "repeat 2 i {\nscalar cycles=core+i\n}")
	p, err := f.Program(3)
	if err != nil || len(p.Cores) != 3 || p.Name != "t.s" {
		t.Fatalf("Program: %v %+v", err, p)
	}
	var got []int64
	for in := range p.Cores[2] {
		got = append(got, in.Cycles)
	}
	if !reflect.DeepEqual(got, []int64{2, 3}) {
		t.Errorf("core 2 cycles %v", got)
	}
}

// TestScalarFloats checks that Format prints scalars that parse back to the
// same float64 bits.
func TestScalarFloats(t *testing.T) {
	for _, v := range []float64{0, math.Copysign(0, -1), 1, -1.5, 0.1, 1e-300, 5e-324, math.MaxFloat64,
		65504, 1.0 / 3, math.Inf(1), math.Inf(-1), 123456789012345678} {
		in := VecDup(0, v, fp.FP32, 1)
		got := collect(t, mustParse(t, Format(in)), 0)
		if math.Float64bits(got[0].Scalar) != math.Float64bits(v) {
			t.Errorf("%v: %q parsed as %v", v, Format(in), got[0].Scalar)
		}
	}
	got := collect(t, mustParse(t, Format(VecDup(0, math.NaN(), fp.FP32, 1))), 0)
	if !math.IsNaN(got[0].Scalar) {
		t.Errorf("nan: %v", got[0].Scalar)
	}
}

// TestBuilderMatchesParser builds a small kernel both ways.
func TestBuilderMatchesParser(t *testing.T) {
	src := `alloc L1 off=0 size=64KiB name=a
alloc L0A off=0 size=32KiB name=a0
alloc L0B off=0 size=32KiB name=b0
alloc L0C off=0 size=64KiB name=c0
alloc UB off=0 size=64KiB name=u
repeat 2 i {
  mte2.copy gm=i*8192 l1=i*8192 bytes=8KiB
  set_flag MTE2 MTE1 i
  wait_flag MTE2 MTE1 i
  mte1.load l0a=0 l1=i*8192 rows=64 cols=64 stride=128 dtype=fp16
  mte1.load l0b=0 l1=i*8192 rows=64 cols=64 dtype=fp16 transpose
  set_flag MTE1 M 0
  wait_flag MTE1 M 0
  m.mmad c=0 a=0 b=0 m=64 k=64 n=64 in=fp16 out=fp32 init
}
set_flag M V 0
wait_flag M V 0
v.l0c ub=0 l0c=0 rows=64 cols=64 in=fp32 out=fp32
v.cast dst=16384 src0=0 from=fp32 to=fp16 repeat=64
v.muls dst=16384 src0=16384 scalar=2 dtype=fp16 repeat=32 mask=64 dst_stride=256 src_stride=256
set_flag V MTE3 0
wait_flag V MTE3 0
mte3.copy ub=16384 gm=1MiB nburst=64 len=128 src_stride=128 dst_stride=256
pipe_barrier ALL
free name=a
free L0A off=0
`
	b := NewBuilder()
	b.Add(Alloc(L1, 0, 64<<10, "a"))
	b.Add(Alloc(L0A, 0, 32<<10, "a0"))
	b.Add(Alloc(L0B, 0, 32<<10, "b0"))
	b.Add(Alloc(L0C, 0, 64<<10, "c0"))
	b.Add(Alloc(UB, 0, 64<<10, "u"))
	for i := int64(0); i < 2; i++ {
		b.Add(CopyGM2L1(i*8192, i*8192, 8192))
		b.Add(SetFlag(MTE2, MTE1, int(i)))
		b.Add(WaitFlag(MTE2, MTE1, int(i)))
		b.Add(Load(L0A, 0, i*8192, 64, 64, 128, fp.FP16, false))
		b.Add(Load(L0B, 0, i*8192, 64, 64, 128, fp.FP16, true))
		b.Add(SetFlag(MTE1, M, 0))
		b.Add(WaitFlag(MTE1, M, 0))
		b.Add(Mmad(0, 0, 0, 64, 64, 64, fp.FP16, fp.FP32, true))
	}
	b.Add(SetFlag(M, V, 0))
	b.Add(WaitFlag(M, V, 0))
	b.Add(L0CCopy(V, Operand{UB, 0}, 0, 64, 64, 256, fp.FP32, fp.FP32, fp.RNE, false))
	b.Add(VecCast(16384, 0, fp.FP32, fp.FP16, fp.RNE, false, 64))
	b.Add(VecScalar(VMuls, 16384, 16384, 2, fp.FP16, 32).WithMask(64).WithRepStrides(256, 256))
	b.Add(SetFlag(V, MTE3, 0))
	b.Add(WaitFlag(V, MTE3, 0))
	b.Add(Copy2D(MTE3, Operand{GM, 1 << 20}, Operand{UB, 16384}, 64, 128, 128, 256))
	b.Add(Barrier(ALL))
	b.Add(Free("a"))
	b.Add(FreeAt(L0A, 0))
	if err := b.Err(); err != nil {
		t.Fatal(err)
	}
	got := collect(t, mustParse(t, src), 0)
	if len(got) != b.Len() {
		t.Fatalf("parser %d instructions, builder %d", len(got), b.Len())
	}
	for i, in := range b.Instrs() {
		p := got[i]
		p.Line = 0
		if !reflect.DeepEqual(p, in) {
			t.Errorf("#%d:\nparser  %s\nbuilder %s", i, Format(p), Format(in))
		}
	}
	lim := Limits{Capacity: [NumBuffers]int64{0, 1 << 20, 64 << 10, 64 << 10, 256 << 10, 256 << 10}, FlagIDs: 8,
		CubeIn: []fp.Format{fp.FP16, fp.INT8}}
	if err := Check(Program{Name: "t.s", Cores: []Stream{b.Stream(), nil}}, lim); err != nil {
		t.Errorf("Check: %v", err)
	}
}

func TestBuilderErr(t *testing.T) {
	b := NewBuilder()
	b.Add(Nop())
	b.Add(SetFlag(MTE2, MTE2, 0))
	b.Add(Scalar(-1))
	b.Add(Nop())
	if b.Len() != 2 {
		t.Errorf("Len %d", b.Len())
	}
	if err := b.Err(); err == nil || err.Error() != "instruction 1: set_flag: source and destination pipe are both MTE2" {
		t.Errorf("Err = %v", err)
	}
	b.Reset()
	if b.Err() != nil || b.Len() != 0 {
		t.Errorf("Reset")
	}
}

// TestFormatNeverPanics prints arbitrary, mostly invalid instructions.
func TestFormatNeverPanics(t *testing.T) {
	for op := Op(0); op < numOps+2; op++ {
		for _, p := range []Pipe{S, MTE2, FIXP, NumPipes, ALL} {
			in := Instr{Op: op, Pipe: p, VOp: numVecOps, In: 200, Round: 99, Region: Region{Buf: 77}}
			_ = Format(in)
			_ = Validate(in)
			_ = Check(Program{Cores: []Stream{Slice([]Instr{in})}}, Limits{})
		}
	}
}

// Instructions print with their machine kind's lane and buffer names;
// nil names (and indices beyond the lists) print DaVinci's.
func TestNamesFormat(t *testing.T) {
	n := &Names{Lanes: []string{"issue", "copy", "ldsm", "tensor"}, Buffers: []string{"GM", "SMEM", "RA"}}
	cp := Copy(MTE2, Operand{L1, 64}, Operand{GM, 128}, 4096)
	if got, want := n.Format(cp), "copy.copy gm=128 smem=64 bytes=4096"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got, want := n.Format(SetFlag(MTE2, M, 3)), "set_flag copy tensor 3"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got, want := n.Format(Barrier(ALL)), "pipe_barrier ALL"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got, want := n.Format(FreeIn(L0B, "x")), "free L0B name=x"; got != want { // beyond the list
		t.Errorf("got %q, want %q", got, want)
	}
	if (*Names)(nil).Format(cp) != Format(cp) || Format(cp) != "mte2.copy gm=128 l1=64 bytes=4096" {
		t.Errorf("default names: %q", Format(cp))
	}
}

// A file of more than MaxLines lines is refused before parsing (a parsed
// line holds up to ~2 KB, ParseHostBytes).
func TestParseMaxLines(t *testing.T) {
	if _, err := Parse("ok.s", strings.Repeat("nop\n", MaxLines)); err != nil {
		t.Fatalf("%d lines: %v", MaxLines, err)
	}
	_, err := Parse("big.s", strings.Repeat("nop\n", MaxLines+1))
	if err == nil || !strings.Contains(err.Error(), "big.s:262145: 262145 lines: at most 262144") {
		t.Fatalf("%d lines: %v", MaxLines+1, err)
	}
}

// An error quoting a megabyte token stays a short line.
func TestErrorClipsHugeTokens(t *testing.T) {
	_, err := Parse("big.s", "nop "+strings.Repeat("é", 1<<20)+"\n")
	if err == nil || len(err.Error()) > 500 || !strings.Contains(err.Error(), "bytes in all)") || !utf8.ValidString(err.Error()) {
		t.Fatalf("error of %d bytes: %.200s", len(err.Error()), err)
	}
}

// A UTF-8 byte-order mark before the first line is not part of it (it
// read as mnemonic "\ufeffnop").
func TestParseByteOrderMark(t *testing.T) {
	f, err := Parse("bom.s", "\ufeffnop\n")
	if err != nil || len(f.Nodes) != 1 || f.Nodes[0].Mnemonic != "nop" {
		t.Fatalf("%v %+v", err, f)
	}
}

// A repeat whose body yields nothing for its values (an inner count of 0)
// still costs a step per iteration: they are bounded as instructions are
// (repeat 10^12 around repeat 0 expanded for hours, ignoring a signal).
func TestExpandEmptyIterationsBounded(t *testing.T) {
	f := mustParse(t, "repeat 1000000000000 {\n  repeat 0 {\n    nop\n  }\n}\nnop\n")
	_, err := f.Program(1)
	want := fmt.Sprintf("t.s:1: repeat: more than %d iterations yield no instruction (an inner repeat count is 0) (core=0)", MaxStreamInstrs)
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %q", err, want)
	}
	// Up to the bound they are fine (and yield what follows them).
	f = mustParse(t, "repeat 1000 i {\n  repeat i%2 {\n    nop\n  }\n}\n")
	if got := len(collect(t, f, 0)); got != 500 {
		t.Errorf("%d instructions, want 500", got)
	}
}

// ExpandContext stops within CancelCheckEvery instructions of its context
// being done and returns an error wrapping the context's cause;
// StreamContext ends there.
func TestExpandContext(t *testing.T) {
	f := mustParse(t, "repeat 1000000 {\n  nop\n}\n")
	cause := errors.New("interrupted")
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	n := 0
	err := f.ExpandContext(ctx, 0, func(Instr) bool {
		if n++; n == 10000 {
			cancel(cause)
		}
		return true
	})
	if !errors.Is(err, cause) || n < 10000 || n > 10000+CancelCheckEvery {
		t.Errorf("after %d instructions: %v, want a stop wrapping %v within %d instructions", n, err, cause, CancelCheckEvery)
	}
	if want := "t.s: core 0: stopped after 12288 instructions: interrupted"; err == nil || err.Error() != want {
		t.Errorf("error %v, want %q", err, want)
	}
	n = 0
	for range f.StreamContext(ctx, 0) {
		n++
	}
	if n != CancelCheckEvery-1 {
		t.Errorf("a stream of a done context yielded %d instructions, want %d", n, CancelCheckEvery-1)
	}
	// Without cancellation everything comes.
	n = 0
	if err := f.ExpandContext(context.Background(), 0, func(Instr) bool { n++; return true }); err != nil || n != 1000000 {
		t.Errorf("background: %d instructions, %v", n, err)
	}
}

// Program bounds the streams of its cores together (a Tally): two cores
// of half MaxStreamInstrs and one more instruction are refused naming
// both, as are their loop iterations that yield nothing; one core of them
// is not, nor a stream expanded on its own.
func TestProgramBoundsAllCores(t *testing.T) {
	half := MaxStreamInstrs/2 + 1
	f := mustParse(t, fmt.Sprintf("repeat %d {\n  nop\n}\n", half))
	if _, err := f.Program(1); err != nil {
		t.Fatalf("one core: %v", err)
	}
	_, err := f.Program(2)
	want := fmt.Sprintf("t.s:2: the streams of cores 0…1 are longer than %d instructions together (repeat counts multiply; one bound for all the cores' streams) (core=1)", MaxStreamInstrs)
	if err == nil || err.Error() != want {
		t.Errorf("two cores: %v, want %q", err, want)
	}
	n := int64(0)
	for core := range 2 {
		if err := f.ExpandTally(context.Background(), core, nil, func(Instr) bool { n++; return true }); err != nil {
			t.Fatalf("core %d on its own: %v", core, err)
		}
	}
	if n != 2*int64(half) {
		t.Errorf("on their own: %d instructions, want %d", n, 2*half)
	}
	f = mustParse(t, fmt.Sprintf("repeat %d {\n  repeat 0 {\n    nop\n  }\n}\nnop\n", half))
	_, err = f.Program(2)
	want = fmt.Sprintf("t.s:1: repeat: more than %d iterations yield no instruction in the streams of cores 0…1 together (an inner repeat count is 0; one bound for all the cores' streams) (core=1)", MaxStreamInstrs)
	if err == nil || err.Error() != want {
		t.Errorf("empty iterations on two cores: %v, want %q", err, want)
	}
}
