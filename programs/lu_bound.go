package programs

import (
	"github.com/davinci-sim/davinci-sim/arch"
	"github.com/davinci-sim/davinci-sim/report"
)

// luPaths are the GM bytes of an LU kernel on each of a core's GM paths
// (summed over its cores): GM→L1 (the L rows and U chunks, MTE2), GM→UB
// (trailing tiles and panels to convert, MTE2) and UB→GM (results, MTE3).
type luPaths struct{ gmL1, gmUB, ubGM float64 }

func (b luPaths) total() float64 { return b.gmL1 + b.gmUB + b.ubGM }

// gemmPaths returns the GM bytes the GEMM kernels gs move on cores cores:
// each segment's A rows once, per tile the B operand and the output (read
// and written for trailing updates, written for TRSM).
func gemmPaths(pl *luPlan, cores int, gs ...*luGEMM) luPaths {
	var b luPaths
	for ci := 0; ci < cores; ci++ {
		for _, s := range segments(ci, cores, gs...) {
			job := &s.g.jobs[s.job]
			b.gmL1 += float64(float64(float64(job.rows)*float64(s.g.K)) * 2) // ·2 compiles to p+p: round p too
			for t := s.t0; t < s.t1; t++ {
				cols := float64(job.tiles[t].cols)
				b.gmL1 += float64(float64(float64(s.g.K)*cols) * 2)
				if s.g.epi == epiSub {
					b.gmUB += float64(float64(job.rows) * cols * float64(pl.tb))
					b.ubGM += float64(float64(job.rows) * cols * float64(pl.tb))
				} else {
					b.ubGM += float64(float64(float64(job.rows)*cols) * 2)
				}
			}
		}
	}
	return b
}

// cvtPaths returns the GM bytes of iteration i's panel conversion: per row
// of its work list nb FP32 values read and nb FP16 values written.
func cvtPaths(pl *luPlan, i int) luPaths {
	var b luPaths
	for _, c := range pl.cvtJobs(i) {
		b.gmUB += float64(float64(c.rows) * float64(pl.nb) * 4)
		b.ubGM += float64(float64(float64(c.rows)*float64(pl.nb)) * 2)
	}
	return b
}

// setPaths records kernel k's GM bytes per path (for its bound) and their
// sum as k.GMBytes.
func (j *luJob) setPaths(k *arch.Kernel, b luPaths) {
	if j.paths == nil {
		j.paths = map[*arch.Kernel]luPaths{}
	}
	j.paths[k] = b
	k.GMBytes = b.total()
}

// bound returns the least times of a kernel doing flops on cores cores with
// GM bytes b per path and measured traffic t (report.Bound); Efficiency and
// BoundTFLOPS are left to finishBound.
func (pl *luPlan) bound(flops float64, cores int, b luPaths, t arch.Traffic) report.Bound {
	m := pl.mach
	peak, _ := m.Peak("FP16")
	hz := float64(m.Clock())
	ps := m.DaVinci().Paths
	var r report.Bound
	if cores > 0 {
		r.CubeSeconds = flops / (peak * float64(cores) / float64(m.Cores))
		mte2 := b.gmL1/ps.GM_L1.BytesPerCycle + b.gmUB/ps.GM_UB.BytesPerCycle
		mte3 := b.ubGM / ps.UB_GM.BytesPerCycle
		r.GMPathSeconds = max(mte2, mte3) / hz / float64(cores)
	}
	r.HBMSeconds = float64(t.HBM()) / float64(m.GM.Bandwidth)
	if bw := float64(m.L2.Bandwidth); bw > 0 {
		r.L2Seconds = float64(t.L2Read) / bw
	}
	r.BoundSeconds = max(r.CubeSeconds, r.HBMSeconds, r.GMPathSeconds, r.L2Seconds)
	return r
}

// addBound adds kernel bound k to the zone bound z: every term and the
// bound time summed.
func addBound(z *report.Bound, k report.Bound) {
	z.CubeSeconds += k.CubeSeconds
	z.HBMSeconds += k.HBMSeconds
	z.GMPathSeconds += k.GMPathSeconds
	z.L2Seconds += k.L2Seconds
	z.BoundSeconds += k.BoundSeconds
}

// finishBound names the largest term and sets the bound's throughput and
// achieved / bound for flops done in seconds.
func finishBound(r *report.Bound, flops, seconds float64) {
	r.LimitedBy = "cube"
	top := r.CubeSeconds
	for _, c := range []struct {
		name string
		v    float64
	}{{"hbm", r.HBMSeconds}, {"gm_path", r.GMPathSeconds}, {"l2", r.L2Seconds}} {
		if c.v > top {
			r.LimitedBy, top = c.name, c.v
		}
	}
	if r.BoundSeconds > 0 {
		r.BoundTFLOPS = flops / r.BoundSeconds / 1e12
	}
	if seconds > 0 {
		r.Efficiency = r.BoundSeconds / seconds
	}
}
