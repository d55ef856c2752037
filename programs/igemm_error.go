package programs

import (
	"math"

	"github.com/davinci-sim/davinci-sim/accuracy"
	"github.com/davinci-sim/davinci-sim/report"
)

// intGEMMErrors gathers an INT32 GEMM's error against its exact (int64)
// sums one output at a time: the relative metrics as for floating-point
// kinds (accuracy.Accumulator; the sums are exact in float64 below 2^53,
// far above k·2^14) and the largest absolute error, which
// report.ErrorReport.MaxErr holds for integer kinds.
type intGEMMErrors struct {
	acc    accuracy.Accumulator
	maxAbs float64
}

// add adds an output: exact sum v, result got.
func (e *intGEMMErrors) add(v int64, got int32) {
	e.acc.Add(float64(v), float64(got))
	e.maxAbs = max(e.maxAbs, math.Abs(float64(got)-float64(v)))
}

// report returns the error block (sampled: the outputs of sampled tiles,
// the golden model's): bits 31 — every bit of every INT32 result — when
// no output differs, else −log2(rel_fro) up to 31.
func (e *intGEMMErrors) report(sampled bool) *report.ErrorReport {
	m := e.acc.Metrics()
	r := errReport(m, sampled)
	r.Reference, r.MaxErr, r.Bits = "exact (int64)", e.maxAbs, min(31, m.Bits) // (exact: Metrics' 64)
	return &r
}
