package integration

import (
	be "encoding/binary"
	"strings"
	"testing"

	"github.com/regionkv/regionkv/client"
	"github.com/regionkv/regionkv/filter"
)

// TestFilters runs HBase's filters and comparators in scans (and gets) on
// the server, on a table of two regions.
func TestFilters(t *testing.T) {
	c := sharedClient(t)
	const tbl = "filters"
	createTable(t, c, client.TableDescriptor{Name: tbl, Families: fams("cf", "meta")}, "b")
	type fruit struct{ row, color, price, origin string }
	fruits := []fruit{
		{"apple", "red", "3", "us"},
		{"apricot", "orange", "5", ""},
		{"banana", "yellow", "2", "ec"},
		{"blueberry", "blue", "8", ""},
		{"cherry", "red", "4", "tr"},
	}
	cf, meta := []byte("cf"), []byte("meta")
	for _, f := range fruits {
		m := client.NewPut(tbl, []byte(f.row)).Add(cf, []byte("color"), []byte(f.color)).Add(cf, []byte("price"), []byte(f.price))
		if f.origin != "" {
			m.Add(meta, []byte("origin"), []byte(f.origin))
		}
		mutate(t, c, m)
	}
	// render gives each row as "row: family:qualifier=value ...".
	render := func(rs []*client.Result) []string {
		var out []string
		for _, r := range rs {
			var cells []string
			for _, c := range r.Cells {
				cells = append(cells, string(c.Family)+":"+string(c.Qualifier)+"="+string(c.Value))
			}
			out = append(out, string(r.Row())+": "+strings.Join(cells, " "))
		}
		return out
	}
	scan := func(f filter.Filter) []string {
		t.Helper()
		return render(scanAll(t, c, &client.Scan{Table: tbl, Filter: f}))
	}
	rows := func(f filter.Filter) []string {
		t.Helper()
		return rowKeys(scanAll(t, c, &client.Scan{Table: tbl, Filter: f}))
	}
	bin := func(s string) *filter.BinaryComparator { return filter.NewBinaryComparator([]byte(s)) }
	scvf := func(fam, q string, op filter.CompareOp, cmp filter.ByteArrayComparable, ifMissing bool) *filter.SingleColumnValueFilter {
		f := filter.NewSingleColumnValueFilter([]byte(fam), []byte(q), op, cmp)
		f.SetFilterIfMissing(ifMissing)
		return f
	}
	regex := func(expr string) *filter.RegexStringComparator {
		r, err := filter.NewRegexStringComparator(expr, filter.DefaultRegexFlags, filter.CharsetUTF8, filter.RegexEngineJava)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}

	t.Run("PrefixFilter", func(t *testing.T) {
		equalStrings(t, "prefix ap", scan(filter.NewPrefixFilter([]byte("ap"))), []string{
			"apple: cf:color=red cf:price=3 meta:origin=us", "apricot: cf:color=orange cf:price=5"})
		equalStrings(t, "prefix b (second region)", rows(filter.NewPrefixFilter([]byte("b"))), []string{"banana", "blueberry"})
		equalStrings(t, "prefix z", rows(filter.NewPrefixFilter([]byte("z"))), nil)
	})
	t.Run("KeyOnlyFilter", func(t *testing.T) {
		equalStrings(t, "key only", scan(filter.NewFilterList(filter.MustPassAll, filter.NewKeyOnlyFilter(false), filter.NewPrefixFilter([]byte("apple")))), []string{
			"apple: cf:color= cf:price= meta:origin="})
		rs := scanAll(t, c, &client.Scan{Table: tbl, Filter: filter.NewKeyOnlyFilter(true), StartRow: []byte("banana"), StopRow: []byte("banana"), StopInclusive: true})
		if len(rs) != 1 || len(rs[0].Cells) != 3 {
			t.Fatalf("key only with lengths: %q", render(rs))
		}
		for i, want := range []uint32{6, 1, 2} { // "yellow", "2", "ec"
			if v := rs[0].Cells[i].Value; len(v) != 4 || be.BigEndian.Uint32(v) != want {
				t.Errorf("key only with lengths: cell %d value %v, want the length %d", i, v, want)
			}
		}
	})
	t.Run("FirstKeyOnlyFilter", func(t *testing.T) {
		equalStrings(t, "first key only", scan(filter.NewFirstKeyOnlyFilter()), []string{
			"apple: cf:color=red", "apricot: cf:color=orange", "banana: cf:color=yellow", "blueberry: cf:color=blue", "cherry: cf:color=red"})
	})
	t.Run("ColumnPrefixFilter", func(t *testing.T) {
		equalStrings(t, "column prefix pr", scan(filter.NewColumnPrefixFilter([]byte("pr"))), []string{
			"apple: cf:price=3", "apricot: cf:price=5", "banana: cf:price=2", "blueberry: cf:price=8", "cherry: cf:price=4"})
		equalStrings(t, "column prefix or", scan(filter.NewColumnPrefixFilter([]byte("or"))), []string{
			"apple: meta:origin=us", "banana: meta:origin=ec", "cherry: meta:origin=tr"})
		// In a get too.
		res := get(t, c, &client.Get{Table: tbl, Row: []byte("cherry"), Filter: filter.NewColumnPrefixFilter([]byte("co"))})
		equalStrings(t, "get with column prefix", render([]*client.Result{res}), []string{"cherry: cf:color=red"})
	})
	t.Run("RowFilter", func(t *testing.T) {
		equalStrings(t, "row >= b", rows(filter.NewRowFilter(filter.CompareGreaterOrEqual, bin("b"))), []string{"banana", "blueberry", "cherry"})
		equalStrings(t, "row < banana", rows(filter.NewRowFilter(filter.CompareLess, bin("banana"))), []string{"apple", "apricot"})
		equalStrings(t, "row != banana", rows(filter.NewRowFilter(filter.CompareNotEqual, bin("banana"))), []string{"apple", "apricot", "blueberry", "cherry"})
		equalStrings(t, "row starts with ap", rows(filter.NewRowFilter(filter.CompareEqual, filter.NewBinaryPrefixComparator([]byte("ap")))), []string{"apple", "apricot"})
		equalStrings(t, "row contains rr", rows(filter.NewRowFilter(filter.CompareEqual, filter.NewSubstringComparator("RR"))), []string{"blueberry", "cherry"})
		equalStrings(t, "row matches ^b.*y$", rows(filter.NewRowFilter(filter.CompareEqual, regex("^b.*y$"))), []string{"blueberry"})
		equalStrings(t, "row does not match a", rows(filter.NewRowFilter(filter.CompareNotEqual, regex("a"))), []string{"blueberry", "cherry"})
	})
	t.Run("FamilyFilter", func(t *testing.T) {
		equalStrings(t, "family meta", scan(filter.NewFamilyFilter(filter.CompareEqual, bin("meta"))), []string{
			"apple: meta:origin=us", "banana: meta:origin=ec", "cherry: meta:origin=tr"})
		equalStrings(t, "family < meta", rows(filter.NewFamilyFilter(filter.CompareLess, bin("meta"))), []string{
			"apple", "apricot", "banana", "blueberry", "cherry"})
	})
	t.Run("QualifierFilter", func(t *testing.T) {
		equalStrings(t, "qualifier color", scan(filter.NewQualifierFilter(filter.CompareEqual, bin("color"))), []string{
			"apple: cf:color=red", "apricot: cf:color=orange", "banana: cf:color=yellow", "blueberry: cf:color=blue", "cherry: cf:color=red"})
		equalStrings(t, "qualifier > origin", scan(filter.NewQualifierFilter(filter.CompareGreater, bin("origin"))), []string{
			"apple: cf:price=3", "apricot: cf:price=5", "banana: cf:price=2", "blueberry: cf:price=8", "cherry: cf:price=4"})
	})
	t.Run("ValueFilter", func(t *testing.T) {
		equalStrings(t, "value red", scan(filter.NewValueFilter(filter.CompareEqual, bin("red"))), []string{"apple: cf:color=red", "cherry: cf:color=red"})
		equalStrings(t, "value contains LL", scan(filter.NewValueFilter(filter.CompareEqual, filter.NewSubstringComparator("LL"))), []string{"banana: cf:color=yellow"})
		equalStrings(t, "value matches ^[0-4]$", scan(filter.NewValueFilter(filter.CompareEqual, regex("^[0-4]$"))), []string{
			"apple: cf:price=3", "banana: cf:price=2", "cherry: cf:price=4"})
		equalStrings(t, "value starts with bl", scan(filter.NewValueFilter(filter.CompareEqual, filter.NewBinaryPrefixComparator([]byte("bl")))), []string{
			"blueberry: cf:color=blue"})
	})
	t.Run("SingleColumnValueFilter", func(t *testing.T) {
		equalStrings(t, "color = red", scan(scvf("cf", "color", filter.CompareEqual, bin("red"), true)), []string{
			"apple: cf:color=red cf:price=3 meta:origin=us", "cherry: cf:color=red cf:price=4 meta:origin=tr"})
		// Operand first, as HBase: price > "4" keeps prices greater than 4.
		equalStrings(t, "price > 4", rows(scvf("cf", "price", filter.CompareGreater, bin("4"), true)), []string{"apricot", "blueberry"})
		equalStrings(t, "origin = us, rows without origin pass", rows(scvf("meta", "origin", filter.CompareEqual, bin("us"), false)), []string{
			"apple", "apricot", "blueberry"})
		equalStrings(t, "origin = us, if missing filtered", rows(scvf("meta", "origin", filter.CompareEqual, bin("us"), true)), []string{"apple"})
	})
	t.Run("NullComparator", func(t *testing.T) {
		// A cell value is never null: EQUAL null keeps the rows that lack
		// the column, NOT_EQUAL null those that have it.
		equalStrings(t, "origin is null", rows(scvf("meta", "origin", filter.CompareEqual, filter.NewNullComparator(), false)), []string{
			"apricot", "blueberry"})
		equalStrings(t, "origin is not null", rows(scvf("meta", "origin", filter.CompareNotEqual, filter.NewNullComparator(), true)), []string{
			"apple", "banana", "cherry"})
		equalStrings(t, "value filter equal null", rows(filter.NewValueFilter(filter.CompareEqual, filter.NewNullComparator())), nil)
	})
	t.Run("FilterList", func(t *testing.T) {
		all := filter.NewFilterList(filter.MustPassAll, filter.NewPrefixFilter([]byte("a")), scvf("cf", "color", filter.CompareEqual, bin("red"), true))
		equalStrings(t, "MUST_PASS_ALL prefix a, red", rows(all), []string{"apple"})
		one := filter.NewFilterList(filter.MustPassOne, filter.NewPrefixFilter([]byte("ch")), scvf("cf", "color", filter.CompareEqual, bin("blue"), true))
		equalStrings(t, "MUST_PASS_ONE prefix ch, blue", rows(one), []string{"blueberry", "cherry"})
		cols := filter.NewFilterList(filter.MustPassOne,
			filter.NewQualifierFilter(filter.CompareEqual, bin("price")), filter.NewQualifierFilter(filter.CompareEqual, bin("origin")))
		equalStrings(t, "MUST_PASS_ONE of qualifiers", scan(cols), []string{
			"apple: cf:price=3 meta:origin=us", "apricot: cf:price=5", "banana: cf:price=2 meta:origin=ec",
			"blueberry: cf:price=8", "cherry: cf:price=4 meta:origin=tr"})
		nested := filter.NewFilterList(filter.MustPassAll,
			filter.NewRowFilter(filter.CompareGreaterOrEqual, bin("apricot")),
			filter.NewFilterList(filter.MustPassOne,
				filter.NewValueFilter(filter.CompareEqual, bin("red")),
				filter.NewValueFilter(filter.CompareEqual, bin("yellow"))),
			filter.NewKeyOnlyFilter(false))
		equalStrings(t, "nested lists", scan(nested), []string{"banana: cf:color=", "cherry: cf:color="})
		empty := filter.NewFilterList(filter.MustPassAll, filter.NewPrefixFilter([]byte("a")), filter.NewPrefixFilter([]byte("b")))
		equalStrings(t, "MUST_PASS_ALL that nothing passes", rows(empty), nil)
	})
}
