package davinci

// SetEagerWake switches the test-only eager wake-up schedule.
func SetEagerWake(on bool) { eagerWake = on }
