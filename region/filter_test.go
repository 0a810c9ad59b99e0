package region

import (
	"fmt"
	"slices"
	"testing"

	"github.com/regionkv/regionkv/filter"
	"github.com/stretchr/testify/require"
)

func filterRows(t *testing.T, r *Region, s *Scan) []string {
	var out []string
	_, results := scanAll(t, r, s)
	for _, res := range results {
		var cells []string
		for _, c := range res.Cells {
			cells = append(cells, fmt.Sprintf("%s:%s=%s", c.Family, c.Qualifier, c.Value))
		}
		out = append(out, fmt.Sprintf("%s%v", res.Cells[0].Row, cells))
	}
	return out
}

// TestScanFilters runs HBase's filters through the region scanner, forward
// and reversed, over memstore and store files.
func TestScanFilters(t *testing.T) {
	r := openTest(t, t.TempDir(), nil)
	defer r.Close()
	for i := 0; i < 20; i++ {
		row := b(fmt.Sprintf("%s%02d", []string{"ab", "ac", "b"}[i%3], i))
		p := NewPut(row).Add(fam, b("q1"), b(fmt.Sprint("v", i%4))).Add(fam, b("q2"), b("x")).Add(fam2, b("z"), b("y"))
		require.NoError(t, r.Put(p))
		if i == 10 {
			require.NoError(t, r.Flush())
		}
	}
	for _, reversed := range []bool{false, true} {
		rows := filterRows(t, r, &Scan{Reversed: reversed, Filter: filter.NewPrefixFilter(b("ac"))})
		require.Len(t, rows, 7, "%v", rows)
		for _, row := range rows {
			require.Contains(t, row, "ac")
		}
		rows = filterRows(t, r, &Scan{Reversed: reversed, Filter: filter.NewSingleColumnValueFilter(fam, b("q1"), filter.CompareEqual, filter.NewBinaryComparator(b("v2")))})
		require.Len(t, rows, 5, "%v", rows) // i = 2, 6, 10, 14, 18
		for _, row := range rows {
			require.Contains(t, row, "f:q1=v2")
			require.Contains(t, row, "g:z=y", "the filter keeps whole rows")
		}
		rows = filterRows(t, r, &Scan{Reversed: reversed, Filter: filter.NewFilterList(filter.MustPassAll,
			filter.NewQualifierFilter(filter.CompareEqual, filter.NewBinaryComparator(b("q2"))), filter.NewKeyOnlyFilter(false))})
		require.Len(t, rows, 20)
		require.Contains(t, rows[0], "[f:q2=]")
		rows = filterRows(t, r, &Scan{Reversed: reversed, Filter: filter.NewPageFilter(3)})
		require.Len(t, rows, 3)
		rows = filterRows(t, r, &Scan{Reversed: reversed, Filter: filter.NewColumnPrefixFilter(b("q"))})
		require.Len(t, rows, 20)
		require.NotContains(t, rows[0], "g:z")
	}
	res, err := r.Get(&Get{Row: b("ab00"), Filter: filter.NewValueFilter(filter.CompareEqual, filter.NewBinaryComparator(b("x")))})
	require.NoError(t, err)
	require.Len(t, res.Cells, 1)
	require.Equal(t, "q2", string(res.Cells[0].Qualifier))
}

// TestFilterSeesOnlyFamilyVersions: versions are counted against the
// family's VERSIONS before the filter, as in HBase, so a filter cannot dig
// out a version beyond them that a compaction has not yet removed.
func TestFilterSeesOnlyFamilyVersions(t *testing.T) {
	r := openTest(t, t.TempDir(), nil)
	defer r.Close()
	require.NoError(t, r.Put(NewPut(b("r")).AddAt(fam2, b("q"), 1, b("v1"))))
	require.NoError(t, r.Put(NewPut(b("r")).AddAt(fam2, b("q"), 2, b("v2"))))
	res, err := r.Get(&Get{Row: b("r"), Filter: filter.NewValueFilter(filter.CompareEqual, filter.NewBinaryComparator(b("v1")))})
	require.NoError(t, err)
	require.True(t, res.IsEmpty(), "%v", res.Cells)
	res, err = r.Get(&Get{Row: b("r"), Filter: filter.NewValueFilter(filter.CompareEqual, filter.NewBinaryComparator(b("v2")))})
	require.NoError(t, err)
	require.Len(t, res.Cells, 1)
}

// TestColumnCountGetFilterScan: in a scan, a store gives up once a row
// exceeds the limit (HBase's matcher asks FilterAllRemaining at the next
// cell, before the filter is reset), while a store that had no cell in
// that row goes on.
func TestColumnCountGetFilterScan(t *testing.T) {
	r := openTest(t, t.TempDir(), nil)
	defer r.Close()
	require.NoError(t, r.Put(NewPut(b("r1")).Add(fam, b("a"), b("1")).Add(fam, b("b"), b("2")).Add(fam, b("c"), b("3"))))
	require.NoError(t, r.Put(NewPut(b("r2")).Add(fam, b("a"), b("4")).Add(fam2, b("a"), b("5"))))
	require.NoError(t, r.Put(NewPut(b("r3")).Add(fam, b("a"), b("6"))))
	f, err := filter.NewColumnCountGetFilter(2)
	require.NoError(t, err)
	require.Equal(t, []string{"r1[f:a=1 f:b=2]", "r2[g:a=5]"}, filterRows(t, r, &Scan{Filter: f}))
	// In a Get, the first two columns across families.
	f, err = filter.NewColumnCountGetFilter(2)
	require.NoError(t, err)
	res, err := r.Get(&Get{Row: b("r2"), Filter: f})
	require.NoError(t, err)
	require.Len(t, res.Cells, 2)
}

// TestSecondFilterSetScans runs some of the second set of filters through
// the region, forward and reversed, over a memstore and store files; the
// randomized model test checks them all.
func TestSecondFilterSetScans(t *testing.T) {
	r := openTest(t, t.TempDir(), nil)
	defer r.Close()
	for i := 0; i < 30; i++ {
		row := b(fmt.Sprintf("r%02d", i))
		p := NewPut(row)
		for _, q := range []string{"a", "b", "c", "d"} {
			for ts := int64(1); ts <= 3; ts++ {
				p.AddAt(fam, b(q), ts, b(fmt.Sprintf("%s%d", q, (i+int(ts))%3)))
			}
		}
		p.AddAt(fam2, b("z"), 2, b("w"))
		require.NoError(t, r.Put(p))
		if i%10 == 9 {
			require.NoError(t, r.Flush())
		}
	}
	mustRanges := func(ranges ...filter.RowRange) filter.Filter {
		f, err := filter.NewMultiRowRangeFilter(ranges)
		require.NoError(t, err)
		return f
	}
	mustFuzzy := func(key string, mask ...byte) filter.Filter {
		f, err := filter.NewFuzzyRowFilter([]filter.FuzzyKey{{Key: b(key), Mask: mask}})
		require.NoError(t, err)
		return f
	}
	mustTS := func(canHint bool) filter.Filter {
		f, err := filter.NewTimestampsFilter([]int64{1, 2}, canHint)
		require.NoError(t, err)
		return f
	}
	for _, reversed := range []bool{false, true} {
		order := func(rows ...string) []string {
			if reversed {
				slices.Reverse(rows)
			}
			return rows
		}
		keys := func(f filter.Filter) []string {
			rows, _ := scanAll(t, r, &Scan{Reversed: reversed, Filter: f})
			return rows
		}
		require.Equal(t, order("r03", "r04", "r05", "r20", "r29"),
			keys(mustRanges(filter.RowRange{StartRow: b("r03"), StartRowInclusive: true, StopRow: b("r05"), StopRowInclusive: true},
				filter.RowRange{StartRow: b("r20"), StartRowInclusive: true, StopRow: b("r21")},
				filter.RowRange{StartRow: b("r29"), StartRowInclusive: true})), "reversed %t", reversed)
		require.Equal(t, order("r05", "r15", "r25"), keys(mustFuzzy("r?5", 0, 1, 0)), "reversed %t", reversed)
		// Column hints within a row, forward and (seeking within the row)
		// reversed.
		rows := filterRows(t, r, &Scan{Reversed: reversed, Filter: filter.NewColumnRangeFilter(b("b"), true, b("c"), true)})
		require.Len(t, rows, 30)
		require.Equal(t, "r00[f:b=b0 f:c=c0]", rows[map[bool]int{false: 0, true: 29}[reversed]])
		// The hinting TimestampsFilter returns what the skipping one does
		// where no delete marker lies between.
		hinted := filterRows(t, r, &Scan{Reversed: reversed, MaxVersions: 3, Filter: mustTS(true)})
		skipped := filterRows(t, r, &Scan{Reversed: reversed, MaxVersions: 3, Filter: mustTS(false)})
		require.Equal(t, skipped, hinted)
		require.Len(t, hinted, 30)
		require.Equal(t, "r01[f:a=a0 f:a=a2 f:b=b0 f:b=b2 f:c=c0 f:c=c2 f:d=d0 f:d=d2 g:z=w]", hinted[map[bool]int{false: 1, true: 28}[reversed]])
		mcp, err := filter.NewMultipleColumnPrefixFilter([][]byte{b("a"), b("d"), b("z")})
		require.NoError(t, err)
		require.Equal(t, "r07[f:a=a1 f:d=d1 g:z=w]", filterRows(t, r, &Scan{Reversed: reversed, StartRow: b("r07"), StopRow: b("r07"), StopInclusive: true, Filter: mcp})[0])
	}
}
