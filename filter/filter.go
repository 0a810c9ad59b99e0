package filter

import (
	"fmt"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/encoding"
)

// ReturnCode tells the scanner what to do with a cell a filter has seen:
// HBase's Filter.ReturnCode. "Row" means the row within one store: the
// region scanner still visits the row's other families.
type ReturnCode uint8

// Return codes, named after HBase's.
const (
	// FilterInclude includes the cell (INCLUDE).
	FilterInclude ReturnCode = iota
	// FilterIncludeAndNextCol includes the cell and skips the other versions
	// of its column (INCLUDE_AND_NEXT_COL).
	FilterIncludeAndNextCol
	// FilterIncludeAndSeekNextRow includes the cell and skips the rest of the
	// row (INCLUDE_AND_SEEK_NEXT_ROW).
	FilterIncludeAndSeekNextRow
	// FilterSkip skips the cell (SKIP).
	FilterSkip
	// FilterNextCol skips the rest of the cell's column (NEXT_COL).
	FilterNextCol
	// FilterNextRow skips the rest of the row (NEXT_ROW).
	FilterNextRow
	// FilterSeekNextUsingHint skips to the key the filter's NextCellHint
	// returns (SEEK_NEXT_USING_HINT).
	FilterSeekNextUsingHint
)

// String returns HBase's name for the code.
func (rc ReturnCode) String() string {
	switch rc {
	case FilterInclude:
		return "INCLUDE"
	case FilterIncludeAndNextCol:
		return "INCLUDE_AND_NEXT_COL"
	case FilterIncludeAndSeekNextRow:
		return "INCLUDE_AND_SEEK_NEXT_ROW"
	case FilterSkip:
		return "SKIP"
	case FilterNextCol:
		return "NEXT_COL"
	case FilterNextRow:
		return "NEXT_ROW"
	case FilterSeekNextUsingHint:
		return "SEEK_NEXT_USING_HINT"
	}
	return fmt.Sprintf("ReturnCode(%d)", uint8(rc))
}

// Includes reports whether rc is one of the three INCLUDE codes.
func (rc ReturnCode) Includes() bool {
	return rc == FilterInclude || rc == FilterIncludeAndNextCol || rc == FilterIncludeAndSeekNextRow
}

// Filter decides, row by row and cell by cell, what a read returns: HBase's
// org.apache.hadoop.hbase.filter.Filter. One instance serves one scan (or
// Get), whose region scanner and store scanners drive it in this order, as
// HBase's RegionScannerImpl, StoreScanner and UserScanQueryMatcher do:
//
//  1. Before each row: if FilterAllRemaining, the scan is over.
//  2. At the start of the row (the next row any store is at, in scan order):
//     if FilterAllRemaining or FilterRowKey(row) is true, skip the row in
//     every store, count it as filtered, call Reset and go to 1.
//  3. For each cell the store scanner's matcher accepts (after the MVCC read
//     point, delete markers, TTL, time range, requested columns and the
//     version check; delete markers never reach the filter): FilterCell.
//     With a filter, HBase checks versions before it against the family's
//     VERSIONS, not the read's, and afterwards counts the cells the filter
//     included against the read's limit. The matcher answers "done" instead
//     if FilterAllRemaining, and so does a store scanner that reaches the
//     first cell of its next row (the store then gives up for the rest of
//     the scan, as HBase's does). It merges the return code with its own
//     verdict as UserScanQueryMatcher.mergeFilterResponse does. An included
//     cell is replaced by TransformCell(cell) before it is copied into the
//     result. On FilterSeekNextUsingHint the store scanner reseeks to
//     NextCellHint(cell) if the hint is after the cell, and otherwise just
//     moves to the next cell; in a reversed scan it follows a hint to an
//     earlier row (to the last row at or before the hint's) or further
//     along the cell's row (rows go backwards, the cells of a row forwards).
//  4. At the end of the row, with all its families' cells collected: if
//     HasFilterRow, cells = FilterRowCells(cells), then the row is dropped
//     if it has cells left and FilterRow is true. Without HasFilterRow the
//     row is dropped if it has cells and FilterRow is true. A row with no
//     cells is dropped without asking.
//  5. Reset, whether the row was returned or dropped; then go to 1.
//
// A reversed scan calls SetReversed(true) before the first row.
//
// The cells passed to a filter are valid only during the call: a filter
// must copy what it keeps. Filters are not safe for concurrent use.
type Filter interface {
	// Reset clears the filter's per-row state; it is called after every row.
	Reset()
	// FilterAllRemaining reports whether the scan can stop: no later row
	// can pass.
	FilterAllRemaining() bool
	// FilterRowKey reports whether the row should be skipped without looking
	// at its cells. Filters that track the current row (PrefixFilter,
	// RowFilter) learn about a new row here.
	FilterRowKey(row []byte) (bool, error)
	// FilterCell decides about one cell of the current row.
	FilterCell(kv *encoding.KeyValue) (ReturnCode, error)
	// TransformCell returns the cell to put in the result for a cell the
	// filter included. It never modifies kv; the cell it returns may alias
	// kv and the filter's own buffers, so it is valid only until the next
	// call on the filter: copy it (KeyValue.Clone) as you would kv.
	TransformCell(kv *encoding.KeyValue) *encoding.KeyValue
	// FilterRowCells may change the whole row's cells before they are
	// returned (HBase's filterRowCells); it returns the cells to keep.
	FilterRowCells(cells []*encoding.KeyValue) []*encoding.KeyValue
	// HasFilterRow reports whether the filter needs the whole row before
	// deciding (FilterRowCells or FilterRow do the work). Such a filter
	// cannot be used with scans that return partial rows.
	HasFilterRow() bool
	// FilterRow reports, at the end of a row, whether to drop it.
	FilterRow() bool
	// NextCellHint returns the key to seek to after FilterCell answered
	// FilterSeekNextUsingHint for kv, or nil for none. The caller must not
	// modify the key.
	NextCellHint(kv *encoding.KeyValue) encoding.Key
	// IsFamilyEssential reports whether the filter needs the family's cells
	// to decide about a row (for loading the other families on demand).
	IsFamilyEssential(family []byte) bool
	// SetReversed tells the filter the scan goes backwards.
	SetReversed(reversed bool)
}

// FilterBase gives a filter HBase's FilterBase defaults: no per-row state,
// every row key and row accepted, cells passed through untransformed, no
// hints, every family essential. A filter embeds it and implements
// FilterCell and whatever else it needs.
type FilterBase struct {
	reversed bool
}

// Reset does nothing.
func (*FilterBase) Reset() {}

// FilterAllRemaining returns false.
func (*FilterBase) FilterAllRemaining() bool { return false }

// FilterRowKey returns false.
func (*FilterBase) FilterRowKey([]byte) (bool, error) { return false, nil }

// TransformCell returns kv.
func (*FilterBase) TransformCell(kv *encoding.KeyValue) *encoding.KeyValue { return kv }

// FilterRowCells returns cells.
func (*FilterBase) FilterRowCells(cells []*encoding.KeyValue) []*encoding.KeyValue { return cells }

// HasFilterRow returns false.
func (*FilterBase) HasFilterRow() bool { return false }

// FilterRow returns false.
func (*FilterBase) FilterRow() bool { return false }

// NextCellHint returns nil.
func (*FilterBase) NextCellHint(*encoding.KeyValue) encoding.Key { return nil }

// IsFamilyEssential returns true.
func (*FilterBase) IsFamilyEssential([]byte) bool { return true }

// SetReversed records the scan direction.
func (b *FilterBase) SetReversed(reversed bool) { b.reversed = reversed }

// IsReversed reports whether the scan goes backwards.
func (b *FilterBase) IsReversed() bool { return b.reversed }

// ErrBadFilter marks errors caused by the filter a client asked for rather
// than by the data: a filter or comparator class we cannot build, bytes
// that do not decode as its message, or an operator the filter cannot
// apply. The server answers them with org.apache.hadoop.hbase.DoNotRetryIOException,
// as HBase does. Test with errors.Is.
var ErrBadFilter = errors.New("filter: bad filter")

func badFilterf(format string, args ...interface{}) error {
	return errors.Mark(errors.Newf(format, args...), ErrBadFilter)
}

// CompareOp is the operator of a comparison filter and of a
// CheckAndMutate condition: HBase's CompareFilter.CompareOp /
// CompareOperator. The values are those of HBase's CompareType protobuf
// enum (hbasepb.CompareType) and are part of the wire format.
type CompareOp int32

// Compare operators.
const (
	CompareLess           CompareOp = 0
	CompareLessOrEqual    CompareOp = 1
	CompareEqual          CompareOp = 2
	CompareNotEqual       CompareOp = 3
	CompareGreaterOrEqual CompareOp = 4
	CompareGreater        CompareOp = 5
	CompareNoOp           CompareOp = 6
)

// String returns HBase's name for the operator.
func (op CompareOp) String() string {
	switch op {
	case CompareLess:
		return "LESS"
	case CompareLessOrEqual:
		return "LESS_OR_EQUAL"
	case CompareEqual:
		return "EQUAL"
	case CompareNotEqual:
		return "NOT_EQUAL"
	case CompareGreaterOrEqual:
		return "GREATER_OR_EQUAL"
	case CompareGreater:
		return "GREATER"
	case CompareNoOp:
		return "NO_OP"
	}
	return fmt.Sprintf("CompareOp(%d)", int32(op))
}

func (op CompareOp) valid() bool { return op >= CompareLess && op <= CompareNoOp }

// FilterOut is HBase's CompareFilter.compare: given compareResult =
// comparator.CompareTo(cellBytes), it reports whether the cell fails
// "cellBytes op operand" and so is filtered out.
//
// The comparator compares its operand with the cell, not the cell with the
// operand: a positive result means the cell's bytes are smaller. So LESS
// keeps cells smaller than the operand (it filters out results <= 0), and
// GREATER keeps larger ones (it filters out results >= 0). NO_OP, and any
// value that is not an operator, filters out everything, as HBase's
// CompareFilter does.
func (op CompareOp) FilterOut(compareResult int) bool {
	switch op {
	case CompareLess:
		return compareResult <= 0
	case CompareLessOrEqual:
		return compareResult < 0
	case CompareEqual:
		return compareResult != 0
	case CompareNotEqual:
		return compareResult == 0
	case CompareGreaterOrEqual:
		return compareResult > 0
	case CompareGreater:
		return compareResult >= 0
	}
	return true
}

// emptyBytes stands in for a nil cell part: HBase never hands a comparator
// a null array for a cell's row, family, qualifier or value.
var emptyBytes = []byte{}

func nonNil(b []byte) []byte {
	if b == nil {
		return emptyBytes
	}
	return b
}
