package region

import (
	"bufio"
	"context"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/encoding"
	"github.com/regionkv/regionkv/hfile"
	"github.com/regionkv/regionkv/scanner"
	"google.golang.org/protobuf/encoding/protowire"
)

// Compaction defaults, as HBase's.
const (
	DefaultCompactionMin        = 3                  // hbase.hstore.compaction.min
	DefaultCompactionMax        = 10                 // hbase.hstore.compaction.max
	DefaultCompactionRatio      = 1.2                // hbase.hstore.compaction.ratio
	DefaultMajorPeriod          = 7 * 24 * time.Hour // hbase.hregion.majorcompaction
	DefaultCompactionThroughput = 100 << 20          // hbase.hstore.compaction.throughput.higher.bound, bytes/s
)

// fileInfoCompactionEvent is HBase's COMPACTION_EVENT_KEY: PBUF and a
// CompactionEventTracker { repeated string compacted_store_file = 1 }
// naming the files a compaction replaced. On open, files a newer file names
// as its inputs are deleted: the compaction that wrote it had published it
// but crashed before removing them.
const fileInfoCompactionEvent = "COMPACTION_EVENT_KEY"

// fileInfoVersionDeletes counts a file's version delete markers (Delete and
// DeleteFamilyVersion), the markers that mask one version and so can make
// an older one visible. It is ours, not one of HBase's keys (HBase counts
// only DeleteFamily and DeleteFamilyVersion markers); HBase's readers ignore
// keys they do not know. A file without it (HBase's, a bulk load's) may
// hold such markers.
const fileInfoVersionDeletes = "regionkv.VERSION_DELETE_COUNT"

// isVersionDelete reports whether kv masks a single version.
func isVersionDelete(kv *encoding.KeyValue) bool {
	return kv.Type == encoding.TypeDelete || kv.Type == encoding.TypeDeleteFamilyVersion
}

// mayHoldVersionDeletes reports whether f may hold version delete markers.
func mayHoldVersionDeletes(f *StoreFile) bool {
	if f.Reader.EntryCount() == 0 {
		return false
	}
	n, ok := f.Reader.FileInfo().Int64(fileInfoVersionDeletes)
	return !ok || n > 0
}

// selectMinor picks files for a minor compaction like HBase's
// ExploringCompactionPolicy: among every run of consecutive files (oldest
// first; sizes holds their sizes) of between min and max files whose total
// is at most maxSize, and in which no file is larger than ratio × the sum of
// the others (runs smaller than minSize skip that test), take the one with
// the most files, then the smallest total. It returns the run as [start,
// end), or end == 0 if no run qualifies.
func selectMinor(sizes []int64, minFiles, maxFiles int, ratio float64, minSize, maxSize int64) (start, end int) {
	var bestSize int64
	for s := 0; s < len(sizes); s++ {
		for e := s + minFiles; e <= len(sizes) && e-s <= maxFiles; e++ {
			run := sizes[s:e]
			var size int64
			for _, n := range run {
				size += n
			}
			if size > maxSize {
				continue
			}
			if size >= minSize && !filesInRatio(run, size, ratio) {
				continue
			}
			if end == 0 || e-s > end-start || (e-s == end-start && size < bestSize) {
				start, end, bestSize = s, e, size
			}
		}
	}
	return start, end
}

func filesInRatio(run []int64, total int64, ratio float64) bool {
	if len(run) < 2 {
		return true
	}
	for _, n := range run {
		if float64(n) > float64(total-n)*ratio {
			return false
		}
	}
	return true
}

// writeThrottle paces the bytes compactions write.
type writeThrottle interface {
	wrote(ctx context.Context, n int) error
}

// throttle limits a compaction's write rate (HBase's
// PressureAwareCompactionThroughputController at its upper bound).
type throttle struct {
	bytesPerSec int64
	start       time.Time
	written     int64
}

func (t *throttle) wrote(ctx context.Context, n int) error {
	if t.bytesPerSec <= 0 {
		return nil
	}
	t.written += int64(n)
	ahead := time.Duration(float64(t.written)/float64(t.bytesPerSec)*float64(time.Second)) - time.Since(t.start)
	if ahead < 10*time.Millisecond {
		return nil
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(ahead):
		return nil
	}
}

// countingWriter counts bytes for the throttle.
type countingWriter struct {
	w   *bufio.Writer
	t   writeThrottle
	ctx context.Context
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	if err == nil {
		err = c.t.wrote(c.ctx, n)
	}
	return n, err
}

// compact merges files into one new file and swaps it in. A major
// compaction (all files) keeps what a read of every version would return:
// delete markers, the cells they mask, expired cells (but the MIN_VERSIONS
// newest of a column) and versions beyond the family's VERSIONS are
// dropped. A minor one keeps the delete markers, since they may mask cells
// in other files, and drops expired cells (all of them, without
// MIN_VERSIONS). Of the puts it keeps what a read of VERSIONS versions
// returns from its inputs alone, as a flush does (HBase's
// COMPACT_RETAIN_DELETES), when no other file of the store may hold a
// version delete marker (see dropVersionsSafe); otherwise every put.
//
// It also returns how many of the cells a minor compaction wrote are
// versions beyond VERSIONS of their column (not counting deletes), which
// a major compaction would drop.
//
// REQUIRES: s.compactMu is held, and was when files were listed.
func (s *Store) compact(ctx context.Context, files []*StoreFile, major bool, tmpDir string, now int64, th writeThrottle) (*StoreFile, uint64, error) {
	// The inputs must all still be live: only a compaction removes files,
	// and the caller has held compactMu since it listed them.
	s.mu.RLock(0)
	live := map[*StoreFile]bool{}
	for _, f := range s.files {
		live[f] = true
	}
	drop := !major && dropVersionsSafe(s.files, files)
	s.mu.RUnlock(0)
	var maxSeq encoding.SeqNum
	for _, f := range files {
		if !live[f] {
			return nil, 0, errors.AssertionFailedf("region: compaction input %s is no longer live", f.Path)
		}
		f.acquire()
		defer f.release()
		maxSeq = max(maxSeq, f.MaxSeq)
	}
	name := s.newFileName()
	tmp := filepath.Join(tmpDir, s.name+"-"+name)
	n, surplus, sample, err := s.writeCompacted(ctx, tmp, files, major, drop, maxSeq, now, th)
	if err != nil {
		s.removeQuietly(tmp)
		return nil, 0, errors.Wrapf(err, "region: compacting %d files of %s", len(files), s.name)
	}
	var out *StoreFile
	if n > 0 {
		if out, err = s.publish(tmp, name); err != nil {
			return nil, 0, errors.Wrapf(err, "region: publishing compaction of %s", s.name)
		}
		out.sample = sample
	} else {
		s.removeQuietly(tmp)
	}
	// Swap: readers see either the inputs or the output, never both or neither.
	s.mu.Lock()
	kept := s.files[:0:0]
	for _, f := range s.files {
		if !containsFile(files, f) {
			kept = append(kept, f)
		}
	}
	if out != nil {
		kept = append(kept, out)
	}
	sortFiles(kept)
	s.files = kept
	s.noteFilesLocked()
	s.mu.Unlock()
	for _, f := range files {
		// Open scanners keep reading through their reference (an unlinked
		// file stays readable while open).
		if err := s.fs.Remove(f.Path); err != nil && !errors.Is(err, os.ErrNotExist) {
			s.log.Warn("region: removing compacted file", "file", f.Path, "err", err)
		}
		f.release()
	}
	if err := syncDir(s.fs, s.dir); err != nil {
		return out, surplus, err
	}
	return out, surplus, nil
}

// dropVersionsSafe reports whether a minor compaction of inputs, files of
// a store whose files are all, may drop the versions its inputs alone hide.
// A version that VERSIONS newer ones hide stays hidden whatever another
// file holds: more versions hide it further, and a DeleteColumn or
// DeleteFamily that masks a newer version masks it too. Only a version
// delete marker (Delete, DeleteFamilyVersion) masks a newer version and
// not it, which would make it visible again; so versions are dropped only
// when no file outside the compaction, older or newer, may hold one (a
// marker masks by timestamp, whichever file it is in). Markers written
// after the compaction began do not bring dropped versions back, as with
// those written after a flush (HBase's rule for both).
func dropVersionsSafe(all, inputs []*StoreFile) bool {
	for _, f := range all {
		if !containsFile(inputs, f) && mayHoldVersionDeletes(f) {
			return false
		}
	}
	return true
}

func containsFile(files []*StoreFile, f *StoreFile) bool {
	for _, g := range files {
		if g == f {
			return true
		}
	}
	return false
}

// writeCompacted writes the merged cells of files to path and returns the
// number of cells written and, for a minor compaction, how many of them are
// surplus versions (see compact), and a sample of the keys of its bloom.
// With drop, a minor compaction drops the puts a read of its inputs alone
// would not return.
func (s *Store) writeCompacted(ctx context.Context, path string, files []*StoreFile, major, drop bool, maxSeq encoding.SeqNum, now int64, th writeThrottle) (n int64, surplus uint64, _ *keySample, _ error) {
	f, err := s.fs.Create(path)
	if err != nil {
		return 0, 0, nil, err
	}
	defer f.Close()
	bw := bufio.NewWriterSize(f, 1<<20)
	tags := false
	for _, in := range files {
		tags = tags || in.Reader.Format().IncludesTags
	}
	// The family's options as they are now: a ModifyFamily since the
	// files were written applies to the compacted file.
	o := s.options()
	w, err := hfile.NewWriter(&countingWriter{w: bw, t: th, ctx: ctx}, hfile.WriterOptions{
		BlockSize: o.BlockSize, Encoding: o.Encoding, Compression: o.compactionCompression(major),
		BloomType: o.BloomFilter.hfileType(), BloomErrorRate: s.bloomErrorRate, Comparer: s.cmp, IncludesTags: tags,
	})
	if err != nil {
		return 0, 0, nil, err
	}
	sampler := newKeySampler(o.BloomFilter.hfileType())
	scanners := make([]scanner.KeyValueScanner, len(files))
	audits := make([]*auditScanner, len(files))
	for i, in := range files {
		fsc := scanner.NewStoreFileScanner(in.Reader, math.MaxUint64, int64(i), false)
		if in.ref != nil {
			fsc.SetRowBounds(in.ref.lo, in.ref.hi)
		}
		if in.BulkLoaded {
			// The output keeps the load's sequence id in its cells: it is
			// not a bulk-loaded file, so its cells read as written.
			fsc.SetSeqNum(in.MaxSeq)
		}
		audits[i] = newAuditScanner(fsc, s.cmp, in)
		scanners[i] = audits[i]
	}
	ttl := o.TTL.Milliseconds()
	var versionDeletes uint64 // written, for fileInfoVersionDeletes
	if major {
		ss, err := scanner.NewStoreScanner(s.cmp, scanners, scanner.QueryOptions{
			MaxVersions: o.MaxVersions, MinVersions: o.MinVersions, TTLMillis: ttl, NowMillis: now,
			ReuseCells: true,
		})
		if err != nil {
			return 0, 0, nil, err
		}
		defer ss.Close()
		var cells []*encoding.KeyValue
		for {
			var ok bool
			cells, ok, err = ss.NextRow(cells[:0])
			if err != nil {
				return 0, 0, nil, err
			}
			if !ok {
				break
			}
			for _, kv := range cells {
				if err := w.Append(kv); err != nil {
					return 0, 0, nil, err
				}
				sampler.add(kv)
				n++
			}
		}
	} else {
		heap := scanner.NewKeyValueHeap(s.cmp, scanners, false)
		defer heap.Close()
		if err := heap.Seek(encoding.FirstOnRow(nil, nil)); err != nil {
			return 0, 0, nil, err
		}
		// Puts seen of the current column, to count surplus versions.
		var col []byte
		versions := 0
		// Expired cells go, but for a family with MIN_VERSIONS: a read
		// with a time range counts versions from its own newest, so any
		// version not deleted may be among the MIN_VERSIONS it returns,
		// and which are deleted depends on markers in other files too.
		// Only a major compaction, seeing every file, drops them.
		oldest := int64(math.MinInt64)
		if ttl > 0 && o.MinVersions == 0 {
			oldest = now - ttl
		}
		// With drop, the read's matcher decides which puts go: those the
		// inputs' markers mask and versions beyond VERSIONS. It sees the
		// markers and puts an expired cell is not (all of a column's
		// older cells are expired too), and no TTL: expired versions are
		// kept with MIN_VERSIONS, as above.
		var m *scanner.QueryMatcher
		var row []byte
		if drop {
			m = scanner.NewQueryMatcher(s.cmp, scanner.QueryOptions{MaxVersions: o.MaxVersions, NowMillis: now})
		}
		for kv := heap.Peek(); kv != nil; kv = heap.Peek() {
			keep := !kv.Expired(oldest, now)
			if keep && m != nil {
				if row == nil || s.cmp.CompareRows(kv.Row, row) != 0 {
					row = append(row[:0], kv.Row...)
					m.SetRow(row)
				}
				switch m.Match(kv) {
				case scanner.MatchInclude, scanner.MatchIncludeAndSeekNextCol, scanner.MatchIncludeAndSeekNextRow:
				default:
					keep = kv.Type.IsDelete() // tracked, and kept
				}
			}
			if keep {
				if err := w.Append(kv); err != nil {
					return 0, 0, nil, err
				}
				sampler.add(kv)
				n++
				if isVersionDelete(kv) {
					versionDeletes++
				}
				if kv.Type == encoding.TypePut {
					if col == nil || !sameColumn(s.cmp, kv, col) {
						col = encoding.FirstOnRowCol(col[:0], kv.Row, kv.Family, kv.Qualifier)
						versions = 0
					}
					if versions++; versions > o.MaxVersions {
						surplus++
					}
				}
			}
			if err := heap.Next(); err != nil {
				return 0, 0, nil, err
			}
		}
	}
	// Every input must have been read to its end (and, by a minor
	// compaction, which steps over every cell, cell for cell as its trailer
	// counts them) before the output may replace it.
	for i, a := range audits {
		if err := a.check(files[i]); err != nil {
			return 0, 0, nil, err
		}
		if !major && files[i].ref == nil {
			if err := a.checkCount(files[i]); err != nil {
				return 0, 0, nil, err
			}
		}
	}
	if err := w.SetFileInfo(hfile.FileInfoMaxSeqID, binary.BigEndian.AppendUint64(nil, uint64(maxSeq))); err != nil {
		return 0, 0, nil, err
	}
	if err := w.SetFileInfo(fileInfoVersionDeletes, binary.BigEndian.AppendUint64(nil, versionDeletes)); err != nil {
		return 0, 0, nil, err
	}
	flag := byte(0)
	if major {
		flag = 0xFF
	}
	if err := w.SetFileInfo(hfile.FileInfoMajorCompaction, []byte{flag}); err != nil {
		return 0, 0, nil, err
	}
	var tracker []byte
	for _, in := range files {
		tracker = protowire.AppendTag(tracker, 1, protowire.BytesType)
		tracker = protowire.AppendString(tracker, filepath.Base(in.Path))
	}
	if err := w.SetFileInfo(fileInfoCompactionEvent, append([]byte(encoding.PBMagic), tracker...)); err != nil {
		return 0, 0, nil, err
	}
	if err := w.Close(); err != nil {
		return 0, 0, nil, err
	}
	if err := bw.Flush(); err != nil {
		return 0, 0, nil, err
	}
	return n, surplus, sampler.result(), f.Sync()
}

// sameColumn reports whether kv is in the column of key, a first-on-column
// key.
func sameColumn(cmp *encoding.Comparer, kv *encoding.KeyValue, key encoding.Key) bool {
	return cmp.CompareRows(kv.Row, key.Row()) == 0 && string(kv.Qualifier) == string(key.Qualifier())
}

// removeCompactedInputs deletes files that a newer file lists as the inputs
// of the compaction that wrote it (a crash between publishing the output
// and removing the inputs), then opens the reference files refs (names in
// the store directory) that are not such inputs.
func (s *Store) removeCompactedInputs(refs []string) error {
	gone := map[string]bool{}
	for _, f := range s.files {
		if f.ref != nil || f.BulkLoaded {
			// A reference's file info (the parent's file's) speaks of the
			// parent's files; a bulk-loaded file's compaction, if any, was
			// another store's: the files either names are not ours.
			continue
		}
		names, err := parseCompactionEvent(f.Reader.FileInfo()[fileInfoCompactionEvent], f.Path)
		if err != nil {
			return err
		}
		for _, name := range names {
			if name != filepath.Base(f.Path) {
				gone[name] = true
			}
		}
	}
	for _, name := range refs {
		path := filepath.Join(s.dir, name)
		if gone[name] {
			s.log.Info("region: removing a compacted reference file left by a crash", "file", path)
			if err := s.fs.Remove(path); err != nil {
				return errors.Wrap(err, "region: removing compacted reference file")
			}
			continue
		}
		file, parent, _ := parseReferenceName(name)
		sf, err := s.openReference(path, file, parent)
		if err != nil {
			return err
		}
		s.files = append(s.files, sf)
	}
	if len(gone) == 0 {
		return nil
	}
	kept := s.files[:0]
	for _, f := range s.files {
		if gone[filepath.Base(f.Path)] {
			s.log.Info("region: removing a compacted file left by a crash", "file", f.Path)
			if err := s.fs.Remove(f.Path); err != nil {
				return errors.Wrap(err, "region: removing compacted file")
			}
			f.release()
			continue
		}
		kept = append(kept, f)
	}
	s.files = kept
	return syncDir(s.fs, s.dir)
}

// Compact compacts every store: all its files with major, else the files
// the exploring policy picks (possibly none; a pick of every file is a
// major compaction). It waits for a compaction running in the background;
// CompactStores says what it did.
func (r *Region) Compact(major bool) error {
	_, err := r.CompactStores(major)
	return err
}

// CompactionResult says what the compaction of one store did.
type CompactionResult struct {
	Family string
	// Major is set when the compaction took every file of the store (a
	// minor pick of every file is one).
	Major bool
	// InputFiles and InputBytes are the files compacted; OutputBytes is the
	// size of the file written (0 when nothing survived, e.g. every cell
	// deleted or expired).
	InputFiles  int
	InputBytes  int64
	OutputBytes int64
	Took        time.Duration
}

// CompactStores is Compact returning what it did: one result for each store
// it compacted, none when no store needed it (with major: no store has
// more than one file, or deletes or TTL to apply). A compaction running in
// the background when it is called is waited for, then the store's files as
// they are after it are compacted, so that CompactStores(true) leaves each
// store one major-compacted file (or none).
func (r *Region) CompactStores(major bool) ([]CompactionResult, error) {
	return r.compactStores(r.storeSet().stores, major)
}

// CompactFamily is CompactStores for one family: its result, if it
// needed a compaction, or ErrNoSuchFamily.
func (r *Region) CompactFamily(family string, major bool) ([]CompactionResult, error) {
	s := r.storeSet().byFamily[family]
	if s == nil {
		return nil, errors.Wrapf(ErrNoSuchFamily, "family %q in region %s", family, r.dir)
	}
	return r.compactStores([]*Store{s}, major)
}

// Compacting reports whether a minor and whether a major compaction of one
// of the region's stores is running now (HBase's CompactionState).
func (r *Region) Compacting() (minor, major bool) {
	return r.minorRunning.Load() > 0, r.majorRunning.Load() > 0
}

func (r *Region) compactStores(stores []*Store, major bool) ([]CompactionResult, error) {
	if r.closed.Load() {
		return nil, ErrClosed
	}
	var errs error
	var done []CompactionResult
	for _, s := range stores {
		res, ok, err := r.compactStore(s, major)
		if err != nil {
			errs = errors.CombineErrors(errs, err)
		} else if ok {
			done = append(done, res)
		}
	}
	return done, errs
}

// compactStore compacts s (every file with major, else what the exploring
// policy picks) and reports whether there was anything to compact.
func (r *Region) compactStore(s *Store, major bool) (res CompactionResult, did bool, err error) {
	var th writeThrottle
	if p := r.opts.CompactionPool; p != nil {
		// The server's compactions take turns, and share one rate. The
		// slot is taken before the store's compaction lock, so a store
		// waiting for one holds nothing others need.
		if err := p.acquire(r.bgCtx); err != nil {
			return CompactionResult{}, false, errors.Wrapf(err, "region %s: waiting for a compaction slot", r.dir)
		}
		defer func() { p.release(did) }()
		th = &p.throttle
	}
	// Listing the files under compactMu makes them the inputs: no other
	// compaction can take them in between.
	s.compactMu.Lock()
	defer s.compactMu.Unlock()
	if s.dropped.Load() {
		return CompactionResult{}, false, nil // DeleteFamily took it away meanwhile
	}
	if r.closed.Load() {
		return CompactionResult{}, false, ErrClosed // Close waits on compactMu for those before
	}
	files := s.Files()
	if s.hasReferences() {
		// A store reading its parent's files by reference is compacted
		// whole, which rewrites the referenced cells into a file of its
		// own and drops the references, as HBase's policy does.
		major = true
	}
	if !major {
		sizes := make([]int64, len(files))
		for i, f := range files {
			sizes[i] = f.Size()
		}
		start, end := selectMinor(sizes, r.opts.CompactionMin, r.opts.CompactionMax, r.opts.CompactionRatio,
			r.opts.CompactionMinSize, r.opts.CompactionMaxSize)
		// A compaction of every file is a major one: nothing outside it but
		// the memstore, whose cells are newer, so it may drop what a major
		// compaction drops, delete markers too, as HBase's does. A true
		// minor one drops surplus versions where no file outside can show
		// them again (see compact).
		major = end > 0 && start == 0 && end == len(files)
		files = files[start:end]
	}
	if len(files) == 0 || (major && len(files) == 1 && files[0].ref == nil && files[0].Major && s.options().TTL == 0 && !hasDeletes(files[0])) {
		return CompactionResult{}, false, nil
	}
	res = CompactionResult{Family: s.name, Major: major, InputFiles: len(files)}
	for _, f := range files {
		res.InputBytes += f.Size()
	}
	start := time.Now()
	if th == nil {
		th = &throttle{bytesPerSec: r.opts.CompactionThroughput, start: start}
	}
	running := &r.minorRunning
	if major {
		running = &r.majorRunning
	}
	running.Add(1)
	out, surplus, err := s.compact(r.bgCtx, files, major, filepath.Join(r.dir, ".tmp"), r.now(), th)
	running.Add(-1)
	if err != nil {
		return res, false, errors.Wrapf(err, "region %s", r.dir)
	}
	res.Took = time.Since(start)
	r.stats.compactions.Add(1)
	if major {
		r.stats.majorCompactions.Add(1)
		s.majors.Add(1)
		s.majorWanted.Store(false)
	} else if out != nil && surplus*2 > out.Reader.EntryCount() {
		// Mostly versions no read returns: a major compaction would drop
		// them; ask the compactor for one.
		s.majorWanted.Store(true)
		r.requestCompaction()
	}
	if out != nil {
		res.OutputBytes = out.Size()
	}
	r.log.Info("region: compacted", "region", r.dir, "family", s.name, "major", major, "files", len(files),
		"inputBytes", res.InputBytes, "outputBytes", res.OutputBytes, "took", res.Took)
	r.storeFilesChanged()
	return res, true, nil
}

// hasDeletes reports whether a file may hold delete markers.
func hasDeletes(f *StoreFile) bool {
	if n, ok := f.Reader.FileInfo().Int64(hfile.FileInfoDeleteFamilyCnt); ok && n > 0 {
		return true
	}
	// Without per-type counts, any file not written by a major compaction may.
	return !f.Major
}

// requestCompaction wakes the background compactor; it never blocks.
func (r *Region) requestCompaction() {
	select {
	case r.compactReq <- struct{}{}:
	default:
	}
}

// compactor runs minor compactions when a store has enough files, and
// major compactions when the oldest file is older than the period, or a
// store's files mostly rewrite each other (see overwrite.go).
func (r *Region) compactor() {
	defer close(r.compactDone)
	tick := time.NewTicker(time.Minute)
	defer tick.Stop()
	for {
		select {
		case <-r.stop:
			return
		case <-r.compactReq:
		case <-tick.C:
		}
		if r.opts.DisableAutoCompaction || r.closed.Load() {
			continue
		}
		for _, s := range r.storeSet().stores {
			if _, _, err := r.compactIfNeeded(s); err != nil && !r.closed.Load() {
				r.log.Error("region: compaction failed", "region", r.dir, "family", s.name, "err", err)
			}
		}
	}
}

// CompactNeeded runs the compactions the background compactor would run
// now, and waits for them (even with DisableAutoCompaction): for each
// store, a major compaction if one is due, asked for or needed to drop
// references, or if the store's files mostly rewrite each other (see
// overwrite.go), else a minor one if it has CompactionMin files. It returns
// what it did, as CompactStores.
func (r *Region) CompactNeeded() ([]CompactionResult, error) {
	if r.closed.Load() {
		return nil, ErrClosed
	}
	var errs error
	var done []CompactionResult
	for _, s := range r.storeSet().stores {
		res, ok, err := r.compactIfNeeded(s)
		if err != nil {
			errs = errors.CombineErrors(errs, err)
		} else if ok {
			done = append(done, res)
		}
	}
	return done, errs
}

// compactIfNeeded compacts s if it needs it (see CompactNeeded).
func (r *Region) compactIfNeeded(s *Store) (CompactionResult, bool, error) {
	major := r.majorDue(s) || s.majorWanted.Load() || s.hasReferences()
	if !major {
		overwritten, err := s.mostlyOverwritten()
		if err != nil {
			r.log.Error("region: estimating overwritten store files", "region", r.dir, "family", s.name, "err", err)
		}
		if overwritten {
			r.log.Info("region: store files mostly rewrite each other; compacting them whole", "region", r.dir, "family", s.name, "files", len(s.Files()))
			major = true
		}
	}
	if !major && len(s.Files()) < r.opts.CompactionMin {
		return CompactionResult{}, false, nil
	}
	return r.compactStore(s, major)
}

// majorDue reports whether the store's oldest file is past the major
// compaction period.
func (r *Region) majorDue(s *Store) bool {
	if r.opts.MajorCompactionPeriod < 0 {
		return false
	}
	files := s.Files()
	if len(files) == 0 || (len(files) == 1 && files[0].Major && s.options().TTL == 0) {
		return false
	}
	oldest := int64(math.MaxInt64)
	for _, f := range files {
		if ts, ok := f.Reader.FileInfo().Int64(hfile.FileInfoCreateTime); ok {
			oldest = min(oldest, ts)
		}
	}
	return oldest != math.MaxInt64 && r.now()-oldest >= r.opts.MajorCompactionPeriod.Milliseconds()
}
