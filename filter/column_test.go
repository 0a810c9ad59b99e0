package filter

import (
	"testing"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/encoding"
	"github.com/stretchr/testify/require"
)

// codeCase is one cell handed to a filter and the code it must answer,
// with the hint's string when the code is FilterSeekNextUsingHint.
type codeCase struct {
	row, fam, qual string
	ts             int64
	want           ReturnCode
	hint           string
}

// checkCodes feeds cases to f in order, as one scan would: FilterRowKey
// at each new row, Reset after each row.
func checkCodes(t *testing.T, f Filter, cases []codeCase) {
	t.Helper()
	for i, c := range cases {
		if i == 0 || cases[i-1].row != c.row {
			if i > 0 {
				f.Reset()
			}
			_, err := f.FilterRowKey([]byte(c.row))
			require.NoError(t, err)
		}
		kv := put(c.row, c.fam, c.qual, c.ts, "")
		rc, err := f.FilterCell(kv)
		require.NoError(t, err)
		require.Equal(t, c.want, rc, "case %d: %s/%s:%s/%d", i, c.row, c.fam, c.qual, c.ts)
		if c.hint != "" {
			require.Equal(t, c.hint, f.NextCellHint(kv).String(), "case %d hint", i)
		}
	}
}

func TestColumnRangeFilter(t *testing.T) {
	f := NewColumnRangeFilter([]byte("b"), true, []byte("d"), false)
	checkCodes(t, f, []codeCase{
		{"r", "f", "", 1, FilterSeekNextUsingHint, "r/f:b/LATEST_TIMESTAMP/Maximum"},
		{"r", "f", "a", 1, FilterSeekNextUsingHint, "r/f:b/LATEST_TIMESTAMP/Maximum"},
		{"r", "f", "b", 1, FilterInclude, ""},
		{"r", "f", "c", 1, FilterInclude, ""},
		{"r", "f", "czz", 1, FilterInclude, ""},
		{"r", "f", "d", 1, FilterNextRow, ""},
		{"r", "g", "a", 1, FilterSeekNextUsingHint, "r/g:b/LATEST_TIMESTAMP/Maximum"},
	})
	// Exclusive lower bound, inclusive upper bound.
	checkCodes(t, NewColumnRangeFilter([]byte("b"), false, []byte("d"), true), []codeCase{
		{"r", "f", "b", 2, FilterNextCol, ""},
		{"r", "f", "ba", 1, FilterInclude, ""},
		{"r", "f", "d", 1, FilterInclude, ""},
		{"r", "f", "da", 1, FilterNextRow, ""},
	})
	// Open bounds.
	checkCodes(t, NewColumnRangeFilter(nil, false, []byte("b"), false), []codeCase{
		{"r", "f", "", 1, FilterInclude, ""},
		{"r", "f", "a", 1, FilterInclude, ""},
		{"r", "f", "b", 1, FilterNextRow, ""},
	})
	checkCodes(t, NewColumnRangeFilter([]byte("b"), true, nil, false), []codeCase{
		{"r", "f", "a", 1, FilterSeekNextUsingHint, "r/f:b/LATEST_TIMESTAMP/Maximum"},
		{"r", "f", "zzz", 1, FilterInclude, ""},
	})

	cells := columnCells()
	require.Equal(t, []string{"r1/f:b/2=2 r1/f:b/1=1 r1/f:bb/1=3 r1/g:c/1=5", "r2/f:c/1=7"},
		fmtRows(regionScan(t, NewColumnRangeFilter([]byte("b"), true, []byte("c"), true), cells)))
}

// columnCells are two rows over two families, with versions.
func columnCells() []*encoding.KeyValue {
	return []*encoding.KeyValue{
		put("r1", "f", "a", 1, "0"), put("r1", "f", "b", 2, "2"), put("r1", "f", "b", 1, "1"), put("r1", "f", "bb", 1, "3"),
		put("r1", "f", "d", 1, "4"), put("r1", "g", "c", 1, "5"), put("r1", "g", "e", 1, "6"),
		put("r2", "f", "c", 1, "7"), put("r2", "f", "e", 2, "8"), put("r2", "g", "a", 1, "9"),
	}
}

func TestMultipleColumnPrefixFilter(t *testing.T) {
	f, err := NewMultipleColumnPrefixFilter([][]byte{[]byte("d"), []byte("b")})
	require.NoError(t, err)
	require.Equal(t, [][]byte{[]byte("b"), []byte("d")}, f.Prefixes())
	require.Nil(t, f.NextCellHint(put("r", "f", "a", 1, "")), "no hint before a seek")
	checkCodes(t, f, []codeCase{
		{"r", "f", "a", 1, FilterSeekNextUsingHint, "r/f:b/LATEST_TIMESTAMP/Maximum"},
		{"r", "f", "b", 1, FilterInclude, ""},
		{"r", "f", "bz", 1, FilterInclude, ""},
		{"r", "f", "c", 1, FilterSeekNextUsingHint, "r/f:d/LATEST_TIMESTAMP/Maximum"},
		{"r", "f", "d1", 1, FilterInclude, ""},
		{"r", "f", "e", 1, FilterNextRow, ""},
	})
	// HBase tests a qualifier against the largest prefix at or before it
	// only: "ac" starts with "a" but sorts after "ab".
	f, err = NewMultipleColumnPrefixFilter([][]byte{[]byte("a"), []byte("ab")})
	require.NoError(t, err)
	checkCodes(t, f, []codeCase{
		{"r", "f", "aa", 1, FilterInclude, ""},
		{"r", "f", "ab", 1, FilterInclude, ""},
		{"r", "f", "ac", 1, FilterNextRow, ""},
	})
	// No prefixes: everything.
	f, err = NewMultipleColumnPrefixFilter(nil)
	require.NoError(t, err)
	checkCodes(t, f, []codeCase{{"r", "f", "x", 1, FilterInclude, ""}})

	_, err = NewMultipleColumnPrefixFilter([][]byte{[]byte("a"), []byte("b"), []byte("a")})
	require.True(t, errors.Is(err, ErrBadFilter), err)
	_, err = NewMultipleColumnPrefixFilter([][]byte{nil, {}})
	require.True(t, errors.Is(err, ErrBadFilter), "nil is the empty prefix: %v", err)

	f, err = NewMultipleColumnPrefixFilter([][]byte{[]byte("bb"), []byte("e")})
	require.NoError(t, err)
	require.Equal(t, []string{"r1/f:bb/1=3 r1/g:e/1=6", "r2/f:e/2=8"}, fmtRows(regionScan(t, f, columnCells())))
}

func TestColumnCountGetFilter(t *testing.T) {
	f, err := NewColumnCountGetFilter(2)
	require.NoError(t, err)
	checkCodes(t, f, []codeCase{
		{"r", "f", "a", 1, FilterIncludeAndNextCol, ""},
		{"r", "f", "b", 1, FilterIncludeAndNextCol, ""},
		{"r", "g", "c", 1, FilterNextCol, ""},
	})
	require.True(t, f.FilterAllRemaining())
	drop, err := f.FilterRowKey([]byte("s"))
	require.NoError(t, err)
	require.True(t, drop)
	f.Reset()
	require.False(t, f.FilterAllRemaining())

	// Across families, newest versions. The third column makes the filter
	// done: the simulated scan ends there, as HBase's store scanners do.
	require.Equal(t, []string{"r1/f:a/1=0 r1/f:b/2=2"}, fmtRows(regionScan(t, mustCCG(t, 2), columnCells())))
	require.Equal(t, []string{"r1/f:a/1=0 r1/f:b/2=2 r1/f:bb/1=3 r1/f:d/1=4 r1/g:c/1=5 r1/g:e/1=6",
		"r2/f:c/1=7 r2/f:e/2=8 r2/g:a/1=9"}, fmtRows(regionScan(t, mustCCG(t, 6), columnCells())))
	require.Empty(t, regionScan(t, mustCCG(t, 0), columnCells()))

	_, err = NewColumnCountGetFilter(-1)
	require.True(t, errors.Is(err, ErrBadFilter), err)
}

func mustCCG(t *testing.T, n int32) *ColumnCountGetFilter {
	f, err := NewColumnCountGetFilter(n)
	require.NoError(t, err)
	return f
}

func TestColumnPaginationFilter(t *testing.T) {
	f, err := NewColumnPaginationFilter(2, 1)
	require.NoError(t, err)
	require.Equal(t, int32(1), f.Offset())
	require.Nil(t, f.NextCellHint(put("r", "f", "a", 1, "")))
	checkCodes(t, f, []codeCase{
		{"r", "f", "a", 1, FilterNextCol, ""},
		{"r", "f", "b", 1, FilterIncludeAndNextCol, ""},
		{"r", "g", "a", 1, FilterIncludeAndNextCol, ""},
		{"r", "g", "b", 1, FilterNextRow, ""},
		{"s", "f", "a", 1, FilterNextCol, ""}, // Reset: a new page
	})
	require.Equal(t, []string{"r1/f:b/2=2 r1/f:bb/1=3", "r2/f:e/2=8 r2/g:a/1=9"},
		fmtRows(regionScan(t, mustPage(t, 2, 1), columnCells())))
	require.Empty(t, regionScan(t, mustPage(t, 0, 0), columnCells()))
	// offset + limit overflows int32 as in HBase, where it ends every row.
	f, err = NewColumnPaginationFilter(1<<31-1, 1)
	require.NoError(t, err)
	checkCodes(t, f, []codeCase{{"r", "f", "a", 1, FilterNextRow, ""}})

	// A column offset: seek to it in each family until a column is taken.
	f, err = NewColumnPaginationFilterAt(2, []byte("c"))
	require.NoError(t, err)
	require.Equal(t, int32(-1), f.Offset())
	checkCodes(t, f, []codeCase{
		{"r", "f", "a", 1, FilterSeekNextUsingHint, "r/f:c/LATEST_TIMESTAMP/Maximum"},
		{"r", "f", "d", 1, FilterIncludeAndNextCol, ""},
		{"r", "g", "a", 1, FilterIncludeAndNextCol, ""}, // counted, not compared
		{"r", "g", "b", 1, FilterNextRow, ""},
		{"s", "g", "a", 1, FilterSeekNextUsingHint, "s/g:c/LATEST_TIMESTAMP/Maximum"},
	})
	f, err = NewColumnPaginationFilterAt(2, []byte("c"))
	require.NoError(t, err)
	require.Equal(t, []string{"r1/f:d/1=4 r1/g:c/1=5", "r2/f:c/1=7 r2/f:e/2=8"}, fmtRows(regionScan(t, f, columnCells())))

	for _, bad := range []func() error{
		func() error { _, err := NewColumnPaginationFilter(-1, 0); return err },
		func() error { _, err := NewColumnPaginationFilter(1, -1); return err },
		func() error { _, err := NewColumnPaginationFilterAt(-1, []byte("c")); return err },
		func() error { _, err := NewColumnPaginationFilterAt(1, nil); return err },
	} {
		err := bad()
		require.True(t, errors.Is(err, ErrBadFilter), err)
	}
}

func mustPage(t *testing.T, limit, offset int32) *ColumnPaginationFilter {
	f, err := NewColumnPaginationFilter(limit, offset)
	require.NoError(t, err)
	return f
}

func TestTimestampsFilter(t *testing.T) {
	f, err := NewTimestampsFilter([]int64{5, 2, 5, 9}, false)
	require.NoError(t, err)
	require.Equal(t, []int64{2, 5, 9}, f.Timestamps())
	require.Equal(t, int64(2), f.Min())
	checkCodes(t, f, []codeCase{
		{"r", "f", "a", 10, FilterSkip, ""},
		{"r", "f", "a", 9, FilterInclude, ""},
		{"r", "f", "a", 7, FilterSkip, ""},
		{"r", "f", "a", 2, FilterInclude, ""},
		{"r", "f", "a", 1, FilterNextCol, ""},
	})
	require.Nil(t, f.NextCellHint(put("r", "f", "a", 7, "")))

	f, err = NewTimestampsFilter([]int64{2, 5, 9}, true)
	require.NoError(t, err)
	checkCodes(t, f, []codeCase{
		{"r", "f", "a", 10, FilterSeekNextUsingHint, "r/f:a/9/Maximum"},
		{"r", "f", "a", 7, FilterSeekNextUsingHint, "r/f:a/5/Maximum"},
		{"r", "f", "a", 3, FilterSeekNextUsingHint, "r/f:a/2/Maximum"},
	})

	// No timestamps: every cell ends its column (math.MaxInt64 aside).
	f, err = NewTimestampsFilter(nil, true)
	require.NoError(t, err)
	checkCodes(t, f, []codeCase{
		{"r", "f", "a", 10, FilterNextCol, ""},
		{"r", "f", "a", 1<<63 - 1, FilterSeekNextUsingHint, "r/f:a/-9223372036854775808/Minimum"},
	})

	cells := columnCells()
	for _, canHint := range []bool{false, true} {
		f, err = NewTimestampsFilter([]int64{1}, canHint)
		require.NoError(t, err)
		require.Equal(t, []string{"r1/f:a/1=0 r1/f:b/1=1 r1/f:bb/1=3 r1/f:d/1=4 r1/g:c/1=5 r1/g:e/1=6", "r2/f:c/1=7 r2/g:a/1=9"},
			fmtRows(regionScan(t, f, cells)), "canHint %t", canHint)
	}

	_, err = NewTimestampsFilter([]int64{3, -1}, false)
	require.True(t, errors.Is(err, ErrBadFilter), err)
}
