package filter

import (
	"bytes"
	"encoding/binary"
	"slices"

	"github.com/regionkv/regionkv/encoding"
)

// KeyOnlyFilter returns cells without their values: HBase's KeyOnlyFilter.
// With lenAsVal the value is replaced by its length as a 4-byte big-endian
// int instead of being dropped. Tags are dropped too.
type KeyOnlyFilter struct {
	FilterBase
	lenAsVal bool
	out      encoding.KeyValue // TransformCell's result
	lenBuf   [4]byte
}

// NewKeyOnlyFilter returns a KeyOnlyFilter.
func NewKeyOnlyFilter(lenAsVal bool) *KeyOnlyFilter { return &KeyOnlyFilter{lenAsVal: lenAsVal} }

// LenAsVal reports whether values become their lengths.
func (f *KeyOnlyFilter) LenAsVal() bool { return f.lenAsVal }

// FilterCell includes every cell.
func (f *KeyOnlyFilter) FilterCell(*encoding.KeyValue) (ReturnCode, error) {
	return FilterInclude, nil
}

// TransformCell returns kv's key with an empty value (or its length). The
// result lives in the filter and is valid until the next call.
func (f *KeyOnlyFilter) TransformCell(kv *encoding.KeyValue) *encoding.KeyValue {
	n := len(kv.Value) // before f.out changes: kv may be a previous result
	f.out = *kv
	f.out.Value, f.out.Tags = nil, nil
	if f.lenAsVal {
		binary.BigEndian.PutUint32(f.lenBuf[:], uint32(n))
		f.out.Value = f.lenBuf[:]
	}
	return &f.out
}

// FirstKeyOnlyFilter returns only the first cell of each row (in each
// store): HBase's FirstKeyOnlyFilter, used to count rows cheaply.
type FirstKeyOnlyFilter struct {
	FilterBase
	foundKV bool
}

// NewFirstKeyOnlyFilter returns a FirstKeyOnlyFilter.
func NewFirstKeyOnlyFilter() *FirstKeyOnlyFilter { return &FirstKeyOnlyFilter{} }

// FilterCell includes the row's first cell and skips the rest of the row.
func (f *FirstKeyOnlyFilter) FilterCell(*encoding.KeyValue) (ReturnCode, error) {
	if f.foundKV {
		return FilterNextRow, nil
	}
	f.foundKV = true
	return FilterInclude, nil
}

// Reset starts a new row.
func (f *FirstKeyOnlyFilter) Reset() { f.foundKV = false }

// FirstKeyValueMatchingQualifiersFilter returns each row's cells up to and
// including the first one whose qualifier is one of a set, then skips the
// rest of the row: HBase's FirstKeyValueMatchingQualifiersFilter
// (deprecated since HBase 2.0, removed in 3.0, still decoded for old
// clients such as RowCounter). As HBase warns, the cells before the match
// are returned too.
type FirstKeyValueMatchingQualifiersFilter struct {
	FilterBase
	qualifiers [][]byte // sorted, distinct
	foundKV    bool
}

// NewFirstKeyValueMatchingQualifiersFilter returns a filter stopping each
// row at the first cell with one of qualifiers.
func NewFirstKeyValueMatchingQualifiersFilter(qualifiers [][]byte) *FirstKeyValueMatchingQualifiersFilter {
	qs := make([][]byte, 0, len(qualifiers))
	for _, q := range qualifiers {
		qs = append(qs, nonNil(q))
	}
	slices.SortFunc(qs, bytes.Compare)
	qs = slices.CompactFunc(qs, bytes.Equal)
	return &FirstKeyValueMatchingQualifiersFilter{qualifiers: qs}
}

// Qualifiers returns the qualifiers in sorted order; the caller must not
// modify them.
func (f *FirstKeyValueMatchingQualifiersFilter) Qualifiers() [][]byte { return f.qualifiers }

// FilterCell includes cells until one has a wanted qualifier, then skips
// the row.
func (f *FirstKeyValueMatchingQualifiersFilter) FilterCell(kv *encoding.KeyValue) (ReturnCode, error) {
	if f.foundKV {
		return FilterNextRow, nil
	}
	if _, ok := slices.BinarySearchFunc(f.qualifiers, kv.Qualifier, bytes.Compare); ok {
		f.foundKV = true
	}
	return FilterInclude, nil
}

// Reset starts a new row.
func (f *FirstKeyValueMatchingQualifiersFilter) Reset() { f.foundKV = false }
