package sim_test

import (
	"fmt"

	"github.com/davinci-sim/davinci-sim/sim"
)

// unit is a component that sleeps until it is given work, then takes 3 cycles per job.
type unit struct {
	name  string
	clk   sim.Clock
	eng   *sim.Engine
	waker *sim.Waker
	queue int
}

func (u *unit) Handle(now sim.Time, _ int64) {
	if u.queue == 0 {
		return // nothing to do: sleep (schedule nothing)
	}
	u.queue--
	fmt.Printf("%v: %s finishes a job, %d left\n", now, u.name, u.queue)
	if u.queue > 0 {
		u.waker.Wake(now + u.clk.Cycles(3))
	}
}

func (u *unit) Blocked() (bool, string) {
	return u.queue > 0, fmt.Sprintf("%s: %d jobs left", u.name, u.queue)
}

func Example() {
	eng := sim.NewEngine()
	clk, err := sim.NewClock(1.8e9) // period 556 ps
	if err != nil {
		panic(err)
	}
	u := &unit{name: "cube", clk: clk, eng: eng}
	u.waker = sim.NewWaker(eng, 0, u)
	eng.Register(u)

	// Work arrives at cycle 10; both requests wake the unit once.
	eng.At(clk.Cycles(10), 1, sim.HandlerFunc(func(now sim.Time, jobs int64) {
		u.queue += int(jobs)
		u.waker.Wake(clk.NextEdge(now + 1))
		u.waker.Wake(clk.NextEdge(now + 1))
	}), 2)
	if err := eng.Run(); err != nil {
		fmt.Println(err)
	}
	fmt.Println("events:", eng.Events(), "cycles:", clk.ToCycles(eng.Now()))
	// Output:
	// 6.116ns: cube finishes a job, 1 left
	// 7.784ns: cube finishes a job, 0 left
	// events: 3 cycles: 14
}

func ExampleDeadlockError() {
	eng := sim.NewEngine()
	clk, _ := sim.NewClock(1e9)
	u := &unit{name: "core 0 pipe M", clk: clk, eng: eng, queue: 1} // work but never woken
	eng.Register(u)
	fmt.Println(eng.Run())
	// Output:
	// deadlock at 0s: 1 blocked
	//   core 0 pipe M: 1 jobs left
}
