package programs

import (
	"slices"
	"testing"
	"time"
)

// The chunks a core's split and combine passes handle, yielded as asked
// for, are those of the list the passes were written with: every array
// cut into splitChunk elements, all the chunks dealt round-robin to the
// cores in order (listed here by brute force), with chunkCount their
// number.
func TestChunksDealtRoundRobin(t *testing.T) {
	for _, c := range []struct {
		cores, chunk int
		lens         []int64
	}{
		{1, 4, []int64{10}}, {3, 4, []int64{10, 7}}, {32, 64, []int64{1000, 64, 1}}, {5, 7, []int64{0, 35, 36}},
		{4, 16, []int64{16 * 4 * 3, 16*4*3 + 1}}, {30, 1024, []int64{100, 100}},
	} {
		pl := &gemmPlan{ncores: c.cores, splitChunk: c.chunk}
		var all []chunkJob
		for w, l := range c.lens {
			for off := int64(0); off < l; off += int64(c.chunk) {
				all = append(all, chunkJob{src: off, n: min(int64(c.chunk), l-off), which: w})
			}
		}
		for core := range c.cores {
			var want []chunkJob
			for i, j := range all {
				if i%c.cores == core {
					want = append(want, j)
				}
			}
			var got []chunkJob
			for i, j := range pl.chunks(core, c.lens...) {
				if i != len(got) {
					t.Fatalf("%+v core %d: index %d for chunk %d", c, core, i, len(got))
				}
				got = append(got, j)
			}
			if !slices.Equal(got, want) {
				t.Errorf("%+v core %d: chunks %v, want %v", c, core, got, want)
			}
			if n := pl.chunkCount(core, c.lens...); n != int64(len(want)) {
				t.Errorf("%+v core %d: chunkCount %d, want %d", c, core, n, len(want))
			}
		}
	}
}

// A 2^20-cubed GEMM's chunks are not listed before the first is handled:
// the first of core 31's comes at once, without the (M·K + K·N)/64/32 =
// 2^30 entries a list held.
func TestChunksLazy(t *testing.T) {
	pl := &gemmPlan{ncores: 32, splitChunk: 64}
	const n = int64(1) << 40
	for i, j := range pl.chunks(31, n, n) {
		if i != 0 || j != (chunkJob{src: 31 * 64, n: 64}) {
			t.Errorf("first chunk %d %+v", i, j)
		}
		break
	}
	if got := pl.chunkCount(31, n, n); got != 2*n/64/32 {
		t.Errorf("chunkCount %d, want %d", got, 2*n/64/32)
	}
}

// A consumer that stops reading a core's stream (a run interrupted, the
// fuzzer's bounded walk) ends its generation at once: the split and
// combine passes asked the emitter only in their GEMM loops, so a closed
// 32768³ SGEMM-cube run went on generating its chunks for half a minute
// after SIGTERM (2^30 chunks a core at 2^20-cubed: for ever).
func TestSplitStreamStopsWhenClosed(t *testing.T) {
	job := buildJob(t, "examples/sgemm-cube.yaml", Options{Numerics: NumericsOff, Overrides: mustSets(t,
		"machine.gm.capacity=48TiB", "machine.l2.line_bytes=1024", "program.m=1048576", "program.n=1048576", "program.k=1048576", "program.split_chunk=64")})
	done := make(chan int)
	go func() {
		n := 0
		for range job.Program().Cores[0] {
			if n++; n == 100 {
				break
			}
		}
		done <- n
	}()
	select {
	case n := <-done:
		if n != 100 {
			t.Errorf("the stream ended after %d instructions", n)
		}
	case <-time.After(time.Minute): // (milliseconds when it stops; hours when it does not)
		t.Fatal("core 0's stream kept generating after its consumer stopped")
	}
}
