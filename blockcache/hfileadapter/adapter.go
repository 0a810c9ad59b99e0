// Package hfileadapter makes a blockcache.LRU of *hfile.Block serve as an
// hfile.Cache, the small interface hfile.Reader consults. It is the only
// place that knows both packages: blockcache depends on nothing of ours, and
// hfile only on its interface.
//
//	c, err := hfileadapter.New(opts) // opts: blockcache.Options
//	regionOpts.BlockCache = c        // an hfile.Cache
//	stats := c.Stats().Map()         // for metrics and `pe --json`
//	defer c.Close()
package hfileadapter

import (
	"github.com/regionkv/regionkv/blockcache"
	"github.com/regionkv/regionkv/hfile"
)

// Cache is a blockcache.LRU of decoded HFile blocks; it implements
// hfile.Cache and exposes the LRU's Stats, EvictFile and Close.
type Cache struct {
	*blockcache.LRU[*hfile.Block]
}

var (
	_ hfile.Cache             = Cache{}
	_ hfile.DataBlockAdmitter = Cache{}
	_ hfile.RefCountingCache  = Cache{}
	_ hfile.OffHeapCache      = Cache{}
	_ hfile.SampledCache      = Cache{}
	_ hfile.DataBlockSkipper  = Cache{}
	_ hfile.FullCache         = Cache{}
)

// New returns a Cache configured by opts; Close stops its eviction goroutine.
func New(opts blockcache.Options) (Cache, error) {
	c, err := blockcache.New[*hfile.Block](opts)
	if err != nil {
		return Cache{}, err
	}
	return Cache{c}, nil
}

// GetBlock returns the cached block at (file, offset), or nil, with a
// reference for the caller (see hfile.RefCountingCache). It does not
// allocate.
func (c Cache) GetBlock(file uint64, offset int64) *hfile.Block {
	b, _ := c.Get(blockcache.Key{File: file, Offset: offset})
	return b
}

// GetCachedBlock is GetBlock, except that a block not cached is not
// counted as a miss (see blockcache.LRU.GetIfCached). It implements
// hfile.CachePeeker and does not allocate.
func (c Cache) GetCachedBlock(file uint64, offset int64) *hfile.Block {
	b, _ := c.GetIfCached(blockcache.Key{File: file, Offset: offset})
	return b
}

// GetBlockSampled is GetBlock counting weight hits on a hit (see
// blockcache.LRU.GetSampled). It implements hfile.SampledCache and does not
// allocate.
func (c Cache) GetBlockSampled(file uint64, offset int64, weight int) *hfile.Block {
	b, _ := c.GetSampled(blockcache.Key{File: file, Offset: offset}, weight)
	return b
}

// RechargeBlock adds delta bytes to the charge of b, cached at (file,
// offset) (see blockcache.LRU.Recharge). It implements hfile.CacheRecharger.
func (c Cache) RechargeBlock(file uint64, offset int64, b *hfile.Block, delta int64) {
	c.Recharge(blockcache.Key{File: file, Offset: offset}, b, delta)
}

// AdmitsDataBlock reports whether the cache's admission policy would take
// the data block at (file, offset) now (always with LRU; AdaptiveLRU skips
// by offset, TinyLFU by frequency); the reader asks after a miss and before
// reading, and reads a block the cache will refuse into reusable memory
// instead of offering it. It implements hfile.DataBlockAdmitter and does not
// allocate.
func (c Cache) AdmitsDataBlock(file uint64, offset int64) bool {
	return c.Admits(blockcache.Key{File: file, Offset: offset}, blockcache.KindData)
}

// SkipsDataBlock reports whether a read of the data block at (file, offset)
// should not look it up (see blockcache.LRU.SkipsLookup), counting it as a
// miss, by sample, if count is set. It implements hfile.DataBlockSkipper
// and does not allocate.
func (c Cache) SkipsDataBlock(file uint64, offset int64, count bool) bool {
	return c.SkipsLookup(blockcache.Key{File: file, Offset: offset}, count)
}

// OffHeapBlocks reports whether the cache's data blocks live outside the
// Go heap (blockcache.Options.OffHeap).
func (c Cache) OffHeapBlocks() bool { return c.LRU.OffHeap() }

// CountsBlockRefs reports true: the LRU takes and drops references on the
// blocks it holds (blockcache.Referenced), as hfile.RefCountingCache asks.
func (c Cache) CountsBlockRefs() bool { return true }

// CacheBlock offers b to the cache, which may decline it.
func (c Cache) CacheBlock(file uint64, offset int64, b *hfile.Block, inMemory bool) {
	c.Add(blockcache.Key{File: file, Offset: offset}, b, Kind(b.Type), inMemory)
}

// Kind maps an HFile block type to the cache's notion of it.
func Kind(t hfile.BlockType) blockcache.Kind {
	switch {
	case t.IsData():
		return blockcache.KindData
	case t.IsIndex():
		return blockcache.KindIndex
	case t.IsBloom():
		return blockcache.KindBloom
	}
	return blockcache.KindOther
}
