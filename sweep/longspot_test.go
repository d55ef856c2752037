package sweep

import (
	"bytes"
	"encoding/json"
	"flag"
	"math"
	"path/filepath"
	"strings"
	"testing"
)

// longStudies has TestLongStudySpots re-run a point of every long study,
// the lu and cluster ones too (15 s to several minutes a point, about
// 20 minutes in all): go test ./sweep -run TestLongStudySpots
// -long-studies -timeout 60m.
var longStudies = flag.Bool("long-studies", false, "TestLongStudySpots: also re-run the cheapest point of every long study not in longSpots (about 20 minutes)")

// longSpots are points of the long studies (studies/long: minutes to hours
// each, which .ci/studies check does not run) quick to run, by study:
// each the study's cheapest point but for a few of its parameters, chosen
// on 2026-12-06 by running every long study's (those left out take 3 s to
// several minutes a point: -long-studies runs them too).
var longSpots = map[string]int{
	"ape-speedup":                     0,
	"cluster-node-nb-nfusion-sampled": 16,
	"cluster-node-ratio-over-time":    0,
	"emulated-accuracy":               0,
	"emulated-auto-davinci":           0,
	"emulated-davinci":                0,
	"emulated-pareto":                 34,
	"gpu-l2-capacity":                 0,
	"le-gemm-ablation":                12,
	"le-gemm-plain-baselines":         3,
	"le-gemm-table6":                  7,
	"lu-roofline":                     0,
	"ozaki-grade-a":                   0,
	"ozaki-i-vs-ii":                   0,
	"ozaki-slices":                    0,
	"ozaki-vs-dgemm":                  9,
}

// TestLongStudySpots re-runs one point of each long study in longSpots (with
// -long-studies, of every long study: the others' point is the one of
// least recorded wall time, or the first) and requires its
// metrics to equal the committed record's byte for byte (wall times
// aside): the runs are deterministic, so a difference means the build no
// longer gives the study's committed results — regenerate it with the
// command in its header, and the docs that quote it (the doc-table tests
// in cmd/davinci-sim hold those to the CSVs). The short studies are held
// whole by .ci/studies check.
func TestLongStudySpots(t *testing.T) {
	if testing.Short() {
		t.Skip("re-runs a point of each of 16 long studies (~15 s)")
	}
	spots := map[string]int{}
	for name, index := range longSpots {
		spots[name] = index
	}
	if *longStudies {
		files, err := filepath.Glob("../studies/long/*.yaml")
		if err != nil || len(files) == 0 {
			t.Fatalf("no long studies: %v", err)
		}
		for _, f := range files {
			if name := strings.TrimSuffix(filepath.Base(f), ".yaml"); !hasKey(spots, name) {
				spots[name] = -1 // the cheapest recorded point
			}
		}
	}
	for name, index := range spots {
		t.Run(name, func(t *testing.T) {
			s, err := ReadStudy("../studies/long/" + name + ".yaml")
			if err != nil {
				t.Fatal(err)
			}
			recs, err := ReadResults("../docs/studies/"+name+"/results.jsonl", s)
			if err != nil {
				t.Fatalf("the committed results no longer fit the study: %v", err)
			}
			if index < 0 {
				index = cheapestPoint(recs)
			}
			var want *Record
			for i := range recs {
				if recs[i].Index == index {
					want = &recs[i]
				}
			}
			if want == nil || want.Status != StatusOK {
				t.Fatalf("docs/studies/%s: no point %d with status ok", name, index)
			}
			got := s.RunPoint(s.Points[index])
			if got.Status != StatusOK {
				t.Fatalf("point %d: %s: %s", index, got.Status, got.Error)
			}
			for k, v := range want.Metrics {
				if strings.Contains(k, "wall") {
					continue
				}
				if !bytes.Equal(v, got.Metrics[k]) {
					t.Errorf("point %d: %s is %s where docs/studies/%s/results.jsonl has %s: the build no longer gives the study's results (regenerate it: the command in studies/long/%s.yaml)",
						index, k, got.Metrics[k], name, v, name)
				}
			}
		})
	}
}

// hasKey reports whether m has key k.
func hasKey(m map[string]int, k string) bool { _, ok := m[k]; return ok }

// cheapestPoint is the index of the ok record of least recorded wall time
// (a metric whose name has "wall"), or of the first ok record where none
// records one.
func cheapestPoint(recs []Record) int {
	best, bestWall := -1, math.Inf(1)
	for _, r := range recs {
		if r.Status != StatusOK {
			continue
		}
		if best < 0 {
			best = r.Index
		}
		for k, v := range r.Metrics {
			var w float64
			if strings.Contains(k, "wall") && json.Unmarshal(v, &w) == nil && w < bestWall {
				best, bestWall = r.Index, w
			}
		}
	}
	return best
}
