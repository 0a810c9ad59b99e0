package mvcc

import (
	"testing"
	"unsafe"
)

// TestControlLayout checks the cache lines of a Control (see its doc):
// the read point, the Begin fields and the fields Complete reads each on a
// line of their own, and Controls allocated on line boundaries, which
// holds for a size class that is a multiple of the line.
func TestControlLayout(t *testing.T) {
	var c Control
	const lineSize = uintptr(cacheLine)
	line := func(off uintptr) uintptr { return off / lineSize }
	if got := unsafe.Sizeof(c); got%lineSize != 0 {
		t.Fatalf("Control is %d bytes, not a multiple of %d", got, cacheLine)
	}
	if line(unsafe.Offsetof(c.readPoint)) != 0 {
		t.Errorf("readPoint at %d", unsafe.Offsetof(c.readPoint))
	}
	begin := []uintptr{unsafe.Offsetof(c.writePoint), unsafe.Offsetof(c.mu), unsafe.Offsetof(c.mu) + unsafe.Sizeof(c.mu) - 1}
	for _, off := range begin {
		if line(off) != 1 {
			t.Errorf("a Begin field at %d is on line %d, want 1", off, line(off))
		}
	}
	for _, off := range []uintptr{unsafe.Offsetof(c.id), unsafe.Offsetof(c.ring)} {
		if line(off) != 2 {
			t.Errorf("a field Complete reads at %d is on line %d, want 2", off, line(off))
		}
	}
	// Kept in a package variable, so that they are on the heap, as a
	// region's is, rather than on this goroutine's stack.
	for i := 0; i < 64; i++ {
		layoutSink = append(layoutSink, New(0))
		if p := uintptr(unsafe.Pointer(layoutSink[i])); p%lineSize != 0 {
			t.Fatalf("New returned a Control at %#x, not on a line boundary", p)
		}
	}
	layoutSink = nil
}

var layoutSink []*Control
