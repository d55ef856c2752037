package cube

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/davinci-sim/davinci-sim/fp"
)

// BenchmarkMMADPairwise measures MMADF16 and MMADBF16 on the mi210 preset
// (s×s×s fractal tiles of N(0,1) values, C = 0, one goroutine per call)
// with the AVX-512 tiles (where the machine has them), the Go tiles, and
// the reference path ("ref", the fast paths off); "par" lets a call use
// every CPU. MMAC/s wall and per CPU second.
func BenchmarkMMADPairwise(b *testing.B) { benchAMD(b, "mi210") }

// BenchmarkMMADLateC is BenchmarkMMADPairwise for the mi300 preset (the
// late-c fast path).
func BenchmarkMMADLateC(b *testing.B) { benchAMD(b, "mi300") }

func benchAMD(b *testing.B, preset string) {
	m, err := Preset(preset)
	if err != nil {
		b.Fatal(err)
	}
	for _, f := range []fp.Format{fp.FP16, fp.BF16} {
		for _, s := range benchSizes {
			rng := rand.New(rand.NewPCG(9, 10))
			a, bb := make([]uint16, s*s), make([]uint16, s*s)
			for i := range a {
				a[i] = uint16(fp.FromFloat64(rng.NormFloat64(), f, fp.Options{}))
				bb[i] = uint16(fp.FromFloat64(rng.NormFloat64(), f, fp.Options{}))
			}
			c := make([]float32, s*s)
			mmad := m.MMADF16
			if f == fp.BF16 {
				mmad = m.MMADBF16
			}
			for _, impl := range []string{"avx512", "go", "ref", "par"} {
				if impl == "avx512" && !useAVX512 {
					continue
				}
				if impl == "ref" && s > 128 {
					continue // slow; 128 shows the rate
				}
				b.Run(fmt.Sprintf("%v/%d/%s", f, s, impl), func(b *testing.B) {
					defer func(old bool) { useAVX512 = old }(useAVX512)
					useAVX512 = useAVX512 && impl != "go"
					defer setFast(impl != "ref")()
					if impl != "par" {
						SetMaxWorkers(1)
						defer SetMaxWorkers(0)
					}
					b.ResetTimer()
					cpu0 := cpuSeconds()
					for i := 0; i < b.N; i++ {
						if err := mmad(s, s, s, a, Fractal, bb, Fractal, c, Fractal, true); err != nil {
							b.Fatal(err)
						}
					}
					reportMACs(b, s, cpu0)
				})
			}
		}
	}
}
