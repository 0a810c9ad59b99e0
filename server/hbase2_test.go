package server

import (
	"fmt"
	"testing"

	"github.com/regionkv/regionkv/hbasepb"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
)

// TestTableNamesEmptyRegex: a regex field that is set but empty is a
// pattern, as HBase compiles it whenever the field is present: it matches
// no table name. Unset, every table is listed.
func TestTableNamesEmptyRegex(t *testing.T) {
	s := testServer(t, t.TempDir(), nil)
	m := dial(t, s, MasterService)
	createTable(t, m, "alpha")
	names := &hbasepb.GetTableNamesResponse{}
	call(t, m, "GetTableNames", &hbasepb.GetTableNamesRequest{Regex: proto.String("")}, names, nil)
	require.Empty(t, names.GetTableNames())
	call(t, m, "GetTableNames", &hbasepb.GetTableNamesRequest{Regex: proto.String(""), IncludeSysTables: proto.Bool(true)}, names, nil)
	require.Empty(t, names.GetTableNames())
	call(t, m, "GetTableNames", &hbasepb.GetTableNamesRequest{}, names, nil)
	require.Len(t, names.GetTableNames(), 1)
	descs := &hbasepb.GetTableDescriptorsResponse{}
	call(t, m, "GetTableDescriptors", &hbasepb.GetTableDescriptorsRequest{Regex: proto.String("")}, descs, nil)
	require.Empty(t, descs.GetTableSchema())
	call(t, m, "GetTableDescriptors", &hbasepb.GetTableDescriptorsRequest{Regex: proto.String("al.*")}, descs, nil)
	require.Len(t, descs.GetTableSchema(), 1)
	call(t, m, "GetTableDescriptors", &hbasepb.GetTableDescriptorsRequest{}, descs, nil)
	require.Len(t, descs.GetTableSchema(), 1)
}

// TestScanMetricsCountAsHBase: ROWS_SCANNED and ROWS_FILTERED as HBase's
// RegionScannerImpl counts them.
func TestScanMetricsCountAsHBase(t *testing.T) {
	s := testServer(t, t.TempDir(), nil)
	m := dial(t, s, MasterService)
	c := dial(t, s, ClientService)
	createTable(t, m, "metrics")
	reg := regionSpec(regionFor(metaRegions(t, c, "metrics"), "r"))
	for i := 0; i < 50; i++ {
		mp, cb := putCells(fmt.Sprintf("r%02d", i), [2]string{"q", fmt.Sprint(i)})
		call(t, c, "Mutate", &hbasepb.MutateRequest{Region: reg, Mutation: mp}, &hbasepb.MutateResponse{}, cb)
	}
	scan := func(sc *hbasepb.Scan) (rows int, scanned, filtered int64) {
		resp := &hbasepb.ScanResponse{}
		cb := call(t, c, "Scan", &hbasepb.ScanRequest{Region: reg, Scan: sc, NumberOfRows: proto.Uint32(100),
			TrackScanMetrics: proto.Bool(true)}, resp, nil)
		for _, nv := range resp.GetScanMetrics().GetMetrics() {
			switch nv.GetName() {
			case "ROWS_SCANNED":
				scanned = nv.GetValue()
			case "ROWS_FILTERED":
				filtered = nv.GetValue()
			}
		}
		require.False(t, resp.GetMoreResultsInRegion())
		return len(scanRows(t, resp, cb)), scanned, filtered
	}
	pf, err := proto.Marshal(&hbasepb.PrefixFilter{Prefix: []byte("r1")})
	require.NoError(t, err)
	prefix := &hbasepb.Filter{Name: proto.String("org.apache.hadoop.hbase.filter.PrefixFilter"), SerializedFilter: pf}

	// From the prefix: r10..r19 pass; r20's key is rejected and the
	// filter is done, so r20 counts as filtered but not as scanned.
	rows, scanned, filtered := scan(&hbasepb.Scan{StartRow: []byte("r1"), Filter: prefix})
	require.Equal(t, 10, rows)
	require.EqualValues(t, 10, scanned)
	require.EqualValues(t, 1, filtered)
	// From the start: r00's first cell seeks to the prefix (HBase 2.6's
	// PrefixFilter hint), leaving r00 empty (scanned and filtered), then
	// as above.
	rows, scanned, filtered = scan(&hbasepb.Scan{Filter: prefix})
	require.Equal(t, 10, rows)
	require.EqualValues(t, 11, scanned)
	require.EqualValues(t, 2, filtered)
	// No filter, but no cell of any row in the time range: every row is
	// scanned and filtered.
	rows, scanned, filtered = scan(&hbasepb.Scan{TimeRange: &hbasepb.TimeRange{From: proto.Uint64(0), To: proto.Uint64(1)}})
	require.Zero(t, rows)
	require.EqualValues(t, 50, scanned)
	require.EqualValues(t, 50, filtered)
	// Nor of a column no row has.
	rows, scanned, filtered = scan(&hbasepb.Scan{Column: []*hbasepb.Column{{Family: []byte("cf"), Qualifier: [][]byte{[]byte("nosuch")}}}})
	require.Zero(t, rows)
	require.EqualValues(t, 50, scanned)
	require.EqualValues(t, 50, filtered)
}
