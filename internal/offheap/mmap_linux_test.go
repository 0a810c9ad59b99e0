package offheap

import "testing"

// TestChunksAligned checks that chunks start on a 2 MiB boundary, so that
// each can be one transparent huge page.
func TestChunksAligned(t *testing.T) {
	c := NewClass(MaxSize)
	var hs []Handle
	for i := 0; i < 3*int(c.perChunk); i++ {
		b, h := c.Alloc()
		if i%int(c.perChunk) == 0 && addr(b)%ChunkSize != 0 {
			t.Fatalf("chunk at %#x is not %d-aligned", addr(b), ChunkSize)
		}
		hs = append(hs, h)
	}
	for _, h := range hs {
		c.Free(h)
	}
}
