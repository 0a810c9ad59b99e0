package server

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/regionkv/regionkv/encoding"
	"github.com/regionkv/regionkv/hbasepb"
	"github.com/regionkv/regionkv/ipc"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
)

func storeFiles(t *testing.T, a *ipc.ClientConn, reg *hbasepb.RegionSpecifier, families ...string) []string {
	t.Helper()
	req := &hbasepb.GetStoreFileRequest{Region: reg}
	for _, f := range families {
		req.Family = append(req.Family, []byte(f))
	}
	resp := &hbasepb.GetStoreFileResponse{}
	call(t, a, "GetStoreFile", req, resp, nil)
	return resp.StoreFile
}

func compactionState(t *testing.T, a *ipc.ClientConn, reg *hbasepb.RegionSpecifier) hbasepb.GetRegionInfoResponse_CompactionState {
	t.Helper()
	resp := &hbasepb.GetRegionInfoResponse{}
	call(t, a, "GetRegionInfo", &hbasepb.GetRegionInfoRequest{Region: reg, CompactionState: proto.Bool(true)}, resp, nil)
	require.NotNil(t, resp.CompactionState)
	return resp.GetCompactionState()
}

func TestAdminService(t *testing.T) {
	// Three flushes below must stay three files until the test's own major
	// compaction: with HBase's default of 3 a minor compaction could merge
	// them first.
	s := testServer(t, t.TempDir(), func(cfg *Config) {
		require.NoError(t, cfg.Set("hbase.hstore.compaction.min", "4"))
	})
	m := dial(t, s, MasterService)
	c := dial(t, s, ClientService)
	a := dial(t, s, AdminService)
	createTable(t, m, "adm", "m")
	regions := metaRegions(t, c, "adm")
	reg := regionSpec(regionFor(regions, "a"))
	hr := s.tableByName(TableName{"default", "adm"}).regions[0]

	// GetRegionInfo, by full and by encoded name.
	ri := &hbasepb.GetRegionInfoResponse{}
	call(t, a, "GetRegionInfo", &hbasepb.GetRegionInfoRequest{Region: reg}, ri, nil)
	require.True(t, proto.Equal(hr.info.PB(), ri.RegionInfo))
	require.Nil(t, ri.CompactionState, "compaction state only when asked")
	call(t, a, "GetRegionInfo", &hbasepb.GetRegionInfoRequest{Region: &hbasepb.RegionSpecifier{
		Type: hbasepb.RegionSpecifier_ENCODED_REGION_NAME.Enum(), Value: []byte(hr.info.EncodedName())}}, ri, nil)
	require.Equal(t, "", string(ri.RegionInfo.GetStartKey()))
	require.Equal(t, hbasepb.GetRegionInfoResponse_NONE, compactionState(t, a, reg))
	_, err := a.Call(context.Background(), "GetRegionInfo", &hbasepb.GetRegionInfoRequest{Region: regionSpec([]byte("nope,,1.x."))}, nil, ri)
	require.Equal(t, ipc.ClassNotServingRegionException, exceptionClass(err))

	// GetOnlineRegion: the catalog and both regions of the table.
	online := &hbasepb.GetOnlineRegionResponse{}
	call(t, a, "GetOnlineRegion", &hbasepb.GetOnlineRegionRequest{}, online, nil)
	var names []string
	for _, r := range online.RegionInfo {
		n, err := regionInfoFromPB(r)
		require.NoError(t, err)
		names = append(names, n.Table.String()+","+string(n.StartKey))
	}
	require.Equal(t, []string{"adm,", "adm,m", "hbase:meta,", "hbase:namespace,"}, names)

	si := &hbasepb.GetServerInfoResponse{}
	call(t, a, "GetServerInfo", &hbasepb.GetServerInfoRequest{}, si, nil)
	require.True(t, proto.Equal(s.serverNamePB(), si.ServerInfo.ServerName))
	require.Equal(t, uint32(s.infoPort()), si.ServerInfo.GetWebuiPort())

	// FlushRegion writes a store file; GetStoreFile lists it.
	require.Empty(t, storeFiles(t, a, reg))
	for i := 0; i < 3; i++ {
		require.NoError(t, putFam(c, reg, "a", "cf", "q", "v", int64(i+1)))
		fr := &hbasepb.FlushRegionResponse{}
		call(t, a, "FlushRegion", &hbasepb.FlushRegionRequest{Region: reg}, fr, nil)
		require.True(t, fr.GetFlushed())
		require.InDelta(t, time.Now().UnixMilli(), int64(fr.GetLastFlushTime()), 10_000)
	}
	files := storeFiles(t, a, reg, "cf")
	require.Len(t, files, 3)
	for _, f := range files {
		require.True(t, strings.HasPrefix(f, filepath.Join(hr.dir, "cf")+"/"), f)
		// Named as HBase's StoreFileInfo expects a store file (no suffix,
		// which HBase would read as a reference).
		require.Regexp(t, `^[0-9a-f]{32}$`, filepath.Base(f))
	}
	fr := &hbasepb.FlushRegionResponse{}
	call(t, a, "FlushRegion", &hbasepb.FlushRegionRequest{Region: reg}, fr, nil)
	require.False(t, fr.GetFlushed(), "nothing to flush")
	// if_older_than_ts: no flush when the last one is newer.
	require.NoError(t, putFam(c, reg, "a", "cf", "q", "v", 9))
	call(t, a, "FlushRegion", &hbasepb.FlushRegionRequest{Region: reg, IfOlderThanTs: proto.Uint64(1)}, fr, nil)
	require.False(t, fr.GetFlushed())
	_, err = a.Call(context.Background(), "FlushRegion", &hbasepb.FlushRegionRequest{Region: reg, Family: []byte("nope")}, nil, fr)
	require.Equal(t, ipc.ClassNoSuchColumnFamilyException, exceptionClass(err))
	_, err = a.Call(context.Background(), "GetStoreFile", &hbasepb.GetStoreFileRequest{Region: reg, Family: [][]byte{[]byte("nope")}}, nil, &hbasepb.GetStoreFileResponse{})
	require.Equal(t, ipc.ClassDoNotRetryIOException, exceptionClass(err))

	// CompactRegion runs in the background; the compaction state says when
	// it is done.
	_, err = a.Call(context.Background(), "CompactRegion", &hbasepb.CompactRegionRequest{Region: reg, Family: []byte("nope")}, nil, &hbasepb.CompactRegionResponse{})
	require.Equal(t, ipc.ClassDoNotRetryIOException, exceptionClass(err))
	call(t, a, "CompactRegion", &hbasepb.CompactRegionRequest{Region: reg, Major: proto.Bool(true), Family: []byte("cf")}, &hbasepb.CompactRegionResponse{}, nil)
	require.Eventually(t, func() bool { return compactionState(t, a, reg) == hbasepb.GetRegionInfoResponse_NONE }, 30*time.Second, 10*time.Millisecond)
	require.Len(t, storeFiles(t, a, reg), 1)
	n, err := getFam(c, reg, "a", "cf")
	require.NoError(t, err)
	require.Equal(t, 3, n, "VERSIONS=3 after the major compaction")

	// RollWALWriter rolls every region's WAL.
	rolls := func(hr *hostedRegion) uint64 { return hr.r.Load().Stats().WAL.Rolls }
	before, metaBefore := rolls(hr), rolls(s.meta)
	roll := &hbasepb.RollWALWriterResponse{}
	call(t, a, "RollWALWriter", &hbasepb.RollWALWriterRequest{}, roll, nil)
	require.Empty(t, roll.RegionToFlush)
	require.Equal(t, before+1, rolls(hr))
	require.Equal(t, metaBefore+1, rolls(s.meta))
	require.NoError(t, putFam(c, reg, "b", "cf", "q", "after roll", encoding.LatestTimestamp))

	// A disabled table's regions are not served.
	call(t, m, "DisableTable", &hbasepb.DisableTableRequest{TableName: tn("default", "adm")}, &hbasepb.DisableTableResponse{}, nil)
	_, err = a.Call(context.Background(), "FlushRegion", &hbasepb.FlushRegionRequest{Region: reg}, nil, fr)
	require.Equal(t, ipc.ClassNotServingRegionException, exceptionClass(err))
	call(t, a, "GetOnlineRegion", &hbasepb.GetOnlineRegionRequest{}, online, nil)
	require.Len(t, online.RegionInfo, 2)
}

func TestFlushTable(t *testing.T) {
	s := testServer(t, t.TempDir(), nil)
	m := dial(t, s, MasterService)
	c := dial(t, s, ClientService)
	a := dial(t, s, AdminService)
	createTable(t, m, "fl", "m")
	regions := metaRegions(t, c, "fl")
	name := tn("default", "fl")
	for _, row := range []string{"a", "z"} {
		require.NoError(t, putFam(c, regionSpec(regionFor(regions, row)), row, "cf", "q", "v", 1))
	}
	require.Empty(t, runProcedure(t, m, "FlushTable", &hbasepb.FlushTableRequest{TableName: name}, &hbasepb.FlushTableResponse{}))
	for _, row := range []string{"a", "z"} {
		require.Len(t, storeFiles(t, a, regionSpec(regionFor(regions, row))), 1, row)
	}
	require.Equal(t, ipc.ClassNoSuchColumnFamilyException, runProcedure(t, m, "FlushTable",
		&hbasepb.FlushTableRequest{TableName: name, ColumnFamily: [][]byte{[]byte("nope")}}, &hbasepb.FlushTableResponse{}))
	require.Equal(t, ipc.ClassTableNotFoundException, runProcedure(t, m, "FlushTable",
		&hbasepb.FlushTableRequest{TableName: tn("default", "nope")}, &hbasepb.FlushTableResponse{}))

	// Clients before 2.6: ExecProcedure flush-table-proc, then IsProcedureDone.
	require.NoError(t, putFam(c, regionSpec(regionFor(regions, "a")), "a", "cf", "q", "v", 2))
	desc := &hbasepb.ProcedureDescription{Signature: proto.String("flush-table-proc"), Instance: proto.String("fl"),
		Configuration: []*hbasepb.NameStringPair{{Name: proto.String("family"), Value: proto.String("cf")}}}
	ex := &hbasepb.ExecProcedureResponse{}
	call(t, m, "ExecProcedure", &hbasepb.ExecProcedureRequest{Procedure: desc}, ex, nil)
	require.Positive(t, ex.GetExpectedTimeout())
	done := &hbasepb.IsProcedureDoneResponse{}
	call(t, m, "IsProcedureDone", &hbasepb.IsProcedureDoneRequest{Procedure: desc}, done, nil)
	require.True(t, done.GetDone())
	require.Len(t, storeFiles(t, a, regionSpec(regionFor(regions, "a"))), 2)
	_, err := m.Call(context.Background(), "ExecProcedure", &hbasepb.ExecProcedureRequest{Procedure: &hbasepb.ProcedureDescription{
		Signature: proto.String("online-snapshot")}}, nil, ex)
	require.Equal(t, ipc.ClassDoNotRetryIOException, exceptionClass(err))

	call(t, m, "DisableTable", &hbasepb.DisableTableRequest{TableName: name}, &hbasepb.DisableTableResponse{}, nil)
	require.Equal(t, ipc.ClassTableNotEnabledException, runProcedure(t, m, "FlushTable",
		&hbasepb.FlushTableRequest{TableName: name}, &hbasepb.FlushTableResponse{}))
}
