package integration

import (
	"bytes"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/regionkv/regionkv/client"
)

// metaRowRE is a region name: "table,startKey,regionId.encodedName.", the
// encoded name 32 hex digits.
var metaRowRE = regexp.MustCompile(`^([^,]+),(.*),(\d+)\.([0-9a-f]{32})\.$`)

// TestSystemTables reads hbase:meta and hbase:namespace and lists table
// names with regexes, namespaces and system tables.
func TestSystemTables(t *testing.T) {
	p := sharedServer(t)
	c := newClient(t, p)
	ctx := testCtx(t, time.Minute)
	createTable(t, c, client.TableDescriptor{Name: "sysnames_a", Families: fams("cf")}, "m")
	createTable(t, c, client.TableDescriptor{Name: "sysnames_b", Families: fams("cf")})

	t.Run("Meta", func(t *testing.T) {
		rs := scanAll(t, c, &client.Scan{Table: "hbase:meta", StartRow: []byte("sysnames_a,"), StopRow: []byte("sysnames_a,\xff")})
		if len(rs) != 2 {
			t.Fatalf("hbase:meta has %d rows of sysnames_a, want 2: %q", len(rs), rowKeys(rs))
		}
		regions, err := c.Regions(ctx, "sysnames_a")
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range rs {
			m := metaRowRE.FindStringSubmatch(string(r.Row()))
			if m == nil || m[1] != "sysnames_a" || m[2] != []string{"", "m"}[i] {
				t.Fatalf("meta row %q is not a region name of sysnames_a", r.Row())
			}
			if m[4] != regions[i].EncodedName || string(r.Row()) != string(regions[i].Name) {
				t.Fatalf("meta row %q: encoded name %s, Regions says %s (%s)", r.Row(), m[4], regions[i].EncodedName, regions[i].Name)
			}
			if ri := r.Value([]byte("info"), []byte("regioninfo")); !bytes.HasPrefix(ri, []byte("PBUF")) {
				t.Fatalf("meta row %q: info:regioninfo %q lacks PBUF", r.Row(), ri)
			}
			if srv := string(r.Value([]byte("info"), []byte("server"))); srv != p.addr {
				t.Fatalf("meta row %q: info:server %q, want %q", r.Row(), srv, p.addr)
			}
		}
		// A get of a meta row works too.
		res := get(t, c, &client.Get{Table: "hbase:meta", Row: rs[1].Row(), Columns: []client.Column{client.Col("info", "server")}})
		equalStrings(t, "get of a meta row", cellStrings(res.Cells, false), []string{string(rs[1].Row()) + "/info:server=" + p.addr})
	})

	t.Run("Namespace", func(t *testing.T) {
		res := get(t, c, &client.Get{Table: "hbase:namespace", Row: []byte("default")})
		if res.Empty() {
			t.Fatal("hbase:namespace has no row default")
		}
		for _, cell := range res.Cells {
			if string(cell.Family) != "info" {
				t.Fatalf("hbase:namespace row default has a cell in family %q", cell.Family)
			}
		}
		rows := rowKeys(scanAll(t, c, &client.Scan{Table: "hbase:namespace"}))
		equalStrings(t, "namespaces", rows, []string{"default", "hbase"})
	})

	t.Run("ListTableNames", func(t *testing.T) {
		list := func(regex string, sys bool, ns string) []string {
			t.Helper()
			names, err := c.ListTableNames(ctx, regex, sys, ns)
			if err != nil {
				t.Fatal(err)
			}
			sort.Strings(names)
			return names
		}
		equalStrings(t, "sysnames_.*", list("sysnames_.*", false, ""), []string{"sysnames_a", "sysnames_b"})
		equalStrings(t, "sysnames_.* in default", list("sysnames_.*", false, "default"), []string{"sysnames_a", "sysnames_b"})
		equalStrings(t, "sysnames_a", list("sysnames_a", false, ""), []string{"sysnames_a"})
		equalStrings(t, ".*meta.* in hbase", list(".*meta.*", true, "hbase"), []string{"hbase:meta"})
		equalStrings(t, "hbase namespace", list("", true, "hbase"), []string{"hbase:meta", "hbase:namespace"})
		equalStrings(t, ".*meta.* without system tables", list(".*meta.*", false, ""), nil)
		all := list("", false, "")
		sys := list("", true, "")
		for _, n := range all {
			if strings.HasPrefix(n, "hbase:") {
				t.Fatalf("system table %s listed without includeSysTables", n)
			}
		}
		if len(sys) != len(all)+2 || !contains(sys, "hbase:meta") || !contains(sys, "hbase:namespace") || !contains(all, "sysnames_b") {
			t.Fatalf("user tables %q, with system tables %q", all, sys)
		}
	})
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestAdmin covers create (attributes, split keys), disable, enable,
// delete, cluster status, the balancer switch and move region.
func TestAdmin(t *testing.T) {
	p := sharedServer(t)
	c := newClient(t, p)
	// A client that does not retry, for calls that are meant to fail.
	once := newClient(t, p, func(o *client.Options) { o.Retries = -1 })
	ctx := testCtx(t, 2*time.Minute)
	const tbl = "admin_t"

	td := client.TableDescriptor{Name: tbl, Attributes: map[string]string{"DURABILITY": "SYNC_WAL", "OWNER": "integration"},
		Families: []client.Family{
			{Name: "a", Attributes: map[string]string{"VERSIONS": "4", "TTL": "86400", "BLOOMFILTER": "ROWCOL"}},
			{Name: "b", Attributes: map[string]string{"IN_MEMORY": "true"}},
		}}
	createTable(t, c, td, "k3", "k1", "k2")

	t.Run("Create", func(t *testing.T) {
		got, err := c.TableDescriptor(ctx, tbl)
		if err != nil {
			t.Fatal(err)
		}
		if got.Name != tbl || len(got.Families) != 2 {
			t.Fatalf("descriptor: %+v", got)
		}
		for k, v := range td.Attributes {
			if got.Attributes[k] != v {
				t.Errorf("table attribute %s = %q, want %q (all: %v)", k, got.Attributes[k], v, got.Attributes)
			}
		}
		for i, f := range td.Families {
			if got.Families[i].Name != f.Name {
				t.Fatalf("family %d: %s, want %s", i, got.Families[i].Name, f.Name)
			}
			for k, v := range f.Attributes {
				if got.Families[i].Attributes[k] != v {
					t.Errorf("family %s: %s = %q, want %q", f.Name, k, got.Families[i].Attributes[k], v)
				}
			}
		}
		regions, err := c.Regions(ctx, tbl)
		if err != nil {
			t.Fatal(err)
		}
		var bounds []string
		for _, r := range regions {
			bounds = append(bounds, string(r.StartKey)+"-"+string(r.EndKey))
		}
		equalStrings(t, "regions of unsorted split keys", bounds, []string{"-k1", "k1-k2", "k2-k3", "k3-"})
		// VERSIONS=4 is in force (timestamps within the TTL of a day).
		now := time.Now().UnixMilli()
		for ts := int64(1); ts <= 6; ts++ {
			mutate(t, c, client.NewPut(tbl, []byte("k2x")).AddAt([]byte("a"), []byte("q"), now-100+ts, []byte{'0' + byte(ts)}))
		}
		if res := get(t, c, &client.Get{Table: tbl, Row: []byte("k2x"), MaxVersions: 10}); len(res.Cells) != 4 {
			t.Fatalf("VERSIONS=4: %d versions kept: %q", len(res.Cells), cellStrings(res.Cells, true))
		}
		err = c.CreateTable(ctx, client.TableDescriptor{Name: tbl, Families: fams("a")}, nil)
		if !client.IsException(err, "TableExistsException") {
			t.Fatalf("creating an existing table: %v, want TableExistsException", err)
		}
		err = c.CreateTable(ctx, client.TableDescriptor{Name: "admin_bad", Families: fams("a")}, [][]byte{[]byte("x"), []byte("x")})
		if !client.IsException(err, "DoNotRetryIOException") {
			t.Fatalf("creating a table with duplicate split keys: %v, want DoNotRetryIOException", err)
		}
	})

	t.Run("DisableEnableDelete", func(t *testing.T) {
		put(t, c, tbl, "k1-row", "b", "q", "kept")
		if err := c.DeleteTable(ctx, tbl); !client.IsException(err, "TableNotDisabledException") {
			t.Fatalf("deleting an enabled table: %v, want TableNotDisabledException", err)
		}
		if err := c.DisableTable(ctx, tbl); err != nil {
			t.Fatal(err)
		}
		if st, err := c.TableState(ctx, tbl); err != nil || st != client.TableDisabled {
			t.Fatalf("state after disable: %v, %v", st, err)
		}
		if err := c.DisableTable(ctx, tbl); !client.IsException(err, "TableNotEnabledException") {
			t.Fatalf("disabling a disabled table: %v, want TableNotEnabledException", err)
		}
		if _, err := once.Get(ctx, &client.Get{Table: tbl, Row: []byte("k1-row")}); !client.IsException(err, "TableNotEnabledException") {
			t.Fatalf("get from a disabled table: %v, want TableNotEnabledException", err)
		}
		if err := c.EnableTable(ctx, tbl); err != nil {
			t.Fatal(err)
		}
		if st, err := c.TableState(ctx, tbl); err != nil || st != client.TableEnabled {
			t.Fatalf("state after enable: %v, %v", st, err)
		}
		if v := get(t, c, &client.Get{Table: tbl, Row: []byte("k1-row")}).Value([]byte("b"), []byte("q")); string(v) != "kept" {
			t.Fatalf("after enable: %q, want kept", v)
		}
		if err := c.DisableTable(ctx, tbl); err != nil {
			t.Fatal(err)
		}
		if err := c.DeleteTable(ctx, tbl); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Get(ctx, &client.Get{Table: tbl, Row: []byte("k1-row")}); !client.IsException(err, "TableNotFoundException") {
			t.Fatalf("get after delete: %v, want TableNotFoundException", err)
		}
		if _, err := c.TableState(ctx, tbl); !client.IsException(err, "TableNotFoundException") {
			t.Fatalf("state after delete: %v, want TableNotFoundException", err)
		}
		if names, err := c.ListTableNames(ctx, tbl, false, ""); err != nil || len(names) != 0 {
			t.Fatalf("list after delete: %q, %v", names, err)
		}
		if rs := scanAll(t, c, &client.Scan{Table: "hbase:meta", StartRow: []byte(tbl + ","), StopRow: []byte(tbl + ",\xff")}); len(rs) != 0 {
			t.Fatalf("meta rows left after delete: %q", rowKeys(rs))
		}
		// The name can be used again, empty.
		createTable(t, c, client.TableDescriptor{Name: tbl, Families: fams("b")})
		if res := get(t, c, &client.Get{Table: tbl, Row: []byte("k1-row")}); !res.Empty() {
			t.Fatalf("recreated table has %q", cellStrings(res.Cells, false))
		}
	})

	t.Run("Truncate", func(t *testing.T) {
		const tt = "admin_truncate"
		createTable(t, c, client.TableDescriptor{Name: tt, Families: fams("cf")}, "m")
		put(t, c, tt, "a", "cf", "q", "1")
		put(t, c, tt, "z", "cf", "q", "2")
		if err := c.TruncateTable(ctx, tt, true); !client.IsException(err, "TableNotDisabledException") {
			t.Fatalf("truncating an enabled table: %v, want TableNotDisabledException", err)
		}
		if err := c.DisableTable(ctx, tt); err != nil {
			t.Fatal(err)
		}
		if err := c.TruncateTable(ctx, tt, true); err != nil {
			t.Fatal(err)
		}
		// As in HBase 2, a truncated table is enabled again.
		if st, err := c.TableState(ctx, tt); err != nil || st != client.TableEnabled {
			t.Fatalf("state after truncate: %v, %v", st, err)
		}
		if rs := scanAll(t, c, &client.Scan{Table: tt}); len(rs) != 0 {
			t.Fatalf("rows after truncate: %q", rowKeys(rs))
		}
		regions, err := c.Regions(ctx, tt)
		if err != nil || len(regions) != 2 || string(regions[1].StartKey) != "m" {
			t.Fatalf("regions after truncate with preserved splits: %+v, %v", regions, err)
		}
		put(t, c, tt, "b", "cf", "q", "after")
		equalStrings(t, "rows written after truncate", rowKeys(scanAll(t, c, &client.Scan{Table: tt})), []string{"b"})
	})

	t.Run("ClusterStatus", func(t *testing.T) {
		cs, err := c.ClusterStatus(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if cs.Master != p.addr || cs.Proto.GetMaster().GetHostName() == "" {
			t.Errorf("master %q (host %q), want %q", cs.Master, cs.Proto.GetMaster().GetHostName(), p.addr)
		}
		equalStrings(t, "live servers", cs.LiveServers, []string{p.addr})
		if cs.ClusterID == "" || cs.Regions < 2 {
			t.Errorf("cluster id %q, %d regions", cs.ClusterID, cs.Regions)
		}
	})

	t.Run("Balancer", func(t *testing.T) {
		steps := []struct{ set, prev bool }{{false, true}, {false, false}, {true, false}, {true, true}}
		for i, s := range steps {
			prev, err := c.SetBalancer(ctx, s.set)
			if err != nil {
				t.Fatal(err)
			}
			if prev != s.prev {
				t.Fatalf("step %d: SetBalancer(%v) returned previous %v, want %v", i, s.set, prev, s.prev)
			}
			cs, err := c.ClusterStatus(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if cs.BalancerOn != s.set {
				t.Fatalf("step %d: cluster status says balancer %v, want %v", i, cs.BalancerOn, s.set)
			}
		}
	})

	t.Run("MoveRegion", func(t *testing.T) {
		regions, err := c.Regions(ctx, tbl)
		if err != nil || len(regions) != 1 {
			t.Fatalf("regions: %v, %v", regions, err)
		}
		enc := regions[0].EncodedName
		if !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(enc) || !strings.HasSuffix(string(regions[0].Name), "."+enc+".") {
			t.Fatalf("region name %q: encoded name %q", regions[0].Name, enc)
		}
		put(t, c, tbl, "moved", "b", "q", "still here")
		if err := c.MoveRegion(ctx, enc); err != nil {
			t.Fatal(err)
		}
		if v := get(t, c, &client.Get{Table: tbl, Row: []byte("moved")}).Value([]byte("b"), []byte("q")); string(v) != "still here" {
			t.Fatalf("after move: %q", v)
		}
		after, err := c.Regions(ctx, tbl)
		if err != nil || len(after) != 1 || string(after[0].Name) != string(regions[0].Name) || after[0].Server != p.addr {
			t.Fatalf("regions after move: %+v, %v", after, err)
		}
		if err := once.MoveRegion(ctx, "0123456789abcdef0123456789abcdef"); !client.IsException(err, "UnknownRegionException") {
			t.Fatalf("moving an unknown region: %v, want UnknownRegionException", err)
		}
	})
}
