package main

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// quotedNumber matches a number as the docs write one.
var quotedNumber = regexp.MustCompile(`\d+(\.\d+)?`)

// quotes reports whether the number q, as a doc writes it, is v rounded to
// q's decimals (within half a unit of its last digit), or, an integer of
// more than four digits, to four significant digits (10650 for 10648.4).
func quotes(q string, v float64) bool {
	x, err := strconv.ParseFloat(q, 64)
	if err != nil {
		return false
	}
	exp := 0 // the power of ten of q's last digit
	if i := strings.IndexByte(q, '.'); i >= 0 {
		exp = i + 1 - len(q)
	} else if len(q) > 4 {
		exp = len(q) - 4
	}
	return math.Abs(v-x) <= 0.5*math.Pow(10, float64(exp))*(1+1e-9)
}

// TestDocBenchTable runs the microbenchmarks of docs/nvidia.md's table
// ("Microbenchmarks (kind: gpu-bench)") on each machine it lists and checks
// that each cell's leading figures are what the runs give, rounded as the
// cell writes them: the tensor peak and its share, the MMA latency and the
// file's, the HBM stream and its share, the L2's and its share, the shared
// memory's bytes a cycle.
func TestDocBenchTable(t *testing.T) {
	if testing.Short() {
		t.Skip("runs 30 microbenchmarks (~3 s)")
	}
	rows := map[string][]string{} // machine → its cells
	for _, cells := range docTable(t, "nvidia.md", "| machine | tensor peak") {
		if len(cells) == 6 {
			rows[cells[0]] = cells[1:]
		}
	}
	if len(rows) < 6 {
		t.Fatalf("docs/nvidia.md: the microbenchmark table has %d machine rows, want 6 or more", len(rows))
	}
	// Each column: its program and the figures its cell quotes first.
	cols := []struct {
		program string
		figures func(r reportJSON) []float64
	}{
		{"a100-tensor-peak", func(r reportJSON) []float64 {
			return []float64{r.num("gpu_bench.achieved"), 100 * r.num("gpu_bench.fraction")}
		}},
		{"a100-mma-latency", func(r reportJSON) []float64 {
			return []float64{r.num("gpu_bench.achieved"), r.num("gpu_bench.reference")}
		}},
		{"a100-hbm-stream", func(r reportJSON) []float64 {
			return []float64{r.num("gpu_bench.achieved"), 100 * r.num("gpu_bench.fraction")}
		}},
		{"a100-l2-bandwidth", func(r reportJSON) []float64 {
			return []float64{r.num("gpu_bench.achieved"), 100 * r.num("gpu_bench.fraction")}
		}},
		{"a100-smem-bandwidth", func(r reportJSON) []float64 {
			return []float64{r.num("gpu_bench.achieved")}
		}},
	}
	for m, cells := range rows {
		for i, col := range cols {
			t.Run(m+" "+col.program, func(t *testing.T) {
				want := col.figures(runReport(t, "run", "programs/examples/"+col.program+".yaml", "-m", m))
				got := quotedNumber.FindAllString(cells[i], -1)
				if len(got) < len(want) {
					t.Fatalf("docs/nvidia.md, %s's %s cell %q: %d figures, want %d", m, col.program, cells[i], len(got), len(want))
				}
				for j, v := range want {
					if !quotes(got[j], v) {
						t.Errorf("docs/nvidia.md, %s's %s cell %q quotes %s where the run gives %.6g (update the doc)", m, col.program, cells[i], got[j], v)
					}
				}
			})
		}
	}
}

func TestQuotes(t *testing.T) {
	for _, c := range []struct {
		q    string
		v    float64
		want bool
	}{
		{"125.3", 125.34, true}, {"125.3", 125.36, false}, {"320", 320.4, true}, {"320", 320.6, false},
		{"96.5", 96.49996, true}, {"0.03", 0.025, true}, {"10650", 10648.4, true}, {"10650", 10644, false}, {"x", 1, false},
	} {
		if got := quotes(c.q, c.v); got != c.want {
			t.Errorf("quotes(%q, %g) = %v, want %v", c.q, c.v, got, c.want)
		}
	}
}

// TestDocAMDBenchTable runs the microbenchmarks of docs/amd.md's table
// (mi210-matrix-peak.yaml with each type a row lists, and its hbm-stream)
// on each machine it lists and checks the figures quoted: each type's peak
// (TFLOP/s or TOP/s) and their share of the file's, and the HBM stream.
func TestDocAMDBenchTable(t *testing.T) {
	if testing.Short() {
		t.Skip("runs ~20 microbenchmarks (~2 s)")
	}
	rows := map[string][]string{}
	for _, cells := range docTable(t, "amd.md", "| machine | matrix peak, every type it has") {
		if len(cells) == 4 {
			rows[cells[0]] = cells[1:]
		}
	}
	if len(rows) < 3 {
		t.Fatalf("docs/amd.md: the microbenchmark table has %d machine rows, want 3 or more", len(rows))
	}
	peaks := regexp.MustCompile(`^(\d+(?:\.\d+)?) % \((.*)\)$`)
	for m, cells := range rows {
		p := peaks.FindStringSubmatch(cells[0])
		if p == nil {
			t.Fatalf("docs/amd.md, %s's peak cell %q: not \"P %% (TYPE VALUE, …)\"", m, cells[0])
		}
		for _, part := range strings.Split(p[2], ", ") {
			types, rest, _ := strings.Cut(part, " ")
			value := quotedNumber.FindString(rest)
			for _, ty := range strings.Split(types, "/") {
				t.Run(m+" "+ty, func(t *testing.T) {
					r := runReport(t, "run", "programs/examples/mi210-matrix-peak.yaml", "-m", m, "--set", "program.dtype="+strings.ToLower(ty))
					if v := r.num("gpu_bench.achieved"); !quotes(value, v) {
						t.Errorf("docs/amd.md, %s's %s peak quotes %s where the run gives %.6g (update the doc)", m, ty, value, v)
					}
					if v := 100 * r.num("gpu_bench.fraction"); !quotes(p[1], v) {
						t.Errorf("docs/amd.md, %s's peaks quote %s %% where %s's run gives %.6g %%", m, p[1], ty, v)
					}
				})
			}
		}
		t.Run(m+" hbm-stream", func(t *testing.T) {
			r := runReport(t, "run", "programs/examples/mi210-matrix-peak.yaml", "-m", m, "--set", "program.test=hbm-stream")
			if q, v := quotedNumber.FindString(cells[1]), r.num("gpu_bench.achieved"); !quotes(q, v) {
				t.Errorf("docs/amd.md, %s's HBM stream cell %q quotes %s where the run gives %.6g (update the doc)", m, cells[1], q, v)
			}
		})
	}
}
