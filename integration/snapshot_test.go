package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/regionkv/regionkv/client"
)

// tableCells returns every cell of a table, all versions, as
// row/family:qualifier@ts=value.
func tableCells(t *testing.T, c *client.Client, table string) []string {
	t.Helper()
	var out []string
	for _, r := range scanAll(t, c, &client.Scan{Table: table, MaxVersions: 10}) {
		out = append(out, cellStrings(r.Cells, true)...)
	}
	return out
}

// waitCompacted waits until a table's requested compactions are done.
func waitCompacted(t *testing.T, c *client.Client, table string) {
	t.Helper()
	ctx := testCtx(t, time.Minute)
	for {
		st, err := c.TableCompactionState(ctx, table)
		if err != nil {
			t.Fatal(err)
		}
		if st == client.CompactionNone {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestSnapshots drives the client's snapshot calls against a real server:
// snapshot, more writes, restore gives the old data back; a clone is a
// table of its own; a compaction after the snapshot keeps the snapshot's
// files readable; snapshots survive a restart; deleting one leaves the
// tables made from it whole.
func TestSnapshots(t *testing.T) {
	dir := t.TempDir()
	p := startServer(t, dir)
	c := newClient(t, p)
	ctx := testCtx(t, 5*time.Minute)
	td := client.TableDescriptor{Name: "snapt", Families: []client.Family{
		{Name: "cf", Attributes: map[string]string{"VERSIONS": "3"}}, {Name: "g"}}}
	createTable(t, c, td, "m")
	for i := range 40 {
		row := fmt.Sprintf("%c%03d", 'a'+i%26, i)
		// Two versions of cf:q, at timestamps of their own.
		mutate(t, c, client.NewPut("snapt", []byte(row)).AddAt([]byte("cf"), []byte("q"), 1000, []byte("v1")).
			AddAt([]byte("cf"), []byte("q"), 2000, []byte("v2")).Add([]byte("g"), []byte("x"), []byte("g1")))
	}
	old := tableCells(t, c, "snapt")
	if len(old) != 120 {
		t.Fatalf("%d cells before the snapshot, want 120", len(old))
	}

	if err := c.Snapshot(ctx, "snapt", "snap1", nil); err != nil {
		t.Fatal(err)
	}
	if done, err := c.IsSnapshotDone(ctx, "snap1"); err != nil || !done {
		t.Fatalf("IsSnapshotDone(snap1) = %v, %v", done, err)
	}
	if _, err := c.IsSnapshotDone(ctx, "nope"); !client.IsException(err, "UnknownSnapshotException") {
		t.Fatalf("IsSnapshotDone of an unknown snapshot: %v", err)
	}
	if err := c.Snapshot(ctx, "snapt", "snap1", nil); !client.IsException(err, "SnapshotExistsException") {
		t.Fatalf("a second snapshot of the same name: %v", err)
	}
	if err := c.Snapshot(ctx, "nope", "snap-nope", nil); !client.IsException(err, "SnapshotCreationException") {
		t.Fatalf("a snapshot of an unknown table: %v", err)
	}
	if err := c.Snapshot(ctx, "snapt", "snap-skip", &client.SnapshotOptions{Type: client.SnapshotSkipFlush, TTL: time.Hour}); err != nil {
		t.Fatal(err)
	}
	snaps, err := c.ListSnapshots(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(snaps) != 2 || snaps[0].Name != "snap1" || snaps[0].Table != "snapt" || snaps[0].Type != client.SnapshotFlush ||
		snaps[1].Type != client.SnapshotSkipFlush || snaps[1].TTL != time.Hour || snaps[0].Version != 2 ||
		time.Since(snaps[0].CreationTime) > time.Minute {
		t.Fatalf("ListSnapshots = %+v", snaps)
	}

	// More writes, then a major compaction: the table's names of the files
	// snap1 keeps are gone.
	for i := range 40 {
		put(t, c, "snapt", fmt.Sprintf("%c%03d", 'a'+i%26, i), "cf", "q", "v3")
	}
	put(t, c, "snapt", "new", "cf", "q", "x")
	mutate(t, c, client.NewDelete("snapt", []byte("a000")))
	if err := c.FlushTable(ctx, "snapt"); err != nil {
		t.Fatal(err)
	}
	if err := c.CompactTable(ctx, "snapt", true); err != nil {
		t.Fatal(err)
	}
	waitCompacted(t, c, "snapt")
	if got := tableCells(t, c, "snapt"); len(got) == len(old) {
		t.Fatalf("the writes after the snapshot changed nothing: %q", truncate(got))
	}

	// Restore: only a disabled table, which stays disabled.
	if err := c.RestoreSnapshot(ctx, "snap1"); !client.IsException(err, "TableNotDisabledException") {
		t.Fatalf("restore into an enabled table: %v", err)
	}
	if err := c.RestoreSnapshot(ctx, "nope"); !client.IsException(err, "RestoreSnapshotException") {
		t.Fatalf("restore of an unknown snapshot: %v", err)
	}
	if err := c.DisableTable(ctx, "snapt"); err != nil {
		t.Fatal(err)
	}
	if err := c.RestoreSnapshot(ctx, "snap1"); err != nil {
		t.Fatal(err)
	}
	if st, err := c.TableState(ctx, "snapt"); err != nil || st != client.TableDisabled {
		t.Fatalf("after a restore the table is %v (%v), want DISABLED", st, err)
	}
	if err := c.EnableTable(ctx, "snapt"); err != nil {
		t.Fatal(err)
	}
	equalStrings(t, "restored table", tableCells(t, c, "snapt"), old)

	// Clone: a new table, enabled, with the snapshot's regions and data.
	if err := c.CloneSnapshot(ctx, "snap1", "snapc"); err != nil {
		t.Fatal(err)
	}
	if err := c.CloneSnapshot(ctx, "snap1", "snapc"); !client.IsException(err, "TableExistsException") {
		t.Fatalf("a clone into an existing table: %v", err)
	}
	equalStrings(t, "clone", tableCells(t, c, "snapc"), old)
	regions, err := c.Regions(ctx, "snapc")
	if err != nil || len(regions) != 2 || string(regions[1].StartKey) != "m" {
		t.Fatalf("the clone's regions: %+v, %v", regions, err)
	}
	// Writes to the clone, and its compactions, leave the original alone.
	put(t, c, "snapc", "b001", "cf", "q", "clone")
	mutate(t, c, client.NewDelete("snapc", []byte("c002")))
	if err := c.FlushTable(ctx, "snapc"); err != nil {
		t.Fatal(err)
	}
	if err := c.CompactTable(ctx, "snapc", true); err != nil {
		t.Fatal(err)
	}
	waitCompacted(t, c, "snapc")
	equalStrings(t, "original after writes to the clone", tableCells(t, c, "snapt"), old)
	if res := get(t, c, &client.Get{Table: "snapc", Row: []byte("b001")}); string(res.Value([]byte("cf"), []byte("q"))) != "clone" {
		t.Fatalf("the clone reads %q", res.Value([]byte("cf"), []byte("q")))
	}

	// Restart: snapshots and tables survive; the snapshot still clones.
	p.restart(false)
	c = newClient(t, p)
	ctx = testCtx(t, 5*time.Minute)
	if snaps, err := c.ListSnapshots(ctx); err != nil || len(snaps) != 2 {
		t.Fatalf("after a restart: %+v, %v", snaps, err)
	}
	if err := c.CloneSnapshot(ctx, "snap1", "snapc2"); err != nil {
		t.Fatal(err)
	}
	equalStrings(t, "clone after the restart", tableCells(t, c, "snapc2"), old)

	// Delete: gone from the list and the disk; the tables made from it
	// keep their data.
	if err := c.DeleteSnapshot(ctx, "snap1"); err != nil {
		t.Fatal(err)
	}
	if err := c.DeleteSnapshot(ctx, "snap1"); !client.IsException(err, "SnapshotDoesNotExistException") {
		t.Fatalf("deleting a deleted snapshot: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, ".hbase-snapshot", "snap1")); !os.IsNotExist(err) {
		t.Fatalf("the deleted snapshot's directory: %v", err)
	}
	if snaps, err := c.ListSnapshots(ctx); err != nil || len(snaps) != 1 || snaps[0].Name != "snap-skip" {
		t.Fatalf("after the delete: %+v, %v", snaps, err)
	}
	equalStrings(t, "restored table after the delete", tableCells(t, c, "snapt"), old)
	equalStrings(t, "second clone after the delete", tableCells(t, c, "snapc2"), old)
	if err := c.DeleteSnapshot(ctx, "snap-skip"); err != nil {
		t.Fatal(err)
	}
}
