package programs

import (
	"reflect"
	"testing"
)

// decodedZero finds a decoded field by its dotted key (through squashed
// embedded structs, such as emulated-gemm's GEMM keys) and tells its zero.
func TestDecodedZero(t *testing.T) {
	var e EmulatedParams
	e.Tiling.NFused = 2
	e.Buffering = "double"
	for key, want := range map[string]bool{"tiling.nfused": false, "tiling.bm": true, "cores": true, "split": true,
		"buffering": false, "no.such": true, "m": true, "tiling": false} {
		if got := decodedZero(reflect.ValueOf(&e), key); got != want {
			t.Errorf("%s: zero %v, want %v", key, got, want)
		}
	}
	e.Split.SB = 12
	if decodedZero(reflect.ValueOf(&e), "split") {
		t.Error("split with sb 12: zero")
	}
}
