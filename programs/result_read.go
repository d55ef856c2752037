package programs

import (
	"math"

	"github.com/davinci-sim/davinci-sim/mem"
)

// corruptResults (tests only) changes every simulated result read back for
// a golden-model check — the lowest bit of every byte of raw reads, of
// every element of typed ones (every value: a check may leave some out, as
// lu-fused's the host-computed diagonal blocks): with check: true every
// such run must then fail, which proves the checks run and compare what
// the simulation wrote.
var corruptResults bool

// readResult reads a simulated result (len(raw) bytes at addr) from GM.
func readResult(gm *mem.GM, addr int64, raw []byte) error {
	return readFlipped(gm.Read, addr, raw, func(b byte) byte { return b ^ 1 })
}

// readResultFloat32s reads a simulated FP32 result from GM.
func readResultFloat32s(gm *mem.GM, addr int64, v []float32) error {
	return readFlipped(gm.ReadFloat32s, addr, v, func(x float32) float32 { return math.Float32frombits(math.Float32bits(x) ^ 1) })
}

// readResultUint16s reads a simulated FP16 (or other 16-bit) result from
// GM.
func readResultUint16s(gm *mem.GM, addr int64, v []uint16) error {
	return readFlipped(gm.ReadUint16s, addr, v, func(x uint16) uint16 { return x ^ 1 })
}

// readFlipped reads v at addr with read and, with corruptResults, flips
// the lowest bit of each value.
func readFlipped[T any](read func(int64, []T) error, addr int64, v []T, flip func(T) T) error {
	if err := read(addr, v); err != nil {
		return err
	}
	if corruptResults {
		for i := range v {
			v[i] = flip(v[i])
		}
	}
	return nil
}
