package filter

import (
	"testing"

	"github.com/cockroachdb/errors"
	"github.com/stretchr/testify/require"
)

type compareCase struct {
	value string
	want  int
}

func checkCompare(t *testing.T, c ByteArrayComparable, cases []compareCase) {
	t.Helper()
	for _, tc := range cases {
		require.Equal(t, tc.want, c.CompareTo([]byte(tc.value)), "%T vs %q", c, tc.value)
	}
}

// The comparator's operand is on the left: positive means the value is smaller.
func TestBinaryComparator(t *testing.T) {
	checkCompare(t, NewBinaryComparator([]byte("b")), []compareCase{
		{"a", 1}, {"b", 0}, {"c", -1}, {"", 1}, {"ba", -1}, {"\xff", -1},
	})
	checkCompare(t, NewBinaryComparator(nil), []compareCase{{"", 0}, {"a", -1}})
}

func TestBinaryPrefixComparator(t *testing.T) {
	checkCompare(t, NewBinaryPrefixComparator([]byte("ab")), []compareCase{
		{"ab", 0}, {"abc", 0}, {"a", 1}, {"", 1}, {"aa", 1}, {"ac", -1}, {"b", -1},
	})
	checkCompare(t, NewBinaryPrefixComparator(nil), []compareCase{{"", 0}, {"anything", 0}})
}

func TestSubstringComparator(t *testing.T) {
	c := NewSubstringComparator("BC")
	require.Equal(t, "bc", c.Substr())
	checkCompare(t, c, []compareCase{
		{"abcd", 0}, {"ABCD", 0}, {"xBcx", 0}, {"bc", 0}, {"acbd", 1}, {"", 1}, {"b", 1},
	})
	checkCompare(t, NewSubstringComparator("ÄB"), []compareCase{{"xäbx", 0}, {"XÄBX", 0}, {"ab", 1}})
	checkCompare(t, NewSubstringComparator(""), []compareCase{{"", 0}, {"x", 0}})
}

func TestNullComparator(t *testing.T) {
	c := NewNullComparator()
	require.Equal(t, 0, c.CompareTo(nil))
	require.Equal(t, 1, c.CompareTo([]byte{}))
	require.Equal(t, 1, c.CompareTo([]byte("x")))
	// Filters never pass nil, even for an empty value: EQUAL filters out every cell.
	rc, err := NewValueFilter(CompareEqual, c).FilterCell(put("r", "f", "q", 1, ""))
	require.NoError(t, err)
	require.Equal(t, FilterSkip, rc)
	empty := put("r", "f", "q", 1, "")
	empty.Value = nil
	rc, _ = NewValueFilter(CompareEqual, c).FilterCell(empty)
	require.Equal(t, FilterSkip, rc)
}

func mustRegex(t *testing.T, expr string, flags int32, charset string, engine RegexEngine) *RegexStringComparator {
	t.Helper()
	c, err := NewRegexStringComparator(expr, flags, charset, engine)
	require.NoError(t, err)
	return c
}

func TestRegexStringComparator(t *testing.T) {
	for _, tc := range []struct {
		name  string
		expr  string
		flags int32
		cases []compareCase
	}{
		{"find, not full match", "b+", DefaultRegexFlags, []compareCase{{"abbc", 0}, {"ac", 1}, {"", 1}}},
		{"anchors", "^ab$", DefaultRegexFlags, []compareCase{{"ab", 0}, {"abc", 1}, {"xab", 1}}},
		{"DOTALL", "a.c", RegexDotAll, []compareCase{{"a\nc", 0}, {"abc", 0}}},
		{"no DOTALL", "a.c", 0, []compareCase{{"a\nc", 1}, {"abc", 0}}},
		{"CASE_INSENSITIVE", "abc", RegexCaseInsensitive, []compareCase{{"xAbCx", 0}, {"abd", 1}}},
		{"case sensitive", "abc", 0, []compareCase{{"ABC", 1}, {"abc", 0}}},
		{"MULTILINE", "^b$", RegexMultiline, []compareCase{{"a\nb\nc", 0}}},
		{"no MULTILINE", "^b$", 0, []compareCase{{"a\nb\nc", 1}}},
		{"LITERAL", "a.c", RegexLiteral, []compareCase{{"abc", 1}, {"xa.cx", 0}}},
		{"LITERAL and CASE_INSENSITIVE", "A.C", RegexLiteral | RegexCaseInsensitive, []compareCase{{"a.c", 0}, {"abc", 1}}},
		{"UNIX_LINES and UNICODE_CASE are accepted", "é", RegexUnixLines | RegexUnicodeCase | RegexCaseInsensitive, []compareCase{{"É", 0}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := mustRegex(t, tc.expr, tc.flags, "", "")
			require.Equal(t, tc.expr, c.Pattern())
			require.Equal(t, tc.flags, c.Flags())
			require.Equal(t, CharsetUTF8, c.Charset())
			require.Equal(t, RegexEngineJava, c.Engine())
			checkCompare(t, c, tc.cases)
		})
	}
}

func TestRegexStringComparatorCharsets(t *testing.T) {
	// ISO-8859-1: every byte is a character, so 0xE9 is é.
	c := mustRegex(t, "^é.$", DefaultRegexFlags, "ISO-8859-1", RegexEngineJava)
	require.Equal(t, CharsetLatin1, c.Charset())
	checkCompare(t, c, []compareCase{{"\xe9\xff", 0}, {"é\xff", 1}})
	require.Equal(t, CharsetLatin1, mustRegex(t, "x", 0, "latin1", "").Charset())
	// UTF-8: a lone 0xE9 is malformed and reads as U+FFFD.
	c = mustRegex(t, "^é$", DefaultRegexFlags, "utf-8", "")
	checkCompare(t, c, []compareCase{{"é", 0}, {"\xe9", 1}})
	checkCompare(t, mustRegex(t, "^\uFFFD$", 0, "UTF8", ""), []compareCase{{"\xe9", 0}})
	// US-ASCII: bytes above 0x7F are malformed.
	c = mustRegex(t, "^a\uFFFD$", 0, "US-ASCII", "")
	require.Equal(t, CharsetASCII, c.Charset())
	checkCompare(t, c, []compareCase{{"a\xe9", 0}, {"aé", 1}})
}

func TestRegexStringComparatorErrors(t *testing.T) {
	for _, tc := range []struct {
		name, expr, charset string
		flags               int32
		engine              RegexEngine
		msg                 string
	}{
		{"lookahead", "a(?=b)", "", 0, "", "pattern"},
		{"backreference", `(a)\1`, "", 0, "", "pattern"},
		{"possessive", "a*+", "", 0, "", "pattern"},
		{"COMMENTS", "a b", "", RegexComments, "", "not supported"},
		{"CANON_EQ", "a", "", RegexCanonEq, "", "not supported"},
		{"UNICODE_CHARACTER_CLASS", `\w`, "", RegexUnicodeCharacterClass, "", "not supported"},
		{"charset", "a", "UTF-16", 0, "", `charset "UTF-16"`},
		{"engine", "a", "", 0, "PCRE", `engine "PCRE"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewRegexStringComparator(tc.expr, tc.flags, tc.charset, tc.engine)
			require.Error(t, err)
			require.True(t, errors.Is(err, ErrBadFilter), err)
			require.Contains(t, err.Error(), tc.msg)
		})
	}
}

// TestRegexStringComparatorJoni: HBase's JONI engine keeps only
// CASE_INSENSITIVE, DOTALL and MULTILINE.
func TestRegexStringComparatorJoni(t *testing.T) {
	c := mustRegex(t, "a.c", RegexLiteral|RegexDotAll|RegexComments, "", RegexEngineJoni)
	require.Equal(t, RegexDotAll, c.Flags())
	require.Equal(t, RegexEngineJoni, c.Engine())
	checkCompare(t, c, []compareCase{{"abc", 0}, {"a\nc", 0}})
}
