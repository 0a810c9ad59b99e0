package integration

import (
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/regionkv/regionkv/client"
	"github.com/regionkv/regionkv/filter"
	"github.com/regionkv/regionkv/ipc"
)

// TestMoreFilters runs the rest of HBase's filter set through the server
// (decoded from the wire, applied per region) on a table of three regions,
// forward and reversed.
func TestMoreFilters(t *testing.T) {
	c := sharedClient(t)
	const tbl = "filters2"
	createTable(t, c, client.TableDescriptor{Name: tbl, Families: []client.Family{
		{Name: "cf", Attributes: map[string]string{"VERSIONS": "3"}}, {Name: "meta"}}}, "u1", "u2")
	cf, meta := []byte("cf"), []byte("meta")
	// Rows u0x..u2x; in cf the columns a..d at timestamps 1 and 2, in meta
	// the column "tag" at 2 for every even row.
	var rows []string
	for i := 0; i < 3; i++ {
		for _, x := range "abc" {
			row := "u" + string(rune('0'+i)) + string(x)
			rows = append(rows, row)
			m := client.NewPut(tbl, []byte(row))
			for _, q := range "abcd" {
				for ts := int64(1); ts <= 2; ts++ {
					m.AddAt(cf, []byte{byte(q)}, ts, []byte(row+string(q)+string(rune('0'+ts))))
				}
			}
			if len(rows)%2 == 1 {
				m.AddAt(meta, []byte("tag"), 2, []byte("even"))
			}
			mutate(t, c, m)
		}
	}
	render := func(rs []*client.Result) []string {
		var out []string
		for _, r := range rs {
			out = append(out, string(r.Row())+": "+strings.Join(cellStrings(r.Cells, true), " "))
		}
		return out
	}
	scan := func(s client.Scan) []*client.Result {
		t.Helper()
		s.Table = tbl
		return scanAll(t, c, &s)
	}
	reversedRows := func(rows ...string) []string {
		out := slices.Clone(rows)
		slices.Reverse(out)
		return out
	}
	must := func(f filter.Filter, err error) filter.Filter {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	bin := func(s string) *filter.BinaryComparator { return filter.NewBinaryComparator([]byte(s)) }

	t.Run("MultiRowRangeFilter", func(t *testing.T) {
		f := func() filter.Filter {
			return must(filter.NewMultiRowRangeFilter([]filter.RowRange{
				{StartRow: []byte("u0b"), StartRowInclusive: true, StopRow: []byte("u1a"), StopRowInclusive: true},
				{StartRow: []byte("u2a"), StartRowInclusive: false, StopRow: []byte("u2c")},
			}))
		}
		want := []string{"u0b", "u0c", "u1a", "u2b"}
		equalStrings(t, "forward", rowKeys(scan(client.Scan{Filter: f()})), want)
		equalStrings(t, "reversed", rowKeys(scan(client.Scan{Filter: f(), Reversed: true})), reversedRows(want...))
	})
	t.Run("FuzzyRowFilter", func(t *testing.T) {
		// Rows u?b: any region number, then b.
		f := func() filter.Filter {
			return must(filter.NewFuzzyRowFilter([]filter.FuzzyKey{{Key: []byte("u?b"), Mask: []byte{0, 1, 0}}}))
		}
		want := []string{"u0b", "u1b", "u2b"}
		equalStrings(t, "forward", rowKeys(scan(client.Scan{Filter: f()})), want)
		equalStrings(t, "reversed", rowKeys(scan(client.Scan{Filter: f(), Reversed: true})), reversedRows(want...))
	})
	t.Run("InclusiveStopFilter", func(t *testing.T) {
		equalStrings(t, "forward", rowKeys(scan(client.Scan{StartRow: []byte("u0c"), Filter: filter.NewInclusiveStopFilter([]byte("u1b"))})),
			[]string{"u0c", "u1a", "u1b"})
		equalStrings(t, "reversed", rowKeys(scan(client.Scan{StartRow: []byte("u1b"), Reversed: true, Filter: filter.NewInclusiveStopFilter([]byte("u0c"))})),
			[]string{"u1b", "u1a", "u0c"})
		// HBase's null stop row fails on the server, and is not retried.
		ctx := testCtx(t, 30*time.Second)
		sc := c.Scan(&client.Scan{Table: tbl, Filter: filter.NewInclusiveStopFilter(nil)})
		defer sc.Close()
		if _, err := sc.Next(ctx); err == io.EOF || !client.IsException(err, ipc.ClassDoNotRetryIOException) {
			t.Fatalf("InclusiveStopFilter without a stop row: %v, want DoNotRetryIOException", err)
		}
	})
	t.Run("column filters", func(t *testing.T) {
		equalStrings(t, "ColumnRangeFilter (b, d]", render(scan(client.Scan{StartRow: []byte("u1a"), Limit: 1,
			Filter: filter.NewColumnRangeFilter([]byte("b"), false, []byte("d"), true)})),
			[]string{"u1a: u1a/cf:c@2=u1ac2 u1a/cf:d@2=u1ad2"})
		equalStrings(t, "MultipleColumnPrefixFilter a, t (reversed)", render(scan(client.Scan{StartRow: []byte("u2c"), Reversed: true, Limit: 2,
			Filter: must(filter.NewMultipleColumnPrefixFilter([][]byte{[]byte("t"), []byte("a")}))})),
			[]string{"u2c: u2c/cf:a@2=u2ca2 u2c/meta:tag@2=even", "u2b: u2b/cf:a@2=u2ba2"})
		equalStrings(t, "ColumnPaginationFilter(2, 1)", render(scan(client.Scan{StartRow: []byte("u0a"), Limit: 1,
			Filter: must(filter.NewColumnPaginationFilter(2, 1))})),
			[]string{"u0a: u0a/cf:b@2=u0ab2 u0a/cf:c@2=u0ac2"})
		equalStrings(t, "ColumnPaginationFilter(2, \"d\")", render(scan(client.Scan{StartRow: []byte("u0a"), Limit: 1,
			Filter: must(filter.NewColumnPaginationFilterAt(2, []byte("d")))})),
			[]string{"u0a: u0a/cf:d@2=u0ad2 u0a/meta:tag@2=even"})
		equalStrings(t, "FirstKeyValueMatchingQualifiersFilter b", render(scan(client.Scan{StartRow: []byte("u2b"), Limit: 1,
			Filter: filter.NewFirstKeyValueMatchingQualifiersFilter([][]byte{[]byte("b")})})),
			[]string{"u2b: u2b/cf:a@2=u2ba2 u2b/cf:b@2=u2bb2"})
		res := get(t, c, &client.Get{Table: tbl, Row: []byte("u1c"), Filter: must(filter.NewColumnCountGetFilter(3))})
		equalStrings(t, "ColumnCountGetFilter(3) get", cellStrings(res.Cells, false), []string{"u1c/cf:a=u1ca2", "u1c/cf:b=u1cb2", "u1c/cf:c=u1cc2"})
	})
	t.Run("TimestampsFilter", func(t *testing.T) {
		for _, canHint := range []bool{false, true} {
			got := render(scan(client.Scan{StartRow: []byte("u2a"), Limit: 1, MaxVersions: 3,
				Filter: must(filter.NewTimestampsFilter([]int64{1}, canHint))}))
			equalStrings(t, "timestamp 1", got, []string{"u2a: u2a/cf:a@1=u2aa1 u2a/cf:b@1=u2ab1 u2a/cf:c@1=u2ac1 u2a/cf:d@1=u2ad1"})
		}
	})
	t.Run("value filters", func(t *testing.T) {
		equalStrings(t, "ColumnValueFilter", render(scan(client.Scan{MaxVersions: 3,
			Filter: must(filter.NewColumnValueFilter(cf, []byte("c"), filter.CompareEqual, bin("u1bc1")))})),
			[]string{"u1b: u1b/cf:c@1=u1bc1"})
		scvef := filter.NewSingleColumnValueExcludeFilter(meta, []byte("tag"), filter.CompareEqual, bin("even"))
		scvef.SetFilterIfMissing(true)
		got := render(scan(client.Scan{Filter: filter.NewFilterList(filter.MustPassAll, scvef,
			filter.NewColumnRangeFilter([]byte("d"), true, nil, false))}))
		equalStrings(t, "SingleColumnValueExcludeFilter", got, []string{
			"u0a: u0a/cf:d@2=u0ad2", "u0c: u0c/cf:d@2=u0cd2", "u1b: u1b/cf:d@2=u1bd2", "u2a: u2a/cf:d@2=u2ad2", "u2c: u2c/cf:d@2=u2cd2"})
		// The cells at the timestamps of meta:tag, which is written at 2.
		got = render(scan(client.Scan{StartRow: []byte("u0a"), Limit: 2, MaxVersions: 3,
			Filter: filter.NewDependentColumnFilter(meta, []byte("tag"), true, filter.CompareNoOp, nil)}))
		equalStrings(t, "DependentColumnFilter", got, []string{
			"u0a: u0a/cf:a@2=u0aa2 u0a/cf:b@2=u0ab2 u0a/cf:c@2=u0ac2 u0a/cf:d@2=u0ad2",
			"u0c: u0c/cf:a@2=u0ca2 u0c/cf:b@2=u0cb2 u0c/cf:c@2=u0cc2 u0c/cf:d@2=u0cd2"})
	})
	t.Run("wrappers", func(t *testing.T) {
		// The scan ends at the first row without the tag (the stop row
		// keeps it in the first region: each region decodes its own filter).
		tagged := filter.NewSingleColumnValueFilter(meta, []byte("tag"), filter.CompareEqual, bin("even"))
		tagged.SetFilterIfMissing(true)
		got := rowKeys(scan(client.Scan{StopRow: []byte("u1"), Filter: filter.NewWhileMatchFilter(tagged)}))
		equalStrings(t, "WhileMatchFilter", got, []string{"u0a"})
		got = rowKeys(scan(client.Scan{Filter: filter.NewSkipFilter(filter.NewValueFilter(filter.CompareNotEqual, bin("even")))}))
		equalStrings(t, "SkipFilter", got, []string{"u0b", "u1a", "u1c", "u2b"})
		equalStrings(t, "RandomRowFilter 1", rowKeys(scan(client.Scan{Filter: filter.NewRandomRowFilter(1)})), rows)
		equalStrings(t, "RandomRowFilter 0", rowKeys(scan(client.Scan{Filter: filter.NewRandomRowFilter(0)})), nil)
	})
}
