package mem

import (
	"math/bits"
	"sync"
)

// The polynomial set index ("ipoly"): a sector number's bits are the
// coefficients of a polynomial over GF(2), and its set is the remainder
// of that polynomial modulo an irreducible one of degree d = the set
// index's bits — Rau's "pseudo-randomly interleaved memory" (ISCA 1991),
// the IPOLY hash Accel-Sim models GPU L2s with (GPU-FACTS §5). The
// remainder is linear (over XOR) in the sector number and x is invertible
// modulo an irreducible polynomial, so the sectors a + j·2^k, j < 2^d,
// with a's bits clear of j·2^k's (a below 2^k, or a multiple of
// 2^(k+d)) — a tile's rows at a power-of-two pitch, the chunks a private
// L2 partition sees of an interleaved stream — fall in 2^d distinct sets;
// a fold of the higher bits onto the lower ones (the "xor" index) has no
// such property: with 2048 sets, the sectors 2048·j + i (i < 256, j < 32)
// fold into 256 of them.

// polyTable is the set index of a sector number, a byte at a time: the
// remainder of b·x^(8k) for byte b at position k (the remainder is
// linear: the four entries XORed). Sector numbers have 32 bits
// (MaxSector; beyond it nothing is cached or looked up).
type polyTable [4][256]uint32

// maxPolyDegree is the largest set index, in bits, of the polynomial index.
const maxPolyDegree = 32

// polyTables holds one table a degree (1 to maxPolyDegree), made on first
// use.
var polyTables [maxPolyDegree + 1]struct {
	once sync.Once
	t    *polyTable
}

// polyIndex returns the table of the irreducible polynomial of degree d
// (1 ≤ d ≤ 32) that irreducible finds first.
func polyIndex(d uint) *polyTable {
	e := &polyTables[d]
	e.once.Do(func() {
		p := irreducible(d)
		var xpow [32]uint64 // x^j mod p
		xpow[0] = 1
		for j := 1; j < 32; j++ {
			xpow[j] = polyMulMod(xpow[j-1], 2, p, d) // ·x
		}
		t := new(polyTable)
		for k := range 4 {
			for b := range 256 {
				var r uint64
				for i := range 8 {
					if b>>i&1 != 0 {
						r ^= xpow[8*k+i]
					}
				}
				t[k][b] = uint32(r)
			}
		}
		e.t = t
	})
	return e.t
}

// index returns sector s's set: s mod the table's polynomial (s below
// 2^32; higher bits are not read).
func (t *polyTable) index(s uint64) uint64 {
	return uint64(t[0][s&0xFF] ^ t[1][s>>8&0xFF] ^ t[2][s>>16&0xFF] ^ t[3][s>>24&0xFF])
}

// irreducible returns an irreducible polynomial over GF(2) of degree d
// (1 ≤ d ≤ 32; bit i the coefficient of x^i): x + 1 for d = 1, else the
// trinomial x^d + x^i + 1 of the largest i that is irreducible, else the
// pentanomial of the largest middle terms — one of the two exists for
// every degree to 32 (TestIrreducible checks each). Large middle terms
// put the remainder of x^d, x^(d+1), … (a sector's bits above the set
// index) in the index's high bits, away from the low bits that
// consecutive sectors already vary: sectors i + 2^k·j (i < 2^k, k ≥ d)
// spread over the sets as a block of consecutive ones does. (With the
// smallest terms, x^11 + x^2 + 1, the sectors 2048·j + i (i < 256, j <
// 32) fall in 256 of 2048 sets, as with the XOR-fold.)
func irreducible(d uint) uint64 {
	top := uint64(1)<<d | 1
	if d == 1 {
		return top
	}
	// One middle term, then three (a polynomial of an even number of
	// terms has the root 1).
	for _, w := range []int{1, 3} {
		if p, ok := irreducibleWith(top, d, d-1, w); ok {
			return p
		}
	}
	panic("mem: no irreducible trinomial or pentanomial") // (not for d ≤ 32)
}

// irreducibleWith searches polynomials top + w middle terms from x^from
// down, the largest first, for an irreducible one.
func irreducibleWith(top uint64, d, from uint, w int) (uint64, bool) {
	if w == 0 {
		return top, isIrreducible(top, d)
	}
	for i := from; i >= 1 && i >= uint(w); i-- {
		if p, ok := irreducibleWith(top|1<<i, d, i-1, w-1); ok {
			return p, true
		}
	}
	return 0, false
}

// isIrreducible is Ben-Or's test: p of degree d has no factor of degree
// i ≤ d/2 iff gcd(x^(2^i) − x mod p, p) = 1 for each such i.
func isIrreducible(p uint64, d uint) bool {
	x := uint64(2)
	r := x
	for i := uint(1); i <= d/2; i++ {
		r = polyMulMod(r, r, p, d)
		if polyGCD(r^x, p) != 1 {
			return false
		}
	}
	return true
}

// polyMulMod returns a·b mod p over GF(2) (a, b of degree below d ≤ 32).
func polyMulMod(a, b, p uint64, d uint) uint64 {
	var r uint64
	for b != 0 {
		if b&1 != 0 {
			r ^= a
		}
		b >>= 1
		a <<= 1
		if a>>d&1 != 0 {
			a ^= p
		}
	}
	return r
}

// polyGCD returns the greatest common divisor of a and b over GF(2).
func polyGCD(a, b uint64) uint64 {
	for b != 0 {
		a, b = b, polyMod(a, b)
	}
	return a
}

// polyMod returns a mod b over GF(2) (b ≠ 0).
func polyMod(a, b uint64) uint64 {
	db := 63 - bits.LeadingZeros64(b)
	for a != 0 {
		da := 63 - bits.LeadingZeros64(a)
		if da < db {
			break
		}
		a ^= b << (da - db)
	}
	return a
}
