package sweep

import (
	"context"
	"reflect"
	"sync"

	"github.com/davinci-sim/davinci-sim/programs"
)

// The points a sweep runs at once hold their host memory together: each
// run may take up to the single-run bound (programs refuses numerics past
// 8 GiB), and -j defaults to every CPU, so two large points at once could
// exhaust the machine (Go's "fatal error: out of memory"). Points are
// therefore admitted, in index order, while the host memory estimated for
// the points running stays within a budget (Options.MemoryBudget,
// DefaultMemoryBudget: one run's bound); a point whose estimate alone is
// past the budget runs alone. Which point runs when changes nothing in the
// results: each point's record is its own, and the files are sorted.
//
// The estimate (hostBytes) is the sweep's: package programs computes a
// run's host memory in its builds (asmBudget, checkHostMemory) but does
// not export it. It follows those computations, with bytes per element
// measured by peak RSS (2026-12, this 2-CPU box): hgemm on ascend-910a
// with numerics full 30–42 bytes per element of A, B and C at 1024³–4096³
// (programs bounds it at 16), a100 hgemm 20–28, sgemm-cube 13; sampled
// hgemm 8192³ 6.3 per element of A and B; lu-fused full 36 per element of
// the n×n matrix at n = 4096; an asm program with three 512 MiB FP32
// tensors, read back, 3.0 GiB (its budget's estimate 4 GiB); any run with
// numerics off 25–40 MiB. A program kind the estimate does not know counts
// as the whole budget (it runs alone): conservative.

// DefaultMemoryBudget is the host memory the points running at once may
// hold together by their estimates when Options.MemoryBudget is 0: the
// bound of one run's numerics (8 GiB).
const DefaultMemoryBudget int64 = 8 << 30

// Parts of the estimate of a point's host memory.
const (
	// runBytes is what any run holds besides its data: the Go runtime,
	// the chip model, the program's streams (numerics off: 25–40 MiB).
	runBytes = 48 << 20
	// gemmBytesPerElem is a GEMM's host bytes per element of A, B and C
	// with numerics full (measured up to 42 on DaVinci, 28 on GPUs); the
	// kinds of several products or slices take more (gemmKindBytes).
	gemmBytesPerElem = 44
	// luBytesPerElem is lu-fused's and lu-gemm's host bytes per element of
	// the n×n matrix with numerics full or sampled (measured 36).
	luBytesPerElem = 40
	// largePoint is the estimate from which a point's garbage is collected
	// when it ends, before the next point counts on its memory.
	largePoint = 1 << 30
)

// gemmKindBytes are the host bytes per element of A, B and C of the GEMM
// kinds of several products: programs' own bounds (ozaki 100, measured
// 94; emulated-gemm 32 + 12 per piece, up to six pieces).
var gemmKindBytes = map[string]float64{"ozaki": 100, "emulated-gemm": 104}

// hostBytes estimates the host memory point p's run holds at its peak, in
// bytes (at least runBytes; the budget where the program's kind is not
// known). A point whose program cannot be read or decoded fails at once:
// runBytes.
func (s *Study) hostBytes(p Point, budget int64) int64 {
	paths := s.paths(p)
	f, err := readProgram(paths.program, paths.written)
	if err != nil || f.Kind.Params == nil {
		return runBytes
	}
	params := reflect.New(f.Kind.Params).Interface()
	if err := f.Decode(params, s.runOptions(paths.machine, p)); err != nil {
		return runBytes
	}
	data, ok := dataBytes(f.Kind.Name, params)
	if !ok {
		return max(budget, runBytes)
	}
	return runBytes + int64(min(data, float64(1<<62)))
}

// dataBytes estimates the host bytes a run of kind with params (decoded)
// holds for its data; false for a kind it does not know.
func dataBytes(kind string, params any) (float64, bool) {
	switch p := params.(type) {
	case *programs.AsmParams:
		if p.Numerics == programs.NumericsOff {
			return 0, true
		}
		// As asmBudget: the GM pages of the tensors, the outputs read
		// back, the largest tensor's staging (its float32 values and its
		// bytes; a .npy file of float64 read whole).
		var gm, out, staging float64
		for _, t := range p.GM {
			n, b := arrayElems(t.Array)
			gm += n * b
			st := n * (4 + b)
			if t.Init == "npy" {
				st += 8 * n
			}
			staging = max(staging, st)
		}
		for _, a := range p.Outputs {
			n, b := arrayElems(a)
			out += n * b
		}
		return gm + out + staging, true
	case *programs.GEMMParams:
		return gemmBytes(kind, p), true
	case *programs.EmulatedParams:
		return gemmBytes(kind, &p.GEMMParams), true
	case *programs.OzakiParams:
		return gemmBytes(kind, &p.GEMMParams), true
	case *programs.LUParams:
		return luBytes(p.Numerics, p.N), true
	case *programs.LUGEMMParams:
		return luBytes(p.Numerics, p.M), true
	case *programs.GPUBenchParams:
		return 0, true // (timed only: no data)
	}
	return 0, false
}

// gemmBytes estimates a GEMM's data bytes (dataBytes).
func gemmBytes(kind string, p *programs.GEMMParams) float64 {
	per, ok := gemmKindBytes[kind]
	if !ok {
		per = gemmBytesPerElem
	}
	m, k, n := float64(max(p.M, 0)), float64(max(p.K, 0)), float64(max(p.N, 0))
	switch p.Numerics {
	case "", programs.NumericsFull:
		return (m*k + k*n + m*n) * per
	case programs.NumericsSampled:
		return (m*k + k*n) * per / 4
	}
	return 0
}

// luBytes estimates an LU's data bytes for an n×n matrix (dataBytes).
func luBytes(numerics string, n int) float64 {
	if numerics == programs.NumericsOff {
		return 0
	}
	return float64(max(n, 0)) * float64(max(n, 0)) * luBytesPerElem
}

// arrayElems returns an asm array's elements and bytes per element.
func arrayElems(a programs.Array) (elems, bytes float64) {
	elems = 1
	for _, d := range a.Shape {
		elems *= float64(max(d, 0))
	}
	bytes = 4
	if a.DType == "fp16" {
		bytes = 2
	}
	return elems, bytes
}

// memGate admits points, in turn, while the estimates of those admitted
// and not yet done fit the budget, or when none is (a point past the
// budget alone).
type memGate struct {
	mu     sync.Mutex
	budget int64
	used   int64
	held   int           // points admitted and not done
	next   int           // the sequence number of the point to admit next
	freed  chan struct{} // closed (and replaced) when a point is done or admitted
	// peakUsed and peakHeld are the most held at once (tests).
	peakUsed int64
	peakHeld int
}

// newGate makes runPoints' gate (a variable: tests watch it).
var newGate = newMemGate

func newMemGate(budget int64) *memGate {
	return &memGate{budget: budget, freed: make(chan struct{})}
}

// acquire waits until the points before the one of sequence number seq
// (0, 1, … in the order they are to start) are admitted and a point of
// estimate n fits, and admits it; false when done (ctx, or the dispatch
// stopping) came first.
func (g *memGate) acquire(ctx context.Context, stop <-chan struct{}, seq int, n int64) bool {
	for {
		g.mu.Lock()
		if seq == g.next && (g.held == 0 || g.used+n <= g.budget) {
			g.used += n
			g.held++
			g.next++
			g.peakUsed, g.peakHeld = max(g.peakUsed, g.used), max(g.peakHeld, g.held)
			g.wake() // (the next in turn)
			g.mu.Unlock()
			return true
		}
		freed := g.freed
		g.mu.Unlock()
		select {
		case <-freed:
		case <-ctx.Done():
			return false
		case <-stop:
			return false
		}
	}
}

// release ends an admitted point of estimate n.
func (g *memGate) release(n int64) {
	g.mu.Lock()
	g.used -= n
	g.held--
	g.wake()
	g.mu.Unlock()
}

// wake wakes the points waiting (g.mu held).
func (g *memGate) wake() {
	close(g.freed)
	g.freed = make(chan struct{})
}
