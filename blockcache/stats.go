package blockcache

// Stats are the cache's counters and sizes, named after HBase's region
// server metrics.
type Stats struct {
	HitCount  int64 // blockCacheHitCount
	MissCount int64 // blockCacheMissCount
	// EvictionCount counts blocks evicted by the eviction process (not
	// EvictFile), as HBase's blockCacheEvictionCount.
	EvictionCount int64
	EvictedBytes  int64 // blockCacheEvictedBytes (ours)
	EvictionRuns  int64 // blockCacheEvictionRunCount (ours)
	// FailedInsertionCount counts inserts refused at the hard limit or for a
	// block above the max block size (blockCacheFailedInsertionCount).
	FailedInsertionCount int64
	Size                 int64 // blockCacheSize: bytes charged
	MaxSize              int64 // blockCacheMaxSize (ours)
	Count                int64 // blockCacheCount: blocks
	DataBlockCount       int64 // blockCacheDataBlockCount
	// SingleSize, MultiSize and MemorySize split Size by priority.
	SingleSize, MultiSize, MemorySize int64
	// CacheDataBlockPercent is the adaptive admission percent (100 for LRU).
	CacheDataBlockPercent int
	// AdmissionRejectedCount counts data blocks TinyLFU turned away
	// (blockCacheAdmissionRejectedCount, ours; 0 for the other policies).
	AdmissionRejectedCount int64
	Shards                 int
}

// HitRatio returns hits / (hits + misses), or 0 before any request.
func (s Stats) HitRatio() float64 {
	if n := s.HitCount + s.MissCount; n > 0 {
		return float64(s.HitCount) / float64(n)
	}
	return 0
}

// Map returns the stats under HBase's metric names (and ours where HBase has
// none), for the metrics endpoint and `regionsrv pe --json`'s "blockCache".
// blockCacheCountHitPercent is a percentage, as HBase's; blockCacheHitRatio
// is the same as a fraction.
func (s Stats) Map() map[string]float64 {
	return map[string]float64{
		"blockCacheHitCount":               float64(s.HitCount),
		"blockCacheMissCount":              float64(s.MissCount),
		"blockCacheEvictionCount":          float64(s.EvictionCount),
		"blockCacheEvictedBytes":           float64(s.EvictedBytes),
		"blockCacheEvictionRunCount":       float64(s.EvictionRuns),
		"blockCacheFailedInsertionCount":   float64(s.FailedInsertionCount),
		"blockCacheSize":                   float64(s.Size),
		"blockCacheFreeSize":               float64(max(s.MaxSize-s.Size, 0)),
		"blockCacheMaxSize":                float64(s.MaxSize),
		"blockCacheCount":                  float64(s.Count),
		"blockCacheDataBlockCount":         float64(s.DataBlockCount),
		"blockCacheCountHitPercent":        100 * s.HitRatio(),
		"blockCacheHitRatio":               s.HitRatio(),
		"cacheDataBlockPercent":            float64(s.CacheDataBlockPercent),
		"blockCacheAdmissionRejectedCount": float64(s.AdmissionRejectedCount),
	}
}

// Stats returns the cache's counters and sizes. It takes each shard's lock
// in turn, so the figures are not one instant's snapshot.
func (c *LRU[V]) Stats() Stats {
	st := Stats{
		EvictionCount:         c.evictions.Load(),
		EvictedBytes:          c.evictedBytes.Load(),
		EvictionRuns:          c.evictionRuns.Load(),
		FailedInsertionCount:  c.failedInserts.Load(),
		Size:                  c.size.Load(),
		MaxSize:               c.maxSize,
		CacheDataBlockPercent: int(c.dataPercent.Load()),
		Shards:                len(c.shards),
	}
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		st.HitCount += s.hits
		st.MissCount += s.misses + s.skipped.Load()
		st.Count += s.count
		st.DataBlockCount += s.data
		st.SingleSize += s.bytes[prioSingle]
		st.MultiSize += s.bytes[prioMulti]
		st.MemorySize += s.bytes[prioMemory]
		st.AdmissionRejectedCount += s.rejected
		s.mu.Unlock()
	}
	return st
}
