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

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/encoding"
	"github.com/regionkv/regionkv/hfile"
	"github.com/regionkv/regionkv/internal/vfs"
	"github.com/regionkv/regionkv/mvcc"
	"github.com/regionkv/regionkv/wal"
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

	stores   []*Store // sorted by family name
	byFamily map[string]*Store

	mvcc *mvcc.Control
	// walBroken is set when a WAL call failed and the writer may be
	// broken; resetWAL revives it.
	wal       *wal.Writer
	walBroken atomic.Bool
	locks     rowLocks
	// updates is HBase's updatesLock: mutations hold it shared from WAL
	// append to memstore insert, a flush takes it exclusively to snapshot.
	updates sync.RWMutex

	memSize      atomic.Int64 // data size of every memstore, snapshots included
	lastBlockLog atomic.Int64 // unix nanos of the last "blocking updates" warning

	flushMu   sync.Mutex // one flush at a time
	flushReq  chan struct{}
	flushedCh chan struct{} // closed and replaced after each flush
	flushedMu sync.Mutex
	flushErr  atomic.Pointer[error]
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
}

type stats struct {
	flushes          atomic.Int64
	compactions      atomic.Int64
	majorCompactions atomic.Int64
	flushedBytes     atomic.Int64
	blockedWrites    atomic.Int64
	puts             atomic.Int64
	deletes          atomic.Int64
	gets             atomic.Int64
	walTornTails     atomic.Int64
	walTornBytes     atomic.Int64
}

// Stats are the region's counters and sizes.
type Stats struct {
	MemStoreSize     int64 // bytes in the memstores, snapshots being flushed included
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
}

// ErrClosed is returned by operations on a closed region.
var ErrClosed = errors.New("region: closed")

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
}

func recordOf(f FamilyOptions) familyRecord {
	return familyRecord{Name: f.Name, MaxVersions: f.MaxVersions, TTL: f.TTL, Encoding: f.Encoding,
		Compression: f.Compression.Ordinal(), Bloom: uint8(f.BloomFilter.hfileType()),
		NoBloom: f.BloomFilter == BloomFilterNone, BlockSize: f.BlockSize, InMemory: f.InMemory}
}

func (rec familyRecord) options() FamilyOptions {
	return FamilyOptions{Name: rec.Name, MaxVersions: rec.MaxVersions, TTL: rec.TTL, Encoding: rec.Encoding,
		Compression: hfile.CompressionOfOrdinal(rec.Compression), Bloom: hfile.BloomType(rec.Bloom),
		NoBloom: rec.NoBloom, BlockSize: rec.BlockSize, InMemory: rec.InMemory}.withDefaults()
}

// Open opens (or creates) the region in dir: it loads the store files,
// replays the WAL above what they hold, and starts accepting writes.
func Open(dir string, o Options) (*Region, error) {
	opts := o.withDefaults()
	fs := opts.fs
	// Every directory the region makes is synced into its parent
	// (vfs.MkdirAllSync), or a power loss could take it and all in it.
	if err := vfs.MkdirAllSync(fs, dir, 0o755); err != nil {
		return nil, errors.Wrap(err, "region: open")
	}
	lock, err := lockDir(dir)
	if err != nil {
		return nil, err
	}
	families, meta, err := loadDescriptor(fs, dir, opts)
	if err != nil {
		lock.Close()
		return nil, err
	}
	r := &Region{
		dir: dir, opts: opts, fs: fs, cmp: encoding.InnerStoreComparer, log: opts.Logger,
		byFamily: map[string]*Store{}, flushReq: make(chan struct{}, 1),
		flushedCh: make(chan struct{}), bgDone: make(chan struct{}), stop: make(chan struct{}),
		encodedKey: []byte(opts.EncodedName), tableKey: []byte(opts.Table), lock: lock,
		compactReq: make(chan struct{}, 1), compactDone: make(chan struct{}),
	}
	r.bgCtx, r.bgCancel = context.WithCancel(context.Background())
	if meta {
		r.cmp = encoding.MetaComparer
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
	env := storeEnv{fs: fs, cmp: r.cmp, cache: r.cache, log: r.log, bloomErrorRate: opts.BloomErrorRate}
	for _, f := range families {
		s, err := openStore(env, filepath.Join(dir, f.Name), f)
		if err != nil {
			r.closeStores()
			r.closeOwnCache()
			lock.Close()
			return nil, err
		}
		r.stores = append(r.stores, s)
		r.byFamily[f.Name] = s
	}
	if err := r.recover(); err != nil {
		r.closeStores()
		r.closeOwnCache()
		lock.Close()
		return nil, err
	}
	go r.flusher()
	go r.compactor()
	// As HBase does for a region it opens: the files left by the last
	// run may already call for a compaction.
	r.requestCompaction()
	return r, nil
}

// loadDescriptor reconciles the families of opts with those .regioninfo
// holds, writes the result back, and returns the families (sorted by name)
// and whether the region is hbase:meta's.
func loadDescriptor(fs vfs.FS, dir string, opts Options) ([]FamilyOptions, bool, error) {
	path := filepath.Join(dir, descriptorFile)
	var stored *descriptor
	if b, err := vfs.ReadFile(fs, path); err == nil {
		stored = &descriptor{}
		if err := json.Unmarshal(b, stored); err != nil {
			return nil, false, errors.Mark(errors.Wrapf(err, "region: reading %s", path), ErrCorruption)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, false, errors.Wrap(err, "region: open")
	}
	meta := opts.Meta
	var fams []FamilyOptions
	for _, f := range opts.Families {
		f = f.withDefaults()
		if err := f.validate(); err != nil {
			return nil, false, err
		}
		fams = append(fams, f)
	}
	if stored != nil {
		if len(fams) == 0 {
			for _, rec := range stored.Families {
				fams = append(fams, rec.options())
			}
		} else {
			// Every stored family must still be there: dropping one would
			// orphan its files.
			have := map[string]bool{}
			for _, f := range fams {
				have[f.Name] = true
			}
			for _, f := range stored.Families {
				if !have[f.Name] {
					return nil, false, invalidArgf("region: family %q exists in %s but is not in the options", f.Name, dir)
				}
			}
		}
		meta = stored.Meta
	}
	if len(fams) == 0 {
		return nil, false, invalidArgf("region: no column families for new region %s", dir)
	}
	sort.Slice(fams, func(i, j int) bool { return fams[i].Name < fams[j].Name })
	for i := 1; i < len(fams); i++ {
		if fams[i].Name == fams[i-1].Name {
			return nil, false, invalidArgf("region: duplicate family %q", fams[i].Name)
		}
	}
	desc := descriptor{Table: opts.Table, Meta: meta}
	for _, f := range fams {
		desc.Families = append(desc.Families, recordOf(f))
	}
	b, err := json.MarshalIndent(desc, "", "  ")
	if err != nil {
		return nil, false, errors.Wrap(err, "region: descriptor")
	}
	if err := vfs.WriteFileAtomic(fs, path, b); err != nil {
		return nil, false, errors.Wrap(err, "region: writing descriptor")
	}
	return fams, meta, nil
}

// recover replays the WAL into the memstores and opens the WAL for writing.
func (r *Region) recover() error {
	walDir := filepath.Join(r.dir, "wal")
	var maxSeq, minFlushed encoding.SeqNum
	minFlushed = ^encoding.SeqNum(0)
	flushed := make(map[string]encoding.SeqNum, len(r.stores))
	for _, s := range r.stores {
		m := s.maxFlushedSeq()
		flushed[s.opts.Name] = m
		maxSeq = max(maxSeq, m)
		minFlushed = min(minFlushed, m)
	}
	if _, err := r.fs.Stat(walDir); err == nil {
		stats, err := wal.ReplayFS(r.fs, walDir, uint64(minFlushed), func(key *wal.Key, edit *wal.Edit) error {
			seq := encoding.SeqNum(key.SeqNum)
			maxSeq = max(maxSeq, seq)
			for i := range edit.Cells {
				kv := &edit.Cells[i]
				s := r.byFamily[string(kv.Family)]
				if s == nil || seq <= flushed[s.opts.Name] {
					continue // unknown family, or already in a store file
				}
				kv.SeqNum = seq
				r.memSize.Add(s.mem.Add(kv).DataSize)
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
	r.updates.Lock()
	defer r.updates.Unlock()
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

// Families returns the families' options.
func (r *Region) Families() []FamilyOptions {
	out := make([]FamilyOptions, len(r.stores))
	for i, s := range r.stores {
		out[i] = s.opts
	}
	return out
}

// Dir returns the region's directory.
func (r *Region) Dir() string { return r.dir }

// Store returns the store of family, nil if there is none.
func (r *Region) Store(family string) *Store { return r.byFamily[family] }

// Stats returns the region's counters.
func (r *Region) Stats() Stats {
	st := Stats{
		MemStoreSize:     r.memSize.Load(),
		Flushes:          r.stats.flushes.Load(),
		Compactions:      r.stats.compactions.Load(),
		MajorCompactions: r.stats.majorCompactions.Load(),
		FlushedBytes:     r.stats.flushedBytes.Load(),
		BlockedWrites:    r.stats.blockedWrites.Load(),
		Puts:             r.stats.puts.Load(),
		Deletes:          r.stats.deletes.Load(),
		Gets:             r.stats.gets.Load(),
		ReadPoint:        r.mvcc.ReadPoint(),
		WALTornTails:     r.stats.walTornTails.Load(),
		WALTornBytes:     r.stats.walTornBytes.Load(),
		WAL:              r.wal.Metrics(),
	}
	for _, s := range r.stores {
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
// WAL and the store files. Operations after Close return ErrClosed.
func (r *Region) Close() error {
	var err error
	r.closeOnce.Do(func() {
		ferr := r.Flush()
		// Writers check closed under the updates lock, so once it is
		// released here none can reach the WAL.
		r.updates.Lock()
		r.closed.Store(true)
		r.updates.Unlock()
		r.bgCancel()
		close(r.stop)
		<-r.bgDone
		<-r.compactDone
		var werr error
		if r.wal.Err() != nil {
			// Cut the failed (never acknowledged) entries from the log
			// before closing it, or a reopen would replay them.
			werr = r.wal.Reset()
		}
		if cerr := r.wal.Close(); werr == nil {
			werr = cerr
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
	for _, s := range r.stores {
		s.close()
	}
}

func (r *Region) now() int64 { return r.opts.Now().UnixMilli() }
