package programs

import (
	"math/bits"

	"github.com/davinci-sim/davinci-sim/isa"
	"github.com/davinci-sim/davinci-sim/mem"
)

// maxAsmWork bounds the data work of an asm program with full numerics:
// the multiply-adds of its mmads plus the bytes its copies, loads, L0C
// copies and vector ops write, over all its cores. 2^40 is about a
// 10000³ GEMM's multiply-adds (the gemm kinds refuse full numerics not far
// above, at 18 GiB of host memory on this 24 GiB box): minutes to hours of computing here — an
// mmad costs the host some 0.2 ns a multiply-add, an MTE1 load 3 ns a
// byte, a vector op 7 ns a byte (2026-11, this 2-core box).
const maxAsmWork = 1 << 40

// asmBudget is what full numerics of an asm program will cost the host,
// found before the data exist: the data work of its instructions and the
// host memory — the GM pages that the gm tensors and the program's GM
// writes span (the sparse GM store backs each 64 KiB page written), the
// output arrays read back, and the largest tensor's staging.
type asmBudget struct {
	work  float64
	fixed int64 // bytes of outputs and staging
	// parsed is the host memory of the parsed assembly (isa.ParseHostBytes),
	// counted with the run's own runHostBytes.
	parsed int64
	pages  pageSet
	gmCap  int64
	host   hostBound // the run's bound on its host memory
	last   [4]int64  // the last write's place (a loop writing one tile again and again marks it once)
}

// hostBytes returns the host memory full numerics takes: the run's own
// (runHostBytes and the parsed assembly), the outputs and staging, the GM
// pages.
func (b *asmBudget) hostBytes() int64 { return b.own() + b.fixed + b.pages.n*mem.PageSize }

// own returns the host memory the run holds besides its data:
// runHostBytes and the parsed assembly.
func (b *asmBudget) own() int64 { return runHostBytes + b.parsed }

// overMemory is the error of a program whose full numerics need more
// host memory than the run may take (at: the instruction that passed it,
// or "").
func (b *asmBudget) overMemory(path, at string) error {
	if at != "" {
		at = ", passed at " + at
	}
	return b.host.refuse(keyError(path, "numerics", "full numerics needs more host memory than the run may take (%s, --max-memory): the GM pages that the gm tensors and the program's writes touch, %d MiB%s, the outputs and the largest tensor's staging, %d MiB, and the run's own %d MiB; use numerics off",
		gib(b.host.bound()), b.pages.n*mem.PageSize>>20, at, b.fixed>>20, b.own()>>20))
}

// markWrite counts the pages a GM write touches: rows of rowBytes
// bytes, stride apart, from addr.
func (b *asmBudget) markWrite(addr, rows, stride, rowBytes int64) {
	if at := [4]int64{addr, rows, stride, rowBytes}; at != b.last {
		b.last = at
	} else {
		return
	}
	if rows <= 1 || stride <= mem.PageSize {
		// No gap between rows holds a whole page: the write touches
		// every page from its first byte to its last.
		b.markGM(addr, satEnd(addr, rows-1, stride, rowBytes))
		return
	}
	for k := int64(0); k < rows && b.hostBytes() <= b.host.bound(); k++ {
		a := satEnd(addr, k, stride, 0)
		b.markGM(a, satEnd(a, 0, 0, rowBytes))
	}
}

// markGM counts the pages of GM bytes [from, to) (clipped to GM: an
// address outside it is the static check's to report).
func (b *asmBudget) markGM(from, to int64) {
	from, to = max(from, 0), min(to, b.gmCap)
	if from >= to {
		return
	}
	p0, p1 := from/mem.PageSize, (to-1)/mem.PageSize
	if p1-p0 >= b.host.bound()/mem.PageSize {
		b.pages.n += p1 - p0 + 1 // past the bound anyway: not worth marking
		return
	}
	b.pages.mark(p0, p1)
}

// add accounts instruction in; it reports whether the program stays
// within both bounds.
func (b *asmBudget) add(in *isa.Instr, repeatBytes int) bool {
	switch in.Op {
	case isa.OpCopy:
		b.work += float64(float64(in.NBurst) * float64(in.BurstLen))
		if in.Dst.Buf == isa.GM {
			b.markWrite(in.Dst.Addr, int64(in.NBurst), in.DstStride, in.BurstLen)
		}
	case isa.OpLoad:
		b.work += float64(float64(in.Rows) * float64(in.Cols) * float64(in.In.Bytes()))
	case isa.OpL0CCopy:
		b.work += float64(float64(in.Rows) * float64(in.Cols) * float64(in.In.Bytes()))
		if in.Dst.Buf == isa.GM {
			b.markWrite(in.Dst.Addr, int64(in.Rows), in.RowStride, int64(in.Cols)*int64(in.Out.Bytes()))
		}
	case isa.OpMmad:
		b.work += float64(float64(in.M) * float64(in.K) * float64(in.N))
	case isa.OpVector:
		b.work += float64(float64(max(in.Repeat, 1)) * float64(repeatBytes))
	}
	return b.work <= maxAsmWork && b.hostBytes() <= b.host.bound()
}

// satEnd returns addr + rows·stride + last for addr, rows, stride, last
// ≥ 0, saturated at MaxInt64 (the end of a strided range whose rows are
// stride apart and last long).
func satEnd(addr, rows, stride, last int64) int64 {
	const top = 1<<63 - 1
	if addr < 0 || rows < 0 || stride < 0 || last < 0 {
		return addr // not valid: the static check reports it
	}
	if last > top-addr || rows > 0 && stride > (top-addr-last)/rows {
		return top
	}
	return addr + rows*stride + last
}

// pageSet is a sparse set of page numbers, kept as bitmaps of
// pageChunk·64 pages.
type pageSet struct {
	chunks map[int64]*[pageChunk]uint64
	n      int64 // pages in the set
}

// pageChunk is the words of a pageSet bitmap: 512 pages (32 MiB of GM).
const pageChunk = 8

// clone returns a copy of s that shares nothing with it.
func (s *pageSet) clone() pageSet {
	c := pageSet{n: s.n, chunks: make(map[int64]*[pageChunk]uint64, len(s.chunks))}
	for k, ch := range s.chunks {
		cp := *ch
		c.chunks[k] = &cp
	}
	return c
}

// mark adds pages p0 … p1 (p0 ≥ 0).
func (s *pageSet) mark(p0, p1 int64) {
	if s.chunks == nil {
		s.chunks = map[int64]*[pageChunk]uint64{}
	}
	const span = pageChunk * 64
	for p0 <= p1 {
		c := p0 / span
		ch := s.chunks[c]
		if ch == nil {
			ch = new([pageChunk]uint64)
			s.chunks[c] = ch
		}
		end := min(p1, c*span+span-1)
		for p0 <= end {
			w, lo := (p0%span)/64, uint(p0%64)
			hi := uint(min(end, p0|63) % 64)
			mask := (^uint64(0) >> (63 - hi)) &^ (1<<lo - 1)
			s.n += int64(bits.OnesCount64(mask &^ ch[w]))
			ch[w] |= mask
			p0 += int64(hi-lo) + 1
		}
	}
}
