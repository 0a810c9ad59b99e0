package region

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/encoding"
	"github.com/regionkv/regionkv/hfile"
	"github.com/regionkv/regionkv/internal/vfs"
	"github.com/regionkv/regionkv/wal"
	"google.golang.org/protobuf/encoding/protowire"
)

// BulkLoadFile is one HFile for BulkLoadHFiles and the family it goes to.
type BulkLoadFile struct {
	Family string
	Path   string
}

// BulkLoadOptions configure BulkLoadHFiles.
type BulkLoadOptions struct {
	// CopyFiles copies every file into its store and leaves it where it
	// is (HBase's copy_file). Without it a file on the region's filesystem
	// is moved (renamed) into its store, as HBase moves it, and one on
	// another filesystem is copied and left in place (as HBase does too).
	CopyFiles bool
}

// BulkLoadResult says what BulkLoadHFiles did.
type BulkLoadResult struct {
	// SeqNum is the sequence id the loaded files were given: their cells
	// read as if written at it.
	SeqNum encoding.SeqNum
	// StoreFiles are the new store files' paths, in the order of the
	// request's files.
	StoreFiles []string
}

// ErrWrongRegion is in the chain of BulkLoadHFiles' error when a file has
// rows outside the region's [Options.StartKey, Options.EndKey) (HBase's
// WrongRegionException, "Bulk load file ... does not fit inside region
// ..."). Nothing was loaded; the file has to be split at the region's
// boundaries (as `regionsrv bulkload` does) or loaded into another region.
var ErrWrongRegion = errors.New("region: wrong region")

// ErrInvalidHFile is in the chain of BulkLoadHFiles' error when a file is a
// readable HFile but cannot be a store file of its family: it holds no
// cells, its cells are out of order or of another family, or it is ordered
// as hbase:meta's (HBase's InvalidHFileException). The error is marked
// ErrInvalidArgument too. A file that is not an HFile, or is damaged, gives
// an error marked ErrCorruption instead.
var ErrInvalidHFile = errors.New("region: invalid HFile")

func invalidHFilef(format string, args ...any) error {
	return errors.Mark(errors.Mark(errors.Newf(format, args...), ErrInvalidHFile), ErrInvalidArgument)
}

// bulkLoadRecordName is the commit record of a bulk load in the region
// directory (see bulkLoadRecord).
const bulkLoadRecordName = ".bulkload"

// bulkLoadRecord is <region>/.bulkload, the commit record of a bulk load:
// it is written, durably, after the load's sequence id is taken and the
// memstores are flushed, before the first file moves into its store, and
// removed once the last is in (and, after a failure, once every file moved
// is back). Every file is then either at its source (Src) or in its store
// (Dst), a rename being atomic; Open moves the rest in, so a load a crash
// interrupted is either complete or had not begun.
type bulkLoadRecord struct {
	Seq   uint64                `json:"seq"`
	Files []bulkLoadRecordEntry `json:"files"`
}

type bulkLoadRecordEntry struct {
	// Src is where the file is until it moves: the caller's file (an
	// absolute path), or, with Copy, the load's copy of it, relative to
	// the region directory (in .tmp, which Open clears only after it has
	// read this record).
	Src  string `json:"src"`
	Copy bool   `json:"copy,omitempty"`
	// Dst is the store file, relative to the region directory.
	Dst string `json:"dst"`
}

// stagedFile is one file of a bulk load on its way into a store.
type stagedFile struct {
	store  *Store
	family string
	orig   string // the caller's path
	src    string // what moves into the store: orig, or a copy of it
	copied bool   // src is the load's copy in .tmp
	dst    string
}

// BulkLoadHFiles makes HFiles store files of the region, all of them
// atomically: HBase's HRegion.bulkLoadHFiles with assignSeqId. Each file
// must be an HFile (v3, or v2 as HBase 1 writes them; any compression the
// region reads, any data block encoding, bloom filter and block size) whose
// cells are sorted, all of the family it is loaded into, with every row in
// the region's [Options.StartKey, Options.EndKey). The files are checked
// first, every one read to its end, and nothing is done if one fails:
// ErrNoSuchFamily for an unknown family, ErrWrongRegion for rows outside
// the region (checked on every file before the others are read),
// ErrInvalidHFile, or ErrCorruption for a damaged file.
//
// Then, as HBase does, the memstores are flushed and the files get a new
// sequence id, one above every write before them and below every write
// after: their cells, which keep their own timestamps, read as written at
// that sequence id whatever it says in the file, so that where a cell of the
// files and another of the same row, column, timestamp and type meet, the
// one written later wins (the files' over what was there, writes after the
// load over the files'). Readers see every file of the load at once, in
// every family, or none; writes wait for the load's last step (publishing
// the files) to finish.
//
// The files are moved (renamed) into the stores, or copied (see
// BulkLoadOptions); a file is never moved before the load commits, so a
// failed load leaves every file where it was. A crash during the load
// leaves either all of it loaded or none of it, once the region is open
// again, and nothing written before it lost.
func (r *Region) BulkLoadHFiles(ctx context.Context, files []BulkLoadFile, o BulkLoadOptions) (BulkLoadResult, error) {
	if r.closed.Load() {
		return BulkLoadResult{}, ErrClosed
	}
	if len(files) == 0 {
		return BulkLoadResult{}, invalidArgf("region %s: bulk load of no files", r.name())
	}
	if r.meta {
		return BulkLoadResult{}, invalidArgf("region %s: hbase:meta takes no bulk loads", r.name())
	}
	if r.bulkLoadStuck.Load() {
		return BulkLoadResult{}, errStuck(r)
	}
	staged, err := r.checkBulkLoad(files)
	if err != nil {
		return BulkLoadResult{}, err
	}
	// Copies are made, and every file read to its end, before anything is
	// locked: a large load holds nothing while it is read.
	defer func() {
		if r.bulkLoadStuck.Load() {
			return // the record may name the copies: Open needs them
		}
		for _, sf := range staged {
			if sf.copied {
				r.removeQuietlyFS(sf.src) // committed copies were moved away
			}
		}
	}()
	for i := range staged {
		sf := &staged[i]
		if !o.CopyFiles && sameDevice(r.fs, sf.orig, r.dir) {
			sf.src = sf.orig
			continue
		}
		tmp := filepath.Join(r.dir, ".tmp", "bulkload-"+randomHex())
		sf.src, sf.copied = tmp, true
		if err := copyFile(ctx, r.fs, sf.orig, tmp); err != nil {
			return BulkLoadResult{}, errors.Wrapf(err, "region %s: copying bulk load file %s", r.name(), sf.orig)
		}
	}
	for _, sf := range staged {
		if sf.copied {
			// The copies' names must be durable before the record names
			// them (Open moves them into their stores from there).
			if err := syncDir(r.fs, filepath.Dir(sf.src)); err != nil {
				return BulkLoadResult{}, errors.Wrapf(err, "region %s: bulk load", r.name())
			}
			break
		}
	}
	for i := range staged {
		if err := r.verifyBulkLoadFile(ctx, &staged[i]); err != nil {
			return BulkLoadResult{}, err
		}
	}
	if err := ctx.Err(); err != nil {
		return BulkLoadResult{}, errors.Wrapf(err, "region %s: bulk load", r.name())
	}
	return r.commitBulkLoad(staged)
}

// errStuck refuses a bulk load after one that could not be undone.
func errStuck(r *Region) error {
	return errors.Newf("region %s: a failed bulk load could not be undone; it completes when the region opens again, and no other can run before", r.name())
}

// name is how errors name the region.
func (r *Region) name() string {
	if r.opts.EncodedName != "" {
		if r.opts.Table != "" {
			return r.opts.Table + "," + r.opts.EncodedName
		}
		return r.opts.EncodedName
	}
	return r.dir
}

// checkBulkLoad resolves the files' families and checks that each file is
// an HFile whose rows are inside the region; only then are the files read
// to their ends (verifyBulkLoadFile). As HBase's bulkLoadHFiles, any other
// error comes before the files that do not fit, and those are all named.
func (r *Region) checkBulkLoad(files []BulkLoadFile) ([]stagedFile, error) {
	set := r.storeSet()
	staged := make([]stagedFile, len(files))
	seen := map[string]bool{}
	var firstErr, firstWrong error
	var wrong []string
	for i, f := range files {
		s := set.byFamily[f.Family]
		if s == nil {
			firstErr = errors.CombineErrors(firstErr, errors.Wrapf(ErrNoSuchFamily,
				"region %s: bulk load file %s: No such column family %s", r.name(), f.Path, f.Family))
			continue
		}
		path, err := r.bulkLoadSourcePath(f.Path)
		if err == nil && seen[path] {
			err = invalidArgf("region %s: bulk load file %s is listed twice", r.name(), f.Path)
		}
		if err == nil {
			seen[path] = true
			staged[i] = stagedFile{store: s, family: f.Family, orig: path}
			err = r.checkBulkLoadRange(path)
		}
		switch {
		case errors.Is(err, ErrWrongRegion):
			wrong = append(wrong, f.Family+" : "+f.Path)
			if firstWrong == nil {
				firstWrong = err
			}
		case err != nil:
			firstErr = errors.CombineErrors(firstErr, err)
		}
	}
	if firstErr != nil {
		return nil, firstErr
	}
	if firstWrong != nil {
		if len(wrong) == 1 {
			return nil, firstWrong
		}
		return nil, errors.Wrapf(firstWrong, "these (family : file) pairs were not loaded: %s", strings.Join(wrong, ", "))
	}
	return staged, nil
}

// bulkLoadSourcePath cleans a bulk load file's path and refuses one inside
// the region's own directory (a store file of the region, say).
func (r *Region) bulkLoadSourcePath(p string) (string, error) {
	if p == "" {
		return "", invalidArgf("region %s: bulk load file with an empty path", r.name())
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", errors.Wrapf(err, "region %s: bulk load file %s", r.name(), p)
	}
	dir, err := filepath.Abs(r.dir)
	if err != nil {
		return "", errors.Wrapf(err, "region %s", r.name())
	}
	if rel, err := filepath.Rel(dir, abs); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", invalidArgf("region %s: bulk load file %s is inside the region's directory", r.name(), p)
	}
	return abs, nil
}

// openBulkLoadFile opens an HFile to check it, without a cache.
func (r *Region) openBulkLoadFile(path string) (*hfile.Reader, vfs.File, error) {
	f, err := r.fs.Open(path)
	if err != nil {
		return nil, nil, errors.Wrapf(err, "region %s: bulk load file", r.name())
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, errors.Wrapf(err, "region %s: bulk load file %s", r.name(), path)
	}
	if st.IsDir() {
		f.Close()
		return nil, nil, invalidArgf("region %s: bulk load file %s is a directory", r.name(), path)
	}
	rd, err := hfile.Open(f, st.Size(), path, hfile.ReaderOptions{Logger: r.log})
	if err != nil {
		f.Close()
		return nil, nil, errors.Wrapf(err, "region %s: bulk load file", r.name())
	}
	return rd, f, nil
}

// checkBulkLoadRange opens the HFile at path and checks that its first and
// last rows are inside the region (HBase's HStore.assertBulkLoadHFileOk).
func (r *Region) checkBulkLoadRange(path string) error {
	rd, f, err := r.openBulkLoadFile(path)
	if err != nil {
		return err
	}
	defer f.Close()
	defer rd.Close()
	first, last := rd.FirstKey(), rd.LastKey()
	if first == nil || last == nil || rd.EntryCount() == 0 {
		return invalidHFilef("region %s: bulk load file %s has no cells", r.name(), path)
	}
	if !r.containsRows(first.Row(), last.Row()) {
		return errors.Mark(errors.Newf("Bulk load file %s does not fit inside region %s (rows %s to %s, region [%s, %s))",
			path, r.name(), encoding.FormatBytes(first.Row()), encoding.FormatBytes(last.Row()),
			encoding.FormatBytes(r.opts.StartKey), encoding.FormatBytes(r.opts.EndKey)), ErrWrongRegion)
	}
	return nil
}

// containsRows reports whether the rows from first to last are inside the
// region (HBase's RegionInfo.containsRange).
func (r *Region) containsRows(first, last []byte) bool {
	if bytes.Compare(first, last) > 0 {
		return false
	}
	if len(r.opts.StartKey) > 0 && bytes.Compare(first, r.opts.StartKey) < 0 {
		return false
	}
	return len(r.opts.EndKey) == 0 || bytes.Compare(last, r.opts.EndKey) < 0
}

// verifyBulkLoadFile reads the file that will become the store file (the
// caller's, or the copy) to its end: its structure (hfile.Reader.Verify:
// every block's checksum, the index, the trailer's counts), then every
// cell: in order, of the store's family, of a real type, inside the
// region.
func (r *Region) verifyBulkLoadFile(ctx context.Context, sf *stagedFile) error {
	rd, f, err := r.openBulkLoadFile(sf.src)
	if err != nil {
		return err
	}
	defer f.Close()
	defer rd.Close()
	wrap := func(err error) error {
		return errors.Wrapf(err, "region %s: bulk load file %s", r.name(), sf.orig)
	}
	if rd.Comparer() == encoding.MetaComparer {
		return invalidHFilef("region %s: bulk load file %s is ordered as hbase:meta (%s)", r.name(), sf.orig, rd.Trailer().ComparatorClassName)
	}
	if err := rd.Verify(); err != nil {
		return wrap(err)
	}
	it := rd.NewIterator(false)
	defer it.Close()
	var prev []byte
	var kv encoding.KeyValue
	n := 0
	ok, err := it.First()
	for ; ok && err == nil; ok, err = it.Next() {
		if n++; n%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return wrap(err)
			}
		}
		key := it.Key()
		it.KeyValue(&kv)
		if string(kv.Family) != sf.family {
			return invalidHFilef("region %s: bulk load file %s: cell %s is of family %q, not %q",
				r.name(), sf.orig, key, kv.Family, sf.family)
		}
		switch kv.Type {
		case encoding.TypePut, encoding.TypeDelete, encoding.TypeDeleteColumn, encoding.TypeDeleteFamily,
			encoding.TypeDeleteFamilyVersion:
		default:
			return invalidHFilef("region %s: bulk load file %s: cell %s has type %d", r.name(), sf.orig, key, kv.Type)
		}
		if len(kv.Row) == 0 {
			return invalidHFilef("region %s: bulk load file %s: a cell has an empty row", r.name(), sf.orig)
		}
		if prev != nil && r.cmp.CompareKeys(prev, key) > 0 {
			return invalidHFilef("region %s: bulk load file %s: cells out of order: %s after %s",
				r.name(), sf.orig, key, encoding.Key(prev))
		}
		if !r.containsRows(kv.Row, kv.Row) {
			return errors.Mark(errors.Newf("Bulk load file %s does not fit inside region %s (row %s)",
				sf.orig, r.name(), encoding.FormatBytes(kv.Row)), ErrWrongRegion)
		}
		prev = append(prev[:0], key...)
	}
	if err != nil {
		return wrap(err)
	}
	return nil
}

// commitBulkLoad publishes checked files (see BulkLoadHFiles).
func (r *Region) commitBulkLoad(staged []stagedFile) (BulkLoadResult, error) {
	// No family changes, WAL rolls or Close meanwhile, and no other flush.
	r.adminMu.Lock()
	defer r.adminMu.Unlock()
	if r.closed.Load() {
		return BulkLoadResult{}, ErrClosed
	}
	if r.bulkLoadStuck.Load() {
		return BulkLoadResult{}, errStuck(r)
	}
	set := r.storeSet()
	for _, sf := range staged {
		if set.byFamily[sf.family] != sf.store {
			return BulkLoadResult{}, errors.Wrapf(ErrNoSuchFamily, "region %s: family %s was deleted during the bulk load", r.name(), sf.family)
		}
	}
	r.flushMu.Lock()
	defer r.flushMu.Unlock()
	// First flush what the memstores hold, while writes go on.
	if _, err := r.flushLocked(); err != nil {
		return BulkLoadResult{}, errors.Wrapf(err, "region %s: bulk load: flushing first", r.name())
	}
	if err := r.checkWAL(); err != nil {
		return BulkLoadResult{}, err
	}
	// Then, with no write between its WAL append and its memstore insert,
	// snapshot what came since and take the load's sequence id: every
	// write so far is below it and in the snapshots, every later one
	// above it (HBase takes the id of its flush, HBASE-10958). The entry
	// stays open until the files are published, so that no reader's read
	// point reaches it before all of them are in their stores.
	r.hot.updates.Lock()
	if r.closed.Load() {
		r.hot.updates.Unlock()
		return BulkLoadResult{}, ErrClosed
	}
	plan := r.snapshotLocked()
	e := r.mvcc.Begin()
	r.hot.updates.Unlock()
	seq := encoding.SeqNum(e.WriteNumber())
	completed := false
	defer func() {
		if !completed {
			r.mvcc.Complete(e)
		}
	}()
	// Writes after the id wait on it: nothing below may take the updates
	// lock (resetWAL does), so a broken WAL fails the load instead.
	if err := r.wal.SyncAll(); err != nil {
		r.noteWALError()
		return BulkLoadResult{}, errors.Wrapf(err, "region %s: bulk load: syncing the WAL", r.name())
	}
	// The replay of the WAL after a crash skips, per store, what its files
	// cover, and these will cover seq: everything below it must be in
	// store files before they are.
	nfiles, flushed, err := r.writeSnapshots(plan, r.now())
	if err != nil {
		return BulkLoadResult{}, errors.Wrapf(err, "region %s: bulk load", r.name())
	}
	if nfiles > 0 {
		r.noteFlushed(flushed)
	}
	r.notifyFlushed() // writes waiting for memory may go on

	rec := bulkLoadRecord{Seq: uint64(seq)}
	res := BulkLoadResult{SeqNum: seq, StoreFiles: make([]string, len(staged))}
	for i := range staged {
		sf := &staged[i]
		sf.dst = filepath.Join(sf.store.dir, bulkLoadFileName(seq))
		res.StoreFiles[i] = sf.dst
		ent := bulkLoadRecordEntry{Src: sf.src, Copy: sf.copied, Dst: r.relPath(sf.dst)}
		if sf.copied {
			ent.Src = r.relPath(sf.src)
		}
		rec.Files = append(rec.Files, ent)
	}
	recPath := filepath.Join(r.dir, bulkLoadRecordName)
	b, err := json.Marshal(&rec)
	if err != nil {
		return BulkLoadResult{}, errors.Wrap(err, "region: bulk load record")
	}
	if err := vfs.WriteFileAtomic(r.fs, recPath, b); err != nil {
		if rerr := r.removeBulkLoadRecord(); rerr != nil {
			r.bulkLoadStuck.Store(true)
			err = errors.CombineErrors(err, rerr)
		}
		return BulkLoadResult{}, errors.Wrapf(err, "region %s: writing the bulk load record", r.name())
	}

	moved := 0
	var opened []*StoreFile
	fail := func(err error) (BulkLoadResult, error) {
		for _, f := range opened {
			f.release()
		}
		var undo error
		for i := moved - 1; i >= 0; i-- {
			undo = errors.CombineErrors(undo, r.fs.Rename(staged[i].dst, staged[i].src))
		}
		if undo == nil {
			undo = r.syncBulkLoadDirs(staged)
		}
		if undo == nil {
			undo = r.removeBulkLoadRecord()
		}
		if undo != nil {
			r.bulkLoadStuck.Store(true)
			r.log.Error("region: a failed bulk load could not be undone; it completes when the region opens again",
				"region", r.dir, "err", undo)
			return BulkLoadResult{}, errors.Wrapf(errors.CombineErrors(err, undo),
				"region %s: bulk load failed and could not be undone; it completes when the region opens again", r.name())
		}
		return BulkLoadResult{}, errors.Wrapf(err, "region %s: bulk load failed; nothing was loaded", r.name())
	}
	for i := range staged {
		if err := r.fs.Rename(staged[i].src, staged[i].dst); err != nil {
			return fail(err)
		}
		moved++
	}
	if err := r.syncBulkLoadDirs(staged); err != nil {
		return fail(err)
	}
	for i := range staged {
		f, err := staged[i].store.openFile(staged[i].dst)
		if err != nil {
			return fail(err)
		}
		opened = append(opened, f)
	}
	// Every file is in its store directory for good: the record has done
	// its job. Failing to remove it only leaves Open a no-op.
	if err := r.removeBulkLoadRecord(); err != nil {
		r.log.Warn("region: removing the bulk load record", "region", r.dir, "err", err)
	}
	for i, f := range opened {
		s := staged[i].store
		s.mu.Lock()
		s.files = append(s.files, f)
		sortFiles(s.files)
		s.noteFilesLocked()
		s.mu.Unlock()
	}
	completed = true
	r.mvcc.CompleteAndWait(e)
	for i := range staged {
		staged[i].copied = false // moved into the store: nothing to remove
	}
	r.stats.bulkLoadedFiles.Add(int64(len(staged)))
	r.writeBulkLoadMarker(seq, staged)
	r.requestCompaction()
	r.log.Info("region: bulk loaded", "region", r.dir, "files", len(staged), "seq", seq)
	return res, nil
}

// relPath returns path relative to the region directory.
func (r *Region) relPath(path string) string {
	if rel, err := filepath.Rel(r.dir, path); err == nil {
		return rel
	}
	return path
}

// syncBulkLoadDirs makes the renames of a bulk load durable: a rename
// across directories is durable once both are synced.
func (r *Region) syncBulkLoadDirs(staged []stagedFile) error {
	dirs := map[string]bool{}
	for _, sf := range staged {
		dirs[filepath.Dir(sf.dst)] = true
		dirs[filepath.Dir(sf.src)] = true
	}
	for d := range dirs {
		if err := syncDir(r.fs, d); err != nil {
			return err
		}
	}
	return nil
}

func (r *Region) removeBulkLoadRecord() error {
	path := filepath.Join(r.dir, bulkLoadRecordName)
	for _, p := range []string{path + ".tmp", path} {
		if err := r.fs.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return errors.Wrap(err, "region: removing the bulk load record")
		}
	}
	return syncDir(r.fs, r.dir)
}

func (r *Region) removeQuietlyFS(path string) {
	if err := r.fs.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		r.log.Warn("region: removing a bulk load's copy", "file", path, "err", err)
	}
}

// recoverBulkLoad finishes a bulk load a crash interrupted after its
// record was written (see bulkLoadRecord): every file not yet in its store
// moves in. It runs before Open clears .tmp (where copies wait) and opens
// the stores.
func recoverBulkLoad(fs vfs.FS, dir string, log interface {
	Info(string, ...any)
	Warn(string, ...any)
}) error {
	path := filepath.Join(dir, bulkLoadRecordName)
	b, err := vfs.ReadFile(fs, path)
	if errors.Is(err, os.ErrNotExist) {
		if err := fs.Remove(path + ".tmp"); err != nil && !errors.Is(err, os.ErrNotExist) {
			return errors.Wrap(err, "region: removing a bulk load record's temporary file")
		}
		return nil
	}
	if err != nil {
		return errors.Wrapf(err, "region: reading %s", path)
	}
	var rec bulkLoadRecord
	if err := json.Unmarshal(b, &rec); err != nil {
		return errors.Mark(errors.Wrapf(err, "region: reading %s", path), ErrCorruption)
	}
	abs := func(p string) string {
		if filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(dir, p)
	}
	dirs := map[string]bool{}
	moved := 0
	for _, f := range rec.Files {
		src, dst := abs(f.Src), abs(f.Dst)
		if _, err := fs.Stat(dst); err == nil {
			continue
		} else if !errors.Is(err, os.ErrNotExist) {
			return errors.Wrapf(err, "region: finishing the bulk load of %s", path)
		}
		if _, err := fs.Stat(filepath.Dir(dst)); errors.Is(err, os.ErrNotExist) {
			// The family is gone: nothing to load it into.
			log.Warn("region: a bulk load's family is gone; its file stays where it was", "file", f.Src, "store", filepath.Dir(dst))
			continue
		}
		if err := fs.Rename(src, dst); err != nil {
			return errors.Mark(errors.Wrapf(err, "region: finishing the bulk load of %s: neither %s nor %s can be had", path, dst, src), ErrCorruption)
		}
		moved++
		dirs[filepath.Dir(src)], dirs[filepath.Dir(dst)] = true, true
	}
	for d := range dirs {
		if err := syncDir(fs, d); err != nil {
			return err
		}
	}
	if moved > 0 {
		log.Info("region: finished a bulk load a crash interrupted", "region", dir, "files", len(rec.Files), "moved", moved, "seq", rec.Seq)
	}
	if err := fs.Remove(path); err != nil {
		return errors.Wrap(err, "region: removing the bulk load record")
	}
	return syncDir(fs, dir)
}

// copyFile copies src to dst (on fs) and syncs dst.
func copyFile(ctx context.Context, fs vfs.FS, src, dst string) error {
	in, err := fs.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := fs.Create(dst)
	if err != nil {
		return err
	}
	buf := make([]byte, 1<<20)
	var off int64
	for {
		if err := ctx.Err(); err != nil {
			out.Close()
			return err
		}
		n, rerr := in.ReadAt(buf, off)
		if n > 0 {
			if _, err := out.Write(buf[:n]); err != nil {
				out.Close()
				return err
			}
			off += int64(n)
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			out.Close()
			return rerr
		}
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// WAL markers, as HBase's WALEdit: a cell of row METAROW and family
// METAFAMILY whose qualifier says what it is. Replay skips them.
var (
	walMetaRow      = []byte("METAROW")
	walMetaFamily   = []byte("METAFAMILY")
	walBulkLoadQual = []byte("HBASE::BULK_LOAD")
)

// isWALMarker reports whether kv is a marker, not data.
func isWALMarker(kv *encoding.KeyValue) bool {
	return bytes.Equal(kv.Family, walMetaFamily) && bytes.Equal(kv.Row, walMetaRow) &&
		bytes.HasPrefix(kv.Qualifier, []byte("HBASE::"))
}

// writeBulkLoadMarker logs a loaded bulk load in the WAL, as HBase's
// WALUtil.writeBulkLoadMarkerAndSync: a BULK_LOAD marker whose value is a
// BulkLoadDescriptor (WAL.proto) naming the stores and files, with its own
// sequence id (the descriptor's bulkload_seq_num is the load's). It is a
// record for `regionsrv wal` and tools; recovery does not need it, so a
// failure to write it is logged, not returned.
func (r *Region) writeBulkLoadMarker(seq encoding.SeqNum, staged []stagedFile) {
	var desc []byte
	ns, qual := "default", r.opts.Table
	if i := strings.IndexByte(qual, ':'); i >= 0 {
		ns, qual = qual[:i], qual[i+1:]
	}
	var tn []byte
	tn = protowire.AppendTag(tn, 1, protowire.BytesType)
	tn = protowire.AppendString(tn, ns)
	tn = protowire.AppendTag(tn, 2, protowire.BytesType)
	tn = protowire.AppendString(tn, qual)
	desc = protowire.AppendTag(desc, 1, protowire.BytesType)
	desc = protowire.AppendBytes(desc, tn)
	desc = protowire.AppendTag(desc, 2, protowire.BytesType)
	desc = protowire.AppendString(desc, r.opts.EncodedName)
	byFamily := map[string][]stagedFile{}
	var order []string
	for _, sf := range staged {
		if _, ok := byFamily[sf.family]; !ok {
			order = append(order, sf.family)
		}
		byFamily[sf.family] = append(byFamily[sf.family], sf)
	}
	for _, fam := range order {
		var sd []byte
		sd = protowire.AppendTag(sd, 1, protowire.BytesType)
		sd = protowire.AppendString(sd, fam)
		sd = protowire.AppendTag(sd, 2, protowire.BytesType)
		sd = protowire.AppendString(sd, fam)
		var size uint64
		for _, sf := range byFamily[fam] {
			sd = protowire.AppendTag(sd, 3, protowire.BytesType)
			sd = protowire.AppendString(sd, filepath.Base(sf.dst))
			if st, err := r.fs.Stat(sf.dst); err == nil {
				size += uint64(st.Size())
			}
		}
		sd = protowire.AppendTag(sd, 4, protowire.VarintType)
		sd = protowire.AppendVarint(sd, size)
		desc = protowire.AppendTag(desc, 3, protowire.BytesType)
		desc = protowire.AppendBytes(desc, sd)
	}
	desc = protowire.AppendTag(desc, 4, protowire.VarintType)
	desc = protowire.AppendVarint(desc, uint64(seq))

	now := r.now()
	cells := []encoding.KeyValue{{Row: walMetaRow, Family: walMetaFamily, Qualifier: walBulkLoadQual,
		Timestamp: now, Type: encoding.TypePut, Value: desc}}
	r.hot.updates.RLock()
	defer r.hot.updates.RUnlock()
	if r.closed.Load() || r.walBroken.Load() {
		return
	}
	var txid uint64
	var err error
	e := r.mvcc.BeginWith(func(n uint64) {
		key := wal.Key{EncodedRegionName: r.encodedKey, TableName: r.tableKey, SeqNum: n, WriteTime: now}
		txid, err = r.wal.Append(&key, &wal.Edit{Cells: cells})
	})
	if err == nil {
		err = r.wal.Sync(txid, wal.FSyncWAL)
	}
	r.mvcc.Complete(e)
	if err != nil {
		r.noteWALError()
		r.log.Warn("region: writing the bulk load marker to the WAL", "region", r.dir, "seq", seq, "err", err)
	}
}
