package main

import (
	"encoding/csv"
	"os"
	"strconv"
	"strings"
	"testing"
)

// docTable returns the rows of the Markdown table of doc (under docs/)
// whose header line starts with header, each row's cells trimmed (the
// separator row left out): docTableAt from the doc's start.
func docTable(t *testing.T, doc, header string) [][]string {
	t.Helper()
	return docTableAt(t, doc, "", header)
}

// studyCSV returns the rows of a study's committed results.csv
// (docs/studies/NAME), each a map from column to value.
func studyCSV(t *testing.T, name string) []map[string]string {
	t.Helper()
	f, err := os.Open("../../docs/studies/" + name + "/results.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var out []map[string]string
	for _, r := range recs[1:] {
		m := map[string]string{}
		for i, c := range recs[0] {
			m[c] = r[i]
		}
		out = append(out, m)
	}
	return out
}

// quotesCSV reports whether the doc's figure q (a number, or one in
// scientific notation with the doc's "e−3") is the CSV's value v times
// scale, rounded as q is written.
func quotesCSV(q, v string, scale float64) bool {
	x, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return false
	}
	x *= scale
	q = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(q), "%"))
	if mant, exp, ok := strings.Cut(strings.ReplaceAll(q, "−", "-"), "e"); ok {
		e, err := strconv.Atoi(exp)
		if err != nil {
			return false
		}
		p := 1.0
		for range max(e, -e) {
			p *= 10
		}
		if e < 0 {
			p = 1 / p
		}
		return quotes(mant, x/p)
	}
	return quotes(q, x)
}

// machineScheme is a study row's machine and scheme, a key (studyIndex).
func machineScheme(r map[string]string) string { return r["machine"] + " " + r["program.scheme"] }

// TestDocTablesMatchStudies holds tables the docs quote from studies to
// the studies' committed CSVs (which `.ci/studies check` or a re-run holds
// to the build): emulated.md's table of every preset on the DaVinci
// machines (emulated-davinci), its table of every scheme on every GPU
// (emulated-pareto) and its MRED against the CPU SGEMM by k
// (emulated-accuracy).
func TestDocTablesMatchStudies(t *testing.T) {
	t.Run("emulated-davinci", func(t *testing.T) {
		csvRows := studyIndex(t, "emulated-davinci", machineScheme)
		rows := docTable(t, "emulated.md", "| machine | scheme | TFLOP/s | of peak | bits | MRED | cube busy | vector busy |")
		for _, row := range rows {
			scheme, _, _ := strings.Cut(row[1], " ") // "native (FP32 cube)"
			r, ok := csvRows[row[0]+" "+scheme]
			if !ok {
				t.Errorf("emulated.md: %s %s is not in emulated-davinci's CSV", row[0], scheme)
				continue
			}
			for i, c := range []struct {
				col   string
				scale float64
			}{{"flops.tflops", 1}, {"flops.peak_fraction", 100}, {"error.bits", 1}, {"error.mred", 1}, {"pipes.M.busy", 100}, {"pipes.V.busy", 100}} {
				if !quotesCSV(row[2+i], r[c.col], c.scale) {
					t.Errorf("emulated.md: %s %s quotes %s where emulated-davinci's CSV has %s = %s", row[0], scheme, row[2+i], c.col, r[c.col])
				}
			}
		}
	})
	t.Run("emulated-pareto", func(t *testing.T) {
		csvRows := studyIndex(t, "emulated-pareto", machineScheme)
		rows := docTable(t, "emulated.md", "| scheme | a100 | h100-sxm |")
		machines := []string{"a100", "h100-sxm", "b200", "gb200", "rtx-pro-6000", "v100", "t4", "mi100", "mi210", "mi300x"}
		for _, row := range rows {
			for i, m := range machines {
				cell := row[1+i]
				if cell == "—" {
					continue
				}
				tf, bits, ok := strings.Cut(cell, " / ")
				r, found := csvRows[m+" "+row[0]]
				if !ok || !found || r["status"] != "ok" {
					t.Errorf("emulated.md: %s on %s quotes %q; emulated-pareto's CSV has no such point", row[0], m, cell)
					continue
				}
				if !quotesCSV(tf, r["flops.tflops"], 1) || !quotesCSV(bits, r["error.bits"], 1) {
					t.Errorf("emulated.md: %s on %s quotes %q where emulated-pareto's CSV has %s TFLOP/s, %s bits", row[0], m, cell, r["flops.tflops"], r["error.bits"])
				}
			}
		}
	})
	t.Run("emulated-accuracy", func(t *testing.T) {
		csvRows := studyIndex(t, "emulated-accuracy", func(r map[string]string) string {
			return machineScheme(r) + " " + r["program.k"] + " " + r["program.m"]
		})
		rows := docTable(t, "emulated.md", "| k | A100 hgemm | markidis | ootomo | le-gemm | MI210 hgemm |")
		cols := []string{"a100 hgemm", "a100 markidis", "a100 ootomo", "a100 le-gemm", "mi210 hgemm", "mi210 markidis", "mi210 ootomo", "mi210 le-gemm"}
		for _, row := range rows {
			for i, col := range cols {
				r, ok := csvRows[col+" "+row[0]+" 512"] // (the 1024³ points are the histograms')
				if !ok || r["status"] != "ok" {
					t.Errorf("emulated.md: %s at k = %s has no point in emulated-accuracy's CSV", col, row[0])
					continue
				}
				if !quotesCSV(row[1+i], r["program.error_vs_cpu_sgemm.mred"], 1) {
					t.Errorf("emulated.md: %s at k = %s quotes MRED %s where emulated-accuracy's CSV has %s", col, row[0], row[1+i], r["program.error_vs_cpu_sgemm.mred"])
				}
			}
		}
	})
}
