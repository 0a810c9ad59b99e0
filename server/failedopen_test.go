package server

import (
	"bytes"
	"context"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/regionkv/regionkv/hbasepb"
	"github.com/regionkv/regionkv/ipc"
	"github.com/stretchr/testify/require"
)

// metaState returns the info:state of region's row in hbase:meta.
func metaState(t *testing.T, c *ipc.ClientConn, regionName []byte) string {
	t.Helper()
	resp := &hbasepb.GetResponse{}
	cb := call(t, c, "Get", &hbasepb.GetRequest{Region: regionSpec([]byte("hbase:meta,,1")),
		Get: &hbasepb.Get{Row: regionName, Column: []*hbasepb.Column{{Family: []byte("info"), Qualifier: [][]byte{[]byte("state")}}}}}, resp, nil)
	if resp.GetResult().GetAssociatedCellCount() == 0 {
		return ""
	}
	return firstCellValue(t, cb)
}

// storeFilesUnder returns the store files (not references or links) of the
// region whose encoded name is encoded, under dir.
func storeFilesUnder(t *testing.T, dir, encoded string) []string {
	t.Helper()
	var out []string
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.Contains(p, string(filepath.Separator)+encoded+string(filepath.Separator)+"cf"+string(filepath.Separator)) {
			out = append(out, p)
		}
		return nil
	}))
	return out
}

// twoRegions starts a server in dir with a table split at "m" and the rows
// "a" and "z" written (cf:q = "v-a", "v-z"): its master and client
// connections and the table's regions.
func twoRegions(t *testing.T, dir, table string) (*Server, *ipc.ClientConn, *ipc.ClientConn, []*hbasepb.RegionInfo) {
	t.Helper()
	s := testServer(t, dir, nil)
	m := dial(t, s, MasterService)
	c := dial(t, s, ClientService)
	createTable(t, m, table, "m")
	regions := metaRegions(t, c, table)
	for _, row := range []string{"a", "z"} {
		require.NoError(t, putFam(c, regionSpec(regionFor(regions, row)), row, "cf", "q", "v-"+row, 1))
	}
	return s, m, c, regions
}

// TestRegionFailedOpen: a region whose store file is damaged does not open
// when the server starts, and the server starts anyway: the other region
// serves, requests for the damaged one answer NotServingRegionException
// with the reason, hbase:meta and the status pages say FAILED_OPEN, and
// AssignRegion opens it once the file is mended (not before). Disabling the
// table closes it; enabling tries it again.
func TestRegionFailedOpen(t *testing.T) {
	dir := t.TempDir()
	s, m, c, regions := twoRegions(t, dir, "fo")
	name := tn("default", "fo")
	require.Empty(t, runProcedure(t, m, "FlushTable", &hbasepb.FlushTableRequest{TableName: name}, &hbasepb.FlushTableResponse{}))
	bad := regionFor(regions, "z")
	var badInfo *hbasepb.RegionInfo
	for _, ri := range regions {
		if r, _ := regionInfoFromPB(ri); bytes.Equal(r.RegionName(), bad) {
			badInfo = ri
		}
	}
	ri, err := regionInfoFromPB(badInfo)
	require.NoError(t, err)
	require.NoError(t, s.Shutdown(context.Background()))

	files := storeFilesUnder(t, dir, ri.EncodedName())
	require.Len(t, files, 1)
	good, err := os.ReadFile(files[0])
	require.NoError(t, err)
	damaged := append([]byte(nil), good...)
	for i := len(damaged) - 64; i < len(damaged); i++ { // the trailer
		damaged[i] ^= 0x5a
	}
	require.NoError(t, os.WriteFile(files[0], damaged, 0o644))

	start := func() (*Server, *ipc.ClientConn, *ipc.ClientConn) {
		s := testServer(t, dir, nil)
		return s, dial(t, s, MasterService), dial(t, s, ClientService)
	}
	s, m, c = start()
	v, ok := getValue(t, c, regions, "a", "q")
	require.True(t, ok)
	require.Equal(t, "v-a", v)
	failed := func(op string, err error) {
		t.Helper()
		requireException(t, err, ipc.ClassNotServingRegionException, "FAILED_OPEN")
		e, _ := ipc.AsException(err)
		require.Contains(t, e.Message, ri.EncodedName(), op)
		require.Contains(t, e.Message, "trailer", op) // what is wrong with it
	}
	_, err = c.Call(context.Background(), "Get", &hbasepb.GetRequest{Region: regionSpec(bad),
		Get: &hbasepb.Get{Row: []byte("z")}}, nil, &hbasepb.GetResponse{})
	failed("Get", err)
	failed("Mutate", putFam(c, regionSpec(bad), "z", "cf", "q", "lost?", 2))
	require.Equal(t, "FAILED_OPEN", metaState(t, c, bad))
	require.Equal(t, "OPEN", metaState(t, c, regionFor(regions, "a")))
	_, _, rs := httpGetStatus(t, "http://"+s.InfoAddr()+"/rs-status")
	require.Contains(t, rs, "FAILED_OPEN")
	_, _, dump := httpGetStatus(t, "http://"+s.InfoAddr()+"/dump")
	require.Contains(t, dump, string(bad)+" FAILED_OPEN: ")

	// Still damaged: AssignRegion says why, and the region stays as it was.
	assign := func() error {
		_, err := m.Call(context.Background(), "AssignRegion", &hbasepb.AssignRegionRequest{Region: regionSpec(bad)}, nil,
			&hbasepb.AssignRegionResponse{})
		return err
	}
	requireException(t, assign(), ipc.ClassDoNotRetryIOException, "FAILED_OPEN")
	_, err = m.Call(context.Background(), "AssignRegion", &hbasepb.AssignRegionRequest{Region: regionSpec([]byte("nope,,1"))}, nil,
		&hbasepb.AssignRegionResponse{})
	requireException(t, err, ipc.ClassUnknownRegionException, "")

	// Disabled, the region is CLOSED; enabled, it is tried again and fails
	// again, without failing the enable.
	require.Empty(t, runProcedure(t, m, "DisableTable", &hbasepb.DisableTableRequest{TableName: name}, &hbasepb.DisableTableResponse{}))
	require.Equal(t, "CLOSED", metaState(t, c, bad))
	requireException(t, assign(), ipc.ClassTableNotEnabledException, "")
	require.Empty(t, runProcedure(t, m, "EnableTable", &hbasepb.EnableTableRequest{TableName: name}, &hbasepb.EnableTableResponse{}))
	require.Equal(t, "FAILED_OPEN", metaState(t, c, bad))
	v, ok = getValue(t, c, regions, "a", "q")
	require.True(t, ok)
	require.Equal(t, "v-a", v)

	// Mended, it opens on AssignRegion, with its data; assigning an open
	// region does nothing.
	require.NoError(t, os.WriteFile(files[0], good, 0o644))
	require.NoError(t, assign())
	require.Equal(t, "OPEN", metaState(t, c, bad))
	v, ok = getValue(t, c, regions, "z", "q")
	require.True(t, ok)
	require.Equal(t, "v-z", v)
	require.NoError(t, putFam(c, regionSpec(bad), "z", "cf", "q2", "after", 3))
	require.NoError(t, assign())
	v, ok = getValue(t, c, regions, "z", "q2")
	require.True(t, ok)
	require.Equal(t, "after", v)
	_, _, rs = httpGetStatus(t, "http://"+s.InfoAddr()+"/rs-status")
	require.NotContains(t, rs, "FAILED_OPEN")
}

// TestRegionDirMissing: a region hbase:meta lists whose directory is gone
// (deleted by hand, a volume not mounted) is FAILED_OPEN at start, not
// opened as a new empty region that would answer its rows as absent; with
// the directory back, AssignRegion opens it with its data.
func TestRegionDirMissing(t *testing.T) {
	dir := t.TempDir()
	s, _, _, regions := twoRegions(t, dir, "dm")
	bad := regionFor(regions, "z")
	var regionDir string
	for _, hr := range s.regions {
		if bytes.Equal(hr.name, bad) {
			regionDir = hr.dir
		}
	}
	require.NotEmpty(t, regionDir)
	require.NoError(t, s.Shutdown(context.Background()))
	require.NoError(t, os.Rename(regionDir, regionDir+".away"))

	s = testServer(t, dir, nil)
	m, c := dial(t, s, MasterService), dial(t, s, ClientService)
	_, err := c.Call(context.Background(), "Get", &hbasepb.GetRequest{Region: regionSpec(bad),
		Get: &hbasepb.Get{Row: []byte("z")}}, nil, &hbasepb.GetResponse{})
	requireException(t, err, ipc.ClassNotServingRegionException, "does not exist")
	_, statErr := os.Stat(regionDir)
	require.True(t, os.IsNotExist(statErr), "no empty region made in its place")
	require.Equal(t, "FAILED_OPEN", metaState(t, c, bad))
	v, ok := getValue(t, c, regions, "a", "q")
	require.True(t, ok)
	require.Equal(t, "v-a", v)

	require.NoError(t, os.Rename(regionDir+".away", regionDir))
	_, err = m.Call(context.Background(), "AssignRegion", &hbasepb.AssignRegionRequest{Region: regionSpec(bad)}, nil,
		&hbasepb.AssignRegionResponse{})
	require.NoError(t, err)
	v, ok = getValue(t, c, regions, "z", "q")
	require.True(t, ok)
	require.Equal(t, "v-z", v)
}

// TestMetaDirMissing: a data directory whose hbase:meta region is gone but
// whose tables are not does not start with a new, empty catalog (which
// would hide the tables, and let a table created again under one of their
// names clear its directory); with the directory back, it starts as before.
func TestMetaDirMissing(t *testing.T) {
	dir := t.TempDir()
	s := testServer(t, dir, nil)
	m := dial(t, s, MasterService)
	c := dial(t, s, ClientService)
	createTable(t, m, "mm")
	regions := metaRegions(t, c, "mm")
	require.NoError(t, putFam(c, regionSpec(regionFor(regions, "a")), "a", "cf", "q", "v", 1))
	metaDir := s.meta.dir
	require.NoError(t, s.Shutdown(context.Background()))
	require.NoError(t, os.Rename(metaDir, metaDir+".away"))

	_, err := Start(Config{DataDir: dir, Port: 0, portSet: true, InfoPort: 0, infoPortSet: true,
		Logger: slog.New(slog.DiscardHandler)})
	require.Error(t, err)
	require.Contains(t, err.Error(), "hbase:meta")
	require.Contains(t, err.Error(), "default:mm")
	_, statErr := os.Stat(metaDir)
	require.True(t, os.IsNotExist(statErr), "no empty catalog made")

	require.NoError(t, os.Rename(metaDir+".away", metaDir))
	s = testServer(t, dir, nil)
	c = dial(t, s, ClientService)
	v, ok := getValue(t, c, metaRegions(t, c, "mm"), "a", "q")
	require.True(t, ok)
	require.Equal(t, "v", v)
}
