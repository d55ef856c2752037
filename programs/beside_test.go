package programs

import (
	"errors"
	"math"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/davinci-sim/davinci-sim/report"
)

// executeExample runs example file with sets through Execute.
func executeExample(t *testing.T, file string, sets ...string) *report.Report {
	t.Helper()
	f, err := ReadFile("examples/" + file)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Execute(f, Options{Overrides: mustSets(t, sets...)}, RunHooks{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Failure != nil {
		t.Fatal(res.Failure)
	}
	return res.Report
}

// sameError reports whether two error reports agree to rel (the FP64
// references of full and sampled runs are summed in different orders).
func sameError(a, b report.ErrorReport, rel float64) bool {
	near := func(x, y float64) bool {
		return x == y || math.Abs(x-y) <= rel*math.Max(math.Abs(x), math.Abs(y))
	}
	return a.Elements == b.Elements && near(a.RelFro, b.RelFro) && near(a.MaxRel, b.MaxRel) && near(a.Bits, b.Bits)
}

// A sampled run whose sample is every tile reports the full run's error
// and baselines: the tiles computed beside the simulation are the
// simulated ones, and their reference and baselines the full run's.
func TestSampledEveryTileMatchesFull(t *testing.T) {
	for _, c := range []struct {
		file string
		sets []string
	}{
		{"sgemm-cube.yaml", []string{"program.m=200", "program.n=150", "program.k=300"}},
		{"a100-hgemm.yaml", []string{"program.m=200", "program.n=300", "program.k=100"}},
		{"mi210-hgemm.yaml", []string{"program.m=300", "program.n=200", "program.k=100"}},
		{"a100-tf32gemm.yaml", []string{"program.m=130", "program.n=140", "program.k=40"}},
	} {
		full := executeExample(t, c.file, append(c.sets, "program.numerics=full")...)
		smp := executeExample(t, c.file, append(c.sets, "program.numerics=sampled", "program.sample_tiles=1000")...)
		if full.Error == nil || smp.Error == nil || !smp.Error.Sampled {
			t.Fatalf("%s: errors %+v, %+v", c.file, full.Error, smp.Error)
		}
		if !sameError(*full.Error, *smp.Error, 1e-9) {
			t.Errorf("%s: sampled error %+v, full %+v", c.file, *smp.Error, *full.Error)
		}
		if len(full.Baselines) != len(smp.Baselines) {
			t.Fatalf("%s: baselines %v, %v", c.file, full.Baselines, smp.Baselines)
		}
		for name, b := range full.Baselines {
			if !sameError(b, smp.Baselines[name], 1e-9) {
				t.Errorf("%s: baseline %s sampled %+v, full %+v", c.file, name, smp.Baselines[name], b)
			}
		}
	}
}

// The sampled tiles computed beside the simulation (Execute) give the
// report computed after it (a job finished without Execute), bit for bit.
func TestSampledBesideEqualsAfter(t *testing.T) {
	const yaml = "kind: sgemm-cube\nm: 300\nn: 260\nk: 200\nnumerics: sampled\nsample_tiles: 5\n"
	_, after, _ := runGEMM(t, yaml)
	f, err := Parse("test.yaml", ".", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	res, err := Execute(f, Options{}, RunHooks{})
	if err != nil {
		t.Fatal(err)
	}
	if *res.Report.Error != *after.Error {
		t.Errorf("beside: %+v, after: %+v", *res.Report.Error, *after.Error)
	}
	for name, b := range after.Baselines {
		if res.Report.Baselines[name] != b {
			t.Errorf("baseline %s beside: %+v, after: %+v", name, res.Report.Baselines[name], b)
		}
	}
}

// eachTile runs every index once, returns the lowest index's error, and
// stops calling f once stop is set.
func TestEachTile(t *testing.T) {
	var calls [100]atomic.Int32
	e3, e7 := errors.New("3"), errors.New("7")
	err := eachTile(100, nil, func(i int) error {
		calls[i].Add(1)
		switch i {
		case 7:
			return e7
		case 3:
			return e3
		}
		return nil
	})
	if err != e3 {
		t.Errorf("error %v, want the lowest index's", err)
	}
	for i := range calls {
		if calls[i].Load() != 1 {
			t.Fatalf("index %d ran %d times", i, calls[i].Load())
		}
	}
	var stop atomic.Bool
	stop.Store(true)
	ran := false
	if err := eachTile(10, &stop, func(int) error { ran = true; return nil }); err != errStopped || ran {
		t.Errorf("stopped: error %v, ran %v", err, ran)
	}
}

// A panic in the work of eachTile or goBeside comes back on the goroutine
// that waits for it (where a sweep's point recovers it), with the work's
// own value, after the other tiles ran.
func TestWorkersPanicOnTheCaller(t *testing.T) {
	catch := func(f func()) (v any) {
		defer func() { v = recover() }()
		f()
		return nil
	}
	var ran atomic.Int64
	v := catch(func() {
		_ = eachTile(64, nil, func(i int) error {
			ran.Add(1)
			if i == 7 {
				panic("tile 7")
			}
			return nil
		})
	})
	if s, _ := v.(string); !strings.HasPrefix(s, "tile 7\n") || ran.Load() != 64 {
		t.Errorf("eachTile: recovered %v after %d tiles", v, ran.Load())
	}
	b := goBeside(func() error { panic("beside") })
	if s, _ := catch(func() { _ = b.wait() }).(string); !strings.HasPrefix(s, "beside\n") {
		t.Errorf("goBeside: recovered %q", s)
	}
}
