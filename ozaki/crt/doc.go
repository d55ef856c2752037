// Package crt is the golden numerical model of Ozaki scheme II (Ozaki,
// Uchino, Imamura 2025, arXiv 2504.08009; GEMMul8, Uchino & Imamura 2025,
// arXiv 2508.03984; pointer in shared/papers/002-ozaki-adp-digest.md §7): an
// FP64 GEMM C = α·A·B + β·C0 emulated with one exact INT8 GEMM per modulus
// of a set of pairwise coprime moduli and a Chinese-remainder (CRT)
// reconstruction. It was derived here from first principles (no access to
// the papers' text); where GEMMul8 may differ is said below. The
// definitions are the contract the simulated machine follows bit for bit.
// Matrices are row-major float64 slices: A is m×k, B is k×n, C and C0 m×n.
//
// The idea: scale A by rows and B by columns to integers A', B'; C' = A'·B'
// is an integer matrix with |C'_ij| < P/2, P = p_1·…·p_N, so it is fixed by
// its residues modulo the p_r; each residue matrix A'·B' mod p_r is one INT8
// GEMM of residues (entries < 256 in magnitude); the CRT gives C' back
// exactly; C = C'·2^(scales), rounded once. The precision knob is N, the
// number of moduli: each modulus adds about log2 p_r ≈ 7.7 bits to P, split
// between A' and B', at the cost of ONE more INT8 GEMM (Ozaki-I: s slices,
// s(s+1)/2 GEMMs). E(x) = floor(log2|x|) is ozaki.Exp (true exponent of
// subnormals).
//
// # 1. Moduli (Moduli, Basis, ResidueBound)
//
// The fixed list, decreasing: 256, 255, 253, 251, 247, 241, 239, 233, 229,
// 227, 223, 217, 211, 199, 197, 193, 191, 181, 179, 173, 167, 163, 157, 151
// (N ≤ MaxModuli = 24; Moduli(N) is the first N). It is the greedy sequence
// from 256 down: an integer is taken when it is coprime with every one
// already taken (255 = 3·5·17, 253 = 11·23, 247 = 13·19, 217 = 7·31 are
// composite but coprime with the rest), so consecutive prefixes maximise P
// for a given N; to my recollection this is GEMMul8's table too (not
// checked against the paper). The residue of an integer X modulo p is its
// representative in [−(p−1)/2, (p−1)/2] for odd p (the symmetric range: at
// most 255 values, so every odd p ≤ 255 fits INT8) and in [−128, 127] for
// p = 256 (the low byte of X read as int8, the same as ozaki.Digit): 256
// is kept because it is coprime with every odd modulus, brings the most
// bits (8) of any modulus and its residue is free (two's-complement
// truncation). 254 = 2·127 and other even numbers are then excluded by
// coprimality. All p_r > 128 (used in §4). log2 P ≈ 8, 16.0, 24.0, 31.9,
// 39.9, 47.8, 55.7, 63.6, 71.4, 79.2, 87.0, 94.8, 102.5, 110.2, 117.8,
// 125.4, 133.0, 140.5, 147.9, 155.4, 162.8, 170.1, 177.4, 184.6 for
// N = 1 … 24 (< 192 bits: three 64-bit limbs).
//
// # 2. Scaling to integers (ScaleRows, ScaleCols, Budget, Scaled)
//
// Bit budget: H = floor((P−1)/2); T = the largest integer with
// max(k,1)·2^T ≤ H (ErrDepth when k > H); bA = ceil(T/2), bB = floor(T/2).
// The budget depends on N and k only, not on the data.
// Scales: for row i of A, μ = max_l |A_il| and σ_i = E(μ) + 1 (so |A_il| <
// 2^σ_i); for column j of B likewise τ_j. A zero line has σ = 0 and all its
// integers 0.
// Integers, round to nearest, ties to even:
//
//	A'_il = RN(A_il·2^(bA−σ_i)),   B'_lj = RN(B_lj·2^(bB−τ_j)).
//
// The products are exact (powers of two), so RN is the only rounding; it is
// computed from the 53-bit integer significand with an int64 shift
// (Scaled: A' = mant·2^shift, shift ≥ 0 when bA > 53) and is exact for
// subnormals and for any σ in [−1073, 1024].
//
// The bound (proof). |A_il·2^(bA−σ_i)| < 2^bA and 2^bA is an integer, so RN
// (monotone, and exact on integers) gives |A'_il| ≤ 2^bA; likewise |B'_lj| ≤
// 2^bB. Hence |C'_ij| = |Σ_l A'_il·B'_lj| ≤ Σ_l |A'_il|·|B'_lj| ≤ k·2^(bA+bB)
// = k·2^T ≤ H < P/2. The bound is attained: a row of k entries −(2 − 2^−52)
// ·2^(σ−1) and a column of entries (2 − 2^−52)·2^(τ−1) round to −2^bA and
// 2^bB when bA, bB ≤ 52, so C' = −k·2^T; and T is the largest such integer,
// so k·2^(T+1) > H (TestBoundEdge: exact at T, wrong at T+1).
// Rounding choice: RN, not truncation, because it halves the representation
// error (|A_il − A'_il·2^(σ_i−bA)| ≤ 2^(σ_i−bA−1)) for the same bound (with
// truncation |A'| ≤ 2^bA − 1 would only save a term k·(2^bA+2^bB) we do not
// use).
//
// Effective bits (BitsFor): W = bB + 1 = floor(T/2) + 1, so every operand x
// of a line with |x| < 2^σ is represented with error ≤ 2^(σ−W), the same
// form as Ozaki-I's capacity 8s − 1; ozaki.SlicesFor(W) slices give Ozaki-I
// the same per-operand accuracy. At k = 1024: N = 14 → W = 50, N = 16 →
// 58, N = 20 → 73 (see TestBudgetTable for the table against Ozaki-I).
//
// # 3. Residue GEMMs (Residues, ModProducts, MaxChunk, Chunks)
//
// For each modulus p_r: ra_r = A' mod p_r and rb_r = B' mod p_r as INT8
// residues (§1), row-major like A and B; one INT8 GEMM with INT32
// accumulation D_r = ra_r·rb_r per k-chunk. Every product of two residues is
// at most h² in magnitude, h = ResidueBound(p) (128 for 256, (p−1)/2 for
// odd p), so an inner length L is exact in INT32 when L·h² ≤ 2^31 − 1:
// MaxChunk(p) = floor((2^31−1)/h²), 131071 for 256 and 133144 for 255. The
// golden chunk (Chunks) is k when k ≤ 131071 (the bound of 256, the
// smallest), else the largest multiple of 64 below it; chunks are [0,L),
// [L,2L), …. The residue C_r(i,j) = (Σ_chunks D_r,c(i,j)) mod p_r is an
// exact integer, independent of the chunking and of the order of k: the
// chunk only protects the machine's INT32 accumulators, the result bits do
// not depend on it.
//
// # 4. Reconstruction and the single rounding (Reconstruct, Basis.Float)
//
// C'_ij is the unique integer ≡ C_r(i,j) (mod p_r) for all r in [H−P+1, H]
// (which contains [−H, H], hence the true A'·B' by §2): X ∈ [0, P) by the
// CRT, then C' = X if X ≤ H, else X − P. It is computed exactly (Garner's
// mixed radix in uint32, Horner in three 64-bit limbs; Basis.Int is the
// textbook CRT sum in math/big, the reference). Then
//
//	P(i,j) = RN(C'_ij·2^(σ_i − bA + τ_j − bB)),
//
// ONE rounding of the exact integer to float64 (round to nearest, ties to
// even; gradual underflow into the subnormals with that single rounding; ±Inf
// when the rounded value reaches 2^1024). C' = 0 gives +0; a nonzero C'
// that underflows gives a zero of its sign. Finally ozaki.Epilogue:
// if α ≠ 1, α·P (RNE); if β ≠ 0, + β·C0 (two roundings, no FMA).
// Choice: exact integer reconstruction rather than GEMMul8's FP64
// accumulation of the CRT terms: the result is then a function of the exact
// product A'·B' only — independent of chunking, of the k order, of tiles,
// of worker counts and of how the machine organises the reconstruction —
// and the reconstruction adds no error. Its cost (O(N²) small modular
// operations plus O(N) limb operations per output) is a timing-model
// question, not a numerics one; a machine that uses FP64 accumulation
// instead would need a different contract.
//
// # 5. Error and the failure mode
//
// |C − AB| ≤ Σ_l (|ΔA_il||B_lj| + |A_il||ΔB_lj| + |ΔA_il||ΔB_lj|) + the
// final rounding, with |ΔA_il| ≤ 2^(σ_i−bA−1), |ΔB_lj| ≤ 2^(τ_j−bB−1). The
// per-entry error is absolute relative to the LINE maximum: an entry 2^d
// below its row's maximum keeps only about bA − d bits. Scaling per row and
// per column cannot capture a wide exponent span inside a line: on Demmel's
// Test 2 with span parameter b (entries from 2^−b to 2^b in every row and
// column) the relative error grows like 2^(2b − W) (TestTest2Span), and the
// only remedy is more moduli (about 2b/3.85 more for a span of 2b bits,
// every modulus adding ≈ 3.85 bits per operand). The error is bounded
// relative to |A||B| only through the line maxima: when a column of B holds
// 2^1000 and the entries 1, those 1s become B' = 0, and a product whose
// true value is carried by them is lost entirely (TestExtremeInputs: 0
// instead of 2^1023). Ozaki-I with ADP measures
// the span (ESC) and adds slices dynamically; this package has no ESC: N
// is fixed by the caller. A zero row or column gives exactly α·0 + β·C0.
//
// # 6. Inf and NaN (Plan.InfNaN, Plan.Fallback)
//
// MakePlan scans A and B; any Inf or NaN sets InfNaN and Fallback and
// nothing else is computed; GEMM then calls Config.Native (default
// ozaki.NativeGEMM), which propagates them as IEEE arithmetic does.
// Infs otherwise arise only in the final rounding (overflow) and are
// not sticky: intermediate values are exact integers.
//
// # 7. Decisions the sources leave open, and how they are resolved here
//
//   - Moduli: greedy coprime list from 256 (§1), 256 included with the
//     range [−128, 127]; at most 24.
//   - Scaling: per row / per column power of two from the line maximum,
//     budget from N and k only (worst-case bound k·2^T ≤ H). GEMMul8 also
//     has data-dependent budgets (a bound of |A'||B'| computed by an extra
//     low-precision GEMM, or Cauchy–Schwarz) that gain bits on typical data;
//     not modelled (open point).
//   - Rounding to integers: RN ties to even.
//   - Chunks: k itself up to 131071; result bits chunk-independent.
//   - Reconstruction: exact integer CRT, one rounding, then ozaki.Epilogue.
//   - Inf/NaN: fallback to the native DGEMM, always.
package crt
