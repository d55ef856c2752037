package gpu

// SetEagerWake switches the test-only eager wake-up schedule (SMs also wake
// up at every passing: see Core.catchUp).
func SetEagerWake(on bool) { eagerWake = on }

// SetMMARuns switches the lanes' MMA runs (ctaLane.mmaRun) on or off.
func SetMMARuns(on bool) { noMMARuns = !on }

// SetQuietDone switches Core.quietDone and the lazy signals and landings
// (Core.eagerLandings) on or off.
func SetQuietDone(on bool) { noQuiet = !on }
