package isa

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ExprKind is the kind of an expression node.
type ExprKind uint8

// The expression node kinds.
const (
	ENum    ExprKind = iota // integer literal (decimal, 0x hex, optional KiB/MiB/GiB suffix)
	EFloat                  // floating literal (only in float operands: scalar=)
	EIdent                  // variable: a loop variable or core
	EUnary                  // Op X with Op '+' or '-'
	EBinary                 // X Op Y with Op one of + - * / %
	EParen                  // ( X )
)

// Expr is an operand value expression. Operand values contain no white
// space, so an expression prints back exactly as written (String).
type Expr struct {
	Kind ExprKind
	Text string  // ENum/EFloat: the literal as written; EIdent: the name
	Val  int64   // ENum: the value
	F    float64 // EFloat: the value
	Op   byte    // EUnary, EBinary
	X, Y *Expr

	height uint8 // levels of the tree from here down (1: a leaf), at most maxExprDepth

	slot int // EIdent: index into the expansion environment (0 = core)
}

// String returns the expression as written.
func (e *Expr) String() string {
	var sb strings.Builder
	e.write(&sb)
	return sb.String()
}

func (e *Expr) write(sb *strings.Builder) {
	switch e.Kind {
	case ENum, EFloat, EIdent:
		sb.WriteString(e.Text)
	case EUnary:
		sb.WriteByte(e.Op)
		e.X.write(sb)
	case EBinary:
		e.X.write(sb)
		sb.WriteByte(e.Op)
		e.Y.write(sb)
	case EParen:
		sb.WriteByte('(')
		e.X.write(sb)
		sb.WriteByte(')')
	}
}

// hasVars reports whether the expression refers to a variable.
func (e *Expr) hasVars() bool {
	if e == nil {
		return false
	}
	return e.Kind == EIdent || e.X.hasVars() || e.Y.hasVars()
}

// maxExprDepth bounds the height of an expression's tree: parentheses,
// signs and operators nest in it (a+b+c is 3 levels: (a+b)+c, the
// innermost sum over its leaves), and evaluation recurses over it. A 20 MB
// chain 1+1+…+1 overflowed the evaluator's stack (a crash, not an error);
// real operands take a few levels (0x10000+i*4096+core*65536: 4).
const maxExprDepth = 64

// exprParser is a recursive-descent parser over one operand value.
type exprParser struct {
	s     string
	i     int
	float bool // float context: float literals, inf and nan allowed
	depth int
	scope func(name string) (int, bool)
}

// parseExpr parses s as an expression. scope resolves variable names to
// environment slots.
func parseExpr(s string, float bool, scope func(string) (int, bool)) (*Expr, error) {
	p := &exprParser{s: s, float: float, scope: scope}
	e, err := p.sum()
	if err != nil {
		return nil, err
	}
	if p.i < len(p.s) {
		return nil, fmt.Errorf("unexpected %q in expression %q", p.s[p.i:], s)
	}
	return e, nil
}

func (p *exprParser) sum() (*Expr, error) {
	x, err := p.term()
	for err == nil && p.i < len(p.s) && (p.s[p.i] == '+' || p.s[p.i] == '-') {
		op := p.s[p.i]
		p.i++
		var y *Expr
		if y, err = p.term(); err == nil {
			x, err = p.node(&Expr{Kind: EBinary, Op: op, X: x, Y: y})
		}
	}
	return x, err
}

func (p *exprParser) term() (*Expr, error) {
	x, err := p.unary()
	for err == nil && p.i < len(p.s) && (p.s[p.i] == '*' || p.s[p.i] == '/' || p.s[p.i] == '%') {
		op := p.s[p.i]
		p.i++
		var y *Expr
		if y, err = p.unary(); err == nil {
			x, err = p.node(&Expr{Kind: EBinary, Op: op, X: x, Y: y})
		}
	}
	return x, err
}

// node sets the height of e, an operator or parentheses over its operands
// (leaves have height 0: taken as 1), refusing a tree higher than
// maxExprDepth.
func (p *exprParser) node(e *Expr) (*Expr, error) {
	h := max(e.X.levels(), e.Y.levels()) + 1
	if h > maxExprDepth {
		return nil, p.tooDeep()
	}
	e.height = uint8(h)
	return e, nil
}

// levels returns the height of e's tree: 0 for nil, at least 1.
func (e *Expr) levels() int {
	if e == nil {
		return 0
	}
	return max(int(e.height), 1)
}

func (p *exprParser) tooDeep() error {
	return fmt.Errorf("expression %q nested too deeply (at most %d levels of parentheses, signs and operators: a+b+c is 3)", p.s, maxExprDepth)
}

func (p *exprParser) unary() (*Expr, error) {
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > maxExprDepth {
		return nil, p.tooDeep()
	}
	if p.i >= len(p.s) {
		return nil, fmt.Errorf("expression %q ends early", p.s)
	}
	switch c := p.s[p.i]; {
	case c == '-' || c == '+':
		p.i++
		x, err := p.unary()
		if err != nil {
			return nil, err
		}
		return p.node(&Expr{Kind: EUnary, Op: c, X: x})
	case c == '(':
		p.i++
		x, err := p.sum()
		if err != nil {
			return nil, err
		}
		if p.i >= len(p.s) || p.s[p.i] != ')' {
			return nil, fmt.Errorf("missing ) in expression %q", p.s)
		}
		p.i++
		return p.node(&Expr{Kind: EParen, X: x})
	case '0' <= c && c <= '9' || c == '.':
		return p.number()
	case identStart(c):
		j := p.i
		for p.i < len(p.s) && identChar(p.s[p.i]) {
			p.i++
		}
		name := p.s[j:p.i]
		if p.float {
			switch strings.ToLower(name) {
			case "inf":
				return &Expr{Kind: EFloat, Text: name, F: math.Inf(1)}, nil
			case "nan":
				return &Expr{Kind: EFloat, Text: name, F: math.NaN()}, nil
			}
		}
		slot, ok := p.scope(name)
		if !ok {
			return nil, fmt.Errorf("unknown variable %q", name)
		}
		return &Expr{Kind: EIdent, Text: name, slot: slot}, nil
	default:
		return nil, fmt.Errorf("unexpected %q in expression %q", c, p.s)
	}
}

var sizeSuffixes = []struct {
	s string
	m int64
}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}}

func (p *exprParser) number() (*Expr, error) {
	j := p.i
	isFloat := false
	if strings.HasPrefix(p.s[p.i:], "0x") || strings.HasPrefix(p.s[p.i:], "0X") {
		p.i += 2
		for p.i < len(p.s) && isHex(p.s[p.i]) {
			p.i++
		}
	} else {
		for p.i < len(p.s) && isDigit(p.s[p.i]) {
			p.i++
		}
		if p.i < len(p.s) && p.s[p.i] == '.' {
			isFloat = true
			p.i++
			for p.i < len(p.s) && isDigit(p.s[p.i]) {
				p.i++
			}
		}
		if p.i < len(p.s) && (p.s[p.i] == 'e' || p.s[p.i] == 'E') {
			k := p.i + 1
			if k < len(p.s) && (p.s[k] == '+' || p.s[k] == '-') {
				k++
			}
			if k < len(p.s) && isDigit(p.s[k]) {
				isFloat = true
				for p.i = k; p.i < len(p.s) && isDigit(p.s[p.i]); p.i++ {
				}
			}
		}
	}
	digits := p.s[j:p.i]
	for p.i < len(p.s) && identChar(p.s[p.i]) {
		p.i++
	}
	text := p.s[j:p.i]
	suffix := p.s[j+len(digits) : p.i]
	if isFloat {
		if suffix != "" {
			return nil, fmt.Errorf("bad number %q", text)
		}
		if !p.float {
			return nil, fmt.Errorf("%q is not an integer", text)
		}
		f, err := strconv.ParseFloat(digits, 64)
		if err != nil {
			return nil, fmt.Errorf("bad number %q", text)
		}
		return &Expr{Kind: EFloat, Text: text, F: f}, nil
	}
	var v int64
	var err error
	if len(digits) > 2 && (digits[1] == 'x' || digits[1] == 'X') {
		v, err = strconv.ParseInt(digits[2:], 16, 64)
	} else {
		v, err = strconv.ParseInt(digits, 10, 64)
	}
	if err != nil {
		if errors.Is(err, strconv.ErrRange) {
			return nil, fmt.Errorf("number %q out of range", text)
		}
		return nil, fmt.Errorf("bad number %q", text)
	}
	if suffix != "" {
		ok := false
		for _, s := range sizeSuffixes {
			if suffix == s.s {
				if v > math.MaxInt64/s.m {
					return nil, fmt.Errorf("number %q out of range", text)
				}
				v, ok = v*s.m, true
			}
		}
		if !ok {
			return nil, fmt.Errorf("bad number %q (size suffixes: KiB, MiB, GiB)", text)
		}
	}
	return &Expr{Kind: ENum, Text: text, Val: v}, nil
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }
func isHex(c byte) bool {
	return isDigit(c) || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}
func identStart(c byte) bool { return c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func identChar(c byte) bool  { return identStart(c) || isDigit(c) }

func validIdent(s string) bool {
	if s == "" || !identStart(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !identChar(s[i]) {
			return false
		}
	}
	return true
}

var (
	errDivZero  = errors.New("division by zero")
	errOverflow = errors.New("integer overflow")
)

// eval evaluates an integer expression in env (env[0] = core, then the
// loop variables in nesting order).
func (e *Expr) eval(env []int64) (int64, error) {
	switch e.Kind {
	case ENum:
		return e.Val, nil
	case EFloat:
		return 0, fmt.Errorf("%q is not an integer", e.Text)
	case EIdent:
		if e.slot < 0 || e.slot >= len(env) {
			return 0, fmt.Errorf("variable %q unbound", e.Text)
		}
		return env[e.slot], nil
	case EParen:
		return e.X.eval(env)
	case EUnary:
		x, err := e.X.eval(env)
		if err != nil {
			return 0, err
		}
		if e.Op == '-' {
			if x == math.MinInt64 {
				return 0, errOverflow
			}
			return -x, nil
		}
		return x, nil
	case EBinary:
		x, err := e.X.eval(env)
		if err != nil {
			return 0, err
		}
		y, err := e.Y.eval(env)
		if err != nil {
			return 0, err
		}
		return arith(e.Op, x, y)
	}
	return 0, fmt.Errorf("bad expression")
}

func arith(op byte, x, y int64) (int64, error) {
	switch op {
	case '+':
		r := x + y
		if (x >= 0) == (y >= 0) && (r >= 0) != (x >= 0) {
			return 0, errOverflow
		}
		return r, nil
	case '-':
		r := x - y
		if (x >= 0) != (y >= 0) && (r >= 0) != (x >= 0) {
			return 0, errOverflow
		}
		return r, nil
	case '*':
		if x == 0 || y == 0 {
			return 0, nil
		}
		r := x * y
		if r/y != x || (x == -1 && y == math.MinInt64) || (y == -1 && x == math.MinInt64) {
			return 0, errOverflow
		}
		return r, nil
	case '/', '%':
		if y == 0 {
			return 0, errDivZero
		}
		if y == -1 && x == math.MinInt64 {
			return 0, errOverflow
		}
		if op == '/' {
			return x / y, nil
		}
		return x % y, nil
	}
	return 0, fmt.Errorf("bad operator %q", op)
}

// evalFloat evaluates a float expression: literals and variables as
// float64, + - * / in floating point (% is not allowed).
func (e *Expr) evalFloat(env []int64) (float64, error) {
	switch e.Kind {
	case ENum:
		return float64(e.Val), nil
	case EFloat:
		return e.F, nil
	case EIdent:
		v, err := e.eval(env)
		return float64(v), err
	case EParen:
		return e.X.evalFloat(env)
	case EUnary:
		x, err := e.X.evalFloat(env)
		if e.Op == '-' {
			x = -x
		}
		return x, err
	case EBinary:
		x, err := e.X.evalFloat(env)
		if err != nil {
			return 0, err
		}
		y, err := e.Y.evalFloat(env)
		if err != nil {
			return 0, err
		}
		switch e.Op {
		case '+':
			return x + y, nil
		case '-':
			return x - y, nil
		case '*':
			return x * y, nil
		case '/':
			return x / y, nil
		}
		return 0, fmt.Errorf("operator %q not allowed in a floating-point value", e.Op)
	}
	return 0, fmt.Errorf("bad expression")
}

// formatFloat prints f so that the assembler reads back the same float64.
func formatFloat(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case math.IsNaN(f):
		return "nan"
	}
	s := strconv.FormatFloat(f, 'g', -1, 64)
	return s
}
