package crt

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/big"
)

// Limits of the number of moduli.
const (
	MinModuli = 1
	// MaxModuli keeps P = Π p_r below 2^192 (three 64-bit limbs; P for 24
	// moduli is about 2^184.6) and every modulus above 128 (Garner's
	// subtraction in uint32 needs 2·p_r > 255).
	MaxModuli = 24
)

// moduliTable is the fixed list of moduli, in decreasing order: the greedy
// pairwise-coprime sequence from 256 down (each integer is taken when it is
// coprime with all those already taken). TestModuliGreedy rebuilds it.
var moduliTable = [MaxModuli]int{
	256, 255, 253, 251, 247, 241, 239, 233, 229, 227, 223, 217,
	211, 199, 197, 193, 191, 181, 179, 173, 167, 163, 157, 151,
}

// ErrModuli reports a number of moduli outside [MinModuli, MaxModuli].
var ErrModuli = errors.New("crt: number of moduli outside [1, 24]")

// ErrDepth reports that N moduli cannot hold a product of depth k even with
// 1-bit operands (k > (P−1)/2).
var ErrDepth = errors.New("crt: too few moduli for the inner dimension k")

// Moduli returns the first n moduli p_1 > p_2 > … > p_n of the fixed list
// (256, 255 = 3·5·17, 253 = 11·23, 251, 247 = 13·19, 241, 239, 233, 229,
// 227, 223, 217 = 7·31, 211, 199, 197, 193, 191, 181, 179, 173, 167, 163,
// 157, 151), pairwise coprime. It returns an error wrapping ErrModuli for n
// outside [MinModuli, MaxModuli].
func Moduli(n int) ([]int, error) {
	if n < MinModuli || n > MaxModuli {
		return nil, fmt.Errorf("%w: %d", ErrModuli, n)
	}
	return append([]int(nil), moduliTable[:n]...), nil
}

// ResidueBound returns the largest |residue| of modulus p: 128 for p = 256
// (range [−128, 127]) and (p−1)/2 for odd p (range [−(p−1)/2, (p−1)/2]).
func ResidueBound(p int) int {
	if p == 256 {
		return 128
	}
	return (p - 1) / 2
}

// Basis holds the constants of the CRT over the first N moduli.
type Basis struct {
	// Moduli are p_1 … p_N.
	Moduli []int
	// P is Π p_r and Half is H = floor((P−1)/2), the largest |C'| that the
	// symmetric reconstruction returns.
	P, Half *big.Int
	// inv[r][q] = p_q^(−1) mod p_r for q < r (Garner).
	inv [][]uint32
	// pow2[r][s] = 2^s mod p_r for s < len(pow2[r]).
	pow2 [][]uint32
	// p3, h3: P and H as little-endian 64-bit limbs.
	p3, h3 [3]uint64
}

// pow2Len bounds the shifts of the scaled operands (A' = M·2^s with
// 0 ≤ s ≤ b − 53 < 100, see Scaled).
const pow2Len = 128

var bases [MaxModuli + 1]*Basis

func init() {
	for n := MinModuli; n <= MaxModuli; n++ {
		bases[n] = newBasis(n)
	}
}

func newBasis(n int) *Basis {
	b := &Basis{Moduli: append([]int(nil), moduliTable[:n]...)}
	b.P = big.NewInt(1)
	for _, p := range b.Moduli {
		b.P.Mul(b.P, big.NewInt(int64(p)))
	}
	b.Half = new(big.Int).Sub(b.P, big.NewInt(1))
	b.Half.Rsh(b.Half, 1)
	if b.P.BitLen() > 192 {
		panic("crt: P exceeds 192 bits")
	}
	b.p3, b.h3 = limbs(b.P), limbs(b.Half)
	b.inv = make([][]uint32, n)
	b.pow2 = make([][]uint32, n)
	for r, pr := range b.Moduli {
		b.inv[r] = make([]uint32, r)
		for q := 0; q < r; q++ {
			x := new(big.Int).ModInverse(big.NewInt(int64(b.Moduli[q]%pr)), big.NewInt(int64(pr)))
			if x == nil {
				panic("crt: moduli not coprime")
			}
			b.inv[r][q] = uint32(x.Int64())
		}
		b.pow2[r] = make([]uint32, pow2Len)
		v := 1 % pr
		for s := range b.pow2[r] {
			b.pow2[r][s] = uint32(v)
			v = v * 2 % pr
		}
	}
	return b
}

// limbs returns x (below 2^192) as three little-endian 64-bit limbs, on
// any word size (big.Int's words are 32 bits on 386 and arm).
func limbs(x *big.Int) (l [3]uint64) {
	var b [24]byte
	x.FillBytes(b[:]) // big-endian
	for i := range l {
		l[i] = binary.BigEndian.Uint64(b[16-8*i:])
	}
	return l
}

// BasisFor returns the (shared, read-only) Basis of the first n moduli.
func BasisFor(n int) (*Basis, error) {
	if n < MinModuli || n > MaxModuli {
		return nil, fmt.Errorf("%w: %d", ErrModuli, n)
	}
	return bases[n], nil
}

// Budget returns the operand bit budgets of N moduli at depth k: T is the
// largest integer with max(k,1)·2^T ≤ H = floor((P−1)/2), bA = ceil(T/2),
// bB = floor(T/2) (A gets the odd bit). ok is false when T < 0 (k > H) or
// n is out of range.
func Budget(n, k int) (bA, bB int, ok bool) {
	b, err := BasisFor(n)
	if err != nil {
		return 0, 0, false
	}
	q := new(big.Int).Quo(b.Half, big.NewInt(int64(max(k, 1))))
	t := q.BitLen() - 1
	if t < 0 {
		return 0, 0, false
	}
	return t - t/2, t / 2, true
}

// BitsFor returns the effective mantissa bits W that n moduli give at
// depth k: W = bB + 1 = floor(T/2) + 1, so that every scaled operand x of
// a line with |x| < 2^σ is represented with error ≤ 2^(σ−W) (round to
// nearest at 2^(σ−b), b ≥ bB). This is the same form as Ozaki-I's
// capacity 8s − 1 (error < 2^(σ−(8s−1)) per digit expansion), so Ozaki-I
// needs ozaki.SlicesFor(W) slices for the same per-operand accuracy. It
// returns 0 when n is out of range or n moduli cannot hold depth k.
func BitsFor(n, k int) int {
	_, bB, ok := Budget(n, k)
	if !ok {
		return 0
	}
	return bB + 1
}

// GEMMCount returns the number of INT8 GEMMs of Ozaki-II with n moduli:
// n, one per modulus (linear), against s(s+1)/2 for Ozaki-I's triangular
// product set (ozaki.Triangular.Count(s)).
func GEMMCount(n int) int { return n }

// MaxInt32 is the largest INT32 accumulator value, 2^31 − 1.
const MaxInt32 = 1<<31 - 1

// ChunkAlign is the granularity of the golden model's k-chunks.
const ChunkAlign = 64

// MaxChunk returns the longest inner length L of one INT8 GEMM of residues
// of modulus p that INT32 accumulation holds exactly:
// L = floor((2^31−1)/ResidueBound(p)²): 131071 for p = 256 (|r| ≤ 128),
// 133144 for 255 (|r| ≤ 127). Every product of two residues has magnitude
// ≤ ResidueBound(p)², so L such products sum to at most 2^31 − 1 in
// magnitude.
func MaxChunk(p int) int {
	h := ResidueBound(p)
	return MaxInt32 / (h * h)
}

// Chunks returns the golden k-chunk length for the moduli: k when
// k ≤ min_r MaxChunk(p_r) (= 131071 whenever 256 is used, i.e. always),
// else the largest multiple of ChunkAlign not above that bound. The chunk
// only concerns the machine's INT32 accumulators: the residues C_r, hence
// the result bits, do not depend on it.
func Chunks(k int, moduli []int) int {
	l := MaxInt32
	for _, p := range moduli {
		l = min(l, MaxChunk(p))
	}
	if k <= l {
		return max(k, 1)
	}
	return l / ChunkAlign * ChunkAlign
}
