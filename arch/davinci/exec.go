package davinci

import (
	"github.com/davinci-sim/davinci-sim/arch"

	"fmt"

	"github.com/davinci-sim/davinci-sim/cube"
	"github.com/davinci-sim/davinci-sim/dma"
	"github.com/davinci-sim/davinci-sim/fp"
	"github.com/davinci-sim/davinci-sim/isa"
	"github.com/davinci-sim/davinci-sim/machines"
	"github.com/davinci-sim/davinci-sim/mem"
	"github.com/davinci-sim/davinci-sim/sim"
)

// path returns the machine path of a copy from src to dst.
func (c *Core) path(src, dst isa.Buffer) (*machines.PathSpec, bool) {
	if src >= isa.NumBuffers || dst >= isa.NumBuffers {
		return nil, false
	}
	i := c.paths[src][dst]
	if i == 0 {
		return nil, false
	}
	return &c.geom.Paths[i-1], true
}

// execute starts p.cur on pipe p at now: it computes the cost and either
// finishes the instruction on the core's clock or streams it through the
// GM channel.
func (c *Core) execute(p *pipe, now sim.Time) {
	in := &p.cur
	clk := c.clock
	mc := c.mc
	switch in.Op {
	case isa.OpCopy, isa.OpLoad, isa.OpL0CCopy:
		var bytes int64
		switch in.Op {
		case isa.OpCopy:
			bytes = int64(in.NBurst) * in.BurstLen
		case isa.OpLoad:
			bytes = dma.FractalBytes(in.Rows, in.Cols, in.In)
		case isa.OpL0CCopy:
			// Into GM the bytes written (the path's rate is FACTS's
			// L0C→GM bandwidth, and GM and HBM carry the converted
			// output: FP32→FP16 writes half of L0C's bytes); into a
			// buffer the L0C bytes read (L0C_UB's rate is L0C's read).
			size := in.In.Bytes()
			if in.Dst.Buf == isa.GM {
				size = in.Out.Bytes()
			}
			bytes = int64(in.Rows) * int64(in.Cols) * int64(size)
		}
		path, ok := c.path(in.Src.Buf, in.Dst.Buf)
		if !ok {
			c.fault(in, fmt.Errorf("no data path %s→%s on this machine", in.Src.Buf, in.Dst.Buf))
			return
		}
		lat := clk.Cycles(int64(path.LatencyCycles))
		pi := c.paths[in.Src.Buf][in.Dst.Buf] - 1
		c.pathBytes[pi] += bytes
		c.chip.AddPathEnergy(now, int(pi), bytes)
		if in.Src.Buf == isa.GM || in.Dst.Buf == isa.GM {
			p.ideal = clk.Cycles(cyclesFor(bytes, path.BytesPerCycle))
			p.lat = sim.Add(lat, c.startGM(p, in, bytes, path.BytesPerCycle*clk.Hz()))
			return
		}
		c.finishAfter(p, now, clk.Cycles(cyclesFor(bytes, path.BytesPerCycle)), lat)
	case isa.OpMmad:
		kstep := int64(mc.Cube.KStep(in.In))
		if kstep == 0 {
			c.fault(in, fmt.Errorf("the cube does not accept %s inputs", in.In))
			return
		}
		steps := ceilDiv(int64(in.M), int64(mc.Cube.M)) * ceilDiv(int64(in.N), int64(mc.Cube.N)) * ceilDiv(int64(in.K), kstep)
		c.chip.AddMatrixFlops(2 * float64(in.M) * float64(in.N) * float64(in.K))
		c.finishAfter(p, now, sim.Add(clk.Cycles(steps), clk.Cycles(int64(mc.Cube.StartupCycles))), 0)
	case isa.OpVector:
		rep := in.Repeat
		if rep < 1 {
			rep = 1
		}
		c.vectorRepeats += int64(rep)
		c.chip.AddVectorEnergy(now, int64(rep))
		cyc := sim.CeilCount(float64(rep) * mc.Vector.CyclesPerRepeat)
		c.finishAfter(p, now, sim.Add(clk.Cycles(int64(mc.Vector.StartupCycles)), clk.Cycles(cyc)), 0)
	default:
		c.fault(in, fmt.Errorf("%s cannot run on pipe %s", in.Op, p.id))
	}
}

// startGM starts the GM side of copy in of n bytes on pipe p, through the
// chip's L2 and HBM channels (capBps: the path's bandwidth), and returns the
// latency the memory adds to the path's.
func (c *Core) startGM(p *pipe, in *isa.Instr, n int64, capBps float64) sim.Time {
	read := in.Src.Buf == isa.GM
	var span arch.GMSpan
	switch {
	case in.Op == isa.OpCopy && read:
		span = arch.GMSpan{Addr: in.Src.Addr, Rows: in.NBurst, RowBytes: in.BurstLen, Stride: in.SrcStride}
	case in.Op == isa.OpCopy:
		span = arch.GMSpan{Addr: in.Dst.Addr, Rows: in.NBurst, RowBytes: in.BurstLen, Stride: in.DstStride}
	case in.Op == isa.OpL0CCopy:
		span = arch.GMSpan{Addr: in.Dst.Addr, Rows: in.Rows, RowBytes: int64(in.Cols * in.Out.Bytes()), Stride: in.RowStride}
	}
	parts, lat := c.chip.StartGM(c, c.id, int64(p.id), read, n, []arch.GMSpan{span}, capBps)
	p.xfer += parts
	return lat
}

// ceilDiv returns ceil(a/b) for positive b.
func ceilDiv(a, b int64) int64 { return (a + b - 1) / b }

// cyclesFor returns the cycles to move n bytes at bpc bytes per cycle
// (saturated: see sim.CeilCount).
func cyclesFor(n int64, bpc float64) int64 {
	return sim.CeilCount(float64(n) / bpc)
}

// finishAfter occupies pipe p for d, with the effect landing lat later.
func (c *Core) finishAfter(p *pipe, now, d, lat sim.Time) {
	if d < 1 {
		d = 1
	}
	p.busy = sim.Add(now, d)
	done := sim.Add(p.busy, lat)
	if sim.Saturated(done) {
		c.fault(&p.cur, sim.ErrTimeOverflow)
		return
	}
	if done > p.last {
		p.last = done
	}
	if c.functional { // timing only: nothing lands
		p.fly = append(p.fly, inflight{done: done, in: p.cur})
	}
}

// apply performs the data effect of a completed instruction (functional
// mode; a TimingOnly instruction has none).
func (c *Core) apply(in *isa.Instr) {
	if !c.functional || in.TimingOnly {
		return
	}
	var err error
	switch in.Op {
	case isa.OpCopy:
		err = c.copy2D(in)
	case isa.OpLoad:
		var dst, src []byte
		if dst, err = c.local(in.Dst.Buf, in.Dst.Addr, dma.FractalBytes(in.Rows, in.Cols, in.In)); err == nil {
			src, err = c.local(in.Src.Buf, in.Src.Addr, dma.RowMajorSpan(in.Rows, in.Cols, in.RowStride, in.In, in.Transpose))
			if err == nil {
				err = dma.LoadFractal(dst, src, in.Rows, in.Cols, in.RowStride, in.In, in.Transpose)
			}
		}
	case isa.OpMmad:
		err = c.mmad(in)
	case isa.OpL0CCopy:
		err = c.l0cCopy(in)
	case isa.OpVector:
		err = c.vector(in)
	}
	if err != nil {
		c.fault(in, err)
	}
}

// local returns n bytes of a core buffer at addr, or an error naming the
// violated bound.
func (c *Core) local(b isa.Buffer, addr, n int64) ([]byte, error) {
	buf := c.bufs[b]
	if addr < 0 || n < 0 || addr+n > int64(len(buf)) {
		return nil, fmt.Errorf("%s access [%d, %d) outside the %d-byte buffer", b, addr, addr+n, len(buf))
	}
	return buf[addr : addr+n : addr+n], nil
}

func (c *Core) copy2D(in *isa.Instr) error {
	gm := c.chip.GM()
	for i := 0; i < in.NBurst; i++ {
		sa := in.Src.Addr + int64(i)*in.SrcStride
		da := in.Dst.Addr + int64(i)*in.DstStride
		switch {
		case in.Src.Buf == isa.GM:
			dst, err := c.local(in.Dst.Buf, da, in.BurstLen)
			if err != nil {
				return err
			}
			if err := gm.Read(sa, dst); err != nil {
				return err
			}
		case in.Dst.Buf == isa.GM:
			src, err := c.local(in.Src.Buf, sa, in.BurstLen)
			if err != nil {
				return err
			}
			if err := gm.Write(da, src); err != nil {
				return err
			}
		default:
			src, err := c.local(in.Src.Buf, sa, in.BurstLen)
			if err != nil {
				return err
			}
			dst, err := c.local(in.Dst.Buf, da, in.BurstLen)
			if err != nil {
				return err
			}
			copy(dst, src)
		}
	}
	return nil
}

func (c *Core) mmad(in *isa.Instr) error {
	out := fp.FP32
	switch {
	case in.In == fp.INT8 && in.Out == fp.INT32:
		out = fp.INT32 // the INT8 cube (16×32×16 on the 910A): exact INT32 accumulation
	case in.Out != fp.FP32:
		return fmt.Errorf("mmad: only FP32 accumulation in L0C is modeled (out=%s)", in.Out)
	}
	a, err := c.local(isa.L0A, in.Src.Addr, dma.FractalBytes(in.M, in.K, in.In))
	if err != nil {
		return err
	}
	b, err := c.local(isa.L0B, in.Src1.Addr, dma.FractalBytes(in.K, in.N, in.In))
	if err != nil {
		return err
	}
	cc, err := c.local(isa.L0C, in.Dst.Addr, dma.FractalBytes(in.M, in.N, out))
	if err != nil {
		return err
	}
	if out == fp.INT32 {
		cube.MMADInt8(in.M, in.K, in.N, a, b, cc, in.Init)
		return nil
	}
	switch in.In {
	case fp.FP16:
		return c.chip.Cube().MMADF16(in.M, in.K, in.N, mem.Uint16s(a), cube.Fractal, mem.Uint16s(b), cube.Fractal, mem.Float32s(cc), cube.Fractal, in.Init)
	case fp.BF16:
		return c.chip.Cube().MMADBF16(in.M, in.K, in.N, mem.Uint16s(a), cube.Fractal, mem.Uint16s(b), cube.Fractal, mem.Float32s(cc), cube.Fractal, in.Init)
	case fp.FP32:
		return c.chip.Cube().MMAD(fp.FP32, fp.FP32, in.M, in.K, in.N, mem.Uint32s(a), cube.Fractal, mem.Uint32s(b), cube.Fractal, mem.Uint32s(cc), cube.Fractal, in.Init)
	}
	return fmt.Errorf("mmad: %s inputs are not modeled functionally yet", in.In)
}

func (c *Core) l0cCopy(in *isa.Instr) error {
	src, err := c.local(isa.L0C, in.Src.Addr, dma.FractalBytes(in.Rows, in.Cols, in.In))
	if err != nil {
		return err
	}
	ob := int64(in.Out.Bytes())
	rowBytes := int64(in.Cols) * ob
	if in.Dst.Buf == isa.GM {
		row := make([]byte, rowBytes)
		for r := 0; r < in.Rows; r++ {
			if err := dma.FractalRow(row, src, r, in.Rows, in.Cols, in.In, in.Out, in.Round, in.Saturate); err != nil {
				return err
			}
			if err := c.chip.GM().Write(in.Dst.Addr+int64(r)*in.RowStride, row); err != nil {
				return err
			}
		}
		return nil
	}
	for r := 0; r < in.Rows; r++ {
		row, err := c.local(in.Dst.Buf, in.Dst.Addr+int64(r)*in.RowStride, rowBytes)
		if err != nil {
			return err
		}
		if err := dma.FractalRow(row, src, r, in.Rows, in.Cols, in.In, in.Out, in.Round, in.Saturate); err != nil {
			return err
		}
	}
	return nil
}
