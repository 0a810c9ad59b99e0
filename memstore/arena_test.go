package memstore

import (
	"testing"
	"time"

	"github.com/regionkv/regionkv/encoding"
	"github.com/stretchr/testify/require"
)

// waitReady waits for the arena's goroutine to have made a chunk and a
// slab ready.
func waitReady(t *testing.T, a *arena) (*byteChunk, *slab[cell]) {
	t.Helper()
	require.Eventually(t, func() bool {
		return !a.preparing.Load() && a.readyChunk.Load() != nil && a.readyCells.Load() != nil
	}, 10*time.Second, time.Millisecond)
	return a.readyChunk.Load(), a.readyCells.Load()
}

// TestArenaReadyAhead: an arena that has grown to full-size chunks and
// slabs has the next of each made ready beside its writers, and takes them
// when the current ones fill; an arena that has not stays without. The
// cells copied across the changes read back whole.
func TestArenaReadyAhead(t *testing.T) {
	a := &arena{}
	value := make([]byte, 1000)
	var kvs []*encoding.KeyValue
	add := func(i int) {
		value[0] = byte(i)
		kv := &encoding.KeyValue{Row: []byte{byte(i >> 8), byte(i)}, Family: []byte("f"), Qualifier: []byte("q"),
			Timestamp: int64(i), Type: encoding.TypePut, Value: value}
		kvs = append(kvs, &a.copyKV(kv).kv)
	}
	for i := 0; i < 100; i++ {
		add(i)
	}
	require.Nil(t, a.readyChunk.Load(), "a small arena gets no memory made ready")
	require.False(t, a.preparing.Load())

	// Grow to full-size chunks (64 KiB doubling to 2 MiB) and slabs.
	i := 100
	for ; len(a.chunk.Load().buf) < maxChunkSize || len(a.cells.Load().items) < maxSlabLen; i++ {
		add(i)
	}
	chunk, cells := waitReady(t, a)
	require.Len(t, chunk.buf, maxChunkSize)
	require.Len(t, cells.items, maxSlabLen)
	// Both are taken when the current ones fill (the slab fills first:
	// each cell takes a slot and about 1 KiB of a chunk).
	sawChunk, sawCells := false, false
	for n := 0; !(sawChunk && sawCells); n++ {
		require.Less(t, n, 4*maxSlabLen, "the ready chunk and slab were not taken")
		add(i)
		i++
		sawChunk = sawChunk || a.chunk.Load() == chunk
		sawCells = sawCells || a.cells.Load() == cells
	}
	require.NotSame(t, chunk, a.readyChunk.Load())
	require.NotSame(t, cells, a.readyCells.Load())
	next, _ := waitReady(t, a)
	require.NotSame(t, chunk, next)
	for j, kv := range kvs {
		require.Equal(t, []byte{byte(j >> 8), byte(j)}, kv.Row)
		require.Equal(t, byte(j), kv.Value[0])
		require.Len(t, kv.Value, len(value))
		require.EqualValues(t, j, kv.Timestamp)
	}
}
