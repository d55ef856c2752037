package programs

import (
	"bytes"
	"maps"
	"math"
	"slices"
	"testing"

	"github.com/davinci-sim/davinci-sim/mem"
)

// Ozaki's chunked write of a float64 matrix (more than one 8 MiB block,
// through mem.GM.WriteFloat64s) stores the bytes the whole matrix written
// as float64Bytes stored.
func TestOzakiWriteFloat64sBytes(t *testing.T) {
	v := make([]float64, 1<<20+5)
	for i := range v {
		v[i] = math.Ldexp(float64(i%1000)-499.5, i%200-100)
	}
	v[7], v[1<<20] = math.Copysign(0, -1), math.Inf(1)
	const addr = 3*mem.PageSize + 24
	size := int64(addr + 8*len(v) + mem.PageSize)
	chunked, whole := mem.NewGM(size), mem.NewGM(size)
	if err := (&ozakiJob{}).writeFloat64s(chunked, addr, v); err != nil {
		t.Fatal(err)
	}
	if err := whole.Write(addr, float64Bytes(v)); err != nil {
		t.Fatal(err)
	}
	got, want := make([]byte, size), make([]byte, size)
	if err := chunked.Read(0, got); err != nil {
		t.Fatal(err)
	}
	if err := whole.Read(0, want); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Error("the chunked write stored other bytes than float64Bytes of the whole matrix")
	}
}

// An ozaki run with full numerics outputs its inputs beside C, as the GEMM
// kinds do — A and B, and C0 when β ≠ 0, float64 as drawn — so that a
// result on drawn inputs can be checked outside (-o DIR writes them).
func TestOzakiOutputsInputs(t *testing.T) {
	f, err := ReadFile("examples/b200-ozaki.yaml")
	if err != nil {
		t.Fatal(err)
	}
	const m, k, n = 48, 40, 32
	for _, c := range []struct{ machine, beta string }{{"", "0"}, {"", "0.5"}, {"ascend-910a", "0"}, {"ascend-910a", "0.5"}} {
		beta := c.beta
		res, err := Execute(f, Options{Machine: c.machine, Overrides: mustSets(t, "program.m=48", "program.k=40", "program.n=32", "program.numerics=full", "program.beta="+beta)}, RunHooks{})
		if err != nil {
			t.Fatal(err)
		}
		beta = c.machine + " beta " + beta
		got := map[string]Output{}
		for _, o := range res.Outputs {
			got[o.Name] = o
		}
		in := Inputs{Distribution: DistUniform, Seed: 1}
		want := map[string]Output{"A": {Shape: []int{m, k}, F64: genFloat64(in, 1, m, k)}, "B": {Shape: []int{k, n}, F64: genFloat64(in, 2, k, n)}}
		if c.beta != "0" {
			want["C0"] = Output{Shape: []int{m, n}, F64: genFloat64(in, 3, m, n)}
		}
		if _, ok := got["C"]; !ok || len(got) != len(want)+1 {
			t.Errorf("%s: outputs %v, want C and %d inputs", beta, slices.Collect(maps.Keys(got)), len(want))
		}
		for name, w := range want {
			if g := got[name]; !slices.Equal(g.Shape, w.Shape) || !slices.Equal(g.F64, w.F64) {
				t.Errorf("%s: output %s is not the drawn %v input", beta, name, w.Shape)
			}
		}
	}
}
