package traces

import (
	"encoding/binary"
	"math"

	"github.com/davinci-sim/davinci-sim/arch"
	"github.com/davinci-sim/davinci-sim/fp"
	"github.com/davinci-sim/davinci-sim/isa"
)

// A recorded instruction is kept as a compact, pointer-free copy of only the
// fields that isa.Format, isa.Mnemonic and isa.Instr.Amount read for its opcode:
// the engine fills a fixed-size cinstr (cheap, no allocation), the consumer
// varint-packs it into a byte arena (about 15–30 bytes per instruction
// instead of the ~250-byte isa.Instr, and nothing for the GC to scan), and
// Timeline.Text/Args unpack it on demand.

// cinstr is the fixed-size compact form of an instruction. Which v slot
// holds which field depends on op (see pack).
type cinstr struct {
	op    isa.Op
	pipe  isa.Pipe
	vop   isa.VecOp
	in    fp.Format
	out   fp.Format
	round fp.Rounding
	flags uint8 // fTranspose | fInit | fSaturate | fGroup
	b     [3]isa.Buffer
	v     [8]int64
	// gv is the group the instruction started (fGroup: its count, bytes
	// and flops; setGroup).
	gv [3]int64
}

const (
	fTranspose = 1 << iota
	fInit
	fSaturate
	fGroup
)

// pack returns the compact form of in. Region names (alloc/free only)
// are isa.RegionName ids, interned by package isa, valid in this process.
func pack(in *isa.Instr) (c cinstr) {
	c.pack(in)
	return c
}

// pack sets c to the compact form of in (see pack).
func (c *cinstr) pack(in *isa.Instr) {
	*c = cinstr{op: in.Op, pipe: in.Pipe}
	switch in.Op {
	case isa.OpAlloc, isa.OpFree:
		c.b[0] = in.Region.Buf
		c.v[0], c.v[1] = int64(in.Region.Offset), int64(in.Region.Size)
		c.v[2] = int64(in.Region.Name)
	case isa.OpScalar:
		c.v[0] = int64(in.Cycles)
	case isa.OpSetFlag, isa.OpWaitFlag:
		c.v[0], c.v[1], c.v[2] = int64(in.SrcPipe), int64(in.DstPipe), int64(in.FlagID)
	case isa.OpCopy:
		c.b[0], c.b[1] = in.Dst.Buf, in.Src.Buf
		c.v[0], c.v[1] = int64(in.Dst.Addr), int64(in.Src.Addr)
		c.v[2], c.v[3], c.v[4], c.v[5] = int64(in.NBurst), int64(in.BurstLen), int64(in.SrcStride), int64(in.DstStride)
	case isa.OpLoad, isa.OpL0CCopy:
		c.b[0], c.b[1] = in.Dst.Buf, in.Src.Buf
		c.v[0], c.v[1] = int64(in.Dst.Addr), int64(in.Src.Addr)
		c.v[2], c.v[3], c.v[4] = int64(in.Rows), int64(in.Cols), int64(in.RowStride)
		c.in, c.out, c.round = in.In, in.Out, in.Round
		if in.Transpose {
			c.flags |= fTranspose
		}
		if in.Saturate {
			c.flags |= fSaturate
		}
	case isa.OpMmad:
		c.b[0], c.b[1], c.b[2] = in.Dst.Buf, in.Src.Buf, in.Src1.Buf
		c.v[0], c.v[1], c.v[2] = int64(in.Dst.Addr), int64(in.Src.Addr), int64(in.Src1.Addr)
		c.v[3], c.v[4], c.v[5] = int64(in.M), int64(in.K), int64(in.N)
		c.in, c.out = in.In, in.Out
		if in.Init {
			c.flags |= fInit
		}
	case isa.OpVector:
		c.vop = in.VOp
		c.b[0], c.b[1], c.b[2] = in.Dst.Buf, in.Src.Buf, in.Src1.Buf
		c.v[0], c.v[1], c.v[2] = int64(in.Dst.Addr), int64(in.Src.Addr), int64(in.Src1.Addr)
		c.v[3] = int64(math.Float64bits(float64(in.Scalar)))
		c.v[4], c.v[5], c.v[6], c.v[7] = int64(in.Repeat), int64(in.Mask), int64(in.DstRepStr), int64(in.SrcRepStr)
		c.in, c.out, c.round = in.In, in.Out, in.Round
		if in.Saturate {
			c.flags |= fSaturate
		}
	}
}

// setGroup records g (arch.Group) in c: its count, bytes and flops in gv,
// flagged fGroup, for the instructions that start in groups (copies and
// loads started together, runs of matrix and element-wise instructions);
// c is left alone for others.
func (c *cinstr) setGroup(g *arch.Group) {
	if g == nil || g.N < 2 || !groupable(c.op) {
		return
	}
	c.flags |= fGroup
	c.gv = [3]int64{int64(g.N), g.Bytes, int64(math.Round(g.Flops))}
}

// group returns the group recorded in c (setGroup; N = 0: none).
func (c *cinstr) group() arch.Group {
	if c.flags&fGroup == 0 || c.gv[0] < 2 || !groupable(c.op) {
		return arch.Group{}
	}
	return arch.Group{N: int(c.gv[0]), Bytes: c.gv[1], Flops: float64(c.gv[2])}
}

// groupable reports whether instructions of op start in groups.
func groupable(op isa.Op) bool {
	switch op {
	case isa.OpCopy, isa.OpLoad, isa.OpL0CCopy, isa.OpMmad, isa.OpVector:
		return true
	}
	return false
}

// hash returns a hash of c for the recorder's cache of packed copies (the
// top bits are the best mixed). It reads the header and the first three
// values — the addresses, where instructions differ most; instructions
// that differ only further on share a cache slot, which costs a miss, not
// a wrong answer (the cache compares whole instructions).
func (c *cinstr) hash() uint64 {
	h0 := uint64(c.op) | uint64(c.pipe)<<8 | uint64(c.vop)<<16 | uint64(c.in)<<24 | uint64(c.out)<<32 |
		uint64(c.round)<<40 | uint64(c.flags)<<48 | uint64(c.b[0])<<56
	h1 := uint64(c.b[1]) | uint64(c.b[2])<<8
	// Independent products (they overlap in the pipeline), then one mix.
	h := h0*0x9E3779B97F4A7C15 + h1*0xC2B2AE3D27D4EB4F +
		uint64(c.v[0])*0x165667B19E3779F9 + uint64(c.v[1])*0xD6E8FEB86659FD93 +
		uint64(c.v[2])*0xFF51AFD7ED558CCD
	h ^= h >> 29
	return h * 0x9E3779B97F4A7C15
}

// integer is any integer field type of isa.Instr (the setters below keep
// unpack compiling whatever width a field has).
type integer interface {
	~int | ~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32 | ~uint64
}

func setInt[T integer](p *T, v int64) { *p = T(v) }

func setFloat[T ~float32 | ~float64](p *T, v float64) { *p = T(v) }

// unpack returns the instruction c was packed from (the fields Format and
// Amount read; others, e.g. Line, are zero).
func (c *cinstr) unpack() isa.Instr {
	var in isa.Instr
	in.Op, in.Pipe = c.op, c.pipe
	switch c.op {
	case isa.OpAlloc, isa.OpFree:
		in.Region.Buf = c.b[0]
		setInt(&in.Region.Offset, c.v[0])
		setInt(&in.Region.Size, c.v[1])
		in.Region.Name = isa.RegionName(c.v[2])
	case isa.OpScalar:
		setInt(&in.Cycles, c.v[0])
	case isa.OpSetFlag, isa.OpWaitFlag:
		in.SrcPipe, in.DstPipe = isa.Pipe(c.v[0]), isa.Pipe(c.v[1])
		setInt(&in.FlagID, c.v[2])
	case isa.OpCopy:
		in.Dst.Buf, in.Src.Buf = c.b[0], c.b[1]
		setInt(&in.Dst.Addr, c.v[0])
		setInt(&in.Src.Addr, c.v[1])
		setInt(&in.NBurst, c.v[2])
		setInt(&in.BurstLen, c.v[3])
		setInt(&in.SrcStride, c.v[4])
		setInt(&in.DstStride, c.v[5])
	case isa.OpLoad, isa.OpL0CCopy:
		in.Dst.Buf, in.Src.Buf = c.b[0], c.b[1]
		setInt(&in.Dst.Addr, c.v[0])
		setInt(&in.Src.Addr, c.v[1])
		setInt(&in.Rows, c.v[2])
		setInt(&in.Cols, c.v[3])
		setInt(&in.RowStride, c.v[4])
		in.In, in.Out, in.Round = c.in, c.out, c.round
		in.Transpose = c.flags&fTranspose != 0
		in.Saturate = c.flags&fSaturate != 0
	case isa.OpMmad:
		in.Dst.Buf, in.Src.Buf, in.Src1.Buf = c.b[0], c.b[1], c.b[2]
		setInt(&in.Dst.Addr, c.v[0])
		setInt(&in.Src.Addr, c.v[1])
		setInt(&in.Src1.Addr, c.v[2])
		setInt(&in.M, c.v[3])
		setInt(&in.K, c.v[4])
		setInt(&in.N, c.v[5])
		in.In, in.Out = c.in, c.out
		in.Init = c.flags&fInit != 0
	case isa.OpVector:
		in.VOp = c.vop
		in.Dst.Buf, in.Src.Buf, in.Src1.Buf = c.b[0], c.b[1], c.b[2]
		setInt(&in.Dst.Addr, c.v[0])
		setInt(&in.Src.Addr, c.v[1])
		setInt(&in.Src1.Addr, c.v[2])
		setFloat(&in.Scalar, math.Float64frombits(uint64(c.v[3])))
		setInt(&in.Repeat, c.v[4])
		setInt(&in.Mask, c.v[5])
		setInt(&in.DstRepStr, c.v[6])
		setInt(&in.SrcRepStr, c.v[7])
		in.In, in.Out, in.Round = c.in, c.out, c.round
		in.Saturate = c.flags&fSaturate != 0
	}
	return in
}

// maxPacked bounds the encoded size of a cinstr: op, pipe, a 16-bit
// presence mask, 8 bytes and 8 varints, and a group's 3 varints.
const maxPacked = 4 + 8 + 11*binary.MaxVarintLen64

// appendPacked varint-packs c: op, pipe, a 16-bit mask of the non-zero
// fields among (vop, in, out, round, flags, b[0..2], v[0..7]), then those
// fields (bytes, then zig-zag varints), then, where flags has fGroup, gv
// (3 zig-zag varints).
func appendPacked(dst []byte, c *cinstr) []byte {
	var buf [maxPacked]byte
	return append(dst, buf[:putPacked(buf[:], c)]...)
}

// putPacked writes the packed form of c to buf (at least maxPacked bytes)
// and returns its length.
func putPacked(buf []byte, c *cinstr) int {
	buf = buf[:maxPacked]
	buf[0], buf[1] = uint8(c.op), uint8(c.pipe)
	n := 4
	var mask uint16
	small := [8]uint8{uint8(c.vop), uint8(c.in), uint8(c.out), uint8(c.round), c.flags,
		uint8(c.b[0]), uint8(c.b[1]), uint8(c.b[2])}
	for i, x := range small {
		if x != 0 {
			mask |= 1 << i
			buf[n] = x
			n++
		}
	}
	for i, x := range c.v {
		if x != 0 {
			mask |= 1 << (8 + i)
			ux := uint64(x) << 1 // zig-zag, as binary.AppendVarint
			if x < 0 {
				ux = ^ux
			}
			for ux >= 0x80 {
				buf[n] = byte(ux) | 0x80
				ux >>= 7
				n++
			}
			buf[n] = byte(ux)
			n++
		}
	}
	if c.flags&fGroup != 0 {
		for _, x := range c.gv {
			n += binary.PutVarint(buf[n:], x)
		}
	}
	buf[2], buf[3] = uint8(mask), uint8(mask>>8)
	return n
}

// unpacked decodes a cinstr written by appendPacked at the start of b
// (ok is false when b is truncated or malformed).
func unpacked(b []byte) (c cinstr, ok bool) {
	if len(b) < 4 {
		return c, false
	}
	c.op, c.pipe = isa.Op(b[0]), isa.Pipe(b[1])
	mask := uint16(b[2]) | uint16(b[3])<<8
	b = b[4:]
	var small [8]uint8
	for i := range small {
		if mask&(1<<i) != 0 {
			if len(b) == 0 {
				return c, false
			}
			small[i], b = b[0], b[1:]
		}
	}
	c.vop, c.in, c.out, c.round, c.flags = isa.VecOp(small[0]), fp.Format(small[1]), fp.Format(small[2]), fp.Rounding(small[3]), small[4]
	c.b = [3]isa.Buffer{isa.Buffer(small[5]), isa.Buffer(small[6]), isa.Buffer(small[7])}
	for i := range c.v {
		if mask&(1<<(8+i)) != 0 {
			x, n := binary.Varint(b)
			if n <= 0 {
				return c, false
			}
			c.v[i], b = x, b[n:]
		}
	}
	if c.flags&fGroup != 0 {
		for i := range c.gv {
			x, n := binary.Varint(b)
			if n <= 0 {
				return c, false
			}
			c.gv[i], b = x, b[n:]
		}
	}
	return c, true
}
