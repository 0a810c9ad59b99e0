package server

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/regionkv/regionkv/encoding"
	"github.com/regionkv/regionkv/hbasepb"
	"github.com/regionkv/regionkv/ipc"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
)

// procResp is a response that carries a procedure id.
type procResp interface {
	proto.Message
	GetProcId() uint64
}

// runProcedure makes a call that starts a procedure and returns the
// exception class it ended with ("" for none): from the call itself (the
// checks HBase makes before the procedure runs) or from getProcedureResult.
func runProcedure(t *testing.T, m *ipc.ClientConn, method string, req proto.Message, resp procResp) string {
	t.Helper()
	if _, err := m.Call(context.Background(), method, req, nil, resp); err != nil {
		e, ok := ipc.AsException(err)
		require.True(t, ok, "%s: %v", method, err)
		return e.Class
	}
	pr := &hbasepb.GetProcedureResultResponse{}
	call(t, m, "getProcedureResult", &hbasepb.GetProcedureResultRequest{ProcId: proto.Uint64(resp.GetProcId())}, pr, nil)
	require.Equal(t, hbasepb.GetProcedureResultResponse_FINISHED, pr.GetState(), method)
	if pr.Exception != nil {
		return pr.GetException().GetGenericException().GetClassName()
	}
	return ""
}

func exceptionClass(err error) string {
	if err == nil {
		return ""
	}
	if e, ok := ipc.AsException(err); ok {
		return e.Class
	}
	return err.Error()
}

func tn(ns, q string) *hbasepb.TableName {
	return &hbasepb.TableName{Namespace: []byte(ns), Qualifier: []byte(q)}
}

func tableSchema(t *testing.T, m *ipc.ClientConn, name *hbasepb.TableName) *hbasepb.TableSchema {
	t.Helper()
	resp := &hbasepb.GetTableDescriptorsResponse{}
	call(t, m, "GetTableDescriptors", &hbasepb.GetTableDescriptorsRequest{TableNames: []*hbasepb.TableName{name}}, resp, nil)
	require.Len(t, resp.TableSchema, 1)
	return resp.TableSchema[0]
}

func familyNamesOf(ts *hbasepb.TableSchema) []string {
	var out []string
	for _, cf := range ts.GetColumnFamilies() {
		out = append(out, string(cf.GetName()))
	}
	return out
}

func attr(cf *hbasepb.ColumnFamilySchema, k string) string {
	for _, a := range cf.GetAttributes() {
		if string(a.GetFirst()) == k {
			return string(a.GetSecond())
		}
	}
	return ""
}

// putFam writes row/family:q=v through Mutate.
func putFam(c *ipc.ClientConn, reg *hbasepb.RegionSpecifier, row, family, q, v string, ts int64) error {
	kv := encoding.KeyValue{Row: []byte(row), Family: []byte(family), Qualifier: []byte(q), Timestamp: ts,
		Type: encoding.TypePut, Value: []byte(v)}
	cb := encoding.AppendCellBlock(nil, &kv, false)
	mp := &hbasepb.MutationProto{Row: []byte(row), MutateType: hbasepb.MutationProto_PUT.Enum(), AssociatedCellCount: proto.Int32(1)}
	_, err := c.Call(context.Background(), "Mutate", &hbasepb.MutateRequest{Region: reg, Mutation: mp}, cb, &hbasepb.MutateResponse{})
	return err
}

// getFam returns how many cells a Get of row/family (up to 10 versions)
// finds, or the call's error.
func getFam(c *ipc.ClientConn, reg *hbasepb.RegionSpecifier, row, family string) (int, error) {
	resp := &hbasepb.GetResponse{}
	_, err := c.Call(context.Background(), "Get", &hbasepb.GetRequest{Region: reg, Get: &hbasepb.Get{Row: []byte(row),
		Column: []*hbasepb.Column{{Family: []byte(family)}}, MaxVersions: proto.Uint32(10)}}, nil, resp)
	return int(resp.GetResult().GetAssociatedCellCount()), err
}

func TestAlterTable(t *testing.T) {
	dir := t.TempDir()
	s := testServer(t, dir, nil)
	m := dial(t, s, MasterService)
	c := dial(t, s, ClientService)
	createTable(t, m, "alt")
	name := tn("default", "alt")
	reg := regionSpec(regionFor(metaRegions(t, c, "alt"), "a"))
	for ts := int64(1); ts <= 3; ts++ {
		require.NoError(t, putFam(c, reg, "a", "cf", "q", "v", ts))
	}

	// AddColumn: writable at once, in the descriptor.
	require.Empty(t, runProcedure(t, m, "AddColumn", &hbasepb.AddColumnRequest{TableName: name,
		ColumnFamilies: cfSchema("cf2", "VERSIONS", "2", "COMPRESSION", "GZ")}, &hbasepb.AddColumnResponse{}))
	require.NoError(t, putFam(c, reg, "a", "cf2", "q", "x", 1))
	require.NoError(t, putFam(c, reg, "a", "cf2", "q", "x", 2))
	require.NoError(t, putFam(c, reg, "a", "cf2", "q", "x", 3))
	n, err := getFam(c, reg, "a", "cf2")
	require.NoError(t, err)
	require.Equal(t, 2, n, "VERSIONS=2 of the new family")
	require.Equal(t, []string{"cf", "cf2"}, familyNamesOf(tableSchema(t, m, name)))

	// ModifyColumn: VERSIONS applies to reads at once.
	n, _ = getFam(c, reg, "a", "cf")
	require.Equal(t, 3, n)
	require.Empty(t, runProcedure(t, m, "ModifyColumn", &hbasepb.ModifyColumnRequest{TableName: name,
		ColumnFamilies: cfSchema("cf", "VERSIONS", "1", "MIN_VERSIONS", "1", "DATA_BLOCK_ENCODING", "FAST_DIFF")}, &hbasepb.ModifyColumnResponse{}))
	n, _ = getFam(c, reg, "a", "cf")
	require.Equal(t, 1, n)
	cf := tableSchema(t, m, name).GetColumnFamilies()[0]
	require.Equal(t, "1", attr(cf, "VERSIONS"))
	require.Equal(t, "FAST_DIFF", attr(cf, "DATA_BLOCK_ENCODING"))
	hr := s.tableByName(TableName{"default", "alt"}).regions[0]
	require.Equal(t, encoding.EncodingFastDiff, hr.r.Load().Store("cf").Options().Encoding)
	require.Equal(t, 1, hr.r.Load().Store("cf").Options().MinVersions)

	// Refusals, with HBase's classes, straight from the call.
	for _, tc := range []struct {
		method string
		req    proto.Message
		resp   procResp
		class  string
	}{
		{"AddColumn", &hbasepb.AddColumnRequest{TableName: name, ColumnFamilies: cfSchema("cf2")}, &hbasepb.AddColumnResponse{}, ipc.ClassInvalidFamilyOperation},
		{"ModifyColumn", &hbasepb.ModifyColumnRequest{TableName: name, ColumnFamilies: cfSchema("nope")}, &hbasepb.ModifyColumnResponse{}, ipc.ClassInvalidFamilyOperation},
		{"DeleteColumn", &hbasepb.DeleteColumnRequest{TableName: name, ColumnName: []byte("nope")}, &hbasepb.DeleteColumnResponse{}, ipc.ClassInvalidFamilyOperation},
		{"AddColumn", &hbasepb.AddColumnRequest{TableName: tn("default", "missing"), ColumnFamilies: cfSchema("x")}, &hbasepb.AddColumnResponse{}, ipc.ClassTableNotFoundException},
		{"AddColumn", &hbasepb.AddColumnRequest{TableName: name, ColumnFamilies: cfSchema("x", "VERSIONS", "0")}, &hbasepb.AddColumnResponse{}, ipc.ClassDoNotRetryIOException},
		{"AddColumn", &hbasepb.AddColumnRequest{TableName: name, ColumnFamilies: cfSchema("x", "COMPRESSION", "LZO")}, &hbasepb.AddColumnResponse{}, ipc.ClassDoNotRetryIOException},
		{"AddColumn", &hbasepb.AddColumnRequest{TableName: name, ColumnFamilies: cfSchema("x", "DATA_BLOCK_ENCODING", "DIFF")}, &hbasepb.AddColumnResponse{}, ipc.ClassDoNotRetryIOException},
		{"ModifyColumn", &hbasepb.ModifyColumnRequest{TableName: name, ColumnFamilies: cfSchema("cf", "VERSIONS", "1", "MIN_VERSIONS", "2")}, &hbasepb.ModifyColumnResponse{}, ipc.ClassDoNotRetryIOException},
		{"ModifyTable", &hbasepb.ModifyTableRequest{TableName: name, TableSchema: &hbasepb.TableSchema{TableName: name}}, &hbasepb.ModifyTableResponse{}, ipc.ClassDoNotRetryIOException},
		{"ModifyTable", &hbasepb.ModifyTableRequest{TableName: name, TableSchema: &hbasepb.TableSchema{TableName: tn("default", "other"),
			ColumnFamilies: []*hbasepb.ColumnFamilySchema{cfSchema("cf")}}}, &hbasepb.ModifyTableResponse{}, ipc.ClassDoNotRetryIOException},
		{"AddColumn", &hbasepb.AddColumnRequest{TableName: tn("hbase", "meta"), ColumnFamilies: cfSchema("x")}, &hbasepb.AddColumnResponse{}, ipc.ClassDoNotRetryIOException},
	} {
		require.Equal(t, tc.class, runProcedure(t, m, tc.method, tc.req, tc.resp), "%s %v", tc.method, tc.req)
	}

	// DeleteColumn: its cells are unreadable at once, its directory gone.
	regionDir := hr.dir
	require.DirExists(t, filepath.Join(regionDir, "cf2"))
	require.Empty(t, runProcedure(t, m, "DeleteColumn", &hbasepb.DeleteColumnRequest{TableName: name, ColumnName: []byte("cf2")},
		&hbasepb.DeleteColumnResponse{}))
	_, err = getFam(c, reg, "a", "cf2")
	require.Equal(t, ipc.ClassNoSuchColumnFamilyException, exceptionClass(err))
	require.Equal(t, ipc.ClassNoSuchColumnFamilyException, exceptionClass(putFam(c, reg, "a", "cf2", "q", "x", 9)))
	require.NoDirExists(t, filepath.Join(regionDir, "cf2"))
	require.Equal(t, ipc.ClassInvalidFamilyOperation, runProcedure(t, m, "DeleteColumn",
		&hbasepb.DeleteColumnRequest{TableName: name, ColumnName: []byte("cf")}, &hbasepb.DeleteColumnResponse{}), "the only family")

	// ModifyTable: families added and removed at once, table attributes kept.
	ts := tableSchema(t, m, name)
	ts.Attributes = append(ts.Attributes, &hbasepb.BytesBytesPair{First: []byte("OWNER"), Second: []byte("me")})
	ts.ColumnFamilies = append(ts.ColumnFamilies, cfSchema("cf2"), cfSchema("cf3", "TTL", "3600"))
	require.Empty(t, runProcedure(t, m, "ModifyTable", &hbasepb.ModifyTableRequest{TableName: name, TableSchema: ts}, &hbasepb.ModifyTableResponse{}))
	n, err = getFam(c, reg, "a", "cf2")
	require.NoError(t, err)
	require.Zero(t, n, "a family added again starts empty")
	require.NoError(t, putFam(c, reg, "b", "cf3", "q", "y", encoding.LatestTimestamp))

	// Everything survives a restart.
	require.NoError(t, s.Shutdown(context.Background()))
	s = testServer(t, dir, nil)
	m = dial(t, s, MasterService)
	c = dial(t, s, ClientService)
	ts = tableSchema(t, m, name)
	require.Equal(t, []string{"cf", "cf2", "cf3"}, familyNamesOf(ts))
	require.Equal(t, "me", func() string {
		for _, a := range ts.GetAttributes() {
			if string(a.GetFirst()) == "OWNER" {
				return string(a.GetSecond())
			}
		}
		return ""
	}())
	n, _ = getFam(c, reg, "a", "cf")
	require.Equal(t, 1, n)
	n, _ = getFam(c, reg, "a", "cf2")
	require.Zero(t, n)
	n, _ = getFam(c, reg, "b", "cf3")
	require.Equal(t, 1, n)
	hr = s.tableByName(TableName{"default", "alt"}).regions[0]
	require.Equal(t, 3600*time.Second, hr.r.Load().Store("cf3").Options().TTL)
}

// TestAlterRollsForward: a crash after the new descriptor was written but
// before the regions changed is finished by the next start, and an alter
// of a disabled table applies when it is enabled.
func TestAlterRollsForward(t *testing.T) {
	dir := t.TempDir()
	s := testServer(t, dir, nil)
	m := dial(t, s, MasterService)
	c := dial(t, s, ClientService)
	createTable(t, m, "fwd")
	name := tn("default", "fwd")
	require.Empty(t, runProcedure(t, m, "AddColumn", &hbasepb.AddColumnRequest{TableName: name, ColumnFamilies: cfSchema("old")}, &hbasepb.AddColumnResponse{}))
	reg := regionSpec(regionFor(metaRegions(t, c, "fwd"), "a"))
	require.NoError(t, putFam(c, reg, "a", "old", "q", "v", 1))
	hr := s.tableByName(TableName{"default", "fwd"}).regions[0]

	// The alter's first step alone: the descriptor without "old".
	ts := tableSchema(t, m, name)
	ts.ColumnFamilies = ts.ColumnFamilies[:1]
	b, err := proto.Marshal(ts)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(s.tableDir(TableName{"default", "fwd"}), ".tabledesc"), b, 0o644))
	require.NoError(t, s.Shutdown(context.Background()))
	require.DirExists(t, filepath.Join(hr.dir, "old"))

	s = testServer(t, dir, nil)
	m = dial(t, s, MasterService)
	c = dial(t, s, ClientService)
	require.Equal(t, []string{"cf"}, familyNamesOf(tableSchema(t, m, name)))
	require.NoDirExists(t, filepath.Join(hr.dir, "old"))
	_, err = getFam(c, reg, "a", "old")
	require.Equal(t, ipc.ClassNoSuchColumnFamilyException, exceptionClass(err))

	// Disabled: the descriptor changes now, the region when enabled.
	call(t, m, "DisableTable", &hbasepb.DisableTableRequest{TableName: name}, &hbasepb.DisableTableResponse{}, nil)
	require.Empty(t, runProcedure(t, m, "AddColumn", &hbasepb.AddColumnRequest{TableName: name, ColumnFamilies: cfSchema("old")}, &hbasepb.AddColumnResponse{}))
	call(t, m, "EnableTable", &hbasepb.EnableTableRequest{TableName: name}, &hbasepb.EnableTableResponse{}, nil)
	n, err := getFam(c, reg, "a", "old")
	require.NoError(t, err)
	require.Zero(t, n, "the family deleted before comes back empty")
	require.NoError(t, putFam(c, reg, "a", "old", "q", "v2", 1))
}

// TestAlterUnderTraffic adds and deletes a family over and over while
// connections write, read and flush the table (run it with -race): every
// call either works or, for the churning family, gets
// NoSuchColumnFamilyException; the stable family's data is whole.
func TestAlterUnderTraffic(t *testing.T) {
	s := testServer(t, t.TempDir(), nil)
	m := dial(t, s, MasterService)
	c := dial(t, s, ClientService)
	createTable(t, m, "busy")
	name := tn("default", "busy")
	reg := regionSpec(regionFor(metaRegions(t, c, "busy"), "a"))
	adm := dial(t, s, AdminService)
	var ok, refused, stable atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := 0; w < 3; w++ {
		conn := dial(t, s, ClientService)
		admConn := dial(t, s, AdminService)
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if err := putFam(conn, reg, "stable", "cf", string(rune('a'+w))+string(rune('0'+i%10)), "v", int64(i+1)); err != nil {
					t.Errorf("stable put: %v", err)
					return
				}
				stable.Add(1)
				var err error
				switch i % 3 {
				case 0:
					err = putFam(conn, reg, "r", "churn", "q", "v", encoding.LatestTimestamp)
				case 1:
					_, err = getFam(conn, reg, "r", "churn")
				default:
					_, err = admConn.Call(context.Background(), "FlushRegion", &hbasepb.FlushRegionRequest{Region: reg}, nil, &hbasepb.FlushRegionResponse{})
				}
				switch {
				case err == nil:
					ok.Add(1)
				case exceptionClass(err) == ipc.ClassNoSuchColumnFamilyException:
					refused.Add(1)
				default:
					t.Errorf("writer %d: %v", w, err)
					return
				}
			}
		}(w)
	}
	deadline := time.Now().Add(time.Second)
	rounds := 0
	for time.Now().Before(deadline) {
		require.Empty(t, runProcedure(t, m, "AddColumn", &hbasepb.AddColumnRequest{TableName: name, ColumnFamilies: cfSchema("churn")}, &hbasepb.AddColumnResponse{}))
		call(t, adm, "FlushRegion", &hbasepb.FlushRegionRequest{Region: reg}, &hbasepb.FlushRegionResponse{}, nil)
		require.Empty(t, runProcedure(t, m, "DeleteColumn", &hbasepb.DeleteColumnRequest{TableName: name, ColumnName: []byte("churn")}, &hbasepb.DeleteColumnResponse{}))
		rounds++
	}
	close(stop)
	wg.Wait()
	t.Logf("%d add/delete rounds; %d calls served, %d refused, %d stable puts", rounds, ok.Load(), refused.Load(), stable.Load())
	require.Positive(t, ok.Load())
	n, err := getFam(c, reg, "stable", "cf")
	require.NoError(t, err)
	require.Positive(t, n)
}
