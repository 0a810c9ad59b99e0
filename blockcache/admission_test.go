package blockcache

import (
	"bytes"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

const mib = 1 << 20

type admissionRig struct {
	a       *admission
	percent atomic.Int32
	clock   fakeClock
	log     bytes.Buffer
}

func newAdmissionRig(countLimit int, mbLimit int64, coefficient float64) *admissionRig {
	r := &admissionRig{clock: fakeClock{t: time.Unix(1_000_000, 0)}}
	r.percent.Store(100)
	o := DefaultOptions()
	o.HeavyEvictionCountLimit = countLimit
	o.HeavyEvictionMBSizeLimit = mbLimit
	o.HeavyEvictionOverheadCoefficient = coefficient
	r.a = newAdmission(o, &r.percent, slog.New(slog.NewTextHandler(&r.log, nil)), r.clock.now())
	return r
}

// period feeds one 10 s period of eviction runs, each targeting the given
// bytes, the last one at the period's end, and returns the percent after it.
func (r *admissionRig) period(t *testing.T, runs ...int64) int {
	t.Helper()
	step := 10 * time.Second / time.Duration(len(runs))
	for i, b := range runs {
		r.clock.advance(step)
		ended := r.a.observe(r.clock.now(), b)
		require.Equal(t, i == len(runs)-1, ended, "run %d of %d", i, len(runs))
	}
	return int(r.percent.Load())
}

func TestAdmissionStepsLikeHBase(t *testing.T) {
	// count limit 0: the first heavy period already acts. MB limit 100,
	// coefficient 0.01: change = int(overhead% × 0.01), capped at 15.
	r := newAdmissionRig(0, 100, 0.01)
	// 500 MB: overhead 400% → change 4.
	require.Equal(t, 96, r.period(t, 100*mib, 100*mib, 100*mib, 100*mib, 100*mib))
	require.Equal(t, 1, r.a.heavyCount)
	require.Contains(t, r.log.String(),
		"BlockCache evicted (MB): 500, overhead (%): 400, heavy eviction counter: 1, current caching DataBlock (%): 96")
	// 2,000 MB: overhead 1,900% → 19, capped at 15.
	require.Equal(t, 81, r.period(t, 1000*mib, 1000*mib))
	// 150 MB: overhead 50% → 0 (int(0.5)).
	require.Equal(t, 81, r.period(t, 150*mib))
	// 101 MB: heavy, overhead 1% → 0.
	require.Equal(t, 81, r.period(t, 101*mib))
	require.Equal(t, 4, r.a.heavyCount)
	// 100 MB is not heavy (not > limit): overhead 0 → +int(0×0.1 + 1) = +1.
	require.Equal(t, 82, r.period(t, 100*mib))
	// 40 MB: overhead -60% → +int(6 + 1) = +7.
	require.Equal(t, 89, r.period(t, 20*mib, 20*mib))
	// 10 MB (10% of the limit): overhead -90% → +10.
	require.Equal(t, 99, r.period(t, 10*mib))
	// 55 MB: overhead -45% → +int(4.5 + 1) = +5, capped at 100.
	require.Equal(t, 100, r.period(t, 55*mib))
	require.Equal(t, 4, r.a.heavyCount, "the counter resets only when reading is over")
	// Heavy again, then eviction stops: back to 100% and the counter to 0.
	require.Equal(t, 96, r.period(t, 500*mib))
	require.Equal(t, 5, r.a.heavyCount)
	require.Equal(t, 100, r.period(t, 9*mib))
	require.Equal(t, 0, r.a.heavyCount)
}

func TestAdmissionCountLimitAndFloor(t *testing.T) {
	r := newAdmissionRig(2, 10, 1.0)
	// The first two heavy periods only count.
	require.Equal(t, 100, r.period(t, 100*mib))
	require.Equal(t, 100, r.period(t, 100*mib))
	// Then each heavy period takes 15 (overhead 900% × 1.0, capped).
	for want := 85; want > 0; want -= 15 {
		require.Equal(t, want, r.period(t, 100*mib))
	}
	// Never below 1%.
	require.Equal(t, 1, r.period(t, 100*mib))
	require.Equal(t, 1, r.period(t, 100*mib))
	// Eviction stops.
	require.Equal(t, 100, r.period(t, 0))
}

func TestAdmissionTruncatesPerRun(t *testing.T) {
	// HBase adds evict()/1MiB per wake-up: 30 runs of 1.9 MiB count as 30 MB.
	r := newAdmissionRig(0, 20, 0.1)
	runs := make([]int64, 30)
	for i := range runs {
		runs[i] = 19 * mib / 10
	}
	// 30 MB: overhead 50% → change 5.
	require.Equal(t, 95, r.period(t, runs...))
	// Runs under 1 MiB count as nothing: "heavy reading is over".
	for i := range runs {
		runs[i] = mib - 1
	}
	require.Equal(t, 100, r.period(t, runs...))
}

func TestAdmissionClamps(t *testing.T) {
	var p atomic.Int32
	o := DefaultOptions()
	o.HeavyEvictionCountLimit, o.HeavyEvictionMBSizeLimit, o.HeavyEvictionOverheadCoefficient = -5, 0, 7
	a := newAdmission(o, &p, quiet, time.Time{})
	require.Equal(t, 0, a.countLimit)
	require.EqualValues(t, 1, a.mbLimit)
	require.Equal(t, 1.0, a.coefficient)
	o.HeavyEvictionOverheadCoefficient = 0
	require.Equal(t, 0.001, newAdmission(o, &p, quiet, time.Time{}).coefficient)
	// HBase's default count limit never lets the percent drop.
	d := DefaultOptions()
	require.Equal(t, int(^uint32(0)>>1), newAdmission(d, &p, quiet, time.Time{}).countLimit)
}

func TestAdaptiveAdmissionByOffset(t *testing.T) {
	opts := testOptions(1 << 30)
	opts.Policy = PolicyAdaptiveLRU
	c := newTestLRU(t, opts)
	// At 100% every data block is admitted.
	require.True(t, c.Add(Key{Offset: 99}, block(c, 1000, 0), KindData, false))
	c.dataPercent.Store(85)
	for _, tc := range []struct {
		off  int64
		kind Kind
		want bool
	}{
		{184, KindData, true},  // 84 < 85
		{185, KindData, false}, // 85 ≥ 85
		{1_000_099, KindData, false},
		{1_000_000, KindData, true},
		{199, KindIndex, true}, // index, bloom and other blocks always
		{299, KindBloom, true},
		{399, KindOther, true},
		{-1, KindData, true}, // Go's and Java's % agree: -1 < 85
	} {
		require.Equal(t, tc.want, c.Add(Key{File: 1, Offset: tc.off}, block(c, 1000, 0), tc.kind, false), "offset %d kind %d", tc.off, tc.kind)
	}
	require.EqualValues(t, 0, c.Stats().FailedInsertionCount, "declined blocks are not failed inserts")
	// Plain LRU ignores the percent.
	o2 := testOptions(1 << 30)
	c2 := newTestLRU(t, o2)
	c2.dataPercent.Store(1)
	require.True(t, c2.Add(Key{Offset: 99}, block(c2, 1000, 0), KindData, false))
}

// TestAdaptiveEndToEnd drives the eviction goroutine's steps with a fake
// clock under a scan far larger than the cache: the percent must fall, the
// admitted offsets follow it, and it must recover when the scan stops.
func TestAdaptiveEndToEnd(t *testing.T) {
	clock := fakeClock{t: time.Unix(1_000_000, 0)}
	opts := testOptions(64 * mib)
	opts.Shards = 4
	opts.Policy = PolicyAdaptiveLRU
	opts.HeavyEvictionCountLimit = 0
	opts.HeavyEvictionMBSizeLimit = 10
	opts.HeavyEvictionOverheadCoefficient = 0.1
	opts.Period = time.Second
	opts.Now = clock.now
	var logBuf bytes.Buffer
	opts.Logger = slog.New(slog.NewTextHandler(&logBuf, nil))
	c := newTestLRU(t, opts)

	off := int64(0)
	scanPeriod := func() {
		// Offer 100 MiB of 64 KiB data blocks over a second, evicting as
		// the goroutine would whenever the cache passes acceptable.
		for i := 0; i < 1600; i++ {
			c.Add(Key{File: 1, Offset: off}, &testBlock{size: 64 << 10}, KindData, false)
			off += 65_537
			if i%100 == 99 {
				clock.advance(time.Second / 16)
				c.evictionStep()
			}
		}
	}
	percents := []int{}
	for range 5 {
		scanPeriod()
		percents = append(percents, c.CacheDataBlockPercent())
	}
	t.Logf("percent per period: %v", percents)
	require.Less(t, percents[len(percents)-1], 100)
	for i := 1; i < len(percents); i++ {
		require.LessOrEqual(t, percents[i], percents[i-1])
	}
	require.Contains(t, logBuf.String(), "current caching DataBlock (%)")
	// Offered blocks now follow the percent.
	p := int64(c.CacheDataBlockPercent())
	require.Equal(t, (off+1)%100 < p, c.Add(Key{File: 2, Offset: off + 1}, &testBlock{size: 1}, KindData, false))

	// Reading stops: a quiet period resets to 100%.
	clock.advance(time.Second)
	c.evictionStep()
	require.Equal(t, 100, c.CacheDataBlockPercent())
	st := c.Stats()
	require.Equal(t, 100, st.CacheDataBlockPercent)
	require.EqualValues(t, 100, st.Map()["cacheDataBlockPercent"])
	checkInvariants(t, c)
}

// TestAdmitsAgreesWithAdd: Admits, which a reader asks before reading a
// block, predicts Add's admission decision, for every kind and percent.
func TestAdmitsAgreesWithAdd(t *testing.T) {
	for _, policy := range []Policy{PolicyLRU, PolicyAdaptiveLRU} {
		o := testOptions(64 << 20)
		o.Policy = policy
		c := newTestLRU(t, o)
		for _, pct := range []int32{100, 73, 1} {
			if policy == PolicyAdaptiveLRU {
				c.dataPercent.Store(pct)
			}
			for _, kind := range []Kind{KindData, KindIndex, KindBloom, KindOther} {
				for off := int64(pct) * 1000; off < int64(pct)*1000+200; off++ {
					k := Key{File: uint64(kind), Offset: off}
					admits := c.Admits(k, kind)
					want := policy == PolicyLRU || kind != KindData || pct == 100 || off%100 < int64(pct)
					require.Equal(t, want, admits, "%s %d %d%% offset %d", policy, kind, pct, off)
					require.Equal(t, admits, c.Add(k, block(c, 100, 0), kind, false), "%s %d %d%% offset %d", policy, kind, pct, off)
				}
			}
		}
	}
}

// TestSkipsLookup: AdaptiveLRU tells a reader to skip the lookup of exactly
// the data blocks Admits refuses, and counts skipped reads, when asked to, as
// misses, by sample; LRU and TinyLFU never skip.
func TestSkipsLookup(t *testing.T) {
	for _, policy := range []Policy{PolicyLRU, PolicyAdaptiveLRU, PolicyTinyLFU} {
		o := testOptions(64 << 20)
		o.Policy = policy
		c := newTestLRU(t, o)
		for _, pct := range []int32{100, 73, 1} {
			c.dataPercent.Store(pct)
			for off := int64(0); off < 300; off++ {
				k := Key{File: 1, Offset: off}
				misses := c.Stats().MissCount
				skips := c.SkipsLookup(k, false)
				want := policy == PolicyAdaptiveLRU && pct < 100 && off%100 >= int64(pct)
				require.Equal(t, want, skips, "%s %d%% offset %d", policy, pct, off)
				require.Equal(t, !c.Admits(k, KindData), skips, "%s %d%% offset %d", policy, pct, off)
				require.Equal(t, misses, c.Stats().MissCount, "not counted unless asked")
				if !skips {
					require.False(t, c.SkipsLookup(k, true))
					require.Equal(t, misses, c.Stats().MissCount, "a read that looks up is counted by the lookup")
				}
			}
		}
		// Counted skips add skipCountEvery misses one time in
		// skipCountEvery: 16,000 reads make 1,000 samples on average
		// (standard deviation 31), so the estimate is within 15% (5
		// deviations) of the reads, and a multiple of skipCountEvery.
		c.dataPercent.Store(1)
		k := Key{File: 2, Offset: 50}
		const reads = 16000
		before := c.Stats().MissCount
		for range reads {
			require.Equal(t, policy == PolicyAdaptiveLRU, c.SkipsLookup(k, true))
		}
		got := c.Stats().MissCount - before
		if policy != PolicyAdaptiveLRU {
			require.Zero(t, got, policy)
			continue
		}
		require.Zero(t, got%skipCountEvery)
		require.InDelta(t, reads, got, reads*0.15)
	}
}
