package integration

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/regionkv/regionkv/client"
	"github.com/regionkv/regionkv/encoding"
	"github.com/regionkv/regionkv/ipc"
)

// TestGetPutBasics covers §5's Get/Put basics against one table.
func TestGetPutBasics(t *testing.T) {
	c := sharedClient(t)
	const tbl = "basics"
	createTable(t, c, client.TableDescriptor{Name: tbl, Families: fams("cf", "cf2")})
	ctx := testCtx(t, 2*time.Minute)
	cf, q := []byte("cf"), []byte("q")

	t.Run("MissingRow", func(t *testing.T) {
		res := get(t, c, &client.Get{Table: tbl, Row: []byte("no-such-row")})
		if !res.Empty() {
			t.Fatalf("missing row: got cells %q", cellStrings(res.Cells, true))
		}
		res = get(t, c, &client.Get{Table: tbl, Row: []byte("no-such-row"), ExistenceOnly: true})
		if res.Exists {
			t.Fatal("missing row: Exists is true")
		}
		put(t, c, tbl, "present", "cf", "q", "v")
		res = get(t, c, &client.Get{Table: tbl, Row: []byte("present"), ExistenceOnly: true})
		if !res.Exists || len(res.Cells) != 0 {
			t.Fatalf("existing row: Exists=%v with %d cells, want true with none", res.Exists, len(res.Cells))
		}
	})

	t.Run("UnknownTable", func(t *testing.T) {
		_, err := c.Get(ctx, &client.Get{Table: "no_such_table", Row: []byte("r")})
		if !client.IsException(err, "org.apache.hadoop.hbase.TableNotFoundException") {
			t.Fatalf("get from an unknown table: %v, want TableNotFoundException", err)
		}
		_, err = c.Mutate(ctx, client.NewPut("no_such_table", []byte("r")).Add(cf, q, []byte("v")))
		if !client.IsException(err, "TableNotFoundException") {
			t.Fatalf("put to an unknown table: %v, want TableNotFoundException", err)
		}
	})

	t.Run("UnknownFamily", func(t *testing.T) {
		_, err := c.Mutate(ctx, client.NewPut(tbl, []byte("r")).Add([]byte("nope"), q, []byte("v")))
		if !client.IsException(err, "org.apache.hadoop.hbase.regionserver.NoSuchColumnFamilyException") {
			t.Fatalf("put to an unknown family: %v, want NoSuchColumnFamilyException", err)
		}
		_, err = c.Get(ctx, &client.Get{Table: tbl, Row: []byte("r"), Columns: []client.Column{client.Fam("nope")}})
		if !client.IsException(err, "NoSuchColumnFamilyException") {
			t.Fatalf("get of an unknown family: %v, want NoSuchColumnFamilyException", err)
		}
		// Nothing of the refused put was written.
		if res := get(t, c, &client.Get{Table: tbl, Row: []byte("r")}); !res.Empty() {
			t.Fatalf("refused put left cells %q", cellStrings(res.Cells, false))
		}
	})

	t.Run("RowKeyLength", func(t *testing.T) {
		longest := bytes.Repeat([]byte("k"), math.MaxInt16) // 32767 bytes: allowed
		mutate(t, c, client.NewPut(tbl, longest).Add(cf, q, []byte("long")))
		res := get(t, c, &client.Get{Table: tbl, Row: longest})
		if len(res.Cells) != 1 || !bytes.Equal(res.Cells[0].Row, longest) || string(res.Cells[0].Value) != "long" {
			t.Fatalf("row of 32767 bytes: got %d cells", len(res.Cells))
		}
		tooLong := bytes.Repeat([]byte("k"), math.MaxInt16+1)
		// The client's cellblock encoder refuses it before sending...
		if _, err := c.Mutate(ctx, client.NewPut(tbl, tooLong).Add(cf, q, []byte("x"))); err == nil {
			t.Fatal("put of a 32768-byte row succeeded")
		}
		// ...and the server refuses it when it travels inline.
		inline := newClient(t, sharedServer(t), func(o *client.Options) { o.NoCellBlocks = true })
		_, err := inline.Mutate(ctx, client.NewPut(tbl, tooLong).Add(cf, q, []byte("x")))
		if !client.IsException(err, ipc.ClassDoNotRetryIOException) {
			t.Fatalf("inline put of a 32768-byte row: %v, want DoNotRetryIOException", err)
		}
		_, err = c.Get(ctx, &client.Get{Table: tbl, Row: tooLong})
		if !client.IsException(err, ipc.ClassDoNotRetryIOException) {
			t.Fatalf("get of a 32768-byte row: %v, want DoNotRetryIOException", err)
		}
	})

	t.Run("ManyCells", func(t *testing.T) {
		const n = 10000
		row := []byte("wide")
		m := client.NewPut(tbl, row)
		for i := 0; i < n; i++ {
			m.Add(cf, []byte(fmt.Sprintf("q%05d", i)), []byte(fmt.Sprintf("v%d", i)))
		}
		mutate(t, c, m)
		check := func(cells []*client.Cell) {
			t.Helper()
			if len(cells) != n {
				t.Fatalf("wide row: %d cells, want %d", len(cells), n)
			}
			for i, cell := range cells {
				if string(cell.Qualifier) != fmt.Sprintf("q%05d", i) || string(cell.Value) != fmt.Sprintf("v%d", i) {
					t.Fatalf("wide row: cell %d is %s=%s", i, cell.Qualifier, cell.Value)
				}
			}
		}
		check(get(t, c, &client.Get{Table: tbl, Row: row}).Cells)
		rs := scanAll(t, c, &client.Scan{Table: tbl, StartRow: row, StopRow: row, StopInclusive: true})
		if len(rs) != 1 {
			t.Fatalf("scan of the wide row: %d results, want 1", len(rs))
		}
		check(rs[0].Cells)
		// Scan.Batch splits the row into parts of 1000 cells.
		rs = scanAll(t, c, &client.Scan{Table: tbl, StartRow: row, StopRow: row, StopInclusive: true, Batch: 1000})
		if len(rs) != n/1000 {
			t.Fatalf("scan of the wide row with batch 1000: %d results, want %d", len(rs), n/1000)
		}
		var joined []*client.Cell
		for _, r := range rs {
			if len(r.Cells) != 1000 {
				t.Fatalf("scan with batch 1000: a part of %d cells", len(r.Cells))
			}
			joined = append(joined, r.Cells...)
		}
		check(joined)
		// A small MaxResultSize makes the server send partial rows, which
		// the client joins back, or hands over as they are.
		rs = scanAll(t, c, &client.Scan{Table: tbl, StartRow: row, StopRow: row, StopInclusive: true, MaxResultSize: 8 << 10})
		if len(rs) != 1 {
			t.Fatalf("scan of the wide row with small responses: %d results, want 1", len(rs))
		}
		check(rs[0].Cells)
		rs = scanAll(t, c, &client.Scan{Table: tbl, StartRow: row, StopRow: row, StopInclusive: true, MaxResultSize: 8 << 10, AllowPartials: true})
		joined = nil
		for i, r := range rs {
			if r.Partial != (i < len(rs)-1) {
				t.Fatalf("part %d of %d: Partial=%v", i, len(rs), r.Partial)
			}
			joined = append(joined, r.Cells...)
		}
		if len(rs) < 2 {
			t.Fatalf("scan with 8 KiB responses and partials allowed: %d results", len(rs))
		}
		check(joined)
	})

	t.Run("ConcurrentPutGet", func(t *testing.T) {
		const n = 1000
		var wg sync.WaitGroup
		errs := make(chan error, n)
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				row := []byte(fmt.Sprintf("conc-%04d", i))
				val := []byte(fmt.Sprintf("value-%d", i))
				if _, err := c.Mutate(ctx, client.NewPut(tbl, row).Add(cf, q, val)); err != nil {
					errs <- fmt.Errorf("put %s: %w", row, err)
					return
				}
				res, err := c.Get(ctx, &client.Get{Table: tbl, Row: row})
				if err != nil {
					errs <- fmt.Errorf("get %s: %w", row, err)
					return
				}
				if got := res.Value(cf, q); !bytes.Equal(got, val) {
					errs <- fmt.Errorf("get %s: %q, want %q", row, got, val)
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		rs := scanAll(t, c, &client.Scan{Table: tbl, StartRow: []byte("conc-"), StopRow: []byte("conc."), Caching: 333})
		if len(rs) != n {
			t.Fatalf("scan after concurrent puts: %d rows, want %d", len(rs), n)
		}
		for i, r := range rs {
			if string(r.Row()) != fmt.Sprintf("conc-%04d", i) || string(r.Value(cf, q)) != fmt.Sprintf("value-%d", i) {
				t.Fatalf("row %d: %s=%s", i, r.Row(), r.Value(cf, q))
			}
		}
	})

	t.Run("Timestamps", func(t *testing.T) {
		// Client-set timestamps are kept as given.
		mutate(t, c, client.NewPut(tbl, []byte("ts-client")).AddAt(cf, q, 12345, []byte("old")))
		mutate(t, c, &client.Mutation{Table: tbl, Row: []byte("ts-client"), Type: client.MutationPut, Timestamp: 777,
			Cells: []client.Cell{{Family: cf, Qualifier: []byte("q2"), Timestamp: client.LatestTimestamp, Type: encoding.TypePut, Value: []byte("m")}}})
		res := get(t, c, &client.Get{Table: tbl, Row: []byte("ts-client")})
		equalStrings(t, "client timestamps", cellStrings(res.Cells, true),
			[]string{"ts-client/cf:q@12345=old", "ts-client/cf:q2@777=m"})

		// Server-set timestamps (LATEST_TIMESTAMP) come from its clock and
		// increase.
		before := time.Now().UnixMilli()
		var stamps []int64
		for i := 0; i < 5; i++ {
			row := fmt.Sprintf("ts-server-%d", i)
			put(t, c, tbl, row, "cf", "q", "v")
			cell := get(t, c, &client.Get{Table: tbl, Row: []byte(row)}).Cell(cf, q)
			if cell == nil {
				t.Fatalf("%s: no cell", row)
			}
			stamps = append(stamps, cell.Timestamp)
			time.Sleep(3 * time.Millisecond)
		}
		after := time.Now().UnixMilli()
		for i, ts := range stamps {
			if ts == client.LatestTimestamp || ts < before-1000 || ts > after+1000 {
				t.Fatalf("server stamp %d = %d, outside [%d, %d]", i, ts, before, after)
			}
			if i > 0 && ts <= stamps[i-1] {
				t.Fatalf("server stamps do not increase: %v", stamps)
			}
		}
	})
}

// TestPreSplitTable checks a table of 4 regions: every region answers
// gets, puts and scans, and hbase:meta lists the regions.
func TestPreSplitTable(t *testing.T) {
	c := sharedClient(t)
	const tbl = "presplit4"
	createTable(t, c, client.TableDescriptor{Name: tbl, Families: fams("cf")}, "g", "n", "t")
	regions, err := c.Regions(testCtx(t, 30*time.Second), tbl)
	if err != nil {
		t.Fatal(err)
	}
	var bounds []string
	for _, r := range regions {
		bounds = append(bounds, fmt.Sprintf("[%s,%s)", r.StartKey, r.EndKey))
		if r.Server == "" {
			t.Errorf("region %s is not assigned", r.Name)
		}
	}
	equalStrings(t, "region bounds", bounds, []string{"[,g)", "[g,n)", "[n,t)", "[t,)"})
	rows := []string{"apple", "grape", "mango", "nectarine", "peach", "tomato", "zucchini"}
	for _, r := range rows {
		put(t, c, tbl, r, "cf", "fruit", strings.ToUpper(r))
	}
	for _, r := range rows {
		res := get(t, c, &client.Get{Table: tbl, Row: []byte(r)})
		if got := string(res.Value([]byte("cf"), []byte("fruit"))); got != strings.ToUpper(r) {
			t.Errorf("get %s: %q", r, got)
		}
	}
	equalStrings(t, "scan across regions", rowKeys(scanAll(t, c, &client.Scan{Table: tbl})), rows)
	equalStrings(t, "scan [grape, peach)", rowKeys(scanAll(t, c, &client.Scan{Table: tbl, StartRow: []byte("grape"), StopRow: []byte("peach")})),
		[]string{"grape", "mango", "nectarine"})
	// Each region scanned on its own answers only its rows.
	var perRegion []string
	for _, r := range regions {
		rs := scanAll(t, c, &client.Scan{Table: tbl, StartRow: r.StartKey, StopRow: r.EndKey})
		perRegion = append(perRegion, strings.Join(rowKeys(rs), "+"))
	}
	equalStrings(t, "rows per region", perRegion, []string{"apple", "grape+mango", "nectarine+peach", "tomato+zucchini"})
}
