package server

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/blockcache"
	"github.com/regionkv/regionkv/encoding"
	"github.com/regionkv/regionkv/filter"
	"github.com/regionkv/regionkv/hbasepb"
	"github.com/regionkv/regionkv/hfile"
	"github.com/regionkv/regionkv/ipc"
	"github.com/regionkv/regionkv/region"
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

// TestErrorClasses: each region error mark reaches the client as the
// exception class HBase raises for it.
func TestErrorClasses(t *testing.T) {
	for _, tc := range []struct {
		err   error
		class string
	}{
		{errors.Wrap(region.ErrNoSuchFamily, "x"), ipc.ClassNoSuchColumnFamilyException},
		{errors.Mark(errors.New("field is not a long"), region.ErrInvalidArgument), ipc.ClassDoNotRetryIOException},
		{errors.Wrap(filter.ErrBadFilter, "x"), ipc.ClassDoNotRetryIOException},
		{errors.Wrap(hfile.ErrUnsupportedCompression, "lzo"), ipc.ClassDoNotRetryIOException},
		{errors.Mark(errors.New("checksum mismatch"), encoding.ErrCorruption), classCorruptHFile},
		{errors.Wrap(region.ErrRegionTooBusy, "x"), ipc.ClassRegionTooBusyException},
		{region.ErrClosed, ipc.ClassNotServingRegionException},
		{region.ErrRowLockTimeout, "java.io.IOException"},
		{errors.Wrap(region.ErrWALFailed, "no space"), ipc.ClassIOException},
		{errors.New("anything else"), ipc.ClassIOException},
	} {
		e, ok := ipc.AsException(mapError(tc.err, nil))
		require.True(t, ok)
		require.Equal(t, tc.class, e.Class, "%v", tc.err)
		require.Contains(t, e.Message, tc.err.Error())
	}
	already := &ipc.Exception{Class: ipc.ClassTableNotFoundException, Message: "t"}
	require.Same(t, already, mapError(already, nil))
}

// TestErrorClassesLive: an Increment of a cell that is not 8 bytes is a
// DoNotRetryIOException, and a read of a damaged store file block is a
// CorruptHFileException, from a running server.
func TestErrorClassesLive(t *testing.T) {
	s := testServer(t, t.TempDir(), func(c *Config) {
		c.BlockCache = blockcache.DefaultOptions()
		c.BlockCache.Fraction = 0 // every read goes to the file
	})
	m := dial(t, s, MasterService)
	c := dial(t, s, ClientService)
	createTable(t, m, "errs")
	name := regionFor(metaRegions(t, c, "errs"), "r")
	reg := regionSpec(name)
	mp, cb := putCells("r", [2]string{"q", "abc"})
	call(t, c, "Mutate", &hbasepb.MutateRequest{Region: reg, Mutation: mp}, &hbasepb.MutateResponse{}, cb)

	inc := encoding.KeyValue{Row: []byte("r"), Family: []byte("cf"), Qualifier: []byte("q"), Timestamp: encoding.LatestTimestamp,
		Type: encoding.TypePut, Value: binary.BigEndian.AppendUint64(nil, 1)}
	_, err := c.Call(context.Background(), "Mutate", &hbasepb.MutateRequest{Region: reg,
		Mutation: &hbasepb.MutationProto{Row: []byte("r"), MutateType: hbasepb.MutationProto_INCREMENT.Enum(), AssociatedCellCount: proto.Int32(1)}},
		encoding.AppendCellBlock(nil, &inc, false), &hbasepb.MutateResponse{})
	e, ok := ipc.AsException(err)
	require.True(t, ok, "%v", err)
	require.Equal(t, ipc.ClassDoNotRetryIOException, e.Class)
	require.Contains(t, e.Message, "not a long")

	_, r, err := s.lookupRegion(reg)
	require.NoError(t, err)
	require.NoError(t, r.Flush())
	files := r.Store("cf").Files()
	require.Len(t, files, 1)
	f, err := os.OpenFile(files[0].Path, os.O_RDWR, 0)
	require.NoError(t, err)
	b := make([]byte, 1)
	_, err = f.ReadAt(b, 40) // inside the first data block, past its 33-byte header
	require.NoError(t, err)
	b[0] ^= 0xff
	_, err = f.WriteAt(b, 40)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	_, err = c.Call(context.Background(), "Get", &hbasepb.GetRequest{Region: reg, Get: &hbasepb.Get{Row: []byte("r")}}, nil, &hbasepb.GetResponse{})
	e, ok = ipc.AsException(err)
	require.True(t, ok, "%v", err)
	require.Equal(t, classCorruptHFile, e.Class, e.Message)
}

// TestGlobalMemstoreLimit: hbase.regionserver.global.memstore.size bounds
// the memstores of every user region together: past its lower limit the
// largest region is flushed though it is far below its own flush size.
func TestGlobalMemstoreLimit(t *testing.T) {
	s := testServer(t, t.TempDir(), func(c *Config) {
		require.NoError(t, c.Set("regionkv.memory.budget", "16m"))
		require.NoError(t, c.Set("hbase.regionserver.global.memstore.size", "0.1")) // 1.6 MiB
	})
	m := dial(t, s, MasterService)
	c := dial(t, s, ClientService)
	createTable(t, m, "global")
	reg := regionSpec(regionFor(metaRegions(t, c, "global"), "r"))
	val := string(make([]byte, 4000))
	for i := 0; i < 400; i++ {
		mp, cb := putCells(fmt.Sprintf("r%03d", i), [2]string{"q", val})
		call(t, c, "Mutate", &hbasepb.MutateRequest{Region: reg, Mutation: mp}, &hbasepb.MutateResponse{}, cb)
	}
	_, r, err := s.lookupRegion(reg)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return r.Stats().Flushes > 0 }, 10*time.Second, 10*time.Millisecond)
	st := s.memLimit.Stats()
	require.EqualValues(t, 1677721, st.Upper)
	require.Greater(t, st.Flushes, int64(0))
	require.LessOrEqual(t, st.Used, st.Upper)
}
