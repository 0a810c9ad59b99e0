package region

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/encoding"
	"github.com/regionkv/regionkv/hfile"
	"github.com/regionkv/regionkv/internal/vfs"
	"github.com/regionkv/regionkv/mvcc"
	"github.com/regionkv/regionkv/wal"
	"golang.org/x/sys/cpu"
)

// Region is HBase's HRegion: one key range of a table, with one Store per
// column family, a write-ahead log and MVCC. It is the embedded API: every
// method is safe for concurrent use. The package documentation is its
// manual.
type Region struct {
	dir  string
	opts Options
	fs   vfs.FS
	cmp  *encoding.Comparer
	log  *slog.Logger

	// cache is what the store files read through: opts.Cache, a cache of
	// the region's own (ownCache, closed with it), or the deprecated
	// opts.BlockCache; nil for none.
	cache    hfile.Cache
	ownCache *Cache

	// clock is now as a func value, made once: a Get hands it to its
	// matcher, which reads the time only if a TTL needs it.
	clock func() int64

	env  storeEnv // what every store of the region shares
	meta bool     // the region is hbase:meta's (fixed at creation)
	// set is the region's families (see storeSet): AddFamily and
	// DeleteFamily replace it while holding updates exclusively.
	set atomic.Pointer[storeSet]
	// adminMu serializes AddFamily, DeleteFamily, ModifyFamily (and their
	// rewrites of .regioninfo) and RollWAL with each other and with Close.
	adminMu sync.Mutex

	mvcc *mvcc.Control
	// readers holds the read points of the Gets and Scanners in progress,
	// for upserts; oldestRead is its oldest, bound once (a method value
	// made per call would allocate).
	readers    readPoints
	oldestRead func(need encoding.SeqNum) (encoding.SeqNum, bool)
	// walBroken is set when a WAL call failed and the writer may be
	// broken; resetWAL revives it.
	wal       *wal.Writer
	walBroken atomic.Bool
	// locks and hot are written by every write, from every processor:
	// each is allocated apart, on cache lines no other field shares. In
	// the region they sat wherever the fields before them left them, and
	// a row lock shard straddled two lines.
	locks *rowLocks
	hot   *writeHot

	// memSize and memHeap are the data and heap sizes of every memstore,
	// snapshots included. Flushes, blocking and the global limit compare
	// the heap size, as HBase 2 does (HRegion.isFlushSize and
	// checkResources: heap + off-heap size): a memstore of small cells
	// holds several times its data size, which a flush size must bound.
	memSize      atomic.Int64
	memHeap      atomic.Int64
	lastBlockLog atomic.Int64 // unix nanos of the last "blocking updates" warning

	flushMu   sync.Mutex // one flush at a time
	flushReq  chan struct{}
	flushedCh chan struct{} // closed and replaced after each flush
	flushedMu sync.Mutex
	flushErr  atomic.Pointer[error]
	lastFlush atomic.Int64 // unix millis of the last flush that wrote something, or of the open
	closed    atomic.Bool
	closeOnce sync.Once
	bgDone    chan struct{}
	stop      chan struct{}
	lock      *os.File // flock on <dir>/.lock while open

	compactReq  chan struct{}
	compactDone chan struct{}
	bgCtx       context.Context // cancelled by Close, stops compactions
	bgCancel    context.CancelFunc
	stats       stats
	encodedKey  []byte
	tableKey    []byte

	// Compactions running now, for Compacting.
	minorRunning, majorRunning atomic.Int32
	// bulkLoadStuck is set when a failed bulk load could not be undone:
	// its record stays for Open, and no other bulk load may overwrite it.
	bulkLoadStuck atomic.Bool
}

// writeHot is what every write changes on its way through the region, on
// one cache line: the updates lock, which it holds shared, and the count of
// its puts or deletes. Were the two on lines of their own, a write would
// take each line over from the other processor in turn, when one transfer
// (about 40 ns on this VM's two processors, 200 ns when the host runs them
// far apart) can bring both.
type writeHot struct {
	// updates is HBase's updatesLock: mutations hold it shared from WAL
	// append to memstore insert, a flush takes it exclusively to snapshot.
	updates       sync.RWMutex
	puts, deletes atomic.Int64
	_             [cacheLine - 24 - 16]byte
}

// cacheLine is the processor's cache line size, as golang.org/x/sys/cpu
// pads for it.
const cacheLine = int(unsafe.Sizeof(cpu.CacheLinePad{}))

type stats struct {
	flushes          atomic.Int64
	compactions      atomic.Int64
	majorCompactions atomic.Int64
	flushedBytes     atomic.Int64
	blockedWrites    atomic.Int64
	gets             atomic.Int64
	walTornTails     atomic.Int64
	walTornBytes     atomic.Int64
	bulkLoadedFiles  atomic.Int64
}

// Stats are the region's counters and sizes.
type Stats struct {
	MemStoreSize     int64 // data bytes in the memstores, snapshots being flushed included
	MemStoreHeapSize int64 // the memory they hold, which flushes compare with FlushSize
	StoreFiles       int
	StoreFileSize    int64
	Flushes          int64
	Compactions      int64 // minor and major
	MajorCompactions int64
	FlushedBytes     int64
	BlockedWrites    int64 // writes that waited for a flush (memstore over the blocking limit)
	Puts, Deletes    int64
	Gets             int64
	ReadPoint        uint64
	WAL              wal.Metrics
	// WALTornTails and WALTornBytes count the torn last WAL records Open
	// dropped (a write cut short by a crash, or damage to the newest record,
	// which cannot be told apart) and their bytes.
	WALTornTails, WALTornBytes int64
	// BlockCache are the counters of the cache the region reads through
	// (zero without one). A Cache shared by several regions counts for all
	// of them.
	BlockCache CacheStats
	// BulkLoadedFiles counts the files bulk loads added (BulkLoadHFiles).
	BulkLoadedFiles int64
	// LastFlush is when the last flush that wrote a store file finished,
	// or when the region was opened if none has since.
	LastFlush time.Time
}

// ErrClosed is returned by operations on a closed region.
var ErrClosed = errors.New("region: closed")

// ErrNoRegion is the error of Open with Options.MustExist for a directory
// that does not exist.
var ErrNoRegion = errors.New("region: no such region on disk")

// ErrRegionTooBusy is returned when a write waited BlockingWait for the
// memstores to drop below the blocking limit (HBase's RegionTooBusyException).
var ErrRegionTooBusy = errors.New("region: too busy")

// ErrNoSuchFamily is returned for a mutation or read naming an unknown family
// (HBase's NoSuchColumnFamilyException).
var ErrNoSuchFamily = errors.New("region: no such column family")

const descriptorFile = ".regioninfo"

// descriptor is what .regioninfo holds, as JSON.
type descriptor struct {
	Table    string         `json:"table"`
	Families []familyRecord `json:"families"`
	Meta     bool           `json:"meta,omitempty"`
}

// familyRecord is a family's options as .regioninfo stores them. Its keys
// and numbers are those of the first format (the Go field names of
// FamilyOptions then, codes as HBase numbers them), so that FamilyOptions
// can change without changing the file: Compression is HBase's ordinal,
// Bloom HBase's BloomType ordinal with NoBloom set for NONE.
//
// Keys added since are omitted at their zero value, so that a file written
// before them reads as the defaults.
type familyRecord struct {
	Name        string
	MaxVersions int
	TTL         time.Duration
	Encoding    encoding.DataBlockEncoding
	Compression uint32
	Bloom       uint8
	NoBloom     bool
	BlockSize   int
	InMemory    bool

	MinVersions  int  `json:",omitempty"`
	NoBlockCache bool `json:",omitempty"`
	// Compactions' codecs, as HBase's ordinals; absent when unset.
	CompactionCompression      *uint32 `json:",omitempty"`
	MajorCompactionCompression *uint32 `json:",omitempty"`
	MinorCompactionCompression *uint32 `json:",omitempty"`
	// CreatedSeq is Store.createdSeq: WAL entries of the family up to it
	// are an earlier family's.
	CreatedSeq uint64 `json:",omitempty"`
}

func recordOf(f FamilyOptions) familyRecord {
	ord := func(o CompressionOverride) *uint32 {
		if !o.Set {
			return nil
		}
		v := o.Compression.Ordinal()
		return &v
	}
	return familyRecord{Name: f.Name, MaxVersions: f.MaxVersions, TTL: f.TTL, Encoding: f.Encoding,
		Compression: f.Compression.Ordinal(), Bloom: uint8(f.BloomFilter.hfileType()),
		NoBloom: f.BloomFilter == BloomFilterNone, BlockSize: f.BlockSize, InMemory: f.InMemory,
		MinVersions: f.MinVersions, NoBlockCache: f.NoBlockCache,
		CompactionCompression:      ord(f.CompactionCompression),
		MajorCompactionCompression: ord(f.MajorCompactionCompression),
		MinorCompactionCompression: ord(f.MinorCompactionCompression)}
}

func (rec familyRecord) options() FamilyOptions {
	override := func(v *uint32) CompressionOverride {
		if v == nil {
			return CompressionOverride{}
		}
		return OverrideCompression(hfile.CompressionOfOrdinal(*v))
	}
	return FamilyOptions{Name: rec.Name, MaxVersions: rec.MaxVersions, TTL: rec.TTL, Encoding: rec.Encoding,
		Compression: hfile.CompressionOfOrdinal(rec.Compression), Bloom: hfile.BloomType(rec.Bloom),
		NoBloom: rec.NoBloom, BlockSize: rec.BlockSize, InMemory: rec.InMemory,
		MinVersions: rec.MinVersions, NoBlockCache: rec.NoBlockCache,
		CompactionCompression:      override(rec.CompactionCompression),
		MajorCompactionCompression: override(rec.MajorCompactionCompression),
		MinorCompactionCompression: override(rec.MinorCompactionCompression)}.withDefaults()
}

// Open opens (or creates) the region in dir: it loads the store files,
// replays the WAL above what they hold, and starts accepting writes.
func Open(dir string, o Options) (*Region, error) {
	opts := o.withDefaults()
	fs := opts.FS
	if opts.MustExist {
		if _, err := fs.Stat(dir); err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil, errors.Wrapf(ErrNoRegion, "region %s: directory %s does not exist", opts.EncodedName, dir)
			}
			return nil, errors.Wrap(err, "region: open")
		}
	}
	// Every directory the region makes is synced into its parent
	// (vfs.MkdirAllSync), or a power loss could take it and all in it.
	if err := vfs.MkdirAllSync(fs, dir, 0o755); err != nil {
		return nil, errors.Wrap(err, "region: open")
	}
	lock, err := lockDir(dir)
	if err != nil {
		return nil, err
	}
	plan, err := loadDescriptor(fs, dir, opts)
	if err != nil {
		lock.Close()
		return nil, err
	}
	meta := plan.meta
	r := &Region{
		dir: dir, opts: opts, fs: fs, cmp: encoding.InnerStoreComparer, log: opts.Logger, meta: meta,
		flushReq: make(chan struct{}, 1), flushedCh: make(chan struct{}), bgDone: make(chan struct{}), stop: make(chan struct{}),
		encodedKey: []byte(opts.EncodedName), tableKey: []byte(opts.Table), lock: lock,
		compactReq: make(chan struct{}, 1), compactDone: make(chan struct{}),
		locks: new(rowLocks), hot: new(writeHot),
	}
	r.clock = r.now
	r.bgCtx, r.bgCancel = context.WithCancel(context.Background())
	if meta {
		r.cmp = encoding.MetaComparer
	}
	// A bulk load a crash interrupted completes first: its copies wait in
	// .tmp, and its files must be in their stores before they open.
	if err := recoverBulkLoad(fs, dir, opts.Logger); err != nil {
		lock.Close()
		return nil, errors.Wrapf(err, "region %s", dir)
	}
	tmp := filepath.Join(dir, ".tmp")
	if err := vfs.RemoveAll(fs, tmp); err != nil {
		lock.Close()
		return nil, errors.Wrap(err, "region: clearing .tmp")
	}
	if err := vfs.MkdirAllSync(fs, tmp, 0o755); err != nil {
		lock.Close()
		return nil, errors.Wrap(err, "region: open")
	}
	switch {
	case opts.Cache != nil:
		r.cache = opts.Cache.hfileCache()
	case opts.BlockCache != nil:
		r.cache = opts.BlockCache
	case opts.CacheSize > 0:
		if r.ownCache, err = NewCache(opts.CacheSize); err != nil {
			lock.Close()
			return nil, errors.Wrap(err, "region: block cache")
		}
		r.cache = r.ownCache.hfileCache()
	}
	r.env = storeEnv{fs: fs, cmp: r.cmp, cache: r.cache, log: r.log, bloomErrorRate: opts.BloomErrorRate,
		hbaseNames: opts.HBaseFileNames}
	fail := func(err error) (*Region, error) {
		if m := opts.MemstoreLimit; m != nil {
			m.add(-r.memHeap.Load()) // what the replay counted
		}
		r.closeStores()
		r.closeOwnCache()
		lock.Close()
		return nil, err
	}
	var stores []*Store
	fresh := map[*Store]bool{}
	r.set.Store(newStoreSet(nil))
	for _, f := range plan.families {
		fdir := filepath.Join(dir, f.opts.Name)
		if f.fresh {
			// A family new to an existing region starts empty, whatever a
			// deleted family of the same name left.
			if err := r.removeFamilyDir(fdir); err != nil {
				return fail(err)
			}
		}
		s, err := openStore(r.env, fdir, f.opts)
		if err != nil {
			return fail(err)
		}
		s.createdSeq = f.createdSeq
		stores = append(stores, s)
		r.set.Store(newStoreSet(append([]*Store(nil), stores...)))
		if f.fresh {
			fresh[s] = true
		}
	}
	if err := r.recover(fresh); err != nil {
		return fail(err)
	}
	// Only now is the write point of a fresh family known. The descriptor
	// is written before the region takes writes, and before the dropped
	// families' directories go (so that a crash in between leaves them
	// dropped).
	for s := range fresh {
		s.createdSeq = encoding.SeqNum(r.mvcc.WritePoint())
	}
	if err := r.writeDescriptor(r.storeSet()); err != nil {
		r.wal.Close()
		return fail(err)
	}
	for _, name := range plan.dropped {
		r.log.Info("region: dropping a family that is not in the options", "region", dir, "family", name)
		if err := vfs.RemoveAll(fs, filepath.Join(dir, name)); err != nil {
			r.log.Warn("region: removing a dropped family's directory", "region", dir, "family", name, "err", err)
		}
	}
	r.lastFlush.Store(r.now())
	if m := opts.MemstoreLimit; m != nil {
		m.register(r)
	}
	go r.flusher()
	go r.compactor()
	// As HBase does for a region it opens: the files left by the last
	// run may already call for a compaction.
	r.requestCompaction()
	return r, nil
}

// openPlan is what Open makes of the options and .regioninfo.
type openPlan struct {
	families []plannedFamily // sorted by name
	dropped  []string        // stored families to remove (Options.DropFamilies)
	meta     bool
}

type plannedFamily struct {
	opts       FamilyOptions
	createdSeq encoding.SeqNum
	// fresh is set for a family that an existing region did not have.
	fresh bool
}

// loadDescriptor reconciles the families of opts with those .regioninfo
// holds (Open writes the result back once the WAL is replayed).
func loadDescriptor(fs vfs.FS, dir string, opts Options) (openPlan, error) {
	path := filepath.Join(dir, descriptorFile)
	var stored *descriptor
	if b, err := vfs.ReadFile(fs, path); err == nil {
		stored = &descriptor{}
		if err := json.Unmarshal(b, stored); err != nil {
			return openPlan{}, errors.Mark(errors.Wrapf(err, "region: reading %s", path), ErrCorruption)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return openPlan{}, errors.Wrap(err, "region: open")
	}
	plan := openPlan{meta: opts.Meta}
	for _, f := range opts.Families {
		f = f.withDefaults()
		if err := f.validate(); err != nil {
			return openPlan{}, err
		}
		plan.families = append(plan.families, plannedFamily{opts: f})
	}
	if stored != nil {
		if len(plan.families) == 0 {
			for _, rec := range stored.Families {
				plan.families = append(plan.families, plannedFamily{opts: rec.options(), createdSeq: encoding.SeqNum(rec.CreatedSeq)})
			}
		} else {
			// Every stored family must still be there, unless the caller
			// drops those it left out: dropping one by mistake would lose
			// its data.
			have := map[string]int{}
			for i, f := range plan.families {
				have[f.opts.Name] = i
				plan.families[i].fresh = true
			}
			for _, rec := range stored.Families {
				i, ok := have[rec.Name]
				switch {
				case ok:
					plan.families[i].fresh = false
					plan.families[i].createdSeq = encoding.SeqNum(rec.CreatedSeq)
				case opts.DropFamilies:
					plan.dropped = append(plan.dropped, rec.Name)
				default:
					return openPlan{}, invalidArgf("region: family %q exists in %s but is not in the options", rec.Name, dir)
				}
			}
		}
		plan.meta = stored.Meta
	}
	if len(plan.families) == 0 {
		return openPlan{}, invalidArgf("region: no column families for new region %s", dir)
	}
	sort.Slice(plan.families, func(i, j int) bool { return plan.families[i].opts.Name < plan.families[j].opts.Name })
	for i := 1; i < len(plan.families); i++ {
		if plan.families[i].opts.Name == plan.families[i-1].opts.Name {
			return openPlan{}, invalidArgf("region: duplicate family %q", plan.families[i].opts.Name)
		}
	}
	return plan, nil
}

// recover replays the WAL into the memstores and opens the WAL for writing.
// Nothing is replayed into the fresh families (new to an existing region):
// what the WAL holds of their names is an earlier family's.
func (r *Region) recover(fresh map[*Store]bool) error {
	walDir := filepath.Join(r.dir, "wal")
	var maxSeq, minFlushed encoding.SeqNum
	minFlushed = ^encoding.SeqNum(0)
	set := r.storeSet()
	// skip is, per family, the sequence id up to which its WAL entries are
	// not replayed: those in its store files, and those of an earlier
	// family of its name.
	skip := make(map[string]encoding.SeqNum, len(set.stores))
	for _, s := range set.stores {
		m := s.maxFlushedSeq()
		maxSeq = max(maxSeq, m, s.createdSeq)
		minFlushed = min(minFlushed, m)
		skip[s.name] = max(m, s.createdSeq)
		if fresh[s] {
			skip[s.name] = ^encoding.SeqNum(0)
		}
	}
	if _, err := r.fs.Stat(walDir); err == nil {
		stats, err := wal.ReplayFS(r.fs, walDir, uint64(minFlushed), func(key *wal.Key, edit *wal.Edit) error {
			seq := encoding.SeqNum(key.SeqNum)
			maxSeq = max(maxSeq, seq)
			for i := range edit.Cells {
				kv := &edit.Cells[i]
				if isWALMarker(kv) {
					continue // a record of an event (a bulk load), not data
				}
				s := set.byFamily[string(kv.Family)]
				if s == nil || seq <= skip[s.name] {
					continue // unknown family, already in a store file, or an earlier family's
				}
				kv.SeqNum = seq
				r.addMemSize(s.mem.Add(kv))
			}
			return nil
		})
		if err != nil {
			return errors.Wrapf(err, "region %s: replaying the WAL", r.dir)
		}
		if stats.TornTail {
			r.stats.walTornTails.Add(1)
			r.stats.walTornBytes.Add(stats.DroppedBytes)
			r.log.Warn("region: WAL ended in a torn record (a crash mid-write); it was dropped",
				"region", r.dir, "segment", stats.TornSegment, "offset", stats.TornOffset, "droppedBytes", stats.DroppedBytes)
		}
		if stats.Applied > 0 {
			r.log.Info("region: replayed WAL", "region", r.dir, "entries", stats.Applied, "cells", stats.Cells, "maxSeq", stats.MaxSeq)
		}
	}
	r.mvcc = mvcc.New(uint64(maxSeq))
	r.oldestRead = func(need encoding.SeqNum) (encoding.SeqNum, bool) { return r.readers.oldest(r.mvcc, need) }
	w, err := wal.Open(walDir, r.walOptions())
	if err != nil {
		return errors.Wrapf(err, "region %s: opening the WAL", r.dir)
	}
	r.wal = w
	return nil
}

func (r *Region) walOptions() wal.Options {
	return wal.Options{FS: r.fs, RollSize: r.opts.WALRollSize, Logger: r.log}
}

// ErrWALFailed is in the chain of the error of a write refused because the
// WAL failed earlier (a failed write or fsync of a segment) and could not be
// reset yet: the region takes no writes until the WAL works again. Reads go
// on. The error wraps the cause too (errors.Is(err, syscall.ENOSPC) holds
// for a full disk).
var ErrWALFailed = errors.New("region: WAL failed")

// walFailedError is ErrWALFailed with its cause: errors.Is finds both
// (with the standard library's errors.Is too).
type walFailedError struct{ err error }

func (e *walFailedError) Error() string        { return e.err.Error() }
func (e *walFailedError) Unwrap() error        { return e.err }
func (e *walFailedError) Is(target error) bool { return target == ErrWALFailed }

// checkWAL makes sure the WAL works before a write: if a WAL call failed,
// it resets the WAL (see resetWAL) and returns the error if it cannot.
func (r *Region) checkWAL() error {
	if !r.walBroken.Load() {
		return nil
	}
	return r.resetWAL()
}

// resetWAL revives a WAL broken by a failed write, fsync or roll, once the
// cause is gone (wal.Writer.Reset): the failed entries, none of them
// acknowledged and none of them in a memstore, are cut from the log, so
// that no replay brings them back, and a new segment starts. It holds the
// updates lock exclusively, so no mutation is between its WAL append and
// its memstore insert. While it fails, writes fail with its error
// (ErrWALFailed, wrapping the cause).
//
// HBase aborts the region server when the WAL cannot be synced or rolled,
// and the regions are reopened elsewhere from the WAL. We keep the region
// open for reads and refuse writes until the WAL works again; everything
// acknowledged is in the memstores and the WAL (or store files) throughout.
func (r *Region) resetWAL() error {
	r.hot.updates.Lock()
	defer r.hot.updates.Unlock()
	if r.closed.Load() {
		return ErrClosed
	}
	if !r.walBroken.Load() {
		return nil
	}
	cause := r.wal.Err()
	if cause == nil {
		r.walBroken.Store(false)
		return nil
	}
	if err := r.wal.Reset(); err != nil {
		return &walFailedError{errors.Wrapf(err, "region %s: writes refused until the WAL can be reset", r.dir)}
	}
	r.walBroken.Store(false)
	r.log.Warn("region: WAL reset after a failure; writes resume", "region", r.dir, "cause", cause.Error())
	return nil
}

// noteWALError records that a WAL call failed, so that the next write or
// flush resets the WAL first.
func (r *Region) noteWALError() {
	if r.wal.Err() != nil {
		r.walBroken.Store(true)
	}
}

// Families returns the families' options, sorted by name.
func (r *Region) Families() []FamilyOptions {
	set := r.storeSet()
	out := make([]FamilyOptions, len(set.stores))
	for i, s := range set.stores {
		out[i] = s.Options()
	}
	return out
}

// Dir returns the region's directory.
func (r *Region) Dir() string { return r.dir }

// Store returns the store of family, nil if there is none.
func (r *Region) Store(family string) *Store { return r.storeSet().byFamily[family] }

// Stats returns the region's counters.
func (r *Region) Stats() Stats {
	st := Stats{
		MemStoreSize:     r.memSize.Load(),
		MemStoreHeapSize: r.memHeap.Load(),
		Flushes:          r.stats.flushes.Load(),
		Compactions:      r.stats.compactions.Load(),
		MajorCompactions: r.stats.majorCompactions.Load(),
		FlushedBytes:     r.stats.flushedBytes.Load(),
		BlockedWrites:    r.stats.blockedWrites.Load(),
		Puts:             r.hot.puts.Load(),
		Deletes:          r.hot.deletes.Load(),
		Gets:             r.stats.gets.Load(),
		ReadPoint:        r.mvcc.ReadPoint(),
		WALTornTails:     r.stats.walTornTails.Load(),
		WALTornBytes:     r.stats.walTornBytes.Load(),
		BulkLoadedFiles:  r.stats.bulkLoadedFiles.Load(),
		WAL:              r.wal.Metrics(),
		LastFlush:        time.UnixMilli(r.lastFlush.Load()),
	}
	for _, s := range r.storeSet().stores {
		for _, f := range s.Files() {
			st.StoreFiles++
			st.StoreFileSize += f.Reader.Size()
		}
	}
	if c, ok := r.cache.(statser); ok {
		st.BlockCache = c.Stats()
	}
	return st
}

// Close flushes the memstores, stops the background flusher and closes the
// WAL and the store files. Operations after Close return ErrClosed. Writes
// are refused from a moment during Close on; every write acknowledged
// before that is in the store files when Close returns without an error
// (as HBase's region close flushes once while writes go on and again once
// they are stopped), so a split's daughters, which read only the parent's
// files, see all of it.
func (r *Region) Close() error {
	var err error
	r.closeOnce.Do(func() {
		// No family changes or WAL rolls while closing, nor after.
		r.adminMu.Lock()
		defer r.adminMu.Unlock()
		ferr := r.Flush()
		// Writers check closed under the updates lock, so once it is
		// released here none can reach the WAL.
		r.hot.updates.Lock()
		r.closed.Store(true)
		r.hot.updates.Unlock()
		if ferr == nil {
			// What came in during the first flush.
			r.flushMu.Lock()
			_, ferr = r.flushStoresLocked(true)
			r.flushMu.Unlock()
		}
		r.bgCancel()
		close(r.stop)
		<-r.bgDone
		<-r.compactDone
		// A compaction a caller runs (CompactStores) may still be
		// publishing its file: wait for it (its context is canceled, and
		// one that starts now sees the region closed).
		for _, s := range r.storeSet().stores {
			s.compactMu.Lock()
			s.compactMu.Unlock()
		}
		var werr error
		if r.wal.Err() != nil {
			// Cut the failed (never acknowledged) entries from the log
			// before closing it, or a reopen would replay them.
			werr = r.wal.Reset()
		}
		if cerr := r.wal.Close(); werr == nil {
			werr = cerr
		}
		if m := r.opts.MemstoreLimit; m != nil {
			m.unregister(r)
		}
		r.closeStores()
		r.closeOwnCache()
		r.lock.Close()
		err = errors.CombineErrors(ferr, werr)
	})
	return err
}

// closeOwnCache closes the cache the region made itself, after its stores.
func (r *Region) closeOwnCache() {
	if r.ownCache != nil {
		r.ownCache.Close()
	}
}

func (r *Region) closeStores() {
	for _, s := range r.storeSet().stores {
		s.close()
	}
}

func (r *Region) now() int64 { return r.opts.Now().UnixMilli() }

// storeFilesChanged tells the region's owner that a flush or a compaction
// changed the store files (Options.StoreFilesChanged).
func (r *Region) storeFilesChanged() {
	if f := r.opts.StoreFilesChanged; f != nil {
		f()
	}
}
