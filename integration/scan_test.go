package integration

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/regionkv/regionkv/client"
	"github.com/regionkv/regionkv/filter"
	"github.com/regionkv/regionkv/ipc"
)

// fill500 creates tbl with 4 regions and rows row-000 ... row-499.
func fill500(t *testing.T, c *client.Client, tbl string) {
	t.Helper()
	createTable(t, c, client.TableDescriptor{Name: tbl, Families: fams("cf")}, "row-125", "row-250", "row-375")
	var batch []client.Action
	for i := 0; i < 500; i++ {
		row := []byte(fmt.Sprintf("row-%03d", i))
		batch = append(batch, client.NewPut(tbl, row).Add([]byte("cf"), []byte("q"), []byte(fmt.Sprint(i))))
	}
	res, err := c.Batch(testCtx(t, time.Minute), batch)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res {
		if r.Err != nil {
			t.Fatalf("put %d: %v", i, r.Err)
		}
	}
}

func rowNames(from, to, step int) []string {
	var out []string
	for i := from; i != to; i += step {
		out = append(out, fmt.Sprintf("row-%03d", i))
	}
	return out
}

// TestReversedScan scans 500 rows over 4 regions backwards.
func TestReversedScan(t *testing.T) {
	c := sharedClient(t)
	const tbl = "reversed"
	fill500(t, c, tbl)
	equalStrings(t, "forward scan", rowKeys(scanAll(t, c, &client.Scan{Table: tbl})), rowNames(0, 500, 1))
	for _, caching := range []int{0, 1, 7, 1000} {
		rs := scanAll(t, c, &client.Scan{Table: tbl, Reversed: true, Caching: caching})
		equalStrings(t, fmt.Sprintf("reversed scan, caching %d", caching), rowKeys(rs), rowNames(499, -1, -1))
		for i, r := range rs {
			if want := fmt.Sprint(499 - i); string(r.Value([]byte("cf"), []byte("q"))) != want {
				t.Fatalf("reversed scan: row %s has %q, want %q", r.Row(), r.Value([]byte("cf"), []byte("q")), want)
			}
		}
	}
	// From a start row down to a stop row, across region boundaries.
	equalStrings(t, "reversed [row-300, row-100)", rowKeys(scanAll(t, c, &client.Scan{Table: tbl, Reversed: true,
		StartRow: []byte("row-300"), StopRow: []byte("row-100"), Caching: 13})), rowNames(300, 100, -1))
	equalStrings(t, "reversed from a region's start key", rowKeys(scanAll(t, c, &client.Scan{Table: tbl, Reversed: true,
		StartRow: []byte("row-250"), StopRow: []byte("row-240")})), rowNames(250, 240, -1))
	equalStrings(t, "reversed, stop inclusive", rowKeys(scanAll(t, c, &client.Scan{Table: tbl, Reversed: true,
		StartRow: []byte("row-376"), StopRow: []byte("row-374"), StopInclusive: true})), rowNames(376, 373, -1))
	equalStrings(t, "reversed, limit 30", rowKeys(scanAll(t, c, &client.Scan{Table: tbl, Reversed: true,
		StartRow: []byte("row-390"), Limit: 30, Caching: 4})), rowNames(390, 360, -1))
	equalStrings(t, "reversed with a filter", rowKeys(scanAll(t, c, &client.Scan{Table: tbl, Reversed: true,
		Filter: filter.NewRowFilter(filter.CompareEqual, filter.NewSubstringComparator("99"))})),
		[]string{"row-499", "row-399", "row-299", "row-199", "row-099"})
}

// TestScanMetrics checks ROWS_SCANNED and ROWS_FILTERED.
func TestScanMetrics(t *testing.T) {
	c := sharedClient(t)
	const tbl = "scanmetrics"
	fill500(t, c, tbl)
	rs, m := scanAllMetrics(t, c, &client.Scan{Table: tbl, TrackMetrics: true, Caching: 50})
	if len(rs) != 500 || m[client.MetricRowsScanned] != 500 || m[client.MetricRowsFiltered] != 0 {
		t.Fatalf("plain scan: %d rows, metrics %v; want 500 rows, 500 scanned, 0 filtered", len(rs), m)
	}
	// A value filter that keeps one row in ten.
	f := filter.NewValueFilter(filter.CompareEqual, mustRegex(t, "0$"))
	rs, m = scanAllMetrics(t, c, &client.Scan{Table: tbl, TrackMetrics: true, Filter: f, Caching: 7})
	if len(rs) != 50 || m[client.MetricRowsScanned] != 500 || m[client.MetricRowsFiltered] != 450 {
		t.Fatalf("filtered scan: %d rows, metrics %v; want 50 rows, 500 scanned, 450 filtered", len(rs), m)
	}
	// A range within one region, and a reversed scan.
	rs, m = scanAllMetrics(t, c, &client.Scan{Table: tbl, TrackMetrics: true, StartRow: []byte("row-010"), StopRow: []byte("row-030"),
		Filter: filter.NewRowFilter(filter.CompareNotEqual, filter.NewBinaryComparator([]byte("row-020")))})
	if len(rs) != 19 || m[client.MetricRowsScanned] != 20 || m[client.MetricRowsFiltered] != 1 {
		t.Fatalf("range scan: %d rows, metrics %v; want 19 rows, 20 scanned, 1 filtered", len(rs), m)
	}
	rs, m = scanAllMetrics(t, c, &client.Scan{Table: tbl, TrackMetrics: true, Reversed: true, StartRow: []byte("row-259"), StopRow: []byte("row-239")})
	if len(rs) != 20 || m[client.MetricRowsScanned] != 20 || m[client.MetricRowsFiltered] != 0 {
		t.Fatalf("reversed scan: %d rows, metrics %v; want 20 rows, 20 scanned", len(rs), m)
	}
}

func mustRegex(t *testing.T, expr string) *filter.RegexStringComparator {
	t.Helper()
	r, err := filter.NewRegexStringComparator(expr, filter.DefaultRegexFlags, filter.CharsetUTF8, filter.RegexEngineJava)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestScanCloseAndCancel checks that a scanner closed early, or whose
// caller gave up, releases the server's scanner.
func TestScanCloseAndCancel(t *testing.T) {
	p := sharedServer(t)
	c := newClient(t, p)
	const tbl = "scanclose"
	fill500(t, c, tbl)
	ctx := testCtx(t, time.Minute)
	open := func() float64 {
		t.Helper()
		return scrape(t, p)["hbase_regionserver_openScannerCount"]
	}
	base := open()

	// Stop early and Close.
	sc := c.Scan(&client.Scan{Table: tbl, Caching: 10})
	for i := 0; i < 15; i++ {
		r, err := sc.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprintf("row-%03d", i); string(r.Row()) != want {
			t.Fatalf("row %d: %s, want %s", i, r.Row(), want)
		}
	}
	if n := open(); n != base+1 {
		t.Fatalf("open scanners while scanning: %v, want %v", n, base+1)
	}
	if err := sc.Close(); err != nil {
		t.Fatal(err)
	}
	if n := open(); n != base {
		t.Fatalf("open scanners after Close: %v, want %v", n, base)
	}
	if _, err := sc.Next(ctx); err != io.EOF {
		t.Fatalf("Next after Close: %v, want io.EOF", err)
	}

	// Cancel the caller's context in the middle of a scan.
	cctx, cancel := context.WithCancel(ctx)
	sc = c.Scan(&client.Scan{Table: tbl, Caching: 5})
	got := 0
	for ; got < 7; got++ {
		if _, err := sc.Next(cctx); err != nil {
			t.Fatal(err)
		}
	}
	cancel()
	var err error
	var rows []string
	for i := 0; i < 10 && err == nil; i++ {
		var r *client.Result
		if r, err = sc.Next(cctx); err == nil {
			rows = append(rows, string(r.Row()))
		}
	}
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Next after cancel: %v, want context.Canceled", err)
	}
	// The rows already fetched (caching 5: up to row-009) are returned,
	// no more.
	equalStrings(t, "rows after cancel", rows, rowNames(7, 10, 1))
	sc.Close()
	// The client releases the server scanner (asynchronously) when the
	// caller gives up, rather than leaving it to its lease.
	deadline := time.Now().Add(5 * time.Second)
	for open() != base && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := open(); n != base {
		t.Fatalf("open scanners after a canceled scan was closed: %v, want %v", n, base)
	}
	// The client still works.
	if rs := scanAll(t, c, &client.Scan{Table: tbl, StartRow: []byte("row-123"), Limit: 3}); len(rs) != 3 || string(rs[2].Row()) != "row-125" {
		t.Fatalf("scan after cancel: %q", rowKeys(rs))
	}
}

// TestScannerLease starts a server with a 2 s scanner lease: an idle
// scanner expires with UnknownScannerException; one renewed lives on.
func TestScannerLease(t *testing.T) {
	p := startServer(t, "", "hbase.client.scanner.timeout.period=2000")
	c := newClient(t, p)
	const tbl = "lease"
	fill500(t, c, tbl)
	ctx := testCtx(t, time.Minute)
	idle := c.Scan(&client.Scan{Table: tbl, Caching: 2})
	renewed := c.Scan(&client.Scan{Table: tbl, Caching: 2})
	defer idle.Close()
	defer renewed.Close()
	for _, sc := range []*client.Scanner{idle, renewed} {
		if _, err := sc.Next(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// Renew one every 700 ms for 3.5 s; leave the other idle.
	for i := 0; i < 5; i++ {
		time.Sleep(700 * time.Millisecond)
		if err := renewed.Renew(ctx); err != nil {
			t.Fatalf("renew after %d ms: %v", 700*(i+1), err)
		}
	}
	// Each has one buffered row (caching 2); the next fetch goes to the
	// server.
	var rows []string
	for i := 0; i < 5; i++ {
		r, err := renewed.Next(ctx)
		if err != nil {
			t.Fatalf("renewed scanner: %v", err)
		}
		rows = append(rows, string(r.Row()))
	}
	equalStrings(t, "renewed scanner rows", rows, rowNames(1, 6, 1))
	if _, err := idle.Next(ctx); err != nil {
		t.Fatalf("idle scanner's buffered row: %v", err)
	}
	_, err := idle.Next(ctx)
	if !client.IsException(err, ipc.ClassUnknownScannerException) {
		t.Fatalf("idle scanner after 3.5 s: %v, want UnknownScannerException", err)
	}
}

// TestCanceledContext checks that calls whose context is already canceled
// fail with the context's error and are not sent: a put is not applied.
func TestCanceledContext(t *testing.T) {
	c := sharedClient(t)
	const tbl = "canceled"
	createTable(t, c, client.TableDescriptor{Name: tbl, Families: fams("cf")})
	get(t, c, &client.Get{Table: tbl, Row: []byte("warm")}) // locations cached
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	cf, q := []byte("cf"), []byte("q")
	// Without the check, the client sent such calls and raced their
	// answers against the context: about one put in three was applied.
	for i := 0; i < 200; i++ {
		row := []byte(fmt.Sprintf("row-%03d", i))
		if _, err := c.Mutate(ctx, client.NewPut(tbl, row).Add(cf, q, []byte("x"))); !errors.Is(err, context.Canceled) {
			t.Fatalf("put with a canceled context: %v, want context.Canceled", err)
		}
		if _, err := c.Get(ctx, &client.Get{Table: tbl, Row: row}); !errors.Is(err, context.Canceled) {
			t.Fatalf("get with a canceled context: %v, want context.Canceled", err)
		}
	}
	if _, err := c.IncrementColumn(ctx, tbl, []byte("n"), cf, q, 1); !errors.Is(err, context.Canceled) {
		t.Fatalf("increment with a canceled context: %v, want context.Canceled", err)
	}
	if rs := scanAll(t, c, &client.Scan{Table: tbl}); len(rs) != 0 {
		t.Fatalf("calls with a canceled context were applied: rows %q", rowKeys(rs))
	}
}
