package ozaki

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"
)

// Mode selects how the slice count is chosen (package doc, §7).
type Mode int

const (
	// Fixed takes the slices from Config.Bits; there is no Inf/NaN scan and
	// no ESC.
	Fixed Mode = iota
	// Forced runs ADP (Inf/NaN scan and ESC are computed and reported) but
	// takes the slices from Config.Bits; only Inf/NaN route to the fallback.
	Forced
	// Dynamic runs ADP and takes the slices from W = Bits + ESC; when W
	// exceeds MaxBits or the ESC is unbounded it falls back (Fallback) or uses
	// SlicesFor(MaxBits).
	Dynamic
)

// String returns "fixed", "forced" or "dynamic".
func (m Mode) String() string {
	switch m {
	case Fixed:
		return "fixed"
	case Forced:
		return "forced"
	case Dynamic:
		return "dynamic"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// Config configures the emulated DGEMM.
type Config struct {
	// Bits is the mantissa-bit setting, in [MinBits, MaxBits]: the capacity
	// requested in Fixed and Forced modes, the target precision (53 for FP64)
	// to which Dynamic adds the ESC.
	Bits int
	// Slices, when not 0, is the slice count in Fixed and Forced modes (in
	// 1..MaxSlices; not in Dynamic): Bits is then ignored and the plan holds
	// Capacity(Slices) bits (26 slices: 207, beyond MaxBits).
	Slices int
	// Mode chooses Fixed, Forced or Dynamic.
	Mode Mode
	// MaxBits caps W in Dynamic mode, in [MinBits, MaxBits]; 0 means MaxBits
	// (200). Ignored in the other modes.
	MaxBits int
	// ESCBlock is the ESC coarsening block length (≥ 1; 1 = exact); 0 means
	// DefaultESCBlock.
	ESCBlock int
	// Products is the product set (Triangular by default).
	Products ProductSet
	// Fallback lets Dynamic mode route to the native DGEMM when W > MaxBits
	// or the ESC is unbounded. Inf/NaN always route there in Forced and
	// Dynamic modes.
	Fallback bool
	// Chunk overrides the k-chunk length (≥ 1, ≤ MaxChunk(s)); 0 means
	// Chunks(k, s, Products). The chunking changes the result bits.
	Chunk int
	// Workers is the number of goroutines of the golden GEMM and the ESC
	// (0 = GOMAXPROCS). The result bits do not depend on it.
	Workers int
	// Native computes the fallback DGEMM; nil means NativeGEMM.
	Native func(a, b, c0 []float64, alpha, beta float64, m, k, n int) []float64
	// Stop, when not nil, is asked by MakePlan between its passes over
	// the inputs (scales, the block tables: about a second each at 8192²)
	// and row by row in the ESC over every pair of rows and columns
	// (seconds at 4096³, minutes at 16384³); once it says true, MakePlan
	// returns a *StoppedError (errors.Is ErrStopped) naming the pass.
	Stop func() bool
}

// ErrStopped reports that Config.Stop (or DigitsUntil's stop) ended the
// work early.
var ErrStopped = errors.New("ozaki: stopped")

// StoppedError is the error of a plan its stop ended (errors.Is
// ErrStopped), naming the pass it ended in.
type StoppedError struct {
	// Phase is the pass: "the scales" (the line maxima) or "the ESC"
	// (its block tables, its (max,+) product).
	Phase string
}

// Error says where the plan stopped.
func (e *StoppedError) Error() string { return "ozaki: stopped computing " + e.Phase }

// Is reports whether target is ErrStopped.
func (e *StoppedError) Is(target error) bool { return target == ErrStopped }

// Plan is the decision ADP takes for one GEMM and everything the emulation
// needs besides the digit planes.
type Plan struct {
	M, K, N  int
	Mode     Mode
	Products ProductSet
	// Slices is the slice count s (0 when Fallback).
	Slices int
	// Capacity is 8·Slices − 1, the mantissa bits the slices hold.
	Capacity int
	// Bits is the requested W: Config.Bits (Fixed, Forced) or Bits + ESC
	// (Dynamic; meaningless when !Bounded).
	Bits int
	// ESCDone reports that the scan and the ESC ran (Forced, Dynamic, and no
	// Inf/NaN found).
	ESCDone bool
	// ESC is the matrix ESC including the +1 margin (W = Bits + ESC);
	// meaningless when !Bounded.
	ESC int
	// Bounded is false when the coarse ESC could not bound some pair.
	Bounded bool
	// ESCBlock is the coarsening block length used.
	ESCBlock int
	// InfNaN reports that the scan found Inf or NaN in A or B.
	InfNaN bool
	// Fallback reports that the native DGEMM computes the result.
	Fallback bool
	// Capped reports that Dynamic mode needed more than MaxBits and, without
	// Fallback, used SlicesFor(MaxBits) (the result may be inaccurate).
	Capped bool
	// Reason says in words why the plan is what it is.
	Reason string
	// ScalesA and ScalesB are the row scales of A and the column scales of B
	// (nil on an Inf/NaN fallback).
	ScalesA, ScalesB []Scale
	// Chunk is the k-chunk length.
	Chunk int
	// Workers is the goroutine count used by GEMMTile (0 = GOMAXPROCS).
	Workers int
}

// ErrShape reports inconsistent dimensions or slice lengths.
var ErrShape = errors.New("ozaki: bad shape")

// ErrConfig reports an invalid configuration value other than Bits.
var ErrConfig = errors.New("ozaki: bad config")

// HasInfNaN reports whether x holds an infinity or a NaN.
func HasInfNaN(x []float64) bool {
	for _, v := range x {
		if math.IsInf(v, 0) || math.IsNaN(v) {
			return true
		}
	}
	return false
}

// MakePlan (named so because Plan is the type) runs ADP's decision for C = A·B with A m×k and B k×n (row-major):
// validation, then per mode: Fixed → slices from cfg.Bits; Forced/Dynamic →
// Inf/NaN scan (fallback if found), scales, ESC with block cfg.ESCBlock,
// then the slice count as described in Config and Mode. It returns an error
// (never panics) for bad dimensions or configuration.
func MakePlan(a, b []float64, m, k, n int, cfg Config) (Plan, error) {
	p := Plan{M: m, K: k, N: n, Mode: cfg.Mode, Products: cfg.Products, Workers: cfg.Workers, Bounded: true}
	if m < 0 || k < 0 || n < 0 || len(a) < m*k || len(b) < k*n {
		return p, fmt.Errorf("%w: m=%d k=%d n=%d len(a)=%d len(b)=%d", ErrShape, m, k, n, len(a), len(b))
	}
	if cfg.Mode < Fixed || cfg.Mode > Dynamic {
		return p, fmt.Errorf("%w: mode %d", ErrConfig, int(cfg.Mode))
	}
	if cfg.Slices != 0 {
		if cfg.Slices < 1 || cfg.Slices > MaxSlices || cfg.Mode == Dynamic {
			return p, fmt.Errorf("%w: slices %d (1..%d, modes fixed and forced)", ErrConfig, cfg.Slices, MaxSlices)
		}
	} else if _, err := SlicesFor(cfg.Bits); err != nil {
		return p, err
	}
	if cfg.Products != Triangular && cfg.Products != Square {
		return p, fmt.Errorf("%w: product set %d", ErrConfig, int(cfg.Products))
	}
	maxBits := cfg.MaxBits
	if maxBits == 0 {
		maxBits = MaxBits
	}
	if maxBits < MinBits || maxBits > MaxBits {
		return p, fmt.Errorf("%w: max bits %d", ErrBits, cfg.MaxBits)
	}
	p.ESCBlock = cfg.ESCBlock
	if p.ESCBlock == 0 {
		p.ESCBlock = DefaultESCBlock
	}
	if p.ESCBlock < 0 || cfg.Chunk < 0 || cfg.Workers < 0 {
		return p, fmt.Errorf("%w: ESC block %d, chunk %d, workers %d", ErrConfig, cfg.ESCBlock, cfg.Chunk, cfg.Workers)
	}
	a, b = a[:m*k], b[:k*n]
	p.Bits = cfg.Bits
	held := fmt.Sprintf("%d bits", cfg.Bits) // what the reasons say the slices hold
	if cfg.Slices != 0 {
		p.Bits = Capacity(cfg.Slices)
		held = fmt.Sprintf("%d slices (%d bits)", cfg.Slices, p.Bits)
	}
	if cfg.Mode != Fixed {
		if HasInfNaN(a) || HasInfNaN(b) {
			p.InfNaN, p.Fallback = true, true
			p.Reason = "Inf or NaN in A or B: native DGEMM"
			return p, nil
		}
	}
	muA, muB, err := LineMaxima(a, b, m, k, n, cfg.Stop)
	if err != nil {
		return p, err
	}
	p.ScalesA, p.ScalesB = scalesOf(muA), scalesOf(muB)
	bits := p.Bits
	p.Reason = fmt.Sprintf("%s: %s", cfg.Mode, held)
	if cfg.Mode != Fixed {
		stopped := &StoppedError{Phase: "the ESC"}
		ta, ok := rowBlocks(a, m, k, p.ESCBlock, cfg.Stop)
		if !ok {
			return p, stopped
		}
		tb, ok := colBlocks(b, k, n, p.ESCBlock, cfg.Stop)
		if !ok {
			return p, stopped
		}
		if p.ESC, p.Bounded, ok = escTables(&ta, &tb, p.ScalesA, p.ScalesB, cfg.Stop); !ok {
			return p, stopped
		}
		p.ESCDone = true
		if cfg.Mode == Dynamic {
			bits = cfg.Bits + p.ESC
			p.Bits = bits
			if !p.Bounded || bits > maxBits {
				why := fmt.Sprintf("W = %d + ESC %d = %d > max bits %d", cfg.Bits, p.ESC, bits, maxBits)
				if !p.Bounded {
					why = "ESC unbounded (a block pair with ẑ = −∞)"
				}
				if cfg.Fallback {
					p.Fallback = true
					p.Reason = why + ": native DGEMM"
					return p, nil
				}
				p.Capped = true
				bits = maxBits
				p.Reason = why + fmt.Sprintf(": capped at %d bits", maxBits)
			} else {
				p.Reason = fmt.Sprintf("dynamic: W = %d + ESC %d = %d bits", cfg.Bits, p.ESC, bits)
			}
		} else {
			p.Reason = fmt.Sprintf("forced: %s (ESC %d)", held, p.ESC)
			if !p.Bounded {
				p.Reason = fmt.Sprintf("forced: %s (ESC unbounded: a block pair with ẑ = −∞)", held)
			}
		}
	}
	p.Slices, _ = SlicesFor(bits)
	if cfg.Slices != 0 {
		p.Slices = cfg.Slices
	}
	p.Capacity = Capacity(p.Slices)
	p.Chunk = Chunks(k, p.Slices, p.Products)
	if cfg.Chunk != 0 {
		if cfg.Chunk > MaxChunk(p.Products.MaxPairs(p.Slices)) {
			return p, fmt.Errorf("%w: chunk %d > MaxChunk(%d) = %d", ErrConfig, cfg.Chunk,
				p.Products.MaxPairs(p.Slices), MaxChunk(p.Products.MaxPairs(p.Slices)))
		}
		p.Chunk = cfg.Chunk
	}
	return p, nil
}

// Digits slices A by rows and B by columns into p.Slices digit planes each
// (SliceRows, SliceCols with the plan's scales). It returns nil planes for a
// fallback plan.
func (p *Plan) Digits(a, b []float64) (pa, pb [][]int8) {
	pa, pb, _ = p.DigitsUntil(a, b, nil)
	return pa, pb
}

// DigitsUntil is Digits, asking stop (nil: never) row by row; once it
// says true it returns nil planes and false.
func (p *Plan) DigitsUntil(a, b []float64, stop func() bool) (pa, pb [][]int8, ok bool) {
	if p.Fallback || p.Slices == 0 {
		return nil, nil, true
	}
	if pa = sliceRows(a, p.M, p.K, p.Slices, p.ScalesA, stop); pa == nil {
		return nil, nil, false
	}
	if pb = sliceCols(b, p.K, p.N, p.Slices, p.ScalesB, stop); pb == nil {
		return nil, nil, false
	}
	return pa, pb, true
}

// GEMM computes C = α·A·B + β·C0 (A m×k, B k×n, C0 m×n or nil when β = 0,
// all row-major) with the emulated DGEMM of the plan cfg produces, or with
// the native DGEMM when the plan falls back. The result is bit-identical to
// MakePlan + Digits + GEMMTile over the whole matrix + Epilogue.
func GEMM(a, b, c0 []float64, alpha, beta float64, m, k, n int, cfg Config) ([]float64, Plan, error) {
	p, err := MakePlan(a, b, m, k, n, cfg)
	if err != nil {
		return nil, p, err
	}
	if beta != 0 && len(c0) < m*n {
		return nil, p, fmt.Errorf("%w: len(c0)=%d < m·n=%d", ErrShape, len(c0), m*n)
	}
	if p.Fallback {
		native := cfg.Native
		if native == nil {
			native = NativeGEMM
		}
		return native(a, b, c0, alpha, beta, m, k, n), p, nil
	}
	pa, pb := p.Digits(a, b)
	c := GEMMTile(&p, pa, pb, 0, m, 0, n)
	Epilogue(c, alpha, beta, c0)
	return c, p, nil
}

// tileWidth is the column-block width of the golden kernel (its int64
// accumulators for one row, Σ_t ceil(u_max(t)/2)·tileWidth·8 bytes, stay in
// L1 for s = 7).
const tileWidth = 128

// GEMMTile returns the scaled products P(i,j) (before α and β) for the rows
// [r0, r0+rows) and the columns [col0, col0+cols), row-major rows×cols, from
// the digit planes of the whole matrices (pa from SliceRows, m×k; pb from
// SliceCols, k×n). Every output gets the same bits as in the full GEMM: for
// each k-chunk in increasing order, for d = 2 … MaxDiagonal in increasing
// order, acc += float64(D_{c,d}(i,j))·2^(−8(d−2)), then ApplyScales.
//
// The integers D are computed exactly with int64 arithmetic, two B digits
// packed per word (SWAR: one field per digit, 32 bits each; the chunk bound
// keeps each field's sum within INT32), on p.Workers goroutines splitting
// the rows; each output is computed by one goroutine, so the bits do not
// depend on the worker count.
func GEMMTile(p *Plan, pa, pb [][]int8, r0, rows, col0, cols int) []float64 {
	s, k, n := len(pa), p.K, p.N
	out := make([]float64, rows*cols)
	if rows <= 0 || cols <= 0 {
		return out
	}
	chunk := p.Chunk
	if chunk <= 0 {
		chunk = max(k, 1)
	}
	dmax := p.Products.MaxDiagonal(s)
	weights := make([]float64, dmax+1)
	for d := 2; d <= dmax; d++ {
		weights[d] = Weight(d)
	}
	nq := (s + 1) / 2
	// qn[t] = number of packed B words used with A digit t (1-based t).
	qn := make([]int, s+1)
	qoff := make([]int, s+2)
	for t := 1; t <= s; t++ {
		umax := min(s, dmax-t)
		qn[t] = (umax + 1) / 2
		qoff[t+1] = qoff[t] + qn[t]
	}
	workers := p.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = max(1, min(workers, (rows+1)/2))
	pk := make([]int64, nq*k*min(tileWidth, cols))
	for jb := 0; jb < cols; jb += tileWidth {
		w := min(tileWidth, cols-jb)
		c0 := col0 + jb
		for q := 0; q < nq; q++ {
			lo := pb[2*q]
			var hi []int8
			if 2*q+1 < s {
				hi = pb[2*q+1]
			}
			for l := 0; l < k; l++ {
				dst := pk[(q*k+l)*w : (q*k+l)*w+w]
				src := lo[l*n+c0 : l*n+c0+w]
				for jj := range dst {
					dst[jj] = int64(src[jj])
				}
				if hi != nil {
					src = hi[l*n+c0 : l*n+c0+w]
					for jj := range dst {
						dst[jj] += int64(src[jj]) << 32
					}
				}
			}
		}
		var wg sync.WaitGroup
		for wk := 0; wk < workers; wk++ {
			wg.Add(1)
			go func(wk int) {
				defer wg.Done()
				// Rows are processed in pairs sharing each load of packed B.
				var acc [2][]int64
				acc[0], acc[1] = make([]int64, qoff[s+1]*w), make([]int64, qoff[s+1]*w)
				D := make([]int64, (dmax+2)*w) // diagonals 0 … dmax+1 (the last catches nothing)
				var fa [2][]float64
				fa[0], fa[1] = make([]float64, w), make([]float64, w)
				// flush adds one chunk's diagonal sums of a row to its FP64
				// accumulator, diagonal by diagonal in increasing order.
				flush := func(ac []int64, f []float64) {
					clear(D)
					for t := 1; t <= s; t++ {
						for q := 0; q < qn[t]; q++ {
							a := ac[(qoff[t]+q)*w : (qoff[t]+q+1)*w]
							dl := t + 2*q + 1 // diagonal of the low field (u = 2q+1)
							dh := dl + 1      // diagonal of the high field (u = 2q+2)
							hasHi := 2*q+2 <= s && dh <= dmax
							Dl := D[dl*w : dl*w+w]
							Dh := D[dh*w : dh*w+w]
							for jj, v := range a {
								lo := int64(int32(v))
								Dl[jj] += lo
								if hasHi {
									Dh[jj] += (v - lo) >> 32
								}
							}
						}
					}
					for d := 2; d <= dmax; d++ {
						wd := weights[d]
						Dd := D[d*w : d*w+w]
						for jj := range f {
							f[jj] += float64(float64(Dd[jj]) * wd)
						}
					}
				}
				for pi := wk; 2*pi < rows; pi += workers {
					ii0, ii1 := 2*pi, 2*pi+1
					has1 := ii1 < rows
					i0, i1 := r0+ii0, r0+ii1
					clear(fa[0])
					clear(fa[1])
					for l0 := 0; l0 < k; l0 += chunk {
						l1 := min(k, l0+chunk)
						clear(acc[0])
						clear(acc[1])
						for l := l0; l < l1; l++ {
							for t := 1; t <= s; t++ {
								a0 := int64(pa[t-1][i0*k+l])
								a1 := int64(0)
								if has1 {
									a1 = int64(pa[t-1][i1*k+l])
								}
								if a0 == 0 && a1 == 0 {
									continue
								}
								for q := 0; q < qn[t]; q++ {
									off := (qoff[t] + q) * w
									ac0 := acc[0][off : off+w]
									ac1 := acc[1][off : off+w]
									row := pk[(q*k+l)*w : (q*k+l+1)*w]
									row = row[:len(ac0)]
									ac1 = ac1[:len(ac0)]
									for jj, bv := range row {
										ac0[jj] += a0 * bv
										ac1[jj] += a1 * bv
									}
								}
							}
						}
						flush(acc[0], fa[0])
						if has1 {
							flush(acc[1], fa[1])
						}
					}
					for r, ii := range [2]int{ii0, ii1} {
						if ii >= rows {
							break
						}
						dst := out[ii*cols+jb : ii*cols+jb+w]
						si := p.ScalesA[r0+ii].Sigma - 14
						for jj := range dst {
							dst[jj] = math.Ldexp(fa[r][jj], si+p.ScalesB[c0+jj].Sigma)
						}
					}
				}
			}(wk)
		}
		wg.Wait()
	}
	return out
}
