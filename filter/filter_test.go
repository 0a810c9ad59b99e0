package filter

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/encoding"
	"github.com/stretchr/testify/require"
)

// put builds a Put cell.
func put(row, fam, qual string, ts int64, value string) *encoding.KeyValue {
	return &encoding.KeyValue{Row: []byte(row), Family: []byte(fam), Qualifier: []byte(qual),
		Timestamp: ts, Type: encoding.TypePut, Value: []byte(value)}
}

// fmtCell prints a result cell as row/family:qualifier/ts=value.
func fmtCell(kv *encoding.KeyValue) string {
	return fmt.Sprintf("%s/%s:%s/%d=%s", kv.Row, kv.Family, kv.Qualifier, kv.Timestamp, encoding.FormatBytes(kv.Value))
}

// fmtRows prints rows one per string, cells separated by spaces.
func fmtRows(rows [][]*encoding.KeyValue) []string {
	out := []string{}
	for _, r := range rows {
		var s []string
		for _, kv := range r {
			s = append(s, fmtCell(kv))
		}
		out = append(out, strings.Join(s, " "))
	}
	return out
}

// simStore is one family's sorted cells and a position, standing in for a
// StoreScanner.
type simStore struct {
	cells []*encoding.KeyValue
	pos   int
}

func (s *simStore) peek() *encoding.KeyValue {
	if s.pos < len(s.cells) {
		return s.cells[s.pos]
	}
	return nil
}

func (s *simStore) skipWhile(same func(a, b *encoding.KeyValue) bool) {
	cur := s.cells[s.pos]
	for s.pos < len(s.cells) && same(s.cells[s.pos], cur) {
		s.pos++
	}
}

func (s *simStore) seek(k encoding.Key) {
	for s.pos < len(s.cells) && encoding.DefaultComparer.CompareKeyValueKey(s.cells[s.pos], k) < 0 {
		s.pos++
	}
}

func sameColumn(a, b *encoding.KeyValue) bool {
	return bytes.Equal(a.Row, b.Row) && bytes.Equal(a.Qualifier, b.Qualifier)
}

func sameRow(a, b *encoding.KeyValue) bool { return bytes.Equal(a.Row, b.Row) }

// regionScan drives f over cells in the order the Filter documentation
// gives (HBase's RegionScannerImpl, StoreScanner and UserScanQueryMatcher),
// with one store per family, every version visible and no delete markers,
// so that only the filter decides. It returns the result rows.
func regionScan(t testing.TB, f Filter, cells []*encoding.KeyValue) [][]*encoding.KeyValue {
	return regionScanDir(t, f, cells, false)
}

// regionScanDir is regionScan forward or, reversed, as a reversed scan:
// rows from the last, cells within a row still in order, and a hint
// followed to an earlier row (the last row at or before the hint's) or
// further along the current row.
func regionScanDir(t testing.TB, f Filter, cells []*encoding.KeyValue, reversed bool) [][]*encoding.KeyValue {
	f.SetReversed(reversed)
	byFamily := map[string]*simStore{}
	var families []string
	for _, kv := range cells {
		s := byFamily[string(kv.Family)]
		if s == nil {
			s = &simStore{}
			byFamily[string(kv.Family)] = s
			families = append(families, string(kv.Family))
		}
		s.cells = append(s.cells, kv)
	}
	sort.Strings(families)
	var stores []*simStore
	for _, fam := range families {
		s := byFamily[fam]
		sort.Slice(s.cells, func(i, j int) bool {
			if c := bytes.Compare(s.cells[i].Row, s.cells[j].Row); reversed && c != 0 {
				return c > 0
			}
			return encoding.DefaultComparer.CompareKeyValues(s.cells[i], s.cells[j]) < 0
		})
		stores = append(stores, s)
	}

	var rows [][]*encoding.KeyValue
	for !f.FilterAllRemaining() {
		var row []byte
		for _, s := range stores {
			if kv := s.peek(); kv != nil && (row == nil || (bytes.Compare(kv.Row, row) < 0) != reversed && !bytes.Equal(kv.Row, row)) {
				row = kv.Row
			}
		}
		if row == nil {
			break
		}
		drop, err := f.FilterRowKey(row)
		require.NoError(t, err)
		if drop {
			for _, s := range stores {
				if kv := s.peek(); kv != nil && bytes.Equal(kv.Row, row) {
					s.skipWhile(sameRow)
				}
			}
			f.Reset()
			continue
		}
		var out []*encoding.KeyValue
		done := false
	stores:
		for _, s := range stores {
			for kv := s.peek(); kv != nil && bytes.Equal(kv.Row, row); kv = s.peek() {
				if f.FilterAllRemaining() {
					done = true // the matcher's DONE_SCAN
					break stores
				}
				rc, err := f.FilterCell(kv)
				require.NoError(t, err)
				if rc.Includes() {
					out = append(out, f.TransformCell(kv).Clone())
				}
				switch rc {
				case FilterInclude, FilterSkip:
					s.pos++
				case FilterIncludeAndNextCol, FilterNextCol:
					s.skipWhile(sameColumn)
				case FilterIncludeAndSeekNextRow, FilterNextRow:
					s.skipWhile(sameRow)
				case FilterSeekNextUsingHint:
					h := f.NextCellHint(kv)
					switch {
					case h == nil:
						s.pos++
					case reversed && bytes.Compare(h.Row(), kv.Row) < 0:
						for s.pos < len(s.cells) && bytes.Compare(s.cells[s.pos].Row, h.Row()) > 0 {
							s.pos++
						}
					case reversed && !bytes.Equal(h.Row(), kv.Row):
						s.pos++
					case reversed && encoding.DefaultComparer.CompareKeyValueKey(kv, h) < 0:
						row := kv.Row
						for s.pos < len(s.cells) && bytes.Equal(s.cells[s.pos].Row, row) &&
							encoding.DefaultComparer.CompareKeyValueKey(s.cells[s.pos], h) < 0 {
							s.pos++
						}
					case encoding.DefaultComparer.CompareKeyValueKey(kv, h) < 0:
						s.seek(h)
					default:
						s.pos++
					}
				default:
					t.Fatalf("return code %s", rc)
				}
			}
		}
		if f.HasFilterRow() {
			out = f.FilterRowCells(out)
			if len(out) > 0 && f.FilterRow() {
				out = nil
			}
		} else if len(out) > 0 && f.FilterRow() {
			out = nil
		}
		if len(out) > 0 {
			rows = append(rows, out)
		}
		f.Reset()
		if done {
			break
		}
	}
	return rows
}

// stubFilter answers every cell with a fixed code and hint and counts the
// calls it gets.
type stubFilter struct {
	FilterBase
	rc        ReturnCode
	hint      encoding.Key
	cells     int
	rowKeys   int
	dropRows  bool
	allRemain bool
	filterRow bool
	transform func(*encoding.KeyValue) *encoding.KeyValue
}

func (f *stubFilter) FilterCell(*encoding.KeyValue) (ReturnCode, error) {
	f.cells++
	return f.rc, nil
}

func (f *stubFilter) FilterRowKey([]byte) (bool, error) {
	f.rowKeys++
	return f.dropRows, nil
}

func (f *stubFilter) FilterAllRemaining() bool                     { return f.allRemain }
func (f *stubFilter) FilterRow() bool                              { return f.filterRow }
func (f *stubFilter) NextCellHint(*encoding.KeyValue) encoding.Key { return f.hint }

func (f *stubFilter) TransformCell(kv *encoding.KeyValue) *encoding.KeyValue {
	if f.transform != nil {
		return f.transform(kv)
	}
	return kv
}

var allReturnCodes = []ReturnCode{FilterInclude, FilterIncludeAndNextCol, FilterIncludeAndSeekNextRow,
	FilterSkip, FilterNextCol, FilterNextRow, FilterSeekNextUsingHint}

func TestReturnCodeString(t *testing.T) {
	var names []string
	for _, rc := range allReturnCodes {
		names = append(names, rc.String())
	}
	require.Equal(t, []string{"INCLUDE", "INCLUDE_AND_NEXT_COL", "INCLUDE_AND_SEEK_NEXT_ROW", "SKIP",
		"NEXT_COL", "NEXT_ROW", "SEEK_NEXT_USING_HINT"}, names)
	require.Equal(t, "ReturnCode(9)", ReturnCode(9).String())
	for _, rc := range allReturnCodes {
		require.Equal(t, strings.HasPrefix(rc.String(), "INCLUDE"), rc.Includes(), rc)
	}
}

// TestCompareOpFilterOut pins HBase's CompareFilter.compare: the argument is
// comparator.compareTo(cell), so "positive" means the cell is smaller.
func TestCompareOpFilterOut(t *testing.T) {
	// filtered out for compareTo results -1 (cell larger), 0, 1 (cell smaller)
	for _, tc := range []struct {
		op   CompareOp
		name string
		want [3]bool
	}{
		{CompareLess, "LESS", [3]bool{true, true, false}},
		{CompareLessOrEqual, "LESS_OR_EQUAL", [3]bool{true, false, false}},
		{CompareEqual, "EQUAL", [3]bool{true, false, true}},
		{CompareNotEqual, "NOT_EQUAL", [3]bool{false, true, false}},
		{CompareGreaterOrEqual, "GREATER_OR_EQUAL", [3]bool{false, false, true}},
		{CompareGreater, "GREATER", [3]bool{false, true, true}},
		{CompareNoOp, "NO_OP", [3]bool{true, true, true}},
		{CompareOp(7), "CompareOp(7)", [3]bool{true, true, true}},
	} {
		require.Equal(t, tc.name, tc.op.String())
		for i, res := range []int{-1, 0, 1} {
			require.Equal(t, tc.want[i], tc.op.FilterOut(res), "%s with compareTo %d", tc.op, res)
		}
	}
}

// TestCompareDirection checks end to end that "value op operand" is what
// passes: ValueFilter(op, BinaryComparator("m")) over the values a, m, z.
func TestCompareDirection(t *testing.T) {
	cells := []*encoding.KeyValue{put("r1", "f", "q", 1, "a"), put("r2", "f", "q", 1, "m"), put("r3", "f", "q", 1, "z")}
	for _, tc := range []struct {
		op   CompareOp
		want []string
	}{
		{CompareLess, []string{"a"}},
		{CompareLessOrEqual, []string{"a", "m"}},
		{CompareEqual, []string{"m"}},
		{CompareNotEqual, []string{"a", "z"}},
		{CompareGreaterOrEqual, []string{"m", "z"}},
		{CompareGreater, []string{"z"}},
		{CompareNoOp, nil},
	} {
		rows := regionScan(t, NewValueFilter(tc.op, NewBinaryComparator([]byte("m"))), cells)
		var got []string
		for _, r := range rows {
			got = append(got, string(r[0].Value))
		}
		require.Equal(t, tc.want, got, tc.op)
	}
}

func TestRowFilter(t *testing.T) {
	cells := []*encoding.KeyValue{
		put("r1", "f", "a", 1, "1"), put("r1", "g", "a", 1, "2"),
		put("r2", "f", "a", 1, "3"), put("r3", "f", "a", 1, "4"),
	}
	rows := regionScan(t, NewRowFilter(CompareLess, NewBinaryComparator([]byte("r2"))), cells)
	require.Equal(t, []string{"r1/f:a/1=1 r1/g:a/1=2"}, fmtRows(rows))
	rows = regionScan(t, NewRowFilter(CompareNotEqual, NewBinaryComparator([]byte("r2"))), cells)
	require.Equal(t, []string{"r1/f:a/1=1 r1/g:a/1=2", "r3/f:a/1=4"}, fmtRows(rows))

	// The verdict sticks until Reset, and a failed row skips every cell.
	f := NewRowFilter(CompareEqual, NewBinaryComparator([]byte("r2")))
	drop, err := f.FilterRowKey([]byte("r1"))
	require.NoError(t, err)
	require.True(t, drop)
	rc, _ := f.FilterCell(put("r1", "f", "a", 1, ""))
	require.Equal(t, FilterNextRow, rc)
	require.True(t, f.FilterRow())
	f.Reset()
	drop, _ = f.FilterRowKey([]byte("r2"))
	require.False(t, drop)
	rc, _ = f.FilterCell(put("r2", "f", "a", 1, ""))
	require.Equal(t, FilterInclude, rc)
	require.False(t, f.FilterRow())

	// NO_OP drops every row without a comparator; any other op needs one.
	drop, err = NewRowFilter(CompareNoOp, nil).FilterRowKey([]byte("r1"))
	require.NoError(t, err)
	require.True(t, drop)
	_, err = NewRowFilter(CompareEqual, nil).FilterRowKey([]byte("r1"))
	require.True(t, errors.Is(err, ErrBadFilter), err)
	_, err = NewRowFilter(CompareOp(42), NewBinaryComparator(nil)).FilterRowKey([]byte("r1"))
	require.True(t, errors.Is(err, ErrBadFilter), err)
}

func TestFamilyQualifierValueFilters(t *testing.T) {
	cells := []*encoding.KeyValue{
		put("r1", "f", "a", 2, "x1"), put("r1", "f", "a", 1, "y1"), put("r1", "f", "b", 1, "x2"),
		put("r1", "g", "a", 1, "x3"), put("r1", "h", "c", 1, "y4"),
	}
	// FamilyFilter ends the row in each failing store; cells without a
	// family would pass.
	f := NewFamilyFilter(CompareGreaterOrEqual, NewBinaryComparator([]byte("g")))
	require.Equal(t, []string{"r1/g:a/1=x3 r1/h:c/1=y4"}, fmtRows(regionScan(t, f, cells)))
	rc, err := f.FilterCell(&encoding.KeyValue{Row: []byte("r")})
	require.NoError(t, err)
	require.Equal(t, FilterInclude, rc)
	rc, _ = f.FilterCell(put("r", "a", "q", 1, ""))
	require.Equal(t, FilterNextRow, rc)

	// QualifierFilter skips cell by cell; an empty qualifier passes.
	q := NewQualifierFilter(CompareEqual, NewBinaryComparator([]byte("a")))
	require.Equal(t, []string{"r1/f:a/2=x1 r1/f:a/1=y1 r1/g:a/1=x3"}, fmtRows(regionScan(t, q, cells)))
	rc, _ = q.FilterCell(put("r", "f", "", 1, ""))
	require.Equal(t, FilterInclude, rc)
	rc, _ = q.FilterCell(put("r", "f", "b", 1, ""))
	require.Equal(t, FilterSkip, rc)

	// ValueFilter with a prefix comparator.
	v := NewValueFilter(CompareEqual, NewBinaryPrefixComparator([]byte("x")))
	require.Equal(t, []string{"r1/f:a/2=x1 r1/f:b/1=x2 r1/g:a/1=x3"}, fmtRows(regionScan(t, v, cells)))
	_, err = NewValueFilter(CompareEqual, nil).FilterCell(cells[0])
	require.True(t, errors.Is(err, ErrBadFilter), err)
}

func TestSingleColumnValueFilter(t *testing.T) {
	cells := []*encoding.KeyValue{
		// r1: newest a passes
		put("r1", "f", "a", 2, "1"), put("r1", "f", "a", 1, "0"), put("r1", "f", "b", 1, "x"),
		// r2: a fails
		put("r2", "f", "a", 1, "0"), put("r2", "f", "b", 1, "y"),
		// r3: no a
		put("r3", "f", "b", 1, "z"),
		// r4: newest a fails, an older one passes
		put("r4", "f", "a", 2, "0"), put("r4", "f", "a", 1, "1"),
		// r5: another family comes first, then a failing a
		put("r5", "e", "x", 1, "1"), put("r5", "f", "a", 1, "0"),
		// r6: a passes; the other family's cells come first and stay
		put("r6", "e", "x", 1, "e"), put("r6", "f", "a", 1, "1"),
	}
	newFilter := func() *SingleColumnValueFilter {
		return NewSingleColumnValueFilter([]byte("f"), []byte("a"), CompareEqual, NewBinaryComparator([]byte("1")))
	}

	f := newFilter()
	require.True(t, f.LatestVersionOnly())
	require.False(t, f.FilterIfMissing())
	require.True(t, f.HasFilterRow())
	require.Equal(t, []string{
		"r1/f:a/2=1 r1/f:a/1=0 r1/f:b/1=x",
		"r3/f:b/1=z",
		"r6/e:x/1=e r6/f:a/1=1",
	}, fmtRows(regionScan(t, f, cells)))

	f = newFilter()
	f.SetFilterIfMissing(true)
	require.Equal(t, []string{"r1/f:a/2=1 r1/f:a/1=0 r1/f:b/1=x", "r6/e:x/1=e r6/f:a/1=1"},
		fmtRows(regionScan(t, f, cells)))

	f = newFilter()
	f.SetLatestVersionOnly(false)
	require.Equal(t, []string{
		"r1/f:a/2=1 r1/f:a/1=0 r1/f:b/1=x",
		"r3/f:b/1=z",
		"r4/f:a/2=0 r4/f:a/1=1",
		"r6/e:x/1=e r6/f:a/1=1",
	}, fmtRows(regionScan(t, f, cells)))

	// The return codes, cell by cell.
	f = newFilter()
	for _, step := range []struct {
		kv   *encoding.KeyValue
		want ReturnCode
	}{
		{put("r", "f", "0", 1, "9"), FilterInclude}, // another column
		{put("r", "f", "a", 3, "0"), FilterNextRow}, // the newest version fails
		{put("r", "f", "a", 2, "1"), FilterNextRow}, // too late
	} {
		rc, err := f.FilterCell(step.kv)
		require.NoError(t, err)
		require.Equal(t, step.want, rc, fmtCell(step.kv))
	}
	require.True(t, f.FilterRow())
	f.Reset()
	require.False(t, f.FilterRow())

	// Essential families: all of them unless rows without the column drop.
	f = newFilter()
	require.True(t, f.IsFamilyEssential([]byte("e")))
	f.SetFilterIfMissing(true)
	require.False(t, f.IsFamilyEssential([]byte("e")))
	require.True(t, f.IsFamilyEssential([]byte("f")))

	// NO_OP is not an operator SingleColumnValueFilter can apply (HBase
	// throws); other columns still pass.
	bad := NewSingleColumnValueFilter([]byte("f"), []byte("a"), CompareNoOp, NewBinaryComparator(nil))
	rc, err := bad.FilterCell(put("r", "f", "b", 1, ""))
	require.NoError(t, err)
	require.Equal(t, FilterInclude, rc)
	_, err = bad.FilterCell(put("r", "f", "a", 1, ""))
	require.True(t, errors.Is(err, ErrBadFilter), err)
	require.Contains(t, err.Error(), "NO_OP")
}

// TestSingleColumnValueFilterNullComparator: with NullComparator, EQUAL
// keeps the rows that lack the column and NOT_EQUAL those that have it,
// even with an empty value.
func TestSingleColumnValueFilterNullComparator(t *testing.T) {
	cells := []*encoding.KeyValue{
		put("r1", "f", "a", 1, ""), put("r1", "f", "b", 1, "x"),
		put("r2", "f", "b", 1, "y"),
	}
	eq := NewSingleColumnValueFilter([]byte("f"), []byte("a"), CompareEqual, NewNullComparator())
	require.Equal(t, []string{"r2/f:b/1=y"}, fmtRows(regionScan(t, eq, cells)))
	ne := NewSingleColumnValueFilter([]byte("f"), []byte("a"), CompareNotEqual, NewNullComparator())
	ne.SetFilterIfMissing(true)
	require.Equal(t, []string{"r1/f:a/1= r1/f:b/1=x"}, fmtRows(regionScan(t, ne, cells)))
}

// countingFilter wraps a filter and counts the cells shown to it per row.
type countingFilter struct {
	Filter
	cellsPerRow map[string]int
}

func (c *countingFilter) FilterCell(kv *encoding.KeyValue) (ReturnCode, error) {
	c.cellsPerRow[string(kv.Row)]++
	return c.Filter.FilterCell(kv)
}

func TestPrefixFilter(t *testing.T) {
	cells := []*encoding.KeyValue{
		put("a", "f", "q", 1, ""), put("aa", "f", "q", 1, ""), put("aa", "f", "r", 1, ""),
		put("b", "f", "q", 1, ""), put("bb", "f", "q", 1, ""), put("bb", "g", "q", 1, ""),
		put("c", "f", "q", 1, ""), put("d", "f", "q", 1, ""),
	}
	c := &countingFilter{Filter: NewPrefixFilter([]byte("b")), cellsPerRow: map[string]int{}}
	require.Equal(t, []string{"b/f:q/1=", "bb/f:q/1= bb/g:q/1="}, fmtRows(regionScan(t, c, cells)))
	// Only the first cell before the prefix is read: it seeks to the prefix.
	// After the prefix the scan ends at the row key.
	require.Equal(t, map[string]int{"a": 1, "b": 1, "bb": 2}, c.cellsPerRow)
	require.True(t, c.FilterAllRemaining())

	f := NewPrefixFilter([]byte("bc"))
	drop, err := f.FilterRowKey([]byte("b")) // shorter than the prefix and before it
	require.NoError(t, err)
	require.False(t, drop)
	rc, _ := f.FilterCell(cells[0])
	require.Equal(t, FilterSeekNextUsingHint, rc)
	require.Equal(t, "bc/:/LATEST_TIMESTAMP/Maximum", f.NextCellHint(cells[0]).String())
	require.True(t, f.FilterRow())

	// An empty prefix keeps everything; a nil one (HBase's null) drops it all.
	require.Len(t, regionScan(t, NewPrefixFilter([]byte{}), cells), 6)
	require.Empty(t, regionScan(t, NewPrefixFilter(nil), cells))
	require.Nil(t, NewPrefixFilter(nil).NextCellHint(cells[0]))
}

func TestPrefixFilterReversed(t *testing.T) {
	f := NewPrefixFilter([]byte("b"))
	f.SetReversed(true)
	step := func(row string) (bool, ReturnCode) {
		t.Helper()
		f.Reset()
		drop, err := f.FilterRowKey([]byte(row))
		require.NoError(t, err)
		rc, err := f.FilterCell(put(row, "f", "q", 1, ""))
		require.NoError(t, err)
		return drop, rc
	}
	drop, rc := step("d") // after the prefix: seek back to it
	require.False(t, drop)
	require.Equal(t, FilterSeekNextUsingHint, rc)
	require.Equal(t, "c/:/LATEST_TIMESTAMP/Maximum", f.NextCellHint(nil).String())
	drop, rc = step("bz")
	require.False(t, drop)
	require.Equal(t, FilterInclude, rc)
	require.False(t, f.FilterAllRemaining())
	drop, _ = step("a") // before it: done
	require.True(t, drop)
	require.True(t, f.FilterAllRemaining())

	// The reversed hint is after every row with the prefix, bytes unsigned.
	for _, tc := range []struct{ prefix, hintRow string }{
		{"b\x7f", "b\x80"},
		{"b\xff", "c\xff"},
		{"\xfe\xff\xff", "\xff\xff\xff"},
	} {
		f := NewPrefixFilter([]byte(tc.prefix))
		f.SetReversed(true)
		require.Equal(t, tc.hintRow, string(f.NextCellHint(nil).Row()), "%q", tc.prefix)
	}
	f = NewPrefixFilter([]byte("\xff\xff"))
	f.SetReversed(true)
	require.Nil(t, f.NextCellHint(nil))
}

func TestColumnPrefixFilter(t *testing.T) {
	cells := []*encoding.KeyValue{
		put("r1", "f", "a", 1, ""), put("r1", "f", "b", 1, ""), put("r1", "f", "ba", 2, ""),
		put("r1", "f", "ba", 1, ""), put("r1", "f", "bab", 1, ""), put("r1", "f", "bb", 1, ""),
		put("r1", "f", "c", 1, ""), put("r2", "f", "bac", 1, ""),
	}
	c := &countingFilter{Filter: NewColumnPrefixFilter([]byte("ba")), cellsPerRow: map[string]int{}}
	require.Equal(t, []string{"r1/f:ba/2= r1/f:ba/1= r1/f:bab/1=", "r2/f:bac/1="}, fmtRows(regionScan(t, c, cells)))
	// a: hint; ba, ba, bab: included; bb: next row. b and c are never read.
	require.Equal(t, map[string]int{"r1": 5, "r2": 1}, c.cellsPerRow)

	f := NewColumnPrefixFilter([]byte("ba"))
	for _, tc := range []struct {
		qual string
		want ReturnCode
	}{
		{"", FilterSeekNextUsingHint}, {"a", FilterSeekNextUsingHint}, {"b", FilterSeekNextUsingHint},
		{"ba", FilterInclude}, {"bazz", FilterInclude}, {"bb", FilterNextRow}, {"c", FilterNextRow},
	} {
		rc, err := f.FilterCell(put("r", "f", tc.qual, 1, ""))
		require.NoError(t, err)
		require.Equal(t, tc.want, rc, tc.qual)
	}
	require.Equal(t, "r/f:ba/LATEST_TIMESTAMP/Maximum", f.NextCellHint(put("r", "f", "a", 7, "")).String())
}

func TestKeyOnlyFilter(t *testing.T) {
	in := put("r", "f", "q", 5, "hello")
	in.Tags = []byte{0, 1, 2}
	orig := in.Clone()
	for _, tc := range []struct {
		lenAsVal bool
		value    []byte
	}{{false, nil}, {true, []byte{0, 0, 0, 5}}} {
		f := NewKeyOnlyFilter(tc.lenAsVal)
		rc, err := f.FilterCell(in)
		require.NoError(t, err)
		require.Equal(t, FilterInclude, rc)
		out := f.TransformCell(in)
		require.Equal(t, tc.value, out.Value)
		require.Nil(t, out.Tags)
		require.Equal(t, in.Key(), out.Key())
		require.Equal(t, orig, in, "the input must not change")
	}
	rows := regionScan(t, NewKeyOnlyFilter(true), []*encoding.KeyValue{put("r1", "f", "a", 1, "abc"), put("r2", "f", "a", 1, "")})
	require.Equal(t, []string{`r1/f:a/1=\x00\x00\x00\x03`, `r2/f:a/1=\x00\x00\x00\x00`}, fmtRows(rows))
}

func TestFirstKeyOnlyFilter(t *testing.T) {
	cells := []*encoding.KeyValue{
		put("r1", "f", "a", 2, "1"), put("r1", "f", "a", 1, "2"), put("r1", "f", "b", 1, "3"), put("r1", "g", "a", 1, "4"),
		put("r2", "g", "b", 1, "5"),
	}
	require.Equal(t, []string{"r1/f:a/2=1", "r2/g:b/1=5"}, fmtRows(regionScan(t, NewFirstKeyOnlyFilter(), cells)))
}

func TestPageFilter(t *testing.T) {
	var cells []*encoding.KeyValue
	for i := 1; i <= 5; i++ {
		cells = append(cells, put(fmt.Sprintf("r%d", i), "f", "a", 1, "x"), put(fmt.Sprintf("r%d", i), "f", "b", 1, "y"))
	}
	f := NewPageFilter(2)
	require.Len(t, regionScan(t, f, cells), 2)
	require.True(t, f.FilterAllRemaining())
	drop, err := f.FilterRowKey([]byte("r9"))
	require.NoError(t, err)
	require.True(t, drop)

	require.Empty(t, regionScan(t, NewPageFilter(0), cells))
	require.Empty(t, regionScan(t, NewPageFilter(-1), cells))
	require.Len(t, regionScan(t, NewPageFilter(10), cells), 5)

	// Rows left empty by other filters do not count.
	cells = []*encoding.KeyValue{
		put("r1", "f", "a", 1, "keep"), put("r2", "f", "a", 1, "drop"),
		put("r3", "f", "a", 1, "keep"), put("r4", "f", "a", 1, "keep"),
	}
	l := NewFilterList(MustPassAll, NewValueFilter(CompareEqual, NewBinaryComparator([]byte("keep"))), NewPageFilter(2))
	require.Equal(t, []string{"r1/f:a/1=keep", "r3/f:a/1=keep"}, fmtRows(regionScan(t, l, cells)))
}

func TestFilterBaseDefaults(t *testing.T) {
	var b FilterBase
	b.Reset()
	require.False(t, b.FilterAllRemaining())
	drop, err := b.FilterRowKey([]byte("r"))
	require.NoError(t, err)
	require.False(t, drop)
	kv := put("r", "f", "q", 1, "v")
	require.Same(t, kv, b.TransformCell(kv))
	cells := []*encoding.KeyValue{kv}
	require.Equal(t, cells, b.FilterRowCells(cells))
	require.False(t, b.HasFilterRow())
	require.False(t, b.FilterRow())
	require.Nil(t, b.NextCellHint(kv))
	require.True(t, b.IsFamilyEssential([]byte("f")))
	require.False(t, b.IsReversed())
	b.SetReversed(true)
	require.True(t, b.IsReversed())
}
