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

// A study past MaxPoints is refused by the count of its points, the
// lengths of its lists and ranges multiplied, before any value is read
// and compared (two lists of 10000 values were refused after 11 s): a
// value listed twice in such a study is not what its refusal names.
func TestPointsCountedFirst(t *testing.T) {
	base := "program: p.yaml\nmetrics: [time.seconds]\n"
	for _, c := range []struct{ name, study, want string }{
		{"two lists", "vary: {program.m: " + list(10000) + ", program.n: " + list(10000, "032") + "}\n", `s.yaml:3: key "vary": more than 100000 points`},
		{"a list and a range", "vary: {program.m: " + list(1000, "032") + ", program.n: 1..101 +1}\n", `s.yaml:3: key "vary": more than 100000 points`},
		{"points and a list", "points: [{program.k: 1}, {program.k: 2}]\nvary: {program.m: " + list(50001, "032") + "}\n", `s.yaml:4: key "vary": more than 100000 points`},
		{"too many points", "points: [{program.k: 1}" + strings.Repeat(", {program.k: 1}", MaxPoints) + "]\nvary: {program.m: [1, 2]}\n", `s.yaml:3: key "points": more than 100000 points`},
		// Within the bound, the value listed twice is refused (as the
		// first value it repeats).
		{"listed twice", "vary: {program.m: " + list(20000, "032") + "}\n", `s.yaml:3: key "vary.program.m": value "032" listed twice (as "32": one value)`},
		{"listed twice, same spelling", "vary: {program.m: " + list(20000, "320000") + "}\n", `s.yaml:3: key "vary.program.m": value "320000" listed twice`},
	} {
		start := time.Now()
		_, err := ParseStudy("s.yaml", t.TempDir(), []byte(base+c.study))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
		if took := time.Since(start); took > 5*time.Second {
			t.Errorf("%s: took %v", c.name, took)
		}
	}
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
