package server

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/regionkv/regionkv/encoding"
	"github.com/regionkv/regionkv/hbasepb"
	"github.com/regionkv/regionkv/ipc"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
)

// testServer starts a server in dir without ZooKeeper, on free ports.
func testServer(t *testing.T, dir string, mod func(*Config)) *Server {
	t.Helper()
	cfg := Config{DataDir: dir, Port: 0, portSet: true, InfoPort: 0, infoPortSet: true,
		Logger: slog.New(slog.DiscardHandler)}
	if mod != nil {
		mod(&cfg)
	}
	s, err := Start(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { s.Shutdown(context.Background()) })
	return s
}

func dial(t *testing.T, s *Server, service string) *ipc.ClientConn {
	t.Helper()
	c, err := ipc.Dial(context.Background(), s.Addr(), ipc.DialOptions{Service: service})
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

func call(t *testing.T, c *ipc.ClientConn, method string, req, resp proto.Message, cells []byte) []byte {
	t.Helper()
	cb, err := c.Call(context.Background(), method, req, cells, resp)
	require.NoError(t, err, method)
	return cb
}

func createTable(t *testing.T, m *ipc.ClientConn, name string, splits ...string) {
	t.Helper()
	req := &hbasepb.CreateTableRequest{TableSchema: &hbasepb.TableSchema{
		TableName: &hbasepb.TableName{Namespace: []byte("default"), Qualifier: []byte(name)},
		ColumnFamilies: []*hbasepb.ColumnFamilySchema{{Name: []byte("cf"),
			Attributes: []*hbasepb.BytesBytesPair{{First: []byte("VERSIONS"), Second: []byte("3")}}}},
	}}
	for _, s := range splits {
		req.SplitKeys = append(req.SplitKeys, []byte(s))
	}
	resp := &hbasepb.CreateTableResponse{}
	call(t, m, "CreateTable", req, resp, nil)
	pr := &hbasepb.GetProcedureResultResponse{}
	call(t, m, "getProcedureResult", &hbasepb.GetProcedureResultRequest{ProcId: resp.ProcId}, pr, nil)
	require.Equal(t, hbasepb.GetProcedureResultResponse_FINISHED, pr.GetState())
	require.Nil(t, pr.Exception)
}

func regionSpec(name []byte) *hbasepb.RegionSpecifier {
	return &hbasepb.RegionSpecifier{Type: hbasepb.RegionSpecifier_REGION_NAME.Enum(), Value: name}
}

// metaRegions scans hbase:meta for the regions of table, in meta order.
func metaRegions(t *testing.T, c *ipc.ClientConn, table string) []*hbasepb.RegionInfo {
	t.Helper()
	resp := &hbasepb.ScanResponse{}
	cb := call(t, c, "Scan", &hbasepb.ScanRequest{Region: regionSpec([]byte("hbase:meta,,1")),
		Scan: &hbasepb.Scan{StartRow: []byte(table + ","), StopRow: []byte(table + ",\xff"),
			Column: []*hbasepb.Column{{Family: []byte("info")}}},
		NumberOfRows: proto.Uint32(100), CloseScanner: proto.Bool(true)}, resp, nil)
	var out []*hbasepb.RegionInfo
	var it encoding.CellBlockIter
	it.Init(cb, false)
	for _, n := range resp.GetCellsPerResult() {
		for i := uint32(0); i < n; i++ {
			var kv encoding.KeyValue
			ok, err := it.Next(&kv)
			require.NoError(t, err)
			require.True(t, ok)
			if string(kv.Qualifier) == "regioninfo" {
				ri := &hbasepb.RegionInfo{}
				require.NoError(t, hbasepb.ParsePB(kv.Value, ri))
				out = append(out, ri)
			}
		}
	}
	return out
}

func putCells(row string, cells ...[2]string) (*hbasepb.MutationProto, []byte) {
	var cb []byte
	for _, c := range cells {
		kv := encoding.KeyValue{Row: []byte(row), Family: []byte("cf"), Qualifier: []byte(c[0]),
			Timestamp: encoding.LatestTimestamp, Type: encoding.TypePut, Value: []byte(c[1])}
		cb = encoding.AppendCellBlock(cb, &kv, false)
	}
	return &hbasepb.MutationProto{Row: []byte(row), MutateType: hbasepb.MutationProto_PUT.Enum(),
		AssociatedCellCount: proto.Int32(int32(len(cells)))}, cb
}

func regionFor(regions []*hbasepb.RegionInfo, row string) []byte {
	for _, ri := range regions {
		r, _ := regionInfoFromPB(ri)
		if r.ContainsRow([]byte(row)) {
			return r.RegionName()
		}
	}
	return nil
}

func getValue(t *testing.T, c *ipc.ClientConn, regions []*hbasepb.RegionInfo, row, q string) (string, bool) {
	t.Helper()
	resp := &hbasepb.GetResponse{}
	cb := call(t, c, "Get", &hbasepb.GetRequest{Region: regionSpec(regionFor(regions, row)),
		Get: &hbasepb.Get{Row: []byte(row), Column: []*hbasepb.Column{{Family: []byte("cf"), Qualifier: [][]byte{[]byte(q)}}}}}, resp, nil)
	if resp.GetResult().GetAssociatedCellCount() == 0 {
		return "", false
	}
	return firstCellValue(t, cb), true
}

// firstCellValue returns the value of the first cell of the cellblock cb,
// which must hold one.
func firstCellValue(t *testing.T, cb []byte) string {
	t.Helper()
	var it encoding.CellBlockIter
	it.Init(cb, false)
	var kv encoding.KeyValue
	ok, err := it.Next(&kv)
	require.NoError(t, err)
	require.True(t, ok)
	return string(kv.Value)
}

func TestServerEndToEnd(t *testing.T) {
	dir := t.TempDir()
	s := testServer(t, dir, nil)
	m := dial(t, s, MasterService)
	c := dial(t, s, ClientService)

	createTable(t, m, "t1", "b", "m", "\x03")
	regions := metaRegions(t, c, "t1")
	require.Len(t, regions, 4, "a table with 3 split keys has 4 regions, all in meta")
	var starts []string
	for _, ri := range regions {
		starts = append(starts, string(ri.GetStartKey()))
	}
	require.Equal(t, []string{"", "\x03", "b", "m"}, starts, "meta orders regions by start key (meta comparator)")

	// Puts into every region, with cells in the cellblock as gohbase sends them.
	rows := []string{"\x01", "a", "c", "z"}
	for _, row := range rows {
		mp, cb := putCells(row, [2]string{"q", "v-" + row})
		call(t, c, "Mutate", &hbasepb.MutateRequest{Region: regionSpec(regionFor(regions, row)), Mutation: mp},
			&hbasepb.MutateResponse{}, cb)
	}
	for _, row := range rows {
		v, ok := getValue(t, c, regions, row, "q")
		require.True(t, ok, row)
		require.Equal(t, "v-"+row, v)
	}

	// A put to the wrong region is refused with HBase's exception.
	mp, cb := putCells("z", [2]string{"q", "x"})
	_, err := c.Call(context.Background(), "Mutate", &hbasepb.MutateRequest{Region: regionSpec(regionFor(regions, "a")), Mutation: mp}, cb, &hbasepb.MutateResponse{})
	e, ok := ipc.AsException(err)
	require.True(t, ok, "%v", err)
	require.Equal(t, classWrongRegion, e.Class)

	// So is a get of a row another region holds (not an empty result).
	_, err = c.Call(context.Background(), "Get", &hbasepb.GetRequest{Region: regionSpec(regionFor(regions, "a")),
		Get: &hbasepb.Get{Row: []byte("z")}}, nil, &hbasepb.GetResponse{})
	e, ok = ipc.AsException(err)
	require.True(t, ok, "%v", err)
	require.Equal(t, classWrongRegion, e.Class)

	// Unknown family, unknown region.
	kv := encoding.KeyValue{Row: []byte("a"), Family: []byte("nope"), Qualifier: []byte("q"), Timestamp: encoding.LatestTimestamp, Type: encoding.TypePut, Value: []byte("x")}
	_, err = c.Call(context.Background(), "Mutate", &hbasepb.MutateRequest{Region: regionSpec(regionFor(regions, "a")),
		Mutation: &hbasepb.MutationProto{Row: []byte("a"), MutateType: hbasepb.MutationProto_PUT.Enum(), AssociatedCellCount: proto.Int32(1)}},
		encoding.AppendCellBlock(nil, &kv, false), &hbasepb.MutateResponse{})
	e, ok = ipc.AsException(err)
	require.True(t, ok, "%v", err)
	require.Equal(t, ipc.ClassNoSuchColumnFamilyException, e.Class)
	_, err = c.Call(context.Background(), "Get", &hbasepb.GetRequest{Region: regionSpec([]byte("nope,,1.x.")), Get: &hbasepb.Get{Row: []byte("a")}}, nil, &hbasepb.GetResponse{})
	e, ok = ipc.AsException(err)
	require.True(t, ok, "%v", err)
	require.Equal(t, ipc.ClassNotServingRegionException, e.Class)

	// Increment returns one 8-byte cell.
	inc := encoding.KeyValue{Row: []byte("c"), Family: []byte("cf"), Qualifier: []byte("n"), Timestamp: encoding.LatestTimestamp,
		Type: encoding.TypePut, Value: binary.BigEndian.AppendUint64(nil, 5)}
	for i := 0; i < 3; i++ {
		resp := &hbasepb.MutateResponse{}
		cb := call(t, c, "Mutate", &hbasepb.MutateRequest{Region: regionSpec(regionFor(regions, "c")),
			Mutation: &hbasepb.MutationProto{Row: []byte("c"), MutateType: hbasepb.MutationProto_INCREMENT.Enum(), AssociatedCellCount: proto.Int32(1)}},
			resp, encoding.AppendCellBlock(nil, &inc, false))
		require.EqualValues(t, 1, resp.GetResult().GetAssociatedCellCount())
		var it encoding.CellBlockIter
		it.Init(cb, false)
		var got encoding.KeyValue
		ok, err := it.Next(&got)
		require.NoError(t, err)
		require.True(t, ok)
		require.EqualValues(t, 5*(i+1), binary.BigEndian.Uint64(got.Value))
	}

	// Check-and-put "if not exists" with a NullComparator, then with a value.
	cmp, err := proto.Marshal(&hbasepb.NullComparator{})
	require.NoError(t, err)
	mp, _ = putCells("c", [2]string{"guard", "set"})
	mp.AssociatedCellCount = nil
	mp.ColumnValue = []*hbasepb.MutationProto_ColumnValue{{Family: []byte("cf"),
		QualifierValue: []*hbasepb.MutationProto_ColumnValue_QualifierValue{{Qualifier: []byte("guard"), Value: []byte("set")}}}}
	cond := &hbasepb.Condition{Row: []byte("c"), Family: []byte("cf"), Qualifier: []byte("guard"),
		CompareType: hbasepb.CompareType_EQUAL.Enum(),
		Comparator:  &hbasepb.Comparator{Name: proto.String("org.apache.hadoop.hbase.filter.NullComparator"), SerializedComparator: cmp}}
	for i, want := range []bool{true, false} {
		resp := &hbasepb.MutateResponse{}
		call(t, c, "Mutate", &hbasepb.MutateRequest{Region: regionSpec(regionFor(regions, "c")), Mutation: mp, Condition: cond}, resp, nil)
		require.NotNil(t, resp.Processed, "processed must be present")
		require.Equal(t, want, resp.GetProcessed(), "attempt %d", i)
	}

	// Multi across regions with one bad action.
	var mcb []byte
	req := &hbasepb.MultiRequest{}
	for i, row := range []string{"a", "c", "z"} {
		mp, cb := putCells(row, [2]string{"multi", fmt.Sprint(i)})
		mcb = append(mcb, cb...)
		ra := &hbasepb.RegionAction{Region: regionSpec(regionFor(regions, row)), Action: []*hbasepb.Action{{Index: proto.Uint32(uint32(2*i + 1)), Mutation: mp}}}
		if row == "c" {
			bad := encoding.KeyValue{Row: []byte("c"), Family: []byte("nope"), Qualifier: []byte("q"), Timestamp: encoding.LatestTimestamp, Type: encoding.TypePut}
			mcb = encoding.AppendCellBlock(mcb, &bad, false)
			ra.Action = append(ra.Action, &hbasepb.Action{Index: proto.Uint32(99), Mutation: &hbasepb.MutationProto{Row: []byte("c"),
				MutateType: hbasepb.MutationProto_PUT.Enum(), AssociatedCellCount: proto.Int32(1)}})
			ra.Action = append(ra.Action, &hbasepb.Action{Index: proto.Uint32(100), Get: &hbasepb.Get{Row: []byte("c"),
				Column: []*hbasepb.Column{{Family: []byte("cf"), Qualifier: [][]byte{[]byte("multi")}}}}})
		}
		req.RegionAction = append(req.RegionAction, ra)
	}
	mresp := &hbasepb.MultiResponse{}
	rcb := call(t, c, "Multi", req, mresp, mcb)
	require.Len(t, mresp.RegionActionResult, 3)
	mid := mresp.RegionActionResult[1].GetResultOrException()
	require.Len(t, mid, 3)
	require.Nil(t, mid[0].Exception)
	require.Equal(t, ipc.ClassNoSuchColumnFamilyException, mid[1].GetException().GetName())
	require.EqualValues(t, 1, mid[2].GetResult().GetAssociatedCellCount(), "the get after the put sees it")
	var it encoding.CellBlockIter
	it.Init(rcb, false)
	var got encoding.KeyValue
	ok, err = it.Next(&got)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, "1", string(got.Value))
	for _, row := range []string{"a", "z"} {
		_, ok := getValue(t, c, regions, row, "multi")
		require.True(t, ok, row)
	}

	// Metrics page.
	res, err := http.Get("http://" + s.InfoAddr() + "/metrics")
	require.NoError(t, err)
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	for _, name := range []string{"hbase_regionserver_regionCount 6", "hbase_regionserver_writeRequestCount", "hbase_regionserver_bloomFilterErrorCount", "hbase_regionserver_offHeapUsedBytes", "hbase_regionserver_offHeapChunkBytes", "hbase_regionserver_call_seconds_bucket{method=\"Multi\""} {
		require.Contains(t, string(body), name)
	}

	// Restart: tables, regions and data survive.
	require.NoError(t, s.Shutdown(context.Background()))
	s2 := testServer(t, dir, nil)
	c2 := dial(t, s2, ClientService)
	regions2 := metaRegions(t, c2, "t1")
	require.Len(t, regions2, 4)
	for _, row := range rows {
		v, ok := getValue(t, c2, regions2, row, "q")
		require.True(t, ok, row)
		require.Equal(t, "v-"+row, v)
	}
}

// scanRows decodes a scan response's cellblock into one string per result:
// "row=value" of its first cell.
func scanRows(t *testing.T, resp *hbasepb.ScanResponse, cb []byte) []string {
	t.Helper()
	require.Equal(t, len(resp.GetCellsPerResult()), len(resp.GetPartialFlagPerResult()))
	var it encoding.CellBlockIter
	it.Init(cb, false)
	var out []string
	for _, n := range resp.GetCellsPerResult() {
		var first string
		for i := uint32(0); i < n; i++ {
			var kv encoding.KeyValue
			ok, err := it.Next(&kv)
			require.NoError(t, err)
			require.True(t, ok)
			if i == 0 {
				first = string(kv.Row) + "=" + string(kv.Value)
			}
		}
		out = append(out, first)
	}
	return out
}

func TestServerScanAndLeases(t *testing.T) {
	s := testServer(t, t.TempDir(), func(c *Config) { c.ScannerTimeout = 400 * time.Millisecond })
	m := dial(t, s, MasterService)
	c := dial(t, s, ClientService)
	createTable(t, m, "scans")
	regions := metaRegions(t, c, "scans")
	reg := regionSpec(regionFor(regions, "r"))
	for i := 0; i < 50; i++ {
		mp, cb := putCells(fmt.Sprintf("r%02d", i), [2]string{"q", fmt.Sprint(i)})
		call(t, c, "Mutate", &hbasepb.MutateRequest{Region: reg, Mutation: mp}, &hbasepb.MutateResponse{}, cb)
	}
	open := func(scan *hbasepb.Scan, rows uint32) (*hbasepb.ScanResponse, []string) {
		resp := &hbasepb.ScanResponse{}
		cb := call(t, c, "Scan", &hbasepb.ScanRequest{Region: reg, Scan: scan, NumberOfRows: proto.Uint32(rows),
			ClientHandlesPartials: proto.Bool(true), ClientHandlesHeartbeats: proto.Bool(true), TrackScanMetrics: proto.Bool(true)}, resp, nil)
		return resp, scanRows(t, resp, cb)
	}
	next := func(id uint64, rows uint32) (*hbasepb.ScanResponse, []string, error) {
		resp := &hbasepb.ScanResponse{}
		cb, err := c.Call(context.Background(), "Scan", &hbasepb.ScanRequest{ScannerId: proto.Uint64(id), NumberOfRows: proto.Uint32(rows)}, nil, resp)
		if err != nil {
			return nil, nil, err
		}
		return resp, scanRows(t, resp, cb), nil
	}

	// Forward, in pages of 20.
	resp, got := open(&hbasepb.Scan{}, 20)
	require.Len(t, got, 20)
	require.Equal(t, "r00=0", got[0])
	require.True(t, resp.GetMoreResultsInRegion())
	id := resp.GetScannerId()
	var all []string
	all = append(all, got...)
	for {
		resp, got, err := next(id, 20)
		require.NoError(t, err)
		all = append(all, got...)
		if !resp.GetMoreResultsInRegion() {
			require.True(t, resp.GetMoreResults(), "the region is done, not the scan")
			break
		}
	}
	require.Len(t, all, 50)
	// The exhausted scanner is closed, and remembered as HBase 2's
	// closedScanners: a late next or close gets an empty response with
	// only the scanner id, not an error.
	for _, req := range []*hbasepb.ScanRequest{
		{ScannerId: proto.Uint64(id), NumberOfRows: proto.Uint32(1), NextCallSeq: proto.Uint64(3)},
		{ScannerId: proto.Uint64(id), CloseScanner: proto.Bool(true)},
	} {
		late := &hbasepb.ScanResponse{}
		_, err := c.Call(context.Background(), "Scan", req, nil, late)
		require.NoError(t, err)
		require.True(t, proto.Equal(&hbasepb.ScanResponse{ScannerId: proto.Uint64(id)}, late), "%v", late)
	}
	// A scanner the server never had (or whose lease ran out) is unknown,
	// for a next and a close alike.
	for _, closeIt := range []bool{false, true} {
		_, err := c.Call(context.Background(), "Scan",
			&hbasepb.ScanRequest{ScannerId: proto.Uint64(id + 1), CloseScanner: proto.Bool(closeIt)}, nil, &hbasepb.ScanResponse{})
		e, ok := ipc.AsException(err)
		require.True(t, ok, "%v", err)
		require.Equal(t, ipc.ClassUnknownScannerException, e.Class)
	}

	// Reversed from r10 down to r05 (stop exclusive).
	_, got = open(&hbasepb.Scan{StartRow: []byte("r10"), StopRow: []byte("r05"), Reversed: proto.Bool(true)}, 100)
	require.Equal(t, []string{"r10=10", "r09=9", "r08=8", "r07=7", "r06=6"}, got)

	// Metrics with a filter: of the 20 rows scanned, the values containing
	// "1" (1 and 10..19) pass and 9 are filtered.
	sub, err := proto.Marshal(&hbasepb.SubstringComparator{Substr: proto.String("1")})
	require.NoError(t, err)
	vf, err := proto.Marshal(&hbasepb.ValueFilter{CompareFilter: &hbasepb.CompareFilter{CompareOp: hbasepb.CompareType_EQUAL.Enum(),
		Comparator: &hbasepb.Comparator{Name: proto.String("org.apache.hadoop.hbase.filter.SubstringComparator"), SerializedComparator: sub}}})
	require.NoError(t, err)
	resp, got = open(&hbasepb.Scan{StopRow: []byte("r20"), Filter: &hbasepb.Filter{Name: proto.String("org.apache.hadoop.hbase.filter.ValueFilter"), SerializedFilter: vf}}, 100)
	require.Len(t, got, 11)
	metricsByName := map[string]int64{}
	for _, nv := range resp.GetScanMetrics().GetMetrics() {
		metricsByName[nv.GetName()] = nv.GetValue()
	}
	require.EqualValues(t, 20, metricsByName["ROWS_SCANNED"])
	require.EqualValues(t, 9, metricsByName["ROWS_FILTERED"])

	// Lease expiry, and renewal keeping a scanner alive.
	resp, _ = open(&hbasepb.Scan{}, 1)
	idle := resp.GetScannerId()
	resp, _ = open(&hbasepb.Scan{}, 1)
	renewed := resp.GetScannerId()
	for i := 0; i < 8; i++ {
		time.Sleep(100 * time.Millisecond)
		call(t, c, "Scan", &hbasepb.ScanRequest{ScannerId: proto.Uint64(renewed), Renew: proto.Bool(true)}, &hbasepb.ScanResponse{}, nil)
	}
	_, _, err = next(idle, 1)
	e, ok := ipc.AsException(err)
	require.True(t, ok, "%v", err)
	require.Equal(t, ipc.ClassUnknownScannerException, e.Class)
	_, got, err = next(renewed, 1)
	require.NoError(t, err)
	require.Equal(t, []string{"r01=1"}, got)
	require.Eventually(t, func() bool { return s.scanners.count() == 0 }, 5*time.Second, 20*time.Millisecond,
		"the reaper closes expired scanners")
}

func TestTableNames(t *testing.T) {
	s := testServer(t, t.TempDir(), nil)
	m := dial(t, s, MasterService)
	createTable(t, m, "alpha")
	createTable(t, m, "beta")
	list := func(req *hbasepb.GetTableNamesRequest) []string {
		resp := &hbasepb.GetTableNamesResponse{}
		call(t, m, "GetTableNames", req, resp, nil)
		var out []string
		for _, tn := range resp.GetTableNames() {
			out = append(out, string(tn.GetNamespace())+":"+string(tn.GetQualifier()))
		}
		return out
	}
	require.Equal(t, []string{"default:alpha", "default:beta"}, list(&hbasepb.GetTableNamesRequest{}))
	require.Equal(t, []string{"default:alpha", "default:beta", "hbase:meta", "hbase:namespace"},
		list(&hbasepb.GetTableNamesRequest{IncludeSysTables: proto.Bool(true)}))
	require.Equal(t, []string{"hbase:meta"},
		list(&hbasepb.GetTableNamesRequest{Regex: proto.String(".*meta.*"), IncludeSysTables: proto.Bool(true), Namespace: proto.String("hbase")}))
	require.Equal(t, []string{"default:beta"}, list(&hbasepb.GetTableNamesRequest{Regex: proto.String("b.*")}))
	_, err := m.Call(context.Background(), "CreateTable", &hbasepb.CreateTableRequest{TableSchema: &hbasepb.TableSchema{
		TableName:      &hbasepb.TableName{Namespace: []byte("default"), Qualifier: []byte("alpha")},
		ColumnFamilies: []*hbasepb.ColumnFamilySchema{{Name: []byte("cf")}}}}, nil, &hbasepb.CreateTableResponse{})
	e, ok := ipc.AsException(err)
	require.True(t, ok, "%v", err)
	require.Equal(t, ipc.ClassTableExistsException, e.Class)
	require.True(t, strings.Contains(e.Message, "alpha"))
}
