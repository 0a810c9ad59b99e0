package scanner

import (
	"strings"

	"github.com/cockroachdb/errors"
	"google.golang.org/protobuf/encoding/protowire"
)

// Filters and comparators travel as HBase's protobuf messages (hbase.pb,
// Filter.proto and Comparator.proto): an envelope naming the Java class,
//
//	Filter     { required string name = 1; optional bytes serialized_filter = 2; }
//	Comparator { required string name = 1; optional bytes serialized_comparator = 2; }
//
// around the class's own message:
//
//	FilterList              { required Operator operator = 1; repeated Filter filters = 2; }  // MUST_PASS_ALL = 1, MUST_PASS_ONE = 2
//	CompareFilter           { required CompareType compare_op = 1; optional Comparator comparator = 2; }  // CompareType: LESS = 0 ... NO_OP = 6
//	RowFilter, FamilyFilter, QualifierFilter, ValueFilter { required CompareFilter compare_filter = 1; }
//	SingleColumnValueFilter { optional bytes column_family = 1; optional bytes column_qualifier = 2;
//	                          required CompareType compare_op = 3; required Comparator comparator = 4;
//	                          optional bool filter_if_missing = 5; optional bool latest_version_only = 6; }
//	PrefixFilter            { optional bytes prefix = 1; }
//	ColumnPrefixFilter      { required bytes prefix = 1; }
//	KeyOnlyFilter           { required bool len_as_val = 1; }
//	FirstKeyOnlyFilter      { }
//	PageFilter              { required int64 page_size = 1; }
//
//	ByteArrayComparable     { optional bytes value = 1; }
//	BinaryComparator, BinaryPrefixComparator { required ByteArrayComparable comparable = 1; }
//	SubstringComparator     { required string substr = 1; }
//	RegexStringComparator   { required string pattern = 1; required int32 pattern_flags = 2;
//	                          required string charset = 3; optional string engine = 4; }
//	NullComparator          { }
//
// Decoding follows protobuf's proto2 rules as HBase's generated Java code
// does: unknown fields, and fields with an unexpected wire type, are
// skipped; the last occurrence of a field wins; an enum value outside the
// enum counts as absent; a missing required field fails. The field numbers
// are part of the wire format and must not change.

// filterPackage is the Java package of HBase's filters and comparators.
const filterPackage = "org.apache.hadoop.hbase.filter."

// maxFilterDepth bounds how deeply filters nest, as protobuf-java's
// recursion limit (100 messages) bounds HBase's.
const maxFilterDepth = 100

// FilterFromProto builds a filter from HBase's Filter message.
func FilterFromProto(msg []byte) (Filter, error) { return filterFromProto(msg, 0) }

func filterFromProto(msg []byte, depth int) (Filter, error) {
	fields, err := parseFields(msg)
	if err != nil {
		return nil, markBad(errors.Wrap(err, "decoding Filter"))
	}
	name, ok := fields.bytes(1)
	if !ok {
		return nil, badFilterf("decoding Filter: missing required field name")
	}
	serialized, _ := fields.bytes(2)
	return decodeFilter(string(name), serialized, depth)
}

// DecodeFilter builds a filter from the two fields of HBase's Filter
// message: its Java class name and its serialized_filter. It is HBase's
// ProtobufUtil.toFilter. Errors are marked ErrBadFilter; an unknown class
// gives HBase's message, "java.lang.ClassNotFoundException: <name>".
func DecodeFilter(name string, serialized []byte) (Filter, error) {
	return decodeFilter(name, serialized, 0)
}

func decodeFilter(name string, b []byte, depth int) (Filter, error) {
	decode := filterDecoder(name)
	if decode == nil {
		return nil, unknownClass("filter", name)
	}
	if depth >= maxFilterDepth {
		return nil, badFilterf("decoding %s: filters nested more than %d deep", name, maxFilterDepth)
	}
	fields, err := parseFields(b)
	if err == nil {
		var f Filter
		if f, err = decode(fields, depth); err == nil {
			return f, nil
		}
	}
	return nil, markBad(errors.Wrapf(err, "decoding %s", name))
}

// filterDecoder returns the decoder of the filter class name, nil if there
// is none. Each decoder takes its message's fields and its nesting depth.
func filterDecoder(name string) func(pbFields, int) (Filter, error) {
	short, ok := strings.CutPrefix(name, filterPackage)
	if !ok {
		return nil
	}
	switch short {
	case "FilterList":
		return decodeFilterList
	case "RowFilter":
		return func(fields pbFields, _ int) (Filter, error) {
			cf, err := decodeCompareFilterField(fields)
			return &RowFilter{compareFilter: cf}, err
		}
	case "FamilyFilter":
		return func(fields pbFields, _ int) (Filter, error) {
			cf, err := decodeCompareFilterField(fields)
			return &FamilyFilter{cf}, err
		}
	case "QualifierFilter":
		return func(fields pbFields, _ int) (Filter, error) {
			cf, err := decodeCompareFilterField(fields)
			return &QualifierFilter{cf}, err
		}
	case "ValueFilter":
		return func(fields pbFields, _ int) (Filter, error) {
			cf, err := decodeCompareFilterField(fields)
			return &ValueFilter{cf}, err
		}
	case "SingleColumnValueFilter":
		return decodeSingleColumnValueFilter
	case "PrefixFilter":
		return func(fields pbFields, _ int) (Filter, error) {
			prefix, _ := fields.bytes(1)
			return NewPrefixFilter(cloneBytes(prefix)), nil
		}
	case "ColumnPrefixFilter":
		return func(fields pbFields, _ int) (Filter, error) {
			prefix, ok := fields.bytes(1)
			if !ok {
				return nil, errMissing("prefix")
			}
			return NewColumnPrefixFilter(cloneBytes(prefix)), nil
		}
	case "KeyOnlyFilter":
		return func(fields pbFields, _ int) (Filter, error) {
			lenAsVal, ok := fields.varint(1)
			if !ok {
				return nil, errMissing("len_as_val")
			}
			return NewKeyOnlyFilter(lenAsVal != 0), nil
		}
	case "FirstKeyOnlyFilter":
		return func(pbFields, int) (Filter, error) { return NewFirstKeyOnlyFilter(), nil }
	case "PageFilter":
		return func(fields pbFields, _ int) (Filter, error) {
			size, ok := fields.varint(1)
			if !ok {
				return nil, errMissing("page_size")
			}
			if int64(size) < 0 {
				// HBase's constructor: Preconditions.checkArgument(pageSize >= 0).
				return nil, errors.Newf("page size %d must be positive", int64(size))
			}
			return NewPageFilter(int64(size)), nil
		}
	}
	return nil
}

// unknownClass is the error for a class name we cannot build. HBase answers
// a class it does not have with DoNotRetryIOException wrapping
// ClassNotFoundException; a filter HBase has and we do not gets a message
// saying so.
func unknownClass(kind, name string) error {
	short := strings.TrimPrefix(name, filterPackage)
	if short != name && short != "" && !strings.Contains(short, ".") {
		return badFilterf("java.lang.UnsupportedOperationException: %s %s is not supported by this server", kind, name)
	}
	return badFilterf("java.lang.ClassNotFoundException: %s", name)
}

func decodeFilterList(fields pbFields, depth int) (Filter, error) {
	op, ok := fields.varint(1)
	if !ok || (FilterListOperator(op) != MustPassAll && FilterListOperator(op) != MustPassOne) {
		return nil, errMissing("operator")
	}
	l := NewFilterList(FilterListOperator(op))
	for _, fd := range fields {
		if fd.num != 2 || fd.typ != protowire.BytesType {
			continue
		}
		sub, err := filterFromProto(fd.b, depth+1)
		if err != nil {
			return nil, errors.Wrapf(err, "filters[%d]", len(l.filters))
		}
		l.AddFilter(sub)
	}
	return l, nil
}

// decodeCompareFilterField decodes field 1 of RowFilter, FamilyFilter,
// QualifierFilter and ValueFilter: a CompareFilter message.
func decodeCompareFilterField(fields pbFields) (compareFilter, error) {
	b, ok := fields.bytes(1)
	if !ok {
		return compareFilter{}, errMissing("compare_filter")
	}
	cf, err := parseFields(b)
	if err != nil {
		return compareFilter{}, errors.Wrap(err, "compare_filter")
	}
	op, ok := compareOpField(cf, 1)
	if !ok {
		return compareFilter{}, errMissing("compare_filter.compare_op")
	}
	var cmp ByteArrayComparable
	if cb, ok := cf.bytes(2); ok {
		if cmp, err = ComparatorFromProto(cb); err != nil {
			return compareFilter{}, errors.Wrap(err, "compare_filter.comparator")
		}
	}
	return compareFilter{op: op, comparator: cmp}, nil
}

func decodeSingleColumnValueFilter(fields pbFields, _ int) (Filter, error) {
	family, _ := fields.bytes(1)
	qualifier, _ := fields.bytes(2)
	op, ok := compareOpField(fields, 3)
	if !ok {
		return nil, errMissing("compare_op")
	}
	cb, ok := fields.bytes(4)
	if !ok {
		return nil, errMissing("comparator")
	}
	cmp, err := ComparatorFromProto(cb)
	if err != nil {
		return nil, errors.Wrap(err, "comparator")
	}
	f := NewSingleColumnValueFilter(cloneBytes(family), cloneBytes(qualifier), op, cmp)
	// Both are proto2 optionals without a declared default: absent is false,
	// whatever the Java constructor's default.
	filterIfMissing, _ := fields.varint(5)
	latestVersionOnly, _ := fields.varint(6)
	f.SetFilterIfMissing(filterIfMissing != 0)
	f.SetLatestVersionOnly(latestVersionOnly != 0)
	return f, nil
}

func compareOpField(fields pbFields, num protowire.Number) (CompareOp, bool) {
	v, ok := fields.varint(num)
	if op := CompareOp(int32(v)); ok && op.valid() {
		return op, true
	}
	return 0, false
}

// FilterToProto encodes f as HBase's Filter message. f, and any filter or
// comparator inside it, must implement ProtoMarshaler.
func FilterToProto(f Filter) ([]byte, error) {
	m, ok := f.(ProtoMarshaler)
	if !ok {
		return nil, errors.Newf("scanner: filter %T has no wire form", f)
	}
	return envelope(m)
}

// ComparatorFromProto builds a comparator from HBase's Comparator message.
func ComparatorFromProto(msg []byte) (ByteArrayComparable, error) {
	fields, err := parseFields(msg)
	if err != nil {
		return nil, markBad(errors.Wrap(err, "decoding Comparator"))
	}
	name, ok := fields.bytes(1)
	if !ok {
		return nil, badFilterf("decoding Comparator: missing required field name")
	}
	serialized, _ := fields.bytes(2)
	return DecodeComparator(string(name), serialized)
}

// DecodeComparator builds a comparator from the two fields of HBase's
// Comparator message: its Java class name and its serialized_comparator
// (HBase's ProtobufUtil.toComparator). Errors are marked ErrBadFilter.
func DecodeComparator(name string, b []byte) (ByteArrayComparable, error) {
	var c ByteArrayComparable
	var err error
	switch name {
	case filterPackage + "BinaryComparator":
		var v []byte
		if v, err = decodeComparable(b); err == nil {
			c = NewBinaryComparator(v)
		}
	case filterPackage + "BinaryPrefixComparator":
		var v []byte
		if v, err = decodeComparable(b); err == nil {
			c = NewBinaryPrefixComparator(v)
		}
	case filterPackage + "SubstringComparator":
		var fields pbFields
		if fields, err = parseFields(b); err == nil {
			substr, ok := fields.bytes(1)
			if !ok {
				err = errMissing("substr")
			}
			c = NewSubstringComparator(string(substr))
		}
	case filterPackage + "RegexStringComparator":
		c, err = decodeRegexStringComparator(b)
	case filterPackage + "NullComparator":
		if _, err = parseFields(b); err == nil {
			c = NewNullComparator()
		}
	default:
		return nil, unknownClass("comparator", name)
	}
	if err != nil {
		return nil, markBad(errors.Wrapf(err, "decoding %s", name))
	}
	return c, nil
}

// decodeComparable decodes BinaryComparator and BinaryPrefixComparator:
// field 1 is a ByteArrayComparable, whose value (field 1) is the operand.
func decodeComparable(b []byte) ([]byte, error) {
	fields, err := parseFields(b)
	if err != nil {
		return nil, err
	}
	cb, ok := fields.bytes(1)
	if !ok {
		return nil, errMissing("comparable")
	}
	inner, err := parseFields(cb)
	if err != nil {
		return nil, errors.Wrap(err, "comparable")
	}
	v, _ := inner.bytes(1)
	return cloneBytes(v), nil
}

func decodeRegexStringComparator(b []byte) (ByteArrayComparable, error) {
	fields, err := parseFields(b)
	if err != nil {
		return nil, err
	}
	pattern, ok := fields.bytes(1)
	if !ok {
		return nil, errMissing("pattern")
	}
	flags, ok := fields.varint(2)
	if !ok {
		return nil, errMissing("pattern_flags")
	}
	charset, ok := fields.bytes(3)
	if !ok {
		return nil, errMissing("charset")
	}
	engine, _ := fields.bytes(4)
	return NewRegexStringComparator(string(pattern), int32(flags), string(charset), RegexEngine(engine))
}

// ComparatorToProto encodes c as HBase's Comparator message; c must
// implement ProtoMarshaler.
func ComparatorToProto(c ByteArrayComparable) ([]byte, error) {
	m, ok := c.(ProtoMarshaler)
	if !ok {
		return nil, errors.Newf("scanner: comparator %T has no wire form", c)
	}
	return envelope(m)
}

// envelope wraps m's message in a Filter or Comparator message: the two
// have the same layout.
func envelope(m ProtoMarshaler) ([]byte, error) {
	body, err := m.MarshalProto()
	if err != nil {
		return nil, err
	}
	b := appendStringField(nil, 1, m.ClassName())
	return appendBytesField(b, 2, body), nil
}

// ClassName returns "org.apache.hadoop.hbase.filter.FilterList".
func (l *FilterList) ClassName() string { return filterPackage + "FilterList" }

// MarshalProto encodes the FilterList message.
func (l *FilterList) MarshalProto() ([]byte, error) {
	b := appendVarintField(nil, 1, uint64(l.op))
	for _, f := range l.filters {
		sub, err := FilterToProto(f)
		if err != nil {
			return nil, err
		}
		b = appendBytesField(b, 2, sub)
	}
	return b, nil
}

// marshalCompareFilter encodes the CompareFilter message.
func (f *compareFilter) marshalCompareFilter() ([]byte, error) {
	b := appendVarintField(nil, 1, uint64(f.op))
	if f.comparator != nil {
		c, err := ComparatorToProto(f.comparator)
		if err != nil {
			return nil, err
		}
		b = appendBytesField(b, 2, c)
	}
	// The subclass message holds it as field 1.
	return appendBytesField(nil, 1, b), nil
}

// ClassName returns "org.apache.hadoop.hbase.filter.RowFilter".
func (f *RowFilter) ClassName() string { return filterPackage + "RowFilter" }

// MarshalProto encodes the RowFilter message.
func (f *RowFilter) MarshalProto() ([]byte, error) { return f.marshalCompareFilter() }

// ClassName returns "org.apache.hadoop.hbase.filter.FamilyFilter".
func (f *FamilyFilter) ClassName() string { return filterPackage + "FamilyFilter" }

// MarshalProto encodes the FamilyFilter message.
func (f *FamilyFilter) MarshalProto() ([]byte, error) { return f.marshalCompareFilter() }

// ClassName returns "org.apache.hadoop.hbase.filter.QualifierFilter".
func (f *QualifierFilter) ClassName() string { return filterPackage + "QualifierFilter" }

// MarshalProto encodes the QualifierFilter message.
func (f *QualifierFilter) MarshalProto() ([]byte, error) { return f.marshalCompareFilter() }

// ClassName returns "org.apache.hadoop.hbase.filter.ValueFilter".
func (f *ValueFilter) ClassName() string { return filterPackage + "ValueFilter" }

// MarshalProto encodes the ValueFilter message.
func (f *ValueFilter) MarshalProto() ([]byte, error) { return f.marshalCompareFilter() }

// ClassName returns "org.apache.hadoop.hbase.filter.SingleColumnValueFilter".
func (f *SingleColumnValueFilter) ClassName() string {
	return filterPackage + "SingleColumnValueFilter"
}

// MarshalProto encodes the SingleColumnValueFilter message.
func (f *SingleColumnValueFilter) MarshalProto() ([]byte, error) {
	if f.comparator == nil {
		return nil, errors.New("scanner: SingleColumnValueFilter without a comparator has no wire form")
	}
	c, err := ComparatorToProto(f.comparator)
	if err != nil {
		return nil, err
	}
	var b []byte
	if f.family != nil {
		b = appendBytesField(b, 1, f.family)
	}
	if f.qualifier != nil {
		b = appendBytesField(b, 2, f.qualifier)
	}
	b = appendVarintField(b, 3, uint64(f.op))
	b = appendBytesField(b, 4, c)
	b = appendVarintField(b, 5, protowire.EncodeBool(f.filterIfMissing))
	return appendVarintField(b, 6, protowire.EncodeBool(f.latestVersionOnly)), nil
}

// ClassName returns "org.apache.hadoop.hbase.filter.PrefixFilter".
func (f *PrefixFilter) ClassName() string { return filterPackage + "PrefixFilter" }

// MarshalProto encodes the PrefixFilter message; a nil prefix is left out.
func (f *PrefixFilter) MarshalProto() ([]byte, error) {
	if f.prefix == nil {
		return []byte{}, nil
	}
	return appendBytesField(nil, 1, f.prefix), nil
}

// ClassName returns "org.apache.hadoop.hbase.filter.ColumnPrefixFilter".
func (f *ColumnPrefixFilter) ClassName() string { return filterPackage + "ColumnPrefixFilter" }

// MarshalProto encodes the ColumnPrefixFilter message.
func (f *ColumnPrefixFilter) MarshalProto() ([]byte, error) {
	return appendBytesField(nil, 1, f.prefix), nil
}

// ClassName returns "org.apache.hadoop.hbase.filter.KeyOnlyFilter".
func (f *KeyOnlyFilter) ClassName() string { return filterPackage + "KeyOnlyFilter" }

// MarshalProto encodes the KeyOnlyFilter message.
func (f *KeyOnlyFilter) MarshalProto() ([]byte, error) {
	return appendVarintField(nil, 1, protowire.EncodeBool(f.lenAsVal)), nil
}

// ClassName returns "org.apache.hadoop.hbase.filter.FirstKeyOnlyFilter".
func (f *FirstKeyOnlyFilter) ClassName() string { return filterPackage + "FirstKeyOnlyFilter" }

// MarshalProto encodes the (empty) FirstKeyOnlyFilter message.
func (f *FirstKeyOnlyFilter) MarshalProto() ([]byte, error) { return []byte{}, nil }

// ClassName returns "org.apache.hadoop.hbase.filter.PageFilter".
func (f *PageFilter) ClassName() string { return filterPackage + "PageFilter" }

// MarshalProto encodes the PageFilter message.
func (f *PageFilter) MarshalProto() ([]byte, error) {
	return appendVarintField(nil, 1, uint64(f.pageSize)), nil
}

// ClassName returns "org.apache.hadoop.hbase.filter.BinaryComparator".
func (c *BinaryComparator) ClassName() string { return filterPackage + "BinaryComparator" }

// MarshalProto encodes the BinaryComparator message.
func (c *BinaryComparator) MarshalProto() ([]byte, error) { return marshalComparable(c.value), nil }

// ClassName returns "org.apache.hadoop.hbase.filter.BinaryPrefixComparator".
func (c *BinaryPrefixComparator) ClassName() string {
	return filterPackage + "BinaryPrefixComparator"
}

// MarshalProto encodes the BinaryPrefixComparator message.
func (c *BinaryPrefixComparator) MarshalProto() ([]byte, error) {
	return marshalComparable(c.value), nil
}

// marshalComparable encodes {comparable = 1: ByteArrayComparable{value = 1}};
// a nil value is left out, as HBase does with null.
func marshalComparable(v []byte) []byte {
	var inner []byte
	if v != nil {
		inner = appendBytesField(nil, 1, v)
	}
	return appendBytesField(nil, 1, inner)
}

// ClassName returns "org.apache.hadoop.hbase.filter.SubstringComparator".
func (c *SubstringComparator) ClassName() string { return filterPackage + "SubstringComparator" }

// MarshalProto encodes the SubstringComparator message (the lowercased
// substring, as HBase sends it).
func (c *SubstringComparator) MarshalProto() ([]byte, error) {
	return appendStringField(nil, 1, c.substr), nil
}

// ClassName returns "org.apache.hadoop.hbase.filter.RegexStringComparator".
func (c *RegexStringComparator) ClassName() string {
	return filterPackage + "RegexStringComparator"
}

// MarshalProto encodes the RegexStringComparator message.
func (c *RegexStringComparator) MarshalProto() ([]byte, error) {
	b := appendStringField(nil, 1, c.pattern)
	b = appendVarintField(b, 2, uint64(int64(c.flags)))
	b = appendStringField(b, 3, c.charset)
	return appendStringField(b, 4, string(c.engine)), nil
}

// ClassName returns "org.apache.hadoop.hbase.filter.NullComparator".
func (*NullComparator) ClassName() string { return filterPackage + "NullComparator" }

// MarshalProto encodes the (empty) NullComparator message.
func (*NullComparator) MarshalProto() ([]byte, error) { return []byte{}, nil }

// pbField is one field of a protobuf message.
type pbField struct {
	num protowire.Number
	typ protowire.Type
	u   uint64 // a varint field's value
	b   []byte // a length-delimited field's bytes; aliases the message
}

type pbFields []pbField

// parseFields splits a message into its fields, skipping over fixed-width
// values and groups, which none of our messages use.
func parseFields(msg []byte) (pbFields, error) {
	var fields pbFields
	for size := len(msg); len(msg) > 0; {
		num, typ, n := protowire.ConsumeTag(msg)
		if n < 0 {
			return nil, errors.Wrapf(protowire.ParseError(n), "field tag at byte %d", size-len(msg))
		}
		msg = msg[n:]
		f := pbField{num: num, typ: typ}
		switch typ {
		case protowire.VarintType:
			f.u, n = protowire.ConsumeVarint(msg)
		case protowire.BytesType:
			f.b, n = protowire.ConsumeBytes(msg)
		default:
			n = protowire.ConsumeFieldValue(num, typ, msg)
		}
		if n < 0 {
			return nil, errors.Wrapf(protowire.ParseError(n), "field %d", num)
		}
		msg = msg[n:]
		fields = append(fields, f)
	}
	return fields, nil
}

// last returns the last occurrence of field num with wire type typ; an
// occurrence with another wire type is an unknown field to protobuf.
func (fs pbFields) last(num protowire.Number, typ protowire.Type) (pbField, bool) {
	for i := len(fs) - 1; i >= 0; i-- {
		if fs[i].num == num && fs[i].typ == typ {
			return fs[i], true
		}
	}
	return pbField{}, false
}

func (fs pbFields) bytes(num protowire.Number) ([]byte, bool) {
	f, ok := fs.last(num, protowire.BytesType)
	return f.b, ok
}

func (fs pbFields) varint(num protowire.Number) (uint64, bool) {
	f, ok := fs.last(num, protowire.VarintType)
	return f.u, ok
}

func errMissing(field string) error {
	return errors.Newf("missing required field %s", errors.Safe(field))
}

func markBad(err error) error { return errors.Mark(err, ErrBadFilter) }

// cloneBytes copies b out of the request buffer; nil stays nil (an absent
// field), empty stays empty and non-nil (a present one).
func cloneBytes(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append([]byte{}, b...)
}

func appendBytesField(b []byte, num protowire.Number, v []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, v)
}

func appendStringField(b []byte, num protowire.Number, v string) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendString(b, v)
}

func appendVarintField(b []byte, num protowire.Number, v uint64) []byte {
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}
