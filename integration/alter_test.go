package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/regionkv/regionkv/client"
	"github.com/regionkv/regionkv/hbasepb"
	"github.com/regionkv/regionkv/ipc"
	"google.golang.org/protobuf/proto"
)

// rawConn dials a service of p directly, for the exact response shapes
// HBase's clients decode.
func rawConn(t *testing.T, p *serverProc, service string) *ipc.ClientConn {
	t.Helper()
	c, err := ipc.Dial(testCtx(t, 30*time.Second), p.addr, ipc.DialOptions{Service: service})
	if err != nil {
		t.Fatalf("dial %s %s: %v", p.addr, service, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// rawCall makes one call and returns the exception class ("" for none).
func rawCall(t *testing.T, c *ipc.ClientConn, method string, req, resp proto.Message) string {
	t.Helper()
	_, err := c.Call(testCtx(t, 30*time.Second), method, req, nil, resp)
	if err == nil {
		return ""
	}
	e, ok := ipc.AsException(err)
	if !ok {
		t.Fatalf("%s: %v", method, err)
	}
	return e.Class
}

// rawProcedure makes a call that answers a proc_id and polls
// getProcedureResult as HBase's clients do; it returns the exception class
// the call or the procedure ended with.
func rawProcedure(t *testing.T, c *ipc.ClientConn, method string, req proto.Message, resp interface {
	proto.Message
	GetProcId() uint64
}) string {
	t.Helper()
	if cls := rawCall(t, c, method, req, resp); cls != "" {
		return cls
	}
	if resp.GetProcId() == 0 {
		t.Fatalf("%s: response has no proc_id: %v", method, resp)
	}
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		pr := &hbasepb.GetProcedureResultResponse{}
		if cls := rawCall(t, c, "getProcedureResult", &hbasepb.GetProcedureResultRequest{ProcId: proto.Uint64(resp.GetProcId())}, pr); cls != "" {
			t.Fatalf("getProcedureResult: %s", cls)
		}
		switch pr.GetState() {
		case hbasepb.GetProcedureResultResponse_FINISHED:
			if e := pr.GetException(); e != nil {
				return e.GetGenericException().GetClassName()
			}
			return ""
		case hbasepb.GetProcedureResultResponse_NOT_FOUND:
			t.Fatalf("%s: procedure %d not found", method, resp.GetProcId())
		}
	}
	t.Fatalf("%s: procedure %d did not finish", method, resp.GetProcId())
	return ""
}

func familyNames(td client.TableDescriptor) []string {
	var out []string
	for _, f := range td.Families {
		out = append(out, f.Name)
	}
	return out
}

// TestAlterTable adds, modifies and deletes column families through the
// client and raw MasterService calls, and checks that the schema and the
// data survive restarts, graceful and hard.
func TestAlterTable(t *testing.T) {
	p := startServer(t, "")
	c := newClient(t, p)
	ctx := testCtx(t, 3*time.Minute)
	const tbl = "alter_t"
	createTable(t, c, client.TableDescriptor{Name: tbl, Families: []client.Family{{Name: "a", Attributes: map[string]string{"VERSIONS": "3"}}}}, "m")
	now := time.Now().UnixMilli()
	for i := int64(1); i <= 3; i++ {
		mutate(t, c, client.NewPut(tbl, []byte("r1")).AddAt([]byte("a"), []byte("q"), now-10+i, []byte{'0' + byte(i)}))
	}
	versions := func(row, family string) int {
		t.Helper()
		return len(get(t, c, &client.Get{Table: tbl, Row: []byte(row), Columns: []client.Column{client.Fam(family)}, MaxVersions: 10}).Cells)
	}

	t.Run("AddColumn", func(t *testing.T) {
		if err := c.AddColumn(ctx, tbl, client.Family{Name: "b", Attributes: map[string]string{"VERSIONS": "2", "COMPRESSION": "SNAPPY"}}); err != nil {
			t.Fatal(err)
		}
		// Writable at once, in both regions.
		for _, row := range []string{"r1", "z1"} {
			for i := int64(1); i <= 3; i++ {
				mutate(t, c, client.NewPut(tbl, []byte(row)).AddAt([]byte("b"), []byte("q"), now-10+i, []byte("b")))
			}
			if n := versions(row, "b"); n != 2 {
				t.Fatalf("%s: %d versions in the new family, want 2 (VERSIONS=2)", row, n)
			}
		}
		td, err := c.TableDescriptor(ctx, tbl)
		if err != nil {
			t.Fatal(err)
		}
		equalStrings(t, "families after AddColumn", familyNames(td), []string{"a", "b"})
		if td.Families[1].Attributes["COMPRESSION"] != "SNAPPY" {
			t.Fatalf("new family's attributes: %v", td.Families[1].Attributes)
		}
		if err := c.AddColumn(ctx, tbl, client.Family{Name: "b"}); !client.IsException(err, ipc.ClassInvalidFamilyOperation) {
			t.Fatalf("adding an existing family: %v, want InvalidFamilyOperationException", err)
		}
		if err := c.AddColumn(ctx, "alter_missing", client.Family{Name: "b"}); !client.IsException(err, ipc.ClassTableNotFoundException) {
			t.Fatalf("adding to a missing table: %v, want TableNotFoundException", err)
		}
		if err := c.AddColumn(ctx, tbl, client.Family{Name: "x", Attributes: map[string]string{"BLOCKSIZE": "12"}}); !client.IsException(err, ipc.ClassDoNotRetryIOException) {
			t.Fatalf("adding a family with a bad BLOCKSIZE: %v, want DoNotRetryIOException", err)
		}
	})

	t.Run("ModifyColumn", func(t *testing.T) {
		if n := versions("r1", "a"); n != 3 {
			t.Fatalf("%d versions before, want 3", n)
		}
		err := c.ModifyColumn(ctx, tbl, client.Family{Name: "a", Attributes: map[string]string{"VERSIONS": "1", "MIN_VERSIONS": "1",
			"DATA_BLOCK_ENCODING": "FAST_DIFF", "BLOOMFILTER": "ROWCOL", "BLOCKSIZE": "16384", "COMPRESSION": "GZ"}})
		if err != nil {
			t.Fatal(err)
		}
		if n := versions("r1", "a"); n != 1 {
			t.Fatalf("VERSIONS=1 applies to reads at once: %d versions", n)
		}
		// A flush writes the new options; the data reads back.
		if err := c.FlushTable(ctx, tbl); err != nil {
			t.Fatal(err)
		}
		if v := get(t, c, &client.Get{Table: tbl, Row: []byte("r1")}).Value([]byte("a"), []byte("q")); string(v) != "3" {
			t.Fatalf("after flush with new options: %q", v)
		}
		if err := c.ModifyColumn(ctx, tbl, client.Family{Name: "nope"}); !client.IsException(err, ipc.ClassInvalidFamilyOperation) {
			t.Fatalf("modifying a missing family: %v, want InvalidFamilyOperationException", err)
		}
	})

	t.Run("Raw", func(t *testing.T) {
		m := rawConn(t, p, "MasterService")
		name := &hbasepb.TableName{Namespace: []byte("default"), Qualifier: []byte(tbl)}
		if cls := rawProcedure(t, m, "AddColumn", &hbasepb.AddColumnRequest{TableName: name,
			ColumnFamilies: &hbasepb.ColumnFamilySchema{Name: []byte("raw")}}, &hbasepb.AddColumnResponse{}); cls != "" {
			t.Fatalf("raw AddColumn: %s", cls)
		}
		if cls := rawProcedure(t, m, "DeleteColumn", &hbasepb.DeleteColumnRequest{TableName: name, ColumnName: []byte("raw")},
			&hbasepb.DeleteColumnResponse{}); cls != "" {
			t.Fatalf("raw DeleteColumn: %s", cls)
		}
		for _, tc := range []struct {
			method string
			req    proto.Message
			resp   interface {
				proto.Message
				GetProcId() uint64
			}
			class string
		}{
			{"DeleteColumn", &hbasepb.DeleteColumnRequest{TableName: name, ColumnName: []byte("raw")}, &hbasepb.DeleteColumnResponse{}, ipc.ClassInvalidFamilyOperation},
			{"ModifyColumn", &hbasepb.ModifyColumnRequest{TableName: name, ColumnFamilies: &hbasepb.ColumnFamilySchema{Name: []byte("raw")}},
				&hbasepb.ModifyColumnResponse{}, ipc.ClassInvalidFamilyOperation},
			{"ModifyTable", &hbasepb.ModifyTableRequest{TableName: name, TableSchema: &hbasepb.TableSchema{TableName: name}},
				&hbasepb.ModifyTableResponse{}, ipc.ClassDoNotRetryIOException},
			{"AddColumn", &hbasepb.AddColumnRequest{TableName: &hbasepb.TableName{Namespace: []byte("hbase"), Qualifier: []byte("meta")},
				ColumnFamilies: &hbasepb.ColumnFamilySchema{Name: []byte("x")}}, &hbasepb.AddColumnResponse{}, ipc.ClassDoNotRetryIOException},
		} {
			if cls := rawProcedure(t, m, tc.method, tc.req, tc.resp); cls != tc.class {
				t.Errorf("%s %v: %q, want %s", tc.method, tc.req, cls, tc.class)
			}
		}
		// GetTableDescriptors shows the schema as TableSchema messages.
		resp := &hbasepb.GetTableDescriptorsResponse{}
		if cls := rawCall(t, m, "GetTableDescriptors", &hbasepb.GetTableDescriptorsRequest{TableNames: []*hbasepb.TableName{name}}, resp); cls != "" {
			t.Fatal(cls)
		}
		if len(resp.TableSchema) != 1 || len(resp.TableSchema[0].ColumnFamilies) != 2 {
			t.Fatalf("descriptor: %v", resp.TableSchema)
		}
	})

	t.Run("DeleteColumn", func(t *testing.T) {
		if err := c.DeleteColumn(ctx, tbl, "b"); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Get(ctx, &client.Get{Table: tbl, Row: []byte("r1"), Columns: []client.Column{client.Fam("b")}}); !client.IsException(err, ipc.ClassNoSuchColumnFamilyException) {
			t.Fatalf("get of a deleted family: %v, want NoSuchColumnFamilyException", err)
		}
		if _, err := c.Mutate(ctx, client.NewPut(tbl, []byte("r1")).Add([]byte("b"), []byte("q"), []byte("x"))); !client.IsException(err, ipc.ClassNoSuchColumnFamilyException) {
			t.Fatalf("put to a deleted family: %v, want NoSuchColumnFamilyException", err)
		}
		regions, err := c.Regions(ctx, tbl)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range regions {
			dir := filepath.Join(p.dir, "data", "default", tbl, r.EncodedName, "b")
			if _, err := os.Stat(dir); !os.IsNotExist(err) {
				t.Fatalf("the deleted family's directory %s: %v", dir, err)
			}
		}
		if err := c.DeleteColumn(ctx, tbl, "a"); !client.IsException(err, ipc.ClassInvalidFamilyOperation) {
			t.Fatalf("deleting the only family: %v, want InvalidFamilyOperationException", err)
		}
	})

	t.Run("ModifyTable", func(t *testing.T) {
		td, err := c.TableDescriptor(ctx, tbl)
		if err != nil {
			t.Fatal(err)
		}
		if td.Attributes == nil {
			td.Attributes = map[string]string{}
		}
		td.Attributes["OWNER"] = "alter"
		td.Families = append(td.Families, client.Family{Name: "b"}, client.Family{Name: "c", Attributes: map[string]string{"TTL": "86400"}})
		if err := c.ModifyTable(ctx, td); err != nil {
			t.Fatal(err)
		}
		// b was deleted: added again, it is empty.
		if n := versions("r1", "b"); n != 0 {
			t.Fatalf("a re-added family has %d cells", n)
		}
		put(t, c, tbl, "r2", "c", "q", "c-value")
		put(t, c, tbl, "r2", "b", "q", "b-value")
	})

	check := func(t *testing.T, c *client.Client) {
		t.Helper()
		td, err := c.TableDescriptor(ctx, tbl)
		if err != nil {
			t.Fatal(err)
		}
		equalStrings(t, "families", familyNames(td), []string{"a", "b", "c"})
		if td.Attributes["OWNER"] != "alter" || td.Families[0].Attributes["VERSIONS"] != "1" || td.Families[2].Attributes["TTL"] != "86400" {
			t.Fatalf("descriptor: %+v", td)
		}
		res := get(t, c, &client.Get{Table: tbl, Row: []byte("r2")})
		equalStrings(t, "r2", cellStrings(res.Cells, false), []string{"r2/b:q=b-value", "r2/c:q=c-value"})
		if n := len(get(t, c, &client.Get{Table: tbl, Row: []byte("r1"), MaxVersions: 10}).Cells); n != 1 {
			t.Fatalf("r1 has %d cells, want 1 (a:q, VERSIONS=1)", n)
		}
	}
	t.Run("Restart", func(t *testing.T) {
		defer p.use(t)()
		p.restart(false)
		check(t, newClient(t, p))
		// A kill -9 right after a DeleteColumn: the family stays deleted.
		c2 := newClient(t, p)
		put(t, c2, tbl, "r3", "c", "q", "unflushed")
		if err := c2.DeleteColumn(ctx, tbl, "c"); err != nil {
			t.Fatal(err)
		}
		p.restart(true)
		c3 := newClient(t, p)
		td, err := c3.TableDescriptor(ctx, tbl)
		if err != nil {
			t.Fatal(err)
		}
		equalStrings(t, "families after a kill", familyNames(td), []string{"a", "b"})
		if err := c3.AddColumn(ctx, tbl, client.Family{Name: "c"}); err != nil {
			t.Fatal(err)
		}
		for _, row := range []string{"r2", "r3"} {
			if res := get(t, c3, &client.Get{Table: tbl, Row: []byte(row), Columns: []client.Column{client.Fam("c")}}); !res.Empty() {
				t.Fatalf("%s: the deleted family's cells came back: %q", row, cellStrings(res.Cells, false))
			}
		}
	})
}

// TestNamespaces creates, lists, modifies and deletes namespaces, with
// tables in them, through the client and raw calls; they survive a
// restart. It has a server of its own: the shared one's namespaces are
// checked by TestSystemTables.
func TestNamespaces(t *testing.T) {
	p := startServer(t, "")
	c := newClient(t, p)
	ctx := testCtx(t, 2*time.Minute)
	if err := c.CreateNamespace(ctx, client.NamespaceDescriptor{Name: "ns1", Configuration: map[string]string{"owner": "it"}}); err != nil {
		t.Fatal(err)
	}
	names, err := c.ListNamespaces(ctx)
	if err != nil {
		t.Fatal(err)
	}
	equalStrings(t, "namespaces", names, []string{"default", "hbase", "ns1"})
	nd, err := c.GetNamespace(ctx, "ns1")
	if err != nil || nd.Configuration["owner"] != "it" {
		t.Fatalf("GetNamespace: %+v, %v", nd, err)
	}
	if err := c.CreateNamespace(ctx, client.NamespaceDescriptor{Name: "ns1"}); !client.IsException(err, ipc.ClassNamespaceExistException) {
		t.Fatalf("creating an existing namespace: %v, want NamespaceExistException", err)
	}
	if _, err := c.GetNamespace(ctx, "nope"); !client.IsException(err, ipc.ClassNamespaceNotFoundException) {
		t.Fatalf("GetNamespace of a missing namespace: %v, want NamespaceNotFoundException", err)
	}
	for _, ns := range []string{"default", "hbase"} {
		if err := c.DeleteNamespace(ctx, ns); !client.IsException(err, ipc.ClassConstraintException) {
			t.Fatalf("deleting %s: %v, want ConstraintException", ns, err)
		}
	}
	if err := c.DeleteNamespace(ctx, "nope"); !client.IsException(err, ipc.ClassNamespaceNotFoundException) {
		t.Fatalf("deleting a missing namespace: %v, want NamespaceNotFoundException", err)
	}
	if err := c.ModifyNamespace(ctx, client.NamespaceDescriptor{Name: "ns1", Configuration: map[string]string{"owner": "changed"}}); err != nil {
		t.Fatal(err)
	}
	nds, err := c.ListNamespaceDescriptors(ctx)
	if err != nil || len(nds) != 3 || nds[2].Name != "ns1" || nds[2].Configuration["owner"] != "changed" {
		t.Fatalf("ListNamespaceDescriptors: %+v, %v", nds, err)
	}

	// Tables named ns:table, everywhere: create, meta, put, get, scan, list.
	err = c.CreateTable(ctx, client.TableDescriptor{Name: "nope:t", Families: fams("cf")}, nil)
	if !client.IsException(err, ipc.ClassNamespaceNotFoundException) {
		t.Fatalf("creating a table in a missing namespace: %v, want NamespaceNotFoundException", err)
	}
	createTable(t, c, client.TableDescriptor{Name: "ns1:t1", Families: fams("cf")}, "m")
	createTable(t, c, client.TableDescriptor{Name: "ns1:t2", Families: fams("cf")})
	put(t, c, "ns1:t1", "a", "cf", "q", "in-a")
	put(t, c, "ns1:t1", "z", "cf", "q", "in-z")
	equalStrings(t, "rows of ns1:t1", rowKeys(scanAll(t, c, &client.Scan{Table: "ns1:t1"})), []string{"a", "z"})
	tables, err := c.ListTableNamesByNamespace(ctx, "ns1")
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(tables)
	equalStrings(t, "tables of ns1", tables, []string{"ns1:t1", "ns1:t2"})
	tds, err := c.ListTableDescriptorsByNamespace(ctx, "ns1")
	if err != nil || len(tds) != 2 {
		t.Fatalf("descriptors of ns1: %+v, %v", tds, err)
	}
	if _, err := c.ListTableNamesByNamespace(ctx, "nope"); !client.IsException(err, ipc.ClassNamespaceNotFoundException) {
		t.Fatalf("tables of a missing namespace: %v, want NamespaceNotFoundException", err)
	}
	if names, err := c.ListTableNames(ctx, "", false, "ns1"); err != nil || len(names) != 2 {
		t.Fatalf("GetTableNames in ns1: %q, %v", names, err)
	}
	if rs := scanAll(t, c, &client.Scan{Table: "hbase:meta", StartRow: []byte("ns1:t1,"), StopRow: []byte("ns1:t1,\xff")}); len(rs) != 2 {
		t.Fatalf("hbase:meta rows of ns1:t1: %q", rowKeys(rs))
	}
	if err := c.DeleteNamespace(ctx, "ns1"); !client.IsException(err, ipc.ClassConstraintException) {
		t.Fatalf("deleting a namespace with tables: %v, want ConstraintException", err)
	}

	t.Run("Raw", func(t *testing.T) {
		m := rawConn(t, p, "MasterService")
		resp := &hbasepb.ListNamespaceDescriptorsResponse{}
		if cls := rawCall(t, m, "ListNamespaceDescriptors", &hbasepb.ListNamespaceDescriptorsRequest{}, resp); cls != "" {
			t.Fatal(cls)
		}
		var got []string
		for _, d := range resp.NamespaceDescriptor {
			got = append(got, string(d.GetName()))
		}
		equalStrings(t, "namespace descriptors", got, []string{"default", "hbase", "ns1"})
		g := &hbasepb.GetNamespaceDescriptorResponse{}
		if cls := rawCall(t, m, "GetNamespaceDescriptor", &hbasepb.GetNamespaceDescriptorRequest{NamespaceName: proto.String("ns1")}, g); cls != "" {
			t.Fatal(cls)
		}
		if cfg := g.GetNamespaceDescriptor().GetConfiguration(); len(cfg) != 1 || cfg[0].GetName() != "owner" || cfg[0].GetValue() != "changed" {
			t.Fatalf("ns1's configuration: %v", cfg)
		}
		if cls := rawProcedure(t, m, "CreateNamespace", &hbasepb.CreateNamespaceRequest{NamespaceDescriptor: &hbasepb.NamespaceDescriptor{Name: []byte("ns-bad")}},
			&hbasepb.CreateNamespaceResponse{}); cls != ipc.ClassDoNotRetryIOException {
			t.Fatalf("an illegal namespace name: %q", cls)
		}
		if cls := rawProcedure(t, m, "CreateNamespace", &hbasepb.CreateNamespaceRequest{NamespaceDescriptor: &hbasepb.NamespaceDescriptor{Name: []byte("ns2")}},
			&hbasepb.CreateNamespaceResponse{}); cls != "" {
			t.Fatalf("raw CreateNamespace: %s", cls)
		}
	})

	defer p.use(t)()
	p.restart(false)
	c = newClient(t, p)
	names, err = c.ListNamespaces(ctx)
	if err != nil {
		t.Fatal(err)
	}
	equalStrings(t, "namespaces after a restart", names, []string{"default", "hbase", "ns1", "ns2"})
	if v := get(t, c, &client.Get{Table: "ns1:t1", Row: []byte("z")}).Value([]byte("cf"), []byte("q")); string(v) != "in-z" {
		t.Fatalf("ns1:t1/z after a restart: %q", v)
	}
	for _, tb := range []string{"ns1:t1", "ns1:t2"} {
		if err := c.DisableTable(ctx, tb); err != nil {
			t.Fatal(err)
		}
		if err := c.DeleteTable(ctx, tb); err != nil {
			t.Fatal(err)
		}
	}
	for _, ns := range []string{"ns1", "ns2"} {
		if err := c.DeleteNamespace(ctx, ns); err != nil {
			t.Fatal(err)
		}
	}
	p.restart(true)
	c = newClient(t, p)
	if names, err = c.ListNamespaces(ctx); err != nil {
		t.Fatal(err)
	}
	equalStrings(t, "namespaces after deleting and a kill", names, []string{"default", "hbase"})
	rows := rowKeys(scanAll(t, c, &client.Scan{Table: "hbase:namespace"}))
	equalStrings(t, "hbase:namespace rows", rows, []string{"default", "hbase"})
}

// TestRegionAdmin covers the AdminService calls HBase's Admin.flush,
// compact / majorCompact, rollWALWriter and the region listings send, and
// MasterService FlushTable.
func TestRegionAdmin(t *testing.T) {
	p := sharedServer(t)
	c := newClient(t, p)
	ctx := testCtx(t, 2*time.Minute)
	const tbl = "regionadmin_t"
	createTable(t, c, client.TableDescriptor{Name: tbl, Families: fams("cf", "cg")}, "m")
	regions, err := c.Regions(ctx, tbl)
	if err != nil || len(regions) != 2 {
		t.Fatalf("regions: %+v, %v", regions, err)
	}
	files := func(r client.RegionInfo, families ...string) int {
		t.Helper()
		fs, err := c.StoreFiles(ctx, r.Name, families...)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range fs {
			if !strings.Contains(f, r.EncodedName) {
				t.Fatalf("store file %s is not in region %s", f, r.EncodedName)
			}
		}
		return len(fs)
	}

	// FlushTable through the master (HBase 2.6), FlushRegion through the
	// region's server: two files per region (a third would start a
	// compaction, hbase.hstore.compaction.min). Each round writes rows of
	// its own: a file that rewrote the other's rows would start one too.
	for round := 0; round < 2; round++ {
		for _, prefix := range []string{"a", "z"} {
			for i := 0; i < 4; i++ {
				put(t, c, tbl, fmt.Sprintf("%s%d%d", prefix, round, i), "cf", "q", "v")
			}
		}
		if round == 0 {
			if err := c.FlushTable(ctx, tbl, "cf"); err != nil {
				t.Fatal(err)
			}
			continue
		}
		for _, r := range regions {
			if err := c.FlushRegion(ctx, r.Name); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, r := range regions {
		if n := files(r, "cf"); n != 2 {
			t.Fatalf("region %s: %d store files of cf, want 2", r.EncodedName, n)
		}
		if n := files(r, "cg"); n != 0 {
			t.Fatalf("region %s: %d store files of cg, want 0", r.EncodedName, n)
		}
	}

	// A major compaction, queued; the compaction state says when it is done.
	if err := c.CompactTable(ctx, tbl, true); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		st, err := c.TableCompactionState(ctx, tbl)
		if err != nil {
			t.Fatal(err)
		}
		if st == client.CompactionNone {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("still %s after a minute", st)
		}
	}
	for _, r := range regions {
		if n := files(r); n != 1 {
			t.Fatalf("region %s: %d store files after a major compaction, want 1", r.EncodedName, n)
		}
	}
	if v := get(t, c, &client.Get{Table: tbl, Row: []byte("z13")}).Value([]byte("cf"), []byte("q")); string(v) != "v" {
		t.Fatalf("after compaction: %q", v)
	}
	if err := c.CompactRegion(ctx, regions[0].Name, false, "cg"); err != nil {
		t.Fatal(err)
	}

	if err := c.RollWAL(ctx, p.addr); err != nil {
		t.Fatal(err)
	}
	put(t, c, tbl, "b", "cf", "q", "after roll")
	si, err := c.ServerInfo(ctx, p.addr)
	if err != nil || !strings.HasPrefix(si.Name, strings.Replace(p.addr, ":", ",", 1)+",") || si.InfoPort <= 0 {
		t.Fatalf("server info: %+v, %v (server %s)", si, err, p.addr)
	}
	online, err := c.OnlineRegions(ctx, p.addr)
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, r := range online {
		for _, want := range regions {
			if string(r.Name) == string(want.Name) {
				found++
			}
		}
	}
	if found != 2 {
		t.Fatalf("OnlineRegions lists %d of the table's 2 regions (names computed from RegionInfo)", found)
	}

	t.Run("Raw", func(t *testing.T) {
		a := rawConn(t, p, "AdminService")
		spec := &hbasepb.RegionSpecifier{Type: hbasepb.RegionSpecifier_REGION_NAME.Enum(), Value: regions[1].Name}
		ri := &hbasepb.GetRegionInfoResponse{}
		if cls := rawCall(t, a, "GetRegionInfo", &hbasepb.GetRegionInfoRequest{Region: spec, CompactionState: proto.Bool(true)}, ri); cls != "" {
			t.Fatal(cls)
		}
		if string(ri.GetRegionInfo().GetStartKey()) != "m" || ri.CompactionState == nil || ri.Splittable == nil || ri.Mergeable == nil {
			t.Fatalf("GetRegionInfo: %v", ri)
		}
		fr := &hbasepb.FlushRegionResponse{}
		if cls := rawCall(t, a, "FlushRegion", &hbasepb.FlushRegionRequest{Region: spec}, fr); cls != "" || fr.LastFlushTime == nil {
			t.Fatalf("FlushRegion: %s %v", cls, fr)
		}
		bad := &hbasepb.RegionSpecifier{Type: hbasepb.RegionSpecifier_ENCODED_REGION_NAME.Enum(), Value: []byte("0123456789abcdef0123456789abcdef")}
		if cls := rawCall(t, a, "FlushRegion", &hbasepb.FlushRegionRequest{Region: bad}, fr); cls != ipc.ClassNotServingRegionException {
			t.Fatalf("FlushRegion of an unknown region: %q", cls)
		}
		if cls := rawCall(t, a, "CompactRegion", &hbasepb.CompactRegionRequest{Region: spec, Family: []byte("nope")}, &hbasepb.CompactRegionResponse{}); cls != ipc.ClassDoNotRetryIOException {
			t.Fatalf("CompactRegion of an unknown family: %q", cls)
		}
		if cls := rawCall(t, a, "RollWALWriter", &hbasepb.RollWALWriterRequest{}, &hbasepb.RollWALWriterResponse{}); cls != "" {
			t.Fatal(cls)
		}
		m := rawConn(t, p, "MasterService")
		if cls := rawProcedure(t, m, "FlushTable", &hbasepb.FlushTableRequest{TableName: &hbasepb.TableName{Namespace: []byte("default"),
			Qualifier: []byte("regionadmin_missing")}}, &hbasepb.FlushTableResponse{}); cls != ipc.ClassTableNotFoundException {
			t.Fatalf("FlushTable of a missing table: %q", cls)
		}
		// The legacy path of clients before 2.6.
		desc := &hbasepb.ProcedureDescription{Signature: proto.String("flush-table-proc"), Instance: proto.String(tbl)}
		if cls := rawCall(t, m, "ExecProcedure", &hbasepb.ExecProcedureRequest{Procedure: desc}, &hbasepb.ExecProcedureResponse{}); cls != "" {
			t.Fatal(cls)
		}
		done := &hbasepb.IsProcedureDoneResponse{}
		if cls := rawCall(t, m, "IsProcedureDone", &hbasepb.IsProcedureDoneRequest{Procedure: desc}, done); cls != "" || !done.GetDone() {
			t.Fatalf("IsProcedureDone: %s %v", cls, done)
		}
	})
}
