package sweep

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// list returns a YAML list of n values: 16, 32, … (then last, where given).
func list(n int, last ...string) string {
	var vals []string
	for i := 1; i <= n; i++ {
		vals = append(vals, fmt.Sprint(16*i))
	}
	return "[" + strings.Join(append(vals, last...), ", ") + "]"
}

// A list of MaxPoints values is read at once: each value is compared with
// the others by a map of their canonical spellings, not one by one (a
// list of 100000 values: ~10¹⁰ comparisons).
func TestLongListQuick(t *testing.T) {
	start := time.Now()
	s, err := ParseStudy("s.yaml", t.TempDir(), []byte("program: p.yaml\nmetrics: [time.seconds]\nvary: {program.m: "+list(MaxPoints)+"}\n"))
	if err != nil || len(s.Points) != MaxPoints {
		t.Fatalf("%v", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("took %v", took)
	}
}
