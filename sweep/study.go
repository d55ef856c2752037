package sweep

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"math/big"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/davinci-sim/davinci-sim/badinput"
	"github.com/davinci-sim/davinci-sim/machines"
	"github.com/davinci-sim/davinci-sim/programs"
)

// badInput marks errors caused by the study file, the command-line options
// or an existing results file that cannot be used (exit code 2).
func badInput(err error) error { return badinput.Wrap(err) }

// MaxPoints bounds the number of points of a study.
const MaxPoints = 100000

// Special parameter names: varying them selects another program file or
// machine for the point instead of overriding a key.
const (
	ParamProgram = "program"
	ParamMachine = "machine"
)

// Study is a parsed study file: a base program and machine, fixed
// overrides, the points to run and what to record and plot.
type Study struct {
	// Path names the study file in messages; Dir, the study file's
	// folder, resolves the relative paths the study names.
	Path, Dir string
	// Description is free text from the file.
	Description string
	// Program is the base program file as the study file writes it
	// (relative to Dir unless absolute; ProgramOf resolves it), unless the
	// "program" parameter is varied.
	Program string
	// Machine is the base machine as the study file writes it: an
	// embedded machine's name or a file relative to Dir (unless absolute);
	// "" uses the program's.
	Machine string
	// Set are the fixed overrides, in file order.
	Set []machines.Override
	// Params are the varied parameters (dotted paths, or "program" /
	// "machine"), in column order: explicit point keys first, then the
	// grid's keys in file order.
	Params []string
	// Points are every point of the study in index order.
	Points []Point
	// Metrics are the dotted report.json paths recorded for each point.
	Metrics []string
	// Plots are the figures drawn from the results.
	Plots []Plot
	// KBatch and FastForward are every point's run options (run
	// --k-batch, --fast-forward with its defaults): the approximate speed
	// modes of timing-only GPU runs; their notes are in each report.
	KBatch      int
	FastForward bool
	// pointKeys is how many of Params the explicit points give (the
	// first ones); the rest are vary's.
	pointKeys int
	// pointRows is how many explicit points the study lists (0: none);
	// each is crossed with the grid's points (pointRow).
	pointRows int

	stamps *stamper // the digests of the points' files (RunStamp)
	// lines holds the line of each key of the study file ("program",
	// "set.program.m", "vary.machine", "points[].program.m" — its first
	// —, "points[3].program.m", "metrics[2]"), for the messages of Check
	// (at, pointAt).
	lines map[string]int
}

// Point is one simulation of a study.
type Point struct {
	// Index is the point's position in the study (0-based).
	Index int
	// Values holds one value per Study.Params entry, as written (or as a
	// range generated it): a program or machine file as the study file
	// writes it, relative to the study's folder (Study.ProgramOf resolves
	// it), so that the results do not depend on the directory the study
	// is run from.
	Values []string
}

// Plot is one figure: Y against X with one line per series — joined in x
// order where X is a parameter, markers where X is a metric (Series).
type Plot struct {
	// Name is the file base name (DIR/NAME.png, .svg, .pdf).
	Name string
	// Title is printed above the plot ("" for none).
	Title string
	// X is a parameter or metric; Y are metrics (one line family each).
	X string
	Y []string
	// MoreX are further x metrics (x: [m1, m2, …] in the file; X is m1):
	// each is a line family of its own against the same Y, on one x axis —
	// e.g. a roofline with both operational intensities.
	MoreX []string
	// Roof, when set, draws roofline ceilings behind the data.
	Roof *Roof
	// XLabel, when set, replaces the x axis title (by default the title
	// of X, or none when the x metrics have different titles).
	XLabel string
	// Series are parameters distinguishing lines. Where X is a
	// parameter, parameters that are neither X, Series nor fixed by Where
	// are added so that every line is a function of X, its points joined
	// in x order. Where X is a metric, no two points are joined (a
	// scatter plot, as a Pareto chart's): a series is the markers of its
	// points, whatever other parameters they differ in (give those as
	// Series too to tell them apart); where X or Y is a list ("*"), each
	// point's elements are its own line, and the parameters that still
	// vary for one series are added so that each line is one point's.
	Series []string
	// Join, where X is a metric, joins a series' points in x order as
	// where X is a parameter (a curve whose points differ in parameters
	// that follow along it: weak scaling against cluster.npus, the grid
	// and n growing with it), the parameters that still vary at one x
	// value splitting lines.
	Join bool
	// LogX and LogY select logarithmic axes.
	LogX, LogY bool
	// YMin and YMax, when set, leave out values below or above them (a
	// start-up spike or a tail that would flatten the rest).
	YMin, YMax *float64
	// Where keeps only the points whose parameters have these values (a
	// program or machine file in the points' spelling: a where value
	// naming the same file otherwise matches).
	Where map[string]string
}

// Roof is a plot's roofline: for each slope (a bandwidth in y units per x
// unit, e.g. TB/s for TFLOP/s against flop/byte) the ceiling
// y = min(Peak, slope·x), drawn as a grey line labelled with its name
// over the plot's x range.
type Roof struct {
	Peak   float64
	Slopes []RoofSlope
}

// RoofSlope is one bandwidth ceiling of a Roof.
type RoofSlope struct {
	Label string
	Slope float64
}

// ReadStudy reads and parses a study file.
func ReadStudy(path string) (*Study, error) {
	data, err := machines.ReadFile(path, "study file")
	if err != nil {
		return nil, badInput(err)
	}
	return ParseStudy(path, filepath.Dir(path), data)
}

// parser carries the file name for messages and the folder that resolves
// the files the study names.
type parser struct{ path, dir string }

func (p *parser) errf(n *yaml.Node, key, format string, a ...any) error {
	line := 0
	if n != nil {
		line = n.Line
	}
	msg := fmt.Sprintf(format, a...)
	if key == "" {
		return badInput(fmt.Errorf("%s:%d: %s", p.path, line, msg))
	}
	return badInput(fmt.Errorf("%s:%d: key %q: %s", p.path, line, key, msg))
}

// The keys of a study, of a plot and of a plot's roof, for the messages
// on unknown keys.
var (
	studyKeys = []string{"program", "machine", "set", "vary", "points", "metrics", "plot", "plots", "description", "title", "k_batch", "fast_forward"}
	plotKeys  = []string{"x", "y", "series", "join", "logx", "logy", "ymin", "ymax", "where", "roof", "name", "title", "xlabel"}
	roofKeys  = []string{"peak", "slopes"}
)

// unknownKeys is the error for keys (of one mapping, at the path prefix
// "plot[1]." or "" for the top level) that are none of known: each with
// its line and a "did you mean" where one is close, on one line, the
// mapping's keys listed once.
func (p *parser) unknownKeys(prefix string, keys []*yaml.Node, known []string) error {
	var b strings.Builder
	for i, k := range keys {
		if i == maxUnknownShown {
			fmt.Fprintf(&b, "; and %d more", len(keys)-i)
			break
		}
		if i > 0 {
			b.WriteString("; ")
		}
		if len(keys) > 1 {
			fmt.Fprintf(&b, "line %d: ", k.Line)
		}
		fmt.Fprintf(&b, "%q", prefix+badinput.Clip(k.Value, 80))
		if sg := badinput.Suggest(k.Value, known); sg != "" {
			fmt.Fprintf(&b, " (did you mean %q?)", sg)
		}
	}
	what := "key"
	if len(keys) > 1 {
		what = fmt.Sprintf("%d unknown keys", len(keys))
	}
	msg := fmt.Sprintf("%s; the keys are %s", b.String(), strings.Join(known, ", "))
	if len(keys) == 1 {
		return badInput(fmt.Errorf("%s:%d: unknown %s %s", p.path, keys[0].Line, what, msg))
	}
	return badInput(fmt.Errorf("%s: %s: %s", p.path, what, msg))
}

// maxUnknownShown bounds the unknown keys one message names (a hostile
// file can have thousands).
const maxUnknownShown = 8

// repeatedKey returns the first key given twice in one mapping anywhere in
// n, and its path from n (keys joined by dots, list items as [i]; nil:
// none).
func repeatedKey(n *yaml.Node, path string) (*yaml.Node, string) {
	join := func(key string) string {
		if path == "" {
			return key
		}
		return path + "." + key
	}
	switch n.Kind {
	case yaml.MappingNode:
		seen := map[string]bool{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if seen[k.Value] {
				return k, join(k.Value)
			}
			seen[k.Value] = true
			if r, at := repeatedKey(n.Content[i+1], join(k.Value)); r != nil {
				return r, at
			}
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			if r, at := repeatedKey(c, fmt.Sprintf("%s[%d]", path, i)); r != nil {
				return r, at
			}
		}
	}
	return nil, ""
}

// ParseStudy parses study YAML text; path names it in messages and dir
// resolves the program (and machine file) paths. Every error wraps
// bad input (package badinput) and names the file, line and key.
func ParseStudy(path, dir string, data []byte) (*Study, error) {
	p := &parser{path: path, dir: dir}
	root, err := machines.ParseYAML(path, data)
	if err != nil {
		return nil, badInput(err)
	}
	if root.Kind == 0 || len(root.Content) == 0 {
		return nil, p.errf(nil, "", "empty study file; it needs program, vary or points, and metrics")
	}
	doc := root.Content[0]
	if k, at := repeatedKey(doc, ""); k != nil && !slices.Contains(doc.Content, k) {
		// (The top level's own keys get their message below.)
		return nil, p.errf(k, at, "given twice (the last would win silently)")
	}
	if doc.Kind != yaml.MappingNode {
		return nil, p.errf(doc, "", "the top level must be a mapping of keys")
	}
	s := &Study{Path: path, Dir: dir, stamps: &stamper{}}
	var (
		varyNode, pointsNode, plotNode, metricsNode *yaml.Node
		progNode, setNode                           *yaml.Node
	)
	seen := map[string]string{}                                           // key → the spelling it was given in
	aliases := map[string]string{"title": "description", "plots": "plot"} // one key, two spellings
	var unknown []*yaml.Node
	for i := 0; i+1 < len(doc.Content); i += 2 {
		k, v := doc.Content[i], doc.Content[i+1]
		name := strings.ToLower(k.Value) // keys are case-insensitive, as in program and machine files
		key := name
		if a, ok := aliases[key]; ok {
			key = a
		}
		if first, ok := seen[key]; ok {
			if first != k.Value {
				return nil, p.errf(k, k.Value, "given twice (as %s and as %s: one key)", first, k.Value)
			}
			return nil, p.errf(k, k.Value, "given twice")
		}
		seen[key] = k.Value
		switch name {
		case "description", "title":
			t, err := p.scalar(v, k.Value)
			if err != nil {
				return nil, err
			}
			s.Description = t
		case "program":
			progNode = v
		case "machine":
			t, err := p.scalar(v, "machine")
			if err != nil {
				return nil, err
			}
			s.Machine = t
		case "set":
			ovs, err := p.overrides(v, "set")
			if err != nil {
				return nil, err
			}
			s.Set, setNode = ovs, v
		case "vary":
			varyNode = v
		case "points":
			pointsNode = v
		case "metrics":
			metricsNode = v
		case "plot", "plots":
			plotNode = v
		case "k_batch":
			t, err := p.scalar(v, "k_batch")
			if err != nil {
				return nil, err
			}
			n, err := strconv.Atoi(t)
			if err != nil || n < 1 || n > programs.MaxKBatch {
				return nil, p.errf(v, "k_batch", "must be an integer in 1..%d (run --k-batch; 1: every k-step simulated); got %q", programs.MaxKBatch, t)
			}
			s.KBatch = n
		case "fast_forward":
			t, err := p.scalar(v, "fast_forward")
			if err != nil {
				return nil, err
			}
			b, err := strconv.ParseBool(t)
			if err != nil {
				return nil, p.errf(v, "fast_forward", "must be true or false (run --fast-forward); got %q", t)
			}
			s.FastForward = b
		default:
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		switch d := programs.Describe(path, data); {
		case strings.HasPrefix(d, "a program file"):
			return nil, badInput(fmt.Errorf("%s: %s, not a study: run it with davinci-sim run %s, or name it as a study's program", path, d, path))
		case d != "":
			return nil, badInput(fmt.Errorf("%s: %s, not a study: name it as a study's machine (davinci-sim run PROGRAM -m %s runs a program on it)", path, d, path))
		}
		return nil, p.unknownKeys("", unknown, studyKeys)
	}
	if progNode != nil && progNode.Tag != "!!null" { // (program: with nothing is missing, as program: '')
		t, err := p.scalar(progNode, "program")
		if err != nil {
			return nil, err
		}
		s.Program = t
	}
	if metricsNode == nil {
		return nil, p.errf(doc, "metrics", "missing; list the report.json paths to record, e.g. [flops.tflops]")
	}
	ms, err := p.stringList(metricsNode, "metrics")
	if err != nil {
		return nil, err
	}
	for i, m := range ms {
		if m == "" || slices.Contains(strings.Split(m, "."), "") {
			return nil, p.errf(metricsNode, fmt.Sprintf("metrics[%d]", i), "bad dotted path %q", m)
		}
		if j := slices.IndexFunc(ms[:i], func(x string) bool { return strings.EqualFold(x, m) }); j >= 0 {
			if ms[j] != m { // (report paths are read in any case)
				return nil, p.errf(metricsNode, fmt.Sprintf("metrics[%d]", i), "%q listed twice (as %q and %q; paths are case-insensitive)", m, ms[j], m)
			}
			return nil, p.errf(metricsNode, fmt.Sprintf("metrics[%d]", i), "%q listed twice", m)
		}
	}
	s.Metrics = ms

	// The points counted first, from the lengths of the lists and ranges:
	// a study past MaxPoints is refused at once, not after every value of
	// its lists is read and compared (two lists of 10000 values each were
	// refused after 11 s).
	if varyNode != nil && p.countPoints(pointsNode, varyNode) > MaxPoints {
		return nil, p.errf(varyNode, "vary", "more than %d points", MaxPoints)
	}

	// Explicit points, then the grid.
	var explicit [][]string
	if pointsNode != nil {
		params, rows, err := p.points(pointsNode)
		if err != nil {
			return nil, err
		}
		s.Params = params
		s.pointKeys, s.pointRows = len(params), len(rows)
		explicit = rows
	}
	var axes [][]string
	if varyNode != nil {
		if varyNode.Kind != yaml.MappingNode {
			return nil, p.errf(varyNode, "vary", "must be a mapping of parameter: values")
		}
		if len(varyNode.Content) == 0 {
			return nil, p.errf(varyNode, "vary", "empty; give at least one parameter with its values")
		}
		for i := 0; i+1 < len(varyNode.Content); i += 2 {
			k, v := varyNode.Content[i], varyNode.Content[i+1]
			key := "vary." + k.Value
			if err := p.checkParam(k, key, k.Value); err != nil {
				return nil, err
			}
			if slices.ContainsFunc(s.Params, func(q string) bool { return strings.EqualFold(q, k.Value) }) {
				return nil, p.errf(k, key, "parameter %q is given twice (vary and points, or twice in vary; keys are case-insensitive)", k.Value)
			}
			vals, err := p.values(v, key)
			if err != nil {
				return nil, err
			}
			if fileParam(k.Value) {
				first := map[string]string{} // the file → as written
				for _, val := range vals {
					r := p.identity(k.Value, val)
					if w, ok := first[r]; ok {
						return nil, p.errf(v, key, "%q and %q name the same file (its points would run twice)", w, val)
					}
					first[r] = val
				}
			}
			s.Params = append(s.Params, k.Value)
			axes = append(axes, vals)
		}
	}
	if pointsNode == nil && varyNode == nil {
		return nil, p.errf(doc, "vary", "missing; a study needs vary (a grid) or points (a list)")
	}
	for i, o := range s.Set {
		for _, q := range s.Params {
			if strings.EqualFold(o.Path, q) {
				// (set's key: overrides keeps set's entries in file order)
				return nil, p.errf(setNode.Content[2*i], "set."+o.Path, "also varied; a parameter is either fixed (set) or varied")
			}
		}
	}
	if err := p.checkProgramMachine(s, setNode, varyNode, pointsNode); err != nil {
		return nil, err
	}
	if err := p.checkColumns(s, metricsNode); err != nil {
		return nil, err
	}
	if s.Program == "" && !slices.Contains(s.Params, ParamProgram) {
		return nil, p.errf(doc, "program", "missing; name the base program file (relative to the study file)")
	}

	// Expand: explicit points outermost (in order), grid inside with the
	// last grid key varying fastest.
	if explicit == nil {
		explicit = [][]string{nil}
	}
	total := len(explicit)
	for _, a := range axes {
		total *= len(a)
		if total > MaxPoints {
			return nil, p.errf(varyNode, "vary", "more than %d points", MaxPoints)
		}
	}
	s.Points = make([]Point, 0, total)
	idx := make([]int, len(axes))
	for _, row := range explicit {
		for j := range idx {
			idx[j] = 0
		}
		for {
			vals := append([]string(nil), row...)
			for j, a := range axes {
				vals = append(vals, a[idx[j]])
			}
			s.Points = append(s.Points, Point{Index: len(s.Points), Values: vals})
			j := len(axes) - 1
			for ; j >= 0; j-- {
				idx[j]++
				if idx[j] < len(axes[j]) {
					break
				}
				idx[j] = 0
			}
			if j < 0 {
				break
			}
		}
	}

	s.lines = keyLines(doc) // (a plot naming no metric may refuse a metric: checkMetrics)
	if plotNode != nil {
		plots, err := p.plots(plotNode, s)
		if err != nil {
			return nil, err
		}
		s.Plots = plots
	}
	return s, nil
}

// nonPositiveX finds a point of the plot (one its Where keeps) whose x, a
// varied parameter on a logarithmic axis, is a number not above 0: its
// index and value.
func nonPositiveX(s *Study, pl Plot) (int, string, bool) {
	q := slices.Index(s.Params, pl.X)
	if !pl.LogX || q < 0 {
		return 0, "", false
	}
points:
	for _, pt := range s.Points {
		for param, want := range pl.Where {
			if i := slices.Index(s.Params, param); i >= 0 && pt.Values[i] != want {
				continue points
			}
		}
		if v, err := strconv.ParseFloat(pt.Values[q], 64); err == nil && !(v > 0) {
			return pt.Index, pt.Values[q], true
		}
	}
	return 0, "", false
}

// checkProgramMachine refuses a program.machine that the study sets or
// varies beside a machine of its own (the key machine, or a varied
// machine): a run's machine (-m) replaces the program's machine: key and
// any override of it, so each point would silently run on the study's
// machine whatever its program.machine says.
func (p *parser) checkProgramMachine(s *Study, setNode, varyNode, pointsNode *yaml.Node) error {
	var otherKey string
	switch {
	case slices.Contains(s.Params, ParamMachine):
		otherKey = s.studyKey(ParamMachine)
	case s.Machine != "":
		otherKey = "machine"
	default:
		return nil
	}
	var key string
	var n *yaml.Node
	for i, o := range s.Set {
		if strings.EqualFold(o.Path, "program.machine") {
			key, n = "set."+o.Path, setNode.Content[2*i]
		}
	}
	for _, q := range s.Params {
		if strings.EqualFold(q, "program.machine") {
			key = s.studyKey(q)
			n = varyNode
			if strings.HasPrefix(key, "points[]") {
				n = pointsNode
			}
			if m := mappingKey(n, q); m != nil {
				n = m
			}
		}
	}
	if key == "" {
		return nil
	}
	var msg string
	switch {
	case otherKey != "machine": // (machine varied)
		msg = fmt.Sprintf("the study varies the machine (key %q), which replaces the program's; keep one of them", otherKey)
	case strings.HasPrefix(key, "set."):
		msg = `the study's machine (key "machine") replaces the program's; give the one machine as "machine"`
	case strings.HasPrefix(key, "points[]."):
		msg = `the study's machine (key "machine") replaces the program's; give "machine" in the points instead`
	default:
		msg = `the study's machine (key "machine") replaces the program's; vary "machine" instead`
	}
	return p.errf(n, key, "%s", msg)
}

// checkColumns refuses a metric whose results.csv column would have the
// name of another column (a table with two columns of one name: tools read
// one, or rename it): index, status, error, the varied program or machine,
// a size parameter's NAME_bytes, or a varied dotted path (program.n: the
// parameter's column holds it as written).
func (p *parser) checkColumns(s *Study, metricsNode *yaml.Node) error {
	fixed := map[string]string{
		"index":  "the point's index",
		"status": "the point's status",
		"error":  "the point's failure message",
	}
	for i, m := range s.Metrics {
		key := fmt.Sprintf("metrics[%d]", i)
		n := metricsNode
		if n.Kind == yaml.SequenceNode && i < len(n.Content) {
			n = n.Content[i]
		}
		lower := strings.ToLower(m)
		if what, ok := fixed[lower]; ok {
			return p.errf(n, key, "%q would be a second column %s of results.csv (%s); record the keys below it (%s.…)", m, lower, what, m)
		}
		for _, q := range s.Params {
			switch {
			case q == ParamProgram && lower == q:
				return p.errf(n, key, "%q would be a second column program of results.csv (the varied program file); record the keys below it (program.…)", m)
			case q == ParamMachine && lower == q:
				return p.errf(n, key, "%q would be a second column machine of results.csv, which names each point's machine already (the varied machine)", m)
			case strings.EqualFold(m, q):
				return p.errf(n, key, "%q would be a second column %s of results.csv, which holds each point's value already (the varied parameter, as written)", m, q)
			case strings.EqualFold(m, q+"_bytes"):
				return p.errf(n, key, "%q would be a second column of results.csv (parameter %s in bytes, where its values are sizes)", m, q)
			}
		}
	}
	return nil
}

// aliased returns the node alias n names (*v: the node &v marks), or n.
func aliased(n *yaml.Node) *yaml.Node {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		return n.Alias
	}
	return n
}

// mappingKey returns the key node named name (in any case) of mapping n,
// or of n's first mapping where n is a list of them; nil if none.
func mappingKey(n *yaml.Node, name string) *yaml.Node {
	if n == nil {
		return nil
	}
	if n.Kind == yaml.SequenceNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	if n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if strings.EqualFold(n.Content[i].Value, name) {
			return n.Content[i]
		}
	}
	return nil
}

// keyLines returns the line of each key of a study's document: the top
// level's, set's and vary's entries, the points' keys (their first, and
// each entry's: "points[3].program.m"), the metrics' entries.
func keyLines(doc *yaml.Node) map[string]int {
	lines := map[string]int{}
	for i := 0; i+1 < len(doc.Content); i += 2 {
		k, v := doc.Content[i], doc.Content[i+1]
		top := strings.ToLower(k.Value) // (the top level's keys are case-insensitive: SET is set)
		lines[top] = k.Line
		switch {
		case v.Kind == yaml.MappingNode && (top == "set" || top == "vary"):
			for j := 0; j+1 < len(v.Content); j += 2 {
				lines[top+"."+v.Content[j].Value] = v.Content[j].Line
			}
		case v.Kind == yaml.SequenceNode && top == "points":
			for r, pt := range v.Content {
				for j := 0; pt.Kind == yaml.MappingNode && j+1 < len(pt.Content); j += 2 {
					if key := "points[]." + pt.Content[j].Value; lines[key] == 0 {
						lines[key] = pt.Content[j].Line
					}
					lines[fmt.Sprintf("points[%d].%s", r, pt.Content[j].Value)] = pt.Content[j].Line
				}
			}
		case v.Kind == yaml.SequenceNode && top == "metrics":
			for j, m := range v.Content {
				lines[fmt.Sprintf("metrics[%d]", j)] = m.Line
			}
		}
	}
	return lines
}

// at returns where the study file gives key, for a message: "PATH:LINE"
// (a program or machine varied: the line of its vary or points key), or
// the path where the line is not known.
func (s *Study) at(key string) string {
	keys := []string{key}
	if slices.Contains(s.Params, key) { // (varied: its line there, not the base's)
		keys = []string{s.studyKey(key), key}
	}
	for _, k := range keys {
		if l := s.lines[k]; l > 0 {
			return fmt.Sprintf("%s:%d", s.Path, l)
		}
	}
	return s.Path
}

// pointAt is at for a key that gives point p a value: for a key of the
// explicit points ("points[].program.m"), the line of p's own entry.
func (s *Study) pointAt(p Point, key string) string {
	if path, ok := strings.CutPrefix(key, "points[]."); ok && s.pointRows > 0 {
		row := p.Index / (len(s.Points) / s.pointRows)
		if l := s.lines[fmt.Sprintf("points[%d].%s", row, path)]; l > 0 {
			return fmt.Sprintf("%s:%d", s.Path, l)
		}
	}
	return s.at(key)
}

// resolve returns the value v of parameter param as a run uses it: a
// program or machine file (also program.machine's) resolved against the
// study's folder; other values as they are.
func (s *Study) resolve(param, v string) string { return resolveParam(s.Dir, param, v) }

// resolveParam is Study.resolve for a study in folder dir.
func resolveParam(dir, param, v string) string {
	switch {
	case param == ParamProgram:
		return resolveFile(dir, v)
	case fileParam(param):
		return resolveMachine(dir, v)
	case programs.IsFileKey(param): // (inputs.a: the study names it)
		return resolveFile(dir, v)
	}
	return v
}

// fileParam reports whether parameter param's values may be files the
// study names: program, machine, and program.machine (the machine file of
// a program.machine override is a file the study names too).
func fileParam(param string) bool {
	return param == ParamProgram || param == ParamMachine || strings.EqualFold(param, "program.machine")
}

// resolveFile makes a relative file path relative to the study's directory.
func resolveFile(dir, f string) string {
	if f == "" || filepath.IsAbs(f) {
		return f
	}
	return filepath.Join(dir, f)
}

// resolveMachine resolves a machine given as a file (isMachineFile);
// embedded names stay as they are.
func resolveMachine(dir, m string) string {
	if isMachineFile(m) {
		return resolveFile(dir, m)
	}
	return m
}

// isMachineFile reports whether a study's machine names a file (it has a
// path separator or a .yaml/.yml extension) rather than an embedded
// machine.
func isMachineFile(m string) bool {
	ext := strings.ToLower(filepath.Ext(m))
	return strings.ContainsAny(m, `/\`) || ext == ".yaml" || ext == ".yml"
}

func (p *parser) scalar(n *yaml.Node, key string) (string, error) {
	n = aliased(n)
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		return "", p.errf(n, key, "must be a single value")
	}
	return n.Value, nil
}

func (p *parser) stringList(n *yaml.Node, key string) ([]string, error) {
	n = aliased(n)
	if n.Kind == yaml.ScalarNode && n.Tag != "!!null" {
		return []string{n.Value}, nil
	}
	if n.Kind != yaml.SequenceNode {
		return nil, p.errf(n, key, "must be a list, e.g. [a, b]")
	}
	if len(n.Content) == 0 {
		return nil, p.errf(n, key, "empty list")
	}
	out := make([]string, 0, len(n.Content))
	for i, c := range n.Content {
		t, err := p.scalar(c, fmt.Sprintf("%s[%d]", key, i))
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// checkParam checks the form of a varied parameter name.
func (p *parser) checkParam(n *yaml.Node, key, name string) error {
	if name == ParamProgram || name == ParamMachine {
		return nil
	}
	lower := strings.ToLower(name)
	if lower == ParamProgram || lower == ParamMachine {
		// (The parameter names the files each point runs: spelt one way.)
		return p.errf(n, key, "write %q in lowercase: the parameter that compares %s files", lower, lower)
	}
	if !strings.HasPrefix(lower, "program.") && !strings.HasPrefix(lower, "machine.") && !strings.HasPrefix(lower, "node.") && !strings.HasPrefix(lower, "cluster.") {
		return p.errf(n, key, "a parameter is program, machine or a dotted path starting with program., machine., or (cluster and node descriptions) node. or cluster. (as with --set)")
	}
	if slices.Contains(strings.Split(name, "."), "") {
		return p.errf(n, key, "bad dotted path %q", name)
	}
	return nil
}

func (p *parser) overrides(n *yaml.Node, key string) ([]machines.Override, error) {
	if n.Kind != yaml.MappingNode {
		return nil, p.errf(n, key, "must be a mapping of dotted path: value")
	}
	var out []machines.Override
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		sub := key + "." + k.Value
		if err := p.checkParam(k, sub, k.Value); err != nil {
			return nil, err
		}
		if k.Value == ParamProgram || k.Value == ParamMachine {
			return nil, p.errf(k, sub, "give the base %s as the top-level key %q", k.Value, k.Value)
		}
		for _, o := range out {
			if strings.EqualFold(o.Path, k.Value) {
				return nil, p.errf(k, sub, "given twice")
			}
		}
		val, err := p.scalar(v, sub)
		if err != nil {
			return nil, err
		}
		out = append(out, machines.Override{Path: k.Value, Value: val})
	}
	return out, nil
}

// rowKey identifies an explicit point's values, a program or machine file
// by its path resolved against the study's folder.
func (p *parser) rowKey(params, row []string) string {
	key := make([]string, len(row))
	for i, v := range row {
		key[i] = canonicalValue(p.identity(params[i], v))
	}
	return strings.Join(key, "\x00")
}

// identity returns what tells parameter param's value v from another: a
// file (a program, a machine file, a file key's) as an absolute path with
// its links resolved, so that two spellings of one file are one whatever
// the study's path is written (relative or absolute) and through links;
// other values as they are.
func (p *parser) identity(param, v string) string {
	r := resolveParam(p.dir, param, v)
	if param != ParamProgram && !programs.IsFileKey(param) && !(fileParam(param) && isMachineFile(v)) {
		return r
	}
	a := absPath(r)
	if e, err := filepath.EvalSymlinks(a); err == nil {
		a = e
	}
	return a
}

// canonicalValue returns one spelling of a value for each value --set
// reads alike: a decimal integer without leading zeros or a plus sign (032
// and 32), a size, frequency or bandwidth as its kind and amount (1MiB and
// 1024KiB); other values as they are: for telling repeated values and
// points, and a plot's where from the points' values.
func canonicalValue(v string) string {
	if i, err := strconv.ParseInt(v, 10, 64); err == nil && strings.Trim(v, "+-0123456789") == "" {
		return strconv.FormatInt(i, 10)
	}
	if i, ok := machines.ParseInteger(v); ok { // (0x40, 1_000, 64.0: an integer key's value as 64 is)
		return strconv.FormatInt(i, 10)
	}
	for _, k := range rangeKinds[1:] { // (not plain numbers: 1e3 is no integer key's value)
		if x, ok := k.parse(v); ok {
			return k.name + ":" + x.RatString()
		}
	}
	return v
}

// values reads a parameter's values: a list of scalars or a range string.
func (p *parser) values(n *yaml.Node, key string) ([]string, error) {
	n = aliased(n) // (*v: the list &v names)
	switch {
	case n.Kind == yaml.SequenceNode:
		if len(n.Content) == 0 {
			return nil, p.errf(n, key, "empty list of values")
		}
		out := make([]string, 0, len(n.Content))
		first := make(map[string]int, len(n.Content)) // each value's canonicalValue → its first index
		for i, c := range n.Content {
			t, err := p.scalar(c, fmt.Sprintf("%s[%d]", key, i))
			if err != nil {
				return nil, err
			}
			// (A map, not each earlier value compared: a list of 10000
			// values took seconds.)
			canon := canonicalValue(t)
			if at, ok := first[canon]; ok {
				if out[at] != t {
					return nil, p.errf(c, key, "value %q listed twice (as %q: one value)", t, out[at])
				}
				return nil, p.errf(c, key, "value %q listed twice", t)
			}
			first[canon] = len(out)
			out = append(out, t)
		}
		return out, nil
	case n.Kind == yaml.ScalarNode && n.Tag != "!!null":
		if !strings.Contains(n.Value, "..") || key == "vary."+ParamProgram || key == "vary."+ParamMachine {
			return []string{n.Value}, nil // (a program or machine file: ../x.yaml is a path, not a range)
		}
		vals, err := ParseRange(n.Value)
		if err != nil {
			return nil, p.errf(n, key, "%v", err)
		}
		return vals, nil
	}
	return nil, p.errf(n, key, "must be a list of values or a range such as \"256KiB..4MiB ×2\" or \"-20..10 +2\"")
}

// countPoints returns the number of points the explicit points
// (pointsNode, nil for none) and the grid (varyNode) make, from the
// lengths of their lists and ranges alone — no value read or compared —,
// or MaxPoints+1 as soon as the count passes MaxPoints. A value that is
// not a list or a range counts as one: its own error comes when it is
// read.
func (p *parser) countPoints(pointsNode, varyNode *yaml.Node) int {
	total := 1
	if pointsNode != nil && pointsNode.Kind == yaml.SequenceNode && len(pointsNode.Content) > 0 && len(pointsNode.Content) <= MaxPoints {
		total = len(pointsNode.Content) // (more are refused as points')
	}
	if varyNode.Kind != yaml.MappingNode {
		return total
	}
	for i := 0; i+1 < len(varyNode.Content); i += 2 {
		k, v := varyNode.Content[i], aliased(varyNode.Content[i+1])
		n := 1
		switch {
		case v.Kind == yaml.SequenceNode:
			n = max(len(v.Content), 1)
		case v.Kind == yaml.ScalarNode && v.Tag != "!!null" && strings.Contains(v.Value, "..") && k.Value != ParamProgram && k.Value != ParamMachine:
			if vals, err := ParseRange(v.Value); err == nil { // (at most maxRangeValues)
				n = max(len(vals), 1)
			}
		}
		total *= n // (MaxPoints at most times a list's length: no overflow)
		if total > MaxPoints {
			return MaxPoints + 1
		}
	}
	return total
}

// points reads the explicit point list: mappings with the same keys.
func (p *parser) points(n *yaml.Node) ([]string, [][]string, error) {
	if n.Kind != yaml.SequenceNode {
		return nil, nil, p.errf(n, "points", "must be a list of mappings {parameter: value, …}")
	}
	if len(n.Content) == 0 {
		return nil, nil, p.errf(n, "points", "empty list")
	}
	if len(n.Content) > MaxPoints {
		return nil, nil, p.errf(n, "points", "more than %d points", MaxPoints)
	}
	var params []string
	var rows [][]string
	seen := map[string]int{} // a row's values, joined, → its index
	for i, c := range n.Content {
		key := fmt.Sprintf("points[%d]", i)
		if c.Kind != yaml.MappingNode || len(c.Content) == 0 {
			return nil, nil, p.errf(c, key, "must be a mapping {parameter: value, …}")
		}
		var names []string
		row := make([]string, 0, len(c.Content)/2)
		for j := 0; j+1 < len(c.Content); j += 2 {
			k, v := c.Content[j], c.Content[j+1]
			sub := key + "." + k.Value
			if err := p.checkParam(k, sub, k.Value); err != nil {
				return nil, nil, err
			}
			if slices.ContainsFunc(names, func(q string) bool { return strings.EqualFold(q, k.Value) }) {
				return nil, nil, p.errf(k, sub, "given twice (keys are case-insensitive)")
			}
			val, err := p.scalar(v, sub)
			if err != nil {
				return nil, nil, err
			}
			names = append(names, k.Value)
			row = append(row, val)
		}
		if i == 0 {
			params = names
		} else {
			// Reorder to the first point's key order.
			if len(names) != len(params) {
				return nil, nil, p.errf(c, key, "has keys %v but points[0] has %v; every point sets the same parameters", names, params)
			}
			ordered := make([]string, len(params))
			for j, q := range params {
				at := slices.Index(names, q)
				if at < 0 {
					return nil, nil, p.errf(c, key, "has keys %v but points[0] has %v; every point sets the same parameters", names, params)
				}
				ordered[j] = row[at]
			}
			row = ordered
		}
		joined := p.rowKey(params, row)
		if r, dup := seen[joined]; dup {
			return nil, nil, p.errf(c, key, "repeats points[%d] (the same values, or files: it would run twice)", r)
		}
		seen[joined] = len(rows)
		rows = append(rows, row)
	}
	return params, rows, nil
}

func (p *parser) plots(n *yaml.Node, s *Study) ([]Plot, error) {
	var nodes []*yaml.Node
	switch n.Kind {
	case yaml.MappingNode:
		nodes = []*yaml.Node{n}
	case yaml.SequenceNode:
		nodes = n.Content
	default:
		return nil, p.errf(n, "plot", "must be a mapping {x: …, y: …} or a list of them")
	}
	var out []Plot
	for i, pn := range nodes {
		key := "plot"
		if n.Kind == yaml.SequenceNode {
			key = fmt.Sprintf("plot[%d]", i)
		}
		pl, err := p.plot(pn, key, s)
		if err != nil {
			return nil, err
		}
		for _, q := range out {
			if q.Name == pl.Name {
				return nil, p.errf(pn, key+".name", "two plots are named %q; give them distinct names", pl.Name)
			}
		}
		out = append(out, pl)
	}
	return out, nil
}

func (p *parser) plot(n *yaml.Node, key string, s *Study) (Plot, error) {
	var pl Plot
	if n.Kind != yaml.MappingNode {
		return pl, p.errf(n, key, "must be a mapping {x: …, y: …}")
	}
	// Parameters and metrics are named in any case (as their keys and
	// report paths are read); the plot keeps the study's spelling.
	spelt := func(list []string, q *string) bool {
		i := slices.IndexFunc(list, func(x string) bool { return strings.EqualFold(x, *q) })
		if i >= 0 {
			*q = list[i]
		}
		return i >= 0
	}
	isParam := func(q *string) bool { return spelt(s.Params, q) }
	isMetric := func(q *string) bool { return spelt(s.Metrics, q) }
	// A name that is none of the metrics may be a metric's right name
	// where the metric has a typo (metrics: [flops.tflop], y:
	// flops.tflops): the metric's refusal first, the root cause.
	notMetric := func(v *yaml.Node, sub, format string, a ...any) error {
		if err := s.checkMetrics(); err != nil {
			return err
		}
		return p.errf(v, sub, format, a...)
	}
	var unknown []*yaml.Node
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		sub := key + "." + k.Value
		name := strings.ToLower(k.Value)
		if seen[name] {
			return pl, p.errf(k, sub, "given twice")
		}
		seen[name] = true
		var err error
		switch name {
		case "name":
			pl.Name, err = p.scalar(v, sub)
			switch {
			case err != nil:
			case pl.Name == "" || pl.Name == "." || pl.Name == "..":
				err = p.errf(v, sub, "%q is not a file name (the plot's files are NAME.png, .svg, .pdf)", pl.Name)
			case strings.ContainsAny(pl.Name, `/\`):
				err = p.errf(v, sub, "%q: a plain file name, without slashes (the plot's files go in the output directory)", pl.Name)
			case pl.Name == "results":
				err = p.errf(v, sub, "\"results\" is taken by results.csv and results.jsonl; pick another name")
			case len(pl.Name) > maxPlotName:
				err = p.errf(v, sub, "%d bytes: at most %d (a file name, with the temporary's prefix and suffix around it)", len(pl.Name), maxPlotName)
			case strings.ContainsRune(pl.Name, 0):
				err = p.errf(v, sub, "%q: a file name cannot hold a NUL byte", pl.Name)
			}
		case "title":
			pl.Title, err = p.scalar(v, sub)
		case "xlabel":
			pl.XLabel, err = p.scalar(v, sub)
		case "x":
			var xs []string
			xs, err = p.stringList(v, sub)
			if err == nil && !isParam(&xs[0]) && !isMetric(&xs[0]) {
				err = notMetric(v, sub, "%q is neither a varied parameter (%s) nor a metric", xs[0], strings.Join(s.Params, ", "))
			}
			for i := range xs {
				if err == nil && len(xs) > 1 && !isMetric(&xs[i]) {
					err = notMetric(v, sub, "%q is not one of the metrics (%s); several x axes are metrics", xs[i], strings.Join(s.Metrics, ", "))
				}
				if err == nil && slices.Contains(xs[:i], xs[i]) {
					err = p.errf(v, sub, "%q listed twice", xs[i])
				}
			}
			if err == nil {
				pl.X, pl.MoreX = xs[0], xs[1:]
			}
		case "roof":
			pl.Roof, err = p.roof(v, sub)
		case "y":
			pl.Y, err = p.stringList(v, sub)
			for i := range pl.Y {
				if err == nil && !isMetric(&pl.Y[i]) {
					err = notMetric(v, sub, "%q is not one of the metrics (%s)", pl.Y[i], strings.Join(s.Metrics, ", "))
				}
				if err == nil && slices.Contains(pl.Y[:i], pl.Y[i]) {
					err = p.errf(v, sub, "%q listed twice (one line drawn over the other)", pl.Y[i])
				}
			}
		case "series":
			pl.Series, err = p.stringList(v, sub)
			for i := range pl.Series {
				if err == nil && !isParam(&pl.Series[i]) {
					err = p.errf(v, sub, "%q is not a varied parameter (%s)", pl.Series[i], strings.Join(s.Params, ", "))
				}
				if err == nil && slices.Contains(pl.Series[:i], pl.Series[i]) {
					err = p.errf(v, sub, "%q listed twice", pl.Series[i])
				}
			}
		case "logx", "logy", "join":
			var t string
			t, err = p.scalar(v, sub)
			if err == nil {
				b, e := strconv.ParseBool(t)
				if e != nil {
					err = p.errf(v, sub, "want true or false, got %q", t)
				}
				switch name { // (keys in any case: LogX)
				case "logx":
					pl.LogX = b
				case "logy":
					pl.LogY = b
				default:
					pl.Join = b
				}
			}
		case "ymin", "ymax":
			var t string
			t, err = p.scalar(v, sub)
			if err == nil {
				f, e := strconv.ParseFloat(t, 64)
				if e != nil || math.IsNaN(f) || math.IsInf(f, 0) {
					err = p.errf(v, sub, "want a finite number, got %q", t)
					break
				}
				if name == "ymin" {
					pl.YMin = &f
				} else {
					pl.YMax = &f
				}
			}
		case "where":
			var ovs []machines.Override
			if v.Kind != yaml.MappingNode {
				err = p.errf(v, sub, "must be a mapping {parameter: value}")
				break
			}
			pl.Where = map[string]string{}
			for j := 0; j+1 < len(v.Content); j += 2 {
				wk, wv := v.Content[j], v.Content[j+1]
				param := wk.Value
				if !isParam(&param) {
					return pl, p.errf(wk, sub+"."+wk.Value, "not a varied parameter (%s)", strings.Join(s.Params, ", "))
				}
				t, e := p.scalar(wv, sub+"."+wk.Value)
				if e != nil {
					return pl, e
				}
				if _, twice := pl.Where[param]; twice {
					return pl, p.errf(wk, sub+"."+wk.Value, "given twice (parameters are named in any case)")
				}
				q := slices.Index(s.Params, param)
				vals := s.distinct(q)
				at := slices.Index(vals, t)
				if at < 0 {
					// Another spelling of one of the files (./a.yaml for
					// a.yaml) or values (1024KiB for 1MiB): the points'
					// spelling is the one recorded.
					at = slices.IndexFunc(vals, func(v string) bool {
						return canonicalValue(s.resolve(param, v)) == canonicalValue(s.resolve(param, t))
					})
				}
				if at < 0 {
					return pl, p.errf(wv, sub+"."+wk.Value, "%q is not one of its values (%s): the plot would be empty", t, strings.Join(vals, ", "))
				}
				pl.Where[param] = vals[at]
			}
			_ = ovs
		default:
			unknown = append(unknown, k)
		}
		if err != nil {
			return pl, err
		}
	}
	if len(unknown) > 0 {
		return pl, p.unknownKeys(key+".", unknown, plotKeys)
	}
	if pl.X == "" {
		return pl, p.errf(n, key+".x", "missing; the x axis is a varied parameter or a metric")
	}
	if len(pl.Y) == 0 {
		return pl, p.errf(n, key+".y", "missing; the y axis is one or more metrics")
	}
	if slices.Contains(pl.Series, pl.X) {
		return pl, p.errf(n, key+".series", "%q is the x axis", pl.X)
	}
	if pl.YMin != nil && pl.YMax != nil && !(*pl.YMin < *pl.YMax) {
		return pl, p.errf(n, key+".ymin", "%v must be below ymax %v", *pl.YMin, *pl.YMax)
	}
	if pt, v, ok := nonPositiveX(s, pl); ok {
		// (Found before the study runs: the plot dropped the point with a
		// warning once every point had run.)
		return pl, p.errf(n, key+".logx", "x %s is %s at point %d, which a logarithmic axis has no place for: leave the point out (where:) or the axis linear", pl.X, v, pt)
	}
	if pl.Name == "" {
		pl.Name = fileName(strings.Join(pl.Y, "+") + "-vs-" + pl.X)
		if len(pl.Name) > maxPlotName {
			// Many y metrics: a name the file system takes, still unique
			// to the plot's metrics.
			sum := sha256.Sum256([]byte(pl.Name))
			pl.Name = pl.Name[:maxPlotName-17] + "-" + hex.EncodeToString(sum[:8])
		}
	}
	return pl, nil
}

// maxPlotName bounds a plot's file name (its temporary, .NAME.tmp-N.png,
// within the usual 255-byte limit of a file name).
const maxPlotName = 200

// roof parses a plot's roof: {peak: P, slopes: {label: slope, …}}, every
// figure a positive number.
func (p *parser) roof(n *yaml.Node, key string) (*Roof, error) {
	if n.Kind != yaml.MappingNode {
		return nil, p.errf(n, key, "must be a mapping {peak: P, slopes: {label: bandwidth, …}}")
	}
	num := func(v *yaml.Node, sub string) (float64, error) {
		t, err := p.scalar(v, sub)
		if err != nil {
			return 0, err
		}
		f, e := strconv.ParseFloat(t, 64)
		if e != nil || !(f > 0) || math.IsInf(f, 0) {
			return 0, p.errf(v, sub, "want a positive number, got %q", t)
		}
		return f, nil
	}
	r := &Roof{}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		sub := key + "." + k.Value
		name := strings.ToLower(k.Value)
		if seen[name] {
			return nil, p.errf(k, sub, "given twice")
		}
		seen[name] = true
		switch name {
		case "peak":
			f, err := num(v, sub)
			if err != nil {
				return nil, err
			}
			r.Peak = f
		case "slopes":
			if v.Kind != yaml.MappingNode || len(v.Content) == 0 {
				return nil, p.errf(v, sub, "must be a mapping {label: bandwidth, …}")
			}
			for j := 0; j+1 < len(v.Content); j += 2 {
				f, err := num(v.Content[j+1], sub+"."+v.Content[j].Value)
				if err != nil {
					return nil, err
				}
				r.Slopes = append(r.Slopes, RoofSlope{Label: v.Content[j].Value, Slope: f})
			}
		default:
			return nil, p.unknownKeys(key+".", []*yaml.Node{k}, roofKeys)
		}
	}
	if r.Peak == 0 || len(r.Slopes) == 0 {
		return nil, p.errf(n, key, "needs peak and slopes")
	}
	return r, nil
}

// fileName turns a label into a file name.
func fileName(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '+', r == '_':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

// A range kind: how endpoints and steps parse and print.
type rangeKind struct {
	name  string
	parse func(string) (*big.Rat, bool)
	print func(*big.Rat) string
}

func ratOfInt(i int64) *big.Rat { return new(big.Rat).SetInt64(i) }

var rangeKinds = []rangeKind{
	{"number", func(s string) (*big.Rat, bool) {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return nil, false
		}
		r, ok := new(big.Rat).SetString(s)
		return r, ok
	}, func(r *big.Rat) string {
		if r.IsInt() {
			return r.Num().String()
		}
		f, _ := r.Float64()
		return strconv.FormatFloat(f, 'g', -1, 64)
	}},
	{"size", func(s string) (*big.Rat, bool) {
		v, err := machines.ParseSize(s)
		if err != nil {
			return nil, false
		}
		return ratOfInt(int64(v)), true
	}, func(r *big.Rat) string {
		f, _ := r.Float64()
		return machines.Size(int64(math.Round(f))).String()
	}},
	{"frequency", func(s string) (*big.Rat, bool) {
		v, err := machines.ParseFrequency(s)
		if err != nil {
			return nil, false
		}
		return new(big.Rat).SetFloat64(float64(v)), true
	}, func(r *big.Rat) string {
		f, _ := r.Float64()
		return machines.Frequency(f).String()
	}},
	{"bandwidth", func(s string) (*big.Rat, bool) {
		v, err := machines.ParseBandwidth(s)
		if err != nil {
			return nil, false
		}
		return new(big.Rat).SetFloat64(float64(v)), true
	}, func(r *big.Rat) string {
		f, _ := r.Float64()
		return machines.Bandwidth(f).String()
	}},
}

// radixPrefixed reports whether s starts with a number in another base
// than ten (0x10, -0o7, 0b1; YAML reads them as integers).
func radixPrefixed(s string) bool {
	s = strings.TrimLeft(s, "+-")
	return len(s) > 2 && s[0] == '0' && strings.ContainsRune("xXoObB", rune(s[1]))
}

// maxRangeValues bounds the values one range may generate.
const maxRangeValues = 10000

// maxDefaultStepValues bounds the values of a range without a step (+1):
// a longer one must say its step.
const maxDefaultStepValues = 64

// ParseRange expands a range "START..END STEP" into its values, END
// included when a step lands on it. STEP is "×F" (also "xF" or "*F",
// geometric, F > 1) or "+D" (arithmetic, D > 0); it may be left out for
// integers (+1) up to maxDefaultStepValues values. Endpoints are plain numbers (negative allowed) or sizes,
// frequencies or bandwidths with units (256KiB..4MiB ×2, 1GHz..2GHz
// +250MHz); generated values print in the same notation.
func ParseRange(s string) ([]string, error) {
	text := strings.TrimSpace(s)
	lo, rest, ok := strings.Cut(text, "..")
	if !ok {
		return nil, fmt.Errorf("range %q: want START..END STEP, e.g. 256KiB..4MiB ×2 or -20..10 +2", s)
	}
	lo = strings.TrimSpace(lo)
	rest = strings.TrimSpace(rest)
	if radixPrefixed(lo) || radixPrefixed(rest) {
		// (0x20 +1 would read as the end 0 and a step ×20 +1.)
		return nil, fmt.Errorf("range %q: write the endpoints in decimal (0x, 0o and 0b numbers are single values, not range ends)", s)
	}
	hi, step := splitStep(rest)
	if strings.ContainsAny(hi, " \t") {
		return nil, fmt.Errorf("range %q: the step must start with × (or x, *) or +", s)
	}
	if lo == "" || hi == "" {
		return nil, fmt.Errorf("range %q: want START..END STEP, e.g. 256KiB..4MiB ×2 or -20..10 +2", s)
	}
	var kind *rangeKind
	var a, b *big.Rat
	for i := range rangeKinds {
		k := &rangeKinds[i]
		x, ok1 := k.parse(lo)
		y, ok2 := k.parse(hi)
		if ok1 && ok2 {
			kind, a, b = k, x, y
			break
		}
	}
	if kind == nil {
		return nil, fmt.Errorf("range %q: %q and %q are not two numbers, sizes, frequencies or bandwidths", s, lo, hi)
	}
	if a.Cmp(b) > 0 {
		return nil, fmt.Errorf("range %q: start %s is above end %s", s, lo, hi)
	}
	geometric := false
	var st *big.Rat
	switch {
	case step == "":
		if kind.name != "number" || !a.IsInt() || !b.IsInt() {
			return nil, fmt.Errorf("range %q: give a step (×F or +D); only integer ranges default to +1", s)
		}
		if n := new(big.Int).Sub(b.Num(), a.Num()); !n.IsInt64() || n.Int64() >= maxDefaultStepValues {
			// (256..1024 meant 769 points, silently.)
			return nil, fmt.Errorf("range %q: %s values at the default step +1; give the step (+D or ×F) of a range of more than %d", s, new(big.Int).Add(n, big.NewInt(1)), maxDefaultStepValues)
		}
		st = ratOfInt(1)
	case strings.HasPrefix(step, "+"):
		t := strings.TrimSpace(step[1:])
		var ok bool
		st, ok = kind.parse(t)
		if !ok && kind.name != "number" {
			st, ok = rangeKinds[0].parse(t)
		}
		if !ok || st.Sign() <= 0 {
			return nil, fmt.Errorf("range %q: step %q must be a positive %s", s, step, kind.name)
		}
	default:
		geometric = true
		t := strings.TrimSpace(strings.TrimLeft(step, "×x*"))
		t = strings.TrimPrefix(t, "×")
		var ok bool
		st, ok = rangeKinds[0].parse(strings.TrimSpace(t))
		if !ok || st.Cmp(ratOfInt(1)) <= 0 {
			return nil, fmt.Errorf("range %q: factor %q must be a number above 1", s, step)
		}
		if a.Sign() <= 0 {
			return nil, fmt.Errorf("range %q: a geometric range (×F) must start above 0", s)
		}
	}
	if kind.name == "size" && (!a.IsInt() || !b.IsInt() || !geometric && !st.IsInt()) {
		// Sizes print in whole bytes: a fractional one would round, value
		// by value (100B..110B +1.5: steps of 2, 1, 2, 1, …).
		return nil, fmt.Errorf("range %q: sizes come in whole bytes; give a start, end and step that are", s)
	}
	var out []string
	v := new(big.Rat).Set(a)
	for v.Cmp(b) <= 0 {
		if len(out) == maxRangeValues {
			return nil, fmt.Errorf("range %q: more than %d values", s, maxRangeValues)
		}
		if kind.name == "size" && !v.IsInt() {
			return nil, fmt.Errorf("range %q: sizes come in whole bytes, and %s×… gives %s bytes; use a factor that keeps them whole (×2)", s, lo, v.FloatString(2))
		}
		t := kind.print(v)
		if len(out) > 0 && out[len(out)-1] == t {
			return nil, fmt.Errorf("range %q: step too small to give distinct values", s)
		}
		out = append(out, t)
		if geometric {
			v.Mul(v, st)
		} else {
			v.Add(v, st)
		}
		if len(v.Num().Bits())+len(v.Denom().Bits()) > 64 {
			return nil, fmt.Errorf("range %q: the values need too many digits; use a simpler step", s)
		}
	}
	return out, nil
}

// splitStep separates "END STEP" where STEP starts with ×, x, * or + (a +
// right after an exponent's e belongs to the number).
func splitStep(rest string) (end, step string) {
	for i, r := range rest {
		if i == 0 {
			continue
		}
		switch r {
		case '×', 'x', '*':
		case '+':
			if c := rest[i-1]; c == 'e' || c == 'E' {
				continue
			}
		default:
			continue
		}
		return strings.TrimSpace(rest[:i]), strings.TrimSpace(rest[i:])
	}
	return strings.TrimSpace(rest), ""
}

// studyKey returns the key of the study that gives parameter path its
// values, as messages name it: "set.PATH", "points[].PATH" or "vary.PATH".
func (s *Study) studyKey(path string) string {
	for _, o := range s.Set {
		if strings.EqualFold(o.Path, path) {
			return "set." + o.Path
		}
	}
	for i, q := range s.Params {
		if strings.EqualFold(q, path) {
			if i < s.pointKeys {
				return "points[]." + q
			}
			return "vary." + q
		}
	}
	return path
}

// namedByStudy returns a point's refusal err saying which key of the study
// gave the value refused, where the study did: a program file's refusal of
// a key the study set ("… (set by the study's vary.program.scheme=
// ape-fp32b)"; f, the point's program file, names its own key), or an
// override's own fault, which the run words for the command line ("--set
// machine.cores=0: …" → "set.machine.cores=0: …": the study has no
// --set).
func (s *Study) namedByStudy(f *programs.File, err error) error {
	if f != nil {
		err = f.NamedOverrideBy(err, func(overrides []string) string {
			var keys []string
			for _, o := range overrides {
				path, val, _ := strings.Cut(o, "=")
				keys = append(keys, s.studyKey(path)+"="+val)
			}
			return "set by the study's " + strings.Join(keys, ", ")
		})
	}
	msg := err.Error()
	if rest, ok := strings.CutPrefix(msg, "--set "); ok {
		if path, _, ok := strings.Cut(rest, "="); ok && !strings.ContainsAny(path, " :") {
			return fmt.Errorf("%s%s", s.studyKey(path), strings.TrimPrefix(rest, path))
		}
	}
	return err
}
