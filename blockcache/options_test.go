package blockcache

import (
	"runtime/debug"
	"testing"
	"time"

	"github.com/regionkv/regionkv/internal/gcreserve"
	"github.com/stretchr/testify/require"
)

func TestSetConfig(t *testing.T) {
	o := DefaultOptions()
	set := func(k, v string) {
		t.Helper()
		require.NoError(t, o.SetConfig(k, v), "%s=%s", k, v)
	}
	set("hfile.block.cache.size", "0.25")
	set("regionkv.memory.budget", "4g")
	require.EqualValues(t, 1<<30, o.CacheSize())
	set("hfile.block.cache.size", "64m")
	require.EqualValues(t, 64<<20, o.CacheSize())
	set("hfile.block.cache.size", "1048576")
	require.EqualValues(t, 1<<20, o.CacheSize())
	set("hfile.block.cache.size", "1.5GiB")
	require.EqualValues(t, 3<<29, o.CacheSize())
	set("hfile.block.cache.size", "0")
	require.EqualValues(t, 0, o.CacheSize())

	set("hfile.block.cache.policy", "AdaptiveLRU")
	require.Equal(t, PolicyAdaptiveLRU, o.Policy)
	set("hfile.block.cache.policy", "lru")
	require.Equal(t, PolicyLRU, o.Policy)
	set("hfile.block.cache.policy", "TinyLFU")
	require.Equal(t, PolicyTinyLFU, o.Policy)
	set("hfile.block.cache.policy", "lru")
	require.ErrorContains(t, o.SetConfig("hfile.block.cache.policy", "IndexOnlyLRU"), "unsupported")

	set("hbase.lru.blockcache.acceptable.factor", "0.9")
	set("hbase.lru.blockcache.min.factor", "0.8")
	set("hbase.lru.blockcache.single.percentage", "0.3")
	set("hbase.lru.blockcache.multi.percentage", "0.6")
	set("hbase.lru.blockcache.memory.percentage", "0.1")
	set("hbase.lru.blockcache.hard.capacity.limit.factor", "1.5")
	set("hbase.lru.rs.inmemoryforcemode", "true")
	set("hbase.lru.blockcache.eviction.thread", "true")
	set("hbase.lru.max.block.size", "1m")
	set("hbase.lru.cache.heavy.eviction.count.limit", "3")
	set("hbase.lru.cache.heavy.eviction.mb.size.limit", "200")
	set("hbase.lru.cache.heavy.eviction.overhead.coefficient", "0.05")
	set("hbase.lru.cache.heavy.eviction.period.ms", "1500")
	set("hbase.lru.blockcache.shards", "3")
	set("hbase.blockcache.tinylfu.sample.factor", "20")
	set("hbase.blockcache.tinylfu.width.factor", "8")
	set("regionkv.blockcache.offheap.min.size", "32m")
	set("regionkv.blockcache.gc.reserve", "16m")
	require.Equal(t, Options{
		Fraction: 0, MemoryBudget: 4 << 30, Policy: PolicyLRU,
		AcceptableFactor: 0.9, MinFactor: 0.8, SingleFactor: 0.3, MultiFactor: 0.6, MemoryFactor: 0.1,
		HardLimitFactor: 1.5, ForceInMemory: true, EvictionThread: true, MaxBlockSize: 1 << 20,
		HeavyEvictionCountLimit: 3, HeavyEvictionMBSizeLimit: 200, HeavyEvictionOverheadCoefficient: 0.05,
		Period: 1500 * time.Millisecond, Shards: 3, TinyLFUSampleFactor: 20, TinyLFUWidthFactor: 8,
		OffHeapMinSize: 32 << 20, GCReserve: 16 << 20,
	}, o)
	require.Error(t, o.SetConfig("hbase.blockcache.tinylfu.sample.factor", "0"))

	require.ErrorContains(t, o.SetConfig("hbase.lru.blockcache.bogus", "1"), "unknown property")
	require.Error(t, o.SetConfig("hfile.block.cache.size", "-0.1"))
	require.Error(t, o.SetConfig("hfile.block.cache.size", "2.5"))
	require.Error(t, o.SetConfig("hfile.block.cache.size", "lots"))
	require.Error(t, o.SetConfig("hbase.lru.cache.heavy.eviction.period.ms", "0"))
	require.Error(t, o.SetConfig("hbase.lru.rs.inmemoryforcemode", "maybe"))
}

// TestGCReserve checks that an open cache holds its GC reserve, that two
// share the larger, and that Close gives it back; and that the default is
// none where the program tuned its collector.
func TestGCReserve(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	// Every other test closes its caches.
	require.EqualValues(t, 0, gcreserve.Size())
	o := DefaultOptions()
	if gcreserve.Tuned() { // GOMEMLIMIT in the test's environment
		require.EqualValues(t, 0, o.GCReserve)
	} else {
		require.EqualValues(t, DefaultGCReserve, o.GCReserve)
	}
	o.Size = 1 << 20
	o.GCReserve = 8 << 20
	a, err := New[*testBlock](o)
	require.NoError(t, err)
	require.EqualValues(t, 8<<20, gcreserve.Size())
	o.GCReserve = 16 << 20
	b, err := New[*testBlock](o)
	require.NoError(t, err)
	require.EqualValues(t, 16<<20, gcreserve.Size())
	require.NoError(t, b.Close())
	require.EqualValues(t, 8<<20, gcreserve.Size())
	require.NoError(t, a.Close())
	require.NoError(t, a.Close())
	require.EqualValues(t, 0, gcreserve.Size())

	debug.SetGCPercent(200)
	require.EqualValues(t, 0, DefaultOptions().GCReserve)
}

// TestOffHeapGCReserve checks that an off-heap cache asks for a reserve of
// its own size, between GCReserve and MaxOffHeapGCReserve, and an on-heap
// one for GCReserve; and none when GCReserve is 0.
func TestOffHeapGCReserve(t *testing.T) {
	o := DefaultOptions()
	o.GCReserve = DefaultGCReserve
	for _, c := range []struct {
		size, want int64
	}{
		{32 << 20, DefaultGCReserve}, // on the heap
		{DefaultOffHeapMinSize, DefaultGCReserve},
		{200 << 20, 200 << 20},
		{4 << 30, MaxOffHeapGCReserve},
	} {
		o.Size = c.size
		require.Equal(t, c.size >= DefaultOffHeapMinSize, o.OffHeap(), "size %d", c.size)
		require.EqualValues(t, c.want, o.gcReserve(), "size %d", c.size)
	}
	o.GCReserve = 0
	require.EqualValues(t, 0, o.gcReserve(), "no reserve asked for")
	o.GCReserve = 512 << 20
	require.EqualValues(t, 512<<20, o.gcReserve(), "a larger reserve asked for")

	// An open off-heap cache holds it.
	require.EqualValues(t, 0, gcreserve.Size())
	o.Size, o.GCReserve = 128<<20, DefaultGCReserve
	c, err := New[*testBlock](o)
	require.NoError(t, err)
	require.EqualValues(t, 128<<20, gcreserve.Size())
	require.NoError(t, c.Close())
	require.EqualValues(t, 0, gcreserve.Size())
}

// TestOffHeap checks which caches keep their blocks off the Go heap: those
// at least OffHeapMinSize, and none when it is negative.
func TestOffHeap(t *testing.T) {
	o := DefaultOptions()
	o.Size = DefaultOffHeapMinSize - 1
	require.False(t, o.OffHeap())
	o.Size = DefaultOffHeapMinSize
	require.True(t, o.OffHeap())
	o.Size, o.Fraction, o.MemoryBudget = 0, 0.4, 1<<30 // 410 MiB
	require.True(t, o.OffHeap())
	require.NoError(t, o.SetConfig("regionkv.blockcache.offheap.min.size", "-1"))
	require.EqualValues(t, -1, o.OffHeapMinSize)
	require.False(t, o.OffHeap())
	require.NoError(t, o.SetConfig("regionkv.blockcache.offheap.min.size", "0"))
	o.Size = 1 << 20
	require.True(t, o.OffHeap())
	require.Error(t, o.SetConfig("regionkv.blockcache.offheap.min.size", "-lots"))
	require.Error(t, o.SetConfig("regionkv.blockcache.offheap.min.size", "big"))

	c, err := New[*testBlock](o)
	require.NoError(t, err)
	defer c.Close()
	require.True(t, c.OffHeap())
	o.OffHeapMinSize = 2 << 20
	d, err := New[*testBlock](o)
	require.NoError(t, err)
	defer d.Close()
	require.False(t, d.OffHeap())
}

func TestConfigKeysAreKnown(t *testing.T) {
	for _, k := range ConfigKeys {
		require.True(t, IsConfigKey(k))
		o := DefaultOptions()
		err := o.SetConfig(k, "")
		require.Error(t, err, k)
		require.NotContains(t, err.Error(), "unknown property", k)
	}
	require.False(t, IsConfigKey("hbase.hregion.memstore.flush.size"))
}

func TestDefaults(t *testing.T) {
	o := DefaultOptions()
	o.MemoryBudget = 10 << 30
	require.EqualValues(t, 4<<30, o.CacheSize())
	n := o.shards()
	require.Equal(t, 0, n&(n-1), "power of two")
	require.Equal(t, "AdaptiveLRU", PolicyAdaptiveLRU.String())
	require.Equal(t, "TinyLFU", PolicyTinyLFU.String())
}
