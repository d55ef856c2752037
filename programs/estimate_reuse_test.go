package programs

import (
	"context"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestRunEstimateReusesBuildDecode checks that the estimate of a run's
// host memory, which takes the parameters its build decoded (File.Decode:
// noteDecoded) instead of decoding them again, holds what a decode of the
// file parsed again gives — after the build changed its own (defaults,
// the run's numerics) — and the same figures: its data, its whole
// estimate and its chip's span, for every example on one chip, with the
// file's numerics and each of --numerics full, sampled and off, and with
// a size set.
func TestRunEstimateReusesBuildDecode(t *testing.T) {
	paths, err := filepath.Glob("examples/*.yaml")
	if err != nil || len(paths) == 0 {
		t.Fatal(paths, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	reused := 0
	for _, path := range paths {
		for _, numerics := range []string{"", NumericsFull, NumericsSampled, NumericsOff} {
			for _, sets := range [][]string{nil, {"program.m=160"}} {
				f, err := ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				if f.Kind.Params == nil || ClusterMachine(f, Options{}) != "" {
					continue
				}
				if _, has := f.Kind.Params.FieldByName("M"); len(sets) > 0 && !has {
					continue
				}
				if numerics != "" && f.Kind.NumericsModes != nil && !strings.Contains(strings.Join(f.Kind.NumericsModes, " "), numerics) {
					continue
				}
				name := filepath.Base(path) + " numerics " + numerics + " " + strings.Join(sets, " ")
				opts := Options{Numerics: numerics, Overrides: mustSets(t, sets...)}
				fresh, err := f.Again() // (parsed again before the run writes its overrides into f)
				if err != nil {
					t.Fatal(err)
				}
				m, err := MachineFor(f, opts)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				opts.machine = m
				opts.est = newRunEstimates(f, opts)
				opts.run = &RunHooks{Context: ctx}
				if _, err := f.Kind.BuildFor(f, m, opts); err != nil && opts.est.decoded == nil && !opts.est.parDone {
					continue // (refused before or in its decode)
				}
				run := opts.est
				got, gotErr := run.params()
				if run.reused {
					reused++
				}
				want, wantErr := decodedParams(fresh, opts)
				if (gotErr != nil) != (wantErr != nil) {
					t.Errorf("%s: params: %v, decoded again: %v", name, gotErr, wantErr)
					continue
				}
				if wantErr != nil {
					continue
				}
				if v := numericsField(want); v.IsValid() && numerics != "" {
					v.SetString(numerics)
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%s: the run's estimate holds\n%+v\ndecoded again:\n%+v", name, got, want)
				}
				alone := newRunEstimates(fresh, Options{Numerics: numerics, Overrides: opts.Overrides})
				for _, c := range []struct {
					what      string
					got, want func() (hostEstimate, bool)
				}{{"data", run.dataEstimate, alone.dataEstimate}, {"whole", run.whole, alone.whole}} {
					g, gok := c.got()
					w, wok := c.want()
					if g != w || gok != wok {
						t.Errorf("%s: %s estimate %+v %v, decoded again %+v %v", name, c.what, g, gok, w, wok)
					}
				}
				if g, w := gmSpanOf(f, opts, m), gmSpanOf(fresh, Options{Numerics: numerics, Overrides: opts.Overrides}, m); g != w {
					t.Errorf("%s: span %d, decoded again %d", name, g, w)
				}
			}
		}
	}
	t.Logf("%d runs' estimates took their build's decode", reused)
	if reused < 20 {
		t.Errorf("%d runs' estimates took their build's decode, want most examples' (noteDecoded not reached?)", reused)
	}
}

// TestRunEstimateOnePerRun checks that a run's checks share its one
// estimate (Options.est: the bound hostFor gives holds it) and that
// options of another run — a build's own run with other overrides — get
// their own.
func TestRunEstimateOnePerRun(t *testing.T) {
	f, err := ReadFile("examples/hgemm.yaml")
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{Overrides: mustSets(t, "program.m=64")}
	opts.est = newRunEstimates(f, opts)
	if h := opts.hostFor(f); h.run != opts.est {
		t.Errorf("hostFor: a bound with another estimate than the run's")
	}
	if a, b := opts.hostFor(f), opts.hostFor(f); a != b {
		t.Errorf("hostFor: two bounds in one run: %+v, %+v", a, b)
	}
	other := opts
	other.Overrides = mustSets(t, "program.m=128")
	if h := other.hostFor(f); h.run == opts.est {
		t.Errorf("hostFor: other overrides took the run's estimate")
	}
	g, _ := f.Again()
	if h := opts.hostFor(g); h.run == opts.est {
		t.Errorf("hostFor: another file took the run's estimate")
	}
	a, _ := opts.hostFor(f).run.dataEstimate()
	b, _ := other.hostFor(f).run.dataEstimate()
	if a.data >= b.data {
		t.Errorf("data of m 64 %v, of m 128 %v: want more", a.data, b.data)
	}
}
