package programs

import (
	"math"

	"github.com/davinci-sim/davinci-sim/accuracy"
	"github.com/davinci-sim/davinci-sim/report"
	"github.com/davinci-sim/davinci-sim/stopwork"
)

// LE-GEMM's error metrics (its Eqs. 19–20: the symmetric Max_error and
// MRED) take a CPU FP32 SGEMM as the reference, not FP64. An emulated GEMM
// with numerics reports both: error (vs FP64), baselines.cpu_sgemm_fp32
// (the CPU SGEMM vs FP64), program.error_vs_cpu_sgemm (the scheme vs the
// CPU SGEMM), and with histogram_bins the per-element distribution of the
// symmetric error vs the CPU SGEMM (program.error_histogram).

// Histogram range: log10 of the symmetric error |x − c| / (|x| + |c|),
// which is at most 1.
const (
	histLog10Min = -12.0
	histLog10Max = 0.0
)

// errTile is a block of C: rows r0.. (m of them), columns c0.. (n).
type errTile struct{ r0, m, c0, n int }

// cpuSGEMMTiles is the CPU FP32 SGEMM (accuracy.CPUSGEMM: k-ordered,
// FMA-free) of each tile, concatenated, asking stop (nil: never) as
// referenceGEMMUntil does: false once it says true.
func cpuSGEMMTiles(a, b []float32, k, ldb int, tiles []errTile, stop func() bool) ([]float32, bool) {
	var out []float32
	st := stopwork.New(stop)
	for _, t := range tiles {
		bp := make([]float32, k*t.n)
		for q := 0; q < k; q++ {
			copy(bp[q*t.n:(q+1)*t.n], b[q*ldb+t.c0:][:t.n])
		}
		ok := byRowBlocks(t.m, k*t.n, &st, func(r0, r1 int) {
			out = append(out, accuracy.CPUSGEMM(r1-r0, k, t.n, a[(t.r0+r0)*k:(t.r0+r1)*k], bp)...)
		})
		if !ok {
			return nil, false
		}
	}
	return out, true
}

// gemmRowBlock is the rows of C the reference GEMMs compute between two
// questions to their stop: gonum's block (accuracy's GEMMs on amd64; a
// 4096-square block ~0.5 s). An output is the same sum in the same order
// whichever rows are computed with it.
const gemmRowBlock = 64

// byRowBlocks calls f(r0, r1) for the blocks of gemmRowBlock rows of an
// m-row C, in order, perRow the work of a row, asking st before each:
// false once it says stop.
func byRowBlocks(m, perRow int, st *stopwork.Stopper, f func(r0, r1 int)) bool {
	for r0 := 0; r0 < m; r0 += gemmRowBlock {
		r1 := min(r0+gemmRowBlock, m)
		if st.StopBefore((r1 - r0) * perRow) {
			return false
		}
		f(r0, r1)
	}
	return true
}

// referenceGEMMUntil is accuracy.ReferenceGEMM of the m×k A and k×n B
// (their shapes right), a block of rows at a time, asking stop (nil:
// never) before each block: nil once it says true (4096³: half a minute,
// deaf to an interrupt in one call).
func referenceGEMMUntil(m, k, n int, a, b []float32, stop func() bool) []float64 {
	ref := make([]float64, m*n)
	wb := accuracy.Widen(b)
	st := stopwork.New(stop)
	ok := byRowBlocks(m, k*n, &st, func(r0, r1 int) {
		copy(ref[r0*n:r1*n], accuracy.ReferenceGEMM64(r1-r0, k, n, accuracy.Widen(a[r0*k:r1*k]), wb))
	})
	if !ok {
		return nil
	}
	return ref
}

// errorHistogram bins the per-element symmetric error of got against ref
// (LE-GEMM's Eq. 19 before its maximum) into bins equal bins of its log10
// over [histLog10Min, histLog10Max]; exact counts the elements equal to
// their reference (error 0: the same infinity, and NaN against NaN, too,
// as accuracy.Metrics counts them), below those under the range, nonfinite
// the others whose error is not a number (a ±Inf or NaN against another
// value).
func errorHistogram(ref, got []float32, bins int) map[string]any {
	counts := make([]int64, bins)
	exact, below, nonfinite := int64(0), int64(0), int64(0)
	w := (histLog10Max - histLog10Min) / float64(bins)
	for i, r := range ref {
		x, c := float64(got[i]), float64(r)
		if x == c || x != x && c != c {
			exact++
			continue
		}
		d := math.Abs(x - c)
		e := d / (math.Abs(x) + math.Abs(c))
		if math.IsNaN(e) || math.IsInf(e, 0) {
			nonfinite++
			continue
		}
		l := float64(math.Log10(e)) // Log10 is log(e)·(1/ln 10) inlined: round it
		if l < histLog10Min {
			below++
			continue
		}
		counts[min(bins-1, int((l-histLog10Min)/w))]++
	}
	edges := make([]float64, bins+1)
	for i := range edges {
		edges[i] = histLog10Min + float64(float64(i)*w)
	}
	return map[string]any{"reference": "cpu_sgemm_fp32", "metric": "log10 of |x − c| / (|x| + |c|) per element (LE-GEMM Eq. 19)",
		"log10_edges": edges, "counts": counts, "exact": exact, "below": below, "nonfinite": nonfinite, "elements": len(ref)}
}

// cpuErrors fills the LE-GEMM-style reports of an emulated result got on
// tiles (ref: their FP64 reference), its CPU SGEMM asking the run's
// context: stoppedNumerics once it is done.
func (j *emulatedJob) cpuErrors(rep *report.Report, tiles []errTile, ref []float64, got []float32, sampled bool) error {
	p := &j.p
	cpu, ok := cpuSGEMMTiles(j.a, j.b, p.K, p.N, tiles, j.stop())
	if !ok {
		return j.stoppedNumerics()
	}
	if p.Baselines == nil || *p.Baselines {
		if rep.Baselines == nil {
			rep.Baselines = map[string]report.ErrorReport{}
		}
		rep.Baselines["cpu_sgemm_fp32"] = errReport(accuracy.Compare32(ref, cpu), sampled)
	}
	rep.Program["error_vs_cpu_sgemm"] = accuracy.Compare32(accuracy.Widen(cpu), got)
	if j.histBins > 0 {
		rep.Program["error_histogram"] = errorHistogram(cpu, got, j.histBins)
	}
	return nil
}
