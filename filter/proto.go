package filter

import (
	"strings"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/hbasepb"
	"google.golang.org/protobuf/proto"
)

// Filters and comparators travel as HBase's protobuf messages, generated in
// hbasepb from Filter.proto and Comparator.proto: an envelope naming the
// Java class (hbasepb.Filter, hbasepb.Comparator) around the class's own
// message, serialized into its serialized_filter or serialized_comparator
// (hbasepb.PrefixFilter, hbasepb.SingleColumnValueFilter, ...).
//
// Each class's message is decoded by protobuf's own proto2 decoder, as
// HBase's generated Java code decodes it: unknown fields, and fields with an
// unexpected wire type, are skipped; the last occurrence of a scalar field
// wins and repeated occurrences of a message field merge. Required fields
// are checked here rather than by the decoder, so that the error names the
// field; and an enum value outside its enum counts as absent.

// filterPackage is the Java package of HBase's filters and comparators.
const filterPackage = "org.apache.hadoop.hbase.filter."

// maxFilterDepth bounds how deeply filters nest, as protobuf-java's
// recursion limit (100 messages) bounds HBase's. Each level is a separate
// serialized_filter, so protobuf's own limit never sees the nesting.
const maxFilterDepth = 100

// FilterFromProto builds a filter from the bytes of HBase's Filter message.
// Errors are marked ErrBadFilter.
func FilterFromProto(msg []byte) (Filter, error) {
	var m hbasepb.Filter
	if err := unmarshal(msg, &m); err != nil {
		return nil, markBad(errors.Wrap(err, "decoding Filter"))
	}
	return filterFromPB(&m, 0)
}

// FilterFromPB builds a filter from HBase's Filter message (HBase's
// ProtobufUtil.toFilter); a nil message is no filter. Errors are marked
// ErrBadFilter; an unknown class gives HBase's message,
// "java.lang.ClassNotFoundException: <name>".
func FilterFromPB(m *hbasepb.Filter) (Filter, error) {
	if m == nil {
		return nil, nil
	}
	return filterFromPB(m, 0)
}

func filterFromPB(m *hbasepb.Filter, depth int) (Filter, error) {
	if m == nil || m.Name == nil {
		return nil, badFilterf("decoding Filter: missing required field name")
	}
	return decodeFilter(m.GetName(), m.GetSerializedFilter(), depth)
}

// DecodeFilter builds a filter from the two fields of HBase's Filter
// message: its Java class name and its serialized_filter. Errors are as
// FilterFromPB's.
func DecodeFilter(name string, serialized []byte) (Filter, error) {
	return decodeFilter(name, serialized, 0)
}

func decodeFilter(name string, b []byte, depth int) (Filter, error) {
	decode := filterDecoder(name, depth)
	if decode == nil {
		return nil, unknownClass("filter", name)
	}
	if depth >= maxFilterDepth {
		return nil, badFilterf("decoding %s: filters nested more than %d deep", name, maxFilterDepth)
	}
	f, err := decode(b)
	if err != nil {
		return nil, markBad(errors.Wrapf(err, "decoding %s", name))
	}
	return f, nil
}

// filterDecoder returns the decoder of the serialized_filter of class name
// at nesting depth, nil if there is none.
func filterDecoder(name string, depth int) func([]byte) (Filter, error) {
	short, ok := strings.CutPrefix(name, filterPackage)
	if !ok {
		return nil
	}
	switch short {
	case "FilterList":
		return decodeAs(func(m *hbasepb.FilterList) (Filter, error) { return filterListFromPB(m, depth) })
	case "RowFilter":
		return decodeAs(func(m *hbasepb.RowFilter) (Filter, error) {
			cf, err := compareFilterFromPB(m.CompareFilter)
			return &RowFilter{compareFilter: cf}, err
		})
	case "FamilyFilter":
		return decodeAs(func(m *hbasepb.FamilyFilter) (Filter, error) {
			cf, err := compareFilterFromPB(m.CompareFilter)
			return &FamilyFilter{cf}, err
		})
	case "QualifierFilter":
		return decodeAs(func(m *hbasepb.QualifierFilter) (Filter, error) {
			cf, err := compareFilterFromPB(m.CompareFilter)
			return &QualifierFilter{cf}, err
		})
	case "ValueFilter":
		return decodeAs(func(m *hbasepb.ValueFilter) (Filter, error) {
			cf, err := compareFilterFromPB(m.CompareFilter)
			return &ValueFilter{cf}, err
		})
	case "SingleColumnValueFilter":
		return decodeAs(func(m *hbasepb.SingleColumnValueFilter) (Filter, error) { return singleColumnValueFilterFromPB(m) })
	case "PrefixFilter":
		return decodeAs(func(m *hbasepb.PrefixFilter) (Filter, error) { return NewPrefixFilter(m.Prefix), nil })
	case "ColumnPrefixFilter":
		return decodeAs(func(m *hbasepb.ColumnPrefixFilter) (Filter, error) {
			if m.Prefix == nil {
				return nil, errMissing("prefix")
			}
			return NewColumnPrefixFilter(m.Prefix), nil
		})
	case "KeyOnlyFilter":
		return decodeAs(func(m *hbasepb.KeyOnlyFilter) (Filter, error) {
			if m.LenAsVal == nil {
				return nil, errMissing("len_as_val")
			}
			return NewKeyOnlyFilter(m.GetLenAsVal()), nil
		})
	case "FirstKeyOnlyFilter":
		return decodeAs(func(*hbasepb.FirstKeyOnlyFilter) (Filter, error) { return NewFirstKeyOnlyFilter(), nil })
	case "SingleColumnValueExcludeFilter":
		return decodeAs(func(m *hbasepb.SingleColumnValueExcludeFilter) (Filter, error) {
			if m.SingleColumnValueFilter == nil {
				return nil, errMissing("single_column_value_filter")
			}
			f, err := singleColumnValueFilterFromPB(m.SingleColumnValueFilter)
			if err != nil {
				return nil, errors.Wrap(err, "single_column_value_filter")
			}
			return &SingleColumnValueExcludeFilter{*f}, nil
		})
	case "ColumnValueFilter":
		return decodeAs(columnValueFilterFromPB)
	case "DependentColumnFilter":
		return decodeAs(func(m *hbasepb.DependentColumnFilter) (Filter, error) {
			cf, err := compareFilterFromPB(m.CompareFilter)
			if err != nil {
				return nil, err
			}
			return NewDependentColumnFilter(m.ColumnFamily, m.ColumnQualifier, m.GetDropDependentColumn(), cf.op, cf.comparator), nil
		})
	case "MultipleColumnPrefixFilter":
		return decodeAs(func(m *hbasepb.MultipleColumnPrefixFilter) (Filter, error) {
			return NewMultipleColumnPrefixFilter(m.SortedPrefixes)
		})
	case "ColumnRangeFilter":
		return decodeAs(func(m *hbasepb.ColumnRangeFilter) (Filter, error) {
			// proto2 optionals without defaults: an absent bound is open, an
			// absent inclusiveness false (HBase's getters).
			return NewColumnRangeFilter(m.MinColumn, m.GetMinColumnInclusive(), m.MaxColumn, m.GetMaxColumnInclusive()), nil
		})
	case "ColumnCountGetFilter":
		return decodeAs(func(m *hbasepb.ColumnCountGetFilter) (Filter, error) {
			if m.Limit == nil {
				return nil, errMissing("limit")
			}
			return NewColumnCountGetFilter(m.GetLimit())
		})
	case "ColumnPaginationFilter":
		return decodeAs(func(m *hbasepb.ColumnPaginationFilter) (Filter, error) {
			if m.Limit == nil {
				return nil, errMissing("limit")
			}
			if m.ColumnOffset != nil {
				return NewColumnPaginationFilterAt(m.GetLimit(), m.ColumnOffset)
			}
			return NewColumnPaginationFilter(m.GetLimit(), m.GetOffset())
		})
	case "TimestampsFilter":
		return decodeAs(func(m *hbasepb.TimestampsFilter) (Filter, error) {
			return NewTimestampsFilter(m.Timestamps, m.GetCanHint())
		})
	case "FirstKeyValueMatchingQualifiersFilter":
		return decodeAs(func(m *hbasepb.FirstKeyValueMatchingQualifiersFilter) (Filter, error) {
			return NewFirstKeyValueMatchingQualifiersFilter(m.Qualifiers), nil
		})
	case "InclusiveStopFilter":
		return decodeAs(func(m *hbasepb.InclusiveStopFilter) (Filter, error) {
			// An absent stop row is HBase's null: accepted here, an error at
			// the first row, as in HBase.
			return NewInclusiveStopFilter(m.StopRowKey), nil
		})
	case "RandomRowFilter":
		return decodeAs(func(m *hbasepb.RandomRowFilter) (Filter, error) {
			if m.Chance == nil {
				return nil, errMissing("chance")
			}
			return NewRandomRowFilter(m.GetChance()), nil
		})
	case "MultiRowRangeFilter":
		return decodeAs(func(m *hbasepb.MultiRowRangeFilter) (Filter, error) {
			ranges := make([]RowRange, 0, len(m.RowRangeList))
			for _, r := range m.RowRangeList {
				ranges = append(ranges, RowRange{StartRow: r.StartRow, StartRowInclusive: r.GetStartRowInclusive(),
					StopRow: r.StopRow, StopRowInclusive: r.GetStopRowInclusive()})
			}
			return NewMultiRowRangeFilter(ranges)
		})
	case "FuzzyRowFilter":
		return decodeAs(func(m *hbasepb.FuzzyRowFilter) (Filter, error) {
			keys := make([]FuzzyKey, 0, len(m.FuzzyKeysData))
			for i, p := range m.FuzzyKeysData {
				if p.First == nil || p.Second == nil {
					return nil, errors.Wrapf(errMissing("first and second"), "fuzzy_keys_data[%d]", i)
				}
				keys = append(keys, FuzzyKey{Key: p.First, Mask: p.Second})
			}
			return NewFuzzyRowFilter(keys)
		})
	case "SkipFilter":
		return decodeAs(func(m *hbasepb.SkipFilter) (Filter, error) {
			inner, err := wrappedFilterFromPB(m.Filter, depth)
			if err != nil {
				return nil, err
			}
			return NewSkipFilter(inner), nil
		})
	case "WhileMatchFilter":
		return decodeAs(func(m *hbasepb.WhileMatchFilter) (Filter, error) {
			inner, err := wrappedFilterFromPB(m.Filter, depth)
			if err != nil {
				return nil, err
			}
			return NewWhileMatchFilter(inner), nil
		})
	case "PageFilter":
		return decodeAs(func(m *hbasepb.PageFilter) (Filter, error) {
			if m.PageSize == nil {
				return nil, errMissing("page_size")
			}
			if size := m.GetPageSize(); size < 0 {
				// HBase's constructor: Preconditions.checkArgument(pageSize >= 0).
				return nil, errors.Newf("page size %d must be positive", size)
			}
			return NewPageFilter(m.GetPageSize()), nil
		})
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

func filterListFromPB(m *hbasepb.FilterList, depth int) (Filter, error) {
	op := FilterListOperator(m.GetOperator())
	if m.Operator == nil || (op != MustPassAll && op != MustPassOne) {
		return nil, errMissing("operator")
	}
	l := NewFilterList(op)
	for i, sub := range m.Filters {
		f, err := filterFromPB(sub, depth+1)
		if err != nil {
			return nil, errors.Wrapf(err, "filters[%d]", i)
		}
		l.AddFilter(f)
	}
	return l, nil
}

// compareFilterFromPB converts field 1 of RowFilter, FamilyFilter,
// QualifierFilter and ValueFilter.
func compareFilterFromPB(m *hbasepb.CompareFilter) (compareFilter, error) {
	if m == nil {
		return compareFilter{}, errMissing("compare_filter")
	}
	op, ok := compareOpFromPB(m.CompareOp)
	if !ok {
		return compareFilter{}, errMissing("compare_filter.compare_op")
	}
	cmp, err := ComparatorFromPB(m.Comparator)
	if err != nil {
		return compareFilter{}, errors.Wrap(err, "compare_filter.comparator")
	}
	return compareFilter{op: op, comparator: cmp}, nil
}

// wrappedFilterFromPB converts the required filter field of SkipFilter
// and WhileMatchFilter, one level deeper than the wrapper.
func wrappedFilterFromPB(m *hbasepb.Filter, depth int) (Filter, error) {
	if m == nil {
		return nil, errMissing("filter")
	}
	f, err := filterFromPB(m, depth+1)
	if err != nil {
		return nil, errors.Wrap(err, "filter")
	}
	return f, nil
}

func columnValueFilterFromPB(m *hbasepb.ColumnValueFilter) (Filter, error) {
	switch {
	case m.Family == nil:
		return nil, errMissing("family")
	case m.Qualifier == nil:
		return nil, errMissing("qualifier")
	case m.Comparator == nil:
		return nil, errMissing("comparator")
	}
	op, ok := compareOpFromPB(m.CompareOp)
	if !ok {
		return nil, errMissing("compare_op")
	}
	cmp, err := ComparatorFromPB(m.Comparator)
	if err != nil {
		return nil, errors.Wrap(err, "comparator")
	}
	return NewColumnValueFilter(m.Family, m.Qualifier, op, cmp)
}

func singleColumnValueFilterFromPB(m *hbasepb.SingleColumnValueFilter) (*SingleColumnValueFilter, error) {
	op, ok := compareOpFromPB(m.CompareOp)
	if !ok {
		return nil, errMissing("compare_op")
	}
	if m.Comparator == nil {
		return nil, errMissing("comparator")
	}
	cmp, err := ComparatorFromPB(m.Comparator)
	if err != nil {
		return nil, errors.Wrap(err, "comparator")
	}
	f := NewSingleColumnValueFilter(m.ColumnFamily, m.ColumnQualifier, op, cmp)
	// Both are proto2 optionals without a declared default: absent is false,
	// whatever the Java constructor's default.
	f.SetFilterIfMissing(m.GetFilterIfMissing())
	f.SetLatestVersionOnly(m.GetLatestVersionOnly())
	return f, nil
}

// compareOpFromPB returns the operator of a CompareType field; a value
// outside the enum counts as absent, as protobuf-java reads it.
func compareOpFromPB(t *hbasepb.CompareType) (CompareOp, bool) {
	if t == nil || !CompareOp(*t).valid() {
		return 0, false
	}
	return CompareOp(*t), true
}

// FilterToPB converts f to HBase's Filter message. f, and any filter or
// comparator inside it, must implement ProtoMarshaler.
func FilterToPB(f Filter) (*hbasepb.Filter, error) {
	m, ok := f.(ProtoMarshaler)
	if !ok {
		return nil, errors.Newf("filter: filter %T has no wire form", f)
	}
	body, err := marshalBody(m)
	if err != nil {
		return nil, err
	}
	return &hbasepb.Filter{Name: proto.String(m.ClassName()), SerializedFilter: body}, nil
}

// FilterToProto encodes f as the bytes of HBase's Filter message; see
// FilterToPB.
func FilterToProto(f Filter) ([]byte, error) {
	m, err := FilterToPB(f)
	if err != nil {
		return nil, err
	}
	return proto.Marshal(m)
}

// ComparatorFromProto builds a comparator from the bytes of HBase's
// Comparator message. Errors are marked ErrBadFilter.
func ComparatorFromProto(msg []byte) (ByteArrayComparable, error) {
	var m hbasepb.Comparator
	if err := unmarshal(msg, &m); err != nil {
		return nil, markBad(errors.Wrap(err, "decoding Comparator"))
	}
	return ComparatorFromPB(&m)
}

// ComparatorFromPB builds a comparator from HBase's Comparator message
// (HBase's ProtobufUtil.toComparator); a nil message is no comparator.
// Errors are marked ErrBadFilter.
func ComparatorFromPB(m *hbasepb.Comparator) (ByteArrayComparable, error) {
	if m == nil {
		return nil, nil
	}
	if m.Name == nil {
		return nil, badFilterf("decoding Comparator: missing required field name")
	}
	return DecodeComparator(m.GetName(), m.GetSerializedComparator())
}

// DecodeComparator builds a comparator from the two fields of HBase's
// Comparator message: its Java class name and its serialized_comparator.
// Errors are marked ErrBadFilter.
func DecodeComparator(name string, b []byte) (ByteArrayComparable, error) {
	decode := comparatorDecoder(name)
	if decode == nil {
		return nil, unknownClass("comparator", name)
	}
	c, err := decode(b)
	if err != nil {
		return nil, markBad(errors.Wrapf(err, "decoding %s", name))
	}
	return c, nil
}

// comparatorDecoder returns the decoder of the serialized_comparator of
// class name, nil if there is none.
func comparatorDecoder(name string) func([]byte) (ByteArrayComparable, error) {
	short, ok := strings.CutPrefix(name, filterPackage)
	if !ok {
		return nil
	}
	switch short {
	case "BinaryComparator":
		return decodeAs(func(m *hbasepb.BinaryComparator) (ByteArrayComparable, error) {
			if m.Comparable == nil {
				return nil, errMissing("comparable")
			}
			return NewBinaryComparator(m.Comparable.Value), nil
		})
	case "BinaryPrefixComparator":
		return decodeAs(func(m *hbasepb.BinaryPrefixComparator) (ByteArrayComparable, error) {
			if m.Comparable == nil {
				return nil, errMissing("comparable")
			}
			return NewBinaryPrefixComparator(m.Comparable.Value), nil
		})
	case "SubstringComparator":
		return decodeAs(func(m *hbasepb.SubstringComparator) (ByteArrayComparable, error) {
			if m.Substr == nil {
				return nil, errMissing("substr")
			}
			return NewSubstringComparator(m.GetSubstr()), nil
		})
	case "RegexStringComparator":
		return decodeAs(func(m *hbasepb.RegexStringComparator) (ByteArrayComparable, error) {
			switch {
			case m.Pattern == nil:
				return nil, errMissing("pattern")
			case m.PatternFlags == nil:
				return nil, errMissing("pattern_flags")
			case m.Charset == nil:
				return nil, errMissing("charset")
			}
			return NewRegexStringComparator(m.GetPattern(), m.GetPatternFlags(), m.GetCharset(), RegexEngine(m.GetEngine()))
		})
	case "NullComparator":
		return decodeAs(func(*hbasepb.NullComparator) (ByteArrayComparable, error) { return NewNullComparator(), nil })
	}
	return nil
}

// ComparatorToPB converts c to HBase's Comparator message; c must
// implement ProtoMarshaler.
func ComparatorToPB(c ByteArrayComparable) (*hbasepb.Comparator, error) {
	m, ok := c.(ProtoMarshaler)
	if !ok {
		return nil, errors.Newf("filter: comparator %T has no wire form", c)
	}
	body, err := marshalBody(m)
	if err != nil {
		return nil, err
	}
	return &hbasepb.Comparator{Name: proto.String(m.ClassName()), SerializedComparator: body}, nil
}

// ComparatorToProto encodes c as the bytes of HBase's Comparator message;
// see ComparatorToPB.
func ComparatorToProto(c ByteArrayComparable) ([]byte, error) {
	m, err := ComparatorToPB(c)
	if err != nil {
		return nil, err
	}
	return proto.Marshal(m)
}

// marshalBody returns m's serialized message, never nil: HBase always
// sends serialized_filter and serialized_comparator, empty or not.
func marshalBody(m ProtoMarshaler) ([]byte, error) {
	body, err := m.MarshalProto()
	if err != nil {
		return nil, err
	}
	if body == nil {
		body = []byte{}
	}
	return body, nil
}

// ClassName returns "org.apache.hadoop.hbase.filter.FilterList".
func (l *FilterList) ClassName() string { return filterPackage + "FilterList" }

// MarshalProto encodes the FilterList message.
func (l *FilterList) MarshalProto() ([]byte, error) {
	m := &hbasepb.FilterList{Operator: hbasepb.FilterList_Operator(l.op).Enum()}
	for _, f := range l.filters {
		sub, err := FilterToPB(f)
		if err != nil {
			return nil, err
		}
		m.Filters = append(m.Filters, sub)
	}
	return proto.Marshal(m)
}

// compareFilterPB converts the CompareFilter message the four compare
// filters hold as their field 1.
func (f *compareFilter) compareFilterPB() (*hbasepb.CompareFilter, error) {
	m := &hbasepb.CompareFilter{CompareOp: hbasepb.CompareType(f.op).Enum()}
	if f.comparator != nil {
		c, err := ComparatorToPB(f.comparator)
		if err != nil {
			return nil, err
		}
		m.Comparator = c
	}
	return m, nil
}

// ClassName returns "org.apache.hadoop.hbase.filter.RowFilter".
func (f *RowFilter) ClassName() string { return filterPackage + "RowFilter" }

// MarshalProto encodes the RowFilter message.
func (f *RowFilter) MarshalProto() ([]byte, error) {
	cf, err := f.compareFilterPB()
	if err != nil {
		return nil, err
	}
	return proto.Marshal(&hbasepb.RowFilter{CompareFilter: cf})
}

// ClassName returns "org.apache.hadoop.hbase.filter.FamilyFilter".
func (f *FamilyFilter) ClassName() string { return filterPackage + "FamilyFilter" }

// MarshalProto encodes the FamilyFilter message.
func (f *FamilyFilter) MarshalProto() ([]byte, error) {
	cf, err := f.compareFilterPB()
	if err != nil {
		return nil, err
	}
	return proto.Marshal(&hbasepb.FamilyFilter{CompareFilter: cf})
}

// ClassName returns "org.apache.hadoop.hbase.filter.QualifierFilter".
func (f *QualifierFilter) ClassName() string { return filterPackage + "QualifierFilter" }

// MarshalProto encodes the QualifierFilter message.
func (f *QualifierFilter) MarshalProto() ([]byte, error) {
	cf, err := f.compareFilterPB()
	if err != nil {
		return nil, err
	}
	return proto.Marshal(&hbasepb.QualifierFilter{CompareFilter: cf})
}

// ClassName returns "org.apache.hadoop.hbase.filter.ValueFilter".
func (f *ValueFilter) ClassName() string { return filterPackage + "ValueFilter" }

// MarshalProto encodes the ValueFilter message.
func (f *ValueFilter) MarshalProto() ([]byte, error) {
	cf, err := f.compareFilterPB()
	if err != nil {
		return nil, err
	}
	return proto.Marshal(&hbasepb.ValueFilter{CompareFilter: cf})
}

// ClassName returns "org.apache.hadoop.hbase.filter.SingleColumnValueFilter".
func (f *SingleColumnValueFilter) ClassName() string {
	return filterPackage + "SingleColumnValueFilter"
}

// MarshalProto encodes the SingleColumnValueFilter message; nil family and
// qualifier are left out.
func (f *SingleColumnValueFilter) MarshalProto() ([]byte, error) {
	m, err := f.pb()
	if err != nil {
		return nil, err
	}
	return proto.Marshal(m)
}

func (f *SingleColumnValueFilter) pb() (*hbasepb.SingleColumnValueFilter, error) {
	if f.comparator == nil {
		return nil, errors.New("filter: SingleColumnValueFilter without a comparator has no wire form")
	}
	c, err := ComparatorToPB(f.comparator)
	if err != nil {
		return nil, err
	}
	return &hbasepb.SingleColumnValueFilter{
		ColumnFamily:      f.family,
		ColumnQualifier:   f.qualifier,
		CompareOp:         hbasepb.CompareType(f.op).Enum(),
		Comparator:        c,
		FilterIfMissing:   proto.Bool(f.filterIfMissing),
		LatestVersionOnly: proto.Bool(f.latestVersionOnly),
	}, nil
}

// ClassName returns "org.apache.hadoop.hbase.filter.PrefixFilter".
func (f *PrefixFilter) ClassName() string { return filterPackage + "PrefixFilter" }

// MarshalProto encodes the PrefixFilter message; a nil prefix is left out.
func (f *PrefixFilter) MarshalProto() ([]byte, error) {
	return proto.Marshal(&hbasepb.PrefixFilter{Prefix: f.prefix})
}

// ClassName returns "org.apache.hadoop.hbase.filter.ColumnPrefixFilter".
func (f *ColumnPrefixFilter) ClassName() string { return filterPackage + "ColumnPrefixFilter" }

// MarshalProto encodes the ColumnPrefixFilter message. The prefix is
// required on the wire, so a nil one goes as empty.
func (f *ColumnPrefixFilter) MarshalProto() ([]byte, error) {
	return proto.Marshal(&hbasepb.ColumnPrefixFilter{Prefix: nonNil(f.prefix)})
}

// ClassName returns "org.apache.hadoop.hbase.filter.KeyOnlyFilter".
func (f *KeyOnlyFilter) ClassName() string { return filterPackage + "KeyOnlyFilter" }

// MarshalProto encodes the KeyOnlyFilter message.
func (f *KeyOnlyFilter) MarshalProto() ([]byte, error) {
	return proto.Marshal(&hbasepb.KeyOnlyFilter{LenAsVal: proto.Bool(f.lenAsVal)})
}

// ClassName returns "org.apache.hadoop.hbase.filter.FirstKeyOnlyFilter".
func (f *FirstKeyOnlyFilter) ClassName() string { return filterPackage + "FirstKeyOnlyFilter" }

// MarshalProto encodes the (empty) FirstKeyOnlyFilter message.
func (f *FirstKeyOnlyFilter) MarshalProto() ([]byte, error) {
	return proto.Marshal(&hbasepb.FirstKeyOnlyFilter{})
}

// ClassName returns "org.apache.hadoop.hbase.filter.PageFilter".
func (f *PageFilter) ClassName() string { return filterPackage + "PageFilter" }

// MarshalProto encodes the PageFilter message.
func (f *PageFilter) MarshalProto() ([]byte, error) {
	return proto.Marshal(&hbasepb.PageFilter{PageSize: proto.Int64(f.pageSize)})
}

// ClassName returns "org.apache.hadoop.hbase.filter.SingleColumnValueExcludeFilter".
func (f *SingleColumnValueExcludeFilter) ClassName() string {
	return filterPackage + "SingleColumnValueExcludeFilter"
}

// MarshalProto encodes the SingleColumnValueExcludeFilter message: the
// SingleColumnValueFilter message inside.
func (f *SingleColumnValueExcludeFilter) MarshalProto() ([]byte, error) {
	m, err := f.pb()
	if err != nil {
		return nil, err
	}
	return proto.Marshal(&hbasepb.SingleColumnValueExcludeFilter{SingleColumnValueFilter: m})
}

// ClassName returns "org.apache.hadoop.hbase.filter.ColumnValueFilter".
func (f *ColumnValueFilter) ClassName() string { return filterPackage + "ColumnValueFilter" }

// MarshalProto encodes the ColumnValueFilter message.
func (f *ColumnValueFilter) MarshalProto() ([]byte, error) {
	c, err := ComparatorToPB(f.comparator)
	if err != nil {
		return nil, err
	}
	return proto.Marshal(&hbasepb.ColumnValueFilter{Family: f.family, Qualifier: f.qualifier,
		CompareOp: hbasepb.CompareType(f.op).Enum(), Comparator: c})
}

// ClassName returns "org.apache.hadoop.hbase.filter.DependentColumnFilter".
func (f *DependentColumnFilter) ClassName() string { return filterPackage + "DependentColumnFilter" }

// MarshalProto encodes the DependentColumnFilter message; nil family and
// qualifier are left out, as HBase leaves out null.
func (f *DependentColumnFilter) MarshalProto() ([]byte, error) {
	cf, err := f.compareFilterPB()
	if err != nil {
		return nil, err
	}
	return proto.Marshal(&hbasepb.DependentColumnFilter{CompareFilter: cf, ColumnFamily: f.family,
		ColumnQualifier: f.qualifier, DropDependentColumn: proto.Bool(f.dropDependentColumn)})
}

// ClassName returns "org.apache.hadoop.hbase.filter.MultipleColumnPrefixFilter".
func (f *MultipleColumnPrefixFilter) ClassName() string {
	return filterPackage + "MultipleColumnPrefixFilter"
}

// MarshalProto encodes the MultipleColumnPrefixFilter message, prefixes
// sorted.
func (f *MultipleColumnPrefixFilter) MarshalProto() ([]byte, error) {
	return proto.Marshal(&hbasepb.MultipleColumnPrefixFilter{SortedPrefixes: f.prefixes})
}

// ClassName returns "org.apache.hadoop.hbase.filter.ColumnRangeFilter".
func (f *ColumnRangeFilter) ClassName() string { return filterPackage + "ColumnRangeFilter" }

// MarshalProto encodes the ColumnRangeFilter message; open bounds are left
// out.
func (f *ColumnRangeFilter) MarshalProto() ([]byte, error) {
	return proto.Marshal(&hbasepb.ColumnRangeFilter{MinColumn: f.minColumn, MinColumnInclusive: proto.Bool(f.minInclusive),
		MaxColumn: f.maxColumn, MaxColumnInclusive: proto.Bool(f.maxInclusive)})
}

// ClassName returns "org.apache.hadoop.hbase.filter.ColumnCountGetFilter".
func (f *ColumnCountGetFilter) ClassName() string { return filterPackage + "ColumnCountGetFilter" }

// MarshalProto encodes the ColumnCountGetFilter message.
func (f *ColumnCountGetFilter) MarshalProto() ([]byte, error) {
	return proto.Marshal(&hbasepb.ColumnCountGetFilter{Limit: proto.Int32(f.limit)})
}

// ClassName returns "org.apache.hadoop.hbase.filter.ColumnPaginationFilter".
func (f *ColumnPaginationFilter) ClassName() string { return filterPackage + "ColumnPaginationFilter" }

// MarshalProto encodes the ColumnPaginationFilter message: the limit, and
// the integer offset or the column offset, whichever the filter has.
func (f *ColumnPaginationFilter) MarshalProto() ([]byte, error) {
	m := &hbasepb.ColumnPaginationFilter{Limit: proto.Int32(f.limit), ColumnOffset: f.columnOffset}
	if f.offset >= 0 {
		m.Offset = proto.Int32(f.offset)
	}
	return proto.Marshal(m)
}

// ClassName returns "org.apache.hadoop.hbase.filter.TimestampsFilter".
func (f *TimestampsFilter) ClassName() string { return filterPackage + "TimestampsFilter" }

// MarshalProto encodes the TimestampsFilter message, timestamps ascending.
func (f *TimestampsFilter) MarshalProto() ([]byte, error) {
	return proto.Marshal(&hbasepb.TimestampsFilter{Timestamps: f.timestamps, CanHint: proto.Bool(f.canHint)})
}

// ClassName returns "org.apache.hadoop.hbase.filter.FirstKeyValueMatchingQualifiersFilter".
func (f *FirstKeyValueMatchingQualifiersFilter) ClassName() string {
	return filterPackage + "FirstKeyValueMatchingQualifiersFilter"
}

// MarshalProto encodes the FirstKeyValueMatchingQualifiersFilter message,
// qualifiers sorted.
func (f *FirstKeyValueMatchingQualifiersFilter) MarshalProto() ([]byte, error) {
	return proto.Marshal(&hbasepb.FirstKeyValueMatchingQualifiersFilter{Qualifiers: f.qualifiers})
}

// ClassName returns "org.apache.hadoop.hbase.filter.InclusiveStopFilter".
func (f *InclusiveStopFilter) ClassName() string { return filterPackage + "InclusiveStopFilter" }

// MarshalProto encodes the InclusiveStopFilter message; a nil stop row is
// left out.
func (f *InclusiveStopFilter) MarshalProto() ([]byte, error) {
	return proto.Marshal(&hbasepb.InclusiveStopFilter{StopRowKey: f.stopRow})
}

// ClassName returns "org.apache.hadoop.hbase.filter.RandomRowFilter".
func (f *RandomRowFilter) ClassName() string { return filterPackage + "RandomRowFilter" }

// MarshalProto encodes the RandomRowFilter message.
func (f *RandomRowFilter) MarshalProto() ([]byte, error) {
	return proto.Marshal(&hbasepb.RandomRowFilter{Chance: proto.Float32(f.chance)})
}

// ClassName returns "org.apache.hadoop.hbase.filter.MultiRowRangeFilter".
func (f *MultiRowRangeFilter) ClassName() string { return filterPackage + "MultiRowRangeFilter" }

// MarshalProto encodes the MultiRowRangeFilter message: the merged ranges,
// as HBase sends them.
func (f *MultiRowRangeFilter) MarshalProto() ([]byte, error) {
	m := &hbasepb.MultiRowRangeFilter{}
	for _, r := range f.ranges {
		m.RowRangeList = append(m.RowRangeList, &hbasepb.RowRange{
			StartRow: r.StartRow, StartRowInclusive: proto.Bool(r.StartRowInclusive),
			StopRow: r.StopRow, StopRowInclusive: proto.Bool(r.StopRowInclusive)})
	}
	return proto.Marshal(m)
}

// ClassName returns "org.apache.hadoop.hbase.filter.FuzzyRowFilter".
func (f *FuzzyRowFilter) ClassName() string { return filterPackage + "FuzzyRowFilter" }

// MarshalProto encodes the FuzzyRowFilter message with masks in the 0/1
// form, which every HBase version reads (its own client may send the
// preprocessed 0xFF/2 form instead).
func (f *FuzzyRowFilter) MarshalProto() ([]byte, error) {
	m := &hbasepb.FuzzyRowFilter{}
	for _, k := range f.keys {
		m.FuzzyKeysData = append(m.FuzzyKeysData, &hbasepb.BytesBytesPair{First: nonNil(k.Key), Second: nonNil(k.Mask)})
	}
	return proto.Marshal(m)
}

// ClassName returns "org.apache.hadoop.hbase.filter.SkipFilter".
func (f *SkipFilter) ClassName() string { return filterPackage + "SkipFilter" }

// MarshalProto encodes the SkipFilter message around the wrapped filter.
func (f *SkipFilter) MarshalProto() ([]byte, error) {
	inner, err := wrappedFilterToPB(f.filter)
	if err != nil {
		return nil, err
	}
	return proto.Marshal(&hbasepb.SkipFilter{Filter: inner})
}

// ClassName returns "org.apache.hadoop.hbase.filter.WhileMatchFilter".
func (f *WhileMatchFilter) ClassName() string { return filterPackage + "WhileMatchFilter" }

// MarshalProto encodes the WhileMatchFilter message around the wrapped
// filter.
func (f *WhileMatchFilter) MarshalProto() ([]byte, error) {
	inner, err := wrappedFilterToPB(f.filter)
	if err != nil {
		return nil, err
	}
	return proto.Marshal(&hbasepb.WhileMatchFilter{Filter: inner})
}

func wrappedFilterToPB(f Filter) (*hbasepb.Filter, error) {
	if f == nil {
		return nil, errors.New("filter: a wrapper filter without a filter has no wire form")
	}
	return FilterToPB(f)
}

// ClassName returns "org.apache.hadoop.hbase.filter.BinaryComparator".
func (c *BinaryComparator) ClassName() string { return filterPackage + "BinaryComparator" }

// MarshalProto encodes the BinaryComparator message; a nil value is left
// out, as HBase does with null.
func (c *BinaryComparator) MarshalProto() ([]byte, error) {
	return proto.Marshal(&hbasepb.BinaryComparator{Comparable: &hbasepb.ByteArrayComparable{Value: c.value}})
}

// ClassName returns "org.apache.hadoop.hbase.filter.BinaryPrefixComparator".
func (c *BinaryPrefixComparator) ClassName() string {
	return filterPackage + "BinaryPrefixComparator"
}

// MarshalProto encodes the BinaryPrefixComparator message; a nil value is
// left out.
func (c *BinaryPrefixComparator) MarshalProto() ([]byte, error) {
	return proto.Marshal(&hbasepb.BinaryPrefixComparator{Comparable: &hbasepb.ByteArrayComparable{Value: c.value}})
}

// ClassName returns "org.apache.hadoop.hbase.filter.SubstringComparator".
func (c *SubstringComparator) ClassName() string { return filterPackage + "SubstringComparator" }

// MarshalProto encodes the SubstringComparator message (the lowercased
// substring, as HBase sends it).
func (c *SubstringComparator) MarshalProto() ([]byte, error) {
	return proto.Marshal(&hbasepb.SubstringComparator{Substr: proto.String(c.substr)})
}

// ClassName returns "org.apache.hadoop.hbase.filter.RegexStringComparator".
func (c *RegexStringComparator) ClassName() string {
	return filterPackage + "RegexStringComparator"
}

// MarshalProto encodes the RegexStringComparator message.
func (c *RegexStringComparator) MarshalProto() ([]byte, error) {
	return proto.Marshal(&hbasepb.RegexStringComparator{
		Pattern:      proto.String(c.pattern),
		PatternFlags: proto.Int32(c.flags),
		Charset:      proto.String(c.charset),
		Engine:       proto.String(string(c.engine)),
	})
}

// ClassName returns "org.apache.hadoop.hbase.filter.NullComparator".
func (*NullComparator) ClassName() string { return filterPackage + "NullComparator" }

// MarshalProto encodes the (empty) NullComparator message.
func (*NullComparator) MarshalProto() ([]byte, error) {
	return proto.Marshal(&hbasepb.NullComparator{})
}

// unmarshalOptions leave required fields to the decoders above, which
// name the one missing.
var unmarshalOptions = proto.UnmarshalOptions{AllowPartial: true}

func unmarshal(b []byte, m proto.Message) error { return unmarshalOptions.Unmarshal(b, m) }

// decodeAs returns a decoder that unmarshals a class's message, a *T, and
// builds R from it.
func decodeAs[R, T any, M interface {
	*T
	proto.Message
}](build func(M) (R, error)) func([]byte) (R, error) {
	return func(b []byte) (R, error) {
		m := M(new(T))
		if err := unmarshal(b, m); err != nil {
			var zero R
			return zero, err
		}
		return build(m)
	}
}

func errMissing(field string) error {
	return errors.Newf("missing required field %s", errors.Safe(field))
}

func markBad(err error) error { return errors.Mark(err, ErrBadFilter) }
