package filter

import (
	"github.com/regionkv/regionkv/encoding"
)

// compareFilter is HBase's CompareFilter: an operator and a comparator
// applied to one part of a cell. A cell "passes" when "part op operand"
// holds; see CompareOp.FilterOut for the direction.
type compareFilter struct {
	FilterBase
	op         CompareOp
	comparator ByteArrayComparable
}

// Op returns the operator.
func (f *compareFilter) Op() CompareOp { return f.op }

// Comparator returns the comparator; it may be nil for NO_OP.
func (f *compareFilter) Comparator() ByteArrayComparable { return f.comparator }

// filterOut reports whether part fails the comparison. NO_OP filters out
// everything without consulting the comparator, as HBase's compareRow,
// compareFamily, compareQualifier and compareValue do.
func (f *compareFilter) filterOut(part []byte) (bool, error) {
	if f.op == CompareNoOp {
		return true, nil
	}
	if !f.op.valid() {
		return false, badFilterf("unknown compare op %s", f.op)
	}
	if f.comparator == nil {
		return false, badFilterf("compare op %s needs a comparator", f.op)
	}
	return f.op.FilterOut(f.comparator.CompareTo(nonNil(part))), nil
}

// RowFilter keeps the rows whose key passes the comparison: HBase's
// RowFilter. It decides in FilterRowKey; a failed row then answers
// FilterNextRow to every cell and FilterRow true until Reset.
type RowFilter struct {
	compareFilter
	filterOutRow bool
}

// NewRowFilter returns a filter keeping rows with "row op operand".
func NewRowFilter(op CompareOp, comparator ByteArrayComparable) *RowFilter {
	return &RowFilter{compareFilter: compareFilter{op: op, comparator: comparator}}
}

// Reset forgets the current row's verdict.
func (f *RowFilter) Reset() { f.filterOutRow = false }

// FilterRowKey compares the row key.
func (f *RowFilter) FilterRowKey(row []byte) (bool, error) {
	out, err := f.filterOut(row)
	if err != nil {
		return false, err
	}
	if out {
		f.filterOutRow = true
	}
	return f.filterOutRow, nil
}

// FilterCell skips the rest of a row that failed.
func (f *RowFilter) FilterCell(*encoding.KeyValue) (ReturnCode, error) {
	if f.filterOutRow {
		return FilterNextRow, nil
	}
	return FilterInclude, nil
}

// FilterRow drops a row that failed.
func (f *RowFilter) FilterRow() bool { return f.filterOutRow }

// FamilyFilter keeps the cells whose family passes the comparison: HBase's
// FamilyFilter. A failing family answers FilterNextRow, which skips the
// rest of the row in that family's store only.
type FamilyFilter struct {
	compareFilter
}

// NewFamilyFilter returns a filter keeping families with "family op operand".
func NewFamilyFilter(op CompareOp, comparator ByteArrayComparable) *FamilyFilter {
	return &FamilyFilter{compareFilter{op: op, comparator: comparator}}
}

// FilterCell compares the cell's family; cells without one pass.
func (f *FamilyFilter) FilterCell(kv *encoding.KeyValue) (ReturnCode, error) {
	if len(kv.Family) == 0 {
		return FilterInclude, nil
	}
	out, err := f.filterOut(kv.Family)
	if err != nil || !out {
		return FilterInclude, err
	}
	return FilterNextRow, nil
}

// QualifierFilter keeps the cells whose qualifier passes the comparison:
// HBase's QualifierFilter. Failing cells are skipped one by one.
type QualifierFilter struct {
	compareFilter
}

// NewQualifierFilter returns a filter keeping qualifiers with "qualifier op operand".
func NewQualifierFilter(op CompareOp, comparator ByteArrayComparable) *QualifierFilter {
	return &QualifierFilter{compareFilter{op: op, comparator: comparator}}
}

// FilterCell compares the cell's qualifier; cells with an empty qualifier
// pass, as in HBase.
func (f *QualifierFilter) FilterCell(kv *encoding.KeyValue) (ReturnCode, error) {
	if len(kv.Qualifier) == 0 {
		return FilterInclude, nil
	}
	out, err := f.filterOut(kv.Qualifier)
	if err != nil || !out {
		return FilterInclude, err
	}
	return FilterSkip, nil
}

// ValueFilter keeps the cells whose value passes the comparison: HBase's
// ValueFilter. Failing cells are skipped one by one.
type ValueFilter struct {
	compareFilter
}

// NewValueFilter returns a filter keeping values with "value op operand".
func NewValueFilter(op CompareOp, comparator ByteArrayComparable) *ValueFilter {
	return &ValueFilter{compareFilter{op: op, comparator: comparator}}
}

// FilterCell compares the cell's value.
func (f *ValueFilter) FilterCell(kv *encoding.KeyValue) (ReturnCode, error) {
	out, err := f.filterOut(kv.Value)
	if err != nil || !out {
		return FilterInclude, err
	}
	return FilterSkip, nil
}
