package programs

import (
	"errors"
	"fmt"
	"math"
	"reflect"

	"github.com/davinci-sim/davinci-sim/arch"
	"github.com/davinci-sim/davinci-sim/cube"
	"github.com/davinci-sim/davinci-sim/fp"
	"github.com/davinci-sim/davinci-sim/isa"
	"github.com/davinci-sim/davinci-sim/machines"
	"github.com/davinci-sim/davinci-sim/report"
)

// lu-gemm: the LU trailing-update GEMM operator alone, on every core of one
// NPU — the roofline experiment of the HPL-MxP paper (gemm128, gemm256,
// gemm512: one rank-nb update; gemm256_fusion: n_fused rank-nb updates
// summed in the cube). It runs the same kernel as lu-fused's zones:
// C (m×m, trailing precision) −= (1/s)·L (m×K FP16)·U (K×m FP16), K = n_fused·nb.

func init() {
	register(&Kind{Name: "lu-gemm", NoArrays: true, Params: reflect.TypeFor[LUGEMMParams](), Machines: []string{"davinci"}, Example: "lu-gemm256.yaml", NumericsModes: []string{NumericsFull, NumericsOff},
		Summary: "the LU trailing-update GEMM operator alone (roofline: gemm128/256/512, gemm256_fusion)",
		Build:   buildLUGEMM})
}

// LUGEMMParams are the parameters of lu-gemm.
type LUGEMMParams struct {
	Kind     string   `mapstructure:"kind"`
	Machine  string   `mapstructure:"machine"`
	M        int      `mapstructure:"m"`       // trailing matrix order (a multiple of nb)
	NB       int      `mapstructure:"nb"`      // block size
	NFused   int      `mapstructure:"n_fused"` // rank-nb updates fused (1 = plain update)
	Trailing string   `mapstructure:"trailing"`
	Tiling   LUTiling `mapstructure:"tiling"`
	Seed     int64    `mapstructure:"seed"`
	Numerics string   `mapstructure:"numerics"` // full (checked against the golden model) | off
}

type luGEMMJob struct {
	pl      *luPlan
	p       LUGEMMParams
	g       *luGEMM
	a32     []float32
	a16     []uint16
	lh, uh  []uint16
	checked int
}

func buildLUGEMM(f *File, m *machines.Machine, o Options) (Job, error) {
	var p LUGEMMParams
	if err := f.Decode(&p, o); err != nil {
		return nil, err
	}
	o.apply(&p.Numerics, &p.Seed)
	if p.Numerics == "" {
		p.Numerics = NumericsOff
	}
	if p.Numerics != NumericsFull && p.Numerics != NumericsOff {
		return nil, f.badKey("numerics", "must be full or off (got %q)", p.Numerics)
	}
	if p.NFused == 0 {
		p.NFused = 1
	}
	if p.NB <= 0 || p.NB%16 != 0 {
		return nil, f.badKey("nb", "must be a positive multiple of 16 (got %d)", p.NB)
	}
	if p.M <= 0 || p.M%p.NB != 0 {
		return nil, limitedBy(f.badKey("m", "must be a positive multiple of nb = %d (got %d)", p.NB, p.M), "program.nb")
	}
	if p.NFused < 1 {
		return nil, f.badKey("n_fused", "must be ≥ 1 (got %d)", p.NFused)
	}
	if err := checkLUHostMemory(f.Path, p.Numerics, "m", p.M, o.hostFor(f)); err != nil {
		return nil, err
	}
	// An lu-fused plan whose first n_fused block columns are the panels.
	lp := LUParams{N: p.M + p.NFused*p.NB, NB: p.NB, NFused: p.NFused, NFusion: m.Cores, Trailing: p.Trailing,
		Tiling: p.Tiling, Numerics: NumericsOff}
	lp.defaults()
	lp.chooseTiling(m)
	lp.Numerics = NumericsOff
	// The plan's n is m + n_fused·nb: its refusals of n are of the file's
	// m, the constraint coming from n_fused and nb too; its other keys are
	// the file's (the refusals kept, to be located: NamedOverride).
	ownKeys := func(err error) error {
		var ke *KeyError
		if !errors.As(err, &ke) || ke.Key != "n" {
			return err
		}
		// In place, as NamedOverrideBy locates it: an error wrapping it
		// with words of its own keeps the refusal (and its bad-input mark).
		ke.Key, ke.Msg = "m", fmt.Sprintf("m + n_fused·nb = %d: %s", lp.N, ke.Msg)
		ke.From = append(ke.From, "program.n_fused", "program.nb")
		return err
	}
	if err := lp.validate(f.Path, m); err != nil {
		return nil, ownKeys(err)
	}
	pl, err := newLUPlan(f.Path, lp, m)
	if err != nil {
		return nil, ownKeys(err)
	}
	pl.main = pl.fu
	j := &luGEMMJob{pl: pl, p: p}
	j.g = pl.update(band{p.NFused, pl.nbk}, 0, p.NFused, 1.0/64)
	return j, nil
}

func (j *luGEMMJob) Program() isa.Program {
	cores := len(j.pl.fu)
	p := isa.Program{Name: "lu-gemm", Cores: make([]isa.Stream, cores), Generated: true}
	for c := range p.Cores {
		p.Cores[c] = j.pl.gemmStream(c, cores, j.g)
	}
	return p
}

// Mode is functional with full numerics.
func (j *luGEMMJob) Mode() arch.Mode { return modeFor(j.p.Numerics) }

// Prepare fills the trailing matrix and the panels with random values (L
// and U entries in [−1, 1), trailing entries in [−0.5, 0.5)).
func (j *luGEMMJob) Prepare(chip *arch.Chip) error {
	if j.Mode() != arch.Functional {
		return nil
	}
	pl := j.pl
	n := pl.n
	r := NewRand(j.p.Seed, 7)
	o := fp.Options{Round: fp.RNE, Saturate: true}
	j.lh = make([]uint16, n*n)
	j.uh = make([]uint16, n*n)
	K := j.p.NFused * pl.nb
	for row := 0; row < n; row++ {
		for k := 0; k < K; k++ {
			j.lh[row*n+k] = uint16(fp.FromFloat64(float64(2*float64(r.Float64()))-1, fp.FP16, o)) // 2·x compiles to x+x
			j.uh[k*n+row] = uint16(fp.FromFloat64(float64(2*float64(r.Float64()))-1, fp.FP16, o))
		}
	}
	gm := chip.GM()
	if pl.tb == 4 {
		j.a32 = make([]float32, n*n)
		for i := range j.a32 {
			j.a32[i] = float32(float64(r.Float64()) - 0.5)
		}
		if err := gm.WriteFloat32s(pl.a, j.a32); err != nil {
			return err
		}
	} else {
		j.a16 = make([]uint16, n*n)
		for i := range j.a16 {
			j.a16[i] = uint16(fp.FromFloat64(float64(r.Float64())-0.5, fp.FP16, o))
		}
		if err := gm.WriteUint16s(pl.a, j.a16); err != nil {
			return err
		}
	}
	if err := gm.WriteUint16s(pl.lh, j.lh); err != nil {
		return err
	}
	return gm.WriteUint16s(pl.uh, j.uh)
}

func (j *luGEMMJob) Outputs() []Output { return nil }

// Finish reports TFLOP/s and operational intensity, and with full numerics
// compares the updated trailing matrix with the golden model bit for bit.
func (j *luGEMMJob) Finish(chip *arch.Chip, st *arch.Stats, rep *report.Report) error {
	pl := j.pl
	flops := j.g.flops()
	peak, _ := pl.mach.Peak("FP16")
	secs := st.Time.Seconds()
	rep.Program = map[string]any{"kind": "lu-gemm", "m": j.p.M, "nb": j.p.NB, "n_fused": j.p.NFused, "trailing": pl.p.Trailing,
		"tiling": pl.p.Tiling, "numerics": j.p.Numerics}
	rep.Flops = &report.FlopsReport{Total: flops, PeakTFLOPS: peak / 1e12, Convention: "2·m²·K (K = n_fused·nb); peak = FP16 cube peak"}
	if secs > 0 {
		rep.Flops.TFLOPS = flops / secs / 1e12
		rep.Flops.PeakFraction = flops / secs / peak
	}
	bytes := float64(st.GMReadBytes + st.GMWriteBytes)
	if bytes > 0 {
		rep.Memory.OperationalIntensity = flops / bytes
	}
	sec := &report.LUGEMM{M: j.p.M, NB: j.p.NB, K: j.p.NFused * j.p.NB, TFLOPS: rep.Flops.TFLOPS,
		OperationalIntensity: rep.Memory.OperationalIntensity, GMBytes: bytes, Seconds: secs}
	if hbm := st.Traffic.HBM(); hbm > 0 {
		sec.HBMBytes = float64(hbm)
		sec.OperationalIntensityHBM = flops / float64(hbm)
	}
	b := pl.bound(flops, len(pl.fu), gemmPaths(pl, len(pl.fu), j.g), st.Traffic)
	finishBound(&b, flops, secs)
	sec.Bound = &b
	rep.LUGEMM = sec
	rep.Notes = append(rep.Notes, pl.p.notes()...)
	if j.Mode() != arch.Functional {
		return nil
	}
	model, err := cube.Preset(pl.mach.DaVinci().Cube.Numerics)
	if err != nil {
		return err
	}
	g := &luGolden{n: pl.n, nb: pl.nb, a32: j.a32, a16: j.a16, lh: j.lh, uh: j.uh, s: 64}
	if err := g.update(pl, model, band{j.p.NFused, pl.nbk}, 0, j.p.NFused); err != nil {
		return err
	}
	mism := 0
	gm := chip.GM()
	if pl.tb == 4 {
		got := make([]float32, pl.n*pl.n)
		if err := readResultFloat32s(gm, pl.a, got); err != nil {
			return err
		}
		for i := range got {
			if math.Float32bits(got[i]) != math.Float32bits(g.a32[i]) {
				mism++
			}
		}
	} else {
		got := make([]uint16, pl.n*pl.n)
		if err := readResultUint16s(gm, pl.a, got); err != nil {
			return err
		}
		for i := range got {
			if got[i] != g.a16[i] {
				mism++
			}
		}
	}
	sec.GoldenMismatches = &mism
	if mism > 0 {
		return fmt.Errorf("%w: %d trailing values differ from the golden model", ErrCheckFailed, mism)
	}
	rep.Notes = append(rep.Notes, "check: the simulated trailing matrix equals the golden model's bit for bit")
	return nil
}
