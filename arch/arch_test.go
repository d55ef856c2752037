package arch_test

import (
	"errors"
	"fmt"
	"github.com/davinci-sim/davinci-sim/arch"
	"github.com/davinci-sim/davinci-sim/arch/archtest"
	_ "github.com/davinci-sim/davinci-sim/arch/davinci"
	"math"
	"strings"
	"testing"

	"github.com/davinci-sim/davinci-sim/cube"
	"github.com/davinci-sim/davinci-sim/fp"
	"github.com/davinci-sim/davinci-sim/isa"
	"github.com/davinci-sim/davinci-sim/machines"
	"github.com/davinci-sim/davinci-sim/sim"
)

func machine(t testing.TB, sets ...string) *machines.Machine {
	t.Helper()
	return archtest.Machine(t, "ascend-910a", sets...)
}

func asm(t testing.TB, src string, cores int) isa.Program {
	t.Helper()
	f, err := isa.Parse("test.s", src)
	if err != nil {
		t.Fatal(err)
	}
	p := isa.Program{Name: "test", Cores: make([]isa.Stream, cores)}
	for i := range p.Cores {
		p.Cores[i] = f.Stream(i)
	}
	return p
}

func run(t testing.TB, m *machines.Machine, mode arch.Mode, p isa.Program, prep func(*arch.Chip)) (*arch.Chip, *arch.Stats, error) {
	t.Helper()
	c, err := arch.NewChip(m, arch.Options{Mode: mode})
	if err != nil {
		t.Fatal(err)
	}
	if prep != nil {
		prep(c)
	}
	st, err := c.Run(p)
	return c, st, err
}

// Every picosecond of every pipe is attributed to exactly one cause.
func checkAccounting(t *testing.T, st *arch.Stats) {
	t.Helper()
	for ci, cs := range st.Cores {
		for p, ps := range cs.Lanes {
			var sum sim.Time
			for _, v := range ps.Time {
				if v < 0 {
					t.Fatalf("core %d pipe %s: negative time %v", ci, isa.Pipe(p), ps.Time)
				}
				sum += v
			}
			if sum != st.Time {
				t.Fatalf("core %d pipe %s: causes sum to %v, run took %v (%v)", ci, isa.Pipe(p), sum, st.Time, ps.Time)
			}
		}
	}
}

const roundTrip = `
alloc UB off=0 size=4096 name=x
mte2.copy gm=0 ub=0 bytes=4096
set_flag MTE2 MTE3 0
wait_flag MTE2 MTE3 0
mte3.copy ub=0 gm=8192 bytes=4096
free name=x
`

func TestCopyRoundTripMovesBytes(t *testing.T) {
	m := machine(t)
	data := make([]float32, 1024)
	for i := range data {
		data[i] = float32(i) * 0.5
	}
	c, st, err := run(t, m, arch.Functional, asm(t, roundTrip, 1), func(c *arch.Chip) {
		if err := c.GM().WriteFloat32s(0, data); err != nil {
			t.Fatal(err)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	got := make([]float32, 1024)
	if err := c.GM().ReadFloat32s(8192, got); err != nil {
		t.Fatal(err)
	}
	for i := range got {
		if got[i] != data[i] {
			t.Fatalf("element %d: got %v want %v", i, got[i], data[i])
		}
	}
	if st.GMReadBytes != 4096 || st.GMWriteBytes != 4096 {
		t.Fatalf("traffic %d/%d", st.GMReadBytes, st.GMWriteBytes)
	}
	// Timing: read latency + 4096 B at the GM→UB path rate, then write
	// latency + 4096 B at the UB→GM rate (+ a cycle of issue).
	ps := m.DaVinci().Paths
	want := float64(ps.GM_UB.LatencyCycles+ps.UB_GM.LatencyCycles) + 4096/ps.GM_UB.BytesPerCycle + 4096/ps.UB_GM.BytesPerCycle
	if cyc := float64(st.Cycles); cyc < want || cyc > want+4 {
		t.Fatalf("cycles %v, expected about %.1f", cyc, want)
	}
	checkAccounting(t, st)
	if st.Cores[0].Buffers[isa.UB].Peak != 4096 {
		t.Fatalf("UB peak %d", st.Cores[0].Buffers[isa.UB].Peak)
	}
}

// Without the flag, MTE3 copies UB before the data has landed: the result
// is wrong, as on hardware.
func TestMissingFlagGivesWrongData(t *testing.T) {
	src := strings.ReplaceAll(roundTrip, "set_flag MTE2 MTE3 0\nwait_flag MTE2 MTE3 0\n", "")
	m := machine(t)
	c, _, err := run(t, m, arch.Functional, asm(t, src, 1), func(c *arch.Chip) {
		_ = c.GM().WriteFloat32s(0, []float32{42})
	})
	if err != nil {
		t.Fatal(err)
	}
	got := make([]float32, 1)
	_ = c.GM().ReadFloat32s(8192, got)
	if got[0] == 42 {
		t.Fatal("a copy racing ahead of its producer must read stale data")
	}
}

func TestDeadlockNamesFlag(t *testing.T) {
	src := `
alloc L1 off=0 size=32768 name=a
mte2.copy gm=0 l1=0 bytes=32768
set_flag MTE2 MTE1 0
wait_flag MTE1 M 3
`
	_, _, err := run(t, machine(t), arch.Functional, asm(t, src, 1), nil)
	var dl *sim.DeadlockError
	if !errors.As(err, &dl) {
		t.Fatalf("want deadlock, got %v", err)
	}
	msg := err.Error()
	for _, want := range []string{"core 0", "pipe M", "wait_flag MTE1->M id 3", "line 5"} {
		if !strings.Contains(msg, want) {
			t.Errorf("deadlock message %q lacks %q", msg, want)
		}
	}
}

// Two cores reading at once share GM bandwidth: each takes about twice as
// long as alone when the path bandwidth exceeds half the GM bandwidth.
func TestGMContention(t *testing.T) {
	src := `
alloc UB off=0 size=262144 name=x
mte2.copy gm=core*262144 ub=0 bytes=262144
`
	// GM 64 B/cycle total; each core's path 64 B/cycle.
	m := machine(t, "machine.gm.bandwidth=64GB/s", "machine.core.paths.GM_UB.bytes_per_cycle=64")
	_, one, err := run(t, m, arch.Timing, asm(t, src, 1), nil)
	if err != nil {
		t.Fatal(err)
	}
	_, two, err := run(t, m, arch.Timing, asm(t, src, 2), nil)
	if err != nil {
		t.Fatal(err)
	}
	t1 := one.Cycles - 188
	t2 := two.Cycles - 188
	if t1 < 4096 || t1 > 4110 {
		t.Fatalf("one core: %d transfer cycles, want ~4096", t1)
	}
	if t2 < 8192 || t2 > 8210 {
		t.Fatalf("two cores: %d transfer cycles, want ~8192", t2)
	}
	bw := two.Cores[0].Lanes[isa.MTE2].Time[arch.Bandwidth]
	if c := int64(bw / 1000); c < 4000 || c > 4200 {
		t.Fatalf("bandwidth stall %d cycles, want ~4096", c)
	}
	checkAccounting(t, two)
}

func TestMMADThroughCube(t *testing.T) {
	// A (32×48) and B (48×16) FP16 in GM, C = A·B in FP32.
	src := `
alloc L1 off=0 size=8192 name=l1
alloc L0A off=0 size=4096 name=a
alloc L0B off=0 size=2048 name=b
alloc L0C off=0 size=2048 name=c
alloc UB off=0 size=2048 name=u
mte2.copy gm=0 l1=0 bytes=3072
mte2.copy gm=4096 l1=4096 bytes=1536
set_flag MTE2 MTE1 0
wait_flag MTE2 MTE1 0
mte1.load l0a=0 l1=0 rows=32 cols=48 stride=96 dtype=fp16
mte1.load l0b=0 l1=4096 rows=48 cols=16 stride=32 dtype=fp16
set_flag MTE1 M 0
wait_flag MTE1 M 0
m.mmad c=0 a=0 b=0 m=32 k=48 n=16 in=fp16 out=fp32 init
set_flag M V 0
wait_flag M V 0
v.l0c ub=0 l0c=0 rows=32 cols=16 stride=64 in=fp32 out=fp32
set_flag V MTE3 0
wait_flag V MTE3 0
mte3.copy ub=0 gm=8192 bytes=2048
`
	m := machine(t)
	a := make([]uint16, 32*48)
	b := make([]uint16, 48*16)
	for i := range a {
		a[i] = fp.F32ToF16(float32(i%7)-3+float32(i%5)/8, fp.RNE)
	}
	for i := range b {
		b[i] = fp.F32ToF16(float32(i%11)/4-1, fp.RNE)
	}
	c, st, err := run(t, m, arch.Functional, asm(t, src, 1), func(c *arch.Chip) {
		_ = c.GM().WriteUint16s(0, a)
		_ = c.GM().WriteUint16s(4096, b)
	})
	if err != nil {
		t.Fatal(err)
	}
	got := make([]float32, 32*16)
	_ = c.GM().ReadFloat32s(8192, got)
	model, _ := cube.Preset(m.DaVinci().Cube.Numerics)
	want := make([]float32, 32*16)
	if err := model.MMADF16(32, 48, 16, a, cube.RowMajor, b, cube.RowMajor, want, cube.RowMajor, true); err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("C[%d] = %v, want %v", i, got[i], want[i])
		}
	}
	// MMAD cost: 2·1·3 steps + startup.
	if st.MMADFlops != 2*32*48*16 {
		t.Fatalf("flops %v", st.MMADFlops)
	}
	checkAccounting(t, st)
}

func TestTimingModeKeepsNoData(t *testing.T) {
	m := machine(t)
	c, st, err := run(t, m, arch.Timing, asm(t, roundTrip, 4), nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.GM() != nil {
		t.Fatal("timing mode must not allocate GM")
	}
	if st.Cycles == 0 {
		t.Fatal("no time passed")
	}
}

func TestSyncAll(t *testing.T) {
	// Core 1 does a long copy before the barrier; core 0's copy after the
	// barrier cannot start before core 1's has finished.
	src := `
alloc UB off=0 size=65536 name=x
repeat core*8 {
  mte2.copy gm=0 ub=0 bytes=65536
}
sync_all
mte2.copy gm=0 ub=0 bytes=32
`
	f, err := isa.Parse("sync.s", src)
	if err != nil {
		t.Skipf("assembler lacks sync_all: %v", err)
	}
	p := isa.Program{Cores: []isa.Stream{f.Stream(0), f.Stream(1)}}
	_, st, err := run(t, machine(t), arch.Timing, p, nil)
	if err != nil {
		t.Fatal(err)
	}
	if st.Cores[0].Finish < st.Cores[1].Finish-sim.Time(400*1000) {
		t.Fatalf("core 0 finished at %v, before core 1's copies (%v)", st.Cores[0].Finish, st.Cores[1].Finish)
	}
}

func TestDeterministic(t *testing.T) {
	m := machine(t)
	src := `
alloc UB off=0 size=65536 name=x
repeat 20 i {
  mte2.copy gm=i*4096+core*65536 ub=0 bytes=4096
  set_flag MTE2 V 0
  wait_flag MTE2 V 0
  v.add dst=0 src0=0 src1=2048 dtype=fp32 repeat=8
  set_flag V MTE3 0
  wait_flag V MTE3 0
  mte3.copy ub=0 gm=1048576+i*4096+core*65536 bytes=4096
  set_flag MTE3 MTE2 0
  wait_flag MTE3 MTE2 0
}
`
	var first *arch.Stats
	for r := 0; r < 3; r++ {
		_, st, err := run(t, m, arch.Timing, asm(t, src, 8), nil)
		if err != nil {
			t.Fatal(err)
		}
		checkAccounting(t, st)
		if first == nil {
			first = st
			continue
		}
		if st.Time != first.Time || st.Events != first.Events {
			t.Fatalf("run %d differs: %v/%d vs %v/%d", r, st.Time, st.Events, first.Time, first.Events)
		}
	}
}

// The vector unit's repeat width comes from the machine
// (core.vector.bytes_per_repeat): one fp32 repeat covers 64 elements with
// 256-byte repeats and 128 with 512-byte repeats.
func TestVectorRepeatWidthFromMachine(t *testing.T) {
	const src = `
alloc UB off=0 size=2KiB name=u
mte2.copy gm=0 ub=0 bytes=1024
set_flag MTE2 V 0
wait_flag MTE2 V 0
v.muls dst=1024 src0=0 scalar=2 dtype=fp32
set_flag V MTE3 0
wait_flag V MTE3 0
mte3.copy ub=1024 gm=8192 bytes=1024
`
	for _, width := range []int{256, 512} {
		m := machine(t, fmt.Sprintf("machine.core.vector.bytes_per_repeat=%d", width))
		data := make([]float32, 256)
		for i := range data {
			data[i] = float32(i + 1)
		}
		c, _, err := run(t, m, arch.Functional, asm(t, src, 1), func(c *arch.Chip) {
			if err := c.GM().WriteFloat32s(0, data); err != nil {
				t.Fatal(err)
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		got := make([]float32, 256)
		if err := c.GM().ReadFloat32s(8192, got); err != nil {
			t.Fatal(err)
		}
		for i, v := range got {
			want := float32(0) // UB beyond the repeat is never written
			if i < width/4 {
				want = 2 * data[i]
			}
			if v != want {
				t.Fatalf("width %d: element %d = %v, want %v", width, i, v, want)
			}
		}
	}
}
