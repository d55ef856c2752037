package programs

import (
	"context"
	"errors"

	"github.com/davinci-sim/davinci-sim/arch"
	"github.com/davinci-sim/davinci-sim/fp"
	"github.com/davinci-sim/davinci-sim/machines"
	"github.com/davinci-sim/davinci-sim/report"
	"github.com/davinci-sim/davinci-sim/stopwork"
)

// scheme: native — FP32 GEMM without emulation, the baseline every scheme
// is measured against: kind sgemm's kernel, reused (not duplicated). On
// NVIDIA GPUs it runs on the CUDA cores (CUTLASS's SIMT kernel: no NVIDIA
// tensor core multiplies FP32), on AMD CDNA on the FP32 MFMAs (unit: vector
// runs it on the VALUs), on DaVinci on an FP32 cube (the 910B3; the 910A
// has none: bad input).

// nativeJob is kind sgemm's job run as emulated-gemm's native scheme: its
// report says so.
type nativeJob struct {
	Job
	units string      // where the products ran
	auto  *autoChoice // scheme: auto's choice (report program.auto), or nil
	k     int         // the GEMM's k (fp32CNotes)
}

// Finish fills the sgemm job's report, then names the scheme and, with
// numerics, says where C leaves FP32's range (fp32CNotes: C is 0 where
// every product of the inputs rounds to zero).
func (j *nativeJob) Finish(chip *arch.Chip, st *arch.Stats, rep *report.Report) error {
	if err := j.Job.Finish(chip, st, rep); err != nil {
		return err
	}
	if rep.Program == nil {
		rep.Program = map[string]any{}
	}
	rep.Program["kind"] = "emulated-gemm"
	rep.Program["scheme"] = "native"
	rep.Program["units"] = j.units
	reportAuto(rep, j.auto)
	var a, b []float32
	var rc *runContext // (the GEMM job's: it hears the run's context)
	switch g := j.Job.(type) {
	case *gpuGEMMJob:
		a, b, rc = g.a, g.b, &g.runContext
	case *gemmJob:
		a, b, rc = g.a, g.b, &g.runContext
	}
	if a != nil {
		st := stopwork.New(rc.stop())
		ma, okA := maxAbsUntil(a, &st)
		mb, okB := maxAbsUntil(b, &st)
		if !okA || !okB {
			return rc.stoppedNumerics()
		}
		over, zero := fp32CNotes(ma, mb, j.k, true)
		for _, n := range []string{over, zero} {
			if n != "" {
				rep.Notes = append(rep.Notes, n)
			}
		}
	}
	return nil
}

// buildEmulatedNative builds scheme native on m: kind sgemm's kernel with
// the program's GEMM parameters.
func buildEmulatedNative(f *File, m *machines.Machine, o Options, ep EmulatedParams, bad func(key, format string, a ...any) error) (*nativeJob, error) {
	p := ep.GEMMParams
	o.applyGEMM(f, &p)
	if ep.TargetBits != 0 {
		return nil, bad("target_bits", "applies to scheme: auto")
	}
	if ep.HistogramBins != 0 {
		return nil, bad("histogram_bins", "applies to the FP32 emulations (the error histogram is against a CPU FP32 SGEMM); not to scheme native")
	}
	if key := p.derivedKindKey(f, "unit"); key != "" {
		return nil, bad(key, "does not apply to emulated-gemm's native scheme on %s (%s)", m.Name, m.Kind)
	}
	if tg, ok := newGPUTarget(m); ok {
		j, err := buildGPUGEMMFrom(f, m, p, fp.FP32, o.stop())
		if errors.Is(err, errStopped) {
			return nil, o.stoppedBuilding(f.Path, "drawing the inputs")
		}
		if err != nil {
			return nil, err
		}
		return &nativeJob{Job: j, units: tg.nativeUnits(j.pl.lane), k: p.K}, nil
	}
	if p.Unit != "" {
		return nil, bad("unit", "applies to GPU machines (nvidia-sm, amd-cu); machine %s is %s", m.Name, m.Kind)
	}
	if dv := m.DaVinci(); dv == nil || dv.Cube.KStepFP32 == 0 {
		return nil, limitedBy(bad("scheme", "native FP32 needs FP32 matrix units (an FP32 cube: core.cube.kstep_fp32 > 0); machine %s has none (its emulated FP32: kind sgemm-cube)", m.Name), matrixFrom(m, fp.FP32)...)
	}
	j, err := buildDaVinciGEMM(f, m, p, gemmVariant{native: true}, o.stop())
	if errors.Is(err, errStopped) {
		return nil, o.stoppedBuilding(f.Path, "drawing the inputs")
	}
	if err != nil {
		return nil, err
	}
	return &nativeJob{Job: j, units: "FP32 cube", k: p.K}, nil
}

// setContext hands the run's context to the GEMM job it wraps (Finish's
// numerics hear it there).
func (j *nativeJob) setContext(ctx context.Context) { giveContext(j.Job, ctx) }

// kBatched reports whether the sgemm kernel ran batched k-steps.
func (j *nativeJob) kBatched() bool {
	k, ok := j.Job.(kBatchedJob)
	return ok && k.kBatched()
}
