package programs

import (
	"bytes"
	"cmp"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strings"

	"github.com/davinci-sim/davinci-sim/arch"
	"github.com/davinci-sim/davinci-sim/fp"
	"github.com/davinci-sim/davinci-sim/isa"
	"github.com/davinci-sim/davinci-sim/machines"
	"github.com/davinci-sim/davinci-sim/report"
)

func init() {
	register(&Kind{Name: "asm", Written: true, Params: reflect.TypeFor[AsmParams](), Machines: []string{"davinci"}, Example: "deadlock.yaml", NumericsModes: []string{NumericsFull, NumericsOff},
		Summary: "hand-written assembly: one stream for all cores (with the variable core) or one file per core",
		Build:   buildAsm})
}

// AsmParams are the parameters of kind asm.
type AsmParams struct {
	Kind    string `mapstructure:"kind"`
	Machine string `mapstructure:"machine"`
	// Asm is inline assembly; File names an assembly file instead. Either
	// runs on Cores cores (the variable core tells them apart).
	Asm   string `mapstructure:"asm"`
	File  string `mapstructure:"file"`
	Cores int    `mapstructure:"cores"`
	// Streams gives one assembly file per core instead (core i runs Streams[i]).
	Streams  []string `mapstructure:"streams"`
	Numerics string   `mapstructure:"numerics"` // full (default) | off
	// GM lists initial GM contents; Outputs the arrays read back after the
	// run (they have no initial contents: the keys of those are gm's).
	GM      []Tensor `mapstructure:"gm"`
	Outputs []Array  `mapstructure:"outputs"`
}

// Array is a row-major array in GM of type fp32 or fp16: an output of an
// asm program, or where a gm tensor lies.
type Array struct {
	Name  string `mapstructure:"name"`
	Addr  int64  `mapstructure:"addr"`
	Shape []int  `mapstructure:"shape"`
	DType string `mapstructure:"dtype"` // fp32 (default) | fp16
}

// Tensor is an array in GM with its initial contents.
type Tensor struct {
	Array `mapstructure:",squash"`
	// Init: zero | uniform (U[low, high], seeded) | npy (from File).
	Init string  `mapstructure:"init"`
	Low  float64 `mapstructure:"low"`
	High float64 `mapstructure:"high"`
	Seed int64   `mapstructure:"seed"`
	File string  `mapstructure:"file"`
}

// maxTensorElems bounds a GM tensor of an asm program (1 GiB of FP32).
const maxTensorElems = 1 << 28

// elems returns the element count, or −1 when a dimension is not positive
// or the product exceeds maxTensorElems.
func (t *Array) elems() int {
	if len(t.Shape) == 0 {
		return -1
	}
	n := 1
	for _, d := range t.Shape {
		if d <= 0 || n > maxTensorElems/d {
			return -1
		}
		n *= d
	}
	return n
}

func (t *Array) format() (fp.Format, error) {
	switch t.DType {
	case "", "fp32":
		return fp.FP32, nil
	case "fp16":
		return fp.FP16, nil
	}
	return 0, fmt.Errorf("dtype %q: must be fp32 or fp16", t.DType)
}

type asmJob struct {
	runContext // the streams stop when the run's context is done
	p          AsmParams
	file       *File
	name       string      // the program's name (the assembly's, whose line numbers the check reports)
	srcs       []*isa.File // the assembly core i runs
	outs       []Output
	mode       arch.Mode
	budget     asmBudget // full numerics: the host's work and memory, checked before any data exist
}

func buildAsm(f *File, m *machines.Machine, o Options) (Job, error) {
	var p AsmParams
	if err := f.Decode(&p, o); err != nil {
		return nil, err
	}
	o.apply(&p.Numerics, nil)
	j := &asmJob{p: p, file: f, mode: arch.Functional}
	host := o.hostFor(f)
	switch p.Numerics {
	case "", NumericsFull:
	case NumericsOff:
		j.mode = arch.Timing
	default:
		return nil, f.badKey("numerics", "must be full or off for asm programs; got %q", p.Numerics)
	}
	var given []string
	for _, s := range []struct {
		key   string
		given bool
	}{{"asm", p.Asm != ""}, {"file", p.File != ""}, {"streams", len(p.Streams) > 0}} {
		if s.given {
			given = append(given, s.key)
		}
	}
	switch len(given) {
	case 0:
		return nil, fmt.Errorf("%s: give exactly one of the keys \"asm\" (inline), \"file\" or \"streams\"", f.Path)
	case 1:
	default:
		// Refuse the key a --set gave, if one did (NamedOverride then
		// says which): the file's own source is the other.
		key := given[len(given)-1]
		for _, k := range given {
			if len(f.Config.SetBy(k)) > 0 {
				key = k
			}
		}
		others := slices.DeleteFunc(slices.Clone(given), func(k string) bool { return k == key })
		return nil, f.badKey(key, "give exactly one of the keys \"asm\" (inline), \"file\" or \"streams\": %s given too", strings.Join(others, " and "))
	}
	if len(p.Streams) > m.Cores {
		return nil, limitedBy(f.badKey("streams", "%d streams but machine %s has %d cores", len(p.Streams), m.Name, m.Cores), "machine.cores")
	}
	if len(p.Streams) > 0 && p.Cores != 0 {
		return nil, f.badKey("cores", "not used with \"streams\" (core i runs streams[i]: %d streams run on %d cores)", len(p.Streams), len(p.Streams))
	}
	if p.Cores < 0 || p.Cores > m.Cores {
		return nil, limitedBy(f.badKey("cores", "must be in 1..%d; got %d", m.Cores, p.Cores), "machine.cores")
	}
	// The streams are expanded once before the run, by Prepare (where the
	// run's context can stop it), to find their evaluation errors.
	// The parsed assembly is held for the run: its estimate
	// (isa.ParseHostBytes), all the streams' together, counts against the
	// run's bound before each is parsed, and with the data's after.
	var parsed int64
	if len(p.Streams) > 0 {
		for i, s := range p.Streams {
			af, err := parseAsmFile(f, fmt.Sprintf("streams[%d]", i), s, host, &parsed)
			if err != nil {
				return nil, err
			}
			if !hasInstructions(af) {
				return nil, f.badKey(fmt.Sprintf("streams[%d]", i), "no instructions (only blank or comment lines)")
			}
			j.srcs = append(j.srcs, af)
		}
		j.name = f.Path + " (streams[core])"
	} else {
		var af *isa.File
		var err error
		if p.Asm != "" {
			af, err = parseAsm(f, "asm", f.Path+" (asm)", p.Asm, host, &parsed)
		} else {
			af, err = parseAsmFile(f, "file", p.File, host, &parsed)
		}
		if err != nil {
			return nil, err
		}
		if !hasInstructions(af) {
			key := "file"
			if p.Asm != "" {
				key = "asm"
			}
			return nil, f.badKey(key, "no instructions (only blank or comment lines)")
		}
		n := p.Cores
		if n == 0 {
			n = 1
		}
		for range n {
			j.srcs = append(j.srcs, af)
		}
		j.name = af.Name // the check's line numbers are the assembly's
	}
	gmCap := int64(m.GM.Capacity)
	var total int64
	spans := make([]tensorSpan, 0, len(p.GM))
	for i := range p.GM {
		t := &p.GM[i]
		bad := func(format string, a ...any) error {
			return f.badKey(fmt.Sprintf("gm[%d]", i), "tensor %s: %s", t.Name, fmt.Sprintf(format, a...))
		}
		ft, err := t.format()
		if err != nil {
			return nil, bad("%v", err)
		}
		n := int64(t.elems())
		if n <= 0 {
			return nil, bad("shape %v: must be positive, at most %d elements", t.Shape, maxTensorElems)
		}
		size := n * int64(ft.Bytes())
		if t.Addr < 0 || t.Addr > gmCap-size {
			return nil, limitedBy(bad("addr %#x: the tensor's %d bytes must lie in GM (gm.capacity %d bytes)", t.Addr, size, gmCap), "machine.gm.capacity")
		}
		if total += size; total > host.bound() {
			return nil, host.refuse(bad("the gm tensors total more than the host memory the run may take (%s, --max-memory)", gib(host.bound())))
		}
		spans = append(spans, tensorSpan{i, t.Addr, t.Addr + size})
	}
	if err := checkGMTensors(f.Path, p.GM, spans); err != nil {
		return nil, err
	}
	j.budget = asmBudget{gmCap: gmCap, host: host, parsed: parsed, last: [4]int64{-1}}
	for i := range p.GM {
		t := &p.GM[i]
		bad := func(format string, a ...any) error {
			return f.badKey(fmt.Sprintf("gm[%d]", i), "tensor %s: %s", t.Name, fmt.Sprintf(format, a...))
		}
		switch {
		case t.Init != "npy" && t.File != "":
			return nil, bad("file %s applies to init: npy (this tensor's init is %s: the file is not read)", t.File, cmp.Or(t.Init, "zero"))
		case t.Init != "uniform" && (t.Low != 0 || t.High != 0 || t.Seed != 0):
			return nil, bad("low, high and seed apply to init: uniform (this tensor's init is %s)", cmp.Or(t.Init, "zero"))
		case t.Init == "npy" && t.File == "":
			return nil, bad("init npy reads the array in key file (a .npy file): give it")
		}
		switch t.Init {
		case "", "zero", "npy":
		case "uniform":
			if !(t.Low <= t.High) {
				return nil, bad("uniform: high %g < low %g", t.High, t.Low)
			}
			// Within the tensor's type (FP16's 65504), and ±2^100 as the
			// GEMM kinds' inputs: high − low overflowed to +Inf beyond.
			lim, limText := math.Ldexp(1, 100), "2^100"
			if t.DType == "fp16" {
				lim, limText = fp.FP16.MaxFinite(), "65504, FP16's largest"
			}
			if math.Abs(t.Low) > lim || math.Abs(t.High) > lim {
				return nil, bad("uniform: low %g and high %g must lie within ±%s", t.Low, t.High, limText)
			}
		default:
			return nil, bad("init %q: must be zero, uniform or npy", t.Init)
		}
		if j.mode != arch.Functional {
			continue // timing only: no data (its shape, type, place and init are checked)
		}
		ft, _ := t.format()
		n := int64(t.elems())
		staging := n * (4 + int64(ft.Bytes())) // its float32 values and its bytes
		if t.Init == "npy" {
			elems, err := CheckNPYArray(f.Resolve(t.File))
			if err != nil {
				return nil, bad("%v", err)
			}
			if elems != n {
				return nil, bad("npy file %s has %d elements, shape %v needs %d", t.File, elems, t.Shape, n)
			}
			staging += 8 * n // a float64 file is read whole first
		}
		j.budget.fixed = max(j.budget.fixed, staging)
		j.budget.markWrite(t.Addr, 1, 0, n*int64(ft.Bytes()))
	}
	for i := range p.Outputs {
		t := &p.Outputs[i]
		if _, err := t.format(); err != nil || t.Name == "" {
			return nil, f.badKey(fmt.Sprintf("outputs[%d]", i), "needs a name, a positive shape and dtype fp32|fp16")
		}
		if t.elems() <= 0 {
			return nil, f.badKey(fmt.Sprintf("outputs[%d].shape", i), "%v: must be positive, at most %d elements", t.Shape, maxTensorElems)
		}
		if err := CheckOutputName(t.Name); err != nil {
			return nil, f.badKey(fmt.Sprintf("outputs[%d]", i), "%v", err)
		}
		ft, _ := t.format()
		if size := int64(t.elems()) * int64(ft.Bytes()); t.Addr < 0 || t.Addr > gmCap-size {
			return nil, limitedBy(f.badKey(fmt.Sprintf("outputs[%d]", i), "output %s: addr %#x: the output's %d bytes must lie in GM (gm.capacity %d bytes)", t.Name, t.Addr, size, gmCap), "machine.gm.capacity")
		}
		for k, u := range p.Outputs[:i] {
			if u.Name == t.Name {
				return nil, f.badKey(fmt.Sprintf("outputs[%d]", i), "output name %q used twice (as outputs[%d]'s)", t.Name, slices.IndexFunc(p.Outputs, func(u Array) bool { return u.Name == t.Name }))
			}
			if msg := outputFilesClash(u.Name, t.Name); msg != "" {
				return nil, f.badKey(fmt.Sprintf("outputs[%d]", i), "output name %q and outputs[%d]'s %q: %s", t.Name, k, u.Name, msg)
			}
		}
		if j.mode == arch.Functional {
			j.budget.fixed += int64(t.elems()) * int64(ft.Bytes()) // read back into an array of its type
		}
	}
	if j.mode == arch.Functional && j.budget.hostBytes() > j.budget.host.bound() {
		return nil, j.budget.overMemory(f.Path, "")
	}
	return j, nil
}

// outputFilesClash says why outputs named a and b (different names) may
// not both be written, as a.npy and b.npy, or returns "": their files
// would be one on a case-insensitive file system (macOS's, Windows'), or
// one's file would bear the other's name (y.npy, written as y.npy.npy,
// beside y, written as y.npy).
func outputFilesClash(a, b string) string {
	fa, fb := a+".npy", b+".npy"
	switch {
	case strings.EqualFold(fa, fb):
		return fmt.Sprintf("their files %s and %s are one file on a case-insensitive file system (macOS, Windows): names must differ in more than case", fa, fb)
	case strings.EqualFold(fa, b), strings.EqualFold(a, fb):
		if strings.EqualFold(a, fb) {
			a, fa, b, fb = b, fb, a, fa
		}
		return fmt.Sprintf("%s is written as %s, the other's name (the other is written as %s): give output names without .npy", a, fa, fb)
	}
	return ""
}

// noTimedWorkNote is the note of an asm run that took no simulated time:
// its instructions are all the scalar unit's own, which cost nothing in
// the model (isa/ASM.md).
const noTimedWorkNote = "no timed work: the program's instructions (nop, alloc, free, flags and barriers on the scalar unit S, sync_all) take effect when the scalar unit reaches them and cost no time in this model; issuing to a pipe's queue costs core.scalar.issue_cycles, and scalar cycles=N is scalar work"

// tensorSpan is where gm tensor i lies: bytes [from, to).
type tensorSpan struct {
	i        int
	from, to int64
}

// checkGMTensors refuses two gm tensors of one name, or whose bytes
// overlap (each gives the initial contents of its bytes: one would
// silently overwrite the other's).
func checkGMTensors(path string, gm []Tensor, spans []tensorSpan) error {
	names := map[string]int{}
	for i, t := range gm {
		if t.Name == "" {
			continue
		}
		if j, ok := names[t.Name]; ok {
			return keyError(path, fmt.Sprintf("gm[%d]", i), "named %q as gm[%d] is (a tensor's name is its own)", t.Name, j)
		}
		names[t.Name] = i
	}
	slices.SortFunc(spans, func(a, b tensorSpan) int { return cmp.Or(cmp.Compare(a.from, b.from), cmp.Compare(a.i, b.i)) })
	// Sorted by start, spans that overlap at all include neighbours that do
	// (none is empty).
	for k := 1; k < len(spans); k++ {
		if a, b := spans[k-1], spans[k]; a.to > b.from {
			if a.i > b.i {
				a, b = b, a
			}
			return keyError(path, fmt.Sprintf("gm[%d]", b.i), "tensor %s, bytes [%#x, %#x), overlaps gm[%d] (%s, bytes [%#x, %#x))",
				gm[b.i].Name, b.from, b.to, a.i, gm[a.i].Name, a.from, a.to)
		}
	}
	return nil
}

// hasInstructions reports whether an assembly file has an instruction or a
// repeat block (not only blank and comment lines).
func hasInstructions(af *isa.File) bool {
	return slices.ContainsFunc(af.Nodes, func(n isa.Node) bool { return n.Kind == isa.NodeInstr || n.Kind == isa.NodeRepeat })
}

// parseAsmFile parses the assembly file name (relative to the program
// file f) given by key.
// A path that is not a regular file, or a file that is not text, is
// refused as such before it is read (/dev/zero read 64 MiB to be "larger
// than 64 MiB; not a assembly file", a FIFO waits for a writer, a binary
// file's first line was an "unknown mnemonic" of its bytes).
func parseAsmFile(f *File, key, name string, host hostBound, parsed *int64) (*isa.File, error) {
	path := f.Resolve(name)
	src, err := machines.ReadFile(path, "assembly file")
	if err != nil {
		return nil, f.badKey(key, "%w", err)
	}
	if at := bytes.IndexByte(src, 0); at >= 0 {
		return nil, f.badKey(key, "assembly file: %s is not text (a NUL byte on line %d): not an assembly file", path, 1+bytes.Count(src[:at], []byte("\n")))
	}
	return parseAsm(f, key, path, string(src), host, parsed)
}

// asmParseHostBytes is the host memory that parsing p's assembly takes
// by its estimate, as buildAsm counts it (parseAsm): isa.ParseHostBytes of
// the inline assembly, the file or every stream's file once. A file that
// cannot be read counts nothing (the run refuses it).
func asmParseHostBytes(f *File, p *AsmParams) float64 {
	if p.Asm != "" {
		return float64(isa.ParseHostBytes(p.Asm))
	}
	names := p.Streams
	if p.File != "" {
		names = []string{p.File}
	}
	var n float64
	for _, name := range names {
		if src, err := machines.ReadFile(f.Resolve(name), "assembly file"); err == nil {
			n += float64(isa.ParseHostBytes(string(src)))
		}
	}
	return n
}

// parseAsm parses assembly src (named name in its errors, given by key)
// if the host memory its parse takes (isa.ParseHostBytes), added to
// *parsed (the assembly parsed before it), stays within the run's bound
// beside the run's own runHostBytes: a file of 2^18 nop lines held
// 0.8 GB whatever --max-memory said, one per core of 32 many times that.
// (The chip model's room, later, counts the parse with the base and data
// as well: asmParseHostBytes; the refusal quotes the run's whole
// estimate, which counts it so.)
func parseAsm(f *File, key, name, src string, host hostBound, parsed *int64) (*isa.File, error) {
	need := *parsed + isa.ParseHostBytes(src)
	// A bound that leaves the run's own nothing is the base's to report
	// (the chip model's room, "so nothing"), not the assembly's, unless
	// the parse alone passes it.
	if host.exceeds(float64(need)) || host.bound() > runHostBytes && host.exceeds(float64(runHostBytes+need)) {
		mib := func(b int64) int64 { return (b + 1<<20 - 1) >> 20 } // (an upper estimate: rounded up)
		before := ""
		if *parsed > 0 {
			before = fmt.Sprintf(", with the %d MiB of the assembly before it", mib(*parsed))
		}
		return nil, host.refuse(f.badKey(key, "the assembly's %d %s and %d bytes would take up to %d MiB to parse (~2 KiB a line, 96 bytes a byte of code%s, beside the run's own %d MiB): %s",
			isa.Lines(src), plural(isa.Lines(src), "line", "lines"), len(src), mib(isa.ParseHostBytes(src)), before, runHostBytes>>20, host.overAll(host.est(float64(need)))))
	}
	*parsed = need
	return isa.Parse(name, src)
}

// tensorBytes produces the initial bytes of GM tensor t: n elements
// (checked by the caller) of format f.
func (j *asmJob) tensorBytes(t *Tensor, f fp.Format, n int) ([]byte, error) {
	var vals []float32
	switch t.Init {
	case "", "zero":
		vals = make([]float32, n)
	case "uniform":
		if t.High < t.Low {
			return nil, fmt.Errorf("uniform: high %g < low %g", t.High, t.Low)
		}
		vals = UniformFP32(NewRand(t.Seed, 7), n, t.Low, t.High)
	case "npy":
		v, err := ReadNPYArray(j.file.Resolve(t.File))
		if err != nil {
			return nil, err
		}
		if len(v) != n {
			return nil, fmt.Errorf("npy file %s has %d elements, shape %v needs %d", t.File, len(v), t.Shape, n)
		}
		vals = v
	default:
		return nil, fmt.Errorf("init %q: must be zero, uniform or npy", t.Init)
	}
	out := make([]byte, n*f.Bytes())
	for i, v := range vals {
		bits := fp.FromFloat32(v, f, fp.Options{Round: fp.RNE})
		if f == fp.FP16 {
			out[2*i], out[2*i+1] = byte(bits), byte(bits>>8)
		} else {
			out[4*i], out[4*i+1], out[4*i+2], out[4*i+3] = byte(bits), byte(bits>>8), byte(bits>>16), byte(bits>>24)
		}
	}
	return out, nil
}

// Program returns the per-core streams; they end early when the run's
// context is done (a core takes a run of instructions that cost no
// simulated time in one event: the context is looked at inside it too).
func (j *asmJob) Program() isa.Program {
	p := isa.Program{Name: j.name, Cores: make([]isa.Stream, len(j.srcs))}
	for i, af := range j.srcs {
		p.Cores[i] = af.StreamContext(j.runCtx(), i)
	}
	return p
}

func (j *asmJob) Mode() arch.Mode   { return j.mode }
func (j *asmJob) Outputs() []Output { return j.outs }

// Prepare expands every core's stream once, to report its evaluation
// errors before the run (stopping when the run's context is done) and to
// refuse streams longer than isa.MaxStreamInstrs all together. With
// full numerics that expansion also finds what the data will cost the
// host, refusing a program past maxAsmWork or the run's host memory before any data
// exist; then the gm tensors are made and written into the chip's GM one
// by one.
func (j *asmJob) Prepare(chip *arch.Chip) error {
	functional := j.mode == arch.Functional
	b := j.budget // a copy: Prepare may run again on a new chip
	b.pages = j.budget.pages.clone()
	repeatBytes := chip.Limits().VectorRepeatBytes
	if repeatBytes == 0 {
		repeatBytes = isa.VectorRepeatBytes
	}
	// One tally for all the cores: isa.MaxStreamInstrs bounds their
	// streams together (32 cores of 2^26 nops each ran for minutes).
	var tally isa.Tally
	for i, af := range j.srcs {
		var over isa.Instr
		past := false
		err := af.ExpandTally(j.runCtx(), i, &tally, func(in isa.Instr) bool {
			if functional && !b.add(&in, repeatBytes) {
				over, past = in, true
				return false
			}
			return true
		})
		if err != nil {
			return err
		}
		if !past {
			continue
		}
		at := fmt.Sprintf("core %d, %s line %d: %s", i, af.Name, over.Line, isa.Format(over))
		if b.work > maxAsmWork {
			return j.file.badKey("numerics", "full numerics would compute more than 2^40 multiply-adds and bytes (mmad m·k·n plus the bytes each copy, load and vector op writes, over every core: a 10000³ GEMM's multiply-adds, up to hours of computing here; passed at %s); use numerics off",
				at)
		}
		return b.overMemory(j.file.Path, at)
	}
	if !functional {
		return nil
	}
	for i := range j.p.GM {
		t := &j.p.GM[i]
		ft, _ := t.format()
		data, err := j.tensorBytes(t, ft, t.elems())
		if err == nil {
			err = chip.GM().Write(t.Addr, data)
		}
		if err != nil {
			return j.file.badKey(fmt.Sprintf("gm[%d]", i), "tensor %s: %v", t.Name, err)
		}
	}
	return nil
}

// mmadInputs returns the input types of the m.mmad instructions in srcs
// as peak names (FP16, INT8, …), sorted, each once: the type is written
// out (in=), never computed.
func mmadInputs(srcs []*isa.File) []string {
	seen := map[string]bool{}
	var walk func(nodes []isa.Node)
	walk = func(nodes []isa.Node) {
		for i := range nodes {
			n := &nodes[i]
			switch {
			case n.Kind == isa.NodeRepeat:
				walk(n.Body)
			case n.Kind == isa.NodeInstr && n.Mnemonic == "m.mmad":
				for _, a := range n.Args {
					if a.Key == "in" {
						seen[strings.ToUpper(a.Value)] = true
					}
				}
			}
		}
	}
	for _, f := range srcs {
		if f != nil {
			walk(f.Nodes)
		}
	}
	return slices.Sorted(maps.Keys(seen))
}

// asmPeak returns the peak an asm program's matrix work is compared with
// and the flops convention saying which: its MMADs' input type's cube
// peak (INT8: operations, TOP/s), or with several types the fastest of
// theirs (FP16's where none has a rate).
func asmPeak(m *machines.Machine, inputs []string) (peak float64, convention string) {
	best := ""
	for _, in := range inputs {
		if p, ok := m.Peak(in); ok && p > peak {
			peak, best = p, in
		}
	}
	if best == "" {
		peak, _ = m.Peak("FP16")
		best = "FP16"
	}
	switch {
	case len(inputs) > 1:
		return peak, fmt.Sprintf("cube (2·m·n·k per MMAD, inputs %s; peak = the fastest, the %s cube peak)", strings.Join(inputs, ", "), best)
	case strings.HasPrefix(best, "INT"):
		return peak, fmt.Sprintf("%s ops (2·m·n·k per MMAD; peak = %s cube peak)", strings.ToLower(best), best)
	}
	return peak, fmt.Sprintf("%s (2·m·n·k per MMAD; peak = %s cube peak)", strings.ToLower(best), best)
}

func (j *asmJob) Finish(chip *arch.Chip, st *arch.Stats, rep *report.Report) error {
	rep.Program = map[string]any{"kind": "asm", "cores": len(j.srcs)}
	if st.Time == 0 {
		rep.Notes = append(rep.Notes, noTimedWorkNote)
	}
	if st.MMADFlops > 0 {
		peak, conv := asmPeak(chip.M, mmadInputs(j.srcs))
		rep.Flops = &report.FlopsReport{Total: st.MMADFlops, PeakTFLOPS: peak / 1e12, Convention: conv}
		if s := st.Time.Seconds(); s > 0 {
			rep.Flops.TFLOPS = st.MMADFlops / s / 1e12
			rep.Flops.PeakFraction = st.MMADFlops / s / peak
		}
	}
	if j.mode != arch.Functional {
		return nil
	}
	for _, t := range j.p.Outputs {
		f, _ := t.format()
		n := t.elems()
		o := Output{Name: t.Name, Shape: t.Shape}
		if f == fp.FP16 {
			o.F16 = make([]uint16, n)
			if err := chip.GM().ReadUint16s(t.Addr, o.F16); err != nil {
				return err
			}
		} else {
			o.F32 = make([]float32, n)
			if err := chip.GM().ReadFloat32s(t.Addr, o.F32); err != nil {
				return err
			}
		}
		j.outs = append(j.outs, o)
	}
	return nil
}
