package programs

import (
	"fmt"
	"testing"
)

// lineBlocks covers a rows×cols matrix in order, each block one contiguous
// range of whole rows or of one row's segment; where a row fills a block's
// threads its blocks are rowSegments', else every block but the last holds
// ⌈threads/cols⌉ whole rows.
func TestThinLineBlocks(t *testing.T) {
	for _, c := range []struct {
		rows, cols int
		threads    int64
	}{
		{1, 1, 256}, {1000, 1, 256}, {1000, 3, 256}, {77, 255, 256}, {77, 256, 256}, {5, 20000, 256},
		{3, 1, 512}, {600, 100, 512}, {600, 512, 512}, {0, 5, 256}, {4, 0, 256},
	} {
		name := fmt.Sprintf("%dx%d/%d", c.rows, c.cols, c.threads)
		nb, at := lineBlocks(c.rows, c.cols, c.threads)
		next := 0
		for i := 0; i < nb; i++ {
			b := at(i)
			if b.rows > 1 && (b.c0 != 0 || b.n != c.cols) {
				t.Fatalf("%s: block %d %+v: several rows, not whole", name, i, b)
			}
			if from := b.r*c.cols + b.c0; from != next || b.elems() <= 0 {
				t.Fatalf("%s: block %d %+v starts at element %d, want %d", name, i, b, from, next)
			}
			next += b.elems()
		}
		if next != c.rows*c.cols {
			t.Fatalf("%s: the blocks cover %d elements, want %d", name, next, c.rows*c.cols)
		}
		if int64(c.cols) >= c.threads {
			ns, seg := rowSegments(c.rows, c.cols)
			if ns != nb {
				t.Fatalf("%s: %d blocks, rowSegments %d", name, nb, ns)
			}
			for i := 0; i < nb; i++ {
				r, c0, n := seg(i)
				if b := at(i); b != (lineBlock{r: r, rows: 1, c0: c0, n: n}) {
					t.Fatalf("%s: block %d %+v, rowSegments' (%d, %d, %d)", name, i, b, r, c0, n)
				}
			}
		} else if c.cols > 0 && c.rows > 0 {
			per := int((c.threads + int64(c.cols) - 1) / int64(c.cols))
			if want := (c.rows + per - 1) / per; nb != want {
				t.Fatalf("%s: %d blocks, want %d of %d rows", name, nb, want, per)
			}
		}
	}
}

// An Ozaki GEMM whose rows of A, B or C are a few elements long runs its
// streaming kernels (scan, slicing or residues, recombination or
// reconstruction) with runs of rows to a block, not a block per row (m =
// 2^20, n = k = 1 on b200 took 2^20 blocks a kernel, 18.9 M events), and
// computes the same C: the simulated result still equals the golden
// model's (check).
func TestThinOzakiStreamBlocks(t *testing.T) {
	const m, kHuge = 4096, 8192
	for _, c := range []struct {
		name   string
		sets   []string
		limits map[string]int // most blocks of each kernel
	}{
		{"tall", []string{"program.m=4096", "program.n=1", "program.k=1"},
			map[string]int{"ozaki/scan": m/256 + 1 + 1, "ozaki/slice-a": m / 256, "ozaki/recombine": m / 256}},
		{"deep", []string{"program.m=3", "program.n=2", "program.k=8192"},
			map[string]int{"ozaki/slice-b": kHuge / 128}},
		{"tall-ii", []string{"program.m=4096", "program.n=1", "program.k=1", "program.method=ozaki-ii", "program.precision="},
			map[string]int{"ozaki2/scan": m/256 + 1, "ozaki2/residues-a": m / 256, "ozaki2/reconstruct": m / 256}},
		{"deep-ii", []string{"program.m=3", "program.n=2", "program.k=8192", "program.method=ozaki-ii", "program.precision="},
			map[string]int{"ozaki2/scan": 3 + kHuge/128, "ozaki2/residues-b": kHuge / 128}},
		{"tall-scaled", []string{"program.m=4096", "program.n=1", "program.k=1", "program.alpha=2", "program.beta=0.5"},
			map[string]int{"ozaki/recombine": m / 256}},
		{"tall-fallback", []string{"program.m=4096", "program.n=1", "program.k=1", "program.precision=dynamic", "program.beta=1"},
			map[string]int{"ozaki/native-epilogue": m / 256}},
	} {
		sets := append([]string{"program.numerics=full", "program.check=true", "program.gemms=grouped"}, c.sets...)
		res, err := runOzaki(t, "b200", sets...)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if res.Failure != nil {
			t.Fatalf("%s: %v", c.name, res.Failure)
		}
		seen := map[string]bool{}
		for _, k := range res.Report.Kernels {
			if most, ok := c.limits[k.Name]; ok {
				seen[k.Name] = true
				if k.Blocks > most {
					t.Errorf("%s: kernel %s has %d blocks, want at most %d", c.name, k.Name, k.Blocks, most)
				}
			}
		}
		for name := range c.limits {
			if !seen[name] {
				t.Errorf("%s: no kernel %s (kernels %v)", c.name, name, phaseNames(t, res))
			}
		}
	}
}
