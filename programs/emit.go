package programs

import (
	"github.com/davinci-sim/davinci-sim/fp"
	"github.com/davinci-sim/davinci-sim/isa"
	"github.com/davinci-sim/davinci-sim/machines"
)

// l0cPipe runs the generators' L0C→UB copies: the vector pipe, as on the
// 910A (no FixPipe); on FixPipe machines too, so that one set of V-side
// flags orders the epilogue everywhere.
const l0cPipe = isa.V

// emitter wraps a stream's yield function with instruction constructors, so
// generators read like the kernels they stand for. After the consumer stops
// (yield returned false) every call is a no-op and ok() reports false.
type emitter struct {
	yield  func(isa.Instr) bool
	live   bool
	repeat int // bytes one vector repeat covers (core.vector.bytes_per_repeat)
	// timingOnly marks every instruction emitted while it is set
	// (isa.Instr.TimingOnly: timed, no data effect).
	timingOnly bool
	// grouping holds back each instruction emitted in together until the
	// next one, which it then starts with (held, isa.Instr.WithNext).
	grouping, holding bool
	held              isa.Instr
	// cur, if not nil, is the consumer's step cursor (isa.Grid.Steps):
	// step marks each main-loop step and resumes where it asks.
	cur *isa.StepCursor
}

// stepRange is the steps [from, to) of a main loop that repeat (isa.Step).
type stepRange struct{ from, to int }

// step begins step k of a main loop of n steps whose steps in r repeat
// with period (isa.Step): with a cursor, it resumes at the step the
// consumer asked for, if later, marks the step and returns it (the loop
// goes on from there); without, it returns k.
func (e *emitter) step(k, n, period int, r stepRange) int {
	if e.cur == nil {
		return k
	}
	if asked := e.cur.Take(); asked > k {
		k = asked
	}
	e.emit(isa.Step(k, n, period, r.from, max(min(r.to, n-1), r.from)))
	return k
}

// newEmitter returns an emitter for machine m's streams.
func newEmitter(yield func(isa.Instr) bool, m *machines.Machine) *emitter {
	return &emitter{yield: yield, live: true, repeat: m.Core.VectorRepeatBytes()}
}

func (e *emitter) ok() bool { return e.live }

func (e *emitter) emit(in isa.Instr) {
	in.TimingOnly = in.TimingOnly || e.timingOnly
	if e.grouping {
		if e.holding {
			e.held.WithNext = true
			e.send(e.held)
		}
		e.held, e.holding = in, true
		return
	}
	e.send(in)
}

func (e *emitter) send(in isa.Instr) {
	if e.live && !e.yield(in) {
		e.live = false
	}
}

// together emits what body emits — instructions of one GPU lane — as one
// group that the lane starts together (isa.Instr.WithNext): the copies of
// a pipeline stage, the fragment loads of a k-step, which the warps issue
// back to back, all in flight at once.
func (e *emitter) together(body func()) {
	e.grouping = true
	body()
	e.grouping = false
	if e.holding {
		e.send(e.held)
		e.holding = false
	}
}

func (e *emitter) alloc(b isa.Buffer, off, size int64, name string) {
	e.emit(isa.Alloc(b, off, size, name))
}

func (e *emitter) free(b isa.Buffer, name string) {
	e.emit(isa.FreeIn(b, name))
}

func (e *emitter) setFlag(src, dst isa.Pipe, id int) {
	e.emit(isa.SetFlag(src, dst, id))
}

func (e *emitter) waitFlag(src, dst isa.Pipe, id int) {
	e.emit(isa.WaitFlag(src, dst, id))
}

func (e *emitter) syncAll() { e.emit(isa.SyncAll()) }

// copy2D emits a strided copy of rows bursts of rowBytes bytes.
func (e *emitter) copy2D(pipe isa.Pipe, dst, src isa.Operand, rows int, rowBytes, dstStride, srcStride int64) {
	if rows == 1 {
		dstStride, srcStride = rowBytes, rowBytes
	}
	e.emit(isa.Copy2D(pipe, dst, src, rows, rowBytes, srcStride, dstStride))
}

// load emits an MTE1 load of a rows×cols matrix of type f (row-major in L1
// with rowStride bytes between rows) into fractal layout in L0A/L0B.
func (e *emitter) loadAs(dst isa.Operand, l1 int64, rows, cols int, rowStride int64, f fp.Format) {
	e.emit(isa.Load(dst.Buf, dst.Addr, l1, rows, cols, rowStride, f, false))
}

// load is loadAs for FP16.
func (e *emitter) load(dst isa.Operand, l1 int64, rows, cols int, rowStride int64) {
	e.loadAs(dst, l1, rows, cols, rowStride, fp.FP16)
}

// mmad is mmadAs for FP16 inputs.
func (e *emitter) mmad(c, a, b int64, m, k, n int, init bool) {
	e.mmadAs(c, a, b, m, k, n, fp.FP16, init)
}

// mmadAs emits C (FP32, L0C) = A·B (+ C) with inputs of type f.
func (e *emitter) mmadAs(c, a, b int64, m, k, n int, f fp.Format, init bool) {
	e.mmadTo(c, a, b, m, k, n, f, fp.FP32, init)
}

// mmadTo emits C (type out in L0C: FP32, or INT32 for INT8 inputs) = A·B
// (+ C) with inputs of type in.
func (e *emitter) mmadTo(c, a, b int64, m, k, n int, in, out fp.Format, init bool) {
	e.emit(isa.Mmad(c, a, b, m, k, n, in, out, init))
}

// l0cToUB copies a rows×cols FP32 tile from L0C to UB, row-major and packed.
func (e *emitter) l0cToUB(ub, l0c int64, rows, cols int) {
	e.l0cToUBAs(ub, l0c, rows, cols, fp.FP32)
}

// l0cToUBAs copies a rows×cols tile of 4-byte type f (FP32, or INT32 from
// the INT8 cube: no conversion) from L0C to UB, row-major and packed.
func (e *emitter) l0cToUBAs(ub, l0c int64, rows, cols int, f fp.Format) {
	e.emit(isa.L0CCopy(l0cPipe, isa.Operand{Buf: isa.UB, Addr: ub}, l0c, rows, cols, int64(cols)*4, f, f, fp.RNE, false))
}

// maxRepeat is the largest repeat count of one vector instruction.
const maxRepeat = 255

// vec emits a vector operation over n contiguous elements of type in (the
// destination of a cast has type out): as many full repeats as
// needed, in instructions of at most maxRepeat repeats, then a masked tail.
// A full repeat covers e.repeat bytes of type in.
func (e *emitter) vec(op isa.VecOp, dst, src0, src1 int64, n int, in, out fp.Format, scalar float64, round fp.Rounding, sat bool) {
	per := e.repeat / in.Bytes()
	ob := in.Bytes()
	if op == isa.VCast {
		ob = out.Bytes()
	}
	done := 0
	for done < n {
		rep := (n - done) / per
		mask := 0
		if rep == 0 {
			rep, mask = 1, n-done
		}
		if rep > maxRepeat {
			rep = maxRepeat
		}
		cnt := rep * per
		if mask > 0 {
			cnt = mask
		}
		e.emit(isa.Vector(op, dst+int64(done*ob), src0+int64(done*in.Bytes()), src1+int64(done*in.Bytes()),
			in, out, scalar, round, sat, rep, mask))
		done += cnt
	}
}

// token names one event flag (src → dst, id) used as a "buffer free" token.
type token struct {
	src, dst isa.Pipe
	id       int
}

// presetTokens raises every token once, so the first use of each buffer
// finds it free (a kernel's prologue).
func (e *emitter) presetTokens(ts []token) {
	for _, t := range ts {
		e.setFlag(t.src, t.dst, t.id)
	}
}

// drainTokens consumes every token again, leaving all flag counts at zero
// for the next kernel phase (the epilogue matching presetTokens). Every
// wait's matching set was issued earlier, so draining cannot deadlock.
func (e *emitter) drainTokens(ts []token) {
	for _, t := range ts {
		e.waitFlag(t.src, t.dst, t.id)
	}
}

// gemmBuffers are the regions a GEMM kernel allocates, freed at its end.
var gemmBuffers = []struct {
	buf  isa.Buffer
	name string
}{{isa.L1, "l1"}, {isa.L0A, "l0a"}, {isa.L0B, "l0b"}, {isa.L0C, "l0c"}, {isa.UB, "ub"}}

// freeGEMMBuffers frees the regions of gemmBuffers.
func (e *emitter) freeGEMMBuffers() {
	for _, b := range gemmBuffers {
		e.free(b.buf, b.name)
	}
}

// kernelTokens lists the free tokens of a tiled GEMM kernel: the L1 A group
// (aID), nB L1 B buffers (bID+p), nL0 L0A/L0B pairs, nC L0C tiles and, per
// UB buffer u, the pairs in ub(u).
func kernelTokens(aID, bID, nB, nL0, nC, nU int, ub func(u int) []token) []token {
	ts := []token{{isa.MTE1, isa.MTE2, aID}}
	for p := 0; p < nB; p++ {
		ts = append(ts, token{isa.MTE1, isa.MTE2, bID + p})
	}
	for q := 0; q < nL0; q++ {
		ts = append(ts, token{isa.M, isa.MTE1, fL0 + q})
	}
	for c := 0; c < nC; c++ {
		ts = append(ts, token{isa.V, isa.M, fL0C + c})
	}
	for u := 0; u < nU; u++ {
		ts = append(ts, ub(u)...)
	}
	return ts
}
