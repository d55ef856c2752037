package main

import (
	"encoding/json"
	"math"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The tables of docs/ozaki.md, lu-fused.md, cluster.md, sgemm-cube.md,
// nvidia.md and the rest of emulated.md that quote studies, held to the
// studies' committed CSVs as TestDocTablesMatchStudies holds three of
// emulated.md's: every checked cell is named by its CSV row and column (or
// the ratio of two), and must be that value rounded as the cell writes it.
// Paper figures, hand-run figures and wall times are not checked.

// docTableAt is docTable for the tables docTable cannot reach: the first
// table under header after the first line containing anchor (anchor "":
// from the start), so that tables with the same header are told apart, and
// a table indented in a list (its lines trimmed before they are read).
func docTableAt(t *testing.T, doc, anchor, header string) [][]string {
	t.Helper()
	b, err := os.ReadFile("../../docs/" + doc)
	if err != nil {
		t.Fatal(err)
	}
	var rows [][]string
	armed, in := anchor == "", false
	for line := range strings.Lines(string(b)) {
		line = strings.TrimSpace(line)
		if !armed {
			armed = strings.Contains(line, anchor)
			continue
		}
		if !in {
			in = strings.HasPrefix(line, header)
			continue
		}
		if !strings.HasPrefix(line, "|") {
			break
		}
		if strings.HasPrefix(line, "|---") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		rows = append(rows, cells)
	}
	if len(rows) == 0 {
		t.Fatalf("docs/%s: no table under %q after %q", doc, header, anchor)
	}
	return rows
}

// fig returns a doc cell's figure as quotes reads it: without bold marks,
// its unit (×, %, TF, s) and with an ASCII minus for the doc's "−".
func fig(cell string) string {
	s := strings.ReplaceAll(strings.ReplaceAll(cell, "**", ""), "−", "-")
	for _, unit := range []string{"×", "%", "TF", "s"} {
		s = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), unit))
	}
	return s
}

// checkFig reports a doc figure q (a cell's number, see fig) that is not x
// rounded as q is written; where names the doc cell and the CSV value.
func checkFig(t *testing.T, where, q string, x float64) {
	t.Helper()
	if !quotesCSV(fig(q), strconv.FormatFloat(x, 'g', -1, 64), 1) {
		t.Errorf("%s: the doc quotes %q where the CSV gives %.6g", where, q, x)
	}
}

// studyIndex returns a study's CSV rows (studyCSV) by key(row), failing
// when two rows share a key: every doc cell must name one point.
func studyIndex(t *testing.T, name string, key func(r map[string]string) string) map[string]map[string]string {
	t.Helper()
	idx := map[string]map[string]string{}
	for _, r := range studyCSV(t, name) {
		k := key(r)
		if _, dup := idx[k]; dup {
			t.Fatalf("%s: two rows with key %q", name, k)
		}
		idx[k] = r
	}
	return idx
}

// point returns the CSV row of key, reporting a doc row or cell whose point
// the study does not have, or has without status ok.
func point(t *testing.T, idx map[string]map[string]string, study, key string) (map[string]string, bool) {
	t.Helper()
	r, ok := idx[key]
	if !ok || r["status"] != "ok" {
		t.Errorf("%s's CSV has no point %q (status ok) for the doc's", study, key)
		return nil, false
	}
	return r, true
}

// num returns column col of a CSV row as a number (NaN, reported, if it is
// not one: no doc figure then quotes it).
func num(t *testing.T, r map[string]string, col string) float64 {
	t.Helper()
	x, err := strconv.ParseFloat(r[col], 64)
	if err != nil {
		t.Errorf("CSV column %s: %q is not a number", col, r[col])
		return math.NaN()
	}
	return x
}

// width reports (and skips) a doc row without n cells, so that a column is
// never read from the wrong place.
func width(t *testing.T, doc string, row []string, n int) bool {
	t.Helper()
	if len(row) != n {
		t.Errorf("%s: row %q has %d cells, want %d", doc, row[0], len(row), n)
		return false
	}
	return true
}

// paren splits "a (b)" into a and b ("a", "" without parentheses).
func paren(cell string) (string, string) {
	a, b, _ := strings.Cut(cell, " (")
	return strings.TrimSpace(a), strings.TrimSuffix(b, ")")
}

// TestDocTablesOzaki holds docs/ozaki.md's study tables to their CSVs:
// Ozaki-I against Ozaki-II at equal requested bits (ozaki-i-vs-ii:
// TFLOP/s and the bits reached), emulated against native DGEMM
// (ozaki-vs-dgemm: both TFLOP/s and their ratio, the speedup; the paper's
// maxima not) and what each slice costs (ozaki-slices, its native column
// ozaki-vs-dgemm's DGEMM at 4096³ as the doc says).
func TestDocTablesOzaki(t *testing.T) {
	// The two programs of ozaki-vs-dgemm: "ozaki" and "dgemm".
	vsKey := func(r map[string]string) string {
		prog := strings.TrimSuffix(path.Base(r["program"]), ".yaml")
		return r["machine"] + " " + prog[strings.LastIndexByte(prog, '-')+1:] + " " + r["program.m"]
	}
	t.Run("ozaki-i-vs-ii", func(t *testing.T) {
		idx := studyIndex(t, "ozaki-i-vs-ii", func(r map[string]string) string {
			return r["machine"] + " " + r["program.method"] + " " + r["program.mantissa_bits"]
		})
		bits := []string{"23", "31", "39", "47", "55", "63", "71"}
		for _, row := range docTable(t, "ozaki.md", "| bits asked | 23 | 31 | 39 |") {
			if !width(t, "ozaki.md", row, 1+len(bits)) {
				continue
			}
			for i, b := range bits {
				r, ok := point(t, idx, "ozaki-i-vs-ii", row[0]+" "+b)
				if !ok {
					continue
				}
				tf, got := paren(row[1+i])
				where := "ozaki.md: " + row[0] + " at " + b + " bits asked"
				checkFig(t, where+", TFLOP/s (flops.tflops)", tf, num(t, r, "flops.tflops"))
				if got != "" {
					checkFig(t, where+", bits reached (error.bits)", got, num(t, r, "error.bits"))
				}
			}
		}
	})
	t.Run("ozaki-vs-dgemm", func(t *testing.T) {
		idx := studyIndex(t, "ozaki-vs-dgemm", vsKey)
		ns := []string{"1024", "2048", "4096", "8192"}
		for _, row := range docTable(t, "ozaki.md", "| machine | n = 1024 | 2048 | 4096 | 8192 | paper (max) |") {
			if !width(t, "ozaki.md", row, 6) {
				continue
			}
			for i, n := range ns { // row[5], the paper's maximum, is not the simulator's
				em, ok1 := point(t, idx, "ozaki-vs-dgemm", row[0]+" ozaki "+n)
				nat, ok2 := point(t, idx, "ozaki-vs-dgemm", row[0]+" dgemm "+n)
				if !ok1 || !ok2 {
					continue
				}
				where := "ozaki.md: " + row[0] + " at n = " + n
				emTF, natTF := num(t, em, "flops.tflops"), num(t, nat, "flops.tflops")
				cell := row[1+i]
				if lhs, ratio, ok := strings.Cut(cell, " = "); ok {
					e, d, _ := strings.Cut(lhs, " / ")
					checkFig(t, where+", emulated TFLOP/s (ozaki flops.tflops)", e, emTF)
					checkFig(t, where+", native TFLOP/s (dgemm flops.tflops)", d, natTF)
					cell = ratio
				}
				checkFig(t, where+", speedup (emulated / native flops.tflops)", cell, emTF/natTF)
			}
		}
	})
	t.Run("ozaki-slices", func(t *testing.T) {
		idx := studyIndex(t, "ozaki-slices", func(r map[string]string) string { return r["machine"] + " " + r["program.slices"] })
		vs := studyIndex(t, "ozaki-vs-dgemm", vsKey)
		counts := []string{"3", "4", "5", "6", "7", "8", "9", "10"}
		for _, row := range docTable(t, "ozaki.md", "| slices (bits) | 3 (23) |") {
			if !width(t, "ozaki.md", row, 2+len(counts)) {
				continue
			}
			for i, s := range counts {
				if r, ok := point(t, idx, "ozaki-slices", row[0]+" "+s); ok {
					checkFig(t, "ozaki.md: "+row[0]+" at "+s+" slices (ozaki-slices flops.tflops)", row[1+i], num(t, r, "flops.tflops"))
				}
			}
			if r, ok := point(t, vs, "ozaki-vs-dgemm", row[0]+" dgemm 4096"); ok {
				checkFig(t, "ozaki.md: "+row[0]+" native (ozaki-vs-dgemm dgemm 4096³ flops.tflops)", row[1+len(counts)], num(t, r, "flops.tflops"))
			}
		}
	})
}

// luRooflineIndex indexes lu-roofline's CSV by operator and trailing
// precision, the operator as the docs name it ("gemm256-fusion" or
// "gemm256_fusion" for lu-gemm256-fusion.yaml).
func luRooflineIndex(t *testing.T) map[string]map[string]string {
	t.Helper()
	return studyIndex(t, "lu-roofline", func(r map[string]string) string {
		return strings.TrimSuffix(strings.TrimPrefix(path.Base(r["program"]), "lu-"), ".yaml") + " " + r["program.trailing"]
	})
}

// luNfusionKey is the key of lu-nb-nfusion-32k's and the cluster node
// studies' rows: nb, n_fused and n_fusion ("none" for n_fused 1, n_fusion 0).
func luNfusionKey(r map[string]string) string {
	f := r["program.n_fusion"]
	if r["program.n_fused"] == "1" && f == "0" {
		f = "none"
	}
	return r["program.nb"] + " " + f
}

// nfusionColumn is the n_fusion of an "nb \ n_fusion" table's header cell:
// "32 (shared)" is 32, "none …" none.
func nfusionColumn(h string) string {
	if strings.HasPrefix(h, "none") {
		return "none"
	}
	n, _ := paren(h)
	return n
}

// TestDocTablesLUFused holds docs/lu-fused.md's study tables to their CSVs:
// the operators' table and the fp16 / fp32 roofline table (lu-roofline), the
// fp32 operator roofline (lu-roofline: its "% of 262" the TFLOP/s over the
// cube's 262.144 and its "HBM BW use" TFLOP/s / OI_HBM over the 1.228 TB/s
// the doc's roofline names), the fusion zone's TFLOP/s in the zones table
// (the same runs as lu-nb-nfusion-32k's nb = 256 points), the nb ×
// n_fusion table (lu-nb-nfusion-32k), the per-window ratios
// (lu-iteration-ratio) and the L1 table (l1-size-lu). The MTE2 column and
// the other zones are not in any CSV, and the n = 32768 fp16 n_fusion
// table (the same runs as lu-nb-nfusion-32k's nb = 256 points: its
// n_fusion 24 HPL-MxP figure said 75.3 where they give 75.35, found by
// this test).
func TestDocTablesLUFused(t *testing.T) {
	const doc = "lu-fused.md"
	t.Run("lu-roofline operators", func(t *testing.T) {
		idx := luRooflineIndex(t)
		for _, row := range docTable(t, doc, "| operator | trailing | TFLOP/s | OI_GM |") {
			if !width(t, doc, row, 11) {
				continue
			}
			op := strings.ReplaceAll(row[0], "_", "-")
			r, ok := point(t, idx, "lu-roofline", op+" "+row[1])
			if !ok {
				continue
			}
			where := doc + ": " + row[0] + " " + row[1]
			checkFig(t, where+", TFLOP/s (lu_gemm.tflops)", row[2], num(t, r, "lu_gemm.tflops"))
			checkFig(t, where+", OI_GM (lu_gemm.operational_intensity)", row[3], num(t, r, "lu_gemm.operational_intensity"))
			checkFig(t, where+", OI_HBM (lu_gemm.operational_intensity_hbm)", row[4], num(t, r, "lu_gemm.operational_intensity_hbm"))
			checkFig(t, where+", L2 hit (memory.l2_hit_rate)", row[5], num(t, r, "memory.l2_hit_rate"))
			bound, limit := paren(row[6])
			checkFig(t, where+", bound (lu_gemm.bound.bound_tflops)", bound, num(t, r, "lu_gemm.bound.bound_tflops"))
			if !strings.EqualFold(limit, r["lu_gemm.bound.limited_by"]) {
				t.Errorf("%s: limit %q, lu_gemm.bound.limited_by %q", where, limit, r["lu_gemm.bound.limited_by"])
			}
			checkFig(t, where+", achieved / bound (lu_gemm.bound.efficiency)", row[7], 100*num(t, r, "lu_gemm.bound.efficiency"))
			checkFig(t, where+", cube busy (pipes.M.busy)", row[8], 100*num(t, r, "pipes.M.busy"))
			checkFig(t, where+", V busy (pipes.V.busy)", row[9], 100*num(t, r, "pipes.V.busy"))
		}
	})
	t.Run("lu-roofline fp16 / fp32", func(t *testing.T) {
		idx := luRooflineIndex(t)
		for _, row := range docTable(t, doc, "| operator | TFLOP/s fp16 / fp32 |") {
			if !width(t, doc, row, 6) {
				continue
			}
			for j, tr := range []string{"fp16", "fp32"} {
				r, ok := point(t, idx, "lu-roofline", row[0]+" "+tr)
				if !ok {
					continue
				}
				where := doc + ": " + row[0] + " " + tr
				part := func(cell string) string { return strings.Split(cell, " / ")[j] }
				checkFig(t, where+", TFLOP/s (lu_gemm.tflops)", part(row[1]), num(t, r, "lu_gemm.tflops"))
				checkFig(t, where+", OI_GM (lu_gemm.operational_intensity)", part(row[2]), num(t, r, "lu_gemm.operational_intensity"))
				checkFig(t, where+", OI_HBM (lu_gemm.operational_intensity_hbm)", part(row[3]), num(t, r, "lu_gemm.operational_intensity_hbm"))
				eff, limit := paren(part(row[4]))
				checkFig(t, where+", achieved / bound (lu_gemm.bound.efficiency)", eff, 100*num(t, r, "lu_gemm.bound.efficiency"))
				if limit != r["lu_gemm.bound.limited_by"] {
					t.Errorf("%s: limit %q, lu_gemm.bound.limited_by %q", where, limit, r["lu_gemm.bound.limited_by"])
				}
				checkFig(t, where+", GFLOP/s per W (energy.gflops_per_watt)", part(row[5]), num(t, r, "energy.gflops_per_watt"))
			}
		}
	})
	t.Run("lu-roofline fp32 operators", func(t *testing.T) {
		idx := luRooflineIndex(t)
		for _, row := range docTable(t, doc, "| operator | K | TFLOP/s | % of 262 |") {
			if !width(t, doc, row, 7) {
				continue
			}
			op, _ := paren(row[0]) // "gemm256_fusion (N_fused 6)"
			r, ok := point(t, idx, "lu-roofline", strings.ReplaceAll(op, "_", "-")+" fp32")
			if !ok {
				continue
			}
			where := doc + ": " + row[0] + " fp32"
			tf := num(t, r, "lu_gemm.tflops")
			checkFig(t, where+", TFLOP/s (lu_gemm.tflops)", row[2], tf)
			checkFig(t, where+", % of 262 (lu_gemm.tflops / 262.144)", row[3], 100*tf/262.144)
			checkFig(t, where+", flop / GM byte (lu_gemm.operational_intensity)", row[4], num(t, r, "lu_gemm.operational_intensity"))
			checkFig(t, where+", cube busy (pipes.M.busy)", row[5], 100*num(t, r, "pipes.M.busy"))
			checkFig(t, where+", HBM BW use (lu_gemm.tflops / operational_intensity_hbm / 1.228 TB/s)", row[6], 100*tf/num(t, r, "lu_gemm.operational_intensity_hbm")/1.228)
		}
	})
	nfusion := func(t *testing.T) map[string]map[string]string {
		return studyIndex(t, "lu-nb-nfusion-32k", func(r map[string]string) string {
			return luNfusionKey(r) + " " + r["program.trailing"]
		})
	}
	t.Run("lu-nb-nfusion-32k fp16 by n_fusion", func(t *testing.T) {
		idx := nfusion(t)
		for _, row := range docTable(t, doc, "| n_fusion | factorization | TFLOP/s (2/3 n³) | whole solve | HPL-MxP TFLOP/s |") {
			if !width(t, doc, row, 5) {
				continue
			}
			f := nfusionColumn(row[0])
			if r, ok := point(t, idx, "lu-nb-nfusion-32k", "256 "+f+" fp16"); ok {
				where := doc + ": fp16 n_fusion " + f
				checkFig(t, where+", factorization (hplmxp.factorization_seconds)", row[1], num(t, r, "hplmxp.factorization_seconds"))
				checkFig(t, where+", TFLOP/s (hplmxp.factorization_tflops)", row[2], num(t, r, "hplmxp.factorization_tflops"))
				checkFig(t, where+", whole solve (hplmxp.total_seconds)", row[3], num(t, r, "hplmxp.total_seconds"))
				checkFig(t, where+", HPL-MxP TFLOP/s (hplmxp.tflops)", row[4], num(t, r, "hplmxp.tflops"))
			}
		}
	})
	t.Run("lu-nb-nfusion-32k zones fusion", func(t *testing.T) {
		idx := nfusion(t)
		run, found := "", 0
		for _, row := range docTable(t, doc, "| run | zone | kernels | cores |") {
			if !width(t, doc, row, 10) {
				continue
			}
			if row[0] != "" {
				run = row[0] // "fp16, n_fusion 24"
			}
			if row[1] != "fusion" {
				continue // the other zones are not in the CSV
			}
			tr, f, _ := strings.Cut(run, ", n_fusion ")
			if r, ok := point(t, idx, "lu-nb-nfusion-32k", "256 "+f+" "+tr); ok {
				found++
				checkFig(t, doc+": zones, "+run+", fusion TFLOP/s (hplmxp.zones.fusion.tflops)", row[4], num(t, r, "hplmxp.zones.fusion.tflops"))
			}
		}
		if found != 3 {
			t.Errorf("%s: zones table: %d fusion rows checked, want 3", doc, found)
		}
	})
	t.Run("lu-nb-nfusion-32k", func(t *testing.T) {
		idx := nfusion(t)
		head := []string{"16", "20", "24", "28", "32", "none"}
		for _, row := range docTable(t, doc, "| nb \\ n_fusion | 16 | 20 | 24 | 28 | 32 (shared) | none (n_fused 1) |") {
			if !width(t, doc, row, 1+len(head)) {
				continue
			}
			for i, f := range head {
				for j, tr := range []string{"fp16", "fp32"} {
					if r, ok := point(t, idx, "lu-nb-nfusion-32k", row[0]+" "+f+" "+tr); ok {
						checkFig(t, doc+": nb "+row[0]+", n_fusion "+f+", "+tr+" (hplmxp.factorization_tflops)",
							strings.Split(row[1+i], " / ")[j], num(t, r, "hplmxp.factorization_tflops"))
					}
				}
			}
		}
	})
	t.Run("lu-iteration-ratio", func(t *testing.T) {
		idx := studyIndex(t, "lu-iteration-ratio", func(r map[string]string) string { return r["program.trailing"] })
		windows := []float64{0, 6, 30, 60, 90, 114, 120, 126}
		for _, row := range docTable(t, doc, "| window (first iteration) |") {
			if !width(t, doc, row, 1+len(windows)) {
				continue
			}
			r, ok := point(t, idx, "lu-iteration-ratio", row[0])
			if !ok {
				continue
			}
			var first, ratio []float64
			if err := json.Unmarshal([]byte(r["hplmxp.windows.*.first_iteration"]), &first); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte(r["hplmxp.windows.*.measured_over_theoretical"]), &ratio); err != nil {
				t.Fatal(err)
			}
			for i, w := range windows {
				k := slices.Index(first, w)
				if k < 0 || k >= len(ratio) {
					t.Errorf("%s: %s window %g is not in lu-iteration-ratio's CSV", doc, row[0], w)
					continue
				}
				checkFig(t, doc+": "+row[0]+", window from iteration "+strconv.FormatFloat(w, 'g', -1, 64)+
					" (hplmxp.windows.*.measured_over_theoretical)", row[1+i], ratio[k])
			}
		}
	})
	t.Run("l1-size-lu", func(t *testing.T) {
		idx := studyIndex(t, "l1-size-lu", func(r map[string]string) string {
			return r["machine.core.buffers.L1"] + " " + r["program.n_fusion"]
		})
		for _, row := range docTable(t, doc, "| L1 | N_fused |") {
			if !width(t, doc, row, 4) {
				continue
			}
			for i, f := range []string{"16", "32"} {
				r, ok := point(t, idx, "l1-size-lu", strings.ReplaceAll(row[0], " ", "")+" "+f)
				if !ok {
					continue
				}
				where := doc + ": L1 " + row[0] + ", " + f + " fusion cores"
				if row[1] != r["program.n_fused"] {
					t.Errorf("%s: N_fused %s, program.n_fused %s", where, row[1], r["program.n_fused"])
				}
				checkFig(t, where+" (hplmxp.factorization_tflops)", row[2+i], num(t, r, "hplmxp.factorization_tflops"))
			}
		}
	})
}

// checkBytes checks a doc's byte count ("6.3 GB", "0.592 TB"; "–" for a
// study's empty column: no such link) against a CSV column.
func checkBytes(t *testing.T, where, cell, v string) {
	t.Helper()
	if cell == "–" || v == "" {
		if cell != "–" || v != "" {
			t.Errorf("%s: the doc quotes %q where the CSV gives %q", where, cell, v)
		}
		return
	}
	x, err := strconv.ParseFloat(v, 64)
	if err != nil {
		t.Errorf("%s: %q is not a number", where, v)
		return
	}
	q, unit, _ := strings.Cut(cell, " ")
	scale := map[string]float64{"GB": 1e-9, "TB": 1e-12}[unit]
	if scale == 0 {
		t.Errorf("%s: unit of %q", where, cell)
		return
	}
	checkFig(t, where, q, x*scale)
}

// TestDocTablesCluster holds docs/cluster.md's study tables to their CSVs:
// a node vs nb and n_fusion at fidelity full (cluster-node-nb-nfusion) and at
// ~80 % HBM (cluster-node-nb-nfusion-hbm80), both weak-scaling tables
// (cluster-weak-scaling, cluster-weak-scaling-hbm80: "HCCL broadcast in
// flight" is cluster.hccl_broadcast_seconds over the total, as the doc
// says, and "fusion zone busy per NPU" the fusion zone's seconds over the
// NPUs' total), the sampled-vs-full errors of every node configuration
// (cluster-node-nb-nfusion-sampled against cluster-node-nb-nfusion: the
// error is sampled / full − 1 and the half-width a share of the sampled
// total), the model-error table's node rows (the same two studies; its
// 1-NPU rows are hand-run), the node's n_fusion runs
// (cluster-node-ratio-over-time) and the 256-NPU design knobs
// (cluster-256-design: "vs built" against the as-built row). Wall times are
// not checked.
func TestDocTablesCluster(t *testing.T) {
	const doc = "cluster.md"
	// nbTable checks a node's nb × n_fusion table, the first after anchor:
	// factorization TFLOP/s / HPL-MxP TFLOP/s / GFLOP/s per W in each cell.
	nbTable := func(t *testing.T, study, anchor string) {
		idx := studyIndex(t, study, luNfusionKey)
		head := []string{"16", "20", "24", "28", "32", "none"}
		for _, row := range docTableAt(t, doc, anchor, "| nb \\ n_fusion | 16 | 20 | 24 | 28 | 32 (shared) | none |") {
			if !width(t, doc, row, 1+len(head)) {
				continue
			}
			for i, f := range head {
				r, ok := point(t, idx, study, row[0]+" "+f)
				if !ok {
					continue
				}
				parts := strings.Split(row[1+i], " / ")
				if len(parts) != 3 {
					t.Errorf("%s: nb %s, n_fusion %s: %q is not three figures", doc, row[0], f, row[1+i])
					continue
				}
				where := doc + ": " + study + " nb " + row[0] + ", n_fusion " + f
				checkFig(t, where+", factorization (hplmxp.factorization_tflops)", parts[0], num(t, r, "hplmxp.factorization_tflops"))
				checkFig(t, where+", HPL-MxP (hplmxp.tflops)", parts[1], num(t, r, "hplmxp.tflops"))
				checkFig(t, where+", GFLOP/s per W (energy.gflops_per_watt)", parts[2], num(t, r, "energy.gflops_per_watt"))
			}
		}
	}
	t.Run("cluster-node-nb-nfusion", func(t *testing.T) {
		nbTable(t, "cluster-node-nb-nfusion", "**A node vs nb and n_fusion**")
	})
	t.Run("cluster-node-nb-nfusion-hbm80", func(t *testing.T) {
		nbTable(t, "cluster-node-nb-nfusion-hbm80", "**A node at ~80 % HBM vs nb and n_fusion**")
	})
	// shape checks a weak-scaling row's NPUs, grid and n, which the CSV
	// holds exactly.
	shape := func(t *testing.T, where string, row []string, r map[string]string) {
		if row[1] != r["cluster.npus"] || row[2] != r["program.grid.p"]+" × "+r["program.grid.q"] || row[3] != r["program.n"] {
			t.Errorf("%s: NPUs %s, grid %s, n %s where the CSV has cluster.npus %s, program.grid %s × %s, program.n %s",
				where, row[1], row[2], row[3], r["cluster.npus"], r["program.grid.p"], r["program.grid.q"], r["program.n"])
		}
	}
	t.Run("cluster-weak-scaling", func(t *testing.T) {
		idx := studyIndex(t, "cluster-weak-scaling", func(r map[string]string) string { return r["cluster.nodes"] })
		for _, row := range docTable(t, doc, "| nodes | NPUs | grid | n | HPL-MxP TFLOP/s | of FP16 peak | factorization TFLOP/s |") {
			if !width(t, doc, row, 9) {
				continue
			}
			r, ok := point(t, idx, "cluster-weak-scaling", row[0])
			if !ok {
				continue
			}
			where := doc + ": cluster-weak-scaling, " + row[0] + " nodes"
			shape(t, where, row, r)
			checkFig(t, where+", HPL-MxP TFLOP/s (hplmxp.tflops)", row[4], num(t, r, "hplmxp.tflops"))
			checkFig(t, where+", of FP16 peak (hplmxp.peak_fraction)", row[5], 100*num(t, r, "hplmxp.peak_fraction"))
			checkFig(t, where+", factorization TFLOP/s (hplmxp.factorization_tflops)", row[6], num(t, r, "hplmxp.factorization_tflops"))
			checkBytes(t, where+", RoCE bytes (cluster.link_bytes.roce)", row[7], r["cluster.link_bytes.roce"])
		}
	})
	t.Run("cluster-weak-scaling-hbm80", func(t *testing.T) {
		idx := studyIndex(t, "cluster-weak-scaling-hbm80", func(r map[string]string) string { return r["cluster.nodes"] })
		for _, row := range docTable(t, doc, "| nodes | NPUs | grid | n | HPL-MxP TFLOP/s | of FP16 peak | GFLOP/s per W |") {
			if !width(t, doc, row, 13) {
				continue
			}
			r, ok := point(t, idx, "cluster-weak-scaling-hbm80", row[0])
			if !ok {
				continue
			}
			where := doc + ": cluster-weak-scaling-hbm80, " + row[0] + " nodes"
			shape(t, where, row, r)
			total := num(t, r, "hplmxp.total_seconds")
			checkFig(t, where+", HPL-MxP TFLOP/s (hplmxp.tflops)", row[4], num(t, r, "hplmxp.tflops"))
			checkFig(t, where+", of FP16 peak (hplmxp.peak_fraction)", row[5], 100*num(t, r, "hplmxp.peak_fraction"))
			checkFig(t, where+", GFLOP/s per W (energy.gflops_per_watt)", row[6], num(t, r, "energy.gflops_per_watt"))
			tot, hw, _ := strings.Cut(row[7], " ± ")
			checkFig(t, where+", total (hplmxp.total_seconds)", tot, total)
			checkFig(t, where+", ± 99.7 % (cluster.sampling.half_width_seconds)", hw, num(t, r, "cluster.sampling.half_width_seconds"))
			checkFig(t, where+", HCCL broadcast in flight (cluster.hccl_broadcast_seconds / hplmxp.total_seconds)", row[8], 100*num(t, r, "cluster.hccl_broadcast_seconds")/total)
			checkFig(t, where+", fusion zone busy per NPU (hplmxp.zones.fusion.seconds / cluster.npus / hplmxp.total_seconds)", row[9],
				100*num(t, r, "hplmxp.zones.fusion.seconds")/num(t, r, "cluster.npus")/total)
			checkBytes(t, where+", RoCE bytes (cluster.link_bytes.roce)", row[10], r["cluster.link_bytes.roce"])
			if row[11] != r["cluster.hccl_ring_broadcasts"] {
				t.Errorf("%s: P2P-ring broadcasts %s, cluster.hccl_ring_broadcasts %s", where, row[11], r["cluster.hccl_ring_broadcasts"])
			}
		}
	})
	t.Run("cluster-node-nb-nfusion-sampled", func(t *testing.T) {
		full := studyIndex(t, "cluster-node-nb-nfusion", luNfusionKey)
		sampled := studyIndex(t, "cluster-node-nb-nfusion-sampled", luNfusionKey)
		head := []string{"16", "20", "24", "28", "32", "none"}
		for _, row := range docTableAt(t, doc, "**Every node configuration of the study above**", "| nb \\ n_fusion | 16 | 20 | 24 | 28 | 32 (shared) | none |") {
			if !width(t, doc, row, 1+len(head)) {
				continue
			}
			for i, f := range head {
				rf, ok1 := point(t, full, "cluster-node-nb-nfusion", row[0]+" "+f)
				rs, ok2 := point(t, sampled, "cluster-node-nb-nfusion-sampled", row[0]+" "+f)
				if !ok1 || !ok2 {
					continue
				}
				where := doc + ": sampled vs full, nb " + row[0] + ", n_fusion " + f
				ts := num(t, rs, "hplmxp.total_seconds")
				e, hw := paren(row[1+i]) // "-0.35 % (±4.4)"
				checkFig(t, where+", error (sampled / full hplmxp.total_seconds − 1)", e, 100*(ts/num(t, rf, "hplmxp.total_seconds")-1))
				checkFig(t, where+", half-width (cluster.sampling.half_width_seconds / sampled hplmxp.total_seconds)", strings.TrimPrefix(hw, "±"),
					100*num(t, rs, "cluster.sampling.half_width_seconds")/ts)
			}
		}
	})
	t.Run("model error node rows", func(t *testing.T) {
		full := studyIndex(t, "cluster-node-nb-nfusion", luNfusionKey)
		sampled := studyIndex(t, "cluster-node-nb-nfusion-sampled", luNfusionKey)
		found := 0
		for _, row := range docTable(t, doc, "| system | n | configuration | full (s) | sampled (s) |") {
			if !width(t, doc, row, 8) || !strings.HasPrefix(row[0], "node") {
				continue // the 1-NPU rows are hand-run
			}
			_, f, _ := strings.Cut(row[2], "n_fusion ")
			f, _ = paren(f)
			rf, ok1 := point(t, full, "cluster-node-nb-nfusion", "256 "+f)
			rs, ok2 := point(t, sampled, "cluster-node-nb-nfusion-sampled", "256 "+f)
			if !ok1 || !ok2 || row[1] != "65536" {
				t.Errorf("%s: model error row %q is not a point of the node studies", doc, row[2])
				continue
			}
			found++
			where := doc + ": model error, node, n_fusion " + f
			tf, ts := num(t, rf, "hplmxp.total_seconds"), num(t, rs, "hplmxp.total_seconds")
			checkFig(t, where+", full (cluster-node-nb-nfusion hplmxp.total_seconds)", row[3], tf)
			checkFig(t, where+", sampled (cluster-node-nb-nfusion-sampled hplmxp.total_seconds)", row[4], ts)
			checkFig(t, where+", error (sampled / full − 1)", row[5], 100*(ts/tf-1))
			checkFig(t, where+", interval (cluster.sampling.half_width_seconds / sampled total)", strings.TrimPrefix(row[6], "±"),
				100*num(t, rs, "cluster.sampling.half_width_seconds")/ts)
		}
		if found != 2 {
			t.Errorf("%s: model error table: %d node rows checked, want 2", doc, found)
		}
	})
	t.Run("cluster-node-ratio-over-time", func(t *testing.T) {
		idx := studyIndex(t, "cluster-node-ratio-over-time", func(r map[string]string) string {
			return r["program.n_fused"] + " " + r["program.n_fusion"]
		})
		for _, row := range docTable(t, doc, "| n_fused | n_fusion | factorization TFLOP/s |") {
			if !width(t, doc, row, 5) {
				continue
			}
			r, ok := point(t, idx, "cluster-node-ratio-over-time", row[0]+" "+row[1])
			if !ok {
				continue
			}
			where := doc + ": cluster-node-ratio-over-time, n_fused " + row[0] + ", n_fusion " + row[1]
			checkFig(t, where+", factorization (hplmxp.factorization_tflops)", row[2], num(t, r, "hplmxp.factorization_tflops"))
			checkFig(t, where+", HPL-MxP (hplmxp.tflops)", row[3], num(t, r, "hplmxp.tflops"))
			checkFig(t, where+", total (hplmxp.total_seconds)", row[4], num(t, r, "hplmxp.total_seconds"))
		}
	})
	t.Run("cluster-256-design", func(t *testing.T) {
		key := func(r map[string]string) string {
			return strings.Join([]string{r["machine.core.buffers.L1"], r["node.roce.bandwidth"], r["cluster.fabric.port_bandwidth"],
				r["node.hccs.link_bandwidth"], "gen" + r["node.pcie.generation"], r["cluster.fabric.supernodes"] + "sn"}, " ")
		}
		idx := studyIndex(t, "cluster-256-design", key)
		// Each knob's row as the files are built but for the one knob.
		knobs := []struct{ label, key string }{
			{"as built", "1MiB 12.5GB/s 12.5GB/s 30GB/s gen3 1sn"},
			{"L1 512 KiB", "512KiB 12.5GB/s 12.5GB/s 30GB/s gen3 1sn"},
			{"L1 2 MiB", "2MiB 12.5GB/s 12.5GB/s 30GB/s gen3 1sn"},
			{"RoCE 200GE", "1MiB 25GB/s 25GB/s 30GB/s gen3 1sn"},
			{"RoCE 400GE", "1MiB 50GB/s 50GB/s 30GB/s gen3 1sn"},
			{"HCCS 60 GB/s", "1MiB 12.5GB/s 12.5GB/s 60GB/s gen3 1sn"},
			{"PCIe Gen4", "1MiB 12.5GB/s 12.5GB/s 30GB/s gen4 1sn"},
			{"2 supernodes", "1MiB 12.5GB/s 12.5GB/s 30GB/s gen3 2sn"},
			{"4 supernodes", "1MiB 12.5GB/s 12.5GB/s 30GB/s gen3 4sn"},
			{"8 supernodes", "1MiB 12.5GB/s 12.5GB/s 30GB/s gen3 8sn"},
		}
		built, ok := point(t, idx, "cluster-256-design", knobs[0].key)
		if !ok {
			return
		}
		for _, row := range docTable(t, doc, "| knob | n_fused | HPL-MxP PFLOP/s |") {
			if !width(t, doc, row, 6) {
				continue
			}
			i := slices.IndexFunc(knobs, func(k struct{ label, key string }) bool { return strings.HasPrefix(row[0], k.label) })
			if i < 0 {
				t.Errorf("%s: knob %q is not one of cluster-256-design's points", doc, row[0])
				continue
			}
			r, ok := point(t, idx, "cluster-256-design", knobs[i].key)
			if !ok {
				continue
			}
			where := doc + ": cluster-256-design, " + knobs[i].label
			if row[1] != r["hplmxp.n_fused"] {
				t.Errorf("%s: n_fused %s, hplmxp.n_fused %s", where, row[1], r["hplmxp.n_fused"])
			}
			tf := num(t, r, "hplmxp.tflops")
			checkFig(t, where+", PFLOP/s (hplmxp.tflops / 1000)", row[2], tf/1000)
			checkFig(t, where+", vs built (hplmxp.tflops over the as-built row's − 1)", row[3], 100*(tf/num(t, built, "hplmxp.tflops")-1))
			checkFig(t, where+", of FP16 peak (hplmxp.peak_fraction)", row[4], 100*num(t, r, "hplmxp.peak_fraction"))
			tot, hw, _ := strings.Cut(row[5], " ± ")
			checkFig(t, where+", total (hplmxp.total_seconds)", tot, num(t, r, "hplmxp.total_seconds"))
			checkFig(t, where+", ± 99.7 % (cluster.sampling.half_width_seconds)", hw, num(t, r, "cluster.sampling.half_width_seconds"))
		}
	})
}

// TestDocTablesSGEMMCube holds docs/sgemm-cube.md's tables to the studies
// that reproduce them: the block-size sweep (sgemm-cube-blocks), the
// throughput table's 8192³ rows (the (176, 64, 176, 44) point of
// sgemm-cube-blocks: TFLOP/s, share of the peak and the peak it implies,
// the single-buffered TFLOP/s, the double-buffering gain = double / single
// − 1; the paper's column, the gain over the paper and the size-scaling rows
// of docs/sgemm-cube/scaling.csv not) and the accuracy table
// (sgemm-cube-accuracy: the same 256 × 1024 × 256 problem as the doc's
// docs/sgemm-cube/accuracy-offset.csv, symmetric inputs).
func TestDocTablesSGEMMCube(t *testing.T) {
	const doc = "sgemm-cube.md"
	blocks := func(t *testing.T) map[string]map[string]string {
		return studyIndex(t, "sgemm-cube-blocks", func(r map[string]string) string {
			return r["program.tiling.bm"] + " × " + r["program.tiling.bk"] + " × " + r["program.tiling.bn"] + " " + r["program.buffering"]
		})
	}
	t.Run("sgemm-cube-blocks", func(t *testing.T) {
		idx := blocks(t)
		for _, row := range docTable(t, doc, "| bm × bk × bn | Nfused | double | single |") {
			if !width(t, doc, row, 4) {
				continue
			}
			for i, buf := range []string{"double", "single"} {
				r, ok := point(t, idx, "sgemm-cube-blocks", row[0]+" "+buf)
				if !ok {
					continue
				}
				where := doc + ": " + row[0] + " " + buf
				if row[1] != r["program.tiling.nfused"] {
					t.Errorf("%s: Nfused %s, program.tiling.nfused %s", where, row[1], r["program.tiling.nfused"])
				}
				checkFig(t, where+" (flops.tflops)", row[2+i], num(t, r, "flops.tflops"))
			}
		}
	})
	t.Run("sgemm-cube-blocks throughput", func(t *testing.T) {
		idx := blocks(t)
		d, ok1 := point(t, idx, "sgemm-cube-blocks", "176 × 64 × 176 double")
		s, ok2 := point(t, idx, "sgemm-cube-blocks", "176 × 64 × 176 single")
		if !ok1 || !ok2 {
			return
		}
		dt, st := num(t, d, "flops.tflops"), num(t, s, "flops.tflops")
		found := 0
		for _, row := range docTable(t, doc, "| experiment | paper (Ascend 910A) | simulated |") {
			if !width(t, doc, row, 3) {
				continue
			}
			where := doc + ": throughput, " + row[0]
			switch {
			case strings.HasPrefix(row[0], "(bm, bk, bn, Nfused) = (176, 64, 176, 44), double"):
				found++
				tf, rest := paren(row[2]) // "**65.7** (75.2 % of 87.4)"
				share, peak, _ := strings.Cut(rest, " of ")
				checkFig(t, where+" (flops.tflops)", tf, dt)
				checkFig(t, where+", of peak (flops.peak_fraction)", share, 100*num(t, d, "flops.peak_fraction"))
				checkFig(t, where+", peak (flops.tflops / flops.peak_fraction)", peak, dt/num(t, d, "flops.peak_fraction"))
			case strings.HasPrefix(row[0], "best single-buffered"):
				found++
				tf, _ := paren(row[2]) // its "(+8 %)" is against the paper
				checkFig(t, where+" (flops.tflops)", tf, st)
			case strings.HasPrefix(row[0], "double-buffering gain"):
				found++
				checkFig(t, where+" (double / single flops.tflops − 1)", row[2], 100*(dt/st-1))
			}
		}
		if found != 3 {
			t.Errorf("%s: throughput table: %d of its 3 rows at 8192³ found", doc, found)
		}
	})
	t.Run("sgemm-cube-accuracy", func(t *testing.T) {
		idx := studyIndex(t, "sgemm-cube-accuracy", func(r map[string]string) string {
			return r["program.accumulation"] + " " + r["program.split.sb"] + " " + r["program.inputs.offset_exponent"]
		})
		cols := []struct{ acc, sb, col string }{
			{"termwise", "0", "error.rel_fro"},
			{"termwise", "6", "error.rel_fro"},
			{"termwise", "12", "error.rel_fro"},
			{"elementwise", "12", "error.rel_fro"},
			{"termwise", "12", "baselines.hgemm.rel_fro"},
			{"termwise", "12", "baselines.cpu_sgemm_fp32.rel_fro"},
		}
		for _, row := range docTable(t, doc, "| offset exponent e (symmetric U[−2^e, 2^e]) |") {
			if !width(t, doc, row, 1+len(cols)) {
				continue
			}
			e := strings.ReplaceAll(row[0], "−", "-")
			for i, c := range cols {
				if r, ok := point(t, idx, "sgemm-cube-accuracy", c.acc+" "+c.sb+" "+e); ok {
					checkFig(t, doc+": e = "+e+", "+c.acc+" sb="+c.sb+" ("+c.col+")", row[1+i], num(t, r, c.col))
				}
			}
		}
	})
}

// TestDocTablesNvidia holds docs/nvidia.md's table of HGEMM 8192³ against
// the L2's capacity to gpu-l2-capacity's CSV: each cell's TFLOP/s and the
// share of GM reads the L2 serves. The "file's L2" column (runs at the
// files' own capacities) is not a point of the study.
func TestDocTablesNvidia(t *testing.T) {
	t.Run("gpu-l2-capacity", func(t *testing.T) {
		idx := studyIndex(t, "gpu-l2-capacity", func(r map[string]string) string {
			return r["machine"] + " " + r["machine.l2.capacity"]
		})
		caps := []string{"2MiB", "4MiB", "8MiB", "16MiB", "32MiB", "64MiB"}
		for _, row := range docTable(t, "nvidia.md", "| L2 | 2 MiB | 4 MiB |") {
			if !width(t, "nvidia.md", row, 2+len(caps)) {
				continue
			}
			for i, c := range caps {
				r, ok := point(t, idx, "gpu-l2-capacity", row[0]+" "+c)
				if !ok {
					continue
				}
				where := "nvidia.md: " + row[0] + " with " + c + " of L2"
				tf, hit := paren(row[1+i])
				checkFig(t, where+" (flops.tflops)", tf, num(t, r, "flops.tflops"))
				checkFig(t, where+", L2 serves (memory.l2_hit_rate)", hit, 100*num(t, r, "memory.l2_hit_rate"))
			}
		}
	})
}

// autoInputs maps the emulated.md auto tables' input ranges to the
// studies' distribution and offset exponent.
var autoInputs = map[string]string{
	"U[−1, 1]":         "uniform 0",
	"U[0.5, 2.5]":      "between 0",
	"U[−2^−20, 2^−20]": "uniform -20",
	"U[−2^−10, 2^−10]": "uniform -10",
	"U[−2^10, 2^10]":   "uniform 10",
}

// checkAuto checks an auto table's cell, "ootomo (74.5 TF)" or
// "markidis, fused (50.4)", against the study's chosen scheme
// ("markidis (split: fused)") and TFLOP/s.
func checkAuto(t *testing.T, where, cell string, r map[string]string) {
	t.Helper()
	name, rest := paren(cell)
	tf, _, _ := strings.Cut(rest, ";") // "46.5; 10.0 bits: …"
	if s, ok := strings.CutSuffix(name, ", fused"); ok {
		name = s + " (split: fused)"
	}
	if name != r["program.auto.chosen"] {
		t.Errorf("%s: the doc names %q where program.auto.chosen is %q", where, name, r["program.auto.chosen"])
	}
	checkFig(t, where+" (flops.tflops)", tf, num(t, r, "flops.tflops"))
}

// TestDocTablesEmulatedMore holds the rest of docs/emulated.md's study
// tables to their CSVs: what `scheme: auto` chooses on the GPUs
// (emulated-auto) and on DaVinci (emulated-auto-davinci), the fastest scheme
// with at least so many bits (recomputed from emulated-pareto as the doc
// defines it), the split-kernel column of the pass / fused table (the same
// 4096³ runs as emulated-pareto's; the fused column and the tiles are
// hand-run), Ape's FP32-F against native SGEMM (ape-speedup: both TFLOP/s,
// their ratio and its maximum over n), LE-GEMM's Table 6 (le-gemm-table6:
// LE-GEMM's TFLOP/s over each baseline's), the unstaged baselines
// (le-gemm-plain-baselines) and the ablations (le-gemm-ablation: the
// analytic tile the row whose product kernel ran 128×128×32). The papers'
// figures, in brackets or their own column, are not checked.
func TestDocTablesEmulatedMore(t *testing.T) {
	const doc = "emulated.md"
	gpus := []string{"a100", "h100-sxm", "b200", "gb200", "rtx-pro-6000", "v100", "t4", "mi100", "mi210", "mi300x"}
	autoKey := func(r map[string]string) string {
		return r["program.inputs.distribution"] + " " + r["program.inputs.offset_exponent"] + " " + r["machine"]
	}
	autoTable := func(t *testing.T, study, header string, machines []string) {
		idx := studyIndex(t, study, autoKey)
		for _, row := range docTable(t, doc, header) {
			if !width(t, doc, row, 1+len(machines)) {
				continue
			}
			in, ok := autoInputs[row[0]]
			if !ok {
				t.Errorf("%s: inputs %q are not a point of %s", doc, row[0], study)
				continue
			}
			for i, m := range machines {
				if r, ok := point(t, idx, study, in+" "+m); ok {
					checkAuto(t, doc+": "+study+", "+row[0]+" on "+m, row[1+i], r)
				}
			}
		}
	}
	t.Run("emulated-auto", func(t *testing.T) {
		autoTable(t, "emulated-auto", "| inputs | a100 | h100-sxm |", gpus)
	})
	t.Run("emulated-auto-davinci", func(t *testing.T) {
		autoTable(t, "emulated-auto-davinci", "| inputs | ascend-910a | ascend-910b3 |", []string{"ascend-910a", "ascend-910b3"})
	})
	t.Run("emulated-pareto front", func(t *testing.T) {
		byMachine := map[string][]map[string]string{}
		for _, r := range studyCSV(t, "emulated-pareto") {
			if r["status"] == "ok" {
				byMachine[r["machine"]] = append(byMachine[r["machine"]], r)
			}
		}
		for _, row := range docTable(t, doc, "| machine | ≥ 15 bits | ≥ 17 bits |") {
			if !width(t, doc, row, 5) {
				continue
			}
			pts := byMachine[row[0]]
			if len(pts) == 0 {
				t.Errorf("%s: %s has no points in emulated-pareto's CSV", doc, row[0])
				continue
			}
			for i, bits := range []float64{15, 17, 20, 22} {
				// The fastest point with at least bits; none: the most accurate.
				var best, top map[string]string
				for _, r := range pts {
					if top == nil || num(t, r, "error.bits") > num(t, top, "error.bits") {
						top = r
					}
					if num(t, r, "error.bits") >= bits && (best == nil || num(t, r, "flops.tflops") > num(t, best, "flops.tflops")) {
						best = r
					}
				}
				where := doc + ": " + row[0] + " at ≥ " + strconv.FormatFloat(bits, 'g', -1, 64) + " bits"
				cell, col := row[1+i], "flops.tflops"
				if inner, ok := strings.CutPrefix(cell, "none ("); ok {
					cell, col = strings.TrimSuffix(inner, ")"), "error.bits"
					if best != nil {
						t.Errorf("%s: the doc says none; emulated-pareto has %s", where, best["program.scheme"])
						continue
					}
					best = top
				}
				name, q, _ := strings.Cut(cell, " ")
				if best == nil || name != best["program.scheme"] {
					t.Errorf("%s: the doc names %q; emulated-pareto's CSV gives %q", where, name, best["program.scheme"])
					continue
				}
				checkFig(t, where+", "+name+" ("+col+")", q, num(t, best, col))
			}
		}
	})
	t.Run("emulated-pareto pass", func(t *testing.T) {
		idx := studyIndex(t, "emulated-pareto", func(r map[string]string) string { return r["machine"] + " " + r["program.scheme"] })
		for _, row := range docTable(t, doc, "| machine | scheme | pass | fused |") {
			if !width(t, doc, row, 4) {
				continue
			}
			if r, ok := point(t, idx, "emulated-pareto", row[0]+" "+row[1]); ok {
				tf, _ := paren(row[2])
				checkFig(t, doc+": "+row[0]+" "+row[1]+", pass (emulated-pareto flops.tflops)", tf, num(t, r, "flops.tflops"))
			}
		}
	})
	t.Run("ape-speedup", func(t *testing.T) {
		idx := studyIndex(t, "ape-speedup", func(r map[string]string) string {
			return r["machine"] + " " + r["program.scheme"] + " " + r["program.m"]
		})
		ns := []string{"1024", "2048", "4096", "8192"}
		for _, row := range docTable(t, doc, "| machine | n = 1024 | 2048 | 4096 | 8192 | model max |") {
			if !width(t, doc, row, 7) {
				continue
			}
			best := math.Inf(-1)
			for i, n := range ns {
				em, ok1 := point(t, idx, "ape-speedup", row[0]+" ape-fp32f "+n)
				nat, ok2 := point(t, idx, "ape-speedup", row[0]+" native "+n)
				if !ok1 || !ok2 {
					best = math.NaN()
					continue
				}
				where := doc + ": ape-speedup, " + row[0] + " at n = " + n
				emTF, natTF := num(t, em, "flops.tflops"), num(t, nat, "flops.tflops")
				lhs, ratio, _ := strings.Cut(row[1+i], " = ")
				e, d, _ := strings.Cut(lhs, " / ")
				checkFig(t, where+", FP32-F (ape-fp32f flops.tflops)", e, emTF)
				checkFig(t, where+", native (native flops.tflops)", d, natTF)
				checkFig(t, where+", speedup (ape-fp32f / native)", ratio, emTF/natTF)
				best = max(best, emTF/natTF)
			}
			checkFig(t, doc+": ape-speedup, "+row[0]+", model max (the largest speedup)", row[5], best) // row[6]: Ape's
		}
	})
	t.Run("le-gemm-table6", func(t *testing.T) {
		idx := studyIndex(t, "le-gemm-table6", func(r map[string]string) string {
			return r["machine"] + " " + r["program.scheme"] + " " + r["program.m"] + "×" + r["program.n"] + "×" + r["program.k"]
		})
		for _, row := range docTable(t, doc, "| machine | shape | le-gemm TFLOP/s |") {
			if !width(t, doc, row, 7) {
				continue
			}
			shape, nq, _ := strings.Cut(row[1], ", n = ") // "n×4n×n, n = 4096"
			n, err := strconv.Atoi(nq)
			dims := strings.Split(shape, "×")
			if err != nil || len(dims) != 3 {
				t.Errorf("%s: shape %q", doc, row[1])
				continue
			}
			for i, d := range dims { // "n" or "4n"
				mult := 1
				if d = strings.TrimSuffix(d, "n"); d != "" {
					if mult, err = strconv.Atoi(d); err != nil {
						t.Errorf("%s: shape %q", doc, row[1])
					}
				}
				dims[i] = strconv.Itoa(n * mult)
			}
			dimsKey := strings.Join(dims, "×")
			le, ok := point(t, idx, "le-gemm-table6", row[0]+" le-gemm "+dimsKey)
			if !ok {
				continue
			}
			where := doc + ": le-gemm-table6, " + row[0] + " " + row[1]
			leTF := num(t, le, "flops.tflops")
			checkFig(t, where+", le-gemm (flops.tflops)", row[2], leTF)
			for j, base := range []string{"native", "hgemm", "markidis", "ootomo"} {
				if r, ok := point(t, idx, "le-gemm-table6", row[0]+" "+base+" "+dimsKey); ok {
					ratio, _ := paren(row[3+j]) // the paper's in brackets
					checkFig(t, where+", over "+base+" (le-gemm / "+base+" flops.tflops)", ratio, leTF/num(t, r, "flops.tflops"))
				}
			}
		}
	})
	t.Run("le-gemm-plain-baselines", func(t *testing.T) {
		idx := studyIndex(t, "le-gemm-plain-baselines", func(r map[string]string) string {
			return r["machine"] + " " + r["program.scheme"] + " " + r["program.tiling.staging"] + " " + r["program.m"]
		})
		ns := []string{"2048", "4096", "8192"}
		for _, row := range docTableAt(t, doc, "", "| machine | over FP16 cast | over Markidis | over Ootomo |") {
			if !width(t, doc, row, 4) {
				continue
			}
			for j, base := range []string{"hgemm", "markidis", "ootomo"} {
				ratios, _ := paren(row[1+j]) // "0.50 / 0.52 / 0.42× (1.26×)": the paper's in brackets
				parts := strings.Split(ratios, " / ")
				if len(parts) != len(ns) {
					t.Errorf("%s: %s over %s: %q is not %d ratios", doc, row[0], base, row[1+j], len(ns))
					continue
				}
				for i, n := range ns {
					le, ok1 := point(t, idx, "le-gemm-plain-baselines", row[0]+" le-gemm  "+n)
					b, ok2 := point(t, idx, "le-gemm-plain-baselines", row[0]+" "+base+" none "+n)
					if ok1 && ok2 {
						checkFig(t, doc+": le-gemm-plain-baselines, "+row[0]+" at n = "+n+", over unstaged "+base+" (le-gemm / "+base+" flops.tflops)",
							parts[i], num(t, le, "flops.tflops")/num(t, b, "flops.tflops"))
					}
				}
			}
		}
	})
	t.Run("le-gemm-ablation", func(t *testing.T) {
		// By machine, n, staging and the product kernel's tile as it ran.
		idx := studyIndex(t, "le-gemm-ablation", func(r map[string]string) string {
			return strings.Join([]string{r["machine"], r["program.m"], r["program.tiling.staging"], r["program.tiling.bm"],
				r["program.product_kernels.0.tiling.bm"] + "×" + r["program.product_kernels.0.tiling.bn"] + "×" + r["program.product_kernels.0.tiling.bk"]}, " ")
		})
		// pick returns the point of the (staged) run whose product kernel ran tile, whether asked for or the library's.
		pick := func(t *testing.T, machine, n, tile string) (map[string]string, bool) {
			var found []map[string]string
			for k, r := range idx {
				f := strings.Fields(k)
				if f[0] == machine && f[1] == n && r["program.tiling.staging"] == "" && f[len(f)-1] == tile {
					found = append(found, r)
				}
			}
			if len(found) != 1 || found[0]["status"] != "ok" {
				t.Errorf("le-gemm-ablation's CSV has %d staged points of %s at n = %s with a %s product kernel, want 1", len(found), machine, n, tile)
				return nil, false
			}
			return found[0], true
		}
		for _, row := range docTable(t, doc, "| machine | n | pipelined | staging none |") {
			if !width(t, doc, row, 8) {
				continue
			}
			var piped, none map[string]string
			for _, r := range idx {
				if r["machine"] == row[0] && r["program.m"] == row[1] && r["program.tiling.bm"] == "0" {
					if r["program.tiling.staging"] == "none" {
						none = r
					} else {
						piped = r
					}
				}
			}
			an, ok1 := pick(t, row[0], row[1], "128×128×32")
			small, ok2 := pick(t, row[0], row[1], "64×64×32")
			if piped == nil || none == nil || !ok1 || !ok2 {
				t.Errorf("%s: %s at n = %s: le-gemm-ablation's CSV lacks a point", doc, row[0], row[1])
				continue
			}
			where := doc + ": le-gemm-ablation, " + row[0] + " at n = " + row[1]
			p, u, a, s := num(t, piped, "flops.tflops"), num(t, none, "flops.tflops"), num(t, an, "flops.tflops"), num(t, small, "flops.tflops")
			checkFig(t, where+", pipelined (flops.tflops)", row[2], p)
			checkFig(t, where+", staging none (flops.tflops)", row[3], u)
			gain, _ := paren(row[4]) // the paper's in brackets
			checkFig(t, where+", pipeline gain (pipelined / staging none)", gain, p/u)
			checkFig(t, where+", analytic tile (flops.tflops, product kernel 128×128×32)", row[5], a)
			checkFig(t, where+", 64×64×32 (flops.tflops)", row[6], s)
			gain, _ = paren(row[7])
			checkFig(t, where+", tile gain (analytic / 64×64×32)", gain, a/s)
		}
	})
}
