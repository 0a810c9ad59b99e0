package filter

import (
	"bytes"

	"github.com/regionkv/regionkv/encoding"
)

// ColumnCountGetFilter returns the first limit columns of a row, the
// newest version of each: HBase's ColumnCountGetFilter. Columns are counted
// across the row's families. It is meant for Gets: once a row has more
// columns than the limit, FilterAllRemaining holds until the row ends, and
// a store scanner that meets another cell then gives up for good, as
// HBase's does (its documentation calls the filter unsuitable for scans).
type ColumnCountGetFilter struct {
	FilterBase
	limit int32
	count int32
}

// NewColumnCountGetFilter returns a filter passing limit columns per row.
// A negative limit is an error marked ErrBadFilter, as HBase's constructor
// refuses it.
func NewColumnCountGetFilter(limit int32) (*ColumnCountGetFilter, error) {
	if limit < 0 {
		return nil, badFilterf("ColumnCountGetFilter: limit %d must be positive", limit)
	}
	return &ColumnCountGetFilter{limit: limit}, nil
}

// Limit returns the number of columns passed.
func (f *ColumnCountGetFilter) Limit() int32 { return f.limit }

// FilterRowKey drops the row once the filter is done.
func (f *ColumnCountGetFilter) FilterRowKey([]byte) (bool, error) { return f.FilterAllRemaining(), nil }

// FilterAllRemaining reports whether the row has passed the limit.
func (f *ColumnCountGetFilter) FilterAllRemaining() bool { return f.count > f.limit }

// FilterCell counts the column and includes its first cell while within
// the limit.
func (f *ColumnCountGetFilter) FilterCell(*encoding.KeyValue) (ReturnCode, error) {
	f.count++
	if f.FilterAllRemaining() {
		return FilterNextCol, nil
	}
	return FilterIncludeAndNextCol, nil
}

// Reset starts a new row.
func (f *ColumnCountGetFilter) Reset() { f.count = 0 }

// ColumnPaginationFilter returns a page of each row's columns, the newest
// version of each: HBase's ColumnPaginationFilter. Columns are counted
// across the row's families. The page starts either at a column offset
// (skip that many columns) or at a column: the first column whose
// qualifier is at or after columnOffset, reached by a seek hint within
// each family until a column has been taken.
type ColumnPaginationFilter struct {
	FilterBase
	limit        int32
	offset       int32  // -1 with a column offset
	columnOffset []byte // nil with an integer offset
	count        int32
}

// NewColumnPaginationFilter returns a filter passing limit columns per row
// after skipping offset. Negative arguments are errors marked
// ErrBadFilter, as HBase's constructor refuses them.
func NewColumnPaginationFilter(limit, offset int32) (*ColumnPaginationFilter, error) {
	if limit < 0 || offset < 0 {
		return nil, badFilterf("ColumnPaginationFilter: limit %d and offset %d must be positive", limit, offset)
	}
	return &ColumnPaginationFilter{limit: limit, offset: offset}, nil
}

// NewColumnPaginationFilterAt returns a filter passing limit columns per
// row, starting at the first qualifier >= columnOffset. A negative limit
// or a nil column offset is an error marked ErrBadFilter.
func NewColumnPaginationFilterAt(limit int32, columnOffset []byte) (*ColumnPaginationFilter, error) {
	if limit < 0 {
		return nil, badFilterf("ColumnPaginationFilter: limit %d must be positive", limit)
	}
	if columnOffset == nil {
		return nil, badFilterf("ColumnPaginationFilter: the column offset must be non-null")
	}
	return &ColumnPaginationFilter{limit: limit, offset: -1, columnOffset: columnOffset}, nil
}

// Limit returns the page size in columns.
func (f *ColumnPaginationFilter) Limit() int32 { return f.limit }

// Offset returns the number of columns skipped, -1 with a column offset.
func (f *ColumnPaginationFilter) Offset() int32 { return f.offset }

// ColumnOffset returns the column the page starts at, nil with an integer
// offset.
func (f *ColumnPaginationFilter) ColumnOffset() []byte { return f.columnOffset }

// FilterCell counts columns: it skips them up to the offset, includes the
// newest cell of each on the page and ends the row after it.
func (f *ColumnPaginationFilter) FilterCell(kv *encoding.KeyValue) (ReturnCode, error) {
	if f.columnOffset != nil {
		if f.count >= f.limit {
			return FilterNextRow, nil
		}
		// Only the page's first column is looked for; after it every
		// column counts, in whatever family.
		if f.count == 0 && bytes.Compare(kv.Qualifier, f.columnOffset) < 0 {
			return FilterSeekNextUsingHint, nil
		}
		f.count++
		return FilterIncludeAndNextCol, nil
	}
	// int32 arithmetic, as HBase's int: a sum that overflows ends every row.
	if f.count >= f.offset+f.limit {
		return FilterNextRow, nil
	}
	rc := FilterIncludeAndNextCol
	if f.count < f.offset {
		rc = FilterNextCol
	}
	f.count++
	return rc, nil
}

// NextCellHint returns the first key of kv's row and family with the
// column offset as qualifier, nil without a column offset.
func (f *ColumnPaginationFilter) NextCellHint(kv *encoding.KeyValue) encoding.Key {
	if f.columnOffset == nil {
		return nil
	}
	return encoding.FirstOnRowCol(nil, kv.Row, kv.Family, f.columnOffset)
}

// Reset starts a new row.
func (f *ColumnPaginationFilter) Reset() { f.count = 0 }
