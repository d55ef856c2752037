//go:build !unix

package cube

// cpuSeconds is unavailable here: the CPU-time metric is omitted.
func cpuSeconds() float64 { return 0 }
