package blockcache

import (
	"log/slog"
	"math"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/internal/gcreserve"
	"github.com/regionkv/regionkv/internal/hbaseconf"
)

// Policy is hfile.block.cache.policy.
type Policy uint8

const (
	// PolicyLRU is HBase's LruBlockCache.
	PolicyLRU Policy = iota
	// PolicyAdaptiveLRU is HBase's LruAdaptiveBlockCache: LRU plus adaptive
	// admission of data blocks under heavy eviction.
	PolicyAdaptiveLRU
	// PolicyTinyLFU is LruBlockCache with TinyLFU admission in front: a
	// frequency sketch lets a new data block in only if it has been read
	// more often, recently, than the block it would displace. (HBase's
	// TinyLfuBlockCache is Caffeine's W-TinyLFU, eviction and all; this keeps
	// HBase's LRU eviction and priorities and adds only the admission.)
	PolicyTinyLFU
)

func (p Policy) String() string {
	switch p {
	case PolicyLRU:
		return "LRU"
	case PolicyAdaptiveLRU:
		return "AdaptiveLRU"
	case PolicyTinyLFU:
		return "TinyLFU"
	}
	return "Policy(" + strconv.Itoa(int(p)) + ")"
}

// ParsePolicy parses a hfile.block.cache.policy value, case-insensitively as
// HBase's BlockCacheFactory does. IndexOnlyLRU is not supported.
func ParsePolicy(s string) (Policy, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "lru":
		return PolicyLRU, nil
	case "adaptivelru":
		return PolicyAdaptiveLRU, nil
	case "tinylfu":
		return PolicyTinyLFU, nil
	}
	return 0, errors.Newf("blockcache: unsupported hfile.block.cache.policy %q (want LRU, AdaptiveLRU or TinyLFU)", s)
}

// HBase's defaults.
const (
	DefaultFraction                         = 0.4 // hfile.block.cache.size
	DefaultAcceptableFactor                 = 0.99
	DefaultMinFactor                        = 0.95
	DefaultSingleFactor                     = 0.25
	DefaultMultiFactor                      = 0.50
	DefaultMemoryFactor                     = 0.25
	DefaultHardLimitFactor                  = 1.2
	DefaultMaxBlockSize                     = 16 << 20 // hbase.lru.max.block.size
	DefaultHeavyEvictionCountLimit          = math.MaxInt32
	DefaultHeavyEvictionMBSizeLimit         = 500
	DefaultHeavyEvictionOverheadCoefficient = 0.01
	DefaultPeriod                           = 10 * time.Second
	// DefaultTinyLFUSampleFactor and DefaultTinyLFUWidthFactor are TinyLFU's
	// sample size and sketch width as multiples of the blocks a shard holds
	// (the paper's and Caffeine's sample of 10 × the cache's entries).
	DefaultTinyLFUSampleFactor = 10
	DefaultTinyLFUWidthFactor  = 4
	// DefaultOffHeapMinSize is regionkv.blockcache.offheap.min.size: a
	// cache of 64 MiB or more keeps its blocks outside the Go heap.
	DefaultOffHeapMinSize = 64 << 20
	// DefaultGCReserve is regionkv.blockcache.gc.reserve where the program
	// has not tuned its collector (see Options.GCReserve).
	DefaultGCReserve = 64 << 20
	// MaxOffHeapGCReserve caps the reserve an off-heap cache asks for by
	// its size (see Options.GCReserve).
	MaxOffHeapGCReserve = 256 << 20
	// DefaultMemoryBudget is what a fractional hfile.block.cache.size refers
	// to when neither Options.MemoryBudget nor GOMEMLIMIT says otherwise.
	DefaultMemoryBudget = 1 << 30
)

// Options configure an LRU. Start from DefaultOptions: the zero Options is
// not valid (HBase allows some factors to be 0, so 0 cannot mean "default").
type Options struct {
	// Size is the maximum size in bytes. If 0, the size is
	// Fraction × MemoryBudget. hfile.block.cache.size sets one or the other.
	Size int64
	// Fraction is hfile.block.cache.size as HBase means it: a fraction of the
	// memory (HBase: of the heap). 0 disables the cache.
	Fraction float64
	// MemoryBudget is the memory Fraction refers to (regionkv.memory.budget).
	// If 0: GOMEMLIMIT when set, else DefaultMemoryBudget.
	MemoryBudget int64

	// Policy is hfile.block.cache.policy.
	Policy Policy

	// hbase.lru.blockcache.acceptable.factor, .min.factor,
	// .single.percentage, .multi.percentage, .memory.percentage and
	// .hard.capacity.limit.factor.
	AcceptableFactor float64
	MinFactor        float64
	SingleFactor     float64
	MultiFactor      float64
	MemoryFactor     float64
	HardLimitFactor  float64
	// ForceInMemory is hbase.lru.rs.inmemoryforcemode.
	ForceInMemory bool
	// MaxBlockSize is hbase.lru.max.block.size: larger values are not cached.
	MaxBlockSize int64

	// hbase.lru.cache.heavy.eviction.count.limit, .mb.size.limit and
	// .overhead.coefficient (AdaptiveLRU only). New clamps them as HBase
	// does: count ≥ 0, MB ≥ 1, coefficient in [0.001, 1].
	HeavyEvictionCountLimit          int
	HeavyEvictionMBSizeLimit         int64
	HeavyEvictionOverheadCoefficient float64
	// EvictionThread makes an insert that takes the cache past its
	// acceptable size wake the eviction goroutine, as HBase's LruBlockCache
	// wakes its eviction thread (hbase.lru.blockcache.eviction.thread, our
	// extension). By default (false) the insert runs the eviction itself,
	// as HBase's LruBlockCache does when built without the thread, freeing
	// at most the overshoot plus 1 MiB per run (see inlineEvictionMax): waking a
	// goroutine cost more than a run of a small cache, and a run of a busy
	// cache that the goroutine did not get to in time let inserts fail at
	// the hard limit (13,648 of 290,000 in the peer harness's random reads
	// at a 10% cache). AdaptiveLRU always evicts in the goroutine: its
	// controller measures that goroutine's runs, as HBase's does its
	// thread's.
	EvictionThread bool
	// Period is how long the eviction goroutine sleeps when not woken, and
	// the adaptive controller's period (hbase.lru.cache.heavy.eviction.period.ms,
	// our extension; HBase hard-codes 10 s for both).
	Period time.Duration

	// TinyLFUSampleFactor is hbase.blockcache.tinylfu.sample.factor (our
	// extension, TinyLFU only): the sketch halves its counters after this
	// many accesses per block the shard holds.
	TinyLFUSampleFactor int
	// TinyLFUWidthFactor is hbase.blockcache.tinylfu.width.factor (our
	// extension, TinyLFU only): counters per sketch row per 4 KiB block the
	// shard can hold; more means fewer collisions, at half a byte each (four
	// rows: 2 MiB for a 1 GiB cache at the default 4).
	TinyLFUWidthFactor int

	// Shards is the number of shards (hbase.lru.blockcache.shards, our
	// extension). 0 means the power of two at or above 4 × GOMAXPROCS.
	Shards int

	// OffHeapMinSize is regionkv.blockcache.offheap.min.size (our
	// extension): a cache of at least this many bytes asks for the data
	// blocks it shares to live outside the Go heap (see OffHeap); negative
	// means never. The cache is HBase's on-heap LruBlockCache either way;
	// only where the block bytes live changes.
	OffHeapMinSize int64

	// GCReserve is regionkv.blockcache.gc.reserve (our extension): while
	// the cache is open, the process keeps this many bytes of the Go heap
	// in reserve (internal/gcreserve: one pointer-free allocation that
	// costs address space, not memory), so that the collector's heap goal
	// is about twice that much higher and it collects that much less
	// often. 0 or negative: none. Caches open at once share one reserve,
	// the largest.
	//
	// Why: the blocks are off the heap or a small cache, so the heap the
	// collector sees is a few MiB, and reads that return a Result per row
	// made it collect every few milliseconds. With 64 MiB, the peer
	// harness's scans ran 14% faster (2.17M → 2.48M rows/s, medians of 3
	// alternations, regionkv alone); its price is up to as
	// much more resident memory in garbage between collections, and the
	// page faults of touching that memory the first time the heap grows
	// into its new goal (8,000-12,000 in the harness, once).
	//
	// An off-heap cache (see OffHeap) asks for at least its own size, up to
	// MaxOffHeapGCReserve. Its blocks would have been live heap: on the
	// heap, a cache of n bytes let n bytes of garbage build up between
	// collections, and taking the blocks off the heap took that room from
	// the collector too. In the peer harness's Increment sweep (a 218 MiB
	// cache) a collection that falls in a phase costs it 10-20%, since
	// the memstore it marks is tens of MiB of small objects; with 64 MiB
	// the sweep of 600k Increments held one collection in most runs, with
	// the cache's size none in the runs measured. The price is the
	// garbage it lets build up: the harness's peak resident memory went
	// from 488 to 665 MB.
	//
	// DefaultOptions sets DefaultGCReserve, or 0 where the program has set
	// GOGC or a memory limit: it has chosen how much garbage it allows,
	// and a reserve would count against the limit.
	GCReserve int64

	// Now is the clock of the adaptive controller; time.Now if nil.
	Now func() time.Time
	// Logger receives the adaptive controller's line per period;
	// slog.Default() if nil.
	Logger *slog.Logger
}

// DefaultOptions returns HBase's defaults.
func DefaultOptions() Options {
	return Options{
		Fraction:                         DefaultFraction,
		Policy:                           PolicyLRU,
		AcceptableFactor:                 DefaultAcceptableFactor,
		MinFactor:                        DefaultMinFactor,
		SingleFactor:                     DefaultSingleFactor,
		MultiFactor:                      DefaultMultiFactor,
		MemoryFactor:                     DefaultMemoryFactor,
		HardLimitFactor:                  DefaultHardLimitFactor,
		MaxBlockSize:                     DefaultMaxBlockSize,
		HeavyEvictionCountLimit:          DefaultHeavyEvictionCountLimit,
		HeavyEvictionMBSizeLimit:         DefaultHeavyEvictionMBSizeLimit,
		HeavyEvictionOverheadCoefficient: DefaultHeavyEvictionOverheadCoefficient,
		Period:                           DefaultPeriod,
		TinyLFUSampleFactor:              DefaultTinyLFUSampleFactor,
		TinyLFUWidthFactor:               DefaultTinyLFUWidthFactor,
		OffHeapMinSize:                   DefaultOffHeapMinSize,
		GCReserve:                        defaultGCReserve(),
	}
}

// gcReserve is the reserve a cache with these options holds while open:
// GCReserve, or for an off-heap cache its size if that is more, up to
// MaxOffHeapGCReserve. None if GCReserve is 0 or negative.
func (o *Options) gcReserve() int64 {
	if o.GCReserve <= 0 {
		return 0
	}
	if o.OffHeap() {
		return max(o.GCReserve, min(o.CacheSize(), MaxOffHeapGCReserve))
	}
	return o.GCReserve
}

// defaultGCReserve is Options.GCReserve's default: none where the program
// tuned its collector.
func defaultGCReserve() int64 {
	if gcreserve.Tuned() {
		return 0
	}
	return DefaultGCReserve
}

// OffHeap reports whether a cache with these options keeps its blocks
// outside the Go heap: if its size is at least OffHeapMinSize. A large
// cache off the heap keeps the collector's heap goal at the size of the
// rest of the heap: on it, the goal was twice the cache, and each
// short-lived allocation between two collections touched a fresh page (a
// page fault, ~15 µs on a VM). A small cache is better on the heap: it
// gives the collector room, where the few MiB left without it had scans
// that allocate a Result per row collect three times as often. GOMEMLIMIT
// does not count an off-heap cache.
func (o *Options) OffHeap() bool {
	return o.OffHeapMinSize >= 0 && o.CacheSize() >= o.OffHeapMinSize
}

// CacheSize returns the maximum size in bytes these options give: Size if
// set, else Fraction × MemoryBudget. 0 means the cache is disabled.
func (o *Options) CacheSize() int64 {
	if o.Size > 0 {
		return o.Size
	}
	return int64(math.Floor(o.Fraction * float64(o.memoryBudget())))
}

// Budget returns the memory fractions of it refer to: MemoryBudget if set,
// else GOMEMLIMIT when set, else DefaultMemoryBudget. The server sizes its
// global memstore limit from it too, as HBase sizes both from the heap.
func (o *Options) Budget() int64 { return o.memoryBudget() }

func (o *Options) memoryBudget() int64 {
	if o.MemoryBudget > 0 {
		return o.MemoryBudget
	}
	if l := debug.SetMemoryLimit(-1); l > 0 && l < math.MaxInt64 {
		return l
	}
	return DefaultMemoryBudget
}

func (o *Options) shards() int {
	if o.Shards > 0 {
		return o.Shards
	}
	n := 1
	for n < 4*runtime.GOMAXPROCS(0) {
		n <<= 1
	}
	return n
}

// SetConfig applies an HBase configuration property by name, as
// hbase-site.xml or `-D key=value` give it: one of those the registry
// (internal/hbaseconf) assigns to the block cache. Values are checked for
// syntax here and for consistency by New.
func (o *Options) SetConfig(key, value string) error {
	p, err := hbaseconf.For(hbaseconf.BlockCache, key)
	if err != nil {
		return err
	}
	value = strings.TrimSpace(value)
	wrap := func(err error) error { return errors.Wrapf(err, "blockcache: property %s", key) }
	float := func(dst *float64) error {
		v, err := p.Float(value)
		if err != nil {
			return wrap(err)
		}
		*dst = v
		return nil
	}
	integer := func(lo, hi int64) (int64, error) {
		v, err := p.Int(value)
		if err != nil {
			return 0, wrap(err)
		}
		if v < lo || v > hi {
			return 0, errors.Newf("blockcache: property %s must be in [%d, %d], got %d", key, lo, hi, v)
		}
		return v, nil
	}
	switch p.Name {
	case "hfile.block.cache.size":
		size, frac, err := parseCacheSize(value)
		if err != nil {
			return wrap(err)
		}
		o.Size, o.Fraction = size, frac
	case "regionkv.memory.budget":
		v, err := p.Bytes(value)
		if err != nil {
			return wrap(err)
		}
		o.MemoryBudget = v
	case "hfile.block.cache.policy":
		p, err := ParsePolicy(value)
		if err != nil {
			return err
		}
		o.Policy = p
	case "hbase.lru.blockcache.acceptable.factor":
		return float(&o.AcceptableFactor)
	case "hbase.lru.blockcache.min.factor":
		return float(&o.MinFactor)
	case "hbase.lru.blockcache.single.percentage":
		return float(&o.SingleFactor)
	case "hbase.lru.blockcache.multi.percentage":
		return float(&o.MultiFactor)
	case "hbase.lru.blockcache.memory.percentage":
		return float(&o.MemoryFactor)
	case "hbase.lru.blockcache.hard.capacity.limit.factor":
		return float(&o.HardLimitFactor)
	case "hbase.lru.cache.heavy.eviction.overhead.coefficient":
		return float(&o.HeavyEvictionOverheadCoefficient)
	case "hbase.lru.blockcache.eviction.thread":
		v, err := p.Bool(value)
		if err != nil {
			return wrap(err)
		}
		o.EvictionThread = v
	case "hbase.lru.rs.inmemoryforcemode":
		v, err := p.Bool(value)
		if err != nil {
			return wrap(err)
		}
		o.ForceInMemory = v
	case "hbase.lru.max.block.size":
		v, err := p.Bytes(value)
		if err != nil {
			return wrap(err)
		}
		o.MaxBlockSize = v
	case "hbase.lru.cache.heavy.eviction.count.limit":
		v, err := integer(math.MinInt32, math.MaxInt32)
		if err != nil {
			return err
		}
		o.HeavyEvictionCountLimit = int(v)
	case "hbase.lru.cache.heavy.eviction.mb.size.limit":
		v, err := integer(math.MinInt64, math.MaxInt64)
		if err != nil {
			return err
		}
		o.HeavyEvictionMBSizeLimit = v
	case "hbase.lru.cache.heavy.eviction.period.ms":
		v, err := integer(1, math.MaxInt64/int64(time.Millisecond))
		if err != nil {
			return err
		}
		o.Period = time.Duration(v) * time.Millisecond
	case "hbase.blockcache.tinylfu.sample.factor", "hbase.blockcache.tinylfu.width.factor":
		v, err := integer(1, math.MaxInt32)
		if err != nil {
			return err
		}
		if p.Name == "hbase.blockcache.tinylfu.sample.factor" {
			o.TinyLFUSampleFactor = int(v)
		} else {
			o.TinyLFUWidthFactor = int(v)
		}
	case "regionkv.blockcache.offheap.min.size":
		if strings.HasPrefix(value, "-") { // never
			if _, err := strconv.ParseInt(value, 10, 64); err != nil {
				return wrap(errors.Newf("bad size %q", value))
			}
			o.OffHeapMinSize = -1
			return nil
		}
		v, err := p.Bytes(value)
		if err != nil {
			return wrap(err)
		}
		o.OffHeapMinSize = v
	case "regionkv.blockcache.gc.reserve":
		v, err := p.Bytes(value)
		if err != nil {
			return wrap(err)
		}
		o.GCReserve = v
	case "hbase.lru.blockcache.shards":
		v, err := integer(0, math.MaxInt32)
		if err != nil {
			return err
		}
		o.Shards = int(v)
	default:
		return errors.AssertionFailedf("blockcache: registered property %q not applied", p.Name)
	}
	return nil
}

// IsConfigKey reports whether SetConfig knows key, so that a caller holding
// several components' properties can route each to its owner.
func IsConfigKey(key string) bool {
	p, ok := hbaseconf.Lookup(key)
	return ok && p.Component == hbaseconf.BlockCache
}

// ConfigKeys lists the properties SetConfig accepts (the registry's
// block cache properties).
var ConfigKeys = func() []string {
	var keys []string
	for _, p := range hbaseconf.Of(hbaseconf.BlockCache) {
		keys = append(keys, p.Name)
	}
	return keys
}()

// parseCacheSize parses hfile.block.cache.size: a fraction of the memory
// budget as HBase has it ("0.4"), or, our extension, an absolute size with a
// unit ("64m", "1g") or a plain byte count above 1.
func parseCacheSize(s string) (size int64, fraction float64, err error) {
	if s != "" && strings.ContainsAny(s[len(s)-1:], "kKmMgGtTbB") {
		size, err = hbaseconf.ParseBytes(s)
		return size, 0, err
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, 0, err
	}
	switch {
	case f < 0 || math.IsNaN(f):
		return 0, 0, errors.Newf("%q is negative", s)
	case f <= 1:
		return 0, f, nil
	case f != math.Trunc(f):
		return 0, 0, errors.Newf("%q is neither a fraction of memory (0..1) nor a byte count", s)
	}
	return int64(f), 0, nil
}

// validate checks the constraints HBase's LruBlockCache constructor checks.
func (o *Options) validate() error {
	if o.CacheSize() <= 0 {
		return errors.New("blockcache: cache size is 0 (hfile.block.cache.size=0 disables the block cache)")
	}
	if o.SingleFactor < 0 || o.MultiFactor < 0 || o.MemoryFactor < 0 ||
		math.Abs(o.SingleFactor+o.MultiFactor+o.MemoryFactor-1) > 1e-6 {
		return errors.Newf("blockcache: single, multi and memory percentages (%g, %g, %g) must be non-negative and sum to 1",
			o.SingleFactor, o.MultiFactor, o.MemoryFactor)
	}
	if !(o.MinFactor > 0 && o.MinFactor < o.AcceptableFactor && o.AcceptableFactor < 1) {
		return errors.Newf("blockcache: need 0 < min factor (%g) < acceptable factor (%g) < 1",
			o.MinFactor, o.AcceptableFactor)
	}
	if o.HardLimitFactor < 1 {
		return errors.Newf("blockcache: hard capacity limit factor %g must be at least 1", o.HardLimitFactor)
	}
	if o.MaxBlockSize <= 0 {
		return errors.Newf("blockcache: max block size %d must be positive", o.MaxBlockSize)
	}
	if o.Period <= 0 {
		return errors.Newf("blockcache: period %s must be positive", o.Period)
	}
	if o.Policy == PolicyTinyLFU && (o.TinyLFUSampleFactor < 1 || o.TinyLFUWidthFactor < 1) {
		return errors.Newf("blockcache: TinyLFU sample factor (%d) and width factor (%d) must be at least 1",
			o.TinyLFUSampleFactor, o.TinyLFUWidthFactor)
	}
	if o.Policy > PolicyTinyLFU {
		return errors.Newf("blockcache: unknown policy %s", o.Policy)
	}
	return nil
}
