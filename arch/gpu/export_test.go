package gpu

// SetEagerWake switches the test-only eager wake-up schedule (SMs also wake
// up at every passing: see Core.catchUp).
func SetEagerWake(on bool) { eagerWake = on }

// SetRuns switches the lanes' runs of matrix and element-wise
// instructions (ctaLane.run) on or off.
func SetRuns(on bool) { noRuns = !on }

// SetQuietDone switches Core.quietDone and the lazy signals and landings
// (Core.eagerLandings) on or off.
func SetQuietDone(on bool) { noQuiet = !on }
