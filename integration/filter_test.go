package integration

import (
	be "encoding/binary"
	"strings"
	"testing"

	"github.com/regionkv/regionkv/client"
	"github.com/regionkv/regionkv/scanner"
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
	scan := func(f scanner.Filter) []string {
		t.Helper()
		return render(scanAll(t, c, &client.Scan{Table: tbl, Filter: f}))
	}
	rows := func(f scanner.Filter) []string {
		t.Helper()
		return rowKeys(scanAll(t, c, &client.Scan{Table: tbl, Filter: f}))
	}
	bin := func(s string) *scanner.BinaryComparator { return scanner.NewBinaryComparator([]byte(s)) }
	scvf := func(fam, q string, op scanner.CompareOp, cmp scanner.ByteArrayComparable, ifMissing bool) *scanner.SingleColumnValueFilter {
		f := scanner.NewSingleColumnValueFilter([]byte(fam), []byte(q), op, cmp)
		f.SetFilterIfMissing(ifMissing)
		return f
	}
	regex := func(expr string) *scanner.RegexStringComparator {
		r, err := scanner.NewRegexStringComparator(expr, scanner.DefaultRegexFlags, scanner.CharsetUTF8, scanner.RegexEngineJava)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}

	t.Run("PrefixFilter", func(t *testing.T) {
		equalStrings(t, "prefix ap", scan(scanner.NewPrefixFilter([]byte("ap"))), []string{
			"apple: cf:color=red cf:price=3 meta:origin=us", "apricot: cf:color=orange cf:price=5"})
		equalStrings(t, "prefix b (second region)", rows(scanner.NewPrefixFilter([]byte("b"))), []string{"banana", "blueberry"})
		equalStrings(t, "prefix z", rows(scanner.NewPrefixFilter([]byte("z"))), nil)
	})
	t.Run("KeyOnlyFilter", func(t *testing.T) {
		equalStrings(t, "key only", scan(scanner.NewFilterList(scanner.MustPassAll, scanner.NewKeyOnlyFilter(false), scanner.NewPrefixFilter([]byte("apple")))), []string{
			"apple: cf:color= cf:price= meta:origin="})
		rs := scanAll(t, c, &client.Scan{Table: tbl, Filter: scanner.NewKeyOnlyFilter(true), StartRow: []byte("banana"), StopRow: []byte("banana"), StopInclusive: true})
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
		equalStrings(t, "first key only", scan(scanner.NewFirstKeyOnlyFilter()), []string{
			"apple: cf:color=red", "apricot: cf:color=orange", "banana: cf:color=yellow", "blueberry: cf:color=blue", "cherry: cf:color=red"})
	})
	t.Run("ColumnPrefixFilter", func(t *testing.T) {
		equalStrings(t, "column prefix pr", scan(scanner.NewColumnPrefixFilter([]byte("pr"))), []string{
			"apple: cf:price=3", "apricot: cf:price=5", "banana: cf:price=2", "blueberry: cf:price=8", "cherry: cf:price=4"})
		equalStrings(t, "column prefix or", scan(scanner.NewColumnPrefixFilter([]byte("or"))), []string{
			"apple: meta:origin=us", "banana: meta:origin=ec", "cherry: meta:origin=tr"})
		// In a get too.
		res := get(t, c, &client.Get{Table: tbl, Row: []byte("cherry"), Filter: scanner.NewColumnPrefixFilter([]byte("co"))})
		equalStrings(t, "get with column prefix", render([]*client.Result{res}), []string{"cherry: cf:color=red"})
	})
	t.Run("RowFilter", func(t *testing.T) {
		equalStrings(t, "row >= b", rows(scanner.NewRowFilter(scanner.CompareGreaterOrEqual, bin("b"))), []string{"banana", "blueberry", "cherry"})
		equalStrings(t, "row < banana", rows(scanner.NewRowFilter(scanner.CompareLess, bin("banana"))), []string{"apple", "apricot"})
		equalStrings(t, "row != banana", rows(scanner.NewRowFilter(scanner.CompareNotEqual, bin("banana"))), []string{"apple", "apricot", "blueberry", "cherry"})
		equalStrings(t, "row starts with ap", rows(scanner.NewRowFilter(scanner.CompareEqual, scanner.NewBinaryPrefixComparator([]byte("ap")))), []string{"apple", "apricot"})
		equalStrings(t, "row contains rr", rows(scanner.NewRowFilter(scanner.CompareEqual, scanner.NewSubstringComparator("RR"))), []string{"blueberry", "cherry"})
		equalStrings(t, "row matches ^b.*y$", rows(scanner.NewRowFilter(scanner.CompareEqual, regex("^b.*y$"))), []string{"blueberry"})
		equalStrings(t, "row does not match a", rows(scanner.NewRowFilter(scanner.CompareNotEqual, regex("a"))), []string{"blueberry", "cherry"})
	})
	t.Run("FamilyFilter", func(t *testing.T) {
		equalStrings(t, "family meta", scan(scanner.NewFamilyFilter(scanner.CompareEqual, bin("meta"))), []string{
			"apple: meta:origin=us", "banana: meta:origin=ec", "cherry: meta:origin=tr"})
		equalStrings(t, "family < meta", rows(scanner.NewFamilyFilter(scanner.CompareLess, bin("meta"))), []string{
			"apple", "apricot", "banana", "blueberry", "cherry"})
	})
	t.Run("QualifierFilter", func(t *testing.T) {
		equalStrings(t, "qualifier color", scan(scanner.NewQualifierFilter(scanner.CompareEqual, bin("color"))), []string{
			"apple: cf:color=red", "apricot: cf:color=orange", "banana: cf:color=yellow", "blueberry: cf:color=blue", "cherry: cf:color=red"})
		equalStrings(t, "qualifier > origin", scan(scanner.NewQualifierFilter(scanner.CompareGreater, bin("origin"))), []string{
			"apple: cf:price=3", "apricot: cf:price=5", "banana: cf:price=2", "blueberry: cf:price=8", "cherry: cf:price=4"})
	})
	t.Run("ValueFilter", func(t *testing.T) {
		equalStrings(t, "value red", scan(scanner.NewValueFilter(scanner.CompareEqual, bin("red"))), []string{"apple: cf:color=red", "cherry: cf:color=red"})
		equalStrings(t, "value contains LL", scan(scanner.NewValueFilter(scanner.CompareEqual, scanner.NewSubstringComparator("LL"))), []string{"banana: cf:color=yellow"})
		equalStrings(t, "value matches ^[0-4]$", scan(scanner.NewValueFilter(scanner.CompareEqual, regex("^[0-4]$"))), []string{
			"apple: cf:price=3", "banana: cf:price=2", "cherry: cf:price=4"})
		equalStrings(t, "value starts with bl", scan(scanner.NewValueFilter(scanner.CompareEqual, scanner.NewBinaryPrefixComparator([]byte("bl")))), []string{
			"blueberry: cf:color=blue"})
	})
	t.Run("SingleColumnValueFilter", func(t *testing.T) {
		equalStrings(t, "color = red", scan(scvf("cf", "color", scanner.CompareEqual, bin("red"), true)), []string{
			"apple: cf:color=red cf:price=3 meta:origin=us", "cherry: cf:color=red cf:price=4 meta:origin=tr"})
		// Operand first, as HBase: price > "4" keeps prices greater than 4.
		equalStrings(t, "price > 4", rows(scvf("cf", "price", scanner.CompareGreater, bin("4"), true)), []string{"apricot", "blueberry"})
		equalStrings(t, "origin = us, rows without origin pass", rows(scvf("meta", "origin", scanner.CompareEqual, bin("us"), false)), []string{
			"apple", "apricot", "blueberry"})
		equalStrings(t, "origin = us, if missing filtered", rows(scvf("meta", "origin", scanner.CompareEqual, bin("us"), true)), []string{"apple"})
	})
	t.Run("NullComparator", func(t *testing.T) {
		// A cell value is never null: EQUAL null keeps the rows that lack
		// the column, NOT_EQUAL null those that have it.
		equalStrings(t, "origin is null", rows(scvf("meta", "origin", scanner.CompareEqual, scanner.NewNullComparator(), false)), []string{
			"apricot", "blueberry"})
		equalStrings(t, "origin is not null", rows(scvf("meta", "origin", scanner.CompareNotEqual, scanner.NewNullComparator(), true)), []string{
			"apple", "banana", "cherry"})
		equalStrings(t, "value filter equal null", rows(scanner.NewValueFilter(scanner.CompareEqual, scanner.NewNullComparator())), nil)
	})
	t.Run("FilterList", func(t *testing.T) {
		all := scanner.NewFilterList(scanner.MustPassAll, scanner.NewPrefixFilter([]byte("a")), scvf("cf", "color", scanner.CompareEqual, bin("red"), true))
		equalStrings(t, "MUST_PASS_ALL prefix a, red", rows(all), []string{"apple"})
		one := scanner.NewFilterList(scanner.MustPassOne, scanner.NewPrefixFilter([]byte("ch")), scvf("cf", "color", scanner.CompareEqual, bin("blue"), true))
		equalStrings(t, "MUST_PASS_ONE prefix ch, blue", rows(one), []string{"blueberry", "cherry"})
		cols := scanner.NewFilterList(scanner.MustPassOne,
			scanner.NewQualifierFilter(scanner.CompareEqual, bin("price")), scanner.NewQualifierFilter(scanner.CompareEqual, bin("origin")))
		equalStrings(t, "MUST_PASS_ONE of qualifiers", scan(cols), []string{
			"apple: cf:price=3 meta:origin=us", "apricot: cf:price=5", "banana: cf:price=2 meta:origin=ec",
			"blueberry: cf:price=8", "cherry: cf:price=4 meta:origin=tr"})
		nested := scanner.NewFilterList(scanner.MustPassAll,
			scanner.NewRowFilter(scanner.CompareGreaterOrEqual, bin("apricot")),
			scanner.NewFilterList(scanner.MustPassOne,
				scanner.NewValueFilter(scanner.CompareEqual, bin("red")),
				scanner.NewValueFilter(scanner.CompareEqual, bin("yellow"))),
			scanner.NewKeyOnlyFilter(false))
		equalStrings(t, "nested lists", scan(nested), []string{"banana: cf:color=", "cherry: cf:color="})
		empty := scanner.NewFilterList(scanner.MustPassAll, scanner.NewPrefixFilter([]byte("a")), scanner.NewPrefixFilter([]byte("b")))
		equalStrings(t, "MUST_PASS_ALL that nothing passes", rows(empty), nil)
	})
}
