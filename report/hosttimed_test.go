package report

import "testing"

// The keys of the host's wall clock, and the sections holding them, are
// told apart from the simulation's (a study recording them is not
// reproducible: the sweep warns).
func TestHostTimed(t *testing.T) {
	for path, want := range map[string]bool{
		"sim.wall_seconds": true, "sim.events_per_second": true, "sim.discarded_wall_seconds": true,
		"sim.runs_before_wall_seconds": true, "sim.kernel_wall_seconds": true, "sim": true, "SIM.Wall_Seconds": true,
		"sim.events": false, "sim.skipped_seconds": false, "time.seconds": false, "time": false,
		"flops.tflops": false, "error.bits": false, "program.m": false, "nope": false, "cores.0.pipes": false,
	} {
		if got := HostTimed(path); got != want {
			t.Errorf("HostTimed(%q) = %v, want %v", path, got, want)
		}
	}
}
