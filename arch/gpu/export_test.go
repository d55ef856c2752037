package gpu

// SetEagerPassings makes SMs wake up at their lanes' passings (see
// passing) instead of accounting them lazily; it returns a function that
// restores the default.
func SetEagerPassings() (restore func()) {
	eagerPassings = true
	return func() { eagerPassings = false }
}
