package server

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/regionkv/regionkv/encoding"
	"github.com/regionkv/regionkv/hbasepb"
	"github.com/regionkv/regionkv/hfile"
	"github.com/regionkv/regionkv/ipc"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
)

// writeHFile writes a put of q=<prefix><row> for each row, of family, to
// path.
func writeHFile(t *testing.T, path, family, prefix string, rows ...string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	f, err := os.Create(path)
	require.NoError(t, err)
	w, err := hfile.NewWriter(f, hfile.WriterOptions{Compression: hfile.CompressionGZ, Encoding: encoding.EncodingFastDiff})
	require.NoError(t, err)
	for _, row := range rows {
		kv := encoding.KeyValue{Row: []byte(row), Family: []byte(family), Qualifier: []byte("q"), Timestamp: 7,
			Type: encoding.TypePut, Value: []byte(prefix + row)}
		require.NoError(t, w.Append(&kv))
	}
	require.NoError(t, w.Close())
	require.NoError(t, f.Close())
}

func letters(from, to byte) []string {
	var out []string
	for c := from; c <= to; c++ {
		out = append(out, string([]byte{c}))
	}
	return out
}

func requireException(t *testing.T, err error, class, contains string) {
	t.Helper()
	e, ok := ipc.AsException(err)
	require.True(t, ok, "want %s, got %v", class, err)
	require.Equal(t, class, e.Class, e.Message)
	require.Contains(t, e.Message, contains)
}

// getFamily reads row's family:q through a raw Get.
func getFamily(t *testing.T, c *ipc.ClientConn, regions []*hbasepb.RegionInfo, row, family string) string {
	t.Helper()
	resp := &hbasepb.GetResponse{}
	cb := call(t, c, "Get", &hbasepb.GetRequest{Region: regionSpec(regionFor(regions, row)),
		Get: &hbasepb.Get{Row: []byte(row), Column: []*hbasepb.Column{{Family: []byte(family)}}}}, resp, nil)
	if resp.GetResult().GetAssociatedCellCount() == 0 {
		return ""
	}
	return firstCellValue(t, cb)
}

// TestBulkLoadRPCs drives PrepareBulkLoad, BulkLoadHFile and
// CleanupBulkLoad with raw requests, as HBase's BulkLoadHFilesTool sends
// them.
func TestBulkLoadRPCs(t *testing.T) {
	dir := t.TempDir()
	s := testServer(t, dir, nil)
	m := dial(t, s, MasterService)
	c := dial(t, s, ClientService)
	ctx := context.Background()
	// Two families, two regions ([, m) and [m, )).
	req := &hbasepb.CreateTableRequest{TableSchema: &hbasepb.TableSchema{
		TableName:      &hbasepb.TableName{Namespace: []byte("default"), Qualifier: []byte("t")},
		ColumnFamilies: []*hbasepb.ColumnFamilySchema{{Name: []byte("cf")}, {Name: []byte("cf2")}},
	}, SplitKeys: [][]byte{[]byte("m")}}
	call(t, m, "CreateTable", req, &hbasepb.CreateTableResponse{}, nil)
	regions := metaRegions(t, c, "t")
	require.Len(t, regions, 2)
	first := regionSpec(regionFor(regions, "a"))

	prep := &hbasepb.PrepareBulkLoadResponse{}
	call(t, c, "PrepareBulkLoad", &hbasepb.PrepareBulkLoadRequest{TableName: req.TableSchema.TableName, Region: first}, prep, nil)
	token := prep.GetBulkToken()
	require.Equal(t, filepath.Join(dir, "staging"), filepath.Dir(token))
	require.True(t, strings.HasPrefix(filepath.Base(token), "t__"), token)
	st, err := os.Stat(token)
	require.NoError(t, err)
	require.True(t, st.IsDir())
	_, err = c.Call(ctx, "PrepareBulkLoad", &hbasepb.PrepareBulkLoadRequest{
		TableName: &hbasepb.TableName{Namespace: []byte("default"), Qualifier: []byte("nope")}}, nil, &hbasepb.PrepareBulkLoadResponse{})
	requireException(t, err, ipc.ClassTableNotFoundException, "nope")

	load := func(spec *hbasepb.RegionSpecifier, tok string, fps ...*hbasepb.BulkLoadHFileRequest_FamilyPath) (bool, error) {
		resp := &hbasepb.BulkLoadHFileResponse{}
		_, err := c.Call(ctx, "BulkLoadHFile", &hbasepb.BulkLoadHFileRequest{Region: spec, FamilyPath: fps,
			AssignSeqNum: proto.Bool(true), BulkToken: proto.String(tok)}, nil, resp)
		return resp.GetLoaded(), err
	}
	fp := func(family, path string) *hbasepb.BulkLoadHFileRequest_FamilyPath {
		return &hbasepb.BulkLoadHFileRequest_FamilyPath{Family: []byte(family), Path: proto.String(path)}
	}

	// Both families at once, from the staging directory, one as a file:
	// URI. The files move into the stores.
	pa, pb := filepath.Join(token, "cf", "a"), filepath.Join(token, "cf2", "b")
	writeHFile(t, pa, "cf", "one-", letters('a', 'l')...)
	writeHFile(t, pb, "cf2", "two-", letters('b', 'k')...)
	ok, err := load(first, token, fp("cf", "file://"+pa), fp("cf2", pb))
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, "one-c", getFamily(t, c, regions, "c", "cf"))
	require.Equal(t, "two-c", getFamily(t, c, regions, "c", "cf2"))
	for _, p := range []string{pa, pb} {
		_, err := os.Stat(p)
		require.True(t, os.IsNotExist(err), "%s was moved into its store", p)
	}

	// A file that straddles the region's end: HBase answers loaded=false
	// (its WrongRegionException is recoverable: the client splits the
	// file again), and nothing is loaded, in either family.
	straddle, other := filepath.Join(token, "cf", "s"), filepath.Join(token, "cf2", "o")
	writeHFile(t, straddle, "cf", "s-", "b", "n", "z")
	writeHFile(t, other, "cf2", "o-", "a")
	ok, err = load(first, token, fp("cf2", other), fp("cf", straddle))
	require.NoError(t, err)
	require.False(t, ok)
	require.Equal(t, "", getFamily(t, c, regions, "a", "cf2"))
	require.Equal(t, "one-b", getFamily(t, c, regions, "b", "cf"))
	_, err = os.Stat(straddle)
	require.NoError(t, err, "a refused file stays")

	// Refusals, each with HBase's exception, none loading anything.
	junk := filepath.Join(token, "cf", "junk")
	require.NoError(t, os.WriteFile(junk, []byte(strings.Repeat("not an hfile", 100)), 0o644))
	_, err = load(first, token, fp("cf2", other), fp("cf", junk))
	requireException(t, err, classCorruptHFile, junk)
	_, err = load(first, token, fp("cf2", other), fp("nope", other))
	requireException(t, err, ipc.ClassDoNotRetryIOException, "No such column family nope")
	_, err = load(first, token, fp("cf", other)) // cells of cf2
	requireException(t, err, classInvalidHFile, "of family")
	_, err = load(first, token, fp("cf", filepath.Join(token, "missing")))
	requireException(t, err, classFileNotFound, "missing")
	_, err = load(first, token, fp("cf", "hdfs://nn:8020/x/y"))
	requireException(t, err, ipc.ClassDoNotRetryIOException, "only local paths")
	_, err = load(first, token, fp("cf", "relative/path"))
	requireException(t, err, ipc.ClassDoNotRetryIOException, "must be absolute")
	_, err = load(first, "/etc", fp("cf2", other))
	requireException(t, err, ipc.ClassDoNotRetryIOException, "not a staging directory")
	_, err = load(first, token)
	requireException(t, err, ipc.ClassDoNotRetryIOException, "names no files")
	_, err = load(regionSpec([]byte("t,zz,1.nope.")), token, fp("cf2", other))
	requireException(t, err, ipc.ClassNotServingRegionException, "")
	_, err = load(regionSpec([]byte("hbase:meta,,1")), token, fp("cf2", other))
	requireException(t, err, ipc.ClassDoNotRetryIOException, "takes no bulk loads")
	require.Equal(t, "", getFamily(t, c, regions, "a", "cf2"))

	// HBase's own file (family cf, rows aaa..aay), without a token, copied.
	fixture, err := filepath.Abs(filepath.Join("..", "hfile", "testdata", "v3-gz-rowbloom-25cells.hfile"))
	require.NoError(t, err)
	resp := &hbasepb.BulkLoadHFileResponse{}
	call(t, c, "BulkLoadHFile", &hbasepb.BulkLoadHFileRequest{Region: first, FamilyPath: []*hbasepb.BulkLoadHFileRequest_FamilyPath{fp("cf", fixture)},
		CopyFile: proto.Bool(true)}, resp, nil)
	require.True(t, resp.GetLoaded())
	require.Equal(t, "aam", getFamily(t, c, regions, "aam", "cf"))

	// Into the second region, then restart: everything is still there.
	second := filepath.Join(token, "cf", "second")
	writeHFile(t, second, "cf", "2nd-", letters('m', 'z')...)
	ok, err = load(regionSpec(regionFor(regions, "x")), token, fp("cf", second))
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, "2nd-x", getFamily(t, c, regions, "x", "cf"))

	call(t, c, "CleanupBulkLoad", &hbasepb.CleanupBulkLoadRequest{BulkToken: proto.String(token), Region: first},
		&hbasepb.CleanupBulkLoadResponse{}, nil)
	_, err = os.Stat(token)
	require.True(t, os.IsNotExist(err), "cleanup removes the staging directory")
	// Again: a directory already gone is no error, as in HBase.
	call(t, c, "CleanupBulkLoad", &hbasepb.CleanupBulkLoadRequest{BulkToken: proto.String(token)}, &hbasepb.CleanupBulkLoadResponse{}, nil)
	_, err = c.Call(ctx, "CleanupBulkLoad", &hbasepb.CleanupBulkLoadRequest{BulkToken: proto.String(dir)}, nil, &hbasepb.CleanupBulkLoadResponse{})
	requireException(t, err, ipc.ClassDoNotRetryIOException, "not a staging directory")
	_, err = os.Stat(filepath.Join(dir, "data"))
	require.NoError(t, err, "a bad token removes nothing")

	require.NoError(t, s.Shutdown(ctx))
	s = testServer(t, dir, nil)
	c = dial(t, s, ClientService)
	for row, want := range map[string]string{"a": "one-a", "aam": "aam", "x": "2nd-x"} {
		require.Equal(t, want, getFamily(t, c, regions, row, "cf"), row)
	}
	require.Equal(t, "two-k", getFamily(t, c, regions, "k", "cf2"))
	// Compacted, still there.
	for _, ri := range regions {
		r, _ := regionInfoFromPB(ri)
		hr := s.regions[string(r.RegionName())]
		require.NoError(t, hr.r.Load().Compact(true))
	}
	for i, row := range letters('a', 'z') {
		want := "one-" + row
		if row >= "m" {
			want = "2nd-" + row
		}
		require.Equal(t, want, getFamily(t, c, regions, row, "cf"), fmt.Sprint(i))
	}
}
