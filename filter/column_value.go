package filter

import (
	"bytes"

	"github.com/regionkv/regionkv/encoding"
)

// SingleColumnValueFilter keeps whole rows by the value of one column:
// HBase's SingleColumnValueFilter. A row passes when its family:qualifier
// cell satisfies "value op operand"; a row without the column passes unless
// FilterIfMissing is set. Cells of other columns are always included by
// FilterCell: the decision comes at the end of the row, in FilterRow, so the
// filter has HasFilterRow.
//
// With LatestVersionOnly (the default) only the newest version of the
// column is tested, and a failing one ends the row at once (FilterNextRow);
// without it, any passing version lets the row through.
type SingleColumnValueFilter struct {
	FilterBase
	family, qualifier []byte
	op                CompareOp
	comparator        ByteArrayComparable
	filterIfMissing   bool
	latestVersionOnly bool

	foundColumn   bool // this row has the column
	matchedColumn bool // and a tested version passed
}

// NewSingleColumnValueFilter returns a filter keeping rows whose
// family:qualifier value satisfies "value op operand", with HBase's
// defaults: rows without the column pass, only the latest version counts.
func NewSingleColumnValueFilter(family, qualifier []byte, op CompareOp, comparator ByteArrayComparable) *SingleColumnValueFilter {
	return &SingleColumnValueFilter{family: family, qualifier: qualifier, op: op, comparator: comparator, latestVersionOnly: true}
}

// SetFilterIfMissing sets whether rows without the column are dropped.
func (f *SingleColumnValueFilter) SetFilterIfMissing(v bool) { f.filterIfMissing = v }

// SetLatestVersionOnly sets whether only the newest version is tested.
func (f *SingleColumnValueFilter) SetLatestVersionOnly(v bool) { f.latestVersionOnly = v }

// Family returns the tested column's family.
func (f *SingleColumnValueFilter) Family() []byte { return f.family }

// Qualifier returns the tested column's qualifier.
func (f *SingleColumnValueFilter) Qualifier() []byte { return f.qualifier }

// Op returns the operator.
func (f *SingleColumnValueFilter) Op() CompareOp { return f.op }

// Comparator returns the comparator.
func (f *SingleColumnValueFilter) Comparator() ByteArrayComparable { return f.comparator }

// FilterIfMissing reports whether rows without the column are dropped.
func (f *SingleColumnValueFilter) FilterIfMissing() bool { return f.filterIfMissing }

// LatestVersionOnly reports whether only the newest version is tested.
func (f *SingleColumnValueFilter) LatestVersionOnly() bool { return f.latestVersionOnly }

// FilterCell tests the column's cells and lets the others through.
func (f *SingleColumnValueFilter) FilterCell(kv *encoding.KeyValue) (ReturnCode, error) {
	if f.matchedColumn {
		return FilterInclude, nil
	}
	if f.latestVersionOnly && f.foundColumn {
		return FilterNextRow, nil // the newest version failed
	}
	if !bytes.Equal(kv.Family, f.family) || !bytes.Equal(kv.Qualifier, f.qualifier) {
		return FilterInclude, nil
	}
	f.foundColumn = true
	if !f.op.valid() || f.op == CompareNoOp {
		// HBase's CompareFilter.compare has no case for NO_OP either.
		return FilterInclude, badFilterf("SingleColumnValueFilter: unknown compare op %s", f.op)
	}
	if f.comparator == nil {
		return FilterInclude, badFilterf("SingleColumnValueFilter: compare op %s needs a comparator", f.op)
	}
	if f.op.FilterOut(f.comparator.CompareTo(nonNil(kv.Value))) {
		if f.latestVersionOnly {
			return FilterNextRow, nil
		}
		return FilterInclude, nil
	}
	f.matchedColumn = true
	return FilterInclude, nil
}

// FilterRow drops the row if the column was found but did not pass, or was
// missing and FilterIfMissing is set.
func (f *SingleColumnValueFilter) FilterRow() bool {
	if f.foundColumn {
		return !f.matchedColumn
	}
	return f.filterIfMissing
}

// HasFilterRow returns true: the filter decides at the end of the row.
func (f *SingleColumnValueFilter) HasFilterRow() bool { return true }

// Reset starts a new row.
func (f *SingleColumnValueFilter) Reset() { f.foundColumn, f.matchedColumn = false, false }

// IsFamilyEssential: with FilterIfMissing only the tested family is needed
// to decide; otherwise a row with no cell in it still passes, so every
// family is.
func (f *SingleColumnValueFilter) IsFamilyEssential(family []byte) bool {
	return !f.filterIfMissing || bytes.Equal(family, f.family)
}

// SingleColumnValueExcludeFilter is a SingleColumnValueFilter that leaves
// the tested column out of the rows it keeps: HBase's
// SingleColumnValueExcludeFilter. It decides about rows exactly as
// SingleColumnValueFilter does, then FilterRowCells drops the tested
// column's cells.
type SingleColumnValueExcludeFilter struct {
	SingleColumnValueFilter
}

// NewSingleColumnValueExcludeFilter returns a filter keeping, without the
// tested column, the rows whose family:qualifier value satisfies "value op
// operand", with SingleColumnValueFilter's defaults.
func NewSingleColumnValueExcludeFilter(family, qualifier []byte, op CompareOp, comparator ByteArrayComparable) *SingleColumnValueExcludeFilter {
	return &SingleColumnValueExcludeFilter{*NewSingleColumnValueFilter(family, qualifier, op, comparator)}
}

// FilterRowCells removes the tested column's cells.
func (f *SingleColumnValueExcludeFilter) FilterRowCells(cells []*encoding.KeyValue) []*encoding.KeyValue {
	out := cells[:0]
	for _, kv := range cells {
		if !bytes.Equal(kv.Family, f.family) || !bytes.Equal(kv.Qualifier, f.qualifier) {
			out = append(out, kv)
		}
	}
	return out
}

// ColumnValueFilter returns only the cells of one column whose value
// passes a comparison: HBase's ColumnValueFilter (where
// SingleColumnValueFilter returns whole rows). Cells of other columns are
// skipped, by column until the tested column has been seen in the row and
// by row after it.
type ColumnValueFilter struct {
	FilterBase
	family, qualifier []byte
	op                CompareOp
	comparator        ByteArrayComparable
	columnFound       bool
}

// NewColumnValueFilter returns a filter keeping the family:qualifier cells
// with "value op operand". The family and the comparator are required, as
// in HBase (an error marked ErrBadFilter); a nil qualifier is the empty one.
func NewColumnValueFilter(family, qualifier []byte, op CompareOp, comparator ByteArrayComparable) (*ColumnValueFilter, error) {
	switch {
	case family == nil:
		return nil, badFilterf("ColumnValueFilter: family should not be null")
	case comparator == nil:
		return nil, badFilterf("ColumnValueFilter: comparator should not be null")
	case !op.valid():
		return nil, badFilterf("ColumnValueFilter: unknown compare op %s", op)
	}
	return &ColumnValueFilter{family: family, qualifier: nonNil(qualifier), op: op, comparator: comparator}, nil
}

// Family returns the tested column's family.
func (f *ColumnValueFilter) Family() []byte { return f.family }

// Qualifier returns the tested column's qualifier.
func (f *ColumnValueFilter) Qualifier() []byte { return f.qualifier }

// Op returns the operator.
func (f *ColumnValueFilter) Op() CompareOp { return f.op }

// Comparator returns the comparator.
func (f *ColumnValueFilter) Comparator() ByteArrayComparable { return f.comparator }

// FilterCell includes the tested column's cells that pass. NO_OP passes
// none, as HBase's compareValue.
func (f *ColumnValueFilter) FilterCell(kv *encoding.KeyValue) (ReturnCode, error) {
	if !bytes.Equal(kv.Family, f.family) || !bytes.Equal(kv.Qualifier, f.qualifier) {
		if f.columnFound {
			return FilterNextRow, nil
		}
		return FilterNextCol, nil
	}
	f.columnFound = true
	if f.op == CompareNoOp || f.op.FilterOut(f.comparator.CompareTo(nonNil(kv.Value))) {
		return FilterSkip, nil
	}
	return FilterInclude, nil
}

// Reset starts a new row.
func (f *ColumnValueFilter) Reset() { f.columnFound = false }

// IsFamilyEssential: only the tested family is.
func (f *ColumnValueFilter) IsFamilyEssential(family []byte) bool {
	return bytes.Equal(family, f.family)
}

// DependentColumnFilter keeps the cells that have a timestamp of a
// dependent column: HBase's DependentColumnFilter. The dependent column's
// cells (those whose value passes the comparison, when there is a
// comparator) give the row's timestamps; at the end of the row
// FilterRowCells drops every cell, of any family, at another timestamp.
// With dropDependentColumn the dependent column's own cells are left out.
// It needs whole rows (HasFilterRow).
type DependentColumnFilter struct {
	compareFilter
	family, qualifier   []byte
	dropDependentColumn bool
	stamps              map[int64]struct{}
}

// NewDependentColumnFilter returns a filter keeping the cells at the
// timestamps of family:qualifier's cells whose value satisfies "value op
// operand"; with a nil comparator (and op CompareNoOp, HBase's default)
// every cell of the column counts.
func NewDependentColumnFilter(family, qualifier []byte, dropDependentColumn bool, op CompareOp, comparator ByteArrayComparable) *DependentColumnFilter {
	return &DependentColumnFilter{compareFilter: compareFilter{op: op, comparator: comparator},
		family: family, qualifier: qualifier, dropDependentColumn: dropDependentColumn, stamps: map[int64]struct{}{}}
}

// Family returns the dependent column's family.
func (f *DependentColumnFilter) Family() []byte { return f.family }

// Qualifier returns the dependent column's qualifier.
func (f *DependentColumnFilter) Qualifier() []byte { return f.qualifier }

// DropDependentColumn reports whether the dependent column's cells are
// left out.
func (f *DependentColumnFilter) DropDependentColumn() bool { return f.dropDependentColumn }

// FilterCell collects the dependent column's timestamps; the other cells
// are included until FilterRowCells decides.
func (f *DependentColumnFilter) FilterCell(kv *encoding.KeyValue) (ReturnCode, error) {
	if !bytes.Equal(kv.Family, f.family) || !bytes.Equal(kv.Qualifier, f.qualifier) {
		return FilterInclude, nil
	}
	if f.comparator != nil {
		out, err := f.filterOut(kv.Value)
		if err != nil {
			return FilterSkip, err
		}
		if out {
			return FilterSkip, nil
		}
	}
	f.stamps[kv.Timestamp] = struct{}{}
	if f.dropDependentColumn {
		return FilterSkip, nil
	}
	return FilterInclude, nil
}

// FilterRowCells keeps the cells at the dependent column's timestamps.
func (f *DependentColumnFilter) FilterRowCells(cells []*encoding.KeyValue) []*encoding.KeyValue {
	out := cells[:0]
	for _, kv := range cells {
		if _, ok := f.stamps[kv.Timestamp]; ok {
			out = append(out, kv)
		}
	}
	return out
}

// HasFilterRow returns true: the row is decided at its end.
func (f *DependentColumnFilter) HasFilterRow() bool { return true }

// Reset forgets the row's timestamps.
func (f *DependentColumnFilter) Reset() { clear(f.stamps) }
