package arch

// HeldTasks returns the tasks host h holds and how many of them it has
// carried out (tests: what a forgetful host keeps).
func (h *Host) HeldTasks() (held, done int) { return len(h.tasks), h.pc }
