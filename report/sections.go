package report

// The program sections. encoding/json writes struct fields in declaration
// order, so each struct declares its fields in the order of its keys in
// report.json (sorted, as the maps these sections once were wrote them;
// HPLMxPZone keeps its own order). A key present only in some runs is a
// pointer with omitempty: nil exactly when the key is absent.

// HPLMxP is lu-fused's section (key "hplmxp"): the HPL-MxP figures of the
// solve, per-iteration and per-window samples, the kernel zones, the host's
// time per stage and the refinement.
type HPLMxP struct {
	// Converged says refinement reached its tolerance (set with Passed;
	// with the default tolerance 16 the two agree).
	Converged *bool `json:"converged,omitempty"`
	// FactorizationSeconds is the time until every factorization kernel
	// finished.
	FactorizationSeconds float64 `json:"factorization_seconds"`
	// FactorizationTFLOPS counts 2/3·n³ over FactorizationSeconds (0 when
	// that is 0).
	FactorizationTFLOPS float64 `json:"factorization_tflops"`
	// Flops is the HPL-MxP count 2/3·n³ + 3/2·n².
	Flops float64 `json:"flops"`
	// GoldenMismatches counts the factor values that differ from the golden
	// model (numerics full with check: true).
	GoldenMismatches *int `json:"golden_mismatches,omitempty"`
	// HostStagesSeconds is the host's time per stage label (waits under
	// their own labels).
	HostStagesSeconds map[string]float64 `json:"host_stages_seconds"`
	Iterations        []HPLMxPIteration  `json:"iterations"`
	// LPanelScale is the power-of-two scale of the L panels, fixed at
	// iteration 0 (numerics full or sampled).
	LPanelScale *float32 `json:"l_panel_scale,omitempty"`
	LookAhead   bool     `json:"look_ahead"`
	N           int      `json:"n"`
	NFused      int      `json:"n_fused"`
	NFusion     int      `json:"n_fusion"`
	NB          int      `json:"nb"`
	// Passed, RefinementIterations and ScaledResidual repeat the computed
	// refinement's outcome (set with Refinement.Solved). Passed is
	// HPL-MxP's check, the scaled residual below 16, whatever the
	// tolerance; a run that does not pass fails.
	Passed       *bool            `json:"passed,omitempty"`
	PeakFraction float64          `json:"peak_fraction"`
	Refinement   HPLMxPRefinement `json:"refinement"`
	// RefinementIterations: see Passed.
	RefinementIterations *int `json:"refinement_iterations,omitempty"`
	// ScaledResidual: see Passed.
	ScaledResidual    *float64       `json:"scaled_residual,omitempty"`
	TFLOPS            float64        `json:"tflops"` // Flops over the whole solve's time
	TotalSeconds      float64        `json:"total_seconds"`
	TrailingPrecision string         `json:"trailing_precision"`
	Windows           []HPLMxPWindow `json:"windows"`
	// Zones aggregates the kernels by zone label (trsm, priority1,
	// priority2, fusion).
	Zones map[string]*HPLMxPZone `json:"zones"`
}

// HPLMxPIteration is one LU iteration's sample: its time and its
// theoretical flops (the trailing update, TRSM and diagonal block of that
// iteration). TFLOPS and MeasuredOverTheoretical are set when the iteration
// took time.
type HPLMxPIteration struct {
	Flops                   float64  `json:"flops"`
	Iteration               int      `json:"iteration"`
	MeasuredOverTheoretical *float64 `json:"measured_over_theoretical,omitempty"` // against the FP16 cube peak
	Seconds                 float64  `json:"seconds"`
	StartSeconds            float64  `json:"start_seconds"`
	TFLOPS                  *float64 `json:"tflops,omitempty"`
}

// HPLMxPWindow is one fusion window's sample (n_fused iterations from
// FirstIteration): with fusion the far trailing update of a window runs
// during the next one, so single iterations can show ratios above 1;
// windows average that out. MeasuredOverTheoretical is set when the window
// took time.
type HPLMxPWindow struct {
	FirstIteration          int      `json:"first_iteration"`
	Flops                   float64  `json:"flops"`
	Iterations              int      `json:"iterations"`
	MeasuredOverTheoretical *float64 `json:"measured_over_theoretical,omitempty"`
	// Progress is StartSeconds over the factorization's time (0 … 1: runs
	// of different length on one axis).
	Progress float64 `json:"progress"`
	Seconds  float64 `json:"seconds"`
	// StartSeconds is when the window's first iteration started.
	StartSeconds float64 `json:"start_seconds"`
}

// HPLMxPZone aggregates the kernels of one zone.
type HPLMxPZone struct {
	Kernels              int     `json:"kernels"`
	Seconds              float64 `json:"seconds"` // summed kernel run time (start to finish)
	Flops                float64 `json:"flops"`
	TFLOPS               float64 `json:"tflops"` // flops / summed run time
	Cores                int     `json:"cores"`
	GMBytes              float64 `json:"gm_bytes"`              // GM bytes the zone's kernels copy
	OperationalIntensity float64 `json:"operational_intensity"` // flop per GM byte of the zone's kernels
	// HBMBytes are the bytes the zone's kernels moved to and from HBM after
	// the L2 (measured per kernel), OperationalIntensityHBM the flops per
	// HBM byte, L2HitRate the fraction of their GM reads the L2 served.
	HBMBytes                float64 `json:"hbm_bytes"`
	OperationalIntensityHBM float64 `json:"operational_intensity_hbm"`
	L2HitRate               float64 `json:"l2_hit_rate"`
	// Bound holds the zone to its own roofline (kernel by kernel, summed).
	Bound *Bound `json:"bound,omitempty"`
}

// Bound holds a kernel (or the kernels of a zone, summed) to what the
// machine allows it: the least time the cube of the cores it has, HBM
// (bytes after the L2 at the HBM bandwidth), the cores' GM paths (each
// core's bytes on its MTE2 and MTE3 paths at their bandwidths, the work
// spread evenly) and the L2 (bytes it served at the L2 bandwidth) each
// need; the largest is the bound (equivalently min(cube peak, OI_HBM × HBM
// bandwidth, OI_GM × path bandwidth, OI_L2 × L2 bandwidth) in flop/s).
type Bound struct {
	BoundSeconds float64 `json:"bound_seconds"`
	BoundTFLOPS  float64 `json:"bound_tflops"`
	CubeSeconds  float64 `json:"cube_seconds"`
	// Efficiency is achieved / bound (bound time over the time taken).
	Efficiency    float64 `json:"efficiency"`
	GMPathSeconds float64 `json:"gm_path_seconds"`
	HBMSeconds    float64 `json:"hbm_seconds"`
	L2Seconds     float64 `json:"l2_seconds"`
	LimitedBy     string  `json:"limited_by"` // the term that sets the bound: cube | hbm | gm_path | l2
}

// HPLMxPRefinement is the refinement part of the hplmxp section, in one of
// two shapes: Solved when the refinement was computed (numerics full or
// sampled), Timed when it was only timed (numerics off). Exactly one is set;
// report.json holds that one's keys. It is written, not read back.
type HPLMxPRefinement struct {
	Solved *HPLMxPRefinementSolved
	Timed  *HPLMxPRefinementTimed
}

// MarshalJSON writes the shape that is set (null when neither is); a
// scaled residual that is ±Inf or NaN (a refinement that diverged) as a
// string, as every float of report.json (marshalFinite).
func (r HPLMxPRefinement) MarshalJSON() ([]byte, error) {
	switch {
	case r.Solved != nil:
		return marshalFinite(r.Solved)
	case r.Timed != nil:
		return marshalFinite(r.Timed)
	}
	return []byte("null"), nil
}

// HPLMxPRefinementSolved is a computed refinement: the method, its
// iterations and final scaled residual, its tolerance, whether it reached
// it and why it stopped, the scaled residual after each iteration (GMRES:
// each restart cycle; History[0]: the LU solve) and the steps the host's
// time holds.
type HPLMxPRefinementSolved struct {
	// Converged: the scaled residual fell below Threshold (always set on
	// a computed refinement).
	Converged      *bool     `json:"converged,omitempty"`
	History        []float64 `json:"history"`
	Iterations     int       `json:"iterations"`
	Method         string    `json:"method"`
	ScaledResidual float64   `json:"scaled_residual"`
	// StopReason is why refinement stopped: converged, stagnated (the
	// residual fell by less than half in each of the last two steps once
	// below 16, or did not fall in either above it), max_iterations or
	// non_finite (always set on a computed refinement).
	StopReason *string `json:"stop_reason,omitempty"`
	// Threshold is the tolerance refinement aims for (HPL-MxP's 16 or a
	// stricter one); passing is judged against 16.
	Threshold float64 `json:"threshold"`
	// TimedSteps is the host's refinement work after x0 and its residual,
	// in steps of one LU solve and one product with A (IR: one an
	// iteration; GMRES: one an inner step and one more a cycle).
	TimedSteps int `json:"timed_steps"`
}

// HPLMxPRefinementTimed is a refinement that was timed for TimedIterations
// steps but not computed (numerics off); Note says so in report.json.
type HPLMxPRefinementTimed struct {
	Method          string `json:"method"`
	Note            string `json:"note"`
	TimedIterations int    `json:"timed_iterations"`
	TimedSteps      int    `json:"timed_steps"` // as HPLMxPRefinementSolved's: GMRES adds one a restart cycle
}

// LUGEMM is lu-gemm's section (key "lu_gemm"): the trailing-update operator's
// shape (m, nb, k = n_fused·nb), time, throughput and GM traffic.
type LUGEMM struct {
	// Bound holds the operator to its own roofline.
	Bound   *Bound  `json:"bound,omitempty"`
	GMBytes float64 `json:"gm_bytes"` // GM bytes read and written
	// GoldenMismatches counts the trailing values that differ from the
	// golden model (numerics full).
	GoldenMismatches *int `json:"golden_mismatches,omitempty"`
	// HBMBytes reach HBM after the L2; OperationalIntensityHBM is flops per
	// HBM byte.
	HBMBytes                float64 `json:"hbm_bytes"`
	K                       int     `json:"k"`
	M                       int     `json:"m"`
	NB                      int     `json:"nb"`
	OperationalIntensity    float64 `json:"operational_intensity"`
	OperationalIntensityHBM float64 `json:"operational_intensity_hbm"`
	Seconds                 float64 `json:"seconds"`
	TFLOPS                  float64 `json:"tflops"`
}
