package integration

import (
	"strconv"
	"testing"
	"time"

	"github.com/regionkv/regionkv/client"
)

// TestVersions checks VERSIONS=3, max versions per get, and time ranges in
// gets and scans.
func TestVersions(t *testing.T) {
	c := sharedClient(t)
	const tbl = "versions"
	createTable(t, c, client.TableDescriptor{Name: tbl, Families: []client.Family{
		{Name: "cf", Attributes: map[string]string{"VERSIONS": "3"}}, {Name: "one"}}})
	cf, one, q := []byte("cf"), []byte("one"), []byte("q")
	row := []byte("r")
	for ts := int64(1); ts <= 5; ts++ {
		v := []byte{'v', byte('0' + ts)}
		mutate(t, c, client.NewPut(tbl, row).AddAt(cf, q, ts, v).AddAt(one, q, ts, v))
	}
	g := func(g client.Get) []string {
		t.Helper()
		g.Table, g.Row = tbl, row
		return cellStrings(get(t, c, &g).Cells, true)
	}
	equalStrings(t, "default get", g(client.Get{}), []string{"r/cf:q@5=v5", "r/one:q@5=v5"})
	equalStrings(t, "VERSIONS=3 kept", g(client.Get{MaxVersions: 10, Columns: []client.Column{client.Fam("cf")}}),
		[]string{"r/cf:q@5=v5", "r/cf:q@4=v4", "r/cf:q@3=v3"})
	equalStrings(t, "VERSIONS=1 (default) kept", g(client.Get{MaxVersions: 10, Columns: []client.Column{client.Fam("one")}}),
		[]string{"r/one:q@5=v5"})
	equalStrings(t, "max versions 2", g(client.Get{MaxVersions: 2, Columns: []client.Column{client.Col("cf", "q")}}),
		[]string{"r/cf:q@5=v5", "r/cf:q@4=v4"})
	equalStrings(t, "time range [3,5)", g(client.Get{MaxVersions: 10, TimeRange: client.TimeRange{Min: 3, Max: 5},
		Columns: []client.Column{client.Fam("cf")}}), []string{"r/cf:q@4=v4", "r/cf:q@3=v3"})
	equalStrings(t, "time range [3,5), one version", g(client.Get{TimeRange: client.TimeRange{Min: 3, Max: 5},
		Columns: []client.Column{client.Fam("cf")}}), []string{"r/cf:q@4=v4"})
	equalStrings(t, "time range [5,∞)", g(client.Get{MaxVersions: 10, TimeRange: client.TimeRange{Min: 5}}),
		[]string{"r/cf:q@5=v5", "r/one:q@5=v5"})
	equalStrings(t, "time range [100,200) matches nothing", g(client.Get{MaxVersions: 10, TimeRange: client.TimeRange{Min: 100, Max: 200}}), nil)

	// Scans with time ranges and versions.
	for i, r := range []string{"s1", "s2", "s3"} {
		base := int64(100 * (i + 1))
		mutate(t, c, client.NewPut(tbl, []byte(r)).AddAt(cf, q, base, []byte("a")).AddAt(cf, q, base+50, []byte("b")))
	}
	scan := func(s client.Scan) []string {
		t.Helper()
		s.Table, s.StartRow, s.StopRow = tbl, []byte("s"), []byte("t")
		var out []string
		for _, r := range scanAll(t, c, &s) {
			out = append(out, cellStrings(r.Cells, true)...)
		}
		return out
	}
	equalStrings(t, "scan, latest versions", scan(client.Scan{}),
		[]string{"s1/cf:q@150=b", "s2/cf:q@250=b", "s3/cf:q@350=b"})
	equalStrings(t, "scan, all versions", scan(client.Scan{MaxVersions: 3}),
		[]string{"s1/cf:q@150=b", "s1/cf:q@100=a", "s2/cf:q@250=b", "s2/cf:q@200=a", "s3/cf:q@350=b", "s3/cf:q@300=a"})
	equalStrings(t, "scan, time range [150,300)", scan(client.Scan{MaxVersions: 3, TimeRange: client.TimeRange{Min: 150, Max: 300}}),
		[]string{"s1/cf:q@150=b", "s2/cf:q@250=b", "s2/cf:q@200=a"})
	equalStrings(t, "scan, time range [200,250), one version", scan(client.Scan{TimeRange: client.TimeRange{Min: 200, Max: 250}}),
		[]string{"s2/cf:q@200=a"})
}

// TestStoreLimitOffset checks maxResultsPerColumnFamily and
// rowOffsetPerColumnFamily in gets and scans.
func TestStoreLimitOffset(t *testing.T) {
	c := sharedClient(t)
	const tbl = "storelimit"
	createTable(t, c, client.TableDescriptor{Name: tbl, Families: fams("f1", "f2")})
	for _, row := range []string{"r1", "r2"} {
		m := client.NewPut(tbl, []byte(row))
		for _, q := range []string{"a", "b", "c", "d", "e"} {
			m.Add([]byte("f1"), []byte(q), []byte(q))
		}
		for _, q := range []string{"x", "y", "z"} {
			m.Add([]byte("f2"), []byte(q), []byte(q))
		}
		mutate(t, c, m)
	}
	cases := []struct {
		limit, offset int
		want          []string
	}{
		{0, 0, []string{"f1:a", "f1:b", "f1:c", "f1:d", "f1:e", "f2:x", "f2:y", "f2:z"}},
		{2, 0, []string{"f1:a", "f1:b", "f2:x", "f2:y"}},
		{0, 2, []string{"f1:c", "f1:d", "f1:e", "f2:z"}},
		{2, 1, []string{"f1:b", "f1:c", "f2:y", "f2:z"}},
		{1, 4, []string{"f1:e"}},
		{3, 5, nil},
	}
	cols := func(cells []*client.Cell) []string {
		var out []string
		for _, c := range cells {
			out = append(out, string(c.Family)+":"+string(c.Qualifier))
		}
		return out
	}
	for _, tc := range cases {
		res := get(t, c, &client.Get{Table: tbl, Row: []byte("r1"), StoreLimit: tc.limit, StoreOffset: tc.offset})
		equalStrings(t, "get limit/offset", cols(res.Cells), tc.want)
		rs := scanAll(t, c, &client.Scan{Table: tbl, StoreLimit: tc.limit, StoreOffset: tc.offset})
		if tc.want == nil {
			if len(rs) != 0 {
				t.Fatalf("scan limit %d offset %d: %d rows, want none", tc.limit, tc.offset, len(rs))
			}
			continue
		}
		equalStrings(t, "scan rows", rowKeys(rs), []string{"r1", "r2"})
		for _, r := range rs {
			equalStrings(t, "scan limit/offset", cols(r.Cells), tc.want)
		}
	}
}

// TestDeleteKinds checks the five cell types of deletes: one version
// (Delete=8), all versions of a column (DeleteColumn=12), a family
// (DeleteFamily=14), a family's version (DeleteFamilyVersion=10), and a
// whole row, against puts (Put=4).
func TestDeleteKinds(t *testing.T) {
	c := sharedClient(t)
	const tbl = "deletes"
	createTable(t, c, client.TableDescriptor{Name: tbl, Families: []client.Family{
		{Name: "cf", Attributes: map[string]string{"VERSIONS": "5"}},
		{Name: "other", Attributes: map[string]string{"VERSIONS": "5"}}}})
	cf, other := []byte("cf"), []byte("other")
	// seed writes q1 and q2 of cf and q1 of other at timestamps 10, 20, 30.
	seed := func(row string) []byte {
		m := client.NewPut(tbl, []byte(row))
		for _, ts := range []int64{10, 20, 30} {
			v := []byte{byte('0' + ts/10)}
			m.AddAt(cf, []byte("q1"), ts, v).AddAt(cf, []byte("q2"), ts, v).AddAt(other, []byte("q1"), ts, v)
		}
		mutate(t, c, m)
		return []byte(row)
	}
	all := func(row []byte) []string {
		t.Helper()
		res := get(t, c, &client.Get{Table: tbl, Row: row, MaxVersions: 10})
		var out []string
		for _, c := range res.Cells {
			out = append(out, string(c.Family)+":"+string(c.Qualifier)+"@"+strconv.FormatInt(c.Timestamp, 10))
		}
		return out
	}
	untouched := []string{"cf:q1@30", "cf:q1@20", "cf:q1@10", "cf:q2@30", "cf:q2@20", "cf:q2@10",
		"other:q1@30", "other:q1@20", "other:q1@10"}

	t.Run("Put", func(t *testing.T) {
		equalStrings(t, "seeded", all(seed("put")), untouched)
	})
	t.Run("DeleteOneVersion", func(t *testing.T) {
		row := seed("del-version")
		mutate(t, c, client.NewDelete(tbl, row).DeleteColumn(cf, []byte("q1"), 20))
		equalStrings(t, "after deleting q1@20", all(row), []string{"cf:q1@30", "cf:q1@10", "cf:q2@30", "cf:q2@20", "cf:q2@10",
			"other:q1@30", "other:q1@20", "other:q1@10"})
		// Without a timestamp it deletes the newest version.
		mutate(t, c, client.NewDelete(tbl, row).DeleteColumn(cf, []byte("q1"), client.LatestTimestamp))
		equalStrings(t, "after deleting q1's newest", all(row), []string{"cf:q1@10", "cf:q2@30", "cf:q2@20", "cf:q2@10",
			"other:q1@30", "other:q1@20", "other:q1@10"})
	})
	t.Run("DeleteColumn", func(t *testing.T) {
		row := seed("del-column")
		mutate(t, c, client.NewDelete(tbl, row).DeleteColumns(cf, []byte("q1"), 20))
		equalStrings(t, "after deleting q1 up to 20", all(row), []string{"cf:q1@30", "cf:q2@30", "cf:q2@20", "cf:q2@10",
			"other:q1@30", "other:q1@20", "other:q1@10"})
		mutate(t, c, client.NewDelete(tbl, row).DeleteColumns(cf, []byte("q2"), client.LatestTimestamp))
		equalStrings(t, "after deleting all of q2", all(row), []string{"cf:q1@30", "other:q1@30", "other:q1@20", "other:q1@10"})
	})
	t.Run("DeleteFamily", func(t *testing.T) {
		row := seed("del-family")
		mutate(t, c, client.NewDelete(tbl, row).DeleteFamily(cf, 20))
		equalStrings(t, "after deleting cf up to 20", all(row), []string{"cf:q1@30", "cf:q2@30",
			"other:q1@30", "other:q1@20", "other:q1@10"})
		// The marker hides later puts with older timestamps.
		mutate(t, c, client.NewPut(tbl, row).AddAt(cf, []byte("q3"), 15, []byte("late")).AddAt(cf, []byte("q3"), 25, []byte("new")))
		equalStrings(t, "after putting q3@15 and q3@25", all(row), []string{"cf:q1@30", "cf:q2@30", "cf:q3@25",
			"other:q1@30", "other:q1@20", "other:q1@10"})
		mutate(t, c, client.NewDelete(tbl, row).DeleteFamily(other, client.LatestTimestamp))
		equalStrings(t, "after deleting all of other", all(row), []string{"cf:q1@30", "cf:q2@30", "cf:q3@25"})
	})
	t.Run("DeleteFamilyVersion", func(t *testing.T) {
		row := seed("del-family-version")
		mutate(t, c, client.NewDelete(tbl, row).DeleteFamilyVersion(cf, 20))
		equalStrings(t, "after deleting cf's version 20", all(row), []string{"cf:q1@30", "cf:q1@10", "cf:q2@30", "cf:q2@10",
			"other:q1@30", "other:q1@20", "other:q1@10"})
	})
	t.Run("DeleteRow", func(t *testing.T) {
		row := seed("del-row")
		d := client.NewDelete(tbl, row)
		d.Timestamp = 20
		mutate(t, c, d)
		equalStrings(t, "after deleting the row up to 20", all(row), []string{"cf:q1@30", "cf:q2@30", "other:q1@30"})
		mutate(t, c, client.NewDelete(tbl, row))
		if got := all(row); len(got) != 0 {
			t.Fatalf("after deleting the row: %q", got)
		}
		// Scans agree with gets.
		rs := scanAll(t, c, &client.Scan{Table: tbl, StartRow: []byte("del-"), StopRow: []byte("del."), MaxVersions: 10})
		equalStrings(t, "rows left", rowKeys(rs), []string{"del-column", "del-family", "del-family-version", "del-version"})
	})
	t.Run("DeleteTypesOnTheWire", func(t *testing.T) {
		// The same deletes sent inline (DeleteType in the protobuf rather
		// than cell types in a cellblock) mean the same.
		inline := newClient(t, sharedServer(t), func(o *client.Options) { o.NoCellBlocks = true })
		row := seed("inline")
		for _, m := range []*client.Mutation{
			client.NewDelete(tbl, row).DeleteColumn(cf, []byte("q1"), 30),
			client.NewDelete(tbl, row).DeleteColumns(cf, []byte("q2"), 20),
			client.NewDelete(tbl, row).DeleteFamilyVersion(other, 10),
		} {
			if _, err := inline.Mutate(testCtx(t, 30*time.Second), m); err != nil {
				t.Fatal(err)
			}
		}
		equalStrings(t, "after inline deletes", all(row), []string{"cf:q1@20", "cf:q1@10", "cf:q2@30", "other:q1@30", "other:q1@20"})
		if _, err := inline.Mutate(testCtx(t, 30*time.Second), client.NewDelete(tbl, row).DeleteFamily(cf, client.LatestTimestamp)); err != nil {
			t.Fatal(err)
		}
		equalStrings(t, "after inline family delete", all(row), []string{"other:q1@30", "other:q1@20"})
	})
}

// TestTTL checks the _ttl attribute and a family's TTL: expired cells
// vanish from gets and scans.
func TestTTL(t *testing.T) {
	c := sharedClient(t)
	const tbl = "ttl"
	createTable(t, c, client.TableDescriptor{Name: tbl, Families: []client.Family{
		{Name: "cf"}, {Name: "short", Attributes: map[string]string{"TTL": "1"}}}})
	cf, short, q := []byte("cf"), []byte("short"), []byte("q")
	m := client.NewPut(tbl, []byte("a")).Add(cf, q, []byte("expires"))
	m.TTL = 300 * time.Millisecond
	mutate(t, c, m)
	mutate(t, c, client.NewPut(tbl, []byte("a")).Add(cf, []byte("keep"), []byte("stays")))
	put(t, c, tbl, "b", "cf", "q", "stays")
	mutate(t, c, client.NewPut(tbl, []byte("c")).Add(short, q, []byte("family-ttl")))
	m = client.NewPut(tbl, []byte("d")).Add(cf, q, []byte("expires too"))
	m.TTL = 300 * time.Millisecond
	mutate(t, c, m)

	scan := func() []string {
		var out []string
		for _, r := range scanAll(t, c, &client.Scan{Table: tbl}) {
			out = append(out, cellStrings(r.Cells, false)...)
		}
		return out
	}
	equalStrings(t, "before expiry", scan(), []string{"a/cf:keep=stays", "a/cf:q=expires", "b/cf:q=stays",
		"c/short:q=family-ttl", "d/cf:q=expires too"})
	time.Sleep(1100 * time.Millisecond)
	equalStrings(t, "after expiry", scan(), []string{"a/cf:keep=stays", "b/cf:q=stays"})
	equalStrings(t, "get a", cellStrings(get(t, c, &client.Get{Table: tbl, Row: []byte("a")}).Cells, false), []string{"a/cf:keep=stays"})
	for _, r := range []string{"c", "d"} {
		if res := get(t, c, &client.Get{Table: tbl, Row: []byte(r)}); !res.Empty() {
			t.Errorf("get %s after expiry: %q", r, cellStrings(res.Cells, false))
		}
	}
	// A cell whose (client-set) timestamp is older than the family's TTL
	// is expired from the start.
	mutate(t, c, client.NewPut(tbl, []byte("e")).AddAt(short, q, time.Now().Add(-2*time.Second).UnixMilli(), []byte("born old")).
		AddAt(cf, q, time.Now().Add(-2*time.Second).UnixMilli(), []byte("no ttl")))
	equalStrings(t, "old cell in a TTL family", cellStrings(get(t, c, &client.Get{Table: tbl, Row: []byte("e")}).Cells, false), []string{"e/cf:q=no ttl"})
	// A new put is visible again.
	mutate(t, c, client.NewPut(tbl, []byte("c")).Add(short, q, []byte("fresh")))
	equalStrings(t, "fresh put", cellStrings(get(t, c, &client.Get{Table: tbl, Row: []byte("c")}).Cells, false), []string{"c/short:q=fresh"})
}
