package sweep

import (
	"bytes"
	"strings"
	"testing"
)

// longSpots are points of the long studies (studies/long: minutes to hours
// each, which .ci/studies check does not run) quick to run, by study:
// each the study's cheapest point but for a few of its parameters, chosen
// on 2026-12-06 by running every long study's (the lu and cluster ones
// left out take 15 s to several minutes a point; every one of them, run
// then, equalled its committed record too).
var longSpots = map[string]int{
	"ape-speedup":                     0,
	"cluster-node-nb-nfusion-sampled": 16,
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
	"ozaki-slices":                    0,
	"ozaki-vs-dgemm":                  9,
}

// TestLongStudySpots re-runs one point of each long study and requires its
// metrics to equal the committed record's byte for byte (wall times
// aside): the runs are deterministic, so a difference means the build no
// longer gives the study's committed results — regenerate it with the
// command in its header, and the docs that quote it (the doc-table tests
// in cmd/davinci-sim hold those to the CSVs). The short studies are held
// whole by .ci/studies check.
func TestLongStudySpots(t *testing.T) {
	if testing.Short() {
		t.Skip("re-runs a point of each of 14 long studies (~12 s)")
	}
	for name, index := range longSpots {
		t.Run(name, func(t *testing.T) {
			s, err := ReadStudy("../studies/long/" + name + ".yaml")
			if err != nil {
				t.Fatal(err)
			}
			recs, err := ReadResults("../docs/studies/"+name+"/results.jsonl", s)
			if err != nil {
				t.Fatalf("the committed results no longer fit the study: %v", err)
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
