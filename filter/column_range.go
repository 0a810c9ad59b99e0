package filter

import (
	"bytes"
	"slices"
	"sort"

	"github.com/regionkv/regionkv/encoding"
)

// ColumnRangeFilter keeps the cells whose qualifier lies between two
// bounds: HBase's ColumnRangeFilter. A nil bound is open. A qualifier
// before the range answers FilterSeekNextUsingHint with the first key of
// the lower bound in the same row and family, the lower bound itself when
// it is exclusive skips its column, and a qualifier past the range ends the
// row in that store (qualifiers come in order within a family).
type ColumnRangeFilter struct {
	FilterBase
	minColumn, maxColumn       []byte
	minInclusive, maxInclusive bool
}

// NewColumnRangeFilter returns a filter keeping qualifiers between
// minColumn and maxColumn; nil bounds are open.
func NewColumnRangeFilter(minColumn []byte, minInclusive bool, maxColumn []byte, maxInclusive bool) *ColumnRangeFilter {
	return &ColumnRangeFilter{minColumn: minColumn, minInclusive: minInclusive, maxColumn: maxColumn, maxInclusive: maxInclusive}
}

// MinColumn returns the lower bound, nil if open.
func (f *ColumnRangeFilter) MinColumn() []byte { return f.minColumn }

// MinColumnInclusive reports whether the lower bound is in the range.
func (f *ColumnRangeFilter) MinColumnInclusive() bool { return f.minInclusive }

// MaxColumn returns the upper bound, nil if open.
func (f *ColumnRangeFilter) MaxColumn() []byte { return f.maxColumn }

// MaxColumnInclusive reports whether the upper bound is in the range.
func (f *ColumnRangeFilter) MaxColumnInclusive() bool { return f.maxInclusive }

// FilterCell places the qualifier against the range.
func (f *ColumnRangeFilter) FilterCell(kv *encoding.KeyValue) (ReturnCode, error) {
	cmpMin := 1
	if f.minColumn != nil {
		cmpMin = bytes.Compare(kv.Qualifier, f.minColumn)
	}
	if cmpMin < 0 {
		return FilterSeekNextUsingHint, nil
	}
	if !f.minInclusive && cmpMin == 0 {
		return FilterNextCol, nil
	}
	if f.maxColumn == nil {
		return FilterInclude, nil
	}
	cmpMax := bytes.Compare(kv.Qualifier, f.maxColumn)
	if cmpMax < 0 || (f.maxInclusive && cmpMax == 0) {
		return FilterInclude, nil
	}
	return FilterNextRow, nil
}

// NextCellHint returns the first key of kv's row and family with the lower
// bound as qualifier.
func (f *ColumnRangeFilter) NextCellHint(kv *encoding.KeyValue) encoding.Key {
	return encoding.FirstOnRowCol(nil, kv.Row, kv.Family, f.minColumn)
}

// MultipleColumnPrefixFilter keeps the cells whose qualifier starts with
// one of several prefixes: HBase's MultipleColumnPrefixFilter. No prefixes
// keep every cell.
//
// Like HBase's, it tests a qualifier only against the largest prefix that
// sorts at or before it: with prefixes "a" and "ab", qualifier "ac" is not
// kept (it sorts after "ab" without starting with it), although it starts
// with "a". A qualifier before that prefix's range seeks to the next
// prefix in the same row and family; one after the last prefix ends the
// row in that store.
type MultipleColumnPrefixFilter struct {
	FilterBase
	prefixes [][]byte // sorted, distinct
	hint     []byte   // the prefix the last FilterSeekNextUsingHint seeks to
}

// NewMultipleColumnPrefixFilter returns a filter keeping qualifiers that
// start with one of prefixes. As HBase's constructor, it refuses a prefix
// given twice (an error marked ErrBadFilter).
func NewMultipleColumnPrefixFilter(prefixes [][]byte) (*MultipleColumnPrefixFilter, error) {
	sorted := slices.Clone(prefixes)
	slices.SortFunc(sorted, bytes.Compare)
	for i := 1; i < len(sorted); i++ {
		if bytes.Equal(sorted[i-1], sorted[i]) {
			return nil, badFilterf("MultipleColumnPrefixFilter: prefixes must be distinct (%q is given twice)", sorted[i])
		}
	}
	for i, p := range sorted {
		sorted[i] = nonNil(p)
	}
	return &MultipleColumnPrefixFilter{prefixes: sorted}, nil
}

// Prefixes returns the prefixes in sorted order; the caller must not
// modify them.
func (f *MultipleColumnPrefixFilter) Prefixes() [][]byte { return f.prefixes }

// FilterCell tests the qualifier against the largest prefix at or before
// it.
func (f *MultipleColumnPrefixFilter) FilterCell(kv *encoding.KeyValue) (ReturnCode, error) {
	if len(f.prefixes) == 0 {
		return FilterInclude, nil
	}
	// n is the number of prefixes <= the qualifier.
	n := sort.Search(len(f.prefixes), func(i int) bool { return bytes.Compare(f.prefixes[i], kv.Qualifier) > 0 })
	if n == 0 {
		f.hint = f.prefixes[0]
		return FilterSeekNextUsingHint, nil
	}
	if bytes.HasPrefix(kv.Qualifier, f.prefixes[n-1]) {
		return FilterInclude, nil
	}
	if n == len(f.prefixes) {
		return FilterNextRow, nil
	}
	f.hint = f.prefixes[n]
	return FilterSeekNextUsingHint, nil
}

// NextCellHint returns the first key of kv's row and family with the
// prefix the last FilterSeekNextUsingHint chose, nil before there is one.
func (f *MultipleColumnPrefixFilter) NextCellHint(kv *encoding.KeyValue) encoding.Key {
	if f.hint == nil {
		return nil
	}
	return encoding.FirstOnRowCol(nil, kv.Row, kv.Family, f.hint)
}
