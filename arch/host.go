package arch

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/davinci-sim/davinci-sim/isa"
	"github.com/davinci-sim/davinci-sim/sim"
)

// hostPriority orders the host's wake-ups after the cores' at the same
// instant, so that a kernel finishing at t is seen by a host waiting at t.
const hostPriority = 5

// Host is the host CPU of a hosted run: an event-driven component that works
// through an ordered list of tasks — compute (timed by the machine's host
// rates; an optional Go callback does the real arithmetic), transfers over
// the host–NPU link, kernel launches and waits. A launch is asynchronous:
// the host pays the launch cost and goes on; the kernel starts on its cores
// as soon as every one of them has finished its previous kernel (launch
// order per core, as an accelerator stream) and the kernels it depends on
// have finished. Kernels on disjoint core sets therefore run concurrently,
// and the host's own work overlaps with running kernels.
//
// Tasks are appended with Compute, Transfer, Call, Launch and Wait before
// the run or from a callback during it (for example refinement, whose length
// is only known once it converges).
type Host struct {
	chip  *Chip
	waker *sim.Waker

	tasks []*hostTask
	pc    int
	base  int // tasks dropped from the front of tasks (Forget)
	done  bool
	end   sim.Time

	kernels    []*Kernel
	forget     bool        // drop carried-out tasks and finished kernels (Forget)
	unfinished int         // launched kernels not finished yet
	pending    []*Kernel   // launched, not yet started (launch order)
	queue      [][]*Kernel // per core: launched kernels not yet started, in order
	running    []*Kernel   // per core: the kernel the core runs, or nil

	stage map[string]sim.Time
	// bound sums, by the machine key whose rate bounds them
	// (hostTask.bound), the time of the tasks done: what a run whose
	// tasks together overflow the time range names (overflow).
	bound map[string]sim.Time
	obs   HostObserver // the run's observer, if it watches the host
	// launchedFlops and doneFlops sum the flops (Kernel.Flops) of the
	// kernels launched and finished so far (HostProgress).
	launchedFlops, doneFlops float64
}

type taskKind uint8

const (
	taskCompute taskKind = iota
	taskTransfer
	taskCall
	taskLaunch
	taskWait
	taskAsync
	taskWaitAll
)

// taskKindNames are the kinds as HostObserver names them.
var taskKindNames = [...]string{taskCompute: "compute", taskTransfer: "transfer", taskCall: "call", taskLaunch: "launch", taskWait: "wait", taskAsync: "async", taskWaitAll: "wait"}

type hostTask struct {
	kind    taskKind
	stage   string
	dur     sim.Time
	fn      func() error
	kernels []*Kernel               // launch: one; wait: the awaited ones
	begin   func(done func()) error // async: starts the operation
	ended   bool                    // async: done was called
	started bool
	start   sim.Time
	slow    string // compute, transfer: why dur alone is beyond the time range (the key and its value), "" when it is not
	// bound is the machine key whose rate set dur (compute: the host's
	// memory bandwidth or flops per cycle, whichever bounds it; transfer:
	// the link's bandwidth), "" for the other kinds.
	bound string
}

// Kernel is one launch of per-core instruction streams on a set of AI cores.
type Kernel struct {
	Name  string
	Zone  string // free-form label for reports (e.g. the LU zone)
	Cores []int
	// Launched, Started and Finished are the times the launch task ended
	// (kernel enqueued), the kernel's streams were loaded and its last core
	// finished.
	Launched, Started, Finished sim.Time
	// Flops and GMBytes are informational: the caller's count of the
	// kernel's flops and of the GM bytes it copies (per-zone reports).
	Flops   float64
	GMBytes float64
	// Traffic is the GM traffic the kernel's cores made while it ran on
	// them, measured at both levels (requested; reaching HBM).
	Traffic Traffic
	// OnFinish, if not nil, is called when the kernel's last core finishes
	// (e.g. to read its results back from GM in a functional run).
	OnFinish func()

	stream  func(core int) isa.Stream
	timed   func() (sim.Time, error) // a timed kernel: its duration, asked when it starts
	grid    *isa.Grid                // a kernel grid (GPU kinds): its CTAs go to the chip's block scheduler
	op      func(done func()) error  // an operation outside the chip in stream order (Enqueue): its begin
	outside bool                     // an operation outside the chip (Enqueue), not a kernel
	deps    []*Kernel                // the kernels in after (Launch), kept until it starts to say what it waits for
	// unmet counts the kernels in deps not yet done; dependents are the
	// kernels launched after this one and not started that count it
	// there (ready reads the count: not every dependency's done flag
	// each time the host looks at its pending kernels, a memory miss
	// each among thousands of ranks' kernels).
	dependents []*Kernel
	unmet      int32
	left       int32 // cores not finished (a started kernel)
	enqueued   bool
	started    bool
	done       bool
}

// Done reports whether the kernel has finished.
func (k *Kernel) Done() bool { return k.done }

// NewHost returns the host of chip c. The machine must describe a host.
func (c *Chip) NewHost() (*Host, error) {
	if !c.M.HasHost() {
		return nil, fmt.Errorf("machine %s has no host section (host.cores = 0)", c.M.Name)
	}
	h := &Host{chip: c, queue: make([][]*Kernel, len(c.cores)), running: make([]*Kernel, len(c.cores)),
		stage: map[string]sim.Time{}, bound: map[string]sim.Time{}}
	h.waker = sim.NewWaker(c.eng, hostPriority, h)
	h.obs, _ = c.opts.Observer.(HostObserver)
	return h, nil
}

// AttachHost makes the next Run also run h's task list, from time 0 until it
// and every kernel it launched are finished. Cores named in the Program
// given to Run run first; host kernels wait for them.
func (c *Chip) AttachHost(h *Host) {
	c.host = h
	c.RegisterWaiter(h)
}

// RunHosted runs host h's program on the chip (no other streams).
func (c *Chip) RunHosted(h *Host) (*Stats, error) {
	c.AttachHost(h)
	return c.Run(isa.Program{})
}

// ComputeTime returns the modeled duration of a host computation of flops
// floating-point operations (FP64 when fp64) that moves bytes of host
// memory, on cores host cores (≤ 0: all): max(flops / rate, bytes / bw).
func (h *Host) ComputeTime(flops float64, bytes int64, fp64 bool, cores int) sim.Time {
	d, _, _ := h.computeTime(flops, bytes, fp64, cores)
	return d
}

// computeTime is ComputeTime, the key whose rate bounds the duration and,
// when the duration is beyond the time range, why: that key, its value and
// the work.
func (h *Host) computeTime(flops float64, bytes int64, fp64 bool, cores int) (d sim.Time, bound, slow string) {
	hm := &h.chip.M.Host
	if cores <= 0 || cores > hm.Cores {
		cores = hm.Cores
	}
	per, key := hm.FP32FlopsPerCycle, "host.fp32_flops_per_cycle"
	if fp64 {
		per, key = hm.FP64FlopsPerCycle, "host.fp64_flops_per_cycle"
	}
	rate := float64(cores) * float64(hm.Clock) * per
	fs, ms := flops/rate, float64(bytes)/float64(hm.MemoryBandwidth)
	d = sim.CeilPS(math.Max(fs, ms) * 1e12)
	if ms > fs {
		key = "host.memory_bandwidth"
	}
	if !sim.Saturated(d) {
		return d, key, ""
	}
	if ms > fs {
		return d, key, fmt.Sprintf("%s: too slow: a computation moving %d bytes of host memory", h.keyText(key), bytes)
	}
	return d, key, fmt.Sprintf("%s: too slow: a computation of %.4g flops on %d host cores at %v", h.keyText(key), flops, cores, hm.Clock)
}

// keyText names host key (one a task's time is bound by: hostTask.bound)
// where it was given, with its value.
func (h *Host) keyText(key string) string {
	hm := &h.chip.M.Host
	var v any = "?"
	switch key {
	case "host.memory_bandwidth":
		v = hm.MemoryBandwidth
	case "host.fp32_flops_per_cycle":
		v = hm.FP32FlopsPerCycle
	case "host.fp64_flops_per_cycle":
		v = hm.FP64FlopsPerCycle
	case "host.link.bandwidth":
		v = hm.Link.Bandwidth
	}
	return fmt.Sprintf("%s (%v)", h.chip.keyOrigin(key), v)
}

// TransferTime returns the modeled duration of moving bytes over the link.
func (h *Host) TransferTime(bytes int64) sim.Time {
	l := &h.chip.M.Host.Link
	return sim.CeilPS(float64(l.LatencyNS*1e3) + float64(float64(bytes)/float64(l.Bandwidth)*1e12))
}

// Compute appends a host computation (see ComputeTime); fn, if not nil, runs
// when it completes and may return an error that stops the run.
func (h *Host) Compute(stage string, flops float64, bytes int64, fp64 bool, cores int, fn func() error) {
	d, bound, slow := h.computeTime(flops, bytes, fp64, cores)
	h.tasks = append(h.tasks, &hostTask{kind: taskCompute, stage: stage, dur: d, fn: fn, slow: slow, bound: bound})
}

// Transfer appends a host↔NPU transfer of bytes over the link; fn, if not
// nil, runs when it completes (e.g. to move the real bytes to or from GM).
func (h *Host) Transfer(stage string, bytes int64, fn func() error) {
	t := &hostTask{kind: taskTransfer, stage: stage, dur: h.TransferTime(bytes), fn: fn, bound: "host.link.bandwidth"}
	if sim.Saturated(t.dur) { // the latency is at most 1 s: the bandwidth is too low
		t.slow = fmt.Sprintf("%s: too slow: a transfer of %d bytes over the host link", h.keyText(t.bound), bytes)
	}
	h.tasks = append(h.tasks, t)
}

// Call appends an untimed callback (bookkeeping, or appending more tasks).
func (h *Host) Call(stage string, fn func() error) {
	h.tasks = append(h.tasks, &hostTask{kind: taskCall, stage: stage, fn: fn})
}

// Launch appends a kernel launch on cores: stream(core) gives each core's
// instruction stream, generated when the kernel starts. The kernel starts
// after the kernels in after have finished and its cores are free.
func (h *Host) Launch(name, zone string, cores []int, stream func(core int) isa.Stream, after ...*Kernel) *Kernel {
	lt := &launchTask{k: Kernel{Name: name, Zone: zone, Cores: cores, stream: stream}}
	k := &lt.k
	for _, d := range after {
		if d != nil {
			if k.deps == nil {
				k.deps = make([]*Kernel, 0, len(after))
			}
			k.deps = append(k.deps, d)
			if !d.done {
				d.dependents = append(d.dependents, k)
				k.unmet++
			}
		}
	}
	lt.one[0] = k
	lt.task = hostTask{kind: taskLaunch, stage: "launch", dur: sim.CeilPS(h.chip.M.Host.LaunchNS * 1e3), kernels: lt.one[:]}
	h.tasks = append(h.tasks, &lt.task)
	return k
}

// launchTask is a launch's task and its kernel, allocated together (a
// cluster's hosts launch millions: three allocations each were a sixth of
// the 4096-NPU run's bytes allocated).
type launchTask struct {
	task hostTask
	k    Kernel
	one  [1]*Kernel // task.kernels
}

// LaunchTimed appends the launch of a kernel whose duration is known
// rather than simulated (a cluster's fidelities that time kernels apart):
// it holds cores for dur() from its start, in launch order like any
// kernel; dur is called when the kernel starts and an error stops the run.
func (h *Host) LaunchTimed(name, zone string, cores []int, dur func() (sim.Time, error), after ...*Kernel) *Kernel {
	k := h.Launch(name, zone, cores, nil, after...)
	k.timed = dur
	return k
}

// LaunchGrid appends the launch of a kernel grid (GPU kinds: CTAs
// scheduled onto the SMs/CUs by the chip's block scheduler) in the chip's
// one stream: the kernel holds every core, so it starts after every kernel
// launched before it and the kernels in after have finished, and kernels
// run one after the other (the host's own work overlaps them). The grid's
// launch latency (the kind's core.launch_ns) comes on top of the host's
// launch cost.
func (h *Host) LaunchGrid(name, zone string, g isa.Grid, after ...*Kernel) *Kernel {
	cores := make([]int, len(h.chip.cores))
	for i := range cores {
		cores[i] = i
	}
	k := h.Launch(name, zone, cores, nil, after...)
	k.grid = &g
	return k
}

// Enqueue appends the launch of an operation outside the chip that runs
// in stream order instead of on the host — an HCCL collective, which the
// host enqueues on a stream and returns from: the host goes on after the
// launch cost; the operation starts once the kernels in after have
// finished, calling begin, which must arrange for done to be called (as or
// from an engine event, at the operation's end). It holds no cores;
// kernels launched later may name it in their after lists, and the
// host's waits (Wait, WaitAll) count it as a kernel. An error from begin
// stops the run.
func (h *Host) Enqueue(name, zone string, begin func(done func()) error, after ...*Kernel) *Kernel {
	k := h.Launch(name, zone, nil, nil, after...)
	k.op, k.outside = begin, true
	return k
}

// Wait appends a wait until every kernel in ks has finished (nil entries
// are ignored).
func (h *Host) Wait(stage string, ks ...*Kernel) {
	var list []*Kernel
	for _, k := range ks {
		if k != nil {
			list = append(list, k)
		}
	}
	h.tasks = append(h.tasks, &hostTask{kind: taskWait, stage: stage, kernels: list})
}

// Async appends a task that starts an operation outside the chip — a
// message over a network another component models, a collective among
// several chips' hosts — and waits for it: begin is called when the host
// reaches the task and must arrange for done to be called (as or from an
// engine event, at the operation's end); the host then goes on. An error
// from begin stops the run.
func (h *Host) Async(stage string, begin func(done func()) error) {
	h.tasks = append(h.tasks, &hostTask{kind: taskAsync, stage: stage, begin: begin})
}

// WaitAll appends a wait until every kernel launched before it has
// finished.
func (h *Host) WaitAll(stage string) {
	h.tasks = append(h.tasks, &hostTask{kind: taskWaitAll, stage: stage})
}

// Forget makes the host drop the tasks it has carried out and not keep the
// kernels it launched (Kernels returns none; a kernel's OnFinish is the
// place to record it): for programs too long to hold in memory at once —
// hundreds of hosts appending their tasks window by window from Call
// callbacks. Times and events are unchanged.
func (h *Host) Forget() { h.forget = true }

// Kernels returns every kernel launched so far, in launch order (none
// after Forget).
func (h *Host) Kernels() []*Kernel { return h.kernels }

// StageTimes returns the host time spent per stage label (waits included
// under their own labels).
func (h *Host) StageTimes() map[string]sim.Time { return h.stage }

// Finish returns when the host finished its last task.
func (h *Host) Finish() sim.Time { return h.end }

// start wakes the host at the beginning of a run.
func (h *Host) begin(now sim.Time) { h.waker.Wake(now) }

// HostProgress returns how many of the attached host program's tasks have
// been carried out and how many it has so far (tasks appended during the
// run count from then on); ok is false without a host program.
func (c *Chip) HostProgress() (done, total int, ok bool) {
	if c.host == nil {
		return 0, 0, false
	}
	return c.host.base + c.host.pc, c.host.base + len(c.host.tasks), true
}

// HostFlops returns the flops (Kernel.Flops, as the program counts them)
// of the host program's kernels finished so far and of all it launches,
// those whose launch tasks are still ahead included (0, 0 without a host
// program or without counts): the share of its work done, where the
// tasks differ in size (an LU's trailing updates shrink as it goes).
func (c *Chip) HostFlops() (done, total float64) {
	h := c.host
	if h == nil {
		return 0, 0
	}
	total = h.launchedFlops
	for _, t := range h.tasks[h.pc:] {
		if t.kind == taskLaunch {
			total += t.kernels[0].Flops
		}
	}
	return h.doneFlops, total
}

// forgetSlack is the carried-out tasks a forgetful host may still hold
// below half its list: a few, not a window's worth — thousands of ranks
// each holding a thousand carried-out tasks and their kernels took
// 1.2 GB of a 4096-NPU run (the live heap grew with the run; now it is
// the tasks ahead of each host).
const forgetSlack = 64

// compact drops the carried-out tasks once they are at least half the
// list and at least forgetSlack (copying the rest: at most as many tasks
// as it drops, so a task is copied once on average).
func (h *Host) compact() {
	if !h.forget || h.pc < forgetSlack || 2*h.pc < len(h.tasks) {
		return
	}
	n := copy(h.tasks, h.tasks[h.pc:])
	clear(h.tasks[n:])
	h.tasks = h.tasks[:n]
	h.base += h.pc
	h.pc = 0
}

// Handle implements sim.Handler: the host's wake-up.
func (h *Host) Handle(now sim.Time, _ int64) { h.step(now) }

// step runs host tasks until one blocks.
func (h *Host) step(now sim.Time) {
	c := h.chip
	for h.pc < len(h.tasks) && c.failed == nil {
		h.compact()
		t := h.tasks[h.pc]
		if !t.started {
			t.started, t.start = true, now
		}
		if t.kind == taskAsync {
			if t.begin != nil {
				begin := t.begin
				t.begin = nil
				if err := begin(func() { t.ended = true; h.waker.Wake(h.chip.eng.Now()) }); err != nil {
					c.Fail(fmt.Errorf("host task %d (%s): %w", h.base+h.pc, t.stage, err))
					return
				}
			}
			if !t.ended {
				return // woken by done
			}
			h.stage[t.stage] += now - t.start
			h.observe(t, now)
			h.pc++
			continue
		}
		if t.kind == taskWait || t.kind == taskWaitAll {
			if t.kind == taskWaitAll && h.unfinished > 0 {
				return // woken by kernel completion
			}
			for _, k := range t.kernels {
				if !k.done {
					return // woken by kernel completion
				}
			}
			h.stage[t.stage] += now - t.start
			h.observe(t, now)
			h.pc++
			continue
		}
		end := sim.Add(t.start, t.dur)
		if sim.Saturated(end) {
			c.Fail(h.overflow(t))
			return
		}
		if now < end {
			h.waker.Wake(end)
			return
		}
		h.stage[t.stage] += t.dur
		if t.bound != "" {
			h.bound[t.bound] += t.dur
		}
		h.observe(t, t.start+t.dur)
		if t.kind == taskLaunch {
			k := t.kernels[0]
			k.Launched, k.enqueued = now, true
			h.unfinished++
			h.launchedFlops += k.Flops
			if !h.forget {
				h.kernels = append(h.kernels, k)
			}
			h.pending = append(h.pending, k)
			for _, core := range k.Cores {
				h.queue[core] = append(h.queue[core], k)
			}
			h.tryStart(now)
		}
		h.pc++
		if t.fn != nil {
			if err := t.fn(); err != nil {
				c.Fail(fmt.Errorf("host task %d (%s): %w", h.base+h.pc-1, t.stage, err))
				return
			}
		}
	}
	if h.pc == len(h.tasks) && !h.done {
		h.done, h.end = true, now
	}
}

// overflow is the error of task t (the current one) ending beyond the
// simulated time range: one too slow by itself names the key that makes it
// so; else the tasks before it took the time, and the task is named with
// its start and length — and, where the tasks one machine key's rate
// bounds (t among them) took most of that time, the key, with the time
// they took.
func (h *Host) overflow(t *hostTask) error {
	if t.slow != "" {
		return fmt.Errorf("%s (host task %d, %s) would end beyond the time a run can reach: %w", t.slow, h.base+h.pc, t.stage, sim.ErrTimeOverflow)
	}
	name := taskKindNames[t.kind]
	if t.kind == taskLaunch {
		name += " of kernel " + strconv.Quote(t.kernels[0].Name)
	}
	task := fmt.Sprintf("host task %d (%s, %s): starting at %v of simulated time and lasting %v, it would end beyond the time a run can reach (the host's tasks together take too long)",
		h.base+h.pc, t.stage, name, t.start, t.dur)
	// (In seconds: the sum with t's may not fit a sim.Time.)
	key, most := "", 0.0
	for _, k := range slices.Sorted(maps.Keys(h.bound)) {
		if d := h.bound[k].Seconds(); d > most {
			key, most = k, d
		}
	}
	if d := h.bound[t.bound].Seconds() + t.dur.Seconds(); t.bound != "" && d > most {
		key, most = t.bound, d
	}
	if end := t.start.Seconds() + t.dur.Seconds(); key != "" && most > end/2 {
		return fmt.Errorf("%s: too slow: the host tasks its rate bounds take %.4g s of the %.4g s to the end of %s: %w",
			h.keyText(key), most, end, task, sim.ErrTimeOverflow)
	}
	return fmt.Errorf("%s: %w", task, sim.ErrTimeOverflow)
}

// observe reports task t, ended at end, to the observer (tasks that took
// no time are not reported).
func (h *Host) observe(t *hostTask, end sim.Time) {
	if h.obs == nil || end <= t.start {
		return
	}
	name := t.stage
	if t.kind == taskLaunch {
		name += " " + t.kernels[0].Name
	}
	h.obs.HostTask(taskKindNames[t.kind], name, t.start, end)
}

// tryStart starts every pending kernel whose dependencies are done and whose
// cores are free and have it next in launch order.
//
// Starting a kernel makes no kernel before it in pending ready (it takes
// cores, and one launched earlier on a core it uses is ahead of it there),
// so the scan goes on after it: the kernels start in the order rescanning
// from the first after every start gives. A kernel that finishes as it
// starts (on no cores, or an operation done at once) runs a nested
// tryStart, which starts every kernel then ready; what the scan meets
// after it is not. (A kernel made ready by another host's kernel is seen
// at this host's next look: only the host's own kernels' ends and
// launches make it look.)
func (h *Host) tryStart(now sim.Time) {
	for i := 0; i < len(h.pending); {
		k := h.pending[i]
		if !h.ready(k) {
			i++
			continue
		}
		h.pending = append(h.pending[:i], h.pending[i+1:]...)
		h.startKernel(k, now)
	}
}

func (h *Host) ready(k *Kernel) bool {
	if k.unmet > 0 {
		return false
	}
	for _, core := range k.Cores {
		if h.running[core] != nil || len(h.queue[core]) == 0 || h.queue[core][0] != k {
			return false
		}
	}
	return true
}

func (h *Host) startKernel(k *Kernel, now sim.Time) {
	k.started, k.Started = true, now
	k.deps = nil // met: a long program must not keep a chain of every earlier kernel reachable
	k.left = int32(len(k.Cores))
	if k.op != nil {
		begin := k.op
		k.op = nil
		if err := begin(func() { h.kernelDone(k, h.chip.eng.Now()) }); err != nil {
			h.chip.Fail(fmt.Errorf("operation %q: %w", k.Name, err))
		}
		return
	}
	if k.left == 0 {
		h.kernelDone(k, now)
		return
	}
	for _, core := range k.Cores {
		h.queue[core] = h.queue[core][1:]
		h.running[core] = k
	}
	if k.timed == nil && k.grid == nil && h.chip.hostOnly {
		h.chip.Fail(fmt.Errorf("kernel %q: a chip without core models (NewHostChip) runs only timed kernels", k.Name))
		return
	}
	if k.timed != nil {
		d, err := k.timed()
		if err != nil {
			h.chip.Fail(fmt.Errorf("kernel %q: %w", k.Name, err))
			return
		}
		end := sim.Add(now, d)
		if sim.Saturated(end) {
			h.chip.Fail(fmt.Errorf("kernel %q: starting at %v of simulated time and lasting %v, it would end beyond the time a run can reach: %w", k.Name, now, d, sim.ErrTimeOverflow))
			return
		}
		h.chip.eng.At(end, hostPriority-1, sim.HandlerFunc(func(t sim.Time, _ int64) {
			for _, core := range k.Cores {
				h.running[core] = nil
			}
			h.kernelDone(k, t)
		}), 0)
		return
	}
	if k.grid != nil {
		err := h.chip.hostGrid(*k.grid, now, func(end sim.Time) {
			for _, core := range k.Cores {
				h.running[core] = nil
			}
			h.kernelDone(k, end)
		})
		if err != nil {
			h.chip.Fail(fmt.Errorf("kernel %q: %w", k.Name, err))
		}
		return
	}
	for _, core := range k.Cores {
		h.chip.cores[core].Load(k.stream(core))
	}
}

// coreDone is called when core has finished its stream.
func (h *Host) coreDone(core int, now sim.Time) {
	k := h.running[core]
	if k == nil {
		return
	}
	h.running[core] = nil
	k.left--
	if k.left == 0 {
		h.kernelDone(k, now)
	}
}

func (h *Host) kernelDone(k *Kernel, now sim.Time) {
	k.done, k.Finished = true, now
	for _, w := range k.dependents {
		w.unmet--
	}
	k.dependents = nil
	h.unfinished--
	h.doneFlops += k.Flops
	if k.OnFinish != nil {
		k.OnFinish()
	}
	h.tryStart(now)
	h.waker.Wake(now)
}

// Blocked implements sim.Waiter: an unfinished host names its task and the
// kernels it waits for, with why each has not started or finished.
func (h *Host) Blocked() (bool, string) {
	if h.done || h.pc >= len(h.tasks) {
		return false, ""
	}
	t, at := h.tasks[h.pc], h.base+h.pc
	if t.kind == taskAsync {
		return true, fmt.Sprintf("host: task %d (%s) waits for an operation outside the chip", at, t.stage)
	}
	if t.kind == taskWaitAll {
		return true, fmt.Sprintf("host: task %d waits (%s) for its %d unfinished kernels", at, t.stage, h.unfinished)
	}
	if t.kind != taskWait {
		return true, fmt.Sprintf("host: task %d (%s) not finished", at, t.stage)
	}
	var why []string
	for _, k := range t.kernels {
		if k.done {
			continue
		}
		why = append(why, h.describe(k))
	}
	return true, fmt.Sprintf("host: task %d waits (%s) for %s", at, t.stage, strings.Join(why, "; "))
}

func (h *Host) describe(k *Kernel) string {
	what := "kernel"
	if k.outside {
		what = "operation" // (Enqueue: outside the chip)
	}
	switch {
	case k.started && k.outside:
		return fmt.Sprintf("operation %q outside the chip not finished", k.Name)
	case k.started:
		var busy []string
		for _, core := range k.Cores {
			if h.running[core] == k {
				busy = append(busy, fmt.Sprint(core))
			}
		}
		return fmt.Sprintf("kernel %q running, cores %s not finished", k.Name, strings.Join(busy, ","))
	case !k.enqueued:
		return fmt.Sprintf("%s %q never launched", what, k.Name)
	}
	for _, d := range k.deps {
		if !d.done {
			dep := "kernel"
			if d.outside {
				dep = "operation"
			}
			return fmt.Sprintf("%s %q waits for %s %q", what, k.Name, dep, d.Name)
		}
	}
	for _, core := range k.Cores {
		if r := h.running[core]; r != nil {
			return fmt.Sprintf("kernel %q waits for core %d (running %q)", k.Name, core, r.Name)
		}
		if len(h.queue[core]) > 0 && h.queue[core][0] != k {
			return fmt.Sprintf("kernel %q queued on core %d behind %q", k.Name, core, h.queue[core][0].Name)
		}
	}
	return fmt.Sprintf("%s %q not started", what, k.Name)
}
