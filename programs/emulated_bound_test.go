package programs

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"github.com/davinci-sim/davinci-sim/fp"
	"github.com/davinci-sim/davinci-sim/machines"
)

// pieceBound bounds every piece the split makes (FP16 and BF16 pieces, every
// rounding, scales up to 40, inputs from FP32's subnormals up), including
// where an earlier piece is subnormal or zero: there the residual is up to
// the format's subnormal spacing, not p bits below the input (FP16 pieces
// of |x| < 2^-14). Before, the bound assumed p bits always, and Ootomo's
// split with its residual scaled by 2^41 was accepted for inputs below
// 2^-20: its second piece overflowed FP16, C non-finite, exit 0.
func TestPieceBoundHolds(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	rounds := []fp.Rounding{fp.RNE, fp.RNA, fp.RZ, fp.RU, fp.RD, fp.RO}
	tight := 0 // pieces at their bound: the bound is not loose by a bit
	for _, f := range []fp.Format{fp.FP16, fp.BF16} {
		_, top := math.Frexp(f.MaxFinite())
		for _, s1 := range []int{0, 8, 11, 20, 30, 40} {
			for _, s2 := range []int{0, 11, 22} {
				for _, r0 := range rounds {
					r1 := rounds[rng.IntN(len(rounds))]
					sp := &schemePlan{format: f, scales: []int{0, s1, s2}, rounds: []fp.Options{{Round: r0}, {Round: r1}, {Round: fp.RNE}}}
					out := make([]uint32, 3)
					for range 3000 {
						x := float32(math.Ldexp(rng.Float64()+0.5, rng.IntN(top-1+150)-150)) // 2^-151 ≤ |x| < 2^(top-1)
						if rng.IntN(2) == 0 {
							x = -x
						}
						if x == 0 || float64(x) >= f.MaxFinite()/2 {
							continue
						}
						_, e := math.Frexp(float64(x)) // |x| < 2^e
						sp.split(x, out)
						for i := 1; i < 3; i++ {
							b := math.Ldexp(1, sp.pieceBound(i, e))
							if b > f.MaxFinite() {
								break // (checkRange refuses the split: piece i may overflow, and its residual is then no bound)
							}
							v := math.Abs(fp.ToFloat64(out[i], f))
							if !(v <= b) {
								t.Fatalf("%v pieces, scales %v, roundings %v %v: x = %g (2^%d): piece %d = %g > 2^%d", f, sp.scales, r0, r1, x, e, i, v, sp.pieceBound(i, e))
							}
							if v > b/2 {
								tight++
							}
						}
					}
				}
			}
		}
	}
	if tight == 0 {
		t.Errorf("no piece above half its bound: the bound is loose")
	}
}

// A scale that a subnormal piece's residual takes past the format is
// refused for generated inputs of any range, naming the scale; one below
// it runs, every element of C finite.
func TestSubnormalResidualScaleRefused(t *testing.T) {
	base := []string{"program.scheme=ootomo", "program.m=64", "program.n=64", "program.k=64", "program.inputs.offset_exponent=-20"}
	_, err := runEmulated(t, "a100", append(base, "program.numerics=off", "program.scheme.pieces[1].scale=41")...)
	wantBadInputLine(t, err, `key "scheme.pieces[1].scale": piece 1 of inputs in (−2^-20, 2^-20) reaches 2^16 with scale 2^41, beyond FP16's largest finite value 65504: where an earlier piece is an FP16 subnormal or zero, its residual is up to 2^-25`)
	// Inputs below the subnormal residual (|x| < 2^-39: the residual is at
	// most the input under RNE) do not overflow at 2^41, and run.
	if _, err := runEmulated(t, "a100", "program.scheme=ootomo", "program.m=64", "program.n=64", "program.k=64", "program.inputs.offset_exponent=-40", "program.numerics=off", "program.scheme.pieces[1].scale=41"); err != nil {
		t.Errorf("inputs below 2^-39 at scale 41: %v", err)
	}
	res, err := runEmulated(t, "a100", append(base, "program.numerics=full", "program.scheme.pieces[1].scale=40")...)
	if err != nil {
		t.Fatal(err)
	}
	if e := res.Report.Error; e == nil || e.NonFinite != 0 || !(e.Bits > 9) {
		t.Errorf("scale 40: error %+v", e)
	}
}

// Scheme auto whose every candidate is refused for the same setting names
// that setting's key and constraint (it named only "scheme": "no candidate
// runs … with these settings").
func TestEmulatedAutoNamesTheRefusal(t *testing.T) {
	_, err := runEmulated(t, "a100", "program.scheme=auto", "program.numerics=off", "program.m=256", "program.n=256", "program.k=256",
		"program.tiling.bm=256", "program.tiling.bn=128", "program.tiling.bk=64")
	wantBadInputLine(t, err, `key "tiling": 256×128×64 tile`)
	if err != nil && !strings.Contains(err.Error(), "(scheme auto: no candidate runs on machine a100") {
		t.Errorf("%v: does not say it is scheme auto's", err)
	}
}

// A DaVinci tile given in part says so: the default tile is all three
// keys' (it read "must be a positive multiple of 16 …; got 0" for a key
// the program never gave).
func TestPartialTilingSaysSo(t *testing.T) {
	_, err := runEmulated(t, "ascend-910a", "program.scheme=ape-int16", "program.numerics=off", "program.m=256", "program.n=256", "program.k=256", "program.tiling.bm=128")
	wantBadInputLine(t, err, `key "tiling.bk": is 0 (or not given): give tiling.bm, tiling.bk and tiling.bn together`)
}

// Scheme auto's sample runs run at once only as many as the run's bound
// on its host memory holds beside the run (each checks its own estimate
// against the whole bound: two at once under 1 GiB had peaked at
// 1.35 GB), and a bound that holds not even one refuses the run before
// its sample is made, naming the key.
func TestEmulatedAutoSamplesWithinTheBound(t *testing.T) {
	f, err := ReadFile("examples/a100-emulated-gemm.yaml")
	if err != nil {
		t.Fatal(err)
	}
	sets := mustSets(t, "program.scheme=auto", "program.m=64", "program.n=64", "program.k=262144")
	_, err = Execute(f, Options{Overrides: sets, Numerics: NumericsOff, MaxHostBytes: 300 << 20}, RunHooks{})
	wantBadInputLine(t, err, `key "scheme": auto measures each candidate on a 64×262144×64 sample with sampled numerics`)
	if err == nil || !strings.Contains(err.Error(), "name a scheme, or lower k") || strings.Contains(err.Error(), "measuring") {
		t.Fatalf("%v: want the run's own refusal, before any sample run", err)
	}
	need := quotedMiB(t, err) // its figure: one sample run beside the run
	workers := func(bound int64) (int, error) {
		g, o, p := autoParams(t, f, sets, bound)
		return o.autoSampleWorkers(g, p, fp32SchemeNames(), 64, 64) // (the A100 runs every one)
	}
	if n, err := workers(need << 20); err != nil || n != 1 {
		t.Errorf("bound %d MiB (the figure quoted): %d at once, %v; want 1", need, n, err)
	}
	if n, err := workers(need<<20 - 2<<20); err == nil {
		t.Errorf("bound %d MiB: %d at once, want a refusal", need-2, n)
	}
	if n, err := workers(64 << 30); err != nil || n != min(len(fp32SchemeNames()), runtime.GOMAXPROCS(0)) {
		t.Errorf("bound 64 GiB: %d at once, %v; want a run a processor", n, err)
	}
}

// runsAtOnce counts the largest runs first, beside what is held and, where a
// finished run is kept, the largest besides.
func TestRunsAtOnce(t *testing.T) {
	needs := []float64{100, 80, 50}
	for _, c := range []struct {
		bound float64
		most  int
		kept  bool
		want  int
	}{
		{149, 4, false, 0}, {150, 4, false, 1}, {229, 4, false, 1}, {230, 4, false, 2}, {280, 4, false, 3},
		{280, 2, false, 2}, {249, 4, true, 0}, {250, 4, true, 1}, {330, 4, true, 2},
	} {
		if got := runsAtOnce(c.bound, 50, needs, c.most, c.kept); got != c.want {
			t.Errorf("bound %g, most %d, kept %v: %d, want %d", c.bound, c.most, c.kept, got, c.want)
		}
	}
	if got := runsAtOnce(1, 50, nil, 3, true); got != 3 {
		t.Errorf("no estimates: %d, want 3 (most)", got)
	}
}

// Scheme auto's timing runs (full size, timing only) run at once, and the
// fastest is kept for the report, only as far as the run's bound holds
// them beside the run: under a bound that holds one run, one at a time
// and none kept (the chosen one is simulated again).
func TestEmulatedAutoTimingWithinTheBound(t *testing.T) {
	f, err := ReadFile("examples/a100-emulated-gemm.yaml")
	if err != nil {
		t.Fatal(err)
	}
	sets := mustSets(t, "program.scheme=auto", "program.m=1024", "program.n=1024", "program.k=1024")
	timing := []string{"ootomo", "markidis"}
	workers := func(bound int64) (int, bool, float64, []float64) {
		g, o, p := autoParams(t, f, sets, bound)
		n, keep, err := o.autoTimingWorkers(g, p, timing, 64, 64)
		if err != nil {
			t.Fatal(err)
		}
		own, needs, err := o.autoHeld(g, p, timing, false, 64, 64)
		if err != nil || len(needs) != 2 || needs[0] <= 0 {
			t.Fatalf("estimates %v, %v", needs, err)
		}
		return n, keep, own, needs
	}
	_, _, own, needs := workers(64 << 30)
	one := int64(math.Ceil(own + needs[0]))
	if n, keep, _, _ := workers(one); n != 1 || keep {
		t.Errorf("bound %d B (one run): %d at once, keep %v; want 1, not kept", one, n, keep)
	}
	if n, keep, _, _ := workers(int64(math.Ceil(own + 2*needs[0]))); n != 1 || !keep {
		t.Errorf("bound of two runs: %d at once, keep %v; want 1, kept", n, keep)
	}
	if n, keep, _, _ := workers(64 << 30); n != min(2, runtime.GOMAXPROCS(0), maxTimedAtOnce) || !keep {
		t.Errorf("bound 64 GiB: %d at once, keep %v; want a processor each, kept", n, keep)
	}
}

// autoParams returns a scheme auto run's file (f read again), options
// (sets, timing only, bound bytes of host memory) and GEMM parameters, as
// its build has them when it estimates its candidates' runs.
func autoParams(t *testing.T, f *File, sets []machines.Override, bound int64) (*File, Options, *GEMMParams) {
	t.Helper()
	g, err := f.Again()
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Overrides: sets, Numerics: NumericsOff, MaxHostBytes: bound}
	var ep EmulatedParams
	if err := g.Decode(&ep, o); err != nil {
		t.Fatal(err)
	}
	p := ep.GEMMParams
	o.applyGEMM(g, &p)
	return g, o, &p
}

// HostBytes — a sweep's estimate of a point, by which it runs points at
// once — holds scheme auto's sample runs: at least the figure its build
// refuses a bound below (one sample run beside what it holds), where its
// own run's estimate is far less; a named scheme's is its run's.
func TestHostBytesHoldsAutoSamples(t *testing.T) {
	f, err := ReadFile("examples/a100-emulated-gemm.yaml")
	if err != nil {
		t.Fatal(err)
	}
	sets := mustSets(t, "program.scheme=auto", "program.m=64", "program.n=64", "program.k=262144")
	_, err = Execute(f, Options{Overrides: sets, Numerics: NumericsOff, MaxHostBytes: 300 << 20}, RunHooks{})
	need := quotedMiB(t, err)
	g, err := f.Again()
	if err != nil {
		t.Fatal(err)
	}
	got, ok := HostBytes(g, Options{Overrides: sets, Numerics: NumericsOff})
	if own, _ := runEstimate(g, Options{Overrides: sets, Numerics: NumericsOff}); !ok || got < (need-1)<<20 || float64(got) < 2*own.total() {
		t.Errorf("HostBytes %d MiB (ok %v), want at least the build's %d MiB, above its run's %.0f MiB", got>>20, ok, need, own.total()/(1<<20))
	}
	named := mustSets(t, "program.scheme=ootomo", "program.m=64", "program.n=64", "program.k=262144")
	h, ok := HostBytes(g, Options{Overrides: named, Numerics: NumericsOff})
	e, _ := runEstimate(g, Options{Overrides: named, Numerics: NumericsOff})
	if !ok || h != int64(e.total()) {
		t.Errorf("ootomo: HostBytes %d, want its run's %d", h, int64(e.total()))
	}
}

// quotedMiB returns the figure a host-memory refusal quotes ("needs about
// 916MiB"), in MiB.
func quotedMiB(t *testing.T, err error) int64 {
	t.Helper()
	msg := fmt.Sprint(err)
	i := strings.Index(msg, "needs about ")
	var mib int64
	if i < 0 {
		t.Fatalf("%s: no figure", msg)
	} else if _, err := fmt.Sscanf(msg[i+len("needs about "):], "%dMiB", &mib); err != nil {
		t.Fatalf("%s: no figure: %v", msg, err)
	}
	return mib
}

// HostBytes also holds scheme auto's timing phase: as a sweep runs it (one
// timing run at a time, SetRunsAtOnce), the running run's chip beside the
// kept one's where the bound holds both.
func TestHostBytesHoldsAutoTimings(t *testing.T) {
	SetRunsAtOnce(1)
	defer SetRunsAtOnce(0)
	f, err := ReadFile("examples/a100-emulated-gemm.yaml")
	if err != nil {
		t.Fatal(err)
	}
	bytes := func(scheme string) int64 {
		g, err := f.Again()
		if err != nil {
			t.Fatal(err)
		}
		n, ok := HostBytes(g, Options{Overrides: mustSets(t, "program.scheme="+scheme, "program.m=1024", "program.n=1024", "program.k=1024"),
			Numerics: NumericsOff, MaxHostBytes: 64 << 30})
		if !ok {
			t.Fatalf("%s: no estimate", scheme)
		}
		return n
	}
	auto, one := bytes("auto"), bytes("ootomo")
	if auto < runHostBytes+2*(one-runHostBytes) {
		t.Errorf("auto %d MiB, want at least two timing runs' chips (ootomo's run %d MiB) beside one base", auto>>20, one>>20)
	}
	if n, keep, peak := timingPlan(250, 50, []float64{100, 80}); n != 1 || !keep || peak != 250 {
		t.Errorf("timingPlan(250, 50, [100 80]) = %d, %v, %g; want 1, kept, 250", n, keep, peak)
	}
	if n, keep, peak := timingPlan(249, 50, []float64{100, 80}); n != 1 || keep || peak != 150 {
		t.Errorf("timingPlan(249, 50, [100 80]) = %d, %v, %g; want 1, not kept, 150", n, keep, peak)
	}
}
