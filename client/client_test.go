package client

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/regionkv/regionkv/encoding"
	"github.com/regionkv/regionkv/filter"
	"github.com/regionkv/regionkv/hbasepb"
	"github.com/regionkv/regionkv/ipc"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
)

var (
	cf  = []byte("cf")
	cf2 = []byte("cf2")
	qa  = []byte("a")
	qb  = []byte("b")
)

func put(t *testing.T, c *Client, table, row string, cells ...string) {
	t.Helper()
	m := NewPut(table, []byte(row))
	for i := 0; i+1 < len(cells); i += 2 {
		m.Add(cf, []byte(cells[i]), []byte(cells[i+1]))
	}
	_, err := c.Mutate(ctx(t), m)
	require.NoError(t, err)
}

func get(t *testing.T, c *Client, g *Get) *Result {
	t.Helper()
	r, err := c.Get(ctx(t), g)
	require.NoError(t, err)
	return r
}

// cellStrings formats cells as "row/family:qualifier/ts=value" (ts only if
// withTS).
func cellStrings(cells []*Cell, withTS bool) []string {
	var out []string
	for _, c := range cells {
		s := fmt.Sprintf("%s/%s:%s", c.Row, c.Family, c.Qualifier)
		if withTS {
			s += fmt.Sprintf("/%d", c.Timestamp)
		}
		out = append(out, s+"="+string(c.Value))
	}
	return out
}

func TestParseZNode(t *testing.T) {
	pb := &hbasepb.MetaRegionServer{Server: &hbasepb.ServerName{HostName: proto.String("h"), Port: proto.Uint32(16020)}}
	b, err := proto.Marshal(pb)
	require.NoError(t, err)
	id := []byte("123@host")
	data := append([]byte{0xFF}, binary.BigEndian.AppendUint32(nil, uint32(len(id)))...)
	data = append(append(append(data, id...), "PBUF"...), b...)
	var got hbasepb.MetaRegionServer
	require.NoError(t, parseZNode(data, &got))
	require.Equal(t, "h", got.GetServer().GetHostName())
	require.Equal(t, uint32(16020), got.GetServer().GetPort())

	for _, bad := range [][]byte{nil, {0xFF, 0, 0, 0, 9, 'x'}, data[:len(data)-len(b)-1], append([]byte{0}, data[1:]...)} {
		require.Error(t, parseZNode(bad, &got))
	}
}

func TestMutationEncoding(t *testing.T) {
	m := NewDelete("t", []byte("r")).DeleteFamily(cf, 5).DeleteColumns(cf2, qa, LatestTimestamp).DeleteColumn(cf, qb, 7)
	m.TTL, m.Durability = 1500*time.Millisecond, AsyncWAL
	var cells []byte
	p, err := m.pb(&cells, true)
	require.NoError(t, err)
	require.Equal(t, int32(3), p.GetAssociatedCellCount())
	require.Equal(t, hbasepb.MutationProto_ASYNC_WAL, p.GetDurability())
	require.Equal(t, "_ttl", p.GetAttribute()[0].GetName())
	require.Equal(t, uint64(1500), binary.BigEndian.Uint64(p.GetAttribute()[0].GetValue()))
	var kinds []encoding.Type
	require.NoError(t, encoding.DecodeCellBlock(cells, false, func(kv *encoding.KeyValue) error {
		kinds = append(kinds, kv.Type)
		return nil
	}))
	require.Equal(t, []encoding.Type{encoding.TypeDeleteFamily, encoding.TypeDeleteColumn, encoding.TypeDelete}, kinds)

	cells = nil
	p, err = m.pb(&cells, false)
	require.NoError(t, err)
	require.Empty(t, cells)
	require.Len(t, p.GetColumnValue(), 2)
	qv := p.GetColumnValue()[0].GetQualifierValue()
	require.Equal(t, hbasepb.MutationProto_DELETE_FAMILY, qv[0].GetDeleteType())
	require.Equal(t, uint64(5), qv[0].GetTimestamp())
	require.Equal(t, hbasepb.MutationProto_DELETE_ONE_VERSION, qv[1].GetDeleteType())
	require.Nil(t, p.GetColumnValue()[1].GetQualifierValue()[0].Timestamp)

	_, err = NewPut("t", []byte("r")).pb(&cells, true)
	require.Error(t, err, "a put without cells")
	bad := NewIncrement("t", []byte("r")).Add(cf, qa, []byte("x"))
	_, err = bad.pb(&cells, true)
	require.Error(t, err, "an increment amount that is not 8 bytes")
}

func TestColumnsPB(t *testing.T) {
	p := columnsPB([]Column{Col("a", "x"), Col("b", "y"), Col("a", "z"), Fam("b"), Col("b", "w")})
	require.Len(t, p, 2)
	require.Equal(t, [][]byte{[]byte("x"), []byte("z")}, p[0].GetQualifier())
	require.Empty(t, p[1].GetQualifier(), "the whole family b")
	require.Equal(t, "e4d909c290d0fb1ca068ffaddf22cbd0", encodedName([]byte("t,k,1.e4d909c290d0fb1ca068ffaddf22cbd0.")))
}

func TestAdmin(t *testing.T) {
	c := newClient(t, nil)
	name := fmt.Sprintf("admin%d", env.tableID.Add(1))
	td := TableDescriptor{Name: name, Families: []Family{{Name: "cf", Attributes: map[string]string{
		"VERSIONS": "3", "TTL": "86400", "BLOOMFILTER": "ROWCOL", "DATA_BLOCK_ENCODING": "FAST_DIFF", "COMPRESSION": "GZ"}}}}
	require.NoError(t, c.CreateTable(ctx(t), td, [][]byte{[]byte("m")}))
	err := c.CreateTable(ctx(t), td, nil)
	require.True(t, IsException(err, "TableExistsException"), "%v", err)
	err = c.CreateTable(ctx(t), TableDescriptor{Name: "bad" + name, Families: []Family{{Name: "cf",
		Attributes: map[string]string{"VERSIONS": "zero"}}}}, nil)
	require.True(t, IsException(err, "DoNotRetryIOException"), "%v", err)

	got, err := c.TableDescriptor(ctx(t), name)
	require.NoError(t, err)
	require.Equal(t, name, got.Name)
	require.Len(t, got.Families, 1)
	require.Equal(t, "3", got.Families[0].Attributes["VERSIONS"])
	require.Equal(t, "FAST_DIFF", got.Families[0].Attributes["DATA_BLOCK_ENCODING"])
	_, err = c.TableDescriptor(ctx(t), "nosuchtable")
	require.True(t, IsException(err, ipc.ClassTableNotFoundException), "%v", err)

	names, err := c.ListTableNames(ctx(t), name, false, "")
	require.NoError(t, err)
	require.Equal(t, []string{name}, names)
	names, err = c.ListTableNames(ctx(t), ".*meta.*", true, "hbase")
	require.NoError(t, err)
	require.Equal(t, []string{"hbase:meta"}, names)
	names, err = c.ListTableNames(ctx(t), "", false, "")
	require.NoError(t, err)
	require.Contains(t, names, name)
	require.NotContains(t, names, "hbase:meta")

	regions, err := c.Regions(ctx(t), name)
	require.NoError(t, err)
	require.Len(t, regions, 2)
	require.Len(t, regions[0].EncodedName, 32)
	require.Equal(t, []byte("m"), regions[1].StartKey)
	require.NoError(t, c.MoveRegion(ctx(t), regions[0].EncodedName))
	err = c.MoveRegion(ctx(t), "00000000000000000000000000000000")
	require.True(t, IsException(err, "UnknownRegionException"), "%v", err)

	cs, err := c.ClusterStatus(ctx(t))
	require.NoError(t, err)
	require.Equal(t, env.srv.Addr(), cs.Master)
	require.Equal(t, []string{env.srv.Addr()}, cs.LiveServers)
	require.NotEmpty(t, cs.ClusterID)
	require.GreaterOrEqual(t, cs.Regions, 3)

	prev, err := c.SetBalancer(ctx(t), false)
	require.NoError(t, err)
	require.True(t, prev)
	prev, err = c.SetBalancer(ctx(t), true)
	require.NoError(t, err)
	require.False(t, prev)

	st, err := c.TableState(ctx(t), name)
	require.NoError(t, err)
	require.Equal(t, TableEnabled, st)
	err = c.DeleteTable(ctx(t), name)
	require.True(t, IsException(err, "TableNotDisabledException"), "%v", err)
	put(t, c, name, "row", "a", "1")
	require.NoError(t, c.DisableTable(ctx(t), name))
	st, err = c.TableState(ctx(t), name)
	require.NoError(t, err)
	require.Equal(t, TableDisabled, st)
	require.NoError(t, c.TruncateTable(ctx(t), name, true))
	require.True(t, get(t, c, &Get{Table: name, Row: []byte("row")}).Empty(), "truncated")
	regions, err = c.Regions(ctx(t), name)
	require.NoError(t, err)
	require.Len(t, regions, 2, "splits preserved")
	require.NoError(t, c.DisableTable(ctx(t), name))
	require.NoError(t, c.DeleteTable(ctx(t), name))
	_, err = c.TableState(ctx(t), name)
	require.True(t, IsException(err, "TableNotFoundException"), "%v", err)
	_, err = c.Get(ctx(t), &Get{Table: name, Row: []byte("row")})
	require.True(t, IsException(err, "TableNotFoundException"), "%v", err)
}

func TestGetPut(t *testing.T) {
	c := newClient(t, nil)
	tbl := newTable(t, c)

	r := get(t, c, &Get{Table: tbl, Row: []byte("missing")})
	require.True(t, r.Empty())
	_, err := c.Get(ctx(t), &Get{Table: "nosuchtable", Row: []byte("r")})
	require.True(t, IsException(err, ipc.ClassTableNotFoundException), "%v", err)
	// One "client: " prefix, at the operation; what it wraps says the rest.
	require.Equal(t, `client: get in nosuchtable (row "r"): no regions in hbase:meta: org.apache.hadoop.hbase.TableNotFoundException: nosuchtable`, err.Error())
	sc := c.Scan(&Scan{Table: "nosuchtable"})
	_, err = sc.Next(ctx(t))
	require.Error(t, err)
	require.Equal(t, 1, strings.Count(err.Error(), "client: "), "%v", err)
	sc.Close()
	_, err = c.Mutate(ctx(t), NewPut(tbl, []byte("r")).Add([]byte("nofam"), qa, []byte("v")))
	require.True(t, IsException(err, ipc.ClassNoSuchColumnFamilyException), "%v", err)
	_, err = c.Get(ctx(t), &Get{Table: tbl, Row: []byte("r"), Columns: []Column{Fam("nofam")}})
	require.True(t, IsException(err, ipc.ClassNoSuchColumnFamilyException), "%v", err)

	// Server-stamped and client-stamped cells, several versions.
	before := time.Now().UnixMilli()
	put(t, c, tbl, "r", "a", "1", "b", "2")
	_, err = c.Mutate(ctx(t), NewPut(tbl, []byte("r")).Add(cf2, qa, []byte("x")))
	require.NoError(t, err)
	r = get(t, c, &Get{Table: tbl, Row: []byte("r")})
	require.Equal(t, []string{"r/cf:a=1", "r/cf:b=2", "r/cf2:a=x"}, cellStrings(r.Cells, false))
	require.GreaterOrEqual(t, r.Cells[0].Timestamp, before)
	require.Equal(t, []byte("r"), r.Row())
	require.Equal(t, []byte("2"), r.Value(cf, qb))

	for ts := int64(10); ts <= 50; ts += 10 {
		_, err := c.Mutate(ctx(t), NewPut(tbl, []byte("v")).AddAt(cf, qa, ts, []byte(fmt.Sprint(ts))).
			AddAt(cf, qb, ts, []byte(fmt.Sprint(ts))))
		require.NoError(t, err)
	}
	r = get(t, c, &Get{Table: tbl, Row: []byte("v"), Columns: []Column{Col("cf", "a")}, MaxVersions: 10})
	require.Equal(t, []string{"v/cf:a/50=50", "v/cf:a/40=40", "v/cf:a/30=30"}, cellStrings(r.Cells, true),
		"VERSIONS=3 keeps three")
	r = get(t, c, &Get{Table: tbl, Row: []byte("v"), Columns: []Column{Col("cf", "a")}, MaxVersions: 3,
		TimeRange: TimeRange{Min: 30, Max: 50}})
	require.Equal(t, []string{"v/cf:a/40=40", "v/cf:a/30=30"}, cellStrings(r.Cells, true))
	r = get(t, c, &Get{Table: tbl, Row: []byte("v")})
	require.Equal(t, []string{"v/cf:a/50=50", "v/cf:b/50=50"}, cellStrings(r.Cells, true))
	r = get(t, c, &Get{Table: tbl, Row: []byte("v"), StoreLimit: 1, StoreOffset: 1})
	require.Equal(t, []string{"v/cf:b/50=50"}, cellStrings(r.Cells, true))

	r = get(t, c, &Get{Table: tbl, Row: []byte("r"), ExistenceOnly: true})
	require.True(t, r.Exists)
	require.Empty(t, r.Cells)
	r = get(t, c, &Get{Table: tbl, Row: []byte("nope"), ExistenceOnly: true})
	require.False(t, r.Exists)

	r = get(t, c, &Get{Table: tbl, Row: []byte("r"),
		Filter: filter.NewQualifierFilter(filter.CompareEqual, filter.NewBinaryComparator(qb))})
	require.Equal(t, []string{"r/cf:b=2"}, cellStrings(r.Cells, false))
	r = get(t, c, &Get{Table: tbl, Row: []byte("r"), Filter: filter.NewKeyOnlyFilter(false)})
	require.Equal(t, []string{"r/cf:a=", "r/cf:b=", "r/cf2:a="}, cellStrings(r.Cells, false))

	// A TTL on the cell.
	m := NewPut(tbl, []byte("ttl")).Add(cf, qa, []byte("short"))
	m.TTL = 300 * time.Millisecond
	_, err = c.Mutate(ctx(t), m)
	require.NoError(t, err)
	require.False(t, get(t, c, &Get{Table: tbl, Row: []byte("ttl")}).Empty())
	require.Eventually(t, func() bool { return get(t, c, &Get{Table: tbl, Row: []byte("ttl")}).Empty() },
		5*time.Second, 50*time.Millisecond)

	// Durability passes through.
	m = NewPut(tbl, []byte("dur")).Add(cf, qa, []byte("v"))
	m.Durability = SkipWAL
	_, err = c.Mutate(ctx(t), m)
	require.NoError(t, err)
}

func TestDeletes(t *testing.T) {
	c := newClient(t, nil)
	tbl := newTable(t, c)
	setup := func(row string) {
		for ts := int64(1); ts <= 3; ts++ {
			_, err := c.Mutate(ctx(t), NewPut(tbl, []byte(row)).AddAt(cf, qa, ts, []byte(fmt.Sprint("a", ts))).
				AddAt(cf, qb, ts, []byte(fmt.Sprint("b", ts))).AddAt(cf2, qa, ts, []byte(fmt.Sprint("x", ts))))
			require.NoError(t, err)
		}
	}
	all := func(row string) []string {
		return cellStrings(get(t, c, &Get{Table: tbl, Row: []byte(row), MaxVersions: 10}).Cells, true)
	}
	del := func(m *Mutation) {
		_, err := c.Mutate(ctx(t), m)
		require.NoError(t, err)
	}

	setup("row")
	del(NewDelete(tbl, []byte("row")))
	require.Empty(t, all("row"), "whole row")

	setup("rowts")
	m := NewDelete(tbl, []byte("rowts"))
	m.Timestamp = 2
	del(m)
	require.Equal(t, []string{"rowts/cf:a/3=a3", "rowts/cf:b/3=b3", "rowts/cf2:a/3=x3"}, all("rowts"), "whole row up to 2")

	setup("fam")
	del(NewDelete(tbl, []byte("fam")).DeleteFamily(cf, LatestTimestamp))
	require.Equal(t, []string{"fam/cf2:a/3=x3", "fam/cf2:a/2=x2", "fam/cf2:a/1=x1"}, all("fam"))

	setup("famver")
	del(NewDelete(tbl, []byte("famver")).DeleteFamilyVersion(cf, 2))
	require.Equal(t, []string{"famver/cf:a/3=a3", "famver/cf:a/1=a1", "famver/cf:b/3=b3", "famver/cf:b/1=b1",
		"famver/cf2:a/3=x3", "famver/cf2:a/2=x2", "famver/cf2:a/1=x1"}, all("famver"))

	setup("cols")
	del(NewDelete(tbl, []byte("cols")).DeleteColumns(cf, qa, 2))
	require.Equal(t, []string{"cols/cf:a/3=a3", "cols/cf:b/3=b3", "cols/cf:b/2=b2", "cols/cf:b/1=b1",
		"cols/cf2:a/3=x3", "cols/cf2:a/2=x2", "cols/cf2:a/1=x1"}, all("cols"))

	setup("col")
	del(NewDelete(tbl, []byte("col")).DeleteColumn(cf, qa, 2).DeleteColumn(cf, qb, LatestTimestamp))
	require.Equal(t, []string{"col/cf:a/3=a3", "col/cf:a/1=a1", "col/cf:b/2=b2", "col/cf:b/1=b1",
		"col/cf2:a/3=x3", "col/cf2:a/2=x2", "col/cf2:a/1=x1"}, all("col"))
}

func TestIncrementAppend(t *testing.T) {
	c := newClient(t, nil)
	tbl := newTable(t, c)
	n, err := c.IncrementColumn(ctx(t), tbl, []byte("ctr"), cf, qa, 5)
	require.NoError(t, err)
	require.Equal(t, int64(5), n)
	n, err = c.IncrementColumn(ctx(t), tbl, []byte("ctr"), cf, qa, -2)
	require.NoError(t, err)
	require.Equal(t, int64(3), n)

	res, err := c.Mutate(ctx(t), NewIncrement(tbl, []byte("ctr")).AddInt(cf, qa, 1).AddInt(cf, qb, 10))
	require.NoError(t, err)
	require.Len(t, res.Cells, 2)
	v, _ := Int64(res.Value(cf, qa))
	require.Equal(t, int64(4), v)
	v, _ = Int64(res.Value(cf, qb))
	require.Equal(t, int64(10), v)

	// Many goroutines on one counter: no lost update.
	var wg sync.WaitGroup
	for g := 0; g < 10; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 10; i++ {
				if _, err := c.IncrementColumn(ctx(t), tbl, []byte("race"), cf, qa, 1); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	n, err = c.IncrementColumn(ctx(t), tbl, []byte("race"), cf, qa, 0)
	require.NoError(t, err)
	require.Equal(t, int64(100), n)

	res, err = c.Mutate(ctx(t), NewAppend(tbl, []byte("app")).Add(cf, qa, []byte("abc")))
	require.NoError(t, err)
	require.Equal(t, []byte("abc"), res.Value(cf, qa))
	res, err = c.Mutate(ctx(t), NewAppend(tbl, []byte("app")).Add(cf, qa, []byte("def")))
	require.NoError(t, err)
	require.Equal(t, []byte("abcdef"), res.Value(cf, qa))
	require.Equal(t, []byte("abcdef"), get(t, c, &Get{Table: tbl, Row: []byte("app")}).Value(cf, qa))
}

func TestCheckAndMutate(t *testing.T) {
	c := newClient(t, nil)
	tbl := newTable(t, c)
	row := []byte("cam")
	p := func(q, v string) *Mutation { return NewPut(tbl, row).Add(cf, []byte(q), []byte(v)) }
	cam := func(cond Condition, ms ...*Mutation) bool {
		t.Helper()
		ok, err := c.CheckAndMutate(ctx(t), cond, ms...)
		require.NoError(t, err)
		return ok
	}

	require.True(t, cam(IfNotExists(cf, qa), p("a", "1")))
	require.False(t, cam(IfNotExists(cf, qa), p("a", "2")), "exists now")
	require.False(t, cam(IfEquals(cf, qa, []byte("2")), p("a", "3")))
	require.True(t, cam(IfEquals(cf, qa, []byte("1")), p("a", "3")))
	require.Equal(t, []byte("3"), get(t, c, &Get{Table: tbl, Row: row}).Value(cf, qa))

	// As in HBase, the operand is compared with the cell: GREATER holds
	// when the operand "4" is greater than the cell's value "3".
	require.True(t, cam(Condition{Family: cf, Qualifier: qa, Op: filter.CompareGreater, Value: []byte("4")}, p("b", "g")))
	require.False(t, cam(Condition{Family: cf, Qualifier: qa, Op: filter.CompareLess, Value: []byte("4")}, p("b", "l")))
	require.False(t, cam(Condition{Family: cf, Qualifier: qa, Op: filter.CompareGreater, Value: []byte("2")}, p("b", "l")))
	require.True(t, cam(Condition{Family: cf, Qualifier: qa, Op: filter.CompareEqual,
		Comparator: filter.NewSubstringComparator("3")}, p("c", "sub")))

	// Several mutations, put and delete, if several columns do not exist.
	require.True(t, cam(IfNotExists(cf, []byte("z")), p("d", "4"), NewDelete(tbl, row).DeleteColumns(cf, qb, LatestTimestamp)))
	r := get(t, c, &Get{Table: tbl, Row: row})
	require.Equal(t, []string{"cam/cf:a=3", "cam/cf:c=sub", "cam/cf:d=4"}, cellStrings(r.Cells, false))

	// A filter condition.
	f := filter.NewSingleColumnValueFilter(cf, []byte("d"), filter.CompareEqual, filter.NewBinaryComparator([]byte("4")))
	require.True(t, cam(IfFilter(f), p("e", "5")))
	f = filter.NewSingleColumnValueFilter(cf, []byte("d"), filter.CompareEqual, filter.NewBinaryComparator([]byte("5")))
	require.False(t, cam(IfFilter(f), p("e", "6")))
	require.Equal(t, []byte("5"), get(t, c, &Get{Table: tbl, Row: row}).Value(cf, []byte("e")))

	// A time range: only cells in it are tested.
	_, err := c.Mutate(ctx(t), NewPut(tbl, []byte("tr")).AddAt(cf, qa, 100, []byte("old")))
	require.NoError(t, err)
	cond := IfEquals(cf, qa, []byte("old"))
	cond.TimeRange = TimeRange{Min: 200}
	require.False(t, cam(cond, NewPut(tbl, []byte("tr")).Add(cf, qb, []byte("x"))))
	cond.TimeRange = TimeRange{Min: 50, Max: 101}
	require.True(t, cam(cond, NewPut(tbl, []byte("tr")).Add(cf, qb, []byte("y"))))

	_, err = c.CheckAndMutate(ctx(t), IfNotExists(cf, qa), NewPut(tbl, []byte("other")).Add(cf, qa, nil), p("a", "x"))
	require.Error(t, err, "mutations of different rows")
}

// preSplit creates a table of 4 regions (split at "r1", "r2", "r3") with n
// rows per region, "rK-NNN", and returns the table and the rows in order.
func preSplit(t *testing.T, c *Client, n int) (string, []string) {
	tbl := newTable(t, c, "r1", "r2", "r3")
	var rows []string
	var actions []Action
	for k := 0; k < 4; k++ {
		for i := 0; i < n; i++ {
			row := fmt.Sprintf("r%d-%03d", k, i)
			rows = append(rows, row)
			actions = append(actions, NewPut(tbl, []byte(row)).Add(cf, qa, []byte(row)).Add(cf2, qb, []byte("x")))
		}
	}
	res, err := c.Batch(ctx(t), actions)
	require.NoError(t, err)
	for i, r := range res {
		require.NoError(t, r.Err, "action %d", i)
	}
	return tbl, rows
}

func TestBatch(t *testing.T) {
	c := newClient(t, nil)
	tbl, _ := preSplit(t, c, 2)
	actions := []Action{
		NewPut(tbl, []byte("r0-new")).Add(cf, qa, []byte("n0")),
		&Get{Table: tbl, Row: []byte("r1-000")},
		NewPut(tbl, []byte("r2-new")).Add([]byte("nofam"), qa, []byte("bad")),
		NewIncrement(tbl, []byte("r3-ctr")).AddInt(cf, qa, 7),
		&Get{Table: tbl, Row: []byte("r3-001"), Columns: []Column{Col("cf", "a")}},
		NewDelete(tbl, []byte("r2-000")),
		NewAppend(tbl, []byte("r1-app")).Add(cf, qa, []byte("ap")),
		&Get{Table: tbl, Row: []byte("r0-new")},
		&Get{Table: "nosuchtable", Row: []byte("x")},
	}
	res, err := c.Batch(ctx(t), actions)
	require.NoError(t, err)
	require.Len(t, res, len(actions))
	for i, r := range res {
		switch i {
		case 2:
			require.True(t, IsException(r.Err, ipc.ClassNoSuchColumnFamilyException), "%v", r.Err)
		case 8:
			require.True(t, IsException(r.Err, ipc.ClassTableNotFoundException), "%v", r.Err)
		default:
			require.NoError(t, r.Err, "action %d", i)
		}
	}
	require.Equal(t, []string{"r1-000/cf:a=r1-000", "r1-000/cf2:b=x"}, cellStrings(res[1].Result.Cells, false))
	v, _ := Int64(res[3].Result.Value(cf, qa))
	require.Equal(t, int64(7), v)
	require.Equal(t, []string{"r3-001/cf:a=r3-001"}, cellStrings(res[4].Result.Cells, false))
	require.Equal(t, []byte("ap"), res[6].Result.Value(cf, qa))
	require.Equal(t, []byte("n0"), res[7].Result.Value(cf, qa), "a get after a put of the same region sees it")
	require.True(t, get(t, c, &Get{Table: tbl, Row: []byte("r2-000")}).Empty(), "deleted")
	require.True(t, get(t, c, &Get{Table: tbl, Row: []byte("r2-new")}).Empty(), "the bad put")
	require.Equal(t, []byte("n0"), get(t, c, &Get{Table: tbl, Row: []byte("r0-new")}).Value(cf, qa))
}

func scanAll(t *testing.T, c *Client, s *Scan) ([]*Result, *Scanner) {
	t.Helper()
	sc := c.Scan(s)
	var out []*Result
	for {
		r, err := sc.Next(ctx(t))
		if err != nil {
			require.ErrorIs(t, err, io.EOF)
			break
		}
		out = append(out, r)
	}
	return out, sc
}

func rowsOf(rs []*Result) []string {
	var out []string
	for _, r := range rs {
		out = append(out, string(r.Row()))
	}
	return out
}

func reversed(s []string) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[len(s)-1-i] = v
	}
	return out
}

func TestScanAcrossRegions(t *testing.T) {
	c := newClient(t, nil)
	tbl, rows := preSplit(t, c, 25)

	for _, caching := range []int{0, 1, 7} {
		rs, sc := scanAll(t, c, &Scan{Table: tbl, Caching: caching, TrackMetrics: true})
		require.Equal(t, rows, rowsOf(rs), "forward, caching %d", caching)
		require.Equal(t, []string{rows[0] + "/cf:a=" + rows[0], rows[0] + "/cf2:b=x"}, cellStrings(rs[0].Cells, false))
		require.Equal(t, int64(len(rows)), sc.Metrics()[MetricRowsScanned])
		rs, _ = scanAll(t, c, &Scan{Table: tbl, Caching: caching, Reversed: true})
		require.Equal(t, reversed(rows), rowsOf(rs), "reversed, caching %d", caching)
	}

	// Start and stop rows, inclusive or not, crossing regions.
	idx := func(r string) int {
		for i, v := range rows {
			if v == r {
				return i
			}
		}
		t.Fatalf("no row %s", r)
		return -1
	}
	a, b := idx("r0-010"), idx("r2-005")
	rs, _ := scanAll(t, c, &Scan{Table: tbl, StartRow: []byte(rows[a]), StopRow: []byte(rows[b])})
	require.Equal(t, rows[a:b], rowsOf(rs))
	rs, _ = scanAll(t, c, &Scan{Table: tbl, StartRow: []byte(rows[a]), StopRow: []byte(rows[b]), StartExclusive: true, StopInclusive: true})
	require.Equal(t, rows[a+1:b+1], rowsOf(rs))
	rs, _ = scanAll(t, c, &Scan{Table: tbl, StartRow: []byte("r1"), StopRow: []byte("r3")})
	require.Equal(t, rows[idx("r1-000"):idx("r3-000")], rowsOf(rs), "stop at a region boundary")
	rs, _ = scanAll(t, c, &Scan{Table: tbl, Reversed: true, StartRow: []byte(rows[b]), StopRow: []byte(rows[a])})
	require.Equal(t, reversed(rows[a+1:b+1]), rowsOf(rs))
	rs, _ = scanAll(t, c, &Scan{Table: tbl, Reversed: true, StartRow: []byte(rows[b]), StopRow: []byte(rows[a]),
		StartExclusive: true, StopInclusive: true})
	require.Equal(t, reversed(rows[a:b]), rowsOf(rs))
	rs, _ = scanAll(t, c, &Scan{Table: tbl, Reversed: true, StartRow: []byte("r2"), StopRow: []byte("r1")})
	require.Equal(t, reversed(rows[idx("r1-000"):idx("r2-000")]), rowsOf(rs), "reversed from a region's start key")

	// Limit across regions, columns, filters.
	rs, _ = scanAll(t, c, &Scan{Table: tbl, StartRow: []byte("r0-020"), Limit: 12, Caching: 5})
	require.Equal(t, rows[20:32], rowsOf(rs))
	rs, _ = scanAll(t, c, &Scan{Table: tbl, Reversed: true, Limit: 30})
	require.Equal(t, reversed(rows)[:30], rowsOf(rs))
	rs, _ = scanAll(t, c, &Scan{Table: tbl, Columns: []Column{Fam("cf2")}, Limit: 1})
	require.Equal(t, []string{rows[0] + "/cf2:b=x"}, cellStrings(rs[0].Cells, false))
	rs, sc := scanAll(t, c, &Scan{Table: tbl, TrackMetrics: true,
		Filter: filter.NewRowFilter(filter.CompareEqual, filter.NewSubstringComparator("-01"))})
	require.Len(t, rs, 40)
	require.Equal(t, int64(100), sc.Metrics()[MetricRowsScanned])
	require.Equal(t, int64(60), sc.Metrics()[MetricRowsFiltered])
	rs, _ = scanAll(t, c, &Scan{Table: tbl, Filter: filter.NewPrefixFilter([]byte("r2-"))})
	require.Equal(t, rows[50:75], rowsOf(rs))
	rs, _ = scanAll(t, c, &Scan{Table: tbl, Reversed: true, Filter: filter.NewFilterList(filter.MustPassAll,
		filter.NewPrefixFilter([]byte("r1-")), filter.NewFirstKeyOnlyFilter())})
	require.Equal(t, reversed(rows[25:50]), rowsOf(rs))
	require.Len(t, rs[0].Cells, 1)

	// Close early closes the server scanner.
	sc = c.Scan(&Scan{Table: tbl, Caching: 2})
	r, err := sc.Next(ctx(t))
	require.NoError(t, err)
	require.Equal(t, rows[0], string(r.Row()))
	require.True(t, sc.open)
	require.NoError(t, sc.Close())
	_, err = sc.Next(ctx(t))
	require.ErrorIs(t, err, io.EOF)
}

func TestScanPartials(t *testing.T) {
	c := newClient(t, nil)
	tbl := newTable(t, c, "m")
	big := bytes.Repeat([]byte("v"), 1000)
	for _, row := range []string{"a", "b", "n", "o"} {
		m := NewPut(tbl, []byte(row))
		for q := 0; q < 20; q++ {
			m.Add(cf, []byte(fmt.Sprintf("q%02d", q)), big)
		}
		_, err := c.Mutate(ctx(t), m)
		require.NoError(t, err)
	}
	// Rows of 20 KB, 4 KB per RPC: the parts are joined.
	rs, _ := scanAll(t, c, &Scan{Table: tbl, MaxResultSize: 4000})
	require.Equal(t, []string{"a", "b", "n", "o"}, rowsOf(rs))
	for _, r := range rs {
		require.Len(t, r.Cells, 20)
		require.False(t, r.Partial)
	}
	rs, _ = scanAll(t, c, &Scan{Table: tbl, MaxResultSize: 4000, Reversed: true})
	require.Equal(t, []string{"o", "n", "b", "a"}, rowsOf(rs))
	require.Len(t, rs[3].Cells, 20)
	// Unless the caller wants the parts.
	rs, _ = scanAll(t, c, &Scan{Table: tbl, MaxResultSize: 4000, AllowPartials: true})
	require.Greater(t, len(rs), 4)
	n := 0
	for _, r := range rs {
		n += len(r.Cells)
	}
	require.Equal(t, 80, n)
	require.True(t, rs[0].Partial)
	// Batch: parts of at most 8 cells.
	rs, _ = scanAll(t, c, &Scan{Table: tbl, Batch: 8})
	require.Len(t, rs, 12)
	require.Len(t, rs[0].Cells, 8)
	require.Len(t, rs[2].Cells, 4)
	require.Equal(t, "b", string(rs[3].Row()))
}

func TestScannerLease(t *testing.T) {
	c := newClient(t, nil)
	tbl, rows := preSplit(t, c, 5)
	sc := c.Scan(&Scan{Table: tbl, Caching: 1})
	defer sc.Close()
	r, err := sc.Next(ctx(t))
	require.NoError(t, err)
	require.Equal(t, rows[0], string(r.Row()))
	// Renewed, it outlives its lease.
	for i := 0; i < 4; i++ {
		time.Sleep(scannerLease / 3)
		require.NoError(t, sc.Renew(ctx(t)))
	}
	r, err = sc.Next(ctx(t))
	require.NoError(t, err)
	require.Equal(t, rows[1], string(r.Row()))
	// Idle longer than the lease, it is gone.
	time.Sleep(scannerLease + scannerLease/2)
	_, err = sc.Next(ctx(t))
	require.True(t, IsException(err, ipc.ClassUnknownScannerException), "%v", err)
}

func TestStaleRegionCache(t *testing.T) {
	c := newClient(t, nil)
	other := newClient(t, nil) // changes the table behind c's back
	tbl, rows := preSplit(t, c, 3)
	require.Equal(t, []byte(rows[4]), get(t, c, &Get{Table: tbl, Row: []byte(rows[4])}).Row())

	require.NoError(t, other.DisableTable(ctx(t), tbl))
	_, err := c.Get(ctx(t), &Get{Table: tbl, Row: []byte(rows[4])})
	require.True(t, IsException(err, ipc.ClassTableNotEnabledException), "%v", err)
	require.NoError(t, other.EnableTable(ctx(t), tbl))
	require.Equal(t, []byte(rows[4]), get(t, c, &Get{Table: tbl, Row: []byte(rows[4])}).Row())

	// Truncation makes new regions: c's cached region names are stale and
	// the server answers NotServingRegionException.
	require.NoError(t, other.DisableTable(ctx(t), tbl))
	require.NoError(t, other.TruncateTable(ctx(t), tbl, true))
	require.True(t, get(t, c, &Get{Table: tbl, Row: []byte(rows[4])}).Empty())
	put(t, c, tbl, rows[4], "a", "again")

	// Recreated with other splits: stale again, for mutations, batches and
	// scans too.
	require.NoError(t, other.DisableTable(ctx(t), tbl))
	require.NoError(t, other.DeleteTable(ctx(t), tbl))
	require.NoError(t, other.CreateTable(ctx(t), TableDescriptor{Name: tbl, Families: []Family{{Name: "cf"}}},
		[][]byte{[]byte("r0-001"), []byte("r2")}))
	put(t, c, tbl, "r1-000", "a", "1")
	require.NoError(t, other.DisableTable(ctx(t), tbl))
	require.NoError(t, other.TruncateTable(ctx(t), tbl, true))
	res, err := c.Batch(ctx(t), []Action{NewPut(tbl, []byte("r0-000")).Add(cf, qa, []byte("0")),
		NewPut(tbl, []byte("r3-000")).Add(cf, qa, []byte("3"))})
	require.NoError(t, err)
	require.NoError(t, res[0].Err)
	require.NoError(t, res[1].Err)
	require.NoError(t, other.DisableTable(ctx(t), tbl))
	require.NoError(t, other.TruncateTable(ctx(t), tbl, true))
	put(t, other, tbl, "r2-000", "a", "2")
	rs, _ := scanAll(t, c, &Scan{Table: tbl, Reversed: true})
	require.Equal(t, []string{"r2-000"}, rowsOf(rs))
}

func TestConnectionOptions(t *testing.T) {
	for _, o := range []struct {
		name string
		mod  func(*Options)
	}{
		{"inline", func(o *Options) { o.NoCellBlocks = true }},
		{"snappy", func(o *Options) { o.Snappy = true }},
	} {
		t.Run(o.name, func(t *testing.T) {
			c := newClient(t, o.mod)
			tbl, rows := preSplit(t, c, 4)
			rs, _ := scanAll(t, c, &Scan{Table: tbl, Caching: 3})
			require.Equal(t, rows, rowsOf(rs))
			rs, _ = scanAll(t, c, &Scan{Table: tbl, Reversed: true})
			require.Equal(t, reversed(rows), rowsOf(rs))
			r := get(t, c, &Get{Table: tbl, Row: []byte(rows[5])})
			require.Equal(t, []string{rows[5] + "/cf:a=" + rows[5], rows[5] + "/cf2:b=x"}, cellStrings(r.Cells, false))

			_, err := c.Mutate(ctx(t), NewDelete(tbl, []byte(rows[5])).DeleteFamily(cf2, LatestTimestamp))
			require.NoError(t, err)
			r = get(t, c, &Get{Table: tbl, Row: []byte(rows[5])})
			require.Equal(t, []string{rows[5] + "/cf:a=" + rows[5]}, cellStrings(r.Cells, false))
			_, err = c.Mutate(ctx(t), NewDelete(tbl, []byte(rows[5])).DeleteColumn(cf, qa, LatestTimestamp))
			require.NoError(t, err)
			require.True(t, get(t, c, &Get{Table: tbl, Row: []byte(rows[5])}).Empty())

			for ts := int64(1); ts <= 3; ts++ {
				_, err = c.Mutate(ctx(t), NewPut(tbl, []byte("rowdel")).AddAt(cf, qa, ts, []byte("v")).AddAt(cf2, qb, ts, []byte("w")))
				require.NoError(t, err)
			}
			m := NewDelete(tbl, []byte("rowdel"))
			m.Timestamp = 2
			_, err = c.Mutate(ctx(t), m)
			require.NoError(t, err)
			r = get(t, c, &Get{Table: tbl, Row: []byte("rowdel"), MaxVersions: 5})
			require.Equal(t, []string{"rowdel/cf:a/3=v", "rowdel/cf2:b/3=w"}, cellStrings(r.Cells, true))

			app, err := c.Mutate(ctx(t), NewAppend(tbl, []byte("rowdel")).Add(cf, qa, []byte("+")))
			require.NoError(t, err)
			require.Equal(t, []byte("v+"), app.Value(cf, qa))

			n, err := c.IncrementColumn(ctx(t), tbl, []byte("ctr"), cf, qa, 3)
			require.NoError(t, err)
			require.Equal(t, int64(3), n)
			ok, err := c.CheckAndMutate(ctx(t), IfNotExists(cf, qb), NewPut(tbl, []byte("ctr")).Add(cf, qb, []byte("b")))
			require.NoError(t, err)
			require.True(t, ok)

			res, err := c.Batch(ctx(t), []Action{
				&Get{Table: tbl, Row: []byte(rows[0])},
				NewPut(tbl, []byte("r3-x")).Add(cf, qa, []byte("x")),
				NewIncrement(tbl, []byte("ctr")).AddInt(cf, qa, 1),
				&Get{Table: tbl, Row: []byte("r3-x")},
			})
			require.NoError(t, err)
			for _, r := range res {
				require.NoError(t, r.Err)
			}
			require.Equal(t, []byte(rows[0]), res[0].Result.Row())
			v, _ := Int64(res[2].Result.Value(cf, qa))
			require.Equal(t, int64(4), v)
			require.Equal(t, []byte("x"), res[3].Result.Value(cf, qa))
		})
	}
}

func TestConcurrentPutGet(t *testing.T) {
	c := newClient(t, nil)
	tbl := newTable(t, c, "k3", "k6")
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 25; i++ {
				row := []byte(fmt.Sprintf("k%d-%02d", (g*25+i)%10, i))
				val := []byte(fmt.Sprintf("v%d-%d", g, i))
				if _, err := c.Mutate(ctx(t), NewPut(tbl, row).Add(cf, []byte(fmt.Sprint(g)), val)); err != nil {
					t.Error(err)
					return
				}
				r, err := c.Get(ctx(t), &Get{Table: tbl, Row: row, Columns: []Column{Col("cf", fmt.Sprint(g))}})
				if err != nil {
					t.Error(err)
					return
				}
				if !bytes.Equal(r.Value(cf, []byte(fmt.Sprint(g))), val) {
					t.Errorf("row %s: got %q, want %q", row, r.Value(cf, []byte(fmt.Sprint(g))), val)
				}
			}
		}()
	}
	wg.Wait()
}

func TestServerRestart(t *testing.T) {
	zk := zkAddr(t)
	dir := t.TempDir()
	root := "/hbase-restart"
	srv, err := startServer(dir, zk, root)
	require.NoError(t, err)
	defer func() { srv.Shutdown(ctx(t)) }()
	c := newClient(t, func(o *Options) { o.ZKRoot = root })
	tbl := newTable(t, c, "m")
	put(t, c, tbl, "a", "a", "1")
	put(t, c, tbl, "x", "a", "2")
	oldAddr := srv.Addr()

	require.NoError(t, srv.Shutdown(ctx(t)))
	srv, err = startServer(dir, zk, root)
	require.NoError(t, err)
	require.NotEqual(t, oldAddr, srv.Addr())

	// The client finds the new server through ZooKeeper.
	require.Equal(t, []byte("2"), get(t, c, &Get{Table: tbl, Row: []byte("x")}).Value(cf, qa))
	put(t, c, tbl, "b", "a", "3")
	rs, _ := scanAll(t, c, &Scan{Table: tbl})
	require.Equal(t, []string{"a", "b", "x"}, rowsOf(rs))
	st, err := c.TableState(ctx(t), tbl)
	require.NoError(t, err)
	require.Equal(t, TableEnabled, st)
	cs, err := c.ClusterStatus(ctx(t))
	require.NoError(t, err)
	require.Equal(t, srv.Addr(), cs.Master)
}

func TestSystemTables(t *testing.T) {
	c := newClient(t, nil)
	tbl := newTable(t, c, "m")
	rs, _ := scanAll(t, c, &Scan{Table: "hbase:meta", StartRow: []byte(tbl + ","), StopRow: []byte(tbl + "\x00"),
		Columns: []Column{Col("info", "server")}})
	require.Len(t, rs, 2)
	require.Equal(t, []byte(env.srv.Addr()), rs[0].Value([]byte("info"), []byte("server")))
	r := get(t, c, &Get{Table: "hbase:namespace", Row: []byte("default")})
	require.False(t, r.Empty())
	require.Equal(t, []byte("info"), r.Cells[0].Family)
}
