// Package sim is the discrete-event engine of davinci-sim.
//
// Simulated time is an integer number of picoseconds ([Time]); clock domains convert cycles to
// time with an integer period ([Clock]). No floating point is ever used to advance time, so runs
// are exactly reproducible.
//
// An [Engine] executes events in a total order: by time, then by priority (lower values first),
// then by the order in which they were scheduled. Identical inputs therefore give identical event
// sequences, traces and results on every machine.
//
// Components that have nothing to do schedule nothing: they sleep and are woken by the event that
// gives them work ([Waker] helps to avoid duplicate wake-ups). Components that can hold outstanding
// work register as a [Waiter]; when the event queue runs dry while some of them still report work,
// [Engine.Run] returns a [*DeadlockError] naming each blocked component and why.
//
// [Hook]s observe every executed event without changing behaviour; with none attached they cost a
// single predictable branch per event. [Engine.OnProgress] reports progress every N events.
//
// Programming errors made while scheduling (an event in the past, a priority out of range) do not
// panic: the event is dropped and the run is stopped with an error wrapping [ErrPast] or
// [ErrPriority], which Run/RunUntil return.
package sim
