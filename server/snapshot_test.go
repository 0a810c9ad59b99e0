package server

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/regionkv/regionkv/hbasepb"
	"github.com/regionkv/regionkv/internal/vfs/crashfs"
	"github.com/regionkv/regionkv/ipc"
	"github.com/regionkv/regionkv/region"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
)

func snapDesc(name, table string) *hbasepb.SnapshotDescription {
	d := &hbasepb.SnapshotDescription{Name: proto.String(name)}
	if table != "" {
		d.Table = proto.String(table)
	}
	return d
}

// takeSnapshotRPC sends Snapshot as HBase 2.5+ clients do and waits with
// getProcedureResult; it returns the exception class ("" for none).
func takeSnapshotRPC(t *testing.T, m *ipc.ClientConn, d *hbasepb.SnapshotDescription) string {
	t.Helper()
	resp := &hbasepb.SnapshotResponse{}
	if _, err := m.Call(context.Background(), "Snapshot", &hbasepb.SnapshotRequest{Snapshot: d}, nil, resp); err != nil {
		return exceptionClass(err)
	}
	require.EqualValues(t, snapshotTimeout, resp.GetExpectedTimeout())
	require.NotNil(t, resp.ProcId)
	pr := &hbasepb.GetProcedureResultResponse{}
	call(t, m, "getProcedureResult", &hbasepb.GetProcedureResultRequest{ProcId: proto.Uint64(uint64(resp.GetProcId()))}, pr, nil)
	require.Equal(t, hbasepb.GetProcedureResultResponse_FINISHED, pr.GetState())
	if pr.Exception != nil {
		return pr.GetException().GetGenericException().GetClassName()
	}
	// What gohbase and clients before 2.5 poll.
	done := &hbasepb.IsSnapshotDoneResponse{}
	call(t, m, "IsSnapshotDone", &hbasepb.IsSnapshotDoneRequest{Snapshot: d}, done, nil)
	require.True(t, done.GetDone())
	require.Equal(t, d.GetName(), done.GetSnapshot().GetName())
	return ""
}

func restoreRPC(t *testing.T, m *ipc.ClientConn, name, table string) string {
	t.Helper()
	return runProcedure(t, m, "RestoreSnapshot", &hbasepb.RestoreSnapshotRequest{Snapshot: snapDesc(name, table)},
		&hbasepb.RestoreSnapshotResponse{})
}

func listSnapshotsRPC(t *testing.T, m *ipc.ClientConn) []*hbasepb.SnapshotDescription {
	t.Helper()
	resp := &hbasepb.GetCompletedSnapshotsResponse{}
	call(t, m, "GetCompletedSnapshots", &hbasepb.GetCompletedSnapshotsRequest{}, resp, nil)
	return resp.GetSnapshots()
}

func put(t *testing.T, c *ipc.ClientConn, table, row, v string) {
	t.Helper()
	mp, cb := putCells(row, [2]string{"q", v})
	mp.Durability = hbasepb.MutationProto_FSYNC_WAL.Enum() // for the power-loss tests
	call(t, c, "Mutate", &hbasepb.MutateRequest{Region: regionSpec(regionFor(metaRegions(t, c, table), row)), Mutation: mp},
		&hbasepb.MutateResponse{}, cb)
}

// scanTable returns row=value of every row of the table, region by region.
func scanTable(t *testing.T, c *ipc.ClientConn, table string) []string {
	t.Helper()
	var out []string
	for _, ri := range metaRegions(t, c, table) {
		r, err := regionInfoFromPB(ri)
		require.NoError(t, err)
		resp := &hbasepb.ScanResponse{}
		cb := call(t, c, "Scan", &hbasepb.ScanRequest{Region: regionSpec(r.RegionName()), Scan: &hbasepb.Scan{},
			NumberOfRows: proto.Uint32(10000), CloseScanner: proto.Bool(true)}, resp, nil)
		out = append(out, scanRows(t, resp, cb)...)
	}
	return out
}

func tableState(t *testing.T, m *ipc.ClientConn, table string) hbasepb.TableState_State {
	t.Helper()
	resp := &hbasepb.GetTableStateResponse{}
	call(t, m, "GetTableState", &hbasepb.GetTableStateRequest{TableName: tn("default", table)}, resp, nil)
	return resp.GetTableState().GetState()
}

func disable(t *testing.T, m *ipc.ClientConn, table string) {
	t.Helper()
	require.Empty(t, runProcedure(t, m, "DisableTable", &hbasepb.DisableTableRequest{TableName: tn("default", table)}, &hbasepb.DisableTableResponse{}))
}

func enable(t *testing.T, m *ipc.ClientConn, table string) {
	t.Helper()
	require.Empty(t, runProcedure(t, m, "EnableTable", &hbasepb.EnableTableRequest{TableName: tn("default", table)}, &hbasepb.EnableTableResponse{}))
}

// links returns the link count of every store file under dir, by path.
func links(t *testing.T, dir string) map[string]uint64 {
	t.Helper()
	out := map[string]uint64{}
	require.NoError(t, filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if !fi.IsDir() && region.IsStoreFileName(fi.Name()) {
			out[p] = uint64(fi.Sys().(*syscall.Stat_t).Nlink)
		}
		return nil
	}))
	return out
}

// TestSnapshotRestoreClone drives every snapshot call through raw RPCs:
// snapshot, more writes, restore gives the old data back; clone gives a
// table of its own; the errors are HBase's; snapshots survive a restart;
// deleting one frees only files nothing else uses.
func TestSnapshotRestoreClone(t *testing.T) {
	dir := t.TempDir()
	s := testServer(t, dir, nil)
	m := dial(t, s, MasterService)
	c := dial(t, s, ClientService)
	createTable(t, m, "st", "m")
	for i := range 20 {
		put(t, c, "st", fmt.Sprintf("%c%02d", 'a'+i%26, i), "old")
	}
	put(t, c, "st", "z", "memstore") // not flushed: a FLUSH snapshot takes it
	before := scanTable(t, c, "st")
	require.Len(t, before, 21)

	require.Empty(t, takeSnapshotRPC(t, m, snapDesc("s1", "st")))
	// Refusals, as HBase's master answers them.
	require.Equal(t, ipc.ClassSnapshotExistsException, takeSnapshotRPC(t, m, snapDesc("s1", "st")))
	require.Equal(t, ipc.ClassSnapshotCreationException, takeSnapshotRPC(t, m, snapDesc("s2", "nope")))
	require.Equal(t, ipc.ClassSnapshotCreationException, takeSnapshotRPC(t, m, snapDesc("s2", "")))
	require.Equal(t, ipc.ClassDoNotRetryIOException, takeSnapshotRPC(t, m, snapDesc("bad/name", "st")))
	_, err := m.Call(context.Background(), "IsSnapshotDone", &hbasepb.IsSnapshotDoneRequest{Snapshot: snapDesc("nope", "")}, nil, &hbasepb.IsSnapshotDoneResponse{})
	require.Equal(t, ipc.ClassUnknownSnapshotException, exceptionClass(err))
	_, err = m.Call(context.Background(), "IsSnapshotDone", &hbasepb.IsSnapshotDoneRequest{}, nil, &hbasepb.IsSnapshotDoneResponse{})
	require.Equal(t, ipc.ClassUnknownSnapshotException, exceptionClass(err))

	list := listSnapshotsRPC(t, m)
	require.Len(t, list, 1)
	require.Equal(t, "s1", list[0].GetName())
	require.Equal(t, "st", list[0].GetTable())
	require.Equal(t, hbasepb.SnapshotDescription_FLUSH, list[0].GetType())
	require.EqualValues(t, 2, list[0].GetVersion())
	require.InDelta(t, time.Now().UnixMilli(), list[0].GetCreationTime(), 60000)

	// SKIPFLUSH leaves out what only the memstore holds.
	put(t, c, "st", "y", "unflushed")
	require.Empty(t, takeSnapshotRPC(t, m, &hbasepb.SnapshotDescription{Name: proto.String("s-skip"), Table: proto.String("st"),
		Type: hbasepb.SnapshotDescription_SKIPFLUSH.Enum()}))

	// Writes after the snapshot: overwrites, new rows, a delete.
	for i := range 20 {
		put(t, c, "st", fmt.Sprintf("%c%02d", 'a'+i%26, i), "new")
	}
	put(t, c, "st", "n-new", "x")
	call(t, c, "Mutate", &hbasepb.MutateRequest{Region: regionSpec(regionFor(metaRegions(t, c, "st"), "z")),
		Mutation: &hbasepb.MutationProto{Row: []byte("z"), MutateType: hbasepb.MutationProto_DELETE.Enum()}}, &hbasepb.MutateResponse{}, nil)
	// A major compaction removes the table's names of the files s1 keeps.
	for _, hr := range s.tableByName(TableName{"default", "st"}).regions {
		require.NoError(t, hr.r.Load().Flush())
		require.NoError(t, hr.r.Load().Compact(true))
	}

	// Restore: only into a disabled table.
	require.Equal(t, ipc.ClassTableNotDisabledException, restoreRPC(t, m, "s1", "st"))
	require.Equal(t, ipc.ClassSnapshotDoesNotExistException, restoreRPC(t, m, "nope", "st"))
	disable(t, m, "st")
	require.Empty(t, restoreRPC(t, m, "s1", "st"))
	require.Equal(t, hbasepb.TableState_DISABLED, tableState(t, m, "st"), "a restored table stays disabled, as in HBase")
	enable(t, m, "st")
	require.Equal(t, before, scanTable(t, c, "st"))

	// Clone: a table of its own, enabled, with the snapshot's regions.
	require.Empty(t, restoreRPC(t, m, "s1", "stclone"))
	require.Equal(t, hbasepb.TableState_ENABLED, tableState(t, m, "stclone"))
	require.Equal(t, before, scanTable(t, c, "stclone"))
	cloneRegions := metaRegions(t, c, "stclone")
	require.Len(t, cloneRegions, 2)
	require.Equal(t, "m", string(cloneRegions[1].GetStartKey()))
	require.Equal(t, "stclone", string(cloneRegions[0].GetTableName().GetQualifier()))
	put(t, c, "stclone", "a00", "clone")
	put(t, c, "stclone", "q-clone", "clone")
	for _, hr := range s.tableByName(TableName{"default", "stclone"}).regions {
		require.NoError(t, hr.r.Load().Flush())
		require.NoError(t, hr.r.Load().Compact(true))
	}
	require.Equal(t, before, scanTable(t, c, "st"), "writes to the clone do not reach the original")
	require.Contains(t, scanTable(t, c, "stclone"), "a00=clone")
	// Cloning into an existing table that is not the snapshot's is refused.
	require.Equal(t, ipc.ClassRestoreSnapshotException, restoreRPC(t, m, "s1", "stclone"))
	require.Equal(t, ipc.ClassRestoreSnapshotException, restoreRPC(t, m, "s1", "hbase:meta"))
	require.Equal(t, ipc.ClassNamespaceNotFoundException, restoreRPC(t, m, "s1", "nons:x"))

	// The SKIPFLUSH snapshot has y only if it had been flushed: it had not.
	require.Empty(t, restoreRPC(t, m, "s-skip", "skipclone"))
	skip := scanTable(t, c, "skipclone")
	require.Contains(t, skip, "z=memstore", "the FLUSH snapshot before flushed z")
	require.NotContains(t, strings.Join(skip, ","), "y=unflushed")

	// Restart: the snapshots, the restored table and the clone survive.
	require.NoError(t, s.Shutdown(context.Background()))
	s = testServer(t, dir, nil)
	m = dial(t, s, MasterService)
	c = dial(t, s, ClientService)
	require.Len(t, listSnapshotsRPC(t, m), 2)
	require.Equal(t, before, scanTable(t, c, "st"))
	require.Contains(t, scanTable(t, c, "stclone"), "q-clone=clone")
	disable(t, m, "st")
	require.Empty(t, restoreRPC(t, m, "s1", "st"), "restore after a restart")
	enable(t, m, "st")
	require.Equal(t, before, scanTable(t, c, "st"))

	// Delete: the snapshot's names go; files the tables name stay, with
	// one name fewer.
	snapDir := filepath.Join(dir, snapshotRootName, "s1")
	inSnap := links(t, snapDir)
	require.NotEmpty(t, inSnap)
	tables := links(t, filepath.Join(dir, "data", "default"))
	_, err = m.Call(context.Background(), "DeleteSnapshot", &hbasepb.DeleteSnapshotRequest{Snapshot: snapDesc("s1", "")}, nil, &hbasepb.DeleteSnapshotResponse{})
	require.NoError(t, err)
	_, err = m.Call(context.Background(), "DeleteSnapshot", &hbasepb.DeleteSnapshotRequest{Snapshot: snapDesc("s1", "")}, nil, &hbasepb.DeleteSnapshotResponse{})
	require.Equal(t, ipc.ClassSnapshotDoesNotExistException, exceptionClass(err))
	_, err = os.Stat(snapDir)
	require.True(t, os.IsNotExist(err))
	after := links(t, filepath.Join(dir, "data", "default"))
	require.Equal(t, len(tables), len(after))
	shared := 0
	for p, n := range tables {
		require.LessOrEqual(t, after[p], n)
		if after[p] < n {
			shared++
		}
	}
	require.Greater(t, shared, 0, "some table files were shared with the snapshot")
	names, err := os.ReadDir(filepath.Join(dir, snapshotRootName, snapshotTmpName))
	require.NoError(t, err)
	require.Empty(t, names, "nothing left in the working directory")
	require.Len(t, listSnapshotsRPC(t, m), 1)
	require.Equal(t, before, scanTable(t, c, "st"))
	require.Contains(t, scanTable(t, c, "stclone"), "a00=clone")

	// A table deleted, then restored from its snapshot: a clone under the
	// old name, with the same region names as the rows just deleted.
	require.Empty(t, takeSnapshotRPC(t, m, snapDesc("s3", "st")))
	disable(t, m, "st")
	require.Empty(t, runProcedure(t, m, "DeleteTable", &hbasepb.DeleteTableRequest{TableName: tn("default", "st")}, &hbasepb.DeleteTableResponse{}))
	require.Empty(t, restoreRPC(t, m, "s3", "st"))
	require.Equal(t, hbasepb.TableState_ENABLED, tableState(t, m, "st"))
	require.Equal(t, before, scanTable(t, c, "st"))
}

// TestSnapshotDisabledTable: a snapshot of a disabled table is of type
// DISABLED and holds the files its closed regions left.
func TestSnapshotDisabledTable(t *testing.T) {
	s := testServer(t, t.TempDir(), nil)
	m := dial(t, s, MasterService)
	c := dial(t, s, ClientService)
	createTable(t, m, "dt", "k")
	for _, r := range []string{"a", "b", "x", "y"} {
		put(t, c, "dt", r, "v")
	}
	want := scanTable(t, c, "dt")
	disable(t, m, "dt")
	require.Empty(t, takeSnapshotRPC(t, m, snapDesc("d1", "dt")))
	list := listSnapshotsRPC(t, m)
	require.Len(t, list, 1)
	require.Equal(t, hbasepb.SnapshotDescription_DISABLED, list[0].GetType())
	require.Empty(t, restoreRPC(t, m, "d1", "dtclone"))
	require.Equal(t, want, scanTable(t, c, "dtclone"))
}

// TestSnapshotCrashes cuts the power (crashfs) at every file operation of
// a snapshot, then of a restore, and starts a server on the image: a
// snapshot is there whole (and restores the data) or not at all; a
// restore cut short is finished by the start.
func TestSnapshotCrashes(t *testing.T) {
	logger := slog.New(slog.DiscardHandler)
	base := t.TempDir()
	run := 0
	start := func(fs *crashfs.FS) (*Server, *ipc.ClientConn, *ipc.ClientConn) {
		t.Helper()
		cfg := Config{DataDir: filepath.Join(base, fmt.Sprint(run)), Port: FreePort, InfoPort: -1, FS: fs, Logger: logger}
		s, err := Start(cfg)
		require.NoError(t, err)
		m, err := ipc.Dial(context.Background(), s.Addr(), ipc.DialOptions{Service: MasterService})
		require.NoError(t, err)
		c, err := ipc.Dial(context.Background(), s.Addr(), ipc.DialOptions{Service: ClientService})
		require.NoError(t, err)
		return s, m, c
	}
	stop := func(s *Server, m, c *ipc.ClientConn) {
		m.Close()
		c.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = s.Shutdown(ctx)
	}
	// setup: a table with two regions, rows flushed and not, snapshot s0
	// taken; then new values written.
	setup := func() (*crashfs.FS, *Server, *ipc.ClientConn, *ipc.ClientConn, []string) {
		run++
		fs := crashfs.New()
		s, m, c := start(fs)
		createTable(t, m, "ct", "m")
		for _, r := range []string{"a", "c", "n", "x"} {
			put(t, c, "ct", r, "v0")
		}
		require.NoError(t, s.tableByName(TableName{"default", "ct"}).regions[0].r.Load().Flush())
		put(t, c, "ct", "b", "v0")
		want := scanTable(t, c, "ct")
		return fs, s, m, c, want
	}
	reopen := func(img *crashfs.FS) (*Server, *ipc.ClientConn, *ipc.ClientConn) {
		t.Helper()
		return start(img)
	}

	step := int64(1)
	if testing.Short() {
		step = 3
	}
	// Cut during the snapshot.
	snapCuts, snapKept := 0, 0
	for n := int64(1); ; n += step {
		fs, s, m, c, want := setup()
		fs.CrashAt(n, crashfs.Mutating, rand.New(rand.NewPCG(uint64(n), 3)))
		cls := takeSnapshotRPC(t, m, snapDesc("s0", "ct"))
		select {
		case <-fs.Crashed():
		default:
			require.Empty(t, cls)
			stop(s, m, c)
			t.Logf("snapshot: %d cuts, snapshot kept in %d", snapCuts, snapKept)
			n = -1
		}
		if n < 0 {
			break
		}
		snapCuts++
		img := fs.Image()
		stop(s, m, c)
		s, m, c = reopen(img)
		list := listSnapshotsRPC(t, m)
		if len(list) == 1 {
			snapKept++
			disable(t, m, "ct")
			require.Empty(t, restoreRPC(t, m, "s0", "ct"), "cut %d at %s", n, fs.CrashedAt())
			enable(t, m, "ct")
			require.Equal(t, want, scanTable(t, c, "ct"), "cut %d at %s", n, fs.CrashedAt())
		} else {
			require.Empty(t, list)
			require.Equal(t, want, scanTable(t, c, "ct"))
		}
		stop(s, m, c)
	}
	require.Greater(t, snapCuts, 10)

	// Cut during the restore.
	restoreCuts, finished := 0, 0
	for n := int64(1); ; n += step {
		fs, s, m, c, want := setup()
		require.Empty(t, takeSnapshotRPC(t, m, snapDesc("s0", "ct")))
		for _, r := range []string{"a", "n", "z"} {
			put(t, c, "ct", r, "v1")
		}
		prior := scanTable(t, c, "ct")
		disable(t, m, "ct")
		fs.CrashAt(n, crashfs.Mutating, rand.New(rand.NewPCG(uint64(n), 4)))
		cls := restoreRPC(t, m, "s0", "ct")
		select {
		case <-fs.Crashed():
		default:
			require.Empty(t, cls)
			stop(s, m, c)
			n = -1
		}
		if n < 0 {
			break
		}
		restoreCuts++
		img := fs.Image()
		stop(s, m, c)
		if _, err := img.Stat(filepath.Join(base, fmt.Sprint(run), "data", "default", "ct", restoreMarkerName)); err == nil {
			finished++
		}
		s, m, c = reopen(img)
		// The start finished the restore (or it never began: the table is
		// as before it, disabled); either way restoring again works.
		require.Equal(t, hbasepb.TableState_DISABLED, tableState(t, m, "ct"), "cut %d at %s", n, fs.CrashedAt())
		_, err := img.Stat(filepath.Join(s.tableDir(TableName{"default", "ct"}), restoreMarkerName))
		require.True(t, os.IsNotExist(err), "the start finished the restore")
		enable(t, m, "ct")
		got := scanTable(t, c, "ct")
		if !equalStrings(got, want) {
			require.Equal(t, prior, got, "cut %d at %s: neither restored nor as before", n, fs.CrashedAt())
			disable(t, m, "ct")
			require.Empty(t, restoreRPC(t, m, "s0", "ct"))
			enable(t, m, "ct")
			require.Equal(t, want, scanTable(t, c, "ct"), "cut %d at %s", n, fs.CrashedAt())
		}
		stop(s, m, c)
	}
	require.Greater(t, restoreCuts, 10)
	require.Greater(t, finished, 0, "some cuts left a restore for the start to finish")
	t.Logf("restore: %d cuts, %d finished at start", restoreCuts, finished)

	// Cut during a clone: the start has the clone whole, or no such table
	// and no directory of it.
	cloneCuts, cloned := 0, 0
	for n := int64(1); ; n += step {
		fs, s, m, c, want := setup()
		require.Empty(t, takeSnapshotRPC(t, m, snapDesc("s0", "ct")))
		fs.CrashAt(n, crashfs.Mutating, rand.New(rand.NewPCG(uint64(n), 5)))
		cls := restoreRPC(t, m, "s0", "cl")
		select {
		case <-fs.Crashed():
		default:
			require.Empty(t, cls)
			stop(s, m, c)
			n = -1
		}
		if n < 0 {
			break
		}
		cloneCuts++
		img := fs.Image()
		stop(s, m, c)
		s, m, c = reopen(img)
		if s.tableByName(TableName{"default", "cl"}) != nil {
			cloned++
			require.Equal(t, hbasepb.TableState_ENABLED, tableState(t, m, "cl"), "cut %d at %s", n, fs.CrashedAt())
			require.Equal(t, want, scanTable(t, c, "cl"), "cut %d at %s", n, fs.CrashedAt())
		} else {
			_, err := img.Stat(s.tableDir(TableName{"default", "cl"}))
			require.True(t, os.IsNotExist(err), "cut %d at %s: a clone's directory without a table", n, fs.CrashedAt())
			require.Empty(t, restoreRPC(t, m, "s0", "cl"), "cut %d: the clone works after the start", n)
			require.Equal(t, want, scanTable(t, c, "cl"))
		}
		require.Equal(t, want, scanTable(t, c, "ct"), "the original is untouched")
		stop(s, m, c)
	}
	require.Greater(t, cloneCuts, 10)
	t.Logf("clone: %d cuts, clone there after %d", cloneCuts, cloned)
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestSnapshotDamaged: a damaged or hostile manifest is refused with
// CorruptedSnapshotException before anything changes (no path outside the
// snapshot is ever linked), and a damaged description leaves the snapshot
// out of the listing without failing it.
func TestSnapshotDamaged(t *testing.T) {
	dir := t.TempDir()
	s := testServer(t, dir, nil)
	m := dial(t, s, MasterService)
	c := dial(t, s, ClientService)
	createTable(t, m, "dm")
	put(t, c, "dm", "a", "v")
	for _, n := range []string{"good", "bad-name", "bad-family", "bad-regions", "garbage", "bad-info"} {
		require.Empty(t, takeSnapshotRPC(t, m, snapDesc(n, "dm")))
	}
	root := filepath.Join(dir, snapshotRootName)
	edit := func(name string, fn func(*hbasepb.SnapshotDataManifest)) {
		p := filepath.Join(root, name, snapshotManifestName)
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		man := &hbasepb.SnapshotDataManifest{}
		require.NoError(t, proto.Unmarshal(b, man))
		fn(man)
		b, err = proto.Marshal(man)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(p, b, 0o644))
	}
	edit("bad-name", func(man *hbasepb.SnapshotDataManifest) {
		ff := man.RegionManifests[0].FamilyFiles[0]
		ff.StoreFiles = append(ff.StoreFiles, &hbasepb.SnapshotRegionManifest_StoreFile{Name: proto.String("../../../../etc/passwd")})
	})
	edit("bad-family", func(man *hbasepb.SnapshotDataManifest) {
		man.RegionManifests[0].FamilyFiles[0].FamilyName = []byte("../x")
	})
	edit("bad-regions", func(man *hbasepb.SnapshotDataManifest) {
		man.RegionManifests[0].RegionInfo.EndKey = []byte("m")
	})
	require.NoError(t, os.WriteFile(filepath.Join(root, "garbage", snapshotManifestName), []byte("\xff\xff garbage"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, "bad-info", snapshotInfoName), []byte("\xff\xff garbage"), 0o644))
	for _, n := range []string{"bad-name", "bad-family", "bad-regions", "garbage"} {
		require.Equal(t, ipc.ClassCorruptedSnapshotException, restoreRPC(t, m, n, "dmclone-"+n), n)
		require.Nil(t, s.tableByName(TableName{"default", "dmclone-" + n}))
		_, err := os.Stat(filepath.Join(dir, "data", "default", "dmclone-"+n))
		require.True(t, os.IsNotExist(err), "%s: nothing made", n)
	}
	var names []string
	for _, d := range listSnapshotsRPC(t, m) {
		names = append(names, d.GetName())
	}
	require.NotContains(t, names, "bad-info")
	require.Contains(t, names, "good")
	require.Empty(t, restoreRPC(t, m, "good", "dmclone"))
	require.Equal(t, []string{"a=v"}, scanTable(t, c, "dmclone"))
	// A restore request without a table restores into the snapshot's own.
	disable(t, m, "dm")
	require.Empty(t, runProcedure(t, m, "RestoreSnapshot", &hbasepb.RestoreSnapshotRequest{Snapshot: snapDesc("good", "")},
		&hbasepb.RestoreSnapshotResponse{}))
}
