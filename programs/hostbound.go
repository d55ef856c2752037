package programs

import (
	"fmt"
	"math"

	"github.com/davinci-sim/davinci-sim/arch"
	"github.com/davinci-sim/davinci-sim/badinput"
	"github.com/davinci-sim/davinci-sim/hostmem"
)

// fallbackHostBytes is the bound on a run's host memory where the host's
// memory cannot be read (hostmem.Total).
const fallbackHostBytes = 8 << 30

// DefaultMaxHostBytes is the host memory a run may take by its estimate
// — its base, its data and its chip models together (HostBytes) —, when
// the run names no bound (--max-memory): three quarters of
// the memory this process may use (hostmem.Total: the host's, or its
// control group's limit), whole MiB, leaving the rest to the system and to
// what the estimates leave out; 8 GiB where that memory cannot be read.
func DefaultMaxHostBytes() int64 {
	total, ok := hostmem.Total()
	if !ok {
		return fallbackHostBytes
	}
	return total / 4 * 3 >> 20 << 20
}

// DefaultMaxHostText says where DefaultMaxHostBytes comes from, for help
// text: "3/4 of this host's 23.4GiB", or the fallback.
func DefaultMaxHostText() string {
	total, ok := hostmem.Total()
	if !ok {
		return "8GiB: this host's memory could not be read"
	}
	return "3/4 of this host's " + gib(total)
}

// maxHostBytes returns the bound on the run's host memory: o.MaxHostBytes,
// or DefaultMaxHostBytes.
func (o Options) maxHostBytes() int64 {
	if o.MaxHostBytes > 0 {
		return o.MaxHostBytes
	}
	return DefaultMaxHostBytes()
}

// besideModels returns the host bytes a run of f with opts holds beside
// its chip models by its estimate: its base and data (the run's estimate,
// runEstimates.dataEstimate) and its kernels' blocks on a GPU
// (blocksHostBytes, of its whole estimate), as HostBytes counts them — so
// that the room the run's bound leaves its models (modelRoom) refuses a
// model exactly where HostBytes passes the bound. runHostBytes alone
// where the parameters do not decode (the run refuses them at once) or
// the kind has no estimate.
func besideModels(f *File, opts Options) float64 {
	est := opts.estimateOf(f)
	e, ok := est.dataEstimate()
	if !ok {
		return runHostBytes
	}
	if w, ok := est.whole(); ok {
		e.blocks = w.blocks
	}
	return e.beside()
}

// modelRoom bounds a chip model of the run by what the run's bound on its
// host memory (maxHostBytes) leaves beside beside bytes (besideModels:
// its base and data, and its kernels' blocks on a GPU; what names them,
// "" for those): a's RunBound is the whole bound, which a refusal records
// (badinput.HostMemory) and names with the bytes beside (RunBeside,
// RunBesideWhat); arch leaves the model the rest.
func (o Options) modelRoom(a *arch.Options, beside float64, what string) {
	if what == "" && o.est != nil {
		if e, ok := o.est.whole(); ok && e.blocks > 0 {
			what = "the run's data and base and its kernels' blocks" // (arch's words without them: "the run's data and base")
		}
	}
	bound := o.maxHostBytes()
	a.RunBound, a.RunBeside, a.RunBesideWhat = bound, beside, what
	a.RunBoundDefault = o.MaxHostBytes <= 0
}

// hostBound is the bound on a run's host memory, held where the run's
// estimates are checked against it (a GEMM's parameters: Options.applyGEMM;
// an LU's; an asm program's budget), with the words of a refusal.
type hostBound struct {
	limit int64 // bytes; 0: DefaultMaxHostBytes
	// run is the run's estimate (its file and options, each figure
	// computed once): its base and data (dataEstimate), by which its data
	// checks decide, and its whole estimate (whole), which their refusals
	// quote; nil where it is not known.
	run *runEstimates
}

// hostFor returns the bound on a run of f with opts, with its estimate:
// the run's one (Options.est), where o are its options.
func (o Options) hostFor(f *File) hostBound { return o.estimateOf(f).host }

// bound returns the bound, DefaultMaxHostBytes where none was set.
func (h *hostBound) bound() int64 {
	if h.limit > 0 {
		return h.limit
	}
	return DefaultMaxHostBytes()
}

// exceeds reports whether need bytes pass the bound.
func (h *hostBound) exceeds(need float64) bool { return need > float64(h.bound()) }

// est returns the run's whole estimate, or where that is not known one of
// the run's base and data bytes (the check's own figure).
func (h *hostBound) est(data float64) hostEstimate {
	if h.run != nil {
		if e, ok := h.run.whole(); ok {
			return e
		}
	}
	return hostEstimate{base: runHostBytes, data: data}
}

// overData reports whether the run's data and base by its estimate — on
// a GPU with what its functional blocks keep (hostEstimate.blockData),
// which numerics off or sampled leave out too — pass the bound (data, the
// check's own figure, where the estimate is not known), with the run's
// whole estimate where they do, which the data check's refusal quotes
// (overAll). (Where they do not and the chip model does, the model's
// check refuses the run.)
func (h *hostBound) overData(data float64) (hostEstimate, bool) {
	e := hostEstimate{base: runHostBytes, data: data}
	if h.run != nil {
		if d, ok := h.run.dataEstimate(); ok {
			e = d
		}
		if w, ok := h.run.whole(); ok {
			e.data += w.blockData
		}
	}
	if !h.exceeds(e.beside()) {
		return e, false
	}
	return h.est(data), true
}

// over describes need against the bound, for a refusal: "about 34.25GiB
// of host memory, more than the run may take (18GiB, --max-memory)" —
// need rounded up, as --max-memory takes it (aboutBytes), so that a bound
// of the figure stated holds it.
func (h *hostBound) over(need float64) string {
	return fmt.Sprintf("about %s of host memory, more than the run may take (%s, --max-memory)", aboutBytes(need), gib(h.bound()))
}

// overAll describes the run's whole estimate e against the bound, for a
// refusal: "about 684MiB of host memory in all (its data 576MiB, its chip
// model 59MiB and the run's base 48MiB), more than the run may take
// (512MiB, --max-memory)" — a --max-memory of the figure stated passes
// every check of the run (its data's, its chip model's).
func (h *hostBound) overAll(e hostEstimate) string {
	return fmt.Sprintf("about %s of host memory %s, more than the run may take (%s, --max-memory)", aboutBytes(e.total()), e.parts(), gib(h.bound()))
}

// parts names the estimate's parts: "in all (its data 576MiB, its chip
// model 59MiB and the run's base 48MiB)" (a run without data: "in all
// (its chip model 7MiB and the run's base 48MiB)"; on a GPU its kernels'
// blocks too: "in all (its data 576MiB, its kernels' blocks 41MiB, its
// chip model 8MiB and the run's base 48MiB)").
func (e hostEstimate) parts() string {
	data := ""
	if e.data > 0 {
		data = "its data " + roughSize(e.data) + ", "
	}
	if e.blocks > 0 {
		data += "its kernels' blocks " + roughSize(e.blocks) + ", "
	}
	return fmt.Sprintf("in all (%sits chip model %s and the run's base %s)", data, roughSize(e.models), roughSize(e.base))
}

// quoteWhole adds to err, a chip model's refusal for host memory (arch:
// its own estimate and the room the bound left it), the run's whole
// estimate, as a data check's refusal quotes it (overAll): the figure a
// bound must be for the run to pass every check. Other errors, and an
// estimate within the bound (not the run's to state), are err.
func quoteWhole(err error, f *File, opts Options) error {
	bound, ok := badinput.HostMemoryBound(err)
	if !ok {
		return err
	}
	e, ok := opts.estimateOf(f).whole()
	if !ok || e.total() <= float64(bound) {
		return err
	}
	return fmt.Errorf("%w; the run needs about %s of host memory %s", err, aboutBytes(e.total()), e.parts())
}

// refuse marks err, a refusal of the run for passing the bound (over's
// words), as one for host memory (badinput.HostMemory): a sweep runs such
// a point again where its bound is larger.
func (h *hostBound) refuse(err error) error { return badinput.HostMemory(err, h.bound()) }

// aboutBytes writes an estimate of b bytes rounded up, as --max-memory
// takes it: whole MiB below 10 GiB ("1434MiB"), else GiB to a quarter
// ("34.25GiB"), so that a bound of the figure holds the estimate (a
// tenth of a GiB is no whole number of bytes: "1.4GiB" is refused).
func aboutBytes(b float64) string {
	switch {
	case b >= 1<<50:
		return fmt.Sprintf("%.3gGiB", b/(1<<30)) // (a hostile size: past any bound)
	case b < 10<<30:
		return fmt.Sprintf("%.0fMiB", math.Ceil(b/(1<<20)))
	}
	return fmt.Sprintf("%gGiB", math.Ceil(b/(1<<28))/4)
}

// roughSize writes a part of an estimate of b bytes, to the nearest MiB
// below 10 GiB, else to a tenth of a GiB.
func roughSize(b float64) string {
	if b < 10<<30 {
		return fmt.Sprintf("%.0fMiB", b/(1<<20))
	}
	return fmt.Sprintf("%.1fGiB", b/(1<<30))
}

// gib writes a bound of b bytes in GiB, to a tenth where not whole (in MiB
// below a GiB, to a tenth where not whole), rounded down: never above it.
func gib(b int64) string {
	switch {
	case b%(1<<30) == 0 && b > 0:
		return fmt.Sprintf("%dGiB", b>>30)
	case b >= 1<<30:
		return fmt.Sprintf("%.1fGiB", math.Floor(float64(b)/(1<<30)*10)/10)
	case b%(1<<20) == 0:
		return fmt.Sprintf("%dMiB", b>>20)
	}
	return fmt.Sprintf("%.1fMiB", math.Floor(float64(b)/(1<<20)*10)/10)
}
