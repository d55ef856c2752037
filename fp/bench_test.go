package fp

import (
	"math"
	"math/rand/v2"
	"testing"
)

var (
	sink16 uint16
	sink32 uint32
	sinkF  float32
	benchF = func() []float32 {
		rng := rand.New(rand.NewPCG(5, 6))
		xs := make([]float32, 4096)
		for i := range xs {
			xs[i] = float32(rng.NormFloat64() * 100)
		}
		return xs
	}()
	benchH = func() []uint16 {
		hs := make([]uint16, 4096)
		for i := range hs {
			hs[i] = F32ToF16(benchF[i], RNE)
		}
		return hs
	}()
)

func BenchmarkF32ToF16(b *testing.B) {
	for _, r := range []Rounding{RNE, RZ, RO} {
		b.Run(r.String(), func(b *testing.B) {
			var s uint16
			for i := 0; i < b.N; i++ {
				s += F32ToF16(benchF[i&4095], r)
			}
			sink16 = s
		})
	}
}

func BenchmarkF16ToF32(b *testing.B) {
	var s float32
	for i := 0; i < b.N; i++ {
		s += F16ToF32(benchH[i&4095])
	}
	sinkF = s
}

func BenchmarkBF16ToF32(b *testing.B) {
	var s float32
	for i := 0; i < b.N; i++ {
		s += BF16ToF32(benchH[i&4095])
	}
	sinkF = s
}

func BenchmarkFromFloat64(b *testing.B) {
	xs := make([]float64, len(benchF))
	for i, x := range benchF {
		xs[i] = float64(x) * (1 + math.Ldexp(1, -40))
	}
	for _, c := range []struct {
		f Format
		o Options
	}{{FP16, Options{}}, {FP16, Options{Round: RZ, Saturate: true}}, {FP32, Options{}}, {BF16, Options{}}, {E4M3, Options{Saturate: true}}, {INT8, Options{}}} {
		b.Run(c.f.String()+"-"+c.o.Round.String(), func(b *testing.B) {
			var s uint32
			for i := 0; i < b.N; i++ {
				s += FromFloat64(xs[i&4095], c.f, c.o)
			}
			sink32 = s
		})
	}
}

func BenchmarkRoundFloat64ToFloat32(b *testing.B) {
	for _, r := range []Rounding{RNE, RZ} {
		b.Run(r.String(), func(b *testing.B) {
			var s float32
			for i := 0; i < b.N; i++ {
				s += RoundFloat64ToFloat32(float64(benchF[i&4095])*1.0000001, r)
			}
			sinkF = s
		})
	}
}

func TestNoAllocs(t *testing.T) {
	n := testing.AllocsPerRun(100, func() {
		sink16 = F32ToF16(1.5, RZ)
		sinkF = F16ToF32(0x3c00)
		sink32 = FromFloat64(0.1, E4M3, Options{})
	})
	if n != 0 {
		t.Fatalf("%v allocations per conversion", n)
	}
}
