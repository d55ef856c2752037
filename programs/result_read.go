package programs

import (
	"math"

	"github.com/davinci-sim/davinci-sim/mem"
)

// corruptResults (tests only) changes one bit of every simulated result
// read back for a golden-model check (the first value's lowest bit): with
// check: true every such run must then fail, which proves the checks run
// and compare what the simulation wrote.
var corruptResults bool

// readResult reads a simulated result (len(raw) bytes at addr) from GM.
func readResult(gm *mem.GM, addr int64, raw []byte) error {
	if err := gm.Read(addr, raw); err != nil {
		return err
	}
	if corruptResults && len(raw) > 0 {
		raw[0] ^= 1
	}
	return nil
}

// readResultFloat32s reads a simulated FP32 result from GM.
func readResultFloat32s(gm *mem.GM, addr int64, v []float32) error {
	if err := gm.ReadFloat32s(addr, v); err != nil {
		return err
	}
	if corruptResults && len(v) > 0 {
		v[0] = math.Float32frombits(math.Float32bits(v[0]) ^ 1)
	}
	return nil
}
