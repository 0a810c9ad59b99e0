package integration

import (
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/regionkv/regionkv/client"
	"github.com/regionkv/regionkv/filter"
)

// TestAppendIncrement checks that Append returns the new value and
// Increment one 8-byte cell.
func TestAppendIncrement(t *testing.T) {
	c := sharedClient(t)
	const tbl = "appendincr"
	createTable(t, c, client.TableDescriptor{Name: tbl, Families: fams("cf")})
	ctx := testCtx(t, time.Minute)
	cf := []byte("cf")
	row := []byte("r")

	res := mutate(t, c, client.NewAppend(tbl, row).Add(cf, []byte("s"), []byte("ab")))
	equalStrings(t, "first append", cellStrings(res.Cells, false), []string{"r/cf:s=ab"})
	res = mutate(t, c, client.NewAppend(tbl, row).Add(cf, []byte("s"), []byte("cd")).Add(cf, []byte("t"), []byte("x")))
	equalStrings(t, "second append", cellStrings(res.Cells, false), []string{"r/cf:s=abcd", "r/cf:t=x"})
	equalStrings(t, "get after appends", cellStrings(get(t, c, &client.Get{Table: tbl, Row: row}).Cells, false),
		[]string{"r/cf:s=abcd", "r/cf:t=x"})

	res = mutate(t, c, client.NewIncrement(tbl, row).AddInt(cf, []byte("n"), 5))
	if len(res.Cells) != 1 || len(res.Cells[0].Value) != 8 || string(res.Cells[0].Qualifier) != "n" {
		t.Fatalf("increment: %d cells %q, want one 8-byte cell of cf:n", len(res.Cells), cellStrings(res.Cells, false))
	}
	if n, _ := client.Int64(res.Cells[0].Value); n != 5 {
		t.Fatalf("increment by 5 from nothing: %d", n)
	}
	n, err := c.IncrementColumn(ctx, tbl, row, cf, []byte("n"), -7)
	if err != nil || n != -2 {
		t.Fatalf("increment by -7: %d, %v; want -2", n, err)
	}
	res = mutate(t, c, client.NewIncrement(tbl, row).AddInt(cf, []byte("n"), 0).AddInt(cf, []byte("m"), 3))
	var got []string
	for _, cell := range res.Cells {
		v, err := client.Int64(cell.Value)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%s=%d", cell.Qualifier, v))
	}
	equalStrings(t, "two-column increment", got, []string{"m=3", "n=-2"})
	stored, err := client.Int64(get(t, c, &client.Get{Table: tbl, Row: row, Columns: []client.Column{client.Col("cf", "n")}}).Value(cf, []byte("n")))
	if err != nil || stored != -2 {
		t.Fatalf("stored counter: %d, %v", stored, err)
	}
	// Incrementing a value that is not 8 bytes is refused.
	if _, err := c.IncrementColumn(ctx, tbl, row, cf, []byte("s"), 1); err == nil {
		t.Fatal("incrementing the 4-byte value abcd succeeded")
	}
	if v := get(t, c, &client.Get{Table: tbl, Row: row}).Value(cf, []byte("s")); string(v) != "abcd" {
		t.Fatalf("refused increment changed the value to %q", v)
	}
}

// TestCheckAndMutate checks CheckAndPut with every compare type,
// several-column "if not exists", and filter conditions.
func TestCheckAndMutate(t *testing.T) {
	c := sharedClient(t)
	const tbl = "checkandmutate"
	createTable(t, c, client.TableDescriptor{Name: tbl, Families: fams("cf")})
	ctx := testCtx(t, time.Minute)
	cf := []byte("cf")

	t.Run("CompareTypes", func(t *testing.T) {
		row := []byte("cmp")
		put(t, c, tbl, "cmp", "cf", "v", "m")
		cases := []struct {
			op      filter.CompareOp
			operand string
			want    bool
		}{
			// The operand is compared with the stored value "m":
			// operand OP value, as HBase does.
			{filter.CompareEqual, "m", true},
			{filter.CompareEqual, "n", false},
			{filter.CompareNotEqual, "m", false},
			{filter.CompareNotEqual, "a", true},
			{filter.CompareGreater, "z", true},
			{filter.CompareGreater, "a", false},
			{filter.CompareGreater, "m", false},
			{filter.CompareGreaterOrEqual, "m", true},
			{filter.CompareGreaterOrEqual, "l", false},
			{filter.CompareLess, "a", true},
			{filter.CompareLess, "z", false},
			{filter.CompareLessOrEqual, "m", true},
			{filter.CompareLessOrEqual, "n", false},
		}
		for i, tc := range cases {
			marker := []byte(fmt.Sprintf("try%02d", i))
			ok, err := c.CheckAndMutate(ctx, client.Condition{Family: cf, Qualifier: []byte("v"), Op: tc.op, Value: []byte(tc.operand)},
				client.NewPut(tbl, row).Add(cf, marker, []byte("x")))
			if err != nil {
				t.Fatalf("%v %q: %v", tc.op, tc.operand, err)
			}
			if ok != tc.want {
				t.Errorf("check %q %v m: processed=%v, want %v", tc.operand, tc.op, ok, tc.want)
			}
			written := get(t, c, &client.Get{Table: tbl, Row: row}).Value(cf, marker) != nil
			if written != tc.want {
				t.Errorf("check %q %v m: put applied=%v, want %v", tc.operand, tc.op, written, tc.want)
			}
		}
		// Other comparators in conditions.
		ok, err := c.CheckAndMutate(ctx, client.Condition{Family: cf, Qualifier: []byte("v"), Op: filter.CompareEqual,
			Comparator: filter.NewBinaryPrefixComparator([]byte("m"))}, client.NewPut(tbl, row).Add(cf, []byte("prefix"), []byte("x")))
		if err != nil || !ok {
			t.Fatalf("binary prefix condition: %v, %v", ok, err)
		}
		// A check of a missing column with a value fails.
		ok, err = c.CheckAndMutate(ctx, client.IfEquals(cf, []byte("missing"), []byte("m")), client.NewPut(tbl, row).Add(cf, []byte("never"), []byte("x")))
		if err != nil || ok {
			t.Fatalf("equals on a missing column: %v, %v", ok, err)
		}
		// A delete can be the mutation.
		ok, err = c.CheckAndMutate(ctx, client.IfEquals(cf, []byte("v"), []byte("m")), client.NewDelete(tbl, row).DeleteColumns(cf, []byte("v"), client.LatestTimestamp))
		if err != nil || !ok {
			t.Fatalf("check-and-delete: %v, %v", ok, err)
		}
		if v := get(t, c, &client.Get{Table: tbl, Row: row}).Value(cf, []byte("v")); v != nil {
			t.Fatalf("check-and-delete left %q", v)
		}
	})

	t.Run("SeveralColumnsIfNotExists", func(t *testing.T) {
		row := []byte("create-once")
		put(t, c, tbl, "create-once", "cf", "old", "deleted by the first")
		put(t, c, tbl, "create-once", "cf", "keep", "would be deleted by the second")
		muts := func(v, del string) []*client.Mutation {
			return []*client.Mutation{
				client.NewPut(tbl, row).Add(cf, []byte("owner"), []byte(v)).Add(cf, []byte("created"), []byte(v)),
				client.NewPut(tbl, row).Add(cf, []byte("extra"), []byte(v)),
				client.NewDelete(tbl, row).DeleteColumns(cf, []byte(del), client.LatestTimestamp),
			}
		}
		ok, err := c.CheckAndMutate(ctx, client.IfNotExists(cf, []byte("owner")), muts("first", "old")...)
		if err != nil || !ok {
			t.Fatalf("first if-not-exists: %v, %v", ok, err)
		}
		ok, err = c.CheckAndMutate(ctx, client.IfNotExists(cf, []byte("owner")), muts("second", "keep")...)
		if err != nil || ok {
			t.Fatalf("second if-not-exists: %v, %v; want false", ok, err)
		}
		equalStrings(t, "row after two if-not-exists", cellStrings(get(t, c, &client.Get{Table: tbl, Row: row}).Cells, false),
			[]string{"create-once/cf:created=first", "create-once/cf:extra=first", "create-once/cf:keep=would be deleted by the second",
				"create-once/cf:owner=first"})
	})

	t.Run("FilterCondition", func(t *testing.T) {
		row := []byte("filtered")
		put(t, c, tbl, "filtered", "cf", "status", "ready")
		put(t, c, tbl, "filtered", "cf", "count", "7")
		ready := filter.NewSingleColumnValueFilter(cf, []byte("status"), filter.CompareEqual, filter.NewBinaryComparator([]byte("ready")))
		ready.SetFilterIfMissing(true)
		ok, err := c.CheckAndMutate(ctx, client.IfFilter(ready), client.NewPut(tbl, row).Add(cf, []byte("status"), []byte("running")))
		if err != nil || !ok {
			t.Fatalf("filter condition that holds: %v, %v", ok, err)
		}
		// Now status is "running": the same condition fails.
		ready = filter.NewSingleColumnValueFilter(cf, []byte("status"), filter.CompareEqual, filter.NewBinaryComparator([]byte("ready")))
		ready.SetFilterIfMissing(true)
		ok, err = c.CheckAndMutate(ctx, client.IfFilter(ready), client.NewPut(tbl, row).Add(cf, []byte("status"), []byte("again")))
		if err != nil || ok {
			t.Fatalf("filter condition that fails: %v, %v", ok, err)
		}
		// A filter list: status starts with "run" AND count is 7; with
		// several mutations.
		both := filter.NewFilterList(filter.MustPassAll,
			mustPassIfMissing(filter.NewSingleColumnValueFilter(cf, []byte("status"), filter.CompareEqual, filter.NewBinaryPrefixComparator([]byte("run")))),
			mustPassIfMissing(filter.NewSingleColumnValueFilter(cf, []byte("count"), filter.CompareEqual, filter.NewBinaryComparator([]byte("7")))))
		ok, err = c.CheckAndMutate(ctx, client.IfFilter(both),
			client.NewPut(tbl, row).Add(cf, []byte("status"), []byte("done")),
			client.NewDelete(tbl, row).DeleteColumns(cf, []byte("count"), client.LatestTimestamp))
		if err != nil || !ok {
			t.Fatalf("filter list condition: %v, %v", ok, err)
		}
		equalStrings(t, "row after filter conditions", cellStrings(get(t, c, &client.Get{Table: tbl, Row: row}).Cells, false),
			[]string{"filtered/cf:status=done"})
	})
}

func mustPassIfMissing(f *filter.SingleColumnValueFilter) *filter.SingleColumnValueFilter {
	f.SetFilterIfMissing(true)
	return f
}

// TestIncrementRace has 64 goroutines increment one counter: no update is
// lost, and every increment sees a distinct new value.
func TestIncrementRace(t *testing.T) {
	c := sharedClient(t)
	const tbl = "incrrace"
	createTable(t, c, client.TableDescriptor{Name: tbl, Families: fams("cf")})
	ctx := testCtx(t, 2*time.Minute)
	const workers, each = 64, 40
	row, cf, q := []byte("counter"), []byte("cf"), []byte("n")
	var mu sync.Mutex
	var seen []int64
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				n, err := c.IncrementColumn(ctx, tbl, row, cf, q, 1)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				seen = append(seen, n)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	total, err := client.Int64(get(t, c, &client.Get{Table: tbl, Row: row}).Value(cf, q))
	if err != nil || total != workers*each {
		t.Fatalf("counter after %d increments: %d, %v", workers*each, total, err)
	}
	sort.Slice(seen, func(i, j int) bool { return seen[i] < seen[j] })
	for i, n := range seen {
		if n != int64(i+1) {
			t.Fatalf("increments returned %d at position %d of the sorted results: an update was lost or seen twice", n, i)
		}
	}
}
