package filter

import (
	"github.com/regionkv/regionkv/encoding"
)

// SkipFilter drops a whole row as soon as the filter it wraps does not
// include one of the row's cells: HBase's SkipFilter. SkipFilter(a
// ValueFilter NOT_EQUAL 0) drops every row with a zero anywhere, where the
// ValueFilter alone would drop only those cells. The decision comes at the
// end of the row (HasFilterRow). Any answer but FilterInclude counts as a
// miss, FilterIncludeAndNextCol too.
//
// As in HBase, the wrapper forwards FilterCell, TransformCell, Reset and
// IsFamilyEssential only: the wrapped filter's FilterRowKey,
// FilterAllRemaining, FilterRow, FilterRowCells and seek hints are not
// consulted. Unlike HBase's it passes the scan direction on, so that a
// direction-aware filter inside works in a reversed scan.
type SkipFilter struct {
	FilterBase
	filter    Filter
	filterRow bool
}

// NewSkipFilter wraps f.
func NewSkipFilter(f Filter) *SkipFilter { return &SkipFilter{filter: f} }

// Filter returns the wrapped filter.
func (f *SkipFilter) Filter() Filter { return f.filter }

// Reset resets the wrapped filter and starts a new row.
func (f *SkipFilter) Reset() {
	f.filter.Reset()
	f.filterRow = false
}

// FilterCell asks the wrapped filter and remembers a miss.
func (f *SkipFilter) FilterCell(kv *encoding.KeyValue) (ReturnCode, error) {
	rc, err := f.filter.FilterCell(kv)
	if err != nil {
		return rc, err
	}
	f.filterRow = f.filterRow || rc != FilterInclude
	return rc, nil
}

// TransformCell is the wrapped filter's.
func (f *SkipFilter) TransformCell(kv *encoding.KeyValue) *encoding.KeyValue {
	return f.filter.TransformCell(kv)
}

// FilterRow drops a row with a miss.
func (f *SkipFilter) FilterRow() bool { return f.filterRow }

// HasFilterRow returns true: the row is decided at its end.
func (f *SkipFilter) HasFilterRow() bool { return true }

// IsFamilyEssential is the wrapped filter's.
func (f *SkipFilter) IsFamilyEssential(family []byte) bool {
	return f.filter.IsFamilyEssential(family)
}

// SetReversed sets the direction of the wrapper and the wrapped filter.
func (f *SkipFilter) SetReversed(reversed bool) {
	f.FilterBase.SetReversed(reversed)
	f.filter.SetReversed(reversed)
}

// WhileMatchFilter ends the scan at the first row or cell the filter it
// wraps rejects: HBase's WhileMatchFilter. Once the wrapped filter's
// FilterRowKey or FilterRow returns true, or its FilterCell answers
// anything but FilterInclude, FilterAllRemaining holds for the rest of the
// scan. The cells of the current row that came before stay in the result
// unless the row is dropped.
//
// As in HBase, the wrapper forwards FilterRowKey, FilterCell,
// TransformCell, FilterRow, FilterAllRemaining, Reset and
// IsFamilyEssential; the wrapped filter's FilterRowCells and seek hints
// are not consulted, and HasFilterRow is always true. Unlike HBase's it
// passes the scan direction on.
type WhileMatchFilter struct {
	FilterBase
	filter Filter
	done   bool
}

// NewWhileMatchFilter wraps f.
func NewWhileMatchFilter(f Filter) *WhileMatchFilter { return &WhileMatchFilter{filter: f} }

// Filter returns the wrapped filter.
func (f *WhileMatchFilter) Filter() Filter { return f.filter }

// Reset resets the wrapped filter; a finished scan stays finished.
func (f *WhileMatchFilter) Reset() { f.filter.Reset() }

// FilterAllRemaining reports whether the wrapped filter has rejected
// anything, or is done itself.
func (f *WhileMatchFilter) FilterAllRemaining() bool {
	return f.done || f.filter.FilterAllRemaining()
}

// FilterRowKey asks the wrapped filter; a rejected row ends the scan.
func (f *WhileMatchFilter) FilterRowKey(row []byte) (bool, error) {
	if f.FilterAllRemaining() {
		return true, nil
	}
	drop, err := f.filter.FilterRowKey(row)
	if err != nil {
		return false, err
	}
	f.done = f.done || drop
	return drop, nil
}

// FilterCell asks the wrapped filter; anything but FilterInclude ends the
// scan.
func (f *WhileMatchFilter) FilterCell(kv *encoding.KeyValue) (ReturnCode, error) {
	rc, err := f.filter.FilterCell(kv)
	if err != nil {
		return rc, err
	}
	f.done = f.done || rc != FilterInclude
	return rc, nil
}

// TransformCell is the wrapped filter's.
func (f *WhileMatchFilter) TransformCell(kv *encoding.KeyValue) *encoding.KeyValue {
	return f.filter.TransformCell(kv)
}

// FilterRow asks the wrapped filter; a dropped row ends the scan.
func (f *WhileMatchFilter) FilterRow() bool {
	drop := f.filter.FilterRow()
	f.done = f.done || drop
	return drop
}

// HasFilterRow returns true, as HBase's: FilterRow must be asked.
func (f *WhileMatchFilter) HasFilterRow() bool { return true }

// IsFamilyEssential is the wrapped filter's.
func (f *WhileMatchFilter) IsFamilyEssential(family []byte) bool {
	return f.filter.IsFamilyEssential(family)
}

// SetReversed sets the direction of the wrapper and the wrapped filter.
func (f *WhileMatchFilter) SetReversed(reversed bool) {
	f.FilterBase.SetReversed(reversed)
	f.filter.SetReversed(reversed)
}
