package integration

import (
	"bytes"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/regionkv/regionkv/client"
	"github.com/regionkv/regionkv/ipc"
)

// TestMulti sends one batch of gets and mutations over two tables and
// three regions, some of which fail on their own.
func TestMulti(t *testing.T) {
	c := sharedClient(t)
	const tbl, tbl2 = "multi", "multi_other"
	createTable(t, c, client.TableDescriptor{Name: tbl, Families: fams("cf")}, "m")
	createTable(t, c, client.TableDescriptor{Name: tbl2, Families: fams("f")})
	cf, f, q := []byte("cf"), []byte("f"), []byte("q")
	put(t, c, tbl, "a-existing", "cf", "q", "A")
	put(t, c, tbl, "z-existing", "cf", "q", "Z")
	put(t, c, tbl, "z-old", "cf", "q", "old")
	put(t, c, tbl2, "row", "f", "q", "other")

	actions := []client.Action{
		/* 0 */ client.NewPut(tbl, []byte("a-new")).Add(cf, q, []byte("a1")),
		/* 1 */ client.NewPut(tbl, []byte("z-new")).Add(cf, q, []byte("z1")),
		/* 2 */ &client.Get{Table: tbl, Row: []byte("a-existing")},
		/* 3 */ client.NewPut(tbl, []byte("z-bad")).Add([]byte("nope"), q, []byte("x")),
		/* 4 */ client.NewIncrement(tbl, []byte("z-counter")).AddInt(cf, q, 41),
		/* 5 */ client.NewDelete(tbl, []byte("z-old")),
		/* 6 */ &client.Get{Table: tbl2, Row: []byte("row")},
		/* 7 */ client.NewPut("multi_no_such_table", []byte("r")).Add(cf, q, []byte("x")),
		/* 8 */ &client.Get{Table: tbl, Row: []byte("a-new")},
		/* 9 */ client.NewAppend(tbl2, []byte("row")).Add(f, q, []byte("+more")),
		/* 10 */ &client.Get{Table: tbl, Row: bytes.Repeat([]byte("z"), math.MaxInt16+1)},
		/* 11 */ &client.Get{Table: tbl, Row: []byte("z-missing")},
		/* 12 */ &client.Get{Table: tbl, Row: []byte("z-existing"), Columns: []client.Column{client.Fam("nope")}},
	}
	res, err := c.Batch(testCtx(t, time.Minute), actions)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != len(actions) {
		t.Fatalf("%d results for %d actions", len(res), len(actions))
	}
	ok := func(i int) *client.Result {
		t.Helper()
		if res[i].Err != nil {
			t.Fatalf("action %d: %v", i, res[i].Err)
		}
		if res[i].Result == nil {
			t.Fatalf("action %d: no result", i)
		}
		return res[i].Result
	}
	fails := func(i int, class string) {
		t.Helper()
		if !client.IsException(res[i].Err, class) {
			t.Errorf("action %d: error %v, want %s", i, res[i].Err, class)
		}
	}
	for _, i := range []int{0, 1, 5} {
		if r := ok(i); !r.Empty() {
			t.Errorf("action %d: put/delete returned cells %q", i, cellStrings(r.Cells, false))
		}
	}
	equalStrings(t, "get a-existing", cellStrings(ok(2).Cells, false), []string{"a-existing/cf:q=A"})
	fails(3, "NoSuchColumnFamilyException")
	if r := ok(4); len(r.Cells) != 1 {
		t.Errorf("increment: %d cells", len(r.Cells))
	} else if n, _ := client.Int64(r.Cells[0].Value); n != 41 {
		t.Errorf("increment: %d, want 41", n)
	}
	equalStrings(t, "get in the other table", cellStrings(ok(6).Cells, false), []string{"row/f:q=other"})
	fails(7, "TableNotFoundException")
	equalStrings(t, "get after a put of the same region, same batch", cellStrings(ok(8).Cells, false), []string{"a-new/cf:q=a1"})
	equalStrings(t, "append", cellStrings(ok(9).Cells, false), []string{"row/f:q=other+more"})
	fails(10, ipc.ClassDoNotRetryIOException)
	if r := ok(11); !r.Empty() {
		t.Errorf("get of a missing row: %q", cellStrings(r.Cells, false))
	}
	fails(12, "NoSuchColumnFamilyException")

	// The batch's effects, read back one by one.
	var all []string
	for _, r := range scanAll(t, c, &client.Scan{Table: tbl}) {
		for _, cell := range r.Cells {
			if string(cell.Row) == "z-counter" {
				n, _ := client.Int64(cell.Value)
				all = append(all, fmt.Sprintf("z-counter=%d", n))
				continue
			}
			all = append(all, string(cell.Row)+"="+string(cell.Value))
		}
	}
	equalStrings(t, "table after the batch", all, []string{"a-existing=A", "a-new=a1", "z-counter=41", "z-existing=Z", "z-new=z1"})

	// A batch of only gets across both regions.
	var gets []client.Action
	for _, r := range []string{"z-new", "a-new", "nothing", "a-existing"} {
		gets = append(gets, &client.Get{Table: tbl, Row: []byte(r)})
	}
	res, err = c.Batch(testCtx(t, time.Minute), gets)
	if err != nil {
		t.Fatal(err)
	}
	var vals []string
	for i := range res {
		vals = append(vals, string(ok(i).Value(cf, q)))
	}
	equalStrings(t, "gets batch", vals, []string{"z1", "a1", "", "A"})
}
