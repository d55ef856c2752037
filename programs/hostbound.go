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
// its chip models by its estimate: runHostBytes and its data (runData),
// as HostBytes counts them — so that the room the run's bound leaves its
// models (modelRoom) refuses a model exactly where HostBytes passes the
// bound. runHostBytes alone where the parameters do not decode (the run
// refuses them at once) or the kind has no estimate.
func besideModels(f *File, opts Options) float64 {
	_, data, ok := runData(f, opts)
	if !ok {
		return runHostBytes
	}
	return runHostBytes + min(data, 1<<62)
}

// modelRoom bounds a chip model of the run by what the run's bound on its
// host memory (maxHostBytes) leaves beside beside bytes (besideModels:
// its base and data; what names them, "" for those): a's RunBound is the
// whole bound, which a refusal records (badinput.HostMemory) and names
// with the bytes beside (RunBeside, RunBesideWhat); arch leaves the model
// the rest.
func (o Options) modelRoom(a *arch.Options, beside float64, what string) {
	bound := o.maxHostBytes()
	a.RunBound, a.RunBeside, a.RunBesideWhat = bound, beside, what
	a.RunBoundDefault = o.MaxHostBytes <= 0
}

// hostBound is the bound on a run's host memory, held where the run's
// estimates are checked against it (a GEMM's parameters: Options.applyGEMM;
// an asm program's budget), with the words of a refusal.
type hostBound struct {
	limit int64 // bytes; 0: DefaultMaxHostBytes
}

// bound returns the bound, DefaultMaxHostBytes where none was set.
func (h *hostBound) bound() int64 {
	if h.limit > 0 {
		return h.limit
	}
	return DefaultMaxHostBytes()
}

// exceeds reports whether need bytes pass the bound.
func (h *hostBound) exceeds(need float64) bool { return need > float64(h.bound()) }

// over describes need against the bound, for a refusal: "about 34.0GiB of
// host memory, more than the run may take (18GiB, --max-memory)".
func (h *hostBound) over(need float64) string {
	about := fmt.Sprintf("%.1fGiB", need/(1<<30)) // (an estimate: rounded to nearest)
	switch {
	case need < 1<<30:
		about = fmt.Sprintf("%.0fMiB", need/(1<<20))
	case need >= 1<<50:
		about = fmt.Sprintf("%.3gGiB", need/(1<<30)) // (a hostile size)
	}
	return fmt.Sprintf("about %s of host memory, more than the run may take (%s, --max-memory)", about, gib(h.bound()))
}

// refuse marks err, a refusal of the run for passing the bound (over's
// words), as one for host memory (badinput.HostMemory): a sweep runs such
// a point again where its bound is larger.
func (h *hostBound) refuse(err error) error { return badinput.HostMemory(err, h.bound()) }

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
