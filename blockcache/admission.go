package blockcache

import (
	"fmt"
	"log/slog"
	"math"
	"sync/atomic"
	"time"
)

// admission is the control loop of HBase's LruAdaptiveBlockCache
// (HBASE-23887): it watches how much each period's eviction runs set out to
// free and lowers cacheDataBlockPercent under sustained heavy eviction, so
// that only data blocks with offset % 100 below the percent are cached.
// It is owned by the eviction goroutine.
type admission struct {
	countLimit  int     // hbase.lru.cache.heavy.eviction.count.limit
	mbLimit     int64   // hbase.lru.cache.heavy.eviction.mb.size.limit
	coefficient float64 // hbase.lru.cache.heavy.eviction.overhead.coefficient
	period      time.Duration
	percent     *atomic.Int32 // cacheDataBlockPercent, read by Add
	logger      *slog.Logger

	freedSumMB  int64
	heavyCount  int
	overheadPct int
	periodStart time.Time
}

func newAdmission(o Options, percent *atomic.Int32, logger *slog.Logger, now time.Time) *admission {
	return &admission{
		// The clamps of LruAdaptiveBlockCache's constructor (with the
		// addendum's fix: the MB limit is clamped from the MB parameter).
		countLimit:  max(o.HeavyEvictionCountLimit, 0),
		mbLimit:     max(o.HeavyEvictionMBSizeLimit, 1),
		coefficient: math.Min(math.Max(o.HeavyEvictionOverheadCoefficient, 0.001), 1.0),
		period:      o.Period,
		percent:     percent,
		logger:      logger,
		periodStart: now,
	}
}

// observe takes the bytes one eviction run targeted (0 if it did not run)
// and, once a period has passed, adjusts cacheDataBlockPercent as
// LruAdaptiveBlockCache.EvictionThread does. It reports whether a period
// ended.
func (a *admission) observe(now time.Time, targeted int64) bool {
	a.freedSumMB += targeted / (1 << 20) // per run, truncated, as HBase
	if now.Sub(a.periodStart) < a.period-time.Millisecond {
		return false
	}
	pct := int(a.percent.Load())
	a.overheadPct = int(a.freedSumMB*100/a.mbLimit) - 100
	if a.freedSumMB > a.mbLimit {
		a.heavyCount++
		if a.heavyCount > a.countLimit {
			change := int(float64(a.overheadPct) * a.coefficient)
			change = min(15, max(0, change))
			pct = max(1, pct-change)
		}
	} else if float64(a.freedSumMB) >= float64(a.mbLimit)*0.1 {
		// Overshooting: maybe a short dip; creep back up.
		pct = min(100, pct+int(float64(-a.overheadPct)*0.1+1))
	} else {
		// Heavy reading is over.
		a.heavyCount = 0
		pct = 100
	}
	a.percent.Store(int32(pct))
	a.logger.Info(fmt.Sprintf("BlockCache evicted (MB): %d, overhead (%%): %d, heavy eviction counter: %d, current caching DataBlock (%%): %d",
		a.freedSumMB, a.overheadPct, a.heavyCount, pct))
	a.freedSumMB = 0
	a.periodStart = now
	return true
}
