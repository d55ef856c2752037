package crt

import (
	"fmt"
	"math"
	"runtime"
	"sync"

	"github.com/davinci-sim/davinci-sim/ozaki"
)

// ErrShape reports inconsistent dimensions or slice lengths (the same value
// as ozaki.ErrShape, so errors.Is works with either package).
var ErrShape = ozaki.ErrShape

// ErrConfig reports an invalid configuration value (the same value as
// ozaki.ErrConfig).
var ErrConfig = ozaki.ErrConfig

// ErrStopped reports that Config.Stop ended MakePlan (the same value as
// ozaki.ErrStopped).
var ErrStopped = ozaki.ErrStopped

// Config configures the Ozaki-II emulated DGEMM.
type Config struct {
	// Moduli is the number N of moduli, in [MinModuli, MaxModuli]: the
	// precision knob (BitsFor(N, k) bits, N INT8 GEMMs).
	Moduli int
	// Chunk overrides the k-chunk length of the INT8 GEMMs (1 … the
	// MaxChunk bound); 0 means Chunks(k, moduli). It does not change the
	// result bits.
	Chunk int
	// Workers is the number of goroutines of the golden GEMM (0 =
	// GOMAXPROCS). The result bits do not depend on it.
	Workers int
	// Native computes the DGEMM of the Inf/NaN fallback; nil means
	// ozaki.NativeGEMM.
	Native func(a, b, c0 []float64, alpha, beta float64, m, k, n int) []float64
	// Stop, if not nil, is asked during MakePlan's scales (every
	// stopwork.Every elements or so); once it says true MakePlan returns
	// an *ozaki.StoppedError in "the scales" (errors.Is ErrStopped).
	Stop func() bool
}

// Plan is everything the emulation needs besides the residue matrices.
type Plan struct {
	M, K, N int
	// Moduli are p_1 > … > p_N (nil on a fallback).
	Moduli []int
	// Basis holds P, H and the reconstruction constants (nil on a fallback).
	Basis *Basis
	// T is the bit budget, the largest integer with max(K,1)·2^T ≤ H;
	// BitsA = ceil(T/2) and BitsB = floor(T/2) bound the scaled integers,
	// |A'| ≤ 2^BitsA and |B'| ≤ 2^BitsB.
	T, BitsA, BitsB int
	// Bits is BitsFor(N, K) = BitsB + 1.
	Bits int
	// ScalesA are the row scales of A, ScalesB the column scales of B.
	ScalesA, ScalesB []Scale
	// Chunk is the k-chunk length of the INT8 GEMMs.
	Chunk int
	// InfNaN reports that A or B holds Inf or NaN; Fallback that the native
	// DGEMM computes the result (only then).
	InfNaN, Fallback bool
	// Reason says in words what the plan is.
	Reason string
	// Workers is the goroutine count of GEMMTile (0 = GOMAXPROCS).
	Workers int
}

func hasInfNaN(x []float64) bool {
	for _, v := range x {
		if math.IsInf(v, 0) || math.IsNaN(v) {
			return true
		}
	}
	return false
}

// MakePlan validates the shapes and the configuration, scans A and B for
// Inf/NaN (found: Fallback, nothing else is computed), and otherwise fixes
// the moduli, the bit budget (ErrDepth when N moduli cannot hold depth k),
// the row scales of A, the column scales of B and the k-chunk. It returns
// an error (never panics) for bad input.
func MakePlan(a, b []float64, m, k, n int, cfg Config) (Plan, error) {
	p := Plan{M: m, K: k, N: n, Workers: cfg.Workers}
	if m < 0 || k < 0 || n < 0 || len(a) < m*k || len(b) < k*n {
		return p, fmt.Errorf("%w: m=%d k=%d n=%d len(a)=%d len(b)=%d", ErrShape, m, k, n, len(a), len(b))
	}
	bs, err := BasisFor(cfg.Moduli)
	if err != nil {
		return p, err
	}
	if cfg.Chunk < 0 || cfg.Workers < 0 {
		return p, fmt.Errorf("%w: chunk %d, workers %d", ErrConfig, cfg.Chunk, cfg.Workers)
	}
	bA, bB, ok := Budget(cfg.Moduli, k)
	if !ok {
		return p, fmt.Errorf("%w: %d moduli (H ≈ 2^%d), k = %d", ErrDepth, cfg.Moduli, bs.Half.BitLen()-1, k)
	}
	a, b = a[:m*k], b[:k*n]
	if hasInfNaN(a) || hasInfNaN(b) {
		p.InfNaN, p.Fallback = true, true
		p.Reason = "Inf or NaN in A or B: native DGEMM"
		return p, nil
	}
	p.Moduli, p.Basis = bs.Moduli, bs
	p.BitsA, p.BitsB, p.T = bA, bB, bA+bB
	p.Bits = bB + 1
	muA, muB, err := ozaki.LineMaxima(a, b, m, k, n, cfg.Stop)
	if err != nil {
		return p, err
	}
	p.ScalesA, p.ScalesB = scalesOf(muA), scalesOf(muB)
	p.Chunk = Chunks(k, bs.Moduli)
	if cfg.Chunk != 0 {
		if cfg.Chunk > MaxChunk(256) {
			return p, fmt.Errorf("%w: chunk %d > MaxChunk(256) = %d", ErrConfig, cfg.Chunk, MaxChunk(256))
		}
		p.Chunk = cfg.Chunk
	}
	p.Reason = fmt.Sprintf("ozaki-II: %d moduli, |A'| ≤ 2^%d, |B'| ≤ 2^%d, %d bits", cfg.Moduli, bA, bB, p.Bits)
	return p, nil
}

// Residues returns the INT8 residue matrices: ra[r][i*K+l] is the residue
// of A'_il = RN(A_il·2^(BitsA−σA_i)) modulo p_r, rb[r][l*N+j] that of
// B'_lj = RN(B_lj·2^(BitsB−σB_j)), row-major like A and B. nil for a
// fallback plan.
func (p *Plan) Residues(a, b []float64) (ra, rb [][]int8) {
	ra, rb, _ = p.ResiduesUntil(a, b, nil)
	return ra, rb
}

// ResiduesUntil is Residues asking stop (nil: never) row by row (of A,
// then of B: seconds a row block at 8192²); once it says true it returns
// nil matrices and false.
func (p *Plan) ResiduesUntil(a, b []float64, stop func() bool) (ra, rb [][]int8, ok bool) {
	if p.Fallback || p.Basis == nil {
		return nil, nil, true
	}
	m, k, n := p.M, p.K, p.N
	nm := len(p.Moduli)
	ra, rb = make([][]int8, nm), make([][]int8, nm)
	for r := range ra {
		ra[r], rb[r] = make([]int8, m*k), make([]int8, k*n)
	}
	for i := 0; i < m; i++ {
		if stop != nil && stop() {
			return nil, nil, false
		}
		sg := p.ScalesA[i].Sigma
		for l := 0; l < k; l++ {
			residuesOf(p.Basis, a[i*k+l], sg, p.BitsA, ra, i*k+l)
		}
	}
	for l := 0; l < k; l++ {
		if stop != nil && stop() {
			return nil, nil, false
		}
		for j := 0; j < n; j++ {
			residuesOf(p.Basis, b[l*n+j], p.ScalesB[j].Sigma, p.BitsB, rb, l*n+j)
		}
	}
	return ra, rb, true
}

// ModProducts returns D(i,j) = Σ_{l0≤l<l1} ra[r][i,l]·rb[r][l,j] for the m×k
// residues ra[r] and the k×n residues rb[r] of modulus index r, as an m×n
// row-major []int32: what ONE INT8 GEMM with INT32 accumulation computes.
// It is exact when l1 − l0 ≤ MaxChunk(p_r); to stay independent of p it
// panics when l1 − l0 > MaxChunk(256) = 131071 (the bound of the widest
// residue range, |r| ≤ 128). D ≡ Σ_l A'_il·B'_lj (mod p_r) over the chunk.
func ModProducts(ra, rb [][]int8, m, k, n, r, l0, l1 int) []int32 {
	if l1-l0 > MaxChunk(256) {
		panic(fmt.Sprintf("crt: chunk %d exceeds the INT32 bound %d", l1-l0, MaxChunk(256)))
	}
	out := make([]int32, m*n)
	ozaki.AddInt8Products(out, ra[r], rb[r], m, k, n, l0, l1)
	return out
}

// Reconstruct returns the scaled products P(i,j) = RN(C'_ij·2^(σA_i −
// BitsA + σB_j − BitsB)) for the rows [r0, r0+rows) and columns [c0,
// c0+cols), row-major rows×cols, from cr[r] (rows×cols, row-major): any
// int32 values congruent to C'_ij modulo p_r, e.g. the INT32 result of
// ModProducts when k is one chunk, or chunk results reduced and summed.
// C' is the exact CRT reconstruction (Basis.Float).
func (p *Plan) Reconstruct(cr [][]int32, r0, rows, c0, cols int) []float64 {
	out := make([]float64, rows*cols)
	nm := len(p.Moduli)
	c, v := make([]uint32, nm), make([]uint32, nm)
	for i := 0; i < rows; i++ {
		ea := p.ScalesA[r0+i].Sigma - p.BitsA
		for j := 0; j < cols; j++ {
			for r, pr := range p.Moduli {
				x := cr[r][i*cols+j] % int32(pr)
				if x < 0 {
					x += int32(pr)
				}
				c[r] = uint32(x)
			}
			out[i*cols+j] = p.Basis.round(c, v, ea+p.ScalesB[c0+j].Sigma-p.BitsB)
		}
	}
	return out
}

// GEMM computes C = α·A·B + β·C0 (A m×k, B k×n, C0 m×n or nil when β = 0,
// all row-major) with Ozaki-II, or with the native DGEMM when A or B holds
// Inf/NaN. The result is bit-identical to MakePlan + Residues + GEMMTile
// over the whole matrix + ozaki.Epilogue.
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
			native = ozaki.NativeGEMM
		}
		return native(a, b, c0, alpha, beta, m, k, n), p, nil
	}
	ra, rb := p.Residues(a, b)
	c := GEMMTile(&p, ra, rb, 0, m, 0, n)
	ozaki.Epilogue(c, alpha, beta, c0)
	return c, p, nil
}

// tileWidth is the column-block width of the golden kernel (an even number:
// columns are packed in pairs).
const tileWidth = 128

// GEMMTile returns the scaled products P(i,j) (before α and β) for the rows
// [r0, r0+rows) and the columns [c0, c0+cols), row-major rows×cols, from
// the residues of the whole matrices (Residues). Every output has the bits
// of the full GEMM: C'_ij is an exact integer and is rounded once.
//
// The residue products are computed exactly in int64 with two columns of B
// packed per word (SWAR: a 32-bit field per column; the chunk bound keeps
// each field's sum within INT32), per chunk, then reduced modulo p_r; the
// rows are split over p.Workers goroutines, each output computed by one
// goroutine.
func GEMMTile(p *Plan, ra, rb [][]int8, r0, rows, c0, cols int) []float64 {
	k, n := p.K, p.N
	nm := len(p.Moduli)
	out := make([]float64, rows*cols)
	if rows <= 0 || cols <= 0 {
		return out
	}
	chunk := p.Chunk
	if chunk <= 0 {
		chunk = max(k, 1)
	}
	workers := p.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = max(1, min(workers, (rows+1)/2))
	const ww = tileWidth / 2
	pk := make([]int64, k*ww)
	res := make([][]uint32, nm) // res[r][ii*tileWidth+jj] ∈ [0, p_r)
	for r := range res {
		res[r] = make([]uint32, rows*tileWidth)
	}
	for jb := 0; jb < cols; jb += tileWidth {
		w := min(tileWidth, cols-jb)
		wp := (w + 1) / 2
		cb := c0 + jb
		for r, pr := range p.Moduli {
			B := rb[r]
			for l := 0; l < k; l++ {
				dst := pk[l*ww : l*ww+wp]
				src := B[l*n+cb : l*n+cb+w]
				for q := range dst {
					v := int64(src[2*q])
					if 2*q+1 < w {
						v += int64(src[2*q+1]) << 32
					}
					dst[q] = v
				}
			}
			A := ra[r]
			mod := int64(pr)
			var wg sync.WaitGroup
			for wk := 0; wk < workers; wk++ {
				wg.Add(1)
				go func(wk int) {
					defer wg.Done()
					var acc [2][ww]int64
					for pi := wk; 2*pi < rows; pi += workers {
						ii0, ii1 := 2*pi, 2*pi+1
						has1 := ii1 < rows
						i0, i1 := r0+ii0, r0+ii1
						rs0 := res[r][ii0*tileWidth : ii0*tileWidth+w]
						var rs1 []uint32
						if has1 {
							rs1 = res[r][ii1*tileWidth : ii1*tileWidth+w]
						}
						clear(rs0)
						clear(rs1)
						for l0 := 0; l0 < k; l0 += chunk {
							l1 := min(k, l0+chunk)
							acc[0], acc[1] = [ww]int64{}, [ww]int64{}
							for l := l0; l < l1; l++ {
								a0 := int64(A[i0*k+l])
								a1 := int64(0)
								if has1 {
									a1 = int64(A[i1*k+l])
								}
								if a0 == 0 && a1 == 0 {
									continue
								}
								row := pk[l*ww : l*ww+wp]
								ac0, ac1 := acc[0][:len(row)], acc[1][:len(row)]
								for q, bv := range row {
									ac0[q] += a0 * bv
									ac1[q] += a1 * bv
								}
							}
							fold(acc[0][:wp], rs0, mod)
							if has1 {
								fold(acc[1][:wp], rs1, mod)
							}
						}
					}
				}(wk)
			}
			wg.Wait()
		}
		// Reconstruction of the block, rows split over the workers.
		var wg sync.WaitGroup
		for wk := 0; wk < workers; wk++ {
			wg.Add(1)
			go func(wk int) {
				defer wg.Done()
				c, v := make([]uint32, nm), make([]uint32, nm)
				for ii := wk; ii < rows; ii += workers {
					ea := p.ScalesA[r0+ii].Sigma - p.BitsA
					dst := out[ii*cols+jb : ii*cols+jb+w]
					for jj := range dst {
						for r := range c {
							c[r] = res[r][ii*tileWidth+jj]
						}
						dst[jj] = p.Basis.round(c, v, ea+p.ScalesB[cb+jj].Sigma-p.BitsB)
					}
				}
			}(wk)
		}
		wg.Wait()
	}
	return out
}

// fold adds the packed chunk sums acc (field 0: column 2q, field 1: column
// 2q+1, each an exact INT32 value) modulo mod into the residues rs ∈ [0,mod).
func fold(acc []int64, rs []uint32, mod int64) {
	for q, v := range acc {
		lo := int64(int32(v))
		x := (int64(rs[2*q]) + lo%mod + mod) % mod
		rs[2*q] = uint32(x)
		if 2*q+1 < len(rs) {
			hi := (v - lo) >> 32
			rs[2*q+1] = uint32((int64(rs[2*q+1]) + hi%mod + mod) % mod)
		}
	}
}
