package filter

import (
	"github.com/regionkv/regionkv/encoding"
)

// PageFilter returns at most pageSize rows: HBase's PageFilter. It counts
// the rows that reach FilterRow (rows with cells left at the end) and,
// once pageSize have, FilterAllRemaining ends the scan. Like HBase's, it
// limits each region separately: a client scanning several regions may get
// more rows and must stop by itself. A negative page size behaves like 0
// (HBase refuses one when decoding).
//
// Inside a FilterList a PageFilter counts only the rows the list asks it
// about: in MUST_PASS_ONE, FilterRow stops at the first filter that keeps
// the row.
type PageFilter struct {
	FilterBase
	pageSize     int64
	rowsAccepted int64
}

// NewPageFilter returns a filter passing pageSize rows.
func NewPageFilter(pageSize int64) *PageFilter { return &PageFilter{pageSize: pageSize} }

// PageSize returns the page size.
func (f *PageFilter) PageSize() int64 { return f.pageSize }

// FilterCell includes every cell.
func (f *PageFilter) FilterCell(*encoding.KeyValue) (ReturnCode, error) {
	return FilterInclude, nil
}

// FilterRowKey drops rows once the page is full.
func (f *PageFilter) FilterRowKey([]byte) (bool, error) { return f.FilterAllRemaining(), nil }

// FilterAllRemaining reports whether the page is full.
func (f *PageFilter) FilterAllRemaining() bool { return f.rowsAccepted >= f.pageSize }

// FilterRow counts the row and drops it if it does not fit on the page.
func (f *PageFilter) FilterRow() bool {
	f.rowsAccepted++
	return f.rowsAccepted > f.pageSize
}

// HasFilterRow returns true: rows are counted at their end.
func (f *PageFilter) HasFilterRow() bool { return true }
