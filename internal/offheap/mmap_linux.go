//go:build linux

package offheap

import (
	"syscall"

	"github.com/cockroachdb/errors"
)

// mapMemory maps n bytes (a multiple of ChunkSize) of anonymous memory,
// aligned to ChunkSize, and asks for transparent huge pages, so that each
// chunk is one 2 MiB page where the kernel has them. Pages become resident
// when first touched.
//
// Why huge pages: a point read touches a random block among hundreds of
// thousands. With 4 KiB pages, uniform Gets over a 110 MiB cache ran at
// 100-130k/s for tenths of a second at a time, about a second after the
// cache filled (the same code otherwise reaching 320k/s; no page faults,
// no collections, just slower memory accesses); with huge pages they ran at
// 300-340k/s throughout.
func mapMemory(n int) []byte {
	mem, err := syscall.Mmap(-1, 0, n+ChunkSize, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		// As the runtime does when the heap cannot grow.
		panic(errors.Wrapf(err, "offheap: mapping %d bytes", n))
	}
	// Keep the aligned n bytes; the rest stays mapped and unused (address
	// space only: it is never touched).
	skip := int(-addr(mem) & (ChunkSize - 1))
	mem = mem[skip : skip+n : skip+n]
	// Without THP (or with it off) the memory works with small pages.
	_ = syscall.Madvise(mem, madvHugePage)
	return mem
}

// madvHugePage is MADV_HUGEPAGE, which package syscall does not name.
const madvHugePage = 14

// releaseMemory gives mem's pages back to the OS; mem stays mapped and
// reads as zeros until reused.
func releaseMemory(mem []byte) {
	// An error leaves the pages resident, which costs memory, not
	// correctness.
	_ = syscall.Madvise(mem, syscall.MADV_DONTNEED)
}
