package isa

import (
	"fmt"
	"slices"
	"strings"

	"github.com/davinci-sim/davinci-sim/badinput"
	"github.com/davinci-sim/davinci-sim/fp"
)

// NodeKind is the kind of a source line (or block) in an assembly File.
type NodeKind uint8

// The node kinds.
const (
	NodeBlank   NodeKind = iota // empty line
	NodeComment                 // line holding only a comment
	NodeInstr                   // one instruction
	NodeRepeat                  // "repeat COUNT [VAR] {" … "}" block
)

// Arg is one operand as written: Key is empty for a positional operand or a
// flag word (init, acc, transpose, sat). Value is the value text (no white
// space); X is its parsed expression for numeric operands (nil for names of
// pipes, buffers, types, roundings and regions, and for flags).
type Arg struct {
	Key   string
	Value string
	X     *Expr
}

// Node is one line of an assembly file, or a repeat block spanning lines.
//
// Every node keeps its layout: Indent (leading white space as written) and,
// when the line has a comment, Gap (the white space before '#'; empty for a
// comment-only line) and Comment (from '#' to the end of the line).
type Node struct {
	Kind    NodeKind
	Line    int
	Indent  string
	Gap     string
	Comment string

	// NodeInstr: the mnemonic as written and its operands in order.
	Mnemonic string
	Args     []Arg

	// NodeRepeat: the trip count, the loop variable ("" when anonymous),
	// the body and the closing "}" line (a NodeBlank carrying its Line,
	// Indent, Gap and Comment).
	Count *Arg
	Var   string
	Body  []Node
	End   *Node

	spec     *opSpec
	tmpl     operands // operand values known at parse time
	dyn      []dynArg // operands that depend on variables
	instr    Instr    // the instruction when dyn is empty
	hasInstr bool     // NodeRepeat: the body yields at least one instruction
}

// dynArg is an operand whose value is evaluated at expansion.
type dynArg struct {
	k key
	x *Expr
}

// File is a parsed assembly file: its top-level nodes in source order.
type File struct {
	Name  string
	Nodes []Node
}

// Error is an assembly error: "file:line: message".
type Error struct {
	File string
	Line int
	Msg  string
}

// Error returns "file:line: message".
func (e *Error) Error() string {
	f := e.File
	if f == "" {
		f = "asm"
	}
	return fmt.Sprintf("%s:%d: %s", f, e.Line, clip(e.Msg))
}

// maxMsg bounds an error message's length: a message quotes the token it
// is about, and a hostile one can be megabytes long.
const maxMsg = 400

// clip shortens msg to about maxMsg bytes by cutting its middle (at rune
// boundaries), saying how long it was: the reason after a long quoted
// expression ("ends early", "nested too deeply") stays.
func clip(msg string) string { return badinput.ClipMiddle(msg, maxMsg) }

// parser holds the state of one Parse call.
type parser struct {
	name  string
	scope []string // loop variables of the enclosing repeats, outermost first
	o     operands // scratch: the operands of the instruction being read
}

func (p *parser) lookup(name string) (int, bool) {
	for i := len(p.scope) - 1; i >= 0; i-- {
		if p.scope[i] == name {
			return i + 1, true
		}
	}
	if name == "core" {
		return 0, true
	}
	return 0, false
}

// MaxLines bounds the lines of an assembly file Parse takes: 2^18, up to
// 0.5 GB of parsed lines by ParseHostBytes (2^18 nop lines, 1 MB, held
// 0.8 GB while Parse grew a slice per block by appending; 0.25 GB since).
const MaxLines = 1 << 18

// ParseHostBytes is an upper estimate of the host memory Parse holds at
// its peak for src, found without parsing it, for a caller to check
// against its bound first: parseLineBytes a line (its Node, copied once
// into its block's body; a block's closing line) and parseByteBytes a byte
// of code (an expression's nodes: up to one a byte, 80 bytes each;
// operands) — not of comments, which a node keeps as a part of src (a
// file of long comments was refused at 12× its measured peak).
// Measured by peak RSS over the run of a file of 262,000 lines (2026-12,
// this 2-CPU box, beside the run's own ~48 MiB): nop 0.9 KB a line, blank
// 0.8 KB, 64-deep nests of repeat 1 1.9 KB, 64-term sums 82 bytes a byte
// of the file, v.add lines of 8 expression operands 40 bytes a byte.
func ParseHostBytes(src string) int64 {
	code := 0
	for line := range strings.Lines(src) {
		if h := strings.IndexByte(line, '#'); h >= 0 {
			line = line[:h]
		}
		code += len(line)
	}
	return int64(Lines(src))*parseLineBytes + int64(code)*parseByteBytes
}

// Lines returns the lines of src as Parse counts them: a last line
// without its "\n" counts, an empty one after the last "\n" does not.
func Lines(src string) int {
	n := strings.Count(src, "\n")
	if src != "" && !strings.HasSuffix(src, "\n") {
		n++
	}
	return n
}

// The parts of ParseHostBytes.
const (
	parseLineBytes = 2 << 10
	parseByteBytes = 96
)

// MaxRepeatDepth bounds how deeply repeat blocks nest: a block inside
// MaxRepeatDepth others is refused. Real loop nests take a few (the
// examples and tests: 2 at most; a blocked GEMM's a handful); without a
// bound 130,000 nested "repeat 1 iN {" lines (3 MB) took 21 s and 833 MB
// to parse, as each loop variable was looked up among all the enclosing
// ones (quadratic). The parser's other nesting, an expression's
// parentheses, signs and operators, has its own bound of the same size
// (maxExprDepth).
const MaxRepeatDepth = 64

// Parse reads assembly text (see ASM.md for the language). name is used in
// error messages ("name:line: message"). Every instruction whose operands
// are constants is validated here (Validate); instructions that depend on
// loop variables or core are validated when expanded (Expand, Program).
// Parse never panics.
func Parse(name, src string) (*File, error) {
	p := &parser{name: name}
	f := &File{Name: name}
	src = strings.TrimPrefix(src, "\ufeff") // a UTF-8 byte-order mark (editors on Windows write one)
	if n := strings.Count(src, "\n"); n > MaxLines {
		return nil, &Error{File: name, Line: MaxLines + 1, Msg: fmt.Sprintf("%d lines: at most %d (a parsed line holds up to ~2 KB; repeat blocks write long streams in a few)", n, MaxLines)}
	}
	lines := strings.Split(src, "\n")
	if n := len(lines); n > 0 && lines[n-1] == "" {
		lines = lines[:n-1]
	}
	// nodes holds the finished nodes of the open blocks, outermost first
	// (the file's own, then each open block's from its frame's start on);
	// a block's are copied out, exactly as many, when it closes. Each line
	// adds at most one node, so nodes never grows: a slice per block grown
	// by append copied each node some 4 times (4.7 KB a line of garbage).
	nodes := make([]Node, 0, len(lines))
	type frame struct {
		node  Node
		start int // the block's first node in nodes
	}
	var stack []frame
	for i, raw := range lines {
		ln := i + 1
		n, tokens := splitLine(raw)
		n.Line = ln
		fail := func(format string, args ...any) (*File, error) {
			return nil, &Error{File: name, Line: ln, Msg: fmt.Sprintf(format, args...)}
		}
		switch {
		case len(tokens) == 0:
			if n.Comment != "" {
				n.Kind = NodeComment
			}
		case tokens[0] == "}":
			if len(tokens) > 1 {
				return fail("unexpected %q after }", tokens[1])
			}
			if len(stack) == 0 {
				return fail("} without an open repeat block")
			}
			fr := &stack[len(stack)-1]
			end := n
			fr.node.End = &end
			if len(nodes) > fr.start {
				fr.node.Body = slices.Clone(nodes[fr.start:])
				clear(nodes[fr.start:]) // (the copies hold the bodies)
				nodes = nodes[:fr.start]
			}
			for j := range fr.node.Body {
				if b := &fr.node.Body[j]; b.Kind == NodeInstr || b.Kind == NodeRepeat && b.hasInstr {
					fr.node.hasInstr = true
				}
			}
			if fr.node.Var != "" {
				p.scope = p.scope[:len(p.scope)-1]
			}
			nodes = append(nodes, fr.node)
			stack = stack[:len(stack)-1]
			continue
		case tokens[0] == "repeat":
			if len(tokens) < 3 || len(tokens) > 4 || tokens[len(tokens)-1] != "{" {
				return fail("repeat: expected \"repeat COUNT [VAR] {\"")
			}
			if len(stack) >= MaxRepeatDepth {
				// Before any work on the line: the loop variables in scope
				// are looked up one by one, so the bound keeps parsing linear.
				return fail("repeat: nested %d deep, inside the block of line %d: at most %d repeat blocks nest (loop nests take a few)", len(stack)+1, stack[0].node.Line, MaxRepeatDepth)
			}
			x, err := parseExpr(tokens[1], false, p.lookup)
			if err != nil {
				return fail("repeat: count: %v", err)
			}
			if !x.hasVars() {
				v, err := x.eval(nil)
				if err != nil {
					return fail("repeat: count: %v", err)
				}
				if v < 0 {
					return fail("repeat: count %d must be >= 0", v)
				}
			}
			n.Kind = NodeRepeat
			n.Count = &Arg{Value: tokens[1], X: x}
			if len(tokens) == 4 {
				v := tokens[2]
				switch {
				case !validIdent(v):
					return fail("repeat: bad loop variable %q", v)
				case v == "core":
					return fail("repeat: loop variable cannot be named core")
				}
				if _, dup := p.lookup(v); dup {
					return fail("repeat: loop variable %q already in use by an enclosing repeat", v)
				}
				n.Var = v
				p.scope = append(p.scope, v)
			}
			stack = append(stack, frame{node: n, start: len(nodes)})
			continue
		default:
			if err := p.instr(&n, tokens); err != "" {
				return fail("%s", err)
			}
		}
		nodes = append(nodes, n)
	}
	if len(stack) > 0 {
		return nil, &Error{File: name, Line: stack[len(stack)-1].node.Line, Msg: "repeat block not closed with }"}
	}
	f.Nodes = nodes
	if len(nodes) < cap(nodes)/2 {
		f.Nodes = slices.Clone(nodes) // (most lines are in blocks: not worth holding the rest)
	}
	if len(f.Nodes) == 0 {
		f.Nodes = nil
	}
	return f, nil
}

// splitLine separates layout from tokens.
func splitLine(raw string) (Node, []string) {
	var n Node
	s := strings.TrimRight(raw, " \t\r\v\f")
	code := s
	if h := strings.IndexByte(s, '#'); h >= 0 {
		code, n.Comment = s[:h], s[h:]
	}
	trimmed := strings.TrimLeft(code, " \t\r\v\f")
	n.Indent = code[:len(code)-len(trimmed)]
	body := strings.TrimRight(trimmed, " \t\r\v\f")
	if body != "" {
		n.Gap = trimmed[len(body):]
	}
	// Tokens are separated by the white space trimmed above (ASCII), not
	// by Unicode's: a no-break space is part of a token (an unknown
	// mnemonic or a bad value), as the layout keeps it.
	return n, strings.FieldsFunc(body, func(r rune) bool { return strings.ContainsRune(" \t\r\v\f", r) })
}

// instr parses an instruction line into n, returning an error text.
func (p *parser) instr(n *Node, tokens []string) string {
	n.Kind = NodeInstr
	n.Mnemonic = tokens[0]
	spec := specs[strings.ToLower(tokens[0])]
	if spec == nil {
		return fmt.Sprintf("unknown mnemonic %q", tokens[0])
	}
	n.spec = spec
	mn := spec.name
	npos := 0
	o := &p.o // (a local escaped through spec.build: 384 bytes a line)
	*o = operands{}
	if len(tokens) > 1 {
		n.Args = make([]Arg, 0, len(tokens)-1)
	}
	for _, t := range tokens[1:] {
		a := Arg{}
		var k key
		var val string
		if eq := strings.IndexByte(t, '='); eq >= 0 {
			a.Key, val = t[:eq], t[eq+1:]
			found := false
			for _, sk := range spec.keys {
				if keyInfo[sk].name == strings.ToLower(a.Key) {
					k, found = sk, true
				}
			}
			if !found {
				return fmt.Sprintf("%s: unknown operand %q", mn, a.Key)
			}
			if val == "" {
				return fmt.Sprintf("%s: %s: empty value", mn, a.Key)
			}
		} else {
			val = t
			isFlag := false
			for _, f := range flagNames {
				if spec.flags&f.bit != 0 && strings.EqualFold(t, f.name) {
					if o.flags&f.bit != 0 {
						return fmt.Sprintf("%s: duplicate %s", mn, f.name)
					}
					o.flags |= f.bit
					isFlag = true
				}
			}
			if isFlag {
				a.Value = t
				n.Args = append(n.Args, a)
				continue
			}
			if npos >= len(spec.pos) {
				return fmt.Sprintf("%s: unexpected operand %q", mn, t)
			}
			k = spec.pos[npos]
			npos++
		}
		a.Value = val
		if o.is(k) {
			return fmt.Sprintf("%s: duplicate operand %q", mn, keyInfo[k].name)
		}
		if e := p.value(o, n, &a, k, val); e != "" {
			return mn + ": " + e
		}
		n.Args = append(n.Args, a)
	}
	if npos < spec.nreq {
		return fmt.Sprintf("%s: missing %s", mn, keyInfo[spec.pos[npos]].name)
	}
	n.tmpl = *o
	// Build once with the values known now: reports missing or conflicting
	// operands even for lines that depend on loop variables.
	in, e := spec.build(o)
	if e != "" {
		return mn + ": " + e
	}
	if len(n.dyn) == 0 {
		if err := validate(&in); err != "" {
			return Mnemonic(in) + ": " + err
		}
		in.Line = n.Line
		n.instr = in
	}
	return ""
}

// value reads one operand value into o (constants) or n.dyn (expressions
// over variables).
func (p *parser) value(o *operands, n *Node, a *Arg, k key, val string) string {
	name := keyInfo[k].name
	switch keyInfo[k].kind {
	case kindInt, kindFloat:
		fl := keyInfo[k].kind == kindFloat
		x, err := parseExpr(val, fl, p.lookup)
		if err != nil {
			return fmt.Sprintf("%s: %v", name, err)
		}
		a.X = x
		if x.hasVars() {
			n.dyn = append(n.dyn, dynArg{k, x})
			o.set(k, 0)
			return ""
		}
		if fl {
			f, err := x.evalFloat(nil)
			if err != nil {
				return fmt.Sprintf("%s: %v", name, err)
			}
			o.f = f
			o.set(k, 0)
			return ""
		}
		v, err := x.eval(nil)
		if err != nil {
			return fmt.Sprintf("%s: %v", name, err)
		}
		if e := intRange(k, v); e != "" {
			return e
		}
		o.set(k, v)
	case kindFormat:
		f, ok := fp.ParseFormat(val)
		if !ok {
			return fmt.Sprintf("%s: unknown number format %q", name, val)
		}
		o.set(k, int64(f))
	case kindRound:
		r, ok := fp.ParseRounding(val)
		if !ok {
			return fmt.Sprintf("%s: unknown rounding mode %q", name, val)
		}
		o.set(k, int64(r))
	case kindName:
		if !validName(val) {
			return fmt.Sprintf("%s: bad region name %q", name, val)
		}
		o.name = val
		o.set(k, 0)
	case kindPipe, kindPipeAll:
		pp, ok := ParsePipe(val)
		if !ok || pp == ALL && keyInfo[k].kind == kindPipe {
			return fmt.Sprintf("expected a pipe name (S, MTE1, MTE2, MTE3, M, V, FIXP), got %q", val)
		}
		o.set(k, int64(pp))
	case kindBuf:
		b, ok := ParseBuffer(val)
		if !ok {
			return fmt.Sprintf("expected a buffer name (L1, L0A, L0B, L0C, UB), got %q", val)
		}
		o.set(k, int64(b))
	}
	return ""
}

// intRange checks that a value fits the Instr field it goes to (int fields
// are checked against 32 bits so that results agree on every platform).
func intRange(k key, v int64) string {
	switch k {
	case kID, kNBurst, kRows, kCols, kM, kK, kN, kRepeat, kMask:
		if v < -1<<31 || v > 1<<31-1 {
			return fmt.Sprintf("%s %d out of range (a 32-bit integer: −2^31..2^31−1; the instruction's own limits are checked after)", keyInfo[k].name, v)
		}
	}
	return ""
}

// Print returns the text of f. For canonical input Print reproduces it
// byte for byte; for any input, Parse(Print(Parse(x))) equals Parse(x).
// Canonical text: lines end in "\n" (the last one too), no trailing white
// space, tokens of an instruction or repeat line separated by single
// spaces. Indentation, the white space before a comment, comments, blank
// lines, the spelling of names and numbers (0x…, KiB) and expressions are
// kept as written.
func Print(f *File) string {
	var sb strings.Builder
	printNodes(&sb, f.Nodes)
	return sb.String()
}

func printNodes(sb *strings.Builder, nodes []Node) {
	for i := range nodes {
		n := &nodes[i]
		sb.WriteString(n.Indent)
		switch n.Kind {
		case NodeInstr:
			sb.WriteString(n.Mnemonic)
			for _, a := range n.Args {
				sb.WriteByte(' ')
				if a.Key != "" {
					sb.WriteString(a.Key)
					sb.WriteByte('=')
				}
				sb.WriteString(a.Value)
			}
		case NodeRepeat:
			sb.WriteString("repeat ")
			sb.WriteString(n.Count.Value)
			if n.Var != "" {
				sb.WriteByte(' ')
				sb.WriteString(n.Var)
			}
			sb.WriteString(" {")
		}
		sb.WriteString(n.Gap)
		sb.WriteString(n.Comment)
		sb.WriteByte('\n')
		if n.Kind == NodeRepeat {
			printNodes(sb, n.Body)
			if n.End != nil {
				e := n.End
				sb.WriteString(e.Indent)
				sb.WriteByte('}')
				sb.WriteString(e.Gap)
				sb.WriteString(e.Comment)
				sb.WriteByte('\n')
			}
		}
	}
}
