package programs

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/davinci-sim/davinci-sim/accuracy"
	"github.com/davinci-sim/davinci-sim/arch"
	"github.com/davinci-sim/davinci-sim/fp"
	"github.com/davinci-sim/davinci-sim/isa"
	"github.com/davinci-sim/davinci-sim/machines"
	"github.com/davinci-sim/davinci-sim/report"
	"github.com/davinci-sim/davinci-sim/stopwork"
)

// scheme: ape-int16 — Ape's emulated INT16 GEMM (§4.4): each INT16 split
// by byte order into a high and a low INT8 piece, the four piece products
// (hh, hl, lh, ll) as INT8 GEMMs with exact INT32 accumulation on the
// matrix units, and an exact recombination.
//
// Types: A (m×k) and B (k×n) are INT16, drawn uniformly from the whole
// range [−32768, 32767] (inputs.seed; row-major streams 1 and 2, as
// igemm's INT8 inputs). C is the exact product A·B, an INT64 (|C| ≤
// k·2^30 < 2^47): written as C.npy in float64, which holds these integers
// exactly. The golden model is the exact product in 64-bit integers.
//
// The split: hi = x >> 8 (the signed high byte, −128..127) and
// lo = (x & 0xff) − 128 (the low byte with its top bit flipped, read as a
// signed INT8). The simulated matrix units take signed INT8 only (NVIDIA's
// u8×s8 IMMA forms, which would take the low byte unsigned as Ape's CUDA
// code can, are not modelled); so x = 256·hi + lo + 128 and
//
//	A·B = 2^16·HH + 2^8·(HL + LH) + LL + 128·(ra_i + cb_j) + 2^14·k
//
// with ra_i = Σ_k (a_ik − 128), cb_j = Σ_k (b_kj − 128) the row sums of
// A and column sums of B less the bias, computed by the split kernel.
// Each product GEMM's INT32 accumulator is exact while k·2^14 < 2^31:
// k ≤ 131071, checked (bad input beyond).

// int16MaxK is the largest k whose piece products cannot leave INT32:
// |Σ_k hi·hi'| ≤ k·128·128.
const int16MaxK = (math.MaxInt32) / (128 * 128)

// Operation counts per element of the streaming kernels (INT32 ALU
// operations; an INT64 addition or shift counts two). split: a shift, an
// and, an xor, two narrowing moves, and the bias-free sum's INT64 addition.
// recombine: four sign extensions, the INT64 shifts and additions of the
// formula above (nine, two operations each).
const (
	int16SplitOps     = 7
	int16RecombineOps = 4 + 2*9
)

// int16Job runs an ape-int16 GEMM on a GPU machine (four product kernels
// between the split and recombination kernels) or a DaVinci machine (the
// four product GEMMs as passes of one INT8 cube plan, between the split and
// recombination passes on the vector unit: emulated_int16_davinci.go).
type int16Job struct {
	runContext // Finish's golden model and exact product stop with the run
	file       string
	p          GEMMParams
	// GPU machines: the target and the product kernels hh, hl, lh, ll.
	tg      *gpuTarget
	kernels []*gpuGEMMPlan
	// DaVinci machines: the product GEMMs hh, hl, lh, ll, one pass each.
	dv *gemmPlan
	// Global memory: the INT16 inputs, the pieces, the sums, the four INT32
	// planes and C (INT64).
	gmA16, gmB16   int64
	gmAh, gmAl     int64
	gmBh, gmBl     int64
	gmSumA, gmSumB int64
	gmPlanes, gmC  int64
	a, b           []int16
	aH, aL, bH, bL []int8
	sumA, sumB     []int64
	outs           []Output
}

// int16Products are the four piece products in kernel order: (A piece, B
// piece) with 0 = hi, 1 = lo, and the weight exponent of each.
var int16Products = [4]struct {
	name   string
	a, b   int
	weight int
}{{"hh", 0, 0, 16}, {"hl", 0, 1, 8}, {"lh", 1, 0, 8}, {"ll", 1, 1, 0}}

// splitInt16 returns x's high and low (biased) INT8 pieces.
func splitInt16(x int16) (hi, lo int8) {
	return int8(x >> 8), int8(uint8(x) ^ 0x80)
}

// genInt16 draws n INT16 values uniformly from [−32768, 32767] (seeded
// stream which), asking stop (nil: never) every stopwork.Every values:
// nil once it says true.
func genInt16(seed int64, which uint64, n int, stop func() bool) []int16 {
	rng := NewRand(seed, which<<32)
	out := make([]int16, n)
	for i := range out {
		if i%stopwork.Every == 0 && stop != nil && stop() { // (before the first value, then every stopwork.Every)
			return nil
		}
		out[i] = int16(rng.IntN(1<<16) - 1<<15)
	}
	return out
}

func buildEmulatedInt16(f *File, m *machines.Machine, o Options, ep EmulatedParams, bad func(key, format string, a ...any) error) (Job, error) {
	p := ep.GEMMParams
	o.applyGEMM(f, &p)
	if ep.TargetBits != 0 {
		return nil, bad("target_bits", "applies to scheme: auto")
	}
	if ep.HistogramBins != 0 {
		return nil, bad("histogram_bins", "applies to the FP32 emulations (the error histogram is against a CPU FP32 SGEMM); not to scheme ape-int16")
	}
	if f.Config.Viper().IsSet("baselines") {
		return nil, bad("baselines", "applies to the FP32 emulations (a CPU FP32 SGEMM beside them); scheme ape-int16's error is against the exact INT16 product")
	}
	tg, gpu := newGPUTarget(m)
	align := int64(512)
	switch {
	case gpu:
		if !tg.hasMatrix(fp.INT8) {
			return nil, limitedBy(bad("scheme", "ape-int16 needs INT8 %s; %s has none", tg.units, tg.describe()), matrixFrom(m, fp.INT8)...)
		}
		if key := p.derivedKindKey(f); key != "" {
			return nil, bad(key, "does not apply to emulated-gemm's ape-int16 scheme on %s (%s)", m.Name, m.Kind)
		}
		if err := p.gpuDefaults(f.Path); err != nil {
			return nil, err
		}
	case m.DaVinci() != nil:
		if err := int16DaVinciParams(f, m, &p, bad); err != nil {
			return nil, err
		}
		align = 4096
	default:
		return nil, bad("scheme", "ape-int16 is generated for GPU machines (nvidia-sm, amd-cu) and DaVinci machines; machine %s is %s", m.Name, m.Kind)
	}
	if p.K > int16MaxK {
		return nil, bad("k", "ape-int16's INT32 accumulators hold the piece products exactly up to k = %d (k·2^14 < 2^31) (got %d)", int16MaxK, p.K)
	}
	if p.SampleTiles < 1 {
		return nil, bad("sample_tiles", "must be ≥ 1 (got %d)", p.SampleTiles)
	}
	if p.Inputs.A != "" || p.Inputs.B != "" {
		return nil, bad("inputs.a", "ape-int16 draws its INT16 inputs (inputs.seed); .npy inputs are not read")
	}
	// The FP32 schemes' input range does not apply (the examples' default,
	// uniform over [−1, 1], passes: a --set scheme=ape-int16 on them runs).
	if key := p.Inputs.rangeGiven(); key != "" {
		return nil, bad(key, "ape-int16 draws its INT16 inputs uniformly over [−32768, 32767] (inputs.seed); the FP32 schemes' input range does not apply")
	}
	// The run's estimate: its data's bytes per element ape-int16's
	// (emulatedPerElem).
	if err := p.checkHostMemory(f.Path); err != nil {
		return nil, err
	}
	j := &int16Job{file: f.Path, p: p, tg: tg}
	mk, kn, mn := int64(p.M)*int64(p.K), int64(p.K)*int64(p.N), int64(p.M)*int64(p.N)
	at := int64(0)
	next := func(bytes int64) int64 {
		a := at
		at = (at + bytes + align - 1) &^ (align - 1)
		return a
	}
	j.gmA16, j.gmB16 = next(2*mk), next(2*kn)
	j.gmAh, j.gmAl, j.gmBh, j.gmBl = next(mk), next(mk), next(kn), next(kn)
	j.gmSumA, j.gmSumB = next(8*int64(p.M)), next(8*int64(p.N))
	j.gmPlanes = next(4 * 4 * mn)
	j.gmC = next(8 * mn)
	if at > int64(m.GM.Capacity) {
		return nil, limitedBy(bad("m", "INT16 A and B, their pieces, four INT32 planes and the INT64 C need %d bytes of global memory; machine %s has %d (gm.capacity)", at, m.Name, int64(m.GM.Capacity)), "machine.gm.capacity")
	}
	pieceA, pieceB := [2]int64{j.gmAh, j.gmAl}, [2]int64{j.gmBh, j.gmBl}
	if gpu {
		for x, pr := range int16Products {
			pl, err := newGPUGEMMPlan(f.Path, p, m, fp.INT8, gpuShape{})
			if err != nil {
				return nil, err
			}
			pl.ops = &gpuOperands{name: p.Kind + "/" + pr.name, gmA: []int64{pieceA[pr.a]}, gmB: []int64{pieceB[pr.b]},
				mmas: []gpuProduct{{first: true}}, accs: []gpuAcc{{}}}
			pl.gmC = j.gmPlanes + int64(x)*4*mn
			j.kernels = append(j.kernels, pl)
		}
	} else {
		var passes []gemmPass
		for x, pr := range int16Products {
			passes = append(passes, singlePass(pr.name, pieceA[pr.a], pieceB[pr.b], j.gmPlanes+int64(x)*4*mn))
		}
		var err error
		if j.dv, err = newDaVinciInt8Plan(f.Path, p, m, int64(p.K), passes); err != nil {
			return nil, err
		}
	}
	if p.Numerics != NumericsOff {
		stop := o.stop()
		if j.a = genInt16(p.Inputs.Seed, 1, p.M*p.K, stop); j.a != nil {
			j.b = genInt16(p.Inputs.Seed, 2, p.K*p.N, stop)
		}
		if j.b == nil {
			return nil, o.stoppedBuilding(f.Path, "drawing the inputs")
		}
		j.aH, j.aL = splitAll16(j.a)
		j.bH, j.bL = splitAll16(j.b)
		j.sumA, j.sumB = make([]int64, p.M), make([]int64, p.N)
		for i := 0; i < p.M; i++ {
			for x := 0; x < p.K; x++ {
				j.sumA[i] += int64(j.a[i*p.K+x]) - 128
			}
		}
		for x := 0; x < p.K; x++ {
			for c := 0; c < p.N; c++ {
				j.sumB[c] += int64(j.b[x*p.N+c]) - 128
			}
		}
	}
	return j, nil
}

// splitAll16 returns the high and low pieces of every element of x.
func splitAll16(x []int16) (hi, lo []int8) {
	hi, lo = make([]int8, len(x)), make([]int8, len(x))
	for i, v := range x {
		hi[i], lo[i] = splitInt16(v)
	}
	return hi, lo
}

// splitBlocks are the split's blocks: row segments of A, then of B, of at
// most chunk elements — runs of whole rows where a row is shorter than a
// block's threads (lineBlocksOf: a 1-wide A or B took a block per element)
// —, each read as INT16, each element's two pieces stored, the bias-free
// sums accumulated (A's per row, B's per column: INT64 atomic additions of
// each block's partial sums, whose m + n values of traffic are not
// modelled).
func (j *int16Job) splitBlocks(chunk int, threads int64) (int, func(i int) streamBlock) {
	p := &j.p
	nA, segA := lineBlocksOf(p.M, p.K, chunk, threads)
	nB, segB := lineBlocksOf(p.K, p.N, chunk, threads)
	return nA + nB, func(i int) streamBlock {
		src, hi, lo, cols, seg := j.gmA16, j.gmAh, j.gmAl, int64(p.K), segA
		if i >= nA {
			i -= nA
			src, hi, lo, cols, seg = j.gmB16, j.gmBh, j.gmBl, int64(p.N), segB
		}
		sg := seg(i)
		at, n := int64(sg.r)*cols+int64(sg.c0), sg.elems()
		return streamBlock{reads: []gmSpan{{src + 2*at, 2 * int64(n)}},
			writes: []gmSpan{{hi + at, int64(n)}, {lo + at, int64(n)}},
			work:   []vecWork{{int16SplitOps * n, fp.INT32}}, elems: n}
	}
}

// recombineBlocks are the recombination's blocks: C's row segments of at
// most chunk elements, or runs of whole rows shorter than a block's
// threads (lineBlocksOf), from the four planes and the sums, stored as
// INT64.
func (j *int16Job) recombineBlocks(chunk int, threads int64) (int, func(i int) streamBlock) {
	p := &j.p
	nC, seg := lineBlocksOf(p.M, p.N, chunk, threads)
	mn := int64(p.M) * int64(p.N)
	return nC, func(i int) streamBlock {
		sg := seg(i)
		at, n := int64(sg.r)*int64(p.N)+int64(sg.c0), sg.elems()
		var reads []gmSpan
		for x := range int16Products {
			reads = append(reads, gmSpan{j.gmPlanes + int64(x)*4*mn + 4*at, 4 * int64(n)})
		}
		reads = append(reads, gmSpan{j.gmSumA + 8*int64(sg.r), 8 * int64(sg.rows)}, gmSpan{j.gmSumB + 8*int64(sg.c0), 8 * int64(sg.n)})
		return streamBlock{reads: reads, writes: []gmSpan{{j.gmC + 8*at, 8 * int64(n)}},
			work: []vecWork{{int16RecombineOps * n, fp.INT32}}, elems: n}
	}
}

func (j *int16Job) Program() isa.Program {
	if j.dv != nil {
		return j.daVinciProgram()
	}
	threads := j.tg.threads(streamWarps)
	n, at := j.splitBlocks(streamChunk, threads)
	grids := []isa.Grid{streamGrid(j.tg, j.p.Kind+"/split", n, at)}
	for _, kp := range j.kernels {
		grids = append(grids, kp.grid())
	}
	n, at = j.recombineBlocks(streamChunk, threads)
	grids = append(grids, streamGrid(j.tg, j.p.Kind+"/recombine", n, at))
	return isa.Program{Name: j.p.Kind, Generated: true, Grids: grids}
}

func (j *int16Job) Mode() arch.Mode { return modeFor(j.p.Numerics) }

// Prepare writes the INT16 inputs and what the split kernel (timing only)
// computes: the pieces and the sums.
func (j *int16Job) Prepare(chip *arch.Chip) error {
	if j.Mode() != arch.Functional {
		return nil
	}
	gm := chip.GM()
	i16 := func(v []int16) []byte {
		out := make([]byte, 2*len(v))
		for i, x := range v {
			binary.LittleEndian.PutUint16(out[2*i:], uint16(x))
		}
		return out
	}
	i64 := func(v []int64) []byte {
		out := make([]byte, 8*len(v))
		for i, x := range v {
			binary.LittleEndian.PutUint64(out[8*i:], uint64(x))
		}
		return out
	}
	for _, w := range []struct {
		addr int64
		data []byte
	}{{j.gmA16, i16(j.a)}, {j.gmB16, i16(j.b)}, {j.gmAh, int8Bytes(j.aH)}, {j.gmAl, int8Bytes(j.aL)},
		{j.gmBh, int8Bytes(j.bH)}, {j.gmBl, int8Bytes(j.bL)}, {j.gmSumA, i64(j.sumA)}, {j.gmSumB, i64(j.sumB)}} {
		if err := gm.Write(w.addr, w.data); err != nil {
			return err
		}
	}
	return nil
}

func (j *int16Job) Outputs() []Output { return j.outs }

// recombine is the recombination of one element from its four INT32
// products and the sums (exact in INT64).
func (j *int16Job) recombine(planes [4]int32, i, c int) int64 {
	v := int64(planes[0])<<16 + (int64(planes[1])+int64(planes[2]))<<8 + int64(planes[3])
	return v + 128*(j.sumA[i]+j.sumB[c]) + 16384*int64(j.p.K)
}

// goldenPlanes are the four piece products of tile (r0, c0) as the INT8
// GEMMs compute them: exact sums wrapped to INT32. It asks st before each
// row of a plane: nil once it says stop.
func (j *int16Job) goldenPlanes(r0, mm, c0, nn int, st *stopwork.Stopper) [][4]int32 {
	p := &j.p
	pa, pb := [2][]int8{j.aH, j.aL}, [2][]int8{j.bH, j.bL}
	out := make([][4]int32, mm*nn)
	for x, pr := range int16Products {
		a, b := pa[pr.a], pb[pr.b]
		for i := 0; i < mm; i++ {
			if st.StopBefore(nn * p.K) {
				return nil
			}
			for c := 0; c < nn; c++ {
				var s int32
				for q := 0; q < p.K; q++ {
					s += int32(a[(r0+i)*p.K+q]) * int32(b[q*p.N+c0+c])
				}
				out[i*nn+c][x] = s
			}
		}
	}
	return out
}

// exact is element (i, c) of the exact product of the INT16 inputs.
func (j *int16Job) exact(i, c int) int64 {
	p := &j.p
	var s int64
	for q := 0; q < p.K; q++ {
		s += int64(j.a[i*p.K+q]) * int64(j.b[q*p.N+c])
	}
	return s
}

func (j *int16Job) Finish(chip *arch.Chip, st *arch.Stats, rep *report.Report) error {
	p := &j.p
	flops := 2 * float64(p.M) * float64(p.N) * float64(p.K)
	rep.Program = map[string]any{"kind": p.Kind, "m": p.M, "k": p.K, "n": p.N, "scheme": "ape-int16",
		"split_rule": "hi = x >> 8, lo = (x & 0xff) − 128 (INT8)", "products": "square", // hh, hl, lh, ll (ozaki's name for every piece pair)
		"inputs": map[string]any{"type": "int16", "range": "[−32768, 32767]", "seed": p.Inputs.Seed},
		"output": "int64 (exact)", "numerics": p.Numerics}
	// The output tiles of the product GEMMs (the golden model's unit).
	var bm, bn, nrb, ncb int
	if j.dv != nil {
		j.daVinciReport(chip, st, rep, flops)
		bm, bn, nrb, ncb = j.dv.bm, j.dv.bn, j.dv.nrb, j.dv.ncb
	} else {
		tg := j.tg
		name := tg.matrixPeak[fp.INT8]
		peak, _ := chip.M.Peak(name)
		reportThroughput(rep, st, flops, peak/4, fmt.Sprintf("int16 ops (2mnk; peak = dense %s %s peak / 4 products)", name, tg.matrix))
		var kernels []map[string]any
		for _, kp := range j.kernels {
			kernels = append(kernels, map[string]any{"name": kp.name(), "ctas": kp.nrb * kp.ncb,
				"tiling": kp.tilingReport()})
		}
		rep.Program["product_kernels"] = kernels
		rep.Notes = append(rep.Notes, fmt.Sprintf("ape-int16: the split (%d INT32 operations per element) and the recombination (%d per element) are timing-only kernels on the %s units; the product GEMMs run on the %s", int16SplitOps, int16RecombineOps, tg.vector, tg.matrix))
		bm, bn = sampleBM, sampleBN // (the GPU GEMMs' sample blocks)
		nrb, ncb = (p.M+bm-1)/bm, (p.N+bn-1)/bn
	}
	var tiles [][2]int
	switch p.Numerics {
	case NumericsOff:
		return nil
	case NumericsFull:
		for bi := 0; bi < nrb; bi++ {
			for bj := 0; bj < ncb; bj++ {
				tiles = append(tiles, [2]int{bi, bj})
			}
		}
	case NumericsSampled:
		rng := NewRand(p.Inputs.Seed, 99)
		perm := rng.Perm(nrb * ncb)
		for _, i := range perm[:min(p.SampleTiles, len(perm))] {
			tiles = append(tiles, [2]int{i / ncb, i % ncb})
		}
	}
	var sim [][4]int32 // the simulated planes (full numerics)
	if p.Numerics == NumericsFull {
		mn := p.M * p.N
		raw := make([]byte, 4*4*mn)
		if err := readResult(chip.GM(), j.gmPlanes, raw); err != nil {
			return err
		}
		sim = make([][4]int32, mn)
		for x := range int16Products {
			for e := 0; e < mn; e++ {
				sim[e][x] = int32(binary.LittleEndian.Uint32(raw[4*(x*mn+e):]))
			}
		}
		c := make([]float64, mn)
		for e := range c {
			c[e] = float64(j.recombine(sim[e], e/p.N, e%p.N))
		}
		a, b := make([]int32, len(j.a)), make([]int32, len(j.b))
		for i, v := range j.a {
			a[i] = int32(v)
		}
		for i, v := range j.b {
			b[i] = int32(v)
		}
		j.outs = []Output{{Name: "C", Shape: []int{p.M, p.N}, F64: c}, {Name: "A", Shape: []int{p.M, p.K}, I32: a},
			{Name: "B", Shape: []int{p.K, p.N}, I32: b}}
	}
	var elems int64
	maxErr := 0.0
	// The golden model and the exact product hear the run's context (five
	// INT products an element: 4096³ full, minutes deaf to an interrupt).
	stop := stopwork.New(j.stop())
	for _, tl := range tiles {
		r0, c0 := tl[0]*bm, tl[1]*bn
		mm, nn := min(bm, p.M-r0), min(bn, p.N-c0)
		gold := j.goldenPlanes(r0, mm, c0, nn, &stop)
		if gold == nil {
			return j.stoppedNumerics()
		}
		for e, g := range gold {
			if e%nn == 0 && stop.StopBefore(nn*p.K) { // (a row's exact products)
				return j.stoppedNumerics()
			}
			i, c := r0+e/nn, c0+e%nn
			want := j.exact(i, c)
			got := j.recombine(g, i, c)
			if sim != nil {
				s := sim[i*p.N+c]
				if p.Check && s != g {
					return fmt.Errorf("%w: simulated product planes (hh, hl, lh, ll) at C[%d][%d] = %v but the golden model gives %v", ErrCheckFailed, i, c, s, g)
				}
				got = j.recombine(s, i, c)
				if p.Check && got != want {
					return fmt.Errorf("%w: simulated C[%d][%d] = %d but the exact INT16 product is %d", ErrCheckFailed, i, c, got, want)
				}
			}
			maxErr = max(maxErr, math.Abs(float64(got-want)))
			elems++
		}
	}
	rep.Error = &report.ErrorReport{Reference: "exact (int64)", MaxErr: maxErr, Elements: elems, Sampled: p.Numerics == NumericsSampled}
	if maxErr == 0 {
		rep.Error.Bits = accuracy.MaxBits // every result exact
	}
	if p.Check && sim != nil {
		rep.Notes = append(rep.Notes, "check: the simulated product planes equal the golden model's bit for bit, and C (recombined) the exact INT16 product")
	}
	if p.Numerics == NumericsSampled {
		rep.Notes = append(rep.Notes, fmt.Sprintf("numerics sampled: %d of %d output tiles (%d×%d) computed by the golden model (the INT8 products wrapped to INT32, the recombination) against the exact product", len(tiles), nrb*ncb, bm, bn))
	}
	return nil
}
