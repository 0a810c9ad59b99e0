package region

import (
	"fmt"
	"github.com/regionkv/regionkv/encoding"
	"github.com/regionkv/regionkv/memstore"
	"testing"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/stretchr/testify/require"
)

// TestMemstoreLimitFlushesLargest: regions sharing a limit are flushed
// largest first once together they pass the lower limit, though neither
// reaches its own flush size.
func TestMemstoreLimitFlushesLargest(t *testing.T) {
	m, err := NewMemstoreLimit(256<<10, 0.5)
	require.NoError(t, err)
	defer m.Close()
	open := func() *Region {
		return openTest(t, t.TempDir(), func(o *Options) { o.MemstoreLimit = m; o.FlushSize = 64 << 20 })
	}
	big, small := open(), open()
	defer big.Close()
	defer small.Close()
	val := make([]byte, 1000)
	for i := 0; i < 40; i++ {
		require.NoError(t, small.Put(NewPut(b(fmt.Sprintf("s%03d", i))).Add(fam, b("q"), val)))
	}
	require.Zero(t, big.Stats().Flushes+small.Stats().Flushes, "below the lower limit nothing flushes")
	for i := 0; i < 100; i++ {
		require.NoError(t, big.Put(NewPut(b(fmt.Sprintf("b%03d", i))).Add(fam, b("q"), val)))
	}
	require.Eventually(t, func() bool { return big.Stats().Flushes > 0 }, 10*time.Second, 5*time.Millisecond)
	require.Eventually(t, func() bool { return m.Stats().Used <= m.Stats().Lower }, 10*time.Second, 5*time.Millisecond)
	require.Zero(t, small.Stats().Flushes, "flushing the largest was enough")
	st := m.Stats()
	require.Equal(t, 2, st.Regions)
	require.Equal(t, big.Stats().MemStoreHeapSize+small.Stats().MemStoreHeapSize, st.Used, "the limit counts heap sizes")
	res, err := big.Get(NewGet(b("b050")))
	require.NoError(t, err)
	require.Len(t, res.Cells, 1)
}

// TestMemstoreLimitBlocksWrites: above the upper limit writes wait for
// flushes, and fail with ErrRegionTooBusy when none frees memory in time.
func TestMemstoreLimitBlocksWrites(t *testing.T) {
	m, err := NewMemstoreLimit(64<<10, 0.9)
	require.NoError(t, err)
	m.Close() // no flusher: nothing will free memory
	r := openTest(t, t.TempDir(), func(o *Options) {
		o.MemstoreLimit = m
		o.FlushSize = 64 << 20
		o.BlockingWait = 100 * time.Millisecond
	})
	val := make([]byte, 1000)
	var busy error
	for i := 0; i < 200 && busy == nil; i++ {
		busy = r.Put(NewPut(b(fmt.Sprintf("r%03d", i))).Add(fam, b("q"), val))
	}
	require.True(t, errors.Is(busy, ErrRegionTooBusy), "%v", busy)
	require.Contains(t, busy.Error(), "global memstore limit")
	require.Greater(t, r.Stats().BlockedWrites, int64(0))
	// A flush frees the memory; writes go on.
	require.NoError(t, r.Flush())
	require.NoError(t, r.Put(NewPut(b("after")).Add(fam, b("q"), val)))
	require.NoError(t, r.Close())
	require.Zero(t, m.Stats().Used, "a closed region no longer counts")
	require.Zero(t, m.Stats().Regions)
}

// TestFlushSizeCountsHeap: FlushSize bounds the memstores' heap size, as
// HBase 2's flush size does, not their data size: small cells hold several
// times their data in memory, and a memstore of them is flushed before its
// data alone reaches the flush size.
func TestFlushSizeCountsHeap(t *testing.T) {
	const flushSize = 256 << 10
	r := openTest(t, t.TempDir(), func(o *Options) { o.FlushSize = flushSize })
	defer r.Close()
	var data int64
	for i := 0; data < flushSize/2; i++ {
		require.NoError(t, r.Put(NewPut(b(fmt.Sprintf("r%06d", i))).Add(fam, b("q"), b("v"))))
		st := r.Stats()
		require.Greater(t, st.MemStoreHeapSize, st.MemStoreSize, "a cell holds more memory than its data")
		data += memstore.DataSize(&encoding.KeyValue{Row: b(fmt.Sprintf("r%06d", i)), Family: fam, Qualifier: b("q"), Value: b("v")})
	}
	require.Less(t, data, int64(flushSize), "the data alone is below the flush size")
	require.Eventually(t, func() bool {
		st := r.Stats()
		return st.Flushes > 0 && st.MemStoreHeapSize < flushSize
	}, 10*time.Second, 5*time.Millisecond, "%d data bytes written, heap past the flush size", data)
}

// TestFlushRequestAfterFlushSkips is the race a CI run of the ENOSPC flush
// test met: the flusher, asked to flush while another flush held flushMu,
// used to flush anyway once it got the lock, writing the few cells that had
// arrived since as a file of their own. It checks the size again under the
// lock now.
func TestFlushRequestAfterFlushSkips(t *testing.T) {
	const flushSize = 64 << 10
	waiting := make(chan struct{}, 1)
	flusherWaitHook = func() {
		select {
		case waiting <- struct{}{}:
		default:
		}
	}
	defer func() { flusherWaitHook = nil }()
	r := openTest(t, t.TempDir(), func(o *Options) {
		o.FlushSize = flushSize
		o.DisableAutoCompaction = true
	})
	defer r.Close()
	r.flushMu.Lock() // a flush in progress: the flusher waits for it
	for i := 0; r.memHeap.Load() < flushSize; i++ {
		require.NoError(t, r.Put(NewPut(b(fmt.Sprintf("r%06d", i))).Add(fam, b("q"), make([]byte, 100))))
	}
	<-waiting // the flusher found the memstore full and waits for flushMu
	_, err := r.flushLocked()
	require.NoError(t, err)
	require.NoError(t, r.Put(NewPut(b("late")).Add(fam, b("q"), b("v"))))
	r.flushMu.Unlock()
	// The channel holds one request: once the second send goes through,
	// the flusher has taken the first, so it is done with the request it
	// waited on.
	r.flushReq <- struct{}{}
	r.flushReq <- struct{}{}
	require.Len(t, r.Store("f").Files(), 1, "the flusher wrote the late cell as a file of its own")
	require.Positive(t, r.Stats().MemStoreSize)
}
