package report

// GPUBench is gpu-bench's section: the microbenchmark's measured figure
// and what it is compared with.
type GPUBench struct {
	Test string `json:"test"`
	// KernelSeconds is the measured kernel's time, launch excluded.
	KernelSeconds float64 `json:"kernel_seconds"`
	// Achieved is the measured figure in Unit; Reference the machine's
	// figure it is compared with (its dense peak, its latency, its
	// measured achievable bandwidth); Fraction their ratio.
	Achieved  float64 `json:"achieved"`
	Reference float64 `json:"reference"`
	Fraction  float64 `json:"fraction"`
	Unit      string  `json:"unit"`
}
