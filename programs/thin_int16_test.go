package programs

import (
	"fmt"
	"testing"

	"github.com/davinci-sim/davinci-sim/isa"
	"github.com/davinci-sim/davinci-sim/machines"
)

// ape-int16's split and recombination blocks cover A and B (the split) or
// C (the recombination) in order, each one contiguous range whose reads,
// writes and work are its elements'; rows shorter than a block's threads
// go ⌈threads/cols⌉ whole rows to a block, not one each, and rows of at
// least a block's threads keep their row segments of at most chunk.
func TestThinInt16Blocks(t *testing.T) {
	for _, c := range []struct {
		m, k, n, chunk int
		threads        int64
	}{
		{1 << 14, 1, 1, streamChunk, 256}, {3, 5000, 2, streamChunk, 256}, {1, 1, 9000, streamChunk, 256},
		{70, 300, 40, 2048, 64}, {1000, 3, 7, 8192, 64}, {5, 20000, 300, streamChunk, 256},
	} {
		name := fmt.Sprintf("%dx%dx%d/%d/%d", c.m, c.k, c.n, c.chunk, c.threads)
		j := &int16Job{p: GEMMParams{M: c.m, K: c.k, N: c.n}}
		j.gmA16, j.gmB16, j.gmAh, j.gmAl, j.gmBh, j.gmBl = 1<<40, 2<<40, 3<<40, 4<<40, 5<<40, 6<<40
		j.gmSumA, j.gmSumB, j.gmPlanes, j.gmC = 7<<40, 8<<40, 9<<40, 10<<40
		blocksOf := func(rows, cols int) int { // the blocks a rows×cols matrix wants
			if int64(cols) >= c.threads {
				return rows * ((cols + c.chunk - 1) / c.chunk)
			}
			per := int((c.threads + int64(cols) - 1) / int64(cols))
			return (rows + per - 1) / per
		}
		nb, at := j.splitBlocks(c.chunk, c.threads)
		if want := blocksOf(c.m, c.k) + blocksOf(c.k, c.n); nb != want {
			t.Errorf("%s: %d split blocks, want %d", name, nb, want)
		}
		next := map[int64]int64{j.gmA16: j.gmA16, j.gmB16: j.gmB16}
		for i := 0; i < nb; i++ {
			b := at(i)
			src := j.gmA16
			if b.reads[0].addr >= j.gmB16 {
				src = j.gmB16
			}
			if r := b.reads[0]; r.addr != next[src] || r.bytes != 2*int64(b.elems) || b.elems <= 0 || b.elems > c.chunk {
				t.Fatalf("%s: split block %d reads %+v (%d elements), want from %#x", name, i, r, b.elems, next[src])
			}
			next[src] += 2 * int64(b.elems)
			if b.work[0].n != int16SplitOps*b.elems || b.writes[0].bytes != int64(b.elems) || b.writes[1].bytes != int64(b.elems) {
				t.Fatalf("%s: split block %d: %+v", name, i, b)
			}
		}
		if next[j.gmA16] != j.gmA16+2*int64(c.m*c.k) || next[j.gmB16] != j.gmB16+2*int64(c.k*c.n) {
			t.Errorf("%s: the split covers %#x of A, %#x of B", name, next[j.gmA16]-j.gmA16, next[j.gmB16]-j.gmB16)
		}
		nb, at = j.recombineBlocks(c.chunk, c.threads)
		if want := blocksOf(c.m, c.n); nb != want {
			t.Errorf("%s: %d recombination blocks, want %d", name, nb, want)
		}
		elems := 0
		for i := 0; i < nb; i++ {
			b := at(i)
			r0, c0 := elems/c.n, elems%c.n
			rows := (c0 + b.elems + c.n - 1) / c.n // the rows of C it touches
			if w := b.writes[0]; w.addr != j.gmC+8*int64(elems) || w.bytes != 8*int64(b.elems) || b.elems > c.chunk {
				t.Fatalf("%s: recombination block %d writes %+v (%d elements), want from element %d", name, i, w, b.elems, elems)
			}
			sa, sb := b.reads[4], b.reads[5]
			if sa.addr != j.gmSumA+8*int64(r0) || sa.bytes != 8*int64(rows) {
				t.Fatalf("%s: recombination block %d reads A's sums %+v, want rows %d…%d", name, i, sa, r0, r0+rows-1)
			}
			if cols := min(c.n, b.elems); sb.addr != j.gmSumB+8*int64(c0) || sb.bytes != 8*int64(cols) {
				t.Fatalf("%s: recombination block %d reads B's sums %+v, want columns %d…%d", name, i, sb, c0, c0+cols-1)
			}
			elems += b.elems
		}
		if elems != c.m*c.n {
			t.Errorf("%s: the recombination covers %d elements, want %d", name, elems, c.m*c.n)
		}
	}
}

// ape-int16 with a 1-wide dimension on GPUs (A100, MI210) runs its split
// and recombination with runs of rows to a block — m = 2^20, n = k = 1 on
// A100 took a block per element in each (2^20 + 1 and 2^20 blocks, 34.7 M
// events) — and still computes C bit for bit (check).
func TestThinInt16GPUBlocks(t *testing.T) {
	const m, deep = 4096, 8192
	for _, c := range []struct {
		machine string
		sets    []string
		limits  map[string]int // most blocks of each kernel
	}{
		{"a100", []string{"program.m=4096", "program.n=1", "program.k=1"},
			map[string]int{"emulated-gemm/split": m/256 + 1, "emulated-gemm/recombine": m / 256}},
		{"a100", []string{"program.m=3", "program.n=2", "program.k=8192"},
			map[string]int{"emulated-gemm/split": 3 + deep/128, "emulated-gemm/recombine": 1}},
		{"mi210", []string{"program.m=4096", "program.n=3", "program.k=2"}, // 64-thread wavefronts: 512 threads
			map[string]int{"emulated-gemm/split": m/256 + 1, "emulated-gemm/recombine": m/171 + 1}},
	} {
		sets := append([]string{"program.scheme=ape-int16", "program.numerics=full", "program.check=true"}, c.sets...)
		label := fmt.Sprintf("%s %v", c.machine, c.sets)
		res, err := runEmulated(t, c.machine, sets...)
		if err != nil || res.Failure != nil {
			t.Fatalf("%s: %v %v", label, err, res.Failure)
		}
		if e := res.Report.Error; e == nil || e.MaxErr != 0 {
			t.Errorf("%s: error %+v", label, e)
		}
		assertChecked(t, label, res)
		seen := map[string]bool{}
		for _, k := range res.Report.Kernels {
			if most, ok := c.limits[k.Name]; ok {
				seen[k.Name] = true
				if k.Blocks > most {
					t.Errorf("%s: kernel %s has %d blocks, want at most %d", label, k.Name, k.Blocks, most)
				}
			}
		}
		for name := range c.limits {
			if !seen[name] {
				t.Errorf("%s: no kernel %s (kernels %v)", label, name, phaseNames(t, res))
			}
		}
	}
}

// ape-int16 with a 1-wide dimension on the 910A: the split and the
// recombination passes take ⌈64/cols⌉ rows to a block (an INT32 vector
// repeat's lanes), each block one GM→UB copy per span and one vector
// instruction per operation over all its elements; C is still exact
// (check) and the streams pass the static check.
func TestThinInt16DaVinciBlocks(t *testing.T) {
	const m = 4096
	sets := []string{"program.scheme=ape-int16", "program.m=4096", "program.n=1", "program.k=1", "program.numerics=full", "program.check=true"}
	res, err := runEmulated(t, "ascend-910a", sets...)
	if err != nil || res.Failure != nil {
		t.Fatalf("%v %v", err, res.Failure)
	}
	if e := res.Report.Error; e == nil || e.MaxErr != 0 || e.Elements != m {
		t.Errorf("error %+v", e)
	}
	assertChecked(t, "ascend-910a thin", res)
	o := Options{Machine: "ascend-910a", Overrides: mustSets(t, sets...)}
	f := mustRead(t, "examples/a100-emulated-gemm.yaml")
	if err := staticCheck(t, f, o); err != nil {
		t.Errorf("static check: %v", err)
	}
	mach, err := machines.Load(o.Machine, o.Overrides)
	if err != nil {
		t.Fatal(err)
	}
	job, err := f.Kind.Build(f, mach, o)
	if err != nil {
		t.Fatal(err)
	}
	// The split's and the recombination's stores (UB→GM on MTE3, before
	// the first sync_all and after the last) and vector instructions.
	var splitStores, recStores, splitVec, recVec int
	for _, core := range job.Program().Cores {
		syncs := 0
		for in := range core {
			if in.Op == isa.OpSyncAll {
				syncs++
				continue
			}
			switch {
			case syncs == 0 && in.Op == isa.OpCopy && in.Pipe == isa.MTE3:
				splitStores++
			case syncs == 0 && in.Op == isa.OpVector:
				splitVec++
			case syncs == 2 && in.Op == isa.OpCopy && in.Pipe == isa.MTE3:
				recStores++
			case syncs == 2 && in.Op == isa.OpVector:
				recVec++
			}
		}
	}
	// A: 4096 rows of 1 in 64 blocks; B: 1 row of 1 in one; two stores
	// (the pieces) and int16SplitOps instructions a block. C: 64 blocks,
	// one store and int16RecombineOps instructions each.
	if want := 2 * (m/64 + 1); splitStores != want {
		t.Errorf("split: %d stores, want %d (%d blocks)", splitStores, want, m/64+1)
	}
	if want := int16SplitOps * (m/64 + 1); splitVec != want {
		t.Errorf("split: %d vector instructions, want %d", splitVec, want)
	}
	if want := m / 64; recStores != want {
		t.Errorf("recombination: %d stores, want %d blocks", recStores, want)
	}
	if want := int16RecombineOps * m / 64; recVec != want {
		t.Errorf("recombination: %d vector instructions, want %d", recVec, want)
	}
}
