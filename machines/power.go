package machines

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// Power is a machine's power model (the optional power: section): a static
// power plus energy per unit of work — per matrix flop, per vector repeat,
// per byte on each copy path and per byte reaching the L2 and HBM. The
// energy of a run is StaticW × time + the sum of the work's energies;
// MaxW, the published board power, is the ceiling the model must stay
// under (the report says when a run's average exceeds it).
type Power struct {
	// StaticW is drawn for the whole run, idle or not (W).
	StaticW float64 `mapstructure:"static_w"`
	// MaxW is the published maximum power of the chip or board (W).
	MaxW float64 `mapstructure:"max_w"`
	// MatrixPJPerFlop is the matrix unit's energy per flop (2 per MAC), pJ.
	MatrixPJPerFlop float64 `mapstructure:"matrix_pj_per_flop"`
	// VectorPJPerRepeat is the vector unit's energy per repeat, pJ.
	VectorPJPerRepeat float64 `mapstructure:"vector_pj_per_repeat"`
	// HBMPJPerByte and L2PJPerByte are the energies of a byte read from or
	// written to HBM, and of a byte the L2 serves, pJ.
	HBMPJPerByte float64 `mapstructure:"hbm_pj_per_byte"`
	L2PJPerByte  float64 `mapstructure:"l2_pj_per_byte"`
	// PathPJPerByte is the energy of a byte moved on each copy path of the
	// core (keys: the geometry's path names, e.g. GM_L1, L1_L0A), pJ —
	// for paths from or to GM, the core's side of the transfer (the L2 and
	// HBM energies come on top).
	PathPJPerByte map[string]float64 `mapstructure:"path_pj_per_byte"`
}

// PathPJ returns the energy per byte of the copy path named name (keys are
// case-insensitive, as every key of a machine file).
func (p *Power) PathPJ(name string) (float64, bool) {
	for k, v := range p.PathPJPerByte {
		if strings.EqualFold(k, name) {
			return v, true
		}
	}
	return 0, false
}

// maxPowerFigure bounds every figure of a power section (W or pJ).
const maxPowerFigure = 1e9

// Given reports whether the machine file has a power section.
func (p *Power) Given() bool {
	return p.StaticW != 0 || p.MaxW != 0 || p.MatrixPJPerFlop != 0 || p.VectorPJPerRepeat != 0 ||
		p.HBMPJPerByte != 0 || p.L2PJPerByte != 0 || len(p.PathPJPerByte) > 0
}

// problems lists the violated constraints of a power section (keys
// relative to the file): once given it is complete, every figure finite
// and ≥ 0 (MaxW > 0 and at least StaticW), and every copy path of geometry g has an energy.
func (p *Power) problems(g *Geometry) []problem {
	if !p.Given() {
		return nil
	}
	var ps []problem
	add := func(key, format string, args ...any) {
		ps = append(ps, problem{"power." + key, fmt.Sprintf(format, args...)})
	}
	// Figures beyond maxPowerFigure are not power figures of a chip; the
	// bound also keeps every energy finite.
	ok := func(v float64) bool { return v >= 0 && v <= maxPowerFigure && !math.IsNaN(v) }
	for _, v := range []struct {
		key string
		v   float64
	}{{"static_w", p.StaticW}, {"matrix_pj_per_flop", p.MatrixPJPerFlop}, {"vector_pj_per_repeat", p.VectorPJPerRepeat},
		{"hbm_pj_per_byte", p.HBMPJPerByte}, {"l2_pj_per_byte", p.L2PJPerByte}} {
		if !ok(v.v) {
			add(v.key, "must be in 0..%g (got %v)", maxPowerFigure, v.v)
		}
	}
	if !(p.MaxW > 0) || !ok(p.MaxW) {
		hint := ""
		if p.MaxW == 0 {
			hint = "; a power section, once given, needs every figure"
		}
		add("max_w", "must be in (0, %g]: the published maximum power (got %v%s)", maxPowerFigure, p.MaxW, hint)
	} else if ok(p.StaticW) && p.MaxW < p.StaticW {
		// (Every run would exceed it: the figures cannot both be the chip's.)
		add("max_w", "must be at least static_w = %v W, drawn whatever the chip does (got %v)", p.StaticW, p.MaxW)
	}
	names := map[string]bool{}
	var missing []string
	for _, ps := range g.Paths {
		names[strings.ToLower(ps.Name)] = true
		if _, found := p.PathPJ(ps.Name); !found {
			missing = append(missing, ps.Name)
		}
	}
	if len(missing) > 0 {
		// (One problem for them all: a section given by one --set lacked
		// every path, each said in a line of its own.)
		verb := "are"
		if len(missing) == 1 {
			verb = "is"
		}
		add("path_pj_per_byte", "needs an entry for every copy path; %s %s missing", strings.Join(missing, ", "), verb)
	}
	var extra []string
	for k, v := range p.PathPJPerByte {
		if !names[strings.ToLower(k)] {
			extra = append(extra, k)
		} else if !ok(v) {
			add("path_pj_per_byte."+k, "must be in 0..%g (got %v)", maxPowerFigure, v)
		}
	}
	if len(extra) > 0 {
		sort.Strings(extra)
		var have []string
		for _, ps := range g.Paths {
			have = append(have, ps.Name)
		}
		add("path_pj_per_byte", "unknown paths %s (the machine's: %s)", strings.Join(extra, ", "), strings.Join(have, ", "))
	}
	return ps
}
