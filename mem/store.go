// Package mem models the machine's memories: global memory (a sparse byte
// store shared by all cores), the cores' on-chip buffers with their
// allocation and time-weighted occupancy, and the shared-bandwidth channel
// through which concurrent transfers compete for global-memory bandwidth.
//
// Byte order is little-endian, as on the modeled hardware; the simulator
// requires a little-endian host for its typed views of buffer bytes.
package mem

import (
	"encoding/binary"
	"fmt"
	"math"
	"unsafe"
)

func init() {
	if binary.NativeEndian.Uint16([]byte{1, 0}) != 1 {
		panic("davinci-sim requires a little-endian host")
	}
}

// pageBits sets the GM page size (64 KiB): large enough that matrix copies
// touch few pages, small enough that sparse programs stay small.
const pageBits = 16

// PageSize is the granularity of the sparse GM store.
const PageSize = 1 << pageBits

// GM is global memory: a sparse, paged byte store. Pages are created on first
// write; reads of never-written bytes return zeros. Memory use follows what a
// program touches, not the machine's nominal capacity.
type GM struct {
	capacity int64
	pages    map[int64][]byte
}

// NewGM returns an empty global memory of the given capacity in bytes.
func NewGM(capacity int64) *GM {
	return &GM{capacity: capacity, pages: make(map[int64][]byte)}
}

// Capacity returns the size of the address space in bytes.
func (g *GM) Capacity() int64 { return g.capacity }

// Touched returns the number of bytes backed by pages.
func (g *GM) Touched() int64 { return int64(len(g.pages)) * PageSize }

func (g *GM) check(addr, n int64) error {
	if addr < 0 || n < 0 || addr+n > g.capacity {
		return fmt.Errorf("GM access [%#x, %#x) outside capacity %d bytes", addr, addr+n, g.capacity)
	}
	return nil
}

// Write copies p into GM at addr.
func (g *GM) Write(addr int64, p []byte) error {
	if err := g.check(addr, int64(len(p))); err != nil {
		return err
	}
	for len(p) > 0 {
		pg, off := addr>>pageBits, addr&(PageSize-1)
		page := g.pages[pg]
		if page == nil {
			page = make([]byte, PageSize)
			g.pages[pg] = page
		}
		n := copy(page[off:], p)
		p = p[n:]
		addr += int64(n)
	}
	return nil
}

// Read copies len(p) bytes from GM at addr into p.
func (g *GM) Read(addr int64, p []byte) error {
	if err := g.check(addr, int64(len(p))); err != nil {
		return err
	}
	for len(p) > 0 {
		pg, off := addr>>pageBits, addr&(PageSize-1)
		n := int64(len(p))
		if rest := PageSize - off; n > rest {
			n = rest
		}
		if page := g.pages[pg]; page != nil {
			copy(p[:n], page[off:off+n])
		} else {
			clear(p[:n])
		}
		p = p[n:]
		addr += n
	}
	return nil
}

// WriteFloat32s stores v at addr as little-endian FP32.
func (g *GM) WriteFloat32s(addr int64, v []float32) error {
	if len(v) == 0 {
		return nil
	}
	return g.Write(addr, unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), 4*len(v)))
}

// WriteFloat64s stores v at addr as little-endian FP64 (no copy of v as
// bytes first).
func (g *GM) WriteFloat64s(addr int64, v []float64) error {
	if len(v) == 0 {
		return nil
	}
	return g.Write(addr, unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), 8*len(v)))
}

// ReadFloat32s loads len(v) FP32 values from addr.
func (g *GM) ReadFloat32s(addr int64, v []float32) error {
	if len(v) == 0 {
		return nil
	}
	return g.Read(addr, unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), 4*len(v)))
}

// WriteUint16s stores v at addr as little-endian 16-bit patterns.
func (g *GM) WriteUint16s(addr int64, v []uint16) error {
	if len(v) == 0 {
		return nil
	}
	return g.Write(addr, unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), 2*len(v)))
}

// ReadUint16s loads len(v) 16-bit patterns from addr.
func (g *GM) ReadUint16s(addr int64, v []uint16) error {
	if len(v) == 0 {
		return nil
	}
	return g.Read(addr, unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), 2*len(v)))
}

// Uint16s views b (length a multiple of 2, 2-byte aligned) as []uint16.
func Uint16s(b []byte) []uint16 {
	if len(b) < 2 {
		return nil
	}
	return unsafe.Slice((*uint16)(unsafe.Pointer(&b[0])), len(b)/2)
}

// Uint32s views b (length a multiple of 4, 4-byte aligned) as []uint32.
func Uint32s(b []byte) []uint32 {
	if len(b) < 4 {
		return nil
	}
	return unsafe.Slice((*uint32)(unsafe.Pointer(&b[0])), len(b)/4)
}

// Float32s views b (length a multiple of 4, 4-byte aligned) as []float32.
func Float32s(b []byte) []float32 {
	if len(b) < 4 {
		return nil
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(&b[0])), len(b)/4)
}

// Float32Bits returns the FP32 bit patterns of v as a new slice.
func Float32Bits(v []float32) []uint32 {
	out := make([]uint32, len(v))
	for i, x := range v {
		out[i] = math.Float32bits(x)
	}
	return out
}
