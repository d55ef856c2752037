package report

import (
	"github.com/davinci-sim/davinci-sim/arch"
	"github.com/davinci-sim/davinci-sim/machines"
)

// EnergyReport is a run's energy under the machine's power model
// (machines.Power): static power over the run plus energy per matrix flop,
// vector repeat, byte on each copy path and byte the L2 and HBM serve.
type EnergyReport struct {
	Joules       float64 `json:"joules"`
	AverageWatts float64 `json:"average_watts"`
	// MaxWatts is the machine's published maximum; OverMax says the run's
	// average exceeds it (the model's figures are then too high).
	MaxWatts float64 `json:"max_watts"`
	OverMax  bool    `json:"over_max"`
	// GFLOPSPerWatt is the program's flops (flops.total, else the matrix
	// flops executed) per joule, in GFLOP/s per W.
	GFLOPSPerWatt float64 `json:"gflops_per_watt"`
	// The parts, in joules.
	StaticJoules float64 `json:"static_joules"`
	MatrixJoules float64 `json:"matrix_joules"`
	VectorJoules float64 `json:"vector_joules"`
	PathJoules   float64 `json:"path_joules"`
	L2Joules     float64 `json:"l2_joules"`
	HBMJoules    float64 `json:"hbm_joules"`
}

// SetEnergy fills r.Energy from a run's statistics under power model p
// (nothing when the machine has none). Call it after the program's Finish
// (it uses flops.total when the program reports one).
func (r *Report) SetEnergy(st *arch.Stats, p *machines.Power) {
	if p == nil || !p.Given() || st == nil {
		return
	}
	const pJ = 1e-12
	e := &EnergyReport{MaxWatts: p.MaxW}
	secs := st.Time.Seconds()
	e.StaticJoules = float64(p.StaticW * secs) // rounded: all four are added below
	e.MatrixJoules = float64(st.MMADFlops * p.MatrixPJPerFlop * pJ)
	for _, cs := range st.Cores {
		e.VectorJoules += float64(float64(cs.VectorRepeats) * p.VectorPJPerRepeat * pJ)
		for i, n := range cs.PathBytes {
			pj, _ := p.PathPJ(st.Geometry.Paths[i].Name)
			e.PathJoules += float64(float64(n) * pj * pJ)
		}
	}
	e.L2Joules = float64(float64(st.Traffic.L2Read) * p.L2PJPerByte * pJ)
	e.HBMJoules = float64(float64(st.Traffic.HBM()) * p.HBMPJPerByte * pJ)
	e.Joules = e.StaticJoules + e.MatrixJoules + e.VectorJoules + e.PathJoules + e.L2Joules + e.HBMJoules
	if secs > 0 {
		e.AverageWatts = e.Joules / secs
	}
	e.OverMax = e.AverageWatts > p.MaxW
	flops := st.MMADFlops
	if r.Flops != nil && r.Flops.Total > 0 {
		flops = r.Flops.Total
	}
	if e.Joules > 0 {
		e.GFLOPSPerWatt = flops / e.Joules / 1e9
	}
	r.Energy = e
}
