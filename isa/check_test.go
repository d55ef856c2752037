package isa

import (
	"strings"
	"testing"

	"github.com/davinci-sim/davinci-sim/fp"
)

// limits512 is limits910A with 512-byte vector repeats.
var limits512 = func() Limits { l := limits910A; l.VectorRepeatBytes = 512; return l }()

var limits910A = Limits{
	Capacity: [NumBuffers]int64{0, 1 << 20, 64 << 10, 64 << 10, 256 << 10, 256 << 10},
	FlagIDs:  8,
	HasFIXP:  false,
	CubeIn:   []fp.Format{fp.FP16, fp.INT8},
}

// TestCheck runs one program per class of error; each names the line.
func TestCheck(t *testing.T) {
	const hdr = "alloc L1 off=0 size=64KiB name=a\n" // line 1
	cases := []struct {
		name, src string
		lim       Limits
		want      string // "" = no error
	}{
		{"ok", hdr + "mte2.copy gm=0 l1=32 bytes=1000\nfree name=a\n", limits910A, ""},
		{"no alloc: no region rule", "mte2.copy gm=0 l1=512KiB bytes=1000\n", limits910A, ""},
		{"design deadlock example is statically fine", "alloc L1 off=0 size=32768 name=a\nmte2.copy gm=0 l1=0 bytes=32768\nset_flag MTE2 MTE1 0\nwait_flag MTE1 M 3\n", limits910A, ""},
		{"alloc over capacity", "nop\nalloc L0A off=32KiB size=64KiB\n", limits910A,
			"t.s:2: core 0: alloc: L0A region [32768, 98304) exceeds the buffer's capacity of 65536 bytes"},
		{"alloc offset unaligned", "alloc UB off=16 size=32\n", limits910A, "t.s:1: core 0: alloc: UB region at 16 size 32 is not 32-byte aligned"},
		{"alloc size unaligned", "alloc UB off=0 size=48\n", limits910A, "not 32-byte aligned"},
		{"overlap", hdr + "alloc L1 off=32KiB size=64KiB name=b\n", limits910A,
			`t.s:2: core 0: alloc: L1 region [32768, 98304) overlaps live region "a" [0, 65536)`},
		{"duplicate name", hdr + "alloc UB off=0 size=32 name=a\n", limits910A, `t.s:2: core 0: alloc: region name "a" already live`},
		{"free unknown", hdr + "free name=b\n", limits910A, `t.s:2: core 0: free: no live region named "b"`},
		{"double free", hdr + "free name=a\nfree name=a\n", limits910A, `t.s:3: core 0: free: no live region named "a"`},
		{"free wrong buffer", hdr + "free UB name=a\n", limits910A, `free: region "a" is in L1, not UB`},
		{"free by offset", hdr + "free L1 off=32\n", limits910A, "t.s:2: core 0: free: no live L1 region starts at 32"},
		{"free by offset ok then reuse", hdr + "free L1 off=0\nalloc L1 off=0 size=32 name=a\n", limits910A, ""},
		{"access outside region", hdr + "mte2.copy gm=0 ub=0 bytes=32\n", limits910A,
			"t.s:2: core 0: mte2.copy: destination UB [0, 32) is not inside one live allocated region"},
		{"access straddles region end", hdr + "mte2.copy gm=0 l1=64KiB-32 bytes=64\n", limits910A,
			"destination L1 [65504, 65568) is not inside one live allocated region"},
		{"access after free", hdr + "free name=a\nmte2.copy gm=0 l1=0 bytes=32\n", limits910A, "t.s:3: core 0: mte2.copy: destination L1"},
		{"unaligned operand", "mte2.copy gm=3 l1=16 bytes=32\n", limits910A,
			"t.s:1: core 0: mte2.copy: destination address L1 16 is not 32-byte aligned"},
		{"GM address need not be aligned", "mte2.copy gm=3 l1=0 bytes=32\n", limits910A, ""},
		{"beyond capacity without alloc", "mte2.copy gm=0 ub=256KiB-32 bytes=64\n", limits910A,
			"destination UB [262112, 262176) exceeds the buffer's capacity of 262144 bytes"},
		{"flag id range", "nop\nset_flag MTE2 MTE1 8\n", limits910A, "t.s:2: core 0: set_flag: flag id 8 out of range [0, 8)"},
		{"flag id unchecked", "set_flag MTE2 MTE1 8\n", Limits{}, ""},
		{"no FIXP", "fixp.l0c ub=0 l0c=0 rows=16 cols=16\n", limits910A, "t.s:1: core 0: fixp.l0c: the machine has no FIXP pipe"},
		{"no FIXP flag", "wait_flag FIXP MTE3 0\n", limits910A, "wait_flag: the machine has no FIXP pipe"},
		{"no FIXP barrier", "pipe_barrier FIXP\n", limits910A, "pipe_barrier: the machine has no FIXP pipe"},
		{"FIXP present", "fixp.l0c ub=0 l0c=0 rows=16 cols=16\n", Limits{HasFIXP: true}, ""},
		{"cube type", "m.mmad c=0 a=0 b=0 m=16 k=16 n=16 in=bf16 out=fp32 init\n", limits910A,
			"t.s:1: core 0: m.mmad: the cube does not accept bf16 inputs (accepts [fp16 int8])"},
		{"L0A footprint padded", "m.mmad c=0 a=0 b=0 m=257 k=128 n=16 in=fp16 out=fp32 init\n", limits910A,
			"m.mmad: A L0A [0, 69632) exceeds the buffer's capacity of 65536 bytes"},
		{"L0C footprint", "m.mmad c=0 a=0 b=0 m=256 k=16 n=257 in=fp16 out=fp32 init\n", limits910A,
			"m.mmad: C L0C [0, 278528) exceeds"},
		{"L0C footprint fits", "m.mmad c=0 a=0 b=0 m=256 k=16 n=256 in=fp16 out=fp32 init\n", limits910A, ""},
		{"load footprint", "mte1.load l0b=32KiB l1=0 rows=128 cols=129 dtype=fp16\n", limits910A,
			"mte1.load: fractal destination L0B [32768, 69632) exceeds"},
		{"vector footprint", "v.add dst=255KiB src0=0 src1=0 dtype=fp32 repeat=8\n", limits910A,
			"v.add: dst UB [261120, 263168) exceeds"},
		{"vector strides", "alloc UB off=0 size=1KiB\nv.add dst=0 src0=0 src1=0 dtype=fp32 repeat=2 mask=8 dst_stride=1024 src_stride=32\n", limits910A,
			"t.s:2: core 0: v.add: dst UB [0, 1056) is not inside one live allocated region"},
		{"mask beyond a repeat", "v.add dst=0 src0=0 src1=0 dtype=fp32 mask=65\n", limits910A,
			"v.add: mask 65 out of range [0, 64] (elements of fp32 per 256-byte repeat)"},
		{"mask within a wider repeat", "v.add dst=0 src0=0 src1=0 dtype=fp32 mask=65\n", limits512, ""},
		{"wider repeat footprint", "v.add dst=254KiB src0=0 src1=0 dtype=fp32 repeat=5\n", limits512,
			"v.add: dst UB [260096, 262656) exceeds"},
		{"wider repeat footprint fits", "v.add dst=254KiB src0=0 src1=0 dtype=fp32 repeat=4\n", limits512, ""},
		{"default repeat footprint", "v.add dst=254KiB src0=0 src1=0 dtype=fp32 repeat=9\n", limits910A,
			"v.add: dst UB [260096, 262400) exceeds"},
		{"overflowing range", "mte2.copy gm=0 ub=0 nburst=2147483647 len=32 dst_stride=9223372036854775807\n", limits910A,
			"destination range at UB 0 overflows"},
	}
	for _, c := range cases {
		f := mustParse(t, c.src)
		p, err := f.Program(1)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		err = Check(p, c.lim)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: unexpected %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s:\n got %v\nwant %q", c.name, err, c.want)
		}
		if err != nil {
			if _, ok := err.(*CheckError); !ok {
				t.Errorf("%s: error type %T", c.name, err)
			}
		}
	}
}

// TestCheckCoresAndIndex checks the core number and, for Go-built streams,
// the instruction index.
func TestCheckCoresAndIndex(t *testing.T) {
	f := mustParse(t, "repeat 2 i {\n  set_flag MTE2 MTE1 core*4+i\n}\n")
	p, err := f.Program(3)
	if err != nil {
		t.Fatal(err)
	}
	err = Check(p, limits910A)
	ce, ok := err.(*CheckError)
	if !ok || ce.Core != 2 || ce.Line != 2 || ce.Index != 0 || ce.File != "t.s" {
		t.Fatalf("got %#v", err)
	}
	want := "t.s:2: core 2: set_flag: flag id 8 out of range [0, 8)"
	if err.Error() != want {
		t.Errorf("got %q want %q", err, want)
	}
	// Constructor-built stream with an invalid instruction (not validated).
	s := Slice([]Instr{Nop(), Nop(), Mmad(0, 0, 0, 16, 0, 16, fp.FP16, fp.FP32, true)})
	err = Check(Program{Name: "gen", Cores: []Stream{nil, s}}, limits910A)
	want = "gen: core 1: instruction #2: m.mmad: m, k, n (16, 0, 16) must be > 0"
	if err == nil || err.Error() != want {
		t.Errorf("got %v want %q", err, want)
	}
	// Every core must reach the same number of sync_all barriers.
	f = mustParse(t, "sync_all\nrepeat 2-core {\n  sync_all\n}\n")
	if p, err = f.Program(3); err != nil {
		t.Fatal(err)
	}
	err = Check(p, limits910A)
	want = "t.s:3: core 1: sync_all: core 1 reaches 2 sync_all, core 0 reaches 3: the run would deadlock"
	if err == nil || err.Error() != want {
		t.Errorf("got %v want %q", err, want)
	}
	if err := Check(Program{Cores: []Stream{Slice([]Instr{SyncAll()}), nil, Slice([]Instr{Nop(), SyncAll()})}}, limits910A); err != nil {
		t.Errorf("balanced sync_all: %v", err)
	}
	// State is per core: a region allocated on core 0 does not exist on core 1.
	a := Slice([]Instr{Alloc(UB, 0, 64, "x")})
	b := Slice([]Instr{Alloc(UB, 0, 64, "y"), Free("x")})
	err = Check(Program{Cores: []Stream{a, b}}, limits910A)
	if err == nil || !strings.Contains(err.Error(), `core 1: instruction #1: free: no live region named "x"`) {
		t.Errorf("got %v", err)
	}
}
