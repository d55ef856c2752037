package arch

import (
	"iter"
	"sync"

	"github.com/davinci-sim/davinci-sim/isa"
)

// StreamReader reads a core's instruction stream in chunks: iter.Pull costs
// a coroutine switch per value, so a core pulls chunkLen instructions at a
// time and takes them one by one with Next.
type StreamReader struct {
	pull  func() ([]isa.Instr, bool)
	stop  func()
	chunk []isa.Instr // pulled, not yet taken
	at    int
	buf   []isa.Instr // the chunks' backing array, reused by the next stream
	// Read ahead (StartAhead): the stream's feed (chunk, if not nil, is
	// one of its slots) and the slots' backing array, reused by the next.
	feed *feed
	ring []isa.Instr
}

// chunkLen is the number of instructions pulled from a stream at a time:
// enough to spread a coroutine switch over many, few enough that a GPU's
// resident CTAs' chunks stay in the host's caches between the generator's
// writing an instruction and the issue unit's reading it (32 × 232 bytes a
// stream; at 256, GB200's 148 SMs' chunks were ~10–20 MB, and 16 is worse
// again: `.ci/pair-speed`, 2026-11-25 — 256 → 32: GB200 ozaki 4096³ −7 %,
// A100 ape-fp32b 4096³ −8 %, MI210 sgemm-cube 4096³ −7 %, A100 native
// SGEMM −7 %, DaVinci SGEMM-cube 8192³ and LU 32k unchanged).
const chunkLen = 32

// Start begins reading s (closing the stream read before).
func (r *StreamReader) Start(s isa.Stream) {
	r.StartAhead(s, nil)
}

// StartAhead begins reading s with its chunks generated ahead by a (as
// Start where a is nil).
func (r *StreamReader) StartAhead(s isa.Stream, a *Ahead) {
	r.Close()
	r.chunk, r.at = nil, 0
	if a != nil {
		r.startAhead(s, a)
		return
	}
	if cap(r.buf) < chunkLen {
		r.buf = takeInstrs(&chunkPool, chunkLen)[:0]
	}
	r.pull, r.stop = iter.Pull(chunks(s, &r.buf))
}

// Next returns the next instruction, or nil at the end of the stream; the
// pointer is valid until the following call.
func (r *StreamReader) Next() *isa.Instr {
	if r.at < len(r.chunk) {
		r.at++
		return &r.chunk[r.at-1]
	}
	return r.refill()
}

// refill pulls the next chunk and returns its first instruction (nil at the
// end of the stream). Kept out of line so that Next inlines into a core's
// issue loop.
//
//go:noinline
func (r *StreamReader) refill() *isa.Instr {
	if r.feed != nil {
		return r.refillAhead()
	}
	if r.pull == nil { // (closed, or never started)
		return nil
	}
	ch, ok := r.pull()
	if !ok || len(ch) == 0 {
		return nil
	}
	r.chunk, r.at = ch, 1
	return &ch[0]
}

// Release closes the stream and gives the reader's buffers back for the
// next reader to start (chunkPool, ringPool): a core that reads nothing
// more calls it — a DaVinci core once its chip has finalized, whose
// chips, one a kernel timed apart, each built a reader and its 8 KiB
// chunk buffer for every core (an LU node's kernels timed apart at n =
// 32768: 0.3 GB allocated).
func (r *StreamReader) Release() {
	r.Close()
	if r.buf != nil {
		b := r.buf[:cap(r.buf)]
		chunkPool.Put(&b)
		r.buf = nil
	}
	if r.ring != nil {
		g := r.ring // (not &r.ring: the pool would hold the field, emptied below)
		ringPool.Put(&g)
		r.ring = nil
	}
}

// chunkPool and ringPool hold *[]isa.Instr released by readers
// (Release): chunk buffers and read-ahead rings, shared by the chips
// simulated at once.
var chunkPool, ringPool sync.Pool

// takeInstrs returns a released buffer of pool of n instructions, or a
// new one.
func takeInstrs(pool *sync.Pool, n int) []isa.Instr {
	if v, ok := pool.Get().(*[]isa.Instr); ok && len(*v) == n {
		return *v
	}
	return make([]isa.Instr, n)
}

// Close releases the stream.
func (r *StreamReader) Close() {
	r.chunk, r.at = nil, 0
	if r.feed != nil {
		r.closeAhead()
	}
	if r.stop != nil {
		r.stop()
		r.stop = nil
	}
}

// chunks turns a stream into a stream of chunks of up to chunkLen
// instructions, each written into *dst's backing array as it is when the
// chunk begins (of capacity chunkLen at least): the consumer must be done
// with a chunk before it pulls the next into the same array, and a reader
// passes an array to the next stream only after stopping this one.
func chunks(s isa.Stream, dst *[]isa.Instr) iter.Seq[[]isa.Instr] {
	return func(yield func([]isa.Instr) bool) {
		buf := (*dst)[:0]
		ok := true
		s(func(in isa.Instr) bool {
			buf = append(buf, in)
			if len(buf) == chunkLen {
				ok = yield(buf)
				buf = (*dst)[:0]
			}
			return ok
		})
		if ok && len(buf) > 0 {
			yield(buf)
		}
	}
}
