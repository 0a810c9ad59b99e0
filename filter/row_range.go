package filter

import (
	"bytes"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/regionkv/regionkv/encoding"
)

// RowRange is one range of rows of a MultiRowRangeFilter: HBase's
// MultiRowRangeFilter.RowRange. An empty (or nil) StartRow is the first row
// and an empty StopRow the end of the table.
type RowRange struct {
	StartRow          []byte
	StartRowInclusive bool
	StopRow           []byte
	StopRowInclusive  bool
}

// valid is HBase's RowRange.isValid: an open end, or start before stop (or
// equal to an inclusive stop).
func (r RowRange) valid() bool {
	if len(r.StartRow) == 0 || len(r.StopRow) == 0 {
		return true
	}
	c := bytes.Compare(r.StartRow, r.StopRow)
	return c < 0 || (c == 0 && r.StopRowInclusive)
}

// afterStart reports whether row is at or after the range's start.
func (r RowRange) afterStart(row []byte) bool {
	c := bytes.Compare(row, r.StartRow)
	return c > 0 || (c == 0 && r.StartRowInclusive)
}

// beforeStop reports whether row is at or before the range's stop.
func (r RowRange) beforeStop(row []byte) bool {
	if len(r.StopRow) == 0 {
		return true
	}
	c := bytes.Compare(row, r.StopRow)
	return c < 0 || (c == 0 && r.StopRowInclusive)
}

func (r RowRange) contains(row []byte) bool { return r.afterStart(row) && r.beforeStop(row) }

func (r RowRange) String() string {
	open, closeB := "(", ")"
	if r.StartRowInclusive {
		open = "["
	}
	if r.StopRowInclusive {
		closeB = "]"
	}
	return open + encoding.FormatBytes(r.StartRow) + ", " + encoding.FormatBytes(r.StopRow) + closeB
}

// MultiRowRangeFilter keeps the rows in any of several ranges: HBase's
// MultiRowRangeFilter, forward and reversed. The ranges are sorted and
// overlapping or touching ones merged when the filter is made. A row
// before the next range answers FilterSeekNextUsingHint with that range's
// first row (in a reversed scan, its stop row); a row exactly on an
// exclusive boundary skips itself; past the last range FilterAllRemaining
// ends the scan. As HBase's, FilterRowKey never drops a row itself: the
// cells' return code does.
//
// HBase merges ranges with equal start rows keeping the first one's start
// inclusiveness; this filter keeps the start inclusive if either range
// includes it, so that the union is exactly the rows of the ranges.
type MultiRowRangeFilter struct {
	FilterBase
	ranges []RowRange // sorted by start, disjoint

	cur  int        // index of the range the last row was in or before, -1 before any
	rc   ReturnCode // the answer for the current row's cells
	hint encoding.Key
	done bool
}

// NewMultiRowRangeFilter returns a filter keeping the rows in ranges. As
// HBase's, it refuses an empty list and invalid ranges (start after stop),
// with an error marked ErrBadFilter.
func NewMultiRowRangeFilter(ranges []RowRange) (*MultiRowRangeFilter, error) {
	merged, err := sortAndMergeRanges(ranges)
	if err != nil {
		return nil, err
	}
	return &MultiRowRangeFilter{ranges: merged, cur: -1}, nil
}

// NewMultiRowRangeFilterFromPrefixes returns a filter keeping the rows
// that start with one of prefixes, as HBase's constructor taking row key
// prefixes.
func NewMultiRowRangeFilterFromPrefixes(prefixes [][]byte) (*MultiRowRangeFilter, error) {
	ranges := make([]RowRange, 0, len(prefixes))
	for _, p := range prefixes {
		ranges = append(ranges, RowRange{StartRow: p, StartRowInclusive: true, StopRow: closestRowAfterPrefix(p)})
	}
	return NewMultiRowRangeFilter(ranges)
}

// closestRowAfterPrefix is the smallest row after every row starting with
// p, empty (the end) when p is all 0xFF: HBase's
// calculateTheClosestNextRowKeyForPrefix.
func closestRowAfterPrefix(p []byte) []byte {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] != 0xFF {
			out := append([]byte(nil), p[:i+1]...)
			out[i]++
			return out
		}
	}
	return []byte{}
}

// sortAndMergeRanges sorts ranges by start row and merges overlapping and
// touching ones, as HBase's sortAndMerge.
func sortAndMergeRanges(in []RowRange) ([]RowRange, error) {
	if len(in) == 0 {
		return nil, badFilterf("MultiRowRangeFilter: no ranges found")
	}
	var invalid []string
	ranges := make([]RowRange, 0, len(in))
	for _, r := range in {
		if !r.valid() {
			invalid = append(invalid, r.String())
		}
		r.StartRow, r.StopRow = nonNil(r.StartRow), nonNil(r.StopRow)
		ranges = append(ranges, r)
	}
	if len(invalid) > 0 {
		return nil, badFilterf("MultiRowRangeFilter: %d invalid ranges: %s", len(invalid), strings.Join(invalid, ", "))
	}
	slices.SortStableFunc(ranges, func(a, b RowRange) int {
		if c := bytes.Compare(a.StartRow, b.StartRow); c != 0 {
			return c
		}
		// At equal starts the inclusive one first: it is the wider.
		switch {
		case a.StartRowInclusive == b.StartRowInclusive:
			return 0
		case a.StartRowInclusive:
			return -1
		}
		return 1
	})
	out := ranges[:1]
	for _, r := range ranges[1:] {
		last := &out[len(out)-1]
		if len(last.StopRow) > 0 {
			c := bytes.Compare(last.StopRow, r.StartRow)
			if c < 0 || (c == 0 && !last.StopRowInclusive && !r.StartRowInclusive) {
				out = append(out, r) // a gap, even if only the one row
				continue
			}
		}
		// r overlaps or touches last: extend last's stop if r's is further.
		switch {
		case len(last.StopRow) == 0:
		case len(r.StopRow) == 0:
			last.StopRow, last.StopRowInclusive = r.StopRow, r.StopRowInclusive
		default:
			c := bytes.Compare(r.StopRow, last.StopRow)
			if c > 0 {
				last.StopRow, last.StopRowInclusive = r.StopRow, r.StopRowInclusive
			} else if c == 0 {
				last.StopRowInclusive = last.StopRowInclusive || r.StopRowInclusive
			}
		}
	}
	return slices.Clip(out), nil
}

// Ranges returns the sorted, merged ranges; the caller must not modify
// them.
func (f *MultiRowRangeFilter) Ranges() []RowRange { return f.ranges }

// FilterRowKey finds the range the row is in, or the next one in scan
// order, and chooses the answer for the row's cells.
func (f *MultiRowRangeFilter) FilterRowKey(row []byte) (bool, error) {
	if f.done {
		return true, nil
	}
	if f.cur >= 0 && f.cur < len(f.ranges) && f.ranges[f.cur].contains(row) {
		f.rc = FilterInclude
		return false, nil
	}
	var next int // the range row is in or before, in scan order; -1 or len: none
	if f.reversed {
		// The last range starting at or before row.
		next = sort.Search(len(f.ranges), func(i int) bool { return !f.ranges[i].afterStart(row) }) - 1
	} else {
		// The first range ending at or after row.
		next = sort.Search(len(f.ranges), func(i int) bool { return f.ranges[i].beforeStop(row) })
	}
	f.cur = next
	if next < 0 || next >= len(f.ranges) {
		f.done = true
		f.rc = FilterNextRow
		return false, nil
	}
	r := f.ranges[next]
	switch {
	case r.contains(row):
		f.rc = FilterInclude
	case !f.reversed && bytes.Equal(row, r.StartRow), f.reversed && bytes.Equal(row, r.StopRow):
		// On the range's exclusive boundary: the range starts at the next row.
		f.rc = FilterNextRow
	case f.reversed:
		f.rc, f.hint = FilterSeekNextUsingHint, encoding.FirstOnRow(f.hint[:0], r.StopRow)
	default:
		f.rc, f.hint = FilterSeekNextUsingHint, encoding.FirstOnRow(f.hint[:0], r.StartRow)
	}
	return false, nil
}

// FilterCell answers what FilterRowKey chose for the row.
func (f *MultiRowRangeFilter) FilterCell(*encoding.KeyValue) (ReturnCode, error) {
	return f.rc, nil
}

// NextCellHint returns the first key of the next range (of its stop row,
// reversed); it is shared and must not be modified.
func (f *MultiRowRangeFilter) NextCellHint(*encoding.KeyValue) encoding.Key {
	if f.rc != FilterSeekNextUsingHint {
		return nil
	}
	return f.hint
}

// FilterAllRemaining reports whether the scan is past the last range.
func (f *MultiRowRangeFilter) FilterAllRemaining() bool { return f.done }

// String describes the ranges.
func (f *MultiRowRangeFilter) String() string { return fmt.Sprint(f.ranges) }
