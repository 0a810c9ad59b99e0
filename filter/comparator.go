package filter

import (
	"bytes"
	"strings"
)

// ByteArrayComparable compares a fixed operand with a cell's row, family,
// qualifier or value: HBase's ByteArrayComparable. Its direction is HBase's
// comparator.compareTo(cellBytes): negative when the operand sorts before
// the cell's bytes, positive when after. See CompareOp.FilterOut for how
// filters turn the result into a decision.
//
// Filters never pass a nil slice: an empty cell part arrives as an empty,
// non-nil slice, as HBase never passes a null array. Comparators are
// immutable and safe for concurrent use.
type ByteArrayComparable interface {
	CompareTo(value []byte) int
}

// ProtoMarshaler is implemented by the filters and comparators that have a
// wire form: HBase's toByteArray plus the Java class name HBase finds the
// parser by.
type ProtoMarshaler interface {
	// ClassName returns the Java class name, the Filter.name or
	// Comparator.name of the wire message.
	ClassName() string
	// MarshalProto returns the type's own protobuf message, the
	// serialized_filter or serialized_comparator of the wire message.
	MarshalProto() ([]byte, error)
}

// BinaryComparator compares bytewise, unsigned: HBase's BinaryComparator.
type BinaryComparator struct {
	value []byte
}

// NewBinaryComparator returns a comparator with operand value.
func NewBinaryComparator(value []byte) *BinaryComparator {
	return &BinaryComparator{value: value}
}

// Value returns the operand.
func (c *BinaryComparator) Value() []byte { return c.value }

// CompareTo compares the operand with value.
func (c *BinaryComparator) CompareTo(value []byte) int { return bytes.Compare(c.value, value) }

// BinaryPrefixComparator compares the operand with as many leading bytes of
// the value as the operand has: HBase's BinaryPrefixComparator. With EQUAL
// it matches values that start with the operand.
type BinaryPrefixComparator struct {
	value []byte
}

// NewBinaryPrefixComparator returns a comparator with operand value.
func NewBinaryPrefixComparator(value []byte) *BinaryPrefixComparator {
	return &BinaryPrefixComparator{value: value}
}

// Value returns the operand.
func (c *BinaryPrefixComparator) Value() []byte { return c.value }

// CompareTo compares the operand with value cut to the operand's length.
func (c *BinaryPrefixComparator) CompareTo(value []byte) int {
	return bytes.Compare(c.value, value[:min(len(c.value), len(value))])
}

// SubstringComparator tests, ignoring case, whether a value contains a
// substring: HBase's SubstringComparator. CompareTo returns 0 when it does
// and 1 otherwise, so only EQUAL and NOT_EQUAL make sense with it.
//
// Like HBase, it decodes the value as UTF-8 and lowercases both sides.
// HBase uses Java's full Unicode case mapping, Go's strings.ToLower the
// simple one; they differ for a handful of characters (U+0130 İ lowercases
// to "i" here and to "i̇" in Java). Invalid UTF-8 becomes U+FFFD in both,
// though Java may use fewer replacement characters for a run of bad bytes.
type SubstringComparator struct {
	substr string // lowercased
}

// NewSubstringComparator returns a comparator for substr.
func NewSubstringComparator(substr string) *SubstringComparator {
	return &SubstringComparator{substr: strings.ToLower(substr)}
}

// Substr returns the lowercased substring.
func (c *SubstringComparator) Substr() string { return c.substr }

// CompareTo returns 0 if value contains the substring, ignoring case, 1 if not.
func (c *SubstringComparator) CompareTo(value []byte) int {
	if strings.Contains(strings.ToLower(string(value)), c.substr) {
		return 0
	}
	return 1
}

// NullComparator is HBase's NullComparator: it compares equal only to a
// missing (nil) array. A cell's value is never missing, so against cells
// it always returns 1: with SingleColumnValueFilter, EQUAL keeps only rows
// that lack the column (when filterIfMissing is false) and NOT_EQUAL only
// rows that have it.
type NullComparator struct{}

// NewNullComparator returns a NullComparator.
func NewNullComparator() *NullComparator { return &NullComparator{} }

// CompareTo returns 0 for nil and 1 for anything else, empty slices included.
func (*NullComparator) CompareTo(value []byte) int {
	if value == nil {
		return 0
	}
	return 1
}
