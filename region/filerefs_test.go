package region

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestFileRefs: a file's references report the last one dropped exactly
// once, when the store's own and every read's are gone, whichever goes
// last, and whatever shards the reads took and dropped theirs in.
func TestFileRefs(t *testing.T) {
	var r fileRefs
	r.own.Store(1)
	r.takeRead(3)
	r.takeRead(40)
	r.own.Add(1) // a compaction's
	require.False(t, r.dropOwn(), "the store still holds it")
	require.False(t, r.dropRead(3), "the store and a read hold it")
	require.False(t, r.dropOwn(), "a read holds it")
	require.True(t, r.dropRead(7), "the last, dropped in another shard than it was taken in")
	require.False(t, r.lastDropped(), "reported once")
	require.Zero(t, r.sum())
}

// TestFileRefsConcurrent: reads take and drop references on many
// goroutines, as Gets do (under the store's read lock, while the store
// lists the file), while the store unlists the file and drops its own
// reference; the last drop is reported once, when no read holds the file.
func TestFileRefsConcurrent(t *testing.T) {
	for round := 0; round < 100; round++ {
		var r fileRefs
		r.own.Store(1)
		var lasts, inUse atomic.Int32
		var mu sync.RWMutex
		listed := true
		last := func() {
			require.Zero(t, inUse.Load(), "reported while a read uses the file")
			lasts.Add(1)
		}
		var wg sync.WaitGroup
		for g := 0; g < 8; g++ {
			wg.Add(1)
			go func(h readHint) {
				defer wg.Done()
				for i := 0; ; i++ {
					mu.RLock()
					ok := listed
					if ok {
						r.takeRead(h)
					}
					mu.RUnlock()
					if !ok {
						return
					}
					inUse.Add(1)
					inUse.Add(-1)
					if r.dropRead(h + readHint(i%3)) {
						last()
					}
				}
			}(readHint(g))
		}
		mu.Lock()
		listed = false
		mu.Unlock()
		if r.dropOwn() {
			last()
		}
		wg.Wait()
		require.EqualValues(t, 1, lasts.Load(), "round %d", round)
		require.Zero(t, r.sum())
	}
}

// TestFileRefsSpread: consecutive read hints take their references in
// every shard, not in one line for several of them.
func TestFileRefsSpread(t *testing.T) {
	var r fileRefs
	for range 4 * fileRefShards {
		r.takeRead(newReadHint())
	}
	for i := range r.shards {
		require.Equal(t, int32(4), r.shards[i].n.Load(), "shard %d", i)
	}
}
