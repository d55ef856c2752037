package programs

import (
	"reflect"
	"testing"
)

// Every program kind has an estimate of its host memory: a kind added
// without one would run alone in every sweep (the budget's worth) — its
// data's bytes belong in dataHostBytes.
func TestHostBytesEveryKind(t *testing.T) {
	for _, k := range Kinds() {
		if k.Params == nil {
			continue
		}
		if _, ok := dataHostBytes(k.Name, reflect.New(k.Params).Interface()); !ok {
			t.Errorf("program kind %s (%v): no host memory estimate (programs/hostbytes.go dataHostBytes)", k.Name, k.Params)
		}
	}
	if _, ok := dataHostBytes("x", new(struct{ N int })); ok {
		t.Error("a kind not known has an estimate")
	}
}
