package cube

// Workers returns the goroutines a host computation of a run's numerics
// may use: GOMAXPROCS, bounded by SetMaxWorkers (a sweep running its
// points on every processor sets 1) — the bound the package's own large
// MMAD calls keep, for other numerics work of a run (the exact references
// of programs' error reports).
func Workers() int { return workers() }
