package report_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/davinci-sim/davinci-sim/programs"
	"github.com/davinci-sim/davinci-sim/report"
)

// docRuns are small runs covering every program kind and every optional
// report section (computed and timed-only refinement, sampled error,
// baselines, a GPU grid, a microbenchmark).
var docRuns = []struct {
	file string
	opts programs.Options
	sets []string
	// deadlocks: the run deadlocks, and its report is the one Execute
	// returns with the deadlock (key failure).
	deadlocks bool
}{
	{file: "cube-peak.yaml"},
	{file: "deadlock.yaml", deadlocks: true},
	{file: "sgemm-cube.yaml", opts: programs.Options{Numerics: programs.NumericsFull}, sets: []string{"program.m=200", "program.n=150", "program.k=300"}},
	{file: "sgemm-cube.yaml", opts: programs.Options{Numerics: programs.NumericsSampled}, sets: []string{"program.m=400", "program.n=400", "program.k=64"}},
	{file: "hgemm.yaml", sets: []string{"program.m=128", "program.n=64", "program.k=96"}},
	{file: "lu-fused-small.yaml", sets: []string{"program.check=true"}},
	{file: "lu-fused-small.yaml", opts: programs.Options{Numerics: programs.NumericsOff}},
	{file: "lu-gemm128.yaml"},
	{file: "a100-tensor-peak.yaml"},
	{file: "a100-hgemm.yaml", sets: []string{"program.m=256", "program.n=256", "program.k=256"}},
	{file: "a100-sgemm.yaml", opts: programs.Options{Numerics: programs.NumericsOff, KBatch: 4}, sets: []string{"program.m=256", "program.n=256", "program.k=512"}},
	{file: "a100-igemm.yaml", sets: []string{"program.m=128", "program.n=128", "program.k=128"}},
	{file: "a100-tf32gemm.yaml", sets: []string{"program.m=128", "program.n=128", "program.k=128"}},
	{file: "a100-dgemm.yaml", sets: []string{"program.m=64", "program.n=64", "program.k=64"}},
	{file: "a100-emulated-gemm.yaml", sets: []string{"program.m=128", "program.n=128", "program.k=128", "program.histogram_bins=8"}},
	{file: "a100-emulated-gemm.yaml", sets: []string{"program.m=128", "program.n=128", "program.k=128", "program.scheme=auto"}},
	{file: "a100-emulated-gemm.yaml", sets: []string{"program.m=128", "program.n=128", "program.k=128", "program.scheme=ape-int16"}},
	{file: "a100-emulated-gemm.yaml", sets: []string{"program.m=128", "program.n=128", "program.k=128", "program.scheme=native"}},
	{file: "ascend-910a-emulated-gemm.yaml", sets: []string{"program.m=128", "program.n=128", "program.k=128"}},
	{file: "b200-ozaki.yaml", sets: []string{"program.m=64", "program.n=64", "program.k=64", "program.numerics=full"}},
	{file: "ascend-910a-ozaki.yaml", sets: []string{"program.m=64", "program.n=64", "program.k=64", "program.numerics=full", "program.precision=dynamic"}},
	{file: "b200-ozaki.yaml", sets: []string{"program.m=64", "program.n=64", "program.k=64", "program.method=ozaki-ii", "program.precision=", "program.numerics=full"}},
	{file: "a100-hgemm.yaml", sets: []string{"program.machine=b200", "program.m=256", "program.n=256", "program.k=256", "program.numerics=off", "program.tiling.cta_group=2"}}, // (CTA pairs: tiling.cta_group)
	{file: "ascend-910a-ozaki.yaml", sets: []string{"program.m=256", "program.n=256", "program.k=256", "program.numerics=off"}},                                                // (no fallback: native_dgemm_seconds)
	// Inputs holding Inf, a zero row and a row whose |A||B| overflows
	// (componentwise_error's counts), and inputs whose coarse ESC bounds
	// no pair (esc_bounded).
	{file: "b200-ozaki.yaml", sets: []string{"program.m=3", "program.k=2", "program.n=1", "program.inputs.a=../../testdata/ozaki/nonfinite-a.npy", "program.inputs.b=../../testdata/ozaki/nonfinite-b.npy", "program.precision=fixed", "program.numerics=full"}},
	{file: "b200-ozaki.yaml", sets: []string{"program.m=2", "program.k=16", "program.n=2", "program.inputs.a=../../testdata/ozaki/disjoint-a.npy", "program.inputs.b=../../testdata/ozaki/disjoint-b.npy", "program.precision=forced", "program.numerics=full"}},
	{file: "a100-lu-fused.yaml", sets: []string{"program.n=1024"}},
	{file: "lu-cluster-small.yaml", opts: programs.Options{Numerics: programs.NumericsOff}},
	{file: "lu-cluster-small.yaml", opts: programs.Options{Numerics: programs.NumericsOff, Fidelity: "sampled"}},
}

// docKey is one row of docs/report.md.
type docKey struct{ key, typ string }

// rowRE matches a row of docs/report.md's tables: its first cell one key
// or several (`a`, `b`: keys alike, one row), and its type.
var rowRE = regexp.MustCompile("^\\| (`[^`]+`(?:, `[^`]+`)*) \\| ([a-z]+) \\|")

// cellKeyRE matches each key of a row's first cell.
var cellKeyRE = regexp.MustCompile("`([^`]+)`")

func readDoc(t *testing.T) []docKey {
	t.Helper()
	f, err := os.Open("../docs/report.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var keys []docKey
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m := rowRE.FindStringSubmatch(sc.Text()); m != nil {
			for _, k := range cellKeyRE.FindAllStringSubmatch(m[1], -1) {
				keys = append(keys, docKey{k[1], m[2]})
			}
		}
	}
	return keys
}

var placeholders = []struct {
	re   *regexp.Regexp
	repl string
}{
	{regexp.MustCompile(`^pipes\.[^.]+`), "pipes.<pipe>"},
	{regexp.MustCompile(`^cores\[\]\.pipes\.[^.]+`), "cores[].pipes.<pipe>"},
	{regexp.MustCompile(`\.stall\.[^.]+$`), ".stall.<cause>"},
	{regexp.MustCompile(`^buffers\.[^.]+`), "buffers.<buffer>"},
	{regexp.MustCompile(`^baselines\.[^.]+`), "baselines.<name>"},
	{regexp.MustCompile(`^hplmxp\.zones\.[^.]+`), "hplmxp.zones.<zone>"},
	{regexp.MustCompile(`^hplmxp\.host_stages_seconds\.[^.]+`), "hplmxp.host_stages_seconds.<stage>"},
	{regexp.MustCompile(`^cluster\.ranks\[\]\.host_stages_seconds\.[^.]+`), "cluster.ranks[].host_stages_seconds.<stage>"},
	{regexp.MustCompile(`^cluster\.link_bytes\.[^.]+`), "cluster.link_bytes.<class>"},
}

// walk records the documented form of every leaf key of v with its JSON type.
func walk(v any, path string, out map[string]map[string]bool) {
	add := func(typ string) {
		p := path
		for _, ph := range placeholders {
			p = ph.re.ReplaceAllString(p, ph.repl)
		}
		if out[p] == nil {
			out[p] = map[string]bool{}
		}
		out[p][typ] = true
	}
	switch x := v.(type) {
	case map[string]any:
		if path == "machine_config" {
			add("object")
			return
		}
		for k, e := range x {
			walk(e, strings.TrimPrefix(path+"."+k, "."), out)
		}
	case []any:
		if len(x) > 0 {
			if _, ok := x[0].(map[string]any); ok {
				for _, e := range x {
					walk(e, path+"[]", out)
				}
				return
			}
		}
		add("list")
	case string:
		if x == "+Inf" || x == "-Inf" || x == "NaN" {
			add("number") // (a number that is not finite: docs/report.md's convention)
			return
		}
		add("string")
	case bool:
		add("bool")
	case json.Number, float64:
		add("number")
	case nil:
		add("null")
	}
}

// TestReportDocumented checks docs/report.md against the code: every key of
// the report.json of docRuns is documented with its type, and every
// documented key is a key of the Report structure (program.* keys, free-form
// there: seen in one of the runs).
func TestReportDocumented(t *testing.T) {
	seen := map[string]map[string]bool{}
	for _, r := range docRuns {
		f, err := programs.ReadFile("../programs/examples/" + r.file)
		if err != nil {
			t.Fatal(err)
		}
		opts := r.opts
		for _, s := range r.sets {
			path, value, _ := strings.Cut(s, "=")
			opts.Overrides = append(opts.Overrides, struct{ Path, Value string }{path, value})
		}
		res, err := programs.Execute(f, opts, programs.RunHooks{})
		if r.deadlocks {
			if err == nil || res == nil || res.Failure != err {
				t.Fatalf("%s: got %v (result %v), want a deadlock with its result", r.file, err, res != nil)
			}
		} else if err != nil {
			t.Fatalf("%s %v: %v", r.file, r.sets, err)
		}
		var buf bytes.Buffer
		if err := res.Report.WriteJSON(&buf); err != nil {
			t.Fatal(err)
		}
		dec := json.NewDecoder(&buf)
		dec.UseNumber()
		var doc any
		if err := dec.Decode(&doc); err != nil {
			t.Fatal(err)
		}
		walk(doc, "", seen)
	}
	documented := map[string]string{}
	for _, d := range readDoc(t) {
		documented[d.key] = d.typ
	}
	var keys []string
	for k := range seen {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		typ, ok := documented[k]
		if !ok {
			t.Errorf("report.json key %s (%v) is not documented in docs/report.md", k, seen[k])
			continue
		}
		if len(seen[k]) != 1 || !seen[k][typ] {
			t.Errorf("report.json key %s: types %v in the runs, %s in docs/report.md (one type per key)", k, seen[k], typ)
		}
	}
	for k := range documented {
		if strings.HasPrefix(k, "program.") {
			if seen[k] == nil {
				t.Errorf("docs/report.md documents %s, which no program kind writes", k)
			}
			continue
		}
		p := strings.NewReplacer("[]", ".0", "<pipe>", "x", "<buffer>", "x", "<name>", "x", "<zone>", "x", "<stage>", "x", "<cause>", "x").Replace(k)
		if err := report.CheckPath(p); err != nil {
			t.Errorf("docs/report.md documents %s, not a key of report.json: %v", k, err)
		}
	}
}
