package report

import (
	"bytes"
	"encoding/json"
	"testing"
)

// The program section writes parameter structs under their program-file
// keys, never Go field names.
func TestProgramKeys(t *testing.T) {
	type inputs struct {
		Distribution   string `mapstructure:"distribution"`
		OffsetExponent int    `mapstructure:"offset_exponent"`
	}
	type tiling struct{ BM, NFused int }
	type refinement struct {
		MaxIterations int
		Skip          int `mapstructure:"-"`
		hidden        int
	}
	on := true
	p := Program{"kind": "x", "inputs": inputs{"uniform", 3}, "tiling": &tiling{96, 2},
		"refinement": refinement{MaxIterations: 5, hidden: 1}, "flag": &on, "sizes": map[int]int{1: 2}}
	got, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"flag":true,"inputs":{"distribution":"uniform","offset_exponent":3},"kind":"x","refinement":{"max_iterations":5},"sizes":{"1":2},"tiling":{"bm":96,"n_fused":2}}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	var buf bytes.Buffer
	if err := (&Report{Program: p}).WriteJSON(&buf); err != nil || !bytes.Contains(buf.Bytes(), []byte(`"offset_exponent": 3`)) {
		t.Errorf("WriteJSON: %v\n%s", err, buf.String())
	}
}

func TestSnakeCase(t *testing.T) {
	for in, want := range map[string]string{"OffsetExponent": "offset_exponent", "BM": "bm", "NFused": "n_fused",
		"TimingIterations": "timing_iterations", "GMBytes": "gm_bytes", "A": "a", "seed": "seed"} {
		if got := snakeCase(in); got != want {
			t.Errorf("snakeCase(%q) = %q, want %q", in, got, want)
		}
	}
}
