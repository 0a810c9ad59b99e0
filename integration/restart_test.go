package integration

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/regionkv/regionkv/client"
)

// restartValue is the value of row i of the restart tests: big enough
// that a few hundred rows fill the small memstores.
func restartValue(i int) []byte {
	return []byte(fmt.Sprintf("value-%06d-%s", i, strings.Repeat("x", 200)))
}

// TestRestart writes data (some flushed to store files, some only in the
// WAL), restarts the server gracefully and then kills it, and checks each
// time that every acknowledged write, table, region and table state is
// back and that the client finds the new server through ZooKeeper.
func TestRestart(t *testing.T) {
	p := startServer(t, "", "hbase.hregion.memstore.flush.size=65536")
	c := newClient(t, p)
	ctx := testCtx(t, 3*time.Minute)
	const tbl, disabled, dropped = "restart_data", "restart_disabled", "restart_dropped"
	cf, q := []byte("cf"), []byte("q")
	createTable(t, c, client.TableDescriptor{Name: tbl, Families: []client.Family{{Name: "cf", Attributes: map[string]string{"VERSIONS": "2"}}}}, "r-1000")
	createTable(t, c, client.TableDescriptor{Name: disabled, Families: fams("cf")})
	createTable(t, c, client.TableDescriptor{Name: dropped, Families: fams("cf")})
	put(t, c, disabled, "d", "cf", "q", "in a disabled table")
	if err := c.DisableTable(ctx, disabled); err != nil {
		t.Fatal(err)
	}
	if err := c.DisableTable(ctx, dropped); err != nil {
		t.Fatal(err)
	}
	if err := c.DeleteTable(ctx, dropped); err != nil {
		t.Fatal(err)
	}
	regionsBefore, err := c.Regions(ctx, tbl)
	if err != nil {
		t.Fatal(err)
	}

	// want is every acknowledged write: row -> value ("" for deleted).
	// inFlight holds the puts under way when the server was killed: they
	// may or may not have been applied.
	want := map[string]string{}
	inFlight := map[string]string{}
	var wantMu sync.Mutex
	writeRows := func(t *testing.T, from, to int) {
		t.Helper()
		var batch []client.Action
		for i := from; i < to; i++ {
			batch = append(batch, client.NewPut(tbl, []byte(fmt.Sprintf("r-%04d", i))).Add(cf, q, restartValue(i)))
		}
		res, err := c.Batch(ctx, batch)
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range res {
			if r.Err != nil {
				t.Fatalf("put r-%04d: %v", from+i, r.Err)
			}
			want[fmt.Sprintf("r-%04d", from+i)] = string(restartValue(from + i))
		}
	}
	var counter int64
	check := func(t *testing.T, stage string) {
		t.Helper()
		rs := scanAll(t, c, &client.Scan{Table: tbl, Caching: 500})
		got := map[string]string{}
		for _, r := range rs {
			got[string(r.Row())] = string(r.Value(cf, q))
		}
		var missing, wrong []string
		for row, v := range want {
			if v == "" {
				if _, ok := got[row]; ok {
					wrong = append(wrong, row+" (deleted, is back)")
				}
				continue
			}
			if g, ok := got[row]; !ok {
				missing = append(missing, row)
			} else if g != v {
				wrong = append(wrong, row)
			}
		}
		for row, g := range got {
			if v, ok := inFlight[row]; ok {
				if g != v {
					wrong = append(wrong, row+" (put in flight at the kill, with another value)")
				}
				continue
			}
			if _, ok := want[row]; !ok && row != "counter" && !strings.HasPrefix(row, "ttl-") {
				wrong = append(wrong, row+" (never written)")
			}
		}
		sort.Strings(missing)
		sort.Strings(wrong)
		if len(missing)+len(wrong) > 0 {
			t.Fatalf("%s: %d rows missing %q, %d wrong %q", stage, len(missing), truncate(missing), len(wrong), truncate(wrong))
		}
		n, err := client.Int64(get(t, c, &client.Get{Table: tbl, Row: []byte("counter")}).Value(cf, q))
		if err != nil || n != counter {
			t.Fatalf("%s: counter %d, %v; want %d", stage, n, err, counter)
		}
		// An older version survives too (VERSIONS=2).
		res := get(t, c, &client.Get{Table: tbl, Row: []byte("r-0001"), MaxVersions: 2})
		if len(res.Cells) != 2 || string(res.Cells[0].Value) != "rewritten" || string(res.Cells[1].Value) != string(restartValue(1)) {
			t.Fatalf("%s: versions of r-0001: %q", stage, cellStrings(res.Cells, false))
		}
		// Tables, regions and states.
		names, err := c.ListTableNames(ctx, "restart_.*", false, "")
		sort.Strings(names)
		if err != nil {
			t.Fatal(err)
		}
		equalStrings(t, stage+": tables", names, []string{tbl, disabled})
		if st, err := c.TableState(ctx, disabled); err != nil || st != client.TableDisabled {
			t.Fatalf("%s: state of %s: %v, %v; want DISABLED", stage, disabled, st, err)
		}
		if st, err := c.TableState(ctx, tbl); err != nil || st != client.TableEnabled {
			t.Fatalf("%s: state of %s: %v, %v; want ENABLED", stage, tbl, st, err)
		}
		regions, err := c.Regions(ctx, tbl)
		if err != nil {
			t.Fatal(err)
		}
		if len(regions) != len(regionsBefore) {
			t.Fatalf("%s: %d regions, want %d", stage, len(regions), len(regionsBefore))
		}
		for i, r := range regions {
			if string(r.Name) != string(regionsBefore[i].Name) || r.Server != p.addr {
				t.Fatalf("%s: region %d is %s on %s, want %s on %s", stage, i, r.Name, r.Server, regionsBefore[i].Name, p.addr)
			}
		}
		cs, err := c.ClusterStatus(ctx)
		if err != nil || cs.Master != p.addr || len(cs.LiveServers) != 1 || cs.LiveServers[0] != p.addr {
			t.Fatalf("%s: cluster status %+v, %v; want master and live server %s", stage, cs, err, p.addr)
		}
	}
	incr := func(t *testing.T, n int) {
		t.Helper()
		for i := 0; i < n; i++ {
			if _, err := c.IncrementColumn(ctx, tbl, []byte("counter"), cf, q, 1); err != nil {
				t.Fatal(err)
			}
			counter++
		}
	}

	// Enough to flush several times, then a tail that stays in the WAL.
	writeRows(t, 0, 1500)
	deadline := time.Now().Add(30 * time.Second)
	for scrape(t, p)["hbase_regionserver_flushedCount"] == 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	m := scrape(t, p)
	if m["hbase_regionserver_flushedCount"] == 0 || m["hbase_regionserver_storeFileCount"] == 0 {
		t.Fatalf("no flush after 1500 rows: %v flushes, %v store files", m["hbase_regionserver_flushedCount"], m["hbase_regionserver_storeFileCount"])
	}
	// A second version of r-0001, stamped after the first for sure.
	first := get(t, c, &client.Get{Table: tbl, Row: []byte("r-0001")}).Cell(cf, q)
	mutate(t, c, client.NewPut(tbl, []byte("r-0001")).AddAt(cf, q, first.Timestamp+1, []byte("rewritten")))
	want["r-0001"] = "rewritten"
	for _, i := range []int{5, 1200} {
		row := fmt.Sprintf("r-%04d", i)
		mutate(t, c, client.NewDelete(tbl, []byte(row)))
		want[row] = ""
	}
	incr(t, 7)
	writeRows(t, 1500, 1520)
	check(t, "before restarts")

	// Cells with a TTL (the _ttl attribute) keep it through flushes and
	// WAL replay.
	const cellTTL = 2500 * time.Millisecond
	ttlPut := func(t *testing.T, row string, ttl time.Duration) time.Time {
		t.Helper()
		m := client.NewPut(tbl, []byte(row)).Add(cf, q, []byte(row))
		m.TTL = ttl
		mutate(t, c, m)
		return time.Now()
	}
	// ttlCheck checks that row, written at written with cellTTL, is there
	// if its TTL is surely not over and gone after waiting for it to be.
	ttlCheck := func(t *testing.T, stage, row string, written time.Time) {
		t.Helper()
		if time.Since(written) < cellTTL-500*time.Millisecond {
			if v := get(t, c, &client.Get{Table: tbl, Row: []byte(row)}).Value(cf, q); string(v) != row {
				t.Fatalf("%s: %s before its TTL: %q", stage, row, v)
			}
		}
		time.Sleep(time.Until(written.Add(cellTTL + 100*time.Millisecond)))
		if res := get(t, c, &client.Get{Table: tbl, Row: []byte(row)}); !res.Empty() {
			t.Fatalf("%s: %s after its TTL: %q", stage, row, cellStrings(res.Cells, false))
		}
		if v := get(t, c, &client.Get{Table: tbl, Row: []byte("ttl-long")}).Value(cf, q); string(v) != "ttl-long" {
			t.Fatalf("%s: ttl-long (an hour): %q", stage, v)
		}
	}
	ttlPut(t, "ttl-long", time.Hour)
	flushedTTL := ttlPut(t, "ttl-flushed", cellTTL)

	t.Run("Graceful", func(t *testing.T) {
		defer p.use(t)()
		old := p.addr
		p.restart(false)
		if !waitPortClosed(old, 5*time.Second) && old != p.addr {
			t.Errorf("old address %s still accepts connections", old)
		}
		t.Logf("restarted gracefully: %s -> %s", old, p.addr)
		check(t, "after a graceful restart")
		// The graceful stop flushed ttl-flushed to a store file.
		ttlCheck(t, "after a graceful restart", "ttl-flushed", flushedTTL)
		writeRows(t, 1520, 1900)
		incr(t, 3)
		mutate(t, c, client.NewDelete(tbl, []byte("r-1510")))
		want["r-1510"] = ""
		check(t, "writes after a graceful restart")
	})

	t.Run("Hard", func(t *testing.T) {
		defer p.use(t)()
		// Writers keep putting while the server is killed: each put
		// they saw acknowledged must be there after the restart.
		wctx, stopWriters := context.WithCancel(ctx)
		var wg sync.WaitGroup
		var acked int
		var killed atomic.Bool
		for w := 0; w < 4; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; wctx.Err() == nil; i++ {
					row := fmt.Sprintf("w%d-%06d", w, i)
					val := fmt.Sprintf("acked-%d-%d", w, i)
					if _, err := c.Mutate(wctx, client.NewPut(tbl, []byte(row)).Add(cf, q, []byte(val))); err != nil {
						if !killed.Load() {
							t.Errorf("put %s before the kill: %v", row, err)
						}
						wantMu.Lock()
						inFlight[row] = val
						wantMu.Unlock()
						return
					}
					wantMu.Lock()
					want[row] = val
					acked++
					wantMu.Unlock()
				}
			}()
		}
		walTTL := ttlPut(t, "ttl-wal", cellTTL)
		time.Sleep(700 * time.Millisecond)
		old := p.addr
		killed.Store(true)
		p.kill()
		stopWriters()
		wg.Wait()
		if acked == 0 {
			t.Fatal("no write was acknowledged before the kill")
		}
		p.start()
		t.Logf("restarted after SIGKILL: %s -> %s, %d concurrent puts acknowledged before the kill", old, p.addr, acked)
		check(t, "after a hard restart")
		// ttl-wal came back from the WAL.
		ttlCheck(t, "after a hard restart", "ttl-wal", walTTL)
		// The disabled table can be enabled, with its data.
		if err := c.EnableTable(ctx, disabled); err != nil {
			t.Fatal(err)
		}
		if v := get(t, c, &client.Get{Table: disabled, Row: []byte("d")}).Value(cf, q); string(v) != "in a disabled table" {
			t.Fatalf("disabled table's row after enable: %q", v)
		}
	})
}
