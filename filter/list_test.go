package filter

import (
	"testing"

	"github.com/regionkv/regionkv/encoding"
	"github.com/stretchr/testify/require"
)

const (
	inc  = FilterInclude
	incC = FilterIncludeAndNextCol
	incR = FilterIncludeAndSeekNextRow
	skip = FilterSkip
	nCol = FilterNextCol
	nRow = FilterNextRow
	hint = FilterSeekNextUsingHint
)

// The merge tables of HBase's FilterListWithAND and FilterListWithOR
// javadoc: row = the current filter's code (localRC), column = the code
// merged so far (rc), both in the order of allReturnCodes.
var (
	mergeAllTable = [7][7]ReturnCode{
		inc:  {inc, incC, incR, skip, nCol, nRow, hint},
		incC: {incC, incC, incR, nCol, nCol, nRow, hint},
		incR: {incR, incR, incR, nRow, nRow, nRow, hint},
		skip: {skip, nCol, nRow, skip, nCol, nRow, hint},
		nCol: {nCol, nCol, nRow, nCol, nCol, nRow, hint},
		nRow: {nRow, nRow, nRow, nRow, nRow, nRow, hint},
		hint: {hint, hint, hint, hint, hint, hint, hint},
	}
	mergeOneTable = [7][7]ReturnCode{
		inc:  {inc, inc, inc, inc, inc, inc, inc},
		incC: {inc, incC, incC, inc, incC, incC, inc},
		incR: {inc, incC, incR, inc, incC, incR, inc},
		skip: {inc, inc, inc, skip, skip, skip, skip},
		nCol: {inc, incC, incC, skip, nCol, nCol, skip},
		nRow: {inc, incC, incR, skip, nCol, nRow, skip},
		hint: {inc, inc, inc, skip, skip, skip, hint},
	}
)

func TestFilterListMergeTables(t *testing.T) {
	for _, local := range allReturnCodes {
		for _, rc := range allReturnCodes {
			require.Equal(t, mergeAllTable[local][rc], mergeReturnCodeAll(rc, local), "AND: rc %s, local %s", rc, local)
			require.Equal(t, mergeOneTable[local][rc], mergeReturnCodeOne(rc, local), "OR: rc %s, local %s", rc, local)
		}
	}
}

// TestFilterListMerge runs the merges through real lists of two filters.
// AND only merges when the first filter includes the cell: otherwise the
// second is never asked.
func TestFilterListMerge(t *testing.T) {
	kv := put("r", "f", "q", 1, "v")
	for _, first := range allReturnCodes {
		for _, second := range allReturnCodes {
			a, b := &stubFilter{rc: first, hint: encoding.FirstOnRow(nil, []byte("s"))}, &stubFilter{rc: second, hint: encoding.FirstOnRow(nil, []byte("t"))}
			rc, err := NewFilterList(MustPassAll, a, b).FilterCell(kv)
			require.NoError(t, err)
			want := mergeAllTable[second][first]
			if !first.Includes() {
				want = first
				require.Zero(t, b.cells, "AND must not show the cell to later filters (HBASE-20565)")
			}
			require.Equal(t, want, rc, "AND %s, %s", first, second)

			a, b = &stubFilter{rc: first, hint: a.hint}, &stubFilter{rc: second, hint: b.hint}
			rc, err = NewFilterList(MustPassOne, a, b).FilterCell(kv)
			require.NoError(t, err)
			require.Equal(t, mergeOneTable[second][first], rc, "OR %s, %s", first, second)
			require.Equal(t, 1, b.cells, "OR asks every filter")
		}
	}
}

func TestFilterListHints(t *testing.T) {
	kv := put("a", "f", "q", 1, "")
	h1, h2 := encoding.FirstOnRow(nil, []byte("c")), encoding.FirstOnRow(nil, []byte("d"))

	// AND: the hint of the filter that asked to seek.
	l := NewFilterList(MustPassAll, &stubFilter{rc: inc, hint: h2}, &stubFilter{rc: hint, hint: h1})
	rc, _ := l.FilterCell(kv)
	require.Equal(t, hint, rc)
	require.Equal(t, h1, l.NextCellHint(kv))

	// OR: the nearest hint when all seek; none if one filter has none.
	l = NewFilterList(MustPassOne, &stubFilter{rc: hint, hint: h2}, &stubFilter{rc: hint, hint: h1})
	rc, _ = l.FilterCell(kv)
	require.Equal(t, hint, rc)
	require.Equal(t, h1, l.NextCellHint(kv))
	l.SetReversed(true)
	require.Equal(t, h2, l.NextCellHint(kv), "reversed, the nearest hint is the larger key")
	l = NewFilterList(MustPassOne, &stubFilter{rc: hint, hint: h2}, &stubFilter{rc: nRow})
	rc, _ = l.FilterCell(kv)
	require.Equal(t, skip, rc)
	require.Nil(t, l.NextCellHint(kv))
	// A filter that is done has no say.
	l = NewFilterList(MustPassOne, &stubFilter{rc: hint, hint: h2}, &stubFilter{rc: inc, allRemain: true})
	rc, _ = l.FilterCell(kv)
	require.Equal(t, hint, rc)
	require.Equal(t, h2, l.NextCellHint(kv))

	require.Nil(t, NewFilterList(MustPassAll).NextCellHint(kv))
}

// TestFilterListOrRemembers: in MUST_PASS_ONE a filter that asked to skip
// ahead is not asked about the cells it skips (HBASE-17678), until the
// column, family or row changes or the hint is reached.
func TestFilterListOrRemembers(t *testing.T) {
	a := &stubFilter{rc: nCol}
	other := &stubFilter{rc: skip}
	l := NewFilterList(MustPassOne, a, other)
	for _, step := range []struct {
		kv    *encoding.KeyValue
		calls int
	}{
		{put("r", "f", "q", 3, ""), 1},
		{put("r", "f", "q", 2, ""), 1}, // same column: answered for a
		{put("r", "f", "q", 1, ""), 1},
		{put("r", "f", "s", 1, ""), 2}, // next column
		{put("r", "g", "s", 1, ""), 3}, // same qualifier, other family
	} {
		rc, err := l.FilterCell(step.kv)
		require.NoError(t, err)
		require.Equal(t, skip, rc)
		require.Equal(t, step.calls, a.cells, fmtCell(step.kv))
	}
	require.Equal(t, 5, other.cells, "SKIP is never remembered")

	a.rc, a.cells = nRow, 0
	l.Reset()
	for _, step := range []struct {
		kv    *encoding.KeyValue
		calls int
	}{
		{put("r", "f", "q", 3, ""), 1},
		{put("r", "f", "z", 2, ""), 1}, // same family: still the row a left
		{put("r", "g", "a", 1, ""), 2}, // another store
	} {
		_, err := l.FilterCell(step.kv)
		require.NoError(t, err)
		require.Equal(t, step.calls, a.cells, fmtCell(step.kv))
	}
	l.Reset()
	_, _ = l.FilterCell(put("s", "g", "a", 1, ""))
	require.Equal(t, 3, a.cells, "Reset forgets")

	a.rc, a.cells = hint, 0
	a.hint = encoding.FirstOnRowCol(nil, []byte("r"), []byte("f"), []byte("m"))
	l.Reset()
	for _, step := range []struct {
		kv    *encoding.KeyValue
		want  ReturnCode
		calls int
	}{
		{put("r", "f", "a", 1, ""), skip, 1},
		{put("r", "f", "b", 1, ""), skip, 1}, // before the hint
		{put("r", "f", "m", 1, ""), skip, 2}, // reached it
	} {
		rc, err := l.FilterCell(step.kv)
		require.NoError(t, err)
		require.Equal(t, step.want, rc)
		require.Equal(t, step.calls, a.cells, fmtCell(step.kv))
	}
}

func TestFilterListRowKey(t *testing.T) {
	// Every filter sees the row key, even after one has dropped the row.
	a, b := &stubFilter{dropRows: true}, &stubFilter{}
	drop, err := NewFilterList(MustPassAll, a, b).FilterRowKey([]byte("r"))
	require.NoError(t, err)
	require.True(t, drop)
	require.Equal(t, 1, b.rowKeys)
	// AND drops the row when a filter is done, without asking it.
	done := &stubFilter{allRemain: true}
	drop, _ = NewFilterList(MustPassAll, done, &stubFilter{}).FilterRowKey([]byte("r"))
	require.True(t, drop)
	require.Zero(t, done.rowKeys)
	// OR drops it only when every filter that is not done does.
	drop, _ = NewFilterList(MustPassOne, &stubFilter{dropRows: true}, &stubFilter{}).FilterRowKey([]byte("r"))
	require.False(t, drop)
	drop, _ = NewFilterList(MustPassOne, &stubFilter{dropRows: true}, &stubFilter{allRemain: true}).FilterRowKey([]byte("r"))
	require.True(t, drop)
	drop, _ = NewFilterList(MustPassOne).FilterRowKey([]byte("r"))
	require.False(t, drop)
}

func TestFilterListRowDecisions(t *testing.T) {
	yes, no := func() *stubFilter { return &stubFilter{allRemain: true, filterRow: true} }, func() *stubFilter { return &stubFilter{} }
	for _, tc := range []struct {
		op                      FilterListOperator
		filters                 []Filter
		allRemaining, filterRow bool
	}{
		{MustPassAll, nil, false, false},
		{MustPassOne, nil, false, false},
		{MustPassAll, []Filter{no(), no()}, false, false},
		{MustPassAll, []Filter{no(), yes()}, true, true},
		{MustPassOne, []Filter{no(), yes()}, false, false},
		{MustPassOne, []Filter{yes(), yes()}, true, true},
	} {
		l := NewFilterList(tc.op, tc.filters...)
		require.Equal(t, tc.allRemaining, l.FilterAllRemaining(), "%s %d", tc.op, len(tc.filters))
		require.Equal(t, tc.filterRow, l.FilterRow(), "%s %d", tc.op, len(tc.filters))
	}
	// An AND list whose filter is done ends the row at once.
	rc, err := NewFilterList(MustPassAll, yes()).FilterCell(put("r", "f", "q", 1, ""))
	require.NoError(t, err)
	require.Equal(t, nRow, rc)
	// An OR list whose filters are all done skips.
	rc, _ = NewFilterList(MustPassOne, yes()).FilterCell(put("r", "f", "q", 1, ""))
	require.Equal(t, skip, rc)
	rc, _ = NewFilterList(MustPassOne).FilterCell(put("r", "f", "q", 1, ""))
	require.Equal(t, inc, rc)

	require.False(t, NewFilterList(MustPassAll, no()).HasFilterRow())
	require.True(t, NewFilterList(MustPassOne, no(), NewPageFilter(1)).HasFilterRow())
	scvf := NewSingleColumnValueFilter([]byte("f"), []byte("q"), CompareEqual, NewBinaryComparator(nil))
	scvf.SetFilterIfMissing(true)
	require.False(t, NewFilterList(MustPassAll, scvf).IsFamilyEssential([]byte("g")))
	require.True(t, NewFilterList(MustPassAll, scvf, no()).IsFamilyEssential([]byte("g")))
	require.True(t, NewFilterList(MustPassAll).IsFamilyEssential([]byte("g")))
}

func TestFilterListTransform(t *testing.T) {
	mark := func(kv *encoding.KeyValue) *encoding.KeyValue {
		out := *kv
		out.Value = append(append([]byte{}, kv.Value...), '!')
		return &out
	}
	kv := put("r", "f", "q", 1, "abc")
	// AND: every filter transforms, in order.
	l := NewFilterList(MustPassAll, &stubFilter{rc: inc, transform: mark}, NewKeyOnlyFilter(true))
	rc, _ := l.FilterCell(kv)
	require.Equal(t, inc, rc)
	require.Equal(t, []byte{0, 0, 0, 4}, l.TransformCell(kv).Value)
	// OR: only the filters that included the cell.
	l = NewFilterList(MustPassOne, &stubFilter{rc: skip, transform: mark}, &stubFilter{rc: incC, transform: mark})
	rc, _ = l.FilterCell(kv)
	require.Equal(t, inc, rc) // SKIP or INCLUDE_AND_NEXT_COL: the smaller step
	require.Equal(t, "abc!", string(l.TransformCell(kv).Value))
	require.Equal(t, "abc", string(kv.Value))
	// Nested lists transform through their own members.
	inner := NewFilterList(MustPassOne, &stubFilter{rc: inc, transform: mark}, &stubFilter{rc: skip, transform: mark})
	l = NewFilterList(MustPassAll, inner, &stubFilter{rc: inc, transform: mark})
	_, _ = l.FilterCell(kv)
	require.Equal(t, "abc!!", string(l.TransformCell(kv).Value))
}

func TestFilterListReversed(t *testing.T) {
	p := NewPrefixFilter([]byte("b"))
	inner := NewFilterList(MustPassAll, p)
	l := NewFilterList(MustPassOne, inner)
	l.SetReversed(true)
	require.True(t, p.IsReversed())
	l.AddFilter(NewPrefixFilter([]byte("c")))
	require.True(t, l.Filters()[1].(*PrefixFilter).IsReversed())
	require.Equal(t, MustPassOne, l.Operator())
	require.Equal(t, "MUST_PASS_ONE", l.Operator().String())
	require.Panics(t, func() { NewFilterList(0) })
}

func TestFilterListScans(t *testing.T) {
	var cells []*encoding.KeyValue
	for _, row := range []string{"a1", "a2", "b1", "b2", "b3", "c1", "c2", "d1"} {
		cells = append(cells, put(row, "f", "x", 1, row+"x"), put(row, "f", "y", 1, row+"y"))
	}
	// OR of two prefixes: the second filter's hint skips over the b rows.
	or := &countingFilter{Filter: NewFilterList(MustPassOne, NewPrefixFilter([]byte("a")), NewPrefixFilter([]byte("c"))), cellsPerRow: map[string]int{}}
	require.Equal(t, []string{"a1/f:x/1=a1x a1/f:y/1=a1y", "a2/f:x/1=a2x a2/f:y/1=a2y", "c1/f:x/1=c1x c1/f:y/1=c1y", "c2/f:x/1=c2x c2/f:y/1=c2y"},
		fmtRows(regionScan(t, or, cells)))
	require.Equal(t, map[string]int{"a1": 2, "a2": 2, "b1": 1, "c1": 2, "c2": 2}, or.cellsPerRow)

	// AND of a prefix and a page.
	and := NewFilterList(MustPassAll, NewPrefixFilter([]byte("b")), NewPageFilter(2))
	require.Equal(t, []string{"b1/f:x/1=b1x b1/f:y/1=b1y", "b2/f:x/1=b2x b2/f:y/1=b2y"}, fmtRows(regionScan(t, and, cells)))

	// Nested: (prefix b AND qualifier y) OR row d1, keys only.
	l := NewFilterList(MustPassAll,
		NewFilterList(MustPassOne,
			NewFilterList(MustPassAll, NewPrefixFilter([]byte("b")), NewQualifierFilter(CompareEqual, NewBinaryComparator([]byte("y")))),
			NewRowFilter(CompareEqual, NewBinaryComparator([]byte("d1")))),
		NewKeyOnlyFilter(false))
	require.Equal(t, []string{"b1/f:y/1=", "b2/f:y/1=", "b3/f:y/1=", "d1/f:x/1= d1/f:y/1="}, fmtRows(regionScan(t, l, cells)))

	// A SingleColumnValueFilter inside OR keeps rows either filter keeps.
	scvf := NewSingleColumnValueFilter([]byte("f"), []byte("x"), CompareEqual, NewBinaryComparator([]byte("a2x")))
	scvf.SetFilterIfMissing(true)
	l = NewFilterList(MustPassOne, scvf, NewRowFilter(CompareEqual, NewBinaryComparator([]byte("c1"))))
	require.Equal(t, []string{"a2/f:x/1=a2x a2/f:y/1=a2y", "c1/f:x/1=c1x c1/f:y/1=c1y"}, fmtRows(regionScan(t, l, cells)))
}
