package isa

import (
	"context"
	"fmt"
	"strings"
)

// Expand yields core's instruction stream: repeat blocks unrolled, operand
// expressions evaluated with core and the loop variables bound, every
// instruction validated, Line set to its source line. It stops early when
// yield returns false and returns the first error ("file:line: message",
// naming core and loop variable values), e.g. a division by zero or a
// negative address that only appears for some iterations.
func (f *File) Expand(core int, yield func(Instr) bool) error {
	return f.ExpandContext(context.Background(), core, yield)
}

// ExpandContext is Expand that also stops when ctx is done,
// returning an error that wraps context.Cause(ctx). It looks at ctx every
// CancelCheckEvery instructions: a core takes a run of instructions that
// cost no simulated time (nops, say) in one wake-up, so a stream of
// millions of them is one event, and a run's cancellation, checked between
// events, would wait for all of it.
func (f *File) ExpandContext(ctx context.Context, core int, yield func(Instr) bool) error {
	return f.ExpandTally(ctx, core, nil, yield)
}

// Tally carries the count of instructions, and of loop iterations that
// yield none, from one stream's expansion to the next (ExpandTally), so
// that MaxStreamInstrs bounds the streams of all a program's cores
// together: bounded one by one, 32 cores of 2^26 instructions each ran
// for minutes. Its zero value starts a program's count.
type Tally struct {
	instrs, empty int64 // instructions and empty iterations so far
	first, last   int   // the cores counted (streams > 0)
	streams       int   // the streams expanded into it
}

// Instrs returns the instructions the streams tallied have yielded.
func (t *Tally) Instrs() int64 { return t.instrs }

// ExpandTally is ExpandContext whose stream counts toward t, with the
// streams expanded into t before it (t nil: the stream on its own), so
// that MaxStreamInstrs bounds them together; the error of a stream that
// passes the bound names the cores counted. Each stream's count is added
// to t when its expansion ends (whether it ends early or not).
func (f *File) ExpandTally(ctx context.Context, core int, t *Tally, yield func(Instr) bool) error {
	x := expander{f: f, env: []int64{int64(core)}, names: []string{"core"}, yield: yield, next: MaxStreamInstrs + 1}
	if t != nil {
		if t.streams == 0 {
			t.first = core
		}
		t.last = core
		t.streams++
		x.tally = t
		x.count, x.start, x.empty = t.instrs, t.instrs, t.empty
	}
	if ctx != nil && ctx.Done() != nil {
		x.ctx, x.next = ctx, min(x.count+CancelCheckEvery, MaxStreamInstrs+1)
	}
	x.nodes(f.Nodes)
	if t != nil {
		t.instrs, t.empty = x.count, x.empty
	}
	return x.err
}

type expander struct {
	f     *File
	env   []int64
	names []string
	yield func(Instr) bool
	err   error
	stop  bool
	o     operands        // scratch operands, reused to avoid an allocation per instruction
	count int64           // instructions yielded (MaxStreamInstrs), with the tally's before this stream
	start int64           // the tally's count before this stream
	next  int64           // the count at which checkpoint runs
	empty int64           // loop iterations that yielded no instruction (MaxStreamInstrs), with the tally's
	ctx   context.Context // nil: not cancellable
	tally *Tally          // nil: the stream is bounded on its own
}

// together returns the cores whose streams passed the bound together,
// as a message names them ("the streams of cores 0…3"), or "" where one
// stream passed it on its own.
func (x *expander) together() string {
	t := x.tally
	if t == nil || t.streams < 2 {
		return ""
	}
	return fmt.Sprintf("the streams of cores %d…%d", t.first, t.last)
}

// MaxStreamInstrs bounds the instructions one core's stream of an assembly
// file expands to (repeat counts multiply): a typo such as repeat
// 1000000000000 would otherwise expand for days before the run. It bounds
// the loop iterations that yield no instruction as well (repeat
// 1000000000000 around a repeat whose count is 0).
const MaxStreamInstrs = 1 << 26

// CancelCheckEvery is how often, in instructions, ExpandContext looks at
// its context: well under a millisecond of expansion.
const CancelCheckEvery = 1 << 12

func (x *expander) fail(line int, format string, args ...any) {
	var ctx []string
	for i, n := range x.names {
		ctx = append(ctx, fmt.Sprintf("%s=%d", n, x.env[i]))
	}
	msg := fmt.Sprintf(format, args...) + " (" + strings.Join(ctx, ", ") + ")"
	x.err = &Error{File: x.f.Name, Line: line, Msg: msg}
	x.stop = true
}

func (x *expander) nodes(nodes []Node) {
	for i := range nodes {
		if x.stop {
			return
		}
		n := &nodes[i]
		switch n.Kind {
		case NodeInstr:
			in := n.instr
			if len(n.dyn) > 0 {
				var ok bool
				if in, ok = x.eval(n); !ok {
					return
				}
			}
			if x.count++; x.count >= x.next && x.checkpoint(n.Line) {
				return
			}
			if !x.yield(in) {
				x.stop = true
				return
			}
		case NodeRepeat:
			if !n.hasInstr {
				continue
			}
			cnt, err := n.Count.X.eval(x.env)
			if err != nil {
				x.fail(n.Line, "repeat: count: %v", err)
				return
			}
			if cnt < 0 {
				x.fail(n.Line, "repeat: count %d must be >= 0", cnt)
				return
			}
			if n.Var != "" {
				x.env = append(x.env, 0)
				x.names = append(x.names, n.Var)
			}
			last := len(x.env) - 1
			for it := int64(0); it < cnt && !x.stop; it++ {
				if n.Var != "" {
					x.env[last] = it
				}
				before := x.count
				x.nodes(n.Body)
				if x.count == before && !x.stop {
					// The body yielded nothing for these values (an inner
					// repeat of count 0): the iteration costs time all the same.
					if x.empty++; x.empty > MaxStreamInstrs {
						if t := x.together(); t != "" {
							x.fail(n.Line, "repeat: more than %d iterations yield no instruction in %s together (an inner repeat count is 0; one bound for all the cores' streams)", MaxStreamInstrs, t)
						} else {
							x.fail(n.Line, "repeat: more than %d iterations yield no instruction (an inner repeat count is 0)", MaxStreamInstrs)
						}
					}
				}
			}
			if n.Var != "" {
				x.env = x.env[:last]
				x.names = x.names[:last]
			}
		}
	}
}

// checkpoint runs when count reaches next (one comparison per instruction
// for both checks): past MaxStreamInstrs it fails, and it stops when the
// context is done; it reports whether the expansion stops, else sets the
// next checkpoint.
func (x *expander) checkpoint(line int) bool {
	if x.count > MaxStreamInstrs {
		if t := x.together(); t != "" {
			x.fail(line, "%s are longer than %d instructions together (repeat counts multiply; one bound for all the cores' streams)", t, MaxStreamInstrs)
		} else {
			x.fail(line, "the stream is longer than %d instructions (repeat counts multiply)", MaxStreamInstrs)
		}
		return true
	}
	if x.ctx != nil {
		if x.ctx.Err() != nil {
			x.err = fmt.Errorf("%s: core %d: stopped after %d instructions: %w", x.f.Name, x.env[0], x.count-x.start, context.Cause(x.ctx))
			x.stop = true
			return true
		}
		x.next = min(x.count+CancelCheckEvery, MaxStreamInstrs+1)
	}
	return false
}

// eval builds the instruction of a line with variable operands.
func (x *expander) eval(n *Node) (Instr, bool) {
	x.o = n.tmpl
	o := &x.o
	for _, d := range n.dyn {
		name := keyInfo[d.k].name
		if keyInfo[d.k].kind == kindFloat {
			v, err := d.x.evalFloat(x.env)
			if err != nil {
				x.fail(n.Line, "%s: %s: %v", n.spec.name, name, err)
				return Instr{}, false
			}
			o.f = v
			continue
		}
		v, err := d.x.eval(x.env)
		if err == nil {
			if e := intRange(d.k, v); e != "" {
				err = fmt.Errorf("%s", e)
			}
		}
		if err != nil {
			x.fail(n.Line, "%s: %s: %v", n.spec.name, name, err)
			return Instr{}, false
		}
		o.v[d.k] = v
	}
	in, e := n.spec.build(o)
	if e == "" {
		e = validate(&in)
		if e != "" {
			e = Mnemonic(in) + ": " + e
		}
	} else {
		e = n.spec.name + ": " + e
	}
	if e != "" {
		x.fail(n.Line, "%s", e)
		return Instr{}, false
	}
	in.Line = n.Line
	return in, true
}

// Stream returns core's instruction stream (see Expand). A stream cannot
// report errors: it ends at the first one. Use Program, which expands every
// core once up front, to get them.
func (f *File) Stream(core int) Stream {
	return f.StreamContext(context.Background(), core)
}

// StreamContext is Stream that ends when ctx is done (see ExpandContext):
// whoever runs it must then look at ctx, as the stream was cut short.
func (f *File) StreamContext(ctx context.Context, core int) Stream {
	return func(yield func(Instr) bool) { _ = f.ExpandContext(ctx, core, yield) }
}

// Program expands the file for cores cores (core = 0 … cores−1) once to
// find evaluation errors — MaxStreamInstrs bounding all their streams
// together (Tally) —, then returns a Program whose streams expand lazily.
// Its Name is the file's name.
func (f *File) Program(cores int) (Program, error) {
	p := Program{Name: f.Name, Cores: make([]Stream, cores)}
	var t Tally
	for c := range cores {
		if err := f.ExpandTally(context.Background(), c, &t, func(Instr) bool { return true }); err != nil {
			return Program{}, err
		}
		p.Cores[c] = f.Stream(c)
	}
	return p, nil
}
