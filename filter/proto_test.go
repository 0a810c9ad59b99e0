package filter

import (
	"testing"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/encoding"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protowire"
)

// Hand-built protobuf: tag bytes are written out, so these tests pin the
// field numbers and wire types of HBase's Filter.proto and Comparator.proto.
func ld(tag byte, body ...[]byte) []byte {
	v := []byte(nil)
	for _, b := range body {
		v = append(v, b...)
	}
	out := append([]byte{tag}, protowire.AppendVarint(nil, uint64(len(v)))...)
	return append(out, v...)
}

func s(v string) []byte { return []byte(v) }

// filterMsg is Filter{name = 1 (tag 0x0a), serialized_filter = 2 (tag 0x12)};
// Comparator has the same layout.
func filterMsg(class string, body ...[]byte) []byte {
	return append(ld(0x0a, s(filterPackage+class)), ld(0x12, body...)...)
}

func TestDecodeHandBuiltFilters(t *testing.T) {
	binary := func(v string) []byte { // Comparator{BinaryComparator{comparable{value}}}
		return filterMsg("BinaryComparator", ld(0x0a, ld(0x0a, s(v))))
	}
	for _, tc := range []struct {
		name  string
		msg   []byte
		check func(t *testing.T, f Filter)
	}{
		{"PrefixFilter", filterMsg("PrefixFilter", ld(0x0a, s("abc"))), func(t *testing.T, f Filter) {
			require.Equal(t, "abc", string(f.(*PrefixFilter).Prefix()))
		}},
		{"PrefixFilter without prefix", filterMsg("PrefixFilter"), func(t *testing.T, f Filter) {
			require.Nil(t, f.(*PrefixFilter).Prefix())
		}},
		{"ColumnPrefixFilter", filterMsg("ColumnPrefixFilter", ld(0x0a, s("q"))), func(t *testing.T, f Filter) {
			require.Equal(t, "q", string(f.(*ColumnPrefixFilter).Prefix()))
		}},
		{"KeyOnlyFilter", filterMsg("KeyOnlyFilter", []byte{0x08, 0x01}), func(t *testing.T, f Filter) {
			require.True(t, f.(*KeyOnlyFilter).LenAsVal())
		}},
		{"FirstKeyOnlyFilter", filterMsg("FirstKeyOnlyFilter"), func(t *testing.T, f Filter) {
			require.IsType(t, &FirstKeyOnlyFilter{}, f)
		}},
		{"PageFilter", filterMsg("PageFilter", []byte{0x08, 0xac, 0x02}), func(t *testing.T, f Filter) {
			require.Equal(t, int64(300), f.(*PageFilter).PageSize())
		}},
		{"RowFilter", filterMsg("RowFilter", ld(0x0a, []byte{0x08, 0x01}, ld(0x12, binary("m")))), func(t *testing.T, f Filter) {
			r := f.(*RowFilter)
			require.Equal(t, CompareLessOrEqual, r.Op())
			require.Equal(t, "m", string(r.Comparator().(*BinaryComparator).Value()))
		}},
		{"ValueFilter NO_OP without comparator", filterMsg("ValueFilter", ld(0x0a, []byte{0x08, 0x06})), func(t *testing.T, f Filter) {
			require.Equal(t, CompareNoOp, f.(*ValueFilter).Op())
			require.Nil(t, f.(*ValueFilter).Comparator())
		}},
		{"FamilyFilter substring", filterMsg("FamilyFilter", ld(0x0a, []byte{0x08, 0x03},
			ld(0x12, filterMsg("SubstringComparator", ld(0x0a, s("AbC")))))), func(t *testing.T, f Filter) {
			ff := f.(*FamilyFilter)
			require.Equal(t, CompareNotEqual, ff.Op())
			require.Equal(t, "abc", ff.Comparator().(*SubstringComparator).Substr(), "HBase lowercases on decode")
		}},
		{"QualifierFilter regex", filterMsg("QualifierFilter", ld(0x0a, []byte{0x08, 0x02},
			ld(0x12, filterMsg("RegexStringComparator", ld(0x0a, s("^a.c$")), []byte{0x10, 0x20},
				ld(0x1a, s("ISO-8859-1")), ld(0x22, s("JAVA")))))), func(t *testing.T, f Filter) {
			c := f.(*QualifierFilter).Comparator().(*RegexStringComparator)
			require.Equal(t, "^a.c$", c.Pattern())
			require.Equal(t, RegexDotAll, c.Flags())
			require.Equal(t, CharsetLatin1, c.Charset())
			require.Equal(t, RegexEngineJava, c.Engine())
		}},
		{"regex without engine", filterMsg("ValueFilter", ld(0x0a, []byte{0x08, 0x02},
			ld(0x12, filterMsg("RegexStringComparator", ld(0x0a, s("x")), []byte{0x10, 0x00}, ld(0x1a, s("")))))), func(t *testing.T, f Filter) {
			c := f.(*ValueFilter).Comparator().(*RegexStringComparator)
			require.Equal(t, CharsetUTF8, c.Charset())
			require.Equal(t, RegexEngineJava, c.Engine())
		}},
		{"SingleColumnValueFilter", filterMsg("SingleColumnValueFilter",
			ld(0x0a, s("f")), ld(0x12, s("q")), []byte{0x18, 0x05}, ld(0x22, filterMsg("BinaryPrefixComparator", ld(0x0a, ld(0x0a, s("v"))))),
			[]byte{0x28, 0x01}, []byte{0x30, 0x00}), func(t *testing.T, f Filter) {
			scvf := f.(*SingleColumnValueFilter)
			require.Equal(t, "f", string(scvf.Family()))
			require.Equal(t, "q", string(scvf.Qualifier()))
			require.Equal(t, CompareGreater, scvf.Op())
			require.Equal(t, "v", string(scvf.Comparator().(*BinaryPrefixComparator).Value()))
			require.True(t, scvf.FilterIfMissing())
			require.False(t, scvf.LatestVersionOnly())
		}},
		{"SingleColumnValueFilter with optionals absent", filterMsg("SingleColumnValueFilter",
			[]byte{0x18, 0x02}, ld(0x22, filterMsg("NullComparator"))), func(t *testing.T, f Filter) {
			scvf := f.(*SingleColumnValueFilter)
			require.Nil(t, scvf.Family())
			require.False(t, scvf.FilterIfMissing())
			require.False(t, scvf.LatestVersionOnly(), "proto2 default, not the Java constructor's")
			require.IsType(t, &NullComparator{}, scvf.Comparator())
		}},
		{"FilterList", filterMsg("FilterList", []byte{0x08, 0x02},
			ld(0x12, filterMsg("PrefixFilter", ld(0x0a, s("a")))),
			ld(0x12, filterMsg("FilterList", []byte{0x08, 0x01}, ld(0x12, filterMsg("FirstKeyOnlyFilter"))))), func(t *testing.T, f Filter) {
			l := f.(*FilterList)
			require.Equal(t, MustPassOne, l.Operator())
			require.Len(t, l.Filters(), 2)
			require.Equal(t, "a", string(l.Filters()[0].(*PrefixFilter).Prefix()))
			inner := l.Filters()[1].(*FilterList)
			require.Equal(t, MustPassAll, inner.Operator())
			require.IsType(t, &FirstKeyOnlyFilter{}, inner.Filters()[0])
		}},
		{"unknown fields and wire types are skipped", filterMsg("PrefixFilter",
			[]byte{0x08, 0x07}, ld(0x0a, s("old")), []byte{0x4d, 1, 2, 3, 4}, ld(0x0a, s("new")), ld(0x52, s("?"))), func(t *testing.T, f Filter) {
			require.Equal(t, "new", string(f.(*PrefixFilter).Prefix()), "the last occurrence wins")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := FilterFromProto(tc.msg)
			require.NoError(t, err)
			tc.check(t, f)
		})
	}
}

// TestFilterEncoding pins our encoder's bytes to the hand-built ones.
func TestFilterEncoding(t *testing.T) {
	b, err := FilterToProto(NewPrefixFilter([]byte("abc")))
	require.NoError(t, err)
	require.Equal(t, filterMsg("PrefixFilter", ld(0x0a, s("abc"))), b)

	scvf := NewSingleColumnValueFilter([]byte("f"), []byte("q"), CompareEqual, NewBinaryComparator([]byte("v")))
	b, err = FilterToProto(NewFilterList(MustPassAll, scvf, NewKeyOnlyFilter(false)))
	require.NoError(t, err)
	require.Equal(t, filterMsg("FilterList", []byte{0x08, 0x01},
		ld(0x12, filterMsg("SingleColumnValueFilter", ld(0x0a, s("f")), ld(0x12, s("q")), []byte{0x18, 0x02},
			ld(0x22, filterMsg("BinaryComparator", ld(0x0a, ld(0x0a, s("v"))))), []byte{0x28, 0x00}, []byte{0x30, 0x01})),
		ld(0x12, filterMsg("KeyOnlyFilter", []byte{0x08, 0x00}))), b)

	b, err = ComparatorToProto(mustRegex(t, "a+", DefaultRegexFlags, "", ""))
	require.NoError(t, err)
	require.Equal(t, filterMsg("RegexStringComparator", ld(0x0a, s("a+")), []byte{0x10, 0x20}, ld(0x1a, s("UTF-8")), ld(0x22, s("JAVA"))), b)

	_, err = FilterToProto(&stubFilter{})
	require.Error(t, err)
	_, err = FilterToProto(NewSingleColumnValueFilter(nil, nil, CompareEqual, nil))
	require.Error(t, err)
	_, err = FilterToProto(NewValueFilter(CompareEqual, stubComparator{}))
	require.Error(t, err)
}

// TestNewFilterEncoding pins the bytes of a few of our encodings: optional
// fields HBase leaves out, and the FuzzyRowFilter masks' 0/1 form.
func TestNewFilterEncoding(t *testing.T) {
	pin := func(f Filter, err error) func(want []byte) {
		return func(want []byte) {
			t.Helper()
			require.NoError(t, err)
			b, err := FilterToProto(f)
			require.NoError(t, err)
			require.Equal(t, want, b)
		}
	}
	pin(NewColumnPaginationFilterAt(2, []byte("q")))(filterMsg("ColumnPaginationFilter", []byte{0x08, 0x02}, ld(0x1a, s("q"))))
	pin(NewColumnPaginationFilter(2, 0))(filterMsg("ColumnPaginationFilter", []byte{0x08, 0x02, 0x10, 0x00}))
	pin(NewFuzzyRowFilter([]FuzzyKey{{Key: []byte("a\x00c"), Mask: []byte{0xff, 2, 0xff}}}))(
		filterMsg("FuzzyRowFilter", ld(0x0a, ld(0x0a, []byte("a\x00c")), ld(0x12, []byte{0, 1, 0}))))
	pin(NewTimestampsFilter([]int64{9, 3}, false))(filterMsg("TimestampsFilter", ld(0x0a, []byte{0x03, 0x09}), []byte{0x10, 0x00}))
	pin(NewColumnRangeFilter(nil, true, []byte("d"), false), nil)(
		filterMsg("ColumnRangeFilter", []byte{0x10, 0x01}, ld(0x1a, s("d")), []byte{0x20, 0x00}))
	pin(NewSkipFilter(NewFirstKeyOnlyFilter()), nil)(filterMsg("SkipFilter", ld(0x0a, filterMsg("FirstKeyOnlyFilter"))))

	_, err := FilterToProto(NewSkipFilter(nil))
	require.Error(t, err)
	_, err = FilterToProto(NewWhileMatchFilter(&stubFilter{}))
	require.Error(t, err)
}

type stubComparator struct{}

func (stubComparator) CompareTo([]byte) int { return 0 }

// roundTripFilters has one of every filter and comparator.
func roundTripFilters(t testing.TB) []Filter {
	scvf := NewSingleColumnValueFilter([]byte("f"), []byte("a"), CompareGreaterOrEqual, NewBinaryComparator([]byte("2")))
	scvf.SetFilterIfMissing(true)
	regex, err := NewRegexStringComparator("^r[0-9]$", RegexCaseInsensitive, "ISO-8859-1", RegexEngineJoni)
	require.NoError(t, err)
	filters := []Filter{
		NewPrefixFilter([]byte("r2")),
		NewPrefixFilter(nil),
		NewPrefixFilter([]byte{}),
		NewColumnPrefixFilter([]byte("b")),
		NewKeyOnlyFilter(true),
		NewKeyOnlyFilter(false),
		NewFirstKeyOnlyFilter(),
		NewPageFilter(2),
		NewRowFilter(CompareLess, NewBinaryComparator([]byte("r3"))),
		NewRowFilter(CompareEqual, regex),
		NewFamilyFilter(CompareNotEqual, NewBinaryPrefixComparator([]byte("g"))),
		NewQualifierFilter(CompareEqual, NewSubstringComparator("A")),
		NewValueFilter(CompareNotEqual, NewNullComparator()),
		NewValueFilter(CompareNoOp, nil),
		scvf,
		NewSingleColumnValueFilter(nil, nil, CompareEqual, NewBinaryComparator(nil)),
		NewFilterList(MustPassOne),
		NewFilterList(MustPassOne, NewPrefixFilter([]byte("r1")),
			NewFilterList(MustPassAll, NewPrefixFilter([]byte("r3")), NewQualifierFilter(CompareEqual, NewBinaryComparator([]byte("a"))))),
	}
	return append(filters, newRoundTripFilters(t)...)
}

// newRoundTripFilters has one or more of each filter beyond the first set.
func newRoundTripFilters(t testing.TB) []Filter {
	must := func(f Filter, err error) Filter {
		t.Helper()
		require.NoError(t, err)
		return f
	}
	scvef := NewSingleColumnValueExcludeFilter([]byte("f"), []byte("a"), CompareLess, NewBinaryComparator([]byte("2")))
	scvef.SetLatestVersionOnly(false)
	return []Filter{
		NewColumnRangeFilter([]byte("a"), true, []byte("b"), true),
		NewColumnRangeFilter(nil, false, []byte("b"), false),
		NewColumnRangeFilter([]byte("b"), false, nil, false),
		must(NewMultipleColumnPrefixFilter([][]byte{[]byte("b"), []byte("A")})),
		must(NewMultipleColumnPrefixFilter(nil)),
		must(NewColumnCountGetFilter(1)),
		must(NewColumnPaginationFilter(1, 1)),
		must(NewColumnPaginationFilterAt(2, []byte("b"))),
		must(NewColumnPaginationFilterAt(1, []byte{})),
		must(NewTimestampsFilter([]int64{2, 1}, false)),
		must(NewTimestampsFilter([]int64{1}, true)),
		must(NewTimestampsFilter(nil, false)),
		NewFirstKeyValueMatchingQualifiersFilter([][]byte{[]byte("ba")}),
		NewInclusiveStopFilter([]byte("r20")),
		NewRandomRowFilter(2),
		NewRandomRowFilter(-1),
		must(NewMultiRowRangeFilter([]RowRange{{StartRow: []byte("r2"), StartRowInclusive: true, StopRow: []byte("r3")},
			{StartRow: []byte("s"), StopRow: nil}})),
		must(NewMultiRowRangeFilterFromPrefixes([][]byte{[]byte("r1"), []byte("R")})),
		must(NewFuzzyRowFilter([]FuzzyKey{{Key: []byte("r?"), Mask: []byte{0, 1}}, {Key: []byte("?4"), Mask: []byte{1, 0}}})),
		must(NewFuzzyRowFilter(nil)),
		scvef,
		must(NewColumnValueFilter([]byte("f"), []byte("a"), CompareEqual, NewBinaryComparator([]byte("1")))),
		NewDependentColumnFilter([]byte("f"), []byte("a"), true, CompareNoOp, nil),
		NewDependentColumnFilter([]byte("g"), []byte("Ab"), false, CompareEqual, NewBinaryComparator([]byte("3"))),
		NewDependentColumnFilter(nil, nil, false, CompareNoOp, nil),
		NewSkipFilter(NewValueFilter(CompareNotEqual, NewBinaryComparator([]byte("3")))),
		NewWhileMatchFilter(NewRowFilter(CompareLess, NewBinaryComparator([]byte("r3")))),
		NewWhileMatchFilter(NewSkipFilter(NewFilterList(MustPassAll, NewPrefixFilter([]byte("r"))))),
	}
}

func roundTripCells() []*encoding.KeyValue {
	var cells []*encoding.KeyValue
	for _, row := range []string{"r1", "r2", "r20", "r3", "R4", "s"} {
		cells = append(cells, put(row, "f", "a", 2, "1"), put(row, "f", "a", 1, "2"), put(row, "f", "ba", 1, ""), put(row, "g", "Ab", 1, "3"))
	}
	return cells
}

func TestFilterRoundTrip(t *testing.T) {
	cells := roundTripCells()
	for i, f := range roundTripFilters(t) {
		b, err := FilterToProto(f)
		require.NoError(t, err, "%d: %T", i, f)
		g, err := FilterFromProto(b)
		require.NoError(t, err, "%d: %T", i, f)
		require.IsType(t, f, g)
		b2, err := FilterToProto(g)
		require.NoError(t, err)
		require.Equal(t, b, b2, "%d: %T", i, f)
		// The decoded filter behaves the same.
		require.Equal(t, fmtRows(regionScan(t, f, cells)), fmtRows(regionScan(t, g, cells)), "%d: %T", i, f)
	}
}

func TestDecodeFilterErrors(t *testing.T) {
	binary := filterMsg("BinaryComparator", ld(0x0a, ld(0x0a, s("v"))))
	for _, tc := range []struct {
		name string
		msg  []byte
		msgs []string
	}{
		{"unknown class", append(ld(0x0a, s("com.example.MyFilter")), ld(0x12)...),
			[]string{"java.lang.ClassNotFoundException: com.example.MyFilter"}},
		{"HBase filter we lack", filterMsg("FilterAllFilter"),
			[]string{"org.apache.hadoop.hbase.filter.FilterAllFilter is not supported"}},
		{"short name", append(ld(0x0a, s("PrefixFilter")), ld(0x12)...),
			[]string{"java.lang.ClassNotFoundException: PrefixFilter"}},
		{"unknown comparator", filterMsg("ValueFilter", ld(0x0a, []byte{0x08, 0x02}, ld(0x12, filterMsg("LongComparator", ld(0x0a, ld(0x0a, s("v"))))))),
			[]string{"decoding org.apache.hadoop.hbase.filter.ValueFilter", "comparator org.apache.hadoop.hbase.filter.LongComparator is not supported"}},
		{"unknown nested filter", filterMsg("FilterList", []byte{0x08, 0x01}, ld(0x12, filterMsg("PrefixFilter")), ld(0x12, filterMsg("FilterWrapper"))),
			[]string{"filters[1]", "FilterWrapper is not supported"}},
		{"no name", ld(0x12), []string{"missing required field name"}},
		{"truncated envelope", filterMsg("PrefixFilter", ld(0x0a, s("abc")))[:10], []string{"decoding Filter"}},
		{"truncated body", filterMsg("PrefixFilter", []byte{0x0a, 0x05, 'a'}), []string{"decoding org.apache.hadoop.hbase.filter.PrefixFilter"}},
		{"bad tag", filterMsg("PrefixFilter", []byte{0x00}), []string{"PrefixFilter"}},
		{"KeyOnlyFilter without len_as_val", filterMsg("KeyOnlyFilter"), []string{"missing required field len_as_val"}},
		{"ColumnPrefixFilter without prefix", filterMsg("ColumnPrefixFilter"), []string{"missing required field prefix"}},
		{"PageFilter without size", filterMsg("PageFilter"), []string{"missing required field page_size"}},
		{"negative page size", filterMsg("PageFilter", protowire.AppendVarint([]byte{0x08}, uint64(1<<64-1))), []string{"page size -1 must be positive"}},
		{"FilterList without operator", filterMsg("FilterList"), []string{"missing required field operator"}},
		{"FilterList with operator 3", filterMsg("FilterList", []byte{0x08, 0x03}), []string{"missing required field operator"}},
		{"RowFilter without CompareFilter", filterMsg("RowFilter"), []string{"missing required field compare_filter"}},
		{"CompareType 7", filterMsg("RowFilter", ld(0x0a, []byte{0x08, 0x07}, ld(0x12, binary))), []string{"compare_filter.compare_op"}},
		{"SingleColumnValueFilter without comparator", filterMsg("SingleColumnValueFilter", []byte{0x18, 0x02}), []string{"missing required field comparator"}},
		{"SingleColumnValueFilter without op", filterMsg("SingleColumnValueFilter", ld(0x22, binary)), []string{"missing required field compare_op"}},
		{"BinaryComparator without comparable", filterMsg("ValueFilter", ld(0x0a, []byte{0x08, 0x02}, ld(0x12, filterMsg("BinaryComparator")))),
			[]string{"missing required field comparable"}},
		{"SubstringComparator without substr", filterMsg("ValueFilter", ld(0x0a, []byte{0x08, 0x02}, ld(0x12, filterMsg("SubstringComparator")))),
			[]string{"missing required field substr"}},
		{"RegexStringComparator without charset", filterMsg("ValueFilter", ld(0x0a, []byte{0x08, 0x02},
			ld(0x12, filterMsg("RegexStringComparator", ld(0x0a, s("x")), []byte{0x10, 0x00})))), []string{"missing required field charset"}},
		{"Java-only regex", filterMsg("ValueFilter", ld(0x0a, []byte{0x08, 0x02},
			ld(0x12, filterMsg("RegexStringComparator", ld(0x0a, s("(?<=a)b")), []byte{0x10, 0x00}, ld(0x1a, s("UTF-8")))))), []string{`pattern "(?<=a)b"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := FilterFromProto(tc.msg)
			require.Error(t, err)
			require.Nil(t, f)
			require.True(t, errors.Is(err, ErrBadFilter), err)
			for _, m := range tc.msgs {
				require.Contains(t, err.Error(), m)
			}
		})
	}
}

func TestDecodeFilterDepth(t *testing.T) {
	nest := func(depth int) []byte {
		msg := filterMsg("FirstKeyOnlyFilter")
		for i := 0; i < depth; i++ {
			msg = filterMsg("FilterList", []byte{0x08, 0x01}, ld(0x12, msg))
		}
		return msg
	}
	_, err := FilterFromProto(nest(maxFilterDepth - 1))
	require.NoError(t, err)
	_, err = FilterFromProto(nest(maxFilterDepth))
	require.True(t, errors.Is(err, ErrBadFilter), err)
	require.Contains(t, err.Error(), "nested")
}

func TestDecodeFilterAndComparatorByName(t *testing.T) {
	f, err := DecodeFilter(filterPackage+"PageFilter", []byte{0x08, 0x05})
	require.NoError(t, err)
	require.Equal(t, int64(5), f.(*PageFilter).PageSize())
	c, err := DecodeComparator(filterPackage+"SubstringComparator", ld(0x0a, s("X")))
	require.NoError(t, err)
	require.Equal(t, "x", c.(*SubstringComparator).Substr())
	_, err = DecodeComparator("java.lang.String", nil)
	require.EqualError(t, err, "java.lang.ClassNotFoundException: java.lang.String")
	_, err = ComparatorFromProto([]byte{0xff})
	require.True(t, errors.Is(err, ErrBadFilter), err)

	for _, c := range []ByteArrayComparable{
		NewBinaryComparator([]byte("x")), NewBinaryComparator(nil), NewBinaryPrefixComparator([]byte("y")),
		NewSubstringComparator("Zz"), NewNullComparator(), mustRegex(t, "a|b", RegexLiteral, "ascii", ""),
	} {
		b, err := ComparatorToProto(c)
		require.NoError(t, err)
		d, err := ComparatorFromProto(b)
		require.NoError(t, err)
		b2, err := ComparatorToProto(d)
		require.NoError(t, err)
		require.Equal(t, b, b2, "%T", c)
		for _, v := range []string{"", "x", "y", "zz", "a|b", "b"} {
			require.Equal(t, c.CompareTo([]byte(v)), d.CompareTo([]byte(v)), "%T vs %q", c, v)
		}
	}
}

// FuzzFilterFromProto: any bytes either decode to a filter that re-encodes
// stably and runs over cells, or give an ErrBadFilter error; never a panic.
func FuzzFilterFromProto(f *testing.F) {
	for _, flt := range roundTripFilters(f) {
		b, err := FilterToProto(flt)
		require.NoError(f, err)
		f.Add(b)
	}
	f.Add(filterMsg("FilterList", []byte{0x08, 0x02}, ld(0x12, filterMsg("SingleColumnValueFilter",
		[]byte{0x18, 0x02}, ld(0x22, filterMsg("RegexStringComparator", ld(0x0a, s("a.*")), []byte{0x10, 0x22}, ld(0x1a, s("latin1"))))))))
	f.Add([]byte{})
	cells := roundTripCells()
	f.Fuzz(func(t *testing.T, data []byte) {
		flt, err := FilterFromProto(data)
		if err != nil {
			if !errors.Is(err, ErrBadFilter) {
				t.Fatalf("error not marked ErrBadFilter: %v", err)
			}
			return
		}
		b, err := FilterToProto(flt)
		if err != nil {
			t.Fatalf("decoded filter %T does not encode: %v", flt, err)
		}
		again, err := FilterFromProto(b)
		if err != nil {
			t.Fatalf("re-decoding: %v", err)
		}
		if b2, err := FilterToProto(again); err != nil || string(b2) != string(b) {
			t.Fatalf("unstable encoding: %x then %x (%v)", b, b2, err)
		}
		runFilterLoosely(flt, cells)
	})
}

// runFilterLoosely calls every method of f over cells, ignoring errors
// (a decoded NO_OP SingleColumnValueFilter errors by design), to find panics.
func runFilterLoosely(f Filter, cells []*encoding.KeyValue) {
	for _, reversed := range []bool{false, true} {
		f.SetReversed(reversed)
		var row []*encoding.KeyValue
		for i, kv := range cells {
			if i == 0 || string(cells[i-1].Row) != string(kv.Row) {
				_, _ = f.FilterRowKey(kv.Row)
			}
			_ = f.FilterAllRemaining()
			if rc, err := f.FilterCell(kv); err == nil && rc.Includes() {
				row = append(row, f.TransformCell(kv).Clone())
			}
			_ = f.NextCellHint(kv)
			_ = f.IsFamilyEssential(kv.Family)
			if i+1 == len(cells) || string(cells[i+1].Row) != string(kv.Row) {
				if f.HasFilterRow() {
					row = f.FilterRowCells(row)
				}
				_ = f.FilterRow()
				f.Reset()
				row = row[:0]
			}
		}
	}
}

// TestDecodeHandBuiltNewFilters pins the field numbers and wire types of
// the rest of HBase's filter messages.
func TestDecodeHandBuiltNewFilters(t *testing.T) {
	binary := func(v string) []byte { return filterMsg("BinaryComparator", ld(0x0a, ld(0x0a, s(v)))) }
	for _, tc := range []struct {
		name  string
		msg   []byte
		check func(t *testing.T, f Filter)
	}{
		{"ColumnCountGetFilter", filterMsg("ColumnCountGetFilter", []byte{0x08, 0x03}), func(t *testing.T, f Filter) {
			require.Equal(t, int32(3), f.(*ColumnCountGetFilter).Limit())
		}},
		{"ColumnPaginationFilter offset", filterMsg("ColumnPaginationFilter", []byte{0x08, 0x02, 0x10, 0x05}), func(t *testing.T, f Filter) {
			p := f.(*ColumnPaginationFilter)
			require.Equal(t, int32(2), p.Limit())
			require.Equal(t, int32(5), p.Offset())
			require.Nil(t, p.ColumnOffset())
		}},
		{"ColumnPaginationFilter without offset", filterMsg("ColumnPaginationFilter", []byte{0x08, 0x02}), func(t *testing.T, f Filter) {
			require.Equal(t, int32(0), f.(*ColumnPaginationFilter).Offset(), "proto2 default")
		}},
		{"ColumnPaginationFilter column offset", filterMsg("ColumnPaginationFilter", []byte{0x08, 0x02}, ld(0x1a, s("q"))), func(t *testing.T, f Filter) {
			p := f.(*ColumnPaginationFilter)
			require.Equal(t, "q", string(p.ColumnOffset()))
			require.Equal(t, int32(-1), p.Offset())
		}},
		{"ColumnPaginationFilter empty column offset", filterMsg("ColumnPaginationFilter", []byte{0x08, 0x02}, ld(0x1a)), func(t *testing.T, f Filter) {
			require.NotNil(t, f.(*ColumnPaginationFilter).ColumnOffset(), "present though empty")
		}},
		{"ColumnRangeFilter", filterMsg("ColumnRangeFilter", ld(0x0a, s("b")), []byte{0x10, 0x01}, ld(0x1a, s("d")), []byte{0x20, 0x00}), func(t *testing.T, f Filter) {
			r := f.(*ColumnRangeFilter)
			require.Equal(t, "b", string(r.MinColumn()))
			require.True(t, r.MinColumnInclusive())
			require.Equal(t, "d", string(r.MaxColumn()))
			require.False(t, r.MaxColumnInclusive())
		}},
		{"ColumnRangeFilter open", filterMsg("ColumnRangeFilter"), func(t *testing.T, f Filter) {
			r := f.(*ColumnRangeFilter)
			require.Nil(t, r.MinColumn())
			require.Nil(t, r.MaxColumn())
		}},
		{"DependentColumnFilter", filterMsg("DependentColumnFilter", ld(0x0a, []byte{0x08, 0x02}, ld(0x12, binary("on"))),
			ld(0x12, s("g")), ld(0x1a, s("d")), []byte{0x20, 0x01}), func(t *testing.T, f Filter) {
			d := f.(*DependentColumnFilter)
			require.Equal(t, "g", string(d.Family()))
			require.Equal(t, "d", string(d.Qualifier()))
			require.True(t, d.DropDependentColumn())
			require.Equal(t, CompareEqual, d.Op())
			require.Equal(t, "on", string(d.Comparator().(*BinaryComparator).Value()))
		}},
		{"DependentColumnFilter NO_OP", filterMsg("DependentColumnFilter", ld(0x0a, []byte{0x08, 0x06})), func(t *testing.T, f Filter) {
			d := f.(*DependentColumnFilter)
			require.Nil(t, d.Family())
			require.False(t, d.DropDependentColumn())
			require.Nil(t, d.Comparator())
		}},
		{"FirstKeyValueMatchingQualifiersFilter", filterMsg("FirstKeyValueMatchingQualifiersFilter", ld(0x0a, s("b")), ld(0x0a, s("a"))), func(t *testing.T, f Filter) {
			require.Equal(t, [][]byte{s("a"), s("b")}, f.(*FirstKeyValueMatchingQualifiersFilter).Qualifiers())
		}},
		{"FuzzyRowFilter", filterMsg("FuzzyRowFilter", ld(0x0a, ld(0x0a, s("a?c")), ld(0x12, []byte{0, 1, 0})),
			ld(0x0a, ld(0x0a, []byte{'x', 0}), ld(0x12, []byte{0xff, 0x02}))), func(t *testing.T, f Filter) {
			require.Equal(t, []FuzzyKey{{Key: s("a?c"), Mask: []byte{0, 1, 0}}, {Key: []byte{'x', 0}, Mask: []byte{0, 1}}}, f.(*FuzzyRowFilter).Keys())
		}},
		{"InclusiveStopFilter", filterMsg("InclusiveStopFilter", ld(0x0a, s("m"))), func(t *testing.T, f Filter) {
			require.Equal(t, "m", string(f.(*InclusiveStopFilter).StopRow()))
		}},
		{"InclusiveStopFilter without stop", filterMsg("InclusiveStopFilter"), func(t *testing.T, f Filter) {
			require.Nil(t, f.(*InclusiveStopFilter).StopRow())
		}},
		{"MultipleColumnPrefixFilter", filterMsg("MultipleColumnPrefixFilter", ld(0x0a, s("b")), ld(0x0a, s("a"))), func(t *testing.T, f Filter) {
			require.Equal(t, [][]byte{s("a"), s("b")}, f.(*MultipleColumnPrefixFilter).Prefixes())
		}},
		{"RandomRowFilter", filterMsg("RandomRowFilter", []byte{0x0d, 0x00, 0x00, 0x00, 0x3f}), func(t *testing.T, f Filter) {
			require.Equal(t, float32(0.5), f.(*RandomRowFilter).Chance())
		}},
		{"SingleColumnValueExcludeFilter", filterMsg("SingleColumnValueExcludeFilter", ld(0x0a,
			ld(0x0a, s("f")), ld(0x12, s("q")), []byte{0x18, 0x03}, ld(0x22, binary("v")), []byte{0x28, 0x01})), func(t *testing.T, f Filter) {
			e := f.(*SingleColumnValueExcludeFilter)
			require.Equal(t, "f", string(e.Family()))
			require.Equal(t, CompareNotEqual, e.Op())
			require.True(t, e.FilterIfMissing())
			require.False(t, e.LatestVersionOnly())
		}},
		{"SkipFilter", filterMsg("SkipFilter", ld(0x0a, filterMsg("PrefixFilter", ld(0x0a, s("p"))))), func(t *testing.T, f Filter) {
			require.Equal(t, "p", string(f.(*SkipFilter).Filter().(*PrefixFilter).Prefix()))
		}},
		{"WhileMatchFilter", filterMsg("WhileMatchFilter", ld(0x0a, filterMsg("FirstKeyOnlyFilter"))), func(t *testing.T, f Filter) {
			require.IsType(t, &FirstKeyOnlyFilter{}, f.(*WhileMatchFilter).Filter())
		}},
		{"TimestampsFilter packed", filterMsg("TimestampsFilter", ld(0x0a, []byte{0x09, 0x03, 0x09}), []byte{0x10, 0x01}), func(t *testing.T, f Filter) {
			ts := f.(*TimestampsFilter)
			require.Equal(t, []int64{3, 9}, ts.Timestamps())
			require.True(t, ts.CanHint())
		}},
		{"TimestampsFilter unpacked", filterMsg("TimestampsFilter", []byte{0x08, 0x07, 0x08, 0x02}), func(t *testing.T, f Filter) {
			ts := f.(*TimestampsFilter)
			require.Equal(t, []int64{2, 7}, ts.Timestamps())
			require.False(t, ts.CanHint())
		}},
		{"MultiRowRangeFilter", filterMsg("MultiRowRangeFilter",
			ld(0x0a, ld(0x0a, s("c")), []byte{0x10, 0x01}, ld(0x1a, s("d")), []byte{0x20, 0x00}),
			ld(0x0a, []byte{0x10, 0x01}, ld(0x1a, s("b")), []byte{0x20, 0x01})), func(t *testing.T, f Filter) {
			require.Equal(t, "[[, b] [c, d)]", f.(*MultiRowRangeFilter).String())
		}},
		{"ColumnValueFilter", filterMsg("ColumnValueFilter", ld(0x0a, s("f")), ld(0x12, s("q")), []byte{0x18, 0x04}, ld(0x22, binary("5"))), func(t *testing.T, f Filter) {
			c := f.(*ColumnValueFilter)
			require.Equal(t, "f", string(c.Family()))
			require.Equal(t, "q", string(c.Qualifier()))
			require.Equal(t, CompareGreaterOrEqual, c.Op())
			require.Equal(t, "5", string(c.Comparator().(*BinaryComparator).Value()))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := FilterFromProto(tc.msg)
			require.NoError(t, err)
			tc.check(t, f)
		})
	}
}

func TestDecodeNewFilterErrors(t *testing.T) {
	binary := filterMsg("BinaryComparator", ld(0x0a, ld(0x0a, s("v"))))
	neg := protowire.AppendVarint(nil, uint64(1<<64-1)) // int32 -1
	for _, tc := range []struct {
		name string
		msg  []byte
		msgs []string
	}{
		{"ColumnCountGetFilter without limit", filterMsg("ColumnCountGetFilter"), []string{"missing required field limit"}},
		{"ColumnCountGetFilter negative", filterMsg("ColumnCountGetFilter", append([]byte{0x08}, neg...)), []string{"limit -1 must be positive"}},
		{"ColumnPaginationFilter without limit", filterMsg("ColumnPaginationFilter", []byte{0x10, 0x01}), []string{"missing required field limit"}},
		{"ColumnPaginationFilter negative offset", filterMsg("ColumnPaginationFilter", []byte{0x08, 0x01, 0x10}, neg), []string{"must be positive"}},
		{"DependentColumnFilter without CompareFilter", filterMsg("DependentColumnFilter", ld(0x12, s("g"))), []string{"missing required field compare_filter"}},
		{"FuzzyRowFilter lengths", filterMsg("FuzzyRowFilter", ld(0x0a, ld(0x0a, s("ab")), ld(0x12, []byte{0}))), []string{"lengths do not match"}},
		{"FuzzyRowFilter mask byte", filterMsg("FuzzyRowFilter", ld(0x0a, ld(0x0a, s("a")), ld(0x12, []byte{7}))), []string{"mask byte 0 of pair 0 is 0x7"}},
		{"FuzzyRowFilter half a pair", filterMsg("FuzzyRowFilter", ld(0x0a, ld(0x0a, s("a")))), []string{"fuzzy_keys_data[0]", "missing required field"}},
		{"MultipleColumnPrefixFilter duplicates", filterMsg("MultipleColumnPrefixFilter", ld(0x0a, s("a")), ld(0x0a, s("a"))), []string{"distinct"}},
		{"RandomRowFilter without chance", filterMsg("RandomRowFilter"), []string{"missing required field chance"}},
		{"SingleColumnValueExcludeFilter empty", filterMsg("SingleColumnValueExcludeFilter"), []string{"missing required field single_column_value_filter"}},
		{"SingleColumnValueExcludeFilter without comparator", filterMsg("SingleColumnValueExcludeFilter", ld(0x0a, []byte{0x18, 0x02})),
			[]string{"single_column_value_filter", "missing required field comparator"}},
		{"SkipFilter without filter", filterMsg("SkipFilter"), []string{"missing required field filter"}},
		{"WhileMatchFilter with a bad filter", filterMsg("WhileMatchFilter", ld(0x0a, filterMsg("PageFilter"))), []string{"filter", "page_size"}},
		{"TimestampsFilter negative", filterMsg("TimestampsFilter", []byte{0x08, 0x01, 0x08}, protowire.AppendVarint(nil, uint64(1<<64-5))), []string{"timestamp -5 must be positive"}},
		{"MultiRowRangeFilter empty", filterMsg("MultiRowRangeFilter"), []string{"no ranges"}},
		{"MultiRowRangeFilter invalid", filterMsg("MultiRowRangeFilter", ld(0x0a, ld(0x0a, s("d")), ld(0x1a, s("c")))), []string{"1 invalid ranges"}},
		{"ColumnValueFilter without qualifier", filterMsg("ColumnValueFilter", ld(0x0a, s("f")), []byte{0x18, 0x02}, ld(0x22, binary)), []string{"missing required field qualifier"}},
		{"ColumnValueFilter without op", filterMsg("ColumnValueFilter", ld(0x0a, s("f")), ld(0x12, s("q")), ld(0x22, binary)), []string{"missing required field compare_op"}},
		{"ColumnValueFilter without comparator", filterMsg("ColumnValueFilter", ld(0x0a, s("f")), ld(0x12, s("q")), []byte{0x18, 0x02}), []string{"missing required field comparator"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := FilterFromProto(tc.msg)
			require.Error(t, err)
			require.Nil(t, f)
			require.True(t, errors.Is(err, ErrBadFilter), err)
			for _, m := range tc.msgs {
				require.Contains(t, err.Error(), m)
			}
		})
	}
}

// TestDecodeWrapperDepth: SkipFilter and WhileMatchFilter nest like
// FilterList, under the same bound.
func TestDecodeWrapperDepth(t *testing.T) {
	nest := func(depth int) []byte {
		msg := filterMsg("FirstKeyOnlyFilter")
		for i := 0; i < depth; i++ {
			msg = filterMsg([]string{"SkipFilter", "WhileMatchFilter"}[i%2], ld(0x0a, msg))
		}
		return msg
	}
	_, err := FilterFromProto(nest(maxFilterDepth - 1))
	require.NoError(t, err)
	_, err = FilterFromProto(nest(maxFilterDepth))
	require.True(t, errors.Is(err, ErrBadFilter), err)
	require.Contains(t, err.Error(), "nested")
}
