package integration

import (
	"testing"

	"github.com/regionkv/regionkv/client"
	"github.com/regionkv/regionkv/filter"
	"github.com/regionkv/regionkv/hbasepb"
	"github.com/regionkv/regionkv/ipc"
	"google.golang.org/protobuf/proto"
)

// TestClosedScannerLateCalls: against a live server, raw requests as an
// older HBase client sends them: after the scan is exhausted (the server
// closes the scanner) one more next and a close get an empty ScanResponse
// with the scanner id, not UnknownScannerException.
func TestClosedScannerLateCalls(t *testing.T) {
	p := sharedServer(t)
	c := newClient(t, p)
	const tbl = "closedscanners"
	fill500(t, c, tbl)
	ctx := testCtx(t, 30e9)
	regions, err := c.Regions(ctx, tbl)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := ipc.Dial(ctx, p.addr, ipc.DialOptions{Service: "ClientService"})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	spec := &hbasepb.RegionSpecifier{Type: hbasepb.RegionSpecifier_REGION_NAME.Enum(), Value: regions[0].Name}
	first := &hbasepb.ScanResponse{}
	if _, err := conn.Call(ctx, "Scan", &hbasepb.ScanRequest{Region: spec, Scan: &hbasepb.Scan{},
		NumberOfRows: proto.Uint32(1000)}, nil, first); err != nil {
		t.Fatal(err)
	}
	if first.GetMoreResultsInRegion() || len(first.GetCellsPerResult()) != 125 {
		t.Fatalf("first call: %d rows, moreResultsInRegion %v; want the region's 125 rows and the scanner closed",
			len(first.GetCellsPerResult()), first.GetMoreResultsInRegion())
	}
	id := first.GetScannerId()
	for _, req := range []*hbasepb.ScanRequest{
		{ScannerId: proto.Uint64(id), NumberOfRows: proto.Uint32(100), NextCallSeq: proto.Uint64(1)},
		{ScannerId: proto.Uint64(id), CloseScanner: proto.Bool(true)},
	} {
		late := &hbasepb.ScanResponse{}
		if _, err := conn.Call(ctx, "Scan", req, nil, late); err != nil {
			t.Fatalf("late call %v: %v", req, err)
		}
		if !proto.Equal(late, &hbasepb.ScanResponse{ScannerId: proto.Uint64(id)}) {
			t.Fatalf("late call %v: got %v, want an empty response with the scanner id", req, late)
		}
	}
	_, err = conn.Call(ctx, "Scan", &hbasepb.ScanRequest{ScannerId: proto.Uint64(id ^ 1)}, nil, &hbasepb.ScanResponse{})
	if !client.IsException(err, ipc.ClassUnknownScannerException) {
		t.Fatalf("a scanner the server never had: %v, want UnknownScannerException", err)
	}
}

// TestTableNamesEmptyPattern: through the client and raw requests, a set
// but empty pattern lists no table.
func TestTableNamesEmptyPattern(t *testing.T) {
	p := sharedServer(t)
	c := newClient(t, p)
	createTable(t, c, client.TableDescriptor{Name: "emptypattern", Families: fams("cf")})
	ctx := testCtx(t, 30e9)
	conn, err := ipc.Dial(ctx, p.addr, ipc.DialOptions{Service: "MasterService"})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	resp := &hbasepb.GetTableNamesResponse{}
	if _, err := conn.Call(ctx, "GetTableNames", &hbasepb.GetTableNamesRequest{Regex: proto.String("")}, nil, resp); err != nil {
		t.Fatal(err)
	}
	if len(resp.GetTableNames()) != 0 {
		t.Fatalf("regex \"\": %v, want no table", resp.GetTableNames())
	}
	all, err := c.ListTableNames(ctx, "", false, "")
	if err != nil || len(all) == 0 {
		t.Fatalf("no regex: %v, %v; want every table", all, err)
	}
}

// TestScanMetricsPrefixStops: a PrefixFilter scan from its prefix counts
// the rows of the prefix as scanned and the one that ends it as filtered
// only, as HBase does.
func TestScanMetricsPrefixStops(t *testing.T) {
	c := sharedClient(t)
	const tbl = "prefixmetrics"
	fill500(t, c, tbl)
	rs, m := scanAllMetrics(t, c, &client.Scan{Table: tbl, TrackMetrics: true, StartRow: []byte("row-01"),
		Filter: filter.NewPrefixFilter([]byte("row-01"))})
	if len(rs) != 10 || m[client.MetricRowsScanned] != 10 || m[client.MetricRowsFiltered] != 1 {
		t.Fatalf("prefix scan: %d rows, metrics %v; want 10 rows, 10 scanned, 1 filtered", len(rs), m)
	}
}

// TestErrorClassIncrement: an Increment of a cell that is not 8 bytes is a
// DoNotRetryIOException, which a client does not retry.
func TestErrorClassIncrement(t *testing.T) {
	c := sharedClient(t)
	const tbl = "notalong"
	createTable(t, c, client.TableDescriptor{Name: tbl, Families: fams("cf")})
	ctx := testCtx(t, 30e9)
	if _, err := c.Mutate(ctx, client.NewPut(tbl, []byte("r")).Add([]byte("cf"), []byte("q"), []byte("abc"))); err != nil {
		t.Fatal(err)
	}
	_, err := c.IncrementColumn(ctx, tbl, []byte("r"), []byte("cf"), []byte("q"), 1)
	if !client.IsException(err, ipc.ClassDoNotRetryIOException) {
		t.Fatalf("increment of a 3-byte cell: %v, want DoNotRetryIOException", err)
	}
}
