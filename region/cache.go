package region

import (
	"sync/atomic"

	"github.com/regionkv/regionkv/blockcache"
	"github.com/regionkv/regionkv/blockcache/hfileadapter"
	"github.com/regionkv/regionkv/hfile"
)

// Cache is a block cache for store file blocks (data, index and bloom
// blocks), HBase's LruBlockCache: sharded, with single-access, multi-access
// and in-memory priorities, and optionally HBase's adaptive admission or
// TinyLFU (blockcache.Options.Policy).
//
// A Cache is shared: a region server gives one to all its regions, so that
// memory goes to whichever region is read. Whoever calls NewCache owns it and
// closes it after closing every region that uses it. A region opened with
// Options.CacheSize and no Cache makes one of its own and closes it itself.
//
// A Cache is safe for concurrent use.
type Cache struct {
	c        hfileadapter.Cache
	isClosed atomic.Bool
}

// NewCache returns a cache of size bytes with HBase's default settings.
func NewCache(size int64) (*Cache, error) {
	o := blockcache.DefaultOptions()
	o.Size = size
	return NewCacheWithOptions(o)
}

// NewCacheWithOptions returns a cache configured by o (start from
// blockcache.DefaultOptions; blockcache.Options.SetConfig takes HBase's
// property names).
func NewCacheWithOptions(o blockcache.Options) (*Cache, error) {
	c, err := hfileadapter.New(o)
	if err != nil {
		return nil, err
	}
	return &Cache{c: c}, nil
}

// CacheStats are a cache's counters and sizes, named after HBase's region
// server metrics (blockCacheHitCount, ...).
type CacheStats = blockcache.Stats

// Stats returns the cache's counters.
func (c *Cache) Stats() CacheStats { return c.c.Stats() }

// Close stops the cache's eviction goroutine and drops its blocks. Regions
// still reading through it read their files instead. Close is idempotent.
func (c *Cache) Close() error {
	c.isClosed.Store(true)
	return c.c.Close() // the LRU closes once
}

// hfileCache returns what hfile readers consult.
func (c *Cache) hfileCache() hfile.Cache { return c.c }

// statser is what a deprecated Options.BlockCache may offer for Stats.
type statser interface{ Stats() blockcache.Stats }
