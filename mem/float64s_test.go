package mem

import (
	"bytes"
	"encoding/binary"
	"math"
	"testing"
)

// WriteFloat64s stores the bytes the little-endian encoding of each value
// gives (what writing them as bytes stored: signed zeros, subnormals,
// infinities, a NaN's payload), at an address across a page boundary, and
// refuses a range beyond the capacity.
func TestWriteFloat64s(t *testing.T) {
	v := []float64{1, -0.0, math.SmallestNonzeroFloat64, -math.MaxFloat64, math.Inf(-1),
		math.Float64frombits(0x7ff8_0000_dead_beef), math.Pi, 1e-310}
	for i := 0; i < 3000; i++ {
		v = append(v, float64(i)*1.000001-7)
	}
	want := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(want[8*i:], math.Float64bits(x))
	}
	g := NewGM(4 * PageSize)
	addr := int64(PageSize - 13) // unaligned, across a page
	if err := g.WriteFloat64s(addr, v); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, len(want)+16)
	if err := g.Read(addr-8, got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got[8:8+len(want)], want) {
		t.Error("WriteFloat64s stored other bytes than the values' little-endian encoding")
	}
	if !bytes.Equal(got[:8], make([]byte, 8)) || !bytes.Equal(got[8+len(want):], make([]byte, 8)) {
		t.Error("WriteFloat64s wrote outside its range")
	}
	if err := g.WriteFloat64s(4*PageSize-8, v[:2]); err == nil {
		t.Error("WriteFloat64s beyond the capacity: no error")
	}
	if err := g.WriteFloat64s(0, nil); err != nil {
		t.Errorf("WriteFloat64s of nothing: %v", err)
	}
}
