package programs

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/davinci-sim/davinci-sim/badinput"
	"github.com/davinci-sim/davinci-sim/report"
	"github.com/davinci-sim/davinci-sim/sim"
)

// timeOneAfterTheOther is timeCandidates' outcome as its doc states it:
// the candidates timed one after the other, each pruned where its bound is
// at or above the fastest simulated before it.
func timeOneAfterTheOther(ok []*autoCandidate, seconds []float64, fails []error) (chosen int, runs int) {
	chosen = -1
	for i, c := range ok {
		if chosen >= 0 && c.bound >= ok[chosen].seconds {
			c.status = "pruned"
			continue
		}
		runs++
		if fails[i] != nil {
			c.status = "unsupported"
			continue
		}
		c.seconds, c.status = seconds[i], "simulated"
		if chosen < 0 || c.seconds < ok[chosen].seconds {
			chosen = i
		}
	}
	return chosen, runs
}

// TestTimeCandidatesAsOneAfterTheOther: scheme auto's timing runs made at
// once (timeCandidates) choose, prune and count as timing them one after
// the other does, on 1–4 processors, the runs finishing in any order; the
// runs started ahead that turn out pruned are stopped, not waited out.
func TestTimeCandidatesAsOneAfterTheOther(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	rng := rand.New(rand.NewPCG(1, 2))
	stoppedAhead := 0
	for trial := range 300 {
		n := 1 + rng.IntN(8)
		bounds, seconds, fails := make([]float64, n), make([]float64, n), make([]error, n)
		for i := range n {
			bounds[i] = float64(i+1) + rng.Float64() // in increasing order, as auto sorts them
			// (Some below their bounds, which real runs are not: then a
			// run's result decides more, and a choice that used a run
			// started ahead before its turn would show.)
			seconds[i] = bounds[i] * (0.2 + 3*rng.Float64())
			if rng.IntN(6) == 0 {
				fails[i] = badinput.Wrap(errors.New("this preset does not fit the tiling"))
			}
		}
		mk := func() []*autoCandidate {
			ok := make([]*autoCandidate, n)
			for i := range ok {
				ok[i] = &autoCandidate{name: fmt.Sprint("c", i), bound: bounds[i], status: "accurate"}
			}
			return ok
		}
		want := mk()
		wantChosen, wantRuns := timeOneAfterTheOther(want, seconds, fails)
		procs := 1 + trial%4
		runtime.GOMAXPROCS(procs)
		// A sweep on every processor: one run at a time.
		alone := trial%5 == 4
		if alone {
			SetRunsAtOnce(1)
		}
		got := mk()
		index := map[*autoCandidate]int{}
		for i, c := range got {
			index[c] = i
		}
		var hooks RunHooks
		o := Options{run: &hooks}
		var mu sync.Mutex
		stopped := map[int]bool{}
		chosen, run, err := o.timeCandidates(&File{Path: "p.yaml"}, got, 0, func(c *autoCandidate, h RunHooks) (*Result, error) {
			i := index[c]
			// Later candidates finish sooner at times: the order the runs
			// end in must not matter.
			select {
			case <-time.After(time.Duration(rng2(i, trial)) * time.Millisecond):
			case <-h.Context.Done():
				mu.Lock()
				stopped[i] = true
				mu.Unlock()
				return nil, context.Cause(h.Context)
			}
			if fails[i] != nil {
				return nil, fails[i]
			}
			return &Result{Report: &report.Report{Time: report.TimeReport{Seconds: seconds[i]}}}, nil
		})
		SetRunsAtOnce(0)
		if err != nil {
			t.Fatal(err)
		}
		for i := range n {
			if alone && stopped[i] {
				t.Fatalf("trial %d: SetRunsAtOnce(1), yet candidate %d was started ahead", trial, i)
			}
			if got[i].status != want[i].status || got[i].seconds != want[i].seconds {
				t.Fatalf("trial %d (%d processors), candidate %d: %s %g s, one after the other %s %g s",
					trial, procs, i, got[i].status, got[i].seconds, want[i].status, want[i].seconds)
			}
			if stopped[i] && want[i].status != "pruned" {
				t.Fatalf("trial %d: candidate %d was stopped, but it is %s", trial, i, want[i].status)
			}
			if stopped[i] {
				stoppedAhead++
			}
		}
		switch {
		case wantChosen < 0 && chosen != nil:
			t.Fatalf("trial %d: chose %s where none ran", trial, chosen.name)
		case wantChosen >= 0 && (chosen != got[wantChosen] || run.Report.Time.Seconds != seconds[wantChosen]):
			t.Fatalf("trial %d: chose %v, one after the other c%d", trial, chosen, wantChosen)
		}
		if hooks.runsBefore != wantRuns {
			t.Fatalf("trial %d: %d runs counted, one after the other makes %d", trial, hooks.runsBefore, wantRuns)
		}
	}
	if stoppedAhead == 0 {
		t.Fatal("no run started ahead was stopped: the test does not reach that path")
	}
}

// rng2 is a run's duration in milliseconds (0–3), fixed by run and trial.
func rng2(i, trial int) int { return (i*7 + trial*13) % 4 }

// TestTimeCandidatesErrors: a run's error that is not bad input ends the
// choice with it (the runs started ahead stopped), as a panic does, raised
// on the building goroutine; and the build's progress line shows only the
// run waited for, one line at a time.
func TestTimeCandidatesErrors(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	mk := func() []*autoCandidate {
		return []*autoCandidate{{name: "a", bound: 1}, {name: "b", bound: 2}, {name: "c", bound: 3}}
	}
	var ahead atomic.Int32
	fail := func(bad string, panics bool) func(c *autoCandidate, h RunHooks) (*Result, error) {
		return func(c *autoCandidate, h RunHooks) (*Result, error) {
			if c.name != bad {
				<-h.Context.Done() // held until stopped
				ahead.Add(1)
				return nil, context.Cause(h.Context)
			}
			if panics {
				panic("simulator bug")
			}
			return nil, errors.New("simulation failed")
		}
	}
	_, _, err := Options{}.timeCandidates(&File{Path: "p.yaml"}, mk(), 0, fail("a", false))
	if err == nil || badinput.Is(err) || err.Error() != "p.yaml: scheme auto: timing a: simulation failed" {
		t.Fatalf("got %v", err)
	}
	if ahead.Load() != 2 {
		t.Fatalf("%d runs ahead stopped, want 2", ahead.Load())
	}
	func() {
		defer func() {
			if r := recover(); r == nil {
				t.Fatal("the run's panic did not reach the caller")
			}
		}()
		Options{}.timeCandidates(&File{Path: "p.yaml"}, mk(), 0, fail("a", true))
	}()

	// Progress: each run on a meter of its own, the build's following the
	// one waited for; its stage names it.
	hooks := RunHooks{Meter: new(WorkMeter), ProgressEvery: 1}
	var lines []string
	var drawing atomic.Int32
	hooks.Progress = func(sim.Time, uint64) {
		if drawing.Add(1) != 1 {
			t.Error("two progress lines drawn at once")
		}
		lines = append(lines, hooks.Meter.Stage())
		drawing.Add(-1)
	}
	o := Options{run: &hooks}
	_, _, err = o.timeCandidates(&File{Path: "p.yaml"}, mk(), 0, func(c *autoCandidate, h RunHooks) (*Result, error) {
		for range 50 {
			h.Meter.begin(h.stage)
			h.Progress(0, 0)
		}
		return &Result{Report: &report.Report{Time: report.TimeReport{Seconds: 10}}}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) == 0 {
		t.Fatal("no progress line")
	}
	for _, l := range lines {
		if l == "" {
			t.Fatal("a line without its run's stage")
		}
	}
	if hooks.Meter.read() != hooks.Meter {
		t.Fatal("the build's meter still stands in for a timing run")
	}
}

// A target no candidate reaches takes the most accurate — the fastest of
// those as accurate (a scheme with a split kernel and fused: the same
// numerics), not the first listed, its twin then "inaccurate" at the same
// bits.
func TestAutoMostAccurateFastest(t *testing.T) {
	res, err := runEmulated(t, "a100", "program.scheme=auto", "program.target_bits=24.5", "program.m=256", "program.n=256", "program.k=256", "program.numerics=off")
	if err != nil {
		t.Fatal(err)
	}
	auto := res.Report.Program["auto"].(map[string]any)
	var best float64
	statuses := map[string]float64{}
	for _, c := range auto["candidates"].([]map[string]any) {
		bits, _ := c["bits"].(float64)
		best = max(best, bits)
		statuses[fmt.Sprint(c["status"])+" "+fmt.Sprint(c["scheme"])] = bits
	}
	n := 0
	for k, bits := range statuses {
		if bits == best {
			n++
			if strings.HasPrefix(k, "inaccurate") {
				t.Errorf("%s at the best bits (%.2f): not timed", k, bits)
			}
		}
	}
	if n < 2 {
		t.Errorf("%d candidates at the best bits (%v), want a scheme and its fused twin", n, statuses)
	}
}

// The auto note says why a candidate could not run (unsupported, out of
// range) as the report's candidates do, and nothing more for the others;
// it groups them by status, most bits first, and names a scheme once
// where both its splits fared alike.
func TestAutoSummaryReasons(t *testing.T) {
	auto := map[string]any{"chosen": "markidis (split: fused)", "why": "the fastest candidate with at least 19.2 bits",
		"candidates": []map[string]any{
			{"scheme": "ape-fp32t", "status": "unsupported", "reason": "no XF32 matrix cores"},
			{"scheme": "ape-fp32t", "split": "fused", "status": "unsupported", "reason": "no XF32 matrix cores"},
			{"scheme": "hgemm", "status": "out-of-range", "reason": "inputs.a: |x| up to 70000, beyond FP16"},
			{"scheme": "hgemm", "split": "fused", "status": "out-of-range", "reason": "inputs.a: |x| up to 70000, beyond FP16"},
			{"scheme": "le-gemm", "status": "inaccurate", "bits": 18.4},
			{"scheme": "le-gemm", "split": "fused", "status": "inaccurate", "bits": 18.4},
			{"scheme": "ape-fp32f", "status": "inaccurate", "bits": 19.1},
			{"scheme": "ape-fp32f", "split": "fused", "status": "inaccurate", "bits": 19.1},
			{"scheme": "markidis", "status": "simulated", "bits": 19.9, "seconds": 2e-4},
			{"scheme": "markidis", "split": "fused", "status": "chosen", "bits": 19.9, "seconds": 1e-4},
			{"scheme": "ootomo", "status": "pruned", "reason": "its lower bound is above the chosen", "bits": 22.1},
			{"scheme": "ootomo", "split": "fused", "status": "pruned", "reason": "its lower bound is above the chosen", "bits": 22.1},
			{"scheme": "native", "status": "pruned", "bits": 20.7, "bits_from": "predicted: FP32 SGEMM's on the sample"},
		}}
	got := autoSummary(auto)
	want := "scheme auto chose markidis (split: fused), the fastest candidate with at least 19.2 bits (19.9 bits, 0.0001 s); " +
		"simulated: markidis (19.9 bits, 0.0002 s); " +
		"pruned: ootomo (both splits; 22.1 bits), native (20.7 bits, predicted); " +
		"inaccurate, both splits: ape-fp32f (19.1 bits), le-gemm (18.4 bits); " +
		"out-of-range, both splits: hgemm (inputs.a: |x| up to 70000, beyond FP16); " +
		"unsupported, both splits: ape-fp32t (no XF32 matrix cores)"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
