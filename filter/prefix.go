package filter

import (
	"bytes"

	"github.com/regionkv/regionkv/encoding"
)

// PrefixFilter keeps the rows whose key starts with a prefix: HBase's
// PrefixFilter. Rows before the prefix are not read: their first cell
// answers FilterSeekNextUsingHint with the first key of the prefix (in a
// reversed scan, a key after every row with the prefix). Once the scan is
// past the prefix, FilterRowKey drops the row and FilterAllRemaining ends
// the scan.
//
// A nil prefix is HBase's null prefix (a PrefixFilter message without its
// field): it drops every row. An empty, non-nil prefix keeps every row.
type PrefixFilter struct {
	FilterBase
	prefix       []byte
	passedPrefix bool
	filterRow    bool
	provideHint  bool
	forwardHint  encoding.Key
	reversedHint encoding.Key // nil when no key follows every row with the prefix
}

// NewPrefixFilter returns a filter keeping rows that start with prefix.
func NewPrefixFilter(prefix []byte) *PrefixFilter {
	f := &PrefixFilter{prefix: prefix, filterRow: true}
	if prefix != nil {
		f.forwardHint = encoding.FirstOnRow(nil, prefix)
		if after, ok := increaseLastNonMaxByte(prefix); ok {
			f.reversedHint = encoding.FirstOnRow(nil, after)
		}
	}
	return f
}

// increaseLastNonMaxByte returns b with its last byte below 0xFF
// incremented, which sorts after every key that starts with b. HBase's
// PrivateCellUtil.increaseLastNonMaxByte does this on Java's signed bytes,
// which mishandles 0x7F and 0xFF; this uses unsigned bytes. It reports false
// when every byte is 0xFF.
func increaseLastNonMaxByte(b []byte) ([]byte, bool) {
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] != 0xFF {
			out := append([]byte(nil), b...)
			out[i]++
			return out, true
		}
	}
	return nil, false
}

// Prefix returns the prefix.
func (f *PrefixFilter) Prefix() []byte { return f.prefix }

// FilterRowKey drops rows after the prefix (before it, in a reversed scan)
// and remembers whether the row matches or needs a seek.
func (f *PrefixFilter) FilterRowKey(row []byte) (bool, error) {
	if f.prefix == nil {
		return true, nil
	}
	if f.passedPrefix {
		return true, nil
	}
	// Compare the row's first len(prefix) bytes; a shorter row that is a
	// prefix of the prefix sorts before it.
	cmp := bytes.Compare(row[:min(len(row), len(f.prefix))], f.prefix)
	if (!f.reversed && cmp > 0) || (f.reversed && cmp < 0) {
		f.passedPrefix = true
	}
	f.filterRow = cmp != 0
	f.provideHint = (!f.reversed && cmp < 0) || (f.reversed && cmp > 0)
	return f.passedPrefix, nil
}

// FilterCell seeks to the prefix from a row before it, skips a row that
// does not match, and includes the cells of one that does.
func (f *PrefixFilter) FilterCell(*encoding.KeyValue) (ReturnCode, error) {
	if f.provideHint {
		return FilterSeekNextUsingHint, nil
	}
	if f.filterRow {
		return FilterNextRow, nil
	}
	return FilterInclude, nil
}

// FilterRow drops a row that does not match.
func (f *PrefixFilter) FilterRow() bool { return f.filterRow }

// Reset starts a new row.
func (f *PrefixFilter) Reset() { f.filterRow = true }

// FilterAllRemaining reports whether the scan is past the prefix.
func (f *PrefixFilter) FilterAllRemaining() bool { return f.passedPrefix }

// NextCellHint returns the first key of the prefix (a key after all of it,
// reversed); the key is shared and must not be modified.
func (f *PrefixFilter) NextCellHint(*encoding.KeyValue) encoding.Key {
	if f.reversed {
		return f.reversedHint
	}
	return f.forwardHint
}

// ColumnPrefixFilter keeps the cells whose qualifier starts with a prefix:
// HBase's ColumnPrefixFilter. A qualifier before the prefix answers
// FilterSeekNextUsingHint with the first key of the prefix in the same row
// and family; one after it ends the row in that store.
type ColumnPrefixFilter struct {
	FilterBase
	prefix []byte
}

// NewColumnPrefixFilter returns a filter keeping qualifiers that start with prefix.
func NewColumnPrefixFilter(prefix []byte) *ColumnPrefixFilter {
	return &ColumnPrefixFilter{prefix: prefix}
}

// Prefix returns the prefix.
func (f *ColumnPrefixFilter) Prefix() []byte { return f.prefix }

// FilterCell compares the qualifier with the prefix.
func (f *ColumnPrefixFilter) FilterCell(kv *encoding.KeyValue) (ReturnCode, error) {
	q, p := kv.Qualifier, f.prefix
	if len(q) < len(p) {
		if bytes.Compare(q, p[:len(q)]) <= 0 {
			return FilterSeekNextUsingHint, nil
		}
		return FilterNextRow, nil
	}
	switch bytes.Compare(q[:len(p)], p) {
	case -1:
		return FilterSeekNextUsingHint, nil
	case 1:
		return FilterNextRow, nil
	}
	return FilterInclude, nil
}

// NextCellHint returns the first key of kv's row and family with the prefix
// as qualifier.
func (f *ColumnPrefixFilter) NextCellHint(kv *encoding.KeyValue) encoding.Key {
	return encoding.FirstOnRowCol(nil, kv.Row, kv.Family, f.prefix)
}
