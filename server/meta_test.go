package server

import (
	"testing"

	"github.com/regionkv/regionkv/encoding"
	"github.com/regionkv/regionkv/hbasepb"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
)

// TestMetaLookup does the region lookup gohbase does for every row: a
// reversed scan of hbase:meta from "<table>,<key>,:" towards "<table>",
// whose first row must be the region containing key. It depends on meta's
// own ordering (HBase's MetaCellComparator), where a split key below ','
// still sorts by key.
func TestMetaLookup(t *testing.T) {
	s := testServer(t, t.TempDir(), nil)
	m := dial(t, s, MasterService)
	c := dial(t, s, ClientService)
	createTable(t, m, "t", "\x03", "b", "m")
	createTable(t, m, "t2") // a neighbour whose name extends "t"
	lookup := func(table, key string) string {
		resp := &hbasepb.ScanResponse{}
		cb := call(t, c, "Scan", &hbasepb.ScanRequest{Region: regionSpec([]byte("hbase:meta,,1")),
			Scan: &hbasepb.Scan{StartRow: []byte(table + "," + key + ",:"), StopRow: []byte(table),
				Column: []*hbasepb.Column{{Family: []byte("info")}}, Reversed: proto.Bool(true)},
			NumberOfRows: proto.Uint32(1), CloseScanner: proto.Bool(true)}, resp, nil)
		require.Len(t, resp.GetCellsPerResult(), 1, "lookup of %q", key)
		var it encoding.CellBlockIter
		it.Init(cb, false)
		for {
			var kv encoding.KeyValue
			ok, err := it.Next(&kv)
			require.NoError(t, err)
			require.True(t, ok, "no regioninfo cell")
			if string(kv.Qualifier) == "regioninfo" {
				ri := &hbasepb.RegionInfo{}
				require.NoError(t, hbasepb.ParsePB(kv.Value, ri))
				require.Equal(t, table, string(ri.GetTableName().GetQualifier()))
				return string(ri.GetStartKey())
			}
		}
	}
	for key, want := range map[string]string{
		"":             "",
		"\x00":         "",
		"\x02\xff":     "",
		"\x03":         "\x03",
		"\x05":         "\x03",
		"a":            "\x03",
		"b":            "b",
		"c,with,comma": "b",
		"m":            "m",
		"zzz":          "m",
		"\xff\xff":     "m",
	} {
		require.Equal(t, want, lookup("t", key), "region of %q", key)
	}
	require.Equal(t, "", lookup("t2", "anything"))

	// The forward listing gohbase uses to cache every region of a table.
	resp := &hbasepb.ScanResponse{}
	call(t, c, "Scan", &hbasepb.ScanRequest{Region: regionSpec([]byte("hbase:meta,,1")),
		Scan:         &hbasepb.Scan{StartRow: []byte("t,"), StopRow: []byte("t."), Column: []*hbasepb.Column{{Family: []byte("info")}}},
		NumberOfRows: proto.Uint32(100), CloseScanner: proto.Bool(true)}, resp, nil)
	require.Len(t, resp.GetCellsPerResult(), 4, "exactly the 4 regions of t, not t2's")
}
