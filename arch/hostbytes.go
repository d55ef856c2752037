package arch

import (
	"slices"
	"unsafe"

	"github.com/davinci-sim/davinci-sim/isa"
)

// Host-memory estimates of a chip's parts (Kind.CoreBytes), as the Go
// runtime allocates them: a core's objects each rounded up to the
// allocator's size class, and the stream a core reads while it runs a
// program or kernel. (Counted by object, a DaVinci core of ascend-910a
// took 65 KiB against 61.6 KiB summed from its objects' sizes, and its
// stream 8–33 KiB and a goroutine's stack more: a 4096-core chip's model,
// estimated at 252 MiB, held 262 MiB built and ~310 MiB running a kernel
// on every core.)

// sizeClasses are the Go runtime's small-object size classes (Go 1.21 to
// 1.26: internal/runtime/gc/sizeclasses.go, SizeClassToSize; a runtime
// with other classes makes AllocBytes an estimate off by a few percent).
var sizeClasses = []int64{8, 16, 24, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176, 192, 208, 224, 240, 256, 288, 320, 352,
	384, 416, 448, 480, 512, 576, 640, 704, 768, 896, 1024, 1152, 1280, 1408, 1536, 1792, 2048, 2304, 2688, 3072, 3200,
	3456, 4096, 4864, 5376, 6144, 6528, 6784, 6912, 8192, 9472, 9728, 10240, 10880, 12288, 13568, 14336, 16384, 18432,
	19072, 20480, 21760, 24576, 27264, 28672, 32768}

// allocPage is the runtime's page: objects above the largest size class
// take whole pages.
const allocPage = 8 << 10

// AllocBytes returns the host bytes the Go runtime takes for one object
// of n bytes: n rounded up to its size class, or to whole pages above the
// largest; 0 for n ≤ 0; saturating instead of overflowing.
func AllocBytes(n int64) int64 {
	if n <= 0 {
		return 0
	}
	if n <= sizeClasses[len(sizeClasses)-1] {
		i, _ := slices.BinarySearch(sizeClasses, n)
		return sizeClasses[i]
	}
	if n > 1<<62 {
		return 1 << 62
	}
	return (n + allocPage - 1) / allocPage * allocPage
}

// coroutineBytes is what a stream's generator takes as a coroutine
// (iter.Pull: a goroutine, its closures and its stack): ~0.9 KiB of
// objects (measured, 4000 readers) and a stack of 2 KiB that grows to 4 KiB
// in deeper generators (LU's kernels on 4080 cores averaged 2.6 KiB).
const coroutineBytes = 1<<10 + 4<<10

// StreamReaderBytes returns the host bytes a StreamReader holds while it
// reads a stream: its chunk buffer, or, read ahead (ahead), its ring of
// chunks, and the generator's coroutine. A core kind counts it per core
// (Kind.CoreBytes): every core of a kernel reads a stream at once.
// (Whether a chip reads ahead is its own Options' and the process's
// — NewAhead —, which the kind's estimate does not see: it counts the
// ring, so that a model's estimate is the same on every host.)
func StreamReaderBytes(ahead bool) int64 {
	buf := int64(chunkLen) * int64(unsafe.Sizeof(isa.Instr{}))
	if ahead {
		buf *= aheadSlots
	}
	return AllocBytes(buf) + coroutineBytes
}

// ChipBytesPerCore is what the chip keeps by core beside the core model
// (Kind.CoreBytes counts it): an interface in its cores and its waiters
// (the latter grown by appending, up to twice its length) and a sync flag.
const ChipBytesPerCore = 16 + 2*16 + 1
