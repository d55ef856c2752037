package sim

import "math/bits"

// needs64Bit stops a build for a 32-bit platform (386, arm, mips) with
// "cannot use bits.UintSize - 64 … as uint value … (overflows)" pointing
// here: the simulator needs 64-bit ints — addresses and byte counts of
// global memories of tens of GiB, the bad-input limits the tests pin. (A
// 32-bit build compiled, then panicked at start-up in ozaki/crt, and its
// tests met other limits.)
const needs64Bit uint = bits.UintSize - 64
