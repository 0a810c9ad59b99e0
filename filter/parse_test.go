package filter

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/errors"
	"github.com/stretchr/testify/require"
)

// render writes a filter tree compactly, for comparing parses.
func render(f Filter) string {
	cmp := func(c ByteArrayComparable) string {
		switch c := c.(type) {
		case *BinaryComparator:
			return fmt.Sprintf("binary:%q", c.Value())
		case *BinaryPrefixComparator:
			return fmt.Sprintf("binaryprefix:%q", c.Value())
		case *SubstringComparator:
			return fmt.Sprintf("substring:%q", c.Substr())
		case *RegexStringComparator:
			return fmt.Sprintf("regexstring:%q/%#x", c.Pattern(), c.Flags())
		case nil:
			return "nil"
		}
		return fmt.Sprintf("%T", c)
	}
	switch f := f.(type) {
	case *FilterList:
		var parts []string
		for _, s := range f.Filters() {
			parts = append(parts, render(s))
		}
		op := "AND"
		if f.Operator() == MustPassOne {
			op = "OR"
		}
		return op + "(" + strings.Join(parts, ", ") + ")"
	case *SkipFilter:
		return "SKIP(" + render(f.filter) + ")"
	case *WhileMatchFilter:
		return "WHILE(" + render(f.filter) + ")"
	case *KeyOnlyFilter:
		return fmt.Sprintf("KeyOnly(%v)", f.LenAsVal())
	case *FirstKeyOnlyFilter:
		return "FirstKeyOnly"
	case *PrefixFilter:
		return fmt.Sprintf("Prefix(%q)", f.Prefix())
	case *ColumnPrefixFilter:
		return fmt.Sprintf("ColumnPrefix(%q)", f.Prefix())
	case *MultipleColumnPrefixFilter:
		return fmt.Sprintf("MultipleColumnPrefix(%q)", f.Prefixes())
	case *ColumnCountGetFilter:
		return fmt.Sprintf("ColumnCountGet(%d)", f.Limit())
	case *PageFilter:
		return fmt.Sprintf("Page(%d)", f.PageSize())
	case *ColumnPaginationFilter:
		return fmt.Sprintf("ColumnPagination(%d, %d)", f.Limit(), f.Offset())
	case *InclusiveStopFilter:
		return fmt.Sprintf("InclusiveStop(%q)", f.StopRow())
	case *TimestampsFilter:
		return fmt.Sprintf("Timestamps(%v)", f.Timestamps())
	case *RowFilter:
		return fmt.Sprintf("Row(%v, %s)", f.Op(), cmp(f.Comparator()))
	case *FamilyFilter:
		return fmt.Sprintf("Family(%v, %s)", f.Op(), cmp(f.Comparator()))
	case *QualifierFilter:
		return fmt.Sprintf("Qualifier(%v, %s)", f.Op(), cmp(f.Comparator()))
	case *ValueFilter:
		return fmt.Sprintf("Value(%v, %s)", f.Op(), cmp(f.Comparator()))
	case *ColumnRangeFilter:
		return fmt.Sprintf("ColumnRange(%q, %v, %q, %v)", f.MinColumn(), f.MinColumnInclusive(), f.MaxColumn(), f.MaxColumnInclusive())
	case *SingleColumnValueExcludeFilter:
		return fmt.Sprintf("SingleColumnValueExclude(%q, %q, %v, %s, %v, %v)", f.Family(), f.Qualifier(), f.Op(),
			cmp(f.Comparator()), f.FilterIfMissing(), f.LatestVersionOnly())
	case *SingleColumnValueFilter:
		return fmt.Sprintf("SingleColumnValue(%q, %q, %v, %s, %v, %v)", f.Family(), f.Qualifier(), f.Op(),
			cmp(f.Comparator()), f.FilterIfMissing(), f.LatestVersionOnly())
	case *DependentColumnFilter:
		return fmt.Sprintf("DependentColumn(%q, %q, %v, %v, %s)", f.Family(), f.Qualifier(), f.DropDependentColumn(), f.Op(), cmp(f.Comparator()))
	case *ColumnValueFilter:
		return fmt.Sprintf("ColumnValue(%q, %q, %v, %s)", f.Family(), f.Qualifier(), f.Op(), cmp(f.Comparator()))
	}
	return fmt.Sprintf("%T", f)
}

// TestParseFilter parses the examples of HBase's filter language chapter
// (and TestParseFilter's cases) and checks the tree each gives.
func TestParseFilter(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"KeyOnlyFilter ()", "KeyOnly(false)"},
		{"KeyOnlyFilter(true)", "KeyOnly(true)"},
		{"FirstKeyOnlyFilter ()", "FirstKeyOnly"},
		{"PrefixFilter ('Row')", `Prefix("Row")`},
		{"PrefixFilter('it''s')", `Prefix("it's")`},
		{"PrefixFilter('a)b')", `Prefix("a)b")`},
		{"ColumnPrefixFilter ('Col')", `ColumnPrefix("Col")`},
		{"MultipleColumnPrefixFilter ('a', 'b', 'c')", `MultipleColumnPrefix(["a" "b" "c"])`},
		{"ColumnCountGetFilter (4)", "ColumnCountGet(4)"},
		{"PageFilter (2)", "Page(2)"},
		{"ColumnPaginationFilter (3, 5)", "ColumnPagination(3, 5)"},
		{"InclusiveStopFilter ('Row')", `InclusiveStop("Row")`},
		{"TimestampsFilter (5985489, 48895495, 58489845945)", "Timestamps([5985489 48895495 58489845945])"},
		{"TimestampsFilter ()", "Timestamps([])"},
		{"RowFilter (<=, 'binary:xyz')", `Row(LESS_OR_EQUAL, binary:"xyz")`},
		{"FamilyFilter (>=, 'binaryprefix:FamilyB')", `Family(GREATER_OR_EQUAL, binaryprefix:"FamilyB")`},
		{"QualifierFilter (=, 'substring:Column1')", `Qualifier(EQUAL, substring:"column1")`},
		{"ValueFilter (!=, 'binary:Value')", `Value(NOT_EQUAL, binary:"Value")`},
		{"ValueFilter(=,'regexstring:ab*c')", `Value(EQUAL, regexstring:"ab*c"/0x20)`},
		{"ValueFilter(>, 'binary:a:b')", `Value(GREATER, binary:"a:b")`},
		{"ValueFilter(< 'binary:')", `Value(LESS, binary:"")`},
		{"DependentColumnFilter ('conf', 'blacklist', false, >=, 'binary:zebra')",
			`DependentColumn("conf", "blacklist", false, GREATER_OR_EQUAL, binary:"zebra")`},
		{"DependentColumnFilter ('conf', 'blacklist', true)", `DependentColumn("conf", "blacklist", true, NO_OP, nil)`},
		{"DependentColumnFilter ('conf', 'blacklist')", `DependentColumn("conf", "blacklist", false, NO_OP, nil)`},
		{"SingleColumnValueFilter ('FamilyA', 'Column1', <=, 'binary:abc', true, false)",
			`SingleColumnValue("FamilyA", "Column1", LESS_OR_EQUAL, binary:"abc", true, false)`},
		{"SingleColumnValueFilter ('FamilyA', 'Column1', <=, 'binary:abc')",
			`SingleColumnValue("FamilyA", "Column1", LESS_OR_EQUAL, binary:"abc", false, true)`},
		{"SingleColumnValueExcludeFilter ('FamilyA', 'Column1', =, 'substring:abc', TRUE, False)",
			`SingleColumnValueExclude("FamilyA", "Column1", EQUAL, substring:"abc", true, false)`},
		{"ColumnRangeFilter ('abc', true, 'xyz', false)", `ColumnRange("abc", true, "xyz", false)`},
		{"ColumnRangeFilter ('', true, 'xyz', false)", `ColumnRange("", true, "xyz", false)`},
		{"ColumnValueFilter ('f', 'q', =, 'binary:v')", `ColumnValue("f", "q", EQUAL, binary:"v")`},

		// Operators and their precedence: SKIP and WHILE, then AND, then OR.
		{"PrefixFilter ('Row') AND PageFilter (1) AND FirstKeyOnlyFilter ()",
			`AND(Prefix("Row"), Page(1), FirstKeyOnly)`},
		{"(RowFilter (=, 'binary:Row 1') AND TimestampsFilter (74689, 89734)) OR ColumnRangeFilter ('abc', true, 'xyz', false)",
			`OR(AND(Row(EQUAL, binary:"Row 1"), Timestamps([74689 89734])), ColumnRange("abc", true, "xyz", false))`},
		{"PrefixFilter('a') OR PrefixFilter('b') AND PrefixFilter('c')",
			`OR(Prefix("a"), AND(Prefix("b"), Prefix("c")))`},
		{"PrefixFilter('a') AND PrefixFilter('b') OR PrefixFilter('c')",
			`OR(AND(Prefix("a"), Prefix("b")), Prefix("c"))`},
		{"SKIP ValueFilter (!=, 'binary:0')", `SKIP(Value(NOT_EQUAL, binary:"0"))`},
		{"WHILE RowFilter (!=, 'binary:Row')", `WHILE(Row(NOT_EQUAL, binary:"Row"))`},
		{"SKIP PrefixFilter('a') AND PrefixFilter('b')", `AND(SKIP(Prefix("a")), Prefix("b"))`},
		{"SKIP (PrefixFilter('a') OR PrefixFilter('b'))", `SKIP(OR(Prefix("a"), Prefix("b")))`},
		{"(PrefixFilter('a'))", `Prefix("a")`},
		{"PrefixFilter('a')AND(PrefixFilter('b'))", `AND(Prefix("a"), Prefix("b"))`},
		{"(QualifierFilter (>=, 'binary:xyz')) AND (TimestampsFilter ( 123, 456))",
			`AND(Qualifier(GREATER_OR_EQUAL, binary:"xyz"), Timestamps([123 456]))`},
		{"PrefixFilter('r') AND ValueFilter(=, 'binary:x')", `AND(Prefix("r"), Value(EQUAL, binary:"x"))`},
	} {
		f, err := ParseFilter(tc.in)
		require.NoError(t, err, tc.in)
		require.Equal(t, tc.want, render(f), tc.in)
		// What parses also encodes: the shell sends it to the server.
		_, err = FilterToPB(f)
		require.NoError(t, err, tc.in)
	}
}

// TestParseFilterErrors checks that bad strings give a ParseError at the
// right offset, marked ErrBadFilter, with a message that says what is
// wrong.
func TestParseFilterErrors(t *testing.T) {
	for _, tc := range []struct {
		in     string
		offset int
		msg    string
	}{
		{"", 0, "expected a filter, found end of string"},
		{"NoSuchFilter('a')", 0, "Filter Name NoSuchFilter not supported"},
		{"PrefixFilter", 12, "expected '(' after PrefixFilter"},
		{"PrefixFilter('a'", 16, "argument list opened at offset 12 is not closed"},
		{"PrefixFilter('a)", 13, "unterminated quoted argument"},
		{"PrefixFilter('a', 'b')", 0, "expected 1 arguments, got 2"},
		{"PrefixFilter(a)", 13, "must be a quoted string"},
		{"PageFilter('1')", 11, "must be an integer"},
		{"PageFilter(1x)", 11, `must be an integer, got "1x"`},
		{"PageFilter(99999999999999999999)", 11, "out of range"},
		{"ColumnCountGetFilter(4294967296)", 21, "does not fit in an int"},
		{"ValueFilter(==, 'binary:a')", 12, "must be a compare operator"},
		{"ValueFilter(=, 'a')", 15, "has no type"},
		{"ValueFilter(=, 'nosuch:a')", 15, `unknown comparator type "nosuch"`},
		{"ValueFilter(<, 'substring:a')", 15, "can only be used with EQUAL and NOT_EQUAL"},
		{"ValueFilter(=, 'regexstring:(?=x)')", 15, "RegexStringComparator"},
		{"KeyOnlyFilter(yes)", 14, "must be true or false"},
		{"ColumnPaginationFilter(-1, 0)", 0, "ColumnPaginationFilter"},
		{"TimestampsFilter(-5)", 0, "must be positive"},
		{"PrefixFilter('a') AND", 21, "expected a filter, found end of string"},
		{"AND PrefixFilter('a')", 0, "AND needs a filter on each side"},
		{"PrefixFilter('a') PrefixFilter('b')", 18, `unexpected "PrefixFilter" after the filter`},
		{"(PrefixFilter('a')", 18, "expected ')' to close the '(' at offset 0"},
		{"PrefixFilter('a'))", 17, "unexpected ')' after the filter"},
		{"SKIP", 4, "expected a filter, found end of string"},
		{"= 3", 0, `expected a filter, found "="`},
	} {
		_, err := ParseFilter(tc.in)
		require.Error(t, err, tc.in)
		var pe *ParseError
		require.True(t, errors.As(err, &pe), "%q: %v", tc.in, err)
		require.Equal(t, tc.offset, pe.Offset, "%q: %v", tc.in, err)
		require.Contains(t, pe.Msg, tc.msg, tc.in)
		require.True(t, errors.Is(err, ErrBadFilter), tc.in)
	}
}

// FuzzParseFilter: no filter string panics the parser, and whatever
// parses can be sent (encodes to HBase's Filter message and back).
func FuzzParseFilter(f *testing.F) {
	for _, s := range []string{
		"PrefixFilter ('Row') AND PageFilter (1) AND FirstKeyOnlyFilter ()",
		"(RowFilter (=, 'binary:Row 1') AND TimestampsFilter (74689, 89734)) OR ColumnRangeFilter ('abc', true, 'xyz', false)",
		"SKIP ValueFilter (!=, 'binary:0')",
		"WHILE SingleColumnValueFilter ('f', 'q', <=, 'regexstring:a.*', true, false)",
		"DependentColumnFilter ('conf', 'blacklist', false, >=, 'binaryprefix:zebra')",
		"MultipleColumnPrefixFilter ('a', 'b''c')",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		flt, err := ParseFilter(s)
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) || pe.Offset < 0 || pe.Offset > len(s) {
				t.Fatalf("%q: error %v is not a ParseError within the string", s, err)
			}
			return
		}
		b, err := FilterToProto(flt)
		if err != nil {
			t.Fatalf("%q parsed but does not encode: %v", s, err)
		}
		if _, err := FilterFromProto(b); err != nil {
			t.Fatalf("%q parsed but its encoding does not decode: %v", s, err)
		}
	})
}
