package davinci_test

import (
	"fmt"
	"testing"

	"github.com/davinci-sim/davinci-sim/arch"
	"github.com/davinci-sim/davinci-sim/arch/archtest"
	"github.com/davinci-sim/davinci-sim/arch/davinci"
	"github.com/davinci-sim/davinci-sim/isa"
)

// The DaVinci core passes the machine-kind conformance suite (package
// archtest): every picosecond of every pipe attributed to one cause,
// determinism, observing without changing the run, deferred wake-ups equal
// to eager ones, occupancy within capacity, deadlocks naming the waiter —
// on the microbenchmarks, small SGEMM-cube runs (functional on 4 cores;
// single-buffered elementwise timing), host-driven LU, and hand-written
// programs that fill every buffer, fill the issue queues and stall on
// barriers, latency and sync_all.
func TestConformance(t *testing.T) {
	m := archtest.Machine(t, "ascend-910a")
	archtest.Run(t, archtest.Subject{
		Machine: m,
		Cases: []archtest.Case{
			archtest.ProgramFile(t, "flag-pingpong", "programs/examples/flag-pingpong.yaml", nil, expectInstrs(isa.MTE2, 2000), expectInstrs(isa.MTE3, 2000)),
			archtest.ProgramFile(t, "l1-l0-bandwidth", "programs/examples/l1-l0-bandwidth.yaml", nil, expectLaneStall(isa.MTE1, arch.Busy)),
			archtest.ProgramFile(t, "cube-peak", "programs/examples/cube-peak.yaml", nil, expectLaneStall(isa.M, arch.Busy)),
			archtest.ProgramFile(t, "gm-bandwidth-1core", "programs/examples/gm-bandwidth-1core.yaml", nil, expectLaneStall(isa.MTE2, arch.Busy)),
			mustMode(t, arch.Functional, archtest.ProgramFile(t, "sgemm-cube-functional-4core", "programs/examples/sgemm-cube.yaml",
				[]string{"program.m=352", "program.n=352", "program.k=256", "program.numerics=full", "machine.cores=4"},
				expectCoresRan(4))),
			mustMode(t, arch.Timing, archtest.ProgramFile(t, "sgemm-cube-single-elementwise", "programs/examples/sgemm-cube.yaml",
				[]string{"program.m=528", "program.n=352", "program.k=320", "program.numerics=off", "program.buffering=single",
					"program.accumulation=elementwise", "program.tiling.bm=96", "program.tiling.bn=96"})),
			archtest.ProgramFile(t, "gm-bandwidth-32core", "programs/examples/gm-bandwidth.yaml", nil, expectLaneStall(isa.MTE2, arch.Bandwidth)),
			mustMode(t, arch.Timing, archtest.ProgramFile(t, "sgemm-cube-8core-l2", "programs/examples/sgemm-cube.yaml",
				[]string{"program.m=704", "program.n=704", "program.k=512", "program.numerics=off", "machine.cores=8"},
				expectCoresRan(8), expectL2Hits())),
			archtest.ProgramFile(t, "lu-fused-small-hosted", "programs/examples/lu-fused-small.yaml", nil, expectFlops()),
			{
				Name: "alloc-free-at-capacity", Mode: arch.Functional,
				Program: asmProgram("alloc-free-at-capacity", allocFreeAsm, 2),
				Prepare: fillGM(2 << 20),
				Expect:  expectBuffersFull(2),
			},
			{
				Name: "full-issue-queues", Mode: arch.Timing,
				Program: asmProgram("full-issue-queues", fullQueuesAsm, 1),
				Expect:  expectLaneStall(isa.S, arch.QueueFull),
			},
			{
				Name:    "full-issue-queues-depth-2",
				Machine: archtest.Machine(t, "ascend-910a", "machine.core.queue_depth=2"),
				Mode:    arch.Functional,
				Program: asmProgram("full-issue-queues-depth-2", fullQueuesAsm, 2),
				Prepare: fillGM(1 << 20),
				Expect:  expectLaneStall(isa.S, arch.QueueFull),
			},
			{
				Name: "barriers-latency-sync-all", Mode: arch.Functional,
				Program: asmProgram("barriers-latency-sync-all", barriersAsm, 4),
				Prepare: fillGM(1 << 20),
				Expect: archtest.All(expectLaneStall(isa.MTE2, arch.Barrier), expectLaneStall(isa.MTE2, arch.Latency),
					expectLaneStall(isa.S, arch.Barrier), expectLaneStall(isa.S, arch.Busy), expectCoresRan(4)),
			},
		},
		Deadlocks: []archtest.Deadlock{
			{
				Case: archtest.ProgramFile(t, "deadlock-example", "programs/examples/deadlock.yaml", nil, nil),
				Want: []string{"core 0: pipe M: wait_flag MTE1->M id 3"},
			},
			{
				Case: archtest.Case{Name: "deadlock-sync-all", Mode: arch.Timing, Program: func() (isa.Program, error) {
					// Core 0 waits at sync_all for core 1, which waits on
					// a flag nobody sets.
					p := isa.Program{Name: "deadlock-sync-all", Cores: make([]isa.Stream, 2)}
					for i, src := range []string{"sync_all\n", "scalar cycles=3\nwait_flag MTE3 S 1\nsync_all\n"} {
						f, err := isa.Parse(fmt.Sprintf("core%d.s", i), src)
						if err != nil {
							return isa.Program{}, err
						}
						p.Cores[i] = f.Stream(i)
					}
					return p, nil
				}},
				Want: []string{"core 0: pipe S: sync_all (1 of 2 cores arrived)", "core 1: pipe S: wait_flag MTE3->S id 1 (line 2)"},
			},
		},
		EagerWake: davinci.SetEagerWake,
	})
}

// Every buffer filled to capacity (L1 and UB in two regions), freed and
// refilled in other shapes, with data moving through each: GM→L1→L0A/L0B,
// the cube into L0C, L0C→UB, a vector add, UB→GM. Frees wait for the pipes
// that use the region (flags to S).
const allocFreeAsm = `
repeat 3 i {
  alloc L1 off=0 size=512KiB name=l1a
  alloc L1 off=512KiB size=512KiB name=l1b
  alloc L0A off=0 size=64KiB name=a
  alloc L0B off=0 size=64KiB name=b
  alloc L0C off=0 size=256KiB name=c
  alloc UB off=0 size=128KiB name=u0
  alloc UB off=128KiB size=128KiB name=u1
  mte2.copy gm=core*512KiB l1=0 bytes=512KiB
  mte2.copy gm=1MiB+i*32KiB l1=512KiB bytes=64KiB
  set_flag MTE2 MTE1 0
  wait_flag MTE2 MTE1 0
  mte1.load l0a=0 l1=0 rows=128 cols=256 dtype=fp16
  mte1.load l0b=0 l1=512KiB rows=256 cols=128 dtype=fp16
  set_flag MTE1 M 0
  wait_flag MTE1 M 0
  m.mmad c=0 a=0 b=0 m=128 k=256 n=128 in=fp16 out=fp32 init
  set_flag M V 0
  wait_flag M V 0
  v.l0c ub=0 l0c=0 rows=128 cols=128 in=fp32 out=fp32
  v.add dst=128KiB src0=0 src1=0 dtype=fp32 repeat=255
  set_flag V MTE3 0
  wait_flag V MTE3 0
  mte3.copy ub=128KiB gm=4MiB+core*64KiB bytes=64KiB
  set_flag MTE3 S 0
  wait_flag MTE3 S 0
  free name=u0
  free name=u1
  free name=c
  free name=a
  free name=b
  free name=l1b
  alloc UB off=0 size=256KiB name=whole
  alloc L0C off=0 size=128KiB name=c0
  alloc L0C off=128KiB size=128KiB name=c1
  mte2.copy gm=core*64KiB ub=0 bytes=256KiB
  set_flag MTE2 S 1
  wait_flag MTE2 S 1
  free UB off=0
  free name=c1
  free L0C off=0
  free name=l1a
}
`

// Long-running instructions issued back to back: the scalar unit stalls on
// full pipe queues (V first, then M and MTE2), with flags between pipes.
const fullQueuesAsm = `
alloc UB off=0 size=256KiB name=u
alloc L0A off=0 size=32KiB name=a
alloc L0B off=0 size=32KiB name=b
alloc L0C off=0 size=64KiB name=c
alloc L1 off=0 size=256KiB name=l1
repeat 48 {
  v.add dst=0 src0=64KiB src1=128KiB dtype=fp32 repeat=64
}
repeat 40 i {
  m.mmad c=0 a=0 b=0 m=128 k=128 n=128 in=fp16 out=fp32 acc
  mte2.copy gm=core*256KiB+i*4KiB l1=0 bytes=32KiB
}
set_flag MTE2 V 0
wait_flag MTE2 V 0
set_flag M V 1
wait_flag M V 1
repeat 40 {
  v.adds dst=0 src0=0 scalar=0.5 dtype=fp32 repeat=16
  set_flag V MTE3 0
  wait_flag V MTE3 0
  mte3.copy ub=0 gm=8MiB+core*64KiB bytes=16KiB
  set_flag MTE3 V 0
  wait_flag MTE3 V 0
}
`

// Pipe barriers, set_flag waiting for transfers to land, pipe_barrier ALL,
// scalar work and sync_all, with core-dependent transfer sizes so the cores
// arrive at each barrier at different times.
const barriersAsm = `
alloc UB off=0 size=64KiB name=x
alloc L1 off=0 size=64KiB name=y
scalar cycles=10*core+5
repeat 4 i {
  mte2.copy gm=core*256KiB+i*16KiB ub=0 bytes=16384*(core+1)
  pipe_barrier MTE2
  mte2.copy gm=core*256KiB l1=0 bytes=32KiB
  set_flag MTE2 MTE3 0
  wait_flag MTE2 MTE3 0
  mte3.copy ub=0 gm=16MiB+core*64KiB bytes=16KiB
  pipe_barrier ALL
  scalar cycles=7
  sync_all
}
free name=x
free name=y
`

// asmProgram returns a Case.Program running src on cores cores.
func asmProgram(name, src string, cores int) func() (isa.Program, error) {
	return func() (isa.Program, error) {
		f, err := isa.Parse(name+".s", src)
		if err != nil {
			return isa.Program{}, err
		}
		p, err := f.Program(cores)
		p.Name = name
		return p, err
	}
}

// fillGM returns a Case.Prepare writing n bytes of FP16 values in [1, 2)
// from GM address 0.
func fillGM(n int) func(*arch.Chip) error {
	return func(c *arch.Chip) error {
		v := make([]uint16, n/2)
		for i := range v {
			v[i] = 0x3c00 | uint16(i*37%1024) // 1 + (i·37 mod 1024)/1024
		}
		return c.GM().WriteUint16s(0, v)
	}
}

// expectLaneStall: pipe p of core 0 spent time in state c.
func expectLaneStall(p isa.Pipe, c arch.Cause) func(*arch.Stats) error {
	return func(st *arch.Stats) error {
		if st.Cores[0].Lanes[p].Time[c] == 0 {
			return fmt.Errorf("core 0 pipe %s spent no time in %s", p, c)
		}
		return nil
	}
}

// expectInstrs: pipe p of core 0 executed n instructions.
func expectInstrs(p isa.Pipe, n uint64) func(*arch.Stats) error {
	return func(st *arch.Stats) error {
		if got := st.Cores[0].Lanes[p].Instrs; got != n {
			return fmt.Errorf("core 0 pipe %s executed %d instructions, want %d", p, got, n)
		}
		return nil
	}
}

// expectCoresRan: cores 0 … n−1 ran.
func expectCoresRan(n int) func(*arch.Stats) error {
	return func(st *arch.Stats) error {
		for i := range n {
			if st.Cores[i].Finish == 0 {
				return fmt.Errorf("core %d did not run", i)
			}
		}
		return nil
	}
}

// expectBuffersFull: every local buffer of cores 0 … n−1 peaked at capacity.
func expectBuffersFull(n int) func(*arch.Stats) error {
	return func(st *arch.Stats) error {
		for i := range n {
			for _, b := range st.Geometry.LocalBuffers() {
				if bs := st.Cores[i].Buffers[b]; bs.Peak != bs.Capacity {
					return fmt.Errorf("core %d buffer %s peaked at %d of %d bytes", i, st.Geometry.Buffers[b].Name, bs.Peak, bs.Capacity)
				}
			}
		}
		return nil
	}
}

// mustMode checks that a file case runs in mode want (its job decides).
func mustMode(t *testing.T, want arch.Mode, c archtest.Case) archtest.Case {
	t.Helper()
	if c.Mode != want {
		t.Fatalf("case %s runs in mode %d, want %d", c.Name, c.Mode, want)
	}
	return c
}

// expectL2Hits: some GM reads hit the L2.
func expectL2Hits() func(*arch.Stats) error {
	return func(st *arch.Stats) error {
		if st.L2HitBytes == 0 {
			return fmt.Errorf("no L2 hits")
		}
		return nil
	}
}

// expectFlops: the run executed matrix work (the host launched kernels).
func expectFlops() func(*arch.Stats) error {
	return func(st *arch.Stats) error {
		if st.MMADFlops == 0 {
			return fmt.Errorf("no MMAD flops: the host launched no GEMM kernels")
		}
		return nil
	}
}
