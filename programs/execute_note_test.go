package programs

import (
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/davinci-sim/davinci-sim/arch"
	"github.com/davinci-sim/davinci-sim/machines"
	"github.com/davinci-sim/davinci-sim/sim"
)

// A skip's note says what it measured — a stationary skip its waves'
// count, the windows' agreement and noise — and warns where the checked
// waves' L2 hits moved away from the measured ones (the skipped waves'
// bytes stand for the measured hits).
func TestFastForwardNote(t *testing.T) {
	s := arch.FastForwardSkip{Grid: "k", Waves: 6, WaveCTAs: 216, FromCTA: 1944, Period: 2974 * sim.Microsecond, Spread: sim.Microsecond,
		Shift: 6 * 2974 * sim.Microsecond, TailPeriod: 2974 * sim.Microsecond, Checked: true, Hits: 0.877, TailHits: 0.782}
	if n := fastForwardNote(s); strings.Contains(n, "stationary") || strings.Contains(n, "may be off") || !strings.Contains(n, "spread") {
		t.Errorf("plain skip: %s", n)
	}
	s.Stationary, s.Measured, s.Noise, s.Tail, s.HitsMoved = true, 8, 3*sim.Nanosecond, 5, true
	n := fastForwardNote(s)
	for _, want := range []string{"measuring 8 waves", "stationary", "4 waves checked", "L2 hit fraction was 0.782 against the measured waves' 0.877", "may be off"} {
		if !strings.Contains(n, want) {
			t.Errorf("stationary skip whose hits moved: no %q in %s", want, n)
		}
	}
}

// A kernel's waits say why its waves were simulated: nothing where only
// its warm-up held skips back; otherwise each reason that did, how often,
// the last measure against the setting, the flag that sets it, and where
// its first skip came (or that none did).
func TestFastForwardWaitNote(t *testing.T) {
	ff := arch.DefaultFastForward
	if n := fastForwardWaitNote(arch.FastForwardWait{Grid: "k", Waves: 19, FirstSkip: 7, WarmUp: 2}, ff); n != "" {
		t.Errorf("warm-up alone: %q, want no note", n)
	}
	w := arch.FastForwardWait{Grid: "k", Waves: 103, FirstSkip: 41, Spread: 1, LastSpread: 0.0734, Apart: 14, LastGap: 0.0688, Moved: 2, WarmUp: 3}
	noteHas(t, fastForwardWaitNote(w, ff), "kernel k: its first wave skip came at wave 41 of 103", "spread beyond the tolerance (once, the last by 7.34 % of their mean against 5 %: --fast-forward-tolerance; --fast-forward-stationary",
		"apart than the tolerance (14 times, the last by 6.88 % against 5 %", "stall mix moved beyond the settings (twice: --fast-forward-hits", "warm-up (3 times: --fast-forward-warm-up)")
	ff.Stationary = true
	w = arch.FastForwardWait{Grid: "k", Waves: 7, FirstSkip: -1, Spread: 2, LastSpread: 0.2, Unlike: 1}
	n := fastForwardWaitNote(w, ff)
	noteHas(t, n, "none of its 7 waves was skipped", "other instructions (once)")
	if strings.Contains(n, "--fast-forward-stationary") || strings.Contains(n, "warm-up") {
		t.Errorf("stationary on, no warm-up refusal: %s", n)
	}
}

// A kernel's step waits say how its steps went: nothing where it
// simulated none; that two windows never formed; or where they did, why
// no skip was taken, with the closest window against the tolerance.
func TestStepWaitNote(t *testing.T) {
	ff := arch.DefaultFastForward
	if n := stepWaitNote(arch.StepWait{Grid: "k"}, ff); n != "" {
		t.Errorf("no steps simulated: %q, want no note", n)
	}
	if n := stepWaitNote(arch.StepWait{Grid: "k", Steps: 900}, ff); !strings.Contains(n, "kernel k: 900 block-steps simulated; two windows of 4 intervals never formed") {
		t.Errorf("no windows: %s", n)
	}
	// Skips decided on one window at the checked pace: never "no windows
	// formed" for a kernel that skipped.
	if n := stepWaitNote(arch.StepWait{Grid: "k", Steps: 336, Paced: 3}, ff); n != "fast-forward step skips: kernel k: 336 block-steps simulated; one window of 4 intervals at the pace an earlier skip's check kept decided a skip 3 times" {
		t.Errorf("paced skips, no two windows: %s", n)
	}
	w := arch.StepWait{Grid: "k", Steps: 1131945, Windows: 24445, Unsteady: 24336, Spread: 0.0503, Gap: 0.00311, Moved: 4, WarmUp: 2, Short: 97, Unpaced: 6, Paced: 1}
	noteHas(t, stepWaitNote(w, ff), "formed 24445 times, where no skip was taken because", "decided a skip once; two windows of 4 intervals formed", "(24336 times; the closest: spread 5.03 %, means 0.311 % apart, against 5 % and 1 %: --fast-forward-tolerance)",
		"moved beyond the settings (4 times", "warm-up (twice", "too few steps were left for a skip and its check (97 times)",
		"the windows' pace differed from the one this kernel's last checked skip kept, and a block had not yet passed that skip's step (6 times)")
}

// noteHas reports (as errors) each of wants that note does not contain.
func noteHas(t *testing.T, note string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(note, want) {
			t.Errorf("no %q in %s", want, note)
		}
	}
}

// A skip taken back after its failed check says which blocks were
// simulated after which, and where the kernel's later skips may not go
// (arch records them: FastForwardSkip.Failure, KeptOut).
func TestTakenBackText(t *testing.T) {
	sk := func(failure, from, waves, ahead, keptTo int) arch.FastForwardSkip {
		return arch.FastForwardSkip{Grid: "g", FromCTA: from, Waves: waves, WaveCTAs: 80, Tail: 3, AheadTo: ahead,
			Failure: failure, KeptOut: arch.BlockRange{From: from, To: keptTo}}
	}
	for _, c := range []struct {
		s    arch.FastForwardSkip
		want string
	}{
		{sk(1, 640, 91, 640+94*80, 1280), "so the skip was taken back: its blocks 640–7919 were simulated after those its check ran ahead of them (7920–8159), and no later skip reaches into the check's blocks nor starts in blocks 640–1279 (a skip after them"},
		{sk(2, 960, 87, 960+90*80, 960+90*80), "no later skip starts in or reaches into blocks 960–8159 (its kernel's failed check 2)"},
		{sk(3, 480, 9, 480+12*80, math.MaxInt), "and the rest of that kernel was simulated (its third failed check)"},
	} {
		if got := takenBackText(c.s); !strings.Contains(got, c.want) {
			t.Errorf("failure %d: %q, want %q in it", c.s.Failure, got, c.want)
		}
	}
}

// A skip whose check failed is taken back, its waves simulated after the
// check's; the kernel measures again past the failed skip's measured
// waves and skips again (T4 Ootomo 12288×1536×4096 on the 2 KiB tags),
// with the run's time within its stated uncertainty of the full run's and
// no run made again. (Until 2026-12-06 a failed check made the run again;
// the scenario was 8192×1536×4096 then, whose skip measured after the
// take-back fails too — its waves 11–14 in lockstep at 528 µs, the later
// ones 513 µs —, leaving that kernel simulated whole, +1.0 % from its full
// run against ±2.2 % stated. It moves as the model does: 8192×1024×4096
// until the L2's channel carried the bytes it misses too; 12288×2048×4096
// until reads fetched whole lines; LE-GEMM at that shape until the
// channels' wake-ups moved later with their finishes (Waker.Rebook);
// 4096³ until the GEMM's swizzle period took its skips' windows to 7
// waves of its 24.)
func TestFastForwardTakenBackSkipsAgain(t *testing.T) {
	if testing.Short() {
		t.Skip("two runs of T4 Ootomo 12288×1536×4096 (~5 s)")
	}
	f, err := ReadFile("examples/a100-emulated-gemm.yaml")
	if err != nil {
		t.Fatal(err)
	}
	run := func(ff *arch.FastForward) *Result {
		opts := Options{Machine: "t4", Numerics: NumericsOff, FastForward: ff,
			Overrides: mustSets(t, append([]string{"program.scheme=ootomo", "program.m=12288", "program.n=1536", "program.k=4096"}, t4Sectored...)...)}
		res, err := Execute(f, opts, RunHooks{})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	ff := arch.DefaultFastForward
	// A caller's own exclusion in the kernel (past its blocks) is not a
	// failure: the first failure is still the first (the note says).
	ff.Exclude = []arch.BlockRange{{Grid: 1, From: 1 << 30, To: 1<<30 + 1}}
	fast, full := run(&ff), run(nil)
	failed, again := 0, 0
	for _, n := range fast.Report.Notes {
		if strings.Contains(n, "CHECK FAILED") {
			failed++
			if !strings.Contains(n, "so the skip was taken back") || failed == 1 && !strings.Contains(n, "no later skip reaches into the check's blocks nor starts in blocks") {
				t.Errorf("note %q", n)
			}
		} else if strings.Contains(n, "kernel emulated-gemm/hh|hl+lh: skipped") && strings.Contains(n, "checked: the waves after the skip took") {
			again++
		}
	}
	if failed != 1 || again != 1 {
		t.Fatalf("%d failed and %d checked skips of the products kernel, want 1 and 1: %q", failed, again, fast.Report.Notes)
	}
	d := math.Abs(float64(fast.Stats.Time - full.Stats.Time))
	if unc := fast.Report.Sim.SkipUncertaintySeconds; d > unc*1e12 || unc <= 0 {
		t.Errorf("time %v, full %v: %v apart, stated uncertainty %g s", fast.Stats.Time, full.Stats.Time, sim.Time(d), unc)
	}
	if fast.Stats.Events >= full.Stats.Events || fast.Report.Sim.DiscardedRuns != 0 {
		t.Errorf("events %d, full run %d; %d runs made again", fast.Stats.Events, full.Stats.Events, fast.Report.Sim.DiscardedRuns)
	}
}

// The skips' note says what share of the run's GM reads they stand for and
// what a point of their hit fraction is worth in HBM reads; nothing
// without skipped bytes, no sensitivity without HBM reads.
func TestSkippedBytesNote(t *testing.T) {
	n := skippedBytesNote(822, 1000, 31)
	for _, want := range []string{"those bytes are 82.2 % of the run's GM reads", "served by the caches (the L2 and any LLC) moves the run's HBM reads by 26.5 %", "further off than its time", "docs/report.md"} {
		if !strings.Contains(n, want) {
			t.Errorf("no %q in %q", want, n)
		}
	}
	if n := skippedBytesNote(822, 1000, 0); strings.Contains(n, "HBM") || !strings.Contains(n, "82.2 %") {
		t.Errorf("no HBM reads: %q", n)
	}
	if n := skippedBytesNote(0, 1000, 31); n != "" {
		t.Errorf("nothing skipped: %q", n)
	}
}

// The step skips' note sums them up by kernel and says where a check's L2
// hit fraction moved (naming the skip that moved the most), and how many
// an earlier check stood for (arch.StepSkip.Paced).
func TestStepSkipsNote(t *testing.T) {
	skip := func(grid string, hits, checkHits float64, moved bool) arch.StepSkip {
		return arch.StepSkip{Grid: grid, Steps: 100, CTAs: 8, Period: sim.Microsecond, Shift: 100 * sim.Microsecond, Checked: true,
			Hits: hits, CheckHits: checkHits, HitsMoved: moved}
	}
	n := stepSkipsNote([]arch.StepSkip{skip("a", 0.9, 0.88, false), skip("b", 0.917, 0.85, true), skip("b", 0.917, 0.775, true), skip("b", 0.9, 0.9, false),
		skip("c", 0.5, -1, true)})
	for _, want := range []string{"kernel a: 1 skips, 800 block-steps", "kernel b: 3 skips, 2400 block-steps", "2 whose check's L2 hit fraction moved (the largest move: 0.775 against the measured steps' 0.917)",
		"1 whose check's L2 hit fraction moved (the largest move: no traffic against the measured steps' 0.5)"} {
		if !strings.Contains(n, want) {
			t.Errorf("no %q in %q", want, n)
		}
	}
	if strings.Count(n, "moved") != 2 {
		t.Errorf("kernel a's hits did not move: %q", n)
	}
	paced := skip("a", 0.9, -1, false)
	paced.Paced = true
	n = stepSkipsNote([]arch.StepSkip{skip("a", 0.9, 0.9, false), paced, paced, skip("b", 0.9, 0.9, false)})
	if want := "kernel a: 3 skips, 2400 block-steps standing for 0.0003 s (steps of 1–1 µs), 2 measured at the pace an earlier skip's check kept, which stands for their own (their hits after them not measured); kernel b"; !strings.Contains(n, want) {
		t.Errorf("no %q in %q", want, n)
	}
}

// Fast-forward on a DaVinci machine skips nothing, whatever the numerics
// or a host — the note says so — and the run is the same (with numerics
// full it had refused: "fast-forward skips CTAs…", which a DaVinci chip
// has none of).
func TestFastForwardOnDaVinci(t *testing.T) {
	ff := arch.DefaultFastForward
	for name, want := range map[string]bool{"ascend-910a": false, "ascend-910b3": false, "a100": true, "mi210": true} {
		m, err := machines.Load(name, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := arch.FastForwardSkips(m); got != want {
			t.Errorf("arch.FastForwardSkips(%s) = %v, want %v", name, got, want)
		}
	}
	m, _ := machines.Load("ascend-910a", nil)
	if _, err := arch.NewChip(m, arch.Options{Mode: arch.Functional, FastForward: &ff}); err != nil {
		t.Errorf("NewChip(ascend-910a, functional, fast-forward): %v (nothing to skip: ignored)", err)
	}
	for _, text := range []string{
		"kind: hgemm\nm: 256\nn: 256\nk: 256\nnumerics: full\ncheck: true\n",
		"kind: lu-fused\nn: 512\nnb: 128\nn_fused: 2\nn_fusion: 8\nnumerics: off\n",
		"kind: lu-fused\nn: 1024\nnb: 128\nn_fused: 2\nn_fusion: 8\nnumerics: off\nfidelity: sampled\n", // (as a node of one NPU)
	} {
		run := func(o Options) *Result {
			f, err := Parse("p.yaml", ".", []byte(text))
			if err != nil {
				t.Fatal(err)
			}
			res, err := Execute(f, o, RunHooks{})
			if err != nil {
				t.Fatalf("%q: %v", text, err)
			}
			return res
		}
		plain, fast := run(Options{}), run(Options{FastForward: &ff})
		const note = "fast-forward: only kernel grids (GPU machines) have waves to skip; everything was simulated"
		if !slices.Contains(fast.Report.Notes, note) {
			t.Errorf("%q: notes %q lack %q", text, fast.Report.Notes, note)
		}
		if plain.Report.Time != fast.Report.Time || !reflect.DeepEqual(plain.Report.Error, fast.Report.Error) {
			t.Errorf("%q: time %+v, error %+v with fast-forward; %+v, %+v without", text, fast.Report.Time, fast.Report.Error, plain.Report.Time, plain.Report.Error)
		}
	}
}

// Fast-forward where it can skip nothing is a note, the same on every
// machine and on clusters, so that a sweep can give it to every point: a
// host program on a GPU (lu-fused on the A100, whose host waits for its
// kernels by time; it was refused, after building the job and the chip),
// a DaVinci chip, a node; the run is the one made without it.
func TestFastForwardWhereNothingToSkip(t *testing.T) {
	ff := arch.DefaultFastForward
	for _, c := range []struct{ text, note string }{
		{"kind: lu-fused\nmachine: a100\nn: 1024\nnb: 256\nnumerics: off\n", "fast-forward: lu-fused is a host program"},
		{"kind: lu-fused\nn: 512\nnb: 128\nn_fused: 2\nn_fusion: 8\nnumerics: off\n", noGridsToSkip},
		{luClusterSmall + "numerics: off\nfidelity: isolated\n", noSkipsOnClusters},
	} {
		run := func(o Options) *Result {
			t.Helper()
			f, err := Parse("p.yaml", ".", []byte(c.text))
			if err != nil {
				t.Fatal(err)
			}
			res, err := Execute(f, o, RunHooks{})
			if err != nil {
				t.Fatalf("%q: %v", c.text, err)
			}
			return res
		}
		plain, fast := run(Options{}), run(Options{FastForward: &ff})
		if !slices.ContainsFunc(fast.Report.Notes, func(n string) bool { return strings.HasPrefix(n, c.note) }) {
			t.Errorf("%q: notes %q lack %q", c.text, fast.Report.Notes, c.note)
		}
		if plain.Report.Time != fast.Report.Time {
			t.Errorf("%q: time %+v with fast-forward, %+v without", c.text, fast.Report.Time, plain.Report.Time)
		}
	}
}

// hostProgram, which tells before a run is built that fast-forward has
// nothing to skip in it, knows the jobs that run a host program: every
// kind on a GPU and a DaVinci machine it runs on, built and prepared, has
// a host program exactly where it says.
func TestHostProgramKnown(t *testing.T) {
	const gemm = "m: 256\nn: 256\nk: 256\n"
	small := map[string]string{
		"lu-fused":      "n: 1024\nnb: 256\n",
		"lu-gemm":       "m: 1024\nnb: 256\nn_fused: 1\n",
		"emulated-gemm": gemm + "scheme: markidis\n",
		"ozaki":         gemm + "precision: forced\nmantissa_bits: 55\n",
		"gpu-bench":     "",
		"asm":           "",
	}
	hosted := 0
	for _, machine := range []string{"a100", "ascend-910a"} {
		for _, k := range Kinds() {
			name := machine
			if k.Name == "sgemm" && name == "ascend-910a" {
				name = "ascend-910b3" // (the 910A has no FP32 cube)
			}
			m, err := machines.Load(name, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Contains(k.Machines, m.Kind) {
				continue
			}
			var f *File
			if keys, ok := small[k.Name]; ok && keys == "" {
				f, err = ReadFile("examples/" + k.Example)
			} else if ok {
				f, err = Parse("p.yaml", ".", []byte("kind: "+k.Name+"\n"+keys+"numerics: off\n"))
			} else {
				f, err = Parse("p.yaml", ".", []byte("kind: "+k.Name+"\n"+gemm+"numerics: off\n"))
			}
			if err != nil {
				t.Fatal(err)
			}
			o := Options{Machine: name, Numerics: NumericsOff}
			if k.Name == "asm" || k.Name == "gpu-bench" {
				o.Numerics = ""
			}
			job, err := f.Kind.BuildFor(f, m, o)
			if err != nil {
				t.Errorf("%s on %s: %v", k.Name, name, err)
				continue
			}
			chip, err := arch.NewChip(m, arch.Options{Mode: job.Mode()})
			if err != nil {
				t.Fatal(err)
			}
			if err := job.Prepare(chip); err != nil {
				t.Errorf("%s on %s: %v", k.Name, name, err)
				continue
			}
			_, _, host := chip.HostProgress()
			if host != hostProgram(f, m) {
				t.Errorf("%s on %s: the job has a host program %v, hostProgram says %v", k.Name, name, host, !host)
			}
			if host {
				hosted++
			}
		}
	}
	if hosted < 3 { // lu-fused on both, ozaki on the 910A
		t.Errorf("%d jobs with a host program: the test exercises too little", hosted)
	}
}
