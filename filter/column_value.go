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
