package sweep

import (
	"strings"
	"testing"

	"github.com/davinci-sim/davinci-sim/badinput"
)

// A metric with a typo is refused under its own key and line, not under
// the key of a plot that names it spelt right: the plot's reference is
// "not one of the metrics" only because of the typo (a review found
// `s1.yaml:12: key "plot[0].y": "flops.tflops" is not one of the metrics
// (flops.tflop, time.seconds)` where the study without its plot said
// `s1.yaml:10: key "metrics[0]": "flops.tflop": flops has no key "tflop"`).
// A plot naming none of the metrics, where every metric is one, is still
// the plot's error.
func TestMetricTypoBeforePlot(t *testing.T) {
	head := "program: p.yaml\nvary: {program.m: [256, 512]}\n"
	typo := `s.yaml:3: key "metrics[0]": "flops.tflop": flops has no key "tflop" (keys: `
	for _, c := range []struct{ name, study, want string }{
		{"y", head + "metrics: [flops.tflop, time.seconds]\nplot:\n  - {name: p, x: program.m, y: flops.tflops}\n", typo},
		{"y, a block list of metrics", head + "metrics:\n  - time.seconds\n  - flops.tflop\nplot: {x: program.m, y: [time.seconds, flops.tflops]}\n",
			`s.yaml:5: key "metrics[1]": "flops.tflop": flops has no key "tflop" (keys: `},
		{"x", head + "metrics: [flops.tflop, time.seconds]\nplot: {x: flops.tflops, y: time.seconds}\n", typo},
		{"several x", head + "metrics: [flops.tflop, time.seconds]\nplot: {x: [time.seconds, flops.tflops], y: time.seconds}\n", typo},
		{"no typo: the plot's", head + "metrics: [flops.tflops, time.seconds]\nplot: {x: program.m, y: error.bits}\n",
			`s.yaml:4: key "plot.y": "error.bits" is not one of the metrics (flops.tflops, time.seconds)`},
	} {
		_, err := ParseStudy("s.yaml", "d", []byte(c.study))
		if err == nil || !badinput.Is(err) || !strings.HasPrefix(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %v,\nwant one line starting %q", c.name, err, c.want)
		}
	}
	// The study without the plot: the same refusal, from Check.
	s := writeStudy(t, "program: prog.yaml\nvary: {program.m: [256, 512]}\nmetrics: [flops.tflop, time.seconds]\n")
	if err := s.Check(); err == nil || !strings.Contains(err.Error(), `study.yaml:3: key "metrics[0]": "flops.tflop": flops has no key "tflop" (keys: `) {
		t.Errorf("Check: %v", err)
	}
}
