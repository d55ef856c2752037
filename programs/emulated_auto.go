package programs

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/davinci-sim/davinci-sim/accuracy"
	"github.com/davinci-sim/davinci-sim/arch/gpu"
	"github.com/davinci-sim/davinci-sim/badinput"
	"github.com/davinci-sim/davinci-sim/fp"
	"github.com/davinci-sim/davinci-sim/machines"
	"github.com/davinci-sim/davinci-sim/report"
	"github.com/davinci-sim/davinci-sim/sim"
)

// scheme: auto — Ape's goal of picking the emulation for the data at hand:
// the fastest preset (or native FP32 itself) on the machine that meets the
// target accuracy.
//
//  1. Every preset whose pieces the machine's matrix units take and whose
//     range holds the inputs (checkRange) is a candidate, and so is native
//     FP32 (scheme native: no emulation) where it can run with the
//     program's settings (autoNative); the others are listed with the
//     reason.
//  2. Each preset's accuracy is measured on a sample of the problem: the
//     top-left autoSample × autoSample block of C at the full k (the same
//     inputs: rows of A and columns of B are drawn row by row), or with
//     .npy inputs autoSample evenly spaced rows of A and columns of B
//     (readAutoInputs; the range is then the files' every value), computed by
//     the golden model (numerics sampled, every tile) — accuracy depends on
//     k and the data, not on m and n. Native FP32 is the accuracy
//     reference: its accuracy is predicted to be FP32 SGEMM's on the
//     sample (on AMD the FP32 MFMAs' numerics are not modelled, so it could
//     not be measured there).
//  3. The target is target_bits, or FP32 SGEMM's bits on the same sample
//     (a CPU SGEMM, k-ordered FMA-free sums) less half a bit — any
//     accuracy where that is 0 or less (FP32's C overflows or underflows
//     there: fp32Failure says which). A candidate of 0 bits meets no
//     target (meetsTarget).
//  4. The candidates that meet it are simulated at full size (timing only)
//     in increasing order of a lower bound on their time — their kernel
//     launches plus their products' flops at the matrix units' peak (native:
//     one launch and 2mnk at its units' FP32 peak) — until the next bound is
//     above the best simulated time: the fastest is then known without
//     simulating the rest. Up to a few run at once, the later ones started
//     ahead and stopped where the earlier ones prune them
//     (timeCandidates): the outcome is that of one after the other. No
//     candidate meets the target: the most accurate is chosen (the
//     fastest of them all where none has any accuracy, which it says).
//
// The report's program.auto lists every candidate with its status,
// measured (native: predicted) bits, bound and simulated time.

// autoSample is the side of the block of C the accuracy is measured on.
const autoSample = 64

// autoCandidate is one preset considered by scheme: auto.
type autoCandidate struct {
	name    string
	status  string // chosen, simulated, pruned, inaccurate, out-of-range, unsupported
	reason  string
	bits    float64
	bound   float64     // seconds: a lower bound on the time (products at peak)
	seconds float64     // simulated time (0: not simulated)
	sp      *schemePlan // nil: native
	units   string      // native: where it runs
	// measured: native's bits are measured on the sample (its numerics
	// modelled), not predicted.
	measured bool
	// fused: the preset with split: fused (its numerics are the split
	// kernel's: the same bits).
	fused bool
	// err is its sample run's error (a preset measured).
	err error
	// refusal is its timing run's bad input (status unsupported).
	refusal error
}

// label names the candidate in notes and program.auto.chosen.
func (c *autoCandidate) label() string {
	if c.fused {
		return c.name + " (split: fused)"
	}
	return c.name
}

// scheme is the candidate as a program's scheme (a --set value).
func (c *autoCandidate) scheme() string {
	if c.fused {
		return "{name: " + c.name + ", split: fused}"
	}
	return c.name
}

// autoMachine is what scheme auto needs of a machine kind: which piece
// formats its matrix units take, a lower bound on a scheme's time, its
// native FP32 candidate, and the job of the chosen scheme.
type autoMachine interface {
	// unsupported says why the matrix units take no pieces of format f
	// ("": they do).
	unsupported(f fp.Format) string
	// bound is a lower bound on the time of sp's kernels for a GEMM of
	// flops: their launches and their products' flops at the matrix peak.
	bound(sp *schemePlan, flops float64) float64
	// fuses reports whether the presets also run with split: fused.
	fuses() bool
	// native is the native FP32 candidate: its accuracy measured on the
	// sample (measure), or predicted to be FP32 SGEMM's there (fp32Bits)
	// where its numerics are not modelled.
	native(p GEMMParams, ep EmulatedParams, flops, fp32Bits, target float64, measure func(scheme string) (float64, error)) (*autoCandidate, error)
	// build builds the chosen preset (ep.Scheme names it) with auto's
	// choice in its report.
	build(f *File, o Options, ep EmulatedParams, auto *autoChoice, bad func(key, format string, a ...any) error) (Job, error)
	describe() string
}

// gpuAuto is autoMachine for GPU machines.
type gpuAuto struct{ tg *gpuTarget }

func (a gpuAuto) unsupported(f fp.Format) string {
	if a.tg.hasMatrix(f) {
		return ""
	}
	return fmt.Sprintf("no %s %s", a.tg.typeName(f), a.tg.units)
}

func (a gpuAuto) bound(sp *schemePlan, flops float64) float64 {
	peak, _ := a.tg.m.Peak(a.tg.matrixPeak[sp.format])
	kernels := 1 // one fused product kernel
	if sp.s.Kernels == "termwise" {
		kernels = len(sp.groups)
	}
	if sp.s.Split == "pass" {
		kernels++ // the split kernel
	}
	return float64(float64(kernels)*a.tg.launch) + float64(sp.products())*flops/peak
}

func (a gpuAuto) fuses() bool { return true }

func (a gpuAuto) native(p GEMMParams, ep EmulatedParams, flops, fp32Bits, target float64, _ func(string) (float64, error)) (*autoCandidate, error) {
	return autoNative(a.tg.m, a.tg, p, ep, flops, fp32Bits, target), nil
}

func (a gpuAuto) build(f *File, o Options, ep EmulatedParams, auto *autoChoice, bad func(key, format string, a ...any) error) (Job, error) {
	j, err := buildEmulatedScheme(f, a.tg.m, o, ep, a.tg, bad)
	if err != nil {
		return nil, err
	}
	j.auto = auto
	return j, nil
}

func (a gpuAuto) describe() string { return a.tg.describe() }

func buildEmulatedAuto(f *File, m *machines.Machine, o Options, ep EmulatedParams, am autoMachine, bad func(key, format string, a ...any) error) (Job, error) {
	p := ep.GEMMParams
	o.applyGEMM(f, &p)
	if err := p.gpuDefaults(f.Path); err != nil {
		return nil, err
	}
	// The run's own estimate before its candidates' runs (each estimates
	// its own, below the run's): a refusal quotes the run's figure.
	if err := p.checkHostMemory(f.Path); err != nil {
		return nil, err
	}
	if ep.TargetBits < 0 || ep.TargetBits > accuracy.MaxBits {
		return nil, bad("target_bits", "must be in 0..%d (0: FP32 SGEMM's accuracy on the same data) (got %g)", accuracy.MaxBits, ep.TargetBits)
	}
	sm, sn := min(autoSample, p.M), min(autoSample, p.N)
	sample := o.autoSampleSets(sm, sn)
	// The sample: the top-left block of C drawn from the distribution, or
	// evenly spaced rows of A and columns of B from the files, which its
	// runs take from memory (Options.given).
	var a, b []float32
	rangeMax, rangeExp, rangeKey := p.Inputs.rangeMax(), p.Inputs.rangeExponent(), p.Inputs.rangeKey()
	sampleWhat := "the top-left block of C"
	var given *givenInputs
	var inputNotes []string
	if p.Inputs.A != "" { // (and B: gpuDefaults)
		in, err := readAutoInputs(f, &p, sm, sn)
		if err != nil {
			return nil, err
		}
		if err := o.stoppedBuilding(f.Path, "scheme auto, reading the inputs"); err != nil {
			return nil, err
		}
		a, b, sampleWhat, inputNotes = in.a, in.b, in.where, in.notes
		rangeMax, rangeExp, rangeKey = in.max, exponentAbove(in.max), in.key
		given = &givenInputs{a: a, b: b, m: sm, k: p.K, n: sn}
	}
	var presets, measured []*autoCandidate
	for _, name := range fp32SchemeNames() {
		c := &autoCandidate{name: name}
		presets = append(presets, c)
		sp, err := resolveScheme(Scheme{Name: name}, bad)
		if err != nil {
			return nil, err
		}
		c.sp, sp.k = sp, p.K
		if why := am.unsupported(sp.format); why != "" {
			c.status, c.reason = "unsupported", why
			continue
		}
		if err := sp.checkRange(rangeMax, rangeExp, rangeKey, bad); err != nil {
			c.status, c.reason = "out-of-range", err.Error()
			continue
		}
		measured = append(measured, c)
	}
	// How many sample runs may run at once, before the sample is drawn
	// (after the inputs' own check: read whole, they need more).
	var runnable []string
	for _, c := range presets {
		if c.status != "unsupported" {
			runnable = append(runnable, c.name)
		}
	}
	workers, err := o.autoSampleWorkers(f, &p, runnable, sm, sn)
	if err != nil {
		return nil, err
	}
	if p.Inputs.A == "" {
		a, b = genMatrix(p.Inputs, 1, sm, p.K), genMatrix(p.Inputs, 2, p.K, sn)
	}
	// FP32 SGEMM's accuracy on the sample.
	ref := accuracy.ReferenceGEMM(sm, p.K, sn, a, b)
	cpu := accuracy.CPUSGEMM(sm, p.K, sn, a, b)
	fp32Bits := accuracy.Compare32(ref, cpu).Bits
	target, from := ep.TargetBits, "target_bits"
	// anyBits: FP32 SGEMM itself has (next to) no accuracy on the sample
	// — its C overflows or underflows FP32 there —, so the default target
	// would be at or below 0 bits (it read "at least -0.5 bits"): any
	// accuracy is asked instead (meetsTarget: more than 0 bits).
	anyBits := target == 0 && fp32Bits-0.5 <= 0
	switch {
	case anyBits:
		target, from = 0, fmt.Sprintf("none: FP32 SGEMM has %.1f bits on the sample (%s), so any accuracy (more than 0 bits)", fp32Bits, fp32Failure(ref, cpu))
	case target == 0:
		target, from = fp32Bits-0.5, "FP32 SGEMM's bits on the sample less half a bit"
	}
	flops := 2 * float64(p.M) * float64(p.N) * float64(p.K)
	// measure returns a scheme's bits on the sample, computed by the
	// golden model (run, not counted: measure counts it).
	run := func(name string) (float64, time.Duration, error) {
		so := o
		so.Overrides, so.Numerics, so.given = sample(name), NumericsSampled, given
		res, took, err := runAgain(f, so, o.subRun(""))
		if err != nil {
			return 0, took, fmt.Errorf("%s: scheme auto: measuring %s on the %d×%d×%d sample: %w", f.Path, name, sm, p.K, sn, err)
		}
		return res.Report.Error.Bits, took, nil
	}
	measure := func(name string) (float64, error) {
		bits, took, err := run(name)
		o.countRuns(1, took)
		return bits, err
	}
	// The samples' runs are independent (each a golden model's tile
	// beside a one-block simulation): they run at once, a run a
	// processor, as many as the run's bound holds beside what the run
	// holds itself.
	start := time.Now()
	stop := o.stop()
	eachTileOn(workers, len(measured), nil, func(i int) error {
		if stop != nil && stop() { // (the runs not started: interrupted)
			measured[i].err = o.stoppedBuilding(f.Path, "scheme auto, measuring the candidates")
			return nil
		}
		measured[i].bits, _, measured[i].err = run(measured[i].name)
		return nil
	})
	o.countRuns(len(measured), time.Since(start))
	var cands []*autoCandidate
	for _, c := range presets {
		cands = append(cands, c)
		if c.status != "" { // unsupported, out of range: not measured
			continue
		}
		if err := c.err; err != nil {
			if !badinput.Is(err) {
				return nil, err
			}
			// The program's settings do not suit this preset (a tiling
			// it does not fit): not a candidate.
			c.bits, c.status, c.reason = 0, "unsupported", err.Error()
			continue
		}
		c.bound = am.bound(c.sp, flops)
		c.status = "inaccurate"
		if meetsTarget(c.bits, target) {
			c.status = "accurate"
		}
		if am.fuses() {
			fc := *c
			fc.fused = true
			var err error
			if fc.sp, err = resolveScheme(Scheme{Name: c.name, Split: "fused"}, bad); err != nil {
				return nil, err
			}
			fc.bound = am.bound(fc.sp, flops)
			cands = append(cands, &fc)
		}
	}
	nc, err := am.native(p, ep, flops, fp32Bits, target, measure)
	if err != nil {
		return nil, err
	}
	cands = append(cands, nc)
	var ok []*autoCandidate
	for _, c := range cands {
		if c.status == "accurate" {
			ok = append(ok, c)
		}
	}
	if len(ok) == 0 { // the most accurate, then
		var best *autoCandidate
		for _, c := range cands {
			if c.status == "inaccurate" && (best == nil || c.bits > best.bits) {
				best = c
			}
		}
		if best == nil {
			return nil, bad("scheme", "auto: no preset runs on %s for these inputs", am.describe())
		}
		for _, c := range cands { // (with its equals: a split kernel or fused, the same numerics)
			if c.status == "inaccurate" && c.bits == best.bits {
				ok = append(ok, c)
			}
		}
	}
	sort.SliceStable(ok, func(i, j int) bool { return ok[i].bound < ok[j].bound })
	// The chosen candidate's timing run is kept and handed to Execute
	// (RunHooks.reuse), which reports it where the run would simulate the
	// same (timing, unobserved), not making it twice — where the run's
	// bound on its host memory holds it beside the next (autoTimingWorkers).
	var schemes []string
	for _, c := range ok {
		schemes = append(schemes, c.scheme())
	}
	timedN, keep, err := o.autoTimingWorkers(f, &p, schemes, sm, sn)
	if err != nil {
		return nil, err
	}
	chosen, chosenRun, err := o.timeCandidates(f, ok, timedN, func(c *autoCandidate, h RunHooks) (*Result, error) {
		so := o
		so.Overrides, so.Numerics = o.autoTimingSet(c.scheme()), NumericsOff
		h.keep = keep
		res, _, err := runAgain(f, so, h)
		return res, err
	})
	if err != nil {
		return nil, err
	}
	if chosen == nil {
		for _, c := range ok {
			if c.refusal != nil {
				// The constraint itself, with its key (the candidates'
				// timing runs were refused alike: the tiling, a key that
				// does not apply).
				return nil, fmt.Errorf("%w (scheme auto: no candidate runs on %s with these settings; this is the first tried, %s)", c.refusal, am.describe(), c.label())
			}
		}
		return nil, bad("scheme", "auto: no candidate runs on %s with these settings", am.describe())
	}
	if o.run != nil {
		o.run.reuse = chosenRun.run
	}
	chosen.status = "chosen"
	why := fmt.Sprintf("the fastest candidate with at least %.1f bits", target)
	switch {
	case chosen.bits <= 0 && fp32Bits-0.5 <= 0:
		// (Every candidate 0 bits: the fastest of them, ok's every one.)
		why = fmt.Sprintf("no candidate has any accuracy on these inputs — each has 0 bits on the sample, FP32 SGEMM included (%s): the fastest", fp32Failure(ref, cpu))
	case chosen.bits <= 0:
		// (FP32 SGEMM has bits, but native is no candidate here: the
		// 910A, or a row of its own says why.)
		why = fmt.Sprintf("no candidate has any accuracy on these inputs — each has 0 bits on the sample, where FP32 SGEMM has %.1f: the fastest", fp32Bits)
	case anyBits:
		why = fmt.Sprintf("FP32 SGEMM has %.1f bits on the sample (%s): the fastest candidate with any accuracy (more than 0 bits)", fp32Bits, fp32Failure(ref, cpu))
	case chosen.bits < target:
		why = fmt.Sprintf("no candidate reaches %.1f bits: the most accurate", target)
	}
	var rows []map[string]any
	for _, c := range cands {
		r := map[string]any{"scheme": c.name, "status": c.status}
		if c.fused {
			r["split"] = "fused"
		}
		if c.reason != "" {
			r["reason"] = c.reason
		}
		if c.bits > 0 {
			r["bits"] = c.bits
			r["bound_seconds"] = c.bound
		}
		if c.sp == nil {
			r["units"] = c.units
			switch {
			case c.bits > 0 && c.measured:
				r["bits_from"] = "measured on the sample (the golden model)"
			case c.bits > 0:
				r["bits_from"] = "predicted: FP32 SGEMM's on the sample"
			}
		}
		if c.seconds > 0 {
			r["seconds"] = c.seconds
		}
		rows = append(rows, r)
	}
	auto := &autoChoice{report: map[string]any{"chosen": chosen.label(), "why": why, "target_bits": target, "target_from": from,
		"fp32_sgemm_bits": fp32Bits, "sample": fmt.Sprintf("%d×%d×%d (%s)", sm, p.K, sn, sampleWhat),
		"candidates": rows}, inputNotes: inputNotes}
	ep.Scheme, ep.TargetBits = chosen.name, 0
	if chosen.fused {
		ep.Scheme = Scheme{Name: chosen.name, Split: "fused"}
	}
	if chosen.sp == nil {
		j, err := buildEmulatedNative(f, m, o, ep, bad)
		if err != nil {
			return nil, err
		}
		j.auto = auto
		return j, nil
	}
	return am.build(f, o, ep, auto, bad)
}

// autoNative is scheme auto's native candidate: FP32 GEMM without
// emulation (scheme native: kind sgemm's kernel — CUTLASS's SIMT kernel on
// the CUDA cores, the FP32 MFMAs on AMD), whose accuracy is predicted
// to be FP32 SGEMM's on the sample. It is unsupported where it cannot run
// with the program's settings: on FP32 MFMAs with numerics (the numerics
// presets have no FP32 MFMA model: scheme native runs there with numerics
// off only), and with histogram_bins (native reports no error histogram).
func autoNative(m *machines.Machine, tg *gpuTarget, p GEMMParams, ep EmulatedParams, flops, fp32Bits, target float64) *autoCandidate {
	c := &autoCandidate{name: "native", bits: fp32Bits}
	lane := tg.defaultLane(fp.FP32) // the library's choice, as scheme native's plan makes it
	c.units = tg.nativeUnits(lane)
	peak, _ := tg.peak(fp.FP32, lane)
	if lane == gpu.LaneMatrix && p.Numerics != NumericsOff && tg.unmodelled(fp.FP32) {
		c.status, c.reason = "unsupported", fmt.Sprintf("the numerics preset %q has no model of FP32 %s instructions: native runs on them with numerics off (timing only)", m.NumericsPreset(), tg.matrix)
	}
	switch {
	case c.status != "":
	case peak <= 0:
		c.status, c.reason = "unsupported", fmt.Sprintf("no FP32 %s or %s units", tg.units, tg.vector)
	case ep.HistogramBins != 0:
		c.status, c.reason = "unsupported", "histogram_bins: native (kind sgemm's kernel) reports no error histogram"
	default:
		c.bound = tg.launch + flops/peak
		c.status = "inaccurate"
		if meetsTarget(c.bits, target) {
			c.status = "accurate"
		}
	}
	if c.status == "unsupported" {
		c.bits = 0 // it does not run: no bits listed, as the unsupported presets
	}
	return c
}

// meetsTarget reports whether a candidate of bits meets scheme auto's
// target: at least target bits, and more than 0 — a result with 0 bits
// (rel_fro of 1 or more: C 0, ±Inf or no better) meets none, a default
// target of 0 (FP32 SGEMM with no accuracy) included.
func meetsTarget(bits, target float64) bool { return bits >= target && bits > 0 }

// fp32Failure says why FP32 SGEMM has (next to) no accuracy on scheme
// auto's sample: ref its exact C (FP64), cpu the CPU FP32 SGEMM's — C
// overflowing FP32 (elements ±Inf or NaN, or exact ones beyond FP32's
// largest finite value), underflowing it (0 where the exact C is not),
// else its relative error.
func fp32Failure(ref []float64, cpu []float32) string {
	var over, exact, under int
	for i, r := range ref {
		c := float64(cpu[i])
		if math.Abs(r) > math.MaxFloat32 {
			exact++
		}
		switch {
		case math.IsInf(c, 0) || math.IsNaN(c):
			over++
		case c == 0 && r != 0:
			under++
		}
	}
	var out []string
	if over+exact > 0 {
		out = append(out, fmt.Sprintf("its C overflows FP32: %d of the sample's %d elements are ±Inf or NaN (the exact C has %d beyond FP32's largest finite value)", over, len(ref), exact))
	}
	if under > 0 {
		out = append(out, fmt.Sprintf("its C underflows FP32: %d of the sample's %d elements are 0 where the exact C is not", under, len(ref)))
	}
	if len(out) == 0 {
		return fmt.Sprintf("its rel_fro is %.3g", accuracy.Compare32(ref, cpu).RelFro)
	}
	return strings.Join(out, "; ")
}

// autoChoice is scheme auto's choice as the chosen preset's job reports
// it: report, program.auto; inputNotes, what auto's read of .npy inputs
// found in them (float64 rounded, NaN and ±Inf: gemmInputs's notes),
// which a chosen run with numerics off, reading nothing, would not say.
type autoChoice struct {
	report     map[string]any
	inputNotes []string
}

// autoHeld returns the host bytes scheme auto's run holds while its
// candidates run (the run's base and data by its estimate — its chip is
// the chosen candidate's, made by those runs — and the sm×K and K×sn
// FP32 sample of A and B), and each run's own need beside the process's
// base by its estimate, largest first: of the runs of f the candidates
// schemes (a program's scheme values) make — their accuracy samples where
// sampling (autoSampleSets, sampled numerics), else their timing runs
// (autoTimingSet, timing only).
func (o Options) autoHeld(f *File, p *GEMMParams, schemes []string, sampling bool, sm, sn int) (own float64, needs []float64, err error) {
	own = float64(runHostBytes)
	if e, ok := o.estimateOf(f).dataEstimate(); ok {
		own = e.base + e.data
	}
	own += float64(4 * (int64(sm) + int64(sn)) * int64(p.K))
	set, numerics := o.autoTimingSet, NumericsOff
	if sampling {
		set, numerics = o.autoSampleSets(sm, sn), NumericsSampled
	}
	for _, scheme := range schemes {
		g, err := f.Again()
		if err != nil {
			return 0, nil, badInput(err)
		}
		so := o
		so.Overrides, so.Numerics, so.est = set(scheme), numerics, nil
		if e, ok := runEstimate(g, so); ok {
			needs = append(needs, e.total()-e.base) // (the process's base is the run's, in own)
		}
	}
	slices.SortFunc(needs, func(a, b float64) int { return cmp.Compare(b, a) })
	return own, needs, nil
}

// autoSampleSets returns the overrides of scheme auto's accuracy sample
// run of a candidate (its name): o's, then the scheme, the sm×sn block of
// C, every tile checked.
func (o Options) autoSampleSets(sm, sn int) func(name string) []machines.Override {
	return func(name string) []machines.Override {
		return append(append([]machines.Override{}, o.Overrides...),
			machines.Override{Path: "program.scheme", Value: name}, machines.Override{Path: "program.target_bits", Value: "0"},
			machines.Override{Path: "program.m", Value: fmt.Sprint(sm)}, machines.Override{Path: "program.n", Value: fmt.Sprint(sn)},
			machines.Override{Path: "program.sample_tiles", Value: "1048576"})
	}
}

// autoTimingSet returns the overrides of scheme auto's timing run of a
// candidate (scheme: its --set value): o's, then the scheme, no target and
// no histogram (timing only: no C to histogram).
func (o Options) autoTimingSet(scheme string) []machines.Override {
	return append(append([]machines.Override{}, o.Overrides...),
		machines.Override{Path: "program.scheme", Value: scheme}, machines.Override{Path: "program.target_bits", Value: "0"},
		machines.Override{Path: "program.histogram_bins", Value: "0"})
}

// autoBuildPeak estimates the host memory a scheme auto run of f with o
// (r: its estimate, whose parameters it reads) holds while it measures
// and times its candidates, before its own run, for HostBytes; 0 for any
// other run: measuring, what it holds and one sample run (the most its
// bound lets it run at once being at least one, autoSampleWorkers);
// timing, what it holds, the runs at once and the one kept, as
// autoTimingWorkers plans them under the run's bound (in a sweep one at a
// time: SetRunsAtOnce). Every preset counts, with its split kernel and
// fused, whatever the machine's units take.
func autoBuildPeak(r *runEstimates, f *File, o Options) float64 {
	par, err := r.params()
	ep, ok := par.(*EmulatedParams)
	if err != nil || !ok || ep.Scheme != "auto" {
		return 0
	}
	o.est = r // (autoHeld reads the run's data from it: no decode again)
	sm, sn := min(autoSample, ep.M), min(autoSample, ep.N)
	names := fp32SchemeNames()
	var schemes []string
	for _, name := range names {
		schemes = append(schemes, name, (&autoCandidate{name: name, fused: true}).scheme())
	}
	peak := 0.0
	if own, needs, err := o.autoHeld(f, &ep.GEMMParams, names, true, sm, sn); err == nil && len(needs) > 0 {
		peak = own + needs[0]
	}
	if own, needs, err := o.autoHeld(f, &ep.GEMMParams, schemes, false, sm, sn); err == nil {
		_, _, t := timingPlan(float64(r.host.bound()), own, needs)
		peak = max(peak, t)
	}
	return peak
}

// runsAtOnce returns how many runs of needs (largest first) may run at once,
// up to most, beside own bytes and, where kept, the largest of them held
// besides (a finished run kept for reuse): as many of the largest as the
// bound on the run's host memory holds; 0 where not even one fits.
func runsAtOnce(bound, own float64, needs []float64, most int, kept bool) int {
	if len(needs) == 0 {
		return most
	}
	sum := own
	if kept {
		sum += needs[0]
	}
	n := 0
	for _, need := range needs[:min(len(needs), most)] {
		if sum+need > bound {
			break
		}
		sum += need
		n++
	}
	return n
}

// autoSampleWorkers returns how many of the candidates' sample runs
// (sampled numerics on the sm×K×sn sample, autoSampleSets; names: the
// presets the machine has units for, those measured among them) may run at once: up to a processor each, as many as the run's
// bound on its host memory (--max-memory) holds beside what the run holds
// (autoHeld). Each sample run checks its own estimate against the whole
// bound, so run at once they could pass it together (a 64×262144×64
// sample on an A100: 788 MiB each, two at once under a 1 GiB bound peaked
// at 1.35 GB). It refuses the run where not even one fits.
func (o Options) autoSampleWorkers(f *File, p *GEMMParams, names []string, sm, sn int) (int, error) {
	own, needs, err := o.autoHeld(f, p, names, true, sm, sn)
	if err != nil {
		return 0, err
	}
	bound := float64(p.host.bound())
	n := runsAtOnce(bound, own, needs, runtime.GOMAXPROCS(0), false)
	if n == 0 {
		return 0, p.host.refuse(keyError(f.Path, "scheme", "auto measures each candidate on a %d×%d×%d sample with sampled numerics, which needs about %s of host memory in all (the largest candidate's %s beside the run's %s), more than the run may take (%s, --max-memory); name a scheme, or lower k",
			sm, p.K, sn, aboutBytes(own+needs[0]), roughSize(needs[0]), roughSize(own), gib(p.host.bound())))
	}
	return n, nil
}

// autoTimingWorkers returns how many of the candidates' timing runs
// (timing only at the program's size, autoTimingSet; schemes: their
// scheme values) may run at once — as many as the run's bound holds
// beside what the run holds (autoHeld) and the fastest run so far, which
// auto keeps to report (RunHooks.keep) —, and whether it may keep that
// run: not where the bound holds only one run at a time (the chosen
// candidate is then simulated again). At least 1: a run that does not fit
// its bound refuses itself.
func (o Options) autoTimingWorkers(f *File, p *GEMMParams, schemes []string, sm, sn int) (n int, keep bool, err error) {
	own, needs, err := o.autoHeld(f, p, schemes, false, sm, sn)
	if err != nil {
		return 0, false, err
	}
	n, keep, _ = timingPlan(float64(p.host.bound()), own, needs)
	return n, keep, nil
}

// timingPlan returns how many timing runs of needs (largest first) run at
// once beside own bytes within bound, whether the fastest is kept, and
// the bytes held at most so (autoTimingWorkers, autoBuildPeak).
func timingPlan(bound, own float64, needs []float64) (n int, keep bool, peak float64) {
	most := timedMost()
	if len(needs) == 0 {
		return most, true, own
	}
	if n = runsAtOnce(bound, own, needs, most, true); n > 0 {
		peak = own + needs[0] // (the kept run)
		for _, need := range needs[:n] {
			peak += need
		}
		return n, true, peak
	}
	return 1, false, own + needs[0]
}

// timedMost is the most timing runs of scheme auto at once: a processor
// each, at most maxTimedAtOnce, and SetRunsAtOnce's bound where set.
func timedMost() int {
	most := min(runtime.GOMAXPROCS(0), maxTimedAtOnce)
	if n := int(timedAtOnce.Load()); n > 0 {
		most = min(most, n)
	}
	return most
}

// reportAuto puts scheme auto's choice (nil: none) in the report:
// program.auto, a note, and the notes on the inputs the run's own did not
// give (numerics off: it read none).
func reportAuto(rep *report.Report, auto *autoChoice) {
	if auto == nil {
		return
	}
	for _, n := range auto.inputNotes {
		if !slices.Contains(rep.Notes, n) {
			rep.Notes = append(rep.Notes, n)
		}
	}
	rep.Program["auto"] = auto.report
	rep.Notes = append(rep.Notes, autoSummary(auto.report))
}

// autoSummary is an account of an auto choice for the notes: the choice
// and why, then the other candidates by status (simulated, pruned, then
// those not timed; each group's by bits, most first) — a scheme
// named once in a group "both splits" stands for its separate and fused
// splits where they fared alike, which most do (a run's 24 candidates
// listed one by one made a note of 1500 characters).
func autoSummary(auto map[string]any) string {
	type entry struct {
		name, split, status, detail string
		bits                        float64
		both                        bool
	}
	var all []*entry
	var chosen *entry
	for _, r := range auto["candidates"].([]map[string]any) {
		e := &entry{name: fmt.Sprint(r["scheme"]), status: fmt.Sprint(r["status"]), bits: math.Inf(-1)}
		if r["split"] == "fused" {
			e.split = "fused"
		}
		if b, ok := r["bits"].(float64); ok && !math.IsNaN(b) {
			e.bits = b
			e.detail = fmt.Sprintf("%.1f bits", b)
			if from, _ := r["bits_from"].(string); strings.HasPrefix(from, "predicted") {
				e.detail += ", predicted"
			}
			if t, ok := r["seconds"].(float64); ok && t > 0 {
				e.detail += fmt.Sprintf(", %.4g s", t) // simulated
			}
		} else if why, _ := r["reason"].(string); why != "" && (e.status == "unsupported" || e.status == "out-of-range") {
			e.detail = why // (the report's candidates say the same)
		}
		if e.status == "chosen" {
			chosen = e
			continue
		}
		// A scheme's other split, alike: one entry for both.
		if i := slices.IndexFunc(all, func(o *entry) bool {
			return o.name == e.name && o.split != e.split && !o.both && o.status == e.status && o.detail == e.detail
		}); i >= 0 {
			all[i].both = true
			continue
		}
		all = append(all, e)
	}
	// Grouped by status in this order (others after), each group by bits.
	order := []string{"simulated", "pruned", "accurate", "inaccurate", "out-of-range", "unsupported"}
	rank := func(st string) int {
		if i := slices.Index(order, st); i >= 0 {
			return i
		}
		return len(order)
	}
	slices.SortStableFunc(all, func(a, b *entry) int {
		return cmp.Or(cmp.Compare(rank(a.status), rank(b.status)), cmp.Compare(b.bits, a.bits))
	})
	var groups []string
	for len(all) > 0 {
		n := 1
		for n < len(all) && all[n].status == all[0].status {
			n++
		}
		es := all[:n]
		all = all[n:]
		allBoth := !slices.ContainsFunc(es, func(e *entry) bool { return !e.both })
		label := es[0].status
		if allBoth {
			label += ", both splits"
		}
		var items []string
		for _, e := range es {
			var attrs []string
			switch {
			case e.both && !allBoth:
				attrs = append(attrs, "both splits")
			case !e.both && e.split == "fused":
				attrs = append(attrs, "split: fused")
			}
			if e.detail != "" {
				attrs = append(attrs, e.detail)
			}
			item := e.name
			if len(attrs) > 0 {
				item += " (" + strings.Join(attrs, "; ") + ")"
			}
			items = append(items, item)
		}
		groups = append(groups, label+": "+strings.Join(items, ", "))
	}
	head := fmt.Sprintf("scheme auto chose %s, %s", auto["chosen"], auto["why"])
	if chosen != nil && chosen.detail != "" {
		head += " (" + chosen.detail + ")"
	}
	if len(groups) == 0 {
		return head
	}
	return head + "; " + strings.Join(groups, "; ")
}

// maxTimedAtOnce bounds the timing runs scheme auto makes at once (each
// holds a chip: up to a few hundred MB at 8192³ on the largest machines).
const maxTimedAtOnce = 4

// timedAtOnce, when above 0, bounds them further (SetRunsAtOnce).
var timedAtOnce atomic.Int32

// SetRunsAtOnce bounds the runs a program's build makes at once for its
// own purposes — scheme auto's timing runs, each holding a chip — to n (0:
// the default, a run a processor, at most 4). A sweep running its points
// on every processor sets 1: runs started ahead there only add memory, and
// work where they turn out pruned. The outcome does not depend on it.
func SetRunsAtOnce(n int) { timedAtOnce.Store(int32(max(n, 0))) }

// timeCandidates simulates the accurate candidates ok (in increasing order
// of their lower bounds) at full size, timing only, by timeRun, and returns
// the fastest with its run (nil where none ran: all unsupported). The
// outcome is that of timing them one after the other, each pruned — not
// run — where its bound is at or above the fastest simulated before it;
// but up to GOMAXPROCS of them (at most maxTimedAtOnce, SetRunsAtOnce and
// most where above 0: what the run's host memory holds) run at once: the
// ones after the run waited for start ahead, and stop where the runs
// before them turn out to prune them. So the statuses, times and choice do
// not depend on the processors, and neither does the count of runs made
// (sim.runs_before: the runs one after the other would make); the wall
// time does. The build's progress line follows the run waited for (each
// run has a meter of its own, which the build's stands in for).
func (o Options) timeCandidates(f *File, ok []*autoCandidate, most int, timeRun func(c *autoCandidate, h RunHooks) (*Result, error)) (*autoCandidate, *Result, error) {
	type timing struct {
		res      *Result
		err      error
		panicked *caught
		stop     context.CancelFunc
		done     chan struct{}
		meter    *WorkMeter
	}
	parent := context.Background()
	var meter *WorkMeter // the build's, shown on its progress line
	if o.run != nil {
		if o.run.Context != nil {
			parent = o.run.Context
		}
		if o.run.Meter != nil && o.run.Progress != nil {
			meter = o.run.Meter
		}
	}
	atOnce := timedMost()
	if most > 0 { // (the run's bound on its host memory: autoTimingWorkers)
		atOnce = min(atOnce, most)
	}
	runs := make([]*timing, len(ok)) // started and not yet waited for
	begun := make([]bool, len(ok))
	inFlight, started := 0, 0
	var chosen *autoCandidate
	var chosenRun *Result
	pruned := func(c *autoCandidate) bool { return chosen != nil && c.bound >= chosen.seconds }
	start := func(i int) {
		c := ok[i]
		started++
		ctx, stop := context.WithCancel(parent)
		t := &timing{stop: stop, done: make(chan struct{})}
		runs[i], begun[i] = t, true
		inFlight++
		h := o.subRun(fmt.Sprintf("scheme auto, timing run %d: %s", started, c.label()))
		h.Context = ctx
		if h.Meter != nil {
			t.meter = new(WorkMeter)
			h.Meter = t.meter
			// Only the run waited for draws: the build follows the next
			// one once it has ended, so two never draw at once, and a
			// run's meter is read on its own goroutine only.
			progress := h.Progress
			h.Progress = func(now sim.Time, events uint64) {
				if meter.standIn.Load() == t.meter {
					progress(now, events)
				}
			}
		}
		go func() {
			defer close(t.done)
			t.err, t.panicked = try(func() error {
				var err error
				t.res, err = timeRun(c, h)
				return err
			})
		}()
	}
	// wait waits for run i, stopping it first where its result is not
	// wanted.
	wait := func(i int, stop bool) *timing {
		t := runs[i]
		if stop {
			t.stop()
		}
		<-t.done
		t.stop()
		runs[i] = nil
		inFlight--
		return t
	}
	defer func() { // (returning early: an error, a panic) the runs ahead stop
		for i, t := range runs {
			if t != nil {
				wait(i, true)
			}
		}
		meter.follow(nil)
	}()
	from, made := time.Now(), 0
	for i, c := range ok {
		for j := i; j < len(ok) && inFlight < atOnce; j++ {
			if !begun[j] && !pruned(ok[j]) {
				start(j)
			}
		}
		if pruned(c) {
			c.status, c.reason = "pruned", fmt.Sprintf("its lower bound %s s is above %s's simulated %s s", distinctG(c.bound, chosen.seconds), chosen.label(), distinctG(chosen.seconds, c.bound))
			// So are the ones after it (their bounds are no lower, and
			// nothing more runs to lower the best): they all stop now.
			for _, t := range runs[i:] {
				if t != nil {
					t.stop()
				}
			}
			if runs[i] != nil {
				wait(i, true)
			}
			continue
		}
		meter.follow(runs[i].meter)
		t := wait(i, false)
		made++
		t.panicked.raise()
		if err := t.err; err != nil {
			if !badinput.Is(err) {
				return nil, nil, fmt.Errorf("%s: scheme auto: timing %s: %w", f.Path, c.label(), err)
			}
			c.status, c.reason, c.refusal = "unsupported", err.Error(), err // e.g. a fused split with tiling.staging: shared
			continue
		}
		c.seconds, c.status = t.res.Report.Time.Seconds, "simulated"
		if chosen == nil || c.seconds < chosen.seconds {
			chosen, chosenRun = c, t.res
		}
	}
	o.countRuns(made, time.Since(from))
	return chosen, chosenRun, nil
}

// distinctG prints x with 4 significant digits, or as many more as tell it
// from y (a bound 0.0001154 s above a time of 0.0001154 s read as equal).
func distinctG(x, y float64) string {
	for prec := 4; prec < 17; prec++ {
		if s := strconv.FormatFloat(x, 'g', prec, 64); s != strconv.FormatFloat(y, 'g', prec, 64) {
			return s
		}
	}
	return strconv.FormatFloat(x, 'g', -1, 64)
}

// autoInputs is scheme auto's view of .npy inputs: the largest finite |x|
// of A and B (the range a candidate's split must hold) and the sample its
// accuracy is measured on — sm rows of A and sn columns of B, evenly
// spaced (a file's data may differ from block to block, where a
// distribution's does not), which the sample runs take from memory.
type autoInputs struct {
	max   float64   // the largest finite |x| of A and B
	key   string    // the input holding it: inputs.a or inputs.b
	a, b  []float32 // the sample: sm×k (A's rows), k×sn (B's columns)
	where string    // which rows and columns (the report's program.auto.sample)
	notes []string  // gemmInputs's notes on the files (autoChoice.inputNotes)
}

// readAutoInputs reads inputs.a and inputs.b whole (their range is every
// value's), after checking their shapes and that they fit in the host's
// memory, and takes the sample of sm rows and sn columns.
func readAutoInputs(f *File, p *GEMMParams, sm, sn int) (*autoInputs, error) {
	if err := checkInputs(f, p); err != nil { // their shapes, not yet their data
		return nil, err
	}
	// Read as float64 and rounded, autoReadBytesPerElem bytes an element
	// at the peak; the refusal quotes the run's whole estimate, which
	// counts the read (dataHostBytes).
	if read := float64(float64(float64(float64(p.M)*float64(p.K))+float64(float64(p.K)*float64(p.N))) * autoReadBytesPerElem); p.host.exceeds(read + runHostBytes) {
		return nil, p.host.refuse(f.badKey("inputs.a", "scheme auto reads the inputs whole for their range and sample: %d×%d and %d×%d elements need %s; name a scheme", p.M, p.K, p.K, p.N, p.host.overAll(p.host.est(read))))
	}
	a, b, notes, err := gemmInputs(f, p, nil)
	if err != nil {
		return nil, err
	}
	in := &autoInputs{key: "inputs.a", notes: notes}
	for _, x := range []struct {
		key string
		v   []float32
	}{{"inputs.a", a}, {"inputs.b", b}} {
		for _, v := range x.v {
			if m := math.Abs(float64(v)); m > in.max && !math.IsInf(m, 0) { // (NaN is never above)
				in.max, in.key = m, x.key
			}
		}
	}
	rows, cols := evenlySpaced(p.M, sm), evenlySpaced(p.N, sn)
	in.a = make([]float32, sm*p.K)
	for i, r := range rows {
		copy(in.a[i*p.K:(i+1)*p.K], a[r*p.K:(r+1)*p.K])
	}
	in.b = make([]float32, p.K*sn)
	for k := range p.K {
		for j, c := range cols {
			in.b[k*sn+j] = b[k*p.N+c]
		}
	}
	in.where = fmt.Sprintf("A's rows %s and B's columns %s, evenly spaced", spacedList(rows), spacedList(cols))
	return in, nil
}

// evenlySpaced returns k indices of 0..n−1 spread evenly, the first 0
// (every index where k = n).
func evenlySpaced(n, k int) []int {
	out := make([]int, k)
	for i := range out {
		out[i] = int(int64(i) * int64(n) / int64(k))
	}
	return out
}

// spacedList names evenly spaced indices: "0, 128, …, 8064" (all where
// there are at most three).
func spacedList(x []int) string {
	if len(x) <= 3 {
		return strings.Trim(strings.Join(strings.Fields(fmt.Sprint(x)), ", "), "[]")
	}
	return fmt.Sprintf("%d, %d, …, %d", x[0], x[1], x[len(x)-1])
}
