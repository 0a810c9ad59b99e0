package region

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/encoding"
	"github.com/regionkv/regionkv/hfile"
	"github.com/regionkv/regionkv/internal/vfs"
	"google.golang.org/protobuf/encoding/protowire"
)

// Reference files are how a region made by a split or a merge reads its
// parent's data without copying it, as HBase's Reference files and
// HalfStoreFileReader do. A reference in a store directory is named
//
//	<file>.<parent>
//
// where parent is the directory name (the encoded region name) of the
// parent region, a sibling of the region's own directory, and file a store
// file of the parent's store of the same family. Its content is HBase's:
// the PB magic and an FSProtos.Reference,
//
//	message Reference { required bytes splitkey = 1; required Range range = 2; }
//	enum Range { TOP = 0; BOTTOM = 1; }
//
// where splitkey is the first-on-row key of the split row: the reference
// shows the rows at or after it (TOP) or before it (BOTTOM). A store reads
// a reference as the parent's file bounded to those rows (its blooms are
// still right as may-contain answers), and a compaction of the store
// rewrites the referenced cells into a file of its own and removes the
// references; a store with references is always compacted whole (HBase's
// compaction policy does the same), and cannot be split again before that.
// The parent's files are removed only once no region references them
// (HBase's CatalogJanitor; the server's janitor).

// Reference field numbers and ranges (FSProtos.Reference).
const (
	refFieldSplitKey = 1
	refFieldRange    = 2
	refRangeTop      = 0
	refRangeBottom   = 1
)

// fileRef is what a reference file says: the parent's file it reads, and
// the rows of it the reference shows, [lo, hi) with nil an open side.
type fileRef struct {
	parent string // path of the parent's store file
	lo, hi []byte
}

// contains reports whether row is in the reference's half.
func (r *fileRef) contains(row []byte) bool {
	return (r.lo == nil || bytes.Compare(row, r.lo) >= 0) && (r.hi == nil || bytes.Compare(row, r.hi) < 0)
}

// encodeReference returns a reference file's content.
func encodeReference(splitRow []byte, top bool) []byte {
	b := []byte(encoding.PBMagic)
	b = protowire.AppendTag(b, refFieldSplitKey, protowire.BytesType)
	b = protowire.AppendBytes(b, encoding.FirstOnRow(nil, splitRow))
	rng := uint64(refRangeBottom)
	if top {
		rng = refRangeTop
	}
	b = protowire.AppendTag(b, refFieldRange, protowire.VarintType)
	return protowire.AppendVarint(b, rng)
}

// decodeReference parses a reference file's content into the split row and
// the half it shows.
func decodeReference(b []byte) (splitRow []byte, top bool, err error) {
	if !bytes.HasPrefix(b, []byte(encoding.PBMagic)) {
		return nil, false, errors.New("no PB magic (HBase's pre-0.96 Writable references are not read)")
	}
	b = b[len(encoding.PBMagic):]
	var key []byte
	haveKey, haveRange := false, false
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil, false, errors.New("malformed field tag")
		}
		b = b[n:]
		switch {
		case num == refFieldSplitKey && typ == protowire.BytesType:
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return nil, false, errors.New("malformed splitkey")
			}
			key, haveKey, b = v, true, b[n:]
		case num == refFieldRange && typ == protowire.VarintType:
			v, n := protowire.ConsumeVarint(b)
			if n < 0 || v > refRangeBottom {
				return nil, false, errors.New("malformed range")
			}
			top, haveRange, b = v == refRangeTop, true, b[n:]
		default:
			n := protowire.ConsumeFieldValue(num, typ, b)
			if n < 0 {
				return nil, false, errors.Newf("malformed field %d", num)
			}
			b = b[n:]
		}
	}
	if !haveKey || !haveRange {
		return nil, false, errors.New("splitkey or range missing")
	}
	k, err := encoding.ParseKey(key)
	if err != nil {
		return nil, false, errors.Wrap(err, "splitkey")
	}
	return append([]byte{}, k.Row()...), top, nil
}

// referenceName is the name of a reference to the parent's store file.
func referenceName(file, parent string) string { return file + "." + parent }

// parseReferenceName splits a reference file's name into the parent's
// store file and the parent's directory name. A store file's own name is
// never a reference's.
func parseReferenceName(name string) (file, parent string, ok bool) {
	i := strings.LastIndexByte(name, '.')
	if i <= 0 || IsStoreFileName(name) {
		return "", "", false
	}
	file, parent = name[:i], name[i+1:]
	if !IsStoreFileName(file) || !isEncodedRegionName(parent) {
		return "", "", false
	}
	return file, parent, true
}

// isEncodedRegionName reports whether s can be a region's directory name:
// HBase's encoded names are lowercase hex (MD5), hbase:meta's decimal.
func isEncodedRegionName(s string) bool { return isHex(s) }

// openReference opens the reference file path of store s: the parent's
// store file, bounded to the reference's half.
func (s *Store) openReference(path, file, parent string) (*StoreFile, error) {
	b, err := vfs.ReadFile(s.fs, path)
	if err != nil {
		return nil, errors.Wrapf(err, "region: store %s: reading reference %s", s.name, path)
	}
	splitRow, top, err := decodeReference(b)
	if err != nil {
		return nil, errors.Mark(errors.Wrapf(err, "region: store %s: reference %s", s.name, path), ErrCorruption)
	}
	regionDir := filepath.Dir(s.dir)
	parentPath := filepath.Join(filepath.Dir(regionDir), parent, filepath.Base(s.dir), file)
	sf, err := s.openFile(parentPath)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			err = errors.Mark(err, ErrCorruption)
		}
		return nil, errors.Wrapf(err, "region: store %s: the file reference %s reads", s.name, path)
	}
	sf.Path = path
	sf.ref = &fileRef{parent: parentPath}
	if top {
		sf.ref.lo = splitRow
	} else {
		sf.ref.hi = splitRow
	}
	return sf, nil
}

// hasReferences reports whether a file of the store is a reference.
func (s *Store) hasReferences() bool {
	s.mu.RLock(0)
	defer s.mu.RUnlock(0)
	for _, f := range s.files {
		if f.ref != nil {
			return true
		}
	}
	return false
}

// HasReferences reports whether a store of the region reads reference
// files (the region was made by a split or a merge and has not been
// compacted since): such a region is not split or merged again
// (HBase's isSplittable and isMergeable).
func (r *Region) HasReferences() bool {
	for _, s := range r.storeSet().stores {
		if s.hasReferences() {
			return true
		}
	}
	return false
}

// CompactReferences compacts every store that reads reference files, which
// rewrites the referenced cells into files of the store's own and removes
// the references (the background compactor does the same on its own). It
// returns once no store of the region reads a parent's files. Snapshots and
// checkpoints, which hard-link store files, need that first.
func (r *Region) CompactReferences() error {
	if r.closed.Load() {
		return ErrClosed
	}
	for _, s := range r.storeSet().stores {
		if !s.hasReferences() {
			continue
		}
		if _, _, err := r.compactStore(s, true); err != nil {
			return err
		}
	}
	return nil
}

// HasReferenceFiles reports whether a store directory of the region
// directory dir holds a reference file (the region, open or not, still
// reads a parent's files).
func HasReferenceFiles(fs FS, dir string) (bool, error) {
	return referencesIn(fs, dir, func(string) bool { return true })
}

// IsReference reports whether f is a reference file, and if so the path of
// the parent's store file it reads.
func (f *StoreFile) IsReference() (parentFile string, ok bool) {
	if f.ref == nil {
		return "", false
	}
	return f.ref.parent, true
}

// Reference describes what a region made by a split or a merge reads from
// one parent: every store file of the parent's, limited to the rows at or
// after SplitRow (Top) or before it. A merge takes each parent whole: Top
// from its start row.
type Reference struct {
	// Parent is the parent region's directory. It must be closed, and a
	// sibling of the new region's (as in HBase's table directory), since a
	// reference names its parent by directory name.
	Parent   string
	SplitRow []byte
	Top      bool
}

// CreateReferences creates a region directory dir made of references: a
// .regioninfo with the parents' families (and the first parent's table),
// and in each store a reference file for every store file of a parent that
// has rows on its side of the split row, as HBase's split and merge
// procedures write their daughters' and merged regions' directories.
// Nothing is copied, so a split or a merge costs a few small files,
// whatever the size of the data. A parent that has references itself is
// refused (HBase does not split or merge such a region).
//
// dir must not exist; the parents must be closed: they are locked while
// CreateReferences reads them. When it returns, everything it wrote is
// durable; after a failure or a crash, dir may hold part of it and should
// be removed. The result opens with Open like any region.
func CreateReferences(fs FS, dir string, refs []Reference) error {
	if fs == nil {
		fs = DefaultFS
	}
	if len(refs) == 0 {
		return invalidArgf("region: CreateReferences of %s without a parent", dir)
	}
	if _, err := fs.Stat(dir); err == nil {
		return invalidArgf("region: CreateReferences: %s exists", dir)
	}
	env := storeEnv{fs: fs, cmp: encoding.InnerStoreComparer, log: slog.New(slog.DiscardHandler),
		bloomErrorRate: hfile.DefaultBloomErrorRate}
	var desc descriptor
	have := map[string]bool{}
	type planned struct {
		family, name string
		content      []byte
	}
	var plan []planned
	for _, ref := range refs {
		if filepath.Dir(filepath.Clean(ref.Parent)) != filepath.Dir(filepath.Clean(dir)) {
			return invalidArgf("region: CreateReferences: parent %s is not a sibling of %s", ref.Parent, dir)
		}
		parentName := filepath.Base(ref.Parent)
		if !isEncodedRegionName(parentName) {
			return invalidArgf("region: CreateReferences: parent directory name %q is not an encoded region name", parentName)
		}
		lock, err := lockDir(ref.Parent)
		if err != nil {
			return errors.Wrapf(err, "region: CreateReferences: parent %s", ref.Parent)
		}
		pd, err := readDescriptorFile(fs, ref.Parent)
		if err != nil {
			lock.Close()
			return err
		}
		if desc.Table == "" {
			desc.Table = pd.Table
		}
		if pd.Meta {
			lock.Close()
			return invalidArgf("region: hbase:meta's region %s cannot be split or merged", ref.Parent)
		}
		for _, rec := range pd.Families {
			if !have[rec.Name] {
				have[rec.Name] = true
				rec.CreatedSeq = 0 // the new region's WAL starts empty
				desc.Families = append(desc.Families, rec)
			}
			s, err := openStore(env, filepath.Join(ref.Parent, rec.Name), rec.options())
			if err != nil {
				lock.Close()
				return errors.Wrapf(err, "region: CreateReferences: reading parent %s", ref.Parent)
			}
			for _, f := range s.Files() {
				if f.ref != nil {
					s.close()
					lock.Close()
					return invalidArgf("region: parent %s has reference files (it was split or merged and not compacted since)", ref.Parent)
				}
				first, last := f.Reader.FirstKey(), f.Reader.LastKey()
				if first == nil || last == nil {
					continue // no cells
				}
				if ref.Top && bytes.Compare(last.Row(), ref.SplitRow) < 0 || !ref.Top && bytes.Compare(first.Row(), ref.SplitRow) >= 0 {
					continue // no rows on this side
				}
				plan = append(plan, planned{family: rec.Name, name: referenceName(filepath.Base(f.Path), parentName),
					content: encodeReference(ref.SplitRow, ref.Top)})
			}
			s.close()
		}
		lock.Close()
	}
	if err := vfs.MkdirAllSync(fs, dir, 0o755); err != nil {
		return errors.Wrapf(err, "region: creating %s", dir)
	}
	for _, rec := range desc.Families {
		fdir := filepath.Join(dir, rec.Name)
		if err := vfs.MkdirAllSync(fs, fdir, 0o755); err != nil {
			return errors.Wrapf(err, "region: creating %s", fdir)
		}
		for _, p := range plan {
			if p.family != rec.Name {
				continue
			}
			if err := writeSynced(fs, filepath.Join(fdir, p.name), p.content); err != nil {
				return err
			}
		}
		if err := syncDir(fs, fdir); err != nil {
			return err
		}
	}
	return writeDescriptorFile(fs, dir, &desc)
}

// writeSynced writes a new file and fsyncs it (its directory is the
// caller's to sync).
func writeSynced(fs FS, path string, b []byte) error {
	f, err := fs.Create(path)
	if err != nil {
		return errors.Wrapf(err, "region: creating %s", path)
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return errors.Wrapf(err, "region: writing %s", path)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return errors.Wrapf(err, "region: syncing %s", path)
	}
	return errors.Wrapf(f.Close(), "region: closing %s", path)
}

// readDescriptorFile reads a region directory's .regioninfo.
func readDescriptorFile(fs FS, dir string) (*descriptor, error) {
	path := filepath.Join(dir, descriptorFile)
	b, err := vfs.ReadFile(fs, path)
	if err != nil {
		return nil, errors.Wrapf(err, "region: reading %s", path)
	}
	d := &descriptor{}
	if err := json.Unmarshal(b, d); err != nil {
		return nil, errors.Mark(errors.Wrapf(err, "region: reading %s", path), ErrCorruption)
	}
	return d, nil
}

// ReferencesTo reports whether the region directory dir has reference files
// naming parent (a region directory name) in any of its stores: the
// parent's files must stay while it does. It reads the directory, so it
// works for a closed region as for an open one. A missing dir has none.
func ReferencesTo(fs FS, dir, parent string) (bool, error) {
	return referencesIn(fs, dir, func(p string) bool { return p == parent })
}

// referencesIn reports whether a store directory of dir holds a reference
// file to a parent that match accepts.
func referencesIn(fs FS, dir string, match func(parent string) bool) (bool, error) {
	if fs == nil {
		fs = DefaultFS
	}
	names, err := fs.List(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return false, nil
		}
		return false, errors.Wrapf(err, "region: listing %s", dir)
	}
	for _, fam := range names {
		if strings.HasPrefix(fam, ".") || fam == "wal" {
			continue
		}
		st, err := fs.Stat(filepath.Join(dir, fam))
		if err != nil || !st.IsDir() {
			continue
		}
		files, err := fs.List(filepath.Join(dir, fam))
		if err != nil {
			return false, errors.Wrapf(err, "region: listing %s", filepath.Join(dir, fam))
		}
		for _, f := range files {
			if _, p, ok := parseReferenceName(f); ok && match(p) {
				return true, nil
			}
		}
	}
	return false, nil
}
