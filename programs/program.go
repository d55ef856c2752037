// Package programs holds the program generators — the kinds a program file
// can name (asm, sgemm-cube, hgemm, …) — with their YAML schemas, the
// golden reference models the tests compare against, and the example files
// under programs/examples/. A generator plays the role of a kernel
// compiler: it turns algorithm parameters into per-core instruction streams
// and initial GM contents; it never computes the answer itself.
package programs

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/davinci-sim/davinci-sim/arch"
	_ "github.com/davinci-sim/davinci-sim/arch/amd" // the core models of the machine kinds, for the programs generated here
	_ "github.com/davinci-sim/davinci-sim/arch/davinci"
	_ "github.com/davinci-sim/davinci-sim/arch/nvidia"
	"github.com/davinci-sim/davinci-sim/badinput"
	"github.com/davinci-sim/davinci-sim/cluster"
	"github.com/davinci-sim/davinci-sim/isa"
	"github.com/davinci-sim/davinci-sim/machines"
	"github.com/davinci-sim/davinci-sim/report"
)

// Examples holds the example program files (programs/examples/*.yaml).
//
//go:embed examples
var Examples embed.FS

// DefaultMachine is used when neither -m nor the program file names one.
const DefaultMachine = "ascend-910a"

// Numerics modes of a run.
const (
	NumericsFull    = "full"    // every result bit-accurate
	NumericsSampled = "sampled" // timing for everything, numerics for a sample of output tiles
	NumericsOff     = "off"     // timing only
)

// ErrCheckFailed wraps a failed correctness check of a completed run
// (report still written; exit code 1).
var ErrCheckFailed = errors.New("check failed")

// modeFor returns the chip mode of a numerics setting: only full numerics
// moves data (sampled computes its tiles with the golden model afterwards).
func modeFor(numerics string) arch.Mode {
	if numerics == NumericsFull {
		return arch.Functional
	}
	return arch.Timing
}

// Options are the run-time choices that are not program parameters.
type Options struct {
	// Machine overrides the program's machine (name or file); "" keeps it.
	Machine string
	// Overrides are --set values (program.* and machine.*).
	Overrides []machines.Override
	// Numerics overrides the program's numerics mode; "" keeps it.
	Numerics string
	// NumericsFrom says where Numerics came from, for a refusal of it
	// ("--numerics", "--fidelity sampled"); "" names no flag.
	NumericsFrom string
	// Seed overrides the program's seed when non-nil.
	Seed *int64
	// Fidelity overrides a cluster run's fidelity (full, isolated,
	// sampled); "" keeps the program's.
	Fidelity string
	// FastForward, when not nil, skips repeated waves of kernel grids
	// (arch.FastForward; timing-only GPU runs). The report's notes list
	// the skips.
	FastForward *arch.FastForward
	// KBatch > 1 makes GPU GEMM kernels simulate that many k-steps of a
	// CTA as one (timing only; --k-batch, gpuGEMMPlan.batchKSteps; at
	// most MaxKBatch).
	KBatch int
	// MaxHostBytes bounds the host memory a run may take by its estimate —
	// its base, its data and its chip model(s) together, as HostBytes sums
	// them — checked before anything large is allocated (--max-memory);
	// 0 takes DefaultMaxHostBytes.
	MaxHostBytes int64
	// given, where set, are the inputs of a run scheme auto makes to
	// measure a candidate's accuracy on its sample of .npy inputs
	// (File.given; runAgain).
	given *givenInputs
	// run is the hooks of the Execute building the program (set there):
	// the runs a build makes for its own purposes (scheme auto's
	// candidates) stop with its Context and show their progress (subRun).
	run *RunHooks
	// samplingAudit, where set (by tests), has a cluster run of fidelity
	// sampled also simulate every kernel it predicts, and sums both times
	// per rank into it: the estimator's own error, which the run's
	// interval claims to bound.
	samplingAudit *luSamplingAudit
	// machine, where set (by Execute, on one chip), is the run's machine
	// as loaded with its overrides: the estimate of the run's data
	// (runEstimates) takes its kind from it instead of loading it again —
	// every build's check did (emulated-gemm: a study's probes of its set
	// took twice as long).
	machine *machines.Machine
	// est, where set (by Execute), is the run's estimate of its host
	// memory, shared by every check of the run (runEstimates): its
	// parameters as the build decoded them (File.Decode records a copy)
	// and its figures, each computed once.
	est *runEstimates
}

// MaxKBatch is the largest Options.KBatch.
const MaxKBatch = 64

// apply writes the run's numerics and seed overrides, when given, into a
// program's parameters.
func (o Options) apply(numerics *string, seed *int64) {
	if o.Numerics != "" {
		*numerics = o.Numerics
	}
	if o.Seed != nil && seed != nil {
		*seed = *o.Seed
	}
}

// kBatchMeasured is how far batched k-steps moved the times compared with
// the full simulation (docs/design-notes.md, "Batched k-steps";
// TestKBatchNearFull).
const kBatchMeasured = "against the full simulation SGEMM 8192³ on eight GPUs was within 0.03 % in batches of 8 (within 0.05 % in batches of 16, fast-forwarded; 4096³ and three other shapes within 0.41 % in batches of 8 or 16, up to 0.8 % in batches of 32), but V100 SGEMM 4096³ +7.6 % (that shape alone: 4096×4096×2048 −0.15 %, ×8192 −0.008 %)"

// applyGEMM is apply for the parameters of a GEMM of file f, with the
// run's k-batch and its bound on its host memory (with its estimate).
func (o Options) applyGEMM(f *File, p *GEMMParams) {
	o.apply(&p.Numerics, &p.Inputs.Seed)
	p.kBatch = o.KBatch
	p.seedFlag = o.Seed != nil
	p.host = o.hostFor(f)
}

// applyLU is apply for the parameters of an LU of file f, with the run's
// bound on its host memory (with its estimate).
func (o Options) applyLU(f *File, p *LUParams) {
	o.apply(&p.Numerics, &p.Seed)
	p.host = o.hostFor(f)
}

// Output is a named result array, written as NAME.npy with -o.
type Output struct {
	Name  string
	Shape []int
	F32   []float32
	F64   []float64
	F16   []uint16
	I32   []int32
	I8    []int8
}

// Job is a program bound to a machine: ready to run.
type Job interface {
	// Program returns the per-core instruction streams.
	Program() isa.Program
	// Mode returns whether the chip must move real data.
	Mode() arch.Mode
	// Prepare places the initial GM contents.
	Prepare(chip *arch.Chip) error
	// Finish reads results back, computes errors and fills the program's
	// parts of the report (program parameters, flops, error, sections).
	Finish(chip *arch.Chip, st *arch.Stats, rep *report.Report) error
	// Outputs returns the arrays written with -o (after Finish).
	Outputs() []Output
}

// Kind is a program kind.
type Kind struct {
	Name    string
	Summary string
	Example string // path under programs/examples
	// Machines are the machine kinds the program kind runs on (generated
	// the way each kind's kernels are written).
	Machines []string
	// Build decodes the program's parameters (cfg, with program.*
	// overrides) and returns the job for machine m (of one of Machines).
	Build func(f *File, m *machines.Machine, opts Options) (Job, error)
	// BuildCluster, if not nil, builds the job of a run on a cluster or
	// node description (package cluster): the kind runs on many NPUs.
	BuildCluster func(f *File, topo *cluster.Topology, opts Options) (ClusterJob, error)
	// KBatch: on GPU machines its GEMM kernels honour Options.KBatch
	// (--k-batch).
	KBatch bool
	// Params is the struct a file of the kind decodes into (its keys:
	// docs/formats.md, davinci-sim formats).
	Params reflect.Type
	// Omit lists keys of Params (and sections: their keys) that programs
	// of the kind never take — they are refused where given — so that
	// Keys leaves them out (ozaki's baselines, the DaVinci-only GEMM keys
	// of a kind that runs on GPUs only).
	Omit []string
	// Sections maps keys of Params that take a name or a section (an any
	// field: emulated-gemm's scheme) to the section's type: Keys lists its
	// keys under them, --set takes them (program.scheme.split), and a
	// section given there is decoded to that type and checked as the
	// file's other keys (machines.Config.SetSections).
	Sections map[string]reflect.Type
	// SectionPresets gives, for a section of Sections, the whole value a
	// name there stands for (emulated-gemm's scheme presets), so that
	// --set reaches an entry of one of its lists
	// (program.scheme.pieces[1].scale; machines.Config.SetSectionPresets).
	SectionPresets map[string]func(name string) (map[string]any, bool)
	// NumericsModes are the numerics the kind takes (nil: full, sampled
	// and off), checked in the file also where --numerics replaces it.
	NumericsModes []string
	// NoArrays: runs of the kind write no result arrays with -o, whatever
	// the numerics (the LU kinds: their results are the report's).
	NoArrays bool
	// Written: programs of the kind give their own instruction streams
	// (asm), checked as written (isa.Check) — not against what the
	// simulator's generated kernels need of the machine (generatorNeeds).
	Written bool
	// FlagIDs is the flag ids per pipe pair the kind's generated DaVinci
	// kernels use (0: generatorFlagIDs).
	FlagIDs int
}

// Keys returns the keys programs of the kind take (as davinci-sim formats
// lists them).
func (k *Kind) Keys() []machines.Key {
	if k.Params == nil {
		return nil
	}
	var keys []machines.Key
	for _, key := range machines.Keys(k.Params) {
		keys = append(keys, key)
		if t, ok := k.Sections[key.Path]; ok { // a name, or a section of these keys
			for _, sub := range machines.Keys(t) {
				keys = append(keys, machines.Key{Path: key.Path + "." + sub.Path, Type: sub.Type})
			}
		}
	}
	return slices.DeleteFunc(keys, func(key machines.Key) bool {
		return slices.ContainsFunc(k.Omit, func(o string) bool { return key.Path == o || strings.HasPrefix(key.Path, o+".") })
	})
}

var kinds = map[string]*Kind{}

// BuildFor is Build after checking that the program kind runs on m's
// machine kind.
func (k *Kind) BuildFor(f *File, m *machines.Machine, opts Options) (Job, error) {
	if !slices.Contains(k.Machines, m.Kind) {
		return nil, fmt.Errorf("%s: program kind %s runs on %s machines; machine %s is %s (see davinci-sim machines)",
			f.Path, k.Name, strings.Join(k.Machines, ", "), m.Name, m.Kind)
	}
	if !k.Written {
		if err := generatorNeeds(k, m, machineKeyOrigin(machineRef(f, opts), opts.Overrides)); err != nil {
			return nil, err
		}
	}
	return k.Build(f, m, opts)
}

// generatorFlagIDs is the flag ids per pipe pair the DaVinci generators
// use, ids 0–2: the B buffers' ids 1 and 2 (fB, luFB). Emulated-gemm's
// outside accumulators take ids 2 and 3 of M↔V besides (fOutC): its kind
// says 4 (Kind.FlagIDs).
const generatorFlagIDs = 3

// generatorNeeds refuses a DaVinci machine m too small for the simulator's
// generated kernels of kind (origin names m's keys in messages). Generated
// streams are not checked instruction by instruction (isa.Check): a flag
// id past the machine's would land on another pipe pair's counter, and the
// kernels race — a wrong C, a wrong LU, silently.
func generatorNeeds(k *Kind, m *machines.Machine, origin func(key string) string) error {
	need := generatorFlagIDs
	if k.FlagIDs > 0 {
		need = k.FlagIDs
	}
	dv := m.DaVinci()
	if dv == nil || dv.FlagIDs >= need {
		return nil
	}
	return fmt.Errorf("%s: must be at least %d for the generated %s kernels (they use flag ids 0–%d of a pipe pair; got %d)",
		origin("core.flag_ids"), need, k.Name, need-1, dv.FlagIDs)
}

// CheckFor is BuildFor with every run the build makes stopped before it
// starts (scheme auto's candidates): what the program refuses in its keys
// and values, at the cost of decoding them (a study's check of its values,
// before any point runs). A build that got as far as a run returns its
// interruption, which is not a refusal.
func (k *Kind) CheckFor(f *File, m *machines.Machine, opts Options) error {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	opts.run = &RunHooks{Context: ctx}
	_, err := k.BuildFor(f, m, opts)
	return err
}

// HasKey reports whether programs of the kind have the key path (as
// davinci-sim formats lists them: "inputs.seed", "gm[].seed").
func (k *Kind) HasKey(path string) bool {
	for _, key := range k.Keys() {
		if key.Path == path {
			return true
		}
	}
	return false
}

// checkKindKept refuses --set program.kind naming another kind: the keys
// of the file are its kind's.
func (k *Kind) checkKindKept(opts Options) error {
	for _, o := range opts.Overrides {
		if strings.EqualFold(o.Path, "program.kind") && o.Value != k.Name {
			return fmt.Errorf("--set %s: the program kind is the file's (%s) and cannot be changed; run a program file of that kind (see davinci-sim programs)", o, k.Name)
		}
	}
	return nil
}

// checkOptions refuses the run options --seed and --numerics for a kind
// whose programs have no such key (an asm program seeds each tensor; a
// gpu-bench test moves no data): they would be ignored.
func (k *Kind) checkOptions(f *File, opts Options) error {
	if opts.Seed != nil && !k.HasKey("seed") && !k.HasKey("inputs.seed") {
		hint := ""
		if k.HasKey("gm[].seed") {
			hint = "; each gm tensor has its own (key gm[].seed)"
		}
		return fmt.Errorf("%s: --seed: program kind %s has no random seed to override%s", f.Path, k.Name, hint)
	}
	if opts.Numerics != "" && opts.Numerics != NumericsOff && !k.HasKey("numerics") { // off is what such a kind does
		return fmt.Errorf("%s: --numerics: program kind %s has no numerics mode (it is timed only)", f.Path, k.Name)
	}
	return nil
}

// register adds a kind; called from the kinds' init functions.
func register(k *Kind) { kinds[k.Name] = k }

// KindByName returns the program kind named name.
func KindByName(name string) (*Kind, bool) {
	k, ok := kinds[name]
	return k, ok
}

// Kinds returns every program kind, sorted by name.
func Kinds() []*Kind {
	return slices.SortedFunc(maps.Values(kinds), func(a, b *Kind) int { return strings.Compare(a.Name, b.Name) })
}

// File is a parsed program file.
type File struct {
	Path    string // as given (for messages)
	Dir     string // relative paths in the file resolve against it
	Kind    *Kind
	Machine string // the machine the file names ("" if none)
	// Config is the file's keys; Decode writes a run's program.*
	// overrides into it, so a File serves one run (again: a fresh one).
	Config *machines.Config
	data   []byte // the text parsed (again)
	// given, where set, are A and B a run's build takes in place of the
	// files its inputs.a and inputs.b name (scheme auto's sample of them,
	// Options.given: its sample runs read no file).
	given *givenInputs
	// runMachine is the machine a run named in place of the file's (-m,
	// a study's machine), where one did (MachineFor): a refusal of key
	// "machine" is then that machine's, not the file's line.
	runMachine string
	// runNumerics is the numerics a run set in place of the file's
	// (Options.Numerics, set by Execute), and runNumericsFrom where it came
	// from (Options.NumericsFrom): a refusal of key "numerics" is then that
	// setting's, not the file's line.
	runNumerics, runNumericsFrom string
	// runOverrides are the run's --set values (Options.Overrides, set by
	// Execute): a refusal whose constraint comes from a machine key
	// (KeyError.From) names the one that set it.
	runOverrides []machines.Override
}

// givenInputs are A (m×k) and B (k×n) held in memory (File.given).
type givenInputs struct {
	a, b    []float32
	m, k, n int
}

// Again returns the file parsed afresh — from its parsed document, not
// its text — for another run with other overrides: Decode writes a run's
// overrides into its file's config, and a key one run set and the next
// does not would keep its value there (scheme auto's candidates were timed
// at its 64×64 accuracy sample's m and n where the program file, not
// --set, gave them; a study's check decodes one program with each of
// thousands of values).
func (f *File) Again() (*File, error) {
	cfg, err := f.Config.Fresh() // (the parsed document, not the text again)
	if err != nil {
		return nil, err
	}
	return fromConfig(f.Path, f.Dir, f.data, cfg, func(err error) error { return err })
}

// header holds the keys every program file may have.
type header struct {
	Kind    string `mapstructure:"kind"`
	Machine string `mapstructure:"machine"`
}

// ReadFile parses a program file. Embedded examples are found as
// "programs/examples/NAME.yaml" or "examples/NAME.yaml" when the path does
// not exist on disk.
func ReadFile(path string) (*File, error) {
	data, err := Source(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, filepath.Dir(path), data)
}

// Source returns the text of the program file ReadFile parses: the file
// at path, or the embedded example it names when no such file exists.
func Source(path string) ([]byte, error) {
	data, err := machines.ReadFile(path, "program file")
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		if b, ok := Example(path); ok {
			return b, nil
		}
		if name := ExampleNamed(path); name != "" {
			return nil, fmt.Errorf("%w (the built-in example of that name is %s)", err, name)
		}
		return nil, fmt.Errorf("%w (davinci-sim programs lists the program kinds and their built-in examples)", err)
	}
	return data, nil
}

// Example returns the text of the example built into the binary that a
// program path names — programs/examples/NAME.yaml or examples/NAME.yaml,
// in any spelling (./programs/examples/NAME.yaml) — and whether it names
// one.
func Example(path string) ([]byte, bool) {
	rel := strings.TrimPrefix(filepath.ToSlash(filepath.Clean(path)), "programs/")
	if !strings.HasPrefix(rel, "examples/") {
		return nil, false
	}
	b, err := Examples.ReadFile(rel)
	return b, err == nil
}

// ExampleNamed returns the built-in example whose file name path has
// ("programs/examples/hgemm.yaml" for hgemm.yaml or
// ../programs/examples/hgemm.yaml), or "": for the refusal of a path that
// names no file.
func ExampleNamed(path string) string {
	base := filepath.Base(path)
	if _, ok := Example("examples/" + base); !ok || !strings.HasSuffix(base, ".yaml") {
		return ""
	}
	return "programs/examples/" + base
}

// Parse parses program YAML text; path names it in messages and dir
// resolves relative file references.
func Parse(path, dir string, data []byte) (*File, error) {
	// A study file fails both ways (its keys hold dots; it has no kind):
	// looked for only then, so a program is parsed once.
	// So do machine files, and cluster and node descriptions (no kind, or
	// a machine kind).
	studyErr := func(err error) error {
		if machines.IsStudy(path, data) {
			return machines.NotAStudy(path, "program")
		}
		if what := machineText(path, data); what != "" {
			return fmt.Errorf("%s: %s, not a program: give it with -m %s, and a program file (davinci-sim programs lists the kinds and their examples)", path, what, path)
		}
		return err
	}
	cfg, err := machines.ReadYAML(path, data)
	if err != nil {
		return nil, studyErr(err)
	}
	return fromConfig(path, dir, data, cfg, studyErr)
}

// fromConfig makes the program of cfg, the configuration read from data at
// path: its kind and machine. studyErr gives a refusal of the kind the
// words for a file of another kind (Parse's).
func fromConfig(path, dir string, data []byte, cfg *machines.Config, studyErr func(error) error) (*File, error) {
	v := cfg.Viper()
	kind, isText := v.Get("kind").(string)
	badKind := func(format string, a ...any) error {
		return &KeyError{File: path, Line: cfg.Line("kind"), Key: "kind", Msg: fmt.Sprintf(format, a...)}
	}
	switch {
	case v.IsSet("kind") && !isText:
		return nil, badKind("must be a name (got %s); one of %s", badinput.Clip(fmt.Sprint(v.Get("kind")), 80), kindNames())
	case kind == "":
		return nil, studyErr(badKind("missing; one of %s", kindNames()))
	}
	k, ok := kinds[kind]
	if !ok {
		return nil, studyErr(badKind("unknown program kind %+q; one of %s", kind, kindNames()))
	}
	mach, _ := v.Get("machine").(string)
	return &File{Path: path, Dir: dir, Kind: k, Machine: mach, Config: cfg, data: data}, nil
}

// Describe says what path's text is where it is a program, a machine or a
// cluster or node description ("a program file (kind hgemm)", "a machine
// file (kind davinci)", "a node description"), "" otherwise: for the
// message of a file given where another kind of file goes.
func Describe(path string, data []byte) string {
	if f, err := Parse(path, filepath.Dir(path), data); err == nil {
		return fmt.Sprintf("a program file (kind %s)", f.Kind.Name)
	}
	return machineText(path, data)
}

// machineText says what path's text describes where it is a machine
// ("a machine file (kind davinci)") or a cluster or node description, ""
// otherwise.
func machineText(path string, data []byte) string {
	if m, err := machines.LoadBytes(path, data, nil); err == nil {
		return fmt.Sprintf("a machine file (kind %s)", m.Kind)
	}
	if d := cluster.Describes(data); d != "" {
		return "a " + d + " description"
	}
	if k := machines.TopLevel(data)["kind"]; k != nil && k.Kind == yaml.ScalarNode && slices.ContainsFunc(machines.Kinds(), func(mk *machines.Kind) bool { return mk.Name == k.Value }) {
		return fmt.Sprintf("a machine file (kind %s, with errors of its own)", k.Value)
	}
	return ""
}

func kindNames() string {
	var names []string
	for _, k := range Kinds() {
		names = append(names, k.Name)
	}
	return strings.Join(names, ", ")
}

// Decode applies the program.* overrides to the file and decodes it
// strictly into out (a pointer to the kind's parameter struct, which must
// have the header keys kind and machine).
func (f *File) Decode(out any, opts Options) error {
	f.Config.Hide(f.Kind.Omit)
	f.Config.SetSections(f.Kind.Sections)
	f.Config.SetSectionPresets(f.Kind.SectionPresets)
	if err := machines.ApplyOverrides(f.Config, out, "program", opts.Overrides); err != nil {
		return err
	}
	if err := f.refuseZero(); err != nil {
		return err
	}
	if err := machines.DecodeStrict(f.Config, out); err != nil {
		return err
	}
	// The file's numerics, checked here for every kind before --numerics
	// may replace it (Options.apply): a misspelt value was accepted where
	// the flag was given. (The kinds check the value they run with.)
	if n := numericsField(out); n.IsValid() {
		modes := f.Kind.NumericsModes
		if modes == nil {
			modes = []string{NumericsFull, NumericsSampled, NumericsOff}
		}
		if s := n.String(); s != "" && !slices.Contains(modes, s) {
			return f.badKey("numerics", "must be %s for %s programs (got %+q)", orList(modes), f.Kind.Name, s)
		}
	}
	opts.est.noteDecoded(f, out, opts) // (the run's estimate decodes them no more)
	return nil
}

// orList joins words as "a, b or c".
func orList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

// zeroRefused lists, per program kind, the keys whose Go zero value stands
// for "not given" (the default applies) and so cannot also be a value: an
// explicit 0 in the file or from --set is refused, like m: 0, rather than
// silently becoming the default. Keys where 0 is a documented "auto" (gemm
// cores: 0 = all, tiling sizes 0 = the default tile) are not listed.
var zeroRefused = map[string]map[string]string{
	"lu-fused": {"n_fused": "must be ≥ 1 (1 = no fusion), or −1 for the most that fit L1; leave the key out for 1",
		"refinement.tolerance":         "must be > 0 (the scaled residual refinement stops below); leave the key out for 16",
		"refinement.restart":           "must be in 1..10000; leave the key out for 30",
		"refinement.max_iterations":    "must be in 1..10000; leave the key out for 50",
		"refinement.timing_iterations": "must be in 1..10000 (the refinement steps timed without numerics); leave the key out for 3",
		"sampling.windows":             "must be ≥ 1 (the fusion windows fidelity sampled simulates); leave the key out for " + strconv.Itoa(DefaultSampledWindows)},
	"asm":     {"cores": "must be in 1..the machine's cores; leave the key out for 1"},
	"lu-gemm": {"n_fused": "must be ≥ 1 (the rank-nb updates fused; 1 = a plain update); leave the key out for 1"},
	"ozaki": withGEMMZeros(map[string]string{
		"mantissa_bits":     "must be in 1..200; leave the key out for 53",
		"max_mantissa_bits": "must be in mantissa_bits..200; leave the key out for 200",
		"slices":            "must be in 1..26; leave the key out for the slices mantissa_bits needs",
		"esc_block":         "must be in 1..k; leave the key out for 32 (or k when smaller)",
		"moduli":            "must be ≥ 1 (ozaki-ii); leave the key out for the fewest that give mantissa_bits",
	}),
	"hgemm":         withGEMMZeros(nil),
	"sgemm":         withGEMMZeros(nil),
	"sgemm-cube":    withGEMMZeros(nil),
	"tf32gemm":      withGEMMZeros(nil),
	"dgemm":         withGEMMZeros(nil),
	"igemm":         withGEMMZeros(nil),
	"emulated-gemm": withGEMMZeros(nil),
}

// withGEMMZeros adds the GEMM keys whose 0 would silently mean their
// default to a kind's own. (The tiling's 0s are the documented "the
// kernel's": a study's point resets a tile the base program sets with them.)
func withGEMMZeros(own map[string]string) map[string]string {
	out := map[string]string{
		"sample_tiles": "must be ≥ 1 (the output tiles sampled numerics computes); leave the key out for 8",
	}
	for k, v := range own {
		out[k] = v
	}
	return out
}

// refuseZero returns the error for a key of zeroRefused given as 0.
func (f *File) refuseZero() error {
	v := f.Config.Viper()
	for key, why := range zeroRefused[f.Kind.Name] {
		if !v.IsSet(key) {
			continue
		}
		if fmt.Sprint(v.Get(key)) == "0" { // int from the file, the field's type from --set
			return f.badKey(key, "%s (got 0)", why)
		}
	}
	return nil
}

// badKey returns the error for a bad value of the file's key: the file,
// the key and what is wrong (format and a as fmt.Sprintf's) in one line.
// (The command line adds which --set gave the value: NamedOverride.)
func (f *File) badKey(key, format string, a ...any) error {
	return keyError(f.Path, key, format, a...)
}

// NamedOverride returns err, a run's refusal of a key of f (a KeyError:
// "p.yaml: key "m": …"), located: where the file gave the value, the
// key's line ("p.yaml:4: key "m": …"); where a --set did, that --set, at
// the end (" (set with --set program.m=0)"): the message names the file,
// whose value the override replaced. For the command line (run); a sweep
// says which key of the study set it (NamedOverrideBy). (Not in place of
// the file: sweep's check takes a message starting "--set o:" for a fault
// of the override itself.)
func (f *File) NamedOverride(err error) error {
	return f.NamedOverrideBy(err, func(overrides []string) string {
		return "set with --set " + strings.Join(overrides, ", --set ")
	})
}

// NamedOverrideBy is NamedOverride with by saying where the overrides that
// set the refused key ("program.m=0", as Config.SetBy quotes them) came
// from; where overrides set a key the constraint comes from (KeyError.From:
// m must be a multiple of nb, a tile must fit machine.core.tmem), by says
// where those came from too, after "the constraint " ("… (the constraint
// set with --set machine.core.tmem=64KiB)"), the value's own first ("(set
// with --set program.m=512; the constraint set with --set
// program.nb=100000)"). A key the file does not write itself is located
// at the section or list holding it that it does (lineOf). Only a refusal
// whose message is the KeyError's (wrapped without words of their own: bad
// input, a tile that does not fit) is located — the KeyError is changed in
// place, so every error wrapping it says the same; one that already names
// a --set (an inline scheme's) is left.
func (f *File) NamedOverrideBy(err error, by func(overrides []string) string) error {
	ke := f.refusal(err)
	if ke == nil || ke.By != "" {
		return err
	}
	var says, named []string
	switch os := f.Config.SetBy(ke.Key); {
	case ke.Key == "machine" && f.runMachine != "":
		says, ke.Line = append(says, fmt.Sprintf("the run's machine %s, not the file's", f.runMachine)), 0
	case ke.Key == "numerics" && f.runNumerics != "":
		from := ""
		if f.runNumericsFrom != "" {
			from = " (" + f.runNumericsFrom + ")"
		}
		says, ke.Line = append(says, fmt.Sprintf("the run's numerics %s%s, not the file's", f.runNumerics, from)), 0
	case len(os) > 0:
		if !strings.Contains(ke.Msg, "--set ") {
			says, ke.Line, named = append(says, by(os)), 0, os
		}
	default:
		ke.Line = f.lineOf(ke.Key)
	}
	os := f.limitSetBy(ke, named)
	if len(os) > 0 {
		says = append(says, "the constraint "+by(os))
	}
	if len(os) == 0 && ke.Key != "machine" && f.runMachine != "" && !strings.EqualFold(f.runMachine, f.Config.Viper().GetString("machine")) &&
		slices.Contains(ke.From, "program.machine") { // (a constraint of the machine -m named, no --set's: not the file's)
		says = append(says, fmt.Sprintf("the constraint from the run's machine %s, not the file's", f.runMachine))
	}
	ke.By = strings.Join(says, "; ")
	return err
}

// lineOf returns the line on which the file writes the key at path, else
// the closest section or list holding it that the file writes — the
// line of "scheme: ootomo" for the preset's scheme.pieces[0].format —,
// else 0.
func (f *File) lineOf(path string) int {
	for p := path; ; {
		if line := f.Config.Line(p); line > 0 {
			return line
		}
		i := strings.LastIndexAny(p, ".[")
		if i < 0 {
			return 0
		}
		p = p[:i]
	}
}

// limitSetBy returns the overrides ("machine.core.tmem=64KiB", as
// Config.SetBy quotes them) that set the keys the constraint ke refuses
// comes from (KeyError.From) — an amd-cu machine's MFMA instruction comes
// from its core.arch too (machines.InstructionArchKey) —, but none named
// (those of the refused value) or quoted by its message already.
func (f *File) limitSetBy(ke *KeyError, named []string) []string {
	var out []string
	add := func(o string) {
		if !slices.Contains(out, o) && !slices.Contains(named, o) && !strings.Contains(ke.Msg, "--set "+o) {
			out = append(out, o)
		}
	}
	for _, key := range ke.From {
		if rest, ok := machines.CutPrefixFold(key, "program."); ok {
			for _, o := range f.Config.SetBy(rest) {
				add(o)
			}
			continue
		}
		for _, k := range []string{key, machines.InstructionArchKey(key)} {
			if k == "" {
				continue
			}
			for _, o := range machines.OverridesOf(f.runOverrides, k) { // a key, a section holding it or a key of it
				add(o.String())
			}
		}
	}
	return out
}

// RefusedBy returns the overrides that gave the value err refuses
// ("program.m=0", as Config.SetBy quotes them), where err is a refusal of
// a key of f (a KeyError, NamedOverrideBy's) and overrides gave it; else
// none.
func (f *File) RefusedBy(err error) []string {
	if ke := f.refusal(err); ke != nil {
		return f.Config.SetBy(ke.Key)
	}
	return nil
}

// refusal returns the KeyError of err, a refusal of a key of f whose
// message is the KeyError's, or nil.
func (f *File) refusal(err error) *KeyError {
	var ke *KeyError
	if err == nil || f.Config == nil || !errors.As(err, &ke) || ke.File != f.Path || err.Error() != ke.Error() {
		return nil
	}
	return ke
}

// Resolve returns a path from the program file relative to its directory.
func (f *File) Resolve(p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(f.Dir, p)
}

// MachineFor returns the machine a run of f uses: opts.Machine, else the
// file's (or a --set program.machine override of it), else DefaultMachine,
// with machine.* overrides applied.
//
// A machine file named by the program file's own machine: key resolves
// relative to the program file's directory, as its other paths do; -m and
// --set program.machine come from the command line and resolve relative to
// the current directory. Embedded machine names are never paths.
//
// Where the machine named is not there, the error says where the name
// came from: -m, --set program.machine, or the file's key.
func MachineFor(f *File, opts Options) (*machines.Machine, error) {
	ref, from := machineRefFrom(f, opts)
	if opts.Machine != "" {
		f.runMachine = opts.Machine
	}
	m, err := machines.Load(ref, opts.Overrides)
	err = cluster.NameDescriptions(err)
	if err != nil {
		if perr := ProgramAsMachine(ref); perr != nil {
			if from == "" {
				return nil, f.badKey("machine", "%s: %v", ref, perr)
			}
			return nil, fmt.Errorf("%s: %w", from, perr)
		}
	}
	var missing *machines.RefError
	if err != nil && errors.As(err, &missing) {
		if from == "" {
			return nil, f.badKey("machine", "%v", err)
		}
		return nil, fmt.Errorf("%s: %w", from, err)
	}
	return m, err
}

// ProgramAsMachine returns, where ref — named as a machine — is a program
// file, why it is refused ("a program file (kind hgemm), not a machine:
// …"; loaded as a machine it was refused for its kind alone, "unknown
// machine kind"); nil where ref is an embedded machine's or description's
// name, or no readable program file.
func ProgramAsMachine(ref string) error {
	if slices.Contains(machines.Names(), ref) || slices.Contains(cluster.Names(), ref) {
		return nil
	}
	data, err := machines.ReadFile(ref, "machine file")
	if err != nil {
		return nil
	}
	pf, err := Parse(ref, filepath.Dir(ref), data)
	if err != nil || pf.Kind == nil {
		return nil
	}
	return fmt.Errorf("a program file (kind %s), not a machine: give an embedded machine's name or a machine file (davinci-sim machines lists them)", pf.Kind.Name)
}

// MachineRef returns the machine a one-chip run of f uses (MachineFor's):
// an embedded name or a path (machines.Text reads it).
func MachineRef(f *File, opts Options) string { return machineRef(f, opts) }

// machineRef returns the machine a one-chip run of f uses: -m, else a
// --set program.machine, else the file's machine: key (resolved against
// the file's directory when it names a file), else DefaultMachine.
func machineRef(f *File, opts Options) string {
	name, _ := machineRefFrom(f, opts)
	return name
}

// machineRefFrom is machineRef, also saying where the name came from:
// "-m NAME", "--set program.machine=NAME", or "" for the file's machine:
// key (or the default).
func machineRefFrom(f *File, opts Options) (name, from string) {
	if opts.Machine != "" {
		return opts.Machine, "-m " + opts.Machine
	}
	name = f.Machine
	if isMachinePath(name) {
		name = f.Resolve(name)
	}
	for _, o := range opts.Overrides { // --set program.machine=… replaces the file's key
		if strings.EqualFold(o.Path, "program.machine") {
			name, from = o.Value, "--set "+o.String()
		}
	}
	if name == "" {
		name = DefaultMachine
	}
	return name, from
}

// isMachinePath reports whether a machine: value names a file (it has a
// directory or an extension) rather than an embedded machine.
func isMachinePath(name string) bool {
	if !strings.ContainsAny(name, `/\`) && filepath.Ext(name) == "" {
		return false // (an embedded machine's name, or none; the list is read only where a name looks like a path)
	}
	return !slices.Contains(machines.Names(), name)
}

// checkClusterOverrides reports --set paths a cluster run cannot apply:
// program.*, machine.* (each NPU's machine), node.* and cluster.*.
func checkClusterOverrides(ovs []machines.Override) error {
	for _, o := range ovs {
		p := strings.ToLower(o.Path)
		if !strings.HasPrefix(p, "program.") && !strings.HasPrefix(p, "machine.") && !strings.HasPrefix(p, "node.") && !strings.HasPrefix(p, "cluster.") {
			return fmt.Errorf("--set %s: the path must start with program., machine. (each NPU), node. or cluster.", o)
		}
		if p == "machine.host" || strings.HasPrefix(p, "machine.host.") {
			// The node description's hosts and links replace the NPU
			// file's host (each rank gets its share of a socket).
			return fmt.Errorf("--set %s: on a cluster or node each rank's host is its share of the node's sockets and links: set node.hosts.* (cores, clock, memory_bandwidth, …) or node.pcie.* instead", o)
		}
	}
	return nil
}

// CheckOverrides reports --set paths that address neither the program nor
// the machine (node.* and cluster.* only with a cluster machine, which
// Execute checks).
func CheckOverrides(ovs []machines.Override) error {
	for _, o := range ovs {
		p := strings.ToLower(o.Path)
		if strings.HasPrefix(p, "node.") || strings.HasPrefix(p, "cluster.") {
			continue // a cluster machine's; Execute refuses them on one chip
		}
		if !strings.HasPrefix(p, "program.") && !strings.HasPrefix(p, "machine.") {
			return fmt.Errorf("--set %s: the path must start with program. or machine. (or, on a cluster or node description, node. or cluster.)", o)
		}
	}
	return nil
}
