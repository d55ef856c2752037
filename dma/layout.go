// Package dma implements the data movers' work on the data: the layout
// conversions on the MTE1 path (row-major L1 → fractal L0A/L0B, optional
// transpose) and on the L0C path (fractal FP32 → row-major, with FP32→FP16
// conversion), in agreement with package cube's fractal layout. Costs
// (bandwidth, latency) are the core model's job (package arch).
package dma

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/davinci-sim/davinci-sim/cube"
	"github.com/davinci-sim/davinci-sim/fp"
)

// FractalBytes returns the bytes of an r×c matrix of format f in fractal
// layout (both dimensions padded to the fractal block).
func FractalBytes(r, c int, f fp.Format) int64 {
	br, bc := cube.FractalBlock(f.Bits())
	pr := int64((r + br - 1) / br * br)
	pc := int64((c + bc - 1) / bc * bc)
	return pr * pc * int64(f.Bytes())
}

// RowMajorSpan returns the bytes a row-major source of an r×c load spans
// (transposed: the c×r source), with rowStride bytes between row starts.
func RowMajorSpan(r, c int, rowStride int64, f fp.Format, transpose bool) int64 {
	rows, cols := r, c
	if transpose {
		rows, cols = c, r
	}
	if rows == 0 {
		return 0
	}
	return int64(rows-1)*rowStride + int64(cols*f.Bytes())
}

// LoadFractal writes the r×c matrix held row-major in src (rowStride bytes
// between rows; with transpose src holds the c×r transpose) into dst in
// fractal layout, zero-filling the padding.
func LoadFractal(dst, src []byte, r, c int, rowStride int64, f fp.Format, transpose bool) error {
	eb := f.Bytes()
	need := FractalBytes(r, c, f)
	if int64(len(dst)) < need {
		return fmt.Errorf("fractal destination holds %d bytes, needs %d", len(dst), need)
	}
	if int64(len(src)) < RowMajorSpan(r, c, rowStride, f, transpose) {
		return fmt.Errorf("row-major source holds %d bytes, needs %d", len(src), RowMajorSpan(r, c, rowStride, f, transpose))
	}
	clear(dst[:need])
	if r <= 0 || c <= 0 {
		return nil
	}
	br, bc := cube.FractalBlock(f.Bits())
	pc := (c + bc - 1) / bc * bc
	blk := br * bc * eb      // bytes of a block
	rowBlks := pc / bc * blk // bytes of a row of blocks
	if !transpose {
		// A block's row at a time: bc elements contiguous in src and dst.
		for i := 0; i < r; i++ {
			drow := dst[(i/br)*rowBlks+(i%br)*bc*eb:]
			srow := src[int64(i)*rowStride:][:c*eb]
			for j := 0; j < c; j += bc {
				copy(drow[(j/bc)*blk:], srow[j*eb:min(j+bc, c)*eb])
			}
		}
		return nil
	}
	// Transposed: src's row j is dst's column j, a block's column (br
	// elements) at a time; an element at byte o of such a run lands at
	// byte o·bc of the block's column.
	for j := 0; j < c; j++ {
		srow := src[int64(j)*rowStride:][:r*eb]
		dcol := dst[(j/bc)*blk+(j%bc)*eb:]
		for i0 := 0; i0 < r; i0 += br {
			d := dcol[(i0/br)*rowBlks:]
			s := srow[i0*eb : min(i0+br, r)*eb]
			switch eb {
			case 1:
				for o, v := range s {
					d[o*bc] = v
				}
			case 2:
				for o := 0; o+1 < len(s); o += 2 {
					d[o*bc], d[o*bc+1] = s[o], s[o+1]
				}
			case 4:
				for o := 0; o+3 < len(s); o += 4 {
					binary.LittleEndian.PutUint32(d[o*bc:], binary.LittleEndian.Uint32(s[o:]))
				}
			default:
				for o := 0; o < len(s); o += eb {
					copy(d[o*bc:o*bc+eb], s[o:o+eb])
				}
			}
		}
	}
	return nil
}

// FractalRow writes row r of the rows×cols fractal matrix src (format in)
// into dst as cols row-major elements of format out, converting with the
// given rounding and saturation.
func FractalRow(dst, src []byte, r, rows, cols int, in, out fp.Format, round fp.Rounding, sat bool) error {
	if in == out && (in == fp.INT32 || in == fp.FP64) {
		return rawRow(dst, src, r, cols, in)
	}
	if in != fp.FP32 {
		return fmt.Errorf("L0C copy: source type %s not supported (fp32, or int32 to int32)", in)
	}
	_, bc := cube.FractalBlock(in.Bits())
	pc := (cols + bc - 1) / bc * bc
	ob := out.Bytes()
	if len(dst) < cols*ob {
		return fmt.Errorf("L0C copy: destination row holds %d bytes, needs %d", len(dst), cols*ob)
	}
	opts := fp.Options{Round: round, Saturate: sat}
	for j := 0; j < cols; j++ {
		si := cube.FractalIndex(r, j, pc, 32) * 4
		bits := binary.LittleEndian.Uint32(src[si:])
		switch out {
		case fp.FP32:
			binary.LittleEndian.PutUint32(dst[j*4:], bits)
		case fp.FP16:
			var h uint16
			if !sat {
				h = fp.F32ToF16(math.Float32frombits(bits), round)
			} else {
				h = uint16(fp.FromFloat32(math.Float32frombits(bits), fp.FP16, opts))
			}
			binary.LittleEndian.PutUint16(dst[j*2:], h)
		default:
			v := fp.FromFloat32(math.Float32frombits(bits), out, opts)
			switch ob {
			case 1:
				dst[j] = byte(v)
			case 2:
				binary.LittleEndian.PutUint16(dst[j*2:], uint16(v))
			default:
				binary.LittleEndian.PutUint32(dst[j*4:], v)
			}
		}
	}
	return nil
}

// rawRow copies row r of a fractal matrix of format f (INT32 or FP64, no
// conversion) with cols columns to dst, row-major.
func rawRow(dst, src []byte, r, cols int, f fp.Format) error {
	eb := f.Bytes()
	if len(dst) < cols*eb {
		return fmt.Errorf("L0C copy: destination row holds %d bytes, needs %d", len(dst), cols*eb)
	}
	_, bc := cube.FractalBlock(f.Bits())
	pc := (cols + bc - 1) / bc * bc
	for j := 0; j < cols; j++ {
		si := cube.FractalIndex(r, j, pc, f.Bits()) * eb
		copy(dst[j*eb:j*eb+eb], src[si:si+eb])
	}
	return nil
}
