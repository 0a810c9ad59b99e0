package region

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/encoding"
	"github.com/regionkv/regionkv/internal/vfs"
)

// ErrFamilyExists is returned by AddFamily for a family the region has
// (HBase's InvalidFamilyOperationException).
var ErrFamilyExists = errors.New("region: column family exists")

// storeSet is the region's families: one Store per family. It is never
// modified; AddFamily and DeleteFamily publish a new one (copy on write)
// while holding the updates lock exclusively, so that a mutation, which
// holds it shared from its family checks to its memstore insert, sees one
// set throughout, and a read, which loads it once, one consistent set.
type storeSet struct {
	stores   []*Store // sorted by family name
	byFamily map[string]*Store
}

func newStoreSet(stores []*Store) *storeSet {
	sort.Slice(stores, func(i, j int) bool { return stores[i].name < stores[j].name })
	set := &storeSet{stores: stores, byFamily: make(map[string]*Store, len(stores))}
	for _, s := range stores {
		set.byFamily[s.name] = s
	}
	return set
}

// with returns a copy of set with s added.
func (set *storeSet) with(s *Store) *storeSet {
	return newStoreSet(append(append([]*Store(nil), set.stores...), s))
}

// without returns a copy of set without the family name.
func (set *storeSet) without(name string) *storeSet {
	var stores []*Store
	for _, s := range set.stores {
		if s.name != name {
			stores = append(stores, s)
		}
	}
	return newStoreSet(stores)
}

// storeSet returns the region's current families.
func (r *Region) storeSet() *storeSet { return r.set.Load() }

// AddFamily adds a column family to the open region, empty and writable at
// once, and records it in .regioninfo before it returns. A directory left
// by an earlier family of the same name (a DeleteFamily that crashed before
// removing it) is removed first, and what the WAL still holds of that
// family is never replayed into the new one: a family added again starts
// empty.
//
// HBase changes a family by rewriting the table descriptor and reopening
// every region; a Region changes in place. AddFamily, DeleteFamily and
// ModifyFamily are safe to call while reads, writes, flushes and
// compactions go on; they are serialized with each other and with Close.
func (r *Region) AddFamily(f FamilyOptions) error {
	f = f.withDefaults()
	if err := f.validate(); err != nil {
		return err
	}
	r.adminMu.Lock()
	defer r.adminMu.Unlock()
	if r.closed.Load() {
		return ErrClosed
	}
	set := r.storeSet()
	if set.byFamily[f.Name] != nil {
		return errors.Wrapf(ErrFamilyExists, "family %q in region %s", f.Name, r.dir)
	}
	dir := filepath.Join(r.dir, f.Name)
	if err := r.removeFamilyDir(dir); err != nil {
		return err
	}
	s, err := openStore(r.env, dir, f)
	if err != nil {
		return err
	}
	// Every cell of an earlier family of this name has a sequence id up to
	// the write point at its deletion, hence up to this one; the new
	// family's first write comes after the swap below, above it.
	s.createdSeq = encoding.SeqNum(r.mvcc.WritePoint())
	next := set.with(s)
	// .regioninfo first: a write acknowledged in the new family must find
	// it there after a crash, or replay would drop the write.
	if err := r.writeDescriptor(next); err != nil {
		s.close()
		r.removeDirQuietly(dir)
		return err
	}
	r.hot.updates.Lock()
	r.set.Store(next)
	r.hot.updates.Unlock()
	r.log.Info("region: added family", "region", r.dir, "family", f.Name)
	return nil
}

// DeleteFamily removes a column family and its data: new reads and writes
// of it fail with ErrNoSuchFamily once it returns, its memstore is dropped,
// its directory removed, and .regioninfo no longer lists it, so a reopen
// (or a later AddFamily of the same name) does not bring any of it back.
// A Scanner opened before keeps reading what it saw. The last family of a
// region cannot be deleted. DeleteFamily waits for a flush or a
// compaction of the family in progress.
func (r *Region) DeleteFamily(name string) error {
	r.adminMu.Lock()
	defer r.adminMu.Unlock()
	if r.closed.Load() {
		return ErrClosed
	}
	set := r.storeSet()
	s := set.byFamily[name]
	if s == nil {
		return errors.Wrapf(ErrNoSuchFamily, "family %q in region %s", name, r.dir)
	}
	if len(set.stores) == 1 {
		return invalidArgf("region: family %q is the only family of region %s; it cannot be deleted", name, r.dir)
	}
	// A compaction or flush of the family would publish a file into the
	// directory being removed: wait for them, and keep new ones out (a
	// compaction that still finds the store sees it dropped; a flush
	// snapshots the new set).
	s.compactMu.Lock()
	defer s.compactMu.Unlock()
	r.flushMu.Lock()
	defer r.flushMu.Unlock()
	next := set.without(name)
	// .regioninfo first: once it no longer lists the family, a crash at
	// any later point leaves the family deleted (replay skips its WAL
	// entries; a directory left behind is removed if the family comes
	// back).
	if err := r.writeDescriptor(next); err != nil {
		return err
	}
	r.hot.updates.Lock()
	r.set.Store(next)
	r.hot.updates.Unlock()
	s.dropped.Store(true)
	// No write reaches the store now and no flush runs: its memstore,
	// with any snapshot a failed flush left, is all it holds in memory.
	r.addMemSize(s.mem.Size().Neg())
	s.close()
	if err := vfs.RemoveAll(r.fs, s.dir); err != nil {
		// The family is gone all the same; its files are unreachable and
		// removed if it is added again.
		r.log.Warn("region: removing a deleted family's directory", "region", r.dir, "family", name, "err", err)
	} else if err := syncDir(r.fs, r.dir); err != nil {
		r.log.Warn("region: removing a deleted family's directory", "region", r.dir, "family", name, "err", err)
	}
	r.log.Info("region: deleted family", "region", r.dir, "family", name)
	return nil
}

// ModifyFamily replaces the options of an existing family (f.Name). As in
// HBase, VERSIONS, MIN_VERSIONS and TTL apply to every read from then on
// (and to what flushes and compactions keep); BLOCKSIZE,
// DATA_BLOCK_ENCODING, COMPRESSION, BLOOMFILTER and IN_MEMORY to the store
// files written from then on (existing files keep theirs until a
// compaction rewrites them). A read, flush or compaction in progress
// finishes with the options it started with.
func (r *Region) ModifyFamily(f FamilyOptions) error {
	f = f.withDefaults()
	if err := f.validate(); err != nil {
		return err
	}
	r.adminMu.Lock()
	defer r.adminMu.Unlock()
	if r.closed.Load() {
		return ErrClosed
	}
	set := r.storeSet()
	s := set.byFamily[f.Name]
	if s == nil {
		return errors.Wrapf(ErrNoSuchFamily, "family %q in region %s", f.Name, r.dir)
	}
	if err := r.writeDescriptorWith(set, &f); err != nil {
		return err
	}
	s.opts.Store(&f)
	r.log.Info("region: modified family", "region", r.dir, "family", f.Name)
	return nil
}

// RollWAL closes the region's current WAL segment and starts a new one, as
// HBase's log roller does when asked (Admin.rollWALWriter). Segments whose
// edits are all flushed are then dropped, at the next flush.
func (r *Region) RollWAL() error {
	r.adminMu.Lock()
	defer r.adminMu.Unlock()
	if r.closed.Load() {
		return ErrClosed
	}
	return errors.Wrapf(r.rollWAL(), "region %s: rolling the WAL", r.dir)
}

// removeFamilyDir removes what an earlier family left in dir.
func (r *Region) removeFamilyDir(dir string) error {
	if _, err := r.fs.Stat(dir); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return errors.Wrapf(err, "region %s", r.dir)
	}
	r.log.Info("region: removing the files of an earlier family of the same name", "dir", dir)
	if err := vfs.RemoveAll(r.fs, dir); err != nil {
		return errors.Wrapf(err, "region %s: removing %s", r.dir, dir)
	}
	return syncDir(r.fs, r.dir)
}

func (r *Region) removeDirQuietly(dir string) {
	if err := vfs.RemoveAll(r.fs, dir); err != nil {
		r.log.Warn("region: removing a directory after a failure", "dir", dir, "err", err)
	}
}

// writeDescriptor replaces .regioninfo with set's families.
func (r *Region) writeDescriptor(set *storeSet) error { return r.writeDescriptorWith(set, nil) }

// writeDescriptorWith is writeDescriptor with override in place of the
// family of its name.
//
// REQUIRES: r.adminMu is held, or the region is not open yet.
func (r *Region) writeDescriptorWith(set *storeSet, override *FamilyOptions) error {
	return writeDescriptorFile(r.fs, r.dir, r.descriptorOf(set, override))
}

// writeDescriptorIn writes set's families as the .regioninfo of another
// directory (a checkpoint).
//
// REQUIRES: r.adminMu is held.
func (r *Region) writeDescriptorIn(dir string, set *storeSet) error {
	return writeDescriptorFile(r.fs, dir, r.descriptorOf(set, nil))
}

// descriptorOf is what .regioninfo holds for set, with override in place
// of the family of its name.
func (r *Region) descriptorOf(set *storeSet, override *FamilyOptions) *descriptor {
	desc := &descriptor{Table: r.opts.Table, Meta: r.meta}
	for _, s := range set.stores {
		o := s.options()
		if override != nil && override.Name == s.name {
			o = override
		}
		rec := recordOf(*o)
		rec.CreatedSeq = uint64(s.createdSeq)
		desc.Families = append(desc.Families, rec)
	}
	return desc
}

func writeDescriptorFile(fs vfs.FS, dir string, desc *descriptor) error {
	b, err := json.MarshalIndent(desc, "", "  ")
	if err != nil {
		return errors.Wrap(err, "region: descriptor")
	}
	if err := vfs.WriteFileAtomic(fs, filepath.Join(dir, descriptorFile), b); err != nil {
		return errors.Wrapf(err, "region %s: writing %s", dir, descriptorFile)
	}
	return nil
}
