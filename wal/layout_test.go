package wal

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

var hotSink []*writerHot

// TestWriterHotLines checks the layout writerHot's comment describes: what
// a direct append writes on its first cache line, what it reads besides on
// the second, and the struct allocated on a line boundary (a pointer-free
// object of a size class that is a multiple of 64 bytes).
func TestWriterHotLines(t *testing.T) {
	var h writerHot
	require.Equal(t, uintptr(128), unsafe.Sizeof(h))
	first := map[string]uintptr{
		"Mutex":         unsafe.Offsetof(h.Mutex),
		"activeSize":    unsafe.Offsetof(h.activeSize),
		"activeMaxSeq":  unsafe.Offsetof(h.activeMaxSeq),
		"appended":      unsafe.Offsetof(h.appended),
		"written":       unsafe.Offsetof(h.written),
		"directWrites":  unsafe.Offsetof(h.directWrites),
		"directBytes":   unsafe.Offsetof(h.directBytes),
		"writtenMirror": unsafe.Offsetof(h.writtenMirror),
	}
	for name, off := range first {
		require.Less(t, off, uintptr(64), "%s", name)
	}
	for i := 0; i < 100; i++ {
		h := new(writerHot)
		hotSink = append(hotSink, h) // on the heap, as Open's
		require.Zero(t, uintptr(unsafe.Pointer(h))%64, "a writerHot is not allocated on a cache line")
	}
	hotSink = nil
	w, err := Open(t.TempDir(), Options{})
	require.NoError(t, err)
	defer w.Close()
	require.Zero(t, uintptr(unsafe.Pointer(w.mu.writerHot))%64)
}
