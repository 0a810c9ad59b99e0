package filter

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/encoding"
	"github.com/stretchr/testify/require"
)

// rowKeys returns the row of each result row.
func rowKeys(rows [][]*encoding.KeyValue) []string {
	out := []string{}
	for _, r := range rows {
		out = append(out, string(r[0].Row))
	}
	return out
}

// rowCells has one cell in each of rows, in family f, plus one in g for
// every other row.
func rowCells(rows ...string) []*encoding.KeyValue {
	var cells []*encoding.KeyValue
	for i, r := range rows {
		cells = append(cells, put(r, "f", "q", 1, r))
		if i%2 == 0 {
			cells = append(cells, put(r, "g", "q", 1, r))
		}
	}
	return cells
}

func TestInclusiveStopFilter(t *testing.T) {
	cells := rowCells("a", "b", "bb", "c")
	f := NewInclusiveStopFilter([]byte("b"))
	require.Equal(t, []string{"a", "b"}, rowKeys(regionScan(t, f, cells)))
	require.True(t, f.FilterAllRemaining())
	rc, err := f.FilterCell(cells[0])
	require.NoError(t, err)
	require.Equal(t, FilterNextRow, rc)

	require.Equal(t, []string{"c", "bb", "b"}, rowKeys(regionScanDir(t, NewInclusiveStopFilter([]byte("b")), cells, true)))
	require.Equal(t, []string{}, rowKeys(regionScan(t, NewInclusiveStopFilter([]byte{}), cells)))

	// HBase's null stop row fails at the first row, not when decoding.
	_, err = NewInclusiveStopFilter(nil).FilterRowKey([]byte("a"))
	require.True(t, errors.Is(err, ErrBadFilter), err)
}

func TestRandomRowFilter(t *testing.T) {
	var cells []*encoding.KeyValue
	for i := 0; i < 1000; i++ {
		cells = append(cells, put(fmt.Sprintf("r%04d", i), "f", "q", 1, ""))
	}
	for _, tc := range []struct {
		chance float32
		rows   int
	}{{-1, 0}, {0, 0}, {float32(math.NaN()), 0}, {1, 1000}, {2, 1000}} {
		require.Len(t, regionScan(t, NewRandomRowFilter(tc.chance), cells), tc.rows, "chance %v", tc.chance)
	}
	f := NewRandomRowFilter(0.25)
	rng := rand.New(rand.NewPCG(1, 2))
	f.dice = rng.Float32
	n := len(regionScan(t, f, cells))
	require.InDelta(t, 250, n, 60)
	// A losing row skips its cells and is dropped.
	f.dice = func() float32 { return 0.5 }
	drop, err := f.FilterRowKey([]byte("r"))
	require.NoError(t, err)
	require.True(t, drop)
	rc, _ := f.FilterCell(cells[0])
	require.Equal(t, FilterNextRow, rc)
	require.True(t, f.FilterRow())
	f.Reset()
	require.False(t, f.FilterRow())
}

func mustRanges(t testing.TB, ranges ...RowRange) *MultiRowRangeFilter {
	f, err := NewMultiRowRangeFilter(ranges)
	require.NoError(t, err)
	return f
}

func rr(start string, startIncl bool, stop string, stopIncl bool) RowRange {
	return RowRange{StartRow: []byte(start), StartRowInclusive: startIncl, StopRow: []byte(stop), StopRowInclusive: stopIncl}
}

func TestMultiRowRangeMerge(t *testing.T) {
	for _, tc := range []struct {
		in   []RowRange
		want string
	}{
		{[]RowRange{rr("c", true, "d", false), rr("a", true, "b", false)}, "[[a, b) [c, d)]"},
		{[]RowRange{rr("a", true, "c", false), rr("b", true, "d", false)}, "[[a, d)]"},
		{[]RowRange{rr("a", true, "d", false), rr("b", true, "c", true)}, "[[a, d)]"},
		{[]RowRange{rr("a", true, "b", false), rr("b", true, "c", false)}, "[[a, c)]"}, // touching
		{[]RowRange{rr("a", true, "b", false), rr("b", false, "c", false)}, "[[a, b) (b, c)]"},
		{[]RowRange{rr("a", true, "b", true), rr("b", false, "c", false)}, "[[a, c)]"},
		{[]RowRange{rr("a", true, "b", false), rr("a", true, "b", true)}, "[[a, b]]"},
		{[]RowRange{rr("a", false, "c", false), rr("a", true, "b", false)}, "[[a, c)]"}, // HBase would keep (a
		{[]RowRange{rr("b", true, "", false), rr("a", true, "c", false), rr("x", true, "y", false)}, "[[a, )]"},
		{[]RowRange{rr("", true, "b", false), rr("c", true, "", false)}, "[[, b) [c, )]"},
		{[]RowRange{rr("a", true, "a", true)}, "[[a, a]]"},
	} {
		f := mustRanges(t, tc.in...)
		require.Equal(t, tc.want, f.String(), "%v", tc.in)
	}
	for _, bad := range [][]RowRange{nil, {rr("b", true, "a", false)}, {rr("a", true, "a", false)}, {rr("a", true, "b", false), rr("d", true, "c", true)}} {
		_, err := NewMultiRowRangeFilter(bad)
		require.True(t, errors.Is(err, ErrBadFilter), "%v: %v", bad, err)
	}
}

func TestMultiRowRangeFilter(t *testing.T) {
	cells := rowCells("a", "b", "ba", "c", "d", "e", "f", "g")
	ranges := []RowRange{rr("b", false, "c", true), rr("e", true, "f", false), rr("g", true, "", false)}
	require.Equal(t, []string{"ba", "c", "e", "g"}, rowKeys(regionScan(t, mustRanges(t, ranges...), cells)))
	require.Equal(t, []string{"g", "e", "c", "ba"}, rowKeys(regionScanDir(t, mustRanges(t, ranges...), cells, true)))

	// The return codes and hints, forward.
	f := mustRanges(t, rr("b", false, "c", true), rr("e", true, "f", false))
	step := func(row string) (ReturnCode, string) {
		t.Helper()
		f.Reset()
		drop, err := f.FilterRowKey([]byte(row))
		require.NoError(t, err)
		require.False(t, drop, "MultiRowRangeFilter answers with the cells' codes")
		rc, err := f.FilterCell(put(row, "f", "q", 1, ""))
		require.NoError(t, err)
		if h := f.NextCellHint(nil); h != nil {
			return rc, string(h.Row())
		}
		return rc, ""
	}
	for _, tc := range []struct {
		row  string
		rc   ReturnCode
		hint string
	}{
		{"a", FilterSeekNextUsingHint, "b"},
		{"b", FilterNextRow, ""}, // the exclusive start
		{"bb", FilterInclude, ""},
		{"c", FilterInclude, ""},
		{"d", FilterSeekNextUsingHint, "e"},
		{"e", FilterInclude, ""},
		{"f", FilterNextRow, ""}, // past the last range
	} {
		rc, hint := step(tc.row)
		require.Equal(t, tc.rc, rc, tc.row)
		require.Equal(t, tc.hint, hint, tc.row)
	}
	require.True(t, f.FilterAllRemaining())
	drop, _ := f.FilterRowKey([]byte("z"))
	require.True(t, drop)

	// Reversed: hints are stop rows.
	f = mustRanges(t, rr("b", false, "c", true), rr("e", true, "f", false))
	f.SetReversed(true)
	for _, tc := range []struct {
		row  string
		rc   ReturnCode
		hint string
	}{
		{"z", FilterSeekNextUsingHint, "f"},
		{"f", FilterNextRow, ""}, // the exclusive stop
		{"e", FilterInclude, ""},
		{"d", FilterSeekNextUsingHint, "c"},
		{"c", FilterInclude, ""},
		{"b", FilterNextRow, ""},
	} {
		rc, hint := step(tc.row)
		require.Equal(t, tc.rc, rc, tc.row)
		require.Equal(t, tc.hint, hint, tc.row)
	}
	require.True(t, f.FilterAllRemaining())

	f, err := NewMultiRowRangeFilterFromPrefixes([][]byte{[]byte("b"), []byte("\xff"), []byte("e\xff")})
	require.NoError(t, err)
	require.Equal(t, `[[b, c) [e\xFF, f) [\xFF, )]`, f.String())
}

// TestMultiRowRangeFilterRandom checks forward and reversed scans against
// the ranges' union on random rows and ranges.
func TestMultiRowRangeFilterRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	randRow := func() string { return string([]byte{'a' + byte(rng.IntN(6)), 'a' + byte(rng.IntN(3))})[:1+rng.IntN(2)] }
	for iter := 0; iter < 500; iter++ {
		rowSet := map[string]bool{}
		for i := 0; i < 12; i++ {
			rowSet[randRow()] = true
		}
		var rows []string
		for r := range rowSet {
			rows = append(rows, r)
		}
		slices.Sort(rows)
		var ranges []RowRange
		for i := 0; i < 1+rng.IntN(4); i++ {
			a, b := randRow(), randRow()
			if rng.IntN(5) == 0 {
				a = ""
			}
			if rng.IntN(5) == 0 {
				b = ""
			}
			if a > b && b != "" {
				a, b = b, a
			}
			r := rr(a, rng.IntN(2) == 0, b, rng.IntN(2) == 0)
			if !r.valid() {
				r.StopRowInclusive = true
			}
			ranges = append(ranges, r)
		}
		var want []string
		for _, row := range rows {
			for _, r := range ranges {
				if r.contains([]byte(row)) {
					want = append(want, row)
					break
				}
			}
		}
		cells := rowCells(rows...)
		got := rowKeys(regionScan(t, mustRanges(t, ranges...), cells))
		require.Equal(t, fmt.Sprint(want), fmt.Sprint(got), "ranges %v rows %v", ranges, rows)
		got = rowKeys(regionScanDir(t, mustRanges(t, ranges...), cells, true))
		slices.Reverse(got)
		require.Equal(t, fmt.Sprint(want), fmt.Sprint(got), "reversed: ranges %v rows %v", ranges, rows)
	}
}

func mustFuzzy(t testing.TB, pairs ...string) *FuzzyRowFilter {
	var keys []FuzzyKey
	for i := 0; i < len(pairs); i += 2 {
		keys = append(keys, FuzzyKey{Key: []byte(pairs[i]), Mask: []byte(pairs[i+1])})
	}
	f, err := NewFuzzyRowFilter(keys)
	require.NoError(t, err)
	return f
}

func TestFuzzyRowFilter(t *testing.T) {
	// "??_99": any two bytes, then _99.
	f := mustFuzzy(t, "..x99", "\x01\x01\x00\x00\x00")
	for _, tc := range []struct {
		row   string
		match bool
	}{
		{"abx99", true}, {"zzx99", true}, {"abx99tail", true}, {"abx9", true}, {"ab", true}, // shorter rows compare their bytes only
		{"abx98", false}, {"aby99", false}, {"", true},
	} {
		require.Equal(t, tc.match, f.fuzzy[0].matches([]byte(tc.row)), "%q", tc.row)
	}

	cells := rowCells("aax99", "aax98", "abx99", "bbx99", "bby00", "zz")
	require.Equal(t, []string{"aax99", "abx99", "bbx99", "zz"}, rowKeys(regionScan(t, mustFuzzy(t, "..x99", "\x01\x01\x00\x00\x00"), cells)))
	require.Equal(t, []string{"zz", "bbx99", "abx99", "aax99"}, rowKeys(regionScanDir(t, mustFuzzy(t, "..x99", "\x01\x01\x00\x00\x00"), cells, true)))

	// Hints: the nearest row that can match.
	f = mustFuzzy(t, "a.c", "\x00\x01\x00")
	rc, err := f.FilterCell(put("b", "f", "q", 1, ""))
	require.NoError(t, err)
	require.Equal(t, FilterSeekNextUsingHint, rc)
	require.Nil(t, f.NextCellHint(put("b", "f", "q", 1, "")), "nothing after b can match a?c")
	require.True(t, f.FilterAllRemaining())
	require.True(t, f.FilterRow())

	for _, tc := range []struct {
		reversed  bool
		row, hint string
	}{
		{false, "0", "a\x00c"},
		{false, "a5d", "a6c"},
		{false, "a5b", "a5c"},
		{false, "a\xffd", ""},
		{true, "a5b", "a4d"},
		{true, "a5d", "a5d"},
		{true, "b", "a\xffd"},
		{true, "a\x00b", ""},
	} {
		f := mustFuzzy(t, "a.c", "\x00\x01\x00")
		f.SetReversed(tc.reversed)
		kv := put(tc.row, "f", "q", 1, "")
		rc, err := f.FilterCell(kv)
		require.NoError(t, err)
		require.Equal(t, FilterSeekNextUsingHint, rc, "%q", tc.row)
		h := f.NextCellHint(kv)
		if tc.hint == "" {
			require.Nil(t, h, "%v %q", tc.reversed, tc.row)
			continue
		}
		require.Equal(t, tc.hint, string(h.Row()), "%v %q", tc.reversed, tc.row)
	}

	// HBase's preprocessed masks (0xFF fixed, 2 free) mean the same.
	g, err := NewFuzzyRowFilter([]FuzzyKey{{Key: []byte("a\x00c"), Mask: []byte("\xff\x02\xff")}})
	require.NoError(t, err)
	require.Equal(t, []FuzzyKey{{Key: []byte("a\x00c"), Mask: []byte{0, 1, 0}}}, g.Keys())
	for _, bad := range []FuzzyKey{{Key: []byte("ab"), Mask: []byte{0}}, {Key: []byte("ab"), Mask: []byte{0, 3}}} {
		_, err := NewFuzzyRowFilter([]FuzzyKey{bad})
		require.True(t, errors.Is(err, ErrBadFilter), err)
	}
	// No keys: nothing matches.
	require.Empty(t, regionScan(t, mustFuzzy(t), cells))
}

// TestFuzzyRowFilterRandom checks forward and reversed scans against a
// brute-force match on random rows and keys: a hint must never skip a row
// that matches. Rows are at least as long as the keys: a shorter row can
// match (its bytes are compared) but HBase's hints assume full-length rows
// and may seek past it (TestFuzzyRowFilterShortRows).
func TestFuzzyRowFilterRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	alphabet := []byte{0, 1, 'a', 'b', 0xfe, 0xff}
	randBytes := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		return b
	}
	for iter := 0; iter < 2000; iter++ {
		rowSet := map[string]bool{}
		for i := 0; i < 20; i++ {
			rowSet[string(randBytes(3+rng.IntN(3)))] = true
		}
		var rows []string
		for r := range rowSet {
			rows = append(rows, r)
		}
		slices.Sort(rows)
		var pairs []string
		for i := 0; i < 1+rng.IntN(3); i++ {
			n := 1 + rng.IntN(3)
			mask := make([]byte, n)
			for j := range mask {
				mask[j] = byte(rng.IntN(2))
			}
			pairs = append(pairs, string(randBytes(n)), string(mask))
		}
		f := mustFuzzy(t, pairs...)
		var want []string
		for _, row := range rows {
			for i := range f.fuzzy {
				if f.fuzzy[i].matches([]byte(row)) {
					want = append(want, fmt.Sprintf("%q", row))
					break
				}
			}
		}
		quote := func(rs []string) []string {
			out := []string{}
			for _, r := range rs {
				out = append(out, fmt.Sprintf("%q", r))
			}
			return out
		}
		cells := rowCells(rows...)
		got := quote(rowKeys(regionScan(t, mustFuzzy(t, pairs...), cells)))
		require.Equal(t, fmt.Sprint(want), fmt.Sprint(got), "keys %q rows %q", pairs, rows)
		got = quote(rowKeys(regionScanDir(t, mustFuzzy(t, pairs...), cells, true)))
		slices.Reverse(got)
		require.Equal(t, fmt.Sprint(want), fmt.Sprint(got), "reversed: keys %q rows %q", pairs, rows)
	}
}

func TestFuzzyNextForFuzzyRuleNeverReadsPastRow(t *testing.T) {
	// NextCellHint may be asked about a row that matches (a FilterList
	// does): the rule must not read past the row.
	f := mustFuzzy(t, "abcd", "\x00\x01\x01\x00")
	for _, reversed := range []bool{false, true} {
		f.SetReversed(reversed)
		for _, row := range []string{"a", "ab", "abc"} {
			require.NotPanics(t, func() { nextForFuzzyRule(reversed, []byte(row), &f.fuzzy[0]) })
		}
	}
	require.True(t, bytes.Equal([]byte("abcd"), f.Keys()[0].Key))
}

// TestFuzzyRowFilterShortRows: a row shorter than a key matches on the
// bytes it has, but only when the scan reaches it: HBase's hints assume
// rows as long as the key.
func TestFuzzyRowFilterShortRows(t *testing.T) {
	cells := rowCells("\x00", "\x00\x00", "\x00a", "\x01", "\x01\x01\x00")
	f := mustFuzzy(t, "\xfe\x01\x00", "\x01\x00\x00")
	// "\x00" matches ?\x01\x00 on its one byte, and "\x01" would too, but the
	// hint from "\x00a" is "\x01\x01\x00".
	require.Equal(t, []string{"\x00", "\x01\x01\x00"}, rowKeys(regionScan(t, f, cells)))
}
