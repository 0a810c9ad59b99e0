package filter

import (
	"bytes"
	"fmt"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/encoding"
)

// FilterListOperator combines the filters of a FilterList: HBase's
// FilterList.Operator. The values are those of the wire enum.
type FilterListOperator int32

// Operators.
const (
	// MustPassAll (AND) keeps what every filter keeps.
	MustPassAll FilterListOperator = 1
	// MustPassOne (OR) keeps what any filter keeps.
	MustPassOne FilterListOperator = 2
)

// String returns HBase's name for the operator.
func (op FilterListOperator) String() string {
	switch op {
	case MustPassAll:
		return "MUST_PASS_ALL"
	case MustPassOne:
		return "MUST_PASS_ONE"
	}
	return fmt.Sprintf("FilterListOperator(%d)", int32(op))
}

// FilterList combines filters with AND (MustPassAll) or OR (MustPassOne):
// HBase's FilterList with its FilterListWithAND and FilterListWithOR. Lists
// nest. An empty list keeps everything.
//
// Return codes merge by how far each one moves the scan, from INCLUDE (no
// move) through SKIP, INCLUDE_AND_NEXT_COL, NEXT_COL,
// INCLUDE_AND_SEEK_NEXT_ROW and NEXT_ROW to SEEK_NEXT_USING_HINT:
//
//   - AND includes a cell only if every filter does and takes the longest
//     move. It stops at the first filter that does not include the cell,
//     so later filters never see it (HBASE-20565); a hint wins, and the
//     list's hint is that filter's.
//   - OR includes a cell if any filter does and takes the shortest move. A
//     hint counts as SKIP unless every filter answers with a hint; the
//     list's hint is then the nearest. A filter that asked to leave the
//     column, the row (in this family) or to seek is not asked again about
//     cells it has skipped (HBASE-17678): the list answers for it.
//
// Hints are compared with encoding.DefaultComparer, as HBase uses
// CellComparator.getInstance(), in scan order: in a reversed scan rows
// compare backwards and the cells of a row forwards (HBase compares
// everything backwards, which loses cells in MUST_PASS_ONE lists with a
// column hint).
type FilterList struct {
	FilterBase
	op      FilterListOperator
	filters []Filter

	// MustPassAll: the filter that answered FilterSeekNextUsingHint to the
	// last cell, -1 if none. Only one can: AND stops at the first filter
	// that does not include the cell.
	hintFilter int
	// MustPassOne, per filter: whether it included the last cell (for
	// TransformCell), its last answer, and the key of the cell it gave that
	// answer to when the answer skips ahead (empty otherwise).
	included []bool
	prevRC   []ReturnCode
	prevKey  [][]byte
}

// NewFilterList returns a list of filters combined with op, which must be
// MustPassAll or MustPassOne.
func NewFilterList(op FilterListOperator, filters ...Filter) *FilterList {
	if op != MustPassAll && op != MustPassOne {
		panic(errors.AssertionFailedf("filter: invalid FilterList operator %d", op))
	}
	l := &FilterList{op: op, hintFilter: -1}
	for _, f := range filters {
		l.AddFilter(f)
	}
	return l
}

// AddFilter appends f; it takes the list's scan direction.
func (l *FilterList) AddFilter(f Filter) {
	f.SetReversed(l.reversed)
	l.filters = append(l.filters, f)
	l.included = append(l.included, l.op == MustPassAll)
	l.prevRC = append(l.prevRC, 0)
	l.prevKey = append(l.prevKey, nil)
}

// Operator returns the list's operator.
func (l *FilterList) Operator() FilterListOperator { return l.op }

// Filters returns the list's filters; the caller must not modify the slice.
func (l *FilterList) Filters() []Filter { return l.filters }

// SetReversed sets the direction of the list and its filters.
func (l *FilterList) SetReversed(reversed bool) {
	l.reversed = reversed
	for _, f := range l.filters {
		f.SetReversed(reversed)
	}
}

// Reset resets every filter.
func (l *FilterList) Reset() {
	for i, f := range l.filters {
		f.Reset()
		if l.op == MustPassOne {
			l.included[i] = false
			l.prevKey[i] = l.prevKey[i][:0]
		}
	}
	l.hintFilter = -1
}

// FilterAllRemaining: AND, when any filter is done; OR, when all are.
func (l *FilterList) FilterAllRemaining() bool {
	if len(l.filters) == 0 {
		return false
	}
	for _, f := range l.filters {
		done := f.FilterAllRemaining()
		if l.op == MustPassAll && done {
			return true
		}
		if l.op == MustPassOne && !done {
			return false
		}
	}
	return l.op == MustPassOne
}

// FilterRowKey asks every filter that is not done, so that each sees the
// new row: AND drops the row if any filter does (or is done), OR only if
// all do.
func (l *FilterList) FilterRowKey(row []byte) (bool, error) {
	if len(l.filters) == 0 {
		return false, nil
	}
	drop := l.op == MustPassOne
	for _, f := range l.filters {
		if f.FilterAllRemaining() {
			if l.op == MustPassAll {
				drop = true
			}
			continue
		}
		out, err := f.FilterRowKey(row)
		if err != nil {
			return false, err
		}
		if l.op == MustPassAll && out {
			drop = true
		} else if l.op == MustPassOne && !out {
			drop = false
		}
	}
	return drop, nil
}

// FilterCell merges the filters' answers; see FilterList.
func (l *FilterList) FilterCell(kv *encoding.KeyValue) (ReturnCode, error) {
	if len(l.filters) == 0 {
		return FilterInclude, nil
	}
	if l.op == MustPassAll {
		return l.filterCellAll(kv)
	}
	return l.filterCellOne(kv)
}

func (l *FilterList) filterCellAll(kv *encoding.KeyValue) (ReturnCode, error) {
	rc := FilterInclude
	l.hintFilter = -1
	for i, f := range l.filters {
		if f.FilterAllRemaining() {
			return FilterNextRow, nil
		}
		local, err := f.FilterCell(kv)
		if err != nil {
			return 0, err
		}
		if local == FilterSeekNextUsingHint {
			l.hintFilter = i
		}
		rc = mergeReturnCodeAll(rc, local)
		if !rc.Includes() {
			// Later filters must not see a cell the list drops: it would
			// upset their counts.
			return rc, nil
		}
	}
	return rc, nil
}

func (l *FilterList) filterCellOne(kv *encoding.KeyValue) (ReturnCode, error) {
	rc, haveRC := FilterSkip, false
	for i, f := range l.filters {
		l.included[i] = false
		if f.FilterAllRemaining() {
			continue
		}
		local, known := l.answerFromPrevious(i, kv)
		if !known {
			var err error
			if local, err = f.FilterCell(kv); err != nil {
				return 0, err
			}
		}
		l.prevRC[i] = local
		if local == FilterInclude || local == FilterSkip {
			l.prevKey[i] = l.prevKey[i][:0]
		} else {
			l.prevKey[i] = kv.AppendKey(l.prevKey[i][:0])
		}
		if haveRC {
			rc = mergeReturnCodeOne(rc, local)
		} else {
			rc, haveRC = local, true
		}
		l.included[i] = local.Includes()
	}
	// With every filter done, rc is still SKIP.
	return rc, nil
}

// answerFromPrevious is HBase's calculateReturnCodeByPrevCellAndRC: when
// filter i's last answer skips past kv, answer for it without asking.
func (l *FilterList) answerFromPrevious(i int, kv *encoding.KeyValue) (ReturnCode, bool) {
	if len(l.prevKey[i]) == 0 {
		return 0, false // no answer yet this row, or INCLUDE or SKIP
	}
	prev := encoding.Key(l.prevKey[i]).KeyValue(nil)
	switch l.prevRC[i] {
	case FilterSeekNextUsingHint:
		hint := l.filters[i].NextCellHint(&prev)
		if hint != nil && l.compareKeyValueKey(kv, hint) < 0 {
			return FilterSeekNextUsingHint, true
		}
	case FilterNextCol, FilterIncludeAndNextCol:
		// Rows are the same: Reset clears this state at every row.
		if bytes.Equal(prev.Family, kv.Family) && bytes.Equal(prev.Qualifier, kv.Qualifier) {
			return FilterNextCol, true
		}
	case FilterNextRow, FilterIncludeAndSeekNextRow:
		// NEXT_ROW ends the row in one store only: a new family starts afresh.
		if bytes.Equal(prev.Family, kv.Family) {
			return FilterNextRow, true
		}
	}
	return 0, false
}

// Return codes split into whether they include the cell and how far they
// move the scan; HBase's merge tables for AND and OR follow from that
// (list_test.go checks them cell by cell).
type step uint8

const (
	stepNone step = iota // INCLUDE, SKIP
	stepCol              // INCLUDE_AND_NEXT_COL, NEXT_COL
	stepRow              // INCLUDE_AND_SEEK_NEXT_ROW, NEXT_ROW
)

func (rc ReturnCode) step() step {
	switch rc {
	case FilterIncludeAndNextCol, FilterNextCol:
		return stepCol
	case FilterIncludeAndSeekNextRow, FilterNextRow:
		return stepRow
	}
	return stepNone
}

func returnCodeOf(include bool, s step) ReturnCode {
	switch {
	case include && s == stepNone:
		return FilterInclude
	case include && s == stepCol:
		return FilterIncludeAndNextCol
	case include:
		return FilterIncludeAndSeekNextRow
	case s == stepNone:
		return FilterSkip
	case s == stepCol:
		return FilterNextCol
	}
	return FilterNextRow
}

// mergeReturnCodeAll is FilterListWithAND.mergeReturnCode: include only if
// both do, move as far as either; a hint wins.
func mergeReturnCodeAll(rc, local ReturnCode) ReturnCode {
	if rc == FilterSeekNextUsingHint || local == FilterSeekNextUsingHint {
		return FilterSeekNextUsingHint
	}
	return returnCodeOf(rc.Includes() && local.Includes(), max(rc.step(), local.step()))
}

// mergeReturnCodeOne is FilterListWithOR.mergeReturnCode: include if either
// does, move as little as either; a hint is a SKIP unless both are hints.
func mergeReturnCodeOne(rc, local ReturnCode) ReturnCode {
	if rc == FilterSeekNextUsingHint && local == FilterSeekNextUsingHint {
		return FilterSeekNextUsingHint
	}
	return returnCodeOf(rc.Includes() || local.Includes(), min(rc.step(), local.step()))
}

// TransformCell applies, in order, the transformations of the filters that
// included the cell: all of them for AND.
func (l *FilterList) TransformCell(kv *encoding.KeyValue) *encoding.KeyValue {
	for i, f := range l.filters {
		if l.included[i] {
			kv = f.TransformCell(kv)
		}
	}
	return kv
}

// FilterRowCells passes the row through every filter in turn.
func (l *FilterList) FilterRowCells(cells []*encoding.KeyValue) []*encoding.KeyValue {
	for _, f := range l.filters {
		cells = f.FilterRowCells(cells)
	}
	return cells
}

// HasFilterRow reports whether any filter has one.
func (l *FilterList) HasFilterRow() bool {
	for _, f := range l.filters {
		if f.HasFilterRow() {
			return true
		}
	}
	return false
}

// FilterRow: AND drops the row at the first filter that drops it; OR keeps
// it at the first filter that keeps it. Filters after that one are not
// asked.
func (l *FilterList) FilterRow() bool {
	if len(l.filters) == 0 {
		return false
	}
	for _, f := range l.filters {
		drop := f.FilterRow()
		if l.op == MustPassAll && drop {
			return true
		}
		if l.op == MustPassOne && !drop {
			return false
		}
	}
	return l.op == MustPassOne
}

// NextCellHint: AND, the hint of the filter that asked to seek; OR, the
// nearest hint of the filters that are not done, or nil if one of them has
// none.
func (l *FilterList) NextCellHint(kv *encoding.KeyValue) encoding.Key {
	if l.op == MustPassAll {
		if l.hintFilter < 0 || l.filters[l.hintFilter].FilterAllRemaining() {
			return nil
		}
		return l.filters[l.hintFilter].NextCellHint(kv)
	}
	var best encoding.Key
	for _, f := range l.filters {
		if f.FilterAllRemaining() {
			continue
		}
		h := f.NextCellHint(kv)
		if h == nil {
			return nil
		}
		if best == nil || l.compareKeys(best, h) > 0 {
			best = h
		}
	}
	return best
}

// IsFamilyEssential reports whether any filter needs the family.
func (l *FilterList) IsFamilyEssential(family []byte) bool {
	if len(l.filters) == 0 {
		return true
	}
	for _, f := range l.filters {
		if f.IsFamilyEssential(family) {
			return true
		}
	}
	return false
}

// compareKeys and compareKeyValueKey order keys as the scan meets them:
// rows in scan order, and within a row always ascending, since a reversed
// scan reads its rows backwards but each row forwards. HBase's
// FilterListBase.compareCell negates the whole comparison instead, which
// misorders a column hint (ColumnPrefixFilter, ColumnRangeFilter, ...)
// within a row of a reversed scan: MUST_PASS_ONE then answers for a filter
// that would include the cells at and after its hint, and drops them.
func (l *FilterList) compareKeys(a, b encoding.Key) int {
	if l.reversed {
		if c := encoding.DefaultComparer.CompareRows(a.Row(), b.Row()); c != 0 {
			return -c
		}
	}
	return encoding.DefaultComparer.CompareKeys(a, b)
}

func (l *FilterList) compareKeyValueKey(kv *encoding.KeyValue, k encoding.Key) int {
	if l.reversed {
		if c := encoding.DefaultComparer.CompareRows(kv.Row, k.Row()); c != 0 {
			return -c
		}
	}
	return encoding.DefaultComparer.CompareKeyValueKey(kv, k)
}
