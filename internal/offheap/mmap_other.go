//go:build !linux

package offheap

// mapMemory returns n bytes of Go memory off Linux, where we do not map
// available.
func mapMemory(n int) []byte { return make([]byte, n) }

// releaseMemory keeps a Go chunk: it is reused by the next class that
// needs one.
func releaseMemory([]byte) {}
