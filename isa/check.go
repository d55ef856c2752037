package isa

import (
	"fmt"
	"math"
	"slices"

	"github.com/davinci-sim/davinci-sim/fp"
)

// Limits are the machine properties Check verifies a program against.
type Limits struct {
	Capacity [NumBuffers]int64 // bytes per buffer (0 = unlimited / not checked; GM usually 0)
	FlagIDs  int               // event ids per pipe pair (0 = not checked)
	HasFIXP  bool              // FIXP pipe exists
	CubeIn   []fp.Format       // input types the cube accepts (nil = not checked)
	// VectorRepeatBytes is the bytes one vector repeat covers (0: the
	// default VectorRepeatBytes).
	VectorRepeatBytes int
}

// CheckError is the first problem Check found: the core whose stream holds
// it, the source line (0 for instructions built in Go), the 0-based
// position in the core's stream and a message naming the instruction and
// the violated constraint.
type CheckError struct {
	File  string // Program.Name
	Core  int
	Line  int
	Index int
	Msg   string
}

// Error returns "file:line: core C: message" (or "file: core C:
// instruction #I: message" when there is no source line).
func (e *CheckError) Error() string {
	f := e.File
	if f == "" {
		f = "program"
	}
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: core %d: %s", f, e.Line, e.Core, clip(e.Msg))
	}
	return fmt.Sprintf("%s: core %d: instruction #%d: %s", f, e.Core, e.Index, clip(e.Msg))
}

// Alignment is the byte alignment of allocations and on-chip operand
// addresses.
const Alignment = 32

// Check is the gate before a run. It walks every core's stream and returns
// a *CheckError for the first problem, or nil. Per instruction:
//
//   - Validate (local rules: pipes, buffers, sizes, counts, types);
//   - machine limits: flag ids below FlagIDs, FIXP used only when HasFIXP,
//     mmad input type in CubeIn, every operand's byte range (padded
//     fractal sizes for L0A/L0B/L0C: ceil(rows/16)·16 × ceil(cols/16)·16 ×
//     element size) inside its buffer's capacity;
//   - on-chip operand addresses 32-byte aligned;
//   - regions: alloc offset and size 32-byte aligned and inside capacity, no
//     overlap with a live region of the same buffer, no duplicate live name;
//     free names a live region (by name, or by buffer and start offset).
//
// The region rule: if a core's stream contains any alloc, every on-chip
// operand range of that core must lie inside a single live region of its
// buffer. Streams without alloc skip this rule (occupancy then is not
// tracked). Every core with a stream must reach the same number of
// sync_all barriers, or the run would deadlock. GM is never allocated; GM ranges are checked only against a
// non-zero GM capacity.
func Check(p Program, lim Limits) error {
	var c checker
	c.lim = lim
	first, firstSyncs := -1, 0
	for core, s := range p.Cores {
		if s == nil {
			continue
		}
		if err := c.core(s); err != nil {
			err.File, err.Core = p.Name, core
			return err
		}
		if first < 0 {
			first, firstSyncs = core, c.syncs
		} else if c.syncs != firstSyncs {
			return &CheckError{File: p.Name, Core: core, Line: c.lastSync, Index: c.n,
				Msg: fmt.Sprintf("sync_all: core %d reaches %d sync_all, core %d reaches %d: the run would deadlock",
					core, c.syncs, first, firstSyncs)}
		}
	}
	return nil
}

type checker struct {
	lim      Limits
	live     [NumBuffers][]Region
	useRegs  bool
	syncs    int // sync_all instructions in the core's stream
	lastSync int // line of the last one
	n        int // instructions in the stream
}

func (c *checker) core(s Stream) *CheckError {
	c.useRegs = false
	for in := range s {
		if in.Op == OpAlloc {
			c.useRegs = true
			break
		}
	}
	for b := range c.live {
		c.live[b] = c.live[b][:0]
	}
	idx := 0
	c.syncs, c.lastSync = 0, 0
	var err *CheckError
	for in := range s {
		if in.Op == OpSyncAll {
			c.syncs++
			c.lastSync = in.Line
		}
		if msg := c.instr(&in); msg != "" {
			err = &CheckError{Line: in.Line, Index: idx, Msg: Mnemonic(in) + ": " + msg}
			break
		}
		idx++
	}
	c.n = idx
	return err
}

func (c *checker) instr(in *Instr) string {
	if msg := validate(in); msg != "" {
		return msg
	}
	usesFIXP := in.Pipe == FIXP
	if in.Op == OpSetFlag || in.Op == OpWaitFlag {
		usesFIXP = in.SrcPipe == FIXP || in.DstPipe == FIXP
		if n := c.lim.FlagIDs; n > 0 && in.FlagID >= n {
			return fmt.Sprintf("flag id %d out of range [0, %d)", in.FlagID, n)
		}
	}
	if usesFIXP && !c.lim.HasFIXP {
		return "the machine has no FIXP pipe"
	}
	switch in.Op {
	case OpAlloc:
		return c.alloc(in.Region)
	case OpFree:
		return c.free(in.Region)
	case OpMmad:
		if c.lim.CubeIn != nil && !slices.Contains(c.lim.CubeIn, in.In) {
			return fmt.Sprintf("the cube does not accept %s inputs (accepts %v)", in.In, c.lim.CubeIn)
		}
	case OpVector:
		rb := repeatOr(c.lim.VectorRepeatBytes)
		if full := rb / in.In.Bytes(); in.Mask > full {
			return fmt.Sprintf("mask %d out of range [0, %d] (elements of %s per %d-byte repeat)", in.Mask, full, in.In, rb)
		}
	}
	var acc [3]access
	n := accesses(in, c.lim.VectorRepeatBytes, &acc)
	for _, a := range acc[:n] {
		if msg := c.access(a); msg != "" {
			return msg
		}
	}
	return ""
}

func (c *checker) alloc(r Region) string {
	if r.Offset%Alignment != 0 || r.Size%Alignment != 0 {
		return fmt.Sprintf("%s region at %d size %d is not %d-byte aligned", r.Buf, r.Offset, r.Size, Alignment)
	}
	end := r.Offset + r.Size
	if end < r.Offset {
		return fmt.Sprintf("%s region at %d size %d overflows", r.Buf, r.Offset, r.Size)
	}
	if cp := c.lim.Capacity[r.Buf]; cp > 0 && end > cp {
		return fmt.Sprintf("%s region [%d, %d) exceeds the buffer's capacity of %d bytes", r.Buf, r.Offset, end, cp)
	}
	for b := range c.live {
		for _, l := range c.live[b] {
			if r.Name != 0 && l.Name == r.Name {
				return fmt.Sprintf("region name %q already live (%s at %d)", r.Name, l.Buf, l.Offset)
			}
		}
	}
	for _, l := range c.live[r.Buf] {
		if r.Offset < l.Offset+l.Size && l.Offset < end {
			name := ""
			if l.Name != 0 {
				name = fmt.Sprintf(" %q", l.Name)
			}
			return fmt.Sprintf("%s region [%d, %d) overlaps live region%s [%d, %d)", r.Buf, r.Offset, end, name, l.Offset, l.Offset+l.Size)
		}
	}
	c.live[r.Buf] = append(c.live[r.Buf], r)
	return ""
}

func (c *checker) free(r Region) string {
	for b := range c.live {
		for i, l := range c.live[b] {
			match := false
			if r.Name != 0 {
				match = l.Name == r.Name
				if match && r.Buf != GM && r.Buf != l.Buf {
					return fmt.Sprintf("region %q is in %s, not %s", r.Name, l.Buf, r.Buf)
				}
			} else {
				match = Buffer(b) == r.Buf && l.Offset == r.Offset
			}
			if match {
				c.live[b] = slices.Delete(c.live[b], i, i+1)
				return ""
			}
		}
	}
	if r.Name != 0 {
		return fmt.Sprintf("no live region named %q", r.Name)
	}
	return fmt.Sprintf("no live %s region starts at %d", r.Buf, r.Offset)
}

func (c *checker) access(a access) string {
	if a.end == math.MaxInt64 {
		return fmt.Sprintf("%s range at %s %d overflows", a.what, a.buf, a.addr)
	}
	if cp := c.lim.Capacity[a.buf]; cp > 0 && a.end > cp {
		return fmt.Sprintf("%s %s [%d, %d) exceeds the buffer's capacity of %d bytes", a.what, a.buf, a.addr, a.end, cp)
	}
	if a.buf == GM {
		return ""
	}
	if a.addr%Alignment != 0 {
		return fmt.Sprintf("%s address %s %d is not %d-byte aligned", a.what, a.buf, a.addr, Alignment)
	}
	if !c.useRegs {
		return ""
	}
	for _, l := range c.live[a.buf] {
		if a.addr >= l.Offset && a.end <= l.Offset+l.Size {
			return ""
		}
	}
	return fmt.Sprintf("%s %s [%d, %d) is not inside one live allocated region", a.what, a.buf, a.addr, a.end)
}
