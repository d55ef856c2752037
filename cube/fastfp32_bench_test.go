package cube

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/davinci-sim/davinci-sim/fp"
)

// bench32 are the (model, input) pairs of BenchmarkMMAD32Sizes: the CUDA
// cores' FFMA chain with FP32 inputs and the TF32 tensor cores.
var bench32 = []struct {
	model string
	in    fp.Format
}{{"fp32-rne", fp.FP32}, {"fp32-rz", fp.FP32}, {"a100", fp.TF32}, {"h100", fp.TF32}}

// benchTiles32 returns s×s FP32 A and B (N(0,1) values) and a zero C, as
// FP32 patterns.
func benchTiles32(s int) (a, b, c []uint32) {
	rng := rand.New(rand.NewPCG(9, 10))
	a, b = make([]uint32, s*s), make([]uint32, s*s)
	for i := range a {
		a[i] = math.Float32bits(float32(rng.NormFloat64()))
		b[i] = math.Float32bits(float32(rng.NormFloat64()))
	}
	return a, b, make([]uint32, s*s)
}

// BenchmarkMMAD32Sizes measures MMAD with FP32/TF32 inputs (FP32 out,
// fractal tiles, one goroutine per call) per model and implementation:
// "avx512" (the default on this CPU), "go" (useAVX512 off: the pure-Go
// tiles) and "ref" (the reference path, setFast(false)).
func BenchmarkMMAD32Sizes(b *testing.B) {
	defer SetMaxWorkers(0)
	SetMaxWorkers(1)
	for _, bc := range bench32 {
		m, err := Preset(bc.model)
		if err != nil {
			b.Fatal(err)
		}
		for _, s := range []int{64, 256} {
			for _, impl := range []string{"avx512", "go", "ref"} {
				if impl == "avx512" && !useAVX512 || impl == "ref" && s > 64 {
					continue
				}
				b.Run(bc.model+"-"+bc.in.String()+"/"+impl+"/"+itoa(s), func(b *testing.B) {
					defer setFast(impl != "ref")()
					defer func(old bool) { useAVX512 = old }(useAVX512)
					useAVX512 = useAVX512 && impl == "avx512"
					a, bb, c := benchTiles32(s)
					b.ResetTimer()
					cpu0 := cpuSeconds()
					for i := 0; i < b.N; i++ {
						if err := m.MMAD(bc.in, fp.FP32, s, s, s, a, Fractal, bb, Fractal, c, Fractal, true); err != nil {
							b.Fatal(err)
						}
					}
					reportMACs(b, s, cpu0)
				})
			}
		}
	}
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}
