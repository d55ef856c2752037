package isa

import (
	"strings"
	"testing"

	"github.com/davinci-sim/davinci-sim/fp"
)

// BenchmarkBuilder measures validated instruction construction.
func BenchmarkBuilder(b *testing.B) {
	bl := NewBuilder()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if bl.Len() >= 1<<16 {
			bl.Reset()
		}
		bl.Add(Mmad(0, 0, 0, 64, 64, 64, fp.FP16, fp.FP32, i&1 == 0))
	}
}

const benchSrc = `alloc L1 off=0 size=512KiB name=a
alloc UB off=0 size=64KiB name=u
repeat 64 i {
  repeat 16 j {
    mte2.copy gm=core*1MiB+i*16384+j*1024 l1=j*1024 bytes=1KiB
    set_flag MTE2 MTE1 0
    wait_flag MTE2 MTE1 0
  }
  v.adds dst=0 src0=0 scalar=0.5 dtype=fp32 repeat=i+1
}
free name=a
free name=u
`

// BenchmarkExpand measures streaming instructions out of a parsed file with
// loop-variable expressions (reported per instruction).
func BenchmarkExpand(b *testing.B) {
	f := mustParse(b, benchSrc)
	n := 0
	for range f.Stream(0) {
		n++
	}
	b.ReportAllocs()
	for b.Loop() {
		for in := range f.Stream(1) {
			_ = in
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/instr")
}

// BenchmarkParse measures parsing (per line).
func BenchmarkParse(b *testing.B) {
	src := strings.Repeat(benchSrc, 20)
	lines := strings.Count(src, "\n")
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		if _, err := Parse("b.s", src); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*lines), "ns/line")
}

// BenchmarkCheck measures the static checks (per instruction).
func BenchmarkCheck(b *testing.B) {
	f := mustParse(b, benchSrc)
	p, err := f.Program(1)
	if err != nil {
		b.Fatal(err)
	}
	n := 0
	for range p.Cores[0] {
		n++
	}
	for b.Loop() {
		if err := Check(p, limits910A); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/instr")
}
