package programs

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/davinci-sim/davinci-sim/cube"
	"github.com/davinci-sim/davinci-sim/fp"
	"github.com/davinci-sim/davinci-sim/isa"
	"github.com/davinci-sim/davinci-sim/machines"
	"github.com/davinci-sim/davinci-sim/report"
	"github.com/davinci-sim/davinci-sim/stopwork"
)

// Scheme is one way of emulating an FP32 GEMM with low-precision matrix
// units (kind emulated-gemm): how each FP32 input splits into pieces, which
// piece products run on the matrix units, into which accumulators and how
// the epilogue combines them. The named schemes (FACTS.md §4) are presets
// of it; a program may give its own under `scheme:`.
//
// Piece i of x is round_i((x − Σ_{j<i} piece_j·2^-scale_j) · 2^scale_i),
// the residual computed in FP32 (exactly, for the formats and ranges the
// schemes use). A product "ab" multiplies piece a of A by piece b of B; its
// weight is 2^-(scale_a + scale_b), and every product of a group must have
// the same weight. The epilogue is, in FP32 RNE, ordered:
// c = w_0·acc_0, then c = c + w_g·acc_g for g = 1, 2, …; or
// corrections-first: t = acc_1 + acc_2 + … (in order), c = w_0·acc_0 +
// w_1·t (SGEMM-cube's reconstruction).
type Scheme struct {
	Name   string        `mapstructure:"name"`
	Pieces []SchemePiece `mapstructure:"pieces"`
	Groups []SchemeGroup `mapstructure:"groups"`
	// Kernels is fused (one product kernel with an accumulator per group:
	// Markidis, Ootomo, LE-GEMM) or termwise (one GEMM kernel per group,
	// chained by beta = 1 through C in memory: Ape FP32-F, SGEMM-cube).
	Kernels string `mapstructure:"kernels"`
	// Epilogue is ordered (default) or corrections-first.
	Epilogue string `mapstructure:"epilogue"`
	// Split is where the FP32 inputs are split (GPU machines): pass (default:
	// a memory-bound kernel of its own writes every piece, the product
	// kernels read them) or fused (each product kernel reads FP32 tiles
	// and splits them in its k-loop, on the vector units, before they go
	// to shared memory: a register-staged pipeline; Ape's "data casting
	// inside the kernel").
	Split string `mapstructure:"split"`
}

// SchemePiece is one piece of the split.
type SchemePiece struct {
	Format   string `mapstructure:"format"`   // fp16 | bf16 | tf32 (all pieces alike)
	Rounding string `mapstructure:"rounding"` // rne (default) | rz | truncate (= rz: a bit-cut) | rna | rd | ru | ro
	Scale    int    `mapstructure:"scale"`    // exponent of the scaling of the residual
	Saturate bool   `mapstructure:"saturate"` // overflow to the largest finite value (Ascend) instead of ±Inf
}

// reportPieces returns the scheme's pieces as the report shows them
// (normalPieces).
func (sp *schemePlan) reportPieces() []SchemePiece { return normalPieces(sp.s.Pieces) }

// normalPieces returns pieces with the rounding each gets by its
// IEEE-style name (rne where the scheme leaves it out; up is ru, none rne —
// Ascend's name —; truncate stays, the bit-cut the schemes name so).
func normalPieces(pieces []SchemePiece) []SchemePiece {
	out := slices.Clone(pieces)
	for i := range out {
		if r, ok := fp.ParseRounding(out[i].Rounding); ok {
			out[i].Rounding = strings.ToLower(r.String())
		} else if out[i].Rounding == "" {
			out[i].Rounding = "rne"
		}
	}
	return out
}

// samePieces returns pieces as they compare with a preset's: normalPieces,
// with truncate read as the rz it is.
func samePieces(pieces []SchemePiece) []SchemePiece {
	out := normalPieces(pieces)
	for i := range out {
		if out[i].Rounding == "truncate" {
			out[i].Rounding = "rz"
		}
	}
	return out
}

// sameGroups returns groups as they compare with a preset's: accumulated
// inside where they do not say.
func sameGroups(groups []SchemeGroup) []SchemeGroup {
	out := slices.Clone(groups)
	for i := range out {
		out[i].Accumulate = or(out[i].Accumulate, "inside")
	}
	return out
}

// or returns s, or def where s is empty.
func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// describe says in a line what the scheme is, for the text summary
// ("le-gemm: pieces fp16 rz, fp16 rz ×2^10; accumulators [hh] [hl lh];
// kernels fused, epilogue ordered").
func (sp *schemePlan) describe() string {
	var pieces, groups []string
	for _, p := range sp.reportPieces() {
		t := p.Format + " " + p.Rounding
		if p.Scale != 0 {
			t += fmt.Sprintf(" ×2^%d", p.Scale)
		}
		if p.Saturate {
			t += " saturating"
		}
		pieces = append(pieces, t)
	}
	for _, g := range sp.s.Groups {
		t := "[" + strings.Join(g.Products, " ") + "]"
		if g.Accumulate == "outside" {
			t += " outside"
		}
		groups = append(groups, t)
	}
	return fmt.Sprintf("%s: pieces %s; accumulators %s; kernels %s, epilogue %s", sp.name(), strings.Join(pieces, ", "), strings.Join(groups, " "), sp.s.Kernels, sp.s.Epilogue)
}

// SchemeGroup is an accumulator and the products run into it, in order
// within each k-step.
type SchemeGroup struct {
	Products []string `mapstructure:"products"` // "hh", "hl", "lh", "ll"; h, m, l or digits 0.. name pieces
	// Accumulate is inside (default: one accumulator chained through the
	// matrix unit's MMAs) or outside (each k-step's products from C = 0,
	// added to an FP32 accumulator with RNE on the vector units: Ootomo).
	Accumulate string `mapstructure:"accumulate"`
}

// schemePresets are the named schemes. Readings where the sources are
// ambiguous are stated in docs/emulated.md.
var schemePresets = map[string]Scheme{
	"hgemm": {Pieces: []SchemePiece{{Format: "fp16"}}, Groups: []SchemeGroup{{Products: []string{"hh"}}}},
	"markidis": {Pieces: []SchemePiece{{Format: "fp16"}, {Format: "fp16"}},
		Groups: []SchemeGroup{{Products: []string{"hh", "hl", "lh"}}}},
	"ape-fp32m": {Pieces: []SchemePiece{{Format: "fp16"}, {Format: "fp16"}},
		Groups: []SchemeGroup{{Products: []string{"hh", "hl", "lh", "ll"}}}},
	"ootomo": {Pieces: []SchemePiece{{Format: "fp16"}, {Format: "fp16", Scale: 11}},
		Groups: []SchemeGroup{{Products: []string{"hh"}, Accumulate: "outside"}, {Products: []string{"hl", "lh"}}}},
	"ape-fp32f": {Pieces: []SchemePiece{{Format: "fp16"}, {Format: "fp16", Scale: 12}}, Kernels: "termwise",
		Groups: []SchemeGroup{{Products: []string{"hh"}}, {Products: []string{"lh"}}, {Products: []string{"hl"}}}},
	"ape-fp32t": {Pieces: []SchemePiece{{Format: "tf32"}, {Format: "tf32"}},
		Groups: []SchemeGroup{{Products: []string{"hh", "hl", "lh"}}}},
	"ape-fp32b": {Pieces: []SchemePiece{{Format: "bf16"}, {Format: "bf16"}, {Format: "bf16"}},
		Groups: []SchemeGroup{{Products: []string{"hh", "hm", "mh", "hl", "mm", "lh"}}}},
	"bf16x9": {Pieces: []SchemePiece{{Format: "bf16"}, {Format: "bf16"}, {Format: "bf16"}},
		Groups: []SchemeGroup{{Products: []string{"hh", "hm", "mh", "hl", "mm", "lh", "ml", "lm", "ll"}}}},
	"sgemm-cube": {Pieces: []SchemePiece{{Format: "fp16", Saturate: true}, {Format: "fp16", Scale: 12, Saturate: true}},
		Kernels: "termwise", Epilogue: "corrections-first",
		Groups: []SchemeGroup{{Products: []string{"hh"}}, {Products: []string{"hl"}}, {Products: []string{"lh"}}}},
	"le-gemm": {Pieces: []SchemePiece{{Format: "fp16", Rounding: "truncate"}, {Format: "fp16", Rounding: "rz", Scale: 10}},
		Groups: []SchemeGroup{{Products: []string{"hh"}}, {Products: []string{"hl", "lh"}}}},
}

// schemePresetValue is preset name's scheme as a file would write it
// whole ({name, pieces, groups, kernels, epilogue, split}; keys left at
// their defaults left out), for --set of an entry of its lists
// (program.scheme.pieces[1].scale=10 on scheme: ootomo: Kind.SectionPresets);
// false for a name that is not a split into pieces.
func schemePresetValue(name string) (map[string]any, bool) {
	pre, ok := schemePresets[name]
	if _, whole := wholeSchemes[name]; !ok || whole {
		return nil, false
	}
	var pieces, groups []any
	for _, p := range pre.Pieces {
		m := map[string]any{"format": p.Format}
		if p.Rounding != "" {
			m["rounding"] = p.Rounding
		}
		if p.Scale != 0 {
			m["scale"] = p.Scale
		}
		if p.Saturate {
			m["saturate"] = true
		}
		pieces = append(pieces, m)
	}
	for _, g := range pre.Groups {
		products := make([]any, len(g.Products))
		for i, x := range g.Products {
			products[i] = x
		}
		m := map[string]any{"products": products}
		if g.Accumulate != "" {
			m["accumulate"] = g.Accumulate
		}
		groups = append(groups, m)
	}
	out := map[string]any{"name": name, "pieces": pieces, "groups": groups}
	for k, v := range map[string]string{"kernels": pre.Kernels, "epilogue": pre.Epilogue, "split": pre.Split} {
		if v != "" {
			out[k] = v
		}
	}
	return out, true
}

// wholeSchemes are the presets that are not a split of FP32 inputs into
// low-precision pieces: named alone (scheme: NAME), not by scheme.name.
var wholeSchemes = map[string]string{
	"native":    "FP32 GEMM without emulation (kind sgemm's kernel: CUDA cores, FP32 MFMAs, an FP32 cube)",
	"ape-int16": "INT16 GEMM from four INT8 piece GEMMs with INT32 accumulation, exact (emulated_int16.go)",
}

// SchemeNames returns the preset names, sorted: the FP32 emulations and
// the whole schemes (native, ape-int16).
func SchemeNames() []string {
	out := fp32SchemeNames()
	for n := range wholeSchemes {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// fp32SchemeNames returns the names of the presets that split FP32 inputs
// into pieces (the candidates of scheme: auto), sorted.
func fp32SchemeNames() []string {
	var out []string
	for n := range schemePresets {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// schemePlan is a checked scheme.
type schemePlan struct {
	s       Scheme
	changed []string // the keys of its preset (s.Name) the program changed
	format  fp.Format
	rounds  []fp.Options
	scales  []int
	groups  []schemeGroupPlan
	nA, nB  []int // pieces of A and of B some product uses, in order
	outside int   // groups accumulated outside
	// k is the GEMM's k, the products each accumulator sums
	// (accOverflow); 0 where the plan is a kind's split or cast
	// (sgemm-cube, hgemm: castRange), whose range is the pieces' alone.
	k int
	// epilogue: the steps combining the groups' accumulators into C.
	epilogue []epilogueStep
}

// schemeGroupPlan is a checked group: its products as (piece of A, piece of
// B), its weight exponent (the product is scaled by 2^-weight) and where it
// accumulates.
type schemeGroupPlan struct {
	prods   [][2]int
	weight  int
	outside bool
}

// productName names product p (piece of A, piece of B) as the scheme's
// groups and kernels do: by the pieces' letters — h, m, l of up to three
// pieces (hl, hh) — or, of four, their indices (01); pieceIndex reads
// either back.
func (sp *schemePlan) productName(p [2]int) string {
	letters := "hml"
	if len(sp.rounds) == 2 {
		letters = "hl"
	}
	name := func(i int) string {
		if len(sp.rounds) <= 3 && i < len(letters) {
			return letters[i : i+1]
		}
		return strconv.Itoa(i)
	}
	return name(p[0]) + name(p[1])
}

// pieceIndex maps a product letter to a piece of an n-piece split.
func pieceIndex(c byte, n int) (int, bool) {
	switch {
	case c >= '0' && c <= '9':
		i := int(c - '0')
		return i, i < n
	case c == 'h':
		return 0, true
	case c == 'l':
		return n - 1, n >= 2
	case c == 'm':
		return 1, n == 3
	}
	return 0, false
}

// resolveScheme returns the scheme a program names (scheme.name: a preset;
// the program's own keys override the preset's) or gives inline.
func resolveScheme(s Scheme, bad func(key, format string, a ...any) error) (*schemePlan, error) {
	var changed []string // the preset's keys the program's own replace
	if s.Name != "" {
		if err := checkSchemeName(s.Name, bad); err != nil {
			return nil, err
		}
		pre, ok := schemePresets[s.Name]
		if _, whole := wholeSchemes[s.Name]; whole {
			return nil, bad("scheme.name", "%s is not a split of FP32 inputs into pieces: name it alone (scheme: %s), without other scheme keys", s.Name, s.Name)
		}
		switch {
		case !ok && (s.Pieces == nil || s.Groups == nil):
			return nil, bad("scheme.name", "unknown scheme %+q (presets: %s; or give scheme.pieces and scheme.groups)", s.Name, strings.Join(SchemeNames(), ", "))
		case ok:
			// (split is how the pieces are made, not which: the name stays.)
			for _, k := range []struct {
				key  string
				same bool
			}{{"pieces", s.Pieces == nil || reflect.DeepEqual(samePieces(s.Pieces), samePieces(pre.Pieces))}, {"groups", s.Groups == nil || reflect.DeepEqual(sameGroups(s.Groups), sameGroups(pre.Groups))},
				{"kernels", s.Kernels == "" || s.Kernels == or(pre.Kernels, "fused")}, {"epilogue", s.Epilogue == "" || s.Epilogue == or(pre.Epilogue, "ordered")}} {
				if !k.same {
					changed = append(changed, k.key)
				}
			}
			if s.Pieces == nil {
				s.Pieces = pre.Pieces
			}
			if s.Groups == nil {
				s.Groups = pre.Groups
			}
			if s.Kernels == "" {
				s.Kernels = pre.Kernels
			}
			if s.Epilogue == "" {
				s.Epilogue = pre.Epilogue
			}
			if s.Split == "" {
				s.Split = pre.Split
			}
		}
		// (else a scheme of the program's own, which it names)
	}
	if s.Kernels == "" {
		s.Kernels = "fused"
	}
	if s.Epilogue == "" {
		s.Epilogue = "ordered"
	}
	if s.Split == "" {
		s.Split = "pass"
	}
	if len(s.Pieces) == 0 || len(s.Pieces) > 4 {
		return nil, bad("scheme.pieces", "give 1 to 4 pieces (format, rounding, scale), or scheme.name (got %d pieces)", len(s.Pieces))
	}
	pl := &schemePlan{s: s, changed: changed}
	for i, p := range s.Pieces {
		key := fmt.Sprintf("scheme.pieces[%d]", i)
		f, ok := map[string]fp.Format{"fp16": fp.FP16, "bf16": fp.BF16, "tf32": fp.TF32}[p.Format]
		if !ok {
			return nil, bad(key+".format", "must be fp16, bf16 or tf32 (got %+q)", p.Format)
		}
		if i == 0 {
			pl.format = f
		} else if f != pl.format {
			return nil, bad(key+".format", "all pieces must have one format (the matrix units multiply pieces of A and B together); piece 0 is %s (got %s)", s.Pieces[0].Format, p.Format)
		}
		r := p.Rounding
		switch r {
		case "":
			r = "rne"
		case "truncate":
			r = "rz"
		}
		mode, ok := fp.ParseRounding(r)
		if !ok {
			return nil, bad(key+".rounding", "unknown rounding %+q (rne, rz, truncate, rna, rd, ru, ro)", p.Rounding)
		}
		if p.Scale < 0 || p.Scale > 60 {
			return nil, bad(key+".scale", "must be in 0..60 (got %d)", p.Scale)
		}
		if i == 0 && p.Scale != 0 {
			return nil, bad(key+".scale", "the first piece is x itself rounded: its scale must be 0 (got %d)", p.Scale)
		}
		pl.rounds = append(pl.rounds, fp.Options{Round: mode, Saturate: p.Saturate})
		pl.scales = append(pl.scales, p.Scale)
	}
	switch s.Kernels {
	case "fused", "termwise":
	default:
		return nil, bad("scheme.kernels", "must be fused or termwise (got %+q)", s.Kernels)
	}
	switch s.Epilogue {
	case "ordered", "corrections-first":
	default:
		return nil, bad("scheme.epilogue", "must be ordered or corrections-first (got %+q)", s.Epilogue)
	}
	switch s.Split {
	case "pass", "fused":
	default:
		return nil, bad("scheme.split", "must be pass (a split kernel) or fused (split in the product kernels' k-loop) (got %+q)", s.Split)
	}
	if len(s.Groups) == 0 || len(s.Groups) > 4 {
		return nil, bad("scheme.groups", "give 1 to 4 groups of products (got %d)", len(s.Groups))
	}
	usedA, usedB := map[int]bool{}, map[int]bool{}
	seen := map[[2]int]bool{}
	for g, gr := range s.Groups {
		key := fmt.Sprintf("scheme.groups[%d]", g)
		gp := schemeGroupPlan{weight: -1}
		switch gr.Accumulate {
		case "", "inside":
		case "outside":
			gp.outside = true
			pl.outside++
		default:
			return nil, bad(key+".accumulate", "must be inside or outside (got %+q)", gr.Accumulate)
		}
		if len(gr.Products) == 0 {
			return nil, bad(key+".products", "give at least one product such as hh, hl, lh")
		}
		for _, pr := range gr.Products {
			a, okA := 0, len(pr) == 2
			b, okB := 0, okA
			if okA {
				a, okA = pieceIndex(pr[0], len(s.Pieces))
				b, okB = pieceIndex(pr[1], len(s.Pieces))
			}
			if !okA || !okB {
				return nil, bad(key+".products", "unknown product %+q with %d pieces (two letters, h, m, l or piece digits, e.g. hh, hl, lh, 01)", pr, len(s.Pieces))
			}
			if seen[[2]int{a, b}] {
				return nil, bad(key+".products", "product %+q runs twice", pr)
			}
			seen[[2]int{a, b}] = true
			w := pl.scales[a] + pl.scales[b]
			if gp.weight >= 0 && w != gp.weight {
				return nil, bad(key+".products", "product %+q has weight 2^-%d but the group's others 2^-%d: one accumulator holds products of one weight", pr, w, gp.weight)
			}
			gp.weight = w
			gp.prods = append(gp.prods, [2]int{a, b})
			usedA[a], usedB[b] = true, true
		}
		if gp.outside && s.Kernels == "termwise" {
			return nil, bad(key+".accumulate", "outside accumulation is modelled in fused kernels (scheme.kernels: fused)")
		}
		pl.groups = append(pl.groups, gp)
	}
	if lead := [2]int{0, 0}; !seen[lead] {
		// (Every other product multiplies a residual: without hh, C
		// misses its largest part — Markidis with [hl] alone gave bits 0,
		// exit 0.)
		var groups []string
		for _, g := range s.Groups {
			groups = append(groups, "["+strings.Join(g.Products, " ")+"]")
		}
		return nil, bad("scheme.groups", "no group computes %s, piece 0 × piece 0 — the leading product, C's largest part, which the other products only correct (groups %s); add %s to a group",
			pl.productName(lead), strings.Join(groups, " "), pl.productName(lead))
	}
	if s.Epilogue == "corrections-first" {
		for g := 2; g < len(pl.groups); g++ {
			if pl.groups[g].weight != pl.groups[1].weight {
				return nil, bad("scheme.epilogue", "corrections-first sums groups 1.. before scaling them: they need one weight (group 1 2^-%d, group %d 2^-%d)", pl.groups[1].weight, g, pl.groups[g].weight)
			}
		}
	}
	for i := range s.Pieces {
		if !usedA[i] && !usedB[i] {
			// (The split would make it, and every piece before it, for
			// nothing; the last piece of a scheme ends the residual.)
			return nil, bad(fmt.Sprintf("scheme.pieces[%d]", i), "no product uses piece %d: drop it, or add a product with it to a group", i)
		}
		if usedA[i] {
			pl.nA = append(pl.nA, i)
		}
		if usedB[i] {
			pl.nB = append(pl.nB, i)
		}
	}
	weights := make([]int, len(pl.groups))
	for g, gr := range pl.groups {
		weights[g] = gr.weight
	}
	pl.epilogue = epilogueSteps(weights, s.Epilogue == "corrections-first")
	return pl, nil
}

// checkSchemeName refuses a scheme.name the reports could not show as the
// program's own: one with a control character (a line break split the
// summary's scheme line in two) or with space around it, and the labels
// the reports give other schemes — a preset's name with a remark in
// parentheses (ootomo (pieces changed), which name marks a preset whose
// numerics a program changed; scheme auto's markidis (split: fused)), or
// any name ending in "changed)". A preset's own name is a preset with the
// program's keys over it (resolveScheme): reported as such, not refused.
func checkSchemeName(name string, bad func(key, format string, a ...any) error) error {
	for i, r := range name {
		if unicode.IsControl(r) {
			return bad("scheme.name", "%+q has a control character (%U at byte %d): the name is printed in the run's summary; give it in printable characters", name, r, i)
		}
	}
	if strings.TrimSpace(name) != name {
		return bad("scheme.name", "%+q begins or ends with space: give the name without it", name)
	}
	for _, pre := range append(SchemeNames(), "auto") {
		if strings.HasPrefix(name, pre+" (") {
			return bad("scheme.name", "%+q is how the reports label preset %s with keys changed (%s (pieces changed); scheme auto's %s (split: fused)): give name: %s with the keys that differ, or your scheme a name of its own",
				name, pre, pre, pre, pre)
		}
	}
	if strings.HasSuffix(name, "changed)") {
		return bad("scheme.name", "%+q ends as the reports' label of a preset with keys changed (ootomo (pieces changed)): give your scheme a name of its own", name)
	}
	return nil
}

// checkRange refuses a split whose pieces overflow their format for inputs
// with |x| ≤ m (e: the smallest with m ≤ 2^e): piece 0 where m reaches
// the split's exact overflowFrom, piece i > 0 where its magnitude's bound
// 2^pieceBound(i, e) exceeds the format's largest finite value; and, at
// the GEMM's k (sp.k), a scaled group whose FP32 accumulator may overflow
// where C itself would not (accOverflow), naming the scale.
func (sp *schemePlan) checkRange(m float64, e int, rangeKey string, bad func(key, format string, a ...any) error) error {
	name := strings.ToUpper(sp.format.String())
	if over := sp.firstPieceOverflow(); m >= over {
		return bad(rangeKey, "inputs up to %g reach %g, from where piece 0 (%s, scale 2^%d) rounds past the format's largest finite value %g", m, over, name, sp.scales[0], sp.format.MaxFinite())
	}
	maxf := sp.format.MaxFinite()
	for i := 1; i < len(sp.scales); i++ {
		bound := sp.pieceBound(i, e)
		if math.Ldexp(1, bound) <= maxf {
			continue
		}
		rel := e + sp.scales[i]
		for j := 0; j < i; j++ {
			rel -= sp.residualBits(j)
		}
		if bound > rel {
			// The bound is a subnormal piece's residual.
			return bad(fmt.Sprintf("scheme.pieces[%d].scale", i), "piece %d of inputs in (−2^%d, 2^%d) reaches 2^%d with scale 2^%d, beyond %s's largest finite value %g: where an earlier piece is an %s subnormal or zero, its residual is up to 2^%d (the subnormal spacing), not p bits below the input",
				i, e, e, bound, sp.scales[i], name, maxf, name, bound-sp.scales[i])
		}
		return bad(fmt.Sprintf("scheme.pieces[%d].scale", i), "piece %d of inputs in (−2^%d, 2^%d) reaches 2^%d with scale 2^%d, beyond %s's largest finite value %g",
			i, e, e, bound, sp.scales[i], name, maxf)
	}
	if g, bound, ok := sp.accOverflow(e, e); ok {
		return sp.accRefusal(g, bound, e, bad)
	}
	return nil
}

// accGrowth bounds how far FP32 rounding can take an accumulator of k
// products above the sum of their magnitudes: a factor 1 + 2^-24 for each
// of at most 2k roundings (the sums through the matrix units, and the
// additions of k-steps' partial sums — outside groups, DaVinci's L1
// groups — to the accumulator).
func accGrowth(k int) float64 { return math.Pow(1+0x1p-24, 2*float64(k)) }

// groupBound returns a bound on group g's FP32 accumulator for inputs
// with |a| ≤ 2^ea and |b| ≤ 2^eb: k times the sum, over the group's
// products, of the magnitude bounds of their pieces (pieceBound: scales
// included; piece 0's is 2^e), widened by accGrowth.
func (sp *schemePlan) groupBound(g, ea, eb int) float64 {
	sum := 0.0
	for _, pr := range sp.groups[g].prods {
		sum += math.Ldexp(1, sp.pieceBound(pr[0], ea)+sp.pieceBound(pr[1], eb))
	}
	return sum * float64(sp.k) * accGrowth(sp.k)
}

// accOverflow returns the first group whose FP32 accumulator may overflow
// through its scale for inputs with |a| ≤ 2^ea and |b| ≤ 2^eb, and its
// bound (groupBound): a scaled group (weight 2^-w, w > 0) whose bound is
// beyond FP32's largest finite value and beyond k·2^(ea+eb), the bound of
// C itself — the scale lifts it past what the GEMM's own result reaches.
// An unscaled group's bound is at most C's (hh is C's leading part), so
// C's own overflow, which any FP32 GEMM of the inputs shares, is not the
// scheme's (fp32CNotes flags it). False where the plan has no k.
func (sp *schemePlan) accOverflow(ea, eb int) (g int, bound float64, ok bool) {
	if sp.k <= 0 {
		return 0, 0, false
	}
	c := math.Ldexp(float64(sp.k)*accGrowth(sp.k), ea+eb)
	for g, gr := range sp.groups {
		if pr := gr.prods[0]; sp.scales[pr[0]]+sp.scales[pr[1]] == 0 {
			continue
		}
		if b := sp.groupBound(g, ea, eb); b > math.MaxFloat32 && b > c {
			return g, b, true
		}
	}
	return 0, 0, false
}

// accExponent returns the smallest e for which a group's accumulator may
// overflow through its scale (accOverflow) for inputs with |x| ≤ 2^e —
// so inputs from 2^(e−1) may —; false where none of FP32's range does
// (every preset at any k a run takes).
func (sp *schemePlan) accExponent() (e int, ok bool) {
	if sp.k <= 0 {
		return 0, false
	}
	for e := -150; e <= 128; e++ {
		if _, _, over := sp.accOverflow(e, e); over {
			return e, true
		}
	}
	return 0, false
}

// accRefusal is checkRange's refusal of group g, whose accumulator may
// reach bound for inputs in (−2^e, 2^e) (accOverflow): it names the
// scale of the group's largest product's more scaled piece, the product
// and its pieces' bounds, C's own bound, and the largest scale of that
// piece that would hold the accumulators (none where even 2^0 would not).
func (sp *schemePlan) accRefusal(g int, bound float64, e int, bad func(key, format string, a ...any) error) error {
	gr := sp.groups[g]
	top, tb := gr.prods[0], math.Inf(-1)
	for _, pr := range gr.prods {
		if b := float64(sp.pieceBound(pr[0], e) + sp.pieceBound(pr[1], e)); b > tb {
			top, tb = pr, b
		}
	}
	i := top[0]
	if sp.scales[top[1]] >= sp.scales[i] {
		i = top[1]
	}
	var prods []string
	for _, pr := range gr.prods {
		prods = append(prods, sp.productName(pr))
	}
	what := fmt.Sprintf("k × |piece %d of A| × |piece %d of B| ≤ %d × 2^%d × 2^%d", top[0], top[1], sp.k, sp.pieceBound(top[0], e), sp.pieceBound(top[1], e))
	if len(gr.prods) > 1 {
		what = fmt.Sprintf("k × its products' piece bounds summed, the largest %s ≤ %d × 2^%d × 2^%d", sp.productName(top), sp.k, sp.pieceBound(top[0], e), sp.pieceBound(top[1], e))
	}
	c := math.Ldexp(float64(sp.k), 2*e)
	cText := fmt.Sprintf("though C itself stays within 2^%.4g", math.Log2(c))
	if c*accGrowth(sp.k) > math.MaxFloat32 {
		cText = fmt.Sprintf("and C itself may reach 2^%.4g, beyond it too", math.Log2(c))
	}
	fix := ""
	try := *sp
	try.scales = slices.Clone(sp.scales)
	for s := sp.scales[i] - 1; s >= 0; s-- {
		try.scales[i] = s
		if _, _, over := try.accOverflow(e, e); !over {
			fix = fmt.Sprintf("; a scale of at most 2^%d keeps the accumulators finite here", s)
			break
		}
	}
	return bad(fmt.Sprintf("scheme.pieces[%d].scale", i), "the FP32 accumulator of scheme.groups[%d] ([%s], weight 2^-%d) of inputs in (−2^%d, 2^%d) at k = %d may reach 2^%.4g — %s, piece %d scaled by 2^%d — beyond FP32's largest finite value %.4g, %s%s",
		g, strings.Join(prods, " "), gr.weight, e, e, sp.k, math.Log2(bound), what, i, sp.scales[i], math.MaxFloat32, cText, fix)
}

// pieceBound returns b such that piece i ≥ 1 of inputs with |x| < 2^e is
// at most 2^b in magnitude: the residual after each piece j < i is at
// most one unit in its last place — 2^(E − p) for |x·2^scale_j| ≤ 2^E, p
// the format's precision — or half of it for the nearest roundings
// (residualBits; Ape's FP32-F range, 2^15, and SGEMM-cube's Eq. 6 rest on
// the half), and, where piece j is subnormal or zero, up to the format's
// subnormal spacing (half of it for the nearest roundings) unscaled by
// 2^scale_j, however small the input (FP16 pieces of inputs below 2^-14:
// the residual of piece 0 is up to 2^-25, not 2^(e−12)); and never below
// the smallest subnormal.
func (sp *schemePlan) pieceBound(i, e int) int {
	_, sub := math.Frexp(sp.format.MinSubnormal()) // MinSubnormal = 2^(sub−1)
	r := e
	for j := 0; j < i; j++ {
		floor := sub - 1 - sp.scales[j]
		rnd := sp.rounds[j].Round
		if rnd == fp.RNE || rnd == fp.RNA {
			floor--
		}
		next := max(r-sp.residualBits(j), floor)
		if rnd == fp.RNE || rnd == fp.RNA || rnd == fp.RZ {
			next = min(next, r) // (zero is a candidate of these roundings: the residual is at most the piece's input)
		}
		r = next
	}
	return max(r+sp.scales[i], sub-1) // (a rounding away from zero takes a residual below the smallest subnormal to it)
}

// residualBits returns how many binades below piece j's input bound its
// residual's bound lies: the format's precision p for a residual below one
// unit in the last place (the directed roundings), p + 1 for the nearest
// roundings' half unit.
func (sp *schemePlan) residualBits(j int) int {
	p := sp.format.MantBits() + 1
	if rnd := sp.rounds[j].Round; rnd == fp.RNE || rnd == fp.RNA {
		return p + 1
	}
	return p
}

// firstPieceOverflow returns the |x| from which piece 0 — x scaled by
// 2^scale_0, rounded to the piece's format — overflows or saturates:
// halfway above the largest finite value for the nearest roundings, the
// next power of two for RZ and RO, anything above it for RD and RU (which
// round one sign away from zero).
func (sp *schemePlan) firstPieceOverflow() float64 {
	f := sp.format
	maxf := f.MaxFinite()
	_, e := math.Frexp(maxf)               // maxf < 2^e
	ulp := math.Ldexp(1, e-1-f.MantBits()) // the spacing just below 2^e
	var over float64
	rnd := fp.RNE
	if len(sp.rounds) > 0 {
		rnd = sp.rounds[0].Round
	}
	switch rnd {
	case fp.RNE, fp.RNA:
		over = maxf + float64(ulp/2)
	case fp.RZ, fp.RO:
		over = maxf + ulp
	default:
		over = float64(math.Nextafter32(float32(maxf), float32(math.Inf(1))))
	}
	return math.Ldexp(over, -sp.scales[0])
}

// split returns the pieces of x (bit patterns of the piece format; TF32 as
// FP32 patterns), the residual computed in FP32 as the split kernel does.
func (sp *schemePlan) split(x float32, out []uint32) {
	r := x
	for i, o := range sp.rounds {
		v := float64(r)
		if sp.scales[i] != 0 {
			v = math.Ldexp(float64(r), sp.scales[i])
			v = float64(float32(v)) // the FP32 multiply
		}
		b := fp.FromFloat64(v, sp.format, o)
		out[i] = b
		if i+1 < len(sp.rounds) {
			back := float32(fp.ToFloat64(b, sp.format))
			if sp.scales[i] != 0 {
				back = float32(math.Ldexp(float64(back), -sp.scales[i]))
			}
			r = r - back
		}
	}
}

// Operands of a split step besides the pieces (0, 1, …): the residual
// (x at first) and a temporary, both FP32.
const (
	splitResidual = -1
	splitTemp     = -2
)

// splitStep is one FP32 vector operation of the split on a chunk of
// elements: dst = src0 · scalar (VMuls), dst = src0 converted from → to
// with round (VCast), or dst = src0 − src1 (VSub).
type splitStep struct {
	op              isa.VecOp
	dst, src0, src1 int
	scalar          float64
	from, to        fp.Format
	round           fp.Options
}

// splitSteps are the operations making pieces 0..last, split's in order
// (each machine kind's split emits them): a piece is the residual rounded
// (scaled first into the temporary when its scale is not 0), then, before
// the next piece, the residual less the piece converted back (and
// unscaled) — the residual stays unscaled.
func (sp *schemePlan) splitSteps(last int) []splitStep {
	var out []splitStep
	for x := 0; x <= last; x++ {
		s, from := sp.scales[x], splitResidual
		if s != 0 {
			out = append(out, splitStep{op: isa.VMuls, dst: splitTemp, src0: splitResidual, scalar: math.Ldexp(1, s)})
			from = splitTemp
		}
		out = append(out, splitStep{op: isa.VCast, dst: x, src0: from, from: fp.FP32, to: sp.format, round: sp.rounds[x]})
		if x == last {
			break
		}
		out = append(out, splitStep{op: isa.VCast, dst: splitTemp, src0: x, from: sp.format, to: fp.FP32, round: fp.Options{Round: fp.RNE}})
		if s != 0 {
			out = append(out, splitStep{op: isa.VMuls, dst: splitTemp, src0: splitTemp, scalar: math.Ldexp(1, -s)})
		}
		out = append(out, splitStep{op: isa.VSub, dst: splitResidual, src0: splitResidual, src1: splitTemp})
	}
	return out
}

// epilogueStep is one FP32 operation of an epilogue on accumulators:
// acc[dst] = acc[dst]·2^-shift, or (add) acc[dst] = acc[dst] + acc[src].
type epilogueStep struct {
	add             bool
	dst, src, shift int
}

// epilogueSteps combine accumulators of the given weight exponents into
// accumulator 0, as combine does: ordered — every one scaled, then added
// into 0 in order; corrections first — 2, 3, … added into 1, then 1 and 0
// scaled and 1 added into 0. A weight 2^0 costs no step. (The GPU kernels'
// and the DaVinci epilogue pass emit them.)
func epilogueSteps(weights []int, correctionsFirst bool) []epilogueStep {
	var out []epilogueStep
	scale := func(g int) {
		if weights[g] != 0 {
			out = append(out, epilogueStep{dst: g, shift: weights[g]})
		}
	}
	if correctionsFirst && len(weights) > 1 {
		for g := 2; g < len(weights); g++ {
			out = append(out, epilogueStep{add: true, dst: 1, src: g})
		}
		scale(1)
		scale(0)
		return append(out, epilogueStep{add: true, dst: 0, src: 1})
	}
	for g := range weights {
		scale(g)
	}
	for g := 1; g < len(weights); g++ {
		out = append(out, epilogueStep{add: true, dst: 0, src: g})
	}
	return out
}

// combine is the epilogue on one element: the FP32 accumulators of the
// groups (overwritten) to C, in FP32 RNE, by the steps of epilogueSteps.
func (sp *schemePlan) combine(acc []float32) float32 {
	for _, st := range sp.epilogue {
		if st.add {
			acc[st.dst] = acc[st.dst] + acc[st.src]
		} else {
			acc[st.dst] = float32(math.Ldexp(float64(acc[st.dst]), -st.shift)) // exact unless it leaves FP32's range: then rounded once
		}
	}
	return acc[0]
}

// products is the number of piece products the scheme runs.
func (sp *schemePlan) products() int {
	n := 0
	for _, g := range sp.groups {
		n += len(g.prods)
	}
	return n
}

// pieceSlot maps a piece index to its position among the staged pieces.
func pieceSlot(used []int, i int) int { return slices.Index(used, i) }

// name is the scheme's name as reports give it: its preset's, with the
// keys the program changed ("ootomo (pieces changed)"), the name the
// program gave its own, or "custom".
func (sp *schemePlan) name() string {
	switch {
	case sp.s.Name == "":
		return "custom"
	case len(sp.changed) > 0:
		return sp.s.Name + " (" + strings.Join(sp.changed, ", ") + " changed)"
	}
	return sp.s.Name
}

// rangeExponents is the scheme's full-precision range: inputs with
// 2^emin ≤ |x| < 2^emax split into pieces that neither overflow their
// format (checkRange's bound) nor fall below its smallest normal (every
// piece keeps its precision). Above it pieces overflow (C is wrong there);
// below it a piece — the high one or the low one, minExponentPieces — is
// subnormal or zero and loses bits (C is less accurate), and far below
// every piece is zero (zeroUpTo: the input adds nothing to C).
func (sp *schemePlan) rangeExponents() (emin, emax int) {
	_, top := math.Frexp(sp.format.MaxFinite()) // MaxFinite < 2^top
	_, low := math.Frexp(sp.format.MinNormal()) // MinNormal = 2^(low−1)
	emin, emax = math.MinInt, math.MaxInt
	drop := 0
	for i, s := range sp.scales {
		if i == 0 {
			emax = min(emax, top-1-s)
		} else if e, ok := sp.overflowExp(i); ok {
			emax = min(emax, e-1)
		}
		emin = max(emin, low-1-s+drop)
		drop += sp.format.MantBits() + 1
	}
	return emin, emax
}

// minExponentPieces returns the pieces that set rangeExponents' emin: the
// ones whose smallest normal the inputs reach first as they shrink (below
// 2^emin they are subnormal or zero and lose bits) — piece 0 where the
// later pieces' scales make up for the bits before them (SGEMM-cube,
// FP32-F), the last where they do not (Markidis), both on a tie (Ootomo).
func (sp *schemePlan) minExponentPieces() []int {
	_, low := math.Frexp(sp.format.MinNormal())
	emin, _ := sp.rangeExponents()
	var out []int
	drop := 0
	for i, s := range sp.scales {
		if low-1-s+drop == emin {
			out = append(out, i)
		}
		drop += sp.format.MantBits() + 1
	}
	return out
}

// pieceNames names pieces idx of an n-piece split as the reports do
// ("high piece (0)", "high and low pieces (0, 1)").
func pieceNames(idx []int, n int) string {
	name := func(i int) string {
		switch {
		case n == 1:
			return "only"
		case i == 0:
			return "high"
		case i == n-1:
			return "low"
		case n == 3:
			return "middle"
		}
		return fmt.Sprintf("piece-%d", i)
	}
	names, nums := make([]string, len(idx)), make([]string, len(idx))
	for x, i := range idx {
		names[x], nums[x] = name(i), strconv.Itoa(i)
	}
	if len(idx) == 1 {
		return names[0] + " piece (" + nums[0] + ")"
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1] + " pieces (" + strings.Join(nums, ", ") + ")"
}

// zeroUpTo returns the largest x > 0 (neg: the largest −x > 0 of a
// negative x) whose pieces 0..last are all zero, 0 where the smallest FP32
// subnormal already has one that is not (a rounding away from zero). With
// the pieces before it zero a piece rounds x itself (scaled), so those
// inputs are an interval around 0: a binary search over FP32's magnitudes
// up to 2^min_exponent finds its end.
func (sp *schemePlan) zeroUpTo(neg bool, last int) float32 {
	sign := uint32(0)
	if neg {
		sign = 1 << 31
	}
	pieces := make([]uint32, len(sp.scales))
	zero := func(m uint32) bool {
		sp.split(math.Float32frombits(sign|m), pieces)
		for _, b := range pieces[:last+1] {
			if fp.ToFloat64(b, sp.format) != 0 {
				return false
			}
		}
		return true
	}
	if !zero(1) {
		return 0
	}
	emin, _ := sp.rangeExponents()
	lo, hi := uint32(1), math.Float32bits(math.MaxFloat32) // zero(lo)
	if e := max(emin, -149); e < 128 {
		hi = math.Float32bits(float32(math.Ldexp(1, e)))
	}
	if zero(hi) {
		return math.Float32frombits(hi)
	}
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if zero(mid) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return math.Float32frombits(lo)
}

// zeroBounds are zeroUpTo's bounds for every piece: pos[j] (neg[j]) the
// largest x (−x) whose pieces 0..j are all zero.
type zeroBounds struct{ pos, neg []float32 }

func (sp *schemePlan) zeroBounds() zeroBounds {
	z := zeroBounds{make([]float32, len(sp.scales)), make([]float32, len(sp.scales))}
	for j := range sp.scales {
		z.pos[j], z.neg[j] = sp.zeroUpTo(false, j), sp.zeroUpTo(true, j)
	}
	return z
}

// inputZerosUntil is inputZeros asking st every stopwork.Every elements:
// false once it says stop.
func (z zeroBounds) inputZerosUntil(x []float32, st *stopwork.Stopper) (nonzero, zero int64, pieceZero []bool, ok bool) {
	last := len(z.pos) - 1
	var pos, neg float32 // largest x > 0 and −x > 0 (+Inf for a NaN)
	for len(x) > 0 {
		part := x[:min(len(x), stopwork.Every)]
		if st.StopBefore(len(part)) {
			return 0, 0, nil, false
		}
		x = x[len(part):]
		for _, v := range part {
			switch {
			case v == 0:
				continue
			case v > 0:
				pos = max(pos, v)
			case v < 0:
				neg = max(neg, -v)
			default:
				pos = float32(math.Inf(1))
			}
			nonzero++
			if v > 0 && v <= z.pos[last] || v < 0 && -v <= z.neg[last] {
				zero++
			}
		}
	}
	pieceZero = make([]bool, len(z.pos))
	for j := range pieceZero {
		pieceZero[j] = pos <= z.pos[j] && neg <= z.neg[j]
	}
	return nonzero, zero, pieceZero, true
}

// inputRange counts the elements of x outside a range: over (|x| ≥ hi, or
// not finite) and under (0 < |x| < lo).
func inputRange(x []float32, lo, hi float64) (over, under int64) {
	h, l := float32(hi), float32(lo)
	for _, v := range x {
		a := float32(math.Abs(float64(v)))
		switch {
		case !(a < h): // NaN too
			over++
		case a != 0 && a < l:
			under++
		}
	}
	return over, under
}

// inputRangeUntil is inputRange asking st every stopwork.Every elements:
// false once it says stop.
func inputRangeUntil(x []float32, lo, hi float64, st *stopwork.Stopper) (over, under int64, ok bool) {
	for len(x) > 0 {
		part := x[:min(len(x), stopwork.Every)]
		if st.StopBefore(len(part)) {
			return 0, 0, false
		}
		x = x[len(part):]
		o, u := inputRange(part, lo, hi)
		over, under = over+o, under+u
	}
	return over, under, true
}

// overflowFrom returns the |x| from which a piece of the split overflows
// its format, and whether that is exact: piece 0's bound is (firstPieceOverflow);
// a later piece's is the conservative 2^(top − 1 − scale_i + Σ_{j<i} p_j)
// of rangeExponents, and where it is the lower, inputs at or above it
// may overflow (the residual is usually smaller than its bound); where a
// subnormal piece's residual alone can overflow a later piece (pieceBound),
// inputs as large as that residual may.
func (sp *schemePlan) overflowFrom() (hi float64, exact bool) {
	hi, exact = sp.firstPieceOverflow(), true
	for i := 1; i < len(sp.scales); i++ {
		if e, ok := sp.overflowExp(i); ok && math.Ldexp(1, e-1) < hi {
			hi, exact = math.Ldexp(1, e-1), false
		}
	}
	return hi, exact
}

// overflowExp returns the smallest e for which piece i ≥ 1 of inputs
// with |x| < 2^e may pass the format's largest finite value (pieceBound),
// so inputs from 2^(e−1) may; false where none of FP32's range does.
func (sp *schemePlan) overflowExp(i int) (e int, ok bool) {
	maxf := sp.format.MaxFinite()
	for e := -150; e <= 129; e++ { // (FP32's inputs: 2^-149 ≤ |x| < 2^128)
		if math.Ldexp(1, sp.pieceBound(i, e)) > maxf {
			return e, true
		}
	}
	return 0, false
}

// flushingUnits names machine m's matrix units (units: "matrix cores",
// "cube") as a range note does where their numerics preset flushes
// subnormal inputs to zero (CDNA2's FP16 and BF16 MFMAs: FACTS.md §1),
// else "".
func flushingUnits(m *machines.Machine, units string) string {
	if model, err := cube.Preset(m.NumericsPreset()); err != nil || !model.FlushSubnormals {
		return ""
	}
	return fmt.Sprintf("the %s's %s (numerics %s)", m.Name, units, m.NumericsPreset())
}

// reportRange puts the split's range in the report (program.range): the
// full-precision range 2^min_exponent ≤ |x| < 2^max_exponent (at the
// GEMM's k, sp.k, ended where a scaled accumulator may overflow:
// accExponent) and the |x| from which a piece overflows (overflow_from,
// exact for piece 0) and, with the inputs at hand (numerics on), how many
// of them lie outside — with a note when some do — and, at a known k,
// notes on their sums (noteAccumulators). A plain cast (hgemm, castRange)
// is a split into one unscaled piece. flush, when not empty, names the
// matrix units that flush subnormal inputs to zero (flushingUnits): there
// a subnormal piece is not less accurate but lost, and the note says so.
// It counts the inputs asking stop (nil: never) every stopwork.Every
// elements: false once it says true (4096²: ~0.34 s deaf to an interrupt
// before).
func (sp *schemePlan) reportRange(rep *report.Report, a, b []float32, flush string, stop func() bool) bool {
	emin, emax := sp.rangeExponents()
	over, exact := sp.overflowFrom()
	name := strings.ToUpper(sp.format.String())
	one := len(sp.scales) == 1 && sp.scales[0] == 0
	accumulate := "" // (where a scaled accumulator sets max_exponent)
	if e, ok := sp.accExponent(); ok && e-1 < emax {
		emax = e - 1
		g, _, _ := sp.accOverflow(e, e)
		accumulate = fmt.Sprintf(" and accumulate without overflow at k = %d (from 2^%d the FP32 accumulator of %s may pass FP32's largest finite value: its scale)", sp.k, emax, sp.groupName(g))
	}
	meaning := fmt.Sprintf("inputs with 2^%d ≤ |x| < 2^%d split without overflow or loss of precision%s; from |x| ≥ %g a piece overflows", emin, emax, accumulate, over)
	if !exact {
		meaning = strings.Replace(meaning, "a piece overflows", "a piece may overflow", 1)
	}
	if emin >= emax {
		meaning = fmt.Sprintf("no inputs split without overflow or loss of precision (below 2^%d a piece is subnormal and loses bits; from |x| ≥ %g a piece may overflow)", emin, over)
	}
	if one {
		meaning = fmt.Sprintf("inputs with 2^%d ≤ |x| < %g round to normal %s values", emin, over, name)
	}
	r := map[string]any{"min_exponent": emin, "max_exponent": emax, "overflow_from": over, "meaning": meaning}
	if a != nil {
		lo := math.Ldexp(1, emin)
		st := stopwork.New(stop)
		ao, au, okA := inputRangeUntil(a, lo, over, &st)
		bo, bu, okB := inputRangeUntil(b, lo, over, &st)
		if !okA || !okB {
			return false
		}
		r["a_over"], r["a_under"], r["b_over"], r["b_under"] = ao, au, bo, bu
		pct := func(n int64) float64 { return 100 * float64(n) / float64(len(a)+len(b)) }
		switch {
		case ao+bo == 0:
		case one:
			rep.Notes = append(rep.Notes, fmt.Sprintf("inputs beyond %s: %d elements of A and %d of B have |x| ≥ %g (or are not finite): they round beyond its largest finite value %g (to ±Inf, or saturate), so C is wrong where they contribute (%.3g %% of the inputs)",
				name, ao, bo, over, sp.format.MaxFinite(), pct(ao+bo)))
		case exact:
			rep.Notes = append(rep.Notes, fmt.Sprintf("inputs outside the scheme's range: %d elements of A and %d of B have |x| ≥ %g (or are not finite): their first pieces overflow %s, so C is wrong where they contribute (%.3g %% of the inputs)",
				ao, bo, over, name, pct(ao+bo)))
		default:
			// Beyond piece 0's own overflow point the overflow is certain.
			first := sp.firstPieceOverflow()
			fa, _, okA := inputRangeUntil(a, lo, first, &st)
			fb, _, okB := inputRangeUntil(b, lo, first, &st)
			if !okA || !okB {
				return false
			}
			certain := ""
			if fa+fb > 0 {
				certain = fmt.Sprintf("; %d of A and %d of B have |x| ≥ %g (or are not finite): their first pieces overflow, so C is wrong where they contribute", fa, fb, first)
			}
			rep.Notes = append(rep.Notes, fmt.Sprintf("inputs outside the scheme's range: %d elements of A and %d of B have |x| ≥ %g (or are not finite): their scaled pieces may overflow %s, so C may be wrong where they contribute (%.3g %% of the inputs)%s",
				ao, bo, over, name, pct(ao+bo), certain))
		}
		switch {
		case au+bu == 0:
		case one:
			lose := "lose bits"
			if flush != "" {
				lose = fmt.Sprintf("are lost: %s flush subnormal inputs to zero", flush)
			}
			rep.Notes = append(rep.Notes, fmt.Sprintf("inputs below %s's normal range: %d elements of A and %d of B have 0 < |x| < 2^%d: they round to subnormals or zero and %s (%.3g %% of the inputs)",
				name, au, bu, emin, lose, pct(au+bu)))
		default:
			set := sp.minExponentPieces()
			are, lose := "is an "+name+" subnormal or zero", " and loses bits"
			if len(set) > 1 {
				are, lose = "are "+name+" subnormals or zero", " and lose bits"
			}
			if flush != "" {
				// (CDNA2: Markidis's unscaled low pieces, below 2^-14 for
				// |x| < 2^-3 — an eighth of U[−1, 1] — add nothing.)
				lose = ", and lost: " + flush + " flush subnormal inputs to zero"
			}
			are += lose
			rep.Notes = append(rep.Notes, fmt.Sprintf("inputs below the scheme's full-precision range: %d elements of A and %d of B have 0 < |x| < 2^%d: their %s %s (%.3g %% of the inputs)",
				au, bu, emin, pieceNames(set, len(sp.scales)), are, pct(au+bu)))
		}
		cZero := false // (a note said C is 0)
		if au+bu > 0 {
			ok := false
			if cZero, ok = sp.noteZeros(rep, a, b, pct, &st); !ok {
				return false
			}
		}
		if sp.k > 0 && !sp.noteAccumulators(rep, a, b, !cZero, &st) {
			return false
		}
	}
	rep.Program["range"] = r
	return true
}

// groupName names group g as the notes do ("scheme.groups[2] ([ll],
// weight 2^-120)").
func (sp *schemePlan) groupName(g int) string {
	var prods []string
	for _, pr := range sp.groups[g].prods {
		prods = append(prods, sp.productName(pr))
	}
	return fmt.Sprintf("scheme.groups[%d] ([%s], weight 2^-%d)", g, strings.Join(prods, " "), sp.groups[g].weight)
}

// noteAccumulators adds notes on the sums of the inputs at hand (sp.k
// products each): where a scaled accumulator may overflow FP32 for them
// (accOverflow; .npy inputs, which checkRange does not refuse), and C's
// own FP32 range (fp32CNotes: its underflow only where under, no note
// having said C is 0 already). It reads the inputs asking st: false once
// it says stop.
func (sp *schemePlan) noteAccumulators(rep *report.Report, a, b []float32, under bool, st *stopwork.Stopper) bool {
	ma, okA := maxAbsUntil(a, st)
	mb, okB := maxAbsUntil(b, st)
	if !okA || !okB {
		return false
	}
	if ma > 0 && mb > 0 {
		ea, eb := exponentAbove(ma), exponentAbove(mb)
		if g, bound, ok := sp.accOverflow(ea, eb); ok {
			rep.Notes = append(rep.Notes, fmt.Sprintf("accumulator beyond FP32: with max|A| = %.4g and max|B| = %.4g the FP32 accumulator of %s may reach 2^%.4g at k = %d, beyond FP32's largest finite value %.4g (its scale lifts it past C's own bound, 2^%.4g), so C may be ±Inf or NaN where it overflows",
				ma, mb, sp.groupName(g), math.Log2(bound), sp.k, math.MaxFloat32, math.Log2(float64(sp.k)*ma*mb)))
		}
	}
	over, zero := fp32CNotes(ma, mb, sp.k, false)
	if over != "" {
		rep.Notes = append(rep.Notes, over)
	}
	if zero != "" && under {
		rep.Notes = append(rep.Notes, zero)
	}
	return true
}

// maxAbsUntil returns the largest finite |x| of x (0 for none), asking st
// every stopwork.Every elements: false once it says stop. (Non-finite
// inputs are the input notes' and the range's a_over.)
func maxAbsUntil(x []float32, st *stopwork.Stopper) (float64, bool) {
	m := float32(0)
	for len(x) > 0 {
		part := x[:min(len(x), stopwork.Every)]
		if st.StopBefore(len(part)) {
			return 0, false
		}
		x = x[len(part):]
		for _, v := range part {
			if a := float32(math.Abs(float64(v))); a > m && a <= math.MaxFloat32 {
				m = a
			}
		}
	}
	return float64(m), true
}

// fp32CNotes returns notes on C's own FP32 range for inputs up to ma and
// mb in magnitude over k products: over where |C| ≤ k·ma·mb (widened by
// accGrowth) passes FP32's largest finite value — elements of C may
// overflow, in any FP32 GEMM of these inputs —, zero where k·ma·mb is
// below half FP32's smallest subnormal, 2^-150: every element of the
// exact C rounds to zero in FP32. native says so as C being 0 (its FP32
// products round to zero, and so does every sum of them); an emulation,
// whose scaled pieces need not vanish, as C's underflow.
func fp32CNotes(ma, mb float64, k int, native bool) (over, zero string) {
	bound := float64(k) * ma * mb
	if bound*accGrowth(k) > math.MaxFloat32 {
		over = fmt.Sprintf("C may overflow FP32: |C| ≤ k × max|A| × max|B| = %d × %.4g × %.4g = %.4g, beyond FP32's largest finite value %.4g: elements of C may be ±Inf, as in any FP32 GEMM of these inputs",
			k, ma, mb, bound, math.MaxFloat32)
	}
	if bound > 0 && bound < 0x1p-150 {
		zero = fmt.Sprintf("C underflows FP32: |C| ≤ k × max|A| × max|B| = %d × %.4g × %.4g = %.4g, below half FP32's smallest subnormal (%.4g): every element of the exact C rounds to zero in FP32, so no FP32 result holds anything of it (bits 0)",
			k, ma, mb, bound, 0x1p-150)
		if native {
			zero = fmt.Sprintf("C is 0: |C| ≤ k × max|A| × max|B| = %d × %.4g × %.4g = %.4g, below half FP32's smallest subnormal (%.4g): every FP32 product of these inputs rounds to zero, and so does every sum of them — the exact C is not 0, but no FP32 value holds it",
				k, ma, mb, bound, 0x1p-150)
		}
	}
	return over, zero
}

// noteZeros adds notes on inputs so small that every piece of them is
// zero (a cast: that round to zero) — they add nothing to C — and, where
// every product the scheme computes has a factor zero in every element of
// A or of B (every piece of every input, or SGEMM-cube's high pieces at
// 2^-30, which all its products take), on C being 0 (cZero: that note
// added). It counts the inputs asking st: ok false once it says stop.
func (sp *schemePlan) noteZeros(rep *report.Report, a, b []float32, pct func(int64) float64, st *stopwork.Stopper) (cZero, ok bool) {
	z := sp.zeroBounds()
	last := len(sp.scales) - 1
	an, az, zeroA, okA := z.inputZerosUntil(a, st)
	if !okA {
		return false, false
	}
	bn, bz, zeroB, okB := z.inputZerosUntil(b, st)
	if !okB {
		return false, false
	}
	name := strings.ToUpper(sp.format.String())
	cast := len(sp.scales) == 1 && sp.scales[0] == 0
	if az+bz > 0 {
		below := fmt.Sprintf("0 < |x| ≤ %.4g", z.pos[last])
		if z.pos[last] != z.neg[last] {
			below = fmt.Sprintf("0 < x ≤ %.4g or 0 < −x ≤ %.4g", z.pos[last], z.neg[last])
		}
		what := "every piece of them is zero"
		if cast {
			what = "they round to zero"
		}
		rep.Notes = append(rep.Notes, fmt.Sprintf("inputs that vanish: %d elements of A and %d of B have %s: %s (%s's smallest subnormal is %.4g), so they add nothing to C (%.3g %% of the inputs)",
			az, bz, below, what, name, float32(sp.format.MinSubnormal()), pct(az+bz)))
	}
	if an == 0 || bn == 0 {
		return false, true // (C is 0 for want of inputs, not for their size)
	}
	prods := [][2]int{{0, 0}} // (a cast: its one product)
	if len(sp.groups) > 0 {
		prods = nil
		for _, g := range sp.groups {
			prods = append(prods, g.prods...)
		}
	}
	var names []string
	usedA, usedB := map[int]bool{}, map[int]bool{}
	for _, p := range prods {
		switch {
		case zeroA[p[0]]:
			usedA[p[0]] = true
		case zeroB[p[1]]:
			usedB[p[1]] = true
		default:
			return false, true // (this product need not be 0)
		}
		names = append(names, sp.productName(p))
	}
	var why []string
	for _, op := range []struct {
		name string
		used map[int]bool
		x    []float32
	}{{"A", usedA, a}, {"B", usedB, b}} {
		var idx []int
		for j := range sp.scales {
			if op.used[j] {
				idx = append(idx, j)
			}
		}
		if len(idx) == 0 {
			continue
		}
		// (the bound of the last piece named: pieces 0..j are zero within it)
		j := idx[len(idx)-1]
		bound := fmt.Sprintf("each |x| ≤ %.4g", min(z.pos[j], z.neg[j]))
		if cast {
			why = append(why, fmt.Sprintf("every element of %s rounds to zero in %s (%s)", op.name, name, bound))
			continue
		}
		verb := "is"
		if len(idx) > 1 {
			verb = "are"
		}
		why = append(why, fmt.Sprintf("%s's %s %s zero in every element (%s)", op.name, pieceNames(idx, len(sp.scales)), verb, bound))
	}
	if cast {
		rep.Notes = append(rep.Notes, "C is 0: "+strings.Join(why, ", and "))
		return true, true
	}
	rep.Notes = append(rep.Notes, fmt.Sprintf("C is 0: every product the scheme computes (%s) takes a piece that is zero throughout — %s",
		strings.Join(names, " "), strings.Join(why, "; ")))
	return true, true
}

// castRange is the split of a GEMM kind that rounds its FP32 inputs to the
// matrix unit's format f with rounding rnd (hgemm's FP16, BF16 or FP8): one
// unscaled piece.
func castRange(f fp.Format, rnd fp.Rounding) *schemePlan {
	return &schemePlan{format: f, scales: []int{0}, rounds: []fp.Options{{Round: rnd}}}
}
