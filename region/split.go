package region

import (
	"github.com/cockroachdb/errors"
)

// SplitPoint returns the row a split of the region should split at, as
// HBase's RegionSplitPolicy.getSplitPoint picks it: of the stores that have
// one, the largest store's; a store's is the mid-key row of its largest
// file (hfile.Reader.MidKey). It returns nil, and no error, when the region
// cannot be split: it is hbase:meta's, a store still reads reference files
// (a split or merge not yet compacted away), or no store has a file whose
// mid-key row is neither its first nor its last row (the data is too small
// or all in one row). The row lies strictly between the region's first and
// last rows.
func (r *Region) SplitPoint() ([]byte, error) {
	if r.closed.Load() {
		return nil, ErrClosed
	}
	if r.meta {
		return nil, nil
	}
	var best []byte
	var bestSize int64
	stores := r.storeSet().stores
	for _, s := range stores {
		if s.hasReferences() {
			return nil, nil // HStore.getSplitPoint: not with references
		}
	}
	for _, s := range stores {
		files := s.Files()
		var size int64
		var largest *StoreFile
		for _, f := range files {
			size += f.Size()
			if largest == nil || f.Size() > largest.Size() {
				largest = f
			}
		}
		if largest == nil || size <= bestSize {
			continue
		}
		row, err := fileSplitRow(s, largest)
		if err != nil {
			return nil, errors.Wrapf(err, "region %s: split point of %s", r.dir, s.name)
		}
		if row != nil {
			best, bestSize = row, size
		}
	}
	return best, nil
}

// fileSplitRow returns f's mid-key row, or nil if it is f's first or last
// row (HBase's StoreUtils.getFileSplitPoint: such a file cannot be split).
func fileSplitRow(s *Store, f *StoreFile) ([]byte, error) {
	mk, err := f.Reader.MidKey()
	if err != nil || mk == nil {
		return nil, err
	}
	first, last := f.Reader.FirstKey(), f.Reader.LastKey()
	if first == nil || last == nil {
		return nil, nil
	}
	row := mk.Row()
	if s.cmp.CompareRows(row, first.Row()) == 0 || s.cmp.CompareRows(row, last.Row()) == 0 {
		return nil, nil
	}
	return append([]byte{}, row...), nil
}

// StoreSizes returns the size of each store's files, by family (HBase's
// HStore.getSize, which the split policies compare with the region size
// limit).
func (r *Region) StoreSizes() map[string]int64 {
	out := map[string]int64{}
	for _, s := range r.storeSet().stores {
		var n int64
		for _, f := range s.Files() {
			n += f.Size()
		}
		out[s.name] = n
	}
	return out
}
