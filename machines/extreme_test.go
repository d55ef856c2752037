package machines

import (
	"strings"
	"testing"
)

// Values so extreme that a run's time would pass the simulated range are
// refused up front, naming the key and the constraint: a clock below
// 1 MHz, a cycle count above a million, a path under a byte a cycle, a
// unit under one operation a cycle, an efficiency under 1 %. Before, they
// passed validation and the run stopped deep inside naming an instruction.
func TestExtremeValuesRefused(t *testing.T) {
	for _, c := range []struct{ machine, set, want string }{
		{"ascend-910a", "core.clock=1e-6Hz", `key "core.clock": must be in [1MHz, 1THz] (a cycle of 1 ps to 1 µs; got 1e-06Hz)`},
		{"ascend-910a", "core.clock=999kHz", `key "core.clock": must be in [1MHz, 1THz] (a cycle of 1 ps to 1 µs; got 999kHz)`},
		{"ascend-910a", "core.clock=1e30GHz", `key "core.clock": must be in [1MHz, 1THz] (a cycle of 1 ps to 1 µs; got 1e+27THz)`}, // (was 9.999999999999999e+26THz)
		{"a100", "core.clock=1e-6Hz", `key "core.clock": must be in [1MHz, 1THz] (a cycle of 1 ps to 1 µs; got 1e-06Hz)`},
		{"mi210", "core.clock=1e-6Hz", `key "core.clock": must be in [1MHz, 1THz] (a cycle of 1 ps to 1 µs; got 1e-06Hz)`},
		{"ascend-910a", "host.clock=1e-300Hz", `key "host.clock": must be in [1MHz, 1THz] (a cycle of 1 ps to 1 µs; got 1e-300Hz)`},
		{"ascend-910a", "host.fp64_flops_per_cycle=1e-300", `key "host.fp64_flops_per_cycle": must be in 1..1e+09 (got 1e-300)`},
		{"a100", "core.tensor.sustained_clock.int8=1e-6Hz", `key "core.tensor.sustained_clock.int8": must be ≥ 1MHz: the clock the SM sustains under INT8 tensor load (got 1e-06Hz)`},

		{"ascend-910a", "gm.latency_cycles=10000000000000000", `key "gm.latency_cycles": must be in 0..1e+06 cycles (got 1e+16)`},
		{"a100", "gm.latency_cycles=10000000000000000", `key "gm.latency_cycles": must be in 0..1e+06 cycles (got 1e+16)`},
		{"a100", "l2.far_latency_cycles=2000000", `key "l2.far_latency_cycles": must be in 0..1e+06 cycles (got 2e+06)`},
		{"mi300x", "llc.latency_cycles=2000000", `key "llc.latency_cycles": must be in 0..1e+06 cycles (got 2e+06)`},
		{"ascend-910a", "core.paths.GM_L1.latency_cycles=2000000", `key "core.paths.GM_L1.latency_cycles": must be in 0..1e+06 cycles (got 2e+06)`},
		{"ascend-910a", "core.cube.startup_cycles=9000000000000000000", `key "core.cube.startup_cycles": must be in 0..1e+06 cycles (got 9e+18)`},
		{"ascend-910a", "core.vector.startup_cycles=2000000", `key "core.vector.startup_cycles": must be in 0..1e+06 cycles (got 2e+06)`},
		{"ascend-910a", "core.vector.cycles_per_repeat=1e300", `key "core.vector.cycles_per_repeat": must be in [0.015625, 1e+06] cycles (got 1e+300)`},
		{"ascend-910a", "core.scalar.issue_cycles=2000000", `key "core.scalar.issue_cycles": must be in 0..1e+06 cycles (got 2e+06)`},
		{"a100", "core.tensor.latency_cycles.fp16=2000000", `key "core.tensor.latency_cycles.fp16": must be in 0..1e+06 cycles (got 2e+06)`},
		{"mi210", "core.mfma.dependent_wait_cycles=2000000", `key "core.mfma.dependent_wait_cycles": must be in 0..1e+06 cycles (got 2e+06)`},
		{"mi210", "core.mfma.latency_cycles=2000000", `key "core.mfma.latency_cycles": must be in 0..1e+06 cycles (got 2e+06)`},
		{"mi210", "core.valu.latency_cycles=2000000", `key "core.valu.latency_cycles": must be in 1..1e+06 cycles (got 2000000)`},

		{"ascend-910a", "core.paths.GM_L1.bytes_per_cycle=1e-9", `key "core.paths.GM_L1.bytes_per_cycle": must be ≥ 1: a path moves at least a byte a cycle (got 1e-09)`},
		{"mi210", "core.paths.GM_VGPR.bytes_per_cycle=1e-12", `key "core.paths.GM_VGPR.bytes_per_cycle": must be ≥ 1: a path moves at least a byte a cycle (got 1e-12)`},
		{"a100", "core.paths.SMEM_RF.bytes_per_cycle=0.5", `key "core.paths.SMEM_RF.bytes_per_cycle": must be ≥ 1: a path moves at least a byte a cycle (got 0.5)`},
		{"a100", "core.tensor.flops_per_cycle.fp16=1e-300", `key "core.tensor.flops_per_cycle.fp16": must be 0 (unsupported) or in 1..1e+09 (got 1e-300)`},
		{"a100", "core.cuda_cores.fp32_flops_per_cycle=1e-300", `key "core.cuda_cores.fp32_flops_per_cycle": must be in 1..1e+09 (got 1e-300)`},
		{"mi210", "core.valu.fp64_flops_per_cycle=1e-300", `key "core.valu.fp64_flops_per_cycle": must be in 1..1e+09 (got 1e-300)`},
		{"a100", "core.tensor.efficiency=1e-300", `key "core.tensor.efficiency": must be in [0.01, 1] (got 1e-300)`},
		{"h100-sxm", "core.tensor.mma_sync_efficiency=1e-300", `key "core.tensor.mma_sync_efficiency": must be 0 (not measured) or in [0.01, 1] (got 1e-300)`},
	} {
		ovs, err := ParseOverrides([]string{"machine." + c.set})
		if err != nil {
			t.Fatal(err)
		}
		_, err = Load(c.machine, ovs)
		if err == nil {
			t.Errorf("%s --set %s: accepted; want %s", c.machine, c.set, c.want)
			continue
		}
		if got := err.Error(); !hasLine(got, c.want) {
			t.Errorf("%s --set %s:\n got %q\nwant one line ending %q", c.machine, c.set, got, c.want)
		}
	}
	// The floors themselves are accepted.
	for _, c := range []struct{ machine, set string }{
		{"ascend-910a", "core.clock=1MHz"}, {"v100", "core.clock=1MHz"}, {"mi210", "core.clock=1MHz"},
		{"ascend-910a", "gm.latency_cycles=1000000"}, {"ascend-910a", "core.paths.GM_L1.bytes_per_cycle=1"},
		{"a100", "core.cuda_cores.fp64_flops_per_cycle=1"}, {"h100-sxm", "core.tensor.efficiency=0.01"},
	} {
		ovs, err := ParseOverrides([]string{"machine." + c.set})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Load(c.machine, ovs); err != nil {
			t.Errorf("%s --set %s: %v", c.machine, c.set, err)
		}
	}
}

// hasLine reports whether msg is one line ending in want.
func hasLine(msg, want string) bool {
	return strings.HasSuffix(msg, want) && !strings.Contains(msg, "\n")
}
