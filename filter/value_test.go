package filter

import (
	"testing"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/encoding"
	"github.com/stretchr/testify/require"
)

// valueCells: r1 has f:a at 3 and 2 and the dependent column g:d at 3;
// r2 has f:a and g:d at 5 with different values; r3 lacks g:d.
func valueCells() []*encoding.KeyValue {
	return []*encoding.KeyValue{
		put("r1", "f", "a", 3, "x"), put("r1", "f", "a", 2, "y"), put("r1", "f", "b", 2, "z"), put("r1", "g", "d", 3, "on"),
		put("r2", "f", "a", 5, "x"), put("r2", "g", "d", 5, "off"), put("r2", "g", "e", 5, "w"),
		put("r3", "f", "a", 1, "x"),
	}
}

func TestSingleColumnValueExcludeFilter(t *testing.T) {
	f := NewSingleColumnValueExcludeFilter([]byte("g"), []byte("d"), CompareEqual, NewBinaryComparator([]byte("on")))
	require.True(t, f.HasFilterRow())
	require.Equal(t, []string{"r1/f:a/3=x r1/f:a/2=y r1/f:b/2=z", "r3/f:a/1=x"}, fmtRows(regionScan(t, f, valueCells())))
	f = NewSingleColumnValueExcludeFilter([]byte("g"), []byte("d"), CompareEqual, NewBinaryComparator([]byte("on")))
	f.SetFilterIfMissing(true)
	require.Equal(t, []string{"r1/f:a/3=x r1/f:a/2=y r1/f:b/2=z"}, fmtRows(regionScan(t, f, valueCells())))
	require.False(t, f.IsFamilyEssential([]byte("f")))
	require.True(t, f.IsFamilyEssential([]byte("g")))
}

func TestColumnValueFilter(t *testing.T) {
	f, err := NewColumnValueFilter([]byte("f"), []byte("a"), CompareEqual, NewBinaryComparator([]byte("x")))
	require.NoError(t, err)
	for i, tc := range []struct {
		kv   *encoding.KeyValue
		want ReturnCode
	}{
		{put("r1", "e", "z", 1, "x"), FilterNextCol},
		{put("r1", "f", "a", 3, "x"), FilterInclude},
		{put("r1", "f", "a", 2, "y"), FilterSkip},
		{put("r1", "f", "b", 2, "x"), FilterNextRow},
		{put("r1", "g", "d", 3, "x"), FilterNextRow}, // the column was found in this row
		{nil, 0},
		{put("r2", "e", "z", 1, "x"), FilterNextCol},
	} {
		if tc.kv == nil {
			f.Reset()
			continue
		}
		rc, err := f.FilterCell(tc.kv)
		require.NoError(t, err)
		require.Equal(t, tc.want, rc, "%d", i)
	}
	f, err = NewColumnValueFilter([]byte("f"), []byte("a"), CompareEqual, NewBinaryComparator([]byte("x")))
	require.NoError(t, err)
	require.Equal(t, []string{"r1/f:a/3=x", "r2/f:a/5=x", "r3/f:a/1=x"}, fmtRows(regionScan(t, f, valueCells())))
	require.True(t, f.IsFamilyEssential([]byte("f")))
	require.False(t, f.IsFamilyEssential([]byte("g")))

	// NO_OP keeps nothing, as HBase's compareValue.
	f, err = NewColumnValueFilter([]byte("f"), nil, CompareNoOp, NewBinaryComparator(nil))
	require.NoError(t, err)
	require.NotNil(t, f.Qualifier())
	require.Empty(t, regionScan(t, f, []*encoding.KeyValue{put("r", "f", "", 1, "")}))

	for _, bad := range []func() error{
		func() error {
			_, err := NewColumnValueFilter(nil, []byte("a"), CompareEqual, NewNullComparator())
			return err
		},
		func() error { _, err := NewColumnValueFilter([]byte("f"), []byte("a"), CompareEqual, nil); return err },
		func() error {
			_, err := NewColumnValueFilter([]byte("f"), []byte("a"), 9, NewNullComparator())
			return err
		},
	} {
		err := bad()
		require.True(t, errors.Is(err, ErrBadFilter), err)
	}
}

func TestDependentColumnFilter(t *testing.T) {
	// Every cell at a timestamp of g:d: r1's at 3, r2's at 5; r3 has none.
	f := NewDependentColumnFilter([]byte("g"), []byte("d"), false, CompareNoOp, nil)
	require.True(t, f.HasFilterRow())
	require.Equal(t, []string{"r1/f:a/3=x r1/g:d/3=on", "r2/f:a/5=x r2/g:d/5=off r2/g:e/5=w"}, fmtRows(regionScan(t, f, valueCells())))
	// Dropping the dependent column.
	f = NewDependentColumnFilter([]byte("g"), []byte("d"), true, CompareNoOp, nil)
	require.Equal(t, []string{"r1/f:a/3=x", "r2/f:a/5=x r2/g:e/5=w"}, fmtRows(regionScan(t, f, valueCells())))
	// Only dependent cells whose value passes give timestamps.
	f = NewDependentColumnFilter([]byte("g"), []byte("d"), false, CompareEqual, NewBinaryComparator([]byte("on")))
	require.Equal(t, []string{"r1/f:a/3=x r1/g:d/3=on"}, fmtRows(regionScan(t, f, valueCells())))
	// NO_OP with a comparator passes no dependent cell (HBase's compareValue).
	f = NewDependentColumnFilter([]byte("g"), []byte("d"), false, CompareNoOp, NewBinaryComparator([]byte("on")))
	require.Empty(t, regionScan(t, f, valueCells()))
	// An unknown operator is an error, not a panic.
	f = NewDependentColumnFilter([]byte("g"), []byte("d"), false, 42, NewBinaryComparator([]byte("on")))
	_, err := f.FilterCell(put("r", "g", "d", 1, ""))
	require.True(t, errors.Is(err, ErrBadFilter), err)
}

func TestFirstKeyValueMatchingQualifiersFilter(t *testing.T) {
	f := NewFirstKeyValueMatchingQualifiersFilter([][]byte{[]byte("b"), []byte("d"), []byte("b")})
	require.Equal(t, [][]byte{[]byte("b"), []byte("d")}, f.Qualifiers())
	checkCodes(t, f, []codeCase{
		{"r", "f", "a", 1, FilterInclude, ""},
		{"r", "f", "b", 2, FilterInclude, ""},
		{"r", "f", "b", 1, FilterNextRow, ""},
		{"r", "g", "a", 1, FilterNextRow, ""},
		{"s", "f", "a", 1, FilterInclude, ""},
	})
	f = NewFirstKeyValueMatchingQualifiersFilter([][]byte{[]byte("d")})
	require.Equal(t, []string{"r1/f:a/3=x r1/f:a/2=y r1/f:b/2=z r1/g:d/3=on", "r2/f:a/5=x r2/g:d/5=off", "r3/f:a/1=x"},
		fmtRows(regionScan(t, f, valueCells())))
}

func TestSkipFilter(t *testing.T) {
	// Rows with a "y" anywhere are dropped whole.
	f := NewSkipFilter(NewValueFilter(CompareNotEqual, NewBinaryComparator([]byte("y"))))
	require.True(t, f.HasFilterRow())
	require.Equal(t, []string{"r2/f:a/5=x r2/g:d/5=off r2/g:e/5=w", "r3/f:a/1=x"}, fmtRows(regionScan(t, f, valueCells())))
	// Any code but INCLUDE is a miss, INCLUDE_AND_NEXT_COL too.
	first, err := NewColumnCountGetFilter(10)
	require.NoError(t, err)
	require.Empty(t, regionScan(t, NewSkipFilter(first), valueCells()))
	// The wrapped filter's row decisions are not asked.
	inner := &stubFilter{rc: FilterInclude, dropRows: true, allRemain: true, filterRow: true}
	f = NewSkipFilter(inner)
	drop, err := f.FilterRowKey([]byte("r"))
	require.NoError(t, err)
	require.False(t, drop)
	require.False(t, f.FilterAllRemaining())
	require.False(t, f.FilterRow())
	require.Zero(t, inner.rowKeys)
	// The direction reaches the wrapped filter.
	p := NewPrefixFilter([]byte("r"))
	NewSkipFilter(p).SetReversed(true)
	require.True(t, p.IsReversed())
}

func TestWhileMatchFilter(t *testing.T) {
	cells := rowCells("a", "b", "c", "d")
	// Stops at the first row the RowFilter rejects, even though later rows
	// would pass it again.
	f := NewWhileMatchFilter(NewRowFilter(CompareNotEqual, NewBinaryComparator([]byte("c"))))
	require.Equal(t, []string{"a", "b"}, rowKeys(regionScan(t, f, cells)))
	require.True(t, f.FilterAllRemaining())
	f.Reset()
	require.True(t, f.FilterAllRemaining(), "Reset does not restart the scan")

	// A cell the wrapped filter does not include ends the scan; the row's
	// earlier cells stay.
	f = NewWhileMatchFilter(NewValueFilter(CompareNotEqual, NewBinaryComparator([]byte("z"))))
	require.Equal(t, []string{"r1/f:a/3=x r1/f:a/2=y"}, fmtRows(regionScan(t, f, valueCells())))

	// FilterRow of the wrapped filter ends it too.
	inner := &stubFilter{rc: FilterInclude, filterRow: true}
	f = NewWhileMatchFilter(inner)
	require.True(t, f.HasFilterRow())
	require.True(t, f.FilterRow())
	require.True(t, f.FilterAllRemaining())

	p := NewPrefixFilter([]byte("b"))
	w := NewWhileMatchFilter(p)
	w.SetReversed(true)
	require.True(t, p.IsReversed())
	require.Equal(t, []string{}, rowKeys(regionScanDir(t, w, cells, true)), "d is past the prefix: the scan ends there")
}
