package blockcache

import (
	"log/slog"
	"math/bits"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/regionkv/regionkv/internal/gcreserve"
)

// Key identifies a cached block: HBase's BlockCacheKey (file, offset), with
// the file named by an id the caller chooses, unique among the files sharing
// the cache.
type Key struct {
	File   uint64
	Offset int64
}

// Value is what the cache holds: a decoded block.
type Value interface {
	// MemSize returns the bytes the value keeps alive (HBase's heapSize).
	// It must not change while the value is cached.
	MemSize() int64
}

// Referenced is a Value that counts its holders, so that its memory can be
// reused once nobody holds it (hfile's shared blocks). The cache holds one
// reference while the value is cached, and takes one for the caller on every
// Get that returns it, under the shard lock, so that a value being evicted
// cannot be handed out; the caller drops its own with Unref when done.
type Referenced interface {
	Value
	// Ref takes a reference.
	Ref()
	// Unref drops one; the last frees the value's memory for reuse.
	Unref()
}

// Kind says what a block is, as far as the cache cares.
type Kind uint8

const (
	// KindOther is any block that is neither data, index nor bloom
	// (meta, file info): always admitted.
	KindOther Kind = iota
	// KindData is a DATA or ENCODED_DATA block: counted in DataBlockCount and
	// subject to adaptive admission.
	KindData
	// KindIndex is a root, intermediate or leaf index block: always admitted.
	KindIndex
	// KindBloom is a bloom chunk or bloom meta block: always admitted.
	KindBloom
)

// Cache is HBase's BlockCache as the read path sees it.
type Cache[V Value] interface {
	// Get returns the cached value for k and counts a hit or a miss.
	Get(k Key) (V, bool)
	// Add offers v to the cache, which may decline it; it reports whether v
	// was cached.
	Add(k Key, v V, kind Kind, inMemory bool) bool
	// Stats returns the cache's counters and sizes.
	Stats() Stats
	// Close stops background work and drops every block.
	Close() error
}

var _ Cache[Value] = (*LRU[Value])(nil)

// priority is HBase's BlockPriority.
type priority uint8

const (
	prioSingle priority = iota
	prioMulti
	prioMemory
	numPriorities
)

var priorityNames = [numPriorities]string{"single", "multi", "memory"}

func (p priority) String() string { return priorityNames[p] }

// entry is one cached block: HBase's LruCachedBlock.
type entry[V Value] struct {
	key        Key
	value      V
	ref        Referenced // value as a Referenced, nil if it is not one
	charge     int64      // value.MemSize() + entry overhead + extra
	extra      int64      // what Recharge added
	prev, next *entry[V]
	prio       priority
	kind       Kind
	touched    bool // hit since it was last put at the front of its list
}

// lruList is a circular doubly linked list of entries through a sentinel:
// root.next is the most recently used entry, root.prev the least.
type lruList[V Value] struct {
	root entry[V]
}

func (l *lruList[V]) init() { l.root.next, l.root.prev = &l.root, &l.root }

func (l *lruList[V]) pushFront(e *entry[V]) {
	e.prev, e.next = &l.root, l.root.next
	e.prev.next, e.next.prev = e, e
}

func (l *lruList[V]) remove(e *entry[V]) {
	e.prev.next, e.next.prev = e.next, e.prev
	e.prev, e.next = nil, nil
}

func (l *lruList[V]) moveToFront(e *entry[V]) {
	if l.root.next == e {
		return
	}
	e.prev.next, e.next.prev = e.next, e.prev
	e.prev, e.next = &l.root, l.root.next
	e.prev.next, e.next.prev = e, e
}

// back returns the least recently used entry, or nil.
func (l *lruList[V]) back() *entry[V] {
	if l.root.prev == &l.root {
		return nil
	}
	return l.root.prev
}

// shard is one lock's worth of the cache.
type shard[V Value] struct {
	mu sync.Mutex
	// Everything below is protected by mu.
	m      map[Key]*entry[V]
	lists  [numPriorities]lruList[V]
	bytes  [numPriorities]int64
	count  int64
	data   int64 // data blocks
	hits   int64
	misses int64
	// skipped counts the reads SkipsLookup told not to look a block up,
	// as misses, by sample (skipCountEvery); it is atomic, since
	// SkipsLookup takes no lock.
	skipped atomic.Int64
	// contended counts Gets that found the lock held (for benchmarks).
	contended int64
	// sk counts the shard's accesses (TinyLFU only; empty otherwise), and
	// rejected the data blocks its admission turned away.
	sk       sketch
	rejected int64
	// free holds removed entries for reuse, linked through next, and slab
	// the entries of the last block allocated that are not handed out yet.
	// Entries come entrySlabLen at a time and are never freed one by one,
	// so that steady eviction does not allocate and a cache of tens of
	// thousands of blocks is a few hundred objects for the collector to
	// mark rather than one per block. A shard keeps as many entries as it
	// ever held at once; each is charged while it holds a block
	// (entryOverhead).
	free *entry[V]
	slab []entry[V]
	_    [64]byte // keep the next shard's mutex off this shard's counters
}

// entrySlabLen is how many entries a shard allocates at once: 100 of 80
// bytes (a pointer V) are 8,000 bytes, in Go's 8 KiB size class.
const entrySlabLen = 100

func (s *shard[V]) removeLocked(e *entry[V]) {
	delete(s.m, e.key)
	s.lists[e.prio].remove(e)
	s.bytes[e.prio] -= e.charge
	s.count--
	if e.kind == KindData {
		s.data--
	}
	if e.ref != nil {
		e.ref.Unref()
	}
	*e = entry[V]{next: s.free}
	s.free = e
}

// newEntryLocked returns a zeroed entry, reused if possible.
func (s *shard[V]) newEntryLocked() *entry[V] {
	if e := s.free; e != nil {
		s.free = e.next
		e.next = nil
		return e
	}
	if len(s.slab) == 0 {
		s.slab = make([]entry[V], entrySlabLen)
	}
	e := &s.slab[0]
	s.slab = s.slab[1:]
	return e
}

// mapSlotOverhead approximates the bytes a Go map spends per entry on a
// Key → *entry slot: 16-byte key, 8-byte pointer and a control byte, in
// groups kept between 7/16 and 7/8 full.
const mapSlotOverhead = 40

// sketchBlockEstimate is hfile's default data block size (its
// DefaultBlockSize), by which TinyLFU guesses how many blocks a shard holds.
const sketchBlockEstimate = 4 << 10

// LRU is HBase's LruBlockCache (or, with PolicyAdaptiveLRU, its
// LruAdaptiveBlockCache), sharded. See the package comment for its semantics
// and New for its life cycle. It is safe for concurrent use.
type LRU[V Value] struct {
	// Counters, updated atomically.
	size          atomic.Int64 // bytes charged, all shards
	evictions     atomic.Int64 // blocks evicted by the eviction process
	evictedBytes  atomic.Int64
	evictionRuns  atomic.Int64
	failedInserts atomic.Int64
	dataPercent   atomic.Int32 // cacheDataBlockPercent, 100 unless adaptive
	closed        atomic.Bool

	shards []shard[V]

	// Immutable after New.
	maxSize, acceptableSize, minSize, hardLimit int64
	// offHeap is Options.OffHeap.
	offHeap       bool
	bucketTarget  [numPriorities]int64
	maxBlockSize  int64
	entryOverhead int64
	forceInMemory bool // or memory factor ≈ 1
	adaptive      bool
	tinyLFU       bool
	// inline is set when inserts evict themselves (Options.EvictionThread
	// unset, and not AdaptiveLRU).
	inline bool
	// admitFloor is the size from which TinyLFU filters: below it the cache
	// has room, and a block displaces nothing.
	admitFloor int64
	period     time.Duration
	now        func() time.Time

	// evictMu serializes eviction runs (HBase's evictionLock, taken with
	// tryLock); it protects evict.
	evictMu sync.Mutex
	evict   struct {
		per   [][numPriorities]int64 // per-shard bucket bytes of this run
		rotor int
	}
	// adm is the adaptive controller (nil for PolicyLRU); only the eviction
	// goroutine (or a test standing in for it) touches it.
	adm *admission

	wake      chan struct{}
	closing   chan struct{}
	done      chan struct{}
	closeOnce sync.Once

	// reserve is the cache's GC reserve (Options.gcReserve), from New to
	// Close.
	reserve *gcreserve.Reservation
}

// New returns a cache configured by opts and starts its eviction goroutine;
// Close stops it.
func New[V Value](opts Options) (*LRU[V], error) {
	c, err := newLRU[V](opts)
	if err != nil {
		return nil, err
	}
	c.done = make(chan struct{})
	c.reserve = gcreserve.Acquire(opts.gcReserve())
	go c.run()
	return c, nil
}

// newLRU builds the cache without its goroutine; tests drive evictionStep.
func newLRU[V Value](opts Options) (*LRU[V], error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	max := opts.CacheSize()
	c := &LRU[V]{
		shards:         make([]shard[V], opts.shards()),
		maxSize:        max,
		offHeap:        opts.OffHeap(),
		acceptableSize: int64(float64(max) * opts.AcceptableFactor),
		minSize:        int64(float64(max) * opts.MinFactor),
		maxBlockSize:   opts.MaxBlockSize,
		forceInMemory:  opts.ForceInMemory || opts.MemoryFactor > 0.999,
		adaptive:       opts.Policy == PolicyAdaptiveLRU,
		tinyLFU:        opts.Policy == PolicyTinyLFU,
		inline:         !opts.EvictionThread && opts.Policy != PolicyAdaptiveLRU,
		period:         opts.Period,
		now:            opts.Now,
		wake:           make(chan struct{}, 1),
		closing:        make(chan struct{}),
	}
	if c.now == nil {
		c.now = time.Now
	}
	c.hardLimit = int64(opts.HardLimitFactor * float64(c.acceptableSize))
	factors := [numPriorities]float64{opts.SingleFactor, opts.MultiFactor, opts.MemoryFactor}
	for p, f := range factors {
		c.bucketTarget[p] = int64(float64(max) * f * opts.MinFactor)
	}
	c.entryOverhead = int64((unsafe.Sizeof(entry[V]{})+15)&^15) + mapSlotOverhead
	// Filter from 0.9 × the eviction's target: an eviction run frees down to
	// minSize, and admitting freely just below it would refill the cache
	// with whatever came next, which is the churn TinyLFU is there to stop.
	c.admitFloor = c.minSize / 10 * 9
	// The sketch is sized by the blocks a shard can hold at hfile's default
	// data block size; larger blocks only mean fewer collisions.
	perShard := c.maxSize / int64(len(c.shards)) / sketchBlockEstimate
	width := (perShard + 1) * int64(opts.TinyLFUWidthFactor)
	for i := range c.shards {
		s := &c.shards[i]
		s.m = make(map[Key]*entry[V])
		if c.tinyLFU {
			s.sk = newSketch(width, int64(opts.TinyLFUSampleFactor))
		}
		for p := range s.lists {
			s.lists[p].init()
		}
	}
	c.evict.per = make([][numPriorities]int64, len(c.shards))
	c.dataPercent.Store(100)
	if c.adaptive {
		logger := opts.Logger
		if logger == nil {
			logger = slog.Default()
		}
		c.adm = newAdmission(opts, &c.dataPercent, logger, c.now())
	}
	return c, nil
}

// shardFor picks k's shard from a hash of its offset and file. (Not
// offset % N: see the package comment.)
func (c *LRU[V]) shardFor(k Key) *shard[V] { return &c.shards[c.shardIndex(k)] }

func (c *LRU[V]) shardIndex(k Key) int {
	h := uint64(k.Offset)*0x9e3779b97f4a7c15 ^ k.File*0xc2b2ae3d27d4eb4f
	h ^= h >> 31
	h *= 0xbf58476d1ce4e5b9
	hi, _ := bits.Mul64(h, uint64(len(c.shards)))
	return int(hi)
}

// Get returns the block cached under k, if any, and counts a hit or a miss.
// A hit makes the block the most recently used of its priority (or, but with
// TinyLFU, marks it recent; see the package comment) and promotes a
// single-access block to multi-access. A Referenced block comes with a
// reference for the caller, who drops it with Unref when done. Get takes
// only k's shard lock and does not allocate.
func (c *LRU[V]) Get(k Key) (V, bool) { return c.get(k, true) }

// GetIfCached is Get for a caller that may not read the block when it is
// not cached (a point read whose bloom filter, asked only then, may rule the
// block out): a hit counts as Get's does, a miss is not counted at all. A
// caller that then reads the block calls Get, which counts the miss.
func (c *LRU[V]) GetIfCached(k Key) (V, bool) { return c.get(k, false) }

// GetSampled is Get for a caller that asks the cache for one read in weight
// of a value it keeps in between (hfile's pinned index and bloom blocks): a
// hit counts weight hits, so the hit count stays an unbiased estimate of the
// reads; a miss counts one.
func (c *LRU[V]) GetSampled(k Key, weight int) (V, bool) {
	return c.getWeighted(k, true, int64(max(weight, 1)))
}

func (c *LRU[V]) get(k Key, countMiss bool) (V, bool) { return c.getWeighted(k, countMiss, 1) }

func (c *LRU[V]) getWeighted(k Key, countMiss bool, weight int64) (V, bool) {
	s := c.shardFor(k)
	if !s.mu.TryLock() {
		s.mu.Lock()
		s.contended++
	}
	e := s.m[k]
	if e == nil {
		if countMiss {
			s.misses++
			if c.tinyLFU {
				s.sk.add(keyHash(k), s.count)
			}
		}
		s.mu.Unlock()
		var zero V
		return zero, false
	}
	s.hits += weight
	if c.tinyLFU {
		s.sk.add(keyHash(k), s.count)
	}
	if e.prio == prioSingle {
		s.lists[prioSingle].remove(e)
		s.bytes[prioSingle] -= e.charge
		e.prio = prioMulti
		s.lists[prioMulti].pushFront(e)
		s.bytes[prioMulti] += e.charge
	} else if c.tinyLFU {
		s.lists[e.prio].moveToFront(e)
	} else {
		// Marked, not moved: eviction gives a marked block a second
		// chance at the front of its list (CLOCK), an approximation of LRU
		// that spares every hit of a hot block relinking three list nodes
		// in cold memory; HBase's cache, too, only stamps an access on a
		// hit. (TinyLFU compares a newcomer with the exact LRU victim, and
		// keeps fewer hot blocks when the order is approximate.)
		e.touched = true
	}
	v := e.value
	if e.ref != nil {
		e.ref.Ref() // the caller's
	}
	s.mu.Unlock()
	return v, true
}

// Recharge adds delta bytes to the charge of v, cached under k, for memory
// the value came to keep alive after it was cached (a data block's restart
// index, built on its first hit). It does nothing if k is not cached or is
// cached with another value, and it counts no hit. A cache pushed past its
// acceptable size by it evicts as after an Add.
func (c *LRU[V]) Recharge(k Key, v V, delta int64) {
	s := c.shardFor(k)
	s.mu.Lock()
	e := s.m[k]
	if e == nil || any(e.value) != any(v) {
		s.mu.Unlock()
		return
	}
	e.charge += delta
	e.extra += delta
	s.bytes[e.prio] += delta
	newSize := c.size.Add(delta)
	s.mu.Unlock()
	if newSize > c.acceptableSize {
		c.wakeEviction()
	}
}

// Contains reports whether k is cached, without counting or touching it.
func (c *LRU[V]) Contains(k Key) bool {
	s := c.shardFor(k)
	s.mu.Lock()
	_, ok := s.m[k]
	s.mu.Unlock()
	return ok
}

// Add offers v to the cache under k, as HBase's cacheBlock, and reports
// whether it was cached. In order, it declines:
//   - with AdaptiveLRU, a data block whose offset % 100 is at least
//     cacheDataBlockPercent (while that is below 100);
//   - a value larger than the max block size (a failed insert);
//   - a key already cached (the cached value stays);
//   - with TinyLFU, a data block no more frequent than its shard's next
//     victim, once the cache is nearly full (see admitLocked);
//   - anything while the cache is at its hard limit (a failed insert, and the
//     eviction goroutine is woken).
//
// The block gets MEMORY priority if inMemory, else SINGLE.
func (c *LRU[V]) Add(k Key, v V, kind Kind, inMemory bool) bool {
	if c.adaptive && !c.Admits(k, kind) {
		return false
	}
	ms := v.MemSize()
	if ms > c.maxBlockSize {
		c.failedInserts.Add(1)
		return false
	}
	s := c.shardFor(k)
	s.mu.Lock()
	if _, ok := s.m[k]; ok || c.closed.Load() {
		s.mu.Unlock()
		return false
	}
	if c.tinyLFU && kind == KindData && c.size.Load() >= c.admitFloor && !s.admitLocked(keyHash(k)) {
		s.mu.Unlock()
		return false
	}
	if c.size.Load() >= c.hardLimit {
		s.mu.Unlock()
		c.failedInserts.Add(1)
		c.wakeEviction()
		return false
	}
	e := s.newEntryLocked()
	e.key, e.value, e.charge, e.prio, e.kind = k, v, ms+c.entryOverhead, prioSingle, kind
	if e.ref, _ = any(v).(Referenced); e.ref != nil {
		e.ref.Ref() // the cache's
	}
	if inMemory {
		e.prio = prioMemory
	}
	s.m[k] = e
	s.lists[e.prio].pushFront(e)
	s.bytes[e.prio] += e.charge
	s.count++
	if kind == KindData {
		s.data++
	}
	newSize := c.size.Add(e.charge)
	s.mu.Unlock()
	if newSize > c.acceptableSize {
		c.wakeEviction()
	}
	return true
}

// Admits reports whether the admission policy lets a block of this kind
// under k into the cache right now: false only for a data block that Add
// would decline because of LruAdaptiveBlockCache's cacheDataBlockPercent or
// TinyLFU's frequency test. A reader asks before it reads a block, so that a
// block the cache will refuse skips the cache's work, and its memory can be
// reused once the reader is done with it (it never becomes garbage). Add may
// still decline a block Admits admits (too large, already cached, cache at
// its hard limit, or a TinyLFU victim that changed in between). With LRU and
// AdaptiveLRU it is one atomic load; with TinyLFU it takes k's shard lock
// once the cache is nearly full. It does not allocate.
func (c *LRU[V]) Admits(k Key, kind Kind) bool {
	if kind != KindData {
		return true
	}
	switch {
	case c.adaptive:
		p := c.dataPercent.Load()
		return p == 100 || k.Offset%100 < int64(p)
	case c.tinyLFU:
		if c.size.Load() < c.admitFloor {
			return true
		}
		s := c.shardFor(k)
		s.mu.Lock()
		ok := s.admitLocked(keyHash(k))
		s.mu.Unlock()
		return ok
	}
	return true
}

// SkipsLookup reports whether a read of the data block under k should not
// look it up at all, and, if count is set, counts such a read as a miss.
// Only AdaptiveLRU answers true, for a block whose offset its current
// cacheDataBlockPercent excludes: Add would not take it now, so the cache
// holds it only if it was admitted before the percent fell, and such a
// block is left to age out. Under heavy eviction that is most reads, and
// each lookup would take a shard's lock and miss its map (with the bloom's
// peek first, two lookups a read): HBASE-23887's point is that blocks the
// cache cannot keep should cost it nothing. It is one atomic load, takes
// no lock and does not allocate. A counted read is counted as a sample:
// one in skipCountEvery, drawn from the runtime's per-thread generator,
// adds skipCountEvery misses, so the miss count stays an unbiased estimate
// (as pinned blocks' sampled hits keep the hit count one). Counting every
// read was an atomic add on a line both cores write: 48 ns a read on this
// 2-core VM, with 8 clients, 1.2% of a Get.
func (c *LRU[V]) SkipsLookup(k Key, count bool) bool {
	if !c.adaptive {
		return false
	}
	if p := c.dataPercent.Load(); p == 100 || k.Offset%100 < int64(p) {
		return false
	}
	if count && rand.Uint32()%skipCountEvery == 0 {
		c.shardFor(k).skipped.Add(skipCountEvery)
	}
	return true
}

// skipCountEvery is how many reads SkipsLookup counts with one sample.
const skipCountEvery = 16

// admitLocked is TinyLFU's test: a new block (hash h) is let in only if the
// sketch says it was read more often than the block the shard would evict
// next (the least recently used single-access block, else multi-access;
// in-memory blocks are evicted last). Ties go to the incumbent, so blocks
// read about equally often (a uniform workload) stop replacing each other.
// The sketch counts Gets, so the candidate's count includes the miss that
// brought it here; that miss is not counted in its favour. Otherwise a block
// read for the first time would beat the usual victim, a single-access block
// whose one read has aged out of the sample, and TinyLFU would admit what
// LRU admits: so a block must be read twice within the sample to get in.
// REQUIRES: s.mu held.
func (s *shard[V]) admitLocked(h uint64) bool {
	victim := s.lists[prioSingle].back()
	if victim == nil {
		victim = s.lists[prioMulti].back()
	}
	if victim == nil || s.sk.estimate(h) > s.sk.estimate(keyHash(victim.key))+1 {
		return true
	}
	s.rejected++
	return false
}

// EvictFile drops every block of file, as HBase's evictBlocksByHfileName
// when a store file is closed or compacted away, and returns how many it
// dropped. These do not count as evictions (HBase's blockCacheEvictionCount
// excludes them too). It visits every block, so it is not for hot paths.
func (c *LRU[V]) EvictFile(file uint64) int {
	n := 0
	for i := range c.shards {
		s := &c.shards[i]
		var freed int64
		s.mu.Lock()
		for k, e := range s.m {
			if k.File == file {
				freed += e.charge
				s.removeLocked(e)
				n++
			}
		}
		s.mu.Unlock()
		c.size.Add(-freed)
	}
	return n
}

// Close stops the eviction goroutine and drops every block. The cache
// declines Adds afterwards; Get keeps working (and misses). Close is
// idempotent.
func (c *LRU[V]) Close() error {
	c.closeOnce.Do(func() {
		c.closed.Store(true)
		close(c.closing)
		if c.done != nil {
			<-c.done
		}
		for i := range c.shards {
			s := &c.shards[i]
			s.mu.Lock()
			var freed int64
			for _, e := range s.m {
				freed += e.charge
				s.removeLocked(e)
			}
			s.free, s.slab = nil, nil
			s.mu.Unlock()
			c.size.Add(-freed)
		}
		c.reserve.Release()
	})
	return nil
}

func (c *LRU[V]) wakeEviction() {
	if c.inline {
		// The caller evicts, unless another goroutine is at it already.
		c.runEviction(max(c.size.Load()-c.acceptableSize, 0) + inlineEvictionMax)
		return
	}
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// run is the eviction goroutine: HBase's EvictionThread. It wakes when an
// insert passes the acceptable size, or after a period of quiet.
func (c *LRU[V]) run() {
	defer close(c.done)
	t := time.NewTimer(c.period)
	defer t.Stop()
	for {
		select {
		case <-c.closing:
			return
		case <-c.wake:
		case <-t.C:
		}
		c.evictionStep()
		t.Reset(c.period)
	}
}

// evictionStep is one wake-up of the eviction goroutine.
func (c *LRU[V]) evictionStep() {
	targeted := c.runEviction(0)
	if c.adm != nil {
		c.adm.observe(c.now(), targeted)
	}
}

// inlineEvictionMax bounds the bytes an insert that evicts itself frees in
// one run: all the way to the minimum size in caches up to 25 MiB (the
// peer harness's is 11 MiB), else in steps that cost an insert at most
// about 25 µs (256 blocks of 4 KiB at about 100 ns each; a goroutine run of
// a 1 GiB cache frees 40 MiB). A cache evicted this way stays nearer its
// acceptable size than its minimum. A run also frees whatever inserts
// added past the acceptable size while another run held the lock, so that
// concurrent inserters do not outgrow it.
const inlineEvictionMax = 1 << 20

// runEviction is HBase's evict(): if the cache is above its minimum size it
// frees down to it with the bucket algorithm, or only limit bytes of that if
// limit > 0, and returns the bytes it set out to free (0 if none, or if
// another run holds the lock).
func (c *LRU[V]) runEviction(limit int64) int64 {
	if !c.evictMu.TryLock() {
		return 0
	}
	defer c.evictMu.Unlock()
	toFree := c.size.Load() - c.minSize
	if limit > 0 {
		toFree = min(toFree, limit)
	}
	if toFree <= 0 {
		return 0
	}
	c.evictionRuns.Add(1)
	var totals [numPriorities]int64
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		c.evict.per[i] = s.bytes
		s.mu.Unlock()
		for p := range totals {
			totals[p] += c.evict.per[i][p]
		}
	}
	c.evict.rotor++
	free := func(p priority, want int64) int64 {
		// HBase's bucket queue holds only the oldest blocks worth toFree.
		return c.freeBucketLocked(p, min(want, toFree), totals[p])
	}
	var freed int64
	if c.forceInMemory {
		s, m := totals[prioSingle], totals[prioMulti]
		if toFree > s+m {
			// Single and multi cannot cover it: empty them, then memory.
			freed = free(prioSingle, s)
			freed += free(prioMulti, m)
			freed += free(prioMemory, toFree-freed)
		} else {
			// Leave memory alone, and single:multi near 1:2.
			remain := s + m - toFree
			switch {
			case 3*s <= remain:
				freed = free(prioMulti, toFree)
			case 3*m <= 2*remain:
				freed = free(prioSingle, toFree)
			default:
				freed = free(prioSingle, s-remain/3)
				if freed < toFree {
					freed += free(prioMulti, toFree-freed)
				}
			}
		}
		return toFree
	}
	// Buckets in ascending order of overflow (ties: single, multi, memory).
	order := [numPriorities]priority{prioSingle, prioMulti, prioMemory}
	overflow := func(p priority) int64 { return totals[p] - c.bucketTarget[p] }
	for i := 1; i < len(order); i++ {
		for j := i; j > 0 && overflow(order[j]) < overflow(order[j-1]); j-- {
			order[j], order[j-1] = order[j-1], order[j]
		}
	}
	remaining := int64(len(order))
	for _, p := range order {
		if o := overflow(p); o > 0 {
			freed += free(p, min(o, (toFree-freed)/remaining))
		}
		remaining--
	}
	return toFree
}

// freeBucketLocked frees at least want bytes (if there are that many) from
// the least recently used blocks of priority p, each shard its share by its
// part of the bucket's total, and returns the bytes freed. Like HBase's
// BlockBucket.free, it evicts at least one block even when want ≤ 0.
// REQUIRES: evictMu held.
func (c *LRU[V]) freeBucketLocked(p priority, want, total int64) int64 {
	if total <= 0 {
		return 0
	}
	want = max(want, 1)
	n := len(c.shards)
	start := c.evict.rotor % n
	var freed, cum int64
	for j := 0; j < n && freed < want; j++ {
		i := (start + j) % n
		share := c.evict.per[i][p]
		if share == 0 {
			continue
		}
		cum += share
		target := want
		if cum < total {
			target = int64(float64(want) * float64(cum) / float64(total))
		}
		if q := target - freed; q > 0 {
			freed += c.freeShard(&c.shards[i], p, q)
		}
	}
	// Shards changed since the census: take the rest from anywhere.
	for j := 0; j < n && freed < want; j++ {
		freed += c.freeShard(&c.shards[(start+j)%n], p, want-freed)
	}
	return freed
}

// freeShard evicts s's least recently used blocks of priority p until it
// has freed want bytes or has none left, and returns the bytes freed.
func (c *LRU[V]) freeShard(s *shard[V], p priority, want int64) int64 {
	var freed, n int64
	s.mu.Lock()
	for freed < want {
		e := s.lists[p].back()
		if e == nil {
			break
		}
		if e.touched {
			// Hit since it was last put at the front: it is recent.
			e.touched = false
			s.lists[p].moveToFront(e)
			continue
		}
		freed += e.charge
		n++
		s.removeLocked(e)
	}
	s.mu.Unlock()
	if n > 0 {
		c.size.Add(-freed)
		c.evictions.Add(n)
		c.evictedBytes.Add(freed)
	}
	return freed
}

// OffHeap reports whether the cache asks for its blocks to live outside
// the Go heap (Options.OffHeap).
func (c *LRU[V]) OffHeap() bool { return c.offHeap }

// MaxSize returns the cache's maximum size in bytes.
func (c *LRU[V]) MaxSize() int64 { return c.maxSize }

// Full reports whether the cache has filled to its minimum size, the size
// eviction brings it back down to: from there on, what it caches pushes
// older blocks out (hfile.FullCache).
func (c *LRU[V]) Full() bool { return c.size.Load() >= c.minSize }

// Size returns the bytes currently charged.
func (c *LRU[V]) Size() int64 { return c.size.Load() }

// CacheDataBlockPercent returns the adaptive controller's current percent
// (always 100 for PolicyLRU).
func (c *LRU[V]) CacheDataBlockPercent() int { return int(c.dataPercent.Load()) }
