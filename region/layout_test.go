package region

import (
	"testing"
	"unsafe"
)

// TestWriteLinesLayout checks the cache lines every write changes: the row
// lock shards and the writeHot are whole lines, and an open region's sit
// on line boundaries, which an allocation of their own gives them (a size
// class that is a multiple of the line).
func TestWriteLinesLayout(t *testing.T) {
	const lineSize = uintptr(cacheLine)
	if n := unsafe.Sizeof(rowLockShard{}); n != lineSize {
		t.Errorf("a row lock shard is %d bytes, not a line", n)
	}
	if n := unsafe.Sizeof(writeHot{}); n != lineSize {
		t.Errorf("writeHot is %d bytes, not a line", n)
	}
	r, err := Open(t.TempDir(), Options{Families: []FamilyOptions{{Name: "f"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for name, p := range map[string]unsafe.Pointer{"row lock shards": unsafe.Pointer(&r.locks.shards), "writeHot": unsafe.Pointer(r.hot)} {
		if uintptr(p)%lineSize != 0 {
			t.Errorf("the region's %s are at %#x, not on a line boundary", name, uintptr(p))
		}
	}
}
