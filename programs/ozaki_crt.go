package programs

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/davinci-sim/davinci-sim/arch"
	"github.com/davinci-sim/davinci-sim/fp"
	"github.com/davinci-sim/davinci-sim/isa"
	"github.com/davinci-sim/davinci-sim/ozaki"
	"github.com/davinci-sim/davinci-sim/ozaki/crt"
	"github.com/davinci-sim/davinci-sim/report"
)

// Kind ozaki, method ozaki-ii: Ozaki scheme II (as GEMMul8) on GPUs. A and
// B are scaled per row and column to integers, reduced modulo N pairwise
// coprime moduli ≤ 256 (INT8 residues), one INT8 GEMM per modulus (INT32,
// exact; per k-chunk beyond the INT32 bound), and C is reconstructed by the
// Chinese remainder theorem and rounded once (package ozaki/crt is the
// contract). N GEMMs for about 4 bits each, where Ozaki-I needs s(s+1)/2
// for 8 bits per slice — but no ESC: a wide exponent span within a row or
// column is not detected (docs/ozaki.md).
//
// Kernels: a scan (row and column maxima for the scales, Inf/NaN), the
// residues of A and of B, the N INT8 GEMMs, and the reconstruction — the
// element-wise ones timed only, like Ozaki-I's.

// Operation counts of ozaki-ii's element-wise kernels (INT32 ALU
// operations per element unless said otherwise):
//   - scan: the exponent field (2), the Inf/NaN test (1), the running row
//     (column) maximum (1): 4;
//   - residues: the scaling to an integer and its rounding on 32-bit ALUs
//     (6), then per modulus a reduction by multiply-high with the
//     reciprocal, a multiply, a subtraction and the symmetric adjustment (6);
//   - reconstruction, per output: Garner's mixed-radix digits, N(N−1)/2
//     modular multiply-adds of 3 operations, the mixed-radix sum into a
//     192-bit integer (8 per modulus: 6 limb multiply-adds and carries),
//     the symmetric wrap and the conversion (10), then the scaling in FP64
//     (4 FP64 operations) and α, β.
const (
	crtScanOps       = 4
	crtResidueOps    = 6
	crtResidueOpsMod = 6
	crtGarnerOps     = 3
	crtLimbOps       = 8
	crtConvertOps    = 10
	crtScaleOps      = 4
)

// chooseModuli sets the moduli: moduli given, or the fewest that hold
// mantissa_bits at depth k.
func (j *ozakiJob) chooseModuli(bad func(key, format string, a ...any) error) error {
	k := j.p.K
	n := j.p.Moduli
	if n != 0 {
		if n < crt.MinModuli || n > crt.MaxModuli {
			return bad("moduli", "must be in %d..%d (got %d)", crt.MinModuli, crt.MaxModuli, n)
		}
		if crt.BitsFor(n, k) <= 0 {
			return bad("moduli", "%d moduli cannot hold sums of k = %d products; use more", n, k)
		}
	} else {
		for n = crt.MinModuli; n <= crt.MaxModuli && crt.BitsFor(n, k) < j.p.MantissaBits; n++ {
		}
		if n > crt.MaxModuli {
			return bad("mantissa_bits", "ozaki-ii reaches at most %d bits at k = %d (%d moduli); ask for fewer or use method ozaki-i",
				crt.BitsFor(crt.MaxModuli, k), k, crt.MaxModuli)
		}
	}
	mods, err := crt.Moduli(n)
	if err != nil {
		return bad("moduli", "%v", err)
	}
	j.moduli = mods
	return nil
}

// planCRT takes package ozaki/crt's plan for the inputs: scales and
// residues, or the native fallback on Inf/NaN (stopping with the building
// run, o's, the file at path).
func (j *ozakiJob) planCRT(o Options, path string, bad func(key, format string, a ...any) error) error {
	p := &j.p.GEMMParams
	plan, err := crt.MakePlan(j.a, j.b, p.M, p.K, p.N, crt.Config{Moduli: len(j.moduli), Native: fmaGEMM, Stop: o.stop()})
	if errors.Is(err, crt.ErrStopped) {
		return o.stoppedBuilding(path, "computing the scales")
	}
	if err != nil {
		return bad("moduli", "%v", err)
	}
	j.crtPlan, j.reason = &plan, plan.Reason
	if plan.Fallback {
		j.fallback = true
		return nil
	}
	var ok bool
	if j.ra, j.rb, ok = plan.ResiduesUntil(j.a, j.b, o.stop()); !ok {
		return o.stoppedBuilding(path, "computing the residues")
	}
	return nil
}

// crtLayout lays out global memory — FP64 A, B, C (C0), the scales, the
// residues of A (N planes m×k) and of B (N planes k×n), the INT32 planes —
// and builds one INT8 GEMM per k-chunk and modulus, chunk-major.
func (j *ozakiJob) crtLayout() error {
	p := &j.p.GEMMParams
	m, k, n := int64(p.M), int64(p.K), int64(p.N)
	nm := int64(len(j.moduli))
	j.chunk = crt.Chunks(p.K, j.moduli)
	j.nchunks = (p.K + j.chunk - 1) / j.chunk
	j.nplanes = j.nchunks * len(j.moduli)
	if err := j.layoutGM(nm, false, "the residues"); err != nil {
		return err
	}
	if j.fallback {
		return j.nativeDGEMM("ozaki2/native-dgemm")
	}
	j.diagPlans, j.planMod = nil, nil
	plane := j.gmPlanes
	for c := 0; c < j.nchunks; c++ {
		c0 := int64(c * j.chunk)
		lc := min(j.chunk, p.K-c*j.chunk)
		for r, mod := range j.moduli {
			dp := *p
			dp.K, dp.Kind = lc, "ozaki"
			dp.together = j.gemmsTogether(len(j.moduli))
			pl, err := newGPUGEMMPlan(j.file, dp, j.mach, fp.INT8, gpuShape{})
			if err != nil {
				return err
			}
			name := fmt.Sprintf("ozaki2/p%d", mod)
			if j.nchunks > 1 {
				name += fmt.Sprintf(".c%d", c)
			}
			pl.lda = k
			pl.ops = &gpuOperands{name: name, gmA: []int64{j.gmDigitsA + int64(r)*m*k + c0}, gmB: []int64{j.gmDigitB + int64(r)*k*n + c0*n},
				mmas: []gpuProduct{{first: true}}, accs: []gpuAcc{{}}}
			pl.gmC = plane
			plane += 4 * m * n
			j.diagPlans = append(j.diagPlans, pl)
			j.planMod = append(j.planMod, r)
		}
	}
	return nil
}

// crtProgram is ozaki-ii's kernel sequence.
func (j *ozakiJob) crtProgram() isa.Program {
	p := &j.p.GEMMParams
	k, n := int64(p.K), int64(p.N)
	nm := len(j.moduli)
	// The scan: A's rows (a row maximum each), B's rows (column maxima);
	// short rows a run of them to a block (lineBlocks).
	threads := j.tg.threads(streamWarps)
	nA, segA := lineBlocks(p.M, p.K, threads)
	nB, segB := lineBlocks(p.K, p.N, threads)
	scan := streamGrid(j.tg, "ozaki2/scan", nA+nB, func(i int) streamBlock {
		if i < nA {
			sg := segA(i)
			r, cnt := int64(sg.r), sg.elems()
			return streamBlock{reads: []gmSpan{{j.gmA64 + 8*(r*k+int64(sg.c0)), 8 * int64(cnt)}},
				writes: []gmSpan{{j.gmScaleA + 4*r, 4 * int64(sg.rows)}}, work: []vecWork{{crtScanOps * cnt, fp.INT32}}}
		}
		sg := segB(i - nA)
		l, c0, cnt := int64(sg.r), int64(sg.c0), sg.elems()
		return streamBlock{reads: []gmSpan{{j.gmB64 + 8*(l*n+c0), 8 * int64(cnt)}},
			writes: []gmSpan{{j.gmScaleB + 4*c0, 4 * int64(sg.n)}}, work: []vecWork{{crtScanOps * cnt, fp.INT32}}}
	})
	grids := []isa.Grid{scan}
	if j.fallback {
		grids = append(grids, j.native.grid())
		if j.scaled() {
			grids = append(grids, j.nativeEpilogueGrid())
		}
		return isa.Program{Name: "ozaki", Generated: true, Grids: grids}
	}
	ops := crtResidueOps + crtResidueOpsMod*nm
	m64 := int64(p.M)
	resA := streamGrid(j.tg, "ozaki2/residues-a", nA, func(i int) streamBlock {
		sg := segA(i)
		r, c0, cnt := int64(sg.r), int64(sg.c0), sg.elems()
		var w []gmSpan
		for x := int64(0); x < int64(nm); x++ {
			w = append(w, gmSpan{j.gmDigitsA + x*m64*k + r*k + c0, int64(cnt)})
		}
		return streamBlock{reads: []gmSpan{{j.gmA64 + 8*(r*k+c0), 8 * int64(cnt)}, {j.gmScaleA + 4*r, 4 * int64(sg.rows)}},
			writes: w, work: []vecWork{{ops * cnt, fp.INT32}}}
	})
	resB := streamGrid(j.tg, "ozaki2/residues-b", nB, func(i int) streamBlock {
		sg := segB(i)
		l, c0, cnt := int64(sg.r), int64(sg.c0), sg.elems()
		var w []gmSpan
		for x := int64(0); x < int64(nm); x++ {
			w = append(w, gmSpan{j.gmDigitB + x*k*n + l*n + c0, int64(cnt)})
		}
		return streamBlock{reads: []gmSpan{{j.gmB64 + 8*(l*n+c0), 8 * int64(cnt)}, {j.gmScaleB + 4*c0, 4 * int64(sg.n)}},
			writes: w, work: []vecWork{{ops * cnt, fp.INT32}}}
	})
	grids = append(grids, resA, resB)
	grids = append(grids, j.gemmGrids("ozaki2/products")...)
	intOps := crtGarnerOps*nm*(nm-1)/2 + crtLimbOps*nm + crtConvertOps + j.nchunks*nm
	fpOps := crtScaleOps
	if j.alpha != 1 {
		fpOps++
	}
	if j.p.Beta != 0 {
		fpOps += 2
	}
	nc, seg := lineBlocks(p.M, p.N, threads)
	rec := streamGrid(j.tg, "ozaki2/reconstruct", nc, func(i int) streamBlock {
		sg := seg(i)
		at, cnt := int64(sg.r)*n+int64(sg.c0), sg.elems()
		reads := j.planeReads(sg)
		return streamBlock{reads: reads, writes: []gmSpan{{j.gmC + 8*at, 8 * int64(cnt)}},
			work: []vecWork{{intOps * cnt, fp.INT32}, {fpOps * cnt, fp.FP64}}}
	})
	grids = append(grids, rec)
	return isa.Program{Name: "ozaki", Generated: true, Grids: grids}
}

// crtPrepare writes the residues the residue kernels (timed only) would
// have written: modulus r's plane of A at r·m·k, of B at r·k·n.
func (j *ozakiJob) crtPrepare(chip *arch.Chip) error {
	p := &j.p.GEMMParams
	gm := chip.GM()
	mk, kn := int64(p.M)*int64(p.K), int64(p.K)*int64(p.N)
	for r := range j.moduli {
		if err := j.stoppedPreparing(); err != nil {
			return err
		}
		if err := gm.Write(j.gmDigitsA+int64(r)*mk, int8Bytes(j.ra[r])); err != nil {
			return err
		}
		if err := gm.Write(j.gmDigitB+int64(r)*kn, int8Bytes(j.rb[r])); err != nil {
			return err
		}
	}
	return nil
}

// crtSimulatedC reconstructs C from the INT32 planes the simulated INT8
// GEMMs wrote (each chunk's result reduced modulo its modulus and summed),
// with package ozaki/crt's reconstruction; with check, the planes and C
// are compared with the golden model bit for bit.
func (j *ozakiJob) crtSimulatedC(chip *arch.Chip, rep *report.Report) ([]float64, error) {
	p := &j.p.GEMMParams
	mn := p.M * p.N
	sums := make([][]int64, len(j.moduli))
	for r := range sums {
		sums[r] = make([]int64, mn)
	}
	raw := make([]byte, 4*mn)
	for x, pl := range j.diagPlans {
		if err := j.stoppedNumerics(); err != nil {
			return nil, err
		}
		if err := readResult(chip.GM(), pl.gmC, raw); err != nil {
			return nil, err
		}
		r := j.planMod[x]
		mod := int64(j.moduli[r])
		c := x / len(j.moduli)
		var want []int32
		if p.Check {
			want = crt.ModProducts(j.ra, j.rb, p.M, p.K, p.N, r, c*j.chunk, min(p.K, (c+1)*j.chunk))
		}
		for i := range mn {
			d := int32(binary.LittleEndian.Uint32(raw[4*i:]))
			if want != nil && d != want[i] {
				return nil, fmt.Errorf("%w: %s wrote D[%d][%d] = %d but the golden model gives %d", ErrCheckFailed, pl.name(), i/p.N, i%p.N, d, want[i])
			}
			sums[r][i] = (sums[r][i] + int64(d)%mod) % mod
		}
	}
	cr := make([][]int32, len(j.moduli))
	for r := range cr {
		cr[r] = make([]int32, mn)
		for i, v := range sums[r] {
			cr[r][i] = int32(v)
		}
	}
	c := j.crtPlan.Reconstruct(cr, 0, p.M, 0, p.N)
	ozaki.Epilogue(c, j.alpha, j.p.Beta, j.c0)
	rep.Notes = append(rep.Notes, fmt.Sprintf("numerics full: the %d INT8 residue GEMMs ran functionally (INT32 planes read back from simulated memory); the CRT reconstruction follows package ozaki/crt", len(j.diagPlans)))
	if p.Check {
		want := crt.GEMMTile(j.crtPlan, j.ra, j.rb, 0, p.M, 0, p.N)
		ozaki.Epilogue(want, j.alpha, j.p.Beta, j.c0)
		if err := sameFloat64s("C", c, want, p.N); err != nil {
			return nil, err
		}
		rep.Notes = append(rep.Notes, "check: every INT32 plane and C equal the golden model (package ozaki/crt) bit for bit")
	}
	return c, nil
}
