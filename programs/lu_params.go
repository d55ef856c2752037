package programs

import (
	"fmt"
	"slices"

	"github.com/davinci-sim/davinci-sim/machines"
)

// LUParams are the parameters of the lu-fused program kind (HPL-MxP:
// blocked right-looking LU without pivoting on the NPU and its host, then
// iterative refinement in FP64). Every key is addressable with
// --set program.<key>=value.
type LUParams struct {
	Kind    string `mapstructure:"kind"`
	Machine string `mapstructure:"machine"`

	N      int `mapstructure:"n"`       // matrix order (a multiple of nb)
	NB     int `mapstructure:"nb"`      // block size (a multiple of 16)
	NFused int `mapstructure:"n_fused"` // iterations fused in the non-priority zone (1 = no fusion, −1 = the most that fit L1)
	// NFusion is the number of AI cores running the fusion zone (n_fused > 1):
	// the last n_fusion cores; the others run TRSM and the priority zones.
	// n_fusion = all cores shares every core between the zones (kernels then
	// run one after the other in launch order).
	NFusion   int   `mapstructure:"n_fusion"`
	LookAhead *bool `mapstructure:"look_ahead"` // update the next panel first and overlap the host (default true)
	// Trailing is the precision of the trailing matrix in GM: fp32 (default)
	// or fp16. The HPL-MxP paper does not state it (LU-HPLMXP.md).
	Trailing   string       `mapstructure:"trailing"`
	Refinement LURefinement `mapstructure:"refinement"`
	Seed       int64        `mapstructure:"seed"`
	// Numerics: full (the simulated machine computes the factors), sampled
	// (timing-only simulation; the factors come from the golden model, which
	// the tests prove bit-identical to full) or off (timing only).
	Numerics string   `mapstructure:"numerics"`
	Tiling   LUTiling `mapstructure:"tiling"`
	// Check compares the simulated factors with the golden model (full
	// numerics; a mismatch fails the run).
	Check bool `mapstructure:"check"`
	// Diag is where the diagonal blocks are factored and inverted on GPU
	// machines: host (default, as on DaVinci) or gpu (timed on the CUDA
	// cores). DaVinci runs accept only host.
	Diag string `mapstructure:"diag"`
	// Grid is the P × Q process grid of a run on a cluster machine (one
	// process per NPU, 2-D block-cyclic distribution); absent on one chip.
	Grid LUGrid `mapstructure:"grid"`
	// Fidelity is how a cluster run simulates its NPUs: full (default:
	// every NPU cycle-level on one engine), isolated (each distinct
	// kernel simulated alone on a fresh chip, once; numerics off) or
	// sampled (the kernels of a sample of fusion windows simulated alone,
	// the others predicted; numerics off).
	Fidelity string `mapstructure:"fidelity"`
	// Sampling sets fidelity sampled's sample.
	Sampling LUSampling `mapstructure:"sampling"`

	// unused are notes on keys given that this combination of the others
	// does not use (unusedNotes; not a key).
	unused []string
	// tilingNote says why chooseTiling took a smaller bm (not a key; notes).
	tilingNote string
	// host is the run's bound on its host memory (Options.applyLU).
	host hostBound
}

// notes are the report's notes on the parameters: the keys given that the
// run does not use (unusedNotes), and why the default tiling took a smaller
// bm (chooseTiling) — every lu-fused and lu-gemm report, one chip or many.
func (p *LUParams) notes() []string {
	n := slices.Clip(p.unused)
	if p.tilingNote != "" {
		n = append(n, p.tilingNote)
	}
	return n
}

// unusedNotes records, for the report's notes, the keys given (in the file
// or by --set) that the run's combination of the others does not use —
// noted rather than refused, since a study sweeps method, numerics and
// n_fused across one file. It runs after defaults and the run's options.
// (A seed with numerics off is not noted: files keep one for either mode.)
func (p *LUParams) unusedNotes(f *File) {
	given := f.Config.Viper().IsSet
	note := func(key string, v any, why string) {
		p.unused = append(p.unused, fmt.Sprintf("%s (%v) is not used: %s", key, v, why))
	}
	if given("refinement.restart") && p.Refinement.Method != "gmres" {
		note("refinement.restart", p.Refinement.Restart, "it is GMRES's restart length; refinement.method is "+p.Refinement.Method)
	}
	if given("refinement.timing_iterations") && p.Numerics != NumericsOff {
		note("refinement.timing_iterations", p.Refinement.TimingIterations, "with numerics "+p.Numerics+" the refinement's own iterations are timed")
	}
	if given("n_fusion") && p.NFused == 1 && p.NFusion != 0 { // (0: no fusion zone, as n_fused 1 says)
		note("n_fusion", p.NFusion, "n_fused is 1: no iterations are fused, so there is no fusion zone")
	}
}

// LUSampling is fidelity sampled's sample: how many fusion windows (spread
// systematically over the run) have their kernels simulated.
type LUSampling struct {
	Windows int `mapstructure:"windows"`
}

// MaxLUClusterN bounds n on a cluster (beyond any HBM share's reach:
// the per-NPU GM check refuses far smaller n); MaxLUChipN on one chip,
// and MaxLUFunctionalN on a cluster with numerics full (the factors and
// the golden model are kept whole in host memory: 4·n² bytes each).
const (
	MaxLUClusterN    = 1 << 23
	MaxLUChipN       = 1 << 20
	MaxLUFunctionalN = 16384
)

// DefaultSampledWindows is the fusion windows fidelity sampled simulates
// when the program does not say.
const DefaultSampledWindows = 12

// LUGrid is a process grid: P process rows × Q process columns.
type LUGrid struct {
	P int `mapstructure:"p"`
	Q int `mapstructure:"q"`
}

// LURefinement configures the FP64 refinement on the host.
type LURefinement struct {
	Method        string  `mapstructure:"method"`         // ir | gmres
	Restart       int     `mapstructure:"restart"`        // GMRES restart length
	Tolerance     float64 `mapstructure:"tolerance"`      // scaled residual refinement aims for: HPL-MxP's 16 or a stricter one (passing is judged against 16)
	MaxIterations int     `mapstructure:"max_iterations"` // refinement steps before giving up
	// TimingIterations is the number of refinement steps timed when no
	// numerics are computed (numerics off).
	TimingIterations int `mapstructure:"timing_iterations"`
}

// LUTiling is the cube tiling of the LU GEMM kernels inside nb×nb blocks:
// bm rows of the L panel stay in L1 for a row of output tiles, bn columns
// per output tile, bk the depth of one MMAD. 0 picks the default
// (chooseTiling: the largest tile whose buffers fit).
type LUTiling struct {
	BM int `mapstructure:"bm"`
	BN int `mapstructure:"bn"`
	BK int `mapstructure:"bk"`
}

// largestDivisor returns the largest multiple of 16 that divides nb and is
// at most limit (16 if none is larger).
func largestDivisor(nb, limit int) int {
	best := 16
	for d := 16; d <= limit && d <= nb; d += 16 {
		if nb%d == 0 {
			best = d
		}
	}
	return best
}

// DefaultNB is lu-fused's block size when the file gives none.
const DefaultNB = 256

func (p *LUParams) defaults() {
	if p.NFused == 0 {
		p.NFused = 1
	}
	if p.LookAhead == nil {
		t := true
		p.LookAhead = &t
	}
	if p.Trailing == "" {
		p.Trailing = "fp32"
	}
	r := &p.Refinement
	if r.Method == "" {
		r.Method = "ir"
	}
	if r.Restart == 0 {
		r.Restart = 30
	}
	if r.Tolerance == 0 {
		r.Tolerance = 16
	}
	if r.MaxIterations == 0 {
		r.MaxIterations = 50
	}
	if r.TimingIterations == 0 {
		r.TimingIterations = 3
	}
	if p.Numerics == "" {
		p.Numerics = NumericsFull
	}
}

// luTileFits reports whether a bm×bn output tile with bk-deep MMADs fits
// every buffer of the LU GEMM kernel (the budgets newLUPlan checks, each
// buffer single-buffered): the bm×kMax FP16 L rows and two bk×bn U buffers
// in L1, bm×bk in L0A, bk×bn in L0B, the bm×bn FP32 tile in L0C and the
// epilogue set in UB.
func luTileFits(buf machines.Buffers, nb, kMax, tb, bm, bn, bk int) bool {
	bBlk := int64(bk) * int64(bn) * 2
	return int64(bm)*int64(max(kMax, nb))*2+2*bBlk <= int64(buf.L1) &&
		int64(bm)*int64(bk)*2 <= int64(buf.L0A) && bBlk <= int64(buf.L0B) &&
		int64(bm)*int64(bn)*4 <= int64(buf.L0C) && luUBSet(bm, bn, tb) <= int64(buf.UB)
}

// luUBSet is the UB bytes of one epilogue set of a bm×bn tile: the loaded
// trailing tile and the product, both in the trailing precision (tb bytes
// per element each).
func luUBSet(bm, bn, tb int) int64 {
	return int64(bm) * int64(bn) * 2 * int64(tb)
}

// chooseTiling fills the tiling keys left at 0. bk is the largest multiple
// of 16 dividing nb and at most 64. bm and bn are the largest tile whose
// buffers fit for this nb, trailing precision and n_fused (luTileFits):
// among bm ≤ 256 and bn ≤ 128, multiples of 16 dividing nb, the largest
// bm·bn (the output tile sets the reuse of the staged operands), ties to
// the larger bm (more rows share each streamed U chunk): 256×128 for
// nb ≥ 256 with either trailing precision (the UB holds one FP32 256×128
// epilogue set, or two FP16 ones).
// A large n_fused lowers bm until the L rows fit L1. n_fused = −1 (the most
// that fit L1) chooses for one fused iteration. When nothing fits, the
// largest candidates are kept and newLUPlan names the buffer.
// Where bm was chosen smaller than one fused iteration's L blocks would
// allow, a note says so (tilingNote: cube instructions a flop grow as bm
// shrinks, and TFLOP/s falls with n_fused for it).
func (p *LUParams) chooseTiling(m *machines.Machine) {
	if p.NB <= 0 || p.NB%16 != 0 {
		return
	}
	t := &p.Tiling
	if t.BK == 0 {
		t.BK = largestDivisor(p.NB, 64)
	}
	if t.BM != 0 && t.BN != 0 {
		return
	}
	tb := 4
	if p.Trailing == "fp16" {
		tb = 2
	}
	f := max(p.NFused, 1)
	if p.N > 0 {
		f = min(f, max(p.N/p.NB, 1))
	}
	buf := m.DaVinci().Buffers
	bm, bn := p.bestTile(buf, f, tb)
	if t.BM == 0 && f > 1 {
		if one, _ := p.bestTile(buf, 1, tb); one > bm && luTileFits(buf, p.NB, f*p.NB, tb, bm, bn, t.BK) {
			p.tilingNote = fmt.Sprintf("tiling.bm %d, not one fused iteration's %d: the largest tile whose L rows of %d fused iterations (bm × %d FP16) and two U buffers fit L1 (%d bytes) is %d × %d; a smaller bm streams each U chunk for fewer rows — more cube instructions and L1 reads a flop (tiling.bm sets it)",
				bm, one, f, f*p.NB, buf.L1, bm, bn)
		}
	}
	if t.BM == 0 {
		t.BM = bm
	}
	if t.BN == 0 {
		t.BN = bn
	}
}

// bestTile returns the largest tile (chooseTiling's rule) whose buffers
// fit for f fused iterations and trailing precision tb bytes, within the
// tiling keys given; the largest candidates where none fits.
func (p *LUParams) bestTile(buf machines.Buffers, f, tb int) (bestM, bestN int) {
	t := &p.Tiling
	bestM, bestN = largestDivisor(p.NB, 256), largestDivisor(p.NB, 128)
	found := false
	for bm := bestM; bm >= 16; bm -= 16 {
		if p.NB%bm != 0 || (t.BM != 0 && bm != t.BM) {
			continue
		}
		for bn := largestDivisor(p.NB, 128); bn >= 16; bn -= 16 {
			if p.NB%bn != 0 || (t.BN != 0 && bn != t.BN) {
				continue
			}
			if !luTileFits(buf, p.NB, f*p.NB, tb, bm, bn, t.BK) {
				continue
			}
			if !found || bm*bn > bestM*bestN {
				bestM, bestN, found = bm, bn, true
			}
		}
	}
	return bestM, bestN
}

// fusedFromL1 resolves n_fused = −1 to the largest number of fused
// iterations whose L blocks (bm × n_fused·nb FP16) and two U buffers
// (bk × bn FP16) fit L1 — the quantity the L1-size design question is
// about — capped at n/nb; at least 1.
func (p *LUParams) fusedFromL1(m *machines.Machine) {
	if p.NFused != -1 || p.NB <= 0 || p.Tiling.BM <= 0 {
		return
	}
	l1 := int64(m.DaVinci().Buffers.L1)
	most := (l1 - 2*int64(p.Tiling.BK)*int64(p.Tiling.BN)*2) / (int64(p.Tiling.BM) * int64(p.NB) * 2)
	if p.N > 0 && most > int64(p.N/p.NB) {
		most = int64(p.N / p.NB)
	}
	p.NFused = int(max(most, 1))
}

// validate checks the parameters against each other and the machine; the
// buffer checks are in newLUPlan.
func (p *LUParams) validate(file string, m *machines.Machine) error {
	bad := func(key, format string, a ...any) error {
		return keyError(file, key, format, a...)
	}
	switch {
	case p.NB <= 0 || p.NB%16 != 0:
		return bad("nb", "must be a positive multiple of 16 (the cube's 16×16 fractal) (got %d)", p.NB)
	case p.N > MaxLUClusterN:
		return bad("n", "at most %d (got %d)", MaxLUClusterN, p.N)
	case p.N > 0 && p.NB > p.N:
		return limitedBy(bad("nb", "must be at most n = %d, one block the whole matrix (got %d)", p.N, p.NB), "program.n")
	case p.N <= 0 || p.N%p.NB != 0:
		return limitedBy(bad("n", "must be a positive multiple of nb = %d (got %d)", p.NB, p.N), "program.nb")
	case p.NFused < 1:
		return bad("n_fused", "must be ≥ 1 (1 = no fusion), or −1 for the most that fit L1 (got %d)", p.NFused)
	case p.NFused > p.N/p.NB:
		return limitedBy(bad("n_fused", "must be at most n/nb = %d, the iterations there are (got %d)", p.N/p.NB, p.NFused), "program.n", "program.nb")
	case p.NFusion < 0 || p.NFusion > m.Cores:
		return limitedBy(bad("n_fusion", "must be in 0..%d, the AI cores of machine %s (got %d)", m.Cores, m.Name, p.NFusion), "machine.cores")
	case p.NFused > 1 && p.NFusion < 1:
		return limitedBy(bad("n_fusion", "with n_fused > 1 the fusion zone needs 1..%d cores (got %d)", m.Cores, p.NFusion), "program.n_fused")
	case p.Trailing != "fp32" && p.Trailing != "fp16":
		return bad("trailing", "must be fp32 or fp16 (got %q)", p.Trailing)
	case p.Refinement.Method != "ir" && p.Refinement.Method != "gmres":
		return bad("refinement.method", "must be ir or gmres (got %q)", p.Refinement.Method)
	case p.Refinement.Restart < 1 || p.Refinement.Restart > maxRefinementSteps:
		return bad("refinement.restart", "must be in 1..%d (got %d)", maxRefinementSteps, p.Refinement.Restart)
	case !(p.Refinement.Tolerance > 0 && p.Refinement.Tolerance <= luPassThreshold):
		return bad("refinement.tolerance", "must be in (0, %d]: HPL-MxP passes a scaled residual below %d, and a larger tolerance would stop refinement before that (got %v)", luPassThreshold, luPassThreshold, p.Refinement.Tolerance)
	case p.Refinement.MaxIterations < 1 || p.Refinement.MaxIterations > maxRefinementSteps:
		return bad("refinement.max_iterations", "must be in 1..%d (got %d)", maxRefinementSteps, p.Refinement.MaxIterations)
	case p.Refinement.TimingIterations < 1 || p.Refinement.TimingIterations > maxRefinementSteps:
		return bad("refinement.timing_iterations", "must be in 1..%d (got %d)", maxRefinementSteps, p.Refinement.TimingIterations)
	case p.Numerics != NumericsFull && p.Numerics != NumericsSampled && p.Numerics != NumericsOff:
		return bad("numerics", "must be full, sampled or off (got %+q)", p.Numerics)
	}
	for _, t := range []struct {
		key string
		v   int
	}{{"tiling.bm", p.Tiling.BM}, {"tiling.bn", p.Tiling.BN}, {"tiling.bk", p.Tiling.BK}} {
		if t.v <= 0 || t.v%16 != 0 || p.NB%t.v != 0 {
			return limitedBy(bad(t.key, "must be a positive multiple of 16 dividing nb = %d (got %d)", p.NB, t.v), "program.nb")
		}
	}
	if p.Numerics == NumericsFull || p.Numerics == NumericsSampled {
		// The host keeps the factors (float32) and the golden/trailing data.
		if int64(p.N)*int64(p.N) > 1<<28 {
			return bad("n", "%d is too large for numerics %s (the host holds n² values; at most n = 16384): use numerics off", p.N, p.Numerics)
		}
	}
	return checkLUHostMemory(file, p.Numerics, "n", p.N, p.host)
}

// checkLUHostMemory refuses numerics whose n×n matrix (n: key order's
// value) would take more host memory than the run may: its data (luBytes)
// and base by the run's estimate, whose total — with the chip model — the
// refusal quotes (hostBound.overAll).
func checkLUHostMemory(file, numerics, order string, n int, host hostBound) error {
	if numerics == NumericsOff {
		return nil
	}
	if e, over := host.overData(luBytes(numerics, n)); over {
		return host.refuse(keyError(file, "numerics", "%s numerics on %s = %d needs %s; use numerics off", numerics, order, n, host.overAll(e)))
	}
	return nil
}

// maxRefinementSteps bounds the refinement's iteration counts: HPL-MxP
// converges in a handful (the defaults: 50 at most, 3 timed); each one
// costs the host an O(n²) pass and the timeline a record, so a count of 1e9
// was a hang that grew past 16 GB.
const maxRefinementSteps = 10000

// fp16DiagonalNote says, for an FP16 trailing matrix too large to hold
// the HPL-MxP matrix's diagonal, that its entries would saturate: the
// diagonal is the sum of its row's n − 1 off-diagonal magnitudes, U[0,
// 0.5), about (n − 1)/4 — beyond FP16's 65504 from n ≈ 262 000 — so a run
// that stored it would clamp it and factor another matrix. "" where it
// fits. (Found by review: weak scaling reaches such n with fp16.)
func fp16DiagonalNote(trailing string, n int) string {
	if trailing != "fp16" || float64(n-1)/4 <= fp16Max {
		return ""
	}
	return fmt.Sprintf("trailing fp16 at n = %d: the matrix's diagonal (about (n−1)/4 = %.0f, the sum of its row's off-diagonal magnitudes) exceeds FP16's largest value %g: stored in the trailing matrix it saturates, and another matrix is factored (a real run needs fp32 trailing or a scaled matrix)", n, float64(n-1)/4, fp16Max)
}

// fp16Max is FP16's largest finite value.
const fp16Max = 65504.0
