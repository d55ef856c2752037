package cube

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/davinci-sim/davinci-sim/fp"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
)

// benchPresets are the presets the MMAD benchmarks cover: every fast-path
// family (sequential FP32, exact block sums, truncated NVIDIA block FMA).
var benchPresets = []string{"fp32-rne", "fp32-rz", "ascend-910a", "ascend-910b3", "mi100",
	"v100", "t4", "a100", "ada", "h100", "b200"}

var benchSizes = []int{128, 256}

// benchTiles returns s×s FP16 A and B (N(0,1) values, the fractal layout the
// simulator uses) and a zero C.
func benchTiles(s int) (a, b []uint16, c []float32) {
	rng := rand.New(rand.NewPCG(9, 10))
	a, b = make([]uint16, s*s), make([]uint16, s*s)
	for i := range a {
		a[i] = fp.F32ToF16(float32(rng.NormFloat64()), fp.RNE)
		b[i] = fp.F32ToF16(float32(rng.NormFloat64()), fp.RNE)
	}
	return a, b, make([]float32, s*s)
}

func benchMMADSize(b *testing.B, model string, s int, fast bool) {
	m, err := Preset(model)
	if err != nil {
		b.Fatal(err)
	}
	a, bb, c := benchTiles(s)
	defer setFast(fast)()
	timeMMAD(b, m, s, a, bb, c)
}

// timeMMAD times b.N calls of m.MMADF16 on the s×s×s fractal tiles and
// reports the MAC rates.
func timeMMAD(b *testing.B, m Model, s int, a, bb []uint16, c []float32) {
	b.ResetTimer()
	cpu0 := cpuSeconds()
	for i := 0; i < b.N; i++ {
		// init = true keeps C bounded over many iterations.
		if err := m.MMADF16(s, s, s, a, Fractal, bb, Fractal, c, Fractal, true); err != nil {
			b.Fatal(err)
		}
	}
	reportMACs(b, s, cpu0)
}

// reportMACs reports MMAC per wall second and, where the CPU time is
// available, MMAC per CPU second (robust on a loaded machine).
func reportMACs(b *testing.B, s int, cpu0 float64) {
	macs := float64(s*s*s) * float64(b.N)
	b.ReportMetric(macs/b.Elapsed().Seconds()/1e6, "MMAC/s")
	if cpu := cpuSeconds() - cpu0; cpu0 > 0 && cpu > 0 {
		b.ReportMetric(macs/cpu/1e6, "MMAC/cpu-s")
	}
}

// BenchmarkMMADF16Sizes measures MMADF16 (FP16 in, FP32 out, fractal tiles)
// per preset on s×s×s tiles with the fast paths enabled (the default), one
// goroutine per call: the kernel's speed per core, to compare with gonum's
// MAC per CPU-second.
func BenchmarkMMADF16Sizes(b *testing.B) {
	SetMaxWorkers(1)
	defer SetMaxWorkers(0)
	for _, model := range benchPresets {
		for _, s := range benchSizes {
			b.Run(fmt.Sprintf("%s/%d", model, s), func(b *testing.B) { benchMMADSize(b, model, s, true) })
		}
	}
}

// BenchmarkMMADF16ZeroRows is BenchmarkMMADF16Sizes (256³, one goroutine)
// with the lower half of A's rows zero, as in a tile padded with zeros by
// the simulator: the blocks of those rows have no nonzero term and take
// the signed-zero rule. MMAC counts the whole 256³.
func BenchmarkMMADF16ZeroRows(b *testing.B) {
	SetMaxWorkers(1)
	defer SetMaxWorkers(0)
	const s = 256
	for _, model := range []string{"v100", "a100", "h100"} {
		b.Run(model, func(b *testing.B) {
			m, err := Preset(model)
			if err != nil {
				b.Fatal(err)
			}
			a, bb, c := benchTiles(s)
			for i := s / 2; i < s; i++ {
				for t := 0; t < s; t++ {
					a[FractalIndex(i, t, s, 16)] = 0
				}
			}
			timeMMAD(b, m, s, a, bb, c)
		})
	}
}

// BenchmarkMMADF16Parallel is BenchmarkMMADF16Sizes with a call's rows split
// among all CPUs (the default in a simulation): MAC/s wall, to compare with
// gonum's (which uses every CPU too).
func BenchmarkMMADF16Parallel(b *testing.B) {
	for _, model := range benchPresets {
		for _, s := range benchSizes {
			b.Run(fmt.Sprintf("%s/%d", model, s), func(b *testing.B) { benchMMADSize(b, model, s, true) })
		}
	}
}

// BenchmarkMMADF16Slow is BenchmarkMMADF16Sizes with the fast paths forced
// off: the reference path's speed ("before").
func BenchmarkMMADF16Slow(b *testing.B) {
	for _, model := range benchPresets {
		for _, s := range benchSizes {
			b.Run(fmt.Sprintf("%s/%d", model, s), func(b *testing.B) { benchMMADSize(b, model, s, false) })
		}
	}
}

// BenchmarkGonumSgemmSizes is the reference: gonum's float32 GEMM on the
// same shapes.
func BenchmarkGonumSgemmSizes(b *testing.B) {
	for _, s := range benchSizes {
		b.Run(fmt.Sprint(s), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(9, 10))
			mk := func() blas32.General {
				g := blas32.General{Rows: s, Cols: s, Stride: s, Data: make([]float32, s*s)}
				for i := range g.Data {
					g.Data[i] = float32(rng.NormFloat64())
				}
				return g
			}
			A, B, C := mk(), mk(), mk()
			b.ResetTimer()
			cpu0 := cpuSeconds()
			for i := 0; i < b.N; i++ {
				blas32.Gemm(blas.NoTrans, blas.NoTrans, 1, A, B, 0, C)
			}
			reportMACs(b, s, cpu0)
		})
	}
}

// BenchmarkTile4x8 measures the AVX-512 tile routines alone on one 4×8
// tile with k = 256 (N(0,1) FP32-representable inputs, exponents in
// −1..1, c = 0), per block length: the truncated tile (F = 24, RZ) and the
// exact tile (spreads within the limit). MMAC/s wall; no load, prep or
// element work, so it isolates the assembly's speed from the rest of the
// call.
func BenchmarkTile4x8(b *testing.B) {
	if !useAVX512 {
		b.Skip("no AVX-512")
	}
	const k, n = 256, 8
	rng := rand.New(rand.NewPCG(1, 2))
	a4, ea4 := make([]float64, 4*k), make([]int32, 4*k)
	b8, eb8 := make([]float64, 8*k), make([]int32, 8*k)
	for i := range a4 {
		a4[i] = float64(float32(rng.NormFloat64()))
		ea4[i] = int32(rng.IntN(3)) - 1 + 127 // prepTile4x8's bias
	}
	for i := range b8 {
		b8[i] = float64(float32(rng.NormFloat64()))
		eb8[i] = int32(rng.IntN(3)) - 1
	}
	sp := make([]int32, 8*k) // exact tile: spreads (≤ k blocks)
	c, res := make([]float64, 4*n), make([]uint32, 4*n)
	for _, L := range []int{4, 8, 16} {
		b.Run(fmt.Sprintf("trunc/L%d", L), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				truncTile4x8(&a4[0], &ea4[0], &b8[0], &eb8[0], &c[0], &res[0], n, k, L, 24, true)
			}
			b.ReportMetric(float64(4*n*k)*float64(b.N)/b.Elapsed().Seconds()/1e6, "MMAC/s")
		})
		b.Run(fmt.Sprintf("exact/L%d", L), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				exactTile4x8(&a4[0], &sp[0], &b8[0], &sp[0], &c[0], &res[0], n, k, L, 40, false)
			}
			b.ReportMetric(float64(4*n*k)*float64(b.N)/b.Elapsed().Seconds()/1e6, "MMAC/s")
		})
	}
}
