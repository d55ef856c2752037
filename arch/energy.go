package arch

import "github.com/davinci-sim/davinci-sim/sim"

// EnergyObserver is an optional interface of an Observer: on a machine
// with a power model (machines.Power) the chip prices each unit of work as
// it counts it — matrix flops, vector repeats, bytes on a copy path, bytes
// the L2 serves, bytes reaching HBM — with the same per-unit energies that
// give report.json's energy, and tells the observer. Summed over a run, the
// Energy calls plus StaticWatts × the run's time are that energy (the
// trace's power counter is built from them).
type EnergyObserver interface {
	// StaticWatts reports the machine's static power (W); it comes before
	// any Energy call.
	StaticWatts(w float64)
	// Energy reports pJ picojoules of dynamic energy spent at time t.
	Energy(t sim.Time, pJ float64)
}

// energyMeter prices counted work for an EnergyObserver. A nil meter (no
// observer that wants it, or no power model) costs a nil check.
type energyMeter struct {
	obs    EnergyObserver
	eng    *sim.Engine
	flop   float64   // pJ per matrix flop
	repeat float64   // pJ per vector repeat
	path   []float64 // pJ per byte, by geometry path index
	l2     float64   // pJ per byte the L2 serves
	hbm    float64   // pJ per byte reaching HBM
}

// newEnergyMeter returns the meter of chip c (nil when its observer is
// not an EnergyObserver or its machine has no power model).
func newEnergyMeter(c *Chip) *energyMeter {
	eo, ok := c.opts.Observer.(EnergyObserver)
	p := &c.M.Power
	if !ok || !p.Given() {
		return nil
	}
	e := &energyMeter{obs: eo, eng: c.eng, flop: p.MatrixPJPerFlop, repeat: p.VectorPJPerRepeat,
		l2: p.L2PJPerByte, hbm: p.HBMPJPerByte}
	for _, ps := range c.geom.Paths {
		pj, _ := p.PathPJ(ps.Name)
		e.path = append(e.path, pj)
	}
	eo.StaticWatts(p.StaticW)
	return e
}

// matrix prices flops executed on a matrix unit now.
func (e *energyMeter) matrix(flops float64) {
	if e != nil {
		e.obs.Energy(e.eng.Now(), flops*e.flop)
	}
}

// gm prices a GM transfer started now: l2 bytes served by the L2 and hbm
// moved by HBM (as Traffic.add counts them: a read's lines no cache held,
// a write's every byte; the memory-side cache's bytes are not priced).
func (e *energyMeter) gm(l2, hbm int64) {
	if e == nil {
		return
	}
	e.obs.Energy(e.eng.Now(), float64(float64(l2)*e.l2)+float64(float64(hbm)*e.hbm))
}

// AddPathEnergy prices bytes a core moves at time t on the copy path with
// geometry index path (CoreStats.PathBytes), for an EnergyObserver; the
// core models call it where they count the bytes.
func (c *Chip) AddPathEnergy(t sim.Time, path int, bytes int64) {
	if e := c.energy; e != nil && path >= 0 && path < len(e.path) {
		e.obs.Energy(t, float64(bytes)*e.path[path])
	}
}

// AddVectorEnergy prices repeats of a vector instruction started at time t
// (CoreStats.VectorRepeats), for an EnergyObserver.
func (c *Chip) AddVectorEnergy(t sim.Time, repeats int64) {
	if e := c.energy; e != nil {
		e.obs.Energy(t, float64(repeats)*e.repeat)
	}
}
