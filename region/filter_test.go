package region

import (
	"fmt"
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
