package shell

import (
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/stretchr/testify/require"
)

// dump writes statements as "name(arg; arg)" with Ruby's inspect of each
// argument, for comparing parses.
func dump(stmts []Statement) string {
	var parts []string
	for _, st := range stmts {
		var args []string
		for _, a := range st.Args {
			args = append(args, inspect(a))
		}
		parts = append(parts, st.Name+"("+strings.Join(args, "; ")+")")
	}
	return strings.Join(parts, " | ")
}

func TestParse(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"list", "list()"},
		{"list()", "list()"},
		{"  list  # a comment", "list()"},
		{"create 't1', 'f1', 'f2'", `create("t1"; "f1"; "f2")`},
		{"create('t1', 'f1')", `create("t1"; "f1")`},
		{"create 't1', {NAME => 'f1', VERSIONS => 5}", `create("t1"; {"NAME"=>"f1", "VERSIONS"=>5})`},
		{"create 't1', 'f1', SPLITS => ['10', '20']", `create("t1"; "f1"; {"SPLITS"=>["10", "20"]})`},
		{"count 't1', INTERVAL => 10, CACHE => 1000", `count("t1"; {"INTERVAL"=>10, "CACHE"=>1000})`},
		{"scan 't1', {COLUMNS => ['c1', 'c2'], LIMIT => 10, STARTROW => 'xyz'}",
			`scan("t1"; {"COLUMNS"=>["c1", "c2"], "LIMIT"=>10, "STARTROW"=>"xyz"})`},
		{"scan 't1', {REVERSED => true, RAW => false, X => nil}", `scan("t1"; {"REVERSED"=>true, "RAW"=>false, "X"=>nil})`},
		{"get 't', 'r', {TIMERANGE => [0, 1_000], VERSIONS => 0x10}", `get("t"; "r"; {"TIMERANGE"=>[0, 1000], "VERSIONS"=>16})`},
		{"put 't', -5, 017, 0b101, 1.5, -2.5e3", `put("t"; -5; 15; 5; 1.5; -2500.0)`},
		{"put 't', 'a', 'b'; put 't', 'c', 'd'", `put("t"; "a"; "b") | put("t"; "c"; "d")`},
		{"list\n\nlist;;list", "list() | list() | list()"},
		// Statements go on across lines after a comma, an arrow or inside
		// brackets, and after a backslash.
		{"create 't1',\n  'f1'", `create("t1"; "f1")`},
		{"create 't1', {NAME =>\n 'f1',\n VERSIONS => 2\n}", `create("t1"; {"NAME"=>"f1", "VERSIONS"=>2})`},
		{"create 't1', \\\n 'f1'", `create("t1"; "f1")`},
		// Ruby's string literals.
		{`put 't', "r\x00\x1", "a\tb\n\\\"", 'c\d\'\\'`, `put("t"; "r\x00\x01"; "a\tb\n\\\""; "c\\d'\\")`},
		{`put 't', "\101\0\s\e\a", "\u00e9\u{1F600 41}"`, `put("t"; "A\x00 \e\x07"; "\xC3\xA9\xF0\x9F\x98\x80A")`},
		{`put 't', "#x #", '#{x}'`, `put("t"; "#x #"; "\#{x}")`},
		{`put 't', "a\
b"`, `put("t"; "ab")`},
		// A key given twice keeps its first place and its last value.
		{"scan 't', {LIMIT => 1, STARTROW => 'a', LIMIT => 2}", `scan("t"; {"LIMIT"=>2, "STARTROW"=>"a"})`},
		{"scan 't', {'LIMIT' => 1}", `scan("t"; {"LIMIT"=>1})`},
	} {
		stmts, err := Parse(tc.in)
		require.NoError(t, err, tc.in)
		require.Equal(t, tc.want, dump(stmts), tc.in)
	}
}

// TestParseErrors: syntax errors say where (line and column) and what;
// those more input could fix are marked Incomplete, which the interactive
// shell uses to read another line.
func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		in         string
		pos        Pos
		msg        string
		incomplete bool
	}{
		{"put 't', 'abc", Pos{1, 10}, "unterminated string meets end of input", true},
		{"create 't1',", Pos{1, 13}, "unexpected end of input, expecting a value", true},
		{"create 't1', {NAME => 'f'", Pos{1, 26}, "expecting ',' or '}'", true},
		{"create 't1', ['a',", Pos{1, 19}, "expecting a value", true},
		{"scan 't', {LIMIT => }", Pos{1, 21}, "unexpected '}', expecting a value", false},
		{"scan 't', {LIMIT 3}", Pos{1, 18}, "unexpected number 3, expecting '=>'", false},
		{"get 't' 'r'", Pos{1, 9}, "unexpected string literal, expecting ',' or the end of the statement", false},
		{"get t, 'r'", Pos{1, 5}, "undefined local variable or method 't' (strings need quotes)", false},
		{"list\nLIST", Pos{2, 1}, "LIST is not a command", false},
		{"'t'", Pos{1, 1}, "unexpected string literal, expecting a command", false},
		{"t = create 't', 'f'", Pos{1, 3}, "assignment is not supported", false},
		{"t.scan", Pos{1, 2}, "method calls (t.) are not supported", false},
		{`put 't', "#{x}"`, Pos{1, 11}, "string interpolation", false},
		{`put 't', "\xZZ"`, Pos{1, 11}, "invalid hex escape", false},
		{`put 't', "\u12"`, Pos{1, 11}, "\\u needs 4 hex digits", false},
		{"put 't', 99999999999999999999", Pos{1, 10}, "does not fit in 64 bits", false},
		{"put 't', 12ab", Pos{1, 10}, "bad number 12ab", false},
		{"put 't', 1__0", Pos{1, 10}, "trailing '_'", false},
		{"scan 't', FILTER => org.apache.hadoop.hbase.filter.PageFilter.new(1)", Pos{1, 21},
			"undefined local variable or method 'org'", false},
		{"scan 't', FILTER => Java.org", Pos{1, 25}, "Java and Ruby objects", false},
		{"get 't', 'r', COLUMN => 'c', 'x'", Pos{1, 30}, "a positional argument cannot follow KEY => value", false},
		{"list (1)", Pos{1, 6}, "unexpected '(', expecting a value", false},
		{"list @x", Pos{1, 6}, "unexpected '@'", false},
	} {
		_, err := Parse(tc.in)
		require.Error(t, err, tc.in)
		var se *SyntaxError
		require.True(t, errors.As(err, &se), "%q: %v", tc.in, err)
		require.Equal(t, tc.pos, se.Pos, "%q: %v", tc.in, err)
		require.Contains(t, se.Msg, tc.msg, tc.in)
		require.Equal(t, tc.incomplete, se.Incomplete, "%q: %v", tc.in, err)
		require.True(t, strings.HasPrefix(err.Error(), "SyntaxError: line "), err.Error())
	}
}

// FuzzParse: no input panics the parser.
func FuzzParse(f *testing.F) {
	f.Add("create 't1', {NAME => 'f1', VERSIONS => 5}, SPLITS => ['a', \"\\x00\"]")
	f.Add("scan 't', {FILTER => \"PrefixFilter('r')\", LIMIT => -1_0}; get 't', 0x1F")
	f.Fuzz(func(t *testing.T, s string) {
		stmts, err := Parse(s)
		if err != nil {
			var se *SyntaxError
			require.True(t, errors.As(err, &se))
			return
		}
		for _, st := range stmts {
			require.NotEmpty(t, st.Name)
		}
	})
}

func TestFormatTimestamp(t *testing.T) {
	utc := time.UTC
	for _, tc := range []struct {
		ms   int64
		want string
	}{
		{0, "1970-01-01T00:00"},
		{1000, "1970-01-01T00:00:01"},
		{1001, "1970-01-01T00:00:01.001"},
		{60000, "1970-01-01T00:01"},
		{1796133864763, "2026-12-01T14:04:24.763"},
		{1796133864000, "2026-12-01T14:04:24"},
		{1796133840000, "2026-12-01T14:04"},
		{1796133840010, "2026-12-01T14:04:00.010"},
		{253402300800000, "+10000-01-01T00:00"},
	} {
		require.Equal(t, tc.want, formatTimestamp(tc.ms, false, utc), "%d", tc.ms)
	}
	require.Equal(t, "1796133864763", formatTimestamp(1796133864763, true, utc))
	require.Equal(t, "1970-01-01T01:00", formatTimestamp(0, false, time.FixedZone("CET", 3600)))
}

// TestDescribeFamily checks the order HBase prints a family's attributes
// in (a java.util.HashMap's, of HBase's Bytes keys) against the line HBase
// 2.4 prints for a family with every default set, and the value formats.
func TestDescribeFamily(t *testing.T) {
	defaults := map[string]string{"BLOOMFILTER": "ROW", "IN_MEMORY": "false", "VERSIONS": "1", "KEEP_DELETED_CELLS": "FALSE",
		"DATA_BLOCK_ENCODING": "NONE", "COMPRESSION": "NONE", "TTL": "2147483647", "MIN_VERSIONS": "0", "BLOCKCACHE": "true",
		"BLOCKSIZE": "65536", "REPLICATION_SCOPE": "0"}
	require.Equal(t, "{NAME => 'cf', BLOOMFILTER => 'ROW', IN_MEMORY => 'false', VERSIONS => '1', KEEP_DELETED_CELLS => 'FALSE', "+
		"DATA_BLOCK_ENCODING => 'NONE', COMPRESSION => 'NONE', TTL => 'FOREVER', MIN_VERSIONS => '0', BLOCKCACHE => 'true', "+
		"BLOCKSIZE => '65536 B (64KB)', REPLICATION_SCOPE => '0'}", describeFamily("cf", defaults, nil))
	require.Equal(t, "{NAME => 'f', VERSIONS => '3', TTL => '90061 SECONDS (1 DAY 1 HOUR 1 MINUTE 1 SECOND)', "+
		"METADATA => {'k' => 'v'}, CONFIGURATION => {'hbase.x' => 'y'}}",
		describeFamily("f", map[string]string{"VERSIONS": "3", "TTL": "90061", "k": "v"}, map[string]string{"hbase.x": "y"}))
	require.Equal(t, "{NAME => 'f', TTL => '59 SECONDS', BLOCKSIZE => '1000 B'}",
		describeFamily("f", map[string]string{"TTL": "59", "BLOCKSIZE": "1000"}, nil))
	require.Equal(t, "", tableAttributes(nil))
	require.Equal(t, ", {TABLE_ATTRIBUTES => {READONLY => 'true', METADATA => {'a' => 'b'}}}",
		tableAttributes(map[string]string{"READONLY": "true", "a": "b"}))
}

func TestSplitPoints(t *testing.T) {
	hex, err := splitPoints("HexStringSplit", 4)
	require.NoError(t, err)
	require.Equal(t, [][]byte{[]byte("40000000"), []byte("80000000"), []byte("c0000000")}, hex)
	dec, err := splitPoints("org.apache.hadoop.hbase.util.RegionSplitter$DecimalStringSplit", 2)
	require.NoError(t, err)
	require.Equal(t, [][]byte{[]byte("50000000")}, dec)
	uni, err := splitPoints("UniformSplit", 2)
	require.NoError(t, err)
	require.Equal(t, [][]byte{{0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}}, uni)
	_, err = splitPoints("NoSuchSplit", 2)
	require.Error(t, err)
	require.Equal(t, []byte("a\x00b\\x"), toBytesBinary([]byte(`a\x00b\x`)))
}

// TestFormatterWidth: on a terminal two-column rows take a quarter of the
// width and the rest, and long cells wrap inside their column, as HBase's
// formatter does.
func TestFormatterWidth(t *testing.T) {
	var sb strings.Builder
	f := formatter{out: &sb, width: func() int { return 40 }}
	f.header("ROW", "COLUMN+CELL")
	f.row(true, "r1", "column=f:q, timestamp=1, value=a-long-value-that-wraps")
	f.footer(-1)
	require.Equal(t, ""+
		"ROW         COLUMN+CELL\n"+
		" r1         column=f:q, timestamp=1, val\n"+
		"            ue=a-long-value-that-wraps\n"+
		"1 row(s)\n", sb.String())
}
