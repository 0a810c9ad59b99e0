package region

import (
	"bytes"
	"os"
	"path/filepath"
	"sort"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/encoding"
	"github.com/regionkv/regionkv/hfile"
	"github.com/regionkv/regionkv/internal/vfs"
	"google.golang.org/protobuf/encoding/protowire"
)

// FamilyFiles are the store files of one family, as LinkStoreFiles linked
// them.
type FamilyFiles struct {
	Family string
	Files  []LinkedFile // sorted by name
}

// LinkedFile is one store file: its name in the family's directory (the
// same in the store and where it was linked) and its size in bytes.
type LinkedFile struct {
	Name string
	Size int64
}

// IsStoreFileName reports whether name, an entry of a family's directory,
// is a published store file's. Anything else there (a crash's leftovers)
// is not read. Code that lists store directories (snapshots, tools) goes
// through it rather than assuming a naming scheme.
func IsStoreFileName(name string) bool {
	_, ok := parseStoreFileName(name)
	return ok
}

// LinkStoreFiles hard-links every store file of the region into
// dir/<family>/, under the file's own name, and returns what it linked.
// dir and the family directories are made if missing; the links are
// durable when it returns (each family directory and dir are synced).
// With flush, the memstores are flushed first, so that every write
// acknowledged before the call is in the files; without, writes still
// only in the memstores (and the WAL) are not.
//
// The files of all families are taken at one point of the region's
// history: no flush publishes a file while they are linked, so a Batch
// or a row written across families is in the links whole or not at all.
// A compaction may run meanwhile; a family's files are linked all before
// or all after its swap, which changes how the data is stored, not what
// reads return. Store files are never changed once published, so the
// links stay what they were when taken, whatever the region does next: a
// compaction removes its inputs' names in the store, not the links. This
// is how snapshots keep a table's files (HBase keeps them with HFileLinks
// and an archive instead). A region that reads reference files (made by a
// split or a merge and not compacted since) compacts them away first
// (CompactReferences); any other store file that is not a plain one
// (IsStoreFileName) is refused rather than linked.
func (r *Region) LinkStoreFiles(dir string, flush bool) ([]FamilyFiles, error) {
	r.adminMu.Lock()
	defer r.adminMu.Unlock()
	if r.closed.Load() {
		return nil, ErrClosed
	}
	r.flushMu.Lock()
	defer r.flushMu.Unlock()
	if flush {
		if _, err := r.flushLocked(); err != nil {
			return nil, err
		}
	}
	// A reference would not read the same where it is linked: a region
	// made by a split or merge compacts its references away first.
	if err := r.CompactReferences(); err != nil {
		return nil, err
	}
	return r.linkFilesLocked(dir)
}

// linkFilesLocked is LinkStoreFiles after the flush.
//
// REQUIRES: r.adminMu and r.flushMu are held.
func (r *Region) linkFilesLocked(dir string) ([]FamilyFiles, error) {
	if err := vfs.MkdirAllSync(r.fs, dir, 0o755); err != nil {
		return nil, errors.Wrapf(err, "region %s: linking store files into %s", r.dir, dir)
	}
	var out []FamilyFiles
	for _, s := range r.storeSet().stores {
		ff, err := s.linkFiles(filepath.Join(dir, s.name))
		if err != nil {
			return nil, errors.Wrapf(err, "region %s", r.dir)
		}
		out = append(out, ff)
	}
	if err := syncDir(r.fs, dir); err != nil {
		return nil, err
	}
	return out, nil
}

// linkFiles links the store's current files into dst and syncs dst.
func (s *Store) linkFiles(dst string) (FamilyFiles, error) {
	ff := FamilyFiles{Family: s.name}
	if err := vfs.MkdirAllSync(s.fs, dst, 0o755); err != nil {
		return ff, errors.Wrapf(err, "linking the files of %s", s.name)
	}
	// A file in s.files is on disk until it leaves s.files (a compaction
	// removes its inputs only after the swap), so none goes away while
	// the read lock is held.
	s.mu.RLock(0)
	for _, f := range s.files {
		name := filepath.Base(f.Path)
		if !IsStoreFileName(name) {
			// A file that reads another's (a split's reference) would
			// not read the same where it is linked: refuse rather than
			// keep a copy that is not the region's data.
			s.mu.RUnlock(0)
			return ff, errors.Newf("store file %s of %s is not a plain store file; it cannot be linked", name, s.name)
		}
		if err := s.fs.Link(f.Path, filepath.Join(dst, name)); err != nil {
			s.mu.RUnlock(0)
			return ff, errors.Wrapf(err, "linking store file %s of %s", name, s.name)
		}
		ff.Files = append(ff.Files, LinkedFile{Name: name, Size: f.Size()})
	}
	s.mu.RUnlock(0)
	sort.Slice(ff.Files, func(i, j int) bool { return ff.Files[i].Name < ff.Files[j].Name })
	return ff, syncDir(s.fs, dst)
}

// Checkpoint writes a consistent copy of the region to dir, which must not
// exist, as Pebble's Checkpoint does: the memstores are flushed, and the
// store files hard-linked (LinkStoreFiles) into dir with the region's
// .regioninfo. The copy holds every write acknowledged before the call
// (and maybe some made during it, each whole), and opens with Open(dir,
// Options{}) as a region of its own: writes to either never reach the
// other, and the linked files cost no space until the region compacts its
// own names of them away. dir must be on the region's filesystem (hard
// links do not cross filesystems).
//
// The copy is built in a sibling directory and renamed into place, with
// every directory synced, so after a crash dir either holds the whole
// checkpoint or does not exist (a leftover "<dir>.checkpoint-tmp" may be
// removed).
func (r *Region) Checkpoint(dir string) error {
	dir = filepath.Clean(dir)
	if _, err := r.fs.Stat(dir); err == nil {
		return invalidArgf("region: checkpoint directory %s exists", dir)
	} else if !errors.Is(err, os.ErrNotExist) {
		return errors.Wrapf(err, "region %s: checkpoint", r.dir)
	}
	tmp := dir + ".checkpoint-tmp"
	if err := vfs.RemoveAll(r.fs, tmp); err != nil {
		return errors.Wrapf(err, "region %s: checkpoint: clearing %s", r.dir, tmp)
	}
	err := r.checkpointInto(tmp)
	if err == nil {
		if err = r.fs.Rename(tmp, dir); err == nil {
			err = syncDir(r.fs, filepath.Dir(dir))
		}
	}
	if err != nil {
		r.removeDirQuietly(tmp)
		return errors.Wrapf(err, "region %s: checkpoint to %s", r.dir, dir)
	}
	r.log.Info("region: checkpoint written", "region", r.dir, "checkpoint", dir)
	return nil
}

func (r *Region) checkpointInto(tmp string) error {
	r.adminMu.Lock()
	defer r.adminMu.Unlock()
	if r.closed.Load() {
		return ErrClosed
	}
	r.flushMu.Lock()
	defer r.flushMu.Unlock()
	if _, err := r.flushLocked(); err != nil {
		return err
	}
	if err := r.CompactReferences(); err != nil {
		return err
	}
	if _, err := r.linkFilesLocked(tmp); err != nil {
		return err
	}
	// The families as they are now (adminMu keeps them), so the copy
	// opens without options.
	return r.writeDescriptorIn(tmp, r.storeSet())
}

// LinkClosedStoreFiles is LinkStoreFiles for a region that is not open:
// it links the store files Open would load from regionDir for the given
// families (without the inputs of a compaction whose output was published
// before a crash) into dir/<family>/, and syncs them. A family without a
// directory has no files; an entry that is not a plain store file is an
// error. Nothing in regionDir changes; the caller keeps the region closed
// meanwhile.
func LinkClosedStoreFiles(fs FS, regionDir, dir string, families []string) ([]FamilyFiles, error) {
	if err := vfs.MkdirAllSync(fs, dir, 0o755); err != nil {
		return nil, errors.Wrapf(err, "region %s: linking store files into %s", regionDir, dir)
	}
	var out []FamilyFiles
	for _, fam := range families {
		if err := (FamilyOptions{Name: fam}).withDefaults().validate(); err != nil {
			return nil, err
		}
		ff, err := linkClosedFamily(fs, filepath.Join(regionDir, fam), filepath.Join(dir, fam), fam)
		if err != nil {
			return nil, errors.Wrapf(err, "region %s", regionDir)
		}
		out = append(out, ff)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Family < out[j].Family })
	if err := syncDir(fs, dir); err != nil {
		return nil, err
	}
	return out, nil
}

func linkClosedFamily(fs FS, src, dst, family string) (FamilyFiles, error) {
	ff := FamilyFiles{Family: family}
	if err := vfs.MkdirAllSync(fs, dst, 0o755); err != nil {
		return ff, err
	}
	names, err := fs.List(src)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return ff, errors.Wrapf(err, "listing family %s", family)
	}
	type entry struct {
		name string
		size int64
	}
	var files []entry
	replaced := map[string]bool{}
	for _, name := range names {
		if !IsStoreFileName(name) {
			// Flushes and compactions write elsewhere and rename their
			// files in: anything else here is data this cannot keep.
			return ff, errors.Newf("family %s holds %s, which is not a plain store file; it cannot be linked", family, name)
		}
		size, inputs, err := compactionInputs(fs, filepath.Join(src, name))
		if err != nil {
			return ff, err
		}
		if bulkSeq, _ := parseStoreFileName(name); bulkSeq > 0 {
			// A bulk-loaded file's compaction, if any, was another
			// store's (as removeCompactedInputs judges it).
			inputs = nil
		}
		for _, in := range inputs {
			if in != name {
				replaced[in] = true
			}
		}
		files = append(files, entry{name, size})
	}
	for _, f := range files {
		if replaced[f.name] {
			continue
		}
		if err := fs.Link(filepath.Join(src, f.name), filepath.Join(dst, f.name)); err != nil {
			return ff, errors.Wrapf(err, "linking store file %s of %s", f.name, family)
		}
		ff.Files = append(ff.Files, LinkedFile{Name: f.name, Size: f.size})
	}
	return ff, syncDir(fs, dst)
}

// compactionInputs opens a store file for its size and the names of the
// files the compaction that wrote it replaced (none for a flush's).
func compactionInputs(fs FS, path string) (int64, []string, error) {
	f, err := fs.Open(path)
	if err != nil {
		return 0, nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, nil, errors.Wrapf(err, "%s", path)
	}
	rd, err := hfile.Open(f, st.Size(), path, hfile.ReaderOptions{})
	if err != nil {
		return 0, nil, err
	}
	defer rd.Close()
	names, err := parseCompactionEvent(rd.FileInfo()[fileInfoCompactionEvent], path)
	return st.Size(), names, err
}

// parseCompactionEvent decodes a COMPACTION_EVENT_KEY value (see
// fileInfoCompactionEvent): the names of the compacted files.
func parseCompactionEvent(v []byte, path string) ([]string, error) {
	if !bytes.HasPrefix(v, []byte(encoding.PBMagic)) {
		return nil, nil
	}
	var out []string
	b := v[len(encoding.PBMagic):]
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil, errors.Newf("region: %s: malformed %s", path, fileInfoCompactionEvent)
		}
		b = b[n:]
		if num == 1 && typ == protowire.BytesType {
			name, n := protowire.ConsumeString(b)
			if n < 0 {
				return nil, errors.Newf("region: %s: malformed %s", path, fileInfoCompactionEvent)
			}
			b = b[n:]
			out = append(out, name)
			continue
		}
		n = protowire.ConsumeFieldValue(num, typ, b)
		if n < 0 {
			return nil, errors.Newf("region: %s: malformed %s", path, fileInfoCompactionEvent)
		}
		b = b[n:]
	}
	return out, nil
}
