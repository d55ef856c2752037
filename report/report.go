// Package report owns report.json, the stable summary a run leaves behind:
// time, throughput, pipe stalls, buffer occupancy, GM traffic, numerical
// error, and the program-specific sections (HPLMxP, LUGEMM, GPUBench), all
// as Go structs whose json tags are the keys. The keys are documented in
// docs/report.md (the contract; TestReportDocumented keeps it and the code
// in step), the program sections also on their types here. report.json is written by WriteJSON (top-level keys sorted),
// the human summary by WriteSummary.
package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/davinci-sim/davinci-sim/accuracy"
	"github.com/davinci-sim/davinci-sim/arch"
	"github.com/davinci-sim/davinci-sim/sim"
)

// Report is report.json. Keys are stable (docs/report.md); more may be
// added. Program-specific sections are typed fields (nil when the program
// has none), written beside the standard keys.
type Report struct {
	Machine string `json:"machine"`
	// MachineConfig is the effective machine the run used: its machine file
	// after every machine.* --set override, as `davinci-sim machines NAME
	// --resolved` prints it (sizes, clocks and bandwidths as text with their
	// unit). Saved as a file it is a valid machine file for -m, so a run can
	// be repeated on exactly this machine even after the embedded one changes.
	MachineConfig map[string]any `json:"machine_config"`
	// Overrides lists the run's --set options as given (path=value, program
	// and machine paths, in order); empty when there were none.
	Overrides []string `json:"overrides"`
	// Version is the davinci-sim build that produced the report (package
	// version).
	Version string `json:"version"`
	// Program is the program's kind and resolved parameters.
	Program   Program                 `json:"program"`
	Time      TimeReport              `json:"time"`
	Flops     *FlopsReport            `json:"flops,omitempty"`
	Pipes     map[string]PipeReport   `json:"pipes,omitempty"` // aggregated over the cores used (absent: no pipes simulated in one timeline)
	Buffers   map[string]BufferReport `json:"buffers,omitempty"`
	Memory    *MemoryReport           `json:"memory,omitempty"` // absent where no memory traffic was simulated (a cluster timed apart)
	Energy    *EnergyReport           `json:"energy,omitempty"` // machines with a power model
	Error     *ErrorReport            `json:"error,omitempty"`
	Baselines map[string]ErrorReport  `json:"baselines,omitempty"` // by baseline name (hgemm, cpu_sgemm_fp32)
	Sim       SimReport               `json:"sim"`
	// Kernels are the run's kernel launches (GPU grids), in launch order.
	Kernels []KernelReport `json:"kernels,omitempty"`
	Cores   []CoreReport   `json:"cores,omitempty"`
	Notes   []string       `json:"notes,omitempty"`
	// Failure says why the run failed (a deadlock, a failed check); nil
	// when it succeeded.
	Failure *Failure `json:"failure,omitempty"`

	// HPLMxP is lu-fused's section.
	HPLMxP *HPLMxP `json:"hplmxp,omitempty"`
	// LUGEMM is lu-gemm's section.
	LUGEMM *LUGEMM `json:"lu_gemm,omitempty"`
	// Cluster is the section of a run on a cluster or node description.
	Cluster *Cluster `json:"cluster,omitempty"`
	// GPUBench is gpu-bench's section.
	GPUBench *GPUBench `json:"gpu_bench,omitempty"`

	// laneOrder and bufferOrder are the machine's lane and local buffer
	// names in geometry order, for the summary table (FromStats).
	laneOrder, bufferOrder []string
}

// KernelReport is one kernel launch: its blocks and when it ran. Seconds is
// Finished − Launched (the launch cost, then the blocks); kernels run one
// after the other, so in a stream of kernels their seconds add up to the
// run's time — a host-driven program (lu-fused) also spends the host's
// time between them.
type KernelReport struct {
	Name     string  `json:"name"`
	Blocks   int     `json:"blocks"`
	Launched float64 `json:"launched_seconds"`
	Started  float64 `json:"started_seconds"`
	Finished float64 `json:"finished_seconds"`
	Seconds  float64 `json:"seconds"`
	// Events is the engine events its simulation executed (a share of
	// sim.events: what it cost; fast-forward's skipped waves, steps and
	// kernels execute none).
	Events uint64 `json:"events"`
}

// writeLaunches writes how much of the run's time its kernels spent from
// their launches to their first blocks — the machine's launch cost
// (core.launch_ns), an assumption that dominates a small GEMM's time (A100
// HGEMM 1024³: 21 of its 28 µs) and that no other line shows.
func (r *Report) writeLaunches(w io.Writer) {
	var total float64
	each := math.NaN()
	for i, k := range r.Kernels {
		d := k.Started - k.Launched
		total += d
		if i == 0 {
			each = d
		} else if math.Abs(d-each) > 1e-12 {
			each = math.NaN() // (not the same for every launch)
		}
	}
	if !(total > 0) || !(r.Time.Seconds > 0) {
		return
	}
	share := 100 * total / r.Time.Seconds
	if len(r.Kernels) == 1 {
		fmt.Fprintf(w, "launch    %v of it (%.1f %%) before the kernel's first block started (the machine's core.launch_ns)\n", picoseconds(total), share)
		return
	}
	per := ""
	if !math.IsNaN(each) {
		per = fmt.Sprintf(", %v each", picoseconds(each))
	}
	fmt.Fprintf(w, "launch    %v of it (%.1f %%) from %d kernels' launches to their first blocks (the machine's core.launch_ns%s)\n", picoseconds(total), share, len(r.Kernels), per)
}

// picoseconds is s seconds as a simulated time (sim.Time's String: "21µs").
func picoseconds(s float64) sim.Time { return sim.Time(math.Round(s * 1e12)) }

// SetKernels fills r.Kernels from a run's kernel launches.
func (r *Report) SetKernels(gt []arch.GridTimes) {
	r.Kernels = nil
	for _, g := range gt {
		r.Kernels = append(r.Kernels, KernelReport{Name: g.Name, Blocks: g.CTAs, Launched: g.Launched.Seconds(),
			Started: g.Started.Seconds(), Finished: g.Finished.Seconds(), Seconds: (g.Finished - g.Launched).Seconds(), Events: g.Events})
	}
}

// The kinds of Failure.
const (
	// FailureDeadlock is a run whose event queue ran dry while components
	// still waited: its report covers the run up to the deadlock.
	FailureDeadlock = "deadlock"
	// FailureCheck is a run that completed but whose check failed (its
	// outputs differ from the golden model, its refinement did not
	// converge): its report is complete.
	FailureCheck = "check"
)

// Failure is report.json's failure section: why a run failed (exit code
// 1). A deadlocked run's report holds what was simulated up to the
// deadlock (time, pipes, stalls by cause, buffers, memory traffic,
// energy) and none of what the program computes after its run (its
// resolved parameters, flops, error, result arrays).
type Failure struct {
	// Kind is FailureDeadlock or FailureCheck.
	Kind string `json:"kind"`
	// Message is the error the run ended with, as printed on stderr.
	Message string `json:"message"`
	// Seconds and Cycles are when the run failed: the deadlock's simulated
	// time (its last event, the same as time), the end of a run whose
	// check failed.
	Seconds float64 `json:"seconds"`
	Cycles  int64   `json:"cycles"`
	// Blocked (a deadlock) names each blocked component and what it waits
	// for, as Message lists them.
	Blocked []string `json:"blocked,omitempty"`
	// NotMeaningful (a deadlock) lists the report's keys, as dotted paths
	// (a sweep's metrics), whose values are placeholders that do not
	// describe the run: a core that had not finished has finish_cycle 0,
	// and without the program's flop count the operational intensities
	// are 0.
	NotMeaningful []string `json:"not_meaningful,omitempty"`
}

// TimeReport is the simulated duration.
type TimeReport struct {
	Cycles  int64   `json:"cycles"`
	Seconds float64 `json:"seconds"`
}

// FlopsReport is the throughput of the run under a named flop convention.
type FlopsReport struct {
	Total        float64 `json:"total"`
	TFLOPS       float64 `json:"tflops"`
	PeakTFLOPS   float64 `json:"peak_tflops"`
	PeakFraction float64 `json:"peak_fraction"`
	Convention   string  `json:"convention"`
}

// PipeReport is one pipe's time split: Busy and each stall cause as a
// fraction of the run (over the cores the program used).
type PipeReport struct {
	Busy       float64            `json:"busy"`
	BusyCycles int64              `json:"busy_cycles"`
	Stall      map[string]float64 `json:"stall"`
	Instrs     uint64             `json:"instructions"`
}

// BufferReport summarizes one buffer: per-core capacity, the largest peak
// over cores and the mean over cores of the time-weighted mean occupancy.
type BufferReport struct {
	CapacityBytes int64   `json:"capacity_bytes"`
	PeakBytes     int64   `json:"peak_bytes"`
	MeanBytes     float64 `json:"mean_bytes"`
	PeakFraction  float64 `json:"peak_fraction"`
}

// MemoryReport is the global-memory traffic.
type MemoryReport struct {
	GMReadBytes          int64   `json:"gm_read_bytes"`
	GMWriteBytes         int64   `json:"gm_write_bytes"`
	OperationalIntensity float64 `json:"operational_intensity"` // flops per GM byte
	GMBandwidthUse       float64 `json:"gm_bandwidth_utilisation"`
	// L2HitBytes and L2MissBytes split the GM reads the L2 looked up (0
	// without an L2); LLCHitBytes and LLCMissBytes the memory-side cache's
	// lookups (machines with one only).
	L2HitBytes   int64 `json:"l2_hit_bytes"`
	L2MissBytes  int64 `json:"l2_miss_bytes"`
	LLCHitBytes  int64 `json:"llc_hit_bytes,omitempty"`
	LLCMissBytes int64 `json:"llc_miss_bytes,omitempty"`
	// The second level: HBMReadBytes and HBMWriteBytes reach HBM after the
	// caches (the reads no cache served; every write), L2ReadHitBytes are
	// the GM reads the L2 served, L2HitRate their fraction of the GM reads,
	// L2BandwidthUse the mean fraction of the L2 bandwidth in use, and
	// OperationalIntensityHBM the flops per HBM byte (the roofline's
	// intensity; operational_intensity is per byte requested from GM).
	HBMReadBytes            int64   `json:"hbm_read_bytes"`
	HBMWriteBytes           int64   `json:"hbm_write_bytes"`
	L2ReadHitBytes          int64   `json:"l2_read_hit_bytes"`
	L2HitRate               float64 `json:"l2_hit_rate"`
	L2BandwidthUse          float64 `json:"l2_bandwidth_utilisation"`
	OperationalIntensityHBM float64 `json:"operational_intensity_hbm"`
}

// SetHBMIntensity derives OperationalIntensityHBM from the flops behind
// OperationalIntensity (flops per GM byte) and the HBM bytes.
func (m *MemoryReport) SetHBMIntensity() {
	if m == nil {
		return
	}
	gm, hbm := m.GMReadBytes+m.GMWriteBytes, m.HBMReadBytes+m.HBMWriteBytes
	if hbm > 0 {
		m.OperationalIntensityHBM = m.OperationalIntensity * float64(gm) / float64(hbm)
	}
}

// ErrorReport is the error of a result against a reference: the metrics of
// accuracy.Metrics (see it for their definitions) over Elements elements.
// MaxRel is +Inf where a reference of 0 has a result that is not
// (ZeroRefDiffers); MRED averages over the Elements − ZeroRef elements
// whose reference is not 0 and is NaN where there are none. Bits is capped
// at 64 (accuracy.MaxBits): an exact result (RelFro 0) reads 64.
type ErrorReport struct {
	Reference string  `json:"reference"`
	RelFro    float64 `json:"rel_fro"`
	MaxRel    float64 `json:"max_rel"`
	MRED      float64 `json:"mred"`
	MaxErr    float64 `json:"max_err"`
	Bits      float64 `json:"bits"`
	Elements  int64   `json:"elements"`
	Sampled   bool    `json:"sampled,omitempty"`
	// NonFinite counts the compared elements of the result that are ±Inf
	// or NaN (an overflow); an element equal to the reference, the same
	// infinity included, has no error.
	NonFinite int64 `json:"non_finite,omitempty"`
	// ZeroRef counts the compared elements whose reference is 0 (left out
	// of MRED), ZeroRefDiffers those of them whose result is not 0 (each
	// makes MaxRel +Inf).
	ZeroRef        int64 `json:"zero_ref,omitempty"`
	ZeroRefDiffers int64 `json:"zero_ref_differs,omitempty"`
}

// SimReport describes the simulation itself.
type SimReport struct {
	Events          uint64  `json:"events"`
	WallSeconds     float64 `json:"wall_seconds" host:"wall"`
	EventsPerSecond float64 `json:"events_per_second" host:"wall"`
	Mode            string  `json:"numerics"`
	// KernelWallSeconds is the part of WallSeconds spent simulating kernels
	// alone (a cluster run timing kernels apart: fidelity isolated or
	// sampled; 0 otherwise).
	KernelWallSeconds float64 `json:"kernel_wall_seconds,omitempty" host:"wall"`
	// SkippedSeconds is the simulated time fast-forward's skipped waves
	// stand for (0: nothing skipped), and SkipUncertaintySeconds how far
	// the run's time could be off had the skipped waves varied as much as
	// the measured and checked ones did (an estimate, not a bound).
	SkippedSeconds         float64 `json:"skipped_seconds,omitempty"`
	SkipUncertaintySeconds float64 `json:"skip_uncertainty_seconds,omitempty"`
	// SkippedGMReadBytes is the part of the run's global-memory reads the
	// skipped waves, k-steps and kernels stand for (their L2, LLC and HBM
	// shares are the measured rates', not looked up).
	SkippedGMReadBytes int64 `json:"skipped_gm_read_bytes,omitempty"`
	// DiscardedRuns is the number of runs a failed fast-forward step check
	// stopped and made again (a failed wave check is taken back in the
	// run: no run made again), DiscardedEvents and DiscardedWallSeconds
	// what they simulated and the part of WallSeconds they took (Events
	// counts the run reported; EventsPerSecond all the events simulated).
	DiscardedRuns        int     `json:"discarded_runs,omitempty"`
	DiscardedEvents      uint64  `json:"discarded_events,omitempty"`
	DiscardedWallSeconds float64 `json:"discarded_wall_seconds,omitempty" host:"wall"`
	// KBatch is the run's --k-batch: GPU GEMM kernels simulated that many
	// of their k-steps as one (0: none).
	KBatch int `json:"k_batch,omitempty"`
	// RunsBefore is the runs the program's build made before this one
	// (scheme auto's accuracy samples and candidate timings), and
	// RunsBeforeWallSeconds the wall time they took (not in WallSeconds).
	RunsBefore            int     `json:"runs_before,omitempty"`
	RunsBeforeWallSeconds float64 `json:"runs_before_wall_seconds,omitempty" host:"wall"`
}

// CoreReport is one core's accounting.
type CoreReport struct {
	Core        int                   `json:"core"`
	FinishCycle int64                 `json:"finish_cycle"`
	Pipes       map[string]PipeReport `json:"pipes"`
}

// FromStats fills the timing, stall, buffer and memory parts of r from a
// run's statistics; used lists the cores the program ran on.
func (r *Report) FromStats(st *arch.Stats, clockHz float64, used []int) {
	r.Time = TimeReport{Cycles: st.Cycles, Seconds: st.Time.Seconds()}
	g := st.Geometry
	for _, ci := range used {
		cs := st.Cores[ci]
		cr := CoreReport{Core: ci, FinishCycle: int64(float64(cs.Finish.Seconds()) * clockHz), Pipes: map[string]PipeReport{}}
		for p := range cs.Lanes {
			var lt laneTimes
			lt.add(cs.Lanes[p])
			cr.Pipes[g.Lanes[p]] = pipeReport(lt, float64(st.Time), clockHz)
		}
		r.Cores = append(r.Cores, cr)
	}
	r.SetLanes(st, clockHz, used)
	r.Memory = &MemoryReport{GMReadBytes: st.GMReadBytes, GMWriteBytes: st.GMWriteBytes, GMBandwidthUse: st.GMUtilisation,
		L2HitBytes: st.L2HitBytes, L2MissBytes: st.L2MissBytes, LLCHitBytes: st.LLCHitBytes, LLCMissBytes: st.LLCMissBytes,
		HBMReadBytes: st.Traffic.HBMRead, HBMWriteBytes: st.Traffic.HBMWrite, L2ReadHitBytes: st.Traffic.L2Read,
		L2HitRate: st.Traffic.L2HitRate(), L2BandwidthUse: st.L2Utilisation}
}

// SetLanes fills pipes (each lane's time by cause, aggregated over the
// cores in used, as fractions of their total time) and buffers (peak and
// mean occupancy over those cores) from st: a chip's run, or the cores of
// every chip of a cluster run (arch.ConcatStats).
func (r *Report) SetLanes(st *arch.Stats, clockHz float64, used []int) {
	r.Pipes = map[string]PipeReport{}
	r.Buffers = map[string]BufferReport{}
	total := st.Time
	g := st.Geometry
	r.laneOrder = g.Lanes
	r.bufferOrder = r.bufferOrder[:0]
	agg := make([]laneTimes, len(g.Lanes)) // summed in float64: many cores' picoseconds overflow int64 in a long run
	for _, ci := range used {
		for p, ps := range st.Cores[ci].Lanes {
			agg[p].add(ps)
		}
	}
	n := float64(len(used))
	if n == 0 {
		n = 1
	}
	for p := range agg {
		r.Pipes[g.Lanes[p]] = pipeReport(agg[p], float64(total)*n, clockHz/n)
	}
	for _, b := range g.LocalBuffers() {
		var br BufferReport
		for _, ci := range used {
			bs := st.Cores[ci].Buffers[b]
			br.CapacityBytes = bs.Capacity
			if bs.Peak > br.PeakBytes {
				br.PeakBytes = bs.Peak
			}
			br.MeanBytes += bs.Mean / n
		}
		if br.CapacityBytes > 0 {
			br.PeakFraction = float64(br.PeakBytes) / float64(br.CapacityBytes)
		}
		r.Buffers[g.Buffers[b].Name] = br
		r.bufferOrder = append(r.bufferOrder, g.Buffers[b].Name)
	}
}

// laneTimes is a lane's time by cause (picoseconds) and instructions,
// summed over cores.
type laneTimes struct {
	time   [arch.NumCauses]float64
	instrs uint64
}

// add adds one core's lane.
func (l *laneTimes) add(ps arch.LaneStats) {
	for c, t := range ps.Time {
		l.time[c] += float64(t)
	}
	l.instrs += ps.Instrs
}

func pipeReport(ps laneTimes, total, hz float64) PipeReport {
	pr := PipeReport{Stall: map[string]float64{}, Instrs: ps.instrs}
	if total <= 0 {
		return pr
	}
	// (A lane's time never exceeds total; summed over many cores in
	// float64 it can round one ulp past it.)
	pr.Busy = min(ps.time[arch.Busy]/total, 1)
	pr.BusyCycles = int64(ps.time[arch.Busy] * 1e-12 * hz)
	for c := arch.Cause(1); c < arch.NumCauses; c++ {
		pr.Stall[c.String()] = min(ps.time[c]/total, 1)
	}
	return pr
}

// WriteJSON writes r as indented JSON with the top-level keys sorted (the
// program sections among the standard keys, as the map they were once
// merged into wrote them). Every float that is ±Inf or NaN, in any
// section, is written as the string "+Inf", "-Inf" or "NaN" (JSON has no
// such numbers; marshalFinite) rather than failing the whole report.
func (r *Report) WriteJSON(w io.Writer) error {
	base, err := json.Marshal(r)
	if uv := new(json.UnsupportedValueError); errors.As(err, &uv) {
		// A NaN or ±Inf where JSON has no number: every float as
		// encoding/json writes it, those as strings (marshalFinite).
		base, err = marshalFinite(r)
	}
	if err != nil {
		return err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(base, &m); err != nil {
		return err
	}
	out, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(out, '\n'))
	return err
}

// WriteSummary prints a readable summary table.
func (r *Report) WriteSummary(w io.Writer) {
	fmt.Fprintf(w, "machine %s, program %v\n", r.Machine, r.Program["kind"])
	fmt.Fprintf(w, "time      %d cycles (%.6g s)\n", r.Time.Cycles, r.Time.Seconds)
	r.writeLaunches(w)
	if f := r.Flops; f != nil {
		u := r.OpUnit()
		fmt.Fprintf(w, "flops     %.4g %s: %.2f T%s/s = %.1f %% of %.2f T%s/s\n", f.Total, f.Convention, f.TFLOPS, u, 100*f.PeakFraction, f.PeakTFLOPS, u)
	}
	// The bandwidth use is HBM's (memory.gm_bandwidth_utilisation): on
	// the HBM line where an L2 serves part of the GM traffic, else on the
	// GM line (all of it reaches HBM).
	if m := r.Memory; m != nil && m.L2ReadHitBytes+m.L2HitBytes+m.L2MissBytes > 0 {
		fmt.Fprintf(w, "GM        read %s, written %s, %s\n",
			bytesStr(m.GMReadBytes), bytesStr(m.GMWriteBytes), r.intensityStr("memory.operational_intensity", m.OperationalIntensity))
		fmt.Fprintf(w, "HBM       read %s, written %s, %s, bandwidth use %.1f %%; L2 served %.1f %% of GM reads, L2 bandwidth use %.1f %%\n",
			bytesStr(m.HBMReadBytes), bytesStr(m.HBMWriteBytes), r.intensityStr("memory.operational_intensity_hbm", m.OperationalIntensityHBM), 100*m.GMBandwidthUse, 100*m.L2HitRate, 100*m.L2BandwidthUse)
	} else if m != nil { // (none: timed-apart cluster kernels keep no memory counters)
		fmt.Fprintf(w, "GM        read %s, written %s, %s, bandwidth use %.1f %%\n",
			bytesStr(m.GMReadBytes), bytesStr(m.GMWriteBytes), r.intensityStr("memory.operational_intensity", m.OperationalIntensity), 100*m.GMBandwidthUse)
	}
	if e := r.Energy; e != nil {
		over := ""
		if e.OverMax {
			over = " — above the machine's maximum: the power model is too high"
		}
		perW := fmt.Sprintf("%.1f G%s/s per W", e.GFLOPSPerWatt, r.OpUnit())
		if r.placeholder("energy.gflops_per_watt") {
			perW = fmt.Sprintf("G%s/s per W not known", r.OpUnit())
		}
		fmt.Fprintf(w, "energy    %.4g J, %.1f W average (max %.0f W)%s, %s\n", e.Joules, e.AverageWatts, e.MaxWatts, over, perW)
	}
	if e := r.Error; e != nil {
		fmt.Fprintf(w, "error     rel_fro %.3e  max_rel %.3e  bits %.1f  (vs %s, %d elements%s)\n", e.RelFro, e.MaxRel, e.Bits, e.Reference, e.Elements, sampledStr(e.Sampled))
		fmt.Fprintf(w, "          mred %.3e  max_err %.3e%s\n", e.MRED, e.MaxErr, zeroRefStr(e.ZeroRef, e.ZeroRefDiffers))
		if e.NonFinite > 0 {
			fmt.Fprintf(w, "          %d of the %d elements are ±Inf or NaN (an overflow, or non-finite inputs; one equal to the reference's counts as exact)\n", e.NonFinite, e.Elements)
		}
	}
	names := make([]string, 0, len(r.Baselines))
	for k := range r.Baselines {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		e := r.Baselines[k]
		fmt.Fprintf(w, "  %-12s rel_fro %.3e  max_rel %.3e  bits %.1f\n", k, e.RelFro, e.MaxRel, e.Bits)
	}
	r.writeProgramMetrics(w)
	if len(r.Kernels) > 1 {
		fmt.Fprintln(w)
		kw := len("kernel")
		for _, k := range r.Kernels {
			kw = max(kw, len(k.Name))
		}
		// (events: what simulating each kernel cost, its share of the
		// run's events — where the wall time went)
		fmt.Fprintf(w, "%-*s %8s %12s %6s %18s\n", kw, "kernel", "blocks", "seconds", "share", "events (share)")
		for _, k := range r.Kernels {
			share, evShare := 0.0, 0.0
			if r.Time.Seconds > 0 {
				share = k.Seconds / r.Time.Seconds
			}
			if r.Sim.Events > 0 {
				evShare = float64(k.Events) / float64(r.Sim.Events)
			}
			fmt.Fprintf(w, "%-*s %8d %12.4g %5.1f%% %10d (%5.1f%%)\n", kw, k.Name, k.Blocks, k.Seconds, 100*share, k.Events, 100*evShare)
		}
	}
	if r.Cluster != nil {
		r.Cluster.writeSummary(w, r.placeholder)
	}
	if len(r.Pipes) > 0 || len(r.Buffers) > 0 {
		fmt.Fprintln(w)
		causes := []arch.Cause{arch.WaitFlag, arch.Barrier, arch.QueueEmpty, arch.QueueFull, arch.Bandwidth, arch.Latency}
		lw := 5 // lane name column: DaVinci's MTE2 and a space, wider for longer names
		for p := range r.Pipes {
			lw = max(lw, len(p))
		}
		fmt.Fprintf(w, "%-*s %7s", lw, "pipe", "busy")
		for _, c := range causes {
			fmt.Fprintf(w, " %11s", c)
		}
		fmt.Fprintf(w, " %12s\n", "instructions")
		for _, p := range orderedKeys(r.laneOrder, r.Pipes) {
			pr, ok := r.Pipes[p]
			if !ok {
				continue
			}
			fmt.Fprintf(w, "%-*s %6.1f%%", lw, p, 100*pr.Busy)
			for _, c := range causes {
				fmt.Fprintf(w, " %10.1f%%", 100*pr.Stall[c.String()])
			}
			fmt.Fprintf(w, " %12d\n", pr.Instrs)
		}
		fmt.Fprintln(w)
		fmt.Fprintf(w, "%-6s %10s %10s %10s %7s\n", "buffer", "capacity", "peak", "mean", "peak%")
		for _, b := range orderedKeys(r.bufferOrder, r.Buffers) {
			br := r.Buffers[b]
			fmt.Fprintf(w, "%-6s %10s %10s %10s %6.1f%%\n", b, bytesStr(br.CapacityBytes), bytesStr(br.PeakBytes), bytesStr(int64(br.MeanBytes)), 100*br.PeakFraction)
		}
	}
	fmt.Fprintf(w, "\nsimulated %d events in %.3f s (%.3g events/s)", r.Sim.Events, r.Sim.WallSeconds, r.Sim.EventsPerSecond)
	if s := r.Sim; s.DiscardedRuns > 0 {
		runs := "1 run"
		if s.DiscardedRuns > 1 {
			runs = fmt.Sprintf("%d runs", s.DiscardedRuns)
		}
		fmt.Fprintf(w, "; %.3f s of it (%d events) in %s a failed check stopped", s.DiscardedWallSeconds, s.DiscardedEvents, runs)
	}
	if s := r.Sim; s.RunsBefore > 0 {
		fmt.Fprintf(w, "; before it, %d runs to choose the scheme in %.3f s", s.RunsBefore, s.RunsBeforeWallSeconds)
	}
	fmt.Fprintln(w)
	for _, n := range r.Notes {
		fmt.Fprintln(w, "note:", n)
	}
	r.Failure.writeSummary(w)
}

// zeroRefStr says how many compared references are 0 (left out of MRED)
// and how many of those have a result that is not (each makes max_rel
// +Inf): "" where none is 0.
func zeroRefStr(zero, differs int64) string {
	if zero == 0 {
		return ""
	}
	s := fmt.Sprintf("; %d references are 0 (not in mred)", zero)
	if zero == 1 {
		s = "; 1 reference is 0 (not in mred)"
	}
	if differs > 0 {
		s += fmt.Sprintf(", %d of them with a result that is not (max_rel +Inf)", differs)
	}
	return s
}

// writeProgramMetrics prints the program section's error comparisons of
// its own (values of type accuracy.Metrics, such as emulated-gemm's
// error_vs_cpu_sgemm: LE-GEMM's metrics against a CPU FP32 SGEMM), one
// line each in key order, named by their report.json path.
func (r *Report) writeProgramMetrics(w io.Writer) {
	keys := make([]string, 0, len(r.Program))
	for k, v := range r.Program {
		if _, ok := v.(accuracy.Metrics); ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		m := r.Program[k].(accuracy.Metrics)
		fmt.Fprintf(w, "  program.%s: rel_fro %.3e  max_rel %.3e  mred %.3e  max_err %.3e  bits %.1f  (%d elements%s)\n",
			k, m.RelFro, m.MaxRel, m.MRED, m.MaxErr, m.Bits, m.N, zeroRefStr(int64(m.ZeroRef), int64(m.ZeroRefDiffers)))
	}
}

// intensityStr formats an operational intensity for the summary, or says
// it is not known when the failure lists its key (path) as a placeholder.
func (r *Report) intensityStr(path string, x float64) string {
	per := strings.ToLower(r.OpUnit()) + "/byte"
	if r.placeholder(path) {
		return per + " not known"
	}
	return fmt.Sprintf("%.1f %s", x, per)
}

// OpUnit names what the summary's rates count: "OP" where the flops
// convention counts integer operations (igemm's and ape-int16's "int8
// ops …", "int16 ops …", gpu-bench's "int8 tensor …"), else "FLOP".
// (report.json's keys say flops either way.)
func (r *Report) OpUnit() string {
	if f := r.Flops; f != nil && strings.HasPrefix(f.Convention, "int") {
		return "OP"
	}
	return "FLOP"
}

// placeholder reports whether the failure names the key at path (dotted)
// as a placeholder that does not describe the run.
func (r *Report) placeholder(path string) bool {
	return r.Failure != nil && slices.Contains(r.Failure.NotMeaningful, path)
}

// writeSummary prints the failure after the summary of what was
// simulated: its first line (the blocked components follow in the error
// on stderr, and in failure.blocked) and, for a deadlock, what the
// figures above are and which of them mean nothing.
func (f *Failure) writeSummary(w io.Writer) {
	if f == nil {
		return
	}
	head, _, _ := strings.Cut(f.Message, "\n")
	fmt.Fprintf(w, "\nFAILED    %s\n", head)
	if f.Kind != FailureDeadlock {
		return
	}
	fmt.Fprintln(w, "          the figures above are the run's up to the deadlock; the program's results (flops, error, arrays) were not computed")
	if len(f.NotMeaningful) > 0 {
		fmt.Fprintf(w, "          not meaningful (placeholders): %s\n", strings.Join(f.NotMeaningful, ", "))
	}
}

// orderedKeys returns the keys of m in the given order (the machine's), or
// sorted when no order is known.
func orderedKeys[V any](order []string, m map[string]V) []string {
	if order != nil {
		return order
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func sampledStr(s bool) string {
	if s {
		return ", sampled"
	}
	return ""
}

func bytesStr(n int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	f := float64(n)
	i := 0
	for f >= 1024 && i < len(units)-1 {
		f /= 1024
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%d B", n)
	}
	return strings.TrimSuffix(strings.TrimSuffix(fmt.Sprintf("%.2f", f), "0"), ".0") + " " + units[i]
}

// CheckPath reports whether the dotted path (e.g. "flops.tflops",
// "buffers.L1.peak_fraction", "cores.0.finish_cycle") can address a value
// of report.json: each part must be a key of the Report structure, with any
// key accepted below a map (buffer and pipe names, the program section's
// parameters) and a number below a list. It does not know which optional
// sections a run fills.
func CheckPath(path string) error {
	t := reflect.TypeFor[Report]()
	parts := strings.Split(path, ".")
	for i, part := range parts {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		switch t.Kind() {
		case reflect.Interface:
			return nil // free-form below here (the program section)
		case reflect.Map:
			t = t.Elem()
			continue
		case reflect.Slice:
			if n, err := strconv.Atoi(part); (err != nil || n < 0) && part != "*" {
				return fmt.Errorf("%q: %q is a list; index it with a number ≥ 0 (or * for every element)", path, strings.Join(parts[:i], "."))
			}
			t = t.Elem()
			continue
		case reflect.Struct:
			next := KeyType(t, part)
			if next == nil {
				var keys []string
				for _, f := range jsonFields(t) {
					if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); name != "" && name != "-" {
						keys = append(keys, name)
					}
				}
				where := "report.json"
				if i > 0 {
					where = strings.Join(parts[:i], ".")
				}
				return fmt.Errorf("%q: %s has no key %q (keys: %s)", path, where, part, strings.Join(keys, ", "))
			}
			t = next
			continue
		default:
			return fmt.Errorf("%q: %s is a single value, it has no key %q", path, strings.Join(parts[:i], "."), part)
		}
	}
	return nil
}

// KeyType returns the type of the value written under key in a value of
// struct type t (its fields as jsonFields gives them; the key matched
// exactly, else in any case, as sweep.Lookup matches keys), nil where t
// has no such key.
func KeyType(t reflect.Type, key string) reflect.Type {
	type typeKey struct {
		t   reflect.Type
		key string
	}
	if v, ok := keyTypes.Load(typeKey{t, key}); ok {
		ft, _ := v.(reflect.Type) // (nil: no such key)
		return ft
	}
	var ft reflect.Type
	if f, ok := jsonField(t, key); ok {
		ft = f.Type
	}
	keyTypes.Store(typeKey{t, key}, ft)
	return ft
}

// keyTypes remembers KeyType's answers (types do not change): reading a
// study's results asks it for every metric of every record, each answer a
// walk over a struct's fields by reflection.
var keyTypes sync.Map

// jsonField returns the field of struct type t whose report key is key
// (case-folded where no key is key exactly).
func jsonField(t reflect.Type, key string) (reflect.StructField, bool) {
	var fold reflect.StructField
	found := false
	for _, f := range jsonFields(t) {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case name == "" || name == "-":
		case name == key:
			return f, true
		case !found && strings.EqualFold(name, key):
			fold, found = f, true
		}
	}
	return fold, found
}

// HostTimed reports whether report.json's value at path (dotted, as
// CheckPath takes it) is, or holds, a figure of the host's wall clock — a
// field tagged host:"wall" (sim.wall_seconds, sim.events_per_second, …) —
// which differs from run to run of the same inputs.
func HostTimed(path string) bool {
	t := reflect.TypeFor[Report]()
	for _, part := range strings.Split(path, ".") {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		switch t.Kind() {
		case reflect.Map, reflect.Slice:
			t = t.Elem()
		case reflect.Struct:
			f, ok := jsonField(t, part)
			if !ok {
				return false
			}
			if f.Tag.Get("host") == "wall" {
				return true
			}
			t = f.Type
		default:
			return false
		}
	}
	return holdsWall(t, map[reflect.Type]bool{})
}

// holdsWall reports whether a value of type t holds a field tagged
// host:"wall" (seen: the types on the way, against cycles).
func holdsWall(t reflect.Type, seen map[reflect.Type]bool) bool {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || seen[t] {
		return false
	}
	seen[t] = true
	for _, f := range jsonFields(t) {
		if f.Tag.Get("host") == "wall" || holdsWall(f.Type, seen) {
			return true
		}
	}
	return false
}

// jsonFields returns the fields of struct type t that carry report keys:
// its tagged fields, and those of the untagged struct fields that stand for
// alternative shapes written in its place (HPLMxPRefinement's Solved and
// Timed, one of which its MarshalJSON writes).
func jsonFields(t reflect.Type) []reflect.StructField {
	var out []reflect.StructField
	for j := range t.NumField() {
		f := t.Field(j)
		ft := f.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if f.Tag.Get("json") == "" && ft.Kind() == reflect.Struct {
			out = append(out, jsonFields(ft)...)
			continue
		}
		out = append(out, f)
	}
	return out
}
