package programs

import (
	"errors"
	"reflect"
	"slices"
	"sync"

	"github.com/davinci-sim/davinci-sim/arch"
	"github.com/davinci-sim/davinci-sim/arch/gpu"
	"github.com/davinci-sim/davinci-sim/cluster"
	"github.com/davinci-sim/davinci-sim/fp"
	"github.com/davinci-sim/davinci-sim/isa"
	"github.com/davinci-sim/davinci-sim/machines"
	"github.com/davinci-sim/davinci-sim/ozaki"
)

// HostBytes estimates the host memory a run of f with opts holds at its
// peak, in bytes, and whether the program's kind has an estimate: for a
// sweep admitting points at once within a budget (sweep's --max-memory).
// It is the run's base, its data (dataHostBytes), its kernels' blocks on
// a GPU (blocksHostBytes) and its chip models (modelHostBytes:
// arch.Footprint of the run's machine, after the overrides, in the run's
// mode — the estimate the run refuses a chip model by, so that the two
// agree); for scheme auto at least what it holds while it measures its
// candidates on their sample and times them (autoBuildPeak: at k = 262144
// the samples take ~1 GB, its own run's estimate a fifth of it; timing,
// the kept run's chip beside the running one's). A program whose keys do not
// decode gives the run's base (its run refuses it at once).
//
// The estimate follows the builds' own computations (asmBudget,
// checkHostMemory) with bytes per element measured by peak RSS (2026-12,
// this 2-CPU box), per kind, scheme and machine (gemmPerElem): with
// numerics full ascend-910a hgemm 25 bytes per element of A, B and C and
// sgemm-cube 45 at 2048³ (beyond the run's 48 MiB), a100 hgemm 27,
// emulated-gemm markidis 48 and bf16x9 52; sampled hgemm 8192³ 6.3 per
// element of A and B; lu-fused full 36 per element of the n×n matrix at n
// = 4096; an asm program with three 512 MiB FP32 tensors, read back, 3.0
// GiB (its budget's estimate 4 GiB); any run with numerics off 25–40 MiB.
// It is the run's one estimate: every check of the run against its bound
// decides by its parts and a refusal quotes its total (runEstimate,
// hostBound.overAll), so a run refused under one bound is not refused
// again under the figure stated (TestMaxMemoryQuotedFigureRuns). Before
// 2026-12-04 the data checks had their own figures (a GEMM's 28, then the
// kind's), below the 48–104 this estimate counted, and each quoted its
// own: a 2048³ emulated GEMM on the 910A was refused at 60MiB as needing
// 384MiB, at 384MiB as 624MiB, at 624MiB for its chip model beside 1.3
// GiB, and ran at 1434MiB, peaking at 548 MB.
func HostBytes(f *File, opts Options) (int64, bool) {
	r := opts.estimateOf(f)
	e, ok := r.whole()
	if !ok {
		return 0, false
	}
	return int64(max(e.total(), autoBuildPeak(r, f, opts))), true
}

// hostEstimate is a run's estimate of its host memory at its peak, in
// bytes, in its parts: the run's base (runHostBytes), its data
// (dataHostBytes), its kernels' blocks on a GPU (blocksHostBytes; 0 in
// dataEstimate, which does not load the machine), of which blockData is
// what functional blocks keep, and its chip models (modelHostBytes).
// Every check of the run against its bound (--max-memory) decides by it
// and quotes its total (hostBound.overAll), so that a run given its total
// as its bound is refused by none of them.
type hostEstimate struct{ base, data, blocks, blockData, models float64 }

// beside returns the bytes the run holds beside its chip models: its
// base, data and blocks (what the run's bound must hold before a model
// gets room).
func (e hostEstimate) beside() float64 { return min(e.base+e.data+e.blocks, 1<<62) }

// total returns the whole estimate: base, data, blocks and chip models.
func (e hostEstimate) total() float64 { return min(e.base+e.data+e.blocks+e.models, 1<<62) }

// runEstimate estimates the host memory a run of f with opts holds
// (HostBytes, in its parts: runEstimates.whole).
func runEstimate(f *File, opts Options) (hostEstimate, bool) {
	return opts.estimateOf(f).whole()
}

// runEstimates is the estimate of a run's host memory, for every check of
// the run (its data's, its chip model's, an asm program's budget) and the
// refusals that quote it: the run's parameters, decoded once — the copy
// of its build's own decode (File.Decode: noteDecoded), else from the file
// parsed again —, its base and data, and its whole estimate, each computed
// where first asked and kept. Execute makes one a run (Options.est); the
// bound its checks hold is made once with it (host).
//
// Before 2026-12-04 each check decoded the parameters again (the data's,
// the chip's room beside its data in simulate, the chip's span, the whole
// estimate of a refusal): a study's probes (sweep's checkSet, a build
// each) spent 24–30 % of their time in that second decode.
type runEstimates struct {
	f    *File
	key  estimateKey // the options of the run (matches)
	opts Options
	host hostBound // the run's bound, with this estimate

	mu sync.Mutex
	// decoded is a copy of the parameters the run's build decoded
	// (noteDecoded), before the build changed them; nil until then.
	decoded any
	// reused says the parameters are that copy, not decoded again.
	reused bool
	// The figures, each once computed (its done).
	par                 any // (params)
	parErr              error
	parDone             bool
	dataEst, wholeEst   hostEstimate // (dataEstimate, whole)
	dataOK, wholeOK     bool
	dataDone, wholeDone bool
}

// estimateKey is what of a run's options its estimate depends on: a
// check made with other options (a run a build makes for its own
// purposes: scheme auto's candidates) estimates its own.
type estimateKey struct {
	machine, numerics, fidelity string
	maxHostBytes                int64
	overrides                   []machines.Override
}

func keyOf(o Options) estimateKey {
	return estimateKey{o.Machine, o.Numerics, o.Fidelity, o.MaxHostBytes, o.Overrides}
}

func (k estimateKey) equal(o estimateKey) bool {
	return k.machine == o.machine && k.numerics == o.numerics && k.fidelity == o.fidelity &&
		k.maxHostBytes == o.maxHostBytes && slices.Equal(k.overrides, o.overrides)
}

// newRunEstimates returns the estimate of a run of f with opts, nothing
// computed yet.
func newRunEstimates(f *File, opts Options) *runEstimates {
	opts.est = nil
	r := &runEstimates{f: f, key: keyOf(opts), opts: opts}
	r.host = hostBound{limit: opts.maxHostBytes(), run: r}
	return r
}

// matches reports whether r is the estimate of a run of f with opts.
func (r *runEstimates) matches(f *File, opts Options) bool {
	return r != nil && r.f == f && r.key.equal(keyOf(opts))
}

// estimateOf returns the estimate of a run of f with o: the run's own
// (o.est, set by Execute) where it is of f with these options, else a new
// one.
func (o Options) estimateOf(f *File) *runEstimates {
	r := o.est
	if !r.matches(f, o) {
		return newRunEstimates(f, o)
	}
	if o.machine != nil {
		r.mu.Lock()
		if r.opts.machine == nil {
			r.opts.machine = o.machine // (Execute loads it after making r)
		}
		r.mu.Unlock()
	}
	return r
}

// noteDecoded records a copy of out, the parameters of the run's file
// f decoded with opts (File.Decode) — the run's, where r is the run's
// estimate and out the kind's parameter struct —, for the estimate to
// take in place of decoding them again (params). The first decode of the
// run's file is the one recorded: a File serves one run, and its config
// holds that run's overrides since.
func (r *runEstimates) noteDecoded(f *File, out any, opts Options) {
	if !r.matches(f, opts) || f.Kind == nil || f.Kind.Params == nil || reflect.TypeOf(out) != reflect.PointerTo(f.Kind.Params) {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.decoded == nil && !r.parDone {
		r.decoded = cloneValue(reflect.ValueOf(out)).Interface()
	}
}

// paramsLocked returns the parameters of the run, the run's numerics
// applied (as its build applies them: Options.apply): the build's decode
// where noteDecoded recorded it, else decoded from the file parsed again
// (decodedParams). The caller holds r.mu; the parameters are only read.
func (r *runEstimates) paramsLocked() (any, error) {
	if r.parDone {
		return r.par, r.parErr
	}
	r.parDone = true
	params := r.decoded
	r.decoded = nil
	if f := r.f; f.Kind == nil || f.Kind.Params == nil || f.data == nil {
		params = nil // (decodedParams refuses them)
	}
	r.reused = params != nil
	if params == nil {
		var err error
		if params, err = decodedParams(r.f, r.opts); err != nil {
			r.parErr = err
			return nil, err
		}
	}
	if v := numericsField(params); v.IsValid() && r.opts.Numerics != "" {
		v.SetString(r.opts.Numerics)
	}
	r.par = params
	return params, nil
}

// params returns the parameters of the run (paramsLocked).
func (r *runEstimates) params() (any, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.paramsLocked()
}

// dataLocked returns the run's base and the host bytes of its data
// (dataHostBytes, on the run's machine where the figures depend on it:
// dataNeedsMachine): false where the kind has no estimate or the
// parameters do not decode (the run refuses them at once). The caller
// holds r.mu.
func (r *runEstimates) dataLocked() (hostEstimate, bool) {
	if r.dataDone {
		return r.dataEst, r.dataOK
	}
	r.dataDone = true
	params, err := r.paramsLocked()
	if err != nil {
		return r.dataEst, false
	}
	var m *machines.Machine
	if dataNeedsMachine(params) {
		if m = r.opts.machine; m == nil {
			m = loadRunMachine(r.f, r.opts).m
		}
	}
	data, ok := runDataOn(r.f, params, m)
	r.dataEst, r.dataOK = hostEstimate{base: runHostBytes, data: data}, ok
	return r.dataEst, r.dataOK
}

// dataEstimate returns the run's base and data (dataLocked): what its
// data's checks decide by, and what its chip models get room beside.
func (r *runEstimates) dataEstimate() (hostEstimate, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.dataLocked()
}

// whole returns the run's whole estimate (HostBytes, in its parts): its
// base, data and chip models (modelHostBytes, on the machine the run
// loads); false where the program's kind has no estimate; the base alone
// where its keys do not decode (the run refuses them at once).
func (r *runEstimates) whole() (hostEstimate, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.wholeDone {
		return r.wholeEst, r.wholeOK
	}
	r.wholeDone = true
	params, err := r.paramsLocked()
	if err != nil {
		r.wholeEst, r.wholeOK = hostEstimate{base: runHostBytes}, true
		return r.wholeEst, true
	}
	t := r.runMachine()
	// (The data on the machine loaded: the run's own, whose kind alone
	// its figures read — dataLocked's.)
	data, ok := runDataOn(r.f, params, t.m)
	if !ok {
		return r.wholeEst, false
	}
	blocks, blockData := blocksHostBytes(r.f, params, t)
	r.wholeEst = hostEstimate{base: runHostBytes, data: data, blocks: blocks, blockData: blockData,
		models: modelHostBytes(r.f, r.opts, params, t)}
	r.wholeOK = true
	return r.wholeEst, true
}

// runMachine returns the machine the run simulates (loadRunMachine): the
// one Execute loaded (Options.machine) on one chip.
func (r *runEstimates) runMachine() runMachine {
	if m := r.opts.machine; m != nil && ClusterMachine(r.f, r.opts) == "" {
		return runMachine{m: m}
	}
	return loadRunMachine(r.f, r.opts)
}

// cloneValue returns a deep copy of v: what its pointers, interfaces,
// slices and maps reach copied too, so that a build changing its
// parameters leaves the copy as they were decoded (unexported fields are
// copied as they are: a decode sets none).
func cloneValue(v reflect.Value) reflect.Value {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return v
		}
		c := reflect.New(v.Type().Elem())
		c.Elem().Set(cloneValue(v.Elem()))
		return c
	case reflect.Interface:
		if v.IsNil() {
			return v
		}
		c := reflect.New(v.Type()).Elem()
		c.Set(cloneValue(v.Elem()))
		return c
	case reflect.Slice:
		if v.IsNil() {
			return v
		}
		c := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		for i := range v.Len() {
			c.Index(i).Set(cloneValue(v.Index(i)))
		}
		return c
	case reflect.Map:
		if v.IsNil() {
			return v
		}
		c := reflect.MakeMapWithSize(v.Type(), v.Len())
		for it := v.MapRange(); it.Next(); {
			c.SetMapIndex(cloneValue(it.Key()), cloneValue(it.Value()))
		}
		return c
	case reflect.Array:
		c := reflect.New(v.Type()).Elem()
		for i := range v.Len() {
			c.Index(i).Set(cloneValue(v.Index(i)))
		}
		return c
	case reflect.Struct:
		c := reflect.New(v.Type()).Elem()
		c.Set(v)
		for i := range v.NumField() {
			if c.Field(i).CanSet() {
				c.Field(i).Set(cloneValue(v.Field(i)))
			}
		}
		return c
	}
	return v
}

// runDataOn estimates the host bytes of the data of a run of f with
// params (runEstimates.params) on machine m (nil: not known), capped far beyond any
// host.
func runDataOn(f *File, params any, m *machines.Machine) (float64, bool) {
	data, ok := dataHostBytes(f.Kind.Name, params, m)
	if p, asm := params.(*AsmParams); asm {
		data += asmParseHostBytes(f, p) // (with either numerics)
	}
	return min(data, 1<<62), ok
}

// runMachine is the machine a run simulates, after its overrides: on a
// cluster or node description its NPU (topo the system), else the run's
// machine; m nil where it does not load (the run refuses it at once).
type runMachine struct {
	m    *machines.Machine
	topo *cluster.Topology
}

// loadRunMachine loads the machine of a run of f with opts (runMachine).
func loadRunMachine(f *File, opts Options) runMachine {
	if name := ClusterMachine(f, opts); name != "" {
		topo, err := cluster.LoadSystem(name, opts.Overrides)
		if err != nil {
			return runMachine{}
		}
		m, err := loadClusterNPU(topo, opts.Overrides)
		if err != nil {
			return runMachine{}
		}
		return runMachine{m, topo}
	}
	g, err := f.Again() // (MachineFor records the run's machine in its file)
	if err != nil {
		return runMachine{}
	}
	m, err := MachineFor(g, opts)
	if err != nil {
		return runMachine{}
	}
	return runMachine{m: m}
}

// numericsField returns the Numerics field of params (decoded, a pointer
// to a kind's parameter struct), or the zero Value where it has none.
func numericsField(params any) reflect.Value {
	v := reflect.ValueOf(params)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return reflect.Value{}
	}
	if n := v.Elem().FieldByName("Numerics"); n.IsValid() && n.Kind() == reflect.String && n.CanSet() {
		return n
	}
	return reflect.Value{}
}

// modelHostBytes estimates the host memory of the chip models a run of f
// with opts (params decoded, the run's numerics applied) on its machine t
// (loadRunMachine) holds at once: arch.FootprintSpan of its machine with
// the run's machine.* overrides, in its mode — functional where its
// numerics are full (the model holds every buffer's bytes), timing
// otherwise —, for the span of global memory its tensors occupy
// (gmSpanBytes; the whole memory where it is not known), the estimate by
// which NewChip refuses a model past the run's bound; on a cluster or
// node description the NPU's model times the NPUs at fidelity full (all
// at once, as the cluster run checks), one timing model at fidelity
// isolated or sampled (each kernel alone). 0 where the machine does not
// load: the run refuses it at once.
func modelHostBytes(f *File, opts Options, params any, t runMachine) float64 {
	if t.m == nil {
		return 0
	}
	mode := runMode(params)
	models := 1.0
	span := int64(0) // (a cluster's NPUs: the whole memory)
	if t.topo != nil {
		fid := opts.Fidelity
		if p, ok := params.(*LUParams); ok && fid == "" {
			fid = p.Fidelity
		}
		if fid == "" || fid == "full" {
			models = float64(t.topo.NPUs())
		} else {
			mode = arch.Timing
		}
	} else {
		span = gmSpanBytes(f, f.Kind.Name, params, t.m)
	}
	per, err := arch.FootprintSpan(t.m, mode, span)
	if err != nil {
		return 0
	}
	return models * per
}

// runMode is the mode of a run with params (decoded, the run's numerics
// applied) as its estimate counts it: functional where its numerics are
// full, or not given (a kind without numerics: the larger), else timing;
// gpu-bench's timing (its job's).
func runMode(params any) arch.Mode {
	if _, bench := params.(*GPUBenchParams); bench {
		return arch.Timing // (its job's mode, whatever the options: gpuBenchJob.Mode)
	}
	if v := numericsField(params); v.IsValid() && v.String() != "" && v.String() != NumericsFull {
		return arch.Timing
	}
	return arch.Functional
}

// blocksHostBytes estimates the host memory the blocks of the kernels a
// run of f with params (decoded, the run's numerics applied) launches on
// its machine t take on a GPU, beside the chip model, which does not count
// them (modelHostBytes; arch/gpu BlockBytes): the block slots its kernels'
// blocks make on the cores (arch.SlotCores: a slot for each block a core
// holds at once, on as many cores as a kernel's blocks reach — a kernel
// of fewer blocks than the cores hold makes a slot per block) — each its
// queues, flags and the stream it reads —, and in a functional run the
// data a block keeps in its slot (its shared memory, a register file and
// accumulator store of the core's size), a slot's the most any functional
// kernel keeps there, on the cores the functional kernels make it on: as
// the grid scheduler counts them against the run's bound when it admits a
// grid (arch's admitStorage), so that a run given its estimate as its
// bound is not refused by its grids. The kernels are every kernel the
// build may launch (gpuKernels), every kind's on a GPU since 2026-12-05;
// where they do not plan (the run refuses it) every block slot of every
// core, without data. data is the part the blocks' data takes (what
// numerics off or sampled leave out). 0 on DaVinci machines, a cluster's
// NPUs, and where the machine does not load.
func blocksHostBytes(f *File, params any, t runMachine) (bytes, data float64) {
	if t.m == nil || t.topo != nil {
		return 0, 0
	}
	kernels, known := gpuKernels(f, params, t.m)
	if !known {
		per, ok := gpu.SlotsBytes(t.m)
		if !ok {
			return 0, 0 // (not a GPU)
		}
		return float64(t.m.Cores) * float64(per), 0
	}
	functional := runMode(params) == arch.Functional
	// By slot of a core: on how many cores a kernel makes it, on how many
	// a functional kernel does, and the most such a kernel's block keeps
	// there (admitStorage's count).
	type slotUse struct {
		cores, dataCores int
		data             int64
	}
	var slots []slotUse
	var slot int64
	for _, g := range kernels {
		n, s, d, ok := gpu.BlockBytes(t.m, g.Resources)
		if !ok {
			return 0, 0
		}
		slot = s
		for i := range n {
			k := arch.SlotCores(g.CTAs, t.m.Cores, i)
			if k == 0 {
				break
			}
			if i == len(slots) {
				slots = append(slots, slotUse{})
			}
			u := &slots[i]
			u.cores = max(u.cores, k)
			if functional && !g.TimingOnly { // (a block timed only keeps no data: the grid scheduler counts none)
				u.dataCores, u.data = max(u.dataCores, k), max(u.data, d)
			}
		}
	}
	made := 0.0
	for _, u := range slots {
		made += float64(u.cores)
		data += float64(float64(u.dataCores) * float64(u.data))
	}
	data = min(data, 1<<62)
	return min(float64(made*float64(slot))+data, 1<<62), data
}

// gpuKernels returns the kernels a run of f with params (decoded) may
// launch on machine m — their blocks, resources and whether they are
// timed only, no streams —, as its build plans them, and whether the
// estimate follows that build (the machine is a GPU and the plan does not
// refuse the run, which the run then refuses): the GPU GEMMs' one kernel
// (buildGPUGEMM: newGPUGEMMPlan of the kind's input format),
// emulated-gemm's native scheme (sgemm's), its FP32 schemes' split and
// product kernels (buildEmulatedScheme: emulatedJob.plan), ape-int16's
// (int16Kernels) and scheme auto's every candidate's (autoKernels);
// ozaki's for every plan its inputs may choose (ozakiKernels); lu-fused's
// as its host program launches them (luGPUKernels); gpu-bench's test
// (planGPUBench). TestBlocksHostBytesFollowKernels checks them against
// the kernels the builds launch.
func gpuKernels(f *File, params any, m *machines.Machine) ([]isa.Grid, bool) {
	tg, isGPU := newGPUTarget(m)
	if !isGPU {
		return nil, false
	}
	kind := f.Kind.Name
	switch p := params.(type) {
	case *GEMMParams:
		in, ok := map[string]fp.Format{"hgemm": fp.FP16, "sgemm": fp.FP32, "igemm": fp.INT8, "tf32gemm": fp.TF32, "dgemm": fp.FP64}[kind]
		if !ok {
			return nil, false
		}
		if p.Input != "" {
			if in != fp.FP16 {
				return nil, false // (the run refuses the key)
			}
			if in, ok = hgemmInputs[p.Input]; !ok {
				return nil, false
			}
		}
		return gemmKernel(*p, m, in)
	case *EmulatedParams:
		if kind != "emulated-gemm" {
			return nil, false
		}
		return emulatedKernels(p, m, tg)
	case *OzakiParams:
		return ozakiKernels(f, *p, m, tg)
	case *LUParams:
		return luGPUKernels(f, *p, m)
	case *GPUBenchParams:
		j, err := planGPUBench(*p, m, func(string, string, ...any) error { return errNoParams })
		if err != nil {
			return nil, false
		}
		return gridShapes(j.Program().Grids), true
	}
	return nil, false
}

// emulatedKernels is gpuKernels of emulated-gemm with params p on GPU
// machine m (tg).
func emulatedKernels(p *EmulatedParams, m *machines.Machine, tg *gpuTarget) ([]isa.Grid, bool) {
	switch p.Scheme {
	case "native":
		return gemmKernel(p.GEMMParams, m, fp.FP32)
	case "ape-int16":
		return int16Kernels(p.GEMMParams, m, tg)
	case "auto":
		return autoKernels(p, m, tg)
	}
	sp, err := decodeScheme(p.Scheme, func(string, string, ...any) error { return errNoParams })
	if err != nil || !tg.hasMatrix(sp.format) {
		return nil, false
	}
	q := p.GEMMParams // (gpuDefaults fills in defaults: the run's own copy is left as decoded)
	if err := q.gpuDefaults(""); err != nil {
		return nil, false
	}
	j := &emulatedJob{p: q, sp: sp, tg: tg}
	if err := j.plan(&File{}, m); err != nil {
		return nil, false
	}
	return gridShapes(j.Program().Grids), true
}

// autoKernels is gpuKernels of scheme auto (buildEmulatedAuto): the
// kernels of every candidate it may choose and build with the run's
// numerics — native, and each FP32 preset the machine's matrix units take
// with its split a pass and fused — as each one's own estimate follows
// them; a candidate that does not plan is not one (its timing run is
// refused). (The candidates' runs on the sample and their timing runs
// are runs of their own, with their own estimates.)
func autoKernels(p *EmulatedParams, m *machines.Machine, tg *gpuTarget) ([]isa.Grid, bool) {
	var grids []isa.Grid
	known := false
	add := func(scheme any) {
		q := *p
		q.Scheme = scheme
		if g, ok := emulatedKernels(&q, m, tg); ok {
			grids, known = append(grids, g...), true
		}
	}
	add("native")
	for _, name := range fp32SchemeNames() {
		add(name)
		add(Scheme{Name: name, Split: "fused"})
	}
	return grids, known
}

// ozakiKernels is gpuKernels of ozaki on a GPU (buildOzaki, ozakiJob's
// layout and Program): the kernels of every plan the run's inputs may
// choose (ozakiPlans).
func ozakiKernels(f *File, op OzakiParams, m *machines.Machine, tg *gpuTarget) ([]isa.Grid, bool) {
	var grids []isa.Grid
	ok := ozakiPlans(f, op, m, tg, func(j *ozakiJob) { grids = append(grids, gridShapes(j.Program().Grids)...) })
	return grids, ok
}

// ozakiPlans calls each with the job of every plan of ozaki a run's inputs
// may choose on GPU m, laid out — with numerics on, ADP's precision
// dynamic takes from mantissa_bits' slices up to max_mantissa_bits' (bits
// + ESC), and precision forced or dynamic (ozaki-ii: any) falls back to
// the native DGEMM on Inf or NaN (dynamic also past the cap); with
// numerics off the slices are mantissa_bits' (or slices) —, and returns
// whether it could (false where the run refuses its plan). f is the run's
// file (the parameters' checks read which keys it gives).
func ozakiPlans(f *File, op OzakiParams, m *machines.Machine, tg *gpuTarget, each func(j *ozakiJob)) bool {
	p := &op.GEMMParams
	if err := p.gpuDefaults(""); err != nil || !tg.hasMatrix(fp.INT8) {
		return false
	}
	if err := ozakiCheckParams(f, &op); err != nil {
		return false
	}
	j := &ozakiJob{file: f.Path, p: op, tg: tg, mach: m, alpha: 1}
	if op.Alpha != nil {
		j.alpha = *op.Alpha
	}
	numerics := p.Numerics != NumericsOff
	type plan struct {
		slices   int
		fallback bool
	}
	var plans []plan
	if op.Method == ozakiII {
		j.slices, _ = op.slicesAndBits()
		if err := j.chooseModuli(func(string, string, ...any) error { return errNoParams }); err != nil {
			return false
		}
		plans = append(plans, plan{})
		if numerics {
			plans = append(plans, plan{fallback: true})
		}
	} else {
		s, _ := op.slicesAndBits()
		plans = append(plans, plan{slices: s})
		if numerics && op.Precision != ozakiFixed {
			plans = append(plans, plan{slices: s, fallback: true}) // (the slices it started from: buildOzaki's)
		}
		if numerics && op.Precision == ozakiDynamic {
			top, err := ozaki.SlicesFor(op.MaxMantissaBits)
			if err != nil {
				return false
			}
			for t := s + 1; t <= top; t++ {
				plans = append(plans, plan{slices: t})
			}
		}
	}
	for i, pl := range plans {
		j.fallback = pl.fallback
		if op.Method != ozakiII {
			j.slices = pl.slices
		}
		if err := j.layout(); err != nil {
			if i == 0 {
				return false // (the run refuses it)
			}
			continue // (a plan the inputs may not choose: its run would be refused then)
		}
		each(j)
	}
	return true
}

// luGPUKernels is gpuKernels of lu-fused on a GPU: the grids its host
// program launches (planLUGPU's plan, buildGPUHost's schedule, recorded
// by luKernelLog). Not on DaVinci machines (no grids).
func luGPUKernels(f *File, p LUParams, m *machines.Machine) ([]isa.Grid, bool) {
	if m.Kind == "davinci" || p.checkOneChip(f.Path, m) != nil {
		return nil, false
	}
	if p.NB == 0 {
		p.NB = DefaultNB // (buildLUGPU decodes onto it)
	}
	j, err := planLUGPU(f, p, m)
	if err != nil {
		return nil, false
	}
	var log luKernelLog
	j.buildGPUHost(&log)
	return log.grids, true
}

// luKernelLog records the grids a host program launches (luGPUHost), as
// gridShape, running none of its steps.
type luKernelLog struct{ grids []isa.Grid }

func (l *luKernelLog) LaunchGrid(name, zone string, g isa.Grid, after ...*arch.Kernel) *arch.Kernel {
	l.grids = append(l.grids, gridShape(g))
	return &arch.Kernel{Name: name, Zone: zone}
}

func (l *luKernelLog) Wait(string, ...*arch.Kernel)                            {}
func (l *luKernelLog) Call(string, func() error)                               {}
func (l *luKernelLog) Transfer(string, int64, func() error)                    {}
func (l *luKernelLog) Compute(string, float64, int64, bool, int, func() error) {}

// gridShapes is gridShape of each of gs.
func gridShapes(gs []isa.Grid) []isa.Grid {
	out := make([]isa.Grid, len(gs))
	for i, g := range gs {
		out[i] = gridShape(g)
	}
	return out
}

// int16Kernels is gpuKernels of emulated-gemm's ape-int16 scheme on a
// GPU (buildEmulatedInt16): its split, its four INT8 GEMMs of one plan
// and its recombination.
func int16Kernels(p GEMMParams, m *machines.Machine, tg *gpuTarget) ([]isa.Grid, bool) {
	if !tg.hasMatrix(fp.INT8) {
		return nil, false
	}
	gemm, ok := gemmKernel(p, m, fp.INT8)
	if !ok {
		return nil, false
	}
	j := &int16Job{p: p, tg: tg}
	threads := tg.threads(streamWarps)
	blocks := func(n int, at func(int) streamBlock) isa.Grid {
		return gridShape(streamGrid(tg, p.Kind, n, at))
	}
	grids := []isa.Grid{blocks(j.splitBlocks(streamChunk, threads))}
	for range int16Products {
		grids = append(grids, gemm...)
	}
	return append(grids, blocks(j.recombineBlocks(streamChunk, threads))), true
}

// gemmKernel is gpuKernels of a GPU GEMM of params p with inputs of
// format in (buildGPUGEMMFrom's plan).
func gemmKernel(p GEMMParams, m *machines.Machine, in fp.Format) ([]isa.Grid, bool) {
	if err := p.gpuDefaults(""); err != nil { // (p is a copy: the run's own is left as decoded)
		return nil, false
	}
	pl, err := newGPUGEMMPlan("", p, m, in, gpuShape{})
	if err != nil {
		return nil, false
	}
	return []isa.Grid{gridShape(pl.grid())}, true
}

// gridShape is g without its blocks' streams: what the estimate counts
// (name, blocks, resources, timed only).
func gridShape(g isa.Grid) isa.Grid {
	return isa.Grid{Name: g.Name, CTAs: g.CTAs, Resources: g.Resources, TimingOnly: g.TimingOnly}
}

// gmSpanOf returns the bytes of global memory a run of f with opts on
// machine m lays its tensors out in (gmSpanBytes, of the parameters the
// run's estimate holds: runEstimates.params), 0 where that is not known
// or the program's keys do not decode: the span to give its chip
// (arch.Options.GMSpan), whose caches' where indexes then take no more
// than modelHostBytes counts.
func gmSpanOf(f *File, opts Options, m *machines.Machine) int64 {
	params, err := opts.estimateOf(f).params()
	if err != nil {
		return 0
	}
	return gmSpanBytes(f, f.Kind.Name, params, m)
}

// gmSpanBytes returns the bytes of global memory from address 0 in which
// a run of kind with params (decoded) on machine m lays out its tensors,
// as its build does before the run — the span its caches' where indexes
// grow over (arch.FootprintSpan: a byte per 128-byte tag of it in each
// directory, where gm.capacity counted 128 MiB a directory, MI300X's nine
// 1.1 GiB) —, or 0 where the layout is not followed here: then the whole
// memory counts. The GPU GEMMs (newGPUGEMMPlan: A, B and C) and the
// emulated GEMMs on GPUs (buildEmulatedScheme: FP32 A and B, the pieces a
// split pass writes, C; ape-int16's pieces, sums, planes and INT64 C;
// scheme auto the largest of its candidates'), ozaki (the largest of the
// plans its inputs may choose: ozakiPlans), lu-fused on a GPU (its
// plan's matrices) and gpu-bench (a memory test's array; the others read
// none); not yet the LUs on DaVinci machines or clusters.
// TestGMSpanCoversRun checks it against how far runs reach.
func gmSpanBytes(f *File, kind string, params any, m *machines.Machine) int64 {
	tg, gpu := newGPUTarget(m)
	if !gpu {
		return 0
	}
	switch p := params.(type) {
	case *OzakiParams:
		var end int64 // (the largest of its plans')
		if !ozakiPlans(f, *p, m, tg, func(j *ozakiJob) { end = max(end, j.gmEnd) }) {
			return 0
		}
		return end
	case *LUParams:
		if p.checkOneChip(f.Path, m) != nil { // (a GPU here: newGPUTarget)
			return 0
		}
		q := *p
		if q.NB == 0 {
			q.NB = DefaultNB // (as luGPUKernels)
		}
		j, err := planLUGPU(f, q, m)
		if err != nil {
			return 0
		}
		return j.pl.gmEnd
	case *GPUBenchParams:
		j, err := planGPUBench(*p, m, func(string, string, ...any) error { return errNoParams })
		if err != nil {
			return 0
		}
		return max(j.memSize, 1) // (the memory tests' array from address 0; the others read none)
	case *GEMMParams:
		in, out := map[string]int64{"hgemm": 2, "sgemm": 4, "tf32gemm": 4, "dgemm": 8, "igemm": 1}[kind], int64(4)
		switch {
		case in == 0:
			return 0
		case kind == "hgemm" && (p.Input == "e4m3" || p.Input == "e5m2"):
			in = 1
		case kind == "dgemm":
			out = 8
		}
		return gpuGEMMSpan(p, in, in, out)
	case *EmulatedParams:
		if kind != "emulated-gemm" {
			return 0
		}
		return emulatedSpan(p)
	}
	return 0
}

// spanLayout lays tensors out one after the other from address 0, each
// aligned as the builds align them: at is the span so far.
type spanLayout struct{ at, align int64 }

func (l *spanLayout) next(bytes int64) {
	l.at = (l.at + max(bytes, 0) + l.align - 1) &^ (l.align - 1)
}

// gpuGEMMSpan is the span of a GPU GEMM's A, B and C of a, b and c bytes
// an element (newGPUGEMMPlan).
func gpuGEMMSpan(p *GEMMParams, a, b, c int64) int64 {
	mk, kn, mn := gemmElems(p)
	l := spanLayout{align: 512}
	l.next(a * mk)
	l.next(b * kn)
	return l.at + c*mn
}

// gemmElems returns the elements of a GEMM's A, B and C (none for a
// negative size: the run refuses it).
func gemmElems(p *GEMMParams) (mk, kn, mn int64) {
	m, k, n := int64(max(p.M, 0)), int64(max(p.K, 0)), int64(max(p.N, 0))
	return m * k, k * n, m * n
}

// emulatedSpan is gmSpanBytes of an emulated GEMM on a GPU: scheme native
// is sgemm's kernel, ape-int16 its INT16 layout (buildEmulatedInt16),
// auto the largest of its candidates', the others FP32 A and B, the
// pieces a split pass writes and FP32 C (buildEmulatedScheme).
func emulatedSpan(p *EmulatedParams) int64 {
	mk, kn, mn := gemmElems(&p.GEMMParams)
	switch p.Scheme {
	case "native":
		return gpuGEMMSpan(&p.GEMMParams, 4, 4, 4)
	case "ape-int16":
		l := spanLayout{align: 512}
		for _, b := range []int64{2 * mk, 2 * kn, mk, mk, kn, kn, 8 * int64(max(p.M, 0)), 8 * int64(max(p.N, 0)), 16 * mn, 8 * mn} {
			l.next(b)
		}
		return l.at
	case "auto":
		var most int64
		for _, name := range fp32SchemeNames() {
			q := *p
			q.Scheme = name
			most = max(most, emulatedSpan(&q))
		}
		return max(most, gpuGEMMSpan(&p.GEMMParams, 4, 4, 4))
	}
	sp, err := decodeScheme(p.Scheme, func(string, string, ...any) error { return errNoParams })
	if err != nil {
		return 0
	}
	l := spanLayout{align: 512}
	l.next(4 * mk)
	l.next(4 * kn)
	if sp.s.Split == "pass" {
		es := int64(sp.format.Bytes())
		for range sp.nA {
			l.next(es * mk)
		}
		for range sp.nB {
			l.next(es * kn)
		}
	}
	l.next(4 * mn)
	return l.at
}

// errNoParams: a kind whose programs have no parameter struct.
var errNoParams = errors.New("no parameters")

// decodedParams returns f's parameters decoded with the overrides of
// opts, from the file parsed again (Decode writes the overrides into its
// file's config, which the run's own Decode then applies once more).
func decodedParams(f *File, opts Options) (any, error) {
	if f.Kind == nil || f.Kind.Params == nil || f.data == nil {
		return nil, errNoParams
	}
	g, err := f.Again()
	if err != nil {
		return nil, err
	}
	params := reflect.New(f.Kind.Params).Interface()
	if err := g.Decode(params, opts); err != nil {
		return nil, err
	}
	return params, nil
}

// Parts of the estimate of a point's host memory.
const (
	// runHostBytes is what any run holds besides its data and its chip
	// models (modelHostBytes): the Go runtime, the program's streams, the
	// simulation's state (numerics off, chip model included: 25–40 MiB).
	runHostBytes = 48 << 20
	// gemmBytesPerElem is a GEMM's host bytes per element of A, B and C
	// with numerics full (the inputs, their copies in simulated GM and
	// their pieces, C, the golden model's C and tiles): the kinds of one
	// product on any machine (their checks had taken 28, dgemm 32, where
	// this estimate took 48 for all), emulated-gemm's scheme native, and
	// its FP32 schemes and ape-int16 on DaVinci (their check 48, where
	// this estimate took GPUs' 104). Peak RSS beyond the run's 48 MiB:
	// ascend-910a sgemm-cube 45 at 2048³ and 37 at 4096³, hgemm 25 at
	// 2048³, emulated-gemm le-gemm 40; a100 hgemm 27 at 2048³ and 33 at
	// 4530³ (the collector's default pacing), ape-int16 45 at 2048³.
	// 2026-12-04, 2048³, beyond the base and the chip model's estimate
	// (/usr/bin/time -v, one run at a time): ascend-910a hgemm 27.5 (437
	// MiB peak), emulated-gemm ootomo 33.7 (511 MiB; 546 MiB under
	// --max-memory 684MiB, its estimate); a100 dgemm at most 30 beyond
	// the base alone (406 MiB, the model included).
	gemmBytesPerElem = 48
	// luBytesPerElem is lu-fused's and lu-gemm's host bytes per element of
	// the n×n matrix with numerics full or sampled (measured 36 before the
	// golden model ran beside the simulation; at n = 4096 with check: true
	// since, 2026-12-02, 37.8 on one 910A and 40.3 on a node, besides the
	// base and the chip models).
	luBytesPerElem = 44
	// autoReadBytesPerElem is scheme auto's host bytes per element of A
	// and B given as files, which it reads whole (as float64, rounded)
	// for their range and sample before any candidate runs (numerics off
	// too).
	autoReadBytesPerElem = 12
)

// perElem are a GEMM's host bytes per element of A, B and C with numerics
// full, and per element of A and B with numerics sampled.
type perElem struct{ full, sampled float64 }

func (a perElem) max(b perElem) perElem {
	return perElem{max(a.full, b.full), max(a.sampled, b.sampled)}
}

// gemmPerElem returns the host bytes per element of a GEMM kind's run
// with params (decoded) on machine m — nil where it does not load: the
// largest of the kind's — as its build allocates (its data's part of
// HostBytes and of every check of the run's host memory against its
// bound, checkHostMemory). Only emulated-gemm's figures depend on the
// machine (dataNeedsMachine).
func gemmPerElem(kind string, params any, m *machines.Machine) perElem {
	switch p := params.(type) {
	case *OzakiParams:
		// Inputs, digits, C and the INT32 planes on the host (full), the
		// inputs and digits (sampled): measured 85 B per element of A, B
		// and C at 2048³ and 94 at 16×300000×16 (b200, full; peak RSS);
		// ascend-910a 2048³ 69 beyond the base and the chip model's
		// estimate (932 MiB peak, 2026-12-04).
		return perElem{ozakiHostBytesPerElem, ozakiHostBytesPerElem / 2}
	case *EmulatedParams:
		return emulatedPerElem(p, m)
	}
	if kind == "dgemm" {
		// FP64 inputs, their GM copies, an FP64 C and its reference:
		// sampled twice the FP32 figure.
		return perElem{gemmBytesPerElem, 2 * sampledBytesPerElem}
	}
	return perElem{gemmBytesPerElem, sampledBytesPerElem}
}

// dataNeedsMachine says whether the data's estimate of a run with params
// (dataHostBytes) depends on its machine: emulated-gemm's schemes split
// on DaVinci's vector unit or in GPU kernels (schemePerElem). The others'
// do not, and their estimate loads no machine.
func dataNeedsMachine(params any) bool {
	_, ok := params.(*EmulatedParams)
	return ok
}

// emulatedPerElem is gemmPerElem of kind emulated-gemm: scheme native is
// sgemm's kernel, ape-int16 its INT16 pieces (a100 45 at 2048³; sampled
// not measured: half), auto the largest of its candidates', the FP32
// schemes schemePerElem.
func emulatedPerElem(p *EmulatedParams, m *machines.Machine) perElem {
	switch p.Scheme {
	case "native":
		return perElem{gemmBytesPerElem, sampledBytesPerElem}
	case "ape-int16":
		return perElem{gemmBytesPerElem, gemmBytesPerElem / 2}
	case "auto":
		most := perElem{gemmBytesPerElem, sampledBytesPerElem} // (native)
		for _, name := range fp32SchemeNames() {
			most = most.max(schemePerElem(name, m))
		}
		return most
	}
	return schemePerElem(p.Scheme, m)
}

// schemePerElem is gemmPerElem of an FP32 emulation scheme (a preset's
// name or a section) on machine m: on DaVinci gemmBytesPerElem (the split
// is a pass on the vector unit; sampled as a GEMM's); on GPUs 32 + 12
// bytes a piece (a100, full, peak RSS: markidis 45 at 16×16×1048576 and 54
// at 1024³, bf16x9 41), sampled 10 + 4 a piece (15.9 for two pieces at
// 8192³). A scheme that does not resolve counts its most pieces, 4
// (resolveScheme); an unknown machine the larger of the two.
func schemePerElem(scheme any, m *machines.Machine) perElem {
	davinci := perElem{gemmBytesPerElem, sampledBytesPerElem}
	pieces := 4.0
	if sp, err := decodeScheme(scheme, func(string, string, ...any) error { return errNoParams }); err == nil {
		pieces = float64(len(sp.s.Pieces))
	}
	gpu := perElem{32 + float64(12*pieces), 10 + float64(4*pieces)} // (each product rounded: no fused multiply-add on arm64)
	switch {
	case m == nil:
		return gpu.max(davinci)
	case m.DaVinci() != nil:
		return davinci
	}
	return gpu
}

// dataHostBytes estimates the host bytes a run of kind with params
// (decoded) on machine m (nil where it does not load) holds for its data;
// false for a kind it does not know.
func dataHostBytes(kind string, params any, m *machines.Machine) (float64, bool) {
	switch p := params.(type) {
	case *AsmParams:
		if p.Numerics == NumericsOff {
			return 0, true
		}
		// As asmBudget: the GM pages of the tensors, the outputs read
		// back, the largest tensor's staging (its float32 values and its
		// bytes; a .npy file of float64 read whole).
		var gm, out, staging float64
		for _, t := range p.GM {
			n, b := arrayElems(t.Array)
			gm += float64(n * b)
			st := float64(n * (4 + b))
			if t.Init == "npy" {
				st += float64(8 * n)
			}
			staging = max(staging, st)
		}
		for _, a := range p.Outputs {
			n, b := arrayElems(a)
			out += float64(n * b)
		}
		return gm + out + staging, true
	case *GEMMParams:
		return gemmBytes(p, gemmPerElem(kind, p, m)), true
	case *EmulatedParams:
		data := gemmBytes(&p.GEMMParams, gemmPerElem(kind, p, m))
		if p.Scheme == "auto" && p.Inputs.A != "" {
			mk, kn, _ := gemmElems(&p.GEMMParams)
			data = max(data, float64(mk+kn)*autoReadBytesPerElem)
		}
		return data, true
	case *OzakiParams:
		return gemmBytes(&p.GEMMParams, gemmPerElem(kind, p, m)), true
	case *LUParams:
		return luBytes(p.Numerics, p.N), true
	case *LUGEMMParams:
		return luBytes(p.Numerics, p.M), true
	case *GPUBenchParams:
		return 0, true // (timed only: no data)
	}
	return 0, false
}

// gemmBytes estimates a GEMM's data bytes with per's figures
// (dataHostBytes).
func gemmBytes(p *GEMMParams, per perElem) float64 {
	m, k, n := float64(max(p.M, 0)), float64(max(p.K, 0)), float64(max(p.N, 0))
	switch p.Numerics {
	case "", NumericsFull:
		return (float64(m*k) + float64(k*n) + float64(m*n)) * per.full
	case NumericsSampled:
		return (float64(m*k) + float64(k*n)) * per.sampled
	}
	return 0
}

// luBytes estimates an LU's data bytes for an n×n matrix (dataHostBytes).
func luBytes(numerics string, n int) float64 {
	if numerics == NumericsOff {
		return 0
	}
	return float64(max(n, 0)) * float64(max(n, 0)) * luBytesPerElem
}

// arrayElems returns an asm array's elements and bytes per element.
func arrayElems(a Array) (elems, bytes float64) {
	elems = 1
	for _, d := range a.Shape {
		elems *= float64(max(d, 0))
	}
	bytes = 4
	if a.DType == "fp16" {
		bytes = 2
	}
	return elems, bytes
}
