package sweep

import (
	"maps"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// axisTitles names report metrics and study parameters on plot axes, with
// their unit, by exact key or by last segment (checked in that order).
var axisTitles = map[string]string{
	"flops.tflops":                     "Throughput (TFLOP/s)",
	"flops.peak_fraction":              "Fraction of peak",
	"hplmxp.peak_fraction":             "Fraction of peak",
	"flops.peak_tflops":                "Peak (TFLOP/s)",
	"flops.total":                      "Operations (flop)",
	"time.seconds":                     "Simulated time (s)",
	"time.cycles":                      "Simulated time (cycles)",
	"memory.operational_intensity":     "Operational intensity (flop/byte)",
	"memory.gm_bandwidth_utilisation":  "HBM bandwidth use (fraction)",
	"memory.gm_read_bytes":             "GM bytes read (B)",
	"memory.gm_write_bytes":            "GM bytes written (B)",
	"hplmxp.tflops":                    "HPL-MxP throughput (TFLOP/s)",
	"hplmxp.factorization_tflops":      "Factorization throughput (TFLOP/s)",
	"hplmxp.total_seconds":             "Solve time (s)",
	"program.tiling.nfused":            "A blocks resident in L1 (nfused)",
	"machine.core.buffers.L1":          "L1 size",
	"machine.cores":                    "Cores",
	"program.n_fused":                  "Fused iterations (n_fused)",
	"memory.operational_intensity_hbm": "Operational intensity after the L2 (flop/HBM byte)",
	"hplmxp.iterations.*.iteration":    "LU iteration",
	"hplmxp.windows.*.first_iteration": "First iteration of the fusion window",
	// by last segment
	"operational_intensity":     "Operational intensity (flop/GM byte)",
	"operational_intensity_hbm": "Operational intensity after the L2 (flop/HBM byte)",
	"measured_over_theoretical": "Measured / theoretical (FP16 peak)",
	"busy":                      "Busy fraction",
	"peak_fraction":             "Peak occupancy (fraction of capacity)",
	"peak_bytes":                "Peak occupancy (B)",
	"mean_bytes":                "Mean occupancy (B)",
	"rel_fro":                   "Relative error (Frobenius norm)",
	"max_rel":                   "Largest relative error",
	"bits":                      "Correct bits",
	"seconds":                   "Time (s)",
	"tflops":                    "Throughput (TFLOP/s)",
}

// axisTitle returns the axis title of a metric or parameter key: a known
// name with its unit, where the report key has one (docs/report.md), else
// the key itself (a parameter keeps the name the study gave it).
func axisTitle(key string) string {
	lower := strings.ToLower(key)
	for k, v := range axisTitles {
		if strings.Contains(k, ".") && strings.EqualFold(k, lower) {
			return withContext(key, v)
		}
	}
	if v, ok := axisTitles[last(lower)]; ok && !strings.HasPrefix(lower, "program.") && !strings.HasPrefix(lower, "machine.") {
		return withContext(key, v)
	}
	return key
}

// opMetrics are the report keys counted under flops.convention, in the
// run's unit: TFLOP/s and flop/byte, or, where the convention counts
// integer operations (igemm's, ape-int16's), TOP/s and op/byte — as the
// run's summary says (Record.OpUnit).
var opMetrics = []string{"flops.tflops", "flops.peak_tflops", "flops.total", "memory.operational_intensity", "memory.operational_intensity_hbm"}

// isOpMetric reports whether key is one of opMetrics (any case).
func isOpMetric(key string) bool {
	return slices.ContainsFunc(opMetrics, func(m string) bool { return strings.EqualFold(m, key) })
}

// Plot units of opMetrics (plotUnit).
const (
	unitFLOP  = ""      // every point's flops are floating-point operations
	unitOP    = OpUnit  // every point's are integer operations
	unitMixed = "mixed" // some of each: the axis names both
)

// plotUnit returns the unit of the opMetrics among keys over recs: that
// of the records with a number for one of them (records without, a null
// metric, say nothing of it).
func plotUnit(recs []Record, keys []string) string {
	ops, flops := false, false
	for _, r := range recs {
		for _, k := range keys {
			if isOpMetric(k) && len(metricNumbers(r.Metrics[k])) > 0 {
				if r.OpUnit == OpUnit {
					ops = true
				} else {
					flops = true
				}
				break
			}
		}
	}
	switch {
	case ops && flops:
		return unitMixed
	case ops:
		return unitOP
	}
	return unitFLOP
}

// opUnitReplacer turns a title's floating-point unit into the integer one.
var opUnitReplacer = strings.NewReplacer("TFLOP", "TOP", "FLOP", "OP", "flop", "op")

// unitParens matches a parenthesised unit that counts flops.
var unitParens = regexp.MustCompile(`\(([^()]*(?:flop|FLOP)[^()]*)\)`)

// unitTitle is axisTitle for the points of unit (plotUnit): an opMetric's
// unit as they count ("Throughput (TOP/s)"; where some count integer
// operations and some floating-point ones, "Throughput (TFLOP/s or
// TOP/s)"); other keys' titles as axisTitle's.
func unitTitle(key, unit string) string {
	title := axisTitle(key)
	if unit == unitFLOP || !isOpMetric(key) {
		return title
	}
	return unitParens.ReplaceAllStringFunc(title, func(m string) string {
		in := m[1 : len(m)-1]
		if unit == unitOP {
			return "(" + opUnitReplacer.Replace(in) + ")"
		}
		return "(" + in + " or " + opUnitReplacer.Replace(in) + ")"
	})
}

// withContext prefixes a title taken from a key's last segment with the
// named thing it belongs to (the pipe or buffer: "pipes.M.busy" → "M busy
// fraction").
func withContext(key, title string) string {
	parts := strings.Split(key, ".")
	if len(parts) == 3 && (parts[0] == "pipes" || parts[0] == "buffers") {
		return parts[1] + ": " + title
	}
	return title
}

// plotTitle is the plot's title, or "Y against X" when the study gives
// none — with its where, if any ("…, machine=a100"): the points it shows.
func plotTitle(pl Plot) string { return plotTitleIn(pl, unitFLOP) }

// plotTitleIn is plotTitle with the axes' titles in unit (unitTitle).
func plotTitleIn(pl Plot, unit string) string {
	if pl.Title != "" {
		return pl.Title
	}
	var ys []string
	for _, y := range pl.Y {
		ys = append(ys, unitTitle(y, unit))
	}
	title := strings.Join(ys, ", ") + " against " + unitTitle(pl.X, unit)
	var where []string
	for _, k := range slices.Sorted(maps.Keys(pl.Where)) {
		where = append(where, k+"="+pl.Where[k])
	}
	if len(where) > 0 {
		title += " (" + strings.Join(where, ", ") + ")"
	}
	return title
}

// Tick labels: one style per axis. Plain decimals while they stay short,
// else exponents (2.5e-05); never both on one axis (0.0001 next to 1e-05).

// linearLabels labels vals, multiples of st, all alike: with the decimals
// the step needs (a 2.5 × 10^k step one more than 1, 2 or 5 × 10^k), plain
// (12.5, 0.0002) up to 4 decimals and 6 integer digits or where exponents
// would be longer (1000000.5, 0.00105), else as exponents with the digits
// the step needs (2.0e-05, 1.5e+09; 0 stays 0).
func linearLabels(vals []float64, st step) []string {
	extra := 0
	if st.m10 == 25 {
		extra = 1
	}
	decimals := max(0, extra-st.k)
	maxAbs := 0.0
	for _, v := range vals {
		maxAbs = max(maxAbs, math.Abs(v))
	}
	intDigits := 1
	if maxAbs >= 1 {
		intDigits = floorExp(maxAbs) + 1
	}
	prec := 0
	if maxAbs > 0 {
		prec = min(16, max(0, floorExp(maxAbs)-st.k+extra))
	}
	plainLen, sciLen := intDigits+decimals, prec+5 // 999999.5, 9.9999995e+05
	if decimals > 0 {
		plainLen++
	}
	if prec > 0 {
		sciLen++
	}
	plain := decimals <= 4 && intDigits <= 6 || plainLen < sciLen
	out := make([]string, len(vals))
	for i, v := range vals {
		switch {
		case plain:
			out[i] = strconv.FormatFloat(v, 'f', decimals, 64)
		case v == 0:
			out[i] = "0"
		default:
			out[i] = strconv.FormatFloat(v, 'e', prec, 64)
		}
	}
	return out
}

// logLabels labels vals, each d × 10^e with d one digit, all alike: plain
// decimals (0.0002, 50) where every one lies between 1e-4 and 1e5, else as
// exponents (2e-05, 1e+06).
func logLabels(vals []float64) []string {
	plain := true
	for _, v := range vals {
		if v < 1e-4*(1-1e-9) || v > 1e5*(1+1e-9) {
			plain = false
		}
	}
	out := make([]string, len(vals))
	for i, v := range vals {
		if plain {
			out[i] = strconv.FormatFloat(v, 'f', max(0, -floorExp(v)), 64)
		} else {
			out[i] = strconv.FormatFloat(v, 'e', 0, 64)
		}
	}
	return out
}
