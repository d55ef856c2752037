package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/davinci-sim/davinci-sim/cluster"
	"github.com/davinci-sim/davinci-sim/machines"
	"github.com/davinci-sim/davinci-sim/programs"
)

// hostileCase is one hostile input: the command line (with @DIR@ standing
// for a scratch directory holding files), the files to create there, and
// what must come out.
type hostileCase struct {
	name  string
	files map[string]string // name in the scratch directory → content (@DIR@ replaced too)
	args  []string
	code  int    // wanted exit code (0 means 2)
	want  string // the error (one line) must contain this
}

// maxHostileMsg bounds the length of a hostile input's error line.
const maxHostileMsg = 1000

// hostileCases are inputs a hostile (or careless) user gives: each must end
// quickly with exit code 2 and one clear line — never a hang, a crash, an
// out-of-memory or a silently wrong result (issue 18).
var hostileCases = []hostileCase{
	{name: "no program file", args: []string{"run"},
		want: "run: accepts 1 arg(s), received 0 (usage: davinci-sim run PROGRAM.yaml [flags])"},
	{name: "merge without shards", args: []string{"sweep", "merge", "s.yaml", "-o", "@DIR@/out"},
		want: "sweep merge: requires at least 2 arg(s), only received 1 (usage: davinci-sim sweep merge STUDY.yaml -o DIR SHARD_DIR... [flags])"},
	{name: "a cluster's key set as the NPU's", args: []string{"run", absExample("lu-cluster-small.yaml"), "-q", "--set", "machine.nodes=2"},
		want: `--set machine.nodes=2: unknown key "machine.nodes": the top level has no key "nodes" (did you mean "cores"?); on a cluster or node description machine.* sets each NPU (ascend-910a), node.* the node (cloudbrain2-node), cluster.* the cluster`},
	// cobra's help command printed "Unknown help topic" and the usage, exit 0.
	{name: "help for no command", args: []string{"help", "bogus"},
		want: `help: no command "bogus" (one of: completion, formats, machines, programs, run, sweep, validate, version, view)`},
	{name: "help for no subcommand", args: []string{"help", "sweep", "plt"},
		want: `help: davinci-sim sweep has no subcommand "plt" (one of: merge, plot)`},
	{name: "a sweep subcommand mistyped", args: []string{"sweep", "plt", "s.yaml", "-o", "@DIR@/out"},
		want: "sweep: accepts 1 arg(s), received 2 (did you mean sweep plot?) (usage: davinci-sim sweep STUDY.yaml -o DIR [flags])"},
	// (It was prefixed with the program file, though --fidelity set it.)
	{name: "an NPU's trace at fidelity sampled", args: []string{"run", absExample("lu-cluster-small.yaml"), "-q", "--fidelity", "sampled", "--trace", "@DIR@/c.json", "--trace-npu", "1"},
		want: "--trace-npu: the per-core trace of an NPU needs fidelity full (--fidelity full): at fidelity sampled the NPUs have no core models"},
	{name: "validate without a check", args: []string{"validate"},
		want: "validate: name a check: numerics (davinci-sim validate --help)"},
	{name: "completion for an unknown shell", args: []string{"completion", "bogus"},
		want: `completion: unknown subcommand "bogus" (one of: bash, fish, powershell, zsh)`},
	{name: "an example's name without its folder", args: []string{"run", "hgemm.yaml"},
		want: "program file: open hgemm.yaml: no such file or directory (the built-in example of that name is programs/examples/hgemm.yaml)"},
	{name: "a program file that is not there", args: []string{"run", "@DIR@/nope.yaml"},
		want: "program file: open @DIR@/nope.yaml: no such file or directory (davinci-sim programs lists the program kinds and their built-in examples)"},
	{name: "a machine file given as the program", files: map[string]string{"a100.yaml": machineSource("a100")},
		args: []string{"run", "@DIR@/a100.yaml"},
		want: "@DIR@/a100.yaml: a machine file (kind nvidia-sm), not a program: give it with -m @DIR@/a100.yaml, and a program file"},
	{name: "a node description given as the program", files: map[string]string{"node.yaml": nodeSource()},
		args: []string{"run", "@DIR@/node.yaml"},
		want: "@DIR@/node.yaml: a node description, not a program: give it with -m @DIR@/node.yaml"},
	{name: "an input file set with --set that is not there", args: []string{"run", absExample("hgemm.yaml"), "-q", "--set", "program.inputs.a=/nonexistent/a.npy", "--set", "program.inputs.b=/nonexistent/b.npy"},
		want: `hgemm.yaml: key "inputs.a": open /nonexistent/a.npy: no such file or directory (set with --set program.inputs.a=/nonexistent/a.npy)`},
	{name: "a tile set with --set that does not fit", args: []string{"run", absExample("hgemm.yaml"), "-q", "--set", "program.tiling.bm=4096"},
		want: `hgemm.yaml: key "tiling": bm·bk = 4096·64 fp16, 524288 bytes, exceeds L0A (65536 bytes; SGEMM-cube Eq. 12) (set with --set program.tiling.bm=4096)`},
	{name: "a scheme set with --set whose pieces the machine lacks", args: []string{"run", absExample("a100-emulated-gemm.yaml"), "-q", "--numerics", "off", "-m", "v100", "--set", "program.scheme=ape-fp32t"},
		want: `key "scheme.pieces[0].format": tf32 pieces need TF32 tensor cores; machine v100 (nvidia-sm) has none (set with --set program.scheme=ape-fp32t; the constraint from the run's machine v100, not the file's)`},
	{name: "an unknown key in an inline scheme", args: []string{"run", absExample("a100-emulated-gemm.yaml"), "-q", "--numerics", "off", "--set", "program.scheme={name: markidis, foo: 1}"},
		want: `unknown key "scheme.foo": "scheme" has no key "foo" (it has: name, pieces, groups, kernels, epilogue, split)`},
	{name: "an integer flag given a word", args: []string{"run", "p.yaml", "--seed", "abc"},
		want: `--seed "abc": must be an integer`},
	{name: "an integer flag out of range", args: []string{"run", "p.yaml", "--seed", "99999999999999999999999"},
		want: `--seed "99999999999999999999999": out of range`},
	{name: "a number flag given a word", args: []string{"run", "p.yaml", "--fast-forward-tolerance", "abc"},
		want: `--fast-forward-tolerance "abc": must be a number`},
	{name: "trace of a one-chip run whose file asks fidelity isolated",
		files: map[string]string{"lu.yaml": "kind: lu-fused\nn: 1024\nnb: 128\nnumerics: off\nfidelity: isolated\n"},
		args:  []string{"run", "@DIR@/lu.yaml", "--trace", "@DIR@/t.pftrace"},
		want:  `--trace and --view: not with fidelity isolated on one chip`},
	{name: "program kind changed on a cluster run",
		args: []string{"run", examplePath("lu-cluster-small.yaml"), "--numerics", "off", "--set", "program.kind=hgemm"},
		want: `--set program.kind=hgemm: the program kind is the file's (lu-fused)`},
	{name: "a 3000-byte accumulation",
		args: []string{"run", examplePath("hgemm.yaml"), "--set", "program.accumulation=" + strings.Repeat("x", 3000)},
		want: `key "accumulation": must be termwise or elementwise`},
	{name: "a 3000-byte machine kind",
		args: []string{"run", examplePath("hgemm.yaml"), "--set", "machine.kind=" + strings.Repeat("x", 3000)},
		want: `unknown machine kind`},
	{name: "a 3000-byte program kind",
		args: []string{"run", examplePath("hgemm.yaml"), "--set", "program.kind=" + strings.Repeat("x", 3000)},
		want: `the program kind is the file's (hgemm)`},
	{name: "a 3000-byte unknown key",
		args: []string{"run", examplePath("hgemm.yaml"), "--set", "program." + strings.Repeat("x", 3000) + "=1"},
		want: `unknown key`},
	{name: "several unknown keys in a program file",
		files: map[string]string{"p.yaml": "kind: hgemm\nm: 256\nn: 256\nk: 256\nmm: 1\nnn: 2\ntiling: {bmm: 1}\n"},
		args:  []string{"run", "@DIR@/p.yaml", "--numerics", "off"},
		want:  `p.yaml: 3 unknown keys: line 5: "mm": the top level has no key "mm" (did you mean "m"?); line 6: "nn"`},
	{name: "a 3000-digit --set value",
		args: []string{"run", examplePath("hgemm.yaml"), "--set", "program.m=" + strings.Repeat("9", 3000)},
		want: `key "program.m": want an integer, got "999`},
	// Machine values that would take a run's time past the int64
	// picosecond range are refused up front naming the key (they stopped
	// the run deep inside, naming an instruction or no key at all).
	{name: "tiny path bandwidth",
		args: []string{"run", examplePath("gm-bandwidth-1core.yaml"), "--set", "machine.core.paths.GM_L1.bytes_per_cycle=1e-9"},
		want: `--set machine.core.paths.GM_L1.bytes_per_cycle=1e-9: key "core.paths.GM_L1.bytes_per_cycle": must be ≥ 1: a path moves at least a byte a cycle (got 1e-09)`},
	{name: "huge GM latency",
		args: []string{"run", examplePath("gm-bandwidth-1core.yaml"), "--set", "machine.gm.latency_cycles=10000000000000000"},
		want: `--set machine.gm.latency_cycles=10000000000000000: key "gm.latency_cycles": must be in 0..1e+06 cycles (got 1e+16)`},
	{name: "huge GM latency on an SM",
		args: []string{"run", examplePath("a100-hgemm.yaml"), "--set", "machine.gm.latency_cycles=10000000000000000"},
		want: `--set machine.gm.latency_cycles=10000000000000000: key "gm.latency_cycles": must be in 0..1e+06 cycles (got 1e+16)`},
	{name: "tiny global-load bandwidth on a CU",
		args: []string{"run", examplePath("mi210-hgemm.yaml"), "--numerics", "off", "--set", "machine.core.paths.GM_VGPR.bytes_per_cycle=1e-12"},
		want: `--set machine.core.paths.GM_VGPR.bytes_per_cycle=1e-12: key "core.paths.GM_VGPR.bytes_per_cycle": must be ≥ 1: a path moves at least a byte a cycle (got 1e-12)`},
	{name: "a clock of 1e-6 Hz (v.cast overflowed the time)",
		args: []string{"run", examplePath("hgemm.yaml"), "--numerics", "off", "--set", "machine.core.clock=1e-6Hz"},
		want: `--set machine.core.clock=1e-6Hz: key "core.clock": must be in [1MHz, 1THz] (a cycle of 1 ps to 1 µs; got 1e-06Hz)`},
	{name: "a clock of 1e-6 Hz on an SM",
		args: []string{"run", examplePath("a100-hgemm.yaml"), "--numerics", "off", "--set", "machine.core.clock=1e-6Hz"},
		want: `--set machine.core.clock=1e-6Hz: key "core.clock": must be in [1MHz, 1THz] (a cycle of 1 ps to 1 µs; got 1e-06Hz)`},
	{name: "a clock of 1e-6 Hz on a CU",
		args: []string{"run", examplePath("mi210-hgemm.yaml"), "--numerics", "off", "--set", "machine.core.clock=1e-6Hz"},
		want: `--set machine.core.clock=1e-6Hz: key "core.clock": must be in [1MHz, 1THz] (a cycle of 1 ps to 1 µs; got 1e-06Hz)`},
	{name: "a sustained tensor clock of 1e-6 Hz",
		args: []string{"run", examplePath("a100-hgemm.yaml"), "--numerics", "off", "--set", "machine.core.tensor.sustained_clock.fp16=1e-6Hz"},
		want: `--set machine.core.tensor.sustained_clock.fp16=1e-6Hz: key "core.tensor.sustained_clock.fp16": must be ≥ 1MHz: the clock the SM sustains under FP16 tensor load (got 1e-06Hz)`},
	{name: "a tensor rate of 1e-12 per cycle",
		args: []string{"run", examplePath("a100-hgemm.yaml"), "--numerics", "off", "--set", "machine.core.tensor.flops_per_cycle.fp16=1e-12"},
		want: `--set machine.core.tensor.flops_per_cycle.fp16=1e-12: key "core.tensor.flops_per_cycle.fp16": must be 0 (unsupported) or in 1..1e+09 (got 1e-12)`},
	{name: "a tensor efficiency of 1e-300",
		args: []string{"run", examplePath("a100-hgemm.yaml"), "-m", "h100-sxm", "--numerics", "off", "--set", "machine.core.tensor.efficiency=1e-300"},
		want: `--set machine.core.tensor.efficiency=1e-300: key "core.tensor.efficiency": must be in [0.01, 1] (got 1e-300)`},
	{name: "a shared-memory load path of 1e-12 B per cycle",
		args: []string{"run", examplePath("a100-hgemm.yaml"), "--numerics", "off", "--set", "machine.core.paths.SMEM_RF.bytes_per_cycle=1e-12"},
		want: `--set machine.core.paths.SMEM_RF.bytes_per_cycle=1e-12: key "core.paths.SMEM_RF.bytes_per_cycle": must be ≥ 1: a path moves at least a byte a cycle (got 1e-12)`},
	{name: "an LDS load path of 1e-12 B per cycle",
		args: []string{"run", examplePath("mi210-hgemm.yaml"), "--numerics", "off", "--set", "machine.core.paths.LDS_VGPR.bytes_per_cycle=1e-12"},
		want: `--set machine.core.paths.LDS_VGPR.bytes_per_cycle=1e-12: key "core.paths.LDS_VGPR.bytes_per_cycle": must be ≥ 1: a path moves at least a byte a cycle (got 1e-12)`},
	{name: "a VALU of 1e-300 flops per cycle",
		args: []string{"run", examplePath("mi210-hgemm.yaml"), "--numerics", "off", "--set", "machine.core.valu.fp32_flops_per_cycle=1e-300"},
		want: `--set machine.core.valu.fp32_flops_per_cycle=1e-300: key "core.valu.fp32_flops_per_cycle": must be in 1..1e+09 (got 1e-300)`},
	{name: "CUDA cores of 1e-300 flops per cycle",
		args: []string{"run", examplePath("a100-hgemm.yaml"), "--numerics", "off", "--set", "machine.core.cuda_cores.fp32_flops_per_cycle=1e-300"},
		want: `--set machine.core.cuda_cores.fp32_flops_per_cycle=1e-300: key "core.cuda_cores.fp32_flops_per_cycle": must be in 1..1e+09 (got 1e-300)`},
	{name: "a host clock of 1e-300 Hz",
		args: []string{"run", examplePath("lu-fused-small.yaml"), "--numerics", "off", "--set", "machine.host.clock=1e-300"},
		want: `--set machine.host.clock=1e-300: key "host.clock": must be in [1MHz, 1THz] (a cycle of 1 ps to 1 µs; got 1e-300Hz)`},
	// A host task too slow by itself names the key (the engine's message
	// named none).
	{name: "a host link at 1e-300 B/s",
		args: []string{"run", examplePath("lu-fused-small.yaml"), "--numerics", "off", "--set", "machine.host.link.bandwidth=1e-300"},
		want: `--set machine.host.link.bandwidth=1e-300: key "host.link.bandwidth" (1e-300B/s): too slow: a transfer of 65536 bytes over the host link (host task 2, d2h) would end beyond the time a run can reach: simulated time exceeds the int64 picosecond range (about 106 days)`},
	{name: "host memory at 1e-300 B/s",
		args: []string{"run", examplePath("lu-fused-small.yaml"), "--numerics", "off", "--set", "machine.host.memory_bandwidth=1e-300"},
		want: `--set machine.host.memory_bandwidth=1e-300: key "host.memory_bandwidth" (1e-300B/s): too slow: a computation moving 196608 bytes of host memory (host task 3, diag) would end beyond the time a run can reach: simulated time exceeds the int64 picosecond range (about 106 days)`},
	// Host tasks fast enough each but too slow together name the key
	// whose tasks took most of the time (a fuzzing campaign found the
	// message naming none), on one chip and on a cluster's ranks (their
	// node's hosts' key).
	{name: "host memory at 1 B/s",
		args: []string{"run", examplePath("lu-fused-small.yaml"), "--numerics", "off", "--set", "machine.host.memory_bandwidth=1B/s"},
		want: `--set machine.host.memory_bandwidth=1B/s: key "host.memory_bandwidth" (1B/s): too slow: the host tasks its rate bounds take 9.83e+06 s of the 9.83e+06 s to the end of host task 72 (refine, compute): `},
	{name: "a cluster's host memory at 0.5 B/s",
		args: []string{"run", examplePath("lu-cluster-small.yaml"), "--numerics", "off", "--set", "node.hosts.memory_bandwidth=0.5B/s"},
		want: `--set node.hosts.memory_bandwidth=0.5B/s: key "hosts.memory_bandwidth" (0.25B/s): too slow: the host tasks its rate bounds take `},
	// Ranks whose kernels are timed apart (host-only chips) name it too.
	{name: "a cluster's host memory at 0.5 B/s, kernels timed apart",
		args: []string{"run", examplePath("lu-cluster-small.yaml"), "--numerics", "off", "--fidelity", "isolated", "--set", "node.hosts.memory_bandwidth=0.5B/s"},
		want: `--set node.hosts.memory_bandwidth=0.5B/s: key "hosts.memory_bandwidth" (0.25B/s): too slow: the host tasks its rate bounds take `},
	{name: "a cluster's host memory at 0.5 B/s, sampled",
		args: []string{"run", examplePath("lu-cluster-small.yaml"), "--numerics", "off", "--fidelity", "sampled", "--set", "node.hosts.memory_bandwidth=0.5B/s"},
		want: `--set node.hosts.memory_bandwidth=0.5B/s: key "hosts.memory_bandwidth" (0.25B/s): too slow: the host tasks its rate bounds take `},
	// A chip's shared bandwidths name their key (the engine's message
	// names none) and the --set that gave it.
	{name: "tiny GM bandwidth",
		args: []string{"run", examplePath("hgemm.yaml"), "--numerics", "off", "--set", "machine.gm.bandwidth=1e-30"},
		want: `--set machine.gm.bandwidth=1e-30: key "gm.bandwidth" (1e-30B/s): too slow: a transfer over it would end beyond the time a run can reach`},
	{name: "tiny L2 bandwidth",
		args: []string{"run", examplePath("sgemm-cube.yaml"), "--numerics", "off", "--set", "machine.l2.bandwidth=1e-30"},
		want: `--set machine.l2.bandwidth=1e-30: key "l2.bandwidth" (1e-30B/s): too slow: `},
	{name: "tiny GM bandwidth on an SM",
		args: []string{"run", examplePath("a100-hgemm.yaml"), "--numerics", "off", "--set", "machine.gm.bandwidth=1e-300"},
		want: `--set machine.gm.bandwidth=1e-300: key "gm.bandwidth" (1e-300B/s): too slow: `},
	{name: "tiny GM bandwidth, kernels timed apart",
		args: []string{"run", examplePath("lu-fused-small.yaml"), "--numerics", "off", "--fidelity", "isolated", "--set", "machine.gm.bandwidth=1e-30"},
		want: `kernel "cvt0": --set machine.gm.bandwidth=1e-30: key "gm.bandwidth" (1e-30B/s): too slow: `},
	{name: "tiny Infinity Cache bandwidth",
		args: []string{"run", examplePath("mi210-hgemm.yaml"), "-m", "mi300x", "--numerics", "off", "--set", "machine.llc.bandwidth=1e-30"},
		want: `--set machine.llc.bandwidth=1e-30: key "llc.bandwidth" (1e-30B/s): too slow: `},
	{name: "a 4 TiB Infinity Cache",
		args: []string{"run", examplePath("mi210-hgemm.yaml"), "-m", "mi300x", "--numerics", "off", "--set", "machine.llc.capacity=4TiB"},
		want: `L2 and LLC directories`},
	{name: "MFMA a CDNA2 CU lacks",
		args: []string{"run", examplePath("mi210-hgemm.yaml"), "--set", "machine.core.mfma.instructions.fp8=v_mfma_f32_32x32x16_fp8_fp8"},
		want: "cdna2 has no FP8 MFMA"},
	{name: "trace timestamp beyond the time range",
		files: map[string]string{"t.json": `{"traceEvents":[{"ph":"X","pid":1,"tid":1,"name":"a","ts":1e300,"dur":1}]}`},
		args:  []string{"view", "@DIR@/t.json"},
		want:  "time 1e300 µs is out of range"},
	{name: "huge scalar cycles",
		files: map[string]string{"p.yaml": "kind: asm\ncores: 1\nnumerics: off\nasm: |\n  scalar cycles=10000000000000000\n"},
		args:  []string{"run", "@DIR@/p.yaml"},
		want:  "@DIR@/p.yaml (asm): core 0 line 1: scalar cycles=10000000000000000: simulated time exceeds"}, // (the file named, as every other refusal)
	{name: "scalar cycles up to the limit, then more",
		files: map[string]string{"p.yaml": "kind: asm\ncores: 1\nnumerics: off\nasm: |\n  scalar cycles=9223372036854775\n  scalar cycles=1000\n"},
		args:  []string{"run", "@DIR@/p.yaml"},
		want:  "line 2: scalar cycles=1000: simulated time exceeds"},
	{name: "huge vector startup",
		args: []string{"run", examplePath("hgemm.yaml"), "--numerics", "off", "--set", "machine.core.vector.startup_cycles=9000000000000000000"},
		want: `--set machine.core.vector.startup_cycles=9000000000000000000: key "core.vector.startup_cycles": must be in 0..1e+06 cycles (got 9e+18)`},
	{name: "tiny vector rate",
		args: []string{"run", examplePath("hgemm.yaml"), "--numerics", "off", "--set", "machine.core.vector.cycles_per_repeat=1e300"},
		want: `--set machine.core.vector.cycles_per_repeat=1e300: key "core.vector.cycles_per_repeat": must be in [0.015625, 1e+06] cycles (got 1e+300)`},
	{name: "huge cube startup",
		args: []string{"run", examplePath("cube-peak.yaml"), "--set", "machine.core.cube.startup_cycles=9000000000000000000"},
		want: `--set machine.core.cube.startup_cycles=9000000000000000000: key "core.cube.startup_cycles": must be in 0..1e+06 cycles (got 9e+18)`},
	{name: "huge issue cost",
		args: []string{"run", examplePath("cube-peak.yaml"), "--set", "machine.core.scalar.issue_cycles=9000000000000000000"},
		want: `--set machine.core.scalar.issue_cycles=9000000000000000000: key "core.scalar.issue_cycles": must be in 0..1e+06 cycles (got 9e+18)`},
	{name: "tiny GM bandwidth",
		args: []string{"run", examplePath("gm-bandwidth.yaml"), "--set", "machine.gm.bandwidth=1e-30"},
		want: "simulated time exceeds"},

	// Memory: sizes checked before anything is allocated.
	{name: "a hundred million cores",
		args: []string{"run", examplePath("cube-peak.yaml"), "--set", "machine.cores=100000000"},
		want: `GiB of host memory (100000000 cores × `},
	{name: "a billion-entry queue",
		args: []string{"run", examplePath("cube-peak.yaml"), "--set", "machine.core.queue_depth=1000000000", "--max-memory", "64GiB"}, // (a host's bound under 16 GiB would be named instead)
		want: `above the limit of 16 GiB: check keys "cores", "core.queue_depth"`},
	{name: "a 64 GiB register file, functional",
		args: []string{"run", examplePath("a100-hgemm.yaml"), "--numerics", "full", "--set", "program.m=64", "--set", "program.n=64", "--set", "program.k=64", "--set", "machine.core.registers=64GiB", "--max-memory", "64GiB"},
		want: `key "numerics": full numerics on 64×64×64 needs about `}, // (its kernels' blocks' registers: thousands of GiB, by the blocks an SM holds)
	{name: "1 TiB of tensor memory, functional",
		args: []string{"run", examplePath("a100-hgemm.yaml"), "-m", "b200", "--numerics", "full", "--set", "program.m=64", "--set", "program.n=64", "--set", "program.k=64", "--set", "machine.core.tmem=1TiB"},
		want: `GiB of host memory in all (its data 1MiB, its kernels' blocks `},
	// Tensor memory (Blackwell tcgen05) is checked as shared memory and
	// registers are: a core.tmem without room for one accumulator of the
	// machine's largest MMA shape is refused with the machine (it failed
	// the run, exit 1, naming a grid; 32 bytes ran tensor-peak at 100 %
	// of peak), a tiling whose accumulators pass it with the tiling.
	{name: "tensor memory below one accumulator",
		args: []string{"run", examplePath("a100-hgemm.yaml"), "-m", "b200", "--numerics", "off", "--set", "machine.core.tmem=64KiB"},
		want: `--set machine.core.tmem=64KiB: key "core.tmem": must hold one tcgen05 accumulator of the largest MMA shape, tensor.shapes.fp16 m128n256k16 (128 × 256 × 4 B = 128KiB) (got 64KiB)`},
	{name: "tensor memory below one accumulator, emulated GEMM",
		args: []string{"run", examplePath("a100-emulated-gemm.yaml"), "-m", "b200", "--numerics", "off", "--set", "machine.core.tmem=32KiB"},
		want: `--set machine.core.tmem=32KiB: key "core.tmem": must hold one tcgen05 accumulator`},
	{name: "32 bytes of tensor memory, tensor peak",
		args: []string{"run", examplePath("a100-tensor-peak.yaml"), "-m", "b200", "--set", "machine.core.tmem=32"},
		want: `--set machine.core.tmem=32: key "core.tmem": must hold one tcgen05 accumulator of the largest MMA shape, tensor.shapes.fp16 m128n256k16 (128 × 256 × 4 B = 128KiB) (got 32B)`},
	{name: "32 bytes of tensor memory, MMA latency",
		args: []string{"run", examplePath("a100-mma-latency.yaml"), "-m", "b200", "--set", "machine.core.tmem=32"},
		want: `--set machine.core.tmem=32: key "core.tmem": must hold one tcgen05 accumulator`},
	{name: "a tile whose accumulators pass tensor memory",
		args: []string{"run", examplePath("a100-hgemm.yaml"), "-m", "b200", "--numerics", "off", "--set", "machine.core.tmem=128KiB",
			"--set", "program.tiling.bm=128", "--set", "program.tiling.bn=384", "--set", "program.tiling.bk=64", "--set", "program.tiling.warps=8"},
		want: `a100-hgemm.yaml: key "tiling": 128×384×64 tile, 3 stages, 8 warps needs 196608 bytes of tensor memory per CTA for its 128×384 accumulator (128 × 384 × 4 bytes); the SM has 131072 (core.tmem) (set with --set program.tiling.bk=64, --set program.tiling.bm=128, --set program.tiling.bn=384, --set program.tiling.warps=8; the constraint set with --set machine.core.tmem=128KiB)`},
	// (The refusals named the tile's --set, or the file, but not the
	// machine's --set that set the limit, nor the other key's.)
	{name: "a tile against a tensor-core shape a --set gave",
		args: []string{"run", examplePath("a100-emulated-gemm.yaml"), "--numerics", "off", "--set", "machine.core.tensor.shapes.fp16=m3n5k7"},
		want: `a100-emulated-gemm.yaml: key "tiling.bk": must be a multiple of 7 in 7..1024 (got 32) (the constraint set with --set machine.core.tensor.shapes.fp16=m3n5k7)`},
	{name: "m against an nb a --set gave",
		args: []string{"run", examplePath("lu-gemm256.yaml"), "--set", "program.nb=100000"},
		want: `lu-gemm256.yaml:8: key "m": must be a positive multiple of nb = 100000 (got 8192) (the constraint set with --set program.nb=100000)`},
	{name: "1 TiB of VGPRs, functional",
		args: []string{"run", examplePath("mi210-hgemm.yaml"), "--numerics", "full", "--set", "program.m=64", "--set", "program.n=64", "--set", "program.k=64", "--set", "machine.core.vgprs=1TiB"},
		want: `GiB of host memory in all (its data 1MiB, its kernels' blocks `},
	{name: "sampled GPU HGEMM 32768³ (17 GB of inputs and their halves)",
		args: []string{"run", examplePath("a100-hgemm.yaml"), "--numerics", "sampled", "--set", "program.m=32768", "--set", "program.n=32768", "--set", "program.k=32768", "--max-memory", "16GiB"},
		want: `key "numerics": sampled numerics on 32768×32768×32768 needs about 20.25GiB of host memory in all (its data 20.0GiB, its kernels' blocks 8MiB, its chip model 67MiB and the run's base 48MiB), more than the run may take (16GiB, --max-memory); use off`},
	{name: "DaVinci SGEMM-cube 12288³ with full numerics (its check took 16 bytes an element: 20 GB for 7)",
		args: []string{"run", examplePath("sgemm-cube.yaml"), "--numerics", "full", "--set", "program.m=12288", "--set", "program.n=12288", "--set", "program.k=12288", "--max-memory", "16GiB"},
		want: `key "numerics": full numerics on 12288×12288×12288 needs about 20.5GiB of host memory in all (its data 20.2GiB, its chip model 59MiB and the run's base 48MiB), more than the run may take (16GiB, --max-memory); use sampled or off`},
	{name: "a chip model larger than the run's --max-memory",
		args: []string{"run", examplePath("a100-hgemm.yaml"), "--numerics", "off", "--max-memory", "50MiB"},
		want: `machine a100: simulating it would take about 3 MiB of host memory (108 cores × 5 KiB, L2 and LLC directories 2 MiB), above what --max-memory 50MiB leaves beside the run's data and base and its kernels' blocks (about `},
	{name: "a run's --max-memory below a MiB",
		args: []string{"run", examplePath("sgemm-cube.yaml"), "--max-memory", "1KiB"},
		want: `--max-memory "1KiB": must be a size in 1MiB..1024TiB (the host memory the run may take by its estimate), e.g. 64GiB`},
	{name: "a kernel launch of 1e17 ns (it wrapped the time)",
		args: []string{"run", examplePath("a100-hgemm.yaml"), "--numerics", "off", "--set", "machine.core.launch_ns=1e17"},
		want: `key "core.launch_ns": must be in 0..1e+09 ns`},
	{name: "a tensor rate of 1e300 per cycle (an infinite peak)",
		args: []string{"run", examplePath("a100-hgemm.yaml"), "--numerics", "off", "--set", "machine.core.tensor.flops_per_cycle.fp16=1e300"},
		want: `key "core.tensor.flops_per_cycle.fp16": must be 0 (unsupported) or in 1..1e+09 (got 1e+300)`},
	{name: "an unknown validate check",
		args: []string{"validate", "bogus"},
		want: `validate: unknown check "bogus" (one of: numerics)`},
	{name: "one tiling dimension alone",
		args: []string{"run", examplePath("a100-hgemm.yaml"), "--set", "program.tiling.bk=32"},
		want: `key "tiling.bm": missing: give tiling.bm, bn and bk together`},
	{name: "inputs.high without distribution between",
		args: []string{"run", examplePath("a100-hgemm.yaml"), "--set", "program.inputs.high=-5"},
		want: `key "inputs.high": applies to distribution between`},
	{name: "an explicit mantissa_bits: 0 (it silently meant 53)",
		args: []string{"run", examplePath("b200-ozaki.yaml"), "--set", "program.mantissa_bits=0"},
		want: `key "mantissa_bits": must be in 1..200; leave the key out for 53 (got 0)`},
	{name: "an explicit refinement.tolerance: 0",
		args: []string{"run", examplePath("lu-fused.yaml"), "--set", "program.refinement.tolerance=0"},
		want: `key "refinement.tolerance": must be > 0`},
	{name: "negative sample_tiles",
		args: []string{"run", examplePath("a100-hgemm.yaml"), "--set", "program.sample_tiles=-1"},
		want: `key "sample_tiles": must be ≥ 1 (got -1)`},
	{name: "an asm repeat of 10^12 (it expanded for days before the run)",
		files: map[string]string{"p.yaml": "kind: asm\ncores: 1\nnumerics: off\nasm: |\n  repeat 1000000000000 {\n    nop\n  }\n"},
		args:  []string{"run", "@DIR@/p.yaml"},
		want:  "the stream is longer than 67108864 instructions (repeat counts multiply)"},
	{name: "an asm program of 2^47 multiply-adds with full numerics (it computed for hours)",
		files: map[string]string{"p.yaml": "kind: asm\ncores: 1\nasm: |\n  repeat 67108864 {\n    m.mmad c=0 a=0 b=0 m=128 k=128 n=128 in=fp16 out=fp32 init\n  }\n"},
		args:  []string{"run", "@DIR@/p.yaml"},
		want:  `p.yaml: key "numerics": full numerics would compute more than 2^40 multiply-adds and bytes`},
	{name: "an asm program writing 12 GiB of GM with full numerics (out of memory)",
		files: map[string]string{"p.yaml": "kind: asm\ncores: 1\nasm: |\n  repeat 200000 i {\n    mte3.copy ub=0 gm=i*65536 bytes=32\n  }\n"},
		args:  []string{"run", "@DIR@/p.yaml", "--max-memory", "8GiB"},
		want:  `p.yaml: key "numerics": full numerics needs more host memory than the run may take (8GiB, --max-memory)`},
	{name: "an asm output outside GM (the run finished, then failed with exit 1)",
		files: map[string]string{"p.yaml": "kind: asm\ncores: 1\noutputs: [{name: o, addr: -4096, shape: [16, 16]}]\nasm: |\n  nop\n"},
		args:  []string{"run", "@DIR@/p.yaml"},
		want:  `p.yaml:3: key "outputs[0]": output o: addr -0x1000: the output's 1024 bytes must lie in GM`},
	{name: "an asm gm tensor past GM's end",
		files: map[string]string{"p.yaml": "kind: asm\ncores: 1\ngm: [{name: x, addr: 34359738000, shape: [16, 16]}]\nasm: |\n  nop\n"},
		args:  []string{"run", "@DIR@/p.yaml"},
		want:  `p.yaml:3: key "gm[0]": tensor x: addr 0x7fffffe90: the tensor's 1024 bytes must lie in GM`},
	{name: "a billion timed refinement iterations (grew past 16 GB)",
		args: []string{"run", examplePath("lu-fused-small.yaml"), "--numerics", "off", "--set", "program.refinement.timing_iterations=1000000000"},
		want: `key "refinement.timing_iterations": must be in 1..10000`},
	{name: "program file /dev/zero",
		args: []string{"run", "/dev/zero"},
		want: "program file: /dev/zero is a character device, not a program file"},
	{name: "machine file /dev/zero",
		files: map[string]string{"p.yaml": "kind: asm\nmachine: /dev/zero\nasm: nop\n"},
		args:  []string{"run", "@DIR@/p.yaml"},
		want:  "machine file: /dev/zero is a character device, not a machine file"},
	{name: "program file is a directory",
		args: []string{"run", "@DIR@"},
		want: "program file: @DIR@ is a directory, not a program file"},
	{name: "npy v2 header claiming 2 GiB",
		files: map[string]string{"a.npy": "\x93NUMPY\x02\x00\xff\xff\xff\x7f{\n"},
		args:  []string{"run", examplePath("sgemm-cube.yaml"), "--set", "program.inputs.a=@DIR@/a.npy", "--set", "program.inputs.b=@DIR@/a.npy"},
		want:  "a.npy: malformed .npy file: header of 2147483647 bytes, at most 1048576"},
	{name: "npy shape overflowing to the file size",
		files: map[string]string{"a.npy": string(append(npyV1("{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427388122, 1), }"), make([]byte, 872)...))},
		args:  []string{"run", examplePath("sgemm-cube.yaml"), "--set", "program.inputs.a=@DIR@/a.npy", "--set", "program.inputs.b=@DIR@/a.npy"},
		want:  "shape (4611686018427388122, 1) of <f4 needs more than 2^63 data bytes, the file has 872"},
	{name: "npy header of one byte",
		files: map[string]string{"a.npy": "\x93NUMPY\x01\x00\x01\x00\n"},
		args:  []string{"run", examplePath("sgemm-cube.yaml"), "--set", "program.inputs.a=@DIR@/a.npy", "--set", "program.inputs.b=@DIR@/a.npy"},
		want:  "malformed .npy file: header of 1 bytes"},
	{name: "not an npy file",
		files: map[string]string{"a.npy": "hello"},
		args:  []string{"run", examplePath("sgemm-cube.yaml"), "--set", "program.inputs.a=@DIR@/a.npy", "--set", "program.inputs.b=@DIR@/a.npy"},
		want:  `not a .npy file`},

	// Accepted and ignored: refused instead.
	{name: "two asm gm tensors over the same bytes (one overwrote the other)",
		files: map[string]string{"p.yaml": "kind: asm\ncores: 1\ngm: [{name: a, addr: 0, shape: [16]}, {name: b, addr: 32, shape: [16]}]\nasm: |\n  nop\n"},
		args:  []string{"run", "@DIR@/p.yaml"},
		want:  `p.yaml:3: key "gm[1]": tensor b, bytes [0x20, 0x60), overlaps gm[0] (a, bytes [0x0, 0x40))`},
	{name: "two asm gm tensors of one name",
		files: map[string]string{"p.yaml": "kind: asm\ncores: 1\ngm: [{name: a, addr: 0, shape: [16]}, {name: a, addr: 64, shape: [16]}]\nasm: |\n  nop\n"},
		args:  []string{"run", "@DIR@/p.yaml"},
		want:  `p.yaml:3: key "gm[1]": named "a" as gm[0] is (a tensor's name is its own)`},
	{name: "an asm output with initial contents (outputs are read back after the run)",
		files: map[string]string{"p.yaml": "kind: asm\ncores: 1\noutputs: [{name: o, addr: 0, shape: [16], init: uniform}]\nasm: |\n  nop\n"},
		args:  []string{"run", "@DIR@/p.yaml"},
		want:  `p.yaml:3: unknown key "outputs[0].init": "outputs[0]" has no key "init" (it has: name, addr, shape, dtype)`},
	{name: "program kind changed by --set",
		args: []string{"run", examplePath("sgemm-cube.yaml"), "--set", "program.kind=hgemm"},
		want: `--set program.kind=hgemm: the program kind is the file's (sgemm-cube) and cannot be changed`},
	{name: "trace cores beyond the machine",
		args: []string{"run", examplePath("cube-peak.yaml"), "--trace", "@DIR@/t.json", "--trace-cores", "40-50"},
		want: "--trace-cores 40-50: core 50 does not exist; machine ascend-910a has cores 0-31"},
	{name: "nb: 0",
		files: map[string]string{"p.yaml": "kind: lu-fused\nn: 1024\nnb: 0\nnumerics: off\n"},
		args:  []string{"run", "@DIR@/p.yaml"},
		want:  `key "nb": must be a positive multiple of 16 (the cube's 16×16 fractal) (got 0)`},
	{name: "missing inputs with numerics off",
		args: []string{"run", examplePath("sgemm-cube.yaml"), "--numerics", "off", "--set", "program.inputs.a=@DIR@/missing.npy", "--set", "program.inputs.b=@DIR@/missing.npy"},
		want: `key "inputs.a": open @DIR@/missing.npy: no such file or directory`},
	// An adversarial probe's findings (2026-11-30): each was a panic, an
	// out-of-memory crash, a hang or a silently wrong result.
	{name: "kind of the wrong type",
		files: map[string]string{"p.yaml": "kind: [hgemm]\n"},
		args:  []string{"run", "@DIR@/p.yaml"},
		want:  `key "kind": must be a name (got [hgemm]); one of asm,`},
	{name: "octal integer",
		files: map[string]string{"p.yaml": "kind: hgemm\nm: 032\n"},
		args:  []string{"run", "@DIR@/p.yaml"},
		want:  `key "m": 032 has a leading zero, which YAML reads as octal (26)`},
	{name: "bits for bytes",
		args: []string{"run", examplePath("hgemm.yaml"), "--set", "machine.gm.bandwidth=1228Gb/s"},
		want: `a lowercase b is a bit, and davinci-sim counts bytes (B): divide by 8 (1228Gb/s = 153.5GB/s)`},
	{name: "private L2 partitions overflowing",
		args: []string{"run", examplePath("hgemm.yaml"), "--set", "machine.l2.private=true", "--set", "machine.l2.partitions=140737488355328"},
		want: `key "l2.partitions": must be in 0..4096`},
	{name: "shared-memory banks beyond memory",
		args: []string{"run", examplePath("a100-hgemm.yaml"), "--numerics", "off", "--set", "machine.core.smem_banks=268435456"},
		want: `key "core.smem_banks": must be a power of two up to 1024`},
	{name: "cube size overflowing the peak",
		args: []string{"run", examplePath("hgemm.yaml"), "--numerics", "off", "--set", "machine.core.cube.kstep_fp16=9223372036854775807"},
		want: `key "core.cube.kstep_fp16": must be in 1..16384`},
	{name: "misspelt numerics beside --numerics",
		files: map[string]string{"p.yaml": "kind: hgemm\nm: 64\nk: 64\nn: 64\nnumerics: bogus\n"},
		args:  []string{"run", "@DIR@/p.yaml", "--numerics", "off"},
		want:  `key "numerics": must be full, sampled or off for hgemm programs (got "bogus")`},
	{name: "numerics an asm program does not take, beside --numerics",
		files: map[string]string{"p.yaml": "kind: asm\nnumerics: sampled\nasm: nop\n"},
		args:  []string{"run", "@DIR@/p.yaml", "--numerics", "off"},
		want:  `key "numerics": must be full or off for asm programs (got "sampled")`},
	{name: "unknown numerics preset",
		args: []string{"run", examplePath("a100-hgemm.yaml"), "--set", "machine.core.numerics=foo"},
		want: `--set machine.core.numerics=foo: key "core.numerics": unknown numerics preset "foo" (the presets: a100,`},
	{name: "a study given as the machine",
		args: []string{"run", examplePath("hgemm.yaml"), "-m", "../../studies/l1-size.yaml"},
		want: `../../studies/l1-size.yaml: a study file (vary or points, metrics), not a machine: run it with davinci-sim sweep`},
	{name: "negative stages",
		args: []string{"run", examplePath("a100-hgemm.yaml"), "--set", "program.tiling.stages=-1"},
		want: `key "tiling.stages": must be in 2..16`},
	{name: "a second asm source by --set",
		args: []string{"run", examplePath("deadlock.yaml"), "--set", "program.file=x.s"},
		want: `deadlock.yaml: key "file": give exactly one of the keys "asm" (inline), "file" or "streams": asm given too (set with --set program.file=x.s)`},
	{name: "two asm sources in the file",
		files: map[string]string{"p.yaml": "kind: asm\nasm: nop\nstreams: [a.s]\n"},
		args:  []string{"run", "@DIR@/p.yaml"},
		want:  `p.yaml:3: key "streams": give exactly one of the keys "asm" (inline), "file" or "streams": asm given too`},
	{name: "look-alike Unicode kind",
		files: map[string]string{"p.yaml": "kind: \uff48gemm\n"},
		args:  []string{"run", "@DIR@/p.yaml"},
		want:  `unknown program kind "\uff48gemm"`},
	{name: "look-alike Unicode numerics",
		args: []string{"run", examplePath("hgemm.yaml"), "--numerics", "\uff4fff"},
		want: `--numerics "\uff4fff": must be full, sampled or off`},
	{name: "multi-document program",
		files: map[string]string{"p.yaml": "kind: asm\nasm: nop\n---\nkind: hgemm\n"},
		args:  []string{"run", "@DIR@/p.yaml"},
		want:  "p.yaml:3: a second YAML document (after ---); a file holds one"},
	{name: "multi-document machine",
		files: map[string]string{"p.yaml": "kind: asm\nmachine: @DIR@/m.yaml\nasm: nop\n", "m.yaml": "name: x\n---\nname: y\n"},
		args:  []string{"run", "@DIR@/p.yaml"},
		want:  "m.yaml:2: a second YAML document"},
	{name: "multi-document study",
		files: map[string]string{"s.yaml": "program: " + absExample("cube-peak.yaml") + "\nvary:\n  program.cores: [1]\nmetrics: [time.seconds]\n---\nmetrics: [flops.tflops]\n"},
		args:  []string{"sweep", "@DIR@/s.yaml", "-o", "@DIR@/out"},
		want:  "s.yaml:5: a second YAML document"},

	// Outputs: checked before the run, never outside -o.
	{name: "asm output name escaping -o",
		files: map[string]string{"p.yaml": "kind: asm\nasm: |\n  nop\noutputs:\n  - {name: ../escaped, addr: 0, shape: [4]}\n"},
		args:  []string{"run", "@DIR@/p.yaml", "-o", "@DIR@/out"},
		want:  `key "outputs[0]": output name "../escaped": must be a plain file name`},
	{name: "asm output name twice",
		files: map[string]string{"p.yaml": "kind: asm\nasm: |\n  nop\noutputs:\n  - {name: C, addr: 0, shape: [4]}\n  - {name: C, addr: 64, shape: [4]}\n"},
		args:  []string{"run", "@DIR@/p.yaml"},
		want:  `output name "C" used twice`},
	{name: "-o under a file",
		files: map[string]string{"f": ""},
		args:  []string{"run", examplePath("cube-peak.yaml"), "-o", "@DIR@/f/out"},
		want:  `-o "@DIR@/f/out"`},
	{name: "-o is a file",
		files: map[string]string{"f": ""},
		args:  []string{"run", examplePath("cube-peak.yaml"), "-o", "@DIR@/f"},
		want:  `-o "@DIR@/f": exists and is not a directory`},
	{name: "-o holds other files",
		files: map[string]string{"notes.txt": "mine"},
		args:  []string{"run", examplePath("cube-peak.yaml"), "-o", "@DIR@"},
		want:  `holds no report.json (not a previous run's output)`},
	{name: "--trace in a missing directory",
		args: []string{"run", examplePath("cube-peak.yaml"), "--trace", "@DIR@/no/such/t.json"},
		want: `--trace "@DIR@/no/such/t.json"`},
	{name: "--trace is a directory",
		args: []string{"run", examplePath("cube-peak.yaml"), "--trace", "@DIR@"},
		want: `--trace "@DIR@": is a directory`},

	// Options and keys a program would ignore.
	{name: "--seed on asm",
		args: []string{"run", examplePath("cube-peak.yaml"), "--seed", "5"},
		want: `--seed: program kind asm has no random seed to override; each gm tensor has its own (key gm[].seed)`},
	{name: "--numerics on gpu-bench",
		args: []string{"run", examplePath("a100-tensor-peak.yaml"), "--numerics", "full"},
		want: `--numerics: program kind gpu-bench has no numerics mode`},
	{name: "asm cores with streams",
		files: map[string]string{"s.asm": "nop\n", "p.yaml": "kind: asm\ncores: 4\nstreams: [s.asm, s.asm]\n"},
		args:  []string{"run", "@DIR@/p.yaml"},
		want:  `key "cores": not used with "streams"`},
	{name: "--trace-npu outside --trace-ranks",
		args: []string{"run", examplePath("lu-cluster-small.yaml"), "--numerics", "off", "--trace", "@DIR@/t.json", "--trace-ranks", "0-1", "--trace-npu", "3"},
		want: `--trace-npu 3: not among --trace-ranks 0-1`},
	{name: "--trace-ranks not a rank list (it said \"core list\")",
		args: []string{"run", examplePath("lu-cluster-small.yaml"), "--numerics", "off", "--trace", "@DIR@/t.json", "--trace-ranks", "abc"},
		want: `--trace-ranks: rank list "abc": "abc" is not a rank number (0 or more)`},
	{name: "--trace-ranks beyond any cluster",
		args: []string{"run", examplePath("lu-cluster-small.yaml"), "--numerics", "off", "--trace", "@DIR@/t.json", "--trace-ranks", "0-99999999999"},
		want: `--trace-ranks: rank list "0-99999999999": rank 99999999999: there are at most 4096 (ranks 0-4095)`},
	// The smallest rank outside the grid (one of them at random: map order).
	{name: "--trace-ranks beyond the grid",
		args: []string{"run", examplePath("lu-cluster-small.yaml"), "--numerics", "off", "--trace", "@DIR@/t.json", "--trace-ranks", "0-99"},
		want: `--trace-ranks: rank 8 does not exist; ranks are 0..7 on this 2 × 4 grid`},
	{name: "a GPU as a node's NPU",
		args: []string{"run", examplePath("lu-cluster-small.yaml"), "--numerics", "off", "--set", "node.npu=a100"},
		want: `--set node.npu=a100: key "npu": a100 is a GPU (machine kind nvidia-sm): a node's NPU must be a DaVinci machine with a host section`},
	{name: "a GPU as the NPU of a node file",
		files: map[string]string{"node.yaml": strings.Replace(nodeSource(), "npu: ascend-910a", "npu: a100", 1)},
		args:  []string{"run", examplePath("lu-cluster-small.yaml"), "--numerics", "off", "-m", "@DIR@/node.yaml"},
		want:  `@DIR@/node.yaml:15: key "npu": a100 is a GPU`},
	{name: "a cluster's node file missing",
		args: []string{"run", examplePath("lu-cluster-small.yaml"), "--numerics", "off", "-m", "cloudbrain2", "--set", "cluster.node=@DIR@/none.yaml"},
		want: `--set cluster.node=@DIR@/none.yaml: key "node": node file: open @DIR@/none.yaml: no such file or directory`},
	{name: "a cluster's node not a name",
		args: []string{"run", examplePath("lu-cluster-small.yaml"), "--numerics", "off", "-m", "cloudbrain2", "--set", "cluster.node=bogus"},
		want: `--set cluster.node=bogus: key "node": unknown node file "bogus"`},
	{name: "lu-fused grid p without q on one chip",
		args: []string{"run", examplePath("a100-lu-fused.yaml"), "--set", "program.grid.p=2"},
		want: `key "grid": a 2 × 0 process grid needs a cluster`},
	{name: "lu-fused sampling windows on one chip",
		args: []string{"run", examplePath("a100-lu-fused.yaml"), "--set", "program.sampling.windows=-5"},
		want: `key "sampling.windows": -5: must be ≥ 1`},

	{name: "a study file given to run",
		args: []string{"run", "../../studies/l1-size.yaml"},
		want: `a study file (vary or points, metrics), not a program: run it with davinci-sim sweep`},
	{name: "trace into the -o directory",
		args: []string{"run", examplePath("hgemm.yaml"), "--numerics", "off", "-o", "@DIR@/o", "--trace", "@DIR@/o/report.json"},
		want: `--trace @DIR@/o/report.json: in the -o directory`},
	{name: "trace and profile in one file",
		args: []string{"run", examplePath("hgemm.yaml"), "--numerics", "off", "--trace", "@DIR@/t.json", "--cpuprofile", "@DIR@/t.json"},
		want: `--trace and --cpuprofile: both write`},
	{name: "two profiles in one file",
		args: []string{"run", examplePath("hgemm.yaml"), "--numerics", "off", "--cpuprofile", "@DIR@/p", "--memprofile", "@DIR@/p"},
		want: `--cpuprofile and --memprofile: both write`},
	{name: "machine.host on a node",
		args: []string{"run", examplePath("lu-cluster-small.yaml"), "--numerics", "off", "--set", "machine.host.cores=1"},
		want: `set node.hosts.* (cores, clock, memory_bandwidth, …) or node.pcie.* instead`},
	{name: "sockets that do not share the NPUs evenly",
		args: []string{"run", examplePath("lu-cluster-small.yaml"), "--numerics", "off", "--set", "node.hosts.count=3"},
		want: `key "hosts.count": must divide npus (8) evenly`},
	{name: "a grid whose p·q wraps",
		args: []string{"run", examplePath("lu-cluster-small.yaml"), "--numerics", "off", "--set", "program.grid.p=24", "--set", "program.grid.q=768614336404564651"},
		want: `key "grid": p × q = 24 × 768614336404564651 must equal the NPUs`},
	{name: "--numerics refused by the kind names the flag, not the file's line (it blamed the file's key)",
		args: []string{"run", examplePath("deadlock.yaml"), "--numerics", "sampled"},
		want: `key "numerics": must be full or off for asm programs; got "sampled" (the run's numerics sampled (--numerics), not the file's)`},
	{name: "a sampled run's kernel chip beyond the memory bound beside the run's base (it exited 1, refused mid-run)",
		args: []string{"run", examplePath("lu-cluster-small.yaml"), "--fidelity", "sampled", "--max-memory", "1MiB"},
		want: `cloudbrain2-node: at fidelity sampled each kernel is simulated alone on a chip model of 7.2 MiB, which with the run's base (48 MiB) would take about 56MiB of host memory, more than the run may take (1MiB, --max-memory)`},
	{name: "a cluster's chip models beyond the memory bound",
		args: []string{"run", examplePath("lu-cluster-small.yaml"), "-m", "cloudbrain2", "--numerics", "off", "--set", "cluster.nodes=512", "--set", "machine.cores=256",
			"--set", "program.n=16384", "--set", "program.nb=256", "--set", "program.grid.p=64", "--set", "program.grid.q=64", "--set", "program.n_fused=1", "--max-memory", "16GiB"},
		want: `at fidelity full the 4096 NPUs' chip models, 29.4 MiB each, with the run's data and base (48 MiB) would take about 118GiB of host memory, more than the run may take (16GiB, --max-memory)`},
	{name: "host memory too small for the factors",
		args: []string{"run", examplePath("lu-cluster-small.yaml"), "--numerics", "off", "--set", "node.hosts.memory=100KB"},
		want: `key "n": each rank's host holds its share of the factors (512 × 256 FP16)`},
	{name: "n_fused beyond n/nb",
		args: []string{"run", examplePath("lu-fused-small.yaml"), "--numerics", "off", "--set", "program.n_fused=99"},
		want: `key "n_fused": must be at most n/nb = 8`},
	{name: "hgemm split.sb",
		args: []string{"run", examplePath("hgemm.yaml"), "--set", "program.split.sb=6"},
		want: `key "split.sb": the scale of sgemm-cube's residual`},
	{name: "split on a GPU hgemm",
		args: []string{"run", examplePath("a100-hgemm.yaml"), "--set", "program.split.rounding=rz"},
		want: `key "split": applies to davinci machines`},
	{name: "ozaki alpha .nan in the file",
		files: map[string]string{"p.yaml": "kind: ozaki\nmachine: a100\nm: 64\nk: 64\nn: 64\nalpha: .nan\n"},
		args:  []string{"run", "@DIR@/p.yaml"},
		want:  `p.yaml:6: key "alpha": want a finite number, got .nan`},
	{name: "a key twice inside a list entry",
		files: map[string]string{"p.yaml": "kind: emulated-gemm\nmachine: a100\nm: 64\nk: 64\nn: 64\nscheme:\n  pieces: [{format: fp16, scale: 1, scale: 2}]\n  groups: [{products: [hh]}]\n"},
		args:  []string{"run", "@DIR@/p.yaml"},
		want:  `p.yaml:7: key "scheme.pieces[0].scale" given twice`},
	{name: "a fractional scheme scale",
		files: map[string]string{"p.yaml": "kind: emulated-gemm\nmachine: a100\nm: 64\nk: 64\nn: 64\nscheme: {pieces: [{format: fp16}, {format: fp16, scale: 11.7}], groups: [{products: [hh]}, {products: [hl, lh]}]}\n"},
		args:  []string{"run", "@DIR@/p.yaml"},
		want:  `key "scheme.pieces[1].scale": want an integer, got 11.7`},
	{name: "a fast-forward setting without --fast-forward",
		args: []string{"run", examplePath("a100-hgemm.yaml"), "--numerics", "off", "--fast-forward-hits", "0.3"},
		want: `--fast-forward-hits: tunes --fast-forward, which is not given`},
	{name: "ape-int16 with an FP32 input range",
		args: []string{"run", examplePath("a100-emulated-gemm.yaml"), "--set", "program.scheme=ape-int16", "--set", "program.inputs.offset_exponent=3"},
		want: `key "inputs.offset_exponent": ape-int16 draws its INT16 inputs`},
	{name: "input on a DaVinci emulated-gemm",
		args: []string{"run", examplePath("ascend-910a-emulated-gemm.yaml"), "--set", "program.input=fp16"},
		want: `key "input": applies to hgemm`},
	{name: "histogram without numerics",
		args: []string{"run", examplePath("a100-emulated-gemm.yaml"), "--numerics", "off", "--set", "program.histogram_bins=10"},
		want: `key "histogram_bins": the error histogram needs the simulated C`},
	{name: "between inputs beyond FP16 names the bound",
		args: []string{"run", examplePath("a100-emulated-gemm.yaml"), "--set", "program.scheme=markidis", "--set", "program.inputs.distribution=between", "--set", "program.inputs.low=60000", "--set", "program.inputs.high=70000"},
		want: `key "inputs.high": inputs up to 70000 reach 65520, from where piece 0 (FP16, scale 2^0) rounds past`},
	{name: "an asm file of comments only",
		files: map[string]string{"e.s": "# nothing\n\n", "p.yaml": "kind: asm\nnumerics: off\nfile: e.s\n"},
		args:  []string{"run", "@DIR@/p.yaml"},
		want:  `key "file": no instructions (only blank or comment lines)`},
	{name: "asm cores 0",
		files: map[string]string{"p.yaml": "kind: asm\nnumerics: off\ncores: 0\nasm: nop\n"},
		args:  []string{"run", "@DIR@/p.yaml"},
		want:  `key "cores": must be in 1..the machine's cores; leave the key out for 1 (got 0)`},
	{name: "a cluster link latency of 2e15 ns",
		args: []string{"run", examplePath("lu-cluster-small.yaml"), "--numerics", "off", "--set", "node.hccs.latency_ns=2e15"},
		want: `key "hccs.latency_ns": must be in 0..1e+09 ns`},
	// Node and cluster rates too slow for the simulated time range: the key
	// named (the engine's message named none).
	{name: "a node's HCCS link at 1e-300 B/s",
		args: []string{"run", examplePath("lu-cluster-small.yaml"), "--numerics", "off", "--set", "node.hccs.link_bandwidth=1e-300"},
		want: `--set node.hccs.link_bandwidth=1e-300: key "hccs.link_bandwidth": too slow: a transfer of 32768 bytes over link n0.hccs.`},
	{name: "a fabric port at 1e-6 B/s",
		args: []string{"run", examplePath("lu-cluster-small.yaml"), "--numerics", "off", "-m", "cloudbrain2", "--set", "cluster.nodes=2", "--set", "program.grid.p=4", "--set", "program.grid.q=4", "--set", "cluster.fabric.port_bandwidth=1e-6"},
		want: `--set cluster.fabric.port_bandwidth=1e-6: key "fabric.port_bandwidth": too slow`},
	{name: "a host reduction at 1e-300 B/s",
		args: []string{"run", examplePath("lu-cluster-small.yaml"), "--numerics", "off", "--set", "node.collectives.host_reduce_bandwidth=1e-300"},
		want: `--set node.collectives.host_reduce_bandwidth=1e-300: key "collectives.host_reduce_bandwidth": too slow: reducing`},
	{name: "a node's host clock of 1e-300 Hz",
		args: []string{"run", examplePath("lu-cluster-small.yaml"), "--numerics", "off", "--set", "node.hosts.clock=1e-300"},
		want: `--set node.hosts.clock=1e-300: key "hosts.clock": must be in [1MHz, 1THz] (a cycle of 1 ps to 1 µs; got 1e-300Hz)`},
	{name: "a node's host memory at 1e-300 B/s",
		args: []string{"run", examplePath("lu-cluster-small.yaml"), "--numerics", "off", "--set", "node.hosts.memory_bandwidth=1e-300"},
		want: `--set node.hosts.memory_bandwidth=1e-300: key "hosts.memory_bandwidth": too slow`},
	// One chip run as a node: the chip's key, not the node's it became.
	{name: "one chip sampled, its host link at 1e-300 B/s",
		args: []string{"run", examplePath("lu-fused-small.yaml"), "--fidelity", "sampled", "--set", "machine.host.link.bandwidth=1e-300"},
		want: `--set machine.host.link.bandwidth=1e-300: key "host.link.bandwidth": too slow: a transfer of`},
	{name: "one chip sampled, its host memory at 1e-300 B/s",
		args: []string{"run", examplePath("lu-fused-small.yaml"), "--fidelity", "sampled", "--set", "machine.host.memory_bandwidth=1e-300"},
		want: `--set machine.host.memory_bandwidth=1e-300: key "host.memory_bandwidth": too slow: rank 0's host computation "diag"`},
	{name: "an asm stream of comments only",
		files: map[string]string{"e.s": "# nothing\n", "p.yaml": "kind: asm\nnumerics: off\nstreams: [e.s, e.s]\n"},
		args:  []string{"run", "@DIR@/p.yaml"},
		want:  `key "streams[0]": no instructions`},
	{name: "-o ''",
		args: []string{"run", examplePath("cube-peak.yaml"), "-o", ""},
		want: `--out '': an empty value`},
	{name: "-m ''",
		args: []string{"run", examplePath("cube-peak.yaml"), "-m", ""},
		want: `--machine '': an empty value`},
	{name: "view --cores none of the trace's",
		files: map[string]string{"t.json": `{"traceEvents":[{"ph":"X","pid":1,"tid":1,"name":"a","ts":0,"dur":1}]}`},
		args:  []string{"view", "--cores", "99", "@DIR@/t.json"},
		want:  `--cores 99: @DIR@/t.json holds no events of these cores`},

	// Sweeps.
	{name: "unknown sweep metric",
		files: map[string]string{"s.yaml": "program: " + absExample("cube-peak.yaml") + "\nvary:\n  program.cores: [1]\nmetrics: [time.seconds, flops.tflop]\n"},
		args:  []string{"sweep", "@DIR@/s.yaml", "-o", "@DIR@/out"},
		want:  `key "metrics[1]": "flops.tflop": flops has no key "tflop"`},
	{name: "negative list index in a sweep metric",
		files: map[string]string{"s.yaml": "program: " + absExample("cube-peak.yaml") + "\nvary:\n  program.cores: [1]\nmetrics: [kernels.-1.seconds]\n"},
		args:  []string{"sweep", "@DIR@/s.yaml", "-o", "@DIR@/out"},
		want:  `"kernels" is a list; index it with a number ≥ 0`},
	{name: "sweep -o onto a file",
		files: map[string]string{"f": "", "s.yaml": "program: " + absExample("cube-peak.yaml") + "\nvary:\n  program.cores: [1]\nmetrics: [time.seconds]\n"},
		args:  []string{"sweep", "@DIR@/s.yaml", "-o", "@DIR@/f"},
		want:  `-o @DIR@/f: mkdir @DIR@/f: not a directory`},
	{name: "negative point timeout",
		files: map[string]string{"s.yaml": "program: " + absExample("cube-peak.yaml") + "\nvary:\n  program.cores: [1]\nmetrics: [time.seconds]\n"},
		args:  []string{"sweep", "@DIR@/s.yaml", "-o", "@DIR@/out", "--point-timeout", "-1s"},
		want:  `--point-timeout -1s: must be ≥ 0`},
	{name: "a key given 10^4 times (go-yaml's repeats check: 8 GB and a crash, 2026-12-06)",
		files: map[string]string{"p.yaml": "kind: hgemm\n" + strings.Repeat("m: 1\n", 10000)},
		args:  []string{"run", "@DIR@/p.yaml"},
		want:  `p.yaml:1: the top level holds 10001 keys: no section of an input file has more than 1024`},
	{name: "a key given 1000 times (told what kind of file it is without decoding it into a map: 0.5 s and 90 MB)",
		files: map[string]string{"p.yaml": "kind: hgemm\n" + strings.Repeat("m: 1\n", 1000)},
		args:  []string{"run", "@DIR@/p.yaml"},
		want:  `p.yaml:3: key "m" given twice`},
	{name: "a machine file's key given 3000 times",
		files: map[string]string{"m.yaml": machineSource("ascend-910a") + strings.Repeat("cores: 1\n", 3000)},
		args:  []string{"run", examplePath("hgemm.yaml"), "-m", "@DIR@/m.yaml"},
		want:  `the top level holds 30`},
	{name: "a DaVinci tile of 2^61 rows (divided by zero: a panic)",
		args: []string{"run", examplePath("hgemm.yaml"), "--numerics", "off", "--set", "program.tiling.bm=2305843009213693952"},
		want: `key "tiling.bm": at most 1048576, the largest m, k and n (got 2305843009213693952)`},
	{name: "a DaVinci tile of 2^57+16 columns (its L1 bytes wrapped: it ran, wrong)",
		args: []string{"run", examplePath("sgemm-cube.yaml"), "--numerics", "off", "--set", "program.tiling.bn=144115188075855888"},
		want: `key "tiling.bn": at most 1048576`},
	{name: "a split chunk of 2^61 elements (a negative UB size, exit 1)",
		args: []string{"run", examplePath("hgemm.yaml"), "--numerics", "off", "--set", "program.split_chunk=2305843009213693952"},
		want: `key "split_chunk": must be a positive multiple of 64, at most 1048576`},
	{name: "2^62 registers a thread (a warp's bytes wrapped past the check, exit 1)",
		args: []string{"run", examplePath("a100-hgemm.yaml"), "--numerics", "off", "--set", "machine.core.max_registers_per_thread=4611686018427387904"},
		want: `key "core.max_registers_per_thread": must be in 1..65536`},
	{name: "-m given twice (the last kept, silently)",
		args: []string{"run", examplePath("a100-hgemm.yaml"), "-m", "a100", "-m", "t4", "--numerics", "off"},
		want: `--machine: given twice ("a100", then "t4"): give it once`},
	{name: "--numerics given twice",
		args: []string{"run", examplePath("a100-hgemm.yaml"), "--numerics", "off", "--numerics", "full"},
		want: `--numerics: given twice ("off", then "full")`},
	{name: "a switch given twice, contradicting itself",
		args: []string{"run", examplePath("a100-hgemm.yaml"), "--numerics", "off", "--fast-forward", "--fast-forward=false"},
		want: `--fast-forward: given twice, as true and false: give it once`},
	{name: "sweep's -o given twice",
		args: []string{"sweep", absExample("../../studies/l1-size.yaml"), "-o", "@DIR@/a", "-o", "@DIR@/b"},
		want: `--out: given twice`},
	{name: "a study whose set holds 3·10^4 keys (5 s)",
		files: map[string]string{"s.yaml": "program: " + absExample("sgemm-cube.yaml") + "\nset:\n" + strings.Repeat("  program.k: 1\n", 30000) + "vary:\n  program.m: [64, 128]\nmetrics: [flops.tflops]\n"},
		args:  []string{"sweep", "@DIR@/s.yaml", "-o", "@DIR@/out"},
		want:  `s.yaml:3: key "set" holds 30000 keys: no section of an input file has more than 1024`},
	{name: "3·10^4 unknown keys in one section (3 s)",
		files: map[string]string{"p.yaml": "kind: hgemm\ntiling:\n" + strings.Repeat("  k: 1\n", 30000)},
		args:  []string{"run", "@DIR@/p.yaml"},
		want:  `p.yaml:3: key "tiling" holds 30000 keys`},
	// An optional section given as zeros was taken as "not given": the
	// value dropped, exit 0.
	{name: "an LLC key on a machine without an LLC",
		args: []string{"run", examplePath("a100-hgemm.yaml"), "--numerics", "off", "--set", "machine.llc.ways=0"},
		want: `--set machine.llc.ways=0: key "llc.ways": an llc section of zeros describes no LLC, so this value would be dropped`},
	{name: "a host key of zero on a machine without a host",
		args: []string{"run", examplePath("mi210-hgemm.yaml"), "-m", "mi300x", "--numerics", "off", "--set", "machine.host.clock=0"},
		want: `--set machine.host.clock=0: key "host.clock": a host section of zeros describes no host`},
	{name: "an empty power section in a machine file",
		files: map[string]string{"m.yaml": machineSource("a100") + "\npower: {}\n"},
		args:  []string{"run", examplePath("a100-hgemm.yaml"), "-m", "@DIR@/m.yaml", "--numerics", "off"},
		want:  `key "power": a power section of zeros describes no power model`},
	{name: "a vector unit of 10^300 repeats a cycle (ran as one cycle an instruction)",
		args: []string{"machines", "ascend-910a", "--set", "core.vector.cycles_per_repeat=1e-300"},
		want: `key "core.vector.cycles_per_repeat": must be in [0.015625, 1e+06] cycles`},
	{name: "a node key on a machine (said: did you mean name?)",
		args: []string{"machines", "a100", "--set", "node.npus=3"},
		want: `--set node.npus=3: node.* paths apply to a cluster or node description (davinci-sim machines cloudbrain2), not to a machine`},
	{name: "machines of an empty name (listed every machine)",
		args: []string{"machines", ""},
		want: `'': an empty NAME (give one, or none to list the machines)`},
	{name: "an empty program path",
		args: []string{"run", ""},
		want: `program file: '': an empty path, not a program file`},
	{name: "view of a directory (said only: needs a terminal)",
		args: []string{"view", "@DIR@"},
		want: `is a directory, not a trace`},
	{name: "sweep into /proc/self (exit 1 after the points)",
		args: []string{"sweep", absExample("../../studies/l1-size.yaml"), "-o", "/proc/self"},
		want: `-o /proc/self: cannot create files in /proc/self`},
	{name: "--trace-npu -1 (the flag's none, taken silently)",
		args: []string{"run", absExample("lu-cluster-small.yaml"), "-q", "--trace", "@DIR@/t.json", "--trace-npu", "-1"},
		want: `--trace-npu "-1": a rank (0 … NPUs − 1), not -1`},
	{name: "--seed and --set program.seed (the --set dropped)",
		args: []string{"run", examplePath("a100-hgemm.yaml"), "--numerics", "off", "--set", "program.seed=3", "--seed", "5"},
		want: `--set program.seed=3 and --seed both set program.seed: give one`},
	{name: "a grid the --set NPUs no longer fit (the --set not named)",
		args: []string{"run", absExample("lu-cluster-small.yaml"), "-q", "--set", "node.npus=1"},
		want: `key "grid": p × q = 2 × 4 must equal the NPUs of cloudbrain2-node (1) (the constraint set with --set node.npus=1)`},
	{name: "a plot's y listing one metric twice",
		files: map[string]string{"s.yaml": "program: " + absExample("sgemm-cube.yaml") + "\nvary:\n  program.m: [64, 128]\nmetrics: [time.seconds]\nplot: [{name: p, x: program.m, y: [time.seconds, Time.Seconds]}]\n"},
		args:  []string{"sweep", "@DIR@/s.yaml", "-o", "@DIR@/out"},
		want:  `key "plot[0].y": "time.seconds" listed twice`},
}

// nodeSource returns the embedded node description's text.
func nodeSource() string {
	src, err := cluster.Source("cloudbrain2-node")
	if err != nil {
		panic(err)
	}
	return string(src)
}

// machineSource returns an embedded machine's text.
func machineSource(name string) string {
	src, err := machines.Source(name)
	if err != nil {
		panic(err)
	}
	return string(src)
}

// npyV1 returns a version-1 .npy preamble and header for dict d.
func npyV1(d string) []byte {
	d += strings.Repeat(" ", 63-(10+len(d))%64) + "\n"
	return append([]byte{0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, byte(len(d)), byte(len(d) >> 8)}, d...)
}

// absExample is examplePath made absolute (for study files in a scratch
// directory).
func absExample(name string) string {
	p, err := filepath.Abs(examplePath(name))
	if err != nil {
		panic(err)
	}
	return p
}

// TestHostileInputs runs every hostile case in-process: exit code 2 (or the
// case's), one line naming the problem, and no more than a few seconds.
func TestHostileInputs(t *testing.T) {
	simScreen(t) // (view asks for a terminal before it reads a trace)
	for _, c := range hostileCases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, content := range c.files {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(strings.ReplaceAll(content, "@DIR@", dir)), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			args := make([]string, len(c.args))
			for i, a := range c.args {
				args[i] = strings.ReplaceAll(a, "@DIR@", dir)
			}
			want := c.code
			if want == 0 {
				want = 2
			}
			type result struct {
				out  string
				code int
				err  error
			}
			done := make(chan result, 1)
			go func() {
				out, code, err := runCLI(t, args...)
				done <- result{out, code, err}
			}()
			var r result
			select {
			case r = <-done:
			case <-time.After(60 * time.Second):
				t.Fatalf("%v: still running after 60 s", args)
			}
			if r.code != want {
				t.Fatalf("%v: exit %d, want %d (%v)\n%s", args, r.code, want, r.err, r.out)
			}
			if r.err == nil {
				return
			}
			msg := strings.ReplaceAll(r.err.Error(), dir, "@DIR@")
			if !strings.Contains(msg, c.want) || strings.Contains(msg, "\n") {
				t.Errorf("%v: error %q should be one line containing %q", args, msg, c.want)
			}
			if len(msg) > maxHostileMsg {
				t.Errorf("%v: error of %d bytes (at most %d: a message quotes a hostile value clipped where it is made; main's clipLines is only the backstop)", args, len(msg), maxHostileMsg)
			}
		})
	}
}

// Reusing an -o directory replaces the previous run's files: a timing-only
// run after a full one must not leave A/B/C.npy beside its report.json, and
// it says that no arrays were written. No temporary file is left.
func TestRunOutDirReplacesPreviousRun(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	small := []string{"run", examplePath("hgemm.yaml"), "-q", "--set", "program.m=64", "--set", "program.n=32", "--set", "program.k=48", "-o", dir}
	if _, code, err := runCLI(t, small...); code != 0 {
		t.Fatalf("exit %d: %v", code, err)
	}
	out, code, err := runCLI(t, append(small, "--numerics", "off")...)
	if code != 0 {
		t.Fatalf("exit %d: %v", code, err)
	}
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if strings.Join(names, " ") != "report.json" {
		t.Errorf("-o after a timing-only run holds %v, want only report.json", names)
	}
	if !strings.Contains(out, "only report.json written — the result arrays (.npy) need --numerics full (this run: numerics off)") {
		t.Errorf("no note about the missing arrays:\n%s", out)
	}
}

// No output replaces a file the run reads: a profile or trace written over
// the program, the machine file or an input array, -o DIR where an input
// lies (a previous run's A.npy given as inputs.a) — each refused before
// the run, the file left as it was.
func TestOutputsNotOverInputs(t *testing.T) {
	dir := t.TempDir()
	prog := filepath.Join(dir, "p.yaml")
	src, err := programs.Source("programs/examples/hgemm.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(prog, src, 0o644); err != nil {
		t.Fatal(err)
	}
	mach := filepath.Join(dir, "m.yaml")
	msrc, _ := machines.Source("ascend-910a")
	if err := os.WriteFile(mach, msrc, 0o644); err != nil {
		t.Fatal(err)
	}
	small := []string{"run", prog, "-q", "--set", "program.m=64", "--set", "program.n=32", "--set", "program.k=48"}
	in := filepath.Join(dir, "in")
	if _, code, err := runCLI(t, append(small, "-o", in)...); code != 0 {
		t.Fatalf("exit %d: %v", code, err)
	}
	inputs := []string{"--set", "program.inputs.a=" + filepath.Join(in, "A.npy"), "--set", "program.inputs.b=" + filepath.Join(in, "B.npy")}
	before := map[string][]byte{}
	for _, p := range []string{prog, mach, filepath.Join(in, "A.npy"), filepath.Join(in, "B.npy")} {
		before[p], _ = os.ReadFile(p)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--cpuprofile", prog}, "--cpuprofile " + prog + ": the run reads that file (the program file: " + prog + ")"},
		{[]string{"--trace", prog, "--numerics", "off"}, "--trace " + prog + ": the run reads that file (the program file"},
		{[]string{"-m", mach, "--memprofile", mach}, "--memprofile " + mach + `: the run reads that file (the machine file`},
		{append([]string{"--memprofile", filepath.Join(in, "B.npy")}, inputs...), `the run reads that file (key "inputs.b": ` + filepath.Join(in, "B.npy")},
		{append([]string{"-o", in}, inputs...), "-o " + in + ": the run reads " + filepath.Join(in, "A.npy") + ` there (key "inputs.a"), and a run replaces the directory's files`},
		{[]string{"-o", dir}, "-o " + dir + ": the run reads " + prog + " there (the program file)"},
	} {
		_, code, err := runCLI(t, append(slices.Clone(small), c.args...)...)
		if code != 2 || err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: exit %d: %v; want exit 2 with %q", c.args, code, err, c.want)
		}
	}
	for p, b := range before {
		if now, _ := os.ReadFile(p); string(now) != string(b) {
			t.Errorf("%s changed", p)
		}
	}
	// An input reached by a link into the -o directory.
	link := filepath.Join(dir, "a-link.npy")
	if err := os.Symlink(filepath.Join(in, "A.npy"), link); err == nil {
		args := append(slices.Clone(small), "--set", "program.inputs.a="+link, "--set", "program.inputs.b="+filepath.Join(in, "B.npy"), "-o", in)
		if _, code, err := runCLI(t, args...); code != 2 || err == nil || !strings.Contains(err.Error(), "(a link to "+filepath.Join(in, "A.npy")+") there") {
			t.Errorf("an input linked into -o: exit %d: %v", code, err)
		}
	}
	// A link in the -o directory is said to be one (it was "a file a run
	// does not write", though the run writes A.npy).
	linked := filepath.Join(dir, "linked")
	os.MkdirAll(linked, 0o755)
	os.WriteFile(filepath.Join(linked, "report.json"), []byte(`{"version": "x", "machine": "m", "sim": {}}`), 0o644)
	if err := os.Symlink(filepath.Join(in, "A.npy"), filepath.Join(linked, "A.npy")); err == nil {
		if _, code, err := runCLI(t, append(slices.Clone(small), "-o", linked)...); code != 2 || err == nil || !strings.Contains(err.Error(), `holds "A.npy", a link, which a run would replace`) {
			t.Errorf("a link in -o: exit %d: %v", code, err)
		}
	}
	// A cluster file's node file.
	csrc, _ := cluster.Source("cloudbrain2")
	nsrc, _ := cluster.Source("cloudbrain2-node")
	cfile, nfile := filepath.Join(dir, "c.yaml"), filepath.Join(dir, "n.yaml")
	os.WriteFile(cfile, []byte(strings.Replace(string(csrc), "node: cloudbrain2-node", "node: n.yaml", 1)), 0o644)
	os.WriteFile(nfile, nsrc, 0o644)
	_, code, err := runCLI(t, "run", examplePath("lu-cluster-small.yaml"), "-q", "--numerics", "off", "-m", cfile, "--cpuprofile", nfile)
	if code != 2 || err == nil || !strings.Contains(err.Error(), "the run reads that file (a cluster or node description: "+nfile) {
		t.Errorf("--cpuprofile over a cluster's node file: exit %d: %v", code, err)
	}
	if got, _ := os.ReadFile(nfile); string(got) != string(nsrc) {
		t.Error("the node file was replaced")
	}
	// An input outside the -o directory: the run writes its arrays.
	if _, code, err := runCLI(t, append(append(slices.Clone(small), inputs...), "-o", filepath.Join(dir, "out"))...); code != 0 {
		t.Errorf("inputs from another directory: exit %d: %v", code, err)
	}
}

// The exit code of an interrupted run is 128 + the signal's number.
func TestInterruptExit(t *testing.T) {
	err := fmt.Errorf("stopped after 1ms of simulated time: %w", &interrupted{os.Interrupt})
	e := interruptExit(err)
	if exitCode(e) != 130 || e.Error() != "stopped after 1ms of simulated time: interrupted by SIGINT" {
		t.Errorf("interruptExit = %v (exit %d)", e, exitCode(e))
	}
	if e := interruptExit(&interrupted{syscall.SIGTERM}); exitCode(e) != 143 {
		t.Errorf("SIGTERM: exit %d", exitCode(e))
	}
	if interruptExit(errors.New("deadlock")) != nil {
		t.Error("a deadlock taken as an interruption")
	}
}

// A SIGINT stops a run cleanly, also when the process was started with
// SIGINT ignored (as a script starts a background job): exit 130 and one
// line saying so — and promptly, wherever the run is when it comes. The
// signal comes once the run has used a given CPU time (Linux; elsewhere
// that much wall time): a point in its work whatever the machine's load,
// where wall time put it in another phase on a loaded machine (the ozaki
// cases meant ADP's plan and met the inputs, drawn deaf to the signal:
// 10 s under load 6–10). The run must then end within a wall-clock
// budget, loose enough for a loaded machine, having used at most
// interruptCPU more CPU time: a phase deaf to the signal runs on to its
// end, its CPU time whatever the load.
func TestRunInterrupted(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command")
	}
	bin := filepath.Join(t.TempDir(), "davinci-sim")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	// 2^21 nops per core on 32 cores, 2^26 in all (the most the streams
	// may hold together): a core takes them in one event (they cost no
	// simulated time), and the static check and the expansion before the
	// run walk them too; it ran ~130 s deaf to the signal (at 2^26 a core).
	nops := filepath.Join(t.TempDir(), "nops.yaml")
	if err := os.WriteFile(nops, []byte("kind: asm\ncores: 32\nnumerics: off\nasm: |\n  repeat 2097152 {\n    nop\n  }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ozaki := []string{examplePath("b200-ozaki.yaml"), "--numerics", "sampled", "--set", "program.m=4096", "--set", "program.n=4096", "--set", "program.k=4096"}
	for _, c := range []struct {
		name   string
		args   []string
		after  time.Duration // the run's CPU time when SIGINT comes
		want   string        // stderr's one line ends so
		within time.Duration // the run must end this soon after the signal (0: 20 s)
		cpu    time.Duration // having used at most this much more CPU time (0: interruptCPU)
	}{
		{"in the event loop", []string{examplePath("lu-fused-32k.yaml")}, 300 * time.Millisecond, "interrupted by SIGINT\n", 0, 0},
		{"in one long event (asm nops)", []string{nops}, 1500 * time.Millisecond, "interrupted by SIGINT\n", 2 * time.Second, 0},
		// A cluster's engine (it exited 1: its stop error dropped the signal).
		{"in a cluster run", []string{examplePath("lu-cluster-small.yaml"), "--numerics", "off", "--set", "program.n=16384"}, 1500 * time.Millisecond, "interrupted by SIGINT\n", 0, 0},
		// Before the run: the golden model of sampled numerics, past the
		// matrix's generation and its conversion to the trailing matrix
		// (~2.5 s of CPU here; the conversion does not look at the signal:
		// at n = 16384 it ran ~5 s of CPU, 26 s at load 9, deaf). It looks
		// between tile rows: it stopped 0.05–0.25 s of CPU after the signal.
		{"in the golden model", []string{examplePath("lu-fused.yaml"), "--numerics", "sampled", "--set", "program.n=8192"}, 4 * time.Second,
			"interrupted by SIGINT\n", 0, time.Second},
		// Scheme auto's own runs (accuracy samples, then the candidates'
		// timing: ~20 s here; they ran on deaf to the signal, exit 0). A
		// sample run's numerics (its FP64 reference) ran on 0.05–0.5 s of
		// CPU after it until they asked the context too (1068a9c); the
		// allowance is kept for this loaded VM.
		{"in scheme auto's runs", []string{examplePath("a100-emulated-gemm.yaml"), "-m", "h100-sxm", "--numerics", "off", "--set", "program.scheme=auto",
			"--set", "program.target_bits=22", "--set", "program.m=4096", "--set", "program.n=4096", "--set", "program.k=4096"}, 1500 * time.Millisecond,
			"interrupted by SIGINT\n", 5 * time.Second, 2 * time.Second},
		// Ozaki's inputs (two 4096² FP64 matrices, ~1.2 s of CPU: drawn
		// deaf to the signal, 10 s under load), ADP's plan and the slices,
		// computed while the program is built (the ESC ran ~7 s deaf to the
		// signal at 4096³, minutes at 16384³).
		{"in ozaki's inputs", ozaki, 400 * time.Millisecond, "interrupted by SIGINT\n", 3 * time.Second, 0},
		{"in ozaki's plan", ozaki, 2 * time.Second, "interrupted by SIGINT\n", 3 * time.Second, 0},
		// Ozaki II's residues (~10 s at 4096³, ~40 s at 8192³, deaf).
		{"in ozaki-ii's residues", append(slices.Clone(ozaki), "--set", "program.method=ozaki-ii", "--set", "program.precision="), 3 * time.Second,
			"interrupted by SIGINT\n", 3 * time.Second, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			// sh -c 'trap "" INT; exec …': the command starts with SIGINT ignored.
			cmd := exec.Command("sh", append([]string{"-c", `trap "" INT; exec "$0" run "$@"`, bin}, c.args...)...)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			used, measured, ended := awaitCPU(cmd.Process.Pid, c.after, done)
			if ended {
				t.Fatalf("the run ended before %v of CPU time (exit %d):\n%s", c.after, cmd.ProcessState.ExitCode(), stderr.String())
			}
			if err := cmd.Process.Signal(os.Interrupt); err != nil {
				t.Fatal(err)
			}
			within := c.within
			if within == 0 {
				within = 20 * time.Second
			}
			sent := time.Now()
			select {
			case <-done:
			case <-time.After(within):
				cmd.Process.Kill()
				<-done
				t.Fatalf("SIGINT did not stop the run within %v; stderr:\n%s", within, stderr.String())
			}
			st := cmd.ProcessState
			more := st.UserTime() + st.SystemTime() - used
			t.Logf("SIGINT at %v of CPU time: the run ended %v later, %v of CPU time more: %s", used, time.Since(sent).Round(time.Millisecond),
				more.Round(time.Millisecond), strings.TrimSpace(stderr.String()))
			cpu := c.cpu
			if cpu == 0 {
				cpu = interruptCPU
			}
			if measured && more > cpu {
				t.Errorf("the run used %v of CPU time after SIGINT (at %v), more than %v: %s", more.Round(time.Millisecond), used, cpu, strings.TrimSpace(stderr.String()))
			}
			if code := st.ExitCode(); code != 130 {
				t.Errorf("exit %d, want 130; stderr:\n%s", code, stderr.String())
			}
			if msg := stderr.String(); !strings.HasSuffix(msg, c.want) || strings.Count(msg, "\n") != 1 {
				t.Errorf("stderr %q: want one line ending in %q", msg, c.want)
			}
		})
	}
}

// interruptCPU bounds the CPU time a run uses after SIGINT, wherever it
// is (the cases took 15–130 ms, at load 6–14 too).
const interruptCPU = 500 * time.Millisecond

// awaitCPU waits until the process pid has used cpu of CPU time (read
// from /proc), or has ended (done: its Wait's), and returns the CPU time
// it had used. Without /proc it waits cpu of wall time (measured false).
func awaitCPU(pid int, cpu time.Duration, done <-chan error) (used time.Duration, measured, ended bool) {
	if _, ok := cpuTime(pid); !ok {
		select {
		case <-done:
			return 0, false, true
		case <-time.After(cpu):
			return 0, false, false
		}
	}
	for {
		select {
		case <-done:
			return 0, true, true
		case <-time.After(5 * time.Millisecond):
		}
		if used, ok := cpuTime(pid); !ok || used >= cpu {
			return used, ok, false
		}
	}
}

// cpuTime returns the user and system time the process pid has used, from
// /proc/pid/stat (in clock ticks of 10 ms: Linux's USER_HZ); false where
// that cannot be read.
func cpuTime(pid int) (time.Duration, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	i := strings.LastIndexByte(string(b), ')') // (the command's name may hold spaces and parentheses)
	if err != nil || i < 0 {
		return 0, false
	}
	f := strings.Fields(string(b[i+1:])) // state, ppid, … utime (the 12th), stime
	if len(f) < 13 {
		return 0, false
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return time.Duration(utime+stime) * 10 * time.Millisecond, true
}

// Settings a run accepts but cannot use are named in a note rather than
// passing silently: a --trace-window after the run's end (one chip and a
// cluster), sampling.windows at fidelity full.
func TestRunNotesUnusedSettings(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", examplePath("cube-peak.yaml"), "-q", "--trace", filepath.Join(dir, "a.json"), "--trace-window", "1ms..2ms"},
			"note: --trace-window 1ms..2ms starts after the run ended (at 132.352µs)"},
		{[]string{"run", examplePath("lu-cluster-small.yaml"), "-q", "--numerics", "off", "--trace", filepath.Join(dir, "b.json"), "--trace-window", "1s..2s"},
			"note: --trace-window 1s..2s starts after the run ended"},
		{[]string{"run", examplePath("lu-cluster-small.yaml"), "-q", "--numerics", "off", "--set", "program.sampling.windows=4"},
			"note: sampling.windows (4) applies to fidelity sampled: not used at fidelity full"},
	} {
		out, code, err := runCLI(t, c.args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %v", c.args, code, err)
		}
		if !strings.Contains(out, c.want) {
			t.Errorf("%v: output lacks %q:\n%s", c.args, c.want, out)
		}
	}
	// A window inside the run has no note.
	out, _, _ := runCLI(t, "run", examplePath("cube-peak.yaml"), "-q", "--trace", filepath.Join(dir, "c.json"), "--trace-window", "0us..50us")
	if strings.Contains(out, "--trace-window") {
		t.Errorf("a window inside the run is noted:\n%s", out)
	}
}

// A run of ~10⁶ s on 108 SMs: the lanes' times summed over the cores
// exceed int64 picoseconds; the report's fractions stay in [0, 1] and sum
// to 1 per pipe (they were negative).
func TestLongRunFractions(t *testing.T) {
	out, code, err := runCLI(t, "run", examplePath("a100-hgemm.yaml"), "-q", "--numerics", "off", "--json", "--set", "machine.gm.bandwidth=1B/s")
	if code != 0 {
		t.Fatalf("exit %d: %v", code, err)
	}
	var rep struct {
		Time  struct{ Seconds float64 }
		Pipes map[string]struct {
			Busy  float64
			Stall map[string]float64
		}
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Time.Seconds < 1e6 || len(rep.Pipes) == 0 {
		t.Fatalf("time %v s, %d pipes: not the long run meant", rep.Time.Seconds, len(rep.Pipes))
	}
	for name, p := range rep.Pipes {
		sum := p.Busy
		for c, f := range p.Stall {
			if f < 0 || f > 1 {
				t.Errorf("pipe %s: %s %v", name, c, f)
			}
			sum += f
		}
		if math.Abs(sum-1) > 1e-9 {
			t.Errorf("pipe %s: fractions sum to %v", name, sum)
		}
	}
}

// -o with full numerics: dgemm writes its FP64 arrays (it wrote none), a
// kind without result arrays (lu-fused) says so.
func TestOutDirArraysByKind(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "dg")
	if _, code, err := runCLI(t, "run", examplePath("a100-dgemm.yaml"), "-q", "--numerics", "full", "--set", "program.m=32", "--set", "program.n=16", "--set", "program.k=8", "-o", out); code != 0 {
		t.Fatalf("dgemm: exit %d: %v", code, err)
	}
	for name, size := range map[string]int64{"A.npy": 128 + 32*8*8, "B.npy": 128 + 8*16*8, "C.npy": 128 + 32*16*8} {
		if st, err := os.Stat(filepath.Join(out, name)); err != nil || st.Size() != size {
			t.Errorf("dgemm -o: %s: %v (want %d bytes)", name, err, size)
		}
	}
	msg, code, err := runCLI(t, "run", examplePath("lu-fused-small.yaml"), "-q", "-o", filepath.Join(dir, "lu"))
	if code != 0 || !strings.Contains(msg, "only report.json written — kind lu-fused writes no result arrays") {
		t.Errorf("lu-fused -o: exit %d (%v): %q", code, err, msg)
	}
}

// -o notes say why no arrays were written: a kind without them
// (gpu-bench, also with --numerics off, which it accepts), an asm program
// listing no outputs, a timing-only GEMM.
func TestOutDirNotes(t *testing.T) {
	dir := t.TempDir()
	for i, c := range []struct {
		args []string
		want string
	}{
		{[]string{examplePath("a100-tensor-peak.yaml"), "--numerics", "off"}, "kind gpu-bench writes no result arrays"},
		// (not "need --numerics full": it writes none with numerics full either)
		{[]string{examplePath("lu-fused-small.yaml"), "--numerics", "off"}, "kind lu-fused writes no result arrays"},
		{[]string{examplePath("cube-peak.yaml"), "--numerics", "full"}, "the program lists no outputs (key outputs)"},
		{[]string{examplePath("hgemm.yaml"), "--numerics", "off", "--set", "program.m=64", "--set", "program.n=64", "--set", "program.k=64"}, "need --numerics full (this run: numerics off)"},
	} {
		args := append(append([]string{"run"}, c.args...), "-q", "-o", filepath.Join(dir, fmt.Sprint(i)))
		msg, code, err := runCLI(t, args...)
		if code != 0 || !strings.Contains(msg, c.want) {
			t.Errorf("%v: exit %d (%v): %q, want %q", c.args, code, err, msg, c.want)
		}
	}
}

// Bad input is printed in one line even where several problems were found
// together (a machine file with two values of the wrong shape, two
// invalid values: the machines package joins them a line each); other
// failures print as they are.
func TestErrorTextOneLine(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "m.yaml")
	if err := os.WriteFile(bad, []byte("cores: [1]\nname: [x]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, code, err := runCLI(t, "run", examplePath("hgemm.yaml"), "-q", "-m", bad)
	if code != 2 || err == nil || !strings.Contains(err.Error(), "\n") {
		t.Fatalf("exit %d, %v: want bad input reporting two problems", code, err)
	}
	got := errorText(err, code)
	if strings.Contains(got, "\n") || !strings.Contains(got, `m.yaml:1: key "cores" wants a value, not a list; `) || !strings.Contains(got, `m.yaml:2: key "name"`) {
		t.Errorf("printed %q: want both problems in one line", got)
	}
	// cobra's unknown command, its suggestions on lines of their own.
	_, code, err = runCLI(t, "runn", "x.yaml")
	if got := errorText(err, code); code != 2 || got != `unknown command "runn" for "davinci-sim" (did you mean run?); see davinci-sim --help` {
		t.Errorf("a misspelt command: exit %d, printed %q", code, got)
	}
	if failure := errors.New("a\nb"); errorText(failure, 1) != "a\nb" {
		t.Errorf("a failure's text changed: %q", errorText(failure, 1))
	}
}

// An error line shows the control and format characters of the input it
// quotes escaped (a terminal would act on an escape sequence), keeping
// its own line breaks' joins and printable text as they are.
func TestErrorTextVisible(t *testing.T) {
	for in, want := range map[string]string{
		"--set machine.description=a\x1b[31mred: bad": `--set machine.description=a\x1b[31mred: bad`,
		"-m a100\x1b[2J: unknown":                     `-m a100\x1b[2J: unknown`,
		"a\u2028b \u202e c\u0085d":                    `a\u2028b \u202e c\u0085d`,
		"two\nlines, ünïcode, tab\there":              "two; lines, ünïcode, tab\there",
	} {
		if got := errorText(errors.New(in), 2); got != want {
			t.Errorf("errorText(%q) = %q, want %q", in, got, want)
		}
	}
}

// More hostile cases (kept apart from the list above, which others edit).
func init() {
	hostileCases = append(hostileCases,
		// A duration flag's refusal names the flag and what it takes,
		// not Go's "time: missing unit in duration".
		hostileCase{name: "a duration flag without a unit", args: []string{"sweep", "s.yaml", "-o", "@DIR@/out", "--point-timeout", "5"},
			want: `--point-timeout "5": must be a duration with a unit, e.g. 30m or 90s`},
		hostileCase{name: "a duration flag given a word", args: []string{"sweep", "s.yaml", "-o", "@DIR@/out", "--point-timeout", "soon"},
			want: `--point-timeout "soon": must be a duration with a unit, e.g. 30m or 90s`},
		hostileCase{name: "a duration flag out of range", args: []string{"sweep", "s.yaml", "-o", "@DIR@/out", "--point-timeout", "9999999h"},
			want: `--point-timeout "9999999h": out of range (at most 2562047h)`},
		// A program file given as the machine says so (it said only
		// that its kind is no machine kind).
		hostileCase{name: "a program file given as the machine", args: []string{"run", examplePath("hgemm.yaml"), "-q", "-m", examplePath("hgemm.yaml")},
			want: `-m ` + examplePath("hgemm.yaml") + `: a program file (kind hgemm), not a machine: give an embedded machine's name or a machine file (davinci-sim machines lists them)`},
		hostileCase{name: "a program file given to machines -m", args: []string{"machines", "-m", examplePath("lu-fused.yaml")},
			want: `machines -m ` + examplePath("lu-fused.yaml") + `: a program file (kind lu-fused), not a machine`},
		hostileCase{name: "a program file given as machines' NAME", args: []string{"machines", examplePath("hgemm.yaml"), "--set", "cores=4"},
			want: `machines ` + examplePath("hgemm.yaml") + `: a program file (kind hgemm), not a machine`},
		hostileCase{name: "a program file given as --set program.machine", args: []string{"run", examplePath("sgemm-cube.yaml"), "-q", "--set", "program.machine=" + examplePath("hgemm.yaml")},
			want: `--set program.machine=` + examplePath("hgemm.yaml") + `: a program file (kind hgemm), not a machine`},
	)
}
