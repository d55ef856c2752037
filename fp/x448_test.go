package fp

import (
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/x448/float16"
)

// longTag is set by long_tag_test.go under the build tag "long".
var longTag bool

func longEnabled() bool { return longTag || os.Getenv("DAVINCI_LONG") == "1" }

// cmpX448 compares F32ToF16(RNE) with x448's Fromfloat32 on the float32
// pattern b. NaNs are compared for NaN-ness only (both libraries keep the
// top payload bits and set the quiet bit, but payload agreement is not part
// of the check); it reports whether the NaN payloads were identical.
func cmpX448(b uint32) (ok, nanSame bool) {
	x := math.Float32frombits(b)
	got := F32ToF16(x, RNE)
	want := float16.Fromfloat32(x).Bits()
	if x != x {
		g, w := float16.Frombits(got), float16.Frombits(want)
		return g.IsNaN() && w.IsNaN(), got == want
	}
	return got == want, true
}

func TestX448Random(t *testing.T) {
	n := 4 << 20
	if testing.Short() {
		n = 1 << 18
	}
	rng := rand.New(rand.NewPCG(3, 4))
	payloadDiffs := 0
	for i := 0; i < n; i++ {
		b := rng.Uint32()
		ok, same := cmpX448(b)
		if !ok {
			t.Fatalf("F32ToF16(%#08x) = %#04x, x448 %#04x", b, F32ToF16(math.Float32frombits(b), RNE),
				float16.Fromfloat32(math.Float32frombits(b)).Bits())
		}
		if !same {
			payloadDiffs++
		}
		// The general path must agree with the fast paths in every mode.
		if i%8 == 0 {
			x := math.Float32frombits(b)
			for _, r := range Roundings() {
				if g := uint16(FromFloat32(x, FP16, Options{Round: r})); g != F32ToF16(x, r) {
					t.Fatalf("FromFloat32(%#08x, %v) = %#04x, fast path %#04x", b, r, g, F32ToF16(x, r))
				}
			}
		}
	}
	if payloadDiffs != 0 {
		t.Logf("%d NaN inputs with a different payload than x448 (NaN-ness agrees)", payloadDiffs)
	}
}

// TestX448All compares all 2^32 float32 inputs (opt-in: DAVINCI_LONG=1 or
// -tags long). It also checks F16ToF32 against x448 on every FP16 pattern,
// which is cheap and always runs.
func TestX448All(t *testing.T) {
	for i := 0; i < 1<<16; i++ {
		h := uint16(i)
		got, want := F16ToF32(h), float16.Frombits(h).Float32()
		if float16.Frombits(h).IsNaN() {
			// x448 quiets signalling NaNs when widening; F16ToF32 keeps the
			// pattern exactly. Compare the pattern with the quiet bit forced.
			if math.Float32bits(got)|1<<22 != math.Float32bits(want) {
				t.Fatalf("F16ToF32(%#04x) = %#08x, x448 %#08x", h, math.Float32bits(got), math.Float32bits(want))
			}
			continue
		}
		if math.Float32bits(got) != math.Float32bits(want) {
			t.Fatalf("F16ToF32(%#04x) = %v, x448 %v", h, got, want)
		}
	}
	if !longEnabled() {
		t.Skip("all 2^32 inputs: set DAVINCI_LONG=1 or use -tags long")
	}
	start := time.Now()
	workers := runtime.GOMAXPROCS(0)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var bad []uint32
	payloadDiffs := 0
	const chunk = 1 << 32 / 256
	next := make(chan uint64, 256)
	for c := uint64(0); c < 256; c++ {
		next <- c * chunk
	}
	close(next)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for lo := range next {
				diffs := 0
				for b := lo; b < lo+chunk; b++ {
					ok, same := cmpX448(uint32(b))
					if !ok {
						mu.Lock()
						if len(bad) < 10 {
							bad = append(bad, uint32(b))
						}
						mu.Unlock()
					}
					if !same {
						diffs++
					}
				}
				mu.Lock()
				payloadDiffs += diffs
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(bad) != 0 {
		t.Fatalf("mismatches with x448 at %#x", bad)
	}
	t.Logf("all 2^32 float32 inputs agree with x448 (NaN payload differences: %d) in %v on %d workers",
		payloadDiffs, time.Since(start), workers)
}
