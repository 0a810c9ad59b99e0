package region

import (
	"bufio"
	"encoding/binary"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/encoding"
	"github.com/regionkv/regionkv/hfile"
	"github.com/regionkv/regionkv/internal/vfs"
	"github.com/regionkv/regionkv/memstore"
	"github.com/regionkv/regionkv/scanner"
)

// StoreFile is one published HFile of a store: HBase's HStoreFile.
type StoreFile struct {
	Path   string
	Reader *hfile.Reader
	// MaxSeq is the file's MAX_SEQ_ID_KEY: every edit with a sequence id up
	// to it was flushed (for this store) by the time the file was written.
	MaxSeq encoding.SeqNum
	// Major is set on files written by a major compaction.
	Major bool
	// BulkLoaded is set on files a bulk load added (BulkLoadHFiles): their
	// MaxSeq is the sequence id the load gave them, from the file's name,
	// and every cell reads with it, whatever the file records (HBase's
	// treatment of a bulk-loaded file). A reference to such a file is too.
	BulkLoaded bool
	// ref is set for a reference file (Path is the reference's, Reader
	// the parent's file's): reads see only the rows of its half.
	ref *fileRef
	// sample is a sample of the keys of the file's bloom, kept by the
	// flush or compaction that wrote it (nil for files opened from disk):
	// see overwrite.go. Set before the file is published, then only read.
	sample *keySample
	id     uint64
	// refs counts the store's own reference plus every open scanner; the
	// reader is closed when they are all dropped, so a file compacted away
	// stays readable for the scanners that still use it.
	refs  fileRefs
	cache hfile.Cache
	file  io.Closer // what Reader reads (the file, or its mapping); closed with it
}

// fileRefs are a StoreFile's references. The store's own and those of
// compactions are counted in own; those of reads, which take and drop one
// per file on every Get, in shards, each read in the shard its hint picks
// (see readHint), so that reads on different cores do not pass one
// counter's cache line to and fro (4% of a random Get's CPU did).
//
// Reads reference a file only while the store lists it, so holding own's
// reference: once own is zero the shards only fall, and the file is closed
// by whoever finds own and the shards' sum both zero. Summing the shards
// one by one then reads each no lower than it is at the end of the sum, so
// a sum of zero is true. A read may drop its reference in another shard
// than it took it in: only the sum matters.
type fileRefs struct {
	own    atomic.Int32
	closed atomic.Bool
	shards [fileRefShards]struct {
		_ [60]byte
		n atomic.Int32
	}
}

// storeMu is a Store's view lock (Store.mu): an RWMutex in shards. A read
// locks only the shard its hint picks, so that Gets on different cores do
// not pass one reader count's cache line to and fro (68-84 ns a Get with 8
// clients on this VM's two cores; 43 ns in shards); a writer (a flush or a
// compaction publishing its file, a bulk load, close) locks every shard.
// Readers that are not hot pass any hint.
type storeMu struct {
	shards [storeMuShards]struct {
		sync.RWMutex
		// 128 bytes apart, so that no cache line holds two shards' words.
		_ [128 - unsafe.Sizeof(sync.RWMutex{})]byte
	}
}

// storeMuShards is the number of shards of a storeMu: a power of two, more
// than the cores that commonly read a store at once.
const storeMuShards = 8

func (m *storeMu) shard(h readHint) *sync.RWMutex {
	return &m.shards[h.shard(storeMuShards)].RWMutex
}

// RLock locks the shard of hint h for reading.
func (m *storeMu) RLock(h readHint) { m.shard(h).RLock() }

// RUnlock unlocks what RLock(h) locked.
func (m *storeMu) RUnlock(h readHint) { m.shard(h).RUnlock() }

// Lock locks every shard for writing, in order.
func (m *storeMu) Lock() {
	for i := range m.shards {
		m.shards[i].Lock()
	}
}

// Unlock unlocks what Lock locked.
func (m *storeMu) Unlock() {
	for i := range m.shards {
		m.shards[i].Unlock()
	}
}

// fileRefShards is the number of shards of a file's read references: a
// power of two, more than the cores that commonly read a file at once.
const fileRefShards = 16

// sum returns the references the shards hold.
func (r *fileRefs) sum() int32 {
	var n int32
	for i := range r.shards {
		n += r.shards[i].n.Load()
	}
	return n
}

// lastDropped reports, once, that no reference is left.
func (r *fileRefs) lastDropped() bool {
	return r.own.Load() == 0 && r.sum() == 0 && r.closed.CompareAndSwap(false, true)
}

// takeRead takes a read's reference, in the shard of hint.
func (r *fileRefs) takeRead(hint readHint) { r.shard(hint).Add(1) }

// shard returns the counter of hint's shard.
func (r *fileRefs) shard(hint readHint) *atomic.Int32 {
	return &r.shards[hint.shard(fileRefShards)].n
}

// dropRead drops a read's reference and reports whether it was the last.
func (r *fileRefs) dropRead(hint readHint) bool {
	r.shard(hint).Add(-1)
	return r.own.Load() == 0 && r.lastDropped()
}

// dropOwn drops a reference of the store's kind and reports whether it was
// the last.
func (r *fileRefs) dropOwn() bool { return r.own.Add(-1) == 0 && r.lastDropped() }

// acquire takes a reference of the store's kind (held for long: the
// store's own, a compaction's).
func (f *StoreFile) acquire() { f.refs.own.Add(1) }

// release drops a reference acquire took.
func (f *StoreFile) release() {
	if f.refs.dropOwn() {
		f.closeFile()
	}
}

// acquireRead takes a read's reference, in the shard of hint.
func (f *StoreFile) acquireRead(hint readHint) { f.refs.takeRead(hint) }

// releaseRead drops a reference acquireRead took.
func (f *StoreFile) releaseRead(hint readHint) {
	if f.refs.dropRead(hint) {
		f.closeFile()
	}
}

// closeFile closes the file once its last reference is dropped.
func (f *StoreFile) closeFile() {
	f.Reader.Close()
	f.file.Close()
	// Ids are never reused: drop the file's blocks now rather than letting
	// them age out of the cache.
	if c, ok := f.cache.(interface{ EvictFile(uint64) int }); ok {
		c.EvictFile(f.id)
	}
}

// Size returns the file's size in bytes.
func (f *StoreFile) Size() int64 { return f.Reader.Size() }

// fileIDs gives every open store file a process-wide unique block cache id.
var fileIDs atomic.Uint64

// Store is one column family of a region: a memstore and its files
// (HBase's HStore).
type Store struct {
	name string // the family's name, fixed for the store's life
	// family is name as bytes, for bloom probes.
	family []byte
	// opts are the family's options. Region.ModifyFamily replaces them
	// whole; a flush, compaction or read takes them once (options) and
	// works with that one version throughout.
	opts  atomic.Pointer[FamilyOptions]
	dir   string
	fs    vfs.FS
	cmp   *encoding.Comparer
	mem   *memstore.MemStore
	cache hfile.Cache
	log   *slog.Logger
	// bloomErrorRate is io.storefile.bloom.error.rate for new files.
	bloomErrorRate float64
	// hbaseNames names new files without the .hfile suffix (see newFileName).
	hbaseNames bool

	// mu guards files and makes (memstore segments, files) one consistent
	// view for readers: a flush adds its file and drops the snapshot under
	// the write lock.
	mu    storeMu
	files []*StoreFile // oldest first
	// filesMaxTS is the newest timestamp in files (math.MaxInt64 if a
	// file does not say, math.MinInt64 with none), for newestPut, which
	// reads it without mu. noteFilesLocked sets it wherever files change,
	// before a flush's memstore snapshot is dropped.
	filesMaxTS atomic.Int64

	compactMu sync.Mutex // one compaction at a time
	// majors counts the store's major compactions; majorWanted is set by
	// a minor compaction whose output was mostly surplus versions.
	majors      atomic.Int64
	majorWanted atomic.Bool

	// The snapshot a failed flush left behind and the sequence id it was
	// taken at: a retry flushes the same snapshot and must record that id,
	// not the region's current write point (which covers writes that are
	// only in the active segment). Guarded by the region's flushMu.
	snapID  uint64
	snapSeq encoding.SeqNum

	// createdSeq is the region's write point when the family was added to
	// a region that already existed: WAL entries up to it belong to an
	// earlier family of the same name (deleted, then added again), so
	// replay skips them. Zero for families the region was created with.
	// Fixed for the store's life.
	createdSeq encoding.SeqNum
	// dropped is set by Region.DeleteFamily once the store has left the
	// region: a flush or compaction that still holds it does nothing.
	dropped atomic.Bool
}

// options returns the family's current options (not to be modified).
func (s *Store) options() *FamilyOptions { return s.opts.Load() }

// Options returns the family's current options.
func (s *Store) Options() FamilyOptions { return *s.opts.Load() }

// snapshotSeq returns the sequence id a flush of snap covers, writePoint if
// snap was taken now, and whether snap is one a failed flush left.
//
// REQUIRES: the region's flushMu and updates lock are held.
func (s *Store) snapshotSeq(snap *memstore.Snapshot, writePoint encoding.SeqNum) (encoding.SeqNum, bool) {
	if snap.ID == s.snapID && s.snapID != 0 {
		return s.snapSeq, true
	}
	s.snapID, s.snapSeq = snap.ID, writePoint
	return writePoint, false
}

// storeEnv is what every store of a region shares.
type storeEnv struct {
	fs             vfs.FS
	cmp            *encoding.Comparer
	cache          hfile.Cache
	log            *slog.Logger
	bloomErrorRate float64
	hbaseNames     bool // Options.HBaseFileNames
}

func openStore(env storeEnv, dir string, opts FamilyOptions) (*Store, error) {
	fs := env.fs
	s := &Store{name: opts.Name, family: []byte(opts.Name), dir: dir, fs: fs, cmp: env.cmp, mem: memstore.New(env.cmp), cache: env.cache,
		log: env.log, bloomErrorRate: env.bloomErrorRate, hbaseNames: env.hbaseNames}
	s.opts.Store(&opts)
	if err := vfs.MkdirAllSync(fs, dir, 0o755); err != nil {
		return nil, errors.Wrapf(err, "region: store %s", s.name)
	}
	names, err := fs.List(dir)
	if err != nil {
		return nil, errors.Wrapf(err, "region: store %s", s.name)
	}
	var refs []string
	for _, name := range names {
		if _, _, ok := parseReferenceName(name); ok {
			refs = append(refs, name)
			continue
		}
		if _, ok := parseStoreFileName(name); !ok {
			continue
		}
		sf, err := s.openFile(filepath.Join(dir, name))
		if err != nil {
			s.close()
			return nil, err
		}
		s.files = append(s.files, sf)
	}
	// References after the files: a compaction that rewrote a reference
	// names it as an input, and its parent's file may be gone since (the
	// janitor removes it once no reference is left on disk, and a crash
	// can bring back the unlinking of the reference but not of the
	// parent's file).
	if err := s.removeCompactedInputs(refs); err != nil {
		s.close()
		return nil, err
	}
	sortFiles(s.files)
	s.noteFilesLocked()
	return s, nil
}

// noteFilesLocked sets filesMaxTS from files.
//
// REQUIRES: s.mu held exclusively (or s not yet shared).
func (s *Store) noteFilesLocked() {
	ts := int64(math.MinInt64)
	for _, f := range s.files {
		maxTS, ok := f.Reader.MaxTimestamp()
		if !ok {
			maxTS = math.MaxInt64
		}
		ts = max(ts, maxTS)
	}
	s.filesMaxTS.Store(ts)
}

// sortFiles orders files oldest first: by MaxSeq, then by name, so that the
// order, which breaks ties between equal cells, does not depend on how the
// directory lists them.
func sortFiles(files []*StoreFile) {
	sort.Slice(files, func(i, j int) bool {
		if files[i].MaxSeq != files[j].MaxSeq {
			return files[i].MaxSeq < files[j].MaxSeq
		}
		return files[i].Path < files[j].Path
	})
}

func (s *Store) openFile(path string) (*StoreFile, error) {
	id := fileIDs.Add(1)
	f, err := s.fs.Open(path)
	if err != nil {
		return nil, errors.Wrapf(err, "region: store %s", s.name)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, errors.Wrapf(err, "region: store %s: %s", s.name, path)
	}
	// A file on disk is read through a mapping: a block cache miss copies
	// from the page cache instead of calling pread (hfile.MapFile).
	var src hfile.ReaderAtCloser = f
	if osf, ok := f.(*os.File); ok {
		src = hfile.MapFile(osf, st.Size())
	}
	r, err := hfile.Open(src, st.Size(), path, hfile.ReaderOptions{Cache: s.cache, FileID: id, InMemory: s.options().InMemory, Logger: s.log})
	if err != nil {
		src.Close()
		return nil, errors.Wrapf(err, "region: store %s", s.name)
	}
	sf := &StoreFile{Path: path, Reader: r, id: id, cache: s.cache, file: src}
	sf.refs.own.Store(1)
	if seq, _ := parseStoreFileName(filepath.Base(path)); seq > 0 {
		// As HBase's HStoreFile: the name's sequence id, not the file's
		// MAX_SEQ_ID_KEY (which is the writer's, if any).
		sf.MaxSeq, sf.BulkLoaded = seq, true
	} else if v, ok := r.FileInfo().Int64(hfile.FileInfoMaxSeqID); ok && v >= 0 {
		sf.MaxSeq = encoding.SeqNum(v)
	}
	if v := r.FileInfo()[hfile.FileInfoMajorCompaction]; len(v) == 1 && v[0] != 0 {
		sf.Major = true
	}
	return sf, nil
}

// maxFlushedSeq is the highest sequence id known to be in this store's files.
func (s *Store) maxFlushedSeq() encoding.SeqNum {
	s.mu.RLock(0)
	defer s.mu.RUnlock(0)
	var m encoding.SeqNum
	for _, f := range s.files {
		m = max(m, f.MaxSeq)
	}
	return m
}

// Name returns the family name.
func (s *Store) Name() string { return s.name }

// Files returns the current store files, oldest first.
func (s *Store) Files() []*StoreFile {
	s.mu.RLock(0)
	defer s.mu.RUnlock(0)
	return append([]*StoreFile(nil), s.files...)
}

// storeReaders is the reusable memory of one store's scanners for a read:
// the scanners, what they wrap, and the files they hold referenced. Gets
// and short scans reuse it through pools, so opening a read allocates
// nothing in the steady state.
type storeReaders struct {
	kvs   []scanner.KeyValueScanner
	segs  []*memstore.SegmentScanner
	mems  []scanner.MemStoreScanner
	fscs  []scanner.StoreFileScanner
	files []*StoreFile // referenced until releaseFiles
	hint  readHint     // the shard of the files' references
}

// newestPut returns the newest version of column qualifier of row visible
// at readPoint, if the memstore answers for it alone (see rmwRead): the
// memstore's newest version of the column is a put without tags, alive at
// now under the family's TTL, that no family delete marker in the memstore
// deletes, and every store file's TIMERANGE ends before the put's
// timestamp. false means that only a store scanner can tell. The cell is
// the memstore's.
func (s *Store) newestPut(row, qualifier []byte, readPoint encoding.SeqNum, now int64) (*encoding.KeyValue, memstore.Hint, bool) {
	if ttl := s.options().TTL; ttl > 0 {
		now -= ttl.Milliseconds()
	} else {
		now = math.MinInt64
	}
	// Without s.mu, whose reader count every write would move between
	// the processors: the memstore is read lock-free, and filesMaxTS after
	// it. A flush sets filesMaxTS before it drops the snapshot it wrote,
	// so a cell read from the snapshot is the newest whether or not its
	// file is counted yet, and once the snapshot is gone the file is.
	kv, familyDeleted, h := s.mem.NewestHint(row, s.family, qualifier, readPoint)
	if kv == nil || familyDeleted || kv.Type != encoding.TypePut || len(kv.Tags) != 0 || kv.Timestamp < now {
		return nil, h, false
	}
	if s.filesMaxTS.Load() >= kv.Timestamp {
		return nil, h, false
	}
	return kv, h, true
}

// releaseFiles drops the references on the store files, once the scanners
// reading them are closed.
func (rd *storeReaders) releaseFiles() {
	for i, f := range rd.files {
		f.releaseRead(rd.hint)
		rd.files[i] = nil
	}
	rd.files = rd.files[:0]
	clear(rd.kvs[:cap(rd.kvs)])
}

// openReaders returns the store's scanners at readPoint, built in rd: one
// per memstore segment with cells visible at it and one per file; with row
// set (a Get), only files whose blooms may hold row (and qualifier, if not
// nil). The files stay referenced in rd until rd.releaseFiles, which the
// caller runs after closing the scanners.
func (s *Store) openReaders(rd *storeReaders, readPoint encoding.SeqNum, row, qualifier []byte, cacheBlocks bool) ([]scanner.KeyValueScanner, error) {
	// One consistent view (memstore segments and files, each file
	// referenced) under the lock; bloom checks may read from disk, so they
	// run after it is released.
	s.mu.RLock(rd.hint)
	rd.segs = s.mem.AppendScanners(rd.segs[:0], readPoint)
	from := len(rd.files)
	rd.files = append(rd.files, s.files...)
	for _, f := range rd.files[from:] {
		f.acquireRead(rd.hint)
	}
	s.mu.RUnlock(rd.hint)

	files := rd.files[from:]
	// BLOCKCACHE=false: this family's data blocks stay out of the cache.
	cacheBlocks = cacheBlocks && !s.options().NoBlockCache
	if cap(rd.mems) < len(rd.segs) {
		rd.mems = make([]scanner.MemStoreScanner, len(rd.segs))
	}
	if cap(rd.fscs) < len(files) {
		rd.fscs = make([]scanner.StoreFileScanner, len(files))
	}
	rd.mems, rd.fscs = rd.mems[:len(rd.segs)], rd.fscs[:len(files)]
	out := rd.kvs[:0]
	order := int64(math.MaxInt64)
	for i, ss := range rd.segs {
		rd.mems[i].Reset(ss, order)
		out = append(out, &rd.mems[i])
		order--
	}
	clear(rd.segs)
	// A point read asks each file's blooms before opening a scanner on it,
	// except in a store of one file and no memstore cells: there the
	// scanner asks only if the block its seek lands in is not cached (see
	// hfile.Iterator.SeekToRow). With cells in the memstore the row may be
	// one written since the flush, which the file lacks; then the bloom
	// spares the index lookup and the seek.
	probe := hfile.RowProbe{Row: row, Family: s.family, Qualifier: qualifier}
	deferBloom := row != nil && len(files) == 1 && len(rd.mems) == 0
	n := 0
	for i := len(files) - 1; i >= 0; i-- {
		f := files[i]
		if row != nil && f.ref != nil && !f.ref.contains(row) {
			continue // the row is in the parent's other half
		}
		if row != nil && !deferBloom {
			ok, err := f.Reader.MayContainGet(&probe)
			if err != nil {
				for _, o := range out {
					o.Close()
				}
				return nil, err
			}
			if !ok {
				continue
			}
		}
		fs := &rd.fscs[n]
		n++
		fs.Reset(f.Reader, readPoint, int64(i), cacheBlocks)
		if deferBloom {
			fs.SetRowProbe(probe)
		}
		if f.ref != nil {
			fs.SetRowBounds(f.ref.lo, f.ref.hi)
		}
		if f.BulkLoaded {
			fs.SetSeqNum(f.MaxSeq)
		}
		out = append(out, fs)
	}
	rd.kvs = out
	return out, nil
}

// flushSnapshot writes the memstore snapshot to a new store file and
// publishes it; now (milliseconds) is the time TTL is judged at. It returns
// the new file, or nil if the snapshot was empty. A snapshot whose cells
// the flush all drops (expired ones) still makes a file, with no cells: its
// MAX_SEQ_ID_KEY keeps WAL replay from bringing them back.
func (s *Store) flushSnapshot(snap *memstore.Snapshot, flushSeq encoding.SeqNum, tmpDir string, now int64) (*StoreFile, error) {
	if snap.Segment.Empty() {
		if err := s.mem.ClearSnapshot(snap.ID); err != nil {
			return nil, err
		}
		return nil, nil
	}
	name := s.newFileName()
	tmp := filepath.Join(tmpDir, s.name+"-"+name)
	sample, err := s.writeFile(tmp, snap, flushSeq, now)
	if err != nil {
		s.removeQuietly(tmp)
		return nil, err
	}
	sf, err := s.publish(tmp, name)
	if err != nil {
		return nil, errors.Wrapf(err, "region: publishing flush of %s", s.name)
	}
	sf.sample = sample
	s.mu.Lock()
	s.files = append(s.files, sf)
	s.noteFilesLocked()
	err = s.mem.ClearSnapshot(snap.ID)
	s.mu.Unlock()
	return sf, err
}

// publish moves the finished file tmp into the store directory as name,
// makes that durable and opens it. If any step fails, it removes what it
// left (best effort), so that a retry does not leave two files holding the
// same cells; the caller still has the cells (in a memstore snapshot or in
// the compaction's inputs).
func (s *Store) publish(tmp, name string) (*StoreFile, error) {
	final := filepath.Join(s.dir, name)
	if err := s.fs.Rename(tmp, final); err != nil {
		s.removeQuietly(tmp)
		return nil, err
	}
	// A rename across directories changes both, and is durable only once
	// both are synced: with the store directory alone, a power loss can
	// leave the file in .tmp (which Open clears) after the WAL segments it
	// made redundant were pruned (found by TestPowerLoss).
	err := syncDir(s.fs, s.dir)
	if err == nil {
		err = syncDir(s.fs, filepath.Dir(tmp))
	}
	var sf *StoreFile
	if err == nil {
		sf, err = s.openFile(final)
	}
	if err != nil {
		s.removeQuietly(final)
		return nil, err
	}
	return sf, nil
}

// removeQuietly removes path, logging a failure: it cleans up after an
// error that is being returned.
func (s *Store) removeQuietly(path string) {
	if err := s.fs.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		s.log.Warn("region: removing a file after a failure", "file", path, "err", err)
	}
}

// writeFile writes the flush of snap to path and returns a sample of the
// keys of its bloom (nil without one).
func (s *Store) writeFile(path string, snap *memstore.Snapshot, flushSeq encoding.SeqNum, now int64) (*keySample, error) {
	f, err := s.fs.Create(path)
	if err != nil {
		return nil, errors.Wrapf(err, "region: flush of %s", s.name)
	}
	defer f.Close()
	// As HBase, a flush writes tags only if a cell with tags was added to
	// the snapshot (rather than a pass over every cell to find one).
	tags := snap.Segment.HasTags()
	bw := bufio.NewWriterSize(f, 1<<20)
	o := s.options()
	w, err := hfile.NewWriter(bw, hfile.WriterOptions{
		BlockSize:   o.BlockSize,
		Encoding:    o.Encoding,
		Compression: o.Compression,
		BloomType:   o.BloomFilter.hfileType(), BloomErrorRate: s.bloomErrorRate,
		Comparer:     s.cmp,
		IncludesTags: tags,
	})
	if err != nil {
		return nil, err
	}
	var versionDeletes uint64
	sampler := newKeySampler(o.BloomFilter.hfileType())
	err = s.flushCells(snap, o, now, func(kv *encoding.KeyValue) error {
		if isVersionDelete(kv) {
			versionDeletes++
		}
		sampler.add(kv)
		return errors.Wrapf(w.Append(kv), "region: flush of %s", s.name)
	})
	if err != nil {
		return nil, err
	}
	if err := w.SetFileInfo(hfile.FileInfoMaxSeqID, binary.BigEndian.AppendUint64(nil, uint64(flushSeq))); err != nil {
		return nil, err
	}
	if err := w.SetFileInfo(fileInfoVersionDeletes, binary.BigEndian.AppendUint64(nil, versionDeletes)); err != nil {
		return nil, err
	}
	if err := w.SetFileInfo(hfile.FileInfoMajorCompaction, []byte{0}); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, errors.Wrapf(err, "region: flush of %s", s.name)
	}
	if err := bw.Flush(); err != nil {
		return nil, errors.Wrapf(err, "region: flush of %s", s.name)
	}
	if err := f.Sync(); err != nil {
		return nil, errors.Wrapf(err, "region: syncing flush of %s", s.name)
	}
	return sampler.result(), nil
}

// flushCells passes to emit, in order, the snapshot's cells a flush writes,
// as HBase's flush does (a store scanner of ScanType COMPACT_RETAIN_DELETES):
// the delete markers, and of the puts those that a read of the family's
// VERSIONS versions at now would return from the snapshot alone. Puts that
// the snapshot's own markers mask, versions beyond VERSIONS and expired
// versions beyond MIN_VERSIONS are dropped: a table whose rows are
// overwritten flushes one version per column, not every overwrite. (Markers
// in older files may still mask what is kept; as in HBase, that does not
// bring dropped versions back.) Without MIN_VERSIONS expired markers go
// too, as in HBase: they can only mask expired cells. With it they stay,
// since the versions it keeps past the TTL may be theirs to mask.
//
// o are the family's options the flush writes with.
func (s *Store) flushCells(snap *memstore.Snapshot, o *FamilyOptions, now int64, emit func(*encoding.KeyValue) error) error {
	ttl := o.TTL.Milliseconds()
	oldest := int64(math.MinInt64) // markers older than this are dropped
	if ttl > 0 && o.MinVersions == 0 {
		oldest = now - ttl
	}
	ss, err := scanner.NewStoreScanner(s.cmp,
		[]scanner.KeyValueScanner{scanner.NewMemStoreScanner(snap.Segment.NewScanner(math.MaxUint64), 0)},
		scanner.QueryOptions{MaxVersions: o.MaxVersions, MinVersions: o.MinVersions,
			TTLMillis: ttl, NowMillis: now, ReuseCells: true})
	if err != nil {
		return err
	}
	defer ss.Close()
	var row []byte
	var puts []*encoding.KeyValue
	if snap.Segment.Deletes() == 0 {
		// No markers to merge in: the kept puts are the flush, and the
		// pass over every cell that finds markers is not needed. Of a
		// counter written 60 times, the store scanner reads the newest
		// version and seeks past the rest.
		for {
			var ok bool
			if puts, ok, err = ss.NextRow(puts[:0]); err != nil || !ok {
				return err
			}
			for _, kv := range puts {
				if err := emit(kv); err != nil {
					return err
				}
			}
		}
	}
	raw := snap.Segment.NewScanner(math.MaxUint64)
	defer raw.Close()
	for kv := raw.SeekToFirst(); kv != nil; {
		row = append(row[:0], kv.Row...)
		puts = puts[:0]
		if pr := ss.PeekRow(); pr != nil && s.cmp.CompareRows(pr, row) == 0 {
			if puts, err = ss.Row(puts); err != nil {
				return err
			}
		}
		// Merge the row's markers, from the raw cells, with its kept puts.
		i := 0
		for ; kv != nil && s.cmp.CompareRows(kv.Row, row) == 0; kv = raw.Next() {
			if !kv.Type.IsDelete() || kv.Timestamp < oldest {
				continue
			}
			for ; i < len(puts) && s.cmp.CompareKeyValues(puts[i], kv) < 0; i++ {
				if err := emit(puts[i]); err != nil {
					return err
				}
			}
			if err := emit(kv); err != nil {
				return err
			}
		}
		for ; i < len(puts); i++ {
			if err := emit(puts[i]); err != nil {
				return err
			}
		}
	}
	return nil
}

func (s *Store) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range s.files {
		f.release()
	}
	s.files = nil
	s.noteFilesLocked()
}

func syncDir(fs vfs.FS, dir string) error {
	return errors.Wrapf(vfs.SyncDir(fs, dir), "region: syncing %s", dir)
}
