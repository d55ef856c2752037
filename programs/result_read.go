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
	if err := gm.Read(addr, raw); err != nil {
		return err
	}
	if corruptResults {
		for i := range raw {
			raw[i] ^= 1
		}
	}
	return nil
}

// readResultFloat32s reads a simulated FP32 result from GM.
func readResultFloat32s(gm *mem.GM, addr int64, v []float32) error {
	if err := gm.ReadFloat32s(addr, v); err != nil {
		return err
	}
	if corruptResults {
		for i := range v {
			v[i] = math.Float32frombits(math.Float32bits(v[i]) ^ 1)
		}
	}
	return nil
}

// readResultUint16s reads a simulated FP16 (or other 16-bit) result from
// GM.
func readResultUint16s(gm *mem.GM, addr int64, v []uint16) error {
	if err := gm.ReadUint16s(addr, v); err != nil {
		return err
	}
	if corruptResults {
		for i := range v {
			v[i] ^= 1
		}
	}
	return nil
}
