package isa

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/davinci-sim/davinci-sim/fp"
)

// key identifies an operand slot of a mnemonic: a key=value operand or a
// positional one.
type key uint8

const (
	kBuf key = iota // positional buffer (alloc, free)
	kSrcPipe
	kDstPipe
	kPipe // pipe_barrier: pipe or ALL
	kID   // flag id
	kOff
	kSize
	kName
	kCycles
	kGM
	kL1
	kUB
	kL0A
	kL0B
	kL0C
	kBytes
	kNBurst
	kLen
	kSrcStride
	kDstStride
	kRows
	kCols
	kStride
	kDtype
	kC
	kA
	kB
	kM
	kK
	kN
	kIn
	kOut
	kRound
	kDst
	kSrc0
	kSrc1
	kRepeat
	kMask
	kScalar
	kFrom
	kTo
	numKeys
)

// kind is how an operand's value text is read.
type kind uint8

const (
	kindInt     kind = iota // integer expression
	kindFloat               // floating expression
	kindFormat              // fp format name
	kindRound               // rounding mode name
	kindName                // region name
	kindPipe                // pipe name
	kindPipeAll             // pipe name or ALL
	kindBuf                 // buffer name
)

var keyInfo = [numKeys]struct {
	name string
	kind kind
}{
	kBuf: {"buffer", kindBuf}, kSrcPipe: {"source pipe", kindPipe}, kDstPipe: {"destination pipe", kindPipe},
	kPipe: {"pipe", kindPipeAll}, kID: {"flag id", kindInt},
	kOff: {"off", kindInt}, kSize: {"size", kindInt}, kName: {"name", kindName}, kCycles: {"cycles", kindInt},
	kGM: {"gm", kindInt}, kL1: {"l1", kindInt}, kUB: {"ub", kindInt}, kL0A: {"l0a", kindInt},
	kL0B: {"l0b", kindInt}, kL0C: {"l0c", kindInt}, kBytes: {"bytes", kindInt}, kNBurst: {"nburst", kindInt},
	kLen: {"len", kindInt}, kSrcStride: {"src_stride", kindInt}, kDstStride: {"dst_stride", kindInt},
	kRows: {"rows", kindInt}, kCols: {"cols", kindInt}, kStride: {"stride", kindInt},
	kDtype: {"dtype", kindFormat}, kC: {"c", kindInt}, kA: {"a", kindInt}, kB: {"b", kindInt},
	kM: {"m", kindInt}, kK: {"k", kindInt}, kN: {"n", kindInt}, kIn: {"in", kindFormat},
	kOut: {"out", kindFormat}, kRound: {"round", kindRound}, kDst: {"dst", kindInt},
	kSrc0: {"src0", kindInt}, kSrc1: {"src1", kindInt}, kRepeat: {"repeat", kindInt},
	kMask: {"mask", kindInt}, kScalar: {"scalar", kindFloat}, kFrom: {"from", kindFormat},
	kTo: {"to", kindFormat},
}

// Bare-word flags.
const (
	fInit uint8 = 1 << iota
	fAcc
	fTranspose
	fSat
)

var flagNames = []struct {
	name string
	bit  uint8
}{{"init", fInit}, {"acc", fAcc}, {"transpose", fTranspose}, {"sat", fSat}}

// operands holds the values of one instruction line: integer-valued slots
// (ints, formats, roundings, pipes, buffers) in v, the float in f, the
// region name, the flags and a presence mask.
type operands struct {
	v     [numKeys]int64
	f     float64
	name  string
	has   uint64
	flags uint8
}

func (o *operands) is(k key) bool       { return o.has&(1<<k) != 0 }
func (o *operands) set(k key, v int64)  { o.v[k], o.has = v, o.has|1<<k }
func (o *operands) i(k key) int         { return int(o.v[k]) }
func (o *operands) fmt(k key) fp.Format { return fp.Format(o.v[k]) }
func (o *operands) or(k key, def int64) int64 {
	if o.is(k) {
		return o.v[k]
	}
	return def
}

// opSpec describes one mnemonic: its positional operands (the first nreq
// required), its key=value operands, its flags and how to build the Instr.
type opSpec struct {
	name  string
	pos   []key
	nreq  int
	keys  []key
	flags uint8
	build func(o *operands) (Instr, string)
}

// missing returns an error text for the first absent required key.
func missing(o *operands, ks ...key) string {
	for _, k := range ks {
		if !o.is(k) {
			return fmt.Sprintf("missing operand %q", keyInfo[k].name)
		}
	}
	return ""
}

// oneOf returns the single present key among ks, or an error text.
func oneOf(o *operands, ks ...key) (key, string) {
	var k0 key
	n := 0
	for _, k := range ks {
		if o.is(k) {
			k0 = k
			n++
		}
	}
	if n == 1 {
		return k0, ""
	}
	var names, found []string
	for _, k := range ks {
		names = append(names, keyInfo[k].name+"=")
		if o.is(k) {
			found = append(found, keyInfo[k].name+"=")
		}
	}
	if n == 0 {
		return 0, "needs one of " + strings.Join(names, ", ")
	}
	return 0, strings.Join(found, " and ") + " exclude each other"
}

var keyBuf = [numKeys]Buffer{kGM: GM, kL1: L1, kUB: UB, kL0A: L0A, kL0B: L0B, kL0C: L0C}

func opnd(o *operands, k key) Operand { return Operand{keyBuf[k], o.v[k]} }

func buildCopy(pipe Pipe, srcKey key, dstKeys ...key) func(o *operands) (Instr, string) {
	return func(o *operands) (Instr, string) {
		if e := missing(o, srcKey); e != "" {
			return Instr{}, e
		}
		dk, e := oneOf(o, dstKeys...)
		if e != "" {
			return Instr{}, e
		}
		src, dst := opnd(o, srcKey), opnd(o, dk)
		if o.is(kBytes) {
			for _, k := range []key{kNBurst, kLen, kSrcStride, kDstStride} {
				if o.is(k) {
					return Instr{}, fmt.Sprintf("bytes= and %s= exclude each other", keyInfo[k].name)
				}
			}
			return Copy(pipe, dst, src, o.v[kBytes]), ""
		}
		if e := missing(o, kNBurst, kLen); e != "" {
			return Instr{}, e + " (give bytes=, or nburst= and len=)"
		}
		l := o.v[kLen]
		return Copy2D(pipe, dst, src, o.i(kNBurst), l, o.or(kSrcStride, l), o.or(kDstStride, l)), ""
	}
}

func buildL0C(pipe Pipe, dstKeys ...key) func(o *operands) (Instr, string) {
	return func(o *operands) (Instr, string) {
		dk, e := oneOf(o, dstKeys...)
		if e == "" {
			e = missing(o, kL0C, kRows, kCols)
		}
		if e != "" {
			return Instr{}, e
		}
		in := fp.Format(o.or(kIn, int64(fp.FP32)))
		out := fp.Format(o.or(kOut, int64(in)))
		stride := o.or(kStride, o.v[kCols]*int64(out.Bytes()))
		return L0CCopy(pipe, opnd(o, dk), o.v[kL0C], o.i(kRows), o.i(kCols), stride, in, out,
			fp.Rounding(o.or(kRound, int64(fp.RNE))), o.flags&fSat != 0), ""
	}
}

var vecKeys = []key{kRepeat, kMask, kDstStride, kSrcStride}

func vecFinish(o *operands, in Instr) Instr {
	in.Mask = o.i(kMask)
	in.DstRepStr, in.SrcRepStr = o.v[kDstStride], o.v[kSrcStride]
	return in
}

func buildVec(op VecOp) func(o *operands) (Instr, string) {
	return func(o *operands) (Instr, string) {
		rep := int(o.or(kRepeat, 1))
		var in Instr
		var e string
		switch {
		case binaryVec(op):
			if e = missing(o, kDst, kSrc0, kSrc1, kDtype); e == "" {
				in = VecBinary(op, o.v[kDst], o.v[kSrc0], o.v[kSrc1], o.fmt(kDtype), rep)
			}
		case op == VMuls || op == VAdds:
			if e = missing(o, kDst, kSrc0, kScalar, kDtype); e == "" {
				in = VecScalar(op, o.v[kDst], o.v[kSrc0], o.f, o.fmt(kDtype), rep)
			}
		case op == VAbs:
			if e = missing(o, kDst, kSrc0, kDtype); e == "" {
				in = VecAbs(o.v[kDst], o.v[kSrc0], o.fmt(kDtype), rep)
			}
		case op == VDup:
			if e = missing(o, kDst, kScalar, kDtype); e == "" {
				in = VecDup(o.v[kDst], o.f, o.fmt(kDtype), rep)
			}
		case op == VCast:
			if e = missing(o, kDst, kSrc0, kFrom, kTo); e == "" {
				in = VecCast(o.v[kDst], o.v[kSrc0], o.fmt(kFrom), o.fmt(kTo),
					fp.Rounding(o.or(kRound, int64(fp.RNE))), o.flags&fSat != 0, rep)
			}
		}
		if e != "" {
			return Instr{}, e
		}
		return vecFinish(o, in), ""
	}
}

func cat(a []key, b ...key) []key { return append(append([]key{}, a...), b...) }

var specs = func() map[string]*opSpec {
	list := []*opSpec{
		{name: "nop", build: func(o *operands) (Instr, string) { return Nop(), "" }},
		{name: "sync_all", build: func(o *operands) (Instr, string) { return SyncAll(), "" }},
		{name: "alloc", pos: []key{kBuf}, nreq: 1, keys: []key{kOff, kSize, kName},
			build: func(o *operands) (Instr, string) {
				if e := missing(o, kOff, kSize); e != "" {
					return Instr{}, e
				}
				return Alloc(Buffer(o.v[kBuf]), o.v[kOff], o.v[kSize], o.name), ""
			}},
		{name: "free", pos: []key{kBuf}, keys: []key{kOff, kName},
			build: func(o *operands) (Instr, string) {
				switch {
				case o.is(kName) && o.is(kOff):
					return Instr{}, "name= and off= exclude each other"
				case o.is(kName):
					in := Free(o.name)
					in.Region.Buf = Buffer(o.v[kBuf])
					return in, ""
				case !o.is(kBuf) || !o.is(kOff):
					return Instr{}, "needs name=, or a buffer and off="
				}
				return FreeAt(Buffer(o.v[kBuf]), o.v[kOff]), ""
			}},
		{name: "scalar", keys: []key{kCycles},
			build: func(o *operands) (Instr, string) {
				if e := missing(o, kCycles); e != "" {
					return Instr{}, e
				}
				return Scalar(o.v[kCycles]), ""
			}},
		{name: "set_flag", pos: []key{kSrcPipe, kDstPipe, kID}, nreq: 3,
			build: func(o *operands) (Instr, string) {
				return SetFlag(Pipe(o.v[kSrcPipe]), Pipe(o.v[kDstPipe]), o.i(kID)), ""
			}},
		{name: "wait_flag", pos: []key{kSrcPipe, kDstPipe, kID}, nreq: 3,
			build: func(o *operands) (Instr, string) {
				return WaitFlag(Pipe(o.v[kSrcPipe]), Pipe(o.v[kDstPipe]), o.i(kID)), ""
			}},
		{name: "pipe_barrier", pos: []key{kPipe}, nreq: 1,
			build: func(o *operands) (Instr, string) { return Barrier(Pipe(o.v[kPipe])), "" }},
		{name: "mte2.copy", keys: []key{kGM, kL1, kUB, kBytes, kNBurst, kLen, kSrcStride, kDstStride},
			build: buildCopy(MTE2, kGM, kL1, kUB)},
		{name: "mte3.copy", keys: []key{kUB, kGM, kL1, kBytes, kNBurst, kLen, kSrcStride, kDstStride},
			build: buildCopy(MTE3, kUB, kGM, kL1)},
		{name: "mte1.load", keys: []key{kL0A, kL0B, kL1, kRows, kCols, kStride, kDtype}, flags: fTranspose,
			build: func(o *operands) (Instr, string) {
				dk, e := oneOf(o, kL0A, kL0B)
				if e == "" {
					e = missing(o, kL1, kRows, kCols, kDtype)
				}
				if e != "" {
					return Instr{}, e
				}
				t := o.flags&fTranspose != 0
				row := o.v[kCols]
				if t {
					row = o.v[kRows]
				}
				dt := o.fmt(kDtype)
				stride := o.or(kStride, row*int64(dt.Bytes()))
				return Load(keyBuf[dk], o.v[dk], o.v[kL1], o.i(kRows), o.i(kCols), stride, dt, t), ""
			}},
		{name: "m.mmad", keys: []key{kC, kA, kB, kM, kK, kN, kIn, kOut}, flags: fInit | fAcc,
			build: func(o *operands) (Instr, string) {
				if e := missing(o, kC, kA, kB, kM, kK, kN, kIn, kOut); e != "" {
					return Instr{}, e
				}
				switch o.flags & (fInit | fAcc) {
				case 0:
					return Instr{}, "needs init (C = A·B) or acc (C += A·B)"
				case fInit | fAcc:
					return Instr{}, "init and acc exclude each other"
				}
				return Mmad(o.v[kC], o.v[kA], o.v[kB], o.i(kM), o.i(kK), o.i(kN), o.fmt(kIn), o.fmt(kOut),
					o.flags&fInit != 0), ""
			}},
		{name: "fixp.l0c", keys: []key{kUB, kGM, kL0C, kRows, kCols, kStride, kIn, kOut, kRound}, flags: fSat,
			build: buildL0C(FIXP, kUB, kGM)},
		{name: "v.l0c", keys: []key{kUB, kL0C, kRows, kCols, kStride, kIn, kOut, kRound}, flags: fSat,
			build: buildL0C(V, kUB)},
	}
	for op := VecOp(0); op < numVecOps; op++ {
		s := &opSpec{name: "v." + op.String(), build: buildVec(op)}
		switch {
		case binaryVec(op):
			s.keys = cat(vecKeys, kDst, kSrc0, kSrc1, kDtype)
		case op == VMuls || op == VAdds:
			s.keys = cat(vecKeys, kDst, kSrc0, kScalar, kDtype)
		case op == VAbs:
			s.keys = cat(vecKeys, kDst, kSrc0, kDtype)
		case op == VDup:
			s.keys = []key{kDst, kScalar, kDtype, kRepeat, kMask, kDstStride}
		case op == VCast:
			s.keys = cat(vecKeys, kDst, kSrc0, kFrom, kTo, kRound)
			s.flags = fSat
		}
		list = append(list, s)
	}
	m := make(map[string]*opSpec, len(list))
	for _, s := range list {
		m[s.name] = s
	}
	return m
}()

// Format prints one instruction in assembly syntax. For every valid
// instruction the assembler parses the text back to the same Instr (Line
// aside). Invalid instructions print as well as they can; Format never
// fails.
func Format(in Instr) string { return (*Names)(nil).Format(in) }

// Format is Format with the lane and buffer names of n.
func (n *Names) Format(in Instr) string {
	var sb strings.Builder
	sb.WriteString(n.Mnemonic(in))
	kv := func(k string, v int64) {
		sb.WriteByte(' ')
		sb.WriteString(k)
		sb.WriteByte('=')
		sb.WriteString(strconv.FormatInt(v, 10))
	}
	ks := func(k, v string) {
		sb.WriteByte(' ')
		sb.WriteString(k)
		sb.WriteByte('=')
		sb.WriteString(v)
	}
	word := func(w string) {
		sb.WriteByte(' ')
		sb.WriteString(w)
	}
	bufKey := func(o Operand) { kv(lowerASCII(n.buffer(o.Buf)), o.Addr) }
	switch in.Op {
	case OpAlloc:
		word(n.buffer(in.Region.Buf))
		kv("off", in.Region.Offset)
		kv("size", in.Region.Size)
		if in.Region.Name != 0 {
			ks("name", in.Region.Name.String())
		}
	case OpFree:
		if in.Region.Name != 0 {
			if in.Region.Buf != GM {
				word(n.buffer(in.Region.Buf))
			}
			ks("name", in.Region.Name.String())
		} else {
			word(n.buffer(in.Region.Buf))
			kv("off", in.Region.Offset)
		}
	case OpScalar:
		kv("cycles", in.Cycles)
	case OpSetFlag, OpWaitFlag:
		word(n.lane(in.SrcPipe))
		word(n.lane(in.DstPipe))
		word(strconv.Itoa(in.FlagID))
	case OpBarrier:
		if in.Pipe == ALL {
			word(in.Pipe.String())
		} else {
			word(n.lane(in.Pipe))
		}
	case OpCopy:
		bufKey(in.Src)
		bufKey(in.Dst)
		if in.NBurst == 1 && in.SrcStride == 0 && in.DstStride == 0 {
			kv("bytes", in.BurstLen)
		} else {
			kv("nburst", int64(in.NBurst))
			kv("len", in.BurstLen)
			kv("src_stride", in.SrcStride)
			kv("dst_stride", in.DstStride)
		}
	case OpLoad:
		bufKey(in.Dst)
		bufKey(in.Src)
		kv("rows", int64(in.Rows))
		kv("cols", int64(in.Cols))
		kv("stride", in.RowStride)
		ks("dtype", in.In.String())
		if in.Transpose {
			word("transpose")
		}
	case OpMmad:
		kv("c", in.Dst.Addr)
		kv("a", in.Src.Addr)
		kv("b", in.Src1.Addr)
		kv("m", int64(in.M))
		kv("k", int64(in.K))
		kv("n", int64(in.N))
		ks("in", in.In.String())
		ks("out", in.Out.String())
		if in.Init {
			word("init")
		} else {
			word("acc")
		}
	case OpL0CCopy:
		bufKey(in.Dst)
		bufKey(in.Src)
		kv("rows", int64(in.Rows))
		kv("cols", int64(in.Cols))
		kv("stride", in.RowStride)
		ks("in", in.In.String())
		ks("out", in.Out.String())
		ks("round", in.Round.String())
		if in.Saturate {
			word("sat")
		}
	case OpVector:
		kv("dst", in.Dst.Addr)
		if in.VOp != VDup {
			kv("src0", in.Src.Addr)
		}
		if binaryVec(in.VOp) {
			kv("src1", in.Src1.Addr)
		}
		if in.VOp == VMuls || in.VOp == VAdds || in.VOp == VDup {
			ks("scalar", formatFloat(in.Scalar))
		}
		if in.VOp == VCast {
			ks("from", in.In.String())
			ks("to", in.Out.String())
			ks("round", in.Round.String())
			if in.Saturate {
				word("sat")
			}
		} else {
			ks("dtype", in.In.String())
		}
		kv("repeat", int64(in.Repeat))
		if in.Mask != 0 {
			kv("mask", int64(in.Mask))
		}
		if in.DstRepStr != 0 || in.SrcRepStr != 0 {
			kv("dst_stride", in.DstRepStr)
			if in.VOp != VDup {
				kv("src_stride", in.SrcRepStr)
			}
		}
	}
	return sb.String()
}
