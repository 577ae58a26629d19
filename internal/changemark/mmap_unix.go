//go:build unix

package changemark

import (
	"os"
	"sync/atomic"
	"syscall"
	"unsafe"
)

// mapFile maps the first n bytes of f, shared with every process that maps it; nil if
// it cannot.
func mapFile(f *os.File, n int) []byte {
	mem, err := syscall.Mmap(int(f.Fd()), 0, n, syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil
	}
	return mem
}

func unmap(mem []byte) { syscall.Munmap(mem) }

// load reads the mapped value in one access (the mapping is page-aligned). A write by
// another process that is under way may show part of the new value: it still differs
// from the old one, and the next load sees the whole.
func load(mem []byte) uint64 {
	return atomic.LoadUint64((*uint64)(unsafe.Pointer(&mem[0])))
}
