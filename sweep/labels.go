package sweep

import "strings"

// axisTitles names report metrics and study parameters on plot axes, with
// their unit, by exact key or by last segment (checked in that order).
var axisTitles = map[string]string{
	"flops.tflops":                     "Throughput (TFLOP/s)",
	"flops.peak_fraction":              "Fraction of peak",
	"flops.peak_tflops":                "Peak (TFLOP/s)",
	"flops.total":                      "Operations (flop)",
	"time.seconds":                     "Simulated time (s)",
	"time.cycles":                      "Simulated time (cycles)",
	"memory.operational_intensity":     "Operational intensity (flop/byte)",
	"memory.gm_bandwidth_utilisation":  "GM bandwidth use (fraction)",
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

// plotTitle is the plot's title, or "Y against X" when the study gives none.
func plotTitle(pl Plot) string {
	if pl.Title != "" {
		return pl.Title
	}
	var ys []string
	for _, y := range pl.Y {
		ys = append(ys, axisTitle(y))
	}
	return strings.Join(ys, ", ") + " against " + axisTitle(pl.X)
}
