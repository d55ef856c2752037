package programs

import (
	"bytes"
	"math"
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
