// Package ozaki is the golden numerical model of Ozaki scheme I with ESC and
// ADP (Schwarz et al., SCA/HPCAsia 2026; digest in
// shared/papers/002-ozaki-adp-digest.md): an FP64 GEMM C = α·A·B + β·C0
// emulated with exact INT8 products of fixed-point slices. The definitions
// below are the contract the simulated machine follows bit for bit.
// Matrices are row-major float64 slices: A is m×k, B is k×n, C and C0 m×n.
//
// # Exponents
//
// E(x) = floor(log2|x|) for finite nonzero x, with the TRUE exponent of
// subnormals (E(2^−1074) = −1074; Exp). E(0) = NegInf, a sentinel that acts
// as −∞: NegInf + anything stays −∞ (AddExp, IsNegInf), and it is below
// every real exponent in max/min.
//
// # 1. Scales (ScaleRows, ScaleCols)
//
// For each row of A (column of B): μ = max |x| over the line. If μ = 0 the
// line is zero: σ = 0, all its digits are 0, its ESC exponent is NegInf and
// its outputs are exactly α·0 + β·C0. Otherwise σ = E(μ) + 1, plus one
// ("the bump") when μ·2^−E(μ) ≥ 1.984375 = 2·127/128. The ESC exponent of
// the line is e = σ − 1, so a bumped line counts one padding bit more and
// ADP's slice count automatically pays for the bit the bump costs.
//
// Why the bump: after it, every x of the line has |x|·2^−σ < 127/128 (if
// not bumped, |x| ≤ μ < 1.984375·2^E(μ) = (127/128)·2^σ; if bumped,
// |x| < 2^(E(μ)+1) = 2^σ/2). Hence N = floor(x·2^(8s−1−σ)) satisfies
// |N| ≤ 127·256^(s−1) ≤ 127·(256^s − 1)/255, the largest value of s balanced
// digits, and N ≥ −127·256^(s−1) ≥ −128·(256^s − 1)/255, the smallest. Without
// the bump, a line maximum with significand ≥ 1.9921875 can overflow the
// leading digit (TestBumpThreshold shows 0x1.FFFFFFFFFFFFFp0 does for s ≥ 2).
//
// # 2. Slicing into s balanced INT8 digits (SliceValue, SliceRows, SliceCols)
//
// For x in a line of scale σ: N = floor(x·2^(8s−1−σ)) (rounding toward −∞,
// the paper's RD leading slice: truncation of the aligned fixed-point value,
// so a tiny negative entry becomes −2^(σ+1−8s), not 0), then the balanced
// base-256 digits d_1 … d_s ∈ [−128, 127] with N = Σ_t d_t·256^(s−t),
// computed from the bottom as d = ((N + 128) mod 256) − 128 (the low byte of
// N read as int8: the paper's two's-complement remap, 123·256 + 200 =
// 124·256 − 56), N ← (N − d)/256. Then x ≈ 2^(σ−7)·Σ_t d_t·2^(−8(t−1)), with
// 0 ≤ x − that < 2^(σ+1−8s); it is exact when E(x) − 52 ≥ σ + 1 − 8s.
// Computation: x = M·2^q with |M| < 2^53 (math.Frexp, exact for subnormals),
// so N = M·2^(q+8s−1−σ) is either M shifted left by r < 8 bits times
// 256^offset (fits int64) or an arithmetic right shift of M (which is
// floor); the digits come from that int64 exactly, for any σ in
// [−1073, 1025] and s ≤ 26 (TestSliceFastMatchesBig checks it against
// math/big). Non-finite x slices to all-zero digits (Fixed mode only; ADP
// never slices them).
//
// # 3. Capacity and slice count (SlicesFor, Capacity)
//
// s slices hold W = 8s − 1 mantissa bits relative to the scale exponent;
// SlicesFor(bits) = ceil((bits+1)/8): 53 → 7, 55 → 7, 56 → 8, 200 → 26. A
// 53-bit mantissa needs 7 slices here, 8 with naive signed slices (7 bits
// each). Bit settings outside [1, 200] return ErrBits.
//
// # 4. ESC (ESC, ESCTables, ESCPair, RowBlocks, ColBlocks)
//
// Exact: ESC_raw(i,j) = e_A[i] + e_B[j] − max_l (E(A[i,l]) + E(B[l,j])).
// If row i or column j is zero, or every product is zero, the pair
// contributes nothing (its result is exactly 0). Coarsened with block
// length b along k: per block, MaxX, MinX (row of A) and MaxY, MinY (column
// of B), zeros counting as NegInf in BOTH min and max (skipping them would
// let x = [big, 0], y = [0, big'] claim a product big+big' that does not
// exist, an unsafe underestimate of the ESC); ẑ(i,j) = max over blocks of
// max(MaxX + MinY, MinX + MaxY) ≤ the true max product exponent (paper's
// proof); ESC_raw(i,j) = e_A[i] + e_B[j] − ẑ(i,j). When ẑ = −∞ with b > 1
// while row i and column j are nonzero, the estimate is unbounded
// (Unbounded, bounded = false): ADP falls back. Matrix ESC = max over
// (i,j) of ESC_raw, PLUS 1 (the paper's margin: a mantissa product is < 4);
// with no contributing pair it is 0 + 1. Required bits for FP64 accuracy:
// W = 53 + ESC; slices SlicesFor(W). The computation is a (max,+) product
// over the block tables, O(m·n·k/b).
//
// # 5. Products (ProductSet, DiagonalProducts, MaxChunk, Chunks)
//
// Triangular set t + u ≤ s + 1 (s(s+1)/2 products, 28 for s = 7; default)
// or Square (s²). Products are grouped by diagonal d = t + u (same weight).
// For each k-chunk c and diagonal d, D_{c,d}(i,j) = Σ_{(t,u) on d in the set}
// Σ_{l in c} a_t[i,l]·b_u[l,j], exactly: one INT8 GEMM with INT32
// accumulation over the concatenation (A_t1|A_t2|…)·(B_u1;B_u2;…). It cannot
// overflow when pairs(d)·chunk·2^14 ≤ 2^31 − 1 (|a·b| ≤ 2^14, the worst case
// all digits −128): MaxChunk(pairs) = floor((2^31−1)/(pairs·2^14)). The
// golden chunk (Chunks) is k when k ≤ MaxChunk(s) (s = the most pairs on a
// diagonal, for both sets), else the largest multiple of 64 not above it;
// chunks are [0,L), [L,2L), … in order.
//
// # 6. Recombination (Recombine, ApplyScales, Epilogue)
//
// acc(i,j) = +0.0; for each chunk in increasing order, for d = 2, 3, …,
// (s+1 triangular; 2s square): acc = acc + float64(D_{c,d}(i,j))·2^(−8(d−2)).
// The int32 → float64 conversion and the power-of-two multiplication are
// exact; each addition rounds once (RNE). Then P(i,j) =
// acc·2^(σA_i + σB_j − 14), one correctly rounded scaling (math.Ldexp; RNE
// into the subnormal range and to ±Inf on overflow, checked against
// math/big by TestLdexpRounding). Finally, if α ≠ 1, P = α·P (RNE); if
// β ≠ 0, P = P + β·C0 (two roundings, β·C0 then the sum; never fused).
// Infs therefore arise only in the final scaling and are not sticky.
//
// # 7. ADP and the golden GEMM (Config, Mode, MakePlan, Plan, GEMM, GEMMTile)
//
// Fixed: slices = SlicesFor(Bits), no scan, no ESC; non-finite entries are
// not detected: the scales ignore them and they slice to zero digits, so
// the result treats them as 0 (deterministic, no panic). Forced: scan and
// ESC run and are reported, slices = SlicesFor(Bits). Dynamic: W = Bits +
// ESC; if W > MaxBits (default 200) or the ESC is unbounded: fallback
// (Config.Fallback) or SlicesFor(MaxBits) (Plan.Capped). In Forced and
// Dynamic modes an Inf or NaN in A or B routes to the native DGEMM
// (Config.Native, default NativeGEMM) before any ESC or slicing, whatever
// Fallback says. GEMMTile gives, for any tile, the bits of the full GEMM.
//
// # 8. Exact reference (Superacc, ExactDot, AbsDot, DotAndAbs, RefGEMM, Componentwise)
//
// ExactDot accumulates exact products (53×53-bit integer products, not
// FMA-based TwoProduct, so underflowing products stay exact) in a
// fixed-point superaccumulator of 32-bit limbs covering 2^−2148 … 2^2204
// and rounds once (RNE): from the limbs' top 64 bits and a sticky bit
// where the result is normal, through math/big near the subnormal range
// and overflow. DotAndAbs gives ExactDot and AbsDot in one pass. Componentwise errors are |got − ref| /
// (u·(|A||B|)_ij), u = 2^−53, skipping (and counting) entries with
// |A||B| = 0.
//
// # Decisions the paper leaves open (digest §6.6) and how they are resolved
//
//   - Product set: triangular by default (the paper's 22% = 36 → 28
//     products); square selectable.
//   - Digit encoding: balanced INT8 digits (the production two's-complement
//     remap), s8×s8 products only; leading slice by floor (RD).
//   - Remap overflow of the leading slice: the bump (scale one power of two
//     higher when μ·2^−E(μ) ≥ 1.984375), paid for by ESC (e = σ − 1). Side
//     effect: on U(0,1) rows of 64+ entries a bump is likely, so the exact
//     ESC_raw there is up to 2 (bump_A + bump_B) instead of 0.
//   - W → s: s = ceil((W+1)/8), i.e. capacity 8s − 1 ≥ W (55 bits = 7
//     slices, as in the paper).
//   - Zeros: E(0) = −∞ in the ESC min and max; zero lines give exactly
//     α·0 + β·C0. Subnormals: true exponent (no clamping at −1022).
//   - ESC block: the paper does not give it. This package's default
//     (Config.ESCBlock 0, DefaultESCBlock) is 8; the simulator's runs
//     (kind ozaki's esc_block, docs/ozaki.md) default to 32. The (max,+)
//     pass takes m·n·k/B block steps of 2 adds and 2 maxes (4 operations;
//     one packed DPX add-max on Hopper and Blackwell): at B = 8 about 1%,
//     at B = 32 about 0.2%, of the 56·m·n·k operations of 28 INT8 GEMMs
//     (well under the paper's 10% ADP budget). The price is the
//     overestimate: on U(0,1) at 64×64 the ESC (with its +1) is 3 exact,
//     5–6 with block 8, 9–11 with block 32 (seeds 1–3), so block 32 can
//     cost dynamic precision one more slice than block 8.
//   - k-chunks: the largest multiple of 64 under the INT32 bound of the
//     fullest diagonal (k itself when it fits), so realistic k (≤ 18724 for
//     s = 7) is one chunk and results are invariant under k permutations.
//   - Recombination: FP64, chunk-major then diagonal-ascending, one rounding
//     per addition, then one scaling rounding; no wide-integer path.
//   - Inf/NaN: ADP falls back; Fixed mode treats them as 0. Tiny-size
//     performance heuristic: not modelled (the caller decides).
//
// Ozaki scheme II (INT8 GEMMs of residues modulo coprime moduli and a CRT
// reconstruction, N GEMMs for N moduli) is the subpackage ozaki/crt, with
// the same shape of API (Config, MakePlan, GEMMTile, GEMM).
package ozaki
