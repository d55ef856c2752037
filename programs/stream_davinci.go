package programs

import (
	"github.com/davinci-sim/davinci-sim/fp"
	"github.com/davinci-sim/davinci-sim/isa"
)

// emitStreamPass emits core's share of a streaming pass on a DaVinci core,
// the counterpart of streamGrid (GPU machines): blocks at(0), …,
// at(blocks−1) dealt to the ncores cores round-robin (gemmPlan.chunks' order).
// Each block's reads are copied GM→UB (MTE2), its operations run on the
// vector unit — each vecWork as vector instructions over the block's
// elems elements, one per operation — and its writes are copied UB→GM
// (MTE3), in two UB slots so that one block's copies overlap the other's
// vector work (the protocol of the split pass, emitSplit). A slot holds
// the block's reads, then its writes, each span 32-byte aligned; the
// operations sweep its first elems elements. The caller sets
// e.timingOnly when the pass's values are its own (streamGrid's grids are
// TimingOnly for the same reason).
func emitStreamPass(e *emitter, name string, core, ncores, blocks int, at func(i int) streamBlock) {
	align := func(b int64) int64 { return (b + isa.Alignment - 1) &^ (isa.Alignment - 1) }
	// The slot: the largest block of this core.
	slot := int64(0)
	for i := core; i < blocks; i += ncores {
		b := at(i)
		need := int64(0)
		for _, spans := range [2][]gmSpan{b.reads, b.writes} {
			for _, s := range spans {
				need += align(s.bytes)
			}
		}
		for _, w := range b.work {
			need = max(need, align(int64(b.elems)*int64(w.f.Bytes())))
		}
		slot = max(slot, need)
	}
	if slot == 0 {
		return
	}
	e.alloc(isa.UB, 0, 2*slot, name)
	e.presetTokens(slotTokens)
	for x, i := 0, core; i < blocks && e.ok(); x, i = x+1, i+ncores { // (!ok: the consumer closed the stream)
		b := at(i)
		s := x % 2
		base := int64(s) * slot
		off := base
		e.waitFlag(isa.V, isa.MTE2, fSlot+s)
		for _, r := range b.reads {
			e.copy2D(isa.MTE2, ubOp(off), gmOp(r.addr), 1, r.bytes, 0, 0)
			off += align(r.bytes)
		}
		e.setFlag(isa.MTE2, isa.V, fSlot+s)
		e.waitFlag(isa.MTE2, isa.V, fSlot+s)
		e.waitFlag(isa.MTE3, isa.V, fSlot+s)
		for _, w := range b.work {
			for done := 0; done < w.n; done += b.elems {
				e.vec(isa.VAdd, base, base, base, min(b.elems, w.n-done), w.f, w.f, 0, fp.RNE, false)
			}
		}
		e.setFlag(isa.V, isa.MTE2, fSlot+s)
		e.setFlag(isa.V, isa.MTE3, fSlot+s)
		e.waitFlag(isa.V, isa.MTE3, fSlot+s)
		for _, w := range b.writes {
			e.copy2D(isa.MTE3, gmOp(w.addr), ubOp(off), 1, w.bytes, 0, 0)
			off += align(w.bytes)
		}
		e.setFlag(isa.MTE3, isa.V, fSlot+s)
	}
	e.drainTokens(slotTokens)
	e.free(isa.UB, name)
}

// streamChunkFor is the elements of a DaVinci streaming pass's blocks:
// streamChunk, halved until two slots of perElem bytes an element plus
// fixed bytes fit ub bytes (at least 64).
func streamChunkFor(ub, perElem, fixed int64) int {
	c := streamChunk
	for c > 64 && 2*(perElem*int64(c)+fixed) > ub {
		c /= 2
	}
	return c
}
